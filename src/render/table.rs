//! `table`: a comfy-table grid sized to the terminal. NULL shows as `NULL`
//! (dimmed in colour); numeric columns align right. On a terminal no
//! column is squeezed below its readable width ([`fit`]): when not all fit,
//! the leading and trailing ones are shown with a `…` column between, each
//! value on one line, cut with `…` to its column.

use comfy_table::{
    presets, Attribute, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width,
};

use super::fit::{self, Plan};
use super::{Grid, RenderOptions};

/// A drawn table and, when columns were left out, how many are shown.
pub(crate) struct Drawn {
    pub text: String,
    pub shown: Option<usize>,
}

/// How the table meets the terminal's width (`None` off a terminal, or
/// for a pager that scrolls sideways: every column at its full width).
pub(crate) fn plan(grid: &Grid, options: &RenderOptions) -> Option<Plan> {
    if options.full_width {
        return None;
    }
    options.width.map(|w| fit::plan(grid, usize::from(w)))
}

/// A column `width` cells wide inside its padding (comfy-table counts the
/// padding, a cell each side, in a column's width).
fn fixed(width: usize) -> Width {
    Width::Fixed(u16::try_from(width + 2).unwrap_or(u16::MAX))
}

fn new_table(options: &RenderOptions) -> Table {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED.with_rounded_corners());
    if options.color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table
}

fn header(name: &str, color: bool) -> Cell {
    let cell = Cell::new(name);
    if color {
        cell.add_attribute(Attribute::Bold)
    } else {
        cell
    }
}

fn value(text: Option<&str>, color: bool) -> Cell {
    match text {
        Some(text) => Cell::new(text),
        None if color => Cell::new("NULL").add_attribute(Attribute::Dim),
        None => Cell::new("NULL"),
    }
}

/// Draws the buffered rows as a table (no trailing newline).
pub(crate) fn draw(grid: &Grid, options: &RenderOptions) -> Drawn {
    match plan(grid, options) {
        Some(Plan::Cut {
            left,
            right,
            widths,
        }) => Drawn {
            text: draw_cut(grid, options, left, right, &widths),
            shown: Some(left + right),
        },
        Some(Plan::All { readable }) => Drawn {
            text: draw_all(grid, options, Some(&readable)),
            shown: None,
        },
        None => Drawn {
            text: draw_all(grid, options, None),
            shown: None,
        },
    }
}

/// Every column; on a terminal (`readable` given) wrapped to its width but
/// none below its readable width.
fn draw_all(grid: &Grid, options: &RenderOptions, readable: Option<&[usize]>) -> String {
    let mut table = new_table(options);
    match (options.width, readable) {
        (Some(width), Some(_)) => {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(width);
        }
        _ => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    let color = options.color;
    table.set_header(grid.columns.iter().map(|c| header(&c.name, color)));
    for row in &grid.rows {
        table.add_row(row.iter().map(|c| value(c.as_deref(), color)));
    }
    for i in 0..grid.columns.len() {
        if let Some(col) = table.column_mut(i) {
            if grid.right_aligned(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
            if let Some(&w) = readable.and_then(|r| r.get(i)) {
                col.set_constraint(ColumnConstraint::LowerBoundary(fixed(w)));
            }
        }
    }
    table.to_string()
}

/// The first `left` and last `right` columns at `widths`, a `…` column
/// between; each value on one line, cut to its column.
fn draw_cut(
    grid: &Grid,
    options: &RenderOptions,
    left: usize,
    right: usize,
    widths: &[usize],
) -> String {
    let n = grid.columns.len();
    let shown: Vec<usize> = (0..left).chain(n - right..n).collect();
    let color = options.color;
    let gap = || {
        let cell = Cell::new("…");
        if color {
            cell.add_attribute(Attribute::Dim)
        } else {
            cell
        }
    };
    let mut table = new_table(options);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    let mut all_widths = widths.to_vec();
    all_widths.insert(left, 1);
    table.set_width(u16::try_from(fit::table_width(&all_widths)).unwrap_or(u16::MAX));
    let mut cells: Vec<Cell> = Vec::with_capacity(shown.len() + 1);
    for (k, &i) in shown.iter().enumerate() {
        if k == left {
            cells.push(gap());
        }
        cells.push(header(&grid.columns[i].name, color));
    }
    if left == shown.len() {
        cells.push(gap());
    }
    table.set_header(cells);
    for row in &grid.rows {
        let mut cells: Vec<Cell> = Vec::with_capacity(shown.len() + 1);
        for (k, &i) in shown.iter().enumerate() {
            if k == left {
                cells.push(gap());
            }
            let text = row.get(i).and_then(|c| c.as_deref());
            let text = text.map(|t| fit::cut(&t.replace('\n', " "), widths[k]));
            cells.push(value(text.as_deref(), color));
        }
        if left == shown.len() {
            cells.push(gap());
        }
        table.add_row(cells);
    }
    for (pos, w) in all_widths.iter().enumerate() {
        // Where the column at `pos` comes from (`None`: the gap).
        let source = match pos.cmp(&left) {
            std::cmp::Ordering::Less => Some(shown[pos]),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(shown[pos - 1]),
        };
        if let Some(col) = table.column_mut(pos) {
            col.set_constraint(ColumnConstraint::Absolute(fixed(*w)));
            if source.is_some_and(|i| grid.right_aligned(i)) {
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
