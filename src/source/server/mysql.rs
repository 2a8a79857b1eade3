//! MySQL and MariaDB through sqlx. The session is set read-only (`SET
//! SESSION TRANSACTION READ ONLY`), and every read runs inside `START
//! TRANSACTION READ ONLY … ROLLBACK`; the statement timeout is the server's
//! own (`max_statement_time` on MariaDB, `max_execution_time` on MySQL)
//! besides aiq's watchdog, which sends `KILL QUERY` from a second
//! connection. Rows come in the text protocol and are typed here by column
//! type, decimals exactly as the server prints them.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use sqlparser::dialect::MySqlDialect;
use sqlx::mysql::{MySqlColumn, MySqlConnectOptions, MySqlConnection, MySqlQueryResult, MySqlRow};
use sqlx::{Column as _, ConnectOptions, Executor, Row, Statement, TypeInfo};

use super::partitions::{plain_expression, spider_server, with_comment, Partitioning, RemoteKind};
use super::session::{Engine, Session};
use super::{
    self as server, bytes_value, pump, sample_columns, text, Collect, ServerStatus, SAMPLE_BUDGET,
};
use crate::safety::CheckedSql;
use crate::schema::{Catalog, ColumnInfo, ForeignKey, Table};
use crate::schema::{TableKind, SAMPLE_ROWS};
use crate::source::spec::{redact_url, ServerSpec};
use crate::source::{
    CancelToken, Column, DataSource, EngineKind, ExecError, LoginPrivileges, OpenOptions,
    QueryStats, RowSink, Since, SourceError, Value,
};

/// One row of `EXPLAIN`: its `table`, `type` and `Extra`.
type PlanRow = (String, String, String);

pub(crate) struct MySqlSource {
    rt: tokio::runtime::Runtime,
    conn: Mutex<MySqlConnection>,
    /// Connecting again, errors and cancels (`KILL QUERY`).
    session: Session<MySql>,
    mariadb: bool,
    options: OpenOptions,
    status: ServerStatus,
    /// The routines of the server's databases (SPEC §4.2, "Behind a name").
    functions: server::UserFunctionCache,
}

/// The stored functions the login can see, in any database, with whether
/// one is declared `MODIFIES SQL DATA`. A stored function may take the
/// name of a built-in (one MySQL or MariaDB lacks), so they are known by
/// name wherever they live.
const USER_FUNCTIONS: &str = "SELECT LOWER(ROUTINE_NAME), \
     MAX(SQL_DATA_ACCESS = 'MODIFIES SQL DATA') \
     FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' GROUP BY 1";

impl MySqlSource {
    pub(crate) fn open(spec: &ServerSpec, options: OpenOptions) -> Result<Self, SourceError> {
        let rt = server::runtime()?;
        let base = MySqlConnectOptions::from_str(&spec.url).map_err(|e| {
            SourceError(format!(
                "cannot open {}: the URL is not valid: {e}",
                redact_url(&spec.url)
            ))
        })?;
        // Keep the server's own `||` and time zone: what its users expect.
        let base = base
            .pipes_as_concat(false)
            .timezone(None)
            .log_statements(log::LevelFilter::Debug)
            .log_slow_statements(log::LevelFilter::Off, Duration::ZERO);
        let address = format!(
            "{}:{}/{}",
            base.get_host(),
            base.get_port(),
            base.get_database().unwrap_or("")
        );
        let (conn, session) = Session::<MySql>::connect(&rt, spec, base, &options)?;
        let mut source = MySqlSource {
            rt,
            conn: Mutex::new(conn),
            session,
            mariadb: false,
            options,
            status: ServerStatus {
                version: String::new(),
                address,
                read_only: false,
                tls: false,
            },
            functions: server::UserFunctionCache::default(),
        };
        let fail = |e: ExecError| SourceError(format!("cannot set up the session: {e}"));
        let facts = source
            .plain_rows("SELECT CONNECTION_ID(), VERSION()")
            .map_err(fail)?;
        let row = facts.rows.first().cloned().unwrap_or_default();
        if let Some(Value::Int(id)) = row.first() {
            source.session.set_id(*id as u64);
        }
        let version = row.get(1).and_then(text).unwrap_or_default();
        source.mariadb = version.to_ascii_lowercase().contains("mariadb");
        let number = version.split('-').next().unwrap_or("").to_string();
        source.status.version = if source.mariadb {
            format!("MariaDB {number}")
        } else {
            format!("MySQL {number}")
        };
        // Every read sets the session read-only and the time limit again
        // (see `begin_read`), so the first one below sets the session up.
        // The variable's name changed across versions.
        let read_only = source
            .internal("SELECT @@session.transaction_read_only", None)
            .or_else(|_| source.internal("SELECT @@session.tx_read_only", None))
            .map_err(fail)?;
        source.status.read_only = matches!(
            read_only.rows.first().and_then(|r| r.first()),
            Some(Value::Int(1))
        );
        let tls = source
            .internal("SHOW SESSION STATUS LIKE 'Ssl_cipher'", None)
            .map_err(fail)?;
        source.status.tls = tls
            .rows
            .first()
            .and_then(|r| r.get(1))
            .and_then(text)
            .is_some_and(|c| !c.is_empty());
        if !source.options.allow_write && !source.status.read_only {
            return Err(SourceError(format!(
                "cannot open {}: the server did not make the session read-only, so aiq will not run statements there",
                redact_url(&spec.url)
            )));
        }
        Ok(source)
    }

    /// The session variable that bounds a statement's run time.
    fn timeout_setting(&self, timeout: Duration) -> String {
        if self.mariadb {
            format!("SET SESSION max_statement_time = {}", timeout.as_secs_f64())
        } else {
            format!("SET SESSION max_execution_time = {}", timeout.as_millis())
        }
    }

    /// Runs one of aiq's own queries outside any transaction and keeps its rows.
    fn plain_rows(&self, sql: &str) -> Result<Collect, ExecError> {
        let mut out = Collect::default();
        let no_cancel = CancelToken::new();
        self.rt.block_on(async {
            let mut conn = self.conn.lock().await;
            self.stream(&mut conn, sql, &mut out, &no_cancel).await
        })?;
        Ok(out)
    }

    /// What starts every read, in one round trip: the session made
    /// read-only again (a statement may have changed that, and DDL commits
    /// and then runs under the session's setting), the time limit set again,
    /// and a read-only transaction.
    fn begin_read(&self, timeout: Duration) -> String {
        let mut sql = String::new();
        if !self.options.allow_write {
            sql.push_str("SET SESSION TRANSACTION READ ONLY; ");
        }
        sql.push_str(&self.timeout_setting(timeout));
        sql.push_str("; START TRANSACTION READ ONLY");
        sql
    }

    /// Runs `sql` as a read (see [`MySqlSource::begin_read`]), then rolls back.
    async fn read(
        &self,
        conn: &mut MySqlConnection,
        sql: &str,
        timeout: Duration,
        sink: &mut dyn RowSink,
        cancelled: &CancelToken,
    ) -> Result<(u64, u64), ExecError> {
        sqlx::raw_sql(&self.begin_read(timeout))
            .execute(&mut *conn)
            .await
            .map_err(|e| self.session.error(e))?;
        let result = self.stream(conn, sql, sink, cancelled).await;
        server::end_read(&mut *conn).await;
        result
    }

    /// The server's own rewrite of `sql` (`EXPLAIN [EXTENDED]`'s note
    /// 1003) and its plan's `(table, type, Extra)` rows, inside a read-only
    /// transaction like any read; nothing of `sql` runs.
    fn rewrite(&self, sql: &str) -> Option<(String, Vec<PlanRow>)> {
        let cell = |row: &MySqlRow, name: &str| -> String {
            row.try_get_unchecked::<Option<&[u8]>, _>(name)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        self.rt.block_on(async {
            let mut conn = self.conn.lock().await;
            self.session.revive(&mut conn).await.ok()?;
            sqlx::raw_sql(&self.begin_read(self.options.timeout))
                .execute(&mut *conn)
                .await
                .ok()?;
            let mut read = async || -> Option<(String, Vec<PlanRow>)> {
                // MariaDB and MySQL 5.7 write the note with EXTENDED; MySQL
                // 8 refuses the word and writes it always.
                let mut rows = None;
                for explain in ["EXPLAIN EXTENDED ", "EXPLAIN "] {
                    if let Ok(r) = sqlx::raw_sql(&format!("{explain}{sql}"))
                        .fetch_all(&mut *conn)
                        .await
                    {
                        rows = Some(r);
                        break;
                    }
                }
                let plan = rows?
                    .iter()
                    .map(|r| (cell(r, "table"), cell(r, "type"), cell(r, "Extra")))
                    .collect();
                let warnings = sqlx::raw_sql("SHOW WARNINGS")
                    .fetch_all(&mut *conn)
                    .await
                    .ok()?;
                let note = warnings
                    .iter()
                    .find(|w| cell(w, "Code") == "1003")
                    .map(|w| cell(w, "Message"))?;
                Some((note, plan))
            };
            let result = read().await;
            server::end_read(&mut *conn).await;
            result
        })
    }

    /// Runs one of aiq's own catalog queries as a read (with a tighter time
    /// limit when given) and keeps its rows.
    fn internal(&self, sql: &str, timeout: Option<Duration>) -> Result<Collect, ExecError> {
        let mut out = Collect::default();
        let no_cancel = CancelToken::new();
        self.rt.block_on(async {
            let mut conn = self.conn.lock().await;
            self.session.revive(&mut conn).await?;
            let timeout = timeout.unwrap_or(self.options.timeout);
            self.read(&mut conn, sql, timeout, &mut out, &no_cancel)
                .await
        })?;
        Ok(out)
    }

    /// The rows of one of the fingerprint queries as one line.
    fn fingerprint_rows(&self, sql: &str) -> Option<String> {
        let out = self
            .internal(sql, None)
            .map_err(|e| tracing::info!("no catalog fingerprint: {e}"))
            .ok()?;
        Some(
            out.rows
                .iter()
                .flat_map(|r| r.iter().map(Value::to_text))
                .collect::<Vec<_>>()
                .join(";"),
        )
    }

    /// Prepares `sql` and streams its rows in the binary protocol: a
    /// prepared statement is always exactly one statement on the server,
    /// whatever the text holds. The few statements the server cannot
    /// prepare go through the text protocol instead.
    async fn stream(
        &self,
        conn: &mut MySqlConnection,
        sql: &str,
        sink: &mut dyn RowSink,
        cancelled: &CancelToken,
    ) -> Result<(u64, u64), ExecError> {
        let statement = match (&mut *conn).prepare(sql).await {
            Ok(statement) => statement,
            Err(sqlx::Error::Database(db))
                if db.code().as_deref() == Some("HY000")
                    && db.message().contains("prepared statement protocol") =>
            {
                return self.stream_text(conn, sql, sink, cancelled).await;
            }
            Err(e) => return Err(self.session.error(e)),
        };
        let (columns, kinds) = describe(statement.columns());
        sink.columns(&columns)?;
        let rows = (&mut *conn).fetch_many(statement.query());
        pump(
            rows,
            sink,
            cancelled,
            &self.session.canceller(true),
            |done: &MySqlQueryResult| done.rows_affected(),
            |row: &MySqlRow, out| decode_row(row, &kinds, true, out),
            |e| self.session.error(e),
        )
        .await
    }

    /// Streams `sql`'s rows in the text protocol; the columns come from the
    /// first row (none when no row comes back).
    async fn stream_text(
        &self,
        conn: &mut MySqlConnection,
        sql: &str,
        sink: &mut dyn RowSink,
        cancelled: &CancelToken,
    ) -> Result<(u64, u64), ExecError> {
        let pending: RefCell<Option<Vec<Column>>> = RefCell::new(None);
        let mut kinds: Vec<Kind> = Vec::new();
        let mut first = FirstRow {
            sink,
            pending: &pending,
            sent: false,
        };
        let counts = {
            let rows = (&mut *conn).fetch_many(sqlx::raw_sql(sql));
            pump(
                rows,
                &mut first,
                cancelled,
                &self.session.canceller(true),
                |done: &MySqlQueryResult| done.rows_affected(),
                |row: &MySqlRow, out| {
                    if kinds.is_empty() && !row.columns().is_empty() {
                        let (columns, k) = describe(row.columns());
                        kinds = k;
                        *pending.borrow_mut() = Some(columns);
                    }
                    decode_row(row, &kinds, false, out)
                },
                |e| self.session.error(e),
            )
            .await?
        };
        if !first.sent {
            first.sink.columns(&[])?;
        }
        Ok(counts)
    }
}

/// Result columns and how to decode each.
fn describe(columns: &[MySqlColumn]) -> (Vec<Column>, Vec<Kind>) {
    columns
        .iter()
        .map(|c| {
            let name = c.type_info().name();
            (Column::new(c.name(), name), Kind::of(name))
        })
        .unzip()
}

/// One row's values, from the binary or the text protocol.
fn decode_row(row: &MySqlRow, kinds: &[Kind], binary: bool, out: &mut Vec<Value>) {
    for (i, kind) in kinds.iter().enumerate() {
        let bytes = row.try_get_unchecked::<Option<&[u8]>, _>(i).ok().flatten();
        out.push(match bytes {
            Some(b) if binary => kind.decode_binary(b),
            Some(b) => kind.decode(b),
            None => Value::Null,
        });
    }
}

/// Sends the columns, named from the first row, just before that row.
struct FirstRow<'a, 'b> {
    sink: &'a mut dyn RowSink,
    pending: &'b RefCell<Option<Vec<Column>>>,
    sent: bool,
}

impl RowSink for FirstRow<'_, '_> {
    fn columns(&mut self, columns: &[Column]) -> std::io::Result<()> {
        self.sent = true;
        self.sink.columns(columns)
    }

    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        if !self.sent {
            let columns = self.pending.borrow_mut().take().unwrap_or_default();
            self.columns(&columns)?;
        }
        self.sink.row(row)
    }
}

impl DataSource for MySqlSource {
    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        let (note, plan) = self.rewrite(sql.sql())?;
        Some(super::reads::mysql_rewrite(&note, &plan))
    }

    fn own_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    fn kind(&self) -> EngineKind {
        EngineKind::MySql
    }

    fn user_functions(&self) -> Option<Arc<crate::safety::UserFunctions>> {
        self.functions.get(|| self.internal(USER_FUNCTIONS, None))
    }

    fn fingerprint(&self) -> Option<String> {
        self.fingerprint_since(None).map(|since| since.key)
    }

    /// On MariaDB, `MARIADB_QUICK` (has the server written anything at
    /// all?) and `FINGERPRINT`, see [`server::quick_then_full`]: its
    /// `information_schema` opens every table's definition, tens of
    /// milliseconds for a few thousand tables. MySQL answers `FINGERPRINT`
    /// from its data dictionary, quickly enough on its own.
    fn fingerprint_since(&self, cached: Option<&str>) -> Option<Since> {
        if self.mariadb {
            server::quick_then_full(
                cached,
                || self.fingerprint_rows(MARIADB_QUICK),
                || self.fingerprint_rows(FINGERPRINT),
            )
        } else {
            let key = self.fingerprint_rows(FINGERPRINT)?;
            Some(Since { key, restamp: None })
        }
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        introspect(self).map_err(|e| {
            SourceError(format!(
                "cannot read the {} schema: {e}",
                if self.mariadb { "MariaDB" } else { "MySQL" }
            ))
        })
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let timeout = self.options.timeout;
        self.session.execute(
            &self.rt,
            &self.conn,
            (sql, self.options.allow_write),
            &self.functions,
            cancel,
            async |conn, write| {
                if !write {
                    return self.read(conn, sql.sql(), timeout, sink, cancel).await;
                }
                sqlx::raw_sql(&self.timeout_setting(timeout))
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| self.session.error(e))?;
                self.stream(conn, sql.sql(), sink, cancel).await
            },
        )
    }

    fn server_status(&self) -> Option<ServerStatus> {
        Some(self.status.clone())
    }

    fn login_privileges(&self, hidden: &[Table]) -> Option<Result<LoginPrivileges, SourceError>> {
        let run = |sql: &str| self.internal(sql, None);
        Some(super::login::mysql(&run, hidden).map_err(|e| SourceError(e.to_string())))
    }
}

/// Checksums of the database's tables (with their row estimates and last
/// update), columns and keys, for the catalog cache: quick catalog queries
/// (a sum of CRC32s, so no `group_concat` length limit applies).
const FINGERPRINT: &str = "\
    SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(':', TABLE_NAME, TABLE_TYPE, IFNULL(TABLE_ROWS, 0), \
      IFNULL(UPDATE_TIME, ''), TABLE_COMMENT))), 0) \
    FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() \
    UNION ALL \
    SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(':', TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, \
      IS_NULLABLE, COLUMN_KEY, COLUMN_COMMENT))), 0) \
    FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
    UNION ALL \
    SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(':', TABLE_NAME, COLUMN_NAME, CONSTRAINT_NAME, \
      IFNULL(REFERENCED_TABLE_NAME, ''), IFNULL(REFERENCED_COLUMN_NAME, '')))), 0) \
    FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE()";

/// Whether a MariaDB server wrote anything at all, in one tiny query that
/// opens no table: InnoDB's log sequence number moves with every change to
/// an InnoDB table, data or definition (the data dictionary is InnoDB too);
/// the statement counters (`Com_*`, since the server started, never going
/// back) move with every statement that can change a table of any engine
/// or what the login may see (DDL, DML, GRANT, FLUSH, ANALYZE …) — all of
/// them but those that only read or manage the session's own transaction;
/// the GTID positions move with replicated transactions; with the login
/// and the database. When it is what it was, the catalog is too, and
/// [`FINGERPRINT`] is skipped.
const MARIADB_QUICK: &str = "\
    SELECT MD5(CONCAT_WS(' ', \
      (SELECT MAX(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS \
        WHERE VARIABLE_NAME = 'INNODB_LSN_CURRENT'), \
      (SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS \
        WHERE VARIABLE_NAME LIKE 'COM\\_%' \
          AND VARIABLE_NAME NOT LIKE 'COM\\_SHOW\\_%' AND VARIABLE_NAME NOT LIKE 'COM\\_STMT\\_%' \
          AND VARIABLE_NAME NOT IN ('COM_SELECT', 'COM_SET_OPTION', 'COM_BEGIN', 'COM_COMMIT', \
            'COM_ROLLBACK', 'COM_SAVEPOINT', 'COM_RELEASE_SAVEPOINT', 'COM_ROLLBACK_TO_SAVEPOINT', \
            'COM_EMPTY_QUERY', 'COM_ADMIN_COMMANDS', 'COM_CHANGE_DB', 'COM_DO', 'COM_HELP', \
            'COM_SIGNAL', 'COM_RESIGNAL', 'COM_GET_DIAGNOSTICS', 'COM_CHECK', 'COM_CHECKSUM', \
            'COM_KILL', 'COM_LOCK_TABLES', 'COM_UNLOCK_TABLES')), \
      @@gtid_current_pos, @@gtid_slave_pos, CURRENT_USER(), DATABASE()))";

/// Tables and views of the selected database: tables in one query, their
/// columns in another (joined here: MariaDB joins two `information_schema`
/// tables by reading one again for every row of the other, 1.8 s for 2,000
/// tables against 80 ms for the two alone), foreign keys in a third,
/// samples in a fourth; partitioned tables' partitions in one more when
/// there are any (see [`describe_partitions`]).
/// What each view reaches (SPEC §4.2, "Behind a name"), from the SQL the
/// server keeps for it; a view whose SQL cannot be read reaches what is
/// unknown.
fn view_reaches(source: &MySqlSource, tables: &mut [Table]) {
    if !tables.iter().any(|t| t.kind == TableKind::View) {
        return;
    }
    let read = |sql: &str| source.internal(sql, None).map(|c| c.rows);
    let definitions = read(
        "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS \
         WHERE TABLE_SCHEMA = DATABASE()",
    );
    let functions: HashSet<String> = read(
        "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()",
    )
    .unwrap_or_default()
    .iter()
    .filter_map(|r| r.first().and_then(text))
    .map(|n| n.to_lowercase())
    .collect();
    let names: HashSet<String> = tables.iter().map(|t| t.name.to_lowercase()).collect();
    let definitions: HashMap<String, String> = definitions
        .unwrap_or_default()
        .iter()
        .filter_map(|r| Some((r.first().and_then(text)?, r.get(1).and_then(text)?)))
        .collect();
    for t in tables.iter_mut().filter(|t| t.kind == TableKind::View) {
        let definition = definitions.get(&t.name).map_or("", String::as_str);
        t.reaches = crate::source::reaches_by_words(
            &t.name.to_lowercase(),
            definition,
            &MySqlDialect {},
            &names,
            &functions,
        );
    }
}

fn introspect(source: &MySqlSource) -> Result<Catalog, ExecError> {
    let described = source.internal(
        "SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT, ENGINE, CREATE_OPTIONS \
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
        None,
    )?;
    // Partitioned tables (and Spider's, whose comment is a link's
    // connection string, not words for people) are described by
    // `describe_partitions` below.
    let mut partitioned: Vec<String> = Vec::new();
    let mut spider: Vec<(String, String)> = Vec::new();
    // Spider tables whose shards did not answer: not sampled.
    let mut unreachable: HashSet<String> = HashSet::new();
    let mut described: HashMap<String, Table> = described
        .rows
        .iter()
        .map(|r| {
            let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
            let view = cell(1).eq_ignore_ascii_case("VIEW");
            let is_spider = cell(4).eq_ignore_ascii_case("SPIDER");
            // The server could not open it (its comment then says why).
            if is_spider && r.get(2).is_none_or(|v| *v == Value::Null) {
                unreachable.insert(cell(0));
            }
            if cell(5).to_ascii_lowercase().contains("partitioned") {
                partitioned.push(cell(0));
            }
            if is_spider {
                // An unreachable table's comment is the server's error.
                let comment = if unreachable.contains(&cell(0)) {
                    String::new()
                } else {
                    cell(3)
                };
                spider.push((cell(0), comment));
            }
            let table = Table {
                // The connected database's tables only: a dot is the
                // name's own.
                one_name: cell(0).contains('.'),
                name: cell(0),
                kind: if view {
                    TableKind::View
                } else {
                    TableKind::Table
                },
                row_estimate: if view {
                    None
                } else {
                    cell(2).parse::<u64>().ok()
                },
                comment: r
                    .get(3)
                    .and_then(text)
                    .filter(|c| !(c.is_empty() || view && c == "VIEW" || is_spider)),
                ..Table::default()
            };
            (table.name.clone(), table)
        })
        .collect();
    describe_partitions(source, &mut described, &partitioned, &spider);
    let columns = source.internal(
        "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
         ORDER BY TABLE_NAME, CAST(TABLE_NAME AS BINARY), ORDINAL_POSITION",
        None,
    )?;
    // Names that differ only in case are one name to `information_schema`'s
    // collation: the binary order after it keeps each table's columns
    // together, and which comes first the same every time.
    let mut tables: Vec<Table> = Vec::new();
    for r in &columns.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let name = cell(0);
        if tables.last().is_none_or(|t| t.name != name) {
            // A table created between the two queries is left for the
            // next read.
            let Some(table) = described.remove(&name) else {
                continue;
            };
            tables.push(table);
        }
        if let Some(t) = tables.last_mut() {
            t.columns.push(ColumnInfo {
                name: cell(1),
                type_name: cell(2),
                nullable: cell(3) == "YES",
                primary_key: cell(4) == "PRI",
                samples: Vec::new(),
            });
        }
    }
    view_reaches(source, &mut tables);
    // This one opens every table: a remote table whose server does not
    // answer (a Spider shard that is down) fails it, and then the schema
    // goes without foreign keys rather than unread.
    let keys = source
        .internal(
            "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, \
                    REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE \
             WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL \
             ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
            None,
        )
        .unwrap_or_else(|e| {
            tracing::info!("no foreign keys: {e}");
            Collect::default()
        });
    let mut last: Option<(String, String)> = None;
    for r in &keys.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let Some(t) = tables.iter_mut().find(|t| t.name == cell(0)) else {
            continue;
        };
        let key = (cell(0), cell(1));
        if last.as_ref() != Some(&key) {
            t.foreign_keys.push(ForeignKey {
                columns: Vec::new(),
                ref_table: cell(3),
                ref_columns: Vec::new(),
            });
            last = Some(key);
        }
        if let Some(fk) = t.foreign_keys.last_mut() {
            fk.columns.push(cell(2));
            fk.ref_columns.push(cell(4));
        }
    }
    sample_columns(
        &mut tables,
        // One table that cannot be read would cost every table its samples.
        |table| unreachable.contains(table),
        // The first rows of each column, as they are: NULLs and repeats
        // are dropped as the samples are taken. (A derived table per column
        // with `DISTINCT`, as PostgreSQL gets, costs MariaDB ~2 ms each to
        // materialise: 4 s for 2,000 columns, past the budget, so no samples
        // at all; this form takes 0.1 s.)
        |k, table, column| {
            let (t, c) = (quote(&table.name), quote(column));
            format!("(SELECT {k} AS k, CAST({c} AS CHAR) AS v FROM {t} LIMIT {SAMPLE_ROWS})")
        },
        // `Paid` and `paid` are one value to the collation, two samples.
        "k, v, CAST(v AS BINARY)",
        |sql| source.internal(sql, Some(SAMPLE_BUDGET)),
    );
    Ok(Catalog {
        engine: source.status.version.clone(),
        tables,
    })
}

/// Says how each partitioned table is partitioned, and where a Spider
/// table's shards live, in one query for all of them (none when there are
/// none): the partitions are not tables of their own in MySQL's catalog,
/// so the table is already listed once. A Spider table's servers are
/// named from its partitions' comments (or its own), never its hosts or
/// logins. When the query fails, the tables go undescribed rather than
/// the schema unread.
fn describe_partitions(
    source: &MySqlSource,
    tables: &mut HashMap<String, Table>,
    partitioned: &[String],
    spider: &[(String, String)],
) {
    let mut facts: HashMap<String, Partitioning> = spider
        .iter()
        .map(|(name, comment)| {
            let p = Partitioning {
                remote: 1,
                servers: spider_server(comment).into_iter().collect(),
                remote_kind: RemoteKind::Spider,
                ..Partitioning::default()
            };
            (name.clone(), p)
        })
        .collect();
    let names: Vec<String> = partitioned.iter().map(|n| quote_string(n)).collect();
    let rows = if names.is_empty() {
        Collect::default()
    } else {
        let sql = format!(
            "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_METHOD, PARTITION_EXPRESSION, \
                SUBPARTITION_METHOD, SUBPARTITION_EXPRESSION, PARTITION_COMMENT \
         FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({})",
            names.join(", ")
        );
        match source.internal(&sql, Some(SAMPLE_BUDGET)) {
            Ok(rows) => rows,
            Err(e) => {
                tracing::info!("partitions not described: {e}");
                Collect::default()
            }
        }
    };
    for r in &rows.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        let name = cell(0);
        let is_spider = facts
            .get(&name)
            .is_some_and(|p| p.remote_kind == RemoteKind::Spider);
        let p = facts.entry(name).or_default();
        if !cell(1).is_empty() {
            p.partitions += 1;
            if p.key.is_empty() {
                p.key = format!("{} ({})", cell(2), plain_expression(&cell(3)));
                let sub = cell(4);
                if !sub.is_empty() {
                    p.sub_key = Some(format!("{sub} ({})", plain_expression(&cell(5))));
                }
            }
        }
        if is_spider {
            // A partition's comment names its server, else the table's does.
            if let Some(s) = spider_server(&cell(6)) {
                if !p.servers.contains(&s) {
                    p.servers.push(s);
                    p.servers.sort();
                }
            }
        }
    }
    for (name, p) in facts {
        if let Some(t) = tables.get_mut(&name) {
            let own = t.comment.take();
            t.comment = Some(with_comment(own, p.describe()));
        }
    }
}

/// A MySQL string literal.
pub(super) fn quote_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// A MySQL identifier in backticks.
fn quote(name: &str) -> String {
    crate::schema::Quote::Backtick.quoted(name)
}

/// How a column's text-protocol bytes become a [`Value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Unsigned,
    Float,
    Decimal,
    Date,
    Time,
    DateTime,
    Json,
    Bits,
    Binary,
    Text,
}

impl Kind {
    fn of(type_name: &str) -> Kind {
        match type_name {
            "BOOLEAN" | "TINYINT" | "SMALLINT" | "INT" | "MEDIUMINT" | "BIGINT" | "YEAR" => {
                Kind::Int
            }
            t if t.ends_with("UNSIGNED") => Kind::Unsigned,
            "FLOAT" | "DOUBLE" => Kind::Float,
            "DECIMAL" => Kind::Decimal,
            "DATE" => Kind::Date,
            "TIME" => Kind::Time,
            "DATETIME" | "TIMESTAMP" => Kind::DateTime,
            "JSON" => Kind::Json,
            "BIT" => Kind::Bits,
            "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB"
            | "GEOMETRY" => Kind::Binary,
            _ => Kind::Text,
        }
    }

    fn decode(self, b: &[u8]) -> Value {
        let s = || String::from_utf8_lossy(b).into_owned();
        let parsed = match self {
            Kind::Int => std::str::from_utf8(b)
                .ok()
                .and_then(|t| t.parse().ok())
                .map(Value::Int),
            Kind::Unsigned => std::str::from_utf8(b)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .map(|u| {
                    i64::try_from(u)
                        .map(Value::Int)
                        .unwrap_or(Value::BigInt(u as i128))
                }),
            Kind::Float => std::str::from_utf8(b)
                .ok()
                .and_then(|t| t.parse().ok())
                .map(Value::Float),
            Kind::Decimal => Some(Value::Decimal(s())),
            Kind::Date => NaiveDate::parse_from_str(&s(), "%Y-%m-%d")
                .ok()
                .map(Value::Date),
            Kind::Time => NaiveTime::parse_from_str(&s(), "%H:%M:%S%.f")
                .ok()
                .map(Value::Time),
            Kind::DateTime => NaiveDateTime::parse_from_str(&s(), "%Y-%m-%d %H:%M:%S%.f")
                .ok()
                .map(Value::Timestamp),
            Kind::Json => Some(Value::Json(s())),
            Kind::Bits => Some(Value::Int(
                b.iter().fold(0u64, |acc, x| (acc << 8) | *x as u64) as i64,
            )),
            // Binary collations (`utf8mb4_bin`, MariaDB's JSON) share the
            // binary flag with real blobs: text when it is UTF-8.
            Kind::Binary => Some(match std::str::from_utf8(b) {
                Ok(t) => Value::Text(t.to_string()),
                Err(_) => Value::Blob(b.to_vec()),
            }),
            Kind::Text => Some(Value::Text(s())),
        };
        // Zero dates, negative or long times and the like stay as printed.
        parsed.unwrap_or_else(|| Value::Other(s()))
    }

    /// One value of the binary protocol: numbers little-endian in their
    /// column's width, dates and times as length-prefixed fields, the rest
    /// as the bytes of their text.
    fn decode_binary(self, b: &[u8]) -> Value {
        let int = |signed: bool| -> Option<Value> {
            Some(match (b.len(), signed) {
                (1, true) => Value::Int(b[0] as i8 as i64),
                (1, false) => Value::Int(b[0] as i64),
                (2, true) => Value::Int(i16::from_le_bytes(b.try_into().ok()?) as i64),
                (2, false) => Value::Int(u16::from_le_bytes(b.try_into().ok()?) as i64),
                (4, true) => Value::Int(i32::from_le_bytes(b.try_into().ok()?) as i64),
                (4, false) => Value::Int(u32::from_le_bytes(b.try_into().ok()?) as i64),
                (8, true) => Value::Int(i64::from_le_bytes(b.try_into().ok()?)),
                (8, false) => {
                    let u = u64::from_le_bytes(b.try_into().ok()?);
                    i64::try_from(u)
                        .map(Value::Int)
                        .unwrap_or(Value::BigInt(u as i128))
                }
                _ => return None,
            })
        };
        let parsed = match self {
            Kind::Int => int(true),
            Kind::Unsigned => int(false),
            Kind::Float => match b.len() {
                4 => {
                    let f = f32::from_le_bytes(b.try_into().unwrap_or_default());
                    Some(Value::Float(format!("{f:?}").parse().unwrap_or(f as f64)))
                }
                8 => Some(Value::Float(f64::from_le_bytes(
                    b.try_into().unwrap_or_default(),
                ))),
                _ => None,
            },
            Kind::Date | Kind::DateTime => binary_datetime(b, self == Kind::Date),
            Kind::Time => binary_time(b),
            _ => return self.decode(b),
        };
        parsed.unwrap_or_else(|| bytes_value(b))
    }
}

/// DATE/DATETIME/TIMESTAMP in the binary protocol: a length byte, then year
/// (2 bytes), month, day, and optionally hour, minute, second, microseconds.
fn binary_datetime(b: &[u8], date_only: bool) -> Option<Value> {
    let len = *b.first()? as usize;
    let f = b.get(1..1 + len)?;
    if len == 0 {
        return Some(Value::Other(
            if date_only {
                "0000-00-00"
            } else {
                "0000-00-00 00:00:00"
            }
            .into(),
        ));
    }
    let year = u16::from_le_bytes([*f.first()?, *f.get(1)?]) as i32;
    let (month, day) = (*f.get(2)? as u32, *f.get(3)? as u32);
    let Some(date) = NaiveDate::from_ymd_opt(year, month, day) else {
        // Zero-in-date values MySQL allows.
        return Some(Value::Other(format!("{year:04}-{month:02}-{day:02}")));
    };
    if date_only {
        return Some(Value::Date(date));
    }
    let (h, m, s) = (
        f.get(4).copied().unwrap_or(0) as u32,
        f.get(5).copied().unwrap_or(0) as u32,
        f.get(6).copied().unwrap_or(0) as u32,
    );
    let micros = match f.get(7..11) {
        Some(us) => u32::from_le_bytes(us.try_into().ok()?),
        None => 0,
    };
    Some(Value::Timestamp(date.and_hms_micro_opt(h, m, s, micros)?))
}

/// TIME in the binary protocol: a length byte, then sign, days, hours,
/// minutes, seconds and optionally microseconds. Negative times and times
/// of a day or more stay as MySQL prints them.
fn binary_time(b: &[u8]) -> Option<Value> {
    let len = *b.first()? as usize;
    let f = b.get(1..1 + len)?;
    if len == 0 {
        return Some(Value::Time(NaiveTime::MIN));
    }
    let negative = *f.first()? != 0;
    let days = u32::from_le_bytes(f.get(1..5)?.try_into().ok()?);
    let (h, m, s) = (*f.get(5)? as u32, *f.get(6)? as u32, *f.get(7)? as u32);
    let micros = match f.get(8..12) {
        Some(us) => u32::from_le_bytes(us.try_into().ok()?),
        None => 0,
    };
    if !negative && days == 0 {
        return Some(Value::Time(NaiveTime::from_hms_micro_opt(h, m, s, micros)?));
    }
    let mut text = format!(
        "{}{:02}:{m:02}:{s:02}",
        if negative { "-" } else { "" },
        days * 24 + h
    );
    if micros != 0 {
        text.push_str(&format!(".{micros:06}"));
    }
    Some(Value::Other(text))
}

/// MySQL's and MariaDB's ways with a session (see [`Session`]). Each
/// statement sets the session up again (see [`MySqlSource::begin_read`]),
/// so a connection made again needs nothing more.
struct MySql;

impl Engine for MySql {
    type Conn = MySqlConnection;

    async fn session_id(conn: &mut MySqlConnection) -> Result<u64, sqlx::Error> {
        sqlx::query_scalar("SELECT CONNECTION_ID()")
            .fetch_one(&mut *conn)
            .await
    }

    async fn cancel(conn: &mut MySqlConnection, id: u64) {
        let _ = sqlx::raw_sql(&format!("KILL QUERY {id}"))
            .execute(conn)
            .await;
    }

    fn is_timeout(db: &dyn sqlx::error::DatabaseError) -> bool {
        let text = db.message().to_ascii_lowercase();
        text.contains("max_statement_time") || text.contains("maximum statement execution time")
    }

    fn with_password(options: &MySqlConnectOptions, password: &str) -> MySqlConnectOptions {
        options.clone().password(password)
    }

    fn who(o: &MySqlConnectOptions) -> String {
        format!("{}@{}:{}", o.get_username(), o.get_host(), o.get_port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_protocol_values_are_typed() {
        assert_eq!(Kind::of("BIGINT").decode(b"-42"), Value::Int(-42));
        assert_eq!(
            Kind::of("BIGINT UNSIGNED").decode(b"18446744073709551615"),
            Value::BigInt(18446744073709551615)
        );
        assert_eq!(
            Kind::of("DECIMAL").decode(b"12.50"),
            Value::Decimal("12.50".into())
        );
        assert_eq!(Kind::of("DOUBLE").decode(b"0.1"), Value::Float(0.1));
        assert_eq!(
            Kind::of("DATETIME")
                .decode(b"2024-06-01 10:00:00")
                .to_text(),
            "2024-06-01 10:00:00"
        );
        assert_eq!(
            Kind::of("DATETIME").decode(b"0000-00-00 00:00:00"),
            Value::Other("0000-00-00 00:00:00".into())
        );
        assert_eq!(
            Kind::of("TIME").decode(b"-01:00:00"),
            Value::Other("-01:00:00".into())
        );
        assert_eq!(Kind::of("BIT").decode(&[1, 2]), Value::Int(258));
        assert_eq!(Kind::of("BLOB").decode(&[0xff]), Value::Blob(vec![0xff]));
        assert_eq!(Kind::of("VARCHAR").decode(b"x"), Value::Text("x".into()));
        assert_eq!(
            Kind::of("JSON").decode(b"{\"a\":1}"),
            Value::Json("{\"a\":1}".into())
        );
    }

    #[test]
    fn binary_protocol_values_are_typed() {
        assert_eq!(Kind::of("TINYINT").decode_binary(&[0xff]), Value::Int(-1));
        assert_eq!(
            Kind::of("TINYINT UNSIGNED").decode_binary(&[0xff]),
            Value::Int(255)
        );
        assert_eq!(
            Kind::of("BIGINT UNSIGNED").decode_binary(&[0xff; 8]),
            Value::BigInt(u64::MAX as i128)
        );
        assert_eq!(
            Kind::of("FLOAT").decode_binary(&0.1f32.to_le_bytes()),
            Value::Float(0.1)
        );
        assert_eq!(
            Kind::of("DECIMAL").decode_binary(b"-1.50"),
            Value::Decimal("-1.50".into())
        );
        assert_eq!(
            Kind::of("DATETIME")
                .decode_binary(&[11, 0xe8, 0x07, 2, 29, 13, 5, 9, 0x90, 0xd0, 3, 0])
                .to_text(),
            "2024-02-29 13:05:09.250"
        );
        assert_eq!(
            Kind::of("DATE")
                .decode_binary(&[4, 0xe8, 0x07, 2, 29])
                .to_text(),
            "2024-02-29"
        );
        assert_eq!(Kind::of("DATE").decode_binary(&[0]).to_text(), "0000-00-00");
        assert_eq!(
            Kind::of("TIME")
                .decode_binary(&[8, 1, 1, 0, 0, 0, 2, 3, 4])
                .to_text(),
            "-26:03:04"
        );
        assert_eq!(
            Kind::of("TIME")
                .decode_binary(&[8, 0, 0, 0, 0, 0, 13, 5, 9])
                .to_text(),
            "13:05:09"
        );
    }
}
