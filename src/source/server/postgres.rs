//! PostgreSQL through sqlx. The session is read-only twice over: it starts
//! with `default_transaction_read_only=on`, and every read runs inside
//! `BEGIN READ ONLY … ROLLBACK`, which also undoes any setting a statement
//! managed to change. Rows arrive in the binary format and are decoded here
//! by type OID, exactly (numeric as text, never via f64).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

use chrono::{DateTime, Duration as ChronoDuration, NaiveDate, NaiveDateTime, NaiveTime};
use sqlx::postgres::{
    PgConnectOptions, PgConnection, PgRow, PgTypeInfo, PgTypeKind, PgValueFormat, PgValueRef,
};
use sqlx::{Column as _, ConnectOptions, Executor, Row, Statement, TypeInfo, ValueRef};

use super::partitions::{with_comment, Partitioning, RemoteKind};
use super::session::{Engine, Session};
use super::{
    self as server, bytes_value, pump, sample_columns, text, Collect, ServerStatus, SAMPLE_BUDGET,
};
use crate::safety::{CheckedSql, UserFunctions};
use crate::schema::{offer_sample, sample_targets, TableKind, SAMPLE_ROWS};
use crate::schema::{Catalog, ColumnInfo, ForeignKey, Table};
use crate::source::spec::{redact_url, ServerSpec};
use crate::source::{
    quote_ident, table_ref, CancelToken, Column, DataSource, EngineKind, ExecError,
    LoginPrivileges, OpenOptions, QueryStats, RowSink, Since, SourceError, Value,
};

pub(crate) struct PostgresSource {
    rt: tokio::runtime::Runtime,
    conn: Mutex<PgConnection>,
    /// Connecting again, errors and cancels (`pg_cancel_backend`).
    session: Session<Postgres>,
    options: OpenOptions,
    status: ServerStatus,
    /// The database's own functions (SPEC §4.2, "Behind a name"), read
    /// once and again after a write.
    functions: server::UserFunctionCache,
}

/// The database's own functions: not built in (oid past the bootstrap
/// range), not an extension's, with whether any overload is volatile.
const USER_FUNCTIONS: &str = "SELECT lower(p.proname), bool_or(p.provolatile = 'v') \
     FROM pg_proc p \
     WHERE p.oid >= 16384 AND NOT EXISTS (SELECT 1 FROM pg_depend d \
       WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') \
     GROUP BY 1";

impl PostgresSource {
    pub(crate) fn open(spec: &ServerSpec, options: OpenOptions) -> Result<Self, SourceError> {
        let rt = server::runtime()?;
        let base = PgConnectOptions::from_str(&spec.url).map_err(|e| {
            SourceError(format!(
                "cannot open {}: the URL is not valid: {e}",
                redact_url(&spec.url)
            ))
        })?;
        let timeout_ms = options.timeout.as_millis().to_string();
        let mut settings = vec![
            ("statement_timeout", timeout_ms),
            ("idle_in_transaction_session_timeout", "600000".to_string()),
        ];
        if !options.allow_write {
            settings.push(("default_transaction_read_only", "on".to_string()));
        }
        let base = base
            .application_name("aiq")
            .options(settings)
            .log_statements(log::LevelFilter::Debug)
            .log_slow_statements(log::LevelFilter::Off, Duration::ZERO);
        let address = address(&base);
        let (conn, session) = Session::<Postgres>::connect(&rt, spec, base, &options)?;
        let mut source = PostgresSource {
            rt,
            conn: Mutex::new(conn),
            session,
            options,
            status: ServerStatus {
                version: String::new(),
                address,
                read_only: false,
                tls: false,
            },
            functions: server::UserFunctionCache::default(),
        };
        let facts = source
            .internal(
                "SELECT pg_backend_pid()::int8, current_setting('server_version'), \
                 current_setting('transaction_read_only'), \
                 coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false)",
                None,
            )
            .map_err(|e| SourceError(format!("cannot read the server's version: {e}")))?;
        let row = facts.rows.first().cloned().unwrap_or_default();
        if let Some(Value::Int(pid)) = row.first() {
            source.session.set_id(*pid as u64);
        }
        let version = row.get(1).and_then(text).unwrap_or_default();
        let version = version.split_whitespace().next().unwrap_or("").to_string();
        source.status.version = format!("PostgreSQL {version}");
        source.status.read_only = row.get(2).and_then(text).as_deref() == Some("on");
        source.status.tls = matches!(row.get(3), Some(Value::Bool(true)));
        if !source.options.allow_write && !source.status.read_only {
            return Err(SourceError(format!(
                "cannot open {}: the server did not start a read-only session, so aiq will not run statements there",
                redact_url(&spec.url)
            )));
        }
        Ok(source)
    }

    /// Runs `sql` as a read: inside `BEGIN READ ONLY … ROLLBACK`, with a
    /// tighter statement timeout when given.
    async fn read(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        timeout: Option<Duration>,
        sink: &mut dyn RowSink,
        cancelled: &CancelToken,
    ) -> Result<(u64, u64), ExecError> {
        let begin = match timeout {
            Some(t) => format!(
                "BEGIN READ ONLY; SET LOCAL statement_timeout = {}",
                t.as_millis()
            ),
            None => "BEGIN READ ONLY".to_string(),
        };
        let begun = sqlx::raw_sql(&begin).execute(&mut *conn).await;
        let result = match begun {
            Ok(_) => self.stream(conn, sql, sink, cancelled).await,
            Err(e) => Err(self.session.error(e)),
        };
        server::end_read(&mut *conn).await;
        result
    }

    /// Runs one of aiq's own catalog queries as a read and keeps its rows.
    fn internal(&self, sql: &str, timeout: Option<Duration>) -> Result<Collect, ExecError> {
        let mut out = Collect::default();
        let no_cancel = CancelToken::new();
        self.rt.block_on(async {
            let mut conn = self.conn.lock().await;
            self.session.revive(&mut conn).await?;
            self.read(&mut conn, sql, timeout, &mut out, &no_cancel)
                .await
        })?;
        Ok(out)
    }

    /// The first cell of one of aiq's own catalog queries, as text.
    fn scalar(&self, sql: &str) -> Option<String> {
        let out = self
            .internal(sql, None)
            .map_err(|e| tracing::info!("no catalog fingerprint: {e}"))
            .ok()?;
        out.rows.first()?.first().and_then(text)
    }

    /// Prepares `sql` (for its columns, also when no row comes back), then
    /// streams its rows.
    async fn stream(
        &self,
        conn: &mut PgConnection,
        sql: &str,
        sink: &mut dyn RowSink,
        cancelled: &CancelToken,
    ) -> Result<(u64, u64), ExecError> {
        let statement = (&mut *conn)
            .prepare(sql)
            .await
            .map_err(|e| self.session.error(e))?;
        let (columns, decoders): (Vec<Column>, Vec<Decoder>) = statement
            .columns()
            .iter()
            .map(|c| {
                let t = c.type_info();
                (Column::new(c.name(), t.name()), Decoder::of(t))
            })
            .unzip();
        sink.columns(&columns)?;
        let rows = conn.fetch_many(statement.query());
        pump(
            rows,
            sink,
            cancelled,
            &self.session.canceller(true),
            |done: &sqlx::postgres::PgQueryResult| done.rows_affected(),
            |row: &PgRow, out| {
                for (i, d) in decoders.iter().enumerate() {
                    out.push(match row.try_get_raw(i) {
                        Ok(v) => d.decode(&v),
                        Err(_) => Value::Null,
                    });
                }
            },
            |e| self.session.error(e),
        )
        .await
    }
}

fn address(o: &PgConnectOptions) -> String {
    format!(
        "{}:{}/{}",
        o.get_host(),
        o.get_port(),
        o.get_database().unwrap_or(o.get_username())
    )
}

impl DataSource for PostgresSource {
    fn own_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    fn kind(&self) -> EngineKind {
        EngineKind::Postgres
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        introspect(self).map_err(|e| SourceError(format!("cannot read the PostgreSQL schema: {e}")))
    }

    fn fingerprint(&self) -> Option<String> {
        self.fingerprint_since(None).map(|since| since.key)
    }

    fn user_functions(&self) -> Option<Arc<UserFunctions>> {
        self.functions.get(|| self.internal(USER_FUNCTIONS, None))
    }

    /// `QUICK` (has the server written anything at all?) and
    /// `FINGERPRINT` (the catalog's checksums), see
    /// [`server::quick_then_full`].
    fn fingerprint_since(&self, cached: Option<&str>) -> Option<Since> {
        server::quick_then_full(cached, || self.scalar(QUICK), || self.scalar(FINGERPRINT))
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        self.session.execute(
            &self.rt,
            &self.conn,
            (sql, self.options.allow_write),
            &self.functions,
            cancel,
            async |conn, write| {
                if write {
                    self.stream(conn, sql.sql(), sink, cancel).await
                } else {
                    self.read(conn, sql.sql(), None, sink, cancel).await
                }
            },
        )
    }

    fn server_status(&self) -> Option<ServerStatus> {
        Some(self.status.clone())
    }

    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        let explained = self
            .internal(
                &format!("EXPLAIN (VERBOSE, FORMAT JSON) {}", sql.sql()),
                None,
            )
            .ok()?;
        let plan = explained.rows.first()?.first()?.to_text();
        let own: Vec<String> = self
            .user_functions()
            .map(|f| f.functions.keys().map(|k| k.to_lowercase()).collect())
            .unwrap_or_default();
        super::reads::postgres_plan(&plan, &own)
    }

    fn login_privileges(&self, hidden: &[Table]) -> Option<Result<LoginPrivileges, SourceError>> {
        let run = |sql: &str| self.internal(sql, None);
        Some(super::login::postgres(&run, hidden).map_err(|e| SourceError(e.to_string())))
    }
}

/// Sample values from the planner's statistics for every analyzed table
/// the login may read (pg_stats shows only those); returns the tables that
/// got their samples this way. A partitioned table's are those of its
/// whole tree (`inherited`: it holds no rows of its own), anything else's
/// its own.
fn stats_samples(source: &PostgresSource, tables: &mut [Table]) -> HashSet<String> {
    let mut done = HashSet::new();
    let targets = sample_targets(tables, false);
    // Only the names of columns that get samples: turning every column's
    // statistics (timestamps, numbers) into text is most of this query's
    // time on a wide schema.
    let names: std::collections::BTreeSet<&str> = targets
        .iter()
        .map(|&(ti, ci)| tables[ti].columns[ci].name.as_str())
        .collect();
    if names.is_empty() {
        return done;
    }
    let names: Vec<String> = names.into_iter().map(quote_literal).collect();
    let sql = format!(
        "SELECT CASE WHEN schemaname = current_schema() THEN tablename ELSE schemaname || '.' || tablename END, \
                attname, \
                coalesce(most_common_vals::text::text[], '{{}}') || coalesce(histogram_bounds::text::text[], '{{}}') \
         FROM pg_stats WHERE schemaname = ANY (current_schemas(false)) \
           AND inherited = EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind = 'p' AND c.relname = tablename AND n.nspname = schemaname) \
           AND attname = ANY (ARRAY[{}]::name[])",
        names.join(", ")
    );
    let Ok(stats) = source.internal(&sql, Some(SAMPLE_BUDGET)) else {
        return done;
    };
    let mut values: HashMap<(String, String), Vec<String>> = Default::default();
    for r in &stats.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let list = match r.get(2) {
            Some(Value::Json(j)) => serde_json::from_str::<Vec<Option<String>>>(j)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect(),
            _ => Vec::new(),
        };
        done.insert(cell(0));
        values.insert((cell(0), cell(1)), list);
    }
    for (ti, ci) in targets {
        let key = (tables[ti].name.clone(), tables[ti].columns[ci].name.clone());
        if let Some(list) = values.get(&key) {
            // The most common values first; shown in order, like samples
            // read from the first rows.
            let column = &mut tables[ti].columns[ci];
            for v in list {
                offer_sample(column, v);
            }
            column.samples.sort();
        }
    }
    done
}

/// `text` as a string literal, whatever `standard_conforming_strings` is.
pub(super) fn quote_literal(text: &str) -> String {
    if text.contains('\\') {
        format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// Whether the server wrote anything at all: its WAL position (replayed,
/// on a standby) moves with every committed change, DDL or data, in any
/// database; with the server's start time (a restored backup restarts
/// it), the login, the database and the search path. One tiny query; when
/// it is what it was, the catalog is too, and [`FINGERPRINT`] is skipped.
const QUICK: &str = "\
    SELECT md5(concat_ws(' ', CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
      ELSE pg_current_wal_insert_lsn() END, pg_postmaster_start_time(), current_user, \
      current_database(), current_schemas(false)))";

/// The catalog's change fingerprint, for the catalog cache, in one quick
/// query the server answers from its own catalogs: for each catalog that
/// `introspect` reads (relations, columns, keys, comments, types of the
/// schemas on the search path) the row count and a sum of hashes of each
/// row version's `xmin`. Every DDL statement writes new row versions there
/// (a dropped column, a renamed one, a new key, a comment: see the tests),
/// and a new version has a transaction id no visible row had, so the sum
/// moves; a dropped row moves the count. Hashing `xmin` rather than the
/// rows' text keeps it to one scan with no concatenation. Written in place
/// without a new version: `reltuples` (ANALYZE, VACUUM), summed as is. The
/// rows written since the server started (its statistics counters) keep
/// sample values and row estimates current; the login and search path are
/// part of it, since they decide what is visible.
const FINGERPRINT: &str = "\
    WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = ANY (current_schemas(false))), \
    rel AS (SELECT c.oid, c.xmin, c.relkind, c.reltuples FROM pg_class c \
      WHERE c.relnamespace IN (SELECT oid FROM ns)), \
    h AS ( \
      SELECT 1 AS k, count(*) AS n, sum(hashtextextended(xmin::text, oid::int8)) AS s, \
        sum(reltuples)::int8 AS t FROM rel \
      UNION ALL SELECT 2, count(*), sum(hashtextextended(xmin::text, 0)), 0 FROM pg_attribute \
        WHERE attrelid IN (SELECT oid FROM rel) AND attnum > 0 \
      UNION ALL SELECT 3, count(*), sum(hashtextextended(xmin::text, 0)), 0 FROM pg_constraint \
        WHERE conrelid IN (SELECT oid FROM rel) \
      UNION ALL SELECT 4, count(*), sum(hashtextextended(xmin::text, 0)), 0 FROM pg_description \
        WHERE classoid = 'pg_class'::regclass AND objoid IN (SELECT oid FROM rel) \
      UNION ALL SELECT 5, count(*), sum(hashtextextended(xmin::text, 0)), 0 FROM pg_type \
        WHERE typnamespace IN (SELECT oid FROM ns) \
      UNION ALL SELECT 6, 0, 0, sum(pg_stat_get_tuples_inserted(oid) + pg_stat_get_tuples_updated(oid) \
        + pg_stat_get_tuples_deleted(oid)) FROM rel WHERE relkind IN ('r', 'p', 'm')) \
    SELECT current_user::text || ' ' || current_schemas(false)::text || ' ' || \
      string_agg(n || ',' || coalesce(s, 0) || ',' || coalesce(t, 0), ';' ORDER BY k) FROM h";

/// Tables, views, materialized views and foreign tables of the schemas on
/// the search path, in two catalog queries plus one for samples (and, when
/// there are partitioned or foreign tables, one that describes them and one
/// for the samples of the tables read through other servers). Per-table
/// facts (comment, privilege) are taken once per table, in a subquery the
/// planner keeps apart (`OFFSET 0`), not once per column.
/// What each view (and materialized view) reaches, from the server's own
/// record of what its rewrite rule depends on (`pg_depend`), through
/// every level of views: the tables below it, and `?` where a function
/// the database defines stands in it, whose body is not followed (SPEC
/// §4.2, "Behind a name").
const VIEW_REACHES: &str = "WITH RECURSIVE dep(view, ref) AS ( \
       SELECT r.ev_class, d.refobjid FROM pg_rewrite r JOIN pg_depend d \
         ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid \
        AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.ev_class \
       UNION \
       SELECT dep.view, d.refobjid FROM dep JOIN pg_rewrite r ON r.ev_class = dep.ref \
         JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid \
        AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.ev_class), \
     fun(view) AS (SELECT r.ev_class FROM pg_rewrite r JOIN pg_depend d \
         ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid \
        AND d.refclassid = 'pg_proc'::regclass AND d.refobjid >= 16384), \
     named(oid, name) AS (SELECT c.oid, CASE WHEN n.nspname = current_schema() THEN c.relname \
         ELSE n.nspname || '.' || c.relname END FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace) \
     SELECT v.name, c.name FROM dep JOIN named v ON v.oid = dep.view JOIN named c ON c.oid = dep.ref \
       JOIN pg_class k ON k.oid = dep.ref WHERE k.relkind IN ('r', 'p', 'f', 'm') \
     UNION \
     SELECT v.name, '?' FROM named v WHERE v.oid IN (SELECT view FROM fun) \
        OR v.oid IN (SELECT dep.view FROM dep WHERE dep.ref IN (SELECT view FROM fun))";

fn view_reaches(source: &PostgresSource, tables: &mut [Table]) -> Result<(), ExecError> {
    if !tables.iter().any(|t| t.kind == TableKind::View) {
        return Ok(());
    }
    let found = source.internal(VIEW_REACHES, None)?;
    for r in &found.rows {
        let (Some(view), Some(reached)) = (r.first().and_then(text), r.get(1).and_then(text))
        else {
            continue;
        };
        if let Some(t) = tables.iter_mut().find(|t| t.name == view) {
            let reached = if reached == "?" {
                crate::schema::REACHES_UNKNOWN.to_string()
            } else {
                reached.to_lowercase()
            };
            if !t.reaches.contains(&reached) {
                t.reaches.push(reached);
            }
        }
    }
    Ok(())
}

fn introspect(source: &PostgresSource) -> Result<Catalog, ExecError> {
    let columns = source.internal(
        "SELECT n.nspname, c.relname, c.relkind::text, a.attname, \
                format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, \
                coalesce(a.attnum = ANY(pk.conkey), false), c.reltuples::float8, \
                c.comment, n.nspname = current_schema(), c.readable \
         FROM (SELECT c.oid, c.relname, c.relkind, c.reltuples, c.relnamespace, \
                      obj_description(c.oid, 'pg_class') AS comment, \
                      has_table_privilege(c.oid, 'SELECT') AS readable \
               FROM pg_class c \
               WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition \
                 AND c.relnamespace IN \
                   (SELECT oid FROM pg_namespace WHERE nspname = ANY (current_schemas(false))) \
               OFFSET 0) c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
         LEFT JOIN pg_constraint pk ON pk.conrelid = c.oid AND pk.contype = 'p' \
         ORDER BY n.nspname, c.relname, a.attnum",
        None,
    )?;
    let mut tables: Vec<Table> = Vec::new();
    // Tables the login may not read get no samples (one would fail them all).
    let mut unreadable: HashSet<String> = HashSet::new();
    // Partitioned and foreign tables, described by `describe_partitions`.
    let mut remote_or_parted = false;
    for r in &columns.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let in_default = matches!(r.get(9), Some(Value::Bool(true)));
        let name = if in_default {
            cell(1)
        } else {
            format!("{}.{}", cell(0), cell(1))
        };
        if matches!(r.get(10), Some(Value::Bool(false))) {
            unreadable.insert(name.clone());
        }
        if tables.last().map(|t| t.name != name).unwrap_or(true) {
            let kind = cell(2);
            remote_or_parted |= matches!(kind.as_str(), "p" | "f");
            let estimate = match r.get(7) {
                Some(Value::Float(f)) if *f >= 0.0 && matches!(kind.as_str(), "r" | "p" | "m") => {
                    Some(*f as u64)
                }
                _ => None,
            };
            tables.push(Table {
                // In the current schema a dot is the name's own.
                one_name: in_default && name.contains('.'),
                name,
                kind: if matches!(kind.as_str(), "v" | "m") {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                row_estimate: estimate,
                comment: r.get(8).and_then(text),
                ..Table::default()
            });
        }
        if let Some(t) = tables.last_mut() {
            t.columns.push(ColumnInfo {
                name: cell(3),
                type_name: cell(4),
                nullable: matches!(r.get(5), Some(Value::Bool(true))),
                primary_key: matches!(r.get(6), Some(Value::Bool(true))),
                samples: Vec::new(),
            });
        }
    }
    let remote = if remote_or_parted {
        describe_partitions(source, &mut tables)
    } else {
        HashSet::new()
    };
    view_reaches(source, &mut tables)?;
    // Foreign keys: column lists joined with a unit separator, in key order.
    // Those a partition inherits, or that point at one, are the parent's
    // and already listed once.
    let keys = source.internal(
        "SELECT CASE WHEN n.nspname = current_schema() THEN c.relname ELSE n.nspname || '.' || c.relname END, \
                CASE WHEN fn.nspname = current_schema() THEN f.relname ELSE fn.nspname || '.' || f.relname END, \
                (SELECT string_agg(a.attname, E'\\x1f' ORDER BY k.i) FROM unnest(con.conkey) WITH ORDINALITY k(n, i) \
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n), \
                (SELECT string_agg(a.attname, E'\\x1f' ORDER BY k.i) FROM unnest(con.confkey) WITH ORDINALITY k(n, i) \
                   JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n) \
         FROM pg_constraint con \
         JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_class f ON f.oid = con.confrelid JOIN pg_namespace fn ON fn.oid = f.relnamespace \
         WHERE con.contype = 'f' AND n.nspname = ANY (current_schemas(false)) \
           AND NOT c.relispartition AND NOT f.relispartition \
         ORDER BY 1, con.conname",
        None,
    )?;
    let index: HashMap<String, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    for r in &keys.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let split = |s: String| s.split('\u{1f}').map(str::to_string).collect::<Vec<_>>();
        if let Some(t) = index.get(&cell(0)).map(|&i| &mut tables[i]) {
            t.foreign_keys.push(ForeignKey {
                columns: split(cell(2)),
                ref_table: cell(1),
                ref_columns: split(cell(3)),
            });
        }
    }
    // Analyzed tables have their samples in pg_stats already (the most
    // common values, else histogram bounds): one catalog query, no table
    // read. Only the others are read (their first rows).
    let from_stats = stats_samples(source, &mut tables);
    // Tables read through other servers are sampled apart, so a server
    // that does not answer costs only their samples.
    for through_others in [false, true] {
        if through_others && remote.is_empty() {
            break;
        }
        sample_columns(
            &mut tables,
            |table| {
                unreadable.contains(table)
                    || from_stats.contains(table)
                    || remote.contains(table) != through_others
            },
            |k, table, column| {
                let (t, c) = (table_ref(table), quote_ident(column));
                format!(
                    "(SELECT DISTINCT {k} AS k, v FROM (SELECT {c}::text AS v FROM {t} LIMIT {SAMPLE_ROWS}) s WHERE v IS NOT NULL)"
                )
            },
            // Distinct values stay distinct under a deterministic collation.
            "k, v",
            |sql| source.internal(sql, Some(SAMPLE_BUDGET)),
        );
    }
    Ok(Catalog {
        engine: source.status.version.clone(),
        tables,
    })
}

/// Partitioned tables (every level of partitions under each) and foreign
/// tables of the schemas on the search path, in one catalog query: how
/// each parent is partitioned, its partitions counted (their row
/// estimates summed into the parent's), and the servers of those that are
/// foreign tables, by name only (a server's options hold its address).
/// The partitions themselves are never listed as tables. Run only when
/// the schema has such tables; when it fails (a server that speaks the
/// wire but keeps another catalog), the tables go undescribed rather than
/// the schema unread.
const PARTITIONS: &str = "\
    WITH RECURSIVE tree AS ( \
      SELECT c.oid AS root, c.oid AS relid FROM pg_class c \
      WHERE c.relkind IN ('p', 'f') AND NOT c.relispartition AND c.relnamespace IN \
        (SELECT oid FROM pg_namespace WHERE nspname = ANY (current_schemas(false))) \
      UNION ALL \
      SELECT t.root, i.inhrelid FROM tree t JOIN pg_inherits i ON i.inhparent = t.relid) \
    SELECT CASE WHEN n.nspname = current_schema() THEN r.relname ELSE n.nspname || '.' || r.relname END, \
      CASE WHEN r.relkind = 'p' THEN pg_get_partkeydef(r.oid) END, \
      count(*) FILTER (WHERE l.relkind <> 'p')::int8, \
      sum(greatest(l.reltuples, 0)) FILTER (WHERE l.relkind IN ('r', 'm', 'f'))::float8, \
      bool_or(l.relkind IN ('r', 'm', 'f') AND l.reltuples >= 0), \
      count(*) FILTER (WHERE l.relkind = 'f')::int8, \
      coalesce(string_agg(DISTINCT s.srvname::text, E'\\x1f'), '') \
    FROM tree t JOIN pg_class r ON r.oid = t.root JOIN pg_namespace n ON n.oid = r.relnamespace \
    JOIN pg_class l ON l.oid = t.relid \
    LEFT JOIN pg_foreign_table ft ON ft.ftrelid = l.oid \
    LEFT JOIN pg_foreign_server s ON s.oid = ft.ftserver \
    GROUP BY n.nspname, r.relname, r.oid, r.relkind";

/// Describes each partitioned and foreign table (see [`PARTITIONS`]);
/// returns those read (wholly or in part) through other servers.
fn describe_partitions(source: &PostgresSource, tables: &mut [Table]) -> HashSet<String> {
    let mut remote = HashSet::new();
    let rows = match source.internal(PARTITIONS, Some(SAMPLE_BUDGET)) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::info!("partitions not described: {e}");
            return remote;
        }
    };
    let index: HashMap<String, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    for r in &rows.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let Some(t) = index.get(&cell(0)).map(|&i| &mut tables[i]) else {
            continue;
        };
        let int = |i: usize| match r.get(i) {
            Some(Value::Int(n)) => (*n).max(0) as usize,
            _ => 0,
        };
        let mut servers: Vec<String> = cell(6)
            .split('\u{1f}')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        servers.sort();
        let key = cell(1);
        let p = Partitioning {
            partitions: if key.is_empty() { 0 } else { int(2) },
            key,
            sub_key: None,
            remote: int(5),
            servers,
            remote_kind: RemoteKind::Foreign,
        };
        if !p.key.is_empty() {
            // A parent holds no rows itself: its estimate is its partitions'.
            t.row_estimate = match (r.get(3), r.get(4)) {
                (Some(Value::Float(f)), Some(Value::Bool(true))) => Some(*f as u64),
                _ => None,
            };
        }
        if p.remote > 0 {
            remote.insert(t.name.clone());
        }
        let own = t.comment.take();
        t.comment = Some(with_comment(own, p.describe()));
    }
    remote
}

// Type OIDs (pg_type.dat).
const BOOL: u32 = 16;
const BYTEA: u32 = 17;
const CHAR: u32 = 18;
const NAME: u32 = 19;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const TEXT: u32 = 25;
const OID: u32 = 26;
const JSON: u32 = 114;
const XML: u32 = 142;
const UNKNOWN: u32 = 705;
const BPCHAR: u32 = 1042;
const VARCHAR: u32 = 1043;
const CIDR: u32 = 650;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const MONEY: u32 = 790;
const INET: u32 = 869;
const DATE: u32 = 1082;
const TIME: u32 = 1083;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const INTERVAL: u32 = 1186;
const TIMETZ: u32 = 1266;
const BIT: u32 = 1560;
const VARBIT: u32 = 1562;
const NUMERIC: u32 = 1700;
const UUID: u32 = 2950;
const JSONB: u32 = 3802;

/// How to turn one column's wire bytes into a [`Value`].
#[derive(Debug, Clone, Copy)]
struct Decoder {
    oid: u32,
    /// Enums: their binary form is the label.
    text: bool,
    /// Arrays carry their element type in the data.
    array: bool,
}

impl Decoder {
    fn of(t: &PgTypeInfo) -> Decoder {
        let plain = Decoder {
            oid: t.oid().map(|o| o.0).unwrap_or(0),
            text: false,
            array: false,
        };
        match t.kind() {
            PgTypeKind::Enum(_) => Decoder {
                text: true,
                ..plain
            },
            PgTypeKind::Domain(base) => Decoder::of(base),
            PgTypeKind::Array(_) => Decoder {
                array: true,
                ..plain
            },
            _ => plain,
        }
    }

    fn decode(&self, v: &PgValueRef<'_>) -> Value {
        if v.is_null() {
            return Value::Null;
        }
        let Ok(bytes) = v.as_bytes() else {
            return Value::Null;
        };
        if v.format() == PgValueFormat::Text || self.text {
            return Value::Text(String::from_utf8_lossy(bytes).into_owned());
        }
        if self.array {
            return match decode_array(bytes) {
                Some(json) => Value::Json(json),
                None => bytes_value(bytes),
            };
        }
        decode_binary(self.oid, bytes).unwrap_or_else(|| bytes_value(bytes))
    }
}

fn be<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at + N)?.try_into().ok()
}

/// One value in PostgreSQL's binary format; `None` when the type is not
/// one aiq knows or the bytes are malformed (the caller shows them raw).
fn decode_binary(oid: u32, b: &[u8]) -> Option<Value> {
    let i16_at = |at| be::<2>(b, at).map(i16::from_be_bytes);
    let i32_at = |at| be::<4>(b, at).map(i32::from_be_bytes);
    let i64_at = |at| be::<8>(b, at).map(i64::from_be_bytes);
    let epoch = NaiveDate::from_ymd_opt(2000, 1, 1)?.and_hms_opt(0, 0, 0)?;
    Some(match oid {
        BOOL => Value::Bool(*b.first()? != 0),
        INT2 => Value::Int(i16_at(0)? as i64),
        INT4 => Value::Int(i32_at(0)? as i64),
        INT8 => Value::Int(i64_at(0)?),
        OID => Value::Int(u32::from_be_bytes(be::<4>(b, 0)?) as i64),
        FLOAT4 => {
            let f = f32::from_be_bytes(be::<4>(b, 0)?);
            // Through its shortest text so 0.1::real stays 0.1.
            Value::Float(format!("{f:?}").parse().unwrap_or(f as f64))
        }
        FLOAT8 => Value::Float(f64::from_be_bytes(be::<8>(b, 0)?)),
        NUMERIC => numeric(b)?,
        MONEY => {
            let cents = i64_at(0)?;
            let sign = if cents < 0 { "-" } else { "" };
            let c = cents.unsigned_abs();
            Value::Decimal(format!("{sign}{}.{:02}", c / 100, c % 100))
        }
        BYTEA => Value::Blob(b.to_vec()),
        CHAR | NAME | TEXT | XML | UNKNOWN | BPCHAR | VARCHAR => {
            Value::Text(String::from_utf8_lossy(b).into_owned())
        }
        JSON => Value::Json(String::from_utf8_lossy(b).into_owned()),
        JSONB => Value::Json(String::from_utf8_lossy(b.get(1..)?).into_owned()),
        UUID => {
            let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
            if h.len() != 32 {
                return None;
            }
            Value::Text(format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            ))
        }
        DATE => match i32_at(0)? {
            i32::MAX => Value::Other("infinity".into()),
            i32::MIN => Value::Other("-infinity".into()),
            days => Value::Date(epoch.date() + ChronoDuration::days(days as i64)),
        },
        TIME => {
            let us = i64_at(0)?;
            Value::Time(NaiveTime::from_num_seconds_from_midnight_opt(
                (us / 1_000_000) as u32,
                ((us % 1_000_000) * 1000) as u32,
            )?)
        }
        TIMETZ => {
            let us = i64_at(0)?;
            let t = NaiveTime::from_num_seconds_from_midnight_opt(
                (us / 1_000_000) as u32,
                ((us % 1_000_000) * 1000) as u32,
            )?;
            // The offset is stored in seconds west of UTC.
            let east = -i32_at(8)?;
            let sign = if east < 0 { '-' } else { '+' };
            let e = east.unsigned_abs();
            Value::Other(format!(
                "{}{sign}{:02}:{:02}",
                t.format("%H:%M:%S%.f"),
                e / 3600,
                e % 3600 / 60
            ))
        }
        TIMESTAMP | TIMESTAMPTZ => match i64_at(0)? {
            i64::MAX => Value::Other("infinity".into()),
            i64::MIN => Value::Other("-infinity".into()),
            us => {
                let t: NaiveDateTime = epoch + ChronoDuration::microseconds(us);
                if oid == TIMESTAMP {
                    Value::Timestamp(t)
                } else {
                    Value::TimestampTz(DateTime::from_naive_utc_and_offset(t, chrono::Utc))
                }
            }
        },
        INTERVAL => Value::Other(interval(i64_at(0)?, i32_at(8)?, i32_at(12)?)),
        INET | CIDR => Value::Text(inet(b)?),
        BIT | VARBIT => {
            let len = i32_at(0)? as usize;
            let bits: String = (0..len)
                .map(|i| {
                    let byte = b.get(4 + i / 8).copied().unwrap_or(0);
                    if byte & (0x80 >> (i % 8)) != 0 {
                        '1'
                    } else {
                        '0'
                    }
                })
                .collect();
            Value::Other(bits)
        }
        _ => return None,
    })
}

/// NUMERIC's binary form (base-10000 digits, weight, sign, display scale)
/// as exact decimal text.
fn numeric(b: &[u8]) -> Option<Value> {
    let u16_at = |at| be::<2>(b, at).map(u16::from_be_bytes);
    let ndigits = u16_at(0)? as usize;
    let weight = i16::from_be_bytes(be::<2>(b, 2)?) as i64;
    let sign = u16_at(4)?;
    let dscale = u16_at(6)? as usize;
    match sign {
        0xC000 => return Some(Value::Other("NaN".into())),
        0xD000 => return Some(Value::Other("Infinity".into())),
        0xF000 => return Some(Value::Other("-Infinity".into())),
        _ => {}
    }
    let digits: Vec<u16> = (0..ndigits)
        .map(|i| u16_at(8 + 2 * i))
        .collect::<Option<_>>()?;
    let digit = |i: i64| -> u16 {
        if i >= 0 && (i as usize) < digits.len() {
            digits[i as usize]
        } else {
            0
        }
    };
    let mut out = String::new();
    if sign == 0x4000 && digits.iter().any(|d| *d != 0) {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        for i in 0..=weight {
            if i == 0 {
                let _ = write!(out, "{}", digit(i));
            } else {
                let _ = write!(out, "{:04}", digit(i));
            }
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut i = weight + 1;
        while frac.len() < dscale {
            let _ = write!(frac, "{:04}", digit(i));
            i += 1;
        }
        frac.truncate(dscale);
        out.push('.');
        out.push_str(&frac);
    }
    Some(Value::Decimal(out))
}

/// An interval the way PostgreSQL prints it: `1 year 2 mons 3 days 04:05:06`.
fn interval(micros: i64, days: i32, months: i32) -> String {
    let mut parts: Vec<String> = Vec::new();
    let (years, mons) = (months / 12, months % 12);
    let unit = |n: i32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if years != 0 {
        parts.push(unit(years, "year", "years"));
    }
    if mons != 0 {
        parts.push(unit(mons, "mon", "mons"));
    }
    if days != 0 {
        parts.push(unit(days, "day", "days"));
    }
    if micros != 0 || parts.is_empty() {
        let sign = if micros < 0 { "-" } else { "" };
        let m = micros.unsigned_abs();
        let secs = m / 1_000_000;
        let mut t = format!(
            "{sign}{:02}:{:02}:{:02}",
            secs / 3600,
            secs % 3600 / 60,
            secs % 60
        );
        if !m.is_multiple_of(1_000_000) {
            let frac = format!("{:06}", m % 1_000_000);
            t.push('.');
            t.push_str(frac.trim_end_matches('0'));
        }
        parts.push(t);
    }
    parts.join(" ")
}

fn inet(b: &[u8]) -> Option<String> {
    let family = *b.first()?;
    let bits = *b.get(1)?;
    let is_cidr = *b.get(2)? != 0;
    let len = *b.get(3)? as usize;
    let addr = b.get(4..4 + len)?;
    let (text, max) = match family {
        2 => (
            std::net::Ipv4Addr::from(<[u8; 4]>::try_from(addr).ok()?).to_string(),
            32,
        ),
        _ => (
            std::net::Ipv6Addr::from(<[u8; 16]>::try_from(addr).ok()?).to_string(),
            128,
        ),
    };
    Some(if is_cidr || bits != max {
        format!("{text}/{bits}")
    } else {
        text
    })
}

/// A binary array as a JSON array (nested for more dimensions); elements of
/// types aiq does not know come through as strings.
fn decode_array(b: &[u8]) -> Option<String> {
    let i32_at = |at| be::<4>(b, at).map(i32::from_be_bytes);
    let ndim = i32_at(0)? as usize;
    let elem = u32::from_be_bytes(be::<4>(b, 8)?);
    if ndim == 0 {
        return Some("[]".into());
    }
    let dims: Vec<usize> = (0..ndim)
        .map(|d| i32_at(12 + 8 * d).map(|n| n.max(0) as usize))
        .collect::<Option<_>>()?;
    let mut at = 12 + 8 * ndim;
    let total: usize = dims.iter().product();
    let mut items: Vec<String> = Vec::with_capacity(total);
    for _ in 0..total {
        let len = i32_at(at)?;
        at += 4;
        if len < 0 {
            items.push("null".into());
            continue;
        }
        let bytes = b.get(at..at + len as usize)?;
        at += len as usize;
        let value = decode_binary(elem, bytes).unwrap_or_else(|| bytes_value(bytes));
        items.push(json_of(&value));
    }
    // Fold the flat list into nested arrays, innermost dimension first.
    for &d in dims.iter().skip(1).rev() {
        items = items
            .chunks(d.max(1))
            .map(|c| format!("[{}]", c.join(",")))
            .collect();
    }
    Some(format!("[{}]", items.join(",")))
}

/// One array element as JSON.
fn json_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(_) | Value::BigInt(_) | Value::Decimal(_) => v.to_text(),
        Value::Float(f) if f.is_finite() => v.to_text(),
        Value::Json(s) => s.clone(),
        other => serde_json::Value::String(other.to_text()).to_string(),
    }
}

/// PostgreSQL's ways with a session (see [`Session`]).
struct Postgres;

impl Engine for Postgres {
    type Conn = PgConnection;

    async fn session_id(conn: &mut PgConnection) -> Result<u64, sqlx::Error> {
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *conn)
            .await?;
        Ok(pid as u64)
    }

    async fn cancel(conn: &mut PgConnection, id: u64) {
        let sql = format!("SELECT pg_cancel_backend({id})");
        let _ = sqlx::raw_sql(&sql).execute(conn).await;
    }

    fn is_timeout(db: &dyn sqlx::error::DatabaseError) -> bool {
        db.code().as_deref() == Some("57014") && db.message().contains("statement timeout")
    }

    fn with_password(options: &PgConnectOptions, password: &str) -> PgConnectOptions {
        options.clone().password(password)
    }

    fn who(o: &PgConnectOptions) -> String {
        format!("{}@{}:{}", o.get_username(), o.get_host(), o.get_port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_quoted_whatever_the_string_setting() {
        assert_eq!(quote_literal("status"), "'status'");
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(quote_literal(r"a\b'c"), r"E'a\\b''c'");
    }

    fn num(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for x in [ndigits, weight as u16, sign, dscale] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        for d in digits {
            b.extend_from_slice(&d.to_be_bytes());
        }
        b
    }

    #[test]
    fn numerics_are_exact() {
        let text = |b: Vec<u8>| numeric(&b).unwrap().to_text();
        // 12.50 = digits [12, 5000], weight 0, dscale 2.
        assert_eq!(text(num(2, 0, 0, 2, &[12, 5000])), "12.50");
        // -0.0001 = digits [1], weight -1.
        assert_eq!(text(num(1, -1, 0x4000, 4, &[1])), "-0.0001");
        // 123456789.123456789
        assert_eq!(
            text(num(5, 2, 0, 9, &[1, 2345, 6789, 1234, 5678, 9000][..5])),
            "123456789.123456780"
        );
        assert_eq!(text(num(1, 1, 0, 0, &[3])), "30000");
        assert_eq!(text(num(0, 0, 0, 2, &[])), "0.00");
        assert_eq!(text(num(0, 0, 0xC000, 0, &[])), "NaN");
        // 0.00001 = digits [1000] weight -2.
        assert_eq!(text(num(1, -2, 0, 5, &[1000])), "0.00001");
    }

    #[test]
    fn intervals_read_like_psql() {
        assert_eq!(interval(0, 0, 14), "1 year 2 mons");
        assert_eq!(interval(3_723_000_000, 3, 0), "3 days 01:02:03");
        assert_eq!(interval(1_500_000, 0, 0), "00:00:01.5");
        assert_eq!(interval(0, 0, 0), "00:00:00");
        assert_eq!(interval(-60_000_000, -1, 0), "-1 days -00:01:00");
    }

    #[test]
    fn arrays_become_json() {
        // int4[] {1,NULL,3}
        let mut b = Vec::new();
        for x in [1i32, 1, INT4 as i32, 3, 1] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        for item in [Some(1i32), None, Some(3)] {
            match item {
                Some(v) => {
                    b.extend_from_slice(&4i32.to_be_bytes());
                    b.extend_from_slice(&v.to_be_bytes());
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        assert_eq!(decode_array(&b).unwrap(), "[1,null,3]");
    }

    #[test]
    fn scalars() {
        assert_eq!(
            decode_binary(UUID, &[0xab; 16]).unwrap().to_text(),
            "abababab-abab-abab-abab-abababababab"
        );
        assert_eq!(
            decode_binary(INET, &[2, 32, 0, 4, 10, 0, 0, 1])
                .unwrap()
                .to_text(),
            "10.0.0.1"
        );
        assert_eq!(
            decode_binary(CIDR, &[2, 8, 1, 4, 10, 0, 0, 0])
                .unwrap()
                .to_text(),
            "10.0.0.0/8"
        );
        assert_eq!(
            decode_binary(FLOAT4, &0.1f32.to_be_bytes()).unwrap(),
            Value::Float(0.1)
        );
        assert_eq!(
            decode_binary(DATE, &(-1i32).to_be_bytes())
                .unwrap()
                .to_text(),
            "1999-12-31"
        );
        assert_eq!(
            decode_binary(MONEY, &(-1205i64).to_be_bytes())
                .unwrap()
                .to_text(),
            "-12.05"
        );
    }
}
