//! Against a real llama.cpp server (llama-cpp-python with SmolLM2-135M,
//! `--n_ctx 4096`; see `common::llama`): protocol behaviour only, never what
//! the tiny model answers — streaming and whole-body turns complete, a
//! two-turn conversation replays its history without an error, a question
//! over 2,000 tables is fitted into the window (the server's error, empty
//! stream or not, teaches aiq the window), and `aiq doctor` reports the
//! model and its window.

mod common;

use std::process::Output;

use common::llama::{llama, LlamaServer, MODEL};
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
        let mut cmd = aiq(&sb, server);
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
        let out = aiq(&sb, server)
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
        let mut cmd = aiq(&sb, server);
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
    let out = aiq(&sb, server)
        .arg(&db)
        .args(["-q", QUESTION, "--sql-only"])
        .output()
        .unwrap();
    assert_turn_completed(&out, "again");
    assert!(!stderr_of(&out).contains("sending a smaller request"));
    let out = aiq(&sb, server).arg("doctor").arg(&db).output().unwrap();
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
