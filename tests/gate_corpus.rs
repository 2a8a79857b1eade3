//! The generated attacker's corpus (SPEC §4.2, §4.3; tests/common/attack.rs)
//! against SQLite, a DuckDB file, a CSV folder and a glob over part of it,
//! each holding a hidden table `payroll` (`exclude = ["payroll"]`; for the
//! glob, a `payroll.csv` it does not match) and a folder of secrets
//! beside it (the CSV folder also a link `pw.csv` into it, which must not
//! be served), through every way in — the whole corpus through one Lua
//! script and one MCP session per batch, a stratified sample through
//! single-shot `-e` processes — read-only and with `--allow-write` (never
//! `--yes`, never a confirmation): every variant is refused or harmless,
//! no hidden or outside name or value is shown, the files stay
//! byte-identical, nothing is created and the source still answers.
//!
//! A failure lists every finding, one line each, after counts per way in,
//! engine, mode and category.

#![cfg(unix)]

mod common;

use std::path::PathBuf;
use std::time::Instant;

use common::attack::{self, Engine, HIDDEN_NUMBER, HIDDEN_TEXT};
use common::findings::{report, Finding};
use common::ways::{self, Target};
use common::Sandbox;

/// The corpus's seed: change it to draw other combinations.
const SEED: u64 = 0x5eed_0031;

/// A sandbox with the shop (and `payroll`) as the saved source `shop`,
/// and the folder `outside/` next to it.
struct Fixture {
    sb: Sandbox,
    outside: PathBuf,
}

fn fixture(engine: Engine) -> Fixture {
    let sb = Sandbox::new();
    let outside = attack::outside_folder(sb.path());
    let payroll = format!(
        "CREATE TABLE payroll (emp_id INTEGER, salary_cents INTEGER, secret_note VARCHAR);
         INSERT INTO payroll VALUES (1, {HIDDEN_NUMBER}, '{HIDDEN_TEXT}');"
    );
    // What stands behind a name: views and macros over the hidden table.
    let view = "CREATE VIEW staff_view AS SELECT emp_id, salary_cents, secret_note FROM payroll;";
    let source = match engine {
        Engine::Sqlite => {
            let db = sb.shop_sqlite();
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.execute_batch(&payroll).unwrap();
            conn.execute_batch(view).unwrap();
            conn.execute_batch(&format!(
                "CREATE VIRTUAL TABLE payfts USING fts5(note);
                 INSERT INTO payfts VALUES ('{HIDDEN_TEXT}');
                 ANALYZE;"
            ))
            .unwrap();
            db
        }
        Engine::DuckDb => {
            let db = sb.shop_duckdb();
            let conn = duckdb::Connection::open(&db).unwrap();
            conn.execute_batch(&payroll).unwrap();
            conn.execute_batch(view).unwrap();
            conn.execute_batch(
                "CREATE VIEW staff_deep AS SELECT * FROM (SELECT * FROM staff_view);
                 CREATE MACRO pay_total() AS (SELECT max(salary_cents) FROM payroll);
                 CREATE MACRO pay_rows() AS TABLE SELECT * FROM payroll;
                 CREATE MACRO lower(x) AS (SELECT max(secret_note) FROM payroll);",
            )
            .unwrap();
            drop(conn);
            db
        }
        Engine::Csv | Engine::Glob => {
            let dir = sb.shop_csv();
            std::fs::write(
                dir.join("payroll.csv"),
                format!("emp_id,salary_cents,secret_note\n1,{HIDDEN_NUMBER},{HIDDEN_TEXT}\n"),
            )
            .unwrap();
            // A link out of the folder: never served (SPEC §4.2).
            std::os::unix::fs::symlink(outside.join(attack::OUTSIDE_FILE), dir.join("pw.csv"))
                .unwrap();
            match engine {
                // Only the customers' files are the glob's; payroll.csv,
                // orders.csv and the link beside them are not.
                Engine::Glob => dir.join("cust*.csv"),
                _ => dir,
            }
        }
        Engine::Postgres | Engine::MariaDb => unreachable!("servers: tests/gate_servers.rs"),
        Engine::ClickHouse => unreachable!("ClickHouse: tests/clickhouse.rs"),
    };
    let name = match engine {
        Engine::Glob => "name = \"customers\"\n",
        _ => "",
    };
    sb.write_config(&format!(
        "[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"{}\"\n{name}exclude = [\"payroll\", \"payfts\"]\n\
         [lua]\ntimeout_secs = 1200\nmemory_mb = 1024\nmax_output_kb = 1048576\n",
        source.display()
    ));
    Fixture { sb, outside }
}

#[derive(Clone, Copy)]
enum Way {
    Exec,
    Lua,
    Mcp,
}

/// The corpus for `engine` through `way`, read-only then with
/// `--allow-write`; fails with the report when anything was found.
fn attack(engine: Engine, way: Way) {
    let started = Instant::now();
    let mut findings: Vec<Finding> = Vec::new();
    let mut sent = 0;
    for (mode, allow_write) in [false, true].into_iter().enumerate() {
        let fx = fixture(engine);
        let corpus = attack::corpus(engine, &fx.outside.display().to_string(), SEED);
        assert!(corpus.len() >= 2000, "{} variants", corpus.len());
        let target = Target {
            sb: &fx.sb,
            source: "shop",
            engine,
            allow_write,
        };
        findings.extend(match way {
            Way::Exec => {
                // Half of the sample read-only, the other half with --allow-write.
                let sample: Vec<_> = attack::stratified_sample(&corpus, SEED)
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| (i + i / 4) % 2 == mode)
                    .map(|(_, v)| v)
                    .collect();
                sent += sample.len();
                ways::run_exec(&target, &sample)
            }
            Way::Lua => {
                sent += corpus.len();
                ways::run_lua(&target, &corpus)
            }
            Way::Mcp => {
                let Some(python) = common::mcp::python() else {
                    return;
                };
                sent += corpus.len();
                common::mcp_attack::run_mcp(&target, python, &corpus)
            }
        });
    }
    let text = report(&findings);
    eprintln!(
        "{} through {}: {sent} variants in {:.1} s; {text}",
        engine.name(),
        match way {
            Way::Exec => "-e",
            Way::Lua => "lua",
            Way::Mcp => "mcp",
        },
        started.elapsed().as_secs_f64(),
        text = text
            .lines()
            .take_while(|l| l.starts_with(|c: char| c.is_ascii_digit() || c == ' '))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(findings.is_empty(), "{text}");
}

#[test]
fn corpus_is_large_deterministic_and_sampled() {
    for engine in [Engine::Sqlite, Engine::DuckDb, Engine::Csv] {
        let a = attack::corpus(engine, "/x", SEED);
        let b = attack::corpus(engine, "/x", SEED);
        assert!(a.len() >= 2000, "{engine:?}: {}", a.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.sql == y.sql));
        assert!(attack::stratified_sample(&a, SEED).len() >= 200);
        for category in attack::Category::ALL {
            assert!(a.iter().any(|v| v.category == category), "{category:?}");
        }
    }
}

#[test]
fn sqlite_exec() {
    attack(Engine::Sqlite, Way::Exec);
}

#[test]
fn sqlite_lua() {
    attack(Engine::Sqlite, Way::Lua);
}

#[test]
fn sqlite_mcp() {
    attack(Engine::Sqlite, Way::Mcp);
}

#[test]
fn duckdb_exec() {
    attack(Engine::DuckDb, Way::Exec);
}

#[test]
fn duckdb_lua() {
    attack(Engine::DuckDb, Way::Lua);
}

#[test]
fn duckdb_mcp() {
    attack(Engine::DuckDb, Way::Mcp);
}

#[test]
fn csv_exec() {
    attack(Engine::Csv, Way::Exec);
}

#[test]
fn csv_lua() {
    attack(Engine::Csv, Way::Lua);
}

#[test]
fn csv_mcp() {
    attack(Engine::Csv, Way::Mcp);
}

#[test]
fn glob_exec() {
    attack(Engine::Glob, Way::Exec);
}

#[test]
fn glob_lua() {
    attack(Engine::Glob, Way::Lua);
}

#[test]
fn glob_mcp() {
    attack(Engine::Glob, Way::Mcp);
}
