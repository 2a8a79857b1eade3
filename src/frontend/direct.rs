//! Direct SQL (`aiq SOURCE -e SQL`): no model — the statement goes through
//! the same runner as the model's (gate, confirmation of writes, execution
//! with Ctrl-C and the statement timeout) into the chosen renderer, or
//! drawn as a chart (`--chart`, `--chart-out`).

use std::io::{self, IsTerminal, Write};

use super::charts;
use super::console::Console;
use super::sink::{CollectOptions, Collector};
use crate::agent::runner::statement_turn;
use crate::agent::{EventSink, LastResult};
use crate::cancel::TurnSlot;
use crate::cli::RunArgs;
use crate::context::{open_spec, output_setup, Context};
use crate::error::AiqError;
use crate::interrupt;
use crate::safety::Policy;
use crate::source::OpenOptions;

/// Runs `-e SQL` against SOURCE.
pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, args: &RunArgs) -> Result<(), AiqError> {
    let Some(sql) = args.execute.as_deref().filter(|s| !s.trim().is_empty()) else {
        return Err(AiqError::Usage(
            "nothing to run: give SQL with -e \"SELECT …\" (see `aiq --help` for examples)".into(),
        ));
    };
    let resolved = ctx.resolve_source(source_arg)?;
    let options = OpenOptions {
        allow_write: args.allow_write,
        timeout: ctx.query_timeout(),
    };
    interrupt::install();
    let waiting = super::progress::opening(ctx, source_arg);
    let src = open_spec(&resolved, options)?;
    drop(waiting);
    let (format, mut render) = output_setup(ctx, args);
    charts::check(args, true)?;
    if args.chart_out.is_some() {
        // The image needs every row: the table counts them all.
        render.count_budget = None;
    }

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let collect = CollectOptions {
        yes: args.yes,
        verbose: ctx.global.verbose,
        charting: charts::replaces_table(args),
        ascii_charts: ctx.ascii_charts(),
        ..CollectOptions::default()
    };
    let collector = Collector::new(&mut out, format, render, collect);
    // On a terminal: an indicator while the statement runs, a footer after.
    let mut sink: Box<dyn EventSink + '_> = if io::stderr().is_terminal() {
        Box::new(
            Console::new(collector, ctx.color_stderr(), args.yes)
                .quiet(ctx.global.quiet)
                .stdout_tty(io::stdout().is_terminal()),
        )
    } else {
        Box::new(collector)
    };
    let slot = TurnSlot::default();
    let policy = Policy {
        allow_write: args.allow_write,
    };
    let mut last = LastResult::default();
    last.keep(charts::wanted(args));
    let result = {
        let _running = interrupt::Running::new(slot.handle());
        let mut tee = last.tee(sink.as_mut(), None);
        statement_turn(src.as_ref(), sql, policy, &slot, &mut tee)
    };
    let charted = match &result {
        Ok(_) => charts::draw(&last, args, sink.as_mut()),
        Err(_) => Ok(()),
    };
    drop(sink);
    let flushed = out.flush();
    super::finished(result, flushed).and(charted)
}
