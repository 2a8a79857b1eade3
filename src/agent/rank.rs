//! The schema context for one question (SPEC §5.3 step 1), as one call:
//! the whole catalog when it fits the budget, otherwise the tables that
//! matter most, described as far as the budget allows (see
//! [`super::link`] for how tables are ranked and laid out). Pure.

use super::link::{layout, rank, LinkIndex, Signals};
use crate::schema::Catalog;

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
    let index = LinkIndex::new(catalog);
    let signals = Signals {
        question,
        recent,
        earlier_sql,
    };
    layout(catalog, &index, &rank(catalog, &index, &signals), budget).text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, ForeignKey, Table, TableKind};

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
        // The budget is used: more tables than the matching ones are
        // described, the rest named.
        assert!(
            ctx.contains("more tables, by name only:"),
            "{}",
            &ctx[ctx.len() - 200..]
        );
        let customers = ctx.find("table customers\n").unwrap();
        let bins = ctx.find("table warehouse_bins");
        assert!(
            bins.is_none_or(|b| b > customers),
            "matching tables come first"
        );
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
}
