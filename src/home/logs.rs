//! Writing the audit log so it stays readable and bounded: a long string
//! in a line (a statement of megabytes) is cut, with its length and hash
//! kept, and a day's file that reaches `[audit] max_size_mb` is rotated,
//! at most `[audit] keep` rotated parts of a day kept.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// A string in a log line longer than this is cut.
pub const MAX_STRING: usize = 64 * 1024;

/// How big a day's log may grow and how many rotated parts are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: u64,
    pub keep: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 64 * 1024 * 1024,
            keep: 5,
        }
    }
}

static LIMITS: OnceLock<Limits> = OnceLock::new();

/// Sets the limits for this process (from `[audit]`); the first call wins.
pub fn set_limits(limits: Limits) {
    let _ = LIMITS.set(limits);
}

fn limits() -> Limits {
    LIMITS.get().copied().unwrap_or_default()
}

/// Milliseconds with microsecond precision, as log lines write durations.
pub fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Appends `line` (one JSON object) to the log file `path`: its long
/// strings cut, the file rotated first when it is full.
pub fn append(path: &Path, line: &str) -> std::io::Result<()> {
    let line = cut_strings(line);
    let limits = limits();
    if fs::metadata(path).is_ok_and(|m| m.len() + line.len() as u64 > limits.max_bytes) {
        rotate(path, limits.keep)?;
    }
    super::append_line(path, &line)
}

/// `line` with every JSON string longer than [`MAX_STRING`] bytes cut:
/// its start, then `… (cut: N bytes, sha256 H)`.
pub fn cut_strings(line: &str) -> String {
    if line.len() <= MAX_STRING {
        return line.to_string();
    }
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(line) else {
        return cut(line);
    };
    walk(&mut value);
    serde_json::to_string(&value).unwrap_or_else(|_| cut(line))
}

fn walk(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) if s.len() > MAX_STRING => *s = cut(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
        serde_json::Value::Object(map) => map.values_mut().for_each(walk),
        _ => {}
    }
}

fn cut(text: &str) -> String {
    let start = crate::clip::head(text, MAX_STRING);
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{}… (cut: {} bytes, sha256 {hex}…)", start, text.len())
}

/// `D.jsonl` becomes `D.NNN.jsonl`, the next part of the day; the oldest
/// parts beyond `keep` are removed.
fn rotate(path: &Path, keep: usize) -> std::io::Result<()> {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str())) else {
        return Ok(());
    };
    let mut parts = parts_of(dir, stem);
    let next = parts.last().map_or(1, |(n, _)| n + 1);
    fs::rename(path, dir.join(format!("{stem}.{next:03}.jsonl")))?;
    parts.push((next, PathBuf::new()));
    while parts.len() > keep {
        let (_, old) = parts.remove(0);
        if !old.as_os_str().is_empty() {
            let _ = fs::remove_file(old);
        }
    }
    Ok(())
}

/// The rotated parts of the day `stem` in `dir`, oldest first.
fn parts_of(dir: &Path, stem: &str) -> Vec<(u32, PathBuf)> {
    let mut parts: Vec<(u32, PathBuf)> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_string();
                    let n = name
                        .strip_prefix(stem)?
                        .strip_prefix('.')?
                        .strip_suffix(".jsonl")?
                        .parse()
                        .ok()?;
                    Some((n, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    parts.sort();
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_cut_with_length_and_hash() {
        let sql = format!("SELECT {}1", "1 + ".repeat(20_000));
        let line = serde_json::json!({"sql": sql, "rows": 1}).to_string();
        let cut = cut_strings(&line);
        let v: serde_json::Value = serde_json::from_str(&cut).unwrap();
        let kept = v["sql"].as_str().unwrap();
        assert!(kept.starts_with("SELECT 1 + 1 + "), "{kept}");
        assert!(
            kept.contains(&format!("(cut: {} bytes, sha256 ", sql.len())),
            "{kept}"
        );
        assert!(kept.len() < MAX_STRING + 100);
        assert_eq!(v["rows"], 1);
        let short = serde_json::json!({"sql": "SELECT 1"}).to_string();
        assert_eq!(cut_strings(&short), short);
    }

    #[test]
    fn a_full_day_is_rotated_keeping_the_newest_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("2026-01-26.jsonl");
        for i in 0..10 {
            std::fs::write(&path, format!("{{\"n\":{i}}}\n")).unwrap();
            rotate(&path, 3).unwrap();
        }
        let parts: Vec<u32> = parts_of(dir.path(), "2026-01-26")
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(parts, [8, 9, 10]);
        let newest = std::fs::read_to_string(dir.path().join("2026-01-26.010.jsonl")).unwrap();
        assert_eq!(newest, "{\"n\":9}\n");
        assert!(!path.exists());
    }
}
