//! The full-screen view, `aiq [SOURCE] --tui` (SPEC §9): conversation,
//! result grid, tool log, input box and status line at once, over the same
//! [`crate::agent::Conversation`] as the chat.
//!
//! The conversation runs on a [`Worker`] thread and reports through the
//! channel sink; this thread only draws and reads keys, so the screen stays
//! live (spinner, elapsed time, streamed text) and Ctrl-C reaches the turn
//! in flight. The shape is state + update + view:
//!
//! - [`App`] (`app.rs`; keys in `keys.rs`, the conversation's events in
//!   `events.rs`): all state, changed only by [`App::update`], which
//!   returns [`Action`]s for the worker;
//! - [`view`] (`view.rs`): a pure drawing of an `App` into a frame, with
//!   the panes' parts in `transcript.rs`, `grid.rs`, `chart.rs` (the
//!   result pane's chart view), `log.rs`, `scroll.rs` and `highlight.rs`;
//! - `terminal.rs`: raw mode and the alternate screen (restored on every
//!   way out, panics included) and the small loop around them.
//!
//! Nothing here decides what a command does: every line, slash commands
//! included, goes to `Conversation::submit`; questions come back as
//! confirmation events and are answered from a dialog.

mod app;
mod chart;
mod events;
mod grid;
mod highlight;
mod keys;
mod log;
mod scroll;
mod terminal;
mod text;
mod transcript;
mod view;

#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod event_tests;
#[cfg(test)]
mod snapshot_tests;

pub use app::{Action, App, Focus, Msg};
pub use grid::WINDOW_ROWS;
pub use view::{layout, view};

use std::io::{self, IsTerminal};
use std::time::Instant;

use rustyline::history::{DefaultHistory, History};
use rustyline::DefaultEditor;

use super::channel::Worker;
use super::start::{open_for_chat, EditorPrompt, StartPrompt};
use super::stderr_line;
use crate::cli::{AskArgs, RunArgs};
use crate::context::Context;
use crate::error::AiqError;
use crate::home;
use crate::session::saved_lines;

/// The view needs a terminal on both ends.
pub fn check_terminal() -> Result<(), AiqError> {
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        return Err(AiqError::Usage(
            "--tui needs a terminal on stdin and stdout; for scripts ask with -q \"…\" or pipe the question".into(),
        ));
    }
    Ok(())
}

/// Starts the view; returns when the user quits, after the session is
/// saved and the terminal is back as it was.
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    run: &RunArgs,
    ask: &AskArgs,
) -> Result<(), AiqError> {
    check_terminal()?;
    let mut start = Start::default();
    let (opened, keep) = open_for_chat(
        ctx,
        source_arg,
        ask.session.as_deref(),
        run.allow_write,
        &mut start,
    )?;
    let model = ctx.connect_model(&ask.model)?;
    let conversation = ctx.conversation(model, opened, keep, run, ask);
    let status = conversation.status();
    let earlier = conversation.thread().history().to_vec();

    let history_file = home::input_history(&ctx.config.home);
    let mut history = DefaultHistory::new();
    if home::create_private_dir(&ctx.config.home).is_ok() {
        let _ = history.load(&history_file);
    }
    let entries: Vec<String> = history.iter().cloned().collect();

    let worker = Worker::spawn_holding(conversation, WINDOW_ROWS)
        .map_err(|e| AiqError::Usage(format!("cannot start the conversation's thread: {e}")))?;
    // A stale restored session asks first; its question comes as a dialog.
    worker.run(|conversation, sink| conversation.offer_fresh_context(sink));
    let size = crossterm::terminal::size().unwrap_or((80, 24));
    let mut app = App::new(status, entries, &start.notes, Instant::now(), size);
    app.restored(&earlier);
    let ended = terminal::run(&mut app, worker, &mut history, &history_file);

    let (warnings, saved) = app.farewell();
    for warning in warnings {
        stderr_line(&format!("aiq: warning: {warning}"));
    }
    if let Some(path) = saved {
        stderr_line(saved_lines(&path).trim_end());
    }
    ended.map_err(|e| {
        AiqError::Usage(format!(
            "cannot drive this terminal: {e} (the chat works without --tui)"
        ))
    })
}

/// Starting before the screen is taken: notes go to stderr (and later to
/// the log pane), a source is asked for at a plain line prompt.
#[derive(Default)]
struct Start {
    notes: Vec<String>,
    editor: Option<DefaultEditor>,
}

impl StartPrompt for Start {
    fn say(&mut self, line: &str) {
        stderr_line(line);
        self.notes.push(line.to_string());
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        if self.editor.is_none() {
            self.editor = DefaultEditor::new().ok();
        }
        EditorPrompt(self.editor.as_mut()?).ask(prompt)
    }
}
