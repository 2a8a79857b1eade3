//! Data files as data tools write them (SPEC §4.1, "Data files are
//! datasets"): partitioned Parquet folders, Spark-style part files with side
//! files, monthly gzip'd CSVs whose columns grew, a Latin-1 CSV, globs —
//! each checked against DuckDB run directly on the same files — and the
//! views kept between runs.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{stderr_of, stdout_of, Sandbox};

/// Runs `sql` with DuckDB directly (the reference answer), every value as
/// DuckDB's own text, one CSV line a row.
fn duck(sql: &str) -> String {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    let text = format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})");
    let mut stmt = conn.prepare(&text).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut out = String::new();
    while let Some(row) = rows.next().unwrap() {
        let n = row.as_ref().column_count();
        let cells: Vec<String> = (0..n)
            .map(|i| row.get::<_, Option<String>>(i).unwrap().unwrap_or_default())
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The same text form through aiq.
fn as_text(sql: &str) -> String {
    format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})")
}

fn write_with_duckdb(sql: &str) {
    duckdb::Connection::open_in_memory()
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// aiq's CSV answer without its header line.
fn aiq_rows(sb: &Sandbox, source: &str, sql: &str, extra: &[&str]) -> (String, String) {
    let out = sb
        .aiq()
        .args([source, "-e", sql, "-f", "csv"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{sql}: {}", stderr_of(&out));
    let rows: String = stdout.lines().skip(1).map(|l| format!("{l}\n")).collect();
    (rows, stderr_of(&out))
}

/// A folder with a DuckDB-written partitioned Parquet dataset (`sales`), a
/// Spark-style dataset (`events`) and a plain CSV (`customers`).
fn lake(sb: &Sandbox) -> PathBuf {
    let lake = sb.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    write_with_duckdb(&format!(
        "COPY (SELECT i AS id, 2020 + i % 4 AS year, i % 3 AS region, round(i * 1.25, 2) AS amount \
               FROM range(600) t(i)) \
         TO '{}' (FORMAT parquet, PARTITION_BY (year, region))",
        lake.join("sales").display()
    ));
    let events = lake.join("events");
    fs::create_dir_all(events.join("_temporary/0")).unwrap();
    for part in 0..3 {
        write_with_duckdb(&format!(
            "COPY (SELECT {part} * 100 + i AS id, 'e' || i AS kind FROM range(100) t(i)) \
             TO '{}' (FORMAT parquet)",
            events
                .join(format!("part-0000{part}-5f1c.snappy.parquet"))
                .display()
        ));
        fs::write(
            events.join(format!(".part-0000{part}-5f1c.snappy.parquet.crc")),
            b"crc\x00garbage",
        )
        .unwrap();
    }
    fs::write(events.join("_SUCCESS"), b"").unwrap();
    fs::write(events.join("_temporary/0/part-9.parquet"), b"not parquet").unwrap();
    fs::write(lake.join("customers.csv"), "id,name\n1,Ann\n2,Bob\n").unwrap();
    lake
}

#[test]
fn a_partitioned_folder_and_spark_output_are_tables_of_their_own() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let src = lake.to_str().unwrap();
    let sql = "SELECT year, region, count(*) AS n, sum(amount) AS total FROM sales GROUP BY ALL ORDER BY ALL";
    let (rows, err) = aiq_rows(&sb, src, &as_text(sql), &[]);
    let direct = duck(&format!(
        "SELECT year, region, count(*) AS n, sum(amount) AS total \
         FROM read_parquet('{}/sales/**/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
        lake.display()
    ));
    assert_eq!(rows, direct);
    assert_eq!(rows.lines().count(), 12, "{rows}");
    assert!(!err.contains("skipped"), "{err}");
    // Spark's side files and `_temporary/` are not read.
    let (rows, _) = aiq_rows(
        &sb,
        src,
        "SELECT count(*), count(DISTINCT id) FROM events",
        &[],
    );
    assert_eq!(rows, "300,300\n");
    let (rows, _) = aiq_rows(&sb, src, "SELECT name FROM customers ORDER BY id", &[]);
    assert_eq!(rows, "Ann\nBob\n");
    // The model sees one table per dataset with its partitions marked.
    let out = sb.aiq().args(["schema", src]).output().unwrap();
    let schema = stdout_of(&out);
    assert!(
        schema.contains("partitioned by year (2020–2023), region (0–2)"),
        "{schema}"
    );
    assert!(!schema.contains("part-0000"), "{schema}");
    let tables: Vec<&str> = ["customers", "events", "sales"]
        .into_iter()
        .filter(|t| schema.contains(t))
        .collect();
    assert_eq!(tables.len(), 3, "{schema}");
}

#[test]
fn a_question_about_one_partition_reads_only_its_files() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let src = lake.to_str().unwrap();
    let filtered = "SELECT count(*) FROM sales WHERE year = 2022";
    let (rows, _) = aiq_rows(&sb, src, filtered, &[]);
    assert_eq!(rows, "150\n");
    // Break every file of 2021 (keeping size and time, so the kept views
    // stay): a query that read them would fail.
    for entry in walk(&lake.join("sales/year=2021")) {
        break_parquet(&entry);
    }
    let (rows, _) = aiq_rows(&sb, src, filtered, &[]);
    assert_eq!(rows, "150\n");
    let out = sb
        .aiq()
        .args([src, "-e", "SELECT count(*) FROM sales"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the broken files were read");
}

/// Makes a Parquet file unreadable (its closing magic bytes), keeping its
/// size and time, so the views kept for it stay.
fn break_parquet(file: &Path) {
    let meta = fs::metadata(file).unwrap();
    let mut bytes = fs::read(file).unwrap();
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(b"XXXX");
    fs::write(file, &bytes).unwrap();
    let f = fs::File::options().write(true).open(file).unwrap();
    f.set_modified(meta.modified().unwrap()).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn monthly_gzip_csvs_with_a_column_added_midway_read_by_name() {
    let sb = Sandbox::new();
    let logs = sb.path().join("data/logs");
    fs::create_dir_all(&logs).unwrap();
    write_with_duckdb(&format!(
        "COPY (SELECT i AS id, 'GET' AS method FROM range(5) t(i)) TO '{}' (FORMAT csv, COMPRESSION gzip); \
         COPY (SELECT 5 + i AS id, 'POST' AS method, 200 + i AS status FROM range(7) t(i)) TO '{}' (FORMAT csv, COMPRESSION gzip); \
         COPY (SELECT 1 AS x) TO '{}' (FORMAT csv, COMPRESSION zstd)",
        logs.join("2024-01.csv.gz").display(),
        logs.join("2024-02.csv.gz").display(),
        sb.path().join("data/tiny.csv.zst").display(),
    ));
    let data = sb.path().join("data");
    let src = data.to_str().unwrap();
    let (rows, _) = aiq_rows(
        &sb,
        src,
        "SELECT count(*), count(status), sum(id), min(status) FROM logs",
        &[],
    );
    assert_eq!(rows, "12,7,66,200\n");
    let (rows, _) = aiq_rows(&sb, src, "SELECT x FROM tiny", &[]);
    assert_eq!(rows, "1\n");
    // The same as a glob: one table named after its folder, or --name.
    let glob = format!("{}/logs/*.csv.gz", data.display());
    let (rows, _) = aiq_rows(&sb, &glob, "SELECT count(*) FROM logs", &[]);
    assert_eq!(rows, "12\n");
    let (rows, _) = aiq_rows(
        &sb,
        &glob,
        "SELECT count(*) FROM requests",
        &["--name", "requests"],
    );
    assert_eq!(rows, "12\n");
    let out = sb
        .aiq()
        .args([src, "--name", "x", "-e", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--name"), "{}", stderr_of(&out));
}

#[test]
fn a_recursive_glob_and_a_saved_glob_with_a_name() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let glob = format!("{}/sales/**/*.parquet", lake.display());
    let (rows, _) = aiq_rows(
        &sb,
        &glob,
        "SELECT count(*), count(DISTINCT year) FROM sales",
        &[],
    );
    assert_eq!(rows, "600,4\n");
    sb.write_config(&format!(
        "[sources.s]\nurl = \"{glob}\"\nname = \"orders\"\n"
    ));
    let (rows, _) = aiq_rows(
        &sb,
        "s",
        "SELECT count(*) FROM orders WHERE year = 2020",
        &[],
    );
    assert_eq!(rows, "150\n");
    // Saved from a relative glob: kept absolute, so it works from anywhere.
    sb.aiq()
        .args([
            "sources",
            "add",
            "g",
            "lake/sales/year=202[12]/**/*.parquet",
        ])
        .assert()
        .success();
    let config = fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(
        config.contains(&format!("{}/lake/sales/year=202[12]", sb.path().display()))
            || config.contains("/lake/sales/year=202[12]"),
        "{config}"
    );
    let (rows, _) = aiq_rows(
        &sb,
        "g",
        "SELECT count(*), min(year), max(year) FROM sales",
        &[],
    );
    assert_eq!(rows, "300,2021,2022\n");
    let missing = format!("{}/nothing/*.csv", lake.display());
    let out = sb
        .aiq()
        .args([missing.as_str(), "-e", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_latin1_csv_is_read_and_said_once() {
    let sb = Sandbox::new();
    let path = sb.path().join("people.csv");
    fs::write(
        &path,
        b"name,city\nJos\xe9,M\xe1laga\nRen\xe9,Z\xfcrich\n".as_slice(),
    )
    .unwrap();
    let src = path.to_str().unwrap();
    let (rows, err) = aiq_rows(&sb, src, "SELECT name, city FROM people ORDER BY name", &[]);
    assert_eq!(rows, "José,Málaga\nRené,Zürich\n");
    assert_eq!(err.matches("as Latin-1").count(), 1, "{err}");
    let (rows, err) = aiq_rows(&sb, src, "SELECT count(*) FROM people", &[]);
    assert_eq!(rows, "2\n");
    assert!(!err.contains("Latin-1"), "said again: {err}");
}

#[test]
fn a_dataset_that_cannot_be_one_table_is_named_and_the_rest_opens() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let mixed = lake.join("mixed");
    fs::create_dir_all(&mixed).unwrap();
    fs::write(mixed.join("a.csv"), "x\n1\n").unwrap();
    write_with_duckdb(&format!(
        "COPY (SELECT 2 AS x) TO '{}' (FORMAT parquet)",
        mixed.join("b.parquet").display()
    ));
    let (rows, err) = aiq_rows(
        &sb,
        lake.to_str().unwrap(),
        "SELECT count(*) FROM customers",
        &[],
    );
    assert_eq!(rows, "2\n");
    assert!(
        err.contains("mixed: it holds files of several formats (csv, parquet)"),
        "{err}"
    );
}

#[test]
fn the_views_are_kept_and_renewed_when_a_file_changes() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let src = lake.to_str().unwrap();
    let kept = |sb: &Sandbox| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(sb.home().join("cache/views"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".duckdb"))
            .collect();
        names.sort();
        names
    };
    aiq_rows(&sb, src, "SELECT count(*) FROM customers", &[]);
    let first = kept(&sb);
    assert_eq!(first.len(), 1, "{first:?}");
    aiq_rows(&sb, src, "SELECT count(*) FROM customers", &[]);
    assert_eq!(kept(&sb), first);
    // The kept view names its partition columns' types, so reading it does
    // not guess them again from every file's folder names.
    let db = sb.home().join("cache/views").join(&first[0]);
    let conn = duckdb::Connection::open_with_flags(
        &db,
        duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .unwrap(),
    )
    .unwrap();
    let view: String = conn
        .query_row(
            "SELECT sql FROM duckdb_views() WHERE view_name = 'sales'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    assert!(
        view.contains("hive_types") && view.contains("\"year\" := 'BIGINT'"),
        "{view}"
    );
    fs::write(lake.join("customers.csv"), "id,name\n1,Ann\n2,Bob\n3,Cy\n").unwrap();
    let (rows, _) = aiq_rows(&sb, src, "SELECT count(*) FROM customers", &[]);
    assert_eq!(rows, "3\n");
    let renewed = kept(&sb);
    assert_eq!(renewed.len(), 1, "{renewed:?}");
    assert_ne!(renewed, first);
}

#[cfg(unix)]
#[test]
fn confinement_stays_exact() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let outside = sb.path().join("outside.csv");
    fs::write(&outside, "secret\nhunter2\n").unwrap();
    std::os::unix::fs::symlink(&outside, lake.join("events/part-00009.csv")).unwrap();
    let src = lake.to_str().unwrap();
    let (rows, err) = aiq_rows(&sb, src, "SELECT count(*) FROM events", &[]);
    assert_eq!(rows, "300\n");
    assert!(
        err.contains("part-00009.csv: it links to a file outside the folder"),
        "{err}"
    );
    assert!(!err.contains("outside.csv"), "{err}");
    for sql in [
        "SELECT * FROM read_parquet('/**/*.parquet')".to_string(),
        format!("SELECT * FROM read_csv('{}')", outside.display()),
        format!("SELECT * FROM '{}'", outside.display()),
    ] {
        let out = sb.aiq().args([src, "-e", &sql]).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "{sql}");
        assert!(!stdout_of(&out).contains("hunter2"), "{sql}");
    }
}

/// A partitioned Parquet dataset of 96 files (`year` 2020–2023 ×
/// `region` 0–23), large enough that aiq narrows its view itself, and a
/// small table to join it with.
fn big_lake(sb: &Sandbox) -> PathBuf {
    let lake = sb.path().join("big");
    fs::create_dir_all(&lake).unwrap();
    write_with_duckdb(&format!(
        "COPY (SELECT i AS id, 2020 + i % 4 AS year, (i // 4) % 24 AS region, i * 1.5 AS amount, \
                      TIMESTAMP '2024-01-01' + to_minutes(i) AS sold_at \
               FROM range(960) t(i)) \
         TO '{}' (FORMAT parquet, PARTITION_BY (year, region)); \
         COPY (SELECT r AS region, 'r' || r AS label FROM range(24) t(r)) TO '{}' (HEADER)",
        lake.join("sales").display(),
        lake.join("regions.csv").display(),
    ));
    lake
}

#[test]
fn queries_on_a_large_dataset_answer_as_duckdb_does_however_they_filter() {
    let sb = Sandbox::new();
    let lake = big_lake(&sb);
    let src = lake.to_str().unwrap();
    let direct = format!(
        "read_parquet('{}/sales/**/*.parquet', hive_partitioning = true)",
        lake.display()
    );
    let regions = format!("read_csv('{}/regions.csv')", lake.display());
    let sum = "count(*), sum(amount), min(id), max(id)";
    // Each filters on the partitions in another way; some may read any
    // file, and must still answer alike.
    let queries = [
        format!("SELECT {sum} FROM sales WHERE year = 2022"),
        format!("SELECT {sum} FROM sales WHERE year = 2022 AND region = 7"),
        format!("SELECT {sum} FROM sales WHERE 2021 < year AND region IN (1, 2, 30)"),
        format!("SELECT {sum} FROM sales WHERE year BETWEEN 2021 AND 2022 AND NOT region = 3"),
        format!("SELECT {sum} FROM sales WHERE year = 2020 OR region >= 20"),
        format!("SELECT {sum} FROM sales WHERE (year = 2020 AND region < 2) OR (year = 2023 AND region > 21)"),
        format!("SELECT {sum} FROM sales WHERE year = 1999"),
        format!("SELECT {sum} FROM sales WHERE year <> 2021 AND amount > 100"),
        format!("SELECT {sum} FROM Sales AS S WHERE S.YEAR = 2023 AND s.region <= 4"),
        format!("SELECT {sum} FROM sales WHERE year = 2020 OR amount > 1000"),
        format!("SELECT {sum} FROM sales WHERE year = '2022'"),
        "SELECT a.year, count(*), sum(b.amount) FROM sales a JOIN sales b ON a.region = b.region AND b.year = 2021 \
         WHERE a.year = 2020 GROUP BY ALL ORDER BY ALL"
            .into(),
        "SELECT s.region, r.label, count(*) FROM sales s LEFT JOIN regions r ON r.region = s.region \
         WHERE s.year = 2022 AND s.region < 3 GROUP BY ALL ORDER BY ALL"
            .into(),
        "SELECT r.label, count(s.id) FROM regions r LEFT JOIN sales s ON s.region = r.region \
         WHERE s.year = 2021 GROUP BY ALL ORDER BY ALL"
            .into(),
        "SELECT r.label, count(s.id) FROM regions r LEFT JOIN sales s ON s.region = r.region AND s.year = 2021 \
         GROUP BY ALL ORDER BY ALL"
            .into(),
        format!("WITH y AS (SELECT * FROM sales WHERE year = 2021) SELECT {sum} FROM y"),
        format!("SELECT {sum} FROM (SELECT * FROM sales) WHERE year = 2021"),
        format!("SELECT {sum} FROM sales WHERE year = 2020 UNION ALL SELECT {sum} FROM sales WHERE year = 2023 ORDER BY 1, 2"),
        format!("SELECT {sum} FROM sales s WHERE s.year = 2022 AND EXISTS (SELECT 1 FROM sales t WHERE t.region = s.region AND t.year = 2020 AND t.id > s.id - 3)"),
        "SELECT count(*) FROM sales s WHERE s.year = 2022 AND s.id NOT IN (SELECT id FROM sales WHERE region = 1)"
            .into(),
        "SELECT t.year, t.region, t.id FROM regions r ASOF JOIN sales t ON r.region = t.region AND t.id >= r.region \
         WHERE t.year = 2020 ORDER BY ALL"
            .into(),
        "SELECT count(*) FROM sales POSITIONAL JOIN regions WHERE year = 2021".into(),
        "SELECT year, max(sold_at) FROM sales WHERE region = 5 GROUP BY year ORDER BY year".into(),
        "SELECT * FROM sales WHERE year = 2022 AND region = 9 ORDER BY id".into(),
    ];
    for sql in &queries {
        let (rows, _) = aiq_rows(&sb, src, &as_text(sql), &[]);
        let reference = duck(
            &sql.replace("FROM sales", &format!("FROM {direct}"))
                .replace("FROM Sales", &format!("FROM {direct}"))
                .replace("JOIN sales", &format!("JOIN {direct}"))
                .replace("JOIN regions", &format!("JOIN {regions}"))
                .replace("FROM regions", &format!("FROM {regions}")),
        );
        assert_eq!(rows, reference, "{sql}");
    }
}

#[test]
fn a_query_on_some_partitions_of_a_large_dataset_does_not_bind_the_others() {
    let sb = Sandbox::new();
    let lake = big_lake(&sb);
    let src = lake.to_str().unwrap();
    let one = "SELECT count(*), sum(amount) FROM sales WHERE year = 2022 AND region IN (3, 4)";
    let (before, _) = aiq_rows(&sb, src, one, &[]);
    let direct = one.replace(
        "FROM sales",
        &format!(
            "FROM read_parquet('{}/sales/**/*.parquet', hive_partitioning = true)",
            lake.display()
        ),
    );
    assert_eq!(before, duck(&direct));
    assert!(before.starts_with("20,"), "{before}");
    // Break the dataset's first file, which DuckDB reads to bind a view of
    // all the files, keeping its size and time so the kept views stay.
    break_parquet(&lake.join("sales/year=2020/region=0/data_0.parquet"));
    // Only the four files of the question are bound and read.
    let (after, _) = aiq_rows(&sb, src, one, &[]);
    assert_eq!(after, before);
    let explained = sb
        .aiq()
        .args([src, "-e", &format!("EXPLAIN {one}")])
        .output()
        .unwrap();
    assert_eq!(
        explained.status.code(),
        Some(0),
        "{}",
        stderr_of(&explained)
    );
    // Reading every file, or a sample drawn before the filter, binds them all.
    for whole in [
        "SELECT count(*) FROM sales",
        "SELECT count(*) FROM sales USING SAMPLE 10 ROWS WHERE year = 2022",
        "SELECT count(*) FROM sales WHERE year = 2022 OR amount > 0",
    ] {
        let out = sb.aiq().args([src, "-e", whole]).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{whole}: the whole view was not read"
        );
    }
    // In one process, each statement reads the kept view again: nothing
    // narrower stays behind from the one before.
    let script = sb.path().join("twice.lua");
    fs::write(
        &script,
        "local rows = aiq.query('SELECT count(*) AS n FROM sales WHERE year = 2022')\n\
         print(rows[1].n)\n\
         print(pcall(aiq.query, 'SELECT count(*) AS n FROM sales'))\n\
         print(aiq.query('SELECT count(*) AS n FROM sales WHERE year = 2021')[1].n)\n",
    )
    .unwrap();
    let out = sb
        .aiq()
        .args([src, "--lua", script.to_str().unwrap()])
        .output()
        .unwrap();
    let printed = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 3, "{printed}");
    assert_eq!(lines[0], "240");
    assert!(lines[1].starts_with("false"), "{printed}");
    assert_eq!(lines[2], "240");
}

#[test]
fn the_statement_timeout_stops_a_narrowed_query() {
    let sb = Sandbox::new();
    let lake = big_lake(&sb);
    let src = lake.to_str().unwrap();
    sb.write_config("[query]\ntimeout_secs = 1\n");
    // 240 rows of one year, joined with themselves four times: billions
    // of rows to count, on the narrower view's own connection.
    let slow = "SELECT count(*) FROM sales a, sales b, sales c, sales d \
                WHERE a.year = 2021 AND b.year = 2021 AND c.year = 2021 AND d.year = 2021 \
                AND a.id + b.id + c.id + d.id > 0";
    let started = std::time::Instant::now();
    let out = sb.aiq().args([src, "-e", slow]).output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ran longer than 1 s"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// A folder that is itself one dataset, given as the source, is one table
/// (as Spark, DuckDB's `hive_partitioning`, pyarrow and Polars read it): a
/// partitioned folder, a Spark output folder, and a partition folder of
/// one (which keeps its own key as a column). A glob's table is named
/// after the stem its files share; `--name` names it when saved.
#[test]
fn a_dataset_folder_given_itself_is_one_table() {
    let sb = Sandbox::new();
    let lake = lake(&sb);
    let sales = lake.join("sales");
    let (rows, _) = aiq_rows(
        &sb,
        sales.to_str().unwrap(),
        "SELECT count(*), count(DISTINCT year), count(DISTINCT region) FROM sales",
        &[],
    );
    assert_eq!(rows, "600,4,3\n");
    let events = lake.join("events");
    let (rows, _) = aiq_rows(
        &sb,
        events.to_str().unwrap(),
        "SELECT count(*) FROM events",
        &[],
    );
    assert_eq!(rows, "300\n");
    // One partition: still `sales`, with `year` and `region`.
    let one = sales.join("year=2021");
    let (rows, _) = aiq_rows(
        &sb,
        one.to_str().unwrap(),
        "SELECT min(year), max(year), count(DISTINCT region), count(*) FROM sales",
        &[],
    );
    assert_eq!(rows, "2021,2021,3,150\n");
    let out = sb
        .aiq()
        .args(["schema", one.to_str().unwrap()])
        .output()
        .unwrap();
    let schema = stdout_of(&out);
    assert!(
        schema.contains("sales") && !schema.contains("region=0"),
        "{schema}"
    );
    // One file: "1 file".
    let single = sales.join("year=2021").join("region=0");
    let out = sb
        .aiq()
        .args(["schema", single.to_str().unwrap()])
        .output()
        .unwrap();
    let schema = stdout_of(&out);
    assert!(
        schema.contains("a dataset of 1 file partitioned by"),
        "{schema}"
    );
    // A glob of monthly files: their shared stem.
    let monthly = lake.join("monthly");
    fs::create_dir_all(&monthly).unwrap();
    for m in 1..=3 {
        fs::write(
            monthly.join(format!("orders_2024-0{m}.csv")),
            format!("id,m\n{m},{m}\n"),
        )
        .unwrap();
    }
    let glob = format!("{}/orders_*.csv", monthly.display());
    let (rows, _) = aiq_rows(&sb, &glob, "SELECT count(*) FROM orders", &[]);
    assert_eq!(rows, "3\n");
    // Saved with `--name`.
    sb.aiq()
        .args(["sources", "add", "m", glob.as_str(), "--name", "sold"])
        .assert()
        .success();
    let (rows, _) = aiq_rows(&sb, "m", "SELECT sum(m) FROM sold", &[]);
    assert_eq!(rows, "6\n");
    let out = sb
        .aiq()
        .args(["sources", "add", "f", lake.to_str().unwrap(), "--name", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--name"), "{}", stderr_of(&out));
}

/// A value nested thousands of levels deep in a JSON Lines file does not
/// crash aiq: past 16 levels the value is read as JSON text, so the
/// schema, a count, a CSV export and an MCP call all answer.
#[test]
fn a_deeply_nested_json_value_is_read_as_text() {
    let sb = Sandbox::new();
    for depth in [1_500usize, 6_000, 9_999] {
        let file = sb.path().join(format!("deep{depth}.jsonl"));
        let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        fs::write(
            &file,
            format!("{{\"id\": 1, \"v\": {deep}}}\n{{\"id\": 2, \"v\": [2]}}\n"),
        )
        .unwrap();
        let source = file.to_str().unwrap();
        let out = sb.aiq().arg("schema").arg(source).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{depth}: {}", stderr_of(&out));
        let table = format!("deep{depth}");
        let (rows, err) = aiq_rows(
            &sb,
            source,
            &format!("SELECT count(*) AS n FROM {table}"),
            &[],
        );
        assert_eq!(rows, "2\n", "{depth}: {err}");
        let out = sb
            .aiq()
            .arg(source)
            .args([
                "-e",
                &format!("SELECT id, v FROM {table} ORDER BY id"),
                "-f",
                "csv",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{depth}: {}", stderr_of(&out));
        let csv = stdout_of(&out);
        assert!(
            csv.contains(&"[".repeat(100)),
            "{depth}: {}",
            &csv[..csv.len().min(200)]
        );
    }
}

/// DuckDB works a JSON value's structure out by recursion on its own
/// threads, whatever its depth: a value nested past 10,000 levels (objects
/// or arrays, in JSON or JSON Lines, behind brackets inside strings) is
/// refused with the line that holds it, before DuckDB reads the file; in
/// a folder the other tables are served and the MCP server answers.
#[test]
fn a_value_nested_past_the_bound_is_refused_naming_its_line() {
    let sb = Sandbox::new();
    let lake = sb.path().join("lake");
    fs::create_dir(&lake).unwrap();
    fs::write(lake.join("good.csv"), "a\n1\n2\n").unwrap();
    let cases = [
        ("objects.jsonl", "{\"b\":", "}", 52_006usize),
        ("arrays.jsonl", "[", "]", 300_000),
        ("wrapped.json", "{\"c\": [", "]}", 10_001),
    ];
    for (name, open, close, depth) in cases {
        let file = sb.path().join(name);
        // Brackets in a string on the first line do not count; the deep
        // value is on line 3.
        let text = format!(
            "{{\"id\": 1, \"v\": \"{}\"}}\n{{\"id\": 2, \"v\": 1}}\n{{\"id\": 3, \"v\": {}1{}}}\n",
            "[{".repeat(20_000),
            open.repeat(depth / open.matches(['[', '{']).count()),
            close.repeat(depth / open.matches(['[', '{']).count()),
        );
        let text = if name.ends_with(".json") {
            format!("[{}]", text.trim_end().replace('\n', ",\n"))
        } else {
            text
        };
        fs::write(&file, &text).unwrap();
        let source = file.to_str().unwrap();
        for args in [
            vec!["schema", source],
            vec![source, "-e", "SELECT count(*) FROM t", "-f", "csv"],
        ] {
            let out = sb.aiq().args(&args).output().unwrap();
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(3), "{name} {args:?}: {err}");
            assert!(
                err.contains("line 3 holds a value nested more than 10,000 levels deep")
                    && err.contains(name),
                "{name}: {err}"
            );
        }
        fs::copy(&file, lake.join(name)).unwrap();
    }
    let out = sb
        .aiq()
        .arg(lake.to_str().unwrap())
        .args(["-e", "SELECT sum(a) AS s FROM good", "-f", "csv"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout_of(&out), "s\n3\n");
    for (name, ..) in cases {
        assert!(
            err.contains(&format!("skipped {}", lake.join(name).display())),
            "{err}"
        );
    }
    // The MCP server over the folder answers.
    let answer = common::mcp::stdio_call(
        &sb,
        &["mcp", lake.to_str().unwrap()],
        "run_query",
        serde_json::json!({"sql": "SELECT sum(a) AS s FROM good"}),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(
        answer["structuredContent"]["rows"],
        serde_json::json!([[3]]),
        "{answer}"
    );
}

/// DuckDB's JSON functions recurse as deep as a value goes: a value
/// nested 100,000 deep in a statement does not overflow aiq's stack.
#[test]
fn json_functions_over_a_deep_value_answer() {
    let sb = Sandbox::new();
    let file = sb.path().join("tiny.csv");
    fs::write(&file, "a\n1\n").unwrap();
    let (rows, err) = aiq_rows(
        &sb,
        file.to_str().unwrap(),
        "SELECT length(json_structure(repeat('[', 100000) || repeat(']', 100000))::VARCHAR) AS n",
        &[],
    );
    assert_eq!(rows, "200006\n", "{err}");
}
