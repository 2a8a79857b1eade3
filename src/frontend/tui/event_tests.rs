//! The conversation's events fed to an [`App`] without a terminal: what
//! each pane shows, the tokens, the grid, the status line's facts and the
//! lines printed on leaving; the chart key and the chart event.

use std::path::PathBuf;

use crossterm::event::KeyCode;

use super::app::{Action, Focus, Msg, Phase};
use super::app_tests::{answered_turn, app, events, key, status, typed};
use super::transcript::Entry;
use crate::agent::{AgentError, Event, Mode, Outcome};
use crate::render::Format;
use crate::source::{Column, Value};

#[test]
fn a_turn_streams_into_the_panes() {
    let mut a = app();
    typed(&mut a, "per country?");
    a.update(key(KeyCode::Enter));
    let mut turn = answered_turn();
    let rest = turn.split_off(2);
    events(&mut a, turn);
    assert_eq!(a.turn.unwrap().phase, Phase::Answering);
    assert_eq!(
        a.transcript.entries()[1],
        Entry::Answer("Counting:\n```sql\nSELECT country, ".into())
    );
    events(&mut a, rest);
    assert_eq!(
        a.transcript.entries(),
        [
            Entry::Question("per country?".into()),
            Entry::Answer(
                "Counting:\n```sql\nSELECT country, count(*) AS n FROM customers GROUP BY 1\n```"
                    .into()
            ),
            Entry::Result("3 rows in 4 ms".into()),
        ],
        "streamed code is not repeated"
    );
    assert_eq!(a.grid.held(), 3);
    assert_eq!(a.grid.first_row().unwrap().to_string(), "DE|2");
    assert_eq!(a.tokens, 840);
    assert_eq!(
        a.log.texts(),
        [
            "→ asking openai test-model",
            "← model: 800 in, 40 out tokens · 0 ms",
            "▶ SELECT country, count(*) AS n FROM customers GROUP BY 1",
            "✓ 3 rows in 4 ms",
        ]
    );
    assert!(!a.busy());
}

#[test]
fn tool_call_answers_show_their_code_and_failures_show_in_both_panes() {
    let mut a = app();
    typed(&mut a, "q");
    a.update(key(KeyCode::Enter));
    events(
        &mut a,
        vec![
            Event::ThinkingStarted,
            Event::Proposed {
                mode: Mode::Sql,
                code: "SELECT nope".into(),
            },
            Event::QueryStarted {
                sql: "SELECT nope".into(),
            },
            Event::Retrying {
                why: "no such column: nope".into(),
                attempt: 1,
            },
            Event::ToolCall {
                name: "aiq.query".into(),
                arguments: "SELECT 1".into(),
            },
            Event::ToolResult {
                name: "aiq.query".into(),
                result: "1 row\nmore".into(),
            },
            Event::Output("printed by a program\n".into()),
            Event::TurnFinished(Outcome::Failed(AgentError::QueryFailed(
                "query failed: no such column: nope".into(),
            ))),
        ],
    );
    assert_eq!(
        a.transcript.entries()[1..],
        [
            Entry::Code(Mode::Sql, "SELECT nope".into()),
            Entry::Fix("no such column: nope (try 1)".into()),
            Entry::Lookup("aiq.query SELECT 1".into()),
            Entry::Output("printed by a program\n".into()),
            Entry::Error("query failed: no such column: nope".into()),
        ]
    );
    let log = a.log.texts();
    assert!(
        log.contains(&"↻ retry 1: no such column: nope".to_string()),
        "{log:?}"
    );
    assert!(log.contains(&"→ aiq.query SELECT 1".to_string()), "{log:?}");
    assert!(log.contains(&"← aiq.query: 1 row …".to_string()), "{log:?}");
    assert_eq!(log.last().unwrap(), "✗ query failed: no such column: nope");
    assert!(
        a.grid.footer(5, 80).contains("failed after 0 rows"),
        "{}",
        a.grid.footer(5, 80)
    );
}

#[test]
fn status_changes_and_the_session_lines_of_leaving() {
    let mut a = app();
    typed(&mut a, "/format csv");
    a.update(key(KeyCode::Enter));
    let mut s = status();
    s.format = Format::Csv;
    s.source = "other.db".into();
    events(
        &mut a,
        vec![
            Event::StatusChanged(s.clone()),
            Event::SessionSaved(PathBuf::from("/tmp/during.json")),
            Event::TurnFinished(Outcome::Done),
        ],
    );
    assert_eq!(a.status, s);
    assert_eq!(
        a.farewell(),
        (vec![], None),
        "a save inside a turn is not the leaving one"
    );
    events(
        &mut a,
        vec![
            Event::Warning("disk full".into()),
            Event::SessionSaved(PathBuf::from("/tmp/s.json")),
        ],
    );
    assert_eq!(
        a.farewell(),
        (
            vec!["disk full".to_string()],
            Some(PathBuf::from("/tmp/s.json"))
        )
    );
    a.update(Msg::WorkerGone);
    assert!(a.quitting());
}

#[test]
fn the_format_shows_the_finished_result_as_text() {
    let mut a = app();
    events(&mut a, answered_turn());
    let mut s = status();
    s.format = Format::Csv;
    events(&mut a, vec![Event::StatusChanged(s)]);
    assert_eq!(a.grid.held(), 4, "header and three CSV lines");
}

#[test]
fn a_result_cut_short_after_counting_says_there_are_more() {
    let mut a = app();
    let mut turn = answered_turn();
    for e in turn.iter_mut() {
        if let Event::QueryFinished { rows, more, .. } = e {
            (*rows, *more) = (12_345, true);
        }
    }
    events(&mut a, turn);
    assert!(
        a.transcript
            .entries()
            .contains(&Entry::Result("12,345+ rows in 4 ms".into())),
        "{:?}",
        a.transcript.entries()
    );
    assert_eq!(
        a.grid.footer(4, 78),
        " showing first 3 of 12,345+ rows · 4 ms · rows 1–3 · cols 1–2 of 2 "
    );
}

/// The chart `/chart` (or `c`) sends for the rows of [`answered_turn`].
pub fn answered_chart() -> Event {
    let columns = [Column::new("country", "TEXT"), Column::new("n", "INTEGER")];
    let mut rec =
        crate::chart::Recording::new(&columns, Some("how many customers per country?".into()));
    for (c, n) in [(Some("DE"), 2), (None, 1), (Some("US"), 3)] {
        rec.push(&[
            c.map_or(Value::Null, |c| Value::Text(c.into())),
            Value::Int(n),
        ]);
    }
    let chart = crate::chart::build(&rec, &crate::chart::ChartSpec::default()).unwrap();
    Event::Chart(Box::new(chart))
}

#[test]
fn c_on_the_result_pane_asks_for_the_chart_then_switches_chart_and_table() {
    let mut a = app();
    a.update(key(KeyCode::Tab));
    a.update(key(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Result);
    // Nothing to chart yet.
    assert!(a.update(key(KeyCode::Char('c'))).is_empty());
    assert_eq!(
        a.hint.as_ref().unwrap().0,
        "no result to chart yet: ask a question or run /sql first"
    );
    events(&mut a, answered_turn());
    let actions = a.update(key(KeyCode::Char('c')));
    assert!(matches!(actions[..], [Action::Chart]), "{actions:?}");
    assert_eq!(a.hint.as_ref().unwrap().0, "drawing the chart…");
    events(&mut a, vec![answered_chart()]);
    assert!(a.chart.shown().is_some());
    assert!(a.hint.is_none());
    // c switches back to the table and to the chart again, without asking.
    assert!(a.update(key(KeyCode::Char('c'))).is_empty());
    assert!(a.chart.shown().is_none());
    assert!(a.update(key(KeyCode::Char('c'))).is_empty());
    assert!(a.chart.shown().is_some());
    // A new statement: its result has no chart yet.
    events(
        &mut a,
        vec![Event::QueryStarted {
            sql: "SELECT 2".into(),
        }],
    );
    assert!(a.chart.shown().is_none() && !a.chart.has_chart());
}

#[test]
fn c_elsewhere_types_and_a_running_turn_is_not_charted() {
    let mut a = app();
    typed(&mut a, "c");
    assert_eq!(a.input.lines().join(""), "c");
    a.update(key(KeyCode::Enter));
    assert!(a.busy());
    a.focus = Focus::Result;
    assert!(a.update(key(KeyCode::Char('c'))).is_empty());
    assert_eq!(
        a.hint.as_ref().unwrap().0,
        "a turn is running: chart its result when it is done"
    );
    // `/chart` typed: its chart shows in the pane when it comes.
    events(&mut a, answered_turn());
    events(&mut a, vec![answered_chart()]);
    assert!(a.chart.shown().is_some());
}
