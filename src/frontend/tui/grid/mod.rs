//! The result pane's state and drawing: a grid with sticky column
//! headers, column widths from the content, numbers right-aligned, NULL as
//! a dim `∅`, scrolling by row and by column. Memory stays bounded: the
//! grid holds the first [`WINDOW_ROWS`] rows and counts the rest. With
//! `/format` other than `table`, the finished result is shown as that
//! format's text instead (to read or copy). Drawing is in `draw.rs`.

mod draw;

use std::time::Duration;

use unicode_width::UnicodeWidthStr;

use self::draw::fit;
use super::text::{count, duration};
use crate::render::{self, Format, RenderOptions};
use crate::source::{Column, Value};

/// Rows a result pane holds; the rest are counted, not kept.
pub const WINDOW_ROWS: usize = 10_000;
/// The widest a column gets; longer values end in `…`.
const MAX_WIDTH: usize = 40;
/// Between two columns.
const GAP: &str = " │ ";
/// Columns a text view moves per Left/Right.
const TEXT_STEP: usize = 8;

/// How a statement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    pub rows: u64,
    pub elapsed: Duration,
    pub changed: bool,
    /// The rows were counted for a moment, then the statement stopped:
    /// there are more than `rows`.
    pub more: bool,
}

impl Finished {
    /// `12 rows`, `1,234,567+ rows` when there are more.
    pub fn rows_text(&self) -> String {
        let plus = if self.more { "+" } else { "" };
        let noun = if self.rows == 1 && !self.more {
            "row"
        } else {
            "rows"
        };
        format!("{}{plus} {noun}", count(self.rows))
    }
}

/// The result of the last statement.
#[derive(Debug, Default)]
pub struct Grid {
    /// The statement, once one started.
    pub sql: Option<String>,
    columns: Vec<Column>,
    /// Per column: numbers (right-aligned)? Decided by its first non-NULL value.
    numeric: Vec<Option<bool>>,
    widths: Vec<usize>,
    rows: Vec<Vec<Value>>,
    /// Rows received, kept or not.
    total: u64,
    pub finished: Option<Finished>,
    /// Why the statement stopped before it finished (failed, cancelled).
    stopped: Option<String>,
    /// The finished result in a format other than `table`, as lines.
    text: Option<Vec<String>>,
    /// First row shown.
    top: usize,
    /// First column shown (in a text view: first character).
    left: usize,
}

/// What a cell shows: `∅` for NULL, one line of text otherwise.
pub fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => "∅".to_string(),
        v => v
            .to_text()
            .chars()
            .map(|c| match c {
                '\n' => '↵',
                c if c.is_control() => ' ',
                c => c,
            })
            .collect(),
    }
}

impl Grid {
    /// A statement started: the old result goes.
    pub fn start(&mut self, sql: &str) {
        *self = Grid {
            sql: Some(sql.to_string()),
            ..Grid::default()
        };
    }

    /// The result's columns.
    pub fn columns(&mut self, columns: Vec<Column>) {
        self.widths = columns
            .iter()
            .map(|c| c.name.width().min(MAX_WIDTH))
            .collect();
        self.numeric = vec![None; columns.len()];
        self.columns = columns;
        self.rows.clear();
        self.total = 0;
    }

    /// More rows; those past the window are only counted.
    pub fn push(&mut self, rows: Vec<Vec<Value>>) {
        self.total += rows.len() as u64;
        let room = WINDOW_ROWS.saturating_sub(self.rows.len());
        for row in rows.into_iter().take(room) {
            for (i, v) in row.iter().enumerate() {
                if let Some(w) = self.widths.get_mut(i) {
                    *w = (*w).max(cell_text(v).width().min(MAX_WIDTH));
                }
                if let Some(n @ None) = self.numeric.get_mut(i) {
                    if *v != Value::Null {
                        *n = Some(v.is_numeric());
                    }
                }
            }
            self.rows.push(row);
        }
    }

    /// The statement ended without finishing; `why` says how.
    pub fn stop(&mut self, why: &str) {
        if self.sql.is_some() && self.finished.is_none() && self.stopped.is_none() {
            self.stopped = Some(why.to_string());
        }
    }

    /// The statement finished; with a text format, the text is made now.
    pub fn finish(&mut self, finished: Finished, format: Format) {
        self.finished = Some(finished);
        self.set_format(format);
    }

    /// Shows the finished result as `format` (`table` is the grid).
    pub fn set_format(&mut self, format: Format) {
        self.text = None;
        if !format.is_grid() && self.finished.is_some() && !self.columns.is_empty() {
            self.text = Some(self.render_text(format));
            self.left = 0;
        }
    }

    fn render_text(&self, format: Format) -> Vec<String> {
        let mut out: Vec<u8> = Vec::new();
        let options = RenderOptions {
            max_rows: None,
            color: false,
            width: None,
            count_budget: None,
            full_width: false,
            in_chat: false,
        };
        {
            let mut r = render::renderer(format, Box::new(&mut out), options);
            let wrote = r
                .columns(&self.columns)
                .and_then(|_| self.rows.iter().try_for_each(|row| r.row(row)))
                .and_then(|_| r.finish());
            if let Err(e) = wrote {
                return vec![format!("cannot show the result as {format}: {e}")];
            }
        }
        String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Rows held.
    pub fn held(&self) -> usize {
        self.text.as_ref().map_or(self.rows.len(), Vec::len)
    }

    /// Scrolls by rows; `page` rows are on screen.
    pub fn scroll_rows(&mut self, delta: isize, page: usize) {
        let max = self.held().saturating_sub(page);
        self.top = self.top.saturating_add_signed(delta).min(max);
    }

    /// Scrolls by columns (a text view: by characters); `width` cells are
    /// on screen.
    pub fn scroll_cols(&mut self, delta: isize, width: usize) {
        let max = match &self.text {
            Some(lines) => {
                let widest = lines.iter().map(|l| l.width()).max().unwrap_or(0);
                widest.saturating_sub(width)
            }
            None => self.max_left(width.saturating_sub(self.gutter())),
        };
        let step = if self.text.is_some() {
            TEXT_STEP as isize
        } else {
            1
        };
        self.left = self.left.saturating_add_signed(delta * step).min(max);
    }

    /// The first column from which all the rest fit in `width` cells.
    fn max_left(&self, width: usize) -> usize {
        let mut used = 0;
        let mut first = self.widths.len();
        for (i, w) in self.widths.iter().enumerate().rev() {
            used += w + if i + 1 < self.widths.len() {
                GAP.width()
            } else {
                0
            };
            if used > width {
                break;
            }
            first = i;
        }
        first.min(self.widths.len().saturating_sub(1))
    }

    /// The row-number column: digits of the last row held, then a gap.
    fn gutter(&self) -> usize {
        self.rows.len().max(1).to_string().len() + GAP.width()
    }

    /// The pane's top title: the statement on one line, cut to `width`.
    pub fn title(&self, width: usize) -> String {
        match &self.sql {
            Some(sql) => {
                let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
                format!(
                    " {} ",
                    fit(&format!("Result · {one_line}"), width.saturating_sub(4))
                )
            }
            None => " Result ".to_string(),
        }
    }

    /// The pane's bottom line in `width` cells: counts and time first,
    /// then the position (`page` rows on screen) as room allows.
    pub fn footer(&self, page: usize, width: usize) -> String {
        let Some(f) = self.finished else {
            let text = match (&self.sql, &self.stopped, self.columns.is_empty()) {
                (None, _, _) => String::new(),
                (Some(_), Some(why), _) => format!("{why} after {} rows", count(self.total)),
                (Some(_), None, true) => "running…".into(),
                (Some(_), None, false) => format!("{} rows so far…", count(self.total)),
            };
            return fitted(vec![text], width);
        };
        if f.changed {
            return fitted(
                vec![
                    format!("{} changed", rows_noun(f.rows)),
                    duration(f.elapsed),
                ],
                width,
            );
        }
        let mut parts = vec![if f.rows > self.rows.len() as u64 || f.more {
            format!(
                "showing first {} of {}",
                count(self.rows.len() as u64),
                f.rows_text()
            )
        } else {
            rows_noun(f.rows)
        }];
        parts.push(duration(f.elapsed));
        let held = self.held();
        if held > 0 && !self.columns.is_empty() {
            let last = (self.top + page).min(held);
            let what = if self.text.is_some() { "lines" } else { "rows" };
            parts.push(format!(
                "{what} {}–{}",
                count(self.top as u64 + 1),
                count(last as u64)
            ));
            if self.text.is_none() {
                let shown = self
                    .visible_columns(width.saturating_sub(self.gutter()))
                    .len();
                parts.push(format!(
                    "cols {}–{} of {}",
                    self.left + 1,
                    self.left + shown.max(1),
                    self.columns.len()
                ));
            }
        }
        fitted(parts, width)
    }

    /// Columns from `left` that fit in `width` cells (the last may be cut).
    fn visible_columns(&self, width: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut used = 0;
        for (i, w) in self.widths.iter().enumerate().skip(self.left) {
            if used >= width {
                break;
            }
            let shown = (*w).min(width - used);
            out.push((i, shown));
            used += shown + GAP.width();
        }
        out
    }

    /// First row and first column shown (tests).
    #[cfg(test)]
    pub fn position(&self) -> (usize, usize) {
        (self.top, self.left)
    }

    /// The drawn grid as lines, for a summary in tests.
    #[cfg(test)]
    pub fn first_row(&self) -> Option<ratatui::text::Line<'static>> {
        self.rows.first().map(|r| {
            ratatui::text::Line::raw(r.iter().map(cell_text).collect::<Vec<_>>().join("|"))
        })
    }
}

/// As many of `parts` (most important first) as fit in `width` cells,
/// joined with ` · `, padded with a space each side.
fn fitted(parts: Vec<String>, width: usize) -> String {
    let mut out = String::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let joined = if out.is_empty() {
            part
        } else {
            format!("{out} · {part}")
        };
        if joined.width() + 4 > width {
            break;
        }
        out = joined;
    }
    if out.is_empty() {
        out
    } else {
        format!(" {out} ")
    }
}

/// `1 row`, `12 rows`.
fn rows_noun(n: u64) -> String {
    format!("{} {}", count(n), if n == 1 { "row" } else { "rows" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(n: usize) -> Grid {
        let mut g = Grid::default();
        g.start("SELECT *");
        g.columns(vec![
            Column::new("name", "TEXT"),
            Column::new("n", "INTEGER"),
        ]);
        g.push(
            (0..n)
                .map(|i| {
                    vec![
                        if i == 1 {
                            Value::Null
                        } else {
                            Value::Text(format!("r{i}"))
                        },
                        Value::Int(i as i64),
                    ]
                })
                .collect(),
        );
        g
    }

    #[test]
    fn widths_come_from_content_and_numbers_are_noticed() {
        let g = grid(12);
        assert_eq!(g.widths, [4, 2]);
        assert_eq!(g.numeric, [Some(false), Some(true)]);
        assert_eq!(g.first_row().unwrap().to_string(), "r0|0");
        assert_eq!(cell_text(&Value::Null), "∅");
        assert_eq!(cell_text(&Value::Text("a\nb\tc".into())), "a↵b c");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }

    #[test]
    fn the_window_is_bounded_and_says_so() {
        let mut g = grid(0);
        for _ in 0..30 {
            g.push(
                (0..1000)
                    .map(|i| vec![Value::Text("x".into()), Value::Int(i)])
                    .collect(),
            );
        }
        assert_eq!(g.rows.len(), WINDOW_ROWS);
        assert_eq!(g.total, 30_000);
        g.finish(
            Finished {
                rows: 30_000,
                elapsed: Duration::from_millis(1500),
                changed: false,
                more: false,
            },
            Format::Table,
        );
        assert_eq!(
            g.footer(10, 80),
            " showing first 10,000 of 30,000 rows · 1.5 s · rows 1–10 · cols 1–2 of 2 "
        );
        assert_eq!(
            g.footer(10, 50),
            " showing first 10,000 of 30,000 rows · 1.5 s "
        );
    }

    #[test]
    fn scrolling_stops_at_the_edges() {
        let mut g = grid(100);
        g.scroll_rows(95, 10);
        assert_eq!(g.top, 90);
        g.scroll_rows(-200, 10);
        assert_eq!(g.top, 0);
        // Both columns fit: nothing to scroll sideways.
        g.scroll_cols(1, 80);
        assert_eq!(g.left, 0);
        // Five cells wide: only the last column fits alone.
        g.scroll_cols(5, 5 + g.gutter());
        assert_eq!(g.left, 1);
    }

    #[test]
    fn other_formats_show_as_text() {
        let mut g = grid(2);
        g.finish(
            Finished {
                rows: 2,
                elapsed: Duration::from_millis(3),
                changed: false,
                more: false,
            },
            Format::Csv,
        );
        assert_eq!(
            g.text.as_deref(),
            Some(&["name,n".to_string(), "r0,0".into(), ",1".into()][..])
        );
        g.set_format(Format::Table);
        assert!(g.text.is_none());
    }
}
