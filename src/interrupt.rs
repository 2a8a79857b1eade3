//! Ctrl-C. One process-wide handler: it cancels the turn in flight
//! (through a [`CancelHandle`] to the conversation's current turn) and
//! records that the user interrupted, so the front end can exit with 130.
//! With nothing registered, a single-shot command simply ends with 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::cancel::CancelHandle;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static KEEP_RUNNING: AtomicBool = AtomicBool::new(false);
static CURRENT: Mutex<Option<CancelHandle>> = Mutex::new(None);

/// Installs the handler once. Failure (a handler already set) is harmless.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let current = CURRENT.lock().ok().and_then(|c| c.clone());
        match current {
            Some(handle) => handle.cancel(),
            None if KEEP_RUNNING.load(Ordering::SeqCst) => {}
            None => {
                crate::cleanup::remove_all();
                crate::error::stderr_line("aiq: interrupted");
                std::process::exit(130)
            }
        }
    });
}

/// For the chat and `aiq eval`: Ctrl-C only ever cancels what is in
/// flight; the process goes on (the chat to its next question, an
/// evaluation to the summary of the cases done).
pub fn install_for_chat() {
    KEEP_RUNNING.store(true, Ordering::SeqCst);
    install();
}

/// True once Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Forgets a Ctrl-C that has been dealt with (the next chat turn starts clean).
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// While the guard lives, Ctrl-C cancels through `handle`.
pub struct Running(());

impl Running {
    pub fn new(handle: CancelHandle) -> Running {
        if let Ok(mut c) = CURRENT.lock() {
            *c = Some(handle);
        }
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut c) = CURRENT.lock() {
            *c = None;
        }
    }
}
