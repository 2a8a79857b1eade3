//! The view's keys fed to an [`App`] without a terminal: what the state
//! becomes and which actions come out; the helpers the other view tests
//! share.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::app::{Action, App, Focus, Msg, Overlay, Phase};
use super::transcript::Entry;
use crate::agent::{AgentError, Answer, ConfirmKind, Confirmation, Event, Mode, Outcome, Status};
use crate::cancel::CancelToken;
use crate::llm::Usage;
use crate::render::Format;
use crate::source::{Column, Value};

/// The facts a test view starts with.
pub fn status() -> Status {
    Status {
        source: "shop.db".into(),
        engine: "sqlite",
        tables: 4,
        provider: "openai".into(),
        model: "test-model".into(),
        mode: Mode::Sql,
        format: Format::Table,
        session: Some(PathBuf::from(
            "/home/me/.aiqconfig/session_20260126100000.json",
        )),
    }
}

/// A fresh view at `t0`, `size` cells.
pub fn app_at(t0: Instant, size: (u16, u16)) -> App {
    App::new(
        status(),
        vec!["first question".into(), "/sql SELECT 1".into()],
        &[],
        t0,
        size,
    )
}

pub fn app() -> App {
    app_at(Instant::now(), (80, 24))
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn with(code: KeyCode, mods: KeyModifiers) -> Msg {
    Msg::Key(KeyEvent::new(code, mods))
}

pub fn ctrl(c: char) -> Msg {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert!(app.update(key(KeyCode::Char(c))).is_empty());
    }
}

fn input(app: &App) -> String {
    app.input.lines().join("\n")
}

fn submitted(actions: &[Action]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Submit(l) => Some(l.as_str()),
            _ => None,
        })
        .collect()
}

fn is_quit(actions: &[Action]) -> bool {
    actions.iter().any(|a| matches!(a, Action::Quit))
}

fn is_cancel(actions: &[Action]) -> bool {
    actions.iter().any(|a| matches!(a, Action::Cancel))
}

/// Feeds events from the conversation.
pub fn events(app: &mut App, events: Vec<Event>) {
    for e in events {
        assert!(app.update(Msg::Core(e)).is_empty());
    }
}

/// The events of a question answered with one statement and three rows.
pub fn answered_turn() -> Vec<Event> {
    vec![
        Event::ThinkingStarted,
        Event::TextDelta("Counting:\n```sql\nSELECT country, ".into()),
        Event::TextDelta("count(*) AS n FROM customers GROUP BY 1\n```".into()),
        Event::Usage(Usage {
            input_tokens: 800,
            output_tokens: 40,
            ..Usage::default()
        }),
        Event::Proposed {
            mode: Mode::Sql,
            code: "SELECT country, count(*) AS n FROM customers GROUP BY 1".into(),
        },
        Event::QueryStarted {
            sql: "SELECT country, count(*) AS n FROM customers GROUP BY 1".into(),
        },
        Event::Columns(vec![
            Column::new("country", "TEXT"),
            Column::new("n", "INTEGER"),
        ]),
        Event::Rows(
            vec![
                vec![Value::Text("DE".into()), Value::Int(2)],
                vec![Value::Null, Value::Int(1)],
                vec![Value::Text("US".into()), Value::Int(3)],
            ]
            .into(),
        ),
        Event::QueryFinished {
            rows: 3,
            elapsed: Duration::from_millis(4),
            changed: false,
            more: false,
        },
        Event::TurnFinished(Outcome::Answered(Answer {
            text: String::new(),
            code: Some("SELECT 1".into()),
            rows: Some(3),
        })),
    ]
}

#[test]
fn enter_sends_the_line_once_and_waits_for_the_turn() {
    let mut a = app();
    typed(&mut a, "how many?");
    let actions = a.update(key(KeyCode::Enter));
    assert_eq!(submitted(&actions), ["how many?"]);
    assert_eq!(input(&a), "");
    assert!(a.busy());
    assert_eq!(
        a.transcript.entries(),
        [Entry::Question("how many?".into())]
    );
    // While the turn runs, Enter keeps the line and says why.
    typed(&mut a, "next");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert_eq!(input(&a), "next");
    assert!(a.hint.as_ref().unwrap().0.contains("Ctrl-C to cancel"));
    events(&mut a, answered_turn());
    assert!(!a.busy());
    assert_eq!(submitted(&a.update(key(KeyCode::Enter))), ["next"]);
    // An empty line sends nothing.
    let mut b = app();
    typed(&mut b, "   ");
    assert!(b.update(key(KeyCode::Enter)).is_empty());
}

#[test]
fn alt_enter_shift_enter_and_ctrl_j_break_the_line() {
    let mut a = app();
    typed(&mut a, "SELECT 1");
    a.update(with(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut a, "FROM t");
    a.update(with(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut a, "WHERE x");
    a.update(ctrl('j'));
    typed(&mut a, "LIMIT 1");
    assert_eq!(input(&a), "SELECT 1\nFROM t\nWHERE x\nLIMIT 1");
    assert_eq!(a.input_rows(), 4);
    assert_eq!(
        submitted(&a.update(key(KeyCode::Enter))),
        ["SELECT 1\nFROM t\nWHERE x\nLIMIT 1"]
    );
    assert_eq!(
        a.transcript.entries(),
        [Entry::Question("SELECT 1\nFROM t\nWHERE x\nLIMIT 1".into())]
    );
}

#[test]
fn up_and_down_walk_the_input_history_and_keep_the_draft() {
    let mut a = app();
    typed(&mut a, "draft");
    a.update(key(KeyCode::Up));
    assert_eq!(input(&a), "/sql SELECT 1");
    a.update(key(KeyCode::Up));
    assert_eq!(input(&a), "first question");
    a.update(key(KeyCode::Up));
    assert_eq!(input(&a), "first question", "stops at the oldest");
    a.update(key(KeyCode::Down));
    assert_eq!(input(&a), "/sql SELECT 1");
    a.update(key(KeyCode::Down));
    assert_eq!(input(&a), "draft");
    // A sent line joins the history.
    a.update(key(KeyCode::Enter));
    events(&mut a, vec![Event::TurnFinished(Outcome::Done)]);
    a.update(key(KeyCode::Up));
    assert_eq!(input(&a), "draft");
    // Inside a multi-line input, Up moves the cursor instead.
    let mut b = app();
    typed(&mut b, "a");
    b.update(with(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut b, "b");
    b.update(key(KeyCode::Up));
    assert_eq!(input(&b), "a\nb");
}

#[test]
fn ctrl_c_cancels_a_turn_and_quits_only_twice_when_idle() {
    let t0 = Instant::now();
    let mut a = app_at(t0, (80, 24));
    typed(&mut a, "slow one");
    a.update(key(KeyCode::Enter));
    let actions = a.update(ctrl('c'));
    assert!(is_cancel(&actions) && !is_quit(&actions));
    assert!(a.turn.unwrap().cancelling);
    events(
        &mut a,
        vec![Event::TurnFinished(Outcome::Failed(AgentError::Cancelled))],
    );
    assert!(!a.busy());
    assert_eq!(
        a.transcript.entries().last(),
        Some(&Entry::Notice(
            "Cancelled; the conversation is kept.".into()
        ))
    );
    // Idle: the first press clears the line and arms, the second quits.
    typed(&mut a, "half typed");
    assert!(a.update(ctrl('c')).is_empty());
    assert_eq!(input(&a), "");
    assert!(is_quit(&a.update(ctrl('c'))));
    assert!(a.quitting());
    // More than two seconds apart: no quit.
    let mut b = app_at(t0, (80, 24));
    assert!(b.update(ctrl('c')).is_empty());
    b.update(Msg::Tick(t0 + Duration::from_secs(3)));
    assert!(b.update(ctrl('c')).is_empty());
    assert!(!b.quitting());
}

#[test]
fn ctrl_d_and_esc_save_and_quit_and_a_running_turn_is_cancelled_first() {
    let mut a = app();
    assert!(is_quit(&a.update(ctrl('d'))));
    let mut b = app();
    typed(&mut b, "q");
    b.update(key(KeyCode::Enter));
    let actions = b.update(key(KeyCode::Esc));
    assert!(
        matches!(actions.as_slice(), [Action::Cancel, Action::Quit]),
        "{actions:?}"
    );
    // A typed question is not lost to one Esc: the second leaves, as
    // Ctrl-Q does at once.
    let mut d = app();
    typed(&mut d, "half a question");
    assert!(d.update(key(KeyCode::Esc)).is_empty());
    assert!(!d.quitting() && input(&d) == "half a question");
    assert!(is_quit(&d.update(key(KeyCode::Esc))));
    let mut e = app();
    typed(&mut e, "half a question");
    e.update(key(KeyCode::Esc));
    typed(&mut e, "!");
    assert!(
        e.update(key(KeyCode::Esc)).is_empty(),
        "a key between disarms it"
    );
    assert!(is_quit(&e.update(ctrl('q'))));
    // Esc closes the help first.
    let mut c = app();
    c.update(key(KeyCode::F(1)));
    assert!(matches!(c.overlay, Some(Overlay::Help)));
    assert!(c.update(key(KeyCode::Esc)).is_empty());
    assert!(c.overlay.is_none() && !c.quitting());
}

#[test]
fn question_mark_opens_help_only_on_an_empty_line() {
    let mut a = app();
    a.update(key(KeyCode::Char('?')));
    assert!(matches!(a.overlay, Some(Overlay::Help)));
    a.update(key(KeyCode::Char('?')));
    assert!(a.overlay.is_none());
    typed(&mut a, "why");
    a.update(key(KeyCode::Char('?')));
    assert_eq!(input(&a), "why?");
    assert!(a.overlay.is_none());
}

fn confirm(kind: ConfirmKind) -> (Confirmation, crate::agent::PendingAnswer) {
    Confirmation::new(kind, "Clear conversation history?", None)
}

#[test]
fn a_confirmation_is_a_dialog_answered_with_y_or_n() {
    let mut a = app();
    typed(&mut a, "/clear");
    a.update(key(KeyCode::Enter));
    let (c, pending) = confirm(ConfirmKind::ClearHistory);
    events(&mut a, vec![Event::Confirm(c)]);
    assert!(matches!(a.overlay, Some(Overlay::Confirm(_))));
    assert_eq!(a.turn.unwrap().phase, Phase::Waiting);
    // Other keys do nothing while it is open.
    assert!(a.update(key(KeyCode::Char('x'))).is_empty());
    let actions = a.update(key(KeyCode::Char('y')));
    let [Action::Answer(c, true)] = actions.as_slice() else {
        panic!("{actions:?}")
    };
    c.answer(true);
    assert_eq!(pending.wait(&CancelToken::new()), Some(true));
    assert!(a.overlay.is_none());

    // Enter is the default: no.
    let (c, _) = confirm(ConfirmKind::Write);
    events(&mut a, vec![Event::Confirm(c)]);
    assert!(matches!(
        a.update(key(KeyCode::Enter)).as_slice(),
        [Action::Answer(_, false)]
    ));
}

/// A password the conversation asks for (`/source` on a server) is typed
/// into a dialog that shows a dot for each character and never the text;
/// Enter answers with it, Esc declines, and quitting declines.
#[test]
fn a_password_is_typed_unseen_and_answered_with_enter() {
    let mut a = app();
    typed(&mut a, "/source pg");
    a.update(key(KeyCode::Enter));
    let (s, answer) = crate::agent::Secret::new("Password for ana@db:5432: ");
    events(&mut a, vec![Event::Secret(s)]);
    assert!(matches!(a.overlay, Some(Overlay::Secret(..))));
    assert_eq!(a.turn.as_ref().unwrap().phase, Phase::Waiting);
    for c in "s3cr3tx".chars() {
        assert!(a.update(key(KeyCode::Char(c))).is_empty());
    }
    a.update(key(KeyCode::Backspace));
    let shown = format!("{:?}", a.overlay);
    assert!(!shown.contains("s3cr3t"), "{shown}");
    let actions = a.update(key(KeyCode::Enter));
    let [Action::Reveal(s, Some(typed))] = actions.as_slice() else {
        panic!("{actions:?}")
    };
    assert!(!format!("{actions:?}").contains("s3cr3t"));
    s.answer(Some(typed.0.clone()));
    assert_eq!(answer.recv().unwrap().as_deref(), Some("s3cr3t"));
    assert!(a.overlay.is_none());
    assert_eq!(input(&a), "", "nothing typed reached the input line");

    let (s, _) = crate::agent::Secret::new("Password: ");
    events(&mut a, vec![Event::Secret(s)]);
    a.update(key(KeyCode::Char('x')));
    assert!(matches!(
        a.update(key(KeyCode::Esc)).as_slice(),
        [Action::Reveal(_, None)]
    ));
    let (s, _) = crate::agent::Secret::new("Password: ");
    events(&mut a, vec![Event::Secret(s)]);
    let actions = a.update(ctrl('d'));
    assert!(
        matches!(
            actions.as_slice(),
            [Action::Reveal(_, None), .., Action::Quit]
        ),
        "{actions:?}"
    );
}

#[test]
fn quitting_with_a_question_open_answers_it_no() {
    let mut a = app();
    // The stale-session question comes outside any turn.
    let (c, _) = confirm(ConfirmKind::ContinueSession);
    events(&mut a, vec![Event::Confirm(c)]);
    let actions = a.update(ctrl('d'));
    assert!(
        matches!(actions.as_slice(), [Action::Answer(_, false), Action::Quit]),
        "{actions:?}"
    );
}

#[test]
fn tab_moves_the_focus_and_the_focused_pane_scrolls() {
    let mut a = app();
    events(&mut a, answered_turn());
    let rows: Vec<Vec<Value>> = (0..100)
        .map(|i| {
            (0..12)
                .map(|c| Value::Text(format!("value {i}.{c}")))
                .collect()
        })
        .collect();
    let columns = (0..12)
        .map(|c| Column::new(format!("column_{c}"), "TEXT"))
        .collect();
    events(
        &mut a,
        vec![
            Event::QueryStarted {
                sql: "SELECT *".into(),
            },
            Event::Columns(columns),
            Event::Rows(rows.into()),
            Event::QueryFinished {
                rows: 100,
                elapsed: Duration::from_millis(9),
                changed: false,
                more: false,
            },
        ],
    );
    assert_eq!(a.focus, Focus::Input);
    for expected in [Focus::Conversation, Focus::Result, Focus::Log, Focus::Input] {
        a.update(key(KeyCode::Tab));
        assert_eq!(a.focus, expected);
    }
    a.update(with(KeyCode::BackTab, KeyModifiers::SHIFT));
    a.update(with(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(a.focus, Focus::Result);
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::PageDown));
    a.update(key(KeyCode::Right));
    a.update(key(KeyCode::Right));
    // 80×24: the result pane shows four rows under its header.
    assert_eq!(a.grid.position(), (5, 2));
    a.update(key(KeyCode::End));
    assert_eq!(a.grid.position().0, 96);
    a.update(key(KeyCode::Home));
    a.update(key(KeyCode::Left));
    assert_eq!(a.grid.position(), (0, 1));
    // The wheel scrolls the pane under the pointer.
    let wheel = |kind| {
        Msg::Mouse(MouseEvent {
            kind,
            column: 10,
            row: 10,
            modifiers: KeyModifiers::NONE,
        })
    };
    a.update(wheel(MouseEventKind::ScrollDown));
    assert_eq!(a.grid.position().0, 3);
    // Typing in a pane goes to the input box.
    a.update(key(KeyCode::Char('x')));
    assert_eq!((a.focus, input(&a)), (Focus::Input, "x".to_string()));
}

#[test]
fn conversation_scrolls_back_and_ctrl_l_clears_the_log() {
    let mut a = app();
    for i in 0..30 {
        events(&mut a, vec![Event::Notice(format!("notice {i}"))]);
    }
    a.update(key(KeyCode::Tab));
    a.update(key(KeyCode::Up));
    a.update(key(KeyCode::PageUp));
    assert_eq!(a.transcript.scroll.back, 6);
    a.update(key(KeyCode::Home));
    assert_eq!(a.transcript.scroll.back, 30 - 6);
    a.update(key(KeyCode::End));
    assert_eq!(a.transcript.scroll.back, 0);
    // New text below keeps a reader's place.
    a.update(key(KeyCode::PageUp));
    assert_eq!(a.transcript.scroll.back, 5);
    events(&mut a, vec![Event::Notice("one more\ntwo lines".into())]);
    assert_eq!(a.transcript.scroll.back, 7);
    events(&mut a, answered_turn());
    assert!(!a.log.texts().is_empty());
    a.update(ctrl('l'));
    assert!(a.log.texts().is_empty());
}

#[test]
fn a_paste_lands_in_the_input_with_its_lines() {
    let mut a = app();
    a.update(key(KeyCode::Tab));
    a.update(Msg::Paste("SELECT 1\r\nFROM t".into()));
    assert_eq!(
        (a.focus, input(&a)),
        (Focus::Input, "SELECT 1\nFROM t".to_string())
    );
}

/// F2 sends `/edit` and F3 `/good` without touching what is typed; the
/// conversation's answer to `/edit` puts the SQL in the input as `/sql`.
#[test]
fn f2_edits_the_last_sql_and_f3_keeps_the_answer() {
    let mut a = app();
    events(&mut a, answered_turn());
    typed(&mut a, "half a question");
    assert_eq!(submitted(&a.update(key(KeyCode::F(3)))), ["/good"]);
    assert_eq!(input(&a), "half a question");
    events(&mut a, vec![Event::TurnFinished(Outcome::Done)]);
    assert_eq!(submitted(&a.update(key(KeyCode::F(2)))), ["/edit"]);
    events(
        &mut a,
        vec![
            Event::Edit("SELECT country, count(*) AS n\nFROM customers GROUP BY 1".into()),
            Event::TurnFinished(Outcome::Done),
        ],
    );
    assert_eq!(
        input(&a),
        "/sql SELECT country, count(*) AS n\nFROM customers GROUP BY 1"
    );
    // The cursor at the start: a long statement shows its beginning.
    assert_eq!(a.input.cursor(), (0, 0));
    assert_eq!(
        submitted(&a.update(key(KeyCode::Enter))),
        ["/sql SELECT country, count(*) AS n\nFROM customers GROUP BY 1"]
    );
}
