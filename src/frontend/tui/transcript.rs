//! The conversation pane's content: what was asked, the model's answers as
//! they stream in (code blocks coloured by their kind), results in one
//! line, fixes, notices, listings and errors — each an [`Entry`] that knows
//! its own lines.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::{code_lines, fence_mode};
use super::scroll::{row_count, Scroll, CODE_BAR};
use super::text::count;
use crate::agent::{HistoryMessage, Mode};
use crate::llm::Role;

/// One thing in the conversation pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A question the user sent.
    Question(String),
    /// A slash command the user sent.
    Command(String),
    /// The model's text, growing while it streams; fenced code in it is
    /// coloured.
    Answer(String),
    /// Code the model answered with through a tool call (no text).
    Code(Mode, String),
    /// A statement's outcome in one line.
    Result(String),
    /// Text a program printed.
    Output(String),
    /// Text the user asked to see (`/help`, `/history`, `/schema`).
    Listing(String),
    Notice(String),
    /// The model is asked to fix its answer.
    Fix(String),
    /// A lookup made before the answer (`describe_tables {…}`).
    Lookup(String),
    Warning(String),
    Error(String),
}

fn marked(mark: &str, style: Style, text: &str) -> Vec<Line<'static>> {
    text.trim_end()
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                mark.to_string()
            } else {
                " ".repeat(mark.chars().count())
            };
            Line::from(vec![
                Span::styled(lead, style),
                Span::styled(l.to_string(), style),
            ])
        })
        .collect()
}

fn plain(text: &str, style: Style) -> Vec<Line<'static>> {
    text.trim_end()
        .split('\n')
        .map(|l| Line::styled(l.to_string(), style))
        .collect()
}

/// A code block: a dim bar, then the coloured code.
fn code_block(mode: Option<Mode>, code: &str) -> Vec<Line<'static>> {
    let bar = Span::styled(CODE_BAR, Style::new().fg(Color::DarkGray));
    let lines = match mode {
        Some(m) => code_lines(m, code),
        None => code.split('\n').map(|l| Line::raw(l.to_string())).collect(),
    };
    lines
        .into_iter()
        .map(|l| {
            let mut spans = vec![bar.clone()];
            spans.extend(l.spans);
            Line::from(spans)
        })
        .collect()
}

/// Text with ``` fences: prose plain, code coloured by the fence's kind
/// (an unclosed fence, still streaming, runs to the end).
fn answer_lines(text: &str, default_mode: Mode) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut code: Option<(Option<Mode>, String)> = None;
    for line in text.trim_end().split('\n') {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut code, fence) {
            (None, Some(info)) => {
                let mode = if info.trim().is_empty() {
                    Some(default_mode)
                } else {
                    fence_mode(info)
                };
                code = Some((mode, String::new()));
            }
            (Some((mode, body)), Some(_)) => {
                out.extend(code_block(*mode, body.strip_suffix('\n').unwrap_or(body)));
                code = None;
            }
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => out.push(Line::raw(line.to_string())),
        }
    }
    if let Some((mode, body)) = code {
        out.extend(code_block(mode, body.strip_suffix('\n').unwrap_or(&body)));
    }
    out
}

impl Entry {
    /// The entry's lines (before wrapping); `mode` colours unnamed fences.
    pub fn lines(&self, mode: Mode) -> Vec<Line<'static>> {
        let dim = Style::new().fg(Color::DarkGray);
        let mut lines = match self {
            Entry::Question(q) => marked(
                "› ",
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                q,
            ),
            Entry::Command(c) => marked("› ", Style::new().fg(Color::Yellow), c),
            Entry::Answer(text) => answer_lines(text, mode),
            Entry::Code(m, code) => code_block(Some(*m), code),
            Entry::Result(r) => marked("✓ ", Style::new().fg(Color::Green), r),
            Entry::Output(t) | Entry::Listing(t) => plain(t, Style::new()),
            Entry::Notice(t) => plain(t, dim),
            Entry::Fix(t) => marked("↻ ", Style::new().fg(Color::Yellow), t),
            Entry::Lookup(t) => marked("→ ", dim, t),
            Entry::Warning(t) => marked("⚠ ", Style::new().fg(Color::Yellow), t),
            Entry::Error(t) => marked("✗ ", Style::new().fg(Color::Red), t),
        };
        if matches!(self, Entry::Question(_) | Entry::Command(_)) {
            lines.insert(0, Line::default());
        }
        lines
    }
}

/// What a restored session's messages show: questions, answers with their
/// code, and how each ran.
pub fn from_history(history: &[HistoryMessage]) -> Vec<Entry> {
    let mut out = Vec::new();
    for m in history {
        match m.role {
            Role::User => out.push(Entry::Question(m.content.clone())),
            Role::Assistant => {
                out.push(Entry::Answer(m.content.clone()));
                if let Some(rows) = m.row_count {
                    let noun = if rows == 1 { "row" } else { "rows" };
                    out.push(Entry::Result(format!("{} {noun}", count(rows))));
                }
                if let Some(error) = &m.error {
                    out.push(Entry::Error(error.clone()));
                }
            }
            Role::System | Role::Tool => out.push(Entry::Notice(m.content.clone())),
        }
    }
    out
}

/// The conversation pane.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// The last entry is an answer still streaming.
    open_answer: bool,
    pub scroll: Scroll,
}

impl Transcript {
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        self.open_answer = false;
    }

    /// Streamed text: grows the open answer, or starts one.
    pub fn stream(&mut self, text: &str) {
        match self.entries.last_mut() {
            Some(Entry::Answer(a)) if self.open_answer => a.push_str(text),
            _ => {
                self.entries.push(Entry::Answer(text.to_string()));
                self.open_answer = true;
            }
        }
    }

    /// The next streamed text starts a new answer (a new model request).
    pub fn close_answer(&mut self) {
        self.open_answer = false;
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every line, newest first (for drawing from the bottom).
    pub fn lines_newest_first(&self, mode: Mode) -> impl Iterator<Item = Line<'static>> + '_ {
        self.entries
            .iter()
            .rev()
            .flat_map(move |e| e.lines(mode).into_iter().rev())
    }

    /// Rows at `width` (for scrolling to the top).
    pub fn rows(&self, mode: Mode, width: u16) -> usize {
        row_count(self.lines_newest_first(mode), width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn answers_stream_into_one_entry_until_closed() {
        let mut t = Transcript::default();
        t.push(Entry::Question("how many?".into()));
        t.stream("Here ");
        t.stream("it is");
        t.close_answer();
        t.stream("Fixed");
        assert_eq!(
            t.entries(),
            [
                Entry::Question("how many?".into()),
                Entry::Answer("Here it is".into()),
                Entry::Answer("Fixed".into())
            ]
        );
    }

    #[test]
    fn a_restored_session_shows_its_exchanges() {
        let history = [
            HistoryMessage::user("per country?"),
            HistoryMessage::assistant("```sql\nSELECT 1\n```")
                .with_sql("SELECT 1", Ok((12, String::new()))),
            HistoryMessage::user("and this?"),
            HistoryMessage::assistant("```sql\nSELECT x\n```")
                .with_sql("SELECT x", Err("no such column: x".into())),
        ];
        assert_eq!(
            from_history(&history),
            [
                Entry::Question("per country?".into()),
                Entry::Answer("```sql\nSELECT 1\n```".into()),
                Entry::Result("12 rows".into()),
                Entry::Question("and this?".into()),
                Entry::Answer("```sql\nSELECT x\n```".into()),
                Entry::Error("no such column: x".into()),
            ]
        );
    }

    #[test]
    fn fenced_code_is_a_coloured_block_even_while_streaming() {
        let lines = Entry::Answer("Counting:\n```sql\nSELECT 1\nFROM t\n```\nDone.".into())
            .lines(Mode::Sql);
        assert_eq!(
            texts(&lines),
            ["Counting:", "▌ SELECT 1", "▌ FROM t", "Done."]
        );
        assert_eq!(lines[1].spans[1].content, "SELECT");
        assert!(lines[1].spans[1]
            .style
            .add_modifier
            .contains(Modifier::BOLD));
        let open = Entry::Answer("```sql\nSELECT co".into()).lines(Mode::Sql);
        assert_eq!(texts(&open), ["▌ SELECT co"]);
        let q = Entry::Question("two\nlines".into()).lines(Mode::Sql);
        assert_eq!(texts(&q), ["", "› two", "  lines"]);
    }
}
