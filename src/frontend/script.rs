//! `aiq SOURCE --lua FILE` (SPEC §8): a Lua script in the sandbox, no model.
//! A thin front end over the same sandbox the model's programs run in: the
//! script's output and result table go to stdout in `--format`, everything
//! else to stderr; exit 0, 1 for a Lua error or a limit, 2 for a script that
//! cannot be read, 5 for a refused statement the script did not catch, 130
//! for Ctrl-C.

use std::io::{self, Read, Write};
use std::path::Path;

use super::charts;
use crate::agent::runner::finish_turn;
use crate::agent::{Answer, LastResult};
use crate::cancel::TurnSlot;
use crate::cli::RunArgs;
use crate::context::Context;
use crate::error::AiqError;
use crate::interrupt;
use crate::lua::{self, AuditInfo, Origin, Program, RunEnv};

/// A script as read: its text, how errors name it, where it came from.
struct Script {
    code: String,
    name: String,
    origin: Origin,
    file: Option<String>,
}

/// Runs the script `--lua` names against SOURCE.
pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, args: &RunArgs) -> Result<(), AiqError> {
    let Some(file) = args.lua.as_deref() else {
        return Err(AiqError::Usage(
            "--lua needs a script file (or - for stdin)".into(),
        ));
    };
    charts::check(args, true)?;
    let script = read(file)?;
    interrupt::install();
    let waiting = super::progress::opening(ctx, source_arg);
    let opened = ctx.open_source(source_arg, args.allow_write)?;
    drop(waiting);
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut sink = super::stdout_sink(ctx, args, &mut out);
    let info = AuditInfo {
        home: ctx.config.home.clone(),
        session: None,
        source: opened.session_name.clone(),
        origin: script.origin,
        file: script.file.clone(),
    };
    let workdir = std::env::current_dir()
        .map_err(|e| AiqError::Usage(format!("cannot use the working directory: {e}")))?;
    let slot = TurnSlot::default();
    // The result the script shows with `aiq.table`, for `--chart`.
    let mut last = LastResult::default();
    last.keep(charts::wanted(args));
    let result = {
        let _running = interrupt::Running::new(slot.handle());
        let (cancel, _turn) = slot.begin();
        let mut tee = last.tee(sink.as_mut(), None);
        let ran = lua::run(
            &Program {
                code: &script.code,
                name: &script.name,
            },
            RunEnv {
                source: opened.source.as_ref(),
                catalog: &opened.catalog,
                policy: opened.guard.policy(args.allow_write),
                cancel: &cancel,
                sink: &mut tee,
                limits: &ctx.config.lua,
                workdir: &workdir,
                audit: Some(&info),
                last_in_process: true,
            },
        )
        .map(|report| Answer {
            text: String::new(),
            code: Some(script.code.clone()),
            rows: Some(report.rows),
        })
        .map_err(|f| lua::failure(f).error);
        finish_turn(&mut tee, ran)
    };
    let charted = match &result {
        Ok(_) => charts::draw(&last, args, sink.as_mut()),
        Err(_) => Ok(()),
    };
    drop(sink);
    let flushed = out.flush();
    super::finished(result, flushed).and(charted)
}

/// Reads the script: a file, or stdin for `-`. A script that cannot be read
/// is a usage error (exit 2); precompiled bytecode is refused like any
/// binary chunk (exit 1).
fn read(file: &str) -> Result<Script, AiqError> {
    let (bytes, name, origin, shown) = if file == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| AiqError::Usage(format!("cannot read the Lua script from stdin: {e}")))?;
        (bytes, "stdin".to_string(), Origin::Stdin, None)
    } else {
        let bytes = std::fs::read(file).map_err(|e| {
            let why = match e.kind() {
                io::ErrorKind::NotFound => "no such file".to_string(),
                _ => e.to_string(),
            };
            AiqError::Usage(format!(
                "cannot read the Lua script {file}: {why} (give the path of a .lua file, or - for stdin)"
            ))
        })?;
        let name = Path::new(file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.to_string());
        (bytes, name, Origin::File, Some(file.to_string()))
    };
    if bytes.starts_with(b"\x1bLua") {
        return Err(AiqError::Query(format!(
            "the Lua program failed: {name} is precompiled bytecode; aiq runs Lua source text only"
        )));
    }
    let code = String::from_utf8(bytes).map_err(|_| {
        AiqError::Usage(format!(
            "cannot read the Lua script {name}: it is not UTF-8 text"
        ))
    })?;
    Ok(Script {
        code,
        name,
        origin,
        file: shown,
    })
}
