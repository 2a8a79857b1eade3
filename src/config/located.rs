//! Says where a config file is wrong: `PATH:LINE:COL`, the table and key,
//! and what was wrong in a person's words (`[query] timeout_secs: expected
//! a number of seconds, found "30s"`), for the parser's errors and for the
//! checks aiq makes after parsing.

use std::ops::Range;
use std::path::Path;

/// What aiq appends to every config error.
pub const HINT: &str = "fix or remove the key; `aiq config init --print` shows a commented example";

/// A parser error of the file at `path` whose text is `text`.
pub fn parse_error(text: &str, path: &Path, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    let Some(span) = e.span() else {
        return format!(
            "invalid config {}: {} ({HINT})",
            path.display(),
            one_line(message)
        );
    };
    let place = Place::of(text, span.clone());
    if message == "duplicate key" {
        return format!(
            "invalid config {}:{}:{}: {}",
            path.display(),
            place.line,
            place.col,
            duplicate(text, &place)
        );
    }
    let what = {
        let said = plain(message, &place.key);
        match place.name() {
            Some(name) => format!("{name}: {said}"),
            None => said,
        }
    };
    format!(
        "invalid config {}:{}:{}: {what} ({HINT})",
        path.display(),
        place.line,
        place.col
    )
}

/// An error aiq found after parsing, about `key` in `[table]` (or the table
/// itself when `key` is empty), placed at the line that sets it.
pub fn checked(text: &str, path: &Path, table: &str, key: &str, what: &str) -> String {
    let at = match line_of(text, table, key) {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    };
    let name = match key {
        "" => format!("[{table}]"),
        _ => format!("[{table}] {key}"),
    };
    format!("invalid config {at}: {name}: {what} ({HINT})")
}

/// Where in the file a span starts, and the table and key it belongs to.
struct Place {
    line: usize,
    col: usize,
    /// The table header in force there (`query`, `sources.shop`), if any.
    table: Option<String>,
    /// The key the line sets; empty on a header line.
    key: String,
    /// The span's line is itself a table header.
    on_header: bool,
}

impl Place {
    fn of(text: &str, span: Range<usize>) -> Place {
        let start = crate::clip::head(text, span.start).len();
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = text[line_start..start].chars().count() + 1;
        let lines: Vec<&str> = text.lines().collect();
        let here = lines.get(line - 1).copied().unwrap_or("");
        let on_header = header(here).is_some();
        let table = lines[..line.min(lines.len())]
            .iter()
            .rev()
            .find_map(|l| header(l));
        let key = if on_header {
            String::new()
        } else {
            key_of(here)
        };
        Place {
            line,
            col,
            table,
            key,
            on_header,
        }
    }

    /// `[query] timeout_secs`, `[query]`, or `colour` for a top-level key.
    fn name(&self) -> Option<String> {
        match (&self.table, self.key.as_str()) {
            (Some(t), "") => Some(format!("[{t}]")),
            (Some(t), k) => Some(format!("[{t}] {k}")),
            (None, "") => None,
            (None, k) => Some(k.to_string()),
        }
    }
}

/// A key or table set twice, with both lines.
fn duplicate(text: &str, place: &Place) -> String {
    let table = place.table.clone().unwrap_or_default();
    if place.on_header {
        let first = text
            .lines()
            .position(|l| header(l).as_deref() == Some(table.as_str()))
            .map_or(0, |i| i + 1);
        return format!(
            "[{table}] appears twice, on lines {first} and {} (merge the two into one [{table}])",
            place.line
        );
    }
    let first = line_of(text, &table, &place.key).unwrap_or(0);
    let within = match table.as_str() {
        "" => String::new(),
        t => format!(" in [{t}]"),
    };
    format!(
        "`{}` is set twice{within}, on lines {first} and {} (keep one)",
        place.key, place.line
    )
}

/// The 1-based line that sets `key` in `[table]` (the header's own line
/// when `key` is empty); `table` "" is the top level.
fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(h) = header(l) {
            current = h;
            if key.is_empty() && current == table {
                return Some(i + 1);
            }
            continue;
        }
        if !key.is_empty() && current == table && key_of(l) == key {
            return Some(i + 1);
        }
    }
    None
}

/// The table a header line opens, spaces and quotes removed.
fn header(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t.strip_prefix("[[").and_then(|r| r.split("]]").next());
    let inner = inner.or_else(|| t.strip_prefix('[').and_then(|r| r.split(']').next()))?;
    let parts: Vec<String> = inner.split('.').map(unquote).collect();
    Some(parts.join("."))
}

/// The key a `key = value` line sets, or "" for any other line.
fn key_of(line: &str) -> String {
    let t = line.trim();
    if t.starts_with('#') || t.starts_with('[') {
        return String::new();
    }
    match t.split_once('=') {
        Some((k, _)) => k.split('.').map(unquote).collect::<Vec<_>>().join("."),
        None => String::new(),
    }
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches('"').trim_matches('\'').to_string()
}

/// The parser's message in a person's words.
pub fn plain(message: &str, key: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((found, expected)) = rest.split_once(", expected ") {
                return format!("expected {}, found {}", wanted(expected, key), shown(found));
            }
        }
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some((field, known)) = rest.split_once("`, expected ") {
            let known = known.trim_start_matches("one of ");
            return format!("`{field}` is not a key aiq knows here (the keys are {known})");
        }
        if let Some((field, _)) = rest.split_once('`') {
            return format!("`{field}` is not a key aiq knows here");
        }
    }
    one_line(message)
}

/// What the type a key takes is called.
fn wanted(expected: &str, key: &str) -> String {
    let number = matches!(
        expected,
        "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "a nonzero u64" | "a number"
    );
    match expected {
        _ if number && key.ends_with("_secs") => "a number of seconds".into(),
        _ if number => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a string" => "text in quotes".into(),
        "a sequence" => "a list in brackets, [\"…\"]".into(),
        other => other.to_string(),
    }
}

/// A value as the file wrote it: `string "30s"` → `"30s"`, ``integer `3` `` → `3`.
fn shown(found: &str) -> String {
    // ``floating point `1000.0` `` and ``integer `99999999999999999999` as i128``.
    if let (Some(start), Some(end)) = (found.find('`'), found.rfind('`')) {
        if end > start {
            let value = &found[start + 1..end];
            let note = if found.starts_with("floating point") {
                " (a decimal)"
            } else if found.ends_with("as i128") || found.ends_with("as u128") {
                " (too large)"
            } else {
                ""
            };
            return format!("{value}{note}");
        }
    }
    let value = match found.split_once(' ') {
        Some((_, v)) => v,
        None => return found.to_string(),
    };
    value.trim_matches('`').to_string()
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        let e = toml::from_str::<super::super::FileConfig>(text).unwrap_err();
        parse_error(text, Path::new("/h/config.toml"), &e)
    }

    #[test]
    fn a_wrong_type_names_the_place_the_key_and_the_value() {
        let e = error_of("[query]\ntimeout_secs = \"30s\"\n");
        assert!(
            e.starts_with(
                "invalid config /h/config.toml:2:16: [query] timeout_secs: expected a number of seconds, found \"30s\""
            ),
            "{e}"
        );
        let e = error_of("[output]\npager = \"yes\"\n");
        assert!(
            e.contains(":2:9: [output] pager: expected true or false, found \"yes\""),
            "{e}"
        );
    }

    #[test]
    fn a_decimal_or_a_number_too_large_is_said_so() {
        assert_eq!(
            plain(
                "invalid type: floating point `1000.0`, expected u64",
                "max_concurrent"
            ),
            "expected a whole number, found 1000.0 (a decimal)"
        );
        assert_eq!(
            plain(
                "invalid value: integer `99999999999999999999` as i128, expected u64",
                "timeout_secs"
            ),
            "expected a number of seconds, found 99999999999999999999 (too large)"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u64", "max_rows"),
            "expected a whole number, found -1"
        );
    }

    #[test]
    fn a_table_or_key_set_twice_names_both_lines() {
        let e = error_of("[query]\ntimeout_secs = 30\n\n[query]\nmax_rows = 3\n");
        assert!(e.contains(":4:"), "{e}");
        assert!(e.contains("[query] appears twice, on lines 1 and 4"), "{e}");
        let e = error_of("[sources.shop]\nurl = \"a.db\"\n[sources.shop]\nurl = \"b.db\"\n");
        assert!(
            e.contains("[sources.shop] appears twice, on lines 1 and 3"),
            "{e}"
        );
        let e = error_of("[query]\nmax_rows = 3\nmax_rows = 4\n");
        assert!(
            e.contains("`max_rows` is set twice in [query], on lines 2 and 3"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_key_is_placed_and_named() {
        let e = error_of("[chat]\n\nhistory_limt = 3\n");
        assert!(
            e.contains(":3:1: [chat] history_limt: `history_limt` is not a key aiq knows here"),
            "{e}"
        );
    }

    #[test]
    fn a_checked_key_is_placed_at_its_line() {
        let text = "[llm]\n# the window\ncontext_tokens = 100\n";
        let e = checked(
            text,
            Path::new("/h/c.toml"),
            "llm",
            "context_tokens",
            "too small",
        );
        assert!(
            e.starts_with("invalid config /h/c.toml:3: [llm] context_tokens: too small"),
            "{e}"
        );
        let e = checked(
            "[sources.x]\nurl=1\n",
            Path::new("/h/c.toml"),
            "sources.x",
            "",
            "bad",
        );
        assert!(
            e.starts_with("invalid config /h/c.toml:1: [sources.x]: bad"),
            "{e}"
        );
    }
}
