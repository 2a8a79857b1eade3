//! The subcommands and direct SQL. Each takes a [`Context`] (the loaded,
//! immutable configuration and global flags) and returns an [`AiqError`] a
//! person can act on; none of them prints an error itself.

pub mod config_cmd;
pub mod doctor;
pub mod exec;
pub mod schema;
pub mod sessions;
pub mod sources;

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use clap::CommandFactory;

use crate::cli::{Cli, Command, GlobalArgs, RunArgs};
use crate::config::Config;
use crate::error::AiqError;
use crate::render::{Format, RenderOptions};
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
        self.color_allowed() && io::stdout().is_terminal()
    }

    /// The same for what goes to stderr (spinner, streamed answer).
    pub fn color_stderr(&self) -> bool {
        self.color_allowed() && io::stderr().is_terminal()
    }

    fn color_allowed(&self) -> bool {
        !self.global.no_color && (self.env)("NO_COLOR").map(|v| v.is_empty()).unwrap_or(true)
    }

    /// The statement timeout from the config.
    pub fn query_timeout(&self) -> Duration {
        Duration::from_secs(self.config.query.timeout_secs.max(1))
    }
}

/// The output format and how to render it: `-f` or the terminal default,
/// `--max-rows` or the config's `chat.max_rows` for table/markdown, the
/// terminal width.
pub fn output_setup(ctx: &Context<'_>, args: &RunArgs) -> (Format, RenderOptions) {
    let tty = io::stdout().is_terminal();
    let format = args
        .format
        .unwrap_or(if tty { Format::Table } else { Format::Csv });
    let max_rows = match args.max_rows {
        Some(n) => Some(n),
        None if format.is_for_people() => Some(ctx.config.chat.max_rows),
        None => None,
    };
    let width = if tty {
        crossterm::terminal::size().ok().map(|(w, _)| w)
    } else {
        None
    };
    let options = RenderOptions {
        max_rows,
        color: ctx.color(),
        width,
    };
    (format, options)
}

pub(crate) fn source_error(e: SourceError) -> AiqError {
    AiqError::Source(e.0)
}

/// Runs a subcommand.
pub fn dispatch(ctx: &Context<'_>, command: Command) -> Result<(), AiqError> {
    match command {
        Command::Schema { source } => schema::run(ctx, source.as_deref()),
        Command::Sessions { action } => sessions::run(ctx, action),
        Command::Sources(cmd) => sources::run(ctx, cmd),
        Command::Config(cmd) => config_cmd::run(ctx, cmd),
        Command::Doctor { source, model } => doctor::run(ctx, source.as_deref(), &model),
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
