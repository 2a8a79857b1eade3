//! Real database servers for the tests: PostgreSQL and MariaDB from the
//! machine's packages, each started once per test process on 127.0.0.1 on a
//! free port with a temporary data directory, loaded with the shop fixture,
//! and stopped when the process ends (at exit, or by the kernel if the
//! process dies first). Nothing listens beyond the loopback interface.
//!
//! A machine without the servers skips these tests with a loud message,
//! unless `AIQ_REQUIRE_SERVERS=1` (set by CI), where a missing server fails.

#![allow(dead_code)]

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::shop::shop_sql;

/// The login the tests connect with: it owns the shop tables, so every
/// refusal the tests see comes from aiq, not from missing privileges.
pub const USER: &str = "analyst";
/// A made-up password for the test servers only.
pub const PASSWORD: &str = "pw-Analyst-4711";

/// One running server.
pub struct Server {
    pub port: u16,
    pub engine: Engine,
    pub dir: PathBuf,
    bin: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Postgres,
    MariaDb,
}

impl Server {
    /// `postgres://analyst:PASSWORD@127.0.0.1:PORT/shop` (or `mysql://…`).
    pub fn url(&self) -> String {
        format!(
            "{}://{USER}:{PASSWORD}@127.0.0.1:{}/shop",
            self.scheme(),
            self.port
        )
    }

    /// The certificate authority that signed the server's TLS certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The same without the password.
    pub fn url_without_password(&self) -> String {
        format!("{}://{USER}@127.0.0.1:{}/shop", self.scheme(), self.port)
    }

    fn scheme(&self) -> &'static str {
        match self.engine {
            Engine::Postgres => "postgres",
            Engine::MariaDb => "mysql",
        }
    }

    /// Runs SQL as the server's superuser with its own client, in database
    /// `shop`; returns the output (tab-separated, no headers).
    pub fn admin(&self, sql: &str) -> String {
        self.admin_in("shop", sql)
    }

    /// [`Server::admin`] in `database`.
    pub fn admin_in(&self, database: &str, sql: &str) -> String {
        let mut cmd = match self.engine {
            Engine::Postgres => {
                let mut c = Command::new(self.bin.join("psql"));
                c.args(["-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1"])
                    .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database])
                    .arg("-p")
                    .arg(self.port.to_string());
                c
            }
            Engine::MariaDb => {
                let mut c = Command::new("mariadb");
                c.args(["--no-defaults", "-N", "-B", "-u", "root", database])
                    .arg(format!("--socket={}", self.dir.join("sock").display()));
                c
            }
        };
        pipe_sql(&mut cmd, sql).unwrap_or_else(|e| panic!("admin SQL failed: {sql}\n{e}"))
    }

    /// Runs SQL with the server's own client as `user` over TCP, in
    /// `database`: the output, or the server's error.
    pub fn as_login(
        &self,
        user: &str,
        password: &str,
        database: &str,
        sql: &str,
    ) -> Result<String, String> {
        let mut cmd = match self.engine {
            Engine::Postgres => {
                let mut c = Command::new(self.bin.join("psql"));
                c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
                    .args(["-h", "127.0.0.1", "-U", user, "-d", database])
                    .arg("-p")
                    .arg(self.port.to_string())
                    .env("PGPASSWORD", password);
                c
            }
            Engine::MariaDb => {
                let mut c = Command::new("mariadb");
                c.args(["--no-defaults", "-N", "-B", "-h", "127.0.0.1", "-u", user])
                    .arg(database)
                    .arg(format!("--port={}", self.port))
                    .env("MYSQL_PWD", password);
                c
            }
        };
        pipe_sql(&mut cmd, sql)
    }

    /// Runs SQL with the server's own client as the test login [`USER`]
    /// over TCP, in a read-only session as aiq opens one; the output, or
    /// the server's error.
    pub fn as_login_read_only(&self, sql: &str) -> Result<String, String> {
        let mut cmd = match self.engine {
            Engine::Postgres => {
                let mut c = Command::new(self.bin.join("psql"));
                c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
                    .args(["-h", "127.0.0.1", "-U", USER, "-d", "shop"])
                    .arg("-p")
                    .arg(self.port.to_string())
                    .env("PGPASSWORD", PASSWORD)
                    .env("PGOPTIONS", "-c default_transaction_read_only=on");
                c
            }
            Engine::MariaDb => {
                let mut c = Command::new("mariadb");
                c.args([
                    "--no-defaults",
                    "-N",
                    "-B",
                    "-h",
                    "127.0.0.1",
                    "-u",
                    USER,
                    "shop",
                ])
                .arg(format!("--port={}", self.port))
                .args(["--init-command", "SET SESSION TRANSACTION READ ONLY"])
                .env("MYSQL_PWD", PASSWORD);
                c
            }
        };
        pipe_sql(&mut cmd, sql)
    }

    /// Every row of the fixture's tables and the list of all tables, to
    /// prove nothing changed.
    pub fn shop_snapshot(&self) -> String {
        let mut out = self.admin_tables().join(",");
        out.push('\n');
        for table in ["customers", "orders", "kinds"] {
            out.push_str(&format!("== {table}\n"));
            out.push_str(&self.admin(&format!("SELECT * FROM {table} ORDER BY 1")));
        }
        out
    }

    fn admin_tables(&self) -> Vec<String> {
        let sql = match self.engine {
            Engine::Postgres => "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
            Engine::MariaDb => "SELECT table_name FROM information_schema.tables WHERE table_schema = 'shop' ORDER BY 1",
        };
        self.admin(sql).lines().map(str::to_string).collect()
    }
}

/// The PostgreSQL server of this test process, or `None` (with a message)
/// when the machine has none and CI did not require one.
pub fn postgres() -> Option<&'static Server> {
    static PG: OnceLock<Option<Server>> = OnceLock::new();
    PG.get_or_init(|| start_or_skip(Engine::Postgres)).as_ref()
}

/// The MariaDB server of this test process (see [`postgres`]).
pub fn mariadb() -> Option<&'static Server> {
    static DB: OnceLock<Option<Server>> = OnceLock::new();
    DB.get_or_init(|| start_or_skip(Engine::MariaDb)).as_ref()
}

fn start_or_skip(engine: Engine) -> Option<Server> {
    started_or_skipped(&format!("{engine:?}"), || match engine {
        Engine::Postgres => start_postgres(),
        Engine::MariaDb => start_mariadb(),
    })
}

/// What `start` started, or `None` with a loud message when it could not
/// — a failure instead under `AIQ_REQUIRE_SERVERS=1`.
pub(crate) fn started_or_skipped<T>(
    what: &str,
    start: impl FnOnce() -> Result<T, String>,
) -> Option<T> {
    match start() {
        Ok(server) => Some(server),
        Err(why) if std::env::var("AIQ_REQUIRE_SERVERS").as_deref() == Ok("1") => {
            panic!("{what} is required (AIQ_REQUIRE_SERVERS=1) but could not start: {why}")
        }
        Err(why) => {
            eprintln!(
                "\n!!!! SKIPPING {what} tests: {why}\n!!!! install the server (see .ci/run) to run them\n"
            );
            None
        }
    }
}

/// Processes and folders to clean up when the test process exits.
static STARTED: Mutex<Vec<(u32, PathBuf, i32)>> = Mutex::new(Vec::new());

extern "C" fn stop_all() {
    let started = STARTED.lock().map(|s| s.clone()).unwrap_or_default();
    for (pid, _, signal) in &started {
        unsafe {
            libc::kill(*pid as i32, *signal);
        }
    }
    for (pid, dir, _) in &started {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && unsafe { libc::kill(*pid as i32, 0) } == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A folder for one server of this process, after removing folders that
/// processes which no longer run left behind.
pub(crate) fn server_dir(name: &str) -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join("aiq-test-servers");
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    set_mode(&base, 0o755);
    if let Ok(entries) = std::fs::read_dir(&base) {
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let pid = file.rsplit('-').next().and_then(|p| p.parse::<i32>().ok());
            if let Some(pid) = pid {
                if unsafe { libc::kill(pid, 0) } != 0 {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
    }
    let dir = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

/// Runs a database client with `sql` on its stdin: its output, or what
/// it said on stderr when it failed.
pub(crate) fn pipe_sql(cmd: &mut Command, sql: &str) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(sql.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run the database client");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The uid/gid to run as: `postgres` when the tests run as root (PostgreSQL
/// refuses to run as root), else the current user.
fn run_as(user: &str) -> Result<Option<(u32, u32)>, String> {
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new(user).unwrap();
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(format!(
            "running as root and there is no '{user}' user to run the server as"
        ));
    }
    Ok(Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) }))
}

/// A command that runs as `who` and gets `signal` when the thread that
/// started it ends (see [`spawn_server`]).
pub(crate) fn command(program: &Path, who: Option<(u32, u32)>, signal: Option<i32>) -> Command {
    let mut cmd = Command::new(program);
    unsafe {
        cmd.pre_exec(move || {
            if let Some((uid, gid)) = who {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(sig) = signal {
                libc::prctl(libc::PR_SET_PDEATHSIG, sig);
            }
            Ok(())
        });
    }
    cmd
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Starts the server from a thread that never ends, so the kernel's
/// parent-death signal reaches it only when the whole test process is gone.
pub(crate) fn spawn_server(mut cmd: Command, dir: &Path, signal: i32) -> Result<u32, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null()).stdout(log).stderr(log2);
    std::thread::spawn(move || {
        let child = cmd.spawn();
        let _ = tx.send(child.map(|c| c.id()).map_err(|e| e.to_string()));
        loop {
            std::thread::park();
        }
    });
    let pid = rx.recv().map_err(|e| e.to_string())??;
    let mut started = STARTED.lock().unwrap();
    if started.is_empty() {
        unsafe {
            libc::atexit(stop_all);
        }
    }
    started.push((pid, dir.to_path_buf(), signal));
    Ok(pid)
}

pub(crate) fn wait_until(
    what: &str,
    dir: &Path,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        if ready() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    Err(format!("{what} did not come up within 90 s:\n{log}"))
}

/// A throwaway certificate authority and a server certificate for
/// 127.0.0.1 signed by it, in `dir` (`ca.pem`, `server.crt`, `server.key`).
fn make_certificates(dir: &Path) -> Result<(), String> {
    let openssl =
        |args: &[&str], what: &str| run(Command::new("openssl").current_dir(dir).args(args), what);
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "3",
                "-subj",
                "/CN=aiq test CA",
            ],
        ]
        .concat(),
        "openssl (CA)",
    )?;
    openssl(
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
        "openssl (request)",
    )?;
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .map_err(|e| e.to_string())?;
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "3",
            "-extfile",
            "san.ext",
        ],
        "openssl (sign)",
    )?;
    set_mode(&dir.join("server.key"), 0o600);
    Ok(())
}

pub(crate) fn postgres_bindir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("AIQ_PG_BINDIR") {
        return Some(PathBuf::from(dir));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists() && p.join("postgres").exists())
        .collect();
    dirs.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop()
}

fn start_postgres() -> Result<Server, String> {
    let server = launch_postgres("pg")?;
    server.admin(&format!(
        "SET ROLE {USER};
         {}
         CREATE TYPE mood AS ENUM ('sad', 'happy');
         CREATE TABLE kinds (id int PRIMARY KEY, small smallint, big bigint,
           exact numeric(30,10), r real, dbl double precision, t text, flag boolean,
           d date, tm time, ts timestamp, tstz timestamptz, iv interval, j json, jb jsonb,
           u uuid, b bytea, arr int[], tags text[], ip inet, m mood);
         INSERT INTO kinds VALUES (1, -32768, 9223372036854775807,
           12345678901234567890.0123456789, 0.1, 0.1, 'héllo \"x\"', true,
           '2024-02-29', '13:05:09.5', '2024-02-29 13:05:09', '2024-02-29 13:05:09+02',
           '1 year 2 mons 3 days 04:05:06', '{{\"a\": [1, 2]}}', '{{\"b\": null}}',
           'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\xdeadbeef', '{{1,NULL,3}}',
           '{{\"a b\",c}}', '192.168.0.1', 'happy');
         INSERT INTO kinds (id) VALUES (2);
         CREATE VIEW big_spenders AS SELECT customer_id, sum(total) AS spent FROM orders GROUP BY customer_id;
         CREATE TABLE scratch (n int);
         RESET ROLE;
         CREATE TABLE secret_notes (note text);
         INSERT INTO secret_notes VALUES ('classified');
         ANALYZE;",
        shop_sql("TEXT")
    ));
    Ok(server)
}

/// A PostgreSQL server of its own (folder `name-PID`), with the database
/// `shop` and the login [`USER`] that may create tables in it; nothing in
/// it yet.
pub(crate) fn launch_postgres(name: &str) -> Result<Server, String> {
    let bin = postgres_bindir().ok_or(
        "no PostgreSQL server found (/usr/lib/postgresql/*/bin; Debian package postgresql)",
    )?;
    let who = run_as("postgres")?;
    let dir = server_dir(name)?;
    let data = dir.join("data");
    make_certificates(&dir)?;
    if let Some((uid, gid)) = who {
        for path in [dir.clone(), dir.join("server.key"), dir.join("server.crt")] {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
        }
    }
    run(
        command(&bin.join("initdb"), who, None)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "-N",
            ]),
        "initdb",
    )?;
    let hba = "local all all trust\n\
               host all postgres 127.0.0.1/32 trust\n\
               host all all 127.0.0.1/32 scram-sha-256\n";
    std::fs::write(data.join("pg_hba.conf"), hba).map_err(|e| e.to_string())?;
    let port = free_port();
    let mut cmd = command(&bin.join("postgres"), who, Some(libc::SIGQUIT));
    cmd.arg("-D")
        .arg(&data)
        .arg("-p")
        .arg(port.to_string())
        .arg("-k")
        .arg(&dir)
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
        .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
        .args([
            "-c",
            "shared_buffers=32MB",
            "-c",
            "max_connections=40",
            "-c",
            "ssl=on",
        ])
        .arg("-c")
        .arg(format!(
            "ssl_cert_file={}",
            dir.join("server.crt").display()
        ))
        .arg("-c")
        .arg(format!("ssl_key_file={}", dir.join("server.key").display()));
    spawn_server(cmd, &dir, libc::SIGQUIT)?;
    let server = Server {
        port,
        engine: Engine::Postgres,
        dir: dir.clone(),
        bin: bin.clone(),
    };
    // psql as the superuser on the maintenance database.
    let psql = |sql: &str| {
        let mut c = Command::new(bin.join("psql"));
        c.args([
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
        ])
        .arg("-p")
        .arg(port.to_string())
        .args(["-c", sql]);
        c
    };
    wait_until("PostgreSQL", &dir, || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
            && psql("SELECT 1")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    })?;
    run(&mut psql("CREATE DATABASE shop"), "CREATE DATABASE")?;
    server.admin(&format!(
        "CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}';
         GRANT ALL ON SCHEMA public TO {USER};"
    ));
    Ok(server)
}

fn start_mariadb() -> Result<Server, String> {
    let server = launch_mariadb("mariadb")?;
    server.admin(&format!(
        "{}
         CREATE TABLE kinds (id INT PRIMARY KEY, small SMALLINT, big BIGINT,
           ubig BIGINT UNSIGNED, exact DECIMAL(30,10), dbl DOUBLE, t VARCHAR(50),
           flag BOOLEAN, d DATE, tm TIME, ts DATETIME(6), j JSON, b VARBINARY(8),
           e ENUM('a','b'), bits BIT(8));
         INSERT INTO kinds VALUES (1, -32768, 9223372036854775807, 18446744073709551615,
           12345678901234567890.0123456789, 0.1, 'héllo', true, '2024-02-29', '13:05:09',
           '2024-02-29 13:05:09.250000', '{{\"a\": [1, 2]}}', X'DEADBEEF', 'b', b'00000101');
         INSERT INTO kinds (id) VALUES (2);
         CREATE VIEW big_spenders AS SELECT customer_id, sum(total) AS spent FROM orders GROUP BY customer_id;
         CREATE TABLE scratch (n int);
         ANALYZE TABLE customers, orders, kinds;",
        shop_sql("VARCHAR(40)")
    ));
    Ok(server)
}

/// A MariaDB server of its own (folder `name-PID`), with the database
/// `shop` and the login [`USER`] that may do anything in it; nothing in
/// it yet.
pub(crate) fn launch_mariadb(name: &str) -> Result<Server, String> {
    let install = which("mariadb-install-db")
        .ok_or("no MariaDB server found (mariadb-install-db; Debian package mariadb-server)")?;
    let mariadbd = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .or_else(|| which("mariadbd"))
        .ok_or("no mariadbd binary found (Debian package mariadb-server)")?;
    let root = unsafe { libc::geteuid() } == 0;
    let dir = server_dir(name)?;
    let data = dir.join("data");
    make_certificates(&dir)?;
    let mut init = Command::new(&install);
    init.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .args(["--skip-name-resolve"]);
    if root {
        init.arg("--user=root");
    }
    run(&mut init, "mariadb-install-db")?;
    let port = free_port();
    let sock = dir.join("sock");
    let mut cmd = command(&mariadbd, None, Some(libc::SIGKILL));
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--port={port}"))
        .arg(format!("--socket={}", sock.display()))
        .arg(format!("--pid-file={}", dir.join("pid").display()))
        .args([
            "--bind-address=127.0.0.1",
            "--skip-log-bin",
            "--skip-name-resolve",
        ])
        .args([
            "--innodb-buffer-pool-size=32M",
            "--innodb-flush-log-at-trx-commit=0",
        ])
        .args(["--max-connections=40"])
        .arg(format!("--ssl-cert={}", dir.join("server.crt").display()))
        .arg(format!("--ssl-key={}", dir.join("server.key").display()))
        .arg(format!("--ssl-ca={}", dir.join("ca.pem").display()));
    if root {
        cmd.arg("--user=root");
    }
    spawn_server(cmd, &dir, libc::SIGKILL)?;
    wait_until("MariaDB", &dir, || {
        Command::new("mariadb")
            .args(["--no-defaults", "-u", "root", "-e", "SELECT 1"])
            .arg(format!("--socket={}", sock.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })?;
    run(
        Command::new("mariadb")
            .args(["--no-defaults", "-u", "root"])
            .arg(format!("--socket={}", sock.display()))
            .args([
                "-e",
                &format!(
                    "CREATE DATABASE shop; CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; \
                     GRANT ALL ON shop.* TO '{USER}'@'%';"
                ),
            ]),
        "create the shop database",
    )?;
    let server = Server {
        port,
        engine: Engine::MariaDb,
        dir,
        bin: PathBuf::new(),
    };
    Ok(server)
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into()])
        .map(|d| d.join(name))
        .find(|p| p.exists())
}
