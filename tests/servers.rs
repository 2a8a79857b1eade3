//! PostgreSQL and MariaDB sources against real servers that the tests start
//! themselves (tests/common/servers.rs): typed rows, schema, the hostile
//! corpus in each dialect, passwords kept out of everything, timeouts,
//! server-side cancel, streaming, writes with --allow-write, doctor (what
//! the login could do past the gate, and the least-privilege login
//! docs/safety.md makes) and saved sources.

mod common;

use std::io::{BufRead, BufReader};

use expectrl::Expect as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::corpus::POSTGRES_HOSTILE;
use common::least_privilege::{
    blocks, doctor, fine, reads_payroll, replication, superuser, READER, READER_PASSWORD, SALES,
};
use common::llm::{ModelServer, Reply};
use common::servers::{self, Engine, Server, PASSWORD, USER};
use common::{replace_bytes, rss_kb, stderr_of, stdout_of, Sandbox};
use serde_json::{json, Value};

/// Held by the tests that write to the servers' tables or catalogs and by
/// those that need the catalog to stay put (the cache tests): a write moves
/// the catalog fingerprint.
static CATALOG: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn catalog_lock() -> std::sync::MutexGuard<'static, ()> {
    CATALOG.lock().unwrap_or_else(|e| e.into_inner())
}

fn all() -> Vec<&'static Server> {
    [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
        .collect()
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

/// `SELECT * FROM kinds` as JSON: row 1 holds `want` (and each of `raw`
/// verbatim, for numbers wider than a JSON parser keeps), row 2 only NULLs.
fn assert_kinds(server: &Server, want: Value, raw: &[&str]) -> Vec<Value> {
    let sb = Sandbox::new();
    let out = exec(
        &sb,
        &server.url(),
        "SELECT * FROM kinds ORDER BY id",
        "json",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = json_rows(&out);
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&rows[0][k], v, "{:?} column {k}", server.engine);
    }
    let text = stdout_of(&out);
    for r in raw {
        assert!(text.contains(r), "{:?}: no {r} in {text}", server.engine);
    }
    let nulls = rows[1].as_object().unwrap();
    assert!(
        nulls.iter().all(|(k, v)| k == "id" || v.is_null()),
        "{nulls:?}"
    );
    rows
}

#[test]
fn postgres_rows_are_typed() {
    let Some(pg) = servers::postgres() else {
        return;
    };
    let rows = assert_kinds(
        pg,
        json!({
            "id": 1, "small": -32768, "big": 9223372036854775807i64,
            "r": 0.1, "dbl": 0.1, "t": "héllo \"x\"", "flag": true,
            "d": "2024-02-29", "ts": "2024-02-29 13:05:09", "tstz": "2024-02-29T11:05:09Z",
            "iv": "1 year 2 mons 3 days 04:05:06", "j": {"a": [1, 2]}, "jb": {"b": null},
            "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "b": "\\xdeadbeef",
            "arr": [1, null, 3], "tags": ["a b", "c"], "ip": "192.168.0.1", "m": "happy",
        }),
        // numeric(30,10) exactly, digit for digit: it is printed bare in JSON.
        &["\"exact\":12345678901234567890.0123456789,"],
    );
    assert!(rows[0]["tm"].as_str().unwrap().starts_with("13:05:09.5"));
    // CSV keeps the same text.
    let sb = Sandbox::new();
    let sql = "SELECT exact, arr, b FROM kinds WHERE id = 1";
    let out = exec(&sb, &pg.url(), sql, "csv");
    assert_eq!(
        stdout_of(&out),
        "exact,arr,b\n12345678901234567890.0123456789,\"[1,null,3]\",\\xdeadbeef\n"
    );
}

/// PostgreSQL forms the first check once refused as unparsable run and
/// answer, and functions off the allow-list are refused by name.
#[test]
fn postgres_forms_run_as_the_server_reads_them() {
    let Some(pg) = servers::postgres() else {
        return;
    };
    let sb = Sandbox::new();
    for (sql, want) in [
        (
            "SELECT * FROM ROWS FROM (generate_series(1, 3), generate_series(1, 2)) AS t(a, b)",
            "a,b\n1,1\n2,2\n3,\n",
        ),
        (
            "SELECT xmlelement(name p, 'hi')::text AS x",
            "x\n<p>hi</p>\n",
        ),
        (
            "SELECT 2 BETWEEN SYMMETRIC 3 AND 1 AS s, 2 BETWEEN 3 AND 1 AS plain",
            "s,plain\ntrue,false\n",
        ),
    ] {
        let out = exec(&sb, &pg.url(), sql, "csv");
        assert_eq!(
            (out.status.code(), stdout_of(&out).as_str()),
            (Some(0), want),
            "{sql}\n{}",
            stderr_of(&out)
        );
    }
}

/// MariaDB's stored functions, as its catalog describes them: one
/// declared `MODIFIES SQL DATA` is a write (refused read-only, run with
/// `--allow-write --yes`); while a table is hidden none runs unless
/// `allow_functions` vouches for it; one taking the name of MySQL's
/// built-in `regexp_like` is known as the database's own.
#[test]
fn mariadb_stored_functions_are_what_the_catalog_says() {
    let Some(db) = servers::mariadb() else {
        return;
    };
    let _catalog = catalog_lock();
    db.admin(&format!(
        "CREATE DATABASE IF NOT EXISTS fx;
         GRANT ALL ON fx.* TO '{user}'@'%';
         USE fx;
         CREATE TABLE IF NOT EXISTS ledger (n INT);
         CREATE TABLE IF NOT EXISTS secret (n INT);
         CREATE OR REPLACE FUNCTION doubled(x INT) RETURNS INT DETERMINISTIC RETURN x * 2;
         CREATE OR REPLACE FUNCTION regexp_like(a TEXT, b TEXT) RETURNS INT READS SQL DATA
           RETURN (SELECT count(*) FROM secret);
         DELIMITER //
         CREATE OR REPLACE FUNCTION add_row() RETURNS INT MODIFIES SQL DATA
         BEGIN INSERT INTO ledger VALUES (1); RETURN 1; END //
         DELIMITER ;",
        user = servers::USER
    ));
    let url = db.url().replace("/shop", "/fx");
    let rows = || db.admin_in("fx", "SELECT count(*) FROM ledger");
    let before = rows();
    let sb = Sandbox::new();
    let out = exec(&sb, &url, "SELECT add_row() AS r", "csv");
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("add_row() (the database marks it as changing data)"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(rows(), before);
    let out = sb
        .aiq()
        .args([
            &url,
            "--allow-write",
            "--yes",
            "-e",
            "SELECT add_row() AS r",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_ne!(rows(), before);
    // With `secret` hidden: the database's functions do not run, unless
    // vouched for; a built-in still does.
    for (vouch, code) in [("", 5), ("allow_functions = [\"doubled\"]\n", 0)] {
        sb.write_config(&format!(
            "[sources.fx]\nurl = \"{url}\"\nexclude = [\"secret\"]\n{vouch}"
        ));
        let out = sb
            .aiq()
            .args(["fx", "-e", "SELECT doubled(21) AS d", "-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{vouch}{}", stderr_of(&out));
        if code == 0 {
            assert_eq!(stdout_of(&out), "d\n42\n");
        } else {
            assert!(
                stderr_of(&out).contains("allow_functions"),
                "{}",
                stderr_of(&out)
            );
        }
        let out = sb
            .aiq()
            .args(["fx", "-e", "SELECT regexp_like('a', 'b') AS n"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
        let out = sb
            .aiq()
            .args(["fx", "-e", "SELECT upper('a') AS u", "-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(stdout_of(&out), "u\nA\n", "{}", stderr_of(&out));
    }
}

#[test]
fn mariadb_rows_are_typed() {
    let Some(db) = servers::mariadb() else { return };
    let rows = assert_kinds(
        db,
        json!({
            "id": 1, "small": -32768, "big": 9223372036854775807i64,
            "dbl": 0.1, "t": "héllo", "flag": 1, "d": "2024-02-29", "tm": "13:05:09",
            "j": "{\"a\": [1, 2]}", "b": "\\xdeadbeef", "e": "b", "bits": 5,
        }),
        &[
            "\"ubig\":18446744073709551615,",
            "\"exact\":12345678901234567890.0123456789,",
        ],
    );
    let ts = rows[0]["ts"].as_str().unwrap();
    assert!(ts.starts_with("2024-02-29 13:05:09.25"), "{ts}");
    // An empty result still names its columns.
    let sb = Sandbox::new();
    let sql = "SELECT id, name FROM customers WHERE id < 0";
    let out = exec(&sb, &db.url(), sql, "csv");
    assert_eq!(stdout_of(&out), "id,name\n");
}

#[test]
fn schema_comes_from_the_catalog() {
    let sb = Sandbox::new();
    for server in all() {
        let out = sb
            .aiq()
            .args(["schema", server.url().as_str()])
            .output()
            .unwrap();
        let text = stdout_of(&out);
        assert!(out.status.success(), "{}", stderr_of(&out));
        for want in [
            "table customers (~5 rows)",
            "table orders (~6 rows)",
            "-> customers.id",
            "e.g. 'cancelled', 'delivered', 'shipped'",
            "view big_spenders",
        ] {
            assert!(
                text.contains(want),
                "{:?}: no {want:?} in\n{text}",
                server.engine
            );
        }
        let pk = match server.engine {
            Engine::Postgres => "  id integer primary key\n",
            Engine::MariaDb => "  id int(11) primary key\n",
        };
        assert!(text.contains(pk), "{text}");
        if server.engine == Engine::Postgres {
            // A table the login may not read is listed, without samples,
            // and does not cost the other tables theirs (checked above).
            assert!(text.contains("table secret_notes"), "{text}");
            assert!(!text.contains("classified"), "{text}");
        }
    }
}

const MYSQL_HOSTILE: &[&str] = &[
    "DELETE FROM customers",
    "UPDATE orders SET total = 0",
    "INSERT INTO customers VALUES (9, 'x', 'y', false, '2024-01-01')",
    "REPLACE INTO customers VALUES (1, 'x', 'y', false, '2024-01-01')",
    "SELECT 1; DROP TABLE orders",
    "SELECT 1 /*!; DROP TABLE orders */",
    "SELECT 1 /*M!; DROP TABLE orders */",
    "SELECT * FROM customers /*!50000 INTO OUTFILE '/tmp/aiq-evil.csv' */",
    "SELECT * FROM customers INTO OUTFILE '/tmp/aiq-evil.csv'",
    "SELECT * FROM customers INTO DUMPFILE '/tmp/aiq-evil.bin'",
    "SELECT id INTO @x FROM customers LIMIT 1",
    "LOAD DATA INFILE '/etc/passwd' INTO TABLE customers",
    "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE customers",
    "SELECT LOAD_FILE('/etc/passwd')",
    "CREATE TABLE evil (a int)",
    "DROP TABLE orders",
    "TRUNCATE orders",
    "ALTER TABLE customers ADD COLUMN x int",
    "RENAME TABLE orders TO o2",
    "SET SESSION TRANSACTION READ WRITE",
    "SET autocommit = 1",
    "SET @@session.max_statement_time = 0",
    "SET ROLE admin",
    "CALL p()",
    "START TRANSACTION",
    "COMMIT",
    "LOCK TABLES customers WRITE",
    "GRANT ALL ON *.* TO 'analyst'@'%'",
    "CREATE USER evil IDENTIFIED BY 'x'",
    "PREPARE s FROM 'DELETE FROM customers'",
    "EXECUTE s",
    "HANDLER customers OPEN",
    "DO SLEEP(1)",
    "FLUSH TABLES",
    "KILL 1",
    "INSTALL PLUGIN x SONAME 'x.so'",
    "SELECT * FROM customers FOR UPDATE",
    "WITH d AS (SELECT 1) DELETE FROM customers",
    "SELECT GET_LOCK('x', 1)",
    "select 1 -- ; \n ; delete from customers",
];

/// Every statement: exit 5, a message that says what was refused, the
/// data unchanged and no file written.
fn assert_corpus_refused(server: &Server, corpus: &[&str]) {
    // The snapshot lists the tables: no other test may create one meanwhile.
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let before = server.shop_snapshot();
    for sql in corpus {
        let out = exec(&sb, &server.url(), sql, "csv");
        let err = stderr_of(&out);
        assert_eq!(
            out.status.code(),
            Some(5),
            "{:?} ran {sql:?}: {err}",
            server.engine
        );
        assert!(err.starts_with("aiq: refused"), "{sql}: {err}");
        assert!(!err.contains(PASSWORD), "{err}");
    }
    assert_eq!(server.shop_snapshot(), before, "{:?}", server.engine);
    for f in ["/tmp/aiq-evil.csv", "/tmp/aiq-evil", "/tmp/aiq-evil.bin"] {
        assert!(!std::path::Path::new(f).exists(), "{f} was written");
    }
}

#[test]
fn postgres_hostile_corpus_is_refused() {
    let Some(pg) = servers::postgres() else {
        return;
    };
    assert_corpus_refused(pg, POSTGRES_HOSTILE);
}

#[test]
fn mariadb_hostile_corpus_is_refused() {
    let Some(db) = servers::mariadb() else { return };
    assert_corpus_refused(db, MYSQL_HOSTILE);
}

#[test]
fn writes_need_allow_write_and_yes() {
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    for server in all() {
        server.admin("DELETE FROM scratch");
        let url = server.url();
        let insert = "INSERT INTO scratch VALUES (1), (2)";
        let out = exec(&sb, &url, insert, "csv");
        assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
        let out = sb
            .aiq()
            .args([url.as_str(), "--allow-write", "--yes", "-e", insert])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("2 rows changed"),
            "{}",
            stderr_of(&out)
        );
        assert_eq!(server.admin("SELECT count(*) FROM scratch").trim(), "2");
        server.admin("DELETE FROM scratch");
    }
}

#[test]
fn passwords_stay_out_of_messages_config_and_traces() {
    let sb = Sandbox::new();
    for server in all() {
        // No password and no terminal to ask on: exit 3 and what to do.
        let out = exec(&sb, &server.url_without_password(), "SELECT 1", "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("password_env"), "{err}");
        // A wrong password is named as such, and not echoed.
        let wrong = server.url().replace(PASSWORD, "not-the-password");
        let out = exec(&sb, &wrong, "SELECT 1", "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(!err.contains("not-the-password"), "{err}");
        assert!(err.contains("analyst:***@"), "{err}");
        // -vv traces everything but the password.
        let out = sb
            .aiq()
            .args([server.url().as_str(), "-vv", "-e", "SELECT 1 AS one"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        assert!(!stderr_of(&out).contains(PASSWORD));
    }
}

#[test]
fn saved_sources_take_the_password_from_password_env() {
    let sb = Sandbox::new();
    for server in all() {
        let name = format!("wh{}", server.port);
        // The URL's password is used to check the connection, not saved.
        let out = sb
            .aiq()
            .args(["sources", "add", name.as_str(), server.url().as_str()])
            .args(["--password-env", "AIQ_TEST_WH_PASSWORD"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("password in the URL was not saved"), "{err}");
        assert!(err.contains("read-only session confirmed"), "{err}");
        let config = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
        assert!(!config.contains(PASSWORD), "{config}");
        assert!(config.contains(&server.url_without_password()), "{config}");
        assert!(
            config.contains("password_env = \"AIQ_TEST_WH_PASSWORD\""),
            "{config}"
        );
        let out = sb
            .aiq()
            .env("AIQ_TEST_WH_PASSWORD", PASSWORD)
            .args([
                name.as_str(),
                "-e",
                "SELECT count(*) AS n FROM customers",
                "-f",
                "csv",
            ])
            .output()
            .unwrap();
        assert_eq!(stdout_of(&out), "n\n5\n", "{}", stderr_of(&out));
        let out = sb
            .aiq()
            .env_remove("AIQ_TEST_WH_PASSWORD")
            .args([name.as_str(), "-e", "SELECT 1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert!(
            stderr_of(&out).contains("$AIQ_TEST_WH_PASSWORD, which is not set"),
            "{}",
            stderr_of(&out)
        );
        // doctor: connected, version, read-only confirmed.
        let version = match server.engine {
            Engine::Postgres => "PostgreSQL ",
            Engine::MariaDb => "MariaDB ",
        };
        let line = doctor_line(&sb, &name, &[("AIQ_TEST_WH_PASSWORD", PASSWORD)]);
        assert!(line.starts_with("ok "), "{line}");
        assert!(line.contains(version), "{line}");
        assert!(line.contains("read-only session confirmed"), "{line}");
        assert!(
            line.contains(&format!("127.0.0.1:{}/shop", server.port)),
            "{line}"
        );
    }
}

#[test]
fn questions_name_the_dialect_and_sessions_keep_no_password() {
    let sb = Sandbox::new();
    for server in all() {
        let model = ModelServer::start(vec![Reply::Text(
            "```sql\nSELECT count(*) AS n FROM customers\n```".into(),
        )]);
        let session = sb.path().join(format!("s{}.json", server.port));
        let engine = match server.engine {
            Engine::Postgres => "postgres",
            Engine::MariaDb => "mysql",
        };
        std::fs::write(
            &session,
            json!({
                "version": 1,
                "metadata": {
                    "created_at": "2026-01-26T10:00:00Z",
                    "last_updated": "2026-01-26T10:00:00Z",
                    "data_source": server.url_without_password(),
                    "database_type": engine,
                },
                "messages": [],
            })
            .to_string(),
        )
        .unwrap();
        let out = sb
            .aiq_with(&model, "openai")
            .arg(server.url())
            .args(["-q", "how many customers?", "-f", "csv", "-s"])
            .arg(&session)
            .output()
            .unwrap();
        assert_eq!(stdout_of(&out), "n\n5\n", "{}", stderr_of(&out));
        let request = &model.chats()[0];
        assert!(!request.raw.contains(PASSWORD));
        let system = &request.messages()[0].1;
        let (dialect, idiom) = match server.engine {
            Engine::Postgres => ("a PostgreSQL database (PostgreSQL ", "date_trunc"),
            Engine::MariaDb => ("a MySQL database (MariaDB ", "backticks"),
        };
        assert!(system.contains(dialect), "{system}");
        assert!(system.contains(idiom), "{system}");
        let file = std::fs::read_to_string(&session).unwrap();
        assert!(!file.contains(PASSWORD), "{file}");
        let saved: Value = serde_json::from_str(&file).unwrap();
        assert_eq!(
            saved["metadata"]["data_source"],
            Value::String(server.url_without_password())
        );
        assert_eq!(saved["metadata"]["database_type"], engine);
        assert_eq!(saved["messages"].as_array().map(Vec::len), Some(2));
    }
}

#[test]
fn statement_timeout_stops_the_query() {
    let sb = Sandbox::new();
    sb.write_config("[query]\ntimeout_secs = 1\n");
    for server in all() {
        let slow = match server.engine {
            Engine::Postgres => "SELECT pg_sleep(20)",
            Engine::MariaDb => "SELECT count(*) FROM seq_1_to_100000 a, seq_1_to_100000 b",
        };
        let started = Instant::now();
        let out = exec(&sb, &server.url(), slow, "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("ran longer than 1 s"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

/// Ctrl-C sends a cancel to the server: the query is gone from the server
/// at once, not only from aiq.
#[test]
fn ctrl_c_cancels_on_the_server() {
    let sb = Sandbox::new();
    for server in all() {
        let (slow, running) = match server.engine {
            Engine::Postgres => (
                "SELECT pg_sleep(60) AS aiq_cancel_probe",
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%aiq_cancel_probe%' AND state = 'active' AND pid <> pg_backend_pid()",
            ),
            Engine::MariaDb => (
                "SELECT count(*) AS aiq_cancel_probe FROM seq_1_to_1000000 a, seq_1_to_1000000 b",
                "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%aiq_cancel_probe FROM%' AND id <> CONNECTION_ID()",
            ),
        };
        let mut child = sb
            .std_aiq()
            .args([server.url().as_str(), "-e", slow, "-f", "csv"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while server.admin(running).trim() != "1" {
            assert!(Instant::now() < deadline, "the query never started");
            std::thread::sleep(Duration::from_millis(100));
        }
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let started = Instant::now();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{:?}", server.engine);
        assert!(started.elapsed() < Duration::from_secs(10));
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.admin(running).trim() != "0" {
            assert!(
                Instant::now() < deadline,
                "{:?}: the query still runs on the server",
                server.engine
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Ten million rows: the first ones arrive at once, memory stays flat, and
/// a reader that stops early ends aiq quietly.
#[test]
fn big_results_stream() {
    for server in all() {
        let sb = Sandbox::new();
        let sql = match server.engine {
            Engine::Postgres => {
                "SELECT g, md5(g::text) AS h FROM generate_series(1, 10000000) AS g"
            }
            Engine::MariaDb => "SELECT seq, md5(seq) AS h FROM seq_1_to_10000000",
        };
        let mut child = sb
            .std_aiq()
            .args([server.url().as_str(), "-e", sql, "-f", "csv"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = Instant::now();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let header = lines.next().unwrap().unwrap();
        assert!(header.ends_with(",h"), "{header}");
        let mut peak_kb = 0u64;
        for i in 0..1_000_000u64 {
            let line = lines.next().unwrap().unwrap();
            if i == 0 {
                assert!(line.starts_with("1,"), "{line}");
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
        assert!(
            peak_kb < 100 * 1024,
            "{:?}: {peak_kb} kB resident",
            server.engine
        );
        drop(lines);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{:?}", server.engine);
    }
}

/// The `source` line of `aiq doctor SOURCE`, with `env` set.
fn doctor_line(sb: &Sandbox, source: &str, env: &[(&str, &str)]) -> String {
    let out = sb
        .aiq()
        .envs(env.iter().copied())
        .args(["doctor", source])
        .output()
        .unwrap();
    stdout_of(&out)
        .lines()
        .find(|l| l.contains(" source "))
        .unwrap_or_else(|| panic!("no source line: {}", stdout_of(&out)))
        .to_string()
}

#[test]
fn tls_options_are_honoured() {
    let sb = Sandbox::new();
    for server in all() {
        let ca = server.ca_file().display().to_string();
        let (off, required, verified, unverifiable) = match server.engine {
            Engine::Postgres => (
                "sslmode=disable".to_string(),
                "sslmode=require".to_string(),
                format!("sslmode=verify-full&sslrootcert={ca}"),
                "sslmode=verify-full".to_string(),
            ),
            Engine::MariaDb => (
                "ssl-mode=disabled".to_string(),
                "ssl-mode=required".to_string(),
                format!("ssl-mode=verify_identity&ssl-ca={ca}"),
                "ssl-mode=verify_ca".to_string(),
            ),
        };
        let with = |query: &str| format!("{}?{query}", server.url());
        let line = doctor_line(&sb, &with(&off), &[]);
        assert!(
            line.starts_with("ok ") && !line.contains(", TLS,"),
            "{line}"
        );
        for query in [&required, &verified] {
            let line = doctor_line(&sb, &with(query), &[]);
            assert!(
                line.starts_with("ok ") && line.contains(", TLS,"),
                "{query}: {line}"
            );
            assert!(!line.contains(PASSWORD), "{line}");
        }
        // The test CA is not among the public roots: verification must fail,
        // with a message that says so, never fall back to plain text.
        let out = exec(&sb, &with(&unverifiable), "SELECT 1", "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("TLS"), "{err}");
        assert!(!err.contains(PASSWORD), "{err}");
    }
}

#[test]
fn unreachable_server_is_exit_3() {
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for scheme in ["postgres", "mysql"] {
        let url = format!("{scheme}://analyst:secret-pw@127.0.0.1:{port}/shop");
        let out = exec(&sb, &url, "SELECT 1", "csv");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("connection refused"), "{err}");
        assert!(!err.contains("secret-pw"), "{err}");
    }
}

/// On a terminal, a server that wants a password gets one asked for without
/// echo; it is used for that run only.
#[test]
fn password_is_asked_for_on_a_terminal() {
    let sb = Sandbox::new();
    for server in all() {
        let url = server.url_without_password();
        let args = [
            std::ffi::OsStr::new(url.as_str()),
            std::ffi::OsStr::new("-e"),
            std::ffi::OsStr::new("SELECT count(*) AS n FROM orders"),
            std::ffi::OsStr::new("-f"),
            std::ffi::OsStr::new("csv"),
        ];
        let mut p = common::pty(&sb, &args, None, "dumb");
        p.expect(format!("Password for analyst@127.0.0.1:{}: ", server.port).as_str())
            .unwrap();
        p.send_line(PASSWORD).unwrap();
        let rest = p.expect(expectrl::Eof).unwrap();
        let text: String = rest
            .matches()
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect();
        assert!(text.contains("n\r\n6"), "{text}");
        assert!(!text.contains(PASSWORD), "the password was echoed: {text}");
    }
}

/// Read-only SQL that models and people write for PostgreSQL: all of it
/// passes the three layers and runs.
const POSTGRES_ALLOWED: &[&str] = &[
    "SHOW search_path",
    "EXPLAIN SELECT * FROM orders WHERE id = 1",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    "VALUES (1, 'a')",
    "TABLE customers",
    "TABLE orders ORDER BY id LIMIT 2",
    "SELECT date_trunc('month', ordered_at) AS m, sum(total) FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT DISTINCT ON (country) country, name FROM customers ORDER BY country, name",
    "SELECT count(*) FILTER (WHERE vip) AS vips, count(*) AS all FROM customers",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT * FROM n",
    "SELECT generate_series(1, 3) AS i",
    "SELECT jsonb_build_object('a', 1) AS j",
    "SELECT array_agg(name ORDER BY name) FROM customers",
    "SELECT * FROM pg_catalog.pg_tables WHERE schemaname = 'public'",
    "SELECT current_setting('server_version') AS v",
    "SELECT name, rank() OVER (PARTITION BY country ORDER BY signup) FROM customers",
    "SELECT coalesce(NULL, 'x') AS c",
];

/// The same for MySQL/MariaDB.
const MYSQL_ALLOWED: &[&str] = &[
    "SHOW TABLES",
    "SHOW COLUMNS FROM customers",
    "DESCRIBE orders",
    "SHOW CREATE TABLE orders",
    "SHOW INDEX FROM orders",
    "EXPLAIN SELECT * FROM orders WHERE id = 1",
    "SHOW VARIABLES LIKE 'version'",
    "SELECT DATE_FORMAT(ordered_at, '%Y-%m') AS m, SUM(total) FROM orders GROUP BY m",
    "SELECT GROUP_CONCAT(name ORDER BY name) FROM customers",
    "SELECT country, COUNT(*) FROM customers GROUP BY country WITH ROLLUP",
    "WITH vip AS (SELECT * FROM customers WHERE vip) SELECT COUNT(*) FROM vip",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
    "SELECT VERSION() AS v",
    "SELECT IFNULL(NULL, 1) AS x",
    "SELECT name, ROW_NUMBER() OVER (ORDER BY signup) AS rn FROM customers",
    "SELECT CONCAT(name, ' (', country, ')') AS who FROM customers LIMIT 2",
];

/// What people type to look around and to analyse works in each dialect.
#[test]
fn allowed_corpus_runs() {
    // The snapshots list the tables: no other test may create one meanwhile.
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    for server in all() {
        let statements = match server.engine {
            Engine::Postgres => POSTGRES_ALLOWED,
            Engine::MariaDb => MYSQL_ALLOWED,
        };
        assert!(statements.len() >= 15);
        let before = server.shop_snapshot();
        for sql in statements {
            let out = exec(&sb, &server.url(), sql, "csv");
            assert!(
                out.status.success() && !stdout_of(&out).is_empty(),
                "{:?} {sql}: {}",
                server.engine,
                stderr_of(&out)
            );
        }
        assert_eq!(server.shop_snapshot(), before, "{:?}", server.engine);
    }
}

/// The catalog of a server is cached with its catalog checksum: reused
/// while nothing changed, read again when a table appears or data changes.
#[test]
fn server_catalogs_are_cached_until_the_catalog_changes() {
    let _catalog = catalog_lock();
    for server in all() {
        let sb = Sandbox::new();
        let url = server.url();
        let schema = || stdout_of(&sb.aiq().args(["schema", url.as_str()]).output().unwrap());
        let first = schema();
        assert!(first.contains("table customers"), "{first}");
        let entries = sb.cache_entries();
        assert_eq!(entries.len(), 1, "{:?}", server.engine);
        let path = entries[0].clone();
        let bytes = std::fs::read(&path).unwrap();
        let cached = String::from_utf8_lossy(&bytes).into_owned();
        assert!(!cached.contains(PASSWORD), "the cache holds a password");
        std::fs::write(&path, replace_bytes(&bytes, "customers", "customerz")).unwrap();
        assert!(
            schema().contains("table customerz"),
            "{:?}: the cache was not used",
            server.engine
        );
        let table = format!("cache_probe_{}", std::process::id());
        server.admin(&format!("CREATE TABLE {table} (id INT)"));
        let after = schema();
        server.admin(&format!("DROP TABLE {table}"));
        assert!(
            after.contains(&format!("table {table}")) && after.contains("table customers"),
            "{:?}: a stale cache was used:\n{after}",
            server.engine
        );
    }
}

/// MariaDB's catalog cache is checked with one tiny query first (InnoDB's
/// log position, the statement counters): nothing written, the cache
/// answers; written in another database, the full fingerprint finds the
/// catalog unchanged, the cache answers and the entry is restamped; a row
/// written to one of the source's tables, or a table created, moves the
/// full fingerprint, so the catalog is read again.
#[test]
fn mariadb_catalog_cache_sees_every_write_past_its_quick_check() {
    let Some(server) = servers::mariadb() else {
        return;
    };
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let url = server.url();
    let t = format!("quick_probe_{}", std::process::id());
    server.admin(&format!("CREATE TABLE {t} (id INT)"));
    let schema = || schema_ok(&sb, &url);
    assert!(schema().contains(&format!("table {t}")));
    let entry = sb.only_cache_entry();
    let tampered_name = t.replace("probe", "proxy");
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, replace_bytes(&bytes, &t, &tampered_name)).unwrap();
    assert!(
        schema().contains(&format!("table {tampered_name}")),
        "the cache was not used"
    );
    let elsewhere = format!("aiq_elsewhere_{}", std::process::id());
    server.admin(&format!(
        "CREATE DATABASE {elsewhere}; CREATE TABLE {elsewhere}.x (id INT); INSERT INTO {elsewhere}.x VALUES (1)"
    ));
    let before = std::fs::read(&entry).unwrap();
    let after_elsewhere = schema();
    server.admin(&format!("DROP DATABASE {elsewhere}"));
    assert!(
        after_elsewhere.contains(&format!("table {tampered_name}")),
        "the cache was not used after a write in another database:\n{after_elsewhere}"
    );
    assert_ne!(
        std::fs::read(&entry).unwrap(),
        before,
        "the entry was not restamped"
    );
    server.admin(&format!("INSERT INTO {t} VALUES (1)"));
    let after_insert = schema();
    assert!(
        after_insert.contains(&format!("table {t}")),
        "a stale cache was used after a row was written:\n{after_insert}"
    );
    let u = format!("{t}_new");
    server.admin(&format!("CREATE TABLE {u} (id INT)"));
    let after_create = schema();
    server.admin(&format!("DROP TABLE {t}; DROP TABLE {u}"));
    assert!(
        after_create.contains(&format!("table {u}")),
        "a stale cache was used after a table was created:\n{after_create}"
    );
}

/// MariaDB tables whose names differ only in case (legal with
/// `lower_case_table_names = 0`, Linux's default) each keep their own
/// columns, in the same order every time, and sample values that differ
/// only in case are each a sample.
#[test]
fn mariadb_tables_differing_in_case_keep_their_columns() {
    let Some(server) = servers::mariadb() else {
        return;
    };
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let t = format!("case_probe_{}", std::process::id());
    let upper = t.to_uppercase();
    server.admin(&format!(
        "CREATE TABLE {upper} (a INT, b TEXT, c TEXT); CREATE TABLE {t} (a INT, d TEXT); \
         INSERT INTO {upper} VALUES (1, 'Paid', 'x'), (2, 'paid', 'y'); INSERT INTO {t} VALUES (1, 'z')"
    ));
    let first = schema_ok(&sb, &server.url());
    let again = sb
        .aiq()
        .args(["schema", "--refresh", server.url().as_str()])
        .output()
        .unwrap();
    server.admin(&format!("DROP TABLE {upper}; DROP TABLE {t}"));
    assert_eq!(stdout_of(&again), first);
    assert!(
        first.contains(&format!(
            "table {upper} (~2 rows)\n  a int(11)\n  b text, e.g. 'Paid', 'paid'\n  c text, e.g. 'x', 'y'\n"
        )),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "table {t} (~1 rows)\n  a int(11)\n  d text, e.g. 'z'\n"
        )),
        "{first}"
    );
}

/// What `aiq schema URL` prints, which must succeed.
fn schema_ok(sb: &Sandbox, url: &str) -> String {
    let out = sb.aiq().args(["schema", url]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    stdout_of(&out)
}

/// The block `aiq schema` prints for `table` (its head line to the next
/// table), or "" when it is not there.
fn table_block(schema: &str, table: &str) -> String {
    let head = format!("table {table}");
    let Some(start) = schema
        .lines()
        .position(|l| l == head || l.starts_with(&format!("{head} ")))
    else {
        return String::new();
    };
    let lines: Vec<&str> = schema.lines().skip(start).collect();
    let end = lines[1..]
        .iter()
        .position(|l| !l.starts_with("  "))
        .map_or(lines.len(), |i| i + 1);
    lines[..end].join("\n") + "\n"
}

/// PostgreSQL's catalog fingerprint moves with every kind of DDL, also
/// those that leave the table's own pg_class row alone (a column dropped,
/// renamed, retyped or made NOT NULL, a foreign key, a comment): each
/// shows in the next `aiq schema`, while an unchanged catalog comes from
/// the cache — after nothing was written (the quick check) and after a
/// write elsewhere (the full fingerprint).
#[test]
fn postgres_ddl_of_every_kind_invalidates_the_catalog_cache() {
    let Some(server) = servers::postgres() else {
        return;
    };
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let url = server.url();
    let t = format!("ddl_probe_{}", std::process::id());
    server.admin(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, a TEXT, b INT, c INT)"
    ));
    let block = || table_block(&schema_ok(&sb, &url), &t);
    assert!(block().contains("  b integer"), "{}", block());
    // Unchanged: the cache answers (a tampered entry shows it).
    let entry = sb.only_cache_entry();
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, replace_bytes(&bytes, "  b integer", "  q integer")).unwrap();
    assert!(block().contains("  q integer"), "the cache was not used");
    // The server wrote (outside the search path): the full fingerprint is
    // taken, finds the catalog unchanged, and the cache still answers.
    let elsewhere = format!("aiq_elsewhere_{}", std::process::id());
    server.admin(&format!("CREATE SCHEMA {elsewhere}"));
    server.admin(&format!("CREATE TABLE {elsewhere}.t (id INT)"));
    let tampered = std::fs::read(&entry).unwrap();
    let after_write = block();
    server.admin(&format!("DROP SCHEMA {elsewhere} CASCADE"));
    assert!(
        after_write.contains("  q integer"),
        "the cache was not used after an unrelated write:\n{after_write}"
    );
    // … and the entry now carries the server's position after that write,
    // so the next run's quick check can match again (same catalog inside).
    let restamped = std::fs::read(&entry).unwrap();
    assert_ne!(restamped, tampered, "the entry was not restamped");
    assert!(String::from_utf8_lossy(&restamped).contains("  q integer"));
    type Holds = dyn Fn(&str) -> bool;
    let steps: [(&str, &Holds); 7] = [
        ("ALTER TABLE {t} DROP COLUMN b", &|b| {
            !b.contains("  b integer") && !b.contains("  q integer")
        }),
        ("ALTER TABLE {t} RENAME COLUMN a TO a2", &|b| {
            b.contains("  a2 text\n")
        }),
        ("ALTER TABLE {t} ALTER COLUMN c TYPE bigint", &|b| {
            b.contains("  c bigint")
        }),
        ("ALTER TABLE {t} ALTER COLUMN a2 SET NOT NULL", &|b| {
            b.contains("  a2 text not null")
        }),
        (
            "ALTER TABLE {t} ADD CONSTRAINT {t}_fk FOREIGN KEY (c) REFERENCES {t} (id)",
            &|b| b.contains(" -> ddl_probe_"),
        ),
        ("COMMENT ON TABLE {t} IS 'probe note'", &|b| {
            b.contains(" -- probe note")
        }),
        ("ALTER TABLE {t} DROP CONSTRAINT {t}_fk", &|b| {
            !b.contains(" -> ")
        }),
    ];
    for (ddl, holds) in steps {
        let ddl = ddl.replace("{t}", &t);
        server.admin(&ddl);
        let now = block();
        assert!(holds(&now), "after {ddl} a stale cache was used:\n{now}");
    }
    server.admin(&format!("DROP TABLE {t}"));
    assert_eq!(block(), "", "a dropped table is still listed");
}

/// A table whose name has a dot of its own (`"report.2024"`) is one
/// table: sampled as one (it cost every table of its batch their samples
/// when read as table `2024` of schema `report`) and written quoted, as
/// are a name with capitals and a column that needs quotes.
#[test]
fn postgres_names_with_dots_and_capitals_are_read_as_written() {
    let Some(server) = servers::postgres() else {
        return;
    };
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let url = server.url();
    let (dotted, mixed) = (
        format!("report.{}", std::process::id()),
        format!("Mixed {}", std::process::id()),
    );
    server.admin(&format!(
        "SET ROLE {user}; \
         CREATE TABLE \"{dotted}\" (id INT, region TEXT); INSERT INTO \"{dotted}\" VALUES (1, 'north'); \
         CREATE TABLE \"{mixed}\" (id INT, \"UnitPrice\" TEXT); INSERT INTO \"{mixed}\" VALUES (1, 'cheap')",
        user = servers::USER
    ));
    let text = schema_ok(&sb, &url);
    server.admin(&format!("DROP TABLE \"{dotted}\"; DROP TABLE \"{mixed}\""));
    let block = table_block(&text, &format!("\"{dotted}\""));
    assert!(block.contains("  region text, e.g. 'north'\n"), "{text}");
    let block = table_block(&text, &format!("\"{mixed}\""));
    assert!(
        block.contains("  \"UnitPrice\" text, e.g. 'cheap'\n"),
        "{text}"
    );
}

/// The same on MariaDB, in backticks: a table whose name has a dot of its
/// own is one name, and a column with a space is quoted.
#[test]
fn mariadb_names_with_dots_and_spaces_are_written_as_read() {
    let Some(server) = servers::mariadb() else {
        return;
    };
    let _catalog = catalog_lock();
    let sb = Sandbox::new();
    let dotted = format!("report.{}", std::process::id());
    server.admin(&format!(
        "CREATE TABLE `{dotted}` (id INT, `Unit Price` VARCHAR(10)); \
         INSERT INTO `{dotted}` VALUES (1, 'cheap')"
    ));
    let text = schema_ok(&sb, &server.url());
    server.admin(&format!("DROP TABLE `{dotted}`"));
    let block = table_block(&text, &format!("`{dotted}`"));
    assert!(
        block.contains("  `Unit Price` varchar(10), e.g. 'cheap'\n"),
        "{text}"
    );
}

#[test]
fn unknown_names_are_answered_with_the_closest_ones() {
    for server in all() {
        let sb = Sandbox::new();
        let url = server.url();
        for (sql, hint) in [
            ("SELECT nme FROM customers", "did you mean customers.name?"),
            ("SELECT * FROM custmers", "did you mean customers?"),
        ] {
            let out = exec(&sb, &url, sql, "csv");
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(1), "{:?}: {err}", server.engine);
            assert!(err.contains(hint), "{:?} {sql}: {err}", server.engine);
        }
        // The model's fix request carries the same hint.
        let model = ModelServer::start(vec![
            Reply::Text("```sql\nSELECT nme FROM customers\n```".into()),
            Reply::Text("```sql\nSELECT name FROM customers ORDER BY id\n```".into()),
        ]);
        let out = sb
            .aiq_with(&model, "openai")
            .args([url.as_str(), "-q", "customer names", "-f", "csv"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{:?}: {}",
            server.engine,
            stderr_of(&out)
        );
        let chats = model.chats();
        assert_eq!(chats.len(), 2, "{:?}", server.engine);
        let fix = chats[1].messages().last().unwrap().1.clone();
        assert!(
            fix.contains("did you mean customers.name?"),
            "{:?}: {fix}",
            server.engine
        );
    }
}

/// A server of its own for the least-privilege tests, with the page's
/// `sales` database; `None` (skipped) without the server.
fn sales_server(engine: Engine) -> Option<Server> {
    let name = format!("{engine:?}");
    servers::started_or_skipped(&name, || {
        let server = match engine {
            Engine::Postgres => servers::launch_postgres("pg-logins")?,
            Engine::MariaDb => servers::launch_mariadb("mariadb-logins")?,
        };
        server.admin("CREATE DATABASE sales");
        match engine {
            // The test login owns the tables, as `shop`'s.
            Engine::Postgres => server.admin_in(
                "sales",
                &format!(
                    "GRANT ALL ON SCHEMA public TO {USER}; SET ROLE {USER}; {SALES} RESET ROLE;"
                ),
            ),
            Engine::MariaDb => server.admin_in(
                "sales",
                &format!("GRANT ALL ON sales.* TO '{USER}'@'%'; {SALES}"),
            ),
        };
        Ok(server)
    })
}

/// `aiq doctor` on PostgreSQL warns of a superuser (or a login that may
/// become one), of REPLICATION and of a hidden table the login may read,
/// without changing its exit code; the login docs/safety.md makes gets
/// one `ok`, reads the visible tables, and the server refuses it the
/// hidden one.
#[test]
fn doctor_says_what_a_postgres_login_could_do_past_the_gate() {
    let Some(server) = sales_server(Engine::Postgres) else {
        return;
    };
    let url = |login: &str| format!("postgres://{login}@127.0.0.1:{}/sales", server.port);
    let (code, lines) = doctor(&url("postgres"));
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines,
        [
            superuser("postgres", "is a superuser"),
            replication("postgres", "has REPLICATION"),
            reads_payroll("postgres"),
        ]
    );
    let (_, lines) = doctor(&url(&format!("{USER}:{PASSWORD}")));
    assert_eq!(lines, [reads_payroll(USER)]);
    server.admin_in(
        "sales",
        "CREATE ROLE admins SUPERUSER NOLOGIN;
         CREATE ROLE climber LOGIN PASSWORD 'pw-Climber-1' IN ROLE admins;
         CREATE ROLE copier LOGIN REPLICATION PASSWORD 'pw-Copier-1';",
    );
    let (_, lines) = doctor(&url("climber:pw-Climber-1"));
    assert_eq!(
        lines,
        [superuser("climber", "may SET ROLE to the superuser admins")]
    );
    let (_, lines) = doctor(&url("copier:pw-Copier-1"));
    assert_eq!(lines, [replication("copier", "has REPLICATION")]);

    let statements = &blocks("### PostgreSQL", "sql")[0];
    server.admin_in("sales", statements);
    let (code, lines) = doctor(&url(&format!("{READER}:{READER_PASSWORD}")));
    assert_eq!((code, lines), (Some(0), vec![fine(READER, true)]));
    let read = |sql: &str| server.as_login(READER, READER_PASSWORD, "sales", sql);
    assert_eq!(
        read("SELECT count(*) FROM customers JOIN orders ON orders.customer_id = customers.id"),
        Ok("1\n".to_string())
    );
    let refused = read("SELECT * FROM payroll").unwrap_err();
    assert!(
        refused.contains("permission denied for table payroll"),
        "{refused}"
    );
}

/// The same on MariaDB: `ALL PRIVILEGES ON *.*`, `REPLICATION SLAVE`, a
/// hidden table read through a grant on the database or through the
/// login's default role; the documented login gets one `ok` (the hidden
/// table is not even in its catalog), and the server refuses it the
/// hidden table.
#[test]
fn doctor_says_what_a_mariadb_login_could_do_past_the_gate() {
    let Some(server) = sales_server(Engine::MariaDb) else {
        return;
    };
    let url = |login: &str| format!("mysql://{login}@127.0.0.1:{}/sales", server.port);
    server.admin(
        "CREATE USER 'boss'@'%' IDENTIFIED BY 'pw-Boss-1';
         GRANT ALL ON *.* TO 'boss'@'%' WITH GRANT OPTION;
         CREATE ROLE payroll_reader;
         GRANT SELECT ON sales.payroll TO payroll_reader;
         CREATE USER 'copier'@'%' IDENTIFIED BY 'pw-Copier-1';
         GRANT REPLICATION SLAVE ON *.* TO 'copier'@'%';
         GRANT SELECT ON sales.customers TO 'copier'@'%';
         GRANT payroll_reader TO 'copier'@'%';
         SET DEFAULT ROLE payroll_reader FOR 'copier'@'%';",
    );
    let (code, lines) = doctor(&url("boss:pw-Boss-1"));
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(
        lines,
        [
            superuser("boss@%", "has ALL PRIVILEGES ON *.*"),
            reads_payroll("boss@%"),
        ]
    );
    let (_, lines) = doctor(&url(&format!("{USER}:{PASSWORD}")));
    assert_eq!(lines, [reads_payroll(&format!("{USER}@%"))]);
    let (_, lines) = doctor(&url("copier:pw-Copier-1"));
    assert_eq!(
        lines,
        [
            replication("copier@%", "has REPLICATION SLAVE ON *.*"),
            reads_payroll("copier@%"),
        ]
    );

    let statements = &blocks("### MySQL and MariaDB", "sql")[0];
    server.admin_in("sales", statements);
    let (code, lines) = doctor(&url(&format!("{READER}:{READER_PASSWORD}")));
    let reader = format!("{READER}@%");
    assert_eq!((code, lines), (Some(0), vec![fine(&reader, false)]));
    let read = |sql: &str| server.as_login(READER, READER_PASSWORD, "sales", sql);
    assert_eq!(
        read("SELECT count(*) FROM customers JOIN orders ON orders.customer_id = customers.id"),
        Ok("1\n".to_string())
    );
    let refused = read("SELECT * FROM payroll").unwrap_err();
    assert!(refused.contains("SELECT command denied"), "{refused}");
}
