//! Tests of the MCP result sink: caps, cut values, fixes, consent, typed values.

use super::*;
use crate::agent::Confirmation;

fn cols() -> Vec<Column> {
    vec![Column::new("name", "TEXT"), Column::new("n", "INTEGER")]
}

fn rows(n: usize) -> Vec<Vec<Value>> {
    (0..n)
        .map(|i| vec![Value::Text(format!("r{i}")), Value::Int(i as i64)])
        .collect()
}

fn finished(sink: &mut ResultSink<'_>, rows: u64) {
    sink.event(Event::QueryFinished {
        rows,
        elapsed: Duration::from_millis(7),
        changed: false,
        more: false,
    })
    .unwrap();
}

#[test]
fn rows_beyond_the_row_cap_stop_the_statement() {
    let mut consent = Fixed(Decision::Yes);
    let mut sink = ResultSink::new(
        Caps {
            rows: 3,
            bytes: 1 << 20,
        },
        &mut consent,
    );
    sink.event(Event::Columns(cols())).unwrap();
    let e = sink.event(Event::Rows(rows(5).into())).unwrap_err();
    assert!(EnoughRows::is(&e));
    finished(&mut sink, 5);
    assert_eq!(sink.rows.len(), 3);
    let s = serde_json::to_value(sink.structured()).unwrap();
    assert_eq!(s["row_count"], 3);
    assert_eq!(s["truncated"], true);
    assert_eq!(s["rows"][2], json!(["r2", 2]));
    assert_eq!(s["columns"][1], json!({"name": "n", "type": "INTEGER"}));
    let text = sink.table_text();
    assert!(
        text.starts_with("| name | n |\n| --- | ---: |\n| r0 | 0 |\n"),
        "{text}"
    );
    assert!(
        text.contains("(3 rows shown; the result has more"),
        "{text}"
    );
}

#[test]
fn exactly_the_cap_is_not_truncated_and_bytes_cap_too() {
    let mut consent = Fixed(Decision::Yes);
    let mut sink = ResultSink::new(
        Caps {
            rows: 3,
            bytes: 1 << 20,
        },
        &mut consent,
    );
    sink.event(Event::Columns(cols())).unwrap();
    sink.event(Event::Rows(rows(3).into())).unwrap();
    finished(&mut sink, 3);
    assert!(!sink.truncated);
    assert!(sink.table_text().ends_with("(3 rows)\n"));

    let mut consent = Fixed(Decision::Yes);
    // Each row is `["rN",N]` plus a separator: 10 bytes.
    let mut sink = ResultSink::new(
        Caps {
            rows: 100,
            bytes: 25,
        },
        &mut consent,
    );
    sink.event(Event::Columns(cols())).unwrap();
    assert!(sink.event(Event::Rows(rows(5).into())).is_err());
    assert_eq!(sink.rows.len(), 2);
    assert!(sink.truncated);
}

#[test]
fn a_value_too_big_is_cut_and_its_row_stays() {
    let mut consent = Fixed(Decision::Yes);
    let caps = Caps {
        rows: 500,
        bytes: 256 * 1024,
    };
    let mut sink = ResultSink::new(caps, &mut consent);
    sink.event(Event::Columns(vec![
        Column::new("big", "VARCHAR"),
        Column::new("id", "INTEGER"),
    ]))
    .unwrap();
    let big = |id| vec![Value::Text("x".repeat(1_000_000)), Value::Int(id)];
    sink.event(Event::Rows(vec![big(1), big(2)].into()))
        .unwrap();
    finished(&mut sink, 2);
    assert!(!sink.truncated);
    let s = sink.structured();
    assert_eq!(s.row_count, 2);
    assert_eq!(s.rows[1][1], json!(2));
    let cell = s.rows[0][0].as_str().unwrap();
    assert!(
        cell.starts_with("xxxx") && cell.ends_with("…(1.0 MB)"),
        "{}",
        &cell[cell.len() - 20..]
    );
    assert_eq!(cell.len(), 256 * 1024 / VALUE_SHARE);
    let text = sink.table_text();
    assert!(
        text.contains("…(1.0 MB) | 2 |\n"),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(
        text.contains("(2 rows)\n(2 values were too long for the size limit and cut"),
        "{}",
        &text[text.len() - 300..]
    );

    // A row of many long values: its values share the cap, and it stays.
    let mut consent = Fixed(Decision::Yes);
    let caps = Caps {
        rows: 10,
        bytes: 1000,
    };
    let mut sink = ResultSink::new(caps, &mut consent);
    let wide: Vec<Value> = (0..20).map(|_| Value::Text("y".repeat(500))).collect();
    assert!(sink
        .event(Event::Rows(vec![wide.clone(), wide].into()))
        .is_err());
    assert_eq!(sink.rows.len(), 1);
    assert!(sink.truncated);
    assert_eq!(sink.values_cut, 20);
}

#[test]
fn a_fix_starts_the_result_over() {
    let mut consent = Fixed(Decision::Yes);
    let caps = Caps {
        rows: 10,
        bytes: 1 << 20,
    };
    let mut sink = ResultSink::new(caps, &mut consent);
    sink.event(Event::QueryStarted { sql: "bad".into() })
        .unwrap();
    sink.event(Event::Columns(cols())).unwrap();
    sink.event(Event::Rows(rows(2).into())).unwrap();
    sink.event(Event::QueryStarted { sql: "good".into() })
        .unwrap();
    sink.event(Event::Columns(vec![Column::new("x", "")]))
        .unwrap();
    sink.event(Event::Rows(vec![vec![Value::Int(1)]].into()))
        .unwrap();
    finished(&mut sink, 1);
    assert_eq!(sink.sql.as_deref(), Some("good"));
    assert_eq!(sink.structured().rows, [[json!(1)]]);
}

#[test]
fn confirmations_go_to_the_consent() {
    for (decision, yes) in [
        (Decision::Yes, true),
        (Decision::No("the client declined".into()), false),
        (Decision::AskNextRound, false),
    ] {
        let mut consent = Fixed(decision.clone());
        let caps = Caps { rows: 1, bytes: 1 };
        let mut sink = ResultSink::new(caps, &mut consent);
        let (c, pending) = Confirmation::new(
            ConfirmKind::Write,
            "Run this statement?",
            Some("DELETE FROM t".into()),
        );
        sink.event(Event::Confirm(c)).unwrap();
        assert_eq!(pending.wait(&crate::cancel::CancelToken::new()), Some(yes));
        match decision {
            Decision::No(why) => assert_eq!(sink.declined, Some(why)),
            Decision::AskNextRound => {
                assert_eq!(sink.ask_next_round.as_deref(), Some("DELETE FROM t"))
            }
            Decision::Yes => assert!(sink.declined.is_none()),
        }
    }
}

#[test]
fn values_keep_their_types() {
    assert_eq!(value_json(&Value::Int(-3)), json!(-3));
    assert_eq!(value_json(&Value::Float(0.5)), json!(0.5));
    assert_eq!(value_json(&Value::Float(f64::NAN)), Json::Null);
    assert_eq!(value_json(&Value::Decimal("12.50".into())), json!(12.5));
    assert_eq!(
        value_json(&Value::Decimal("12345678901234567890.0123456789".into())),
        json!("12345678901234567890.0123456789")
    );
    assert_eq!(
        value_json(&Value::BigInt(170141183460469231731687303715884105727)),
        json!("170141183460469231731687303715884105727")
    );
    assert_eq!(
        value_json(&Value::BigInt(u64::MAX as i128)),
        json!(u64::MAX)
    );
    assert_eq!(
        value_json(&Value::Json("{\"a\":[1]}".into())),
        json!({"a": [1]})
    );
    assert_eq!(value_json(&Value::Null), Json::Null);
    assert_eq!(value_json(&Value::Bool(true)), json!(true));
    let d = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
    assert_eq!(value_json(&Value::Date(d)), json!("2024-02-29"));
}

#[test]
fn the_markdown_text_cuts_long_values_and_the_structured_rows_keep_them() {
    let mut consent = Fixed(Decision::Yes);
    let caps = Caps {
        rows: 10,
        bytes: 1 << 20,
    };
    let mut sink = ResultSink::new(caps, &mut consent);
    let long = "x".repeat(150);
    sink.event(Event::Columns(cols())).unwrap();
    sink.event(Event::Rows(
        vec![vec![Value::Text(long.clone()), Value::Int(1)]].into(),
    ))
    .unwrap();
    finished(&mut sink, 1);
    let cut = format!("| {}… | 1 |", "x".repeat(99));
    assert!(sink.table_text().contains(&cut), "{}", sink.table_text());
    assert_eq!(sink.structured().rows[0][0], json!(long));
}
