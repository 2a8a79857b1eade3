//! Benchmark: a 1,000,000-row line chart to SVG and PNG (goal: < 1 s,
//! memory bounded).
//!
//! ```text
//! cargo run --release --example bench_chart
//! ```
//!
//! Feeds 1,000,000 rows (a timestamp and a float, in batches of 256 as the
//! statement runner sends them) into a chart `Recording`, builds the line
//! chart (the recording thins the rows evenly past its cap, LTTB keeps
//! 1,000 points), renders it as SVG and as PNG, and prints the median of 5
//! runs for each step and the process's peak RSS. The whole-process run
//! (`aiq FILE -e … --chart-out x.png`, SQLite reading the rows included)
//! is in `benches/run.sh`.

use std::time::{Duration, Instant};

use aiq::chart::{self, ChartSpec, ImageFormat, Recording};
use aiq::source::{Column, Value};
use chrono::DateTime;

const ROWS: usize = 1_000_000;
const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Peak resident memory of this process (Linux), in MB.
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024)
}

/// Batches of rows as the runner sends them: a minute apart, a noisy wave.
fn batches() -> Vec<Vec<Vec<Value>>> {
    let start = DateTime::from_timestamp(1_700_000_000, 0)
        .unwrap()
        .naive_utc();
    let mut out = Vec::with_capacity(ROWS / 256 + 1);
    let mut batch = Vec::with_capacity(256);
    for i in 0..ROWS {
        let t = start + chrono::Duration::minutes(i as i64);
        let v = (i as f64 / 5_000.0).sin() * 100.0 + ((i * 7_919) % 1_000) as f64 / 50.0;
        batch.push(vec![Value::Timestamp(t), Value::Float(v)]);
        if batch.len() == 256 {
            out.push(std::mem::take(&mut batch));
        }
    }
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}

/// The binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), String> {
    let columns = [
        Column::new("minute", "TIMESTAMP"),
        Column::new("value", "DOUBLE"),
    ];
    let data = batches();
    let before = peak_rss_mb();
    let (mut record, mut build, mut svg, mut png, mut total) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut sizes = (0, 0);
    let mut notes = Vec::new();
    for _ in 0..RUNS {
        let t0 = Instant::now();
        let mut rec = Recording::new(&columns, Some("value per minute".into()));
        for rows in &data {
            for row in rows {
                rec.push(row);
            }
        }
        rec.finish(false);
        let t1 = Instant::now();
        let c = chart::build(&rec, &ChartSpec::default())?;
        let t2 = Instant::now();
        let s = chart::image::render(&c, ImageFormat::Svg)?;
        let t3 = Instant::now();
        let p = chart::image::render(&c, ImageFormat::Png)?;
        let t4 = Instant::now();
        record.push(t1 - t0);
        build.push(t2 - t1);
        svg.push(t3 - t2);
        png.push(t4 - t3);
        total.push((t2 - t0) + (t4 - t3).max(t3 - t2));
        sizes = (s.len(), p.len());
        notes = c.notes.clone();
    }
    println!("{ROWS} rows (timestamp, float) → line chart, median of {RUNS}:");
    println!(
        "  record (thinned evenly past the cap): {:?}",
        median(record)
    );
    println!(
        "  build (classify, sort, LTTB):         {:?}",
        median(build)
    );
    println!(
        "  render SVG ({} KB):                   {:?}",
        sizes.0 / 1024,
        median(svg)
    );
    println!(
        "  render PNG ({} KB):                   {:?}",
        sizes.1 / 1024,
        median(png)
    );
    println!(
        "  rows to one image:                     {:?}",
        median(total)
    );
    println!("  notes: {}", notes.join("; "));
    if let (Some(b), Some(a)) = (before, peak_rss_mb()) {
        println!("  peak RSS: {a} MB ({b} MB before, with the 1,000,000 input rows in memory)");
    }
    Ok(())
}
