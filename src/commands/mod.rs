//! The subcommands (`aiq schema`, `sessions`, `sources`, `config`, `doctor`,
//! `logs`, `mcp`, `completions`). Each takes a [`Context`] (the loaded, immutable
//! configuration and global flags) and returns an [`AiqError`] a person can
//! act on; none of them prints an error itself.

pub mod config_cmd;
pub mod demo;
pub mod doctor;
pub mod eval;
pub mod examples;
pub mod logs;
pub mod notes;
pub mod schema;
pub mod sessions;
pub mod sources;

use std::io::{self, Write};

use clap::CommandFactory;

use crate::cli::{Cli, Command};
pub use crate::context::Context;
use crate::error::AiqError;

/// Runs a subcommand.
pub fn dispatch(ctx: &Context<'_>, command: Command) -> Result<(), AiqError> {
    match command {
        Command::Schema {
            source,
            refresh,
            as_sent,
            question,
        } => schema::run(
            ctx,
            source.as_deref(),
            refresh,
            as_sent,
            question.as_deref(),
        ),
        Command::Notes(action) => notes::run(ctx, action),
        Command::Sessions { action } => sessions::run(ctx, action),
        Command::Sources(cmd) => sources::run(ctx, cmd),
        Command::Config(cmd) => config_cmd::run(ctx, cmd),
        Command::Doctor { source, model } => doctor::run(ctx, source.as_deref(), &model, None),
        Command::Logs { since, json } => logs::run(ctx, since.as_deref(), json),
        Command::Demo {
            reset,
            tui,
            eval,
            suite,
            run,
            ask,
        } => demo::run(
            ctx,
            demo::Opening {
                reset,
                tui,
                eval,
                suite,
            },
            &run,
            &ask,
        ),
        Command::Eval(args) => eval::run(ctx, &args),
        Command::Examples(cmd) => examples::run(ctx, cmd),
        Command::Mcp(args) => crate::mcp::run(ctx, &args),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "aiq", &mut out);
            write_stdout(&out)
        }
    }
}

/// Writes a finished piece of output to stdout; a closed pipe is not an error.
/// `bytes` to stdout, through the pager on a terminal when they do not
/// fit the screen (as results are).
pub fn write_paged(ctx: &Context<'_>, bytes: &[u8]) -> Result<(), AiqError> {
    let Some(screen) = crate::context::pager_screen(ctx, &crate::cli::RunArgs::default()) else {
        return write_stdout(bytes);
    };
    let command = crate::frontend::pager::command(ctx.env);
    let mut paged = crate::frontend::pager::Paging::new(io::stdout().lock(), screen, command);
    match paged.write_all(bytes).and_then(|_| paged.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AiqError::Query(format!("cannot write to stdout: {e}"))),
    }
}

pub fn write_stdout(bytes: &[u8]) -> Result<(), AiqError> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AiqError::Query(format!("cannot write to stdout: {e}"))),
    }
}
