//! Against a real llama.cpp server (llama-cpp-python with SmolLM2-135M,
//! `--n_ctx 4096`; see `common::llama`): protocol behaviour only, never what
//! the tiny model answers — streaming and whole-body turns complete, a
//! two-turn conversation replays its history without an error, a question
//! over 2,000 tables is fitted into the window (the server's error, empty
//! stream or not, teaches aiq the window), `aiq doctor` reports the
//! model and its window, the follow-ups of a chat reuse the prompt the
//! server evaluated for the question before (by the server's own
//! accounting), and a long chat whose history outgrows the window keeps
//! its system message, byte for byte, as the history gives way.

mod common;

use std::process::Output;

use common::llama::{llama, llama_verbose, llama_verbose_other, LlamaServer, MODEL, N_CTX};
use common::{add_audit_tables, stderr_of, stdout_of, Sandbox};

const QUESTION: &str = "how many customers per country?";

/// `aiq` talking to the llama.cpp server.
fn aiq(sb: &Sandbox, server: &LlamaServer) -> std::process::Command {
    let mut cmd = sb.std_aiq();
    cmd.env("AIQ_PROVIDER", "openai")
        .env("AIQ_MODEL", MODEL)
        .env("AIQ_BASE_URL", server.base());
    cmd
}

/// The turn completed as far as the model is concerned: whatever the tiny
/// model wrote, no model error (exit 4) and no crash.
fn assert_turn_completed(out: &Output, what: &str) {
    let err = stderr_of(out);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1 | 3 | 5)),
        "{what}: exit {code:?}\n{err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn streaming_and_whole_turns_complete() {
    let Some(server) = llama() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    for stream in [true, false] {
        let mut cmd = aiq(&sb, &server);
        // The window as a user who knows it sets it (what aiq finds out
        // itself is the next test's); it also caps the tiny model's reply.
        cmd.arg(&db)
            .args(["-q", QUESTION, "--sql-only", "--context-tokens", "4096"]);
        if !stream {
            cmd.arg("--no-stream");
        }
        let out = cmd.output().unwrap();
        assert_turn_completed(&out, if stream { "streaming" } else { "whole" });
        // A request that fits goes through at once.
        assert!(!stderr_of(&out).contains("retrying"), "{}", stderr_of(&out));
    }
}

#[test]
fn a_two_turn_conversation_replays_its_history() {
    let Some(server) = llama() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let session = sb.path().join("two.json");
    let canonical = db.canonicalize().unwrap().display().to_string();
    std::fs::write(
        &session,
        serde_json::json!({
            "version": 1,
            "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": chrono::Utc::now().to_rfc3339(),
                         "data_source": canonical, "database_type": "sqlite"},
            "messages": [],
        })
        .to_string(),
    )
    .unwrap();
    for (i, question) in [QUESTION, "and only for Germany?"].iter().enumerate() {
        let out = aiq(&sb, &server)
            .arg(&db)
            .args([
                "-s",
                session.to_str().unwrap(),
                "-q",
                question,
                "--sql-only",
                "-vv",
            ])
            .output()
            .unwrap();
        assert_turn_completed(&out, question);
        if i == 1 {
            // The second request carries the first question.
            let err = stderr_of(&out);
            let request = err
                .lines()
                .find(|l| l.contains("openai request"))
                .unwrap_or_default();
            assert!(request.contains(QUESTION), "{err}");
        }
    }
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap();
    assert_eq!(saved["messages"].as_array().map(Vec::len), Some(4));
}

#[test]
fn two_thousand_tables_fit_a_4096_token_window_and_doctor_tells_it() {
    let Some(server) = llama() else { return };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    add_audit_tables(&db);
    for stream in [true, false] {
        // A fresh home each time: nothing learned yet.
        let _ = std::fs::remove_dir_all(sb.home().join("cache"));
        let mut cmd = aiq(&sb, &server);
        cmd.arg(&db).args(["-q", QUESTION, "--sql-only"]);
        if !stream {
            cmd.arg("--no-stream");
        }
        let out = cmd.output().unwrap();
        let what = if stream { "streaming" } else { "whole" };
        assert_turn_completed(&out, what);
        let err = stderr_of(&out);
        // The server refused the first request (in an empty stream, or in
        // words); aiq learned the window and sent one that fits.
        assert!(
            err.contains("the model's window is") && err.contains("sending a smaller request"),
            "{what}: {err}"
        );
        assert!(
            err.contains("aiq: to fit the model's") && err.contains("other tables not described"),
            "{what}: {err}"
        );
        if stream {
            assert!(err.contains("asking again without streaming"), "{err}");
        }
    }
    // The next run knows the window at once.
    let out = aiq(&sb, &server)
        .arg(&db)
        .args(["-q", QUESTION, "--sql-only"])
        .output()
        .unwrap();
    assert_turn_completed(&out, "again");
    assert!(!stderr_of(&out).contains("sending a smaller request"));
    let out = aiq(&sb, &server).arg("doctor").arg(&db).output().unwrap();
    let text = stdout_of(&out);
    let line = text
        .lines()
        .find(|l| l.contains(" model "))
        .unwrap_or_default()
        .to_string();
    assert!(line.starts_with("ok "), "{text}{}", stderr_of(&out));
    assert!(line.contains(&format!("model {MODEL} is listed")), "{line}");
    assert!(line.contains("context window "), "{line}");
    assert!(
        line.contains("tokens (learned from a context-length error)"),
        "{line}"
    );
}

/// What the server evaluated for one request, by its own log: the prompt
/// tokens it evaluated, those it reused from the request before, and the
/// time the evaluation took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Evaluated {
    tokens: usize,
    reused: usize,
    ms: f64,
}

/// The requests in llama-cpp-python's verbose output, in order: each
/// starts with its `POST /v1/chat/completions` line (written as the reply
/// starts), then `Llama.generate: N prefix-match hit, remaining M prompt
/// tokens to eval` when it reused a prefix, then the `llama_perf_context_print`
/// lines once it is done (`None` until then). Evaluated tokens are M with
/// a prefix hit, else the prompt tokens of `prompt eval time`; the time is
/// the total less the generation's.
fn evaluated(log: &str) -> Vec<Option<Evaluated>> {
    let number = |text: &str| -> f64 {
        text.split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0)
    };
    let mut out: Vec<Option<Evaluated>> = Vec::new();
    let mut current = Evaluated::default();
    let mut eval_ms = 0.0;
    for line in log.lines() {
        if line.contains("POST /v1/chat/completions") {
            out.push(None);
            current = Evaluated::default();
        } else if let Some((head, tail)) = line.split_once(" prefix-match hit, remaining ") {
            current.reused = number(head.rsplit(':').next().unwrap_or_default()) as usize;
            current.tokens = number(tail) as usize;
        } else if let Some((_, tail)) = line.split_once("prompt eval time =") {
            if current.reused == 0 {
                current.tokens = number(tail.split('/').nth(1).unwrap_or_default()) as usize;
            }
        } else if let Some((_, tail)) = line.split_once(" eval time =") {
            eval_ms = number(tail);
        } else if let Some((_, tail)) = line.split_once("total time =") {
            current.ms = number(tail) - eval_ms;
            if let Some(last) = out.last_mut() {
                *last = Some(current);
            }
        }
    }
    out
}

/// A conversation thread on the SQLite file `db` that asks `server` and
/// never runs what the model writes: only the server's accounting counts.
fn sql_only_thread(
    sb: &Sandbox,
    server: &LlamaServer,
    db: std::path::PathBuf,
) -> aiq::agent::Thread {
    let settings = aiq::llm::Settings {
        provider: aiq::llm::Provider::OpenAi,
        model: MODEL.into(),
        base_url: server.base(),
        api_key: None,
        timeout: std::time::Duration::from_secs(300),
        max_retries: 0,
        stream: true,
        context_tokens: Some(N_CTX),
        home: Some(sb.home()),
    };
    let model = aiq::llm::connect(&settings).unwrap();
    let src = aiq::source::open(
        &aiq::source::SourceSpec::Sqlite(db),
        aiq::source::OpenOptions::default(),
    )
    .unwrap();
    let catalog = src.introspect().unwrap();
    let options = aiq::agent::ThreadOptions {
        execute: false,
        ..Default::default()
    };
    aiq::agent::Thread::new(model, src, catalog, options)
}

/// The server's figures for request `n` of its log (counted from 0), once
/// it has written them (just after the reply ends), waiting `within`.
fn figures(log: &dyn Fn() -> String, n: usize, within: std::time::Duration) -> Option<Evaluated> {
    let until = std::time::Instant::now() + within;
    loop {
        if let Some(found) = evaluated(&log()).get(n).copied().flatten() {
            return Some(found);
        }
        if std::time::Instant::now() >= until {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[derive(Default)]
struct Quiet;

impl aiq::agent::EventSink for Quiet {
    fn event(&mut self, _: aiq::agent::Event) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_servers_log_is_read_request_by_request() {
    let log = "INFO:     127.0.0.1:1 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK
llama_perf_context_print: prompt eval time =       0.26 ms /   387 tokens (    0.00 ms per token)
llama_perf_context_print:        eval time =   51522.58 ms /   181 runs   (  284.66 ms per token)
llama_perf_context_print:       total time =   63698.06 ms /   568 tokens
INFO:     127.0.0.1:1 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK
Llama.generate: 375 prefix-match hit, remaining 361 prompt tokens to eval
llama_perf_context_print: prompt eval time =   30350.34 ms /   361 tokens (   84.07 ms per token)
llama_perf_context_print:        eval time =  316870.97 ms /   353 runs   (  897.65 ms per token)
llama_perf_context_print:       total time =  352179.71 ms /   714 tokens
INFO:     127.0.0.1:1 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK
";
    let e = evaluated(log);
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].map(|e| (e.tokens, e.reused)), Some((387, 0)));
    assert_eq!(e[1].map(|e| (e.tokens, e.reused)), Some((361, 375)));
    assert!((e[1].unwrap().ms - 35308.74).abs() < 0.01);
    assert_eq!(e[2], None);
}

/// A three-question chat (one conversation, as in `aiq` chat): each
/// follow-up's first request reuses the rules and the schema the server
/// evaluated for the first question, and evaluates no more than what the
/// conversation added since the request before it — the previous question
/// and answer as the model sees them, and the new question — counted by
/// the server's own tokenizer. That holds however long the model's answers
/// are (a tiny model's answer differs with the date in the prompt, and the
/// server may split an answer it generated into other tokens when it reads
/// it back). Printed figures go to docs/performance.md.
#[test]
fn follow_ups_evaluate_only_what_they_add() {
    let Some(server) = llama_verbose() else {
        return;
    };
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let mut thread = sql_only_thread(&sb, &server, db);
    let log = || std::fs::read_to_string(&server.log).unwrap_or_default();
    let mut firsts = Vec::new();
    for question in QUESTIONS {
        let seen = evaluated(&log()).len();
        let started = std::time::Instant::now();
        // Whatever the tiny model answers: only the server's accounting
        // counts here.
        let _ = thread.ask(question, &mut Quiet);
        let took = started.elapsed();
        // The server writes its figures just after the reply ends.
        let first = figures(&log, seen, std::time::Duration::from_secs(30))
            .expect("the server's figures for the turn's first request");
        eprintln!(
            "{question:?}: {} prompt tokens evaluated in {:.0} ms, {} reused; the turn took {:.1} s",
            first.tokens,
            first.ms,
            first.reused,
            took.as_secs_f64()
        );
        firsts.push(first);
    }
    let first = firsts[0];
    assert!(first.tokens > 300 && first.reused == 0, "{firsts:?}");
    // Each turn left its question and its answer in the history.
    let history = thread.history();
    assert_eq!(history.len(), 2 * QUESTIONS.len(), "{firsts:?}");
    let guard = thread.guard();
    let first_question = server.tokens(QUESTIONS[0]);
    for (i, f) in firsts.iter().enumerate().skip(1) {
        // The rules and the schema: the first request but its question
        // and the template's markers around it.
        assert!(
            f.reused + first_question + TEMPLATE >= first.tokens,
            "turn {}: only {} of the first request's {} tokens reused ({firsts:?})",
            i + 1,
            f.reused,
            first.tokens
        );
        let said = &history[2 * (i - 1)..2 * i];
        let added = said
            .iter()
            .map(|m| server.tokens(&m.for_model(guard)))
            .sum::<usize>()
            + server.tokens(QUESTIONS[i]);
        eprintln!(
            "turn {}: {} tokens evaluated for {added} tokens added since the request before",
            i + 1,
            f.tokens
        );
        assert!(
            f.tokens <= added + TEMPLATE,
            "turn {}: {} tokens evaluated, {added} added since the request before ({firsts:?})",
            i + 1,
            f.tokens
        );
    }
}

/// The chat template's markers around the messages a follow-up adds
/// (`<|im_start|>user\n` … `<|im_end|>\n` for each, and the assistant's
/// opening), with room for a few tokens read back differently where an
/// answer meets them.
const TEMPLATE: usize = 32;

/// The three questions of the chat.
const QUESTIONS: [&str; 3] = [
    QUESTION,
    "and only for Germany?",
    "which of them ordered the most?",
];

/// A long chat in the 4,096-token window: once the history no longer
/// fits, its oldest turns give way and the system message (rules, notes,
/// schema) stays byte for byte, so the server reuses it, by its own
/// accounting, on every turn — never laying the whole request out anew.
/// The answers are made long (each asks for a long explanation), so the
/// history outgrows its room within the chat.
#[test]
fn a_long_chat_keeps_the_system_message_when_the_history_gives_way() {
    let Some(server) = llama_verbose_other() else {
        return;
    };
    // The demo shop with its notes: a system message of some 1,600
    // tokens, so the history's room is small.
    let sb = Sandbox::new();
    let demo = sb.aiq().arg("demo").output().unwrap();
    assert!(demo.status.success(), "{}", stderr_of(&demo));
    let db = sb.home().join("demo").join("shop.db");
    let mut thread = sql_only_thread(&sb, &server, db);
    thread.set_notes(aiq::notes::Notes::load(
        &sb.home(),
        &aiq::notes::key("demo"),
    ));
    let log = || std::fs::read_to_string(&server.log).unwrap_or_default();
    let mut systems = Vec::new();
    let mut reuse = Vec::new();
    for (i, question) in LONG_QUESTIONS.iter().enumerate() {
        let seen = evaluated(&log()).len();
        let asked = thread.ask(question, &mut Quiet);
        let first = figures(&log, seen, std::time::Duration::from_secs(60)).unwrap_or_else(|| {
            let log = log();
            panic!(
                "turn {}: no figures for the turn's first request ({asked:?}); the server's log ends:\n{}",
                i + 1,
                &log[log.len().saturating_sub(3000)..]
            )
        });
        let history: usize = thread.history().iter().map(|m| m.content.len()).sum();
        eprintln!(
            "turn {}: {} prompt tokens evaluated, {} reused; history {} bytes in {} messages",
            i + 1,
            first.tokens,
            first.reused,
            history,
            thread.history().len()
        );
        systems.push(thread.prefix_system().unwrap_or_default().to_string());
        reuse.push(first);
    }
    let system_tokens = server.tokens(&systems[0]);
    for (i, (system, f)) in systems.iter().zip(&reuse).enumerate().skip(1) {
        assert_eq!(
            system,
            &systems[0],
            "turn {}: the system message was laid out anew",
            i + 1
        );
        assert!(
            f.reused + TEMPLATE >= system_tokens,
            "turn {}: {} tokens reused, the system message is {system_tokens} ({reuse:?})",
            i + 1,
            f.reused
        );
    }
}

/// Questions whose answers run long, so the history outgrows its room.
const LONG_QUESTIONS: [&str; 5] = [
    "Explain in detail, step by step, how to count customers per country, then give the SQL.",
    "Explain in detail how to find the total revenue per customer, with every step, then the SQL.",
    "Describe at length how orders relate to customers and how to list each customer's orders, then the SQL.",
    "Explain thoroughly how to find the customers who never ordered, then give the SQL.",
    "Explain in detail how to find the average order total per country, then give the SQL.",
];
