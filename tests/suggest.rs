//! An unknown table or column is answered with the closest existing names
//! on every engine (SPEC §2.3) — `-e` and the model's fix request alike —
//! and a hidden table is never suggested.

mod common;

use common::llm::{ModelServer, Reply};
use common::{servers, stderr_of, Sandbox};

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// `-e` with a misspelt column and a misspelt table: exit 1, the hint on
/// stderr.
fn assert_hints(sb: &Sandbox, source: &str) {
    let out = sb
        .aiq()
        .args([source, "-e", "SELECT nme FROM customers"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("did you mean customers.name?"),
        "{source}: {}",
        stderr_of(&out)
    );
    let out = sb
        .aiq()
        .args([source, "-e", "SELECT count(*) FROM custmers"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out).to_lowercase();
    assert!(
        err.contains("did you mean") && err.contains("customers"),
        "{source}: {err}"
    );
}

#[test]
fn sqlite_and_duckdb_suggest_the_closest_names() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    assert_hints(&sb, db.to_str().unwrap());
    let duck = sb.shop_duckdb();
    assert_hints(&sb, duck.to_str().unwrap());
    let csv = sb.shop_csv();
    assert_hints(&sb, csv.to_str().unwrap());
}

#[test]
fn the_model_gets_the_same_hint_and_hidden_tables_are_never_suggested() {
    let sb = Sandbox::new();
    let db = sb.path().join("crm.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO customers VALUES (1, 'Ann');
             CREATE TABLE payroll (id INTEGER PRIMARY KEY, salary INTEGER);",
        )
        .unwrap();
    sb.write_config(&format!(
        "[sources.crm]\nurl = \"{}\"\nexclude = [\"payroll\"]\n",
        db.display()
    ));
    let server = ModelServer::start(vec![
        fenced("SELECT nme FROM customers"),
        fenced("SELECT name FROM customers"),
    ]);
    sb.aiq_with(&server, "openai")
        .args(["crm", "-q", "names", "-f", "csv"])
        .assert()
        .success()
        .stdout("name\nAnn\n");
    let fix = &server.chats()[1].raw;
    assert!(fix.contains("did you mean customers.name?"), "{fix}");
    // A hidden table (or its column) close to the typo is not named.
    for typo in ["SELECT * FROM payrol", "SELECT salry FROM customers"] {
        let out = sb.aiq().args(["crm", "-e", typo]).output().unwrap();
        let err = stderr_of(&out);
        assert!(!err.contains("did you mean"), "{typo}: {err}");
        assert!(
            !err.contains("payroll") && !err.contains("salary"),
            "{typo}: {err}"
        );
    }
}

#[test]
fn servers_suggest_the_closest_names() {
    for server in [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
    {
        let sb = Sandbox::new();
        assert_hints(&sb, &server.url());
    }
}

/// A suggested name that needs quotes has them, so it can be typed as it
/// stands: a CSV header `Unit Price` is suggested as `sales."Unit Price"`.
#[test]
fn a_suggested_name_that_needs_quotes_has_them() {
    let sb = Sandbox::new();
    let csv = sb.path().join("sales.csv");
    std::fs::write(&csv, "Order Date,Unit Price\n2024-01-05,3.5\n").unwrap();
    let out = sb
        .aiq()
        .args([csv.to_str().unwrap(), "-e", "SELECT unit_price FROM sales"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("did you mean sales.\"Unit Price\"?"),
        "{}",
        stderr_of(&out)
    );
}
