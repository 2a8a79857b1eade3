//! The sandbox run in-process against a small SQLite file: values and
//! parameters, the result table, errors with line numbers, limits that
//! `pcall` cannot swallow, cancel, and the audit line.

use std::path::Path;
use std::time::{Duration, Instant};

use super::limits::LuaConfig;
use super::{run, AuditInfo, LuaFailure, Origin, Program, RunEnv, RunReport};
use crate::agent::testkit::{source_in, Recorder};
use crate::agent::Event;
use crate::cancel::CancelToken;
use crate::safety::Policy;
use crate::source::Value;

fn limits() -> LuaConfig {
    LuaConfig {
        timeout_secs: 2,
        memory_mb: 16,
        max_output_kb: 4,
        max_rows: 1000,
        max_total_rows: 1500,
        ..LuaConfig::default()
    }
}

struct Ran {
    result: Result<RunReport, LuaFailure>,
    sink: Recorder,
}

fn run_in(
    dir: &Path,
    code: &str,
    limits: &LuaConfig,
    allow_write: bool,
    cancel: &CancelToken,
) -> Ran {
    run_kept(dir, code, limits, allow_write, cancel, false)
}

fn run_kept(
    dir: &Path,
    code: &str,
    limits: &LuaConfig,
    allow_write: bool,
    cancel: &CancelToken,
    last_in_process: bool,
) -> Ran {
    let source = source_in(dir, "t.db", allow_write);
    let catalog = source.introspect().unwrap();
    let mut sink = Recorder {
        answer: true,
        ..Recorder::default()
    };
    let info = AuditInfo {
        home: dir.join("home"),
        session: None,
        source: "t.db".into(),
        origin: Origin::File,
        file: Some("test.lua".into()),
    };
    let result = run(
        &Program {
            code,
            name: "test.lua",
        },
        RunEnv {
            source: source.as_ref(),
            catalog: &catalog,
            policy: Policy::new(allow_write),
            cancel,
            sink: &mut sink,
            limits,
            workdir: dir,
            audit: Some(&info),
            last_in_process,
        },
    );
    Ran { result, sink }
}

fn lua(code: &str) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    run_in(dir.path(), code, &limits(), false, &CancelToken::new())
}

fn output(r: &Ran) -> String {
    r.sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Output(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn error(r: Ran) -> String {
    match r.result {
        Ok(_) => panic!("the program succeeded: {:?}", r.sink.events),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_state_left_for_the_exit_runs_the_same_and_the_next_run_is_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let code = "local rows = aiq.query('SELECT month, n FROM t ORDER BY month')
                print(#rows, rows[2].month) aiq.table(rows)
                kept = (kept or 0) + 1 print(kept)";
    let events = |last: bool| {
        let r = run_kept(
            dir.path(),
            code,
            &limits(),
            false,
            &CancelToken::new(),
            last,
        );
        assert!(r.result.is_ok(), "{:?}", r.result);
        // What the program said and showed (timings left out).
        r.sink
            .events
            .into_iter()
            .filter(|e| matches!(e, Event::Output(_) | Event::Columns(_) | Event::Rows(_)))
            .collect::<Vec<_>>()
    };
    let closed = events(false);
    let kept = events(true);
    assert_eq!(format!("{kept:?}"), format!("{closed:?}"));
    // A global set by the run whose state was not closed is not in the next.
    assert_eq!(format!("{:?}", events(false)), format!("{closed:?}"));
}

#[test]
fn rows_arrive_with_lua_types_and_column_order() {
    let r = lua(
        "local rows = aiq.query('SELECT month, n, n * 1.5 AS f, NULL AS z FROM t ORDER BY month')
         print(#rows, rows[1].month, math.type(rows[1].n), math.type(rows[1].f), rows[1].z)
         print(table.concat(rows.columns, ','))
         print(rows)",
    );
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(
        output(&r),
        "2\t2024-01\tinteger\tfloat\tnil\nmonth,n,f,z\n{{month = \"2024-01\", n = 5, f = 7.5}, {month = \"2024-02\", n = 1, f = 1.5}}\n"
    );
}

#[test]
fn parameters_are_bound_and_shown() {
    let r = lua(
        "local rows = aiq.query('SELECT n FROM t WHERE month = ? AND n > :min', nil)
         print(#rows)",
    );
    let e = error(r);
    assert!(e.contains("test.lua:1:"), "{e}");
    let r = lua("print(aiq.query('SELECT n FROM t WHERE month = ?', {'2024-02'})[1].n)");
    assert_eq!(output(&r), "1\n");
    let calls: Vec<String> = r
        .sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, arguments } => Some(format!("{name} {arguments}")),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["aiq.query SELECT n FROM t WHERE month = '2024-02'"]);
}

#[test]
fn the_result_table_is_the_last_one_shown() {
    let r = lua("aiq.table({{a = 1}}) aiq.table(aiq.query('SELECT month, n FROM t ORDER BY n'))");
    let report = r.result.as_ref().unwrap();
    assert_eq!(report.rows, 2);
    assert_eq!(report.preview, "month,n\n2024-02,1\n2024-01,5\n");
    let rows: Vec<Vec<Value>> = r.sink.rows();
    assert_eq!(rows.len(), 3, "both tables were shown");
}

#[test]
fn errors_name_the_line() {
    let e = error(lua("local x = 1\nlocal y = nil\nprint(y.z)"));
    assert!(
        e.starts_with("the Lua program failed: test.lua:3: attempt to index a nil value"),
        "{e}"
    );
    let e = error(lua("local x = \n"));
    assert!(e.contains("syntax error") && e.contains("test.lua:"), "{e}");
    let e = error(lua("aiq.query('SELECT nope FROM t')"));
    assert!(
        e.contains("test.lua:1: query failed: no such column: nope"),
        "{e}"
    );
}

#[test]
fn a_time_limit_inside_pcall_still_ends_the_run() {
    let started = Instant::now();
    let e = error(lua(
        "while true do pcall(function() while true do end end) end",
    ));
    assert!(e.contains("time limit of 2 s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn refusals_are_lua_errors_that_pcall_can_catch() {
    let r = lua("local ok, e = pcall(aiq.query, 'DELETE FROM t') print(ok, e)");
    assert!(r.result.is_ok());
    assert!(
        output(&r).starts_with("false\trefused: DELETE changes data"),
        "{}",
        output(&r)
    );
    let r = lua("aiq.query('DELETE FROM t')");
    assert!(
        matches!(r.result, Err(LuaFailure::Refused { .. })),
        "{:?}",
        r.result
    );
}

#[test]
fn cancel_stops_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        c.cancel();
    });
    let r = run_in(dir.path(), "while true do end", &limits(), false, &cancel);
    t.join().unwrap();
    assert!(
        matches!(r.result, Err(LuaFailure::Cancelled)),
        "{:?}",
        r.result
    );
}

#[test]
fn every_run_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let _ = run_in(
        dir.path(),
        "aiq.query('SELECT 1') error('boom')",
        &limits(),
        false,
        &CancelToken::new(),
    );
    let logs = crate::home::log_files(&dir.path().join("home"));
    assert_eq!(logs.len(), 1);
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["status"], "error");
    assert_eq!(line["calls"][0]["sql"], "SELECT 1");
    assert_eq!(line["calls"][0]["rows"], 1);
    assert_eq!(line["origin"], "file");
    assert!(line["error"].as_str().unwrap().contains("boom"));
}

#[test]
fn rows_into_lua_count_against_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let tight = LuaConfig {
        memory_mb: 1,
        max_rows: 1_000_000,
        max_total_rows: 1_000_000,
        ..limits()
    };
    let r = run_in(
        dir.path(),
        "local rows = aiq.query(\"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT x, 'row number ' || x AS label FROM c\")",
        &tight,
        false,
        &CancelToken::new(),
    );
    let e = error(r);
    assert!(e.contains("memory limit of 1 MB"), "{e}");
    // The limit is back for what the program does next.
    let r = run_in(
        dir.path(),
        "pcall(aiq.query, 'SELECT 1') local s = string.rep('x', 4 * 1024 * 1024)",
        &tight,
        false,
        &CancelToken::new(),
    );
    let e = error(r);
    assert!(e.contains("memory limit of 1 MB"), "{e}");
}

#[test]
fn repeated_column_names_stay_apart() {
    let r = lua("local r = aiq.query('SELECT 1 AS id, 2 AS id, 3 AS id_2') print(table.concat(r.columns, ','), r[1].id, r[1].id_2, r[1].id_3)");
    assert_eq!(output(&r), "id,id_3,id_2\t1\t3\t2\n");
}
