//! Results as a terminal shows them, kept as insta snapshots
//! (`src/render/snapshots/`), each at 80×24 and 120×40: a 16-column
//! result (columns left out beside a `…` column), the same with one row
//! (`auto` shows it as a record) and a 200-row result (100 shown). Each
//! snapshot also says whether the output would go through the pager.

use super::{renderer, Format, RenderOptions};
use crate::frontend::pager::{overflows, Screen};
use crate::source::{Column, Value};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// The output of `format` for `rows` on a `width`×`height` terminal, and
/// whether it would be paged.
fn shown(format: Format, columns: &[Column], rows: &[Vec<Value>], w: u16, h: u16) -> String {
    let mut out = Vec::new();
    let columns_shown;
    {
        let mut r = renderer(
            format,
            Box::new(&mut out),
            RenderOptions {
                max_rows: Some(100),
                color: false,
                width: Some(w),
                count_budget: None,
                full_width: false,
                in_chat: false,
            },
        );
        r.columns(columns).unwrap();
        for row in rows {
            r.row(row).unwrap();
        }
        r.finish().unwrap();
        columns_shown = r.columns_shown();
    }
    let text = String::from_utf8(out).unwrap();
    let screen = Screen {
        width: w,
        height: h,
    };
    format!(
        "{text}-- columns shown: {columns_shown:?}; paged: {}\n",
        overflows(&text, screen)
    )
}

fn check(name: &str, format: Format, columns: &[Column], rows: &[Vec<Value>]) {
    for (w, h) in SIZES {
        insta::assert_snapshot!(
            format!("{name}_{w}x{h}"),
            shown(format, columns, rows, w, h)
        );
    }
}

/// A customers table with 16 columns.
fn wide(n: usize) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = [
        ("id", "INTEGER"),
        ("name", "TEXT"),
        ("email", "TEXT"),
        ("country", "TEXT"),
        ("city", "TEXT"),
        ("signup_date", "DATE"),
        ("vip", "BOOLEAN"),
        ("orders", "INTEGER"),
        ("total_spent", "DECIMAL"),
        ("average_order_value", "DECIMAL"),
        ("last_order_at", "TIMESTAMP"),
        ("status", "TEXT"),
        ("phone", "TEXT"),
        ("referral_code", "TEXT"),
        ("notes", "TEXT"),
        ("updated_at", "TIMESTAMP"),
    ]
    .map(|(name, ty)| Column::new(name, ty))
    .to_vec();
    let names = [
        "Ada Lovelace",
        "Grace Hopper",
        "Alan Turing",
        "Edsger Dijkstra",
    ];
    let cities = [
        ("GB", "London"),
        ("US", "Arlington"),
        ("GB", "Wilmslow"),
        ("NL", "Nuenen"),
    ];
    let rows = (0..n)
        .map(|i| {
            let name = names[i % names.len()];
            let (country, city) = cities[i % cities.len()];
            let email = format!(
                "{}@example.com",
                name.to_lowercase().replace(' ', ".")
            );
            vec![
                Value::Int(i as i64 + 1),
                Value::Text(name.into()),
                Value::Text(email),
                Value::Text(country.into()),
                Value::Text(city.into()),
                Value::Text(format!("2024-0{}-1{}", 1 + i % 9, i % 10)),
                Value::Bool(i % 3 == 0),
                Value::Int(3 + (i as i64 * 7) % 40),
                Value::Decimal(format!("{}.{:02}", 120 + i * 37, i % 100)),
                Value::Decimal(format!("{}.{:02}", 40 + i * 3, (i * 7) % 100)),
                Value::Text(format!("2025-03-{:02} 14:{:02}:00", 1 + i % 28, i % 60)),
                Value::Text(if i % 5 == 0 { "inactive" } else { "active" }.into()),
                if i % 4 == 1 {
                    Value::Null
                } else {
                    Value::Text(format!("+44 20 7946 0{:03}", i))
                },
                Value::Text(format!("REF-{:05}", 1000 + i * 13)),
                Value::Text(
                    "prefers email; asked about the spring catalogue and a discount on the next order"
                        .into(),
                ),
                Value::Text(format!("2025-06-{:02} 09:30:00", 1 + i % 28)),
            ]
        })
        .collect();
    (columns, rows)
}

#[test]
fn sixteen_columns() {
    let (cols, rows) = wide(8);
    check("sixteen_columns", Format::Auto, &cols, &rows);
}

#[test]
fn one_row_of_sixteen_columns() {
    let (cols, rows) = wide(1);
    check("one_row_of_sixteen_columns", Format::Auto, &cols, &rows);
}

#[test]
fn one_row_of_sixteen_columns_as_a_table() {
    let (cols, rows) = wide(1);
    check(
        "one_row_of_sixteen_columns_table",
        Format::Table,
        &cols,
        &rows,
    );
}

#[test]
fn two_hundred_rows() {
    let cols = vec![
        Column::new("order_id", "INTEGER"),
        Column::new("product", "TEXT"),
        Column::new("quantity", "INTEGER"),
        Column::new("price", "DECIMAL"),
    ];
    let products = ["tea", "coffee beans", "a very long product name for a mug"];
    let rows: Vec<Vec<Value>> = (0..200)
        .map(|i| {
            vec![
                Value::Int(i + 1),
                Value::Text(products[i as usize % products.len()].into()),
                Value::Int(1 + i % 4),
                Value::Decimal(format!("{}.{:02}", 3 + i % 17, (i * 13) % 100)),
            ]
        })
        .collect();
    check("two_hundred_rows", Format::Auto, &cols, &rows);
}

#[test]
fn sixteen_columns_expanded() {
    let (cols, rows) = wide(2);
    check("sixteen_columns_expanded", Format::Expanded, &cols, &rows);
}
