//! Data sources: the one [`DataSource`] trait every engine implements, the
//! parsing of a SOURCE argument into a [`SourceSpec`], and the statement
//! deadline shared by the engines.
//!
//! The trait is synchronous and streams rows into a [`RowSink`]: an engine
//! with an async driver keeps its own runtime inside and blocks on it, so the
//! front ends and the agent core never change when one is added. Nothing here
//! prints; errors carry messages a person can act on.

mod clickhouse;
mod duckdb;
mod saved;
mod server;
mod spec;
mod sqlite;
mod text_rows;
mod value;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

pub use clickhouse::native::{FieldWriter, NativeRows};
pub use saved::{SavedSource, SavedSources};
pub use server::login::LoginPrivileges;
pub use server::ServerStatus;
pub use spec::{
    redact_url, rename_table, resolve, resolve_location, strip_password, DataFile, DataFileKind,
    Partition, Resolved, ServerProtocol, ServerSpec, SourceSpec,
};
pub use text_rows::{Field, Fields, RowBatch, TextFormat, TextRows};
pub use value::{Column, Value};

pub use crate::cancel::CancelToken;
use crate::safety::{CheckedSql, Dialect, EngineReading};
use crate::schema::Catalog;

/// Which engine serves a source. Also the `database_type` of a session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Sqlite,
    DuckDb,
    Postgres,
    /// MySQL and MariaDB.
    MySql,
    /// ClickHouse servers and clusters, over HTTP(S).
    ClickHouse,
}

impl EngineKind {
    /// The name used in session files and messages (`sqlite`, `duckdb`,
    /// `postgres`, `mysql`, `clickhouse`).
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Sqlite => "sqlite",
            EngineKind::DuckDb => "duckdb",
            EngineKind::Postgres => "postgres",
            EngineKind::MySql => "mysql",
            EngineKind::ClickHouse => "clickhouse",
        }
    }

    /// The SQL dialect statements are parsed in for this engine.
    pub fn dialect(self) -> Dialect {
        match self {
            EngineKind::Sqlite => Dialect::Sqlite,
            EngineKind::DuckDb => Dialect::DuckDb,
            EngineKind::Postgres => Dialect::Postgres,
            EngineKind::MySql => Dialect::MySql,
            EngineKind::ClickHouse => Dialect::ClickHouse,
        }
    }
}

/// Asks the user for a password, given the prompt (`Password for
/// ana@db:5432: `): what was typed, or `None`. The front end supplies it —
/// a terminal prompt without echo, the view's own — and the engines never
/// read the terminal themselves.
pub type PasswordAsk = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How a source is opened.
#[derive(Clone)]
pub struct OpenOptions {
    /// Open read-write (`--allow-write`); otherwise the engine itself refuses writes.
    pub allow_write: bool,
    /// Statement timeout; a query running longer is interrupted.
    pub timeout: Duration,
    /// Where a data-file source keeps its views between runs
    /// (`$AIQ_HOME/cache/views`); `None`: built afresh each time.
    pub cache: Option<std::path::PathBuf>,
    /// The engine's memory ceiling (`[query] memory_limit`; DuckDB only);
    /// `None` keeps the engine's own.
    pub memory_limit: Option<String>,
    /// Asked once when a server turns down a login that had no password;
    /// `None`: never asked.
    pub password: Option<PasswordAsk>,
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("allow_write", &self.allow_write)
            .field("timeout", &self.timeout)
            .field("cache", &self.cache)
            .field("memory_limit", &self.memory_limit)
            .field("password", &self.password.is_some())
            .finish()
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            allow_write: false,
            timeout: Duration::from_secs(30),
            cache: None,
            memory_limit: None,
            password: None,
        }
    }
}

/// Receives a result as the engine produces it: the columns once, then each
/// row. Implemented by the renderers (and later by the agent's event sinks).
/// An error from the sink (for example a closed pipe) stops the query.
pub trait RowSink {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()>;
    fn row(&mut self, row: &[Value]) -> io::Result<()>;

    /// [`RowSink::row`] for an engine that built the row for this call
    /// alone: a sink that keeps rows takes it as it is, without a copy.
    fn row_owned(&mut self, row: Vec<Value>) -> io::Result<()> {
        self.row(&row)
    }

    /// Rows still in the engine's text: read into values here, unless the
    /// sink writes text and takes them as they are.
    fn text_rows(&mut self, rows: TextRows) -> io::Result<()> {
        rows.for_each_row(|row| self.row_owned(row))
    }

    /// A block of ClickHouse's binary answer: read into values here,
    /// unless the sink writes CSV or TSV and takes it as it is.
    fn native_rows(&mut self, rows: NativeRows) -> io::Result<()> {
        rows.values().try_for_each(|row| self.row_owned(row))
    }

    /// Every row goes to CSV or TSV output (`-f csv`, `-f tsv`), which
    /// writes an engine's own form of rows without making values; an
    /// engine may then ask its server for a form that costs less to send
    /// (ClickHouse's binary `Native`). Other sinks take any form too.
    fn writes_delimited(&self) -> bool {
        false
    }
}

/// What a finished statement reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryStats {
    /// Rows streamed to the sink (for a write: rows changed).
    pub rows: u64,
    pub elapsed: Duration,
    /// True when the statement changed data (only possible with `--allow-write`).
    pub changed: bool,
}

/// Why a statement did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The engine rejected or failed the statement; the message is the engine's.
    #[error("{0}")]
    Engine(String),
    /// The statement ran past the timeout and was interrupted.
    #[error("the query ran longer than {} s and was stopped", .0.as_secs_f64())]
    Timeout(Duration),
    /// Cancelled through the turn's [`CancelToken`] (Ctrl-C).
    #[error("the query was cancelled")]
    Cancelled,
    /// The sink failed (for example the output pipe was closed).
    #[error("cannot write the result: {0}")]
    Output(#[from] io::Error),
}

/// What a [`RowSink`] returns (inside an `io::Error`) when it has every row
/// it will show: the engine stops the statement there, and the result
/// counts as cut short, not as failed (a table that has drawn its rows and
/// gives up counting the rest).
#[derive(Debug)]
pub struct EnoughRows;

impl std::fmt::Display for EnoughRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no more rows are needed")
    }
}

impl std::error::Error for EnoughRows {}

impl EnoughRows {
    /// The error a sink returns to stop the rows.
    pub fn error() -> io::Error {
        io::Error::other(EnoughRows)
    }

    /// True for that error.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<EnoughRows>())
    }
}

/// Errors from opening or introspecting a source (exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

/// A source's fingerprint taken knowing the one its cached catalog was
/// kept with ([`DataSource::fingerprint_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// The fingerprint a cached catalog must carry to be used.
    pub key: String,
    /// The source moved only in ways that leave the catalog alone (its
    /// cheap check no longer matches, the full fingerprint still does): the
    /// entry is kept under this fingerprint from now on, so the next run's
    /// cheap check matches again.
    pub restamp: Option<String>,
}

impl Since {
    /// The fingerprint as taken now: what a catalog read now is kept under.
    pub fn now(&self) -> &str {
        self.restamp.as_deref().unwrap_or(&self.key)
    }
}

/// One open data source.
pub trait DataSource: Send {
    /// The engine behind this source.
    fn kind(&self) -> EngineKind;

    /// The SQL dialect the safety gate parses this source's statements in.
    fn dialect(&self) -> Dialect {
        self.kind().dialect()
    }

    /// Tables and views with their columns, keys, row estimates and samples,
    /// in a handful of catalog queries.
    fn introspect(&self) -> Result<Catalog, SourceError>;

    /// Runs one checked statement and streams its rows into `sink`. A
    /// cancel of `cancel` while it runs interrupts it (on the server too)
    /// and ends it with [`ExecError::Cancelled`]; a token that is already
    /// cancelled runs nothing.
    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError>;

    /// The engine's own reading of `sql` (SPEC §4.2); `None` for engines
    /// whose connection alone enforces read-only (PostgreSQL, MySQL).
    fn read_statement(&self, _sql: &str) -> Option<Result<EngineReading, String>> {
        None
    }

    /// The functions the database defines itself, as its catalog describes
    /// them (SPEC §4.2, "Behind a name"); `None` where the gate needs none.
    /// No default: a source that wraps another must pass them on, or the
    /// gate would take the database's function for a built-in of its name.
    fn user_functions(&self) -> Option<std::sync::Arc<crate::safety::UserFunctions>>;

    /// What `sql` reads, as the engine's own reading shows it (SPEC §4.3):
    /// `(table, column)` pairs, `*` where the engine names no table or
    /// reads every column; `None` when the engine cannot say (then every
    /// redacted column counts as read). Asked before the statement runs;
    /// runs nothing of it. No default, like [`DataSource::user_functions`].
    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>>;

    /// The files on this machine the source is (a database file, the data
    /// files of a folder, glob or dataset): a Lua program may not read or
    /// write them, nor their journals, with `aiq.read_file` (SPEC §4.3).
    /// Empty for a server. No default, like [`DataSource::user_functions`].
    fn own_files(&self) -> Vec<std::path::PathBuf>;

    /// Things the user should know about the source as opened (a data file
    /// in a folder that was skipped, and why).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// A cheap token that changes whenever the catalog (or the data its
    /// estimates and samples come from) may have changed: the key of the
    /// catalog cache. `None`: never cache (an in-memory database).
    fn fingerprint(&self) -> Option<String> {
        None
    }

    /// [`DataSource::fingerprint`], given the one the cached catalog was
    /// kept with: a source that can tell cheaply that nothing changed since
    /// answers with `cached` itself without computing the full fingerprint.
    fn fingerprint_since(&self, cached: Option<&str>) -> Option<Since> {
        let _ = cached;
        self.fingerprint().map(|key| Since { key, restamp: None })
    }

    /// Why statements that change data cannot work here, if they cannot
    /// (data files are read through views: nothing would be written back).
    fn refuses_writes(&self) -> Option<&'static str> {
        None
    }

    /// For a database server: its version, and whether the session is
    /// confirmed read-only. `None` for files.
    fn server_status(&self) -> Option<ServerStatus> {
        None
    }

    /// For a database server: what its login may do on its own — be a
    /// superuser, replicate, read any of `hidden` (the tables the source
    /// hides, as its catalog names them) — asked with catalog queries of
    /// aiq's own that return privilege facts, never a hidden table's rows
    /// (SPEC §4.2). `None` for files.
    fn login_privileges(
        &self,
        hidden: &[crate::schema::Table],
    ) -> Option<Result<LoginPrivileges, SourceError>> {
        let _ = hidden;
        None
    }

    /// Another connection to the same source with the same settings, so
    /// that statements can run side by side (a server answering many
    /// clients); `None` where one connection must serve them all.
    fn another(&self) -> Option<Box<dyn DataSource>> {
        None
    }
}

impl SourceSpec {
    /// The engine that serves this source.
    pub fn engine(&self) -> EngineKind {
        match self {
            SourceSpec::Sqlite(_) => EngineKind::Sqlite,
            SourceSpec::DuckDb(_) | SourceSpec::DuckDbMemory | SourceSpec::DataFiles { .. } => {
                EngineKind::DuckDb
            }
            SourceSpec::Server(s) => match s.protocol {
                ServerProtocol::Postgres => EngineKind::Postgres,
                ServerProtocol::MySql => EngineKind::MySql,
                ServerProtocol::ClickHouse { .. } => EngineKind::ClickHouse,
            },
        }
    }
}

impl SourceSpec {
    /// The fingerprint of a source that is one DuckDB database file, taken
    /// from the file alone without opening it — the same text the opened
    /// source's [`DataSource::fingerprint`] gives. Opening a file of a few
    /// thousand tables takes DuckDB hundreds of milliseconds, which a fresh
    /// cached schema text spares `aiq schema`.
    pub fn unopened_fingerprint(&self) -> Option<String> {
        match self {
            SourceSpec::DuckDb(path) => Some(files_fingerprint(std::slice::from_ref(path))),
            _ => None,
        }
    }

    /// What the source is, for the catalog cache: its engine and canonical
    /// path(s), or its URL without password. `None` for an in-memory
    /// database.
    pub fn identity(&self) -> Option<String> {
        let canonical = |p: &std::path::Path| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        match self {
            SourceSpec::Sqlite(p) => Some(format!("sqlite:{}", canonical(p))),
            SourceSpec::DuckDb(p) => Some(format!("duckdb:{}", canonical(p))),
            SourceSpec::DuckDbMemory => None,
            SourceSpec::DataFiles { root, files, .. } => {
                // Resolving made the files' paths canonical already.
                let names: Vec<String> =
                    files.iter().map(|f| f.path.display().to_string()).collect();
                Some(format!("files:{}:{}", canonical(root), names.join(",")))
            }
            SourceSpec::Server(s) => Some(format!("server:{}", strip_password(&s.url))),
        }
    }
}

/// The size and modification time of each file (and of a `-wal`/`.wal`
/// beside it): changes whenever anything is written to them.
pub(crate) fn files_fingerprint(paths: &[std::path::PathBuf]) -> String {
    let mut out = String::new();
    for p in paths {
        out.push_str(&file_stamp(p));
        out.push_str(&file_stamp(&wal_of(p)));
    }
    out
}

/// A file's path, size and modification time (`PATH:-;` when it is not
/// there).
pub(crate) fn file_stamp(file: &std::path::Path) -> String {
    stamp(file, std::fs::metadata(file).ok().as_ref())
}

/// [`file_stamp`] from the file's metadata read already (`None`: it could
/// not be read).
pub(crate) fn stamp(file: &std::path::Path, meta: Option<&std::fs::Metadata>) -> String {
    match meta {
        Some(m) => {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            format!("{}:{}:{modified};", file.display(), m.len())
        }
        None => format!("{}:-;", file.display()),
    }
}

fn wal_of(p: &std::path::Path) -> std::path::PathBuf {
    let mut name = p.as_os_str().to_owned();
    name.push(".wal");
    let duck = std::path::PathBuf::from(name);
    if duck.exists() {
        return duck;
    }
    let mut name = p.as_os_str().to_owned();
    name.push("-wal");
    std::path::PathBuf::from(name)
}

/// Opens the source a [`SourceSpec`] names.
pub fn open(spec: &SourceSpec, options: OpenOptions) -> Result<Box<dyn DataSource>, SourceError> {
    match spec {
        SourceSpec::Sqlite(path) => Ok(Box::new(sqlite::SqliteSource::open(path, options)?)),
        SourceSpec::DuckDb(path) => Ok(Box::new(duckdb::DuckDbSource::open_file(path, options)?)),
        SourceSpec::DuckDbMemory => Ok(Box::new(duckdb::DuckDbSource::open_memory(options)?)),
        SourceSpec::DataFiles { files, skipped, .. } => Ok(Box::new(
            duckdb::DuckDbSource::open_data_files(files, skipped, options)?,
        )),
        SourceSpec::Server(server) => match server.protocol {
            ServerProtocol::Postgres => Ok(Box::new(server::postgres::PostgresSource::open(
                server, options,
            )?)),
            ServerProtocol::MySql => {
                Ok(Box::new(server::mysql::MySqlSource::open(server, options)?))
            }
            ServerProtocol::ClickHouse { .. } => Ok(Box::new(clickhouse::ClickHouseSource::open(
                server, options,
            )?)),
        },
    }
}

/// Shared by the engines: how one statement runs under the turn's
/// [`CancelToken`] and the statement timeout. The engine's `interrupt` is
/// registered on the token only while the statement runs, so a cancel that
/// arrives before or after it never reaches another statement.
pub(crate) struct Interruptible;

impl Interruptible {
    /// Streams rows into `sink`: `next_row` fills the buffer with one row
    /// and returns false at the end. Checks for a cancel every 4096 rows, so
    /// rows that are already fetched stop flowing too.
    pub(crate) fn pump(
        cancel: &CancelToken,
        width: usize,
        sink: &mut dyn RowSink,
        mut next_row: impl FnMut(&mut Vec<Value>) -> Result<bool, ExecError>,
    ) -> Result<u64, ExecError> {
        let mut buf: Vec<Value> = Vec::with_capacity(width);
        let mut count: u64 = 0;
        loop {
            buf.clear();
            if !next_row(&mut buf)? {
                return Ok(count);
            }
            sink.row(&buf)?;
            count += 1;
            if count.is_multiple_of(4096) && cancel.is_cancelled() {
                return Err(ExecError::Cancelled);
            }
        }
    }

    /// Runs one statement through [`Interruptible::run`] and reports its stats.
    pub(crate) fn execute(
        sql: &CheckedSql,
        timeout: Duration,
        cancel: &CancelToken,
        interrupt: impl Fn() + Send + Sync + 'static,
        stream: impl FnOnce() -> Result<u64, ExecError>,
    ) -> Result<QueryStats, ExecError> {
        let started = Instant::now();
        let rows = Interruptible::run(timeout, cancel, interrupt, stream)?;
        Ok(QueryStats {
            rows,
            elapsed: started.elapsed(),
            changed: sql.access() == crate::safety::Access::Write,
        })
    }

    /// Runs `f` with `interrupt` registered on `cancel` and a watchdog that
    /// calls it once `timeout` passes, and maps an engine error caused by
    /// the timeout or a cancel to the matching [`ExecError`]. A token that
    /// is already cancelled runs nothing.
    pub(crate) fn run<T>(
        timeout: Duration,
        cancel: &CancelToken,
        interrupt: impl Fn() + Send + Sync + 'static,
        f: impl FnOnce() -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        if cancel.is_cancelled() {
            return Err(ExecError::Cancelled);
        }
        let started = Instant::now();
        let interrupt = Arc::new(interrupt);
        let hook = {
            let interrupt = Arc::clone(&interrupt);
            cancel.on_cancel(move || interrupt())
        };
        let (result, timed_out) = watchdog(timeout, || interrupt(), f);
        drop(hook);
        // An interrupted statement counts as interrupted even when the
        // engine reports success (MySQL's SLEEP() returns 1 when killed):
        // its result may be cut short.
        let output_failed = matches!(result, Err(ExecError::Output(_)));
        if timed_out && !output_failed {
            tracing::debug!(elapsed = ?started.elapsed(), "statement timed out");
            return Err(ExecError::Timeout(timeout));
        }
        if cancel.is_cancelled() && !output_failed {
            return Err(ExecError::Cancelled);
        }
        result
    }
}

/// Runs `f`; if it is still running after `timeout`, calls `interrupt` once.
/// Returns `f`'s result and whether the interrupt fired.
pub(crate) fn watchdog<T>(
    timeout: Duration,
    interrupt: impl Fn() + Send + Sync,
    f: impl FnOnce() -> T,
) -> (T, bool) {
    let fired = AtomicBool::new(false);
    let (done, wait) = mpsc::channel::<()>();
    let result = std::thread::scope(|scope| {
        let fired = &fired;
        let interrupt = &interrupt;
        scope.spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(timeout) {
                fired.store(true, Ordering::SeqCst);
                interrupt();
            }
        });
        let result = f();
        drop(done);
        result
    });
    (result, fired.load(Ordering::SeqCst))
}

/// `name` as a double-quoted SQL identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    crate::schema::Quote::Double.quoted(name)
}

/// A table as the catalog reports it (`table` or `schema.table`), quoted:
/// part by part, or whole when the dot is the name's own
/// ([`Table::one_name`](crate::schema::Table::one_name)).
/// What the view `own` (lowercase) reaches, read from the SQL the server
/// keeps for it (`information_schema.VIEWS`, ClickHouse's
/// `create_table_query`) where the server records no dependencies: every
/// word of it other than `own` that names one of `tables` (a column of
/// the same name counts too: erring toward hiding), and
/// [`crate::schema::REACHES_UNKNOWN`] for a function the database defines
/// (`functions`) or a definition the login may not see. Views among the
/// tables are followed by the privacy guard, level by level.
pub(crate) fn reaches_by_words(
    own: &str,
    definition: &str,
    dialect: &dyn sqlparser::dialect::Dialect,
    tables: &std::collections::HashSet<String>,
    functions: &std::collections::HashSet<String>,
) -> Vec<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let unknown = || vec![crate::schema::REACHES_UNKNOWN.to_string()];
    if definition.trim().is_empty() {
        return unknown();
    }
    let Ok(tokens) = Tokenizer::new(dialect, definition).tokenize() else {
        return unknown();
    };
    let mut reached: Vec<String> = Vec::new();
    for token in tokens {
        let Token::Word(w) = token else { continue };
        let word = w.value.to_lowercase();
        let hit = if word == own {
            continue;
        } else if tables.contains(&word) {
            word
        } else if functions.contains(&word) {
            crate::schema::REACHES_UNKNOWN.to_string()
        } else {
            continue;
        };
        if !reached.contains(&hit) {
            reached.push(hit);
        }
    }
    reached
}

pub(crate) fn table_ref(table: &crate::schema::Table) -> String {
    match table.name.split_once('.') {
        Some((schema, name)) if !table.one_name => {
            format!("{}.{}", quote_ident(schema), quote_ident(name))
        }
        _ => quote_ident(&table.name),
    }
}

/// `s` as a single-quoted SQL string literal.
pub(crate) fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_reports_timeout() {
        let fired = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&fired);
        let r: Result<(), ExecError> = Interruptible::run(
            Duration::from_millis(20),
            &CancelToken::new(),
            move || seen.store(true, Ordering::SeqCst),
            || {
                while !fired.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(ExecError::Engine("interrupted".into()))
            },
        );
        assert!(matches!(r, Err(ExecError::Timeout(_))), "{r:?}");
    }

    #[test]
    fn guard_passes_fast_results_through() {
        let r = Interruptible::run(Duration::from_secs(5), &CancelToken::new(), || {}, || Ok(7));
        assert_eq!(r.unwrap(), 7);
    }

    #[test]
    fn cancel_maps_engine_error_and_reaches_the_interrupt() {
        let cancel = CancelToken::new();
        let interrupted = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&interrupted);
        let r: Result<(), ExecError> = Interruptible::run(
            Duration::from_secs(5),
            &cancel,
            move || seen.store(true, Ordering::SeqCst),
            || {
                cancel.cancel();
                Err(ExecError::Engine("interrupted".into()))
            },
        );
        assert!(matches!(r, Err(ExecError::Cancelled)), "{r:?}");
        assert!(interrupted.load(Ordering::SeqCst));
    }

    #[test]
    fn a_cancelled_token_runs_nothing_and_a_fresh_one_runs() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let r = Interruptible::run(
            Duration::from_secs(5),
            &cancel,
            || {},
            || -> Result<(), ExecError> { panic!("must not run") },
        );
        assert!(matches!(r, Err(ExecError::Cancelled)), "{r:?}");
        let r = Interruptible::run(Duration::from_secs(5), &CancelToken::new(), || {}, || Ok(1));
        assert_eq!(r.unwrap(), 1);
    }
}
