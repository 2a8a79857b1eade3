//! Axis text shared by every renderer: numbers people read at a glance
//! (`950`, `1.2k`, `3.4M`, `-12.5`), dates as dates, and "nice" tick
//! steps (1, 2, 2.5, 5 × 10ⁿ). Pure.

use chrono::DateTime;

use super::recording::TimeFlavor;

/// A number in a few characters: `0`, `12`, `0.25`, `1.2k`, `34k`, `3.4M`, `1.5B`.
pub fn compact(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a < 1_000.0 {
        return small(v);
    }
    const UNITS: [(f64, &str); 4] = [(1e3, "k"), (1e6, "M"), (1e9, "B"), (1e12, "T")];
    let mut unit = UNITS.iter().rposition(|(size, _)| a >= *size).unwrap_or(0);
    loop {
        let (size, name) = UNITS[unit];
        let x = v / size;
        // 999,950 rounds to 1000k: that is 1M.
        if x.abs().round() >= 1_000.0 && unit + 1 < UNITS.len() {
            unit += 1;
            continue;
        }
        let text = if x.abs() < 99.95 {
            trim(&format!("{x:.1}"))
        } else {
            format!("{x:.0}")
        };
        return format!("{text}{name}");
    }
}

/// Below a thousand: whole numbers as they are, others to two decimals,
/// tiny ones in scientific form.
fn small(v: f64) -> String {
    if v == v.trunc() {
        return format!("{v:.0}");
    }
    if v.abs() < 0.01 {
        return format!("{v:.1e}");
    }
    trim(&format!("{v:.2}"))
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// A value written next to a bar: whole numbers in full below a million
/// (`4,023`), others to two decimals below ten thousand (`12.5`), the rest
/// compact (`48.3k`, `1.2M`).
pub fn amount(v: f64) -> String {
    let a = v.abs();
    if v == v.trunc() && a < 1e6 {
        let sign = if v < 0.0 { "-" } else { "" };
        format!("{sign}{}", crate::render::thousands(a as u64))
    } else if a < 1e4 {
        small(v)
    } else {
        compact(v)
    }
}

/// Below ten thousand as it is (`2024`, `2021.5`), above in compact form.
pub fn short(v: f64) -> String {
    if v.abs() < 10_000.0 {
        small(v)
    } else {
        compact(v)
    }
}

/// A number as a label of its own (a year, an id): whole numbers in full
/// (`2024`), others in their shortest form.
pub fn plain(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// A time (seconds since 1970, or since midnight for a time of day) as a
/// label; `span` (seconds the axis covers) picks the precision.
pub fn time_label(secs: f64, flavor: TimeFlavor, span: f64) -> String {
    if flavor == TimeFlavor::TimeOfDay {
        let s = secs.round().max(0.0) as u64;
        let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
        return if span > 0.0 && span < 120.0 {
            format!("{h:02}:{m:02}:{sec:02}")
        } else {
            format!("{h:02}:{m:02}")
        };
    }
    let whole = secs.floor();
    let nanos = ((secs - whole) * 1e9) as u32;
    let Some(t) = DateTime::from_timestamp(whole as i64, nanos) else {
        return plain(secs);
    };
    let format = match flavor {
        TimeFlavor::Month => "%Y-%m",
        TimeFlavor::Date => "%Y-%m-%d",
        _ if span >= 2.0 * 86_400.0 => "%Y-%m-%d",
        _ if span > 0.0 && span < 120.0 => "%H:%M:%S",
        _ => "%Y-%m-%d %H:%M",
    };
    t.format(format).to_string()
}

const DAY: f64 = 86_400.0;

/// Round positions on a time axis from `lo` to `hi` (seconds), about
/// `target` of them: month (or year) starts for spans over two months,
/// else whole days, hours, minutes or seconds.
pub fn time_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let target = target.max(1) as f64;
    let span = hi - lo;
    if span >= 60.0 * DAY {
        return month_ticks(lo, hi, target);
    }
    const STEPS: [f64; 22] = [
        1.0,
        2.0,
        5.0,
        10.0,
        15.0,
        30.0,
        60.0,
        120.0,
        300.0,
        600.0,
        900.0,
        1800.0,
        3600.0,
        7200.0,
        10_800.0,
        21_600.0,
        43_200.0,
        DAY,
        2.0 * DAY,
        7.0 * DAY,
        14.0 * DAY,
        30.0 * DAY,
    ];
    let step = STEPS
        .into_iter()
        .find(|s| span / s <= target)
        .unwrap_or(30.0 * DAY);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + 1e-6 {
        out.push(v);
        v += step;
    }
    out
}

fn month_ticks(lo: f64, hi: f64, target: f64) -> Vec<f64> {
    use chrono::{Datelike, NaiveDate};
    let months = (hi - lo) / (30.44 * DAY);
    let step = [1, 2, 3, 6, 12, 24, 60, 120, 240]
        .into_iter()
        .find(|s| months / f64::from(*s) <= target)
        .unwrap_or(600);
    let Some(start) = DateTime::from_timestamp(lo.floor() as i64, 0) else {
        return Vec::new();
    };
    let first = start.year() * 12 + start.month0() as i32;
    let mut index = first.div_euclid(step) * step;
    let mut out = Vec::new();
    while let Some(d) =
        NaiveDate::from_ymd_opt(index.div_euclid(12), index.rem_euclid(12) as u32 + 1, 1)
    {
        let secs = super::recording::date_seconds(&d);
        if secs > hi + 1e-6 {
            break;
        }
        if secs >= lo - 1e-6 {
            out.push(secs);
        }
        index += step;
    }
    out
}

/// Evenly spaced round values that cover `lo..=hi` in about `target` steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    pub lo: f64,
    pub hi: f64,
    pub step: f64,
}

impl Ticks {
    /// Ticks for data from `lo` to `hi`; equal ends get room around them.
    pub fn new(lo: f64, hi: f64, target: usize) -> Ticks {
        let (lo, hi) = widen(lo, hi);
        let step = nice_step((hi - lo) / target.max(1) as f64);
        let first = (lo / step).floor() * step;
        let last = (hi / step).ceil() * step;
        Ticks {
            lo: first,
            hi: last.max(first + step),
            step,
        }
    }

    /// The tick values, lowest first.
    pub fn values(&self) -> Vec<f64> {
        let n = ((self.hi - self.lo) / self.step).round() as usize;
        (0..=n)
            .map(|i| {
                let v = self.lo + i as f64 * self.step;
                // -0 and 1e-17 are 0.
                if v.abs() < self.step * 1e-9 {
                    0.0
                } else {
                    v
                }
            })
            .collect()
    }
}

/// `lo..hi` with room when both ends are equal (one value, all-equal
/// values): ±1, or ±10% of the value.
pub fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        return (lo, hi);
    }
    let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
    (lo - pad, hi + pad)
}

/// The round number (1, 2, 2.5 or 5 × 10ⁿ) nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let fraction = raw / base;
    let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|n| fraction <= *n + 1e-9)
        .unwrap_or(10.0);
    nice * base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_numbers() {
        let cases = [
            (0.0, "0"),
            (12.0, "12"),
            (-3.0, "-3"),
            (0.25, "0.25"),
            (12.345, "12.35"),
            (999.0, "999"),
            (1_000.0, "1k"),
            (1_234.0, "1.2k"),
            (12_500.0, "12.5k"),
            (123_456.0, "123k"),
            (999_950.0, "1M"),
            (3_400_000.0, "3.4M"),
            (-2_500_000_000.0, "-2.5B"),
            (0.000123, "1.2e-4"),
        ];
        for (v, text) in cases {
            assert_eq!(compact(v), text, "{v}");
        }
        assert_eq!(plain(2024.0), "2024");
        assert_eq!(short(2021.5), "2021.5");
        assert_eq!(amount(4_023.0), "4,023");
        assert_eq!(amount(-950.0), "-950");
        assert_eq!(amount(1234.567), "1234.57");
        assert_eq!(amount(48_250.5), "48.3k");
        assert_eq!(amount(2_000_000.0), "2M");
        assert_eq!(short(123_456.0), "123k");
        assert_eq!(plain(0.5), "0.5");
    }

    #[test]
    fn dates_as_dates() {
        let day = 86_400.0;
        let jan31 = 20_119.0 * day; // 2025-01-31
        assert_eq!(
            time_label(jan31, TimeFlavor::Date, 30.0 * day),
            "2025-01-31"
        );
        assert_eq!(time_label(jan31, TimeFlavor::Month, 0.0), "2025-01");
        assert_eq!(
            time_label(jan31 + 36_000.0, TimeFlavor::DateTime, 3_600.0),
            "2025-01-31 10:00"
        );
        assert_eq!(
            time_label(jan31 + 36_005.0, TimeFlavor::DateTime, 60.0),
            "10:00:05"
        );
        assert_eq!(
            time_label(jan31, TimeFlavor::DateTime, 10.0 * day),
            "2025-01-31"
        );
        assert_eq!(
            time_label(3_600.0 * 13.5, TimeFlavor::TimeOfDay, 0.0),
            "13:30"
        );
    }

    #[test]
    fn time_ticks_fall_on_round_times() {
        let day = 86_400.0;
        let jan1 = 20_089.0 * day; // 2025-01-01
        let ticks = time_ticks(jan1, jan1 + 364.0 * day, 6);
        let labels: Vec<String> = ticks
            .iter()
            .map(|t| time_label(*t, TimeFlavor::Month, 0.0))
            .collect();
        assert_eq!(
            labels,
            ["2025-01", "2025-03", "2025-05", "2025-07", "2025-09", "2025-11"]
        );
        let hours = time_ticks(jan1 + 1_000.0, jan1 + day, 4);
        assert_eq!(
            hours,
            [
                jan1 + 21_600.0,
                jan1 + 43_200.0,
                jan1 + 64_800.0,
                jan1 + day
            ]
        );
    }

    #[test]
    fn nice_ticks() {
        let t = Ticks::new(3.0, 97.0, 4);
        assert_eq!(
            t,
            Ticks {
                lo: 0.0,
                hi: 100.0,
                step: 25.0
            }
        );
        assert_eq!(t.values(), [0.0, 25.0, 50.0, 75.0, 100.0]);
        let t = Ticks::new(-12.0, 7.0, 4);
        assert_eq!((t.lo, t.hi, t.step), (-15.0, 10.0, 5.0));
        // All-equal values get room around them.
        let t = Ticks::new(5.0, 5.0, 4);
        assert!(t.lo < 5.0 && t.hi > 5.0, "{t:?}");
        assert_eq!(
            Ticks::new(0.0, 0.0, 4).values(),
            [-1.0, -0.5, 0.0, 0.5, 1.0]
        );
        assert_eq!(nice_step(0.0), 1.0);
    }
}
