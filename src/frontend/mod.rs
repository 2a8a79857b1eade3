//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it lines — single-shot, direct SQL, the chat,
//! and the channel sink a view on another thread uses — all over the same
//! [`crate::agent::Conversation`] (or, for `-e`, the same statement runner).

pub mod channel;
pub mod charts;
pub mod console;
pub mod direct;
pub mod oneshot;
pub mod progress;
pub mod repl;
pub mod sink;
pub mod start;
pub mod tui;

pub use crate::error::stderr_line;
