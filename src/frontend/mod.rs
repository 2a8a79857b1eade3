//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it questions. Single-shot is here now; chat and
//! the TUI are further sinks over the same [`crate::agent::Thread`].

pub mod console;
pub mod oneshot;
pub mod sink;
