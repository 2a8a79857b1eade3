//! Follow-ups that reuse the model's cache, against the scripted model
//! server over HTTP: in a chat on a wide warehouse (the schema-linking
//! benchmark's 409 tables and audit tables, 500 in all), each request
//! starts with the previous one — rules, notes and the conversation's
//! schema first, history after it, what a question adds last — while every
//! question's tables still reach the model.
//!
//! `cargo test --test prefix -- --nocapture` prints the figures
//! docs/performance.md quotes.

mod common;
#[path = "linking/fixture.rs"]
mod fixture;

use std::io;

use aiq::agent::{Event, EventSink, Thread, ThreadOptions};
use aiq::llm::{self, Provider, Settings};
use aiq::schema::Catalog;
use aiq::source::{self, OpenOptions, SourceSpec};
use common::llm::{ModelServer, Recorded, Reply};
use common::Sandbox;

#[derive(Default)]
struct Events(Vec<Event>);

impl EventSink for Events {
    fn event(&mut self, event: Event) -> io::Result<()> {
        self.0.push(event);
        Ok(())
    }
}

/// The warehouse of 500 tables: the linking benchmark's, and audit tables
/// to make up the rest.
fn warehouse() -> Catalog {
    let mut catalog = fixture::catalog();
    let mut i = 0;
    while catalog.tables.len() < 500 {
        let mut t = catalog.tables[0].clone();
        t.name = format!("zz_audit_{i:03}");
        t.foreign_keys.clear();
        catalog.tables.push(t);
        i += 1;
    }
    catalog
}

/// A SQLite file with every table of `catalog` (empty), so the model's SQL
/// runs.
fn database(sb: &Sandbox, catalog: &Catalog) -> std::path::PathBuf {
    let path = sb.path().join("warehouse.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut sql = String::from("BEGIN;");
    for t in &catalog.tables {
        let cols: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("\"{}\" {}", c.name, c.type_name))
            .collect();
        sql.push_str(&format!(
            "CREATE TABLE \"{}\" ({});",
            t.name,
            cols.join(", ")
        ));
    }
    sql.push_str("COMMIT;");
    conn.execute_batch(&sql).unwrap();
    path
}

/// A thread over the warehouse talking to `server` (OpenAI wire).
fn thread(sb: &Sandbox, server: &ModelServer, catalog: &Catalog, window: Option<usize>) -> Thread {
    let db = database(sb, catalog);
    let settings = Settings {
        provider: Provider::OpenAi,
        model: "test-model".into(),
        base_url: server.base(),
        api_key: None,
        timeout: std::time::Duration::from_secs(10),
        max_retries: 0,
        stream: true,
        context_tokens: window,
        home: Some(sb.home()),
    };
    let model = llm::connect(&settings).unwrap();
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default()).unwrap();
    Thread::new(model, src, catalog.clone(), ThreadOptions::default())
}

/// A request's messages as a chat template lays them out, in order.
fn rendered(r: &Recorded) -> String {
    r.messages()
        .iter()
        .map(|(role, content)| format!("<{role}>\n{content}\n"))
        .collect()
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Whether `table` is described (not just named) somewhere in `text`.
fn describes(text: &str, table: &str) -> bool {
    text.contains(&format!("table {table} (")) || text.contains(&format!("table {table}:"))
}

/// Asks `questions` in one chat; returns the requests the server got, one
/// a question.
fn chat(questions: &[&fixture::Question], window: Option<usize>) -> Vec<Recorded> {
    let sb = Sandbox::new();
    let catalog = warehouse();
    let replies = questions
        .iter()
        .map(|q| {
            Reply::Text(format!(
                "```sql\nSELECT count(*) AS n FROM {}\n```",
                q.gold[0]
            ))
        })
        .collect();
    let server = ModelServer::start(replies);
    let mut t = thread(&sb, &server, &catalog, window);
    for q in questions {
        let mut events = Events::default();
        let answer = t.ask(&q.text, &mut events).unwrap();
        assert_eq!(answer.rows, Some(1), "{}", q.text);
    }
    let chats = server.chats();
    assert_eq!(chats.len(), questions.len());
    chats
}

fn pick<'a>(all: &'a [fixture::Question], texts: &[&str]) -> Vec<&'a fixture::Question> {
    texts
        .iter()
        .map(|t| all.iter().find(|q| q.text == *t).unwrap())
        .collect()
}

/// Each follow-up's share of the previous request that it repeats as its
/// prefix, and the request sizes.
fn shares(chats: &[Recorded]) -> (Vec<f64>, Vec<usize>) {
    let texts: Vec<String> = chats.iter().map(rendered).collect();
    let shares = texts
        .windows(2)
        .map(|w| common_prefix(&w[0], &w[1]) as f64 / w[0].len() as f64)
        .collect();
    (shares, texts.iter().map(String::len).collect())
}

#[test]
fn a_six_question_chat_keeps_each_request_as_the_next_ones_prefix() {
    let all = fixture::questions();
    let questions = pick(
        &all,
        &[
            "How many clients do we have in each country?",
            "Which clients spent the most last year?",
            "How do customers pay?",
            "How many orders were delivered late?",
            "Average pay per department",
            "What is our churn per subscription plan?",
        ],
    );
    let chats = chat(&questions, None);
    let (shares, sizes) = shares(&chats);
    let resent: Vec<usize> = chats
        .windows(2)
        .map(|w| rendered(&w[1]).len() - common_prefix(&rendered(&w[0]), &rendered(&w[1])))
        .collect();
    eprintln!("request bytes {sizes:?}\nprefix share of the previous request {shares:.3?}\nbytes re-sent per follow-up {resent:?}");
    for (i, (q, r)) in questions.iter().zip(&chats).enumerate() {
        let text = rendered(r);
        for g in &q.gold {
            assert!(describes(&text, g), "request {i}: {g} not described");
        }
    }
    for (i, s) in shares.iter().enumerate() {
        assert!(
            *s >= 0.9,
            "follow-up {}: {s:.3} of the previous request kept",
            i + 1
        );
    }
    // Some follow-ups needed tables the conversation's schema lacked: they
    // came with the question, which ends its message.
    let added: Vec<usize> = chats
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let (_, last) = r.messages().pop().unwrap();
            last.starts_with("More tables for this question")
        })
        .map(|(i, _)| i)
        .collect();
    assert!(!added.is_empty() && !added.contains(&0), "{added:?}");
    for (q, r) in questions.iter().zip(&chats) {
        assert!(r.messages().pop().unwrap().1.ends_with(&q.text));
    }
}

#[test]
fn a_twenty_turn_chat_is_mostly_served_from_the_cache() {
    let all = fixture::questions();
    let questions: Vec<&fixture::Question> = all.iter().take(20).collect();
    let chats = chat(&questions, None);
    let texts: Vec<String> = chats.iter().map(rendered).collect();
    // From turn 2 on: the bytes a cache holds (the previous request's
    // prefix) of all the bytes sent.
    let cached: usize = texts.windows(2).map(|w| common_prefix(&w[0], &w[1])).sum();
    let sent: usize = texts[1..].iter().map(String::len).sum();
    let share = cached as f64 / sent as f64;
    eprintln!(
        "20 turns: {sent} bytes sent from turn 2 on, {cached} of them a cached prefix ({:.1}%)",
        share * 100.0
    );
    for (i, (q, text)) in questions.iter().zip(&texts).enumerate() {
        for g in &q.gold {
            assert!(describes(text, g), "request {i}: {g} not described");
        }
    }
    assert!(share >= 0.85, "{share:.3}");
}

/// A two-question chat on the shop over `provider`'s wire; the requests
/// the scripted server got (it refuses fields and markers the real
/// servers refuse, so a marker it took is one they take).
fn two_questions(provider: Provider, llama_cpp: bool) -> Vec<Recorded> {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Text("```sql\nSELECT count(*) AS n FROM customers\n```".into()),
        Reply::Text("```sql\nSELECT count(*) AS n FROM orders\n```".into()),
    ]);
    if llama_cpp {
        server.set_props(serde_json::json!({"default_generation_settings": {"n_ctx": 8192}}));
    }
    let settings = Settings {
        provider,
        model: "test-model".into(),
        base_url: match provider {
            Provider::Ollama => server.url.clone(),
            _ => server.base(),
        },
        api_key: Some("k".into()),
        timeout: std::time::Duration::from_secs(10),
        max_retries: 0,
        stream: true,
        context_tokens: None,
        home: Some(sb.home()),
    };
    let model = llm::connect(&settings).unwrap();
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default()).unwrap();
    let catalog = src.introspect().unwrap();
    let mut t = Thread::new(model, src, catalog, ThreadOptions::default());
    for q in ["how many customers?", "and how many orders?"] {
        let answer = t.ask(q, &mut Events::default());
        assert_eq!(
            answer.map(|a| a.rows).ok(),
            Some(Some(1)),
            "{provider:?}: {q}"
        );
    }
    let chats = server.chats();
    assert_eq!(chats.len(), 2, "{provider:?}");
    chats
}

#[test]
fn anthropic_gets_cache_breakpoints_on_the_system_block_and_the_question() {
    let chats = two_questions(Provider::Anthropic, false);
    for c in &chats {
        let b = &c.body;
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral", "{b}");
        let last = b["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last["content"][0]["cache_control"]["type"], "ephemeral",
            "{b}"
        );
        assert_eq!(c.raw.matches("cache_control").count(), 2);
    }
    // The second request starts with the first one's messages, the
    // first question's marker moved on to the second question.
    let first = chats[0].body["messages"].as_array().unwrap();
    let second = chats[1].body["messages"].as_array().unwrap();
    assert_eq!(second.len(), 3);
    assert_eq!(first[0]["content"][0]["text"], second[0]["content"]);
    assert_eq!(chats[0].body["system"], chats[1].body["system"]);
}

#[test]
fn openai_gets_the_prefix_as_is_and_llama_cpp_is_asked_to_keep_it() {
    for llama_cpp in [false, true] {
        let chats = two_questions(Provider::OpenAi, llama_cpp);
        for c in &chats {
            assert!(!c.raw.contains("cache_control"), "{}", c.raw);
            assert_eq!(c.body.get("cache_prompt").is_some(), llama_cpp, "{}", c.raw);
        }
        let (a, b) = (rendered(&chats[0]), rendered(&chats[1]));
        assert!(b.starts_with(&a), "{a}\n---\n{b}");
    }
}

#[test]
fn ollama_gets_the_same_options_every_request_and_keeps_the_model_loaded() {
    let chats = two_questions(Provider::Ollama, false);
    for c in &chats {
        assert_eq!(c.path, "/api/chat");
        assert_eq!(c.body["keep_alive"], "30m");
        assert_eq!(c.body["options"], chats[0].body["options"]);
    }
    assert!(chats[0].body["options"]["num_ctx"].as_u64().is_some());
    let (a, b) = (rendered(&chats[0]), rendered(&chats[1]));
    assert!(b.starts_with(&a), "{a}\n---\n{b}");
}

/// `-v` says what each request cost and how much of it the provider's
/// cache served (the scripted server reports 8 cached tokens of 11, and
/// Anthropic 3 more written to its cache).
#[test]
fn verbose_runs_report_the_cached_tokens() {
    for (provider, line) in [
        (
            "openai",
            "openai usage: 11 input tokens (8 read from the cache), 7 output tokens",
        ),
        (
            "anthropic",
            "anthropic usage: 22 input tokens (8 read from the cache, 3 written to it), 7 output tokens",
        ),
    ] {
        let sb = Sandbox::new();
        let db = sb.shop_sqlite();
        let server = ModelServer::start(vec![Reply::Text(
            "```sql\nSELECT count(*) AS n FROM customers\n```".into(),
        )]);
        let out = sb
            .std_aiq_with(&server, provider)
            .arg(&db)
            .args(["-q", "how many customers?", "-v"])
            .output()
            .unwrap();
        let err = common::stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains(line), "{provider}: {err}");
        // `aiq logs` keeps it.
        let logs = sb.std_aiq().arg("logs").output().unwrap();
        let logs = common::stdout_of(&logs);
        let written = if provider == "anthropic" { 3 } else { 0 };
        let input = if provider == "anthropic" { 22 } else { 11 };
        assert!(
            logs.contains(&format!(
                "  ok        model  {}  {provider} test-model: {input} input tokens (8 from the cache, {written} written to it), 7 output  ",
                db.canonicalize().unwrap().display()
            )) || logs.contains(&format!(
                "{provider} test-model: {input} input tokens (8 from the cache, {written} written to it), 7 output  "
            )),
            "{logs}"
        );
    }
}

/// A writer the test reads back: what `-v` would print.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Another source lays the schema out again, and says why at `-v`; until
/// then the system message stays the same bytes.
#[test]
fn the_schema_is_laid_out_again_only_when_it_must_and_says_why() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(
        (0..3)
            .map(|_| Reply::Text("```sql\nSELECT count(*) AS n FROM customers\n```".into()))
            .collect(),
    );
    let settings = Settings {
        provider: Provider::OpenAi,
        model: "test-model".into(),
        base_url: server.base(),
        api_key: None,
        timeout: std::time::Duration::from_secs(10),
        max_retries: 0,
        stream: true,
        context_tokens: None,
        home: Some(sb.home()),
    };
    let open = || source::open(&SourceSpec::Sqlite(db.clone()), OpenOptions::default()).unwrap();
    let src = open();
    let catalog = src.introspect().unwrap();
    let mut t = Thread::new(
        llm::connect(&settings).unwrap(),
        src,
        catalog,
        ThreadOptions::default(),
    );
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("aiq=info"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        t.ask("how many customers?", &mut Events::default())
            .unwrap();
        t.ask("and how many orders per country?", &mut Events::default())
            .unwrap();
        let src = open();
        let catalog = src.introspect().unwrap();
        t.set_source(src, catalog);
        t.ask("how many products?", &mut Events::default()).unwrap();
    });
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let again: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("the schema is laid out again"))
        .collect();
    assert_eq!(again.len(), 1, "{log}");
    assert!(
        again[0].ends_with("the schema is laid out again for this question: the source changed"),
        "{log}"
    );
    let chats = server.chats();
    assert_eq!(chats[0].messages()[0], chats[1].messages()[0]);
}

/// A conversation restored from its session (a single-shot `-s SESSION`,
/// another process) lays its schema out for its first question again, so
/// its next request still starts with the one before.
#[test]
fn a_restored_conversation_starts_its_requests_as_before() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![
        Reply::Text("```sql\nSELECT count(*) AS n FROM customers\n```".into()),
        Reply::Text("```sql\nSELECT count(*) AS n FROM orders\n```".into()),
    ]);
    let settings = Settings {
        provider: Provider::OpenAi,
        model: "test-model".into(),
        base_url: server.base(),
        api_key: None,
        timeout: std::time::Duration::from_secs(10),
        max_retries: 0,
        stream: true,
        context_tokens: None,
        home: Some(sb.home()),
    };
    let thread = || {
        let src = source::open(&SourceSpec::Sqlite(db.clone()), OpenOptions::default()).unwrap();
        let catalog = src.introspect().unwrap();
        Thread::new(
            llm::connect(&settings).unwrap(),
            src,
            catalog,
            ThreadOptions::default(),
        )
    };
    let mut first = thread();
    first
        .ask("how many customers?", &mut Events::default())
        .unwrap();
    let mut again = thread();
    again.set_history(first.history().to_vec());
    again
        .ask("and how many orders per country?", &mut Events::default())
        .unwrap();
    let chats = server.chats();
    let (a, b) = (rendered(&chats[0]), rendered(&chats[1]));
    assert!(b.starts_with(&a), "{a}\n---\n{b}");
}
