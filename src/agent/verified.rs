//! Verified examples in requests (SPEC §14): the questions of a source
//! whose SQL a person confirmed, the few most similar to a new question
//! sent with it — after the privacy rules, within the request's budget.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::examples::{Example, Index, Store};
use crate::privacy::Guard;
use crate::safety::Dialect;

/// A source's verified examples, indexed for retrieval. Cheap to clone.
#[derive(Clone)]
pub struct Verified {
    inner: Option<Arc<Inner>>,
    /// Examples sent with a question at most.
    max: usize,
}

impl Default for Verified {
    fn default() -> Self {
        Verified {
            inner: None,
            max: crate::examples::DEFAULT_MAX,
        }
    }
}

struct Inner {
    examples: Vec<Example>,
    index: Index,
}

/// An example as a request carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub question: String,
    pub sql: String,
}

impl std::fmt::Debug for Verified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Verified({} examples)", self.len())
    }
}

impl Verified {
    /// The examples stored for the source whose notes key is `key`; none
    /// when there is no file (or it cannot be read: a warning in the log).
    pub fn load(home: &Path, key: &str, max: usize) -> Verified {
        let path = crate::home::examples_file(home, key);
        match Store::load(&path) {
            Ok(store) => {
                if store.skipped > 0 {
                    tracing::warn!(
                        "{}: {} line(s) are not examples: not sent, and kept in the file as they are",
                        path.display(),
                        store.skipped
                    );
                }
                Verified::new(store.examples, max)
            }
            Err(e) => {
                tracing::warn!("cannot read {}: {e}", path.display());
                Verified::new(Vec::new(), max)
            }
        }
    }

    pub fn new(examples: Vec<Example>, max: usize) -> Verified {
        if examples.is_empty() {
            return Verified { inner: None, max };
        }
        let index = Index::new(&examples);
        Verified {
            inner: Some(Arc::new(Inner { examples, index })),
            max,
        }
    }

    /// Examples sent with a question at most.
    pub fn max(&self) -> usize {
        self.max
    }

    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, |i| i.examples.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The examples to send with `question`, most similar first: never
    /// one for the same question (an evaluation asks stored questions), one
    /// that reads a hidden table, or a redacted column's values (`reads`
    /// asks the engine whether an example's SQL reads one).
    pub fn for_question(
        &self,
        question: &str,
        guard: &Guard,
        dialect: Dialect,
        reads: &dyn Fn(&str) -> bool,
    ) -> Vec<Shown> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        if self.max == 0 {
            return Vec::new();
        }
        // Ask for a few more: some may not pass the privacy rules.
        inner
            .index
            .similar(question, self.max + 3)
            .into_iter()
            .filter_map(|(i, _)| {
                let example = &inner.examples[i];
                let read = guard.redacts_any() && reads(&example.sql);
                let sql = guard.example_sql(&example.sql, dialect, read)?;
                Some(Shown {
                    question: example.question.clone(),
                    sql,
                })
            })
            .take(self.max)
            .collect()
    }
}

/// Adds `question` with `sql` to the examples file at `path` (the same
/// question again replaces its SQL), under the file's lock, so two
/// processes adding at once both keep theirs. Returns the example's id.
pub fn add_locked(
    path: &Path,
    question: &str,
    sql: &str,
    schema: &str,
) -> io::Result<(String, bool)> {
    update_locked(path, |store| {
        let before = store.examples.len();
        let id = store
            .add(question, sql, schema, chrono::Utc::now())
            .map(|e| e.id.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // The same question asked again: its SQL replaced.
        Ok((id, store.examples.len() == before))
    })
}

/// Changes the examples file at `path` under its lock: read, `change`,
/// written atomically (mode 0600) when `change` succeeds and changed it.
pub fn update_locked<T>(
    path: &Path,
    change: impl FnOnce(&mut Store) -> io::Result<T>,
) -> io::Result<T> {
    if let Some(dir) = path.parent() {
        crate::home::create_private_dir(dir)?;
    }
    crate::home::lock::exclusive(path, || {
        let mut store = Store::load(path)?;
        let before = store.clone();
        let out = change(&mut store)?;
        // Nothing changed (a refused removal): the file stays as written.
        if store != before {
            store.save_atomic(path)?;
        }
        Ok(out)
    })
}

/// The request's block of examples within `budget` bytes, most similar
/// first, and how many had to be left out.
pub fn block(examples: &[Shown], budget: usize) -> (String, usize) {
    if examples.is_empty() {
        return (String::new(), 0);
    }
    let head = "Verified examples (questions on this data whose SQL the user confirmed; follow them where they fit):\n";
    let mut text = String::new();
    let mut kept = 0;
    for e in examples {
        let mut one = String::new();
        let _ = writeln!(
            one,
            "Q: {}\nSQL: {}",
            e.question.trim(),
            e.sql.trim().trim_end_matches(';')
        );
        if head.len() + text.len() + one.len() + 1 > budget {
            break;
        }
        text.push_str(&one);
        kept += 1;
    }
    if kept == 0 {
        return (String::new(), examples.len());
    }
    (format!("{head}{text}\n"), examples.len() - kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(id: &str, q: &str, sql: &str) -> Example {
        Example {
            id: id.into(),
            question: q.into(),
            sql: sql.into(),
            added: "2026-01-01T00:00:00Z".into(),
            schema: String::new(),
        }
    }

    #[test]
    fn blocks_fit_their_budget_best_first() {
        let shown = vec![
            Shown {
                question: "revenue by month".into(),
                sql: "SELECT 1".into(),
            },
            Shown {
                question: "orders by month".into(),
                sql: "SELECT 2".into(),
            },
        ];
        let (all, left) = block(&shown, 10_000);
        assert_eq!(left, 0);
        assert!(all.contains("Q: revenue by month\nSQL: SELECT 1\nQ: orders by month"));
        let (one, left) = block(&shown, all.len() - 10);
        assert_eq!(left, 1);
        assert!(one.contains("SELECT 1") && !one.contains("SELECT 2"));
        assert_eq!(block(&shown, 20), (String::new(), 2));
    }

    #[test]
    fn hidden_tables_and_redacted_values_are_not_sent() {
        use crate::schema::{Catalog, ColumnInfo, Table};
        let table = |name: &str, cols: &[&str]| Table {
            name: name.into(),
            columns: cols
                .iter()
                .map(|c| ColumnInfo {
                    name: c.to_string(),
                    ..ColumnInfo::default()
                })
                .collect(),
            ..Table::default()
        };
        let full = Catalog {
            engine: "SQLite".into(),
            tables: vec![
                table("customers", &["id", "email", "country"]),
                table("payroll", &["salary"]),
            ],
        };
        let privacy: crate::privacy::PrivacyConfig =
            toml::from_str("exclude = [\"payroll\"]\nredact = [\"customers.email\"]").unwrap();
        let (guard, _) = Guard::new(crate::privacy::Privacy::resolve(&privacy, None, &[]), &full);
        let verified = Verified::new(
            vec![
                example("1", "total salary paid", "SELECT sum(salary) FROM payroll"),
                example(
                    "2",
                    "customer with email ann@example.com",
                    "SELECT id FROM customers WHERE email = 'ann@example.com'",
                ),
                example(
                    "3",
                    "customers in Germany",
                    "SELECT id FROM customers WHERE country = 'DE'",
                ),
            ],
            3,
        );
        // As the engine would say: only the example on emails reads one.
        let reads = |sql: &str| sql.contains("email");
        let sent = verified.for_question("salary paid in total", &guard, Dialect::Sqlite, &reads);
        assert!(sent.iter().all(|s| !s.sql.contains("payroll")), "{sent:?}");
        let sent = verified.for_question(
            "the customer whose email is bob@example.com",
            &guard,
            Dialect::Sqlite,
            &reads,
        );
        // An example that reads a redacted column with a value is not sent.
        assert!(sent.iter().all(|s| !s.sql.contains("email")), "{sent:?}");
        let sent = verified.for_question(
            "which customers live in Germany",
            &guard,
            Dialect::Sqlite,
            &reads,
        );
        assert_eq!(sent[0].sql, "SELECT id FROM customers WHERE country = 'DE'");
        // Its own question is never its example.
        let sent = verified.for_question("customers in Germany", &guard, Dialect::Sqlite, &reads);
        assert!(sent.iter().all(|s| s.question != "customers in Germany"));
    }
}
