//! What a name reaches in a DuckDB database (SPEC §4.2, "Behind a name"):
//! a user's view or macro stands for a query the statement's parse tree
//! does not show. DuckDB's catalog gives each one's SQL (`duckdb_views()`,
//! `duckdb_functions()`), DuckDB's own parser reads it (the gate's
//! `json_serialize_sql`, which binds and runs nothing), and what it reads
//! and calls joins the statement's reading — through every level.
//!
//! Nothing is bound to find this out: binding runs what some functions do
//! at bind time (`current_setting`, `json_serialize_plan`), and a macro's
//! body is exactly what must not run before it is checked.

use std::collections::{HashMap, HashSet};

use duckdb::Connection;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::gate::DuckGate;
use crate::safety::EngineReading;

/// How many levels of views and macros are followed; deeper is unknown.
const MAX_DEPTH: usize = 32;

/// The database's own (not DuckDB's internal) views and macros, by their
/// lowercase bare names: the queries they stand for (`None` where the
/// catalog shows none, as for a function that is no macro).
#[derive(Debug, Default, Clone)]
pub(crate) struct UserObjects {
    views: HashMap<String, Vec<Option<String>>>,
    macros: HashMap<String, Vec<Option<String>>>,
}

impl UserObjects {
    /// Read from DuckDB's catalog.
    pub(crate) fn read(conn: &Connection) -> duckdb::Result<UserObjects> {
        let mut objects = UserObjects::default();
        let mut stmt = conn.prepare(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (name, sql) = row?;
            objects
                .views
                .entry(name.to_lowercase())
                .or_default()
                .push(view_query(&sql));
        }
        let mut stmt = conn.prepare(
            "SELECT function_name, function_type, macro_definition FROM duckdb_functions() \
             WHERE NOT internal",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        for row in rows {
            let (name, kind, definition) = row?;
            let query = match (kind.as_str(), definition) {
                ("macro", Some(d)) => Some(format!("SELECT {d}")),
                ("table_macro", Some(d)) => Some(d),
                _ => None,
            };
            objects
                .macros
                .entry(name.to_lowercase())
                .or_default()
                .push(query);
        }
        Ok(objects)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.views.is_empty() && self.macros.is_empty()
    }

    /// Whether `name` (as a reading names a table) is one of the views.
    pub(crate) fn is_view(&self, name: &str) -> bool {
        self.views.contains_key(bare(name))
    }
}

/// The last part of a `schema.table` name.
fn bare(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// The query of a view from the `CREATE VIEW name [(columns)] AS query;`
/// DuckDB keeps: the name is skipped as DuckDB's tokens read it (a quoted
/// name may hold `AS` and comment marks of its own).
fn view_query(sql: &str) -> Option<String> {
    let tokens = Tokenizer::new(&DuckDbDialect {}, sql)
        .tokenize_with_location()
        .ok()?;
    let mut depth = 0usize;
    let mut words = 0usize;
    for t in &tokens {
        match &t.token {
            Token::Whitespace(_) => {}
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.checked_sub(1)?,
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => {
                words += 1;
                // CREATE VIEW name … AS: the first unquoted AS past the name.
                if words > 3 && w.value.eq_ignore_ascii_case("as") {
                    let end = t.span.end;
                    let offset = offset_of(sql, end.line, end.column)?;
                    let query = sql[offset..]
                        .trim()
                        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
                    return Some(query.to_string());
                }
            }
            _ if depth == 0 => words += 1,
            _ => {}
        }
    }
    None
}

/// The byte offset of a 1-based line and column (in characters).
fn offset_of(text: &str, line: u64, column: u64) -> Option<usize> {
    let mut start = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            return l
                .char_indices()
                .map(|(j, _)| start + j)
                .chain(std::iter::once(start + l.len()))
                .nth(column.checked_sub(1)? as usize);
        }
        start += l.len();
    }
    None
}

/// Adds to `reading` what the user's views and macros it names read and
/// call, read by `gate` from their SQL in the catalog, level by level.
/// The macros' own names leave `calls`: their bodies stand there instead.
/// A view or macro whose SQL cannot be read makes the reading
/// [`EngineReading::opaque`] (and a macro then stays in `calls`, where no
/// allow-list has it).
pub(crate) fn expand(gate: &DuckGate, reading: &mut EngineReading, objects: &UserObjects) {
    if !reading.query || objects.is_empty() {
        return;
    }
    let mut seen: HashSet<(bool, String)> = HashSet::new();
    let mut level = 0;
    loop {
        let named: Vec<(bool, String)> = reading
            .reads
            .iter()
            .flatten()
            .map(|r| bare(r).to_string())
            .filter(|r| objects.views.contains_key(r))
            .map(|r| (true, r))
            .chain(
                reading
                    .calls
                    .iter()
                    .chain(&reading.table_calls)
                    .filter(|f| objects.macros.contains_key(*f))
                    .map(|f| (false, f.clone())),
            )
            .filter(|named| seen.insert(named.clone()))
            .collect();
        if named.is_empty() {
            return;
        }
        level += 1;
        if level > MAX_DEPTH {
            reading.opaque = true;
            return;
        }
        let mut opaque = false;
        for (view, name) in named {
            let bodies = if view {
                &objects.views[&name]
            } else {
                &objects.macros[&name]
            };
            for body in bodies {
                match body.as_deref().map(|q| gate.read(q)) {
                    Some(Ok(inner)) if inner.statements == 1 && inner.query => {
                        merge(reading, inner);
                    }
                    _ => opaque = true,
                }
            }
            if !view && !opaque {
                reading.calls.retain(|f| *f != name);
                reading.table_calls.retain(|f| *f != name);
            }
        }
        if opaque {
            reading.opaque = true;
            return;
        }
    }
}

/// Adds `inner`'s reads and calls to `reading`'s.
fn merge(reading: &mut EngineReading, inner: EngineReading) {
    match (&mut reading.reads, inner.reads) {
        (Some(reads), Some(more)) => add_new(reads, more),
        (reads, _) => {
            *reads = None;
            reading.opaque = true;
        }
    }
    add_new(&mut reading.calls, inner.calls);
    add_new(&mut reading.table_calls, inner.table_calls);
}

/// Appends the items of `more` that `list` does not hold yet.
fn add_new(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// What `query` (reading one view) reaches, lowercased: the tables it
/// reads through every level of views and macros, and the catalog
/// functions it calls; `None` when that cannot be read.
pub(crate) fn reaches(gate: &DuckGate, objects: &UserObjects, query: &str) -> Option<Vec<String>> {
    let mut reading = gate.read(query).ok()?;
    expand(gate, &mut reading, objects);
    if reading.opaque {
        return None;
    }
    let mut reached: Vec<String> = reading
        .reads?
        .into_iter()
        .filter(|r| !objects.is_view(r))
        .collect();
    reached.extend(
        reading
            .table_calls
            .into_iter()
            .filter(|f| crate::safety::is_catalog(f)),
    );
    Some(reached)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE payroll(salary INT); CREATE TABLE orders(id INT);
             CREATE VIEW payroll_view AS SELECT * FROM (SELECT salary FROM payroll);
             CREATE VIEW deeper AS SELECT * FROM payroll_view;
             CREATE VIEW \"x AS SELECT 1 --\" (a) AS SELECT salary FROM payroll;
             CREATE MACRO top_pay() AS (SELECT max(salary) FROM payroll);
             CREATE MACRO upper(x) AS current_setting('threads');
             CREATE MACRO pay_rows() AS TABLE SELECT * FROM payroll;
             CREATE MACRO via_macro() AS top_pay() + 1;",
        )
        .unwrap();
        conn
    }

    fn reading(conn: &Connection, sql: &str) -> EngineReading {
        let gate = DuckGate::open().unwrap();
        let mut r = gate.read(sql).unwrap();
        let objects = UserObjects::read(conn).unwrap();
        expand(&gate, &mut r, &objects);
        r
    }

    #[test]
    fn views_and_macros_are_read_to_what_they_read_and_call() {
        let conn = database();
        for sql in [
            "SELECT * FROM payroll_view",
            "SELECT * FROM main.deeper",
            "SELECT * FROM \"x AS SELECT 1 --\"",
            "SELECT top_pay()",
            "SELECT via_macro()",
            "SELECT * FROM pay_rows()",
            "SELECT * FROM orders WHERE id < (SELECT count(*) FROM deeper)",
        ] {
            let r = reading(&conn, sql);
            assert!(
                r.reads.as_ref().unwrap().contains(&"payroll".to_string()),
                "{sql}: {r:?}"
            );
            assert!(!r.opaque, "{sql}");
            assert!(
                !r.calls.iter().any(|f| f == "top_pay" || f == "pay_rows"),
                "{r:?}"
            );
        }
        // A macro that shadows a built-in is read through its body.
        let r = reading(&conn, "SELECT upper('a')");
        assert!(r.calls.contains(&"current_setting".to_string()), "{r:?}");
        // A statement naming none of them reads what it names.
        let r = reading(&conn, "SELECT * FROM orders");
        assert_eq!(r.reads.unwrap(), ["orders"]);
    }

    #[test]
    fn a_view_reaches_its_base_tables_and_a_name_cannot_fake_its_query() {
        let conn = database();
        let gate = DuckGate::open().unwrap();
        let objects = UserObjects::read(&conn).unwrap();
        assert_eq!(
            reaches(&gate, &objects, "SELECT * FROM deeper").unwrap(),
            ["payroll"]
        );
        assert_eq!(
            reaches(&gate, &objects, "SELECT * FROM \"x AS SELECT 1 --\"").unwrap(),
            ["payroll"]
        );
        assert_eq!(
            view_query("CREATE VIEW \"v AS SELECT 1 --\"(a, b) AS SELECT 2;").as_deref(),
            Some("SELECT 2")
        );
    }
}
