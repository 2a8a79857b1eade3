//! Fitting a result to a terminal's width (SPEC §2.3, "Tables in a
//! terminal"): how wide a column must be to stay readable, which columns
//! fit beside a `…` column when not all do, and cutting text with `…`.
//! Pure functions over the buffered [`Grid`]; no drawing here.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::Grid;

/// A column is never narrower than this many characters of its name or
/// values (or all of them, when it needs fewer).
pub const READABLE: usize = 12;

/// The longest cell shown in the formats for people (`table`, `expanded`,
/// `markdown`); a longer value is cut with `…`. Machine formats never cut.
pub const MAX_CELL: usize = 100;

/// At most this many rows are shown as records by `auto` when one row does
/// not fit the width; more rows stay a table (with columns left out).
pub const AUTO_EXPANDED_ROWS: usize = 3;

/// The widest line of `text`, in terminal cells.
pub fn text_width(text: &str) -> usize {
    text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// `text` cut to at most `max` cells in all (line breaks kept), ending in
/// `…` when something was left out.
pub fn cut(text: &str, max: usize) -> String {
    if text.width() <= max && text.chars().count() <= max {
        return text.to_string();
    }
    // A value a size limit cut already (`xxxx…(1.0 MB)`) keeps its size.
    if let Some(at) = text.rfind("…(") {
        let marker = &text[at..];
        let sized = marker.len() <= 16
            && marker.ends_with("B)")
            && marker["…(".len()..].starts_with(|c: char| c.is_ascii_digit());
        if sized && marker.width() < max {
            let head = cut(&text[..at], max - marker.width() + 1);
            return format!("{}{marker}", head.trim_end_matches('…'));
        }
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(1);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Each line of `text` cut to at most `width` cells, ending in `…` when
/// something was left out.
/// `text` with its lines of prose (a note: `- …`) longer than `width`
/// wrapped at spaces, the rest indented two spaces; other lines as they
/// are.
pub fn wrap_prose(text: &str, width: usize) -> String {
    let width = width.max(20);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if !line.starts_with("- ") || line.width() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut current = String::new();
        for word in line.split(' ') {
            let room = if current.is_empty() { 0 } else { 1 };
            if !current.trim().is_empty() && current.width() + room + word.width() > width {
                out.push_str(current.trim_end());
                out.push('\n');
                current = "  ".to_string();
            } else if !current.is_empty() && !current.ends_with("  ") {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(current.trim_end());
        out.push('\n');
    }
    out
}

pub fn cut_lines(text: &str, width: usize) -> String {
    text.split('\n')
        .map(|line| {
            if line.width() <= width {
                line.to_string()
            } else {
                cut(line, width.max(1))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How a table meets the width: every column, or the leading and trailing
/// ones with a `…` column between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Every column fits at its readable width (given per column).
    All { readable: Vec<usize> },
    /// The first `left` and last `right` columns, at `widths` (left ones
    /// first); the rest is left out.
    Cut {
        left: usize,
        right: usize,
        widths: Vec<usize>,
    },
}

impl Plan {
    /// Columns shown, when some are left out.
    pub fn shown(&self) -> Option<usize> {
        match self {
            Plan::All { .. } => None,
            Plan::Cut { left, right, .. } => Some(left + right),
        }
    }
}

/// The width a table of columns `widths` wide takes with its borders and
/// padding (`│ a ┆ b │`).
pub fn table_width(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 3 * widths.len() + 1
}

/// Column `i`'s width with nothing cut: its name or its widest value.
fn natural(grid: &Grid, i: usize) -> usize {
    let name = grid.columns.get(i).map_or(0, |c| text_width(&c.name));
    let values = grid
        .rows
        .iter()
        .map(|row| match row.get(i) {
            Some(Some(text)) => text_width(text),
            _ => "NULL".len(),
        })
        .max()
        .unwrap_or(0);
    name.max(values).max(1)
}

/// Which columns of `grid` fit in `width` cells, and how wide each is.
pub(crate) fn plan(grid: &Grid, width: usize) -> Plan {
    let n = grid.columns.len();
    let natural: Vec<usize> = (0..n).map(|i| natural(grid, i)).collect();
    let readable: Vec<usize> = natural.iter().map(|&w| w.min(READABLE)).collect();
    if table_width(&readable) <= width {
        return Plan::All { readable };
    }
    // Room for columns beside the right border and the `…` column (`┆ … `).
    let mut room = width.saturating_sub(1 + 4);
    let (mut left, mut right) = (0, 0);
    let mut left_turn = true;
    while left + right < n {
        let next_left = readable[left] + 3;
        let next_right = readable[n - 1 - right] + 3;
        let (fits_left, fits_right) = (next_left <= room, next_right <= room);
        if !fits_left && !fits_right {
            break;
        }
        if fits_left && (left_turn || !fits_right) {
            room -= next_left;
            left += 1;
        } else {
            room -= next_right;
            right += 1;
        }
        left_turn = !left_turn;
    }
    if left + right == 0 {
        // Not even one column fits: the first one, as wide as there is room.
        let widths = vec![readable[0].min(width.saturating_sub(8)).max(1)];
        return Plan::Cut {
            left: 1,
            right: 0,
            widths,
        };
    }
    let shown: Vec<usize> = (0..left).chain(n - right..n).collect();
    let mut widths: Vec<usize> = shown.iter().map(|&i| readable[i]).collect();
    // What is left over goes to the columns whose values were cut, a cell at
    // a time, up to their natural width.
    while room > 0 {
        let mut grew = false;
        for (k, &i) in shown.iter().enumerate() {
            if room > 0 && widths[k] < natural[i] {
                widths[k] += 1;
                room -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Plan::Cut {
        left,
        right,
        widths,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Column, Value};

    fn grid(names: &[&str], rows: &[Vec<&str>]) -> Grid {
        let mut g = Grid::new();
        let cols: Vec<Column> = names.iter().map(|n| Column::new(*n, "TEXT")).collect();
        g.set_columns(&cols);
        for row in rows {
            let values: Vec<Value> = row.iter().map(|v| Value::Text(v.to_string())).collect();
            g.push(&values);
        }
        g
    }

    #[test]
    fn a_value_cut_for_size_keeps_its_size() {
        let long = format!("{}…(1.0 MB)", "x".repeat(300));
        let shown = cut(&long, 20);
        assert_eq!(shown, format!("{}…(1.0 MB)", "x".repeat(11)));
        assert_eq!(shown.width(), 20);
        assert_eq!(cut("short…(2 B)", 100), "short…(2 B)");
        assert_eq!(
            cut(&format!("{}…(x)", "y".repeat(30)), 10),
            format!("{}…", "y".repeat(9))
        );
    }

    #[test]
    fn cutting_keeps_the_width_and_ends_in_an_ellipsis() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(cut_lines("abcdef\nxy", 3), "ab…\nxy");
        assert_eq!(cut("日本語です", 5), "日本…");
    }

    #[test]
    fn columns_that_fit_are_all_shown() {
        let g = grid(&["id", "a_rather_long_name"], &[vec!["1", "x"]]);
        assert_eq!(
            plan(&g, 80),
            Plan::All {
                readable: vec![2, 12]
            }
        );
    }

    #[test]
    fn leading_and_trailing_columns_fit_beside_the_gap() {
        let names: Vec<String> = (0..10).map(|i| format!("column_{i:02}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let row: Vec<&str> = vec!["a value"; 10];
        let g = grid(&names, &[row]);
        // 9 cells readable + 3 per column: 12 each; 40 - 5 leaves 35: two.
        let p = plan(&g, 40);
        assert_eq!(
            p,
            Plan::Cut {
                left: 1,
                right: 1,
                widths: vec![9, 9]
            }
        );
        assert_eq!(p.shown(), Some(2));
        let p = plan(&g, 80);
        assert_eq!(p.shown(), Some(6));
    }
}
