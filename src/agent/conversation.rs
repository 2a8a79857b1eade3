//! [`Conversation`]: what every front end drives. It owns the [`Thread`],
//! the session file and the state a chat changes as it goes (source, output
//! format, mode), and carries out the slash commands (SPEC §6) — all through
//! events, so the rustyline chat, the full-screen view and single-shot are
//! only input and rendering over it.
//!
//! Every line submitted ends with exactly one [`Event::TurnFinished`]: a
//! question or `/sql` with its answer or failure, any other command with
//! [`Outcome::Done`]. The session file is saved after every turn.

use std::path::PathBuf;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use chrono::Utc;

use super::commands::{help, parse, SlashCommand};
use super::events::{ConfirmKind, Event, EventSink, PendingAnswer};
use super::kind::{AnswerKind, KindMaker, KindPlace, Mode, SqlAnswers};
use super::last_result::{LastResult, NO_RESULT};
use super::outcome::{AgentError, Answer, Outcome};
use super::thread::Thread;
use crate::cancel::{CancelHandle, CancelToken};
use crate::chart::ChartSpec;
use crate::render::Format;
use crate::schema::Catalog;
use crate::session::{self, Session};
use crate::source::{DataSource, PasswordAsk};

/// A source opened for a conversation.
pub struct Opened {
    pub source: Box<dyn DataSource>,
    /// The catalog as the model may see it (hidden tables and columns
    /// gone, samples only where allowed; see [`crate::privacy`]).
    pub catalog: Catalog,
    /// The source's privacy settings, applied.
    pub guard: crate::privacy::Guard,
    /// The source's notes.
    pub notes: crate::notes::Notes,
    /// The source's verified examples (SPEC §14).
    pub examples: super::verified::Verified,
    /// What a session file records: the saved name, or the absolute path /
    /// the URL without password.
    pub session_name: String,
    /// What people see (the chat prompt): the saved name or the file name.
    pub label: String,
    /// What the user should know about it (a data file left out, notes
    /// that could not be read): said by the front end, not printed here.
    pub warnings: Vec<String>,
}

/// Opens another source for `/source` (the composition root knows how).
pub trait SourceOpener: Send + Sync {
    /// Opens `name` (a saved name, a path or a URL), asking for a password
    /// through `ask` when a server needs one; the error is a line for the
    /// user.
    fn open(&self, name: &str, ask: PasswordAsk) -> Result<Opened, String>;
}

/// Where a conversation keeps its messages.
pub enum Keep {
    /// Nowhere (single-shot without `-s`).
    Nothing,
    /// In a new session file in `$AIQ_HOME`, written once there is a message.
    NewSession,
    /// In this restored session; its messages become the history.
    Session(Box<Session>),
}

/// How a conversation is set up.
pub struct ConversationOptions {
    /// `$AIQ_HOME`, where new sessions go.
    pub home: PathBuf,
    /// The output format results are shown in (until `/format`).
    pub format: Format,
    /// A restored session older than this offers a fresh context (SPEC §7.4).
    pub stale_after_hours: u64,
    pub opener: Box<dyn SourceOpener>,
}

/// What a conversation runs on, as a status line shows it. A command that
/// changes any of it is followed by [`Event::StatusChanged`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The source as people know it (the saved name or the file name).
    pub source: String,
    /// `sqlite`, `duckdb`, `postgres` or `mysql`.
    pub engine: &'static str,
    /// Tables the model is told about.
    pub tables: usize,
    /// The model's provider and name.
    pub provider: String,
    pub model: String,
    /// What the model writes.
    pub mode: Mode,
    /// The output format results are shown in.
    pub format: Format,
    /// The session file, if this conversation keeps one.
    pub session: Option<PathBuf>,
}

/// What the front end does after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// `/exit`, `/quit`: the front end calls [`Conversation::leave`].
    Exit,
}

/// One conversation: thread, session file, slash commands.
pub struct Conversation {
    thread: Thread,
    session: Option<Session>,
    label: String,
    format: Format,
    /// `/maxrows`: rows a result shows in the chat (`Some(None)`: all);
    /// `None` until set, the configured number.
    max_rows: Option<Option<usize>>,
    /// Why the last save of the session failed, if it did.
    unsaved: Option<String>,
    home: PathBuf,
    stale_after_hours: u64,
    opener: Box<dyn SourceOpener>,
    /// The file name of the source's notes (`$AIQ_HOME/notes/KEY.md`).
    notes_key: String,
    /// The last result, for `/chart`.
    last: LastResult,
    /// The last SQL run or answered, for `/edit`.
    last_sql: Option<String>,
    /// What the model writes (`--mode`, `/mode`).
    mode: Mode,
    /// Makes the answer kinds other than SQL (Lua's).
    kinds: Option<KindMaker>,
    /// The source as the audit log names it (no password).
    source_name: String,
    /// This chat's mark on its restored session file, so another aiq that
    /// opens the same session can say so (SPEC §7.3a).
    presence: Option<crate::home::lock::Presence>,
}

impl Conversation {
    /// A conversation over `thread`, whose source is named `label` to people
    /// and `session_name` in session files.
    pub fn new(
        mut thread: Thread,
        label: String,
        session_name: String,
        keep: Keep,
        options: ConversationOptions,
    ) -> Self {
        let database_type = thread.engine().as_str();
        let notes_key = crate::notes::key(&session_name);
        let source_name = session_name.clone();
        let session = match keep {
            Keep::Nothing => None,
            Keep::NewSession => Some(Session::new(&options.home, &session_name, database_type)),
            Keep::Session(s) => {
                let mut s = *s;
                thread.set_history(s.messages.clone());
                thread.set_context_start(s.context_start);
                s.data_source = session_name;
                s.database_type = database_type.to_string();
                Some(s)
            }
        };
        Conversation {
            thread,
            session,
            label,
            format: options.format,
            max_rows: None,
            unsaved: None,
            home: options.home,
            stale_after_hours: options.stale_after_hours,
            opener: options.opener,
            notes_key,
            last: LastResult::default(),
            last_sql: None,
            mode: Mode::Sql,
            kinds: None,
            source_name,
            presence: None,
        }
    }

    /// What the model writes from the next question on.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches what the model writes (`--mode`, `/mode`).
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        self.install_kind();
    }

    /// What makes the answer kinds other than SQL (the Lua sandbox with
    /// its `[lua]` limits).
    pub fn set_kinds(&mut self, kinds: KindMaker) {
        self.kinds = Some(kinds);
        self.install_kind();
    }

    /// Gives the thread the answer kind of the mode, with where Lua runs
    /// are logged as things stand now (session file, source).
    fn install_kind(&mut self) {
        let place = KindPlace {
            home: self.home.clone(),
            session: self.session.as_ref().map(|s| s.path.clone()),
            source: self.source_name.clone(),
        };
        let made = match self.mode {
            Mode::Sql => None,
            mode => self.kinds.as_ref().and_then(|make| make(mode, &place)),
        };
        let kind: Box<dyn AnswerKind> = made.unwrap_or_else(|| Box::new(SqlAnswers));
        self.thread.set_kind(kind);
    }

    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    pub fn catalog(&self) -> &Catalog {
        self.thread.catalog()
    }

    /// The source as people know it (the chat prompt shows it).
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Why the last save of the session failed (the turn is not in the
    /// file), or `None` when it was saved or there is no session file.
    pub fn unsaved(&self) -> Option<&str> {
        self.unsaved.as_deref()
    }

    /// The rows a result shows, when `/maxrows` set it (`Some(None)`: all).
    pub fn max_rows(&self) -> Option<Option<usize>> {
        self.max_rows
    }

    /// The session file, if this conversation keeps one.
    pub fn session_path(&self) -> Option<&std::path::Path> {
        self.session.as_ref().map(|s| s.path.as_path())
    }

    /// What the conversation runs on now (a status line's facts).
    pub fn status(&self) -> Status {
        let model = self.thread.model();
        Status {
            source: self.label.clone(),
            engine: self.thread.engine().as_str(),
            tables: self.thread.catalog().tables.len(),
            provider: model.provider().to_string(),
            model: model.model().to_string(),
            mode: self.thread.mode(),
            format: self.format,
            session: self.session_path().map(std::path::Path::to_path_buf),
        }
    }

    /// Cancels the turn in flight, whichever it is when used (Ctrl-C, a
    /// UI's cancel key); survives `/source` and every turn.
    pub fn canceller(&self) -> CancelHandle {
        self.thread.canceller()
    }

    /// For a restored session: says once if another aiq has it open too
    /// (SPEC §7.3a), and if it is stale (SPEC §7.4) asks whether to
    /// continue its conversation; no gives the model a fresh context and
    /// keeps the messages for `/history`. Chat only — single-shot continues.
    pub fn offer_fresh_context(&mut self, sink: &mut dyn EventSink) {
        self.mark_open(sink);
        let Some(s) = &self.session else { return };
        let age = Utc::now() - s.last_updated;
        let stale = age > chrono::Duration::hours(self.stale_after_hours as i64);
        if !stale || self.thread.context_start() >= s.messages.len() {
            return;
        }
        let question = format!(
            "This session was last used {} hours ago. Continue the previous conversation?",
            age.num_hours()
        );
        let cancel = CancelToken::new();
        let answer =
            PendingAnswer::ask(sink, &cancel, ConfirmKind::ContinueSession, &question, None);
        if !matches!(answer, Ok(Some(true))) {
            self.thread.clear_context();
            let _ = sink.event(Event::Notice(
                "Starting a fresh context; the earlier messages stay in /history.".into(),
            ));
        }
    }

    /// Marks the restored session as open in this chat and says so once
    /// when another aiq has it open too.
    fn mark_open(&mut self, sink: &mut dyn EventSink) {
        let Some(s) = &self.session else { return };
        if self.presence.is_some() || !s.path.exists() {
            return;
        }
        let Ok((presence, others)) = crate::home::lock::enter(&s.path) else {
            return;
        };
        self.presence = Some(presence);
        if !others.is_empty() {
            let pids: Vec<String> = others.iter().map(u32::to_string).collect();
            let _ = sink.event(Event::Notice(format!(
                "This session is open in another aiq too (pid {}); turns from both are kept: each save brings in the other's, and /history shows them.",
                pids.join(", ")
            )));
        }
    }

    /// One line from the user: a question, or a slash command. Ends with
    /// exactly one [`Event::TurnFinished`].
    pub fn submit(&mut self, line: &str, sink: &mut dyn EventSink) -> Flow {
        let line = line.trim();
        if line.starts_with('/') {
            self.apply(parse(line), sink)
        } else if is_shell_command(line) {
            // `.tables`, `\d orders`: what a database shell would answer.
            let _ = sink.event(Event::CommandFailed(format!(
                "`{line}` is a database shell's command; here /schema lists the tables and their columns (/schema TABLE for one), and /sql runs SQL"
            )));
            Flow::Continue
        } else {
            let _ = self.ask(line, sink);
            Flow::Continue
        }
    }

    /// Asks one question; the session is saved afterwards.
    pub fn ask(&mut self, question: &str, sink: &mut dyn EventSink) -> Result<Answer, AgentError> {
        if self.mode == Mode::Lua {
            // The audit log names the session file and source as they are now.
            self.install_kind();
        }
        // The history tools reach the earlier sessions on this source.
        self.thread.set_archive(super::history::Archive {
            home: self.home.clone(),
            source: self.source_name.clone(),
            session: self.session_path().map(std::path::Path::to_path_buf),
        });
        let result = self
            .thread
            .ask(question, &mut self.last.tee(sink, Some(question)));
        if let Some(sql) = self
            .thread
            .history()
            .last()
            .filter(|m| m.role == crate::llm::Role::Assistant)
            .and_then(|m| m.sql.clone())
        {
            self.last_sql = Some(sql);
        }
        self.save(sink, false);
        result
    }

    /// Sends no verified examples with questions (`aiq eval --no-examples`).
    pub fn without_examples(&mut self) {
        let max = self.thread.examples_max();
        self.thread
            .set_examples(super::verified::Verified::new(Vec::new(), max));
    }

    /// The last SQL run or answered (what `/edit` offers).
    pub fn last_sql(&self) -> Option<&str> {
        self.last_sql.as_deref()
    }

    /// The last result (for `/chart`, and `--chart` after a single question).
    pub fn last_result(&self) -> &LastResult {
        &self.last
    }

    /// Whether results are kept for `/chart` (on unless turned off: a
    /// single question without `--chart` needs no copy).
    pub fn keep_results(&mut self, keep: bool) {
        self.last.keep(keep);
    }

    /// `/chart`: charts the last result as `spec` asks — a chart event,
    /// or an image written — and says why not when it cannot. Also what a
    /// view's chart key runs (no final event: the caller's turn has one).
    pub fn chart(&self, spec: &ChartSpec, sink: &mut dyn EventSink) {
        if let Err(why) = self.last.chart(spec, sink) {
            let why = if why == NO_RESULT {
                format!("{why}: ask a question or run /sql first")
            } else {
                why
            };
            let _ = sink.event(Event::CommandFailed(why));
        }
    }

    /// Carries out a slash command.
    pub fn apply(&mut self, command: SlashCommand, sink: &mut dyn EventSink) -> Flow {
        if let SlashCommand::Sql(sql) = &command {
            self.last_sql = Some(sql.clone());
            let _ = self.thread.run_sql(sql, &mut self.last.tee(sink, None));
            self.save(sink, false);
            return Flow::Continue;
        }
        let before = self.status();
        let flow = self.command(command, sink);
        let after = self.status();
        if after != before {
            let _ = sink.event(Event::StatusChanged(after));
        }
        let _ = sink.event(Event::TurnFinished(Outcome::Done));
        flow
    }

    fn command(&mut self, command: SlashCommand, sink: &mut dyn EventSink) -> Flow {
        let mut show = |e: Event| {
            let _ = sink.event(e);
        };
        match command {
            SlashCommand::Help => show(Event::Listing(help())),
            SlashCommand::History => {
                let session = self.session.as_ref();
                let text = session::transcript_marked(self.thread.history(), |i| {
                    session.is_some_and(|s| s.is_foreign(i))
                });
                show(Event::Listing(if text.is_empty() {
                    "(no messages yet)\n".into()
                } else {
                    text
                }));
            }
            SlashCommand::Clear => self.clear(sink),
            SlashCommand::Sessions => show(Event::Listing(session::listing(&self.home))),
            SlashCommand::New => self.start_new(sink),
            SlashCommand::Save(file) => self.save_as(file, sink),
            SlashCommand::Schema(table) => show(self.schema(table.as_deref())),
            SlashCommand::Format(name) => match name.parse::<Format>() {
                Ok(f) => {
                    self.format = f;
                    show(Event::Notice(format!("Output format: {f}")));
                }
                Err(e) => show(Event::CommandFailed(e)),
            },
            SlashCommand::MaxRows(None) => show(Event::Notice(match self.max_rows {
                Some(Some(n)) => format!("A result shows {n} rows (/maxrows N or all changes it)"),
                Some(None) => "A result shows all its rows (/maxrows N changes it)".into(),
                None => "A result shows the configured rows ([chat] max_rows; /maxrows N or all changes it)".into(),
            })),
            SlashCommand::MaxRows(Some(n)) => match n.trim() {
                "all" => {
                    self.max_rows = Some(None);
                    show(Event::Notice("Results show all their rows from now on".into()));
                }
                n => match n.parse::<usize>() {
                    Ok(n) if n > 0 => {
                        self.max_rows = Some(Some(n));
                        show(Event::Notice(format!("Results show at most {n} rows from now on")));
                    }
                    _ => show(Event::CommandFailed(format!(
                        "/maxrows takes a number of rows, 1 or more, or all (not '{n}')"
                    ))),
                },
            },
            SlashCommand::Mode(None) => show(Event::Notice(mode_notice(self.mode))),
            SlashCommand::Mode(Some(name)) => match name.parse::<Mode>() {
                Ok(mode) => {
                    self.set_mode(mode);
                    show(Event::Notice(mode_notice(mode)));
                }
                Err(e) => show(Event::CommandFailed(e)),
            },
            SlashCommand::Source(name) => self.switch_source(&name, sink),
            SlashCommand::Note(text) => self.note(&text, sink),
            SlashCommand::Chart(spec) => self.chart(&spec, sink),
            SlashCommand::Good => self.good(sink),
            SlashCommand::Edit => match &self.last_sql {
                Some(sql) => show(Event::Edit(sql.clone())),
                None => show(Event::CommandFailed(
                    "no SQL yet to edit: ask a question or run /sql first".into(),
                )),
            },
            SlashCommand::Exit => return Flow::Exit,
            SlashCommand::Unknown(message) => show(Event::CommandFailed(message)),
            // Runs as a statement turn in `apply`.
            SlashCommand::Sql(_) => {}
        }
        Flow::Continue
    }

    /// Saves the session and says where (`/exit`, Ctrl-D, quitting a view).
    pub fn leave(&mut self, sink: &mut dyn EventSink) {
        self.save(sink, true);
    }

    fn clear(&mut self, sink: &mut dyn EventSink) {
        let cancel = CancelToken::new();
        let asked = PendingAnswer::ask(
            sink,
            &cancel,
            ConfirmKind::ClearHistory,
            "Clear conversation history?",
            None,
        );
        if matches!(asked, Ok(Some(true))) {
            self.thread.clear_context();
            self.save(sink, false);
            let _ = sink.event(Event::Notice(
                "History cleared: the next question starts a fresh conversation.".into(),
            ));
        } else {
            let _ = sink.event(Event::Notice("History kept.".into()));
        }
    }

    fn start_new(&mut self, sink: &mut dyn EventSink) {
        self.save(sink, true);
        self.thread.set_history(Vec::new());
        if let Some(s) = &self.session {
            self.session = Some(Session::new(&self.home, &s.data_source, &s.database_type));
        }
        let _ = sink.event(Event::Notice("Started a new session.".into()));
    }

    fn save_as(&mut self, file: Option<String>, sink: &mut dyn EventSink) {
        if self.thread.history().is_empty() {
            let _ = sink.event(Event::Notice("Nothing to save yet.".into()));
            return;
        }
        let Some(s) = self.session.as_mut() else {
            let _ = sink.event(Event::CommandFailed(
                "this conversation is not kept in a session file".into(),
            ));
            return;
        };
        let previous = s.path.clone();
        if let Some(file) = file {
            s.move_to(PathBuf::from(file));
        }
        // A file that cannot be written keeps the session where it was.
        if !self.save(sink, true) {
            if let Some(s) = self.session.as_mut() {
                s.return_to(previous);
            }
        }
    }

    fn schema(&self, table: Option<&str>) -> Event {
        let catalog = self.thread.catalog();
        let Some(name) = table else {
            return Event::Listing(self.thread.described());
        };
        if let Some(t) = catalog.table(name) {
            let mut text = String::new();
            t.render(catalog.quote(), &mut text);
            return Event::Listing(text);
        }
        let near = catalog.did_you_mean(name);
        Event::CommandFailed(format!("no table named {name}{near}"))
    }

    /// `/good`: the last question and the SQL last run for it — the
    /// model's, an `/edit`ed one, or `/sql` — become a verified example of
    /// this source (SPEC §14), sent from the next similar question on.
    fn good(&mut self, sink: &mut dyn EventSink) {
        use crate::llm::Role;
        let history = self.thread.history();
        let Some(q) = history
            .iter()
            .rposition(|m| m.role == Role::User && m.content != super::thread::BY_HAND)
        else {
            let _ = sink.event(Event::CommandFailed(
                "no question yet: ask one, check its answer, then /good keeps it".into(),
            ));
            return;
        };
        let question = history[q].content.clone();
        // The SQL the user last ran and saw for it.
        let last = history[q + 1..]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && m.sql.is_some());
        let why_not = match last {
            None => Some("the last answer has no SQL to keep: run one with /sql (or /edit), then /good"),
            Some(m) if m.error.is_some() => Some(
                "the last SQL run failed; fix it with /edit, run it, then /good keeps the one that worked",
            ),
            Some(_) => None,
        };
        if let Some(why) = why_not {
            let _ = sink.event(Event::CommandFailed(why.into()));
            return;
        }
        let answer = last.expect("checked above");
        let sql = answer.sql.clone().unwrap_or_default();
        let schema = self.thread.fingerprint();
        let path = crate::home::examples_file(&self.home, &self.notes_key);
        match super::verified::add_locked(&path, &question, &sql, &schema) {
            Ok((id, replaced)) => {
                self.thread.set_examples(super::verified::Verified::load(
                    &self.home,
                    &self.notes_key,
                    self.thread.examples_max(),
                ));
                let how = match replaced {
                    true => ", replacing the SQL kept before for this question",
                    false => "",
                };
                let _ = sink.event(Event::Notice(format!(
                    "Kept: {}\nas verified example {id} in {}{how}; similar questions get it from now on.",
                    sql.trim(),
                    path.display()
                )));
            }
            Err(e) => {
                let _ = sink.event(Event::CommandFailed(format!(
                    "cannot keep the example: {e} (check that $AIQ_HOME is writable)"
                )));
            }
        }
    }

    /// `/note TEXT`: a line in the source's notes, which the model gets
    /// from the next question on.
    fn note(&mut self, text: &str, sink: &mut dyn EventSink) {
        match crate::notes::append(&self.home, &self.notes_key, text) {
            Ok(path) => {
                let (notes, bad) = crate::notes::Notes::load_checked(&self.home, &self.notes_key);
                if let Some(warning) = bad {
                    let _ = sink.event(Event::Warning(warning));
                }
                self.thread.set_notes(notes);
                let _ = sink.event(Event::Notice(format!(
                    "Noted in {}; the model reads it from the next question on.",
                    path.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                let _ = sink.event(Event::CommandFailed(format!("cannot add the note: {e}")));
            }
            Err(e) => {
                let _ = sink.event(Event::CommandFailed(format!(
                    "cannot write the note: {e} (check that $AIQ_HOME is writable)"
                )));
            }
        }
    }

    fn switch_source(&mut self, name: &str, sink: &mut dyn EventSink) {
        match open_asking(self.opener.as_ref(), name, sink) {
            Ok(o) => {
                for warning in &o.warnings {
                    let _ = sink.event(Event::Warning(warning.clone()));
                }
                self.notes_key = crate::notes::key(&o.session_name);
                self.source_name = o.session_name.clone();
                if let Some(s) = self.session.as_mut() {
                    s.data_source = o.session_name;
                    s.database_type = o.source.kind().as_str().to_string();
                }
                self.label = o.label;
                let tables = o.catalog.tables.len();
                self.thread.set_source(o.source, o.catalog);
                self.thread.set_view(o.guard, o.notes);
                self.thread.set_examples(o.examples);
                let _ = sink.event(Event::Notice(format!(
                    "Now using {} ({tables} tables); the conversation is kept.",
                    self.label
                )));
            }
            Err(e) => {
                let _ = sink.event(Event::CommandFailed(e));
            }
        }
    }

    /// Copies the history into the session and writes it; a failed write
    /// warns and the conversation goes on. False when the write failed.
    fn save(&mut self, sink: &mut dyn EventSink, announce: bool) -> bool {
        let Some(s) = self.session.as_mut() else {
            return true;
        };
        let saved = s.save_history(self.thread.history(), self.thread.context_start());
        self.unsaved = saved
            .as_ref()
            .err()
            .map(|e| format!("cannot save the session to {}: {e}", s.path.display()));
        match saved {
            Ok(written) => {
                // Another aiq's turns came in with the merge.
                if written && s.messages.len() != self.thread.history().len() {
                    self.thread.set_history(s.messages.clone());
                    self.thread.set_context_start(s.context_start);
                }
                if written && announce {
                    let _ = sink.event(Event::SessionSaved(s.path.clone()));
                }
                true
            }
            Err(e) => {
                let _ = sink.event(Event::Warning(format!(
                    "cannot save the session to {}: {e}; this turn is not in the file",
                    s.path.display()
                )));
                false
            }
        }
    }
}

/// Opens `name` with `opener` on a thread of its own, so a password the
/// server asks for can be asked of the user through `sink` (an
/// [`Event::Secret`]) while the opening waits: the front end asks in its
/// own way, and nothing here reads the terminal.
fn open_asking(
    opener: &dyn SourceOpener,
    name: &str,
    sink: &mut dyn EventSink,
) -> Result<Opened, String> {
    type Asked = (String, std::sync::mpsc::SyncSender<Option<String>>);
    let (asks, questions) = std::sync::mpsc::channel::<Asked>();
    let ask: PasswordAsk = std::sync::Arc::new(move |prompt: &str| {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        asks.send((prompt.to_string(), tx)).ok()?;
        rx.recv().ok().flatten()
    });
    std::thread::scope(|scope| {
        let opening = scope.spawn(move || opener.open(name, ask));
        // The opened source may keep `ask`: the questions end when the
        // opening has.
        loop {
            let (prompt, reply) = match questions.recv_timeout(Duration::from_millis(20)) {
                Ok(question) => question,
                Err(RecvTimeoutError::Timeout) if !opening.is_finished() => continue,
                Err(_) => break,
            };
            let (secret, answer) = super::events::Secret::new(prompt);
            let typed = match sink.event(Event::Secret(secret)) {
                Ok(()) => answer.recv().ok().flatten(),
                Err(_) => None,
            };
            let _ = reply.send(typed);
        }
        opening
            .join()
            .unwrap_or_else(|_| Err(format!("cannot open {name}: the opening failed")))
    })
}

/// What `/mode` says.
fn mode_notice(mode: Mode) -> String {
    match mode {
        Mode::Sql => "Mode: sql — the model answers with one SQL statement.".into(),
        Mode::Lua => {
            "Mode: lua — the model answers with a Lua program that runs in the sandbox.".into()
        }
    }
}

/// A line like `.tables`, `.schema orders`, `\d orders` or `\dt`: a
/// command of the sqlite3 shell or psql.
fn is_shell_command(line: &str) -> bool {
    let mut chars = line.chars();
    matches!(chars.next(), Some('.' | '\\'))
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && line.split_whitespace().count() <= 3
}
