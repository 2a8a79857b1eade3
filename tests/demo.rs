//! The demo shop: the generator (examples/demo_shop.rs) writes deterministic
//! data that aiq reads in all four forms, and `aiq demo` takes a newcomer
//! from nothing to a first answer — the guide without a model, the chat
//! with one, the saved `demo` source afterwards, and README's quick start.

mod common;

use std::process::Command;

use common::llm::{ModelServer, Reply};
use common::{stderr_of, stdout_of, Sandbox};
use predicates::prelude::*;

#[test]
fn demo_shop_is_deterministic_and_readable_in_every_form() {
    let sb = Sandbox::new();
    let (a, b) = (sb.path().join("a"), sb.path().join("b"));
    for out in [&a, &b] {
        let status = Command::new(common::demo_shop_generator())
            .arg(out)
            .status()
            .expect("run demo_shop");
        assert!(status.success());
    }
    for table in ["customers", "products", "orders", "order_items"] {
        let name = format!("shop_csv/{table}.csv");
        assert_eq!(
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
            "{name}"
        );
    }
    let sql =
        "SELECT count(*) AS orders, sum(total) AS revenue FROM orders WHERE status = 'delivered'";
    let mut answers = Vec::new();
    for src in ["shop.db", "shop.duckdb", "shop_csv", "shop_parquet"] {
        let out = sb
            .aiq()
            .arg(a.join(src))
            .args(["-e", sql, "-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{src}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        answers.push(String::from_utf8(out.stdout).unwrap());
    }
    assert!(
        answers[0].starts_with("orders,revenue\n4028,"),
        "{}",
        answers[0]
    );
    // Same numbers everywhere (DuckDB's exact decimals vs SQLite's floats aside).
    for other in &answers[1..] {
        let revenue = |s: &str| -> f64 {
            s.lines()
                .nth(1)
                .unwrap()
                .split(',')
                .nth(1)
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(
            (revenue(other) - revenue(&answers[0])).abs() < 0.01,
            "{other} vs {}",
            answers[0]
        );
    }
}

#[test]
fn demo_without_a_model_writes_saves_and_shows_real_results() {
    let sb = Sandbox::new();
    let out = sb.aiq().arg("demo").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    // What aiq is, three real tables, and how to connect a model.
    assert!(
        text.starts_with("aiq answers questions about your data in plain language"),
        "{text}"
    );
    assert!(text.contains("│ US      ┆       297 │"), "{text}");
    assert!(text.contains("│ 2025-01 ┆ 40184.56 │"), "{text}");
    assert!(text.contains("│ Smart Robot "), "{text}");
    // The guide's SQL counts as the shop's notes define revenue and units.
    assert!(text.contains("units sold (delivered or shipped"), "{text}");
    assert!(!text.contains("status = 'delivered' AND"), "{text}");
    assert!(text.contains("export OPENAI_API_KEY=sk-…"), "{text}");
    assert!(text.contains("ollama serve"), "{text}");
    assert!(text.contains("export AIQ_BASE_URL="), "{text}");
    let db = sb.home().join("demo").join("shop.db");
    assert!(db.is_file());
    assert!(sb.home().join("demo/shop_csv/order_items.csv").is_file());
    let config = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(config.contains("default = \"demo\""), "{config}");
    assert!(
        config.contains(&format!("url = \"sqlite://{}\"", db.display())),
        "{config}"
    );

    // A second run reuses the files; --reset writes them again.
    let modified = || std::fs::metadata(&db).unwrap().modified().unwrap();
    let first = modified();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = sb.aiq().arg("demo").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !stderr_of(&out).contains("writing the demo shop"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(modified(), first, "the demo shop was written again");
    sb.aiq().args(["demo", "--reset"]).assert().success();
    assert_ne!(modified(), first, "--reset did not rebuild");

    // Afterwards the demo is the default source, and `aiq demo -e` works.
    sb.aiq()
        .args(["-e", "SELECT count(*) AS customers FROM customers"])
        .assert()
        .success()
        .stdout("customers\n1000\n");
    sb.aiq()
        .args([
            "demo",
            "-e",
            "SELECT count(*) AS n FROM orders",
            "-f",
            "json",
        ])
        .assert()
        .success()
        .stdout("[\n{\"n\":5000}\n]\n");
}

#[test]
fn a_users_own_demo_source_is_never_replaced_without_asking() {
    let sb = Sandbox::new();
    let mine = sb.shop_sqlite();
    sb.aiq()
        .args(["sources", "add", "demo", mine.to_str().unwrap()])
        .assert()
        .success();
    let before = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    sb.aiq()
        .arg("demo")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "left your saved source 'demo' as it is",
        ))
        .stdout(predicate::str::contains("│ US      ┆       297 │"));
    let after = std::fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert_eq!(before, after);
}

#[cfg(unix)]
#[test]
fn demo_with_a_model_opens_the_chat_on_the_shop() {
    let sb = Sandbox::new();
    let server = ModelServer::start(vec![Reply::Text(
        "```sql\nSELECT count(*) AS vip_customers FROM customers WHERE is_vip\n```".into(),
    )]);
    let args: Vec<&std::ffi::OsStr> = vec!["demo".as_ref()];
    let mut p = common::pty(&sb, &args, Some(&server), "dumb");
    use expectrl::Expect;
    p.expect("try: how many customers per country?").unwrap();
    p.expect("aiq[demo]> ").unwrap();
    p.send_line("how many VIP customers are there?").unwrap();
    p.expect("vip_customers").unwrap();
    p.expect("aiq[demo]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect("Current session saved to").unwrap();
    let chats = server.chats();
    assert_eq!(chats.len(), 1);
    let system = &chats[0].messages()[0].1;
    assert!(system.contains("table order_items"), "{system}");
}

/// README's quick start stays true: every `aiq` line there that needs no
/// model runs, in order, after `aiq demo`.
#[test]
fn readme_quick_start_commands_run() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let section = &readme[start..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map(|i| i + 3)
        .unwrap_or(section.len())];
    let mut lines = Vec::new();
    let mut in_code = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let command = line.split("  #").next().unwrap_or("").trim();
        // Questions need a model, the full-screen view a terminal
        // (tests/tui.rs drives `aiq demo --tui`).
        let runnable = !command.contains(" -q ") && !command.contains("--tui");
        if in_code && command.starts_with("aiq ") && runnable {
            lines.push(command.to_string());
        }
    }
    assert!(lines.len() >= 4, "{lines:?}");
    let sb = Sandbox::new();
    for line in &lines {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("aiq() {{ \"$AIQ_BIN\" \"$@\"; }}; {line}"))
            .env("AIQ_BIN", assert_cmd::cargo::cargo_bin("aiq"))
            .env("AIQ_HOME", sb.home())
            .env("HOME", sb.path().join("home"))
            .env("OLLAMA_HOST", "127.0.0.1:9")
            .env_remove("OPENAI_API_KEY")
            .env_remove("AIQ_API_KEY")
            .current_dir(sb.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}\n{}", stderr_of(&out));
    }
}
