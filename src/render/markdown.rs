//! `markdown`: a GitHub-flavoured pipe table of at most `max_rows` rows;
//! pipes are escaped, newlines become `<br>`, numeric columns align right.

use std::io::{self, Write};

use super::{more_rows_line, Grid, Limit, Renderer};
use crate::source::{Column, RowSink, Value};

pub(crate) struct MarkdownRenderer<'a> {
    out: &'a mut dyn Write,
    grid: Grid,
    limit: Limit,
}

impl<'a> MarkdownRenderer<'a> {
    pub(crate) fn new(out: &'a mut dyn Write, limit: Limit) -> Self {
        MarkdownRenderer {
            out,
            grid: Grid::new(),
            limit,
        }
    }
}

fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace('\n', "<br>")
}

impl RowSink for MarkdownRenderer<'_> {
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

impl Renderer for MarkdownRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        if self.grid.columns.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        let header: Vec<String> = self.grid.columns.iter().map(|c| cell(&c.name)).collect();
        text.push_str(&format!("| {} |\n", header.join(" | ")));
        let rule: Vec<&str> = (0..self.grid.columns.len())
            .map(|i| {
                if self.grid.right_aligned(i) {
                    "---:"
                } else {
                    "---"
                }
            })
            .collect();
        text.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &self.grid.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|c| c.as_deref().map(cell).unwrap_or_else(|| "NULL".into()))
                .collect();
            text.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        if self.limit.hidden() > 0 {
            text.push('\n');
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
    fn pipe_table() {
        let (cols, rows) = sample();
        assert_eq!(
            render(Format::Markdown, None, &cols, &rows),
            "| country | n | avg |\n| --- | ---: | ---: |\n| DE | 3 | 12.50 |\n| say \"hi\", ok | 10 | NULL |\n"
        );
    }

    #[test]
    fn escapes() {
        let cols = vec![Column::new("a|b", "")];
        let rows = vec![vec![Value::Text("x|y\nz".into())]];
        assert_eq!(
            render(Format::Markdown, None, &cols, &rows),
            "| a\\|b |\n| --- |\n| x\\|y<br>z |\n"
        );
    }
}
