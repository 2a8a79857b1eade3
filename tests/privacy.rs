//! What the model knows and what leaves the machine (SPEC §4.3), asserted
//! on the requests the scripted model server receives: notes reach the
//! model (and travel with the tables they name), hidden tables are neither
//! described nor queryable on any path (`-e`, `/sql`, model SQL, Lua),
//! `samples = false` sends no sample value, `send_results = false` sends
//! columns and row counts only, and a redacted column's values never
//! appear in any request of a whole chat. `aiq schema --as-sent` shows
//! the same.

#![cfg(unix)]

mod common;

use std::fs;
use std::path::PathBuf;

use common::llm::{ModelServer, Reply};
use common::{pty, stderr_of, stdout_of, Sandbox};
use expectrl::Expect;

/// Values that must never leave the machine.
const EMAILS: [&str; 2] = ["ann@private.example", "bob@private.example"];
const PHONES: [&str; 2] = ["+49-555-0101", "+33-555-0202"];
/// A sample value of a text column that no query here selects.
const SAMPLE: &str = "Marketplace";
const SALARY: &str = "987654";

/// customers (with an email, a phone and a channel), orders, and a payroll
/// table that is hidden.
fn database(sb: &Sandbox) -> PathBuf {
    let path = sb.path().join("crm.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, phone TEXT, country TEXT, channel TEXT);
         INSERT INTO customers VALUES (1, 'Ann', '{e0}', '{p0}', 'Germany', '{SAMPLE}'), (2, 'Bob', '{e1}', '{p1}', 'France', '{SAMPLE}');
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total INTEGER, status TEXT, ordered_at TEXT);
         INSERT INTO orders VALUES (1, 1, 100, 'delivered', '2026-01-05'), (2, 2, 250, 'cancelled', '2026-02-07');
         CREATE TABLE payroll (id INTEGER PRIMARY KEY, salary INTEGER);
         INSERT INTO payroll VALUES (1, {SALARY});",
        e0 = EMAILS[0],
        e1 = EMAILS[1],
        p0 = PHONES[0],
        p1 = PHONES[1],
    ))
    .unwrap();
    path
}

/// A saved source `crm` with `extra` keys in its table.
fn configure(sb: &Sandbox, db: &std::path::Path, extra: &str) {
    sb.write_config(&format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{}\"\n{extra}",
        db.display()
    ));
}

fn notes(sb: &Sandbox, text: &str) {
    let dir = sb.home().join("notes");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("crm.md"), text).unwrap();
}

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// Every request body the server got, as sent.
fn bodies(server: &ModelServer) -> Vec<String> {
    server.chats().into_iter().map(|r| r.raw).collect()
}

const REVENUE_NOTE: &str = "Revenue means the sum of orders.total without cancelled orders.";

#[test]
fn notes_and_privacy_hold_over_a_whole_chat() {
    let sb = Sandbox::new();
    let db = database(&sb);
    configure(
        &sb,
        &db,
        "exclude = [\"payroll\"]\nsamples = false\nredact = [\"customers.email\", \"*.phone\"]\n",
    );
    notes(
        &sb,
        &format!("# CRM\n- {REVENUE_NOTE}\n- Amounts are in euros.\n"),
    );
    let server = ModelServer::start(vec![
        fenced("SELECT substr(ordered_at, 1, 7) AS month, sum(total) AS revenue FROM orders WHERE status <> 'cancelled' GROUP BY 1"),
        fenced("SELECT name, email, phone FROM customers"),
        fenced("SELECT * FROM customers"),
        fenced("SELECT country, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1"),
        Reply::Text("Germany has one customer.".into()),
    ]);
    let mut p = pty(&sb, &["crm".as_ref()], Some(&server), "dumb");
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("revenue per month").unwrap();
    p.expect("100").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("list the customers with their contacts")
        .unwrap();
    // The user sees the values; the model will not.
    p.expect(EMAILS[0]).unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("everything about them").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/note Germany is our home market.").unwrap();
    p.expect("Noted in").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/sql SELECT * FROM payroll").unwrap();
    p.expect("payroll is hidden from aiq").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("customers per country").unwrap();
    p.expect("Germany").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("which market is biggest?").unwrap();
    p.expect("Germany has one customer.").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 5);
    // The note about revenue travels with the orders table; the general
    // note goes ahead of the schema; /note reaches the next question.
    assert!(bodies[0].contains(REVENUE_NOTE), "{}", bodies[0]);
    assert!(bodies[0].contains("Amounts are in euros."));
    assert!(!bodies[2].contains("home market"));
    assert!(bodies[3].contains("Germany is our home market."));
    for (i, body) in bodies.iter().enumerate() {
        for secret in EMAILS.iter().chain(&PHONES) {
            assert!(!body.contains(secret), "request {i} carries {secret}");
        }
        assert!(!body.contains(SAMPLE), "request {i} carries a sample value");
        assert!(!body.contains("payroll"), "request {i} names payroll");
        assert!(!body.contains(SALARY), "request {i} carries a salary");
    }
    // Results that read a redacted column go with their columns only; the
    // others with their values.
    assert!(bodies[2].contains("values not sent: they include a redacted column"));
    assert!(bodies[4].contains("France,1"), "{}", bodies[4]);
}

#[test]
fn with_send_results_off_the_model_sees_columns_and_counts_only() {
    let sb = Sandbox::new();
    let db = database(&sb);
    sb.write_config(&format!(
        "[privacy]\nsend_results = false\n[sources]\n[sources.crm]\nurl = \"{}\"\n",
        db.display()
    ));
    let server = ModelServer::start(vec![
        fenced("SELECT name, country FROM customers ORDER BY id"),
        fenced("SELECT count(*) AS n FROM customers"),
    ]);
    let mut p = pty(&sb, &["crm".as_ref()], Some(&server), "dumb");
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("customers and countries").unwrap();
    p.expect("Germany").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("how many?").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1].contains("Result: 2 rows"), "{}", bodies[1]);
    assert!(bodies[1].contains("name,country\\n(values not sent: send_results is off)"));
    // Samples are on: the schema carries them, the result preview does not.
    assert!(bodies[1].contains("'Ann'"), "samples are on");
    assert!(!bodies[1].contains("Ann,Germany"), "{}", bodies[1]);
}

#[test]
fn a_hidden_table_is_refused_on_every_path() {
    let sb = Sandbox::new();
    let db = database(&sb);
    configure(&sb, &db, "exclude = [\"pay*\"]\n");
    // -e
    let out = sb
        .aiq()
        .args(["crm", "-e", "SELECT salary FROM payroll"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(stdout_of(&out).is_empty());
    assert!(
        stderr_of(&out).contains("refused: payroll is hidden from aiq in this source"),
        "{}",
        stderr_of(&out)
    );
    // The engine's catalog would list it.
    let out = sb
        .aiq()
        .args(["crm", "-e", "SELECT name FROM sqlite_master"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    // --tables narrows further, for any source.
    let out = sb
        .aiq()
        .arg(&db)
        .args(["--tables", "orders", "-e", "SELECT * FROM customers"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    sb.aiq()
        .arg(&db)
        .args(["--tables", "orders", "-e", "SELECT count(*) FROM orders"])
        .args(["-f", "csv"])
        .assert()
        .success()
        .stdout("count(*)\n2\n");
    // Model SQL: refused, not "fixed" by the model, exit 5.
    let server = ModelServer::start(vec![fenced("SELECT * FROM payroll")]);
    let out = sb
        .aiq_with(&server, "openai")
        .args(["crm", "-q", "what do we pay?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert_eq!(server.chats().len(), 1);
    assert!(!server.chats()[0].raw.contains("payroll"));
    // Lua's aiq.query goes through the same gate.
    let script = sb.path().join("pay.lua");
    fs::write(&script, "aiq.table(aiq.query('SELECT * FROM payroll'))").unwrap();
    let out = sb
        .aiq()
        .arg("crm")
        .arg("--lua")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(!stdout_of(&out).contains(SALARY));
    // … and so does a program the model writes in Lua mode.
    let server = ModelServer::start(vec![Reply::Text(
        "```lua\naiq.table(aiq.query('SELECT salary FROM payroll'))\n```".into(),
    )]);
    let out = sb
        .aiq_with(&server, "openai")
        .args(["crm", "--mode", "lua", "-q", "salaries?", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("payroll is hidden from aiq"));
    assert!(!stdout_of(&out).contains(SALARY));
    // Not described either.
    let out = sb.aiq().args(["schema", "crm"]).output().unwrap();
    assert!(out.status.success());
    assert!(!stdout_of(&out).contains("payroll"));
    assert!(stdout_of(&out).contains("table orders"));
}

#[test]
fn schema_as_sent_shows_notes_samples_and_what_is_held_back() {
    let sb = Sandbox::new();
    let db = database(&sb);
    configure(
        &sb,
        &db,
        "exclude = [\"payroll\"]\nredact = [\"customers.email\"]\n",
    );
    notes(&sb, &format!("- {REVENUE_NOTE}\n- Amounts are in euros.\n"));
    let out = sb
        .aiq()
        .args(["schema", "crm", "--as-sent"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.starts_with("-- system message\nYou are aiq"), "{text}");
    assert!(text.contains(&format!("table orders (~2 rows) -- note: {REVENUE_NOTE}")));
    assert!(text.contains("Notes about this data from the user"));
    assert!(text.contains("- Amounts are in euros."));
    assert!(text.contains(&format!("e.g. '{SAMPLE}'")), "{text}");
    assert!(!text.contains(EMAILS[0]));
    assert!(!text.contains("payroll\n") && !text.contains("table payroll"));
    assert!(text.contains("-- never sent (redact): customers.email"));
    assert!(text.contains("-- tables left out (exclude payroll)"));
    // `aiq notes show` prints the file.
    sb.aiq()
        .args(["notes", "show", "crm"])
        .assert()
        .success()
        .stdout(format!("- {REVENUE_NOTE}\n- Amounts are in euros.\n"));
}

#[test]
fn notes_edit_opens_the_editor_on_the_sources_file() {
    let sb = Sandbox::new();
    let db = database(&sb);
    configure(&sb, &db, "");
    let editor = sb.script(
        "editor.sh",
        "echo '- Orders with status test are not real.' >> \"$1\"",
    );
    sb.aiq()
        .args(["notes", "edit", "crm"])
        .env("EDITOR", &editor)
        .env_remove("VISUAL")
        .assert()
        .success();
    let text = fs::read_to_string(sb.home().join("notes").join("crm.md")).unwrap();
    assert!(
        text.starts_with("<!--"),
        "a new file starts with the example"
    );
    assert!(text.ends_with("- Orders with status test are not real.\n"));
    // `aiq schema` prints each note once, with the tables it names.
    let out = sb.aiq().args(["schema", "crm"]).output().unwrap();
    assert!(stdout_of(&out).contains("- Orders with status test are not real.  [tables: orders]"));
    // A file given directly has notes of its own, by its path.
    sb.aiq()
        .args(["notes", "edit", "./crm.db"])
        .env("EDITOR", &editor)
        .assert()
        .success();
    let key = db
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
        .trim_start_matches('/')
        .replace('/', "_");
    assert!(sb.home().join("notes").join(format!("{key}.md")).is_file());
    let out = sb.aiq().args(["schema", "crm.db"]).output().unwrap();
    assert!(stdout_of(&out).contains("- Orders with status test are not real.  [tables: orders]"));
}
