//! Which values stay on the machine (SPEC §4.3), asked of every statement
//! the runner admits: the engine says what the statement reads
//! ([`crate::source::DataSource::columns_read`]: SQLite's authorizer,
//! DuckDB's bound plan, PostgreSQL's verbose plan, MySQL's own rewrite of
//! the statement), and a [`Redaction`] says whether that includes a
//! redacted or excluded column. Nothing here reads SQL text: a statement
//! the engine cannot account for counts as reading every column.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// One thing a statement reads, as its engine says: `(table, column)`,
/// lowercase. `*` as the table: a table the engine does not name (a file
/// read through a view, a column of a join); `*` as the column: every
/// column (the row as a value).
pub type ColumnRead = (String, String);

/// Adds `(table, column)`, lowercase, to what a statement reads, once.
pub fn add_read(out: &mut Vec<ColumnRead>, table: &str, column: &str) {
    let read = (table.to_lowercase(), column.to_lowercase());
    if !out.contains(&read) {
        out.push(read);
    }
}

/// `*`/`?` wildcards, or an exact match; both sides lowercase.
pub fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// A table pattern against a table's name as listed or without its schema.
pub fn table_matches(pattern: &str, table: &str) -> bool {
    let lower = table.to_lowercase();
    let bare = lower.rsplit('.').next().unwrap_or(&lower);
    glob(pattern, &lower) || glob(pattern, bare)
}

/// Whether a `table.column` pattern of `patterns` names this column.
pub fn column_listed(patterns: &[String], table: &str, column: &str) -> bool {
    let column = column.to_lowercase();
    patterns.iter().any(|p| match p.rsplit_once('.') {
        Some((t, c)) => glob(c, &column) && table_matches(t, table),
        None => false,
    })
}

/// The columns of one source whose values stay on the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redaction {
    /// `table.column` patterns: `redact`, and the columns `exclude` takes out.
    patterns: Vec<String>,
    /// The catalog's columns those patterns name, lowercase.
    known: Vec<(String, String)>,
    /// Every table and view of the catalog with its columns, lowercase,
    /// as listed and bare.
    tables: HashMap<String, HashSet<String>>,
    /// Views that reach a table with such a column, lowercase, as listed
    /// and bare: what they show may be its values under another name.
    tainted: HashSet<String>,
}

impl Redaction {
    /// `patterns` over a catalog whose tables (with their columns) are
    /// `tables`, of which `known` are the columns they name and `tainted`
    /// the views that reach one of them.
    pub fn new(
        patterns: Vec<String>,
        known: Vec<(String, String)>,
        tables: impl IntoIterator<Item = (String, Vec<String>)>,
        tainted: impl IntoIterator<Item = String>,
    ) -> Redaction {
        let mut columns: HashMap<String, HashSet<String>> = HashMap::new();
        for (name, cols) in tables {
            let lower = name.to_lowercase();
            let set: HashSet<String> = cols.iter().map(|c| c.to_lowercase()).collect();
            if let Some(bare) = lower.rsplit('.').next() {
                columns
                    .entry(bare.to_string())
                    .or_default()
                    .extend(set.iter().cloned());
            }
            columns.entry(lower).or_default().extend(set);
        }
        Redaction {
            patterns,
            known,
            tables: columns,
            tainted: super::hidden::listed_and_bare(tainted),
        }
    }

    /// Whether a statement that reads `read` (`None`: the engine could not
    /// say) may carry a value that stays on the machine.
    pub fn reads(&self, read: Option<&[ColumnRead]>) -> bool {
        match read {
            None => true,
            Some(read) => read.iter().any(|(t, c)| self.reads_one(t, c)),
        }
    }

    fn reads_one(&self, table: &str, column: &str) -> bool {
        let table = table.to_lowercase();
        let column = column.to_lowercase();
        let bare = table.rsplit('.').next().unwrap_or(&table).to_string();
        let columns = match table.as_str() {
            "*" => None,
            _ => self.tables.get(&table).or_else(|| self.tables.get(&bare)),
        };
        let named = columns.is_some();
        if named && (self.tainted.contains(&table) || self.tainted.contains(&bare)) {
            return true;
        }
        // A name the table does not have (an alias the engine printed for
        // it): any of its columns.
        let column = match columns {
            Some(known) if column != "*" && !known.contains(&column) => "*".to_string(),
            _ => column,
        };
        match (named, column.as_str()) {
            // Some table's every column: anything redacted may be in it.
            (false, "*") => true,
            (true, "*") => self.table_has_any(&table, columns),
            // A column of a table the engine did not name: any redacted
            // column of that name, or a view named so (an engine that
            // names views and columns alike).
            (false, _) => {
                self.known.iter().any(|(_, c)| *c == column)
                    || self
                        .patterns
                        .iter()
                        .any(|p| p.rsplit_once('.').is_some_and(|(_, c)| glob(c, &column)))
                    || self.tainted.contains(&column)
            }
            (true, _) => {
                column_listed(&self.patterns, &table, &column)
                    || self.known.iter().any(|(t, c)| {
                        *c == column && (*t == table || t.rsplit('.').next() == Some(&bare))
                    })
            }
        }
    }

    /// Whether `table` (whose columns the catalog lists, if it does) has a
    /// redacted column.
    fn table_has_any(&self, table: &str, columns: Option<&HashSet<String>>) -> bool {
        if let Some(columns) = columns.filter(|c| !c.is_empty()) {
            return columns
                .iter()
                .any(|c| column_listed(&self.patterns, table, c));
        }
        let bare = table.rsplit('.').next().unwrap_or(table);
        self.known
            .iter()
            .any(|(t, _)| t == table || t.rsplit('.').next() == Some(bare))
            || self.patterns.iter().any(|p| {
                p.rsplit_once('.')
                    .is_some_and(|(t, _)| table_matches(t, table))
            })
    }
}

/// What the statements of a policy read, as their engines said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Read {
    /// Nothing whose values stay on the machine.
    #[default]
    Clear,
    /// A column whose values stay on the machine.
    Redacted,
    /// The engine could not say: its values, and its columns' names (a
    /// `PIVOT` names columns after values), are not sent.
    Unknown,
}

impl From<bool> for Read {
    fn from(read: bool) -> Read {
        if read {
            Read::Redacted
        } else {
            Read::Clear
        }
    }
}

/// Set when a statement a policy admitted read a value that stays on the
/// machine, or its engine could not say what it read. Clones share it, so
/// a program's statements all report to the one its answer keeps.
#[derive(Debug, Clone, Default)]
pub struct ReadFlag(Arc<AtomicU8>);

impl ReadFlag {
    /// A statement read a redacted column.
    pub fn set(&self) {
        self.0.fetch_max(1, Ordering::SeqCst);
    }

    /// A statement's engine could not say what it read.
    pub fn set_unknown(&self) {
        self.0.fetch_max(2, Ordering::SeqCst);
    }

    /// Whether anything whose values stay on the machine was read (or may
    /// have been).
    pub fn get(&self) -> bool {
        self.read() != Read::Clear
    }

    pub fn read(&self) -> Read {
        match self.0.load(Ordering::SeqCst) {
            0 => Read::Clear,
            1 => Read::Redacted,
            _ => Read::Unknown,
        }
    }
}

/// Two policies are alike whatever their statements read so far.
impl PartialEq for ReadFlag {
    fn eq(&self, _: &ReadFlag) -> bool {
        true
    }
}

impl Eq for ReadFlag {}

#[cfg(test)]
mod tests {
    use super::*;

    fn redaction() -> Redaction {
        Redaction::new(
            vec![
                "customers.email".into(),
                "*.phone".into(),
                "customers.ssn".into(),
            ],
            vec![
                ("customers".into(), "email".into()),
                ("customers".into(), "phone".into()),
                ("customers".into(), "ssn".into()),
            ],
            [
                (
                    "customers".to_string(),
                    vec![
                        "id".to_string(),
                        "name".into(),
                        "email".into(),
                        "phone".into(),
                        "ssn".into(),
                    ],
                ),
                (
                    "orders".into(),
                    vec!["id".into(), "total".into(), "phone".into()],
                ),
                ("contacts".into(), vec!["name".into(), "contact".into()]),
                ("plain".into(), vec!["id".into(), "note".into()]),
            ],
            ["contacts".to_string()],
        )
    }

    fn read(pairs: &[(&str, &str)]) -> Vec<ColumnRead> {
        pairs
            .iter()
            .map(|(t, c)| (t.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn what_the_engine_read_decides() {
        let r = redaction();
        assert!(r.reads(None));
        assert!(!r.reads(Some(&[])));
        assert!(!r.reads(Some(&read(&[
            ("customers", "name"),
            ("orders", "total"),
            ("plain", "id")
        ]))));
        assert!(r.reads(Some(&read(&[("customers", "email")]))));
        assert!(r.reads(Some(&read(&[("main.customers", "EMAIL")]))));
        assert!(r.reads(Some(&read(&[("customers", "*")]))));
        assert!(r.reads(Some(&read(&[("orders", "*")]))));
        // `*.phone` covers every table, listed or not.
        assert!(r.reads(Some(&read(&[("orders", "phone")]))));
        // A table the catalog does not list: any column of the name.
        assert!(r.reads(Some(&read(&[("customers_2024", "email")]))));
        assert!(!r.reads(Some(&read(&[("customers_2024", "name")]))));
        assert!(r.reads(Some(&read(&[("*", "email")]))));
        assert!(r.reads(Some(&read(&[("*", "*")]))));
        // A view over a redacted column, whatever it calls it.
        assert!(r.reads(Some(&read(&[("contacts", "contact")]))));
        // A name the table does not have: the engine printed an alias.
        assert!(r.reads(Some(&read(&[("customers", "e")]))));
        assert!(r.reads(Some(&read(&[("orders", "e")]))));
        assert!(!r.reads(Some(&read(&[("plain", "e"), ("plain", "*")]))));
        assert!(r.reads(Some(&read(&[("*", "contacts")]))));
    }

    #[test]
    fn a_flag_is_shared_by_its_clones() {
        let flag = ReadFlag::default();
        let other = flag.clone();
        assert!(!flag.get());
        other.set();
        assert!(flag.get());
        assert_eq!(flag.read(), Read::Redacted);
        other.set_unknown();
        other.set();
        assert_eq!(flag.read(), Read::Unknown);
        assert!(!ReadFlag::default().get());
    }
}
