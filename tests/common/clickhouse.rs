//! A real two-shard ClickHouse cluster for the tests: two
//! `clickhouse-server` processes from the machine's packages, started once
//! per test process on 127.0.0.1 on free ports with temporary data
//! directories, each naming both in `<remote_servers>` as the cluster
//! `two_shards`. Database `shop` on each shard holds the shop fixture, a
//! `kinds` table of typed values, the hidden table `payroll`, and
//! `events_local` (three rows per shard) under the `Distributed` table
//! `events`. Stopped when the test process ends (at exit, or by the kernel
//! if the process dies first).
//!
//! A machine without the server skips these tests with a loud message,
//! unless `AIQ_REQUIRE_SERVERS=1` (set by CI), where a missing server fails.

#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::attack::{HIDDEN_NUMBER, HIDDEN_TEXT};
use super::servers::{command, free_port, server_dir, spawn_server, wait_until, PASSWORD, USER};
use super::shop::{CUSTOMERS, ORDERS};

/// One server of the cluster.
pub struct Shard {
    pub http_port: u16,
    pub tcp_port: u16,
    dir: PathBuf,
}

/// The two shards; the first is the one aiq connects to.
pub struct Cluster {
    pub shards: [Shard; 2],
}

impl Shard {
    /// `clickhouse://analyst:PASSWORD@127.0.0.1:PORT/shop`.
    pub fn url(&self) -> String {
        format!(
            "clickhouse://{USER}:{PASSWORD}@127.0.0.1:{}/shop",
            self.http_port
        )
    }

    /// The same without the password.
    pub fn url_without_password(&self) -> String {
        format!("clickhouse://{USER}@127.0.0.1:{}/shop", self.http_port)
    }

    /// Runs SQL (`;`-separated statements) as the server's `default`
    /// login with its own client, in database `shop` once it exists;
    /// returns the output (tab-separated, no headers).
    pub fn admin(&self, sql: &str) -> String {
        let mut cmd = Command::new("clickhouse-client");
        cmd.args(["--host", "127.0.0.1", "--multiquery"])
            .arg(format!("--port={}", self.tcp_port))
            .arg("--allow_experimental_low_cardinality_type=1");
        super::servers::pipe_sql(&mut cmd, sql)
            .unwrap_or_else(|e| panic!("admin SQL failed: {sql}\n{e}"))
    }

    /// Where the server reads further users and profiles from (it reads
    /// a file put there within seconds).
    pub fn users_d(&self) -> PathBuf {
        self.dir.join("users.d")
    }

    /// Runs SQL as `user` with the server's own client, in `database`:
    /// the output, or the server's error.
    pub fn as_login(
        &self,
        user: &str,
        password: &str,
        database: &str,
        sql: &str,
    ) -> Result<String, String> {
        let mut cmd = Command::new("clickhouse-client");
        cmd.args([
            "--host",
            "127.0.0.1",
            "--user",
            user,
            "--password",
            password,
        ])
        .arg(format!("--port={}", self.tcp_port))
        .arg(format!("--database={database}"));
        super::servers::pipe_sql(&mut cmd, sql)
    }

    /// Every database and table of the server and every row of the shop's
    /// tables, to prove nothing changed.
    pub fn snapshot(&self) -> String {
        let mut out = self.admin(
            "SELECT database, name, engine, metadata_modification_time FROM system.tables \
             WHERE database != 'system' ORDER BY database, name",
        );
        out.push_str(&self.admin("SELECT name FROM system.databases ORDER BY name"));
        for table in ["customers", "orders", "kinds", "payroll", "events_local"] {
            out.push_str(&format!("== {table}\n"));
            out.push_str(&self.admin(&format!("SELECT * FROM shop.{table} ORDER BY id")));
        }
        out
    }

    /// The statements running on this server whose text contains `marker`
    /// (but not this question itself).
    pub fn running(&self, marker: &str) -> usize {
        self.admin(&format!(
            "SELECT count() FROM system.processes WHERE query LIKE '%{marker}%' \
             AND query NOT LIKE '%system.processes%'"
        ))
        .trim()
        .parse()
        .unwrap_or(0)
    }
}

impl Cluster {
    pub fn first(&self) -> &Shard {
        &self.shards[0]
    }

    /// Both shards' snapshots.
    pub fn snapshot(&self) -> String {
        self.shards
            .iter()
            .map(Shard::snapshot)
            .collect::<Vec<_>>()
            .join("\n#### next shard\n")
    }
}

/// The cluster of this test process, or `None` (with a message) when the
/// machine has no ClickHouse server and CI did not require one.
pub fn cluster() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| match start() {
            Ok(c) => Some(c),
            Err(why) if std::env::var("AIQ_REQUIRE_SERVERS").as_deref() == Ok("1") => {
                panic!("ClickHouse is required (AIQ_REQUIRE_SERVERS=1) but could not start: {why}")
            }
            Err(why) => {
                eprintln!(
                    "\n!!!! SKIPPING ClickHouse tests: {why}\n!!!! install clickhouse-server and clickhouse-client (see .ci/run) to run them\n"
                );
                None
            }
        })
        .as_ref()
}

fn binary() -> Option<PathBuf> {
    ["/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn start() -> Result<Cluster, String> {
    let server = binary().ok_or("no clickhouse-server found (Debian package clickhouse-server)")?;
    if Command::new("clickhouse-client")
        .arg("--version")
        .output()
        .is_err()
    {
        return Err("no clickhouse-client found (Debian package clickhouse-client)".into());
    }
    let ports: Vec<(u16, u16)> = (0..2).map(|_| (free_port(), free_port())).collect();
    let mut shards = Vec::new();
    for (i, (http_port, tcp_port)) in ports.iter().enumerate() {
        let dir = server_dir(&format!("clickhouse{i}"))?;
        write_config(&dir, *http_port, *tcp_port, &ports)?;
        let mut cmd = command(&server, None, Some(libc::SIGKILL));
        cmd.arg(format!(
            "--config-file={}",
            dir.join("config.xml").display()
        ))
        .current_dir(&dir);
        spawn_server(cmd, &dir, libc::SIGKILL)?;
        shards.push(Shard {
            http_port: *http_port,
            tcp_port: *tcp_port,
            dir,
        });
    }
    for shard in &shards {
        wait_until("ClickHouse", &shard.dir, || ping(shard.http_port))?;
    }
    let cluster = Cluster {
        shards: [shards.remove(0), shards.remove(0)],
    };
    for (i, shard) in cluster.shards.iter().enumerate() {
        shard.admin(&fixture(i));
    }
    // Ten million rows on the first shard, for streaming and cancelling.
    cluster.first().admin(
        "CREATE TABLE shop.big ENGINE = MergeTree ORDER BY n AS \
         SELECT number AS n, toString(number) AS s FROM numbers(10000000)",
    );
    Ok(cluster)
}

/// Whether the HTTP interface answers `/ping`.
fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /ping HTTP/1.0\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.ends_with("Ok.\n")
}

fn write_config(dir: &Path, http: u16, tcp: u16, all: &[(u16, u16)]) -> Result<(), String> {
    let d = dir.display();
    let shards: String = all
        .iter()
        .map(|(_, tcp)| {
            format!("<shard><replica><host>127.0.0.1</host><port>{tcp}</port></replica></shard>")
        })
        .collect();
    let config = format!(
        "<yandex>
  <logger><level>warning</level><log>{d}/log.txt</log><errorlog>{d}/err.txt</errorlog></logger>
  <http_port>{http}</http_port><tcp_port>{tcp}</tcp_port><listen_host>127.0.0.1</listen_host>
  <keep_alive_timeout>1</keep_alive_timeout>
  <path>{d}/data/</path><tmp_path>{d}/tmp/</tmp_path><user_files_path>{d}/user_files/</user_files_path>
  <format_schema_path>{d}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config><default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <remote_servers><two_shards>{shards}</two_shards></remote_servers>
</yandex>
"
    );
    // `analyst` reads and writes `shop` like the other engines' test login,
    // so every refusal the tests see comes from aiq; `viewer`'s profile is
    // read-only already.
    let users = format!(
        "<yandex>
  <profiles><default></default><ro><readonly>1</readonly></ro></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
    <{USER}><password>{PASSWORD}</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></{USER}>
    <viewer><password>{PASSWORD}</password><networks><ip>127.0.0.1</ip></networks><profile>ro</profile><quota>default</quota></viewer>
  </users>
  <quotas><default></default></quotas>
</yandex>
"
    );
    std::fs::write(dir.join("config.xml"), config).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("users.xml"), users).map_err(|e| e.to_string())
}

/// Shard `i`'s tables: the same shop tables on both (so a write through
/// either would show), and its three of the six `events` rows.
fn fixture(i: usize) -> String {
    let mut sql = String::from(
        "CREATE DATABASE shop;
         CREATE TABLE shop.customers (id Int32, name String, country LowCardinality(String), vip UInt8, signup Date) ENGINE = MergeTree ORDER BY id;
         CREATE TABLE shop.orders (id Int32, customer_id Int32, total Decimal(10, 2), ordered_at DateTime, status LowCardinality(String)) ENGINE = MergeTree ORDER BY id;
         CREATE TABLE shop.events_local (id UInt64, day Date, kind LowCardinality(String), amount Decimal(10, 2)) ENGINE = MergeTree ORDER BY (day, id);
         CREATE TABLE shop.events AS shop.events_local ENGINE = Distributed(two_shards, shop, events_local, id);
         CREATE TABLE shop.kinds (id UInt64, i8 Int8, u64 UInt64, i64 Int64, dec Decimal(38, 10), f Float64, s Nullable(String), lc LowCardinality(String), fs FixedString(4), d Date, dt DateTime, dtz DateTime('Asia/Tokyo'), u UUID, e Enum8('small' = 1, 'large' = 2), arr Array(Nullable(String)), nested Array(Array(UInt32)), tup Tuple(Int32, String), ip UInt32) ENGINE = MergeTree ORDER BY id;
         CREATE TABLE shop.payroll (id UInt32, salary_cents UInt32, secret_note String) ENGINE = MergeTree ORDER BY id;
         CREATE VIEW shop.big_spenders AS SELECT customer_id, sum(total) AS spent FROM shop.orders GROUP BY customer_id;
         CREATE VIEW shop.staff_view AS SELECT id, salary_cents, secret_note FROM shop.payroll;\n",
    );
    for (id, name, country, vip, signup) in CUSTOMERS {
        sql.push_str(&format!(
            "INSERT INTO shop.customers VALUES ({id}, '{name}', '{country}', {}, '{signup}');\n",
            vip as u8
        ));
    }
    for (id, cid, total, at, status) in ORDERS {
        sql.push_str(&format!(
            "INSERT INTO shop.orders VALUES ({id}, {cid}, {total}, '{at}', '{status}');\n"
        ));
    }
    let kinds = ["click", "view", "buy"];
    for k in 0..3u64 {
        let id = i as u64 * 3 + k + 1;
        sql.push_str(&format!(
            "INSERT INTO shop.events_local VALUES ({id}, '2024-06-0{id}', '{}', {id}.50);\n",
            kinds[k as usize]
        ));
    }
    sql.push_str(&format!(
        "INSERT INTO shop.kinds VALUES (1, -128, 18446744073709551615, -9223372036854775808, 12345678901234567890.0123456789, 0.1, 'tab\\there', 'x', 'ab', '2024-02-29', '2024-02-29 13:05:09', '2024-02-29 13:05:09', '61f0c404-5cb3-11e7-907b-a6006ad3dba0', 'large', ['a', NULL, 'it\\'s'], [[1, 2], [3]], (7, 'seven'), 16909060);
         INSERT INTO shop.kinds (id) VALUES (2);
         INSERT INTO shop.payroll VALUES (1, {HIDDEN_NUMBER}, '{HIDDEN_TEXT}');\n"
    ));
    sql
}
