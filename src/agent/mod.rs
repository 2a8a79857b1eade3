//! The agent core (SPEC §5), the one core every front end drives:
//!
//! - [`Conversation`]: the thread, the session file and the slash commands,
//!   front-end neutral — a front end feeds it lines and renders its events.
//! - [`Thread`]: one turn at a time — prompt, model, the answer kind's code
//!   run, fixes, history.
//! - [`runner`]: the one statement runner (gate → confirmation → execute →
//!   rows as events) that model SQL, `/sql`, `-e` and Lua's `aiq.query` share.
//! - [`kind`]: what the model writes (SQL today), pluggable.
//! - [`Event`]/[`EventSink`]: everything a user sees, confirmations included;
//!   every turn ends with one [`Event::TurnFinished`].
//! - [`LastResult`]: the last result, recorded as it streams past, for
//!   `/chart`.
//!
//! Nothing here prints, reads the terminal or knows which front end it serves.

pub mod commands;
mod conversation;
#[cfg(test)]
mod conversation_tests;
pub mod cut;
mod events;
pub mod extract;
pub mod fit;
#[cfg(test)]
mod fit_tests;
pub mod history;
pub mod kind;
mod last_result;
pub mod link;
mod outcome;
mod prefix;
pub mod prompt;
pub mod rank;
pub mod runner;
#[cfg(test)]
pub(crate) mod testkit;
mod thread;
#[cfg(test)]
mod thread_tests;
pub mod tools;
pub mod verified;

pub use conversation::{
    Conversation, ConversationOptions, Flow, Keep, Opened, SourceOpener, Status,
};
pub use events::{ConfirmKind, Confirmation, Event, EventSink, PendingAnswer, Secret};
pub use kind::Mode;
pub use last_result::{LastResult, Tee, NO_RESULT};
pub use outcome::{AgentError, Answer, Outcome};
pub use thread::{system_for, SchemaView, Thread, ThreadOptions};

pub use crate::session::{rfc3339, HistoryMessage, Lookup};

use crate::llm::Role;

/// Rows of a result the model sees again in later turns.
pub const PREVIEW_ROWS: usize = 20;
/// Bytes of that preview at most.
pub const PREVIEW_BYTES: usize = 2048;

/// The last `limit` question/answer pairs of `history`, oldest first. Never
/// starts with an answer, so no half pair is sent.
pub fn kept_history(history: &[HistoryMessage], limit: usize) -> &[HistoryMessage] {
    let mut pairs = 0;
    let mut start = history.len();
    let mut i = history.len();
    while i > 0 {
        i -= 1;
        if history[i].role == Role::User {
            if pairs == limit {
                break;
            }
            pairs += 1;
            start = i;
        }
    }
    &history[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(n: usize) -> Vec<HistoryMessage> {
        (0..n)
            .flat_map(|i| {
                [
                    HistoryMessage::user(format!("q{i}")),
                    HistoryMessage::assistant(format!("a{i}")),
                ]
            })
            .collect()
    }

    #[test]
    fn trimming_keeps_whole_recent_pairs() {
        let h = pairs(30);
        let kept = kept_history(&h, 20);
        assert_eq!(kept.len(), 40);
        assert_eq!(kept[0].content, "q10");
        assert_eq!(kept[39].content, "a29");
        assert_eq!(kept_history(&h, 0).len(), 0);
        assert_eq!(kept_history(&pairs(3), 20).len(), 6);
    }

    #[test]
    fn trimming_never_starts_with_an_answer() {
        let mut h = pairs(3);
        h.remove(0); // an orphaned answer at the front
        let kept = kept_history(&h, 5);
        assert_eq!(kept[0].role, Role::User);
        assert_eq!(kept.len(), 4);
    }
}
