//! aiq on a real terminal (a pseudo-terminal): write confirmation (`[y/N]`
//! declines by default, runs only on "y") and the console sink of a
//! single-shot question (spinner, streamed SQL, then the table).

#![cfg(unix)]

mod common;

use std::time::Duration;

use common::llm::{ModelServer, Reply};
use common::{pty, Sandbox};
use expectrl::Expect;

fn spawn(sb: &Sandbox, db: &std::path::Path, sql: &str) -> expectrl::session::OsSession {
    let args = [
        db.as_os_str(),
        "--allow-write".as_ref(),
        "-e".as_ref(),
        sql.as_ref(),
        "-f".as_ref(),
        "csv".as_ref(),
    ];
    pty(sb, &args, None, "dumb")
}

fn count(sb: &Sandbox, db: &std::path::Path) -> String {
    let out = sb
        .aiq()
        .arg(db)
        .args(["-e", "SELECT count(*) AS n FROM orders", "-f", "csv"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn declining_runs_nothing_and_exits_5() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut p = spawn(&sb, &db, "DELETE FROM orders WHERE id = 1");
    p.expect("DELETE FROM orders WHERE id = 1").unwrap();
    p.expect("Run this statement? [y/N] ").unwrap();
    p.send_line("").unwrap();
    p.expect("aiq: not run: DELETE changes data and was not confirmed")
        .unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 5)"), "{status}");
    assert_eq!(count(&sb, &db), "n\n6\n");
}

#[test]
fn yes_runs_the_statement() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut p = spawn(&sb, &db, "DELETE FROM orders WHERE id = 1");
    p.expect("Run this statement? [y/N] ").unwrap();
    p.send_line("y").unwrap();
    p.expect("1 row changed").unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 0)"), "{status}");
    assert_eq!(count(&sb, &db), "n\n5\n");
}

#[test]
fn console_shows_spinner_then_streamed_sql_then_the_table() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let reply = Reply::Text("```sql\nSELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country\n```".into());
    let server = ModelServer::start(vec![Reply::Slow(
        Duration::from_millis(400),
        Box::new(reply),
    )]);
    let args = [
        db.as_os_str(),
        "-q".as_ref(),
        "how many customers per country?".as_ref(),
    ];
    let mut p = pty(&sb, &args, Some(&server), "dumb");
    p.expect("thinking…").unwrap();
    p.expect("SELECT country, count(*) AS n FROM customers")
        .unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    p.expect("│ US      ┆ 2 │").unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 0)"), "{status}");
}
