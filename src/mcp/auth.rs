//! Who may talk to the MCP server over HTTP (SPEC §12): every request
//! carries `Authorization: Bearer TOKEN` (a wrong or missing one gets 401),
//! and a request from a web page of another origin gets 403 — a browser
//! that a page made send to 127.0.0.1 (DNS rebinding) never reaches a tool.
//! The token is compared in constant time and never logged.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// What a request must show.
#[derive(Clone)]
pub struct Access {
    token: String,
    /// The server's own origins (`http://HOST:PORT`), lowercased.
    origins: Vec<String>,
    /// The open sessions, to refuse one beyond `[mcp] max_sessions`.
    sessions: Option<std::sync::Arc<super::sessions::Sessions>>,
}

impl Access {
    /// `token` for requests to a server that answers at `port` under the
    /// names `hosts`.
    pub fn new(token: String, hosts: &[String], port: u16) -> Access {
        let origins = hosts
            .iter()
            .map(|h| match h.contains(':') {
                true => format!("http://[{h}]:{port}"),
                false => format!("http://{h}:{port}"),
            })
            .map(|o| o.to_ascii_lowercase())
            .collect();
        Access {
            token,
            origins,
            sessions: None,
        }
    }

    /// The same, refusing a new session when `sessions` are at their limit.
    pub fn with_sessions(self, sessions: std::sync::Arc<super::sessions::Sessions>) -> Access {
        Access {
            sessions: Some(sessions),
            ..self
        }
    }

    /// Why `headers` may not pass, as the status to answer with.
    pub fn refuse(&self, headers: &HeaderMap) -> Option<StatusCode> {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("").trim().to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return Some(StatusCode::FORBIDDEN);
            }
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .unwrap_or("");
        match bool::from(given.as_bytes().ct_eq(self.token.as_bytes())) {
            true => None,
            false => Some(StatusCode::UNAUTHORIZED),
        }
    }
}

/// The middleware: refused requests never reach the MCP service.
pub async fn check(State(access): State<Access>, request: Request, next: Next) -> Response {
    match access.refuse(request.headers()) {
        None if request.method() == axum::http::Method::DELETE
            && !access.session_open(&request) =>
        {
            (
                StatusCode::NOT_FOUND,
                "not found: no such session (it has ended, or never began)\n",
            )
                .into_response()
        }
        None if request.method() == axum::http::Method::POST => {
            let request = match judged(request).await {
                Ok(request) => request,
                Err(answer) => return answer,
            };
            admit(&access, request, next).await
        }
        None => admit(&access, request, next).await,
        Some(StatusCode::FORBIDDEN) => (
            StatusCode::FORBIDDEN,
            "forbidden: requests from another origin (a web page) are refused\n",
        )
            .into_response(),
        Some(status) => {
            let mut response = (
                status,
                "unauthorized: send the server's token as `Authorization: Bearer TOKEN` (aiq mcp --token, or AIQ_MCP_TOKEN)\n",
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

/// A POST's body read and judged as the stdio frames are: one that is not
/// JSON, or not a request, is answered here with the JSON-RPC error (400)
/// rather than an HTTP status that names no fault; a good one goes on.
async fn judged(request: Request) -> Result<Request, Response> {
    use super::frames::{judge, Verdict, MAX_FRAME};
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_FRAME).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("too large: a message is at most {MAX_FRAME} bytes\n"),
            )
                .into_response())
        }
    };
    match judge(&bytes) {
        Verdict::Pass(_) => Ok(Request::from_parts(parts, axum::body::Body::from(bytes))),
        Verdict::Drop => Err(StatusCode::ACCEPTED.into_response()),
        Verdict::Answer(text) => Err((
            StatusCode::BAD_REQUEST,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            text,
        )
            .into_response()),
    }
}

impl Access {
    /// Whether the session a request names is open (true when sessions
    /// are not kept, or the request names none).
    fn session_open(&self, request: &Request) -> bool {
        let Some(sessions) = &self.sessions else {
            return true;
        };
        match request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            Some(id) => sessions.knows(id),
            None => true,
        }
    }
}

/// A request past the token: one that opens a session is refused while
/// `[mcp] max_sessions` are open.
async fn admit(access: &Access, request: Request, next: Next) -> Response {
    let Some(sessions) = access
        .sessions
        .as_ref()
        .filter(|_| opens_a_session(&request))
    else {
        return next.run(request).await;
    };
    let limits = sessions.limits();
    if sessions.open() >= limits.max && sessions.close_idle().await == 0 {
        let text = format!(
            "busy: {} sessions are open, the server's limit ([mcp] max_sessions); end one (DELETE /mcp with its Mcp-Session-Id) or try again later — idle ones close after {} s\n",
            sessions.open(),
            limits.idle.as_secs()
        );
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, text).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    next.run(request).await
}

/// A POST without a session id: a client starting a session.
fn opens_a_session(request: &Request) -> bool {
    request.method() == axum::http::Method::POST
        && !request.headers().contains_key("mcp-session-id")
}

/// A new random token: 32 bytes from the operating system, as hex.
pub fn generate() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        let hosts = ["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        Access::new("s3cret".into(), &hosts, 8808)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_token_is_needed_and_must_match() {
        let a = access();
        assert_eq!(a.refuse(&headers(&[])), Some(StatusCode::UNAUTHORIZED));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "Basic s3cret",
            "s3cret",
            "Bearer ",
        ] {
            assert_eq!(
                a.refuse(&headers(&[("authorization", wrong)])),
                Some(StatusCode::UNAUTHORIZED),
                "{wrong}"
            );
        }
        for right in ["Bearer s3cret", "bearer s3cret", "  Bearer   s3cret "] {
            assert_eq!(
                a.refuse(&headers(&[("authorization", right)])),
                None,
                "{right}"
            );
        }
    }

    #[test]
    fn only_the_servers_own_origin_passes() {
        let a = access();
        let ok = ("authorization", "Bearer s3cret");
        for own in [
            "http://127.0.0.1:8808",
            "http://localhost:8808",
            "http://[::1]:8808",
            "HTTP://LOCALHOST:8808",
        ] {
            assert_eq!(a.refuse(&headers(&[ok, ("origin", own)])), None, "{own}");
        }
        for foreign in [
            "http://evil.example",
            "http://127.0.0.1:9999",
            "https://localhost:8808",
            "null",
            "http://127.0.0.1.evil.example:8808",
        ] {
            assert_eq!(
                a.refuse(&headers(&[ok, ("origin", foreign)])),
                Some(StatusCode::FORBIDDEN),
                "{foreign}"
            );
        }
    }

    #[test]
    fn generated_tokens_are_long_and_differ() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
