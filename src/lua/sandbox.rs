//! One sandboxed run: a fresh Lua 5.4 state with only the safe libraries
//! (the prelude removes and wraps the rest), the host functions of
//! [`super::api`], and the limits — wall clock, instruction count, memory,
//! output, rows. A limit or a cancel sets the run's [`Stop`] and cancels the
//! run's own token, so the statement in flight stops too; the instruction
//! hook and the prelude's `pcall`/`xpcall`/`coroutine` wrappers raise it
//! again wherever the program is, so no Lua code can swallow it. Every run
//! ends in one audit log line.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::prelude::LuaChunkMode as ChunkMode;
use mlua::{Lua, LuaOptions, StdLib};

use super::api::{self, Host};
use super::audit::{self, AuditInfo, Status};
use super::limits::LuaConfig;
use super::limits::{limit_hook, Stop, Stopper, Watchdog};
use crate::agent::Event;
use crate::agent::EventSink;
use crate::cancel::CancelToken;
use crate::safety::Policy;
use crate::schema::Catalog;
use crate::source::DataSource;

/// The prelude every state runs before the program.
const PRELUDE: &str = include_str!("prelude.lua");

/// A program to run.
pub struct Program<'a> {
    pub code: &'a str,
    /// How errors name it: `program:3: …`, `report.lua:3: …`.
    pub name: &'a str,
}

/// What a run may use.
pub struct RunEnv<'a> {
    pub source: &'a dyn DataSource,
    pub catalog: &'a Catalog,
    pub policy: Policy,
    /// The turn's token: Ctrl-C stops the program and its statement.
    pub cancel: &'a CancelToken,
    pub sink: &'a mut dyn EventSink,
    pub limits: &'a LuaConfig,
    /// `aiq.read_file`/`aiq.write_file` stay inside this folder.
    pub workdir: &'a Path,
    /// Where the run is logged; `None` logs nothing (benchmarks).
    pub audit: Option<&'a AuditInfo>,
    /// The process ends after this run (`--lua FILE`): the state is left
    /// for the system to reclaim at exit rather than taken apart object by
    /// object, which for 100,000 rows is tens of milliseconds. Nothing
    /// observable runs when a state closes — the sandbox allows no `__gc`
    /// finalizers — so this changes only the time.
    pub last_in_process: bool,
}

/// A run that ended well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Rows of the last table shown with `aiq.table` (0 when none).
    pub rows: u64,
    /// That table's first rows as CSV; empty when the program showed none.
    pub preview: String,
    /// What the program printed, bounded (the first 2 KB).
    pub output: String,
    /// A statement changed data.
    pub changed: bool,
    pub elapsed: Duration,
}

/// Why a run failed.
#[derive(Debug)]
pub enum LuaFailure {
    /// A syntax or runtime error: the message names the line.
    Error(String),
    /// A limit stopped the program; the message names the limit.
    Limit(String),
    /// A statement (or file write) was refused and the program did not
    /// catch the error. `fixable` when the SQL did not parse.
    Refused {
        message: String,
        fixable: bool,
    },
    Cancelled,
    /// The output went away (a closed pipe).
    Output(io::Error),
}

impl fmt::Display for LuaFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LuaFailure::Error(m) => write!(f, "the Lua program failed: {m}"),
            LuaFailure::Limit(m) | LuaFailure::Refused { message: m, .. } => f.write_str(m),
            LuaFailure::Cancelled => f.write_str("cancelled"),
            LuaFailure::Output(e) => write!(f, "cannot write the result: {e}"),
        }
    }
}

/// Runs `program` in a fresh sandbox; logs the run when `env.audit` says where.
pub fn run(program: &Program<'_>, env: RunEnv<'_>) -> Result<RunReport, LuaFailure> {
    let started = chrono::Utc::now();
    let clock = Instant::now();
    let timeout = Duration::from_secs(env.limits.timeout_secs.max(1));
    let stopper = Stopper::new();
    let link = {
        let s = stopper.clone();
        env.cancel.on_cancel(move || s.stop(Stop::Cancelled))
    };
    let watchdog = Watchdog::start(timeout, stopper.clone());
    let host = RefCell::new(Host::new(
        api::HostEnv {
            source: env.source,
            catalog: env.catalog,
            policy: env.policy,
            sink: env.sink,
            limits: env.limits,
            workdir: env.workdir,
        },
        stopper.clone(),
    ));
    let at_line = Rc::new(Cell::new(None));
    let executed = execute(
        program,
        env.limits,
        &host,
        &stopper,
        (clock + timeout, Rc::clone(&at_line)),
        env.last_in_process,
    );
    drop(watchdog);
    drop(link);
    let mut host = host.into_inner();
    let outcome = verdict(executed, &stopper, &mut host, env.limits, at_line.get());
    let elapsed = clock.elapsed();
    if let Some(info) = env.audit {
        let logged = log(info, &host, &outcome, started, env.source, program, elapsed);
        if let Err(e) = logged {
            let _ = host.env.sink.event(Event::Warning(format!(
                "cannot write the audit log in {}: {e}; the run went on",
                crate::home::logs_dir(&info.home).display()
            )));
        }
    }
    outcome.map(|()| {
        let shown = host.shown.take();
        RunReport {
            rows: shown.as_ref().map_or(0, |s| s.rows),
            preview: shown.map(|s| s.preview).unwrap_or_default(),
            output: std::mem::take(&mut host.output),
            changed: host.changed,
            elapsed,
        }
    })
}

/// A fresh state: the base library plus string, table, math, utf8,
/// coroutine and os (the prelude keeps only its clock functions).
fn new_state(limits: &LuaConfig) -> mlua::Result<Lua> {
    let libs = StdLib::COROUTINE
        | StdLib::TABLE
        | StdLib::STRING
        | StdLib::UTF8
        | StdLib::MATH
        | StdLib::OS;
    let lua = Lua::new_with(libs, LuaOptions::new())?;
    let bytes = limits.memory_mb.saturating_mul(1024 * 1024);
    lua.set_memory_limit(usize::try_from(bytes).unwrap_or(usize::MAX))?;
    Ok(lua)
}

/// Runs the prelude, then the program under the limit hook. `clock` is the
/// deadline and where the hook notes the line it stopped at; `keep` leaves
/// the state unclosed ([`RunEnv::last_in_process`]).
fn execute(
    program: &Program<'_>,
    limits: &LuaConfig,
    host: &RefCell<Host<'_>>,
    stopper: &Stopper,
    clock: (Instant, Rc<Cell<Option<usize>>>),
    keep: bool,
) -> mlua::Result<()> {
    let (deadline, at_line) = clock;
    let lua = new_state(limits)?;
    let ran = lua.scope(|scope| {
        let functions = api::functions(&lua, scope, host, stopper)?;
        lua.load(PRELUDE)
            .set_name("=aiq")
            .set_mode(ChunkMode::Text)
            .call::<()>(functions)?;
        limit_hook(&lua, limits, stopper.clone(), deadline, at_line)?;
        lua.load(program.code)
            .set_name(format!("={}", program.name))
            .set_mode(ChunkMode::Text)
            .exec()
    });
    // The scope has ended: the host functions are gone and no Lua code can
    // run any more, whatever happens to the state.
    if keep {
        std::mem::forget(lua);
    }
    ran
}

/// How the run ended: a stop wins over whatever error it caused.
fn verdict(
    executed: mlua::Result<()>,
    stopper: &Stopper,
    host: &mut Host<'_>,
    limits: &LuaConfig,
    at_line: Option<usize>,
) -> Result<(), LuaFailure> {
    let stop = stopper.reason().or_else(|| {
        executed
            .as_ref()
            .err()
            .filter(|e| is_memory(e))
            .map(|_| Stop::Memory)
    });
    if let Some(why) = stop {
        return Err(match why.limit(limits) {
            Some((what, key)) => {
                let at = at_line.map(|l| format!(" at line {l}")).unwrap_or_default();
                LuaFailure::Limit(format!(
                    "the Lua program hit the {what}{at} and was stopped (raise [lua] {key} in config.toml if it needs more)"
                ))
            }
            None if why == Stop::Sink => LuaFailure::Output(
                host.sink_error
                    .take()
                    .unwrap_or_else(|| io::Error::other("the output went away")),
            ),
            None => LuaFailure::Cancelled,
        });
    }
    let Err(e) = executed else { return Ok(()) };
    let message = message(&e);
    match &host.refusal {
        Some(r) if message.contains(&r.message) => Err(LuaFailure::Refused {
            message: r.message.clone(),
            fixable: r.fixable,
        }),
        _ => Err(LuaFailure::Error(message)),
    }
}

/// True when `e` is (or was caused by) running out of the memory limit.
pub fn is_memory(e: &mlua::Error) -> bool {
    match e {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::CallbackError { cause, .. } => is_memory(cause),
        mlua::Error::WithContext { cause, .. } => is_memory(cause),
        // A library function's failed allocation (`string.rep`'s buffer)
        // is a runtime error, with the traceback after it.
        mlua::Error::RuntimeError(m) => m
            .split("\nstack traceback:")
            .next()
            .is_some_and(|m| m.ends_with("not enough memory")),
        _ => false,
    }
}

/// A Lua error as one or two lines for people and the model (no traceback).
pub fn message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::SyntaxError { message, .. } => format!("syntax error: {message}"),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => return message(cause),
        mlua::Error::WithContext { cause, .. } => return message(cause),
        mlua::Error::ExternalError(e) => e.to_string(),
        other => other.to_string(),
    };
    let text = text
        .split("\nstack traceback:")
        .next()
        .unwrap_or_default()
        .trim();
    text.to_string()
}

#[allow(clippy::too_many_arguments)]
fn log(
    info: &AuditInfo,
    host: &Host<'_>,
    outcome: &Result<(), LuaFailure>,
    started: chrono::DateTime<chrono::Utc>,
    source: &dyn DataSource,
    program: &Program<'_>,
    elapsed: Duration,
) -> io::Result<()> {
    let (status, error) = match outcome {
        Ok(()) => (Status::Ok, None),
        Err(f) => (
            match f {
                LuaFailure::Error(_) => Status::Error,
                LuaFailure::Limit(_) => Status::Limit,
                LuaFailure::Refused { .. } => Status::Refused,
                LuaFailure::Cancelled => Status::Cancelled,
                LuaFailure::Output(_) => Status::Output,
            },
            Some(f.to_string()),
        ),
    };
    let result = host.shown.as_ref().map(|s| audit::Shown {
        rows: s.rows,
        columns: s.columns.clone(),
    });
    audit::append(
        &audit::Run {
            info,
            started,
            engine: source.kind().as_str(),
            program: program.code,
        },
        &host.calls,
        host.calls_omitted,
        host.output_bytes,
        (status, result, error.as_deref()),
        elapsed,
    )
}
