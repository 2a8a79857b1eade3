//! The schema-linking benchmark as a regression test: on a realistic
//! warehouse of over 400 tables (business tables among staging, backup,
//! audit and ETL noise) and over 60 questions in users' words, every table
//! a question needs must be described in the request — at the default
//! budget for at least 98% of the questions, inside a 4,096-token window
//! for at least 90%. `cargo run --release --example linking_bench` prints
//! the full report.

#[path = "linking/fixture.rs"]
mod fixture;

use aiq::agent::fit::{schema_budget, DEFAULT_SCHEMA_BUDGET};
use aiq::agent::link::LinkIndex;

/// What the rest of a request takes besides the schema (rules, question).
const FIXED: usize = 2_000;

#[test]
fn the_benchmark_is_realistic() {
    let catalog = fixture::catalog();
    let questions = fixture::questions();
    assert!(
        catalog.tables.len() >= 400,
        "{} tables",
        catalog.tables.len()
    );
    assert!(questions.len() >= 60, "{} questions", questions.len());
    for q in &questions {
        for g in &q.gold {
            assert!(catalog.table(g).is_some(), "{}: no table {g}", q.text);
        }
    }
    // The whole schema is beyond every budget measured here.
    assert!(catalog.render().len() > DEFAULT_SCHEMA_BUDGET * 3 / 2);
}

#[test]
fn recall_meets_the_goals() {
    let catalog = fixture::catalog();
    let questions = fixture::questions();
    let index = LinkIndex::new(&catalog);
    let goals = [
        ("default budget", DEFAULT_SCHEMA_BUDGET, 0.98),
        ("8k window", schema_budget(8192, FIXED), 0.95),
        ("4k window", schema_budget(4096, FIXED), 0.90),
    ];
    for (name, budget, goal) in goals {
        let (hits, misses) = fixture::recall(&catalog, &index, &questions, budget);
        let recall = hits as f64 / questions.len() as f64;
        assert!(
            recall >= goal,
            "{name} ({budget} bytes): recall {recall:.3} < {goal}; missed: {misses:#?}"
        );
    }
}
