//! Ollama's native chat API: `POST {host}/api/chat` with
//! `options.num_ctx` set to the window aiq plans for, so Ollama runs the
//! model with that window and never cuts the beginning of a prompt (the
//! system prompt with the schema) silently, as it does when a prompt is
//! longer than the window it chose itself. Replies stream as JSON lines
//! (`{"message":{"content":…},"done":false}` … `{"done":true,…}`); errors
//! are `{"error":"…"}`.

use eventsource_stream::Event;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use super::http::{malformed, Plan, StreamState, Wire};
use super::{ChatRequest, LlmError, Message, Role, StreamEvent, ToolCall, Usage};

/// How long Ollama keeps the model (and its cache) loaded after a
/// request: long enough for a person to read an answer and ask again.
const KEEP_ALIVE: &str = "30m";

pub(crate) struct Ollama {
    /// `http://host:11434`, without `/v1`.
    pub host: String,
}

fn message(m: &Message) -> Value {
    let mut v = json!({"role": m.role.as_str(), "content": m.content});
    if m.role == Role::Assistant && !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| {
                let arguments: Value =
                    serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                json!({"function": {"name": c.name, "arguments": arguments}})
            })
            .collect();
    }
    v
}

fn usage(v: &Value) -> Option<Usage> {
    let input = v["prompt_eval_count"].as_u64();
    let output = v["eval_count"].as_u64();
    (input.is_some() || output.is_some()).then(|| Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        ..Usage::default()
    })
}

impl Ollama {
    fn error(&self, v: &Value) -> Option<LlmError> {
        let text = match v.get("error")? {
            Value::String(s) => s.clone(),
            other => other["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| other.to_string()),
        };
        Some(super::http::error_text("ollama", &text))
    }

    /// One reply object (a streamed line or the whole body).
    fn on_object(&self, v: &Value, state: &mut StreamState, out: &mut dyn FnMut(StreamEvent)) {
        let message = &v["message"];
        if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
            out(StreamEvent::TextDelta(text.to_string()));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let n = state.tools.len() as u64;
            let arguments = match &call["function"]["arguments"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            state.tools.insert(
                n,
                ToolCall {
                    id: format!("call_{n}"),
                    name: call["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    arguments,
                },
            );
        }
    }
}

impl Wire for Ollama {
    fn provider(&self) -> &'static str {
        "ollama"
    }

    fn url(&self) -> String {
        format!("{}/api/chat", self.host)
    }

    fn models_url(&self) -> String {
        format!("{}/api/tags", self.host)
    }

    fn headers(&self) -> HeaderMap {
        HeaderMap::new()
    }

    fn json_lines(&self) -> bool {
        true
    }

    fn body(&self, model: &str, request: ChatRequest<'_>, stream: bool, plan: Plan) -> Value {
        let mut options = json!({"num_ctx": plan.window});
        if let Some(n) = plan.reply {
            options["num_predict"] = json!(n);
        }
        // The same options every request (another `num_ctx` loads the
        // model again and loses its cache), and the model kept loaded
        // between questions so the evaluated prefix is still there.
        let mut body = json!({
            "model": model,
            "messages": request.messages.iter().map(message).collect::<Vec<_>>(),
            "stream": stream,
            "options": options,
            "keep_alive": KEEP_ALIVE,
        });
        if !request.tools.is_empty() {
            body["tools"] = super::openai::function_tools(request.tools);
        }
        body
    }

    fn on_event(
        &self,
        state: &mut StreamState,
        event: &Event,
        out: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, LlmError> {
        let line = event.data.trim();
        if line.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|_| malformed("ollama", "a reply line is not JSON", line))?;
        if let Some(e) = self.error(&v) {
            return Err(e);
        }
        self.on_object(&v, state, out);
        if v["done"].as_bool() == Some(true) {
            state.flush_tools(out);
            if let Some(u) = usage(&v) {
                out(StreamEvent::Usage(u));
            }
            return Ok(true);
        }
        Ok(false)
    }

    fn on_body(&self, body: &Value, out: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        if let Some(e) = self.error(body) {
            return Err(e);
        }
        if body.get("message").is_none() {
            return Err(malformed(
                "ollama",
                "the reply has no message",
                &body.to_string(),
            ));
        }
        let mut state = StreamState::default();
        self.on_object(body, &mut state, out);
        state.flush_tools(out);
        if let Some(u) = usage(body) {
            out(StreamEvent::Usage(u));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire() -> Ollama {
        Ollama {
            host: "http://h:11434".into(),
        }
    }

    #[test]
    fn the_window_travels_as_num_ctx() {
        let msgs = [Message::system("s"), Message::user("q")];
        let b = wire().body(
            "llama3.2",
            ChatRequest {
                messages: &msgs,
                tools: &[],
                stable: 0,
            },
            true,
            Plan {
                window: 4096,
                reply: Some(512),
                cache_prompt: false,
            },
        );
        assert_eq!(b["options"]["num_ctx"], 4096);
        assert_eq!(b["options"]["num_predict"], 512);
        assert_eq!(b["keep_alive"], "30m");
        assert_eq!(b["messages"][0], json!({"role": "system", "content": "s"}));
        assert_eq!(wire().url(), "http://h:11434/api/chat");
    }

    #[test]
    fn lines_make_text_then_done() {
        let w = wire();
        let mut state = StreamState::default();
        let mut out = Vec::new();
        let mut done = false;
        for line in [
            r#"{"message":{"role":"assistant","content":"SEL"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":"ECT 1"},"done":false}"#,
            r#"{"message":{"role":"assistant","content":""},"done":true,"prompt_eval_count":30,"eval_count":4}"#,
        ] {
            let ev = Event {
                data: line.into(),
                ..Event::default()
            };
            done = w.on_event(&mut state, &ev, &mut |e| out.push(e)).unwrap();
        }
        assert!(done);
        assert_eq!(
            out,
            [
                StreamEvent::TextDelta("SEL".into()),
                StreamEvent::TextDelta("ECT 1".into()),
                StreamEvent::Usage(Usage {
                    input_tokens: 30,
                    output_tokens: 4,
                    ..Usage::default()
                })
            ]
        );
        let e = w
            .on_body(&json!({"error": "model 'x' not found"}), &mut |_| {})
            .unwrap_err();
        assert_eq!(e.message, "ollama: model 'x' not found");
    }
}
