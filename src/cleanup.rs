//! Files aiq must not leave behind: the private folders that hold a data
//! folder's views while it is open. They are removed when their owner is
//! dropped, and — since a signal skips destructors — by the SIGTERM/SIGHUP
//! handler and by Ctrl-C's exit path; folders left by a crash (a `kill -9`)
//! are removed by the next aiq that starts.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The prefix of the views folders in the temporary directory.
pub const VIEWS_PREFIX: &str = "aiq-views-";

/// Removes `path` (a folder) if aiq is ended by a signal.
pub fn register(path: &Path) {
    if let Ok(mut paths) = PATHS.lock() {
        paths.push(path.to_path_buf());
    }
}

/// `path` was removed normally.
pub fn unregister(path: &Path) {
    if let Ok(mut paths) = PATHS.lock() {
        paths.retain(|p| p != path);
    }
}

/// Removes every registered folder (best effort).
pub fn remove_all() {
    let paths = match PATHS.lock() {
        Ok(mut p) => std::mem::take(&mut *p),
        Err(_) => return,
    };
    for p in paths {
        let _ = std::fs::remove_dir_all(p);
    }
}

static BEFORE_EXIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Runs `f` before a signal ends aiq (the full-screen view puts the
/// terminal back this way).
pub fn before_signal_exit(f: fn()) {
    if let Ok(mut fs) = BEFORE_EXIT.lock() {
        fs.push(f);
    }
}

/// On SIGTERM and SIGHUP: remove the registered folders and exit with
/// 128 + the signal's number, as a shell does.
pub fn install_signal_handlers() {
    use signal_hook::consts::{SIGHUP, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("aiq-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let before: Vec<fn()> = BEFORE_EXIT.lock().map(|f| f.clone()).unwrap_or_default();
                for f in before {
                    f();
                }
                remove_all();
                std::process::exit(128 + signal);
            }
        });
}

/// Removes views folders left by aiq processes that no longer run (a crash,
/// `kill -9`): `aiq-views-PID-…` whose process is gone, and older folders
/// without a process id after a day.
pub fn remove_stale_views() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(VIEWS_PREFIX) else {
            continue;
        };
        let stale = match rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) {
            Some(pid) => !process_alive(pid),
            None => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 24 * 3600),
        };
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_alive(_: u32) -> bool {
    // Without /proc, only the age rule applies (see above): keep it.
    true
}
