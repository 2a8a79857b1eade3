//! What the core tells a front end. Every user-visible thing is an
//! [`Event`] — a confirmation too, as a question the front end answers —
//! and a front end is an [`EventSink`] that decides how it looks. Sinks
//! match these exhaustively, so a new event fails to compile until every
//! front end handles it.
//!
//! Every turn (a question, a statement, a slash command) ends with exactly
//! one [`Event::TurnFinished`]; a failure is reported there and nowhere else.

use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::conversation::Status;
use super::kind::Mode;
use super::outcome::Outcome;
use crate::cancel::CancelToken;
use crate::chart::Chart;
use crate::llm::Usage;
use crate::source::{Column, RowBatch};

/// One fact about the conversation, in the order it happened.
#[derive(Debug)]
pub enum Event {
    /// A request to the model is on its way.
    ThinkingStarted,
    /// Text from the model as it streams in.
    TextDelta(String),
    /// The code the model answered with (SQL, or a program in another
    /// mode), before the safety gate.
    Proposed { mode: Mode, code: String },
    /// A question only the user can answer; the turn waits for
    /// [`Confirmation::answer`] (or a cancel). A sink that drops it unanswered
    /// says no.
    Confirm(Confirmation),
    /// A line only the user can type, not to be shown as it is typed (the
    /// password a server asks for on `/source`); the command waits for
    /// [`Secret::answer`]. A sink that drops it unanswered declines.
    Secret(Secret),
    /// A statement passed the gate and starts running.
    QueryStarted { sql: String },
    /// The result's columns.
    Columns(Vec<Column>),
    /// Some rows of the result.
    Rows(RowBatch),
    /// The statement finished.
    QueryFinished {
        /// Rows read (for a write: rows changed).
        rows: u64,
        elapsed: Duration,
        changed: bool,
        /// The front end had what it shows and stopped reading: the result
        /// has more rows, not counted.
        more: bool,
    },
    /// Something failed and is tried again (model request or a fix).
    Retrying { why: String, attempt: u32 },
    /// The model (or a program) called a tool.
    ToolCall { name: String, arguments: String },
    /// What that tool call gave back.
    ToolResult { name: String, result: String },
    /// Text a program printed: part of the answer, like rows.
    Output(String),
    /// Tokens the model reported.
    Usage(Usage),
    /// Text the user asked to see (`/help`, `/history`, `/schema`, …).
    Listing(String),
    /// A chart of the last result (`/chart`), for the front end to draw.
    Chart(Box<Chart>),
    /// A one-line status ("Output format: csv").
    Notice(String),
    /// Something went wrong, but the conversation goes on (a session that
    /// could not be saved).
    Warning(String),
    /// A slash command could not do what was asked (unknown command, bad
    /// argument); the line says why.
    CommandFailed(String),
    /// `/edit`: the front end puts this SQL in its input line, as a `/sql`
    /// command to change and run.
    Edit(String),
    /// The session file was written; front ends show where and how to
    /// continue it.
    SessionSaved(PathBuf),
    /// A command changed what the conversation runs on (`/source`,
    /// `/format`, `/new`, `/save FILE`, …): the new facts, for a status line.
    StatusChanged(Status),
    /// The turn is over: the one final event, carrying its outcome.
    TurnFinished(Outcome),
}

/// A front end's side of a turn.
pub trait EventSink {
    /// Shows one event. An error (a closed pipe, a view that went away)
    /// stops the turn.
    fn event(&mut self, event: Event) -> io::Result<()>;

    /// Every result's rows go to CSV or TSV output (see
    /// [`crate::source::RowSink::writes_delimited`]); a sink that wraps
    /// another asks it.
    fn writes_delimited(&self) -> bool {
        false
    }
}

/// What a confirmation is about; a front end may answer some kinds itself
/// (`--yes` answers [`ConfirmKind::Write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmKind {
    /// A statement (or a file write) that changes data.
    Write,
    /// `/clear`.
    ClearHistory,
    /// A stale session: continue its conversation?
    ContinueSession,
}

/// A yes/no question from the core, answered once from any thread.
#[derive(Debug, Clone)]
pub struct Confirmation {
    pub kind: ConfirmKind,
    /// The question, without the `[y/N]` a console adds.
    pub question: String,
    /// What it is about (the statement), shown above the question.
    pub detail: Option<String>,
    reply: Arc<Mutex<Option<SyncSender<bool>>>>,
}

impl Confirmation {
    /// A question and the side that waits for its answer.
    pub fn new(
        kind: ConfirmKind,
        question: impl Into<String>,
        detail: Option<String>,
    ) -> (Confirmation, PendingAnswer) {
        let (tx, rx) = mpsc::sync_channel(1);
        let confirmation = Confirmation {
            kind,
            question: question.into(),
            detail,
            reply: Arc::new(Mutex::new(Some(tx))),
        };
        (confirmation, PendingAnswer(rx))
    }

    /// Answers the question; only the first answer counts.
    pub fn answer(&self, yes: bool) {
        if let Some(tx) = self.reply.lock().ok().and_then(|mut r| r.take()) {
            let _ = tx.send(yes);
        }
    }
}

/// A line the core asks the user to type without showing it, answered
/// once from any thread. What is typed never reaches its `Debug`.
#[derive(Debug, Clone)]
pub struct Secret {
    /// What is asked: `Password for ana@db.example.com:5432: `.
    pub prompt: String,
    reply: Arc<Mutex<Option<SyncSender<Option<String>>>>>,
}

impl Secret {
    /// A question and the side that waits for its answer.
    pub fn new(prompt: impl Into<String>) -> (Secret, Receiver<Option<String>>) {
        let (tx, rx) = mpsc::sync_channel(1);
        let secret = Secret {
            prompt: prompt.into(),
            reply: Arc::new(Mutex::new(Some(tx))),
        };
        (secret, rx)
    }

    /// Answers: what was typed, or `None` to decline. Only the first
    /// answer counts.
    pub fn answer(&self, typed: Option<String>) {
        if let Some(tx) = self.reply.lock().ok().and_then(|mut r| r.take()) {
            let _ = tx.send(typed);
        }
    }
}

/// The waiting side of a [`Confirmation`].
pub struct PendingAnswer(Receiver<bool>);

impl PendingAnswer {
    /// Waits for the answer: `Some(yes)`, `Some(false)` when the question
    /// was dropped unanswered, `None` when the turn was cancelled first.
    pub fn wait(self, cancel: &CancelToken) -> Option<bool> {
        loop {
            match self.0.recv_timeout(Duration::from_millis(50)) {
                Ok(yes) => return Some(yes),
                Err(RecvTimeoutError::Disconnected) => return Some(false),
                Err(RecvTimeoutError::Timeout) if cancel.is_cancelled() => return None,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Sends the question through `sink` and waits for its answer.
    pub fn ask(
        sink: &mut dyn EventSink,
        cancel: &CancelToken,
        kind: ConfirmKind,
        question: &str,
        detail: Option<String>,
    ) -> io::Result<Option<bool>> {
        let (confirmation, pending) = Confirmation::new(kind, question, detail);
        sink.event(Event::Confirm(confirmation))?;
        Ok(pending.wait(cancel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_arrive_from_another_thread_and_drops_say_no() {
        let (c, pending) = Confirmation::new(ConfirmKind::Write, "Run this statement?", None);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            c.answer(true);
            c.answer(false); // ignored
        });
        assert_eq!(pending.wait(&CancelToken::new()), Some(true));
        t.join().unwrap();

        let (c, pending) = Confirmation::new(ConfirmKind::Write, "?", None);
        drop(c);
        assert_eq!(pending.wait(&CancelToken::new()), Some(false));

        let (_c, pending) = Confirmation::new(ConfirmKind::Write, "?", None);
        let cancel = CancelToken::new();
        cancel.cancel();
        assert_eq!(pending.wait(&cancel), None);
    }
}
