//! The server engines' own read-only layer, proven with the parser gate
//! bypassed: against real PostgreSQL and MariaDB servers started by the
//! shared test harness (tests/common/servers.rs), every write fails on the
//! server and the data stays as it was.

#[path = "../../../tests/common/shop.rs"]
pub(crate) mod shop;

#[path = "../../../tests/common/servers.rs"]
pub(crate) mod servers;

use std::time::Duration;

use crate::render::Format;
use crate::safety::CheckedSql;
use crate::source::{open, OpenOptions, ServerProtocol, ServerSpec, SourceSpec, Value};

fn open_server(server: &servers::Server) -> Box<dyn crate::source::DataSource> {
    let protocol = match server.engine {
        servers::Engine::Postgres => ServerProtocol::Postgres,
        servers::Engine::MariaDb => ServerProtocol::MySql,
    };
    let spec = SourceSpec::Server(ServerSpec {
        protocol,
        url: server.url(),
        password_env: None,
    });
    let options = OpenOptions {
        allow_write: false,
        timeout: Duration::from_secs(20),
        cache: None,
        memory_limit: None,
        password: None,
    };
    open(&spec, options).expect("open the server read-only")
}

fn run(
    source: &dyn crate::source::DataSource,
    sql: &str,
) -> Result<Vec<Vec<Value>>, crate::source::ExecError> {
    let mut rows = super::Collect::default();
    source
        .execute(
            &CheckedSql::unchecked_for_tests(sql),
            &mut rows,
            &crate::source::CancelToken::new(),
        )
        .map(|_| rows.rows)
}

fn assert_all_refused(server: &servers::Server, statements: &[&str]) {
    let before = server.shop_snapshot();
    let source = open_server(server);
    for sql in statements {
        let r = run(source.as_ref(), sql);
        assert!(r.is_err(), "{:?} accepted {sql}: {r:?}", server.engine);
    }
    // The session is still usable and still read-only afterwards.
    let rows = run(source.as_ref(), "SELECT count(*) FROM customers").unwrap();
    assert_eq!(rows[0][0], Value::Int(5));
    assert_eq!(server.shop_snapshot(), before, "{:?}", server.engine);
    let _ = Format::Csv;
}

#[test]
fn postgres_session_refuses_writes_without_the_gate() {
    let Some(pg) = servers::postgres() else {
        return;
    };
    assert_all_refused(
        pg,
        &[
            "DELETE FROM customers",
            "UPDATE orders SET total = 0",
            "INSERT INTO customers VALUES (9, 'x', 'y', false, '2024-01-01')",
            "CREATE TABLE evil (a int)",
            "DROP TABLE orders",
            "TRUNCATE orders",
            "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
            "SELECT nextval('x')",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; DELETE FROM customers",
            "COMMIT; DELETE FROM customers",
            "COPY customers TO '/tmp/aiq-evil.csv'",
            "SELECT pg_read_file('/etc/passwd')",
        ],
    );
    settings_do_not_outlive_their_statement(
        pg,
        &[
            "SET transaction_read_only = off",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            "SET default_transaction_read_only = off",
            "COMMIT",
            "SET statement_timeout = 0",
        ],
    );
    // A setting changed inside a read is rolled back with it.
    let source = open_server(pg);
    let _ = run(
        source.as_ref(),
        "SELECT set_config('default_transaction_read_only', 'off', false)",
    );
    assert!(run(source.as_ref(), "DELETE FROM customers").is_err());
    assert_eq!(
        run(source.as_ref(), "SHOW default_transaction_read_only").unwrap()[0][0],
        Value::Text("on".into())
    );
}

#[test]
fn mariadb_session_refuses_writes_without_the_gate() {
    let Some(db) = servers::mariadb() else { return };
    assert_all_refused(
        db,
        &[
            "DELETE FROM customers",
            "UPDATE orders SET total = 0",
            "INSERT INTO customers VALUES (9, 'x', 'y', false, '2024-01-01')",
            "REPLACE INTO customers VALUES (1, 'x', 'y', false, '2024-01-01')",
            "CREATE TABLE evil (a int)",
            "DROP TABLE orders",
            "TRUNCATE orders",
            "SELECT * FROM customers INTO OUTFILE '/tmp/aiq-evil.csv'",
            "SET SESSION TRANSACTION READ WRITE; DROP TABLE orders",
        ],
    );
    settings_do_not_outlive_their_statement(
        db,
        &[
            "SET SESSION TRANSACTION READ WRITE",
            "SET SESSION transaction_read_only = 0",
            "COMMIT",
            "SET SESSION max_statement_time = 0",
        ],
    );
}

/// Each statement that changes a session setting is followed by writes
/// that must still fail: every read starts read-only again.
fn settings_do_not_outlive_their_statement(server: &servers::Server, changes: &[&str]) {
    let before = server.shop_snapshot();
    let source = open_server(server);
    for change in changes {
        let _ = run(source.as_ref(), change);
        for write in [
            "DELETE FROM customers",
            "DROP TABLE orders",
            "CREATE TABLE evil (a int)",
        ] {
            let r = run(source.as_ref(), write);
            assert!(
                r.is_err(),
                "{:?}: {change} then {write}: {r:?}",
                server.engine
            );
        }
    }
    assert_eq!(server.shop_snapshot(), before);
}

#[test]
fn servers_report_version_and_read_only() {
    for server in [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
    {
        let source = open_server(server);
        let status = source.server_status().expect("a server status");
        assert!(status.read_only, "{status:?}");
        let want = match server.engine {
            servers::Engine::Postgres => "PostgreSQL ",
            servers::Engine::MariaDb => "MariaDB ",
        };
        assert!(status.version.starts_with(want), "{status:?}");
        assert!(status.address.ends_with("/shop"), "{status:?}");
    }
}

/// A connection the server dropped is made again for the next statement.
#[test]
fn lost_connections_come_back() {
    for server in [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
    {
        let source = open_server(server);
        let count = "SELECT count(*) FROM orders";
        assert_eq!(run(source.as_ref(), count).unwrap()[0][0], Value::Int(6));
        // Kill this source's own connection only (other tests share the server).
        let id_sql = match server.engine {
            servers::Engine::Postgres => "SELECT pg_backend_pid()",
            servers::Engine::MariaDb => "SELECT CONNECTION_ID()",
        };
        let id = match &run(source.as_ref(), id_sql).unwrap()[0][0] {
            Value::Int(id) => *id,
            other => panic!("no connection id: {other:?}"),
        };
        server.admin(&match server.engine {
            servers::Engine::Postgres => format!("SELECT pg_terminate_backend({id})"),
            servers::Engine::MariaDb => format!("KILL {id}"),
        });
        // The statement that meets the dead connection fails; the next one
        // connects again.
        let first = run(source.as_ref(), count);
        assert!(
            first.is_err(),
            "{:?}: the connection was not killed",
            server.engine
        );
        let rows = run(source.as_ref(), count).expect("connected again");
        assert_eq!(rows[0][0], Value::Int(6), "{:?}", server.engine);
    }
}

/// Ctrl-C (the turn's cancel token) stops a running statement on the server, and
/// the same connection answers the next statement.
#[test]
fn cancelled_statements_leave_a_usable_connection() {
    for server in [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
    {
        let source = open_server(server);
        let slow = match server.engine {
            servers::Engine::Postgres => "SELECT pg_sleep(30)",
            servers::Engine::MariaDb => "SELECT SLEEP(30)",
        };
        let cancel = crate::source::CancelToken::new();
        let handle = cancel.clone();
        let started = std::time::Instant::now();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            handle.cancel();
        });
        let mut rows = super::Collect::default();
        let r = source
            .execute(&CheckedSql::unchecked_for_tests(slow), &mut rows, &cancel)
            .map(|_| rows.rows);
        canceller.join().unwrap();
        assert!(
            matches!(r, Err(crate::source::ExecError::Cancelled)),
            "{:?}: {r:?}",
            server.engine
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        let rows = run(source.as_ref(), "SELECT count(*) FROM customers").unwrap();
        assert_eq!(rows[0][0], Value::Int(5), "{:?}", server.engine);
    }
}

/// Stops wanting rows after `n` (a table that has drawn what it shows).
struct TakeThen {
    n: usize,
    seen: usize,
}

impl crate::source::RowSink for TakeThen {
    fn columns(&mut self, _: &[crate::source::Column]) -> std::io::Result<()> {
        Ok(())
    }
    fn row(&mut self, _: &[Value]) -> std::io::Result<()> {
        self.seen += 1;
        if self.seen > self.n {
            return Err(crate::source::EnoughRows::error());
        }
        Ok(())
    }
}

/// A sink that has enough stops a huge statement at once — on the server
/// too, so nothing is left to drain — and the connection answers the next.
#[test]
fn enough_rows_stop_the_statement_on_the_server() {
    for server in [servers::postgres(), servers::mariadb()]
        .into_iter()
        .flatten()
    {
        let source = open_server(server);
        let huge = match server.engine {
            servers::Engine::Postgres => {
                "SELECT a * b FROM generate_series(1, 10000) a, generate_series(1, 10000) b"
            }
            servers::Engine::MariaDb => "SELECT a.seq FROM seq_1_to_10000 a, seq_1_to_10000 b",
        };
        let started = std::time::Instant::now();
        let mut sink = TakeThen { n: 100, seen: 0 };
        let r = source.execute(
            &CheckedSql::unchecked_for_tests(huge),
            &mut sink,
            &crate::source::CancelToken::new(),
        );
        assert!(
            matches!(&r, Err(crate::source::ExecError::Output(e)) if crate::source::EnoughRows::is(e)),
            "{:?}: {r:?}",
            server.engine
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?} took {:?}",
            server.engine,
            started.elapsed()
        );
        let rows = run(source.as_ref(), "SELECT count(*) FROM customers").unwrap();
        assert_eq!(rows[0][0], Value::Int(5), "{:?}", server.engine);
    }
}
