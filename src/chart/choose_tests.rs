//! The kind chooser on typed columns: what each shape of result becomes,
//! what a user's kind or columns change, and the one-line reasons when a
//! result cannot be charted.

use super::*;
use crate::chart::columns::describe;
use crate::chart::spec::ChartSpec;
use crate::chart::testing::recording;
use crate::source::Value;

fn plan(columns: &[(&str, &str)], rows: Vec<Vec<Value>>, spec: &str) -> Result<Plan, String> {
    let rec = recording(columns, rows);
    choose(&describe(&rec), &ChartSpec::parse(spec).unwrap())
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn kind(columns: &[(&str, &str)], rows: Vec<Vec<Value>>) -> Kind {
    plan(columns, rows, "").unwrap().kind
}

#[test]
fn category_and_number_is_a_bar() {
    let p = plan(
        &[("country", "TEXT"), ("n", "INTEGER")],
        vec![
            vec![text("DE"), Value::Int(2)],
            vec![text("US"), Value::Int(5)],
        ],
        "",
    )
    .unwrap();
    assert_eq!(
        p,
        Plan {
            kind: Kind::Bar,
            x: Some(0),
            y: vec![1],
            left_out: vec![]
        }
    );
}

#[test]
fn time_and_numbers_is_a_line_with_several_series() {
    let p = plan(
        &[("month", "TEXT"), ("revenue", "REAL"), ("cost", "REAL")],
        vec![
            vec![text("2025-01"), Value::Float(10.0), Value::Float(4.0)],
            vec![text("2025-02"), Value::Float(12.0), Value::Null],
        ],
        "",
    )
    .unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Line, Some(0), vec![1, 2]));
    let d = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    assert_eq!(
        kind(
            &[("day", "DATE"), ("n", "INTEGER")],
            vec![vec![Value::Date(d), Value::Int(1)]]
        ),
        Kind::Line
    );
}

#[test]
fn two_numbers_are_a_scatter_unless_the_first_only_grows() {
    let rows = vec![
        vec![Value::Float(3.0), Value::Float(1.0)],
        vec![Value::Float(1.0), Value::Float(-2.0)],
    ];
    assert_eq!(kind(&[("a", ""), ("b", "")], rows), Kind::Scatter);
    let years = (2019..2025)
        .map(|y| vec![Value::Int(y), Value::Int(y % 3)])
        .collect();
    let p = plan(&[("year", ""), ("orders", "")], years, "").unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Line, Some(0), vec![1]));
}

#[test]
fn one_number_is_a_histogram() {
    let rows = vec![
        vec![Value::Float(-1.5)],
        vec![Value::Null],
        vec![Value::Float(3.0)],
    ];
    let p = plan(&[("price", "REAL")], rows, "").unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Hist, Some(0), vec![]));
}

#[test]
fn ids_are_labels_not_measures() {
    let p = plan(
        &[("customer_id", "INTEGER"), ("orders", "INTEGER")],
        vec![
            vec![Value::Int(7), Value::Int(3)],
            vec![Value::Int(9), Value::Int(1)],
        ],
        "",
    )
    .unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Bar, Some(0), vec![1]));
}

#[test]
fn nulls_negatives_one_row_and_equal_values_still_choose() {
    // A single row, negative numbers.
    assert_eq!(
        kind(
            &[("c", "TEXT"), ("v", "REAL")],
            vec![vec![text("x"), Value::Float(-4.0)]]
        ),
        Kind::Bar
    );
    // All-equal values.
    let same = (0..5).map(|_| vec![Value::Int(7)]).collect();
    assert_eq!(kind(&[("v", "INTEGER")], same), Kind::Hist);
    // NULLs in the label and value columns do not change the kind.
    let p = plan(
        &[("c", "TEXT"), ("v", "REAL")],
        vec![
            vec![Value::Null, Value::Float(1.0)],
            vec![text("y"), Value::Null],
        ],
        "",
    )
    .unwrap();
    assert_eq!(p.kind, Kind::Bar);
}

#[test]
fn ten_thousand_categories_are_still_a_bar() {
    let rows = (0..10_000)
        .map(|i| vec![text(&format!("c{i}")), Value::Int(i)])
        .collect();
    assert_eq!(kind(&[("name", "TEXT"), ("n", "INTEGER")], rows), Kind::Bar);
}

#[test]
fn a_kind_or_columns_given_win() {
    let cols = [("month", "TEXT"), ("revenue", "REAL"), ("cost", "REAL")];
    let rows = || {
        vec![
            vec![text("2025-01"), Value::Float(10.0), Value::Float(4.0)],
            vec![text("2025-02"), Value::Float(12.0), Value::Float(5.0)],
        ]
    };
    let p = plan(&cols, rows(), "bar y=cost").unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Bar, Some(0), vec![2]));
    let p = plan(&cols, rows(), "scatter x=revenue y=cost").unwrap();
    assert_eq!((p.kind, p.x, p.y), (Kind::Scatter, Some(1), vec![2]));
    let p = plan(&cols, rows(), "hist y=COST").unwrap();
    assert_eq!((p.kind, p.x), (Kind::Hist, Some(2)));
    let p = plan(&cols, rows(), "x=revenue").unwrap();
    assert_eq!((p.kind, p.y), (Kind::Line, vec![2]));
}

#[test]
fn what_cannot_be_charted_says_why() {
    let words = vec![vec![text("a"), text("b")]];
    assert_eq!(
        plan(&[("x", "TEXT"), ("y", "TEXT")], words.clone(), ""),
        Err("it has no number column (a chart needs a count, a sum or another number)".into())
    );
    assert_eq!(
        plan(&[("x", "")], vec![vec![Value::Null]], ""),
        Err("every value is NULL".into())
    );
    let cols = [("country", "TEXT"), ("n", "INTEGER")];
    let rows = || vec![vec![text("DE"), Value::Int(2)]];
    assert_eq!(
        plan(&cols, rows(), "y=country"),
        Err("y=country is not a number column (text)".into())
    );
    assert_eq!(
        plan(&cols, rows(), "x=month"),
        Err("no column named month (the result has country, n)".into())
    );
    assert_eq!(
        plan(&cols, rows(), "scatter"),
        Err("a scatter chart needs two number columns".into())
    );
    assert_eq!(
        plan(&cols, rows(), "hist x=country"),
        Err("a histogram needs a number column; country is text".into())
    );
}

#[test]
fn more_than_six_series_are_left_out_and_named() {
    let names: Vec<String> = (0..9).map(|i| format!("v{i}")).collect();
    let mut cols: Vec<(&str, &str)> = vec![("day", "TEXT")];
    cols.extend(names.iter().map(|n| (n.as_str(), "REAL")));
    let mut row = vec![text("2025-01-01")];
    row.extend((0..9).map(|i| Value::Float(i as f64)));
    let p = plan(&cols, vec![row], "").unwrap();
    assert_eq!(p.y.len(), MAX_SERIES);
    assert_eq!(p.left_out, ["v6", "v7", "v8"]);
}
