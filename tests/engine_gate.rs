//! The engine decides what a statement is (SPEC §4.2): text that DuckDB's
//! own parser reads as several statements is refused wherever it comes from
//! (`-e`, Lua's `aiq.query`, MCP `run_query`); functions that reach around
//! the gate (SQL given as text, engine state, hidden tables' catalogs) are
//! refused in every mode; SQLite's own verdict on writes stands; and
//! read-only SQL that sqlparser cannot read still runs when the engine reads
//! it as one read-only query.

#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{snapshot, stderr_of, stdout_of, Sandbox};
use serde_json::Value;

const SALARY: &str = "987654";

/// Every file of the sandbox but aiq's own home (its catalog cache).
fn files(sb: &Sandbox) -> BTreeMap<PathBuf, Vec<u8>> {
    let home = sb.home();
    snapshot(sb.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&home))
        .collect()
}

fn assert_unchanged(sb: &Sandbox, before: &BTreeMap<PathBuf, Vec<u8>>) {
    let after = files(sb);
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&after), names(before), "a file appeared or went");
    for (path, bytes) in before {
        assert!(after[path] == *bytes, "{} changed", path.display());
    }
}

/// The DuckDB shop with a `payroll` table, saved as source `shop` with
/// payroll hidden.
fn hidden_payroll(sb: &Sandbox) -> PathBuf {
    let db = sb.shop_duckdb();
    let conn = duckdb::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE payroll (id INTEGER, salary INTEGER); INSERT INTO payroll VALUES (1, {SALARY});"
    ))
    .unwrap();
    drop(conn);
    sb.write_config(&format!(
        "[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{}\"\nexclude = [\"payroll\"]\n",
        db.display()
    ));
    db
}

/// Statements DuckDB reads as two or three, where the first pass saw one.
const TWO_READINGS: &[&str] = &[
    "SELECT 1 --\r; SELECT * FROM payroll",
    "SELECT E'\\'' ; SELECT * FROM payroll; --'",
];

fn refused(out: &std::process::Output, sql: &str) {
    assert_eq!(
        out.status.code(),
        Some(5),
        "not refused: {sql:?}\nstdout: {}\nstderr: {}",
        stdout_of(out),
        stderr_of(out)
    );
    assert!(!stdout_of(out).contains(SALARY), "{sql:?}");
    assert!(!stderr_of(out).contains(SALARY), "{sql:?}");
}

#[test]
fn one_text_read_two_ways_is_refused_through_e() {
    let sb = Sandbox::new();
    let db = hidden_payroll(&sb);
    let before = files(&sb);
    for sql in TWO_READINGS {
        let out = sb.aiq().args(["shop", "-e", sql]).output().unwrap();
        refused(&out, sql);
        assert!(
            stderr_of(&out).contains("statements"),
            "{}",
            stderr_of(&out)
        );
    }
    // With --allow-write and no confirmation, nothing is created.
    let sql = "SELECT 1 --\r; CREATE TABLE t AS SELECT 42; SELECT 2";
    let out = sb
        .aiq()
        .args(["--allow-write", "-e", sql])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    let out = sb
        .aiq()
        .args(["--allow-write", "--yes", "-e", sql])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert_unchanged(&sb, &before);
}

#[test]
fn one_text_read_two_ways_is_refused_through_lua() {
    let sb = Sandbox::new();
    hidden_payroll(&sb);
    for sql in TWO_READINGS {
        let script = format!(
            "local ok, e = pcall(aiq.query, {})\nprint(ok)\nprint(e)",
            lua_string(sql)
        );
        let path = sb.path().join("probe.lua");
        std::fs::write(&path, script).unwrap();
        let out = sb
            .aiq()
            .arg("shop")
            .arg("--lua")
            .arg(&path)
            .output()
            .unwrap();
        let text = stdout_of(&out);
        assert!(
            text.starts_with("false\n"),
            "{sql:?}: {text}{}",
            stderr_of(&out)
        );
        assert!(text.contains("refused"), "{text}");
        assert!(!text.contains(SALARY));
    }
}

/// A Lua string literal of `s` (decimal escapes for every byte).
fn lua_string(s: &str) -> String {
    let body: String = s.bytes().map(|b| format!("\\{b}")).collect();
    format!("\"{body}\"")
}

/// Runs `sqls` through `aiq mcp SOURCE` with raw JSON-RPC; the tool results
/// in order.
fn mcp_run(sb: &Sandbox, source: &str, sqls: &[&str]) -> Vec<Value> {
    let mut child = sb
        .std_aiq()
        .arg("mcp")
        .arg(source)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
    ];
    for (i, sql) in sqls.iter().enumerate() {
        let call = serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "run_query", "arguments": {"sql": sql}}});
        lines.push(call.to_string());
    }
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut results = vec![Value::Null; sqls.len()];
    let mut got = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while got < sqls.len() {
        assert!(Instant::now() < deadline, "answers so far: {results:?}");
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "aiq ended: {results:?}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_u64().filter(|id| *id > 0) {
            results[id as usize - 1] = v["result"].clone();
            got += 1;
        }
    }
    drop(stdin);
    let _ = child.wait();
    results
}

#[test]
fn one_text_read_two_ways_is_refused_through_mcp_and_the_source_keeps_answering() {
    let sb = Sandbox::new();
    hidden_payroll(&sb);
    let results = mcp_run(
        &sb,
        "shop",
        &[
            TWO_READINGS[0],
            TWO_READINGS[1],
            "SELECT * FROM enable_logging(storage = 'file', storage_path = '/tmp/aiq-log')",
            "SELECT count(*) AS n FROM customers",
        ],
    );
    for r in &results[..3] {
        assert_eq!(r["isError"], true, "{r}");
        assert!(!r.to_string().contains(SALARY), "{r}");
    }
    assert_eq!(results[3]["isError"], false, "{}", results[3]);
    assert!(results[3].to_string().contains('n'), "{}", results[3]);
}

/// Functions and forms that reach around the gate on DuckDB: refused while
/// payroll is hidden, and the engine-state ones in every mode.
const AROUND_THE_GATE: &[&str] = &[
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM payroll'))",
    "SELECT * FROM pragma_storage_info('payroll')",
    "PRAGMA table_info('payroll')",
    "PRAGMA show_tables",
    "SELECT * FROM duckdb_tables()",
    "SELECT * FROM duckdb_columns()",
    "SELECT * FROM information_schema.tables",
    "SHOW TABLES",
    "SELECT * FROM enable_logging(storage = 'file', storage_path = '/tmp/aiq-log')",
    "SELECT * FROM disable_logging()",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM checkpoint()",
    "SELECT * FROM force_checkpoint()",
    "SELECT write_log('x')",
    "SELECT * FROM read_duckdb('shop.duckdb')",
    "SELECT * FROM sqlite_query('x.db', 'SELECT 1')",
    "SELECT * FROM parquet_bloom_probe('x.parquet', 'a', 1)",
    "SELECT * FROM parquet_full_metadata('x.parquet')",
    "CALL checkpoint()",
    "EXPLAIN SELECT * FROM enable_logging()",
];

#[test]
fn engine_functions_around_the_gate_are_refused_and_the_file_stays() {
    let sb = Sandbox::new();
    let db = hidden_payroll(&sb);
    let before = files(&sb);
    for sql in AROUND_THE_GATE {
        let out = sb.aiq().args(["shop", "-e", sql]).output().unwrap();
        refused(&out, sql);
        assert!(!stdout_of(&out).contains("salary"), "{sql}");
    }
    // Engine state and settings: refused with --allow-write --yes too.
    for sql in [
        "SELECT * FROM enable_logging()",
        "SELECT * FROM checkpoint()",
        "SELECT write_log('x')",
        "PRAGMA enable_profiling",
        "PRAGMA enable_profiling = 'json'",
        "PRAGMA profiling_mode = 'detailed'",
        "SET threads = 1",
    ] {
        let out = sb
            .aiq()
            .arg(&db)
            .args(["--allow-write", "--yes", "-e", sql])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{sql}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("never allowed"),
            "{sql}: {}",
            stderr_of(&out)
        );
    }
    assert_unchanged(&sb, &before);
}

#[test]
fn sqlite_pragma_functions_that_write_need_the_confirmation() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let before = std::fs::read(&db).unwrap();
    let sql = "SELECT * FROM pragma_optimize";
    let out = sb.aiq().arg(&db).args(["-e", sql]).output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    let out = sb
        .aiq()
        .arg(&db)
        .args(["--allow-write", "-e", sql])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("pragma_optimize"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file changed");
}

/// Read-only SQL that sqlparser does not read (or reads as a write).
const READS_SQLITE: &[(&str, &str)] = &[
    ("PRAGMA data_version", "data_version"),
    ("PRAGMA cache_size", "cache_size"),
    (
        "SELECT name FROM customers INDEXED BY customers_name WHERE id = 1",
        "Ann",
    ),
    ("SELECT 1 IS 1 AS same", "1"),
    (
        "WITH x AS MATERIALIZED (SELECT id FROM customers) SELECT count(*) AS n FROM x",
        "n",
    ),
];

const READS_DUCKDB: &[(&str, &str)] = &[
    ("FROM customers SELECT name WHERE id = 1", "Ann"),
    (
        "WITH p AS (PIVOT orders ON status IN ('delivered', 'shipped') USING count(*)) SELECT count(*) AS n FROM p",
        "n",
    ),
    (
        "SELECT o.id FROM orders o ASOF JOIN customers c ON o.customer_id = c.id AND o.id >= c.id ORDER BY 1 LIMIT 1",
        "id",
    ),
    ("SELECT [x * 2 FOR x IN [1, 2, 3]] AS l", "[2,4,6]"),
    (
        "WITH RECURSIVE r(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 3) SELECT max(n) AS m FROM r",
        "3",
    ),
    ("SELECT id FROM customers ORDER BY id LIMIT 10%", "id"),
    ("SELECT 2 ** 3 AS p", "8"),
    ("SELECT 'abc' ^@ 'ab' AS s", "true"),
    ("SELECT id, name FROM customers ORDER BY #1 LIMIT 1", "Ann"),
    ("SELECT count(*) FILTER (vip) AS n FROM customers", "n"),
    ("CALL pragma_table_info('customers')", "name"),
];

fn assert_reads(sb: &Sandbox, source: &Path, corpus: &[(&str, &str)]) {
    for (sql, expect) in corpus {
        let out = sb
            .aiq()
            .arg(source)
            .args(["-e", sql, "-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{sql}: {}", stderr_of(&out));
        assert!(
            stdout_of(&out).contains(expect),
            "{sql}: {}",
            stdout_of(&out)
        );
    }
}

#[test]
fn read_only_sql_the_engine_accepts_runs() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE INDEX customers_name ON customers(name)")
        .unwrap();
    let duck = sb.shop_duckdb();
    let before = files(&sb);
    assert_reads(&sb, &db, READS_SQLITE);
    assert_reads(&sb, &duck, READS_DUCKDB);
    assert_unchanged(&sb, &before);
}

/// A `PIVOT` without an `IN` list inside a query makes DuckDB run a
/// statement of its own first (a type of the pivoted values), which no
/// reading covers: refused with how to write it, and that form runs.
#[test]
fn a_pivot_in_a_query_without_its_values_says_how_to_write_it() {
    let sb = Sandbox::new();
    let duck = sb.shop_duckdb();
    let before = files(&sb);
    let out = sb
        .aiq()
        .arg(&duck)
        .args([
            "-e",
            "WITH p AS (PIVOT orders ON status USING count(*)) SELECT count(*) AS n FROM p",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    let text = stderr_of(&out);
    assert!(text.contains("PIVOT without an IN list"), "{text}");
    assert!(text.contains("IN ('a', 'b')"), "{text}");
    assert_reads(
        &sb,
        &duck,
        &[(
            "WITH p AS (PIVOT orders ON status IN ('delivered', 'shipped', 'cancelled') USING count(*)) SELECT count(*) AS n FROM p",
            "n\n6",
        )],
    );
    assert_unchanged(&sb, &before);
}
