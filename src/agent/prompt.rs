//! The system prompt and the message list of a turn (SPEC §5.3 step 2):
//! system prompt (with the schema context) + kept history, oldest first +
//! the question last; exactly system + question when there is no history.
//! Pure functions.

use chrono::NaiveDate;

use super::kind::AnswerKind;
use super::HistoryMessage;
use crate::llm::{Message, Role};
use crate::privacy::Guard;
use crate::safety::Dialect;

/// What the system prompt needs to know.
pub struct PromptFacts<'a> {
    pub dialect: Dialect,
    /// The engine and version, e.g. `SQLite 3.50.4`.
    pub engine: &'a str,
    pub today: NaiveDate,
    pub allow_write: bool,
    /// The source's notes that name no table, as `- note` lines.
    pub notes: &'a str,
    /// The verified examples' block (empty for none).
    pub examples: &'a str,
    pub schema: &'a str,
    /// How to look at tables the schema lists by name only, when it does.
    pub look: Option<&'a str>,
}

/// The engine's SQL idioms, one line (date functions, quoting, LIMIT).
pub fn idioms(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "SQLite: dates are TEXT; use strftime('%Y-%m', col) for months, date('now') for today, || to concatenate, LIMIT n; there is no ILIKE (LIKE is case-insensitive for ASCII).",
        Dialect::DuckDb => "DuckDB: use date_trunc('month', col), strftime(col, '%Y-%m'), current_date, ILIKE, LIMIT n; identifiers are double-quoted.",
        Dialect::Postgres => "PostgreSQL: use date_trunc('month', col), to_char(col, 'YYYY-MM'), current_date, now() - interval '30 days', col::date casts, ILIKE for case-insensitive matching, || to concatenate, LIMIT n; identifiers are double-quoted; integer division truncates, so cast to numeric for ratios; there is no IFNULL (use coalesce).",
        Dialect::MySql => "MySQL/MariaDB: use DATE_FORMAT(col, '%Y-%m'), CURDATE(), NOW() - INTERVAL 30 DAY, DATEDIFF(a, b), CONCAT(a, b) (|| is OR), IFNULL or COALESCE, LIMIT n; identifiers are quoted with backticks, strings with single quotes; there is no FULL OUTER JOIN and no ILIKE (LIKE is case-insensitive for most collations).",
        Dialect::ClickHouse => "ClickHouse: use toStartOfMonth(col), formatDateTime(col, '%Y-%m'), today(), now() - INTERVAL 30 DAY, toDate(col), count(), countIf(cond), uniqExact(col), argMax(a, b), ILIKE, LIMIT n; identifiers are double-quoted or in backticks, strings single-quoted; function names are case-sensitive; query a Distributed table, not the per-shard local tables under it; no SETTINGS or FORMAT clauses.",
    }
}

/// What the source lets statements do, as a rule for the model.
pub fn access_rule(allow_write: bool) -> &'static str {
    if allow_write {
        "Statements that change data are allowed, but the user confirms each one; prefer reading."
    } else {
        "The database is read-only: write only SELECT (or WITH … SELECT) statements."
    }
}

/// The system prompt: role, dialect, today's date, the answer kind's rules
/// and the common ones, then the schema.
pub fn system_prompt(f: &PromptFacts<'_>, kind: &dyn AnswerKind) -> String {
    let mut rules = String::new();
    for rule in kind.rules(f).iter().map(String::as_str).chain(f.look) {
        rules.push_str("- ");
        rules.push_str(rule);
        rules.push('\n');
    }
    format!(
        "You are aiq, a careful data analyst. You answer questions about a {dialect} database ({engine}) by {task}.\n\
         Today is {today}.\n\
         Rules:\n\
         {rules}\
         - If the question needs no {code} (about the schema, or about an earlier answer), answer briefly in plain prose without a code block.\n\
         \n\
         {notes}\
         {examples}\
         Schema:\n{schema}",
        examples = f.examples,
        notes = if f.notes.is_empty() {
            String::new()
        } else {
            format!(
                "Notes about this data from the user (follow them; notes on a table are in its description):\n{}\n",
                f.notes
            )
        },
        dialect = f.dialect.name(),
        engine = f.engine,
        task = kind.task(),
        today = f.today.format("%Y-%m-%d"),
        code = kind.mode().code_name(),
        schema = f.schema,
    )
}

/// The kept history as model messages, oldest first. An assistant message
/// carries its SQL and a preview of the result (or the error), so follow-up
/// questions can use real numbers.
pub fn history_messages(kept: &[HistoryMessage], guard: &Guard) -> Vec<Message> {
    kept.iter()
        .map(|m| match m.role {
            Role::Assistant => Message::assistant(m.for_model(guard)),
            Role::User => Message::user(m.content.clone()),
            Role::System => Message::system(m.content.clone()),
            Role::Tool => Message::user(m.content.clone()),
        })
        .collect()
}

/// system + history + turn (the question and any fixes so far).
pub fn messages(system: &str, history: &[Message], turn: &[Message]) -> Vec<Message> {
    let mut all = Vec::with_capacity(1 + history.len() + turn.len());
    all.push(Message::system(system));
    all.extend_from_slice(history);
    all.extend_from_slice(turn);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(schema: &str) -> PromptFacts<'_> {
        PromptFacts {
            dialect: Dialect::Sqlite,
            engine: "SQLite 3.50.4",
            today: NaiveDate::from_ymd_opt(2026, 1, 26).unwrap(),
            allow_write: false,
            notes: "",
            examples: "",
            schema,
            look: None,
        }
    }

    #[test]
    fn server_dialects_get_their_idioms() {
        assert!(idioms(Dialect::Postgres).contains("date_trunc"));
        assert!(idioms(Dialect::Postgres).contains("double-quoted"));
        assert!(idioms(Dialect::MySql).contains("backticks"));
        assert!(idioms(Dialect::MySql).contains("DATE_FORMAT"));
    }

    #[test]
    fn system_prompt_names_dialect_date_rules_and_schema() {
        let p = system_prompt(
            &facts("table t\n  a INTEGER\n"),
            &super::super::kind::SqlAnswers,
        );
        assert!(p.contains("a SQLite database (SQLite 3.50.4)"));
        assert!(p.contains("Today is 2026-01-26."));
        assert!(p.contains("exactly one SQL statement in a ```sql fenced block"));
        assert!(p.contains("read-only"));
        assert!(p.contains("strftime('%Y-%m', col)"));
        assert!(p.ends_with("Schema:\ntable t\n  a INTEGER\n"));
    }

    #[test]
    fn empty_history_is_exactly_system_and_question() {
        let m = messages(
            "sys",
            &history_messages(&[], &Guard::default()),
            &[Message::user("q")],
        );
        assert_eq!(m, [Message::system("sys"), Message::user("q")]);
    }

    #[test]
    fn history_sits_between_system_and_question() {
        let kept = [
            HistoryMessage::user("first?"),
            HistoryMessage::assistant("```sql\nSELECT 1\n```")
                .with_sql("SELECT 1", Ok((1, "x\n1\n".into()))),
        ];
        let m = messages(
            "sys",
            &history_messages(&kept, &Guard::default()),
            &[Message::user("second?")],
        );
        let roles: Vec<Role> = m.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::System, Role::User, Role::Assistant, Role::User]
        );
        assert_eq!(m[1].content, "first?");
        assert_eq!(m[3].content, "second?");
        assert!(m[2].content.contains("Result: 1 row"), "{}", m[2].content);
        assert!(m[2].content.contains("x\n1"), "{}", m[2].content);
    }
}
