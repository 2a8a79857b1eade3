//! The collector sink: results to stdout in the chosen format, notes to
//! stderr, nothing else. Used for single-shot output (and wrapped by the
//! console sink on a terminal).

use std::cell::RefCell;
use std::io::{self, BufRead, IsTerminal, Write};
use std::rc::Rc;

use crate::agent::{Event, EventSink};
use crate::render::{self, Format, RenderOptions, Renderer};

/// What the collector prints besides the result.
#[derive(Debug, Clone, Copy, Default)]
pub struct CollectOptions {
    /// `--sql-only`: print the SQL on stdout instead of a result.
    pub sql_only: bool,
    /// `--show-sql`: echo the SQL on stderr.
    pub show_sql: bool,
    /// `--yes`: confirm writes without asking.
    pub yes: bool,
}

/// The output, shared between the collector and the renderer of the
/// current result.
#[derive(Clone)]
struct Shared<'a>(Rc<RefCell<&'a mut dyn Write>>);

impl Write for Shared<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// Renders a turn's result to `out`.
pub struct Collector<'a> {
    out: Shared<'a>,
    format: Format,
    render: RenderOptions,
    options: CollectOptions,
    renderer: Option<Box<dyn Renderer + 'a>>,
    text: String,
    queried: bool,
    /// Rows hidden by `--max-rows` in the last result.
    pub hidden: u64,
}

impl<'a> Collector<'a> {
    pub fn new(
        out: &'a mut dyn Write,
        format: Format,
        render: RenderOptions,
        options: CollectOptions,
    ) -> Self {
        Collector {
            out: Shared(Rc::new(RefCell::new(out))),
            format,
            render,
            options,
            renderer: None,
            text: String::new(),
            queried: false,
            hidden: 0,
        }
    }

    fn renderer(&mut self) -> &mut Box<dyn Renderer + 'a> {
        let (format, options, out) = (self.format, self.render, self.out.clone());
        self.renderer
            .get_or_insert_with(|| render::renderer(format, Box::new(out), options))
    }
}

impl EventSink for Collector<'_> {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::ThinkingStarted
            | Event::QueryStarted { .. }
            | Event::Usage(_)
            | Event::Error(_) => {}
            Event::TextDelta(t) => self.text.push_str(&t),
            Event::SqlProposed(sql) => {
                if self.options.sql_only {
                    writeln!(self.out, "{sql}")?;
                    self.out.flush()?;
                } else if self.options.show_sql {
                    eprintln!("{sql}");
                }
            }
            Event::Columns(columns) => {
                self.queried = true;
                self.renderer().columns(&columns)?;
            }
            Event::Rows(rows) => {
                let r = self.renderer();
                for row in &rows {
                    r.row(row)?;
                }
            }
            Event::QueryFinished { rows, changed, .. } => {
                if let Some(mut r) = self.renderer.take() {
                    r.finish()?;
                    self.hidden = r.hidden();
                }
                if changed {
                    let noun = if rows == 1 { "row" } else { "rows" };
                    eprintln!("{rows} {noun} changed");
                }
            }
            Event::Retrying { why, attempt } => eprintln!("aiq: retrying ({attempt}): {why}"),
            Event::TurnDone => {
                if !self.queried && !self.options.sql_only && !self.text.trim().is_empty() {
                    writeln!(self.out, "{}", self.text.trim())?;
                }
                self.out.flush()?;
                self.text.clear();
                self.queried = false;
            }
        }
        Ok(())
    }

    fn confirm(&mut self, sql: &str) -> bool {
        confirm(sql, self.options.yes)
    }
}

/// `--yes`, or "y" typed on a terminal; never asks when stdin or stderr is
/// not a terminal.
pub fn confirm(sql: &str, yes: bool) -> bool {
    if yes {
        return true;
    }
    let stdin = io::stdin();
    if !stdin.is_terminal() || !io::stderr().is_terminal() {
        return false;
    }
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{sql}");
    let _ = write!(err, "Run this statement? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = stdin.lock().read_line(&mut answer);
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
