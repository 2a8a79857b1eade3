//! ClickHouse servers and clusters through the HTTP interface
//! (`clickhouse://` over HTTP, default port 8123; `clickhouses://` over
//! HTTPS, 8443), with reqwest.
//!
//! Why not the `clickhouse` crate: it maps rows onto Rust types known at
//! compile time (serde over `RowBinary`), while aiq runs statements whose
//! columns it learns only from the answer; its dynamic-row path needs
//! `RowBinaryWithNamesAndTypes`, which older servers (18.16, Debian's
//! `clickhouse-server`) do not have. Every statement is therefore sent
//! as the body of one POST and read back as `TabSeparatedWithNamesAndTypes`
//! — names, types, then rows — which every release since 18.16 speaks;
//! the rows are handed on as they arrive, the whole lines of each chunk
//! as one block of text ([`super::TextRows`]; src/source/clickhouse_rows.rs
//! and clickhouse_text.rs read them), so a result of any size streams
//! through in constant memory and CSV or TSV output writes most fields as
//! they came. A CSV or TSV export of a `SELECT` whose every column is of a
//! kind clickhouse_native.rs reads (the server describes the statement
//! first) asks for `Native` instead, which costs the server half as much
//! to send.
//!
//! Read-only, layer 2: every statement carries `readonly=1` as the last
//! setting of its request, which no statement can lift (`SET` and a
//! `SETTINGS` clause are refused by the server in readonly mode). A login
//! whose profile is already read-only cannot take settings at all, so its
//! requests carry none and the statement timeout is aiq's own. The
//! timeout and a cancel stop the statement on the server: each statement
//! has its own `query_id`, and `KILL QUERY` names it.
//!
//! Secrets: the password goes in the `Authorization` header only; every
//! URL in a message goes through [`redact_url`].

pub(crate) mod catalog;
pub(crate) mod native;
pub(crate) mod rows;
#[cfg(test)]
mod server_tests;
pub(crate) mod text;
pub(crate) mod url;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::{StatusCode, Url};

use super::spec::{redact_url, ServerSpec};
use super::{
    CancelToken, DataSource, EngineKind, ExecError, Interruptible, LoginPrivileges, OpenOptions,
    QueryStats, RowSink, Since, SourceError,
};
use crate::safety::CheckedSql;
use crate::schema::{Catalog, Table};
use crate::source::server::{self, Collect, ConnectFailure, ServerStatus};
use native::{Layout, NativeAnswer, Printing};
use rows::{Answer, Rows, Stop, TextAnswer, TEXT};
use text::exception;
use url::parse_url;

/// How long connecting may take, and how long a `KILL QUERY` may.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const KILL_TIMEOUT: Duration = Duration::from_secs(5);

/// ClickHouse's error codes aiq tells apart.
const TIMEOUT_EXCEEDED: u32 = 159;
const AUTH_CODES: [u32; 3] = [192, 193, 516];

/// Where and as whom to connect, and what every request carries.
#[derive(Clone)]
struct Endpoint {
    client: reqwest::Client,
    /// `http(s)://host:port/`, without user or password.
    base: Url,
    user: String,
    password: Option<String>,
    database: String,
    /// The settings every statement carries, in order; `readonly` last.
    settings: Vec<(&'static str, String)>,
    /// The statement timeout, for the server's own time-limit error.
    timeout: Duration,
}

pub(crate) struct ClickHouseSource {
    rt: tokio::runtime::Runtime,
    endpoint: Endpoint,
    spec: ServerSpec,
    options: OpenOptions,
    status: ServerStatus,
    /// How the server prints what its binary answer leaves open.
    printing: Printing,
    /// The login's own `readonly` setting, before aiq set one (`0`: its
    /// profile lets it write).
    profile_readonly: String,
}

/// A request that failed before any row: the server's answer or the wire's.
#[derive(Debug)]
enum Failure {
    /// The server answered with an exception (its code, if it gave one).
    Server {
        status: StatusCode,
        code: Option<u32>,
        message: String,
    },
    Http(reqwest::Error),
}

impl ConnectFailure for Failure {
    fn is_auth(&self) -> bool {
        match self {
            Failure::Server { status, code, .. } => {
                *status == StatusCode::UNAUTHORIZED
                    || *status == StatusCode::FORBIDDEN
                    || code.is_some_and(|c| AUTH_CODES.contains(&c))
            }
            Failure::Http(_) => false,
        }
    }

    fn explain(&self, spec: &ServerSpec) -> SourceError {
        let url = redact_url(&spec.url);
        let reason = match self {
            Failure::Server { message, .. } if self.is_auth() => format!(
                "{message} (give the password in the URL, in the variable a saved source names with password_env, or type it when aiq asks on a terminal)"
            ),
            Failure::Server { message, .. } => message.clone(),
            Failure::Http(e) => http_reason(e),
        };
        SourceError(format!("cannot connect to {url}: {reason}"))
    }
}

/// A transport error as one line: refused, timed out, TLS.
fn http_reason(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    if e.is_connect() && text.contains("refused") {
        "connection refused (is the server running, and listening on that host and port?)".into()
    } else if e.is_timeout() {
        format!(
            "no answer within {} s (check the host and port, and that a firewall lets aiq through)",
            CONNECT_TIMEOUT.as_secs()
        )
    } else if text.to_ascii_lowercase().contains("certificate") {
        format!("TLS failed: {text} (name the CA that signed the server's certificate with ?sslrootcert=FILE)")
    } else {
        text
    }
}

impl ClickHouseSource {
    pub(crate) fn open(spec: &ServerSpec, options: OpenOptions) -> Result<Self, SourceError> {
        let rt = server::runtime()?;
        let invalid = |why: String| {
            SourceError(format!(
                "cannot open {}: the URL is not valid: {why}",
                redact_url(&spec.url)
            ))
        };
        let parsed = parse_url(&spec.url).map_err(invalid)?;
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            // Below the server's keep-alive (`keep_alive_timeout`: 3 s on
            // older releases, 10 s on newer), so a pooled connection is
            // dropped here before the server closes it.
            .pool_idle_timeout(POOL_IDLE)
            .user_agent(concat!("aiq/", env!("CARGO_PKG_VERSION")));
        if let Some(ca) = &parsed.ca {
            let pem = std::fs::read(ca)
                .map_err(|e| invalid(format!("cannot read sslrootcert {}: {e}", ca.display())))?;
            let cert = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| invalid(format!("sslrootcert {}: {e}", ca.display())))?;
            builder = builder.add_root_certificate(cert);
        }
        let client = builder
            .build()
            .map_err(|e| SourceError(format!("cannot start the HTTP client: {e}")))?;
        let who = format!(
            "{}@{}:{}",
            parsed.user,
            parsed.base.host_str().unwrap_or(""),
            parsed.base.port_or_known_default().unwrap_or(0)
        );
        let bare = Endpoint {
            client,
            base: parsed.base.clone(),
            user: parsed.user.clone(),
            password: parsed.password.clone(),
            database: parsed.database.clone(),
            settings: Vec::new(),
            timeout: options.timeout,
        };
        // The first request carries no settings: it learns the version
        // and whether the login's profile is read-only already.
        // It also reads how the server prints decimals, dates and times
        // (see [`Printing`]).
        let probe = format!(
            "SELECT version(), (SELECT value FROM system.settings WHERE name = 'readonly'), {}",
            Printing::PROBE
        );
        let ((facts, endpoint), _) =
            server::connect(&rt, spec, &who, options.password.as_ref(), |password| {
                let mut endpoint = bare.clone();
                if password.is_some() {
                    endpoint.password = password;
                }
                let probe = probe.clone();
                async move {
                    let rows = endpoint.collect(&probe).await?;
                    Ok::<_, Failure>((rows, endpoint))
                }
            })?;
        let row = facts.rows.first().cloned().unwrap_or_default();
        let version = row.first().and_then(server::text).unwrap_or_default();
        let profile_readonly = row.get(1).and_then(server::text).unwrap_or_default();
        let printing = Printing::read(&row.iter().skip(2).map(server::text).collect::<Vec<_>>());
        let mut endpoint = endpoint;
        if profile_readonly == "0" {
            let secs = options.timeout.as_secs_f64().ceil().max(1.0);
            endpoint
                .settings
                .push(("max_execution_time", format!("{secs}")));
            if !options.allow_write {
                endpoint.settings.push(("readonly", "1".into()));
            }
        } else if profile_readonly != "1" {
            // `readonly=2`: settings may change, data may not; make it 1.
            endpoint.settings.push(("readonly", "1".into()));
        }
        let mut source = ClickHouseSource {
            rt,
            status: ServerStatus {
                version: format!("ClickHouse {version}"),
                address: format!(
                    "{}:{}/{}",
                    parsed.base.host_str().unwrap_or(""),
                    parsed.base.port_or_known_default().unwrap_or(0),
                    parsed.database
                ),
                read_only: false,
                tls: parsed.base.scheme() == "https",
            },
            endpoint,
            spec: spec.clone(),
            options,
            printing,
            profile_readonly,
        };
        // Confirmed on the server, with the settings statements carry.
        let confirmed = source
            .internal(
                "SELECT value FROM system.settings WHERE name = 'readonly'",
                None,
            )
            .map_err(|e| SourceError(format!("cannot set up the session: {e}")))?;
        source.status.read_only = confirmed
            .rows
            .first()
            .and_then(|r| r.first())
            .and_then(server::text)
            .is_some_and(|v| v == "1");
        if !source.options.allow_write && !source.status.read_only {
            return Err(SourceError(format!(
                "cannot open {}: the server did not make the session read-only, so aiq will not run statements there",
                redact_url(&spec.url)
            )));
        }
        Ok(source)
    }

    /// The database statements run in.
    pub(super) fn database(&self) -> &str {
        &self.endpoint.database
    }

    /// Runs one of aiq's own queries (catalog, fingerprint) under the
    /// statement deadline, or a tighter one, and keeps its rows.
    pub(super) fn internal(
        &self,
        sql: &str,
        timeout: Option<Duration>,
    ) -> Result<Collect, ExecError> {
        let mut out = Collect::default();
        let timeout = timeout.unwrap_or(self.options.timeout);
        self.run(sql, None, timeout, &mut out, &CancelToken::new())?;
        Ok(out)
    }

    /// Runs `sql` under the deadline and the turn's cancel: both stop it
    /// on the server by its query id. Its rows come as text, or as
    /// binary blocks of `layout`'s columns.
    fn run(
        &self,
        sql: &str,
        layout: Option<Layout>,
        timeout: Duration,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<u64, ExecError> {
        let stop = Arc::new(tokio::sync::Notify::new());
        let interrupt = {
            let stop = Arc::clone(&stop);
            move || stop.notify_one()
        };
        Interruptible::run(timeout, cancel, interrupt, || {
            self.rt.block_on(async {
                match layout {
                    Some(layout) => {
                        let answer = NativeAnswer::new(layout);
                        self.endpoint.stream(sql, answer, sink, cancel, &stop).await
                    }
                    None => {
                        let answer = TextAnswer::default();
                        self.endpoint.stream(sql, answer, sink, cancel, &stop).await
                    }
                }
            })
        })
    }

    /// The columns of `sql`'s result, when every one of them can come in
    /// the server's binary form ([`Layout::new`]): the server describes
    /// the statement without running it. `None` for anything else (a
    /// statement it cannot describe, a column read as text).
    fn layout(&self, sql: &CheckedSql) -> Option<Layout> {
        if sql.access() != crate::safety::Access::Read || sql.kind() != "SELECT" {
            return None;
        }
        // On lines of their own, so a comment at the end cannot take the
        // closing parenthesis.
        let described = self
            .internal(&format!("DESCRIBE TABLE (\n{}\n)", sql.sql()), None)
            .ok()?;
        let columns: Vec<(String, String)> = described
            .rows
            .iter()
            .map(|row| {
                let text = |i: usize| row.get(i).and_then(server::text).unwrap_or_default();
                (text(0), text(1))
            })
            .collect();
        Layout::new(&columns, self.printing)
    }
}

/// A fresh id for one statement, for `KILL QUERY`.
fn query_id() -> String {
    let mut bytes = [0u8; 12];
    let _ = getrandom::fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("aiq-{hex}")
}

/// How long an idle connection stays in the pool.
const POOL_IDLE: Duration = Duration::from_secs(2);

/// A request that failed because the connection it went out on was
/// already closed by the server (it went idle in the pool): the request
/// never reached the server, and goes once more on a new connection.
fn stale_connection(e: &reqwest::Error) -> bool {
    if e.is_timeout() || e.is_connect() {
        return false;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if text.contains("connection closed before message completed")
            || text.contains("connection reset")
            || text.contains("broken pipe")
        {
            return true;
        }
        cause = c.source();
    }
    false
}

impl Endpoint {
    /// The request for one statement: the database, the format, the query
    /// id and then the settings, `readonly` last.
    fn request(
        &self,
        sql: &str,
        query_id: &str,
        format: &str,
        settings: bool,
    ) -> reqwest::RequestBuilder {
        let mut url = self.base.clone();
        {
            let mut pairs = url.query_pairs_mut();
            pairs
                .append_pair("database", &self.database)
                .append_pair("default_format", format)
                .append_pair("query_id", query_id);
            if settings {
                for (k, v) in &self.settings {
                    pairs.append_pair(k, v);
                }
            }
        }
        self.client
            .post(url)
            .basic_auth(&self.user, self.password.as_deref())
            .body(sql.to_string())
    }

    /// Every statement carries `readonly=1`: none can change data.
    fn read_only(&self) -> bool {
        self.settings
            .iter()
            .any(|(k, v)| *k == "readonly" && v == "1")
    }

    /// Sends `sql` and waits for the answer's headers; an error status is
    /// read into a [`Failure`].
    async fn send(
        &self,
        sql: &str,
        query_id: &str,
        format: &str,
    ) -> Result<reqwest::Response, Failure> {
        let response = match self.request(sql, query_id, format, true).send().await {
            // Only a statement that cannot write goes twice.
            Err(e) if stale_connection(&e) && self.read_only() => {
                tracing::debug!("the pooled connection was closed by the server; sending again");
                self.request(sql, query_id, format, true).send().await
            }
            sent => sent,
        }
        .map_err(Failure::Http)?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        let (code, message) = exception(&body);
        let message = if message.is_empty() {
            format!("the server answered {status}")
        } else {
            message
        };
        Err(Failure::Server {
            status,
            code,
            message,
        })
    }

    /// Runs `sql` and keeps every row (for the connection probe).
    async fn collect(&self, sql: &str) -> Result<Collect, Failure> {
        let response = self.send(sql, &query_id(), TEXT).await?;
        let body = response.bytes().await.map_err(Failure::Http)?;
        let mut out = Collect::default();
        let mut reader = Rows::default();
        for line in body.split(|b| *b == b'\n') {
            if line.is_empty() {
                continue;
            }
            reader.line(line, &mut out).map_err(|e| Failure::Server {
                status: StatusCode::OK,
                code: None,
                message: e.to_string(),
            })?;
        }
        Ok(out)
    }

    /// Stops the statement `query_id` on the server.
    async fn kill(&self, query_id: &str) {
        let sql = format!("KILL QUERY WHERE query_id = '{query_id}' SYNC");
        let request = self.request(&sql, &query_id_for_kill(query_id), TEXT, false);
        let _ = tokio::time::timeout(KILL_TIMEOUT, async {
            if let Ok(r) = request.send().await {
                let _ = r.bytes().await;
            }
        })
        .await;
    }

    /// Runs one statement and streams its rows into `sink` as `answer`
    /// reads them; a notice on `stop` (the deadline or a cancel) ends it
    /// on the server.
    async fn stream(
        &self,
        sql: &str,
        mut answer: impl Answer,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
        stop: &tokio::sync::Notify,
    ) -> Result<u64, ExecError> {
        let id = query_id();
        let response = tokio::select! {
            r = self.send(sql, &id, answer.format()) => r.map_err(|e| self.exec_error(e))?,
            _ = stop.notified() => {
                self.kill(&id).await;
                return Err(ExecError::Engine("the query was stopped".into()));
            }
        };
        let mut body = response.bytes_stream();
        loop {
            let chunk = tokio::select! {
                c = body.next() => c,
                _ = stop.notified() => {
                    drop(body);
                    self.kill(&id).await;
                    return Err(ExecError::Engine("the query was stopped".into()));
                }
            };
            let Some(chunk) = chunk else { break };
            let chunk =
                chunk.map_err(|e| ExecError::Engine(format!("the answer broke off: {e}")))?;
            if let Err(e) = answer.take(&chunk, sink) {
                return Err(self.stopped(e, body, &id).await);
            }
            if cancel.is_cancelled() {
                return Err(ExecError::Cancelled);
            }
        }
        answer.end(sink).map_err(|e| self.stop_error(e))
    }

    /// Ends a statement whose answer stopped being read: a sink with
    /// enough rows, or an answer aiq cannot read, stops it on the server
    /// too, rather than have the rest sent and drained.
    async fn stopped<B>(&self, stop: Stop, body: B, id: &str) -> ExecError {
        let kill = match &stop {
            Stop::Io(io) => super::EnoughRows::is(io),
            Stop::Unreadable(_) => true,
            Stop::Exception(_) => false,
        };
        if kill {
            drop(body);
            self.kill(id).await;
        }
        self.stop_error(stop)
    }

    fn stop_error(&self, stop: Stop) -> ExecError {
        match stop {
            Stop::Io(e) => ExecError::from(e),
            Stop::Exception(text) => self.exception_error(&text),
            Stop::Unreadable(why) => ExecError::Engine(why),
        }
    }

    fn exception_error(&self, text: &str) -> ExecError {
        let (code, message) = exception(text);
        self.exec_error(Failure::Server {
            status: StatusCode::OK,
            code,
            message,
        })
    }

    fn exec_error(&self, e: Failure) -> ExecError {
        match e {
            Failure::Server {
                code: Some(TIMEOUT_EXCEEDED),
                ..
            } => ExecError::Timeout(self.timeout),
            // Releases before `system.table_functions.allow_readonly`
            // refuse every table function in a read-only session, and aiq
            // keeps the session read-only.
            Failure::Server { message, .. }
                if message.starts_with("Table functions are forbidden in readonly mode") =>
            {
                ExecError::Engine(format!(
                    "{message} (this ClickHouse release refuses table functions such as numbers() in a read-only session, which aiq keeps; make rows with arrayJoin(range(10)) or a table instead)"
                ))
            }
            Failure::Server { message, .. } => ExecError::Engine(message),
            Failure::Http(e) => {
                ExecError::Engine(format!("cannot reach the server: {}", http_reason(&e)))
            }
        }
    }
}

/// The id of the `KILL QUERY` request itself.
fn query_id_for_kill(query_id: &str) -> String {
    format!("{query_id}-kill")
}

impl DataSource for ClickHouseSource {
    /// None: the releases aiq is tested with cannot show what a statement
    /// reads (18.16 has no `EXPLAIN`), so while a column is redacted no
    /// result's values are sent (SPEC §4.3).
    fn columns_read(&self, _sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        None
    }

    fn own_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// None: a function off ClickHouse's list (a user-defined one too) is
    /// refused unless `allow_functions` names it.
    fn user_functions(&self) -> Option<std::sync::Arc<crate::safety::UserFunctions>> {
        None
    }

    fn kind(&self) -> EngineKind {
        EngineKind::ClickHouse
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        catalog::introspect(self, &self.status.version)
            .map_err(|e| SourceError(format!("cannot read the ClickHouse schema: {e}")))
    }

    fn fingerprint(&self) -> Option<String> {
        self.fingerprint_since(None).map(|since| since.key)
    }

    /// The quick check of `system.events` first (has the server written
    /// anything since?), the full fingerprint only when it has: see
    /// [`server::quick_then_full_by`].
    fn fingerprint_since(&self, cached: Option<&str>) -> Option<Since> {
        use catalog::{fingerprint, quick_fingerprint, same_quick};
        server::quick_then_full_by(
            cached,
            || quick_fingerprint(self),
            same_quick,
            || fingerprint(self),
        )
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        let started = std::time::Instant::now();
        // Rows for CSV or TSV come in the server's binary form where they
        // can (see clickhouse_native.rs).
        let layout = match sink.writes_delimited() {
            true => self.layout(sql),
            false => None,
        };
        let rows = self.run(sql.sql(), layout, self.options.timeout, sink, cancel)?;
        Ok(QueryStats {
            rows,
            elapsed: started.elapsed(),
            changed: sql.access() == crate::safety::Access::Write && self.options.allow_write,
        })
    }

    fn server_status(&self) -> Option<ServerStatus> {
        Some(self.status.clone())
    }

    fn another(&self) -> Option<Box<dyn DataSource>> {
        let rt = server::runtime().ok()?;
        Some(Box::new(ClickHouseSource {
            rt,
            endpoint: self.endpoint.clone(),
            spec: self.spec.clone(),
            options: self.options.clone(),
            status: self.status.clone(),
            printing: self.printing,
            profile_readonly: self.profile_readonly.clone(),
        }))
    }

    fn login_privileges(&self, hidden: &[Table]) -> Option<Result<LoginPrivileges, SourceError>> {
        let run = |sql: &str| self.internal(sql, None);
        Some(Ok(crate::source::server::login::clickhouse(
            &run,
            &self.endpoint.user,
            &self.profile_readonly,
            &self.endpoint.database,
            hidden,
        )))
    }
}

#[cfg(test)]
mod idle_tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};

    use super::*;

    /// Reads one HTTP request (headers, then a body of Content-Length).
    fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return false;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).is_ok()
    }

    fn answer(stream: &mut TcpStream) {
        let body = "1\n";
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.flush();
    }

    /// A server that answers the first request, takes the second on the
    /// same connection and closes it unanswered (as a server does whose
    /// keep-alive ran out just then), and answers on a new connection.
    fn closing_server() -> (String, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (first, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(first.try_clone().unwrap());
            let mut first = first;
            read_request(&mut reader);
            answer(&mut first);
            read_request(&mut reader);
            drop(reader);
            let _ = first.shutdown(std::net::Shutdown::Both);
            listener.set_nonblocking(true).unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            let mut served = 0;
            while std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        s.set_nonblocking(false).unwrap();
                        let mut reader = BufReader::new(s.try_clone().unwrap());
                        if read_request(&mut reader) {
                            answer(&mut s);
                            served += 1;
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
            served
        });
        (url, handle)
    }

    fn endpoint(url: &str, read_only: bool) -> Endpoint {
        let client = reqwest::Client::builder()
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let mut settings = Vec::new();
        if read_only {
            settings.push(("readonly", "1".to_string()));
        }
        Endpoint {
            client,
            base: Url::parse(url).unwrap(),
            user: "u".into(),
            password: None,
            database: "default".into(),
            settings,
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_connection_closed_by_the_server_is_asked_again_once_when_nothing_can_write() {
        let rt = crate::runtime::current_thread().unwrap();
        let (url, server) = closing_server();
        let e = endpoint(&url, true);
        rt.block_on(async {
            assert!(e.send("SELECT 1", "q1", TEXT).await.is_ok());
            let again = e.send("SELECT 1", "q2", TEXT).await;
            assert!(again.is_ok(), "{:?}", again.err());
        });
        assert_eq!(server.join().unwrap(), 1, "asked again on a new connection");
        // A statement that may write is not sent twice.
        let (url, server) = closing_server();
        let e = endpoint(&url, false);
        rt.block_on(async {
            assert!(e.send("SELECT 1", "q1", TEXT).await.is_ok());
            let again = e.send("INSERT INTO t VALUES (1)", "q2", TEXT).await;
            assert!(
                matches!(again, Err(Failure::Http(_))),
                "{:?}",
                again.map(|_| ())
            );
        });
        assert_eq!(server.join().unwrap(), 0);
    }
}
