//! Text panes that follow their end: lines are word-wrapped to the pane's
//! width at drawing time, and the scroll position counts rows back from the
//! bottom, so new text shows at once unless the reader has scrolled up.
//! Only the rows on screen (plus the scroll distance) are wrapped, so a
//! long conversation costs nothing while it follows the end.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The code bar: repeated on every row of a wrapped code line.
pub const CODE_BAR: &str = "▌ ";

/// A line's mark (`› `, `✓ `, the code bar, …): a first span two cells
/// wide ending in a space, followed by more. Wrapped rows hang under it.
fn mark<'a>(line: &'a Line<'_>) -> Option<&'a Span<'a>> {
    let first = line.spans.first()?;
    (line.spans.len() > 1 && first.content.width() == 2 && first.content.ends_with(' '))
        .then_some(first)
}

/// Wraps `line` into rows of at most `width` cells, breaking after a space
/// where one is near, mid-word otherwise; rows after the first hang under
/// the line's mark. Tabs become four spaces.
pub fn wrap(line: &Line<'_>, width: usize) -> Vec<Line<'static>> {
    let hang = mark(line).filter(|_| width > 8).map(|m| {
        let style = line.style.patch(m.style);
        if m.content == CODE_BAR {
            Span::styled(CODE_BAR, style)
        } else {
            Span::raw("  ")
        }
    });
    let mut rows = wrap_cells(line, width, hang.is_some());
    if let Some(hang) = hang {
        for row in rows.iter_mut().skip(1) {
            row.spans.insert(0, hang.clone());
        }
    }
    rows
}

/// [`wrap`] without the hanging mark: rows after the first are two cells
/// narrower when `hang`.
fn wrap_cells(line: &Line<'_>, width: usize, hang: bool) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut cells: Vec<(char, Style, usize)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            match c {
                '\t' => cells.extend(std::iter::repeat_n((' ', style, 1), 4)),
                c if c.is_control() => {}
                c => cells.push((c, style, c.width().unwrap_or(0))),
            }
        }
    }
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let width = if hang && !rows.is_empty() {
            width - 2
        } else {
            width
        };
        let mut used = 0;
        let mut end = start;
        let mut last_space = None;
        while end < cells.len() && used + cells[end].2 <= width {
            used += cells[end].2;
            if cells[end].0 == ' ' {
                last_space = Some(end);
            }
            end += 1;
        }
        let mut next = end;
        if end == start {
            end += 1; // a character wider than the pane: show it anyway
            next = end;
        } else if end < cells.len() && cells[end].0 == ' ' {
            next = end + 1; // the break falls on a space: drop it
        } else if end < cells.len() {
            if let Some(space) = last_space.filter(|s| *s > start) {
                end = space + 1;
                next = end;
            }
        }
        rows.push(to_line(&cells[start..end]));
        start = next;
    }
    if rows.is_empty() {
        rows.push(Line::default());
    }
    rows
}

/// Cells back into a line, one span per run of one style.
fn to_line(cells: &[(char, Style, usize)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for (c, s, _) in cells {
        if style.is_some_and(|st| st != *s) {
            spans.push(Span::styled(
                std::mem::take(&mut text),
                style.unwrap_or_default(),
            ));
        }
        style = Some(*s);
        text.push(*c);
    }
    if !text.is_empty() {
        spans.push(Span::styled(text, style.unwrap_or_default()));
    }
    Line::from(spans)
}

/// The rows to show: the last `height` rows of the wrapped `lines` (given
/// newest first), `back` rows up from the end, clamped so the top never
/// passes the first row. Returns the rows and the scroll distance used.
pub fn visible_rows<'a>(
    lines_newest_first: impl Iterator<Item = Line<'a>>,
    width: u16,
    height: u16,
    back: usize,
) -> (Vec<Line<'static>>, usize) {
    let want = back.saturating_add(height as usize);
    let mut rows: Vec<Line<'static>> = Vec::new();
    for line in lines_newest_first {
        let mut wrapped = wrap(&line, width as usize);
        wrapped.reverse();
        rows.extend(wrapped);
        if rows.len() >= want {
            break;
        }
    }
    let back = back.min(rows.len().saturating_sub(height as usize));
    let shown: Vec<Line<'static>> = rows
        .into_iter()
        .skip(back)
        .take(height as usize)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (shown, back)
}

/// Total wrapped rows of `lines` at `width`.
pub fn row_count<'a>(lines: impl Iterator<Item = Line<'a>>, width: u16) -> usize {
    lines.map(|l| wrap(&l, width as usize).len()).sum()
}

/// Draws `rows` from the top of `area`.
pub fn draw_rows(rows: &[Line<'_>], area: Rect, buf: &mut Buffer) {
    for (i, row) in rows.iter().enumerate().take(area.height as usize) {
        buf.set_line(area.x, area.y + i as u16, row, area.width);
    }
}

/// Where a pane that follows its end is: rows back from the bottom.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    pub back: usize,
}

impl Scroll {
    /// Moves up (`delta` > 0) or down, never past the top (`total` rows in
    /// a pane `height` rows high) or the bottom.
    pub fn by(&mut self, delta: isize, total: usize, height: usize) {
        let max = total.saturating_sub(height);
        self.back = self.back.saturating_add_signed(delta).min(max);
    }

    pub fn follow(&mut self) {
        self.back = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Line<'_>]) -> Vec<String> {
        rows.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_at_spaces_and_mid_word_when_it_must() {
        let line = Line::raw("the quick brown fox");
        assert_eq!(texts(&wrap(&line, 10)), ["the quick ", "brown fox"]);
        assert_eq!(
            texts(&wrap(&Line::raw("abcdefghij"), 4)),
            ["abcd", "efgh", "ij"]
        );
        assert_eq!(texts(&wrap(&Line::raw(""), 4)), [""]);
        assert_eq!(texts(&wrap(&Line::raw("a\tb"), 80)), ["a    b"]);
        // Wide characters count two cells.
        assert_eq!(
            texts(&wrap(&Line::raw("日本語です"), 4)),
            ["日本", "語で", "す"]
        );
    }

    #[test]
    fn wrapped_rows_hang_under_the_mark() {
        let line = Line::from(vec![Span::raw("✓ "), Span::raw("twelve rows in four ms")]);
        assert_eq!(
            texts(&wrap(&line, 12)),
            ["✓ twelve ", "  rows in ", "  four ms"]
        );
        let code = Line::from(vec![Span::raw(CODE_BAR), Span::raw("SELECT a, b FROM t")]);
        assert_eq!(texts(&wrap(&code, 12)), ["▌ SELECT a, ", "▌ b FROM t"]);
    }

    #[test]
    fn styles_survive_wrapping() {
        let red = Style::new().fg(ratatui::style::Color::Red);
        let line = Line::from(vec![Span::raw("ab "), Span::styled("cd ef", red)]);
        let rows = wrap(&line, 5);
        assert_eq!(texts(&rows), ["ab cd", "ef"]);
        assert_eq!(rows[0].spans[1].style, red);
        assert_eq!(rows[1].spans[0].style, red);
    }

    #[test]
    fn shows_the_end_and_scrolls_back_within_bounds() {
        let lines: Vec<Line<'static>> = (0..10).map(|i| Line::raw(format!("line {i}"))).collect();
        let newest_first = || lines.iter().rev().cloned();
        let (rows, back) = visible_rows(newest_first(), 20, 3, 0);
        assert_eq!(
            (texts(&rows), back),
            (vec!["line 7".into(), "line 8".into(), "line 9".into()], 0)
        );
        let (rows, _) = visible_rows(newest_first(), 20, 3, 2);
        assert_eq!(texts(&rows), ["line 5", "line 6", "line 7"]);
        let (rows, back) = visible_rows(newest_first(), 20, 3, 99);
        assert_eq!((texts(&rows)[0].as_str(), back), ("line 0", 7));
        assert_eq!(row_count(newest_first(), 20), 10);
        let mut s = Scroll::default();
        s.by(5, 10, 3);
        assert_eq!(s.back, 5);
        s.by(50, 10, 3);
        assert_eq!(s.back, 7);
        s.by(-100, 10, 3);
        assert_eq!(s.back, 0);
    }
}
