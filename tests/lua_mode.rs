//! Lua mode against the scripted model server: the model answers with a
//! ```lua block or a `run_lua` tool call (both wire formats), the program's
//! output and result table come out, a failing program goes back to the
//! model and is fixed visibly, a refused statement exits 5, Ctrl-C stops a
//! running program, the session keeps program, output and preview for
//! follow-ups in either mode, and every run is in the audit log.

mod common;

use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::llm::{ModelServer, Reply};
use common::{stderr_of, stdout_of, Sandbox, SECRET_KEY};
use serde_json::{json, Value};

const PROGRAM: &str = "local rows = aiq.query(\"SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country\")\nprint(#rows .. ' countries')\naiq.table(rows)";
const ANSWER: &str = "3 countries\ncountry,n\nDE,2\nFR,1\nUS,2\n";

fn lua_block(code: &str) -> Reply {
    Reply::Text(format!("Here is a program:\n```lua\n{code}\n```\n"))
}

/// Every line of the audit log but the model requests' costs, parsed.
fn audit(sb: &Sandbox) -> Vec<Value> {
    let mut lines = Vec::new();
    let Ok(dir) = std::fs::read_dir(sb.home().join("logs")) else {
        return lines;
    };
    for file in dir {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        assert!(!text.contains(SECRET_KEY), "the key is in the audit log");
        lines.extend(
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|l| l["kind"] != "model"),
        );
    }
    lines
}

#[test]
fn a_lua_block_answers_the_question() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![lua_block(PROGRAM)]);
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["--mode", "lua", "-q", "customers per country?", "-f", "csv"])
        .assert()
        .success()
        .stdout(ANSWER)
        .stderr("");
    let r = &server.chats()[0];
    assert_eq!(r.body["tools"][0]["function"]["name"], "run_lua");
    let msgs = r.messages();
    assert_eq!(msgs.len(), 2, "system + question, as in SQL mode");
    let system = &msgs[0].1;
    assert!(
        system.contains("by writing a short Lua 5.4 program"),
        "{system}"
    );
    assert!(system.contains("aiq.query(sql [, params])"), "{system}");
    assert!(system.contains("```lua"), "{system}");
    assert!(system.contains("table customers (~5 rows)"), "{system}");
    let log = audit(&sb);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["origin"], "model");
    assert_eq!(log[0]["status"], "ok");
    assert_eq!(log[0]["program"], PROGRAM);
    assert_eq!(log[0]["calls"][0]["function"], "query");
    assert_eq!(log[0]["calls"][0]["rows"], 3);
    assert_eq!(
        log[0]["result"],
        json!({"rows": 3, "columns": ["country", "n"]})
    );
    assert_eq!(log[0]["output_bytes"], 12);
}

#[test]
fn run_lua_tool_calls_in_both_formats() {
    for provider in ["openai", "anthropic"] {
        for stream in [true, false] {
            let sb = Sandbox::new();
            let db = sb.shop_duckdb();
            let server = ModelServer::start(vec![Reply::Tool("run_lua", json!({"code": PROGRAM}))]);
            let mut cmd = sb.aiq_with(&server, provider);
            cmd.arg(&db)
                .args(["--mode", "lua", "-q", "customers per country?", "-f", "csv"]);
            if !stream {
                cmd.arg("--no-stream");
            }
            cmd.assert().success().stdout(ANSWER);
        }
    }
}

#[test]
fn a_failing_program_goes_back_to_the_model_and_is_fixed_visibly() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![lua_block("print(nope.x)"), lua_block(PROGRAM)]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&db)
        .args(["--mode", "lua", "-q", "customers per country?", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), ANSWER);
    assert!(
        stderr_of(&out)
            .contains("aiq: retrying (1): program:1: attempt to index a nil value (global 'nope')"),
        "{}",
        stderr_of(&out)
    );
    let second = server.chats()[1].messages();
    let (role, feedback) = second.last().unwrap();
    assert_eq!(role, "user");
    assert!(
        feedback.starts_with("That Lua program failed: program:1: attempt to index a nil value"),
        "{feedback}"
    );
    let statuses: Vec<Value> = audit(&sb).iter().map(|l| l["status"].clone()).collect();
    assert_eq!(statuses, [json!("error"), json!("ok")]);
}

#[test]
fn a_limit_goes_back_to_the_model_and_three_failures_exit_1() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[lua]\nmax_output_kb = 1\n");
    let flood = "for i = 1, 100 do print(string.rep('x', 100)) end";
    let server = ModelServer::start(vec![lua_block(flood), lua_block(flood), lua_block(flood)]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&db)
        .args(["--mode", "lua", "-q", "make noise", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("aiq: the Lua program hit the output limit of 1 KB"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(server.chats().len(), 3, "two fixes, then it gives up");
}

#[test]
fn a_refused_statement_exits_5_and_changes_nothing() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let before = std::fs::read(&db).unwrap();
    let server = ModelServer::start(vec![lua_block("aiq.query('DELETE FROM orders')")]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&db)
        .args(["--mode", "lua", "-q", "clean up", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("refused: DELETE changes data"));
    assert_eq!(stdout_of(&out), "");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(
        server.chats().len(),
        1,
        "a refusal is not sent back to be fixed"
    );
    assert_eq!(audit(&sb)[0]["status"], "refused");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_running_program_with_130() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[lua]\ntimeout_secs = 60\n");
    let server = ModelServer::start(vec![lua_block("while true do end")]);
    let child = sb
        .std_aiq_with(&server, "openai")
        .arg(&db)
        .args(["--mode", "lua", "-q", "spin"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(audit(&sb)[0]["status"], "cancelled");
}

#[test]
fn the_session_keeps_the_program_for_follow_ups_in_either_mode() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("s.json");
    // A file written by an earlier version: no Lua fields anywhere.
    let old = json!({
        "version": 1,
        "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": "2026-01-26T10:00:00Z",
                     "data_source": db.canonicalize().unwrap().display().to_string(), "database_type": "sqlite"},
        "messages": [
            {"role": "user", "content": "how many orders?", "timestamp": "2026-01-26T10:00:05Z"},
            {"role": "assistant", "content": "```sql\nSELECT count(*) FROM orders\n```", "timestamp": "2026-01-26T10:00:07Z",
             "sql": "SELECT count(*) FROM orders", "row_count": 1}
        ]
    });
    std::fs::write(&file, old.to_string()).unwrap();
    let server = ModelServer::start(vec![
        lua_block(PROGRAM),
        Reply::Text("```sql\nSELECT count(*) AS n FROM customers WHERE country = 'DE'\n```".into()),
    ]);
    sb.aiq_with(&server, "openai")
        .arg("-s")
        .arg(&file)
        .args(["--mode", "lua", "-q", "customers per country?", "-f", "csv"])
        .assert()
        .success()
        .stdout(ANSWER);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let answer = &saved["messages"][3];
    assert_eq!(answer["lua"], PROGRAM);
    assert_eq!(answer["output"], "3 countries\n");
    assert_eq!(answer["row_count"], 3);
    assert_eq!(answer["preview"], "country,n\nDE,2\nFR,1\nUS,2\n");
    assert!(saved["messages"][1].get("lua").is_none());

    // The follow-up, in SQL mode, sees the program, its output and result.
    sb.aiq_with(&server, "openai")
        .arg("-s")
        .arg(&file)
        .args(["-q", "and only in DE?", "-f", "csv"])
        .assert()
        .success()
        .stdout("n\n2\n");
    let msgs = server.chats()[1].messages();
    let (role, earlier) = &msgs[4];
    assert_eq!(role, "assistant");
    assert!(
        earlier.contains("```lua\nlocal rows = aiq.query("),
        "{earlier}"
    );
    assert!(
        earlier.contains("The program printed:\n3 countries"),
        "{earlier}"
    );
    assert!(
        earlier.contains("Result: 3 rows (CSV, first rows):\ncountry,n\nDE,2"),
        "{earlier}"
    );
    let log = audit(&sb);
    assert_eq!(log[0]["session"], file.display().to_string());
}

/// `/mode lua` in the chat: the program, each host call, the output and the
/// table; Ctrl-C stops a looping program and the chat goes on.
#[cfg(unix)]
#[test]
fn in_the_chat_mode_lua_shows_program_calls_and_result_and_ctrl_c_keeps_it() {
    use expectrl::{ControlCode, Expect};
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[lua]\ntimeout_secs = 60\n");
    let server = ModelServer::start(vec![
        Reply::Tool("run_lua", json!({"code": PROGRAM})),
        lua_block("local n = 0\nwhile true do n = n + 1 end"),
        lua_block("aiq.table(aiq.query('SELECT count(*) AS n FROM orders'))"),
    ]);
    let mut p = common::pty(&sb, &[db.as_os_str()], Some(&server), "dumb");
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/mode").unwrap();
    p.expect("Mode: sql").unwrap();
    p.send_line("/mode lua").unwrap();
    p.expect("Mode: lua — the model answers with a Lua program")
        .unwrap();
    p.expect("aiq[shop.db lua]> ").unwrap();
    p.send_line("customers per country?").unwrap();
    p.expect("local rows = aiq.query(").unwrap();
    p.expect("→ aiq.query SELECT country, count(*) AS n FROM customers")
        .unwrap();
    p.expect("← aiq.query: 3 rows in").unwrap();
    p.expect("3 countries").unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    p.expect("aiq[shop.db lua]> ").unwrap();
    p.send_line("spin").unwrap();
    p.expect("while true do n = n + 1 end").unwrap();
    std::thread::sleep(Duration::from_millis(800));
    p.send(ControlCode::EndOfText).unwrap();
    p.expect("cancelled; the conversation is kept").unwrap();
    p.expect("aiq[shop.db lua]> ").unwrap();
    p.send_line("how many orders?").unwrap();
    p.expect("│ 6 │").unwrap();
    p.expect("aiq[shop.db lua]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to").unwrap();
    let third = server.chats()[2].messages();
    assert_eq!(
        third.len(),
        4,
        "the cancelled turn left no trace: {third:?}"
    );
    let statuses: Vec<Value> = audit(&sb).iter().map(|l| l["status"].clone()).collect();
    assert_eq!(statuses, [json!("ok"), json!("cancelled"), json!("ok")]);
    assert!(audit(&sb)[0]["session"]
        .as_str()
        .unwrap()
        .contains("session_"));
}

#[test]
fn sql_only_prints_the_program_and_runs_nothing() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![lua_block(PROGRAM)]);
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args([
            "--mode",
            "lua",
            "--sql-only",
            "-q",
            "customers per country?",
        ])
        .assert()
        .success()
        .stdout(format!("{PROGRAM}\n"));
    assert!(audit(&sb).is_empty(), "nothing ran, nothing logged");
}
