//! How a turn ends: an [`Answer`], or an [`AgentError`] that says why not.
//! Front ends map errors to exit codes through one `From` impl
//! (`crate::error`), so every mode agrees on them.

use std::io;

use crate::llm::{LlmError, LlmErrorKind};

/// What a successful turn produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The model's final text; for a prose answer, the answer itself.
    pub text: String,
    /// The code that ran (or, with `--sql-only`, would run); `None` for a
    /// prose answer.
    pub code: Option<String>,
    /// Rows the result had, when the code ran.
    pub rows: Option<u64>,
}

impl Answer {
    /// An answer in words, with no code.
    pub fn is_prose(&self) -> bool {
        self.code.is_none()
    }
}

/// Why a turn failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The model could not be asked (exit 4; a usage problem exits 2).
    #[error("{0}")]
    Llm(LlmError),
    /// The safety policy refused the statement, or it was not confirmed (exit 5).
    #[error("{0}")]
    Refused(String),
    /// The statement failed (after the fixes), or timed out (exit 1).
    #[error("{0}")]
    QueryFailed(String),
    /// The model answered nothing (exit 1).
    #[error("the model gave an empty answer; try rephrasing the question")]
    EmptyAnswer,
    /// Cancelled (Ctrl-C): exit 130; the conversation is kept.
    #[error("cancelled")]
    Cancelled,
    /// The output went away: a closed pipe (`closed`, not an error for the
    /// user) or a failed write.
    #[error("cannot write the result: {message}")]
    Output { closed: bool, message: String },
}

impl From<io::Error> for AgentError {
    fn from(e: io::Error) -> Self {
        AgentError::Output {
            closed: e.kind() == io::ErrorKind::BrokenPipe,
            message: e.to_string(),
        }
    }
}

impl From<LlmError> for AgentError {
    fn from(e: LlmError) -> Self {
        match e.kind {
            LlmErrorKind::Cancelled => AgentError::Cancelled,
            _ => AgentError::Llm(e),
        }
    }
}

/// The payload of the one final event of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A question or statement was answered.
    Answered(Answer),
    /// The turn failed; this is the one place the failure is reported.
    Failed(AgentError),
    /// A slash command that runs nothing did its work (its output came as
    /// `Listing`/`Notice` events before).
    Done,
}

impl From<&Result<Answer, AgentError>> for Outcome {
    fn from(r: &Result<Answer, AgentError>) -> Self {
        match r {
            Ok(a) => Outcome::Answered(a.clone()),
            Err(e) => Outcome::Failed(e.clone()),
        }
    }
}
