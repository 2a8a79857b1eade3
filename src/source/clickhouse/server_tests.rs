//! ClickHouse's own read-only layer, proven with the parser gate
//! bypassed: against the real two-shard cluster of the shared test harness
//! (tests/common/clickhouse.rs), every write, every setting change and
//! every table function that reaches outside fails on the server, nothing
//! changes on either shard, and the session is still read-only after.

// The shared harness, loaded once (tests/common/clickhouse.rs uses both).
use crate::source::server::server_tests::{servers, shop};

#[path = "../../../tests/common/clickhouse.rs"]
mod clickhouse;

/// The hidden table's marker values, as the attacker's corpus has them.
mod attack {
    pub const HIDDEN_TEXT: &str = "PAYMARK-Q7731";
    pub const HIDDEN_NUMBER: &str = "98765432";
}

use std::time::Duration;

use crate::safety::CheckedSql;
use crate::source::{
    open, CancelToken, OpenOptions, ServerProtocol, ServerSpec, SourceSpec, Value,
};

fn open_shard(url: String, allow_write: bool) -> Box<dyn crate::source::DataSource> {
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
        password: None,
    };
    open(&spec, options).expect("open the ClickHouse server")
}

fn run(
    source: &dyn crate::source::DataSource,
    sql: &str,
) -> Result<Vec<Vec<Value>>, crate::source::ExecError> {
    let mut rows = crate::source::server::Collect::default();
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
    full_width: false,
    in_chat: false,
};

/// A sink that takes text rows as they are (`as_text`) or only as values,
/// and counts the blocks of text it was handed; with `delimited` it asks
/// for the server's binary form, and counts those blocks too.
struct Via<'a> {
    inner: &'a mut dyn crate::render::Renderer,
    as_text: bool,
    blocks: usize,
    delimited: bool,
    native: usize,
}

impl crate::source::RowSink for Via<'_> {
    fn columns(&mut self, columns: &[crate::source::Column]) -> std::io::Result<()> {
        self.inner.columns(columns)
    }

    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        self.inner.row(row)
    }

    fn text_rows(&mut self, rows: crate::source::TextRows) -> std::io::Result<()> {
        self.blocks += 1;
        match self.as_text {
            true => self.inner.text_rows(rows),
            false => rows.for_each_row(|row| self.inner.row(&row)),
        }
    }

    fn native_rows(&mut self, rows: crate::source::NativeRows) -> std::io::Result<()> {
        self.native += 1;
        self.inner.native_rows(rows)
    }

    fn writes_delimited(&self) -> bool {
        self.delimited
    }
}

/// `sql`'s result in `format`, its text rows written as they are or as
/// values; and how many blocks of text the server's answer came in.
fn written(
    source: &dyn crate::source::DataSource,
    sql: &str,
    format: crate::render::Format,
    as_text: bool,
) -> (Vec<u8>, usize) {
    let export = exported(source, sql, format, as_text, false);
    if let Some(e) = export.error {
        panic!("the query failed: {e}");
    }
    (export.out, export.text_blocks)
}

/// What an export wrote, in how many blocks of text and of binary, and
/// the error that ended it, if one did.
struct Export {
    out: Vec<u8>,
    text_blocks: usize,
    native: usize,
    error: Option<crate::source::ExecError>,
}

/// `sql`'s result in `format` as [`written`] writes it; with `delimited`
/// the sink asks for the server's binary form.
fn exported(
    source: &dyn crate::source::DataSource,
    sql: &str,
    format: crate::render::Format,
    as_text: bool,
    delimited: bool,
) -> Export {
    let mut out = Vec::new();
    let (result, text_blocks, native) = {
        let mut renderer = crate::render::renderer(format, Box::new(&mut out), OPTIONS);
        let mut via = Via {
            inner: renderer.as_mut(),
            as_text,
            blocks: 0,
            delimited,
            native: 0,
        };
        let result = source.execute(
            &CheckedSql::unchecked_read_for_tests(sql),
            &mut via,
            &CancelToken::new(),
        );
        let (blocks, native) = (via.blocks, via.native);
        renderer.finish().unwrap();
        (result, blocks, native)
    };
    Export {
        out,
        text_blocks,
        native,
        error: result.err(),
    }
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

/// Every kind the binary form is read in, over three blocks: extremes of
/// each integer width, floats with NaN and infinities, decimals of each
/// width (negative, with trailing zeros), text with quotes, commas, line
/// ends, tabs, backslashes, bytes that are not UTF-8 and NULLs, fixed
/// strings, the zero date and time, and dates and times up to the 2090s.
const EVERY_BINARY_KIND: &str = "SELECT number AS n, toInt8(number % 256 - 128) AS i8, \
    toInt16(number * 37 % 65536 - 32768) AS i16, toInt32(number * 2654435761 % 4294967296 - 2147483648) AS i32, \
    toInt64(number * 2654435761) - 9223372036854775807 AS i64, toUInt8(number % 256) AS u8, \
    toUInt64(number * 11400714819323198485) AS u64, if(number % 5 = 0, NULL, toInt64(number) - 75000) AS ni, \
    multiIf(number % 1000 = 1, 1 / 0, number % 1000 = 2, -1 / 0, number % 1000 = 3, 0 / 0, number / 7) AS f64, \
    toFloat32(number / 3) AS f32, toDecimal32(toInt32(number % 2000) - 1000, 2) / 3 AS d32, \
    toDecimal64(toInt64(number) - 75000, 3) / 7 AS d64, toDecimal128(number, 10) / 3 AS d128, \
    concat('a,\"b\"\\n\\r\\t\\\\ ', toString(number)) AS s, \
    if(number % 11 = 0, '\\xff\\xfe', if(number % 13 = 0, '', 'é')) AS bytes, \
    if(number % 3 = 0, NULL, concat('x,\"y\"', toString(number % 7))) AS ns, \
    toFixedString(toString(number % 100), 3) AS fs, toDate(number % 30000) AS d, \
    if(number % 4 = 0, NULL, toDate(number % 40000)) AS nd, toDateTime(number * 26591 % 3900000000) AS t, \
    toDateTime(number * 1000, 'UTC') AS tu \
    FROM system.numbers LIMIT 150000";

/// A CSV or TSV export reads the server's binary answer where every
/// column's type allows it, and writes byte for byte what the text answer
/// writes; the values are the text answer's too. A column read as text
/// (`LowCardinality`, `UUID`, arrays …) keeps the whole result text.
#[test]
fn binary_exports_write_what_the_text_answer_writes() {
    let Some(c) = clickhouse::cluster() else {
        return;
    };
    let source = open_shard(c.first().url(), false);
    for format in [crate::render::Format::Csv, crate::render::Format::Tsv] {
        let binary = exported(source.as_ref(), EVERY_BINARY_KIND, format, true, true);
        assert!(binary.error.is_none(), "{:?}", binary.error);
        assert_eq!(binary.text_blocks, 0);
        assert!(binary.native >= 3, "{} blocks of binary", binary.native);
        let text = exported(source.as_ref(), EVERY_BINARY_KIND, format, true, false);
        assert!(text.error.is_none(), "{:?}", text.error);
        assert!(text.text_blocks > 0 && text.native == 0);
        assert_eq!(
            String::from_utf8_lossy(&binary.out),
            String::from_utf8_lossy(&text.out),
            "{format:?}"
        );
        assert_eq!(binary.out, text.out);
        // Not every kind is read in binary.
        let mixed = exported(
            source.as_ref(),
            "SELECT id, lc, u FROM kinds ORDER BY id",
            format,
            true,
            true,
        );
        assert!(mixed.error.is_none(), "{:?}", mixed.error);
        assert!(mixed.text_blocks > 0 && mixed.native == 0);
    }
    // The values, as a consumer that reads values sees them.
    let values = |delimited: bool| {
        let mut rows = Collecting {
            out: crate::source::server::Collect::default(),
            delimited,
        };
        source
            .execute(
                &CheckedSql::unchecked_read_for_tests(EVERY_BINARY_KIND),
                &mut rows,
                &CancelToken::new(),
            )
            .unwrap();
        format!("{:?}{:?}", rows.out.columns, rows.out.rows)
    };
    assert_eq!(values(true), values(false));
}

/// Collects values, asking for the binary form or not.
struct Collecting {
    out: crate::source::server::Collect,
    delimited: bool,
}

impl crate::source::RowSink for Collecting {
    fn columns(&mut self, columns: &[crate::source::Column]) -> std::io::Result<()> {
        self.out.columns(columns)
    }
    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        self.out.row(row)
    }
    fn writes_delimited(&self) -> bool {
        self.delimited
    }
}

/// The server's error after some binary blocks is the statement's error,
/// as it is after some rows of text, and the rows before it were written.
#[test]
fn an_error_after_some_binary_blocks_is_the_statements() {
    let Some(c) = clickhouse::cluster() else {
        return;
    };
    let source = open_shard(c.first().url(), false);
    let sql = "SELECT number, toString(number) AS s, throwIf(number >= 300000) AS t \
               FROM system.numbers LIMIT 400000";
    let binary = exported(source.as_ref(), sql, crate::render::Format::Csv, true, true);
    let text = exported(
        source.as_ref(),
        sql,
        crate::render::Format::Csv,
        true,
        false,
    );
    assert!(binary.native > 0, "no block came before the error");
    let said = binary.error.expect("an error").to_string();
    assert!(
        said.contains("Value passed to 'throwIf' function is non zero"),
        "{said}"
    );
    assert_eq!(said, text.error.expect("an error").to_string());
    let written = binary.out;
    assert!(written.starts_with(b"number,s,t\n0,0,0\n"));
    assert!(written.len() > 1_000_000, "{} bytes written", written.len());
}
