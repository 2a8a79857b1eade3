//! Several aiq processes, one session (SPEC §7.3a): parallel `-s FILE -q`
//! calls from a script all keep their turns, two chats on one session keep
//! both chats' turns, and the other files several processes write — saved
//! sources, the audit log — keep every writer's change (notes and the
//! caches: unit tests in src/notes.rs and src/home/lock.rs).

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Stdio;

use common::llm::{ModelServer, Reply};
use common::{pty, stderr_of, stdout_of, Sandbox};
use expectrl::Expect;
use serde_json::{json, Value};

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("```sql\n{sql}\n```"))
}

/// A session file on `db` with one question and its answer.
fn session_file(path: &Path, db: &Path) {
    let file = json!({
        "version": 1,
        "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": chrono::Utc::now().to_rfc3339(),
                     "data_source": db.canonicalize().unwrap().display().to_string(), "database_type": "sqlite"},
        "messages": [
            {"role": "user", "content": "question 0", "timestamp": "2026-01-26T10:00:05Z"},
            {"role": "assistant", "content": "```sql\nSELECT 0\n```", "timestamp": "2026-01-26T10:00:07Z",
             "sql": "SELECT 0", "row_count": 1}
        ],
    });
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

fn messages(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .expect("the session file stays valid JSON");
    v["messages"].as_array().unwrap().clone()
}

#[test]
fn parallel_single_shot_follow_ups_all_keep_their_turns() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("shared.json");
    session_file(&file, &db);
    const CALLS: usize = 10;
    let server = ModelServer::start(
        (0..CALLS)
            .map(|i| fenced(&format!("SELECT {i} AS n")))
            .collect(),
    );
    let children: Vec<_> = (0..CALLS)
        .map(|i| {
            sb.std_aiq_with(&server, "openai")
                .args([
                    "-s",
                    file.to_str().unwrap(),
                    "-q",
                    &format!("follow-up {i}"),
                    "-f",
                    "csv",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let msgs = messages(&file);
    assert_eq!(msgs.len(), 2 + 2 * CALLS, "every call's turn is kept");
    assert_eq!(msgs[0]["content"], "question 0");
    let mut asked: Vec<String> = Vec::new();
    for pair in msgs[2..].chunks(2) {
        assert_eq!(pair[0]["role"], "user");
        assert_eq!(
            pair[1]["role"], "assistant",
            "each question is followed by its answer"
        );
        assert!(pair[1]["sql"].as_str().unwrap().starts_with("SELECT "));
        asked.push(pair[0]["content"].as_str().unwrap().to_string());
    }
    asked.sort();
    let mut expected: Vec<String> = (0..CALLS).map(|i| format!("follow-up {i}")).collect();
    expected.sort();
    assert_eq!(asked, expected);
    // Each call was answered from the session as it stood when it started:
    // the earlier turn and those finished by then, then its own question.
    let chats = server.chats();
    assert_eq!(chats.len(), CALLS);
    for chat in chats {
        let m = chat.messages();
        assert!(m.len() >= 4 && m.len() % 2 == 0, "{m:?}");
        assert_eq!(m[1].1, "question 0");
        assert!(m.last().unwrap().1.starts_with("follow-up "));
    }
    let ids: std::collections::HashSet<&str> =
        msgs.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), msgs.len(), "every message has its own id");
}

#[test]
fn two_chats_on_one_session_keep_both_chats_turns() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("two.json");
    session_file(&file, &db);
    let server = ModelServer::start(vec![
        fenced("SELECT 11 AS first_answer"),
        fenced("SELECT 22 AS second_answer"),
        fenced("SELECT 33 AS third_answer"),
    ]);
    let arg = file.as_os_str();
    let mut a = pty(
        &sb,
        &[std::ffi::OsStr::new("-s"), arg],
        Some(&server),
        "dumb",
    );
    a.expect("aiq[").unwrap();
    let mut b = pty(
        &sb,
        &[std::ffi::OsStr::new("-s"), arg],
        Some(&server),
        "dumb",
    );
    b.expect("This session is open in another aiq too (pid")
        .unwrap();
    b.expect("aiq[").unwrap();
    a.send_line("from the first").unwrap();
    a.expect("11").unwrap();
    a.expect("aiq[").unwrap();
    b.send_line("from the second").unwrap();
    b.expect("22").unwrap();
    b.expect("aiq[").unwrap();
    // The second chat's save brought in the first one's turn, marked.
    b.send_line("/history").unwrap();
    b.expect("user (from another aiq): from the first").unwrap();
    b.expect("aiq[").unwrap();
    a.send_line("again from the first").unwrap();
    a.expect("33").unwrap();
    a.expect("aiq[").unwrap();
    a.send_line("/history").unwrap();
    a.expect("user (from another aiq): from the second")
        .unwrap();
    a.expect("aiq[").unwrap();
    b.send_line("/exit").unwrap();
    b.expect("Current session saved to").unwrap();
    a.send_line("/exit").unwrap();
    a.expect("Current session saved to").unwrap();
    let users: Vec<String> = messages(&file)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        users,
        [
            "question 0",
            "from the first",
            "from the second",
            "again from the first"
        ]
    );
}

#[test]
fn sources_added_at_once_are_all_saved() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let children: Vec<_> = (0..8)
        .map(|i| {
            sb.std_aiq()
                .args(["sources", "add", &format!("shop{i}"), db.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let config = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    let parsed: toml::Value = toml::from_str(&config).unwrap();
    for i in 0..8 {
        assert!(
            parsed["sources"].get(format!("shop{i}")).is_some(),
            "shop{i} missing:\n{config}"
        );
    }
}

#[test]
fn audit_lines_from_parallel_lua_runs_stay_whole() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let script = sb.path().join("s.lua");
    std::fs::write(&script, format!("print('{}')\n", "x".repeat(5000))).unwrap();
    let children: Vec<_> = (0..8)
        .map(|_| {
            sb.std_aiq()
                .arg(&db)
                .args(["--lua", script.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    let logs = sb.home().join("logs");
    let mut lines = 0;
    for e in std::fs::read_dir(&logs).unwrap().flatten() {
        for line in std::fs::read_to_string(e.path()).unwrap().lines() {
            serde_json::from_str::<Value>(line).expect("each audit line is whole JSON");
            lines += 1;
        }
    }
    assert_eq!(lines, 8);
}

/// `-s FILE -q` whose turn cannot be written (the session's folder takes
/// no new file, as on a full disk) is a failed write: exit 3, saying the
/// answer is not in the session; the file is as it was.
#[test]
fn a_turn_that_cannot_be_saved_is_exit_3() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let dir = sb.path().join("frozen");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.json");
    session_file(&file, &db);
    let before = std::fs::read_to_string(&file).unwrap();
    // An immutable folder refuses new files even to root (ext4, xfs…).
    let frozen = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !frozen {
        eprintln!("chattr +i is not available here: the write failure cannot be staged");
        return;
    }
    struct Thaw<'a>(&'a Path);
    impl Drop for Thaw<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(self.0)
                .status();
        }
    }
    let _thaw = Thaw(&dir);
    let server = ModelServer::start(vec![fenced("SELECT 1 AS one")]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg("-s")
        .arg(&file)
        .args(["-q", "one more", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("cannot save the session to")
            && stderr_of(&out).contains("the answer above is not in the session"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(stdout_of(&out), "one\n1\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

/// A session near the 10 MB a session may be: the turn that would take it
/// over is refused before writing (exit 3, saying why), and the file
/// stays one aiq opens.
#[test]
fn a_session_is_never_written_past_what_aiq_reads_back() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let file = sb.path().join("big.json");
    session_file(&file, &db);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let size = std::fs::metadata(&file).unwrap().len() as usize;
    v["messages"][0]["content"] = Value::String("x".repeat(10 * 1024 * 1024 - size - 200));
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    assert!(before.len() < 10 * 1024 * 1024);
    let server = ModelServer::start(vec![fenced("SELECT 1 AS one"), fenced("SELECT 2 AS two")]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg("-s")
        .arg(&file)
        .args(["-q", "one more", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("over the 10 MB (10,485,760 bytes) a session may be"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // It still opens.
    let out = sb
        .aiq_with(&server, "openai")
        .arg("-s")
        .arg(&file)
        .args(["-q", "again", "-f", "csv"])
        .output()
        .unwrap();
    assert!(
        !stderr_of(&out).contains("may be at most 10 MB"),
        "{}",
        stderr_of(&out)
    );
}
