//! The model layer (SPEC §5.1): one [`ChatModel`] trait — messages and tool
//! definitions in, a stream of [`StreamEvent`]s out — with OpenAI-compatible
//! and Anthropic wire formats over one HTTP client that times out, retries
//! with backoff and never logs the key.
//!
//! The trait is synchronous for the front ends: each model owns a small
//! tokio runtime and blocks on it; the turn's [`CancelToken`] aborts the
//! request in flight.

mod anthropic;
mod http;
mod ollama;
mod openai;
pub mod probe;
pub mod settings;
mod stream;
pub mod window;

use serde::{Deserialize, Serialize};

pub use crate::cancel::CancelToken;
pub use settings::{connect, LlmConfig, LlmFlags, Provider, Settings};
pub use window::{Window, WindowSource};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message of a conversation as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Tool calls the assistant made in this message.
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// The answer to a tool call.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}

/// What one request sends.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub messages: &'a [Message],
    pub tools: &'a [ToolDef],
    /// How many of `messages`, from the first, the conversation's next
    /// request repeats in the same bytes: the stable part a provider's
    /// cache can keep (its markers go at its end). 0: none.
    pub stable: usize,
}

/// Token counts reported by the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens the provider served from its cache of an earlier
    /// request's prefix.
    pub cache_read_tokens: u64,
    /// Input tokens the provider wrote to its cache (Anthropic).
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds what another report of the same request says.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// What a model reports while it answers.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ToolCall(ToolCall),
    Usage(Usage),
    /// The request failed in a way worth retrying; another attempt follows.
    Retrying {
        why: String,
        attempt: u32,
    },
    Done,
}

/// Why a model request failed. Exit code 4, except a cancel (130).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    pub kind: LlmErrorKind,
    pub message: String,
    /// For [`LlmErrorKind::ContextLength`]: the window the error names.
    pub limit: Option<usize>,
    /// For [`LlmErrorKind::ContextLength`]: the tokens the request had.
    pub requested: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmErrorKind {
    /// Not configured, or nothing answers at the address.
    Unreachable,
    /// The key was refused (401/403).
    Auth,
    /// Rate limit or quota exhausted after retries.
    Quota,
    /// The prompt is longer than the model's context window.
    ContextLength,
    /// The reply was not what the wire format promises.
    Malformed,
    /// Any other HTTP failure.
    Http,
    /// Cancelled (Ctrl-C).
    Cancelled,
    /// A bad setting (unknown provider): a usage error.
    Usage,
}

impl From<LlmError> for crate::error::AiqError {
    /// Model errors exit 4; an unknown provider is a usage error (2), a
    /// cancel an interruption (130).
    fn from(e: LlmError) -> Self {
        use crate::error::AiqError;
        match e.kind {
            LlmErrorKind::Usage => AiqError::Usage(e.message),
            LlmErrorKind::Cancelled => AiqError::Interrupted,
            _ => AiqError::Llm(e.message),
        }
    }
}

impl LlmError {
    pub fn new(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            message: message.into(),
            limit: None,
            requested: None,
        }
    }

    /// "The prompt is longer than the model's window", with what `text`
    /// (the server's words) says of the window and the request.
    pub fn context(message: impl Into<String>, text: &str) -> Self {
        LlmError {
            limit: window::limit_in(text),
            requested: window::requested_in(text),
            ..Self::new(LlmErrorKind::ContextLength, message)
        }
    }
}

/// A language model.
pub trait ChatModel: Send {
    /// `openai`, `anthropic` or `ollama`.
    fn provider(&self) -> &str;
    /// The model name sent with each request.
    fn model(&self) -> &str;
    /// Checks that the endpoint answers and accepts the key (`aiq doctor`);
    /// returns a one-line description.
    fn check(&self) -> Result<String, LlmError>;
    /// Whether tool definitions reach the model (some local servers get
    /// none); without them, the model is asked to answer in text.
    fn supports_tools(&self) -> bool {
        true
    }
    /// The model's context window: configured, asked from the server,
    /// learned, or assumed (see [`window`]). Found out once.
    fn window(&self) -> Window {
        Window::default()
    }
    /// Records a window learned from a context-length error, for the rest
    /// of the session (and the next ones).
    fn learn_window(&self, _tokens: usize) {}
    /// Sends the request and reports the answer through `on_event` as it
    /// arrives, ending with [`StreamEvent::Done`].
    fn chat(
        &self,
        request: ChatRequest<'_>,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError>;
}

/// The first `n` bytes of a body, for error messages (on a char boundary).
pub(crate) use crate::clip::head;
