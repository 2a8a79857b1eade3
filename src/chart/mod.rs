//! Charts (SPEC §10): one model from a result, drawn wherever the user is.
//!
//! - [`Recording`] (`recording.rs`): a bounded copy of a result — a big one
//!   is thinned evenly, never held whole;
//! - [`ChartSpec`]/[`Kind`] (`spec.rs`): what was asked (`/chart line
//!   x=month > f.png`, `--chart line`);
//! - `columns.rs` and `choose.rs`: how each column reads and the kind
//!   chooser;
//! - [`build`] (`build.rs`): the [`Chart`] (`model.rs`), reduced to what a
//!   chart can show — top N + "other", LTTB, sampled points, bins — with
//!   notes that say so;
//! - `axis.rs`: numbers (`1.2k`) and dates as people read them;
//! - [`term`]: the terminal drawing, into a ratatui `Buffer`, so the chat,
//!   single-shot and the full-screen view share one renderer;
//! - [`image`]: SVG and PNG through plotters, with a font embedded in the
//!   binary, written atomically.
//!
//! Nothing here knows a front end; the core keeps the last result and
//! sends the built chart as an event.

pub mod axis;
mod build;
mod choose;
pub mod columns;
pub mod image;
mod model;
mod recording;
mod spec;
pub mod term;

pub use build::{build, histogram, MAX_BARS, MAX_BINS, MAX_LINE_POINTS, MAX_SCATTER_POINTS};
pub use choose::{choose, Plan, MAX_SERIES};
pub use model::{Bin, Body, Chart, PointSeries, Scale, Series, XAxis};
pub use recording::{Cell, Recording, TimeFlavor, MAX_CELLS};
pub use spec::{ChartSpec, ImageFormat, Kind, USAGE};

/// Test helpers: recordings from typed rows, and one chart of each kind.
#[cfg(test)]
pub(crate) mod testing {
    use super::{build, Chart, ChartSpec, Recording};
    use crate::source::{Column, Value};

    /// A recording of `rows` with `(name, type)` columns.
    pub fn recording(columns: &[(&str, &str)], rows: Vec<Vec<Value>>) -> Recording {
        let cols: Vec<Column> = columns.iter().map(|(n, t)| Column::new(*n, *t)).collect();
        let mut r = Recording::new(&cols, None);
        for row in rows {
            r.push(&row);
        }
        r
    }

    fn chart(columns: &[(&str, &str)], rows: Vec<Vec<Value>>, title: &str, spec: &str) -> Chart {
        let mut rec = recording(columns, rows);
        rec.title = Some(title.into());
        build(&rec, &ChartSpec::parse(spec).unwrap()).unwrap()
    }

    /// Revenue per country, one negative (refunds).
    pub fn bar() -> Chart {
        let rows = [
            ("US", 48_250.5),
            ("DE", 23_100.0),
            ("GB", 17_980.25),
            ("FR", -2_450.0),
            ("São Paulo", 950.0),
        ]
        .into_iter()
        .map(|(c, v)| vec![Value::Text(c.into()), Value::Float(v)])
        .collect();
        chart(
            &[("country", "TEXT"), ("revenue", "REAL")],
            rows,
            "revenue per country",
            "",
        )
    }

    /// Revenue and cost per month over two years (text months, as SQLite gives them).
    pub fn line() -> Chart {
        let rows = (0..24)
            .map(|i| {
                let month = format!("{}-{:02}", 2024 + i / 12, i % 12 + 1);
                let season = ((i % 12) as f64 / 12.0 * std::f64::consts::TAU).cos();
                let revenue = 40_000.0 + 1_500.0 * i as f64 - 9_000.0 * season;
                vec![
                    Value::Text(month),
                    Value::Float(revenue),
                    Value::Float(revenue * 0.6),
                ]
            })
            .collect();
        chart(
            &[("month", "TEXT"), ("revenue", "REAL"), ("cost", "REAL")],
            rows,
            "revenue and cost per month",
            "",
        )
    }

    /// Revenue (about 100,000) and orders (about 300) per month: scales
    /// too far apart to share an axis.
    pub fn mixed() -> Chart {
        let rows = (0..12)
            .map(|i| {
                let wave = (i as f64 / 2.0).sin();
                vec![
                    Value::Text(format!("2025-{:02}", i + 1)),
                    Value::Float((100_000.0 + 20_000.0 * wave).round()),
                    Value::Int(280 + (60.0 * (i as f64 / 3.0).cos()) as i64),
                ]
            })
            .collect();
        chart(
            &[
                ("month", "TEXT"),
                ("revenue", "REAL"),
                ("orders", "INTEGER"),
            ],
            rows,
            "revenue and orders per month",
            "line",
        )
    }

    /// Price against units sold for 60 products.
    pub fn scatter() -> Chart {
        let rows = (0..60)
            .map(|i| {
                let price = 5.0 + (i * 37 % 60) as f64 * 2.5;
                let units = (2_000.0 / price + (i * 13 % 7) as f64 * 3.0).round();
                vec![Value::Float(price), Value::Float(units)]
            })
            .collect();
        chart(
            &[("price", "REAL"), ("units", "REAL")],
            rows,
            "units sold by price",
            "",
        )
    }

    /// Order totals, skewed.
    pub fn hist() -> Chart {
        let rows = (0..500)
            .map(|i| {
                let t = (i * 7919 % 500) as f64 / 500.0;
                vec![Value::Float((t * t * 400.0 * 100.0).round() / 100.0)]
            })
            .collect();
        chart(&[("total", "REAL")], rows, "order totals", "")
    }
}
