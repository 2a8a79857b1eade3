//! The catalog an engine reports (tables, views, columns, keys, row
//! estimates, sample values) and its compact text form — the same text
//! `aiq schema` prints and the model is given. Pure data and formatting.

pub mod cache;
pub mod suggest;
pub mod words;

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Everything aiq knows about a source's schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// The engine's name, e.g. `SQLite 3.50.4`.
    pub engine: String,
    /// Tables and views, sorted by name.
    pub tables: Vec<Table>,
}

/// A table or view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Schema-qualified where the engine has schemas other than the default.
    pub name: String,
    pub kind: TableKind,
    pub columns: Vec<ColumnInfo>,
    pub foreign_keys: Vec<ForeignKey>,
    /// An estimate, not an exact count; `None` when the engine cannot tell cheaply.
    pub row_estimate: Option<u64>,
    pub comment: Option<String>,
    /// The name is one name though it has a dot (a file `sales.2024.csv`
    /// is the table `sales.2024`), not a schema and a table.
    #[serde(default)]
    pub one_name: bool,
    /// What the engine reaches through this name, lowercased: the base
    /// tables (and catalog functions) a view expands to; the virtual table
    /// a SQLite shadow table stores. It is hidden when any of them is
    /// (SPEC §4.2, "Behind a name").
    #[serde(default)]
    pub reaches: Vec<String>,
}

/// In [`Table::reaches`]: the engine could not say what the name reaches,
/// so it is hidden whenever any table is.
pub const REACHES_UNKNOWN: &str = "?";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableKind {
    #[default]
    Table,
    View,
}

/// A column of a table or view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    pub type_name: String,
    pub nullable: bool,
    pub primary_key: bool,
    /// A few distinct short values, for text columns.
    pub samples: Vec<String>,
}

/// `columns` of this table reference `ref_columns` of `ref_table`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    pub columns: Vec<String>,
    pub ref_table: String,
    pub ref_columns: Vec<String>,
}

impl Catalog {
    /// `"; did you mean NAME?"` for the table name closest to `name`, or
    /// nothing for an empty catalog.
    pub fn did_you_mean(&self, name: &str) -> String {
        let wanted = name.to_lowercase();
        self.tables
            .iter()
            .map(|t| t.name.as_str())
            .min_by_key(|n| strsim::levenshtein(&n.to_lowercase(), &wanted))
            .map(|n| format!("; did you mean {n}?"))
            .unwrap_or_default()
    }

    /// Finds a table by name, case-insensitively.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// The compact text form of every table (see [`Table::render`]).
    pub fn render(&self) -> String {
        let quote = self.quote();
        let mut out = String::new();
        for table in &self.tables {
            table.render(quote, &mut out);
        }
        out
    }

    /// How this catalog's engine writes a name that needs quotes.
    pub fn quote(&self) -> Quote {
        Quote::for_engine(&self.engine)
    }
}

/// How an engine reads a name that is not a plain word: the schema text
/// and suggestions write such names as the SQL must, so that neither a
/// person nor the model takes `Unit Price DOUBLE` for a column `Unit` of
/// type `Price DOUBLE`, or writes `SELECT order FROM t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quote {
    /// `"Unit Price"` (SQLite, DuckDB, ClickHouse).
    #[default]
    Double,
    /// `"Unit Price"`, and `"UnitPrice"` too: PostgreSQL folds a plain
    /// word to lower case.
    Folding,
    /// `` `Unit Price` `` (MySQL, MariaDB).
    Backtick,
}

/// Words that SQL engines reserve, so that a column of that name must be
/// quoted to be read (lower case, sorted).
const RESERVED: &[&str] = &[
    "all",
    "and",
    "anti",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "between",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "cross",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "delete",
    "desc",
    "distinct",
    "do",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "full",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "join",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "natural",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "over",
    "partition",
    "pivot",
    "placing",
    "primary",
    "qualify",
    "range",
    "references",
    "returning",
    "right",
    "rows",
    "select",
    "semi",
    "session_user",
    "set",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unpivot",
    "update",
    "user",
    "using",
    "values",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

impl Quote {
    pub fn for_engine(engine: &str) -> Quote {
        if engine.starts_with("MySQL") || engine.starts_with("MariaDB") {
            Quote::Backtick
        } else if engine.starts_with("PostgreSQL") {
            Quote::Folding
        } else {
            Quote::Double
        }
    }

    /// `name` as the engine reads it: as it is when it is a plain word
    /// (letters, digits and `_`, not first a digit, not a reserved word),
    /// else quoted. A name with a dot is left as it is: it may be a
    /// schema and a table, or one name with a dot of its own
    /// ([`Table::sql_name`] knows which).
    pub fn ident(self, name: &str) -> Cow<'_, str> {
        if name.contains('.') {
            return Cow::Borrowed(name);
        }
        self.part(name)
    }

    /// A table's name as the engine reads it: `schema.table` part by
    /// part, or one name with a dot of its own (`one_name`) as one.
    pub fn table(self, name: &str, one_name: bool) -> Cow<'_, str> {
        match name.split_once('.') {
            Some(_) if one_name => Cow::Owned(self.quoted(name)),
            Some((schema, table)) => {
                Cow::Owned(format!("{}.{}", self.part(schema), self.part(table)))
            }
            None => self.part(name),
        }
    }

    fn part(self, name: &str) -> Cow<'_, str> {
        let mut chars = name.chars();
        let plain = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
            && RESERVED
                .binary_search(&name.to_lowercase().as_str())
                .is_err();
        let folds = self == Quote::Folding && name.chars().any(char::is_uppercase);
        match plain && !folds {
            true => Cow::Borrowed(name),
            false => Cow::Owned(self.quoted(name)),
        }
    }

    /// `name` quoted, whatever it is (an inner quote doubled).
    pub fn quoted(self, name: &str) -> String {
        let quote = match self {
            Quote::Backtick => '`',
            Quote::Double | Quote::Folding => '"',
        };
        let doubled = name.replace(quote, &format!("{quote}{quote}"));
        format!("{quote}{doubled}{quote}")
    }
}

/// How much of a table a description carries. Fitting a small window
/// gives detail up in this order, from the most to the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    /// Named in a list only.
    NameOnly,
    /// One line: the columns' names, keys and references, no types.
    Columns,
    /// Columns with types, keys and references, no sample values.
    Types,
    /// Everything (what `aiq schema` prints).
    Full,
}

impl Table {
    /// The table's name as the engine reads it in SQL.
    pub fn sql_name(&self, quote: Quote) -> Cow<'_, str> {
        quote.table(&self.name, self.one_name)
    }

    /// Appends the table's text at `detail` (nothing for `NameOnly`),
    /// names written as `quote` says.
    pub fn render_at(&self, detail: Detail, quote: Quote, out: &mut String) {
        match detail {
            Detail::Full => self.render(quote, out),
            Detail::Types => self.render_with(quote, out, false),
            Detail::Columns => self.render_line(quote, out),
            Detail::NameOnly => {}
        }
    }

    /// `table orders (~5000 rows): id pk, customer_id -> customers.id, status`
    fn render_line(&self, quote: Quote, out: &mut String) {
        self.render_head(quote, out);
        out.push(':');
        let single_pk = self.columns.iter().filter(|c| c.primary_key).count() == 1;
        for (i, col) in self.columns.iter().enumerate() {
            out.push_str(if i == 0 { " " } else { ", " });
            out.push_str(&quote.ident(&col.name));
            if col.primary_key && single_pk {
                out.push_str(" pk");
            }
            self.render_reference(col, quote, out);
        }
        out.push('\n');
    }

    fn render_head(&self, quote: Quote, out: &mut String) {
        out.push_str(match self.kind {
            TableKind::Table => "table ",
            TableKind::View => "view ",
        });
        out.push_str(&self.sql_name(quote));
        if let Some(n) = self.row_estimate {
            let _ = write!(out, " (~{n} rows)");
        }
        if let Some(c) = self.comment.as_deref().filter(|c| !c.is_empty()) {
            out.push_str(" -- ");
            out.push_str(c);
        }
    }

    fn render_reference(&self, col: &ColumnInfo, quote: Quote, out: &mut String) {
        for fk in &self.foreign_keys {
            if let [only] = fk.columns.as_slice() {
                if *only == col.name {
                    let target = fk.ref_columns.first().map(String::as_str).unwrap_or("?");
                    out.push_str(" -> ");
                    out.push_str(&quote.ident(&fk.ref_table));
                    out.push('.');
                    out.push_str(&quote.ident(target));
                }
            }
        }
    }

    /// Appends the compact text form:
    ///
    /// ```text
    /// table orders (~5000 rows)
    ///   id INTEGER primary key
    ///   customer_id INTEGER not null -> customers.id
    ///   status TEXT not null, e.g. 'delivered', 'shipped'
    /// ```
    pub fn render(&self, quote: Quote, out: &mut String) {
        self.render_with(quote, out, true);
    }

    fn render_with(&self, quote: Quote, out: &mut String, samples: bool) {
        // push_str rather than write!: this runs for every table of every
        // prompt and of `aiq schema`, and formatting machinery is slow.
        self.render_head(quote, out);
        out.push('\n');
        let single_pk = self.columns.iter().filter(|c| c.primary_key).count() == 1;
        for col in &self.columns {
            out.push_str("  ");
            out.push_str(&quote.ident(&col.name));
            if !col.type_name.is_empty() {
                out.push(' ');
                out.push_str(&col.type_name);
            }
            if col.primary_key && single_pk {
                out.push_str(" primary key");
            } else if !col.nullable {
                out.push_str(" not null");
            }
            self.render_reference(col, quote, out);
            for (i, s) in col.samples.iter().enumerate().filter(|_| samples) {
                out.push_str(if i == 0 { ", e.g. '" } else { ", '" });
                out.push_str(&s.replace('\'', "''"));
                out.push('\'');
            }
            out.push('\n');
        }
        let names = |names: &mut dyn Iterator<Item = &str>| {
            names.map(|n| quote.ident(n)).collect::<Vec<_>>().join(", ")
        };
        let mut pk = self
            .columns
            .iter()
            .filter(|c| c.primary_key)
            .map(|c| c.name.as_str());
        if !single_pk && self.columns.iter().any(|c| c.primary_key) {
            let _ = writeln!(out, "  primary key ({})", names(&mut pk));
        }
        for fk in self.foreign_keys.iter().filter(|fk| fk.columns.len() > 1) {
            let _ = writeln!(
                out,
                "  foreign key ({}) -> {}({})",
                names(&mut fk.columns.iter().map(String::as_str)),
                quote.ident(&fk.ref_table),
                names(&mut fk.ref_columns.iter().map(String::as_str))
            );
        }
    }
}

/// Rows read from the top of a table when looking for sample values.
pub const SAMPLE_ROWS: usize = 40;
const SAMPLES_PER_COLUMN: usize = 3;
const SAMPLE_MAX_CHARS: usize = 32;

/// The columns worth sampling, as (table index, column index): text columns
/// that are not primary keys, of base tables (and of views when asked).
pub fn sample_targets(tables: &[Table], include_views: bool) -> Vec<(usize, usize)> {
    tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == TableKind::Table || include_views)
        .flat_map(|(ti, t)| {
            t.columns
                .iter()
                .enumerate()
                .filter(|(_, c)| is_text_type(&c.type_name) && !c.primary_key)
                .map(move |(ci, _)| (ti, ci))
        })
        .collect()
}

/// Offers one value seen in a column; keeps at most three distinct, short,
/// single-line values, in the order first seen.
pub fn offer_sample(column: &mut ColumnInfo, value: &str) {
    let chars = value.chars().count();
    if column.samples.len() >= SAMPLES_PER_COLUMN
        || chars == 0
        || chars > SAMPLE_MAX_CHARS
        || value.contains(['\n', '\r'])
        || column.samples.iter().any(|s| s == value)
    {
        return;
    }
    column.samples.push(value.to_string());
}

/// Whether a declared type holds text (and so may get sample values).
pub fn is_text_type(type_name: &str) -> bool {
    let mut t = type_name.to_ascii_uppercase();
    // ClickHouse's wrappers: `Nullable(String)`, `LowCardinality(String)`.
    for wrapper in ["NULLABLE(", "LOWCARDINALITY(", "NULLABLE("] {
        if let Some(inner) = t.strip_prefix(wrapper).and_then(|r| r.strip_suffix(')')) {
            t = inner.to_string();
        }
    }
    if t.ends_with("[]") {
        return false;
    }
    t.is_empty()
        || t.contains("CHAR")
        || t.contains("TEXT")
        || t.contains("CLOB")
        || t == "STRING"
        || t.starts_with("FIXEDSTRING(")
        || t.starts_with("ENUM")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_compact_form() {
        let t = Table {
            name: "orders".into(),
            kind: TableKind::Table,
            columns: vec![
                ColumnInfo {
                    name: "id".into(),
                    type_name: "INTEGER".into(),
                    nullable: false,
                    primary_key: true,
                    samples: vec![],
                },
                ColumnInfo {
                    name: "customer_id".into(),
                    type_name: "INTEGER".into(),
                    nullable: false,
                    primary_key: false,
                    samples: vec![],
                },
                ColumnInfo {
                    name: "status".into(),
                    type_name: "TEXT".into(),
                    nullable: true,
                    primary_key: false,
                    samples: vec!["delivered".into(), "it's".into()],
                },
            ],
            foreign_keys: vec![ForeignKey {
                columns: vec!["customer_id".into()],
                ref_table: "customers".into(),
                ref_columns: vec!["id".into()],
            }],
            row_estimate: Some(5000),
            comment: None,
            one_name: false,
            reaches: Vec::new(),
        };
        let mut out = String::new();
        t.render(Quote::Double, &mut out);
        assert_eq!(
            out,
            "table orders (~5000 rows)\n  id INTEGER primary key\n  customer_id INTEGER not null -> customers.id\n  status TEXT, e.g. 'delivered', 'it''s'\n"
        );
    }

    /// Names that are not plain words are written as the engine reads
    /// them, in every part of a table's text.
    #[test]
    fn names_that_need_quotes_have_the_engines() {
        let q = Quote::for_engine;
        assert_eq!(q("PostgreSQL 17.2").ident("UnitPrice"), "\"UnitPrice\"");
        assert_eq!(q("PostgreSQL 17.2").ident("unit_price"), "unit_price");
        assert_eq!(q("DuckDB v1.5.6").ident("UnitPrice"), "UnitPrice");
        assert_eq!(q("DuckDB v1.5.6").ident("2024"), "\"2024\"");
        assert_eq!(q("DuckDB v1.5.6").ident("order"), "\"order\"");
        assert_eq!(q("SQLite 3.50").ident("Semi"), "\"Semi\"");
        assert_eq!(q("DuckDB v1.5.6").ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(q("MySQL 8.0.40").ident("a`b c"), "`a``b c`");
        assert_eq!(q("MariaDB 11.8").ident("Unit Price"), "`Unit Price`");
        assert_eq!(q("DuckDB v1.5.6").ident("prénom"), "prénom");
        assert_eq!(q("DuckDB v1.5.6").ident("sales.2024"), "sales.2024");
        assert_eq!(
            q("DuckDB v1.5.6").table("sales.2024", true),
            "\"sales.2024\""
        );
        assert_eq!(
            q("PostgreSQL 17").table("Sales.orders", false),
            "\"Sales\".orders"
        );
        assert!(
            RESERVED.windows(2).all(|w| w[0] < w[1]),
            "sorted, for the search"
        );
        let t = Table {
            name: "Order-Items".into(),
            columns: vec![
                ColumnInfo {
                    name: "Unit Price".into(),
                    type_name: "DOUBLE".into(),
                    primary_key: true,
                    ..ColumnInfo::default()
                },
                ColumnInfo {
                    name: "order".into(),
                    type_name: "INT".into(),
                    primary_key: true,
                    ..ColumnInfo::default()
                },
            ],
            foreign_keys: vec![ForeignKey {
                columns: vec!["order".into()],
                ref_table: "Orders 2024".into(),
                ref_columns: vec!["id".into()],
            }],
            ..Table::default()
        };
        let mut out = String::new();
        t.render(Quote::Double, &mut out);
        assert_eq!(
            out,
            "table \"Order-Items\"\n  \"Unit Price\" DOUBLE not null\n  \"order\" INT not null -> \"Orders 2024\".id\n  primary key (\"Unit Price\", \"order\")\n"
        );
        let mut line = String::new();
        t.render_at(Detail::Columns, Quote::Backtick, &mut line);
        assert_eq!(
            line,
            "table `Order-Items`: `Unit Price`, `order` -> `Orders 2024`.id\n"
        );
    }

    #[test]
    fn composite_keys_get_their_own_lines() {
        let col = |n: &str| ColumnInfo {
            name: n.into(),
            type_name: "INT".into(),
            nullable: false,
            primary_key: true,
            samples: vec![],
        };
        let t = Table {
            name: "pairs".into(),
            kind: TableKind::View,
            columns: vec![col("a"), col("b")],
            foreign_keys: vec![ForeignKey {
                columns: vec!["a".into(), "b".into()],
                ref_table: "other".into(),
                ref_columns: vec!["x".into(), "y".into()],
            }],
            row_estimate: None,
            comment: None,
            one_name: false,
            reaches: Vec::new(),
        };
        let mut out = String::new();
        t.render(Quote::Double, &mut out);
        assert_eq!(
            out,
            "view pairs\n  a INT not null\n  b INT not null\n  primary key (a, b)\n  foreign key (a, b) -> other(x, y)\n"
        );
    }

    #[test]
    fn samples_are_few_short_and_distinct() {
        let mut c = ColumnInfo::default();
        for v in [
            "DE",
            "",
            "DE",
            "a very long value that nobody would call short",
            "two\nlines",
            "US",
            "FR",
            "NL",
        ] {
            offer_sample(&mut c, v);
        }
        assert_eq!(c.samples, ["DE", "US", "FR"]);
    }

    #[test]
    fn text_types() {
        assert!(is_text_type("VARCHAR(20)"));
        assert!(is_text_type("text"));
        assert!(!is_text_type("INTEGER"));
        assert!(!is_text_type("DECIMAL(10,2)"));
    }
}
