//! One remembered message of a conversation — a question, or an answer
//! with what ran and what came of it — as sessions keep it and as the
//! model is shown it again in later turns.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::llm::Role;

/// A helper tool the model called before it answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Lookup {
    pub name: String,
    /// The call's arguments, JSON.
    pub arguments: String,
}

/// One remembered message: a question or an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryMessage {
    pub role: Role,
    pub content: String,
    pub timestamp: DateTime<Utc>,
    /// Assistant: the SQL that ran (or was refused).
    pub sql: Option<String>,
    /// Assistant: rows returned.
    pub row_count: Option<u64>,
    /// Assistant: the result had more rows than `row_count` (the front end
    /// stopped reading them).
    pub more_rows: bool,
    /// Assistant: why the SQL failed.
    pub error: Option<String>,
    /// Assistant: the first rows as CSV, bounded.
    pub preview: Option<String>,
    /// Assistant in Lua mode: the program that ran (or failed).
    pub lua: Option<String>,
    /// Assistant in Lua mode: what the program printed, bounded.
    pub output: Option<String>,
    /// Assistant: the helper tools the model called before answering.
    pub lookups: Vec<Lookup>,
    /// Assistant in Lua mode: the statements the program ran, so what they
    /// read decides what of its output a model may see (SPEC §4.3).
    pub statements: Vec<String>,
    /// Assistant: why its values may not reach a model, as decided under
    /// the rules of the source it ran on (SPEC §4.3): a later source's
    /// rules may add to that, never take it away.
    pub withheld: Option<String>,
    /// Assistant: `withheld` was decided from what the engine read (a
    /// message of an earlier version's session was not: while any column
    /// is redacted, its values are not sent).
    pub judged: bool,
}

impl HistoryMessage {
    fn new(role: Role, content: impl Into<String>) -> Self {
        HistoryMessage {
            role,
            content: content.into(),
            timestamp: Utc::now(),
            sql: None,
            row_count: None,
            more_rows: false,
            error: None,
            preview: None,
            lua: None,
            output: None,
            lookups: Vec::new(),
            statements: Vec::new(),
            withheld: None,
            judged: false,
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// The answer to a question that got none (the model could not be
    /// asked, or said nothing): no content, and why, on one bounded line.
    pub fn failed(why: &str) -> Self {
        let line = why.lines().next().unwrap_or("").trim();
        let mut short: String = line.chars().take(300).collect();
        if short.len() < line.len() {
            short.push('…');
        }
        HistoryMessage {
            error: Some(short),
            ..Self::new(Role::Assistant, "")
        }
    }

    /// An answer that failed before any SQL or program: see [`Self::failed`].
    pub fn is_unanswered(&self) -> bool {
        self.role == Role::Assistant
            && self.error.is_some()
            && self.sql.is_none()
            && self.lua.is_none()
    }

    /// Records the SQL and its outcome: `(rows, preview)` or the error.
    pub fn with_sql(mut self, sql: &str, outcome: Result<(u64, String), String>) -> Self {
        self.sql = Some(sql.to_string());
        match outcome {
            Ok((rows, preview)) => {
                self.row_count = Some(rows);
                self.preview = Some(preview);
            }
            Err(e) => self.error = Some(e),
        }
        self
    }

    /// Records a Lua program and its outcome: `(rows, preview, output)` —
    /// an empty preview when it showed no table — or the error.
    pub fn with_lua(
        mut self,
        program: &str,
        outcome: Result<(u64, String, String), String>,
    ) -> Self {
        self.lua = Some(program.to_string());
        match outcome {
            Ok((rows, preview, output)) => {
                if !preview.is_empty() {
                    self.row_count = Some(rows);
                    self.preview = Some(preview);
                }
                self.output = Some(output);
            }
            Err(e) => self.error = Some(e),
        }
        self
    }

    /// The text the model gets for this message in later turns; `guard`
    /// decides how much of the result preview goes with it.
    pub fn for_model(&self, guard: &crate::privacy::Guard) -> String {
        let mut text = self.content.clone();
        if let Some(sql) = &self.sql {
            if !text.contains(sql.as_str()) {
                text.push_str(&format!("\n```sql\n{sql}\n```"));
            }
        }
        if let Some(program) = &self.lua {
            if !text.contains(program.as_str()) {
                text.push_str(&format!("\n```lua\n{program}\n```"));
            }
        }
        let withheld = self.withheld_by(guard);
        if let Some(out) = self.output.as_deref().filter(|o| !o.is_empty()) {
            let out = match &withheld {
                Some(why) => format!("({why})"),
                None => guard.scrub(out),
            };
            text.push_str(&format!("\nThe program printed:\n{}", out.trim_end()));
        }
        match (&self.row_count, &self.error) {
            (Some(rows), _) => {
                let noun = if *rows == 1 { "row" } else { "rows" };
                let at_least = if self.more_rows { "at least " } else { "" };
                text.push_str(&format!("\nResult: {at_least}{rows} {noun}"));
                if let Some(p) = self.preview.as_deref().filter(|p| !p.is_empty()) {
                    let p = match &withheld {
                        // Column names may be values too (a `PIVOT`).
                        Some(why) if why == crate::privacy::WITHHELD_NAMES => format!("({why})"),
                        Some(why) => format!("{}\n({why})", p.lines().next().unwrap_or("")),
                        None => p.to_string(),
                    };
                    text.push_str(&format!(" (CSV, first rows):\n{p}"));
                }
            }
            (None, Some(error)) if self.is_unanswered() => {
                text.push_str(&format!("(no answer: {error})"));
            }
            (None, Some(_)) => {
                let error = self
                    .error_as(guard, withheld.as_deref())
                    .unwrap_or_default();
                match self.lua {
                    Some(_) => text.push_str(&format!("\nThe program failed: {error}")),
                    None => text.push_str(&format!("\nThe query failed: {error}")),
                }
            }
            (None, None) => {}
        }
        text
    }

    /// Why its values may not reach a model: as decided under the rules it
    /// was made under (and any it was judged by since), or because
    /// `guard` sends no results, or, for a message no engine reading
    /// decided, because `guard` redacts a column.
    fn withheld_by(&self, guard: &crate::privacy::Guard) -> Option<String> {
        self.withheld.clone().or_else(|| {
            guard
                .withholds(!self.judged && guard.redacts_any())
                .map(String::from)
        })
    }

    /// Keeps what `guard` withholds of it, `read_redacted` being what the
    /// engine said its statements read: once withheld, always withheld.
    pub fn judge(&mut self, guard: &crate::privacy::Guard, read: impl Into<crate::safety::Read>) {
        if self.role == Role::Assistant && self.withheld.is_none() {
            self.withheld = guard.withholds(read).map(String::from);
            self.judged = true;
        }
    }

    /// The statements that read the data: the SQL, or what the program ran.
    pub fn statements_run(&self) -> Vec<&str> {
        match &self.lua {
            Some(_) => self.statements.iter().map(String::as_str).collect(),
            None => self.sql.iter().map(String::as_str).collect(),
        }
    }

    /// What read the data: the SQL, or the program and what it ran.
    fn codes(&self) -> Vec<&str> {
        let mut codes: Vec<&str> = self
            .sql
            .iter()
            .chain(&self.lua)
            .map(String::as_str)
            .collect();
        codes.extend(self.statements.iter().map(String::as_str));
        codes
    }

    /// The answer's error as the model may see it, wherever stored history
    /// is rendered for it: through `guard`, as what ran decides.
    pub fn error_for_model(&self, guard: &crate::privacy::Guard) -> Option<String> {
        self.error_as(guard, self.withheld_by(guard).as_deref())
    }

    /// The error through `guard`, `withheld` already decided.
    fn error_as(&self, guard: &crate::privacy::Guard, withheld: Option<&str>) -> Option<String> {
        let error = self.error.as_deref()?;
        Some(guard.error(&self.codes(), self.lua.is_some(), error, withheld))
    }

    /// RFC 3339 timestamp in UTC, as session files store it.
    pub fn timestamp_text(&self) -> String {
        rfc3339(&self.timestamp)
    }
}

/// A UTC time as session files and `/history` write it: `2026-01-26T10:00:05Z`.
pub fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lua_answer_shows_the_model_its_program_output_and_result() {
        let m = HistoryMessage::assistant("Here:").with_lua(
            "print(1)\naiq.table(aiq.query('SELECT 1 AS x'))",
            Ok((1, "x\n1\n".into(), "1\n".into())),
        );
        let text = m.for_model(&crate::privacy::Guard::default());
        assert!(text.contains("```lua\nprint(1)\naiq.table"), "{text}");
        assert!(text.contains("The program printed:\n1\n"), "{text}");
        assert!(
            text.contains("Result: 1 row (CSV, first rows):\nx\n1"),
            "{text}"
        );
        let quiet = HistoryMessage::assistant("x")
            .with_lua("print(2)", Ok((0, String::new(), "2\n".into())));
        assert_eq!(quiet.row_count, None, "no table, no result");
        let failed =
            HistoryMessage::assistant("x").with_lua("error('no')", Err("program:1: no".into()));
        assert!(failed
            .for_model(&crate::privacy::Guard::default())
            .ends_with("The program failed: program:1: no"));
    }
}
