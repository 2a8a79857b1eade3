//! The console sink for stderr on a terminal: a spinner until the model's
//! first token, its answer (and code) streamed as it arrives, retries and
//! tool calls as they happen, confirmations asked with `[y/N]`; while a
//! statement runs, an indicator with the elapsed time and how to cancel (a
//! live row count when rows go to a file); after a result, a footer with
//! its rows and time. The result itself goes through the collector.

use std::io::{self, Write};
use std::time::Duration;

use super::progress::{self, Indicator, Shows};
use super::sink::{answer_on_terminal, secret_on_terminal, Collector, Finished};
use super::stderr_line;
use crate::agent::{AgentError, Confirmation, Event, EventSink, Outcome};

/// How long a statement runs before the indicator shows (a quick one
/// never flickers one).
const INDICATOR_DELAY: Duration = Duration::from_millis(250);

/// Asks a confirmation some other way than a plain stdin line (the chat
/// uses its line editor).
pub type Asker<'a> = Box<dyn FnMut(&Confirmation) -> bool + 'a>;

/// Terminal output around a [`Collector`].
pub struct Console<'a> {
    inner: Collector<'a>,
    spinner: Option<Indicator>,
    color: bool,
    /// `--quiet`: no indicators, counters or footers.
    quiet: bool,
    /// Results go to a terminal (a footer follows them) rather than a file
    /// (a live row count while they are written).
    stdout_tty: bool,
    /// The first row of the running statement has not come yet.
    awaiting_rows: bool,
    /// Show a failed turn's error (chat); single-shot returns it instead.
    report_errors: bool,
    /// The chat: hints name slash commands rather than flags.
    chat: bool,
    /// `--yes`, for confirmations of writes.
    yes: bool,
    asker: Option<Asker<'a>>,
    streamed: bool,
    /// Text streamed since the last request started.
    streamed_this_request: bool,
}

impl<'a> Console<'a> {
    pub fn new(inner: Collector<'a>, color: bool, yes: bool) -> Self {
        Console {
            inner,
            spinner: None,
            color,
            quiet: false,
            stdout_tty: true,
            awaiting_rows: false,
            report_errors: false,
            chat: false,
            yes,
            asker: None,
            streamed: false,
            streamed_this_request: false,
        }
    }

    /// `--quiet`: no indicators, counters or footers.
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// Whether results go to a terminal (footers) or a file (a live count).
    pub fn stdout_tty(mut self, tty: bool) -> Self {
        self.stdout_tty = tty;
        self
    }

    fn indicate(&mut self, shows: Shows, delay: Duration) {
        self.stop_spinner();
        if !self.quiet {
            self.spinner = Some(Indicator::start(shows, delay, self.color));
        }
    }

    /// The line after a result: `12 rows · 35 ms` under a table on the
    /// terminal (`3 rows · 16 columns (5 shown) · 35 ms` and how to see
    /// them all when columns were left out), `1,234,567 rows · 2.1 s ·
    /// 48 MB` after an export.
    fn footer(&self, finished: Finished) {
        if self.quiet || finished.changed {
            return;
        }
        let time = progress::duration(finished.elapsed);
        let line = if !self.stdout_tty {
            let counter = self.inner.counter();
            format!(
                "{} · {time} · {}",
                progress::rows(finished.rows),
                progress::size(counter.bytes())
            )
        } else if !self.inner.format().is_for_people() {
            return;
        } else {
            let rows = if finished.more {
                format!(
                    "{} shown, more not counted",
                    progress::rows(finished.rows - finished.hidden)
                )
            } else if finished.hidden > 0 {
                format!(
                    "{} of {} shown",
                    crate::render::thousands(finished.rows - finished.hidden),
                    progress::rows(finished.rows)
                )
            } else {
                progress::rows(finished.rows)
            };
            match columns_note(finished, self.chat) {
                Some((columns, hint)) => {
                    stderr_line(&self.dim(&format!("{rows} · {columns} · {time}")));
                    hint
                }
                None => format!("{rows} · {time}"),
            }
        };
        stderr_line(&self.dim(&line));
    }

    /// Shows failed turns (`aiq: …`), as the chat does.
    pub fn reporting_errors(mut self) -> Self {
        self.report_errors = true;
        self
    }

    /// In the chat: a hint names `/format` and `/schema`, not flags.
    pub fn in_chat(mut self) -> Self {
        self.chat = true;
        self
    }

    /// Asks confirmations through `asker`.
    pub fn asking_with(mut self, asker: Asker<'a>) -> Self {
        self.asker = Some(asker);
        self
    }

    fn stop_spinner(&mut self) {
        if let Some(mut s) = self.spinner.take() {
            s.stop();
        }
    }

    fn end_stream(&mut self) {
        if self.streamed {
            stderr_line(if self.color { "\x1b[0m" } else { "" });
            self.streamed = false;
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn confirm(&mut self, c: &Confirmation) -> bool {
        if self.yes && c.kind == crate::agent::ConfirmKind::Write {
            return true;
        }
        match self.asker.as_mut() {
            Some(ask) => ask(c),
            None => answer_on_terminal(c, false),
        }
    }

    fn report(&self, error: &AgentError) {
        match error {
            AgentError::Cancelled => stderr_line("aiq: cancelled; the conversation is kept"),
            AgentError::Output { closed: true, .. } => {}
            e => stderr_line(&format!("aiq: {e}")),
        }
    }
}

impl EventSink for Console<'_> {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match &event {
            Event::ThinkingStarted => {
                self.end_stream();
                self.streamed_this_request = false;
                self.indicate(Shows::Waiting("thinking…".into()), Duration::ZERO);
            }
            Event::TextDelta(t) => {
                self.stop_spinner();
                let mut err = io::stderr().lock();
                if !self.streamed && self.color {
                    let _ = write!(err, "\x1b[2m");
                }
                self.streamed = true;
                self.streamed_this_request = true;
                let _ = write!(err, "{t}");
                let _ = err.flush();
                return Ok(());
            }
            Event::Proposed { code, .. } => {
                self.stop_spinner();
                // A tool-call answer streams no text: show its code.
                if !self.streamed_this_request {
                    stderr_line(&self.dim(code));
                }
            }
            Event::Confirm(c) => {
                self.stop_spinner();
                self.end_stream();
                let yes = self.confirm(c);
                c.answer(yes);
                return Ok(());
            }
            Event::Secret(s) => {
                self.stop_spinner();
                self.end_stream();
                s.answer(secret_on_terminal(&s.prompt));
                return Ok(());
            }
            Event::ToolCall { name, arguments } => {
                self.stop_spinner();
                self.end_stream();
                // One line, as wide as the terminal.
                let width = crossterm::terminal::size().map_or(100, |(w, _)| usize::from(w));
                let room = width.saturating_sub(name.chars().count() + 4).max(20);
                stderr_line(&self.dim(&format!("→ {name} {}", one_line(arguments, room))));
            }
            Event::ToolResult { name, result } => {
                let first = result.lines().next().unwrap_or("");
                stderr_line(&self.dim(&format!("← {name}: {first}")));
            }
            Event::TurnFinished(Outcome::Failed(e)) => {
                self.stop_spinner();
                self.end_stream();
                if self.report_errors {
                    self.report(e);
                }
            }
            Event::QueryStarted { sql } => {
                self.end_stream();
                self.awaiting_rows = true;
                let what = progress::first_words(sql);
                self.indicate(Shows::Waiting(what), INDICATOR_DELAY);
            }
            Event::Rows(_) if self.awaiting_rows => {
                self.awaiting_rows = false;
                if self.stdout_tty {
                    self.stop_spinner();
                } else {
                    self.indicate(Shows::Export(self.inner.counter()), INDICATOR_DELAY);
                }
            }
            Event::QueryFinished { .. } => {
                self.awaiting_rows = false;
                self.stop_spinner();
                self.inner.event(event)?;
                if let Some(finished) = self.inner.last_result() {
                    self.footer(finished);
                }
                return Ok(());
            }
            Event::Retrying { .. }
            | Event::TurnFinished(_)
            | Event::Output(_)
            | Event::Listing(_)
            | Event::Chart(_)
            | Event::Notice(_)
            | Event::Warning(_)
            | Event::CommandFailed(_)
            | Event::Edit(_)
            | Event::SessionSaved(_) => {
                self.stop_spinner();
                self.end_stream();
            }
            Event::Columns(_) | Event::Rows(_) | Event::Usage(_) | Event::StatusChanged(_) => {}
        }
        match event {
            // The streamed text (or the line above) already showed the code.
            Event::Proposed { .. } if !self.inner.wants_code() => Ok(()),
            other => self.inner.event(other),
        }
    }
}

/// When a table left columns out: `16 columns (5 shown)` for the footer
/// and, for the line under it, how to see them all.
fn columns_note(finished: Finished, chat: bool) -> Option<(String, String)> {
    let (all, shown) = finished.columns?;
    let hint = if chat {
        "all columns: /format expanded, /format csv, /schema TABLE, or a wider terminal"
    } else {
        "all columns: -f expanded, -f csv, or a wider terminal"
    };
    Some((format!("{all} columns ({shown} shown)"), hint.to_string()))
}

/// `text` on one line (runs of white space as one space), cut to `max`
/// characters with `…`: a tool call's SQL stays one readable line.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::{columns_note, one_line};
    use crate::frontend::sink::Finished;

    #[test]
    fn tool_calls_show_on_one_line() {
        assert_eq!(
            one_line("  SELECT a\n    FROM t\n  WHERE x = 1 ", 80),
            "SELECT a FROM t WHERE x = 1"
        );
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn footer_says_how_many_columns_are_shown() {
        let mut f = Finished {
            rows: 3,
            hidden: 0,
            more: false,
            changed: false,
            elapsed: std::time::Duration::from_millis(35),
            columns: None,
        };
        assert_eq!(columns_note(f, true), None);
        f.columns = Some((16, 5));
        let (columns, hint) = columns_note(f, true).unwrap();
        assert_eq!(columns, "16 columns (5 shown)");
        assert_eq!(
            hint,
            "all columns: /format expanded, /format csv, /schema TABLE, or a wider terminal"
        );
        let (_, hint) = columns_note(f, false).unwrap();
        assert_eq!(
            hint,
            "all columns: -f expanded, -f csv, or a wider terminal"
        );
    }
}
