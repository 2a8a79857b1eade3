//! The subcommands and direct SQL. Each takes a [`Context`] (the loaded,
//! immutable configuration and global flags) and returns an [`AiqError`] a
//! person can act on; none of them prints an error itself.

pub mod config_cmd;
pub mod exec;
pub mod schema;
pub mod sources;

use std::io::{self, IsTerminal, Write};

use clap::CommandFactory;

use crate::cli::{Cli, Command, GlobalArgs};
use crate::config::Config;
use crate::error::AiqError;
use crate::source::{self, Resolved, SourceError};

/// What every command gets.
pub struct Context<'a> {
    pub config: &'a Config,
    pub global: &'a GlobalArgs,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl Context<'_> {
    /// Resolves SOURCE, or the default saved source when none is given.
    pub fn resolve_source(&self, arg: Option<&str>) -> Result<Resolved, AiqError> {
        let name = match arg {
            Some(a) => a.to_string(),
            None => match &self.config.sources.default {
                Some(d) => d.clone(),
                None => {
                    return Err(AiqError::Usage(
                        "no data source given and no default saved: pass SOURCE (a file, folder or URL), or save one with `aiq sources add NAME PATH` and `aiq sources default NAME`".into(),
                    ))
                }
            },
        };
        source::resolve(&name, &self.config.sources).map_err(source_error)
    }

    /// Colour only on a terminal, without `--no-color` and without `NO_COLOR`.
    pub fn color(&self) -> bool {
        !self.global.no_color
            && (self.env)("NO_COLOR").map(|v| v.is_empty()).unwrap_or(true)
            && io::stdout().is_terminal()
    }
}

pub(crate) fn source_error(e: SourceError) -> AiqError {
    AiqError::Source(e.0)
}

/// Runs a subcommand.
pub fn dispatch(ctx: &Context<'_>, command: Command) -> Result<(), AiqError> {
    match command {
        Command::Schema { source } => schema::run(ctx, source.as_deref()),
        Command::Sources(cmd) => sources::run(ctx, cmd),
        Command::Config(cmd) => config_cmd::run(ctx, cmd),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "aiq", &mut out);
            write_stdout(&out)
        }
    }
}

/// Writes a finished piece of output to stdout; a closed pipe is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), AiqError> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AiqError::Query(format!("cannot write to stdout: {e}"))),
    }
}
