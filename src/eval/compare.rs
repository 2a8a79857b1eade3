//! Result comparison for `aiq eval`: decides whether the rows a model's SQL
//! returned are the rows the reference SQL returned, the way
//! execution-accuracy benchmarks judge text-to-SQL.
//!
//! Two results match when some mapping of columns makes their rows equal as
//! multisets (and, when the reference orders its rows, in that order too).
//! Columns are matched by their values, never by names or positions: a model
//! is free to alias columns and to list them in another order. Values are
//! equal across the types engines disagree on (an integer and a float, a date
//! and its ISO text, a number and its text in a CSV source), and numbers are
//! equal within a tolerance, since float sums depend on the order in which an
//! engine adds them up.
//!
//! Columns are paired by a backtracking search over the mappings whose
//! columns hold the same values, likeliest first and within a budget, so
//! that many columns with equal values (flags, zeros) stay cheap.
//!
//! Speed comes from hashing instead of comparing rows pair by pair. Every
//! cell is converted once to a compact `Canon` and hashed; numbers are
//! hashed by their value rounded on a `Grid` about a thousand times
//! coarser than the tolerance, so tolerably equal numbers nearly always hash
//! alike. Rows with equal hashes are then checked with the real tolerance.
//! The rare rows that hash apart although they are equal (a number fell on
//! the other side of a cell border) are hashed again on a shifted grid, then
//! sorted and walked side by side, and the last few are paired by a
//! bipartite matching.

use std::cmp::Ordering;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike};

use crate::source::Value;

/// How two results are compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The reference query orders its rows (ORDER BY), so order counts too.
    pub ordered: bool,
    /// The expected result's columns the reference orders by (indices into
    /// the expected columns). Rows equal on these may come in any order,
    /// since engines break ties differently. `None` with `ordered` asks for
    /// exactly the expected order.
    pub order_keys: Option<Vec<usize>>,
    /// Numbers are equal when `|a - b| <= tolerance * max(1, |a|, |b|)`:
    /// relative for large values, absolute near zero, where a sum that
    /// should cancel out leaves rounding noise like `5.55e-17`. Two
    /// integers (by type: not floats) compare exactly whatever the
    /// tolerance, so a count that is off by one is off.
    pub tolerance: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ordered: false,
            order_keys: None,
            tolerance: 1e-6,
        }
    }
}

/// Work allowed to the column search, in result cells: each mapping tried
/// hashes the whole result, so big results get fewer tries. Ties between
/// columns with equal values are usually settled by the first try anyway.
const SEARCH_WORK: usize = 2_000_000;
/// Column mappings tried at least and at most, whatever the result size.
const MIN_MAPPINGS: usize = 2;
const MAX_MAPPINGS: usize = 300;
/// Steps of the column search (partial mappings extended) before giving up;
/// bounds searches that dead-end before ever reaching a full mapping.
const MAX_SEARCH_STEPS: usize = 100_000;
/// Rows left over after hashing on two grids and the sorted walk that are
/// still paired up by a maximum matching (quadratic in their number);
/// beyond this many the results plainly differ and only the count matters.
const MAX_LEFTOVERS: usize = 64;
/// Longest rendering of expected values quoted in a reason.
const QUOTE_CHARS: usize = 40;

/// Compares the rows a query returned (`got`) with the rows of the reference
/// query (`want`). `Ok(())` when they match; otherwise one short line saying
/// why, result first and expected second ("12 rows vs 10 expected").
///
/// The column counts are passed separately because results may have no rows.
pub fn compare(
    got_columns: usize,
    got: &[Vec<Value>],
    want_columns: usize,
    want: &[Vec<Value>],
    options: &Options,
) -> Result<(), String> {
    if got_columns != want_columns {
        return Err(format!(
            "column count {got_columns} vs {want_columns} expected"
        ));
    }
    if got.len() != want.len() {
        return Err(format!("{} rows vs {} expected", got.len(), want.len()));
    }
    check_widths(got, got_columns, "result")?;
    check_widths(want, want_columns, "expected")?;
    let keys = if options.ordered {
        options.order_keys.as_deref()
    } else {
        None
    };
    if let Some(&k) = keys.and_then(|keys| keys.iter().find(|&&k| k >= want_columns)) {
        return Err(format!(
            "order key {k} is not a column index ({want_columns} columns)"
        ));
    }
    if want.is_empty() {
        return Ok(());
    }
    // A NaN or negative tolerance would make no number equal to itself.
    let tol = if options.tolerance >= 0.0 {
        options.tolerance
    } else {
        0.0
    };
    let grid = Grid::new(tol);
    let got_table = Table::new(got_columns, got, grid);
    let want_table = Table::new(want_columns, want, grid);

    let mut candidates = Candidates::new(&got_table, &want_table, tol);
    let mut search = Search::new(&got_table, &want_table, tol, options.ordered, keys);
    if let Some(w) = unmatched_column(&candidates.lists) {
        return unmatched(&search, &candidates.lists, w, got, want);
    }
    let ambiguous = candidates.ambiguous();
    if ambiguous {
        candidates.order(&got_table, &want_table);
    }
    let lists = &candidates.lists;
    // Most constrained columns first, so dead ends show up early.
    let mut order: Vec<usize> = (0..want_columns).collect();
    order.sort_by_key(|&w| (lists[w].len(), w));
    let mut mapping = vec![0; want_columns];
    let mut used = vec![false; got_columns];
    if search.explore(0, &order, lists, ambiguous, &mut mapping, &mut used) {
        return Ok(());
    }
    // No mapping matched: say which column is at fault, if one is.
    candidates.refine(&got_table, &want_table, tol);
    if let Some(w) = unmatched_column(&candidates.lists) {
        return unmatched(&search, &candidates.lists, w, got, want);
    }
    let mut why = match &search.best {
        Some(outcome) => outcome.describe(got, want, true),
        None => "no mapping of columns was tried".to_string(),
    };
    if search.exhausted {
        why.push_str(&format!(
            " (column matching gave up after {} mappings)",
            search.leaves
        ));
    }
    Err(why)
}

/// The reason when expected column `w` has no column with its values:
/// which column is at fault, and how many rows differ when the other
/// columns leave no doubt about the mapping (with several candidates for a
/// column, a count under a guessed mapping would mislead). The rows have
/// the last word: should they match under that mapping after all, the
/// results match.
fn unmatched(
    search: &Search,
    candidates: &[Vec<usize>],
    w: usize,
    got: &[Vec<Value>],
    want: &[Vec<Value>],
) -> Result<(), String> {
    let width = candidates.len();
    let column = |missing| {
        format!(
            "no column matches expected column {} ({})",
            w + 1,
            column_sample(want, w, missing)
        )
    };
    if candidates.iter().any(|c| c.len() > 1) {
        return Err(column(None));
    }
    let owner = max_matching(candidates, width);
    let mut matched: Vec<Option<usize>> = vec![None; width];
    for (g, w) in owner.iter().enumerate() {
        if let Some(w) = *w {
            matched[w] = Some(g);
        }
    }
    let mut free: Vec<usize> = (0..width).filter(|&g| owner[g].is_none()).collect();
    let mapping: Vec<usize> = matched
        .iter()
        .enumerate()
        .map(|(w, g)| match g {
            Some(g) => *g,
            // Unmatched expected columns take the remaining result columns,
            // the one at the same position if it is free.
            None => {
                let k = free.iter().position(|&g| g == w).unwrap_or(0);
                if k < free.len() {
                    free.remove(k)
                } else {
                    w
                }
            }
        })
        .collect();
    match search.check(&mapping) {
        Outcome::Match => Ok(()),
        // Every row differs: the column is wrong, not some rows.
        Outcome::Rows(d) if width > 1 && d.differ >= want.len() => Err(format!(
            "{}; {}",
            Outcome::Rows(d).describe(got, want, false),
            column(d.missing)
        )),
        outcome => Err(outcome.describe(got, want, true)),
    }
}

/// Rejects rows whose length disagrees with the declared column count, which
/// would otherwise read past a row or mix cells of neighbouring rows.
fn check_widths(rows: &[Vec<Value>], columns: usize, side: &str) -> Result<(), String> {
    match rows.iter().position(|r| r.len() != columns) {
        Some(i) => Err(format!(
            "{side} row {} has {} values for {columns} columns",
            i + 1,
            rows[i].len()
        )),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Canonical cells

/// A cell reduced to what equality cares about: every number is an exact
/// integer or a float, text that reads as a number, date, time or timestamp
/// becomes one, and timestamps with a time zone become UTC timestamps. Kept
/// at 24 bytes: rows are compared in random order, so the fewer cache
/// lines a row spans the better.
#[derive(Debug, Clone, Copy)]
enum Canon<'a> {
    Null,
    /// A value that is an integer by type (`Int`, `BigInt`, `Bool`, and
    /// decimals and text without a fraction). Two of these compare exactly,
    /// so counts and ids beyond f64 precision (or differing by one in a
    /// billion) are not equal by tolerance.
    Int(Exact),
    /// Any other number, NaN and zero normalized (`-0.0 == 0.0`).
    Float(f64),
    Date(NaiveDate),
    Time(NaiveTime),
    Stamp(NaiveDateTime),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// Number of [`Canon::rank`]s, for per-kind counts.
const KINDS: usize = 7;

impl Canon<'_> {
    /// [`Canon::rank`] of numbers.
    const NUM_RANK: usize = 1;

    /// Position of the kind in the sort order (and in per-kind counts);
    /// integers and floats are one kind, numbers.
    fn rank(&self) -> usize {
        match self {
            Canon::Null => 0,
            Canon::Int(_) | Canon::Float(_) => Canon::NUM_RANK,
            Canon::Date(_) => 2,
            Canon::Time(_) => 3,
            Canon::Stamp(_) => 4,
            Canon::Text(_) => 5,
            Canon::Blob(_) => 6,
        }
    }

    fn num(&self) -> Option<Num> {
        match self {
            Canon::Int(e) => Some(Num {
                value: e.to_f64(),
                exact: Some(*e),
            }),
            Canon::Float(f) => Some(Num {
                value: *f,
                exact: None,
            }),
            _ => None,
        }
    }
}

/// An `i128` as two 64-bit halves, which keeps [`Canon`] at 24 bytes (an
/// `i128` is 16-byte aligned). The derived order is the `i128` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Exact {
    hi: i64,
    lo: u64,
}

impl Exact {
    fn new(i: i128) -> Exact {
        Exact {
            hi: (i >> 64) as i64,
            lo: i as u64,
        }
    }

    /// The nearest float. Integers that fit 64 bits (nearly all) take the
    /// hardware conversion; `i128` to `f64` is a slow library call.
    fn to_f64(self) -> f64 {
        let small = self.lo as i64;
        if self.hi == small >> 63 {
            small as f64
        } else {
            ((i128::from(self.hi) << 64) | i128::from(self.lo)) as f64
        }
    }
}

/// A number as compared: its value, and its exact integer if it is one.
#[derive(Debug, Clone, Copy)]
struct Num {
    value: f64,
    exact: Option<Exact>,
}

fn int(i: i128) -> Canon<'static> {
    Canon::Int(Exact::new(i))
}

fn float(x: f64) -> Canon<'static> {
    Canon::Float(if x.is_nan() {
        f64::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x
    })
}

/// The grid numbers are rounded to for hashing and sorting. It is much
/// coarser than the tolerance, so two values within the tolerance rarely
/// fall on either side of a line between two cells; and rounding (not
/// truncating) puts round numbers (integers, halves, quarters) at the
/// centres of cells, not on their borders, where float noise like
/// `99.99999999999999` against `100` would split them.
#[derive(Debug, Clone, Copy)]
struct Grid {
    /// `2^bits`, where `bits` is the number of mantissa bits kept: the step
    /// is `2^-bits`, relative for `|x| >= 1` and absolute below 1,
    /// mirroring the tolerance's `max(1, ..)`.
    scale: f64,
    /// Mask keeping the top `bits` bits of the mantissa.
    mask: u64,
    /// Half a step in the bits of the mantissa, added to round.
    half: u64,
}

impl Grid {
    fn new(tolerance: f64) -> Grid {
        let step = (tolerance * 1024.0).max(2f64.powi(-40));
        let bits = (-step.log2()).floor().clamp(0.0, 52.0) as u32;
        let dropped = 52 - bits;
        Grid {
            scale: (1u64 << bits) as f64,
            mask: !((1u64 << dropped) - 1),
            half: if dropped == 0 {
                0
            } else {
                1u64 << (dropped - 1)
            },
        }
    }

    /// The nearest grid point, rounding magnitudes so the key is monotone in
    /// `x` (order by key is order by value) and noise around zero has one
    /// cell. (Below 1, `a * scale + 0.5 <= 2^52 + 0.5`, so the integer
    /// conversion truncates exactly, and faster than `f64::floor` without
    /// SSE4.1; above, adding half a step to the bits carries into the
    /// exponent as rounding should.)
    fn key(self, x: f64) -> f64 {
        if !x.is_finite() {
            return x;
        }
        let a = x.abs();
        let q = if a < 1.0 {
            ((a * self.scale + 0.5) as u64) as f64 / self.scale
        } else {
            f64::from_bits((a.to_bits() + self.half) & self.mask)
        };
        signed(q, x)
    }

    /// The grid point below (in magnitude): a grid whose cell borders are
    /// the centres of [`Grid::key`]'s cells, so two values close to a border
    /// of one are far from every border of the other. Only hashed, never
    /// sorted by.
    fn shifted(self, x: f64) -> f64 {
        if !x.is_finite() {
            return x;
        }
        let a = x.abs();
        let q = if a < 1.0 {
            ((a * self.scale) as u64) as f64 / self.scale
        } else {
            f64::from_bits(a.to_bits() & self.mask)
        };
        signed(q, x)
    }
}

/// `magnitude` with the sign of `x`, and zero always `+0.0`.
fn signed(magnitude: f64, x: f64) -> f64 {
    if magnitude == 0.0 {
        0.0
    } else if x < 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

fn canon(v: &Value) -> Canon<'_> {
    match v {
        Value::Null => Canon::Null,
        Value::Bool(b) => int(i128::from(*b)),
        Value::Int(i) => int(i128::from(*i)),
        Value::BigInt(i) => int(*i),
        Value::Float(f) => float(*f),
        Value::Decimal(s) => parse_number(s).unwrap_or(Canon::Text(s)),
        Value::Text(s) | Value::Json(s) | Value::Other(s) => parse_text(s),
        Value::Date(d) => Canon::Date(*d),
        Value::Time(t) => Canon::Time(*t),
        Value::Timestamp(t) => Canon::Stamp(*t),
        Value::TimestampTz(t) => Canon::Stamp(t.naive_utc()),
        Value::Blob(b) => Canon::Blob(b),
    }
}

/// Text as the value it spells, when it spells one exactly: engines return
/// numbers and dates as text (SQLite's `date()`, CSV columns read as
/// VARCHAR), and the reference may have typed values. Text with surrounding
/// spaces or in other formats stays text and is compared exactly.
fn parse_text(s: &str) -> Canon<'_> {
    let b = s.as_bytes();
    match b.first() {
        Some(b'0'..=b'9') => {
            if let Some(n) = parse_number(s) {
                return n;
            }
            if let Some(d) = parse_date(b) {
                return Canon::Date(d);
            }
            if let Some(t) = parse_stamp(b) {
                return Canon::Stamp(t);
            }
            if let Some(t) = parse_time(b) {
                return Canon::Time(t);
            }
        }
        Some(b'+' | b'-' | b'.') => {
            if let Some(n) = parse_number(s) {
                return n;
            }
            if s == "-Infinity" {
                return float(f64::NEG_INFINITY);
            }
        }
        // The forms aiq prints for non-finite floats.
        Some(b'N') if s == "NaN" => return float(f64::NAN),
        Some(b'I') if s == "Infinity" => return float(f64::INFINITY),
        _ => {}
    }
    Canon::Text(s)
}

/// A plain decimal number (`-12.50`, `3`, `.5`, `1e-3`); not `inf` or `nan`,
/// which Rust's float parser would also take. Integers without exponent
/// (`3`, `3.00`) keep their exact value.
fn parse_number(s: &str) -> Option<Canon<'static>> {
    let b = s.as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let int_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_end = i;
    let mut digits = int_end - int_start;
    let mut whole = true;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            whole &= *c == b'0';
            i += 1;
        }
        digits += i - start;
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        whole = false;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    if whole {
        let int_part = &s[int_start..int_end];
        let magnitude = if int_part.is_empty() {
            Some(0)
        } else {
            int_part.parse::<i128>().ok()
        };
        if let Some(m) = magnitude {
            return Some(int(if negative { -m } else { m }));
        }
    }
    s.parse::<f64>().ok().map(float)
}

/// ASCII digits as a number; `None` if any byte is not a digit.
fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

/// `YYYY-MM-DD`.
fn parse_date(b: &[u8]) -> Option<NaiveDate> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = i32::try_from(digits(&b[..4])?).ok()?;
    NaiveDate::from_ymd_opt(year, digits(&b[5..7])?, digits(&b[8..10])?)
}

/// `HH:MM:SS` with an optional fraction of 1 to 9 digits; returns the time
/// and the bytes it took.
fn parse_clock(b: &[u8]) -> Option<(NaiveTime, usize)> {
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, s) = (digits(&b[..2])?, digits(&b[3..5])?, digits(&b[6..8])?);
    let mut used = 8;
    let mut nanos = 0;
    if b.get(8) == Some(&b'.') {
        let len = b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 || len > 9 {
            return None;
        }
        nanos = digits(&b[9..9 + len])? * 10u32.pow(9 - len as u32);
        used = 9 + len;
    }
    Some((NaiveTime::from_hms_nano_opt(h, m, s, nanos)?, used))
}

/// `HH:MM:SS[.fff]`.
fn parse_time(b: &[u8]) -> Option<NaiveTime> {
    match parse_clock(b)? {
        (t, used) if used == b.len() => Some(t),
        _ => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS[.fff]`, also with `T`, and with an optional zone
/// (`Z`, `+HH`, `+HH:MM`, `+HHMM`), converted to UTC so it compares with
/// the UTC timestamps engines return for zoned columns.
fn parse_stamp(b: &[u8]) -> Option<NaiveDateTime> {
    if b.len() < 19 || !matches!(b[10], b' ' | b'T') {
        return None;
    }
    let date = parse_date(&b[..10])?;
    let (time, used) = parse_clock(&b[11..])?;
    let offset = match &b[11 + used..] {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest {
                [_, _] => (digits(rest)?, 0),
                [_, _, b':', _, _] => (digits(&rest[..2])?, digits(&rest[3..])?),
                [_, _, _, _] => (digits(&rest[..2])?, digits(&rest[2..])?),
                _ => return None,
            };
            let seconds = i64::from(h * 3600 + m * 60);
            if *sign == b'-' {
                -seconds
            } else {
                seconds
            }
        }
        _ => return None,
    };
    date.and_time(time)
        .checked_sub_signed(TimeDelta::try_seconds(offset)?)
}

// ---------------------------------------------------------------------------
// Equality and order

/// Numbers within the tolerance are equal, except two exact integers, which
/// must be identical. NaN equals NaN: both results computed the same NaN.
fn num_eq(a: &Num, b: &Num, tol: f64) -> bool {
    if let (Some(x), Some(y)) = (a.exact, b.exact) {
        return x == y;
    }
    let (x, y) = (a.value, b.value);
    if x == y {
        return true;
    }
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x.is_infinite() || y.is_infinite() {
        return false;
    }
    (x - y).abs() <= tol * x.abs().max(y.abs()).max(1.0)
}

fn cell_eq(a: &Canon, b: &Canon, tol: f64) -> bool {
    match (a, b) {
        (Canon::Null, Canon::Null) => true,
        (Canon::Int(x), Canon::Int(y)) => x == y,
        (Canon::Date(x), Canon::Date(y)) => x == y,
        (Canon::Time(x), Canon::Time(y)) => x == y,
        (Canon::Stamp(x), Canon::Stamp(y)) => x == y,
        (Canon::Text(x), Canon::Text(y)) => x == y,
        (Canon::Blob(x), Canon::Blob(y)) => x == y,
        _ => match (a.num(), b.num()) {
            (Some(x), Some(y)) => num_eq(&x, &y, tol),
            _ => false,
        },
    }
}

/// Order by kind, then by grid key for numbers and by value otherwise.
fn cmp_coarse(a: &Canon, b: &Canon, grid: Grid) -> Ordering {
    match (a, b) {
        (Canon::Date(x), Canon::Date(y)) => x.cmp(y),
        (Canon::Time(x), Canon::Time(y)) => x.cmp(y),
        (Canon::Stamp(x), Canon::Stamp(y)) => x.cmp(y),
        (Canon::Text(x), Canon::Text(y)) => x.cmp(y),
        (Canon::Blob(x), Canon::Blob(y)) => x.cmp(y),
        _ => match (a.num(), b.num()) {
            (Some(x), Some(y)) => grid.key(x.value).total_cmp(&grid.key(y.value)),
            _ => a.rank().cmp(&b.rank()),
        },
    }
}

/// Tie-break among cells with the same grid key: the exact number.
fn cmp_precise(a: &Canon, b: &Canon) -> Ordering {
    match (a.num(), b.num()) {
        (Some(x), Some(y)) => cmp_num(&x, &y),
        _ => Ordering::Equal,
    }
}

/// Numbers by value, exact integers that round to one float by their exact
/// value. The grid key is monotone in the value, so this refines key order.
fn cmp_num(a: &Num, b: &Num) -> Ordering {
    a.value
        .total_cmp(&b.value)
        .then_with(|| a.exact.cmp(&b.exact))
}

fn cmp_cells(a: &Canon, b: &Canon, grid: Grid) -> Ordering {
    cmp_coarse(a, b, grid).then_with(|| cmp_precise(a, b))
}

/// Rows ordered by the grid keys of all columns first and only then by the
/// exact numbers: rows that differ only within the tolerance then sort by
/// their other columns, the same way on both sides.
fn cmp_rows(a: &[Canon], a_map: &[usize], b: &[Canon], b_map: &[usize], grid: Grid) -> Ordering {
    let pairs = || a_map.iter().zip(b_map).map(|(&i, &j)| (&a[i], &b[j]));
    for (x, y) in pairs() {
        match cmp_coarse(x, y, grid) {
            Ordering::Equal => {}
            other => return other,
        }
    }
    for (x, y) in pairs() {
        match cmp_precise(x, y) {
            Ordering::Equal => {}
            other => return other,
        }
    }
    Ordering::Equal
}

fn rows_eq(a: &[Canon], a_map: &[usize], b: &[Canon], b_map: &[usize], tol: f64) -> bool {
    a_map
        .iter()
        .zip(b_map)
        .all(|(&i, &j)| cell_eq(&a[i], &b[j], tol))
}

// ---------------------------------------------------------------------------
// Hashes

/// A hash of a cell's value, numbers on the grid: equal cells hash alike,
/// and so do nearly all tolerably equal numbers.
fn cell_hash(c: &Canon, grid: Grid) -> u64 {
    match c {
        Canon::Null => 0x6a09_e667_f3bc_c908,
        Canon::Int(_) | Canon::Float(_) => match c.num() {
            Some(n) => num_hash(grid.key(n.value)),
            None => 0,
        },
        Canon::Date(d) => mix(u64::from(d.num_days_from_ce() as u32) ^ (2 << 56)),
        Canon::Time(t) => {
            mix((u64::from(t.num_seconds_from_midnight()) << 32 | u64::from(t.nanosecond())) ^ 3)
        }
        Canon::Stamp(t) => {
            let t = t.and_utc();
            mix(mix(t.timestamp() as u64) ^ u64::from(t.timestamp_subsec_nanos()) ^ 4)
        }
        Canon::Text(s) => hash_bytes(5, s.as_bytes()),
        Canon::Blob(b) => hash_bytes(6, b),
    }
}

/// The hash of a number by its grid key.
fn num_hash(key: f64) -> u64 {
    mix(key.to_bits() ^ 1)
}

/// The splitmix64 finalizer: spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hash_bytes(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    mix(h ^ bytes.len() as u64)
}

/// Start of every row hash.
const ROW_SEED: u64 = 0x243f_6a88_85a3_08d3;

// ---------------------------------------------------------------------------
// Tables

/// A result's cells in canonical form, row after row, with each cell's
/// [`cell_hash`] alongside.
struct Table<'a> {
    width: usize,
    rows: usize,
    cells: Vec<Canon<'a>>,
    hashes: Vec<u64>,
    grid: Grid,
}

impl<'a> Table<'a> {
    /// Converts and hashes each cell in one pass, while its text is in
    /// cache: a result's strings lie all over the heap.
    fn new(width: usize, rows: &'a [Vec<Value>], grid: Grid) -> Table<'a> {
        let mut cells = Vec::with_capacity(rows.len() * width);
        let mut hashes = Vec::with_capacity(rows.len() * width);
        for value in rows.iter().flatten() {
            let cell = canon(value);
            hashes.push(cell_hash(&cell, grid));
            cells.push(cell);
        }
        Table {
            width,
            rows: rows.len(),
            cells,
            hashes,
            grid,
        }
    }

    fn from_cells(width: usize, rows: usize, cells: Vec<Canon<'a>>, grid: Grid) -> Table<'a> {
        let hashes = cells.iter().map(|c| cell_hash(c, grid)).collect();
        Table {
            width,
            rows,
            cells,
            hashes,
            grid,
        }
    }

    fn row(&self, r: usize) -> &[Canon<'a>] {
        &self.cells[r * self.width..(r + 1) * self.width]
    }

    fn row_hashes(&self, r: usize) -> &[u64] {
        &self.hashes[r * self.width..(r + 1) * self.width]
    }

    /// Each row's cells sorted, so rows compare as bags of values whatever
    /// the column mapping: if these differ, no mapping can make rows equal.
    fn bags(&self) -> Table<'a> {
        let mut cells = self.cells.clone();
        if self.width > 0 {
            for row in cells.chunks_mut(self.width) {
                row.sort_unstable_by(|a, b| cmp_cells(a, b, self.grid));
            }
        }
        Table::from_cells(self.width, self.rows, cells, self.grid)
    }

    /// Each row's hash under `map` (the columns in mapped order) with the
    /// row's index, sorted by hash. Sorting these pairs instead of rows keeps
    /// the sort in cache; rows are only visited to confirm equal hashes.
    fn keyed(&self, map: &[usize]) -> Vec<(u64, usize)> {
        let mut keyed: Vec<(u64, usize)> = (0..self.rows)
            .map(|r| {
                let hashes = self.row_hashes(r);
                let h = map.iter().fold(ROW_SEED, |h, &c| mix(h ^ hashes[c]));
                (h, r)
            })
            .collect();
        keyed.sort_unstable();
        keyed
    }

    /// Like [`Table::keyed`] for some rows, with numbers hashed on the grid
    /// shifted by half a step ([`Grid::shifted`]), so two tolerably equal
    /// numbers that a cell border split now share a cell.
    fn keyed_shifted(&self, rows: &[usize], map: &[usize]) -> Vec<(u64, usize)> {
        let mut keyed: Vec<(u64, usize)> = rows
            .iter()
            .map(|&r| {
                let (cells, hashes) = (self.row(r), self.row_hashes(r));
                let h = map.iter().fold(ROW_SEED, |h, &c| {
                    let cell = match cells[c].num() {
                        Some(n) => num_hash(self.grid.shifted(n.value)),
                        None => hashes[c],
                    };
                    mix(h ^ cell)
                });
                (h, r)
            })
            .collect();
        keyed.sort_unstable();
        keyed
    }
}

/// How far a result is from the expected one: the number of rows without
/// an equal partner, and the first expected row without one.
#[derive(Debug, Clone, Copy)]
struct RowDiff {
    differ: usize,
    missing: Option<usize>,
    /// A result row no expected row pairs with.
    extra: Option<usize>,
}

/// The two results being compared, with the column mapping (expected
/// column `k` is the result's column `got_map[k]` and the expected table's
/// column `want_map[k]`) and the tolerance.
struct Pair<'t, 'a> {
    got: &'t Table<'a>,
    got_map: &'t [usize],
    want: &'t Table<'a>,
    want_map: &'t [usize],
    tol: f64,
}

impl Pair<'_, '_> {
    fn eq(&self, g: usize, w: usize) -> bool {
        rows_eq(
            self.got.row(g),
            self.got_map,
            self.want.row(w),
            self.want_map,
            self.tol,
        )
    }

    /// Compares the rows as multisets. Rows with equal hashes are confirmed
    /// and paired. What is left are rows that differ, and tolerably equal
    /// rows that hashed apart because a number fell on the other side of a
    /// cell border: those are hashed again on the shifted grid, then what
    /// is still left is sorted and walked side by side, and the last few
    /// are paired up by a maximum matching.
    fn diff(&self, want_keyed: &[(u64, usize)]) -> RowDiff {
        let got_keyed = self.got.keyed(self.got_map);
        let (got_left, want_left) = self.pair_hashed(&got_keyed, want_keyed);
        if got_left.is_empty() && want_left.is_empty() {
            return RowDiff {
                differ: 0,
                missing: None,
                extra: None,
            };
        }
        let floats = got_left
            .iter()
            .any(|&g| Pair::has_float(self.got, self.got_map, g))
            || want_left
                .iter()
                .any(|&w| Pair::has_float(self.want, self.want_map, w));
        if !floats {
            return RowDiff {
                differ: got_left.len().max(want_left.len()),
                missing: want_left.iter().min().copied(),
                extra: got_left.iter().min().copied(),
            };
        }
        let (mut got_left, mut want_left) = self.pair_hashed(
            &self.got.keyed_shifted(&got_left, self.got_map),
            &self.want.keyed_shifted(&want_left, self.want_map),
        );
        let (got_left, want_left) = self.walk(&mut got_left, &mut want_left);
        self.settle(&got_left, &want_left)
    }

    /// Pairs rows with equal hashes that are equal, from two hash-sorted
    /// lists; returns the rows left without a partner.
    fn pair_hashed(
        &self,
        got_keyed: &[(u64, usize)],
        want_keyed: &[(u64, usize)],
    ) -> (Vec<usize>, Vec<usize>) {
        let (mut got_left, mut want_left) = (Vec::new(), Vec::new());
        // Proposed partners, checked afterwards in expected row order: rows
        // (and their strings, allocated in row order) are then read one
        // after the other on one side at least, instead of in hash order,
        // at random, on both.
        let mut proposed: Vec<(usize, usize)> = Vec::with_capacity(got_keyed.len());
        let mut groups = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(&(gh, g)), Some(&(wh, w))) = (got_keyed.get(i), want_keyed.get(j)) {
            match gh.cmp(&wh) {
                Ordering::Less => {
                    got_left.push(g);
                    i += 1;
                }
                Ordering::Greater => {
                    want_left.push(w);
                    j += 1;
                }
                Ordering::Equal => {
                    // Rows with one hash are one row, or duplicates of one
                    // row: pair them as they come.
                    let gn = got_keyed[i..].iter().take_while(|k| k.0 == gh).count();
                    let wn = want_keyed[j..].iter().take_while(|k| k.0 == gh).count();
                    let (gk, wk) = (&got_keyed[i..i + gn], &want_keyed[j..j + wn]);
                    if gn == 1 && wn == 1 {
                        proposed.push((g, w));
                    } else {
                        groups.push((gk, wk));
                    }
                    i += gn;
                    j += wn;
                }
            }
        }
        got_left.extend(got_keyed[i.min(got_keyed.len())..].iter().map(|k| k.1));
        want_left.extend(want_keyed[j.min(want_keyed.len())..].iter().map(|k| k.1));
        proposed.sort_unstable_by_key(|&(g, w)| (w, g));
        for (g, w) in proposed {
            if !self.eq(g, w) {
                got_left.push(g);
                want_left.push(w);
            }
        }
        // Several rows with one hash: duplicates, as a rule, paired in turn
        // (extra duplicates on one side are left over). When that fails
        // (integers beyond f64 precision, numbers within one grid cell but
        // not within the tolerance) the group is sorted and walked.
        for (gk, wk) in groups {
            let n = gk.len().min(wk.len());
            if gk.iter().zip(wk).all(|(g, w)| self.eq(g.1, w.1)) {
                got_left.extend(gk[n..].iter().map(|k| k.1));
                want_left.extend(wk[n..].iter().map(|k| k.1));
            } else {
                let mut gs: Vec<usize> = gk.iter().map(|k| k.1).collect();
                let mut ws: Vec<usize> = wk.iter().map(|k| k.1).collect();
                let (g, w) = self.walk(&mut gs, &mut ws);
                got_left.extend(g);
                want_left.extend(w);
            }
        }
        (got_left, want_left)
    }

    /// Whether a row has a float in the compared columns: only those can
    /// hash apart from a tolerably equal row (equal values of every other
    /// kind, integers included, hash alike).
    fn has_float(table: &Table, map: &[usize], row: usize) -> bool {
        let cells = table.row(row);
        map.iter().any(|&c| matches!(cells[c], Canon::Float(_)))
    }

    /// Sorts both lists of rows and walks them side by side, pairing equal
    /// rows; returns the rows left without a partner.
    fn walk(&self, gs: &mut [usize], ws: &mut [usize]) -> (Vec<usize>, Vec<usize>) {
        let (got, want, grid) = (self.got, self.want, self.got.grid);
        let (gm, wm) = (self.got_map, self.want_map);
        gs.sort_unstable_by(|&a, &b| cmp_rows(got.row(a), gm, got.row(b), gm, grid));
        ws.sort_unstable_by(|&a, &b| cmp_rows(want.row(a), wm, want.row(b), wm, grid));
        let (mut left_got, mut left_want) = (Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        while let (Some(&g), Some(&w)) = (gs.get(i), ws.get(j)) {
            if self.eq(g, w) {
                i += 1;
                j += 1;
                continue;
            }
            match cmp_rows(got.row(g), gm, want.row(w), wm, grid) {
                Ordering::Less => {
                    left_got.push(g);
                    i += 1;
                }
                Ordering::Greater => {
                    left_want.push(w);
                    j += 1;
                }
                Ordering::Equal => {
                    left_got.push(g);
                    left_want.push(w);
                    i += 1;
                    j += 1;
                }
            }
        }
        left_got.extend_from_slice(&gs[i.min(gs.len())..]);
        left_want.extend_from_slice(&ws[j.min(ws.len())..]);
        (left_got, left_want)
    }

    /// Pairs the rows nothing else could pair, by maximum matching; few
    /// rows get here unless the results differ, and then only the count
    /// matters.
    fn settle(&self, left_got: &[usize], left_want: &[usize]) -> RowDiff {
        let worst = left_got.len().max(left_want.len());
        if worst == 0 {
            return RowDiff {
                differ: 0,
                missing: None,
                extra: None,
            };
        }
        if worst > MAX_LEFTOVERS {
            return RowDiff {
                differ: worst,
                missing: left_want.iter().min().copied(),
                extra: left_got.iter().min().copied(),
            };
        }
        let adjacency: Vec<Vec<usize>> = left_got
            .iter()
            .map(|&g| {
                left_want
                    .iter()
                    .enumerate()
                    .filter(|&(_, &w)| self.eq(g, w))
                    .map(|(k, _)| k)
                    .collect()
            })
            .collect();
        let owner = max_matching(&adjacency, left_want.len());
        let matched = owner.iter().filter(|o| o.is_some()).count();
        let paired: Vec<usize> = owner.iter().flatten().copied().collect();
        RowDiff {
            extra: left_got
                .iter()
                .enumerate()
                .filter(|(k, _)| !paired.contains(k))
                .map(|(_, &g)| g)
                .min(),
            differ: worst - matched,
            missing: left_want
                .iter()
                .zip(&owner)
                .filter(|(_, o)| o.is_none())
                .map(|(&w, _)| w)
                .min(),
        }
    }
}

/// Maximum bipartite matching (Kuhn's augmenting paths) of left nodes to
/// right nodes `0..rights`; returns each right node's partner.
fn max_matching(adjacency: &[Vec<usize>], rights: usize) -> Vec<Option<usize>> {
    let mut owner = vec![None; rights];
    for left in 0..adjacency.len() {
        let mut seen = vec![false; rights];
        augment(left, adjacency, &mut seen, &mut owner);
    }
    owner
}

fn augment(
    left: usize,
    adjacency: &[Vec<usize>],
    seen: &mut [bool],
    owner: &mut [Option<usize>],
) -> bool {
    for &right in &adjacency[left] {
        if seen[right] {
            continue;
        }
        seen[right] = true;
        if owner[right].is_none_or(|other| augment(other, adjacency, seen, owner)) {
            owner[right] = Some(left);
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------
// Column matching

/// What a column's values are as a multiset, in parts cheap to gather and
/// compare; a column can stand for another only if these agree.
#[derive(Clone)]
struct Profile {
    /// Cells per [`Canon::rank`].
    kinds: [usize; KINDS],
    /// Order-independent hash of the non-numeric cells, which compare
    /// exactly.
    exact: u64,
    nan: usize,
    pos_inf: usize,
    neg_inf: usize,
    /// Sum and sum of magnitudes of the finite numbers.
    sum: f64,
    abs_sum: f64,
    /// Smallest and largest finite number ([`cmp_num`] order).
    min: Option<Num>,
    max: Option<Num>,
}

fn profiles(t: &Table) -> Vec<Profile> {
    let blank = Profile {
        kinds: [0; KINDS],
        exact: 0,
        nan: 0,
        pos_inf: 0,
        neg_inf: 0,
        sum: 0.0,
        abs_sum: 0.0,
        min: None,
        max: None,
    };
    let mut out = vec![blank; t.width];
    for r in 0..t.rows {
        for ((p, cell), h) in out.iter_mut().zip(t.row(r)).zip(t.row_hashes(r)) {
            p.kinds[cell.rank()] += 1;
            let Some(n) = cell.num() else {
                p.exact = p.exact.wrapping_add(mix(*h));
                continue;
            };
            if n.value.is_nan() {
                p.nan += 1;
            } else if n.value == f64::INFINITY {
                p.pos_inf += 1;
            } else if n.value == f64::NEG_INFINITY {
                p.neg_inf += 1;
            } else {
                p.sum += n.value;
                p.abs_sum += n.value.abs();
                // Floats first: `cmp_num` only on ties, which are rare.
                if p.min.is_none_or(|m| {
                    n.value < m.value || (n.value == m.value && cmp_num(&n, &m).is_lt())
                }) {
                    p.min = Some(n);
                }
                if p.max.is_none_or(|m| {
                    n.value > m.value || (n.value == m.value && cmp_num(&n, &m).is_gt())
                }) {
                    p.max = Some(n);
                }
            }
        }
    }
    out
}

/// Whether two columns may hold tolerably equal multisets of values: a
/// necessary condition, decided without sorting.
fn profiles_match(a: &Profile, b: &Profile, tol: f64) -> bool {
    if a.kinds != b.kinds
        || a.exact != b.exact
        || (a.nan, a.pos_inf, a.neg_inf) != (b.nan, b.pos_inf, b.neg_inf)
    {
        return false;
    }
    // Ends by value alone, with room to spare: a filter that wrongly
    // rejects costs a wrong verdict, one that wrongly accepts only time.
    let ends = |x: Option<Num>, y: Option<Num>| match (x, y) {
        (Some(x), Some(y)) => values_match(&[x.value], &[y.value], tol),
        (x, y) => x.is_none() && y.is_none(),
    };
    if !ends(a.min, b.min) || !ends(a.max, b.max) {
        return false;
    }
    // Pairwise differences bound the difference of the sums, plus the
    // rounding of two sums of n terms added up in any order.
    let n = a.kinds[Canon::NUM_RANK] as f64;
    let magnitude = a.abs_sum + b.abs_sum;
    let bound = tol * (n + magnitude) + 4.0 * n * f64::EPSILON * magnitude;
    let gap = (a.sum - b.sum).abs();
    !(gap.is_finite() && bound.is_finite() && gap > bound)
}

/// A column's numbers as floats, sorted; sorted order pairs tolerably
/// equal multisets element by element. Floats alone (8 bytes, not a
/// [`Num`]'s 32) make a column that differs only in exact integers beyond
/// f64 precision look like a candidate; the rows still tell it apart.
fn sorted_values(t: &Table, column: usize) -> Vec<f64> {
    let mut values = Vec::with_capacity(t.rows);
    values.extend((0..t.rows).filter_map(|r| t.row(r)[column].num().map(|n| n.value)));
    values.sort_unstable_by(f64::total_cmp);
    values
}

/// Whether sorted values pair up within twice the tolerance: by value
/// alone, and loosely, since this only rules candidates out (sorted pairing
/// is exact for a plain tolerance but not for the exact-integer rule).
fn values_match(a: &[f64], b: &[f64], tol: f64) -> bool {
    let num = |value| Num { value, exact: None };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(&x, &y)| num_eq(&num(x), &num(y), 2.0 * tol))
}

/// Columns with identical numbers, so each distinct column is compared
/// once: results with many copies of the same values (flags, zeros) stay
/// cheap. Returns each column's class and each class's first column.
fn classes(values: &[Vec<f64>]) -> (Vec<usize>, Vec<usize>) {
    let same = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    };
    let mut class = Vec::with_capacity(values.len());
    let mut first: Vec<usize> = Vec::new();
    for v in values {
        match first.iter().position(|&f| same(&values[f], v)) {
            Some(k) => class.push(k),
            None => {
                class.push(first.len());
                first.push(class.len() - 1);
            }
        }
    }
    (class, first)
}

/// For each expected column, the result columns that may stand for it.
struct Candidates {
    lists: Vec<Vec<usize>>,
}

impl Candidates {
    /// Columns whose [`Profile`]s agree. Sorting numbers to confirm them is
    /// left to [`Candidates::refine`], needed only to explain a mismatch:
    /// profiles rarely agree by chance, the search tries likely columns
    /// first, and the rows have the last word anyway.
    fn new(got: &Table, want: &Table, tol: f64) -> Candidates {
        let got_profiles = profiles(got);
        let want_profiles = profiles(want);
        let lists = want_profiles
            .iter()
            .map(|w| {
                (0..got.width)
                    .filter(|&g| profiles_match(&got_profiles[g], w, tol))
                    .collect()
            })
            .collect();
        Candidates { lists }
    }

    fn ambiguous(&self) -> bool {
        self.lists.iter().any(|c| c.len() > 1)
    }

    /// Keeps only candidates whose numbers pair up with the expected
    /// column's (see [`values_match`]).
    fn refine(&mut self, got: &Table, want: &Table, tol: f64) {
        let got_values: Vec<Vec<f64>> = (0..got.width).map(|c| sorted_values(got, c)).collect();
        let want_values: Vec<Vec<f64>> = (0..want.width).map(|c| sorted_values(want, c)).collect();
        let (got_class, got_first) = classes(&got_values);
        let (want_class, want_first) = classes(&want_values);
        let mut memo: Vec<Option<bool>> = vec![None; got_first.len() * want_first.len()];
        for (list, &wc) in self.lists.iter_mut().zip(&want_class) {
            list.retain(|&g| {
                let gc = got_class[g];
                *memo[wc * got_first.len() + gc].get_or_insert_with(|| {
                    values_match(
                        &got_values[got_first[gc]],
                        &want_values[want_first[wc]],
                        tol,
                    )
                })
            });
        }
    }

    /// Puts the likeliest candidates first: a column whose values also sit
    /// in rows like the expected column's (same [`colors`]), then the
    /// column at the same position.
    fn order(&mut self, got: &Table, want: &Table) {
        let (got_colors, want_colors) = colors(got, want);
        for (w, list) in self.lists.iter_mut().enumerate() {
            list.sort_by_key(|&g| (got_colors[g] != want_colors[w], g != w, g));
        }
    }
}

/// An expected column no result column can stand for, once columns are
/// paired one to one (a result column matching two expected columns
/// counts once).
fn unmatched_column(candidates: &[Vec<usize>]) -> Option<usize> {
    let mut owner = vec![None; candidates.len()];
    (0..candidates.len()).find(|&w| {
        let mut seen = vec![false; candidates.len()];
        !augment(w, candidates, &mut seen, &mut owner)
    })
}

/// Rounds of [`colors`] refinement at most; each lets a column's colour
/// take in one more step of how its values relate to the other columns'.
const COLOR_ROUNDS: usize = 3;

/// Per column of both results, a hash of how its values sit among the
/// other columns' values, the same whatever the order of rows and of
/// columns (colour refinement, as in graph isomorphism tests): a column
/// starts as the multiset of its values; a row is the multiset of (column
/// colour, value) pairs; a column becomes the multiset of (row colour,
/// value) pairs; and so on. Columns with equal values (0/1 flags, say) that
/// pair differently with the rest of their rows get different colours, so
/// the search usually tries the right mapping first. Built on grid hashes,
/// it is only a hint: tolerance may upset it, and the rows always have the
/// last word. Both results go through the same rounds, so their colours
/// compare; refining stops once every column has a colour of its own.
fn colors(got: &Table, want: &Table) -> (Vec<u64>, Vec<u64>) {
    let mut got_colors = initial_colors(got);
    let mut want_colors = initial_colors(want);
    for _ in 0..COLOR_ROUNDS {
        if all_distinct(&got_colors) && all_distinct(&want_colors) {
            break;
        }
        got_colors = refine_colors(got, &got_colors);
        want_colors = refine_colors(want, &want_colors);
    }
    (got_colors, want_colors)
}

fn initial_colors(t: &Table) -> Vec<u64> {
    let mut col = vec![0u64; t.width];
    for r in 0..t.rows {
        for (c, h) in col.iter_mut().zip(t.row_hashes(r)) {
            *c = c.wrapping_add(mix(*h));
        }
    }
    col
}

fn refine_colors(t: &Table, col: &[u64]) -> Vec<u64> {
    let mut next: Vec<u64> = col.iter().map(|&c| mix(c)).collect();
    for r in 0..t.rows {
        let hashes = t.row_hashes(r);
        let row = hashes.iter().zip(col).fold(0u64, |acc, (h, c)| {
            acc.wrapping_add(mix(h ^ c.rotate_left(23)))
        });
        for (n, h) in next.iter_mut().zip(hashes) {
            *n = n.wrapping_add(mix(row ^ h.rotate_left(41)));
        }
    }
    next
}

fn all_distinct(colors: &[u64]) -> bool {
    let mut sorted = colors.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

// ---------------------------------------------------------------------------
// Search

/// How one column mapping fared.
enum Outcome {
    Match,
    /// Same rows, but (from this row on, 0-based) not in the expected order.
    Order(usize),
    Rows(RowDiff),
}

impl Outcome {
    /// Rank for keeping the most telling failure: wrong order beats fewer
    /// differing rows beats more.
    fn rank(&self) -> usize {
        match self {
            Outcome::Match => 0,
            Outcome::Order(_) => 1,
            Outcome::Rows(d) => 2 + d.differ,
        }
    }

    /// The reason, quoting a missing expected row when `example`.
    fn describe(&self, got: &[Vec<Value>], want: &[Vec<Value>], example: bool) -> String {
        match self {
            Outcome::Match => "results match".to_string(),
            Outcome::Order(row) => format!(
                "same rows in another order (first difference at row {})",
                row + 1
            ),
            Outcome::Rows(d) => {
                let mut why = format!("{} of {} rows differ", d.differ, want.len());
                if let Some(row) = d.missing.and_then(|r| want.get(r)).filter(|_| example) {
                    why.push_str(&format!(", e.g. expected ({}) not found", quote_row(row)));
                    if let Some(other) = d.extra.and_then(|r| got.get(r)) {
                        why.push_str(&format!(", ({}) instead", quote_row(other)));
                    }
                }
                why
            }
        }
    }
}

/// The backtracking search over column mappings, with its budget.
struct Search<'t, 'a> {
    got: &'t Table<'a>,
    want: &'t Table<'a>,
    identity: Vec<usize>,
    /// The expected rows' hashes, sorted once for all mappings.
    want_keyed: Vec<(u64, usize)>,
    tol: f64,
    ordered: bool,
    keys: Option<&'t [usize]>,
    leaves: usize,
    max_leaves: usize,
    steps: usize,
    /// The budget ran out before every mapping was tried.
    exhausted: bool,
    /// Further mappings cannot help (budget spent, or the rows differ
    /// whatever the mapping).
    stop: bool,
    /// Whether the rows were compared as bags of values yet.
    bags_checked: bool,
    best: Option<Outcome>,
}

impl<'t, 'a> Search<'t, 'a> {
    fn new(
        got: &'t Table<'a>,
        want: &'t Table<'a>,
        tol: f64,
        ordered: bool,
        keys: Option<&'t [usize]>,
    ) -> Self {
        let identity: Vec<usize> = (0..want.width).collect();
        let want_keyed = want.keyed(&identity);
        let cells = (want.rows * want.width).max(1);
        Search {
            got,
            want,
            identity,
            want_keyed,
            tol,
            ordered,
            keys,
            leaves: 0,
            max_leaves: (SEARCH_WORK / cells).clamp(MIN_MAPPINGS, MAX_MAPPINGS),
            steps: 0,
            exhausted: false,
            stop: false,
            bags_checked: false,
            best: None,
        }
    }

    /// Extends `mapping` (expected column → result column) for the columns
    /// `order[depth..]`; true once a full mapping matches.
    fn explore(
        &mut self,
        depth: usize,
        order: &[usize],
        candidates: &[Vec<usize>],
        ambiguous: bool,
        mapping: &mut [usize],
        used: &mut [bool],
    ) -> bool {
        let Some(&w) = order.get(depth) else {
            return self.leaf(mapping, ambiguous);
        };
        self.steps += 1;
        if self.steps > MAX_SEARCH_STEPS {
            self.exhausted = true;
            self.stop = true;
        }
        for &g in &candidates[w] {
            if self.stop {
                return false;
            }
            if used[g] {
                continue;
            }
            mapping[w] = g;
            used[g] = true;
            if self.explore(depth + 1, order, candidates, ambiguous, mapping, used) {
                return true;
            }
            used[g] = false;
        }
        false
    }

    fn leaf(&mut self, mapping: &[usize], ambiguous: bool) -> bool {
        if self.leaves >= self.max_leaves {
            self.exhausted = true;
            self.stop = true;
            return false;
        }
        self.leaves += 1;
        let outcome = self.check(mapping);
        if matches!(outcome, Outcome::Match) {
            return true;
        }
        if ambiguous && !self.bags_checked && matches!(outcome, Outcome::Rows(_)) {
            self.bags_checked = true;
            if self.bags_differ() {
                self.stop = true;
            }
        }
        if self.best.as_ref().is_none_or(|b| outcome.rank() < b.rank()) {
            self.best = Some(outcome);
        }
        false
    }

    /// Whether the rows differ even as bags of values, which no mapping of
    /// columns can mend: the search may stop at the first mapping.
    fn bags_differ(&self) -> bool {
        let got = self.got.bags();
        let want = self.want.bags();
        let pair = Pair {
            got: &got,
            got_map: &self.identity,
            want: &want,
            want_map: &self.identity,
            tol: self.tol,
        };
        pair.diff(&want.keyed(&self.identity)).differ > 0
    }

    fn check(&self, mapping: &[usize]) -> Outcome {
        let (got, want, id) = (self.got, self.want, &self.identity);
        let tol = self.tol;
        // Same rows in the same order is the common case and needs no hash.
        let Some(first) =
            (0..want.rows).find(|&r| !rows_eq(got.row(r), mapping, want.row(r), id, tol))
        else {
            return Outcome::Match;
        };
        let pair = Pair {
            got,
            got_map: mapping,
            want,
            want_map: id,
            tol,
        };
        let diff = pair.diff(&self.want_keyed);
        if diff.differ > 0 {
            return Outcome::Rows(diff);
        }
        if !self.ordered {
            return Outcome::Match;
        }
        let Some(keys) = self.keys else {
            return Outcome::Order(first);
        };
        let out_of_order = (0..want.rows).find(|&r| {
            let (g, w) = (got.row(r), want.row(r));
            !keys.iter().all(|&k| cell_eq(&g[mapping[k]], &w[k], tol))
        });
        match out_of_order {
            Some(row) => Outcome::Order(row),
            None => Outcome::Match,
        }
    }
}

// ---------------------------------------------------------------------------
// Reasons

/// A value of an expected column, to tell columns apart in a reason without
/// names: the one in the first missing row, else the first non-NULL one.
fn column_sample(want: &[Vec<Value>], column: usize, missing: Option<usize>) -> String {
    let value = missing
        .and_then(|r| want.get(r))
        .or_else(|| {
            want.iter()
                .find(|r| r.get(column).is_some_and(|v| !matches!(v, Value::Null)))
        })
        .and_then(|r| r.get(column));
    match value {
        Some(v) => format!("e.g. {}", quote_value(v)),
        None => "all NULL".to_string(),
    }
}

fn quote_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        v => clip(&v.to_text()),
    }
}

fn quote_row(row: &[Value]) -> String {
    let text = row
        .iter()
        .map(|v| match v {
            Value::Null => "NULL".to_string(),
            v => match v.to_text() {
                t if t.is_empty() => "''".to_string(),
                t => t,
            },
        })
        .collect::<Vec<_>>()
        .join(", ");
    clip(&text)
}

/// One line of at most [`QUOTE_CHARS`] characters, so reasons stay short.
fn clip(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(QUOTE_CHARS)
        .collect();
    if text.chars().count() > QUOTE_CHARS {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn int(i: i64) -> Value {
        Value::Int(i)
    }
    fn float(f: f64) -> Value {
        Value::Float(f)
    }
    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }
    fn dec(s: &str) -> Value {
        Value::Decimal(s.to_string())
    }

    fn unordered() -> Options {
        Options::default()
    }

    fn same(got: &[Vec<Value>], want: &[Vec<Value>], options: &Options) -> Result<(), String> {
        let width = |rows: &[Vec<Value>]| rows.first().map_or(0, Vec::len);
        compare(width(got), got, width(want), want, options)
    }

    /// Whether two one-cell results match.
    fn one(got: Value, want: Value) -> bool {
        same(&col(vec![got]), &col(vec![want]), &unordered()).is_ok()
    }

    fn rows(values: &[&[Value]]) -> Vec<Vec<Value>> {
        values.iter().map(|r| r.to_vec()).collect()
    }

    fn col(values: Vec<Value>) -> Vec<Vec<Value>> {
        values.into_iter().map(|v| vec![v]).collect()
    }

    /// A deterministic generator, so tests need no crates.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(self.0)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn shuffle<T>(&mut self, v: &mut [T]) {
            for i in (1..v.len()).rev() {
                v.swap(i, self.below(i + 1));
            }
        }
    }

    #[test]
    fn duplicates_count() {
        let a = col(vec![text("a"), text("a"), text("b")]);
        let b = col(vec![text("a"), text("b"), text("b")]);
        let why = same(&a, &b, &unordered()).unwrap_err();
        assert!(why.starts_with("1 of 3 rows differ"), "{why}");
        assert!(same(&a, &a, &unordered()).is_ok());
    }

    #[test]
    fn float_sums_within_tolerance() {
        assert!(one(float(0.1 + 0.2), float(0.3)));
        assert!(one(float(0.1 + 0.2), dec("0.3")));
        assert!(one(float(1234.5678 * (1.0 + 1e-9)), float(1234.5678)));
        // Sums that cancel out leave noise around zero.
        assert!(one(float(0.1 + 0.2 - 0.3), int(0)));
        assert!(!one(float(1.0), float(1.01)));
        assert!(!one(float(1e12), float(1.0001e12)));
        let strict = Options {
            tolerance: 0.0,
            ..Options::default()
        };
        assert!(same(
            &col(vec![float(0.1 + 0.2)]),
            &col(vec![float(0.3)]),
            &strict
        )
        .is_err());
    }

    #[test]
    fn exact_integers_compare_exactly() {
        assert!(!one(int(1_000_000_001), int(1_000_000_000)));
        let big = i128::MAX;
        assert!(!one(Value::BigInt(big), Value::BigInt(big - 1)));
        assert!(one(
            Value::BigInt(big),
            dec("170141183460469231731687303715884105727")
        ));
        assert!(one(Value::BigInt(1 << 70), float(2f64.powi(70))));
        assert!(one(Value::BigInt(-5), int(-5)));
    }

    #[test]
    fn tolerance_across_cell_borders() {
        // Values within the tolerance on either side of a border between two
        // grid cells, in rows whose other column pairs them crosswise once
        // sorted.
        let grid = Grid::new(1e-6);
        let border = 1.0 + 0.5 / grid.scale;
        let (below, above) = (border * (1.0 - 1e-8), border * (1.0 + 1e-8));
        assert_ne!(grid.key(below), grid.key(above));
        let got = rows(&[&[float(below), text("b")], &[float(above), text("a")]]);
        let want = rows(&[&[float(above), text("b")], &[float(below), text("a")]]);
        assert!(same(&got, &want, &unordered()).is_ok());
        // Thousands of rows with two numbers on borders each, so most rows
        // hash apart: all of them must still pair up.
        let mut rng = Rng(7);
        let mut on_border = || {
            let j = rng.below(grid.scale as usize) as f64;
            let m = 1.0 + (j + 0.5) / grid.scale;
            let e = rng.below(40) as i32 - 20;
            let x = m * 2f64.powi(e);
            let noise = if rng.below(2) == 0 { 1e-8 } else { -1e-8 };
            (x * (1.0 + noise), x * (1.0 - noise))
        };
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for i in 0..3_000 {
            let ((a, b), (c, d)) = (on_border(), on_border());
            got.push(vec![float(a), int(i % 3), float(c)]);
            want.push(vec![float(d), float(b), int(i % 3)]);
        }
        Rng(8).shuffle(&mut want);
        assert!(same(&got, &want, &unordered()).is_ok());
        // A real difference among them still shows.
        let Value::Float(x) = want[10][0] else {
            unreachable!()
        };
        want[10][0] = float(x * (1.0 + 1e-5));
        let why = same(&got, &want, &unordered()).unwrap_err();
        assert!(why.starts_with("1 of 3000 rows differ"), "{why}");
    }

    #[test]
    fn round_numbers_with_float_noise() {
        // Sums of tenths land just below or above round numbers; the
        // reference has exact decimals.
        let got: Vec<Vec<Value>> = (1..2_000)
            .map(|i| {
                let tenth = f64::from(i) / 10.0;
                vec![
                    float((0..10).map(|_| tenth).sum::<f64>()),
                    int(i64::from(i)),
                ]
            })
            .collect();
        let mut want: Vec<Vec<Value>> = (1..2_000)
            .map(|i| vec![int(i64::from(i)), dec(&format!("{i}.00"))])
            .collect();
        Rng(4).shuffle(&mut want);
        assert!(same(&got, &want, &unordered()).is_ok());
    }

    #[test]
    fn swapped_columns_with_equal_values() {
        // Columns a and b hold the same values {1, 2, 3}; only one way of
        // pairing them with the result's columns gives the expected rows.
        let want = rows(&[
            &[int(1), int(2), text("x")],
            &[int(2), int(3), text("y")],
            &[int(3), int(1), text("z")],
        ]);
        let swapped = rows(&[
            &[text("y"), int(3), int(2)],
            &[text("z"), int(1), int(3)],
            &[text("x"), int(2), int(1)],
        ]);
        assert!(same(&swapped, &want, &unordered()).is_ok());
        // The same column values paired differently: neither mapping of the
        // two columns gives the expected rows.
        let wrong = rows(&[
            &[int(1), int(3), text("x")],
            &[int(2), int(1), text("y")],
            &[int(3), int(2), text("z")],
        ]);
        let why = same(&wrong, &want, &unordered()).unwrap_err();
        assert!(why.starts_with("3 of 3 rows differ"), "{why}");
    }

    #[test]
    fn order_by_with_ties() {
        let want = rows(&[
            &[text("a"), int(10)],
            &[text("b"), int(10)],
            &[text("c"), int(5)],
        ]);
        let tied = rows(&[
            &[text("b"), int(10)],
            &[text("a"), int(10)],
            &[text("c"), int(5)],
        ]);
        let keyed = Options {
            ordered: true,
            order_keys: Some(vec![1]),
            ..Options::default()
        };
        assert!(same(&tied, &want, &keyed).is_ok());
        let wrong = rows(&[
            &[text("c"), int(5)],
            &[text("a"), int(10)],
            &[text("b"), int(10)],
        ]);
        let why = same(&wrong, &want, &keyed).unwrap_err();
        assert!(why.starts_with("same rows in another order"), "{why}");
        let exact = Options {
            ordered: true,
            ..Options::default()
        };
        assert!(same(&tied, &want, &exact).is_err());
        assert!(same(&want, &want, &exact).is_ok());
        assert!(same(&tied, &want, &unordered()).is_ok());
        assert!(same(&wrong, &want, &unordered()).is_ok());
        // Keys are expected columns, found in the result by value.
        let moved: Vec<Vec<Value>> = tied
            .iter()
            .map(|r| vec![r[1].clone(), r[0].clone()])
            .collect();
        assert!(same(&moved, &want, &keyed).is_ok());
        let bad_key = Options {
            ordered: true,
            order_keys: Some(vec![2]),
            ..Options::default()
        };
        assert!(same(&want, &want, &bad_key).is_err());
    }

    #[test]
    fn nulls() {
        assert!(one(Value::Null, Value::Null));
        assert!(!one(Value::Null, text("")));
        assert!(!one(Value::Null, int(0)));
        let why = same(&col(vec![text("")]), &col(vec![Value::Null]), &unordered()).unwrap_err();
        assert_eq!(
            why,
            "1 of 1 rows differ, e.g. expected (NULL) not found, ('') instead"
        );
    }

    #[test]
    fn numbers_across_types() {
        let threes = [
            float(3.0),
            dec("3.00"),
            dec("3"),
            text("3"),
            text("3.0"),
            Value::BigInt(3),
        ];
        for v in threes {
            assert!(one(v.clone(), int(3)), "{v:?}");
        }
        assert!(one(dec("-12.50"), float(-12.5)));
        assert!(one(float(-0.0), float(0.0)));
        assert!(one(float(f64::NAN), float(f64::NAN)));
        assert!(one(text("NaN"), float(f64::NAN)));
        assert!(!one(float(f64::NAN), float(1.0)));
        assert!(!one(float(f64::INFINITY), float(f64::MAX)));
        assert!(!one(text(" 3"), int(3)));
        assert!(!one(text("3a"), int(3)));
    }

    #[test]
    fn bools_are_ones_and_zeros() {
        let got = col(vec![Value::Bool(true), Value::Bool(false)]);
        assert!(same(&got, &col(vec![int(1), int(0)]), &unordered()).is_ok());
        assert!(same(&got, &col(vec![int(1), int(1)]), &unordered()).is_err());
    }

    #[test]
    fn dates_times_and_timestamps() {
        let d = NaiveDate::from_ymd_opt(2025, 1, 31).unwrap();
        let ts = d.and_hms_opt(10, 0, 0).unwrap();
        let tz = ts.and_utc();
        assert!(one(Value::Date(d), text("2025-01-31")));
        assert!(!one(Value::Date(d), text("2025-01-30")));
        assert!(!one(Value::Date(d), text("2025-01-31 00:00:00")));
        for t in [
            "2025-01-31 10:00:00",
            "2025-01-31T10:00:00",
            "2025-01-31 10:00:00.000",
            "2025-01-31T10:00:00.000000Z",
            "2025-01-31 12:00:00+02",
            "2025-01-31 05:30:00-04:30",
        ] {
            assert!(one(Value::Timestamp(ts), text(t)), "{t}");
            assert!(one(text(t), Value::TimestampTz(tz)), "{t}");
        }
        assert!(one(Value::Timestamp(ts), Value::TimestampTz(tz)));
        assert!(!one(Value::Timestamp(ts), text("2025-01-31 10:00:01")));
        assert!(!one(Value::Timestamp(ts), text("2025-01-31 10:00")));
        let t = NaiveTime::from_hms_milli_opt(10, 0, 0, 500).unwrap();
        assert!(one(Value::Time(t), text("10:00:00.5")));
    }

    #[test]
    fn text_is_exact() {
        assert!(!one(text("Alice"), text("alice")));
        assert!(!one(text("Alice "), text("Alice")));
        assert!(one(text("Alice"), text("Alice")));
        assert!(!one(text("abc"), Value::Blob(b"abc".to_vec())));
    }

    #[test]
    fn counts_differ() {
        let got = rows(&[&[int(1), int(2), int(3)]]);
        let want = rows(&[&[int(1), int(2)]]);
        assert_eq!(
            same(&got, &want, &unordered()).unwrap_err(),
            "column count 3 vs 2 expected"
        );
        let got = col(vec![int(1), int(2)]);
        let want = col(vec![int(1)]);
        assert_eq!(
            same(&got, &want, &unordered()).unwrap_err(),
            "2 rows vs 1 expected"
        );
        let ragged = vec![vec![int(1)], vec![]];
        assert!(compare(1, &ragged, 1, &col(vec![int(1), int(1)]), &unordered()).is_err());
    }

    #[test]
    fn empty_results() {
        assert!(compare(2, &[], 2, &[], &unordered()).is_ok());
        assert!(compare(0, &[], 0, &[], &unordered()).is_ok());
        assert_eq!(
            compare(3, &[], 2, &[], &unordered()).unwrap_err(),
            "column count 3 vs 2 expected"
        );
    }

    #[test]
    fn unordered_rows_in_any_order() {
        let want = rows(&[
            &[int(1), text("a")],
            &[int(2), text("b")],
            &[int(3), text("c")],
        ]);
        let got = rows(&[
            &[text("c"), int(3)],
            &[text("a"), int(1)],
            &[text("b"), int(2)],
        ]);
        assert!(same(&got, &want, &unordered()).is_ok());
        let exact = Options {
            ordered: true,
            ..Options::default()
        };
        assert!(same(&got, &want, &exact)
            .unwrap_err()
            .starts_with("same rows in another order"));
    }

    #[test]
    fn reasons_are_short() {
        let long = "x".repeat(500);
        let want = rows(&[&[text(&long), int(1)], &[text("b"), int(2)]]);
        let got = rows(&[&[text(&long), int(1)], &[text("b"), int(3)]]);
        let why = same(&got, &want, &unordered()).unwrap_err();
        assert!(why.chars().count() < 120, "{why}");
        assert_eq!(
            why,
            "1 of 2 rows differ, e.g. expected (b, 2) not found, (b, 3) instead"
        );
        let want = rows(&[&[text(&long), int(1)], &[text("b"), int(2)]]);
        let got = rows(&[&[text(&long), int(2)], &[text("b"), int(1)]]);
        let why = same(&got, &want, &unordered()).unwrap_err();
        assert!(
            why.starts_with("2 of 2 rows differ, e.g. expected (xxx"),
            "{why}"
        );
        // Two rows quoted, each clipped.
        assert!(why.chars().count() < 140, "{why}");
    }

    /// 50 columns, all holding the same values, each in its own row order;
    /// the result lists them permuted and its rows shuffled.
    fn wide(rows_n: usize, seed: u64) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
        let mut rng = Rng(seed);
        let columns: Vec<Vec<i64>> = (0..50)
            .map(|_| {
                let mut c: Vec<i64> = (0..rows_n as i64).map(|i| i % 7).collect();
                rng.shuffle(&mut c);
                c
            })
            .collect();
        let want: Vec<Vec<Value>> = (0..rows_n)
            .map(|r| columns.iter().map(|c| int(c[r])).collect())
            .collect();
        let mut perm: Vec<usize> = (0..50).collect();
        rng.shuffle(&mut perm);
        let mut got: Vec<Vec<Value>> = want
            .iter()
            .map(|r| perm.iter().map(|&c| r[c].clone()).collect())
            .collect();
        rng.shuffle(&mut got);
        (got, want)
    }

    /// The time a 50-column comparison may take: 50 ms as built for use,
    /// more in unoptimized test builds.
    const FAST: Duration = Duration::from_millis(if cfg!(debug_assertions) { 1_000 } else { 50 });

    fn timed(got: &[Vec<Value>], want: &[Vec<Value>]) -> Result<(), String> {
        let start = Instant::now();
        let outcome = same(got, want, &unordered());
        let elapsed = start.elapsed();
        assert!(elapsed < FAST, "{elapsed:?}: {outcome:?}");
        outcome
    }

    #[test]
    fn fifty_columns_with_equal_values_are_fast() {
        let (got, want) = wide(200, 1);
        assert!(timed(&got, &want).is_ok());
        // One cell changed to another value its column holds.
        let (mut bad, want) = wide(200, 2);
        bad[0][0] = int(match &bad[0][0] {
            Value::Int(i) => (i + 1) % 7,
            _ => 0,
        });
        let why = timed(&bad, &want).unwrap_err();
        assert!(
            why.starts_with("no column matches expected column"),
            "{why}"
        );
        // All columns literally the same: any mapping will do.
        let want: Vec<Vec<Value>> = (0..200).map(|r| vec![int(r % 5); 50]).collect();
        let mut got = want.clone();
        Rng(3).shuffle(&mut got);
        assert!(timed(&got, &want).is_ok());
    }

    #[test]
    fn search_budget_is_reported() {
        // Fifty 0/1 columns: every column could stand for every other. Two
        // cells swapped within each of two rows keep every row's bag of
        // values and every column's values, yet no mapping gives the
        // expected rows; the search runs out, says so, and stays fast.
        let mut rng = Rng(9);
        let n = 200;
        let columns: Vec<Vec<i64>> = (0..50)
            .map(|_| {
                let mut c: Vec<i64> = (0..n).map(|i| i % 2).collect();
                rng.shuffle(&mut c);
                c
            })
            .collect();
        let want: Vec<Vec<Value>> = (0..n as usize)
            .map(|r| columns.iter().map(|c| int(c[r])).collect())
            .collect();
        let a = (0..50).find(|&a| columns[a][0] == 1).unwrap();
        let b = (0..50).find(|&b| columns[b][0] == 0).unwrap();
        let r = (1..n as usize)
            .find(|&r| columns[a][r] == 0 && columns[b][r] == 1)
            .unwrap();
        let mut got = want.clone();
        got[0].swap(a, b);
        got[r].swap(a, b);
        rng.shuffle(&mut got);
        let why = timed(&got, &want).unwrap_err();
        assert!(
            why.starts_with("2 of 200 rows differ") && why.contains("gave up after"),
            "{why}"
        );
    }

    #[test]
    fn large_results_in_another_order() {
        // Floats computed two ways, text columns with repeats, columns and
        // rows in another order.
        let want: Vec<Vec<Value>> = (0..20_000)
            .map(|i| {
                vec![
                    int(i),
                    float(i as f64 * 0.1),
                    text(&format!("n{}", i % 100)),
                ]
            })
            .collect();
        let mut got: Vec<Vec<Value>> = (0..20_000)
            .map(|i| {
                vec![
                    text(&format!("n{}", i % 100)),
                    int(i),
                    float(i as f64 / 10.0),
                ]
            })
            .collect();
        Rng(5).shuffle(&mut got);
        assert!(same(&got, &want, &unordered()).is_ok());
        let ordered = Options {
            ordered: true,
            ..Options::default()
        };
        assert!(same(&got, &want, &ordered)
            .unwrap_err()
            .starts_with("same rows in another order"));
        got[17][1] = int(-1);
        let why = same(&got, &want, &unordered()).unwrap_err();
        assert!(why.starts_with("1 of 20000 rows differ"), "{why}");
    }

    #[test]
    fn cells_stay_small() {
        // Rows are read in random order; every byte of a cell counts.
        assert!(std::mem::size_of::<Canon>() <= 24);
    }

    #[test]
    fn parses_only_plain_numbers() {
        for s in ["1", "-1", "+1", "1.", ".5", "1e3", "1.5E-3", "007"] {
            assert!(parse_number(s).is_some(), "{s}");
        }
        for s in [
            "", "-", ".", "e3", "1e", "inf", "nan", "1 ", "0x10", "1_000",
        ] {
            assert!(parse_number(s).is_none(), "{s}");
        }
        assert!(matches!(parse_number("3.00"), Some(Canon::Int(_))));
        assert!(matches!(parse_number("-0"), Some(Canon::Int(_))));
        assert!(matches!(parse_number("3.01"), Some(Canon::Float(_))));
        assert!(matches!(parse_number("3e0"), Some(Canon::Float(_))));
    }

    #[test]
    fn grid_keys_are_monotone() {
        let g = Grid::new(1e-6);
        let mut xs: Vec<f64> = vec![
            f64::NEG_INFINITY,
            -f64::MAX,
            -1e300,
            -3.5,
            -1.0,
            -0.999,
            -1e-9,
            0.0,
            1e-9,
            0.5,
            0.999,
            0.999_999_999,
            1.0,
            1.001,
            7.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        let mut rng = Rng(11);
        xs.extend((0..2_000).map(|_| {
            let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            (x - 0.5) * 2f64.powi(rng.below(60) as i32 - 30)
        }));
        xs.sort_by(f64::total_cmp);
        for w in xs.windows(2) {
            assert!(g.key(w[0]) <= g.key(w[1]), "{w:?}");
        }
        assert_eq!(g.key(-1e-12).to_bits(), 0f64.to_bits());
        // Round numbers sit at the centres of cells.
        for x in [1.0, 3.0, 100.0, 0.5, 0.25, 1000.0] {
            assert_eq!(g.key(x * (1.0 - 1e-12)), g.key(x * (1.0 + 1e-12)), "{x}");
        }
    }
}
