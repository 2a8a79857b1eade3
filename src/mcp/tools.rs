//! The tools an MCP client calls — `list_sources`, `describe_schema`,
//! `run_query`, `ask` — as plain synchronous handlers over the served
//! sources: arguments in, a [`Reply`] out. Statements go through the one
//! statement runner (gate, confirmation of writes, cancel, caps), questions
//! through the agent's own turn; nothing here knows the protocol or the
//! transport, so every handler is tested without one.

use std::sync::Arc;

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::result::{Caps, Consent, QueryResult, ResultSink};
use super::served::{Entry, Served};
use crate::agent::fit::DEFAULT_SCHEMA_BUDGET;
use crate::agent::rank::schema_context;
use crate::agent::runner::{run_statement, StatementError};
use crate::agent::{AgentError, Thread, ThreadOptions};
use crate::cancel::CancelToken;
use crate::llm::{self, ChatModel};

/// `list_sources` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `describe_schema`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeArgs {
    /// The source to describe (see list_sources); may be left out when the server serves one source or has a default.
    pub source: Option<String>,
    /// The question you want to answer: the tables that matter for it come first when the schema is large.
    pub question: Option<String>,
}

/// `run_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunQueryArgs {
    /// The source to run on (see list_sources); may be left out when the server serves one source or has a default.
    pub source: Option<String>,
    /// Exactly one SQL statement in the source's dialect (describe_schema names it).
    pub sql: String,
    /// Rows to return at most (the server's own limit caps it).
    #[schemars(range(min = 0))]
    pub max_rows: Option<usize>,
}

/// `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The source to ask about (see list_sources); may be left out when the server serves one source or has a default.
    pub source: Option<String>,
    /// A question in plain language.
    pub question: String,
}

/// `list_sources`' structured result.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourceList {
    pub sources: Vec<SourceInfo>,
    /// The source used when a call names none.
    pub default: Option<String>,
}

/// One served source.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourceInfo {
    /// The name to pass as `source`.
    pub name: String,
    /// `sqlite`, `duckdb`, `postgres` or `mysql`.
    pub engine: Option<String>,
    /// A path, or a URL without password.
    pub location: String,
    pub default: bool,
    /// False when the source cannot be used; `problem` says why.
    pub available: bool,
    pub problem: Option<String>,
    /// Tables and views, once the source has been opened.
    pub tables: Option<usize>,
}

/// `ask`'s structured result.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AskResult {
    /// The model's answer in words (it may include the SQL it wrote).
    pub answer: String,
    /// The SQL that ran, if the answer needed one.
    pub sql: Option<String>,
    /// Its result, if it ran.
    pub result: Option<QueryResult>,
}

/// What a tool call gives back, and what the audit log records of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub structured: Option<Json>,
    pub is_error: bool,
    /// The source the call used.
    pub source: Option<String>,
    /// The statement it ran (or tried).
    pub sql: Option<String>,
    pub rows: Option<u64>,
    /// A write that waits for the client's confirmation in another round
    /// (protocol 2026-07-28): its SQL.
    pub ask_next_round: Option<String>,
}

impl Reply {
    /// A tool error: the message is what the client shows.
    pub fn error(message: impl Into<String>) -> Self {
        Reply {
            text: message.into(),
            is_error: true,
            ..Reply::default()
        }
    }

    fn ok(text: String, structured: Option<Json>) -> Self {
        Reply {
            text,
            structured,
            ..Reply::default()
        }
    }
}

/// The tool handlers over the served sources.
pub struct Tools {
    pub served: Served,
    /// The server's caps on one result.
    pub caps: Caps,
    /// `--allow-write`.
    pub allow_write: bool,
    /// The model `ask` uses; `None` hides `ask`.
    pub model: Option<ModelSource>,
}

/// Connects the model `ask` talks to (a fresh connection per call).
pub struct ModelSource {
    /// Provider and model name, for people.
    pub label: String,
    pub connect: Box<dyn Fn() -> Result<Box<dyn ChatModel>, String> + Send + Sync>,
}

impl ModelSource {
    /// The model the settings name.
    pub fn from_settings(settings: llm::settings::Settings) -> Self {
        ModelSource {
            label: format!("{} {}", settings.provider.name(), settings.model),
            connect: Box::new(move || llm::connect(&settings).map_err(|e| e.message)),
        }
    }
}

/// The read-only hint the gate gives on a command line, and what an MCP
/// client is told instead.
const CLI_WRITE_HINT: &str = "(run with --allow-write to allow it, plus --yes in scripts)";
const MCP_WRITE_HINT: &str = "(this MCP server is read-only; whoever runs it can start it with `aiq mcp --allow-write`, and then each write still needs your confirmation)";

impl Tools {
    /// The tools a client sees: `ask` only when a model is configured.
    pub fn list(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool::<NoArgs>(
                "list_sources",
                "List the data sources this aiq server serves: name, engine (sqlite, duckdb, postgres, mysql), location, and which one is the default.",
                ToolAnnotations::new().read_only(true),
            )
            .with_raw_output_schema(schema_for_output::<SourceList>()),
            tool::<DescribeArgs>(
                "describe_schema",
                "Describe a source's schema: tables and views with columns, types, keys, foreign keys, row estimates and sample values, and the SQL dialect to write. For a large schema, give `question`: the tables that matter for it come first, within a size budget, and the rest are named.",
                ToolAnnotations::new().read_only(true),
            ),
            tool::<RunQueryArgs>(
                "run_query",
                &format!(
                    "Run exactly one SQL statement on a source and return its rows as a table and as typed JSON. {} Results are capped (rows and bytes; `truncated` says when rows were left out) and a statement running too long is stopped.",
                    if self.allow_write {
                        "Every statement is checked by aiq's parser gate; statements that change data need the user's confirmation (asked through the client) and files outside the source, extensions and settings are never reachable."
                    } else {
                        "Read-only: aiq's parser gate refuses anything that could change data or reach outside the source (files, extensions, settings), and the connection itself is read-only."
                    }
                ),
                ToolAnnotations::new()
                    .read_only(!self.allow_write)
                    .destructive(self.allow_write)
                    .open_world(false),
            )
            .with_raw_output_schema(schema_for_output::<QueryResult>()),
        ];
        if self.model.is_some() {
            tools.push(
                tool::<AskArgs>(
                    "ask",
                    "Ask aiq's own assistant a question in plain language: it writes the SQL for the source, runs it through the same checks as run_query, fixes its own mistakes, and answers with the SQL and the rows.",
                    ToolAnnotations::new()
                        .read_only(!self.allow_write)
                        .open_world(true),
                )
                .with_raw_output_schema(schema_for_output::<AskResult>()),
            );
        }
        tools
    }

    /// Whether `name` is a tool this server has.
    pub fn has(&self, name: &str) -> bool {
        self.list().iter().any(|t| t.name == name)
    }

    /// Runs one tool call. `cancel` stops it (and its statement); `consent`
    /// answers whether a write may run.
    pub fn call(
        &self,
        name: &str,
        args: JsonObject,
        cancel: &CancelToken,
        consent: &mut dyn Consent,
    ) -> Reply {
        let args = Json::Object(args);
        let result = match name {
            "list_sources" => parse::<NoArgs>(name, args).map(|_| self.list_sources()),
            "describe_schema" => parse(name, args).map(|a| self.describe_schema(a)),
            "run_query" => parse(name, args).map(|a| self.run_query(a, cancel, consent)),
            "ask" if self.model.is_some() => {
                parse(name, args).map(|a| self.ask(a, cancel, consent))
            }
            other => Err(format!("there is no tool named '{other}'")),
        };
        result.unwrap_or_else(Reply::error)
    }

    /// `list_sources`.
    pub fn list_sources(&self) -> Reply {
        let default = self.served.default_name().map(str::to_string);
        let sources: Vec<SourceInfo> = self
            .served
            .entries()
            .iter()
            .map(|e| SourceInfo {
                name: e.name.clone(),
                engine: e.engine.map(|k| k.as_str().to_string()),
                location: e.location.clone(),
                default: default.as_deref() == Some(e.name.as_str()),
                available: e.problem().is_none(),
                problem: e.problem().map(str::to_string),
                tables: e.tables_if_open(),
            })
            .collect();
        let mut text = String::new();
        for s in &sources {
            let engine = s.engine.as_deref().unwrap_or("unknown engine");
            let mark = if s.default { " (default)" } else { "" };
            text.push_str(&format!("{}{mark}: {engine}, {}", s.name, s.location));
            if let Some(why) = &s.problem {
                text.push_str(&format!(" — cannot be used: {why}"));
            }
            text.push('\n');
        }
        if sources.is_empty() {
            text.push_str("no sources are served\n");
        }
        let list = SourceList { sources, default };
        Reply::ok(text, serde_json::to_value(list).ok())
    }

    /// `describe_schema`: the ranked, budgeted schema text aiq's own model gets.
    pub fn describe_schema(&self, args: DescribeArgs) -> Reply {
        let entry = match self.served.pick(args.source.as_deref()) {
            Ok(e) => e,
            Err(why) => return Reply::error(why),
        };
        let mut reply = match self.schema_text(entry, args.question.as_deref()) {
            Ok(text) => Reply::ok(text, None),
            Err(why) => Reply::error(why),
        };
        reply.source = Some(entry.name.clone());
        reply
    }

    /// The schema of `entry` as its model would get it for `question`, under
    /// a line naming the engine, the dialect and the write policy.
    pub fn schema_text(&self, entry: &Entry, question: Option<&str>) -> Result<String, String> {
        let open = entry.get()?;
        let dialect = crate::source::DataSource::dialect(&open.source);
        let policy = if self.allow_write {
            "statements that change data need the user's confirmation"
        } else {
            "read-only"
        };
        let schema = schema_context(
            &open.described,
            question.unwrap_or(""),
            &[],
            &[],
            DEFAULT_SCHEMA_BUDGET,
        );
        let mut text = format!(
            "-- source {}: {}; write SQL in the {} dialect; {policy}\n",
            entry.name,
            open.catalog.engine,
            dialect.name()
        );
        let notes = open.notes.general(&open.catalog);
        if !notes.is_empty() {
            text.push_str("-- notes about this data from the user (follow them):\n");
            text.push_str(&notes);
        }
        // The verified examples most like the question (SPEC §14).
        let policy = open.guard.policy(false);
        let reads = |sql: &str| crate::agent::runner::reads_redacted(&open.source, sql, &policy);
        let shown = question
            .map(|q| open.examples.for_question(q, &open.guard, dialect, &reads))
            .unwrap_or_default();
        let (examples, _) = crate::agent::verified::block(&shown, 6_000);
        if !examples.is_empty() {
            text.push_str("-- ");
            text.push_str(&examples);
        }
        if schema.trim().is_empty() {
            text.push_str("-- no tables or views\n");
        }
        text.push_str(&schema);
        Ok(text)
    }

    /// `run_query`: one statement through the statement runner.
    pub fn run_query(
        &self,
        args: RunQueryArgs,
        cancel: &CancelToken,
        consent: &mut dyn Consent,
    ) -> Reply {
        let entry = match self.served.pick(args.source.as_deref()) {
            Ok(e) => e,
            Err(why) => return Reply::error(why),
        };
        let mut reply = self.run_on(entry, &args, cancel, consent);
        reply.source = Some(entry.name.clone());
        reply.sql = Some(args.sql);
        reply
    }

    fn run_on(
        &self,
        entry: &Entry,
        args: &RunQueryArgs,
        cancel: &CancelToken,
        consent: &mut dyn Consent,
    ) -> Reply {
        let open = match entry.get() {
            Ok(o) => o,
            Err(why) => return Reply::error(why),
        };
        let caps = Caps {
            rows: args
                .max_rows
                .map_or(self.caps.rows, |n| n.min(self.caps.rows)),
            bytes: self.caps.bytes,
        };
        let mut sink = ResultSink::new(caps, consent);
        let policy = open.guard.policy(self.allow_write);
        let read = policy.read_redacted.clone();
        match run_statement(&open.source, &args.sql, policy, cancel, &mut sink) {
            Ok(_) => {
                if let Some(why) = open.guard.withholds(read.read()) {
                    sink.withhold(why);
                }
                let mut reply = Reply::ok(result_text(&sink), None);
                reply.structured = serde_json::to_value(sink.structured()).ok();
                reply.rows = sink.rows_returned();
                reply
            }
            Err(StatementError::Declined(_)) if sink.ask_next_round.is_some() => Reply {
                ask_next_round: sink.ask_next_round.take(),
                ..Reply::default()
            },
            Err(StatementError::Declined(why)) => Reply::error(sink.declined.take().unwrap_or(why)),
            // An engine may quote a value the client may not see (SPEC §4.3).
            Err(e @ StatementError::Engine(_)) => Reply::error(open.guard.error(
                &[&args.sql],
                false,
                &statement_message(e),
                open.guard.withholds(read.read()),
            )),
            Err(e) => Reply::error(statement_message(e)),
        }
    }

    /// `ask`: one turn of aiq's own agent on a fresh conversation.
    pub fn ask(&self, args: AskArgs, cancel: &CancelToken, consent: &mut dyn Consent) -> Reply {
        let entry = match self.served.pick(args.source.as_deref()) {
            Ok(e) => e,
            Err(why) => return Reply::error(why),
        };
        let mut reply = self.ask_on(entry, &args.question, cancel, consent);
        reply.source = Some(entry.name.clone());
        reply
    }

    fn ask_on(
        &self,
        entry: &Entry,
        question: &str,
        cancel: &CancelToken,
        consent: &mut dyn Consent,
    ) -> Reply {
        let Some(model) = &self.model else {
            return Reply::error(
                "no language model is configured for `ask`; use describe_schema and run_query",
            );
        };
        let open = match entry.get() {
            Ok(o) => o,
            Err(why) => return Reply::error(why),
        };
        let model = match (model.connect)() {
            Ok(m) => m,
            Err(why) => return Reply::error(why),
        };
        let mut thread = Thread::new(
            model,
            open.source.handle(),
            (*Arc::clone(&open.catalog)).clone(),
            ThreadOptions {
                history_limit: 0,
                allow_write: self.allow_write,
                execute: true,
                today: None,
            },
        );
        thread.set_view(open.guard.clone(), open.notes.clone());
        thread.set_examples(open.examples.clone());
        let canceller = thread.canceller();
        let _hook = cancel.on_cancel(move || canceller.cancel());
        let mut sink = ResultSink::new(self.caps, consent);
        let result = thread.ask(question, &mut sink);
        // What the answer's statements read, as the engine said (SPEC §4.3);
        // a turn that ran nothing has no values to withhold.
        let withheld = thread
            .history()
            .last()
            .filter(|m| m.sql.is_some())
            .and_then(|m| m.withheld.clone())
            .or_else(|| open.guard.withholds(false).map(String::from));
        if let Some(why) = &withheld {
            sink.withhold(why);
        }
        let mut reply = match result {
            Ok(answer) => {
                let ran = sink.finished.is_some();
                let mut text = answer.text.trim().to_string();
                if ran {
                    text.push_str("\n\n");
                    text.push_str(&result_text(&sink));
                }
                let structured = AskResult {
                    answer: answer.text.clone(),
                    sql: sink.sql.clone(),
                    result: ran.then(|| sink.structured()),
                };
                let mut r = Reply::ok(text, serde_json::to_value(structured).ok());
                r.rows = sink.rows_returned();
                r
            }
            Err(AgentError::Refused(_)) if sink.ask_next_round.is_some() => Reply {
                ask_next_round: sink.ask_next_round.take(),
                ..Reply::default()
            },
            Err(AgentError::Refused(why)) if sink.declined.is_some() => {
                Reply::error(sink.declined.take().unwrap_or(why))
            }
            // The fixes were masked for the model; so is the last error.
            Err(e @ AgentError::QueryFailed(_)) => {
                let codes: Vec<&str> = sink
                    .sql
                    .iter()
                    .chain(&sink.proposed)
                    .map(String::as_str)
                    .collect();
                Reply::error(open.guard.error(
                    &codes,
                    false,
                    &agent_message(&e),
                    withheld.as_deref(),
                ))
            }
            Err(e) => Reply::error(agent_message(&e)),
        };
        reply.sql = sink.sql.or(sink.proposed);
        reply
    }
}

/// A result's table text, with the notes (retries, renamed columns) after it.
fn result_text(sink: &ResultSink<'_>) -> String {
    let mut text = sink.table_text();
    for note in &sink.notes {
        text.push_str(note);
        text.push('\n');
    }
    text
}

/// Why a statement did not run, as an MCP client is told.
pub fn statement_message(e: StatementError) -> String {
    agent_message(&AgentError::from(e))
}

fn agent_message(e: &AgentError) -> String {
    e.to_string().replace(CLI_WRITE_HINT, MCP_WRITE_HINT)
}

/// A tool with `Args`' input schema.
fn tool<Args: JsonSchema + 'static>(
    name: &'static str,
    description: &str,
    annotations: ToolAnnotations,
) -> Tool {
    let schema = schema_for_input::<Args>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_empty_input());
    Tool::new(name, description.to_string(), schema).with_annotations(annotations)
}

/// The arguments of `tool`, or what is wrong with them.
fn parse<Args: serde::de::DeserializeOwned>(tool: &str, args: Json) -> Result<Args, String> {
    serde_json::from_value(args).map_err(|e| format!("invalid arguments for {tool}: {e}"))
}
