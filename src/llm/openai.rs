//! The OpenAI-compatible wire format: `POST {base_url}/chat/completions`,
//! SSE chunks with `choices[0].delta` ending in `data: [DONE]`, tool calls
//! assembled from fragments. Serves OpenAI, vLLM, llama.cpp, LM Studio,
//! OpenRouter, Groq, DeepSeek and Ollama's `/v1` endpoint.

use eventsource_stream::Event;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use super::http::{error_text, malformed, Plan, StreamState, Wire};
use super::{ChatRequest, LlmError, Message, Role, StreamEvent, ToolCall, ToolDef, Usage};

pub(crate) struct OpenAi {
    pub provider: &'static str,
    pub base_url: String,
    pub api_key: Option<String>,
}

fn message(m: &Message) -> Value {
    match m.role {
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        }),
        Role::Assistant if !m.tool_calls.is_empty() => json!({
            "role": "assistant",
            "content": if m.content.is_empty() { Value::Null } else { Value::String(m.content.clone()) },
            "tool_calls": m.tool_calls.iter().map(|c| json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })).collect::<Vec<_>>(),
        }),
        role => json!({"role": role.as_str(), "content": m.content}),
    }
}

/// Tool definitions as `{"type": "function", "function": …}` (OpenAI's
/// form, which Ollama's native API shares).
pub(crate) fn function_tools(tools: &[ToolDef]) -> Value {
    tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters,
            }})
        })
        .collect()
}

/// The usage of a chunk or a body: the cached tokens from
/// `usage.prompt_tokens_details.cached_tokens` (OpenAI, vLLM, newer
/// llama.cpp), else llama.cpp's own `timings.cache_n`.
fn usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let cached = u["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .or_else(|| v["timings"]["cache_n"].as_u64());
    Some(Usage {
        input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: cached.unwrap_or(0),
        cache_write_tokens: 0,
    })
}

impl Wire for OpenAi {
    fn provider(&self) -> &'static str {
        self.provider
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    fn models_url(&self) -> String {
        format!("{}/models", self.base_url.trim_end_matches('/'))
    }

    fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(key) = &self.api_key {
            if let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {key}")) {
                v.set_sensitive(true);
                h.insert(AUTHORIZATION, v);
            }
        }
        h
    }

    fn body(&self, model: &str, request: ChatRequest<'_>, stream: bool, plan: Plan) -> Value {
        let mut body = json!({
            "model": model,
            "messages": request.messages.iter().map(message).collect::<Vec<_>>(),
            "stream": stream,
        });
        if let Some(n) = plan.reply {
            body["max_tokens"] = json!(n);
        }
        // OpenAI caches a long enough identical prefix by itself; it
        // refuses fields it does not know, so this goes to llama.cpp only.
        if plan.cache_prompt {
            body["cache_prompt"] = json!(true);
        }
        if stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if !request.tools.is_empty() {
            body["tools"] = function_tools(request.tools);
        }
        body
    }

    fn on_event(
        &self,
        state: &mut StreamState,
        event: &Event,
        out: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            state.flush_tools(out);
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|_| malformed(self.provider, "a stream event is not JSON", data))?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(error_text(
                self.provider,
                err["message"].as_str().unwrap_or(data),
            ));
        }
        if let Some(u) = usage(&chunk) {
            out(StreamEvent::Usage(u));
        }
        let Some(delta) = chunk["choices"].get(0).map(|c| &c["delta"]) else {
            return Ok(false);
        };
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            out(StreamEvent::TextDelta(text.to_string()));
        }
        for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = fragment["index"].as_u64().unwrap_or(0);
            let call = state.tools.entry(index).or_insert_with(|| ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = fragment["id"].as_str() {
                call.id = id.to_string();
            }
            if let Some(name) = fragment["function"]["name"].as_str() {
                call.name.push_str(name);
            }
            if let Some(args) = fragment["function"]["arguments"].as_str() {
                call.arguments.push_str(args);
            }
        }
        Ok(false)
    }

    fn on_body(&self, body: &Value, out: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        let raw = body.to_string();
        if let Some(err) = body.get("error").filter(|e| !e.is_null()) {
            let text = match err {
                Value::String(s) => s.clone(),
                _ => err["message"].as_str().unwrap_or(&raw).to_string(),
            };
            return Err(error_text(self.provider, &text));
        }
        let Some(choice) = body["choices"].as_array().and_then(|c| c.first()) else {
            return Err(malformed(self.provider, "the reply has no choices", &raw));
        };
        let message = &choice["message"];
        if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
            out(StreamEvent::TextDelta(text.to_string()));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            out(StreamEvent::ToolCall(ToolCall {
                id: call["id"].as_str().unwrap_or_default().to_string(),
                name: call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                arguments: call["function"]["arguments"]
                    .as_str()
                    .unwrap_or("{}")
                    .to_string(),
            }));
        }
        if let Some(u) = usage(body) {
            out(StreamEvent::Usage(u));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::LlmErrorKind;

    fn wire() -> OpenAi {
        OpenAi {
            provider: "openai",
            base_url: "http://x/v1/".into(),
            api_key: Some("sk-test".into()),
        }
    }

    fn run(events: &[&str]) -> (Vec<StreamEvent>, bool) {
        let w = wire();
        let mut state = StreamState::default();
        let mut out = Vec::new();
        let mut done = false;
        for data in events {
            let ev = Event {
                data: data.to_string(),
                ..Event::default()
            };
            done = w.on_event(&mut state, &ev, &mut |e| out.push(e)).unwrap();
        }
        (out, done)
    }

    #[test]
    fn text_and_tool_fragments() {
        let (out, done) = run(&[
            r#"{"choices":[{"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"run_sql","arguments":"{\"sq"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"l\":\"SELECT 1\"}"}}]}}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            "[DONE]",
        ]);
        assert!(done);
        assert_eq!(
            out,
            [
                StreamEvent::TextDelta("Hel".into()),
                StreamEvent::TextDelta("lo".into()),
                StreamEvent::Usage(Usage {
                    input_tokens: 5,
                    output_tokens: 2,
                    ..Usage::default()
                }),
                StreamEvent::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "run_sql".into(),
                    arguments: r#"{"sql":"SELECT 1"}"#.into()
                }),
            ]
        );
    }

    #[test]
    fn body_without_choices_is_malformed() {
        let e = wire()
            .on_body(&json!({"choices": []}), &mut |_| {})
            .unwrap_err();
        assert_eq!(e.kind, LlmErrorKind::Malformed);
        assert!(
            e.message.starts_with("openai: the reply has no choices"),
            "{}",
            e.message
        );
    }

    #[test]
    fn request_shape() {
        let msgs = [Message::system("s"), Message::user("q")];
        let b = wire().body(
            "m",
            ChatRequest {
                messages: &msgs,
                tools: &[],
                stable: 0,
            },
            true,
            Plan {
                window: 128_000,
                reply: None,
                cache_prompt: false,
            },
        );
        assert!(b.get("max_tokens").is_none());
        assert!(b.get("cache_prompt").is_none());
        assert_eq!(b["messages"][1], json!({"role": "user", "content": "q"}));
        assert_eq!(b["stream_options"]["include_usage"], true);
        assert!(b.get("tools").is_none());
        assert_eq!(wire().url(), "http://x/v1/chat/completions");
        assert!(!b.to_string().contains("sk-test"));
    }

    #[test]
    fn llama_cpp_is_asked_to_keep_the_prompt_and_cached_tokens_are_read() {
        let msgs = [Message::system("s"), Message::user("q")];
        let b = wire().body(
            "m",
            ChatRequest {
                messages: &msgs,
                tools: &[],
                stable: 2,
            },
            false,
            Plan {
                window: 4096,
                reply: Some(512),
                cache_prompt: true,
            },
        );
        assert_eq!(b["cache_prompt"], true);
        let u = usage(
            &json!({"usage": {"prompt_tokens": 2006, "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1920}}}),
        );
        assert_eq!(
            u.map(|u| (u.input_tokens, u.cache_read_tokens)),
            Some((2006, 1920))
        );
        let u = usage(
            &json!({"usage": {"prompt_tokens": 900, "completion_tokens": 3},
            "timings": {"cache_n": 850, "prompt_n": 50}}),
        );
        assert_eq!(u.map(|u| u.cache_read_tokens), Some(850));
    }
}
