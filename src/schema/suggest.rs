//! "did you mean customers.name?" (SPEC §2.3): an engine's unknown-table or
//! unknown-column error, on every engine, gets the closest names the
//! catalog holds — never a hidden one. Pure: a message and a catalog in, a
//! hint out.

use super::Catalog;

/// What an engine said it could not find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unknown {
    Table(String),
    /// A column, maybe qualified (`c.nme`): the part after the last dot.
    Column(String),
}

/// The unknown name in an engine's error, in each engine's wording.
pub fn unknown_name(message: &str) -> Option<Unknown> {
    let after = |prefix: &str| {
        message
            .find(prefix)
            .map(|i| message[i + prefix.len()..].trim_start())
    };
    // The name at the start of `rest`: quoted ("x", 'x', `x`) or a word.
    let name = |rest: &str| -> Option<String> {
        let rest = rest.trim_start();
        let first = rest.chars().next()?;
        let text = match first {
            '"' | '\'' | '`' => rest[1..].split(first).next()?,
            _ => rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .next()?,
        };
        let text = text.trim_end_matches('.');
        (!text.is_empty()).then(|| text.to_string())
    };
    let column = |n: String| Unknown::Column(n.rsplit('.').next().unwrap_or(&n).to_string());
    let table = |n: String| Unknown::Table(n.rsplit('.').next().unwrap_or(&n).to_string());
    // SQLite
    if let Some(rest) = after("no such column:") {
        return name(rest).map(column);
    }
    if let Some(rest) = after("no such table:") {
        return name(rest).map(table);
    }
    // DuckDB
    if let Some(rest) = after("Referenced column") {
        return name(rest).map(column);
    }
    if let Some(rest) = after("Table with name") {
        return name(rest).map(table);
    }
    // MySQL / MariaDB
    if let Some(rest) = after("Unknown column") {
        return name(rest).map(column);
    }
    if message.contains("doesn't exist") {
        if let Some(rest) = after("Table") {
            return name(rest).map(table);
        }
    }
    // ClickHouse: `Missing columns: 'nme' while processing query` (older
    // releases), `Unknown expression identifier `nme`` (newer).
    for prefix in [
        "Missing columns:",
        "Unknown identifier:",
        "Unknown expression identifier",
    ] {
        if let Some(rest) = after(prefix) {
            return name(rest).map(column);
        }
    }
    // PostgreSQL: column "x" does not exist, column c.x does not exist,
    // relation "x" does not exist.
    if message.contains("does not exist") {
        if let Some(rest) = after("column") {
            return name(rest).map(column);
        }
        if let Some(rest) = after("relation") {
            return name(rest).map(table);
        }
    }
    None
}

/// The hint for an engine's `message` about `sql`: `; did you mean X?`
/// with the closest visible names (`hidden` says which table or
/// `table.column` may not be named), or `None` when the message names
/// nothing unknown, the engine suggested already, or nothing is close.
pub fn hint(
    message: &str,
    sql: &str,
    catalog: &Catalog,
    hidden: &dyn Fn(&str) -> bool,
) -> Option<String> {
    if message.to_lowercase().contains("did you mean") {
        return None;
    }
    let unknown = unknown_name(message)?;
    let words: Vec<String> = sql
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
        .collect();
    let mentioned = |table: &str| {
        let bare = table.rsplit('.').next().unwrap_or(table).to_lowercase();
        words.contains(&bare)
    };
    let close = |wanted: &str, have: &str| {
        let d = strsim::levenshtein(&wanted.to_lowercase(), &have.to_lowercase());
        let limit = (wanted.chars().count() / 3).max(2);
        (d <= limit).then_some(d)
    };
    let tables = catalog.tables.iter().filter(|t| !hidden(&t.name));
    let quote = catalog.quote();
    let mut found: Vec<(usize, bool, String)> = match &unknown {
        Unknown::Table(wanted) => tables
            .filter_map(|t| {
                let bare = t.name.rsplit('.').next().unwrap_or(&t.name);
                close(wanted, bare).map(|d| (d, false, t.sql_name(quote).into_owned()))
            })
            .collect(),
        Unknown::Column(wanted) => tables
            .flat_map(|t| t.columns.iter().map(move |c| (t, c)))
            .filter(|(t, c)| !hidden(&format!("{}.{}", t.name, c.name)))
            .filter_map(|(t, c)| {
                close(wanted, &c.name).map(|d| {
                    let name = format!("{}.{}", t.sql_name(quote), quote.ident(&c.name));
                    (d, !mentioned(&t.name), name)
                })
            })
            .collect(),
    };
    found.sort();
    let best = found.first()?.clone();
    let names: Vec<String> = found
        .into_iter()
        .filter(|(d, other, _)| (*d, *other) == (best.0, best.1))
        .map(|(_, _, n)| n)
        .take(3)
        .collect();
    Some(format!("; did you mean {}?", names.join(" or ")))
}

/// `message` without an engine's "did you mean" that names what the
/// catalog does not have: DuckDB suggests its own internal catalog for a
/// table it cannot find (`Did you mean "sqlite_master"?`, `"pg_class"?`),
/// which no user table is. aiq's own suggestion ([`hint`]) takes its place.
pub fn without_foreign(message: &str, catalog: &Catalog) -> String {
    let lower = message.to_lowercase();
    let Some(at) = lower.find("did you mean") else {
        return message.to_string();
    };
    let end = message[at..]
        .find('?')
        .map_or(message.len(), |i| at + i + 1);
    let suggested: Vec<&str> = message[at..end].split('"').skip(1).step_by(2).collect();
    let known = |name: &str| {
        let name = name.to_lowercase();
        let bare = name.rsplit('.').next().unwrap_or(&name).to_string();
        catalog.tables.iter().any(|t| {
            let table = t.name.to_lowercase();
            table == name
                || table.rsplit('.').next() == Some(bare.as_str())
                || t.columns.iter().any(|c| c.name.to_lowercase() == bare)
        })
    };
    if !suggested.is_empty() && suggested.iter().all(|n| known(n)) {
        return message.to_string();
    }
    let mut out = message[..at].trim_end().to_string();
    out.push_str(&message[end..]);
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, Table};

    fn catalog() -> Catalog {
        let t = |name: &str, cols: &[&str]| Table {
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
        Catalog {
            engine: "x".into(),
            tables: vec![
                t("customers", &["id", "name", "email"]),
                t("products", &["id", "name", "price"]),
                t("payroll", &["id", "salary"]),
            ],
        }
    }

    /// DuckDB's suggestion of its internal catalog for a table it cannot
    /// find gives way to aiq's own, from the source's tables.
    #[test]
    fn an_engines_suggestion_of_its_internals_gives_way() {
        let c = catalog();
        let message = "Catalog Error: Table with name custmers does not exist!\nDid you mean \"sqlite_master\"?\n\nLINE 1: SELECT * FROM custmers";
        let cleaned = without_foreign(message, &c);
        assert_eq!(
            cleaned,
            "Catalog Error: Table with name custmers does not exist!\n\nLINE 1: SELECT * FROM custmers"
        );
        let hint = hint(&cleaned, "SELECT * FROM custmers", &c, &|_| false).unwrap();
        assert_eq!(hint, "; did you mean customers?");
        // One that names the source's own table stays.
        let own =
            "Catalog Error: Table with name custmer does not exist!\nDid you mean \"customers\"?";
        assert_eq!(without_foreign(own, &c), own);
    }

    /// A suggestion is typed as it stands: names that need quotes have
    /// the engine's.
    #[test]
    fn suggested_names_are_quoted_as_the_engine_reads_them() {
        let mut c = catalog();
        c.tables[0].columns.push(ColumnInfo {
            name: "Unit Price".into(),
            ..ColumnInfo::default()
        });
        c.tables.push(Table {
            name: "Order-Items".into(),
            ..Table::default()
        });
        for (engine, column) in [
            ("DuckDB v1.5.6", "customers.\"Unit Price\""),
            ("MariaDB 11.8", "customers.`Unit Price`"),
        ] {
            c.engine = engine.into();
            assert_eq!(
                hint(
                    "no such column: unit_price",
                    "SELECT unit_price FROM customers",
                    &c,
                    &hidden
                )
                .as_deref(),
                Some(format!("; did you mean {column}?").as_str())
            );
        }
        c.engine = "SQLite 3.50".into();
        assert_eq!(
            hint(
                "no such table: order_items",
                "SELECT * FROM order_items",
                &c,
                &hidden
            )
            .as_deref(),
            Some("; did you mean \"Order-Items\"?")
        );
    }

    fn hidden(name: &str) -> bool {
        name == "payroll" || name.starts_with("payroll.")
    }

    #[test]
    fn each_engines_wording_is_read() {
        let cases = [
            ("no such column: nme", Unknown::Column("nme".into())),
            ("no such column: c.nme", Unknown::Column("nme".into())),
            ("no such table: main.custmers", Unknown::Table("custmers".into())),
            (
                "Binder Error: Referenced column \"nme\" not found in FROM clause!\nCandidate bindings: \"id\"",
                Unknown::Column("nme".into()),
            ),
            (
                "Catalog Error: Table with name custmers does not exist!",
                Unknown::Table("custmers".into()),
            ),
            ("error returned from database: column \"nme\" does not exist", Unknown::Column("nme".into())),
            ("column c.nme does not exist", Unknown::Column("nme".into())),
            ("relation \"custmers\" does not exist", Unknown::Table("custmers".into())),
            (
                "Missing columns: 'nme' while processing query: 'SELECT nme FROM customers'",
                Unknown::Column("nme".into()),
            ),
            (
                "Table shop.custmers doesn't exist.",
                Unknown::Table("custmers".into()),
            ),
            ("Unknown column 'nme' in 'field list'", Unknown::Column("nme".into())),
            ("Unknown column 'c.nme' in 'where clause'", Unknown::Column("nme".into())),
            ("Table 'shop.custmers' doesn't exist", Unknown::Table("custmers".into())),
        ];
        for (message, want) in cases {
            assert_eq!(unknown_name(message), Some(want), "{message}");
        }
        assert_eq!(unknown_name("division by zero"), None);
    }

    #[test]
    fn the_closest_visible_names_are_suggested() {
        let c = catalog();
        let h = |m: &str, sql: &str| hint(m, sql, &c, &hidden);
        assert_eq!(
            h("no such column: nme", "SELECT nme FROM customers").as_deref(),
            Some("; did you mean customers.name?")
        );
        assert_eq!(
            h("no such column: nme", "SELECT nme").as_deref(),
            Some("; did you mean customers.name or products.name?")
        );
        assert_eq!(
            h("no such table: custmers", "SELECT * FROM custmers").as_deref(),
            Some("; did you mean customers?")
        );
        // Hidden names are never suggested, and nothing far is.
        assert_eq!(h("no such table: payrol", "SELECT * FROM payrol"), None);
        assert_eq!(
            h("no such column: salry", "SELECT salry FROM customers"),
            None
        );
        assert_eq!(
            h("no such column: zzzzzz", "SELECT zzzzzz FROM customers"),
            None
        );
        // An engine that suggested already is left alone.
        assert_eq!(
            h(
                "Table with name custmers does not exist! Did you mean \"customers\"?",
                ""
            ),
            None
        );
    }
}
