//! How a turn ends: an [`Answer`], or an [`AgentError`] that says why not.
//! Front ends map errors to exit codes through the one `From` impl here,
//! so every mode agrees on them.

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

impl From<AgentError> for crate::error::AiqError {
    /// The one mapping of a failed turn to an exit code (SPEC §2.4). A
    /// closed pipe is not a failure: the reader went away, exit 0 quietly.
    fn from(e: AgentError) -> Self {
        use crate::error::AiqError;
        match e {
            AgentError::Llm(e) => e.into(),
            AgentError::Refused(m) => AiqError::Refused(m),
            AgentError::QueryFailed(m) => AiqError::Query(m),
            e @ AgentError::EmptyAnswer => AiqError::Query(e.to_string()),
            AgentError::Cancelled => AiqError::Interrupted,
            AgentError::Output { closed: true, .. } => AiqError::Reported(0),
            e @ AgentError::Output { .. } => AiqError::Query(e.to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AiqError;

    #[test]
    fn failed_turns_map_once() {
        let code = |e: AgentError| AiqError::from(e).exit_code();
        assert_eq!(code(AgentError::Refused("r".into())), 5);
        assert_eq!(code(AgentError::QueryFailed("q".into())), 1);
        assert_eq!(code(AgentError::EmptyAnswer), 1);
        assert_eq!(code(AgentError::Cancelled), 130);
        let closed = AgentError::Output {
            closed: true,
            message: "broken pipe".into(),
        };
        assert_eq!(code(closed), 0);
        let llm = LlmError::new(LlmErrorKind::Auth, "key refused");
        assert_eq!(code(AgentError::Llm(llm)), 4);
    }
}
