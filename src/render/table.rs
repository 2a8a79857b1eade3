//! `table`: a comfy-table grid sized to the terminal. NULL shows as `NULL`
//! (dimmed in colour); numeric columns align right.

use comfy_table::{presets, Attribute, Cell, CellAlignment, ContentArrangement, Table};

use super::{Grid, RenderOptions};

/// Draws the buffered rows as a table (no trailing newline).
pub(crate) fn draw(grid: &Grid, options: &RenderOptions) -> String {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED.with_rounded_corners());
    match options.width {
        Some(width) => {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(width);
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if options.color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    let color = options.color;
    table.set_header(grid.columns.iter().map(|c| {
        let cell = Cell::new(&c.name);
        if color {
            cell.add_attribute(Attribute::Bold)
        } else {
            cell
        }
    }));
    for row in &grid.rows {
        table.add_row(row.iter().map(|c| match c {
            Some(text) => Cell::new(text),
            None if color => Cell::new("NULL").add_attribute(Attribute::Dim),
            None => Cell::new("NULL"),
        }));
    }
    for i in 0..grid.columns.len() {
        if grid.right_aligned(i) {
            if let Some(col) = table.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{render, sample};
    use super::super::Format;
    use crate::source::{Column, Value};

    #[test]
    fn table_with_right_aligned_numbers() {
        let (cols, rows) = sample();
        let out = render(Format::Table, None, &cols, &rows);
        let expected = "\
╭──────────────┬────┬───────╮
│ country      ┆  n ┆   avg │
╞══════════════╪════╪═══════╡
│ DE           ┆  3 ┆ 12.50 │
│ say \"hi\", ok ┆ 10 ┆  NULL │
╰──────────────┴────┴───────╯
";
        assert_eq!(out, expected);
    }

    #[test]
    fn more_rows_footer() {
        let cols = vec![Column::new("i", "INTEGER")];
        let rows: Vec<Vec<Value>> = (0..5).map(|i| vec![Value::Int(i)]).collect();
        let out = render(Format::Table, Some(2), &cols, &rows);
        assert!(
            out.ends_with("╯\n… 3 more rows (use --max-rows to show more)\n"),
            "{out}"
        );
        assert!(out.contains("│ 1 │") && !out.contains("│ 2 │"), "{out}");
    }
}
