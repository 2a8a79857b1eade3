//! DuckDB through the duckdb crate: `.duckdb` files, an in-memory database,
//! and CSV/TSV/Parquet/JSON files served as views.
//!
//! Layer 2 of the safety policy: database files open with
//! `access_mode=READ_ONLY`; data files are wrapped as views in a private
//! database file that is then reopened read-only; external access is off
//! except for the source's own files, extensions never install or load, and
//! the configuration is locked so no statement can undo any of it. The
//! memory ceiling (`[query] memory_limit`) is set before the lock, and the
//! engine spills beyond it into aiq's private temporary folder, never next
//! to the user's files.

pub(crate) mod behind;
pub(crate) mod dataset;
pub(crate) mod gate;
pub(crate) mod json_depth;
pub(crate) mod narrow;
pub(crate) mod reads;
pub(crate) mod values;
pub(crate) mod views;

use std::path::Path;

use duckdb::core::LogicalTypeId;
use duckdb::types::{Value as DValue, ValueRef};
use duckdb::{AccessMode, Config, Connection};

use super::spec::DataFile;
use super::{
    quote_ident, quote_str, table_ref, watchdog, CancelToken, Column, DataSource, EngineKind,
    ExecError, Interruptible, OpenOptions, QueryStats, RowSink, SourceError, Value,
};
use crate::safety::{Access, CheckedSql, EngineReading};
use crate::schema::{
    offer_sample, sample_targets, Catalog, ColumnInfo, ForeignKey, Table, TableKind, SAMPLE_ROWS,
};
use behind::UserObjects;
use gate::DuckGate;
use narrow::Narrowable;
use values::Kind;
use views::Allowed;

/// How long introspection may spend on sample values: a safety net only —
/// the sample query reads the first rows of each table in insertion order,
/// so the same files always give the same samples (and the same prompt).
const SAMPLE_BUDGET: std::time::Duration = std::time::Duration::from_millis(2000);
/// Columns sampled per query.
const SAMPLE_BATCH: usize = 100;

pub(crate) struct DuckDbSource {
    // Field order matters: the connection must close before the folder that
    // holds a data-file source's view database is removed.
    /// Replaced when an engine error leaves it unable to answer.
    conn: std::cell::RefCell<Connection>,
    /// How to open the connection again.
    reopen: Reopen,
    /// Where DuckDB spills (`[query] memory_limit`): a private folder,
    /// which also holds a data-file source's views when no cache keeps
    /// them.
    spill_dir: Option<ViewsDir>,
    options: OpenOptions,
    /// Data files that were skipped, and why.
    warnings: Vec<String>,
    /// The files behind the source (the database file, or the data files),
    /// for the catalog cache's fingerprint; none for an in-memory database.
    files: Vec<std::path::PathBuf>,
    /// A data-file source's fingerprint: every file's path, size and
    /// modification time, taken when its views were opened (`None` for a
    /// database).
    data_fingerprint: Option<String>,
    /// DuckDB's own parser, for the gate's reading of each statement.
    gate: DuckGate,
    /// Large partitioned datasets a query may read a narrower view of.
    narrowable: Vec<Narrowable>,
    /// A database's own views and macros, which the gate reads through
    /// (`duckdb_behind`); `None` until read, and again after a write.
    objects: std::cell::RefCell<Option<UserObjects>>,
}

/// The private folder that holds a data-file source's views database:
/// `aiq-views-PID-…` in the temporary directory, mode 0700, removed when
/// dropped — or by the signal handler, or by the next aiq after a crash.
struct ViewsDir(tempfile::TempDir);

impl ViewsDir {
    fn create() -> Result<ViewsDir, SourceError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!(
                "{}{}-",
                crate::cleanup::VIEWS_PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| SourceError(format!("cannot create a private temporary folder: {e}")))?;
        crate::cleanup::register(dir.path());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700));
        }
        Ok(ViewsDir(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Mode 0600 for the files DuckDB wrote in the folder.
    fn make_private(&self, db: &Path) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for p in [db.to_path_buf(), db.with_extension("duckdb.wal")] {
                let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
            }
        }
        #[cfg(not(unix))]
        let _ = db;
    }
}

impl Drop for ViewsDir {
    fn drop(&mut self) {
        crate::cleanup::unregister(self.0.path());
    }
}

/// The engine's memory ceiling and the private folder it spills into.
#[derive(Debug, Clone)]
struct Memory {
    /// DuckDB's `memory_limit` as DuckDB reads it (`"2GB"`); `None` keeps
    /// DuckDB's own.
    limit: Option<String>,
    spill: std::path::PathBuf,
}

impl Memory {
    /// `[query] memory_limit` (a size, or a share of the machine's memory
    /// like `"25%"`) for a source that spills into `spill`.
    fn new(options: &OpenOptions, spill: &Path) -> Result<Memory, SourceError> {
        let limit = match options.memory_limit.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => Some(engine_size(text).map_err(|why| {
                SourceError(format!(
                    "[query] memory_limit = {text:?} is not a size DuckDB reads: {why}; give one like \"2GB\" or \"25%\""
                ))
            })?),
        };
        Ok(Memory {
            limit,
            spill: spill.to_path_buf(),
        })
    }
}

/// A memory ceiling as DuckDB reads it: a share of the machine (`"25%"`)
/// becomes that share of the memory DuckDB sees (its default ceiling is
/// 80% of it, cgroup limits included); a size stays as it is.
fn engine_size(text: &str) -> Result<String, String> {
    let Some(share) = text.strip_suffix('%') else {
        return Ok(text.to_string());
    };
    let share: f64 = share
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| "a share of the memory is between 0% and 100%".to_string())?;
    let seen = machine_memory()?;
    Ok(format!(
        "{}KB",
        (seen * share / 100.0 / 1000.0).max(1.0) as u64
    ))
}

/// The memory DuckDB sees, in bytes: its default ceiling over 0.8.
fn machine_memory() -> Result<f64, String> {
    static SEEN: std::sync::OnceLock<Result<f64, String>> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
        let text: String = conn
            .query_row("SELECT current_setting('memory_limit')", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        parse_size(&text)
            .map(|bytes| bytes / 0.8)
            .ok_or_else(|| format!("DuckDB's default memory limit reads {text:?}"))
    })
    .clone()
}

/// `"19.3 GiB"` (how DuckDB shows a size) in bytes.
fn parse_size(text: &str) -> Option<f64> {
    let (number, unit) = text.trim().split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "bytes" | "byte" | "b" => 1.0,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return None,
    };
    Some(number * scale)
}

/// Settings every DuckDB connection gets before any user statement.
fn base_config(access: AccessMode, memory: &Memory) -> duckdb::Result<Config> {
    let config = Config::default()
        .access_mode(access)?
        .enable_autoload_extension(false)?
        .with("autoinstall_known_extensions", "false")?
        .with("allow_community_extensions", "false")?
        .with("temp_directory", memory.spill.display().to_string())?;
    match &memory.limit {
        Some(limit) => config.with("memory_limit", limit),
        None => Ok(config),
    }
}

/// A connection could not be opened: a memory ceiling DuckDB does not
/// read is named as such.
fn open_error(what: &str, memory: &Memory, e: duckdb::Error) -> SourceError {
    let text = e.to_string();
    match &memory.limit {
        Some(limit) if text.contains("memory") => SourceError(format!(
            "cannot open {what}: [query] memory_limit = {limit:?} is not a size DuckDB reads ({text}); give one like \"2GB\" or \"25%\""
        )),
        _ => SourceError(format!("cannot open {what}: {text}")),
    }
}

/// Turns off file access beyond `allowed` and locks the configuration.
fn lock_down(conn: &Connection, allowed: &Allowed) -> duckdb::Result<()> {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|p| quote_str(p))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !allowed.paths.is_empty() {
        conn.execute_batch(&format!("SET allowed_paths = [{}]", list(&allowed.paths)))?;
    }
    if !allowed.dirs.is_empty() {
        conn.execute_batch(&format!(
            "SET allowed_directories = [{}]",
            list(&allowed.dirs)
        ))?;
    }
    conn.execute_batch("SET enable_external_access = false; SET lock_configuration = true;")
}

/// How a source's connection is opened again after an engine error left
/// its database unable to answer.
enum Reopen {
    /// A database file (the user's, or a data-file source's views), opened
    /// as first with file access limited to `allowed`.
    File {
        path: std::path::PathBuf,
        access: AccessMode,
        allowed: Allowed,
        memory: Memory,
    },
    /// An in-memory database: its contents live only in the broken
    /// database, so it is not replaced.
    Memory,
}

impl Reopen {
    fn open(&self) -> duckdb::Result<Connection> {
        match self {
            Reopen::File {
                path,
                access,
                allowed,
                memory,
            } => {
                let access = match access {
                    AccessMode::ReadOnly => AccessMode::ReadOnly,
                    AccessMode::ReadWrite => AccessMode::ReadWrite,
                    AccessMode::Automatic => AccessMode::Automatic,
                };
                let conn = Connection::open_with_flags(path, base_config(access, memory)?)?;
                lock_down(&conn, allowed)?;
                Ok(conn)
            }
            Reopen::Memory => Connection::open_in_memory(),
        }
    }
}

impl DuckDbSource {
    /// After an engine error: when the database no longer answers (a
    /// statement broke its state), opens it again, so the next statement
    /// runs on a sound connection. The broken database is never closed:
    /// closing it may throw inside DuckDB and end the process.
    fn run_once(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let main = self.conn.borrow();
        // A read that needs only some files of a large dataset runs on a
        // connection of its own, whose narrower views end with it.
        let narrowed = match sql.access() {
            Access::Read => self.narrow(&main, sql.sql()),
            _ => None,
        };
        let conn: &Connection = narrowed.as_ref().unwrap_or(&main);
        let interrupt = conn.interrupt_handle();
        Interruptible::execute(
            sql,
            self.options.timeout,
            cancel,
            move || interrupt.interrupt(),
            || self.stream(conn, sql, sink, cancel),
        )
    }

    /// True when the connection was replaced.
    fn mend(&self) -> bool {
        let answers = self.conn.borrow().execute_batch("SELECT 1").is_ok();
        if answers || matches!(self.reopen, Reopen::Memory) {
            return false;
        }
        match self.reopen.open() {
            Ok(fresh) => {
                let broken = self.conn.replace(fresh);
                std::mem::forget(broken);
                tracing::warn!("the DuckDB connection stopped answering and was opened again");
                true
            }
            Err(e) => {
                tracing::warn!("the DuckDB connection stopped answering: {e}");
                false
            }
        }
    }

    pub(crate) fn open_file(path: &Path, options: OpenOptions) -> Result<Self, SourceError> {
        let spill = ViewsDir::create()?;
        let memory = Memory::new(&options, spill.path())?;
        let what = format!("{} as DuckDB", path.display());
        let access = if options.allow_write {
            AccessMode::ReadWrite
        } else {
            AccessMode::ReadOnly
        };
        let reopen = Reopen::File {
            path: path.to_path_buf(),
            access,
            allowed: Allowed::default(),
            memory: memory.clone(),
        };
        let conn = reopen.open().map_err(|e| open_error(&what, &memory, e))?;
        let mut source = Self::new(conn, reopen, options)?;
        source.spill_dir = Some(spill);
        source.files = vec![path.to_path_buf()];
        Ok(source)
    }

    pub(crate) fn open_memory(options: OpenOptions) -> Result<Self, SourceError> {
        let spill = ViewsDir::create()?;
        let memory = Memory::new(&options, spill.path())?;
        let fail = |e: duckdb::Error| open_error("an in-memory DuckDB", &memory, e);
        let config = base_config(AccessMode::Automatic, &memory).map_err(fail)?;
        let conn = Connection::open_in_memory_with_flags(config).map_err(fail)?;
        lock_down(&conn, &Allowed::default()).map_err(fail)?;
        let mut source = Self::new(conn, Reopen::Memory, options)?;
        source.spill_dir = Some(spill);
        Ok(source)
    }

    /// Each file becomes a view named after its stem, each dataset one view
    /// of its files (`duckdb_views`). The views live in a small database
    /// file — kept in `options.cache` for the next start when given, else
    /// in a private temporary folder — opened read-only with file access
    /// limited to exactly these files and datasets' folders. A file or
    /// dataset that cannot be read is skipped with a warning; when none
    /// can, that is an error.
    pub(crate) fn open_data_files(
        files: &[DataFile],
        links_out: &[String],
        options: OpenOptions,
    ) -> Result<Self, SourceError> {
        // The gate's own DuckDB starts on the other core meanwhile.
        let gate = std::thread::spawn(DuckGate::open);
        crate::cleanup::remove_stale_views();
        let spill = ViewsDir::create()?;
        let memory = Memory::new(&options, spill.path())?;
        let cache = options
            .cache
            .clone()
            .filter(|dir| crate::home::create_private_dir(dir).is_ok());
        // Every file's size and time, read once.
        let fingerprint = views::fingerprint(files);
        let (db_path, built) = match cache {
            Some(cache) => {
                let (target, prefix) = views::cached_path(&cache, files, &fingerprint);
                match views::read_note(&target) {
                    Some(built) => (target, built),
                    None => {
                        let building = cache.join(format!(
                            ".building-{}-{}.duckdb",
                            std::process::id(),
                            std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map(|d| d.as_nanos())
                                .unwrap_or(0)
                        ));
                        let built = build_views(&building, files, &memory)?;
                        private_file(&building);
                        match views::keep(&building, &built, &target, &prefix) {
                            Ok(()) => (target, built),
                            Err(e) => {
                                tracing::warn!("{e}");
                                (building, built)
                            }
                        }
                    }
                }
            }
            // No cache: the views live in the private folder DuckDB
            // spills into, removed with the source.
            None => {
                let db_path = spill.path().join("views.duckdb");
                let built = build_views(&db_path, files, &memory)?;
                spill.make_private(&db_path);
                (db_path, built)
            }
        };
        if built.allowed.paths.is_empty() && built.allowed.dirs.is_empty() {
            let skipped: Vec<&str> = built
                .warnings
                .iter()
                .map(|w| w.strip_prefix("skipped ").unwrap_or(w))
                .collect();
            return Err(SourceError(match skipped.as_slice() {
                [one] => format!("cannot read {one}"),
                many => format!("none of the data files can be read: {}", many.join("; ")),
            }));
        }
        let narrowable: Vec<Narrowable> = built
            .narrowing
            .iter()
            .filter_map(|view| {
                let file = files.iter().find(|f| f.table == view.table)?;
                Narrowable::new(view.clone(), file)
            })
            .collect();
        let reopen = Reopen::File {
            path: db_path,
            access: AccessMode::ReadOnly,
            allowed: built.allowed,
            memory: memory.clone(),
        };
        let conn = reopen
            .open()
            .map_err(|e| open_error("the data files", &memory, e))?;
        let gate = gate.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let mut source = Self::with_gate(conn, reopen, options, gate)?;
        source.spill_dir = Some(spill);
        source.data_fingerprint = Some(fingerprint);
        source.narrowable = narrowable;
        source.warnings = links_out
            .iter()
            .map(|s| format!("skipped {s}"))
            .chain(built.warnings)
            .chain(built.notices)
            .collect();
        Ok(source)
    }

    fn new(conn: Connection, reopen: Reopen, options: OpenOptions) -> Result<Self, SourceError> {
        Self::with_gate(conn, reopen, options, DuckGate::open())
    }

    fn with_gate(
        conn: Connection,
        reopen: Reopen,
        options: OpenOptions,
        gate: Result<DuckGate, String>,
    ) -> Result<Self, SourceError> {
        Ok(DuckDbSource {
            conn: std::cell::RefCell::new(conn),
            reopen,
            spill_dir: None,
            options,
            warnings: Vec::new(),
            files: Vec::new(),
            data_fingerprint: None,
            gate: gate.map_err(SourceError)?,
            narrowable: Vec::new(),
            objects: std::cell::RefCell::new(None),
        })
    }

    /// DuckDB's "Out of Memory Error" as what it means here: the query
    /// needs more than the memory ceiling, and what to do about it.
    fn out_of_memory(&self, e: ExecError) -> ExecError {
        match e {
            ExecError::Engine(text) if text.starts_with("Out of Memory Error") => {
                let first = text.lines().next().unwrap_or_default();
                let limit = match &self.options.memory_limit {
                    Some(limit) => format!("{limit}, [query] memory_limit"),
                    None => "DuckDB's default, 80% of the machine; see [query] memory_limit".into(),
                };
                ExecError::Engine(format!(
                    "the query needs more memory than DuckDB may use ({limit}), even spilling to disk: {first} (narrow it — fewer rows or columns, an aggregate, LIMIT — or raise the limit)"
                ))
            }
            other => other,
        }
    }

    /// Refuses text that DuckDB's parser reads as anything but one
    /// statement: the duckdb crate's `prepare` runs every statement but the
    /// last, so only a single statement is ever handed to it.
    fn one_statement(&self, sql: &str) -> Result<(), ExecError> {
        match self.gate.statements(sql) {
            Ok(1) => Ok(()),
            Ok(n) => Err(ExecError::Engine(format!(
                "refused: DuckDB reads {n} statements here; aiq runs exactly one statement at a time"
            ))),
            Err(e) => Err(ExecError::Engine(e)),
        }
    }

    fn stream(
        &self,
        conn: &Connection,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<u64, ExecError> {
        self.one_statement(sql.sql())?;
        let mut stmt = conn.prepare(sql.sql()).map_err(engine_error)?;
        // Streaming execution: chunks are fetched as rows are consumed, so a
        // huge result never sits in memory.
        drop(stmt.stream_arrow([]).map_err(engine_error)?);
        let count = stmt.column_count();
        let names = stmt.column_names();
        let mut ids = Vec::with_capacity(count);
        let mut columns = Vec::with_capacity(count);
        for (i, name) in names.into_iter().enumerate() {
            let logical = stmt.column_logical_type(i);
            let (kind, type_name) = describe_type(&logical);
            ids.push((logical.id(), kind));
            columns.push(Column::new(name, type_name));
        }
        if sql.access() == Access::Write && columns.len() == 1 && columns[0].name == "Count" {
            // DuckDB answers INSERT/UPDATE/DELETE with one "Count" row: the
            // rows changed, reported like SQLite's, not printed as a result.
            sink.columns(&[])?;
            let batch = stmt.step().map_err(engine_error)?;
            let changed = batch
                .and_then(
                    |b| match values::Reader::new(&b.columns()[0], Kind::Plain).value(0) {
                        Value::Int(n) => Some(n.max(0) as u64),
                        _ => None,
                    },
                )
                .unwrap_or(0);
            return Ok(changed);
        }
        // Types Arrow cannot carry faithfully come as DuckDB's own text.
        let texts: Vec<bool> = ids.iter().map(|(id, _)| values::needs_text(*id)).collect();
        if sql.access() == Access::Read && texts.contains(&true) {
            if let Some(wrapped) = self.as_text(conn, sql.sql(), &texts) {
                stmt = wrapped;
            }
        }
        sink.columns(&columns)?;
        let mut streamed: u64 = 0;
        loop {
            let Some(batch) = stmt.step().map_err(engine_error)? else {
                return Ok(streamed);
            };
            let readers: Vec<values::Reader<'_>> = batch
                .columns()
                .iter()
                .zip(&ids)
                .map(|(array, (_, kind))| values::Reader::new(array, *kind))
                .collect();
            let mut row = 0;
            let rows = duckdb::arrow::array::Array::len(&batch);
            streamed += Interruptible::pump(cancel, count, sink, |buf| {
                if row == rows {
                    return Ok(false);
                }
                buf.extend(readers.iter().map(|r| r.value(row)));
                row += 1;
                Ok(true)
            })?;
        }
    }

    /// For a read of large partitioned datasets that filters on their
    /// partition columns: a new connection to the same database (the same
    /// settings and limits) with temporary views of only the files the
    /// statement can need (`duckdb_narrow`), which end with it.
    fn narrow(&self, main: &Connection, sql: &str) -> Option<Connection> {
        if self.narrowable.is_empty() {
            return None;
        }
        let lower = sql.to_lowercase();
        if !self
            .narrowable
            .iter()
            .any(|n| lower.contains(&n.view.table.to_lowercase()))
        {
            return None;
        }
        let tree = self.gate.query_tree(sql)?;
        let mut needed = narrow::needed(&tree, &self.narrowable);
        // Past a third of the files, writing and binding their list costs
        // more than binding the kept view.
        needed.retain(|(d, files)| files.len() * 3 <= self.narrowable[*d].files.len());
        if needed.is_empty() {
            return None;
        }
        let conn = main.try_clone().ok()?;
        let mut narrowed = false;
        for (d, files) in needed {
            let dataset = &self.narrowable[d];
            let name = format!("temp.main.{}", quote_ident(&dataset.view.table));
            // No file can match: the first one's columns, and no rows.
            let (paths, rows) = match files.as_slice() {
                [] => (dataset.paths(&[0]), " WHERE false"),
                some => (dataset.paths(some), ""),
            };
            let create = format!(
                "CREATE TEMP VIEW {} AS SELECT * FROM {}{rows}",
                quote_ident(&dataset.view.table),
                dataset.view.reader(&paths)
            );
            if conn.execute_batch(&create).is_err() {
                continue;
            }
            if views::describe(&conn, &name) == dataset.view.columns {
                narrowed = true;
            } else if conn.execute_batch(&format!("DROP VIEW {name}")).is_err() {
                return None;
            }
        }
        narrowed.then_some(conn)
    }

    /// The statement again, with the columns flagged in `texts` cast to
    /// VARCHAR by DuckDB; `None` when that cannot be prepared (the columns
    /// then show Arrow's text for them).
    fn as_text<'c>(
        &self,
        conn: &'c Connection,
        sql: &str,
        texts: &[bool],
    ) -> Option<duckdb::Statement<'c>> {
        let names: Vec<String> = (1..=texts.len()).map(|i| format!("c{i}")).collect();
        let list: Vec<String> = names
            .iter()
            .zip(texts)
            .map(|(n, t)| {
                if *t {
                    format!("{n}::VARCHAR")
                } else {
                    n.clone()
                }
            })
            .collect();
        // On lines of their own, so a comment at the end of the statement
        // cannot swallow the closing parenthesis.
        let wrapped = format!(
            "SELECT {} FROM (\n{sql}\n) AS aiq_result({})",
            list.join(", "),
            names.join(", ")
        );
        self.one_statement(&wrapped).ok()?;
        let mut stmt = conn.prepare(&wrapped).ok()?;
        drop(stmt.stream_arrow([]).ok()?);
        Some(stmt)
    }
}

impl DataSource for DuckDbSource {
    fn own_files(&self) -> Vec<std::path::PathBuf> {
        // A data-file source: the files and datasets' folders DuckDB may
        // read; a database: its file.
        match &self.reopen {
            Reopen::File { allowed, .. } if self.data_fingerprint.is_some() => allowed
                .paths
                .iter()
                .chain(&allowed.dirs)
                .map(std::path::PathBuf::from)
                .collect(),
            _ => self.files.clone(),
        }
    }

    /// None: DuckDB's macros are expanded through its own catalog when a
    /// statement is read.
    fn user_functions(&self) -> Option<std::sync::Arc<crate::safety::UserFunctions>> {
        None
    }

    fn kind(&self) -> EngineKind {
        EngineKind::DuckDb
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn fingerprint(&self) -> Option<String> {
        if let Some(data) = &self.data_fingerprint {
            return Some(data.clone());
        }
        (!self.files.is_empty()).then(|| super::files_fingerprint(&self.files))
    }

    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        reads::columns_read(&self.conn.borrow(), sql.sql())
    }

    fn read_statement(&self, sql: &str) -> Option<Result<EngineReading, String>> {
        let mut reading = match self.gate.read(sql) {
            Ok(reading) => reading,
            Err(e) => return Some(Err(e)),
        };
        // A data-file source's views are aiq's own, over its files.
        if self.data_fingerprint.is_none() {
            let conn = self.conn.borrow();
            let mut objects = self.objects.borrow_mut();
            if objects.is_none() {
                *objects = UserObjects::read(&conn).ok();
            }
            match objects.as_ref() {
                Some(objects) => behind::expand(&self.gate, &mut reading, objects),
                None => reading.opaque = true,
            }
        }
        Some(Ok(reading))
    }

    fn refuses_writes(&self) -> Option<&'static str> {
        self.data_fingerprint.is_some().then_some(
            "data files are read through views, so nothing would be written back to them (load them into a .duckdb file to change data)",
        )
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        // Views over data files are the tables of such a source; views in a
        // database file may be expensive, so they get no samples.
        let conn = self.conn.borrow();
        let mut catalog = introspect(&conn, self.data_fingerprint.is_some())
            .map_err(|e| SourceError(format!("cannot read the DuckDB schema: {e}")))?;
        if self.data_fingerprint.is_none() {
            // What each of a database's views reaches (SPEC §4.2, "Behind
            // a name"); one that cannot be read reaches what is unknown.
            let objects = UserObjects::read(&conn).ok();
            for table in catalog
                .tables
                .iter_mut()
                .filter(|t| t.kind == TableKind::View)
            {
                let query = format!("SELECT * FROM {}", table_ref(table));
                table.reaches = objects
                    .as_ref()
                    .and_then(|o| behind::reaches(&self.gate, o, &query))
                    .unwrap_or_else(|| vec![crate::schema::REACHES_UNKNOWN.into()]);
            }
            *self.objects.borrow_mut() = objects;
        }
        Ok(catalog)
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let mut watched = Watched {
            sink,
            started: false,
        };
        if sql.access() == Access::Write {
            // It may make or change a view or macro.
            self.objects.replace(None);
        }
        let result = self.run_once(sql, &mut watched, cancel);
        // A read that failed before its first column because an earlier
        // statement broke the database runs once more on the database
        // opened again.
        if let Err(ExecError::Engine(_)) = &result {
            if self.mend() && sql.access() == Access::Read && !watched.started {
                return self
                    .run_once(sql, watched.sink, cancel)
                    .map_err(|e| self.out_of_memory(e));
            }
        }
        result.map_err(|e| self.out_of_memory(e))
    }
}

/// A sink that notes whether a result has begun to arrive.
struct Watched<'a> {
    sink: &'a mut dyn RowSink,
    started: bool,
}

impl RowSink for Watched<'_> {
    fn columns(&mut self, columns: &[Column]) -> std::io::Result<()> {
        self.started = true;
        self.sink.columns(columns)
    }
    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        self.sink.row(row)
    }
}

/// Builds the views of `files` in a new database at `path`.
fn build_views(
    path: &Path,
    files: &[DataFile],
    memory: &Memory,
) -> Result<views::Built, SourceError> {
    let fail = |e: duckdb::Error| open_error("the data files", memory, e);
    let config = base_config(AccessMode::ReadWrite, memory).map_err(fail)?;
    let conn = Connection::open_with_flags(path, config).map_err(fail)?;
    Ok(views::build(&conn, files))
}

/// Mode 0600 for a views database (it names the files).
fn private_file(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}

fn engine_error(e: duckdb::Error) -> ExecError {
    let text = e.to_string();
    if is_reader_error(&text) {
        ExecError::Engine(file_error(&text))
    } else if let Some((first, _)) = text.split_once("\n\nStack Trace:") {
        // DuckDB failed inside itself: its stack trace helps nobody here.
        ExecError::Engine(format!(
            "{first} (DuckDB failed internally on this statement)"
        ))
    } else {
        ExecError::Engine(text)
    }
}

/// DuckDB's file readers explain a bad file in a long block (the whole
/// offending line, every option they guessed, aiq's view statement).
fn is_reader_error(text: &str) -> bool {
    text.contains("Original Line:") || text.contains("\n  file = ") || text.contains("CREATE VIEW")
}

/// One line for a file DuckDB cannot read: what is wrong and what to do.
pub(crate) fn file_error(text: &str) -> String {
    let mut lines = text.lines().map(str::trim);
    let first = lines
        .next()
        .unwrap_or("")
        .trim_start_matches("Invalid Input Error: ")
        .trim_start_matches("IO Error: ")
        .trim_start_matches("Conversion Error: ");
    let reason = text
        .lines()
        .skip_while(|l| !l.starts_with("Original Line:"))
        .skip(1)
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Possible Solution"));
    let line = first
        .strip_prefix("CSV Error on Line: ")
        .map(|n| format!("line {n}"));
    let advice = |r: &str| {
        if r.contains("not utf-8") || r.contains("Invalid unicode") {
            " (save it as UTF-8, e.g. with iconv -f latin1 -t utf-8)"
        } else if r.contains("Maximum line size") {
            " (a line this long is likely not CSV)"
        } else if r.contains("Could not convert") {
            " (a later row does not fit the type DuckDB guessed from the first rows)"
        } else {
            ""
        }
    };
    let mut out = match (line, reason) {
        (Some(line), Some(r)) => format!("{line}: {r}{}", advice(r)),
        _ => first.to_string(),
    };
    if out.chars().count() > 300 {
        out = out.chars().take(300).collect::<String>() + "…";
    }
    out
}

fn describe_type(t: &duckdb::core::LogicalTypeHandle) -> (Kind, String) {
    let alias = t.get_alias();
    if alias.as_deref() == Some("JSON") {
        return (Kind::Json, "JSON".into());
    }
    let id = t.id();
    let name = match id {
        LogicalTypeId::Boolean => "BOOLEAN".into(),
        LogicalTypeId::Tinyint => "TINYINT".into(),
        LogicalTypeId::Smallint => "SMALLINT".into(),
        LogicalTypeId::Integer => "INTEGER".into(),
        LogicalTypeId::Bigint => "BIGINT".into(),
        LogicalTypeId::Hugeint => "HUGEINT".into(),
        LogicalTypeId::UTinyint => "UTINYINT".into(),
        LogicalTypeId::USmallint => "USMALLINT".into(),
        LogicalTypeId::UInteger => "UINTEGER".into(),
        LogicalTypeId::UBigint => "UBIGINT".into(),
        LogicalTypeId::UHugeint => "UHUGEINT".into(),
        LogicalTypeId::Float => "FLOAT".into(),
        LogicalTypeId::Double => "DOUBLE".into(),
        LogicalTypeId::Decimal => format!("DECIMAL({},{})", t.decimal_width(), t.decimal_scale()),
        LogicalTypeId::Varchar => "VARCHAR".into(),
        LogicalTypeId::Blob => "BLOB".into(),
        LogicalTypeId::Date => "DATE".into(),
        LogicalTypeId::Time | LogicalTypeId::TimeNs => "TIME".into(),
        LogicalTypeId::TimeTZ => "TIME WITH TIME ZONE".into(),
        LogicalTypeId::Timestamp
        | LogicalTypeId::TimestampS
        | LogicalTypeId::TimestampMs
        | LogicalTypeId::TimestampNs => "TIMESTAMP".into(),
        LogicalTypeId::TimestampTZ => "TIMESTAMP WITH TIME ZONE".into(),
        LogicalTypeId::Interval => "INTERVAL".into(),
        LogicalTypeId::Uuid => "UUID".into(),
        LogicalTypeId::Enum => "ENUM".into(),
        LogicalTypeId::List => "LIST".into(),
        LogicalTypeId::Array => "ARRAY".into(),
        LogicalTypeId::Struct => "STRUCT".into(),
        LogicalTypeId::Map => "MAP".into(),
        LogicalTypeId::Union => "UNION".into(),
        other => format!("{other:?}").to_ascii_uppercase(),
    };
    let kind = match id {
        LogicalTypeId::TimestampTZ => Kind::TimestampTz,
        LogicalTypeId::Bignum => Kind::NumberText,
        _ => Kind::Plain,
    };
    (kind, name)
}

/// One catalog query per kind of fact: columns (with table kinds and
/// estimates), constraints, then bounded samples.
fn introspect(conn: &Connection, sample_views: bool) -> duckdb::Result<Catalog> {
    let version: String = conn.query_row("SELECT version()", [], |r| r.get(0))?;
    let mut tables: Vec<Table> = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT c.schema_name, c.table_name, c.column_name, c.data_type, c.is_nullable, \
                t.estimated_size, v.view_name IS NOT NULL, coalesce(t.comment, v.comment) \
         FROM duckdb_columns() c \
         LEFT JOIN duckdb_tables() t ON t.table_oid = c.table_oid \
         LEFT JOIN duckdb_views() v ON v.view_oid = c.table_oid \
         WHERE NOT c.internal AND c.database_name = current_database() \
         ORDER BY c.schema_name, c.table_name, c.column_index",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (schema, table): (String, String) = (r.get(0)?, r.get(1)?);
        // A file's table may have dots of its own: `sales.2024.csv` is
        // the table `sales.2024`, not table `2024` of schema `sales`.
        let one_name = schema == "main" && table.contains('.');
        let name = qualified(schema, table);
        if tables.last().map(|t| t.name != name).unwrap_or(true) {
            let is_view: bool = r.get(6)?;
            tables.push(Table {
                name,
                kind: if is_view {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                row_estimate: r.get::<_, Option<i64>>(5)?.map(|n| n.max(0) as u64),
                comment: r.get(7)?,
                one_name,
                ..Table::default()
            });
        }
        if let Some(t) = tables.last_mut() {
            t.columns.push(ColumnInfo {
                name: r.get(2)?,
                type_name: r.get(3)?,
                nullable: r.get(4)?,
                primary_key: false,
                samples: Vec::new(),
            });
        }
    }
    drop(rows);
    constraints(conn, &mut tables)?;
    samples(conn, &mut tables, sample_views);
    Ok(Catalog {
        engine: format!("DuckDB {version}"),
        tables,
    })
}

fn constraints(conn: &Connection, tables: &mut [Table]) -> duckdb::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT schema_name, table_name, constraint_type, constraint_column_names, \
                referenced_table, referenced_column_names \
         FROM duckdb_constraints() \
         WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') AND database_name = current_database()",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let name = qualified(r.get(0)?, r.get(1)?);
        let Some(t) = tables.iter_mut().find(|t| t.name == name) else {
            continue;
        };
        let kind: String = r.get(2)?;
        let cols = string_list(r.get_ref(3)?);
        if kind == "PRIMARY KEY" {
            for c in t.columns.iter_mut().filter(|c| cols.contains(&c.name)) {
                c.primary_key = true;
                c.nullable = false;
            }
        } else {
            t.foreign_keys.push(ForeignKey {
                columns: cols,
                ref_table: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                ref_columns: string_list(r.get_ref(5)?),
            });
        }
    }
    Ok(())
}

fn string_list(v: ValueRef<'_>) -> Vec<String> {
    match v.to_owned() {
        DValue::List(items) => items
            .into_iter()
            .filter_map(|i| match i {
                DValue::Text(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Up to three distinct short values per text column of each base table,
/// from the first rows only, in queries of [`SAMPLE_BATCH`] columns each
/// (DuckDB plans a long `UNION ALL` in time that grows with its square:
/// 2,000 columns in one query took seconds). All or nothing: when the
/// budget runs out, no column gets samples, so a source always gives the
/// same text.
fn samples(conn: &Connection, tables: &mut [Table], sample_views: bool) {
    let targets: Vec<(usize, usize)> = sample_targets(tables, sample_views)
        .into_iter()
        .take(2000)
        .collect();
    if targets.is_empty() {
        return;
    }
    let query = |first: usize, batch: &[(usize, usize)]| {
        let sql = batch
            .iter()
            .enumerate()
            .map(|(i, (ti, ci))| {
                let t = table_ref(&tables[*ti]);
                let c = quote_ident(&tables[*ti].columns[*ci].name);
                format!(
                    "SELECT {} AS k, v FROM (SELECT DISTINCT v FROM (SELECT {c}::VARCHAR AS v FROM {t} LIMIT {SAMPLE_ROWS}) \
                     WHERE v IS NOT NULL)",
                    first + i
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        format!("SELECT k, v FROM ({sql}) ORDER BY k, v")
    };
    let started = std::time::Instant::now();
    let interrupt = conn.interrupt_handle();
    let (result, _) = watchdog(
        SAMPLE_BUDGET,
        move || interrupt.interrupt(),
        || {
            let mut hits = Vec::new();
            for (n, batch) in targets.chunks(SAMPLE_BATCH).enumerate() {
                if started.elapsed() >= SAMPLE_BUDGET {
                    return Err(duckdb::Error::InvalidQuery);
                }
                let mut stmt = conn.prepare(&query(n * SAMPLE_BATCH, batch))?;
                let rows = stmt.query_map([], |r| {
                    Ok((r.get::<_, i64>(0)? as usize, r.get::<_, String>(1)?))
                })?;
                for row in rows {
                    hits.push(row?);
                }
            }
            Ok(hits)
        },
    );
    if let Ok(hits) = result {
        for (k, v) in hits {
            if let Some((ti, ci)) = targets.get(k) {
                offer_sample(&mut tables[*ti].columns[*ci], &v);
            }
        }
    }
}

/// Tables outside the `main` schema are named `schema.table`.
fn qualified(schema: String, table: String) -> String {
    if schema == "main" {
        table
    } else {
        format!("{schema}.{table}")
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod memory_tests;

#[cfg(test)]
#[path = "narrow_tests.rs"]
mod narrow_tests;

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect(Vec<Column>, Vec<Vec<Value>>);
    impl RowSink for Collect {
        fn columns(&mut self, c: &[Column]) -> std::io::Result<()> {
            self.0 = c.to_vec();
            Ok(())
        }
        fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
            self.1.push(row.to_vec());
            Ok(())
        }
    }

    fn run(src: &DuckDbSource, sql: &str) -> Result<Collect, ExecError> {
        let mut sink = Collect(Vec::new(), Vec::new());
        src.execute(
            &CheckedSql::unchecked_for_tests(sql),
            &mut sink,
            &CancelToken::new(),
        )?;
        Ok(sink)
    }

    /// [`run`] for a statement the gate found to only read.
    fn read(src: &DuckDbSource, sql: &str) -> Result<Collect, ExecError> {
        let mut sink = Collect(Vec::new(), Vec::new());
        src.execute(
            &CheckedSql::unchecked_read_for_tests(sql),
            &mut sink,
            &CancelToken::new(),
        )?;
        Ok(sink)
    }

    fn fixture(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("t.duckdb");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE c (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, balance DECIMAL(10,2), ts TIMESTAMP, d DATE, ok BOOLEAN);
             CREATE TABLE o (id INTEGER PRIMARY KEY, c_id INTEGER REFERENCES c(id), tags VARCHAR[]);
             INSERT INTO c VALUES (1, 'Ann', 12.50, '2024-01-02 03:04:05', '2024-02-29', true), (2, 'Bob', NULL, NULL, NULL, false);
             INSERT INTO o VALUES (1, 1, ['a', 'b']);",
        )
        .unwrap();
        path
    }

    /// A statement that breaks the database's state (here one the gate
    /// refuses, run past it) costs that statement only: the connection is
    /// opened again, the next statement answers, and nothing aborts when
    /// the source is dropped.
    #[test]
    fn a_connection_an_error_broke_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture(dir.path());
        let logs = dir.path().join("logs");
        let break_it = format!(
            "SELECT * FROM enable_logging(storage = 'file', storage_path = '{}')",
            logs.display()
        );
        let src = DuckDbSource::open_file(&path, OpenOptions::default()).unwrap();
        let _ = run(&src, &break_it);
        for _ in 0..3 {
            let r = read(&src, "SELECT count(*) FROM c").unwrap();
            assert_eq!(r.1, [[Value::Int(2)]]);
        }
        drop(src);
        assert!(!logs.exists());
        // A data-file source mends the same way.
        let csv = dir.path().join("p.csv");
        std::fs::write(&csv, "a,b\n1,2\n").unwrap();
        let files = [DataFile::single(
            "p".into(),
            csv,
            crate::source::DataFileKind::Csv,
        )];
        let src = DuckDbSource::open_data_files(&files, &[], OpenOptions::default()).unwrap();
        let _ = run(&src, &break_it);
        let r = read(&src, "SELECT b FROM p").unwrap();
        assert_eq!(r.1, [[Value::Int(2)]]);
    }

    #[test]
    fn typed_values() {
        let dir = tempfile::tempdir().unwrap();
        let src = DuckDbSource::open_file(&fixture(dir.path()), OpenOptions::default()).unwrap();
        let r = run(&src, "SELECT id, name, balance, ts, d, ok, 2::HUGEINT AS h, 1.5::DOUBLE AS f, INTERVAL 90 MINUTE AS i FROM c ORDER BY id").unwrap();
        assert_eq!(r.0[2].type_name, "DECIMAL(10,2)");
        let row = &r.1[0];
        assert_eq!(row[0], Value::Int(1));
        assert_eq!(row[1], Value::Text("Ann".into()));
        assert_eq!(row[2], Value::Decimal("12.50".into()));
        assert_eq!(row[3].to_text(), "2024-01-02 03:04:05");
        assert_eq!(row[4].to_text(), "2024-02-29");
        assert_eq!(row[5], Value::Bool(true));
        assert_eq!(row[6], Value::BigInt(2));
        assert_eq!(row[7], Value::Float(1.5));
        assert_eq!(row[8].to_text(), "01:30:00");
        assert_eq!(r.1[1][2], Value::Null);
        let lists = run(&src, "SELECT tags FROM o").unwrap();
        assert_eq!(lists.1[0][0], Value::Json(r#"["a","b"]"#.into()));
    }

    #[test]
    fn engine_layer_refuses_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture(dir.path());
        let before = std::fs::read(&path).unwrap();
        let src = DuckDbSource::open_file(&path, OpenOptions::default()).unwrap();
        let out = dir.path().join("out.csv");
        for sql in [
            "DELETE FROM c".to_string(),
            "INSERT INTO c VALUES (3, 'x', 1, NULL, NULL, NULL)".into(),
            "CREATE TABLE z (a INT)".into(),
            "DROP TABLE o".into(),
            format!("COPY c TO '{}'", out.display()),
            "SELECT * FROM read_csv('/etc/passwd')".into(),
            "SELECT * FROM '/etc/passwd'".into(),
            format!(
                "ATTACH '{}' AS other",
                dir.path().join("other.duckdb").display()
            ),
            "INSTALL httpfs".into(),
            "LOAD httpfs".into(),
            "SET enable_external_access = true".into(),
        ] {
            assert!(run(&src, &sql).is_err(), "engine allowed: {sql}");
        }
        drop(src);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.duckdb"]);
    }

    /// A glob's source reads the files the glob matched, not the rest of
    /// the folder it starts from (SPEC §4.2).
    #[test]
    fn a_glob_reads_only_the_files_it_matched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("logs")).unwrap();
        std::fs::write(root.join("logs/a.csv"), "id\n1\n").unwrap();
        std::fs::write(root.join("logs/b.csv"), "id\n2\n").unwrap();
        std::fs::write(root.join("logs/secret.tsv"), "pw\nhunter2\n").unwrap();
        std::fs::write(root.join("config.csv"), "pw\nhunter3\n").unwrap();
        let pattern = format!("{}/logs/*.csv", root.display());
        let crate::source::SourceSpec::DataFiles { files, .. } =
            crate::source::spec::resolve_location(&pattern).unwrap()
        else {
            panic!("a glob is data files");
        };
        assert!(files[0].glob);
        let src = DuckDbSource::open_data_files(&files, &[], OpenOptions::default()).unwrap();
        let r = read(&src, "SELECT sum(id)::INTEGER FROM logs").unwrap();
        assert_eq!(r.1, [[Value::Int(3)]]);
        for outside in ["logs/secret.tsv", "config.csv"] {
            let sql = format!("SELECT * FROM read_csv('{}')", root.join(outside).display());
            let r = run(&src, &sql);
            assert!(r.is_err(), "{outside}: {:?}", r.map(|c| c.1));
        }
    }

    #[test]
    fn data_files_are_views_confined_to_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, "id,name\n1,Ann\n2,Bob\n").unwrap();
        let secret = dir.path().join("secret.csv");
        std::fs::write(&secret, "x\n1\n").unwrap();
        let files = vec![DataFile::single(
            "people".into(),
            csv.canonicalize().unwrap(),
            crate::source::DataFileKind::Csv,
        )];
        let src = DuckDbSource::open_data_files(&files, &[], OpenOptions::default()).unwrap();
        let r = run(&src, "SELECT name FROM people ORDER BY id").unwrap();
        assert_eq!(
            r.1,
            [[Value::Text("Ann".into())], [Value::Text("Bob".into())]]
        );
        let secret_sql = format!("SELECT * FROM read_csv('{}')", secret.display());
        assert!(run(&src, &secret_sql).is_err());
        let copy_sql = format!("COPY (SELECT 1) TO '{}'", csv.display());
        assert!(run(&src, &copy_sql).is_err(), "overwrote the source file");
        assert!(run(&src, "CREATE TABLE t AS SELECT 1").is_err());
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            "id,name\n1,Ann\n2,Bob\n"
        );
        let cat = src.introspect().unwrap();
        assert_eq!(cat.tables[0].name, "people");
        assert_eq!(cat.tables[0].kind, TableKind::View);
    }

    #[test]
    fn catalog_has_keys_and_samples() {
        let dir = tempfile::tempdir().unwrap();
        let src = DuckDbSource::open_file(&fixture(dir.path()), OpenOptions::default()).unwrap();
        let cat = src.introspect().unwrap();
        let c = cat.table("c").unwrap();
        assert!(c.columns[0].primary_key);
        assert_eq!(c.columns[1].samples, ["Ann", "Bob"]);
        let o = cat.table("o").unwrap();
        assert_eq!(o.foreign_keys[0].ref_table, "c");
        assert_eq!(o.foreign_keys[0].columns, ["c_id"]);
    }

    #[test]
    fn samples_come_for_every_column_across_batches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wide.duckdb");
        let n = SAMPLE_BATCH * 2 + 7;
        let conn = Connection::open(&path).unwrap();
        for t in 0..n {
            conn.execute_batch(&format!(
                "CREATE TABLE t{t:03} (id INTEGER PRIMARY KEY, label VARCHAR);
                 INSERT INTO t{t:03} VALUES (1, 'v{t}'), (2, 'w{t}');"
            ))
            .unwrap();
        }
        drop(conn);
        let src = DuckDbSource::open_file(&path, OpenOptions::default()).unwrap();
        let cat = src.introspect().unwrap();
        for t in 0..n {
            let table = cat.table(&format!("t{t:03}")).unwrap();
            assert_eq!(
                table.columns[1].samples,
                [format!("v{t}"), format!("w{t}")],
                "t{t:03}"
            );
        }
    }
}
