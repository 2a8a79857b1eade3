//! Direct SQL (`aiq SOURCE -e SQL`): the safety gate, confirmation of
//! writes, execution with Ctrl-C and the statement timeout, and the chosen
//! renderer on stdout. No model is involved.

use std::io::{self, IsTerminal, Write};

use super::{output_setup, source_error, Context};
use crate::cli::RunArgs;
use crate::error::AiqError;
use crate::frontend::sink::confirm;
use crate::interrupt;
use crate::render::{self, Format};
use crate::safety::{self, Access, CheckedSql, Policy};
use crate::source::{self, ExecError, OpenOptions, QueryStats};

/// Runs `-e SQL` against SOURCE.
pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, args: &RunArgs) -> Result<(), AiqError> {
    let Some(sql) = args.execute.as_deref() else {
        return Err(AiqError::Usage(
            "nothing to do: give SQL to run with -e \"SELECT …\" (see `aiq --help` for examples)"
                .into(),
        ));
    };
    let resolved = ctx.resolve_source(source_arg)?;
    let engine = resolved.spec.engine();
    let policy = Policy {
        allow_write: args.allow_write,
    };
    let checked = safety::check(sql, engine.dialect(), policy)
        .map_err(|r| AiqError::Refused(r.to_string()))?;
    if checked.access() == Access::Write {
        confirm_write(&checked, args.yes)?;
    }
    let options = OpenOptions {
        allow_write: args.allow_write,
        timeout: ctx.query_timeout(),
    };
    interrupt::install();
    let src = source::open(&resolved.spec, options).map_err(source_error)?;
    let (format, options) = output_setup(ctx, args);

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut renderer = render::renderer(format, Box::new(&mut out), options);
    let result = {
        let _running = interrupt::Running::new(src.cancel_handle());
        src.execute(&checked, renderer.as_mut())
    };
    let finished = result.and_then(|stats| {
        renderer.finish()?;
        Ok(stats)
    });
    let hidden = renderer.hidden();
    drop(renderer);
    let stats = match finished {
        Ok(stats) => stats,
        Err(e) => return exec_error(e),
    };
    if let Err(e) = out.flush() {
        return exec_error(ExecError::Output(e));
    }
    report(&stats, hidden, format, ctx.global.verbose);
    Ok(())
}

/// Writes need `--yes`, or a "y" typed on a terminal.
fn confirm_write(checked: &CheckedSql, yes: bool) -> Result<(), AiqError> {
    if confirm(checked.sql(), yes) {
        return Ok(());
    }
    if io::stdin().is_terminal() && io::stderr().is_terminal() {
        Err(AiqError::Refused(format!(
            "not run: {} was not confirmed",
            checked.kind()
        )))
    } else {
        Err(AiqError::Refused(format!(
            "refused: {} changes data and needs confirmation; add --yes to run it from a script",
            checked.kind()
        )))
    }
}

fn exec_error(e: ExecError) -> Result<(), AiqError> {
    if interrupt::interrupted() {
        return Err(AiqError::Interrupted);
    }
    match e {
        ExecError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        ExecError::Output(e) => Err(AiqError::Query(format!("cannot write the result: {e}"))),
        ExecError::Cancelled => Err(AiqError::Interrupted),
        ExecError::Timeout(_) => Err(AiqError::Query(format!(
            "{e} (raise [query] timeout_secs in config.toml, or narrow the query)"
        ))),
        ExecError::Engine(msg) => Err(AiqError::Query(format!("query failed: {msg}"))),
    }
}

/// Notes on stderr: rows changed by a write, rows cut by `--max-rows` in a
/// machine format, and timing with `-v`.
fn report(stats: &QueryStats, hidden: u64, format: Format, verbose: u8) {
    let mut err = io::stderr().lock();
    if stats.changed {
        let noun = if stats.rows == 1 { "row" } else { "rows" };
        let _ = writeln!(err, "{} {noun} changed", stats.rows);
    } else if hidden > 0 && !format.is_for_people() {
        let _ = writeln!(err, "aiq: {hidden} more rows not shown (--max-rows)");
    }
    if verbose > 0 {
        let _ = writeln!(err, "{} rows in {:.1?}", stats.rows, stats.elapsed);
    }
}
