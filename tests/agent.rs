//! The agent core through the library, against the scripted model server:
//! a context-length error makes the thread drop the oldest history pair and
//! ask again, over real HTTP; a conversation on a worker thread is driven
//! through the channel sink.

mod common;

use std::io;
use std::time::{Duration, Instant};

use aiq::agent::{
    AgentError, Conversation, ConversationOptions, Event, EventSink, HistoryMessage, Keep, Opened,
    Outcome, SourceOpener, Thread, ThreadOptions,
};
use aiq::frontend::channel::Worker;
use aiq::llm::{self, Provider, Settings};
use aiq::render::Format;
use aiq::source::{self, OpenOptions, SourceSpec};
use common::llm::{ModelServer, Reply};
use common::Sandbox;

#[derive(Default)]
struct Events(Vec<Event>);

impl EventSink for Events {
    fn event(&mut self, event: Event) -> io::Result<()> {
        self.0.push(event);
        Ok(())
    }
}

#[test]
fn context_length_errors_refit_the_request_over_http() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens. Please reduce the length of the messages.","code":"context_length_exceeded"}}"#.into(),
            None,
        ),
        Reply::Text("```sql\nSELECT count(*) AS n FROM orders\n```".into()),
    ]);
    let settings = Settings {
        provider: Provider::OpenAi,
        model: "test-model".into(),
        base_url: server.base(),
        api_key: None,
        timeout: std::time::Duration::from_secs(10),
        max_retries: 0,
        stream: true,
        context_tokens: None,
        home: Some(sb.home()),
    };
    let model = llm::connect(&settings).unwrap();
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default()).unwrap();
    let catalog = src.introspect().unwrap();
    let mut thread = Thread::new(model, src, catalog, ThreadOptions::default());
    thread.set_history(vec![
        HistoryMessage::user("oldest question"),
        HistoryMessage::assistant(format!("oldest answer {}", "x".repeat(6000))),
        HistoryMessage::user("newer question"),
        HistoryMessage::assistant("newer answer"),
    ]);
    let mut events = Events::default();
    let outcome = thread.ask("how many orders?", &mut events).unwrap();
    assert_eq!(outcome.rows, Some(1));
    let chats = server.chats();
    assert_eq!(chats.len(), 2);
    assert_eq!(chats[0].messages().len(), 6);
    // Fitted to the window the error named: the oldest pair gave way.
    let second = chats[1].messages();
    assert_eq!(second.len(), 4);
    assert_eq!(second[1].1, "newer question");
    assert_eq!(second[3].1, "how many orders?");
    assert!(
        chats[1].raw.len() < (4096 - 512) * 2,
        "{} bytes",
        chats[1].raw.len()
    );
    assert!(events
        .0
        .iter()
        .any(|e| matches!(e, Event::Retrying { why, .. }
        if why.contains("the model's window is 4,096 tokens: sending a smaller request"))));
    assert!(events.0.iter().any(|e| matches!(e, Event::Notice(n)
        if n.starts_with("aiq: to fit the model's 4,096-token window: the oldest earlier question left out"))));
    assert!(events.0.iter().any(
        |e| matches!(e, Event::Rows(aiq::source::RowBatch::Values(rows)) if rows == &vec![vec![aiq::source::Value::Int(6)]])
    ));
    // Learned for next time.
    let cached = std::fs::read_to_string(sb.home().join("cache/windows.json")).unwrap();
    assert!(cached.contains("test-model\": 4096"), "{cached}");
}

/// `/source` is not used here.
struct NoOpener;

impl SourceOpener for NoOpener {
    fn open(&self, name: &str, _ask: aiq::source::PasswordAsk) -> Result<Opened, String> {
        Err(format!("cannot open {name} here"))
    }
}

/// Receives events until `stop` says so; fails after 10 s without one.
fn until(worker: &Worker, mut stop: impl FnMut(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = worker
            .events()
            .recv_timeout(Duration::from_secs(10))
            .expect("an event within 10 s");
        let done = stop(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

/// The channel sink: a turn runs on a worker thread while this thread
/// receives its events, cancels it mid-stream, and then a second turn on the
/// same conversation returns its rows.
#[test]
fn a_worker_turn_cancelled_mid_stream_leaves_the_conversation_working() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Stall(
            "```sql\nSELECT count(*) AS n".into(),
            Duration::from_secs(30),
        ),
        Reply::Text("```sql\nSELECT count(*) AS n FROM orders\n```".into()),
    ]);
    let settings = Settings {
        provider: Provider::OpenAi,
        model: "test-model".into(),
        base_url: server.base(),
        api_key: None,
        timeout: Duration::from_secs(60),
        max_retries: 0,
        stream: true,
        context_tokens: None,
        home: None,
    };
    let model = llm::connect(&settings).unwrap();
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default()).unwrap();
    let catalog = src.introspect().unwrap();
    let thread = Thread::new(model, src, catalog, ThreadOptions::default());
    std::fs::create_dir_all(sb.home()).unwrap();
    let conversation = Conversation::new(
        thread,
        "shop.db".into(),
        "shop.db".into(),
        Keep::NewSession,
        ConversationOptions {
            home: sb.home(),
            format: Format::Csv,
            stale_after_hours: 12,
            opener: Box::new(NoOpener),
        },
    );
    let worker = Worker::spawn(conversation).unwrap();

    worker.submit("how many orders?");
    until(&worker, |e| matches!(e, Event::TextDelta(_)));
    let cancelled_at = Instant::now();
    worker.cancel();
    let seen = until(&worker, |e| matches!(e, Event::TurnFinished(_)));
    assert!(
        matches!(
            seen.last(),
            Some(Event::TurnFinished(Outcome::Failed(AgentError::Cancelled)))
        ),
        "{seen:?}"
    );
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));

    worker.submit("how many orders, really?");
    let seen = until(&worker, |e| matches!(e, Event::TurnFinished(_)));
    assert!(
        seen.iter().any(
            |e| matches!(e, Event::Rows(aiq::source::RowBatch::Values(rows)) if rows == &vec![vec![aiq::source::Value::Int(6)]])
        ),
        "{seen:?}"
    );
    let Some(Event::TurnFinished(Outcome::Answered(answer))) = seen.last() else {
        panic!("{seen:?}")
    };
    assert_eq!(answer.rows, Some(1));

    let rest = worker.leave();
    let saved = rest.iter().find_map(|e| match e {
        Event::SessionSaved(p) => Some(p.clone()),
        _ => None,
    });
    let saved = saved.expect("the session was saved on leaving");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    let messages = file["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the cancelled turn left no trace");
    assert_eq!(messages[0]["content"], "how many orders, really?");
}
