//! The host side of the `aiq` table (SPEC §8). Each function answers the
//! prelude `(true, value)` or `(false, message)` — the message becomes a
//! Lua error the program may catch — or raises a [`Stopped`] error for a
//! limit, a cancel or a closed output, which nothing can catch. Statements
//! go through the one statement runner under the run's token; host calls
//! are shown as `ToolCall`/`ToolResult` events and kept for the audit log.

use std::cell::RefCell;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use mlua::{Lua, MultiValue, Scope, Table, Value as LuaValue};

use super::audit::{ms, Call, MAX_CALLS};
use super::convert::{self, null};
use super::json;
use super::limits::LuaConfig;
use super::limits::{stopped, Stop, Stopper};
use super::params;
use super::pretty::pretty;
use super::result::{self, LuaRows};
use super::sandbox::is_memory;
use crate::agent::runner::{run_statement_for, StatementError};
use crate::agent::{Event, EventSink, PREVIEW_BYTES};
use crate::safety::Policy;
use crate::schema::Catalog;
use crate::source::DataSource;

/// What a host function gives the prelude.
type Reply = mlua::Result<(bool, LuaValue)>;

/// What the host functions work with.
pub struct HostEnv<'a> {
    pub source: &'a dyn DataSource,
    pub catalog: &'a Catalog,
    pub policy: Policy,
    pub sink: &'a mut dyn EventSink,
    pub limits: &'a LuaConfig,
    pub workdir: &'a Path,
}

/// A refusal the program may not have caught.
pub struct Refusal {
    pub message: String,
    /// The SQL did not parse: the model may fix it.
    pub fixable: bool,
}

/// The table a run showed last.
pub struct ShownTable {
    pub rows: u64,
    pub preview: String,
    pub columns: Vec<String>,
}

/// The host's state during one run.
pub struct Host<'a> {
    pub env: HostEnv<'a>,
    pub(super) stopper: Stopper,
    /// Host calls for the audit log (at most [`MAX_CALLS`]).
    pub calls: Vec<Call>,
    pub calls_omitted: usize,
    pub output_bytes: u64,
    /// The first [`PREVIEW_BYTES`] of the output, for the history.
    pub output: String,
    pub shown: Option<ShownTable>,
    pub changed: bool,
    total_rows: u64,
    pub refusal: Option<Refusal>,
    pub sink_error: Option<io::Error>,
    /// When the run started (a shown table reports the time so far).
    started: Instant,
    /// The files no program touches, resolved at the first file call.
    pub(super) kept: std::cell::OnceCell<super::files::Kept>,
}

/// The functions the prelude gets, created in `scope` over `host`.
pub fn functions<'s>(
    lua: &Lua,
    scope: &'s Scope<'s, '_>,
    host: &'s RefCell<Host<'_>>,
    stopper: &Stopper,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("check", check(lua, stopper.clone())?)?;
    let s = stopper.clone();
    t.raw_set(
        "stopped",
        lua.create_function(move |_, ()| Ok(s.reason().is_some()))?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set(
        "pretty",
        lua.create_function(|_, v: LuaValue| Ok(pretty(&v)))?,
    )?;
    macro_rules! host_fn {
        ($name:literal, |$h:ident, $lua:ident, $args:ident| $body:expr) => {
            t.raw_set(
                $name,
                scope.create_function(move |$lua, $args: MultiValue| {
                    let mut guard = host.try_borrow_mut().map_err(|_| {
                        mlua::Error::runtime("aiq functions cannot run inside each other")
                    })?;
                    let $h: &mut Host<'_> = &mut guard;
                    $body
                })?,
            )?;
        };
    }
    host_fn!("write", |h, lua, a| h.write(lua, arg(&a, 0)));
    host_fn!("query", |h, lua, a| h.query(lua, arg(&a, 0), arg(&a, 1)));
    host_fn!("tables", |h, lua, _a| h.tables(lua));
    host_fn!("schema", |h, lua, a| h.schema(lua, arg(&a, 0)));
    host_fn!("table", |h, lua, a| h.show(lua, arg(&a, 0), arg(&a, 1)));
    host_fn!("json_encode", |h, lua, a| h.json_encode(lua, arg(&a, 0)));
    host_fn!("json_decode", |h, lua, a| h.json_decode(lua, arg(&a, 0)));
    host_fn!("read_file", |h, lua, a| h.read_file(lua, arg(&a, 0)));
    host_fn!("write_file", |h, lua, a| h.write_file(
        lua,
        arg(&a, 0),
        arg(&a, 1)
    ));
    host_fn!("log", |h, lua, a| h.log(lua, arg(&a, 0), arg(&a, 1)));
    Ok(t)
}

fn arg(args: &MultiValue, i: usize) -> LuaValue {
    args.get(i).cloned().unwrap_or(LuaValue::Nil)
}

/// Wraps what `pcall`, `xpcall` and `coroutine.resume` return: a stop (or
/// an out-of-memory error, which is the memory limit) is raised again.
fn check(lua: &Lua, stopper: Stopper) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, results: MultiValue| {
        if let Some(why) = stopper.reason() {
            return Err(stopped(why));
        }
        if let (Some(LuaValue::Boolean(false)), Some(e)) = (results.front(), results.get(1)) {
            let memory = match e {
                LuaValue::String(s) => s.as_bytes().ends_with(b"not enough memory"),
                LuaValue::Error(e) => is_memory(e),
                _ => false,
            };
            if memory {
                stopper.stop(Stop::Memory);
                return Err(stopped(Stop::Memory));
            }
        }
        Ok(results)
    })
}

/// A failure the program may catch.
pub(super) fn fail(lua: &Lua, message: &str) -> Reply {
    Ok((false, LuaValue::String(lua.create_string(message)?)))
}

pub(super) fn text_arg(v: &LuaValue) -> Option<String> {
    match v {
        LuaValue::String(s) => s.to_str().ok().map(|s| s.to_string()),
        _ => None,
    }
}

impl<'a> Host<'a> {
    pub fn new(env: HostEnv<'a>, stopper: Stopper) -> Self {
        Host {
            env,
            stopper,
            calls: Vec::new(),
            calls_omitted: 0,
            output_bytes: 0,
            output: String::new(),
            shown: None,
            changed: false,
            total_rows: 0,
            refusal: None,
            sink_error: None,
            started: Instant::now(),
            kept: std::cell::OnceCell::new(),
        }
    }

    /// Shows an event; a failed sink stops the run.
    pub(super) fn event(&mut self, event: Event) -> mlua::Result<()> {
        self.env.sink.event(event).map_err(|e| {
            self.sink_error = Some(e);
            self.stop(Stop::Sink)
        })
    }

    pub(super) fn stop(&self, why: Stop) -> mlua::Error {
        self.stopper.stop(why);
        stopped(why)
    }

    /// An error from Lua itself inside a host function: out of memory is
    /// the memory limit.
    pub(super) fn lua_failed(&self, e: mlua::Error) -> mlua::Error {
        if is_memory(&e) {
            self.stop(Stop::Memory)
        } else {
            e
        }
    }

    pub(super) fn memory_bytes(&self) -> u64 {
        self.env.limits.memory_mb.saturating_mul(1024 * 1024)
    }

    fn record(&mut self, call: Call) {
        if self.calls.len() < MAX_CALLS {
            self.calls.push(call);
        } else {
            self.calls_omitted += 1;
        }
    }

    /// Shows a host call and what it gave back, and logs it.
    pub(super) fn called(&mut self, call: Call, result: String) -> mlua::Result<()> {
        let name = format!("aiq.{}", call.function);
        self.record(call);
        self.event(Event::ToolResult { name, result })
    }

    pub(super) fn calling(&mut self, function: &str, arguments: &str) -> mlua::Result<()> {
        self.event(Event::ToolCall {
            name: format!("aiq.{function}"),
            arguments: arguments.to_string(),
        })
    }

    /// `print` and `aiq.print`: output, within the output limit.
    fn write(&mut self, lua: &Lua, text: LuaValue) -> Reply {
        let LuaValue::String(text) = text else {
            return fail(lua, "print got something that is not text");
        };
        let bytes = text.as_bytes();
        self.output_bytes = self.output_bytes.saturating_add(bytes.len() as u64);
        if self.output_bytes > self.env.limits.max_output_kb.saturating_mul(1024) {
            return Err(self.stop(Stop::Output));
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if self.output.len() < PREVIEW_BYTES {
            let room = PREVIEW_BYTES - self.output.len();
            let cut = crate::clip::head(&text, room).len();
            self.output.push_str(&text[..cut]);
        }
        self.event(Event::Output(text))?;
        Ok((true, LuaValue::Nil))
    }

    /// `aiq.query(sql [, params])`: one statement through the runner; the
    /// rows as a list of tables keyed by column name.
    fn query(&mut self, lua: &Lua, sql: LuaValue, params: LuaValue) -> Reply {
        let Some(sql) = text_arg(&sql) else {
            return fail(
                lua,
                "aiq.query needs the SQL as a string: aiq.query(\"SELECT …\")",
            );
        };
        let sql = match convert::params(&params) {
            Ok(None) => sql,
            Ok(Some(p)) => match params::bind(&sql, self.env.source.dialect(), &p) {
                Ok(bound) => bound,
                Err(m) => return fail(lua, &format!("aiq.query: {m}")),
            },
            Err(m) => return fail(lua, &format!("aiq.query: {m}")),
        };
        self.calling("query", &sql)?;
        let left = self
            .env
            .limits
            .max_total_rows
            .saturating_sub(self.total_rows);
        let (max, limit) = if self.env.limits.max_rows <= left {
            (self.env.limits.max_rows, Stop::Rows)
        } else {
            (left, Stop::TotalRows)
        };
        let mut rows = LuaRows::new(lua, max, limit);
        let started = Instant::now();
        let result = run_statement_for(
            self.env.source,
            &sql,
            self.env.policy.clone(),
            self.stopper.token(),
            &mut *self.env.sink,
            &mut rows,
        );
        let mut call = Call {
            function: "query",
            sql: Some(sql),
            ms: ms(started.elapsed()),
            ..Call::default()
        };
        let stats = match result {
            Ok(stats) => stats,
            Err(e) => return self.query_failed(lua, e, rows, call),
        };
        let table = rows.finish().map_err(|e| self.lua_failed(e))?;
        self.total_rows = self.total_rows.saturating_add(stats.rows);
        self.changed |= stats.changed;
        call.rows = Some(stats.rows);
        let said = format!(
            "{} in {}",
            rows_text(stats.rows),
            time_text(started.elapsed())
        );
        self.called(call, said)?;
        Ok((true, LuaValue::Table(table)))
    }

    fn query_failed(
        &mut self,
        lua: &Lua,
        e: StatementError,
        rows: LuaRows<'_>,
        mut call: Call,
    ) -> Reply {
        if let Some(failure) = rows.failure() {
            let error = match failure {
                result::RowsFailure::Limit(why) => self.stop(why),
                result::RowsFailure::Lua(e) => self.lua_failed(e),
            };
            call.error = Some(error.to_string());
            self.record(call);
            return Err(error);
        }
        let message = match e {
            StatementError::Cancelled => {
                let why = self.stopper.reason().unwrap_or(Stop::Cancelled);
                call.error = Some("cancelled".into());
                self.record(call);
                return Err(self.stop(why));
            }
            StatementError::Output(io) => {
                self.sink_error = Some(io);
                return Err(self.stop(Stop::Sink));
            }
            StatementError::Refused(m) | StatementError::Declined(m) => {
                self.refusal = Some(Refusal {
                    message: m.clone(),
                    fixable: false,
                });
                m
            }
            StatementError::Unparsable(m) => {
                self.refusal = Some(Refusal {
                    message: m.clone(),
                    fixable: true,
                });
                m
            }
            StatementError::Engine(m) => format!("query failed: {m}"),
            StatementError::Timeout(m) => m,
        };
        call.error = Some(message.clone());
        self.called(call, message.clone())?;
        fail(lua, &message)
    }

    /// `aiq.tables()`: the names, as the model sees them.
    fn tables(&mut self, lua: &Lua) -> Reply {
        self.calling("tables", "")?;
        let names: Vec<&str> = self
            .env
            .catalog
            .tables
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        let list = lua
            .create_sequence_from(names.iter().copied())
            .map_err(|e| self.lua_failed(e))?;
        let call = Call {
            function: "tables",
            rows: Some(names.len() as u64),
            ..Call::default()
        };
        self.called(call, format!("{} tables", names.len()))?;
        Ok((true, LuaValue::Table(list)))
    }

    /// `aiq.schema(name)`: a table's columns, keys and size.
    fn schema(&mut self, lua: &Lua, name: LuaValue) -> Reply {
        let Some(name) = text_arg(&name) else {
            return fail(lua, "aiq.schema needs a table name: aiq.schema(\"orders\")");
        };
        self.calling("schema", &name)?;
        let mut call = Call {
            function: "schema",
            table: Some(name.clone()),
            ..Call::default()
        };
        let Some(table) = self.env.catalog.table(&name) else {
            let near = self.env.catalog.did_you_mean(&name);
            let message = format!("no table named {name}{near}");
            call.error = Some(message.clone());
            self.called(call, message.clone())?;
            return fail(lua, &message);
        };
        let described = result::describe(lua, table).map_err(|e| self.lua_failed(e))?;
        let said = format!("{} columns", table.columns.len());
        self.called(call, said)?;
        Ok((true, LuaValue::Table(described)))
    }

    /// `aiq.table(rows [, columns])`: the run's result, shown in the
    /// current format.
    fn show(&mut self, lua: &Lua, rows: LuaValue, columns: LuaValue) -> Reply {
        let LuaValue::Table(rows) = rows else {
            return fail(
                lua,
                "aiq.table needs a list of rows: aiq.table(rows [, columns])",
            );
        };
        let columns = match columns {
            LuaValue::Nil => None,
            LuaValue::Table(t) => match convert::strings(&t) {
                Ok(c) => Some(c),
                Err(m) => return fail(lua, &format!("aiq.table: {m}")),
            },
            _ => return fail(lua, "aiq.table: the columns must be a list of names"),
        };
        let elapsed = self.started.elapsed();
        let mut emit = |e: Event| self.env.sink.event(e);
        match result::show(lua, &rows, columns, elapsed, &mut emit) {
            Ok(Ok(shown)) => {
                self.shown = Some(shown);
                Ok((true, LuaValue::Nil))
            }
            Ok(Err(message)) => fail(lua, &format!("aiq.table: {message}")),
            Err(result::ShowError::Sink(e)) => {
                self.sink_error = Some(e);
                Err(self.stop(Stop::Sink))
            }
            Err(result::ShowError::Lua(e)) => Err(self.lua_failed(e)),
        }
    }

    fn json_encode(&mut self, lua: &Lua, value: LuaValue) -> Reply {
        let max = usize::try_from(self.memory_bytes()).unwrap_or(usize::MAX);
        match json::encode(&value, max) {
            Ok(text) => Ok((
                true,
                LuaValue::String(lua.create_string(&text).map_err(|e| self.lua_failed(e))?),
            )),
            Err(m) => fail(lua, &format!("aiq.json_encode: {m}")),
        }
    }

    fn json_decode(&mut self, lua: &Lua, text: LuaValue) -> Reply {
        let LuaValue::String(text) = text else {
            return fail(lua, "aiq.json_decode needs a string");
        };
        // The parsed document lives outside Lua for a moment: bound it.
        if text.as_bytes().len() as u64 > self.memory_bytes() / 4 {
            return Err(self.stop(Stop::Memory));
        }
        let Ok(text) = text.to_str() else {
            return fail(lua, "aiq.json_decode: the text is not UTF-8");
        };
        match json::decode(lua, &text) {
            Ok(v) => Ok((true, v)),
            Err(Ok(m)) => fail(lua, &format!("aiq.json_decode: {m}")),
            Err(Err(e)) => Err(self.lua_failed(e)),
        }
    }

    /// `aiq.log(level, message)`: a trace line (`-v` shows it) and a line
    /// in the audit log.
    fn log(&mut self, lua: &Lua, level: LuaValue, message: LuaValue) -> Reply {
        let level = text_arg(&level).unwrap_or_default().to_ascii_lowercase();
        let message = match &message {
            LuaValue::String(s) => s.to_string_lossy(),
            other => super::pretty::scalar(other),
        };
        match level.as_str() {
            "debug" => tracing::debug!(target: "aiq::lua", "{message}"),
            "info" => tracing::info!(target: "aiq::lua", "{message}"),
            "warn" | "warning" => tracing::warn!(target: "aiq::lua", "{message}"),
            "error" => tracing::error!(target: "aiq::lua", "{message}"),
            _ => {
                return fail(
                    lua,
                    "aiq.log: the level is one of debug, info, warn or error",
                )
            }
        }
        self.record(Call {
            function: "log",
            level: Some(level),
            message: Some(message),
            ..Call::default()
        });
        Ok((true, LuaValue::Nil))
    }
}

fn rows_text(n: u64) -> String {
    if n == 1 {
        "1 row".into()
    } else {
        format!("{n} rows")
    }
}

fn time_text(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    } else {
        format!("{} ms", d.as_millis())
    }
}
