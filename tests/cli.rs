//! The `aiq` binary end to end: direct SQL on every engine and format, the
//! schema command, saved sources, config, exit codes and output discipline.

mod common;

use std::io::Read;
use std::process::{Command as StdCommand, Stdio};
use std::time::Duration;

use common::{stderr_of, stdout_of, Sandbox};
use predicates::prelude::*;

const PER_COUNTRY: &str =
    "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country";

/// The same question answered on SQLite, DuckDB, a CSV folder and one CSV file.
fn sources(sb: &Sandbox) -> Vec<String> {
    let csv_dir = sb.shop_csv();
    vec![
        sb.shop_sqlite().display().to_string(),
        sb.shop_duckdb().display().to_string(),
        csv_dir.display().to_string(),
        csv_dir.join("customers.csv").display().to_string(),
    ]
}

#[test]
fn csv_on_every_engine() {
    let sb = Sandbox::new();
    for src in sources(&sb) {
        sb.aiq()
            .args([&src, "-e", PER_COUNTRY, "-f", "csv"])
            .assert()
            .success()
            .stdout("country,n\nDE,2\nFR,1\nUS,2\n")
            .stderr("");
    }
}

#[test]
fn csv_is_the_default_when_stdout_is_not_a_terminal() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.aiq()
        .arg(&db)
        .args(["-e", PER_COUNTRY])
        .assert()
        .success()
        .stdout("country,n\nDE,2\nFR,1\nUS,2\n");
}

#[test]
fn json_keeps_types_on_every_engine() {
    let sb = Sandbox::new();
    let sql = "SELECT o.id, c.name, c.vip, o.total, o.ordered_at FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id IN (1, 3) ORDER BY o.id";
    let db = sb.shop_sqlite();
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", sql, "-f", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // SQLite stores DECIMAL(10,2) as integer or real and BOOLEAN as 0/1;
    // aiq shows them as the declared types say.
    assert_eq!(
        stdout_of(&out),
        "[\n{\"id\":1,\"name\":\"Ann\",\"vip\":true,\"total\":19.99,\"ordered_at\":\"2024-06-01 10:00:00\"},\n{\"id\":3,\"name\":\"Bob\",\"vip\":false,\"total\":100.00,\"ordered_at\":\"2024-06-03 09:15:00\"}\n]\n"
    );
    let duck = sb.shop_duckdb();
    let out = sb
        .aiq()
        .arg(&duck)
        .args(["-e", sql, "-f", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // DuckDB decimals stay exact.
    assert_eq!(
        stdout_of(&out),
        "[\n{\"id\":1,\"name\":\"Ann\",\"vip\":true,\"total\":19.99,\"ordered_at\":\"2024-06-01 10:00:00\"},\n{\"id\":3,\"name\":\"Bob\",\"vip\":false,\"total\":100.00,\"ordered_at\":\"2024-06-03 09:15:00\"}\n]\n"
    );
    let parsed: serde_json::Value = serde_json::from_str(&stdout_of(&out)).unwrap();
    assert_eq!(parsed[1]["total"].as_f64(), Some(100.0));
    assert_eq!(parsed[0]["vip"], serde_json::Value::Bool(true));
}

#[test]
fn every_format_on_sqlite() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let sql = "SELECT name, country, NULL AS note FROM customers WHERE id <= 2 ORDER BY id";
    let cases = [
        ("csv", "name,country,note\nAnn,DE,\nBob,US,\n"),
        ("tsv", "name\tcountry\tnote\nAnn\tDE\t\nBob\tUS\t\n"),
        (
            "json",
            "[\n{\"name\":\"Ann\",\"country\":\"DE\",\"note\":null},\n{\"name\":\"Bob\",\"country\":\"US\",\"note\":null}\n]\n",
        ),
        (
            "jsonl",
            "{\"name\":\"Ann\",\"country\":\"DE\",\"note\":null}\n{\"name\":\"Bob\",\"country\":\"US\",\"note\":null}\n",
        ),
        (
            "markdown",
            "| name | country | note |\n| --- | --- | --- |\n| Ann | DE | NULL |\n| Bob | US | NULL |\n",
        ),
        (
            "table",
            "╭──────┬─────────┬──────╮\n│ name ┆ country ┆ note │\n╞══════╪═════════╪══════╡\n│ Ann  ┆ DE      ┆ NULL │\n│ Bob  ┆ US      ┆ NULL │\n╰──────┴─────────┴──────╯\n",
        ),
    ];
    for (format, expected) in cases {
        sb.aiq()
            .arg(&db)
            .args(["-e", sql, "-f", format])
            .assert()
            .success()
            .stdout(expected.to_string());
    }
}

#[test]
fn every_format_on_duckdb_and_files() {
    let sb = Sandbox::new();
    let sql = "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status";
    let cases = [
        ("csv", "status,n\ndelivered,4\ncancelled,1\nshipped,1\n"),
        ("tsv", "status\tn\ndelivered\t4\ncancelled\t1\nshipped\t1\n"),
        (
            "jsonl",
            "{\"status\":\"delivered\",\"n\":4}\n{\"status\":\"cancelled\",\"n\":1}\n{\"status\":\"shipped\",\"n\":1}\n",
        ),
        (
            "json",
            "[\n{\"status\":\"delivered\",\"n\":4},\n{\"status\":\"cancelled\",\"n\":1},\n{\"status\":\"shipped\",\"n\":1}\n]\n",
        ),
        (
            "markdown",
            "| status | n |\n| --- | ---: |\n| delivered | 4 |\n| cancelled | 1 |\n| shipped | 1 |\n",
        ),
        (
            "table",
            "╭───────────┬───╮\n│ status    ┆ n │\n╞═══════════╪═══╡\n│ delivered ┆ 4 │\n│ cancelled ┆ 1 │\n│ shipped   ┆ 1 │\n╰───────────┴───╯\n",
        ),
    ];
    for src in [sb.shop_duckdb(), sb.shop_csv()] {
        for (format, expected) in cases {
            sb.aiq()
                .arg(&src)
                .args(["-e", sql, "-f", format])
                .assert()
                .success()
                .stdout(expected);
        }
    }
}

#[test]
fn table_shows_max_rows_and_counts_the_rest() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = sb
        .aiq()
        .arg(&db)
        .args([
            "-e",
            "SELECT id FROM orders ORDER BY id",
            "-f",
            "table",
            "--max-rows",
            "4",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("│  4 │"), "{text}");
    assert!(!text.contains("│  5 │"), "{text}");
    assert!(
        text.ends_with("… 2 more rows (use --max-rows to show more)\n"),
        "{text}"
    );
    // The config's chat.max_rows is the default for table output.
    sb.write_config("[chat]\nmax_rows = 1\n");
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", "SELECT id FROM orders", "-f", "table"])
        .output()
        .unwrap();
    assert!(stdout_of(&out).ends_with("… 5 more rows (use --max-rows to show more)\n"));
    // Machine formats print every row unless --max-rows is given.
    sb.aiq()
        .arg(&db)
        .args(["-e", "SELECT id FROM orders ORDER BY id", "-f", "csv"])
        .assert()
        .stdout("id\n1\n2\n3\n4\n5\n6\n");
    sb.aiq()
        .arg(&db)
        .args([
            "-e",
            "SELECT id FROM orders ORDER BY id",
            "-f",
            "csv",
            "--max-rows",
            "2",
        ])
        .assert()
        .stdout("id\n1\n2\n")
        .stderr("aiq: 4 more rows not shown (--max-rows)\n");
}

#[test]
fn schema_prints_the_catalog() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.aiq().arg("schema").arg(&db).assert().success().stdout(
        "table customers (~5 rows)\n  id INTEGER primary key\n  name TEXT not null, e.g. 'Ann', 'Bob', 'Cleo'\n  country TEXT not null, e.g. 'DE', 'US', 'FR'\n  vip BOOLEAN not null\n  signup DATE not null\n\
         table orders (~6 rows)\n  id INTEGER primary key\n  customer_id INTEGER not null -> customers.id\n  total DECIMAL(10,2) not null\n  ordered_at TIMESTAMP not null\n  status TEXT not null, e.g. 'delivered', 'shipped', 'cancelled'\n",
    );
    let duck = sb.shop_duckdb();
    let out = sb.aiq().arg("schema").arg(&duck).output().unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("table orders (~6 rows)\n  id INTEGER primary key\n  customer_id INTEGER not null -> customers.id\n  total DECIMAL(10,2) not null\n"), "{text}");
    assert!(
        text.contains("  status VARCHAR not null, e.g. 'cancelled', 'delivered', 'shipped'\n"),
        "{text}"
    );
    let csv = sb.shop_csv();
    let out = sb.aiq().arg("schema").arg(&csv).output().unwrap();
    let text = stdout_of(&out);
    assert!(
        text.starts_with(
            "view customers\n  id BIGINT\n  name VARCHAR, e.g. 'Ann', 'Bob', 'Cleo'\n"
        ),
        "{text}"
    );
    assert!(text.contains("view orders\n"), "{text}");
}

/// A file whose stem has dots of its own (`sales.2024.csv`, the table
/// `sales.2024`) has its samples like any other, and costs no other table
/// its samples: the sampling query names it as one table, not as the
/// table `2024` of a schema `sales`; the schema text quotes it as one.
#[test]
fn a_file_with_dots_in_its_name_keeps_every_tables_samples() {
    let sb = Sandbox::new();
    let dir = sb.path().join("reports");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sales.2024.csv"), "id,name\n1,alice\n2,bob\n").unwrap();
    std::fs::write(dir.join("cities.csv"), "city\nParis\nRome\n").unwrap();
    let out = sb.aiq().arg("schema").arg(&dir).output().unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains("  city VARCHAR, e.g. 'Paris', 'Rome'\n"),
        "{text}"
    );
    // One name, quoted as one; so are a header with a space and a
    // reserved word.
    assert!(
        text.contains("view \"sales.2024\"\n  id BIGINT\n  name VARCHAR, e.g. 'alice', 'bob'\n"),
        "{text}"
    );
    std::fs::write(dir.join("lines.csv"), "Unit Price,order\n3.5,1\n").unwrap();
    let out = sb
        .aiq()
        .args(["schema", "--refresh"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains("view lines\n  \"Unit Price\" DOUBLE\n  \"order\" BIGINT\n"),
        "{text}"
    );
}

#[test]
fn saved_sources_round_trip() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let duck = sb.shop_duckdb();
    sb.aiq()
        .args(["sources", "list"])
        .assert()
        .success()
        .stdout("");
    sb.aiq()
        .args(["sources", "add", "shop"])
        .arg(&db)
        .assert()
        .success();
    sb.aiq()
        .args(["sources", "add", "duck"])
        .arg(&duck)
        .assert()
        .success();
    let list = format!(
        "  duck  duckdb://{}\n* shop  sqlite://{}\n",
        duck.canonicalize().unwrap().display(),
        db.canonicalize().unwrap().display()
    );
    sb.aiq()
        .args(["sources", "list"])
        .assert()
        .success()
        .stdout(list);
    // By name, and as the default with no SOURCE at all.
    sb.aiq()
        .args(["duck", "-e", "SELECT count(*) AS n FROM orders"])
        .assert()
        .success()
        .stdout("n\n6\n");
    sb.aiq()
        .args(["-e", "SELECT count(*) AS n FROM customers"])
        .assert()
        .success()
        .stdout("n\n5\n");
    sb.aiq()
        .args(["sources", "default", "duck"])
        .assert()
        .success();
    sb.aiq()
        .args(["schema"])
        .assert()
        .success()
        .stdout(predicate::str::contains("VARCHAR"));
    sb.aiq()
        .args(["sources", "add", "shop"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already saved"));
    sb.aiq()
        .args(["sources", "add", "bad.name"])
        .arg(&db)
        .assert()
        .code(2);
    sb.aiq()
        .args(["sources", "remove", "duck"])
        .assert()
        .success();
    // `rm` as for sessions.
    sb.aiq()
        .args(["sources", "rm", "duck"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("unknown source 'duck'"));
    sb.aiq()
        .args(["-e", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no data source given"));
    sb.aiq()
        .args(["sources", "add", "ghost", "./missing.db"])
        .assert()
        .code(3);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(sb.home().join("config.toml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(sb.home()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

/// A config error names the file, line and column, the table and key, and
/// what was wrong; a table set twice names both lines; `aiq doctor` still
/// runs its checks; `aiq config init` says how to get the example.
#[test]
fn config_errors_say_where() {
    let sb = Sandbox::new();
    sb.write_config("[chat]\n\n[query]\ntimeout_secs = \"30s\"\n");
    let file = sb.home().join("config.toml");
    sb.aiq()
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
        "invalid config {}:4:16: [query] timeout_secs: expected a number of seconds, found \"30s\"",
        file.display()
    )));
    sb.write_config(
        "[query]\nmax_rows = 5\n\n[sources.shop]\nurl = \"a.db\"\n[query]\ntimeout_secs = 3\n",
    );
    sb.aiq()
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "[query] appears twice, on lines 1 and 6",
        ));
    sb.write_config("[sources.shop]\nurl = \"a.db\"\npasword_env = \"P\"\n");
    sb.aiq()
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "config.toml:3: [sources.shop] pasword_env: `pasword_env` is not a key aiq knows here",
        ));
    // The doctor reports the broken file as its config check and goes on;
    // it does not call the saved sources unknown.
    sb.write_config(&format!(
        "[output]\npager = \"yes\"\n[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{}\"\n",
        sb.shop_sqlite().display()
    ));
    sb.aiq()
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!("{}\n", file.display()));
    let out = sb
        .aiq()
        .args(["doctor"])
        .env("AIQ_BASE_URL", "http://127.0.0.1:9/v1")
        .env("OPENAI_API_KEY", "k")
        .env("AIQ_MODEL", "m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("FAIL  config  invalid config")
            && stdout.contains("[output] pager: expected true or false, found \"yes\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL  source") && stdout.contains("FAIL  model"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "cannot tell: the saved sources are in the config file, which cannot be read"
        ),
        "{stdout}"
    );
    // config init: the way to the example when a file exists.
    sb.aiq().args(["config", "init"]).assert().success().stderr(
        predicate::str::contains("already exists; left unchanged")
            .and(predicate::str::contains("--print"))
            .and(predicate::str::contains("--force")),
    );
    sb.aiq()
        .args(["config", "init", "--print"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("# aiq configuration."));
    sb.aiq()
        .args(["config", "init", "--force"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "its saved sources were carried over (shop)",
        ));
    let backup = std::fs::read_to_string(sb.home().join("config.toml.bak")).unwrap();
    assert!(
        backup.starts_with("[output]\npager = \"yes\"\n"),
        "{backup}"
    );
    sb.aiq().args(["config", "show"]).assert().success();
    // The saved source and the default came along.
    sb.aiq()
        .args(["sources", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("shop"));
    // An empty question is said to be empty, in the demo too.
    sb.aiq()
        .args(["demo", "-q", " "])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the question is empty"));
}

#[test]
fn config_commands() {
    let sb = Sandbox::new();
    sb.aiq()
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!("{}\n", sb.home().join("config.toml").display()));
    sb.aiq().args(["config", "init"]).assert().success();
    let text = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(text.starts_with("# aiq configuration."));
    sb.aiq()
        .args(["config", "init"])
        .assert()
        .success()
        .stderr(predicate::str::contains("already exists"));
    sb.write_config("[llm]\napi_key = \"sk-very-secret\"\nmodel = \"m\"\n");
    sb.aiq().args(["config", "show"]).assert().success().stdout(
        predicate::str::contains("api_key = \"********\"")
            .and(predicate::str::contains("sk-very-secret").not()),
    );
    sb.write_config("[chat]\nhistory_limt = 3\n");
    sb.aiq()
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("history_limt"));
}

#[test]
fn exit_codes_and_messages() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    // 1: the query failed.
    sb.aiq()
        .arg(&db)
        .args(["-e", "SELECT nope FROM customers"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "aiq: query failed: no such column: nope in SELECT nope FROM customers at offset 7; did you mean customers.name?\n",
        );
    // 2: usage.
    sb.aiq()
        .arg(&db)
        .args(["-f", "xml", "-e", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown format 'xml'"));
    // No -e, no -q and an empty stdin: nothing was asked.
    sb.aiq()
        .arg(&db)
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the question is empty"));
    // 3: the source.
    sb.aiq()
        .args(["./nope.db", "-e", "SELECT 1"])
        .assert()
        .code(3)
        .stderr(predicate::str::starts_with(
            "aiq: cannot open ./nope.db: no such file or folder",
        ));
    std::fs::write(
        sb.path().join("junk.db"),
        b"this is not sqlite at all, not even close......",
    )
    .unwrap();
    sb.aiq()
        .args(["junk.db", "-e", "SELECT 1"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("cannot open junk.db as SQLite"));
    // 5: refused.
    sb.aiq()
        .arg(&db)
        .args(["-e", "DROP TABLE orders"])
        .assert()
        .code(5);
    sb.aiq()
        .arg(&db)
        .arg("schema")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("aiq schema SOURCE"));
    // Global flags go anywhere.
    sb.aiq().args(["-v", "schema"]).arg(&db).assert().success();
    // No panic text, ever.
    let out = sb
        .aiq()
        .args(["sqlite://", "-e", "SELECT 1"])
        .output()
        .unwrap();
    assert!(!stderr_of(&out).contains("panicked"), "{}", stderr_of(&out));
}

#[test]
fn help_and_version() {
    let sb = Sandbox::new();
    sb.aiq().arg("--help").assert().success().stdout(
        predicate::str::contains("Examples:").and(predicate::str::contains("--allow-write")),
    );
    sb.aiq()
        .arg("-V")
        .assert()
        .success()
        .stdout(format!("aiq {}\n", env!("CARGO_PKG_VERSION")));
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        sb.aiq()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("aiq"));
    }
}

#[test]
fn closed_pipe_ends_quietly() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut child = sb
        .std_aiq()
        .arg(&db)
        .args([
            "-e",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 2000000) SELECT i, 'some padding text' FROM n",
            "-f",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr_of(&out), "");
}

#[test]
fn statement_timeout_stops_the_query() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[query]\ntimeout_secs = 1\n");
    sb.aiq()
        .arg(&db)
        .args(["-e", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ran longer than 1 s"));
    let duck = sb.shop_duckdb();
    sb.aiq()
        .arg(&duck)
        .args(["-e", "SELECT count(*) FROM range(100000000000) a"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ran longer than 1 s"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_query_with_130() {
    let sb = Sandbox::new();
    for src in [sb.shop_sqlite(), sb.shop_duckdb()] {
        let sql = if src.extension().unwrap() == "db" {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        } else {
            "SELECT count(*) FROM range(100000000000) a"
        };
        let child = sb
            .std_aiq()
            .arg(&src)
            .args(["-e", sql])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        let status = StdCommand::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
        assert_eq!(stderr_of(&out), "aiq: interrupted\n");
    }
}

#[test]
fn writes_need_allow_write_and_yes() {
    let sb = Sandbox::new();
    for src in [sb.shop_sqlite(), sb.shop_duckdb()] {
        let delete = "DELETE FROM orders WHERE status = 'cancelled'";
        sb.aiq()
            .arg(&src)
            .args(["-e", delete])
            .assert()
            .code(5)
            .stderr("aiq: refused: DELETE changes data and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)\n");
        sb.aiq()
            .arg(&src)
            .args(["--allow-write", "-e", delete])
            .assert()
            .code(5)
            .stderr("aiq: not run: DELETE changes data and was not confirmed (answer y at the prompt, or add --yes to run it from a script)\n");
        sb.aiq()
            .arg(&src)
            .args(["-e", "SELECT count(*) AS n FROM orders"])
            .assert()
            .stdout("n\n6\n");
        sb.aiq()
            .arg(&src)
            .args(["--allow-write", "--yes", "-e", delete])
            .assert()
            .success();
        sb.aiq()
            .arg(&src)
            .args(["-e", "SELECT count(*) AS n FROM orders"])
            .assert()
            .stdout("n\n5\n");
        // Even with --allow-write, reaching outside the source stays refused.
        sb.aiq()
            .arg(&src)
            .args(["--allow-write", "--yes", "-e", "ATTACH 'other.db' AS other"])
            .assert()
            .code(5);
    }
    assert!(!sb.path().join("other.db").exists());
}

#[test]
fn sqlite_write_reports_changed_rows() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.aiq()
        .arg(&db)
        .args([
            "--allow-write",
            "-y",
            "-e",
            "UPDATE customers SET vip = 1 WHERE country = 'DE'",
        ])
        .assert()
        .success()
        .stdout("")
        .stderr("2 rows changed\n");
}

#[test]
fn data_files_of_each_kind() {
    let sb = Sandbox::new();
    let dir = sb.path().join("files");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.csv"), "x,y\n1,one\n2,two\n").unwrap();
    std::fs::write(dir.join("b.tsv"), "x\ty\n3\tthree\n").unwrap();
    std::fs::write(dir.join("c.json"), "[{\"x\": 4, \"y\": \"four\"}]").unwrap();
    std::fs::write(dir.join("d.jsonl"), "{\"x\": 5, \"y\": \"five\"}\n").unwrap();
    std::fs::write(dir.join("readme.txt"), "ignored").unwrap();
    let sql = "SELECT x, y FROM a UNION ALL SELECT x, y FROM b UNION ALL SELECT x, y FROM c UNION ALL SELECT x, y FROM d ORDER BY x";
    sb.aiq()
        .arg(&dir)
        .args(["-e", sql, "-f", "csv"])
        .assert()
        .success()
        .stdout("x,y\n1,one\n2,two\n3,three\n4,four\n5,five\n");
    // Parquet written by DuckDB itself.
    let pq = dir.join("p.parquet");
    let conn = duckdb::Connection::open_in_memory().unwrap();
    conn.execute_batch(&format!(
        "COPY (SELECT 6 AS x, 'six' AS y) TO '{}' (FORMAT parquet)",
        pq.display()
    ))
    .unwrap();
    sb.aiq()
        .arg(&pq)
        .args(["-e", "SELECT * FROM p", "-f", "json"])
        .assert()
        .success()
        .stdout("[\n{\"x\":6,\"y\":\"six\"}\n]\n");
}

#[test]
fn urls_name_engines() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let duck = sb.shop_duckdb();
    sb.aiq()
        .arg(format!("sqlite://{}", db.display()))
        .args(["-e", "SELECT count(*) AS n FROM customers"])
        .assert()
        .success()
        .stdout("n\n5\n");
    sb.aiq()
        .arg(format!("duckdb://{}", duck.display()))
        .args(["-e", "SELECT count(*) AS n FROM customers"])
        .assert()
        .success()
        .stdout("n\n5\n");
    sb.aiq()
        .args(["duckdb://:memory:", "-e", "SELECT 42 AS answer"])
        .assert()
        .success()
        .stdout("answer\n42\n");
    sb.aiq()
        .args(["postgres://me:hunter2@localhost/db", "-e", "SELECT 1"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("hunter2").not());
}

/// The small things a new analyst met: a database shell's `.tables` and
/// `\d orders` point to `aiq schema`; `aiq schema` prints each note once;
/// `-v` counts "1 row"; a failing example is said not to be kept.
#[test]
fn shell_commands_notes_once_one_row_and_examples_not_kept() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    for command in [".tables", "\\d orders", ".schema customers"] {
        let out = sb.aiq().arg(&db).args(["-e", command]).output().unwrap();
        assert_eq!(out.status.code(), Some(5), "{command}");
        let err = stderr_of(&out);
        assert!(
            err.contains("is a command of")
                && err.contains("aiq schema SOURCE")
                && err.contains("/schema"),
            "{command}: {err}"
        );
        assert!(!err.contains("does not parse"), "{err}");
    }
    // A note that names two tables is printed once, with both.
    let wanted = sb.path().join("wanted.md");
    std::fs::write(
        &wanted,
        "- Revenue counts orders whose status is delivered; customers.country is ISO.\n- The fiscal year starts in April.\n",
    )
    .unwrap();
    let editor = sb.script("editor.sh", &format!("cp '{}' \"$1\"", wanted.display()));
    sb.aiq()
        .args(["notes", "edit"])
        .arg(&db)
        .env("VISUAL", &editor)
        .assert()
        .success();
    let out = sb.aiq().arg("schema").arg(&db).output().unwrap();
    let text = stdout_of(&out);
    assert_eq!(text.matches("Revenue counts orders").count(), 1, "{text}");
    assert!(text.contains("[tables: customers, orders]"), "{text}");
    assert!(
        text.contains("- The fiscal year starts in April."),
        "{text}"
    );
    // -v: one row is "1 row".
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-v", "-e", "SELECT 1", "-f", "csv"])
        .output()
        .unwrap();
    assert!(stderr_of(&out).contains("1 row in "), "{}", stderr_of(&out));
    assert!(!stderr_of(&out).contains("1 rows"), "{}", stderr_of(&out));
    // An example whose SQL fails is not kept, and says so.
    let out = sb
        .aiq()
        .args(["examples", "add"])
        .arg(&db)
        .args([
            "--question",
            "clients?",
            "--sql",
            "SELECT count(*) FROM clients",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("the example was not kept: its SQL must run on"),
        "{}",
        stderr_of(&out)
    );
    let out = sb
        .aiq()
        .args(["examples", "list"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!stdout_of(&out).contains("clients?"), "{}", stdout_of(&out));
}

/// `[mcp] max_concurrent` past what the open-files limit can hold is
/// refused at start, with the limit and the most it allows.
#[test]
fn mcp_limits_are_checked_against_the_machine_at_start() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[mcp]\nmax_concurrent = 100000\n");
    let out = sb.aiq().arg("mcp").arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("[mcp] max_concurrent = 100000 is more than this machine allows")
            && stderr_of(&out).contains("ulimit -n"),
        "{}",
        stderr_of(&out)
    );
}

/// A notes file with a byte that is not UTF-8 is not dropped in silence:
/// the notes still reach the request (the byte replaced), and a warning
/// names the file and the byte.
#[test]
fn notes_that_are_not_utf8_are_read_with_a_warning() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let editor = sb.script(
        "editor.sh",
        "printf -- '- Revenue counts delivered orders only, cafe.\\n' > \"$1\"",
    );
    sb.aiq()
        .args(["notes", "edit"])
        .arg(&db)
        .env("VISUAL", &editor)
        .assert()
        .success();
    // A byte that is not UTF-8 where the e was, as another program might
    // write it (`aiq notes edit` itself refuses to save such a file).
    let file = std::fs::read_dir(sb.home().join("notes"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 3;
    assert_eq!(bytes[at], b'e');
    bytes[at] = 0xe9;
    std::fs::write(&file, &bytes).unwrap();
    let out = sb
        .aiq()
        .arg("schema")
        .arg(&db)
        .arg("--as-sent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("Revenue counts delivered orders only"),
        "{}",
        stdout_of(&out)
    );
    let err = stderr_of(&out);
    assert!(
        err.contains("byte 43 is not UTF-8") && err.contains(".md"),
        "{err}"
    );
    // Editing it would rewrite it from a lossy reading: refused, the file
    // left as it is.
    let out = sb
        .aiq()
        .args(["notes", "edit"])
        .arg(&db)
        .env("VISUAL", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("aiq leaves the file as it is"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

/// A config file that is not UTF-8 is named with the line and byte where
/// it stops being so (not blamed on permissions); `[mcp] max_concurrent =
/// 0` is refused at start, saying what to set.
#[test]
fn a_config_not_utf8_and_no_concurrent_calls_are_said_plainly() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("");
    let path = sb.home().join("config.toml");
    std::fs::write(&path, b"[query]\n# caf\xe9\ntimeout_secs = 3\n").unwrap();
    let out = sb.aiq().arg(&db).args(["-e", "SELECT 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains("config.toml:2: the file is not UTF-8 (byte 13); save it as UTF-8"),
        "{}",
        stderr_of(&out)
    );
    sb.write_config("[mcp]\nmax_concurrent = 0\n");
    let out = sb.aiq().arg("mcp").arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("max_concurrent = 0 would run no call at all; set 1 or more"),
        "{}",
        stderr_of(&out)
    );
}
