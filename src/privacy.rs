//! What leaves the machine (SPEC §4.3). A user decides, per source and for
//! all sources, which tables a model provider hears of (`include`,
//! `exclude`, `--tables`), whether sample values and result previews go
//! out (`samples`, `send_results`), and which columns' values never do
//! (`redact`). [`Privacy`] is that decision; a [`Guard`] applies it to one
//! source:
//!
//! - the catalog the model (and `/schema`, tab completion, the helper
//!   tools) sees: hidden tables and columns gone, samples only where
//!   allowed ([`Guard::new`]);
//! - the tables the gate refuses ([`Guard::policy`]);
//! - the result previews later requests carry ([`Guard::preview`]): none
//!   with `send_results = false` (columns and row counts only), and none
//!   for a statement that reads a redacted column.
//!
//! Pure: no files, no terminal.

mod errors;

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;

pub use crate::safety::glob;
use crate::safety::{
    column_listed, is_catalog, table_matches, Hidden, Policy, ReadFlag, Redaction,
};
use crate::schema::{Catalog, Table, REACHES_UNKNOWN};

/// The privacy keys, as `[privacy]` and each `[sources.NAME]` table hold
/// them (unset keys fall back: source → `[privacy]` → default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyConfig {
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
    pub samples: Option<bool>,
    pub send_results: Option<bool>,
    pub redact: Option<Vec<String>>,
    pub allow_functions: Option<Vec<String>>,
}

/// The effective privacy settings of one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privacy {
    /// Table patterns a table must match (empty: every table).
    pub include: Vec<String>,
    /// `--tables`: patterns a table must also match (empty: every table).
    pub tables: Vec<String>,
    /// Table patterns, and `table.column` patterns, taken out.
    pub exclude: Vec<String>,
    /// Sample values in the prompt.
    pub samples: bool,
    /// Result previews in later prompts.
    pub send_results: bool,
    /// `table.column` patterns whose values never leave the machine.
    pub redact: Vec<String>,
    /// Functions the user vouches for (lowercase): the database's own
    /// run while tables are hidden, and names not on the engine's
    /// allow-list run (SPEC §4.2, "Behind a name").
    pub allow_functions: Vec<String>,
}

impl Default for Privacy {
    fn default() -> Self {
        Privacy {
            include: Vec::new(),
            tables: Vec::new(),
            exclude: Vec::new(),
            samples: true,
            send_results: true,
            redact: Vec::new(),
            allow_functions: Vec::new(),
        }
    }
}

impl Privacy {
    /// The settings of a source: its own keys, else `[privacy]`'s; the
    /// `exclude` and `redact` lists of both apply; `--tables` on top.
    pub fn resolve(
        global: &PrivacyConfig,
        source: Option<&PrivacyConfig>,
        tables: &[String],
    ) -> Privacy {
        let own = source.cloned().unwrap_or_default();
        let lower = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .map(|p| p.trim().to_lowercase())
                .filter(|p| !p.is_empty())
                .collect()
        };
        let both = |a: &Option<Vec<String>>, b: &Option<Vec<String>>| {
            let mut v = a.clone().unwrap_or_default();
            v.extend(b.clone().unwrap_or_default());
            lower(v)
        };
        Privacy {
            include: lower(
                own.include
                    .clone()
                    .or_else(|| global.include.clone())
                    .unwrap_or_default(),
            ),
            tables: lower(tables.to_vec()),
            exclude: both(&global.exclude, &own.exclude),
            samples: own.samples.or(global.samples).unwrap_or(true),
            send_results: own.send_results.or(global.send_results).unwrap_or(true),
            redact: both(&global.redact, &own.redact),
            allow_functions: both(&global.allow_functions, &own.allow_functions),
        }
    }

    /// Whether any table is hidden by these settings.
    pub fn hides_tables(&self) -> bool {
        // An entry with a dot may be a column (`customers.email`) or a
        // schema-qualified table (`hr.salaries`): either way it counts.
        !self.include.is_empty() || !self.tables.is_empty() || !self.exclude.is_empty()
    }

    /// The `table.column` patterns whose values stay on the machine:
    /// `redact`, and the columns `exclude` leaves out.
    fn value_patterns(&self) -> impl Iterator<Item = &String> {
        self.redact
            .iter()
            .chain(self.exclude.iter().filter(|p| p.contains('.')))
    }

    /// Whether the model may hear of table `name`.
    pub fn shows_table(&self, name: &str) -> bool {
        let any = |patterns: &[String]| patterns.iter().any(|p| table_matches(p, name));
        (self.include.is_empty() || any(&self.include))
            && (self.tables.is_empty() || any(&self.tables))
            && !any(&self.exclude)
    }

    /// Whether column `column` of `table` is taken out.
    pub fn hides_column(&self, table: &str, column: &str) -> bool {
        column_listed(&self.exclude, table, column)
    }

    /// Whether the values of `table.column` stay on the machine (redacted
    /// or taken out).
    pub fn redacts_column(&self, table: &str, column: &str) -> bool {
        column_listed(&self.redact, table, column) || self.hides_column(table, column)
    }
}

/// `text` with each case-insensitive whole-word `word` replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    replace_where(text, word, with, |before, after| {
        !is_ident(before) && !is_ident(after)
    })
}

/// `text` with `word` (lowercase) replaced by `with` where it stands
/// between two of the same quote (`"note"`, `'note'`, `` `note` ``),
/// whatever its case.
fn replace_quoted(text: &str, word: &str, with: &str) -> String {
    replace_where(text, word, with, |before, after| {
        matches!(before, Some('"' | '\'' | '`')) && after == before
    })
}

/// `text` with each case-insensitive `word` replaced by `with` where
/// `stands` says so of the characters before and after it.
fn replace_where(
    text: &str,
    word: &str,
    with: &str,
    stands: impl Fn(Option<char>, Option<char>) -> bool,
) -> String {
    let lower = text.to_lowercase();
    // Lowercasing may change byte lengths outside ASCII: then leave it.
    if lower.len() != text.len() || word.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in lower.match_indices(word) {
        let end = i + word.len();
        if i < last || !text.is_char_boundary(i) || !text.is_char_boundary(end) {
            continue;
        }
        if !stands(text[..i].chars().next_back(), text[end..].chars().next()) {
            continue;
        }
        out.push_str(&text[last..i]);
        out.push_str(with);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// One source's privacy settings, applied.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    privacy: Privacy,
    hidden: Option<Arc<Hidden>>,
    /// The columns whose values stay on the machine, for the runner to ask
    /// the engine about (`None`: there are none).
    redaction: Option<Arc<Redaction>>,
    /// Columns taken out of visible tables, and hidden tables' columns,
    /// lowercased: bare (where no visible column has the name) and as
    /// `table.column`, for [`Guard::scrub`].
    hidden_columns: Vec<String>,
    /// The tables left out, as the catalog names them (name, kind and
    /// `one_name` only), for `aiq doctor`'s check of the login.
    hidden_tables: Arc<Vec<Table>>,
    /// The views that reach a redacted or excluded column, as listed.
    tainted_views: Vec<String>,
}

/// The tables `privacy` leaves out of `catalog`, lowercased: those it
/// does not show, and what reaches one of them — a view over a hidden
/// table or over another such view, a table that stores one (SPEC §4.2,
/// "Behind a name") — and, while tables are hidden, what reaches a catalog
/// or what the engine could not follow.
fn left_out(privacy: &Privacy, catalog: &Catalog) -> HashSet<String> {
    let mut out: HashSet<String> = catalog
        .tables
        .iter()
        .filter(|t| !privacy.shows_table(&t.name))
        .map(|t| t.name.to_lowercase())
        .collect();
    let hides = privacy.hides_tables();
    loop {
        let more: Vec<String> = catalog
            .tables
            .iter()
            .filter(|t| {
                t.reaches.iter().any(|r| {
                    out.contains(r)
                        || !privacy.shows_table(r)
                        || (hides && (is_catalog(r) || r == REACHES_UNKNOWN))
                })
            })
            .map(|t| t.name.to_lowercase())
            .filter(|name| !out.contains(name))
            .collect();
        if more.is_empty() {
            return out;
        }
        out.extend(more);
    }
}

/// The views of `catalog` that reach a table with a column whose values
/// stay on the machine (SPEC §4.3), lowercase: directly or through other
/// views, as the engine's catalog tells what each reaches.
fn tainted(privacy: &Privacy, catalog: &Catalog) -> HashSet<String> {
    if privacy.value_patterns().next().is_none() {
        return HashSet::new();
    }
    let bare = |n: &str| n.rsplit('.').next().unwrap_or(n).to_lowercase();
    // The tables (and views, as found) with such values, by bare name.
    let mut with_values: HashSet<String> = catalog
        .tables
        .iter()
        .filter(|t| {
            t.columns
                .iter()
                .any(|c| privacy.redacts_column(&t.name, &c.name))
        })
        .map(|t| bare(&t.name))
        .collect();
    let listed: HashSet<String> = catalog.tables.iter().map(|t| bare(&t.name)).collect();
    // A table the catalog lists has its columns to go by; one it does not
    // (a table the view reads elsewhere), the patterns' table parts.
    let reaches_one = |r: &String, set: &HashSet<String>| {
        let r = r.to_lowercase();
        if r == REACHES_UNKNOWN {
            return true;
        }
        match listed.contains(&bare(&r)) {
            true => set.contains(&bare(&r)),
            false => privacy.value_patterns().any(|p| {
                p.rsplit_once('.')
                    .is_some_and(|(t, _)| t != "*" && table_matches(t, &r))
            }),
        }
    };
    let mut views = HashSet::new();
    loop {
        let more: Vec<String> = catalog
            .tables
            .iter()
            .filter(|t| t.kind == crate::schema::TableKind::View)
            .filter(|t| t.reaches.iter().any(|r| reaches_one(r, &with_values)))
            .map(|t| t.name.to_lowercase())
            .filter(|name| !views.contains(name))
            .collect();
        if more.is_empty() {
            return views;
        }
        with_values.extend(more.iter().map(|v| bare(v)));
        views.extend(more);
    }
}

/// A redacted column's type as the model may read it: an `ENUM(…)` or
/// `SET(…)` type lists the values it may hold, so its labels are withheld
/// like sample values (SPEC §4.3).
pub fn without_labels(type_name: &str) -> String {
    let lower = type_name.trim_start().to_ascii_lowercase();
    for kind in ["enum", "set"] {
        let labels = lower
            .strip_prefix(kind)
            .is_some_and(|rest| rest.trim_start().starts_with('('));
        if labels {
            return format!("{} (labels withheld)", kind.to_uppercase());
        }
    }
    type_name.to_string()
}

/// What the model reads instead of values of a redacted column.
pub const WITHHELD: &str = "values not sent: they include a redacted column";
/// What the model reads instead of values and column names when the
/// engine could not say what a statement read (a `PIVOT` names its columns
/// after values).
pub const WITHHELD_NAMES: &str =
    "values and column names not sent: the engine could not say what the statement read";
/// What the model reads instead of values with `send_results = false`.
pub const NOT_SENT: &str = "values not sent: send_results is off";

impl Guard {
    /// Applies `privacy` to a source whose full catalog is `full`; returns
    /// the guard and the catalog as the model may see it.
    pub fn new(privacy: Privacy, full: &Catalog) -> (Guard, Catalog) {
        let mut seen = Catalog {
            engine: full.engine.clone(),
            tables: Vec::with_capacity(full.tables.len()),
        };
        let mut hidden_names = Vec::new();
        let mut redacted = Vec::new();
        let mut names = HashSet::new();
        let mut hidden_columns = Vec::new();
        let mut hidden_tables = Vec::new();
        let left_out = left_out(&privacy, full);
        let tainted = tainted(&privacy, full);
        let mut tainted_views = Vec::new();
        for table in &full.tables {
            if left_out.contains(&table.name.to_lowercase()) {
                hidden_names.push(table.name.clone());
                hidden_tables.push(Table {
                    name: table.name.clone(),
                    kind: table.kind,
                    one_name: table.one_name,
                    ..Table::default()
                });
                // An engine's "did you mean" may name its columns too.
                for c in &table.columns {
                    let column = c.name.to_lowercase();
                    hidden_columns.push(format!("{}.{column}", table.name.to_lowercase()));
                    hidden_columns.push(column);
                }
                continue;
            }
            for c in &table.columns {
                if privacy.hides_column(&table.name, &c.name) {
                    let column = c.name.to_lowercase();
                    hidden_columns.push(format!("{}.{column}", table.name.to_lowercase()));
                    hidden_columns.push(column);
                }
            }
            let mut t = table.clone();
            t.columns
                .retain(|c| !privacy.hides_column(&table.name, &c.name));
            for c in &mut t.columns {
                if privacy.redacts_column(&table.name, &c.name) {
                    redacted.push((table.name.to_lowercase(), c.name.to_lowercase()));
                    c.samples.clear();
                    c.type_name = without_labels(&c.type_name);
                } else if !privacy.samples || tainted.contains(&table.name.to_lowercase()) {
                    // A view over a redacted column may show its values
                    // under any name.
                    c.samples.clear();
                    if tainted.contains(&table.name.to_lowercase()) {
                        c.type_name = without_labels(&c.type_name);
                    }
                }
            }
            if tainted.contains(&table.name.to_lowercase()) {
                tainted_views.push(table.name.clone());
                let note = "reads a redacted column: its values are not sent";
                t.comment = Some(match t.comment.take().filter(|c| !c.is_empty()) {
                    Some(c) => format!("{c} ({note})"),
                    None => note.to_string(),
                });
            }
            // A key to a table or column left out, or from a column left
            // out, would describe it.
            t.foreign_keys.retain(|fk| {
                privacy.shows_table(&fk.ref_table)
                    && !fk
                        .ref_columns
                        .iter()
                        .any(|c| privacy.hides_column(&fk.ref_table, c))
                    && !fk
                        .columns
                        .iter()
                        .any(|c| privacy.hides_column(&table.name, c))
            });
            names.insert(t.name.to_lowercase());
            if let Some(short) = t.name.rsplit('.').next() {
                names.insert(short.to_lowercase());
            }
            names.extend(t.columns.iter().map(|c| c.name.to_lowercase()));
            seen.tables.push(t);
        }
        let hidden = privacy
            .hides_tables()
            .then(|| Arc::new(Hidden::new(hidden_names, privacy.exclude.clone())));
        // A bare name that a visible column has too tells nothing.
        hidden_columns.retain(|c| c.contains('.') || !names.contains(c));
        // Longest first, so `orders.note` goes before `note`.
        hidden_columns.sort_by_key(|c| std::cmp::Reverse(c.len()));
        hidden_columns.dedup();
        let patterns: Vec<String> = privacy.value_patterns().cloned().collect();
        let redaction = (!patterns.is_empty()).then(|| {
            Arc::new(Redaction::new(
                patterns,
                redacted,
                full.tables.iter().map(|t| {
                    let columns = t.columns.iter().map(|c| c.name.clone()).collect();
                    (t.name.clone(), columns)
                }),
                tainted,
            ))
        });
        (
            Guard {
                privacy,
                hidden,
                redaction,
                hidden_columns,
                hidden_tables: Arc::new(hidden_tables),
                tainted_views,
            },
            seen,
        )
    }

    /// The tables the source hides from the model, as its catalog names
    /// them (name, kind and `one_name`; no columns).
    pub fn hidden_tables(&self) -> &[Table] {
        &self.hidden_tables
    }

    /// The views that reach a redacted or excluded column: described
    /// without samples, their results withheld.
    pub fn views_over_redacted(&self) -> &[String] {
        &self.tainted_views
    }

    /// The settings applied.
    pub fn privacy(&self) -> &Privacy {
        &self.privacy
    }

    /// The gate's policy for this source: with the columns whose values
    /// stay on the machine, and a fresh flag for what its statements read.
    pub fn policy(&self, allow_write: bool) -> Policy {
        Policy {
            allow_write,
            hidden: self.hidden.clone(),
            functions: None,
            vouched: self.privacy.allow_functions.clone(),
            redaction: self.redaction.clone(),
            read_redacted: ReadFlag::default(),
        }
    }

    /// Whether any column's values stay on the machine (`redact`, or a
    /// column `exclude` takes out).
    pub fn redacts_any(&self) -> bool {
        self.redaction.is_some()
    }

    /// Whether a statement that reads `read` (as its engine says; `None`:
    /// it could not say) reads a value that stays on the machine.
    pub fn reads(&self, read: Option<&[crate::safety::ColumnRead]>) -> bool {
        self.redaction.as_ref().is_some_and(|r| r.reads(read))
    }

    /// Why the values of a result may not go to a model, if they may not:
    /// `read_redacted` is what the engine said its statements read.
    pub fn withholds(&self, read: impl Into<crate::safety::Read>) -> Option<&'static str> {
        if !self.privacy.send_results {
            return Some(NOT_SENT);
        }
        match read.into() {
            crate::safety::Read::Clear => None,
            crate::safety::Read::Redacted => Some(WITHHELD),
            crate::safety::Read::Unknown => Some(WITHHELD_NAMES),
        }
    }

    /// A verified example's SQL as a request may carry it (SPEC §14):
    /// `None` when it names a hidden table, or when it reads a redacted
    /// column (`read_redacted`, as the engine read it) and holds anything
    /// that could be a value (a quote, a digit, a comment, a parameter):
    /// such an example is not sent.
    pub fn example_sql(
        &self,
        sql: &str,
        dialect: crate::safety::Dialect,
        read_redacted: bool,
    ) -> Option<String> {
        if let Some(hidden) = &self.hidden {
            hidden.check(sql, dialect).ok()?;
        }
        let may_hold_a_value = sql.chars().any(|c| {
            c.is_ascii_digit() || matches!(c, '\'' | '"' | '`' | '$' | '#' | '-' | '/' | '[' | '{')
        });
        if read_redacted && may_hold_a_value {
            return None;
        }
        Some(sql.to_string())
    }

    /// `text` (an engine's error) with every hidden table's name, and
    /// every name of a column taken out, replaced: an engine's "did you
    /// mean" (DuckDB's `Candidate bindings: "note"`, PostgreSQL's
    /// `Perhaps you meant to reference the column "orders.note"`) must not
    /// name one to the model. A column's bare name is replaced where it is
    /// quoted (as an engine names it), so a word of the message that is
    /// also a column's name stays.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        // `table.column` before the tables, so a hidden table's column
        // does not stay behind its masked table.
        for column in self.hidden_columns.iter().filter(|c| c.contains('.')) {
            out = replace_word(&out, column, "(hidden column)");
        }
        if let Some(hidden) = &self.hidden {
            let mut names: Vec<&str> = hidden.names().collect();
            // Longest first, so `hr.reviews` goes before `reviews`.
            names.sort_by_key(|n| std::cmp::Reverse(n.len()));
            for name in names {
                out = replace_word(&out, name, "(hidden table)");
            }
        }
        for column in self.hidden_columns.iter().filter(|c| !c.contains('.')) {
            out = replace_quoted(&out, column, "(hidden column)");
        }
        out
    }

    /// An error of running `codes` as the model may see it: hidden names
    /// scrubbed, and when `withheld` says values may not be sent, the
    /// values an engine quoted masked (SQL) or a program's message withheld
    /// (`program`). The code is the model's own: its literals stay.
    pub fn error(
        &self,
        codes: &[&str],
        program: bool,
        error: &str,
        withheld: Option<&str>,
    ) -> String {
        let text = self.scrub(error);
        match withheld {
            None => text,
            Some(why) if program => errors::withhold_program_error(&text, why),
            Some(_) => errors::mask_statement_error(&text, codes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, ForeignKey, Table};

    fn catalog() -> Catalog {
        let t = |name: &str, cols: &[&str]| Table {
            name: name.into(),
            columns: cols
                .iter()
                .map(|c| ColumnInfo {
                    name: c.to_string(),
                    type_name: "TEXT".into(),
                    samples: vec![format!("{c}-sample")],
                    ..ColumnInfo::default()
                })
                .collect(),
            ..Table::default()
        };
        Catalog {
            engine: "x".into(),
            tables: vec![
                t("customers", &["id", "name", "email", "phone"]),
                t("orders", &["id", "status", "note"]),
                t("hr_salaries", &["id", "amount"]),
                t("payroll", &["id"]),
            ],
        }
    }

    fn config(toml_text: &str) -> PrivacyConfig {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn source_keys_win_and_lists_add_up() {
        let global = config("samples = false\nexclude = [\"payroll\"]\nredact = [\"*.phone\"]\n");
        let own = config("samples = true\nexclude = [\"hr_*\"]\nredact = [\"customers.email\"]\n");
        let p = Privacy::resolve(&global, Some(&own), &[]);
        assert!(p.samples);
        assert!(p.send_results);
        assert_eq!(p.exclude, ["payroll", "hr_*"]);
        assert_eq!(p.redact, ["*.phone", "customers.email"]);
        let p = Privacy::resolve(&global, None, &["Cust*".into()]);
        assert!(!p.samples);
        assert_eq!(p.tables, ["cust*"]);
    }

    #[test]
    fn what_reaches_a_hidden_table_is_hidden_with_it() {
        let mut full = catalog();
        let view = |name: &str, reaches: &[&str]| crate::schema::Table {
            name: name.into(),
            kind: crate::schema::TableKind::View,
            reaches: reaches.iter().map(|r| r.to_string()).collect(),
            ..crate::schema::Table::default()
        };
        full.tables.push(view("staff", &["payroll"]));
        full.tables.push(view("deep", &["orders", "hr_salaries"]));
        full.tables.push(view("lists", &["duckdb_tables"]));
        full.tables.push(view("unknown", &[REACHES_UNKNOWN]));
        full.tables.push(view("order_totals", &["orders"]));
        // A view over a view over a hidden table, as MySQL's catalog tells it.
        full.tables.push(view("staff_top", &["staff"]));
        let privacy = Privacy {
            exclude: vec!["hr_*".into(), "payroll".into()],
            ..Privacy::default()
        };
        let (guard, seen) = Guard::new(privacy, &full);
        let names: Vec<&str> = seen.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["customers", "orders", "order_totals"]);
        let policy = guard.policy(false);
        let hidden = policy.hidden.as_ref().unwrap();
        for name in ["staff", "deep", "lists", "unknown", "staff_top"] {
            assert!(hidden.hides(name), "{name}");
        }
        // With nothing hidden, a view over the catalog is just a view.
        let (_, seen) = Guard::new(Privacy::default(), &full);
        assert!(seen.tables.iter().any(|t| t.name == "lists"));
        assert!(seen.tables.iter().any(|t| t.name == "unknown"));
    }

    #[test]
    fn filters_hide_tables_and_columns_and_samples() {
        let privacy = Privacy {
            exclude: vec!["hr_*".into(), "payroll".into(), "orders.note".into()],
            redact: vec!["customers.email".into(), "*.phone".into()],
            ..Privacy::default()
        };
        let (guard, seen) = Guard::new(privacy, &catalog());
        let names: Vec<&str> = seen.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["customers", "orders"]);
        let text = seen.render();
        assert!(!text.contains("note"), "{text}");
        assert!(text.contains("name-sample"), "{text}");
        assert!(!text.contains("email-sample"), "{text}");
        assert!(!text.contains("phone-sample"), "{text}");
        let policy = guard.policy(false);
        let hidden = policy.hidden.as_ref().unwrap();
        assert!(hidden.hides("payroll") && hidden.hides("hr_salaries"));
        assert!(!hidden.hides("orders"));
        assert_eq!(
            guard.scrub("Table with name payrol does not exist! Did you mean \"Payroll\"? (not payroll_x)"),
            "Table with name payrol does not exist! Did you mean \"(hidden table)\"? (not payroll_x)"
        );
        // Nor is a hidden table's column, with or without its table.
        let mut with_payroll = catalog();
        with_payroll.tables.push(Table {
            name: "payroll_view".into(),
            kind: crate::schema::TableKind::View,
            columns: vec![ColumnInfo {
                name: "salary_code".into(),
                ..ColumnInfo::default()
            }],
            reaches: vec!["payroll".into()],
            ..Table::default()
        });
        let (hiding, _) = Guard::new(
            Privacy {
                exclude: vec!["payroll".into()],
                ..Privacy::default()
            },
            &with_payroll,
        );
        assert_eq!(
            hiding.scrub("Did you mean \"payroll_view.salary_code\"? or \"salary_code\"?"),
            "Did you mean \"(hidden column)\"? or \"(hidden column)\"?"
        );
        // A column left out is not named by an engine's suggestions
        // either, quoted or with its table; the same word unquoted stays.
        assert_eq!(
            guard.scrub(
                "Referenced column \"nte\" not found!\nCandidate bindings: \"Note\", 'note', \
                 orders.note; note the spelling"
            ),
            "Referenced column \"nte\" not found!\nCandidate bindings: \"(hidden column)\", \
             '(hidden column)', (hidden column); note the spelling"
        );
        // A column left out keeps its values on the machine too.
        let read = |t: &str, c: &str| vec![(t.to_string(), c.to_string())];
        assert!(guard.reads(Some(&read("orders", "note"))));
        assert!(!guard.reads(Some(&read("orders", "status"))));
    }

    #[test]
    fn include_and_tables_flag_narrow() {
        let privacy = Privacy::resolve(
            &config("include = [\"customers\", \"orders\", \"payroll\"]"),
            None,
            &["orders".into(), "customers".into()],
        );
        let (_, seen) = Guard::new(privacy, &catalog());
        let names: Vec<&str> = seen.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["customers", "orders"]);
        let (guard, seen) = Guard::new(
            Privacy {
                samples: false,
                ..Privacy::default()
            },
            &catalog(),
        );
        assert!(!seen.render().contains("-sample"));
        assert_eq!(guard.policy(false).hidden, None);
    }

    #[test]
    fn what_the_engine_read_decides_what_is_withheld() {
        let privacy = Privacy {
            redact: vec!["customers.email".into(), "*.phone".into()],
            ..Privacy::default()
        };
        let (guard, _) = Guard::new(privacy, &catalog());
        let read = |pairs: &[(&str, &str)]| -> Vec<crate::safety::ColumnRead> {
            pairs
                .iter()
                .map(|(t, c)| (t.to_string(), c.to_string()))
                .collect()
        };
        for pairs in [
            &[("customers", "email")][..],
            &[("customers", "*")],
            &[("suppliers", "phone")],
            &[("*", "email")],
        ] {
            assert!(guard.reads(Some(&read(pairs))), "{pairs:?}");
        }
        assert!(guard.reads(None));
        for pairs in [&[("customers", "name")][..], &[], &[("orders", "*")]] {
            assert!(!guard.reads(Some(&read(pairs))), "{pairs:?}");
        }
        assert_eq!(guard.withholds(true), Some(WITHHELD));
        assert_eq!(guard.withholds(false), None);
        let (off, _) = Guard::new(
            Privacy {
                send_results: false,
                ..Privacy::default()
            },
            &catalog(),
        );
        assert_eq!(off.withholds(false), Some(NOT_SENT));
        assert!(!off.redacts_any() && !off.reads(None));
    }

    /// A view over a redacted column shows its values under any name: it
    /// is described without samples and says its values are not sent.
    #[test]
    fn a_view_over_a_redacted_column_is_described_so() {
        let mut full = catalog();
        full.tables.push(Table {
            name: "contacts".into(),
            kind: crate::schema::TableKind::View,
            reaches: vec!["customers".into()],
            columns: vec![ColumnInfo {
                name: "reach".into(),
                samples: vec!["ann@x.test".into()],
                ..ColumnInfo::default()
            }],
            ..Table::default()
        });
        let privacy = Privacy {
            redact: vec!["customers.email".into()],
            ..Privacy::default()
        };
        let (guard, seen) = Guard::new(privacy, &full);
        let text = seen.render();
        assert!(!text.contains("ann@x.test"), "{text}");
        assert!(
            text.contains("view contacts -- reads a redacted column: its values are not sent"),
            "{text}"
        );
        assert_eq!(guard.views_over_redacted(), ["contacts"]);
        let read = vec![("contacts".to_string(), "reach".to_string())];
        assert!(guard.reads(Some(&read)));
        let (guard, _) = Guard::new(Privacy::default(), &full);
        assert!(guard.views_over_redacted().is_empty());
    }

    /// The schema carries no value of a redacted column through its type
    /// (an `ENUM`'s or `SET`'s labels), and no key names a column or
    /// table left out.
    #[test]
    fn types_and_keys_describe_nothing_left_out() {
        let column = |name: &str, type_name: &str| ColumnInfo {
            name: name.into(),
            type_name: type_name.into(),
            ..ColumnInfo::default()
        };
        let catalog = Catalog {
            engine: "x".into(),
            tables: vec![
                Table {
                    name: "customers".into(),
                    columns: vec![
                        column("id", "INTEGER"),
                        column("tier", "ENUM('gold', 'silver')"),
                        column("perks", "set('wifi','lounge')"),
                        column("ssn", "TEXT"),
                        column("kind", "ENUM('a', 'b')"),
                    ],
                    ..Table::default()
                },
                Table {
                    name: "orders".into(),
                    columns: vec![column("id", "INTEGER"), column("ssn_ref", "TEXT")],
                    foreign_keys: vec![
                        ForeignKey {
                            columns: vec!["ssn_ref".into()],
                            ref_table: "customers".into(),
                            ref_columns: vec!["ssn".into()],
                        },
                        ForeignKey {
                            columns: vec!["id".into()],
                            ref_table: "customers".into(),
                            ref_columns: vec!["id".into()],
                        },
                    ],
                    ..Table::default()
                },
            ],
        };
        let privacy = Privacy {
            redact: vec!["customers.tier".into(), "customers.perks".into()],
            exclude: vec!["customers.ssn".into()],
            ..Privacy::default()
        };
        let (_, seen) = Guard::new(privacy, &catalog);
        let text = format!("{seen:?}");
        for label in ["gold", "silver", "wifi", "lounge"] {
            assert!(!text.contains(label), "{label}: {text}");
        }
        let customers = &seen.tables[0];
        assert_eq!(customers.columns[1].type_name, "ENUM (labels withheld)");
        assert_eq!(customers.columns[2].type_name, "SET (labels withheld)");
        // A column not redacted keeps its type.
        assert_eq!(
            customers.columns.last().unwrap().type_name,
            "ENUM('a', 'b')"
        );
        let keys = &seen.tables[1].foreign_keys;
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert_eq!(keys[0].ref_columns, vec!["id".to_string()]);
    }
}
