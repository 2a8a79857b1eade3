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
            no_pager,
        } => schema::run(
            ctx,
            source.as_deref(),
            schema::Asked {
                refresh,
                as_sent,
                question: question.as_deref(),
                no_pager,
            },
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
/// `text` to stdout, through the pager on a terminal when it does not
/// fit the screen (as results are), its long lines of prose wrapped to
/// the screen first (a pager that scrolls sideways would cut them).
pub fn write_paged(ctx: &Context<'_>, text: &str, no_pager: bool) -> Result<(), AiqError> {
    let run = crate::cli::RunArgs {
        no_pager,
        ..crate::cli::RunArgs::default()
    };
    let Some(screen) = crate::frontend::output::pager_screen(ctx, &run) else {
        return write_stdout(text.as_bytes());
    };
    let wrapped = crate::render::fit::wrap_prose(text, usize::from(screen.width));
    let bytes = wrapped.as_bytes();
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
