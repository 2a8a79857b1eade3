//! [`Chart`]: what every renderer draws — already reduced to what fits a
//! chart (bars, points, bins), with notes that say how it was reduced.
//! Plain data: it travels in an event to whichever front end draws it.

use super::axis::{compact, short, time_label};
use super::recording::TimeFlavor;
use super::spec::Kind;

/// A chart, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub kind: Kind,
    /// The question it answers, or what it shows ("revenue by month").
    pub title: String,
    /// The x axis (bar: the categories; hist: the binned column).
    pub x: XAxis,
    /// What the values are (one series: its column; hist: `rows`).
    pub y_name: String,
    pub body: Body,
    /// How the data was reduced or what was left out, one line each.
    pub notes: Vec<String>,
}

/// The x axis: its name and how its values read.
#[derive(Debug, Clone, PartialEq)]
pub struct XAxis {
    pub name: String,
    pub scale: Scale,
}

/// How positions on an axis read.
#[derive(Debug, Clone, PartialEq)]
pub enum Scale {
    Number,
    Time(TimeFlavor),
    /// Positions 0, 1, 2, … named by these labels (a line over text).
    Labels(Vec<String>),
}

impl Scale {
    /// The label of position `v` on an axis that covers `span`.
    pub fn label(&self, v: f64, span: f64) -> String {
        match self {
            Scale::Number => compact(v),
            Scale::Time(flavor) => time_label(v, *flavor, span),
            Scale::Labels(labels) => {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
        }
    }

    /// The label of an x tick at `v` on an axis that covers `span`:
    /// numbers as exactly as they fit (a year is `2024`, not `2k`).
    pub fn tick(&self, v: f64, span: f64) -> String {
        match self {
            Scale::Number => short(v),
            other => other.label(v, span),
        }
    }
}

/// What is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// One bar per label and series (`values[i]` belongs to `labels[i]`).
    Bars {
        labels: Vec<String>,
        series: Vec<Series>,
        /// The last bar is "other": the categories not shown, added up. It
        /// does not set the scale (it would flatten the rest): a longer
        /// one is drawn cut off, with its value.
        other: bool,
    },
    /// Points per series: joined (line) or not (scatter).
    Points { series: Vec<PointSeries> },
    /// Histogram bins, lowest first, of equal width.
    Bins { bins: Vec<Bin> },
}

/// Values of one column, one per bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

/// Points of one column.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSeries {
    pub name: String,
    /// `(x, y)`; a line's are in x order.
    pub points: Vec<(f64, f64)>,
}

/// Rows whose value falls in `lo..hi` (the last bin includes `hi`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

impl Chart {
    /// The names of the series (a legend needs two or more).
    pub fn series_names(&self) -> Vec<&str> {
        match &self.body {
            Body::Bars { series, .. } => series.iter().map(|s| s.name.as_str()).collect(),
            Body::Points { series } => series.iter().map(|s| s.name.as_str()).collect(),
            Body::Bins { .. } => vec![self.y_name.as_str()],
        }
    }

    /// The smallest and largest x of the points (`None` without points).
    pub fn x_range(&self) -> Option<(f64, f64)> {
        let Body::Points { series } = &self.body else {
            return None;
        };
        range(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)))
    }

    /// The smallest and largest value the axis covers (bars and bins:
    /// with 0; not the "other" bar).
    pub fn y_range(&self) -> Option<(f64, f64)> {
        match &self.body {
            Body::Points { series } => {
                range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
            }
            Body::Bars { series, other, .. } => range(
                series
                    .iter()
                    .flat_map(|s| scaled(&s.values, *other).iter().copied())
                    .chain([0.0]),
            ),
            Body::Bins { bins } => range(bins.iter().map(|b| b.count as f64).chain([0.0])),
        }
    }
}

/// Series whose largest values differ by more than this factor do not
/// share an axis: the smaller would be drawn flat along zero.
pub const SCALE_RATIO: f64 = 20.0;

impl Chart {
    /// For points of several series whose scales differ by more than
    /// [`SCALE_RATIO`]: the series that are small next to the largest
    /// (they get the image's right axis, and each series its own panel in
    /// a terminal). `None` when one axis serves them all.
    pub fn small_series(&self) -> Option<Vec<usize>> {
        let Body::Points { series } = &self.body else {
            return None;
        };
        if series.len() < 2 {
            return None;
        }
        let size = |s: &PointSeries| s.points.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
        let largest = series.iter().map(size).fold(0.0, f64::max);
        let small: Vec<usize> = series
            .iter()
            .enumerate()
            .filter(|(_, s)| size(s) * SCALE_RATIO < largest)
            .map(|(i, _)| i)
            .collect();
        (!small.is_empty()).then_some(small)
    }

    /// The chart of one of its point series alone (a panel of its own).
    pub fn only_series(&self, i: usize) -> Chart {
        let mut one = self.clone();
        if let Body::Points { series } = &self.body {
            if let Some(s) = series.get(i) {
                one.y_name = s.name.clone();
                one.body = Body::Points {
                    series: vec![s.clone()],
                };
            }
        }
        one
    }
}

/// The values of a bar series that set its scale: all but "other".
pub fn scaled(values: &[f64], other: bool) -> &[f64] {
    match values.split_last() {
        Some((_, rest)) if other && !rest.is_empty() => rest,
        _ => values,
    }
}

/// The smallest and largest of `values`.
pub fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}
