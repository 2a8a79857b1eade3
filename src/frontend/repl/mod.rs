//! Chat mode (SPEC §1, §6, §7): a rustyline loop over a [`Conversation`].
//! This file is input and rendering only — line editing, Tab completion,
//! the `[y/N]` prompts — while the conversation carries out questions and
//! slash commands and saves the session.

mod helper;

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;

use self::helper::{joined, ChatHelper, Names};
use super::console::Console;
use super::output::render_options;
use super::sink::{is_yes, CollectOptions, Collector};
use super::start::{open_for_chat, EditorPrompt};
use super::stderr_line;
use crate::agent::{Confirmation, Conversation, EventSink, Flow, Mode};
use crate::cli::{AskArgs, RunArgs};
use crate::context::Context;
use crate::error::AiqError;
use crate::home;
use crate::interrupt;
use crate::schema::Catalog;

type ChatEditor = Editor<ChatHelper, DefaultHistory>;

/// Starts the chat.
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    run: &RunArgs,
    ask: &AskArgs,
) -> Result<(), AiqError> {
    let names = Arc::new(Mutex::new(Names::default()));
    let mut editor: ChatEditor =
        Editor::new().map_err(|e| AiqError::Usage(format!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(ChatHelper {
        names: Arc::clone(&names),
    }));
    let history_file = home::input_history(&ctx.config.home);
    if home::create_private_dir(&ctx.config.home).is_ok() {
        let _ = editor.load_history(&history_file);
    }

    let (opened, keep) = open_for_chat(
        ctx,
        source_arg,
        ask.session.as_deref(),
        run.allow_write,
        &mut EditorPrompt(&mut editor),
    )?;
    let model = ctx.connect_model(&ask.model)?;
    let conversation = ctx.conversation(model, opened, keep, run, ask);
    let mut chat = Chat {
        ctx,
        conversation,
        run: run.clone(),
        names,
        editor,
        edit: None,
    };
    chat.set_names();
    chat.with_console(|conversation, sink| conversation.offer_fresh_context(sink));
    interrupt::install_for_chat();
    // One handle for the whole chat: it reaches whichever turn is in
    // flight, across `/source` and every turn.
    let _running = interrupt::Running::new(chat.conversation.canceller());
    let thread = chat.conversation.thread();
    stderr_line(&format!(
        "aiq: chatting with {} ({}, {} tables) through {} {}. /help lists commands; Ctrl-D leaves.",
        chat.conversation.label(),
        thread.catalog().engine,
        thread.catalog().tables.len(),
        thread.model().provider(),
        thread.model().model()
    ));
    chat.run_loop(&history_file);
    chat.with_console(|conversation, sink| conversation.leave(sink));
    Ok(())
}

/// A yes/no question at the line editor's prompt.
fn ask_in_editor(editor: &mut ChatEditor, c: &Confirmation) -> bool {
    if let Some(detail) = &c.detail {
        stderr_line(detail);
    }
    match editor.readline(&format!("{} [y/N] ", c.question)) {
        Ok(answer) => is_yes(&answer),
        Err(_) => false,
    }
}

struct Chat<'a> {
    ctx: &'a Context<'a>,
    conversation: Conversation,
    run: RunArgs,
    names: Arc<Mutex<Names>>,
    editor: ChatEditor,
    /// Text for the next input line (`/edit`).
    edit: Option<String>,
}

impl Chat<'_> {
    fn run_loop(&mut self, history_file: &std::path::Path) {
        loop {
            let prompt = match self.conversation.mode() {
                Mode::Sql => format!("aiq[{}]> ", self.conversation.label()),
                Mode::Lua => format!("aiq[{} lua]> ", self.conversation.label()),
            };
            let read = match self.edit.take() {
                Some(text) => self.editor.readline_with_initial(&prompt, (&text, "")),
                None => self.editor.readline(&prompt),
            };
            let input = match read {
                Ok(line) => joined(&line),
                Err(ReadlineError::Interrupted) => continue,
                Err(ReadlineError::Eof) => return,
                Err(e) => {
                    stderr_line(&format!("aiq: cannot read input: {e}"));
                    return;
                }
            };
            if input.is_empty() {
                continue;
            }
            let _ = self.editor.add_history_entry(input.as_str());
            let _ = self.editor.append_history(history_file);
            interrupt::reset();
            // `/edit`: the last SQL on the next line, as a `/sql` to change.
            if input.trim().eq_ignore_ascii_case("/edit") {
                if let Some(sql) = self.conversation.last_sql() {
                    self.edit = Some(format!("/sql {sql}"));
                    continue;
                }
            }
            let flow = self.submit(&input);
            self.set_names();
            if flow == Flow::Exit {
                return;
            }
        }
    }

    /// One line through the conversation, shown on this terminal.
    fn submit(&mut self, line: &str) -> Flow {
        let mut flow = Flow::Continue;
        self.with_console(|conversation, sink| flow = conversation.submit(line, sink));
        flow
    }

    /// Runs `f` with the conversation and a console sink on this terminal
    /// (results to stdout in the current format, the rest to stderr,
    /// confirmations at the line editor's prompt).
    fn with_console(&mut self, f: impl FnOnce(&mut Conversation, &mut dyn EventSink)) {
        let format = self.conversation.format();
        let mut render = render_options(self.ctx, &self.run, format);
        render.in_chat = true;
        if let Some(rows) = self.conversation.max_rows() {
            render.max_rows = rows;
        }
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let collect = CollectOptions {
            pager: super::output::pager_screen(self.ctx, &self.run),
            yes: self.run.yes,
            verbose: self.ctx.global.verbose,
            ..CollectOptions::default()
        };
        let collector = Collector::new(&mut out, format, render, collect);
        let editor = &mut self.editor;
        let mut console = Console::new(collector, self.ctx.color_stderr(), self.run.yes)
            .quiet(self.ctx.global.quiet)
            .stdout_tty(io::stdout().is_terminal())
            .reporting_errors()
            .in_chat()
            .asking_with(Box::new(move |c| ask_in_editor(editor, c)));
        f(&mut self.conversation, &mut console);
        drop(console);
        let _ = out.flush();
    }

    /// Table and column names for Tab completion.
    fn set_names(&self) {
        set_names(&self.names, self.conversation.catalog());
    }
}

fn set_names(names: &Arc<Mutex<Names>>, catalog: &Catalog) {
    let tables: Vec<String> = catalog.tables.iter().map(|t| t.name.clone()).collect();
    let mut columns: Vec<String> = catalog
        .tables
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| c.name.clone()))
        .collect();
    columns.sort();
    columns.dedup();
    if let Ok(mut n) = names.lock() {
        *n = Names { tables, columns };
    }
}
