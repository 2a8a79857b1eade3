//! ClickHouse's `TabSeparatedWithNamesAndTypes` output read into typed
//! values: the TSV escapes, `\N` for NULL, each column typed by the type
//! name the server sends, and the quoted text form of arrays, tuples and
//! maps turned into JSON text. Pure; never sees a connection.
//!
//! Integers of every width stay exact (`UInt64` above `i64::MAX`, the
//! 128/256-bit types as `BigInt` or, past `i128`, as exact decimal text);
//! decimals stay as the server prints them, never via `f64`.

use std::borrow::Cow;

use chrono::{NaiveDate, NaiveDateTime};

use crate::source::server::bytes_value;
use crate::source::{Field, Value};

/// How one column's text becomes a [`Value`], from its ClickHouse type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Signed and unsigned integers up to 64 bits.
    Int,
    /// `Int128`, `UInt128`, `Int256`, `UInt256`.
    Wide,
    Float,
    Decimal,
    Bool,
    Text,
    /// `FixedString(N)`: padded with NUL bytes, may hold binary data.
    Fixed,
    Date,
    /// `DateTime`, `DateTime64`, with or without a time zone: the text is
    /// in the column's (or the server's) zone, which the column type names.
    DateTime,
    /// `Array`, `Tuple`, `Map`, `Nested`: their quoted text form as JSON.
    Composite,
    /// `JSON` / `Object('json')`: JSON text already.
    Json,
    /// `Nothing` (the type of a bare `NULL`).
    Nothing,
}

impl Kind {
    /// The kind for a type name as the server spells it.
    pub(crate) fn of(type_name: &str) -> Kind {
        let t = unwrap_type(type_name);
        let base = t.split('(').next().unwrap_or(t);
        match base {
            "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32" | "UInt64" => {
                Kind::Int
            }
            "Int128" | "Int256" | "UInt128" | "UInt256" => Kind::Wide,
            "Float32" | "Float64" | "BFloat16" => Kind::Float,
            "Decimal" | "Decimal32" | "Decimal64" | "Decimal128" | "Decimal256" => Kind::Decimal,
            "Bool" => Kind::Bool,
            "FixedString" => Kind::Fixed,
            "Date" | "Date32" => Kind::Date,
            "DateTime" | "DateTime64" => Kind::DateTime,
            "Array" | "Tuple" | "Map" | "Nested" => Kind::Composite,
            "JSON" | "Object" => Kind::Json,
            "Nothing" => Kind::Nothing,
            _ => Kind::Text,
        }
    }

    /// What [`Kind::decode`] of `raw` prints ([`Value::write_text`]), read
    /// off `raw` where it is that text without a value: NULL, integers as
    /// the server writes them, dates, times to the second, decimals, text
    /// and JSON once unescaped (if UTF-8). Else the value itself.
    pub(crate) fn plain(self, field: Field<'_>) -> Result<Cow<'_, str>, Value> {
        let raw = field.bytes;
        if raw == b"\\N" || self == Kind::Nothing {
            return Ok(Cow::Borrowed(""));
        }
        let as_sent = match self {
            Kind::Int | Kind::Wide => is_plain_integer(raw),
            // A date or a time to the second prints as sent, and one that
            // is not valid stays as sent; a fraction may print shorter.
            Kind::Date | Kind::DateTime => raw.len() <= 19,
            Kind::Decimal | Kind::Text | Kind::Json => true,
            _ => false,
        };
        let text = match (as_sent, field.escaped, field.text) {
            (false, _, _) => None,
            (true, false, Some(text)) => Some(Cow::Borrowed(text)),
            (true, false, None) => std::str::from_utf8(raw).ok().map(Cow::Borrowed),
            (true, true, _) => String::from_utf8(unescape(raw).into_owned())
                .ok()
                .map(Cow::Owned),
        };
        text.ok_or_else(|| self.decode(raw))
    }

    /// One field's value; `raw` is the field as sent (still escaped).
    pub(crate) fn decode(self, raw: &[u8]) -> Value {
        if raw == b"\\N" {
            return Value::Null;
        }
        // Composite values come in their quoted form, not TSV-escaped.
        if self == Kind::Composite {
            let text = String::from_utf8_lossy(raw);
            return match literal_to_json(&text) {
                Some(json) => Value::Json(json),
                None => Value::Other(text.into_owned()),
            };
        }
        let bytes = unescape(raw);
        let text = || String::from_utf8_lossy(&bytes).into_owned();
        let parsed = match self {
            Kind::Int => std::str::from_utf8(&bytes).ok().and_then(int_value),
            Kind::Wide => std::str::from_utf8(&bytes).ok().map(wide_value),
            Kind::Float => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| t.parse().ok())
                .map(Value::Float),
            Kind::Decimal => Some(Value::Decimal(text())),
            Kind::Bool => match &bytes[..] {
                b"true" | b"1" => Some(Value::Bool(true)),
                b"false" | b"0" => Some(Value::Bool(false)),
                _ => None,
            },
            Kind::Date => date(&bytes).map(Value::Date),
            Kind::DateTime => date_time(&bytes).map(Value::Timestamp),
            Kind::Fixed => {
                let end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
                Some(match std::str::from_utf8(&bytes[..end]) {
                    Ok(t) if !t.contains('\0') => Value::Text(t.to_string()),
                    _ => Value::Blob(bytes.to_vec()),
                })
            }
            Kind::Json => Some(Value::Json(text())),
            Kind::Nothing => Some(Value::Null),
            Kind::Text => Some(match bytes_value(&bytes) {
                Value::Other(t) => Value::Text(t),
                other => other,
            }),
            Kind::Composite => None,
        };
        // Zero dates and the like stay as the server printed them.
        parsed.unwrap_or_else(|| Value::Other(text()))
    }
}

/// `YYYY-MM-DD`, read by hand: dates are in every other row of a big
/// result, and a format string parsed per value costs more than the rest.
fn date(b: &[u8]) -> Option<NaiveDate> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::from_ymd_opt(
        digits(&b[0..4])? as i32,
        digits(&b[5..7])?,
        digits(&b[8..10])?,
    )
}

/// `YYYY-MM-DD hh:mm:ss` with an optional fraction of up to nine digits.
fn date_time(b: &[u8]) -> Option<NaiveDateTime> {
    if b.len() < 19 || b[10] != b' ' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', frac @ ..] if !frac.is_empty() && frac.len() <= 9 => {
            digits(frac)? * 10u32.pow(9 - frac.len() as u32)
        }
        _ => return None,
    };
    date(&b[..10])?.and_hms_nano_opt(
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
        nanos,
    )
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, d| {
        d.is_ascii_digit().then(|| acc * 10 + (d - b'0') as u32)
    })
}

/// The type inside `Nullable(…)` and `LowCardinality(…)`.
pub(crate) fn unwrap_type(type_name: &str) -> &str {
    let mut t = type_name.trim();
    loop {
        let inner = ["Nullable(", "LowCardinality("]
            .iter()
            .find_map(|w| t.strip_prefix(w).and_then(|r| r.strip_suffix(')')));
        match inner {
            Some(inner) => t = inner.trim(),
            None => return t,
        }
    }
}

/// An integer as Rust prints it: digits without a leading `+` or zero,
/// `-` only before a number other than 0.
fn is_plain_integer(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits == b"0" && digits.len() == raw.len())
}

fn int_value(t: &str) -> Option<Value> {
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Int(i));
    }
    t.parse::<u64>().ok().map(|u| Value::BigInt(u as i128))
}

/// 128- and 256-bit integers: exact, as `BigInt` where `i128` holds them,
/// else as their decimal text.
fn wide_value(t: &str) -> Value {
    match t.parse::<i128>() {
        Ok(i) => Value::BigInt(i),
        Err(_) => Value::Decimal(t.to_string()),
    }
}

/// A TSV field without its escapes (`\t`, `\n`, `\\`, `\'`, `\0`, `\xHH`…).
pub(crate) fn unescape(raw: &[u8]) -> Cow<'_, [u8]> {
    if !raw.contains(&b'\\') {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' || i + 1 == raw.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = raw[i + 1];
        i += 2;
        match next {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0' => out.push(0),
            b'a' => out.push(0x07),
            b'v' => out.push(0x0b),
            b'x' if i + 2 <= raw.len() => {
                match std::str::from_utf8(&raw[i..i + 2])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'x'),
                }
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// ClickHouse's quoted text of a value (`['a',NULL]`, `(1,'x')`,
/// `{'k':[1,2]}`) as JSON: strings quoted, `NULL` as `null`, tuples as
/// arrays, map keys as strings, numbers as they are (exactly, at any
/// width), `inf`/`nan` as strings. `None` when the text is not of that form.
pub(crate) fn literal_to_json(text: &str) -> Option<String> {
    let mut parser = Literal {
        s: text.as_bytes(),
        at: 0,
        out: String::with_capacity(text.len() + 8),
    };
    parser.value(false)?;
    parser.skip_space();
    (parser.at == parser.s.len()).then_some(parser.out)
}

struct Literal<'a> {
    s: &'a [u8],
    at: usize,
    out: String,
}

impl Literal<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// One value; `key`: it is a map key, which JSON wants as a string.
    fn value(&mut self, key: bool) -> Option<()> {
        self.skip_space();
        match self.peek()? {
            b'[' => self.sequence(b'[', b']'),
            b'(' => self.sequence(b'(', b')'),
            b'{' => self.map(),
            b'\'' => self.string(),
            _ => self.bare(key),
        }
    }

    /// `[a,b]` or `(a,b)`, as a JSON array.
    fn sequence(&mut self, open: u8, close: u8) -> Option<()> {
        debug_assert_eq!(self.peek(), Some(open));
        self.items(close, ('[', ']'), |l| l.value(false))
    }

    /// `{k:v,…}` as a JSON object.
    fn map(&mut self) -> Option<()> {
        self.items(b'}', ('{', '}'), |l| {
            l.value(true)?;
            l.skip_space();
            if l.peek()? != b':' {
                return None;
            }
            l.at += 1;
            l.out.push(':');
            l.value(false)
        })
    }

    /// The comma-separated items after an opening bracket, up to `close`,
    /// each read by `item`, written between `json`'s two brackets.
    fn items(
        &mut self,
        close: u8,
        json: (char, char),
        item: impl Fn(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.at += 1;
        self.out.push(json.0);
        self.skip_space();
        if self.peek() == Some(close) {
            self.at += 1;
            self.out.push(json.1);
            return Some(());
        }
        loop {
            item(self)?;
            self.skip_space();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.out.push(',');
                }
                b if b == close => {
                    self.at += 1;
                    self.out.push(json.1);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `'…'` with backslash escapes, as a JSON string.
    fn string(&mut self) -> Option<()> {
        self.at += 1;
        let mut raw: Vec<u8> = Vec::new();
        loop {
            let b = self.peek()?;
            self.at += 1;
            match b {
                b'\'' => break,
                b'\\' => {
                    let start = self.at - 1;
                    self.peek()?;
                    // One escape (`\x41` is four bytes).
                    let len = if self.peek() == Some(b'x') { 4 } else { 2 };
                    let end = (start + len).min(self.s.len());
                    raw.extend_from_slice(&unescape(&self.s[start..end]));
                    self.at = end;
                }
                other => raw.push(other),
            }
        }
        let text = String::from_utf8_lossy(&raw);
        self.out
            .push_str(&serde_json::to_string(&*text).unwrap_or_else(|_| "\"\"".into()));
        Some(())
    }

    /// A number, `NULL`, `true`/`false`, `inf`/`nan`: up to the next
    /// separator.
    fn bare(&mut self, key: bool) -> Option<()> {
        let start = self.at;
        while self.peek().is_some_and(|b| {
            !matches!(b, b',' | b']' | b')' | b'}' | b':') && !b.is_ascii_whitespace()
        }) {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.at]).ok()?;
        if word.is_empty() {
            return None;
        }
        let number = is_json_number(word);
        match word {
            _ if key => {
                self.out
                    .push_str(&serde_json::to_string(word).unwrap_or_default());
            }
            "NULL" => self.out.push_str("null"),
            "true" | "false" => self.out.push_str(word),
            _ if number => self.out.push_str(word),
            // `inf`, `nan` and anything else: JSON has no such number.
            _ => self
                .out
                .push_str(&serde_json::to_string(word).unwrap_or_default()),
        }
        Some(())
    }
}

/// Whether `w` is a number as JSON writes one.
fn is_json_number(w: &str) -> bool {
    let b = w.strip_prefix('-').unwrap_or(w).as_bytes();
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let (mantissa, exponent) = match b.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let (int, frac) = match mantissa.iter().position(|c| *c == b'.') {
        Some(i) => (&mantissa[..i], Some(&mantissa[i + 1..])),
        None => (mantissa, None),
    };
    let int_ok = digits(int) && (int.len() == 1 || int[0] != b'0');
    let frac_ok = frac.is_none_or(digits);
    let exp_ok = exponent.is_none_or(|e| {
        let e = e
            .strip_prefix(b"+")
            .or_else(|| e.strip_prefix(b"-"))
            .unwrap_or(e);
        digits(e)
    });
    int_ok && frac_ok && exp_ok
}

/// The message of a ClickHouse exception, without the wrapping the
/// server adds (`Code: 60, e.displayText() = DB::Exception: …, e.what() =
/// DB::Exception` in older releases, `Code: 60. DB::Exception: … (NAME)
/// (version …)` in newer ones), and its code.
pub(crate) fn exception(text: &str) -> (Option<u32>, String) {
    let text = text.trim();
    let code = text
        .strip_prefix("Code: ")
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|d| d.parse().ok());
    let mut message = match text.find("DB::Exception: ") {
        Some(i) => &text[i + "DB::Exception: ".len()..],
        None => text,
    };
    if let Some(i) = message.find(", e.what() = ") {
        message = &message[..i];
    }
    if let Some(i) = message.rfind(" (version ") {
        message = &message[..i];
    }
    (code, message.trim().to_string())
}

/// Whether a line of the result is the exception the server appends when
/// a query fails after its first rows were sent.
pub(crate) fn is_exception_line(line: &[u8]) -> bool {
    (line.starts_with(b"Code: ") && line.windows(13).any(|w| w == b"DB::Exception"))
        || line.starts_with(b"__exception__")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_stay_exact_at_every_width() {
        assert_eq!(Kind::of("Int8").decode(b"-128"), Value::Int(-128));
        assert_eq!(
            Kind::of("UInt64").decode(b"18446744073709551615"),
            Value::BigInt(18446744073709551615)
        );
        assert_eq!(
            Kind::of("Int128").decode(b"-170141183460469231731687303715884105728"),
            Value::BigInt(i128::MIN)
        );
        assert_eq!(
            Kind::of("UInt256").decode(
                b"115792089237316195423570985008687907853269984665640564039457584007913129639935"
            ),
            Value::Decimal(
                "115792089237316195423570985008687907853269984665640564039457584007913129639935"
                    .into()
            )
        );
        assert_eq!(
            Kind::of("Nullable(Decimal(38, 10))").decode(b"12345678901234567890.0123456789"),
            Value::Decimal("12345678901234567890.0123456789".into())
        );
        assert_eq!(Kind::of("Nullable(Int32)").decode(b"\\N"), Value::Null);
    }

    #[test]
    fn scalars_are_typed() {
        assert_eq!(Kind::of("Float64").decode(b"0.1"), Value::Float(0.1));
        assert_eq!(
            Kind::of("Float32").decode(b"-inf"),
            Value::Float(f64::NEG_INFINITY)
        );
        assert!(matches!(Kind::of("Float64").decode(b"nan"), Value::Float(f) if f.is_nan()));
        assert_eq!(Kind::of("Bool").decode(b"true"), Value::Bool(true));
        assert_eq!(
            Kind::of("LowCardinality(String)").decode(b"a\\tb\\\\c\\'d\\n"),
            Value::Text("a\tb\\c'd\n".into())
        );
        assert_eq!(
            Kind::of("LowCardinality(Nullable(String))").decode(b"\\N"),
            Value::Null
        );
        assert_eq!(
            Kind::of("String").decode(b"\\xff\\x00"),
            Value::Blob(vec![0xff, 0])
        );
        assert_eq!(
            Kind::of("FixedString(3)").decode(b"ab\\0"),
            Value::Text("ab".into())
        );
        assert_eq!(
            Kind::of("Date32").decode(b"2024-02-29").to_text(),
            "2024-02-29"
        );
        assert_eq!(
            Kind::of("Date").decode(b"0000-00-00"),
            Value::Other("0000-00-00".into())
        );
        assert_eq!(
            Kind::of("DateTime('Europe/Berlin')")
                .decode(b"2024-02-29 13:05:09")
                .to_text(),
            "2024-02-29 13:05:09"
        );
        assert_eq!(
            Kind::of("DateTime64(3, 'UTC')")
                .decode(b"2024-02-29 13:05:09.250")
                .to_text(),
            "2024-02-29 13:05:09.250"
        );
        assert_eq!(
            Kind::of("UUID").decode(b"61f0c404-5cb3-11e7-907b-a6006ad3dba0"),
            Value::Text("61f0c404-5cb3-11e7-907b-a6006ad3dba0".into())
        );
        assert_eq!(Kind::of("IPv6").decode(b"::1"), Value::Text("::1".into()));
        assert_eq!(
            Kind::of("Enum8('a' = 1, 'b' = 2)").decode(b"b"),
            Value::Text("b".into())
        );
        assert_eq!(Kind::of("Nothing").decode(b"\\N"), Value::Null);
    }

    #[test]
    fn composites_become_json() {
        let json = |t: &str| match Kind::of("Array(String)").decode(t.as_bytes()) {
            Value::Json(j) => j,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            json(r"['a\tb',NULL,'c\\d\'e']"),
            r#"["a\tb",null,"c\\d'e"]"#
        );
        assert_eq!(json("[[1,2],[3]]"), "[[1,2],[3]]");
        assert_eq!(json("(1,'x')"), r#"[1,"x"]"#);
        assert_eq!(json("{'k':[1,2],'z':NULL}"), r#"{"k":[1,2],"z":null}"#);
        assert_eq!(json("{1:2}"), r#"{"1":2}"#);
        assert_eq!(
            json("[18446744073709551615,-0.5,1e-7]"),
            "[18446744073709551615,-0.5,1e-7]"
        );
        assert_eq!(json("[inf,nan]"), r#"["inf","nan"]"#);
        assert_eq!(json("[]"), "[]");
        assert_eq!(json("['2024-02-29']"), r#"["2024-02-29"]"#);
        assert_eq!(json(r"['\xc3\xa9']"), r#"["é"]"#);
        assert_eq!(
            Kind::of("Array(String)").decode(b"['unclosed"),
            Value::Other("['unclosed".into())
        );
    }

    #[test]
    fn exceptions_read_in_both_wordings() {
        assert_eq!(
            exception("Code: 60, e.displayText() = DB::Exception: Table shop.x doesn't exist., e.what() = DB::Exception\n"),
            (Some(60), "Table shop.x doesn't exist.".to_string())
        );
        assert_eq!(
            exception("Code: 159. DB::Exception: Timeout exceeded: elapsed 1.0 seconds, maximum: 1. (TIMEOUT_EXCEEDED) (version 24.8.1.1)"),
            (
                Some(159),
                "Timeout exceeded: elapsed 1.0 seconds, maximum: 1. (TIMEOUT_EXCEEDED)".to_string()
            )
        );
        assert!(is_exception_line(
            b"Code: 394, e.displayText() = DB::Exception: Query was cancelled"
        ));
        assert!(!is_exception_line(b"Code: 7\tok"));
    }

    /// A field as a block of rows hands it on.
    fn sent(raw: &[u8]) -> Field<'_> {
        Field {
            bytes: raw,
            text: std::str::from_utf8(raw).ok(),
            escaped: raw.contains(&b'\\'),
        }
    }

    /// Every kind, fed generated fields (escapes, signs, leading zeros,
    /// fractions, bad dates, bytes that are not UTF-8, `\N`): the text read
    /// off a field as it was sent is always the text its value prints.
    #[test]
    fn plain_text_is_always_what_the_value_prints() {
        const TYPES: [&str; 14] = [
            "UInt64",
            "Int8",
            "Int128",
            "UInt256",
            "Float64",
            "Decimal(12, 2)",
            "Bool",
            "String",
            "FixedString(4)",
            "Date",
            "DateTime",
            "Array(String)",
            "JSON",
            "Nothing",
        ];
        const PIECES: [&[u8]; 28] = [
            b"0",
            b"7",
            b"42",
            b"-",
            b"+",
            b"00",
            b"18446744073709551616",
            b"9223372036854775808",
            b".",
            b".5",
            b".120",
            b".123456",
            b"2024-02-29",
            b"0000-00-00",
            b"2024-13-01",
            b" ",
            b"13:05:09",
            b"24:00:00",
            b":",
            b"\\",
            b"\\N",
            b"\\t",
            b"\\x41",
            b"\\xZZ",
            b"\xff",
            b"\xc3\xa9",
            b"x",
            b"1e+20",
        ];
        let mut fields: Vec<Vec<u8>> = vec![
            b"2024-02-29 13:05:09".to_vec(),
            b"2024-02-29 13:05:09.120".to_vec(),
            b"2024-02-29 13:05:09.123000".to_vec(),
            b"2024-02-30 13:05:09".to_vec(),
            b"\\N".to_vec(),
            b"-0".to_vec(),
            b"".to_vec(),
        ];
        // A fixed sequence of pseudo-random joins of one to four pieces.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut field = Vec::new();
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for i in 0..(1 + (seed >> 60) % 4) {
                field.extend_from_slice(PIECES[((seed >> (8 * i)) % 28) as usize]);
            }
            fields.push(field);
        }
        let mut as_sent = 0;
        for t in TYPES {
            let kind = Kind::of(t);
            for field in &fields {
                let value = kind.decode(field);
                match kind.plain(sent(field)) {
                    Ok(text) => {
                        as_sent += 1;
                        assert_eq!(
                            text,
                            value.to_text(),
                            "{t} {:?}",
                            String::from_utf8_lossy(field)
                        );
                    }
                    Err(v) => assert_eq!(v, value, "{t}"),
                }
            }
        }
        assert!(as_sent > fields.len() * 5, "{as_sent}");
        // The usual fields are read off as sent, without a value.
        for (t, field) in [
            ("UInt64", &b"42"[..]),
            ("Int64", b"-9223372036854775808"),
            (
                "UInt256",
                b"115792089237316195423570985008687907853269984665640564039457584007913129639935",
            ),
            ("Decimal(12, 2)", b"-12.50"),
            ("LowCardinality(Nullable(String))", b"tab\\there"),
            ("Date", b"2024-02-29"),
            ("DateTime('UTC')", b"2024-02-29 13:05:09"),
            ("Nullable(Float64)", b"\\N"),
        ] {
            assert!(Kind::of(t).plain(sent(field)).is_ok(), "{t}");
        }
        assert!(Kind::of("Float64").plain(sent(b"0.1")).is_err());
        assert!(Kind::of("DateTime64(6)")
            .plain(sent(b"2024-02-29 13:05:09.123000"))
            .is_err());
    }
}
