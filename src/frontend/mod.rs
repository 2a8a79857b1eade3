//! Front ends over the agent core: each is an [`crate::agent::EventSink`]
//! plus the loop that feeds it lines — single-shot, direct SQL, Lua scripts
//! (`--lua`), the chat, and the channel sink a view on another thread uses —
//! all over the same [`crate::agent::Conversation`] (or, for `-e` and
//! `--lua`, the same statement runner and sandbox).

pub mod channel;
pub mod charts;
pub mod console;
pub mod direct;
pub mod oneshot;
pub mod output;
pub mod pager;
pub mod progress;
pub mod repl;
pub mod script;
pub mod sink;
pub mod start;
pub mod tui;

use std::io;

use crate::agent::{AgentError, Answer};
pub use crate::error::stderr_line;
use crate::error::AiqError;

/// The sink of a run that writes one result to stdout (`-e`, `--lua`):
/// the collector in the chosen format (or a chart instead of the table),
/// and on a terminal the console around it — an indicator while a
/// statement runs, host calls as they happen, a footer after.
pub fn stdout_sink<'a>(
    ctx: &crate::context::Context<'_>,
    args: &crate::cli::RunArgs,
    out: &'a mut dyn io::Write,
) -> Box<dyn crate::agent::EventSink + 'a> {
    use std::io::IsTerminal;
    let (format, mut render) = output::output_setup(ctx, args);
    if args.chart_out.is_some() {
        // The image needs every row: the table counts them all.
        render.count_budget = None;
    }
    let collect = sink::CollectOptions {
        pager: output::pager_screen(ctx, args),
        yes: args.yes,
        verbose: ctx.global.verbose,
        charting: charts::replaces_table(args),
        ascii_charts: ctx.ascii_charts(),
        ..sink::CollectOptions::default()
    };
    let collector = sink::Collector::new(out, format, render, collect);
    if io::stderr().is_terminal() {
        Box::new(
            console::Console::new(collector, ctx.color_stderr(), args.yes)
                .quiet(ctx.global.quiet)
                .stdout_tty(io::stdout().is_terminal()),
        )
    } else {
        Box::new(collector)
    }
}

/// How a run that wrote its result to stdout ends: the turn's error (130
/// after Ctrl-C), else a failed flush of the output — a closed pipe is no
/// failure.
pub fn finished(
    result: Result<Answer, AgentError>,
    flushed: io::Result<()>,
) -> Result<(), AiqError> {
    match result {
        Ok(_) => match flushed {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                Err(AiqError::Query(format!("cannot write the result: {e}")))
            }
            _ => Ok(()),
        },
        Err(_) if crate::interrupt::interrupted() => Err(AiqError::Interrupted),
        Err(e) => Err(e.into()),
    }
}
