//! The conversation's events fed to an [`App`] without a terminal: what
//! each pane shows, the tokens, the grid, the status line's facts and the
//! lines printed on leaving.

use std::path::PathBuf;

use crossterm::event::KeyCode;

use super::app::{Msg, Phase};
use super::app_tests::{answered_turn, app, events, key, status, typed};
use super::transcript::Entry;
use crate::agent::{AgentError, Event, Mode, Outcome};
use crate::render::Format;

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
