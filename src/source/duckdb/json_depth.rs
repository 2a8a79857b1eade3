//! How deep a JSON file's values nest, measured before DuckDB reads it.
//!
//! DuckDB's JSON reader works out a value's structure by recursion on one
//! of its own worker threads, whatever `maximum_depth` says: a value nested
//! a few hundred thousand levels deep overflows that thread's stack and
//! ends the process. A data file must never do that (SPEC §14), so a JSON
//! file holding a value nested deeper than [`MAX_NESTING`] is refused with
//! the line that holds it.

use std::io::Read;
use std::path::Path;

/// The deepest nesting a JSON file may hold. Real data nests a few dozen
/// levels; DuckDB's reader holds some hundred thousand on its threads.
pub(crate) const MAX_NESTING: usize = 10_000;
/// [`MAX_NESTING`] as messages write it.
const MAX_NESTING_TEXT: &str = "10,000";

/// Where a JSON file first nests deeper than [`MAX_NESTING`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooDeep {
    /// 1-based line of the bracket that went past the bound.
    pub line: u64,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} holds a value nested more than {MAX_NESTING_TEXT} levels deep, \
             deeper than aiq reads",
            self.line
        )
    }
}

/// Scans `path` for nesting past [`MAX_NESTING`]; brackets inside strings
/// do not count. A file that cannot be read is left for DuckDB to say so.
pub(crate) fn check(path: &Path) -> Result<(), TooDeep> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(());
    };
    check_reader(file, MAX_NESTING)
}

fn check_reader(mut input: impl Read, limit: usize) -> Result<(), TooDeep> {
    let mut buf = vec![0u8; 1 << 20];
    let mut nesting = crate::nesting::Nesting::new(limit);
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(n) => n,
        };
        if let Some(line) = nesting.feed(&buf[..n]) {
            return Err(TooDeep { line });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(open: &str, close: &str, n: usize) -> String {
        format!("{}1{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn the_message_says_the_bound() {
        assert_eq!(MAX_NESTING_TEXT.replace(',', ""), MAX_NESTING.to_string());
    }

    #[test]
    fn a_value_split_across_read_buffers_is_still_counted() {
        // Longer than the scanner's buffer, with the nesting at the seam.
        let text = format!("{}{}", " ".repeat((1 << 20) - 3), deep("[", "]", 20));
        assert_eq!(check_reader(text.as_bytes(), 10), Err(TooDeep { line: 1 }));
    }
}
