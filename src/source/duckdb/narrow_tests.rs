//! Narrowed datasets answer exactly as the whole dataset does: a
//! generated corpus of filters (every comparison aiq reads, `IN`,
//! `BETWEEN`, `NOT`, `IS NULL`, `AND`/`OR` nested, aliases and case,
//! self-joins, unions, subqueries), each run through the source and by
//! DuckDB directly on the same files, over a dataset with a NULL partition
//! and an escaped value.

use super::*;
use crate::source::spec::resolve_location;
use crate::source::SourceSpec;
use std::path::PathBuf;

/// 8 years (and the NULL partition) × 8 regions, one of them `x/y`
/// (written `x%2Fy`): 72 files.
fn lake(dir: &Path) -> PathBuf {
    let sales = dir.join("lake/sales");
    std::fs::create_dir_all(dir.join("lake")).unwrap();
    Connection::open_in_memory()
        .unwrap()
        .execute_batch(&format!(
            "COPY (SELECT i AS id, CASE WHEN i % 9 = 8 THEN NULL ELSE 2016 + i % 9 END AS year, \
                          ['eu', 'us', 'ap', 'af', 'sa', 'na', 'oc', 'x/y'][1 + (i // 9) % 8] AS region, \
                          round(i * 1.25, 2) AS amount \
                   FROM range(1440) t(i)) \
             TO '{}' (FORMAT parquet, PARTITION_BY (year, region))",
            sales.display()
        ))
        .unwrap();
    dir.join("lake")
}

/// A small deterministic generator (no dependency for a test's dice).
struct Dice(u64);

impl Dice {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next(items.len())]
    }
}

/// One condition on the reference named `t` (`""`: unqualified).
fn atom(d: &mut Dice, t: &str) -> String {
    let q = if t.is_empty() {
        String::new()
    } else {
        format!("{t}.")
    };
    let year = d.pick(&["year", "YEAR", "Year"]);
    let y = 2014 + d.next(12);
    let y2 = y + d.next(4);
    let region = d.pick(&["'eu'", "'us'", "'x/y'", "'x%2Fy'", "'zz'", "'EU'"]);
    match d.next(16) {
        0 => format!("{q}{year} = {y}"),
        1 => format!("{q}{year} <> {y}"),
        2 => format!("{q}{year} < {y}"),
        3 => format!("{y} <= {q}{year}"),
        4 => format!("{q}{year} > {y}"),
        5 => format!("{q}{year} BETWEEN {y} AND {y2}"),
        6 => format!("{q}{year} IN ({y}, {y2}, 1999)"),
        7 => format!("{q}region = {region}"),
        8 => format!("{q}region IN ({region}, 'ap')"),
        9 => format!("{q}region <> {region}"),
        10 => format!("{q}{year} IS NULL"),
        11 => format!("{q}{year} IS NOT NULL"),
        12 => format!("NOT {q}{year} = {y}"),
        13 => format!("{q}id > {}", d.next(1440)),
        14 => format!("{q}{year} = '{y}'"),
        _ => format!("{q}amount < {}", d.next(2000)),
    }
}

/// A condition of up to `depth` levels of `AND`/`OR`.
fn condition(d: &mut Dice, t: &str, depth: usize) -> String {
    if depth == 0 || d.next(3) == 0 {
        return atom(d, t);
    }
    let op = d.pick(&["AND", "OR", "AND"]);
    format!(
        "({} {op} {})",
        condition(d, t, depth - 1),
        condition(d, t, depth - 1)
    )
}

/// A whole statement reading `sales` once or more.
fn statement(d: &mut Dice) -> String {
    let sum = "count(*), sum(id), min(amount), max(region)";
    match d.next(7) {
        0 => format!("SELECT {sum} FROM sales WHERE {}", condition(d, "", 3)),
        1 => format!(
            "SELECT {sum} FROM Sales AS s WHERE {}",
            condition(d, "S", 3)
        ),
        2 => format!(
            "SELECT count(*), sum(a.id + b.id) FROM sales a JOIN sales b ON a.id = b.id + 1 \
             WHERE {} AND {}",
            condition(d, "a", 2),
            condition(d, "b", 2)
        ),
        3 => format!(
            "SELECT {sum} FROM (SELECT * FROM sales WHERE {} UNION ALL SELECT * FROM sales WHERE {})",
            condition(d, "", 2),
            condition(d, "", 2)
        ),
        4 => format!(
            "WITH w AS (SELECT * FROM sales WHERE {}) SELECT {sum} FROM w WHERE {}",
            condition(d, "", 2),
            condition(d, "", 1)
        ),
        5 => format!(
            "SELECT {sum} FROM sales s WHERE {} AND s.id IN (SELECT id + 9 FROM sales WHERE {})",
            condition(d, "s", 2),
            condition(d, "", 2)
        ),
        _ => format!(
            "SELECT region, year, count(*) FROM sales WHERE {} GROUP BY ALL ORDER BY ALL",
            condition(d, "", 3)
        ),
    }
}

/// Every value as text, rows in order.
fn rows(conn: &Connection, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let text = format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})");
    let mut stmt = conn.prepare(&text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut found = stmt.query([]).map_err(|e| e.to_string())?;
    while let Some(row) = found.next().map_err(|e| e.to_string())? {
        let n = row.as_ref().column_count();
        out.push(
            (0..n)
                .map(|i| row.get::<_, Option<String>>(i).unwrap().unwrap_or_default())
                .collect(),
        );
    }
    Ok(out)
}

#[test]
fn narrowed_answers_are_the_whole_datasets_for_a_generated_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let lake = lake(dir.path());
    let SourceSpec::DataFiles { files, .. } = resolve_location(lake.to_str().unwrap()).unwrap()
    else {
        panic!("not a folder source");
    };
    assert_eq!(files[0].parts.len(), 72);
    let src = DuckDbSource::open_data_files(&files, &[], OpenOptions::default()).unwrap();
    assert_eq!(src.narrowable.len(), 1, "the dataset is not narrowable");
    let direct = Connection::open_in_memory().unwrap();
    direct
        .execute_batch(&format!(
            "CREATE VIEW sales AS SELECT * FROM read_parquet('{}/sales/**/*.parquet', hive_partitioning = true)",
            lake.display()
        ))
        .unwrap();
    let mut dice = Dice(0x5eed);
    let (mut narrowed, mut failed, mut total) = (0, 0, 0);
    for _ in 0..400 {
        let sql = statement(&mut dice);
        let want = rows(&direct, &sql);
        let main = src.conn.borrow();
        let conn = src.narrow(&main, &sql);
        narrowed += usize::from(conn.is_some());
        let got = rows(conn.as_ref().unwrap_or(&main), &sql);
        match (&want, &got) {
            (Ok(want), Ok(got)) => assert_eq!(got, want, "{sql}"),
            // Both fail (a type DuckDB cannot compare) or neither.
            (Err(_), Err(_)) => failed += 1,
            _ => panic!("{sql}: aiq {got:?}, DuckDB {want:?}"),
        }
        total += 1;
    }
    // The corpus reaches the narrowing, not just the whole view, and
    // mostly answers.
    eprintln!("{narrowed} of {total} narrowed, {failed} failed both ways");
    assert!(narrowed * 4 >= total, "{narrowed} of {total} narrowed");
    assert!(failed * 10 <= total, "{failed} of {total} failed");
}
