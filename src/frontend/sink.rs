//! The collector sink: results (and charts) to stdout in the chosen
//! format, notes to stderr, nothing else. Single-shot and `-e` output (and, wrapped by the
//! console sink, the chat's). It never writes the model's streamed text to
//! stdout: only a finished prose answer, when asked to.

use std::cell::RefCell;
use std::io::{self, BufRead, IsTerminal, Write};
use std::rc::Rc;
use std::sync::Arc;

use super::pager::{self, Paging, Screen};
use super::progress::Counter;
use super::stderr_line;
use crate::agent::{AgentError, ConfirmKind, Confirmation, Event, EventSink, Outcome};
use crate::chart::term::{to_text, Look};
use crate::render::{self, Format, RenderOptions, Renderer};
use crate::session::saved_lines;

/// What the collector prints besides the result.
#[derive(Debug, Clone, Copy, Default)]
pub struct CollectOptions {
    /// `--sql-only`: print the code on stdout instead of a result.
    pub sql_only: bool,
    /// `--show-sql`: echo the code on stderr.
    pub show_sql: bool,
    /// `--yes`: confirm writes without asking.
    pub yes: bool,
    /// Print a prose answer on stdout (off when the console already showed
    /// it on this terminal, or when a machine format was asked for and the
    /// front end reports prose as an error).
    pub prose: bool,
    /// `-v`: rows and time of each statement on stderr.
    pub verbose: u8,
    /// `--chart`: the result is drawn as a chart after the turn, so its
    /// rows are read whole but not printed.
    pub charting: bool,
    /// Charts in ASCII only (a terminal that cannot show block or braille
    /// characters).
    pub ascii_charts: bool,
    /// Results for people taller or wider than this screen go through the
    /// pager (stdout is a terminal and paging is on).
    pub pager: Option<Screen>,
}

/// The output, shared between the collector and the renderer of the
/// current result; counts the bytes written (for the export counter).
#[derive(Clone)]
struct Shared<'a>(Rc<RefCell<&'a mut dyn Write>>, Arc<Counter>);

impl Write for Shared<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.borrow_mut().write(buf)?;
        self.1.add_bytes(n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// What the last result came to, for a footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Rows read (for a write: rows changed).
    pub rows: u64,
    /// Of those, not shown (`--max-rows`).
    pub hidden: u64,
    /// There were more rows than read (not counted).
    pub more: bool,
    pub changed: bool,
    pub elapsed: std::time::Duration,
    /// When columns were left out to fit the terminal: (all, shown).
    pub columns: Option<(usize, usize)>,
}

/// Renders a conversation's results to `out`.
pub struct Collector<'a> {
    out: Shared<'a>,
    format: Format,
    render: RenderOptions,
    options: CollectOptions,
    renderer: Option<Box<dyn Renderer + 'a>>,
    counter: Arc<Counter>,
    last: Option<Finished>,
    /// Rows of the result being written.
    streamed: u64,
}

impl<'a> Collector<'a> {
    pub fn new(
        out: &'a mut dyn Write,
        format: Format,
        render: RenderOptions,
        options: CollectOptions,
    ) -> Self {
        let counter = Arc::new(Counter::default());
        Collector {
            out: Shared(Rc::new(RefCell::new(out)), Arc::clone(&counter)),
            format,
            render,
            options,
            renderer: None,
            counter,
            last: None,
            streamed: 0,
        }
    }

    /// Rows and bytes written so far (the export counter reads it).
    pub fn counter(&self) -> Arc<Counter> {
        Arc::clone(&self.counter)
    }

    /// The last result's rows and time, once it is finished.
    pub fn last_result(&self) -> Option<Finished> {
        self.last
    }

    /// The format results are shown in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// `--sql-only`: the code is the output, even on a terminal.
    pub fn wants_code(&self) -> bool {
        self.options.sql_only
    }

    fn renderer(&mut self) -> &mut Box<dyn Renderer + 'a> {
        let (format, options, out) = (self.format, self.render, self.out.clone());
        let paged = self.options.pager.filter(|_| format.is_for_people());
        self.renderer.get_or_insert_with(|| {
            let out: Box<dyn Write + 'a> = match paged {
                Some(screen) => {
                    let command = pager::command(&|name| std::env::var(name).ok());
                    Box::new(Paging::new(out, screen, command))
                }
                None => Box::new(out),
            };
            render::renderer(format, out, options)
        })
    }

    /// Closes the result: the renderer's last lines, rows changed or left out.
    fn finish_result(
        &mut self,
        rows: u64,
        changed: bool,
        elapsed: std::time::Duration,
        more: bool,
    ) -> io::Result<()> {
        let mut hidden = 0;
        let mut columns = None;
        let shown = self.renderer.is_some();
        if let Some(mut r) = self.renderer.take() {
            r.finish()?;
            hidden = r.hidden();
            columns = r.columns_shown();
            // Dropping it waits for the pager, if the result went there.
            drop(r);
        }
        if changed {
            let noun = if rows == 1 { "row" } else { "rows" };
            stderr_line(&format!("{rows} {noun} changed"));
        } else if hidden > 0 && !self.format.is_for_people() {
            stderr_line(&format!("aiq: {hidden} more rows not shown (--max-rows)"));
        }
        if self.options.verbose > 0 {
            let noun = if rows == 1 { "row" } else { "rows" };
            stderr_line(&format!("{rows} {noun} in {elapsed:.1?}"));
        }
        // A footer belongs to a result that was shown: the rows of a Lua
        // program's `aiq.query` went to the program, not here.
        self.last = (shown || changed).then_some(Finished {
            rows,
            hidden,
            more,
            changed,
            elapsed,
            columns,
        });
        Ok(())
    }
}

impl EventSink for Collector<'_> {
    /// CSV and TSV write an engine's own form of rows as it is; a chart
    /// reads values.
    fn writes_delimited(&self) -> bool {
        matches!(self.format, Format::Csv | Format::Tsv) && !self.options.charting
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::ThinkingStarted
            | Event::TextDelta(_)
            | Event::QueryStarted { .. }
            | Event::ToolResult { .. }
            | Event::Usage(_)
            | Event::StatusChanged(_) => {}
            Event::ToolCall { name, arguments } => {
                // Lookups are shown where the SQL is.
                if self.options.show_sql {
                    stderr_line(&format!("→ {name} {arguments}"));
                }
            }
            Event::Proposed { code, .. } => {
                if self.options.sql_only {
                    writeln!(self.out, "{code}")?;
                    self.out.flush()?;
                } else if self.options.show_sql {
                    stderr_line(&code);
                }
            }
            Event::Confirm(c) => {
                let yes = answer_on_terminal(&c, self.options.yes);
                c.answer(yes);
            }
            Event::Secret(s) => s.answer(secret_on_terminal(&s.prompt)),
            Event::Columns(columns) => {
                // Each statement gets a renderer of its own, so nothing of a
                // failed attempt leaks into the next.
                self.renderer = None;
                self.last = None;
                self.streamed = 0;
                if !self.options.charting {
                    self.renderer().columns(&columns)?
                }
            }
            Event::Rows(rows) => {
                self.counter.add_rows(rows.len() as u64);
                self.streamed += rows.len() as u64;
                if !self.options.charting {
                    rows.send_to(self.renderer().as_mut())?;
                }
            }
            Event::Chart(chart) => {
                let look = Look {
                    unicode: !self.options.ascii_charts,
                    color: self.render.color,
                };
                let width = self.render.width.unwrap_or(80);
                self.out
                    .write_all(to_text(&chart, width, look).as_bytes())?;
                self.out.flush()?;
            }
            Event::QueryFinished {
                rows,
                changed,
                elapsed,
                more,
            } => self.finish_result(rows, changed, elapsed, more)?,
            Event::Retrying { why, attempt } => {
                stderr_line(&format!("aiq: retrying ({attempt}): {why}"))
            }
            Event::Output(text) | Event::Listing(text) => {
                self.out.write_all(text.as_bytes())?;
                self.out.flush()?;
            }
            Event::Notice(text) => stderr_line(&text),
            Event::Warning(text) => stderr_line(&format!("aiq: warning: {text}")),
            Event::CommandFailed(text) => stderr_line(&format!("aiq: {text}")),
            // A line editor puts it in its input; elsewhere it is shown.
            Event::Edit(sql) => {
                self.out.write_all(sql.as_bytes())?;
                self.out.write_all(b"\n")?;
                self.out.flush()?;
            }
            Event::SessionSaved(path) => stderr_line(saved_lines(&path).trim_end()),
            Event::TurnFinished(outcome) => {
                // A result cut short (an error mid-stream) still closes
                // cleanly, with the rows it had; a script is told so.
                // A closed pipe (`| head`) is no error of the result's.
                let cut = self.renderer.take().is_some()
                    && matches!(&outcome, Outcome::Failed(e) if !matches!(e, AgentError::Output { .. }))
                    && self.streamed > 0
                    && !self.format.is_for_people();
                if cut {
                    let n = self.streamed;
                    let noun = if n == 1 { "row was" } else { "rows were" };
                    stderr_line(&format!(
                        "aiq: {n} {noun} written before the error: the output is incomplete"
                    ));
                }
                if let Outcome::Answered(a) = outcome {
                    if a.is_prose() && self.options.prose && !a.text.trim().is_empty() {
                        writeln!(self.out, "{}", a.text.trim())?;
                    }
                }
                self.out.flush()?;
            }
        }
        Ok(())
    }
}

/// Answers a confirmation: `--yes` for writes, else "y" typed on a
/// terminal; never asks when stdin or stderr is not a terminal.
pub fn answer_on_terminal(c: &Confirmation, yes: bool) -> bool {
    if yes && c.kind == ConfirmKind::Write {
        return true;
    }
    let stdin = io::stdin();
    if !stdin.is_terminal() || !io::stderr().is_terminal() {
        return false;
    }
    let mut err = io::stderr().lock();
    if let Some(detail) = &c.detail {
        let _ = writeln!(err, "{detail}");
    }
    let _ = write!(err, "{} [y/N] ", c.question);
    let _ = err.flush();
    let mut answer = String::new();
    let _ = stdin.lock().read_line(&mut answer);
    is_yes(&answer)
}

/// Asks for a password on the terminal, without echo: what was typed, or
/// `None` when nothing was, or stdin or stderr is not a terminal.
pub fn secret_on_terminal(prompt: &str) -> Option<String> {
    if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return None;
    }
    rpassword::prompt_password(prompt)
        .ok()
        .filter(|p| !p.is_empty())
}

/// How the command line asks for a password a server wants: on the
/// terminal, without echo.
pub fn terminal_password() -> crate::source::PasswordAsk {
    Arc::new(secret_on_terminal)
}

/// `y` or `yes`, any case.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
