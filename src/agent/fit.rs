//! Sizing a request for the model's window. Text is measured in bytes and
//! turned into tokens with a conservative rate (schema text tokenizes
//! densely: a 26 KB request was 12,363 tokens, about 2.1 bytes a token; 2
//! is used, so estimates err on the large side), and a part of the window
//! is kept free for the reply.
//!
//! When a request does not fit, parts give way in a fixed order: the
//! oldest history pairs beyond the history's share, then schema detail
//! (see [`super::link::layout`]: the tables that match nothing first, then
//! sample values, column types and the lower-ranked matching tables).

pub use crate::llm::window::reply_reserve;
use crate::llm::Message;

/// Bytes per token assumed when sizing (conservative: real text has more).
pub const BYTES_PER_TOKEN: usize = 2;
/// The schema's share of a request when the window is large (hosted
/// models): a request stays small and cheap even then.
pub const DEFAULT_SCHEMA_BUDGET: usize = 40_000;
/// Bytes each message costs beyond its text (role, the chat template's
/// markers, JSON quoting).
pub const MESSAGE_OVERHEAD: usize = 24;

/// Tokens a text of `bytes` bytes may take, at most.
pub fn tokens_for(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// Bytes a request may have in a window of `window` tokens, the reply's
/// reserve kept free.
pub fn usable_bytes(window: usize) -> usize {
    window.saturating_sub(reply_reserve(window)) * BYTES_PER_TOKEN
}

/// The bytes of schema a request may carry in a window of `window` tokens
/// when the rest of the request (rules, history, question) takes
/// `fixed_bytes`.
pub fn schema_budget(window: usize, fixed_bytes: usize) -> usize {
    usable_bytes(window)
        .saturating_sub(fixed_bytes)
        .min(DEFAULT_SCHEMA_BUDGET)
}

/// The bytes messages take, overhead included.
pub fn message_bytes(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len() + MESSAGE_OVERHEAD)
                .sum();
            m.content.len() + calls + MESSAGE_OVERHEAD
        })
        .sum()
}

/// Bytes the verified examples may take of `room`: a quarter, and no
/// more than 6,000 (three examples of ordinary size fit well within).
pub fn examples_share(room: usize) -> usize {
    (room / 4).min(6_000)
}

/// The share of the room (what the window leaves after the rules, the
/// question and the turn so far) the history may take: older pairs beyond
/// it give way first, so the schema keeps most of a small window.
pub fn history_share(room: usize) -> usize {
    room / 3
}

/// Bytes a lookup's result (`describe_tables`, `list_tables`) may take in
/// that room: the next request carries it.
pub fn lookup_share(room: usize, most: usize) -> usize {
    (room / 4).clamp(400, most)
}

/// Drops the oldest question/answer pairs from `history` until it takes
/// at most `cap` bytes; returns how many questions were left out.
pub fn trim_history(history: &mut Vec<Message>, cap: usize) -> usize {
    let mut dropped = 0;
    while !history.is_empty() && message_bytes(history) > cap {
        // A pair is the question and everything up to the next question.
        let next = history
            .iter()
            .skip(1)
            .position(|m| m.role == crate::llm::Role::User)
            .map_or(history.len(), |i| i + 1);
        history.drain(..next);
        dropped += 1;
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_get_small_schemas() {
        assert_eq!(reply_reserve(4096), 512);
        assert_eq!(schema_budget(4096, 2000), (4096 - 512) * 2 - 2000);
        assert_eq!(schema_budget(8192, 2000), (8192 - 1024) * 2 - 2000);
        assert_eq!(schema_budget(128_000, 2000), DEFAULT_SCHEMA_BUDGET);
        assert_eq!(schema_budget(300, 2000), 0);
        assert_eq!(tokens_for(5), 3);
    }

    #[test]
    fn the_oldest_pairs_give_way_first() {
        let mut history = Vec::new();
        for i in 0..4 {
            history.push(Message::user(format!("question {i}")));
            history.push(Message::assistant("x".repeat(100)));
        }
        let all = message_bytes(&history);
        assert_eq!(trim_history(&mut history, all), 0);
        // Room for a little more than two pairs: the two oldest go.
        assert_eq!(trim_history(&mut history, all / 2 + 10), 2);
        assert_eq!(history.len(), 4);
        assert_eq!(history[0].content, "question 2");
        assert_eq!(trim_history(&mut history, 0), 2);
        assert!(history.is_empty());
    }
}
