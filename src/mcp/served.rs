//! The sources an MCP server serves, by name: resolved when the server
//! starts, opened on first use (a saved server that is down must not stop
//! the others), then kept open. Each has its connections, shared by the
//! calls on it one statement per connection ([`SharedSource`]): one for most
//! engines, up to the server's concurrent calls for a read-only SQLite
//! file; calls on different sources run side by side. Never prints; errors
//! are lines for the client.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::agent::SourceOpener;
use crate::cancel::CancelToken;
use crate::safety::{CheckedSql, Dialect};
use crate::schema::Catalog;
use crate::source::{
    DataSource, EngineKind, ExecError, QueryStats, RowSink, ServerStatus, SourceError,
};

/// One source as the server knows it before it is opened.
pub struct Entry {
    /// The name clients use (`source` argument, `aiq://NAME/schema`).
    pub name: String,
    /// Where it is: an absolute path or a URL without password.
    pub location: String,
    /// The engine, when the source resolved.
    pub engine: Option<EngineKind>,
    /// Why it cannot be used, when it did not resolve.
    problem: Option<String>,
    /// What the opener is given (a saved name, a path or a URL).
    arg: String,
    opener: Mutex<Box<dyn SourceOpener>>,
    open: Mutex<Option<Arc<OpenSource>>>,
    /// Connections to open, where the engine allows more than one.
    connections: usize,
}

/// An opened source: its shared connection and catalog.
pub struct OpenSource {
    pub source: SharedSource,
    /// The catalog as a model may see it (see [`crate::privacy`]).
    pub catalog: Arc<Catalog>,
    /// The same with the source's notes on the tables they name.
    pub described: Arc<Catalog>,
    /// What may leave the machine.
    pub guard: crate::privacy::Guard,
    pub notes: crate::notes::Notes,
    /// Its verified examples (SPEC §14).
    pub examples: crate::agent::verified::Verified,
}

impl Entry {
    /// A source that resolved (`engine`) or did not (`problem`); `arg` is
    /// what `opener` opens.
    pub fn new(
        name: String,
        location: String,
        resolved: Result<EngineKind, String>,
        arg: String,
        opener: Box<dyn SourceOpener>,
    ) -> Self {
        let (engine, problem) = match resolved {
            Ok(kind) => (Some(kind), None),
            Err(why) => (None, Some(why)),
        };
        Entry {
            name,
            location,
            engine,
            problem,
            arg,
            opener: Mutex::new(opener),
            open: Mutex::new(None),
            connections: 1,
        }
    }

    /// Opens up to `n` connections to the source, where its engine allows
    /// more than one, so that `n` statements can run on it at once.
    pub fn with_connections(mut self, n: usize) -> Self {
        self.connections = n.max(1);
        self
    }

    /// Why the source cannot be used, if it cannot.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The tables, if the source was opened already (and is not being
    /// opened right now).
    pub fn tables_if_open(&self) -> Option<usize> {
        let open = self.open.try_lock().ok()?;
        open.as_ref().map(|o| o.catalog.tables.len())
    }

    /// The opened source (opening it on first use).
    pub fn get(&self) -> Result<Arc<OpenSource>, String> {
        if let Some(why) = &self.problem {
            return Err(why.clone());
        }
        let mut open = lock(&self.open);
        if let Some(o) = open.as_ref() {
            return Ok(Arc::clone(o));
        }
        // A server's password is never asked for: nobody is at a terminal.
        let opened = lock(&self.opener).open(&self.arg, std::sync::Arc::new(|_: &str| None))?;
        for warning in &opened.warnings {
            crate::error::stderr_line(&format!("aiq: warning: {warning}"));
        }
        let mut described = opened.catalog.clone();
        opened.notes.attach(&mut described);
        let o = Arc::new(OpenSource {
            source: SharedSource::new(opened.source, self.connections),
            catalog: Arc::new(opened.catalog),
            described: Arc::new(described),
            guard: opened.guard,
            notes: opened.notes,
            examples: opened.examples,
        });
        *open = Some(Arc::clone(&o));
        Ok(o)
    }
}

/// The served sources and the one used when a call names none.
pub struct Served {
    entries: Vec<Entry>,
    default: Option<String>,
}

impl Served {
    /// `default` is used when a call names no source (and is ignored unless
    /// it names one of `entries`); with one source, that one is the default.
    pub fn new(entries: Vec<Entry>, default: Option<String>) -> Self {
        let default = match entries.as_slice() {
            [only] => Some(only.name.clone()),
            _ => default.filter(|d| entries.iter().any(|e| &e.name == d)),
        };
        Served { entries, default }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The source used when a call names none.
    pub fn default_name(&self) -> Option<&str> {
        self.default.as_deref()
    }

    /// The source `name` names, or the default.
    pub fn pick(&self, name: Option<&str>) -> Result<&Entry, String> {
        let names = || {
            self.entries
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let wanted = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(n) => n,
            None => match &self.default {
                Some(d) => d.as_str(),
                None => {
                    return Err(format!(
                        "more than one source is served and none is the default: give `source`, one of {}",
                        names()
                    ))
                }
            },
        };
        self.entries
            .iter()
            .find(|e| e.name == wanted)
            .ok_or_else(|| {
                format!(
                    "no source named '{wanted}' is served (sources: {})",
                    names()
                )
            })
    }
}

/// How long a statement waits for its source's connection between looks
/// at its cancel token (a statement that ends wakes the waiting ones at once).
const WAIT_STEP: Duration = Duration::from_millis(20);

/// A source's connections, shared by the calls on it: a statement takes a
/// free one for the time it runs, so statements on one source run one per
/// connection. A statement waiting for one still answers its cancel token.
pub struct SharedSource {
    /// The first one answers everything but statements (the catalog, the
    /// fingerprint); any free one runs a statement or reads one.
    conns: Arc<Vec<Mutex<Box<dyn DataSource>>>>,
    /// Rung when a statement gives its connection back.
    freed: Arc<(Mutex<()>, Condvar)>,
    kind: EngineKind,
    dialect: Dialect,
    refuses_writes: Option<&'static str>,
}

impl SharedSource {
    /// `source`, and as many more connections as its engine gives, up to
    /// `connections` in all.
    pub fn new(source: Box<dyn DataSource>, connections: usize) -> Self {
        let mut conns = Vec::with_capacity(connections.max(1));
        for _ in 1..connections {
            match source.another() {
                Some(more) => conns.push(Mutex::new(more)),
                None => break,
            }
        }
        SharedSource {
            kind: source.kind(),
            dialect: source.dialect(),
            refuses_writes: source.refuses_writes(),
            conns: Arc::new(std::iter::once(Mutex::new(source)).chain(conns).collect()),
            freed: Arc::new((Mutex::new(()), Condvar::new())),
        }
    }

    /// Another handle on the same connections, for a conversation to own.
    pub fn handle(&self) -> Box<dyn DataSource> {
        Box::new(SharedSource {
            conns: Arc::clone(&self.conns),
            freed: Arc::clone(&self.freed),
            kind: self.kind,
            dialect: self.dialect,
            refuses_writes: self.refuses_writes,
        })
    }

    /// A free connection, once there is one; `None` when `cancel` fires first.
    fn wait(&self, cancel: &CancelToken) -> Option<MutexGuard<'_, Box<dyn DataSource>>> {
        let (bell, freed) = &*self.freed;
        loop {
            // Looked at with the bell held: a statement that ends in between
            // rings it only once this one waits, so no wake-up is lost.
            let held = lock(bell);
            for conn in self.conns.iter() {
                match conn.try_lock() {
                    Ok(guard) => return Some(guard),
                    Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
                    Err(std::sync::TryLockError::WouldBlock) => {}
                }
            }
            if cancel.is_cancelled() {
                return None;
            }
            let _ = freed.wait_timeout(held, WAIT_STEP);
        }
    }

    /// The first connection, for what is asked of the source as a whole.
    fn first(&self) -> MutexGuard<'_, Box<dyn DataSource>> {
        lock(&self.conns[0])
    }

    /// Runs `f` on a free connection, once there is one, and gives it back
    /// (waking whoever waits for one); `None` when `cancel` fires first.
    fn on_free<T>(&self, cancel: &CancelToken, f: impl FnOnce(&dyn DataSource) -> T) -> Option<T> {
        let source = self.wait(cancel)?;
        let out = f(source.as_ref());
        drop(source);
        self.ring();
        Some(out)
    }

    /// Wakes the statements waiting for a connection.
    fn ring(&self) {
        let (bell, freed) = &*self.freed;
        let _held = lock(bell);
        freed.notify_all();
    }
}

impl DataSource for SharedSource {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn introspect(&self) -> Result<Catalog, SourceError> {
        self.first().introspect()
    }

    fn execute(
        &self,
        sql: &CheckedSql,
        sink: &mut dyn RowSink,
        cancel: &CancelToken,
    ) -> Result<QueryStats, ExecError> {
        self.on_free(cancel, |source| source.execute(sql, sink, cancel))
            .unwrap_or(Err(ExecError::Cancelled))
    }

    fn read_statement(&self, sql: &str) -> Option<Result<crate::safety::EngineReading, String>> {
        self.on_free(&CancelToken::new(), |source| source.read_statement(sql))?
    }

    fn user_functions(&self) -> Option<std::sync::Arc<crate::safety::UserFunctions>> {
        self.on_free(&CancelToken::new(), |source| source.user_functions())?
    }

    fn columns_read(&self, sql: &CheckedSql) -> Option<Vec<crate::safety::ColumnRead>> {
        self.on_free(&CancelToken::new(), |source| source.columns_read(sql))?
    }

    fn login_privileges(
        &self,
        hidden: &[crate::schema::Table],
    ) -> Option<Result<crate::source::LoginPrivileges, SourceError>> {
        self.on_free(&CancelToken::new(), |source| {
            source.login_privileges(hidden)
        })?
    }

    fn own_files(&self) -> Vec<std::path::PathBuf> {
        self.first().own_files()
    }

    fn warnings(&self) -> Vec<String> {
        self.first().warnings()
    }

    // Every call asks whether the catalog changed: any free connection
    // answers (they are the same source), so the question does not wait
    // behind a statement running on the first one.
    fn fingerprint(&self) -> Option<String> {
        self.on_free(&CancelToken::new(), |source| source.fingerprint())?
    }

    fn fingerprint_since(&self, cached: Option<&str>) -> Option<crate::source::Since> {
        self.on_free(&CancelToken::new(), |source| {
            source.fingerprint_since(cached)
        })?
    }

    fn refuses_writes(&self) -> Option<&'static str> {
        self.refuses_writes
    }

    fn server_status(&self) -> Option<ServerStatus> {
        self.first().server_status()
    }
}

/// A mutex's contents; a panic elsewhere while it was held does not make
/// the data unusable here.
fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{self, Column, OpenOptions, SourceSpec, Value};

    struct Count(u64);

    impl RowSink for Count {
        fn columns(&mut self, _: &[Column]) -> std::io::Result<()> {
            Ok(())
        }
        fn row(&mut self, _: &[Value]) -> std::io::Result<()> {
            self.0 += 1;
            Ok(())
        }
    }

    fn shop(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("shop.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2);")
            .unwrap();
        path
    }

    #[test]
    fn a_read_only_sqlite_file_runs_statements_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let path = shop(dir.path());
        let open = |allow_write| {
            let options = OpenOptions {
                allow_write,
                ..OpenOptions::default()
            };
            source::open(&SourceSpec::Sqlite(path.clone()), options).unwrap()
        };
        let shared = SharedSource::new(open(false), 3);
        assert_eq!(shared.conns.len(), 3);
        // One connection busy: a statement still runs on another (with one
        // connection it would wait until the watchdog cancels it).
        let busy = shared.wait(&CancelToken::new()).unwrap();
        let cancel = CancelToken::new();
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let watchdog = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                if finished.recv_timeout(Duration::from_secs(5)).is_err() {
                    cancel.cancel();
                }
            })
        };
        let mut rows = Count(0);
        let sql = CheckedSql::unchecked_read_for_tests("SELECT id FROM t");
        assert!(shared.execute(&sql, &mut rows, &cancel).is_ok());
        assert_eq!(rows.0, 2);
        assert!(!cancel.is_cancelled());
        done.send(()).unwrap();
        drop(busy);
        watchdog.join().unwrap();
        // Writers share one connection.
        assert_eq!(SharedSource::new(open(true), 3).conns.len(), 1);
    }
}
