//! `$AIQ_HOME` (default `~/.aiqconfig`): where everything aiq keeps lives,
//! and the one way files there are written. The layout:
//!
//! ```text
//! $AIQ_HOME/                      0700
//!   config.toml                   0600, `aiq config init`, `aiq sources add`
//!   session_YYYYMMDDHHMMSS.json   0600, one per conversation (SPEC §7)
//!   input_history                 the chat's line-editor history
//!   cache/catalog-KEY.bin         0600, schemas as last read (see schema::cache)
//!   cache/windows.json            0600, models' context windows learned from errors
//! ```
//!
//! Every file aiq writes here goes through [`write_atomic`]: a temporary
//! file in the same folder, fsync, rename — so a crash or a full disk never
//! leaves half a file, and the old file stays as it was.

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

/// Where cached catalogs live.
pub fn cache_dir(home: &Path) -> PathBuf {
    home.join("cache")
}

/// Context windows learned from errors, per base URL + model (see
/// `llm::window`).
pub fn windows_file(home: &Path) -> PathBuf {
    cache_dir(home).join("windows.json")
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
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".aiq-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    set_mode(tmp.path(), 0o600)?;
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
