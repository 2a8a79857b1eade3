//! How each column of a result reads for a chart: numbers, times (typed,
//! or text such as SQLite's `strftime('%Y-%m', …)` months), categories,
//! or nothing at all (only NULLs). Pure.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

use super::recording::{date_seconds, Cell, Recording, TimeFlavor};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Number,
    Time(TimeFlavor),
    /// Text, booleans and anything else: labels.
    Category,
    /// Only NULLs.
    Empty,
}

/// One column as the kind chooser sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnInfo {
    /// Its position in the result.
    pub index: usize,
    pub name: String,
    pub class: Class,
    /// Numbers that only ever grow (a year, an hour, a step): an x axis.
    pub ordered: bool,
    /// Named `id` or `…_id`: a number that names things, not a measure.
    pub id_like: bool,
}

impl ColumnInfo {
    /// A number that measures something (not an id).
    pub fn is_measure(&self) -> bool {
        self.class == Class::Number && !self.id_like
    }

    /// Labels: text, or ids.
    pub fn is_label(&self) -> bool {
        self.class == Class::Category || (self.class == Class::Number && self.id_like)
    }

    pub fn is_time(&self) -> bool {
        matches!(self.class, Class::Time(_))
    }
}

/// Every column of `rec`, described.
pub fn describe(rec: &Recording) -> Vec<ColumnInfo> {
    rec.columns()
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let cells = rec.cells(index);
            let class = classify(cells, rec.flavor(index));
            let lower = column.name.to_ascii_lowercase();
            ColumnInfo {
                index,
                name: column.name.clone(),
                class,
                ordered: class == Class::Number && increasing(cells),
                id_like: lower == "id" || lower.ends_with("_id"),
            }
        })
        .collect()
}

fn classify(cells: &[Cell], typed: Option<TimeFlavor>) -> Class {
    let (mut nums, mut times, mut texts, mut text_flavor) = (0usize, 0usize, 0usize, None);
    let mut all_text_times = true;
    for cell in cells {
        match cell {
            Cell::Null => {}
            Cell::Num(_) => nums += 1,
            Cell::Time(_) => times += 1,
            Cell::Text(t) => {
                texts += 1;
                if all_text_times {
                    match parse_time(t) {
                        Some((_, flavor)) => text_flavor = finer(text_flavor, flavor),
                        None => all_text_times = false,
                    }
                }
            }
        }
    }
    match (nums, times, texts) {
        (0, 0, 0) => Class::Empty,
        (_, 0, 0) => Class::Number,
        (0, _, 0) => Class::Time(typed.unwrap_or(TimeFlavor::DateTime)),
        (0, 0, _) if all_text_times => Class::Time(text_flavor.unwrap_or(TimeFlavor::Date)),
        _ => Class::Category,
    }
}

/// The finer of two flavors (a month column with one full date reads as dates).
fn finer(a: Option<TimeFlavor>, b: TimeFlavor) -> Option<TimeFlavor> {
    let rank = |f: TimeFlavor| match f {
        TimeFlavor::Month => 0,
        TimeFlavor::Date => 1,
        TimeFlavor::DateTime | TimeFlavor::TimeOfDay => 2,
    };
    Some(match a {
        Some(a) if rank(a) >= rank(b) => a,
        _ => b,
    })
}

fn increasing(cells: &[Cell]) -> bool {
    let mut last: Option<f64> = None;
    let mut n = 0;
    for cell in cells {
        if let Cell::Num(v) = cell {
            if last.is_some_and(|l| *v <= l) {
                return false;
            }
            last = Some(*v);
            n += 1;
        }
    }
    n >= 2
}

/// A cell as a position on an axis of `class`: numbers, times (typed or
/// parsed from text); `None` for NULLs and labels.
pub fn position(cell: &Cell, class: Class) -> Option<f64> {
    match (cell, class) {
        (Cell::Num(v), _) | (Cell::Time(v), _) => Some(*v),
        (Cell::Text(t), Class::Time(_)) => parse_time(t).map(|(s, _)| s),
        _ => None,
    }
}

/// A cell as a label: text as it is, numbers in their plain form, NULL as `NULL`.
pub fn label(cell: &Cell) -> String {
    match cell {
        Cell::Null => "NULL".into(),
        Cell::Num(v) => super::axis::plain(*v),
        Cell::Time(v) => super::axis::time_label(*v, TimeFlavor::DateTime, 0.0),
        Cell::Text(t) => t.to_string(),
    }
}

/// Text that reads as a time: `2025-01`, `2025-01-31`, `2025-01-31
/// 10:00[:00[.123]]`, with `T` and `Z`/offsets too. Seconds since 1970.
pub fn parse_time(text: &str) -> Option<(f64, TimeFlavor)> {
    let t = text.trim();
    let b = t.as_bytes();
    // Cheap rejection of ordinary text: `dddd-dd…`.
    if b.len() < 7 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    match b.len() {
        7 => NaiveDate::parse_from_str(&format!("{t}-01"), "%Y-%m-%d")
            .ok()
            .map(|d| (date_seconds(&d), TimeFlavor::Month)),
        10 => NaiveDate::parse_from_str(t, "%Y-%m-%d")
            .ok()
            .map(|d| (date_seconds(&d), TimeFlavor::Date)),
        _ => {
            let naive = [
                "%Y-%m-%d %H:%M:%S%.f",
                "%Y-%m-%dT%H:%M:%S%.f",
                "%Y-%m-%d %H:%M",
            ]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok());
            let utc = naive.map(|n| n.and_utc()).or_else(|| {
                DateTime::parse_from_rfc3339(t)
                    .ok()
                    .map(|d| d.with_timezone(&chrono::Utc))
            })?;
            let secs = utc.timestamp() as f64 + f64::from(utc.timestamp_subsec_nanos()) / 1e9;
            Some((secs, TimeFlavor::DateTime))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Column, Value};

    fn rec(columns: &[(&str, &str)], rows: Vec<Vec<Value>>) -> Recording {
        let cols: Vec<Column> = columns.iter().map(|(n, t)| Column::new(*n, *t)).collect();
        let mut r = Recording::new(&cols, None);
        for row in rows {
            r.push(&row);
        }
        r
    }

    #[test]
    fn classes_from_values() {
        let r = rec(
            &[
                ("month", ""),
                ("revenue", "REAL"),
                ("country", "TEXT"),
                ("customer_id", "INTEGER"),
                ("nothing", ""),
                ("mixed", ""),
            ],
            vec![
                vec![
                    Value::Text("2025-01".into()),
                    Value::Float(-3.5),
                    Value::Text("DE".into()),
                    Value::Int(7),
                    Value::Null,
                    Value::Int(1),
                ],
                vec![
                    Value::Text("2025-02".into()),
                    Value::Null,
                    Value::Null,
                    Value::Int(3),
                    Value::Null,
                    Value::Text("a".into()),
                ],
            ],
        );
        let d = describe(&r);
        let classes: Vec<Class> = d.iter().map(|c| c.class).collect();
        assert_eq!(
            classes,
            [
                Class::Time(TimeFlavor::Month),
                Class::Number,
                Class::Category,
                Class::Number,
                Class::Empty,
                Class::Category
            ]
        );
        assert!(d[3].id_like && d[3].is_label() && !d[3].is_measure());
        assert!(d[1].is_measure());
        // One value is not an order.
        assert!(!d[1].ordered);
    }

    #[test]
    fn ordered_numbers() {
        let r = rec(
            &[("year", "INTEGER")],
            (2019..2025).map(|y| vec![Value::Int(y)]).collect(),
        );
        assert!(describe(&r)[0].ordered);
        let r = rec(
            &[("n", "INTEGER")],
            [3, 1, 2].iter().map(|y| vec![Value::Int(*y)]).collect(),
        );
        assert!(!describe(&r)[0].ordered);
    }

    #[test]
    fn times_in_text() {
        assert_eq!(parse_time("1970-01-02"), Some((86_400.0, TimeFlavor::Date)));
        assert_eq!(
            parse_time("1970-02"),
            Some((31.0 * 86_400.0, TimeFlavor::Month))
        );
        assert_eq!(
            parse_time("1970-01-01 00:01:00"),
            Some((60.0, TimeFlavor::DateTime))
        );
        assert_eq!(
            parse_time("1970-01-01T01:00:00+01:00"),
            Some((0.0, TimeFlavor::DateTime))
        );
        assert_eq!(parse_time("2025-13"), None);
        assert_eq!(parse_time("Berlin"), None);
        assert_eq!(parse_time("1234-x"), None);
    }
}
