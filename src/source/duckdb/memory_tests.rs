//! DuckDB's memory ceiling (`[query] memory_limit`): set before the
//! configuration is locked, spilling into aiq's private folder, a query
//! beyond it failing with a message that names the setting — and the
//! source answering the next statement.

use super::*;
use crate::source::Value;

fn options(limit: Option<&str>) -> OpenOptions {
    OpenOptions {
        memory_limit: limit.map(str::to_string),
        ..OpenOptions::default()
    }
}

/// One setting as DuckDB reports it.
fn setting(src: &DuckDbSource, name: &str) -> String {
    src.conn
        .borrow()
        .query_row(&format!("SELECT current_setting('{name}')"), [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap()
}

struct Count(u64, Option<Value>);

impl RowSink for Count {
    fn columns(&mut self, _: &[Column]) -> std::io::Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> std::io::Result<()> {
        self.0 += 1;
        self.1 = row.first().cloned();
        Ok(())
    }
}

fn read(src: &DuckDbSource, sql: &str) -> Result<Option<Value>, ExecError> {
    let mut sink = Count(0, None);
    src.execute(
        &CheckedSql::unchecked_read_for_tests(sql),
        &mut sink,
        &CancelToken::new(),
    )?;
    Ok(sink.1)
}

#[test]
fn the_ceiling_is_set_and_the_engine_spills_into_a_private_folder() {
    let src = DuckDbSource::open_memory(options(Some("64MB"))).unwrap();
    assert_eq!(setting(&src, "memory_limit"), "61.0 MiB");
    let spill = setting(&src, "temp_directory");
    let dir = src.spill_dir.as_ref().unwrap().path().to_path_buf();
    assert_eq!(Path::new(&spill), dir);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(crate::cleanup::VIEWS_PREFIX), "{name}");
    // The configuration stays locked: no statement lifts the ceiling.
    let lifted = src.conn.borrow().execute_batch("SET memory_limit = '10GB'");
    assert!(lifted.is_err());
    // A sort bigger than the ceiling spills and finishes.
    let sorted = read(
        &src,
        "SELECT max(s) FROM (SELECT md5(x::VARCHAR) AS s FROM range(2000000) t(x) ORDER BY s)",
    )
    .unwrap();
    assert!(matches!(sorted, Some(Value::Text(_))), "{sorted:?}");
    drop(src);
    assert!(!dir.exists(), "the spill folder is removed with its source");

    // A share of the machine is read too; without a ceiling DuckDB keeps its own.
    let quarter = DuckDbSource::open_memory(options(Some("25%"))).unwrap();
    let own = DuckDbSource::open_memory(options(None)).unwrap();
    assert_ne!(
        setting(&quarter, "memory_limit"),
        setting(&own, "memory_limit")
    );
}

#[test]
fn a_query_beyond_the_ceiling_fails_clearly_and_the_next_one_runs() {
    let src = DuckDbSource::open_memory(options(Some("32MB"))).unwrap();
    let e = read(
        &src,
        "SELECT length(string_agg(md5(x::VARCHAR), ',')) FROM range(5000000) t(x)",
    )
    .unwrap_err();
    let ExecError::Engine(text) = e else {
        panic!("{e:?}")
    };
    assert!(
        text.starts_with("the query needs more memory than DuckDB may use (32MB, [query] memory_limit), even spilling to disk: Out of Memory Error"),
        "{text}"
    );
    assert_eq!(read(&src, "SELECT 41 + 1").unwrap(), Some(Value::Int(42)));
}

#[test]
fn a_ceiling_duckdb_cannot_read_is_named() {
    let Err(e) = DuckDbSource::open_memory(options(Some("lots"))) else {
        panic!("opened with memory_limit = lots");
    };
    assert!(
        e.0.contains("[query] memory_limit = \"lots\" is not a size DuckDB reads"),
        "{}",
        e.0
    );
    let Err(e) = DuckDbSource::open_memory(options(Some("250%"))) else {
        panic!("opened with memory_limit = 250%");
    };
    assert!(
        e.0.starts_with("[query] memory_limit = \"250%\" is not a size DuckDB reads: a share"),
        "{}",
        e.0
    );
}

#[test]
fn a_share_of_the_machine_is_a_share_of_what_duckdb_sees() {
    assert_eq!(
        parse_size("19.3 GiB"),
        Some(19.3 * 1024.0 * 1024.0 * 1024.0)
    );
    assert_eq!(parse_size("61.0 MiB"), Some(61.0 * 1024.0 * 1024.0));
    assert_eq!(parse_size("512 bytes"), Some(512.0));
    assert_eq!(parse_size("lots"), None);
    assert_eq!(engine_size("2GB").unwrap(), "2GB");
    let quarter = engine_size("25%").unwrap();
    let kb: f64 = quarter.strip_suffix("KB").unwrap().parse().unwrap();
    let seen = machine_memory().unwrap();
    assert!(
        (kb * 1000.0 - seen / 4.0).abs() < 2000.0,
        "{quarter} of {seen}"
    );
    assert!(engine_size("0%").is_err());
    assert!(engine_size("150%").is_err());
}
