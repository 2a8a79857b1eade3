//! The generated attacker's corpus (SPEC §4.2, §4.3): hostile payloads
//! (writes, reads of a hidden table, reads of files outside the source,
//! engine-state calls) wrapped in tricks that make one text read two ways
//! (comments, line ends, whitespace, quoting, escape strings, nesting,
//! case, statement stacking). Deterministic: the same seed gives the same
//! variants in the same order, so a failure names its variant.

#![allow(dead_code)]

/// The engine a corpus is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Sqlite,
    DuckDb,
    Csv,
    Postgres,
    MariaDb,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::DuckDb => "duckdb",
            Engine::Csv => "csv",
            Engine::Postgres => "postgres",
            Engine::MariaDb => "mariadb",
        }
    }

    fn letter(self) -> char {
        match self {
            Engine::Sqlite => 's',
            Engine::DuckDb => 'd',
            Engine::Csv => 'c',
            Engine::Postgres => 'p',
            Engine::MariaDb => 'm',
        }
    }
}

/// What a payload tries to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Write,
    Hidden,
    Outside,
    EngineState,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Write,
        Category::Hidden,
        Category::Outside,
        Category::EngineState,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Write => "write",
            Category::Hidden => "hidden-table",
            Category::Outside => "outside-file",
            Category::EngineState => "engine-state",
        }
    }
}

/// The hidden table every fixture holds, its columns and marker values:
/// none of these may appear in any output unless the statement itself
/// named it.
pub const HIDDEN_TABLE: &str = "payroll";
pub const HIDDEN_COLUMNS: [&str; 2] = ["salary_cents", "secret_note"];
/// The hidden table's text value; DuckDB's column statistics keep an
/// 8-byte prefix, so the prefix alone is a leak too.
pub const HIDDEN_TEXT: &str = "PAYMARK-Q7731";
pub const HIDDEN_TEXT_PREFIX: &str = "PAYMARK";
pub const HIDDEN_NUMBER: &str = "98765432";
/// The file outside the source, its value, and the name that tells a
/// listing of the outside folder apart.
pub const OUTSIDE_FILE: &str = "zz_outside_secret.csv";
pub const OUTSIDE_TEXT: &str = "OUTSIDE-MARKER-4410";
pub const OUTSIDE_PARQUET: &str = "zz_outside.parquet";
pub const OUTSIDE_DB: &str = "zz_outside.db";

/// What must never be shown unless the statement itself contains it.
pub fn sentinels() -> Vec<&'static str> {
    let mut v = vec![
        HIDDEN_TABLE,
        HIDDEN_TEXT_PREFIX,
        HIDDEN_NUMBER,
        OUTSIDE_FILE,
        OUTSIDE_TEXT,
        OUTSIDE_PARQUET,
        OUTSIDE_DB,
    ];
    v.extend(HIDDEN_COLUMNS);
    v
}

/// The sentinels `output` shows that `sql` does not name (case-insensitive).
pub fn leaks(sql: &str, output: &str) -> Vec<&'static str> {
    let sql = sql.to_lowercase();
    let output = output.to_lowercase();
    sentinels()
        .into_iter()
        .filter(|s| {
            let s = s.to_lowercase();
            output.contains(&s) && !sql.contains(&s)
        })
        .collect()
}

/// The folder `outside/` beside a source, holding a CSV file, a Parquet
/// file and a SQLite database with the outside marker.
pub fn outside_folder(root: &std::path::Path) -> std::path::PathBuf {
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join(OUTSIDE_FILE),
        format!("id,secret\n1,{OUTSIDE_TEXT}\n"),
    )
    .unwrap();
    let other = rusqlite::Connection::open(outside.join(OUTSIDE_DB)).unwrap();
    other
        .execute_batch(&format!(
            "CREATE TABLE stolen (secret TEXT); INSERT INTO stolen VALUES ('{OUTSIDE_TEXT}');"
        ))
        .unwrap();
    drop(other);
    let duck = duckdb::Connection::open_in_memory().unwrap();
    duck.execute_batch(&format!(
        "COPY (SELECT 1 AS id, '{OUTSIDE_TEXT}' AS secret) TO '{}' (FORMAT parquet)",
        outside.join(OUTSIDE_PARQUET).display()
    ))
    .unwrap();
    outside
}

/// One payload: what it tries, on which engines (letters s d c p m).
pub struct Payload {
    pub category: Category,
    pub name: &'static str,
    pub engines: &'static str,
    pub sql: &'static str,
}

const fn p(
    category: Category,
    name: &'static str,
    engines: &'static str,
    sql: &'static str,
) -> Payload {
    Payload {
        category,
        name,
        engines,
        sql,
    }
}

use Category::{EngineState as E, Hidden as H, Outside as O, Write as W};

/// Every payload; `{out}` is the folder outside the source.
pub const PAYLOADS: &[Payload] = &[
    p(
        W,
        "insert",
        "sdcpm",
        "INSERT INTO customers VALUES (99, 'Mallory', 'XX', false, '2024-01-01')",
    ),
    p(
        W,
        "update",
        "sdcpm",
        "UPDATE customers SET name = 'Mallory'",
    ),
    p(W, "delete", "sdcpm", "DELETE FROM orders"),
    p(W, "create", "sdcpm", "CREATE TABLE evil AS SELECT 42 AS x"),
    p(W, "drop", "sdcpm", "DROP TABLE orders"),
    p(W, "attach", "sdc", "ATTACH '{out}/evil.db' AS evil"),
    p(W, "copy-to", "dcp", "COPY customers TO '{out}/copy.csv'"),
    p(W, "export", "dc", "EXPORT DATABASE '{out}/dump'"),
    p(W, "install", "dc", "INSTALL httpfs"),
    p(W, "load", "dc", "LOAD httpfs"),
    p(W, "pragma-write", "s", "PRAGMA user_version = 7"),
    p(W, "pragma-optimize", "s", "SELECT * FROM pragma_optimize"),
    p(W, "vacuum", "sdcp", "VACUUM"),
    p(W, "vacuum-into", "s", "VACUUM INTO '{out}/copy.db'"),
    p(
        W,
        "replace",
        "sm",
        "REPLACE INTO customers VALUES (1, 'Mallory', 'XX', 0, '2024-01-01')",
    ),
    p(W, "truncate", "dcpm", "TRUNCATE orders"),
    p(
        W,
        "cte-delete",
        "p",
        "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
    ),
    p(W, "select-into", "p", "SELECT * INTO evil FROM customers"),
    p(
        W,
        "into-outfile",
        "m",
        "SELECT * FROM customers INTO OUTFILE '{out}/outfile.txt'",
    ),
    p(W, "do-block", "p", "DO $$ BEGIN DELETE FROM orders; END $$"),
    p(W, "create-temp", "sdcpm", "CREATE TEMP TABLE evil (x INT)"),
    p(
        W,
        "create-view",
        "sdcpm",
        "CREATE VIEW evil AS SELECT 1 AS x",
    ),
    p(
        W,
        "alter",
        "sdcpm",
        "ALTER TABLE customers ADD COLUMN evil INT",
    ),
    p(
        W,
        "create-index",
        "sdcpm",
        "CREATE INDEX evil ON customers (name)",
    ),
    p(W, "analyze", "sdp", "ANALYZE"),
    p(
        W,
        "insert-returning",
        "sdcp",
        "INSERT INTO orders SELECT * FROM orders RETURNING *",
    ),
    p(
        W,
        "trigger",
        "s",
        "CREATE TRIGGER evil AFTER INSERT ON customers BEGIN DELETE FROM orders; END",
    ),
    p(W, "begin", "sdcpm", "BEGIN"),
    p(W, "create-macro", "dc", "CREATE MACRO evil(a) AS a"),
    p(
        W,
        "copy-from",
        "dcp",
        "COPY customers FROM '{out}/zz_outside_secret.csv'",
    ),
    p(H, "select", "sdcpm", "SELECT * FROM payroll"),
    p(
        H,
        "pragma-table-info-fn",
        "sdc",
        "SELECT * FROM pragma_table_info('payroll')",
    ),
    p(
        H,
        "pragma-table-info",
        "sdc",
        "PRAGMA table_info('payroll')",
    ),
    p(H, "duckdb-columns", "dc", "SELECT * FROM duckdb_columns()"),
    p(H, "duckdb-tables", "dc", "SELECT * FROM duckdb_tables()"),
    p(
        H,
        "information-schema",
        "dcpm",
        "SELECT * FROM information_schema.columns",
    ),
    p(H, "sqlite-master", "sdc", "SELECT * FROM sqlite_master"),
    p(
        H,
        "json-execute",
        "dc",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM payroll'))",
    ),
    p(
        H,
        "storage-info",
        "d",
        "SELECT * FROM pragma_storage_info('payroll')",
    ),
    p(H, "show-tables-pragma", "dc", "PRAGMA show_tables"),
    p(H, "show-tables", "dcm", "SHOW TABLES"),
    p(H, "describe", "dcm", "DESCRIBE payroll"),
    p(
        H,
        "query-fn",
        "dc",
        "SELECT * FROM query('SELECT * FROM payroll')",
    ),
    p(H, "dbstat", "s", "SELECT * FROM dbstat"),
    p(H, "table-list", "s", "SELECT * FROM pragma_table_list"),
    p(H, "pg-class", "p", "SELECT relname FROM pg_class"),
    p(
        H,
        "pg-stats",
        "p",
        "SELECT * FROM pg_stats WHERE schemaname = 'public'",
    ),
    p(H, "show-columns", "m", "SHOW COLUMNS FROM payroll"),
    p(
        H,
        "columns",
        "sdcpm",
        "SELECT secret_note, salary_cents FROM payroll",
    ),
    p(
        H,
        "join",
        "sdcpm",
        "SELECT c.name, p.* FROM customers c JOIN payroll p ON p.emp_id = c.id",
    ),
    p(H, "schema-sql", "sdc", "SELECT sql FROM sqlite_schema"),
    p(
        H,
        "index-list",
        "s",
        "SELECT * FROM pragma_index_list('payroll')",
    ),
    p(H, "table-xinfo", "s", "PRAGMA table_xinfo(payroll)"),
    p(H, "summarize", "dc", "SUMMARIZE payroll"),
    p(
        H,
        "duckdb-constraints",
        "dc",
        "SELECT * FROM duckdb_constraints()",
    ),
    p(H, "pg-tables", "p", "SELECT * FROM pg_tables"),
    p(
        H,
        "pg-attribute",
        "p",
        "SELECT attname FROM pg_attribute WHERE attrelid = 'payroll'::regclass",
    ),
    p(
        H,
        "mysql-tables",
        "m",
        "SELECT * FROM information_schema.tables",
    ),
    p(H, "show-create", "m", "SHOW CREATE TABLE payroll"),
    p(
        O,
        "read-csv",
        "dc",
        "SELECT * FROM read_csv('{out}/zz_outside_secret.csv')",
    ),
    p(
        O,
        "bare-path",
        "dc",
        "SELECT * FROM '{out}/zz_outside_secret.csv'",
    ),
    p(
        O,
        "read-text",
        "dc",
        "SELECT * FROM read_text('{out}/zz_outside_secret.csv')",
    ),
    p(O, "glob", "dc", "SELECT * FROM glob('{out}/*')"),
    p(
        O,
        "read-parquet",
        "dc",
        "SELECT * FROM read_parquet('{out}/**/*.parquet')",
    ),
    p(
        O,
        "attach-read",
        "sdc",
        "ATTACH '{out}/zz_outside.db' AS other",
    ),
    p(
        O,
        "sqlite-scan",
        "dc",
        "SELECT * FROM sqlite_scan('{out}/zz_outside.db', 'stolen')",
    ),
    p(O, "copy-out", "dc", "COPY (SELECT 1) TO '{out}/canary.csv'"),
    p(
        O,
        "pg-read-file",
        "p",
        "SELECT pg_read_file('{out}/zz_outside_secret.csv')",
    ),
    p(
        O,
        "load-file",
        "m",
        "SELECT LOAD_FILE('{out}/zz_outside_secret.csv')",
    ),
    p(
        O,
        "load-extension",
        "s",
        "SELECT load_extension('{out}/evil.so')",
    ),
    p(
        O,
        "read-blob",
        "dc",
        "SELECT * FROM read_blob('{out}/zz_outside_secret.csv')",
    ),
    p(
        O,
        "read-json",
        "dc",
        "SELECT * FROM read_json_auto('{out}/zz_outside_secret.csv')",
    ),
    p(
        O,
        "read-csv-glob",
        "dc",
        "SELECT * FROM read_csv('{out}/*.csv')",
    ),
    p(
        E,
        "enable-logging",
        "dc",
        "SELECT * FROM enable_logging(storage='file', storage_path='{out}/log')",
    ),
    p(
        E,
        "enable-profiling",
        "dc",
        "SELECT * FROM enable_profiling()",
    ),
    p(E, "checkpoint", "dc", "SELECT * FROM checkpoint()"),
    p(E, "write-log", "dc", "SELECT write_log('aiq-attack')"),
    p(E, "pragma-profiling", "dc", "PRAGMA enable_profiling"),
    p(E, "set-external", "dc", "SET enable_external_access = true"),
    p(E, "set", "dcpm", "SET autocommit = 0"),
    p(E, "query-only", "s", "PRAGMA query_only = 0"),
    p(E, "writable-schema", "s", "PRAGMA writable_schema = 1"),
    p(E, "trusted-schema", "s", "PRAGMA trusted_schema = 1"),
    p(
        E,
        "temp-store-dir",
        "s",
        "PRAGMA temp_store_directory = '{out}'",
    ),
    p(E, "mmap-size", "s", "PRAGMA mmap_size = 268435456"),
    p(
        E,
        "set-config",
        "p",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
    ),
    p(
        E,
        "set-transaction",
        "pm",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    ),
    p(E, "set-global", "m", "SET GLOBAL max_connections = 5"),
    p(E, "journal-mode", "s", "PRAGMA journal_mode = WAL"),
    p(E, "hard-heap-limit", "s", "PRAGMA hard_heap_limit = 1000"),
    p(E, "synchronous", "s", "PRAGMA synchronous = OFF"),
    p(E, "locking-mode", "s", "PRAGMA locking_mode = EXCLUSIVE"),
    p(E, "foreign-keys", "s", "PRAGMA foreign_keys = 0"),
    p(E, "checkpoint-stmt", "dc", "CHECKPOINT"),
    p(E, "force-checkpoint", "dc", "FORCE CHECKPOINT"),
    p(
        E,
        "disable-logging",
        "dc",
        "SELECT * FROM disable_logging()",
    ),
    p(E, "reset-all", "dcp", "RESET ALL"),
    p(E, "set-memory", "dc", "SET memory_limit = '1GB'"),
];

/// One generated statement.
#[derive(Debug, Clone)]
pub struct Variant {
    pub id: usize,
    pub family: &'static str,
    pub payload: &'static str,
    pub category: Category,
    pub sql: String,
}

impl Variant {
    /// `#id family/payload` — how failures name the variant.
    pub fn label(&self) -> String {
        format!("#{} {}/{}", self.id, self.family, self.payload)
    }
}

/// The variants for `engine`, with `{out}` replaced by `outside`.
pub fn corpus(engine: Engine, outside: &str, seed: u64) -> Vec<Variant> {
    let mut out = Vec::new();
    for payload in PAYLOADS
        .iter()
        .filter(|p| p.engines.contains(engine.letter()))
    {
        let sql = payload.sql.replace("{out}", outside);
        for (family, trick) in super::tricks::FAMILIES {
            let mut rng = Rng::new(seed ^ hash(family) ^ hash(payload.name).rotate_left(17));
            out.push(Variant {
                id: out.len(),
                family,
                payload: payload.name,
                category: payload.category,
                sql: trick(&sql, &mut rng),
            });
        }
    }
    out
}

/// A deterministic sample: for each family and category, one variant.
pub fn stratified_sample(corpus: &[Variant], seed: u64) -> Vec<Variant> {
    let mut out = Vec::new();
    for (family, _) in super::tricks::FAMILIES {
        for category in Category::ALL {
            let pool: Vec<&Variant> = corpus
                .iter()
                .filter(|v| v.family == *family && v.category == category)
                .collect();
            if pool.is_empty() {
                continue;
            }
            let pick = Rng::new(seed ^ hash(family) ^ category as u64).below(pool.len());
            out.push(pool[pick].clone());
        }
    }
    out
}

/// FNV-1a, to seed per family and payload.
pub fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// splitmix64: small, seeded, the same everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
