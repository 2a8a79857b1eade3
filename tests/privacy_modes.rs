//! What leaves the machine holds in every mode (SPEC §4.3): a Lua
//! program's printed output, its `aiq.table` result and its error messages
//! pass the same guard as SQL results, and an engine's error that quotes a
//! redacted value is masked before it goes back to the model for a fix —
//! asserted on every request body the scripted model server received.

#![cfg(unix)]

mod common;

use std::fs;
use std::path::PathBuf;

use common::llm::{ModelServer, Reply};
use common::{pty, stderr_of, Sandbox};
use expectrl::Expect;

const EMAILS: [&str; 2] = ["ann@private.example", "bob@private.example"];
const SALARY: &str = "987654";

fn lua_block(code: &str) -> Reply {
    Reply::Text(format!("A program:\n```lua\n{code}\n```\n"))
}

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// Every request body the server got, as sent.
fn bodies(server: &ModelServer) -> Vec<String> {
    server.chats().into_iter().map(|r| r.raw).collect()
}

fn assert_nothing_private(server: &ModelServer) {
    for (i, body) in bodies(server).iter().enumerate() {
        for secret in EMAILS.iter().chain([&SALARY]) {
            assert!(
                !body.contains(secret),
                "request {i} carries {secret}: {body}"
            );
        }
        assert!(
            !body.contains("payroll"),
            "request {i} names the hidden table: {body}"
        );
    }
}

/// A SQLite file with customers (emails redacted) and a hidden payroll.
fn sqlite(sb: &Sandbox) -> PathBuf {
    let path = sb.path().join("crm.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, country TEXT);
         INSERT INTO customers VALUES (1, 'Ann', '{}', 'DE'), (2, 'Bob', '{}', 'FR');
         CREATE TABLE payroll (id INTEGER PRIMARY KEY, salary INTEGER);
         INSERT INTO payroll VALUES (1, {SALARY});",
        EMAILS[0], EMAILS[1]
    ))
    .unwrap();
    path
}

/// The same customers as a CSV folder (DuckDB).
fn csv_folder(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("crm");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("customers.csv"),
        format!(
            "id,name,email,country\n1,Ann,{},DE\n2,Bob,{},FR\n",
            EMAILS[0], EMAILS[1]
        ),
    )
    .unwrap();
    fs::write(dir.join("payroll.csv"), format!("id,salary\n1,{SALARY}\n")).unwrap();
    dir
}

fn configure(sb: &Sandbox, url: &std::path::Path, extra: &str) {
    sb.write_config(&format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{}\"\nexclude = [\"payroll\"]\nredact = [\"customers.email\"]\n{extra}",
        url.display()
    ));
}

/// A program that reads emails through a query it builds at run time, so
/// no column name is in its text, prints them and shows them as a table.
const SHOWS_EMAILS: &str = r#"local col = "em" .. "ail"
local rows = aiq.query("SELECT name, " .. col .. " AS c FROM customers ORDER BY id")
for _, r in ipairs(rows) do print(r.name .. " <" .. r.c .. ">") end
aiq.table(rows)"#;

/// A program that fails with a value in its message.
const FAILS_WITH_EMAIL: &str = r#"local col = "em" .. "ail"
local rows = aiq.query("SELECT " .. col .. " AS c FROM customers ORDER BY id")
error("boom " .. rows[1].c)"#;

fn lua_chat_keeps_values_home(sb: &Sandbox, source: &std::path::Path, extra: &str) {
    configure(sb, source, extra);
    let server = ModelServer::start(vec![
        lua_block(SHOWS_EMAILS),
        lua_block(FAILS_WITH_EMAIL),
        lua_block(FAILS_WITH_EMAIL),
        lua_block(FAILS_WITH_EMAIL),
        Reply::Text("Two customers.".into()),
    ]);
    let mut p = pty(
        sb,
        &["crm".as_ref(), "--mode".as_ref(), "lua".as_ref()],
        Some(&server),
        "dumb",
    );
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("who are the customers?").unwrap();
    // The user sees the values.
    p.expect(EMAILS[1]).unwrap();
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("the first one's address, please").unwrap();
    p.expect("boom ").unwrap();
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("how many are there?").unwrap();
    p.expect("Two customers.").unwrap();
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("saved to").unwrap();
    let chats = server.chats();
    assert_eq!(chats.len(), 5, "one, three tries, one");
    assert_nothing_private(&server);
    // The model still learns where the program failed, and what was held back.
    let last = &chats[4].raw;
    assert!(
        last.contains("The program failed: at line 3; its message is not sent"),
        "{last}"
    );
    assert!(last.contains("values not sent"), "{last}");
}

#[test]
fn lua_output_results_and_errors_keep_redacted_values_home_on_sqlite() {
    let sb = Sandbox::new();
    let db = sqlite(&sb);
    lua_chat_keeps_values_home(&sb, &db, "");
}

#[test]
fn lua_output_results_and_errors_keep_redacted_values_home_on_a_csv_folder() {
    let sb = Sandbox::new();
    let dir = csv_folder(&sb);
    lua_chat_keeps_values_home(&sb, &dir, "");
}

#[test]
fn with_send_results_off_a_programs_values_stay_home() {
    let sb = Sandbox::new();
    let db = sqlite(&sb);
    configure(&sb, &db, "send_results = false\n");
    let server = ModelServer::start(vec![
        lua_block("for _, r in ipairs(aiq.query('SELECT name FROM customers')) do print('seen ' .. r.name) end"),
        Reply::Text("ok".into()),
    ]);
    let mut p = pty(
        &sb,
        &["crm".as_ref(), "--mode".as_ref(), "lua".as_ref()],
        Some(&server),
        "dumb",
    );
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("names?").unwrap();
    p.expect("seen Bob").unwrap();
    p.expect("aiq[crm lua]> ").unwrap();
    p.send_line("and?").unwrap();
    p.expect("aiq[crm lua]> ").unwrap();
    let second = &server.chats()[1].raw;
    assert!(!second.contains("seen Ann"), "{second}");
    assert!(second.contains("send_results is off"), "{second}");
}

#[test]
fn an_engine_error_quoting_a_redacted_value_is_masked_for_the_fix() {
    let sb = Sandbox::new();
    let dir = csv_folder(&sb);
    configure(&sb, &dir, "");
    let server = ModelServer::start(vec![
        fenced("SELECT CAST(email AS INTEGER) AS n FROM customers"),
        fenced("SELECT count(*) AS n FROM customers"),
    ]);
    let out = sb
        .aiq_with(&server, "openai")
        .args(["crm", "-q", "emails as numbers", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    // The user sees the engine's whole message.
    assert!(stderr_of(&out).contains(EMAILS[0]), "{}", stderr_of(&out));
    let fix = &server.chats()[1].raw;
    assert!(
        fix.contains(
            "Conversion Error: (its message may hold values the statement read; not sent)"
        ),
        "{fix}"
    );
    assert_nothing_private(&server);
}

/// Values an engine repeats without quotes stay home too: DuckDB's
/// `strptime` answers with the string it could not parse on a line of its
/// own, and `error(email)` makes the value the message; the fix requests
/// carry the error's kind and the statement's own line, not the values.
#[test]
fn values_an_engine_repeats_unquoted_stay_home() {
    let sb = Sandbox::new();
    let dir = csv_folder(&sb);
    configure(&sb, &dir, "");
    let server = ModelServer::start(vec![
        fenced("SELECT strptime(email, '%Y') AS d FROM customers"),
        fenced("SELECT error(email) AS e FROM customers"),
        fenced("SELECT count(*) AS n FROM customers"),
    ]);
    let out = sb
        .aiq_with(&server, "openai")
        .args(["crm", "-q", "emails as dates", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let chats = server.chats();
    assert_eq!(chats.len(), 3);
    for chat in &chats[1..] {
        assert!(
            chat.raw.contains(
                "Invalid Input Error: (its message may hold values the statement read; not sent)"
            ),
            "{}",
            chat.raw
        );
    }
    assert_nothing_private(&server);
}

/// A column left out (`exclude = ["customers.email"]`) is not named to the
/// model by the engine's own suggestion either: DuckDB answers a misspelt
/// column with `Candidate bindings: "email"`, and the fix request carries
/// that message with the name replaced.
#[test]
fn an_engines_suggestion_does_not_name_a_column_left_out() {
    let sb = Sandbox::new();
    let dir = csv_folder(&sb);
    sb.write_config(&format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{}\"\nexclude = [\"payroll\", \"customers.email\"]\n",
        dir.display()
    ));
    let server = ModelServer::start(vec![
        fenced("SELECT emal FROM customers"),
        fenced("SELECT count(*) AS n FROM customers"),
    ]);
    let out = sb
        .aiq_with(&server, "openai")
        .args(["crm", "-q", "how many customers?", "-f", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let fix = &server.chats()[1].raw;
    assert!(
        fix.contains("emal"),
        "the error goes back for the fix: {fix}"
    );
    assert!(fix.contains("(hidden column)"), "{fix}");
    for (i, body) in bodies(&server).iter().enumerate() {
        assert!(
            !body.contains("email"),
            "request {i} names the column left out: {body}"
        );
    }
}

/// A turn keeps the rules it was made under (SPEC §4.3): a result
/// withheld on `crm` (emails redacted) stays withheld after `/source` to a
/// source without privacy keys, in the chat and when the session goes on
/// with `-s FILE sales -q`.
#[test]
fn history_keeps_the_rules_it_was_made_under_across_sources() {
    let sb = Sandbox::new();
    let crm = sqlite(&sb);
    // A source with no privacy keys (and none of crm's values).
    let copy = sb.path().join("sales.db");
    rusqlite::Connection::open(&copy)
        .unwrap()
        .execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT);
             INSERT INTO customers VALUES (1, 'Cy', 'cy@public.example');",
        )
        .unwrap();
    sb.write_config(&format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{}\"\nexclude = [\"payroll\"]\nredact = [\"customers.email\"]\n\
         [sources.sales]\nurl = \"{}\"\n",
        crm.display(),
        copy.display()
    ));
    let server = ModelServer::start(vec![
        fenced("SELECT name, email FROM customers ORDER BY id"),
        Reply::Text("Noted.".into()),
        Reply::Text("Still noted.".into()),
    ]);
    let mut p = pty(&sb, &["crm".as_ref()], Some(&server), "dumb");
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("the customers' emails").unwrap();
    p.expect(EMAILS[1]).unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/source sales").unwrap();
    p.expect("aiq[sales]> ").unwrap();
    p.send_line("thanks, anything else?").unwrap();
    p.expect("Noted.").unwrap();
    p.expect("aiq[sales]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("saved to").unwrap();
    let session = fs::read_dir(sb.home())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("session_"))
        })
        .expect("a session file");
    let out = sb
        .aiq_with(&server, "openai")
        .args([
            "-s".as_ref(),
            session.as_os_str(),
            "sales".as_ref(),
            "-q".as_ref(),
            "and now?".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let chats = server.chats();
    assert_eq!(chats.len(), 3);
    assert_nothing_private(&server);
    assert!(chats[1].raw.contains("values not sent"), "{}", chats[1].raw);
    assert!(chats[2].raw.contains("values not sent"), "{}", chats[2].raw);
}
