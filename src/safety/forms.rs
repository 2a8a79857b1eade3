//! Statements sqlparser does not read, or reads lossily, checked by parsing
//! what they wrap — never let through unread:
//!
//! - DuckDB `SHOW`/`DESCRIBE`/`SUMMARIZE` of a table or a query (sqlparser
//!   reads `SHOW <query>` as a list of words and drops its strings, so
//!   `SHOW SELECT * FROM read_csv('/etc/passwd')` would look harmless);
//! - DuckDB `PIVOT …`/`UNPIVOT …` statements, split into their source and
//!   expression lists, each checked;
//! - DuckDB `USING SAMPLE …`/`TABLESAMPLE …` clauses, which hold only
//!   numbers and sampling words: removed, and the rest checked;
//! - `TABLE t` (PostgreSQL, MySQL, DuckDB), checked as `SELECT * FROM t`;
//! - the servers' own forms sqlparser does not read, rewritten into ones it
//!   reads with the same names and calls (`server_forms.rs`).

use sqlparser::dialect::{
    ClickHouseDialect, DuckDbDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect,
};
use sqlparser::tokenizer::{Token, Tokenizer};

use super::classify::{relation_class, Class};
use super::{verdict, Dialect, Refusal};

type Verdict = Result<(Class, String), Refusal>;

/// The verdict on `text` when it is one of the forms above; `None` when it
/// is not (the normal parser reads it).
pub(super) fn special(text: &str, dialect: Dialect) -> Option<Verdict> {
    let tokens = tokenize(text, dialect)?;
    if dialect == Dialect::DuckDb {
        if let Some(stripped) = strip_samples(&tokens) {
            return Some(verdict(&stripped, dialect));
        }
    }
    if let Some(rewritten) = super::server_forms::rewrite(&tokens, dialect) {
        return Some(verdict(&rewritten, dialect));
    }
    let sig: Vec<usize> = significant(&tokens);
    let first = word_at(&tokens, &sig, 0)?;
    match (dialect, first.as_str()) {
        (Dialect::DuckDb, "show" | "describe" | "desc" | "summarize") => {
            describe(&tokens, &sig, &first, dialect)
        }
        (Dialect::DuckDb, "pivot" | "unpivot") => Some(pivot(&tokens, &sig, &first, dialect)),
        (Dialect::Postgres | Dialect::MySql | Dialect::DuckDb, "table") => {
            let rest = text_from(&tokens, sig.get(1).copied()?);
            let (class, _) = match verdict(&format!("SELECT * FROM {rest}"), dialect) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            Some(Ok((class, "TABLE".into())))
        }
        _ => None,
    }
}

/// `text` as tokens of `dialect`; `None` when it does not tokenize.
pub(super) fn tokenize(text: &str, dialect: Dialect) -> Option<Vec<Token>> {
    match dialect {
        Dialect::Sqlite => Tokenizer::new(&SQLiteDialect {}, text).tokenize(),
        Dialect::DuckDb => Tokenizer::new(&DuckDbDialect {}, text).tokenize(),
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, text).tokenize(),
        Dialect::MySql => Tokenizer::new(&MySqlDialect {}, text).tokenize(),
        Dialect::ClickHouse => Tokenizer::new(&ClickHouseDialect {}, text).tokenize(),
    }
    .ok()
}

/// Indexes of the tokens that are not whitespace or comments.
fn significant(tokens: &[Token]) -> Vec<usize> {
    (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
        .collect()
}

/// The unquoted word at significant position `n`, lowercased.
fn word_at(tokens: &[Token], sig: &[usize], n: usize) -> Option<String> {
    match sig.get(n).map(|&i| &tokens[i]) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    }
}

pub(super) fn text_of(tokens: &[Token]) -> String {
    tokens.iter().map(|t| t.to_string()).collect()
}

fn text_from(tokens: &[Token], start: usize) -> String {
    text_of(&tokens[start..])
}

/// `SHOW|DESCRIBE|SUMMARIZE <table or query>`.
fn describe(tokens: &[Token], sig: &[usize], keyword: &str, dialect: Dialect) -> Option<Verdict> {
    let kind = keyword.to_ascii_uppercase();
    let Some(&start) = sig.get(1) else {
        // `DESCRIBE` alone lists the tables; `SUMMARIZE` alone is an error.
        return (keyword != "summarize").then_some(Ok((Class::Read, kind)));
    };
    let next = word_at(tokens, sig, 1);
    // DuckDB's own listings, which sqlparser reads whole.
    if keyword == "show"
        && matches!(
            next.as_deref(),
            Some("tables" | "all" | "databases" | "schemas" | "functions")
        )
    {
        return None;
    }
    let rest = &tokens[start..];
    let starts_query = matches!(rest.first(), Some(Token::LParen))
        || matches!(
            next.as_deref(),
            Some(
                "select"
                    | "with"
                    | "from"
                    | "values"
                    | "table"
                    | "pivot"
                    | "unpivot"
                    | "summarize"
                    | "describe"
                    | "show"
            )
        );
    if starts_query {
        return Some(match verdict(&text_of(rest), dialect) {
            Ok((Class::Read, _)) => Ok((Class::Read, kind)),
            other => other,
        });
    }
    Some(table_reference(rest, &kind, dialect))
}

/// `name`, `schema.name`, `"quoted name"` or `'file.csv'` — a table, or a
/// file read when the name is one.
fn table_reference(rest: &[Token], kind: &str, dialect: Dialect) -> Verdict {
    let parts: Vec<&Token> = rest
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let unreadable = || Refusal::Unparsable {
        dialect,
        message: format!("expected a table name or a query after {kind}"),
    };
    let mut last = None;
    for (i, t) in parts.iter().enumerate() {
        match (i % 2, t) {
            (0, Token::Word(w)) => last = Some((w.value.clone(), w.quote_style)),
            (0, Token::SingleQuotedString(s)) if parts.len() == 1 => {
                last = Some((s.clone(), Some('\'')))
            }
            (1, Token::Period) => {}
            _ => return Err(unreadable()),
        }
    }
    match last {
        Some((name, quote)) if parts.len() % 2 == 1 => {
            Ok((relation_class(&name, quote), kind.into()))
        }
        _ => Err(unreadable()),
    }
}

/// DuckDB's `PIVOT src ON … USING … GROUP BY … ORDER BY … LIMIT …` and
/// `UNPIVOT src ON … INTO NAME n VALUE v …`: each part is checked as what
/// it is (a FROM item, select items, expressions).
fn pivot(tokens: &[Token], sig: &[usize], keyword: &str, dialect: Dialect) -> Verdict {
    let kind = keyword.to_ascii_uppercase();
    let parts = split_clauses(tokens, sig);
    let mut worst = Class::Read;
    for (clause, body) in &parts {
        let text = text_of(body);
        let probe = match clause.as_str() {
            "" => format!("SELECT * FROM {text}"),
            "on" | "using" | "group by" => format!("SELECT {text}"),
            "order by" => format!("SELECT 1 ORDER BY {text}"),
            "limit" => format!("SELECT 1 LIMIT {text}"),
            "into" => {
                if body.iter().all(|t| {
                    matches!(
                        t,
                        Token::Word(_)
                            | Token::Comma
                            | Token::LParen
                            | Token::RParen
                            | Token::Whitespace(_)
                    )
                }) {
                    continue;
                }
                return Err(Refusal::Unparsable {
                    dialect,
                    message: format!("expected names after INTO in {kind}"),
                });
            }
            _ => unreachable_clause(dialect, &kind)?,
        };
        match verdict(&probe, dialect)? {
            (Class::Read, _) => {}
            (Class::Write(k), _) if worst == Class::Read => worst = Class::Write(k),
            (Class::Write(_), _) => {}
            (forbidden, _) => return Ok((forbidden, kind)),
        }
    }
    if parts
        .first()
        .map(|(c, b)| !c.is_empty() || b.is_empty())
        .unwrap_or(true)
    {
        return Err(Refusal::Unparsable {
            dialect,
            message: format!("expected a table or a query after {kind}"),
        });
    }
    Ok((worst, kind))
}

fn unreachable_clause(dialect: Dialect, kind: &str) -> Result<String, Refusal> {
    Err(Refusal::Unparsable {
        dialect,
        message: format!("unexpected clause in {kind}"),
    })
}

/// Splits the tokens after the first keyword at the top-level clause
/// keywords; the first part (`""`) is the source.
fn split_clauses(tokens: &[Token], sig: &[usize]) -> Vec<(String, Vec<Token>)> {
    let mut parts: Vec<(String, Vec<Token>)> = vec![(String::new(), Vec::new())];
    let mut depth = 0i32;
    let start = sig.get(1).copied().unwrap_or(tokens.len());
    let mut i = start;
    while i < tokens.len() {
        let t = &tokens[i];
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        let word = match t {
            Token::Word(w) if w.quote_style.is_none() && depth == 0 => {
                Some(w.value.to_ascii_lowercase())
            }
            _ => None,
        };
        let next_word = || {
            tokens[i + 1..]
                .iter()
                .find(|t| !matches!(t, Token::Whitespace(_)))
                .and_then(|t| match t {
                    Token::Word(w) => Some(w.value.to_ascii_lowercase()),
                    _ => None,
                })
        };
        match word.as_deref() {
            Some(w @ ("on" | "using" | "into" | "limit")) => {
                parts.push((w.to_string(), Vec::new()));
            }
            Some(w @ ("group" | "order")) if next_word().as_deref() == Some("by") => {
                parts.push((format!("{w} by"), Vec::new()));
                // Skip to the `BY`.
                while i + 1 < tokens.len()
                    && !matches!(&tokens[i + 1], Token::Word(b) if b.value.eq_ignore_ascii_case("by"))
                {
                    i += 1;
                }
                i += 1;
            }
            _ => {
                if let Some(last) = parts.last_mut() {
                    last.1.push(t.clone());
                }
            }
        }
        i += 1;
    }
    parts
}

/// Words a sampling clause may hold besides numbers, `%`, commas and
/// parentheses.
const SAMPLE_WORDS: &[&str] = &[
    "rows",
    "percent",
    "reservoir",
    "bernoulli",
    "system",
    "repeatable",
];

/// Whether `t` is the unquoted word `w` (any case).
pub(super) fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The index of the first token from `from` on that is not whitespace.
pub(super) fn next_significant(tokens: &[Token], from: usize) -> Option<usize> {
    (from..tokens.len()).find(|&k| !matches!(tokens[k], Token::Whitespace(_)))
}

/// The text without its `USING SAMPLE …`/`TABLESAMPLE …` clauses, if it has
/// any; `None` when it has none.
fn strip_samples(tokens: &[Token]) -> Option<String> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut stripped = false;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let clause_start = if is_word(t, "tablesample") {
            Some(i + 1)
        } else if is_word(t, "using") {
            next_significant(tokens, i + 1)
                .filter(|&k| is_word(&tokens[k], "sample"))
                .map(|k| k + 1)
        } else {
            None
        };
        let Some(mut k) = clause_start else {
            out.push(t.clone());
            i += 1;
            continue;
        };
        let mut depth = 0i32;
        while k < tokens.len() {
            let ok = match &tokens[k] {
                Token::Whitespace(_) | Token::Number(..) | Token::Mod | Token::Comma => true,
                Token::LParen => {
                    depth += 1;
                    true
                }
                Token::RParen if depth > 0 => {
                    depth -= 1;
                    true
                }
                Token::Word(w) => {
                    w.quote_style.is_none()
                        && SAMPLE_WORDS.contains(&w.value.to_ascii_lowercase().as_str())
                }
                _ => false,
            };
            if !ok {
                break;
            }
            k += 1;
        }
        if depth != 0 {
            // An unbalanced clause: leave it for the parser to refuse.
            out.push(t.clone());
            i += 1;
            continue;
        }
        out.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
        stripped = true;
        i = k;
    }
    stripped.then(|| text_of(&out))
}

/// Why a statement that defines code, roles or privileges is refused.
const DEFINES: &str = "it defines code, roles, privileges or connections on the server, which could run as the server or read past the source's limits; --allow-write allows changing data, not that";

/// Objects whose `CREATE`, `ALTER` or `DROP` is never allowed, even with
/// `--allow-write --yes` (SPEC §4.2): code that runs later (functions,
/// procedures, macros, triggers, rules, events, extensions, languages,
/// casts, operators, aggregates, dictionaries that read other sources),
/// who may do what (roles, users, policies, privileges, quotas), and
/// other servers (servers, user mappings, foreign tables, subscriptions,
/// secrets).
const DEFINING_OBJECTS: &[&str] = &[
    "function",
    "procedure",
    "macro",
    "trigger",
    "rule",
    "event",
    "extension",
    "language",
    "cast",
    "operator",
    "aggregate",
    "transform",
    "conversion",
    "dictionary",
    "role",
    "user",
    "policy",
    "quota",
    "profile",
    "server",
    "mapping",
    "foreign",
    "publication",
    "subscription",
    "secret",
    "plugin",
    "component",
    "access",
    "privileges",
];

/// Words that may stand between `CREATE`/`ALTER`/`DROP` and the object.
const MODIFIERS: &[&str] = &[
    "or",
    "replace",
    "alter",
    "temp",
    "temporary",
    "trusted",
    "procedural",
    "constraint",
    "row",
    "settings",
    "if",
    "not",
    "exists",
    "persistent",
    "sql",
    "security",
    "definer",
    "invoker",
    "default",
];

/// A statement that defines code, roles, privileges or connections
/// (`CREATE FUNCTION`, `GRANT`, `CREATE USER MAPPING`, `DO $$…$$`, …),
/// wherever it stands in the text (PostgreSQL's `CREATE SCHEMA` holds
/// statements of its own): never allowed, in any mode. Read from tokens,
/// so it holds whether or not sqlparser can read the statement.
pub(super) fn defines_code_or_access(text: &str, dialect: Dialect) -> Option<Refusal> {
    let tokens = tokenize(text, dialect)?;
    let sig = significant(&tokens);
    let word = |n: usize| word_at(&tokens, &sig, n);
    let refuse = |kind: String| Refusal::Forbidden { kind, why: DEFINES };
    for n in 0..sig.len() {
        let Some(first) = word(n) else { continue };
        match first.as_str() {
            // GRANT also inside PostgreSQL's `CREATE SCHEMA … GRANT …`.
            "grant" => return Some(refuse("GRANT".into())),
            "revoke" | "deny" | "reassign" if n == 0 => return Some(refuse(first.to_uppercase())),
            "do" if n == 0 => return Some(refuse("DO".into())),
            "security" if word(n + 1).as_deref() == Some("label") => {
                return Some(refuse("SECURITY LABEL".into()))
            }
            "import" if word(n + 1).as_deref() == Some("foreign") => {
                return Some(refuse("IMPORT FOREIGN SCHEMA".into()))
            }
            "create" | "alter" | "drop" | "install" | "uninstall" => {
                let mut k = n + 1;
                // `DEFINER = user` (MySQL) stands between too.
                loop {
                    match word(k) {
                        Some(w) if MODIFIERS.contains(&w.as_str()) => k += 1,
                        _ if matches!(sig.get(k).map(|&i| &tokens[i]), Some(Token::Eq)) => k += 2,
                        _ => break,
                    }
                }
                let object = word(k).unwrap_or_default();
                // `ALTER SYSTEM`: the server's own configuration.
                let system = first == "alter" && object == "system";
                if system || DEFINING_OBJECTS.contains(&object.as_str()) {
                    let shown = sig[n..=k]
                        .iter()
                        .filter_map(|&i| match &tokens[i] {
                            Token::Word(w) => Some(w.value.to_ascii_uppercase()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    return Some(refuse(shown));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::{check, Access, Policy};
    use super::*;

    fn duck(sql: &str) -> Result<Access, Refusal> {
        check(sql, Dialect::DuckDb, &Policy::default()).map(|c| c.access())
    }

    #[test]
    fn wrapped_queries_are_checked_whatever_wraps_them() {
        for sql in [
            "SHOW SELECT * FROM read_csv('/etc/passwd')",
            "DESCRIBE SELECT * FROM read_csv('/etc/passwd')",
            "SUMMARIZE SELECT * FROM read_csv('/etc/passwd')",
            "SUMMARIZE (FROM glob('/etc/*'))",
            "SHOW '/etc/passwd'",
            "DESCRIBE 'data.csv'",
            "SUMMARIZE '/etc/passwd'",
            "PIVOT read_csv('/etc/passwd') ON a USING count(*)",
            "PIVOT t ON a USING sum(getenv('HOME'))",
            "UNPIVOT (SELECT * FROM read_parquet('x.parquet')) ON a INTO NAME k VALUE v",
            "SELECT * FROM read_csv('/etc/passwd') USING SAMPLE 10",
            "TABLE '/etc/passwd'",
        ] {
            let r = duck(sql);
            assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
        }
        let r = duck("SUMMARIZE DELETE FROM t");
        assert!(r.is_err(), "{r:?}");
    }

    #[test]
    fn duckdb_read_forms_pass() {
        for sql in [
            "SUMMARIZE t",
            "SUMMARIZE SELECT a FROM t",
            "DESCRIBE t",
            "DESCRIBE main.t",
            "SHOW t",
            "SHOW SELECT 1 AS x",
            "SHOW TABLES",
            "PIVOT t ON b USING sum(a)",
            "PIVOT (SELECT a, b FROM t) ON b IN ('x', 'y') USING sum(a) AS total GROUP BY a ORDER BY a LIMIT 5",
            "UNPIVOT t ON a, b INTO NAME k VALUE v",
            "SELECT * FROM t USING SAMPLE 10",
            "SELECT * FROM t USING SAMPLE 10% (bernoulli, 42)",
            "SELECT * FROM t USING SAMPLE reservoir(50 ROWS) REPEATABLE (100)",
            "SELECT * FROM t TABLESAMPLE 10%",
            "SELECT a FROM t JOIN u USING (a)",
            "FROM t SELECT a",
            "FROM t",
            "TABLE t",
        ] {
            assert_eq!(duck(sql), Ok(Access::Read), "{sql}");
        }
    }

    #[test]
    fn table_is_a_select_elsewhere_too() {
        let pg = check("TABLE t", Dialect::Postgres, &Policy::default());
        assert_eq!(
            pg.map(|c| (c.access(), c.kind().to_string())),
            Ok((Access::Read, "TABLE".into()))
        );
        let r = check(
            "TABLE t; DROP TABLE t",
            Dialect::Postgres,
            &Policy::default(),
        );
        assert!(r.is_err(), "{r:?}");
    }

    #[test]
    fn a_sample_clause_hides_nothing() {
        // Anything but numbers and sampling words ends the clause; what
        // follows is checked.
        let r = duck("SELECT * FROM t USING SAMPLE 10 UNION SELECT * FROM read_csv('/etc/passwd')");
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{r:?}");
        let r = duck("SELECT * FROM t USING SAMPLE (getenv('X'))");
        assert!(r.is_err(), "{r:?}");
    }
}
