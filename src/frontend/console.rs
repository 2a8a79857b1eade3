//! The console sink for a terminal: a spinner on stderr until the first
//! token, the model's answer (and its code) streamed to stderr as it
//! arrives, retries and tool calls shown as they happen, confirmations
//! asked with `[y/N]`, then the result through the collector.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::sink::{answer_on_terminal, Collector};
use super::stderr_line;
use crate::agent::{AgentError, Confirmation, Event, EventSink, Outcome};

/// Spins on stderr until stopped.
struct Spinner {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Spinner {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
            let mut i = 0;
            while !flag.load(Ordering::Relaxed) {
                let mut err = io::stderr().lock();
                let _ = write!(err, "\r{} thinking…", frames[i % frames.len()]);
                let _ = err.flush();
                drop(err);
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        });
        Spinner {
            stop,
            handle: Some(handle),
        }
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Asks a confirmation some other way than a plain stdin line (the chat
/// uses its line editor).
pub type Asker<'a> = Box<dyn FnMut(&Confirmation) -> bool + 'a>;

/// Terminal output around a [`Collector`].
pub struct Console<'a> {
    inner: Collector<'a>,
    spinner: Option<Spinner>,
    color: bool,
    /// Show a failed turn's error (chat); single-shot returns it instead.
    report_errors: bool,
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
            report_errors: false,
            yes,
            asker: None,
            streamed: false,
            streamed_this_request: false,
        }
    }

    /// Shows failed turns (`aiq: …`), as the chat does.
    pub fn reporting_errors(mut self) -> Self {
        self.report_errors = true;
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
                self.stop_spinner();
                self.streamed_this_request = false;
                self.spinner = Some(Spinner::start());
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
            Event::Retrying { .. }
            | Event::Columns(_)
            | Event::TurnFinished(_)
            | Event::QueryStarted { .. }
            | Event::Output(_)
            | Event::Listing(_)
            | Event::Notice(_)
            | Event::Warning(_)
            | Event::CommandFailed(_)
            | Event::SessionSaved(_) => {
                self.stop_spinner();
                self.end_stream();
            }
            Event::Rows(_) | Event::QueryFinished { .. } | Event::Usage(_) => {}
        }
        match event {
            // The streamed text (or the line above) already showed the code.
            Event::Proposed { .. } if !self.inner.wants_code() => Ok(()),
            other => self.inner.event(other),
        }
    }
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
    use super::one_line;

    #[test]
    fn tool_calls_show_on_one_line() {
        assert_eq!(
            one_line("  SELECT a\n    FROM t\n  WHERE x = 1 ", 80),
            "SELECT a FROM t WHERE x = 1"
        );
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
