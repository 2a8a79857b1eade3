//! The full-screen view's state. [`App`] changes only in [`App::update`]:
//! a key, a mouse event, a paste, a resize, a clock tick or an event from
//! the conversation goes in; what the terminal loop must do with the worker
//! comes out as [`Action`]s. No terminal, no threads: every key and every
//! event is a plain unit test. Keys are handled in `keys.rs`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::style::{Modifier, Style};
use ratatui_textarea::TextArea;

use super::chart::ChartView;
use super::grid::Grid;
use super::log::{Kind, Log};
use super::transcript::{from_history, Entry, Transcript};
use crate::agent::{Confirmation, Event, HistoryMessage, Secret, Status};

/// What goes into [`App::update`].
#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    /// An event from the conversation.
    Core(Event),
    /// The clock: spinner, elapsed time, the Ctrl-C window.
    Tick(Instant),
    /// The conversation's worker has left (after `/exit`).
    WorkerGone,
}

/// What the terminal loop does for the app.
#[derive(Debug)]
pub enum Action {
    /// Hand the line to the conversation (and remember it in the input history).
    Submit(String),
    /// Cancel the turn in flight.
    Cancel,
    /// Answer a confirmation.
    Answer(Confirmation, bool),
    /// Answer a password question: what was typed, or `None`.
    Reveal(Secret, Option<Typed>),
    /// Chart the last result (the chart comes back as an event).
    Chart,
    /// Save and quit.
    Quit,
}

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Conversation,
    Result,
    Log,
}

impl Focus {
    /// Tab order.
    pub fn next(self) -> Focus {
        match self {
            Focus::Input => Focus::Conversation,
            Focus::Conversation => Focus::Result,
            Focus::Result => Focus::Log,
            Focus::Log => Focus::Input,
        }
    }

    pub fn previous(self) -> Focus {
        match self {
            Focus::Input => Focus::Log,
            Focus::Conversation => Focus::Input,
            Focus::Result => Focus::Conversation,
            Focus::Log => Focus::Result,
        }
    }
}

/// What covers the panes.
#[derive(Debug)]
pub enum Overlay {
    Help,
    /// A question from the conversation, answered with y or n.
    Confirm(Confirmation),
    /// A password the conversation asks for (`/source` on a server), typed
    /// without being shown.
    Secret(Secret, Typed),
}

/// What is typed into a password question: never shown, never in `Debug`.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct Typed(pub String);

impl std::fmt::Debug for Typed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Typed({} chars)", self.0.chars().count())
    }
}

/// What the turn in flight is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Working,
    Thinking,
    Answering,
    Running,
    Waiting,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Working => "working",
            Phase::Thinking => "thinking",
            Phase::Answering => "answering",
            Phase::Running => "running the query",
            Phase::Waiting => "waiting for your answer",
        }
    }
}

/// The turn in flight.
#[derive(Debug, Clone, Copy)]
pub struct Turn {
    pub started: Instant,
    pub phase: Phase,
    /// When the current model request started.
    pub(super) request: Instant,
    /// A cancel was asked for.
    pub cancelling: bool,
}

/// The input history, shared with the chat (`$AIQ_HOME/input_history`).
#[derive(Debug, Default)]
pub(super) struct InputHistory {
    entries: Vec<String>,
    pos: Option<usize>,
    draft: String,
}

impl InputHistory {
    /// The entry before the one shown (`current` is kept as the draft).
    pub fn previous(&mut self, current: &str) -> Option<String> {
        let pos = match self.pos {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = current.to_string();
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(p) => p - 1,
        };
        self.pos = Some(pos);
        Some(self.entries[pos].clone())
    }

    /// The entry after the one shown, then the draft.
    pub fn next(&mut self) -> Option<String> {
        let p = self.pos?;
        if p + 1 < self.entries.len() {
            self.pos = Some(p + 1);
            return Some(self.entries[p + 1].clone());
        }
        self.pos = None;
        Some(std::mem::take(&mut self.draft))
    }

    pub fn push(&mut self, line: &str) {
        if self.entries.last().map(String::as_str) != Some(line) {
            self.entries.push(line.to_string());
        }
        self.pos = None;
        self.draft.clear();
    }
}

/// What was said outside a turn since the last one ended: the save and the
/// warnings of leaving, printed after the screen is restored.
#[derive(Debug, Default)]
pub(super) struct AfterTurn {
    pub saved: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// A second Ctrl-C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a hint stays in the status line.
const HINT_FOR: Duration = Duration::from_secs(4);

/// The view's whole state.
pub struct App {
    pub(super) status: Status,
    /// Tokens the model reported in this view.
    pub(super) tokens: u64,
    pub(super) transcript: Transcript,
    pub(super) log: Log,
    pub(super) grid: Grid,
    /// The result pane's chart view (`c`, `/chart`).
    pub(super) chart: ChartView,
    pub(super) input: TextArea<'static>,
    pub(super) history: InputHistory,
    pub(super) focus: Focus,
    pub(super) overlay: Option<Overlay>,
    pub(super) turn: Option<Turn>,
    pub(super) now: Instant,
    /// The terminal's size (columns, rows).
    pub(super) size: (u16, u16),
    /// When Ctrl-C was pressed while idle.
    pub(super) quit_armed: Option<Instant>,
    /// Esc was pressed once with a question typed: a second Esc leaves.
    pub(super) esc_armed: bool,
    pub(super) hint: Option<(String, Instant)>,
    quitting: bool,
    pub(super) after_turn: AfterTurn,
    /// Text streamed since the last model request started (a tool-call
    /// answer streams none, so its code is shown on its own).
    pub(super) streamed: bool,
}

impl App {
    /// A view of a conversation whose facts are `status`; `history` is the
    /// input history, `notes` what was said while starting.
    pub fn new(
        status: Status,
        history: Vec<String>,
        notes: &[String],
        now: Instant,
        size: (u16, u16),
    ) -> App {
        let mut app = App {
            status,
            tokens: 0,
            transcript: Transcript::default(),
            log: Log::default(),
            grid: Grid::default(),
            chart: ChartView::default(),
            input: TextArea::default(),
            history: InputHistory {
                entries: history,
                ..InputHistory::default()
            },
            focus: Focus::Input,
            overlay: None,
            turn: None,
            now,
            size,
            quit_armed: None,
            hint: None,
            esc_armed: false,
            quitting: false,
            after_turn: AfterTurn::default(),
            streamed: false,
        };
        app.set_input("");
        for note in notes {
            app.note(Kind::Warning, note.trim_start_matches("aiq: "));
        }
        app
    }

    /// Shows a restored session's messages above what comes next.
    pub fn restored(&mut self, history: &[HistoryMessage]) {
        if history.is_empty() {
            return;
        }
        for entry in from_history(history) {
            self.transcript.push(entry);
        }
        let n = history.len();
        self.transcript.push(Entry::Notice(format!(
            "(restored: {n} earlier message{}; new questions continue the conversation)",
            if n == 1 { "" } else { "s" }
        )));
    }

    /// True once the view should close.
    pub fn quitting(&self) -> bool {
        self.quitting
    }

    /// A turn is in flight.
    pub fn busy(&self) -> bool {
        self.turn.is_some()
    }

    /// What to print once the screen is restored: the warnings and the
    /// session lines of leaving.
    pub fn farewell(&self) -> (Vec<String>, Option<PathBuf>) {
        (
            self.after_turn.warnings.clone(),
            self.after_turn.saved.clone(),
        )
    }

    /// One step: the state changes, the actions come back.
    pub fn update(&mut self, msg: Msg) -> Vec<Action> {
        match msg {
            Msg::Key(key) => self.key(key),
            Msg::Mouse(mouse) => {
                self.mouse(mouse);
                Vec::new()
            }
            Msg::Paste(text) => {
                if self.overlay.is_none() {
                    self.focus = Focus::Input;
                    self.input
                        .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
                    self.style_input();
                }
                Vec::new()
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                Vec::new()
            }
            Msg::Core(event) => {
                self.core(event);
                Vec::new()
            }
            Msg::Tick(now) => {
                self.now = now;
                if self
                    .hint
                    .as_ref()
                    .is_some_and(|(_, at)| now.duration_since(*at) > HINT_FOR)
                {
                    self.hint = None;
                }
                Vec::new()
            }
            Msg::WorkerGone => {
                self.quitting = true;
                Vec::new()
            }
        }
    }

    /// Shows `text` in the status line for a few seconds.
    pub(super) fn say(&mut self, text: &str) {
        self.hint = Some((text.to_string(), self.now));
    }

    /// Starts quitting: an open question is answered no first, so the
    /// conversation can leave.
    pub(super) fn quit(&mut self, actions: &mut Vec<Action>) {
        match self.overlay.take() {
            Some(Overlay::Confirm(c)) => actions.push(Action::Answer(c, false)),
            Some(Overlay::Secret(s, _)) => actions.push(Action::Reveal(s, None)),
            _ => {}
        }
        if self.busy() {
            actions.push(Action::Cancel);
        }
        actions.push(Action::Quit);
        self.quitting = true;
    }

    /// Sends the input line, unless a turn runs.
    pub(super) fn submit(&mut self) -> Vec<Action> {
        let line = self.input.lines().join("\n");
        let actions = self.send(line);
        if !actions.is_empty() {
            self.set_input("");
        }
        actions
    }

    /// `line` to the conversation as if typed (F2 sends `/edit`, F3
    /// `/good`); the input box keeps what it holds.
    pub(super) fn send(&mut self, line: String) -> Vec<Action> {
        if line.trim().is_empty() {
            return Vec::new();
        }
        if self.busy() {
            self.say("a turn is running: wait for it, or press Ctrl-C to cancel it");
            return Vec::new();
        }
        self.history.push(&line);
        let shown = line.trim().to_string();
        self.transcript.push(if shown.starts_with('/') {
            Entry::Command(shown)
        } else {
            Entry::Question(shown)
        });
        self.transcript.scroll.follow();
        self.turn = Some(Turn {
            started: self.now,
            phase: Phase::Working,
            request: self.now,
            cancelling: false,
        });
        self.after_turn = AfterTurn::default();
        self.quit_armed = None;
        vec![Action::Submit(line)]
    }

    /// Replaces the input box's text, cursor at the end.
    pub(super) fn set_input(&mut self, text: &str) {
        let mut input = TextArea::from(text.split('\n').map(str::to_string));
        input.move_cursor(ratatui_textarea::CursorMove::Bottom);
        input.move_cursor(ratatui_textarea::CursorMove::End);
        input.set_placeholder_text("Ask about your data, or type /help");
        input.set_cursor_line_style(Style::default());
        self.input = input;
        self.style_input();
    }

    /// The cursor shows only where the keys go.
    pub(super) fn style_input(&mut self) {
        let cursor = if self.focus == Focus::Input && self.overlay.is_none() {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        self.input.set_cursor_style(cursor);
    }
}
