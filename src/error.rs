//! The error type every front end reports, with the exit code SPEC §2.4
//! assigns to each kind. Messages say what failed and what to do next; no
//! debug dump ever reaches a user.

use thiserror::Error;

/// A failure a person can act on. The variant decides the exit code; the
/// message is printed as `aiq: <message>` on stderr.
#[derive(Debug, Error)]
pub enum AiqError {
    /// The query failed (SQL error, timeout, …): exit 1.
    #[error("{0}")]
    Query(String),
    /// Bad flag or value, invalid config or file given on the command line: exit 2.
    #[error("{0}")]
    Usage(String),
    /// The data source is missing, unknown or cannot be opened: exit 3.
    #[error("{0}")]
    Source(String),
    /// The language model failed (unreachable, auth, quota, malformed reply): exit 4.
    #[error("{0}")]
    Llm(String),
    /// Refused by the safety policy: exit 5.
    #[error("{0}")]
    Refused(String),
    /// Already shown to the user; exit with this code and print nothing more.
    #[error("")]
    Reported(i32),
    /// Ctrl-C: exit 130.
    #[error("interrupted")]
    Interrupted,
}

impl AiqError {
    /// The process exit code for this error (SPEC §2.4).
    pub fn exit_code(&self) -> i32 {
        match self {
            AiqError::Query(_) => 1,
            AiqError::Usage(_) => 2,
            AiqError::Source(_) => 3,
            AiqError::Llm(_) => 4,
            AiqError::Refused(_) => 5,
            AiqError::Reported(code) => *code,
            AiqError::Interrupted => 130,
        }
    }
}

/// Writes one line of diagnostics to stderr. A closed or broken stderr is
/// ignored: diagnostics never make aiq fail or panic (`eprintln!` would).
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}

/// Shorthand for results that end in an [`AiqError`].
pub type Result<T, E = AiqError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_spec() {
        assert_eq!(AiqError::Query(String::new()).exit_code(), 1);
        assert_eq!(AiqError::Usage(String::new()).exit_code(), 2);
        assert_eq!(AiqError::Source(String::new()).exit_code(), 3);
        assert_eq!(AiqError::Llm(String::new()).exit_code(), 4);
        assert_eq!(AiqError::Refused(String::new()).exit_code(), 5);
        assert_eq!(AiqError::Interrupted.exit_code(), 130);
    }
}
