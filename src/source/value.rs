//! Typed cell values and result columns, as every engine hands them to the
//! renderers. Engines convert their native types here once; renderers only
//! ever see these.

use std::fmt::{self, Write as _};

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

/// One cell of a result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    /// Integers wider than 64 bits (DuckDB HUGEINT, UBIGINT above `i64::MAX`).
    BigInt(i128),
    Float(f64),
    /// An exact decimal, kept as its canonical text (`-12.50`), never via f64.
    Decimal(String),
    Text(String),
    Date(NaiveDate),
    Time(NaiveTime),
    Timestamp(NaiveDateTime),
    TimestampTz(DateTime<Utc>),
    /// JSON text from a JSON-typed column; emitted as JSON in `json` output.
    Json(String),
    Blob(Vec<u8>),
    /// Anything else (intervals, lists, structs, …) in a readable text form.
    Other(String),
}

impl Value {
    /// True for values that are numbers (right-aligned in tables, bare in JSON).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Decimal(_)
        )
    }

    /// Appends the plain text form used by csv, tsv, table and markdown.
    /// NULL is the empty string here; renderers that show NULL differently
    /// check for it first.
    pub fn write_text(&self, out: &mut String) {
        match self {
            Value::Null => {}
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
            Value::BigInt(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => write_float(*f, out),
            Value::Decimal(s) | Value::Text(s) | Value::Json(s) | Value::Other(s) => {
                out.push_str(s)
            }
            Value::Date(d) => write_date(d, out),
            Value::Time(t) => write_time(t, out),
            Value::Timestamp(t) => {
                write_date(&t.date(), out);
                out.push(' ');
                write_time(&t.time(), out);
            }
            Value::TimestampTz(t) => {
                let t = t.naive_utc();
                write_date(&t.date(), out);
                out.push('T');
                write_time(&t.time(), out);
                out.push('Z');
            }
            Value::Blob(b) => write_hex(b, out),
        }
    }

    /// The plain text form where the value holds it as it is (text,
    /// decimals, JSON, other), so a writer need not copy it; `None` for
    /// the rest.
    pub fn held_text(&self) -> Option<&str> {
        match self {
            Value::Decimal(s) | Value::Text(s) | Value::Json(s) | Value::Other(s) => Some(s),
            _ => None,
        }
    }

    /// The plain text form as a new string (see [`Value::write_text`]).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Floats in their shortest round-trip form, whole numbers with `.0` so a
/// float still reads as one (`3.0`, `0.1`, `1e300`), as SQLite and DuckDB print them.
fn write_float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let _ = write!(out, "{f:?}");
    }
}

/// `YYYY-MM-DD`, as chrono's `%Y-%m-%d` prints it, without parsing a
/// format string for every value (dates are in every other result row).
fn write_date(d: &NaiveDate, out: &mut String) {
    use chrono::Datelike;
    if (0..=9999).contains(&d.year()) {
        let y = d.year() as u32;
        push_digits(out, y / 100, 2);
        push_digits(out, y % 100, 2);
        out.push('-');
        push_digits(out, d.month(), 2);
        out.push('-');
        push_digits(out, d.day(), 2);
    } else {
        let _ = write!(out, "{}", d.format("%Y-%m-%d"));
    }
}

/// `HH:MM:SS` plus `.mmm`, `.uuuuuu` or `.nnnnnnnnn` as needed, as chrono's
/// `%H:%M:%S%.f` prints it.
fn write_time(t: &NaiveTime, out: &mut String) {
    use chrono::Timelike;
    let nanos = t.nanosecond();
    if nanos >= 1_000_000_000 {
        // A leap second: leave it to chrono.
        let _ = write!(out, "{}", t.format("%H:%M:%S%.f"));
        return;
    }
    push_digits(out, t.hour(), 2);
    out.push(':');
    push_digits(out, t.minute(), 2);
    out.push(':');
    push_digits(out, t.second(), 2);
    if nanos == 0 {
    } else if nanos.is_multiple_of(1_000_000) {
        let _ = write!(out, ".{:03}", nanos / 1_000_000);
    } else if nanos.is_multiple_of(1_000) {
        let _ = write!(out, ".{:06}", nanos / 1_000);
    } else {
        let _ = write!(out, ".{nanos:09}");
    }
}

/// `n`'s last `width` decimal digits, zero-padded (formatting machinery
/// costs more than the digits in a result of a million timestamps).
fn push_digits(out: &mut String, n: u32, width: u32) {
    for i in (0..width).rev() {
        out.push(char::from(b'0' + (n / 10u32.pow(i) % 10) as u8));
    }
}

/// The year, month and day of `days` since 1970-01-01 in the proleptic
/// Gregorian calendar, at any distance (H. Hinnant's days-to-civil
/// algorithm), without chrono's range limits or its cost.
pub(crate) fn civil(days: i64) -> (i64, u32, u32) {
    // Days since 0000-03-01, in eras of 400 years.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// Blobs as `\x` followed by lowercase hex, the form PostgreSQL prints.
fn write_hex(bytes: &[u8], out: &mut String) {
    out.reserve(2 + bytes.len() * 2);
    out.push_str("\\x");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

/// A result column: its name and the engine's type name for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// The engine's declared type (`INTEGER`, `DECIMAL(10,2)`, …); may be empty
    /// when the engine does not know (SQLite expressions).
    pub type_name: String,
}

impl Column {
    pub fn new(name: impl Into<String>, type_name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            type_name: type_name.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms() {
        assert_eq!(Value::Null.to_text(), "");
        assert_eq!(Value::Bool(true).to_text(), "true");
        assert_eq!(Value::Int(-42).to_text(), "-42");
        assert_eq!(
            Value::BigInt(170141183460469231731687303715884105727).to_text(),
            "170141183460469231731687303715884105727"
        );
        assert_eq!(Value::Float(0.1).to_text(), "0.1");
        assert_eq!(Value::Float(3.0).to_text(), "3.0");
        assert_eq!(Value::Float(1e300).to_text(), "1e300");
        assert_eq!(Value::Float(f64::NAN).to_text(), "NaN");
        assert_eq!(Value::Decimal("12.50".into()).to_text(), "12.50");
        assert_eq!(Value::Blob(vec![0xde, 0xad, 0x01]).to_text(), "\\xdead01");
        let d = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        assert_eq!(Value::Date(d).to_text(), "2024-02-29");
        let ts = d.and_hms_opt(13, 5, 9).unwrap();
        assert_eq!(Value::Timestamp(ts).to_text(), "2024-02-29 13:05:09");
        assert_eq!(
            Value::TimestampTz(ts.and_utc()).to_text(),
            "2024-02-29T13:05:09Z"
        );
    }

    #[test]
    fn dates_and_times_print_as_chrono_does() {
        let d = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        for (h, m, sec, nano) in [
            (0, 0, 0, 0),
            (13, 5, 9, 500_000_000),
            (23, 59, 59, 250_000),
            (1, 2, 3, 7),
        ] {
            let t = NaiveTime::from_hms_nano_opt(h, m, sec, nano).unwrap();
            let ts = d.and_time(t);
            assert_eq!(
                Value::Time(t).to_text(),
                t.format("%H:%M:%S%.f").to_string()
            );
            assert_eq!(
                Value::Timestamp(ts).to_text(),
                ts.format("%Y-%m-%d %H:%M:%S%.f").to_string()
            );
            assert_eq!(
                Value::TimestampTz(ts.and_utc()).to_text(),
                ts.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string()
            );
        }
        let far = NaiveDate::from_ymd_opt(12345, 1, 1).unwrap();
        assert_eq!(
            Value::Date(far).to_text(),
            far.format("%Y-%m-%d").to_string()
        );
        assert_eq!(Value::Date(d).to_text(), "2024-02-29");
    }

    #[test]
    fn numeric_kinds() {
        assert!(Value::Decimal("1.5".into()).is_numeric());
        assert!(!Value::Text("1.5".into()).is_numeric());
        assert!(!Value::Null.is_numeric());
    }
}
