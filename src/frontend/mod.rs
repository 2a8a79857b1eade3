//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it lines — single-shot, direct SQL, Lua scripts
//! (`--lua`), the chat, and the channel sink a view on another thread uses —
//! all over the same [`crate::agent::Conversation`] (or, for `-e` and
//! `--lua`, the same statement runner and sandbox).

pub mod channel;
pub mod charts;
pub mod console;
pub mod direct;
pub mod oneshot;
pub mod progress;
pub mod repl;
pub mod script;
pub mod sink;
pub mod start;
pub mod tui;

use std::io;

use crate::agent::{AgentError, Answer};
pub use crate::error::stderr_line;
use crate::error::AiqError;

/// How a run that wrote its result to stdout ends: the turn's error (130
/// after Ctrl-C), else a failed flush of the output — a closed pipe is no
/// failure.
pub fn finished(
    result: Result<Answer, AgentError>,
    flushed: io::Result<()>,
) -> Result<(), AiqError> {
    match result {
        Ok(_) => match flushed {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                Err(AiqError::Query(format!("cannot write the result: {e}")))
            }
            _ => Ok(()),
        },
        Err(_) if crate::interrupt::interrupted() => Err(AiqError::Interrupted),
        Err(e) => Err(e.into()),
    }
}
