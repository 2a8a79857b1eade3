//! Which model to talk to: flags > environment > config file (SPEC §2.2,
//! §3), provider defaults, and the local Ollama fallback when nothing is
//! configured.

use std::path::PathBuf;
use std::time::Duration;

use super::anthropic::Anthropic;
use super::http::{client, fresh_client, runtime, HttpModel};
use super::ollama::Ollama;
use super::openai::OpenAi;
use super::probe::Probe;
use super::window::{WindowBook, WindowCache};
use super::{ChatModel, LlmError, LlmErrorKind};

/// `[llm]`: the model settings (used by the question modes).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub timeout_secs: u64,
    pub max_retries: u32,
    /// The model's context window in tokens; asked from the server or
    /// learned from its errors when unset.
    pub context_tokens: Option<usize>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: None,
            model: None,
            base_url: None,
            api_key: None,
            timeout_secs: 120,
            max_retries: 3,
            context_tokens: None,
        }
    }
}

/// The model flags (`--provider`, `--model`, `--base-url`, `--no-stream`,
/// `--context-tokens`).
#[derive(Debug, Clone, Default)]
pub struct LlmFlags {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub no_stream: bool,
    pub context_tokens: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
        }
    }

    fn parse(s: &str) -> Result<Provider, LlmError> {
        match s.to_ascii_lowercase().as_str() {
            "openai" => Ok(Provider::OpenAi),
            "anthropic" => Ok(Provider::Anthropic),
            "ollama" => Ok(Provider::Ollama),
            other => Err(LlmError::new(
                LlmErrorKind::Usage,
                format!("unknown provider '{other}' (choose openai, anthropic or ollama; any OpenAI-compatible server is `openai` with --base-url)"),
            )),
        }
    }
}

/// The resolved model settings. `Debug` never shows the key.
#[derive(Clone, PartialEq)]
pub struct Settings {
    pub provider: Provider,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    pub max_retries: u32,
    pub stream: bool,
    /// The model's context window when configured (`[llm] context_tokens`,
    /// `--context-tokens`); otherwise asked from the server or learned.
    pub context_tokens: Option<usize>,
    /// `$AIQ_HOME`, where learned windows are cached (none in some tests).
    pub home: Option<PathBuf>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &crate::redact::redact_url(&self.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "********"))
            .field("stream", &self.stream)
            .field("context_tokens", &self.context_tokens)
            .finish()
    }
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const OPENAI_MODEL: &str = "gpt-4o-mini";
const ANTHROPIC_URL: &str = "https://api.anthropic.com/v1";
const ANTHROPIC_MODEL: &str = "claude-3-5-haiku-latest";
const OLLAMA_HOST: &str = "http://127.0.0.1:11434";

/// The message shown when no model is configured and no Ollama answers.
pub fn not_configured(ollama: &str) -> String {
    format!(
        "no language model is configured and no Ollama server answers at {ollama}. Configure one of:\n  \
         1. OpenAI or any OpenAI-compatible server: export OPENAI_API_KEY=… (and AIQ_MODEL / AIQ_BASE_URL, or --model / --base-url)\n  \
         2. Anthropic: export ANTHROPIC_API_KEY=… AIQ_PROVIDER=anthropic\n  \
         3. a local model with Ollama: `ollama serve` and `ollama pull llama3.2` (or set OLLAMA_HOST)\n\
         The same settings can live in the [llm] section of config.toml (`aiq config init`)."
    )
}

/// Resolves the settings. Probes Ollama only when nothing else is configured
/// (or it is chosen without a model).
pub fn resolve(
    config: &LlmConfig,
    flags: &LlmFlags,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, LlmError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let explicit = flags.provider.as_deref().or(config.provider.as_deref());
    let model = flags.model.clone().or_else(|| config.model.clone());
    let base_url = flags.base_url.clone().or_else(|| config.base_url.clone());
    let provider = match explicit {
        Some(p) => Provider::parse(p)?,
        None if config.api_key.is_some() || get("OPENAI_API_KEY").is_some() => Provider::OpenAi,
        None if get("ANTHROPIC_API_KEY").is_some() => Provider::Anthropic,
        None if base_url.is_some() || model.is_some() => Provider::OpenAi,
        None => Provider::Ollama,
    };
    let api_key = config.api_key.clone().or_else(|| match provider {
        Provider::OpenAi => get("OPENAI_API_KEY"),
        Provider::Anthropic => get("ANTHROPIC_API_KEY"),
        Provider::Ollama => None,
    });
    let (base_url, model) = match provider {
        Provider::OpenAi => (
            base_url.unwrap_or_else(|| OPENAI_URL.into()),
            model.unwrap_or_else(|| OPENAI_MODEL.into()),
        ),
        Provider::Anthropic => (
            base_url.unwrap_or_else(|| ANTHROPIC_URL.into()),
            model.unwrap_or_else(|| ANTHROPIC_MODEL.into()),
        ),
        Provider::Ollama => {
            let host = ollama_host(base_url.as_deref(), get("OLLAMA_HOST").as_deref());
            let model = match model {
                Some(m) => m,
                None => first_ollama_model(&host, explicit.is_some())?,
            };
            (host, model)
        }
    };
    check_url(&base_url)?;
    Ok(Settings {
        provider,
        model,
        base_url,
        api_key,
        timeout: Duration::from_secs(config.timeout_secs.max(1)),
        max_retries: config.max_retries,
        stream: !flags.no_stream,
        context_tokens: flags.context_tokens.or(config.context_tokens),
        home: None,
    })
}

/// A base URL must be an http(s) URL: anything else is a usage error
/// (exit 2), not an unreachable model.
fn check_url(url: &str) -> Result<(), LlmError> {
    let shown = crate::redact::redact_url(url);
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(LlmError::new(
            LlmErrorKind::Usage,
            format!("the model's base URL {shown:?} is not an http(s) URL (give one like http://localhost:8080/v1 with --base-url, AIQ_BASE_URL or [llm] base_url)"),
        )),
    }
}

/// `OLLAMA_HOST` may be `host:port` without a scheme; a base URL given for
/// Ollama may end in `/v1`.
fn ollama_host(base_url: Option<&str>, env_host: Option<&str>) -> String {
    let raw = base_url.or(env_host).unwrap_or(OLLAMA_HOST);
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    with_scheme
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string()
}

/// Asks Ollama which models it has; the first one is used.
fn first_ollama_model(host: &str, chosen: bool) -> Result<String, LlmError> {
    let unreachable = |why: String| {
        let message = if chosen {
            format!("ollama: no server answers at {host} ({why}); start it with `ollama serve` or set OLLAMA_HOST")
        } else {
            not_configured(host)
        };
        LlmError::new(LlmErrorKind::Unreachable, message)
    };
    let rt = runtime()?;
    let http = client(Duration::from_secs(3))?;
    let url = format!("{host}/api/tags");
    let body: serde_json::Value = rt
        .block_on(async {
            let response = http
                .get(&url)
                .timeout(Duration::from_secs(3))
                .send()
                .await?;
            response.error_for_status()?.json().await
        })
        .map_err(|e| unreachable(e.to_string()))?;
    body["models"]
        .as_array()
        .and_then(|m| m.first())
        .and_then(|m| m["name"].as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            LlmError::new(
                LlmErrorKind::Unreachable,
                format!("ollama at {host} has no models yet; pull one with `ollama pull llama3.2`, or pass --model"),
            )
        })
}

/// Builds the model for the settings.
pub fn connect(settings: &Settings) -> Result<Box<dyn ChatModel>, LlmError> {
    let client = client(settings.timeout)?;
    let fresh = fresh_client(settings.timeout)?;
    let runtime = runtime()?;
    let model = settings.model.clone();
    let probe = match settings.provider {
        Provider::Anthropic => Probe::Nothing,
        Provider::Ollama => Probe::Ollama(settings.base_url.clone()),
        Provider::OpenAi => Probe::for_openai(&settings.base_url),
    };
    let book = WindowBook::new(
        settings.context_tokens,
        settings.home.as_deref().map(WindowCache::new),
        &settings.base_url,
        &settings.model,
        probe.is_remote(),
    );
    Ok(match settings.provider {
        Provider::Anthropic => Box::new(HttpModel {
            wire: Anthropic {
                base_url: settings.base_url.clone(),
                api_key: settings.api_key.clone(),
            },
            model,
            stream: settings.stream,
            tools: true,
            client,
            fresh: fresh.clone(),
            runtime,
            max_retries: settings.max_retries,
            book,
            probe,
        }),
        Provider::Ollama => Box::new(HttpModel {
            wire: Ollama {
                host: settings.base_url.clone(),
            },
            model,
            stream: settings.stream,
            // Many local models reject requests that carry tools.
            tools: false,
            client,
            fresh: fresh.clone(),
            runtime,
            max_retries: settings.max_retries,
            book,
            probe,
        }),
        Provider::OpenAi => Box::new(HttpModel {
            wire: OpenAi {
                provider: "openai",
                base_url: settings.base_url.clone(),
                api_key: settings.api_key.clone(),
            },
            model,
            stream: settings.stream,
            tools: true,
            client,
            fresh: fresh.clone(),
            runtime,
            max_retries: settings.max_retries,
            book,
            probe,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn flags_win_over_config() {
        let config = LlmConfig {
            provider: Some("anthropic".into()),
            model: Some("from-config".into()),
            ..LlmConfig::default()
        };
        let flags = LlmFlags {
            provider: Some("openai".into()),
            model: Some("from-flag".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            no_stream: true,
            context_tokens: Some(4096),
        };
        let s = resolve(&config, &flags, &env(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(s.provider, Provider::OpenAi);
        assert_eq!(s.model, "from-flag");
        assert_eq!(s.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(s.api_key.as_deref(), Some("sk-1"));
        assert!(!s.stream);
        assert_eq!(s.context_tokens, Some(4096));
        assert!(!format!("{s:?}").contains("sk-1"));
    }

    #[test]
    fn keys_pick_the_provider() {
        let none = LlmFlags::default();
        let s = resolve(
            &LlmConfig::default(),
            &none,
            &env(&[("ANTHROPIC_API_KEY", "a")]),
        )
        .unwrap();
        assert_eq!(
            (s.provider, s.base_url.as_str()),
            (Provider::Anthropic, ANTHROPIC_URL)
        );
        assert_eq!(s.api_key.as_deref(), Some("a"));
        let s = resolve(
            &LlmConfig::default(),
            &none,
            &env(&[("OPENAI_API_KEY", "o")]),
        )
        .unwrap();
        assert_eq!(
            (s.provider, s.model.as_str()),
            (Provider::OpenAi, OPENAI_MODEL)
        );
    }

    #[test]
    fn nothing_configured_and_no_ollama_says_how() {
        let e = resolve(
            &LlmConfig::default(),
            &LlmFlags::default(),
            &env(&[("OLLAMA_HOST", "127.0.0.1:9")]),
        )
        .unwrap_err();
        assert_eq!(e.kind, LlmErrorKind::Unreachable);
        assert!(e.message.contains("OPENAI_API_KEY"), "{}", e.message);
        assert!(e.message.contains("ANTHROPIC_API_KEY"), "{}", e.message);
        assert!(e.message.contains("ollama serve"), "{}", e.message);
        assert!(e.message.contains("http://127.0.0.1:9"), "{}", e.message);
    }

    #[test]
    fn ollama_hosts() {
        assert_eq!(
            ollama_host(None, Some("10.0.0.2:11434")),
            "http://10.0.0.2:11434"
        );
        assert_eq!(ollama_host(Some("http://h:1/v1/"), None), "http://h:1");
        assert_eq!(ollama_host(None, None), OLLAMA_HOST);
        assert!(Provider::parse("gemini").is_err());
    }
}
