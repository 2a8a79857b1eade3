//! Parameters of `aiq.query(sql, params)`: each placeholder (`?`, `?NNN`,
//! `$N`, `$name`, `:name`) becomes a quoted SQL literal *before* the safety
//! gate, so the gate, the confirmation and the audit log all see the exact
//! statement that runs, and every engine gets the same behaviour. Values are
//! quoted for the source's dialect; placeholders are found with sqlparser's
//! tokenizer, so text inside strings, quoted names and comments is never
//! touched. Pure functions.

use sqlparser::dialect::{
    ClickHouseDialect, Dialect as SqlDialect, DuckDbDialect, MySqlDialect, PostgreSqlDialect,
    SQLiteDialect,
};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use crate::safety::Dialect;

/// One parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

/// The parameters a program passed.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// `{a, b}`: `?` takes them in order, `?2`/`$2` by number.
    Positional(Vec<Param>),
    /// `{name = value}`: `:name` and `$name` by name.
    Named(Vec<(String, Param)>),
}

/// `sql` with every placeholder replaced by its value as a literal.
pub fn bind(sql: &str, dialect: Dialect, params: &Params) -> Result<String, String> {
    let tokens = tokenize(sql, dialect)?;
    let lines = LineStarts::new(sql);
    let mut out = String::with_capacity(sql.len() + 16);
    let mut copied = 0;
    let mut next_positional = 0;
    let mut used = 0;
    let mut i = 0;
    while i < tokens.len() {
        let (slot, start, end, width) = match placeholder(&tokens, i) {
            Some(found) => found,
            None => {
                i += 1;
                continue;
            }
        };
        let slot = match slot {
            Slot::Next => {
                next_positional += 1;
                Slot::Number(next_positional)
            }
            other => other,
        };
        let value = lookup(&slot, params)?;
        let (from, to) = (lines.offset(sql, start), lines.offset(sql, end));
        out.push_str(&sql[copied..from]);
        out.push_str(&literal(value, dialect)?);
        copied = to;
        used += 1;
        i += width;
    }
    out.push_str(&sql[copied..]);
    if let Params::Positional(values) = params {
        if next_positional > 0 && next_positional != values.len() {
            return Err(format!(
                "the statement has {} but {} given",
                count(next_positional, "`?` placeholder"),
                count(values.len(), "parameter")
            ));
        }
        if used == 0 && !values.is_empty() {
            return Err(format!(
                "{} given but the statement has no placeholder (write ? where each value goes)",
                count(values.len(), "parameter")
            ));
        }
    }
    Ok(out)
}

/// `1 parameter`, `2 parameters`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Where a placeholder takes its value from.
#[derive(Debug, PartialEq)]
enum Slot {
    Next,
    Number(usize),
    Name(String),
}

/// The placeholder at `tokens[i]`, if any: its slot, its span and how many
/// tokens it takes (`:name` is two).
fn placeholder(tokens: &[TokenWithSpan], i: usize) -> Option<(Slot, Location, Location, usize)> {
    let t = &tokens[i];
    match &t.token {
        Token::Placeholder(p) => {
            let slot = if p == "?" {
                Slot::Next
            } else if let Some(n) = p
                .strip_prefix('?')
                .or_else(|| p.strip_prefix('$'))
                .and_then(|n| n.parse::<usize>().ok())
            {
                Slot::Number(n)
            } else if let Some(name) = p.strip_prefix('$').filter(|n| !n.is_empty()) {
                Slot::Name(name.to_string())
            } else {
                return None;
            };
            Some((slot, t.span.start, t.span.end, 1))
        }
        // `:name` right after the colon (`::` casts are a token of their own).
        Token::Colon => match tokens.get(i + 1) {
            Some(TokenWithSpan {
                token: Token::Word(w),
                span,
            }) if w.quote_style.is_none() && span.start == t.span.end => {
                Some((Slot::Name(w.value.clone()), t.span.start, span.end, 2))
            }
            _ => None,
        },
        _ => None,
    }
}

fn lookup<'p>(slot: &Slot, params: &'p Params) -> Result<&'p Param, String> {
    match (slot, params) {
        (Slot::Number(n), Params::Positional(values)) => {
            values.get(n.wrapping_sub(1)).ok_or_else(|| {
                format!(
                    "placeholder {n} has no value ({} given)",
                    count(values.len(), "parameter")
                )
            })
        }
        (Slot::Name(name), Params::Named(values)) => values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("no parameter named {name} (give it as {{{name} = …}})")),
        (Slot::Name(name), Params::Positional(_)) => Err(format!(
            "the statement names :{name} but the parameters are a list; pass a table with names ({{{name} = …}})"
        )),
        (_, Params::Named(_)) => Err(
            "the statement has ? placeholders but the parameters have names; pass a list ({a, b})"
                .into(),
        ),
        (Slot::Next, _) => Err("internal: unnumbered placeholder".into()),
    }
}

/// A value as a literal of `dialect`. Negative numbers are parenthesised so
/// `x-?` never turns into a comment.
fn literal(value: &Param, dialect: Dialect) -> Result<String, String> {
    Ok(match value {
        Param::Null => "NULL".into(),
        Param::Bool(true) => "TRUE".into(),
        Param::Bool(false) => "FALSE".into(),
        Param::Int(i) if *i < 0 => format!("({i})"),
        Param::Int(i) => i.to_string(),
        Param::Float(f) if !f.is_finite() => {
            return Err(format!("{f} cannot be passed to SQL as a number"))
        }
        Param::Float(f) if *f < 0.0 => format!("({f:?})"),
        Param::Float(f) => format!("{f:?}"),
        Param::Text(s) if s.contains('\0') => {
            return Err("a text parameter contains a NUL byte".into())
        }
        Param::Text(s) => {
            let mut quoted = String::with_capacity(s.len() + 2);
            quoted.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => quoted.push_str("''"),
                    // MySQL reads backslash escapes inside strings.
                    '\\' if matches!(dialect, Dialect::MySql | Dialect::ClickHouse) => {
                        quoted.push_str("\\\\")
                    }
                    c => quoted.push(c),
                }
            }
            quoted.push('\'');
            quoted
        }
    })
}

fn tokenize(sql: &str, dialect: Dialect) -> Result<Vec<TokenWithSpan>, String> {
    let d: &dyn SqlDialect = match dialect {
        Dialect::Sqlite => &SQLiteDialect {},
        Dialect::DuckDb => &DuckDbDialect {},
        Dialect::Postgres => &PostgreSqlDialect {},
        Dialect::MySql => &MySqlDialect {},
        Dialect::ClickHouse => &ClickHouseDialect {},
    };
    Tokenizer::new(d, sql)
        .tokenize_with_location()
        .map_err(|e| format!("cannot read the statement to bind its parameters: {e}"))
}

/// Byte offsets of line starts, to turn the tokenizer's (line, column in
/// characters) into byte offsets.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineStarts(starts)
    }

    fn offset(&self, text: &str, at: Location) -> usize {
        let line = (at.line.max(1) - 1) as usize;
        let Some(&start) = self.0.get(line) else {
            return text.len();
        };
        let column = (at.column.max(1) - 1) as usize;
        text[start..]
            .char_indices()
            .nth(column)
            .map(|(i, _)| start + i)
            .unwrap_or(text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(values: Vec<Param>) -> Params {
        Params::Positional(values)
    }

    #[test]
    fn positional_values_become_quoted_literals() {
        let sql = bind(
            "SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d IS ?",
            Dialect::Sqlite,
            &list(vec![
                Param::Int(5),
                Param::Text("O'Brien".into()),
                Param::Float(-1.5),
                Param::Null,
            ]),
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT * FROM t WHERE a = 5 AND b = 'O''Brien' AND c = (-1.5) AND d IS NULL"
        );
    }

    #[test]
    fn placeholders_in_strings_and_comments_stay() {
        let sql = bind(
            "SELECT '?', \"?\" -- ?\n, x FROM t WHERE y = ? /* ? */",
            Dialect::Sqlite,
            &list(vec![Param::Bool(true)]),
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT '?', \"?\" -- ?\n, x FROM t WHERE y = TRUE /* ? */"
        );
    }

    #[test]
    fn numbered_and_named() {
        let p = list(vec![Param::Int(1), Param::Text("é".into())]);
        assert_eq!(
            bind("SELECT $2, $1, $2", Dialect::Postgres, &p).unwrap(),
            "SELECT 'é', 1, 'é'"
        );
        assert_eq!(
            bind("SELECT ?2 || ?1", Dialect::Sqlite, &p).unwrap(),
            "SELECT 'é' || 1"
        );
        let named = Params::Named(vec![("country".into(), Param::Text("DE".into()))]);
        assert_eq!(
            bind(
                "SELECT x::text FROM t WHERE c = :country AND d = $country",
                Dialect::DuckDb,
                &named
            )
            .unwrap(),
            "SELECT x::text FROM t WHERE c = 'DE' AND d = 'DE'"
        );
    }

    #[test]
    fn mysql_backslashes_cannot_end_the_string() {
        let p = list(vec![Param::Text("a\\' OR 1=1 --".into())]);
        assert_eq!(
            bind("SELECT ?", Dialect::MySql, &p).unwrap(),
            "SELECT 'a\\\\'' OR 1=1 --'"
        );
        assert_eq!(
            bind("SELECT ?", Dialect::Sqlite, &p).unwrap(),
            "SELECT 'a\\'' OR 1=1 --'"
        );
    }

    #[test]
    fn mismatches_say_what_is_wrong() {
        let e = bind("SELECT ?, ?", Dialect::Sqlite, &list(vec![Param::Int(1)])).unwrap_err();
        assert_eq!(e, "placeholder 2 has no value (1 parameter given)");
        let e = bind(
            "SELECT ?",
            Dialect::Sqlite,
            &list(vec![Param::Int(1), Param::Int(2)]),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "the statement has 1 `?` placeholder but 2 parameters given"
        );
        let e = bind("SELECT 1", Dialect::Sqlite, &list(vec![Param::Int(1)])).unwrap_err();
        assert!(e.contains("no placeholder"), "{e}");
        let e = bind(
            "SELECT :a",
            Dialect::Sqlite,
            &Params::Named(vec![("b".into(), Param::Int(1))]),
        )
        .unwrap_err();
        assert!(e.contains("no parameter named a"), "{e}");
        let e = bind(
            "SELECT ?",
            Dialect::Sqlite,
            &list(vec![Param::Float(f64::NAN)]),
        )
        .unwrap_err();
        assert!(e.contains("cannot be passed"), "{e}");
        assert!(bind(
            "SELECT ?",
            Dialect::Sqlite,
            &list(vec![Param::Text("a\0".into())])
        )
        .is_err());
    }

    #[test]
    fn multi_line_statements_keep_their_text() {
        let sql = "SELECT\n  'ü' AS u,\n  ? AS v\nFROM t";
        assert_eq!(
            bind(sql, Dialect::Sqlite, &list(vec![Param::Int(-3)])).unwrap(),
            "SELECT\n  'ü' AS u,\n  (-3) AS v\nFROM t"
        );
    }
}
