//! The schema-linking benchmark report: recall (every table a question
//! needs is described in the request) on a realistic 409-table warehouse
//! and 75 questions, at the default budget and inside 4k- and 8k-token
//! windows, the questions that missed, and how long ranking and layout take
//! on 2,000 tables.
//!
//! ```text
//! cargo run --release --example linking_bench
//! ```

#[path = "../tests/linking/fixture.rs"]
mod fixture;

use std::time::Instant;

use aiq::agent::fit::{schema_budget, DEFAULT_SCHEMA_BUDGET};
use aiq::agent::link::{layout, rank, LinkIndex, Signals};

fn main() {
    let catalog = fixture::catalog();
    let questions = fixture::questions();
    let index = LinkIndex::new(&catalog);
    println!(
        "{} tables ({} bytes of schema), {} questions",
        catalog.tables.len(),
        catalog.render().len(),
        questions.len()
    );
    println!("| budget | bytes | recall | missed |");
    println!("|---|---|---|---|");
    for (name, budget) in [
        ("default", DEFAULT_SCHEMA_BUDGET),
        ("8k-token window", schema_budget(8192, 2000)),
        ("4k-token window", schema_budget(4096, 2000)),
    ] {
        let (hits, misses) = fixture::recall(&catalog, &index, &questions, budget);
        println!(
            "| {name} | {budget} | {:.1}% ({hits}/{}) | {} |",
            100.0 * hits as f64 / questions.len() as f64,
            questions.len(),
            misses
                .iter()
                .map(|(q, m)| format!("{q} (no {})", m.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    // 2,000 tables: the warehouse repeated under other schemas.
    let mut big = catalog.clone();
    let mut i = 0;
    while big.tables.len() < 2000 {
        let mut t = catalog.tables[i % catalog.tables.len()].clone();
        t.name = format!("s{}.{}", i / catalog.tables.len(), t.name);
        big.tables.push(t);
        i += 1;
    }
    let started = Instant::now();
    let index = LinkIndex::new(&big);
    let built = started.elapsed();
    // Each question's time on its own: the median says what a user
    // waits, the slowest what a bad question costs.
    let mut times: Vec<f64> = questions
        .iter()
        .map(|q| {
            let signals = Signals {
                question: &q.text,
                recent: &[],
                earlier_sql: &[],
            };
            let started = Instant::now();
            let _ = layout(
                &big,
                &index,
                &rank(&big, &index, &signals),
                DEFAULT_SCHEMA_BUDGET,
            );
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "\n2,000 tables: index built once in {:.1} ms; rank + layout {:.2} ms a question (median of {}), slowest {:.2} ms",
        built.as_secs_f64() * 1000.0,
        times[times.len() / 2],
        times.len(),
        times[times.len() - 1]
    );
}
