//! Drawing the result pane: row numbers, the sticky header, a rule, the
//! rows on screen, `│` between columns (`┼` on the rule); or the text view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::{cell_text, rows_noun, Grid, GAP};
use crate::source::Value;

/// The columns on screen: (index, width shown) and where each starts.
struct Shown {
    cols: Vec<(usize, usize)>,
    starts: Vec<u16>,
    area: Rect,
}

impl Shown {
    /// A separator before each column shown.
    fn bars(&self, buf: &mut Buffer, y: u16, symbol: &str) {
        for x in &self.starts {
            if *x >= self.area.x + 2 {
                buf.set_stringn(*x - 2, y, symbol, 1, dim());
            }
        }
    }
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

impl Grid {
    /// Draws the grid (or the text view) into `area`.
    pub fn draw(&self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        if let Some(lines) = &self.text {
            for (y, line) in lines
                .iter()
                .skip(self.top)
                .take(area.height as usize)
                .enumerate()
            {
                let shown: String = skip_width(line, self.left);
                buf.set_stringn(
                    area.x,
                    area.y + y as u16,
                    shown,
                    area.width as usize,
                    Style::new(),
                );
            }
            return;
        }
        if self.columns.is_empty() {
            let note = match (&self.sql, self.finished) {
                (None, _) => "No result yet: ask a question, or run /sql SELECT …".to_string(),
                (Some(_), Some(f)) if f.changed => format!("{} changed", rows_noun(f.rows)),
                (Some(_), Some(_)) => "The statement returned no columns.".to_string(),
                (Some(_), None) => match &self.stopped {
                    Some(why) => format!("The statement {why}."),
                    None => "running…".to_string(),
                },
            };
            buf.set_stringn(
                area.x + 1,
                area.y,
                note,
                area.width.saturating_sub(1) as usize,
                dim(),
            );
            return;
        }
        self.draw_grid(area, buf);
    }

    /// The grid proper: row numbers, sticky header, a rule, the rows on
    /// screen; a `│` between columns (`┼` on the rule).
    fn draw_grid(&self, area: Rect, buf: &mut Buffer) {
        let gutter = self.gutter();
        let cols = self.visible_columns((area.width as usize).saturating_sub(gutter));
        // Where each column starts; its separator sits two cells before.
        let mut starts = Vec::with_capacity(cols.len());
        let mut x = area.x + gutter as u16;
        for (_, w) in &cols {
            starts.push(x);
            x += (*w + GAP.width()) as u16;
        }
        let shown = Shown { cols, starts, area };
        let header = Style::new().add_modifier(Modifier::BOLD);
        for ((i, w), x) in shown.cols.iter().zip(&shown.starts) {
            let right = self.numeric[*i] == Some(true);
            put(buf, *x, area.y, &self.columns[*i].name, *w, right, header);
        }
        shown.bars(buf, area.y, "│");
        if area.height < 2 {
            return;
        }
        let rule: String = "─".repeat(area.width as usize);
        buf.set_stringn(area.x, area.y + 1, rule, area.width as usize, dim());
        shown.bars(buf, area.y + 1, "┼");
        self.draw_rows(&shown, buf);
    }

    /// The rows under the header, each with its number.
    fn draw_rows(&self, shown: &Shown, buf: &mut Buffer) {
        let area = shown.area;
        let gutter = self.gutter();
        let page = area.height.saturating_sub(2) as usize;
        if self.rows.is_empty() {
            let x0 = area.x + gutter as u16;
            let room = (area.width as usize).saturating_sub(gutter);
            if page > 0 {
                buf.set_stringn(x0, area.y + 2, "(no rows)", room, dim());
            }
            return;
        }
        let rows = self.rows.iter().enumerate().skip(self.top).take(page);
        for (dy, (n, row)) in rows.enumerate() {
            let y = area.y + 2 + dy as u16;
            let number = format!("{:>w$}", n + 1, w = gutter - GAP.width());
            buf.set_stringn(area.x, y, number, gutter, dim());
            for ((i, w), x) in shown.cols.iter().zip(&shown.starts) {
                let v = row.get(*i).unwrap_or(&Value::Null);
                let style = if *v == Value::Null {
                    dim()
                } else {
                    Style::new()
                };
                let right = self.numeric[*i] == Some(true);
                put(buf, *x, y, &cell_text(v), *w, right, style);
            }
            shown.bars(buf, y, "│");
        }
    }
}

/// `text` in `width` cells, right-aligned when `right`, cut with `…`.
fn put(buf: &mut Buffer, x: u16, y: u16, text: &str, width: usize, right: bool, style: Style) {
    let shown = fit(text, width);
    let pad = width.saturating_sub(shown.width());
    let x = if right { x + pad as u16 } else { x };
    buf.set_stringn(x, y, shown, width, style);
}

/// `text` cut to `width` cells, ending in `…` when cut.
pub(super) fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// `line` without its first `cells` cells.
fn skip_width(line: &str, cells: usize) -> String {
    let mut used = 0;
    line.chars()
        .skip_while(|c| {
            let skip = used < cells;
            used += c.width().unwrap_or(0);
            skip
        })
        .collect()
}
