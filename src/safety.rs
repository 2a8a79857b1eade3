//! The parser gate (SPEC §4.2, layer 1). Every statement — from the model or
//! from the user — is parsed with sqlparser in the source's dialect and
//! classified before it may run. Only [`check`] can build a [`CheckedSql`],
//! and [`crate::source::DataSource::execute`] accepts nothing else, so the
//! type system proves no statement reaches an engine unchecked.
//!
//! This module never touches a database; the engines add their own read-only
//! layer underneath (layer 2), so a gap here is not a hole.

use std::fmt;
use std::ops::ControlFlow;

use sqlparser::ast::{Expr, ObjectName, Query, SetExpr, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::{DuckDbDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The SQL dialect a source speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    DuckDb,
    Postgres,
    MySql,
}

impl Dialect {
    /// The engine's name as people know it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "SQLite",
            Dialect::DuckDb => "DuckDB",
            Dialect::Postgres => "PostgreSQL",
            Dialect::MySql => "MySQL",
        }
    }
}

/// What the gate lets through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// `--allow-write`: statements that change data may pass (they still need
    /// confirmation from the front end).
    pub allow_write: bool,
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

    /// For engine tests that must prove layer 2 holds on its own.
    #[cfg(test)]
    pub(crate) fn unchecked_for_tests(sql: &str) -> Self {
        CheckedSql {
            sql: sql.to_string(),
            access: Access::Write,
            kind: "TEST".into(),
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
    /// A statement that changes data, without `--allow-write`.
    Write { kind: String },
    /// Never allowed: it reaches outside the source (files, other databases,
    /// extensions, settings).
    Forbidden { kind: String, why: &'static str },
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
            Refusal::Write { kind } => write!(
                f,
                "refused: {kind} changes data and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)"
            ),
            Refusal::Forbidden { kind, why } => {
                write!(f, "refused: {kind} is never allowed ({why})")
            }
        }
    }
}

impl std::error::Error for Refusal {}

/// Parses `sql` in `dialect` and lets exactly one statement through if the
/// policy allows it.
pub fn check(sql: &str, dialect: Dialect, policy: Policy) -> Result<CheckedSql, Refusal> {
    let text = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if text.is_empty() {
        return Err(Refusal::Empty);
    }
    if dialect == Dialect::MySql && has_executable_comment(text) {
        return Err(Refusal::Forbidden {
            kind: "an executable comment (/*! … */)".into(),
            why: "MySQL and MariaDB run the code inside it, which hides it from the check",
        });
    }
    let (class, kind) = match pragma_statement(text, dialect) {
        Some(verdict) => verdict?,
        None => {
            let statements = parse(text, dialect)?;
            let statement = match statements.as_slice() {
                [] => return Err(Refusal::Empty),
                [one] => one,
                many => return Err(Refusal::Multiple(many.len())),
            };
            (classify(statement), statement_kind(statement))
        }
    };
    let access = match class {
        Class::Read => Access::Read,
        Class::Write(kind) if policy.allow_write => {
            return Ok(CheckedSql {
                sql: text.to_string(),
                access: Access::Write,
                kind,
            })
        }
        Class::Write(kind) => return Err(Refusal::Write { kind }),
        Class::Forbidden(kind, why) => return Err(Refusal::Forbidden { kind, why }),
    };
    Ok(CheckedSql {
        sql: text.to_string(),
        access,
        kind,
    })
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

fn classify_pragma(name: &str, has_value: bool, is_eq: bool) -> Class {
    if is_eq {
        Class::Write(format!("PRAGMA {name} = …"))
    } else if pragma_only_reads(name, has_value) {
        Class::Read
    } else {
        Class::Write(format!("PRAGMA {name}"))
    }
}

/// Whether `PRAGMA name` (with an argument in parentheses when `has_value`)
/// only reports something. Shared with the SQLite authorizer, so both layers
/// agree on what introspection is.
pub fn pragma_only_reads(name: &str, has_value: bool) -> bool {
    let name = name.to_ascii_lowercase();
    READ_PRAGMAS.contains(&name.as_str()) || (!has_value && is_harmless_pragma_read(&name))
}

fn parse(text: &str, dialect: Dialect) -> Result<Vec<Statement>, Refusal> {
    let result = match dialect {
        Dialect::Sqlite => Parser::parse_sql(&SQLiteDialect {}, text),
        Dialect::DuckDb => Parser::parse_sql(&DuckDbDialect {}, text),
        Dialect::Postgres => Parser::parse_sql(&PostgreSqlDialect {}, text),
        Dialect::MySql => Parser::parse_sql(&MySqlDialect {}, text),
    };
    result.map_err(|e| Refusal::Unparsable {
        dialect,
        message: e
            .to_string()
            .trim_start_matches("sql parser error: ")
            .to_string(),
    })
}

/// The gate's verdict on one parsed statement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Class {
    Read,
    Write(String),
    Forbidden(String, &'static str),
}

const OUTSIDE_FILES: &str = "it reads or writes files outside the data source";
const OUTSIDE_DB: &str = "it reaches other databases";
const CODE: &str = "it installs or loads code into the database engine";
const SETTINGS: &str = "it changes the engine's settings, which guard read-only access";
const ADMIN: &str = "it acts on the server itself, not on data";

/// Introspection pragmas that only read (SQLite/DuckDB `PRAGMA name(arg)`).
const READ_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "database_list",
    "collation_list",
    "function_list",
    "pragma_list",
    "module_list",
    "show_tables",
    "show_tables_expanded",
    "show",
    "database_size",
    "storage_info",
    "version",
    "platform",
];

/// Functions that read or write files, reach other databases, execute SQL
/// given as text, or expose the environment. Matched on the last name part,
/// case-insensitively, wherever they appear (expressions and FROM items).
const FORBIDDEN_FUNCTIONS: &[(&str, &str)] = &[
    ("read_csv", OUTSIDE_FILES),
    ("read_csv_auto", OUTSIDE_FILES),
    ("read_parquet", OUTSIDE_FILES),
    ("parquet_scan", OUTSIDE_FILES),
    ("parquet_metadata", OUTSIDE_FILES),
    ("parquet_schema", OUTSIDE_FILES),
    ("parquet_file_metadata", OUTSIDE_FILES),
    ("parquet_kv_metadata", OUTSIDE_FILES),
    ("read_json", OUTSIDE_FILES),
    ("read_json_auto", OUTSIDE_FILES),
    ("read_json_objects", OUTSIDE_FILES),
    ("read_json_objects_auto", OUTSIDE_FILES),
    ("read_ndjson", OUTSIDE_FILES),
    ("read_ndjson_auto", OUTSIDE_FILES),
    ("read_ndjson_objects", OUTSIDE_FILES),
    ("read_text", OUTSIDE_FILES),
    ("read_blob", OUTSIDE_FILES),
    ("read_xlsx", OUTSIDE_FILES),
    ("sniff_csv", OUTSIDE_FILES),
    ("glob", OUTSIDE_FILES),
    ("st_read", OUTSIDE_FILES),
    ("iceberg_scan", OUTSIDE_FILES),
    ("delta_scan", OUTSIDE_FILES),
    ("readfile", OUTSIDE_FILES),
    ("writefile", OUTSIDE_FILES),
    ("edit", OUTSIDE_FILES),
    ("pg_read_file", OUTSIDE_FILES),
    ("pg_read_binary_file", OUTSIDE_FILES),
    ("pg_ls_dir", OUTSIDE_FILES),
    ("pg_stat_file", OUTSIDE_FILES),
    ("lo_import", OUTSIDE_FILES),
    ("lo_export", OUTSIDE_FILES),
    ("load_file", OUTSIDE_FILES),
    ("sqlite_scan", OUTSIDE_DB),
    ("sqlite_attach", OUTSIDE_DB),
    ("postgres_scan", OUTSIDE_DB),
    ("postgres_attach", OUTSIDE_DB),
    ("postgres_query", OUTSIDE_DB),
    ("mysql_scan", OUTSIDE_DB),
    ("mysql_query", OUTSIDE_DB),
    ("dblink", OUTSIDE_DB),
    ("dblink_exec", OUTSIDE_DB),
    (
        "query",
        "it runs SQL given as text, which the gate cannot check",
    ),
    (
        "query_table",
        "it runs SQL given as text, which the gate cannot check",
    ),
    ("load_extension", CODE),
    ("fts3_tokenizer", CODE),
    ("getenv", "it reads the environment, where secrets live"),
    ("set_config", SETTINGS),
    ("pg_ls_logdir", OUTSIDE_FILES),
    ("pg_ls_waldir", OUTSIDE_FILES),
    ("pg_ls_tmpdir", OUTSIDE_FILES),
    ("pg_ls_archive_statusdir", OUTSIDE_FILES),
    ("pg_file_write", OUTSIDE_FILES),
    ("pg_file_rename", OUTSIDE_FILES),
    ("pg_file_unlink", OUTSIDE_FILES),
    ("dblink_connect", OUTSIDE_DB),
    ("dblink_send_query", OUTSIDE_DB),
    (
        "query_to_xml",
        "it runs SQL given as text, which the gate cannot check",
    ),
    (
        "query_to_xml_and_xmlschema",
        "it runs SQL given as text, which the gate cannot check",
    ),
    (
        "query_to_xmlschema",
        "it runs SQL given as text, which the gate cannot check",
    ),
    ("pg_terminate_backend", ADMIN),
    ("pg_cancel_backend", ADMIN),
    ("pg_reload_conf", ADMIN),
    ("pg_rotate_logfile", ADMIN),
    ("pg_switch_wal", ADMIN),
    ("pg_promote", ADMIN),
    ("pg_create_restore_point", ADMIN),
    ("sys_exec", CODE),
    ("sys_eval", CODE),
];

/// Functions that change data even inside a SELECT.
const WRITING_FUNCTIONS: &[&str] = &[
    "nextval",
    "setval",
    "pg_advisory_lock",
    "lo_unlink",
    "lo_create",
    "lo_creat",
    "lo_from_bytea",
    "lo_put",
    "pg_notify",
    "get_lock",
];

/// File extensions that make a FROM name a file read (DuckDB's replacement scans).
const FILE_SUFFIXES: &[&str] = &[
    ".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".gz", ".zst", ".db",
    ".sqlite", ".duckdb", ".xlsx", ".arrow",
];

fn classify(statement: &Statement) -> Class {
    match statement {
        Statement::Query(query) => classify_query(query, statement),
        Statement::Explain {
            statement: inner, ..
        } => match classify(inner) {
            Class::Read => classify_query_parts(statement),
            other => other,
        },
        Statement::ExplainTable { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowViews { .. }
        | Statement::ShowColumns { .. }
        | Statement::ShowFunctions { .. }
        | Statement::ShowCreate { .. }
        | Statement::ShowDatabases { .. }
        | Statement::ShowSchemas { .. }
        | Statement::ShowCatalogs { .. }
        | Statement::ShowCollation { .. }
        | Statement::ShowObjects(_) => Class::Read,
        Statement::ShowVariable { .. }
        | Statement::ShowVariables { .. }
        | Statement::ShowStatus { .. } => Class::Read,
        Statement::Pragma { name, value, is_eq } => {
            classify_pragma(&last_part(name), value.is_some(), *is_eq)
        }
        Statement::AttachDatabase { .. }
        | Statement::AttachDuckDBDatabase { .. }
        | Statement::DetachDuckDBDatabase { .. } => {
            Class::Forbidden(statement_kind(statement), OUTSIDE_DB)
        }
        Statement::Install { .. } | Statement::Load { .. } => {
            Class::Forbidden(statement_kind(statement), CODE)
        }
        Statement::Copy { .. }
        | Statement::CopyIntoSnowflake { .. }
        | Statement::Unload { .. }
        | Statement::LoadData { .. }
        | Statement::ExportData(_) => Class::Forbidden(statement_kind(statement), OUTSIDE_FILES),
        Statement::Set(_) | Statement::Reset(_) => {
            Class::Forbidden(statement_kind(statement), SETTINGS)
        }
        _ => Class::Write(statement_kind(statement)),
    }
}

/// Pragmas that, without an argument, only report a value.
fn is_harmless_pragma_read(name: &str) -> bool {
    matches!(
        name,
        "user_version"
            | "schema_version"
            | "application_id"
            | "encoding"
            | "page_size"
            | "page_count"
            | "freelist_count"
            | "foreign_keys"
            | "journal_mode"
            | "compile_options"
    )
}

fn classify_query(query: &Query, whole: &Statement) -> Class {
    if !query.locks.is_empty() {
        return Class::Write("SELECT … FOR UPDATE".into());
    }
    if let SetExpr::Select(select) = query.body.as_ref() {
        if select.into.is_some() {
            return Class::Write("SELECT … INTO".into());
        }
    }
    classify_query_parts(whole)
}

/// Walks every part of a statement: nested statements (data-modifying CTEs),
/// `SELECT … INTO` anywhere, forbidden functions and file-like table names.
fn classify_query_parts(statement: &Statement) -> Class {
    let mut walker = Walker;
    match statement.visit(&mut walker) {
        ControlFlow::Break(class) => class,
        ControlFlow::Continue(()) => Class::Read,
    }
}

struct Walker;

impl Visitor for Walker {
    type Break = Class;

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<Class> {
        match statement {
            Statement::Query(_) | Statement::Explain { .. } => ControlFlow::Continue(()),
            other => ControlFlow::Break(match classify(other) {
                Class::Read => return ControlFlow::Continue(()),
                class => class,
            }),
        }
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<Class> {
        if !query.locks.is_empty() {
            return ControlFlow::Break(Class::Write("SELECT … FOR UPDATE".into()));
        }
        match query.body.as_ref() {
            SetExpr::Select(select) if select.into.is_some() => {
                ControlFlow::Break(Class::Write("SELECT … INTO".into()))
            }
            SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Merge(s) => {
                ControlFlow::Break(classify(s))
            }
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<Class> {
        let last = relation.0.last().and_then(|p| p.as_ident());
        if let Some(ident) = last {
            let name = ident.value.to_ascii_lowercase();
            let file_like = ident.quote_style == Some('\'')
                || name.contains('/')
                || name.contains('\\')
                || name.contains("://")
                || name.starts_with('~')
                || FILE_SUFFIXES.iter().any(|s| name.ends_with(s));
            if file_like {
                return ControlFlow::Break(Class::Forbidden(
                    format!("reading the file '{}'", ident.value),
                    OUTSIDE_FILES,
                ));
            }
        }
        ControlFlow::Continue(())
    }

    /// Table functions: `FROM read_csv(…)`. A plain `FROM query` is a table.
    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<Class> {
        let function = match factor {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            } => Some(name),
            TableFactor::Function { name, .. } => Some(name),
            _ => None,
        };
        match function.and_then(|name| function_class(&last_part(name), true)) {
            Some(class) => ControlFlow::Break(class),
            None => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<Class> {
        if let Expr::Function(function) = expr {
            if let Some(class) = function_class(&last_part(&function.name), false) {
                return ControlFlow::Break(class);
            }
        }
        ControlFlow::Continue(())
    }
}

/// Forbidden only as table functions (`FROM glob('*')`): as scalars these
/// names are harmless (SQLite's `glob(pattern, text)`).
const TABLE_FUNCTIONS_ONLY: &[&str] = &["glob", "query", "query_table"];

fn function_class(name: &str, in_from: bool) -> Option<Class> {
    if !in_from && TABLE_FUNCTIONS_ONLY.contains(&name) {
        return None;
    }
    if let Some((f, why)) = FORBIDDEN_FUNCTIONS.iter().find(|(f, _)| *f == name) {
        return Some(Class::Forbidden(format!("{f}()"), why));
    }
    if WRITING_FUNCTIONS.contains(&name) {
        return Some(Class::Write(format!("{name}()")));
    }
    None
}

fn last_part(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.to_ascii_lowercase())
        .unwrap_or_default()
}

/// A short name for a statement's kind: its leading keywords, e.g. `DELETE`,
/// `CREATE TABLE`, `ATTACH`.
fn statement_kind(statement: &Statement) -> String {
    let text = statement.to_string();
    let mut words = text
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_uppercase());
    let first = words.next().unwrap_or_default();
    match first.as_str() {
        "CREATE" | "DROP" | "ALTER" => {
            let noise = [
                "OR",
                "REPLACE",
                "TEMP",
                "TEMPORARY",
                "UNIQUE",
                "IF",
                "NOT",
                "EXISTS",
                "MATERIALIZED",
                "GLOBAL",
                "LOCAL",
            ];
            match words.find(|w| !noise.contains(&w.as_str())) {
                Some(object) => format!("{first} {object}"),
                None => first,
            }
        }
        "WITH" => "SELECT".into(),
        _ => first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(sql: &str, dialect: Dialect) -> Result<Access, Refusal> {
        check(sql, dialect, Policy::default()).map(|c| c.access())
    }

    #[test]
    fn mysql_executable_comments_are_refused() {
        for sql in [
            "SELECT 1 /*!, (SELECT 1) */",
            "SELECT * FROM customers /*!50000 INTO OUTFILE '/tmp/x' */",
            "SELECT 1 /*M! ; DROP TABLE t */",
        ] {
            let r = verdict(sql, Dialect::MySql);
            assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
        }
        // Ordinary comments and optimizer hints are fine.
        assert_eq!(
            verdict("SELECT /* c */ 1", Dialect::MySql),
            Ok(Access::Read)
        );
        assert_eq!(
            verdict("SELECT /*+ MAX_EXECUTION_TIME(10) */ 1", Dialect::MySql),
            Ok(Access::Read)
        );
    }

    #[test]
    fn reads_pass_in_every_dialect() {
        for d in [
            Dialect::Sqlite,
            Dialect::DuckDb,
            Dialect::Postgres,
            Dialect::MySql,
        ] {
            for sql in [
                "SELECT 1",
                "select * from orders where id = 3;",
                "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
                "SELECT a FROM t UNION ALL SELECT b FROM u",
                "VALUES (1), (2)",
                "EXPLAIN SELECT 1",
            ] {
                assert_eq!(verdict(sql, d), Ok(Access::Read), "{sql} in {d:?}");
            }
        }
    }

    #[test]
    fn introspection_passes() {
        assert_eq!(
            verdict("PRAGMA table_info(orders)", Dialect::Sqlite),
            Ok(Access::Read)
        );
        assert_eq!(
            verdict("PRAGMA foreign_key_list('orders')", Dialect::Sqlite),
            Ok(Access::Read)
        );
        assert_eq!(
            verdict("PRAGMA user_version", Dialect::Sqlite),
            Ok(Access::Read)
        );
        assert_eq!(verdict("SHOW TABLES", Dialect::DuckDb), Ok(Access::Read));
        assert_eq!(
            verdict("DESCRIBE orders", Dialect::DuckDb),
            Ok(Access::Read)
        );
    }

    #[test]
    fn writes_are_refused_with_their_kind() {
        let cases = [
            ("DELETE FROM t", "DELETE"),
            ("insert into t values (1)", "INSERT"),
            ("UPDATE t SET a = 1", "UPDATE"),
            ("CREATE TABLE x (a INT)", "CREATE TABLE"),
            ("CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE VIEW"),
            ("DROP TABLE IF EXISTS t", "DROP TABLE"),
            ("PRAGMA journal_mode = WAL", "PRAGMA journal_mode = …"),
            ("PRAGMA user_version(5)", "PRAGMA user_version"),
            ("BEGIN", "BEGIN"),
            ("VACUUM", "VACUUM"),
        ];
        for (sql, kind) in cases {
            assert_eq!(
                verdict(sql, Dialect::Sqlite),
                Err(Refusal::Write { kind: kind.into() }),
                "{sql}"
            );
        }
    }

    #[test]
    fn data_modifying_cte_is_a_write() {
        let r = verdict(
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            Dialect::Postgres,
        );
        assert!(
            matches!(r, Err(Refusal::Write { ref kind }) if kind == "DELETE"),
            "{r:?}"
        );
    }

    #[test]
    fn select_into_is_a_write() {
        let r = verdict("SELECT * INTO copy FROM t", Dialect::Postgres);
        assert_eq!(
            r,
            Err(Refusal::Write {
                kind: "SELECT … INTO".into()
            })
        );
    }

    #[test]
    fn stacked_statements_are_refused() {
        assert_eq!(
            verdict("SELECT 1; DROP TABLE t", Dialect::Sqlite),
            Err(Refusal::Multiple(2))
        );
        assert_eq!(
            verdict("SELECT 1 /* ; */ ; -- x\n DELETE FROM t", Dialect::DuckDb),
            Err(Refusal::Multiple(2))
        );
    }

    #[test]
    fn forbidden_things() {
        for (sql, d) in [
            ("ATTACH DATABASE '/tmp/x.db' AS x", Dialect::Sqlite),
            ("ATTACH '/tmp/x.duckdb' AS x", Dialect::DuckDb),
            ("INSTALL httpfs", Dialect::DuckDb),
            ("LOAD httpfs", Dialect::DuckDb),
            ("COPY t TO '/tmp/out.csv'", Dialect::DuckDb),
            ("SELECT * FROM read_csv('/etc/passwd')", Dialect::DuckDb),
            ("SELECT * FROM '/etc/passwd'", Dialect::DuckDb),
            ("SELECT * FROM 'data.csv'", Dialect::DuckDb),
            ("SELECT load_extension('x')", Dialect::Sqlite),
            ("SELECT getenv('HOME')", Dialect::DuckDb),
            ("SET enable_external_access = true", Dialect::DuckDb),
            ("SELECT * FROM query('DELETE FROM t')", Dialect::DuckDb),
        ] {
            let r = verdict(sql, d);
            assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
        }
    }

    #[test]
    fn harmless_names_are_not_mistaken_for_file_readers() {
        for (sql, d) in [
            ("SELECT * FROM query", Dialect::DuckDb),
            ("SELECT * FROM glob WHERE read_csv = 1", Dialect::Sqlite),
            ("SELECT glob('a*', name) FROM t", Dialect::Sqlite),
            ("SELECT name FROM t WHERE name GLOB 'A*'", Dialect::Sqlite),
        ] {
            assert_eq!(verdict(sql, d), Ok(Access::Read), "{sql}");
        }
    }

    #[test]
    fn unparsable_is_refused_with_the_parser_message() {
        let r = verdict("SELEC 1", Dialect::Sqlite);
        let Err(Refusal::Unparsable { message, .. }) = r else {
            panic!("{r:?}")
        };
        assert!(message.contains("SELEC"), "{message}");
    }

    #[test]
    fn allow_write_lets_writes_through_but_not_forbidden() {
        let p = Policy { allow_write: true };
        let c = check("DELETE FROM t;", Dialect::Sqlite, p).unwrap();
        assert_eq!(c.access(), Access::Write);
        assert_eq!(c.sql(), "DELETE FROM t");
        assert_eq!(c.kind(), "DELETE");
        assert!(check("ATTACH 'x.db' AS x", Dialect::Sqlite, p).is_err());
    }

    #[test]
    fn empty_is_refused() {
        assert_eq!(verdict("  ; ", Dialect::Sqlite), Err(Refusal::Empty));
    }

    #[test]
    fn refusal_messages_say_how_to_allow() {
        let m = Refusal::Write {
            kind: "DELETE".into(),
        }
        .to_string();
        assert_eq!(
            m,
            "refused: DELETE changes data and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)"
        );
    }
}
