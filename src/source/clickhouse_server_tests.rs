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

const OPTIONS: crate::render::RenderOptions = crate::render::RenderOptions {
    max_rows: None,
    color: false,
    width: None,
    count_budget: None,
};

/// A sink that takes text rows as they are (`as_text`) or only as values,
/// and counts the blocks of text it was handed.
struct Via<'a> {
    inner: &'a mut dyn crate::render::Renderer,
    as_text: bool,
    blocks: usize,
}

impl super::RowSink for Via<'_> {
    fn columns(&mut self, columns: &[super::Column]) -> std::io::Result<()> {
        self.inner.columns(columns)
    }

    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        self.inner.row(row)
    }

    fn text_rows(&mut self, rows: super::TextRows) -> std::io::Result<()> {
        self.blocks += 1;
        match self.as_text {
            true => self.inner.text_rows(rows),
            false => rows.for_each_row(|row| self.inner.row(&row)),
        }
    }
}

/// `sql`'s result in `format`, its text rows written as they are or as
/// values; and how many blocks of text the server's answer came in.
fn written(
    source: &dyn super::DataSource,
    sql: &str,
    format: crate::render::Format,
    as_text: bool,
) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let blocks = {
        let mut renderer = crate::render::renderer(format, Box::new(&mut out), OPTIONS);
        let mut via = Via {
            inner: renderer.as_mut(),
            as_text,
            blocks: 0,
        };
        source
            .execute(
                &CheckedSql::unchecked_for_tests(sql),
                &mut via,
                &CancelToken::new(),
            )
            .expect("the query runs");
        let blocks = via.blocks;
        renderer.finish().unwrap();
        blocks
    };
    (out, blocks)
}

/// CSV and TSV written from the server's text, most fields as it sent
/// them, are byte for byte what the same rows write as values: every type
/// of the `kinds` table, and 30,000 rows of escapes, quotes, NULLs, bytes
/// that are not UTF-8, dates, times with and without fractions, floats,
/// decimals and arrays.
#[test]
fn text_rows_write_what_their_values_write() {
    let Some(c) = clickhouse::cluster() else {
        return;
    };
    let source = open_shard(c.first().url(), false);
    let generated = "SELECT number AS n, toInt64(number) - 15000 AS i, \
        concat('a\\tb\\\\c ', toString(number)) AS s, \
        if(number % 3 = 0, NULL, concat('x,\"y\"\\n', toString(number % 7))) AS q, \
        if(number % 11 = 0, '\\xff\\xfe', 'é') AS bytes, \
        toDate('2000-01-01') + number AS d, \
        toDateTime('2024-01-01 00:00:00') + number * 37 AS t, \
        number / 3 AS f, toDecimal64(number / 7, 3) AS dec, \
        [toString(number), ''] AS arr, toFixedString('ab', 3) AS fs \
        FROM system.numbers LIMIT 30000";
    for sql in ["SELECT * FROM kinds ORDER BY id", generated] {
        for format in [crate::render::Format::Csv, crate::render::Format::Tsv] {
            let (text, blocks) = written(source.as_ref(), sql, format, true);
            let (values, _) = written(source.as_ref(), sql, format, false);
            assert!(blocks > 0, "no rows came as text for {sql}");
            assert_eq!(
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&values),
                "{format:?} of {sql}"
            );
            assert_eq!(text, values);
        }
    }
}
