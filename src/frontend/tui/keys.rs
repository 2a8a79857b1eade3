//! Keys and the mouse (SPEC §9): what each does to the [`App`], depending
//! on what is open (a question, the help) and which pane has the focus.
//!
//! Enter sends, Alt-Enter/Shift-Enter/Ctrl-J break the line, Up/Down walk
//! the input history at the input's first/last line, Tab moves the focus,
//! arrows/PgUp/PgDn/Home/End and the wheel scroll, Ctrl-L clears the log,
//! Ctrl-C cancels a turn (idle: twice within two seconds quits), Ctrl-Q,
//! Ctrl-D and Esc save and quit (Esc twice when a question is typed), F1 or `?` on an empty line show the help, `c` on
//! the result pane switches between its table and its chart.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::app::{Action, App, Focus, Overlay, Phase, QUIT_WINDOW};
use super::view::{inner, layout};

/// A scroll step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Up(usize),
    Down(usize),
    PageUp,
    PageDown,
    Home,
    End,
    Left,
    Right,
}

/// Rows one wheel notch moves.
const WHEEL: usize = 3;

impl App {
    /// One key press.
    pub(super) fn key(&mut self, key: KeyEvent) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match &self.overlay {
            Some(Overlay::Confirm(_)) => return self.confirm_key(key),
            Some(Overlay::Secret(..)) => return self.secret_key(key),
            Some(Overlay::Help) => {
                let closes = matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::F(1) | KeyCode::Enter | KeyCode::Char('?' | 'q')
                ) || (ctrl && key.code == KeyCode::Char('c'));
                if ctrl && key.code == KeyCode::Char('d') {
                    let mut actions = Vec::new();
                    self.quit(&mut actions);
                    return actions;
                }
                if closes {
                    self.overlay = None;
                    self.style_input();
                }
                return Vec::new();
            }
            None => {}
        }
        let mut actions = Vec::new();
        let esc_armed = std::mem::take(&mut self.esc_armed);
        if esc_armed && key.code != KeyCode::Esc {
            // The second Esc is no longer awaited: its hint goes too.
            self.hint = None;
        }
        match key.code {
            KeyCode::Char('c') if ctrl => return self.ctrl_c(),
            KeyCode::Char('d' | 'q') if ctrl => self.quit(&mut actions),
            KeyCode::Char('l') if ctrl => self.log.clear(),
            // A half-typed question is not thrown away by one Esc.
            KeyCode::Esc if !esc_armed && !self.input.lines().concat().trim().is_empty() => {
                self.esc_armed = true;
                self.say("Esc leaves the view and the question you typed is lost: Esc again to leave (or Ctrl-Q)");
            }
            KeyCode::Esc => self.quit(&mut actions),
            KeyCode::F(1) => self.open_help(),
            KeyCode::F(2) => return self.send("/edit".into()),
            KeyCode::F(3) => return self.send("/good".into()),
            KeyCode::Tab => self.set_focus(self.focus.next()),
            KeyCode::BackTab => self.set_focus(self.focus.previous()),
            _ if self.focus == Focus::Input => return self.input_key(key),
            KeyCode::Char('c') if self.focus == Focus::Result && key.modifiers.is_empty() => {
                return self.chart_key()
            }
            _ => self.pane_key(key),
        }
        actions
    }

    /// `c` on the result pane: chart ↔ table. The first time for a result
    /// the conversation draws the chart (it comes back as an event).
    fn chart_key(&mut self) -> Vec<Action> {
        if self.chart.showing {
            self.chart.showing = false;
        } else if self.chart.has_chart() {
            self.chart.showing = true;
        } else if self.busy() {
            self.say("a turn is running: chart its result when it is done");
        } else if self.grid.finished.is_none() {
            self.say("no result to chart yet: ask a question or run /sql first");
        } else {
            self.say("drawing the chart…");
            return vec![Action::Chart];
        }
        Vec::new()
    }

    fn open_help(&mut self) {
        self.overlay = Some(Overlay::Help);
        self.style_input();
    }

    pub(super) fn set_focus(&mut self, focus: Focus) {
        self.focus = focus;
        self.style_input();
    }

    /// Typing a password: characters go in unseen, Backspace takes one
    /// back, Enter answers with them, Esc (or Ctrl-C) declines.
    fn secret_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(Overlay::Secret(_, typed)) = self.overlay.as_mut() else {
            return Vec::new();
        };
        let answer = match key.code {
            KeyCode::Char('d') if ctrl => {
                let mut actions = Vec::new();
                self.quit(&mut actions);
                return actions;
            }
            KeyCode::Char('c') if ctrl => None,
            KeyCode::Esc => None,
            KeyCode::Enter => Some(std::mem::take(typed)),
            KeyCode::Backspace => {
                typed.0.pop();
                return Vec::new();
            }
            KeyCode::Char(c) if !ctrl => {
                typed.0.push(c);
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        let Some(Overlay::Secret(s, _)) = self.overlay.take() else {
            return Vec::new();
        };
        self.style_input();
        if let Some(t) = self.turn.as_mut() {
            t.phase = Phase::Working;
        }
        vec![Action::Reveal(s, answer)]
    }

    /// y answers yes; n, Enter and Esc answer no (the default).
    fn confirm_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let answer = match key.code {
            KeyCode::Char('d') if ctrl => {
                let mut actions = Vec::new();
                self.quit(&mut actions);
                return actions;
            }
            KeyCode::Char('c') if ctrl => Some(false),
            KeyCode::Char('y' | 'Y') => Some(true),
            KeyCode::Char('n' | 'N') | KeyCode::Enter | KeyCode::Esc => Some(false),
            _ => None,
        };
        let Some(yes) = answer else {
            return Vec::new();
        };
        let Some(Overlay::Confirm(c)) = self.overlay.take() else {
            return Vec::new();
        };
        self.style_input();
        if let Some(t) = self.turn.as_mut() {
            t.phase = Phase::Working;
        }
        let mut actions = vec![Action::Answer(c, yes)];
        if ctrl {
            actions.extend(self.ctrl_c());
        }
        actions
    }

    /// Cancels the turn in flight; when idle, clears the input, and a
    /// second press within two seconds quits.
    fn ctrl_c(&mut self) -> Vec<Action> {
        if let Some(t) = self.turn.as_mut() {
            t.cancelling = true;
            self.say("cancelling…");
            return vec![Action::Cancel];
        }
        let armed = self
            .quit_armed
            .is_some_and(|at| self.now.duration_since(at) <= QUIT_WINDOW);
        let empty = self.input.lines().iter().all(|l| l.is_empty());
        if armed && empty {
            let mut actions = Vec::new();
            self.quit(&mut actions);
            return actions;
        }
        self.set_input("");
        self.quit_armed = Some(self.now);
        self.say("press Ctrl-C again to quit (Ctrl-D saves and quits too)");
        Vec::new()
    }

    fn input_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let mods = key.modifiers;
        let plain = !mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let row = self.input.cursor().0;
        let last = self.input.lines().len().saturating_sub(1);
        match key.code {
            KeyCode::Enter if mods.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) => {
                self.input.insert_newline()
            }
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('j') if mods.contains(KeyModifiers::CONTROL) => {
                self.input.insert_newline()
            }
            KeyCode::Up if plain && row == 0 => {
                let current = self.input.lines().join("\n");
                if let Some(text) = self.history.previous(&current) {
                    self.set_input(&text);
                }
            }
            KeyCode::Down if plain && row == last => {
                if let Some(text) = self.history.next() {
                    self.set_input(&text);
                }
            }
            KeyCode::Char('?') if plain && self.input.is_empty() => self.open_help(),
            KeyCode::PageUp => self.scroll(Focus::Conversation, Move::PageUp),
            KeyCode::PageDown => self.scroll(Focus::Conversation, Move::PageDown),
            _ => {
                self.input.input(key);
            }
        }
        Vec::new()
    }

    fn pane_key(&mut self, key: KeyEvent) {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let step = match key.code {
            KeyCode::Up => Move::Up(1),
            KeyCode::Down => Move::Down(1),
            KeyCode::PageUp => Move::PageUp,
            KeyCode::PageDown => Move::PageDown,
            KeyCode::Home => Move::Home,
            KeyCode::End => Move::End,
            KeyCode::Left => Move::Left,
            KeyCode::Right => Move::Right,
            KeyCode::Enter => return self.set_focus(Focus::Input),
            KeyCode::Char('?') if plain => return self.open_help(),
            // Typing goes to the input box.
            KeyCode::Char(c) if plain => {
                self.set_focus(Focus::Input);
                self.input.insert_char(c);
                return;
            }
            _ => return,
        };
        self.scroll(self.focus, step);
    }

    /// The wheel scrolls the pane under the pointer; a click focuses it.
    pub(super) fn mouse(&mut self, mouse: MouseEvent) {
        if self.overlay.is_some() {
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        let Some(pane) = self.pane_at(at) else { return };
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll(pane, Move::Up(WHEEL)),
            MouseEventKind::ScrollDown => self.scroll(pane, Move::Down(WHEEL)),
            MouseEventKind::ScrollLeft => self.scroll(pane, Move::Left),
            MouseEventKind::ScrollRight => self.scroll(pane, Move::Right),
            MouseEventKind::Down(MouseButton::Left) => self.set_focus(pane),
            _ => {}
        }
    }

    fn areas(&self) -> super::view::Areas {
        layout(Rect::new(0, 0, self.size.0, self.size.1), self.input_rows())
    }

    /// The inside of a pane, as drawn at the current size.
    pub(super) fn inside(&self, pane: Focus) -> Rect {
        let a = self.areas();
        inner(match pane {
            Focus::Input => a.input,
            Focus::Conversation => a.conversation,
            Focus::Result => a.result,
            Focus::Log => a.log,
        })
    }

    /// Rows the input box's text takes (it grows up to five).
    pub(super) fn input_rows(&self) -> u16 {
        self.input.lines().len().clamp(1, 5) as u16
    }

    fn pane_at(&self, at: Position) -> Option<Focus> {
        let a = self.areas();
        [
            (a.input, Focus::Input),
            (a.conversation, Focus::Conversation),
            (a.result, Focus::Result),
            (a.log, Focus::Log),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(at))
        .map(|(_, f)| f)
    }

    /// Scrolls `pane` one step.
    pub(super) fn scroll(&mut self, pane: Focus, step: Move) {
        let area = self.inside(pane);
        match pane {
            Focus::Input => {}
            Focus::Result => {
                let page = area.height.saturating_sub(2).max(1) as usize;
                let g = &mut self.grid;
                match step {
                    Move::Up(n) => g.scroll_rows(-(n as isize), page),
                    Move::Down(n) => g.scroll_rows(n as isize, page),
                    Move::PageUp => g.scroll_rows(-(page as isize), page),
                    Move::PageDown => g.scroll_rows(page as isize, page),
                    Move::Home => g.scroll_rows(isize::MIN / 2, page),
                    Move::End => g.scroll_rows(isize::MAX / 2, page),
                    Move::Left => g.scroll_cols(-1, area.width as usize),
                    Move::Right => g.scroll_cols(1, area.width as usize),
                }
            }
            Focus::Conversation | Focus::Log => {
                let height = area.height.max(1) as usize;
                let total = || match pane {
                    Focus::Log => self.log.rows(area.width),
                    _ => self.transcript.rows(self.status.mode, area.width),
                };
                let up = match step {
                    Move::Up(n) => Some(n),
                    Move::PageUp => Some(height.saturating_sub(1).max(1)),
                    Move::Home => Some(usize::MAX / 2),
                    _ => None,
                };
                let down = match step {
                    Move::Down(n) => Some(n),
                    Move::PageDown => Some(height.saturating_sub(1).max(1)),
                    Move::End => Some(usize::MAX / 2),
                    _ => None,
                };
                let total = if up.is_some() { total() } else { 0 };
                let scroll = if pane == Focus::Log {
                    &mut self.log.scroll
                } else {
                    &mut self.transcript.scroll
                };
                if let Some(n) = up {
                    scroll.by(n as isize, total, height);
                } else if let Some(n) = down {
                    scroll.back = scroll.back.saturating_sub(n);
                }
            }
        }
    }
}
