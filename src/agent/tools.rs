//! Helper tools: what the model may call a few times before it answers —
//! to look at tables the request lists by name only (`list_tables`,
//! `describe_tables`), or at earlier turns (`search_history`, `get_turn`,
//! in [`super::history`]). One registry, one loop in [`super::Thread`]: a new
//! tool is a new [`HelperTool`], not a new loop. Models without tool
//! support ask by replying with a fenced block instead (see
//! [`text_request`]).

use serde_json::{json, Value};

use super::extract::fenced_blocks;
use super::history::{Archive, GetTurn, SearchHistory};
use super::HistoryMessage;
use crate::llm::ToolDef;
use crate::privacy::Guard;
use crate::schema::Catalog;

/// How many helper calls a turn may make before the model must answer.
pub const MAX_CALLS: usize = 6;
/// Bytes one call returns at most, however large the model's window
/// (smaller windows give less: see [`ToolContext::room`]).
pub const DESCRIBE_BUDGET: usize = 12_000;
/// Names one `list_tables` call returns at most.
const LIST_LIMIT: usize = 200;

/// What a helper tool may read.
pub struct ToolContext<'a> {
    pub catalog: &'a Catalog,
    /// Every message of the conversation, those cut from the prompt too.
    pub history: &'a [HistoryMessage],
    /// What may leave the machine: results go back through it.
    pub guard: &'a Guard,
    /// Where earlier sessions are, when the conversation keeps them.
    pub archive: Option<&'a Archive>,
    /// Whether a stored statement reads a column whose values stay on the
    /// machine, as the engine reads it now (nothing runs).
    pub reads: &'a dyn Fn(&str) -> bool,
    /// Bytes the result may take: the next request carries it, and it
    /// must fit the model's window.
    pub room: usize,
}

/// A tool the model may call before answering.
pub trait HelperTool: Send {
    fn def(&self) -> ToolDef;
    /// Runs the call; the text goes back to the model (an error too, so it
    /// can correct itself).
    fn call(&self, arguments: &Value, ctx: &ToolContext<'_>) -> String;
}

/// The tools every conversation has.
pub fn standard() -> Vec<Box<dyn HelperTool>> {
    vec![
        Box::new(ListTables),
        Box::new(DescribeTables),
        Box::new(SearchHistory),
        Box::new(GetTurn),
    ]
}

/// `list_tables(pattern?)`: table names (with row estimates), optionally
/// those matching a pattern (`*` and `?` wildcards, or a plain substring).
pub struct ListTables;

impl HelperTool for ListTables {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "list_tables".into(),
            description: "List the database's tables (and views) by name, optionally only those whose names match a pattern such as '*invoice*' or 'pay'.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"pattern": {"type": "string", "description": "a substring, or a pattern with * and ? wildcards"}},
            }),
        }
    }

    fn call(&self, arguments: &Value, ctx: &ToolContext<'_>) -> String {
        let pattern = arguments["pattern"]
            .as_str()
            .unwrap_or("")
            .trim()
            .to_lowercase();
        let matching: Vec<String> = ctx
            .catalog
            .tables
            .iter()
            .filter(|t| pattern.is_empty() || matches(&pattern, &t.name.to_lowercase()))
            .map(|t| match t.row_estimate {
                Some(n) => format!("{} (~{n} rows)", t.name),
                None => t.name.clone(),
            })
            .collect();
        if matching.is_empty() {
            return format!("no table name matches '{pattern}'");
        }
        let mut out = String::new();
        let mut shown = 0;
        for name in matching.iter().take(LIST_LIMIT) {
            if out.len() + name.len() + 1 > ctx.room.saturating_sub(60) {
                break;
            }
            if shown > 0 {
                out.push('\n');
            }
            out.push_str(name);
            shown += 1;
        }
        if matching.len() > shown {
            out.push_str(&format!(
                "\n… and {} more; give a narrower pattern",
                matching.len() - shown
            ));
        }
        out
    }
}

/// `describe_tables(names)`: the tables' columns, types, keys, samples.
pub struct DescribeTables;

impl HelperTool for DescribeTables {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "describe_tables".into(),
            description: "Describe tables: their columns with types, keys, references and sample values. Use it for tables the schema lists by name only.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"names": {"type": "array", "items": {"type": "string"}, "description": "table names"}},
                "required": ["names"],
            }),
        }
    }

    fn call(&self, arguments: &Value, ctx: &ToolContext<'_>) -> String {
        let names: Vec<String> = match &arguments["names"] {
            Value::Array(items) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Value::String(s) => s.split(',').map(|n| n.trim().to_string()).collect(),
            _ => Vec::new(),
        };
        describe(&names, ctx.catalog, ctx.room)
    }
}

/// The descriptions of `names`, within `room` bytes (and
/// [`DESCRIBE_BUDGET`]); unknown names get a suggestion.
pub fn describe(names: &[String], catalog: &Catalog, room: usize) -> String {
    let budget = room.min(DESCRIBE_BUDGET);
    if names.is_empty() {
        return "give the names of the tables to describe".into();
    }
    let mut out = String::new();
    for name in names {
        let name = name.trim();
        match catalog.table(name) {
            Some(t) => {
                let mut text = String::new();
                t.render(catalog.quote(), &mut text);
                if out.len() + text.len() > budget {
                    out.push_str("… (more than fits; ask for fewer tables at a time)\n");
                    break;
                }
                out.push_str(&text);
            }
            None => {
                let near = catalog.did_you_mean(name);
                out.push_str(&format!("-- no table named {name}{near}\n"));
            }
        }
    }
    out
}

/// `*`/`?` wildcards, or a substring when there are none.
fn matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    crate::safety::glob(pattern, name)
}

/// A model without tools asks by replying with a ```tables block naming
/// the tables it wants described; the names, if this reply is such a
/// request (and holds no answer).
pub fn text_request(reply: &str) -> Option<Vec<String>> {
    let blocks = fenced_blocks(reply);
    let asks = blocks
        .iter()
        .find(|(lang, _)| lang.eq_ignore_ascii_case("tables"))?;
    let answers = blocks
        .iter()
        .any(|(lang, _)| !lang.eq_ignore_ascii_case("tables") && !lang.is_empty());
    if answers {
        return None;
    }
    let names: Vec<String> = asks
        .1
        .split([',', '\n'])
        .map(|n| n.trim().trim_matches('`').to_string())
        .filter(|n| !n.is_empty())
        .collect();
    (!names.is_empty()).then_some(names)
}

/// The rule the system prompt adds when some tables are listed by name
/// only.
pub fn how_to_look(with_tools: bool) -> &'static str {
    if with_tools {
        "Some tables are listed by name only: to see their columns before you answer, call describe_tables (list_tables searches table names). Do not guess columns."
    } else {
        "Some tables are listed by name only: to see their columns before you answer, reply with only a ```tables block that names them, one per line, and aiq will describe them. Do not guess columns."
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, Table};

    fn catalog() -> Catalog {
        let t = |name: &str| Table {
            name: name.into(),
            row_estimate: Some(10),
            columns: vec![ColumnInfo {
                name: "id".into(),
                type_name: "INTEGER".into(),
                ..ColumnInfo::default()
            }],
            ..Table::default()
        };
        Catalog {
            engine: "x".into(),
            tables: vec![t("invoice"), t("invoice_line"), t("payment")],
        }
    }

    #[test]
    fn tables_are_listed_and_described() {
        let c = catalog();
        let guard = Guard::default();
        let ctx = ToolContext {
            catalog: &c,
            history: &[],
            guard: &guard,
            archive: None,
            reads: &|_| false,
            room: DESCRIBE_BUDGET,
        };
        assert_eq!(
            ListTables.call(&json!({"pattern": "invoice*"}), &ctx),
            "invoice (~10 rows)\ninvoice_line (~10 rows)"
        );
        assert_eq!(
            ListTables.call(&json!({"pattern": "pay"}), &ctx),
            "payment (~10 rows)"
        );
        assert_eq!(
            ListTables.call(&json!({"pattern": "zzz"}), &ctx),
            "no table name matches 'zzz'"
        );
        let d = DescribeTables.call(&json!({"names": ["payment", "invoyce"]}), &ctx);
        assert_eq!(
            d,
            "table payment (~10 rows)\n  id INTEGER not null\n-- no table named invoyce; did you mean invoice?\n"
        );
        // A small window gets less.
        let small = ToolContext { room: 80, ..ctx };
        let d = DescribeTables.call(&json!({"names": ["invoice", "invoice_line"]}), &small);
        assert!(d.contains("table invoice "), "{d}");
        assert!(d.contains("more than fits"), "{d}");
        assert!(!d.contains("invoice_line"), "{d}");
        let l = ListTables.call(&json!({}), &ToolContext { room: 90, ..small });
        assert!(l.starts_with("invoice (~10 rows)\n… and 2 more"), "{l}");
    }

    #[test]
    fn models_without_tools_ask_with_a_block() {
        assert_eq!(
            text_request("I need more detail:\n```tables\ninvoice\ninvoice_line\n```"),
            Some(vec!["invoice".to_string(), "invoice_line".to_string()])
        );
        assert_eq!(text_request("```sql\nSELECT 1\n```"), None);
        assert_eq!(
            text_request("```tables\na\n```\n```sql\nSELECT 1\n```"),
            None
        );
    }
}
