//! Tables the user took out of a source (`exclude`, `include`, `--tables`;
//! SPEC §4.3): the gate refuses any statement that names one, whatever
//! form it takes — a query, `PRAGMA table_info(t)`, `DESCRIBE t`, a file
//! read of the data behind a view. Read from tokens, not from a parse, so
//! every form the gate lets through is covered the same way; a word that
//! merely looks like a hidden table (an alias) is refused too, and the
//! message says why.
//!
//! While tables are hidden, the engines' own catalogs (`sqlite_master`,
//! `information_schema`, `pg_catalog`, `duckdb_tables()`…) are refused as
//! well: they would list what was hidden.

use std::collections::HashSet;

use sqlparser::tokenizer::Token;

use super::forms::tokenize;
use super::{Dialect, Refusal};

/// The hidden tables of one source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hidden {
    /// Hidden tables' names, lowercased: as listed (`public.payroll`) and
    /// bare (`payroll`).
    names: HashSet<String>,
    /// The patterns that hid them, for tables the catalog did not list
    /// (files read directly, tables made later).
    patterns: Vec<String>,
}

/// Words naming the engines' catalogs, refused while tables are hidden.
const CATALOG_WORDS: &[&str] = &[
    "sqlite_master",
    "sqlite_schema",
    "sqlite_temp_master",
    "sqlite_temp_schema",
    "information_schema",
    "pg_catalog",
    "pg_class",
    "pg_tables",
    "pg_views",
    "pg_attribute",
    "pg_namespace",
    "pg_stats",
    "pg_description",
    "performance_schema",
    "table_list",
];

/// Whether `table` (as an engine names what a statement reads) is one of
/// the engines' catalogs, which would list hidden tables.
pub fn is_catalog(table: &str) -> bool {
    let lower = table.to_lowercase();
    let bare = lower.rsplit('.').next().unwrap_or(&lower);
    CATALOG_WORDS.contains(&bare)
        || bare == "dbstat"
        // PostgreSQL's and DuckDB's `pg_catalog` views (`pg_proc`,
        // `pg_views`…), SQLite's statistics (`sqlite_stat1`, `sqlite_stat4`).
        || bare.starts_with("pg_")
        || bare.starts_with("sqlite_stat")
        // `data_version` is a counter (FTS5 reads it on every MATCH).
        || (bare.starts_with("pragma_") && bare != "pragma_data_version")
        || lower.starts_with("information_schema.")
        || lower.starts_with("pg_catalog.")
        || bare.starts_with("duckdb_")
}

/// `names` lowercase, each as listed (`public.payroll`) and bare
/// (`payroll`).
pub(super) fn listed_and_bare(names: impl IntoIterator<Item = String>) -> HashSet<String> {
    let mut set = HashSet::new();
    for name in names {
        let lower = name.to_lowercase();
        if let Some(bare) = lower.rsplit('.').next() {
            set.insert(bare.to_string());
        }
        set.insert(lower);
    }
    set
}

impl Hidden {
    /// Hidden `names` (as the catalog lists them) and the `patterns` that
    /// hide tables (`*`/`?` wildcards, lowercase).
    pub fn new(names: impl IntoIterator<Item = String>, patterns: Vec<String>) -> Hidden {
        Hidden {
            names: listed_and_bare(names),
            patterns,
        }
    }

    /// The hidden tables' names, lowercased (as listed, and bare).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Whether a table (or file) name is hidden.
    pub fn hides(&self, name: &str) -> bool {
        let lower = name.to_lowercase();
        let bare = lower.rsplit('.').next().unwrap_or(&lower);
        self.names.contains(&lower)
            || self.names.contains(bare)
            || self
                .patterns
                .iter()
                .any(|p| super::glob(p, &lower) || super::glob(p, bare))
    }

    /// The hidden table a file path reads, if any: a path the engine reads
    /// directly (`FROM '…/payroll.csv'`, a dataset's `…/payroll/part-0.parquet`)
    /// reads the hidden table whose file or folder it names.
    pub fn hidden_by_path(&self, path: &str) -> Option<String> {
        if !path.contains(['/', '\\']) && file_stem(path).is_none() {
            return None;
        }
        path.split(['/', '\\'])
            .filter_map(|part| part.split('.').next())
            .filter(|stem| !stem.is_empty())
            .map(str::to_lowercase)
            .find(|stem| self.hides(stem))
    }

    /// Refuses `text` if it names a hidden table or an engine catalog.
    pub fn check(&self, text: &str, dialect: Dialect) -> Result<(), Refusal> {
        let tokens = match tokenize(text, dialect) {
            Some(t) => t,
            // Whatever does not tokenize does not parse either: the gate
            // refuses it on its own.
            None => return Ok(()),
        };
        let words: Vec<&Token> = tokens
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect();
        for (i, token) in words.iter().enumerate() {
            let (word, quoted) = match token {
                Token::Word(w) => (w.value.to_lowercase(), w.quote_style.is_some()),
                Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
                    // A file read directly: `'payroll.csv'`, `read_csv('hr/*.csv')`.
                    match file_stem(s) {
                        Some(stem) if self.hides(&stem) => {
                            return Err(Refusal::Hidden { table: stem })
                        }
                        _ => continue,
                    }
                }
                _ => continue,
            };
            // Words are matched against the hidden tables' names, not the
            // patterns: a column `hr_rate` of a visible table is no `hr_*` table.
            if self.names.contains(&word) {
                return Err(Refusal::Hidden { table: word });
            }
            // `schema.table` as three tokens.
            if matches!(words.get(i + 1), Some(Token::Period)) {
                if let Some(Token::Word(next)) = words.get(i + 2) {
                    let qualified = format!("{word}.{}", next.value.to_lowercase());
                    if self.names.contains(&qualified) {
                        return Err(Refusal::Hidden { table: qualified });
                    }
                }
            }
            let catalog = CATALOG_WORDS.contains(&word.as_str())
                || (!quoted && word.starts_with("duckdb_"))
                // A `pg_*` or `sqlite_stat*` name that is not called.
                || (!quoted
                    && (word.starts_with("pg_") || word.starts_with("sqlite_stat"))
                    && !matches!(words.get(i + 1), Some(Token::LParen)))
                || (word == "tables" && i > 0 && is_word(words[i - 1], "show"))
                || (word == "tables" && i > 1 && is_word(words[i - 2], "show"))
                // ClickHouse's catalog is the `system` database.
                || (dialect == Dialect::ClickHouse
                    && word == "system"
                    && matches!(words.get(i + 1), Some(Token::Period)));
            if catalog {
                return Err(Refusal::Forbidden {
                    kind: format!("reading the engine's catalog ({word})"),
                    why: "some tables of this source are hidden from aiq, and the catalog would list them",
                });
            }
        }
        Ok(())
    }
}

fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.value.eq_ignore_ascii_case(w))
}

/// `data/payroll.csv` → `payroll`; `None` for text that is no file name.
fn file_stem(s: &str) -> Option<String> {
    if !s.contains(['.', '/', '\\']) {
        return None;
    }
    let last = s.rsplit(['/', '\\']).next()?;
    let stem = last.split('.').next()?;
    (!stem.is_empty()).then(|| stem.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden() -> Hidden {
        Hidden::new(
            [
                "payroll".to_string(),
                "hr.reviews".to_string(),
                "hr_salaries".to_string(),
            ],
            vec!["hr_*".into(), "payroll".into()],
        )
    }

    #[test]
    fn a_path_the_engine_reads_names_the_hidden_table_of_its_file_or_folder() {
        let h = hidden();
        for path in [
            "/data/shop_csv/payroll.csv",
            "/data/out/../shop_csv/PAYROLL.CSV",
            "/lake/payroll/part-0.parquet",
            "payroll.parquet",
            "C:\\data\\payroll.csv",
        ] {
            assert_eq!(h.hidden_by_path(path).as_deref(), Some("payroll"), "{path}");
        }
        for path in ["/data/shop_csv/orders.csv", "orders", "main.payroll_view"] {
            assert_eq!(h.hidden_by_path(path), None, "{path}");
        }
    }

    #[test]
    fn every_form_naming_a_hidden_table_is_refused() {
        let h = hidden();
        for sql in [
            "SELECT * FROM payroll",
            "SELECT * FROM \"Payroll\"",
            "select e.name from employee e join payroll p on p.emp = e.id",
            "WITH x AS (SELECT * FROM payroll) SELECT * FROM x",
            "PRAGMA table_info(payroll)",
            "DESCRIBE payroll",
            "SELECT * FROM hr.reviews",
            "SELECT * FROM reviews",
            "SELECT * FROM hr_salaries",
            "SELECT * FROM 'data/payroll.csv'",
            "SELECT * FROM read_csv('payroll.csv')",
        ] {
            let e = h.check(sql, Dialect::DuckDb).unwrap_err();
            assert!(matches!(e, Refusal::Hidden { .. }), "{sql}: {e}");
            assert!(e.to_string().contains("hidden"), "{e}");
        }
    }

    #[test]
    fn other_tables_and_plain_strings_pass() {
        let h = hidden();
        for sql in [
            "SELECT * FROM employee",
            "SELECT name FROM employee WHERE dept = 'payroll'",
            "SELECT count(*) FROM orders",
            "SELECT hr FROM staff",
            "SELECT hr_rate FROM staff",
        ] {
            assert_eq!(h.check(sql, Dialect::Sqlite), Ok(()), "{sql}");
        }
    }

    #[test]
    fn catalogs_are_refused_while_tables_are_hidden() {
        let h = hidden();
        for sql in [
            "SELECT sql FROM sqlite_master",
            "SELECT * FROM information_schema.columns",
            "SELECT * FROM duckdb_tables()",
            "SHOW TABLES",
            "SHOW ALL TABLES",
            "PRAGMA table_list",
            "SELECT prosqlbody FROM pg_proc",
            "SELECT definition FROM pg_views",
            "SELECT * FROM sqlite_stat1",
            "SELECT * FROM main.sqlite_stat4",
        ] {
            let e = h.check(sql, Dialect::DuckDb).unwrap_err();
            assert!(matches!(e, Refusal::Forbidden { .. }), "{sql}: {e}");
        }
    }
}
