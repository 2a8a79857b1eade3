//! The console sink for a terminal: a spinner on stderr until the first
//! token, the model's answer (and its SQL) streamed to stderr as it arrives,
//! retries shown as they happen, then the result through the collector.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::sink::Collector;
use crate::agent::{Event, EventSink};

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
                eprint!("\r{} thinking…", frames[i % frames.len()]);
                let _ = io::stderr().flush();
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            eprint!("\r\x1b[2K");
            let _ = io::stderr().flush();
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

/// Terminal output around a [`Collector`].
pub struct Console<'a> {
    inner: Collector<'a>,
    spinner: Option<Spinner>,
    color: bool,
    /// Show `Event::Error` (chat); single-shot prints the final error itself.
    pub show_errors: bool,
    streamed: bool,
    /// When stdout is a terminal, a prose answer streamed to stderr is not
    /// printed again on stdout.
    stdout_tty: bool,
}

impl<'a> Console<'a> {
    pub fn new(inner: Collector<'a>, color: bool, stdout_tty: bool) -> Self {
        Console {
            inner,
            spinner: None,
            color,
            show_errors: false,
            streamed: false,
            stdout_tty,
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(mut s) = self.spinner.take() {
            s.stop();
        }
    }

    fn end_stream(&mut self) {
        if self.streamed {
            eprintln!("{}", if self.color { "\x1b[0m" } else { "" });
            self.streamed = false;
        }
    }
}

impl EventSink for Console<'_> {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match &event {
            Event::ThinkingStarted => {
                self.end_stream();
                self.stop_spinner();
                self.spinner = Some(Spinner::start());
            }
            Event::TextDelta(t) => {
                self.stop_spinner();
                if !self.streamed && self.color {
                    eprint!("\x1b[2m");
                }
                self.streamed = true;
                eprint!("{t}");
                let _ = io::stderr().flush();
            }
            Event::Retrying { .. }
            | Event::Error(_)
            | Event::Columns(_)
            | Event::TurnDone
            | Event::QueryStarted { .. } => {
                self.stop_spinner();
                self.end_stream();
            }
            Event::SqlProposed(_)
            | Event::Rows(_)
            | Event::QueryFinished { .. }
            | Event::Usage(_) => {}
        }
        match event {
            Event::Error(msg) if self.show_errors => {
                eprintln!("aiq: {msg}");
                Ok(())
            }
            // The streamed text already showed the SQL.
            Event::SqlProposed(_) => Ok(()),
            // The streamed text already showed a prose answer on the terminal.
            Event::TextDelta(_) if self.stdout_tty => Ok(()),
            other => self.inner.event(other),
        }
    }

    fn confirm(&mut self, sql: &str) -> bool {
        self.stop_spinner();
        self.end_stream();
        self.inner.confirm(sql)
    }
}
