//! The scripts in `examples/lua/` over the demo shop (examples/demo_shop.rs):
//! each runs with `--lua … -f csv`, prints the report docs/lua.md describes, and
//! gives the same CSV on the SQLite and the DuckDB shop.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{stderr_of, stdout_of, Sandbox};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/lua")
        .join(name)
}

/// The report of `name` on the SQLite shop, checked to be the same on DuckDB.
fn report(sb: &Sandbox, demo: &Path, name: &str) -> String {
    let mut outputs = Vec::new();
    for db in ["shop.db", "shop.duckdb"] {
        let out = sb
            .aiq()
            .arg(demo.join(db))
            .arg("--lua")
            .arg(script(name))
            .args(["-f", "csv"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name} on {db}: {}",
            stderr_of(&out)
        );
        outputs.push(stdout_of(&out));
    }
    assert_eq!(outputs[0], outputs[1], "{name}: SQLite and DuckDB disagree");
    outputs.remove(0)
}

#[test]
fn every_example_prints_its_report_on_both_engines() {
    let sb = Sandbox::new();
    let demo = sb.path().join("demo");
    let status = Command::new(common::demo_shop_generator())
        .arg(&demo)
        .output()
        .unwrap();
    assert!(status.status.success());

    let monthly = report(&sb, &demo, "monthly_revenue.lua");
    let lines: Vec<&str> = monthly.lines().collect();
    assert_eq!(lines.len(), 37, "a header and 36 months: {monthly}");
    assert_eq!(lines[0], "month,orders,revenue,change_pct,flag");
    assert_eq!(lines[1], "2023-01,41,15786.2,,");
    assert_eq!(lines[2], "2023-02,36,11691.87,-25.9,drop");
    assert!(lines[36].starts_with("2025-12,"), "{}", lines[36]);

    let quality = report(&sb, &demo, "data_quality.lua");
    assert!(quality.starts_with("table,column,check,problems,rows,status\n"));
    assert!(
        quality.contains("\ncustomers,city,nulls,32,1000,check\n"),
        "{quality}"
    );
    assert!(quality.contains("\norders,customer_id,points to customers,0,5000,ok\n"));
    assert!(quality.contains("\norder_items,id,duplicate key,0,11991,ok\n"));
    assert_eq!(quality.matches(",check\n").count(), 1, "{quality}");
    assert_eq!(quality.lines().count(), 30);

    let cohorts = report(&sb, &demo, "cohorts.lua");
    let lines: Vec<&str> = cohorts.lines().collect();
    assert_eq!(lines[0], "cohort,customers,q0,q1,q2,q3");
    assert_eq!(lines.len(), 13, "2023-Q1 … 2025-Q4: {cohorts}");
    assert!(lines[1].starts_with("2023-Q1,69,"), "{}", lines[1]);
    assert!(
        lines[12].starts_with("2025-Q4,") && lines[12].ends_with(",,,"),
        "{}",
        lines[12]
    );

    let top = report(&sb, &demo, "top_customers.lua");
    let lines: Vec<&str> = top.lines().collect();
    assert_eq!(
        lines[0],
        "rank,customer,country,revenue,order_id,ordered_at,status,total"
    );
    assert_eq!(lines.len(), 16, "five customers, three orders each");
    assert_eq!(
        lines[1],
        "1,Michael Bakker,IT,36949.12,4900,2025-12-23 01:57:07,delivered,422.94"
    );
    assert!(lines[15].starts_with("5,"));

    // Every run is in the audit log: four scripts on two engines.
    let logs = std::fs::read_dir(sb.home().join("logs")).unwrap();
    let runs: usize = logs
        .map(|f| {
            std::fs::read_to_string(f.unwrap().path())
                .unwrap()
                .lines()
                .count()
        })
        .sum();
    assert_eq!(runs, 8);
}
