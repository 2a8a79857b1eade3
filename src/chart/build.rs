//! From a [`Recording`] and what was asked to a [`Chart`]: the kind and
//! columns from the chooser, then what does not fit a chart reduced
//! honestly — bars: the top categories plus "other"; lines: LTTB
//! downsampling; scatter: evenly sampled points; histograms: binned — and
//! every reduction (and every row left out) said in the chart's notes.
//! Pure.

use std::collections::HashMap;

use super::axis::{compact, nice_step, plain, time_label, widen};
use super::choose::{choose, Plan};
use super::columns::{describe, label, position, Class, ColumnInfo};
use super::model::{range, Bin, Body, Chart, PointSeries, Scale, Series, XAxis};
use super::recording::Recording;
use super::spec::{ChartSpec, Kind};
use crate::render::thousands;

/// Bars drawn at most; more categories: the top ones and "other".
pub const MAX_BARS: usize = 20;
/// Points of a line at most (per series); more are downsampled (LTTB).
pub const MAX_LINE_POINTS: usize = 1_000;
/// Points of a scatter chart at most (per series); more are sampled evenly.
pub const MAX_SCATTER_POINTS: usize = 2_000;
/// Histogram bins at most.
pub const MAX_BINS: usize = 20;

/// The chart `spec` asks for from `rec`; the error says in a few words why
/// the result cannot be charted.
pub fn build(rec: &Recording, spec: &ChartSpec) -> Result<Chart, String> {
    if rec.columns().is_empty() {
        return Err("the statement returned no columns".into());
    }
    if rec.kept() == 0 {
        return Err("the result has no rows".into());
    }
    let cols = describe(rec);
    let plan = choose(&cols, spec)?;
    let mut notes = recording_notes(rec);
    if !plan.left_out.is_empty() {
        notes.push(format!(
            "only the first {} number columns are drawn; left out: {}",
            plan.y.len(),
            plan.left_out.join(", ")
        ));
    }
    let data = Data {
        rec,
        cols: &cols,
        plan: &plan,
    };
    let (x, y_name, body) = match plan.kind {
        Kind::Bar => data.bars(&mut notes),
        Kind::Line | Kind::Scatter => data.points(&mut notes)?,
        Kind::Hist => data.bins(&mut notes)?,
    };
    let title = rec
        .title
        .as_deref()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| match plan.kind {
            Kind::Hist => format!("distribution of {}", x.name),
            _ => format!("{y_name} by {}", x.name),
        });
    Ok(Chart {
        kind: plan.kind,
        title,
        x,
        y_name,
        body,
        notes,
    })
}

/// What the recording itself left out.
fn recording_notes(rec: &Recording) -> Vec<String> {
    let mut notes = Vec::new();
    if rec.stride() > 1 {
        notes.push(format!(
            "drawn from every {} row of {} (too many to keep them all)",
            ordinal(rec.stride()),
            thousands(rec.seen())
        ));
    }
    if rec.more() {
        notes.push(format!(
            "from the first {} rows only: the result had more, not read",
            thousands(rec.seen())
        ));
    }
    notes
}

/// `2nd`, `8th`, `1024th`.
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{}{suffix}", thousands(n))
}

/// The recording, its columns and the plan, for the builders.
struct Data<'a> {
    rec: &'a Recording,
    cols: &'a [ColumnInfo],
    plan: &'a Plan,
}

impl Data<'_> {
    /// The value of series `y` in kept row `row`.
    fn value(&self, y: usize, row: usize) -> Option<f64> {
        position(&self.rec.cells(y)[row], Class::Number)
    }

    /// The result's row number of kept row `k` (1-based).
    fn row_number(&self, k: usize) -> f64 {
        (k as u64 * self.rec.stride() + 1) as f64
    }

    /// The value column, or the series' names (`revenue, cost`) while short.
    fn y_name(&self) -> String {
        let names: Vec<&str> = self
            .plan
            .y
            .iter()
            .map(|y| self.cols[*y].name.as_str())
            .collect();
        let joined = names.join(", ");
        if names.len() == 1 || joined.chars().count() <= 40 {
            joined
        } else {
            "values".into()
        }
    }

    fn x_name(&self) -> String {
        self.plan
            .x
            .map_or_else(|| "row".to_string(), |i| self.cols[i].name.clone())
    }

    /// Labels of the x column, one per kept row.
    fn labels(&self) -> Vec<String> {
        let Some(x) = self.plan.x else {
            return (0..self.rec.kept())
                .map(|k| plain(self.row_number(k)))
                .collect();
        };
        let class = self.cols[x].class;
        let cells = self.rec.cells(x);
        match class {
            Class::Time(flavor) => {
                let span = range(cells.iter().filter_map(|c| position(c, class)))
                    .map_or(0.0, |(lo, hi)| hi - lo);
                cells
                    .iter()
                    .map(|c| match position(c, class) {
                        Some(v) => time_label(v, flavor, span.max(2.0 * 86_400.0)),
                        None => label(c),
                    })
                    .collect()
            }
            _ => cells.iter().map(label).collect(),
        }
    }

    fn bars(&self, notes: &mut Vec<String>) -> (XAxis, String, Body) {
        let labels = self.labels();
        let mut order: Vec<String> = Vec::new();
        let mut slots: HashMap<&str, usize> = HashMap::new();
        let mut sums: Vec<Vec<f64>> = vec![Vec::new(); self.plan.y.len()];
        let (mut empty, mut used) = (0u64, 0u64);
        for (row, name) in labels.iter().enumerate() {
            let values: Vec<Option<f64>> =
                self.plan.y.iter().map(|y| self.value(*y, row)).collect();
            if values.iter().all(Option::is_none) {
                empty += 1;
                continue;
            }
            used += 1;
            let slot = *slots.entry(name.as_str()).or_insert_with(|| {
                order.push(name.clone());
                sums.iter_mut().for_each(|s| s.push(0.0));
                order.len() - 1
            });
            for (s, v) in sums.iter_mut().zip(values) {
                s[slot] += v.unwrap_or(0.0);
            }
        }
        if empty > 0 {
            notes.push(left_out(empty, "with no value (NULL)"));
        }
        if (order.len() as u64) < used {
            notes.push(format!(
                "rows with the same {} are added up ({} rows → {} bars)",
                self.x_name(),
                thousands(used),
                thousands(order.len() as u64)
            ));
        }
        let other = order.len() > MAX_BARS;
        let (labels, sums) = self.top(order, sums, notes);
        let series = self
            .plan
            .y
            .iter()
            .zip(sums)
            .map(|(y, values)| Series {
                name: self.cols[*y].name.clone(),
                values,
            })
            .collect();
        let x = XAxis {
            name: self.x_name(),
            scale: Scale::Labels(labels.clone()),
        };
        let body = Body::Bars {
            labels,
            series,
            other,
        };
        (x, self.y_name(), body)
    }

    /// At most [`MAX_BARS`] bars: the largest (by the first series) and
    /// "other" for the rest, added up.
    fn top(
        &self,
        labels: Vec<String>,
        sums: Vec<Vec<f64>>,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<Vec<f64>>) {
        if labels.len() <= MAX_BARS {
            return (labels, sums);
        }
        let mut idx: Vec<usize> = (0..labels.len()).collect();
        idx.sort_by(|a, b| sums[0][*b].abs().total_cmp(&sums[0][*a].abs()));
        let (shown, rest) = idx.split_at(MAX_BARS - 1);
        let mut out_labels: Vec<String> = shown.iter().map(|i| labels[*i].clone()).collect();
        out_labels.push("other".into());
        let out_sums = sums
            .iter()
            .map(|s| {
                let mut v: Vec<f64> = shown.iter().map(|i| s[*i]).collect();
                v.push(rest.iter().map(|i| s[*i]).sum());
                v
            })
            .collect();
        notes.push(format!(
            "{} bars: the {} largest by {}, the other {} added up as \"other\"",
            thousands(labels.len() as u64),
            shown.len(),
            self.cols[self.plan.y[0]].name,
            thousands(rest.len() as u64)
        ));
        (out_labels, out_sums)
    }

    /// The x position of every kept row, and the scale they read in.
    fn x_positions(&self) -> (Vec<Option<f64>>, Scale) {
        let Some(x) = self.plan.x else {
            let positions = (0..self.rec.kept())
                .map(|k| Some(self.row_number(k)))
                .collect();
            return (positions, Scale::Number);
        };
        let class = self.cols[x].class;
        let cells = self.rec.cells(x);
        match class {
            Class::Number | Class::Time(_) => {
                let scale = match class {
                    Class::Time(f) => Scale::Time(f),
                    _ => Scale::Number,
                };
                (cells.iter().map(|c| position(c, class)).collect(), scale)
            }
            Class::Category | Class::Empty => {
                let mut names: Vec<String> = Vec::new();
                let mut seen: HashMap<String, usize> = HashMap::new();
                let positions = cells
                    .iter()
                    .map(|c| {
                        let name = label(c);
                        let next = names.len();
                        let i = *seen.entry(name.clone()).or_insert_with(|| {
                            names.push(name);
                            next
                        });
                        Some(i as f64)
                    })
                    .collect();
                (positions, Scale::Labels(names))
            }
        }
    }

    fn points(&self, notes: &mut Vec<String>) -> Result<(XAxis, String, Body), String> {
        let (xs, scale) = self.x_positions();
        let line = self.plan.kind == Kind::Line;
        let mut series = Vec::new();
        let mut missing = 0u64;
        let mut reduced: Vec<(usize, usize)> = Vec::new();
        for y in &self.plan.y {
            let mut points: Vec<(f64, f64)> = Vec::with_capacity(xs.len());
            for (row, x) in xs.iter().enumerate() {
                match (x, self.value(*y, row)) {
                    (Some(x), Some(v)) => points.push((*x, v)),
                    _ => missing += 1,
                }
            }
            if line {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let before = points.len();
            let points = if line {
                downsample(points, MAX_LINE_POINTS)
            } else {
                sample(points, MAX_SCATTER_POINTS)
            };
            if points.len() < before {
                reduced.push((before, points.len()));
            }
            series.push(PointSeries {
                name: self.cols[*y].name.clone(),
                points,
            });
        }
        if series.iter().all(|s| s.points.is_empty()) {
            return Err(format!(
                "no row has both {} and {}",
                self.x_name(),
                self.y_name()
            ));
        }
        if missing > 0 {
            notes.push(left_out(missing, "without an x or a value (NULL)"));
        }
        if let Some((before, after)) = reduced.iter().max() {
            notes.push(if line {
                format!(
                    "{} points downsampled to {} per line (LTTB keeps the shape)",
                    thousands(*before as u64),
                    thousands(*after as u64)
                )
            } else {
                format!(
                    "{} of {} points shown (sampled evenly)",
                    thousands(*after as u64),
                    thousands(*before as u64)
                )
            });
        }
        let x = XAxis {
            name: self.x_name(),
            scale,
        };
        Ok((x, self.y_name(), Body::Points { series }))
    }

    fn bins(&self, notes: &mut Vec<String>) -> Result<(XAxis, String, Body), String> {
        let column = self.plan.x.unwrap_or(0);
        let name = self.cols[column].name.clone();
        let values: Vec<f64> = self
            .rec
            .cells(column)
            .iter()
            .filter_map(|c| position(c, Class::Number))
            .collect();
        let missing = self.rec.kept() - values.len();
        if values.is_empty() {
            return Err(format!("{name} has only NULLs"));
        }
        if missing > 0 {
            notes.push(left_out(missing as u64, "with no value (NULL)"));
        }
        let bins = histogram(&values);
        let width = bins[0].hi - bins[0].lo;
        notes.push(format!(
            "{} values in {} bins of {}",
            thousands(values.len() as u64),
            bins.len(),
            compact(width)
        ));
        let x = XAxis {
            name,
            scale: Scale::Number,
        };
        Ok((x, "rows".into(), Body::Bins { bins }))
    }
}

/// `3 rows with no value (NULL) left out`.
fn left_out(n: u64, why: &str) -> String {
    let noun = if n == 1 { "row" } else { "rows" };
    format!("{} {noun} {why} left out", thousands(n))
}

/// At most `max` points that keep the line's shape (largest triangle
/// three buckets).
fn downsample(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points;
    }
    let data = points
        .into_iter()
        .map(|(x, y)| lttb::DataPoint::new(x, y))
        .collect();
    lttb::lttb(data, max.max(3))
        .into_iter()
        .map(|p| (p.x, p.y))
        .collect()
}

/// At most `max` points, evenly spaced through the result.
fn sample(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points;
    }
    let step = points.len() as f64 / max as f64;
    (0..max)
        .map(|i| points[((i as f64 * step) as usize).min(points.len() - 1)])
        .collect()
}

/// Equal-width bins with round edges over `values` (not empty): about
/// log2(n) + 1 of them (Sturges), at most [`MAX_BINS`]; whole numbers get
/// bins at least 1 wide; all-equal values one bin around them.
pub fn histogram(values: &[f64]) -> Vec<Bin> {
    let (lo, hi) = range(values.iter().copied()).unwrap_or((0.0, 0.0));
    let whole = values.iter().all(|v| v.fract() == 0.0);
    if hi <= lo {
        let (lo, hi) = if whole {
            (lo - 0.5, hi + 0.5)
        } else {
            widen(lo, hi)
        };
        return vec![Bin {
            lo,
            hi,
            count: values.len() as u64,
        }];
    }
    let wanted = ((values.len() as f64).log2().ceil() as usize + 1).clamp(2, MAX_BINS);
    let step = bin_step(lo, hi, wanted, whole);
    let (start, n) = edges(lo, hi, step);
    let mut bins: Vec<Bin> = (0..n)
        .map(|i| Bin {
            lo: start + i as f64 * step,
            hi: start + (i + 1) as f64 * step,
            count: 0,
        })
        .collect();
    for v in values {
        // A hair of tolerance keeps 0.3 in the bin that starts at 0.3.
        let i = ((v - start) / step + 1e-9).floor().max(0.0) as usize;
        bins[i.min(n - 1)].count += 1;
    }
    bins
}

/// The round bin width (1, 2, 2.5 or 5 × 10ⁿ; whole numbers: at least 1)
/// whose bin count over `lo..=hi` comes nearest to `wanted`, at most
/// [`MAX_BINS`].
fn bin_step(lo: f64, hi: f64, wanted: usize, whole: bool) -> f64 {
    let raw = (hi - lo) / wanted as f64;
    let base = 10f64.powf(raw.log10().floor());
    let candidates = [0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0].map(|f| f * base);
    candidates
        .into_iter()
        .filter(|step| !whole || *step >= 1.0)
        .map(|step| (step, edges(lo, hi, step).1))
        .filter(|(_, n)| *n <= MAX_BINS)
        .min_by_key(|(_, n)| n.abs_diff(wanted))
        .map_or_else(|| nice_step(raw), |(step, _)| step)
}

/// The first edge and the number of `step`-wide bins that cover `lo..=hi`.
fn edges(lo: f64, hi: f64, step: f64) -> (f64, usize) {
    let start = (lo / step).floor() * step;
    let n = ((hi - start) / step - 1e-9).ceil().max(1.0) as usize;
    (start, n)
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
