//! Error messages as a model may see them (SPEC §4.3): an engine quotes
//! the value it choked on ("Could not convert string 'ann@…' to INT32"),
//! and a program's error may carry whatever it read. When what failed read
//! a redacted column (or results are not sent at all), quoted values are
//! masked and a program's message is withheld; names stay, so the model can
//! still fix its SQL.

/// An engine's error about a statement that read values that may not
/// leave, as a model may see it: the error's kind (`Conversion Error`)
/// and where (the lines that echo the statement, `LINE 1: SELECT …`, and
/// the caret under them), never its message. A statement that reads such
/// a column has bound: its error comes from running it, and an engine
/// puts what it choked on anywhere in the message — quoted (a quote in
/// the value ends the quoting early), unquoted (DuckDB's regular
/// expressions, `strptime`), one character at a time (`unhex`), or as the
/// whole message (`error(email)`). A statement that does not bind reads
/// nothing, and its error goes whole.
pub fn mask_statement_error(text: &str, codes: &[&str]) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut out = vec![kind_only(first)];
    for line in lines {
        let t = line.trim();
        let caret = !t.is_empty()
            && t.chars()
                .all(|c| matches!(c, '^' | '~') || c.is_whitespace());
        let echo = t
            .strip_prefix("LINE ")
            .and_then(|r| r.split_once(':'))
            .is_some_and(|(n, rest)| {
                n.chars().all(|c| c.is_ascii_digit())
                    && !rest.trim().is_empty()
                    && codes.iter().any(|c| c.contains(rest.trim()))
            });
        if caret || echo {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// `Invalid Input Error: …` as its kind alone: the line up to its first
/// part that names an error (`query failed: Conversion Error`).
fn kind_only(line: &str) -> String {
    const NOT_SENT: &str = "(its message may hold values the statement read; not sent)";
    let parts: Vec<&str> = line.split(": ").collect();
    let kind = parts[..parts.len().saturating_sub(1)]
        .iter()
        .position(|p| p.to_ascii_lowercase().contains("error"))
        .map(|i| parts[..=i].join(": "))
        .filter(|k| !k.contains(['\'', '"']));
    match kind {
        Some(k) => format!("{k}: {NOT_SENT}"),
        None => NOT_SENT.into(),
    }
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

    /// Whatever form an engine gives the value in, only the error's kind
    /// and where go; the statement's own line and caret stay.
    #[test]
    fn an_error_of_a_statement_that_read_values_keeps_its_kind_and_place() {
        let sql = "SELECT CAST(email AS INTEGER) FROM customers WHERE name = 'Ann'";
        for error in [
            "Conversion Error: Could not convert string 'lucia.miller1@example.com' to INT32",
            "Conversion Error: Could not convert string ''zqx-secret-1@dom1.test' to INT32",
            "Invalid Input Error: missing ): zqx-secret-1@dom1.test(",
            "Invalid Input Error: Invalid input for hex digit: q",
            "Invalid Input Error: zz-mail-002@x.test",
        ] {
            let masked = mask_statement_error(error, &[sql]);
            assert_eq!(
                masked,
                format!(
                    "{}: (its message may hold values the statement read; not sent)",
                    error.split_once(": ").unwrap().0
                ),
                "{error}"
            );
        }
        assert_eq!(
            mask_statement_error("invalid input syntax for type integer: \"bob@x\"", &[sql]),
            "(its message may hold values the statement read; not sent)"
        );
        assert_eq!(
            mask_statement_error("query failed: Conversion Error: Could not convert 'x'", &[sql]),
            "query failed: Conversion Error: (its message may hold values the statement read; not sent)"
        );
        let sql = "SELECT strptime(email, '%Y') FROM customers";
        let error = "Invalid Input Error: Could not parse string \"zz-mail-001@x.test\"\nzz-mail-001@x.test\n^\n\nLINE 1: SELECT strptime(email, '%Y') FROM customers\n               ^";
        let masked = mask_statement_error(error, &[sql]);
        assert!(!masked.contains("zz-mail-001"), "{masked}");
        assert!(
            masked
                .contains("LINE 1: SELECT strptime(email, '%Y') FROM customers\n               ^"),
            "{masked}"
        );
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
