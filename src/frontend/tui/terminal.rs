//! The terminal: raw mode, the alternate screen, mouse and paste capture —
//! put back exactly as they were when the view ends, fails or panics — and
//! the loop that draws the [`App`], feeds it keys and the conversation's
//! events, and carries out its [`Action`]s on the [`Worker`].

use std::io::{self, Stdout, Write};
use std::panic::PanicHookInfo;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;
use std::sync::Once;
use std::time::{Duration, Instant};

use crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as TermEvent, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use rustyline::history::{DefaultHistory, History};

use super::app::{Action, App, Msg};
use super::view::view;
use crate::frontend::channel::Worker;

/// Longest wait for a key while a turn runs (spinner, streamed text).
const BUSY_POLL: Duration = Duration::from_millis(30);
/// … and while idle (events that come without a turn, such as a question).
const IDLE_POLL: Duration = Duration::from_millis(120);
/// Time spent taking the conversation's events before the next frame.
const EVENT_BUDGET: Duration = Duration::from_millis(15);

/// Set once the terminal is put back (a panic on the conversation's
/// thread does it from there): from then on nothing more is drawn.
static RESTORED: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back: the one way out, for a normal end, an error and
/// a panic alike. Safe to call more than once.
pub fn restore() {
    RESTORED.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    let _ = execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

/// The terminal in full-screen mode while it lives.
struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    fn enter() -> io::Result<Screen> {
        install_panic_hook();
        RESTORED.store(false, Ordering::SeqCst);
        terminal::enable_raw_mode()?;
        let mut out = io::stdout();
        let entered = execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            // Tells Shift-Enter from Enter where the terminal can; others ignore it.
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        );
        let terminal = entered.and_then(|_| Terminal::new(CrosstermBackend::new(out)));
        match terminal {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

type PanicHook = Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync + 'static>;

/// A panic anywhere restores the terminal before its message is printed;
/// so does SIGTERM or SIGHUP before aiq exits.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(restoring(restore, previous));
        crate::cleanup::before_signal_exit(restore);
    });
}

/// `previous` (the hook that prints the message), after `restore`.
fn restoring(restore: fn(), previous: PanicHook) -> PanicHook {
    Box::new(move |info| {
        restore();
        previous(info);
    })
}

/// Runs the view until the user quits or the conversation leaves; then
/// the worker saves the session and its last events go to the app.
pub fn run(
    app: &mut App,
    worker: Worker,
    history: &mut DefaultHistory,
    history_file: &Path,
) -> io::Result<()> {
    let mut screen = Screen::enter()?;
    let ended = event_loop(&mut screen, app, &worker, history, history_file);
    // Leaving waits for the line in flight (cancelled by the app's Quit).
    for event in worker.leave() {
        app.update(Msg::Core(event));
    }
    drop(screen);
    ended
}

fn event_loop(
    screen: &mut Screen,
    app: &mut App,
    worker: &Worker,
    history: &mut DefaultHistory,
    history_file: &Path,
) -> io::Result<()> {
    let mut dirty = true;
    loop {
        app.update(Msg::Tick(Instant::now()));
        if RESTORED.load(Ordering::SeqCst) {
            return Err(io::Error::other(
                "the conversation's thread stopped unexpectedly",
            ));
        }
        if dirty || app.busy() {
            screen.terminal.draw(|f| view(app, f))?;
            dirty = false;
        }
        if app.quitting() {
            return Ok(());
        }
        let wait = if app.busy() { BUSY_POLL } else { IDLE_POLL };
        if event::poll(wait)? {
            while event::poll(Duration::ZERO)? {
                let msg = match event::read()? {
                    TermEvent::Key(k) => Msg::Key(k),
                    TermEvent::Mouse(m) => Msg::Mouse(m),
                    TermEvent::Paste(p) => Msg::Paste(p),
                    TermEvent::Resize(w, h) => Msg::Resize(w, h),
                    TermEvent::FocusGained | TermEvent::FocusLost => continue,
                };
                for action in app.update(msg) {
                    perform(action, worker, history, history_file);
                }
                dirty = true;
            }
        }
        let started = Instant::now();
        loop {
            match worker.events().try_recv() {
                Ok(event) => {
                    app.update(Msg::Core(event));
                    dirty = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    app.update(Msg::WorkerGone);
                    dirty = true;
                    break;
                }
            }
            if started.elapsed() > EVENT_BUDGET {
                break;
            }
        }
    }
}

fn perform(action: Action, worker: &Worker, history: &mut DefaultHistory, history_file: &Path) {
    match action {
        Action::Submit(line) => {
            if history.add(&line).is_ok() {
                let _ = history.append(history_file);
            }
            worker.submit(line);
        }
        Action::Cancel => worker.cancel(),
        Action::Answer(confirmation, yes) => confirmation.answer(yes),
        Action::Reveal(secret, typed) => secret.answer(typed.map(|t| t.0)),
        Action::Chart => worker.run(|conversation, sink| {
            conversation.chart(&crate::chart::ChartSpec::default(), sink)
        }),
        Action::Quit => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static ORDER: Mutex<Vec<&str>> = Mutex::new(Vec::new());

    fn fake_restore() {
        ORDER.lock().unwrap().push("restore");
    }

    #[test]
    fn a_panic_restores_the_terminal_before_its_message() {
        let saved = std::panic::take_hook();
        let message: PanicHook = Box::new(|_| ORDER.lock().unwrap().push("message"));
        std::panic::set_hook(restoring(fake_restore, message));
        let result = std::panic::catch_unwind(|| panic!("boom"));
        let _ = std::panic::take_hook();
        std::panic::set_hook(saved);
        assert!(result.is_err());
        assert_eq!(*ORDER.lock().unwrap(), ["restore", "message"]);
    }
}
