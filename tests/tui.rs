//! The full-screen view (`--tui`) as a person uses it: the real binary in
//! an 80×24 pseudo-terminal against the scripted model server, its screen
//! read back through a terminal emulator (vt100). Ask and see rows, cancel
//! a slow turn with Ctrl-C, ask again, leave with Ctrl-D — then the session
//! file, the shared input history, the two printed lines, and a terminal
//! put back as it was. Restoring a stale session answers its question in a
//! dialog; `/sql` and `/clear` work as in the chat; `c` and `/chart` show
//! a chart in the result pane.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::llm::{ModelServer, Reply};
use common::screen::Screen;
use common::{sessions_in, Sandbox};
use serde_json::{json, Value};

const PER_COUNTRY: &str =
    "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country";
const IN_DE: &str = "SELECT name FROM customers WHERE country = 'DE' ORDER BY name";

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("Here you go:\n```sql\n{sql}\n```"))
}

#[test]
fn ask_cancel_ask_again_and_leave_with_the_session_saved() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        fenced(PER_COUNTRY),
        Reply::Slow(Duration::from_secs(30), Box::new(fenced("SELECT 1"))),
        fenced(IN_DE),
    ]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap(), "--tui"]);
    s.wait_for("Ask about your data");
    assert!(s.vt.screen().alternate_screen());
    s.wait_for("shop.db · sqlite");

    s.send("how many customers per country?\r");
    s.wait_for("3 rows in");
    let screen = s.text();
    assert!(screen.contains("1 │ DE      │ 2"), "{screen}");
    assert!(screen.contains("3 │ US      │ 2"), "{screen}");

    // A slow turn: the screen stays live and Ctrl-C cancels it.
    s.send("a slow one\r");
    s.wait_for("thinking");
    s.send("\x03");
    s.wait_for("Cancelled; the conversation is kept.");
    assert!(s.text().contains("ready"), "{}", s.text());

    s.send("and who is in DE?\r");
    s.wait_for("2 rows in");
    s.wait_for("1 │ Ann");
    s.wait_for("2 │ Cleo");

    s.send("\x04");
    s.wait_for("Run 'aiq -s ~/.aiqconfig/session_");
    let screen = s.text();
    assert!(
        screen.contains("Current session saved to ~/.aiqconfig/session_"),
        "{screen}"
    );
    assert!(s.exit_code().contains(", 0)"));
    // The terminal is as it was: main screen, cursor shown, no mouse or paste capture.
    let vt = s.vt.screen();
    assert!(!vt.alternate_screen());
    assert!(!vt.hide_cursor());
    assert_eq!(vt.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
    assert!(!vt.bracketed_paste());

    // The cancelled turn left no trace; the third request carried the first exchange.
    let chats = server.chats();
    assert_eq!(chats.len(), 3);
    let third = chats[2].messages();
    let roles: Vec<&str> = third.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(third[1].1, "how many customers per country?");
    assert_eq!(third[3].1, "and who is in DE?");

    let files = sessions_in(&sb.home());
    assert_eq!(files.len(), 1, "{files:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let messages = v["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["sql"], PER_COUNTRY);
    assert_eq!(messages[1]["row_count"], 3);
    assert_eq!(messages[3]["sql"], IN_DE);
    // The input history is the chat's, in its own format.
    let history = std::fs::read_to_string(sb.home().join("input_history")).unwrap();
    assert_eq!(
        history,
        "#V2\nhow many customers per country?\na slow one\nand who is in DE?\n"
    );
}

/// A session file about `db`, last used long ago.
fn stale_session(path: &Path, db: &Path) {
    let file = json!({
        "version": 1,
        "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": "2026-01-26T10:12:31Z",
                     "data_source": db.canonicalize().unwrap().display().to_string(), "database_type": "sqlite"},
        "messages": [
            {"role": "user", "content": "question 0", "timestamp": "2026-01-26T10:00:05Z"},
            {"role": "assistant", "content": "```sql\nSELECT 0\n```", "timestamp": "2026-01-26T10:00:07Z", "sql": "SELECT 0", "row_count": 1}
        ],
    });
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

#[test]
fn restore_a_stale_session_then_sql_and_clear_through_dialogs() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("old.json");
    stale_session(&file, &db);
    // Cut off four times: the first try and its three retries.
    let cut = Reply::Cut("```sql\nSELECT 6".into());
    let server = ModelServer::start(vec![
        cut.clone(),
        cut.clone(),
        cut.clone(),
        cut,
        fenced("SELECT 7 AS seven"),
    ]);
    let mut s = Screen::start(&sb, &server, &["-s", file.to_str().unwrap(), "--tui"]);
    s.wait_for("previous conversation?");
    // The restored exchange shows in the conversation pane.
    let screen = s.text();
    assert!(screen.contains("› question 0"), "{screen}");
    assert!(screen.contains("▌ SELECT 0"), "{screen}");
    s.send("n");
    s.wait_for("Starting a fresh context");
    // A model connection cut mid-answer shows in the panes; the session goes on.
    s.send("cut short?\r");
    s.wait_for("stream ended before the answer was complete");
    s.wait_for("ready");
    s.send("what now?\r");
    s.wait_for("1 row in");
    // No: the model got a fresh context: system, the question cut short
    // (kept as a question that got no answer), and the question.
    let sent = server.chats()[4].messages();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(sent[1].1, "cut short?");
    assert!(sent[2].1.starts_with("(no answer: "), "{sent:?}");

    s.send("/sql SELECT count(*) AS total FROM orders\r");
    s.wait_for("│ total");
    s.wait_for("1 │     6");
    // A huge result: the grid holds the first 10,000 rows, the rest are
    // counted for a moment, and the turn ends well before the statement timeout.
    s.send("/sql WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000000) SELECT i FROM n\r");
    s.wait_for("showing first 10,000 of");
    assert!(s.text().contains("+ rows"), "{}", s.text());
    s.send("/clear\r");
    s.wait_for("Clear conversation history?");
    s.send("y");
    s.wait_for("History cleared");
    s.send("/exit\r");
    s.wait_for("to continue.");
    let screen = s.text();
    assert!(
        screen.contains(&format!("Current session saved to {}", file.display())),
        "{screen}"
    );
    assert!(screen.contains(&format!("Run 'aiq -s {}' to continue.", file.display())));
    assert!(s.exit_code().contains(", 0)"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // The question cut short (marked failed), the question, and the two
    // statements run with /sql, which join the conversation.
    assert_eq!(v["messages"].as_array().unwrap().len(), 10);
    assert_eq!(v["messages"][2]["content"], "cut short?");
    assert!(v["messages"][3]["sql"].is_null());
    assert!(
        v["messages"][3]["error"]
            .as_str()
            .is_some_and(|e| e.contains("stream ended")),
        "{}",
        v["messages"][3]
    );
    assert_eq!(v["messages"][5]["sql"], "SELECT 7 AS seven");
    assert_eq!(
        v["messages"][7]["sql"],
        "SELECT count(*) AS total FROM orders"
    );
}

#[test]
fn c_switches_the_result_pane_to_a_chart_and_back_and_slash_chart_writes_a_file() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![fenced(PER_COUNTRY)]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap(), "--tui"]);
    s.wait_for("Ask about your data");
    s.send("how many customers per country?\r");
    s.wait_for("3 rows in");
    // Tab twice: the result pane; c: its chart.
    s.send("\t");
    s.send("\t");
    s.send("c");
    s.wait_for("Chart · how many customers per country?");
    s.wait_for("bar · n by country · c: table");
    let screen = s.text();
    assert!(screen.contains("DE │█"), "{screen}");
    assert!(screen.contains("US │█"), "{screen}");
    // c again: the table.
    s.send("c");
    s.wait_for("1 │ DE      │ 2");
    assert!(!s.text().contains("Chart ·"));
    // /chart from the input box: a kind by name, and an image.
    s.send("\t");
    s.send("\t");
    s.send("/chart hist\r");
    s.wait_for("hist · rows per n bin");
    s.send("/chart > per-country.png\r");
    s.wait_for("Chart written to per-country.png");
    s.send("\x04");
    s.wait_for("to continue.");
    assert!(s.exit_code().contains(", 0)"));
    let png = std::fs::read(sb.path().join("per-country.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}

#[test]
fn without_a_terminal_it_is_a_usage_error() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = sb.aiq().arg(&db).arg("--tui").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        common::stderr_of(&out),
        "aiq: --tui needs a terminal on stdin and stdout; for scripts ask with -q \"…\" or pipe the question\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn demo_opens_the_view_on_the_shop() {
    let sb = Sandbox::new();
    let server = ModelServer::start(vec![fenced(
        "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY status",
    )]);
    let mut s = Screen::start(&sb, &server, &["demo", "--tui"]);
    s.wait_for("Ask about your data");
    assert!(s.vt.screen().alternate_screen());
    s.wait_for("demo · sqlite");
    s.send("how many orders per status?\r");
    s.wait_for("rows in");
    let screen = s.text();
    assert!(screen.contains("│ delivered"), "{screen}");
    s.send("\x04");
    s.wait_for("Run 'aiq -s ~/.aiqconfig/session_");
    assert!(s.exit_code().contains(", 0)"));
    // The shop was written and saved as the source `demo`.
    assert!(sb.home().join("demo").join("shop.db").is_file());
    let config = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(config.contains("[sources.demo]"), "{config}");
}

#[test]
fn demo_view_without_a_terminal_writes_nothing() {
    let sb = Sandbox::new();
    let out = sb.aiq().args(["demo", "--tui"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        common::stderr_of(&out),
        "aiq: --tui needs a terminal on stdin and stdout; for scripts ask with -q \"…\" or pipe the question\n"
    );
    assert!(!sb.home().join("demo").exists());
    let out = sb
        .aiq()
        .args(["demo", "--tui", "-q", "why?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `/source` in the view: what opening says (a data file left out) lands
/// in the view's log, not printed over the screen, and a server that wants
/// a password asks for it in the view's own dialog — a dot per character,
/// never the characters — and takes it.
#[test]
fn source_in_the_view_says_warnings_in_its_log_and_asks_for_a_password() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let lake = sb.lake_with_an_empty_file();
    let server = ModelServer::start(vec![]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap(), "--tui"]);
    s.wait_for("shop.db · sqlite");
    s.send(&format!("/source {}\r", lake.display()));
    s.wait_for("1 tables); the conversation is kept");
    s.wait_for("the file is empty");
    assert!(s.vt.screen().alternate_screen());
    let Some(pg) = common::servers::postgres() else {
        return;
    };
    s.send(&format!("/source {}\r", pg.url_without_password()));
    s.wait_for("Password for analyst@127.0.0.1");
    s.send(common::servers::PASSWORD);
    s.wait_for(&"•".repeat(common::servers::PASSWORD.chars().count()));
    assert!(
        !s.text().contains(common::servers::PASSWORD),
        "{}",
        s.text()
    );
    s.send("\r");
    s.wait_for("· postgres");
    assert!(
        !s.text().contains(common::servers::PASSWORD),
        "{}",
        s.text()
    );
    s.send("\x04");
    assert!(s.exit_code().contains(", 0)"), "{}", s.text());
}
