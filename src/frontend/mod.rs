//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it questions — single-shot and the chat, both
//! over the same [`crate::agent::Thread`].

pub mod console;
pub mod oneshot;
pub mod repl;
pub mod sink;
