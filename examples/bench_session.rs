//! Benchmark: save and load of a 10 MB session file (goal: < 50 ms each).
//!
//! ```text
//! cargo run --release --example bench_session
//! ```
//!
//! Builds a session of about 10 MB (questions, answers with SQL and result
//! previews) in a temp dir, then times `Session::save` (atomic: temp file,
//! fsync, rename) and `Session::load` (read, UTF-8 and JSON validation) 20
//! times each and prints the medians.

use std::time::{Duration, Instant};

use aiq::agent::HistoryMessage;
use aiq::session::{Session, MAX_BYTES};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut session = Session::new(dir.path(), "shop", "sqlite");
    let preview: String = (0..20)
        .map(|i| format!("2024-{:02},customer {i},{}.50\n", i % 12 + 1, i * 37))
        .collect();
    let mut i = 0;
    while session.to_json().len() < (MAX_BYTES as usize) * 95 / 100 {
        for _ in 0..500 {
            session.messages.push(HistoryMessage::user(format!(
                "question {i}: how did revenue develop per month and country in 2024?"
            )));
            let sql = format!("SELECT strftime('%Y-%m', ordered_at) AS month, country, sum(total) AS revenue FROM orders JOIN customers ON customers.id = orders.customer_id WHERE ordered_at >= '2024-01-01' GROUP BY 1, 2 ORDER BY 1, 2 -- {i}");
            session.messages.push(
                HistoryMessage::assistant(format!("```sql\n{sql}\n```"))
                    .with_sql(&sql, Ok((240, preview.clone()))),
            );
            i += 1;
        }
    }
    let size = session.to_json().len();
    let mut saves = Vec::new();
    let mut loads = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        session.save()?;
        saves.push(t.elapsed());
        let t = Instant::now();
        let loaded = Session::load(&session.path)?;
        loads.push(t.elapsed());
        assert_eq!(loaded.messages.len(), session.messages.len());
    }
    println!(
        "session of {:.1} MB, {} messages: save median {:.1} ms, load median {:.1} ms (20 runs each)",
        size as f64 / 1_048_576.0,
        session.messages.len(),
        median(saves).as_secs_f64() * 1000.0,
        median(loads).as_secs_f64() * 1000.0
    );
    Ok(())
}
