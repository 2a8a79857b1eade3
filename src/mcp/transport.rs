//! How the server is reached: stdio (how desktop assistants start a
//! server) or streamable HTTP on a local address. When the client goes
//! away — stdin closes, Ctrl-C stops the HTTP server — every call in
//! flight is cancelled, so no statement outlives its client.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, ReadBuf};

use super::server::{AiqServer, InFlight};
use crate::error::{stderr_line, AiqError};

/// How long calls get to end after their client went away.
const DRAIN: Duration = Duration::from_secs(5);

/// Serves one client on stdin/stdout until stdin closes. Frames pass
/// through [`super::frames`] first, so a bad one is answered, not lost.
pub async fn stdio(server: AiqServer) -> Result<(), AiqError> {
    let inflight = server.inflight();
    let stdin = {
        let inflight = Arc::clone(&inflight);
        OnEof::new(tokio::io::stdin(), move || {
            tracing::info!(
                calls = inflight.running(),
                "stdin closed: stopping the calls in flight"
            );
            inflight.cancel_all()
        })
    };
    let (filter_end, sdk_in) = tokio::io::duplex(PIPE);
    let (sdk_out, writer_end) = tokio::io::duplex(PIPE);
    let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
    let in_flight = super::frames::InFlight::default();
    let reading = tokio::spawn(super::frames::read_in(
        stdin,
        filter_end,
        answers,
        in_flight.clone(),
    ));
    let writing = tokio::spawn(super::frames::write_out(
        writer_end,
        answered,
        tokio::io::stdout(),
        in_flight,
    ));
    let running = server
        .serve((sdk_in, sdk_out))
        .await
        .map_err(|e| AiqError::Usage(format!("the MCP client did not start a session: {e}")))?;
    let quit = running.waiting().await;
    tracing::info!(?quit, "the session ended");
    drain(&inflight).await;
    reading.abort();
    // What the server still had to say reaches stdout.
    let _ = tokio::time::timeout(DRAIN, writing).await;
    Ok(())
}

/// Bytes buffered between the frame filter and the SDK, each way.
const PIPE: usize = 1 << 20;

/// Serves streamable HTTP at `http://ADDR/mcp` until Ctrl-C.
pub async fn http(
    server: AiqServer,
    addr: &str,
    token: String,
    quiet: bool,
    limits: super::sessions::SessionLimits,
) -> Result<(), AiqError> {
    let addr = parse_addr(addr)?;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        AiqError::Usage(format!(
            "cannot listen on {addr}: {e} (choose another port with --http)"
        ))
    })?;
    let local = listener
        .local_addr()
        .map_err(|e| AiqError::Usage(format!("cannot listen on {addr}: {e}")))?;
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !local.ip().is_unspecified() && !local.ip().is_loopback() {
        hosts.push(local.ip().to_string());
    }
    if !local.ip().is_loopback() && !quiet {
        stderr_line(&format!(
            "aiq mcp: warning: {} is reachable from other machines: anyone who has the token can query the sources",
            local.ip()
        ));
    }
    let sessions = super::sessions::Sessions::new(limits);
    let sweeping = sessions.sweep();
    let access =
        super::auth::Access::new(token, &hosts, local.port()).with_sessions(Arc::clone(&sessions));
    let stop = tokio_util::sync::CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop.child_token());
    let inflight = server.inflight();
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    let router = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(access, super::auth::check),
    );
    // Tests and scripts read the address from this line (port 0 picks one).
    stderr_line(&format!("aiq mcp: listening on http://{local}/mcp"));
    let shutdown = {
        let stop = stop.clone();
        async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        }
    };
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await;
    sweeping.abort();
    inflight.cancel_all();
    drain(&inflight).await;
    served.map_err(|e| AiqError::Usage(format!("the HTTP server stopped: {e}")))
}

/// Cancels what still runs and gives it a moment to end.
async fn drain(inflight: &InFlight) {
    inflight.cancel_all();
    let deadline = Instant::now() + DRAIN;
    while inflight.running() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tracing::info!(still_running = inflight.running(), "calls drained");
}

/// `PORT`, `:PORT` or `HOST:PORT`; the host is 127.0.0.1 unless given.
pub fn parse_addr(text: &str) -> Result<SocketAddr, AiqError> {
    let text = text.trim();
    let bad = || {
        AiqError::Usage(format!(
            "--http {text:?} is not an address: give a port (8808) or HOST:PORT (127.0.0.1:8808)"
        ))
    };
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some(("localhost", port)) => port
            .parse::<u16>()
            .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p))
            .map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// A reader that calls `on_eof` once, when the stream ends (or fails):
/// the client has gone, and its calls are stopped at once rather than
/// after the transport's drain.
struct OnEof<R> {
    inner: R,
    on_eof: Option<Box<dyn FnOnce() + Send>>,
}

impl<R> OnEof<R> {
    fn new(inner: R, on_eof: impl FnOnce() + Send + 'static) -> Self {
        OnEof {
            inner,
            on_eof: Some(Box::new(on_eof)),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for OnEof<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let ended = match &polled {
            Poll::Ready(Ok(())) => buf.filled().len() == before && buf.remaining() > 0,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if ended {
            if let Some(f) = self.on_eof.take() {
                f();
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn addresses_default_to_the_loopback() {
        let local = |p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p);
        assert_eq!(parse_addr("8808").unwrap(), local(8808));
        assert_eq!(parse_addr(":8808").unwrap(), local(8808));
        assert_eq!(parse_addr("localhost:9").unwrap(), local(9));
        assert_eq!(
            parse_addr("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            parse_addr("[::1]:7").unwrap(),
            "[::1]:7".parse::<SocketAddr>().unwrap()
        );
        for bad in ["", "shop.db", "127.0.0.1", "host:99999"] {
            assert_eq!(parse_addr(bad).unwrap_err().exit_code(), 2, "{bad}");
        }
    }

    #[test]
    fn the_end_of_input_is_noticed_once() {
        let rt = crate::runtime::current_thread().unwrap();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        let mut reader = OnEof::new(&b"ab"[..], move || {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        rt.block_on(async {
            let mut out = Vec::new();
            reader.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, b"ab");
            let mut more = [0u8; 4];
            assert_eq!(reader.read(&mut more).await.unwrap(), 0);
        });
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
