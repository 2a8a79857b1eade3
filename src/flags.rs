//! No flag is accepted and then ignored (SPEC §2.3): a flag given where
//! nothing uses it — `aiq -q x sessions`, `aiq sources list --tables t`,
//! `aiq demo -f csv` without anything to format — is a usage error that
//! names it (exit 2), not a silent no-op.

use crate::cli::{AskArgs, Cli, Command, GlobalArgs, ModelArgs, RunArgs};
use crate::error::AiqError;

/// The run flags given, by their long names.
pub fn run_given(run: &RunArgs) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut flag = |set: bool, name| {
        if set {
            out.push(name)
        }
    };
    flag(run.execute.is_some(), "--execute");
    flag(run.format.is_some(), "--format");
    flag(run.max_rows.is_some(), "--max-rows");
    flag(run.no_pager, "--no-pager");
    flag(run.allow_write, "--allow-write");
    flag(run.yes, "--yes");
    flag(run.chart.is_some(), "--chart");
    flag(run.chart_out.is_some(), "--chart-out");
    flag(run.lua.is_some(), "--lua");
    out
}

/// The question flags given (not the model's: see [`model_given`]).
pub fn ask_given(ask: &AskArgs) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut flag = |set: bool, name| {
        if set {
            out.push(name)
        }
    };
    flag(ask.question.is_some(), "--question");
    flag(ask.mode.is_some(), "--mode");
    flag(ask.session.is_some(), "--session");
    flag(ask.sql_only, "--sql-only");
    flag(ask.show_sql, "--show-sql");
    flag(ask.history_limit.is_some(), "--history-limit");
    out
}

/// The model flags given.
pub fn model_given(model: &ModelArgs) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut flag = |set: bool, name| {
        if set {
            out.push(name)
        }
    };
    flag(model.provider.is_some(), "--provider");
    flag(model.model.is_some(), "--model");
    flag(model.base_url.is_some(), "--base-url");
    flag(model.no_stream, "--no-stream");
    flag(model.context_tokens.is_some(), "--context-tokens");
    out
}

/// Refuses `flags` given to `what`, which does not use them.
pub fn refuse(flags: &[&str], what: &str) -> Result<(), AiqError> {
    match flags {
        [] => Ok(()),
        [one] => Err(AiqError::Usage(format!(
            "{one} does nothing with {what}; leave it out (see `aiq --help`)"
        ))),
        many => Err(AiqError::Usage(format!(
            "{} do nothing with {what}; leave them out (see `aiq --help`)",
            many.join(", ")
        ))),
    }
}

/// The subcommand's name, as typed.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Schema { .. } => "aiq schema",
        Command::Notes(_) => "aiq notes",
        Command::Sessions { .. } => "aiq sessions",
        Command::Sources(_) => "aiq sources",
        Command::Config(_) => "aiq config",
        Command::Doctor { .. } => "aiq doctor",
        Command::Logs { .. } => "aiq logs",
        Command::Demo { .. } => "aiq demo",
        Command::Mcp(_) => "aiq mcp",
        Command::Eval(_) => "aiq eval",
        Command::Examples(_) => "aiq examples",
        Command::Completions { .. } => "aiq completions",
    }
}

/// Whether a subcommand reads `--tables`: those that open a source for a
/// model or show what one sees.
fn uses_tables(command: &Command) -> bool {
    match command {
        Command::Schema { .. }
        | Command::Demo { .. }
        | Command::Mcp(_)
        | Command::Eval(_)
        | Command::Examples(_)
        | Command::Doctor { .. } => true,
        Command::Notes(_)
        | Command::Sessions { .. }
        | Command::Sources(_)
        | Command::Config(_)
        | Command::Logs { .. }
        | Command::Completions { .. } => false,
    }
}

/// Checks a command line for flags its subcommand would drop: the main
/// command's own flags before a subcommand, and `--tables` where nothing
/// reads it.
pub fn check(cli: &Cli) -> Result<(), AiqError> {
    let Some(command) = &cli.command else {
        return Ok(());
    };
    let mut given = run_given(&cli.run);
    given.extend(ask_given(&cli.ask));
    given.extend(model_given(&cli.ask.model));
    if cli.tui {
        given.push("--tui");
    }
    if !given.is_empty() {
        return Err(AiqError::Usage(format!(
            "{} before a subcommand does nothing: give flags after it, as `{} …` takes them (see `{} --help`)",
            given.join(", "),
            name(command),
            name(command)
        )));
    }
    check_global(&cli.global, command)
}

fn check_global(global: &GlobalArgs, command: &Command) -> Result<(), AiqError> {
    if !global.tables.is_empty() && !uses_tables(command) {
        return refuse(&["--tables"], name(command));
    }
    // `aiq sources add NAME GLOB --name T` keeps the table's name too.
    let names_a_table = matches!(
        command,
        Command::Sources(crate::cli::SourcesCommand::Add { .. })
    );
    if global.table_name.is_some() && !uses_tables(command) && !names_a_table {
        return refuse(&["--name"], name(command));
    }
    Ok(())
}
