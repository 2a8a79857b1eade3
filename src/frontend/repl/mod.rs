//! Chat mode (SPEC §1, §6, §7): a rustyline loop over a [`Conversation`].
//! This file is input and rendering only — line editing, Tab completion,
//! the `[y/N]` prompts — while the conversation carries out questions and
//! slash commands and saves the session.

mod helper;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;

use self::helper::{joined, ChatHelper};
use super::console::Console;
use super::sink::{is_yes, CollectOptions, Collector};
use super::stderr_line;
use crate::agent::{Confirmation, Conversation, EventSink, Flow, Keep, Mode, Opened};
use crate::cli::{AskArgs, RunArgs};
use crate::context::{render_options, Context};
use crate::error::AiqError;
use crate::home;
use crate::interrupt;
use crate::schema::Catalog;
use crate::session::Session;

type ChatEditor = Editor<ChatHelper, DefaultHistory>;

/// Starts the chat.
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    run: &RunArgs,
    ask: &AskArgs,
) -> Result<(), AiqError> {
    let names = Arc::new(Mutex::new(Vec::new()));
    let mut editor: ChatEditor =
        Editor::new().map_err(|e| AiqError::Usage(format!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(ChatHelper {
        names: Arc::clone(&names),
    }));
    let history_file = home::input_history(&ctx.config.home);
    if home::create_private_dir(&ctx.config.home).is_ok() {
        let _ = editor.load_history(&history_file);
    }

    let restored = match &ask.session {
        Some(path) => match Session::load(path) {
            Ok(s) => Some(s),
            Err(e) => {
                stderr_line(&format!("aiq: {e}; starting a new session"));
                None
            }
        },
        None => None,
    };
    let wanted = source_arg
        .map(str::to_string)
        .or_else(|| restored.as_ref().map(|s| s.data_source.clone()))
        .or_else(|| ctx.config.sources.default.clone());
    let opened = match wanted {
        Some(name) => match ctx.open_source(Some(&name), run.allow_write) {
            Ok(o) => o,
            Err(e) if source_arg.is_some() => return Err(e),
            Err(e) => {
                stderr_line(&format!(
                    "aiq: the data source '{name}' cannot be opened: {e}"
                ));
                pick_source(ctx, &mut editor, run.allow_write)?
            }
        },
        None => pick_source(ctx, &mut editor, run.allow_write)?,
    };

    let model = ctx.connect_model(&ask.model)?;
    let keep = restored.map(Keep::Session).unwrap_or(Keep::NewSession);
    let conversation = ctx.conversation(model, opened, keep, run, ask);
    let mut chat = Chat {
        ctx,
        conversation,
        run: run.clone(),
        names,
        editor,
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

/// Lists the saved sources and asks for one until something opens.
fn pick_source(
    ctx: &Context<'_>,
    editor: &mut ChatEditor,
    allow_write: bool,
) -> Result<Opened, AiqError> {
    let names: Vec<&str> = ctx.config.sources.names().collect();
    if names.is_empty() {
        stderr_line("aiq: no sources are saved yet.");
    } else {
        stderr_line(&format!("aiq: saved sources: {}", names.join(", ")));
    }
    loop {
        match editor.readline("Source (a saved name or a path): ") {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => match ctx.open_source(Some(line.trim()), allow_write) {
                Ok(o) => return Ok(o),
                Err(e) => stderr_line(&format!("aiq: {e}")),
            },
            Err(ReadlineError::Interrupted) => continue,
            Err(_) => return Err(AiqError::Usage("no data source chosen".into())),
        }
    }
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
    names: Arc<Mutex<Vec<String>>>,
    editor: ChatEditor,
}

impl Chat<'_> {
    fn run_loop(&mut self, history_file: &std::path::Path) {
        loop {
            let prompt = match self.conversation.mode() {
                Mode::Sql => format!("aiq[{}]> ", self.conversation.label()),
                Mode::Lua => format!("aiq[{} lua]> ", self.conversation.label()),
            };
            let input = match self.editor.readline(&prompt) {
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
        let render = render_options(self.ctx, &self.run, format);
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let collect = CollectOptions {
            yes: self.run.yes,
            verbose: self.ctx.global.verbose,
            ..CollectOptions::default()
        };
        let collector = Collector::new(&mut out, format, render, collect);
        let editor = &mut self.editor;
        let mut console = Console::new(collector, self.ctx.color_stderr(), self.run.yes)
            .reporting_errors()
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

fn set_names(names: &Arc<Mutex<Vec<String>>>, catalog: &Catalog) {
    let mut all: Vec<String> = Vec::new();
    for t in &catalog.tables {
        all.push(t.name.clone());
        all.extend(t.columns.iter().map(|c| c.name.clone()));
    }
    all.sort();
    all.dedup();
    if let Ok(mut n) = names.lock() {
        *n = all;
    }
}
