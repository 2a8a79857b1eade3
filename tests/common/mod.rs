//! Shared test helpers: the `aiq` command with a private home, and small
//! shop databases built fresh in temp dirs (SQLite, DuckDB, CSV folder).

#![allow(dead_code)]

pub mod allowed;
pub mod attack;
pub mod clickhouse;
pub mod corpus;
pub mod findings;
pub mod least_privilege;
pub mod llama;
pub mod llm;
pub mod mcp;
pub mod mcp_attack;
pub mod payloads;
#[cfg(unix)]
pub mod screen;
pub mod servers;
pub mod shards;
pub mod shop;
pub mod tricks;
pub mod ways;

pub use shop::{shop_sql, CUSTOMERS, ORDERS};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use std::process::Command as StdCommand;

use assert_cmd::Command;

/// The API key tests use; it must never appear in a body, log or output.
pub const SECRET_KEY: &str = "sk-test-SECRET-4242";

/// A temp dir that holds the config home and the test's data.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("home")).expect("home");
        Sandbox { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An executable shell script `name` in the sandbox (an editor, a
    /// pager) running `body`.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.path().join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the script");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                .expect("make it executable");
        }
        path
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home").join(".aiqconfig")
    }

    /// The catalog cache's entries in the sandbox's home (not their lock
    /// files, `.NAME.lock`).
    pub fn cache_entries(&self) -> Vec<PathBuf> {
        fs::read_dir(self.home().join("cache"))
            .expect("the catalog cache folder")
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect()
    }

    /// The one catalog cache entry of the sandbox's home.
    pub fn only_cache_entry(&self) -> PathBuf {
        let entries = self.cache_entries();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries.into_iter().next().unwrap()
    }

    /// `aiq` with `AIQ_HOME`/`HOME` inside the sandbox, run from it, with no
    /// colour and no model settings leaking in from the environment, as a
    /// plain process for tests that spawn it and signal or read it live.
    pub fn std_aiq(&self) -> StdCommand {
        let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin("aiq"));
        cmd.current_dir(self.path())
            .env("AIQ_HOME", self.home())
            .env("HOME", self.path().join("home"))
            .env("NO_COLOR", "1")
            .env_remove("AIQ_PROVIDER")
            .env_remove("AIQ_MODEL")
            .env_remove("AIQ_BASE_URL")
            .env_remove("AIQ_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            // Nothing listens here: no test ever reaches a real Ollama.
            .env("OLLAMA_HOST", "127.0.0.1:9")
            // No pager on a pseudo-terminal unless a test asks for one.
            .env("AIQ_PAGER", "")
            .env_remove("PAGER");
        cmd
    }

    /// [`Sandbox::std_aiq`] talking to a scripted model server with
    /// `provider`'s wire format.
    pub fn std_aiq_with(&self, server: &llm::ModelServer, provider: &str) -> StdCommand {
        let mut cmd = self.std_aiq();
        cmd.env("AIQ_PROVIDER", provider)
            .env("AIQ_BASE_URL", server.base())
            .env("AIQ_MODEL", "test-model")
            .env("AIQ_API_KEY", SECRET_KEY);
        cmd
    }

    /// [`Sandbox::std_aiq`] for assert_cmd.
    pub fn aiq(&self) -> Command {
        Command::from_std(self.std_aiq())
    }

    /// [`Sandbox::std_aiq_with`] for assert_cmd.
    pub fn aiq_with(&self, server: &llm::ModelServer, provider: &str) -> Command {
        Command::from_std(self.std_aiq_with(server, provider))
    }

    pub fn write_config(&self, text: &str) {
        fs::create_dir_all(self.home()).expect("home");
        let path = self.home().join("config.toml");
        fs::write(&path, text).expect("config");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }

    /// A folder source `lake/` with one table (`good.csv`) and a file that
    /// is left out with a warning (`empty.csv`, empty).
    pub fn lake_with_an_empty_file(&self) -> PathBuf {
        let lake = self.path().join("lake");
        fs::create_dir_all(&lake).expect("lake");
        fs::write(lake.join("good.csv"), "a\n1\n").expect("good.csv");
        fs::write(lake.join("empty.csv"), "").expect("empty.csv");
        lake
    }

    /// Builds the shop in SQLite: `shop.db`.
    pub fn shop_sqlite(&self) -> PathBuf {
        let path = self.path().join("shop.db");
        let conn = rusqlite::Connection::open(&path).expect("sqlite");
        conn.execute_batch(&shop_sql("TEXT")).expect("shop schema");
        path
    }

    /// Builds the shop in DuckDB: `shop.duckdb`.
    pub fn shop_duckdb(&self) -> PathBuf {
        let path = self.path().join("shop.duckdb");
        let conn = duckdb::Connection::open(&path).expect("duckdb");
        conn.execute_batch(&shop_sql("VARCHAR"))
            .expect("shop schema");
        drop(conn);
        path
    }

    /// The shop as a folder of CSV files: `shop_csv/{customers,orders}.csv`.
    pub fn shop_csv(&self) -> PathBuf {
        let dir = self.path().join("shop_csv");
        fs::create_dir_all(&dir).expect("csv dir");
        let mut customers = String::from("id,name,country,vip,signup\n");
        for (id, name, country, vip, signup) in CUSTOMERS {
            customers.push_str(&format!("{id},{name},{country},{vip},{signup}\n"));
        }
        fs::write(dir.join("customers.csv"), customers).expect("customers.csv");
        let mut orders = String::from("id,customer_id,total,ordered_at,status\n");
        for (id, cid, total, at, status) in ORDERS {
            orders.push_str(&format!("{id},{cid},{total},{at},{status}\n"));
        }
        fs::write(dir.join("orders.csv"), orders).expect("orders.csv");
        dir
    }
}

/// Every file under `dir` with its bytes, to prove nothing changed or appeared.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            // aiq's own caches (catalogs, a folder's kept views) are not
            // the user's files.
            if path.ends_with(".aiqconfig/cache") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = fs::read(&path).expect("read");
                out.insert(path, bytes);
            }
        }
    }
    out
}

/// The session files in `dir`, oldest first.
pub fn sessions_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("session_"))
        })
        .collect();
    v.sort();
    v
}

/// Adds 2,000 empty audit tables beside the shop's (a wide schema).
pub fn add_audit_tables(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut sql = String::from("BEGIN;");
    for i in 0..2000 {
        sql.push_str(&format!(
            "CREATE TABLE audit_{i:04} (id INTEGER PRIMARY KEY, actor TEXT, action TEXT, happened_at TEXT, detail TEXT);"
        ));
    }
    sql.push_str("COMMIT;");
    conn.execute_batch(&sql).unwrap();
}

/// `bytes` with every `from` replaced by `to` (same length: the cache is
/// binary, strings carry their length).
pub fn replace_bytes(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from.as_bytes() {
            out[i..i + from.len()].copy_from_slice(to.as_bytes());
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

/// A process's resident memory in kB (Linux's `/proc`; 0 where there is none).
pub fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `aiq ARGS` in a pseudo-terminal with the sandbox's home, no colour and
/// `TERM=term`; with `model`, talking to that scripted model server.
#[cfg(unix)]
pub fn pty(
    sb: &Sandbox,
    args: &[&std::ffi::OsStr],
    model: Option<&llm::ModelServer>,
    term: &str,
) -> expectrl::session::OsSession {
    let mut cmd = match model {
        Some(server) => sb.std_aiq_with(server, "openai"),
        None => sb.std_aiq(),
    };
    cmd.args(args).env("TERM", term);
    let mut session = expectrl::Session::spawn(cmd).expect("spawn aiq in a pty");
    session.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
    session
}

/// The demo shop generator (examples/demo_shop.rs), which `cargo test`
/// builds next to the test binaries.
pub fn demo_shop_generator() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir
        .join("examples")
        .join(format!("demo_shop{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run the whole suite with `cargo test` (or `bash .ci/test`), which builds the examples",
        path.display()
    );
    path
}
