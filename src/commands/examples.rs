//! `aiq examples list|add|rm|import|check` (SPEC §14): a source's verified
//! examples — questions whose SQL a person confirmed — in
//! `$AIQ_HOME/examples/NAME.jsonl`. Every SQL added is run through the
//! gate against the source first (its first row only), so what is kept
//! works today; `check` says which no longer do.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::{write_stdout, Context};
use crate::agent::runner::{run_statement_for, StatementError};
use crate::agent::verified::{add_locked, update_locked};
use crate::agent::{AgentError, Event, EventSink, Opened};
use crate::cancel::CancelToken;
use crate::cli::ExamplesCommand;
use crate::error::AiqError;
use crate::examples::Store;
use crate::source::{Column, EnoughRows, RowSink, Value};

pub fn run(ctx: &Context<'_>, command: ExamplesCommand) -> Result<(), AiqError> {
    match command {
        ExamplesCommand::List { source } => list(ctx, source.as_deref()),
        ExamplesCommand::Add {
            source,
            question,
            sql,
        } => {
            let opened = ctx.open_source(Some(&source), false)?;
            works(&opened, &sql).map_err(|why| {
                AiqError::Query(format!(
                    "the example was not kept: its SQL must run on {source} first ({why})"
                ))
            })?;
            let path = file_of(ctx, &source)?;
            let schema = opened.source.fingerprint().unwrap_or_default();
            let (id, replaced) =
                add_locked(&path, &question, &sql, &schema).map_err(|e| write_error(&path, e))?;
            let how = match replaced {
                true => " (replacing the SQL kept before for this question)",
                false => "",
            };
            write_stdout(format!("kept as example {id} in {}{how}\n", path.display()).as_bytes())
        }
        ExamplesCommand::Rm { source, id } => {
            let path = file_of(ctx, &source)?;
            let removed = update_locked(&path, |store| Ok(store.remove(&id)))
                .map_err(|e| write_error(&path, e))?
                .map_err(|why| AiqError::Usage(format!("{}: {why}", path.display())))?;
            if removed {
                write_stdout(format!("removed example {id}\n").as_bytes())
            } else {
                Err(AiqError::Usage(format!(
                    "no example {id} in {} (see `aiq examples list {source}`)",
                    path.display()
                )))
            }
        }
        ExamplesCommand::Import { source, file } => import(ctx, &source, &file),
        ExamplesCommand::Check { source } => check(ctx, source.as_deref()),
    }
}

/// The examples file of a source.
fn file_of(ctx: &Context<'_>, source: &str) -> Result<std::path::PathBuf, AiqError> {
    let key = ctx.notes_key(Some(source))?;
    Ok(crate::home::examples_file(&ctx.config.home, &key))
}

fn write_error(path: &Path, e: io::Error) -> AiqError {
    AiqError::Usage(format!("cannot write {}: {e}", path.display()))
}

fn load(path: &Path) -> Result<Store, AiqError> {
    Store::load(path).map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", path.display())))
}

fn list(ctx: &Context<'_>, source: Option<&str>) -> Result<(), AiqError> {
    let key = ctx.notes_key(source)?;
    let path = crate::home::examples_file(&ctx.config.home, &key);
    let store = load(&path)?;
    if store.skipped > 0 {
        crate::error::stderr_line(&format!(
            "aiq: {}: {} line(s) are not examples: not sent, and kept in the file as they are",
            path.display(),
            store.skipped
        ));
    }
    if store.examples.is_empty() {
        crate::error::stderr_line(&format!(
            "aiq: no verified examples yet ({}); keep one with /good in the chat or `aiq examples add`",
            path.display()
        ));
        return Ok(());
    }
    let mut out = String::new();
    for e in &store.examples {
        let day = e.added.get(..10).unwrap_or(&e.added);
        let _ = writeln!(out, "{:>4}  {day}  {}", e.id, e.question);
        for line in e.sql.lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    write_stdout(out.as_bytes())
}

/// `import`: a suite's single questions (follow-ups need their earlier
/// turns, so they are left out) or a CSV with `question,sql`.
fn import(ctx: &Context<'_>, source: &str, file: &Path) -> Result<(), AiqError> {
    let pairs = read_pairs(file)?;
    let opened = ctx.open_source(Some(source), false)?;
    let path = file_of(ctx, source)?;
    let schema = opened.source.fingerprint().unwrap_or_default();
    let mut report = String::new();
    let mut kept = Vec::new();
    for (question, sql) in &pairs.pairs {
        match works(&opened, sql) {
            Ok(()) => kept.push((question.clone(), sql.clone())),
            Err(why) => {
                let _ = writeln!(report, "skipped: {question} — {why}");
            }
        }
    }
    let added = update_locked(&path, |store| {
        for (q, sql) in &kept {
            store
                .add(q, sql, &schema, chrono::Utc::now())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        }
        Ok(kept.len())
    })
    .map_err(|e| write_error(&path, e))?;
    let _ = writeln!(
        report,
        "imported {added} example(s) into {}{}{}",
        path.display(),
        match pairs.pairs.len() - added {
            0 => String::new(),
            n => format!("; {n} skipped (their SQL does not run here)"),
        },
        match pairs.follow_ups {
            0 => String::new(),
            n => format!("; {n} follow-up(s) left out (they need their earlier turns)"),
        }
    );
    write_stdout(report.as_bytes())
}

/// What a file to import holds.
struct Pairs {
    pairs: Vec<(String, String)>,
    follow_ups: usize,
}

fn read_pairs(file: &Path) -> Result<Pairs, AiqError> {
    let is_csv = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if !is_csv {
        let suite = crate::eval::suite::Suite::load(file).map_err(AiqError::Usage)?;
        let follow_ups = suite.cases.iter().filter(|c| c.is_follow_up()).count();
        let pairs = suite
            .cases
            .into_iter()
            .filter(|c| !c.is_follow_up())
            .map(|c| (c.question().to_string(), c.sql))
            .collect();
        return Ok(Pairs { pairs, follow_ups });
    }
    let bad = |e: String| AiqError::Usage(format!("{}: {e}", file.display()));
    let mut reader = csv::Reader::from_path(file).map_err(|e| bad(e.to_string()))?;
    let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let at = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                bad(format!(
                    "no `{name}` column (the header must name question and sql)"
                ))
            })
    };
    let (q, s) = (at("question")?, at("sql")?);
    let mut pairs = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let question = record.get(q).unwrap_or("").trim();
        let sql = record.get(s).unwrap_or("").trim();
        if question.is_empty() || sql.is_empty() {
            return Err(bad(format!("row {} has no question or no sql", i + 2)));
        }
        pairs.push((question.to_string(), sql.to_string()));
    }
    Ok(Pairs {
        pairs,
        follow_ups: 0,
    })
}

/// `check`: every example's SQL through the gate and run against today's
/// schema; exit 1 when any no longer works.
fn check(ctx: &Context<'_>, source: Option<&str>) -> Result<(), AiqError> {
    let opened = ctx.open_source(source, false)?;
    let key = crate::notes::key(&opened.session_name);
    let path = crate::home::examples_file(&ctx.config.home, &key);
    let store = load(&path)?;
    let mut failed = Vec::new();
    for e in &store.examples {
        if let Err(why) = works(&opened, &e.sql) {
            failed.push(format!("{}: {} — {why}", e.id, e.question));
        }
    }
    let total = store.examples.len();
    let mut out = String::new();
    for f in &failed {
        let _ = writeln!(out, "no longer works: {f}");
    }
    let _ = writeln!(
        out,
        "{} of {total} example(s) work against {}",
        total - failed.len(),
        opened.label
    );
    write_stdout(out.as_bytes())?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(AiqError::Query(format!(
            "{} example(s) no longer work: fix their SQL (`aiq examples add` with the same question replaces it) or remove them",
            failed.len()
        )))
    }
}

/// Whether `sql` passes the gate and runs on the source (up to its first
/// row); the error says why not.
fn works(opened: &Opened, sql: &str) -> Result<(), String> {
    let cancel = CancelToken::new();
    let result = run_statement_for(
        opened.source.as_ref(),
        sql,
        opened.guard.policy(false),
        &cancel,
        &mut Declining,
        &mut FirstRow,
    );
    match result {
        Ok(_) => Ok(()),
        Err(StatementError::Output(e)) if EnoughRows::is(&e) => Ok(()),
        Err(e) => Err(AgentError::from(e).to_string()),
    }
}

/// Answers no to any confirmation: examples are read-only.
struct Declining;

impl EventSink for Declining {
    fn event(&mut self, event: Event) -> io::Result<()> {
        if let Event::Confirm(c) = event {
            c.answer(false);
        }
        Ok(())
    }
}

/// Stops a statement at its first row.
struct FirstRow;

impl RowSink for FirstRow {
    fn columns(&mut self, _: &[Column]) -> io::Result<()> {
        Ok(())
    }
    fn row(&mut self, _: &[Value]) -> io::Result<()> {
        Err(EnoughRows::error())
    }
}
