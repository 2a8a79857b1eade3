//! How deep JSON text nests, read as bytes without parsing it: brackets
//! inside strings do not count. What a parser that recurses (DuckDB's JSON
//! reader, serde) would have to follow, measured before it tries — for a
//! data file read in chunks, or an MCP frame at once.

/// Follows JSON text fed to it in chunks of any size, and says where its
/// nesting first goes past `limit`.
#[derive(Debug, Clone)]
pub struct Nesting {
    limit: usize,
    depth: usize,
    line: u64,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    pub fn new(limit: usize) -> Nesting {
        Nesting {
            limit,
            depth: 0,
            line: 1,
            in_string: false,
            escaped: false,
        }
    }

    /// Reads the next bytes of the text: the 1-based line of the bracket
    /// that nests past the limit, once one does.
    pub fn feed(&mut self, bytes: &[u8]) -> Option<u64> {
        for &b in bytes {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                } else if b == b'\n' {
                    // A string never spans lines in valid JSON: a stray
                    // quote ends at the line, as a reader would resync.
                    self.in_string = false;
                    self.line += 1;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > self.limit {
                        return Some(self.line);
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b'\n' => self.line += 1,
                _ => {}
            }
        }
        None
    }
}

/// Where `text` first nests past `limit`: its line, or `None`.
pub fn past(text: &[u8], limit: usize) -> Option<u64> {
    Nesting::new(limit).feed(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(open: &str, close: &str, n: usize) -> String {
        format!("{}1{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn nesting_at_the_bound_passes_and_past_it_names_the_line() {
        let at = format!("{{\"a\": 1}}\n{{\"v\": {}}}\n", deep("[", "]", 9));
        assert_eq!(past(at.as_bytes(), 10), None);
        let beyond = format!("{{\"a\": 1}}\n\n{{\"v\": {}}}\n", deep("{\"b\":", "}", 10));
        assert_eq!(past(beyond.as_bytes(), 10), Some(3));
    }

    #[test]
    fn brackets_in_strings_and_escapes_do_not_count() {
        let text = format!(
            "{{\"s\": \"{}\\\"{}\", \"t\": \"\\\\\"}}\n",
            "[".repeat(50),
            "{".repeat(50)
        );
        assert_eq!(past(text.as_bytes(), 3), None);
        // After an escaped backslash the quote closes the string, so the
        // brackets after it count.
        let after = format!("{{\"t\": \"\\\\\", \"u\": {}}}", deep("[", "]", 5));
        assert_eq!(past(after.as_bytes(), 3), Some(1));
    }

    #[test]
    fn text_fed_in_pieces_is_followed_across_them() {
        let text = deep("[", "]", 20);
        let mut n = Nesting::new(10);
        let (a, b) = text.split_at(7);
        assert_eq!(n.feed(a.as_bytes()), None);
        assert_eq!(n.feed(b.as_bytes()), Some(1));
        // A string and an escape split between pieces.
        let mut n = Nesting::new(1);
        assert_eq!(n.feed(b"{\"a\\"), None);
        assert_eq!(n.feed(b"\"[[\": 1}"), None);
    }
}
