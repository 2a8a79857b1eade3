//! Asking a server for its model's context window, where it can say:
//! Ollama's `POST /api/show` (the model's `num_ctx` parameter, else its
//! trained context length, capped; through Ollama's OpenAI endpoint,
//! Ollama's default window), llama.cpp's `GET /props` (`n_ctx`),
//! and `GET /v1/models` fields some servers add (vLLM `max_model_len`,
//! OpenRouter/LM Studio `context_length`, Groq `context_window`), plus LM
//! Studio's `GET /api/v0/models/{model}` (`loaded_context_length`). Each
//! question is one short request; a server that does not answer is simply
//! not asked again this session.

use std::time::Duration;

use serde_json::{json, Value};

use super::window::{Window, WindowSource, MIN_TOKENS};

/// How long one question may take (these are local servers, or a 404).
const ASK_TIMEOUT: Duration = Duration::from_secs(3);
/// The window aiq asks Ollama for when the model's own is larger: Ollama
/// reserves memory for the whole window, so a 128k-token model is run at
/// this size unless `context_tokens` or the model's `num_ctx` says more.
pub const OLLAMA_PLANNED: usize = 8192;
/// Ollama's window when nothing else is known.
pub const OLLAMA_DEFAULT: usize = 4096;

/// Where to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Nobody to ask (hosted APIs that do not say).
    Nothing,
    /// An Ollama server at this host (no `/v1`).
    Ollama(String),
    /// An OpenAI-compatible server at this base URL (with its `/v1`).
    OpenAiCompatible(String),
}

impl Probe {
    /// The probe for an OpenAI-compatible base URL: OpenAI itself does not
    /// say, every other server is asked.
    pub fn for_openai(base_url: &str) -> Probe {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        if host == "api.openai.com" {
            Probe::Nothing
        } else {
            Probe::OpenAiCompatible(base_url.trim_end_matches('/').to_string())
        }
    }
}

/// The client to ask with, and the headers every request to the server
/// carries (its key, if it needs one).
pub(crate) struct Asker<'a> {
    pub client: &'a reqwest::Client,
    pub headers: reqwest::header::HeaderMap,
}

/// Asks the server; `None` when it cannot say.
pub(crate) async fn ask(http: &Asker<'_>, probe: &Probe, model: &str) -> Option<Window> {
    match probe {
        Probe::Nothing => None,
        Probe::Ollama(host) => Some(ollama(http, host, model).await),
        Probe::OpenAiCompatible(base) => openai_compatible(http, base, model).await,
    }
}

async fn get(http: &Asker<'_>, url: &str) -> Option<Value> {
    let response = http
        .client
        .get(url)
        .headers(http.headers.clone())
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

fn tokens(v: &Value) -> Option<usize> {
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n >= MIN_TOKENS)
}

fn server(tokens: usize, what: &str) -> Window {
    Window {
        tokens,
        source: WindowSource::Server(what.to_string()),
    }
}

/// Ollama: the model's `num_ctx` if its Modelfile sets one; else its
/// trained context length capped at [`OLLAMA_PLANNED`]; else
/// [`OLLAMA_DEFAULT`]. aiq sends this as `options.num_ctx`, so it is the
/// window Ollama runs with.
async fn ollama(http: &Asker<'_>, host: &str, model: &str) -> Window {
    match show(http, host, model).await {
        Some(shown) => ollama_window(&shown),
        None => server(OLLAMA_DEFAULT, "Ollama's default"),
    }
}

/// Ollama's `POST /api/show` for the model, if the server is Ollama.
async fn show(http: &Asker<'_>, host: &str, model: &str) -> Option<Value> {
    let response = http
        .client
        .post(format!("{host}/api/show"))
        .headers(http.headers.clone())
        .json(&json!({"model": model, "name": model}))
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .ok()?;
    response.error_for_status().ok()?.json().await.ok()
}

/// Ollama behind its OpenAI-compatible endpoint, which cannot set
/// `num_ctx`: the model's own `num_ctx`, else Ollama's default window
/// (or the trained length when smaller), so a prompt is never cut.
pub(crate) fn ollama_openai_window(shown: &Value) -> Window {
    let w = ollama_window(shown);
    if w.source == WindowSource::Server("the model's num_ctx in Ollama".into()) {
        return w;
    }
    server(
        w.tokens.min(OLLAMA_DEFAULT),
        "Ollama's default through its OpenAI endpoint; --provider ollama lets aiq set it",
    )
}

/// The window an `/api/show` answer implies (see [`ollama`]).
pub(crate) fn ollama_window(shown: &Value) -> Window {
    let set = shown["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<usize>().ok())
                .flatten()
        })
    });
    if let Some(n) = set.filter(|&n| n >= MIN_TOKENS) {
        return server(n, "the model's num_ctx in Ollama");
    }
    let trained = shown["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| tokens(v))
    });
    match trained {
        Some(n) if n > OLLAMA_PLANNED => server(
            OLLAMA_PLANNED,
            "Ollama, planned by aiq; set context_tokens for more",
        ),
        Some(n) => server(n, "the model's context length in Ollama"),
        None => server(OLLAMA_DEFAULT, "Ollama's default"),
    }
}

/// llama.cpp's `/props`, then Ollama's `/api/show` (Ollama serves an
/// OpenAI-compatible endpoint too), then the model list, then LM Studio's
/// own API.
async fn openai_compatible(http: &Asker<'_>, base: &str, model: &str) -> Option<Window> {
    let root = base.trim_end_matches("/v1");
    if let Some(props) = get(http, &format!("{root}/props")).await {
        let n = tokens(&props["default_generation_settings"]["n_ctx"])
            .or_else(|| tokens(&props["n_ctx"]));
        if let Some(n) = n {
            return Some(server(n, "the server's /props (llama.cpp)"));
        }
    }
    if let Some(shown) = show(http, root, model).await {
        return Some(ollama_openai_window(&shown));
    }
    if let Some(list) = get(http, &format!("{base}/models")).await {
        if let Some(n) = listed_window(&list, model) {
            return Some(server(n, "the server's model list"));
        }
    }
    let lm_studio = get(http, &format!("{root}/api/v0/models/{model}")).await?;
    let n = tokens(&lm_studio["loaded_context_length"])
        .or_else(|| tokens(&lm_studio["max_context_length"]))?;
    Some(server(n, "LM Studio's model info"))
}

/// A window field of the model's entry in a `/v1/models` answer (or of the
/// only entry).
pub(crate) fn listed_window(list: &Value, model: &str) -> Option<usize> {
    let entries = list["data"].as_array()?;
    let entry = entries
        .iter()
        .find(|e| e["id"].as_str() == Some(model))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))?;
    [
        &entry["loaded_context_length"],
        &entry["max_model_len"],
        &entry["context_length"],
        &entry["context_window"],
        &entry["max_context_length"],
        &entry["top_provider"]["context_length"],
    ]
    .into_iter()
    .find_map(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_prefers_num_ctx_then_caps_the_trained_length() {
        let w = ollama_window(&json!({
            "parameters": "stop \"<|eot_id|>\"\nnum_ctx                        16384",
            "model_info": {"llama.context_length": 131072}
        }));
        assert_eq!(w.tokens, 16384);
        let w = ollama_window(&json!({"model_info": {"llama.context_length": 131072}}));
        assert_eq!(w.tokens, OLLAMA_PLANNED);
        let w = ollama_window(&json!({"model_info": {"qwen2.context_length": 2048}}));
        assert_eq!(w.tokens, 2048);
        assert_eq!(ollama_window(&json!({})).tokens, OLLAMA_DEFAULT);
        // Through the OpenAI endpoint aiq cannot set num_ctx: Ollama's own.
        let trained = json!({"model_info": {"llama.context_length": 131072}});
        assert_eq!(ollama_openai_window(&trained).tokens, OLLAMA_DEFAULT);
        let set = json!({"parameters": "num_ctx 16384"});
        assert_eq!(ollama_openai_window(&set).tokens, 16384);
    }

    #[test]
    fn model_lists_in_their_dialects() {
        let vllm = json!({"data": [{"id": "m", "max_model_len": 4096}]});
        assert_eq!(listed_window(&vllm, "m"), Some(4096));
        let openrouter = json!({"data": [
            {"id": "a", "context_length": 8000},
            {"id": "m", "context_length": 32000, "top_provider": {"context_length": 16000}}
        ]});
        assert_eq!(listed_window(&openrouter, "m"), Some(32000));
        let groq = json!({"data": [{"id": "m", "context_window": 131072}]});
        assert_eq!(listed_window(&groq, "m"), Some(131072));
        let plain = json!({"data": [{"id": "x", "object": "model"}]});
        assert_eq!(listed_window(&plain, "m"), None);
    }

    #[test]
    fn openai_itself_is_not_asked() {
        assert_eq!(
            Probe::for_openai("https://api.openai.com/v1"),
            Probe::Nothing
        );
        assert_eq!(
            Probe::for_openai("http://127.0.0.1:8080/v1/"),
            Probe::OpenAiCompatible("http://127.0.0.1:8080/v1".into())
        );
    }
}
