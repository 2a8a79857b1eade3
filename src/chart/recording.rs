//! [`Recording`]: a bounded copy of one result, as a chart needs it —
//! typed cells per column (numbers and times as `f64`, text cut short).
//! Memory stays bounded whatever the result's size: past a limit every
//! other kept row goes and from then on only every 2nd (4th, 8th, …) row is
//! kept, so a big result is sampled evenly from start to end, never held
//! whole, and the chart can say exactly how it was reduced.

use chrono::{Datelike, NaiveDate, Timelike};

use crate::source::{Column, Value};

/// Cells kept at most (rows × columns), about 24 MB.
pub const MAX_CELLS: usize = 1_000_000;
/// Rows kept at least, however wide the result.
const MIN_ROWS: usize = 1_000;
/// Characters of a text cell kept (labels never need more).
const MAX_TEXT: usize = 120;

/// How a time column reads, for its labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFlavor {
    /// `2025-01` (a month as text).
    Month,
    /// `2025-01-31`.
    Date,
    /// `2025-01-31 10:00:00`.
    DateTime,
    /// `10:00:00` (a time of day).
    TimeOfDay,
}

/// One kept cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// NULL, or a number that is not finite.
    Null,
    Num(f64),
    /// A typed date or time: seconds since 1970-01-01 (a time of day:
    /// since midnight).
    Time(f64),
    /// Anything else as text (cut to 120 characters).
    Text(Box<str>),
}

/// A result as a chart needs it, bounded.
#[derive(Debug, Clone)]
pub struct Recording {
    /// What the result answered (the question), for the chart's title.
    pub title: Option<String>,
    columns: Vec<Column>,
    /// Column-major cells of the kept rows.
    cells: Vec<Vec<Cell>>,
    /// Per column: the flavor of its typed time values, if any.
    flavors: Vec<Option<TimeFlavor>>,
    /// Rows received.
    seen: u64,
    /// Every `stride`-th row is kept.
    stride: u64,
    /// Rows kept at most before thinning.
    limit: usize,
    /// The result had more rows than were read.
    more: bool,
}

impl Recording {
    /// An empty recording of a result with `columns`.
    pub fn new(columns: &[Column], title: Option<String>) -> Recording {
        let limit = (MAX_CELLS / columns.len().max(1)).max(MIN_ROWS);
        Recording::with_limit(columns, title, limit)
    }

    /// [`Recording::new`] keeping at most `limit` rows before thinning.
    pub fn with_limit(columns: &[Column], title: Option<String>, limit: usize) -> Recording {
        Recording {
            title,
            columns: columns.to_vec(),
            cells: vec![Vec::new(); columns.len()],
            flavors: vec![None; columns.len()],
            seen: 0,
            stride: 1,
            limit: limit.max(2),
            more: false,
        }
    }

    /// One row of the result.
    pub fn push(&mut self, row: &[Value]) {
        let index = self.seen;
        self.seen += 1;
        if !index.is_multiple_of(self.stride) {
            return;
        }
        for (i, column) in self.cells.iter_mut().enumerate() {
            let value = row.get(i).unwrap_or(&Value::Null);
            let (cell, flavor) = cell_of(value);
            if flavor.is_some() {
                self.flavors[i] = flavor;
            }
            column.push(cell);
        }
        if self.kept() > self.limit {
            self.thin();
        }
    }

    /// Keeps every other kept row; from now on every `2 × stride`-th row.
    fn thin(&mut self) {
        for column in &mut self.cells {
            let mut i = 0;
            column.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        self.stride *= 2;
    }

    /// The result is over; `more` when it had rows that were not read.
    pub fn finish(&mut self, more: bool) {
        self.more = more;
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The kept cells of column `i`, in result order.
    pub fn cells(&self, i: usize) -> &[Cell] {
        self.cells.get(i).map_or(&[], Vec::as_slice)
    }

    /// The flavor of column `i`'s typed time values, if it has any.
    pub fn flavor(&self, i: usize) -> Option<TimeFlavor> {
        self.flavors.get(i).copied().flatten()
    }

    /// Rows received.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Rows kept.
    pub fn kept(&self) -> usize {
        self.cells.first().map_or(0, Vec::len)
    }

    /// Every `stride`-th row was kept (1: all of them).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// The result had more rows than were read.
    pub fn more(&self) -> bool {
        self.more
    }
}

fn cell_of(value: &Value) -> (Cell, Option<TimeFlavor>) {
    let num = |f: f64| {
        if f.is_finite() {
            Cell::Num(f)
        } else {
            Cell::Null
        }
    };
    match value {
        Value::Null => (Cell::Null, None),
        Value::Int(i) => (Cell::Num(*i as f64), None),
        Value::BigInt(i) => (num(*i as f64), None),
        Value::Float(f) => (num(*f), None),
        Value::Decimal(s) => match s.parse::<f64>() {
            Ok(f) => (num(f), None),
            Err(_) => (text(s), None),
        },
        Value::Date(d) => (Cell::Time(date_seconds(d)), Some(TimeFlavor::Date)),
        Value::Timestamp(t) => (
            Cell::Time(date_seconds(&t.date()) + day_seconds(&t.time())),
            Some(TimeFlavor::DateTime),
        ),
        Value::TimestampTz(t) => {
            let t = t.naive_utc();
            (
                Cell::Time(date_seconds(&t.date()) + day_seconds(&t.time())),
                Some(TimeFlavor::DateTime),
            )
        }
        Value::Time(t) => (Cell::Time(day_seconds(t)), Some(TimeFlavor::TimeOfDay)),
        Value::Text(s) | Value::Json(s) | Value::Other(s) => (text(s), None),
        Value::Bool(_) | Value::Blob(_) => (text(&value.to_text()), None),
    }
}

fn text(s: &str) -> Cell {
    let cut: String = s.chars().take(MAX_TEXT).collect();
    Cell::Text(cut.into_boxed_str())
}

/// Seconds from 1970-01-01 to `d`.
pub fn date_seconds(d: &NaiveDate) -> f64 {
    (d.num_days_from_ce() - 719_163) as f64 * 86_400.0
}

fn day_seconds(t: &chrono::NaiveTime) -> f64 {
    t.num_seconds_from_midnight() as f64 + t.nanosecond() as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(n: i64, limit: usize) -> Recording {
        let mut r = Recording::with_limit(&[Column::new("n", "INTEGER")], None, limit);
        for i in 0..n {
            r.push(&[Value::Int(i)]);
        }
        r
    }

    #[test]
    fn a_small_result_is_kept_whole() {
        let r = ints(10, 100);
        assert_eq!((r.seen(), r.kept(), r.stride()), (10, 10, 1));
        assert_eq!(r.cells(0)[9], Cell::Num(9.0));
    }

    #[test]
    fn a_big_result_is_thinned_evenly_and_stays_bounded() {
        let r = ints(1_000_000, 1_000);
        assert_eq!(r.seen(), 1_000_000);
        assert!(r.kept() <= 1_000, "{}", r.kept());
        assert_eq!(r.stride(), 1024);
        // Every kept row is a multiple of the stride, first to last.
        for (k, cell) in r.cells(0).iter().enumerate() {
            assert_eq!(*cell, Cell::Num((k as u64 * r.stride()) as f64));
        }
        assert_eq!(r.kept(), 1_000_000usize.div_ceil(1024));
    }

    #[test]
    fn typed_values_become_cells() {
        let columns = [
            Column::new("d", "DATE"),
            Column::new("x", "DECIMAL"),
            Column::new("s", "TEXT"),
        ];
        let mut r = Recording::new(&columns, Some("q".into()));
        let d = NaiveDate::from_ymd_opt(1970, 1, 2).unwrap();
        r.push(&[
            Value::Date(d),
            Value::Decimal("-12.50".into()),
            Value::Text("x".repeat(500)),
        ]);
        r.push(&[Value::Null, Value::Float(f64::NAN)]);
        assert_eq!(r.cells(0), [Cell::Time(86_400.0), Cell::Null]);
        assert_eq!(r.cells(1), [Cell::Num(-12.5), Cell::Null]);
        assert!(matches!(&r.cells(2)[0], Cell::Text(t) if t.len() == MAX_TEXT));
        assert_eq!(r.cells(2)[1], Cell::Null);
        assert_eq!(r.flavor(0), Some(TimeFlavor::Date));
        assert_eq!(r.flavor(1), None);
    }
}
