//! `aiq sources list|add|remove|default`: saved sources in config.toml,
//! edited in place so the file's comments survive. Passwords are never
//! written by aiq and never printed.

use std::path::Path;

use super::{write_stdout, Context};
use crate::cli::SourcesCommand;
use crate::config::{edit_file, validate_name};
use crate::context::source_error;
use crate::error::AiqError;
use crate::source::{
    self, redact_url, resolve_location, strip_password, OpenOptions, ServerSpec, ServerStatus,
    SourceSpec,
};

pub fn run(ctx: &Context<'_>, command: SourcesCommand) -> Result<(), AiqError> {
    let saved = &ctx.config.sources;
    match command {
        SourcesCommand::List => {
            if saved.is_empty() {
                crate::error::stderr_line(
                    "aiq: no saved sources; add one with `aiq sources add NAME PATH_OR_URL`",
                );
                return Ok(());
            }
            let width = saved.names().map(str::len).max().unwrap_or(0);
            let mut text = String::new();
            for (name, s) in saved.iter() {
                let mark = if saved.default.as_deref() == Some(name) {
                    '*'
                } else {
                    ' '
                };
                text.push_str(&format!("{mark} {name:<width$}  {}\n", redact_url(&s.url)));
            }
            write_stdout(text.as_bytes())
        }
        SourcesCommand::Add {
            name,
            location,
            password_env,
        } => {
            validate_name(&name)?;
            if saved.get(&name).is_some() {
                return Err(AiqError::Usage(format!(
                    "a source named '{name}' is already saved (remove it first with `aiq sources remove {name}`)"
                )));
            }
            let mut spec = resolve_location(&location).map_err(source_error)?;
            // `--name`: the table's name for a source of one table.
            let table = ctx.global.table_name.clone();
            if let Some(table) = &table {
                crate::source::rename_table(&mut spec, table)
                    .map_err(|e| AiqError::Usage(format!("--name: {}", e.0)))?;
            }
            if let Some(var) = &password_env {
                let SourceSpec::Server(server) = &mut spec else {
                    return Err(AiqError::Usage(
                        "--password-env is for server sources (postgres://, mysql://, clickhouse://)".into(),
                    ));
                };
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(AiqError::Usage(format!(
                        "--password-env takes the name of an environment variable, not '{var}'"
                    )));
                }
                server.password_env = Some(var.clone());
            }
            let url = stored_location(&location, &spec);
            let make_default = saved.default.is_none();
            let path = edit_file(&ctx.config.home, |doc| {
                let sources = doc
                    .entry("sources")
                    .or_insert(toml_edit::table())
                    .as_table_mut()
                    .ok_or_else(|| {
                        AiqError::Usage("config.toml: `sources` is not a table".into())
                    })?;
                let mut entry = toml_edit::Table::new();
                entry["url"] = toml_edit::value(url.as_str());
                if let Some(var) = &password_env {
                    entry["password_env"] = toml_edit::value(var.as_str());
                }
                if let Some(table) = &table {
                    entry["name"] = toml_edit::value(table.as_str());
                }
                sources.insert(&name, toml_edit::Item::Table(entry));
                if make_default {
                    sources.insert("default", toml_edit::value(name.as_str()));
                }
                Ok(())
            })?;
            crate::error::stderr_line(&format!(
                "aiq: saved '{name}' ({}) in {}{}",
                redact_url(&url),
                path.display(),
                if make_default {
                    " as the default source"
                } else {
                    ""
                }
            ));
            if let SourceSpec::Server(server) = &spec {
                if url != location {
                    crate::error::stderr_line("aiq: the password in the URL was not saved (aiq never writes passwords); aiq asks for it on a terminal, or name a variable that holds it with `--password-env VAR`");
                }
                check_server(ctx, server);
            }
            Ok(())
        }
        SourcesCommand::Remove { name } => {
            require(ctx, &name)?;
            let was_default = saved.default.as_deref() == Some(name.as_str());
            edit_file(&ctx.config.home, |doc| {
                if let Some(sources) = doc.get_mut("sources").and_then(|s| s.as_table_mut()) {
                    sources.remove(&name);
                    if was_default {
                        sources.remove("default");
                    }
                }
                Ok(())
            })?;
            crate::error::stderr_line(&format!("aiq: removed '{name}'"));
            Ok(())
        }
        SourcesCommand::Default { name } => {
            require(ctx, &name)?;
            edit_file(&ctx.config.home, |doc| {
                doc["sources"]["default"] = toml_edit::value(name.as_str());
                Ok(())
            })?;
            crate::error::stderr_line(&format!("aiq: '{name}' is now the default source"));
            Ok(())
        }
    }
}

fn require(ctx: &Context<'_>, name: &str) -> Result<(), AiqError> {
    if ctx.config.sources.get(name).is_some() {
        return Ok(());
    }
    let names: Vec<&str> = ctx.config.sources.names().collect();
    Err(AiqError::Source(format!(
        "unknown source '{name}' (saved: {})",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Connects to a newly saved server once (read-only) and says what it
/// found; a server that cannot be reached now is a warning, not an error.
fn check_server(ctx: &Context<'_>, server: &ServerSpec) {
    let options = OpenOptions {
        memory_limit: None,
        ..ctx.open_options(false)
    };
    match source::open(&SourceSpec::Server(server.clone()), options) {
        Ok(src) => {
            if let Some(status) = src.server_status() {
                crate::error::stderr_line(&format!("aiq: connected: {}", describe_server(&status)));
            }
        }
        Err(e) => {
            crate::error::stderr_line(&format!("aiq: warning: saved, but cannot connect now: {e}"))
        }
    }
}

/// `PostgreSQL 15.18 at host:5432/db, TLS, read-only session confirmed`.
pub(crate) fn describe_server(status: &ServerStatus) -> String {
    format!(
        "{} at {}{}, {}",
        status.version,
        status.address,
        if status.tls { ", TLS" } else { "" },
        if status.read_only {
            "read-only session confirmed"
        } else {
            "read-write session (--allow-write)"
        }
    )
}

/// Paths are stored absolute, database files as `sqlite://`/`duckdb://`
/// URLs; URLs are stored as given, without a password.
fn stored_location(location: &str, spec: &SourceSpec) -> String {
    if location.contains("://") {
        return strip_password(location);
    }
    let path = Path::new(location);
    let abs = match std::fs::canonicalize(path) {
        Ok(p) => p.display().to_string(),
        // A glob: its root made absolute, the pattern kept.
        Err(_) if path.is_relative() => std::env::current_dir()
            .map(|d| d.join(path).display().to_string())
            .unwrap_or_else(|_| location.to_string()),
        Err(_) => location.to_string(),
    };
    match spec {
        SourceSpec::Sqlite(_) => format!("sqlite://{abs}"),
        SourceSpec::DuckDb(_) => format!("duckdb://{abs}"),
        SourceSpec::DuckDbMemory | SourceSpec::DataFiles { .. } | SourceSpec::Server(_) => abs,
    }
}
