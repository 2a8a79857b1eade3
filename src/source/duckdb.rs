//! DuckDB through the duckdb crate: `.duckdb` files, an in-memory database,
//! and CSV/TSV/Parquet/JSON files served as views.
//!
//! Layer 2 of the safety policy: database files open with
//! `access_mode=READ_ONLY`; data files are wrapped as views in a private
//! database file that is then reopened read-only; external access is off
//! except for the source's own files, extensions never install or load, and
//! the configuration is locked so no statement can undo any of it.

use std::path::Path;

use chrono::{DateTime, NaiveDate, NaiveTime};
use duckdb::core::LogicalTypeId;
use duckdb::types::{TimeUnit, Value as DValue, ValueRef};
use duckdb::{AccessMode, Config, Connection};

use super::spec::DataFile;
use super::{
    quote_ident, quote_str, table_ref, watchdog, CancelToken, Column, DataFileKind, DataSource,
    EngineKind, ExecError, Guard, OpenOptions, QueryStats, RowSink, SourceError, Value,
};
use crate::safety::{Access, CheckedSql};
use crate::schema::{
    offer_sample, sample_targets, Catalog, ColumnInfo, ForeignKey, Table, TableKind, SAMPLE_ROWS,
};

/// How long introspection may spend on sample values.
const SAMPLE_BUDGET: std::time::Duration = std::time::Duration::from_millis(150);

pub(crate) struct DuckDbSource {
    // Field order matters: the connection must close before the folder that
    // holds a data-file source's view database is removed.
    conn: Connection,
    views_dir: Option<tempfile::TempDir>,
    options: OpenOptions,
}

/// Settings every DuckDB connection gets before any user statement.
fn base_config(access: AccessMode) -> duckdb::Result<Config> {
    Config::default()
        .access_mode(access)?
        .enable_autoload_extension(false)?
        .with("autoinstall_known_extensions", "false")?
        .with("allow_community_extensions", "false")
}

/// Turns off file access beyond `allowed` and locks the configuration.
fn lock_down(conn: &Connection, allowed: &[String]) -> duckdb::Result<()> {
    if !allowed.is_empty() {
        let list = allowed
            .iter()
            .map(|p| quote_str(p))
            .collect::<Vec<_>>()
            .join(", ");
        conn.execute_batch(&format!("SET allowed_paths = [{list}]"))?;
    }
    conn.execute_batch("SET enable_external_access = false; SET lock_configuration = true;")
}

impl DuckDbSource {
    pub(crate) fn open_file(path: &Path, options: OpenOptions) -> Result<Self, SourceError> {
        let fail = |e: duckdb::Error| {
            SourceError(format!("cannot open {} as DuckDB: {}", path.display(), e))
        };
        let access = if options.allow_write {
            AccessMode::ReadWrite
        } else {
            AccessMode::ReadOnly
        };
        let conn =
            Connection::open_with_flags(path, base_config(access).map_err(fail)?).map_err(fail)?;
        lock_down(&conn, &[]).map_err(fail)?;
        Ok(Self::new(conn, None, options))
    }

    pub(crate) fn open_memory(options: OpenOptions) -> Result<Self, SourceError> {
        let fail = |e: duckdb::Error| SourceError(format!("cannot open an in-memory DuckDB: {e}"));
        let config = base_config(AccessMode::Automatic).map_err(fail)?;
        let conn = Connection::open_in_memory_with_flags(config).map_err(fail)?;
        lock_down(&conn, &[]).map_err(fail)?;
        Ok(Self::new(conn, None, options))
    }

    /// Each file becomes a view named after its stem. The views live in a
    /// small database file in a private temporary folder, which is then
    /// reopened read-only (unless writes are allowed) with file access
    /// limited to exactly these files.
    pub(crate) fn open_data_files(
        files: &[DataFile],
        options: OpenOptions,
    ) -> Result<Self, SourceError> {
        let fail = |e: &dyn std::fmt::Display| {
            let first = files
                .first()
                .map(|f| f.path.display().to_string())
                .unwrap_or_default();
            SourceError(format!("cannot read {first}: {e}"))
        };
        let dir = tempfile::Builder::new()
            .prefix("aiq-views-")
            .tempdir()
            .map_err(|e| fail(&e))?;
        let db_path = dir.path().join("views.duckdb");
        {
            let config = base_config(AccessMode::ReadWrite).map_err(|e| fail(&e))?;
            let conn = Connection::open_with_flags(&db_path, config).map_err(|e| fail(&e))?;
            for file in files {
                conn.execute_batch(&view_sql(file)).map_err(|e| {
                    SourceError(format!("cannot read {}: {e}", file.path.display()))
                })?;
            }
        }
        let access = if options.allow_write {
            AccessMode::ReadWrite
        } else {
            AccessMode::ReadOnly
        };
        let config = base_config(access).map_err(|e| fail(&e))?;
        let conn = Connection::open_with_flags(&db_path, config).map_err(|e| fail(&e))?;
        let allowed: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        lock_down(&conn, &allowed).map_err(|e| fail(&e))?;
        Ok(Self::new(conn, Some(dir), options))
    }

    fn new(conn: Connection, views_dir: Option<tempfile::TempDir>, options: OpenOptions) -> Self {
        DuckDbSource {
            conn,
            views_dir,
            options,
        }
    }

    fn stream(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<u64, ExecError> {
        let mut stmt = self.conn.prepare(sql.sql()).map_err(engine_error)?;
        // Streaming execution: chunks are fetched as rows are consumed, so a
        // huge result never sits in memory.
        drop(stmt.stream_arrow([]).map_err(engine_error)?);
        let count = stmt.column_count();
        let names = stmt.column_names();
        let mut kinds = Vec::with_capacity(count);
        let mut columns = Vec::with_capacity(count);
        for (i, name) in names.into_iter().enumerate() {
            let logical = stmt.column_logical_type(i);
            let (kind, type_name) = describe_type(&logical);
            kinds.push(kind);
            columns.push(Column::new(name, type_name));
        }
        let mut rows = stmt.raw_query();
        if sql.access() == Access::Write && columns.len() == 1 && columns[0].name == "Count" {
            // DuckDB answers INSERT/UPDATE/DELETE with one "Count" row: the
            // rows changed, reported like SQLite's, not printed as a result.
            sink.columns(&[])?;
            let changed = match rows.next().map_err(engine_error)? {
                Some(row) => row.get::<_, i64>(0).unwrap_or(0).max(0) as u64,
                None => 0,
            };
            return Ok(changed);
        }
        sink.columns(&columns)?;
        Guard::pump(cancel, count, sink, |buf| {
            let Some(row) = rows.next().map_err(engine_error)? else {
                return Ok(false);
            };
            for (i, kind) in kinds.iter().enumerate() {
                buf.push(convert(row.get_ref(i).map_err(engine_error)?, *kind));
            }
            Ok(true)
        })
    }
}

impl DataSource for DuckDbSource {
    fn kind(&self) -> EngineKind {
        EngineKind::DuckDb
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        // Views over data files are the tables of such a source; views in a
        // database file may be expensive, so they get no samples.
        introspect(&self.conn, self.views_dir.is_some())
            .map_err(|e| SourceError(format!("cannot read the DuckDB schema: {e}")))
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let interrupt = self.conn.interrupt_handle();
        Guard::execute(
            sql,
            self.options.timeout,
            cancel,
            move || interrupt.interrupt(),
            || self.stream(sql, sink, cancel),
        )
    }
}

fn view_sql(file: &DataFile) -> String {
    let path = quote_str(&file.path.display().to_string());
    let reader = match file.kind {
        DataFileKind::Csv => format!("read_csv({path})"),
        DataFileKind::Tsv => format!("read_csv({path}, delim = '\t')"),
        DataFileKind::Parquet => format!("read_parquet({path})"),
        DataFileKind::Json => format!("read_json_auto({path})"),
        DataFileKind::JsonLines => format!("read_json_auto({path}, format = 'newline_delimited')"),
    };
    format!(
        "CREATE VIEW {} AS SELECT * FROM {reader}",
        quote_ident(&file.table)
    )
}

fn engine_error(e: duckdb::Error) -> ExecError {
    ExecError::Engine(e.to_string())
}

/// How to turn a column's values into [`Value`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    TimestampTz,
    Json,
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
    let kind = if id == LogicalTypeId::TimestampTZ {
        Kind::TimestampTz
    } else {
        Kind::Plain
    };
    (kind, name)
}

fn micros(unit: TimeUnit, v: i64) -> i64 {
    match unit {
        TimeUnit::Second => v.saturating_mul(1_000_000),
        TimeUnit::Millisecond => v.saturating_mul(1_000),
        TimeUnit::Microsecond => v,
        TimeUnit::Nanosecond => v / 1_000,
    }
}

fn convert(v: ValueRef<'_>, kind: Kind) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Boolean(b) => Value::Bool(b),
        ValueRef::TinyInt(i) => Value::Int(i.into()),
        ValueRef::SmallInt(i) => Value::Int(i.into()),
        ValueRef::Int(i) => Value::Int(i.into()),
        ValueRef::BigInt(i) => Value::Int(i),
        ValueRef::UTinyInt(i) => Value::Int(i.into()),
        ValueRef::USmallInt(i) => Value::Int(i.into()),
        ValueRef::UInt(i) => Value::Int(i.into()),
        ValueRef::UBigInt(i) => match i64::try_from(i) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::BigInt(i.into()),
        },
        ValueRef::HugeInt(i) => Value::BigInt(i),
        ValueRef::UHugeInt(i) => match i128::try_from(i) {
            Ok(i) => Value::BigInt(i),
            Err(_) => Value::Decimal(i.to_string()),
        },
        ValueRef::Float(f) => Value::Float(f.into()),
        ValueRef::Double(f) => Value::Float(f),
        ValueRef::Decimal(d) => Value::Decimal(d.to_string()),
        ValueRef::Timestamp(unit, v) => match DateTime::from_timestamp_micros(micros(unit, v)) {
            Some(t) if kind == Kind::TimestampTz => Value::TimestampTz(t),
            Some(t) => Value::Timestamp(t.naive_utc()),
            None => Value::Other(format!("{v}")),
        },
        ValueRef::Text(bytes) => {
            let s = String::from_utf8_lossy(bytes).into_owned();
            if kind == Kind::Json {
                Value::Json(s)
            } else {
                Value::Text(s)
            }
        }
        ValueRef::Blob(b) | ValueRef::Geometry(b) => Value::Blob(b.to_vec()),
        ValueRef::Date32(days) => NaiveDate::from_ymd_opt(1970, 1, 1)
            .and_then(|epoch| epoch.checked_add_signed(chrono::Duration::days(days.into())))
            .map(Value::Date)
            .unwrap_or_else(|| Value::Other(days.to_string())),
        ValueRef::Time64(unit, v) => {
            let us = micros(unit, v);
            NaiveTime::from_num_seconds_from_midnight_opt(
                (us / 1_000_000) as u32,
                ((us % 1_000_000) * 1_000) as u32,
            )
            .map(Value::Time)
            .unwrap_or_else(|| Value::Other(v.to_string()))
        }
        ValueRef::Enum(..) => match v.as_str() {
            Ok(s) => Value::Text(s.to_string()),
            Err(_) => Value::Other(format_nested(&v.to_owned())),
        },
        other => Value::Other(format_nested(&other.to_owned())),
    }
}

/// Readable text for intervals, lists, structs and maps.
fn format_nested(v: &DValue) -> String {
    match v {
        DValue::Null => "NULL".into(),
        DValue::Text(s) | DValue::Enum(s) => s.clone(),
        DValue::List(items) | DValue::Array(items) => {
            let inner: Vec<String> = items.iter().map(format_nested).collect();
            format!("[{}]", inner.join(", "))
        }
        DValue::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}: {}", format_nested(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        DValue::Map(entries) => {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}={}", format_nested(k), format_nested(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        DValue::Union(inner) => format_nested(inner),
        DValue::Interval {
            months,
            days,
            nanos,
        } => format_interval(*months, *days, *nanos),
        other => convert_owned(other).to_text(),
    }
}

fn convert_owned(v: &DValue) -> Value {
    match v {
        DValue::Boolean(b) => Value::Bool(*b),
        DValue::TinyInt(i) => Value::Int((*i).into()),
        DValue::SmallInt(i) => Value::Int((*i).into()),
        DValue::Int(i) => Value::Int((*i).into()),
        DValue::BigInt(i) => Value::Int(*i),
        DValue::HugeInt(i) => Value::BigInt(*i),
        DValue::UTinyInt(i) => Value::Int((*i).into()),
        DValue::USmallInt(i) => Value::Int((*i).into()),
        DValue::UInt(i) => Value::Int((*i).into()),
        DValue::UBigInt(i) => Value::BigInt((*i).into()),
        DValue::Float(f) => Value::Float((*f).into()),
        DValue::Double(f) => Value::Float(*f),
        DValue::Decimal(d) => Value::Decimal(d.to_string()),
        DValue::Blob(b) => Value::Blob(b.clone()),
        DValue::Timestamp(unit, v) => DateTime::from_timestamp_micros(micros(*unit, *v))
            .map(|t| Value::Timestamp(t.naive_utc()))
            .unwrap_or(Value::Null),
        DValue::Date32(d) => convert(ValueRef::Date32(*d), Kind::Plain),
        DValue::Time64(unit, v) => convert(ValueRef::Time64(*unit, *v), Kind::Plain),
        other => Value::Other(format!("{other:?}")),
    }
}

fn format_interval(months: i32, days: i32, nanos: i64) -> String {
    let mut parts = Vec::new();
    if months != 0 {
        parts.push(format!("{months} months"));
    }
    if days != 0 {
        parts.push(format!("{days} days"));
    }
    if nanos != 0 || parts.is_empty() {
        let secs = nanos / 1_000_000_000;
        let frac = (nanos % 1_000_000_000).abs();
        let (h, m, s) = (secs / 3600, (secs % 3600).abs() / 60, (secs % 60).abs());
        if frac == 0 {
            parts.push(format!("{h:02}:{m:02}:{s:02}"));
        } else {
            parts.push(format!("{h:02}:{m:02}:{s:02}.{:06}", frac / 1000));
        }
    }
    parts.join(" ")
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
        let name = qualified(r.get(0)?, r.get(1)?);
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
/// from the first rows only, in one query for all of them.
fn samples(conn: &Connection, tables: &mut [Table], sample_views: bool) {
    let targets: Vec<(usize, usize)> = sample_targets(tables, sample_views)
        .into_iter()
        .take(2000)
        .collect();
    if targets.is_empty() {
        return;
    }
    let sql = targets
        .iter()
        .enumerate()
        .map(|(k, (ti, ci))| {
            let t = table_ref(&tables[*ti].name);
            let c = quote_ident(&tables[*ti].columns[*ci].name);
            format!(
                "SELECT {k} AS k, v FROM (SELECT DISTINCT v FROM (SELECT {c}::VARCHAR AS v FROM {t} LIMIT {SAMPLE_ROWS}) \
                 WHERE v IS NOT NULL)"
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let sql = format!("SELECT k, v FROM ({sql}) ORDER BY k, v");
    let interrupt = conn.interrupt_handle();
    let (result, _) = watchdog(
        SAMPLE_BUDGET,
        move || interrupt.interrupt(),
        || {
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as usize, r.get::<_, String>(1)?))
            })?;
            rows.collect::<duckdb::Result<Vec<(usize, String)>>>()
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
        assert_eq!(lists.1[0][0].to_text(), "[a, b]");
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

    #[test]
    fn data_files_are_views_confined_to_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, "id,name\n1,Ann\n2,Bob\n").unwrap();
        let secret = dir.path().join("secret.csv");
        std::fs::write(&secret, "x\n1\n").unwrap();
        let files = vec![DataFile {
            table: "people".into(),
            path: csv.canonicalize().unwrap(),
            kind: DataFileKind::Csv,
        }];
        let src = DuckDbSource::open_data_files(&files, OpenOptions::default()).unwrap();
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
}
