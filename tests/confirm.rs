//! Write confirmation on a real terminal (a pseudo-terminal): `[y/N]`
//! declines by default and runs the statement only on "y".

#![cfg(unix)]

mod common;

use std::time::Duration;

use common::Sandbox;
use expectrl::{Expect, Session};

fn spawn(sb: &Sandbox, db: &std::path::Path, sql: &str) -> expectrl::session::OsSession {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("aiq"));
    cmd.arg(db)
        .args(["--allow-write", "-e", sql, "-f", "csv"])
        .current_dir(sb.path())
        .env("AIQ_HOME", sb.home())
        .env("HOME", sb.path().join("home"))
        .env("NO_COLOR", "1");
    let mut session = Session::spawn(cmd).expect("spawn aiq in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session
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
    p.expect("aiq: not run: DELETE was not confirmed").unwrap();
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
