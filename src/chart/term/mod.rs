//! The terminal drawing of a [`Chart`], into a ratatui [`Buffer`] — so
//! the chat and single-shot (as text, `text`) and the full-screen view
//! (into its result pane, `draw`) share one renderer.
//!
//! Lines and scatter go through ratatui's `Chart` widget (braille dots,
//! axes with round ticks and readable labels); bars and histogram bins are
//! horizontal bars, one row each, so every label is readable at any width.
//! [`Look`] says whether Unicode and colour may be used; the ASCII look
//! draws with `#`, `*`, `|` and `-` only.

mod bars;
mod plot;
mod text;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::model::{Body, Chart};
use super::spec::Kind;

pub use text::to_text;

/// How a chart may look on this terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Block, braille and box-drawing characters (else ASCII only).
    pub unicode: bool,
    /// Colours for the series (else one plain colour).
    pub color: bool,
}

/// Rows a line or scatter chart takes in text output (axes included).
pub const PLOT_ROWS: u16 = 16;
/// Narrower or lower than this, a chart is not drawn (a line says so).
pub const MIN_WIDTH: u16 = 24;
pub const MIN_HEIGHT: u16 = 3;

/// The colours of series 1, 2, … on a terminal.
const COLORS: [Color; 6] = [
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::Red,
    Color::Blue,
];

/// The style of series `i`.
fn series_style(i: usize, look: Look) -> Style {
    if look.color {
        Style::new().fg(COLORS[i % COLORS.len()])
    } else {
        Style::new()
    }
}

/// The style of notes and other quiet text.
fn quiet(look: Look) -> Style {
    if look.color {
        Style::new().add_modifier(Modifier::DIM)
    } else {
        Style::new()
    }
}

/// Rows of one series' panel when the series' scales differ (its name
/// line included).
pub const PANEL_ROWS: u16 = 9;

/// What kind of chart, of what: `line · revenue by month` (and, when the
/// series' scales differ, that each has a panel of its own).
pub fn subtitle(chart: &Chart) -> String {
    let base = base_subtitle(chart);
    match chart.small_series() {
        Some(_) => format!("{base} · one panel per series: their scales differ"),
        None => base,
    }
}

/// [`subtitle`] without what the terminal does about differing scales.
pub fn base_subtitle(chart: &Chart) -> String {
    match chart.kind {
        Kind::Hist => format!("hist · rows per {} bin", chart.x.name),
        kind => format!("{kind} · {} by {}", chart.y_name, chart.x.name),
    }
}

/// Rows the body of `chart` needs at `width` (text output).
pub fn body_rows(chart: &Chart) -> u16 {
    match &chart.body {
        Body::Points { series } if chart.small_series().is_some() => {
            PANEL_ROWS * series.len() as u16
        }
        Body::Points { series } => PLOT_ROWS + u16::from(series.len() > 1),
        Body::Bars { .. } | Body::Bins { .. } => bars::rows(chart),
    }
}

/// Draws the chart's body and notes into `area` of `buf` (the title is the
/// caller's: a pane's border, or the first line of text output).
pub fn draw(chart: &Chart, area: Rect, buf: &mut Buffer, look: Look) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let line = "(too small for a chart: make the window larger)";
        buf.set_stringn(area.x, area.y, line, area.width as usize, quiet(look));
        return;
    }
    let notes = note_lines(chart, area.width as usize);
    // Notes give way to the chart when room is short.
    let room = area.height.saturating_sub(MIN_HEIGHT) as usize;
    let shown = notes.len().min(room);
    let body = Rect {
        height: area.height - shown as u16,
        ..area
    };
    match &chart.body {
        Body::Points { series } if chart.small_series().is_some() => {
            panels(chart, series.len(), body, buf, look)
        }
        Body::Points { series } => plot::draw(chart, series, body, buf, look),
        Body::Bars {
            labels,
            series,
            other,
        } => bars::draw_bars(labels, series, *other, body, buf, look),
        Body::Bins { bins } => bars::draw_bins(bins, body, buf, look),
    }
    for (i, note) in notes.iter().take(shown).enumerate() {
        let y = body.bottom() + i as u16;
        Line::styled(note.clone(), quiet(look)).render(Rect::new(area.x, y, area.width, 1), buf);
    }
}

/// One panel per series, each with its own y axis and its name above it:
/// for series whose scales differ too much to share one.
fn panels(chart: &Chart, count: usize, area: Rect, buf: &mut Buffer, look: Look) {
    let each = area.height / count.max(1) as u16;
    for i in 0..count {
        let top = area.y + each * i as u16;
        let one = chart.only_series(i);
        buf.set_stringn(
            area.x,
            top,
            format!("{} {}", plot::mark(i, look), one.y_name),
            area.width as usize,
            series_style(i, look),
        );
        if each > MIN_HEIGHT {
            let Body::Points { series } = &one.body else {
                continue;
            };
            let plot = Rect::new(area.x, top + 1, area.width, each - 1);
            plot::draw_styled(&one, series, plot, buf, look, i);
        }
    }
}

/// The notes, wrapped to `width` (each starts with `note:`, its next
/// lines indented).
pub fn note_lines(chart: &Chart, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for note in &chart.notes {
        let mut line = String::from("note:");
        for word in note.split_whitespace() {
            if line.width() + 1 + word.width() > width && line.trim().len() > 5 {
                lines.push(fit(&line, width));
                line = String::from("     ");
            }
            line.push(' ');
            line.push_str(word);
        }
        lines.push(fit(&line, width));
    }
    lines
}

/// `text` cut to `width` cells, ending in `…` when cut.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + c.to_string().width() + 1 > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod snapshot_tests;
