//! What the model writes: the *answer kind*. A turn ends with one answer of
//! the conversation's kind — SQL here, a Lua program in the kind the `lua`
//! module makes (handed in as a [`KindMaker`]): a kind, not a second loop.
//! A kind says how the model is told to answer (its tool and
//! its rules in the system prompt), how the answer is found in a reply, how
//! it runs, how a failure goes back to the model, and how a run is kept in
//! the history.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use super::extract::{find_sql, Found, RUN_SQL};
use super::outcome::AgentError;
use super::prompt::{access_rule, idioms, PromptFacts};
use super::runner::{run_statement, Ran, StatementError};
use super::{EventSink, HistoryMessage};
use crate::cancel::CancelToken;
use crate::llm::{ToolCall, ToolDef};
use crate::safety::Policy;
use crate::schema::Catalog;
use crate::source::DataSource;

/// What the model writes (`--mode`, `/mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One SQL statement per answer.
    Sql,
    /// A Lua program run in the sandbox (SPEC §8).
    Lua,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sql => "sql",
            Mode::Lua => "lua",
        }
    }

    /// How the system prompt names the code ("needs no SQL").
    pub fn code_name(self) -> &'static str {
        match self {
            Mode::Sql => "SQL",
            Mode::Lua => "Lua",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "sql" => Ok(Mode::Sql),
            "lua" => Ok(Mode::Lua),
            _ => Err(format!("unknown mode '{s}' (choose sql or lua)")),
        }
    }
}

/// What a kind's code may use while it runs.
pub struct RunContext<'a> {
    pub source: &'a dyn DataSource,
    pub catalog: &'a Catalog,
    pub policy: Policy,
    pub cancel: &'a CancelToken,
    pub sink: &'a mut dyn EventSink,
}

/// Why running an answer failed.
#[derive(Debug)]
pub struct RunFailure {
    /// What the model is told when it may fix it (`None`: it may not).
    pub fixable: Option<String>,
    /// How the turn ends when it is not (or no longer) fixed.
    pub error: AgentError,
}

impl From<StatementError> for RunFailure {
    fn from(e: StatementError) -> Self {
        RunFailure {
            fixable: e.fixable().map(str::to_string),
            error: e.into(),
        }
    }
}

/// Where a conversation stands now, for an answer kind that logs what it
/// runs: `$AIQ_HOME`, the session file, the source as the audit log names
/// it.
#[derive(Debug, Clone)]
pub struct KindPlace {
    pub home: PathBuf,
    pub session: Option<PathBuf>,
    pub source: String,
}

/// Makes the answer kind of a mode other than SQL. The core does not know
/// the other kinds: the composition root hands a conversation its maker
/// (Lua's lives in `lua`, which builds on the core).
pub type KindMaker = Arc<dyn Fn(Mode, &KindPlace) -> Option<Box<dyn AnswerKind>> + Send + Sync>;

/// One kind of answer.
pub trait AnswerKind: Send {
    fn mode(&self) -> Mode;
    /// What the model does, for the prompt's first line ("… by writing SQL
    /// that aiq runs for the user").
    fn task(&self) -> &'static str;
    /// The kind's rules in the system prompt (one line each, unprefixed).
    fn rules(&self, facts: &PromptFacts<'_>) -> Vec<String>;
    /// The tool a model with tool support calls to answer.
    fn tool(&self) -> ToolDef;
    /// The code in a reply (a tool call or a fenced block), if any.
    fn extract(&self, text: &str, calls: &[ToolCall]) -> Option<Found>;
    /// Runs the code.
    fn run(&self, code: &str, ctx: RunContext<'_>) -> Result<Ran, RunFailure>;
    /// Tells the model its code failed and why.
    fn feedback(&self, why: &str) -> String;
    /// Keeps a run (or its failure) on the assistant's history message.
    fn record(
        &self,
        answer: HistoryMessage,
        code: &str,
        outcome: Result<&Ran, &str>,
    ) -> HistoryMessage;
}

/// A tool that takes one text argument: `(name, what it holds)`.
pub fn text_tool(name: &str, description: &str, argument: (&str, &str)) -> ToolDef {
    let (key, what) = argument;
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {key: {"type": "string", "description": what}},
            "required": [key],
        }),
    }
}

/// SQL answers: one statement, through the statement runner.
pub struct SqlAnswers;

impl AnswerKind for SqlAnswers {
    fn mode(&self) -> Mode {
        Mode::Sql
    }

    fn task(&self) -> &'static str {
        "writing SQL that aiq runs for the user"
    }

    fn rules(&self, f: &PromptFacts<'_>) -> Vec<String> {
        vec![
            "Answer with exactly one SQL statement in a ```sql fenced block (or call the run_sql tool). One statement only.".into(),
            access_rule(f.allow_write).into(),
            "Use only the tables and columns listed below; quote identifiers that need it.".into(),
            idioms(f.dialect).into(),
            "Name computed columns with clear aliases. Add ORDER BY when order matters.".into(),
        ]
    }

    fn tool(&self) -> ToolDef {
        text_tool(
            RUN_SQL,
            "Run one SQL statement against the user's database and show the result to the user.",
            ("sql", "exactly one SQL statement"),
        )
    }

    fn extract(&self, text: &str, calls: &[ToolCall]) -> Option<Found> {
        find_sql(text, calls)
    }

    fn run(&self, code: &str, ctx: RunContext<'_>) -> Result<Ran, RunFailure> {
        run_statement(ctx.source, code, ctx.policy, ctx.cancel, ctx.sink).map_err(RunFailure::from)
    }

    fn feedback(&self, why: &str) -> String {
        format!("That SQL failed: {why}\nReply with a corrected statement.")
    }

    fn record(
        &self,
        answer: HistoryMessage,
        code: &str,
        outcome: Result<&Ran, &str>,
    ) -> HistoryMessage {
        let mut answer = answer.with_sql(
            code,
            outcome
                .map(|ran| (ran.stats.rows, ran.preview.clone()))
                .map_err(str::to_string),
        );
        answer.more_rows = outcome.is_ok_and(|ran| ran.more);
        answer
    }
}
