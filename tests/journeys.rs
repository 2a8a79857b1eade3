//! Journeys across features, each named by what a person does, through
//! the ways a person does it (a terminal chat, a shell script) with the
//! scripted model. Each crosses two features or more: the seams between
//! them are where users fall. Add one whenever a journey breaks.

#![cfg(unix)]

mod common;

use std::time::Duration;

use common::llm::{ModelServer, Reply};
use common::{pty, stderr_of, stdout_of, Sandbox};
use expectrl::session::OsSession;
use expectrl::Expect;

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// A chat in a terminal that edits lines (rustyline in raw mode).
fn chat(sb: &Sandbox, server: &ModelServer, source: &str) -> OsSession {
    pty(sb, &[source.as_ref()], Some(server), "xterm")
}

/// The name of the one session `aiq sessions` lists.
fn listed_session(sb: &Sandbox) -> String {
    let listed = stdout_of(&sb.aiq().arg("sessions").output().unwrap());
    listed
        .split_whitespace()
        .find(|w| w.starts_with("session_") && w.ends_with(".json"))
        .unwrap_or_else(|| panic!("no session listed: {listed}"))
        .to_string()
}

/// Waits for the prompt, then for the line editor to settle.
fn prompt(p: &mut OsSession, label: &str) {
    p.expect(format!("aiq[{label}]> ")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
}

/// Ask → `/edit` → change and run → `/good` keeps what ran (and says so)
/// → a similar question gets it as a verified example; a failed answer
/// fixed by hand is kept the same way.
#[test]
fn a_corrected_answer_is_kept_and_taught() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced(
            "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC LIMIT 5",
        ),
        fenced("SELECT nope FROM customers"),
        fenced("SELECT nope FROM customers"),
        fenced("SELECT nope FROM customers"),
        fenced("SELECT 1"),
    ]);
    let mut p = chat(&sb, &server, db.to_str().unwrap());
    prompt(&mut p, "shop.db");
    p.send_line("top countries by customers").unwrap();
    p.expect("DE").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/edit").unwrap();
    p.expect("LIMIT 5").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The cursor is at the end: 5 → 2.
    p.send("\x7f").unwrap();
    p.send_line("2").unwrap();
    p.expect("DE").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/good").unwrap();
    p.expect("Kept: SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC LIMIT 2")
        .unwrap();
    prompt(&mut p, "shop.db");
    // A failed answer, then the person's own fix.
    p.send_line("how many vip customers").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/good").unwrap();
    p.expect("the last SQL run failed").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/sql SELECT count(*) AS vips FROM customers WHERE vip")
        .unwrap();
    p.expect("vips").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/good").unwrap();
    p.expect("Kept: SELECT count(*) AS vips FROM customers WHERE vip")
        .unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("which countries have the most customers")
        .unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let last = server.chats().last().unwrap().raw.clone();
    assert!(last.contains("Verified examples"), "{last}");
    assert!(last.contains("LIMIT 2"), "{last}");
    assert!(!last.contains("LIMIT 5\\nSQL"), "{last}");
}

/// `/sql` → a follow-up question: the model gets what the person ran and
/// its result as the conversation so far.
#[test]
fn a_follow_up_builds_on_sql_the_person_ran() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![fenced(
        "SELECT country, count(*) AS n FROM customers WHERE country = 'DE' GROUP BY country",
    )]);
    let mut p = chat(&sb, &server, db.to_str().unwrap());
    prompt(&mut p, "shop.db");
    p.send_line(
        "/sql SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country",
    )
    .unwrap();
    p.expect("FR").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("now only for Germany").unwrap();
    p.expect("DE").unwrap();
    prompt(&mut p, "shop.db");
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let chats = server.chats();
    assert_eq!(chats.len(), 1);
    let asked = &chats[0].raw;
    assert!(
        asked.contains(
            "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country"
        ),
        "{asked}"
    );
    assert!(asked.contains("I ran this SQL myself"), "{asked}");
    assert!(
        asked.contains("FR,"),
        "the result preview goes too: {asked}"
    );
}

/// A dataset folder (partition folders as Spark or DuckDB write them)
/// given as the source → a question about one partition: one table, its
/// partitions as columns.
#[test]
fn a_dataset_folder_answers_a_question_about_one_partition() {
    let sb = Sandbox::new();
    let sales = sb.path().join("sales");
    duckdb::Connection::open_in_memory()
        .unwrap()
        .execute_batch(&format!(
            "COPY (SELECT i AS id, 2020 + i % 3 AS year, ['eu', 'us'][1 + i % 2] AS region, i * 2 AS amount \
                   FROM range(60) t(i)) TO '{}' (FORMAT parquet, PARTITION_BY (year, region))",
            sales.display()
        ))
        .unwrap();
    let server = ModelServer::start(vec![fenced(
        "SELECT sum(amount) AS total FROM sales WHERE year = 2021 AND region = 'eu'",
    )]);
    let out = sb
        .aiq_with(&server, "openai")
        .args([
            sales.to_str().unwrap(),
            "-q",
            "eu sales in 2021",
            "-f",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let expected: i64 = (0..60i64)
        .filter(|i| 2020 + i % 3 == 2021 && i % 2 == 0)
        .map(|i| i * 2)
        .sum();
    assert_eq!(stdout_of(&out), format!("total\n{expected}\n"));
    let schema = &server.chats()[0].raw;
    assert!(
        schema.contains("sales") && !schema.contains("year=2020"),
        "{schema}"
    );
}

/// A script that fails → nothing on stdout for a file to hold, and the
/// exit code; one that fails after rows → those rows, the exit code, and
/// how many were written. `--sql-only` passes the gate and answers SQL.
#[test]
fn a_script_that_fails_leaves_no_half_answer() {
    let sb = Sandbox::new();
    let db = sb.path().join("n.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE t (a INTEGER, b TEXT);
             INSERT INTO t VALUES (9223372036854775807, 'x'), (1, 'y');
             WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 2000)
             INSERT INTO t SELECT i, 'z' || i FROM r;",
        )
        .unwrap();
    let db = db.to_str().unwrap();
    for format in ["csv", "tsv", "json", "jsonl"] {
        let out = sb
            .aiq()
            .args([db, "-e", "SELECT sum(a) AS s FROM t", "-f", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr_of(&out));
        assert_eq!(stdout_of(&out), "", "{format}");
        assert!(
            stderr_of(&out).contains("integer overflow"),
            "{}",
            stderr_of(&out)
        );
    }
    let out = sb
        .aiq()
        .args([
            db,
            "-e",
            "SELECT b, CASE WHEN b = 'z1999' THEN json_extract('{', '$') END AS j FROM t",
            "-f",
            "csv",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let written = stdout_of(&out).lines().count();
    assert!(written > 1000, "{written}");
    assert!(
        stderr_of(&out).contains(&format!(
            "{} rows were written before the error",
            written - 1
        )),
        "{}",
        stderr_of(&out)
    );
    // `--sql-only`: refused SQL is refused (exit 5), not printed; words are
    // no answer (exit 1).
    let server = ModelServer::start(vec![
        fenced("DELETE FROM t"),
        Reply::Text("There is nothing to count.".into()),
        fenced("SELECT count(*) FROM t"),
    ]);
    let run = |q: &str| {
        sb.aiq_with(&server, "openai")
            .args([db, "--sql-only", "-q", q])
            .output()
            .unwrap()
    };
    let out = run("remove everything");
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "");
    let out = run("count nothing");
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "");
    let out = run("count the rows");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "SELECT count(*) FROM t\n");
    // Nothing was deleted.
    let left: i64 = rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 2002);
}

/// `aiq sessions` lists a session → `-s` by the listed name (with or
/// without `.json`) restores it, in a script and in a chat that says
/// what it restored.
#[test]
fn a_session_is_restored_by_the_name_aiq_lists() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced("SELECT count(*) AS n FROM customers"),
        fenced("SELECT count(*) AS n FROM orders"),
        fenced("SELECT 1 AS one"),
    ]);
    let mut p = pty(&sb, &[db.as_os_str()], Some(&server), "dumb");
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many customers").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let name = listed_session(&sb);
    let bare = name.trim_end_matches(".json").to_string();
    let out = sb
        .aiq_with(&server, "openai")
        .args(["-s", &bare, "-q", "and orders?", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    // The follow-up carried the first turn.
    let second = &server.chats()[1].raw;
    assert!(second.contains("how many customers"), "{second}");
    let mut p = pty(&sb, &["-s".as_ref(), name.as_ref()], Some(&server), "dumb");
    p.expect("restored 2 turns (last ").unwrap();
    p.expect("aiq[").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
}

/// A question the model could not answer (an error from its server, an
/// empty reply) stays in the session marked as failed, not as an answer:
/// `aiq sessions show` says so, and a follow-up tells the model.
#[test]
fn a_question_that_got_no_answer_is_kept_as_failed() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced("SELECT count(*) AS n FROM customers"),
        Reply::Status(
            400,
            r#"{"error": {"message": "model not loaded"}}"#.into(),
            None,
        ),
        Reply::Text(String::new()),
        fenced("SELECT 1 AS one"),
    ]);
    let mut p = pty(&sb, &[db.as_os_str()], Some(&server), "dumb");
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many customers").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("revenue per month").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("best product").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let name = listed_session(&sb);
    let shown = stdout_of(&sb.aiq().args(["sessions", "show", &name]).output().unwrap());
    let after = |q: &str| {
        shown
            .split(q)
            .nth(1)
            .unwrap_or_else(|| panic!("{q}: {shown}"))
    };
    let month = after("revenue per month");
    assert!(
        month.contains("assistant: (failed, no answer)") && month.contains("model not loaded"),
        "{shown}"
    );
    assert!(
        after("best product").contains("assistant: (failed, no answer)")
            && after("best product").contains("empty answer"),
        "{shown}"
    );
    assert!(
        !after("how many customers")
            .split("revenue")
            .next()
            .unwrap()
            .contains("failed"),
        "{shown}"
    );
    // The follow-up carries the failed questions as such.
    let out = sb
        .aiq_with(&server, "openai")
        .args(["-s", &name, "-q", "try again", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let last = server.chats().last().unwrap().raw.clone();
    assert!(
        last.contains("revenue per month") && last.contains("(no answer: "),
        "{last}"
    );
}

/// A suite with a case whose reference SQL is broken: the run goes on,
/// the report (written where -o says) marks it broken, the model is not
/// asked it, and the exit code says the suite needs fixing.
#[test]
fn an_eval_with_a_broken_case_says_which_and_fails() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let suite = sb.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[case]]\nid = \"count\"\nquestion = \"How many customers?\"\nsql = \"SELECT count(*) FROM customers\"\n\n[[case]]\nid = \"typo\"\nquestion = \"How many clients?\"\nsql = \"SELECT count(*) FROM clients\"\n",
    )
    .unwrap();
    let server = ModelServer::start(vec![fenced("SELECT count(*) FROM customers")]);
    let report = sb.path().join("report.json");
    let out = sb
        .aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .arg("-o")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("broken, their reference SQL failed: typo"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        stdout_of(&out).contains("1 of 1 cases pass (100.0%)"),
        "{}",
        stdout_of(&out)
    );
    let json = std::fs::read_to_string(&report).unwrap();
    assert!(json.contains("\"verdict\": \"broken\""), "{json}");
    assert_eq!(server.chats().len(), 1, "the broken case was not asked");
}

/// Someone used to the sqlite3 shell or psql types its commands in the
/// chat: each is answered with where aiq shows the tables, and nothing is
/// sent to the model.
#[test]
fn a_database_shell_habit_in_the_chat_points_to_schema() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![]);
    let mut p = pty(&sb, &[db.as_os_str()], Some(&server), "dumb");
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line(".tables").unwrap();
    p.expect("is a database shell's command; here /schema lists the tables")
        .unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("\\d orders").unwrap();
    p.expect("/schema TABLE for one").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/sql .schema orders").unwrap();
    p.expect("is a command of the sqlite3 shell, not SQL")
        .unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    assert!(server.chats().is_empty(), "nothing went to the model");
}

/// In the full-screen view: ask → F2 puts the SQL in the input with its
/// start in sight → change it and run → F3 keeps what ran, and says so.
#[test]
fn in_the_view_f2_edits_and_f3_keeps_what_ran() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![fenced(
        "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC LIMIT 5",
    )]);
    let mut s = common::screen::Screen::start(&sb, &server, &[db.to_str().unwrap(), "--tui"]);
    s.wait_for("ready");
    s.send("top countries by customers\r");
    s.wait_for("3 rows in");
    s.send("\x1bOQ"); // F2
    s.wait_for("/sql SELECT country");
    // The cursor is at the start: go to the end, 5 → 2, run it.
    s.send("\x1b[F");
    s.send("\x7f2\r");
    s.wait_for("2 rows in");
    s.send("\x1bOR"); // F3
    s.wait_for("Kept: SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n");
    s.wait_for("DESC LIMIT 2");
    s.send("\x11"); // Ctrl-Q
    s.wait_for("to continue.");
    let kept: String = std::fs::read_dir(sb.home().join("examples"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        kept.contains("LIMIT 2") && !kept.contains("LIMIT 5"),
        "{kept}"
    );
}
