//! ClickHouse's `Native` answer: the binary, columnar blocks every release
//! since 18.16 sends over HTTP for `FORMAT Native` (per block: the number
//! of columns and rows, then each column's name, type and values; without
//! `client_protocol_version` no block info comes first). Pure; never sees
//! a connection.
//!
//! Why: formatting a million rows as text costs the server about twice
//! what sending them in its own binary form does (on 18.16, 170 against
//! 80 ms for the benchmark's million rows, `curl -o /dev/null`), so a CSV
//! or TSV export asks for `Native` when every column of the result is of
//! a kind read here ([`Layout::new`]), and writes each field straight from
//! the block ([`NativeRows::write_rows`]): numbers, decimals, dates and
//! times as digits, text through the writer's quoting. Everything else —
//! other types, other outputs, a server whose text aiq cannot match — is
//! read from the server's text as before (clickhouse_rows.rs).
//!
//! The values are the ones the text answer gives
//! ([`super::text::Kind::decode`]): what the binary form leaves
//! open is learned from the server's own text once, when aiq connects
//! ([`Printing`]): whether decimals keep their trailing zeros (`1.50` on
//! 18.16, `1.5` on releases that trim them), how the zero date prints
//! (`0000-00-00` on 18.16), and whether times are in UTC (a time in
//! another zone stays text). Where 18.16's own text is wrong — dates after
//! 2105 print as 1970-01-01 there — these are right.
//!
//! A block is held whole until its last column has come (as
//! `clickhouse-client` holds it): 65,536 rows at most with the server's
//! default block size.

use std::io;
use std::ops::Range;
use std::sync::Arc;

use chrono::NaiveDate;

use super::rows::{Answer, Stop};
use super::text::is_exception_line;
use crate::source::{RowSink, Value};

/// How the server prints what the binary form leaves open, read from its
/// answer to [`Printing::PROBE`] when aiq connects. `None` where its text
/// is not of a form aiq writes, so such columns stay text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Printing {
    /// Decimals keep their trailing zeros (`-1.50`: true) or not (`-1.5`).
    decimals: Option<bool>,
    /// Dates print as `YYYY-MM-DD`; the zero date as `0000-00-00` (true)
    /// or as `1970-01-01`.
    dates: Option<bool>,
    /// Times print as `YYYY-MM-DD hh:mm:ss`; the zero time as
    /// `0000-00-00 00:00:00` (true) or as 1970's.
    times: Option<bool>,
    /// The server's time zone is UTC, so a `DateTime` without a zone of
    /// its own prints in UTC.
    utc: bool,
}

impl Printing {
    /// The expressions whose text [`Printing::read`] reads, in order.
    pub(crate) const PROBE: &'static str = "timezone(), toDecimal32(-1.5, 2), toDate(366), \
         toDate(0), toDateTime(31626061, 'UTC'), toDateTime(0, 'UTC')";

    /// What the server's text of [`Printing::PROBE`] tells.
    pub(crate) fn read(texts: &[Option<String>]) -> Printing {
        let text = |i: usize| texts.get(i).and_then(|t| t.as_deref()).unwrap_or("");
        let zero = |i: usize, zeros: &str, epoch: &str| match text(i) {
            t if t == zeros => Some(true),
            t if t == epoch => Some(false),
            _ => None,
        };
        Printing {
            utc: is_utc(text(0)),
            decimals: match text(1) {
                "-1.50" => Some(true),
                "-1.5" => Some(false),
                _ => None,
            },
            dates: (text(2) == "1971-01-02")
                .then(|| zero(3, "0000-00-00", "1970-01-01"))
                .flatten(),
            times: (text(4) == "1971-01-02 01:01:01")
                .then(|| zero(5, "0000-00-00 00:00:00", "1970-01-01 00:00:00"))
                .flatten(),
        }
    }
}

/// Names of UTC, as a server or a column type may give its zone.
fn is_utc(zone: &str) -> bool {
    let zone = zone.strip_prefix("Etc/").unwrap_or(zone);
    matches!(
        zone,
        "UTC" | "UCT" | "Universal" | "Zulu" | "GMT" | "GMT0" | "GMT+0" | "GMT-0" | "Greenwich"
    )
}

/// How one column's values are laid out and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Integers of 1, 2, 4 or 8 bytes.
    Int {
        bytes: usize,
        signed: bool,
    },
    F32,
    F64,
    /// A decimal of 4, 8 or 16 bytes, scaled by 10^scale.
    Decimal {
        bytes: usize,
        scale: u32,
    },
    /// `String`: a length, then the bytes.
    Text,
    /// `FixedString(N)`.
    Fixed(usize),
    /// Days since 1970-01-01 in two bytes.
    Date,
    /// Seconds since 1970 in four bytes, shown in UTC.
    DateTime,
}

impl Kind {
    /// The kind for a type name as the server spells it (`Nullable`
    /// already taken off), if this module reads it with `printing`.
    fn of(type_name: &str, printing: &Printing) -> Option<Kind> {
        let kind = Kind::layout(type_name)?;
        let printed = match kind {
            Kind::Date => printing.dates.is_some(),
            Kind::DateTime => {
                printing.times.is_some()
                    && match type_name.strip_prefix("DateTime(") {
                        Some(zone) => zone
                            .trim_end_matches(')')
                            .trim()
                            .strip_prefix('\'')
                            .and_then(|z| z.strip_suffix('\''))
                            .is_some_and(is_utc),
                        None => printing.utc,
                    }
            }
            Kind::Decimal { .. } => printing.decimals.is_some(),
            _ => true,
        };
        printed.then_some(kind)
    }

    /// How a type's values are laid out, whatever they print as: a
    /// block may name a type otherwise than the description did
    /// (`DateTime` for `DateTime('UTC')` on 18.16) with the same layout.
    fn layout(type_name: &str) -> Option<Kind> {
        let int = |bytes, signed| Some(Kind::Int { bytes, signed });
        let (base, args) = match type_name.split_once('(') {
            Some((base, rest)) => (base, Some(rest.strip_suffix(')')?)),
            None => (type_name, None),
        };
        let number = |s: &str| s.trim().parse::<u32>().ok();
        match (base, args) {
            ("Int8", None) => int(1, true),
            ("Int16", None) => int(2, true),
            ("Int32", None) => int(4, true),
            ("Int64", None) => int(8, true),
            ("UInt8", None) => int(1, false),
            ("UInt16", None) => int(2, false),
            ("UInt32", None) => int(4, false),
            ("UInt64", None) => int(8, false),
            ("Float32", None) => Some(Kind::F32),
            ("Float64", None) => Some(Kind::F64),
            ("String", None) => Some(Kind::Text),
            ("FixedString", Some(n)) => Some(Kind::Fixed(number(n)? as usize)),
            ("Date", None) => Some(Kind::Date),
            ("DateTime", _) => Some(Kind::DateTime),
            ("Decimal", Some(args)) => {
                let (precision, scale) = args.split_once(',')?;
                decimal(number(precision)?, number(scale)?)
            }
            ("Decimal32", Some(s)) => decimal(9, number(s)?),
            ("Decimal64", Some(s)) => decimal(18, number(s)?),
            ("Decimal128", Some(s)) => decimal(38, number(s)?),
            _ => None,
        }
    }

    /// Bytes per value, for the kinds of fixed width.
    fn width(self) -> Option<usize> {
        match self {
            Kind::Int { bytes, .. } | Kind::Decimal { bytes, .. } => Some(bytes),
            Kind::F32 | Kind::DateTime => Some(4),
            Kind::F64 => Some(8),
            Kind::Fixed(n) => Some(n),
            Kind::Date => Some(2),
            Kind::Text => None,
        }
    }
}

fn decimal(precision: u32, scale: u32) -> Option<Kind> {
    let bytes = match precision {
        1..=9 => 4,
        10..=18 => 8,
        19..=38 => 16,
        _ => return None,
    };
    (scale <= precision).then_some(Kind::Decimal { bytes, scale })
}

/// One column of a result as [`Layout`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ColumnLayout {
    name: String,
    type_name: String,
    kind: Kind,
    nullable: bool,
}

/// The columns of a result whose every column this module reads, and how
/// the server prints what the binary form leaves open.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    columns: Vec<ColumnLayout>,
    printing: Printing,
}

impl Layout {
    /// The layout of a result of `columns` (name, type as the server
    /// spells it), or `None` when a column is of a type read as text.
    pub(crate) fn new(columns: &[(String, String)], printing: Printing) -> Option<Layout> {
        let columns = columns
            .iter()
            .map(|(name, type_name)| {
                let (inner, nullable) = nullable(type_name);
                Some(ColumnLayout {
                    name: name.clone(),
                    type_name: type_name.clone(),
                    kind: Kind::of(inner, &printing)?,
                    nullable,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        (!columns.is_empty()).then_some(Layout { columns, printing })
    }
}

/// The type inside `Nullable(…)`, and whether it was there.
fn nullable(type_name: &str) -> (&str, bool) {
    match type_name
        .strip_prefix("Nullable(")
        .and_then(|t| t.strip_suffix(')'))
    {
        Some(inner) => (inner, true),
        None => (type_name, false),
    }
}

impl ColumnLayout {
    /// A block's column of this name and type, laid out alike.
    fn is_sent_as(&self, name: &[u8], type_name: &[u8]) -> bool {
        let Ok(type_name) = std::str::from_utf8(type_name) else {
            return false;
        };
        let (inner, nullable) = nullable(type_name);
        name == self.name.as_bytes()
            && nullable == self.nullable
            && Kind::layout(inner) == Some(self.kind)
    }
}

/// Where one column's values are in a block.
#[derive(Debug, Clone)]
struct Part {
    /// Where its NULL map starts (one byte a row), for a nullable column.
    nulls: Option<usize>,
    values: Values,
}

#[derive(Debug, Clone)]
enum Values {
    /// Where the values of a fixed width start.
    Fixed(usize),
    /// Where each text starts and ends.
    Texts(Vec<(u32, u32)>),
}

/// The buffers of blocks already written, for the next blocks of the same
/// answer: a block of a million-row export is megabytes, and memory the
/// allocator has handed back costs the kernel a page fault and a zeroed
/// page for every 4 KB when it is taken again.
#[derive(Default)]
struct Pool {
    bytes: Vec<Vec<u8>>,
    spans: Vec<Vec<(u32, u32)>>,
}

/// Buffers kept for later blocks, of each kind.
const POOLED: usize = 4;

type SharedPool = Arc<std::sync::Mutex<Pool>>;

fn take_bytes(pool: &SharedPool, capacity: usize) -> Vec<u8> {
    let kept = pool.lock().ok().and_then(|mut p| p.bytes.pop());
    let mut buf = kept.unwrap_or_default();
    buf.clear();
    buf.reserve(capacity);
    buf
}

fn take_spans(pool: &SharedPool) -> Vec<(u32, u32)> {
    let kept = pool.lock().ok().and_then(|mut p| p.spans.pop());
    let mut spans = kept.unwrap_or_default();
    spans.clear();
    spans
}

/// One block of a `Native` answer: its bytes, and where each column's
/// values are in them.
pub struct NativeRows {
    data: Vec<u8>,
    rows: usize,
    parts: Vec<Part>,
    layout: Arc<Layout>,
    pool: SharedPool,
}

impl Clone for NativeRows {
    fn clone(&self) -> Self {
        NativeRows {
            data: self.data.clone(),
            rows: self.rows,
            parts: self.parts.clone(),
            layout: Arc::clone(&self.layout),
            pool: Arc::clone(&self.pool),
        }
    }
}

/// A block's buffers go back to its answer's pool.
impl Drop for NativeRows {
    fn drop(&mut self) {
        let Ok(mut pool) = self.pool.lock() else {
            return;
        };
        if pool.bytes.len() < POOLED {
            pool.bytes.push(std::mem::take(&mut self.data));
        }
        for part in &mut self.parts {
            if let Values::Texts(spans) = &mut part.values {
                if pool.spans.len() < POOLED {
                    pool.spans.push(std::mem::take(spans));
                }
            }
        }
    }
}

impl std::fmt::Debug for NativeRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeRows")
            .field("rows", &self.rows)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// Where a writer of delimited text (CSV, TSV) takes fields: the block
/// hands each field over as digits that need no quoting, as text, or as
/// nothing for NULL, then ends the row.
pub trait FieldWriter {
    /// Text that never needs quotes or escapes (digits, signs, dates).
    fn plain(&mut self, text: &[u8]);
    /// Any text.
    fn text(&mut self, text: &str);
    /// Between two fields.
    fn separator(&mut self);
    /// After a row's last field.
    fn end_row(&mut self) -> io::Result<()>;
}

impl NativeRows {
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn is_null(&self, column: usize, row: usize) -> bool {
        self.parts[column]
            .nulls
            .is_some_and(|at| self.data[at + row] != 0)
    }

    /// The bytes of a value of fixed width.
    fn fixed(&self, column: usize, row: usize, width: usize) -> &[u8] {
        match &self.parts[column].values {
            Values::Fixed(at) => &self.data[at + row * width..at + (row + 1) * width],
            Values::Texts(_) => &[],
        }
    }

    fn text_bytes(&self, column: usize, row: usize) -> &[u8] {
        match &self.parts[column].values {
            Values::Texts(spans) => {
                let (start, end) = spans[row];
                &self.data[start as usize..end as usize]
            }
            Values::Fixed(_) => &[],
        }
    }

    /// An integer or decimal's value, sign-extended.
    fn integer(&self, column: usize, row: usize, bytes: usize, signed: bool) -> i128 {
        let raw = self.fixed(column, row, bytes);
        let mut buf = [0u8; 16];
        buf[..bytes].copy_from_slice(raw);
        if signed && raw[bytes - 1] & 0x80 != 0 {
            buf[bytes..].fill(0xff);
        }
        i128::from_le_bytes(buf)
    }

    fn u32_at(&self, column: usize, row: usize) -> u32 {
        let raw = self.fixed(column, row, 4);
        u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])
    }

    fn days(&self, column: usize, row: usize) -> u16 {
        let raw = self.fixed(column, row, 2);
        u16::from_le_bytes([raw[0], raw[1]])
    }

    /// One field's value: what the server's text of it reads as.
    pub fn value(&self, column: usize, row: usize) -> Value {
        if self.is_null(column, row) {
            return Value::Null;
        }
        let layout = &self.layout.columns[column];
        let printing = &self.layout.printing;
        match layout.kind {
            Kind::Int { bytes, signed } => {
                let i = self.integer(column, row, bytes, signed);
                match i64::try_from(i) {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::BigInt(i),
                }
            }
            Kind::F32 => Value::Float(f32_as_printed(f32::from_le_bytes(
                self.u32_at(column, row).to_le_bytes(),
            ))),
            Kind::F64 => {
                let raw = self.fixed(column, row, 8);
                Value::Float(f64::from_le_bytes(raw.try_into().unwrap_or([0; 8])))
            }
            Kind::Decimal { bytes, scale } => {
                let mut text = Vec::new();
                let i = self.integer(column, row, bytes, true);
                push_decimal(i, scale, printing.decimals == Some(true), &mut text);
                Value::Decimal(String::from_utf8(text).unwrap_or_default())
            }
            Kind::Text => {
                let bytes = self.text_bytes(column, row);
                match std::str::from_utf8(bytes) {
                    Ok(t) => Value::Text(t.to_string()),
                    Err(_) => Value::Blob(bytes.to_vec()),
                }
            }
            Kind::Fixed(n) => {
                let bytes = self.fixed(column, row, n);
                let end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
                match std::str::from_utf8(&bytes[..end]) {
                    Ok(t) if !t.contains('\0') => Value::Text(t.to_string()),
                    _ => Value::Blob(bytes.to_vec()),
                }
            }
            Kind::Date => {
                let days = self.days(column, row);
                if days == 0 && printing.dates == Some(true) {
                    return Value::Other("0000-00-00".into());
                }
                Value::Date(epoch() + chrono::Days::new(days.into()))
            }
            Kind::DateTime => {
                let secs = self.u32_at(column, row);
                if secs == 0 && printing.times == Some(true) {
                    return Value::Other("0000-00-00 00:00:00".into());
                }
                Value::Timestamp(
                    chrono::DateTime::from_timestamp(secs.into(), 0)
                        .map(|t| t.naive_utc())
                        .unwrap_or_default(),
                )
            }
        }
    }

    /// Row `row` as values.
    pub fn row(&self, row: usize) -> Vec<Value> {
        (0..self.parts.len()).map(|c| self.value(c, row)).collect()
    }

    /// Each row as values, in order.
    pub fn values(&self) -> impl Iterator<Item = Vec<Value>> + '_ {
        (0..self.rows).map(|r| self.row(r))
    }

    /// Writes `rows` field by field into `out`: each field's text is what
    /// [`Value::write_text`] prints for its [`NativeRows::value`], NULL
    /// as nothing.
    pub fn write_rows<W: FieldWriter>(&self, rows: Range<usize>, out: &mut W) -> io::Result<()> {
        let printing = self.layout.printing;
        let mut digits = Vec::with_capacity(48);
        let mut scratch = String::new();
        let mut ints = itoa::Buffer::new();
        // Results are often in date order: the last day's text is kept.
        let mut day = Day::default();
        for row in rows {
            for (column, layout) in self.layout.columns.iter().enumerate() {
                if column > 0 {
                    out.separator();
                }
                if self.is_null(column, row) {
                    continue;
                }
                digits.clear();
                match layout.kind {
                    Kind::Int { bytes, signed } => {
                        let i = self.integer(column, row, bytes, signed);
                        // Narrow integers print faster than 128-bit ones.
                        let text = match (i64::try_from(i), u64::try_from(i)) {
                            (Ok(i), _) => ints.format(i),
                            (_, Ok(u)) => ints.format(u),
                            _ => ints.format(i),
                        };
                        out.plain(text.as_bytes());
                    }
                    Kind::Decimal { bytes, scale } => {
                        let i = self.integer(column, row, bytes, true);
                        push_decimal(i, scale, printing.decimals == Some(true), &mut digits);
                        out.plain(&digits);
                    }
                    Kind::Text => match std::str::from_utf8(self.text_bytes(column, row)) {
                        Ok(text) => out.text(text),
                        Err(_) => self.write_value(column, row, &mut scratch, out),
                    },
                    Kind::Date => {
                        let days = self.days(column, row);
                        if days == 0 && printing.dates == Some(true) {
                            out.plain(b"0000-00-00");
                        } else {
                            out.plain(day.text(days.into()));
                        }
                    }
                    Kind::DateTime => {
                        let secs = self.u32_at(column, row);
                        if secs == 0 && printing.times == Some(true) {
                            out.plain(b"0000-00-00 00:00:00");
                        } else {
                            digits.extend_from_slice(day.text(secs / 86_400));
                            digits.push(b' ');
                            push_time(secs % 86_400, &mut digits);
                            out.plain(&digits);
                        }
                    }
                    Kind::F32 | Kind::F64 | Kind::Fixed(_) => {
                        self.write_value(column, row, &mut scratch, out)
                    }
                }
            }
            out.end_row()?;
        }
        Ok(())
    }

    /// A field written as its value prints.
    fn write_value<W: FieldWriter>(&self, column: usize, row: usize, s: &mut String, out: &mut W) {
        s.clear();
        self.value(column, row).write_text(s);
        out.text(s);
    }
}

/// The text of the last day written.
#[derive(Default)]
struct Day {
    days: Option<u32>,
    text: Vec<u8>,
}

impl Day {
    /// `YYYY-MM-DD` of `days` since 1970-01-01.
    fn text(&mut self, days: u32) -> &[u8] {
        if self.days != Some(days) {
            self.text.clear();
            push_date(days, &mut self.text);
            self.days = Some(days);
        }
        &self.text
    }
}

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()
}

/// A `Float32` as its value reads from the server's text: the shortest
/// decimal that is the same `f32`, read as an `f64` (0.1, not
/// 0.10000000149011612).
fn f32_as_printed(f: f32) -> f64 {
    if !f.is_finite() {
        return f as f64;
    }
    f.to_string().parse().unwrap_or(f as f64)
}

/// A decimal's text: `value` scaled by 10^`scale`, with its trailing
/// zeros (`1.50`) or without (`1.5`, and `1` for 1.00).
fn push_decimal(value: i128, scale: u32, zeros: bool, out: &mut Vec<u8>) {
    if value < 0 {
        out.push(b'-');
    }
    let mut buffer = itoa::Buffer::new();
    let magnitude = value.unsigned_abs();
    let digits = match u64::try_from(magnitude) {
        Ok(small) => buffer.format(small),
        Err(_) => buffer.format(magnitude),
    }
    .as_bytes();
    let scale = scale as usize;
    // The digits before the point (at least one), then the fraction, of
    // which `lead` zeros come before the digits.
    let (whole, fraction, lead) = match digits.len().checked_sub(scale) {
        Some(0) => (&b"0"[..], digits, 0),
        Some(n) => (&digits[..n], &digits[n..], 0),
        None => (&b"0"[..], digits, scale - digits.len()),
    };
    out.extend_from_slice(whole);
    let kept = if zeros {
        fraction.len()
    } else {
        fraction
            .iter()
            .rposition(|d| *d != b'0')
            .map_or(0, |i| i + 1)
    };
    if kept > 0 {
        out.push(b'.');
        out.extend(std::iter::repeat_n(b'0', lead));
        out.extend_from_slice(&fraction[..kept]);
    }
}

/// `YYYY-MM-DD` of `days` since 1970-01-01 (the civil calendar, as
/// chrono counts it).
fn push_date(days: u32, out: &mut Vec<u8>) {
    let (year, month, day) = crate::source::value::civil(days.into());
    push_two(out, (year / 100) as u32);
    push_two(out, (year % 100) as u32);
    out.push(b'-');
    push_two(out, month);
    out.push(b'-');
    push_two(out, day);
}

/// `hh:mm:ss` of `secs` into a day.
fn push_time(secs: u32, out: &mut Vec<u8>) {
    push_two(out, secs / 3_600);
    out.push(b':');
    push_two(out, secs / 60 % 60);
    out.push(b':');
    push_two(out, secs % 60);
}

fn push_two(out: &mut Vec<u8>, n: u32) {
    out.push(b'0' + (n / 10 % 10) as u8);
    out.push(b'0' + (n % 10) as u8);
}

/// Why the answer stopped being blocks of the expected columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotABlock(pub(crate) String);

/// Reads a `Native` answer as it arrives, in pieces of any size, into
/// whole blocks ([`Reader::push`], then [`Reader::next_block`] until it
/// has none). Each block's columns must be the layout's, by name and
/// type; what does not read as one ends the blocks ([`NotABlock`]) and
/// is kept, up to [`Reader::KEPT`] bytes, for the error it holds.
pub(crate) struct Reader {
    layout: Arc<Layout>,
    buf: Vec<u8>,
    /// How far into `buf` the current block has been read.
    at: usize,
    /// The current block's rows, once its head is read.
    rows: Option<usize>,
    parts: Vec<Part>,
    /// The current column's NULL map, once read.
    nulls: Option<usize>,
    /// The current column's head (name and type) is read.
    headed: bool,
    /// The texts of the current column read so far.
    texts: Vec<(u32, u32)>,
    /// The size of the last block, to make room for the next at once.
    last_size: usize,
    pool: SharedPool,
}

impl Reader {
    /// What is kept of an answer past its last block.
    pub(crate) const KEPT: usize = 64 * 1024;

    pub(crate) fn new(layout: Arc<Layout>) -> Reader {
        Reader {
            layout,
            buf: Vec::new(),
            at: 0,
            rows: None,
            parts: Vec::new(),
            nulls: None,
            headed: false,
            texts: Vec::new(),
            last_size: 0,
            pool: SharedPool::default(),
        }
    }

    /// More of the answer.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.buf.capacity() < self.last_size {
            self.buf.reserve(self.last_size - self.buf.len());
        }
        self.buf.extend_from_slice(bytes);
    }

    /// What came after the last whole block (at the end of the answer: a
    /// block cut off, or the server's error).
    pub(crate) fn rest(&self) -> &[u8] {
        &self.buf
    }

    /// Nothing of a block is waiting.
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The next whole block, `None` until more arrives, or why the answer
    /// is not (or no longer) blocks of the layout's columns.
    pub(crate) fn next_block(&mut self) -> Result<Option<NativeRows>, NotABlock> {
        let columns = &self.layout.columns;
        let rows = match self.rows {
            Some(rows) => rows,
            None => {
                let mut at = self.at;
                let Some(count) = varint(&self.buf, &mut at)? else {
                    return Ok(None);
                };
                let Some(rows) = varint(&self.buf, &mut at)? else {
                    return Ok(None);
                };
                if count != columns.len() as u64 {
                    return Err(NotABlock(format!(
                        "a block of {count} columns for {}",
                        columns.len()
                    )));
                }
                let rows = usize::try_from(rows)
                    .ok()
                    .filter(|r| *r <= u32::MAX as usize)
                    .ok_or_else(|| NotABlock(format!("a block of {rows} rows")))?;
                self.at = at;
                self.rows = Some(rows);
                rows
            }
        };
        while self.parts.len() < columns.len() {
            let column = &columns[self.parts.len()];
            if !self.headed {
                let mut at = self.at;
                let Some(name) = bytes(&self.buf, &mut at)? else {
                    return Ok(None);
                };
                let Some(type_name) = bytes(&self.buf, &mut at)? else {
                    return Ok(None);
                };
                if !column.is_sent_as(name, type_name) {
                    return Err(NotABlock(format!(
                        "a column {:?} of type {:?} where {:?} of type {:?} was described",
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(type_name),
                        column.name,
                        column.type_name
                    )));
                }
                self.at = at;
                self.headed = true;
            }
            if column.nullable && self.nulls.is_none() {
                if self.buf.len() - self.at < rows {
                    return Ok(None);
                }
                self.nulls = Some(self.at);
                self.at += rows;
            }
            let values = match column.kind.width() {
                Some(width) => {
                    let size = rows
                        .checked_mul(width)
                        .ok_or_else(|| NotABlock("a block too large".into()))?;
                    if self.buf.len() - self.at < size {
                        return Ok(None);
                    }
                    let values = Values::Fixed(self.at);
                    self.at += size;
                    values
                }
                None => {
                    while self.texts.len() < rows {
                        let mut at = self.at;
                        let Some(text) = bytes(&self.buf, &mut at)? else {
                            return Ok(None);
                        };
                        let start = at - text.len();
                        let span = u32::try_from(start)
                            .ok()
                            .zip(u32::try_from(at).ok())
                            .ok_or_else(|| NotABlock("a block larger than 4 GB".into()))?;
                        self.texts.push(span);
                        self.at = at;
                    }
                    let next = take_spans(&self.pool);
                    Values::Texts(std::mem::replace(&mut self.texts, next))
                }
            };
            self.parts.push(Part {
                nulls: self.nulls.take(),
                values,
            });
            self.headed = false;
        }
        // A whole block: its bytes go with it, the rest stays.
        let size = self.at;
        let mut rest = take_bytes(&self.pool, size.max(self.buf.len() - size));
        rest.extend_from_slice(&self.buf[size..]);
        let mut data = std::mem::replace(&mut self.buf, rest);
        data.truncate(size);
        self.last_size = size;
        self.at = 0;
        self.rows = None;
        Ok(Some(NativeRows {
            data,
            rows,
            parts: std::mem::take(&mut self.parts),
            layout: Arc::clone(&self.layout),
            pool: Arc::clone(&self.pool),
        }))
    }
}

/// An unsigned LEB128 number at `*at`, moving past it; `None` when the
/// bytes end first.
fn varint(buf: &[u8], at: &mut usize) -> Result<Option<u64>, NotABlock> {
    let mut value = 0u64;
    for (i, byte) in buf[*at..].iter().enumerate() {
        if i == 10 {
            return Err(NotABlock("a number longer than ten bytes".into()));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *at += i + 1;
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// A length and that many bytes at `*at`, moving past them; `None` when
/// the bytes end first.
fn bytes<'a>(buf: &'a [u8], at: &mut usize) -> Result<Option<&'a [u8]>, NotABlock> {
    let mut end = *at;
    let Some(len) = varint(buf, &mut end)? else {
        return Ok(None);
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= u32::MAX as usize)
        .ok_or_else(|| NotABlock(format!("a text of {len} bytes")))?;
    if buf.len() - end < len {
        return Ok(None);
    }
    *at = end + len;
    Ok(Some(&buf[end..end + len]))
}

/// A `Native` answer read block by block for the sink; the columns go
/// first, as described, whether or not any block comes (an empty result
/// sends none).
pub(crate) struct NativeAnswer {
    reader: Reader,
    columns: Option<Vec<crate::source::Column>>,
    rows: u64,
    /// Why the answer stopped being blocks: what follows is kept for the
    /// error it holds.
    broken: Option<String>,
}

impl NativeAnswer {
    pub(crate) fn new(layout: Layout) -> NativeAnswer {
        let columns = layout
            .columns
            .iter()
            .map(|c| crate::source::Column::new(c.name.clone(), c.type_name.clone()))
            .collect();
        NativeAnswer {
            reader: Reader::new(Arc::new(layout)),
            columns: Some(columns),
            rows: 0,
            broken: None,
        }
    }

    fn send_columns(&mut self, sink: &mut dyn RowSink) -> Result<(), Stop> {
        match self.columns.take() {
            Some(columns) => sink.columns(&columns).map_err(Stop::Io),
            None => Ok(()),
        }
    }

    /// The error the rest of the answer holds: the server's exception
    /// (`Code: …`, `__exception__`), or why it could not be read.
    fn failure(&self) -> Stop {
        let rest = self.reader.rest();
        let from = [&b"Code: "[..], b"__exception__"]
            .iter()
            .filter_map(|marker| memchr::memmem::find(rest, marker))
            .min();
        match from {
            Some(at) if is_exception_line(&rest[at..]) => {
                Stop::Exception(String::from_utf8_lossy(&rest[at..]).into_owned())
            }
            _ => Stop::Unreadable(format!(
                "the server's answer could not be read: {}",
                self.broken
                    .as_deref()
                    .unwrap_or("it broke off inside a block")
            )),
        }
    }
}

impl Answer for NativeAnswer {
    fn format(&self) -> &'static str {
        "Native"
    }

    fn take(&mut self, piece: &[u8], sink: &mut dyn RowSink) -> Result<(), Stop> {
        self.send_columns(sink)?;
        self.reader.push(piece);
        if self.broken.is_some() {
            return match self.reader.rest().len() > Reader::KEPT {
                true => Err(self.failure()),
                false => Ok(()),
            };
        }
        loop {
            match self.reader.next_block() {
                Ok(Some(block)) => {
                    self.rows += block.len() as u64;
                    if !block.is_empty() {
                        sink.native_rows(block).map_err(Stop::Io)?;
                    }
                }
                Ok(None) => return Ok(()),
                Err(NotABlock(why)) => {
                    self.broken = Some(why);
                    return Ok(());
                }
            }
        }
    }

    fn end(mut self, sink: &mut dyn RowSink) -> Result<u64, Stop> {
        self.send_columns(sink)?;
        if !self.reader.is_empty() {
            return Err(self.failure());
        }
        Ok(self.rows)
    }
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
