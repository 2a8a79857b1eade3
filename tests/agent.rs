//! The agent core through the library, against the scripted model server:
//! a context-length error makes the thread drop the oldest history pair and
//! ask again, over real HTTP.

mod common;

use std::io;

use aiq::agent::{Event, EventSink, HistoryMessage, Thread, ThreadOptions};
use aiq::llm::{self, Provider, Settings};
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
    fn confirm(&mut self, _: &str) -> bool {
        false
    }
}

#[test]
fn context_length_errors_drop_the_oldest_pair_over_http() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#.into(),
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
    };
    let model = llm::connect(&settings).unwrap();
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default()).unwrap();
    let catalog = src.introspect().unwrap();
    let mut thread = Thread::new(model, src, catalog, ThreadOptions::default());
    thread.set_history(vec![
        HistoryMessage::user("oldest question"),
        HistoryMessage::assistant("oldest answer"),
        HistoryMessage::user("newer question"),
        HistoryMessage::assistant("newer answer"),
    ]);
    let mut events = Events::default();
    let outcome = thread.ask("how many orders?", &mut events).unwrap();
    assert_eq!(outcome.rows, Some(1));
    let chats = server.chats();
    assert_eq!(chats.len(), 2);
    assert_eq!(chats[0].messages().len(), 6);
    let second = chats[1].messages();
    assert_eq!(second.len(), 4);
    assert_eq!(second[1].1, "newer question");
    assert_eq!(second[3].1, "how many orders?");
    assert!(events.0.iter().any(
        |e| matches!(e, Event::Retrying { why, .. } if why.contains("leaving out the oldest"))
    ));
    assert!(events
        .0
        .contains(&Event::Rows(vec![vec![aiq::source::Value::Int(6)]])));
}
