//! The audit log (SPEC §8): every Lua run — written by the model or read
//! from a file — appends one JSON line to `$AIQ_HOME/logs/YYYY-MM-DD.jsonl`
//! (UTC day): when, which session and source, the program, each host call
//! (function, SQL or path, rows, time, error), the output size, the result
//! or error, and the duration. Sources are named without passwords, and the
//! log holds no keys: nothing secret is ever passed to a run.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Programs longer than this are logged cut, with `program_truncated`.
const MAX_PROGRAM: usize = 64 * 1024;
/// Host calls logged per run; the rest are counted in `calls_omitted`.
pub const MAX_CALLS: usize = 1000;

/// Where a program came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Written by the model (`--mode lua`, `/mode lua`).
    Model,
    /// `--lua FILE`.
    File,
    /// `--lua -`.
    Stdin,
}

/// What the log says about where a run happened.
#[derive(Debug, Clone)]
pub struct AuditInfo {
    /// `$AIQ_HOME`.
    pub home: PathBuf,
    /// The session file of the conversation, if it keeps one.
    pub session: Option<PathBuf>,
    /// The source: a saved name, a path, or a URL without its password.
    pub source: String,
    pub origin: Origin,
    /// The script file (`--lua FILE`).
    pub file: Option<String>,
}

/// One host call, as logged.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Call {
    pub function: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a run ended, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// A syntax or runtime error.
    Error,
    /// A limit stopped it.
    Limit,
    /// A refused statement or write was not caught.
    Refused,
    Cancelled,
    /// The output went away.
    Output,
}

/// The result table a run showed.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    pub rows: u64,
    pub columns: Vec<String>,
}

/// One run, as one line of the log.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    pub time: String,
    pub session: Option<String>,
    pub source: &'a str,
    pub engine: &'a str,
    pub mode: &'static str,
    pub origin: Origin,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    pub program: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub program_truncated: bool,
    pub calls: &'a [Call],
    #[serde(skip_serializing_if = "is_zero")]
    pub calls_omitted: usize,
    pub output_bytes: u64,
    pub status: Status,
    pub result: Option<Shown>,
    pub error: Option<&'a str>,
    pub duration_ms: f64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub use crate::home::logs::ms;

/// The log fields that do not depend on how the run went.
pub struct Run<'a> {
    pub info: &'a AuditInfo,
    pub started: DateTime<Utc>,
    pub engine: &'a str,
    pub program: &'a str,
}

/// Appends the line for a finished run. The error says why it could not
/// be written (the run itself stands).
pub fn append(
    run: &Run<'_>,
    calls: &[Call],
    calls_omitted: usize,
    output_bytes: u64,
    outcome: (Status, Option<Shown>, Option<&str>),
    duration: Duration,
) -> std::io::Result<()> {
    let cut = crate::clip::head(run.program, MAX_PROGRAM).len();
    let (status, result, error) = outcome;
    let record = Record {
        time: crate::agent::rfc3339(&run.started),
        session: run.info.session.as_ref().map(|p| p.display().to_string()),
        source: &run.info.source,
        engine: run.engine,
        mode: "lua",
        origin: run.info.origin,
        file: run.info.file.as_deref(),
        program: &run.program[..cut],
        program_truncated: cut < run.program.len(),
        calls,
        calls_omitted,
        output_bytes,
        status,
        result,
        error,
        duration_ms: ms(duration),
    };
    let line = serde_json::to_string(&record).map_err(std::io::Error::other)?;
    let path = crate::home::log_file(&run.info.home, run.started.date_naive());
    crate::home::logs::append(&path, &line)
}
