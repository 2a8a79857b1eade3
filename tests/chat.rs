//! The chat in a pseudo-terminal against the scripted model server:
//! follow-ups carry the conversation, slash commands, the session file and
//! the exact exit lines, restore (chat and `-s FILE -q`), trimming, bad
//! files, a vanished data source, staleness.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::llm::{ModelServer, Reply};
use common::{pty, sessions_in, Sandbox};
use expectrl::session::OsSession;
use expectrl::Expect;
use predicates::prelude::*;
use serde_json::{json, Value};

const PER_COUNTRY: &str =
    "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country";

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

fn spawn(sb: &Sandbox, server: &ModelServer, args: &[&str]) -> OsSession {
    spawn_in(sb, server, args, "dumb")
}

/// With `term` = `xterm`, rustyline edits in raw mode (completion, Ctrl-C at
/// the prompt); it then asks the terminal for the cursor position and waits
/// up to 100 ms, so a test pauses after each prompt before typing.
fn spawn_in(sb: &Sandbox, server: &ModelServer, args: &[&str], term: &str) -> OsSession {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    pty(sb, &args, Some(server), term)
}

fn exit_code(p: &OsSession) -> String {
    format!("{:?}", p.get_process().wait().unwrap())
}

/// A session file with `pairs` question/answer pairs about `db`.
fn session_file(path: &Path, db: &Path, pairs: usize, last_updated: &str) {
    let mut messages = Vec::new();
    for i in 0..pairs {
        messages.push(json!({"role": "user", "content": format!("question {i}"), "timestamp": "2026-01-26T10:00:05Z"}));
        messages.push(json!({"role": "assistant", "content": format!("```sql\nSELECT {i}\n```"), "timestamp": "2026-01-26T10:00:07Z",
                             "sql": format!("SELECT {i}"), "row_count": 1}));
    }
    let file = json!({
        "version": 1,
        "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": last_updated,
                     "data_source": db.canonicalize().unwrap().display().to_string(), "database_type": "sqlite"},
        "messages": messages,
    });
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[test]
fn two_turns_history_commands_and_the_session_file() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced(PER_COUNTRY),
        fenced("SELECT count(*) AS n FROM customers WHERE country = 'DE'"),
    ]);
    let mut p = spawn(&sb, &server, &[db.to_str().unwrap()]);
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many customers per country?").unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("and only in DE?").unwrap();
    p.expect("│ 2 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/history").unwrap();
    p.expect("] user: how many customers per country?").unwrap();
    p.expect("    rows: 3").unwrap();
    p.expect("] user: and only in DE?").unwrap();
    p.send_line("/histroy").unwrap();
    p.expect("unknown command /histroy; did you mean /history?")
        .unwrap();
    p.send_line("/schema orders").unwrap();
    p.expect("customer_id INTEGER not null -> customers.id")
        .unwrap();
    p.send_line("/format csv").unwrap();
    p.expect("Output format: csv").unwrap();
    p.send_line("/sql SELECT count(*) AS total FROM orders")
        .unwrap();
    p.expect("total").unwrap();
    p.expect("6").unwrap();
    p.send_line("/sql DELETE FROM orders").unwrap();
    p.expect("refused: DELETE changes data").unwrap();
    p.send_line("/save /no/such/dir/s.json").unwrap();
    p.expect("warning: cannot save the session").unwrap();
    p.send_line("/save").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to ~/.aiqconfig/session_")
        .unwrap();
    p.expect("Run 'aiq -s ~/.aiqconfig/session_").unwrap();
    assert!(exit_code(&p).contains(", 0)"));

    // The second request carried the first question and answer (REQ-2).
    let chats = server.chats();
    assert_eq!(chats.len(), 2);
    let second = chats[1].messages();
    let roles: Vec<&str> = second.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(second[1].1, "how many customers per country?");
    assert!(second[2].1.contains(PER_COUNTRY));
    assert!(second[2].1.contains("Result: 3 rows"), "{}", second[2].1);
    assert_eq!(second[3].1, "and only in DE?");

    // The file: name, shape, contents.
    let files = sessions_in(&sb.home());
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.len() == "session_20260126100000.json".len() && name.ends_with(".json"),
        "{name}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    let created = v["metadata"]["created_at"].as_str().unwrap();
    assert_eq!(
        &name[8..22],
        created.replace(['-', ':', 'T'], "").trim_end_matches('Z')
    );
    assert!(
        chrono::DateTime::parse_from_rfc3339(v["metadata"]["last_updated"].as_str().unwrap())
            .is_ok()
    );
    assert_eq!(
        v["metadata"]["data_source"],
        db.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(v["metadata"]["database_type"], "sqlite");
    let messages = v["messages"].as_array().unwrap();
    // Two questions, and the statement run with /sql: it joins the
    // conversation (the refused one does not).
    assert_eq!(messages.len(), 6);
    assert_eq!(messages[4]["content"], "(I ran this SQL myself.)");
    assert_eq!(messages[5]["sql"], "SELECT count(*) AS total FROM orders");
    assert_eq!(messages[5]["row_count"], 1);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["sql"], PER_COUNTRY);
    assert_eq!(messages[1]["row_count"], 3);
    for m in messages {
        assert!(chrono::DateTime::parse_from_rfc3339(m["timestamp"].as_str().unwrap()).is_ok());
    }
    // `aiq sessions` lists it (3 turns: 2 questions, a statement run by
    // hand); show and rm work.
    sb.aiq()
        .arg("sessions")
        .assert()
        .success()
        .stdout(predicate::str::contains(name.as_str()).and(predicate::str::contains("  3\n")));
    sb.aiq()
        .args(["sessions", "show", &name])
        .assert()
        .success()
        .stdout(predicate::str::contains("] user: and only in DE?"));
    sb.aiq().args(["sessions", "rm", &name]).assert().success();
    assert!(sessions_in(&sb.home()).is_empty());
}

#[test]
fn clear_asks_and_yes_gives_the_model_a_fresh_context() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced("SELECT 1 AS a"),
        fenced("SELECT 2 AS b"),
        fenced("SELECT 3 AS c"),
    ]);
    let mut p = spawn(&sb, &server, &[db.to_str().unwrap()]);
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("first").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/clear").unwrap();
    p.expect("Clear conversation history? [y/N] ").unwrap();
    p.send_line("n").unwrap();
    p.expect("History kept.").unwrap();
    p.send_line("second").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/clear").unwrap();
    p.expect("Clear conversation history? [y/N] ").unwrap();
    p.send_line("y").unwrap();
    p.expect("History cleared").unwrap();
    p.send_line("third").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/history").unwrap();
    p.expect("] user: first").unwrap();
    p.expect("] user: third").unwrap();
    p.send_line("/quit").unwrap();
    p.expect("Current session saved to").unwrap();
    let chats = server.chats();
    assert_eq!(chats[1].messages().len(), 4, "after no, the history stays");
    let third = chats[2].messages();
    assert_eq!(third.len(), 2, "after yes: exactly system + question");
    assert_eq!(third[1].1, "third");
}

#[test]
fn restore_then_follow_up_in_chat_and_single_shot() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("saved.json");
    session_file(&file, &db, 1, &now());
    let server = ModelServer::start(vec![fenced("SELECT 10 AS x"), fenced("SELECT 20 AS y")]);
    let mut p = spawn(&sb, &server, &["-s", file.to_str().unwrap()]);
    p.expect("aiq[").unwrap();
    p.send_line("and then?").unwrap();
    p.expect("10").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(format!("Current session saved to {}", file.display()))
        .unwrap();
    p.expect(format!("Run 'aiq -s {}' to continue.", file.display()))
        .unwrap();
    let first = server.chats()[0].messages();
    assert_eq!(first.len(), 4);
    assert_eq!(first[1].1, "question 0");
    assert_eq!(first[3].1, "and then?");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), 4);
    // One follow-up from a script, appended to the same file (SPEC §7.3).
    sb.aiq_with(&server, "openai")
        .args([
            "-s",
            file.to_str().unwrap(),
            "-q",
            "and after that?",
            "-f",
            "csv",
        ])
        .assert()
        .success()
        .stdout("y\n20\n");
    let second = server.chats()[1].messages();
    assert_eq!(second.len(), 6);
    assert_eq!(second[3].1, "and then?");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), 6);
    assert_eq!(v["messages"][5]["sql"], "SELECT 20 AS y");
    // An explicit SOURCE wins over the session's.
    let duck = sb.shop_duckdb();
    server.push(fenced("SELECT 30 AS z"));
    sb.aiq_with(&server, "openai")
        .arg(&duck)
        .args([
            "-s",
            file.to_str().unwrap(),
            "-q",
            "same on DuckDB?",
            "-f",
            "csv",
        ])
        .assert()
        .success()
        .stdout("z\n30\n");
    let third = &server.chats()[2].messages();
    assert!(third[0].1.contains("DuckDB database"), "{}", third[0].1);
    assert_eq!(third.len(), 8);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["metadata"]["data_source"],
        duck.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(v["metadata"]["database_type"], "duckdb");
}

#[test]
fn thirty_pairs_are_trimmed_to_twenty() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("long.json");
    session_file(&file, &db, 30, &now());
    let server = ModelServer::start(vec![fenced("SELECT 1 AS one")]);
    sb.aiq_with(&server, "openai")
        .args(["-s", file.to_str().unwrap(), "-q", "one more", "-f", "csv"])
        .assert()
        .success();
    let msgs = server.chats()[0].messages();
    assert_eq!(msgs.len(), 1 + 40 + 1);
    assert_eq!(msgs[1].1, "question 10");
    assert_eq!(msgs[41].1, "one more");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["messages"].as_array().unwrap().len(),
        62,
        "the file keeps every message"
    );
}

#[test]
fn bad_session_files_are_named_and_refused() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let good = sb.path().join("good.json");
    session_file(&good, &db, 1, &now());
    let text = std::fs::read_to_string(&good).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("corrupt.json", b"{{{ nope".to_vec(), "not valid JSON"),
        (
            "truncated.json",
            text.as_bytes()[..text.len() / 2].to_vec(),
            "not valid JSON",
        ),
        (
            "latin1.json",
            b"{\"metadata\": \"caf\xe9\"}".to_vec(),
            "not UTF-8",
        ),
        ("huge.json", vec![b' '; 11 * 1024 * 1024], "at most 10 MB"),
        (
            "fields.json",
            br#"{"metadata": {}}"#.to_vec(),
            "`messages` is missing",
        ),
    ];
    let server = ModelServer::start(vec![]);
    for (name, bytes, why) in &cases {
        let path = sb.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        sb.aiq_with(&server, "openai")
            .arg(&db)
            .args(["-s", path.to_str().unwrap(), "-q", "hi"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!("cannot restore {}", path.display()))
                    .and(predicate::str::contains(*why)),
            );
    }
    sb.aiq_with(&server, "openai")
        .args(["-s", "missing.json", "-q", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such file"));
    assert!(server.chats().is_empty());
    // In chat: the problem is named, then a new session starts.
    let server = ModelServer::start(vec![fenced("SELECT 5 AS five")]);
    let corrupt = sb.path().join("corrupt.json");
    let mut p = spawn(
        &sb,
        &server,
        &[db.to_str().unwrap(), "-s", corrupt.to_str().unwrap()],
    );
    p.expect("not valid JSON").unwrap();
    p.expect("starting a new session").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("hello").unwrap();
    p.expect("five").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to ~/.aiqconfig/session_")
        .unwrap();
    assert_eq!(server.chats()[0].messages().len(), 2);
    assert_eq!(
        std::fs::read(&corrupt).unwrap(),
        b"{{{ nope",
        "the bad file is left alone"
    );
}

#[test]
fn a_vanished_data_source_asks_for_another() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("moved.json");
    session_file(&file, &db, 1, &now());
    let text = std::fs::read_to_string(&file).unwrap().replace(
        &db.canonicalize().unwrap().display().to_string(),
        "/nowhere/gone.db",
    );
    std::fs::write(&file, text).unwrap();
    let server = ModelServer::start(vec![fenced("SELECT 7 AS seven")]);
    let mut p = spawn(&sb, &server, &["-s", file.to_str().unwrap()]);
    p.expect("the data source '/nowhere/gone.db' cannot be opened")
        .unwrap();
    p.expect("Source (a saved name or a path): ").unwrap();
    p.send_line("./nope.db").unwrap();
    p.expect("cannot open ./nope.db").unwrap();
    p.expect("Source (a saved name or a path): ").unwrap();
    p.send_line(db.to_str().unwrap()).unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("again?").unwrap();
    p.expect("seven").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to").unwrap();
    assert_eq!(
        server.chats()[0].messages().len(),
        4,
        "restored history sent"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["metadata"]["data_source"],
        db.canonicalize().unwrap().display().to_string()
    );
}

#[test]
fn a_stale_session_offers_a_fresh_context() {
    for answer in ["n", "y"] {
        let sb = Sandbox::new();
        let db = sb.shop_sqlite();
        let file = sb.path().join("old.json");
        session_file(&file, &db, 2, "2026-01-01T00:00:00Z");
        let server = ModelServer::start(vec![fenced("SELECT 8 AS eight")]);
        let mut p = spawn(&sb, &server, &["-s", file.to_str().unwrap()]);
        p.expect("Continue the previous conversation? [y/N] ")
            .unwrap();
        p.send_line(answer).unwrap();
        p.expect("aiq[shop.db]> ").unwrap();
        p.send_line("now what?").unwrap();
        p.expect("eight").unwrap();
        p.send_line("/history").unwrap();
        p.expect("] user: question 0").unwrap();
        p.send_line("/exit").unwrap();
        p.expect("Current session saved to").unwrap();
        let msgs = server.chats()[0].messages();
        if answer == "n" {
            assert_eq!(msgs.len(), 2, "fresh context: system + question");
        } else {
            assert_eq!(msgs.len(), 6, "continued: both old pairs");
        }
    }
}

#[test]
fn line_editing_completion_multi_line_ctrl_c_and_ctrl_d() {
    use expectrl::ControlCode;
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced("SELECT 1 AS one"),
        Reply::Slow(Duration::from_secs(20), Box::new(fenced("SELECT 2 AS two"))),
        fenced("SELECT 3 AS three"),
    ]);
    let mut p = spawn_in(&sb, &server, &[db.to_str().unwrap()], "xterm");
    let prompt = |p: &mut OsSession| {
        p.expect("aiq[shop.db]> ").unwrap();
        std::thread::sleep(Duration::from_millis(300));
    };
    prompt(&mut p);
    // A trailing backslash continues the question on the next line.
    p.send_line("how many \\").unwrap();
    p.send_line("customers?").unwrap();
    p.expect("one").unwrap();
    prompt(&mut p);
    // Ctrl-C during a turn cancels it; the conversation is kept.
    p.send_line("something slow").unwrap();
    std::thread::sleep(Duration::from_millis(700));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("cancelled; the conversation is kept").unwrap();
    prompt(&mut p);
    // Ctrl-C at the prompt clears the line.
    p.send("half a question").unwrap();
    p.send(ControlCode::EndOfText).unwrap();
    prompt(&mut p);
    // Tab completes slash commands and table names.
    p.send("/hist\t").unwrap();
    p.send("\r").unwrap();
    p.expect("] user: how many").unwrap();
    p.send("count vi\t").unwrap();
    p.send("\r").unwrap();
    p.expect("three").unwrap();
    prompt(&mut p);
    // Ctrl-D saves and leaves.
    p.send(ControlCode::EndOfTransmission).unwrap();
    p.expect("Current session saved to ~/.aiqconfig/session_")
        .unwrap();
    assert!(exit_code(&p).contains(", 0)"));
    let chats = server.chats();
    let first = chats[0].messages();
    assert_eq!(first[1].1, "how many \ncustomers?");
    let last = chats.last().unwrap().messages();
    assert_eq!(last.last().unwrap().1, "count vip");
    assert_eq!(
        last.len(),
        4,
        "the cancelled turn left no trace: system + first pair + question"
    );
    let typed = std::fs::read_to_string(sb.home().join("input_history")).unwrap();
    assert!(typed.contains("something slow"), "{typed}");
}

/// Keeps SQLite busy for many seconds (until cancelled).
const SLOW_SQL: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c";

/// Ctrl-C while the model is thinking, while its answer streams, and while
/// the statement runs: each time the turn is cancelled and the next
/// question's rows appear (a cancel must never reach the next turn).
#[test]
fn ctrl_c_in_every_phase_leaves_the_next_turn_working() {
    use expectrl::ControlCode;
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Slow(
            Duration::from_secs(30),
            Box::new(fenced("SELECT 1 AS never")),
        ),
        fenced(PER_COUNTRY),
        Reply::Stall(
            "```sql\nSELECT count(*) AS streamed".into(),
            Duration::from_secs(30),
        ),
        fenced("SELECT count(*) AS vip_count FROM customers WHERE vip"),
        fenced(SLOW_SQL),
        fenced("SELECT max(total) AS biggest FROM orders"),
    ]);
    let mut p = spawn(&sb, &server, &[db.to_str().unwrap()]);
    p.expect("aiq[shop.db]> ").unwrap();

    // While thinking.
    p.send_line("a slow question").unwrap();
    std::thread::sleep(Duration::from_millis(700));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("cancelled; the conversation is kept").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many customers per country?").unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();

    // While the answer streams.
    p.send_line("a stalling answer").unwrap();
    p.expect("SELECT count(*) AS streamed").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("cancelled; the conversation is kept").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many VIPs?").unwrap();
    p.expect("vip_count").unwrap();
    p.expect("2 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();

    // While the statement runs.
    p.send_line("a slow query").unwrap();
    p.expect("x < 2000000000").unwrap();
    std::thread::sleep(Duration::from_millis(700));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("cancelled; the conversation is kept").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("the biggest order?").unwrap();
    p.expect("biggest").unwrap();
    p.expect("100 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to").unwrap();
    assert!(exit_code(&p).contains(", 0)"));
}

/// `/edit` puts the last SQL on the next input line as `/sql …`: Enter
/// runs it as it is, or as changed, through the gate.
#[test]
fn edit_puts_the_last_sql_in_the_line_to_change_and_run() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![fenced(
        "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country",
    )]);
    let mut p = spawn_in(&sb, &server, &[db.to_str().unwrap()], "xterm");
    let prompt = |p: &mut OsSession| {
        p.expect("aiq[shop.db]> ").unwrap();
        std::thread::sleep(Duration::from_millis(300));
    };
    prompt(&mut p);
    p.send_line("customers per country?").unwrap();
    p.expect("FR").unwrap();
    prompt(&mut p);
    p.send_line("/edit").unwrap();
    p.expect("/sql SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The cursor is at the end: narrow it, and run.
    p.send_line(" LIMIT 1").unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    prompt(&mut p);
    p.send_line("/sql SELECT count(*) AS everyone FROM customers")
        .unwrap();
    p.expect("everyone").unwrap();
    prompt(&mut p);
    p.send_line("/edit").unwrap();
    p.expect("/sql SELECT count(*) AS everyone FROM customers")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    p.send_line(" WHERE vip").unwrap();
    p.expect("everyone").unwrap();
    p.expect("2 │").unwrap();
    prompt(&mut p);
    p.send_line("/exit").unwrap();
    p.expect("Current session saved").unwrap();
    // One model request: /edit and /sql never ask the model.
    assert_eq!(server.chats().len(), 1);
}

/// `/source` in the chat: a data file left out is said as a warning, and
/// a server that turns down a login without a password has it asked for
/// on the terminal, without echo, and takes it.
#[test]
fn source_in_the_chat_warns_and_asks_for_a_password_on_the_terminal() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let lake = sb.lake_with_an_empty_file();
    let server = ModelServer::start(vec![]);
    let mut p = spawn(&sb, &server, &[db.to_str().unwrap()]);
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line(format!("/source {}", lake.display())).unwrap();
    p.expect("the file is empty").unwrap();
    p.expect("(1 tables); the conversation is kept").unwrap();
    let Some(pg) = common::servers::postgres() else {
        return;
    };
    p.send_line(format!("/source {}", pg.url_without_password()))
        .unwrap();
    p.expect("Password for analyst@127.0.0.1").unwrap();
    p.send_line(common::servers::PASSWORD).unwrap();
    let switched = p.expect("tables); the conversation is kept").unwrap();
    let shown = String::from_utf8_lossy(switched.before()).into_owned();
    assert!(
        !shown.contains(common::servers::PASSWORD),
        "echoed: {shown}"
    );
    p.send_line("/quit").unwrap();
    assert!(exit_code(&p).contains(", 0)"), "{}", exit_code(&p));
}
