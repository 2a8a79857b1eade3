//! `aiq mcp [SOURCE…]` (SPEC §12): the Model Context Protocol server, so
//! desktop assistants and coding agents get the same guarded access to
//! data as aiq's own front ends — the sources, the ranked schema, the
//! read-only gate and the one statement runner, behind the official Rust
//! SDK (`rmcp`) over stdio or streamable HTTP.
//!
//! - [`served`]: which sources, by name; opened on first use.
//! - [`tools`]: the tool handlers, protocol-free.
//! - [`result`]: the event sink that keeps a result within its caps and
//!   asks for consent to a write.
//! - [`server`]: the rmcp handler — limits, cancellation, resources, the
//!   audit log ([`audit`]); [`consent`]: writes confirmed by elicitation;
//!   [`queue`]: calls beyond the concurrent limit wait their turn.
//!
//! Nothing but protocol messages goes to stdout; everything else to stderr.

pub mod audit;
mod auth;
pub mod consent;
mod frames;
pub mod queue;
pub mod result;
pub mod served;
pub mod server;
mod sessions;
pub mod tools;
mod transport;

use std::path::Path;
use std::time::Duration;

use crate::cli::McpArgs;
use crate::config::{McpConfig, QueryConfig};
use crate::context::Context;
use crate::error::{stderr_line, AiqError};
use crate::source::{self, strip_password, EngineKind, SourceSpec};
use result::Caps;
use served::{Entry, Served};
use server::{AiqServer, Limits};
use tools::Tools;

/// Runs the server until the client goes away (stdio) or Ctrl-C (HTTP).
pub fn run(ctx: &Context<'_>, args: &McpArgs) -> Result<(), AiqError> {
    // A server shares the machine with the assistants it serves: unless
    // `[query] memory_limit` says otherwise, DuckDB gets a lower ceiling.
    let mut config = ctx.config.clone();
    config
        .query
        .memory_limit
        .get_or_insert_with(|| crate::config::MCP_MEMORY_LIMIT.to_string());
    let ctx = &Context {
        config: &config,
        global: ctx.global,
        env: ctx.env,
        // Nobody is at a terminal to type a password.
        ask_password: None,
    };
    check_limits(&ctx.config.mcp)?;
    let served = serve_list(ctx, args)?;
    // Sources named on the command line are opened now, so a mistake shows
    // at once (exit 3); saved ones on first use.
    if !args.sources.is_empty() {
        for entry in served.entries() {
            entry.get().map_err(AiqError::Source)?;
        }
    }
    let model = model_settings(ctx, args);
    let mcp = &ctx.config.mcp;
    let tools = Tools {
        served,
        caps: Caps {
            rows: mcp.max_rows,
            bytes: mcp.max_bytes.max(1),
        },
        allow_write: args.allow_write,
        model: model.map(tools::ModelSource::from_settings),
    };
    if !ctx.global.quiet {
        stderr_line(&summary(&tools));
    }
    let limits = Limits {
        timeout: Duration::from_secs(mcp.timeout_secs.max(1)),
        queue: queue_limits(mcp, &ctx.config.query),
    };
    let server = AiqServer::new(tools, limits, audit::AuditLog::new(&ctx.config.home));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Statements run on these threads: DuckDB recurses over nested
        // data as deep as a value goes (see main.rs).
        .thread_stack_size(256 * 1024 * 1024)
        .enable_all()
        .build()
        .map_err(|e| AiqError::Usage(format!("cannot start the server: {e}")))?;
    // The sources (a server's connection owns a runtime of its own) must be
    // dropped outside the async runtime: this clone is the last one.
    let keep = server.clone();
    let result = match &args.http {
        None => runtime.block_on(transport::stdio(server)),
        Some(addr) => {
            let token = http_token(ctx, args)?;
            let sessions = sessions::SessionLimits {
                idle: Duration::from_secs(ctx.config.mcp.session_idle_secs.max(1)),
                max: ctx.config.mcp.max_sessions.max(1),
            };
            runtime.block_on(transport::http(
                server,
                addr,
                token,
                ctx.global.quiet,
                sessions,
            ))
        }
    };
    tracing::info!("shutting down");
    runtime.shutdown_timeout(Duration::from_secs(5));
    drop(keep);
    tracing::info!("stopped");
    result
}

/// Open files one running call may hold (a database connection, a data
/// file, a client's socket), and those the server keeps for itself.
const FILES_PER_CALL: u64 = 4;
const FILES_KEPT: u64 = 64;

/// `[mcp] max_concurrent` checked against what the machine allows: a
/// number the open-files limit cannot hold is refused at start, not met
/// by "Too many open files" under load.
fn check_limits(mcp: &McpConfig) -> Result<(), AiqError> {
    if mcp.max_concurrent == 0 {
        return Err(AiqError::Usage(
            "[mcp] max_concurrent = 0 would run no call at all; set 1 or more (4 when left out)"
                .into(),
        ));
    }
    let Some(files) = open_files_limit() else {
        return Ok(());
    };
    let most = files.saturating_sub(FILES_KEPT) / FILES_PER_CALL;
    let wanted = mcp.max_concurrent as u64;
    if wanted > most.max(1) {
        return Err(AiqError::Usage(format!(
            "[mcp] max_concurrent = {wanted} is more than this machine allows: with its open-files limit of {files} (`ulimit -n`), at most {} calls can run at once; lower it, or raise the limit",
            most.max(1)
        )));
    }
    Ok(())
}

/// The soft limit of open files of this process, where there is one.
fn open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given and nothing else.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        // `rlim_t` is not u64 on every system.
        #[allow(clippy::unnecessary_cast)]
        let current = limit.rlim_cur as u64;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(current)
    }
    #[cfg(not(unix))]
    None
}

/// How many calls run at once, how many may wait, and for how long: the
/// wait defaults to the statement timeout.
pub fn queue_limits(mcp: &McpConfig, query: &QueryConfig) -> queue::QueueLimits {
    queue::QueueLimits {
        concurrent: mcp.max_concurrent.max(1),
        queued: mcp.max_queued,
        wait: Duration::from_secs(mcp.queue_timeout_secs.unwrap_or(query.timeout_secs).max(1)),
    }
}

/// The token HTTP clients must send: `--token`, else `AIQ_MCP_TOKEN`,
/// else a new one, printed once on stderr (SPEC §12).
fn http_token(ctx: &Context<'_>, args: &McpArgs) -> Result<String, AiqError> {
    let given = args
        .token
        .clone()
        .or_else(|| (ctx.env)("AIQ_MCP_TOKEN"))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    if let Some(token) = given {
        return Ok(token);
    }
    let token = auth::generate().map_err(AiqError::Usage)?;
    stderr_line(&format!(
        "aiq mcp: clients must send `Authorization: Bearer {token}` (a new token for this run; give your own with --token or AIQ_MCP_TOKEN)"
    ));
    Ok(token)
}

/// One line on stderr: what is served, how, and what is allowed.
fn summary(tools: &Tools) -> String {
    let names: Vec<&str> = tools
        .served
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    format!(
        "aiq mcp: serving {} ({}; ask {})",
        names.join(", "),
        if tools.allow_write {
            "writes need the client's confirmation"
        } else {
            "read-only"
        },
        match &tools.model {
            Some(m) => format!("uses {}", m.label),
            None => "is off: no model configured".to_string(),
        }
    )
}

/// The model `ask` uses, when one is configured (or a local Ollama
/// answers); `None` leaves `ask` out.
fn model_settings(ctx: &Context<'_>, args: &McpArgs) -> Option<crate::llm::settings::Settings> {
    match crate::llm::settings::resolve(&ctx.config.llm, &args.model.llm_flags(), ctx.env) {
        Ok(settings) => Some(settings),
        Err(e) => {
            tracing::info!("no model for `ask`: {}", e.message);
            None
        }
    }
}

/// The sources to serve: those named, or every saved source.
fn serve_list(ctx: &Context<'_>, args: &McpArgs) -> Result<Served, AiqError> {
    let saved = &ctx.config.sources;
    let mut entries: Vec<Entry> = Vec::new();
    // As many statements on one source as calls may run at once, where
    // its engine allows more than one connection.
    let connections = ctx.config.mcp.max_concurrent.max(1);
    if args.sources.is_empty() {
        for (name, s) in saved.iter() {
            let resolved = source::resolve(name, saved)
                .map(|r| r.spec.engine())
                .map_err(|e| e.0);
            let location = strip_password(&s.url);
            entries.push(
                Entry::new(
                    name.to_string(),
                    location,
                    resolved,
                    name.to_string(),
                    ctx.opener(args.allow_write),
                )
                .with_connections(connections),
            );
        }
        if entries.is_empty() {
            return Err(AiqError::Usage(
                "no sources to serve: give SOURCE… (a file, folder or URL), or save sources with `aiq sources add NAME PATH`".into(),
            ));
        }
        return Ok(Served::new(entries, saved.default.clone()));
    }
    for arg in &args.sources {
        let resolved = ctx.resolve_source(Some(arg))?;
        let engine = resolved.spec.engine();
        let (name, location) = if saved.get(arg).is_some() {
            let url = saved.get(arg).map(|s| s.url.as_str()).unwrap_or(arg);
            (arg.clone(), strip_password(url))
        } else {
            let taken: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            (
                unique(&name_for(arg, &resolved.spec), &taken),
                location_of(arg),
            )
        };
        entries.push(
            Entry::new(
                name,
                location,
                Ok::<EngineKind, String>(engine),
                arg.clone(),
                ctx.opener(args.allow_write),
            )
            .with_connections(connections),
        );
    }
    Ok(Served::new(entries, None))
}

/// A path made absolute, or a URL without its password.
fn location_of(arg: &str) -> String {
    if arg.contains("://") {
        return strip_password(arg);
    }
    std::fs::canonicalize(arg)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| arg.to_string())
}

/// A name for a source given by path or URL: the file's stem, the
/// folder's name or the database's name, in letters, digits, `_` and `-`.
pub fn name_for(arg: &str, spec: &SourceSpec) -> String {
    let raw = match spec {
        SourceSpec::DuckDbMemory => "memory".to_string(),
        SourceSpec::Server(_) => {
            let rest = arg.split_once("://").map(|(_, r)| r).unwrap_or(arg);
            let path = rest.split(['?', '#']).next().unwrap_or(rest);
            match path.split_once('/') {
                Some((_, db)) if !db.trim_matches('/').is_empty() => {
                    db.trim_matches('/').to_string()
                }
                _ => path.rsplit('@').next().unwrap_or(path).to_string(),
            }
        }
        _ => {
            let path = arg.split_once("://").map(|(_, r)| r).unwrap_or(arg);
            let p = Path::new(path.trim_end_matches('/'));
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }
    };
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if clean.trim_matches('_').is_empty() {
        "source".to_string()
    } else {
        clean
    }
}

/// `name`, or `name_2`, `name_3`, … when it is taken.
fn unique(name: &str, taken: &[&str]) -> String {
    if !taken.contains(&name) {
        return name.to_string();
    }
    (2..)
        .map(|n| format!("{name}_{n}"))
        .find(|n| !taken.contains(&n.as_str()))
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests;
