//! The hostile-statement corpus (SPEC §4.2): every statement is refused with
//! exit 5 and a message naming what was refused, the database files stay
//! byte-identical and no file appears anywhere in the sandbox.

mod common;

use common::{snapshot, stderr_of, Sandbox};

/// Statements aimed at a SQLite source.
const SQLITE: &[&str] = &[
    "SELECT 1; DROP TABLE customers",
    "select 1 /* ; */ ; delete from customers",
    "sElEcT 1;\n-- harmless?\nDeLeTe FrOm customers",
    "SELECT 1;;DELETE FROM orders",
    "DELETE FROM customers",
    "/* just a comment */ UPDATE customers SET name = 'x'",
    "-- comment first\nINSERT INTO customers VALUES (9, 'x', 'y', 0, '2024-01-01')",
    "REPLACE INTO customers VALUES (1, 'x', 'y', 0, '2024-01-01')",
    "WITH x AS (SELECT 1) DELETE FROM customers",
    "WITH x AS (SELECT 1) INSERT INTO customers SELECT * FROM customers",
    "INSERT INTO orders SELECT * FROM orders RETURNING *",
    "ATTACH DATABASE 'evil.db' AS evil",
    "ATTACH 'file:evil.db?mode=rwc' AS evil",
    "DETACH DATABASE main",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 42",
    "PRAGMA writable_schema = ON",
    "pragma main.user_version(7)",
    "PRAGMA query_only = 0",
    "VACUUM INTO 'copy.db'",
    "VACUUM",
    "CREATE TRIGGER t AFTER INSERT ON customers BEGIN DELETE FROM orders; END",
    "CREATE TABLE evil (a)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "DROP TABLE orders",
    "ALTER TABLE customers ADD COLUMN x",
    "SELECT load_extension('/tmp/evil.so')",
    "BEGIN; DELETE FROM customers; COMMIT",
    "BEGIN IMMEDIATE",
    "SAVEPOINT a",
    "REINDEX",
    "ANALYZE",
    "CREATE VIRTUAL TABLE x USING fts5(a)",
    "SELECT * FROM customers WHERE id = 1; UPDATE customers SET vip = 1",
];

/// Statements aimed at a DuckDB source (database file and data files).
const DUCKDB: &[&str] = &[
    "COPY customers TO 'out.csv'",
    "COPY (SELECT * FROM customers) TO 'out.parquet' (FORMAT parquet)",
    "copy customers from 'in.csv'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "select * from Read_Csv('/etc/passwd', header = false)",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM \"/etc/passwd\"",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('/etc/hostname')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_parquet('/tmp/*.parquet')",
    "SELECT * FROM read_json_auto('/etc/os-release')",
    "INSTALL httpfs",
    "LOAD httpfs",
    "FORCE INSTALL httpfs",
    "ATTACH 'evil.duckdb' AS evil",
    "DETACH main",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET enable_external_access",
    "EXPORT DATABASE 'dump'",
    "CREATE TABLE evil AS SELECT 1",
    "CREATE MACRO m(a) AS a",
    "DELETE FROM customers",
    "WITH d AS (SELECT 1) UPDATE customers SET name = 'x'",
    "SELECT getenv('HOME')",
    "SELECT * FROM query('DELETE FROM customers')",
    "CHECKPOINT",
    "CALL dbgen(sf = 0.01)",
    "PRAGMA enable_profiling",
    "SELECT 1; DROP TABLE orders",
    "SELECT * INTO copy FROM customers",
];

fn assert_refused(sb: &Sandbox, source: &std::path::Path, sql: &str) {
    let out = sb.aiq().arg(source).args(["-e", sql]).output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(
        out.status.code(),
        Some(5),
        "not refused: {sql}\nstderr: {err}"
    );
    assert!(err.starts_with("aiq: refused: "), "{sql}: {err}");
    assert!(out.stdout.is_empty(), "{sql}: printed a result");
}

#[test]
fn hostile_corpus_is_large_enough() {
    assert!(SQLITE.len() + DUCKDB.len() >= 30);
    assert!(SQLITE.len() >= 30 && DUCKDB.len() >= 30);
}

#[test]
fn hostile_sqlite_statements_are_refused_and_change_nothing() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let before = snapshot(sb.path());
    for sql in SQLITE {
        assert_refused(&sb, &db, sql);
        // --allow-write does not open the door to ATTACH, extensions or stacking.
        let stacked = sql.contains(';') && !sql.starts_with("CREATE TRIGGER");
        if sql.contains("ATTACH") || sql.contains("load_extension") || stacked {
            let out = sb
                .aiq()
                .arg(&db)
                .args(["--allow-write", "--yes", "-e", sql])
                .output()
                .unwrap();
            assert_ne!(
                out.status.code(),
                Some(0),
                "allowed with --allow-write: {sql}"
            );
        }
    }
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
}

#[test]
fn hostile_duckdb_statements_are_refused_and_change_nothing() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    let before = snapshot(sb.path());
    for sql in DUCKDB {
        assert_refused(&sb, &db, sql);
    }
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
}

#[test]
fn hostile_statements_against_data_files_change_nothing() {
    let sb = Sandbox::new();
    let dir = sb.shop_csv();
    let target = dir.join("customers.csv");
    let before = snapshot(sb.path());
    let mut corpus: Vec<String> = DUCKDB.iter().map(|s| s.to_string()).collect();
    corpus.push(format!("COPY (SELECT 1 AS x) TO '{}'", target.display()));
    corpus.push(format!(
        "SELECT * FROM read_csv('{}/../home/x.csv')",
        dir.display()
    ));
    corpus.push("CREATE VIEW customers2 AS SELECT * FROM customers".into());
    for sql in &corpus {
        assert_refused(&sb, &dir, sql);
    }
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
}

#[test]
fn refusals_name_the_statement_and_the_way_out() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    let cases = [
        ("UPDATE customers SET vip = true", "aiq: refused: UPDATE changes data and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)\n"),
        ("SELECT 1; SELECT 2", "aiq: refused: 2 statements given; aiq runs exactly one statement at a time (send them one by one)\n"),
        ("INSTALL httpfs", "aiq: refused: INSTALL is never allowed (it installs or loads code into the database engine)\n"),
        ("SELECT * FROM read_csv('/etc/passwd')", "aiq: refused: read_csv() is never allowed (it reads or writes files outside the data source)\n"),
    ];
    for (sql, message) in cases {
        sb.aiq()
            .arg(&db)
            .args(["-e", sql])
            .assert()
            .code(5)
            .stderr(message);
    }
    let out = sb.aiq().arg(&db).args(["-e", "SELEC 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr_of(&out).starts_with("aiq: refused: the SQL does not parse as DuckDB ("),
        "{}",
        stderr_of(&out)
    );
}
