//! rustyline's side of the chat: Tab completion of slash commands and of
//! the current source's table and column names, and multi-line input (a
//! line ending in `\`, or an unclosed quote or parenthesis).

use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper, Highlighter, Hinter};

use crate::agent::commands::COMMANDS;

/// Completion and validation for the chat prompt.
#[derive(Helper, Hinter, Highlighter)]
pub struct ChatHelper {
    /// Table and column names of the current source.
    pub names: Arc<Mutex<Vec<String>>>,
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        if before.starts_with('/') && !before.contains(' ') {
            let pairs = COMMANDS
                .iter()
                .filter(|(name, _)| name.starts_with(before))
                .map(|(name, _)| Pair {
                    display: name.to_string(),
                    replacement: format!("{name} "),
                })
                .collect();
            return Ok((0, pairs));
        }
        let start = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = before[start..].to_lowercase();
        if word.is_empty() {
            return Ok((pos, Vec::new()));
        }
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        let pairs = names
            .into_iter()
            .filter(|n| n.to_lowercase().starts_with(&word))
            .map(|n| Pair {
                display: n.clone(),
                replacement: n,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if incomplete(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

/// True while the input continues on the next line: it ends in `\`, or a
/// quote or parenthesis is still open. An apostrophe inside a word
/// ("what's") is not a quote.
pub fn incomplete(input: &str) -> bool {
    if input.trim_end_matches([' ', '\t']).ends_with('\\') {
        return true;
    }
    let mut quote: Option<char> = None;
    let mut depth: i32 = 0;
    let mut prev: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' if !prev.map(|p| p.is_alphanumeric()).unwrap_or(false) => {
                    quote = Some(c)
                }
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            },
        }
        prev = Some(c);
    }
    quote.is_some() || depth > 0
}

/// The submitted text: continuation backslashes removed.
pub fn joined(input: &str) -> String {
    input
        .lines()
        .map(|l| l.trim_end().strip_suffix('\\').unwrap_or(l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_rules() {
        assert!(incomplete("revenue per month \\"));
        assert!(incomplete("SELECT * FROM t WHERE name = 'Ann"));
        assert!(incomplete("count (orders"));
        assert!(!incomplete("what's the best month?"));
        assert!(!incomplete("customers' orders in 'DE'"));
        assert!(!incomplete("SELECT count(*) FROM t WHERE a = 'it''s'"));
        assert!(!incomplete("plain question"));
    }

    #[test]
    fn joining_lines() {
        assert_eq!(joined("revenue per \\\nmonth"), "revenue per \nmonth");
        assert_eq!(joined("  /help  "), "/help");
    }
}
