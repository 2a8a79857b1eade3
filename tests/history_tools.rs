//! The history tools (SPEC §5, helper tools): a scripted model that calls
//! `search_history` and `get_turn` before it answers with SQL reaches
//! turns the prompt no longer carries (cut by `--history-limit`) and
//! earlier sessions on the same source, within the privacy settings; the
//! calls show in the chat, go into the session file and the audit log; and
//! `aiq sessions search TEXT` finds the same from the shell.

#![cfg(unix)]

mod common;

use std::fs;
use std::path::PathBuf;

use common::llm::{ModelServer, Reply};
use common::{pty, sessions_in, stdout_of, Sandbox};
use expectrl::Expect;
use serde_json::{json, Value};

const EMAIL: &str = "ann@private.example";
const EARLIER: &str = "session_20261115090000.json";

fn database(sb: &Sandbox) -> PathBuf {
    let path = sb.path().join("crm.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, country TEXT);
         INSERT INTO customers VALUES (1, 'Ann', '{EMAIL}', 'Germany'), (2, 'Bob', 'bob@x.example', 'Spain');
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total INTEGER);
         INSERT INTO orders VALUES (1, 1, 100), (2, 2, 250);"
    ))
    .unwrap();
    path
}

/// An earlier session on `crm`: revenue from Germany, and the customers'
/// emails.
fn earlier_session(sb: &Sandbox) {
    let file = json!({
        "version": 1,
        "metadata": {"created_at": "2026-11-15T09:00:00Z", "last_updated": "2026-11-15T09:05:00Z",
                     "data_source": "crm", "database_type": "sqlite"},
        "messages": [
            {"role": "user", "content": "revenue from Germany last week", "timestamp": "2026-11-15T09:00:05Z"},
            {"role": "assistant", "content": "```sql\nSELECT sum(o.total) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'Germany'\n```",
             "timestamp": "2026-11-15T09:00:07Z",
             "sql": "SELECT sum(o.total) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'Germany'",
             "row_count": 1, "preview": "revenue\n100\n"},
            {"role": "user", "content": "the customers' emails", "timestamp": "2026-11-15T09:01:05Z"},
            {"role": "assistant", "content": "```sql\nSELECT name, email FROM customers\n```", "timestamp": "2026-11-15T09:01:07Z",
             "sql": "SELECT name, email FROM customers", "row_count": 2,
             "preview": format!("name,email\nAnn,{EMAIL}\nBob,bob@x.example\n")},
        ],
    });
    fs::create_dir_all(sb.home()).unwrap();
    fs::write(
        sb.home().join(EARLIER),
        serde_json::to_string_pretty(&file).unwrap(),
    )
    .unwrap();
}

fn setup() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    let db = database(&sb);
    sb.write_config(&format!(
        "[sources]\n[sources.crm]\nurl = \"{}\"\nredact = [\"customers.email\"]\n",
        db.display()
    ));
    earlier_session(&sb);
    (sb, db)
}

const GERMANY_SQL: &str = "SELECT sum(o.total) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'Germany'";

#[test]
fn the_model_searches_history_then_answers_with_sql() {
    let (sb, _) = setup();
    let server = ModelServer::start(vec![
        Reply::Text(
            "```sql\nSELECT count(*) AS n FROM customers WHERE country = 'Spain'\n```".into(),
        ),
        Reply::Tool(
            "search_history",
            json!({"query": "Germany Spain emails", "limit": 5}),
        ),
        Reply::Tool("get_turn", json!({"n": 1, "session": EARLIER})),
        Reply::Text(format!("```sql\n{GERMANY_SQL}\n```")),
    ]);
    let mut p = pty(
        &sb,
        &["crm".as_ref(), "--history-limit".as_ref(), "0".as_ref()],
        Some(&server),
        "dumb",
    );
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("how many customers in Spain?").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("what did we look at about Germany last week?")
        .unwrap();
    // The calls show like SQL does.
    p.expect("search_history").unwrap();
    p.expect("get_turn").unwrap();
    p.expect("100").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();

    let chats = server.chats();
    assert_eq!(chats.len(), 4);
    // The first turn is out of the prompt (history limit 0) …
    assert!(!chats[1].raw.contains("in Spain?"));
    // … but search_history finds it, and the earlier session's turns.
    let searched = &chats[2].raw;
    assert!(searched.contains("[turn 1, "), "{searched}");
    assert!(searched.contains("how many customers in Spain?"));
    assert!(searched.contains(&format!("turn 1 of {EARLIER}")));
    assert!(searched.contains("revenue from Germany last week"));
    // get_turn gives the whole answer with its result.
    let turn = &chats[3].raw;
    assert!(
        turn.contains("Question: revenue from Germany last week"),
        "{turn}"
    );
    assert!(turn.contains("revenue\\n100"), "{turn}");
    // The redacted column's values never went out, earlier sessions included.
    for c in &chats {
        assert!(!c.raw.contains(EMAIL), "a request carries the email");
    }
    // The lookups are in the session file and the audit log.
    let files: Vec<PathBuf> = sessions_in(&sb.home())
        .into_iter()
        .filter(|p| !p.ends_with(EARLIER))
        .collect();
    assert_eq!(files.len(), 1);
    let session: Value = serde_json::from_str(&fs::read_to_string(&files[0]).unwrap()).unwrap();
    let lookups = &session["messages"][3]["lookups"];
    assert_eq!(lookups[0]["name"], "search_history");
    assert_eq!(lookups[1]["name"], "get_turn");
    let log_dir = sb.home().join("logs");
    let log: String = fs::read_dir(&log_dir)
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let all: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Each model request is there too, with what it cost.
    let (requests, lines): (Vec<Value>, Vec<Value>) =
        all.into_iter().partition(|l| l["kind"] == "model");
    assert_eq!(requests.len(), 4, "{log}");
    assert_eq!(lines.len(), 2, "{log}");
    assert_eq!(lines[0]["mode"], "tool");
    assert!(lines[0]["program"]
        .as_str()
        .unwrap()
        .starts_with("search_history "));
    assert_eq!(lines[0]["source"], "crm");
}

#[test]
fn sessions_search_finds_turns_from_the_shell() {
    let (sb, _) = setup();
    let out = sb
        .aiq()
        .args(["sessions", "search", "Germany"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = stdout_of(&out);
    assert!(
        text.starts_with(&format!(
            "[turn 1 of {EARLIER} (crm), 2026-11-15 09:00] Q: revenue from Germany last week\n"
        )),
        "{text}"
    );
    assert!(text.contains("  result: 1 row\n"), "{text}");
    assert!(!text.contains("emails"), "{text}");
    let out = sb
        .aiq()
        .args(["sessions", "search", "zebra"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(stdout_of(&out).is_empty());
    let out = sb
        .aiq()
        .args(["sessions", "search", "Germany", "--source", "elsewhere.db"])
        .output()
        .unwrap();
    assert!(stdout_of(&out).is_empty());
}
