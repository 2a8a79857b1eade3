//! What a statement reads on a server, as the server's own reading of it
//! shows (SPEC §4.3), for the privacy of results:
//!
//! - PostgreSQL: `EXPLAIN (VERBOSE, FORMAT JSON)`. Each scan names its
//!   relation and alias, and every expression it computes or filters by is
//!   printed with its columns (`c.email`, the row as `c.*`); views are
//!   expanded to their tables by the rewriter. A name the table does not
//!   have (an alias list's `e`) counts as any of its columns.
//! - MySQL and MariaDB: the server's own rewrite of the statement (`EXPLAIN
//!   [EXTENDED]`, then its note 1003), with comments gone, `*` expanded and
//!   every column named in backquotes; a table the optimizer read while it
//!   planned (a `const` table, whose values it substitutes) counts as read
//!   whole.

use serde_json::Value as Json;

use crate::safety::{add_read as add, ColumnRead};

/// Words of PostgreSQL's printed expressions that are not column names.
const PG_WORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "is",
    "null",
    "true",
    "false",
    "case",
    "when",
    "then",
    "else",
    "end",
    "any",
    "all",
    "array",
    "like",
    "ilike",
    "in",
    "between",
    "similar",
    "to",
    "distinct",
    "from",
    "as",
    "asc",
    "desc",
    "nulls",
    "first",
    "last",
    "collate",
    "using",
    "unknown",
    "row",
    "current_date",
    "current_timestamp",
    "localtimestamp",
    "current_user",
    "session_user",
    "interval",
    "at",
    "time",
    "zone",
    "with",
    "without",
    "escape",
    "some",
    "over",
    "partition",
    "by",
    "order",
    "filter",
    "where",
    "within",
    "group",
    "default",
    "on",
    "for",
    "of",
];

/// The keys of a plan node that are labels, not expressions.
const PG_LABELS: &[&str] = &[
    "Node Type",
    "Relation Name",
    "Schema",
    "Alias",
    "Parent Relationship",
    "Strategy",
    "Partial Mode",
    "Index Name",
    "Join Type",
    "Subplan Name",
    "CTE Name",
    "Function Name",
    "Scan Direction",
    "Command",
    "Operation",
    "Sort Method",
    "Setop",
];

/// The columns a PostgreSQL plan (`EXPLAIN (VERBOSE, FORMAT JSON)`'s text)
/// reads; `None` when it is not one, or it calls one of `own` (functions
/// the database defines, whose bodies the plan does not show).
pub(crate) fn postgres_plan(text: &str, own: &[String]) -> Option<Vec<ColumnRead>> {
    let plan: Json = serde_json::from_str(text).ok()?;
    let mut aliases = Vec::new();
    collect_aliases(&plan, &mut aliases);
    let mut out = Vec::new();
    pg_node(&plan, &aliases, own, &mut out).then_some(out)
}

/// Every scan's alias with the relation it reads (`schema.table`).
fn collect_aliases(node: &Json, out: &mut Vec<(String, String)>) {
    match node {
        Json::Object(map) => {
            if let (Some(rel), Some(alias)) = (
                map.get("Relation Name").and_then(Json::as_str),
                map.get("Alias").and_then(Json::as_str),
            ) {
                let schema = map.get("Schema").and_then(Json::as_str).unwrap_or("");
                out.push((alias.to_lowercase(), qualified(schema, rel)));
            }
            map.values().for_each(|v| collect_aliases(v, out));
        }
        Json::Array(items) => items.iter().for_each(|v| collect_aliases(v, out)),
        _ => {}
    }
}

fn pg_node(
    node: &Json,
    aliases: &[(String, String)],
    own: &[String],
    out: &mut Vec<ColumnRead>,
) -> bool {
    match node {
        Json::Object(map) => {
            let relation = map
                .get("Relation Name")
                .and_then(Json::as_str)
                .map(|rel| qualified(map.get("Schema").and_then(Json::as_str).unwrap_or(""), rel));
            for (key, value) in map {
                if PG_LABELS.contains(&key.as_str()) {
                    continue;
                }
                let texts: Vec<&str> = match value {
                    Json::String(s) => vec![s.as_str()],
                    Json::Array(items) => items.iter().filter_map(Json::as_str).collect(),
                    _ => Vec::new(),
                };
                for text in texts {
                    let Some(refs) = pg_references(text, own) else {
                        return false;
                    };
                    for (qualifier, column) in refs {
                        let table = match &qualifier {
                            Some(q) => aliases
                                .iter()
                                .find(|(a, _)| a == q)
                                .map(|(_, r)| r.clone())
                                .unwrap_or_else(|| "*".into()),
                            None => relation.clone().unwrap_or_else(|| "*".into()),
                        };
                        add(out, &table, &column);
                    }
                }
            }
            map.values()
                .filter(|v| v.is_object() || v.is_array())
                .all(|v| pg_node(v, aliases, own, out))
        }
        Json::Array(items) => items.iter().all(|v| pg_node(v, aliases, own, out)),
        _ => true,
    }
}

/// The column references of one printed expression: `(qualifier,
/// column)`, `*` for the row as a value; skipping string literals, type
/// names after `::`, function names and keywords. `None` when it calls
/// one of `own`.
fn pg_references(text: &str, own: &[String]) -> Option<Vec<(Option<String>, String)>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // The names of a dotted path as it is read: `c`, `email` of `c.email`.
    let mut path: Vec<String> = Vec::new();
    let mut after_cast = false;
    let flush = |path: &mut Vec<String>, out: &mut Vec<(Option<String>, String)>, call: bool| {
        let names = std::mem::take(path);
        if call || names.is_empty() {
            return;
        }
        match names.as_slice() {
            [one] if PG_WORDS.contains(&one.as_str()) => {}
            [one] => out.push((None, one.clone())),
            [.., q, c] => out.push((Some(q.clone()), c.clone())),
            [] => {}
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            flush(&mut path, &mut out, false);
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i += 1;
        } else if c == '"' || c.is_alphabetic() || c == '_' {
            let name = if c == '"' {
                let mut name = String::new();
                i += 1;
                while i < chars.len() {
                    if chars[i] == '"' {
                        if chars.get(i + 1) == Some(&'"') {
                            name.push('"');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    name.push(chars[i]);
                    i += 1;
                }
                i += 1;
                name.to_lowercase()
            } else {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
                {
                    i += 1;
                }
                chars[start..i].iter().collect::<String>().to_lowercase()
            };
            if after_cast {
                // A type name (`::text`, `::character varying`).
                after_cast = false;
                continue;
            }
            path.push(name);
            if chars.get(i) == Some(&'.') {
                i += 1;
                if chars.get(i) == Some(&'*') {
                    i += 1;
                    path.push("*".into());
                    flush(&mut path, &mut out, false);
                }
                continue;
            }
            let mut j = i;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            let call = chars.get(j) == Some(&'(');
            if call {
                let called = path.last().cloned().unwrap_or_default();
                if own.contains(&called) {
                    return None;
                }
            }
            flush(&mut path, &mut out, call);
        } else if c.is_ascii_digit() {
            flush(&mut path, &mut out, false);
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else {
            flush(&mut path, &mut out, false);
            if c == ':' && chars.get(i + 1) == Some(&':') {
                after_cast = true;
                i += 2;
                continue;
            }
            if !c.is_whitespace() {
                after_cast = false;
            }
            i += 1;
        }
    }
    flush(&mut path, &mut out, false);
    Some(out)
}

/// The columns MySQL's or MariaDB's rewrite of a statement (the note 1003
/// `EXPLAIN` leaves) reads: every backquoted name, as a column of a table
/// it does not name (the rewrite qualifies columns by alias); with every
/// table the plan (`EXPLAIN`'s rows: `table`, `type`, `Extra`) says the
/// optimizer read while planning counted whole.
pub(crate) fn mysql_rewrite(note: &str, plan: &[(String, String, String)]) -> Vec<ColumnRead> {
    let mut out = Vec::new();
    let mut rest = note;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let mut name = String::new();
        let mut end = after.len();
        let mut chars = after.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().is_some_and(|&(_, d)| d == '`') {
                    name.push('`');
                    chars.next();
                    continue;
                }
                end = i + 1;
                break;
            }
            name.push(c);
        }
        add(&mut out, "*", &name);
        rest = &after[end.min(after.len())..];
    }
    for (table, kind, extra) in plan {
        let extra = extra.to_lowercase();
        let planned = matches!(kind.to_lowercase().as_str(), "const" | "system")
            || extra.contains("const")
            || extra.contains("optimized away");
        if planned {
            add(&mut out, "*", "*");
            let _ = table;
        }
    }
    out
}

/// A table as the catalog names it: bare in `public`, else `schema.table`.
fn qualified(schema: &str, table: &str) -> String {
    if schema.is_empty() || schema == "public" {
        table.to_lowercase()
    } else {
        format!("{schema}.{table}").to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(alias: &str, output: &[&str], filter: Option<&str>) -> String {
        let mut node = serde_json::json!({
            "Node Type": "Seq Scan", "Relation Name": "customers", "Schema": "public",
            "Alias": alias, "Output": output,
        });
        if let Some(f) = filter {
            node["Filter"] = f.into();
        }
        serde_json::json!([{"Plan": node}]).to_string()
    }

    fn pairs(read: Vec<ColumnRead>) -> Vec<String> {
        let mut v: Vec<String> = read.into_iter().map(|(t, c)| format!("{t}.{c}")).collect();
        v.sort();
        v
    }

    #[test]
    fn a_plan_names_what_each_scan_reads() {
        let read = |plan: String| pairs(postgres_plan(&plan, &[]).unwrap());
        assert_eq!(read(scan("c", &["c.*"], None)), ["customers.*"]);
        assert_eq!(
            read(scan("c", &["row_to_json(c.*)"], None)),
            ["customers.*"]
        );
        assert_eq!(read(scan("t", &["e"], None)), ["customers.e"]);
        assert_eq!(
            read(scan("c", &["name"], Some("(c.email = 'a@x.test'::text)"))),
            ["customers.email", "customers.name"]
        );
        assert_eq!(
            read(scan("c", &["lower((c.\"E-mail\")::text)"], None)),
            ["customers.e-mail"]
        );
        assert_eq!(
            read(scan("c", &["count(*)"], Some("(c.id IS NOT NULL)"))),
            ["customers.id"]
        );
        // A function the database defines: its body is not in the plan.
        assert!(postgres_plan(&scan("c", &["mask(c.name)"], None), &["mask".into()]).is_none());
        assert!(postgres_plan("not json", &[]).is_none());
    }

    #[test]
    fn a_rewrite_names_every_column_and_what_planning_read() {
        let note = "/* select#1 */ select `crm`.`c`.`id` AS `id`,`crm`.`c`.`e``x` AS `ex` from `crm`.`customers` `c`";
        let read = pairs(mysql_rewrite(note, &[]));
        for name in ["*.crm", "*.c", "*.id", "*.e`x", "*.ex", "*.customers"] {
            assert!(read.contains(&name.to_string()), "{name}: {read:?}");
        }
        let planned = [("c".to_string(), "const".to_string(), String::new())];
        assert!(pairs(mysql_rewrite("select 'x' AS `e`", &planned)).contains(&"*.*".to_string()));
    }
}
