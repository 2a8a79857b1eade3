//! Building charts: each kind's body, and every reduction said in a note
//! (top N + "other", LTTB, sampled points, bins, rows left out, a result
//! too big to keep whole).

use super::*;
use crate::chart::recording::Recording;
use crate::chart::testing::recording;
use crate::source::{Column, Value};

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn chart(columns: &[(&str, &str)], rows: Vec<Vec<Value>>, spec: &str) -> Chart {
    build(&recording(columns, rows), &ChartSpec::parse(spec).unwrap()).unwrap()
}

/// A bar chart's labels, series and whether the last bar is "other".
fn bars(c: &Chart) -> (&[String], &[crate::chart::Series], bool) {
    match &c.body {
        Body::Bars {
            labels,
            series,
            other,
        } => (labels, series, *other),
        _ => panic!("not bars: {c:?}"),
    }
}

#[test]
fn bars_keep_the_result_order_and_add_up_repeats() {
    let c = chart(
        &[("country", "TEXT"), ("n", "INTEGER")],
        vec![
            vec![text("US"), Value::Int(5)],
            vec![text("DE"), Value::Int(-2)],
            vec![text("US"), Value::Int(1)],
            vec![Value::Null, Value::Int(4)],
            vec![text("FR"), Value::Null],
        ],
        "",
    );
    assert_eq!(c.kind, Kind::Bar);
    assert_eq!(c.title, "n by country");
    let (labels, series, other) = bars(&c);
    assert!(!other);
    assert_eq!(labels, &["US", "DE", "NULL"]);
    assert_eq!(series[0].values, [6.0, -2.0, 4.0]);
    assert_eq!(
        c.notes,
        [
            "1 row with no value (NULL) left out",
            "rows with the same country are added up (4 rows → 3 bars)"
        ]
    );
}

#[test]
fn ten_thousand_categories_become_the_top_ones_and_other() {
    let rows = (0..10_000)
        .map(|i| vec![text(&format!("c{i}")), Value::Int(i)])
        .collect();
    let c = chart(&[("name", "TEXT"), ("n", "INTEGER")], rows, "");
    let (labels, series, other) = bars(&c);
    assert!(other);
    assert_eq!(labels.len(), MAX_BARS);
    assert_eq!(labels[0], "c9999");
    assert_eq!(labels[MAX_BARS - 1], "other");
    let shown: f64 = (9_981..10_000).map(f64::from).sum();
    let all: f64 = (0..10_000).map(f64::from).sum();
    assert_eq!(series[0].values[MAX_BARS - 1], all - shown);
    assert_eq!(
        c.notes,
        ["10,000 bars: the 19 largest by n, the other 9,981 added up as \"other\""]
    );
}

#[test]
fn long_lines_are_downsampled_and_sorted() {
    let rows = (0..5_000)
        .rev()
        .map(|i| vec![Value::Int(i), Value::Float((i as f64 / 50.0).sin())])
        .collect();
    let c = chart(&[("step", "INTEGER"), ("v", "REAL")], rows, "line");
    let Body::Points { series } = &c.body else {
        panic!()
    };
    let points = &series[0].points;
    assert_eq!(points.len(), MAX_LINE_POINTS);
    assert!(points.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!((points[0].0, points[MAX_LINE_POINTS - 1].0), (0.0, 4_999.0));
    assert_eq!(
        c.notes,
        ["5,000 points downsampled to 1,000 per line (LTTB keeps the shape)"]
    );
}

#[test]
fn big_scatters_are_sampled_evenly() {
    let rows = (0..10_000)
        .map(|i| vec![Value::Int(i % 97), Value::Int(i % 89)])
        .collect();
    let c = chart(&[("a", ""), ("b", "")], rows, "");
    assert_eq!(c.kind, Kind::Scatter);
    let Body::Points { series } = &c.body else {
        panic!()
    };
    assert_eq!(series[0].points.len(), MAX_SCATTER_POINTS);
    assert_eq!(c.notes, ["2,000 of 10,000 points shown (sampled evenly)"]);
}

#[test]
fn one_row_and_equal_values() {
    let c = chart(
        &[("day", "DATE"), ("n", "INTEGER")],
        vec![vec![
            Value::Date(chrono::NaiveDate::from_ymd_opt(2025, 3, 1).unwrap()),
            Value::Int(-3),
        ]],
        "",
    );
    assert_eq!(c.kind, Kind::Line);
    assert_eq!(
        c.x.scale,
        Scale::Time(crate::chart::recording::TimeFlavor::Date)
    );
    let Body::Points { series } = &c.body else {
        panic!()
    };
    assert_eq!(series[0].points.len(), 1);

    let same = (0..4).map(|_| vec![Value::Float(2.5)]).collect();
    let c = chart(&[("v", "REAL")], same, "");
    let Body::Bins { bins } = &c.body else {
        panic!()
    };
    assert_eq!(bins.len(), 1);
    assert_eq!(bins[0].count, 4);
    assert!(bins[0].lo < 2.5 && bins[0].hi > 2.5);
}

#[test]
fn histograms_have_round_bins_and_say_so() {
    let rows = (0..100).map(|i| vec![Value::Int(i - 20)]).collect();
    let c = chart(&[("delta", "INTEGER")], rows, "");
    assert_eq!(c.title, "distribution of delta");
    assert_eq!(c.y_name, "rows");
    let Body::Bins { bins } = &c.body else {
        panic!()
    };
    assert_eq!(bins.len(), 10);
    assert_eq!((bins[0].lo, bins[9].hi), (-20.0, 80.0));
    assert!(bins.iter().all(|b| b.count == 10), "{bins:?}");
    assert_eq!(c.notes, ["100 values in 10 bins of 10"]);
    // The largest value falls in the last bin.
    let bins = histogram(&[0.0, 0.3, 1.0]);
    assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 3);
    assert_eq!(bins.last().unwrap().count, 1);
}

#[test]
fn a_thinned_or_cut_result_says_so_and_titles_come_from_the_question() {
    let mut rec = Recording::with_limit(
        &[Column::new("t", "INTEGER"), Column::new("v", "REAL")],
        Some("  revenue\n per month ".into()),
        100,
    );
    for i in 0..1_000 {
        rec.push(&[Value::Int(i), Value::Float(1.0)]);
    }
    rec.finish(true);
    let c = build(&rec, &ChartSpec::default()).unwrap();
    assert_eq!(c.title, "revenue per month");
    assert_eq!(
        c.notes,
        [
            "drawn from every 16th row of 1,000 (too many to keep them all)",
            "from the first 1,000 rows only: the result had more, not read"
        ]
    );
}

#[test]
fn results_that_cannot_be_charted() {
    let rec = recording(&[("n", "INTEGER")], vec![]);
    assert_eq!(
        build(&rec, &ChartSpec::default()),
        Err("the result has no rows".into())
    );
    let rec = recording(
        &[("a", "REAL"), ("b", "REAL")],
        vec![
            vec![Value::Null, Value::Float(1.0)],
            vec![Value::Float(2.0), Value::Null],
        ],
    );
    assert_eq!(
        build(&rec, &ChartSpec::parse("line").unwrap()),
        Err("no row has both a and b".into())
    );
}
