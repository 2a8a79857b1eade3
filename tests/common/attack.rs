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
    /// A glob source over the CSV folder's `cust*.csv`: the same payloads
    /// as the folder, with `payroll.csv` beside the files it matches.
    Glob,
    Postgres,
    MariaDb,
    ClickHouse,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::DuckDb => "duckdb",
            Engine::Csv => "csv",
            Engine::Glob => "glob",
            Engine::Postgres => "postgres",
            Engine::MariaDb => "mariadb",
            Engine::ClickHouse => "clickhouse",
        }
    }

    fn letter(self) -> char {
        match self {
            Engine::Sqlite => 's',
            Engine::DuckDb => 'd',
            Engine::Csv | Engine::Glob => 'c',
            Engine::Postgres => 'p',
            Engine::MariaDb => 'm',
            Engine::ClickHouse => 'k',
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

pub use super::payloads::PAYLOADS;

/// The variants for `engine`, with `{out}` replaced by `outside`.
pub fn corpus(engine: Engine, outside: &str, seed: u64) -> Vec<Variant> {
    let mut out = Vec::new();
    let listed = PAYLOADS
        .iter()
        .filter(|p| p.engines.contains(engine.letter()))
        .map(|p| (p.name, p.category, p.sql.replace("{out}", outside)));
    for (name, category, sql) in listed.chain(deep()) {
        for (family, trick) in super::tricks::FAMILIES {
            let mut rng = Rng::new(seed ^ hash(family) ^ hash(name).rotate_left(17));
            out.push(Variant {
                id: out.len(),
                family,
                payload: name,
                category,
                sql: trick(&sql, &mut rng),
            });
        }
    }
    out
}

/// Statements nested past what the gate reads, on every engine: a chain
/// of 6,000 additions and 300 nested parentheses. Each must be refused
/// with a message, never end the process (SPEC §4.2).
pub fn deep() -> Vec<(&'static str, Category, String)> {
    vec![
        (
            "deep-chain",
            Category::EngineState,
            format!("SELECT 1{}", " + 1".repeat(6_000)),
        ),
        (
            "deep-parentheses",
            Category::EngineState,
            format!("SELECT {}1{}", "(".repeat(300), ")".repeat(300)),
        ),
    ]
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
