//! Advisory locks for the files several aiq processes write at once
//! (SPEC §7.3a): sessions, notes, saved sources, the schema cache.
//!
//! A writer holds an OS lock on a sibling file (`.NAME.lock`) for one
//! read-merge-write, never across a model call. The lock file stays: the
//! file it guards is replaced by an atomic rename, so a lock on the old
//! file itself would not cover the new one. The OS releases a lock when
//! its process dies, so a crash never leaves a stale lock behind.
//!
//! A chat also says it has a session open with a presence file
//! (`.NAME.open-PID`) that it keeps locked while it runs: another chat that
//! finds a locked one knows that process is still there; an unlocked one
//! was left by a process that died and is removed.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

/// The sibling lock file of `path`.
pub fn lock_path(path: &Path) -> PathBuf {
    sibling(path, ".lock")
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{suffix}"))
}

fn open_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Runs `f` while holding the exclusive lock of `path`, waiting for other
/// processes' turns first. The folder must exist.
pub fn exclusive<T>(path: &Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let file = open_private(&lock_path(path))?;
    file.lock()?;
    let result = f();
    // Closing the file releases the lock too; unlocking first says so.
    let _ = file.unlock();
    result
}

/// A chat's mark that it has a file open; removed when dropped.
#[derive(Debug)]
pub struct Presence {
    _file: File,
    path: PathBuf,
}

impl Drop for Presence {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Marks `path` as open by this process and returns the ids of the other
/// live processes that have it open. Presence files of processes that
/// died are removed on the way.
pub fn enter(path: &Path) -> io::Result<(Presence, Vec<u32>)> {
    let own = std::process::id();
    let prefix = format!(
        ".{}.open-",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut others = Vec::new();
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(file) = OpenOptions::new().read(true).write(true).open(entry.path()) else {
            continue;
        };
        match file.try_lock() {
            Err(TryLockError::WouldBlock) => others.push(pid),
            Ok(()) => {
                let _ = fs::remove_file(entry.path());
            }
            Err(TryLockError::Error(_)) => {}
        }
    }
    others.sort_unstable();
    let mine = sibling(path, &format!(".open-{own}"));
    let file = open_private(&mine)?;
    file.lock()?;
    Ok((
        Presence {
            _file: file,
            path: mine,
        },
        others,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    #[test]
    fn writers_take_turns_and_none_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("counter.txt"));
        fs::write(&*path, "0").unwrap();
        let start = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..25 {
                        exclusive(&path, || {
                            let n: u64 = fs::read_to_string(&*path)?.trim().parse().unwrap();
                            std::thread::yield_now();
                            crate::home::write_atomic(&path, |f| {
                                io::Write::write_all(f, (n + 1).to_string().as_bytes())
                            })
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(fs::read_to_string(&*path).unwrap(), "200");
        assert!(lock_path(&path).exists(), "the lock file stays");
    }

    #[test]
    fn presence_names_live_processes_and_clears_dead_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        // A presence file nobody holds: its process died.
        let dead = dir.path().join(".s.json.open-999999");
        fs::write(&dead, "").unwrap();
        let (held, others) = enter(&path).unwrap();
        assert!(others.is_empty(), "{others:?}");
        assert!(!dead.exists(), "a dead process's mark is removed");
        let mine = dir
            .path()
            .join(format!(".s.json.open-{}", std::process::id()));
        assert!(mine.exists());
        drop(held);
        assert!(!mine.exists(), "leaving removes the mark");
    }
}
