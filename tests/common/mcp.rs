//! The official MCP Python SDK as a test client for `aiq mcp`: the Python
//! of the virtual environment `.ci/run` creates (`AIQ_MCP_PYTHON`, else
//! `~/.cache/aiq-mcp-venv/bin/python`), driving tests/mcp/driver.py.
//!
//! A machine without it skips these tests with a loud message; when
//! `AIQ_MCP_PYTHON` is set (CI sets it) a Python that cannot import `mcp`
//! fails them instead.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::Sandbox;

/// The Python that has the `mcp` package, or `None` (with a message).
pub fn python() -> Option<&'static Path> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON.get_or_init(find).as_deref()
}

fn find() -> Option<PathBuf> {
    let required = std::env::var_os("AIQ_MCP_PYTHON").map(PathBuf::from);
    let candidate = required.clone().or_else(|| {
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/aiq-mcp-venv/bin/python"))
    })?;
    let works = Command::new(&candidate)
        .args(["-c", "import mcp, mcp_types"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    match (works, required) {
        (true, _) => Some(candidate),
        (false, Some(p)) => panic!(
            "AIQ_MCP_PYTHON={} cannot import the MCP SDK (`pip install mcp`, see .ci/run)",
            p.display()
        ),
        (false, None) => {
            eprintln!(
                "\n!!!! SKIPPING MCP client tests: no Python with the MCP SDK at {}\n!!!! create it as .ci/run does: python3 -m venv ~/.cache/aiq-mcp-venv && ~/.cache/aiq-mcp-venv/bin/pip install mcp==2.3.0\n",
                candidate.display()
            );
            None
        }
    }
}

/// tests/mcp/driver.py.
fn driver_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/driver.py")
}

/// The protocol generation a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// The initialize handshake, protocol 2025-11-25 (desktop assistants today).
    Legacy,
    /// Whatever the SDK prefers: 2026-07-28, per-request envelopes.
    Modern,
}

impl Era {
    pub const ALL: [Era; 2] = [Era::Legacy, Era::Modern];

    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    /// The protocol version the client ends up with.
    pub fn protocol(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }
}

/// Where the client finds the server.
pub enum Target<'a> {
    /// Starts `aiq ARGS` over stdio, as a desktop assistant does.
    Stdio(&'a [&'a str]),
    /// Connects to a running `aiq mcp --http` at this URL.
    Http(&'a str),
    /// Starts this command over stdio (aiq behind a wrapper).
    Command(&'a [&'a str]),
}

/// The driver running `scenario` (with `args`) against `target`, with the
/// sandbox's environment for aiq.
pub fn driver(
    sb: &Sandbox,
    python: &Path,
    scenario: &str,
    era: Era,
    args: &[&str],
    target: Target<'_>,
) -> Command {
    let aiq_env = sb.std_aiq();
    let mut cmd = Command::new(python);
    cmd.current_dir(sb.path());
    for (k, v) in aiq_env.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.arg(driver_script())
        .arg(scenario)
        .args(["--era", era.name()])
        .args(args);
    match target {
        Target::Http(url) => {
            cmd.args(["--url", url, "--token", HTTP_TOKEN]);
        }
        Target::Stdio(aiq_args) => {
            cmd.arg("--").arg(aiq_bin()).args(aiq_args);
        }
        Target::Command(command) => {
            cmd.arg("--").args(command);
        }
    }
    cmd
}

/// The aiq binary under test.
pub fn aiq_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("aiq")
}

/// Runs the driver to the end; its last JSON line.
pub fn run(cmd: &mut Command) -> Value {
    let out = cmd.output().expect("run the MCP driver");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "driver failed:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "a panic:\n{stderr}");
    let last = stdout.lines().rev().find(|l| l.starts_with('{'));
    serde_json::from_str(last.unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON from the driver ({e}):\n{stdout}\n{stderr}"))
}

/// Copies a child's stderr to ours, noting whether anything panicked.
fn watch_stderr(stderr: impl std::io::Read + Send + 'static) -> Arc<AtomicBool> {
    let panicked = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&panicked);
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stderr);
        let mut line = String::new();
        while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.contains("panicked") {
                seen.store(true, Ordering::SeqCst);
            }
            eprint!("{line}");
            line.clear();
        }
    });
    panicked
}

/// Fails the test when a child panicked (unless it fails already).
fn no_panic(panicked: &AtomicBool, what: &str) {
    if panicked.load(Ordering::SeqCst) && !std::thread::panicking() {
        panic!("{what} panicked (see its stderr above)");
    }
}

/// A driver running in the background, its JSON lines read as they come.
pub struct Live {
    pub child: Child,
    lines: BufReader<ChildStdout>,
    panicked: Arc<AtomicBool>,
}

impl Live {
    pub fn spawn(cmd: &mut Command) -> Live {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the MCP driver");
        let lines = BufReader::new(child.stdout.take().expect("stdout"));
        let panicked = watch_stderr(child.stderr.take().expect("stderr"));
        Live {
            child,
            lines,
            panicked,
        }
    }

    /// The next JSON line.
    pub fn next(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.lines.read_line(&mut line).expect("read the driver");
            assert!(n > 0, "the driver ended early");
            if line.starts_with('{') {
                return serde_json::from_str(&line).expect("JSON from the driver");
            }
        }
    }

    /// Sends a line to the driver's stdin.
    pub fn tell(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("write to the driver");
        stdin.flush().expect("flush");
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // aiq may still be writing its last lines.
        std::thread::sleep(std::time::Duration::from_millis(200));
        no_panic(&self.panicked, "the driver or aiq");
    }
}

/// The bearer token [`HttpServer`] is started with and the driver sends.
pub const HTTP_TOKEN: &str = "test-token-5f1c9a";

/// `aiq mcp ARGS --http 127.0.0.1:0 --token HTTP_TOKEN`, running until
/// dropped; its URL read from the line it prints.
pub struct HttpServer {
    pub child: Child,
    pub url: String,
    panicked: Arc<AtomicBool>,
}

impl HttpServer {
    pub fn start(sb: &Sandbox, args: &[&str]) -> HttpServer {
        let mut child = sb
            .std_aiq()
            .arg("mcp")
            .args(args)
            .args(["--http", "127.0.0.1:0", "--token", HTTP_TOKEN])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start aiq mcp --http");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        let url = loop {
            line.clear();
            let n = err.read_line(&mut line).expect("read aiq's stderr");
            assert!(n > 0, "aiq mcp --http ended before listening");
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        // Keep draining stderr so aiq never blocks on it.
        let panicked = watch_stderr(err);
        HttpServer {
            child,
            url,
            panicked,
        }
    }
}

impl HttpServer {
    /// Stops the server as Ctrl-C does; true when it exited cleanly.
    pub fn interrupt(&mut self) -> bool {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT);
        }
        self.child.wait().is_ok_and(|s| s.success())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        no_panic(&self.panicked, "aiq mcp --http");
    }
}

/// The audit log lines of `home` (every day's file), parsed.
pub fn audit_lines(home: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(home.join("logs")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
                .collect::<Vec<Value>>()
        })
        .collect()
}

/// One `tools/call` of `tool` with `arguments` to `aiq ARGS` over stdio,
/// in raw JSON-RPC frames (no SDK needed): its `result`, or its `error`.
pub fn stdio_call(sb: &Sandbox, args: &[&str], tool: &str, arguments: Value) -> Value {
    use std::io::Write;
    let mut child = sb
        .std_aiq()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start aiq mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout"));
    let frames = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
    ];
    for frame in frames {
        writeln!(stdin, "{frame}").expect("write a frame");
    }
    stdin.flush().expect("flush");
    let mut line = String::new();
    let answer = loop {
        line.clear();
        let n = lines.read_line(&mut line).expect("read aiq mcp");
        assert!(n > 0, "aiq mcp ended without answering the call");
        let v: Value = serde_json::from_str(&line).expect("a JSON-RPC frame");
        if v["id"] == 1 {
            break v;
        }
    };
    drop(stdin);
    let _ = child.wait();
    if answer.get("error").is_some() {
        answer["error"].clone()
    } else {
        answer["result"].clone()
    }
}
