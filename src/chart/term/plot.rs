//! Lines and scatter through ratatui's `Chart` widget: braille points
//! (one marker per series without colour, ASCII markers in the ASCII
//! look), round y ticks, x labels at both ends and the middle, and for
//! several series a legend line under the chart.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{Axis, Chart as ChartWidget, Dataset, GraphType, Widget};

use super::{quiet, series_style, Look};
use crate::chart::axis::{widen, Ticks};
use crate::chart::model::{Chart, PointSeries, Scale};
use crate::chart::spec::Kind;

/// Markers of series 1, 2, … without colour (Unicode) and in ASCII.
const MARKERS: [Marker; 6] = [
    Marker::Braille,
    Marker::Dot,
    Marker::Custom('+'),
    Marker::Custom('x'),
    Marker::Custom('o'),
    Marker::Custom('#'),
];
const ASCII_MARKERS: [char; 6] = ['*', '+', 'o', 'x', '#', '%'];

/// Draws the points of `chart` into `area`.
pub fn draw(chart: &Chart, series: &[PointSeries], area: Rect, buf: &mut Buffer, look: Look) {
    draw_styled(chart, series, area, buf, look, 0)
}

/// [`draw`], the first series styled as series `first` (a panel of one
/// series keeps its colour and marker).
pub fn draw_styled(
    chart: &Chart,
    series: &[PointSeries],
    area: Rect,
    buf: &mut Buffer,
    look: Look,
    first: usize,
) {
    let (x_lo, x_hi) = chart.x_range().unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = match chart.x.scale {
        // One point in time: a day either side, not 10% of the epoch.
        Scale::Time(_) if x_hi <= x_lo => (x_lo - 86_400.0, x_hi + 86_400.0),
        _ => widen(x_lo, x_hi),
    };
    let (y_lo, y_hi) = chart.y_range().unwrap_or((0.0, 1.0));
    let target = (area.height as usize / 4).clamp(1, 4);
    let ticks = Ticks::new(y_lo, y_hi, target);
    let y_labels: Vec<Line> = ticks
        .values()
        .into_iter()
        .map(|v| Line::from(crate::chart::axis::compact(v)))
        .collect();
    let x_labels = x_labels(&chart.x.scale, x_lo, x_hi);
    let graph = if chart.kind == Kind::Line {
        GraphType::Line
    } else {
        GraphType::Scatter
    };
    // Several series: a legend line under the chart, not over the data.
    let several = series.len() > 1;
    let plot = Rect {
        height: area.height - u16::from(several && area.height > 4),
        ..area
    };
    let datasets: Vec<Dataset> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Dataset::default()
                .marker(marker(first + i, look))
                .graph_type(graph)
                .style(series_style(first + i, look))
                .data(&s.points)
        })
        .collect();
    let axis_style = quiet(look);
    ChartWidget::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([x_lo, x_hi])
                .labels(x_labels)
                .style(axis_style),
        )
        .y_axis(
            Axis::default()
                .bounds([ticks.lo, ticks.hi])
                .labels(y_labels)
                .style(axis_style),
        )
        .legend_position(None)
        .render(plot, buf);
    if plot.height < area.height {
        legend(
            series,
            Rect {
                y: plot.bottom(),
                height: 1,
                ..area
            },
            buf,
            look,
        );
    }
}

/// `⣿ revenue  • cost`: each series' marker (and colour) and name.
fn legend(series: &[PointSeries], area: Rect, buf: &mut Buffer, look: Look) {
    let mut x = area.x;
    for (i, s) in series.iter().enumerate() {
        let text = format!("{} {}  ", mark(i, look), s.name);
        let room = area.right().saturating_sub(x) as usize;
        (x, _) = buf.set_stringn(x, area.y, text, room, series_style(i, look));
    }
}

fn marker(i: usize, look: Look) -> Marker {
    if !look.unicode {
        return Marker::Custom(ASCII_MARKERS[i % ASCII_MARKERS.len()]);
    }
    if look.color {
        Marker::Braille
    } else {
        MARKERS[i % MARKERS.len()]
    }
}

/// The character series `i` is drawn with.
pub(super) fn mark(i: usize, look: Look) -> char {
    match marker(i, look) {
        Marker::Custom(c) => c,
        Marker::Dot => '•',
        _ => '⣿',
    }
}

/// Labels at the start, the middle and the end of the x axis (ratatui
/// places three evenly); a label axis gets its first, middle and last name.
fn x_labels(scale: &Scale, lo: f64, hi: f64) -> Vec<Line<'static>> {
    let span = hi - lo;
    let mid = (lo + hi) / 2.0;
    let label = |v: f64| scale.tick(v, span);
    let mut out = vec![label(lo)];
    let middle = label(mid);
    if !middle.is_empty() {
        out.push(middle);
    }
    out.push(label(hi));
    out.into_iter().map(Line::from).collect()
}
