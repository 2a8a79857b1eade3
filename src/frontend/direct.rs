//! Direct SQL (`aiq SOURCE -e SQL`): no model — the statement goes through
//! the same runner as the model's (gate, confirmation of writes, execution
//! with Ctrl-C and the statement timeout) into the chosen renderer, or
//! drawn as a chart (`--chart`, `--chart-out`).

use std::io::{self, Write};

use super::charts;
use crate::agent::runner::statement_turn;
use crate::agent::LastResult;
use crate::cancel::TurnSlot;
use crate::cli::RunArgs;
use crate::context::{open_spec, Context};
use crate::error::AiqError;
use crate::interrupt;

/// Runs `-e SQL` against SOURCE.
pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, args: &RunArgs) -> Result<(), AiqError> {
    let Some(sql) = args.execute.as_deref().filter(|s| !s.trim().is_empty()) else {
        return Err(AiqError::Usage(
            "nothing to run: give SQL with -e \"SELECT …\" (see `aiq --help` for examples)".into(),
        ));
    };
    let resolved = ctx.resolve_source(source_arg)?;
    let options = ctx.open_options(args.allow_write);
    interrupt::install();
    let waiting = super::progress::opening(ctx, source_arg);
    let src = open_spec(&resolved, options)?;
    drop(waiting);
    charts::check(args, true)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut sink = super::stdout_sink(ctx, args, &mut out);
    let slot = TurnSlot::default();
    let policy = ctx.policy_for(&resolved, src.as_ref(), args.allow_write)?;
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
