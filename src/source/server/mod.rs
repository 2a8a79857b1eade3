//! What the server engines (PostgreSQL, MySQL/MariaDB, ClickHouse) share: the
//! private runtime their async driver runs on, where the password comes
//! from, connecting with one hidden prompt on a terminal, turning driver
//! errors into messages, and streaming rows from the server into a sink.
//!
//! Secrets: the password lives only in the driver's connect options in
//! memory. Every URL that reaches a message goes through [`redact_url`].

pub(crate) mod login;
pub(crate) mod mysql;
pub(crate) mod partitions;
pub(crate) mod postgres;
pub(crate) mod reads;
#[cfg(test)]
pub(crate) mod server_tests;
pub(crate) mod session;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use sqlx::Either;

use super::spec::{redact_url, ServerSpec};
use super::{CancelToken, Column, ExecError, RowSink, Since, SourceError, Value};
use crate::safety::UserFunctions;
use crate::schema::{offer_sample, sample_targets, Table};

/// How long connecting (TCP, TLS and login) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the sample query of a schema may run; the server stops it
/// after that and the schema simply has no samples.
pub(crate) const SAMPLE_BUDGET: Duration = Duration::from_millis(1500);

/// What `aiq doctor` and `aiq sources add` report about a server source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// `PostgreSQL 15.18`, `MariaDB 10.11.14`, `MySQL 8.0.36`.
    pub version: String,
    /// `host:port/database` as connected (no user, no password).
    pub address: String,
    /// The session itself refuses writes (checked on the server after
    /// connecting, not assumed).
    pub read_only: bool,
    /// The connection is encrypted.
    pub tls: bool,
}

/// A single-threaded runtime for one source's driver; the engines block on
/// it, so the synchronous [`super::DataSource`] trait stays as it is.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, SourceError> {
    crate::runtime::current_thread()
        .map_err(|e| SourceError(format!("cannot start the database driver: {e}")))
}

/// Whether the URL carries a password itself (`user:pw@` or `?password=`).
fn url_has_password(url: &str) -> bool {
    redact_url(url) != url
}

/// The password from the saved source's `password_env`, if it names one.
fn password_from_env(spec: &ServerSpec) -> Result<Option<String>, SourceError> {
    let Some(var) = &spec.password_env else {
        return Ok(None);
    };
    if url_has_password(&spec.url) {
        // A password written in the URL given on the command line wins.
        return Ok(None);
    }
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Ok(Some(v)),
        _ => Err(SourceError(format!(
            "cannot connect to {}: the saved source takes its password from ${var}, which is not set (export {var}=… and try again)",
            redact_url(&spec.url)
        ))),
    }
}

/// Connects with `attempt(password)`: the password from `password_env` (or
/// none, leaving the URL's or the driver's own, such as `PGPASSWORD`); when
/// the server turns down a login that had no password, asks once through
/// `ask` (the front end's prompt). Returns the connection and the password
/// that worked, for the cancel connection.
pub(crate) fn connect<T, E, Fut>(
    rt: &tokio::runtime::Runtime,
    spec: &ServerSpec,
    who: &str,
    ask: Option<&super::PasswordAsk>,
    mut attempt: impl FnMut(Option<String>) -> Fut,
) -> Result<(T, Option<String>), SourceError>
where
    E: ConnectFailure,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut password = password_from_env(spec)?;
    let mut asked = false;
    loop {
        let result = rt.block_on(async {
            match tokio::time::timeout(CONNECT_TIMEOUT, attempt(password.clone())).await {
                Ok(r) => r.map_err(Some),
                Err(_) => Err(None),
            }
        });
        let error = match result {
            Ok(conn) => return Ok((conn, password)),
            Err(Some(e)) => e,
            Err(None) => {
                return Err(SourceError(format!(
                    "cannot connect to {}: no answer within {} s (check the host and port, and that a firewall lets aiq through)",
                    redact_url(&spec.url),
                    CONNECT_TIMEOUT.as_secs()
                )))
            }
        };
        let ask = ask.filter(|_| {
            error.is_auth() && password.is_none() && !asked && !url_has_password(&spec.url)
        });
        if let Some(ask) = ask {
            asked = true;
            if let Some(typed) = ask(&format!("Password for {who}: ")).filter(|p| !p.is_empty()) {
                password = Some(typed);
                continue;
            }
        }
        return Err(error.explain(spec));
    }
}

/// A failed login as an engine's driver reports it.
pub(crate) trait ConnectFailure {
    /// The server turned the login down (wrong or missing password).
    fn is_auth(&self) -> bool;
    /// One line that says what went wrong and what to do.
    fn explain(&self, spec: &ServerSpec) -> SourceError;
}

impl ConnectFailure for sqlx::Error {
    fn is_auth(&self) -> bool {
        is_auth_error(self)
    }

    fn explain(&self, spec: &ServerSpec) -> SourceError {
        connect_error(self, spec)
    }
}

/// A login the server turned down (wrong or missing password).
fn is_auth_error(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => matches!(db.code().as_deref(), Some("28P01" | "28000")),
        _ => false,
    }
}

/// A connect failure as one line that says what to do.
pub(crate) fn connect_error(e: &sqlx::Error, spec: &ServerSpec) -> SourceError {
    let url = redact_url(&spec.url);
    let reason = match e {
        sqlx::Error::Io(io) if io.kind() == io::ErrorKind::ConnectionRefused => {
            "connection refused (is the server running, and listening on that host and port?)"
                .to_string()
        }
        // rustls reports a certificate it does not trust as invalid data.
        sqlx::Error::Io(io) if io.kind() == io::ErrorKind::InvalidData => tls_failed(io),
        sqlx::Error::Io(io) => format!("{io}"),
        sqlx::Error::Tls(tls) => tls_failed(tls),
        sqlx::Error::Configuration(c) => format!("the URL is not valid: {c}"),
        sqlx::Error::Database(db) if is_auth_error(e) => format!(
            "{} (give the password in the URL, in the variable a saved source names with password_env, or type it when aiq asks on a terminal)",
            db.message()
        ),
        sqlx::Error::Database(db) => db.message().to_string(),
        other => other.to_string(),
    };
    SourceError(format!("cannot connect to {url}: {reason}"))
}

fn tls_failed(e: &dyn std::fmt::Display) -> String {
    format!(
        "TLS failed: {e} (check sslmode=/ssl-mode= and the server's certificate; name the CA that signed it with sslrootcert=FILE or ssl-ca=FILE)"
    )
}

/// A driver error while a statement runs; `timeout_code` tells a server-side
/// statement timeout (which becomes [`ExecError::Timeout`]).
pub(crate) fn exec_error(
    e: sqlx::Error,
    timeout: Duration,
    lost: bool,
    is_timeout: impl Fn(&dyn sqlx::error::DatabaseError) -> bool,
) -> ExecError {
    if lost {
        return ExecError::Engine(format!(
            "the connection to the server was lost ({e}); aiq connects again for the next statement"
        ));
    }
    match e {
        sqlx::Error::Database(db) if is_timeout(db.as_ref()) => ExecError::Timeout(timeout),
        sqlx::Error::Database(db) => ExecError::Engine(db.message().to_string()),
        other => ExecError::Engine(other.to_string()),
    }
}

/// Streams a driver's rows into `sink`, converting each with `convert`;
/// checks for a cancel every 4096 rows, as the file engines do. Returns the
/// rows streamed and the rows the statement reports as changed.
pub(crate) async fn pump<A, R, S>(
    mut rows: S,
    sink: &mut dyn RowSink,
    cancelled: &CancelToken,
    stop_on_server: &(dyn Fn() + Sync),
    affected: impl Fn(&A) -> u64,
    mut convert: impl FnMut(&R, &mut Vec<Value>),
    error: impl Fn(sqlx::Error) -> ExecError,
) -> Result<(u64, u64), ExecError>
where
    S: Stream<Item = Result<Either<A, R>, sqlx::Error>> + Unpin,
{
    let mut buf: Vec<Value> = Vec::new();
    let mut count: u64 = 0;
    let mut changed: u64 = 0;
    while let Some(item) = rows.next().await {
        match item.map_err(&error)? {
            Either::Left(done) => changed += affected(&done),
            Either::Right(row) => {
                buf.clear();
                convert(&row, &mut buf);
                if let Err(e) = sink.row(&buf) {
                    // The sink has what it needs: stop the statement on the
                    // server too, so the rest is not sent and drained.
                    if super::EnoughRows::is(&e) {
                        stop_on_server();
                    }
                    return Err(e.into());
                }
                count += 1;
                if count.is_multiple_of(4096) && cancelled.is_cancelled() {
                    return Err(ExecError::Cancelled);
                }
            }
        }
    }
    Ok((count, changed))
}

/// Ends a read's transaction. A statement stopped early (a cancel, a sink
/// with enough rows) may leave its error pending on the connection, and the
/// driver hands it to the next command — so a ROLLBACK that fails is sent
/// once more, and the connection is never left in an aborted transaction.
pub(crate) async fn end_read<C>(conn: &mut C)
where
    for<'c> &'c mut C: sqlx::Executor<'c>,
{
    for _ in 0..2 {
        if sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.is_ok() {
            return;
        }
    }
}

/// After this long without a statement, a connection is pinged before the
/// next one (servers, proxies and firewalls drop quiet connections).
const IDLE_CHECK: Duration = Duration::from_secs(60);

/// Whether a connection may have died: it was idle for a while, or the
/// last statement failed because the connection broke. The engines then
/// ping it and connect again before the next statement, so a chat left
/// open over lunch still works.
pub(crate) struct Liveness {
    last_used: std::sync::Mutex<Instant>,
    broken: AtomicBool,
    abandoned: AtomicBool,
}

impl Liveness {
    pub(crate) fn new() -> Self {
        Liveness {
            last_used: std::sync::Mutex::new(Instant::now()),
            broken: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
        }
    }

    pub(crate) fn needs_check(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
            || self
                .last_used
                .lock()
                .map(|t| t.elapsed() > IDLE_CHECK)
                .unwrap_or(true)
    }

    /// The connection was left in the middle of a reply: it is made again,
    /// without asking it anything, before it is used.
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
        self.broken.store(true, Ordering::SeqCst);
    }

    /// The connection just worked.
    pub(crate) fn used(&self) {
        self.broken.store(false, Ordering::SeqCst);
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Looks at a failure: a lost connection is checked before the next
    /// statement. True when the connection was lost.
    pub(crate) fn note(&self, e: &sqlx::Error) -> bool {
        let lost = match e {
            sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => true,
            // PostgreSQL: the server ends the session (admin, crash, shutdown).
            sqlx::Error::Database(db) => {
                matches!(db.code().as_deref(), Some("57P01" | "57P02" | "57P03"))
            }
            _ => false,
        };
        if lost {
            self.broken.store(true, Ordering::SeqCst);
        }
        lost
    }
}

/// How long a statement may go on after aiq asked the server to stop it
/// (Ctrl-C, the timeout) before aiq stops waiting for it. A server that
/// waits on another one may not stop at once: a MariaDB Spider head does
/// not pass `KILL QUERY` on to a shard that is busy.
pub(crate) const GIVE_UP_AFTER: Duration = Duration::from_secs(3);

/// Set when aiq asked the server to stop the running statement; see
/// [`run_statement`].
#[derive(Clone, Default)]
pub(crate) struct Interrupted(std::sync::Arc<AtomicBool>);

impl Interrupted {
    /// `interrupt`, noting first that it was called.
    pub(crate) fn noting(
        &self,
        interrupt: impl Fn() + Send + Sync + 'static,
    ) -> impl Fn() + Send + Sync + 'static {
        let flag = std::sync::Arc::clone(&self.0);
        move || {
            flag.store(true, Ordering::SeqCst);
            interrupt()
        }
    }

    /// Resolves [`GIVE_UP_AFTER`] after the interrupt, never before it.
    async fn given_up(&self) {
        while !self.0.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(GIVE_UP_AFTER).await;
    }
}

/// Runs one statement's work on a server connection: `body` gets the
/// connection (locked for the statement), a success marks it as alive, and
/// the count reported is the rows streamed, or for a write that returns no
/// rows, the rows it changed. When the server has not ended a read
/// [`GIVE_UP_AFTER`] it was asked to, aiq stops waiting: the connection,
/// left in the middle of a reply, is dropped and made again before the
/// next statement, and the read counts as cancelled.
pub(crate) fn run_statement<C>(
    rt: &tokio::runtime::Runtime,
    conn: &tokio::sync::Mutex<C>,
    live: &Liveness,
    write: bool,
    interrupted: &Interrupted,
    body: impl AsyncFnOnce(&mut C) -> Result<(u64, u64), ExecError>,
) -> Result<u64, ExecError> {
    let (rows, changed) = rt.block_on(async {
        let mut conn = conn.lock().await;
        // A write is waited for: the server may still commit it, so it
        // cannot be called cancelled until the server says so.
        let give_up = async {
            if write {
                std::future::pending::<()>().await
            }
            interrupted.given_up().await
        };
        let result = tokio::select! {
            result = body(&mut conn) => result,
            () = give_up => {
                tracing::info!("the server did not stop the statement; leaving its connection");
                live.abandon();
                Err(ExecError::Cancelled)
            }
        };
        if result.is_ok() {
            live.used();
        }
        result
    })?;
    Ok(if write && rows == 0 { changed } else { rows })
}

/// Pings a connection that may have died (see [`Liveness`]) and, if it
/// did, connects again with the same options and puts the new connection
/// in its place. True when it connected again (the engine then asks the
/// server for the new connection's id).
pub(crate) async fn revive<C: sqlx::Connection>(
    live: &Liveness,
    conn: &mut C,
    options: &C::Options,
    spec: &ServerSpec,
) -> Result<bool, ExecError> {
    let abandoned = live.abandoned.swap(false, Ordering::SeqCst);
    if !abandoned && (!live.needs_check() || conn.ping().await.is_ok()) {
        return Ok(false);
    }
    tracing::info!("the connection was lost; connecting again");
    *conn = C::connect_with(options).await.map_err(|e| {
        ExecError::Engine(format!(
            "the connection to the server was lost and could not be made again: {}",
            connect_error(&e, spec)
        ))
    })?;
    live.used();
    Ok(true)
}

/// Samples for the short text columns of `tables` (but those `skip`
/// names), from the first rows of each table, in one `UNION ALL` query:
/// `part(k, table, column)` writes the engine's `SELECT k, v …` for one
/// column (NULLs and repeats are dropped here), `order` what the whole is
/// ordered by (`k, v`, and what breaks ties between values the collation
/// calls equal, so the text is the same every time), and `run` runs it
/// under [`SAMPLE_BUDGET`]. None when it fails or runs over.
pub(crate) fn sample_columns(
    tables: &mut [Table],
    skip: impl Fn(&str) -> bool,
    part: impl Fn(usize, &Table, &str) -> String,
    order: &str,
    run: impl FnOnce(&str) -> Result<Collect, ExecError>,
) {
    sample_columns_up_to(2000, tables, skip, part, order, run)
}

/// [`sample_columns`] for at most `cap` columns, for engines where each
/// sampled table costs the query more.
pub(crate) fn sample_columns_up_to(
    cap: usize,
    tables: &mut [Table],
    skip: impl Fn(&str) -> bool,
    part: impl Fn(usize, &Table, &str) -> String,
    order: &str,
    run: impl FnOnce(&str) -> Result<Collect, ExecError>,
) {
    let targets: Vec<(usize, usize)> = sample_targets(tables, false)
        .into_iter()
        .filter(|(ti, _)| !skip(&tables[*ti].name))
        .take(cap)
        .collect();
    if targets.is_empty() {
        return;
    }
    let parts: Vec<String> = targets
        .iter()
        .enumerate()
        .map(|(k, (ti, ci))| part(k, &tables[*ti], &tables[*ti].columns[*ci].name))
        .collect();
    let sql = format!(
        "SELECT k, v FROM ({}) u ORDER BY {order}",
        parts.join(" UNION ALL ")
    );
    let Ok(hits) = run(&sql) else {
        return;
    };
    for r in hits.rows {
        if let (Some(Value::Int(k)), Some(v)) = (r.first(), r.get(1).and_then(text)) {
            if let Some((ti, ci)) = targets.get(*k as usize) {
                offer_sample(&mut tables[*ti].columns[*ci], &v);
            }
        }
    }
}

/// A sink that keeps every row, for the engines' own catalog queries.
#[derive(Default)]
pub(crate) struct Collect {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
}

impl RowSink for Collect {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        self.rows.push(row.to_vec());
        Ok(())
    }

    fn row_owned(&mut self, row: Vec<Value>) -> io::Result<()> {
        self.rows.push(row);
        Ok(())
    }
}

/// A cell of a catalog query as text (NULL as `None`).
pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        other => Some(other.to_text()),
    }
}

/// Runs `cancel` (which opens a second connection and asks the server to
/// stop the statement) on a thread of its own — it must not block the
/// driver's runtime — and, with `wait`, waits for it.
pub(crate) fn cancel_on_server(wait: bool, cancel: impl FnOnce() + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("aiq-cancel".into())
        .spawn(cancel);
    if let (true, Ok(handle)) = (wait, spawned) {
        let _ = handle.join();
    }
}

/// Bytes as text when they are UTF-8, else as `\x…` hex.
pub(crate) fn bytes_value(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s) => Value::Other(s.to_string()),
        Err(_) => Value::Blob(bytes.to_vec()),
    }
}

/// Separates the two parts of a server's catalog fingerprint.
const UNIT: char = '\u{1f}';

/// A server's catalog fingerprint in two parts joined by a unit separator:
/// `quick`, one tiny query that moves whenever the server writes anything
/// at all, and `full`, the catalog's own checksums. When `quick` is what it
/// was when `cached` was taken, the catalog cannot have changed: `cached`
/// comes back without the full fingerprint. Else `full` is taken; when that
/// part of `cached` is the same (the server wrote, but not to this catalog:
/// another database, background maintenance), `cached` still comes back,
/// with the fingerprint of now to keep the entry under, so that the next
/// run's quick check matches again.
pub(crate) fn quick_then_full(
    cached: Option<&str>,
    quick: impl FnOnce() -> Option<String>,
    full: impl FnOnce() -> Option<String>,
) -> Option<Since> {
    quick_then_full_by(cached, quick, |now, then| now == then, full)
}

/// [`quick_then_full`] where two quick parts may differ in their text and
/// still say the same (a server start time read to within a second):
/// `same(now, cached)` decides. It must answer `false` whenever in doubt;
/// a `false` only costs the full fingerprint.
pub(crate) fn quick_then_full_by(
    cached: Option<&str>,
    quick: impl FnOnce() -> Option<String>,
    same: impl Fn(&str, &str) -> bool,
    full: impl FnOnce() -> Option<String>,
) -> Option<Since> {
    let cached = cached.and_then(|c| c.split_once(UNIT).map(|parts| (c, parts)));
    let quick = quick()?;
    if let Some((whole, _)) = cached.filter(|(_, (q, _))| same(&quick, q)) {
        tracing::info!("nothing written since the cached catalog fingerprint");
        return Some(Since {
            key: whole.to_string(),
            restamp: None,
        });
    }
    let full = full()?;
    let now = format!("{quick}{UNIT}{full}");
    Some(match cached.filter(|(_, (_, f))| *f == full) {
        Some((whole, _)) => Since {
            key: whole.to_string(),
            restamp: Some(now),
        },
        None => Since {
            key: now,
            restamp: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_fingerprint_is_taken_only_when_the_server_wrote() {
        let full_taken = std::cell::Cell::new(0);
        let since = |cached: Option<&str>, quick: &str, full: &str| {
            quick_then_full(
                cached,
                || Some(quick.to_string()),
                || {
                    full_taken.set(full_taken.get() + 1);
                    Some(full.to_string())
                },
            )
            .unwrap()
        };
        // No entry yet: both parts.
        let first = since(None, "q1", "f1");
        assert_eq!(first.key, "q1\u{1f}f1");
        assert_eq!((first.restamp, full_taken.get()), (None, 1));
        // Nothing written: the entry as it is, without the full query.
        let same = since(Some("q1\u{1f}f1"), "q1", "f9");
        assert_eq!((same.key.as_str(), same.restamp), ("q1\u{1f}f1", None));
        assert_eq!(full_taken.get(), 1);
        // Written elsewhere: the entry still serves, restamped.
        let elsewhere = since(Some("q1\u{1f}f1"), "q2", "f1");
        assert_eq!(elsewhere.key, "q1\u{1f}f1");
        assert_eq!(elsewhere.restamp.as_deref(), Some("q2\u{1f}f1"));
        // The catalog changed: a new key, so the entry is not used.
        let changed = since(Some("q1\u{1f}f1"), "q2", "f2");
        assert_eq!(
            (changed.key.as_str(), changed.restamp),
            ("q2\u{1f}f2", None)
        );
        // An entry from before the two parts is not trusted.
        let old = since(Some("f1"), "q1", "f1");
        assert_eq!((old.key.as_str(), old.restamp), ("q1\u{1f}f1", None));
        // No fingerprint when a part cannot be taken.
        assert_eq!(quick_then_full(None, || None, || Some("f".into())), None);
        assert_eq!(quick_then_full(None, || Some("q".into()), || None), None);
    }

    #[test]
    fn password_in_url_is_noticed() {
        assert!(url_has_password("postgres://a:b@h/d"));
        assert!(url_has_password("postgres://h/d?password=x"));
        assert!(!url_has_password("postgres://a@h/d"));
    }

    #[test]
    fn password_env_must_be_set() {
        let spec = ServerSpec {
            protocol: super::super::spec::ServerProtocol::Postgres,
            url: "postgres://a@h/d".into(),
            password_env: Some("AIQ_TEST_SURELY_UNSET_VAR".into()),
        };
        let e = password_from_env(&spec).unwrap_err();
        assert!(e.0.contains("$AIQ_TEST_SURELY_UNSET_VAR"), "{e}");
    }
}

/// The database's own functions (SPEC §4.2, "Behind a name"), read from
/// its catalog once and again after a write (which may define or drop
/// one).
#[derive(Default)]
pub(crate) struct UserFunctionCache(std::sync::Mutex<Option<std::sync::Arc<UserFunctions>>>);

impl UserFunctionCache {
    /// The functions, read with `read` (rows of lowercase name and
    /// whether it may change data) when not known yet.
    pub(crate) fn get(
        &self,
        read: impl FnOnce() -> Result<Collect, ExecError>,
    ) -> Option<std::sync::Arc<UserFunctions>> {
        let mut cached = self.0.lock().ok()?;
        if cached.is_none() {
            let functions = read()
                .ok()?
                .rows
                .iter()
                .filter_map(|r| match (r.first(), r.get(1)) {
                    (Some(Value::Text(name)), Some(Value::Bool(changes))) => {
                        Some((name.to_lowercase(), *changes))
                    }
                    (Some(Value::Text(name)), Some(Value::Int(changes))) => {
                        Some((name.to_lowercase(), *changes != 0))
                    }
                    _ => None,
                })
                .collect();
            *cached = Some(std::sync::Arc::new(UserFunctions { functions }));
        }
        cached.clone()
    }

    /// Forgets them: a write may have changed them.
    pub(crate) fn forget(&self) {
        if let Ok(mut cached) = self.0.lock() {
            *cached = None;
        }
    }
}
