//! Classifying a parsed statement: read, write, or never allowed. Every
//! part of a statement is walked — nested queries and statements, functions
//! anywhere, table names that are really files — and the worst verdict wins,
//! for writes too: `--allow-write` lets a write through, never a file read
//! or an extension load inside it.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, ObjectName, Query, SetExpr, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::ClickHouseDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use super::functions;
use super::{Dialect, Refusal};

/// The gate's verdict on one parsed statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Class {
    Read,
    Write(String),
    Forbidden(String, &'static str),
}

const OUTSIDE_FILES: &str = "it reads or writes files outside the data source";
const OUTSIDE_DB: &str = "it reaches other databases";
const CODE: &str = "it installs or loads code into the database engine";
const SETTINGS: &str = "it changes the engine's settings, which guard read-only access";
const ADMIN: &str = "it acts on the server itself, not on data";
const LASTING: &str =
    "it changes the server's state beyond the statement (locks, replication slots, statistics, backups)";
const BY_NAME: &str =
    "it reads tables named in a string, which the gate cannot check; query the tables instead";
const RUNS_TEXT: &str = "it runs SQL given as text, which the gate cannot check";

/// Introspection pragmas that only read (SQLite/DuckDB `PRAGMA name(arg)`).
const READ_PRAGMAS: &[&str] = &[
    "integrity_check",
    "quick_check",
    "foreign_key_check",
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
    // Server state that outlives the statement (SPEC §4.2): locks held
    // across calls, replication slots, statistics, backups.
    ("get_lock", LASTING),
    ("pg_advisory_lock", LASTING),
    ("pg_advisory_lock_shared", LASTING),
    ("pg_try_advisory_lock", LASTING),
    ("pg_try_advisory_lock_shared", LASTING),
    ("pg_advisory_xact_lock", LASTING),
    ("pg_advisory_xact_lock_shared", LASTING),
    ("pg_try_advisory_xact_lock", LASTING),
    ("pg_try_advisory_xact_lock_shared", LASTING),
    ("pg_create_physical_replication_slot", LASTING),
    ("pg_create_logical_replication_slot", LASTING),
    ("pg_copy_physical_replication_slot", LASTING),
    ("pg_copy_logical_replication_slot", LASTING),
    ("pg_drop_replication_slot", LASTING),
    ("pg_replication_slot_advance", LASTING),
    ("pg_logical_slot_get_changes", LASTING),
    ("pg_logical_slot_get_binary_changes", LASTING),
    ("pg_logical_emit_message", LASTING),
    ("pg_stat_reset", LASTING),
    ("pg_stat_reset_shared", LASTING),
    ("pg_stat_reset_single_table_counters", LASTING),
    ("pg_stat_reset_single_function_counters", LASTING),
    ("pg_stat_reset_slru", LASTING),
    ("pg_stat_reset_replication_slot", LASTING),
    ("pg_stat_reset_subscription_stats", LASTING),
    ("pg_backup_start", LASTING),
    ("pg_backup_stop", LASTING),
    ("pg_start_backup", LASTING),
    ("pg_stop_backup", LASTING),
    ("pg_export_snapshot", LASTING),
    ("pg_wal_replay_pause", LASTING),
    ("pg_wal_replay_resume", LASTING),
    ("pg_log_backend_memory_contexts", LASTING),
    ("dblink_connect_u", OUTSIDE_DB),
    ("dblink_open", OUTSIDE_DB),
    ("dblink_fetch", OUTSIDE_DB),
    ("dblink_get_result", OUTSIDE_DB),
    ("table_to_xml", BY_NAME),
    ("table_to_xmlschema", BY_NAME),
    ("table_to_xml_and_xmlschema", BY_NAME),
    ("schema_to_xml", BY_NAME),
    ("schema_to_xmlschema", BY_NAME),
    ("schema_to_xml_and_xmlschema", BY_NAME),
    ("database_to_xml", BY_NAME),
    ("database_to_xmlschema", BY_NAME),
    ("database_to_xml_and_xmlschema", BY_NAME),
    ("cursor_to_xml", BY_NAME),
    ("cursor_to_xmlschema", BY_NAME),
    ("json_serialize_plan", RUNS_TEXT),
    ("pg_terminate_backend", ADMIN),
    ("pg_cancel_backend", ADMIN),
    ("pg_reload_conf", ADMIN),
    ("pg_rotate_logfile", ADMIN),
    ("pg_switch_wal", ADMIN),
    ("pg_promote", ADMIN),
    ("pg_create_restore_point", ADMIN),
    // MariaDB Spider's functions send SQL given as text to the shards, or
    // copy rows between them, where the head's read-only transaction does
    // not reach.
    ("spider_direct_sql", OUTSIDE_DB),
    ("spider_bg_direct_sql", OUTSIDE_DB),
    ("spider_copy_tables", OUTSIDE_DB),
    ("spider_ping_table", ADMIN),
    ("spider_flush_table_mon_cache", ADMIN),
    // postgres_fdw's: they close the connections to the other servers.
    ("postgres_fdw_disconnect", ADMIN),
    ("postgres_fdw_disconnect_all", ADMIN),
    ("sys_exec", CODE),
    ("sys_eval", CODE),
];

/// Functions that change data even inside a SELECT.
const WRITING_FUNCTIONS: &[&str] = &[
    "nextval",
    "setval",
    "lo_unlink",
    "lo_create",
    "lo_creat",
    "lo_from_bytea",
    "lo_put",
    "pg_notify",
];

/// File extensions that make a FROM name a file read (DuckDB's replacement scans).
const FILE_SUFFIXES: &[&str] = &[
    ".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".gz", ".zst", ".db",
    ".sqlite", ".duckdb", ".xlsx", ".arrow",
];

/// The verdict on a statement: its own kind, then everything inside it.
pub(super) fn classify(statement: &Statement, dialect: Dialect) -> Class {
    let own = match (dialect, statement) {
        (Dialect::ClickHouse, Statement::Kill { .. }) => {
            Class::Forbidden(statement_kind(statement), ADMIN)
        }
        _ => classify_kind(statement),
    };
    if matches!(own, Class::Forbidden(..)) {
        return own;
    }
    let mut walker = Walker {
        write: None,
        dialect,
        // DuckDB reads a query's functions from its own parse tree; for a
        // write it gives none, so the functions inside are held to DuckDB's
        // allow-list here (SPEC §4.2, "Behind a name").
        allow_list: dialect == Dialect::DuckDb && matches!(own, Class::Write(_)),
    };
    if let ControlFlow::Break(forbidden) = statement.visit(&mut walker) {
        return forbidden;
    }
    match (own, walker.write) {
        (Class::Read, Some(kind)) => Class::Write(kind),
        (own, _) => own,
    }
}

/// What a statement is by its kind alone, without looking inside.
fn classify_kind(statement: &Statement) -> Class {
    match statement {
        Statement::Query(query) => classify_query(query),
        // EXPLAIN takes the verdict of what it explains (EXPLAIN ANALYZE runs it).
        Statement::Explain {
            statement: inner, ..
        } => classify_kind(inner),
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

pub(super) fn classify_pragma(name: &str, has_value: bool, is_eq: bool) -> Class {
    let shown = if is_eq {
        format!("PRAGMA {name} = …")
    } else {
        format!("PRAGMA {name}")
    };
    if !is_eq && pragma_only_reads(name, has_value) {
        Class::Read
    } else if pragma_changes_data(name) {
        Class::Write(shown)
    } else {
        Class::Forbidden(shown, CONFIGURATION)
    }
}

/// Why a pragma that sets the engine up is refused in every mode.
const CONFIGURATION: &str =
    "it changes the engine's configuration, which guards your data; --allow-write allows changing data, not that";

/// Pragmas that change the data file, not how the engine guards it: with
/// `--allow-write` (and a confirmation) they may run. Every other pragma
/// that does more than report is engine configuration (SPEC §4.2).
pub fn pragma_changes_data(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "optimize" | "incremental_vacuum" | "wal_checkpoint" | "user_version" | "application_id"
    )
}

/// Whether `PRAGMA name` (with an argument in parentheses when `has_value`)
/// only reports something. Shared with the SQLite authorizer, so both layers
/// agree on what introspection is.
pub fn pragma_only_reads(name: &str, has_value: bool) -> bool {
    let name = name.to_ascii_lowercase();
    READ_PRAGMAS.contains(&name.as_str()) || (!has_value && is_harmless_pragma_read(&name))
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
            | "data_version"
            | "cache_size"
    )
}

fn classify_query(query: &Query) -> Class {
    // ClickHouse's clauses: `SETTINGS` could lift `readonly` or the limits
    // that guard the server; `FORMAT` would change how the result comes
    // back, which aiq chooses.
    if query.settings.is_some() {
        return Class::Forbidden("a SETTINGS clause".into(), SETTINGS);
    }
    if query.format_clause.is_some() {
        return Class::Forbidden(
            "a FORMAT clause".into(),
            "aiq chooses the format results come back in; leave FORMAT out",
        );
    }
    if !query.locks.is_empty() {
        return Class::Write("SELECT … FOR UPDATE".into());
    }
    match query.body.as_ref() {
        SetExpr::Select(select) if select.into.is_some() => Class::Write("SELECT … INTO".into()),
        SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Merge(s) => {
            classify_kind(s)
        }
        _ => Class::Read,
    }
}

/// Walks every part of a statement: nested statements (data-modifying
/// CTEs), `SELECT … INTO` anywhere, forbidden functions and file-like table
/// names. Stops at the first forbidden thing; remembers the first write.
struct Walker {
    write: Option<String>,
    dialect: Dialect,
    /// Every function must be on DuckDB's allow-list.
    allow_list: bool,
}

impl Walker {
    fn see(&mut self, class: Class) -> ControlFlow<Class> {
        match class {
            Class::Read => ControlFlow::Continue(()),
            Class::Write(kind) => {
                self.write.get_or_insert(kind);
                ControlFlow::Continue(())
            }
            forbidden => ControlFlow::Break(forbidden),
        }
    }
}

impl Visitor for Walker {
    type Break = Class;

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<Class> {
        if let Statement::Insert(insert) = statement {
            if insert.settings.is_some() {
                return self.see(Class::Forbidden("a SETTINGS clause".into(), SETTINGS));
            }
        }
        self.see(classify_kind(statement))
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<Class> {
        self.see(classify_query(query))
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<Class> {
        match relation.0.last().and_then(|p| p.as_ident()) {
            Some(ident) => self.see(relation_class(&ident.value, ident.quote_style)),
            None => ControlFlow::Continue(()),
        }
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
        let Some(name) = function.map(last_part) else {
            return ControlFlow::Continue(());
        };
        if self.dialect == Dialect::ClickHouse {
            return self.see(clickhouse_table_function(&name));
        }
        if self.allow_list && !super::engine::duckdb_allows(&name) {
            return self.see(functions::unknown(&name));
        }
        match function_class(&name, true) {
            Some(class) => self.see(class),
            None if self.dialect == Dialect::Postgres => {
                self.see(functions::verdict(self.dialect, &name))
            }
            None => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<Class> {
        if let Expr::Function(function) = expr {
            let name = last_part(&function.name);
            if self.dialect == Dialect::ClickHouse {
                if let Some((f, why)) = CLICKHOUSE_FUNCTIONS.iter().find(|(f, _)| *f == name) {
                    return self.see(Class::Forbidden(format!("{f}()"), why));
                }
            }
            if let Some(class) = function_class(&name, false) {
                return self.see(class);
            }
            if self.allow_list && !super::engine::duckdb_allows(&name) {
                return self.see(functions::unknown(&name));
            }
            // DuckDB's queries are held to its list from its own parse
            // tree (`engine.rs`); every other engine's here.
            if self.dialect != Dialect::DuckDb {
                return self.see(functions::verdict(self.dialect, &name));
            }
        }
        ControlFlow::Continue(())
    }
}

/// A table name that is really a file (DuckDB's replacement scans:
/// `FROM 'x.csv'`, `FROM data/x.parquet`) is a file read.
pub(super) fn relation_class(name: &str, quote: Option<char>) -> Class {
    let lower = name.to_ascii_lowercase();
    let file_like = quote == Some('\'')
        || lower.contains('/')
        || lower.contains('\\')
        || lower.contains("://")
        || lower.starts_with('~')
        || FILE_SUFFIXES.iter().any(|s| lower.ends_with(s));
    if file_like {
        Class::Forbidden(format!("reading the file '{name}'"), OUTSIDE_FILES)
    } else {
        Class::Read
    }
}

/// ClickHouse's table functions that stay inside the source: they make
/// rows from their arguments. Every other one is refused — those that read
/// files, URLs, object stores or other servers by name, those that run
/// programs, and those that pick tables by a pattern or a string (`merge`,
/// `cluster`), which no name check could follow.
const CLICKHOUSE_TABLE_FUNCTIONS: &[&str] = &[
    "numbers",
    "numbers_mt",
    "zeros",
    "zeros_mt",
    "generate_series",
    "generaterandom",
    "values",
    "null",
    "view",
];

/// ClickHouse functions refused wherever they appear (lowercase), with why.
const CLICKHOUSE_FUNCTIONS: &[(&str, &str)] = &[
    ("file", OUTSIDE_FILES),
    ("filecluster", OUTSIDE_FILES),
    ("url", OUTSIDE_DB),
    ("urlcluster", OUTSIDE_DB),
    ("s3", OUTSIDE_DB),
    ("s3cluster", OUTSIDE_DB),
    ("gcs", OUTSIDE_DB),
    ("oss", OUTSIDE_DB),
    ("cosn", OUTSIDE_DB),
    ("hdfs", OUTSIDE_DB),
    ("hdfscluster", OUTSIDE_DB),
    ("azureblobstorage", OUTSIDE_DB),
    ("azureblobstoragecluster", OUTSIDE_DB),
    ("iceberg", OUTSIDE_DB),
    ("deltalake", OUTSIDE_DB),
    ("hudi", OUTSIDE_DB),
    ("remote", OUTSIDE_DB),
    ("remotesecure", OUTSIDE_DB),
    ("mysql", OUTSIDE_DB),
    ("postgresql", OUTSIDE_DB),
    ("mongodb", OUTSIDE_DB),
    ("redis", OUTSIDE_DB),
    ("sqlite", OUTSIDE_DB),
    ("jdbc", OUTSIDE_DB),
    ("odbc", OUTSIDE_DB),
    ("executable", CODE),
    ("executablepool", CODE),
    ("catboostpool", OUTSIDE_FILES),
    ("modelevaluate", CODE),
    ("catboostevaluate", CODE),
    (
        "input",
        "it reads data sent with the request, not the source's tables",
    ),
    (
        "cluster",
        "it reads any table named in a string, on every server of a cluster",
    ),
    (
        "clusterallreplicas",
        "it reads any table named in a string, on every server of a cluster",
    ),
    (
        "merge",
        "it reads the tables a pattern picks, which the gate cannot check",
    ),
];

/// The verdict on a ClickHouse table function (`FROM name(…)`), by its
/// lowercase name.
fn clickhouse_table_function(name: &str) -> Class {
    if let Some((f, why)) = CLICKHOUSE_FUNCTIONS.iter().find(|(f, _)| *f == name) {
        return Class::Forbidden(format!("the table function {f}()"), why);
    }
    if CLICKHOUSE_TABLE_FUNCTIONS.contains(&name) {
        Class::Read
    } else {
        Class::Forbidden(
            format!("the table function {name}()"),
            "aiq allows only table functions known to stay inside the source",
        )
    }
}

/// What ClickHouse's tokens alone refuse: `INTO OUTFILE` and `FROM
/// INFILE` (sqlparser does not read them; files on the machine), a block
/// comment inside a block comment (sqlparser nests them, older servers do
/// not, so the two would read different statements), and dollar-quoted
/// text (newer servers read it as a string, older ones do not).
pub(super) fn clickhouse_tokens(text: &str) -> Option<Refusal> {
    let tokens = Tokenizer::new(&ClickHouseDialect {}, text)
        .tokenize()
        .ok()?;
    let mut words: Vec<String> = Vec::new();
    for t in &tokens {
        match t {
            Token::Whitespace(Whitespace::MultiLineComment(c)) if c.contains("/*") => {
                return Some(Refusal::Forbidden {
                    kind: "a comment inside a comment".into(),
                    why: "ClickHouse releases read nested comments differently, so the check could see another statement than the server",
                })
            }
            Token::DollarQuotedString(_) => {
                return Some(Refusal::Forbidden {
                    kind: "dollar-quoted text".into(),
                    why: "ClickHouse releases read it differently, so the check could see another statement than the server",
                })
            }
            Token::Whitespace(_) => {}
            Token::Word(w) if w.quote_style.is_none() => words.push(w.value.to_ascii_lowercase()),
            _ => words.push(String::new()),
        }
    }
    words
        .windows(2)
        .find_map(|pair| match (pair[0].as_str(), pair[1].as_str()) {
            ("into", "outfile") | ("from", "infile") => Some(Refusal::Forbidden {
                kind: format!("{} {}", pair[0].to_uppercase(), pair[1].to_uppercase()),
                why: OUTSIDE_FILES,
            }),
            _ => None,
        })
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
pub(super) fn statement_kind(statement: &Statement) -> String {
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
