//! rustyline's side of the chat: Tab completion of slash commands and of
//! the current source's table and column names — in SQL, tables after
//! FROM/JOIN and columns elsewhere — and multi-line input (a line ending in
//! `\`, or an unclosed quote or parenthesis).

use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper, Highlighter, Hinter};

use crate::agent::commands::COMMANDS;

/// Completion and validation for the chat prompt.
#[derive(Helper, Hinter, Highlighter)]
pub struct ChatHelper {
    /// Table and column names of the current source.
    pub names: Arc<Mutex<Names>>,
}

/// The current source's names, for completion.
#[derive(Debug, Default, Clone)]
pub struct Names {
    pub tables: Vec<String>,
    pub columns: Vec<String>,
}

/// Keywords after which SQL names a table.
const TABLE_KEYWORDS: &[&str] = &[
    "from",
    "join",
    "into",
    "update",
    "table",
    "describe",
    "summarize",
];

/// What to offer for the word being typed: tables in table position of a
/// `/sql` statement, columns elsewhere in it; both in a question.
fn candidates<'a>(before: &str, names: &'a Names) -> Vec<&'a String> {
    let Some(sql) = before.strip_prefix("/sql ") else {
        return names.tables.iter().chain(&names.columns).collect();
    };
    let spaced = sql.replace(',', " , ").replace('(', " ( ");
    let mut words: Vec<String> = spaced
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    // The word being typed (if any) is not part of the context.
    if !sql.ends_with(|c: char| c.is_whitespace() || c == '(' || c == ',') {
        words.pop();
    }
    let is_keyword = |w: &String| TABLE_KEYWORDS.contains(&w.as_str());
    let after_table_keyword = words.last().is_some_and(is_keyword);
    // `FROM a, b` or `FROM a x, b`: a comma continues the table list.
    let in_table_list = words.last().is_some_and(|w| w == ",") && {
        let mut rest = words.iter().rev().skip(1);
        loop {
            // A table name, maybe with an alias, then a comma or a keyword.
            let mut seen = 0;
            let stop = loop {
                match rest.next() {
                    Some(w) if w == "," => break Some(false),
                    Some(w) if is_keyword(w) => break Some(true),
                    Some(_) if seen < 2 => seen += 1,
                    _ => break None,
                }
            };
            match stop {
                Some(true) => break true,
                Some(false) => continue,
                None => break false,
            }
        }
    };
    if after_table_keyword || in_table_list {
        names.tables.iter().collect()
    } else {
        names.columns.iter().collect()
    }
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
        let mut offered: Vec<&String> = candidates(before, &names)
            .into_iter()
            .filter(|n| n.to_lowercase().starts_with(&word))
            .collect();
        offered.sort();
        offered.dedup();
        let pairs = offered
            .into_iter()
            .map(|n| Pair {
                display: n.clone(),
                replacement: n.clone(),
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
    fn sql_completion_knows_table_position() {
        let names = Names {
            tables: vec!["order_items".into(), "orders".into(), "customers".into()],
            columns: vec!["order_id".into(), "ordered_at".into(), "name".into()],
        };
        let offer = |before: &str| -> Vec<String> {
            let word = before
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            let mut v: Vec<String> = candidates(before, &names)
                .into_iter()
                .filter(|n| n.starts_with(word))
                .cloned()
                .collect();
            v.sort();
            v
        };
        assert_eq!(offer("/sql SELECT * FROM ord"), ["order_items", "orders"]);
        assert_eq!(
            offer("/sql SELECT * FROM orders o JOIN ord"),
            ["order_items", "orders"]
        );
        assert_eq!(
            offer("/sql SELECT * FROM customers, ord"),
            ["order_items", "orders"]
        );
        assert_eq!(offer("/sql SELECT ord"), ["order_id", "ordered_at"]);
        assert_eq!(
            offer("/sql SELECT * FROM orders WHERE ord"),
            ["order_id", "ordered_at"]
        );
        // In a question, both.
        assert_eq!(
            offer("how many ord"),
            ["order_id", "order_items", "ordered_at", "orders"]
        );
    }

    #[test]
    fn joining_lines() {
        assert_eq!(joined("revenue per \\\nmonth"), "revenue per \nmonth");
        assert_eq!(joined("  /help  "), "/help");
    }
}
