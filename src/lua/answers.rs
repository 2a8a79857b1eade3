//! Lua answers (`--mode lua`, `/mode lua`): the answer kind whose code is a
//! Lua program. The model gets the same schema context plus the API and the
//! limits, answers with a `run_lua` tool call or a ```lua block, the program
//! runs in the sandbox, and a failure goes back to the model like a failing
//! statement. The turn loop is the thread's; this only plugs into it.

use super::audit::AuditInfo;
use super::limits::LuaConfig;
use super::sandbox::{run, LuaFailure, Program, RunEnv};
use crate::agent::extract::{fenced_blocks, tool_argument, Found};
use crate::agent::kind::{text_tool, AnswerKind, Mode, RunContext, RunFailure};
use crate::agent::prompt::{access_rule, idioms, PromptFacts};
use crate::agent::runner::Ran;
use crate::agent::{AgentError, HistoryMessage};
use crate::llm::{ToolCall, ToolDef};
use crate::source::QueryStats;

/// The tool a model with tool support calls to answer with a program.
pub const RUN_LUA: &str = "run_lua";

/// What the model is told about the sandbox's API (also in docs/lua.md).
pub const API: &str = "The program runs in a sandbox with Lua's base, string, table, math, utf8 and coroutine libraries and os.time/os.clock/os.date (no io, require or debug). The `aiq` table: \
aiq.query(sql [, params]) runs one statement and returns a list of rows, each a table keyed by column name (NULL is nil; dates are ISO strings; rows.columns lists the column names in order); placeholders ? or $1 take values from a list, :name from a table of names; \
aiq.tables() returns the table names; aiq.schema(name) returns {name, columns = {{name, type, nullable, primary_key}, …}, foreign_keys, row_estimate}; \
aiq.table(rows [, columns]) shows rows as the answer's result table (call it once, with the final rows; rows may be tables keyed by name or lists in column order); \
print(...) and aiq.print(value) add text to the answer (tables are pretty-printed); aiq.json_encode(value), aiq.json_decode(text); aiq.null is an explicit NULL; \
aiq.read_file(path) reads a file in the working directory; aiq.log(level, message) writes a trace line. \
A failed statement raises an error (pcall can catch it).";

/// What makes a conversation's Lua answers: its `[lua]` limits, and the
/// audit log of the conversation as it stands when each kind is made.
pub fn answer_kinds(limits: LuaConfig) -> crate::agent::kind::KindMaker {
    std::sync::Arc::new(move |mode, place| match mode {
        Mode::Lua => Some(Box::new(LuaAnswers::new(
            limits.clone(),
            Some(AuditInfo {
                home: place.home.clone(),
                session: place.session.clone(),
                source: place.source.clone(),
                origin: super::audit::Origin::Model,
                file: None,
            }),
        )) as Box<dyn AnswerKind>),
        Mode::Sql => None,
    })
}

/// Lua programs as answers, with the sandbox's limits and where runs are
/// logged.
pub struct LuaAnswers {
    limits: LuaConfig,
    audit: Option<AuditInfo>,
}

impl LuaAnswers {
    pub fn new(limits: LuaConfig, audit: Option<AuditInfo>) -> Self {
        LuaAnswers { limits, audit }
    }
}

impl AnswerKind for LuaAnswers {
    fn mode(&self) -> Mode {
        Mode::Lua
    }

    fn task(&self) -> &'static str {
        "writing a short Lua 5.4 program that aiq runs in a sandbox for the user"
    }

    fn rules(&self, f: &PromptFacts<'_>) -> Vec<String> {
        let l = &self.limits;
        vec![
            "Answer with one Lua program in a ```lua fenced block (or call the run_lua tool).".into(),
            API.into(),
            "Let SQL filter, join and aggregate; use Lua to run several queries, loop over tables or rows, and combine or compare their results. Show the final answer with aiq.table (and print for a sentence or two).".into(),
            access_rule(f.allow_write).into(),
            "Use only the tables and columns listed below; quote identifiers that need it.".into(),
            format!("SQL inside the program: {}", idioms(f.dialect)),
            format!(
                "Limits per run: {} s, {} MB of memory, {} rows per query; a program that needs more should aggregate in SQL.",
                l.timeout_secs, l.memory_mb, l.max_rows
            ),
        ]
    }

    fn tool(&self) -> ToolDef {
        text_tool(
            RUN_LUA,
            "Run a Lua program in aiq's sandbox against the user's database and show its output and result table to the user.",
            ("code", "the Lua 5.4 program"),
        )
    }

    fn extract(&self, text: &str, calls: &[ToolCall]) -> Option<Found> {
        find_lua(text, calls)
    }

    fn run(&self, code: &str, ctx: RunContext<'_>) -> Result<Ran, RunFailure> {
        let workdir = std::env::current_dir().unwrap_or_else(|_| ".".into());
        let report = run(
            &Program {
                code,
                name: "program",
            },
            RunEnv {
                source: ctx.source,
                catalog: ctx.catalog,
                policy: ctx.policy,
                cancel: ctx.cancel,
                sink: ctx.sink,
                limits: &self.limits,
                workdir: &workdir,
                audit: self.audit.as_ref(),
                last_in_process: false,
            },
        )
        .map_err(failure)?;
        Ok(Ran {
            stats: QueryStats {
                rows: report.rows,
                elapsed: report.elapsed,
                changed: report.changed,
            },
            preview: report.preview,
            more: false,
            output: Some(report.output),
        })
    }

    fn feedback(&self, why: &str) -> String {
        format!("That Lua program failed: {why}\nReply with a corrected program.")
    }

    fn record(
        &self,
        answer: HistoryMessage,
        code: &str,
        outcome: Result<&Ran, &str>,
    ) -> HistoryMessage {
        answer.with_lua(
            code,
            outcome
                .map(|ran| {
                    (
                        ran.stats.rows,
                        ran.preview.clone(),
                        ran.output.clone().unwrap_or_default(),
                    )
                })
                .map_err(str::to_string),
        )
    }
}

/// How a failed run ends the turn; errors and limits go back to the model.
pub fn failure(f: LuaFailure) -> RunFailure {
    let message = f.to_string();
    match f {
        LuaFailure::Error(m) => RunFailure {
            fixable: Some(m),
            error: AgentError::QueryFailed(message),
        },
        LuaFailure::Limit(m) => RunFailure {
            fixable: Some(m.clone()),
            error: AgentError::QueryFailed(m),
        },
        LuaFailure::Refused { message, fixable } => RunFailure {
            fixable: fixable.then(|| message.clone()),
            error: AgentError::Refused(message),
        },
        LuaFailure::Cancelled => RunFailure {
            fixable: None,
            error: AgentError::Cancelled,
        },
        LuaFailure::Output(e) => RunFailure {
            fixable: None,
            error: e.into(),
        },
    }
}

/// The program in an answer: a `run_lua` tool call, a ```lua block, or an
/// unlabelled block that uses the `aiq` API.
pub fn find_lua(text: &str, calls: &[ToolCall]) -> Option<Found> {
    if let Some((code, id)) = tool_argument(calls, RUN_LUA, "code") {
        return Some(Found {
            code: code.trim().to_string(),
            tool_call_id: Some(id),
        });
    }
    let blocks = fenced_blocks(text);
    blocks
        .iter()
        .find(|(lang, _)| lang.eq_ignore_ascii_case("lua"))
        .or_else(|| {
            blocks
                .iter()
                .find(|(lang, body)| lang.is_empty() && body.contains("aiq."))
        })
        .map(|(_, body)| body.trim().to_string())
        .filter(|code| !code.is_empty())
        .map(|code| Found {
            code,
            tool_call_id: None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_come_from_the_tool_or_a_lua_block() {
        let calls = [ToolCall {
            id: "c1".into(),
            name: RUN_LUA.into(),
            arguments: r#"{"code": "print(1)\n"}"#.into(),
        }];
        assert_eq!(
            find_lua("ignored", &calls),
            Some(Found {
                code: "print(1)".into(),
                tool_call_id: Some("c1".into())
            })
        );
        let t = "Here:\n```sql\nSELECT 1\n```\n```lua\nlocal r = aiq.query('SELECT 1')\n```";
        assert_eq!(
            find_lua(t, &[]).unwrap().code,
            "local r = aiq.query('SELECT 1')"
        );
        assert_eq!(
            find_lua("```\naiq.table({})\n```", &[]).unwrap().code,
            "aiq.table({})"
        );
        assert_eq!(find_lua("```sql\nSELECT 1\n```", &[]), None);
        assert_eq!(find_lua("There are 4 tables.", &[]), None);
    }
}
