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
use std::path::Path;
use std::time::Duration;

use clap::CommandFactory;

use crate::cli::{Cli, Command, GlobalArgs, ModelArgs, RunArgs};
use crate::config::Config;
use crate::error::AiqError;
use crate::llm::{self, ChatModel};
use crate::render::{Format, RenderOptions};
use crate::schema::Catalog;
use crate::source::{self, strip_password, DataSource, OpenOptions, Resolved, SourceError};

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

    /// Resolves (SOURCE or the default), opens and introspects a source.
    pub fn open_source(&self, arg: Option<&str>, allow_write: bool) -> Result<Opened, AiqError> {
        let resolved = self.resolve_source(arg)?;
        let options = OpenOptions {
            allow_write,
            timeout: self.query_timeout(),
        };
        let source = source::open(&resolved.spec, options).map_err(source_error)?;
        let catalog = source.introspect().map_err(source_error)?;
        let name = resolved.label;
        let (session_name, label) = if name.contains("://") {
            let shown = strip_password(&name);
            (shown.clone(), shown)
        } else if self.config.sources.get(&name).is_some() {
            (name.clone(), name)
        } else {
            let path = Path::new(&name);
            let absolute = std::fs::canonicalize(path)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| name.clone());
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| name.clone());
            (absolute, file)
        };
        Ok(Opened {
            source,
            catalog,
            session_name,
            label,
        })
    }

    /// The model the flags, environment and config name.
    pub fn connect_model(&self, flags: &ModelArgs) -> Result<Box<dyn ChatModel>, AiqError> {
        let settings = llm::settings::resolve(&self.config.llm, &flags.llm_flags(), self.env)?;
        tracing::info!(?settings, "model");
        Ok(llm::connect(&settings)?)
    }
}

/// A source opened for a conversation.
pub struct Opened {
    pub source: Box<dyn DataSource>,
    pub catalog: Catalog,
    /// What a session file records: the saved name, or the absolute path /
    /// the URL without password.
    pub session_name: String,
    /// What people see (the chat prompt): the saved name or the file name.
    pub label: String,
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
