//! Direct SQL (`aiq SOURCE -e SQL`): no model — the statement goes through
//! the same runner as the model's (gate, confirmation of writes, execution
//! with Ctrl-C and the statement timeout) into the chosen renderer.

use std::io::{self, Write};

use super::sink::{CollectOptions, Collector};
use crate::agent::runner::statement_turn;
use crate::cancel::TurnSlot;
use crate::cli::RunArgs;
use crate::context::{output_setup, source_error, Context};
use crate::error::AiqError;
use crate::interrupt;
use crate::safety::Policy;
use crate::source::{self, OpenOptions};

/// Runs `-e SQL` against SOURCE.
pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, args: &RunArgs) -> Result<(), AiqError> {
    let Some(sql) = args.execute.as_deref() else {
        return Err(AiqError::Usage(
            "nothing to do: give SQL to run with -e \"SELECT …\" (see `aiq --help` for examples)"
                .into(),
        ));
    };
    let resolved = ctx.resolve_source(source_arg)?;
    let options = OpenOptions {
        allow_write: args.allow_write,
        timeout: ctx.query_timeout(),
    };
    interrupt::install();
    let src = source::open(&resolved.spec, options).map_err(source_error)?;
    let (format, render) = output_setup(ctx, args);

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let collect = CollectOptions {
        yes: args.yes,
        verbose: ctx.global.verbose,
        ..CollectOptions::default()
    };
    let mut sink = Collector::new(&mut out, format, render, collect);
    let slot = TurnSlot::default();
    let policy = Policy {
        allow_write: args.allow_write,
    };
    let result = {
        let _running = interrupt::Running::new(slot.handle());
        statement_turn(src.as_ref(), sql, policy, &slot, &mut sink)
    };
    drop(sink);
    let flushed = out.flush();
    super::finished(result, flushed)
}
