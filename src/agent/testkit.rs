//! Test doubles for the agent core: a scripted model that records every
//! request (and can hang until its turn is cancelled), a sink that records
//! every event and answers confirmations, and a small SQLite source.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Event, EventSink, Outcome, Thread, ThreadOptions};
use crate::cancel::CancelToken;
use crate::llm::{
    ChatModel, ChatRequest, LlmError, LlmErrorKind, Message, StreamEvent, Window, WindowSource,
};
use crate::source::{self, DataSource, OpenOptions, SourceSpec};

pub type Seen = Arc<Mutex<Vec<Vec<Message>>>>;

/// One scripted reply.
pub enum Scripted {
    Text(String),
    Fail(LlmError),
    /// Streams this text, then waits until the turn is cancelled.
    StreamThenHang(String),
    /// Calls a tool: name and JSON arguments.
    Call(&'static str, String),
}

/// `sql` in a fenced block.
pub fn sql(s: &str) -> Scripted {
    Scripted::Text(format!("```sql\n{s}\n```"))
}

/// Answers from a script and remembers every request.
pub struct FakeModel {
    pub replies: Mutex<VecDeque<Scripted>>,
    pub seen: Seen,
    /// Its context window in tokens; learned windows replace it.
    pub window: Mutex<usize>,
}

impl FakeModel {
    /// A model answering `replies` in order, recording requests in `seen`,
    /// with the default window.
    pub fn new(replies: Vec<Scripted>, seen: Seen) -> FakeModel {
        FakeModel {
            replies: Mutex::new(replies.into()),
            seen,
            window: Mutex::new(crate::llm::window::DEFAULT_TOKENS),
        }
    }
}

impl ChatModel for FakeModel {
    fn provider(&self) -> &str {
        "fake"
    }
    fn model(&self) -> &str {
        "fake-1"
    }
    fn check(&self) -> Result<String, LlmError> {
        Ok("fake".into())
    }
    fn window(&self) -> Window {
        Window {
            tokens: *self.window.lock().unwrap(),
            source: WindowSource::Configured,
        }
    }
    fn learn_window(&self, tokens: usize) {
        *self.window.lock().unwrap() = tokens;
    }
    fn chat(
        &self,
        request: ChatRequest<'_>,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        self.seen.lock().unwrap().push(request.messages.to_vec());
        let reply = self.replies.lock().unwrap().pop_front();
        match reply.expect("a scripted reply") {
            Scripted::Text(text) => {
                on_event(StreamEvent::TextDelta(text));
                on_event(StreamEvent::Done);
                Ok(())
            }
            Scripted::Fail(e) => Err(e),
            Scripted::Call(name, arguments) => {
                let n = self.seen.lock().unwrap().len();
                on_event(StreamEvent::ToolCall(crate::llm::ToolCall {
                    id: format!("call_{n}"),
                    name: name.into(),
                    arguments,
                }));
                on_event(StreamEvent::Done);
                Ok(())
            }
            Scripted::StreamThenHang(text) => {
                on_event(StreamEvent::TextDelta(text));
                while !cancel.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(LlmError::new(LlmErrorKind::Cancelled, "cancelled"))
            }
        }
    }
}

/// Records every event; answers confirmations with `answer`.
#[derive(Default)]
pub struct Recorder {
    pub events: Vec<Event>,
    pub answer: bool,
}

impl EventSink for Recorder {
    fn event(&mut self, event: Event) -> io::Result<()> {
        if let Event::Confirm(c) = &event {
            c.answer(self.answer);
        }
        self.events.push(event);
        Ok(())
    }
}

impl Recorder {
    /// The final events seen, in order.
    pub fn outcomes(&self) -> Vec<&Outcome> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::TurnFinished(o) => Some(o),
                _ => None,
            })
            .collect()
    }

    /// Rows of every `Rows` event, flattened.
    pub fn rows(&self) -> Vec<Vec<crate::source::Value>> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Rows(r) => Some(r.clone().into_values()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

/// A SQLite file `name` in `dir` with table `t (month, n)` and two rows.
pub fn source_in(dir: &std::path::Path, name: &str, allow_write: bool) -> Box<dyn DataSource> {
    let path = dir.join(name);
    if !path.exists() {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE t (month TEXT, n INTEGER); INSERT INTO t VALUES ('2024-01', 5), ('2024-02', 1);",
        )
        .unwrap();
    }
    let options = OpenOptions {
        allow_write,
        ..OpenOptions::default()
    };
    source::open(&SourceSpec::Sqlite(path), options).unwrap()
}

/// A thread over [`source_in`] with a scripted model.
pub fn thread_with(
    dir: &std::path::Path,
    replies: Vec<Scripted>,
    options: ThreadOptions,
) -> (Thread, Seen) {
    thread_over(
        dir,
        "t.db",
        crate::llm::window::DEFAULT_TOKENS,
        replies,
        options,
    )
}

/// A thread over the SQLite file `name` in `dir` (made by [`source_in`]
/// unless it exists) with a scripted model of `window` tokens.
pub fn thread_over(
    dir: &std::path::Path,
    name: &str,
    window: usize,
    replies: Vec<Scripted>,
    options: ThreadOptions,
) -> (Thread, Seen) {
    let src = source_in(dir, name, options.allow_write);
    let catalog = src.introspect().unwrap();
    let seen: Seen = Arc::default();
    let model = FakeModel {
        replies: Mutex::new(replies.into()),
        seen: Arc::clone(&seen),
        window: Mutex::new(window),
    };
    (Thread::new(Box::new(model), src, catalog, options), seen)
}

/// A statement that keeps SQLite busy for many seconds (until cancelled).
pub const SLOW_SQL: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c";
