//! Single-shot mode (SPEC §1, §2): one question from `-q` or from stdin,
//! the answer on stdout in `--format`, an exit code per SPEC §2.4, and no
//! prompt ever (writes need `--yes`). A thin layer over [`Conversation`]:
//! with `-s FILE` the question is one more turn of that session.

use std::io::{self, IsTerminal, Read, Write};

use super::charts;
use super::console::Console;
use super::output::output_setup;
use super::sink::{CollectOptions, Collector};
use crate::agent::{EventSink, Keep};
use crate::cli::{AskArgs, RunArgs};
use crate::context::Context;
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
    charts::check(run, true)?;
    // `-s FILE -q …`: one follow-up inside a saved session (SPEC §7.3).
    let session = match &ask.session {
        Some(path) => {
            let path = crate::session::locate(&ctx.config.home, path);
            Some(Session::load(&path).map_err(|e| AiqError::Usage(format!("cannot restore {e}")))?)
        }
        None => None,
    };
    let wanted = source_arg
        .map(str::to_string)
        .or_else(|| session.as_ref().map(|s| s.data_source.clone()));
    let model = ctx.connect_model(&ask.model)?;
    interrupt::install();
    let waiting = super::progress::opening(ctx, wanted.as_deref());
    let opened = ctx.open_source(wanted.as_deref(), run.allow_write)?;
    drop(waiting);
    let keep = session
        .map(|s| Keep::Session(Box::new(s)))
        .unwrap_or(Keep::Nothing);
    let mut conversation = ctx.conversation(model, opened, keep, run, ask);
    conversation.keep_results(charts::wanted(run));

    let (format, mut render) = output_setup(ctx, run);
    if run.chart_out.is_some() {
        // The image needs every row: the table counts them all.
        render.count_budget = None;
    }
    // With a machine format (or a chart, or `--sql-only`) asked for
    // explicitly, words are not a result.
    let words_refused =
        run.format.is_some_and(|f| !f.is_for_people()) || charts::wanted(run) || ask.sql_only;
    let stdout = io::stdout();
    let stdout_tty = stdout.is_terminal();
    let stderr_tty = io::stderr().is_terminal();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let collect = CollectOptions {
        sql_only: ask.sql_only,
        show_sql: ask.show_sql,
        yes: run.yes,
        // On a terminal the streamed answer was the prose already.
        prose: !(words_refused || (stdout_tty && stderr_tty)),
        verbose: ctx.global.verbose,
        charting: charts::replaces_table(run),
        ascii_charts: ctx.ascii_charts(),
        pager: super::output::pager_screen(ctx, run),
    };
    let collector = Collector::new(&mut out, format, render, collect);
    let mut sink: Box<dyn EventSink + '_> = if stderr_tty {
        Box::new(
            Console::new(collector, ctx.color_stderr(), run.yes)
                .quiet(ctx.global.quiet)
                .stdout_tty(stdout_tty),
        )
    } else {
        Box::new(collector)
    };
    let result = {
        let _running = interrupt::Running::new(conversation.canceller());
        conversation.ask(question, sink.as_mut())
    };
    let charted = match &result {
        Ok(answer) if !answer.is_prose() && !ask.sql_only => {
            charts::draw(conversation.last_result(), run, sink.as_mut())
        }
        _ => Ok(()),
    };
    drop(sink);
    let _ = out.flush();
    // `-s FILE -q`: a turn that did not reach the file is a failed write.
    if let (Some(why), false) = (conversation.unsaved(), interrupt::interrupted()) {
        if result.is_ok() {
            return Err(AiqError::Source(format!(
                "{why}; the answer above is not in the session (free some space or check the file's permissions)"
            )));
        }
    }
    match result {
        Ok(answer) if answer.is_prose() && words_refused => {
            let words = if stderr_tty {
                "(shown above)".to_string()
            } else {
                answer.text.trim().to_string()
            };
            Err(AiqError::Query(format!(
                "the model answered in words, not SQL: {words}"
            )))
        }
        Ok(_) => charted,
        Err(_) if interrupt::interrupted() => Err(AiqError::Interrupted),
        Err(e) => Err(e.into()),
    }
}
