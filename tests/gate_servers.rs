//! The generated attacker's corpus (tests/common/attack.rs) and the
//! allowed corpus (tests/common/allowed.rs) against the real PostgreSQL
//! and MariaDB servers of tests/common/servers.rs, each holding a hidden
//! table `payroll` (`exclude = ["payroll"]`): the whole corpus through one
//! Lua script per batch, a stratified sample through `-e`, and through one
//! MCP session per batch (the whole corpus read-only, the sample with
//! `--allow-write`), read-only and with `--allow-write` (never `--yes`):
//! the tables' rows unchanged,
//! nothing hidden shown, the source still answering; and the read-only
//! statements people write run with the right rows. Under
//! `AIQ_REQUIRE_SERVERS=1` (CI) a missing server fails instead of skipping.

#![cfg(unix)]

mod common;

use std::sync::Mutex;
use std::time::Instant;

use common::allowed::PORTABLE;
use common::attack::{self, Engine, HIDDEN_NUMBER, HIDDEN_TEXT};
use common::findings::{report, Finding};
use common::servers::{self, Server};
use common::ways::{self, Target};
use common::{stderr_of, stdout_of, Sandbox};

const SEED: u64 = 0x5eed_0031;

/// One test at a time per server: the snapshots compare whole tables.
static SERVERS: Mutex<()> = Mutex::new(());

fn engine_of(server: &Server) -> Engine {
    match server.engine {
        servers::Engine::Postgres => Engine::Postgres,
        servers::Engine::MariaDb => Engine::MariaDb,
    }
}

/// Adds the hidden table (once per server), owned by the test login.
fn with_payroll(server: &Server) {
    let have = server.admin(match server.engine {
        servers::Engine::Postgres => "SELECT count(*) FROM pg_tables WHERE tablename = 'payroll'",
        servers::Engine::MariaDb => {
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'payroll'"
        }
    });
    if have.trim() == "1" {
        return;
    }
    let create = format!(
        "CREATE TABLE payroll (emp_id INT, salary_cents INT, secret_note VARCHAR(40));
         INSERT INTO payroll VALUES (1, {HIDDEN_NUMBER}, '{HIDDEN_TEXT}');"
    );
    server.admin(&match server.engine {
        // What stands behind a name: a view, a SQL function and a view
        // calling it, all over the hidden table.
        servers::Engine::Postgres => {
            format!(
                "{create} ALTER TABLE payroll OWNER TO {user}; ANALYZE payroll;
                 CREATE VIEW staff_view AS SELECT * FROM payroll;
                 CREATE FUNCTION staff_total() RETURNS bigint LANGUAGE sql
                   AS 'SELECT max(salary_cents) FROM payroll';
                 CREATE VIEW staff_fn_view AS SELECT staff_total() AS t;
                 ALTER VIEW staff_view OWNER TO {user}; ALTER VIEW staff_fn_view OWNER TO {user};
                 ALTER FUNCTION staff_total() OWNER TO {user};",
                user = servers::USER
            )
        }
        // Views over the hidden table, one over the other; stored
        // functions over it: one reading, one named like a built-in of
        // MySQL's, one that inserts into it.
        servers::Engine::MariaDb => format!(
            "{create} ANALYZE TABLE payroll;
             CREATE VIEW staff_view AS SELECT * FROM payroll;
             CREATE VIEW staff_deep AS SELECT emp_id FROM staff_view;
             CREATE FUNCTION staff_total() RETURNS BIGINT READS SQL DATA
               RETURN (SELECT max(salary_cents) FROM payroll);
             CREATE FUNCTION regexp_like(a TEXT, b TEXT) RETURNS BIGINT READS SQL DATA
               RETURN (SELECT max(salary_cents) FROM payroll);
             DELIMITER //
             CREATE FUNCTION staff_add() RETURNS INT MODIFIES SQL DATA
             BEGIN INSERT INTO payroll VALUES (2, 0, 'added'); RETURN 1; END //
             DELIMITER ;"
        ),
    });
}

/// Every row of every fixture table, the hidden one included.
fn rows(server: &Server) -> String {
    format!(
        "{}== payroll\n{}",
        server.shop_snapshot(),
        server.admin("SELECT * FROM payroll ORDER BY 1")
    )
}

/// A sandbox with the server as the saved source `shop`, payroll hidden.
fn sandbox(server: &Server) -> (Sandbox, String) {
    let sb = Sandbox::new();
    let outside = attack::outside_folder(sb.path());
    sb.write_config(&format!(
        "[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{}\"\nexclude = [\"payroll\"]\n\
         [lua]\ntimeout_secs = 1200\nmemory_mb = 1024\nmax_output_kb = 1048576\n",
        server.url()
    ));
    (sb, outside.display().to_string())
}

fn attack(server: Option<&'static Server>) {
    let Some(server) = server else { return };
    let _one = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    with_payroll(server);
    let engine = engine_of(server);
    let started = Instant::now();
    let before = rows(server);
    let mut findings: Vec<Finding> = Vec::new();
    let mut sent = 0;
    for (mode, allow_write) in [false, true].into_iter().enumerate() {
        let (sb, outside) = sandbox(server);
        let corpus = attack::corpus(engine, &outside, SEED);
        let target = Target {
            sb: &sb,
            source: "shop",
            engine,
            allow_write,
        };
        let sample: Vec<_> = attack::stratified_sample(&corpus, SEED)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| (i + i / 4) % 2 == mode)
            .map(|(_, v)| v)
            .collect();
        sent += corpus.len() + sample.len();
        findings.extend(ways::run_lua(&target, &corpus));
        findings.extend(ways::run_exec(&target, &sample));
        // MCP: the whole corpus read-only, the sample with --allow-write.
        if let Some(python) = common::mcp::python() {
            let through = if allow_write { &sample } else { &corpus };
            sent += through.len();
            findings.extend(common::mcp_attack::run_mcp(&target, python, through));
        }
    }
    let after = rows(server);
    let text = report(&findings);
    eprintln!(
        "{} through lua, -e and mcp: {sent} variants in {:.1} s; {}",
        engine.name(),
        started.elapsed().as_secs_f64(),
        text.lines().next().unwrap_or_default()
    );
    assert_eq!(after, before, "{}: the data changed\n{text}", engine.name());
    assert!(findings.is_empty(), "{text}");
}

#[test]
fn postgres_holds_against_the_generated_corpus() {
    attack(servers::postgres());
}

#[test]
fn mariadb_holds_against_the_generated_corpus() {
    attack(servers::mariadb());
}

/// Server-specific forms people write, with their rows.
const POSTGRES: &[(&str, &str)] = &[
    ("SELECT count(*) FILTER (WHERE vip) AS n FROM customers", "2"),
    ("SELECT string_agg(name, '/' ORDER BY id) AS g FROM customers", "Ann/Bob/Cleo/Dan/Eve"),
    ("SELECT DISTINCT ON (country) country, name FROM customers ORDER BY country, id", "DE,Ann\nFR,Dan\nUS,Bob"),
    ("SELECT x FROM generate_series(1, 3) AS t(x)", "1\n2\n3"),
    ("SELECT name FROM customers WHERE name ILIKE 'a%'", "Ann"),
    ("SELECT to_char(signup, 'YYYY-MM') AS m FROM customers WHERE id = 2", "2024-02"),
    ("SELECT name FROM customers WHERE id = ANY (ARRAY[1, 5]) ORDER BY id", "Ann\nEve"),
    ("SELECT extract(month FROM signup)::int AS m FROM customers WHERE id = 4", "4"),
    ("SELECT count(*) AS n FROM customers c, LATERAL (SELECT 1 FROM orders o WHERE o.customer_id = c.id LIMIT 1) l", "4"),
    ("SELECT 1 IS DISTINCT FROM 2 AS d", "true"),
];

const MARIADB: &[(&str, &str)] = &[
    (
        "SELECT GROUP_CONCAT(name ORDER BY id SEPARATOR '/') AS g FROM customers",
        "Ann/Bob/Cleo/Dan/Eve",
    ),
    (
        "SELECT IF(vip, 'y', 'n') AS v FROM customers WHERE id = 1",
        "y",
    ),
    (
        "SELECT DATE_FORMAT(signup, '%Y-%m') AS m FROM customers WHERE id = 2",
        "2024-02",
    ),
    ("SELECT `name` FROM `customers` WHERE `id` = 3", "Cleo"),
    ("SELECT name FROM customers LIMIT 1, 1", "Bob"),
    (
        "SELECT CONCAT(name, '!') AS x FROM customers WHERE id = 2",
        "Bob!",
    ),
    ("SELECT name FROM customers WHERE name REGEXP '^E'", "Eve"),
    ("SELECT IFNULL(NULL, 'x') AS c", "x"),
    ("SELECT MONTH(signup) AS m FROM customers WHERE id = 4", "4"),
    ("SELECT 1 <=> 1 AS t", "1"),
];

fn allowed(server: Option<&'static Server>) {
    let Some(server) = server else { return };
    let _one = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let own = match server.engine {
        servers::Engine::Postgres => POSTGRES,
        servers::Engine::MariaDb => MARIADB,
    };
    let corpus: Vec<(&str, &str)> = PORTABLE.iter().chain(own).copied().collect();
    assert!(corpus.len() >= 40);
    let sb = Sandbox::new();
    let before = rows_or_shop(server);
    let mut wrong = Vec::new();
    for (sql, want) in &corpus {
        let out = sb
            .aiq()
            .args([&server.url(), "-e", sql, "-f", "csv"])
            .output()
            .unwrap();
        let got = stdout_of(&out)
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n");
        if !out.status.success() {
            wrong.push(format!(
                "{sql}\n    exit {:?}: {}",
                out.status.code(),
                stderr_of(&out).trim()
            ));
        } else if got != *want {
            wrong.push(format!("{sql}\n    want {want:?}\n    got  {got:?}"));
        }
    }
    eprintln!(
        "{:?}: {} allowed statements in {:.1} s, {} wrong",
        server.engine,
        corpus.len(),
        started.elapsed().as_secs_f64(),
        wrong.len()
    );
    assert_eq!(rows_or_shop(server), before);
    assert!(
        wrong.is_empty(),
        "{:?}: {} of {} wrong:\n{}",
        server.engine,
        wrong.len(),
        corpus.len(),
        wrong.join("\n")
    );
}

/// The shop's rows (payroll too once a corpus test added it).
fn rows_or_shop(server: &Server) -> String {
    server.shop_snapshot()
}

#[test]
fn postgres_allowed_corpus_runs_with_the_right_rows() {
    allowed(servers::postgres());
}

#[test]
fn mariadb_allowed_corpus_runs_with_the_right_rows() {
    allowed(servers::mariadb());
}
