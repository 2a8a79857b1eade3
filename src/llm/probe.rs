//! Asking a server for its model's context window, where it can say:
//! Ollama's `POST /api/show` (the model's `num_ctx` parameter, else its
//! trained context length, capped; through Ollama's OpenAI endpoint,
//! Ollama's default window), llama.cpp's `GET /props` (`n_ctx`),
//! and `GET /v1/models` fields some servers add (vLLM `max_model_len`,
//! OpenRouter/LM Studio `context_length`, Groq `context_window`), plus LM
//! Studio's `GET /api/v0/models/{model}` (`loaded_context_length`). Each
//! question is one short request; a server that does not answer is simply
//! not asked again this session. What a server away from this machine said
//! (or that it cannot say) is kept for a week (`super::window`): those
//! questions are round trips over the internet before every first request.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::window::{Window, WindowSource, MIN_TOKENS};

/// How long one question may take (a local server, or a round trip to a
/// hosted one, whose answers are then kept for a week).
const ASK_TIMEOUT: Duration = Duration::from_secs(3);
/// The window aiq asks Ollama for when the model's own is larger: Ollama
/// reserves memory for the whole window, so a 128k-token model is run at
/// this size unless `context_tokens` or the model's `num_ctx` says more.
pub const OLLAMA_PLANNED: usize = 8192;
/// Ollama's window when nothing else is known.
pub const OLLAMA_DEFAULT: usize = 4096;

/// Where a window came from when llama.cpp's server said it.
pub(crate) const LLAMA_CPP_PROPS: &str = "the server's /props (llama.cpp)";

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

/// What asking came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    /// The window the server said, if it did.
    pub window: Option<Window>,
    /// Every question got the server's own answer (a window, or "not
    /// here"), so the outcome can be kept; false when a question failed
    /// on the way (unreachable, timed out, the key refused, the server's
    /// own error) and the server should be asked again next time.
    pub settled: bool,
}

impl Asked {
    fn found(window: Window) -> Asked {
        Asked {
            window: Some(window),
            settled: true,
        }
    }
}

impl Probe {
    /// Whether the server is away from this machine (see [`is_local`]).
    /// Its answers are kept; a local server is asked every time, as it may
    /// have been restarted with another window.
    pub fn is_remote(&self) -> bool {
        match self {
            Probe::Nothing => false,
            Probe::Ollama(url) | Probe::OpenAiCompatible(url) => !is_local(url),
        }
    }

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

/// True for a URL whose host is this machine or on its local network:
/// loopback, private, link-local and shared (carrier-grade NAT, Tailscale)
/// addresses, `localhost`, names under `.local`, `.lan`, `.internal`,
/// `.home.arpa`, and names without a dot.
pub(crate) fn is_local(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return true;
    };
    match host.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => is_local_v4(ip),
        Ok(IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || ip.to_ipv4_mapped().is_some_and(is_local_v4)
        }
        Err(_) => {
            let host = host.trim_end_matches('.');
            !host.contains('.')
                || [".localhost", ".local", ".lan", ".internal", ".home.arpa"]
                    .iter()
                    .any(|suffix| host.ends_with(suffix))
        }
    }
}

fn is_local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || (a == 100 && (64..128).contains(&b))
}

/// Asks the server.
pub(crate) async fn ask(http: &Asker<'_>, probe: &Probe, model: &str) -> Asked {
    match probe {
        Probe::Nothing => Asked {
            window: None,
            settled: true,
        },
        Probe::Ollama(host) => ollama(http, host, model).await,
        Probe::OpenAiCompatible(base) => openai_compatible(http, base, model).await,
    }
}

/// One question's answer: `Ok(None)` when the server says it has no such
/// thing (404, 405, 410, 501 — a plain HTTP server's answer to a method it
/// lacks — or a body that is not JSON); `Err` for anything else (no
/// answer, a body cut short, a refused key, the server's own error): no
/// answer of the server's own to keep.
type Answer = Result<Option<Value>, ()>;

/// Sends one question with the server's headers, within [`ASK_TIMEOUT`].
async fn send(http: &Asker<'_>, request: reqwest::RequestBuilder) -> Answer {
    let response = request
        .headers(http.headers.clone())
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .map_err(|_| ())?;
    let status = response.status();
    if status.is_success() {
        let body = response.bytes().await.map_err(|_| ())?;
        return Ok(serde_json::from_slice(&body).ok());
    }
    let not_here = [
        StatusCode::NOT_FOUND,
        StatusCode::METHOD_NOT_ALLOWED,
        StatusCode::GONE,
        StatusCode::NOT_IMPLEMENTED,
    ];
    if not_here.contains(&status) {
        Ok(None)
    } else {
        Err(())
    }
}

async fn get(http: &Asker<'_>, url: &str) -> Answer {
    send(http, http.client.get(url)).await
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
async fn ollama(http: &Asker<'_>, host: &str, model: &str) -> Asked {
    match show(http, host, model).await {
        Ok(Some(shown)) => Asked::found(ollama_window(&shown)),
        // Not pulled yet, or not reachable: Ollama's default for now, asked
        // again next time.
        _ => Asked {
            window: Some(server(OLLAMA_DEFAULT, "Ollama's default")),
            settled: false,
        },
    }
}

/// Ollama's `POST /api/show` for the model, if the server is Ollama.
async fn show(http: &Asker<'_>, host: &str, model: &str) -> Answer {
    let request = http
        .client
        .post(format!("{host}/api/show"))
        .json(&json!({"model": model, "name": model}));
    send(http, request).await
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
async fn openai_compatible(http: &Asker<'_>, base: &str, model: &str) -> Asked {
    let root = base.trim_end_matches("/v1");
    let mut settled = true;
    let mut kept = |a: Answer| {
        settled &= a.is_ok();
        a.ok().flatten()
    };
    if let Some(props) = kept(get(http, &format!("{root}/props")).await) {
        let n = tokens(&props["default_generation_settings"]["n_ctx"])
            .or_else(|| tokens(&props["n_ctx"]));
        if let Some(n) = n {
            return Asked::found(server(n, LLAMA_CPP_PROPS));
        }
    }
    if let Some(shown) = kept(show(http, root, model).await) {
        return Asked::found(ollama_openai_window(&shown));
    }
    if let Some(list) = kept(get(http, &format!("{base}/models")).await) {
        if let Some(n) = listed_window(&list, model) {
            return Asked::found(server(n, "the server's model list"));
        }
    }
    let n = kept(get(http, &format!("{root}/api/v0/models/{model}")).await).and_then(|info| {
        tokens(&info["loaded_context_length"]).or_else(|| tokens(&info["max_context_length"]))
    });
    match n {
        Some(n) => Asked::found(server(n, "LM Studio's model info")),
        None => Asked {
            window: None,
            settled,
        },
    }
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
    fn servers_on_this_machine_or_its_network_are_local() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://[::1]:8080/v1",
            "http://10.0.0.5/v1",
            "http://172.20.1.1:8000/v1",
            "http://192.168.1.20:1234/v1",
            "http://169.254.3.4/v1",
            "http://100.101.102.103:8080/v1", // Tailscale
            "http://[fd12:3456::1]/v1",
            "http://[fe80::1]/v1",
            "http://[::ffff:192.168.0.1]/v1",
            "http://ollama:11434",
            "http://gpu-box.local:8080/v1",
            "http://llm.lan/v1",
            "http://vllm.svc.internal/v1",
            "http://box.home.arpa/v1",
            "http://api.localhost/v1",
            "not a url",
        ] {
            assert!(is_local(url), "{url}");
        }
        for url in [
            "https://openrouter.ai/api/v1",
            "https://api.groq.com/openai/v1",
            "https://api.together.xyz/v1",
            "http://8.8.8.8/v1",
            "http://100.128.0.1/v1",
            "http://[2001:db8::1]/v1",
            "https://localhost.example.com/v1",
        ] {
            assert!(!is_local(url), "{url}");
        }
        assert!(Probe::for_openai("https://openrouter.ai/api/v1").is_remote());
        assert!(!Probe::for_openai("http://127.0.0.1:8080/v1").is_remote());
        assert!(!Probe::Nothing.is_remote());
    }

    /// A server answering `status` and `body` on each of `routes`, 404
    /// elsewhere; its OpenAI-compatible base URL.
    async fn serve(routes: Vec<(&'static str, u16, Value)>) -> String {
        let mut app = axum::Router::new();
        for (path, status, body) in routes {
            let status = axum::http::StatusCode::from_u16(status).unwrap();
            app = app.route(
                path,
                axum::routing::any(move || async move { (status, axum::Json(body)) }),
            );
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/v1")
    }

    async fn asked(base: &str) -> Asked {
        let client = reqwest::Client::new();
        let http = Asker {
            client: &client,
            headers: reqwest::header::HeaderMap::new(),
        };
        ask(&http, &Probe::OpenAiCompatible(base.into()), "m").await
    }

    #[tokio::test]
    async fn only_the_servers_own_answers_are_settled() {
        // Every question answered "not here": settled, no window.
        let base = serve(vec![("/v1/models", 200, json!({"data": [{"id": "m"}]}))]).await;
        let a = asked(&base).await;
        assert_eq!((a.window, a.settled), (None, true));
        let base = serve(vec![
            ("/props", 501, json!({})),
            ("/v1/models", 405, json!({})),
        ])
        .await;
        let a = asked(&base).await;
        assert_eq!((a.window, a.settled), (None, true));
        // Found: settled, whatever failed before it.
        let base = serve(vec![
            ("/props", 500, json!({})),
            (
                "/v1/models",
                200,
                json!({"data": [{"id": "m", "context_length": 32000}]}),
            ),
        ])
        .await;
        let a = asked(&base).await;
        assert_eq!((a.window.map(|w| w.tokens), a.settled), (Some(32000), true));
        // The server's error, a refused key, too many requests, a bad
        // request: ask again.
        for status in [500, 401, 403, 429, 400, 402] {
            let base = serve(vec![("/v1/models", status, json!({}))]).await;
            let a = asked(&base).await;
            assert_eq!((a.window, a.settled), (None, false), "{status}");
        }
        // Nobody there.
        let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = gone.local_addr().unwrap();
        drop(gone);
        let a = asked(&format!("http://{addr}/v1")).await;
        assert_eq!((a.window, a.settled), (None, false));
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
