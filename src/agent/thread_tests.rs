//! Unit tests of [`super::Thread`]: history and trimming, the context-length
//! fallback, per-turn cancellation (while thinking, while streaming, while a
//! statement runs, across `/source`), the turn lifecycle (one final event),
//! confirmation as an event, and a second answer kind plugged in.

use std::io;
use std::time::Duration;

use super::kind::{AnswerKind, Mode, RunContext, RunFailure};
use super::outcome::AgentError;
use super::prompt::PromptFacts;
use super::runner::Ran;
use super::testkit::{source_in, sql, thread_with, Recorder, Scripted, SLOW_SQL};
use super::{Event, EventSink, HistoryMessage, Outcome, ThreadOptions};
use crate::cancel::CancelHandle;
use crate::llm::{LlmError, LlmErrorKind, Role, ToolCall, ToolDef};
use crate::source::{QueryStats, Value};

fn options(limit: usize) -> ThreadOptions {
    ThreadOptions {
        history_limit: limit,
        ..ThreadOptions::default()
    }
}

/// Cancels through `handle` after `ms` milliseconds, from another thread.
fn cancel_after(handle: CancelHandle, ms: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        handle.cancel();
    })
}

#[test]
fn follow_ups_carry_the_previous_pair_with_real_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, seen) = thread_with(
        dir.path(),
        vec![
            sql("SELECT month, n FROM t ORDER BY month"),
            Scripted::Text("February is low: 1.".into()),
        ],
        options(20),
    );
    let mut sink = Recorder::default();
    t.ask("orders per month?", &mut sink).unwrap();
    let answer = t.ask("why is February so low?", &mut sink).unwrap();
    assert_eq!(answer.text, "February is low: 1.");
    assert!(answer.is_prose());
    let seen = seen.lock().unwrap();
    let roles: Vec<Role> = seen[1].iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(seen[1][1].content, "orders per month?");
    assert!(
        seen[1][2].content.contains("Result: 2 rows"),
        "{}",
        seen[1][2].content
    );
    assert!(
        seen[1][2].content.contains("2024-02,1"),
        "{}",
        seen[1][2].content
    );
    assert_eq!(seen[1][3].content, "why is February so low?");
    let h = t.history();
    assert_eq!(h.len(), 4);
    assert_eq!(
        h[1].sql.as_deref(),
        Some("SELECT month, n FROM t ORDER BY month")
    );
    assert_eq!(h[1].row_count, Some(2));
}

#[test]
fn history_is_trimmed_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let replies = (0..4).map(|i| sql(&format!("SELECT {i}"))).collect();
    let (mut t, seen) = thread_with(dir.path(), replies, options(2));
    for i in 0..4 {
        t.ask(&format!("q{i}"), &mut Recorder::default()).unwrap();
    }
    let seen = seen.lock().unwrap();
    // system + 2 kept pairs + the question
    assert_eq!(seen[2].len(), 6);
    assert_eq!(seen[2][1].content, "q0");
    // One pair over the limit: pairs give way in a step, down to half of
    // the limit, so that the next requests keep this one as their prefix.
    let last = &seen[3];
    assert_eq!(last.len(), 4);
    assert_eq!(last[1].content, "q2");
    assert_eq!(last[3].content, "q3");
    assert_eq!(t.history().len(), 8);
}

#[test]
fn a_cancel_while_thinking_leaves_the_next_turn_working() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, _) = thread_with(
        dir.path(),
        vec![
            Scripted::StreamThenHang("```sql\nSELECT".into()),
            sql("SELECT month, n FROM t ORDER BY month"),
        ],
        options(20),
    );
    let canceller = cancel_after(t.canceller(), 100);
    let mut sink = Recorder::default();
    assert_eq!(t.ask("slow", &mut sink).unwrap_err(), AgentError::Cancelled);
    canceller.join().unwrap();
    assert!(t.history().is_empty(), "a cancelled turn leaves no trace");
    let mut sink = Recorder::default();
    let answer = t.ask("orders per month?", &mut sink).unwrap();
    assert_eq!(answer.rows, Some(2));
    assert_eq!(
        sink.rows()[1],
        [Value::Text("2024-02".into()), Value::Int(1)]
    );
}

#[test]
fn a_cancel_while_a_statement_runs_stops_it_and_the_next_turn_works() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, _) = thread_with(
        dir.path(),
        vec![sql(SLOW_SQL), sql("SELECT n FROM t ORDER BY n")],
        options(20),
    );
    let started = std::time::Instant::now();
    let canceller = cancel_after(t.canceller(), 300);
    let mut sink = Recorder::default();
    assert_eq!(t.ask("slow", &mut sink).unwrap_err(), AgentError::Cancelled);
    canceller.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let mut sink = Recorder::default();
    let answer = t.ask("n?", &mut sink).unwrap();
    assert_eq!(answer.rows, Some(2));
}

#[test]
fn the_canceller_survives_a_new_source() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, _) = thread_with(dir.path(), vec![], options(20));
    let handle = t.canceller();
    let other = source_in(dir.path(), "other.db", false);
    let catalog = other.introspect().unwrap();
    t.set_source(other, catalog);
    let canceller = cancel_after(handle, 300);
    let mut sink = Recorder::default();
    assert_eq!(
        t.run_sql(SLOW_SQL, &mut sink).unwrap_err(),
        AgentError::Cancelled
    );
    canceller.join().unwrap();
    let answer = t.run_sql("SELECT count(*) FROM t", &mut sink).unwrap();
    assert_eq!(answer.rows, Some(1));
}

/// Fails every `Columns` event, like a closed pipe.
struct ClosedPipe(Recorder);

impl EventSink for ClosedPipe {
    fn event(&mut self, event: Event) -> io::Result<()> {
        let columns = matches!(event, Event::Columns(_));
        self.0.event(event)?;
        if columns {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        }
        Ok(())
    }
}

#[test]
fn every_turn_ends_with_exactly_one_final_event() {
    let dir = tempfile::tempdir().unwrap();
    let auth = LlmError::new(LlmErrorKind::Auth, "fake: the key was refused");
    let (mut t, _) = thread_with(
        dir.path(),
        vec![
            sql("SELECT 1 AS one"),
            Scripted::Text("Two tables.".into()),
            Scripted::Text(String::new()),
            Scripted::Fail(auth.clone()),
            sql("DELETE FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT 2 AS two"),
        ],
        options(20),
    );
    let expected: Vec<Result<(), AgentError>> = vec![
        Ok(()),
        Ok(()),
        Err(AgentError::EmptyAnswer),
        Err(AgentError::Llm(auth)),
        Err(AgentError::Refused(String::new())),
        Err(AgentError::QueryFailed(String::new())),
    ];
    for (i, want) in expected.into_iter().enumerate() {
        let mut sink = Recorder::default();
        let got = t.ask(&format!("q{i}"), &mut sink);
        let outcomes = sink.outcomes();
        assert_eq!(outcomes.len(), 1, "turn {i}: {outcomes:?}");
        assert!(
            matches!(sink.events.last(), Some(Event::TurnFinished(_))),
            "turn {i}: the final event comes last"
        );
        match (want, &got) {
            (Ok(()), Ok(a)) => assert_eq!(outcomes[0], &Outcome::Answered(a.clone())),
            (Err(w), Err(e)) => {
                assert_eq!(
                    std::mem::discriminant(&w),
                    std::mem::discriminant(e),
                    "turn {i}: {e:?}"
                );
                assert_eq!(outcomes[0], &Outcome::Failed(e.clone()));
            }
            (w, g) => panic!("turn {i}: wanted {w:?}, got {g:?}"),
        }
    }
    // A sink that fails mid-result (a closed pipe): still one final event.
    let mut sink = ClosedPipe(Recorder::default());
    let e = t.ask("closed", &mut sink).unwrap_err();
    assert!(
        matches!(e, AgentError::Output { closed: true, .. }),
        "{e:?}"
    );
    assert_eq!(sink.0.outcomes().len(), 1);
}

#[test]
fn unparsable_sql_is_refused_after_the_fixes_like_direct_sql() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, seen) = thread_with(
        dir.path(),
        vec![sql("SELEC 1"), sql("SELEC 1"), sql("SELEC 1")],
        options(20),
    );
    let mut sink = Recorder::default();
    let e = t.ask("q", &mut sink).unwrap_err();
    assert!(
        matches!(e, AgentError::Refused(ref m) if m.contains("cannot parse") || m.contains("parse")),
        "{e:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 3, "two fixes were asked for");
    let retries = sink
        .events
        .iter()
        .filter(|e| matches!(e, Event::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
}

#[test]
fn writes_are_confirmed_through_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let write = ThreadOptions {
        allow_write: true,
        ..ThreadOptions::default()
    };
    let (mut t, _) = thread_with(
        dir.path(),
        vec![
            sql("DELETE FROM t WHERE n = 1"),
            sql("DELETE FROM t WHERE n = 1"),
        ],
        write,
    );
    let mut no = Recorder::default();
    let e = t.ask("remove the small month", &mut no).unwrap_err();
    assert!(
        matches!(e, AgentError::Refused(ref m) if m.starts_with("not run: DELETE changes data and was not confirmed")),
        "{e:?}"
    );
    let asked = no.events.iter().find_map(|e| match e {
        Event::Confirm(c) => Some(c.clone()),
        _ => None,
    });
    let asked = asked.expect("a confirmation event");
    assert_eq!(asked.detail.as_deref(), Some("DELETE FROM t WHERE n = 1"));
    assert_eq!(asked.question, "Run this statement?");
    let count = |t: &mut super::Thread| {
        let mut s = Recorder::default();
        t.run_sql("SELECT count(*) FROM t", &mut s).unwrap();
        s.rows()[0][0].clone()
    };
    assert_eq!(count(&mut t), Value::Int(2), "nothing was deleted");
    let mut yes = Recorder {
        answer: true,
        ..Recorder::default()
    };
    let answer = t.ask("remove the small month", &mut yes).unwrap();
    assert_eq!(answer.rows, Some(1));
    assert_eq!(count(&mut t), Value::Int(1));
}

/// A second answer kind: ```echo blocks, "run" by printing them.
struct Echo;

impl AnswerKind for Echo {
    fn mode(&self) -> Mode {
        Mode::Sql
    }
    fn task(&self) -> &'static str {
        "writing echo programs"
    }
    fn rules(&self, _: &PromptFacts<'_>) -> Vec<String> {
        vec!["Answer with an ```echo block.".into()]
    }
    fn tool(&self) -> ToolDef {
        ToolDef {
            name: "run_echo".into(),
            description: "echo".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }
    fn extract(&self, text: &str, _: &[ToolCall]) -> Option<super::extract::Found> {
        super::extract::fenced_blocks(text)
            .into_iter()
            .find(|(lang, _)| lang == "echo")
            .map(|(_, body)| super::extract::Found {
                code: body.trim().to_string(),
                tool_call_id: None,
            })
    }
    fn run(&self, code: &str, ctx: RunContext<'_>) -> Result<Ran, RunFailure> {
        if code == "fail" {
            return Err(RunFailure {
                fixable: Some("echo cannot say fail".into()),
                error: AgentError::QueryFailed("echo failed".into()),
            });
        }
        let _ = ctx.sink.event(Event::ToolCall {
            name: "echo".into(),
            arguments: code.into(),
        });
        let _ = ctx.sink.event(Event::Output(format!("{code}\n")));
        Ok(Ran {
            stats: QueryStats {
                rows: 0,
                elapsed: Duration::ZERO,
                changed: false,
            },
            preview: code.into(),
            output: Some(format!("{code}\n")),
            more: false,
        })
    }
    fn feedback(&self, why: &str) -> String {
        format!("That echo failed: {why}")
    }
    fn record(&self, answer: HistoryMessage, code: &str, _: Result<&Ran, &str>) -> HistoryMessage {
        HistoryMessage {
            content: format!("echo {code}"),
            ..answer
        }
    }
}

#[test]
fn a_second_answer_kind_plugs_into_the_same_loop() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, seen) = thread_with(
        dir.path(),
        vec![
            Scripted::Text("```echo\nfail\n```".into()),
            Scripted::Text("```echo\nhello\n```".into()),
        ],
        options(20),
    );
    t.set_kind(Box::new(Echo));
    let mut sink = Recorder::default();
    let answer = t.ask("say hello", &mut sink).unwrap();
    assert_eq!(answer.code.as_deref(), Some("hello"));
    let seen = seen.lock().unwrap();
    assert!(seen[0][0].content.contains("by writing echo programs"));
    assert!(seen[0][0]
        .content
        .contains("- Answer with an ```echo block."));
    assert_eq!(
        seen[1].last().unwrap().content,
        "That echo failed: echo cannot say fail"
    );
    let shown: Vec<String> = sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Output(o) => Some(o.clone()),
            Event::ToolCall { name, arguments } => Some(format!("{name}({arguments})")),
            _ => None,
        })
        .collect();
    assert_eq!(shown, ["echo(hello)", "hello\n"]);
    assert_eq!(t.history()[1].content, "echo hello");
}

/// The lookups a turn showed, as `name(arguments)`.
fn lookups(sink: &Recorder) -> Vec<String> {
    sink.events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, arguments } => Some(format!("{name}({arguments})")),
            _ => None,
        })
        .collect()
}

#[test]
fn a_model_looks_at_a_table_through_a_tool_and_then_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, seen) = thread_with(
        dir.path(),
        vec![
            Scripted::Call("describe_tables", r#"{"names":["t"]}"#.into()),
            sql("SELECT month FROM t WHERE n = 1"),
        ],
        options(20),
    );
    let mut sink = Recorder::default();
    let answer = t.ask("which month was low?", &mut sink).unwrap();
    assert_eq!(sink.rows(), [[Value::Text("2024-02".into())]]);
    assert_eq!(answer.rows, Some(1));
    assert_eq!(lookups(&sink), [r#"describe_tables({"names":["t"]})"#]);
    // Both tools were offered, and the description went back as the
    // call's result.
    let seen = seen.lock().unwrap();
    let asked = &seen[1];
    let call = &asked[asked.len() - 2];
    assert_eq!(call.tool_calls[0].name, "describe_tables");
    let result = asked.last().unwrap();
    assert_eq!(result.role, Role::Tool);
    assert!(result.content.contains("table t"), "{}", result.content);
    assert!(result.content.contains("month TEXT"), "{}", result.content);
    // The lookup is not history: the next question starts clean.
    assert_eq!(t.history().len(), 2);
}

#[test]
fn a_model_without_tools_asks_with_a_block() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, seen) = thread_with(
        dir.path(),
        vec![
            Scripted::Text("I need to see it first.\n```tables\nt\nnope\n```".into()),
            sql("SELECT count(*) FROM t"),
        ],
        options(20),
    );
    let mut sink = Recorder::default();
    t.ask("how many months?", &mut sink).unwrap();
    assert_eq!(sink.rows(), [[Value::Int(2)]]);
    assert_eq!(
        lookups(&sink),
        [r#"describe_tables({"names":["t","nope"]})"#]
    );
    let seen = seen.lock().unwrap();
    let back = seen[1].last().unwrap();
    assert_eq!(back.role, Role::User);
    assert!(back.content.contains("table t"), "{}", back.content);
    assert!(
        back.content
            .contains("-- no table named nope; did you mean t?"),
        "{}",
        back.content
    );
    assert!(back.content.ends_with("Now answer the question."));
}

#[test]
fn lookups_are_limited_per_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut replies: Vec<Scripted> = (0..super::tools::MAX_CALLS + 1)
        .map(|_| Scripted::Call("list_tables", "{}".into()))
        .collect();
    replies.push(sql("SELECT 1"));
    let (mut t, seen) = thread_with(dir.path(), replies, options(20));
    let mut sink = Recorder::default();
    t.ask("what is there?", &mut sink).unwrap();
    assert_eq!(lookups(&sink).len(), super::tools::MAX_CALLS);
    let seen = seen.lock().unwrap();
    let refused = seen[super::tools::MAX_CALLS + 1].last().unwrap();
    assert_eq!(
        refused.content,
        "no more lookups in this turn: answer with what you have"
    );
    assert!(matches!(sink.outcomes()[..], [Outcome::Answered(_)]));
}
