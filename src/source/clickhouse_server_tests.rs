//! ClickHouse's own read-only layer, proven with the parser gate
//! bypassed: against the real two-shard cluster of the shared test harness
//! (tests/common/clickhouse.rs), every write, every setting change and
//! every table function that reaches outside fails on the server, nothing
//! changes on either shard, and the session is still read-only after.

// The shared harness, loaded once (tests/common/clickhouse.rs uses both).
use super::server_tests::{servers, shop};

#[path = "../../tests/common/clickhouse.rs"]
mod clickhouse;

/// The hidden table's marker values, as the attacker's corpus has them.
mod attack {
    pub const HIDDEN_TEXT: &str = "PAYMARK-Q7731";
    pub const HIDDEN_NUMBER: &str = "98765432";
}

use std::time::Duration;

use super::{open, CancelToken, OpenOptions, ServerProtocol, ServerSpec, SourceSpec, Value};
use crate::safety::CheckedSql;

fn open_shard(url: String, allow_write: bool) -> Box<dyn super::DataSource> {
    let spec = SourceSpec::Server(ServerSpec {
        protocol: ServerProtocol::ClickHouse { tls: false },
        url,
        password_env: None,
    });
    let options = OpenOptions {
        allow_write,
        timeout: Duration::from_secs(20),
        cache: None,
        memory_limit: None,
    };
    open(&spec, options).expect("open the ClickHouse server")
}

fn run(source: &dyn super::DataSource, sql: &str) -> Result<Vec<Vec<Value>>, super::ExecError> {
    let mut rows = super::server::Collect::default();
    source
        .execute(
            &CheckedSql::unchecked_for_tests(sql),
            &mut rows,
            &CancelToken::new(),
        )
        .map(|_| rows.rows)
}

#[test]
fn clickhouse_session_refuses_writes_without_the_gate() {
    let Some(c) = clickhouse::cluster() else {
        return;
    };
    let before = c.snapshot();
    let source = open_shard(c.first().url(), false);
    let status = source.server_status().expect("a server status");
    assert!(status.read_only, "{status:?}");
    assert!(status.version.starts_with("ClickHouse "), "{status:?}");
    for sql in [
        "INSERT INTO customers VALUES (9, 'Mallory', 'XX', 0, '2024-01-01')",
        "INSERT INTO events VALUES (99, '2024-01-01', 'evil', 1)",
        "ALTER TABLE orders DELETE WHERE 1",
        "ALTER TABLE events_local UPDATE kind = 'evil' WHERE 1",
        "ALTER TABLE customers ADD COLUMN evil UInt8",
        "DROP TABLE orders",
        "TRUNCATE TABLE orders",
        "OPTIMIZE TABLE orders FINAL",
        "RENAME TABLE orders TO evil",
        "DETACH TABLE orders",
        "CREATE TABLE evil (x UInt8) ENGINE = Memory",
        "CREATE DATABASE evil",
        "CREATE TEMPORARY TABLE evil (x UInt8)",
        "SYSTEM STOP MERGES",
        "SET readonly = 0",
        "SELECT count() FROM customers SETTINGS readonly = 0",
        "SELECT count() FROM customers SETTINGS max_execution_time = 0",
        "SELECT * FROM file('/etc/passwd', 'TSV', 'a String')",
        "SELECT * FROM url('http://127.0.0.1:9/', 'TSV', 'a String')",
        "SELECT * FROM remote('127.0.0.1', shop.payroll)",
        "SELECT * FROM cluster('two_shards', shop, payroll)",
        "SELECT * FROM merge(currentDatabase(), '^pay')",
        "SELECT * FROM customers INTO OUTFILE '/tmp/aiq-evil.tsv'",
        "SELECT 1; DROP TABLE orders",
    ] {
        let r = run(source.as_ref(), sql);
        assert!(r.is_err(), "accepted {sql}: {r:?}");
        // Still read-only after each: no statement lifts it.
        let ro = run(
            source.as_ref(),
            "SELECT value FROM system.settings WHERE name = 'readonly'",
        )
        .unwrap();
        assert_eq!(ro[0][0], Value::Text("1".into()), "after {sql}");
    }
    let rows = run(source.as_ref(), "SELECT count() FROM events").unwrap();
    assert_eq!(rows[0][0], Value::Int(6));
    assert_eq!(c.snapshot(), before);
}
