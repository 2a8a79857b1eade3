//! A scripted model server on 127.0.0.1 for tests: it speaks the OpenAI
//! (`/v1/chat/completions`), Anthropic (`/v1/messages`) and Ollama
//! (`/api/chat`, JSON lines) wire formats, streaming (SSE, sent in small
//! pieces, CRLF and comments included) and not, answers with the scripted
//! replies in order, can inject faults (HTTP errors with any body, empty or
//! error-only streams), says what local servers say of their context
//! window (Ollama `/api/show`, llama.cpp `/props`, `/v1/models` fields) when
//! told to, and records every request it got.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The model answers with this text.
    Text(String),
    /// The model calls `run_sql` with this SQL.
    ToolSql(String),
    /// The model calls this tool with these arguments.
    Tool(&'static str, Value),
    /// An HTTP error with a body and an optional `Retry-After` (seconds).
    Status(u16, String, Option<u64>),
    /// 200 with a body that is not JSON.
    Garbage,
    /// A stream that stops before its end (or a truncated JSON body).
    Cut(String),
    /// A reply with no choices.
    EmptyChoices,
    /// Waits, then answers.
    Slow(Duration, Box<Reply>),
    /// Streams this text at once, then holds the stream open this long
    /// before ending it (a model that stalls mid-answer).
    Stall(String, Duration),
    /// 200 with an event stream that ends without a single event (a
    /// streamed request may get it; a whole-body request gets the next
    /// reply).
    EmptyStream,
    /// 200 with an event stream carrying only `data: {"error": …}`.
    StreamError(String),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub raw: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `messages` array as (role, content) pairs; a content of text
    /// blocks only (Anthropic's form, which carries cache markers) is its
    /// text.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                (
                    m["role"].as_str().unwrap_or_default().to_string(),
                    text_of(&m["content"]),
                )
            })
            .collect()
    }

    /// Anthropic's `system` field as text, whether a string or text blocks.
    pub fn system(&self) -> String {
        text_of(&self.body["system"])
    }
}

/// A content as text: a string, or text blocks joined; anything else as
/// JSON.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) if blocks.iter().all(|b| b["type"] == "text") => blocks
            .iter()
            .map(|b| b["text"].as_str().unwrap_or_default())
            .collect(),
        other => other.to_string(),
    }
}

#[derive(Default)]
struct State {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// What `GET /props` answers (404 when unset).
    props: Mutex<Option<Value>>,
    /// Extra fields of the model's entry in `GET /v1/models`.
    listed: Mutex<Option<Value>>,
    /// What `POST /api/show` answers (404 when unset).
    show: Mutex<Option<Value>>,
    /// Answers by the last user message, before the queue (requests in
    /// any order: `aiq eval --jobs`).
    by_question: Mutex<Option<Answerer>>,
}

/// Picks a reply for a request by its last user message.
type Answerer = Arc<dyn Fn(&str) -> Option<Reply> + Send + Sync>;

/// The running server; stops when dropped.
pub struct ModelServer {
    pub url: String,
    state: Arc<State>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl ModelServer {
    pub fn start(replies: Vec<Reply>) -> ModelServer {
        let state = Arc::new(State::default());
        state.replies.lock().unwrap().extend(replies);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::clone(&state);
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = Arc::clone(&shared);
                async move { handle(state, method, uri, headers, body).await }
            },
        );
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ModelServer {
            url,
            state,
            runtime: Some(runtime),
        }
    }

    /// The OpenAI-style base URL (`…/v1`).
    pub fn base(&self) -> String {
        format!("{}/v1", self.url)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Requests to the chat endpoints only.
    pub fn chats(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.path.ends_with("/chat/completions")
                    || r.path.ends_with("/messages")
                    || r.path == "/api/chat"
            })
            .collect()
    }

    /// `GET /props` answers this, as llama.cpp's server does.
    pub fn set_props(&self, props: Value) {
        *self.state.props.lock().unwrap() = Some(props);
    }

    /// The model's entry in `GET /v1/models` gets these fields (vLLM's
    /// `max_model_len`, …).
    pub fn set_listed(&self, fields: Value) {
        *self.state.listed.lock().unwrap() = Some(fields);
    }

    /// `POST /api/show` answers this, as Ollama does.
    pub fn set_show(&self, show: Value) {
        *self.state.show.lock().unwrap() = Some(show);
    }

    /// Answers each request by its last user message (`None`: the queue).
    pub fn answer_by_question(&self, f: impl Fn(&str) -> Option<Reply> + Send + Sync + 'static) {
        *self.state.by_question.lock().unwrap() = Some(Arc::new(f));
    }

    pub fn push(&self, reply: Reply) {
        self.state.replies.lock().unwrap().push_back(reply);
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn handle(
    state: Arc<State>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    let json: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let path = uri.path().to_string();
    state.requests.lock().unwrap().push(Recorded {
        method: method.to_string(),
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect(),
        body: json.clone(),
        raw,
    });
    if method == Method::GET {
        return match path.as_str() {
            "/api/tags" => json_response(200, json!({"models": [{"name": "llama-test"}]})),
            "/props" => match state.props.lock().unwrap().clone() {
                Some(props) => json_response(200, props),
                None => json_response(404, json!({"error": "not found"})),
            },
            p if p.ends_with("/models") => {
                let mut entry = json!({"id": "test-model", "object": "model"});
                if let Some(Value::Object(extra)) = state.listed.lock().unwrap().clone() {
                    for (k, v) in extra {
                        entry[k] = v;
                    }
                }
                json_response(200, json!({"object": "list", "data": [entry]}))
            }
            _ => json_response(404, json!({"error": "not found"})),
        };
    }
    if path == "/api/show" {
        return match state.show.lock().unwrap().clone() {
            Some(show) => json_response(200, show),
            None => json_response(404, json!({"error": "model not found"})),
        };
    }
    let ollama = path == "/api/chat";
    let anthropic = path.ends_with("/messages");
    let llama_cpp = state.props.lock().unwrap().is_some();
    if let Err(why) = check_fields(&json, ollama, anthropic, llama_cpp) {
        return json_response(
            400,
            json!({"error": {"type": "invalid_request_error", "message": why}}),
        );
    }
    let stream = json["stream"].as_bool().unwrap_or(false);
    let answerer = state.by_question.lock().unwrap().clone();
    let last_user = json["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| question_of(&text_of(&m["content"])).to_string())
        .unwrap_or_default();
    let next = answerer
        .and_then(|f| f(&last_user))
        .or_else(|| state.replies.lock().unwrap().pop_front());
    let mut reply = match next {
        Some(r) => r,
        None => return json_response(500, json!({"error": {"message": "no scripted reply left"}})),
    };
    while let Reply::Slow(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    if matches!(reply, Reply::EmptyStream | Reply::StreamError(_)) && !stream {
        reply = match state.replies.lock().unwrap().pop_front() {
            Some(r) => r,
            None => return json_response(500, json!({"error": "no scripted reply left"})),
        };
    }
    match reply {
        Reply::EmptyStream => sse(Vec::new(), false),
        Reply::StreamError(message) => sse(
            vec![format!("data: {}", json!({"error": {"message": message}}))],
            false,
        ),
        Reply::Text(_) | Reply::ToolSql(_) | Reply::Tool(..) if ollama => {
            ollama_reply(&reply, stream)
        }
        Reply::Status(code, body, retry_after) => {
            let mut r = Response::builder()
                .status(code)
                .header("content-type", "application/json");
            if let Some(s) = retry_after {
                r = r.header("retry-after", s.to_string());
            }
            r.body(Body::from(body)).unwrap()
        }
        Reply::Garbage => Response::builder()
            .status(200)
            .header("content-type", "text/html")
            .body(Body::from(
                "<html><body>502 upstream exploded</body></html>",
            ))
            .unwrap(),
        Reply::EmptyChoices => json_response(200, json!({"id": "x", "choices": []})),
        Reply::Cut(text) if stream => {
            let events = if anthropic {
                anthropic_events(&Reply::Text(text))
            } else {
                openai_events(&Reply::Text(text))
            };
            // Everything but the closing events.
            let keep = events.len().saturating_sub(if anthropic { 3 } else { 2 });
            sse(events[..keep].to_vec(), anthropic)
        }
        Reply::Stall(text, hold) => {
            let events = if anthropic {
                anthropic_events(&Reply::Text(text))
            } else {
                openai_events(&Reply::Text(text))
            };
            let tail = if anthropic { 3 } else { 2 };
            let split = events.len().saturating_sub(tail);
            stalled_sse(
                events[..split].to_vec(),
                events[split..].to_vec(),
                hold,
                anthropic,
            )
        }
        Reply::Cut(_) => Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Body::from(
                "{\"choices\": [{\"message\": {\"content\": \"SEL",
            ))
            .unwrap(),
        reply if stream && anthropic => sse(anthropic_events(&reply), true),
        reply if stream => sse(openai_events(&reply), false),
        reply if anthropic => json_response(200, anthropic_body(&reply)),
        reply => json_response(200, openai_body(&reply)),
    }
}

/// The question of a question's message: after the tables and the
/// verified examples aiq puts before it, if any.
pub fn question_of(content: &str) -> &str {
    if content.starts_with("More tables for this question")
        || content.starts_with("Verified examples")
    {
        content.rsplit("\n\n").next().unwrap_or(content)
    } else {
        content
    }
}

/// What the real servers refuse, refused here too: a field the wire does
/// not have (OpenAI rejects unknown request arguments; `cache_prompt` is
/// llama.cpp's own), Anthropic's `cache_control` anywhere but on a content
/// block or the system block, other than `{"type": "ephemeral"}`, on an
/// empty text, or more than four of them.
fn check_fields(
    body: &Value,
    ollama: bool,
    anthropic: bool,
    llama_cpp: bool,
) -> Result<(), String> {
    let Some(fields) = body.as_object() else {
        return Ok(());
    };
    let mut allowed = vec!["model", "messages", "stream", "tools"];
    if ollama {
        allowed.extend(["options", "keep_alive"]);
    } else if anthropic {
        allowed.extend(["max_tokens", "system"]);
    } else {
        allowed.extend(["max_tokens", "stream_options"]);
        if llama_cpp {
            allowed.push("cache_prompt");
        }
    }
    for k in fields.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!("Unrecognized request argument supplied: {k}"));
        }
    }
    let raw = body.to_string();
    let markers = raw.matches("\"cache_control\"").count();
    if markers == 0 {
        return Ok(());
    }
    if !anthropic {
        return Err("Unrecognized request argument supplied: cache_control".into());
    }
    if markers > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {markers}."
        ));
    }
    let mut blocks: Vec<&Value> = Vec::new();
    if let Some(system) = body["system"].as_array() {
        blocks.extend(system);
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        if m.get("cache_control").is_some() {
            return Err("messages.cache_control: Extra inputs are not permitted".into());
        }
        blocks.extend(m["content"].as_array().into_iter().flatten());
    }
    let mut seen = 0;
    for b in blocks {
        if let Some(c) = b.get("cache_control") {
            seen += 1;
            if c != &json!({"type": "ephemeral"}) {
                return Err(format!("cache_control: unexpected value {c}"));
            }
            if b["type"] == "text" && b["text"].as_str().is_none_or(str::is_empty) {
                return Err("cache_control cannot be set for empty text blocks".into());
            }
        }
    }
    if seen != markers {
        return Err("cache_control: Extra inputs are not permitted".into());
    }
    Ok(())
}

fn json_response(code: u16, body: Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// Sends SSE events in 7-byte pieces, so events split across reads at
/// arbitrary bytes; Anthropic streams use CRLF line ends.
fn sse(events: Vec<String>, crlf: bool) -> Response {
    let mut text = String::from(": keep-alive comment\n\n");
    for e in events {
        text.push_str(&e);
        text.push_str("\n\n");
    }
    if crlf {
        text = text.replace('\n', "\r\n");
    }
    in_pieces(text.into_bytes(), "text/event-stream")
}

/// A 200 reply whose body arrives in 7-byte pieces.
fn in_pieces(bytes: Vec<u8>, content_type: &str) -> Response {
    let pieces: Vec<Result<Bytes, Infallible>> = bytes
        .chunks(7)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(Body::from_stream(futures_util::stream::iter(pieces)))
        .unwrap()
}

/// Like [`sse`], but `first` arrives at once and `rest` only after `hold`.
fn stalled_sse(first: Vec<String>, rest: Vec<String>, hold: Duration, crlf: bool) -> Response {
    let frame = |events: Vec<String>| {
        let mut text = String::new();
        for e in events {
            text.push_str(&e);
            text.push_str("\n\n");
        }
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        Bytes::from(text)
    };
    let head = frame(first);
    let tail = frame(rest);
    let body = futures_util::stream::once(async move { Ok::<_, Infallible>(head) }).chain(
        futures_util::stream::once(async move {
            tokio::time::sleep(hold).await;
            Ok::<_, Infallible>(tail)
        }),
    );
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

/// The tool a reply calls, and its arguments.
fn call_of(reply: &Reply) -> Option<(&str, Value)> {
    match reply {
        Reply::ToolSql(sql) => Some(("run_sql", json!({ "sql": sql }))),
        Reply::Tool(name, args) => Some((name, args.clone())),
        _ => None,
    }
}

fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(5).map(|c| c.iter().collect()).collect()
}

fn openai_events(reply: &Reply) -> Vec<String> {
    let mut out = Vec::new();
    match reply {
        Reply::Text(text) => {
            for piece in chunks(text) {
                out.push(format!(
                    "data: {}",
                    json!({"choices": [{"index": 0, "delta": {"content": piece}}]})
                ));
            }
        }
        Reply::ToolSql(_) | Reply::Tool(..) => {
            let (name, args) = call_of(reply).unwrap();
            let args = args.to_string();
            let (a, b) = args.split_at(args.len() / 2);
            out.push(format!("data: {}", json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": a}}]}}]})));
            out.push(format!("data: {}", json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": b}}]}}]})));
        }
        other => panic!("not a streamable reply: {other:?}"),
    }
    out.push(format!(
        "data: {}",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    out.push(format!(
        "data: {}",
        json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 8}}})
    ));
    out.push("data: [DONE]".to_string());
    out
}

fn openai_body(reply: &Reply) -> Value {
    let message = match reply {
        Reply::Text(text) => json!({"role": "assistant", "content": text}),
        Reply::ToolSql(_) | Reply::Tool(..) => {
            let (name, args) = call_of(reply).unwrap();
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}
            ]})
        }
        other => panic!("not a body reply: {other:?}"),
    };
    json!({"id": "c", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 8}}})
}

fn anthropic_events(reply: &Reply) -> Vec<String> {
    // message_start's JSON is split over two `data:` lines (joined with a newline).
    let mut out = vec![
        "event: message_start\ndata: {\"type\":\"message_start\",\ndata: \"message\":{\"usage\":{\"input_tokens\":11,\"cache_read_input_tokens\":8,\"cache_creation_input_tokens\":3}}}".to_string(),
        "event: ping\ndata: {\"type\":\"ping\"}".to_string(),
    ];
    match reply {
        Reply::Text(text) => {
            out.push(format!("event: content_block_start\ndata: {}", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
            for piece in chunks(text) {
                out.push(format!("event: content_block_delta\ndata: {}", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})));
            }
        }
        Reply::ToolSql(_) | Reply::Tool(..) => {
            let (name, args) = call_of(reply).unwrap();
            out.push(format!("event: content_block_start\ndata: {}", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}})));
            let args = args.to_string();
            let (a, b) = args.split_at(args.len() / 2);
            for part in [a, b] {
                out.push(format!("event: content_block_delta\ndata: {}", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": part}})));
            }
        }
        other => panic!("not a streamable reply: {other:?}"),
    }
    out.push(format!(
        "event: content_block_stop\ndata: {}",
        json!({"type": "content_block_stop", "index": 0})
    ));
    out.push(format!("event: message_delta\ndata: {}", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}})));
    out.push(format!(
        "event: message_stop\ndata: {}",
        json!({"type": "message_stop"})
    ));
    out
}

fn anthropic_body(reply: &Reply) -> Value {
    let content = match reply {
        Reply::Text(text) => json!([{"type": "text", "text": text}]),
        Reply::ToolSql(_) | Reply::Tool(..) => {
            let (name, args) = call_of(reply).unwrap();
            json!([{"type": "tool_use", "id": "toolu_1", "name": name, "input": args}])
        }
        other => panic!("not a body reply: {other:?}"),
    };
    json!({"id": "m", "type": "message", "role": "assistant", "content": content, "usage": {"input_tokens": 11, "output_tokens": 7, "cache_read_input_tokens": 8, "cache_creation_input_tokens": 3}})
}

/// Ollama's native reply: JSON lines when streamed, one object otherwise.
fn ollama_reply(reply: &Reply, stream: bool) -> Response {
    let message = match reply {
        Reply::Text(text) => json!({"role": "assistant", "content": text}),
        _ => {
            let (name, args) = call_of(reply).unwrap();
            json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]})
        }
    };
    let last = json!({"model": "llama-test", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 7});
    if !stream {
        let mut whole = last;
        whole["message"] = message;
        return json_response(200, whole);
    }
    let mut lines = Vec::new();
    match reply {
        Reply::Text(text) => {
            for piece in chunks(text) {
                lines.push(json!({"model": "llama-test", "message": {"role": "assistant", "content": piece}, "done": false}).to_string());
            }
        }
        _ => lines
            .push(json!({"model": "llama-test", "message": message, "done": false}).to_string()),
    }
    lines.push(last.to_string());
    in_pieces(
        (lines.join("\n") + "\n").into_bytes(),
        "application/x-ndjson",
    )
}
