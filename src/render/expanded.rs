//! `expanded`: each row as a record, one `column │ value` line per column
//! and a rule above each row (like psql's `\x`). On a terminal long values
//! wrap at its width; NULL shows as `NULL` (dimmed in colour).

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::fit::{self, READABLE};
use super::{Grid, RenderOptions};

/// Values get at least this many cells, however narrow the terminal.
const MIN_VALUE_WIDTH: usize = 10;

/// Draws the buffered rows as records (no trailing newline).
pub(crate) fn draw(grid: &Grid, options: &RenderOptions) -> String {
    let width = options.width.map(usize::from);
    let widest_name = grid
        .columns
        .iter()
        .map(|c| c.name.width())
        .max()
        .unwrap_or(0);
    let name_width = match width {
        Some(w) => widest_name.min(READABLE.max(w / 3)),
        None => widest_name,
    };
    let value_width = width.map(|w| w.saturating_sub(name_width + 3).max(MIN_VALUE_WIDTH));
    let rule_width = match width {
        Some(w) => w,
        None => {
            let widest_value = grid
                .rows
                .iter()
                .flatten()
                .map(|c| c.as_deref().map_or(4, fit::text_width))
                .max()
                .unwrap_or(0);
            (name_width + 3 + widest_value).max(20)
        }
    };
    let style = Style {
        color: options.color,
    };
    let mut lines: Vec<String> = Vec::new();
    for (r, row) in grid.rows.iter().enumerate() {
        lines.push(style.dim(&rule(r + 1, rule_width)));
        for (i, column) in grid.columns.iter().enumerate() {
            let name = fit::cut(&column.name.replace('\n', " "), name_width);
            let pad = " ".repeat(name_width.saturating_sub(name.width()));
            let name = format!("{}{pad}", style.bold(&name));
            let value_lines = match row.get(i).and_then(|c| c.as_deref()) {
                Some(text) => wrap(text, value_width),
                None => vec![style.dim("NULL")],
            };
            for (k, line) in value_lines.iter().enumerate() {
                let lead = if k == 0 {
                    name.clone()
                } else {
                    " ".repeat(name_width)
                };
                let line = format!("{lead} {} {line}", style.dim("│"));
                lines.push(line.trim_end().to_string());
            }
        }
    }
    if grid.rows.is_empty() {
        lines.push("(no rows)".into());
    }
    lines.join("\n")
}

/// `─[ row 3 ]────…`, `width` cells wide.
fn rule(n: usize, width: usize) -> String {
    let head = format!("─[ row {n} ]");
    let fill = width.saturating_sub(head.width());
    format!("{head}{}", "─".repeat(fill))
}

/// `text` as lines of at most `width` cells (all of it on its own lines
/// when `None`), broken at a space where one is near.
fn wrap(text: &str, width: Option<usize>) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        let Some(width) = width else {
            out.push(line.to_string());
            continue;
        };
        let mut rest = line;
        while rest.width() > width {
            let mut used = 0;
            let mut end = 0;
            let mut space = None;
            for (at, c) in rest.char_indices() {
                let w = c.width().unwrap_or(1);
                if used + w > width {
                    break;
                }
                used += w;
                end = at + c.len_utf8();
                if c == ' ' {
                    space = Some(at);
                }
            }
            // Break after the last space unless that leaves a short line.
            let cut = match space {
                Some(at) if at > width / 2 => at + 1,
                _ => end.max(rest.chars().next().map_or(1, char::len_utf8)),
            };
            out.push(rest[..cut].trim_end().to_string());
            rest = &rest[cut..];
        }
        out.push(rest.to_string());
    }
    out
}

/// Bold names, dim rules and NULLs, in colour only.
struct Style {
    color: bool,
}

impl Style {
    fn bold(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[1m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{render, render_at, sample};
    use super::super::Format;
    use super::wrap;

    #[test]
    fn rows_as_records() {
        let (cols, rows) = sample();
        let out = render(Format::Expanded, None, &cols, &rows);
        let expected = "\
─[ row 1 ]────────────
country │ DE
n       │ 3
avg     │ 12.50
─[ row 2 ]────────────
country │ say \"hi\", ok
n       │ 10
avg     │ NULL
";
        assert_eq!(out, expected);
    }

    #[test]
    fn long_values_wrap_at_the_width() {
        assert_eq!(
            wrap("the quick brown fox jumps", Some(10)),
            vec!["the quick", "brown fox", "jumps"]
        );
        assert_eq!(wrap("abcdefghij12", Some(5)), vec!["abcde", "fghij", "12"]);
        let (cols, mut rows) = sample();
        rows.truncate(1);
        rows[0][0] = crate::source::Value::Text("a b c d e f g h i j k l m n o p".into());
        let out = render_at(Format::Expanded, 24, &cols, &rows);
        assert!(
            out.contains("country │ a b c d e f g\n        │ h i j k l m n"),
            "{out}"
        );
    }

    #[test]
    fn no_rows() {
        let (cols, _) = sample();
        assert_eq!(render(Format::Expanded, None, &cols, &[]), "(no rows)\n");
    }
}
