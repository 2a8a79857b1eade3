//! The parser gate (SPEC §4.2, layer 1). Every statement — from the model or
//! from the user — is parsed with sqlparser in the source's dialect and
//! classified before it may run. Only [`check`] can build a [`CheckedSql`],
//! and [`crate::source::DataSource::execute`] accepts nothing else, so the
//! type system proves no statement reaches an engine unchecked.
//!
//! This module never touches a database; the engines add their own read-only
//! layer underneath (layer 2), so a gap here is not a hole.

mod classify;
mod engine;
mod forms;
mod functions;
mod hidden;
mod redaction;
mod server_forms;
#[cfg(test)]
mod tests;

use std::fmt;

use sqlparser::ast::Statement;
use sqlparser::dialect::{
    ClickHouseDialect, DuckDbDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect,
};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use classify::{classify, classify_pragma, statement_kind, Class};
pub use classify::{pragma_changes_data, pragma_only_reads};
pub use engine::{duckdb_allows, EngineReading, TABLE_NAMING_FUNCTIONS};
pub use functions::sqlite_allows;
pub use hidden::{is_catalog, Hidden};
pub use redaction::{
    add_read, column_listed, glob, table_matches, ColumnRead, Read, ReadFlag, Redaction,
};

/// The names of an allow-list file (`duckdb_functions.txt`…): one a line,
/// `#` lines are comments.
fn allow_list(text: &'static str) -> std::collections::HashSet<&'static str> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The SQL dialect a source speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    DuckDb,
    Postgres,
    MySql,
    ClickHouse,
}

impl Dialect {
    /// The engine's name as people know it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "SQLite",
            Dialect::DuckDb => "DuckDB",
            Dialect::Postgres => "PostgreSQL",
            Dialect::MySql => "MySQL",
            Dialect::ClickHouse => "ClickHouse",
        }
    }
}

/// What the gate lets through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// `--allow-write`: statements that change data may pass (they still need
    /// confirmation from the front end).
    pub allow_write: bool,
    /// Tables taken out of the source (SPEC §4.3): statements naming one
    /// are refused.
    pub hidden: Option<std::sync::Arc<Hidden>>,
    /// The functions defined in the database (PostgreSQL), as its catalog
    /// describes them; any other function must be a built-in on the
    /// engine's allow-list.
    pub functions: Option<std::sync::Arc<UserFunctions>>,
    /// Functions the user vouches for (`allow_functions`, lowercase): run
    /// though not on the engine's allow-list, and while tables are hidden
    /// though the database defines them. The never-allowed ones stay
    /// refused.
    pub vouched: Vec<String>,
    /// The columns whose values stay on the machine (SPEC §4.3): the
    /// runner asks the engine what each statement it admits reads.
    pub redaction: Option<std::sync::Arc<Redaction>>,
    /// Set when a statement admitted under this policy (or a clone of it)
    /// read one of those columns, or the engine could not say.
    pub read_redacted: ReadFlag,
}

impl Policy {
    /// Read-only, or writes allowed, with nothing hidden.
    pub fn new(allow_write: bool) -> Policy {
        Policy {
            allow_write,
            ..Policy::default()
        }
    }
}

/// Functions a database defines itself (not the engine's built-ins nor an
/// extension's), by lowercase name, as its catalog says (SPEC §4.2,
/// "Behind a name"): one the engine marks volatile may change data, so it
/// is a write; while tables are hidden none runs, for what its body reads
/// is not checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFunctions {
    /// Name → whether the engine marks it volatile (any overload).
    pub functions: std::collections::HashMap<String, bool>,
}

/// Whether a checked statement only reads or also changes data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A statement that passed the gate. Its constructor is private to this
/// module; hold one and you hold proof of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSql {
    sql: String,
    access: Access,
    kind: String,
    /// The tables hidden when it was checked: engines that can also deny
    /// reads themselves (SQLite's authorizer) deny these while it runs.
    hidden: Option<std::sync::Arc<Hidden>>,
}

impl CheckedSql {
    /// The statement text to run (as given, without a trailing `;`).
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Whether it changes data.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The statement kind, e.g. `SELECT`, `INSERT`, `CREATE TABLE`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The tables hidden from the source when it was checked.
    pub fn hidden(&self) -> Option<&std::sync::Arc<Hidden>> {
        self.hidden.as_ref()
    }

    /// For engine tests that must prove layer 2 holds on its own.
    #[cfg(test)]
    pub(crate) fn unchecked_for_tests(sql: &str) -> Self {
        CheckedSql {
            sql: sql.to_string(),
            access: Access::Write,
            kind: "TEST".into(),
            hidden: None,
        }
    }

    /// Like [`CheckedSql::unchecked_for_tests`], for a statement that reads.
    #[cfg(test)]
    pub(crate) fn unchecked_read_for_tests(sql: &str) -> Self {
        CheckedSql {
            access: Access::Read,
            kind: "SELECT".into(),
            ..CheckedSql::unchecked_for_tests(sql)
        }
    }

    /// Like [`CheckedSql::unchecked_for_tests`], with tables hidden.
    #[cfg(test)]
    pub(crate) fn unchecked_hiding_for_tests(sql: &str, hidden: Hidden) -> Self {
        CheckedSql {
            hidden: Some(std::sync::Arc::new(hidden)),
            ..CheckedSql::unchecked_for_tests(sql)
        }
    }
}

/// Why a statement was refused. Its `Display` is the message for the user:
/// which kind was refused and how to allow it, if it can be allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing to run.
    Empty,
    /// More than one statement.
    Multiple(usize),
    /// The SQL does not parse in the source's dialect.
    Unparsable { dialect: Dialect, message: String },
    /// A database shell's command (`.tables`, `\d orders`), not SQL.
    ShellCommand { command: String },
    /// A statement that changes data, without `--allow-write`.
    Write { kind: String },
    /// Never allowed: it reaches outside the source (files, other databases,
    /// extensions, settings).
    Forbidden { kind: String, why: &'static str },
    /// It names a table the user hid from aiq (SPEC §4.3).
    Hidden { table: String },
    /// A view or macro it names reads a hidden table (which the message
    /// does not name).
    HiddenBehind,
    /// Nested deeper than the gate reads (parentheses, or operators in a
    /// chain): `levels` as counted, `most` what is allowed.
    TooDeep { levels: usize, most: usize },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Empty => write!(f, "refused: there is no SQL statement to run"),
            Refusal::Multiple(n) => write!(
                f,
                "refused: {n} statements given; aiq runs exactly one statement at a time (send them one by one)"
            ),
            Refusal::Unparsable { dialect, message } => write!(
                f,
                "refused: the SQL does not parse as {} ({message}); aiq only runs statements it can check",
                dialect.name()
            ),
            Refusal::ShellCommand { command } => {
                let shell = match command.starts_with('.') {
                    true => "the sqlite3 shell",
                    false => "psql",
                };
                write!(
                    f,
                    "refused: `{command}` is a command of {shell}, not SQL; for the tables and their columns use `aiq schema SOURCE` (in the chat: /schema, or /schema TABLE for one)"
                )
            }
            Refusal::Write { kind } => write!(
                f,
                "refused: {kind} changes data and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)"
            ),
            Refusal::Forbidden { kind, why } => {
                write!(f, "refused: {kind} is never allowed ({why})")
            }
            Refusal::TooDeep { levels, most } => write!(
                f,
                "refused: the statement is too deeply nested for aiq to check ({levels} levels of parentheses or operators in a chain; at most {most}); write it flatter: IN (…) instead of a long chain of OR, a CTE instead of deeply nested subqueries"
            ),
            Refusal::HiddenBehind => write!(
                f,
                "refused: a view or macro this statement names reads a table hidden from aiq in this source (by `include`/`exclude` in config.toml or --tables), so it is neither described nor queried"
            ),
            Refusal::Hidden { table } => write!(
                f,
                "refused: {table} is hidden from aiq in this source (by `include`/`exclude` in config.toml or --tables), so it is neither described nor queried"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// Parses `sql` in `dialect` and lets exactly one statement through if the
/// policy allows it. For engines whose connection alone enforces read-only
/// (PostgreSQL, MySQL); the others go through [`check_with_engine`].
pub fn check(sql: &str, dialect: Dialect, policy: &Policy) -> Result<CheckedSql, Refusal> {
    gate(sql, dialect, policy, |_| None, false)
}

/// The gate with the engine's own reading (SPEC §4.2): `read` turns the
/// statement text into what the engine will run ([`EngineReading`]), or
/// `None` for engines without one. sqlparser gives the first verdict and
/// the clear messages; the engine's reading has the last word, and what
/// runs is the statement the engine extracted.
pub fn check_with_engine(
    sql: &str,
    dialect: Dialect,
    policy: &Policy,
    read: impl FnOnce(&str) -> Option<Result<EngineReading, String>>,
) -> Result<CheckedSql, Refusal> {
    gate(sql, dialect, policy, read, true)
}

/// The gate; `side_by_side`: the engine gives a reading, so a long
/// statement is read by both at once.
fn gate(
    sql: &str,
    dialect: Dialect,
    policy: &Policy,
    read: impl FnOnce(&str) -> Option<Result<EngineReading, String>>,
    side_by_side: bool,
) -> Result<CheckedSql, Refusal> {
    let text = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if text.is_empty() {
        return Err(Refusal::Empty);
    }
    // `.tables`, `\d orders`: a database shell's own command, not SQL.
    if text.starts_with(['.', '\\']) {
        let command = text.split_whitespace().next().unwrap_or(text);
        return Err(Refusal::ShellCommand {
            command: command.chars().take(20).collect(),
        });
    }
    // How deep the statement can be, from its tokens (read without
    // recursion): past the bounds it is refused before any parser sees it.
    let (parentheses, chain) = nesting(text, dialect);
    if parentheses > MAX_PARENTHESES {
        return Err(Refusal::TooDeep {
            levels: parentheses,
            most: MAX_PARENTHESES,
        });
    }
    if chain > MAX_CHAIN {
        return Err(Refusal::TooDeep {
            levels: chain,
            most: MAX_CHAIN,
        });
    }
    // sqlparser recurses as deep as the statement nests, in its parser,
    // its walk and its drop: a long or nested statement is read on a
    // thread whose stack holds the deepest one allowed, whichever thread
    // (a runtime's worker, Lua's) asked. For a long statement the engine
    // reads it at the same time (on this thread, which owns its
    // connection), so the gate costs the longer of the two.
    let own_thread = text.len() >= PARALLEL_FROM_BYTES || parentheses > 8 || chain > 64;
    let (first, reading) = if own_thread {
        std::thread::scope(|scope| {
            let first = std::thread::Builder::new()
                .stack_size(GATE_STACK)
                .spawn_scoped(scope, || first_verdict(text, dialect, policy));
            let reading = if side_by_side { read(text) } else { None };
            let first = match first.map(|handle| handle.join()) {
                Ok(Ok(verdict)) => verdict,
                // No thread to be had: read it here.
                _ => first_verdict(text, dialect, policy),
            };
            (first, reading)
        })
    } else {
        let reading = read(text);
        (first_verdict(text, dialect, policy), reading)
    };
    let (first, hidden) = first;
    let reading = match reading {
        Some(Ok(reading)) => reading,
        // The engine could not read it: sqlparser's verdict stands, and the
        // engine refuses it again when it runs.
        Some(Err(_)) | None => {
            let (class, kind) = first?;
            hidden?;
            return admit(class, kind, text.to_string(), policy);
        }
    };
    let (class, kind) = engine::judge(first, &reading, dialect)?;
    hidden?;
    engine::check_hidden(&reading, policy)?;
    admit(class, kind, reading.statement, policy)
}

/// Statements at least this long are read by sqlparser and the engine at
/// the same time; below it a thread costs more than it saves.
const PARALLEL_FROM_BYTES: usize = 768;

/// The most parentheses (and brackets) open at once that the gate reads.
const MAX_PARENTHESES: usize = 200;
/// The most operators in chains around one point (`1 + 1 + …`, `a OR b
/// OR …`), each a level of the parse tree.
const MAX_CHAIN: usize = 5_000;
/// The gate's thread's stack: room for the deepest statement allowed, in
/// a build without optimizations too (only what is used is committed).
const GATE_STACK: usize = 512 << 20;
/// sqlparser's own bound on its recursion, above what
/// [`MAX_PARENTHESES`] lets through.
const PARSER_RECURSION: usize = 4 * MAX_PARENTHESES;

/// How deeply `text` can nest, read from its tokens: the most parentheses
/// open at once, and the most operators in chains around one point (each
/// open group's operators add up; a comma or a clause's keyword starts a
/// new expression). Text that does not tokenize is left to the parser,
/// which refuses it.
fn nesting(text: &str, dialect: Dialect) -> (usize, usize) {
    let Some(tokens) = forms::tokenize(text, dialect) else {
        return (0, 0);
    };
    // Operators seen in each open group, outermost first.
    let mut groups: Vec<usize> = vec![0];
    let (mut chain, mut deepest, mut most) = (0usize, 0usize, 0usize);
    for token in &tokens {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => groups.push(0),
            Token::RParen | Token::RBracket | Token::RBrace => {
                if groups.len() > 1 {
                    chain -= groups.pop().unwrap_or(0);
                }
            }
            Token::Word(w) if w.quote_style.is_none() => {
                let is = |words: &[&str]| words.iter().any(|k| w.value.eq_ignore_ascii_case(k));
                if is(&["and", "or", "not"]) {
                    chain += 1;
                    *groups.last_mut().unwrap_or(&mut 0) += 1;
                } else if is(&[
                    "select", "from", "where", "when", "then", "else", "on", "by", "having",
                    "limit",
                ]) {
                    // A new expression begins: the chain before it ended.
                    if let Some(last) = groups.last_mut() {
                        chain -= std::mem::take(last);
                    }
                }
            }
            Token::Comma => {
                if let Some(last) = groups.last_mut() {
                    chain -= std::mem::take(last);
                }
            }
            Token::Word(_)
            | Token::Number(..)
            | Token::Period
            | Token::SemiColon
            | Token::Colon
            | Token::Whitespace(_)
            | Token::EOF => {}
            Token::Placeholder(_) | Token::Char(_) => {}
            t if token_is_text(t) => {}
            _ => {
                chain += 1;
                *groups.last_mut().unwrap_or(&mut 0) += 1;
            }
        }
        deepest = deepest.max(groups.len() - 1);
        most = most.max(chain);
    }
    (deepest, most)
}

/// A string literal of any quoting.
fn token_is_text(token: &Token) -> bool {
    matches!(
        token,
        Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
    )
}

/// sqlparser's verdict and, while tables are hidden, whether the text
/// names one.
fn first_verdict(
    text: &str,
    dialect: Dialect,
    policy: &Policy,
) -> (Result<(Class, String), Refusal>, Result<(), Refusal>) {
    let hidden = match &policy.hidden {
        Some(hidden) => hidden.check(text, dialect),
        None => Ok(()),
    };
    let _functions = functions::Functions::set(policy);
    (first_pass(text, dialect), hidden)
}

/// sqlparser's verdict on one statement text.
fn first_pass(text: &str, dialect: Dialect) -> Result<(Class, String), Refusal> {
    if dialect == Dialect::MySql && has_executable_comment(text) {
        return Err(Refusal::Forbidden {
            kind: "an executable comment (/*! … */)".into(),
            why: "MySQL and MariaDB run the code inside it, which hides it from the check",
        });
    }
    if dialect == Dialect::ClickHouse {
        if let Some(refusal) = classify::clickhouse_tokens(text) {
            return Err(refusal);
        }
    }
    if let Some(refusal) = forms::defines_code_or_access(text, dialect) {
        return Err(refusal);
    }
    verdict(text, dialect)
}

/// A [`CheckedSql`] for `sql` if the policy lets a statement of `class` run.
fn admit(class: Class, kind: String, sql: String, policy: &Policy) -> Result<CheckedSql, Refusal> {
    let access = match class {
        Class::Read => Access::Read,
        Class::Write(kind) if policy.allow_write => {
            return Ok(CheckedSql {
                sql,
                access: Access::Write,
                kind,
                hidden: policy.hidden.clone(),
            })
        }
        Class::Write(kind) => return Err(Refusal::Write { kind }),
        Class::Forbidden(kind, why) => return Err(Refusal::Forbidden { kind, why }),
    };
    Ok(CheckedSql {
        sql,
        access,
        kind,
        hidden: policy.hidden.clone(),
    })
}

/// What `text` is: a PRAGMA (read from tokens), one of the forms sqlparser
/// cannot read (checked through what they wrap), or one parsed statement.
fn verdict(text: &str, dialect: Dialect) -> Result<(Class, String), Refusal> {
    if let Some(v) = pragma_statement(text, dialect) {
        return v;
    }
    if let Some(v) = forms::special(text, dialect) {
        return v;
    }
    let statements = parse(text, dialect)?;
    match statements.as_slice() {
        [] => Err(Refusal::Empty),
        [one] => Ok((classify(one, dialect), statement_kind(one))),
        many => Err(Refusal::Multiple(many.len())),
    }
}

/// `/*! … */` and MariaDB's `/*M! … */`: comments that MySQL and MariaDB
/// execute. Looked for anywhere in the text (a string that merely contains
/// one is refused too; being wrong that way is safe).
fn has_executable_comment(text: &str) -> bool {
    text.match_indices("/*").any(|(i, _)| {
        let rest = &text[i + 2..];
        rest.starts_with('!') || rest.starts_with("M!") || rest.starts_with("m!")
    })
}

/// `PRAGMA name`, `PRAGMA [schema.]name(value)` and `PRAGMA name = value`,
/// read from tokens: sqlparser only accepts literal values there, while
/// SQLite and DuckDB also take names (`PRAGMA table_info(orders)`). `None`
/// when the statement is not a PRAGMA; anything beyond that grammar is
/// refused.
fn pragma_statement(text: &str, dialect: Dialect) -> Option<Result<(Class, String), Refusal>> {
    if !matches!(dialect, Dialect::Sqlite | Dialect::DuckDb) {
        return None;
    }
    let tokens = match dialect {
        Dialect::Sqlite => Tokenizer::new(&SQLiteDialect {}, text).tokenize(),
        _ => Tokenizer::new(&DuckDbDialect {}, text).tokenize(),
    }
    .ok()?;
    let sig: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let is_word = |t: Option<&&Token>, w: &str| matches!(t, Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    if !is_word(sig.first(), "pragma") {
        return None;
    }
    let bad = |why: &str| {
        Some(Err(Refusal::Unparsable {
            dialect,
            message: format!("{why} in PRAGMA"),
        }))
    };
    let name_at = |i: usize| match sig.get(i) {
        Some(Token::Word(w)) => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    let Some(mut name) = name_at(1) else {
        return bad("expected a pragma name");
    };
    let mut i = 2;
    if matches!(sig.get(i), Some(Token::Period)) {
        let Some(n) = name_at(i + 1) else {
            return bad("expected a pragma name after the schema");
        };
        name = n;
        i += 2;
    }
    let is_value = |t: Option<&&Token>| {
        matches!(
            t,
            Some(
                Token::Word(_)
                    | Token::Number(..)
                    | Token::SingleQuotedString(_)
                    | Token::DoubleQuotedString(_)
            )
        )
    };
    let (has_value, is_eq) = match sig.get(i) {
        None => (false, false),
        Some(Token::Eq) if is_value(sig.get(i + 1)) && sig.len() == i + 2 => (true, true),
        Some(Token::LParen)
            if is_value(sig.get(i + 1))
                && matches!(sig.get(i + 2), Some(Token::RParen))
                && sig.len() == i + 3 =>
        {
            (true, false)
        }
        Some(Token::SemiColon) => return Some(Err(Refusal::Multiple(2))),
        Some(_) => return bad("unexpected text"),
    };
    let class = classify_pragma(&name, has_value, is_eq);
    Some(Ok((class, format!("PRAGMA {name}"))))
}

fn parse(text: &str, dialect: Dialect) -> Result<Vec<Statement>, Refusal> {
    let parse = |d: &dyn sqlparser::dialect::Dialect| {
        Parser::new(d)
            .with_recursion_limit(PARSER_RECURSION)
            .try_with_sql(text)?
            .parse_statements()
    };
    let result = match dialect {
        Dialect::Sqlite => parse(&SQLiteDialect {}),
        Dialect::DuckDb => parse(&DuckDbDialect {}),
        Dialect::Postgres => parse(&PostgreSqlDialect {}),
        Dialect::MySql => parse(&MySqlDialect {}),
        Dialect::ClickHouse => parse(&ClickHouseDialect {}),
    };
    result.map_err(|e| Refusal::Unparsable {
        dialect,
        message: e
            .to_string()
            .trim_start_matches("sql parser error: ")
            .to_string(),
    })
}
