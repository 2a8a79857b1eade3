//! Screens as ratatui's `TestBackend` draws them, kept as insta snapshots
//! (`src/frontend/tui/snapshots/`), each at 80×24 and 120×40: the empty
//! start, an answer streaming in, a wide result scrolled right, an error,
//! the `/clear` question, a chart in the result pane and the key help.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, Msg};
use super::app_tests::{answered_turn, app_at, events, key, typed};
use super::event_tests::answered_chart;
use super::view::view;
use crate::agent::{AgentError, ConfirmKind, Confirmation, Event, Outcome};
use crate::llm::Usage;
use crate::source::RowBatch;
use crate::source::{Column, Value};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// Builds a screen with `setup` at each size and checks it against its snapshot.
fn check(name: &str, setup: impl Fn(&mut App, Instant)) {
    for (w, h) in SIZES {
        let t0 = Instant::now();
        let mut app = app_at(t0, (w, h));
        setup(&mut app, t0);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| view(&app, f)).unwrap();
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
    }
}

fn ask(app: &mut App, question: &str) {
    typed(app, question);
    app.update(key(KeyCode::Enter));
}

#[test]
fn empty_start() {
    check("empty_start", |_, _| {});
}

#[test]
fn streamed_answer_half_way() {
    check("streamed_answer_half_way", |app, t0| {
        ask(app, "how many customers per country, biggest first?");
        events(
            app,
            vec![
                Event::ThinkingStarted,
                Event::TextDelta("Counting customers per country, largest first:\n```sql\nSELECT country, count(*) AS customers\nFROM customers\nGROUP BY cou".into()),
            ],
        );
        app.update(Msg::Tick(t0 + Duration::from_millis(2300)));
    });
}

#[test]
fn wide_result_scrolled_right() {
    check("wide_result_scrolled_right", |app, t0| {
        ask(app, "all orders with their customer");
        let names = [
            "id",
            "customer_id",
            "ordered_at",
            "status",
            "total",
            "customer",
            "email",
            "country",
            "city",
            "vip",
        ];
        let rows = (1..=40)
            .map(|i| {
                vec![
                    Value::Int(i),
                    Value::Int(600 - i),
                    Value::Text(format!("2025-01-{:02} 10:{:02}:00", i % 28 + 1, i)),
                    Value::Text(if i % 3 == 0 { "shipped" } else { "delivered" }.into()),
                    Value::Decimal(format!("{}.{:02}", i * 37, i % 100)),
                    Value::Text(format!("Customer {i}")),
                    Value::Text(format!("customer{i}@example.com")),
                    Value::Text(["DE", "US", "FR"][i as usize % 3].into()),
                    if i % 4 == 0 {
                        Value::Null
                    } else {
                        Value::Text("Berlin".into())
                    },
                    Value::Bool(i % 5 == 0),
                ]
            })
            .collect();
        let mut turn = answered_turn();
        turn.truncate(5);
        turn.extend([
            Event::QueryStarted {
                sql: "SELECT o.*, c.name AS customer, c.email, c.country, c.city, c.is_vip AS vip FROM orders o JOIN customers c ON c.id = o.customer_id".into(),
            },
            Event::Columns(names.iter().map(|n| Column::new(*n, "TEXT")).collect()),
            Event::Rows(RowBatch::Values(rows)),
            Event::QueryFinished {
                rows: 40,
                elapsed: Duration::from_millis(12),
                changed: false,
                more: false,
            },
            Event::TurnFinished(Outcome::Done),
        ]);
        events(app, turn);
        app.update(key(KeyCode::Tab));
        app.update(key(KeyCode::Tab));
        for _ in 0..3 {
            app.update(key(KeyCode::Right));
        }
        app.update(key(KeyCode::Down));
        app.update(Msg::Tick(t0 + Duration::from_secs(3)));
    });
}

#[test]
fn an_error() {
    check("an_error", |app, t0| {
        ask(app, "revenue per month");
        events(
            app,
            vec![
                Event::ThinkingStarted,
                Event::TextDelta(
                    "```sql\nSELECT month, sum(total) FROM orders GROUP BY 1\n```".into(),
                ),
                Event::Usage(Usage {
                    input_tokens: 812,
                    output_tokens: 41,
                    ..Usage::default()
                }),
                Event::QueryStarted {
                    sql: "SELECT month, sum(total) FROM orders GROUP BY 1".into(),
                },
                Event::Retrying {
                    why: "no such column: month".into(),
                    attempt: 1,
                },
                Event::ThinkingStarted,
                Event::Warning("the model's connection closed before its answer ended".into()),
                Event::TurnFinished(Outcome::Failed(AgentError::QueryFailed(
                    "the model's answer ended early: connection closed (try again)".into(),
                ))),
            ],
        );
        app.update(Msg::Tick(t0 + Duration::from_secs(5)));
    });
}

#[test]
fn clear_dialog() {
    check("clear_dialog", |app, t0| {
        events(app, answered_turn());
        ask(app, "/clear");
        let (c, _pending) = Confirmation::new(
            ConfirmKind::ClearHistory,
            "Clear conversation history?",
            None,
        );
        events(app, vec![Event::Confirm(c)]);
        app.update(Msg::Tick(t0 + Duration::from_millis(400)));
    });
}

/// `/source` on a server that wants a password: the dialog shows the
/// prompt and a dot per character typed, never the characters.
#[test]
fn password_dialog() {
    check("password_dialog", |app, t0| {
        ask(app, "/source pg");
        let (s, _answer) = crate::agent::Secret::new("Password for ana@db.example.com:5432: ");
        events(app, vec![Event::Secret(s)]);
        for c in "hunter2".chars() {
            app.update(key(KeyCode::Char(c)));
        }
        app.update(Msg::Tick(t0 + Duration::from_millis(400)));
    });
}

#[test]
fn chart_in_the_result_pane() {
    check("chart_in_the_result_pane", |app, _| {
        ask(app, "how many customers per country?");
        events(app, answered_turn());
        events(app, vec![answered_chart()]);
    });
}

#[test]
fn help_overlay() {
    check("help_overlay", |app, _| {
        events(app, answered_turn());
        app.update(key(KeyCode::F(1)));
    });
}

#[test]
fn resizing_leaves_nothing_behind() {
    let t0 = Instant::now();
    let mut app = app_at(t0, (120, 40));
    events(&mut app, answered_turn());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| view(&app, f)).unwrap();
    for (w, h) in [(80, 24), (100, 30), (60, 15)] {
        terminal.backend_mut().resize(w, h);
        app.update(Msg::Resize(w, h));
        terminal.draw(|f| view(&app, f)).unwrap();
        let mut fresh = Terminal::new(TestBackend::new(w, h)).unwrap();
        fresh.draw(|f| view(&app, f)).unwrap();
        assert_eq!(
            terminal.backend().buffer(),
            fresh.backend().buffer(),
            "{w}x{h}"
        );
    }
}

#[test]
fn tiny_screens_do_not_panic() {
    let t0 = Instant::now();
    for (w, h) in [(1, 1), (10, 4), (20, 8), (40, 10)] {
        let mut app = app_at(t0, (w, h));
        events(&mut app, answered_turn());
        app.update(key(KeyCode::F(1)));
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| view(&app, f)).unwrap();
        app.update(key(KeyCode::Esc));
        events(&mut app, vec![answered_chart()]);
        terminal.draw(|f| view(&app, f)).unwrap();
        let (c, _p) = Confirmation::new(
            ConfirmKind::Write,
            "Run this statement?",
            Some("DELETE FROM t".into()),
        );
        events(&mut app, vec![Event::Confirm(c)]);
        terminal.draw(|f| view(&app, f)).unwrap();
    }
}
