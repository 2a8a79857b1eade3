//! What PostgreSQL and MySQL share in keeping one server session: running
//! a statement under the turn's cancel and the timeout, connecting again
//! when the connection was lost (and learning the new session's id),
//! reading a failed statement's error, and cancelling the running
//! statement from a second connection. What differs is the [`Engine`]: how
//! a session's id is asked, how its statement is cancelled, and how the
//! server says its own statement timeout fired.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;

use super::{
    cancel_on_server, exec_error, revive, run_statement, runtime, Interrupted, Liveness,
    UserFunctionCache,
};
use crate::safety::{Access, CheckedSql};
use crate::source::spec::ServerSpec;
use crate::source::{CancelToken, ExecError, Interruptible, QueryStats};

/// What one sqlx engine does its own way.
pub(crate) trait Engine: 'static {
    type Conn: Connection + Send + 'static;
    /// The server's id for the session `conn` is (`pg_backend_pid()`,
    /// `CONNECTION_ID()`).
    fn session_id(conn: &mut Self::Conn) -> impl Future<Output = Result<u64, sqlx::Error>>;
    /// Stops what session `id` runs, from `conn`, a connection of its own.
    fn cancel(conn: &mut Self::Conn, id: u64) -> impl Future<Output = ()>;
    /// The server's error says its statement timeout fired.
    fn is_timeout(db: &dyn sqlx::error::DatabaseError) -> bool;
    /// `options` with `password` in place of the one they had.
    fn with_password(options: &Options<Self>, password: &str) -> Options<Self>;
    /// `user@host:port`, as a password prompt names the login.
    fn who(options: &Options<Self>) -> String;
}

/// How an engine's connection is made.
pub(crate) type Options<E> = <<E as Engine>::Conn as Connection>::Options;

/// One server session of an engine: how to connect again (with the
/// password that worked), whether the connection still lives, the
/// session's id for a cancel, and the statement timeout.
pub(crate) struct Session<E: Engine> {
    connect: <E::Conn as Connection>::Options,
    spec: ServerSpec,
    id: Arc<AtomicU64>,
    pub(crate) live: Liveness,
    timeout: Duration,
}

impl<E: Engine> Session<E> {
    /// Connects with `base` (the password from `password_env`, else the
    /// URL's or the driver's own; asked through the front end once when the
    /// server turns a login without one down): the connection and its
    /// session.
    pub(crate) fn connect(
        rt: &tokio::runtime::Runtime,
        spec: &ServerSpec,
        base: Options<E>,
        options: &crate::source::OpenOptions,
    ) -> Result<(E::Conn, Self), crate::source::SourceError> {
        let who = E::who(&base);
        let ((conn, connect), _) =
            super::connect(rt, spec, &who, options.password.as_ref(), |password| {
                let opts = match password {
                    Some(p) => E::with_password(&base, &p),
                    None => base.clone(),
                };
                async move { E::Conn::connect_with(&opts).await.map(|c| (c, opts)) }
            })?;
        Ok((conn, Session::new(connect, spec.clone(), options.timeout)))
    }

    pub(crate) fn new(
        connect: <E::Conn as Connection>::Options,
        spec: ServerSpec,
        timeout: Duration,
    ) -> Self {
        Session {
            connect,
            spec,
            id: Arc::new(AtomicU64::new(0)),
            live: Liveness::new(),
            timeout,
        }
    }

    /// Notes the server's id for the session (asked when it was opened).
    pub(crate) fn set_id(&self, id: u64) {
        self.id.store(id, Ordering::SeqCst);
    }

    /// Connects again if the connection died, and learns the new
    /// session's id.
    pub(crate) async fn revive(&self, conn: &mut E::Conn) -> Result<(), ExecError> {
        if revive(&self.live, conn, &self.connect, &self.spec).await? {
            let id = E::session_id(conn).await.map_err(|e| self.error(e))?;
            self.set_id(id);
        }
        Ok(())
    }

    /// A driver error while a statement runs, a lost connection noted.
    pub(crate) fn error(&self, e: sqlx::Error) -> ExecError {
        let lost = self.live.note(&e);
        exec_error(e, self.timeout, lost, E::is_timeout)
    }

    /// Cancels the statement running on the server, from a second
    /// connection; with `wait`, returns only once the server has it (so a
    /// cancel never lands on a later statement).
    pub(crate) fn canceller(&self, wait: bool) -> impl Fn() + Send + Sync + 'static {
        let connect = self.connect.clone();
        let id = Arc::clone(&self.id);
        move || {
            let connect = connect.clone();
            let id = id.load(Ordering::SeqCst);
            cancel_on_server(wait, move || {
                let Ok(rt) = runtime() else { return };
                rt.block_on(async {
                    if let Ok(mut c) = E::Conn::connect_with(&connect).await {
                        E::cancel(&mut c, id).await;
                        let _ = c.close().await;
                    }
                });
            })
        }
    }

    /// Runs `sql` on `conn` under `cancel` and the timeout: `body` gets
    /// the connection (made again first if it was lost) and whether the
    /// statement runs as a write — only when it is one and the source was
    /// opened for writes; a source opened read-only runs everything as a
    /// read, whatever the statement claims to be. A write forgets the
    /// database's functions (it may define or drop one).
    pub(crate) fn execute(
        &self,
        rt: &tokio::runtime::Runtime,
        conn: &tokio::sync::Mutex<E::Conn>,
        (sql, allow_write): (&CheckedSql, bool),
        functions: &UserFunctionCache,
        cancel: &CancelToken,
        body: impl AsyncFnOnce(&mut E::Conn, bool) -> Result<(u64, u64), ExecError>,
    ) -> Result<QueryStats, ExecError> {
        let write = sql.access() == Access::Write && allow_write;
        if write {
            functions.forget();
        }
        let interrupted = Interrupted::default();
        let interrupt = interrupted.noting(self.canceller(false));
        Interruptible::execute(sql, self.timeout, cancel, interrupt, || {
            run_statement(rt, conn, &self.live, write, &interrupted, async |conn| {
                self.revive(conn).await?;
                body(conn, write).await
            })
        })
    }
}
