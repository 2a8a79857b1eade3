//! Feedback while waiting, as a person sees it on a terminal (read back
//! through a terminal emulator): an indicator with the elapsed time while a
//! statement runs, erased without a trace; a footer with rows and time
//! after a table; a live row count while an export goes to a file; and
//! nothing at all on a stderr that is not a terminal.

#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use common::llm::{ModelServer, Reply};
use common::screen::Screen;
use common::{stderr_of, Sandbox};

/// Runs about two seconds in SQLite (debug or release build alike: it is
/// the engine that counts).
const SLOW: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 6000000) SELECT count(*) AS n FROM c";

fn screen_running(sb: &Sandbox, command: &str) -> Screen {
    let mut cmd = sb.std_aiq();
    cmd.env("TERM", "xterm-256color");
    let script = format!("\"$AIQ\" {command}");
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg(script);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    sh.env("AIQ", assert_cmd::cargo::cargo_bin("aiq"))
        .current_dir(sb.path());
    let mut p = expectrl::Session::spawn(sh).expect("spawn in a pty");
    p.set_expect_timeout(Some(Duration::from_secs(30)));
    Screen::of(p)
}

#[test]
fn a_slow_statement_shows_its_elapsed_time_then_leaves_no_trace() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut s = screen_running(&sb, &format!("'{}' -e \"{SLOW}\"", db.display()));
    s.wait_for("Ctrl-C cancels");
    let line = s
        .text()
        .lines()
        .find(|l| l.contains("Ctrl-C cancels"))
        .unwrap()
        .to_string();
    assert!(line.contains("WITH RECURSIVE c(x) AS"), "{line}");
    assert!(line.contains(" ms ·") || line.contains(" s ·"), "{line}");
    // The time goes on.
    let first = line.clone();
    std::thread::sleep(Duration::from_millis(600));
    s.pump();
    let later = s
        .text()
        .lines()
        .find(|l| l.contains("Ctrl-C cancels"))
        .map(str::to_string)
        .unwrap_or_default();
    assert_ne!(first, later, "the elapsed time did not move");
    // The result replaces it: no characters of the indicator remain.
    s.wait_for("6000000");
    s.wait_for("1 row · ");
    let screen = s.text();
    assert!(!screen.contains("Ctrl-C cancels"), "{screen}");
    assert!(
        !screen.contains("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELE…"),
        "{screen}"
    );
}

#[test]
fn tables_end_with_their_rows_and_time() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut s = screen_running(
        &sb,
        &format!("'{}' -e 'SELECT id FROM orders ORDER BY id'", db.display()),
    );
    s.wait_for("6 rows · ");
    let mut s = screen_running(
        &sb,
        &format!(
            "'{}' -e 'SELECT id FROM orders ORDER BY id' --max-rows 2",
            db.display()
        ),
    );
    s.wait_for("2 of 6 rows shown · ");
    // --quiet: no footer.
    let mut s = screen_running(
        &sb,
        &format!(
            "'{}' -e 'SELECT id FROM orders ORDER BY id' --quiet; echo done",
            db.display()
        ),
    );
    s.wait_for("done");
    assert!(!s.text().contains("rows ·"), "{}", s.text());
}

#[test]
fn an_export_to_a_file_shows_a_live_count_then_one_summary_line() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = sb.path().join("out.csv");
    let big = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT x, 'row ' || x AS label FROM c";
    let mut s = screen_running(
        &sb,
        &format!(
            "'{}' -e \"{big}\" -f csv > '{}'; echo done",
            db.display(),
            out.display()
        ),
    );
    // While it runs: a count that grows.
    s.wait_for(" rows · ");
    let started = Instant::now();
    s.wait_for("done");
    let screen = s.text();
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    // Afterwards: exactly one summary line, then the shell's "done".
    assert_eq!(lines.len(), 2, "{screen}");
    assert!(lines[0].starts_with("3,000,000 rows · "), "{screen}");
    assert!(lines[0].ends_with(" MB"), "{screen}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().count(), 3_000_001);
}

/// Scripts see no change: with stderr not a terminal, nothing of this is
/// written.
#[test]
fn a_stderr_that_is_not_a_terminal_stays_empty() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    for format in ["table", "csv", "markdown"] {
        let out = sb
            .aiq()
            .arg(&db)
            .args(["-e", SLOW, "-f", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(stderr_of(&out), "", "{format}");
    }
    let server = ModelServer::start(vec![Reply::Text(
        "```sql\nSELECT count(*) AS n FROM orders\n```".into(),
    )]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", "how many orders?", "-f", "table"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr_of(&out), "");
}

/// In the chat, a slow statement keeps the indicator (not the "thinking"
/// spinner) until rows come, and each result ends with its footer.
#[test]
fn the_chat_shows_the_indicator_and_footers() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Text(format!("```sql\n{SLOW}\n```")),
        Reply::Text("```sql\nSELECT id FROM orders ORDER BY id\n```".into()),
    ]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap()]);
    s.wait_for("aiq[shop.db]>");
    std::thread::sleep(Duration::from_millis(300));
    s.send("count to six million\r");
    s.wait_for("Ctrl-C cancels");
    s.wait_for("1 row · ");
    s.wait_for("aiq[shop.db]>");
    s.send("order ids\r");
    s.wait_for("6 rows · ");
}
