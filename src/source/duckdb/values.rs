//! DuckDB's results, read from the Arrow batches DuckDB hands out, as
//! [`Value`]s. Every Arrow type decodes: the common ones natively, nested
//! ones (lists, arrays, structs, maps, unions) as JSON, infinite dates and
//! timestamps as `infinity`, and anything else through Arrow's own display
//! text — never a panic. Columns Arrow cannot carry faithfully (TIMETZ's
//! offset, BIT, BIGNUM) are cast to text by DuckDB before they get here (see
//! [`needs_text`]).

use std::fmt::Write as _;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveTime};
use duckdb::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Decimal256Array, FixedSizeBinaryArray,
};
use duckdb::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Date64Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float16Type, Float32Type,
    Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, IntervalDayTimeType,
    IntervalMonthDayNanoType, IntervalYearMonthType, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use duckdb::arrow::util::display::{ArrayFormatter, FormatOptions};
use duckdb::core::LogicalTypeId;

use crate::source::Value;

/// DuckDB's `infinity` for DATE (and the negative for `-infinity`).
const DATE_INFINITY: i32 = i32::MAX;
/// DuckDB's `infinity` for TIMESTAMP (and the negative for `-infinity`).
const TIMESTAMP_INFINITY: i64 = i64::MAX;

/// Logical types whose values Arrow cannot carry faithfully; DuckDB casts
/// them to text first.
pub(super) fn needs_text(id: LogicalTypeId) -> bool {
    matches!(
        id,
        LogicalTypeId::TimeTZ
            | LogicalTypeId::Bit
            | LogicalTypeId::Bignum
            | LogicalTypeId::Unsupported
    ) || !known(id)
}

/// The logical types this module (or DuckDB's Arrow export) handles.
fn known(id: LogicalTypeId) -> bool {
    use LogicalTypeId as L;
    matches!(
        id,
        L::Boolean
            | L::Tinyint
            | L::Smallint
            | L::Integer
            | L::Bigint
            | L::Hugeint
            | L::UTinyint
            | L::USmallint
            | L::UInteger
            | L::UBigint
            | L::UHugeint
            | L::Float
            | L::Double
            | L::Decimal
            | L::Varchar
            | L::Blob
            | L::Date
            | L::Time
            | L::TimeNs
            | L::Timestamp
            | L::TimestampS
            | L::TimestampMs
            | L::TimestampNs
            | L::TimestampTZ
            | L::Interval
            | L::Uuid
            | L::Enum
            | L::List
            | L::Array
            | L::Struct
            | L::Map
            | L::Union
    )
}

/// What a column's logical type says about its values beyond Arrow's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    /// `TIMESTAMP WITH TIME ZONE`.
    TimestampTz,
    /// DuckDB's JSON type: the text is JSON.
    Json,
    /// A number DuckDB gives as text (BIGNUM): shown as a number.
    NumberText,
}

/// How one column of a batch is read.
pub(super) struct Reader<'a> {
    array: &'a ArrayRef,
    kind: Kind,
    fallback: Option<ArrayFormatter<'a>>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(array: &'a ArrayRef, kind: Kind) -> Self {
        let fallback = if decodable(array.data_type()) {
            None
        } else {
            ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default()).ok()
        };
        Reader {
            array,
            kind,
            fallback,
        }
    }

    /// The value at `row`.
    pub(super) fn value(&self, row: usize) -> Value {
        if self.array.is_null(row) {
            return Value::Null;
        }
        if let Some(f) = &self.fallback {
            return Value::Other(f.value(row).to_string());
        }
        match (
            value_at(self.array.as_ref(), row, self.kind == Kind::TimestampTz),
            self.kind,
        ) {
            (Value::Text(s), Kind::Json) => Value::Json(s),
            (Value::Text(s), Kind::NumberText) => Value::Decimal(s),
            (v, _) => v,
        }
    }
}

fn decodable(t: &DataType) -> bool {
    use DataType as D;
    match t {
        D::Null
        | D::Boolean
        | D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::Float16
        | D::Float32
        | D::Float64
        | D::Decimal128(..)
        | D::Decimal256(..)
        | D::Utf8
        | D::LargeUtf8
        | D::Utf8View
        | D::Binary
        | D::LargeBinary
        | D::BinaryView
        | D::FixedSizeBinary(_)
        | D::Date32
        | D::Date64
        | D::Time32(_)
        | D::Time64(_)
        | D::Timestamp(..)
        | D::Duration(_)
        | D::Interval(_) => true,
        D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) => decodable(f.data_type()),
        D::Struct(fields) => fields.iter().all(|f| decodable(f.data_type())),
        D::Map(entries, _) => decodable(entries.data_type()),
        D::Dictionary(_, values) => decodable(values),
        D::Union(fields, _) => fields.iter().all(|(_, f)| decodable(f.data_type())),
        _ => false,
    }
}

fn prim<T: ArrowPrimitiveType>(a: &dyn Array, row: usize) -> T::Native {
    a.as_primitive::<T>().value(row)
}

/// One non-null value of a decodable array.
fn value_at(a: &dyn Array, row: usize, tz: bool) -> Value {
    use DataType as D;
    match a.data_type() {
        D::Null => Value::Null,
        D::Boolean => Value::Bool(
            a.as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|b| b.value(row)),
        ),
        D::Int8 => Value::Int(prim::<Int8Type>(a, row).into()),
        D::Int16 => Value::Int(prim::<Int16Type>(a, row).into()),
        D::Int32 => Value::Int(prim::<Int32Type>(a, row).into()),
        D::Int64 => Value::Int(prim::<Int64Type>(a, row)),
        D::UInt8 => Value::Int(prim::<UInt8Type>(a, row).into()),
        D::UInt16 => Value::Int(prim::<UInt16Type>(a, row).into()),
        D::UInt32 => Value::Int(prim::<UInt32Type>(a, row).into()),
        D::UInt64 => {
            let v = prim::<UInt64Type>(a, row);
            i64::try_from(v)
                .map(Value::Int)
                .unwrap_or(Value::BigInt(v.into()))
        }
        D::Float16 => Value::Float(f64::from(prim::<Float16Type>(a, row))),
        D::Float32 => Value::Float(prim::<Float32Type>(a, row).into()),
        D::Float64 => Value::Float(prim::<Float64Type>(a, row)),
        D::Decimal128(_, scale) => {
            let v = a
                .as_any()
                .downcast_ref::<Decimal128Array>()
                .map(|d| d.value(row))
                .unwrap_or_default();
            if *scale == 0 {
                Value::BigInt(v)
            } else {
                Value::Decimal(decimal_text(&v.to_string(), *scale))
            }
        }
        D::Decimal256(_, scale) => {
            let v = a
                .as_any()
                .downcast_ref::<Decimal256Array>()
                .map(|d| d.value(row).to_string())
                .unwrap_or_default();
            Value::Decimal(decimal_text(&v, *scale))
        }
        D::Utf8 => Value::Text(a.as_string::<i32>().value(row).to_string()),
        D::LargeUtf8 => Value::Text(a.as_string::<i64>().value(row).to_string()),
        D::Utf8View => Value::Text(a.as_string_view().value(row).to_string()),
        D::Binary => Value::Blob(a.as_binary::<i32>().value(row).to_vec()),
        D::LargeBinary => Value::Blob(a.as_binary::<i64>().value(row).to_vec()),
        D::BinaryView => Value::Blob(a.as_binary_view().value(row).to_vec()),
        D::FixedSizeBinary(16) => {
            let bytes = a
                .as_any()
                .downcast_ref::<FixedSizeBinaryArray>()
                .map(|b| b.value(row).to_vec())
                .unwrap_or_default();
            Value::Text(uuid_text(&bytes))
        }
        D::FixedSizeBinary(_) => Value::Blob(
            a.as_any()
                .downcast_ref::<FixedSizeBinaryArray>()
                .map(|b| b.value(row).to_vec())
                .unwrap_or_default(),
        ),
        D::Date32 => date(prim::<Date32Type>(a, row)),
        D::Date64 => date((prim::<Date64Type>(a, row) / 86_400_000) as i32),
        D::Time32(TimeUnit::Second) => {
            time(i64::from(prim::<Time32SecondType>(a, row)) * 1_000_000_000)
        }
        D::Time32(_) => time(i64::from(prim::<Time32MillisecondType>(a, row)) * 1_000_000),
        D::Time64(TimeUnit::Nanosecond) => time(prim::<Time64NanosecondType>(a, row)),
        D::Time64(_) => time(prim::<Time64MicrosecondType>(a, row) * 1_000),
        D::Timestamp(unit, zone) => {
            let raw = match unit {
                TimeUnit::Second => prim::<TimestampSecondType>(a, row),
                TimeUnit::Millisecond => prim::<TimestampMillisecondType>(a, row),
                TimeUnit::Microsecond => prim::<TimestampMicrosecondType>(a, row),
                TimeUnit::Nanosecond => prim::<TimestampNanosecondType>(a, row),
            };
            timestamp(*unit, raw, tz || zone.is_some())
        }
        D::Duration(unit) => {
            let nanos = match unit {
                TimeUnit::Second => {
                    prim::<DurationSecondType>(a, row).saturating_mul(1_000_000_000)
                }
                TimeUnit::Millisecond => {
                    prim::<DurationMillisecondType>(a, row).saturating_mul(1_000_000)
                }
                TimeUnit::Microsecond => {
                    prim::<DurationMicrosecondType>(a, row).saturating_mul(1_000)
                }
                TimeUnit::Nanosecond => prim::<DurationNanosecondType>(a, row),
            };
            Value::Other(interval_text(0, 0, nanos))
        }
        D::Interval(_) => Value::Other(interval(a, row)),
        D::Dictionary(..) => {
            let dict = a.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            value_at(dict.values().as_ref(), key, tz)
        }
        D::List(_)
        | D::LargeList(_)
        | D::FixedSizeList(..)
        | D::Struct(_)
        | D::Map(..)
        | D::Union(..) => {
            let mut out = String::new();
            write_json(a, row, &mut out);
            Value::Json(out)
        }
        _ => Value::Other(String::new()),
    }
}

/// `digits` (an integer, maybe negative) with `scale` decimal places.
fn decimal_text(digits: &str, scale: i8) -> String {
    if scale <= 0 {
        return digits.to_string();
    }
    let scale = scale as usize;
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits),
    };
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

fn date(days: i32) -> Value {
    match days {
        DATE_INFINITY => Value::Other("infinity".into()),
        d if d == -DATE_INFINITY => Value::Other("-infinity".into()),
        d => NaiveDate::from_ymd_opt(1970, 1, 1)
            .and_then(|epoch| epoch.checked_add_signed(chrono::Duration::days(d.into())))
            .map(Value::Date)
            .unwrap_or_else(|| Value::Other(far_date(d.into()))),
    }
}

/// A date beyond chrono's range, the way DuckDB writes it:
/// `5877642-06-25 (BC)`. Proleptic Gregorian calendar (H. Hinnant's
/// days-to-civil algorithm).
fn far_date(days: i64) -> String {
    let (year, month, day) = crate::source::value::civil(days);
    if year <= 0 {
        format!("{:04}-{month:02}-{day:02} (BC)", 1 - year)
    } else {
        format!("{year:04}-{month:02}-{day:02}")
    }
}

/// A timestamp beyond chrono's range, from microseconds since 1970.
fn far_timestamp(micros: i128) -> String {
    let day_us: i128 = 86_400_000_000;
    let days = micros.div_euclid(day_us) as i64;
    let rest = micros.rem_euclid(day_us) as i64;
    let date = far_date(days);
    let time = interval_text(0, 0, rest * 1_000);
    match date.strip_suffix(" (BC)") {
        Some(d) => format!("{d} (BC) {time}"),
        None => format!("{date} {time}"),
    }
}

fn time(nanos: i64) -> Value {
    let secs = nanos.div_euclid(1_000_000_000);
    let frac = nanos.rem_euclid(1_000_000_000);
    NaiveTime::from_num_seconds_from_midnight_opt(secs as u32, frac as u32)
        .map(Value::Time)
        // 24:00:00 is a valid TIME in DuckDB but not in chrono.
        .unwrap_or_else(|| Value::Other(interval_text(0, 0, nanos)))
}

fn timestamp(unit: TimeUnit, raw: i64, tz: bool) -> Value {
    if raw == TIMESTAMP_INFINITY {
        return Value::Other("infinity".into());
    }
    if raw == -TIMESTAMP_INFINITY {
        return Value::Other("-infinity".into());
    }
    let t = match unit {
        TimeUnit::Second => DateTime::from_timestamp(raw, 0),
        TimeUnit::Millisecond => DateTime::from_timestamp_millis(raw),
        TimeUnit::Microsecond => DateTime::from_timestamp_micros(raw),
        TimeUnit::Nanosecond => Some(DateTime::from_timestamp_nanos(raw)),
    };
    match t {
        Some(t) if tz => Value::TimestampTz(t),
        Some(t) => Value::Timestamp(t.naive_utc()),
        None => {
            let micros = match unit {
                TimeUnit::Second => i128::from(raw) * 1_000_000,
                TimeUnit::Millisecond => i128::from(raw) * 1_000,
                TimeUnit::Microsecond => i128::from(raw),
                TimeUnit::Nanosecond => i128::from(raw) / 1_000,
            };
            Value::Other(far_timestamp(micros))
        }
    }
}

fn interval(a: &dyn Array, row: usize) -> String {
    use duckdb::arrow::datatypes::IntervalUnit;
    match a.data_type() {
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = prim::<IntervalMonthDayNanoType>(a, row);
            interval_text(v.months, v.days, v.nanoseconds)
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = prim::<IntervalDayTimeType>(a, row);
            interval_text(0, v.days, i64::from(v.milliseconds) * 1_000_000)
        }
        _ => interval_text(prim::<IntervalYearMonthType>(a, row), 0, 0),
    }
}

/// DuckDB's own wording: `1 year 2 months 3 days 04:05:06.5`.
pub(super) fn interval_text(months: i32, days: i32, nanos: i64) -> String {
    let mut parts = Vec::new();
    let (years, months) = (months / 12, months % 12);
    let plural = |n: i64, what: &str| {
        if n.abs() == 1 {
            format!("{n} {what}")
        } else {
            format!("{n} {what}s")
        }
    };
    if years != 0 {
        parts.push(plural(years.into(), "year"));
    }
    if months != 0 {
        parts.push(plural(months.into(), "month"));
    }
    if days != 0 {
        parts.push(plural(days.into(), "day"));
    }
    if nanos != 0 || parts.is_empty() {
        let sign = if nanos < 0 { "-" } else { "" };
        let n = nanos.unsigned_abs();
        let secs = n / 1_000_000_000;
        let frac = n % 1_000_000_000;
        let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
        let mut text = format!("{sign}{h:02}:{m:02}:{s:02}");
        if frac != 0 {
            let digits = format!("{:09}", frac);
            let _ = write!(text, ".{}", digits.trim_end_matches('0'));
        }
        parts.push(text);
    }
    parts.join(" ")
}

fn uuid_text(b: &[u8]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    if hex.len() != 32 {
        return hex;
    }
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Writes one value as JSON: numbers as numbers (decimals digit for
/// digit), text as strings, nested values as arrays and objects.
fn write_json(a: &dyn Array, row: usize, out: &mut String) {
    use DataType as D;
    if a.is_null(row) {
        out.push_str("null");
        return;
    }
    match a.data_type() {
        D::List(_) => {
            let list = a.as_list::<i32>();
            write_items(&list.value(row), out);
        }
        D::LargeList(_) => {
            let list = a.as_list::<i64>();
            write_items(&list.value(row), out);
        }
        D::FixedSizeList(..) => {
            let list = a.as_fixed_size_list();
            write_items(&list.value(row), out);
        }
        D::Struct(fields) => {
            let s = a.as_struct();
            out.push('{');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(f.name(), out);
                out.push(':');
                write_json(s.column(i).as_ref(), row, out);
            }
            out.push('}');
        }
        D::Map(..) => {
            let map = a.as_map();
            let entries = map.value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            out.push('{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.push(',');
                }
                let key = match value_at(keys.as_ref(), i, false) {
                    Value::Text(s) => s,
                    v => v.to_text(),
                };
                json_string(&key, out);
                out.push(':');
                write_json(values.as_ref(), i, out);
            }
            out.push('}');
        }
        D::Union(..) => {
            let u = a.as_union();
            let child = u.child(u.type_id(row));
            write_json(child.as_ref(), u.value_offset(row), out);
        }
        _ => match value_at(a, row, false) {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Float(f) if !f.is_finite() => json_string(&f.to_string(), out),
            v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Decimal(_)) => {
                out.push_str(&v.to_text())
            }
            Value::Json(j) => out.push_str(&j),
            v => json_string(&v.to_text(), out),
        },
    }
}

fn write_items(items: &Arc<dyn Array>, out: &mut String) {
    out.push('[');
    for i in 0..items.len() {
        if i > 0 {
            out.push(',');
        }
        write_json(items.as_ref(), i, out);
    }
    out.push(']');
}

fn json_string(s: &str, out: &mut String) {
    out.push_str(&serde_json::Value::String(s.to_string()).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_keep_their_scale() {
        assert_eq!(decimal_text("1250", 2), "12.50");
        assert_eq!(decimal_text("-5", 3), "-0.005");
        assert_eq!(decimal_text("42", 0), "42");
    }

    #[test]
    fn intervals_read_like_duckdb() {
        assert_eq!(interval_text(14, 3, 0), "1 year 2 months 3 days");
        assert_eq!(interval_text(0, 0, 5_500_000_000), "00:00:05.5");
        assert_eq!(interval_text(0, 1, -3_600_000_000_000), "1 day -01:00:00");
        assert_eq!(interval_text(0, 0, 0), "00:00:00");
    }

    #[test]
    fn dates_beyond_chrono_read_like_duckdb() {
        assert_eq!(far_date(0), "1970-01-01");
        assert_eq!(far_date(-2_147_483_646), "5877642-06-25 (BC)");
        assert_eq!(far_date(2_147_483_646), "5881580-07-10");
        assert_eq!(
            far_timestamp(-9_223_372_022_400_000_000),
            "290309-12-22 (BC) 00:00:00"
        );
    }

    #[test]
    fn infinities_are_words() {
        assert_eq!(date(DATE_INFINITY), Value::Other("infinity".into()));
        assert_eq!(date(-DATE_INFINITY), Value::Other("-infinity".into()));
        assert_eq!(
            timestamp(TimeUnit::Microsecond, -TIMESTAMP_INFINITY, false),
            Value::Other("-infinity".into())
        );
    }
}
