//! Reading a model's reply: an SSE event stream or JSON lines (Ollama) as
//! it arrives, or one JSON body; and the fallback for streams that bring
//! nothing — a stream that ends empty or holds only an error is asked
//! again once without streaming (on a fresh connection), so the user gets
//! the server's own words.

use eventsource_stream::{Event, Eventsource};
use futures_util::StreamExt;

use super::http::{HttpModel, Plan, StreamState, Wire, QUOTE};
use super::{head, ChatRequest, LlmError, LlmErrorKind, StreamEvent};

impl<W: Wire> HttpModel<W> {
    /// One request; a stream that ends empty or with only an error is
    /// asked again once without streaming, to get the server's own words
    /// (some servers answer a prompt that does not fit with an empty
    /// stream and keep the error in their log).
    pub(crate) async fn converse(
        &self,
        request: ChatRequest<'_>,
        plan: Plan,
        body: &serde_json::Value,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        // A reply that came broken (cut off, not JSON, an HTML page from a
        // proxy) is asked again like a 500, with backoff, up to
        // `max_retries` times.
        let mut delays = self.backoff();
        let mut attempt = 0;
        loop {
            match self.converse_once(request, plan, body, on_event).await {
                Err(e) if e.kind == LlmErrorKind::Malformed => {
                    let Some(delay) = delays.next() else {
                        return Err(e);
                    };
                    attempt += 1;
                    on_event(StreamEvent::Retrying {
                        why: format!("{}; asking again", e.message),
                        attempt,
                    });
                    tokio::time::sleep(delay).await;
                }
                other => return other,
            }
        }
    }

    async fn converse_once(
        &self,
        request: ChatRequest<'_>,
        plan: Plan,
        body: &serde_json::Value,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        if !self.stream {
            return self
                .exchange(body, false, false, on_event)
                .await
                .map_err(|(e, _)| e);
        }
        match self.exchange(body, true, false, on_event).await {
            Ok(()) => Ok(()),
            Err((e, true)) if e.kind != LlmErrorKind::ContextLength => {
                on_event(StreamEvent::Retrying {
                    why: format!("{}; asking again without streaming", e.message),
                    attempt: 1,
                });
                let whole = self.wire.body(&self.model, request, false, plan);
                self.exchange(&whole, false, true, on_event)
                    .await
                    .map_err(|(e, _)| e)
            }
            Err((e, _)) => Err(e),
        }
    }

    /// Sends one request (on a new connection when `fresh`) and reads the
    /// reply. A failure says whether the reply was an event stream that
    /// brought nothing but its end or an error (worth asking again without
    /// streaming).
    async fn exchange(
        &self,
        body: &serde_json::Value,
        stream: bool,
        fresh: bool,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), (LlmError, bool)> {
        let response = self
            .post(body, fresh, on_event)
            .await
            .map_err(|e| (e, false))?;
        let provider = self.wire.provider();
        if stream && !self.is_stream(&response) {
            // A server that answers a stream request with a page or a JSON
            // error: say what came, in its own words.
            let kind = content_type(&response);
            let text = response.text().await.unwrap_or_default();
            if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
                if let Err(e) = self.wire.on_body(&json, &mut |_| {}) {
                    return Err((e, false));
                }
            }
            return Err((
                LlmError::new(
                    LlmErrorKind::Malformed,
                    format!(
                        "{provider}: expected an event stream but the reply is {kind}: {:?}",
                        head(text.trim(), QUOTE)
                    ),
                ),
                false,
            ));
        }
        if stream {
            return self.read_stream(response, on_event).await;
        }
        let text = response.text().await.map_err(|e| {
            let e = LlmError::new(
                LlmErrorKind::Malformed,
                format!("{provider}: cannot read the reply: {e}"),
            );
            (e, false)
        })?;
        tracing::debug!(body = %text, "{provider} reply");
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|_| {
            let e = LlmError::new(
                LlmErrorKind::Malformed,
                format!(
                    "{provider}: the reply is not JSON: {:?}",
                    head(&text, QUOTE)
                ),
            );
            (e, false)
        })?;
        self.wire.on_body(&json, on_event).map_err(|e| (e, false))?;
        on_event(StreamEvent::Done);
        Ok(())
    }

    fn is_stream(&self, response: &reqwest::Response) -> bool {
        if self.wire.json_lines() {
            return content_type(response).contains("json") || is_event_stream(response);
        }
        is_event_stream(response)
    }

    /// Reads an event stream (or JSON lines) to its end.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), (LlmError, bool)> {
        let provider = self.wire.provider();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let keep = std::sync::Arc::clone(&seen);
        let bytes = response.bytes_stream().inspect(move |chunk| {
            if let (Ok(chunk), Ok(mut seen)) = (chunk, keep.lock()) {
                let room = QUOTE.saturating_sub(seen.len());
                seen.extend_from_slice(&chunk[..room.min(chunk.len())]);
            }
        });
        let mut events: futures_util::stream::BoxStream<'_, Result<Event, String>> =
            if self.wire.json_lines() {
                json_lines(bytes).boxed()
            } else {
                bytes
                    .eventsource()
                    .map(|e| e.map_err(|e| e.to_string()))
                    .boxed()
            };
        let mut state = StreamState::default();
        let mut answered = false;
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| {
                let e = LlmError::new(
                    LlmErrorKind::Malformed,
                    format!("{provider}: the reply stream broke: {e}"),
                );
                (e, !answered)
            })?;
            tracing::debug!(event = %event.event, data = %event.data, "{provider} stream event");
            let mut count = |e: StreamEvent| {
                answered |= matches!(e, StreamEvent::TextDelta(_) | StreamEvent::ToolCall(_));
                on_event(e)
            };
            match self.wire.on_event(&mut state, &event, &mut count) {
                Ok(true) => {
                    on_event(StreamEvent::Done);
                    return Ok(());
                }
                Ok(false) => {}
                Err(e) => return Err((e, !answered)),
            }
        }
        let start = seen.lock().map(|s| s.clone()).unwrap_or_default();
        let start = String::from_utf8_lossy(&start);
        // SSE comments (keep-alives) are not an answer.
        let said = start
            .lines()
            .any(|l| !l.trim().is_empty() && !l.starts_with(':'));
        let e = LlmError::new(
            LlmErrorKind::Malformed,
            if !said {
                format!("{provider}: the reply stream ended before the answer was complete (it was empty)")
            } else {
                format!(
                    "{provider}: the reply stream ended before the answer was complete; it began: {:?}",
                    head(start.trim(), QUOTE)
                )
            },
        );
        Err((e, !answered))
    }
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("without a content type")
        .to_string()
}

/// Event streams, and replies that do not say what they are (some local
/// servers), are read as SSE.
fn is_event_stream(response: &reqwest::Response) -> bool {
    match response.headers().get(reqwest::header::CONTENT_TYPE) {
        Some(v) => v
            .to_str()
            .map(|t| t.to_ascii_lowercase().contains("event-stream"))
            .unwrap_or(false),
        None => true,
    }
}

/// JSON lines as events (one line, one event's data).
fn json_lines<S, B, E>(bytes: S) -> impl futures_util::Stream<Item = Result<Event, String>>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    futures_util::stream::unfold(
        (bytes, Vec::<u8>::new(), false),
        |(mut bytes, mut buffer, mut ended)| async move {
            loop {
                if let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    let data = String::from_utf8_lossy(&line).trim().to_string();
                    if data.is_empty() {
                        continue;
                    }
                    let event = Event {
                        data,
                        ..Event::default()
                    };
                    return Some((Ok(event), (bytes, buffer, ended)));
                }
                if ended {
                    let data = String::from_utf8_lossy(&buffer).trim().to_string();
                    buffer.clear();
                    if data.is_empty() {
                        return None;
                    }
                    let event = Event {
                        data,
                        ..Event::default()
                    };
                    return Some((Ok(event), (bytes, buffer, ended)));
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => buffer.extend_from_slice(chunk.as_ref()),
                    Some(Err(e)) => return Some((Err(e.to_string()), (bytes, buffer, true))),
                    None => ended = true,
                }
            }
        },
    )
}
