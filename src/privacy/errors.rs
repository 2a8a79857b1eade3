//! Error messages as a model may see them (SPEC §4.3): an engine quotes
//! the value it choked on ("Could not convert string 'ann@…' to INT32"),
//! and a program's error may carry whatever it read. When what failed read
//! a redacted column (or results are not sent at all), quoted values are
//! masked and a program's message is withheld; names stay, so the model can
//! still fix its SQL.

/// `text` with every quoted literal (`'…'`, `"…"`) masked unless it is
/// one of `names` (lowercased) or appears in one of `codes` (the SQL the
/// model wrote: its own literals and identifiers are no secret).
pub fn mask_quoted(
    text: &str,
    names: &std::collections::HashSet<String>,
    codes: &[&str],
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = opening_quote(rest) {
        let quote = rest[start..].chars().next().unwrap_or('\'');
        out.push_str(&rest[..=start]);
        let after = &rest[start + 1..];
        let Some(len) = after.find(quote) else {
            // An unclosed quote: whatever follows may be a value.
            out.push('…');
            out.push(quote);
            return out;
        };
        let inner = &after[..len];
        let keep = inner.is_empty()
            || names.contains(&inner.to_lowercase())
            || codes.iter().any(|c| has_word(c, inner));
        match keep {
            true => out.push_str(inner),
            false => out.push('…'),
        }
        out.push(quote);
        rest = &after[len + 1..];
    }
    out.push_str(rest);
    out
}

/// An engine's error about a statement that read values that may not
/// leave, as a model may see it: its first line with quoted values masked
/// ([`mask_quoted`]); of the lines after it only those that echo the
/// statement (`LINE 1: SELECT …`) and the caret under them — an engine
/// may repeat a value on a line of its own, unquoted (DuckDB's `strptime`
/// answers with the string it could not parse); and when the statement
/// raises an error of its own making (DuckDB's `error(…)`), whose message
/// is its data, only the error's kind.
pub fn mask_statement_error(
    text: &str,
    names: &std::collections::HashSet<String>,
    codes: &[&str],
) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut out = vec![if codes.iter().any(|c| raises_its_own(c)) {
        kind_only(first)
    } else {
        mask_quoted(first, names, codes)
    }];
    let mut dropped = false;
    for line in lines {
        let t = line.trim();
        let caret = t
            .chars()
            .all(|c| matches!(c, '^' | '~') || c.is_whitespace());
        let echo = t
            .strip_prefix("LINE ")
            .and_then(|r| r.split_once(':'))
            .is_some_and(|(n, rest)| {
                n.chars().all(|c| c.is_ascii_digit())
                    && codes.iter().any(|c| c.contains(rest.trim()))
            });
        if caret || echo {
            out.push(line.to_string());
        } else if !dropped {
            out.push("(a line that may repeat a value is not sent)".into());
            dropped = true;
        }
    }
    out.join("\n")
}

/// Whether `code` calls `error(…)`, which raises its argument as the
/// error's message.
fn raises_its_own(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    lower.match_indices("error").any(|(i, w)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + w.len()..].trim_start();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after.starts_with('(')
    })
}

/// `Invalid Input Error: …` as its kind alone.
fn kind_only(line: &str) -> String {
    let kind = line
        .split_once(": ")
        .map(|(k, _)| k)
        .filter(|k| k.to_ascii_lowercase().contains("error"));
    match kind {
        Some(k) => format!("{k}: (its message is made of the data the statement read; not sent)"),
        None => "(its message is made of the data the statement read; not sent)".into(),
    }
}

/// Where the next quoted literal of `text` opens: a quote not inside a
/// word (the apostrophe of `doesn't` opens nothing).
fn opening_quote(text: &str) -> Option<usize> {
    text.char_indices()
        .filter(|(_, c)| matches!(c, '\'' | '"'))
        .find(|(i, _)| {
            !text[..*i]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
        })
        .map(|(i, _)| i)
}

/// Whether `code` holds `word` whole (not as part of a longer name or
/// value): a one-letter value is not "in" the SQL because a letter is.
fn has_word(code: &str, word: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    code.match_indices(word).any(|(i, _)| {
        !part(code[..i].chars().next_back()) && !part(code[i + word.len()..].chars().next())
    })
}

/// A program's error when it read values that may not leave: where it
/// failed (Lua's `[string "program"]:LINE:`), not what it said.
pub fn withhold_program_error(text: &str, why: &str) -> String {
    // Lua's messages start with where: `[string "program"]:3:` or `program:3:`.
    let line = text.match_indices(':').find_map(|(i, _)| {
        let digits: String = text[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty() && text[i + 1 + digits.len()..].starts_with(':')).then_some(digits)
    });
    match line {
        Some(n) => format!("at line {n}; its message is not sent ({why})"),
        None => format!("its message is not sent ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> std::collections::HashSet<String> {
        ["customers", "email", "name"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn values_quoted_by_engines_are_masked_and_names_kept() {
        let sql = "SELECT CAST(email AS INTEGER) FROM customers WHERE name = 'Ann'";
        let cases = [
            (
                "Conversion Error: Could not convert string 'lucia.miller1@example.com' to INT32",
                "Conversion Error: Could not convert string '…' to INT32",
            ),
            (
                "invalid input syntax for type integer: \"bob@private.example\"",
                "invalid input syntax for type integer: \"…\"",
            ),
            (
                "Referenced column \"nme\" not found! Candidate bindings: \"name\", \"email\"",
                "Referenced column \"…\" not found! Candidate bindings: \"name\", \"email\"",
            ),
            (
                "no such value: 'Ann' in \"customers\"",
                "no such value: 'Ann' in \"customers\"",
            ),
            ("cut 'ann@x.org", "cut '…'"),
            (
                "Table 'shop.x' doesn't exist (value 'a')",
                "Table '…' doesn't exist (value '…')",
            ),
        ];
        for (error, masked) in cases {
            assert_eq!(mask_quoted(error, &names(), &[sql]), masked, "{error}");
        }
        // A name the model wrote itself stays: it is from the SQL.
        assert_eq!(
            mask_quoted(
                "Referenced column \"nme\" not found",
                &names(),
                &["SELECT nme FROM customers"]
            ),
            "Referenced column \"nme\" not found"
        );
    }

    #[test]
    fn values_an_engine_repeats_without_quotes_are_not_sent() {
        let sql = "SELECT strptime(email, '%Y') FROM customers";
        let error = "Invalid Input Error: Could not parse string \"zz-mail-001@x.test\" according to format specifier \"%Y\"\nzz-mail-001@x.test\n^\nError: Literal does not match, expected a numeric";
        let masked = mask_statement_error(error, &names(), &[sql]);
        assert!(!masked.contains("zz-mail-001"), "{masked}");
        assert!(
            masked.starts_with("Invalid Input Error: Could not parse string \"…\""),
            "{masked}"
        );
        assert!(masked.contains("\n^"), "{masked}");
        // The statement's own line and its caret stay.
        let error = "Binder Error: x\n\nLINE 1: SELECT strptime(email, '%Y') FROM customers\n               ^";
        assert_eq!(mask_statement_error(error, &names(), &[sql]), error);
        // error(value): the message is the data.
        for sql in [
            "SELECT error(email) FROM customers",
            "SELECT ERROR (email) FROM customers",
        ] {
            assert_eq!(
                mask_statement_error("Invalid Input Error: zz-mail-002@x.test", &names(), &[sql]),
                "Invalid Input Error: (its message is made of the data the statement read; not sent)"
            );
        }
        // A column named like it is no call.
        assert!(!raises_its_own("SELECT error_code FROM t"));
    }

    #[test]
    fn a_programs_message_gives_only_where_it_failed() {
        assert_eq!(
            withhold_program_error(
                "runtime error: [string \"program\"]:3: boom ann@private.example",
                "it read a redacted column"
            ),
            "at line 3; its message is not sent (it read a redacted column)"
        );
        assert_eq!(
            withhold_program_error("program:12: boom", "x"),
            "at line 12; its message is not sent (x)"
        );
        assert_eq!(
            withhold_program_error("boom ann@private.example", "results are not sent"),
            "its message is not sent (results are not sent)"
        );
    }
}
