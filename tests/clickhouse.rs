//! The ClickHouse source against a real two-shard cluster
//! (tests/common/clickhouse.rs): typed rows, the schema with the
//! `Distributed` table as the one to query, questions through the scripted
//! model and `-e` reading both shards, the deadline and Ctrl-C stopping
//! the query on the server, streaming, passwords, the catalog cache, and
//! the generated attacker's corpus changing nothing on either shard. Under
//! `AIQ_REQUIRE_SERVERS=1` (CI) a missing server fails instead of skipping.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::attack::{self, Engine};
use common::clickhouse::{cluster, Cluster, Shard};
use common::findings::{report, Finding};
use common::least_privilege::{
    blocks, doctor, fine, reads_payroll, superuser, READER, READER_PASSWORD,
};
use common::llm::{ModelServer, Reply};
use common::servers::PASSWORD;
use common::ways::{self, Target};
use common::{rss_kb, stderr_of, stdout_of, Sandbox};
use serde_json::{json, Value};

const SEED: u64 = 0x5eed_c1c1;

/// Held by the tests that compare snapshots or change the catalog.
static SNAPSHOTS: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SNAPSHOTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn exec(sb: &Sandbox, url: &str, sql: &str, format: &str) -> std::process::Output {
    sb.aiq()
        .args([url, "-e", sql, "-f", format])
        .output()
        .unwrap()
}

fn json_rows(out: &std::process::Output) -> Vec<Value> {
    let text = stdout_of(out);
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(rows)) => rows,
        other => panic!("not a JSON array: {other:?}\n{text}\n{}", stderr_of(out)),
    }
}

#[test]
fn rows_are_typed() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let out = exec(
        &sb,
        &c.first().url(),
        "SELECT * FROM kinds ORDER BY id",
        "json",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = json_rows(&out);
    let want = json!({
        "id": 1, "i8": -128, "i64": -9223372036854775808i64, "f": 0.1,
        "s": "tab\there", "lc": "x", "fs": "ab", "d": "2024-02-29",
        "dt": "2024-02-29 13:05:09", "dtz": "2024-02-29 13:05:09",
        "u": "61f0c404-5cb3-11e7-907b-a6006ad3dba0", "e": "large",
        "arr": ["a", null, "it's"], "nested": [[1, 2], [3]], "tup": [7, "seven"],
        "ip": 16909060,
    });
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&rows[0][k], v, "column {k}");
    }
    // Wider than a JSON parser keeps: exact in the text.
    let text = stdout_of(&out);
    assert!(text.contains("\"u64\":18446744073709551615"), "{text}");
    assert!(
        text.contains("\"dec\":12345678901234567890.0123456789"),
        "{text}"
    );
    assert_eq!(rows[1]["s"], Value::Null);
    // The column types say what the server said, time zone included.
    let out = exec(
        &sb,
        &c.first().url(),
        "SELECT dtz, lc FROM kinds LIMIT 0",
        "json",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let csv = exec(
        &sb,
        &c.first().url(),
        "SELECT u64, dec FROM kinds WHERE id = 1",
        "csv",
    );
    assert_eq!(
        stdout_of(&csv),
        "u64,dec\n18446744073709551615,12345678901234567890.0123456789\n"
    );
}

#[test]
fn schema_shows_the_distributed_table_to_query() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let out = sb
        .aiq()
        .args(["schema", &c.first().url()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let schema = stdout_of(&out);
    let line = |name: &str| {
        schema
            .lines()
            .find(|l| {
                l.starts_with(&format!("table {name} ")) || l.starts_with(&format!("view {name} "))
            })
            .unwrap_or_else(|| panic!("no {name} in\n{schema}"))
            .to_string()
    };
    let events = line("events");
    assert!(events.contains("(~6 rows)"), "{events}");
    assert!(
        events.contains("Distributed over cluster two_shards (2 shards): the rows of every shard's events_local; query this table"),
        "{events}"
    );
    let local = line("events_local");
    assert!(local.contains("(~3 rows)"), "{local}");
    assert!(
        local.contains("local table of one shard only, under the Distributed table events: query events for all rows"),
        "{local}"
    );
    assert!(
        line("orders").contains("engine MergeTree, sorted by (id)"),
        "{schema}"
    );
    assert!(
        schema.contains("status LowCardinality(String) not null, e.g."),
        "{schema}"
    );
    assert!(schema.contains("s Nullable(String),"), "{schema}");
    assert!(schema.contains("big_spenders"), "{schema}");
}

#[test]
fn execute_reads_both_shards() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let out = exec(
        &sb,
        &c.first().url(),
        "SELECT id, kind, amount FROM events ORDER BY id",
        "csv",
    );
    assert_eq!(
        stdout_of(&out),
        "id,kind,amount\n1,click,1.50\n2,view,2.50\n3,buy,3.50\n4,click,4.50\n5,view,5.50\n6,buy,6.50\n",
        "{}",
        stderr_of(&out)
    );
    // Each shard's local table holds its half.
    for (shard, want) in c.shards.iter().zip(["1\n2\n3\n", "4\n5\n6\n"]) {
        let out = exec(
            &sb,
            &shard.url(),
            "SELECT id FROM events_local ORDER BY id",
            "csv",
        );
        assert_eq!(stdout_of(&out), format!("id\n{want}"));
    }
}

/// A connection the server closed while it sat idle in aiq's pool (the
/// test servers keep an idle connection 1 s, below aiq's pool's 2 s) is
/// not an error: the statement goes again on a new connection, so the
/// first statement after a pause works as the next one does.
#[test]
fn a_statement_after_the_server_closed_an_idle_connection_works() {
    use expectrl::Expect;
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let server = ModelServer::start(vec![]);
    let url = c.first().url();
    let mut p = common::pty(&sb, &[url.as_ref()], Some(&server), "dumb");
    p.expect("]> ").unwrap();
    for n in 1..=3 {
        p.send_line(format!("/sql SELECT {n} + 40 AS answer"))
            .unwrap();
        p.expect(format!("{}", n + 40)).unwrap();
        p.expect("]> ").unwrap();
        std::thread::sleep(Duration::from_millis(1500));
    }
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
}

/// A table whose name has a dot of its own (`report.2024`, as a file
/// export might be named) is one name: the schema writes it quoted, as
/// ClickHouse reads it, its sample values are there, and a statement that
/// names it so runs. (In a database of its own, so no other test's table
/// list changes.)
#[test]
fn a_table_name_with_a_dot_is_one_name() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let db = format!("dots_{}", std::process::id());
    c.first().admin(&format!(
        "CREATE DATABASE {db}; \
         CREATE TABLE {db}.`report.2024` (id UInt32, region String) ENGINE = MergeTree ORDER BY id; \
         INSERT INTO {db}.`report.2024` VALUES (1, 'north')"
    ));
    let url = c.first().url().replace("/shop", &format!("/{db}"));
    let schema = sb.aiq().args(["schema", &url]).output().unwrap();
    let out = exec(&sb, &url, "SELECT region FROM \"report.2024\"", "csv");
    c.first().admin(&format!("DROP DATABASE {db}"));
    let text = stdout_of(&schema);
    assert!(schema.status.success(), "{}", stderr_of(&schema));
    assert!(text.contains("table \"report.2024\" "), "{text}");
    assert!(
        text.contains("region String not null, e.g. 'north'"),
        "{text}"
    );
    assert_eq!(stdout_of(&out), "region\nnorth\n", "{}", stderr_of(&out));
}

/// CSV and TSV exports read the server's binary answer where every column
/// allows it: ClickHouse 18.16 prints a date after 2105 as 1970-01-01 in
/// its text (which JSON output reads), while its binary form holds the
/// day itself.
#[test]
fn csv_and_tsv_exports_read_the_binary_answer() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let sql = "SELECT toDate(50000) AS d, toDate(1000) AS e, toDecimal64(-1.5, 2) AS x";
    let csv = exec(&sb, &c.first().url(), sql, "csv");
    assert_eq!(
        stdout_of(&csv),
        "d,e,x\n2106-11-24,1972-09-27,-1.50\n",
        "{}",
        stderr_of(&csv)
    );
    let tsv = exec(&sb, &c.first().url(), sql, "tsv");
    assert_eq!(stdout_of(&tsv), "d\te\tx\n2106-11-24\t1972-09-27\t-1.50\n");
    if c.first().admin("SELECT version()").starts_with("18.16.") {
        let json = exec(&sb, &c.first().url(), sql, "json");
        assert!(
            stdout_of(&json).contains("\"d\":\"1970-01-01\""),
            "{}",
            stdout_of(&json)
        );
    }
}

#[test]
fn questions_name_the_dialect_read_both_shards_and_keep_no_password() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let model = ModelServer::start(vec![Reply::Text(
        "```sql\nSELECT kind, count() AS n, sum(amount) AS total FROM events GROUP BY kind ORDER BY kind\n```"
            .into(),
    )]);
    let session = sb.path().join("s.json");
    std::fs::write(
        &session,
        json!({
            "version": 1,
            "metadata": {
                "created_at": "2026-01-26T10:00:00Z",
                "last_updated": "2026-01-26T10:00:00Z",
                "data_source": c.first().url_without_password(),
                "database_type": "clickhouse",
            },
            "messages": [],
        })
        .to_string(),
    )
    .unwrap();
    let out = sb
        .aiq_with(&model, "openai")
        .arg(c.first().url())
        .args(["-q", "how many events of each kind?", "-f", "csv", "-s"])
        .arg(&session)
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&out),
        "kind,n,total\nbuy,2,10.00\nclick,2,6.00\nview,2,8.00\n",
        "{}",
        stderr_of(&out)
    );
    let request = &model.chats()[0];
    assert!(!request.raw.contains(PASSWORD));
    let system = &request.messages()[0].1;
    assert!(
        system.contains("a ClickHouse database (ClickHouse 18.16"),
        "{system}"
    );
    assert!(system.contains("toStartOfMonth"), "{system}");
    assert!(
        system.contains("Distributed over cluster two_shards"),
        "{system}"
    );
    let file = std::fs::read_to_string(&session).unwrap();
    assert!(!file.contains(PASSWORD), "{file}");
    let saved: Value = serde_json::from_str(&file).unwrap();
    assert_eq!(saved["metadata"]["database_type"], "clickhouse");
    assert_eq!(
        saved["metadata"]["data_source"],
        Value::String(c.first().url_without_password())
    );
}

/// Waits until `marker`'s query runs on `shard` (`want` true) or is gone.
fn wait_running(shard: &Shard, marker: &str, want: bool, within: Duration) {
    let deadline = Instant::now() + within;
    while (shard.running(marker) > 0) != want {
        assert!(
            Instant::now() < deadline,
            "the query {} on the server",
            if want { "never started" } else { "still runs" }
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Tens of seconds of work over `big`, far longer than any test waits, in
/// blocks of well under a second even on a busy machine: the server looks
/// for a `KILL QUERY` between blocks, so a test waiting for the query to be
/// gone measures aiq's stop, not the block's length.
fn slow(marker: &str) -> String {
    format!("SELECT sum(length(arrayMap(x -> x * n, range(500)))) AS {marker} FROM big")
}

#[test]
fn statement_timeout_stops_the_query_on_the_server() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    sb.write_config("[query]\ntimeout_secs = 1\n");
    let started = Instant::now();
    let out = exec(&sb, &c.first().url(), &slow("aiq_timeout_probe"), "csv");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ran longer than 1 s"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    wait_running(
        c.first(),
        "aiq_timeout_probe",
        false,
        Duration::from_secs(5),
    );
}

#[test]
fn ctrl_c_cancels_on_the_server() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([
            c.first().url().as_str(),
            "-e",
            &slow("aiq_cancel_probe"),
            "-f",
            "csv",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_running(c.first(), "aiq_cancel_probe", true, Duration::from_secs(20));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
    wait_running(c.first(), "aiq_cancel_probe", false, Duration::from_secs(5));
}

/// Ten million rows: the first arrive at once, memory stays flat, and a
/// reader that stops early ends aiq quietly and the query on the server.
#[test]
fn big_results_stream() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([
            c.first().url().as_str(),
            "-e",
            "SELECT n, s AS aiq_stream_probe FROM big ORDER BY n",
            "-f",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "n,aiq_stream_probe");
    let mut peak_kb = 0u64;
    for i in 0..2_000_000u64 {
        let line = lines.next().unwrap().unwrap();
        if i == 0 {
            assert_eq!(line, "0,0");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                started.elapsed()
            );
        }
        if i % 100_000 == 0 {
            peak_kb = peak_kb.max(rss_kb(pid));
        }
    }
    assert!(peak_kb < 100 * 1024, "{peak_kb} kB resident");
    drop(lines);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    wait_running(c.first(), "aiq_stream_probe", false, Duration::from_secs(5));
}

#[test]
fn passwords_stay_out_and_saved_sources_take_them_from_password_env() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let out = sb
        .aiq()
        .args(["sources", "add", "wh", &c.first().url()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(!stderr_of(&out).contains(PASSWORD));
    let config = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(!config.contains(PASSWORD), "{config}");
    let out = sb
        .aiq()
        .args(["sources", "add", "wh2", &c.first().url_without_password()])
        .args(["--password-env", "AIQ_TEST_CH_PW"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = sb
        .aiq()
        .env("AIQ_TEST_CH_PW", PASSWORD)
        .args([
            "wh2",
            "-e",
            "SELECT count() AS n FROM events",
            "-f",
            "csv",
            "-vv",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&out), "n\n6\n", "{}", stderr_of(&out));
    assert!(!stderr_of(&out).contains(PASSWORD));
    // Without the password: exit 3, and the message says where it comes from.
    let out = sb
        .aiq()
        .env_remove("AIQ_TEST_CH_PW")
        .args(["wh2", "-e", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr_of(&out).contains("$AIQ_TEST_CH_PW"),
        "{}",
        stderr_of(&out)
    );
    // A wrong one: exit 3, the password never shown.
    let wrong = c.first().url().replace(PASSWORD, "not-the-password");
    let out = exec(&sb, &wrong, "SELECT 1", "csv");
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(
        !stderr_of(&out).contains("not-the-password"),
        "{}",
        stderr_of(&out)
    );
    // Nothing listening: exit 3.
    let out = exec(&sb, "clickhouse://u@127.0.0.1:1/shop", "SELECT 1", "csv");
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("connection refused"),
        "{}",
        stderr_of(&out)
    );
    // doctor reports the server and the read-only session.
    let out = sb
        .aiq()
        .args(["doctor", &c.first().url()])
        .output()
        .unwrap();
    let text = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        text.contains("ClickHouse 18.16") || text.contains("ClickHouse "),
        "{text}"
    );
    assert!(text.contains("read-only session confirmed"), "{text}");
}

/// A login whose profile is read-only already takes no settings: aiq
/// sends none, reads work, and the deadline is aiq's own.
#[test]
fn a_read_only_login_works() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let url = c.first().url().replace("analyst", "viewer");
    let out = exec(&sb, &url, "SELECT count() AS n FROM events", "csv");
    assert_eq!(stdout_of(&out), "n\n6\n", "{}", stderr_of(&out));
    sb.write_config("[query]\ntimeout_secs = 1\n");
    let out = exec(&sb, &url, &slow("aiq_viewer_probe"), "csv");
    assert!(
        stderr_of(&out).contains("ran longer than 1 s"),
        "{}",
        stderr_of(&out)
    );
    wait_running(c.first(), "aiq_viewer_probe", false, Duration::from_secs(5));
}

/// The catalog cache is checked with one tiny query on `system.events`
/// first: nothing written, the cache answers (a tampered entry shows it);
/// written in another database, the full fingerprint finds the catalog
/// unchanged, the cache answers and the entry is restamped; a row
/// inserted into one of the source's tables, or a table created or
/// dropped, moves the full fingerprint, so the catalog is read again.
#[test]
fn the_catalog_is_cached_until_it_changes() {
    let Some(c) = cluster() else { return };
    let _one = lock();
    let sb = Sandbox::new();
    let url = c.first().url();
    let schema = |sb: &Sandbox| {
        let out = sb.aiq().args(["schema", &url]).output().unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        stdout_of(&out)
    };
    c.first()
        .admin("CREATE TABLE shop.cache_probe (id UInt8) ENGINE = MergeTree ORDER BY id");
    let first = schema(&sb);
    assert!(first.contains("table cache_probe"), "{first}");
    assert_eq!(first, schema(&sb));
    // Nothing written: the quick check lets the entry answer as it is.
    let entry = sb.only_cache_entry();
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(
        &entry,
        common::replace_bytes(&bytes, "cache_probe", "cache_proxy"),
    )
    .unwrap();
    assert!(
        schema(&sb).contains("table cache_proxy"),
        "the cache was not used"
    );
    // Written in another database: the full fingerprint finds this one
    // unchanged, and the entry is kept under the server's counters of now.
    c.first().admin(
        "CREATE DATABASE IF NOT EXISTS aiq_elsewhere; \
         CREATE TABLE aiq_elsewhere.x (id UInt8) ENGINE = MergeTree ORDER BY id; \
         INSERT INTO aiq_elsewhere.x VALUES (1)",
    );
    let tampered = std::fs::read(&entry).unwrap();
    let after_elsewhere = schema(&sb);
    c.first().admin("DROP DATABASE aiq_elsewhere");
    assert!(
        after_elsewhere.contains("table cache_proxy"),
        "the cache was not used after a write in another database:\n{after_elsewhere}"
    );
    assert_ne!(
        std::fs::read(&entry).unwrap(),
        tampered,
        "the entry was not restamped"
    );
    // A row inserted here: read again.
    c.first()
        .admin("INSERT INTO shop.cache_probe VALUES (1), (2), (3)");
    let after_insert = schema(&sb);
    assert!(
        after_insert.contains("table cache_probe"),
        "a stale cache was used after rows were inserted:\n{after_insert}"
    );
    // A table created, then dropped: each read again.
    c.first()
        .admin("CREATE TABLE shop.cache_probe2 (id UInt8) ENGINE = MergeTree ORDER BY id");
    let after_create = schema(&sb);
    c.first()
        .admin("DROP TABLE shop.cache_probe; DROP TABLE shop.cache_probe2");
    assert!(
        after_create.contains("table cache_probe2"),
        "{after_create}"
    );
    let after_drop = schema(&sb);
    assert!(!after_drop.contains("cache_probe"), "{after_drop}");
}

/// The attacker's corpus through one Lua script per batch, one MCP
/// session per batch (when the MCP SDK is there; CI requires it) and a
/// stratified sample through `-e`, read-only and with `--allow-write`
/// (never `--yes`), payroll hidden: nothing changed on either shard,
/// nothing hidden shown, the source still answering.
#[test]
fn hostile_corpus_changes_nothing_on_either_shard() {
    let Some(c) = cluster() else { return };
    let _one = lock();
    let started = Instant::now();
    let before = c.snapshot();
    let mut findings: Vec<Finding> = Vec::new();
    let mut sent = 0;
    for (mode, allow_write) in [false, true].into_iter().enumerate() {
        let (sb, outside) = sandbox(c);
        let corpus = attack::corpus(Engine::ClickHouse, &outside, SEED);
        assert!(corpus.len() >= 40 * 40, "{}", corpus.len());
        let target = Target {
            sb: &sb,
            source: "shop",
            engine: Engine::ClickHouse,
            allow_write,
        };
        let sample: Vec<_> = attack::stratified_sample(&corpus, SEED)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| (i + i / 4) % 2 == mode)
            .map(|(_, v)| v)
            .collect();
        sent += corpus.len() + sample.len();
        findings.extend(ways::run_lua(&target, &corpus));
        findings.extend(ways::run_exec(&target, &sample));
        if let Some(python) = common::mcp::python() {
            sent += corpus.len();
            findings.extend(common::mcp_attack::run_mcp(&target, python, &corpus));
        }
    }
    let after = c.snapshot();
    let text = report(&findings);
    eprintln!(
        "clickhouse through lua, -e and mcp: {sent} variants in {:.1} s; {}",
        started.elapsed().as_secs_f64(),
        text.lines().next().unwrap_or_default()
    );
    assert_eq!(after, before, "the data changed\n{text}");
    assert!(findings.is_empty(), "{text}");
}

/// A sandbox with the first shard as the saved source `shop`, payroll hidden.
fn sandbox(c: &Cluster) -> (Sandbox, String) {
    let sb = Sandbox::new();
    let outside = attack::outside_folder(sb.path());
    sb.write_config(&format!(
        "[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{}\"\nexclude = [\"payroll\"]\n\
         [lua]\ntimeout_secs = 1200\nmemory_mb = 1024\nmax_output_kb = 1048576\n",
        c.first().url()
    ));
    (sb, outside.display().to_string())
}

/// `aiq doctor` on ClickHouse 18.16: a login whose profile lets it write
/// is warned of, and so is every hidden table (a release without table
/// grants lets a login read every table of its databases), without
/// changing doctor's exit code; the login docs/safety.md makes for such a
/// release (a read-only profile allowed the source's database only, the
/// hidden table moved to a database of its own) gets one `ok`, reads the
/// visible tables, and the server refuses it the hidden one and writes.
/// The page's statements for servers with SQL users (20.5 on) do not run
/// on 18.16 and are not run here.
#[test]
fn doctor_says_what_a_clickhouse_login_could_do_past_the_gate() {
    let Some(c) = cluster() else { return };
    let _lock = lock();
    let shard = c.first();
    shard.admin(
        "CREATE DATABASE sales;
         CREATE TABLE sales.customers (id Int32, name String) ENGINE = MergeTree ORDER BY id;
         CREATE TABLE sales.orders (id Int32, customer_id Int32, total Decimal(10, 2)) ENGINE = MergeTree ORDER BY id;
         CREATE TABLE sales.payroll (id Int32, salary_cents Int32) ENGINE = MergeTree ORDER BY id;
         INSERT INTO sales.customers VALUES (1, 'Ada');
         INSERT INTO sales.orders VALUES (1, 1, 9.50);
         INSERT INTO sales.payroll VALUES (1, 7340000);",
    );
    let url = |login: &str| format!("clickhouse://{login}@127.0.0.1:{}/sales", shard.http_port);
    let analyst = format!("analyst:{PASSWORD}");
    let (code, lines) = doctor(&url(&analyst));
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines,
        [
            superuser(
                "analyst",
                "is not read-only on the server (readonly = 0 in its settings)"
            ),
            reads_payroll("analyst"),
        ]
    );
    let (_, lines) = doctor(&url(&format!("viewer:{PASSWORD}")));
    assert_eq!(lines, [reads_payroll("viewer")]);

    let sql = blocks("### ClickHouse", "sql");
    assert_eq!(sql.len(), 2, "{sql:?}");
    assert!(sql[0].starts_with("CREATE USER aiq_reader"), "{}", sql[0]);
    let xml = &blocks("### ClickHouse", "xml")[0];
    std::fs::create_dir_all(shard.users_d()).unwrap();
    std::fs::write(shard.users_d().join("aiq.xml"), xml).unwrap();
    shard.admin(&sql[1]);
    let read = |sql: &str| shard.as_login(READER, READER_PASSWORD, "sales", sql);
    let deadline = Instant::now() + Duration::from_secs(60);
    while read("SELECT 1").is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    let (code, lines) = doctor(&url(&format!("{READER}:{READER_PASSWORD}")));
    assert_eq!((code, lines), (Some(0), vec![fine(READER, false)]));
    assert_eq!(
        read("SELECT (SELECT count() FROM customers) + (SELECT count() FROM orders)"),
        Ok("2\n".to_string())
    );
    let refused = read("SELECT * FROM sales_private.payroll").unwrap_err();
    assert!(
        refused.contains("Access denied to database sales_private"),
        "{refused}"
    );
    let refused = read("INSERT INTO customers VALUES (2, 'Bob')").unwrap_err();
    assert!(refused.contains("readonly"), "{refused}");
}

/// Forms of ClickHouse's own that the first check once refused as
/// unparsable run and answer (issue: false refusals), and the table
/// functions the docs list answer as the docs say.
#[test]
fn clickhouse_forms_run_as_the_server_reads_them() {
    let Some(c) = cluster() else { return };
    let sb = Sandbox::new();
    let url = c.first().url();
    for (sql, want) in [
        ("WITH 1 AS x SELECT x", "x\n1\n"),
        ("WITH 2 AS x, x * 3 AS y SELECT x, y", "x,y\n2,6\n"),
        (
            "WITH (SELECT max(id) FROM events) AS m SELECT m",
            "m\n6\n",
        ),
        (
            "SELECT id FROM events WHERE id GLOBAL IN (SELECT id FROM events WHERE kind = 'buy') ORDER BY id",
            "id\n3\n6\n",
        ),
        (
            "SELECT id FROM events WHERE id GLOBAL NOT IN (SELECT id FROM events WHERE kind != 'buy') ORDER BY id",
            "id\n3\n6\n",
        ),
        ("SELECT (1, 'a').1 AS a, (1, 'a').2 AS b", "a,b\n1,a\n"),
        (
            "SELECT count() AS n FROM events_local AS e JOIN events_local AS f USING id",
            "n\n3\n",
        ),
        (
            "SELECT x FROM (SELECT [1, 2] AS arr) ARRAY JOIN arr AS x",
            "x\n1\n2\n",
        ),
    ] {
        let out = exec(&sb, &url, sql, "csv");
        assert_eq!(
            (out.status.code(), stdout_of(&out).as_str()),
            (Some(0), want),
            "{sql}\n{}",
            stderr_of(&out)
        );
    }
    // The table functions aiq allows pass its gate; this release refuses
    // them in the read-only session aiq keeps, and the message says what
    // to write instead, which runs.
    for sql in [
        "SELECT number FROM numbers(3)",
        "SELECT * FROM zeros(2)",
        "SELECT * FROM values('a UInt8', 1, 2)",
    ] {
        let out = exec(&sb, &url, sql, "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{sql}\n{err}");
        assert!(
            err.contains("refuses table functions such as numbers() in a read-only session")
                && err.contains("arrayJoin(range(10))")
                && !err.contains("refused:"),
            "{sql}\n{err}"
        );
    }
    let out = exec(&sb, &url, "SELECT arrayJoin(range(3)) AS number", "csv");
    assert_eq!(stdout_of(&out), "number\n0\n1\n2\n", "{}", stderr_of(&out));
}
