//! `aiq mcp` under load, driven by the official MCP Python SDK
//! (tests/mcp/driver.py): parallel calls beyond `[mcp] max_concurrent`
//! wait their turn over stdio and over HTTP (with the bearer token) instead
//! of being refused; the queue's bound, its wait limit and cancellation of
//! a waiting call; the time waited in the audit log; a value too big for a
//! result is cut, not its row; DuckDB's memory ceiling.

mod common;

use common::mcp::{self, audit_lines, driver, Era, HttpServer, Target};
use common::{rss_kb, Sandbox};
use serde_json::{json, Value};

/// Keeps SQLite busy for many seconds, until interrupted.
const SLOW_SQLITE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c";

/// Keeps SQLite busy for a moment, then answers 200000.
const BRIEF_SQLITE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) AS n FROM c";

/// The `parallel` scenario's results, in call order.
fn results_of(out: &Value) -> &Vec<Value> {
    out["results"].as_array().expect("results")
}

/// The audit lines of the calls that ran `sql`.
fn audited(sb: &Sandbox, sql: &str) -> Vec<Value> {
    audit_lines(&sb.home())
        .into_iter()
        .filter(|l| l["sql"] == sql)
        .collect()
}

#[test]
fn parallel_calls_beyond_the_limit_wait_their_turn_over_stdio() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\nmax_concurrent = 2\n");
    let db = sb.shop_sqlite().display().to_string();
    for era in Era::ALL {
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "parallel",
            era,
            &["--calls", "8", "--sql", BRIEF_SQLITE],
            Target::Stdio(&["mcp", &db]),
        ));
        let results = results_of(&out);
        assert_eq!(results.len(), 8);
        for r in results {
            assert_eq!(r["is_error"], false, "{era:?}: {r}");
            assert_eq!(r["structured"]["rows"], json!([[200000]]), "{r}");
        }
    }
    // Every call is in the audit log; those beyond the two running ones
    // say how long they waited.
    let log = audited(&sb, BRIEF_SQLITE);
    assert_eq!(log.len(), 16, "{log:?}");
    assert!(log.iter().all(|l| l["error"].is_null()), "{log:?}");
    let waited = log
        .iter()
        .filter(|l| l["waited_ms"].as_u64().unwrap() > 0)
        .count();
    assert!(waited >= 12, "{waited} of 16 waited: {log:?}");
    for l in &log {
        assert!(l["waited_ms"].as_u64().unwrap() <= l["ms"].as_u64().unwrap());
    }
}

#[test]
fn concurrent_http_sessions_beyond_the_limit_wait_their_turn() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\nmax_concurrent = 2\n");
    let db = sb.shop_sqlite().display().to_string();
    let http = HttpServer::start(&sb, &[&db]);
    // Ten sessions at once, each with the bearer token.
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "parallel",
        Era::Legacy,
        &["--calls", "10", "--sessions", "--sql", BRIEF_SQLITE],
        Target::Http(&http.url),
    ));
    let results = results_of(&out);
    assert_eq!(results.len(), 10);
    for r in results {
        assert_eq!(r["is_error"], false, "{r}");
        assert_eq!(r["structured"]["rows"], json!([[200000]]), "{r}");
    }
    // And eight parallel calls in one session.
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "parallel",
        Era::Modern,
        &["--calls", "8", "--sql", BRIEF_SQLITE],
        Target::Http(&http.url),
    ));
    assert!(
        results_of(&out).iter().all(|r| r["is_error"] == false),
        "{out}"
    );
    assert_eq!(audited(&sb, BRIEF_SQLITE).len(), 18);
}

/// `max_concurrent = 1`, `max_queued = 1`: the slow call runs, the next
/// one waits and then runs, the two after it find the queue full.
fn check_full_queue(sb: &Sandbox, python: &std::path::Path, era: Era, target: Target<'_>) {
    let out = mcp::run(&mut driver(
        sb,
        python,
        "parallel",
        era,
        &[
            "--calls",
            "4",
            "--spacing",
            "0.3",
            "--sql",
            SLOW_SQLITE,
            "--sql",
            "SELECT 1 AS n",
            "--sql",
            "SELECT 2 AS n",
            "--sql",
            "SELECT 3 AS n",
        ],
        target,
    ));
    let r = results_of(&out);
    assert_eq!(
        r[0]["text"],
        "stopped: the call ran longer than 2 s (the server's limit, [mcp] timeout_secs); narrow the query"
    );
    assert_eq!(r[1]["structured"]["rows"], json!([[1]]), "{out}");
    let full = "busy: 1 calls are running and 1 are waiting already (the server's limits, [mcp] max_concurrent and [mcp] max_queued); try again when one has finished";
    for refused in &r[2..] {
        assert_eq!(refused["is_error"], true, "{refused}");
        assert_eq!(refused["text"], full, "{refused}");
    }
}

#[test]
fn a_full_queue_refuses_as_busy_and_says_why() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\ntimeout_secs = 2\nmax_concurrent = 1\nmax_queued = 1\n");
    let db = sb.shop_sqlite().display().to_string();
    check_full_queue(&sb, python, Era::Legacy, Target::Stdio(&["mcp", &db]));
    let http = HttpServer::start(&sb, &[&db]);
    check_full_queue(&sb, python, Era::Modern, Target::Http(&http.url));
    // The call that waited says how long: until the slow one was stopped.
    let waited = audited(&sb, "SELECT 1 AS n");
    assert_eq!(waited.len(), 2);
    for l in &waited {
        assert!(l["waited_ms"].as_u64().unwrap() >= 1000, "{l}");
        assert!(l["error"].is_null(), "{l}");
    }
    let refused = audited(&sb, "SELECT 3 AS n");
    assert_eq!(refused.len(), 2);
    assert!(refused[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("busy: 1 calls are running and 1 are waiting"));
}

#[test]
fn a_call_that_waits_too_long_is_refused_and_says_why() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\ntimeout_secs = 3\nmax_concurrent = 1\nqueue_timeout_secs = 1\n");
    let db = sb.shop_sqlite().display().to_string();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "parallel",
        Era::Legacy,
        &[
            "--calls",
            "2",
            "--spacing",
            "0.3",
            "--sql",
            SLOW_SQLITE,
            "--sql",
            "SELECT 1 AS n",
            "--after",
            "SELECT 5 AS n",
        ],
        Target::Stdio(&["mcp", &db]),
    ));
    let r = results_of(&out);
    assert_eq!(
        r[1]["text"],
        "busy: waited 1 s for one of the 1 running calls to finish (the server's limit, [mcp] queue_timeout_secs); try again later"
    );
    assert_eq!(
        r[0]["text"],
        "stopped: the call ran longer than 3 s (the server's limit, [mcp] timeout_secs); narrow the query"
    );
    assert_eq!(out["after"]["structured"]["rows"], json!([[5]]), "{out}");
    let log = audited(&sb, "SELECT 1 AS n");
    assert_eq!(log.len(), 1);
    assert!(log[0]["waited_ms"].as_u64().unwrap() >= 1000, "{log:?}");
}

#[test]
fn a_cancelled_waiting_call_leaves_the_queue() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\ntimeout_secs = 3\nmax_concurrent = 1\n");
    let db = sb.shop_sqlite().display().to_string();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "parallel",
        Era::Legacy,
        &[
            "--calls",
            "2",
            "--spacing",
            "0.3",
            "--cancel",
            "1",
            "--cancel-after",
            "0.5",
            "--sql",
            SLOW_SQLITE,
            "--sql",
            "SELECT 7 AS n",
            "--after",
            "SELECT 8 AS n",
        ],
        Target::Stdio(&["mcp", &db]),
    ));
    let r = results_of(&out);
    assert!(r[1].is_null(), "the cancelled call has no result: {out}");
    assert_eq!(out["after"]["structured"]["rows"], json!([[8]]), "{out}");
    // It left the queue when cancelled, long before the slow call ended,
    // and never ran.
    let log = audited(&sb, "SELECT 7 AS n");
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["error"], "cancelled");
    assert!(log[0]["rows"].is_null());
    assert!(log[0]["ms"].as_u64().unwrap() < 2000, "{log:?}");
}

#[test]
fn a_value_too_big_is_cut_and_its_row_is_shown() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_duckdb().display().to_string();
    let sql = "SELECT repeat('x', 1000000) AS big, id FROM customers ORDER BY id LIMIT 2";
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "basic",
        Era::Legacy,
        &["--sql", sql],
        Target::Stdio(&["mcp", &db]),
    ));
    let q = &out["query0"];
    assert_eq!(q["is_error"], false, "{q}");
    let s = &q["structured"];
    assert_eq!(s["row_count"], 2);
    assert_eq!(s["truncated"], false);
    assert_eq!(s["rows"][1][1], 2);
    let big = s["rows"][0][0].as_str().unwrap();
    assert!(big.starts_with("xxxxxxxx"), "{}", &big[..20]);
    assert!(big.ends_with("…(1.0 MB)"), "{}", &big[big.len() - 20..]);
    assert_eq!(big.len(), 256 * 1024 / 8);
    let text = q["text"].as_str().unwrap();
    assert!(
        text.contains("…(1.0 MB) | 1 |\n"),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(
        text.contains("(2 rows)\n(2 values were too long for the size limit and cut"),
        "{}",
        &text[text.len() - 400..]
    );
}

#[test]
fn the_memory_ceiling_comes_from_the_config_and_a_query_beyond_it_fails_clearly() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[query]\nmemory_limit = \"32MB\"\n");
    let db = sb.shop_duckdb().display().to_string();
    let hungry = "SELECT length(string_agg(md5(x::VARCHAR), ',')) AS n FROM range(5000000) t(x)";
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "basic",
        Era::Legacy,
        &[
            "--sql",
            hungry,
            "--sql",
            "SELECT count(*) AS n FROM customers",
        ],
        Target::Stdio(&["mcp", &db]),
    ));
    let failed = &out["query0"];
    assert_eq!(failed["is_error"], true, "{failed}");
    assert!(
        failed["text"].as_str().unwrap().contains(
            "the query needs more memory than DuckDB may use (32MB, [query] memory_limit)"
        ),
        "{failed}"
    );
    // The source still answers.
    assert_eq!(out["query1"]["structured"]["rows"], json!([[5]]), "{out}");
    // The CLI reads the same setting.
    let cli = sb.std_aiq().args([&db, "-e", hungry]).output().unwrap();
    assert!(!cli.status.success());
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert!(
        stderr.contains(
            "the query needs more memory than DuckDB may use (32MB, [query] memory_limit)"
        ),
        "{stderr}"
    );
}

/// An HTTP POST of `body` to the server at `url` with the token (and the
/// session's id when given), read to its end: its status and its text.
fn post(url: &str, session: Option<&str>, body: &str) -> (u16, String) {
    send("POST", url, session, body)
}

/// An HTTP `method` request as [`post`] sends it.
fn send(method: &str, url: &str, session: Option<&str>, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {}\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        mcp::HTTP_TOKEN,
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).to_string();
    let code = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, text)
}

/// The `Mcp-Session-Id` an `initialize` answer gives.
fn session_of(answer: &str) -> String {
    answer
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .expect("a session id")
}

/// `initialize` over HTTP: a client starting a session and never ending it.
fn initialize(url: &str) -> (u16, String) {
    post(
        url,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    )
}

/// Over HTTP a body that is not JSON, or a request of the wrong shape, is
/// answered with its JSON-RPC error (400), as over stdio; a session ended
/// once is not found the second time.
#[test]
fn http_bad_bodies_get_json_rpc_errors_and_an_ended_session_is_gone() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite().display().to_string();
    let http = HttpServer::start(&sb, &[&db]);
    let body_of = |text: &str| -> serde_json::Value {
        serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap_or_default()
    };
    for (body, id, code) in [
        ("not json", serde_json::Value::Null, -32700),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/li"#,
            serde_json::Value::Null,
            -32700,
        ),
        (
            r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
            serde_json::json!(4),
            -32600,
        ),
    ] {
        let (status, text) = post(&http.url, None, body);
        assert_eq!(status, 400, "{body}: {text}");
        let answer = body_of(&text);
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (id, serde_json::json!(code)),
            "{text}"
        );
    }
    let (code, text) = initialize(&http.url);
    assert_eq!(code, 200, "{text}");
    let session = session_of(&text);
    let (status, text) = post(
        &http.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#,
    );
    assert_eq!(status, 400, "{text}");
    let answer = body_of(&text);
    assert_eq!(answer["id"], 5, "{text}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("needs `name`"),
        "{text}"
    );
    let (status, text) = send("DELETE", &http.url, Some(&session), "");
    assert!(status == 200 || status == 202, "{text}");
    let (status, text) = send("DELETE", &http.url, Some(&session), "");
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("no such session"), "{text}");
}

/// A call that runs longer than `[mcp] session_idle_secs` is answered: a
/// session with a request being answered is never idle.
#[test]
fn a_long_call_outlives_the_idle_limit() {
    let sb = Sandbox::new();
    sb.write_config("[mcp]\nsession_idle_secs = 1\n");
    let db = sb.shop_sqlite().display().to_string();
    let http = HttpServer::start(&sb, &[&db]);
    let (code, text) = initialize(&http.url);
    assert_eq!(code, 200, "{text}");
    let session = session_of(&text);
    let (code, text) = post(
        &http.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(code, 202, "{text}");
    // About four seconds of counting in SQLite.
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 12000000) SELECT count(*) AS n FROM c";
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_query", "arguments": {"sql": slow}}});
    let started = std::time::Instant::now();
    let (code, text) = post(&http.url, Some(&session), &call.to_string());
    let took = started.elapsed();
    assert_eq!(code, 200, "{text}");
    assert!(
        took > std::time::Duration::from_millis(2500),
        "the call took {took:?}: not longer than the idle limit and its sweep"
    );
    assert!(text.contains("12000000"), "{text}");
    // The session is still open after its call, until it is idle.
    let (code, text) = post(
        &http.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert_eq!(code, 200, "{text}");
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let (code, text) = post(
        &http.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    );
    assert_eq!(code, 404, "{text}");
}

/// Clients that start sessions and never end them: at most `[mcp]
/// max_sessions` are open (one more is answered 503, saying why), a
/// session idle past `[mcp] session_idle_secs` is closed so a new client
/// gets in again, and the server's memory stays bounded over thousands of
/// abandoned sessions.
#[test]
fn abandoned_http_sessions_are_capped_and_closed() {
    let sb = Sandbox::new();
    sb.write_config("[mcp]\nmax_sessions = 20\nsession_idle_secs = 2\n");
    let db = sb.shop_sqlite().display().to_string();
    let http = HttpServer::start(&sb, &[&db]);
    let pid = http.child.id();
    for i in 0..20 {
        let (code, text) = initialize(&http.url);
        assert_eq!(code, 200, "session {i}: {text}");
    }
    let (code, text) = initialize(&http.url);
    assert_eq!(code, 503, "{text}");
    assert!(
        text.contains("20 sessions are open, the server's limit ([mcp] max_sessions)"),
        "{text}"
    );
    // Idle past the limit, they are closed: new clients get in.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    let (code, text) = initialize(&http.url);
    assert_eq!(code, 200, "{text}");
    // Thousands of abandoned sessions: memory stays bounded.
    let start = rss_kb(pid);
    let mut refused = 0;
    for _ in 0..2000 {
        let (code, _) = initialize(&http.url);
        assert!(code == 200 || code == 503, "{code}");
        refused += usize::from(code == 503);
    }
    let after = rss_kb(pid);
    eprintln!(
        "2,000 abandoned sessions: RSS {start} → {after} kB, {refused} refused as over the limit"
    );
    assert!(refused > 0);
    assert!(
        after < start + 60 * 1024,
        "RSS grew from {start} to {after} kB"
    );
}
