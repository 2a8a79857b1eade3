//! The model's context window, in tokens: how big it is and how aiq knows.
//! Per model, in this order: `[llm] context_tokens` / `--context-tokens`;
//! asked from the server where it can say (see [`super::probe`]; a remote
//! server's answer is kept for a week in `$AIQ_HOME/cache/probes.json`); learned
//! from a context-length error's text and kept for the session (and cached
//! in `$AIQ_HOME/cache/windows.json` per base URL + model); otherwise a
//! generous default.
//!
//! The error texts recognised are the common wordings of OpenAI, vLLM,
//! llama.cpp's server, llama-cpp-python, LiteLLM, LM Studio, Anthropic,
//! Mistral and Text Generation Inference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::probe::Asked;

/// The window assumed when nothing says otherwise (hosted models have
/// 128k tokens or more; the schema budget keeps requests small anyway).
pub const DEFAULT_TOKENS: usize = 128_000;
/// The smallest window aiq plans for (smaller numbers are typos).
pub const MIN_TOKENS: usize = 512;

/// Tokens kept free for the model's reply in a window of `window` tokens.
pub fn reply_reserve(window: usize) -> usize {
    (window / 8).clamp(256, 2048)
}

/// How aiq knows the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowSource {
    /// `[llm] context_tokens` or `--context-tokens`.
    Configured,
    /// The server said so (what it said it in, e.g. `llama.cpp /props`).
    Server(String),
    /// A context-length error said so (this session, or cached from one).
    Learned,
    /// Nothing said: the default.
    Default,
}

/// A model's context window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub tokens: usize,
    pub source: WindowSource,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            tokens: DEFAULT_TOKENS,
            source: WindowSource::Default,
        }
    }
}

impl Window {
    /// Whether the size was found out rather than assumed.
    pub fn is_known(&self) -> bool {
        self.source != WindowSource::Default
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match &self.source {
            WindowSource::Configured => "set by context_tokens".to_string(),
            WindowSource::Server(what) => format!("from {what}"),
            WindowSource::Learned => "learned from a context-length error".to_string(),
            WindowSource::Default => {
                "assumed; set [llm] context_tokens if the model's is smaller".to_string()
            }
        };
        write!(
            f,
            "{} tokens ({how})",
            crate::render::thousands(self.tokens)
        )
    }
}

/// Phrases (lowercase) that mark "the prompt does not fit".
const CONTEXT_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "context size",
    "contextwindowexceeded",
    "context_window_exceeded",
    "exceed_context_size",
    "prompt is too long",
    "too many tokens",
    "input is too long",
    "too large for model",
    "input tokens exceed",
];

/// Whether an error text says the prompt is longer than the window.
pub fn is_context_error(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    CONTEXT_MARKERS.iter().any(|m| lower.contains(m))
        || (lower.contains("must be <=") && lower.contains("tokens"))
}

/// Where a number follows (`…is 8192 tokens`) or precedes (`> 200000
/// maximum`) a phrase, lowercase.
enum Around {
    After(&'static str),
    Before(&'static str),
}

/// Wordings that carry the window, most specific first.
const LIMIT_WORDINGS: &[Around] = &[
    // OpenAI, vLLM, llama-cpp-python, Groq, LiteLLM passing them on.
    Around::After("maximum context length is"),
    // llama-cpp-python's own: "Requested tokens (N) exceed context window of 8192".
    Around::After("context window of"),
    // llama.cpp's server: {"type":"exceed_context_size_error","n_ctx":4096}.
    Around::After("\"n_ctx\":"),
    // LM Studio: "the model is loaded with context length of only 4096 tokens".
    Around::After("context length of only"),
    Around::After("context length of"),
    // llama.cpp's older wording: "available context size (4096 tokens)".
    Around::After("context size ("),
    Around::After("context size of"),
    // OpenAI's newer: "Input tokens exceed the configured limit of 272000 tokens".
    Around::After("configured limit of"),
    // Text Generation Inference: "`inputs` tokens + `max_new_tokens` must be <= 4096".
    Around::After("must be <="),
    // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
    Around::Before("maximum"),
    // Mistral: "too large for model with 32768 maximum context length".
    Around::Before("maximum context length"),
];

/// Wordings that carry how many tokens the request had.
const REQUESTED_WORDINGS: &[Around] = &[
    Around::After("you requested"),
    Around::After("resulted in"),
    Around::After("your request has"),
    Around::After("requested tokens ("),
    Around::After("\"n_prompt_tokens\":"),
    Around::After("prompt is too long:"),
    Around::After("prompt contains"),
    Around::After("given:"),
];

/// The window a context-length error names, if it names one.
pub fn limit_in(text: &str) -> Option<usize> {
    number_in(text, LIMIT_WORDINGS).filter(|&n| n >= MIN_TOKENS)
}

/// How many tokens the refused request had, if the error says.
pub fn requested_in(text: &str) -> Option<usize> {
    number_in(text, REQUESTED_WORDINGS)
}

fn number_in(text: &str, wordings: &[Around]) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    wordings.iter().find_map(|w| match w {
        Around::After(p) => lower
            .match_indices(p)
            .find_map(|(i, _)| leading_number(&lower[i + p.len()..])),
        Around::Before(p) => lower
            .match_indices(p)
            .find_map(|(i, _)| trailing_number(&lower[..i])),
    })
}

/// The number at the start of `s` (after spaces, quotes, backticks), with
/// `,` thousands separators allowed.
fn leading_number(s: &str) -> Option<usize> {
    let s = s.trim_start_matches([' ', '"', '`', '\'', '(']);
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The number at the end of `s` (before spaces).
fn trailing_number(s: &str) -> Option<usize> {
    let s = s.trim_end();
    let start = s
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || *c == ',')
        .last()
        .map(|(i, _)| i)?;
    leading_number(&s[start..])
}

/// Learned windows per base URL + model, in `$AIQ_HOME/cache/windows.json`,
/// and what servers away from this machine said when asked, in
/// `$AIQ_HOME/cache/probes.json` (kept for [`KEEP_ASKED`]).
#[derive(Debug, Clone)]
pub struct WindowCache {
    file: PathBuf,
    probes: PathBuf,
    home: PathBuf,
}

/// How long a remote server's answer about its window is kept.
pub const KEEP_ASKED: chrono::Duration = chrono::Duration::days(7);

/// A remote server's answer: its window (`None`: it cannot say), what said
/// it, and when it was asked (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct KeptAnswer {
    tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<String>,
    asked: i64,
}

impl WindowCache {
    pub fn new(home: &Path) -> WindowCache {
        WindowCache {
            file: crate::home::windows_file(home),
            probes: crate::home::probes_file(home),
            home: home.to_path_buf(),
        }
    }

    fn key(base_url: &str, model: &str) -> String {
        format!(
            "{} {model}",
            crate::redact::redact_url(base_url.trim_end_matches('/'))
        )
    }

    fn read(&self) -> BTreeMap<String, usize> {
        read_json(&self.file)
    }

    /// A remote server's answer of at most [`KEEP_ASKED`] ago (and not
    /// from the future: a clock set back does not keep it longer):
    /// `Some(None)` when it could not say.
    fn asked(&self, base_url: &str, model: &str, now: i64) -> Option<Option<Window>> {
        let all: BTreeMap<String, KeptAnswer> = read_json(&self.probes);
        let a = all
            .get(&Self::key(base_url, model))
            .filter(|a| fresh(a, now))?;
        let when = chrono::DateTime::from_timestamp(a.asked, 0)
            .map(|t| t.format("%Y-%m-%d").to_string())
            .unwrap_or_default();
        Some(a.tokens.map(|tokens| Window {
            tokens,
            source: WindowSource::Server(format!(
                "{}, asked {when}",
                a.from.as_deref().unwrap_or("the server")
            )),
        }))
    }

    /// Keeps a remote server's answer (`None`: it cannot say), asked
    /// `now`; answers past [`KEEP_ASKED`] go.
    fn keep_asked(&self, base_url: &str, model: &str, window: Option<&Window>, now: i64) {
        self.update(&self.probes, |all: &mut BTreeMap<String, KeptAnswer>| {
            all.retain(|_, a| fresh(a, now));
            all.insert(
                Self::key(base_url, model),
                KeptAnswer {
                    tokens: window.map(|w| w.tokens),
                    from: window.and_then(|w| match &w.source {
                        WindowSource::Server(what) => Some(what.clone()),
                        _ => None,
                    }),
                    asked: now,
                },
            );
            true
        });
    }

    /// Forgets a remote server's kept answer, if there is one.
    fn forget_asked(&self, base_url: &str, model: &str) {
        self.update(&self.probes, |all: &mut BTreeMap<String, KeptAnswer>| {
            all.remove(&Self::key(base_url, model)).is_some()
        });
    }

    /// Reads one of the cache files, changes it with `change` and writes it
    /// back if that says it changed — under the file's lock, so what
    /// another aiq keeps at the same time is not lost.
    fn update<T>(&self, file: &Path, change: impl FnOnce(&mut T) -> bool)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Default,
    {
        let dir = crate::home::cache_dir(&self.home);
        if crate::home::create_private_dir(&self.home)
            .and_then(|_| crate::home::create_private_dir(&dir))
            .is_err()
        {
            return;
        }
        let _ = crate::home::lock::exclusive(file, || {
            let mut all: T = read_json(file);
            if change(&mut all) {
                self.write(file, &all);
            }
            Ok(())
        });
    }

    /// Writes one of the cache files (best effort: a cache that cannot be
    /// written only costs asking again).
    fn write<T: serde::Serialize>(&self, file: &Path, value: &T) {
        let Ok(text) = serde_json::to_vec_pretty(value) else {
            return;
        };
        let dir = crate::home::cache_dir(&self.home);
        let written = crate::home::create_private_dir(&self.home)
            .and_then(|_| crate::home::write_private(&dir, file, &text));
        if let Err(e) = written {
            tracing::debug!("cannot write {}: {e}", file.display());
        }
    }

    /// The window learned earlier for this endpoint and model.
    pub fn get(&self, base_url: &str, model: &str) -> Option<usize> {
        self.read().get(&Self::key(base_url, model)).copied()
    }

    /// Remembers a learned window (best effort: a cache that cannot be
    /// written only costs a failed request next time).
    pub fn put(&self, base_url: &str, model: &str, tokens: usize) {
        self.update(&self.file, |all: &mut BTreeMap<String, usize>| {
            all.insert(Self::key(base_url, model), tokens);
            true
        });
    }
}

/// Asked at most [`KEEP_ASKED`] before `now`, and not after it.
fn fresh(a: &KeptAnswer, now: i64) -> bool {
    now.checked_sub(a.asked)
        .is_some_and(|age| (0..=KEEP_ASKED.num_seconds()).contains(&age))
}

fn read_json<T: serde::de::DeserializeOwned + Default>(file: &Path) -> T {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// What one model knows of its window: the configured size, how to ask
/// the server, the cache; asked once, then kept (a learned size replaces
/// it for the rest of the session).
pub(crate) struct WindowBook {
    pub configured: Option<usize>,
    pub cache: Option<WindowCache>,
    pub base_url: String,
    pub model: String,
    /// The server is away from this machine: its answer is kept
    /// ([`super::probe::Probe::is_remote`]).
    pub remote: bool,
    known: Mutex<Option<Window>>,
}

impl WindowBook {
    pub fn new(
        configured: Option<usize>,
        cache: Option<WindowCache>,
        base_url: &str,
        model: &str,
        remote: bool,
    ) -> WindowBook {
        WindowBook {
            configured,
            cache,
            base_url: base_url.to_string(),
            model: model.to_string(),
            remote,
            known: Mutex::new(None),
        }
    }

    /// The window, resolved once: configured, else what the server says
    /// (`ask`; a remote server's answer of the last week is taken as it
    /// was), else cached, else the default.
    pub fn get(&self, ask: impl FnOnce() -> Asked) -> Window {
        self.get_at(ask, chrono::Utc::now().timestamp())
    }

    fn get_at(&self, ask: impl FnOnce() -> Asked, now: i64) -> Window {
        let Ok(mut known) = self.known.lock() else {
            return Window::default();
        };
        if let Some(w) = known.as_ref() {
            return w.clone();
        }
        let window = self
            .configured
            .map(|tokens| Window {
                tokens,
                source: WindowSource::Configured,
            })
            .or_else(|| self.asked(ask, now))
            .or_else(|| {
                let tokens = self.cache.as_ref()?.get(&self.base_url, &self.model)?;
                Some(Window {
                    tokens,
                    source: WindowSource::Learned,
                })
            })
            .unwrap_or_default();
        *known = Some(window.clone());
        window
    }

    /// What the server says: kept from the last week if it is remote,
    /// else asked (and kept if remote and the answer was the server's own).
    fn asked(&self, ask: impl FnOnce() -> Asked, now: i64) -> Option<Window> {
        let cache = self.cache.as_ref().filter(|_| self.remote);
        if let Some(kept) = cache.and_then(|c| c.asked(&self.base_url, &self.model, now)) {
            return kept;
        }
        let asked = ask();
        if let Some(cache) = cache.filter(|_| asked.settled) {
            cache.keep_asked(&self.base_url, &self.model, asked.window.as_ref(), now);
        }
        asked.window
    }

    /// Records a window a context-length error taught: kept for the
    /// session and cached; a remote server's kept answer is dropped, so
    /// the next session asks it again.
    pub fn learn(&self, tokens: usize) {
        let tokens = tokens.max(MIN_TOKENS);
        if let Ok(mut known) = self.known.lock() {
            *known = Some(Window {
                tokens,
                source: WindowSource::Learned,
            });
        }
        if let Some(cache) = &self.cache {
            cache.put(&self.base_url, &self.model, tokens);
            if self.remote {
                cache.forget_asked(&self.base_url, &self.model);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every wording aiq learns from: (text, window, requested).
    const WORDINGS: &[(&str, &str, Option<usize>, Option<usize>)] = &[
        (
            "openai",
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 12363 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            Some(8192),
            Some(12363),
        ),
        (
            "llama-cpp-python",
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 12363 tokens (12363 in the messages, None in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            Some(8192),
            Some(12363),
        ),
        (
            "llama-cpp-python (exception)",
            "Requested tokens (5130) exceed context window of 4096",
            Some(4096),
            Some(5130),
        ),
        (
            "llama.cpp server",
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5130,"n_ctx":4096}}"#,
            Some(4096),
            Some(5130),
        ),
        (
            "llama.cpp server (older)",
            r#"{"error":{"code":400,"message":"the request exceeds the available context size (4096 tokens), try increasing it","type":"invalid_request_error"}}"#,
            Some(4096),
            None,
        ),
        (
            "vLLM",
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5130 tokens (4618 in the messages, 512 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            Some(4096),
            Some(5130),
        ),
        (
            "vLLM (newer)",
            "This model's maximum context length is 4096 tokens. However, your request has 5130 input tokens. Please reduce the length of the input messages.",
            Some(4096),
            Some(5130),
        ),
        (
            "LiteLLM",
            r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 16385 tokens. However, your messages resulted in 20001 tokens.","type":null,"param":null,"code":"400"}}"#,
            Some(16385),
            Some(20001),
        ),
        (
            "LiteLLM (no numbers)",
            r#"{"error":{"message":"litellm.ContextWindowExceededError: Context Window Exceeded","code":"400"}}"#,
            None,
            None,
        ),
        (
            "LM Studio",
            "Trying to keep the first 5130 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
            Some(4096),
            None,
        ),
        (
            "Anthropic",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            Some(200_000),
            Some(208_310),
        ),
        (
            "Mistral",
            "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
            Some(32768),
            Some(40000),
        ),
        (
            "TGI",
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens and 20 `max_new_tokens`",
            Some(4096),
            Some(5000),
        ),
        (
            "OpenAI (newer)",
            "Input tokens exceed the configured limit of 272,000 tokens. Your messages resulted in 300,001 tokens.",
            Some(272_000),
            Some(300_001),
        ),
    ];

    #[test]
    fn every_wording_is_recognised_and_read() {
        for (who, text, limit, requested) in WORDINGS {
            assert!(is_context_error(text), "{who}: not recognised");
            assert_eq!(limit_in(text), *limit, "{who}: window");
            assert_eq!(requested_in(text), *requested, "{who}: requested");
        }
    }

    #[test]
    fn other_errors_are_not_context_errors() {
        for text in [
            "Invalid API key",
            "model 'x' not found",
            r#"{"error":"rate limited, try again in 20s"}"#,
        ] {
            assert!(!is_context_error(text), "{text}");
            assert_eq!(limit_in(text), None, "{text}");
        }
    }

    #[test]
    fn shown_with_how_it_is_known() {
        let w = Window {
            tokens: 4096,
            source: WindowSource::Server("llama.cpp /props".into()),
        };
        assert_eq!(w.to_string(), "4,096 tokens (from llama.cpp /props)");
    }

    #[test]
    fn configured_then_asked_then_cached_then_default() {
        let home = tempfile::tempdir().unwrap();
        let cache = || Some(WindowCache::new(home.path()));
        let server = || said(8192);
        let book = WindowBook::new(Some(2048), cache(), "http://h/v1", "m", false);
        assert_eq!(book.get(server).tokens, 2048);
        let book = WindowBook::new(None, cache(), "http://h/v1", "m", false);
        assert_eq!(book.get(server).tokens, 8192);
        // Nothing cached, nothing asked: the default.
        let book = WindowBook::new(None, cache(), "http://h/v1", "m", false);
        assert_eq!(book.get(silent), Window::default());
        // Learned: kept for the session and for the next one.
        book.learn(4096);
        assert_eq!(book.get(silent).tokens, 4096);
        let next = WindowBook::new(None, cache(), "http://h/v1/", "m", false);
        assert_eq!(
            next.get(silent),
            Window {
                tokens: 4096,
                source: WindowSource::Learned
            }
        );
        // Per model.
        let other = WindowBook::new(None, cache(), "http://h/v1", "other", false);
        assert_eq!(other.get(silent).tokens, DEFAULT_TOKENS);
        // A local server is asked again by the next session.
        let again = WindowBook::new(None, cache(), "http://h/v1", "m", false);
        assert_eq!(again.get(|| said(2048)).tokens, 2048);
        assert!(!crate::home::probes_file(home.path()).exists());
    }

    fn said(tokens: usize) -> Asked {
        Asked {
            window: Some(Window {
                tokens,
                source: WindowSource::Server("the server's model list".into()),
            }),
            settled: true,
        }
    }

    fn silent() -> Asked {
        Asked {
            window: None,
            settled: true,
        }
    }

    #[test]
    fn a_remote_servers_answer_is_kept_for_a_week() {
        let home = tempfile::tempdir().unwrap();
        let url = "https://openrouter.ai/api/v1";
        let now = 1_795_000_000; // 2026-11-18
        let day = 86_400;
        let asks = std::cell::Cell::new(0);
        let book = || WindowBook::new(None, Some(WindowCache::new(home.path())), url, "m", true);
        let asking = |answer: Asked| {
            asks.set(asks.get() + 1);
            answer
        };
        // Asked once, then taken from the cache by the next sessions.
        assert_eq!(book().get_at(|| asking(said(32_000)), now).tokens, 32_000);
        let kept = book().get_at(|| asking(said(1)), now + 6 * day);
        assert_eq!(asks.get(), 1);
        assert_eq!(
            kept,
            Window {
                tokens: 32_000,
                source: WindowSource::Server("the server's model list, asked 2026-11-18".into()),
            }
        );
        assert_eq!(
            kept.to_string(),
            "32,000 tokens (from the server's model list, asked 2026-11-18)"
        );
        // A week later it is asked again.
        let w = book().get_at(|| asking(said(64_000)), now + 8 * day);
        assert_eq!((w.tokens, asks.get()), (64_000, 2));
        // An answer from the future (the clock was set back) is not kept
        // longer: asked again.
        let w = book().get_at(|| asking(said(48_000)), now);
        assert_eq!((w.tokens, asks.get()), (48_000, 3));
        asks.set(2);
        // Per model.
        let other = WindowBook::new(None, Some(WindowCache::new(home.path())), url, "o", true);
        assert_eq!(
            other.get_at(|| asking(silent()), now).tokens,
            DEFAULT_TOKENS
        );
        assert_eq!(asks.get(), 3);
        // "Cannot say" is kept too: the next session neither asks nor
        // guesses, it falls through to the default.
        let again = WindowBook::new(None, Some(WindowCache::new(home.path())), url, "o", true);
        assert_eq!(
            again.get_at(|| asking(said(1)), now + day),
            Window::default()
        );
        assert_eq!(asks.get(), 3);
    }

    #[test]
    fn an_unsettled_answer_or_a_learned_window_means_asking_again() {
        let home = tempfile::tempdir().unwrap();
        let url = "https://api.groq.com/openai/v1";
        let now = 1_795_000_000;
        let book = || WindowBook::new(None, Some(WindowCache::new(home.path())), url, "m", true);
        // The server could not be reached (or refused the key): nothing
        // kept, the next session asks.
        let unreachable = || Asked {
            window: None,
            settled: false,
        };
        assert_eq!(book().get_at(unreachable, now), Window::default());
        assert!(!crate::home::probes_file(home.path()).exists());
        assert_eq!(book().get_at(|| said(8192), now).tokens, 8192);
        // A context-length error teaches a smaller window: the server's
        // kept answer goes, so the next session asks it again.
        let b = book();
        assert_eq!(b.get_at(|| said(1), now).tokens, 8192);
        b.learn(6000);
        assert_eq!(b.get_at(|| said(1), now).tokens, 6000);
        assert_eq!(book().get_at(|| said(7000), now).tokens, 7000);
        // A server that still cannot say leaves the learned window.
        let home2 = tempfile::tempdir().unwrap();
        let b = WindowBook::new(None, Some(WindowCache::new(home2.path())), url, "m", true);
        b.learn(6000);
        let next = WindowBook::new(None, Some(WindowCache::new(home2.path())), url, "m", true);
        assert_eq!(next.get_at(silent, now).tokens, 6000);
    }
}
