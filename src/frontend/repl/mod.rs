//! Chat mode (SPEC §1, §6, §7): a rustyline loop over the same
//! [`Thread`] as single-shot. Questions go to the thread; slash commands act
//! on the thread and the session; the session file is saved after every
//! turn and on leaving, with exactly the two lines SPEC §7.1 prints.

mod commands;
mod helper;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;

use self::commands::{parse, SlashCommand};
use self::helper::{joined, ChatHelper};
use super::console::Console;
use super::sink::{CollectOptions, Collector};
use crate::agent::{AgentError, Thread, ThreadOptions};
use crate::cli::{AskArgs, RunArgs};
use crate::commands::{output_setup, Context, Opened};
use crate::config::create_private_dir;
use crate::error::AiqError;
use crate::interrupt;
use crate::render::{Format, RenderOptions};
use crate::schema::Catalog;
use crate::session::{self, display_path, Session};

/// What a slash command asks the loop to do next.
enum Next {
    Continue,
    Exit,
}

struct Chat<'a> {
    ctx: &'a Context<'a>,
    thread: Thread,
    session: Session,
    format: Format,
    render: RenderOptions,
    run: RunArgs,
    label: String,
    names: Arc<Mutex<Vec<String>>>,
    editor: Editor<ChatHelper, DefaultHistory>,
}

/// Starts the chat.
pub fn run(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    run: &RunArgs,
    ask: &AskArgs,
) -> Result<(), AiqError> {
    let names = Arc::new(Mutex::new(Vec::new()));
    let mut editor: Editor<ChatHelper, DefaultHistory> =
        Editor::new().map_err(|e| AiqError::Usage(format!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(ChatHelper {
        names: Arc::clone(&names),
    }));
    let history_file = ctx.config.home.join("input_history");
    if create_private_dir(&ctx.config.home).is_ok() {
        let _ = editor.load_history(&history_file);
    }

    let restored = match &ask.session {
        Some(path) => match Session::load(path) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("aiq: {e}; starting a new session");
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
                eprintln!("aiq: the data source '{name}' cannot be opened: {e}");
                pick_source(ctx, &mut editor, run.allow_write)?
            }
        },
        None => pick_source(ctx, &mut editor, run.allow_write)?,
    };

    let model = ctx.connect_model(&ask.model)?;
    let Opened {
        source,
        catalog,
        session_name,
        label,
    } = opened;
    let database_type = source.kind().as_str();
    let mut thread = Thread::new(
        model,
        source,
        catalog,
        ThreadOptions {
            history_limit: ask.history_limit.unwrap_or(ctx.config.chat.history_limit),
            allow_write: run.allow_write,
            execute: true,
            today: None,
        },
    );
    let session = match restored {
        Some(mut s) => {
            thread.set_history(s.messages.clone());
            thread.set_context_start(s.context_start);
            let age = Utc::now() - s.last_updated;
            let stale = age > chrono::Duration::hours(ctx.config.chat.stale_after_hours as i64);
            if stale && thread.context_start() < s.messages.len() {
                let hours = age.num_hours();
                let prompt = format!("This session was last used {hours} hours ago. Continue the previous conversation? [y/N] ");
                if !yes(&mut editor, &prompt) {
                    thread.clear_context();
                    eprintln!("Starting a fresh context; the earlier messages stay in /history.");
                }
            }
            s.data_source = session_name;
            s.database_type = database_type.to_string();
            s
        }
        None => Session::new(&ctx.config.home, &session_name, database_type),
    };
    set_names(&names, thread.catalog());
    interrupt::install_for_chat();
    let (format, render) = output_setup(ctx, run);
    let mut chat = Chat {
        ctx,
        thread,
        session,
        format,
        render,
        run: run.clone(),
        label,
        names,
        editor,
    };
    eprintln!(
        "aiq: chatting with {} ({}, {} tables) through {} {}. /help lists commands; Ctrl-D leaves.",
        chat.label,
        chat.thread.catalog().engine,
        chat.thread.catalog().tables.len(),
        chat.thread.model().provider(),
        chat.thread.model().model()
    );
    chat.run_loop(&history_file);
    chat.leave();
    Ok(())
}

/// Lists the saved sources and asks for one until something opens.
fn pick_source(
    ctx: &Context<'_>,
    editor: &mut Editor<ChatHelper, DefaultHistory>,
    allow_write: bool,
) -> Result<Opened, AiqError> {
    let names: Vec<&str> = ctx.config.sources.names().collect();
    if names.is_empty() {
        eprintln!("aiq: no sources are saved yet.");
    } else {
        eprintln!("aiq: saved sources: {}", names.join(", "));
    }
    loop {
        match editor.readline("Source (a saved name or a path): ") {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => match ctx.open_source(Some(line.trim()), allow_write) {
                Ok(o) => return Ok(o),
                Err(e) => eprintln!("aiq: {e}"),
            },
            Err(ReadlineError::Interrupted) => continue,
            Err(_) => return Err(AiqError::Usage("no data source chosen".into())),
        }
    }
}

fn yes(editor: &mut Editor<ChatHelper, DefaultHistory>, prompt: &str) -> bool {
    match editor.readline(prompt) {
        Ok(answer) => matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        Err(_) => false,
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

impl Chat<'_> {
    fn run_loop(&mut self, history_file: &std::path::Path) {
        loop {
            let prompt = format!("aiq[{}]> ", self.label);
            let input = match self.editor.readline(&prompt) {
                Ok(line) => joined(&line),
                Err(ReadlineError::Interrupted) => continue,
                Err(ReadlineError::Eof) => return,
                Err(e) => {
                    eprintln!("aiq: cannot read input: {e}");
                    return;
                }
            };
            if input.is_empty() {
                continue;
            }
            let _ = self.editor.add_history_entry(input.as_str());
            let _ = self.editor.append_history(history_file);
            if input.starts_with('/') {
                if let Next::Exit = self.command(&input) {
                    return;
                }
            } else {
                self.turn(&input, None);
            }
        }
    }

    /// One question (or, with `sql`, one statement typed by the user).
    fn turn(&mut self, question: &str, sql: Option<&str>) {
        interrupt::reset();
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let collect = CollectOptions {
            sql_only: false,
            show_sql: false,
            yes: self.run.yes,
        };
        let collector = Collector::new(&mut out, self.format, self.render, collect);
        let mut console = Console::new(
            collector,
            self.ctx.color_stderr(),
            io::stdout().is_terminal(),
        );
        console.show_errors = true;
        let result = {
            let _running = interrupt::Running::new(self.thread.cancel_handle());
            match sql {
                Some(sql) => self.thread.run_sql(sql, &mut console).map(|_| ()),
                None => self.thread.ask(question, &mut console).map(|_| ()),
            }
        };
        drop(console);
        let _ = out.flush();
        match result {
            Ok(()) => {}
            Err(AgentError::Cancelled) => eprintln!("aiq: cancelled; the conversation is kept"),
            Err(AgentError::Output(e)) => eprintln!("aiq: cannot write the result: {e}"),
            // Shown through the sink already (or, for /sql, here).
            Err(e) if sql.is_some() => eprintln!("aiq: {e}"),
            Err(_) => {}
        }
        let _ = self.sync_and_save(false);
    }

    /// Copies the thread's history into the session and writes it; a failed
    /// write warns and the chat goes on. False when the write failed.
    fn sync_and_save(&mut self, announce: bool) -> bool {
        self.session.messages = self.thread.history().to_vec();
        self.session.context_start = self.thread.context_start();
        match self.session.save() {
            Ok(written) => {
                if written && announce {
                    let shown = display_path(&self.session.path, dirs::home_dir().as_deref());
                    eprintln!("Current session saved to {shown}");
                    eprintln!("Run 'aiq -s {shown}' to continue.");
                }
                true
            }
            Err(e) => {
                eprintln!(
                    "aiq: warning: cannot save the session to {}: {e}; the chat goes on",
                    self.session.path.display()
                );
                false
            }
        }
    }

    fn leave(&mut self) {
        let _ = self.sync_and_save(true);
    }

    fn command(&mut self, line: &str) -> Next {
        match parse(line) {
            SlashCommand::Help => print(&commands::help()),
            SlashCommand::History => {
                let text = session::transcript(self.thread.history());
                print(if text.is_empty() {
                    "(no messages yet)\n"
                } else {
                    &text
                });
            }
            SlashCommand::Clear => {
                if yes(&mut self.editor, "Clear conversation history? [y/N] ") {
                    self.thread.clear_context();
                    let _ = self.sync_and_save(false);
                    eprintln!("History cleared: the next question starts a fresh conversation.");
                } else {
                    eprintln!("History kept.");
                }
            }
            SlashCommand::Sessions => {
                print(&crate::commands::sessions::listing(&self.ctx.config.home))
            }
            SlashCommand::New => {
                let _ = self.sync_and_save(true);
                self.thread.set_history(Vec::new());
                self.session = Session::new(
                    &self.ctx.config.home,
                    &self.session.data_source,
                    &self.session.database_type,
                );
                eprintln!("Started a new session.");
            }
            SlashCommand::Save(file) => {
                if self.thread.history().is_empty() {
                    eprintln!("Nothing to save yet.");
                    return Next::Continue;
                }
                let previous = self.session.path.clone();
                if let Some(file) = file {
                    self.session.path = PathBuf::from(file);
                }
                // A file that cannot be written keeps the session where it was.
                if !self.sync_and_save(true) {
                    self.session.path = previous;
                }
            }
            SlashCommand::Schema(table) => self.schema(table.as_deref()),
            SlashCommand::Sql(sql) => self.turn("", Some(&sql)),
            SlashCommand::Format(name) => match name.parse::<Format>() {
                Ok(f) => {
                    self.format = f;
                    eprintln!("Output format: {f}");
                }
                Err(e) => eprintln!("aiq: {e}"),
            },
            SlashCommand::Source(name) => {
                match self.ctx.open_source(Some(&name), self.run.allow_write) {
                    Ok(o) => {
                        self.session.data_source = o.session_name;
                        self.session.database_type = o.source.kind().as_str().to_string();
                        self.label = o.label;
                        set_names(&self.names, &o.catalog);
                        let tables = o.catalog.tables.len();
                        self.thread.set_source(o.source, o.catalog);
                        eprintln!(
                            "Now using {} ({tables} tables); the conversation is kept.",
                            self.label
                        );
                    }
                    Err(e) => eprintln!("aiq: {e}"),
                }
            }
            SlashCommand::Exit => return Next::Exit,
            SlashCommand::Unknown(message) => eprintln!("aiq: {message}"),
        }
        Next::Continue
    }

    fn schema(&self, table: Option<&str>) {
        let catalog = self.thread.catalog();
        match table {
            None => print(&catalog.render()),
            Some(name) => match catalog.table(name) {
                Some(t) => {
                    let mut text = String::new();
                    t.render(&mut text);
                    print(&text);
                }
                None => {
                    let names: Vec<&str> = catalog.tables.iter().map(|t| t.name.as_str()).collect();
                    let near = names
                        .iter()
                        .min_by_key(|n| {
                            strsim::levenshtein(&n.to_lowercase(), &name.to_lowercase())
                        })
                        .map(|n| format!("; did you mean {n}?"))
                        .unwrap_or_default();
                    eprintln!("aiq: no table named {name}{near}");
                }
            },
        }
    }
}

fn print(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
