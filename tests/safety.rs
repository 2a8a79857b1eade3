//! The hostile-statement corpus (SPEC §4.2): every statement is refused with
//! exit 5 and a message naming what was refused, the database files stay
//! byte-identical and no file appears anywhere in the sandbox. And the
//! allowed corpus: read-only SQL that models and people write, which must
//! pass all three layers and run.

mod common;

use common::corpus::{DUCKDB_HOSTILE as DUCKDB, SQLITE_HOSTILE as SQLITE};
use common::{snapshot, stderr_of, stdout_of, Sandbox};

/// Forbidden inside writes: refused even with `--allow-write --yes`.
const FORBIDDEN_IN_WRITES: &[&str] = &[
    "CREATE TABLE stolen AS SELECT * FROM read_csv('/etc/passwd')",
    "INSERT INTO customers SELECT * FROM query('DELETE FROM orders')",
    "UPDATE customers SET name = getenv('HOME')",
    "INSERT INTO customers SELECT 9, file, 'x', false, DATE '2024-01-01' FROM glob('/etc/*')",
    "CREATE VIEW leak AS SELECT * FROM read_text('/etc/hostname')",
    "DELETE FROM customers WHERE name IN (SELECT * FROM '/etc/passwd')",
];

/// Read-only SQL a model or a person writes for SQLite: all must run.
const ALLOWED_SQLITE: &[&str] = &[
    "SELECT count(*) FROM customers",
    "WITH vip AS (SELECT * FROM customers WHERE vip) SELECT count(*) FROM vip",
    "SELECT c.name, count(o.id) AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name",
    "SELECT country, count(*) FROM customers GROUP BY country HAVING count(*) >= 1",
    "VALUES (1, 'a'), (2, 'b')",
    "EXPLAIN SELECT * FROM orders",
    "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE id = 1",
    "PRAGMA table_info(customers)",
    "PRAGMA table_xinfo(orders)",
    "PRAGMA index_list(orders)",
    "PRAGMA foreign_key_list(orders)",
    "PRAGMA integrity_check",
    "PRAGMA quick_check",
    "PRAGMA foreign_key_check",
    "PRAGMA foreign_key_check(orders)",
    "SELECT name FROM sqlite_schema WHERE type = 'table'",
    "SELECT * FROM pragma_table_info('orders')",
    "SELECT strftime('%Y-%m', ordered_at) AS m, sum(total) FROM orders GROUP BY m",
    "SELECT name, row_number() OVER (ORDER BY signup) AS rn FROM customers",
    "SELECT * FROM customers WHERE name LIKE 'A%' UNION ALL SELECT * FROM customers WHERE vip",
    "SELECT json_object('a', 1)",
    // SQLite's math and percentile functions, built in for analysts.
    "SELECT round(sqrt(total), 2) AS r, pow(total, 2) AS p, ln(total) AS l, floor(total) AS f FROM orders",
    "SELECT median(total) AS m, percentile_cont(total, 0.9) AS p90 FROM orders",
];

/// Read-only SQL for DuckDB (a database file and a folder of CSV files).
const ALLOWED_DUCKDB: &[&str] = &[
    "SELECT count(*) FROM customers",
    "FROM customers SELECT name",
    "FROM orders",
    "SUMMARIZE customers",
    "SUMMARIZE SELECT total FROM orders",
    "DESCRIBE customers",
    "DESCRIBE SELECT * FROM orders",
    "SHOW customers",
    "SHOW TABLES",
    "SHOW ALL TABLES",
    "PIVOT orders ON status USING count(*)",
    "PIVOT orders ON status USING sum(total) GROUP BY customer_id ORDER BY customer_id",
    "UNPIVOT (SELECT id, total::DOUBLE AS total, customer_id::DOUBLE AS cid FROM orders) ON total, cid INTO NAME k VALUE v",
    "SELECT * FROM orders USING SAMPLE 2 ROWS",
    "SELECT * FROM orders USING SAMPLE 50% (bernoulli, 7)",
    "SELECT * FROM orders TABLESAMPLE 50%",
    "FROM duckdb_tables() SELECT table_name",
    "SELECT * FROM duckdb_columns() WHERE table_name = 'orders'",
    "FROM duckdb_databases()",
    "SELECT date_trunc('month', ordered_at) AS m, sum(total) FROM orders GROUP BY ALL",
    "SELECT * EXCLUDE (signup) FROM customers",
    "SELECT list(name) FROM customers",
    "PRAGMA table_info('customers')",
    "EXPLAIN SELECT * FROM orders",
    "SELECT * FROM customers POSITIONAL JOIN orders",
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
    assert!(SQLITE.len() >= 30 && DUCKDB.len() >= 30);
    assert!(ALLOWED_SQLITE.len() >= 15 && ALLOWED_DUCKDB.len() >= 15);
}

/// Runs every statement with `-e` and expects exit 0 and some output.
fn assert_all_run(sb: &Sandbox, source: &std::path::Path, corpus: &[&str]) {
    for sql in corpus {
        let out = sb
            .aiq()
            .arg(source)
            .args(["-e", sql, "-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "refused or failed: {sql}\nstderr: {}",
            stderr_of(&out)
        );
        assert!(!out.stdout.is_empty(), "no result: {sql}");
    }
}

#[test]
fn allowed_sqlite_statements_run() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let before = snapshot(sb.path());
    assert_all_run(&sb, &db, ALLOWED_SQLITE);
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
}

#[test]
fn allowed_duckdb_statements_run_on_files_and_folders() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    let dir = sb.shop_csv();
    let before = snapshot(sb.path());
    assert_all_run(&sb, &db, ALLOWED_DUCKDB);
    assert_all_run(&sb, &dir, ALLOWED_DUCKDB);
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
}

#[test]
fn forbidden_things_inside_writes_are_refused_even_with_allow_write() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    let before = snapshot(sb.path());
    for sql in FORBIDDEN_IN_WRITES {
        let out = sb
            .aiq()
            .arg(&db)
            .args(["--allow-write", "--yes", "-e", sql])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(5), "{sql}: {err}");
        assert!(err.contains("is never allowed"), "{sql}: {err}");
    }
    assert_eq!(snapshot(sb.path()), before, "a file changed or appeared");
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

/// A folder source serves only the files whose real path lies inside it
/// (SPEC §4.2): a link out is skipped and said so, never a view; a link
/// that stays inside works.
#[cfg(unix)]
#[test]
fn folder_sources_never_follow_links_out() {
    let sb = Sandbox::new();
    let outside = sb.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("outside_secret.csv");
    std::fs::write(&secret, "k,v\nkey,OUTSIDE-VALUE-77\n").unwrap();
    let dir = sb.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("customers.csv"), "id,name\n1,Ann\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("pw.csv")).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub").join("orders.csv"), "id,total\n1,5\n").unwrap();
    std::os::unix::fs::symlink(dir.join("sub").join("orders.csv"), dir.join("orders.csv")).unwrap();
    let out = sb
        .aiq()
        .arg(&dir)
        .args(["-e", "SELECT count(*) AS n FROM orders", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        stdout_of(&out),
        "n\n1\n",
        "a link inside the folder is served"
    );
    let err = stderr_of(&out);
    assert!(
        err.contains("pw.csv") && err.contains("outside the folder"),
        "{err}"
    );
    for sql in [
        "SELECT * FROM outside_secret",
        "SELECT * FROM pw",
        &format!("SELECT * FROM read_csv('{}')", dir.join("pw.csv").display()),
        &format!("SELECT * FROM read_csv('{}')", secret.display()),
    ] {
        let out = sb.aiq().arg(&dir).args(["-e", sql]).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "{sql}");
        assert!(!stdout_of(&out).contains("OUTSIDE-VALUE-77"), "{sql}");
        assert!(!stderr_of(&out).contains("OUTSIDE-VALUE-77"), "{sql}");
    }
    let schema = sb.aiq().args(["schema"]).arg(&dir).output().unwrap();
    assert!(
        !stdout_of(&schema).contains("outside_secret"),
        "{}",
        stdout_of(&schema)
    );
}
