//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it lines — single-shot, direct SQL, Lua scripts
//! (`--lua`), the chat, and the channel sink a view on another thread uses —
//! all over the same [`crate::agent::Conversation`] (or, for `-e` and
//! `--lua`, the same statement runner and sandbox).

pub mod channel;
pub mod console;
pub mod direct;
pub mod oneshot;
pub mod repl;
pub mod script;
pub mod sink;

use std::io::Write;

/// Writes one line of diagnostics to stderr. A closed or broken stderr is
/// ignored: diagnostics never make aiq fail or panic.
pub fn stderr_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}
