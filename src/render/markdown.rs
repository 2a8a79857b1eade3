//! `markdown`: a GitHub-flavoured pipe table; pipes are escaped, newlines
//! become `<br>`, numeric columns align right.

use super::Grid;

fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace('\n', "<br>")
}

/// Draws the buffered rows as a pipe table (no trailing newline).
pub(crate) fn draw(grid: &Grid) -> String {
    let mut lines = Vec::with_capacity(grid.rows.len() + 2);
    let header: Vec<String> = grid.columns.iter().map(|c| cell(&c.name)).collect();
    lines.push(format!("| {} |", header.join(" | ")));
    let rule: Vec<&str> = (0..grid.columns.len())
        .map(|i| if grid.right_aligned(i) { "---:" } else { "---" })
        .collect();
    lines.push(format!("| {} |", rule.join(" | ")));
    for row in &grid.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| c.as_deref().map(cell).unwrap_or_else(|| "NULL".into()))
            .collect();
        lines.push(format!("| {} |", cells.join(" | ")));
    }
    lines.join("\n")
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
