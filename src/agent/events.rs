//! What the core tells a front end. Every user-visible thing is an
//! [`Event`]; a front end is an [`EventSink`] that decides how it looks.
//! Sinks match these exhaustively, so a new event fails to compile until
//! every front end handles it.

use std::io;
use std::time::Duration;

use crate::llm::Usage;
use crate::source::{Column, Value};

/// One fact about the turn in progress.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A request to the model is on its way.
    ThinkingStarted,
    /// Text from the model as it streams in.
    TextDelta(String),
    /// The SQL the model proposes (before the safety gate).
    SqlProposed(String),
    /// The statement passed the gate and starts running.
    QueryStarted { sql: String },
    /// The result's columns.
    Columns(Vec<Column>),
    /// Some rows of the result.
    Rows(Vec<Vec<Value>>),
    /// The statement finished.
    QueryFinished {
        rows: u64,
        elapsed: Duration,
        changed: bool,
    },
    /// Something failed and is tried again (model request or SQL fix).
    Retrying { why: String, attempt: u32 },
    /// Tokens the model reported.
    Usage(Usage),
    /// The turn failed; the message is for the user.
    Error(String),
    /// The turn is over.
    TurnDone,
}

/// A front end's side of a turn.
pub trait EventSink {
    /// Shows one event. An error (a closed pipe) stops the turn.
    fn event(&mut self, event: Event) -> io::Result<()>;
    /// Confirmation needed: may this statement, which changes data, run?
    fn confirm(&mut self, sql: &str) -> bool;
}
