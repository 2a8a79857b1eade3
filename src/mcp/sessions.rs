//! The HTTP server's sessions: rmcp's own session manager, with what a
//! server that runs for weeks needs around it — a session idle longer than
//! `[mcp] session_idle_secs` is closed, and no more than `[mcp]
//! max_sessions` are open at once (a client that opens one more is told
//! so with a 503), so clients that never say goodbye cannot fill memory.
//! A session with a request still being answered is never idle, however
//! long the call runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// The sessions' limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session without a request for this long is closed.
    pub idle: Duration,
    /// Sessions open at once.
    pub max: usize,
}

/// When a session was last asked something, and how many of its requests
/// are being answered now.
#[derive(Debug, Clone, Copy)]
struct Seen {
    at: Instant,
    answering: usize,
}

impl Seen {
    fn now() -> Seen {
        Seen {
            at: Instant::now(),
            answering: 0,
        }
    }
}

/// rmcp's session manager, each session's last request noted.
pub struct Sessions {
    inner: LocalSessionManager,
    seen: Arc<Mutex<HashMap<SessionId, Seen>>>,
    limits: SessionLimits,
}

/// Held by a request's answer stream: the session counts as answering
/// until the stream ends (answered, or the client went away).
struct Answering {
    seen: Arc<Mutex<HashMap<SessionId, Seen>>>,
    id: SessionId,
}

impl Drop for Answering {
    fn drop(&mut self) {
        if let Ok(mut seen) = self.seen.lock() {
            if let Some(seen) = seen.get_mut(&self.id) {
                seen.answering = seen.answering.saturating_sub(1);
                seen.at = Instant::now();
            }
        }
    }
}

impl Sessions {
    pub fn new(limits: SessionLimits) -> Arc<Sessions> {
        let mut inner = LocalSessionManager::default();
        // rmcp's own timer counts a long call as idle; ours does not.
        inner.session_config.keep_alive = None;
        Arc::new(Sessions {
            inner,
            seen: Arc::new(Mutex::new(HashMap::new())),
            limits,
        })
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// Sessions open now (idle ones not yet closed included).
    pub fn open(&self) -> usize {
        self.seen.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// Whether the session `id` is open.
    pub fn knows(&self, id: &str) -> bool {
        self.seen.lock().is_ok_and(|s| s.contains_key(id))
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut seen) = self.seen.lock() {
            if let Some(seen) = seen.get_mut(id) {
                seen.at = Instant::now();
            }
        }
    }

    /// Counts a request of session `id` as being answered until the
    /// returned guard is dropped.
    fn answering(&self, id: &SessionId) -> Answering {
        if let Ok(mut seen) = self.seen.lock() {
            if let Some(seen) = seen.get_mut(id) {
                seen.answering += 1;
                seen.at = Instant::now();
            }
        }
        Answering {
            seen: Arc::clone(&self.seen),
            id: id.clone(),
        }
    }

    /// Closes the sessions idle longer than the limit; how many.
    pub async fn close_idle(&self) -> usize {
        let now = Instant::now();
        let idle: Vec<SessionId> = match self.seen.lock() {
            Ok(seen) => seen
                .iter()
                .filter(|(_, seen)| {
                    seen.answering == 0 && now.duration_since(seen.at) > self.limits.idle
                })
                .map(|(id, _)| id.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        for id in &idle {
            let _ = self.close_session(id).await;
        }
        if !idle.is_empty() {
            tracing::info!(
                closed = idle.len(),
                open = self.open(),
                "idle MCP sessions closed"
            );
        }
        idle.len()
    }

    /// Closes idle sessions now and then, for as long as the server runs.
    pub fn sweep(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let sessions = Arc::clone(self);
        let every =
            (sessions.limits.idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                sessions.close_idle().await;
            }
        })
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(id.clone(), Seen::now());
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let answering = self.answering(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(futures_util::StreamExt::map(stream, move |event| {
            let _held = &answering;
            event
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}
