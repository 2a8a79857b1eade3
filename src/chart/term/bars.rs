//! Horizontal bars in a buffer: one row per bar (per series), the label on
//! the left, the value on the right, a zero axis that leaves room for
//! negative values, eighth blocks for a smooth end (Unicode), and an
//! "other" bar that does not set the scale (cut off with `»`). Histogram
//! bins are bars labelled with their range.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthStr;

use super::{fit, quiet, series_style, Look};
use crate::chart::axis::{amount, compact};
use crate::chart::model::{scaled, Bin, Body, Chart, Series};

/// Fills of series 1, 2, … (Unicode, ASCII).
const FILLS: [(char, char); 6] = [
    ('█', '#'),
    ('▓', '='),
    ('▒', '*'),
    ('░', '+'),
    ('▚', 'o'),
    ('▞', '%'),
];
/// A cell filled by 1/8 … 7/8 from the left.
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// Rows the bars of `chart` take: one per bar and series, and a legend
/// line for several series.
pub fn rows(chart: &Chart) -> u16 {
    let n = match &chart.body {
        Body::Bars { labels, series, .. } => {
            labels.len() * series.len() + usize::from(series.len() > 1)
        }
        Body::Bins { bins } => bins.len(),
        Body::Points { .. } => 0,
    };
    n.min(u16::MAX as usize) as u16
}

/// Bars of categories; with `other`, the last one ("other") does not set
/// the scale and is cut off (`»`) when longer.
pub fn draw_bars(
    labels: &[String],
    series: &[Series],
    other: bool,
    area: Rect,
    buf: &mut Buffer,
    look: Look,
) {
    Bars {
        labels,
        series,
        other,
        area,
        look,
    }
    .draw(buf);
}

/// Histogram bins as bars labelled `lo – hi`.
pub fn draw_bins(bins: &[Bin], area: Rect, buf: &mut Buffer, look: Look) {
    let dash = if look.unicode { "–" } else { "-" };
    let labels: Vec<String> = bins
        .iter()
        .map(|b| format!("{} {dash} {}", compact(b.lo), compact(b.hi)))
        .collect();
    let series = [Series {
        name: "rows".into(),
        values: bins.iter().map(|b| b.count as f64).collect(),
    }];
    draw_bars(&labels, &series, false, area, buf, look);
}

struct Bars<'a> {
    labels: &'a [String],
    series: &'a [Series],
    other: bool,
    area: Rect,
    look: Look,
}

/// Where the parts of a row go.
struct Columns {
    label: u16,
    /// First cell of the bar area, and its width.
    bars: u16,
    bars_width: u16,
    /// The zero axis, as an offset into the bar area.
    zero: u16,
    /// Cells per unit of value.
    scale: f64,
    value: u16,
    value_width: u16,
}

impl Bars<'_> {
    fn draw(&self, buf: &mut Buffer) {
        let a = self.area;
        let legend = usize::from(self.series.len() > 1);
        let wanted = self.labels.len() * self.series.len();
        let room = (a.height as usize).saturating_sub(legend);
        // Too many rows for the area: the last one says how many are not shown.
        let (shown, cut) = if wanted > room {
            (room.saturating_sub(1) / self.series.len(), true)
        } else {
            (self.labels.len(), false)
        };
        let cols = self.columns(shown);
        let mut y = a.y;
        for (i, label) in self.labels.iter().take(shown).enumerate() {
            for (s, series) in self.series.iter().enumerate() {
                if s == 0 {
                    let text = fit(label, cols.label as usize);
                    buf.set_string(a.x, y, text, Style::new());
                }
                self.row(buf, &cols, y, s, series.values[i]);
                y += 1;
            }
        }
        if cut {
            let more = self.labels.len() - shown;
            let text = format!("… {more} more (make the window taller)");
            buf.set_stringn(a.x, y, text, a.width as usize, quiet(self.look));
            y += 1;
        }
        if legend == 1 {
            self.legend(buf, y);
        }
    }

    /// Widths from the labels and values shown, the zero axis from the range.
    fn columns(&self, shown: usize) -> Columns {
        let a = self.area;
        let label_width = self
            .labels
            .iter()
            .take(shown)
            .map(|l| l.width())
            .max()
            .unwrap_or(0)
            .min(a.width as usize / 3)
            .max(1) as u16;
        let values = || self.series.iter().flat_map(|s| s.values.iter().take(shown));
        let value_width = values().map(|v| amount(*v).width()).max().unwrap_or(1) as u16;
        // "other" is drawn (cut off if need be) but does not set the scale.
        let scaled = || {
            self.series
                .iter()
                .flat_map(|s| scaled(&s.values, self.other).iter().take(shown))
        };
        let bars_width = a.width.saturating_sub(label_width + value_width + 2).max(2);
        let lo = scaled().fold(0.0f64, |m, v| m.min(*v));
        let hi = scaled().fold(0.0f64, |m, v| m.max(*v));
        let span = if hi > lo { hi - lo } else { 1.0 };
        let cells = f64::from(bars_width - 1);
        let zero = ((-lo / span) * cells).round() as u16;
        Columns {
            label: label_width,
            bars: a.x + label_width + 1,
            bars_width,
            zero: zero.min(bars_width - 1),
            scale: cells / span,
            value: a.x + a.width - value_width,
            value_width,
        }
    }

    /// The axis, the bar and the value of series `s` on row `y`.
    fn row(&self, buf: &mut Buffer, c: &Columns, y: u16, s: usize, value: f64) {
        let look = self.look;
        let axis = if look.unicode { "│" } else { "|" };
        let zero = c.bars + c.zero;
        buf.set_string(zero, y, axis, quiet(look));
        let style = series_style(s, look);
        let (full, ascii) = FILLS[s % FILLS.len()];
        let fill = if look.unicode { full } else { ascii };
        let len = value.abs() * c.scale;
        let whole = len.floor() as u16;
        let part = len - len.floor();
        let cut = if look.unicode { '»' } else { '>' };
        if value >= 0.0 {
            let room = c.bars_width - 1 - c.zero;
            if whole > room && room > 0 {
                let mut bar: String = std::iter::repeat_n(fill, room as usize - 1).collect();
                bar.push(cut);
                buf.set_string(zero + 1, y, bar, style);
                return self.value(buf, c, y, value);
            }
            let mut bar: String = std::iter::repeat_n(fill, whole as usize).collect();
            // A smooth end: eighths for the first series in Unicode.
            let eighth = (part * 8.0).round() as usize;
            if whole < room && look.unicode && s == 0 && eighth > 0 {
                bar.push(if eighth >= 8 {
                    full
                } else {
                    EIGHTHS[eighth - 1]
                });
            } else if whole < room && part >= 0.5 {
                bar.push(fill);
            } else if bar.is_empty() && value > 0.0 && room > 0 {
                // Not nothing: a sliver for a value too small for a cell.
                bar.push(if look.unicode { EIGHTHS[0] } else { '.' });
            }
            buf.set_string(zero + 1, y, bar, style);
        } else if whole > c.zero && c.zero > 0 {
            let mut bar = String::from(if look.unicode { '«' } else { '<' });
            bar.extend(std::iter::repeat_n(fill, c.zero as usize - 1));
            buf.set_string(zero - c.zero, y, bar, style);
        } else {
            let mut whole = whole.min(c.zero);
            if whole < c.zero && part >= 0.5 {
                whole += 1;
            }
            let bar: String = std::iter::repeat_n(fill, whole as usize).collect();
            buf.set_string(zero - whole, y, bar, style);
        }
        self.value(buf, c, y, value);
    }

    /// The value, right-aligned at the end of row `y`.
    fn value(&self, buf: &mut Buffer, c: &Columns, y: u16, value: f64) {
        let text = amount(value);
        let x = c.value + c.value_width - text.width() as u16;
        buf.set_string(x, y, text, Style::new());
    }

    /// `█ revenue  ▓ cost` under the bars.
    fn legend(&self, buf: &mut Buffer, y: u16) {
        if y >= self.area.bottom() {
            return;
        }
        let mut x = self.area.x;
        for (s, series) in self.series.iter().enumerate() {
            let (full, ascii) = FILLS[s % FILLS.len()];
            let mark = if self.look.unicode { full } else { ascii };
            let text = format!("{mark}{mark} {}  ", series.name);
            let (next, _) = buf.set_stringn(
                x,
                y,
                &text,
                self.area.right().saturating_sub(x) as usize,
                series_style(s, self.look),
            );
            x = next;
        }
    }
}
