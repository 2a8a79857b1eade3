//! SQLite through rusqlite. Layer 2 of the safety policy lives here: the
//! file is opened read-only, `query_only` is on, no database may be attached,
//! and an authorizer denies every action but reading — so even a statement
//! that slipped past the parser gate cannot change anything.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{NaiveDate, NaiveDateTime};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::{
    quote_ident, quote_str, watchdog, CancelToken, Column, DataSource, EngineKind, ExecError,
    Interruptible, OpenOptions, QueryStats, RowSink, SourceError, Value,
};
use crate::safety::{pragma_only_reads, CheckedSql, EngineReading, Hidden};
use crate::schema::{
    offer_sample, sample_targets, Catalog, ColumnInfo, ForeignKey, Table, TableKind,
    REACHES_UNKNOWN, SAMPLE_ROWS,
};

/// How long introspection may spend on sample values. A safety net for
/// pathological files only: sampling reads a bounded number of rows per
/// table, so the same file always gives the same samples (and the same
/// prompt).
const SAMPLE_BUDGET: Duration = Duration::from_millis(1000);
/// SQLite's default limit on members of a compound SELECT is 500.
const COMPOUND_CHUNK: usize = 400;

pub(crate) struct SqliteSource {
    conn: Connection,
    /// Filled by the authorizer while a statement is read (SPEC §4.2).
    reads: Reads,
    options: OpenOptions,
    path: std::path::PathBuf,
}

impl SqliteSource {
    pub(crate) fn open(path: &Path, options: OpenOptions) -> Result<Self, SourceError> {
        let flags = if options.allow_write {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } else {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let fail = |e: rusqlite::Error| {
            SourceError(format!("cannot open {} as SQLite: {}", path.display(), e))
        };
        let mut conn = Connection::open_with_flags(path, flags).map_err(fail)?;
        // Reading the header proves this is a SQLite database at all,
        // without parsing every table's definition yet.
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
            .map_err(fail)?;
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)
            .map_err(fail)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(fail)?;
        let reads = Reads::default();
        if options.allow_write {
            conn.authorizer(Some(noting(write_policy, reads.clone())))
                .map_err(fail)?;
        } else {
            conn.execute_batch("PRAGMA query_only = 1").map_err(fail)?;
            conn.authorizer(Some(noting(read_only_policy, reads.clone())))
                .map_err(fail)?;
        }
        Ok(SqliteSource {
            conn,
            reads,
            options,
            path: path.to_path_buf(),
        })
    }

    fn stream(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<u64, ExecError> {
        // SQLite asks the authorizer while it prepares (and re-prepares
        // after a schema change), so the denial spans the whole run.
        let _denying = Denying::new(&self.reads, sql);
        let hiding = sql.hidden().is_some();
        let fail = |e| engine_error(e, hiding);
        let mut stmt = self.conn.prepare(sql.sql()).map_err(fail)?;
        let columns: Vec<Column> = stmt
            .columns()
            .map(|c| Column::new(c.name(), c.decl_type().unwrap_or("")))
            .collect();
        let hints: Vec<Hint> = columns
            .iter()
            .map(|c| Hint::from_decl(&c.type_name))
            .collect();
        sink.columns(&columns)?;
        if columns.is_empty() {
            stmt.raw_execute().map_err(fail)?;
            return Ok(self.conn.changes());
        }
        let mut rows = stmt.query([]).map_err(fail)?;
        Interruptible::pump(cancel, columns.len(), sink, |buf| {
            let Some(row) = rows.next().map_err(fail)? else {
                return Ok(false);
            };
            for (i, hint) in hints.iter().enumerate() {
                buf.push(convert(row.get_ref(i).map_err(fail)?, *hint));
            }
            Ok(true)
        })
    }
}

impl DataSource for SqliteSource {
    fn own_files(&self) -> Vec<std::path::PathBuf> {
        vec![self.path.clone()]
    }

    /// None: a SQLite file defines no functions; its authorizer holds every
    /// call to SQLite's list.
    fn user_functions(&self) -> Option<std::sync::Arc<crate::safety::UserFunctions>> {
        None
    }

    fn kind(&self) -> EngineKind {
        EngineKind::Sqlite
    }

    /// Read-only connections only: readers of one SQLite file do not block
    /// each other, writers would.
    fn another(&self) -> Option<Box<dyn DataSource>> {
        if self.options.allow_write {
            return None;
        }
        match SqliteSource::open(&self.path, self.options.clone()) {
            Ok(more) => Some(Box::new(more)),
            Err(e) => {
                tracing::warn!("one connection for {}: {e}", self.path.display());
                None
            }
        }
    }

    fn fingerprint(&self) -> Option<String> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA schema_version", [], |r| r.get(0))
            .ok()?;
        Some(format!(
            "schema {version};{}",
            super::files_fingerprint(std::slice::from_ref(&self.path))
        ))
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        introspect(&self.conn, &self.reads)
            .map_err(|e| SourceError(format!("cannot read the SQLite schema: {e}")))
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let interrupt = self.conn.get_interrupt_handle();
        Interruptible::execute(
            sql,
            self.options.timeout,
            cancel,
            move || interrupt.interrupt(),
            || self.stream(sql, sink, cancel),
        )
    }

    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        let _denying = Denying::new(&self.reads, sql);
        columns_of(&self.conn, &self.reads, sql.sql())
    }

    fn read_statement(&self, sql: &str) -> Option<Result<EngineReading, String>> {
        let reading = read_statement(&self.conn, sql);
        // The tables it reads, as SQLite's own authorizer is asked while it
        // prepares the statement (through views, CTEs, pragma functions).
        Some(reading.and_then(|mut r| {
            if r.statements == 1 {
                r.reads = Some(reads_of(&self.conn, &self.reads, sql)?);
            }
            Ok(r)
        }))
    }
}

/// SQLite's own reading of `sql` (SPEC §4.2): its parser prepares the
/// statement (nothing runs) and `sqlite3_stmt_readonly` says whether it
/// writes, so `SELECT * FROM pragma_optimize` is a write like any other.
fn read_statement(conn: &Connection, sql: &str) -> Result<EngineReading, String> {
    let kind = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    let stmt = match conn.prepare(sql) {
        Ok(stmt) => stmt,
        Err(rusqlite::Error::MultipleStatement) => {
            return Ok(EngineReading {
                statements: 2,
                statement: sql.to_string(),
                writes: true,
                kind,
                ..EngineReading::default()
            })
        }
        Err(e) => return Err(e.to_string()),
    };
    let writes = !stmt.readonly();
    let query =
        !writes && stmt.column_count() > 0 && matches!(kind.as_str(), "SELECT" | "WITH" | "VALUES");
    drop(stmt);
    let table_calls = if query {
        pragma_tables(conn, sql)?
    } else {
        Vec::new()
    };
    Ok(EngineReading {
        statements: 1,
        statement: sql.to_string(),
        writes,
        kind,
        calls: table_calls.clone(),
        table_calls,
        query,
        ..EngineReading::default()
    })
}

/// The pragma table functions a query scans (`pragma_optimize`), from
/// SQLite's own plan: `sqlite3_stmt_readonly` counts them as reads, though
/// some run a pragma that writes.
fn pragma_tables(conn: &Connection, sql: &str) -> Result<Vec<String>, String> {
    let mut plan = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .map_err(|e| e.to_string())?;
    let details = plan
        .query_map([], |r| r.get::<_, String>(3))
        .map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    for detail in details {
        let detail = detail.map_err(|e| e.to_string())?;
        for word in detail.split_whitespace() {
            let word = word.to_ascii_lowercase();
            if word.starts_with("pragma_") && !found.contains(&word) {
                found.push(word);
            }
        }
    }
    Ok(found)
}

/// What the source's authorizer watches for: the reads of a statement
/// whose reading is being taken, and the tables it must deny while a
/// checked statement is prepared and runs.
#[derive(Default)]
struct Watch {
    /// Each table (or view, or pragma function) read, once; `Some` only
    /// while a reading is taken.
    reads: Option<Vec<String>>,
    /// Each column read, `(table, column)` lowercase; `Some` only while
    /// [`columns_of`] takes them (SPEC §4.3).
    columns: Option<Vec<crate::safety::ColumnRead>>,
    /// The hidden tables of the statement being run: SQLite itself denies
    /// reading them, their views, the catalogs and pragmas (SPEC §4.2,
    /// layer 2), whatever the gate let through.
    hidden: Option<std::sync::Arc<Hidden>>,
}

type Reads = std::sync::Arc<std::sync::Mutex<Watch>>;

/// The source's authorizer: `policy`, noting what is read into `reads`
/// while a reading is taken, and denying what is hidden while a checked
/// statement runs.
fn noting(
    policy: fn(AuthContext<'_>) -> Authorization,
    reads: Reads,
) -> impl FnMut(AuthContext<'_>) -> Authorization + Send + 'static {
    move |ctx: AuthContext<'_>| {
        // A pragma reads what it names (`PRAGMA table_info('t')` reads t)
        // and, as the catalog it is, `pragma_NAME`.
        if let AuthAction::Read {
            table_name,
            column_name,
        } = ctx.action
        {
            if let Ok(mut watch) = reads.lock() {
                if let Some(columns) = watch.columns.as_mut() {
                    // An empty column name is the rowid.
                    let read = (table_name.to_lowercase(), column_name.to_lowercase());
                    if !read.1.is_empty() && !columns.contains(&read) {
                        columns.push(read);
                    }
                }
            }
        }
        let read: Vec<String> = match ctx.action {
            AuthAction::Read { table_name, .. } => vec![table_name.to_lowercase()],
            AuthAction::Pragma {
                pragma_name,
                pragma_value,
            } => std::iter::once(format!("pragma_{}", pragma_name.to_lowercase()))
                .chain(
                    pragma_value.map(|v| v.trim_matches(['\'', '"', '`', '[', ']']).to_lowercase()),
                )
                .collect(),
            _ => Vec::new(),
        };
        if !read.is_empty() {
            let Ok(mut watch) = reads.lock() else {
                return Authorization::Deny;
            };
            if let Some(hidden) = &watch.hidden {
                if read
                    .iter()
                    .any(|t| hidden.hides(t) || crate::safety::is_catalog(t))
                {
                    return Authorization::Deny;
                }
            }
            if let Some(seen) = watch.reads.as_mut() {
                for table in read {
                    if !seen.contains(&table) {
                        seen.push(table);
                    }
                }
            }
        }
        policy(ctx)
    }
}

/// What `sql` reads, as SQLite asks its authorizer while preparing it
/// (through views, CTEs and pragma functions alike); nothing runs.
fn reads_of(conn: &Connection, reads: &Reads, sql: &str) -> Result<Vec<String>, String> {
    let set = |v: Option<Vec<String>>| {
        reads
            .lock()
            .map(|mut g| std::mem::replace(&mut g.reads, v))
            .ok()
            .flatten()
    };
    set(Some(Vec::new()));
    let prepared = conn.prepare(sql).map(drop).map_err(|e| e.to_string());
    let seen = set(None).unwrap_or_default();
    prepared.map(|()| seen)
}

/// The columns `sql` reads, as SQLite asks its authorizer while preparing
/// it (through views, CTEs and subqueries, down to the tables' columns);
/// nothing runs. A statement that does not prepare reads nothing: it fails
/// the same way when it runs, before reading (the message names, never
/// holds values).
fn columns_of(
    conn: &Connection,
    reads: &Reads,
    sql: &str,
) -> Option<Vec<crate::safety::ColumnRead>> {
    let set = |v: Option<Vec<crate::safety::ColumnRead>>| {
        reads
            .lock()
            .map(|mut g| std::mem::replace(&mut g.columns, v))
            .ok()
            .flatten()
    };
    set(Some(Vec::new()));
    let prepared = conn.prepare(sql).map(drop);
    let seen = set(None).unwrap_or_default();
    Some(if prepared.is_ok() { seen } else { Vec::new() })
}

/// Denies `sql`'s hidden tables in the authorizer until dropped.
struct Denying<'a>(&'a Reads);

impl<'a> Denying<'a> {
    fn new(reads: &'a Reads, sql: &CheckedSql) -> Denying<'a> {
        if let Ok(mut watch) = reads.lock() {
            watch.hidden = sql.hidden().cloned();
        }
        Denying(reads)
    }
}

impl Drop for Denying<'_> {
    fn drop(&mut self) {
        if let Ok(mut watch) = self.0.lock() {
            watch.hidden = None;
        }
    }
}

fn read_only_policy(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name } => allow_function(function_name),
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } if pragma_only_reads(pragma_name, pragma_value.is_some()) => Authorization::Allow,
        _ => Authorization::Deny,
    }
}

/// With `--allow-write`: data may change, the engine's configuration may
/// not (SPEC §4.2): pragmas only read, or do what
/// [`crate::safety::pragma_changes_data`] allows.
fn write_policy(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Attach { .. } | AuthAction::Detach { .. } => Authorization::Deny,
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } if !pragma_only_reads(pragma_name, pragma_value.is_some())
            && !crate::safety::pragma_changes_data(pragma_name) =>
        {
            Authorization::Deny
        }
        AuthAction::Function { function_name } => allow_function(function_name),
        _ => Authorization::Allow,
    }
}

/// Only SQLite's built-ins on aiq's allow-list run (SPEC §4.2, "Behind a
/// name"): not `load_extension`, nor anything an extension would add.
fn allow_function(name: &str) -> Authorization {
    if crate::safety::sqlite_allows(name) {
        Authorization::Allow
    } else {
        Authorization::Deny
    }
}

/// An engine error; `hiding` when tables of the source are hidden, so a
/// denial may be SQLite refusing to read one of them.
fn engine_error(e: rusqlite::Error, hiding: bool) -> ExecError {
    let msg = e.to_string();
    let denied = msg.contains("not authorized") || msg.contains("prohibited");
    if denied && hiding {
        ExecError::Engine(format!(
            "{msg} (SQLite denies reading tables hidden from aiq, views over them and the catalog; writes, ATTACH and extensions are refused too)"
        ))
    } else if denied {
        ExecError::Engine(format!(
            "{msg} (the source is open read-only; aiq refuses writes, ATTACH and extensions)"
        ))
    } else {
        ExecError::Engine(msg)
    }
}

/// What a column's declared type says about its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hint {
    Plain,
    Bool,
    /// `DECIMAL(p,s)`/`NUMERIC(p,s)` with a scale: numbers shown with `s` places.
    Decimal(usize),
    Date,
    Timestamp,
    Json,
}

impl Hint {
    fn from_decl(decl: &str) -> Hint {
        let d = decl.to_ascii_uppercase();
        if let Some(scale) = decimal_scale(&d) {
            Hint::Decimal(scale)
        } else if d.starts_with("BOOL") {
            Hint::Bool
        } else if d == "DATE" {
            Hint::Date
        } else if d.starts_with("DATETIME") || d.starts_with("TIMESTAMP") {
            Hint::Timestamp
        } else if d == "JSON" || d == "JSONB" {
            Hint::Json
        } else {
            Hint::Plain
        }
    }
}

/// The scale of `DECIMAL(p,s)` or `NUMERIC(p,s)`, when it is above zero.
fn decimal_scale(decl: &str) -> Option<usize> {
    let rest = decl
        .strip_prefix("DECIMAL")
        .or_else(|| decl.strip_prefix("NUMERIC"))?;
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (_, scale) = inner.split_once(',')?;
    scale.trim().parse().ok().filter(|s| (1..=18).contains(s))
}

fn convert(v: ValueRef<'_>, hint: Hint) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) if hint == Hint::Bool => Value::Bool(i != 0),
        // SQLite keeps DECIMAL columns as integers or floats; show them with
        // their declared scale, as the other engines do.
        ValueRef::Integer(i) => match hint {
            Hint::Decimal(scale) => Value::Decimal(format!("{i}.{}", "0".repeat(scale))),
            _ => Value::Int(i),
        },
        ValueRef::Real(f) => match hint {
            Hint::Decimal(scale) if f.is_finite() => Value::Decimal(format!("{f:.scale$}")),
            _ => Value::Float(f),
        },
        ValueRef::Text(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            match hint {
                Hint::Date => match NaiveDate::parse_from_str(&text, "%Y-%m-%d") {
                    Ok(d) => Value::Date(d),
                    Err(_) => Value::Text(text.into_owned()),
                },
                Hint::Timestamp => match parse_timestamp(&text) {
                    Some(t) => Value::Timestamp(t),
                    None => Value::Text(text.into_owned()),
                },
                Hint::Json => Value::Json(text.into_owned()),
                Hint::Plain | Hint::Bool | Hint::Decimal(_) => Value::Text(text.into_owned()),
            }
        }
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

fn parse_timestamp(text: &str) -> Option<NaiveDateTime> {
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
}

/// Reads the catalog in one query per kind of fact: columns, foreign keys,
/// row estimates, samples (the last two chunked by SQLite's compound limit).
fn introspect(conn: &Connection, reads: &Reads) -> rusqlite::Result<Catalog> {
    let version: String = conn.query_row("SELECT sqlite_version()", [], |r| r.get(0))?;
    let mut tables: Vec<Table> = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT m.name, m.type, p.name, p.type, p.\"notnull\", p.pk \
         FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS p \
         WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         ORDER BY m.name, p.cid",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let name: String = r.get(0)?;
        if tables.last().map(|t| t.name != name).unwrap_or(true) {
            let kind: String = r.get(1)?;
            tables.push(Table {
                // One file, one schema: a dot is the name's own.
                one_name: name.contains('.'),
                name,
                kind: if kind == "view" {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                ..Table::default()
            });
        }
        if let Some(t) = tables.last_mut() {
            let pk: i64 = r.get(5)?;
            t.columns.push(ColumnInfo {
                name: r.get(2)?,
                type_name: r.get(3)?,
                nullable: r.get::<_, i64>(4)? == 0 && pk == 0,
                primary_key: pk > 0,
                samples: Vec::new(),
            });
        }
    }
    drop(rows);
    drop(stmt);
    reaches(conn, reads, &mut tables)?;
    let started = Instant::now();
    foreign_keys(conn, &mut tables)?;
    tracing::debug!(elapsed = ?started.elapsed(), tables = tables.len(), "columns and foreign keys read");
    row_estimates(conn, &mut tables)?;
    tracing::debug!(elapsed = ?started.elapsed(), "row estimates read");
    samples(conn, &mut tables);
    tracing::debug!(elapsed = ?started.elapsed(), "samples read");
    Ok(Catalog {
        engine: format!("SQLite {version}"),
        tables,
    })
}

/// What each view and shadow table reaches (SPEC §4.2, "Behind a
/// name"): a view, the tables SQLite's authorizer sees it read; an FTS or
/// R*Tree shadow table (`docs_content`), the virtual table it stores.
fn reaches(conn: &Connection, reads: &Reads, tables: &mut [Table]) -> rusqlite::Result<()> {
    let mut kinds =
        conn.prepare("SELECT name, type FROM pragma_table_list WHERE schema = 'main'")?;
    let listed: Vec<(String, String)> = kinds
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let virtuals: Vec<&String> = listed
        .iter()
        .filter(|(_, kind)| kind == "virtual")
        .map(|(name, _)| name)
        .collect();
    for table in tables.iter_mut() {
        let kind = listed
            .iter()
            .find(|(n, _)| *n == table.name)
            .map(|(_, k)| k.as_str());
        if kind == Some("shadow") {
            // The longest virtual table name the shadow table's starts with.
            let owner = virtuals
                .iter()
                .filter(|v| {
                    table.name.len() > v.len()
                        && table.name[..v.len()].eq_ignore_ascii_case(v)
                        && table.name.as_bytes()[v.len()] == b'_'
                })
                .max_by_key(|v| v.len());
            table.reaches = vec![owner.map_or(REACHES_UNKNOWN.to_string(), |o| o.to_lowercase())];
        } else if table.kind == TableKind::View {
            let own = table.name.to_lowercase();
            let sql = format!("SELECT * FROM {}", quote_ident(&table.name));
            table.reaches = match reads_of(conn, reads, &sql) {
                Ok(seen) => seen.into_iter().filter(|t| *t != own).collect(),
                Err(_) => vec![REACHES_UNKNOWN.to_string()],
            };
        }
    }
    Ok(())
}

fn table_index(tables: &[Table], name: &str) -> Option<usize> {
    tables.binary_search_by(|t| t.name.as_str().cmp(name)).ok()
}

fn foreign_keys(conn: &Connection, tables: &mut [Table]) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT m.name, f.id, f.\"table\", f.\"from\", f.\"to\" \
         FROM sqlite_schema AS m JOIN pragma_foreign_key_list(m.name) AS f \
         WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq",
    )?;
    let mut rows = stmt.query([])?;
    let mut last: Option<(String, i64)> = None;
    while let Some(r) = rows.next()? {
        let table: String = r.get(0)?;
        let id: i64 = r.get(1)?;
        let Some(ti) = table_index(tables, &table) else {
            continue;
        };
        let to: Option<String> = r.get(4)?;
        let from: String = r.get(3)?;
        let fks = &mut tables[ti].foreign_keys;
        if last.as_ref() == Some(&(table.clone(), id)) {
            if let Some(fk) = fks.last_mut() {
                fk.columns.push(from);
                fk.ref_columns.push(to.unwrap_or_default());
            }
        } else {
            fks.push(ForeignKey {
                columns: vec![from],
                ref_table: r.get(2)?,
                ref_columns: vec![to.unwrap_or_else(|| "rowid".into())],
            });
            last = Some((table, id));
        }
    }
    Ok(())
}

/// Row estimates from `sqlite_stat1` (after ANALYZE) or else `max(rowid)`,
/// which SQLite answers from the b-tree without a scan.
fn row_estimates(conn: &Connection, tables: &mut [Table]) -> rusqlite::Result<()> {
    let has_stat: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if has_stat {
        let mut stmt =
            conn.prepare("SELECT tbl, max(CAST(stat AS INTEGER)) FROM sqlite_stat1 GROUP BY tbl")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(0)?;
            if let Some(i) = table_index(tables, &name) {
                tables[i].row_estimate = r.get::<_, Option<i64>>(1)?.map(|n| n.max(0) as u64);
            }
        }
    }
    let mut rowid_tables: Vec<String> = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND wr = 0 \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let name: String = r.get(0)?;
        if let Some(i) = table_index(tables, &name) {
            if tables[i].row_estimate.is_none() {
                rowid_tables.push(name);
            }
        }
    }
    for chunk in rowid_tables.chunks(COMPOUND_CHUNK) {
        let sql = chunk
            .iter()
            .map(|t| {
                format!(
                    "SELECT {}, (SELECT max(rowid) FROM {})",
                    quote_str(t),
                    quote_ident(t)
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(0)?;
            let n: Option<i64> = r.get(1)?;
            if let Some(i) = table_index(tables, &name) {
                tables[i].row_estimate = Some(n.unwrap_or(0).max(0) as u64);
            }
        }
    }
    Ok(())
}

/// Sample values for the text columns of every table: the first rows of
/// each, read in compound queries and filtered by [`offer_sample`], until
/// the time budget runs out.
fn samples(conn: &Connection, tables: &mut [Table]) {
    let targets = sample_targets(tables, false);
    let interrupt = conn.get_interrupt_handle();
    let deadline = Instant::now() + SAMPLE_BUDGET;
    let mut hits: Vec<(usize, String)> = Vec::new();
    let sql_for = |chunk: &[(usize, usize)]| {
        chunk
            .iter()
            .enumerate()
            .map(|(k, (ti, ci))| {
                let t = quote_ident(&tables[*ti].name);
                let c = quote_ident(&tables[*ti].columns[*ci].name);
                format!("SELECT {k}, v FROM (SELECT {c} AS v FROM {t} LIMIT {SAMPLE_ROWS})")
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ")
    };
    let chunks: Vec<(usize, String)> = targets
        .chunks(COMPOUND_CHUNK)
        .enumerate()
        .map(|(i, chunk)| (i * COMPOUND_CHUNK, sql_for(chunk)))
        .collect();
    watchdog(
        SAMPLE_BUDGET,
        move || interrupt.interrupt(),
        || {
            for (offset, sql) in &chunks {
                if Instant::now() > deadline {
                    break;
                }
                let read: rusqlite::Result<()> = (|| {
                    let mut stmt = conn.prepare(sql)?;
                    let mut rows = stmt.query([])?;
                    while let Some(r) = rows.next()? {
                        if let ValueRef::Text(v) = r.get_ref(1)? {
                            let k = r.get::<_, i64>(0)? as usize;
                            hits.push((offset + k, String::from_utf8_lossy(v).into_owned()));
                        }
                    }
                    Ok(())
                })();
                if read.is_err() {
                    break;
                }
            }
        },
    );
    for (k, v) in hits {
        let (ti, ci) = targets[k];
        offer_sample(&mut tables[ti].columns[ci], &v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Value;

    struct Collect(Vec<Vec<Value>>);
    impl RowSink for Collect {
        fn columns(&mut self, _: &[Column]) -> std::io::Result<()> {
            Ok(())
        }
        fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
            self.0.push(row.to_vec());
            Ok(())
        }
    }

    fn fixture(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("t.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE c (id INTEGER PRIMARY KEY, name TEXT NOT NULL, vip BOOLEAN, born DATE);
             CREATE TABLE o (id INTEGER PRIMARY KEY, c_id INTEGER REFERENCES c(id), at TIMESTAMP, amount REAL);
             INSERT INTO c VALUES (1, 'Ann', 1, '1990-05-01'), (2, 'Bob', 0, NULL);
             INSERT INTO o VALUES (1, 1, '2024-01-02 03:04:05', 9.5);
             CREATE VIEW big AS SELECT * FROM o WHERE amount > 5;",
        )
        .unwrap();
        path
    }

    /// What a statement reads, as SQLite's authorizer tells it: through a
    /// view, `*`, a subquery, and comments as SQLite reads them (block
    /// comments do not nest).
    #[test]
    fn the_authorizer_names_the_columns_a_statement_reads() {
        let dir = tempfile::tempdir().unwrap();
        let src = SqliteSource::open(&fixture(dir.path()), OpenOptions::default()).unwrap();
        let read = |sql: &str| {
            let checked =
                crate::safety::check(sql, crate::safety::Dialect::Sqlite, &Default::default())
                    .unwrap();
            let mut v: Vec<String> = src
                .columns_read(&checked)
                .unwrap()
                .into_iter()
                .map(|(t, c)| format!("{t}.{c}"))
                .collect();
            v.sort();
            v
        };
        assert_eq!(read("SELECT name FROM c"), ["c.name"]);
        assert_eq!(read("SELECT count(*) FROM c"), Vec::<String>::new());
        assert_eq!(
            read("SELECT ALL * FROM c"),
            ["c.born", "c.id", "c.name", "c.vip"]
        );
        // A view: its own column, and every column its query reads.
        assert_eq!(
            read("SELECT c_id FROM big"),
            ["big.c_id", "o.amount", "o.at", "o.c_id", "o.id"]
        );
        assert_eq!(
            read("SELECT id /* /* */, name -- */\nFROM c"),
            ["c.id", "c.name"]
        );
        assert_eq!(
            read("SELECT (SELECT max(born) FROM c) WHERE 1 IN (SELECT vip FROM c)"),
            ["c.born", "c.vip"]
        );
    }

    fn run(src: &SqliteSource, sql: &str) -> Result<Vec<Vec<Value>>, ExecError> {
        let mut sink = Collect(Vec::new());
        src.execute(
            &CheckedSql::unchecked_for_tests(sql),
            &mut sink,
            &CancelToken::new(),
        )?;
        Ok(sink.0)
    }

    #[test]
    fn typed_values() {
        let dir = tempfile::tempdir().unwrap();
        let src = SqliteSource::open(&fixture(dir.path()), OpenOptions::default()).unwrap();
        let rows = run(&src, "SELECT c.id, c.name, c.vip, c.born, o.at, o.amount FROM c LEFT JOIN o ON o.c_id = c.id ORDER BY c.id").unwrap();
        assert_eq!(rows[0][0], Value::Int(1));
        assert_eq!(rows[0][2], Value::Bool(true));
        assert_eq!(
            rows[0][3],
            Value::Date(NaiveDate::from_ymd_opt(1990, 5, 1).unwrap())
        );
        assert_eq!(rows[0][4].to_text(), "2024-01-02 03:04:05");
        assert_eq!(rows[0][5], Value::Float(9.5));
        assert_eq!(rows[1][3], Value::Null);
    }

    #[test]
    fn declared_decimals_keep_their_scale() {
        assert_eq!(decimal_scale("DECIMAL(10,2)"), Some(2));
        assert_eq!(decimal_scale("NUMERIC(8, 3)"), Some(3));
        assert_eq!(decimal_scale("DECIMAL(10,0)"), None);
        assert_eq!(decimal_scale("DECIMAL"), None);
        let h = Hint::from_decl("decimal(10,2)");
        assert_eq!(
            convert(ValueRef::Integer(795), h),
            Value::Decimal("795.00".into())
        );
        assert_eq!(
            convert(ValueRef::Real(19.99), h),
            Value::Decimal("19.99".into())
        );
        assert_eq!(
            convert(ValueRef::Real(0.5), h),
            Value::Decimal("0.50".into())
        );
    }

    #[test]
    fn engine_layer_refuses_writes_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture(dir.path());
        let before = std::fs::read(&path).unwrap();
        let src = SqliteSource::open(&path, OpenOptions::default()).unwrap();
        for sql in [
            "DELETE FROM c",
            "INSERT INTO c VALUES (3, 'x', 0, NULL)",
            "UPDATE c SET name = 'x'",
            "DROP TABLE o",
            "CREATE TABLE z (a)",
            "CREATE TEMP TABLE z (a)",
            "PRAGMA query_only = 0",
            "PRAGMA user_version = 7",
            "ATTACH DATABASE 'other.db' AS other",
            "VACUUM INTO 'copy.db'",
            "SELECT load_extension('x')",
            "BEGIN",
            "WITH x AS (SELECT 1) DELETE FROM c",
            "CREATE TRIGGER t AFTER INSERT ON c BEGIN DELETE FROM o; END",
        ] {
            assert!(run(&src, sql).is_err(), "engine allowed: {sql}");
        }
        drop(src);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(!dir.path().join("copy.db").exists());
        assert!(!dir.path().join("other.db").exists());
    }

    /// Layer 2 on its own: with `o` hidden, SQLite's authorizer denies
    /// every way of reading it that a statement past the gate could take,
    /// in both modes, and still runs what reads only visible tables.
    /// A view reaches the tables it reads, a shadow table its virtual
    /// table (SPEC §4.2, "Behind a name"); and a visible FTS table answers
    /// MATCH while another is hidden.
    #[test]
    fn views_and_shadow_tables_reach_what_stands_behind_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fts.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE payroll(emp INT, salary INT);
             CREATE VIEW staff AS SELECT * FROM (SELECT emp, salary FROM payroll);
             CREATE VIEW staff2 AS SELECT * FROM staff;
             CREATE VIRTUAL TABLE payfts USING fts5(note);
             CREATE VIRTUAL TABLE docs USING fts5(body);
             INSERT INTO docs VALUES ('hello world');",
        )
        .unwrap();
        drop(conn);
        let src = SqliteSource::open(&path, OpenOptions::default()).unwrap();
        let catalog = src.introspect().unwrap();
        let reaches = |name: &str| {
            catalog
                .tables
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.reaches.clone())
                .unwrap()
        };
        assert_eq!(reaches("staff"), ["payroll"]);
        assert!(reaches("staff2").contains(&"payroll".to_string()));
        for shadow in [
            "payfts_content",
            "payfts_data",
            "payfts_idx",
            "payfts_docsize",
            "payfts_config",
        ] {
            assert_eq!(reaches(shadow), ["payfts"], "{shadow}");
        }
        assert_eq!(reaches("docs_data"), ["docs"]);
        assert!(reaches("payroll").is_empty());
        let hidden = crate::safety::Hidden::new(
            [
                "payfts".to_string(),
                "payfts_content".to_string(),
                "payroll".to_string(),
            ],
            Vec::new(),
        );
        let mut sink = Collect(Vec::new());
        src.execute(
            &CheckedSql::unchecked_hiding_for_tests(
                "SELECT body FROM docs WHERE docs MATCH 'hello'",
                hidden,
            ),
            &mut sink,
            &CancelToken::new(),
        )
        .unwrap();
        assert_eq!(sink.0, [[Value::Text("hello world".into())]]);
    }

    #[test]
    fn engine_layer_denies_hidden_tables_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture(dir.path());
        for allow_write in [false, true] {
            let options = OpenOptions {
                allow_write,
                ..OpenOptions::default()
            };
            let src = SqliteSource::open(&path, options).unwrap();
            let hiding = |sql: &str| {
                let mut sink = Collect(Vec::new());
                let hidden = crate::safety::Hidden::new(["o".to_string()], Vec::new());
                src.execute(
                    &CheckedSql::unchecked_hiding_for_tests(sql, hidden),
                    &mut sink,
                    &CancelToken::new(),
                )
                .map(|_| sink.0)
            };
            for sql in [
                "SELECT * FROM o",
                "SELECT * FROM main.O",
                "SELECT * FROM \"o\"",
                "SELECT amount FROM big",
                "SELECT (SELECT max(amount) FROM o)",
                "WITH x AS (SELECT * FROM o) SELECT * FROM x",
                "SELECT * FROM c WHERE id IN (SELECT c_id FROM o)",
                "SELECT * FROM sqlite_master",
                "SELECT * FROM sqlite_schema",
                "SELECT * FROM pragma_table_info('o')",
                "SELECT * FROM pragma_table_list",
                "PRAGMA table_info(o)",
                "PRAGMA index_list('o')",
                "SELECT * FROM dbstat",
            ] {
                let r = hiding(sql);
                let Err(ExecError::Engine(msg)) = &r else {
                    panic!("engine ran {sql} (allow_write {allow_write}): {r:?}");
                };
                assert!(msg.contains("hidden from aiq"), "{sql}: {msg}");
            }
            assert_eq!(
                hiding("SELECT name FROM c ORDER BY id").unwrap(),
                [[Value::Text("Ann".into())], [Value::Text("Bob".into())]]
            );
            // Nothing is denied once the hiding statement is done.
            assert_eq!(
                run(&src, "SELECT count(*) FROM o").unwrap(),
                [[Value::Int(1)]]
            );
        }
    }

    #[test]
    fn the_engine_says_what_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = fixture(dir.path());
        let options = OpenOptions {
            allow_write: true,
            ..OpenOptions::default()
        };
        let src = SqliteSource::open(&path, options).unwrap();
        let read = |sql: &str| src.read_statement(sql).unwrap().unwrap();
        let r = read("SELECT * FROM pragma_optimize");
        assert_eq!(r.table_calls, ["pragma_optimize"], "{r:?}");
        let r = read("SELECT 1 IS 1");
        assert!(!r.writes && r.query, "{r:?}");
        assert_eq!(read("SELECT 1; SELECT 2").statements, 2);
        assert!(read("DELETE FROM c").writes);
    }

    #[test]
    fn catalog_in_few_queries() {
        let dir = tempfile::tempdir().unwrap();
        let src = SqliteSource::open(&fixture(dir.path()), OpenOptions::default()).unwrap();
        let cat = src.introspect().unwrap();
        let names: Vec<_> = cat.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["big", "c", "o"]);
        let c = cat.table("c").unwrap();
        assert_eq!(c.row_estimate, Some(2));
        assert!(c.columns[0].primary_key);
        assert!(!c.columns[1].nullable);
        assert_eq!(c.columns[1].samples, ["Ann", "Bob"]);
        let o = cat.table("o").unwrap();
        assert_eq!(o.foreign_keys[0].ref_table, "c");
        assert_eq!(cat.table("big").unwrap().kind, TableKind::View);
    }

    #[test]
    fn timeout_interrupts() {
        let dir = tempfile::tempdir().unwrap();
        let opts = OpenOptions {
            allow_write: false,
            timeout: Duration::from_millis(200),
            cache: None,
            memory_limit: None,
            password: None,
        };
        let src = SqliteSource::open(&fixture(dir.path()), opts).unwrap();
        let r = run(
            &src,
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
        );
        assert!(matches!(r, Err(ExecError::Timeout(_))), "{r:?}");
    }

    #[test]
    fn writes_work_when_allowed_but_attach_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let opts = OpenOptions {
            allow_write: true,
            ..OpenOptions::default()
        };
        let src = SqliteSource::open(&fixture(dir.path()), opts).unwrap();
        run(&src, "DELETE FROM o").unwrap();
        assert!(run(&src, "ATTACH DATABASE 'x.db' AS x").is_err());
        assert_eq!(
            run(&src, "SELECT count(*) FROM o").unwrap(),
            [[Value::Int(0)]]
        );
    }
}
