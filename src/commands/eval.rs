//! `aiq eval SUITE [SOURCE]` (SPEC §13) and `aiq demo --eval`: asks a
//! suite's questions, compares each answer's rows with the reference SQL's,
//! and reports the verdicts, the summary by tag and what changed since an
//! earlier report.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;

use crate::agent::{Conversation, Keep, Mode, Opened};
use crate::cli::{AskArgs, EvalArgs, EvalFormat, EvalRun, ModelArgs, RunArgs};
use crate::context::Context;
use crate::error::AiqError;
use crate::eval::report::{percent, CaseReport, Report, Verdict};
use crate::eval::run::{run_cases, Opener, Settings, Stop};
use crate::eval::suite::Suite;

/// Runs `aiq eval`.
pub fn run(ctx: &Context<'_>, args: &EvalArgs) -> Result<(), AiqError> {
    let mut suite = Suite::load(&args.suite).map_err(AiqError::Usage)?;
    suite.select(&args.run.tags);
    if suite.cases.is_empty() {
        return Err(AiqError::Usage(format!(
            "no case of {} carries the tags {}",
            args.suite.display(),
            args.run.tags.join(", ")
        )));
    }
    let source = args.source.clone().or_else(|| suite.source.clone());
    let before = match &args.run.compare {
        Some(path) => Some(read_report(path)?),
        None => None,
    };
    let format = match args.format {
        Some(f) => f,
        None => args
            .run
            .output
            .as_deref()
            .map(format_of)
            .unwrap_or(EvalFormat::Table),
    };
    // The model is asked once up front: a model that cannot be reached
    // fails here, not once per case.
    let model = ctx.connect_model(&args.model)?;
    let model_label = format!("{}/{}", model.provider(), model.model());
    drop(model);
    let label = ctx.resolve_source(source.as_deref())?.label;
    let opener = EvalOpener {
        ctx,
        source: source.as_deref(),
        ask: AskArgs {
            model: args.model.clone(),
            ..AskArgs::default()
        },
        examples: !args.run.no_examples,
    };
    // The source opens once here so a bad source fails before any case.
    drop(opener.open().map_err(AiqError::Source)?);
    crate::interrupt::install_for_chat();
    let progress = Progress::new(suite.cases.len());
    let settings = Settings {
        jobs: args.run.jobs,
        tolerance: args.run.tolerance,
    };
    let (cases, stop) = run_cases(&suite.cases, &opener, &settings, &|c| progress.done(c));
    progress.clear();
    let mut report = Report::new(&suite.name, &label, &model_label, cases);
    match stop {
        Some(Stop::Model(why)) => {
            return Err(AiqError::Llm(format!("the model cannot be asked: {why}")))
        }
        Some(Stop::Source(why)) => return Err(AiqError::Source(why)),
        Some(Stop::Interrupted) => report.interrupted = true,
        None => {}
    }
    write_report(&report, format, args.run.output.as_deref(), before.as_ref())?;
    if report.interrupted {
        return Err(AiqError::Interrupted);
    }
    if report.summary.broken > 0 {
        let ids: Vec<&str> = report
            .cases
            .iter()
            .filter(|c| c.verdict == Verdict::Broken)
            .map(|c| c.id.as_str())
            .collect();
        return Err(AiqError::Usage(format!(
            "{} case(s) of {} are broken, their reference SQL failed: {} (fix the suite's `sql`; try it with `aiq {} -e \"…\"`)",
            ids.len(),
            args.suite.display(),
            ids.join(", "),
            source.as_deref().unwrap_or("SOURCE")
        )));
    }
    if let Some(min) = args.run.min {
        if report.summary.accuracy + 1e-12 < min {
            return Err(AiqError::Query(format!(
                "accuracy {} is below --min {}",
                percent(report.summary.accuracy),
                percent(min)
            )));
        }
    }
    Ok(())
}

/// `aiq demo --eval`: the demo shop's built-in suite, written next to the
/// shop so it can be run again with any flag.
pub fn demo(
    ctx: &Context<'_>,
    source: &str,
    model: &ModelArgs,
    format: Option<EvalFormat>,
    flags: &EvalRun,
) -> Result<(), AiqError> {
    let path = ctx.config.home.join("demo").join("eval.toml");
    crate::home::write_private(&ctx.config.home, &path, crate::demo::SUITE.as_bytes())
        .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", path.display())))?;
    if io::stderr().is_terminal() {
        crate::error::stderr_line(&format!(
            "aiq: the demo suite is {} (run it again with `aiq demo --eval` or `aiq eval {} demo`, plus --jobs, --compare, -o, -f …)",
            path.display(),
            path.display()
        ));
    }
    let args = EvalArgs {
        suite: path,
        source: Some(source.to_string()),
        format,
        run: flags.clone(),
        model: model.clone(),
    };
    run(ctx, &args)
}

/// Opens the source and a conversation for each case.
struct EvalOpener<'a> {
    ctx: &'a Context<'a>,
    source: Option<&'a str>,
    ask: AskArgs,
    examples: bool,
}

impl Opener for EvalOpener<'_> {
    fn open(&self) -> Result<Opened, String> {
        self.ctx
            .open_source(self.source, false)
            .map_err(|e| e.to_string())
    }

    fn conversation(&self, opened: Opened) -> Result<Conversation, String> {
        let model = self
            .ctx
            .connect_model(&self.ask.model)
            .map_err(|e| e.to_string())?;
        let mut conversation =
            self.ctx
                .conversation(model, opened, Keep::Nothing, &RunArgs::default(), &self.ask);
        conversation.set_mode(Mode::Sql);
        if !self.examples {
            conversation.without_examples();
        }
        Ok(conversation)
    }
}

/// An eval report's format from the chat's `-f` (`aiq demo --eval -f json`).
pub fn report_format(format: crate::render::Format) -> Result<EvalFormat, AiqError> {
    use crate::render::Format;
    match format {
        Format::Auto | Format::Table => Ok(EvalFormat::Table),
        Format::Json => Ok(EvalFormat::Json),
        Format::Csv => Ok(EvalFormat::Csv),
        Format::Markdown => Ok(EvalFormat::Markdown),
        other => Err(AiqError::Usage(format!(
            "an eval report is table, json, csv or markdown, not {}",
            other.name()
        ))),
    }
}

/// The format a report file's name suggests.
fn format_of(path: &Path) -> EvalFormat {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("json") => EvalFormat::Json,
        Some("csv") => EvalFormat::Csv,
        Some("md" | "markdown") => EvalFormat::Markdown,
        _ => EvalFormat::Table,
    }
}

fn read_report(path: &Path) -> Result<Report, AiqError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", path.display())))?;
    Report::parse(&text).map_err(|e| AiqError::Usage(format!("{}: {e}", path.display())))
}

/// The report in `format` to `output` (or stdout); with a file, stdout
/// gets the summary. The changes since an earlier report go with the
/// summary where people read it (stderr when stdout is a machine format).
fn write_report(
    report: &Report,
    format: EvalFormat,
    output: Option<&Path>,
    before: Option<&Report>,
) -> Result<(), AiqError> {
    let body = match format {
        EvalFormat::Table => report.to_table(),
        EvalFormat::Json => report.to_json(),
        EvalFormat::Csv => report.to_csv(),
        EvalFormat::Markdown => report.to_markdown(),
    };
    let changes = before.map(|b| report.changes_since(b));
    match output {
        Some(path) => {
            crate::home::write_atomic_shared(path, |f| f.write_all(body.as_bytes()))
                .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", path.display())))?;
            let mut text = report.summary_text();
            text.push_str(&format!("report written to {}\n", path.display()));
            if let Some(c) = changes {
                text.push_str(&c);
            }
            super::write_stdout(text.as_bytes())
        }
        None if format == EvalFormat::Table => {
            let mut text = body;
            if let Some(c) = changes {
                text.push('\n');
                text.push_str(&c);
            }
            super::write_stdout(text.as_bytes())
        }
        None => {
            super::write_stdout(body.as_bytes())?;
            if let Some(c) = changes {
                eprint!("{c}");
            }
            Ok(())
        }
    }
}

/// A progress line on stderr when it is a terminal.
struct Progress {
    total: usize,
    shown: bool,
    counts: Mutex<[usize; 6]>,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            shown: io::stderr().is_terminal(),
            counts: Mutex::new([0; 6]),
        }
    }

    fn done(&self, case: &CaseReport) {
        let Ok(mut c) = self.counts.lock() else {
            return;
        };
        let slot = match case.verdict {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::Error => 2,
            Verdict::Refused => 3,
            Verdict::Timeout => 4,
            Verdict::Broken => 5,
        };
        c[slot] += 1;
        if !self.shown {
            return;
        }
        let finished: usize = c.iter().sum();
        let mut err = io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K  {finished}/{} cases · {} pass · {} fail · {} error · {} refused · {} timeout{}",
            self.total,
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            if c[5] > 0 { format!(" · {} broken", c[5]) } else { String::new() }
        );
        let _ = err.flush();
    }

    fn clear(&self) {
        if self.shown {
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
