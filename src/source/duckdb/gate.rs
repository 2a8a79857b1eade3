//! DuckDB's own reading of a statement (SPEC §4.2): DuckDB's parser splits
//! the text (`duckdb_extract_statements`), and the parse tree of the one
//! statement (`json_serialize_sql`) says which tables it reads and which
//! functions it calls. A private in-memory database does the parsing, so
//! reading a statement never binds or runs anything on the source.
//!
//! `CALL f(…)`, `PRAGMA name(…)` and `EXPLAIN …` are read through the query
//! DuckDB runs for them (`SELECT * FROM f(…)`, `pragma_name(…)`, the
//! explained statement); any other statement that is no query is a write
//! to DuckDB, and what it calls is left to the first pass.

use std::ffi::{CStr, CString};

use duckdb::ffi;
use serde_json::Value as Json;

use crate::safety::{EngineReading, TABLE_NAMING_FUNCTIONS};

/// A private in-memory DuckDB that only parses.
pub(crate) struct DuckGate {
    /// Declared first: closed before the database below.
    json: duckdb::Connection,
    con: ffi::duckdb_connection,
    db: ffi::duckdb_database,
}

// The handles belong to this value alone and are used from one thread at
// a time (the source that owns it is `Send`, not `Sync`).
unsafe impl Send for DuckGate {}

impl Drop for DuckGate {
    fn drop(&mut self) {
        // SAFETY: both handles were opened in `open` and are closed once.
        unsafe {
            ffi::duckdb_disconnect(&mut self.con);
            ffi::duckdb_close(&mut self.db);
        }
    }
}

impl DuckGate {
    pub(crate) fn open() -> Result<DuckGate, String> {
        let fail = || "cannot start DuckDB's parser for the safety check".to_string();
        let mut db: ffi::duckdb_database = std::ptr::null_mut();
        let mut con: ffi::duckdb_connection = std::ptr::null_mut();
        // SAFETY: out-pointers to fresh handles; closed in `Drop` (or here on failure).
        unsafe {
            if ffi::duckdb_open(std::ptr::null(), &mut db) != ffi::DuckDBSuccess {
                return Err(fail());
            }
            if ffi::duckdb_connect(db, &mut con) != ffi::DuckDBSuccess {
                ffi::duckdb_close(&mut db);
                return Err(fail());
            }
        }
        // SAFETY: `db` is open and outlives this connection (see `Drop`).
        let json = match unsafe { duckdb::Connection::open_from_raw(db) } {
            Ok(json) => json,
            Err(_) => {
                // SAFETY: opened just above, closed once.
                unsafe {
                    ffi::duckdb_disconnect(&mut con);
                    ffi::duckdb_close(&mut db);
                }
                return Err(fail());
            }
        };
        let gate = DuckGate { json, con, db };
        gate.json
            .execute_batch("SET enable_external_access = false; SET lock_configuration = true;")
            .map_err(|_| fail())?;
        Ok(gate)
    }

    /// How many statements DuckDB's parser finds in `sql`, or its message.
    pub(crate) fn count(&self, sql: &str) -> Result<usize, String> {
        let text = CString::new(sql).map_err(|_| {
            "the statement holds a NUL character, which aiq does not run".to_string()
        })?;
        let mut extracted: ffi::duckdb_extracted_statements = std::ptr::null_mut();
        // SAFETY: a valid connection and NUL-terminated text; the result is
        // destroyed before returning.
        unsafe {
            let n = ffi::duckdb_extract_statements(self.con, text.as_ptr(), &mut extracted);
            let result = if n > 0 {
                Ok(n as usize)
            } else {
                let e = ffi::duckdb_extract_statements_error(extracted);
                if e.is_null() {
                    Ok(0)
                } else {
                    Err(CStr::from_ptr(e).to_string_lossy().into_owned())
                }
            };
            ffi::duckdb_destroy_extracted(&mut extracted);
            result
        }
    }

    /// The statements of `sql` that come from its text. DuckDB's parser
    /// also adds statements of its own: a `PIVOT` without an `IN` list
    /// first makes a type of the pivot's values. Those count as part of the
    /// one statement only when DuckDB can read no statement boundary in
    /// the text, and the text is lexed alike by DuckDB and the first pass
    /// (no carriage return, backslash, `$` or block comment).
    pub(crate) fn statements(&self, sql: &str) -> Result<usize, String> {
        self.split(sql).map(|(from_text, _)| from_text)
    }

    /// The statements from the text, and all DuckDB will run.
    fn split(&self, sql: &str) -> Result<(usize, usize), String> {
        let n = self.count(sql)?;
        if n <= 1 || sql.contains(['\r', '\\', '$']) || sql.contains("/*") {
            return Ok((n, n));
        }
        let boundary = sql.char_indices().any(|(i, c)| {
            c == ';'
                && !sql[..i].trim().is_empty()
                && matches!(self.count(&sql[..i]), Ok(k) if k >= 1)
        });
        Ok(if boundary { (n, n) } else { (1, n) })
    }

    /// What DuckDB reads in `sql`: its statements, and for one statement
    /// that is a query, the tables and functions of its parse tree.
    pub(crate) fn read(&self, sql: &str) -> Result<EngineReading, String> {
        let (kind, query) = query_form(sql);
        // A plain query: one parse says it all. `json_serialize_sql` parses
        // the text with the same parser as `duckdb_extract_statements` and
        // gives a tree only when that finds exactly one statement, a query.
        if let Form::Query(text) = &query {
            if text == sql {
                if let Some(tree) = self.tree(sql)? {
                    let mut reading = EngineReading {
                        statements: 1,
                        statement: sql.to_string(),
                        writes: false,
                        query: true,
                        kind,
                        ..EngineReading::default()
                    };
                    walk_tree(&tree, &mut reading);
                    return Ok(reading);
                }
            }
        }
        let (statements, all) = self.split(sql)?;
        let mut reading = EngineReading {
            statements,
            statement: sql.to_string(),
            // DuckDB's own added statements (a PIVOT's type) change nothing
            // of the source; what the PIVOT reads is left to the first pass.
            writes: all == statements,
            added: all.saturating_sub(statements),
            kind,
            ..EngineReading::default()
        };
        if statements != 1 || all != 1 {
            return Ok(reading);
        }
        match &query {
            // The same text had no tree above.
            Form::Query(text) if text == sql => {}
            Form::Query(text) => {
                if let Some(tree) = self.tree(text)? {
                    reading.writes = false;
                    reading.query = true;
                    walk_tree(&tree, &mut reading);
                }
            }
            Form::Setting(name) => {
                // `PRAGMA name = value` or another form: engine state.
                reading.calls.push(name.clone());
                reading.table_calls.push(format!("pragma_{name}"));
            }
        }
        Ok(reading)
    }

    /// The parse tree of the query `sql` runs: itself, or what it
    /// explains; `None` for other statements and text DuckDB cannot parse.
    pub(crate) fn query_tree(&self, sql: &str) -> Option<Json> {
        match query_form(sql).1 {
            Form::Query(text) => self.tree(&text).ok().flatten(),
            Form::Setting(_) => None,
        }
    }

    /// The parse tree of `sql` when it is exactly one query; `None` for
    /// other statements.
    fn tree(&self, sql: &str) -> Result<Option<Json>, String> {
        let mut stmt = self
            .json
            // Empty lists and NULL fields say nothing the walk needs, and
            // leaving them out makes a third less JSON to read.
            .prepare_cached(
                "SELECT json_serialize_sql(?::VARCHAR, skip_empty := true, skip_null := true)",
            )
            .map_err(|e| e.to_string())?;
        let text: String = stmt
            .query_row([sql], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        let tree: Json = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if tree.get("error").and_then(Json::as_bool) != Some(false) {
            return Ok(None);
        }
        match tree.get("statements").and_then(Json::as_array) {
            Some(list) if list.len() == 1 => Ok(Some(list[0].clone())),
            _ => Ok(None),
        }
    }
}

/// How a statement is read: through a query, or as an engine setting.
enum Form {
    /// The query text whose tree says what the statement does.
    Query(String),
    /// A `PRAGMA` that is no table function: the pragma's name.
    Setting(String),
}

/// The statement's kind by its first word, and the query DuckDB runs for
/// it. Only plain leading keywords are recognized (no comment before
/// them); anything else is read as itself.
fn query_form(sql: &str) -> (String, Form) {
    let text = sql.trim_start();
    let (first, rest) = split_word(text);
    let kind = if first.is_empty() {
        "statement".to_string()
    } else {
        first.to_ascii_uppercase()
    };
    let form = match kind.as_str() {
        "CALL" => Form::Query(format!("SELECT * FROM {rest}")),
        "EXPLAIN" => {
            let (second, after) = split_word(rest.trim_start());
            if second.eq_ignore_ascii_case("analyze") {
                Form::Query(after.to_string())
            } else {
                Form::Query(rest.to_string())
            }
        }
        "PRAGMA" => pragma_form(rest),
        _ => Form::Query(sql.to_string()),
    };
    (kind, form)
}

/// `PRAGMA name` and `PRAGMA name(args)` are the table function
/// `pragma_name`; anything else (`PRAGMA name = value`) is a setting.
fn pragma_form(rest: &str) -> Form {
    let (name, after) = split_word(rest.trim_start());
    let name = name.to_ascii_lowercase();
    if name.is_empty() {
        return Form::Setting("pragma".into());
    }
    let after = after.trim_start();
    let tail = after.trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if tail.is_empty() {
        Form::Query(format!("SELECT * FROM pragma_{name}()"))
    } else if tail.starts_with('(') {
        Form::Query(format!("SELECT * FROM pragma_{name}{tail}"))
    } else {
        Form::Setting(name)
    }
}

/// The leading word (letters, digits, `_`) and the text after it.
fn split_word(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    text.split_at(end)
}

/// Collects what a parse tree reads and calls into `reading`.
fn walk_tree(tree: &Json, reading: &mut EngineReading) {
    let mut reads = Vec::new();
    let mut known = true;
    walk(tree, reading, &mut reads, &mut known);
    reading.reads = known.then_some(reads);
}

fn walk(node: &Json, reading: &mut EngineReading, reads: &mut Vec<String>, known: &mut bool) {
    match node {
        Json::Array(items) => {
            for item in items {
                walk(item, reading, reads, known);
            }
        }
        Json::Object(map) => {
            let field = |k: &str| map.get(k).and_then(Json::as_str).unwrap_or("");
            match field("type") {
                "BASE_TABLE" => reads.push(qualified(field("schema_name"), field("table_name"))),
                "TABLE_FUNCTION" => {
                    if let Some(function) = map.get("function") {
                        table_function(function, reading, reads, known);
                    }
                }
                "SHOW_REF" if map.get("query").is_none_or(Json::is_null) => {
                    let listing = field("table_name").trim_matches(['"', '_']).to_lowercase();
                    if listing.starts_with("show_") {
                        reading.table_calls.push(listing);
                    } else {
                        reading.table_calls.push(format!("show_{listing}"));
                    }
                }
                _ => {}
            }
            if field("class") == "FUNCTION" {
                reading.calls.push(field("function_name").to_lowercase());
            }
            for value in map.values() {
                walk(value, reading, reads, known);
            }
        }
        _ => {}
    }
}

/// A table function: its name, and for one that describes a table given
/// by name, that table (a name that is not a constant cannot be known).
fn table_function(
    function: &Json,
    reading: &mut EngineReading,
    reads: &mut Vec<String>,
    known: &mut bool,
) {
    let name = function
        .get("function_name")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_lowercase();
    if TABLE_NAMING_FUNCTIONS.contains(&name.as_str()) {
        let first = function
            .get("children")
            .and_then(Json::as_array)
            .and_then(|c| c.first());
        match first.and_then(named_table) {
            Some(table) => reads.push(table),
            None => *known = false,
        }
    }
    reading.table_calls.push(name);
}

/// The table a constant string (`'orders'`) or a bare name (`orders`) names.
fn named_table(arg: &Json) -> Option<String> {
    match arg.get("class").and_then(Json::as_str)? {
        "CONSTANT" => arg
            .get("value")
            .and_then(|v| v.get("value"))
            .and_then(Json::as_str)
            .map(str::to_lowercase),
        "COLUMN_REF" => Some(column_names(arg)?.join(".").to_lowercase()),
        _ => None,
    }
}

/// The name parts of a column reference in a parse tree (`["s", "year"]`).
pub(crate) fn column_names(expr: &Json) -> Option<Vec<&str>> {
    Some(
        expr.get("column_names")?
            .as_array()?
            .iter()
            .filter_map(Json::as_str)
            .collect(),
    )
}

fn qualified(schema: &str, table: &str) -> String {
    if schema.is_empty() {
        table.to_lowercase()
    } else {
        format!("{schema}.{table}").to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sql: &str) -> EngineReading {
        DuckGate::open().unwrap().read(sql).unwrap()
    }

    #[test]
    fn duckdb_splits_where_its_lexer_does() {
        let gate = DuckGate::open().unwrap();
        assert_eq!(gate.count("SELECT 1 --\r; SELECT * FROM payroll"), Ok(2));
        assert_eq!(
            gate.count("SELECT E'\\'' ; SELECT * FROM payroll; --'"),
            Ok(2)
        );
        assert_eq!(gate.count("SELECT 'a;b' -- ;\n"), Ok(1));
        assert!(gate.count("SELECT FROM WHERE").is_err());
    }

    #[test]
    fn statements_duckdb_adds_for_a_pivot_are_part_of_it() {
        let gate = DuckGate::open().unwrap();
        let pivot = "PIVOT (SELECT 'a' AS s) ON s USING count(*)";
        assert_eq!(gate.count(pivot), Ok(2));
        assert_eq!(gate.statements(pivot), Ok(1));
        for smuggled in [
            format!("{pivot}; SELECT * FROM payroll"),
            format!("{pivot} --\r; SELECT * FROM payroll"),
            "PIVOT (SELECT 'a' AS s) ON s IN ('a') USING count(*) --\r; SELECT * FROM payroll"
                .to_string(),
            format!("{pivot} /* ; */"),
        ] {
            assert!(gate.statements(&smuggled).unwrap() > 1, "{smuggled:?}");
        }
    }

    #[test]
    fn a_query_says_what_it_reads_and_calls() {
        let r = read(
            "WITH x AS (SELECT * FROM orders) SELECT upper(name) FROM customers JOIN x ON true",
        );
        assert!(r.query && !r.writes);
        let reads = r.reads.unwrap();
        assert!(reads.contains(&"orders".to_string()) && reads.contains(&"customers".to_string()));
        assert!(r.calls.contains(&"upper".to_string()));
        let r = read("SELECT * FROM enable_logging(storage = 'file')");
        assert_eq!(r.table_calls, ["enable_logging"]);
        let r = read("SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))");
        assert!(r
            .table_calls
            .contains(&"json_execute_serialized_sql".to_string()));
        let r = read("SELECT * FROM information_schema.tables");
        assert_eq!(r.reads.unwrap(), ["information_schema.tables"]);
    }

    #[test]
    fn call_pragma_and_explain_are_read_through_their_query() {
        let r = read("CALL pragma_table_info('Orders')");
        assert_eq!((r.kind.as_str(), r.query), ("CALL", true));
        assert_eq!(r.reads.unwrap(), ["orders"]);
        let r = read("PRAGMA table_info('payroll')");
        assert_eq!(r.reads.unwrap(), ["payroll"]);
        assert_eq!(r.table_calls, ["pragma_table_info"]);
        let r = read("PRAGMA show_tables");
        assert_eq!(r.table_calls, ["pragma_show_tables"]);
        let r = read("PRAGMA enable_profiling");
        assert_eq!(r.table_calls, ["pragma_enable_profiling"]);
        let r = read("PRAGMA profiling_mode = 'detailed'");
        assert!(!r.query && r.table_calls == ["pragma_profiling_mode"]);
        let r = read("EXPLAIN ANALYZE SELECT * FROM checkpoint()");
        assert_eq!(r.table_calls, ["checkpoint"]);
        let r = read("SELECT * FROM pragma_table_info(name_of_something())");
        assert_eq!(r.reads, None);
        let r = read("SHOW TABLES");
        assert_eq!(r.table_calls, ["show_tables"]);
        let r = read("INSERT INTO t VALUES (1)");
        assert!(r.writes && !r.query);
    }
}
