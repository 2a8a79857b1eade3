//! Single-shot mode (SPEC §1, §2): one question from `-q` or from stdin,
//! the answer on stdout in `--format`, an exit code per SPEC §2.4, and no
//! prompt ever (writes need `--yes`).

use std::io::{self, IsTerminal, Read};

use super::console::Console;
use super::sink::{CollectOptions, Collector};
use crate::agent::{AgentError, EventSink, Thread, ThreadOptions};
use crate::cli::{AskArgs, RunArgs};
use crate::commands::{output_setup, Context};
use crate::error::AiqError;
use crate::interrupt;
use crate::session::Session;

/// The question: `-q`, or all of stdin when it is not a terminal.
pub fn question(args: &AskArgs) -> Result<Option<String>, AiqError> {
    if let Some(q) = &args.question {
        return Ok(Some(q.clone()));
    }
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| AiqError::Usage(format!("cannot read the question from stdin: {e}")))?;
    Ok(Some(text))
}

/// Answers one question.
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    run: &RunArgs,
    ask: &AskArgs,
    question: &str,
) -> Result<(), AiqError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(AiqError::Usage(
            "the question is empty: pass it with -q \"…\" or on stdin".into(),
        ));
    }
    // `-s FILE -q …`: one follow-up inside a saved session (SPEC §7.3).
    let mut session = match &ask.session {
        Some(path) => Some(Session::load(path).map_err(|e| AiqError::Usage(e.to_string()))?),
        None => None,
    };
    let wanted = source_arg
        .map(str::to_string)
        .or_else(|| session.as_ref().map(|s| s.data_source.clone()));
    let model = ctx.connect_model(&ask.model)?;
    interrupt::install();
    let opened = ctx.open_source(wanted.as_deref(), run.allow_write)?;
    let mut thread = Thread::new(
        model,
        opened.source,
        opened.catalog,
        ThreadOptions {
            history_limit: ask.history_limit.unwrap_or(ctx.config.chat.history_limit),
            allow_write: run.allow_write,
            execute: !ask.sql_only,
            today: None,
        },
    );

    let (format, render) = output_setup(ctx, run);
    let stdout = io::stdout();
    let stdout_tty = stdout.is_terminal();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let collect = CollectOptions {
        sql_only: ask.sql_only,
        show_sql: ask.show_sql,
        yes: run.yes,
    };
    let collector = Collector::new(&mut out, format, render, collect);
    let mut console;
    let mut collector_only;
    let sink: &mut dyn EventSink = if io::stderr().is_terminal() {
        console = Console::new(collector, ctx.color_stderr(), stdout_tty);
        &mut console
    } else {
        collector_only = collector;
        &mut collector_only
    };
    if let Some(s) = &session {
        thread.set_history(s.messages.clone());
        thread.set_context_start(s.context_start);
    }
    let result = {
        let _running = interrupt::Running::new(thread.cancel_handle());
        thread.ask(question, sink)
    };
    if let Some(s) = session.as_mut() {
        s.messages = thread.history().to_vec();
        s.context_start = thread.context_start();
        s.data_source = opened.session_name;
        s.database_type = thread.engine().as_str().to_string();
        if let Err(e) = s.save() {
            eprintln!(
                "aiq: warning: cannot update the session {}: {e}",
                s.path.display()
            );
        }
    }
    match result {
        Ok(_) => Ok(()),
        Err(_) if interrupt::interrupted() => Err(AiqError::Interrupted),
        Err(AgentError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(AgentError::Output(e)) => Err(AiqError::Query(format!("cannot write the result: {e}"))),
        Err(AgentError::Llm(e)) => Err(e.into()),
        Err(AgentError::Refused(m)) => Err(AiqError::Refused(m)),
        Err(AgentError::QueryFailed(m)) => Err(AiqError::Query(m)),
        Err(e @ AgentError::EmptyAnswer) => Err(AiqError::Query(e.to_string())),
        Err(AgentError::Cancelled) => Err(AiqError::Interrupted),
    }
}
