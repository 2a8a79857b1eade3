//! The HTTP side shared by every provider: the wire-format trait, the
//! model over HTTP (its context window included), timeouts, retries with
//! exponential backoff and jitter (honouring `Retry-After`) and error
//! classification; reading replies is in `stream`. Keys travel in headers
//! only; `-vv` logs URLs and bodies, never headers.

use std::collections::BTreeMap;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use eventsource_stream::Event;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::StatusCode;

use crate::redact::{mask_password_of, redact_url};

use super::probe::{self, Probe};
use super::window::{self, Window, WindowBook, WindowSource};
use super::{
    head, CancelToken, ChatModel, ChatRequest, LlmError, LlmErrorKind, StreamEvent, ToolCall,
};

/// Bytes of a body quoted in error messages.
pub(crate) const QUOTE: usize = 200;
/// How long an idle connection to a model server stays in the pool.
const POOL_IDLE: Duration = Duration::from_secs(4);
/// The longest `Retry-After` aiq waits for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// A provider's wire format.
pub(crate) trait Wire: Send + Sync {
    /// `openai` / `anthropic` / `ollama`, for messages.
    fn provider(&self) -> &'static str;
    fn url(&self) -> String;
    /// Where the provider lists its models (used by `aiq doctor`).
    fn models_url(&self) -> String;
    /// Headers for every request, including the key.
    fn headers(&self) -> HeaderMap;
    fn body(
        &self,
        model: &str,
        request: ChatRequest<'_>,
        stream: bool,
        plan: Plan,
    ) -> serde_json::Value;
    /// Whether a streamed reply is JSON lines (Ollama) rather than SSE;
    /// each line reaches [`Wire::on_event`] as an event's data.
    fn json_lines(&self) -> bool {
        false
    }
    /// Handles one SSE event; true once the reply is complete.
    fn on_event(
        &self,
        state: &mut StreamState,
        event: &Event,
        out: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, LlmError>;
    /// Handles a whole (non-streamed) reply.
    fn on_body(
        &self,
        body: &serde_json::Value,
        out: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError>;
}

/// What a request is planned for: the window (Ollama runs the model with
/// it) and, when the window is a known small one, a cap on the reply so
/// that it fits the reserve kept for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    pub window: usize,
    pub reply: Option<usize>,
    /// The server is llama.cpp's, which keeps a prompt's evaluated prefix
    /// for the next request when asked (`cache_prompt`).
    pub cache_prompt: bool,
}

/// Tool calls assembled from stream fragments, by their index.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    pub tools: BTreeMap<u64, ToolCall>,
}

impl StreamState {
    /// Emits the assembled tool calls in order.
    pub fn flush_tools(&mut self, out: &mut dyn FnMut(StreamEvent)) {
        for (_, call) in std::mem::take(&mut self.tools) {
            out(StreamEvent::ToolCall(call));
        }
    }
}

/// A model behind an HTTP API in one of the wire formats.
pub(crate) struct HttpModel<W: Wire> {
    pub wire: W,
    pub model: String,
    pub stream: bool,
    /// Whether tool definitions are sent (some local servers reject them).
    pub tools: bool,
    pub client: reqwest::Client,
    /// A client that keeps no idle connections, for asking again after a
    /// broken stream (the server may be closing the one just used).
    pub fresh: reqwest::Client,
    pub runtime: tokio::runtime::Runtime,
    pub max_retries: u32,
    /// What is known of the context window.
    pub book: WindowBook,
    /// Where to ask for it.
    pub probe: Probe,
}

/// The reqwest client every provider uses.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    builder(timeout, reqwest::Client::builder())
}

/// [`client`] without idle connections kept.
pub(crate) fn fresh_client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    builder(
        timeout,
        reqwest::Client::builder().pool_max_idle_per_host(0),
    )
}

fn builder(
    timeout: Duration,
    builder: reqwest::ClientBuilder,
) -> Result<reqwest::Client, LlmError> {
    builder
        .connect_timeout(Duration::from_secs(10).min(timeout))
        // Below the keep-alive of the servers aiq talks to (llama.cpp's
        // 5 s), so a pooled connection is dropped here before the server
        // closes it under a request.
        .pool_idle_timeout(POOL_IDLE)
        .read_timeout(timeout)
        .user_agent(concat!("aiq/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            LlmError::new(
                LlmErrorKind::Http,
                format!("cannot set up the HTTP client: {e}"),
            )
        })
}

/// A current-thread runtime for one model.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, LlmError> {
    crate::runtime::current_thread().map_err(|e| {
        LlmError::new(
            LlmErrorKind::Http,
            format!("cannot start the HTTP runtime: {e}"),
        )
    })
}

impl<W: Wire> ChatModel for HttpModel<W> {
    fn provider(&self) -> &str {
        self.wire.provider()
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn check(&self) -> Result<String, LlmError> {
        HttpModel::check(self)
    }

    fn supports_tools(&self) -> bool {
        self.tools
    }

    fn window(&self) -> Window {
        self.book.get(|| {
            self.runtime
                .block_on(probe::ask(&self.asker(), &self.probe, &self.model))
        })
    }

    fn learn_window(&self, tokens: usize) {
        self.book.learn(tokens);
    }

    fn chat(
        &self,
        request: ChatRequest<'_>,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        let request = if self.tools {
            request
        } else {
            ChatRequest {
                tools: &[],
                ..request
            }
        };
        let window = self.window();
        let plan = Plan {
            window: window.tokens,
            // Hosted APIs get no cap: their windows are large, and some
            // models refuse `max_tokens`.
            reply: (window.is_known() && self.probe != Probe::Nothing)
                .then(|| window::reply_reserve(window.tokens)),
            cache_prompt: window.source == WindowSource::Server(probe::LLAMA_CPP_PROPS.into()),
        };
        let body = self.wire.body(&self.model, request, self.stream, plan);
        self.runtime.block_on(async {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(LlmError::new(LlmErrorKind::Cancelled, "cancelled")),
                result = self.converse(request, plan, &body, on_event) => result,
            }
        })
    }
}

impl<W: Wire> HttpModel<W> {
    fn asker(&self) -> probe::Asker<'_> {
        probe::Asker {
            client: &self.client,
            headers: self.wire.headers(),
        }
    }

    /// Lists the provider's models once, without retries: is the endpoint
    /// there, is the key accepted, is the model known.
    pub(crate) fn check(&self) -> Result<String, LlmError> {
        let provider = self.wire.provider();
        let url = self.wire.models_url();
        let shown = redact_url(&url);
        let result: Result<(StatusCode, String), reqwest::Error> = self.runtime.block_on(async {
            let response = self
                .client
                .get(&url)
                .headers(self.wire.headers())
                .send()
                .await?;
            let status = response.status();
            Ok((status, response.text().await.unwrap_or_default()))
        });
        match result {
            Ok((status, body)) if status.is_success() => {
                let listed = body.contains(&format!("\"{}\"", self.model));
                Ok(format!(
                    "{provider} at {shown} answers; model {} {}",
                    self.model,
                    if listed {
                        "is listed"
                    } else {
                        "is not in its list (check --model)"
                    }
                ))
            }
            Ok((status, body)) => Err(classify(provider, status, &body)),
            Err(e) => Err(LlmError::new(
                LlmErrorKind::Unreachable,
                format!(
                    "{provider}: cannot connect to {shown} ({})",
                    mask_password_of(&url, &root_cause(&e))
                ),
            )),
        }
    }

    /// The waits between retries: exponential with jitter, at most
    /// `max_retries` of them (for a failed request and a broken reply alike).
    pub(crate) fn backoff(&self) -> backon::ExponentialBackoff {
        ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(10))
            .with_jitter()
            .with_max_times(self.max_retries as usize)
            .build()
    }

    /// POSTs with retries on connection errors, timeouts, 429 and 5xx.
    pub(crate) async fn post(
        &self,
        body: &serde_json::Value,
        fresh: bool,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<reqwest::Response, LlmError> {
        let client = if fresh { &self.fresh } else { &self.client };
        let provider = self.wire.provider();
        let url = self.wire.url();
        let shown = redact_url(&url);
        let mut delays = self.backoff();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            tracing::debug!(url = %shown, attempt, body = %body, "{provider} request");
            let sent = client
                .post(&url)
                .headers(self.wire.headers())
                .json(body)
                .send()
                .await;
            let (failure, retry_after) = match sent {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry_after(response.headers());
                    let text = response.text().await.unwrap_or_default();
                    tracing::debug!(%status, body = %text, "{provider} error reply");
                    let error = classify(provider, status, &text);
                    let retry = status == StatusCode::TOO_MANY_REQUESTS
                        || (status.is_server_error() && error.kind != LlmErrorKind::ContextLength);
                    if !retry {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(e) if e.is_connect() || e.is_timeout() || e.is_request() => {
                    let what = if e.is_timeout() {
                        "timed out"
                    } else {
                        "cannot connect"
                    };
                    let error = LlmError::new(
                        LlmErrorKind::Unreachable,
                        format!("{provider}: {what} at {shown} ({}); check the base URL and that the server is running", mask_password_of(&url, &root_cause(&e))),
                    );
                    (error, None)
                }
                Err(e) => {
                    return Err(LlmError::new(
                        LlmErrorKind::Http,
                        format!(
                            "{provider}: request to {shown} failed: {}",
                            mask_password_of(&url, &root_cause(&e))
                        ),
                    ))
                }
            };
            let Some(delay) = delays.next() else {
                return Err(failure);
            };
            let delay = retry_after.unwrap_or(delay).min(MAX_RETRY_AFTER);
            on_event(StreamEvent::Retrying {
                why: failure.message.clone(),
                attempt,
            });
            tokio::time::sleep(delay).await;
        }
    }
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0)
        .map(Duration::from_secs_f64)
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// An error the server reported inside a reply (an event, a JSON line, a
/// 200 body): a context-length error when its words say so.
pub(crate) fn error_text(provider: &str, text: &str) -> LlmError {
    if window::is_context_error(text) {
        return LlmError::context(
            format!(
                "{provider}: the prompt is longer than the model's context window ({})",
                head(text.trim(), QUOTE)
            ),
            text,
        );
    }
    LlmError::new(LlmErrorKind::Http, format!("{provider}: {text}"))
}

/// The message of a JSON error body (`{"error":{"message":…}}`,
/// `{"error":"…"}`, `{"message":…}`), else the body as it is.
fn server_words(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.to_string();
    };
    let words = [&v["error"]["message"], &v["error"], &v["message"]]
        .into_iter()
        .find_map(|m| m.as_str().map(str::to_string));
    words.unwrap_or_else(|| body.to_string())
}

/// An HTTP error status as an [`LlmError`] that says what to do.
fn classify(provider: &str, status: StatusCode, body: &str) -> LlmError {
    let quoted = match html_title(body) {
        Some(title) => format!("an HTML page, {title:?}"),
        None => head(body.trim(), QUOTE).to_string(),
    };
    let lower = body.to_ascii_lowercase();
    let code = status.as_u16();
    if matches!(code, 400 | 413 | 422 | 500) && window::is_context_error(&lower) {
        let words = server_words(body);
        return LlmError::context(
            format!(
                "{provider}: the prompt is longer than the model's context window ({})",
                head(words.trim(), QUOTE)
            ),
            body,
        );
    }
    match code {
        401 | 403 => LlmError::new(
            LlmErrorKind::Auth,
            format!("{provider} refused the API key (HTTP {code}: {quoted}); set AIQ_API_KEY (or OPENAI_API_KEY / ANTHROPIC_API_KEY)"),
        ),
        402 | 429 => LlmError::new(
            LlmErrorKind::Quota,
            format!("{provider}: rate limit or quota reached (HTTP {code}: {quoted}); wait and try again, or check your plan"),
        ),
        404 => LlmError::new(
            LlmErrorKind::Http,
            format!("{provider}: not found (HTTP 404: {quoted}); check the model name and base URL"),
        ),
        _ => LlmError::new(LlmErrorKind::Http, format!("{provider} answered HTTP {code}: {quoted}")),
    }
}

/// What an HTML error page (a proxy's 502) says in its title, or in its
/// text when it has none; `None` for a body that is not HTML.
fn html_title(body: &str) -> Option<String> {
    let lower = body.trim_start().to_ascii_lowercase();
    if !(lower.starts_with("<!doctype html") || lower.starts_with("<html")) {
        return None;
    }
    let inner = |tag: &str| {
        let start = lower.find(&format!("<{tag}"))?;
        let open = start + lower[start..].find('>')? + 1;
        let close = open + lower[open..].find(&format!("</{tag}"))?;
        let text: String = body
            .get(open..close)?
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        (!text.is_empty()).then_some(text)
    };
    let text = inner("title")
        .or_else(|| inner("h1"))
        .or_else(|| inner("body"))?;
    let plain: String = text
        .split('<')
        .map(|p| p.split_once('>').map_or(p, |(_, t)| t))
        .collect();
    Some(head(plain.trim(), QUOTE).to_string())
}

/// Reads a JSON string field, or reports what came back instead.
pub(crate) fn malformed(provider: &str, what: &str, raw: &str) -> LlmError {
    LlmError::new(
        LlmErrorKind::Malformed,
        format!("{provider}: {what}: {:?}", head(raw, QUOTE)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(
            classify("openai", StatusCode::UNAUTHORIZED, "bad key").kind,
            LlmErrorKind::Auth
        );
        assert_eq!(
            classify("openai", StatusCode::TOO_MANY_REQUESTS, "").kind,
            LlmErrorKind::Quota
        );
        assert_eq!(
            classify(
                "openai",
                StatusCode::BAD_REQUEST,
                r#"{"error":{"code":"context_length_exceeded"}}"#
            )
            .kind,
            LlmErrorKind::ContextLength
        );
        assert_eq!(
            classify(
                "anthropic",
                StatusCode::BAD_REQUEST,
                "prompt is too long: 300000 tokens"
            )
            .kind,
            LlmErrorKind::ContextLength
        );
        let e = classify("openai", StatusCode::BAD_REQUEST, &"x".repeat(500));
        assert_eq!(e.kind, LlmErrorKind::Http);
        assert!(e.message.len() < 300, "{}", e.message);
    }

    #[test]
    fn context_errors_quote_the_servers_message() {
        let e = classify(
            "openai",
            StatusCode::BAD_REQUEST,
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","code":"context_length_exceeded"}}"#,
        );
        assert_eq!(
            e.message,
            "openai: the prompt is longer than the model's context window (This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.)"
        );
        assert_eq!((e.limit, e.requested), (Some(4096), Some(5000)));
    }

    #[test]
    fn retry_after_seconds() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
