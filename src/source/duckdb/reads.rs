//! What a statement reads, as DuckDB binds it (SPEC §4.3): which columns of
//! which tables, through views, `*`, `COLUMNS(…)`, positions (`#3`), the
//! row as a value, CTEs and subqueries alike.
//!
//! The bound plan before the optimizer (`json_serialize_plan(…, optimize :=
//! false)`) names each table scan and the columns the binder asked of it;
//! it depends on the schema only, never on the data, so whether a result is
//! withheld says nothing about the values (an optimized plan can drop a
//! scan that statistics prove empty). A plan DuckDB cannot serialize (a
//! CSV scan) is read from `EXPLAIN`, whose scans of files have no
//! statistics to prune by; a plan that still shows pruning by statistics
//! counts as unknown.

use duckdb::Connection;
use serde_json::Value as Json;

use crate::safety::{add_read as add, ColumnRead};

/// The columns `sql` reads on `conn`, or `None` when DuckDB cannot say.
pub(crate) fn columns_read(conn: &Connection, sql: &str) -> Option<Vec<ColumnRead>> {
    let bound: Option<String> = conn
        .query_row(
            "SELECT json_serialize_plan(?::VARCHAR, optimize := false)",
            [sql],
            |r| r.get(0),
        )
        .ok();
    if let Some(plan) = bound.and_then(|text| serde_json::from_str::<Json>(&text).ok()) {
        if plan.get("error") == Some(&Json::Bool(false)) {
            let mut out = Vec::new();
            bound_gets(&plan, &mut out);
            return Some(out);
        }
        // It does not parse or bind: it fails the same way when it runs,
        // before it reads anything (the message names, never holds values).
        let kind = plan.get("error_type").and_then(Json::as_str);
        if matches!(kind, Some("binder" | "catalog" | "parser")) {
            return Some(Vec::new());
        }
    }
    let explained: String = conn
        .query_row(&format!("EXPLAIN (FORMAT JSON) {sql}"), [], |r| r.get(1))
        .ok()?;
    let plan: Json = serde_json::from_str(&explained).ok()?;
    let mut out = Vec::new();
    scans(&plan, &mut out).then_some(out)
}

/// The columns of every `LOGICAL_GET` of a bound plan: a table's by name, a
/// file's or a table function's by column alone.
fn bound_gets(node: &Json, out: &mut Vec<ColumnRead>) {
    match node {
        Json::Object(map) => {
            // Values the binder took from the catalog (`DESCRIBE`, `SHOW`:
            // types with their labels, defaults, every column's name) or
            // an enum type's labels (`enum_range(NULL::tier)`): anything.
            let node = map.get("type").and_then(Json::as_str);
            let function = map.get("name").and_then(Json::as_str).filter(|_| {
                map.get("expression_class").and_then(Json::as_str) == Some("BOUND_FUNCTION")
            });
            if node == Some("LOGICAL_CHUNK_GET") || function.is_some_and(|f| f.starts_with("enum_"))
            {
                add(out, "*", "*");
            }
            // A table function that describes the catalog (`pragma_table_info`,
            // `duckdb_columns()`): types with labels, defaults, every name.
            let get_name = map.get("name").and_then(Json::as_str).unwrap_or("");
            let describes = [
                "pragma_",
                "duckdb_",
                "show",
                "table_info",
                "describe",
                "summary",
            ]
            .iter()
            .any(|p| get_name.starts_with(p));
            if node == Some("LOGICAL_GET") && describes {
                add(out, "*", "*");
            }
            if node == Some("LOGICAL_GET") {
                let table = map
                    .get("function_data")
                    .and_then(|d| Some((d.get("schema")?.as_str()?, d.get("table")?.as_str()?)))
                    .map(|(schema, table)| qualified(schema, table))
                    .unwrap_or_else(|| "*".to_string());
                let names: Vec<&str> = map
                    .get("names")
                    .and_then(Json::as_array)
                    .map(|n| n.iter().filter_map(Json::as_str).collect())
                    .unwrap_or_default();
                let indexes = map.get("column_indexes").and_then(Json::as_array);
                for index in indexes.into_iter().flatten() {
                    let at = index
                        .get("index")
                        .and_then(Json::as_u64)
                        .unwrap_or(u64::MAX);
                    // Past the names: the row id.
                    if let Some(name) = usize::try_from(at).ok().and_then(|i| names.get(i)) {
                        add(out, &table, name);
                    }
                }
            }
            for value in map.values() {
                bound_gets(value, out);
            }
        }
        Json::Array(items) => items.iter().for_each(|v| bound_gets(v, out)),
        _ => {}
    }
}

/// The columns every scan of an `EXPLAIN (FORMAT JSON)` plan reads: its
/// projections and its filters' words. False when the plan shows what
/// statistics pruned (an empty result where a scan was).
fn scans(node: &Json, out: &mut Vec<ColumnRead>) -> bool {
    match node {
        Json::Object(map) => {
            if map.get("name").and_then(Json::as_str) == Some("EMPTY_RESULT") {
                return false;
            }
            if let Some(info) = map.get("extra_info").and_then(Json::as_object) {
                let scan = info.contains_key("Table") || info.contains_key("Function");
                if scan {
                    let table = info
                        .get("Table")
                        .and_then(Json::as_str)
                        .map(|t| {
                            let mut parts = t.rsplitn(3, '.');
                            let table = parts.next().unwrap_or(t);
                            qualified(parts.next().unwrap_or("main"), table)
                        })
                        .unwrap_or_else(|| "*".to_string());
                    for key in ["Projections", "Filters"] {
                        for text in strings(info.get(key)) {
                            for word in words(text) {
                                add(out, &table, &word);
                            }
                        }
                    }
                }
            }
            map.get("children")
                .and_then(Json::as_array)
                .is_none_or(|children| children.iter().all(|c| scans(c, out)))
        }
        Json::Array(items) => items.iter().all(|v| scans(v, out)),
        _ => true,
    }
}

/// A text field of `EXPLAIN`'s JSON: one string or a list of them.
fn strings(value: Option<&Json>) -> Vec<&str> {
    match value {
        Some(Json::String(s)) => vec![s.as_str()],
        Some(Json::Array(items)) => items.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The names in an expression as `EXPLAIN` prints it: every run of word
/// characters and every double-quoted name (a word that is a function or a
/// value's part counts too: it can only add to what is read).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '"' {
            let rest = &text[i + 1..];
            let end = rest.find('"').unwrap_or(rest.len());
            out.push(rest[..end].to_lowercase());
            for _ in 0..rest[..end].chars().count() + 1 {
                chars.next();
            }
        } else if c.is_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(text[i..end].to_lowercase());
        }
    }
    out
}

/// A table as the catalog names it: bare in `main`, else `schema.table`.
fn qualified(schema: &str, table: &str) -> String {
    if schema.is_empty() || schema.eq_ignore_ascii_case("main") {
        table.to_lowercase()
    } else {
        format!("{schema}.{table}").to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE customers(id INT, name TEXT, email TEXT, ssn TEXT);
             INSERT INTO customers VALUES (1, 'Ann', 'a@x.test', '111');
             CREATE VIEW contacts AS SELECT name, email AS contact FROM customers;
             CREATE SCHEMA hr; CREATE TABLE hr.pay(id INT, amount INT);",
        )
        .unwrap();
        conn
    }

    fn columns(conn: &Connection, sql: &str) -> Vec<String> {
        let mut v: Vec<String> = columns_read(conn, sql)
            .unwrap_or_else(|| panic!("no reading of {sql}"))
            .into_iter()
            .map(|(t, c)| format!("{t}.{c}"))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn every_shape_names_the_columns_it_reads() {
        let conn = database();
        let all = [
            "customers.email",
            "customers.id",
            "customers.name",
            "customers.ssn",
        ];
        for sql in [
            "SELECT ALL * FROM customers",
            "FROM customers",
            "SELECT c FROM customers c",
            "SELECT customers FROM customers",
            "SELECT to_json(c) FROM customers c",
            "SELECT COLUMNS(*) FROM customers",
            "WITH x AS (FROM customers) SELECT ALL * FROM x",
            "SUMMARIZE customers",
        ] {
            assert_eq!(columns(&conn, sql), all, "{sql}");
        }
        for sql in [
            "SELECT #3 FROM customers",
            "SELECT COLUMNS('^e') FROM customers",
            "SELECT e FROM customers AS t(i, n, e)",
            "SELECT c['email'] FROM customers c",
            "SELECT count(*) FROM customers WHERE email = 'nobody'",
            "SELECT (SELECT max(email) FROM customers)",
            "SELECT 1 FROM customers WHERE email --\r= 'x'",
        ] {
            assert!(
                columns(&conn, sql).contains(&"customers.email".to_string()),
                "{sql}"
            );
        }
        assert_eq!(
            columns(&conn, "SELECT count(*) FROM customers"),
            Vec::<String>::new()
        );
        // What does not bind reads nothing: it fails before it runs.
        assert_eq!(
            columns(&conn, "SELECT emal FROM customers"),
            Vec::<String>::new()
        );
        // DuckDB's block comments nest: as it reads this, only `id`.
        assert_eq!(
            columns(&conn, "SELECT id /* /* */, email -- */ FROM customers"),
            ["customers.id"]
        );
        assert_eq!(
            columns(&conn, "SELECT name FROM customers"),
            ["customers.name"]
        );
        assert_eq!(
            columns(&conn, "SELECT sum(amount) FROM hr.pay"),
            ["hr.pay.amount"]
        );
        // What the binder takes from the catalog: anything.
        for sql in [
            "DESCRIBE customers",
            "SHOW customers",
            "SELECT * FROM (DESCRIBE SELECT * FROM customers)",
        ] {
            assert!(columns(&conn, sql).contains(&"*.*".to_string()), "{sql}");
        }
        // A view: the columns its query reads.
        assert_eq!(
            columns(&conn, "SELECT * FROM contacts"),
            ["customers.email", "customers.name"]
        );
    }

    #[test]
    fn a_csv_file_is_read_from_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, "id,name,email\n1,Ann,a@x.test\n").unwrap();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE VIEW people AS SELECT * FROM read_csv('{}')",
            csv.display()
        ))
        .unwrap();
        assert_eq!(columns(&conn, "SELECT name FROM people"), ["*.name"]);
        let filtered = columns(&conn, "SELECT name FROM people WHERE email LIKE 'a%'");
        assert!(filtered.contains(&"*.email".to_string()), "{filtered:?}");
        assert_eq!(
            columns(&conn, "SELECT count(*) FROM people"),
            Vec::<String>::new()
        );
    }
}
