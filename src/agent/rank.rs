//! The schema context for one question (SPEC §5.3 step 1): the whole
//! catalog when it fits the budget, otherwise the tables that matter most —
//! tables used earlier in the conversation first, then those whose names,
//! columns, comments and sample values match the question and recent turns,
//! then their foreign-key neighbours — and the names of the rest. Pure.

use std::collections::HashSet;

use crate::schema::{Catalog, Table};

/// Scores of the signals, strongest first.
const USED_EARLIER: i64 = 1_000;
const NAME_EQUALS: i64 = 30;
const NAME_PART: i64 = 12;
const COLUMN_PART: i64 = 4;
const SAMPLE_MATCH: i64 = 8;
const COMMENT_WORD: i64 = 2;
const NEIGHBOUR: i64 = 1;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "by", "for", "from", "how", "in", "is", "it", "many",
    "me", "much", "of", "on", "or", "per", "show", "the", "that", "this", "to", "was", "what",
    "which", "who", "with", "all", "each", "by", "list", "give", "get", "top", "number", "count",
];

/// Lowercase word stems of a text: `Customers'` → `customer`.
pub fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(|w| stem(&w.to_lowercase()))
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// A crude singular: `categories` → `category`, `boxes` → `box`, `orders` → `order`.
fn stem(w: &str) -> String {
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        return format!("{base}y");
    }
    for suffix in ["sses", "xes", "ches", "shes"] {
        if w.ends_with(suffix) {
            return w[..w.len() - 2].to_string();
        }
    }
    match w.strip_suffix('s') {
        Some(base) if base.len() >= 3 && !base.ends_with('s') => base.to_string(),
        _ => w.to_string(),
    }
}

/// Splits an identifier into stems: `order_items` → {order, item}, `customerId` → {customer, id}.
fn ident_parts(name: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase();
        spaced.push(c);
    }
    spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(|p| stem(&p.to_lowercase()))
        .collect()
}

fn score(table: &Table, question: &HashSet<String>, used: bool) -> i64 {
    let mut s = if used { USED_EARLIER } else { 0 };
    let bare = table.name.rsplit('.').next().unwrap_or(&table.name);
    if question.contains(&stem(&bare.to_lowercase())) {
        s += NAME_EQUALS;
    }
    s += ident_parts(bare)
        .iter()
        .filter(|p| question.contains(*p))
        .count() as i64
        * NAME_PART;
    let column_hits: i64 = table
        .columns
        .iter()
        .map(|c| {
            ident_parts(&c.name)
                .iter()
                .filter(|p| question.contains(*p))
                .count() as i64
        })
        .sum();
    s += column_hits.min(5) * COLUMN_PART;
    let sample_hits = table
        .columns
        .iter()
        .flat_map(|c| c.samples.iter())
        .filter(|v| words(v).iter().any(|w| question.contains(w)))
        .count() as i64;
    s += sample_hits.min(4) * SAMPLE_MATCH;
    if let Some(comment) = &table.comment {
        s += words(comment).intersection(question).count() as i64 * COMMENT_WORD;
    }
    s
}

/// Whether a table's name appears as a word in some earlier SQL.
fn used_in(table: &str, earlier_sql: &[&str]) -> bool {
    let name = table.to_lowercase();
    earlier_sql.iter().any(|sql| {
        let sql = sql.to_lowercase();
        sql.match_indices(&name).any(|(i, _)| {
            let before = sql[..i].chars().next_back();
            let after = sql[i + name.len()..].chars().next();
            let boundary = |c: Option<char>| {
                c.map(|c| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(true)
            };
            boundary(before) && boundary(after)
        })
    })
}

/// The schema text for a question within `budget` bytes. `recent` holds
/// the texts of recent turns (questions and answers); `earlier_sql` the SQL
/// run earlier in the conversation.
pub fn schema_context(
    catalog: &Catalog,
    question: &str,
    recent: &[&str],
    earlier_sql: &[&str],
    budget: usize,
) -> String {
    let full = catalog.render();
    if full.len() <= budget {
        return full;
    }
    let mut signal = words(question);
    for text in recent {
        signal.extend(words(text));
    }
    let mut scored: Vec<(i64, usize)> = catalog
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| (score(t, &signal, used_in(&t.name, earlier_sql)), i))
        .collect();
    // Foreign-key neighbours of matching tables get a nudge: joins need them.
    let matching: HashSet<&str> = scored
        .iter()
        .filter(|(s, _)| *s > 0)
        .map(|(_, i)| catalog.tables[*i].name.as_str())
        .collect();
    for (s, i) in scored.iter_mut() {
        let t = &catalog.tables[*i];
        let linked = t
            .foreign_keys
            .iter()
            .any(|fk| matching.contains(fk.ref_table.as_str()))
            || catalog.tables.iter().any(|o| {
                matching.contains(o.name.as_str())
                    && o.foreign_keys.iter().any(|fk| fk.ref_table == t.name)
            });
        if linked {
            *s += NEIGHBOUR;
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));

    let mut out = String::new();
    let mut omitted: Vec<&str> = Vec::new();
    // Keep room for the list of omitted names.
    let tables_budget = budget.saturating_sub(budget / 5);
    for (s, i) in &scored {
        let table = &catalog.tables[*i];
        let mut text = String::new();
        table.render(&mut text);
        if (*s > 0 || out.is_empty()) && out.len() + text.len() <= tables_budget {
            out.push_str(&text);
        } else {
            omitted.push(&table.name);
        }
    }
    if !omitted.is_empty() {
        let mut line = format!(
            "-- {} more tables, not shown (ask about them by name):",
            omitted.len()
        );
        for name in omitted {
            if out.len() + line.len() + name.len() + 8 > budget {
                line.push_str(" …");
                break;
            }
            line.push(' ');
            line.push_str(name);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, ForeignKey, TableKind};

    fn table(name: &str, cols: &[&str]) -> Table {
        Table {
            name: name.into(),
            kind: TableKind::Table,
            columns: cols
                .iter()
                .map(|c| ColumnInfo {
                    name: c.to_string(),
                    type_name: "TEXT".into(),
                    nullable: true,
                    primary_key: false,
                    samples: vec![],
                })
                .collect(),
            ..Table::default()
        }
    }

    /// 2,000 filler tables plus a few that matter.
    fn big_catalog() -> Catalog {
        let mut tables: Vec<Table> = (0..2000)
            .map(|i| {
                table(
                    &format!("t{i:04}"),
                    &["id", "name", "status", "amount", "created_at"],
                )
            })
            .collect();
        let mut customers = table("customers", &["id", "name", "country"]);
        customers.columns[2].samples = vec!["DE".into(), "US".into()];
        tables.push(customers);
        let mut orders = table("orders", &["id", "customer_id", "total"]);
        orders.foreign_keys.push(ForeignKey {
            columns: vec!["customer_id".into()],
            ref_table: "customers".into(),
            ref_columns: vec!["id".into()],
        });
        tables.push(orders);
        tables.push(table("warehouse_bins", &["id", "shelf"]));
        tables.push(table("payments", &["id", "order_id", "method"]));
        Catalog {
            engine: "SQLite".into(),
            tables,
        }
    }

    #[test]
    fn small_catalogs_go_whole() {
        let c = Catalog {
            engine: "x".into(),
            tables: vec![table("a", &["x"]), table("b", &["y"])],
        };
        assert_eq!(schema_context(&c, "anything", &[], &[], 10_000), c.render());
    }

    #[test]
    fn big_catalogs_keep_what_the_question_is_about() {
        let c = big_catalog();
        let ctx = schema_context(&c, "How many customers per country?", &[], &[], 40_000);
        assert!(ctx.len() <= 40_000, "{}", ctx.len());
        assert!(ctx.contains("table customers\n"), "customers missing");
        // orders references customers: a neighbour worth showing.
        assert!(ctx.contains("table orders\n"), "neighbour missing");
        assert!(!ctx.contains("table warehouse_bins\n"));
        assert!(ctx.contains("more tables, not shown"));
    }

    #[test]
    fn sample_values_and_earlier_sql_count() {
        let c = big_catalog();
        let ctx = schema_context(
            &c,
            "only DE please",
            &[],
            &["SELECT method FROM payments"],
            40_000,
        );
        assert!(ctx.contains("table payments\n"), "used earlier");
        assert!(ctx.contains("table customers\n"), "sample value DE");
        let ctx = schema_context(
            &c,
            "and the warehouse bins?",
            &["how many customers"],
            &[],
            40_000,
        );
        assert!(ctx.contains("table warehouse_bins\n"));
        assert!(ctx.contains("table customers\n"), "recent turn");
    }

    #[test]
    fn stems() {
        assert_eq!(stem("categories"), "category");
        assert_eq!(stem("orders"), "order");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("status"), "statu");
        assert_eq!(ident_parts("orderItems"), ["order", "item"]);
        assert!(used_in("orders", &["select * from Orders o"]));
        assert!(!used_in("orders", &["select * from orders_archive"]));
    }
}
