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
use super::fit::DEFAULT_SCHEMA_BUDGET;
use super::history::Archive;
use super::kind::{AnswerKind, Mode, RunContext, RunFailure, SqlAnswers};
use super::link::{layout, rank, LinkIndex, Signals};
use super::outcome::{AgentError, Answer};
use super::prompt::{messages, system_prompt, PromptFacts};
use super::runner::{finish_turn, run_statement, Ran};
use super::tools::{self, HelperTool, ToolContext};
use super::{HistoryMessage, Lookup};
use crate::cancel::{CancelHandle, CancelToken, TurnSlot};
use crate::llm::{ChatModel, ChatRequest, LlmError, LlmErrorKind, Message, StreamEvent, ToolCall};
use crate::notes::Notes;
use crate::privacy::Guard;
use crate::render::thousands;
use crate::safety::Policy;
use crate::schema::Catalog;
use crate::source::{DataSource, EngineKind};

/// The question of a turn whose SQL the user ran by hand (`/sql`, an
/// `/edit`ed statement): the model reads it before that SQL and result.
pub const BY_HAND: &str = "(I ran this SQL myself.)";

/// What a request says of a source: its catalog as the model may see it
/// (notes on tables in their descriptions), the ranking index, the
/// general notes.
pub struct SchemaView<'a> {
    pub catalog: &'a Catalog,
    pub index: &'a LinkIndex,
    /// The notes that name no table, as `- note` lines.
    pub notes: &'a str,
    /// The verified examples for the question, most similar first.
    pub examples: &'a [super::verified::Shown],
    pub dialect: crate::safety::Dialect,
}

/// The system prompt of a first question's request for its `signals` —
/// the general notes, then the ranked schema in what room they leave —
/// the verified examples its own message carries before the question, and
/// what had to give to fit. `aiq schema --as-sent` prints them too.
pub fn system_for(
    view: &SchemaView<'_>,
    signals: &Signals<'_>,
    today: chrono::NaiveDate,
    allow_write: bool,
    kind: &dyn AnswerKind,
    with_tools: bool,
) -> (String, String, Option<String>) {
    let mut earlier: Vec<&str> = signals.earlier_sql.to_vec();
    earlier.extend(view.examples.iter().map(|e| e.sql.as_str()));
    let signals = Signals {
        earlier_sql: &earlier,
        ..*signals
    };
    let ranked = rank(view.catalog, view.index, &signals);
    let (examples, _) = super::verified::block(
        view.examples,
        super::fit::examples_share(DEFAULT_SCHEMA_BUDGET),
    );
    let budget = DEFAULT_SCHEMA_BUDGET.saturating_sub(view.notes.len() + examples.len());
    let laid = layout(view.catalog, view.index, &ranked, budget);
    let partial = laid.named + laid.dropped > 0;
    let facts = PromptFacts {
        dialect: view.dialect,
        engine: &view.catalog.engine,
        today,
        allow_write,
        notes: view.notes,
        examples: "",
        schema: &laid.text,
        look: partial.then(|| tools::how_to_look(with_tools)),
    };
    (system_prompt(&facts, kind), examples, laid.notice())
}

#[path = "thread_fit.rs"]
mod fitting;

/// Fixes the model may make after a failed answer (SPEC §5.3 step 5).
const MAX_FIXES: u32 = 2;
/// Smaller requests sent after "the prompt is longer than the window".
const MAX_REFITS: u32 = 2;

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

/// One request of a turn, fitted to the model's window.
struct Request {
    system: String,
    /// The kept history; the oldest pairs give way when the model's window
    /// is too small.
    history: Vec<Message>,
    /// The question as sent: the tables it adds, the examples, the
    /// question.
    question: Message,
    /// The tables the question adds to the schema.
    added: Vec<String>,
    /// How many messages from the start the conversation's next request
    /// repeats in the same bytes (the system message, the history, the
    /// question).
    stable: usize,
    /// What the next request starts with.
    prefix: super::prefix::Prefix,
    /// What had to give to fit the request, for the user.
    notice: Option<String>,
    /// Bytes a lookup's result may take.
    lookup_room: usize,
    /// The window it was fitted to, and the tokens it is estimated at.
    window: usize,
    tokens: usize,
}

/// One conversation over one source with one model.
pub struct Thread {
    model: Box<dyn ChatModel>,
    source: Box<dyn DataSource>,
    /// The catalog the model may see, with the notes that name tables in
    /// their descriptions.
    catalog: Catalog,
    /// The same without the notes.
    plain: Catalog,
    /// What may leave the machine (SPEC §4.3).
    guard: Guard,
    notes: Notes,
    /// Verified examples, the most similar sent with each question.
    examples: super::verified::Verified,
    kind: Box<dyn AnswerKind>,
    /// What ranking needs of the catalog, built once per source.
    index: LinkIndex,
    /// Tools the model may call before it answers.
    helpers: Vec<Box<dyn HelperTool>>,
    /// Where earlier sessions are (the history tools).
    archive: Option<Archive>,
    history: Vec<HistoryMessage>,
    /// Messages before this index are kept (for `/history` and the session
    /// file) but no longer sent to the model.
    context_start: usize,
    options: ThreadOptions,
    turns: TurnSlot,
    /// What the conversation's requests start with (none before the first
    /// question, or after what changes it).
    prefix: Option<super::prefix::Prefix>,
    /// Why the next request lays the schema out again, when something
    /// changed it.
    rebase_why: Option<&'static str>,
    /// The questions as they were sent.
    sent: super::prefix::Sent,
    /// The current question as last sent, and the tables it added.
    asked: Option<(String, Vec<String>)>,
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
            index: LinkIndex::new(&catalog),
            plain: catalog.clone(),
            catalog,
            guard: Guard::default(),
            notes: Notes::default(),
            examples: Default::default(),
            kind: Box::new(SqlAnswers),
            helpers: tools::standard(),
            archive: None,
            history: Vec::new(),
            context_start: 0,
            options,
            turns: TurnSlot::default(),
            prefix: None,
            rebase_why: None,
            sent: Default::default(),
            asked: None,
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
    /// The system message the conversation's requests start with, once
    /// a question was asked.
    pub fn prefix_system(&self) -> Option<&str> {
        self.prefix.as_ref().map(|p| p.system.as_str())
    }

    pub fn history(&self) -> &[HistoryMessage] {
        &self.history
    }

    /// Replaces the history (a restored session); the model sees the
    /// messages from `context_start` on.
    pub fn set_history(&mut self, history: Vec<HistoryMessage>) {
        self.history = history;
        self.judge_history(true);
        self.context_start = 0;
        self.sent.clear();
        self.start_over("the conversation's history was replaced");
    }

    /// The next request lays the schema out again, for `why`; the
    /// questions sent so far go back to their own words (what they added
    /// came from a view that may no longer hold).
    fn start_over(&mut self, why: &'static str) {
        if self.prefix.take().is_some() && self.rebase_why.is_none() {
            self.rebase_why = Some(why);
        }
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
    /// The source's privacy settings and notes are [`Thread::set_view`]'s.
    pub fn set_source(&mut self, source: Box<dyn DataSource>, catalog: Catalog) {
        self.judge_history(false);
        self.source = source;
        self.plain = catalog;
        self.guard = Guard::default();
        self.notes = Notes::default();
        self.start_over("the source changed");
        self.rebuild_catalog();
    }

    /// What may leave the machine, and the notes, for the current source.
    pub fn set_view(&mut self, guard: Guard, notes: Notes) {
        self.judge_history(false);
        self.guard = guard;
        self.judge_history(true);
        self.start_over("what may leave the machine changed");
        self.set_notes(notes);
    }

    /// How many verified examples go with a question.
    pub fn examples_max(&self) -> usize {
        self.examples.max()
    }

    /// The source's fingerprint (what a verified example records of the
    /// schema it was confirmed on), empty when the engine gives none.
    pub fn fingerprint(&self) -> String {
        self.source.fingerprint().unwrap_or_default()
    }

    /// The source's verified examples (none: `aiq eval --no-examples`).
    pub fn set_examples(&mut self, examples: super::verified::Verified) {
        self.examples = examples;
    }

    /// The source's notes changed (`/note`).
    pub fn set_notes(&mut self, notes: Notes) {
        self.notes = notes;
        self.start_over("the notes changed");
        self.rebuild_catalog();
    }

    fn rebuild_catalog(&mut self) {
        // What earlier questions added came from the view before.
        self.sent.clear();
        let mut catalog = self.plain.clone();
        self.notes.attach(&mut catalog);
        self.index = LinkIndex::new(&catalog);
        self.catalog = catalog;
    }

    /// The source's privacy settings, applied.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The source for a person to read: its notes once each, then the
    /// tables (`/schema`).
    pub fn described(&self) -> String {
        self.notes.describe(&self.plain)
    }

    /// The plain catalog (without the notes on its tables).
    pub fn plain_catalog(&self) -> &Catalog {
        &self.plain
    }

    /// The notes that name no table, as the prompt carries them.
    pub fn general_notes(&self) -> String {
        self.notes.general(&self.plain)
    }

    /// Adds a tool the model may call before it answers.
    pub fn add_helper(&mut self, tool: Box<dyn HelperTool>) {
        self.helpers.push(tool);
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
        self.guard.policy(self.options.allow_write)
    }

    /// Runs SQL typed by the user (`/sql`, an `/edit`ed statement) as a
    /// turn of its own, through the same runner as the model's SQL. It
    /// joins the conversation: the model sees what the user ran and its
    /// result in later turns (as the privacy rules allow), and `/good`
    /// keeps it. A refused, declined or cancelled run leaves no trace.
    pub fn run_sql(&mut self, sql: &str, sink: &mut dyn EventSink) -> Result<Answer, AgentError> {
        let (cancel, _turn) = self.turns.begin();
        let policy = self.policy();
        let ran = run_statement(self.source.as_ref(), sql, policy.clone(), &cancel, sink)
            .map_err(AgentError::from);
        let read = policy.read_redacted.read();
        // What ran (or failed in the engine) joins; a statement the gate
        // refused or the user declined does not: typed by the user, it may
        // name what the model must not hear of.
        let kept = match &ran {
            Ok(ran) => Some(Ok(ran)),
            Err(e @ AgentError::QueryFailed(_)) => Some(Err(e.to_string())),
            Err(_) => None,
        };
        if let Some(outcome) = kept {
            self.history.push(HistoryMessage::user(BY_HAND));
            let mut answer = SqlAnswers.record(
                HistoryMessage::assistant(""),
                sql,
                outcome.as_ref().copied().map_err(String::as_str),
            );
            answer.judge(&self.guard, read);
            self.history.push(answer);
        }
        let result = ran.map(|ran| Answer {
            text: String::new(),
            code: Some(sql.to_string()),
            rows: Some(ran.stats.rows),
        });
        finish_turn(sink, result)
    }

    /// Runs one turn for `question`, reporting through `sink`; ends with
    /// the one final event, whatever happened.
    pub fn ask(&mut self, question: &str, sink: &mut dyn EventSink) -> Result<Answer, AgentError> {
        let (cancel, _turn) = self.turns.begin();
        let before = self.history.len();
        let mut looked = Vec::new();
        let result = self.answer(question, &cancel, sink, &mut looked);
        // A question the model gave no answer to is kept, marked as failed.
        match &result {
            Err(e @ AgentError::Llm(_)) if self.history.len() == before => {
                self.push_question(question);
                self.history.push(HistoryMessage::failed(&e.to_string()));
            }
            Err(e @ AgentError::EmptyAnswer) => {
                if let Some(answer) = self.history.last_mut() {
                    answer.error = Some(e.to_string());
                }
            }
            _ => {}
        }
        // The lookups go into the session with the answer they led to.
        if self.history.len() > before {
            if let Some(answer) = self.history.last_mut() {
                answer.lookups = looked;
            }
        }
        finish_turn(sink, result)
    }

    /// Where earlier sessions are, for the history tools (and the audit
    /// log of helper calls).
    pub fn set_archive(&mut self, archive: Archive) {
        self.archive = Some(archive);
    }

    fn answer(
        &mut self,
        question: &str,
        cancel: &CancelToken,
        sink: &mut dyn EventSink,
        looked: &mut Vec<Lookup>,
    ) -> Result<Answer, AgentError> {
        let mut turn = vec![Message::user(question)];
        let mut fixes = 0;
        let mut refits = 0;
        let mut told: Option<String> = None;
        loop {
            let request = self.fit(question, &turn[1..]);
            self.prefix = Some(request.prefix.clone());
            self.rebase_why = None;
            self.asked = Some((request.question.content.clone(), request.added.clone()));
            if request.notice.is_some() && request.notice != told {
                told = request.notice.clone();
                sink.event(Event::Notice(told.clone().unwrap_or_default()))?;
            }
            let reply = match self.request(&request, &turn, cancel, sink)? {
                Ok(reply) => reply,
                Err(e) if e.kind == LlmErrorKind::ContextLength && refits < MAX_REFITS => {
                    refits += 1;
                    let window = self.learn(&e, &request);
                    sink.event(Event::Retrying {
                        why: format!(
                            "{}; the model's window is {} tokens: sending a smaller request",
                            e.message,
                            thousands(window)
                        ),
                        attempt: refits,
                    })?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let found = self.kind.extract(&reply.text, &reply.tool_calls);
            if found.is_none() {
                if let Some(looked) = self.look(&reply, looked, request.lookup_room, sink)? {
                    turn.extend(looked);
                    continue;
                }
            }
            let Some(found) = found else {
                return self.prose(question, reply.text);
            };
            // SQL shown and not run (`--sql-only`) passes the gate first:
            // a statement it refuses is refused, not printed.
            if !self.options.execute && self.kind.mode() == Mode::Sql {
                if let Err(e) =
                    super::runner::gate_only(self.source.as_ref(), &found.code, self.policy())
                {
                    let error = AgentError::from(e);
                    let why = error.to_string();
                    self.keep(
                        question,
                        reply.text,
                        &found.code,
                        Err(&why),
                        crate::safety::Read::Clear,
                    );
                    return Err(error);
                }
            }
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
                    crate::safety::Read::Clear,
                ));
            }
            // The statements it ran decide what of its outcome the model
            // may see later (SPEC §4.3).
            let mut reading = Reading {
                inner: &mut *sink,
                statements: Vec::new(),
            };
            let policy = self.policy();
            let ran = self.kind.run(
                &found.code,
                RunContext {
                    source: self.source.as_ref(),
                    catalog: &self.catalog,
                    policy: policy.clone(),
                    cancel,
                    sink: &mut reading,
                },
            );
            let statements = reading.statements;
            // What the engine said its statements read (SPEC §4.3).
            let read = policy.read_redacted.read();
            match ran {
                Ok(ran) => {
                    let answer = self.keep(question, reply.text, &found.code, Ok(&ran), read);
                    self.note_statements(statements);
                    return Ok(answer);
                }
                Err(RunFailure {
                    fixable: Some(why), ..
                }) if fixes < MAX_FIXES => {
                    fixes += 1;
                    sink.event(Event::Retrying {
                        why: why.clone(),
                        attempt: fixes,
                    })?;
                    turn.extend(self.feedback(&reply, &found, &why, &statements, read));
                }
                Err(failure) => {
                    let error = failure.error;
                    // A cancelled turn leaves no trace: the conversation is as before.
                    if !matches!(error, AgentError::Cancelled | AgentError::Output { .. }) {
                        let why = error.to_string();
                        self.keep(question, reply.text, &found.code, Err(&why), read);
                        self.note_statements(statements);
                    }
                    return Err(error);
                }
            }
        }
    }

    /// The system prompt for a question's `signals`, the examples its
    /// message carries, and what had to give to fit (see [`system_for`]).
    pub fn system_for(&self, signals: &Signals<'_>) -> (String, String, Option<String>) {
        let notes = self.general_notes();
        let examples = self.examples_for(signals.question);
        let view = SchemaView {
            catalog: &self.catalog,
            index: &self.index,
            notes: &notes,
            examples: &examples,
            dialect: self.source.dialect(),
        };
        let today = self
            .options
            .today
            .unwrap_or_else(|| Utc::now().date_naive());
        system_for(
            &view,
            signals,
            today,
            self.options.allow_write,
            self.kind.as_ref(),
            self.model.supports_tools(),
        )
    }

    /// The verified examples sent with questions `question`, privacy
    /// applied.
    pub fn examples_for(&self, question: &str) -> Vec<super::verified::Shown> {
        if question.trim().is_empty() {
            return Vec::new();
        }
        let policy = self.policy();
        let source = self.source.as_ref();
        let reads = |sql: &str| super::runner::reads_redacted(source, sql, &policy);
        self.examples
            .for_question(question, &self.guard, source.dialect(), &reads)
    }

    /// The tools a request offers the model: the answer kind's, then the
    /// helpers.
    pub fn tool_defs(&self) -> Vec<crate::llm::ToolDef> {
        let mut tools = vec![self.kind.tool()];
        tools.extend(self.helpers.iter().map(|h| h.def()));
        tools
    }

    /// A reply in words: the answer itself (an empty one is an error).
    fn prose(&mut self, question: &str, text: String) -> Result<Answer, AgentError> {
        self.push_question(question);
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

    /// Records the question, and how it was sent when that was more than
    /// its words, so later requests repeat it in the same bytes.
    fn push_question(&mut self, question: &str) {
        if let Some((content, added)) = self.asked.take() {
            if content != question {
                self.sent.record(self.history.len(), content, added);
            }
        }
        self.history.push(HistoryMessage::user(question));
    }

    /// Records the question and the answer with its code and outcome.
    fn keep(
        &mut self,
        question: &str,
        text: String,
        code: &str,
        outcome: Result<&Ran, &str>,
        read_redacted: crate::safety::Read,
    ) -> Answer {
        let rows = outcome.as_ref().ok().map(|ran| ran.stats.rows);
        let said = HistoryMessage::assistant(text.clone());
        self.push_question(question);
        let mut answer = self.kind.record(said, code, outcome);
        answer.judge(&self.guard, read_redacted);
        self.history.push(answer);
        Answer {
            text,
            code: Some(code.to_string()),
            rows,
        }
    }

    /// One model request. The outer error is the sink's; the inner one the
    /// model's, for the caller to handle (a context-length error is fitted
    /// again).
    fn request(
        &self,
        request: &Request,
        turn: &[Message],
        cancel: &CancelToken,
        sink: &mut dyn EventSink,
    ) -> Result<Result<Reply, LlmError>, AgentError> {
        let tools = self.tool_defs();
        sink.event(Event::ThinkingStarted)?;
        let mut all = messages(&request.system, &request.history, &turn[1..]);
        all.insert(1 + request.history.len(), request.question.clone());
        let mut reply = Reply {
            text: String::new(),
            tool_calls: Vec::new(),
        };
        let mut sink_error: Option<io::Error> = None;
        let mut used = crate::llm::Usage::default();
        let started = std::time::Instant::now();
        let result = self.model.chat(
            ChatRequest {
                messages: &all,
                tools: &tools,
                stable: request.stable,
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
                    StreamEvent::Usage(u) => {
                        used.add(u);
                        Some(Event::Usage(u))
                    }
                    StreamEvent::Retrying { why, attempt } => {
                        // The reply comes again whole: what came of a
                        // broken one is dropped.
                        reply.text.clear();
                        reply.tool_calls.clear();
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
        if used != crate::llm::Usage::default() {
            tracing::info!("{}", usage_line(self.model.provider(), &used));
            if let Some(archive) = &self.archive {
                archive.log_usage(self.model.provider(), self.model.model(), &used, started);
            }
        }
        Ok(result.map(|()| reply))
    }

    /// The model looked before answering (a helper tool call, or a
    /// ```tables block from a model without tools): runs the lookups,
    /// shows them, and returns the messages that carry the results back.
    /// `None` when the reply is not a lookup.
    fn look(
        &self,
        reply: &Reply,
        looked: &mut Vec<Lookup>,
        room: usize,
        sink: &mut dyn EventSink,
    ) -> Result<Option<Vec<Message>>, AgentError> {
        let policy = self.policy();
        let source = self.source.as_ref();
        let reads = |sql: &str| super::runner::reads_redacted(source, sql, &policy);
        let ctx = ToolContext {
            catalog: &self.catalog,
            history: &self.history,
            guard: &self.guard,
            archive: self.archive.as_ref(),
            reads: &reads,
            room,
        };
        let calls: Vec<&ToolCall> = reply
            .tool_calls
            .iter()
            .filter(|c| self.helpers.iter().any(|h| h.def().name == c.name))
            .collect();
        if !calls.is_empty() {
            let mut said = Message::assistant(reply.text.clone());
            said.tool_calls = reply.tool_calls.clone();
            let mut out = vec![said];
            for call in &reply.tool_calls {
                let result = match self.helpers.iter().find(|h| h.def().name == call.name) {
                    Some(_) if looked.len() >= tools::MAX_CALLS => {
                        "no more lookups in this turn: answer with what you have".to_string()
                    }
                    Some(tool) => {
                        looked.push(Lookup {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                        });
                        sink.event(Event::ToolCall {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                        })?;
                        let arguments = serde_json::from_str(&call.arguments)
                            .unwrap_or(serde_json::Value::Null);
                        let started = std::time::Instant::now();
                        let result = tool.call(&arguments, &ctx);
                        if let Some(archive) = &self.archive {
                            archive.log_call(&call.name, &call.arguments, &result, started);
                        }
                        sink.event(Event::ToolResult {
                            name: call.name.clone(),
                            result: result.clone(),
                        })?;
                        result
                    }
                    None => "not run: look first, then answer".to_string(),
                };
                out.push(Message::tool_result(call.id.clone(), result));
            }
            return Ok(Some(out));
        }
        let Some(names) = tools::text_request(&reply.text) else {
            return Ok(None);
        };
        if looked.len() >= tools::MAX_CALLS {
            return Ok(None);
        }
        let arguments = serde_json::json!({ "names": names }).to_string();
        looked.push(Lookup {
            name: "describe_tables".into(),
            arguments: arguments.clone(),
        });
        sink.event(Event::ToolCall {
            name: "describe_tables".into(),
            arguments,
        })?;
        let result = tools::describe(&names, &self.catalog, room);
        sink.event(Event::ToolResult {
            name: "describe_tables".into(),
            result: result.clone(),
        })?;
        Ok(Some(vec![
            Message::assistant(reply.text.clone()),
            Message::user(format!("{result}\nNow answer the question.")),
        ]))
    }

    /// Keeps the statements a program ran with its answer (the last
    /// message): what they read decides what of its output the model sees.
    fn note_statements(&mut self, statements: Vec<String>) {
        if let Some(last) = self.history.last_mut().filter(|m| m.lua.is_some()) {
            last.statements = statements;
        }
    }

    /// Keeps with each answer what the current source's rules withhold of
    /// it (SPEC §4.3: a turn keeps the rules it was made under, and later
    /// rules add to them): what its statements read is asked of the engine
    /// again, nothing runs. An answer made here was judged when it ran; one
    /// restored from a session is judged now; `again`: every answer not yet
    /// withheld is judged by these rules (they are new).
    fn judge_history(&mut self, again: bool) {
        let policy = self.policy();
        let source = self.source.as_ref();
        for m in self
            .history
            .iter_mut()
            .filter(|m| m.role == crate::llm::Role::Assistant && m.withheld.is_none())
            .filter(|m| again || !m.judged)
        {
            let read = self.guard.redacts_any()
                && m.statements_run()
                    .iter()
                    .any(|sql| super::runner::reads_redacted(source, sql, &policy));
            m.judge(&self.guard, read);
        }
    }

    /// Tells the model what went wrong, in the form its answer used: hidden
    /// names scrubbed (an engine's "did you mean" may name one), values
    /// that may not leave masked (SPEC §4.3).
    fn feedback(
        &self,
        reply: &Reply,
        found: &Found,
        why: &str,
        statements: &[String],
        read_redacted: crate::safety::Read,
    ) -> Vec<Message> {
        let mut codes = vec![found.code.as_str()];
        codes.extend(statements.iter().map(String::as_str));
        let program = self.kind.mode() == Mode::Lua;
        let withheld = self.guard.withholds(read_redacted);
        let fix = self
            .kind
            .feedback(&self.guard.error(&codes, program, why, withheld));
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

/// What a request cost, for `-v`: its input tokens, those the provider
/// served from its cache (and wrote to it), its output tokens.
pub fn usage_line(provider: &str, u: &crate::llm::Usage) -> String {
    let mut cache = Vec::new();
    if u.cache_read_tokens > 0 {
        cache.push(format!(
            "{} read from the cache",
            thousands(u.cache_read_tokens as usize)
        ));
    }
    if u.cache_write_tokens > 0 {
        cache.push(format!(
            "{} written to it",
            thousands(u.cache_write_tokens as usize)
        ));
    }
    let cache = if cache.is_empty() {
        String::new()
    } else {
        format!(" ({})", cache.join(", "))
    };
    format!(
        "{provider} usage: {} input tokens{cache}, {} output tokens",
        thousands(u.input_tokens as usize),
        thousands(u.output_tokens as usize)
    )
}

/// Forwards a run's events and notes the statements it started.
struct Reading<'a> {
    inner: &'a mut dyn EventSink,
    statements: Vec<String>,
}

impl EventSink for Reading<'_> {
    fn event(&mut self, event: Event) -> std::io::Result<()> {
        if let Event::QueryStarted { sql } = &event {
            self.statements.push(sql.clone());
        }
        self.inner.event(event)
    }

    fn writes_delimited(&self) -> bool {
        self.inner.writes_delimited()
    }
}
