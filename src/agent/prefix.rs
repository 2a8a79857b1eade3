//! The stable part of a conversation's requests: what the request fitter
//! ([`super::thread`]'s `fit`) keeps from one request to the next so that
//! each request starts with the previous one and a model server can reuse
//! the work it did for it (llama.cpp and Ollama keep the evaluated prefix,
//! OpenAI caches identical prefixes, Anthropic caches up to its markers).
//!
//! A request is laid out as: the system message (rules, notes, the schema
//! chosen for the conversation), the history in the bytes it was first
//! sent in, then what is specific to the question (tables linking finds
//! for it that the schema lacks, verified examples, the question). The
//! question's message stays in the history in the same bytes. The schema
//! is laid out again only when it must; history gives way in steps. Pure
//! functions and plain data: no model, no source.

use std::collections::{BTreeMap, BTreeSet};

use super::fit::message_bytes;
use super::link::Layout;
use crate::llm::{Message, Role};

/// What the conversation's requests start with, kept in the thread
/// between turns (never in a global).
#[derive(Debug, Clone)]
pub struct Prefix {
    /// The system message as sent: rules, notes and the schema.
    pub system: String,
    /// The schema inside it and what it left out.
    pub laid: Layout,
    /// Whether the rules tell the model how to look at tables the schema
    /// does not describe.
    pub look: bool,
    /// The window it was fitted to.
    pub window: usize,
    /// The schema's budget then.
    pub budget: usize,
    /// Where the history sent with it starts (an index into the thread's
    /// history).
    pub history_start: usize,
}

/// A question's message as it was sent, and the tables it added to the
/// schema, by the index of the question in the thread's history.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    by_index: BTreeMap<usize, (String, Vec<String>)>,
}

impl Sent {
    /// Remembers that the question at `index` went out as `content`,
    /// describing `tables` beyond the schema.
    pub fn record(&mut self, index: usize, content: String, tables: Vec<String>) {
        self.by_index.insert(index, (content, tables));
    }

    /// Forgets everything (a replaced history).
    pub fn clear(&mut self) {
        self.by_index.clear();
    }

    /// The question at `index` as sent, if it was sent with more than
    /// itself.
    pub fn content(&self, index: usize) -> Option<&str> {
        self.by_index.get(&index).map(|(c, _)| c.as_str())
    }

    /// The tables the questions from `start` on added.
    pub fn tables_from(&self, start: usize) -> BTreeSet<&str> {
        self.by_index
            .range(start..)
            .flat_map(|(_, (_, t))| t.iter().map(String::as_str))
            .collect()
    }
}

/// How many leading messages of `history` (as sent, whole pairs) give way
/// so that it stays within `limit` pairs and `cap` bytes. Nothing when it
/// is within both; otherwise the oldest pairs go until it is within half
/// of each, so that the requests after this one keep their prefix for
/// several turns instead of losing a pair every turn. Returns the messages
/// and the pairs that give way.
pub fn step(history: &[Message], limit: usize, cap: usize) -> (usize, usize) {
    let pairs = history.iter().filter(|m| m.role == Role::User).count();
    if pairs <= limit && message_bytes(history) <= cap {
        return (0, 0);
    }
    let mut start = 0;
    let mut dropped = 0;
    while start < history.len()
        && (pairs - dropped > limit / 2 || message_bytes(&history[start..]) > cap / 2)
    {
        // A pair is the question and everything up to the next question.
        let next = history[start + 1..]
            .iter()
            .position(|m| m.role == Role::User)
            .map_or(history.len(), |i| start + 1 + i);
        start = next;
        dropped += 1;
    }
    (start, dropped)
}

/// The question's message: the tables it adds, the verified examples,
/// then the question (exactly the question when there is nothing else).
pub fn question_message(tables: &str, examples: &str, question: &str) -> String {
    let mut out = String::new();
    if !tables.is_empty() {
        out.push_str("More tables for this question (in addition to the schema above):\n");
        out.push_str(tables);
        out.push('\n');
    }
    out.push_str(examples);
    out.push_str(question);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(n: usize, size: usize) -> Vec<Message> {
        (0..n)
            .flat_map(|i| {
                [
                    Message::user(format!("q{i}")),
                    Message::assistant("x".repeat(size)),
                ]
            })
            .collect()
    }

    #[test]
    fn history_within_its_limits_is_kept_whole() {
        let h = pairs(4, 100);
        assert_eq!(step(&h, 4, message_bytes(&h)), (0, 0));
    }

    #[test]
    fn history_over_its_limits_gives_way_to_half_of_them() {
        // 21 pairs where 20 may go: the oldest 11 give way, 10 stay.
        let h = pairs(21, 10);
        assert_eq!(step(&h, 20, usize::MAX), (22, 11));
        // Over the bytes: down to half of them.
        let h = pairs(8, 100);
        let cap = message_bytes(&h) - 1;
        let (messages, dropped) = step(&h, 20, cap);
        assert_eq!((messages, dropped), (10, 5));
        assert!(message_bytes(&h[messages..]) <= cap / 2);
        // Nothing may stay.
        assert_eq!(step(&h, 20, 0), (16, 8));
    }

    #[test]
    fn a_question_alone_is_just_the_question() {
        assert_eq!(question_message("", "", "how many?"), "how many?");
        let m = question_message(
            "table t (~1 rows)\n  a INTEGER\n",
            "Verified examples:\nQ: a\nSQL: b\n\n",
            "how many?",
        );
        assert!(m.starts_with("More tables for this question"));
        assert!(m.ends_with("SQL: b\n\nhow many?"), "{m}");
        assert!(
            m.contains("table t (~1 rows)\n  a INTEGER\n\nVerified"),
            "{m}"
        );
    }
}
