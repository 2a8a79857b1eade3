//! A value too big for a bounded result is cut, not its row: where a result
//! is kept within a size limit (an MCP result, the preview the history
//! keeps for the model, a Lua program's shown table), a cell longer than
//! its share of the limit keeps its first bytes and a visible marker with
//! its whole size — `xxxx…(1.0 MB)` — and the row and its other columns
//! stay. Pure functions; nothing here knows who shows the result.

use crate::source::Value;

/// The share of a result's byte limit one value may take: a value longer
/// than an eighth of the limit is cut, so one long column leaves room for
/// the other columns and the next rows.
pub const VALUE_SHARE: usize = 8;

/// The shortest a cut value is (its first bytes, then the marker).
const MIN_CUT: usize = 32;

/// `1000000` → `1.0 MB`: a size for people, in decimal units.
pub fn size_label(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1000.0;
    let mut unit = 0;
    while size >= 999.95 && unit + 1 < UNITS.len() {
        size /= 1000.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// The bytes a cell's text form takes, for the kinds that can be long;
/// `None` for the ones that are short by nature (numbers, dates, …).
fn long_kind_len(v: &Value) -> Option<usize> {
    match v {
        Value::Text(s) | Value::Json(s) | Value::Other(s) | Value::Decimal(s) => Some(s.len()),
        // `\x` and two hex digits a byte.
        Value::Blob(b) => Some(2 + 2 * b.len()),
        _ => None,
    }
}

/// `v` cut to at most about `max` bytes of text with the marker, when it is
/// longer; `None` when it fits as it is.
pub fn cut_value(v: &Value, max: usize) -> Option<Value> {
    let len = long_kind_len(v)?;
    if len <= max {
        return None;
    }
    let size = match v {
        Value::Blob(b) => b.len(),
        _ => len,
    };
    let marker = format!("…({})", size_label(size));
    let keep = max.saturating_sub(marker.len()).max(MIN_CUT);
    if keep >= len {
        return None;
    }
    let text = match v {
        Value::Text(s) | Value::Json(s) | Value::Other(s) | Value::Decimal(s) => {
            crate::clip::head(s, keep).to_string()
        }
        other => {
            let mut text = other.to_text();
            let at = crate::clip::head(&text, keep).len();
            text.truncate(at);
            text
        }
    };
    Some(Value::Text(text + &marker))
}

/// `row` with every value longer than `max` bytes cut; how many were cut.
pub fn cut_row(row: Vec<Value>, max: usize) -> (Vec<Value>, usize) {
    let mut cut = 0;
    let row = row
        .into_iter()
        .map(|v| match cut_value(&v, max) {
            Some(short) => {
                cut += 1;
                short
            }
            None => v,
        })
        .collect();
    (row, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_label(999), "999 B");
        assert_eq!(size_label(1000), "1.0 KB");
        assert_eq!(size_label(262_144), "262.1 KB");
        assert_eq!(size_label(999_999), "1.0 MB");
        assert_eq!(size_label(1_000_000), "1.0 MB");
        assert_eq!(size_label(20_500_000_000), "20.5 GB");
    }

    #[test]
    fn a_long_value_keeps_its_start_and_says_how_big_it_was() {
        let big = Value::Text("x".repeat(1_000_000));
        let Some(Value::Text(cut)) = cut_value(&big, 256) else {
            panic!("not cut");
        };
        assert_eq!(
            cut,
            format!("{}…(1.0 MB)", "x".repeat(256 - "…(1.0 MB)".len()))
        );
        assert_eq!(cut.len(), 256);
        // Short values and other kinds stay as they are.
        assert_eq!(cut_value(&Value::Text("short".into()), 256), None);
        assert_eq!(cut_value(&Value::Int(i64::MAX), 4), None);
        assert_eq!(cut_value(&Value::Null, 0), None);
    }

    #[test]
    fn cuts_fall_on_character_boundaries_and_blobs_count_their_bytes() {
        let Some(Value::Text(cut)) = cut_value(&Value::Text("é".repeat(100)), 60) else {
            panic!("not cut");
        };
        assert!(cut.starts_with("éé"), "{cut}");
        assert!(cut.ends_with("…(200 B)"), "{cut}");
        assert!(cut.len() <= 60, "{cut}");
        let Some(Value::Text(cut)) = cut_value(&Value::Blob(vec![0xab; 5000]), 64) else {
            panic!("not cut");
        };
        assert!(cut.starts_with("\\xabab"), "{cut}");
        assert!(cut.ends_with("…(5.0 KB)"), "{cut}");
    }

    #[test]
    fn a_row_keeps_its_other_columns() {
        let row = vec![Value::Text("y".repeat(5000)), Value::Int(7), Value::Null];
        let (row, cut) = cut_row(row, 100);
        assert_eq!(cut, 1);
        assert_eq!(row[1], Value::Int(7));
        assert_eq!(row[2], Value::Null);
        let Value::Text(first) = &row[0] else {
            panic!("{row:?}")
        };
        assert!(first.ends_with("…(5.0 KB)"), "{first}");
    }
}
