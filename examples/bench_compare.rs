//! Times `aiq::eval::compare` on two 100,000-row results that are equal up
//! to row order and column order, the case `aiq eval` meets when a model's
//! query is right but lists columns and rows differently.
//!
//! Run with `cargo run --release --example bench_compare`.

use std::time::{Duration, Instant};

use aiq::eval::compare::{compare, Options};
use aiq::source::Value;
use chrono::NaiveDate;

const ROWS: usize = 100_000;
const RUNS: usize = 7;

/// A small deterministic generator (splitmix64), so the benchmark needs no
/// crates and every run compares the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Rows of (id, name, amount as float, price as decimal, day).
fn expected(rng: &mut Rng) -> Vec<Vec<Value>> {
    let names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace"];
    let Some(start) = NaiveDate::from_ymd_opt(2020, 1, 1) else {
        return Vec::new();
    };
    (0..ROWS)
        .map(|i| {
            let amount = rng.unit() * 10_000.0;
            let cents = rng.below(1_000_000);
            let day = start + chrono::Days::new(rng.below(2_000) as u64);
            vec![
                Value::Int(i as i64),
                Value::Text(format!("{}-{}", names[i % names.len()], i % 1_000)),
                Value::Float(amount),
                Value::Decimal(format!("{}.{:02}", cents / 100, cents % 100)),
                Value::Date(day),
            ]
        })
        .collect()
}

/// The same rows shuffled, columns permuted, and the floats summed in
/// another order (a relative difference near 1e-16).
fn result(want: &[Vec<Value>], rng: &mut Rng) -> Vec<Vec<Value>> {
    let order = [3, 0, 4, 2, 1];
    let mut rows: Vec<Vec<Value>> = want
        .iter()
        .map(|row| {
            order
                .iter()
                .map(|&c| match &row[c] {
                    Value::Float(f) => Value::Float((f * 0.25 + f * 0.75) * (1.0 + 1e-15)),
                    v => v.clone(),
                })
                .collect()
        })
        .collect();
    for i in (1..rows.len()).rev() {
        let j = rng.below(i + 1);
        rows.swap(i, j);
    }
    rows
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn main() {
    let mut rng = Rng(2025);
    let want = expected(&mut rng);
    let got = result(&want, &mut rng);
    let options = Options::default();
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let outcome = compare(5, &got, 5, &want, &options);
        times.push(start.elapsed());
        if let Err(why) = outcome {
            eprintln!("unexpected mismatch: {why}");
            std::process::exit(1);
        }
    }
    times.sort();
    let median = times[RUNS / 2];
    println!(
        "compare {} rows x 5 columns: median {:.1} ms (n={RUNS})",
        thousands(ROWS),
        median.as_secs_f64() * 1000.0
    );
}
