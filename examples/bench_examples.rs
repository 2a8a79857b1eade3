//! How well and how fast verified examples are found: recall of the
//! fixtures' paraphrases, and time per question over the fixtures and over
//! 10,000 examples grown from them.
//!
//! `cargo run --release --example bench_examples`

use std::path::Path;
use std::time::Instant;

use aiq::examples::{Example, Index, Store};

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples");
    let store = match Store::load(&dir.join("examples.jsonl")) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot read the examples: {e}");
            std::process::exit(1);
        }
    };
    let examples = &store.examples;
    println!(
        "{} examples ({} skipped lines)",
        examples.len(),
        store.skipped
    );
    let index = Index::new(examples);
    let mut questions: Vec<String> = Vec::new();
    // The paraphrases the scoring was developed against, then ones written
    // afterwards and not tuned for: how well it does on questions it has
    // not seen.
    for (label, file) in [
        ("paraphrases", "paraphrases.tsv"),
        ("held-out paraphrases", "paraphrases_holdout.tsv"),
    ] {
        let tsv = match std::fs::read_to_string(dir.join(file)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot read {file}: {e}");
                std::process::exit(1);
            }
        };
        let paraphrases: Vec<(&str, &str)> =
            tsv.lines().filter_map(|l| l.split_once('\t')).collect();
        recall(label, &index, examples, &paraphrases);
        questions.extend(paraphrases.iter().map(|(_, q)| q.to_string()));
    }
    let questions: Vec<&str> = questions.iter().map(String::as_str).collect();
    time("fixtures", examples, &questions);
    let grown = grow(examples, 10_000);
    time("grown", &grown, &questions);
}

/// Prints recall@1 and @3 of `paraphrases` (example id, question) and the
/// ones not found first.
fn recall(label: &str, index: &Index, examples: &[Example], paraphrases: &[(&str, &str)]) {
    let mut targets: Vec<&str> = paraphrases.iter().map(|(id, _)| *id).collect();
    targets.sort_unstable();
    targets.dedup();
    let (mut at1, mut at3) = (0, 0);
    let mut misses = Vec::new();
    for (id, question) in paraphrases {
        let top = index.similar(question, 3);
        let rank = top.iter().position(|&(i, _)| examples[i].id == *id);
        match rank {
            Some(0) => {
                at1 += 1;
                at3 += 1;
            }
            Some(_) => at3 += 1,
            None => {}
        }
        if rank != Some(0) {
            let want = examples
                .iter()
                .find(|e| e.id == *id)
                .map_or("?", |e| e.question.as_str());
            let got: Vec<String> = top
                .iter()
                .map(|&(i, s)| format!("{} ({s:.2})", examples[i].question))
                .collect();
            misses.push(format!(
                "  {} {question:?}\n      want {want:?}\n      got  {}",
                if rank.is_some() { "@3" } else { "--" },
                got.join(" | ")
            ));
        }
    }
    let n = paraphrases.len().max(1) as f64;
    println!(
        "{label} ({} of {} examples): recall@1 {:.1}% ({at1}/{}), recall@3 {:.1}% ({at3}/{})",
        paraphrases.len(),
        targets.len(),
        100.0 * at1 as f64 / n,
        paraphrases.len(),
        100.0 * at3 as f64 / n,
        paraphrases.len()
    );
    if !misses.is_empty() {
        println!("  not first (@3: second or third, --: not in the first three):");
        for m in &misses {
            println!("{m}");
        }
    }
}

/// Builds an index over `examples` and times each question against it.
fn time(label: &str, examples: &[Example], questions: &[&str]) {
    let start = Instant::now();
    let index = Index::new(examples);
    let built = start.elapsed();
    let mut times = Vec::new();
    let mut returned = 0usize;
    for _ in 0..20 {
        for q in questions {
            let t = Instant::now();
            let hits = index.similar(q, 3);
            times.push(t.elapsed());
            returned += hits.len();
        }
    }
    times.sort_unstable();
    let median = times[times.len() / 2];
    let p95 = times[times.len() * 95 / 100];
    println!(
        "{label}: {} examples, index built in {:.1} ms; per question median {:.3} ms, p95 {:.3} ms ({} hits)",
        examples.len(),
        built.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3,
        returned
    );
}

/// `count` examples made from `base` by swapping entities, years, time
/// grains, numbers and wording, and adding qualifiers: a store grown over
/// years of use, with the vocabulary the real one would have.
fn grow(base: &[Example], count: usize) -> Vec<Example> {
    const SWAPS: &[&[&str]] = &[
        &["2023", "2024", "2025", "2022", "2021", "2020"],
        &[
            "Europe",
            "Asia",
            "North America",
            "LATAM",
            "Africa",
            "Oceania",
        ],
        &["Germany", "France", "Japan", "Brazil", "Canada", "Spain"],
        &["Berlin", "Paris", "Tokyo", "Austin", "Lyon", "Osaka"],
        &[
            "'Acme'",
            "'Globex'",
            "'Initech'",
            "'Umbrella'",
            "'Hooli'",
            "'Stark'",
        ],
        &["month", "quarter", "week", "year", "day", "month"],
        &[
            "customers",
            "clients",
            "buyers",
            "accounts",
            "customers",
            "users",
        ],
        &["10", "5", "20", "3", "50", "25"],
        &["products", "items", "SKUs", "articles", "products", "goods"],
        &[
            "employees",
            "staff",
            "workers",
            "employees",
            "people",
            "contractors",
        ],
    ];
    const QUALIFIERS: &[&str] = &[
        "",
        " for the enterprise segment",
        " excluding cancelled orders",
        " in the online channel",
        " for the EMEA team",
        " with at least 3 purchases",
        " since the migration",
        " for premium members",
        " in USD",
        " on weekdays only",
        " for the Rotterdam warehouse",
        " by priority",
        " for product 'Widget Pro'",
    ];
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let ex = &base[i % base.len()];
        let round = i / base.len();
        let mut question = ex.question.clone();
        let mut sql = ex.sql.clone();
        for (s, group) in SWAPS.iter().enumerate() {
            let to = group[(round + s) % group.len()];
            for from in group.iter().filter(|w| **w != to) {
                if question.contains(from) {
                    question = question.replace(from, to);
                    sql = sql.replace(from, to);
                    break;
                }
            }
        }
        question.push_str(QUALIFIERS[(i * 7 + round) % QUALIFIERS.len()]);
        out.push(Example {
            id: (i + 1).to_string(),
            question,
            sql,
            added: ex.added.clone(),
            schema: ex.schema.clone(),
        });
    }
    out
}
