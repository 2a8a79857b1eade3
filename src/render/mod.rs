//! Result formats (SPEC §2.1, §2.3). Every renderer is a [`RowSink`] over an
//! `io::Write`: machine formats stream each row straight out; the formats
//! for people (`auto`, `table`, `expanded`, `markdown`) keep at most
//! `max_rows` rows (they need column widths) and count the rest. They are
//! the one place that decides how a result meets a terminal: which columns
//! fit, records instead of a table, long values cut (SPEC §2.3, "Tables in
//! a terminal"). Renderers write results only — never messages.

mod delimited;
mod expanded;
pub mod fit;
mod json;
mod markdown;
#[cfg(test)]
mod snapshot_tests;
mod table;

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::source::{Column, EnoughRows, RowSink, Value};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A table, or records when one row does not fit the terminal and
    /// there are only a few rows (the default on a terminal).
    Auto,
    Table,
    /// Each row as a record: `column │ value` lines.
    Expanded,
    Csv,
    Tsv,
    Json,
    Jsonl,
    Markdown,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::Auto,
        Format::Table,
        Format::Expanded,
        Format::Csv,
        Format::Tsv,
        Format::Json,
        Format::Jsonl,
        Format::Markdown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Table => "table",
            Format::Expanded => "expanded",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Markdown => "markdown",
        }
    }

    /// `auto`, `table`, `expanded` and `markdown` are for people and show
    /// at most `max_rows`.
    pub fn is_for_people(self) -> bool {
        matches!(
            self,
            Format::Auto | Format::Table | Format::Expanded | Format::Markdown
        )
    }

    /// `auto` and `table` draw a grid (the full-screen view shows its own).
    pub fn is_grid(self) -> bool {
        matches!(self, Format::Auto | Format::Table)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let found = match lower.as_str() {
            "md" => Some(Format::Markdown),
            "ndjson" => Some(Format::Jsonl),
            other => Format::ALL.into_iter().find(|f| f.name() == other),
        };
        found.ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            format!("unknown format '{s}' (choose one of: {})", names.join(", "))
        })
    }
}

/// How a renderer presents its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Rows to print; the rest are counted. `None` prints all.
    pub max_rows: Option<usize>,
    /// Colour and bold in `table` output.
    pub color: bool,
    /// The terminal width for `table`, if output goes to a terminal.
    pub width: Option<u16>,
    /// `table`/`markdown`: how long to go on counting the rows beyond
    /// `max_rows` once the shown ones are drawn; then "… more rows" (not
    /// counted). `None` counts them all.
    pub count_budget: Option<Duration>,
    /// A pager that scrolls sideways takes what is wider than the
    /// terminal: `table` draws every column at its full width (as psql
    /// does), instead of cutting it to the terminal.
    pub full_width: bool,
    /// The rows are shown in the chat: "… N more rows" names the chat's
    /// way to show more (`/maxrows N`), not the command line's.
    pub in_chat: bool,
}

/// How long a table counts the rows it does not show (SPEC §2.1: counting
/// must not hold the shown rows back, nor the prompt for long).
pub const COUNT_BUDGET: Duration = Duration::from_secs(1);

/// A renderer: a [`RowSink`] that also knows how to close its output.
pub trait Renderer: RowSink {
    /// Writes what remains (buffered rows, closing brackets, the "… N more
    /// rows" line) and flushes.
    fn finish(&mut self) -> io::Result<()>;
    /// Rows received but not printed because of `max_rows`.
    fn hidden(&self) -> u64;
    /// When columns were left out to fit the terminal: (all, shown).
    fn columns_shown(&self) -> Option<(usize, usize)> {
        None
    }
}

/// `1234567` → `1,234,567`: a count for people (footers, limits, windows).
pub fn thousands(n: impl std::fmt::Display) -> String {
    let text = n.to_string();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A renderer for `format` writing to `out`.
pub fn renderer<'a>(
    format: Format,
    out: Box<dyn Write + 'a>,
    options: RenderOptions,
) -> Box<dyn Renderer + 'a> {
    let limit = Limit::new(options.max_rows);
    match format {
        Format::Auto | Format::Table | Format::Expanded | Format::Markdown => {
            Box::new(GridRenderer {
                out,
                format,
                options,
                grid: Grid::new(),
                limit,
                counting_since: None,
                gave_up: false,
                shown: None,
            })
        }
        Format::Csv => Box::new(delimited::CsvRenderer::new(out, limit)),
        Format::Tsv => Box::new(delimited::TsvRenderer::new(out, limit)),
        Format::Json => Box::new(json::JsonRenderer::new(out, limit, false)),
        Format::Jsonl => Box::new(json::JsonRenderer::new(out, limit, true)),
    }
}

/// Counts rows against `max_rows`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit {
    max: Option<usize>,
    seen: u64,
}

impl Limit {
    fn new(max: Option<usize>) -> Self {
        Limit { max, seen: 0 }
    }

    /// Registers one row; true if it should be printed.
    fn admit(&mut self) -> bool {
        self.seen += 1;
        match self.max {
            Some(max) => self.seen <= max as u64,
            None => true,
        }
    }

    /// Registers `n` rows; how many of them, from the first, should be
    /// printed.
    fn admit_rows(&mut self, n: usize) -> usize {
        let before = self.seen;
        self.seen += n as u64;
        match self.max {
            Some(max) => (max as u64).saturating_sub(before).min(n as u64) as usize,
            None => n,
        }
    }

    fn hidden(&self) -> u64 {
        match self.max {
            Some(max) => self.seen.saturating_sub(max as u64),
            None => 0,
        }
    }
}

/// The line shown under a truncated `table`/`markdown` result; `None`
/// hidden rows when they were not counted.
fn more_rows_line(hidden: Option<u64>, in_chat: bool) -> String {
    let how = match in_chat {
        true => "/maxrows N shows more",
        false => "use --max-rows to show more",
    };
    match hidden {
        Some(1) => format!("… 1 more row ({how})"),
        Some(n) => format!("… {n} more rows ({how})"),
        None => format!("… more rows (not counted; {how})"),
    }
}

/// The formats for people: they need every shown row (for column widths and
/// alignment) before drawing, so they keep at most `max_rows` rows and draw
/// as soon as the next row shows there are more (or the result ends); then
/// they count the rest for at most `count_budget` and stop the rows there.
struct GridRenderer<'a> {
    out: Box<dyn Write + 'a>,
    format: Format,
    options: RenderOptions,
    grid: Grid,
    limit: Limit,
    /// Set once the shown rows are drawn and the rest are being counted.
    counting_since: Option<Instant>,
    /// Counting took too long: the rest is not counted.
    gave_up: bool,
    /// Columns shown, when the table left some out.
    shown: Option<usize>,
}

/// How `format` shows `grid`: `auto` is records when a row does not fit
/// the terminal's width and there are at most [`fit::AUTO_EXPANDED_ROWS`]
/// rows, else a table.
fn layout(format: Format, grid: &Grid, options: &RenderOptions) -> Format {
    if format != Format::Auto {
        return format;
    }
    let few = (1..=fit::AUTO_EXPANDED_ROWS).contains(&grid.rows.len());
    // Records when a few rows do not fit the terminal, pager or not.
    let cut = few
        && options
            .width
            .is_some_and(|w| fit::plan(grid, usize::from(w)).shown().is_some());
    if cut {
        Format::Expanded
    } else {
        Format::Table
    }
}

impl GridRenderer<'_> {
    fn draw(&mut self) -> io::Result<()> {
        let mut text = match layout(self.format, &self.grid, &self.options) {
            Format::Markdown => markdown::draw(&self.grid),
            Format::Expanded => expanded::draw(&self.grid, &self.options),
            _ => {
                let drawn = table::draw(&self.grid, &self.options);
                self.shown = drawn.shown;
                drawn.text
            }
        };
        text.push('\n');
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }
}

impl RowSink for GridRenderer<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.grid.set_columns(columns);
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if self.limit.admit() {
            self.grid.push(row);
            return Ok(());
        }
        let Some(since) = self.counting_since else {
            // The first row beyond the shown ones: draw those now.
            self.draw()?;
            self.counting_since = Some(Instant::now());
            return Ok(());
        };
        if let Some(budget) = self.options.count_budget {
            if self.limit.seen.is_multiple_of(1024) && since.elapsed() >= budget {
                self.gave_up = true;
                return Err(EnoughRows::error());
            }
        }
        Ok(())
    }
}

impl Renderer for GridRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        if self.grid.columns.is_empty() {
            return Ok(());
        }
        if self.counting_since.is_none() {
            self.draw()?;
        }
        let hidden = self.limit.hidden();
        if hidden > 0 || self.gave_up {
            let mut text = String::new();
            if self.format == Format::Markdown {
                text.push('\n');
            }
            text.push_str(&more_rows_line(
                (!self.gave_up).then_some(hidden),
                self.options.in_chat,
            ));
            text.push('\n');
            self.out.write_all(text.as_bytes())?;
        }
        self.out.flush()
    }

    fn hidden(&self) -> u64 {
        self.limit.hidden()
    }

    fn columns_shown(&self) -> Option<(usize, usize)> {
        self.shown.map(|m| (self.grid.columns.len(), m))
    }
}

/// Buffered cells for the formats that need all shown rows before printing.
pub(crate) struct Grid {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Per column: `Some(true)` while every non-null value so far was a
    /// number, `None` before the first non-null value.
    pub numeric: Vec<Option<bool>>,
}

impl Grid {
    fn new() -> Self {
        Grid {
            columns: Vec::new(),
            rows: Vec::new(),
            numeric: Vec::new(),
        }
    }

    fn set_columns(&mut self, columns: &[Column]) {
        self.columns = columns.to_vec();
        self.numeric = vec![None; columns.len()];
    }

    fn push(&mut self, row: &[Value]) {
        let mut cells = Vec::with_capacity(row.len());
        for (i, v) in row.iter().enumerate() {
            if matches!(v, Value::Null) {
                cells.push(None);
                continue;
            }
            if let Some(n) = self.numeric.get_mut(i) {
                *n = Some(n.unwrap_or(true) && v.is_numeric());
            }
            // The formats for people show long values cut.
            cells.push(Some(fit::cut(&v.to_text(), fit::MAX_CELL)));
        }
        self.rows.push(cells);
    }

    /// Right-align a column only if it held numbers and nothing else.
    fn right_aligned(&self, i: usize) -> bool {
        self.numeric.get(i).copied().flatten().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn render(
        format: Format,
        max_rows: Option<usize>,
        columns: &[Column],
        rows: &[Vec<Value>],
    ) -> String {
        let mut out = Vec::new();
        {
            let mut r = renderer(
                format,
                Box::new(&mut out),
                RenderOptions {
                    max_rows,
                    color: false,
                    width: None,
                    count_budget: None,
                    full_width: false,
                    in_chat: false,
                },
            );
            r.columns(columns).unwrap();
            for row in rows {
                r.row(row).unwrap();
            }
            r.finish().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    /// `render` on a terminal `width` cells wide.
    pub(crate) fn render_at(
        format: Format,
        width: u16,
        columns: &[Column],
        rows: &[Vec<Value>],
    ) -> String {
        let mut out = Vec::new();
        {
            let mut r = renderer(
                format,
                Box::new(&mut out),
                RenderOptions {
                    max_rows: Some(100),
                    color: false,
                    width: Some(width),
                    count_budget: None,
                    full_width: false,
                    in_chat: false,
                },
            );
            r.columns(columns).unwrap();
            for row in rows {
                r.row(row).unwrap();
            }
            r.finish().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    pub(crate) fn sample() -> (Vec<Column>, Vec<Vec<Value>>) {
        (
            vec![
                Column::new("country", "TEXT"),
                Column::new("n", "INTEGER"),
                Column::new("avg", "DECIMAL"),
            ],
            vec![
                vec![
                    Value::Text("DE".into()),
                    Value::Int(3),
                    Value::Decimal("12.50".into()),
                ],
                vec![
                    Value::Text("say \"hi\", ok".into()),
                    Value::Int(10),
                    Value::Null,
                ],
            ],
        )
    }

    #[test]
    fn format_names_parse() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        assert_eq!("JSON".parse::<Format>(), Ok(Format::Json));
        let e = "xml".parse::<Format>().unwrap_err();
        assert_eq!(
            e,
            "unknown format 'xml' (choose one of: auto, table, expanded, csv, tsv, json, jsonl, markdown)"
        );
    }

    #[test]
    fn limits_count_hidden_rows() {
        let (cols, rows) = sample();
        let out = render(Format::Csv, Some(1), &cols, &rows);
        assert_eq!(out, "country,n,avg\nDE,3,12.50\n");
        let out = render(Format::Markdown, Some(1), &cols, &rows);
        assert!(
            out.ends_with("… 1 more row (use --max-rows to show more)\n"),
            "{out}"
        );
    }
}
