//! Cancellation. A [`CancelToken`] belongs to one turn (or one `-e`
//! statement): the model request waits on it, the running statement
//! registers its engine's interrupt on it, and a Lua hook polls it. A new
//! turn gets a new token, so a cancel can never outlive the turn it was
//! meant for. [`TurnSlot`] holds the token of the turn in flight, so a
//! [`CancelHandle`] taken once (for Ctrl-C, or by a UI thread) always
//! reaches whatever runs now — across `/source` and across turns.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Hook = Arc<dyn Fn() + Send + Sync>;

struct Inner {
    cancelled: AtomicBool,
    watch: tokio::sync::watch::Sender<bool>,
    hooks: Mutex<Vec<(u64, Hook)>>,
    next_hook: AtomicU64,
}

/// One turn's cancel flag: cheap to clone, shared by everything the turn runs.
#[derive(Clone)]
pub struct CancelToken(Arc<Inner>);

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CancelToken(cancelled: {})", self.is_cancelled())
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        let (watch, _) = tokio::sync::watch::channel(false);
        CancelToken(Arc::new(Inner {
            cancelled: AtomicBool::new(false),
            watch,
            hooks: Mutex::new(Vec::new()),
            next_hook: AtomicU64::new(0),
        }))
    }

    /// Cancels: sets the flag, wakes waiting requests and calls every
    /// registered hook (engine interrupts). Calling it again does nothing.
    pub fn cancel(&self) {
        if self.0.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        self.0.watch.send_replace(true);
        let hooks: Vec<Hook> = match self.0.hooks.lock() {
            Ok(h) => h.iter().map(|(_, f)| Arc::clone(f)).collect(),
            Err(_) => Vec::new(),
        };
        for hook in hooks {
            hook();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once the token is cancelled (for async model requests).
    pub async fn cancelled(&self) {
        let mut rx = self.0.watch.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    /// Calls `hook` when the token is cancelled, for as long as the returned
    /// guard lives; at once if it already is. A running statement registers
    /// its engine's interrupt this way, and unregisters when it ends.
    pub fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) -> HookGuard {
        let id = self.0.next_hook.fetch_add(1, Ordering::SeqCst);
        let hook: Hook = Arc::new(hook);
        if let Ok(mut hooks) = self.0.hooks.lock() {
            hooks.push((id, Arc::clone(&hook)));
        }
        // A cancel that landed before (or while) registering still counts.
        if self.is_cancelled() {
            hook();
        }
        HookGuard {
            token: self.clone(),
            id,
        }
    }
}

/// Unregisters a hook when dropped.
pub struct HookGuard {
    token: CancelToken,
    id: u64,
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        if let Ok(mut hooks) = self.token.0.hooks.lock() {
            hooks.retain(|(id, _)| *id != self.id);
        }
    }
}

/// Cancels something from any thread (Ctrl-C, a UI's cancel key).
#[derive(Clone)]
pub struct CancelHandle(Arc<dyn Fn() + Send + Sync>);

impl CancelHandle {
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> Self {
        CancelHandle(Arc::new(f))
    }

    pub fn cancel(&self) {
        (self.0)()
    }
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelHandle")
    }
}

/// The token of the turn in flight, if any.
#[derive(Clone, Default)]
pub struct TurnSlot(Arc<Mutex<Option<CancelToken>>>);

impl TurnSlot {
    /// Starts a turn: a fresh token, current until the guard is dropped.
    pub fn begin(&self) -> (CancelToken, TurnGuard) {
        let token = CancelToken::new();
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(token.clone());
        }
        (token, TurnGuard(self.clone()))
    }

    /// Cancels the turn in flight; with none in flight, does nothing.
    pub fn cancel(&self) {
        let current = self.0.lock().ok().and_then(|slot| slot.clone());
        if let Some(token) = current {
            token.cancel();
        }
    }

    /// True while a turn runs.
    pub fn busy(&self) -> bool {
        self.0.lock().map(|s| s.is_some()).unwrap_or(false)
    }

    /// A handle that cancels whichever turn is in flight when it is used.
    pub fn handle(&self) -> CancelHandle {
        let slot = self.clone();
        CancelHandle::new(move || slot.cancel())
    }
}

/// Ends the turn's time in the slot.
pub struct TurnGuard(TurnSlot);

impl Drop for TurnGuard {
    fn drop(&mut self) {
        if let Ok(mut slot) = (self.0).0.lock() {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn hooks_fire_once_and_only_while_registered() {
        let token = CancelToken::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&calls);
        let guard = token.on_cancel(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
        drop(guard);
        token.cancel();
        assert_eq!(calls.load(Ordering::SeqCst), 0, "unregistered hook fired");
        let c = Arc::clone(&calls);
        let _late = token.on_cancel(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(calls.load(Ordering::SeqCst), 1, "a late hook fires at once");
        token.cancel();
        assert_eq!(calls.load(Ordering::SeqCst), 1, "cancel is idempotent");
    }

    #[test]
    fn a_cancel_between_turns_reaches_no_turn() {
        let slot = TurnSlot::default();
        let handle = slot.handle();
        handle.cancel(); // nothing in flight
        let (first, guard) = slot.begin();
        assert!(!first.is_cancelled());
        handle.cancel();
        assert!(first.is_cancelled());
        drop(guard);
        assert!(!slot.busy());
        let (second, _guard) = slot.begin();
        assert!(
            !second.is_cancelled(),
            "the first turn's cancel stayed behind"
        );
    }
}
