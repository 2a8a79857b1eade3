//! `table`: a comfy-table grid sized to the terminal, at most `max_rows`
//! rows, then "… N more rows". NULL shows as `NULL` (dimmed in colour).

use std::io::{self, Write};

use comfy_table::{presets, Attribute, Cell, CellAlignment, ContentArrangement, Table};

use super::{more_rows_line, Grid, Limit, RenderOptions, Renderer};
use crate::source::{Column, RowSink, Value};

pub(crate) struct TableRenderer<'a> {
    out: &'a mut dyn Write,
    options: RenderOptions,
    grid: Grid,
    limit: Limit,
}

impl<'a> TableRenderer<'a> {
    pub(crate) fn new(out: &'a mut dyn Write, options: RenderOptions, limit: Limit) -> Self {
        TableRenderer {
            out,
            options,
            grid: Grid::new(),
            limit,
        }
    }

    fn build(&self) -> Table {
        let mut table = Table::new();
        table.load_style(presets::UTF8_FULL_CONDENSED.with_rounded_corners());
        match self.options.width {
            Some(width) => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
                table.set_width(width);
            }
            None => {
                table.set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        if self.options.color {
            table.enforce_styling();
        } else {
            table.force_no_tty();
        }
        let color = self.options.color;
        table.set_header(self.grid.columns.iter().map(|c| {
            let cell = Cell::new(&c.name);
            if color {
                cell.add_attribute(Attribute::Bold)
            } else {
                cell
            }
        }));
        for row in &self.grid.rows {
            table.add_row(row.iter().map(|c| match c {
                Some(text) => Cell::new(text),
                None if color => Cell::new("NULL").add_attribute(Attribute::Dim),
                None => Cell::new("NULL"),
            }));
        }
        for i in 0..self.grid.columns.len() {
            if self.grid.right_aligned(i) {
                if let Some(col) = table.column_mut(i) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        table
    }
}

impl RowSink for TableRenderer<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.grid.set_columns(columns);
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if self.limit.admit() {
            self.grid.push(row);
        }
        Ok(())
    }
}

impl Renderer for TableRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        if self.grid.columns.is_empty() {
            return Ok(());
        }
        let mut text = self.build().to_string();
        text.push('\n');
        if self.limit.hidden() > 0 {
            text.push_str(&more_rows_line(self.limit.hidden()));
            text.push('\n');
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    fn hidden(&self) -> u64 {
        self.limit.hidden()
    }
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
