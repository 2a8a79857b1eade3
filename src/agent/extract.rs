//! Finding the SQL in a model's answer: a `run_sql` tool call, a fenced
//! ```sql block, any fenced block that holds a statement, or an answer that
//! is nothing but a statement. Pure functions.

use crate::llm::ToolCall;

/// The tool the model may call instead of writing a fenced block.
pub const RUN_SQL: &str = "run_sql";

/// Code (SQL, or a program) found in an answer, and the tool call it came
/// from, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub code: String,
    pub tool_call_id: Option<String>,
}

const STATEMENT_STARTS: &[&str] = &[
    "select", "with", "values", "explain", "pragma", "show", "describe", "insert", "update",
    "delete", "create", "drop", "alter",
];

fn looks_like_sql(text: &str) -> bool {
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_start_matches('(')
        .to_ascii_lowercase();
    STATEMENT_STARTS.contains(&first.as_str())
}

fn clean(sql: &str) -> String {
    sql.trim().trim_end_matches(';').trim().to_string()
}

/// Extracts the statement to run from a model answer.
pub fn find_sql(text: &str, tool_calls: &[ToolCall]) -> Option<Found> {
    if let Some((sql, id)) = tool_argument(tool_calls, RUN_SQL, "sql") {
        return Some(Found {
            code: clean(&sql),
            tool_call_id: Some(id),
        });
    }
    let blocks = fenced_blocks(text);
    let chosen = blocks
        .iter()
        .find(|(lang, _)| lang.eq_ignore_ascii_case("sql"))
        .or_else(|| {
            blocks
                .iter()
                .find(|(lang, body)| lang.is_empty() && looks_like_sql(body))
        });
    if let Some((_, body)) = chosen {
        let sql = clean(body);
        return (!sql.is_empty()).then_some(Found {
            code: sql,
            tool_call_id: None,
        });
    }
    let bare = text.trim();
    (blocks.is_empty() && looks_like_sql(bare)).then(|| Found {
        code: clean(bare),
        tool_call_id: None,
    })
}

/// The first call of `tool` whose argument `key` is text that is not
/// blank: that text and the call's id. Calls with arguments that are not
/// JSON are passed over.
pub fn tool_argument(calls: &[ToolCall], tool: &str, key: &str) -> Option<(String, String)> {
    calls.iter().filter(|c| c.name == tool).find_map(|call| {
        let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
        let text = args[key].as_str().filter(|s| !s.trim().is_empty())?;
        Some((text.to_string(), call.id.clone()))
    })
}

/// The fenced blocks of a Markdown text: (language, body).
pub fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let (lang, body_start) = match after.find('\n') {
            Some(nl) => (after[..nl].trim().to_string(), nl + 1),
            None => break,
        };
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                blocks.push((lang, body[..end].to_string()));
                rest = &body[end + 3..];
            }
            None => {
                // An unclosed block (a cut answer) still counts.
                blocks.push((lang, body.to_string()));
                break;
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str) -> Option<String> {
        find_sql(text, &[]).map(|f| f.code)
    }

    #[test]
    fn fenced_sql_block() {
        let t = "Here you go:\n```sql\nSELECT country, count(*)\nFROM customers GROUP BY 1;\n```\nThis counts them.";
        assert_eq!(
            sql(t).as_deref(),
            Some("SELECT country, count(*)\nFROM customers GROUP BY 1")
        );
        assert_eq!(sql("```SQL\nselect 1\n```").as_deref(), Some("select 1"));
    }

    #[test]
    fn first_sql_block_wins_over_other_languages() {
        let t = "```text\nnot this\n```\n```\nSELECT 2\n```\n```sql\nSELECT 3\n```";
        assert_eq!(sql(t).as_deref(), Some("SELECT 3"));
        let t = "```python\nprint(1)\n```\n```\nSELECT 2\n```";
        assert_eq!(sql(t).as_deref(), Some("SELECT 2"));
    }

    #[test]
    fn bare_statement_and_prose() {
        assert_eq!(sql("SELECT 1;").as_deref(), Some("SELECT 1"));
        assert_eq!(sql("The orders table has 5 columns."), None);
        assert_eq!(sql(""), None);
        assert_eq!(sql("```python\nprint(1)\n```"), None);
    }

    #[test]
    fn unclosed_block() {
        assert_eq!(sql("```sql\nSELECT 1").as_deref(), Some("SELECT 1"));
    }

    #[test]
    fn tool_call() {
        let calls = [ToolCall {
            id: "c1".into(),
            name: RUN_SQL.into(),
            arguments: r#"{"sql": "SELECT 4;"}"#.into(),
        }];
        assert_eq!(
            find_sql("ignored ```sql\nSELECT 5\n```", &calls),
            Some(Found {
                code: "SELECT 4".into(),
                tool_call_id: Some("c1".into())
            })
        );
    }
}
