//! The result pane's chart view: the chart of the current result (from
//! `/chart`, or asked for with `c`), and whether the pane shows it instead
//! of the grid. Drawing goes through the same renderer as the chat's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::chart::term::{self, Look};
use crate::chart::Chart;

/// The chart of the result in the pane, if one was drawn.
#[derive(Debug, Default)]
pub struct ChartView {
    chart: Option<Box<Chart>>,
    /// The pane shows the chart (else the grid).
    pub showing: bool,
}

impl ChartView {
    /// A chart arrived: the pane shows it.
    pub fn set(&mut self, chart: Box<Chart>) {
        self.chart = Some(chart);
        self.showing = true;
    }

    /// A new statement: its result has no chart yet.
    pub fn clear(&mut self) {
        *self = ChartView::default();
    }

    pub fn has_chart(&self) -> bool {
        self.chart.is_some()
    }

    /// The chart shown, if the pane shows one.
    pub fn shown(&self) -> Option<&Chart> {
        self.chart.as_deref().filter(|_| self.showing)
    }

    /// The pane's top title.
    pub fn title(chart: &Chart, width: usize) -> String {
        format!(
            " {} ",
            term::fit(&format!("Chart · {}", chart.title), width.saturating_sub(4))
        )
    }

    /// The pane's bottom line: what is drawn, and the key back.
    pub fn footer(chart: &Chart, width: usize) -> String {
        let text = format!("{} · c: table", term::subtitle(chart));
        format!(" {} ", term::fit(&text, width.saturating_sub(4)))
    }

    /// Draws the chart inside the pane.
    pub fn draw(chart: &Chart, area: Rect, buf: &mut Buffer) {
        let look = Look {
            unicode: true,
            color: true,
        };
        term::draw(chart, area, buf, look);
    }
}
