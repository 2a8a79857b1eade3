use super::*;
use crate::source::server::Collect;

/// 18.16's text of [`Printing::PROBE`].
pub(crate) fn printing_18_16() -> Printing {
    Printing::read(&texts(&[
        "Etc/UTC",
        "-1.50",
        "1971-01-02",
        "0000-00-00",
        "1971-01-02 01:01:01",
        "0000-00-00 00:00:00",
    ]))
}

fn texts(t: &[&str]) -> Vec<Option<String>> {
    t.iter().map(|t| Some(t.to_string())).collect()
}

/// A column of a block as the server sends it: its name, type and data.
pub(crate) struct Col {
    name: &'static str,
    type_name: &'static str,
    data: Vec<u8>,
}

pub(crate) fn col(name: &'static str, type_name: &'static str, data: Vec<u8>) -> Col {
    Col {
        name,
        type_name,
        data,
    }
}

fn push_varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn push_bytes(b: &[u8], out: &mut Vec<u8>) {
    push_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// A block of `rows` rows of `columns`.
pub(crate) fn block(rows: usize, columns: &[Col]) -> Vec<u8> {
    let mut out = Vec::new();
    push_varint(columns.len() as u64, &mut out);
    push_varint(rows as u64, &mut out);
    for c in columns {
        push_bytes(c.name.as_bytes(), &mut out);
        push_bytes(c.type_name.as_bytes(), &mut out);
        out.extend_from_slice(&c.data);
    }
    out
}

/// Values of `width` bytes, little-endian.
pub(crate) fn ints(values: &[i128], width: usize) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.to_le_bytes()[..width].to_vec())
        .collect()
}

/// `String` values.
pub(crate) fn strings(values: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        push_bytes(v, &mut out);
    }
    out
}

/// A NULL map, then the values.
pub(crate) fn nullable(nulls: &[bool], values: Vec<u8>) -> Vec<u8> {
    let mut out: Vec<u8> = nulls.iter().map(|n| *n as u8).collect();
    out.extend(values);
    out
}

/// The layout of `columns` as a server with `printing` describes them.
pub(crate) fn layout(columns: &[Col], printing: Printing) -> Layout {
    let described: Vec<(String, String)> = columns
        .iter()
        .map(|c| (c.name.to_string(), c.type_name.to_string()))
        .collect();
    Layout::new(&described, printing).expect("every column is read in binary")
}

/// The blocks `answer` reads to, fed in pieces of `piece` bytes.
fn read(layout: Layout, answer: &[u8], piece: usize) -> Vec<NativeRows> {
    let mut reader = Reader::new(Arc::new(layout));
    let mut blocks = Vec::new();
    for chunk in answer.chunks(piece) {
        reader.push(chunk);
        while let Some(block) = reader.next_block().unwrap() {
            blocks.push(block);
        }
    }
    assert!(reader.is_empty());
    blocks
}

/// Every kind, with the edges of each.
pub(crate) fn every_kind() -> (usize, Vec<Col>) {
    let big = i128::from(u64::MAX);
    let columns = vec![
        col("i8", "Int8", ints(&[-128, 127, 0, -1], 1)),
        col("i16", "Int16", ints(&[-32768, 32767, 0, -1], 2)),
        col(
            "i32",
            "Int32",
            ints(&[i32::MIN.into(), i32::MAX.into(), 0, -1], 4),
        ),
        col(
            "i64",
            "Int64",
            ints(&[i64::MIN.into(), i64::MAX.into(), 0, -1], 8),
        ),
        col("u8", "UInt8", ints(&[255, 0, 1, 7], 1)),
        col("u16", "UInt16", ints(&[65535, 0, 1, 7], 2)),
        col("u32", "UInt32", ints(&[u32::MAX.into(), 0, 1, 7], 4)),
        col("u64", "UInt64", ints(&[big, 0, i64::MAX.into(), 7], 8)),
        col(
            "f32",
            "Float32",
            [0.1f32, f32::NAN, f32::NEG_INFINITY, 1e20]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect(),
        ),
        col(
            "f64",
            "Float64",
            [0.1f64, f64::INFINITY, -0.0, 1e300]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect(),
        ),
        col("d32", "Decimal(9, 2)", ints(&[-150, 5, 0, 999_999_999], 4)),
        col(
            "d64",
            "Decimal(18, 4)",
            ints(&[-1, 10_000, 123_456_789, 0], 8),
        ),
        col(
            "d128",
            "Decimal(38, 10)",
            ints(
                &[
                    123_456_789_012_345_678_901_234_567_890_123_456_789,
                    -1,
                    i128::from(i64::MAX) * 1000,
                    0,
                ],
                16,
            ),
        ),
        col("d0", "Decimal(10, 0)", ints(&[-42, 0, 1, 10], 8)),
        col(
            "s",
            "String",
            strings(&[b"plain", b"a,\"b\"\r\nc\td\\e", b"\xff\xfe", b""]),
        ),
        col(
            "ns",
            "Nullable(String)",
            nullable(
                &[true, false, false, true],
                strings(&[b"hidden", b"", "é".as_bytes(), b"x"]),
            ),
        ),
        col("fs", "FixedString(3)", b"ab\0abcx\0y\0\0\0".to_vec()),
        col("d", "Date", ints(&[0, 1, 19_782, 65_535], 2)),
        col(
            "nd",
            "Nullable(Date)",
            nullable(&[false, true, false, false], ints(&[17, 0, 0, 366], 2)),
        ),
        col(
            "t",
            "DateTime",
            ints(&[0, 1, 1_709_211_909, u32::MAX.into()], 4),
        ),
        col(
            "tz",
            "DateTime('UTC')",
            ints(&[86_399, 86_400, 31_626_061, 951_782_400], 4),
        ),
    ];
    (4, columns)
}

#[test]
fn printing_is_read_from_the_servers_text() {
    let old = printing_18_16();
    assert_eq!(
        old,
        Printing {
            decimals: Some(true),
            dates: Some(true),
            times: Some(true),
            utc: true
        }
    );
    // A release that trims decimals and prints 1970 for the zero date.
    let new = Printing::read(&texts(&[
        "UTC",
        "-1.5",
        "1971-01-02",
        "1970-01-01",
        "1971-01-02 01:01:01",
        "1970-01-01 00:00:00",
    ]));
    assert_eq!(
        new,
        Printing {
            decimals: Some(false),
            dates: Some(false),
            times: Some(false),
            utc: true
        }
    );
    // Times in another form, a zone not UTC, an answer with less in it.
    let other = Printing::read(&texts(&[
        "Europe/Berlin",
        "-1.50",
        "1971-01-02",
        "0000-00-00",
        "1971-01-02T01:01:01Z",
        "1970-01-01T00:00:00Z",
    ]));
    assert_eq!(other.times, None);
    assert!(!other.utc);
    assert_eq!(Printing::read(&[]), Printing::default());
}

#[test]
fn only_the_kinds_read_here_take_the_binary_form() {
    let p = printing_18_16();
    let one = |t: &str| Layout::new(&[("c".to_string(), t.to_string())], p);
    for t in [
        "UInt64",
        "Nullable(Int8)",
        "Float32",
        "Decimal(38, 10)",
        "Decimal64(3)",
        "String",
        "FixedString(16)",
        "Date",
        "DateTime",
        "DateTime('UTC')",
        "DateTime('Etc/UTC')",
        "Nullable(DateTime('UTC'))",
    ] {
        assert!(one(t).is_some(), "{t}");
    }
    for t in [
        "LowCardinality(String)",
        "UUID",
        "Enum8('a' = 1)",
        "Array(UInt8)",
        "Tuple(Int32, String)",
        "Nullable(Nothing)",
        "Int128",
        "Decimal(76, 2)",
        "DateTime('Asia/Tokyo')",
        "DateTime64(3)",
        "Date32",
        "Bool",
        "Nullable(LowCardinality(String))",
    ] {
        assert!(one(t).is_none(), "{t}");
    }
    // A time without a zone of its own is in the server's.
    let berlin = Printing { utc: false, ..p };
    assert!(Layout::new(&[("c".into(), "DateTime".into())], berlin).is_none());
    assert!(Layout::new(&[("c".into(), "DateTime('UTC')".into())], berlin).is_some());
    // A server whose decimals or dates print otherwise keeps them text.
    let odd = Printing {
        decimals: None,
        dates: None,
        ..p
    };
    assert!(Layout::new(&[("c".into(), "Decimal(9, 2)".into())], odd).is_none());
    assert!(Layout::new(&[("c".into(), "Date".into())], odd).is_none());
    assert!(Layout::new(&[], p).is_none());
}

#[test]
fn values_are_what_the_servers_text_reads_as() {
    let (rows, columns) = every_kind();
    let answer = block(rows, &columns);
    let blocks = read(layout(&columns, printing_18_16()), &answer, answer.len());
    assert_eq!(blocks.len(), 1);
    let b = &blocks[0];
    let column = |name: &str| -> Vec<String> {
        let c = columns.iter().position(|c| c.name == name).unwrap();
        (0..rows)
            .map(|r| match b.value(c, r) {
                Value::Null => "NULL".into(),
                v => format!("{v:?}"),
            })
            .collect()
    };
    assert_eq!(
        column("i64"),
        [
            "Int(-9223372036854775808)",
            "Int(9223372036854775807)",
            "Int(0)",
            "Int(-1)"
        ]
    );
    assert_eq!(
        column("u64"),
        [
            "BigInt(18446744073709551615)",
            "Int(0)",
            "Int(9223372036854775807)",
            "Int(7)"
        ]
    );
    assert_eq!(
        column("f32"),
        ["Float(0.1)", "Float(NaN)", "Float(-inf)", "Float(1e20)"]
    );
    assert_eq!(
        column("d32"),
        [
            "Decimal(\"-1.50\")",
            "Decimal(\"0.05\")",
            "Decimal(\"0.00\")",
            "Decimal(\"9999999.99\")"
        ]
    );
    assert_eq!(
        column("d128"),
        [
            "Decimal(\"12345678901234567890123456789.0123456789\")",
            "Decimal(\"-0.0000000001\")",
            "Decimal(\"922337203685.4775807000\")",
            "Decimal(\"0.0000000000\")"
        ]
    );
    assert_eq!(
        column("d0"),
        [
            "Decimal(\"-42\")",
            "Decimal(\"0\")",
            "Decimal(\"1\")",
            "Decimal(\"10\")"
        ]
    );
    assert_eq!(
        column("s"),
        [
            "Text(\"plain\")",
            "Text(\"a,\\\"b\\\"\\r\\nc\\td\\\\e\")",
            "Blob([255, 254])",
            "Text(\"\")"
        ]
    );
    assert_eq!(column("ns"), ["NULL", "Text(\"\")", "Text(\"é\")", "NULL"]);
    assert_eq!(
        column("fs"),
        [
            "Text(\"ab\")",
            "Text(\"abc\")",
            "Blob([120, 0, 121])",
            "Text(\"\")"
        ]
    );
    assert_eq!(
        column("d"),
        [
            "Other(\"0000-00-00\")",
            "Date(1970-01-02)",
            "Date(2024-02-29)",
            "Date(2149-06-06)"
        ]
    );
    assert_eq!(
        column("nd"),
        [
            "Date(1970-01-18)",
            "NULL",
            "Other(\"0000-00-00\")",
            "Date(1971-01-02)"
        ]
    );
    assert_eq!(
        column("t"),
        [
            "Other(\"0000-00-00 00:00:00\")",
            "Timestamp(1970-01-01T00:00:01)",
            "Timestamp(2024-02-29T13:05:09)",
            "Timestamp(2106-02-07T06:28:15)"
        ]
    );
    assert_eq!(
        column("tz"),
        [
            "Timestamp(1970-01-01T23:59:59)",
            "Timestamp(1970-01-02T00:00:00)",
            "Timestamp(1971-01-02T01:01:01)",
            "Timestamp(2000-02-29T00:00:00)"
        ]
    );
    // On a release that prints the zero date as 1970's and trims decimals.
    let new = Printing {
        decimals: Some(false),
        dates: Some(false),
        times: Some(false),
        utc: true,
    };
    let b = &read(layout(&columns, new), &answer, 7)[0];
    let at = |name: &str, row: usize| {
        let c = columns.iter().position(|c| c.name == name).unwrap();
        b.value(c, row)
    };
    assert_eq!(at("d", 0), Value::Date(epoch()));
    assert_eq!(at("t", 0), Value::Timestamp(epoch().into()));
    assert_eq!(at("d32", 0), Value::Decimal("-1.5".into()));
    assert_eq!(at("d32", 2), Value::Decimal("0".into()));
    assert_eq!(at("d64", 1), Value::Decimal("1".into()));
    assert_eq!(at("d128", 1), Value::Decimal("-0.0000000001".into()));
}

/// A writer that keeps each field's text as it was handed over.
#[derive(Default)]
struct Fields {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    field: String,
}

impl FieldWriter for Fields {
    fn plain(&mut self, text: &[u8]) {
        self.field.push_str(std::str::from_utf8(text).unwrap());
    }
    fn text(&mut self, text: &str) {
        self.field.push_str(text);
    }
    fn separator(&mut self) {
        self.row.push(std::mem::take(&mut self.field));
    }
    fn end_row(&mut self) -> io::Result<()> {
        self.separator();
        self.rows.push(std::mem::take(&mut self.row));
        Ok(())
    }
}

#[test]
fn each_field_is_written_as_its_value_prints() {
    let (rows, columns) = every_kind();
    let answer = block(rows, &columns);
    for printing in [
        printing_18_16(),
        Printing {
            decimals: Some(false),
            dates: Some(false),
            times: Some(false),
            utc: true,
        },
    ] {
        let b = &read(layout(&columns, printing), &answer, 5)[0];
        let mut fields = Fields::default();
        b.write_rows(0..rows, &mut fields).unwrap();
        let printed: Vec<Vec<String>> = b
            .values()
            .map(|r| r.iter().map(|v| v.to_text()).collect())
            .collect();
        assert_eq!(fields.rows, printed);
        // A part of the rows.
        let mut some = Fields::default();
        b.write_rows(1..3, &mut some).unwrap();
        assert_eq!(some.rows, printed[1..3]);
    }
}

#[test]
fn blocks_read_alike_in_pieces_of_any_size() {
    let (rows, columns) = every_kind();
    let first = block(rows, &columns);
    // A second block, of other rows: each column's values reversed in order
    // would need re-encoding; two rows of the first block's kinds do.
    let (_, mut second_columns) = every_kind();
    for c in &mut second_columns {
        c.data = Vec::new();
    }
    let empty = block(0, &second_columns);
    let mut answer = first.clone();
    answer.extend_from_slice(&empty);
    answer.extend_from_slice(&first);
    let whole = read(layout(&columns, printing_18_16()), &answer, answer.len());
    let values = |blocks: &[NativeRows]| -> Vec<Vec<Value>> {
        blocks
            .iter()
            .flat_map(|b| b.values().collect::<Vec<_>>())
            .collect()
    };
    assert_eq!(whole.len(), 3);
    assert_eq!(whole[1].len(), 0);
    let expected = values(&whole);
    assert_eq!(expected.len(), 2 * rows);
    for piece in [1, 2, 3, 5, 8, 13, 64, 100, 1000] {
        let blocks = read(layout(&columns, printing_18_16()), &answer, piece);
        let got = values(&blocks);
        // NaN is not equal to itself: compare the texts.
        let text = |rows: &[Vec<Value>]| format!("{rows:?}");
        assert_eq!(text(&got), text(&expected), "pieces of {piece}");
    }
}

#[test]
fn what_is_not_a_block_of_the_described_columns_is_told() {
    let columns = [col("n", "UInt64", ints(&[1, 2], 8))];
    let layout = || Arc::new(layout(&columns, printing_18_16()));
    let cases: [(Vec<u8>, &str); 4] = [
        (
            block(
                2,
                &[
                    col("n", "UInt64", ints(&[1, 2], 8)),
                    col("m", "UInt8", vec![0, 0]),
                ],
            ),
            "a block of 2 columns for 1",
        ),
        (
            block(2, &[col("m", "UInt64", ints(&[1, 2], 8))]),
            "a column \"m\" of type \"UInt64\" where \"n\" of type \"UInt64\" was described",
        ),
        (
            block(2, &[col("n", "Int64", ints(&[1, 2], 8))]),
            "of type \"Int64\"",
        ),
        (vec![0x80; 11], "a number longer than ten bytes"),
    ];
    for (answer, why) in cases {
        let mut reader = Reader::new(layout());
        reader.push(&answer);
        match reader.next_block() {
            Err(NotABlock(said)) => assert!(said.contains(why), "{said}"),
            other => panic!("{other:?} for {why}"),
        }
    }
}

/// The answer reader as the connection drives it.
fn answer(columns: &[Col], pieces: &[&[u8]]) -> (Collect, Result<u64, Stop>) {
    let mut out = Collect::default();
    let mut answer = NativeAnswer::new(layout(columns, printing_18_16()));
    for piece in pieces {
        if let Err(e) = answer.take(piece, &mut out) {
            return (out, Err(e));
        }
    }
    let end = answer.end(&mut out);
    (out, end)
}

#[test]
fn the_server_error_after_some_blocks_is_the_error() {
    let columns = [col("n", "UInt64", ints(&[1, 2], 8))];
    let rows = block(2, &columns);
    let error = b"Code: 395, e.displayText() = DB::Exception: Value passed to 'throwIf' function is non zero, e.what() = DB::Exception\n";
    // In one piece, cut inside the error's text, after two blocks.
    let mut all = rows.clone();
    all.extend_from_slice(&rows);
    all.extend_from_slice(error);
    for cut in [all.len(), rows.len() * 2 + 3, rows.len() * 2 + 40] {
        let (out, end) = answer(&columns, &[&all[..cut], &all[cut..]]);
        assert_eq!(out.rows.len(), 4);
        assert_eq!(out.columns.len(), 1);
        match end {
            Err(Stop::Exception(text)) => {
                assert!(text.starts_with("Code: 395"), "{text}")
            }
            other => panic!("{other:?}"),
        }
    }
    // A newer release's marker.
    let mut marked = rows.clone();
    marked.extend_from_slice(b"__exception__\r\nCode: 159. DB::Exception: Timeout exceeded\r\n");
    let (_, end) = answer(&columns, &[&marked]);
    assert!(matches!(end, Err(Stop::Exception(t)) if t.starts_with("__exception__")));
    // A block cut off.
    let (out, end) = answer(&columns, &[&rows, &rows[..rows.len() - 3]]);
    assert_eq!(out.rows.len(), 2);
    match end {
        Err(Stop::Unreadable(why)) => assert!(why.contains("broke off inside a block"), "{why}"),
        other => panic!("{other:?}"),
    }
    // Past what is kept, an answer that is not blocks ends there.
    let mut answer = NativeAnswer::new(layout(&columns, printing_18_16()));
    let mut out = Collect::default();
    answer.take(&[0x05; 100], &mut out).unwrap();
    let e = answer.take(&vec![0x05; Reader::KEPT], &mut out);
    assert!(
        matches!(e, Err(Stop::Unreadable(ref why)) if why.contains("a block of 5 columns for 1")),
        "{e:?}"
    );
}

#[test]
fn an_empty_answer_still_has_its_columns() {
    let columns = [
        col("n", "UInt64", Vec::new()),
        col("s", "String", Vec::new()),
    ];
    let (out, end) = answer(&columns, &[]);
    assert_eq!(end.unwrap(), 0);
    let names: Vec<&str> = out.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["n", "s"]);
    assert!(out.rows.is_empty());
}

#[test]
fn dates_are_chronos_for_every_day_a_date_holds() {
    let mut text = Vec::new();
    for days in 0..=u32::from(u16::MAX) {
        text.clear();
        push_date(days, &mut text);
        let expected = (epoch() + chrono::Days::new(days.into()))
            .format("%Y-%m-%d")
            .to_string();
        assert_eq!(std::str::from_utf8(&text).unwrap(), expected);
    }
    // Past a Date, as far as a DateTime goes.
    text.clear();
    push_date(u32::MAX / 86_400, &mut text);
    assert_eq!(text, b"2106-02-07");
}

#[test]
fn decimals_print_with_or_without_their_trailing_zeros() {
    let cases: [(i128, u32, &str, &str); 9] = [
        (150, 2, "1.50", "1.5"),
        (100, 2, "1.00", "1"),
        (-5, 2, "-0.05", "-0.05"),
        (0, 2, "0.00", "0"),
        (0, 0, "0", "0"),
        (-42, 0, "-42", "-42"),
        (1, 10, "0.0000000001", "0.0000000001"),
        (
            i128::MAX,
            38,
            "1.70141183460469231731687303715884105727",
            "1.70141183460469231731687303715884105727",
        ),
        (
            i128::MIN,
            5,
            "-1701411834604692317316873037158841.05728",
            "-1701411834604692317316873037158841.05728",
        ),
    ];
    for (value, scale, kept, trimmed) in cases {
        for (zeros, want) in [(true, kept), (false, trimmed)] {
            let mut out = Vec::new();
            push_decimal(value, scale, zeros, &mut out);
            assert_eq!(
                std::str::from_utf8(&out).unwrap(),
                want,
                "{value} {scale} {zeros}"
            );
        }
    }
}

/// CSV and TSV written from a binary block are byte for byte what its
/// values write, with `--max-rows` cutting the same rows, and a column
/// of one field written as the csv crate writes an empty record.
#[test]
fn renderers_write_a_block_as_its_values() {
    use crate::render::{renderer, Format, RenderOptions};
    let (rows, columns) = every_kind();
    let answer = block(rows, &columns);
    let b = read(layout(&columns, printing_18_16()), &answer, 1000).remove(0);
    let one = [col(
        "s",
        "Nullable(String)",
        nullable(&[true, false, false], strings(&[b"", b"", b"x"])),
    )];
    let single = read(layout(&one, printing_18_16()), &block(3, &one), 1000).remove(0);
    let described = |c: &[Col]| -> Vec<crate::source::Column> {
        c.iter()
            .map(|c| crate::source::Column::new(c.name, c.type_name))
            .collect()
    };
    for format in [Format::Csv, Format::Tsv] {
        for max_rows in [None, Some(2), Some(0)] {
            for (block, cols) in [(&b, described(&columns)), (&single, described(&one))] {
                let options = RenderOptions {
                    max_rows,
                    color: false,
                    width: None,
                    count_budget: None,
                    full_width: false,
                    in_chat: false,
                };
                let write = |native: bool| {
                    let mut out = Vec::new();
                    let hidden = {
                        let mut r = renderer(format, Box::new(&mut out), options);
                        r.columns(&cols).unwrap();
                        match native {
                            true => r.native_rows(block.clone()).unwrap(),
                            false => block.values().for_each(|row| r.row(&row).unwrap()),
                        }
                        r.finish().unwrap();
                        r.hidden()
                    };
                    (String::from_utf8(out).unwrap(), hidden)
                };
                assert_eq!(write(true), write(false), "{format:?} {max_rows:?}");
            }
        }
    }
}
