//! The channel sink, for a front end that draws on one thread while the
//! conversation works on another (the full-screen view): a [`Worker`] owns
//! the [`Conversation`] on a thread of its own, takes lines through
//! [`Worker::submit`], and sends every event back through a bounded
//! channel. The drawing thread stays free: it can cancel the turn in flight
//! ([`Worker::cancel`]) or answer a confirmation event whenever it likes.
//! A view that holds only the first rows of a result gets only those
//! ([`Worker::spawn_holding`]); the rest are counted on the worker.

use std::io;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::agent::{Conversation, Event, EventSink, Flow};
use crate::cancel::CancelHandle;
use crate::render::COUNT_BUDGET;
use crate::source::EnoughRows;

/// Events a worker may get ahead of the reader before it waits.
const CAPACITY: usize = 1024;

/// Sends events into a channel; fails (and so stops the turn) when the
/// receiving side has gone away.
pub struct ChannelSink {
    tx: SyncSender<Event>,
    window: Option<Window>,
}

/// The rows a view holds of each result: the first `keep` are sent; the
/// rest are only counted, for at most `budget`, then the statement stops
/// there (`QueryFinished { more: true }`), as a table on a terminal does.
struct Window {
    keep: usize,
    sent: usize,
    counting_since: Option<Instant>,
    budget: Duration,
}

impl ChannelSink {
    pub fn new(tx: SyncSender<Event>) -> Self {
        ChannelSink { tx, window: None }
    }

    /// Sends at most `keep` rows of each result (see [`Window`]).
    pub fn holding(mut self, keep: usize) -> Self {
        self.window = Some(Window {
            keep,
            sent: 0,
            counting_since: None,
            budget: COUNT_BUDGET,
        });
        self
    }

    fn send(&mut self, event: Event) -> io::Result<()> {
        self.tx
            .send(event)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the view went away"))
    }
}

impl EventSink for ChannelSink {
    fn event(&mut self, event: Event) -> io::Result<()> {
        let Some(w) = self.window.as_mut() else {
            return self.send(event);
        };
        match event {
            Event::Columns(columns) => {
                (w.sent, w.counting_since) = (0, None);
                self.send(Event::Columns(columns))
            }
            Event::Rows(rows) => {
                let mut rows = rows.into_values();
                let room = w.keep - w.sent;
                if rows.len() > room {
                    rows.truncate(room);
                    let since = *w.counting_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= w.budget {
                        return Err(EnoughRows::error());
                    }
                }
                w.sent += rows.len();
                if rows.is_empty() {
                    return Ok(());
                }
                self.send(Event::Rows(rows.into()))
            }
            other => self.send(other),
        }
    }
}

/// Work for the conversation that is not a line (see [`Worker::run`]).
type Job = Box<dyn FnOnce(&mut Conversation, &mut dyn EventSink) + Send>;

/// What the drawing thread asks of the worker.
enum Submission {
    Line(String),
    Run(Job),
    Leave,
}

/// A conversation running on a thread of its own.
pub struct Worker {
    submissions: Sender<Submission>,
    events: Receiver<Event>,
    cancel: CancelHandle,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Moves `conversation` onto a new thread.
    pub fn spawn(conversation: Conversation) -> io::Result<Worker> {
        Worker::start(conversation, None)
    }

    /// [`Worker::spawn`] for a view that holds at most `keep` rows of a
    /// result: the rest are counted for a moment, not sent.
    pub fn spawn_holding(conversation: Conversation, keep: usize) -> io::Result<Worker> {
        Worker::start(conversation, Some(keep))
    }

    fn start(mut conversation: Conversation, keep: Option<usize>) -> io::Result<Worker> {
        let (submissions, inbox) = mpsc::channel::<Submission>();
        let (tx, events) = mpsc::sync_channel(CAPACITY);
        let cancel = conversation.canceller();
        let thread = std::thread::Builder::new()
            .name("aiq-conversation".into())
            .spawn(move || {
                let mut sink = ChannelSink::new(tx);
                if let Some(keep) = keep {
                    sink = sink.holding(keep);
                }
                for submission in inbox {
                    match submission {
                        Submission::Line(line) => {
                            if conversation.submit(&line, &mut sink) == Flow::Exit {
                                conversation.leave(&mut sink);
                                break;
                            }
                        }
                        Submission::Run(job) => job(&mut conversation, &mut sink),
                        Submission::Leave => {
                            conversation.leave(&mut sink);
                            break;
                        }
                    }
                }
            })?;
        Ok(Worker {
            submissions,
            events,
            cancel,
            thread: Some(thread),
        })
    }

    /// Hands the worker a line (a question or a slash command); its events
    /// follow, ending with one `TurnFinished`.
    pub fn submit(&self, line: impl Into<String>) {
        let _ = self.submissions.send(Submission::Line(line.into()));
    }

    /// Runs `job` on the worker, in order with the lines, with the
    /// conversation and the channel sink — for what is not a line, such as
    /// [`Conversation::offer_fresh_context`] (which asks through a
    /// confirmation event and ends with no `TurnFinished`).
    pub fn run(&self, job: impl FnOnce(&mut Conversation, &mut dyn EventSink) + Send + 'static) {
        let _ = self.submissions.send(Submission::Run(Box::new(job)));
    }

    /// Cancels the turn in flight, if any.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The events, in order. The channel closes when the worker has left.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// Saves the session and stops the worker, after the line in flight (if
    /// any) is done; returns the events that came until then (the
    /// `SessionSaved` the front end shows as it quits, among them).
    pub fn leave(mut self) -> Vec<Event> {
        self.stop()
    }

    fn stop(&mut self) -> Vec<Event> {
        let Some(thread) = self.thread.take() else {
            return Vec::new();
        };
        let _ = self.submissions.send(Submission::Leave);
        // The channel closes when the worker has left. A question asked on
        // the way out is answered no, so leaving never waits on it.
        let rest: Vec<Event> = self
            .events
            .iter()
            .filter_map(|event| match event {
                Event::Confirm(c) => {
                    c.answer(false);
                    None
                }
                Event::Secret(s) => {
                    s.answer(None);
                    None
                }
                other => Some(other),
            })
            .collect();
        let _ = thread.join();
        rest
    }
}

impl Drop for Worker {
    /// A worker dropped without [`Worker::leave`] cancels what it runs and
    /// still saves the session.
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.cancel.cancel();
            self.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::testkit::{sql, thread_with};
    use crate::agent::{
        ConfirmKind, ConversationOptions, Keep, Opened, Outcome, PendingAnswer, SourceOpener,
        ThreadOptions,
    };
    use crate::cancel::CancelToken;

    struct NoOpener;

    impl SourceOpener for NoOpener {
        fn open(&self, name: &str, _ask: crate::source::PasswordAsk) -> Result<Opened, String> {
            Err(format!("cannot open {name}"))
        }
    }

    fn worker(dir: &std::path::Path) -> Worker {
        let (thread, _) = thread_with(dir, vec![sql("SELECT 1 AS a")], ThreadOptions::default());
        let options = ConversationOptions {
            home: dir.to_path_buf(),
            format: crate::render::Format::Table,
            stale_after_hours: 12,
            opener: Box::new(NoOpener),
        };
        let conversation = Conversation::new(
            thread,
            "t.db".into(),
            "t.db".into(),
            Keep::NewSession,
            options,
        );
        Worker::spawn(conversation).unwrap()
    }

    #[test]
    fn jobs_run_in_order_with_the_lines_and_leaving_saves() {
        let dir = tempfile::tempdir().unwrap();
        let w = worker(dir.path());
        w.run(|_, sink| {
            let _ = sink.event(Event::Notice("before".into()));
        });
        w.submit("first");
        let mut seen = Vec::new();
        while !matches!(seen.last(), Some(Event::TurnFinished(_))) {
            seen.push(w.events().recv().unwrap());
        }
        assert!(matches!(&seen[0], Event::Notice(n) if n == "before"));
        assert!(matches!(
            seen.last(),
            Some(Event::TurnFinished(Outcome::Answered(_)))
        ));
        let rest = w.leave();
        assert!(
            matches!(rest.as_slice(), [Event::SessionSaved(_)]),
            "{rest:?}"
        );
    }

    #[test]
    fn a_holding_sink_sends_the_window_and_stops_counting_after_its_budget() {
        let (tx, rx) = mpsc::sync_channel(64);
        let mut sink = ChannelSink::new(tx).holding(3);
        let rows = |n: i64| -> Vec<Vec<crate::source::Value>> {
            (0..n).map(|i| vec![crate::source::Value::Int(i)]).collect()
        };
        sink.event(Event::Columns(vec![crate::source::Column::new(
            "n", "INTEGER",
        )]))
        .unwrap();
        sink.event(Event::Rows(rows(2).into())).unwrap();
        sink.event(Event::Rows(rows(2).into())).unwrap();
        sink.event(Event::Rows(rows(5).into())).unwrap();
        if let Some(w) = sink.window.as_mut() {
            w.budget = Duration::ZERO;
        }
        let e = sink.event(Event::Rows(rows(5).into())).unwrap_err();
        assert!(EnoughRows::is(&e));
        // A new result gets a new window.
        sink.event(Event::Columns(vec![])).unwrap();
        sink.event(Event::Rows(rows(1).into())).unwrap();
        drop(sink);
        let sent: Vec<usize> = rx
            .iter()
            .filter_map(|e| match e {
                Event::Rows(r) => Some(r.len()),
                _ => None,
            })
            .collect();
        assert_eq!(sent, [2, 1, 1]);
    }

    #[test]
    fn a_question_asked_while_leaving_is_answered_no() {
        let dir = tempfile::tempdir().unwrap();
        let w = worker(dir.path());
        let (tx, rx) = std::sync::mpsc::channel();
        // Like the stale-session question: not reachable by a cancel.
        w.run(move |_, sink| {
            let asked = PendingAnswer::ask(
                sink,
                &CancelToken::new(),
                ConfirmKind::ContinueSession,
                "Continue?",
                None,
            );
            let _ = tx.send(asked.ok().flatten());
        });
        let rest = w.leave();
        assert!(rest.is_empty(), "{rest:?}");
        assert_eq!(rx.recv().unwrap(), Some(false));
    }
}
