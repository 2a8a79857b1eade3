//! [`Thread`]: one conversation. [`Thread::ask`] runs one turn exactly as
//! SPEC §5.3 says — schema context, messages, the model's answer streamed,
//! SQL extracted, the safety gate, execution with rows streamed to the sink,
//! at most two visible fixes, and the exchange recorded in the history.

use std::io;

use chrono::{NaiveDate, Utc};

use super::events::{Event, EventSink};
use super::extract::{find_sql, Found};
use super::prompt::{history_messages, messages, run_sql_tool, system_prompt, PromptFacts};
use super::rank::schema_context;
use super::{kept_history, HistoryMessage, PREVIEW_BYTES, PREVIEW_ROWS};
use crate::llm::{
    Cancel, ChatModel, ChatRequest, LlmError, LlmErrorKind, Message, StreamEvent, ToolCall,
};
use crate::safety::{self, Access, CheckedSql, Policy, Refusal};
use crate::schema::Catalog;
use crate::source::{CancelHandle, Column, DataSource, ExecError, QueryStats, RowSink, Value};

/// Fixes the model may make after a failed statement (SPEC §5.3 step 5).
const MAX_FIXES: u32 = 2;
/// Bytes of schema context in a request (the whole request stays < 60 KB).
const SCHEMA_BUDGET: usize = 40_000;
/// Rows per `Event::Rows` batch.
const BATCH: usize = 256;

/// How a thread behaves.
#[derive(Debug, Clone)]
pub struct ThreadOptions {
    /// Question/answer pairs sent to the model (REQ-1.2).
    pub history_limit: usize,
    /// `--allow-write`: writes pass the gate (and are confirmed through the sink).
    pub allow_write: bool,
    /// False for `--sql-only`: the SQL is shown, nothing runs.
    pub execute: bool,
    /// Today's date for the prompt (fixed in tests).
    pub today: Option<NaiveDate>,
}

impl Default for ThreadOptions {
    fn default() -> Self {
        ThreadOptions {
            history_limit: 20,
            allow_write: false,
            execute: true,
            today: None,
        }
    }
}

/// What a finished turn produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The statement that ran (or would run, with `execute` off).
    pub sql: Option<String>,
    /// Rows returned, if it ran.
    pub rows: Option<u64>,
    /// The model's text.
    pub answer: String,
}

/// Why a turn failed. Front ends map these to exit codes.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The model could not be asked (exit 4; a usage problem exits 2).
    #[error("{0}")]
    Llm(LlmError),
    /// The safety policy refused the statement (exit 5).
    #[error("{0}")]
    Refused(String),
    /// The SQL kept failing after the fixes (exit 1).
    #[error("{0}")]
    QueryFailed(String),
    /// The model answered nothing (exit 1).
    #[error("the model gave an empty answer; try rephrasing the question")]
    EmptyAnswer,
    /// Ctrl-C (exit 130).
    #[error("interrupted")]
    Cancelled,
    /// The output went away (a closed pipe is not an error for the user).
    #[error("cannot write the result: {0}")]
    Output(io::Error),
}

impl From<io::Error> for AgentError {
    fn from(e: io::Error) -> Self {
        AgentError::Output(e)
    }
}

/// The model's answer to one request.
struct Reply {
    text: String,
    tool_calls: Vec<ToolCall>,
}

/// One conversation over one source with one model.
pub struct Thread {
    model: Box<dyn ChatModel>,
    source: Box<dyn DataSource>,
    catalog: Catalog,
    history: Vec<HistoryMessage>,
    /// Messages before this index are kept (for `/history` and the session
    /// file) but no longer sent to the model.
    context_start: usize,
    options: ThreadOptions,
    cancel: Cancel,
}

impl Thread {
    pub fn new(
        model: Box<dyn ChatModel>,
        source: Box<dyn DataSource>,
        catalog: Catalog,
        options: ThreadOptions,
    ) -> Self {
        Thread {
            model,
            source,
            catalog,
            history: Vec::new(),
            context_start: 0,
            options,
            cancel: Cancel::default(),
        }
    }

    /// Every message so far, oldest first.
    pub fn history(&self) -> &[HistoryMessage] {
        &self.history
    }

    /// Replaces the history (a restored session); the model sees the
    /// messages from `context_start` on.
    pub fn set_history(&mut self, history: Vec<HistoryMessage>) {
        self.history = history;
        self.context_start = 0;
    }

    /// Where the model's context starts in [`Thread::history`].
    pub fn context_start(&self) -> usize {
        self.context_start
    }

    /// Sets where the model's context starts (a restored session).
    pub fn set_context_start(&mut self, start: usize) {
        self.context_start = start.min(self.history.len());
    }

    /// `/clear`: from the next turn on the model gets no history; the
    /// messages stay for `/history` and the session file.
    pub fn clear_context(&mut self) {
        self.context_start = self.history.len();
    }

    /// `/source`: another source; the history is kept, the schema reloaded.
    pub fn set_source(&mut self, source: Box<dyn DataSource>, catalog: Catalog) {
        self.source = source;
        self.catalog = catalog;
    }

    /// The engine behind the current source.
    pub fn engine(&self) -> crate::source::EngineKind {
        self.source.kind()
    }

    /// Runs SQL typed by the user (`/sql`) through the same gate,
    /// confirmation and streaming as the model's SQL.
    pub fn run_sql(&mut self, sql: &str, sink: &mut dyn EventSink) -> Result<u64, AgentError> {
        self.cancel.reset();
        let policy = Policy {
            allow_write: self.options.allow_write,
        };
        let checked = safety::check(sql, self.source.dialect(), policy)
            .map_err(|r| AgentError::Refused(r.to_string()))?;
        let result = self
            .run(&checked, sink)
            .map(|(stats, _)| stats.rows)
            .map_err(AgentError::from);
        sink.event(Event::TurnDone)?;
        result
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn model(&self) -> &dyn ChatModel {
        self.model.as_ref()
    }

    /// Cancels the turn in flight: the model request and the running query.
    pub fn cancel_handle(&self) -> CancelHandle {
        let llm = self.cancel.clone();
        let query = self.source.cancel_handle();
        CancelHandle::new(move || {
            llm.cancel();
            query.cancel();
        })
    }

    /// Runs one turn for `question`, reporting through `sink`.
    pub fn ask(
        &mut self,
        question: &str,
        sink: &mut dyn EventSink,
    ) -> Result<TurnOutcome, AgentError> {
        self.cancel.reset();
        let asked = HistoryMessage::user(question);
        let kept = kept_history(
            &self.history[self.context_start..],
            self.options.history_limit,
        );
        let recent: Vec<&str> = kept
            .iter()
            .rev()
            .take(4)
            .map(|m| m.content.as_str())
            .collect();
        let earlier_sql: Vec<&str> = kept.iter().filter_map(|m| m.sql.as_deref()).collect();
        let schema = schema_context(
            &self.catalog,
            question,
            &recent,
            &earlier_sql,
            SCHEMA_BUDGET,
        );
        let system = system_prompt(&PromptFacts {
            dialect: self.source.dialect(),
            engine: &self.catalog.engine,
            today: self
                .options
                .today
                .unwrap_or_else(|| Utc::now().date_naive()),
            allow_write: self.options.allow_write,
            schema: &schema,
        });
        let mut history = history_messages(kept);
        let mut turn = vec![Message::user(question)];
        let mut fixes = 0;
        loop {
            let reply = self.request(&system, &mut history, &turn, sink)?;
            let Some(found) = find_sql(&reply.text, &reply.tool_calls) else {
                if reply.text.trim().is_empty() {
                    return Err(self.fail(sink, asked, "", None, AgentError::EmptyAnswer));
                }
                return self.finish(
                    sink,
                    asked,
                    HistoryMessage::assistant(reply.text.clone()),
                    None,
                    None,
                    reply.text,
                );
            };
            sink.event(Event::SqlProposed(found.sql.clone()))?;
            if !self.options.execute {
                let answer = HistoryMessage::assistant(reply.text.clone())
                    .with_sql(&found.sql, Err("not run (--sql-only)".into()));
                return self.finish(sink, asked, answer, Some(found.sql), None, reply.text);
            }
            let policy = Policy {
                allow_write: self.options.allow_write,
            };
            let outcome = match safety::check(&found.sql, self.source.dialect(), policy) {
                Ok(checked) => self.run(&checked, sink),
                Err(refusal @ Refusal::Unparsable { .. }) => {
                    Err(RunError::Fixable(refusal.to_string()))
                }
                Err(refusal) => Err(RunError::Final(AgentError::Refused(refusal.to_string()))),
            };
            match outcome {
                Ok((stats, preview)) => {
                    let answer = HistoryMessage::assistant(reply.text.clone())
                        .with_sql(&found.sql, Ok((stats.rows, preview)));
                    return self.finish(
                        sink,
                        asked,
                        answer,
                        Some(found.sql),
                        Some(stats.rows),
                        reply.text,
                    );
                }
                Err(RunError::Fixable(why)) if fixes < MAX_FIXES => {
                    fixes += 1;
                    sink.event(Event::Retrying {
                        why: why.clone(),
                        attempt: fixes,
                    })?;
                    turn.extend(feedback(&reply, &found, &why));
                }
                Err(failure) => {
                    let error = AgentError::from(failure);
                    let why = error.to_string();
                    return Err(self.fail(
                        sink,
                        asked,
                        &reply.text,
                        Some((&found.sql, why)),
                        error,
                    ));
                }
            }
        }
    }

    /// One model request; on "context too long" drops the oldest history
    /// pair and tries again, down to no history.
    fn request(
        &self,
        system: &str,
        history: &mut Vec<Message>,
        turn: &[Message],
        sink: &mut dyn EventSink,
    ) -> Result<Reply, AgentError> {
        let tools = [run_sql_tool()];
        loop {
            sink.event(Event::ThinkingStarted)?;
            let all = messages(system, history, turn);
            let mut reply = Reply {
                text: String::new(),
                tool_calls: Vec::new(),
            };
            let mut sink_error: Option<io::Error> = None;
            let result = self.model.chat(
                ChatRequest {
                    messages: &all,
                    tools: &tools,
                },
                &self.cancel,
                &mut |event| {
                    let shown = match event {
                        StreamEvent::TextDelta(t) => {
                            reply.text.push_str(&t);
                            Some(Event::TextDelta(t))
                        }
                        StreamEvent::ToolCall(call) => {
                            reply.tool_calls.push(call);
                            None
                        }
                        StreamEvent::Usage(u) => Some(Event::Usage(u)),
                        StreamEvent::Retrying { why, attempt } => {
                            Some(Event::Retrying { why, attempt })
                        }
                        StreamEvent::Done => None,
                    };
                    if let (Some(e), None) = (shown, &sink_error) {
                        if let Err(err) = sink.event(e) {
                            sink_error = Some(err);
                        }
                    }
                },
            );
            if let Some(e) = sink_error {
                return Err(AgentError::Output(e));
            }
            match result {
                Ok(()) => return Ok(reply),
                Err(e) if e.kind == LlmErrorKind::Cancelled => return Err(AgentError::Cancelled),
                Err(e) if e.kind == LlmErrorKind::ContextLength && history.len() >= 2 => {
                    history.drain(..2);
                    sink.event(Event::Retrying {
                        why: format!("{}; leaving out the oldest question and answer", e.message),
                        attempt: 1,
                    })?;
                }
                Err(e) => {
                    sink.event(Event::Error(e.message.clone()))?;
                    return Err(AgentError::Llm(e));
                }
            }
        }
    }

    /// Runs a checked statement, streaming rows to the sink in batches and
    /// keeping a bounded CSV preview for the history.
    fn run(
        &self,
        checked: &CheckedSql,
        sink: &mut dyn EventSink,
    ) -> Result<(QueryStats, String), RunError> {
        if checked.access() == Access::Write && !sink.confirm(checked.sql()) {
            return Err(RunError::Final(AgentError::Refused(format!(
                "not run: {} changes data and was not confirmed (answer y on a terminal, or add --yes in scripts)",
                checked.kind()
            ))));
        }
        sink.event(Event::QueryStarted {
            sql: checked.sql().to_string(),
        })
        .map_err(|e| RunError::Final(e.into()))?;
        let mut forward = Forward::new(sink);
        let result = self.source.execute(checked, &mut forward);
        let flushed = forward.flush();
        let preview = std::mem::take(&mut forward.preview).finish();
        let stats = match result {
            Ok(stats) => stats,
            Err(ExecError::Engine(msg)) => return Err(RunError::Fixable(msg)),
            Err(ExecError::Cancelled) => return Err(RunError::Final(AgentError::Cancelled)),
            Err(ExecError::Output(e)) => return Err(RunError::Final(AgentError::Output(e))),
            Err(e @ ExecError::Timeout(_)) => {
                return Err(RunError::Final(AgentError::QueryFailed(e.to_string())))
            }
        };
        flushed.map_err(|e| RunError::Final(e.into()))?;
        sink.event(Event::QueryFinished {
            rows: stats.rows,
            elapsed: stats.elapsed,
            changed: stats.changed,
        })
        .map_err(|e| RunError::Final(e.into()))?;
        Ok((stats, preview))
    }

    fn finish(
        &mut self,
        sink: &mut dyn EventSink,
        asked: HistoryMessage,
        answer: HistoryMessage,
        sql: Option<String>,
        rows: Option<u64>,
        text: String,
    ) -> Result<TurnOutcome, AgentError> {
        self.history.push(asked);
        self.history.push(answer);
        sink.event(Event::TurnDone)?;
        Ok(TurnOutcome {
            sql,
            rows,
            answer: text,
        })
    }

    /// Records a failed turn (so a follow-up can refer to it) and reports it.
    fn fail(
        &mut self,
        sink: &mut dyn EventSink,
        asked: HistoryMessage,
        text: &str,
        sql: Option<(&str, String)>,
        error: AgentError,
    ) -> AgentError {
        // A cancelled turn leaves no trace: the conversation is as before.
        if !matches!(error, AgentError::Output(_) | AgentError::Cancelled) {
            let mut answer = HistoryMessage::assistant(text);
            if let Some((sql, why)) = sql {
                answer = answer.with_sql(sql, Err(why));
            }
            self.history.push(asked);
            self.history.push(answer);
            let _ = sink.event(Event::Error(error.to_string()));
        }
        let _ = sink.event(Event::TurnDone);
        error
    }
}

enum RunError {
    /// The model may fix it (parse or execution error).
    Fixable(String),
    /// Ends the turn.
    Final(AgentError),
}

impl From<RunError> for AgentError {
    /// A failure that is not (or no longer) fixed ends the turn.
    fn from(e: RunError) -> Self {
        match e {
            RunError::Fixable(why) => AgentError::QueryFailed(format!("query failed: {why}")),
            RunError::Final(error) => error,
        }
    }
}

/// Tells the model what went wrong, in the form its answer used.
fn feedback(reply: &Reply, found: &Found, why: &str) -> Vec<Message> {
    let fix = format!("That SQL failed: {why}\nReply with a corrected statement.");
    let mut said = Message::assistant(reply.text.clone());
    match &found.tool_call_id {
        Some(id) => {
            said.tool_calls = reply.tool_calls.clone();
            let mut out = vec![said];
            for call in &reply.tool_calls {
                let content = if &call.id == id {
                    fix.clone()
                } else {
                    "not run".to_string()
                };
                out.push(Message::tool_result(call.id.clone(), content));
            }
            out
        }
        None => vec![said, Message::user(fix)],
    }
}

/// A [`RowSink`] that forwards rows to the event sink in batches and keeps
/// the preview.
struct Forward<'a> {
    sink: &'a mut dyn EventSink,
    batch: Vec<Vec<Value>>,
    preview: Preview,
}

impl<'a> Forward<'a> {
    fn new(sink: &'a mut dyn EventSink) -> Self {
        Forward {
            sink,
            batch: Vec::new(),
            preview: Preview::default(),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.sink
            .event(Event::Rows(std::mem::take(&mut self.batch)))
    }
}

impl RowSink for Forward<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.preview.columns(columns);
        self.sink.event(Event::Columns(columns.to_vec()))
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        self.preview.row(row);
        self.batch.push(row.to_vec());
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }
}

/// The first rows as CSV, at most [`PREVIEW_ROWS`] rows and [`PREVIEW_BYTES`].
#[derive(Default)]
struct Preview {
    text: String,
    rows: usize,
    full: bool,
}

impl Preview {
    fn line(&mut self, cells: impl Iterator<Item = String>) {
        if self.full {
            return;
        }
        let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
        let cells: Vec<String> = cells.collect();
        let line = match w
            .write_record(&cells)
            .and_then(|_| w.flush().map_err(csv::Error::from))
        {
            Ok(()) => String::from_utf8_lossy(w.get_ref()).into_owned(),
            Err(_) => return,
        };
        if self.text.len() + line.len() > PREVIEW_BYTES {
            self.full = true;
            return;
        }
        self.text.push_str(&line);
    }

    fn columns(&mut self, columns: &[Column]) {
        self.line(columns.iter().map(|c| c.name.clone()));
    }

    fn row(&mut self, row: &[Value]) {
        if self.rows >= PREVIEW_ROWS {
            self.full = true;
            return;
        }
        self.rows += 1;
        self.line(row.iter().map(|v| match v {
            Value::Null => "NULL".to_string(),
            v => v.to_text(),
        }));
    }

    fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::llm::Role;
    use crate::source::{self, OpenOptions, SourceSpec};

    type Seen = Arc<Mutex<Vec<Vec<Message>>>>;

    /// Answers from a script and remembers every request.
    struct FakeModel {
        replies: Mutex<VecDeque<Result<String, LlmError>>>,
        seen: Seen,
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
        fn chat(
            &self,
            request: ChatRequest<'_>,
            _cancel: &Cancel,
            on_event: &mut dyn FnMut(StreamEvent),
        ) -> Result<(), LlmError> {
            self.seen.lock().unwrap().push(request.messages.to_vec());
            let reply = self
                .replies
                .lock()
                .unwrap()
                .pop_front()
                .expect("a scripted reply")?;
            on_event(StreamEvent::TextDelta(reply));
            on_event(StreamEvent::Done);
            Ok(())
        }
    }

    struct Quiet;
    impl EventSink for Quiet {
        fn event(&mut self, _: Event) -> io::Result<()> {
            Ok(())
        }
        fn confirm(&mut self, _: &str) -> bool {
            false
        }
    }

    fn thread(
        dir: &std::path::Path,
        replies: Vec<Result<String, LlmError>>,
        limit: usize,
    ) -> (Thread, Seen) {
        let path = dir.join("t.db");
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE t (month TEXT, n INTEGER); INSERT INTO t VALUES ('2024-01', 5), ('2024-02', 1);")
            .unwrap();
        let src = source::open(&SourceSpec::Sqlite(path), OpenOptions::default()).unwrap();
        let catalog = src.introspect().unwrap();
        let seen: Seen = Arc::default();
        let model = FakeModel {
            replies: Mutex::new(replies.into()),
            seen: Arc::clone(&seen),
        };
        let options = ThreadOptions {
            history_limit: limit,
            ..ThreadOptions::default()
        };
        (Thread::new(Box::new(model), src, catalog, options), seen)
    }

    fn sql(s: &str) -> Result<String, LlmError> {
        Ok(format!("```sql\n{s}\n```"))
    }

    #[test]
    fn follow_ups_carry_the_previous_pair_with_real_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, seen) = thread(
            dir.path(),
            vec![
                sql("SELECT month, n FROM t ORDER BY month"),
                Ok("February is low: 1.".into()),
            ],
            20,
        );
        t.ask("orders per month?", &mut Quiet).unwrap();
        let outcome = t.ask("why is February so low?", &mut Quiet).unwrap();
        assert_eq!(outcome.answer, "February is low: 1.");
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
        let (mut t, seen) = thread(dir.path(), replies, 2);
        for i in 0..4 {
            t.ask(&format!("q{i}"), &mut Quiet).unwrap();
        }
        let seen = seen.lock().unwrap();
        let last = &seen[3];
        // system + 2 kept pairs + the question
        assert_eq!(last.len(), 6);
        assert_eq!(last[1].content, "q1");
        assert_eq!(last[5].content, "q3");
        assert_eq!(t.history().len(), 8);
    }

    #[test]
    fn context_too_long_drops_the_oldest_pair_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let too_long = || {
            Err(LlmError::new(
                LlmErrorKind::ContextLength,
                "fake: the prompt is too long",
            ))
        };
        let (mut t, seen) = thread(
            dir.path(),
            vec![
                sql("SELECT 1"),
                sql("SELECT 2"),
                too_long(),
                sql("SELECT 3"),
                too_long(),
                too_long(),
                too_long(),
                too_long(),
            ],
            20,
        );
        t.ask("a", &mut Quiet).unwrap();
        t.ask("b", &mut Quiet).unwrap();
        t.ask("c", &mut Quiet).unwrap();
        {
            let seen = seen.lock().unwrap();
            assert_eq!(seen[2].len(), 6, "system + 2 pairs + question");
            assert_eq!(seen[3].len(), 4, "the oldest pair was dropped");
            assert_eq!(seen[3][1].content, "b");
        }
        let e = t.ask("d", &mut Quiet).unwrap_err();
        assert!(
            matches!(e, AgentError::Llm(ref l) if l.kind == LlmErrorKind::ContextLength),
            "{e:?}"
        );
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.last().unwrap().len(),
            2,
            "down to no history: system + question"
        );
    }
}
