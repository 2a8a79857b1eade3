//! The Anthropic Messages API: `POST {base_url}/messages` with `x-api-key`
//! and `anthropic-version`, the system prompt as a field, tool use and tool
//! results as content blocks, SSE events from `message_start` to
//! `message_stop`.

use eventsource_stream::Event;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::http::{malformed, Plan, StreamState, Wire};
use super::{ChatRequest, LlmError, LlmErrorKind, Message, Role, StreamEvent, ToolCall, Usage};

pub(crate) const API_VERSION: &str = "2023-06-01";
const MAX_TOKENS: u32 = 4096;

pub(crate) struct Anthropic {
    pub base_url: String,
    pub api_key: Option<String>,
}

fn message(m: &Message) -> Value {
    match m.role {
        Role::Tool => json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        }]}),
        Role::Assistant if !m.tool_calls.is_empty() => {
            let mut blocks = Vec::new();
            if !m.content.is_empty() {
                blocks.push(json!({"type": "text", "text": m.content}));
            }
            for c in &m.tool_calls {
                let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                blocks
                    .push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
            }
            json!({"role": "assistant", "content": blocks})
        }
        role => json!({"role": role.as_str(), "content": m.content}),
    }
}

/// Puts a cache breakpoint on a message's last content block (a text
/// content becomes one text block); an empty text cannot carry one.
fn mark(message: &mut Value) {
    let marker = json!({"type": "ephemeral"});
    match &mut message["content"] {
        Value::String(text) if !text.is_empty() => {
            let text = std::mem::take(text);
            message["content"] = json!([{"type": "text", "text": text, "cache_control": marker}]);
        }
        Value::Array(blocks) => {
            if let Some(last) = blocks.last_mut() {
                last["cache_control"] = marker;
            }
        }
        _ => {}
    }
}

/// The usage an Anthropic `usage` object reports. Its `input_tokens`
/// leaves out what was read from or written to the cache; here the input
/// counts all of it, as the other providers count it.
fn usage(u: &Value) -> Usage {
    let read = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
    let written = u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
    Usage {
        input_tokens: u["input_tokens"].as_u64().unwrap_or(0) + read + written,
        output_tokens: u["output_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: read,
        cache_write_tokens: written,
    }
}

fn provider_error(v: &Value, raw: &str) -> LlmError {
    let message = v["error"]["message"].as_str().unwrap_or(raw);
    let kind = match v["error"]["type"].as_str() {
        Some("authentication_error" | "permission_error") => LlmErrorKind::Auth,
        Some("rate_limit_error") => LlmErrorKind::Quota,
        _ if super::window::is_context_error(message) => {
            return LlmError::context(format!("anthropic: {message}"), message)
        }
        _ => LlmErrorKind::Http,
    };
    LlmError::new(kind, format!("anthropic: {message}"))
}

impl Wire for Anthropic {
    fn provider(&self) -> &'static str {
        "anthropic"
    }

    fn url(&self) -> String {
        format!("{}/messages", self.base_url.trim_end_matches('/'))
    }

    fn models_url(&self) -> String {
        format!("{}/models", self.base_url.trim_end_matches('/'))
    }

    fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = &self.api_key {
            if let Ok(mut v) = HeaderValue::from_str(key) {
                v.set_sensitive(true);
                h.insert(HeaderName::from_static("x-api-key"), v);
            }
        }
        h
    }

    fn body(&self, model: &str, request: ChatRequest<'_>, stream: bool, plan: Plan) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        // Cache breakpoints (two of the four allowed): the end of the
        // system block (with the tools before it), and the last message
        // the next request repeats.
        let last_stable = request.stable.checked_sub(1).and_then(|i| {
            let m = request.messages.get(i)?;
            (m.role != Role::System).then(|| {
                request.messages[..i]
                    .iter()
                    .filter(|m| m.role != Role::System)
                    .count()
            })
        });
        let mut messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(message)
            .collect();
        if let Some(m) = last_stable.and_then(|i| messages.get_mut(i)) {
            mark(m);
        }
        let mut body = json!({
            "model": model,
            "max_tokens": plan.reply.map_or(MAX_TOKENS, |n| n as u32),
            "messages": messages,
            "stream": stream,
        });
        let system = system.join("\n\n");
        if request.stable > 0 && !system.is_empty() {
            body["system"] =
                json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]);
        } else if !system.is_empty() {
            body["system"] = Value::String(system);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        body
    }

    fn on_event(
        &self,
        state: &mut StreamState,
        event: &Event,
        out: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, LlmError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(&event.data)
            .map_err(|_| malformed("anthropic", "a stream event is not JSON", &event.data))?;
        let kind = if event.event.is_empty() || event.event == "message" {
            v["type"].as_str().unwrap_or_default()
        } else {
            event.event.as_str()
        };
        match kind {
            "message_start" => {
                out(StreamEvent::Usage(Usage {
                    output_tokens: 0,
                    ..usage(&v["message"]["usage"])
                }));
            }
            "content_block_start" if v["content_block"]["type"] == "tool_use" => {
                let index = v["index"].as_u64().unwrap_or(0);
                state.tools.insert(
                    index,
                    ToolCall {
                        id: v["content_block"]["id"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        name: v["content_block"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        arguments: String::new(),
                    },
                );
            }
            "content_block_delta" => {
                let delta = &v["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        if let Some(t) = delta["text"].as_str().filter(|t| !t.is_empty()) {
                            out(StreamEvent::TextDelta(t.to_string()));
                        }
                    }
                    Some("input_json_delta") => {
                        let index = v["index"].as_u64().unwrap_or(0);
                        if let Some(call) = state.tools.get_mut(&index) {
                            call.arguments
                                .push_str(delta["partial_json"].as_str().unwrap_or_default());
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                    out(StreamEvent::Usage(Usage {
                        output_tokens: n,
                        ..Usage::default()
                    }));
                }
            }
            "message_stop" => {
                for call in state.tools.values_mut().filter(|c| c.arguments.is_empty()) {
                    call.arguments.push_str("{}");
                }
                state.flush_tools(out);
                return Ok(true);
            }
            "error" => return Err(provider_error(&v, &event.data)),
            _ => {}
        }
        Ok(false)
    }

    fn on_body(&self, body: &Value, out: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        let raw = body.to_string();
        if body["type"] == "error" {
            return Err(provider_error(body, &raw));
        }
        let Some(blocks) = body["content"].as_array() else {
            return Err(malformed("anthropic", "the reply has no content", &raw));
        };
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => {
                    if let Some(t) = block["text"].as_str().filter(|t| !t.is_empty()) {
                        out(StreamEvent::TextDelta(t.to_string()));
                    }
                }
                Some("tool_use") => out(StreamEvent::ToolCall(ToolCall {
                    id: block["id"].as_str().unwrap_or_default().to_string(),
                    name: block["name"].as_str().unwrap_or_default().to_string(),
                    arguments: block["input"].to_string(),
                })),
                _ => {}
            }
        }
        out(StreamEvent::Usage(usage(&body["usage"])));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire() -> Anthropic {
        Anthropic {
            base_url: "http://x/v1".into(),
            api_key: Some("k".into()),
        }
    }

    #[test]
    fn system_is_a_field_and_tools_have_input_schema() {
        let msgs = [Message::system("rules"), Message::user("q")];
        let tools = [crate::llm::ToolDef {
            name: "run_sql".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let b = wire().body(
            "m",
            ChatRequest {
                messages: &msgs,
                tools: &tools,
                stable: 0,
            },
            false,
            Plan {
                window: 200_000,
                reply: None,
                cache_prompt: false,
            },
        );
        assert_eq!(b["system"], "rules");
        assert_eq!(b["messages"], json!([{"role": "user", "content": "q"}]));
        assert_eq!(b["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(b["max_tokens"], 4096);
    }

    #[test]
    fn stream_events() {
        let w = wire();
        let mut state = StreamState::default();
        let mut out = Vec::new();
        let mut done = false;
        for (name, data) in [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":9}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"run_sql"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"sql\": \"SELECT 2\"}"}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ] {
            let ev = Event {
                event: name.into(),
                data: data.into(),
                ..Event::default()
            };
            done = w.on_event(&mut state, &ev, &mut |e| out.push(e)).unwrap();
        }
        assert!(done);
        assert_eq!(out[1], StreamEvent::TextDelta("Hi".into()));
        assert_eq!(
            out[2],
            StreamEvent::ToolCall(ToolCall {
                id: "t1".into(),
                name: "run_sql".into(),
                arguments: r#"{"sql": "SELECT 2"}"#.into()
            })
        );
    }

    #[test]
    fn error_events_name_the_problem() {
        let ev = Event {
            event: "error".into(),
            data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
            ..Event::default()
        };
        let e = wire()
            .on_event(&mut StreamState::default(), &ev, &mut |_| {})
            .unwrap_err();
        assert_eq!(e.message, "anthropic: Overloaded");
    }

    #[test]
    fn cache_breakpoints_go_on_the_system_block_and_the_last_stable_message() {
        let msgs = [
            Message::system("rules and schema"),
            Message::user("first?"),
            Message::assistant("SELECT 1"),
            Message::user("second?"),
            Message::assistant("a fix"),
            Message::user("fixed?"),
        ];
        let b = wire().body(
            "m",
            ChatRequest {
                messages: &msgs,
                tools: &[],
                stable: 4,
            },
            false,
            Plan {
                window: 200_000,
                reply: None,
                cache_prompt: false,
            },
        );
        assert_eq!(
            b["system"],
            json!([{"type": "text", "text": "rules and schema", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(
            b["messages"][2],
            json!({"role": "user", "content": [{"type": "text", "text": "second?", "cache_control": {"type": "ephemeral"}}]})
        );
        assert_eq!(
            b["messages"][0],
            json!({"role": "user", "content": "first?"})
        );
        assert_eq!(
            b["messages"][4],
            json!({"role": "user", "content": "fixed?"})
        );
        assert_eq!(b.to_string().matches("cache_control").count(), 2);
        // Nothing stable: no marker.
        let b = wire().body(
            "m",
            ChatRequest {
                messages: &msgs,
                tools: &[],
                stable: 0,
            },
            false,
            Plan {
                window: 200_000,
                reply: None,
                cache_prompt: false,
            },
        );
        assert!(!b.to_string().contains("cache_control"));
        assert_eq!(b["system"], "rules and schema");
    }

    #[test]
    fn cache_reads_and_writes_are_reported() {
        let body = json!({"content": [{"type": "text", "text": "x"}], "usage": {
            "input_tokens": 30, "output_tokens": 5,
            "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 400}});
        let mut out = Vec::new();
        wire().on_body(&body, &mut |e| out.push(e)).unwrap();
        assert_eq!(
            out[1],
            StreamEvent::Usage(Usage {
                input_tokens: 9430,
                output_tokens: 5,
                cache_read_tokens: 9000,
                cache_write_tokens: 400,
            })
        );
    }
}
