//! [`Thread`]: one conversation with the model. [`Thread::ask`] runs one
//! turn exactly as SPEC §5.3 says — schema context, messages, the model's
//! answer streamed, the code extracted by the answer kind, run (SQL through
//! the statement runner), at most two visible fixes, the exchange recorded
//! in the history — and ends it with the one final event. Each turn gets its
//! own cancel token; [`Thread::canceller`] reaches whichever turn runs.

use std::io;

use chrono::Utc;

use super::events::{Event, EventSink};
use super::extract::Found;
use super::kind::{AnswerKind, Mode, RunContext, RunFailure, SqlAnswers};
use super::outcome::{AgentError, Answer};
use super::prompt::{history_messages, messages, system_prompt, PromptFacts};
use super::rank::schema_context;
use super::runner::{finish_turn, statement_turn, Ran};
use super::{kept_history, HistoryMessage};
use crate::cancel::{CancelHandle, CancelToken, TurnSlot};
use crate::llm::{ChatModel, ChatRequest, LlmErrorKind, Message, StreamEvent, ToolCall};
use crate::safety::Policy;
use crate::schema::Catalog;
use crate::source::{DataSource, EngineKind};

/// Fixes the model may make after a failed answer (SPEC §5.3 step 5).
const MAX_FIXES: u32 = 2;
/// Bytes of schema context in a request (the whole request stays < 60 KB).
pub const SCHEMA_BUDGET: usize = 40_000;

/// How a thread behaves.
#[derive(Debug, Clone)]
pub struct ThreadOptions {
    /// Question/answer pairs sent to the model (REQ-1.2).
    pub history_limit: usize,
    /// `--allow-write`: writes pass the gate (and are confirmed through the sink).
    pub allow_write: bool,
    /// False for `--sql-only`: the code is shown, nothing runs.
    pub execute: bool,
    /// Today's date for the prompt (fixed in tests).
    pub today: Option<chrono::NaiveDate>,
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

/// The model's answer to one request.
struct Reply {
    text: String,
    tool_calls: Vec<ToolCall>,
}

/// What every request of one turn starts with.
struct Request {
    system: String,
    /// The kept history; the oldest pairs give way when the model's window
    /// is too small.
    history: Vec<Message>,
}

/// One conversation over one source with one model.
pub struct Thread {
    model: Box<dyn ChatModel>,
    source: Box<dyn DataSource>,
    catalog: Catalog,
    kind: Box<dyn AnswerKind>,
    history: Vec<HistoryMessage>,
    /// Messages before this index are kept (for `/history` and the session
    /// file) but no longer sent to the model.
    context_start: usize,
    options: ThreadOptions,
    turns: TurnSlot,
}

impl Thread {
    /// A thread whose model answers in SQL.
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
            kind: Box::new(SqlAnswers),
            history: Vec::new(),
            context_start: 0,
            options,
            turns: TurnSlot::default(),
        }
    }

    /// What the model writes from the next turn on.
    pub fn set_kind(&mut self, kind: Box<dyn AnswerKind>) {
        self.kind = kind;
    }

    pub fn mode(&self) -> Mode {
        self.kind.mode()
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
    pub fn engine(&self) -> EngineKind {
        self.source.kind()
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn model(&self) -> &dyn ChatModel {
        self.model.as_ref()
    }

    /// Cancels the turn in flight (model request, running statement),
    /// whichever it is when used; between turns it does nothing.
    pub fn canceller(&self) -> CancelHandle {
        self.turns.handle()
    }

    fn policy(&self) -> Policy {
        Policy {
            allow_write: self.options.allow_write,
        }
    }

    /// Runs SQL typed by the user (`/sql`) as a turn of its own, through
    /// the same runner as the model's SQL.
    pub fn run_sql(&mut self, sql: &str, sink: &mut dyn EventSink) -> Result<Answer, AgentError> {
        statement_turn(self.source.as_ref(), sql, self.policy(), &self.turns, sink)
    }

    /// Runs one turn for `question`, reporting through `sink`; ends with
    /// the one final event, whatever happened.
    pub fn ask(&mut self, question: &str, sink: &mut dyn EventSink) -> Result<Answer, AgentError> {
        let (cancel, _turn) = self.turns.begin();
        let result = self.answer(question, &cancel, sink);
        finish_turn(sink, result)
    }

    fn answer(
        &mut self,
        question: &str,
        cancel: &CancelToken,
        sink: &mut dyn EventSink,
    ) -> Result<Answer, AgentError> {
        let mut request = self.prepare(question);
        let mut turn = vec![Message::user(question)];
        let mut fixes = 0;
        loop {
            let reply = self.request(&mut request, &turn, cancel, sink)?;
            let Some(found) = self.kind.extract(&reply.text, &reply.tool_calls) else {
                return self.prose(question, reply.text);
            };
            sink.event(Event::Proposed {
                mode: self.kind.mode(),
                code: found.code.clone(),
            })?;
            if !self.options.execute {
                return Ok(self.keep(
                    question,
                    reply.text,
                    &found.code,
                    Err("not run (--sql-only)"),
                ));
            }
            let ran = self.kind.run(
                &found.code,
                RunContext {
                    source: self.source.as_ref(),
                    catalog: &self.catalog,
                    policy: self.policy(),
                    cancel,
                    sink: &mut *sink,
                },
            );
            match ran {
                Ok(ran) => return Ok(self.keep(question, reply.text, &found.code, Ok(&ran))),
                Err(RunFailure {
                    fixable: Some(why), ..
                }) if fixes < MAX_FIXES => {
                    fixes += 1;
                    sink.event(Event::Retrying {
                        why: why.clone(),
                        attempt: fixes,
                    })?;
                    turn.extend(self.feedback(&reply, &found, &why));
                }
                Err(failure) => {
                    let error = failure.error;
                    // A cancelled turn leaves no trace: the conversation is as before.
                    if !matches!(error, AgentError::Cancelled | AgentError::Output { .. }) {
                        let why = error.to_string();
                        self.keep(question, reply.text, &found.code, Err(&why));
                    }
                    return Err(error);
                }
            }
        }
    }

    /// The system prompt (with the schema that matters for `question`) and
    /// the kept history.
    fn prepare(&self, question: &str) -> Request {
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
        let facts = PromptFacts {
            dialect: self.source.dialect(),
            engine: &self.catalog.engine,
            today: self
                .options
                .today
                .unwrap_or_else(|| Utc::now().date_naive()),
            allow_write: self.options.allow_write,
            schema: &schema,
        };
        Request {
            system: system_prompt(&facts, self.kind.as_ref()),
            history: history_messages(kept),
        }
    }

    /// A reply in words: the answer itself (an empty one is an error).
    fn prose(&mut self, question: &str, text: String) -> Result<Answer, AgentError> {
        self.history.push(HistoryMessage::user(question));
        self.history.push(HistoryMessage::assistant(text.clone()));
        if text.trim().is_empty() {
            return Err(AgentError::EmptyAnswer);
        }
        Ok(Answer {
            text,
            code: None,
            rows: None,
        })
    }

    /// Records the question and the answer with its code and outcome.
    fn keep(
        &mut self,
        question: &str,
        text: String,
        code: &str,
        outcome: Result<&Ran, &str>,
    ) -> Answer {
        let rows = outcome.as_ref().ok().map(|ran| ran.stats.rows);
        let said = HistoryMessage::assistant(text.clone());
        self.history.push(HistoryMessage::user(question));
        self.history.push(self.kind.record(said, code, outcome));
        Answer {
            text,
            code: Some(code.to_string()),
            rows,
        }
    }

    /// One model request; on "context too long" drops the oldest history
    /// pair and tries again, down to no history.
    fn request(
        &self,
        request: &mut Request,
        turn: &[Message],
        cancel: &CancelToken,
        sink: &mut dyn EventSink,
    ) -> Result<Reply, AgentError> {
        let tools = [self.kind.tool()];
        loop {
            sink.event(Event::ThinkingStarted)?;
            let all = messages(&request.system, &request.history, turn);
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
                cancel,
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
                return Err(e.into());
            }
            match result {
                Ok(()) => return Ok(reply),
                Err(e) if e.kind == LlmErrorKind::ContextLength && request.history.len() >= 2 => {
                    request.history.drain(..2);
                    sink.event(Event::Retrying {
                        why: format!("{}; leaving out the oldest question and answer", e.message),
                        attempt: 1,
                    })?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Tells the model what went wrong, in the form its answer used.
    fn feedback(&self, reply: &Reply, found: &Found, why: &str) -> Vec<Message> {
        let fix = self.kind.feedback(why);
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
}
