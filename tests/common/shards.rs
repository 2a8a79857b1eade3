//! Setups bigger than one server, started once per test process like
//! tests/common/servers.rs's (127.0.0.1, free ports, temporary folders):
//!
//! - **Spider**: two MariaDB shards and a head with MariaDB's Spider
//!   engine, whose `customers`, `orders` and `events` are Spider tables
//!   partitioned across the shards (the rows live on the shards only), a
//!   plain partitioned table `visits` and the hidden `payroll`.
//! - **PostgreSQL partitions**: a head whose `events` is partitioned by
//!   month into 100 partitions, whose `orders` and `readings` are
//!   partitioned into `postgres_fdw` foreign tables on two more servers
//!   (`readings` is a view of billions of generated rows there, a query
//!   slow enough to cancel), with `customers` and the hidden `payroll`
//!   local.
//!
//! The shards are reached with their own login (`link`), which may write
//! there: what stops a write is aiq, never a missing privilege.

#![allow(dead_code)]

use std::path::Path;

use super::attack::{HIDDEN_NUMBER, HIDDEN_TEXT};
use super::servers::{self, launch_mariadb, launch_postgres, Server, USER};
use super::shop::{CUSTOMERS, ORDERS};

/// The shards' login for the head, made up for the test servers only.
pub const LINK_PASSWORD: &str = "pw-Link-5521";

/// Partitions of the PostgreSQL `events` table.
pub const EVENT_PARTITIONS: usize = 100;
/// Rows each remote server generates for `readings` (streamed, never
/// stored): scanning them takes minutes, so a query still running after a
/// cancel would show.
pub const READINGS: i64 = 2_000_000_000;
/// Rows of `events` (PostgreSQL) and of the Spider `events`.
pub const EVENTS: usize = 2000;

/// A Spider head and its two shards.
pub struct Spider {
    pub head: Server,
    pub shards: [Server; 2],
}

/// A PostgreSQL head with partitions, and the two servers that hold its
/// foreign partitions.
pub struct PgParts {
    pub head: Server,
    pub remotes: [Server; 2],
}

/// The Spider setup of this test process (see the module's doc).
pub fn spider() -> Option<&'static Spider> {
    static S: std::sync::OnceLock<Option<Spider>> = std::sync::OnceLock::new();
    S.get_or_init(|| servers::started_or_skipped("MariaDB Spider", start_spider))
        .as_ref()
}

/// The partitioned PostgreSQL setup of this test process.
pub fn pg_parts() -> Option<&'static PgParts> {
    static S: std::sync::OnceLock<Option<PgParts>> = std::sync::OnceLock::new();
    S.get_or_init(|| servers::started_or_skipped("PostgreSQL partitions", start_pg_parts))
        .as_ref()
}

/// Starts three servers at once (they spend most of their start waiting).
fn three(
    names: [&str; 3],
    launch: fn(&str) -> Result<Server, String>,
) -> Result<[Server; 3], String> {
    let started: Vec<Result<Server, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| s.spawn(move || launch(name)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
            .collect()
    });
    // A server that failed to start beside the others (a busy 2-core
    // machine) is given one more try on its own.
    let mut out = Vec::new();
    for (s, name) in started.into_iter().zip(names) {
        out.push(match s {
            Ok(server) => server,
            Err(first) => {
                eprintln!("{name} did not start ({first}); trying once more");
                launch(name)?
            }
        });
    }
    out.try_into().map_err(|_| "three servers".to_string())
}

fn customers_values() -> String {
    CUSTOMERS
        .iter()
        .map(|(id, name, country, vip, signup)| {
            format!("({id}, '{name}', '{country}', {vip}, '{signup}')")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn orders_values(keep: impl Fn(i64) -> bool) -> String {
    ORDERS
        .iter()
        .filter(|o| keep(o.0))
        .map(|(id, cid, total, at, status)| format!("({id}, {cid}, {total}, '{at}', '{status}')"))
        .collect::<Vec<_>>()
        .join(", ")
}

const MARIADB_TABLES: &str = "
    CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, country VARCHAR(40) NOT NULL,
      vip BOOLEAN NOT NULL, signup DATE NOT NULL)@;
    CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2) NOT NULL,
      ordered_at DATETIME NOT NULL, status VARCHAR(40) NOT NULL)@;
    CREATE TABLE events (id INT PRIMARY KEY, v INT NOT NULL)@;";

fn spider_plugin() -> Result<(), String> {
    let dirs = ["/usr/lib/mysql/plugin", "/usr/lib64/mysql/plugin"];
    if dirs
        .iter()
        .any(|d| Path::new(d).join("ha_spider.so").exists())
    {
        Ok(())
    } else {
        Err("no Spider plugin (ha_spider.so; Debian package mariadb-plugin-spider)".into())
    }
}

fn start_spider() -> Result<Spider, String> {
    spider_plugin()?;
    let [s0, s1, head] = three(
        ["spider-shard0", "spider-shard1", "spider-head"],
        launch_mariadb,
    )?;
    for shard in [&s0, &s1] {
        shard.admin(&format!(
            "CREATE USER 'link'@'%' IDENTIFIED BY '{LINK_PASSWORD}'; GRANT ALL ON shop.* TO 'link'@'%';
             {}",
            MARIADB_TABLES.replace('@', "")
        ));
    }
    let server = |name: &str, s: &Server| {
        format!(
            "CREATE SERVER {name} FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT {}, \
             USER 'link', PASSWORD '{LINK_PASSWORD}', DATABASE 'shop');",
            s.port
        )
    };
    let spider = |table: &str, key: &str| {
        format!(
            " ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"{table}\"' PARTITION BY {key} \
             (PARTITION p0 {}COMMENT='srv \"shard0\"', PARTITION p1 {}COMMENT='srv \"shard1\"')",
            if key.starts_with("RANGE") {
                "VALUES LESS THAN (1001) "
            } else {
                ""
            },
            if key.starts_with("RANGE") {
                "VALUES LESS THAN MAXVALUE "
            } else {
                ""
            },
        )
    };
    let tables = MARIADB_TABLES
        .replacen('@', &spider("customers", "HASH (id)"), 1)
        .replacen('@', &spider("orders", "HASH (id)"), 1)
        .replacen('@', &spider("events", "RANGE (id)"), 1);
    head.admin(&format!(
        "INSTALL SONAME 'ha_spider';
         {} {}
         {tables}
         INSERT INTO customers VALUES {};
         INSERT INTO orders VALUES {};
         INSERT INTO events SELECT seq, seq % 7 FROM seq_1_to_{EVENTS};
         CREATE TABLE visits (id INT NOT NULL, day DATE NOT NULL, page VARCHAR(40) NOT NULL)
           PARTITION BY RANGE (YEAR(day)) (PARTITION y2020 VALUES LESS THAN (2021),
           PARTITION y2021 VALUES LESS THAN (2022), PARTITION y2022 VALUES LESS THAN (2023),
           PARTITION later VALUES LESS THAN MAXVALUE);
         INSERT INTO visits VALUES (1, '2020-03-01', 'home'), (2, '2021-06-01', 'cart'), (3, '2023-01-01', 'home');
         CREATE TABLE payroll (emp_id INT, salary_cents INT, secret_note VARCHAR(40));
         INSERT INTO payroll VALUES (1, {HIDDEN_NUMBER}, '{HIDDEN_TEXT}');
         ANALYZE TABLE visits, payroll;",
        server("shard0", &s0),
        server("shard1", &s1),
        customers_values(),
        orders_values(|_| true),
    ));
    Ok(Spider {
        head,
        shards: [s0, s1],
    })
}

impl Spider {
    /// The rows on each shard and the tables on every server: what a
    /// statement through the head must never change.
    pub fn snapshot(&self) -> String {
        let mut out = String::new();
        for (i, shard) in self.shards.iter().enumerate() {
            out.push_str(&format!("== shard{i}\n"));
            out.push_str(&shard.admin(
                "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'shop';
                 SELECT * FROM customers ORDER BY id; SELECT * FROM orders ORDER BY id;
                 SELECT count(*), sum(v) FROM events;",
            ));
        }
        out.push_str("== head\n");
        out.push_str(&self.head.admin(
            "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'shop';
             SELECT * FROM payroll; SELECT * FROM visits ORDER BY id;
             SELECT GROUP_CONCAT(Server_name, Host, Port) FROM mysql.servers;",
        ));
        out
    }
}

fn start_pg_parts() -> Result<PgParts, String> {
    if !Path::new(&format!("{}/postgres_fdw.so", pg_libdir()?)).exists() {
        return Err("no postgres_fdw (Debian package postgresql)".into());
    }
    let [head, a, b] = three(["pgparts-head", "pgparts-a", "pgparts-b"], launch_postgres)?;
    for (remote, ids, first) in [(&a, 1..=3, 1i64), (&b, 4..=6, READINGS + 1)] {
        remote.admin(&format!(
            "CREATE ROLE link LOGIN PASSWORD '{LINK_PASSWORD}';
             CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, total numeric(10,2) NOT NULL,
               ordered_at timestamp NOT NULL, status text NOT NULL);
             INSERT INTO orders VALUES {};
             CREATE VIEW readings AS SELECT g AS id, (g % 10)::int AS sensor
               FROM (SELECT generate_series({first}::int8, {}::int8) AS g) s;
             GRANT ALL ON orders TO link; GRANT SELECT ON readings TO link;",
            orders_values(|id| ids.contains(&id)),
            first + READINGS - 1,
        ));
    }
    let server = |name: &str, s: &Server| {
        format!(
            "CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw
               OPTIONS (host '127.0.0.1', port '{}', dbname 'shop');
             CREATE USER MAPPING FOR PUBLIC SERVER {name} OPTIONS (user 'link', password '{LINK_PASSWORD}');
             GRANT USAGE ON FOREIGN SERVER {name} TO {USER};",
            s.port
        )
    };
    let months: Vec<String> = (0..EVENT_PARTITIONS)
        .map(|m| {
            let (y, mo) = (2017 + m / 12, m % 12 + 1);
            let (ny, nmo) = (2017 + (m + 1) / 12, (m + 1) % 12 + 1);
            format!(
                "CREATE TABLE events_p{m:03} PARTITION OF events \
                 FOR VALUES FROM ('{y}-{mo:02}-01') TO ('{ny}-{nmo:02}-01');"
            )
        })
        .collect();
    head.admin(&format!(
        "CREATE EXTENSION postgres_fdw;
         {} {}
         SET ROLE {USER};
         CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, country text NOT NULL,
           vip boolean NOT NULL, signup date NOT NULL);
         INSERT INTO customers VALUES {};
         CREATE TABLE orders (id integer NOT NULL, customer_id integer NOT NULL, total numeric(10,2) NOT NULL,
           ordered_at timestamp NOT NULL, status text NOT NULL) PARTITION BY RANGE (id);
         CREATE FOREIGN TABLE orders_a PARTITION OF orders FOR VALUES FROM (MINVALUE) TO (4)
           SERVER shard_a OPTIONS (table_name 'orders');
         CREATE FOREIGN TABLE orders_b PARTITION OF orders FOR VALUES FROM (4) TO (MAXVALUE)
           SERVER shard_b OPTIONS (table_name 'orders');
         CREATE TABLE readings (id int8 NOT NULL, sensor int NOT NULL) PARTITION BY RANGE (id);
         CREATE FOREIGN TABLE readings_a PARTITION OF readings FOR VALUES FROM (MINVALUE) TO ({})
           SERVER shard_a OPTIONS (table_name 'readings');
         CREATE FOREIGN TABLE readings_b PARTITION OF readings FOR VALUES FROM ({}) TO (MAXVALUE)
           SERVER shard_b OPTIONS (table_name 'readings');
         CREATE TABLE events (id int8 NOT NULL, created_at timestamp NOT NULL, kind text NOT NULL,
           amount numeric(10,2) NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
         {}
         INSERT INTO events SELECT g, timestamp '2017-01-01' + (g * 1.52) * interval '1 day',
           (ARRAY['click', 'view', 'buy'])[g % 3 + 1], (g % 50) + 0.99 FROM generate_series(1, {EVENTS}) g;
         CREATE TABLE event_notes (event_id int8 NOT NULL, created_at timestamp NOT NULL, note text,
           FOREIGN KEY (event_id, created_at) REFERENCES events (id, created_at));
         CREATE TABLE payroll (emp_id int, salary_cents int, secret_note text);
         INSERT INTO payroll VALUES (1, {HIDDEN_NUMBER}, '{HIDDEN_TEXT}');
         RESET ROLE;
         ANALYZE customers, orders, events, event_notes, payroll;",
        server("shard_a", &a),
        server("shard_b", &b),
        customers_values(),
        READINGS + 1,
        READINGS + 1,
        months.join("\n"),
    ));
    Ok(PgParts {
        head,
        remotes: [a, b],
    })
}

/// Where the PostgreSQL server's extensions' libraries are.
fn pg_libdir() -> Result<String, String> {
    let out = std::process::Command::new(
        servers::postgres_bindir()
            .ok_or("no PostgreSQL server found")?
            .join("pg_config"),
    )
    .arg("--pkglibdir")
    .output()
    .map_err(|e| format!("pg_config: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl PgParts {
    /// The rows on every server and their tables: what a statement through
    /// the head must never change.
    pub fn snapshot(&self) -> String {
        let tables =
            "SELECT string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname) \
                      FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace;";
        let mut out = String::new();
        for (i, remote) in self.remotes.iter().enumerate() {
            out.push_str(&format!("== remote {i}\n"));
            out.push_str(&remote.admin(&format!("{tables} SELECT * FROM orders ORDER BY id;")));
        }
        out.push_str("== head\n");
        out.push_str(&self.head.admin(&format!(
            "{tables} SELECT * FROM customers ORDER BY id; SELECT * FROM payroll;
             SELECT count(*), sum(amount), sum(id) FROM events;
             SELECT string_agg(srvname || ':' || array_to_string(srvoptions, ' '), ',' ORDER BY srvname) FROM pg_foreign_server;"
        )));
        out
    }
}
