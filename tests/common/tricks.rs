//! The trick families of the attacker's corpus (tests/common/attack.rs):
//! each wraps or rewrites a payload so that readers that differ on
//! comments, line ends, whitespace, quotes, escapes, nesting or case see
//! different statements. Quoted text (paths, names given as strings) is
//! never rewritten.

#![allow(dead_code)]

use super::attack::Rng;

/// A trick: payload in, hostile text out.
pub type Trick = fn(&str, &mut Rng) -> String;

/// Every family, by name.
pub const FAMILIES: &[(&str, Trick)] = &[
    // Statement stacking.
    ("plain", |p, _| p.to_string()),
    ("semicolon", |p, _| format!("{p};")),
    ("stack-after", |p, _| format!("SELECT 1; {p}")),
    ("stack-double", |p, _| format!("SELECT 1;;{p}")),
    ("stack-before", |p, _| format!("{p}; SELECT 1")),
    ("stack-newline", |p, _| format!("SELECT 1;\n{p}")),
    // Comments and the line ends that close them.
    ("dash-cr", |p, _| format!("SELECT 1 --\r; {p}")),
    ("dash-crlf", |p, _| format!("SELECT 1 --\r\n; {p}")),
    ("dash-lf", |p, _| format!("SELECT 1 --\n; {p}")),
    ("dash-cr-after-semi", |p, _| format!("SELECT 1; --\r{p}")),
    ("dash-cr-around", |p, _| {
        format!("SELECT 1 --\r; {p}; SELECT 2")
    }),
    ("dash-cr-trailing", |p, _| format!("{p} --\r; SELECT 1")),
    ("block", |p, _| format!("SELECT 1 /* ; */ ; {p}")),
    ("block-leading", |p, _| format!("/* just a comment */ {p}")),
    ("block-nested-open", |p, _| {
        format!("SELECT 1 /* /* */ ; {p} ; /* */ */")
    }),
    ("block-nested-close", |p, _| {
        format!("SELECT 1 /* /* */ */ ; {p}")
    }),
    ("block-unclosed", |p, _| format!("SELECT 1; {p} /*")),
    ("gap-block", |p, _| gaps(p, "/**/")),
    ("gap-block-text", |p, _| gaps(p, " /* ; */ ")),
    ("gap-dash", |p, _| gaps(p, " --x\n")),
    ("gap-dash-cr", |p, _| gaps(p, " --x\r")),
    ("hash-lf", |p, _| format!("SELECT 1 #\n; {p}")),
    ("hash-cr", |p, _| format!("SELECT 1 # \r; {p}")),
    ("mysql-exec-comment", |p, _| {
        format!("SELECT 1 /*! ; {p} */")
    }),
    ("mysql-versioned", |p, _| {
        format!("SELECT 1 /*!50000 ; {p} */")
    }),
    // Whitespace and line breaks.
    ("tabs", |p, _| gaps(p, "\t")),
    ("form-feed", |p, _| gaps(p, "\x0c")),
    ("vertical-tab", |p, _| gaps(p, "\x0b")),
    ("nbsp", |p, _| gaps(p, "\u{a0}")),
    ("em-space", |p, _| gaps(p, "\u{2003}")),
    ("ideographic-space", |p, _| gaps(p, "\u{3000}")),
    ("cr-only", |p, _| gaps(p, "\r")),
    ("mixed-space", |p, rng| mixed_gaps(p, rng)),
    ("stack-cr", |p, _| format!("SELECT 1;\r{p}")),
    // Quoting and escapes.
    ("doubled-quote", |p, _| format!("SELECT 'a'';{p};--'")),
    ("backslash-quote", |p, _| format!("SELECT 'a\\'; {p}; -- '")),
    ("escape-string", |p, _| format!("SELECT E'\\'' ; {p}; --'")),
    ("escape-string-lower", |p, _| {
        format!("select e'\\'';{p};--'")
    }),
    ("double-quoted", |p, _| format!("SELECT 1 AS \"a;b\"; {p}")),
    ("double-quote-trick", |p, _| {
        format!("SELECT \"a\"\";{p};--\"")
    }),
    ("backtick", |p, _| format!("SELECT 1 AS `a;b`; {p}")),
    ("backtick-trick", |p, _| format!("SELECT `a\\`;{p};--`")),
    ("brackets", |p, _| format!("SELECT 1 AS [a;b]; {p}")),
    ("dollar", |p, _| format!("SELECT $$;$$; {p}")),
    ("dollar-tag", |p, _| format!("SELECT $t$ $$ ; $t$; {p}")),
    ("dollar-quote-trick", |p, _| {
        format!("SELECT $$ ' $$; {p}; -- '")
    }),
    ("dollar-hide", |p, _| format!("SELECT $a$; {p}; $a$")),
    // Nesting.
    ("cte", |p, _| format!("WITH x AS ({p}) SELECT * FROM x")),
    ("subquery", |p, _| format!("SELECT * FROM ({p}) AS s")),
    ("union", |p, _| format!("SELECT 1 UNION ALL {p}")),
    ("parentheses", |p, _| format!("(({p}))")),
    ("with-prefix", |p, _| format!("WITH a AS (SELECT 1) {p}")),
    ("explain", |p, _| format!("EXPLAIN {p}")),
    ("explain-analyze", |p, _| format!("EXPLAIN ANALYZE {p}")),
    ("scalar-then", |p, _| format!("SELECT (SELECT 1); {p}")),
    ("in-subquery-then", |p, _| {
        format!("SELECT * FROM customers WHERE id IN (SELECT 1); {p}")
    }),
    // Case.
    ("random-case", |p, rng| outside_quotes(p, |c| flip(c, rng))),
    ("lower-case", |p, _| {
        outside_quotes(p, |c| c.to_ascii_lowercase().to_string())
    }),
    ("random-case-stacked", |p, rng| {
        let s = format!("select 1;\t{p}");
        outside_quotes(&s, |c| flip(c, rng))
    }),
    // Combinations, drawn from the seed.
    ("combo", |p, rng| combo(p, rng)),
    ("combo-2", |p, rng| combo(p, rng)),
];

/// Replaces the spaces outside quotes with `gap`.
fn gaps(sql: &str, gap: &str) -> String {
    outside_quotes(sql, |c| {
        if c == ' ' {
            gap.to_string()
        } else {
            c.to_string()
        }
    })
}

fn mixed_gaps(sql: &str, rng: &mut Rng) -> String {
    const GAPS: [&str; 8] = [
        "\t", "\x0c", "\x0b", "\r", "\r\n", "\u{a0}", "/**/", " --\r",
    ];
    outside_quotes(sql, |c| {
        if c == ' ' {
            rng.pick(&GAPS).to_string()
        } else {
            c.to_string()
        }
    })
}

fn flip(c: char, rng: &mut Rng) -> String {
    if rng.next() & 1 == 0 {
        c.to_ascii_uppercase().to_string()
    } else {
        c.to_ascii_lowercase().to_string()
    }
}

/// A stacking trick, then a whitespace trick, then random case.
fn combo(p: &str, rng: &mut Rng) -> String {
    const PREFIXES: [&str; 6] = [
        "SELECT 1 --\r;",
        "SELECT 1;",
        "SELECT E'\\'';",
        "SELECT 1 /* /* */ */;",
        "SELECT 'a\\';",
        "SELECT $$;$$;",
    ];
    let prefix = rng.pick(&PREFIXES);
    let body = mixed_gaps(p, rng);
    let s = format!("{prefix}{body}; --'");
    outside_quotes(&s, |c| flip(c, rng))
}

/// `sql` with every character outside '…', "…" and `…` mapped by `f`.
pub fn outside_quotes(sql: &str, mut f: impl FnMut(char) -> String) -> String {
    let mut out = String::with_capacity(sql.len() * 2);
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if matches!(c, '\'' | '"' | '`') => {
                out.push(c);
                quote = Some(c);
            }
            None => out.push_str(&f(c)),
        }
    }
    out
}

#[cfg(test)]
mod tests {}
