//! The process edge: parse the command line, load the configuration once,
//! hand over to a command, and turn the outcome into an exit code and at most
//! a line or two on stderr.

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::commands;
use crate::config::Config;
use crate::context::Context;
use crate::error::AiqError;
use crate::frontend::{charts, direct, oneshot, repl, script, tui};

/// Runs aiq with the process arguments and environment; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    // Diagnostics on stderr would draw over the full-screen view.
    let full_screen = cli.tui || matches!(cli.command, Some(Command::Demo { tui: true, .. }));
    init_tracing(if full_screen { 0 } else { cli.global.verbose });
    crate::cleanup::install_signal_handlers();
    let env = |key: &str| std::env::var(key).ok();
    match run(cli, &env) {
        Ok(()) => 0,
        Err(AiqError::Reported(code)) => code,
        Err(e) => {
            crate::error::stderr_line(&format!("aiq: {e}"));
            e.exit_code()
        }
    }
}

/// Runs one parsed command line.
pub fn run(cli: Cli, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<(), AiqError> {
    // `aiq doctor` reports a broken config file as one of its checks;
    // `aiq config init` can show or replace one, `aiq config path` find it.
    use crate::cli::{Command, ConfigCommand};
    let (config, broken) = match cli.command {
        Some(
            Command::Doctor { .. }
            | Command::Config(ConfigCommand::Init { .. } | ConfigCommand::Path),
        ) => Config::load_or_defaults(env)?,
        _ => (Config::load(env)?, None),
    };
    crate::home::logs::set_limits(config.audit.limits());
    for warning in &config.warnings {
        crate::error::stderr_line(&format!("aiq: warning: {warning}"));
    }
    let ctx = Context {
        config: &config,
        global: &cli.global,
        env,
        ask_password: Some(crate::frontend::sink::terminal_password()),
    };
    if cli.source.is_none() {
        crate::flags::check(&cli)?;
    }
    match cli.command {
        Some(_) if cli.source.is_some() => Err(AiqError::Usage(
            "a subcommand takes its own arguments: write `aiq schema SOURCE`, not `aiq SOURCE schema` (see `aiq --help`)".into(),
        )),
        Some(Command::Doctor { source, model }) => {
            commands::doctor::run(&ctx, source.as_deref(), &model, broken)
        }
        Some(command) => commands::dispatch(&ctx, command),
        None if cli.run.execute.is_some() => direct::run(&ctx, cli.source.as_deref(), &cli.run),
        None if cli.run.lua.is_some() => script::run(&ctx, cli.source.as_deref(), &cli.run),
        None if cli.tui => {
            charts::check(&cli.run, false)?;
            tui::run(&ctx, cli.source.as_deref(), &cli.run, &cli.ask)
        }
        None => match oneshot::question(&cli.ask)? {
            Some(q) => oneshot::run(&ctx, cli.source.as_deref(), &cli.run, &cli.ask, &q),
            None => {
                charts::check(&cli.run, false)?;
                repl::run(&ctx, cli.source.as_deref(), &cli.run, &cli.ask)
            }
        },
    }
}

fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => "aiq=warn",
        1 => "aiq=info",
        _ => "aiq=debug",
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(level))
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
