//! `aiq mcp` driven by the official MCP Python SDK (tests/mcp/driver.py),
//! started the way desktop assistants and coding agents start a server —
//! over stdio, and over streamable HTTP — in both protocol generations:
//! the tools and their schemas, the schema as a tool and a resource, typed
//! rows from SQLite, DuckDB and a CSV folder (and PostgreSQL), the hostile
//! corpus refused with every file byte-identical, writes confirmed through
//! elicitation, cancellation and disconnects that stop the statement, bad
//! requests answered without a crash, limits, `ask`, and the audit log.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::corpus::{DUCKDB_HOSTILE, POSTGRES_HOSTILE, SQLITE_HOSTILE};
use common::llm::{ModelServer, Reply};
use common::mcp::{self, audit_lines, driver, Era, HttpServer, Live, Target};
use common::{servers, snapshot, Sandbox};
use serde_json::{json, Value};

/// Keeps SQLite busy for many seconds, until interrupted.
const SLOW_SQLITE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c";

/// The shop in SQLite, DuckDB and a CSV folder: served as `shop`,
/// `shop_2` and `shop_csv`.
fn three_shops(sb: &Sandbox) -> Vec<String> {
    [sb.shop_sqlite(), sb.shop_duckdb(), sb.shop_csv()]
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

/// Every data file in the sandbox (not aiq's home, where logs and caches go).
fn data_files(sb: &Sandbox) -> BTreeMap<PathBuf, Vec<u8>> {
    let home = sb.path().join("home");
    snapshot(sb.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&home))
        .collect()
}

fn args_of(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// What every client sees first: the tools, the resources, the schema, and
/// typed rows from each engine.
fn check_basic(out: &Value, era: Era) {
    assert_eq!(out["protocol"], era.protocol());
    assert_eq!(out["server"], "aiq");
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["list_sources", "describe_schema", "run_query"],
        "no model: no ask"
    );
    let run = &out["tools"][2];
    assert_eq!(run["input_schema"]["required"], json!(["sql"]));
    assert_eq!(run["input_schema"]["properties"]["sql"]["type"], "string");
    assert_eq!(run["read_only"], true);
    assert!(run["output_schema"]["properties"]["truncated"].is_object());
    assert_eq!(
        out["resources"],
        json!([
            "aiq://shop/schema",
            "aiq://shop_2/schema",
            "aiq://shop_csv/schema"
        ])
    );
    let resource = out["resource_text"].as_str().unwrap();
    assert!(
        resource.starts_with("-- source shop: SQLite "),
        "{resource}"
    );
    assert!(resource.contains("table customers"), "{resource}");
    let sources = &out["sources"]["structured"]["sources"];
    assert_eq!(sources[1]["engine"], "duckdb");
    assert_eq!(sources[2]["name"], "shop_csv");
    let schema = &out["schema"];
    assert_eq!(schema["is_error"], false, "{schema}");
    let text = schema["text"].as_str().unwrap();
    assert!(text.starts_with("-- source shop: SQLite "), "{text}");
    assert!(
        text.contains("; write SQL in the SQLite dialect; read-only\n"),
        "{text}"
    );
    assert!(text.contains("-> customers.id"), "{text}");
    let first_two = json!([[1, "Ann", "DE"], [2, "Bob", "US"]]);
    for i in 0..3 {
        let q = &out[format!("query{i}")];
        assert_eq!(q["is_error"], false, "{q}");
        assert_eq!(q["structured"]["rows"], first_two, "{q}");
        assert_eq!(q["structured"]["row_count"], 2);
        assert_eq!(q["structured"]["truncated"], false);
        assert!(
            q["text"]
                .as_str()
                .unwrap()
                .starts_with("| id | name | country |\n| ---: | --- | --- |\n| 1 | Ann | DE |\n"),
            "{q}"
        );
    }
    // Typed as JSON: booleans, dates as ISO text.
    for i in 3..6 {
        assert_eq!(
            out[format!("query{i}")]["structured"]["rows"],
            json!([[true, "2024-01-05"]])
        );
    }
}

fn basic_args() -> Vec<String> {
    let mut args = vec!["--source".to_string(), "shop".to_string()];
    let sql = "SELECT id, name, country FROM customers ORDER BY id LIMIT 2";
    let typed = "SELECT vip, signup FROM customers WHERE id = 1";
    for q in [sql, typed] {
        for source in ["shop", "shop_2", "shop_csv"] {
            args.push("--sql".into());
            args.push(format!("{source} ==> {q}"));
        }
    }
    args
}

#[test]
fn a_desktop_assistant_over_stdio_lists_tools_reads_the_schema_and_runs_queries() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let mut aiq = vec!["mcp".to_string()];
    aiq.extend(three_shops(&sb));
    let aiq = args_of(&aiq);
    let extra = basic_args();
    for era in Era::ALL {
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "basic",
            era,
            &args_of(&extra),
            Target::Stdio(&aiq),
        ));
        check_basic(&out, era);
    }
    // Every call is in the audit log, with its SQL, rows and time.
    let log = audit_lines(&sb.home());
    let queries: Vec<&Value> = log.iter().filter(|l| l["tool"] == "run_query").collect();
    assert_eq!(queries.len(), 12);
    assert_eq!(queries[1]["source"], "shop_2");
    assert_eq!(
        queries[1]["sql"],
        "SELECT id, name, country FROM customers ORDER BY id LIMIT 2"
    );
    assert_eq!(queries[1]["rows"], 2);
    assert_eq!(queries[1]["error"], Value::Null);
    assert_eq!(queries[1]["kind"], "mcp");
    assert!(queries[1]["ms"].is_u64());
    assert!(log.iter().any(|l| l["tool"] == "resources/read"));
    assert!(log
        .iter()
        .any(|l| l["tool"] == "describe_schema" && l["question"] == "orders per customer"));
}

#[test]
fn http_clients_get_the_same_over_streamable_http() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let shops = three_shops(&sb);
    let mut server = HttpServer::start(&sb, &args_of(&shops));
    assert!(server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"));
    let extra = basic_args();
    for era in Era::ALL {
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "basic",
            era,
            &args_of(&extra),
            Target::Http(&server.url),
        ));
        check_basic(&out, era);
    }
    assert!(server.interrupt(), "Ctrl-C ends the HTTP server cleanly");
}

#[test]
fn the_demo_shop_is_served_as_the_default_saved_source() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.aiq().arg("demo").assert().success();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "basic",
        Era::Legacy,
        &[
            "--sql",
            "SELECT count(*) AS customers, min(signup_date) AS first FROM customers",
        ],
        Target::Stdio(&["mcp"]),
    ));
    assert_eq!(out["sources"]["structured"]["default"], "demo");
    let schema = out["schema"]["text"].as_str().unwrap();
    assert!(schema.starts_with("-- source demo: SQLite "), "{schema}");
    for table in ["customers", "products", "orders", "order_items"] {
        assert!(
            schema.contains(&format!("table {table} ")),
            "{table}: {schema}"
        );
    }
    let rows = &out["query0"]["structured"]["rows"][0];
    assert!(rows[0].as_u64().is_some_and(|n| n > 100), "{rows}");
    assert!(rows[1].is_string(), "{rows}");
}

/// Every statement comes back refused and no data file changes or appears.
fn assert_corpus_refused(results: &Value, corpus: &[&str]) {
    let results = results["results"].as_array().unwrap();
    assert_eq!(results.len(), corpus.len());
    for (sql, r) in corpus.iter().zip(results) {
        assert_eq!(r["is_error"], true, "ran: {sql}\n{r}");
        let text = r["text"].as_str().unwrap();
        assert!(text.starts_with("refused: "), "{sql}: {text}");
    }
}

fn plan(sb: &Sandbox, source: &str, corpus: &[&str]) -> PathBuf {
    let calls: Vec<Value> = corpus
        .iter()
        .map(|sql| json!({"source": source, "sql": sql}))
        .collect();
    let path = sb.path().join("home").join(format!("plan-{source}.json"));
    std::fs::write(&path, serde_json::to_vec(&calls).unwrap()).unwrap();
    path
}

#[test]
fn the_hostile_corpus_is_refused_through_run_query_and_changes_nothing() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let shops = three_shops(&sb);
    let before = data_files(&sb);
    let mut aiq = vec!["mcp".to_string()];
    aiq.extend(shops.iter().cloned());
    let aiq = args_of(&aiq);
    let cases = [
        ("shop", SQLITE_HOSTILE, Era::Legacy),
        ("shop_2", DUCKDB_HOSTILE, Era::Modern),
        ("shop_csv", DUCKDB_HOSTILE, Era::Legacy),
    ];
    for (source, corpus, era) in cases {
        let file = plan(&sb, source, corpus);
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "corpus",
            era,
            &["--plan", file.to_str().unwrap()],
            Target::Stdio(&aiq),
        ));
        assert_corpus_refused(&out, corpus);
    }
    // And over HTTP, against a server started with --allow-write: what the
    // gate never allows stays refused.
    let mut writable = shops.clone();
    writable.push("--allow-write".into());
    let server = HttpServer::start(&sb, &args_of(&writable));
    let never: Vec<&str> = DUCKDB_HOSTILE
        .iter()
        .copied()
        .filter(|s| {
            let l = s.to_lowercase();
            [
                "read_", "/etc", "install", "load ", "attach", "copy", "export", "getenv", "set ",
                "reset ",
            ]
            .iter()
            .any(|k| l.contains(k))
        })
        .collect();
    assert!(never.len() >= 20, "{}", never.len());
    let file = plan(&sb, "shop_csv", &never);
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "corpus",
        Era::Legacy,
        &["--plan", file.to_str().unwrap()],
        Target::Http(&server.url),
    ));
    assert_corpus_refused(&out, &never);
    drop(server);
    assert_eq!(data_files(&sb), before, "a data file changed or appeared");
    let refused = audit_lines(&sb.home())
        .iter()
        .filter(|l| {
            l["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("refused: "))
        })
        .count();
    assert_eq!(
        refused,
        SQLITE_HOSTILE.len() + 2 * DUCKDB_HOSTILE.len() + never.len()
    );
}

#[test]
fn writes_need_allow_write_and_the_users_confirmation() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db_arg = db.display().to_string();
    let count = || -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM customers WHERE name = 'Zed'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let update = "UPDATE customers SET name = 'Zed' WHERE id = 4";
    for era in Era::ALL {
        // A read-only server refuses, and says how to allow it.
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "write",
            era,
            &["--sql", update],
            Target::Stdio(&["mcp", &db_arg]),
        ));
        assert_eq!(out["result"]["is_error"], true);
        assert_eq!(
            out["result"]["text"],
            "refused: UPDATE changes data and aiq is read-only by default (this MCP server is read-only; whoever runs it can start it with `aiq mcp --allow-write`, and then each write still needs your confirmation)"
        );
        assert_eq!(out["asked"], json!([]));
        for (answer, message) in [
            ("decline", "not run: the user declined the statement"),
            ("untick", "not run: the user did not tick \"run\""),
            ("cancel", "not run: the user dismissed the confirmation"),
            ("none", "not run: the statement changes data and needs the user's confirmation, which this client cannot ask for (it does not support MCP elicitation)"),
        ] {
            let out = mcp::run(&mut driver(
                &sb,
                python,
                "write",
                era,
                &["--sql", update, "--answer", answer],
                Target::Stdio(&["mcp", &db_arg, "--allow-write"]),
            ));
            assert_eq!(out["protocol"], era.protocol());
            assert_eq!(out["result"]["is_error"], true, "{answer}");
            assert_eq!(out["result"]["text"], message, "{era:?} {answer}");
            assert_eq!(count(), 0, "{era:?} {answer}: the write ran");
        }
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "write",
            era,
            &["--sql", update, "--answer", "accept"],
            Target::Stdio(&["mcp", &db_arg, "--allow-write"]),
        ));
        assert_eq!(out["result"]["is_error"], false, "{out}");
        assert_eq!(out["result"]["text"], "1 row changed.");
        assert_eq!(out["result"]["structured"]["rows_changed"], 1);
        let asked = &out["asked"][0];
        assert!(
            asked["message"].as_str().unwrap().contains(update),
            "{asked}"
        );
        assert_eq!(asked["schema"]["properties"]["run"]["type"], "boolean");
        assert_eq!(count(), 1);
        if era == Era::Modern {
            // Two rounds: the question, then the confirmed statement.
            let log = audit_lines(&sb.home());
            let rounds: Vec<&Value> = log.iter().rev().take(2).collect();
            assert_eq!(rounds[0]["error"], Value::Null);
            assert_eq!(rounds[0]["rows"], 1);
            assert_eq!(
                rounds[1]["error"],
                "not run yet: the user was asked to confirm it"
            );
        }
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute("UPDATE customers SET name = 'Dan' WHERE id = 4", [])
            .unwrap();
    }
}

#[test]
fn a_confirmation_nobody_answers_ends_with_the_call_timeout() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\ntimeout_secs = 2\nmax_concurrent = 1\n");
    let db = sb.shop_sqlite().display().to_string();
    let started = Instant::now();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "write",
        Era::Legacy,
        &[
            "--sql",
            "DELETE FROM orders",
            "--sql",
            "SELECT count(*) AS n FROM orders",
            "--answer",
            "hang",
        ],
        Target::Stdio(&["mcp", &db, "--allow-write"]),
    ));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        out["result"]["text"],
        "stopped: the call ran longer than 2 s (the server's limit, [mcp] timeout_secs); narrow the query"
    );
    // The slot is free again (max_concurrent = 1) and nothing was deleted.
    assert_eq!(out["after"]["structured"]["rows"], json!([[6]]), "{out}");
}

#[test]
fn a_cancelled_query_stops_and_the_server_goes_on() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    sb.write_config("[mcp]\ntimeout_secs = 30\n");
    let db = sb.shop_sqlite().display().to_string();
    let http = HttpServer::start(&sb, &[&db]);
    let aiq = ["mcp", db.as_str()];
    let targets = [
        (Era::Legacy, Target::Stdio(&aiq)),
        (Era::Modern, Target::Stdio(&aiq)),
        (Era::Legacy, Target::Http(&http.url)),
        (Era::Modern, Target::Http(&http.url)),
    ];
    for (era, target) in targets {
        let mut live = Live::spawn(&mut driver(
            &sb,
            python,
            "cancel",
            era,
            &["--sql", SLOW_SQLITE, "--sql", "SELECT 1 AS one"],
            target,
        ));
        assert_eq!(live.next()["started"], true);
        std::thread::sleep(Duration::from_millis(500));
        live.tell("cancel");
        assert_eq!(live.next()["cancelled"], true);
        // The next statement needs the same connection: it runs only once
        // the cancelled one has really stopped.
        let after = live.next();
        assert_eq!(
            after["after"]["structured"]["rows"],
            json!([[1]]),
            "{after}"
        );
        assert!(after["after_s"].as_f64().unwrap() < 10.0, "{after}");
    }
    let cancelled: Vec<Value> = audit_lines(&sb.home())
        .into_iter()
        .filter(|l| l["sql"] == SLOW_SQLITE)
        .collect();
    assert_eq!(cancelled.len(), 4);
    for l in &cancelled {
        assert_eq!(l["error"], "cancelled", "{l}");
        assert!(l["ms"].as_u64().unwrap() < 10_000, "{l}");
    }
}

/// Whether process `pid` runs (a zombie has ended).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// aiq started through `sh`, which writes down its pid first.
const AIQ_WITH_PID: [&str; 3] = [
    "sh",
    "-c",
    "echo $$ > \"$AIQ_PID_FILE\"; exec \"$AIQ_BIN\" mcp \"$AIQ_DB\"",
];

#[test]
fn a_client_that_disconnects_mid_query_stops_it_and_aiq_exits() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let pid_file = sb.path().join("aiq.pid");
    for era in Era::ALL {
        let _ = std::fs::remove_file(&pid_file);
        let mut cmd = driver(
            &sb,
            python,
            "hang",
            era,
            &["--sql", SLOW_SQLITE],
            Target::Command(&AIQ_WITH_PID),
        );
        cmd.env("AIQ_PID_FILE", &pid_file)
            .env("AIQ_BIN", mcp::aiq_bin())
            .env("AIQ_DB", &db);
        let mut live = Live::spawn(&mut cmd);
        assert_eq!(live.next()["started"], true);
        std::thread::sleep(Duration::from_millis(500));
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(pid), "aiq is not running");
        // The client dies without a word: aiq's stdin closes.
        live.child.kill().unwrap();
        live.child.wait().unwrap();
        let gone = Instant::now();
        while alive(pid) {
            assert!(
                gone.elapsed() < Duration::from_secs(4),
                "{era:?}: aiq still runs 4 s after its client went away"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let log = audit_lines(&sb.home());
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|l| l["error"] == "cancelled"), "{log:?}");
}

#[test]
fn malformed_requests_get_errors_and_the_server_goes_on() {
    // Raw JSON-RPC lines, no SDK: garbage, an unknown method, a call
    // without its argument, then calls that must still be answered.
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut child = sb
        .std_aiq()
        .arg("mcp")
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not JSON {",
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_query"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
        r#"[1, 2, 3]"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"SELECT 2 AS two"}}}"#,
    ];
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut by_id: BTreeMap<i64, Value> = BTreeMap::new();
    let mut without_id = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    while by_id.len() < 5 {
        assert!(Instant::now() < deadline, "answers so far: {by_id:?}");
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "aiq ended: {by_id:?}"
        );
        let v: Value = serde_json::from_str(&line).expect("only JSON-RPC on stdout");
        // `[1, 2, 3]` is a batch of three invalid requests: three errors
        // in one array, as the JSON-RPC 2.0 specification's example has.
        if let Some(batch) = v.as_array() {
            assert_eq!(batch.len(), 3, "{v}");
            assert!(
                batch
                    .iter()
                    .all(|e| e["error"]["code"] == -32600 && e["id"].is_null()),
                "{v}"
            );
            without_id += 1;
            continue;
        }
        match v["id"].as_i64() {
            Some(id) => {
                by_id.insert(id, v);
            }
            None => {
                assert!(v["error"]["code"].is_i64(), "{v}");
                without_id += 1;
            }
        }
    }
    drop(stdin);
    assert!(without_id >= 1, "garbage got no error");
    assert_eq!(by_id[&2]["error"]["code"], -32601);
    assert_eq!(by_id[&3]["result"]["isError"], true);
    assert_eq!(
        by_id[&3]["result"]["content"][0]["text"],
        "invalid arguments for run_query: missing field `sql`"
    );
    assert_eq!(by_id[&4]["error"]["code"], -32602);
    assert!(by_id[&4]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("unknown tool 'no_such_tool'"));
    assert_eq!(
        by_id[&5]["result"]["structuredContent"]["rows"],
        json!([[2]])
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn bad_calls_from_the_sdk_are_answered_and_the_session_goes_on() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite().display().to_string();
    for era in Era::ALL {
        let out = mcp::run(&mut driver(
            &sb,
            python,
            "bad_calls",
            era,
            &[],
            Target::Stdio(&["mcp", &db]),
        ));
        assert_eq!(out["sql_not_text"]["is_error"], true);
        assert_eq!(
            out["sql_not_text"]["text"],
            "invalid arguments for run_query: invalid type: integer `42`, expected a string"
        );
        assert_eq!(
            out["unknown_field"]["text"],
            "invalid arguments for run_query: unknown field `query`, expected one of `source`, `sql`, `max_rows`"
        );
        assert_eq!(
            out["no_sql"]["text"],
            "invalid arguments for run_query: missing field `sql`"
        );
        assert!(out["unknown_tool"]["raised"].is_string(), "{out}");
        assert!(out["bad_resource"]["raised"].is_string(), "{out}");
        assert_eq!(out["after"]["structured"]["rows"], json!([[1]]));
    }
}

#[test]
fn limits_stop_long_calls_refuse_extra_ones_and_cap_results() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    // No room to wait: a call beyond the running one is refused at once.
    sb.write_config("[mcp]\ntimeout_secs = 2\nmax_concurrent = 1\nmax_queued = 0\nmax_rows = 3\n");
    let db = sb.shop_sqlite().display().to_string();
    let started = Instant::now();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "busy",
        Era::Legacy,
        &["--sql", SLOW_SQLITE],
        Target::Stdio(&["mcp", &db]),
    ));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        out["first"]["text"],
        "stopped: the call ran longer than 2 s (the server's limit, [mcp] timeout_secs); narrow the query"
    );
    assert_eq!(
        out["second"]["text"],
        "busy: 1 calls are running and 0 are waiting already (the server's limits, [mcp] max_concurrent and [mcp] max_queued); try again when one has finished"
    );
    // Both are in the audit log with the statement they asked for.
    let log = audit_lines(&sb.home());
    assert_eq!(log.len(), 2, "{log:?}");
    for l in &log {
        assert_eq!(l["sql"], SLOW_SQLITE);
        assert_eq!(l["source"], "shop");
    }
    assert!(log
        .iter()
        .any(|l| l["error"].as_str().unwrap().starts_with("busy: ")));
    assert!(log
        .iter()
        .any(|l| l["error"].as_str().unwrap().starts_with("stopped: ")));
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "basic",
        Era::Modern,
        &["--sql", "SELECT id FROM orders ORDER BY id"],
        Target::Stdio(&["mcp", &db]),
    ));
    let q = &out["query0"]["structured"];
    assert_eq!(q["rows"], json!([[1], [2], [3]]));
    assert_eq!(q["truncated"], true);
    assert!(out["query0"]["text"]
        .as_str()
        .unwrap()
        .contains("(3 rows shown; the result has more"));
}

#[test]
fn ask_is_offered_with_a_model_and_answers_with_rows() {
    let Some(python) = mcp::python() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite().display().to_string();
    let model = ModelServer::start(vec![Reply::Text(
        "Here you go:\n```sql\nSELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC, country\n```".into(),
    )]);
    let mut cmd = driver(
        &sb,
        python,
        "basic",
        Era::Legacy,
        &["--question", "customers per country?"],
        Target::Stdio(&["mcp", &db]),
    );
    cmd.env("AIQ_PROVIDER", "openai")
        .env("AIQ_BASE_URL", model.base())
        .env("AIQ_MODEL", "test-model")
        .env("AIQ_API_KEY", common::SECRET_KEY);
    let out = mcp::run(&mut cmd);
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["list_sources", "describe_schema", "run_query", "ask"]
    );
    let ask = &out["ask"];
    assert_eq!(ask["is_error"], false, "{ask}");
    assert_eq!(
        ask["structured"]["result"]["rows"],
        json!([["DE", 2], ["US", 2], ["FR", 1]])
    );
    assert!(
        ask["text"].as_str().unwrap().contains("| DE | 2 |"),
        "{ask}"
    );
    // The model got the schema, as in any turn; the key never left in a body.
    let chats = model.chats();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].raw.contains("customers"), "{}", chats[0].raw);
    assert!(!chats[0].raw.contains(common::SECRET_KEY));
    let log = audit_lines(&sb.home());
    let asked = log.iter().find(|l| l["tool"] == "ask").unwrap();
    assert_eq!(asked["question"], "customers per country?");
    assert_eq!(
        asked["sql"],
        "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC, country"
    );
    let text = std::fs::read_to_string(
        sb.home()
            .join("logs")
            .read_dir()
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    assert!(!text.contains(common::SECRET_KEY));
}

#[test]
fn nothing_but_protocol_on_stdout_and_a_clear_line_for_mistakes() {
    let sb = Sandbox::new();
    let out = sb.aiq().args(["mcp", "missing.db"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    let out = sb.aiq().arg("mcp").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "aiq: no sources to serve: give SOURCE… (a file, folder or URL), or save sources with `aiq sources add NAME PATH`\n"
    );
    let db = sb.shop_sqlite();
    let out = sb
        .aiq()
        .arg("mcp")
        .arg(&db)
        .args(["--http", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--http \"nope\" is not an address"));
    // stdin closed at once: a clean exit, nothing on stdout.
    let out = sb
        .aiq()
        .arg("mcp")
        .arg(&db)
        .write_stdin("")
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("aiq mcp: serving shop (read-only; ask is off"),
        "{err}"
    );
}

// ---- PostgreSQL: the statement runs on the server, and stops there ----

const PG_RUNNING: &str = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%aiq_mcp_probe%' AND state = 'active' AND pid <> pg_backend_pid()";
const PG_SLOW: &str = "SELECT pg_sleep(60) AS aiq_mcp_probe";

fn wait_for(server: &servers::Server, want: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.admin(PG_RUNNING).trim() != want {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn postgres_rows_corpus_and_server_side_cancel() {
    let Some(python) = mcp::python() else { return };
    let Some(pg) = servers::postgres() else {
        return;
    };
    let sb = Sandbox::new();
    let url = pg.url();
    let aiq = ["mcp", url.as_str()];
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "basic",
        Era::Legacy,
        &["--sql", "SELECT c.id, c.name, c.vip, o.total FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.id = 1"],
        Target::Stdio(&aiq),
    ));
    assert_eq!(
        out["query0"]["structured"]["rows"],
        json!([[1, "Ann", true, 19.99]]),
        "{out}"
    );
    assert!(out["schema"]["text"]
        .as_str()
        .unwrap()
        .contains("write SQL in the PostgreSQL dialect"));
    let listed = out["sources"]["text"].as_str().unwrap();
    assert!(!listed.contains(servers::PASSWORD), "{listed}");

    let before = pg.shop_snapshot();
    let file = plan(&sb, "shop", POSTGRES_HOSTILE);
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "corpus",
        Era::Modern,
        &["--plan", file.to_str().unwrap()],
        Target::Stdio(&aiq),
    ));
    assert_corpus_refused(&out, POSTGRES_HOSTILE);
    assert_eq!(pg.shop_snapshot(), before);

    // notifications/cancelled stops the statement on the server.
    for era in Era::ALL {
        let mut live = Live::spawn(&mut driver(
            &sb,
            python,
            "cancel",
            era,
            &["--sql", PG_SLOW, "--sql", "SELECT 1 AS one"],
            Target::Stdio(&aiq),
        ));
        assert_eq!(live.next()["started"], true);
        wait_for(pg, "1", "the query never started on the server");
        live.tell("cancel");
        assert_eq!(live.next()["cancelled"], true);
        wait_for(pg, "0", "the cancelled query still runs on the server");
        assert_eq!(live.next()["after"]["structured"]["rows"], json!([[1]]));
    }

    // A client that goes away mid-query: the query is gone from the server too.
    let mut live = Live::spawn(&mut driver(
        &sb,
        python,
        "hang",
        Era::Legacy,
        &["--sql", PG_SLOW],
        Target::Stdio(&aiq),
    ));
    assert_eq!(live.next()["started"], true);
    wait_for(pg, "1", "the query never started on the server");
    live.child.kill().unwrap();
    live.child.wait().unwrap();
    wait_for(pg, "0", "the query outlived its client on the server");
    let log = std::fs::read_dir(sb.home().join("logs")).unwrap();
    for f in log {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(
            !text.contains(servers::PASSWORD),
            "a password in the audit log"
        );
    }
}

/// The status line's code of a raw `POST /mcp` (an `initialize`) with
/// these extra header lines.
fn raw_status(url: &str, headers: &[&str]) -> u16 {
    use std::io::{Read, Write};
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    let line = String::from_utf8_lossy(&head).to_string();
    line[9..12].parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn http_needs_the_token_and_refuses_other_origins() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db = db.to_str().unwrap();
    let server = HttpServer::start(&sb, &[db]);
    let port = server
        .url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let token = format!("Authorization: Bearer {}", mcp::HTTP_TOKEN);
    assert_eq!(raw_status(&server.url, &[]), 401, "no token");
    assert_eq!(
        raw_status(&server.url, &["Authorization: Bearer wrong"]),
        401
    );
    assert_eq!(
        raw_status(
            &server.url,
            &[&format!("Authorization: Bearer {}x", mcp::HTTP_TOKEN)]
        ),
        401
    );
    assert_eq!(raw_status(&server.url, &[&token]), 200, "the right token");
    let own = format!("Origin: http://127.0.0.1:{port}");
    assert_eq!(
        raw_status(&server.url, &[&token, &own]),
        200,
        "its own origin"
    );
    for foreign in [
        "Origin: http://evil.example",
        "Origin: null",
        &format!("Origin: http://127.0.0.1:{port}.evil.example"),
    ] {
        assert_eq!(
            raw_status(&server.url, &[&token, foreign]),
            403,
            "{foreign}"
        );
        assert_eq!(
            raw_status(&server.url, &[foreign]),
            403,
            "{foreign}, no token"
        );
    }
    // The token is never written to the audit log.
    let log = std::fs::read_dir(sb.home().join("logs"))
        .map(|d| {
            d.flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect::<String>()
        })
        .unwrap_or_default();
    assert!(!log.contains(mcp::HTTP_TOKEN));
}

#[test]
fn without_a_token_one_is_made_and_printed_once() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut child = sb
        .std_aiq()
        .args(["mcp", db.to_str().unwrap(), "--http", "127.0.0.1:0"])
        .env_remove("AIQ_MCP_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (mut token, mut url) = (None, None);
    let mut line = String::new();
    while url.is_none() {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "ended early");
        if let Some(at) = line.find("Bearer ") {
            let t: String = line[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_hexdigit())
                .collect();
            token = Some(t);
        }
        if let Some(at) = line.find("http://") {
            url = Some(line[at..].trim().to_string());
        }
    }
    let (token, url) = (token.expect("a token line"), url.unwrap());
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(raw_status(&url, &[]), 401);
    assert_eq!(
        raw_status(&url, &[&format!("Authorization: Bearer {token}")]),
        200
    );
    let _ = child.kill();
    let _ = child.wait();
    // --token belongs to --http: alone it is a usage error, not ignored.
    sb.aiq()
        .args(["mcp", db.to_str().unwrap(), "--token", "x"])
        .assert()
        .code(2);
}

/// A statement nested far past what the gate reads (200,000 additions —
/// 30,000 through `-e`, whose argument is bounded — and 20,000
/// parentheses) gets a refusal through every way in, and the server, the
/// Lua program and the process go on (SPEC §4.2).
#[test]
fn a_deep_statement_is_refused_and_every_way_in_goes_on() {
    let sb = Sandbox::new();
    let shops = three_shops(&sb);
    let chain = format!("SELECT 1{} AS n", " + 1".repeat(200_000));
    let parentheses = format!("SELECT {}1{} AS n", "(".repeat(20_000), ")".repeat(20_000));
    // One argument holds at most 128 KiB: 30,000 additions through -e.
    let argument = format!("SELECT 1{} AS n", " + 1".repeat(30_000));
    for deep in [&argument, &parentheses] {
        let out = sb.aiq().args([&shops[0], "-e", deep]).output().unwrap();
        assert_eq!(out.status.code(), Some(5), "{}", common::stderr_of(&out));
        assert!(common::stderr_of(&out).contains("too deeply nested"));
    }
    // Lua: pcall catches the refusal and the program goes on.
    let script = sb.path().join("deep.lua");
    std::fs::write(
        &script,
        format!(
            "local ok, err = pcall(aiq.query, \"{chain}\")\n\
             print(ok, string.find(tostring(err), 'too deeply nested') ~= nil)\n\
             print(aiq.query('SELECT count(*) AS n FROM customers')[1].n)\n"
        ),
    )
    .unwrap();
    let out = sb
        .aiq()
        .args([&shops[0], "--lua", script.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr_of(&out));
    assert_eq!(common::stdout_of(&out), "false\ttrue\n5\n");
    // MCP: the refusal is a tool error, and the next call answers.
    let Some(python) = mcp::python() else { return };
    let mut aiq = vec!["mcp".to_string()];
    aiq.extend(shops.iter().cloned());
    let calls = json!([
        {"source": "shop", "sql": chain},
        {"source": "shop_2", "sql": parentheses},
        {"source": "shop", "sql": "SELECT count(*) AS n FROM customers"},
    ]);
    let file = sb.path().join("home").join("plan-deep.json");
    std::fs::write(&file, serde_json::to_vec(&calls).unwrap()).unwrap();
    let out = mcp::run(&mut driver(
        &sb,
        python,
        "corpus",
        Era::Modern,
        &["--plan", file.to_str().unwrap()],
        Target::Stdio(&args_of(&aiq)),
    ));
    let results = out["results"].as_array().unwrap();
    for r in &results[..2] {
        assert_eq!(r["is_error"], true, "{r}");
        assert!(
            r["text"].as_str().unwrap().contains("too deeply nested"),
            "{r}"
        );
    }
    assert_eq!(results[2]["is_error"], false, "{}", results[2]);
}

/// Over stdio every JSON-RPC request gets an answer, and the server goes
/// on serving: frames that are not JSON (a lone surrogate escape, cut
/// short, invalid UTF-8, nested past 128 levels, over 16 MiB) get a parse
/// error or an invalid request with id null; requests of the wrong shape
/// (a wrong version, an id that is not a string or integer, `params` that
/// are not an object) get an error carrying their id.
#[test]
fn every_stdio_request_gets_an_answer() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut child = sb
        .std_aiq()
        .arg("mcp")
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    // The next answer as written, and as JSON.
    let next_raw = || {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer");
        let value: Value = serde_json::from_str(&line).expect("a JSON answer");
        (line, value)
    };
    let next = || next_raw().1;
    let mut send = |bytes: &[u8]| {
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    assert_eq!(next()["id"], 0);
    send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let huge = vec![b'x'; 16 * 1024 * 1024 + 5];
    let bad: Vec<(Vec<u8>, Value, i64)> = vec![
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"c":"\ud800"}}"#.to_vec(),
            Value::Null,
            -32700,
        ),
        (
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/li"#.to_vec(),
            Value::Null,
            -32700,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xff\"}".to_vec(),
            Value::Null,
            -32700,
        ),
        (deep.into_bytes(), Value::Null, -32700),
        (huge, Value::Null, -32600),
        (
            br#"{"jsonrpc":"1.0","id":6,"method":"tools/list"}"#.to_vec(),
            json!(6),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":7.5,"method":"tools/list"}"#.to_vec(),
            json!(7.5),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":"x"}"#.to_vec(),
            json!(8),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":5}"#.to_vec(),
            json!(9),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[]}"#.to_vec(),
            json!(10),
            -32602,
        ),
    ];
    for (frame, id, code) in bad {
        send(&frame);
        let answer = next();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    // The server still serves.
    send(br#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{}}"#);
    let answer = next();
    assert_eq!(answer["id"], 11, "{answer}");
    assert!(
        answer["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{answer}"
    );
    // The id comes back exactly as written, and the fault is named where
    // the SDK would answer without an id or call a known method unknown.
    let named: [(&[u8], &str, i64, &str); 7] = [
        (
            br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#,
            "123456789012345678901234567890",
            -32600,
            "at most 64 bits",
        ),
        (
            br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            "18446744073709551615",
            -32600,
            "at most 64 bits",
        ),
        (
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":5}}"#,
            "13",
            -32602,
            "`_meta`",
        ),
        (
            br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"arguments":{}}}"#,
            "14",
            -32602,
            "tools/call needs `name`",
        ),
        (
            br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"SELECT 1","n":1e400}}}"#,
            "15",
            -32602,
            "number out of range",
        ),
        (
            br#"{"jsonrpc":"2.0","id":16,"id":16,"method":"ping"}"#,
            "null",
            -32600,
            "`id` appears twice",
        ),
        (
            br#"[{"jsonrpc":"2.0","id":17,"method":"ping"}]"#,
            "17",
            -32600,
            "one message per line",
        ),
    ];
    for (frame, id, code, says) in named {
        send(frame);
        let (line, answer) = next_raw();
        let first = answer.as_array().map_or(&answer, |a| &a[0]);
        assert!(line.contains(&format!("\"id\":{id}")), "{line}");
        assert_eq!(first["error"]["code"], code, "{line}");
        assert!(
            first["error"]["message"].as_str().unwrap().contains(says),
            "{line}"
        );
    }
    // A byte order mark before the JSON is read past.
    send(b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"ping\"}");
    let answer = next();
    assert_eq!(
        (answer["id"].clone(), answer["result"].clone()),
        (json!(18), json!({}))
    );
    // An id still in flight is not taken twice: the second request is
    // refused at once, the first is answered, then the id is free again.
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 12000000) SELECT count(*) AS n FROM c";
    send(
        json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
            "params": {"name": "run_query", "arguments": {"sql": slow}}})
        .to_string()
        .as_bytes(),
    );
    send(br#"{"jsonrpc":"2.0","id":50,"method":"ping"}"#);
    let refused = next();
    assert_eq!(refused["id"], 50, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("id 50 is in use")),
        "{refused}"
    );
    let answered = next();
    assert_eq!(answered["id"], 50, "{answered}");
    assert!(answered.to_string().contains("12000000"), "{answered}");
    send(br#"{"jsonrpc":"2.0","id":50,"method":"ping"}"#);
    let again = next();
    assert_eq!(
        (again["id"].clone(), again["result"].clone()),
        (json!(50), json!({}))
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
