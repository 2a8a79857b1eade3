//! The allowed corpus (SPEC §4.2; tests/common/allowed.rs) against
//! SQLite, a DuckDB file and a CSV folder: read-only SQL that models and
//! people write — the engine's own forms included, which a parser that is
//! not the engine's once refused — runs through `-e` with the right rows,
//! and leaves every file byte-identical.

mod common;

use std::path::Path;
use std::time::Instant;

use common::allowed::{CSV_FOLDER, DUCKDB, DUCKDB_FILE, PORTABLE, SQLITE};
use common::{snapshot, stderr_of, stdout_of, Sandbox};

/// Runs each statement; every one that fails or returns other rows, with
/// what came back instead.
pub fn check_allowed(sb: &Sandbox, source: &str, corpus: &[(&str, &str)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (sql, want) in corpus {
        let out = sb
            .aiq()
            .args([source, "-e", sql, "-f", "csv"])
            .output()
            .unwrap();
        let stdout = stdout_of(&out);
        let rows = stdout.lines().skip(1).collect::<Vec<_>>().join("\n");
        if !out.status.success() {
            wrong.push(format!(
                "{sql}\n    exit {:?}: {}",
                out.status.code(),
                stderr_of(&out).trim()
            ));
        } else if rows != *want {
            wrong.push(format!("{sql}\n    want {want:?}\n    got  {rows:?}"));
        }
    }
    wrong
}

fn run(engine: &str, source: &Path, sb: &Sandbox, lists: &[&[(&str, &str)]]) {
    let started = Instant::now();
    let before = snapshot(sb.path());
    let corpus: Vec<(&str, &str)> = lists.iter().flat_map(|l| l.iter().copied()).collect();
    assert!(corpus.len() >= 40, "{engine}: {}", corpus.len());
    let wrong = check_allowed(sb, &source.display().to_string(), &corpus);
    let home = sb.path().join("home");
    let changed: Vec<_> = snapshot(sb.path())
        .into_iter()
        .filter(|(p, bytes)| !p.starts_with(&home) && before.get(p) != Some(bytes))
        .map(|(p, _)| p)
        .collect();
    eprintln!(
        "{engine}: {} allowed statements in {:.1} s, {} wrong",
        corpus.len(),
        started.elapsed().as_secs_f64(),
        wrong.len()
    );
    assert!(changed.is_empty(), "{engine}: files changed: {changed:?}");
    assert!(
        wrong.is_empty(),
        "{engine}: {} of {} allowed statements refused or wrong:\n{}",
        wrong.len(),
        corpus.len(),
        wrong.join("\n")
    );
}

#[test]
fn sqlite_allowed_corpus_runs_with_the_right_rows() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE INDEX orders_by_customer ON orders (customer_id)")
        .unwrap();
    run("sqlite", &db, &sb, &[PORTABLE, SQLITE]);
}

#[test]
fn duckdb_allowed_corpus_runs_with_the_right_rows() {
    let sb = Sandbox::new();
    let db = sb.shop_duckdb();
    run("duckdb", &db, &sb, &[PORTABLE, DUCKDB, DUCKDB_FILE]);
}

#[test]
fn csv_folder_allowed_corpus_runs_with_the_right_rows() {
    let sb = Sandbox::new();
    let dir = sb.shop_csv();
    run("csv", &dir, &sb, &[PORTABLE, DUCKDB, CSV_FOLDER]);
}
