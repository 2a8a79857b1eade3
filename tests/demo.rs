//! The demo shop generator (examples/demo_shop.rs) behind README's quick
//! start: deterministic output that aiq reads in all four forms.

mod common;

use std::process::Command;

use common::Sandbox;

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
