//! `$AIQ_HOME` (default `~/.aiqconfig`): where everything aiq keeps lives,
//! and the one way files there are written. The layout:
//!
//! ```text
//! $AIQ_HOME/                      0700
//!   config.toml                   0600, `aiq config init`, `aiq sources add`
//!   session_YYYYMMDDHHMMSS.json   0600, one per conversation (SPEC §7)
//!   input_history                 the chat's line-editor history
//!   logs/                         0700, the audit log (SPEC §8)
//!     YYYY-MM-DD.jsonl            0600, one JSON line per Lua run or MCP call (UTC date)
//!   cache/catalog-KEY.bin         0600, schemas as last read (see schema::cache)
//!   notes/NAME.md                 0600, what the model should know of a source
//!   cache/windows.json            0600, models' context windows learned from errors
//! ```
//!
//! Every file aiq writes here goes through [`write_atomic`]: a temporary
//! file in the same folder, fsync, rename — so a crash or a full disk never
//! leaves half a file, and the old file stays as it was. The audit log is
//! the one exception: it only grows, one whole line per [`append_line`].

pub mod lock;
pub mod logs;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

/// `$AIQ_HOME` from the environment, else `~/.aiqconfig`; `None` when
/// neither can be found.
pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(home) = env("AIQ_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    dirs::home_dir().map(|h| h.join(".aiqconfig"))
}

/// `config.toml`.
pub fn config_file(home: &Path) -> PathBuf {
    home.join("config.toml")
}

/// The chat's input history (rustyline's file).
pub fn input_history(home: &Path) -> PathBuf {
    home.join("input_history")
}

/// The file of a session created at `created` (UTC).
pub fn session_file(home: &Path, created: &DateTime<Utc>) -> PathBuf {
    home.join(format!("session_{}.json", created.format("%Y%m%d%H%M%S")))
}

/// The notes of the source `key` (see [`crate::notes::key`]).
pub fn notes_file(home: &Path, key: &str) -> PathBuf {
    home.join("notes").join(format!("{key}.md"))
}

/// A source's verified examples, `examples/KEY.jsonl` (the key as notes').
pub fn examples_file(home: &Path, key: &str) -> PathBuf {
    home.join("examples").join(format!("{key}.jsonl"))
}

/// The audit log's folder, `logs/`.
pub fn logs_dir(home: &Path) -> PathBuf {
    home.join("logs")
}

/// The audit log of one UTC day: `logs/YYYY-MM-DD.jsonl`.
pub fn log_file(home: &Path, day: chrono::NaiveDate) -> PathBuf {
    logs_dir(home).join(format!("{}.jsonl", day.format("%Y-%m-%d")))
}

/// The audit log files, oldest first (by name, which is the day).
pub fn log_files(home: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(logs_dir(home))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Appends one line to `path` (created 0600, its folder 0700) in a single
/// write, so lines from processes that log at the same time never mix.
/// A newline is added; `line` must not contain one.
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        if let Some(home) = dir.parent().filter(|h| !h.as_os_str().is_empty()) {
            create_private_dir(home)?;
        }
        create_private_dir(dir)?;
    }
    let mut options = fs::OpenOptions::new();
    options.create(true).append(true).read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let mut bytes = Vec::with_capacity(line.len() + 2);
    // A line a killed process left half written ends where it ends: this
    // one starts on a line of its own, not glued to it.
    if ends_unfinished(&file) {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    file.write_all(&bytes)
}

/// Whether `file` is not empty and its last byte is not a newline.
#[cfg(not(unix))]
fn ends_unfinished(_file: &fs::File) -> bool {
    false
}

/// Whether `file` is not empty and its last byte is not a newline.
#[cfg(unix)]
fn ends_unfinished(file: &fs::File) -> bool {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut last = [0u8];
    len > 0 && file.read_at(&mut last, len - 1).is_ok() && last[0] != b'\n'
}

/// Where cached catalogs live.
pub fn cache_dir(home: &Path) -> PathBuf {
    home.join("cache")
}

/// Where data-file sources keep their views between runs (see
/// `source::duckdb::views`).
pub fn views_cache(home: &Path) -> PathBuf {
    cache_dir(home).join("views")
}

/// Context windows learned from errors, per base URL + model (see
/// `llm::window`).
pub fn windows_file(home: &Path) -> PathBuf {
    cache_dir(home).join("windows.json")
}

/// What remote model servers said about their context windows, per base
/// URL + model (see `llm::window`).
pub fn probes_file(home: &Path) -> PathBuf {
    cache_dir(home).join("probes.json")
}

/// True for a session file's name (`session_*.json`).
pub fn is_session_file(name: &str) -> bool {
    name.starts_with("session_") && name.ends_with(".json")
}

/// Creates the directory with mode 0700 (and tightens an existing one).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    set_mode(dir, 0o700)
}

/// Writes `path` atomically with mode 0600: a temporary file in the same
/// folder filled by `write`, fsync, rename, then an fsync of the folder. A
/// failed write leaves the old file (if any) untouched and no temporary
/// file behind.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_atomic_as(path, true, write)
}

/// [`write_atomic`] for a file the user asked for outside `$AIQ_HOME` (a
/// chart image): it gets a new file's usual mode (0666 less the umask),
/// not 0600.
pub fn write_atomic_shared(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_atomic_as(path, false, write)
}

/// The names of aiq's temporary files: `.aiq-XXXXXX.tmp`.
const TEMP_PREFIX: &str = ".aiq-";
const TEMP_SUFFIX: &str = ".tmp";
/// A temporary file older than this was left by a write that never
/// finished (a write takes seconds at most).
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Removes aiq's own temporary files in `dir` older than [`STALE_AFTER`]:
/// what a process killed during a save left behind.
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !(name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn write_atomic_as(
    path: &Path,
    private: bool,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // What a killed aiq left of an earlier write goes first.
    if private {
        remove_stale_temporaries(dir);
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    if !private {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if private {
        set_mode(tmp.path(), 0o600)?;
    }
    write(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// [`write_atomic`] of whole bytes, creating `home` (0700) first.
pub fn write_private(home: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_private_dir(home)?;
    write_atomic(path, |f| f.write_all(bytes))
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_intact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        fs::write(&p, b"old contents").unwrap();
        let r = write_atomic(&p, |f| {
            f.write_all(b"half of the new")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old contents");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["s.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let p = home.join("config.toml");
        write_private(&home, &p, b"x = 1\n").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&p), 0o600);
        assert_eq!(fs::read(&p).unwrap(), b"x = 1\n");
        // A file the user asked for elsewhere gets the usual mode.
        let shared = dir.path().join("chart.png");
        write_atomic_shared(&shared, |f| f.write_all(b"png")).unwrap();
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|m| u32::from_str_radix(m.trim(), 8).ok());
        if let Some(umask) = umask {
            assert_eq!(mode(&shared), 0o666 & !umask);
        }
    }

    #[test]
    fn a_save_removes_what_a_killed_save_left() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".aiq-AbC123.tmp");
        let young = dir.path().join(".aiq-XyZ789.tmp");
        let other = dir.path().join(".someone-else.tmp");
        for p in [&old, &young, &other] {
            fs::write(p, "half a session").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for p in [&old, &other] {
            fs::File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        write_atomic(&dir.path().join("s.json"), |f| f.write_all(b"{}")).unwrap();
        assert!(!old.exists(), "a stale temporary file of aiq's is removed");
        assert!(young.exists(), "one being written by another aiq is not");
        assert!(other.exists(), "nor a file of another program");
    }

    #[test]
    fn log_lines_append_to_a_private_file_per_day() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 26).unwrap();
        let p = log_file(&home, day);
        assert_eq!(p, home.join("logs/2026-01-26.jsonl"));
        append_line(&p, "{\"a\":1}").unwrap();
        append_line(&p, "{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(log_files(&home), std::slice::from_ref(&p));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&p), 0o600);
            assert_eq!(mode(&logs_dir(&home)), 0o700);
        }
    }

    #[test]
    fn session_names_follow_the_creation_time() {
        let t = DateTime::parse_from_rfc3339("2026-01-26T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let p = session_file(Path::new("/h"), &t);
        assert_eq!(p, Path::new("/h/session_20260126100000.json"));
        assert!(is_session_file("session_20260126100000.json"));
        assert!(!is_session_file("config.toml"));
    }
}
