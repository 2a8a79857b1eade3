//! Local model servers, scripted: aiq finds the context window where each
//! server says it (Ollama `/api/show`, llama.cpp `/props`, vLLM's model
//! list), from `--context-tokens` / `[llm] context_tokens`, or from a
//! context-length error (remembered for the next run), and fits a
//! 2,000-table request into it; Ollama gets the window as `num_ctx`; an
//! empty or error-only event stream is asked again without streaming.

mod common;

use common::llm::{ModelServer, Recorded, Reply};
use common::{add_audit_tables, stderr_of, stdout_of, Sandbox};
use serde_json::json;

const QUESTION: &str = "how many customers per country?";
const PER_COUNTRY: &str =
    "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country";
const PER_COUNTRY_CSV: &str = "country,n\nDE,2\nFR,1\nUS,2\n";

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// The shop with 2,000 audit tables beside it.
fn wide(sb: &Sandbox) -> std::path::PathBuf {
    let db = sb.shop_sqlite();
    add_audit_tables(&db);
    db
}

/// `aiq DB -q QUESTION -f csv` against the server, streaming: the output
/// and its stderr.
fn ask(sb: &Sandbox, server: &ModelServer, db: &std::path::Path) -> (std::process::Output, String) {
    let out = sb
        .aiq_with(server, "openai")
        .arg(db)
        .args(["-q", QUESTION, "-f", "csv"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    (out, err)
}

/// The bytes of the messages' texts (what the window must hold besides
/// the tool definitions).
fn text_bytes(r: &Recorded) -> usize {
    r.messages().iter().map(|(_, c)| c.len()).sum()
}

/// Asserts the request fits a window of `window` tokens at 2 bytes a
/// token with the reply's reserve kept free, and still describes the
/// table the question needs.
fn assert_fits(r: &Recorded, window: usize) {
    let reserve = (window / 8).clamp(256, 2048);
    let room = (window - reserve) * 2;
    assert!(
        r.raw.len() <= room + 1_500,
        "request of {} bytes for {window} tokens",
        r.raw.len()
    );
    assert!(text_bytes(r) <= room, "{} text bytes", text_bytes(r));
    assert!(r.messages()[0].1.contains("table customers"));
}

#[test]
fn ollama_runs_with_a_window_that_fits_the_request() {
    for (show, window) in [
        // The model's num_ctx wins; else its trained length, capped.
        (
            json!({"parameters": "num_ctx 4096", "model_info": {"llama.context_length": 131072}}),
            4096,
        ),
        (
            json!({"model_info": {"llama.context_length": 131072}}),
            8192,
        ),
    ] {
        for stream in [true, false] {
            let sb = Sandbox::new();
            let db = wide(&sb);
            let server = ModelServer::start(vec![fenced(PER_COUNTRY)]);
            server.set_show(show.clone());
            let mut cmd = sb.aiq();
            cmd.arg(&db)
                .args(["-q", QUESTION, "-f", "csv"])
                .env("OLLAMA_HOST", &server.url);
            if !stream {
                cmd.arg("--no-stream");
            }
            let out = cmd.output().unwrap();
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(0), "{err}");
            assert_eq!(stdout_of(&out), PER_COUNTRY_CSV);
            let chat = &server.chats()[0];
            assert_eq!(chat.path, "/api/chat");
            assert_eq!(chat.body["stream"], stream);
            assert_eq!(chat.body["options"]["num_ctx"], window);
            assert_eq!(
                chat.body["options"]["num_predict"],
                (window / 8).clamp(256, 2048)
            );
            assert_fits(chat, window);
            let shown = window_text(window);
            assert!(
                err.contains(&format!("aiq: to fit the model's {shown}-token window: ")),
                "{err}"
            );
            assert!(err.contains("other tables not described"), "{err}");
        }
    }
}

fn window_text(n: usize) -> String {
    let s = n.to_string();
    format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..])
}

#[test]
fn llama_cpp_vllm_and_ollama_behind_openai_say_their_window() {
    // llama.cpp: /props; vLLM: max_model_len in the model list; Ollama
    // behind its OpenAI endpoint: its default window.
    for (props, listed, show, window) in [
        (
            Some(json!({"default_generation_settings": {"n_ctx": 4096}})),
            None,
            None,
            4096,
        ),
        (None, Some(json!({"max_model_len": 8192})), None, 8192),
        (
            None,
            None,
            Some(json!({"model_info": {"llama.context_length": 131072}})),
            4096,
        ),
    ] {
        let sb = Sandbox::new();
        let db = wide(&sb);
        let server = ModelServer::start(vec![fenced(PER_COUNTRY)]);
        if let Some(p) = props {
            server.set_props(p);
        }
        if let Some(l) = listed {
            server.set_listed(l);
        }
        if let Some(s) = show {
            server.set_show(s);
        }
        sb.aiq_with(&server, "openai")
            .arg(&db)
            .args(["-q", QUESTION, "-f", "csv"])
            .assert()
            .success()
            .stdout(PER_COUNTRY_CSV);
        let chat = &server.chats()[0];
        assert_fits(chat, window);
        assert_eq!(chat.body["max_tokens"], (window / 8).clamp(256, 2048));
        // Asked with the key, as a server that needs one wants.
        let asked = server.requests();
        let props = asked.iter().find(|r| r.path == "/props").unwrap();
        assert_eq!(
            props.header("authorization"),
            Some(format!("Bearer {}", common::SECRET_KEY).as_str())
        );
        // aiq doctor says the same.
        let out = sb
            .aiq_with(&server, "openai")
            .args(["doctor"])
            .output()
            .unwrap();
        let text = stdout_of(&out);
        let line = text.lines().find(|l| l.contains(" model ")).unwrap_or("");
        assert!(
            line.contains(&format!(
                "context window {} tokens (from ",
                window_text(window)
            )),
            "{text}"
        );
    }
}

#[test]
fn the_configured_window_wins_and_nothing_is_asked() {
    let sb = Sandbox::new();
    let db = wide(&sb);
    let server = ModelServer::start(vec![fenced(PER_COUNTRY), fenced(PER_COUNTRY)]);
    server.set_props(json!({"default_generation_settings": {"n_ctx": 65536}}));
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", QUESTION, "-f", "csv", "--context-tokens", "4096"])
        .assert()
        .success()
        .stdout(PER_COUNTRY_CSV);
    sb.write_config("[llm]\ncontext_tokens = 4096\n");
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", QUESTION, "-f", "csv"])
        .assert()
        .success();
    let chats = server.chats();
    for chat in &chats {
        assert_fits(chat, 4096);
    }
    assert!(
        !server.requests().iter().any(|r| r.path == "/props"),
        "a configured window is not asked for"
    );
    sb.aiq()
        .args(["-q", "x", "--context-tokens", "12"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("512 or more"));
}

/// The wordings of the servers users run locally, as HTTP 400 bodies.
const WORDINGS: &[(&str, &str)] = &[
    (
        "llama-cpp-python",
        r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 20363 tokens (20363 in the messages, None in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    ),
    (
        "llama.cpp",
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":20363,"n_ctx":4096}}"#,
    ),
    (
        "vLLM",
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 20363 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}"#,
    ),
    (
        "LiteLLM",
        r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 4096 tokens. However, your messages resulted in 20363 tokens.","type":null,"param":null,"code":"400"}}"#,
    ),
];

#[test]
fn a_context_error_teaches_the_window_for_this_run_and_the_next() {
    for (who, body) in WORDINGS {
        let sb = Sandbox::new();
        let db = wide(&sb);
        let server = ModelServer::start(vec![
            Reply::Status(400, body.to_string(), None),
            fenced(PER_COUNTRY),
            fenced(PER_COUNTRY),
        ]);
        let out = sb
            .aiq_with(&server, "openai")
            .arg(&db)
            .args(["-q", QUESTION, "-f", "csv", "--no-stream"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{who}: {err}");
        assert_eq!(stdout_of(&out), PER_COUNTRY_CSV, "{who}");
        assert!(
            err.contains("the model's window is 4,096 tokens: sending a smaller request"),
            "{who}: {err}"
        );
        assert!(
            err.contains("aiq: to fit the model's 4,096-token window"),
            "{who}: {err}"
        );
        let chats = server.chats();
        assert_eq!(chats.len(), 2, "{who}");
        assert!(chats[0].raw.len() > 40_000, "{who}: the first was large");
        assert_fits(&chats[1], 4096);
        // The next run starts with what was learned.
        sb.aiq_with(&server, "openai")
            .arg(&db)
            .args(["-q", QUESTION, "-f", "csv", "--no-stream"])
            .assert()
            .success();
        let chats = server.chats();
        assert_eq!(chats.len(), 3, "{who}: no failed request the second time");
        assert_fits(&chats[2], 4096);
    }
}

#[test]
fn an_empty_stream_is_asked_again_without_streaming() {
    let sb = Sandbox::new();
    let db = wide(&sb);
    let (_, llama_cpp_python) = WORDINGS[0];
    let server = ModelServer::start(vec![
        // The server's answer to a prompt that does not fit: 200 and an
        // empty stream (the error only in its log)…
        Reply::EmptyStream,
        // …and the error in words when asked without streaming.
        Reply::Status(400, llama_cpp_python.to_string(), None),
        fenced(PER_COUNTRY),
    ]);
    let (out, err) = ask(&sb, &server, &db);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout_of(&out), PER_COUNTRY_CSV);
    let chats = server.chats();
    let streamed: Vec<bool> = chats
        .iter()
        .map(|c| c.body["stream"].as_bool().unwrap())
        .collect();
    assert_eq!(streamed, [true, false, true]);
    assert!(
        err.contains("the reply stream ended before the answer was complete (it was empty); asking again without streaming"),
        "{err}"
    );
    assert!(
        err.contains("maximum context length is 4096 tokens"),
        "the server's own words: {err}"
    );
    assert_fits(&chats[2], 4096);
}

#[test]
fn an_error_only_stream_is_reported_in_the_servers_words() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::StreamError("the model crashed".into()),
        Reply::Status(
            400,
            r#"{"error":{"message":"model failed to load: out of memory"}}"#.into(),
            None,
        ),
    ]);
    let (out, err) = ask(&sb, &server, &db);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("openai: the model crashed; asking again without streaming"),
        "{err}"
    );
    assert!(err.contains("model failed to load: out of memory"), "{err}");
    // A stream error that is a context error needs no second asking.
    let server = ModelServer::start(vec![
        Reply::StreamError(
            "This model's maximum context length is 4096 tokens. However, you requested 20363 tokens".into(),
        ),
        fenced(PER_COUNTRY),
    ]);
    let sb = Sandbox::new();
    let db = wide(&sb);
    sb.aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", QUESTION, "-f", "csv"])
        .assert()
        .success()
        .stdout(PER_COUNTRY_CSV);
    let chats = server.chats();
    assert_eq!(chats.len(), 2);
    assert_fits(&chats[1], 4096);
}
