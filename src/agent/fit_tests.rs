//! Fitting a turn's requests to the model's window: what gives way and in
//! which order (older history pairs, then schema detail and the tables
//! that match nothing), the one line that says so, lookups sized to the
//! window, and "too long" errors answered with a smaller request.

use super::fit::usable_bytes;
use super::testkit::{sql, thread_over, Recorder, Scripted};
use super::{Event, HistoryMessage, ThreadOptions};
use crate::llm::{LlmError, LlmErrorKind, Message, Role};

/// A SQLite file with `t (month, n)` and 300 audit tables.
fn wide(dir: &std::path::Path) -> &'static str {
    let c = rusqlite::Connection::open(dir.join("wide.db")).unwrap();
    let mut sql = String::from(
        "BEGIN; CREATE TABLE t (month TEXT, n INTEGER); INSERT INTO t VALUES ('2024-01', 5);",
    );
    for i in 0..300 {
        sql.push_str(&format!(
            "CREATE TABLE audit_{i:03} (id INTEGER PRIMARY KEY, actor TEXT, action TEXT, happened_at TEXT);"
        ));
    }
    sql.push_str("COMMIT;");
    c.execute_batch(&sql).unwrap();
    "wide.db"
}

/// Three earlier pairs, each answer `size` bytes.
fn history(size: usize) -> Vec<HistoryMessage> {
    (0..3)
        .flat_map(|i| {
            [
                HistoryMessage::user(format!("earlier question {i}")),
                HistoryMessage::assistant(format!("answer {i} {}", "x".repeat(size))),
            ]
        })
        .collect()
}

fn bytes(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.content.len()).sum()
}

fn notices(sink: &Recorder) -> Vec<String> {
    sink.events
        .iter()
        .filter_map(|e| match e {
            Event::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// Asks once in a window of `window` tokens after [`history`]; returns
/// the request sent and the notices.
fn ask_in(window: usize, answer_size: usize) -> (Vec<Message>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let name = wide(dir.path());
    let (mut t, seen) = thread_over(
        dir.path(),
        name,
        window,
        vec![sql("SELECT n FROM t")],
        ThreadOptions::default(),
    );
    t.set_history(history(answer_size));
    let mut sink = Recorder::default();
    t.ask("what is n in t per month?", &mut sink).unwrap();
    let sent = seen.lock().unwrap()[0].clone();
    (sent, notices(&sink))
}

#[test]
fn a_large_window_keeps_everything_and_says_nothing() {
    let (sent, notices) = ask_in(128_000, 500);
    assert_eq!(sent.len(), 8, "system + 3 pairs + question");
    assert!(sent[0].content.contains("table audit_299"));
    assert_eq!(notices, Vec::<String>::new());
}

#[test]
fn older_pairs_give_way_first_then_the_tables_that_match_nothing() {
    // 8,192 tokens: the history's share holds two of the three pairs.
    let (sent, notices) = ask_in(8192, 1_500);
    let users: Vec<&str> = sent
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        users,
        [
            "earlier question 1",
            "earlier question 2",
            "what is n in t per month?"
        ]
    );
    assert!(bytes(&sent) <= usable_bytes(8192), "{}", bytes(&sent));
    // The table the question needs is described; audit tables gave way.
    assert!(sent[0].content.contains("table t "), "{}", sent[0].content);
    assert!(!sent[0].content.contains("table audit_299"));
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(
            "aiq: to fit the model's 8,192-token window: the oldest earlier question left out, "
        ),
        "{}",
        notices[0]
    );
    assert!(
        notices[0].contains("other tables not described"),
        "{}",
        notices[0]
    );
    // A smaller window leaves more history out, never the question.
    let (sent, notices) = ask_in(4096, 1_500);
    assert!(bytes(&sent) <= usable_bytes(4096), "{}", bytes(&sent));
    assert_eq!(sent.last().unwrap().content, "what is n in t per month?");
    assert!(
        sent[0].content.contains("table t "),
        "{}\n{notices:?}",
        sent[0].content
    );
    assert!(
        notices[0].contains("the 3 oldest earlier questions left out")
            || notices[0].contains("the 2 oldest earlier questions left out"),
        "{}",
        notices[0]
    );
}

#[test]
fn lookups_are_sized_to_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let name = wide(dir.path());
    let all: Vec<String> = (0..300).map(|i| format!("audit_{i:03}")).collect();
    let (mut t, seen) = thread_over(
        dir.path(),
        name,
        4096,
        vec![
            Scripted::Call(
                "describe_tables",
                serde_json::json!({ "names": all }).to_string(),
            ),
            sql("SELECT n FROM t"),
        ],
        ThreadOptions::default(),
    );
    let mut sink = Recorder::default();
    t.ask("what is in the audit tables?", &mut sink).unwrap();
    let seen = seen.lock().unwrap();
    let result = &seen[1].last().unwrap().content;
    assert!(result.contains("more than fits"), "{result}");
    // The second request, lookup included, still fits.
    assert!(bytes(&seen[1]) <= usable_bytes(4096), "{}", bytes(&seen[1]));
}

#[test]
fn too_long_errors_are_answered_with_smaller_requests_then_reported() {
    let dir = tempfile::tempdir().unwrap();
    let too_long = || {
        Scripted::Fail(LlmError::context(
            "fake: the prompt is longer than the model's context window",
            "This model's maximum context length is 2048 tokens.",
        ))
    };
    let name = wide(dir.path());
    let (mut t, seen) = thread_over(
        dir.path(),
        name,
        128_000,
        vec![too_long(), sql("SELECT 1")],
        ThreadOptions::default(),
    );
    t.set_history(history(3_000));
    let mut sink = Recorder::default();
    t.ask("what is n in t?", &mut sink).unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].len(), 8);
        // Fitted to the window the error named.
        assert!(bytes(&seen[1]) <= usable_bytes(2048), "{}", bytes(&seen[1]));
        assert_eq!(seen[1].last().unwrap().content, "what is n in t?");
    }
    assert!(sink
        .events
        .iter()
        .any(|e| matches!(e, Event::Retrying { why, .. }
        if why.contains("the model's window is 2,048 tokens: sending a smaller request"))));
    // Errors that name no window shrink the guess; after two smaller
    // requests the error is reported.
    let no_numbers = || {
        Scripted::Fail(LlmError::new(
            LlmErrorKind::ContextLength,
            "fake: the prompt is too long",
        ))
    };
    let dir = tempfile::tempdir().unwrap();
    let name = wide(dir.path());
    let (mut t, seen) = thread_over(
        dir.path(),
        name,
        8192,
        vec![no_numbers(), no_numbers(), no_numbers()],
        ThreadOptions::default(),
    );
    let e = t
        .ask("what is n in t?", &mut Recorder::default())
        .unwrap_err();
    assert!(
        matches!(e, super::AgentError::Llm(ref l) if l.kind == LlmErrorKind::ContextLength),
        "{e:?}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let sizes: Vec<usize> = seen.iter().map(|m| bytes(m)).collect();
    assert!(
        sizes[0] > sizes[1] && sizes[1] > sizes[2],
        "each request smaller: {sizes:?}"
    );
}

/// A long chat in a small window: when the history outgrows its room, the
/// oldest pairs give way and the system message (rules, notes, schema)
/// stays byte for byte, so a local server's prompt cache keeps it; the
/// tables a question adds go with the question. Answers are long, and
/// every question names a table the schema did not describe.
#[test]
fn a_long_chat_in_a_small_window_keeps_its_system_message() {
    const WINDOW: usize = 1024;
    let dir = tempfile::tempdir().unwrap();
    let name = wide(dir.path());
    let long = |i: usize| {
        Scripted::Text(format!(
            "{}\n```sql\nSELECT count(*) FROM audit_{i:03}\n```",
            format!("Counting the actions of audit_{i:03}, step by step. ").repeat(40)
        ))
    };
    let replies: Vec<Scripted> = (1..=6).map(long).collect();
    let (mut t, seen) = thread_over(dir.path(), name, WINDOW, replies, ThreadOptions::default());
    let mut sink = Recorder::default();
    for i in 1..=6 {
        t.ask(&format!("how many actions are in audit_{i:03}?"), &mut sink)
            .unwrap();
    }
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 6);
    for (i, request) in sent.iter().enumerate() {
        assert!(
            bytes(request) <= usable_bytes(WINDOW),
            "turn {}: {}",
            i + 1,
            bytes(request)
        );
        assert_eq!(
            request[0].content,
            sent[0][0].content,
            "turn {}: the system message was laid out anew",
            i + 1
        );
        let question = &request.last().unwrap().content;
        assert!(question.ends_with(&format!("how many actions are in audit_{:03}?", i + 1)));
    }
    // The history gave way: the last request does not carry the first turn.
    let last = sent.last().unwrap();
    assert!(last.iter().all(|m| !m.content.contains("audit_001?")));
}
