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

/// A partitioned table reaches the model as one parent (the engines fold
/// its partitions into it, and say how it is partitioned in its comment):
/// on the warehouse with all its noise, questions in users' words describe
/// it inside a 4k window, its partitioning with it.
#[test]
fn a_partitioned_parent_is_linked_with_its_partitioning() {
    use aiq::agent::link::{layout, rank, Signals};
    use aiq::schema::{ColumnInfo, Table, TableKind};
    let mut catalog = fixture::catalog();
    let column = |name: &str, type_name: &str| ColumnInfo {
        name: name.into(),
        type_name: type_name.into(),
        nullable: false,
        primary_key: false,
        samples: Vec::new(),
    };
    catalog.tables.push(Table {
        name: "page_events".into(),
        kind: TableKind::Table,
        columns: vec![
            column("event_id", "bigint"),
            column("created_at", "timestamp"),
            column("page", "text"),
            column("event_kind", "text"),
            column("session_id", "bigint"),
        ],
        foreign_keys: Vec::new(),
        row_estimate: Some(250_000_000),
        comment: Some("partitioned by RANGE (created_at), 100 partitions".into()),
        one_name: false,
        reaches: Vec::new(),
    });
    catalog.tables.sort_by(|a, b| a.name.cmp(&b.name));
    let index = LinkIndex::new(&catalog);
    let budget = schema_budget(4096, FIXED);
    for question in [
        "how many page events were there last month?",
        "which pages had the most events in May",
        "page events per day by event kind",
    ] {
        let signals = Signals {
            question,
            recent: &[],
            earlier_sql: &[],
        };
        let laid = layout(&catalog, &index, &rank(&catalog, &index, &signals), budget);
        assert!(
            laid.described.iter().any(|t| t == "page_events"),
            "{question}: described {:?}",
            laid.described
        );
        assert!(
            laid.text
                .contains("page_events (~250000000 rows) -- partitioned by RANGE (created_at), 100 partitions"),
            "{question}:\n{}",
            laid.text
        );
    }
}
