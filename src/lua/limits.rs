//! The limits of a run (SPEC §8): what stops it ([`Stop`]), the flag the
//! hook, the host functions, the clock and Ctrl-C share ([`Stopper`]), the
//! instruction hook that raises a stop wherever the program is, and the
//! watchdog that stops it when its time is up even inside a statement.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mlua::{HookTriggers, Lua, VmState};

use crate::cancel::CancelToken;
use crate::render::thousands;

/// `[lua]`: the Lua sandbox's limits (SPEC §8). Each one ends a run with an
/// error that names it; the process and the chat go on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LuaConfig {
    /// Wall-clock time of one run, statements included.
    pub timeout_secs: u64,
    /// Memory the Lua state may hold.
    pub memory_mb: u64,
    /// What `print`/`aiq.print` may write in one run.
    pub max_output_kb: u64,
    /// Rows one `aiq.query` may return to the program.
    pub max_rows: u64,
    /// Rows all `aiq.query` calls of one run may return together.
    pub max_total_rows: u64,
    /// Lua VM instructions one run may execute.
    pub max_instructions: u64,
}

impl Default for LuaConfig {
    fn default() -> Self {
        LuaConfig {
            timeout_secs: 10,
            memory_mb: 64,
            max_output_kb: 1024,
            max_rows: 100_000,
            max_total_rows: 1_000_000,
            max_instructions: 1_000_000_000,
        }
    }
}

/// The instruction hook runs every this many VM instructions.
const HOOK_EVERY: u32 = 1000;

/// What stopped a run from outside the program's control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Time = 1,
    Instructions,
    Memory,
    Output,
    Rows,
    TotalRows,
    Cancelled,
    /// The sink failed (closed pipe).
    Sink,
}

impl Stop {
    const ALL: [Stop; 8] = [
        Stop::Time,
        Stop::Instructions,
        Stop::Memory,
        Stop::Output,
        Stop::Rows,
        Stop::TotalRows,
        Stop::Cancelled,
        Stop::Sink,
    ];

    /// The limit in plain words and the `[lua]` key that raises it.
    pub fn limit(self, l: &LuaConfig) -> Option<(String, &'static str)> {
        Some(match self {
            Stop::Time => (
                format!("time limit of {} s", l.timeout_secs),
                "timeout_secs",
            ),
            Stop::Instructions => (
                format!(
                    "instruction limit of {} Lua instructions",
                    thousands(l.max_instructions)
                ),
                "max_instructions",
            ),
            Stop::Memory => (format!("memory limit of {} MB", l.memory_mb), "memory_mb"),
            Stop::Output => (
                format!("output limit of {}", kilobytes(l.max_output_kb)),
                "max_output_kb",
            ),
            Stop::Rows => (
                format!("row limit of {} rows per query", thousands(l.max_rows)),
                "max_rows",
            ),
            Stop::TotalRows => (
                format!("row limit of {} rows per run", thousands(l.max_total_rows)),
                "max_total_rows",
            ),
            Stop::Cancelled | Stop::Sink => return None,
        })
    }
}

/// A run's stop flag, shared with the hook, the watchdog and Ctrl-C.
#[derive(Clone)]
pub struct Stopper {
    reason: Arc<AtomicU8>,
    token: CancelToken,
}

impl Stopper {
    pub fn new() -> Self {
        Stopper {
            reason: Arc::new(AtomicU8::new(0)),
            token: CancelToken::new(),
        }
    }

    /// Stops the run (the first reason stays) and the statement in flight.
    pub fn stop(&self, why: Stop) {
        let _ = self
            .reason
            .compare_exchange(0, why as u8, Ordering::SeqCst, Ordering::SeqCst);
        self.token.cancel();
    }

    pub fn reason(&self) -> Option<Stop> {
        let code = self.reason.load(Ordering::SeqCst);
        Stop::ALL.into_iter().find(|s| *s as u8 == code)
    }

    /// The run's own token: statements run under it.
    pub fn token(&self) -> &CancelToken {
        &self.token
    }
}

/// The error a stop raises inside Lua: a Rust value no program can forge.
#[derive(Debug)]
pub struct Stopped(pub Stop);

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the run was stopped ({:?})", self.0)
    }
}

impl std::error::Error for Stopped {}

/// The Lua error for a stop.
pub fn stopped(why: Stop) -> mlua::Error {
    mlua::Error::external(Stopped(why))
}

/// Every [`HOOK_EVERY`] instructions, in every coroutine: raises a stop
/// that is already set, or sets one for the instruction count or the clock.
pub fn limit_hook(
    lua: &Lua,
    limits: &LuaConfig,
    stopper: Stopper,
    deadline: Instant,
    at_line: Rc<Cell<Option<usize>>>,
) -> mlua::Result<()> {
    let executed = Cell::new(0u64);
    let max = limits.max_instructions;
    let triggers = HookTriggers::new().every_nth_instruction(HOOK_EVERY);
    lua.set_global_hook(triggers, move |_, debug| {
        let n = executed.get().saturating_add(u64::from(HOOK_EVERY));
        executed.set(n);
        let why = match stopper.reason() {
            Some(why) => why,
            None if n > max => Stop::Instructions,
            None if Instant::now() >= deadline => Stop::Time,
            None => return Ok(VmState::Continue),
        };
        if at_line.get().is_none() {
            at_line.set(debug.current_line());
        }
        stopper.stop(why);
        Err(stopped(why))
    })
}

/// Stops the run when its time is up, even while a statement runs or a
/// confirmation waits (the hook only sees the clock between instructions).
pub struct Watchdog {
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn start(after: Duration, stopper: Stopper) -> Watchdog {
        let (done, wait) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("aiq-lua-clock".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(after) {
                    stopper.stop(Stop::Time);
                }
            })
            .ok();
        Watchdog {
            done: Some(done),
            thread,
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `1 MB` for whole megabytes, else `N KB`.
fn kilobytes(kb: u64) -> String {
    if kb >= 1024 && kb.is_multiple_of(1024) {
        format!("{} MB", kb / 1024)
    } else {
        format!("{kb} KB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_plainly() {
        let l = LuaConfig::default();
        assert_eq!(Stop::Time.limit(&l).unwrap().0, "time limit of 10 s");
        assert_eq!(Stop::Memory.limit(&l).unwrap().0, "memory limit of 64 MB");
        assert_eq!(Stop::Output.limit(&l).unwrap().0, "output limit of 1 MB");
        assert_eq!(
            Stop::Rows.limit(&l).unwrap().0,
            "row limit of 100,000 rows per query"
        );
        assert_eq!(thousands(1_000_000_000), "1,000,000,000");
        assert_eq!(thousands(12), "12");
        assert_eq!(kilobytes(100), "100 KB");
    }

    #[test]
    fn the_first_stop_stays_and_cancels_the_run_token() {
        let s = Stopper::new();
        assert_eq!(s.reason(), None);
        s.stop(Stop::Output);
        s.stop(Stop::Time);
        assert_eq!(s.reason(), Some(Stop::Output));
        assert!(s.token().is_cancelled());
    }
}
