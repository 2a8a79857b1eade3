//! Defects a demanding new user hit, each pinned by a test: DuckDB values
//! of every type in every format, a closed stderr, tables that never hold
//! their rows back, data files that are ragged, empty or broken, stable
//! prompts, exit codes, session files, secrets in model URLs, temporary
//! files and signals.

mod common;

use std::io::Read;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::llm::{ModelServer, Reply};
use common::{stderr_of, stdout_of, Sandbox};
use predicates::prelude::*;
use serde_json::Value;

const MEMORY: &str = "duckdb://:memory:";

#[test]
fn every_duckdb_type_decodes_in_every_format() {
    let sb = Sandbox::new();
    for format in ["table", "csv", "tsv", "json", "jsonl", "markdown"] {
        let out = sb
            .aiq()
            .args([MEMORY, "-e", "SELECT * FROM test_all_types()", "-f", format])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{format}: {err}");
        assert!(!err.contains("panicked"), "{format}: {err}");
        assert!(!out.stdout.is_empty(), "{format}");
    }
    // BIGNUM's extremes have ~300 digits: valid JSON numbers, but beyond
    // what this test's JSON parser holds; they are checked below.
    let out = sb
        .aiq()
        .args([
            MEMORY,
            "-e",
            "SELECT * EXCLUDE (bignum) FROM test_all_types()",
            "-f",
            "json",
        ])
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].as_object().unwrap().len(), 55);
    assert_eq!(rows[0]["date"], "5877642-06-25 (BC)");
    assert_eq!(rows[0]["time_tz"], "00:00:00+15:59:59");
    assert_eq!(rows[0]["bit"], "0010001001011100010101011010111");
    assert_eq!(rows[0]["int_array"], serde_json::json!([]));
    assert_eq!(rows[1]["struct"]["a"], 42);
    assert!(rows[1]["map"].is_object(), "{}", rows[1]["map"]);
    let out = sb
        .aiq()
        .args([
            MEMORY,
            "-e",
            "SELECT bignum FROM test_all_types()",
            "-f",
            "csv",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        text.starts_with("bignum\n-1797693134862315708145274237317043567980"),
        "{text}"
    );
    assert!(rows[2].as_object().unwrap().values().all(Value::is_null));
}

#[test]
fn duckdb_values_print_as_duckdb_means_them() {
    let sb = Sandbox::new();
    let sql = "SELECT '12:00:00.123456789'::TIME_NS AS t, 'infinity'::DATE AS d, '-infinity'::TIMESTAMP AS ts, \
               '12:00:00+05:30'::TIMETZ AS tz, 12345678901234567890123::BIGNUM AS big, '0101'::BIT AS b, \
               [1, 2, NULL] AS l, {'a': 1, 'b': 'x'} AS s, MAP {'k': 1.5} AS m";
    sb.aiq()
        .args([MEMORY, "-e", sql, "-f", "jsonl"])
        .assert()
        .success()
        .stdout(
            "{\"t\":\"12:00:00.123456789\",\"d\":\"infinity\",\"ts\":\"-infinity\",\"tz\":\"12:00:00+05:30\",\
             \"big\":12345678901234567890123,\"b\":\"0101\",\"l\":[1,2,null],\"s\":{\"a\":1,\"b\":\"x\"},\"m\":{\"k\":1.5}}\n",
        );
    // Repeated column names are made unique, and the user is told.
    sb.aiq()
        .args([MEMORY, "-e", "SELECT 1 AS a, 2 AS a", "-f", "json"])
        .assert()
        .success()
        .stdout("[\n{\"a\":1,\"a_2\":2}\n]\n")
        .stderr("aiq: the result repeats column names; shown as a_2\n");
}

/// Writing diagnostics to a closed or broken stderr never panics.
#[test]
fn a_closed_or_broken_stderr_is_not_a_crash() {
    let sb = Sandbox::new();
    let aiq = assert_cmd::cargo::cargo_bin("aiq");
    // Closed: the exit code still says what happened (a missing source: 3).
    let out = StdCommand::new("sh")
        .arg("-c")
        .arg("exec 2>&-; exec \"$0\" missing.csv -e 'SELECT 1'")
        .arg(&aiq)
        .current_dir(sb.path())
        .env("AIQ_HOME", sb.home())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    // Broken: the reader of stderr went away before aiq wrote.
    let mut child = sb
        .std_aiq()
        .args(["missing.csv", "-e", "SELECT 1"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

/// A huge result shows its first rows at once and does not count forever.
#[test]
fn tables_never_hold_their_rows_back() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let out = sb
        .aiq()
        .args([
            MEMORY,
            "-e",
            "SELECT a.range * b.range AS x FROM range(100000) a, range(100000) b",
            "-f",
            "table",
        ])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.ends_with("… more rows (not counted; use --max-rows to show more)\n"),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.starts_with("│ ")).count(), 101);
    // A result that can be counted quickly is counted.
    sb.aiq()
        .args([MEMORY, "-e", "SELECT * FROM range(5000)", "-f", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::ends_with(
            "\n… 4900 more rows (use --max-rows to show more)\n",
        ));
}

/// The first rows reach the terminal while the statement still runs.
#[test]
fn the_first_rows_arrive_before_the_statement_ends() {
    let sb = Sandbox::new();
    let mut child = sb
        .std_aiq()
        .args([
            MEMORY,
            "-e",
            "SELECT a.range * b.range AS x FROM range(100000) a, range(100000) b",
            "-f",
            "table",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    let first_output = started.elapsed();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let ended = started.elapsed();
    child.wait().unwrap();
    assert!(
        first_output + Duration::from_millis(500) < ended,
        "the table came at {first_output:?}, the end at {ended:?}"
    );
}

#[test]
fn ragged_empty_and_broken_data_files() {
    let sb = Sandbox::new();
    let dir = sb.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ragged.csv"), "a,b,c\n1,2,3\n4,5\n6,7,8\n").unwrap();
    std::fs::write(dir.join("empty.csv"), "").unwrap();
    std::fs::write(
        dir.join("broken.parquet"),
        b"PAR1 this is not a parquet file",
    )
    .unwrap();
    // A short row reads as the header says, missing fields NULL.
    sb.aiq()
        .args([
            dir.join("ragged.csv").to_str().unwrap(),
            "-e",
            "SELECT * FROM ragged",
            "-f",
            "csv",
        ])
        .assert()
        .success()
        .stdout("a,b,c\n1,2,3\n4,5,\n6,7,8\n");
    // An empty file is an error that says so.
    sb.aiq()
        .args([dir.join("empty.csv").to_str().unwrap(), "-e", "SELECT 1"])
        .assert()
        .code(3)
        .stderr(format!(
            "aiq: cannot read {}: the file is empty\n",
            dir.join("empty.csv").display()
        ));
    // A bad file: one line naming it, the line, the problem, what to do.
    let out = sb
        .aiq()
        .args([
            dir.join("broken.parquet").to_str().unwrap(),
            "-e",
            "SELECT 1",
        ])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot read ") && err.contains("broken.parquet: "),
        "{err}"
    );
    assert!(!err.contains("CREATE VIEW"), "{err}");
    // In a folder, the bad files are skipped with a warning; the rest works.
    let out = sb
        .aiq()
        .args([
            dir.to_str().unwrap(),
            "-e",
            "SELECT count(*) AS n FROM ragged",
            "-f",
            "csv",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "n\n3\n");
    let err = stderr_of(&out);
    assert!(
        err.contains("aiq: warning: skipped ") && err.contains("empty.csv: the file is empty"),
        "{err}"
    );
    assert!(err.contains("broken.parquet: "), "{err}");
}

/// The same source gives the same prompt, byte for byte.
#[test]
fn introspection_is_deterministic() {
    let sb = Sandbox::new();
    let folder = sb.shop_csv();
    let db = sb.shop_sqlite();
    let duck = sb.shop_duckdb();
    for source in [&folder, &db, &duck] {
        let runs: Vec<String> = (0..4)
            .map(|_| {
                let out = sb
                    .aiq()
                    .args(["schema", "--refresh", source.to_str().unwrap()])
                    .output()
                    .unwrap();
                stdout_of(&out)
            })
            .collect();
        assert!(runs[0].contains("e.g. '"), "no samples: {}", runs[0]);
        assert!(
            runs.iter().all(|r| r == &runs[0]),
            "{source:?} changed between runs"
        );
    }
}

#[test]
fn exit_codes_follow_the_spec() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.aiq()
        .arg(&db)
        .args(["-e", ""])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to run"));
    sb.aiq()
        .arg(&db)
        .args(["-e", "SELECT 1", "--max-rows", "-1"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("'-1' is not a count")
                .and(predicate::str::contains("-- -1").not()),
        );
    sb.aiq()
        .arg(&db)
        .args(["-q", "hi", "--base-url", "not a url"])
        .env("AIQ_API_KEY", "k")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not an http(s) URL"));
    // An HTML page where an event stream was expected: quoted.
    let server = ModelServer::start(vec![Reply::Garbage]);
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", "hi"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "<html><body>502 upstream exploded</body></html>",
        ));
}

#[test]
fn session_files_from_a_newer_aiq_are_refused_and_errors_say_what_was_tried() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    std::fs::create_dir_all(sb.home()).unwrap();
    let newer = sb.home().join("session_20990101000000.json");
    std::fs::write(
        &newer,
        r#"{"version": 99, "metadata": {"created_at": "2099-01-01T00:00:00Z", "last_updated": "2099-01-01T00:00:00Z", "data_source": "x", "database_type": "sqlite"}, "messages": []}"#,
    )
    .unwrap();
    let server = ModelServer::start(vec![]);
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["-s", newer.to_str().unwrap(), "-q", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "written by a newer aiq (session format version 99",
        ));
    sb.aiq()
        .args(["sessions", "show", "session_20990101000000.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("aiq: cannot show the session "));
    // A damaged session file can still be removed.
    let damaged = sb.home().join("session_20200101000000.json");
    std::fs::write(&damaged, "{ not json").unwrap();
    sb.aiq()
        .args(["sessions", "rm", "session_20200101000000.json"])
        .assert()
        .success();
    assert!(!damaged.exists());
    // Anything else is left alone.
    let other = sb.path().join("notes.json");
    std::fs::write(&other, "{}").unwrap();
    sb.aiq()
        .args(["sessions", "rm", other.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("left alone"));
    assert!(other.exists());
}

/// A password in the model's base URL never shows: not in retries, errors,
/// `-vv` traces, `aiq config show` or `aiq doctor`.
#[test]
fn a_password_in_the_model_url_is_masked_everywhere() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Status(503, "busy".into(), None),
        Reply::Text("```sql\nSELECT 1 AS one\n```".into()),
    ]);
    let secret = "pw-SECRET-77";
    let url = server
        .base()
        .replace("http://", &format!("http://ann:{secret}@"));
    sb.write_config(&format!("[llm]\nbase_url = \"{url}\"\nmax_retries = 1\n"));
    let runs = [
        sb.aiq_with(&server, "openai")
            .env("AIQ_BASE_URL", &url)
            .arg(&db)
            .args(["-vv", "-q", "hi"])
            .output()
            .unwrap(),
        sb.aiq().args(["config", "show"]).output().unwrap(),
        sb.aiq_with(&server, "openai")
            .env("AIQ_BASE_URL", &url)
            .args(["doctor"])
            .arg(&db)
            .output()
            .unwrap(),
        sb.aiq_with(&server, "openai")
            .env("AIQ_BASE_URL", url.replace(&server.url[7..], "127.0.0.1:9"))
            .arg(&db)
            .args(["-q", "hi"])
            .output()
            .unwrap(),
    ];
    assert!(
        stderr_of(&runs[0]).contains("retrying"),
        "{}",
        stderr_of(&runs[0])
    );
    assert!(
        stdout_of(&runs[1]).contains("ann:***@"),
        "{}",
        stdout_of(&runs[1])
    );
    for out in &runs {
        let all = format!("{}{}", stdout_of(out), stderr_of(out));
        assert!(!all.contains(secret), "{all}");
    }
}

#[cfg(unix)]
#[test]
fn folder_sources_leave_nothing_behind_and_refuse_writes() {
    let sb = Sandbox::new();
    let folder = sb.shop_csv();
    // A stale folder from a crashed aiq is removed at start.
    let stale = std::env::temp_dir().join("aiq-views-999999999-stale");
    std::fs::create_dir_all(&stale).unwrap();
    sb.aiq()
        .arg(&folder)
        .args(["-e", "SELECT count(*) FROM customers"])
        .assert()
        .success();
    assert!(!stale.exists(), "a stale views folder was kept");
    // Writes to data files are refused: nothing would be written back.
    sb.aiq()
        .arg(&folder)
        .args([
            "--allow-write",
            "--yes",
            "-e",
            "CREATE TABLE t AS SELECT 1 AS a",
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains(
            "cannot change this source: data files are read through views",
        ));
    // The views are kept in $AIQ_HOME, private, one database per source;
    // no temporary folder is made for them.
    let kept = || {
        let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(sb.home().join("cache/views"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        names
    };
    let found = kept();
    assert_eq!(found.len(), 2, "{found:?}");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&sb.home().join("cache/views")), 0o700);
        for f in &found {
            assert_eq!(mode(f), 0o600, "{f:?}");
        }
    }
    // SIGTERM during a query: it ends as a shell's kill does, nothing new
    // is left, and the kept views still serve the next run.
    let child = sb
        .std_aiq()
        .arg(&folder)
        .args([
            "-e",
            "SELECT count(*) FROM customers, range(1000000) a, range(1000000) b",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let prefix = format!("aiq-views-{pid}-");
    std::thread::sleep(Duration::from_millis(800));
    StdCommand::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    let temp: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(temp.is_empty(), "left behind: {temp:?}");
    assert_eq!(kept(), found);
    sb.aiq()
        .arg(&folder)
        .args(["-e", "SELECT count(*) FROM customers"])
        .assert()
        .success();
}

/// The catalog is read once and reused while the source is unchanged; a
/// changed source is read again (a stale cache is never used).
#[test]
fn the_catalog_cache_is_used_only_while_the_source_is_unchanged() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let schema = || {
        stdout_of(
            &sb.aiq()
                .args(["schema", db.to_str().unwrap()])
                .output()
                .unwrap(),
        )
    };
    let first = schema();
    let cache_dir = sb.home().join("cache");
    // Besides its lock file (a hidden `.NAME.lock`, see SPEC §7.3a).
    let entries: Vec<_> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(entries.len(), 1, "one cached catalog");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = entries[0].metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // A cached catalog is what the next run shows: prove it by editing it.
    let path = entries[0].path();
    let edit = |p: &std::path::Path| {
        let bytes = std::fs::read(p).unwrap();
        std::fs::write(p, common::replace_bytes(&bytes, "customers", "customerz")).unwrap();
    };
    edit(&path);
    assert!(
        schema().contains("table customerz"),
        "the cache was not used"
    );
    // The source changes: the cache is stale and not used.
    sb.aiq()
        .arg(&db)
        .args([
            "--allow-write",
            "--yes",
            "-e",
            "CREATE TABLE extra (id INTEGER)",
        ])
        .assert()
        .success();
    let after = schema();
    assert!(
        after.contains("table extra") && after.contains("table customers"),
        "{after}"
    );
    // --refresh reads it again whatever the cache says.
    edit(&path);
    let fresh = stdout_of(
        &sb.aiq()
            .args(["schema", "--refresh", db.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(fresh.contains("table customers"), "{fresh}");
    assert!(first.contains("table customers"));
}

/// `aiq schema` on a DuckDB file whose cached schema is fresh (the file's
/// size and time are what they were) prints it without opening the file —
/// shown here by a writer holding the file's lock, which a read-only open
/// would fail on; once the file changes, it is opened and read again.
#[test]
fn a_fresh_duckdb_schema_is_printed_without_opening_the_file() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    let schema = || {
        sb.aiq()
            .args(["schema", db.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let first = schema();
    assert!(first.status.success(), "{}", stderr_of(&first));
    let writer = duckdb::Connection::open(&db).unwrap();
    let held = schema();
    assert!(held.status.success(), "{}", stderr_of(&held));
    assert_eq!(stdout_of(&held), stdout_of(&first));
    writer
        .execute_batch("CREATE TABLE extra (id INTEGER); CHECKPOINT;")
        .unwrap();
    let changed = schema();
    assert!(!changed.status.success(), "a changed file was not opened");
    assert!(
        stderr_of(&changed).contains("lock"),
        "{}",
        stderr_of(&changed)
    );
    drop(writer);
    let after = stdout_of(&schema());
    assert!(after.contains("table extra"), "{after}");
}

/// A bad line past what DuckDB samples when it opens a file fails the query
/// with one line, not DuckDB's page of detail.
#[test]
fn a_bad_line_found_while_reading_is_one_line() {
    let sb = Sandbox::new();
    let path = sb.path().join("late.csv");
    let mut bytes = b"a,b\n".to_vec();
    for i in 0..30000 {
        bytes.extend_from_slice(format!("{i},x\n").as_bytes());
    }
    bytes.extend_from_slice(b"notanumber,y\n");
    std::fs::write(&path, bytes).unwrap();
    let out = sb
        .aiq()
        .arg(&path)
        .args(["-e", "SELECT max(a), max(b) FROM late"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("late.csv") || err.contains("line 30002: Error when converting column \"a\""),
        "{err}"
    );
    assert!(
        err.contains("does not fit the type DuckDB guessed"),
        "{err}"
    );
}
