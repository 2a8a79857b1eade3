//! Direct SQL (`aiq SOURCE -e SQL`): no model — the statement goes through
//! the same runner as the model's (gate, confirmation of writes, execution
//! with Ctrl-C and the statement timeout) into the chosen renderer.

use std::io::{self, IsTerminal, Write};

use super::console::Console;
use super::sink::{CollectOptions, Collector};
use crate::agent::runner::statement_turn;
use crate::agent::EventSink;
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
    let (format, render) = output_setup(ctx, args);

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let collect = CollectOptions {
        yes: args.yes,
        verbose: ctx.global.verbose,
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
    let result = {
        let _running = interrupt::Running::new(slot.handle());
        statement_turn(src.as_ref(), sql, policy, &slot, sink.as_mut())
    };
    drop(sink);
    let flushed = out.flush();
    super::finished(result, flushed)
}
