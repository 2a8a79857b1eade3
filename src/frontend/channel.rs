//! The channel sink, for a front end that draws on one thread while the
//! conversation works on another (the full-screen view): a [`Worker`] owns
//! the [`Conversation`] on a thread of its own, takes lines through
//! [`Worker::submit`], and sends every event back through a bounded
//! channel. The drawing thread stays free: it can cancel the turn in flight
//! ([`Worker::cancel`]) or answer a confirmation event whenever it likes.

use std::io;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

use crate::agent::{Conversation, Event, EventSink, Flow};
use crate::cancel::CancelHandle;

/// Events a worker may get ahead of the reader before it waits.
const CAPACITY: usize = 1024;

/// Sends events into a channel; fails (and so stops the turn) when the
/// receiving side has gone away.
pub struct ChannelSink {
    tx: SyncSender<Event>,
}

impl ChannelSink {
    pub fn new(tx: SyncSender<Event>) -> Self {
        ChannelSink { tx }
    }
}

impl EventSink for ChannelSink {
    fn event(&mut self, event: Event) -> io::Result<()> {
        self.tx
            .send(event)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the view went away"))
    }
}

/// What the drawing thread asks of the worker.
enum Submission {
    Line(String),
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
    pub fn spawn(mut conversation: Conversation) -> io::Result<Worker> {
        let (submissions, inbox) = mpsc::channel::<Submission>();
        let (tx, events) = mpsc::sync_channel(CAPACITY);
        let cancel = conversation.canceller();
        let thread = std::thread::Builder::new()
            .name("aiq-conversation".into())
            .spawn(move || {
                let mut sink = ChannelSink::new(tx);
                for submission in inbox {
                    match submission {
                        Submission::Line(line) => {
                            if conversation.submit(&line, &mut sink) == Flow::Exit {
                                conversation.leave(&mut sink);
                                break;
                            }
                        }
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
        // The channel closes when the worker has left.
        let rest: Vec<Event> = self.events.iter().collect();
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
