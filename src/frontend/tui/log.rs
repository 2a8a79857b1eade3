//! The tool/log pane: one line per thing the tool did — model requests and
//! their tokens, retries, statements with timings, tool and host calls,
//! warnings — newest at the bottom, the oldest dropped past a bound.

use std::collections::VecDeque;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::scroll::{row_count, Scroll};

/// Lines the log keeps.
const KEEP: usize = 2_000;

/// How a log line is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Something asked of the model or a tool.
    Request,
    /// What came back.
    Reply,
    /// A statement started.
    Statement,
    /// Something finished well.
    Done,
    Retry,
    Warning,
    Error,
    Info,
}

impl Kind {
    fn mark(self) -> (&'static str, Style) {
        match self {
            Kind::Request => ("→ ", Style::new().fg(Color::Blue)),
            Kind::Reply => ("← ", Style::new().fg(Color::Blue)),
            Kind::Statement => ("▶ ", Style::new().fg(Color::Cyan)),
            Kind::Done => ("✓ ", Style::new().fg(Color::Green)),
            Kind::Retry => ("↻ ", Style::new().fg(Color::Yellow)),
            Kind::Warning => ("⚠ ", Style::new().fg(Color::Yellow)),
            Kind::Error => ("✗ ", Style::new().fg(Color::Red)),
            Kind::Info => ("· ", Style::new().fg(Color::DarkGray)),
        }
    }
}

/// The log pane.
#[derive(Debug, Default)]
pub struct Log {
    lines: VecDeque<Line<'static>>,
    pub scroll: Scroll,
}

impl Log {
    /// Adds one line (only its first line, if `text` has several).
    pub fn add(&mut self, kind: Kind, text: &str) {
        let (mark, style) = kind.mark();
        let first = text.lines().next().unwrap_or("");
        let more = if text.trim_end().contains('\n') {
            " …"
        } else {
            ""
        };
        self.lines.push_back(Line::from(vec![
            Span::styled(mark, style),
            Span::raw(format!("{first}{more}")),
        ]));
        while self.lines.len() > KEEP {
            self.lines.pop_front();
        }
    }

    /// Ctrl-L.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.scroll.follow();
    }

    pub fn lines_newest_first(&self) -> impl Iterator<Item = Line<'static>> + '_ {
        self.lines.iter().rev().cloned()
    }

    pub fn rows(&self, width: u16) -> usize {
        row_count(self.lines_newest_first(), width)
    }

    /// The lines as text (tests).
    #[cfg(test)]
    pub fn texts(&self) -> Vec<String> {
        self.lines.iter().map(|l| l.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_lines_and_a_bounded_tail() {
        let mut log = Log::default();
        log.add(Kind::Statement, "SELECT 1\nFROM t");
        assert_eq!(log.texts(), ["▶ SELECT 1 …"]);
        for i in 0..KEEP + 5 {
            log.add(Kind::Info, &format!("{i}"));
        }
        assert_eq!(log.lines.len(), KEEP);
        assert_eq!(log.texts()[0], "· 5");
        log.clear();
        assert!(log.texts().is_empty());
    }
}
