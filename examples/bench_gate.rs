//! Benchmark of the safety gate's cost per statement
//! (docs/performance.md), in process: a 2 KB read-only statement (a CTE, joins, a
//! long select list) checked by the first pass alone (`safety::check`,
//! sqlparser), by the engine's own reading alone
//! (`DataSource::read_statement`), and by the whole gate, which runs the
//! two side by side (`safety::check_with_engine`), on a
//! SQLite file and a DuckDB file; medians and 95th percentiles of 500
//! checks each (goal: under 1 ms for the whole gate).
//!
//! ```text
//! cargo run --release --example bench_gate
//! ```

use std::time::{Duration, Instant};

use aiq::safety::{self, Policy};
use aiq::source::{self, DataSource, OpenOptions, SourceSpec};

const RUNS: usize = 500;

/// A read-only statement of about 2 KB over `customers` and `orders`.
fn statement() -> String {
    let mut columns = Vec::new();
    let mut i = 0;
    while columns.iter().map(|c: &String| c.len() + 2).sum::<usize>() < 1600 {
        columns.push(format!(
            "coalesce(upper(c.name), 'none') || '-{i}' AS label_{i}, sum(o.total) FILTER (WHERE o.id > {i}) AS total_{i}"
        ));
        i += 1;
    }
    format!(
        "WITH recent AS (SELECT * FROM orders WHERE status <> 'cancelled') \
         SELECT c.id, {} FROM customers c JOIN recent o ON o.customer_id = c.id \
         WHERE c.name LIKE 'A%' GROUP BY c.id, c.name ORDER BY c.id LIMIT 100",
        columns.join(", ")
    )
}

fn measure(label: &str, mut f: impl FnMut()) {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{label}: median {:.3} ms, p95 {:.3} ms",
        ms(times[RUNS / 2]),
        ms(times[RUNS * 95 / 100])
    );
}

fn bench(name: &str, src: &dyn DataSource, sql: &str) {
    let policy = Policy::new(false);
    let dialect = src.dialect();
    measure(&format!("{name}, first pass only"), || {
        if let Err(e) = safety::check(sql, dialect, &policy) {
            panic!("refused: {e}");
        }
    });
    measure(&format!("{name}, the engine's reading alone"), || {
        if let Some(Err(e)) = src.read_statement(sql) {
            panic!("unread: {e}");
        }
    });
    measure(&format!("{name}, whole gate"), || {
        let checked = safety::check_with_engine(sql, dialect, &policy, |t| src.read_statement(t));
        if let Err(e) = checked {
            panic!("refused: {e}");
        }
    });
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let schema = "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); \
                  CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total DECIMAL(10,2), status TEXT);";
    let lite = dir.path().join("shop.db");
    rusqlite::Connection::open(&lite)?.execute_batch(schema)?;
    let duck = dir.path().join("shop.duckdb");
    duckdb::Connection::open(&duck)?.execute_batch(&schema.replace("TEXT", "VARCHAR"))?;
    let sql = statement();
    println!("statement: {} bytes, {RUNS} checks each", sql.len());
    let sqlite = source::open(&SourceSpec::Sqlite(lite), OpenOptions::default())?;
    bench("SQLite", sqlite.as_ref(), &sql);
    let duckdb = source::open(&SourceSpec::DuckDb(duck), OpenOptions::default())?;
    bench("DuckDB", duckdb.as_ref(), &sql);
    Ok(())
}
