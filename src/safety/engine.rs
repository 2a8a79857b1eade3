//! The engine's own reading of a statement (SPEC §4.2, "The engine decides
//! what a statement is") and the policy over it. Each engine turns text into
//! an [`EngineReading`] next to its connection (`source/duckdb_gate`,
//! `source/sqlite`); what is allowed, and the messages, are pure functions
//! here, shared by every engine.
//!
//! sqlparser's verdict is the fast first pass; the engine's reading has the
//! last word: a statement the engine sees as several is refused, a write
//! the engine sees is a write, and a read-only query the engine accepts is
//! not refused only because sqlparser cannot read it.

use super::classify::Class;
use super::{Dialect, Hidden, Policy, Refusal};

/// One text as the engine's own parser reads it (SPEC §4.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineReading {
    /// Statements the engine's parser found in the text.
    pub statements: usize,
    /// The one statement that will run, as the engine extracted it.
    pub statement: String,
    /// The engine's own verdict: it changes data (SQLite:
    /// `!sqlite3_stmt_readonly`; DuckDB: its statement type).
    pub writes: bool,
    /// The kind in the engine's words, for messages ("SELECT", "PRAGMA",
    /// "CREATE TABLE"…).
    pub kind: String,
    /// Tables and views it reads, lowercased (None when the engine cannot say).
    pub reads: Option<Vec<String>>,
    /// Functions it calls (table functions at least), lowercased.
    pub calls: Vec<String>,
    /// Of `calls`, those called as table functions (`FROM f(…)`, `CALL f(…)`,
    /// a `PRAGMA`), lowercased; only these are held to the allow-list.
    pub table_calls: Vec<String>,
    /// The engine read it as a query (SELECT and the forms it turns into
    /// one: SHOW, DESCRIBE, SUMMARIZE, PIVOT, CALL of a table function,
    /// EXPLAIN of a query): with `writes` false, it only reads.
    pub query: bool,
    /// Statements the engine adds of its own before this one (DuckDB makes
    /// a type of a `PIVOT`'s values when it has no `IN` list).
    pub added: usize,
    /// It names views or macros whose expansion the engine could not show:
    /// what they reach is unknown, so it is refused while tables are hidden.
    pub opaque: bool,
}

const ENGINE_STATE: &str =
    "it changes the engine's state or settings, which guard read-only access";
const RUNS_TEXT: &str = "it runs SQL given as text, which the gate cannot check";
const OUTSIDE: &str = "it reads files or databases outside the data source";
const UNKNOWN: &str =
    "aiq only runs the table functions and pragmas it knows to be harmless; query the tables instead";
pub(super) const UNKNOWN_FUNCTION: &str =
    "aiq only runs the engine's own functions that it knows read nothing by name and change nothing; a macro or a function it does not know could read hidden tables or files";

/// Whether DuckDB may run the function `name` (lowercase) in a query: one
/// of its built-in scalar or aggregate functions on the allow-list, or a
/// table function on [`DUCKDB_TABLE_FUNCTIONS`].
pub fn duckdb_allows(name: &str) -> bool {
    super::functions::duckdb(name) || DUCKDB_TABLE_FUNCTIONS.contains(&name)
}

/// DuckDB table functions known to only read the source or compute values.
/// Anything else called as a table function is refused: an unknown
/// function is not known to be harmless.
const DUCKDB_TABLE_FUNCTIONS: &[&str] = &[
    "range",
    "generate_series",
    "unnest",
    "repeat",
    "repeat_row",
    "json_each",
    "json_tree",
    "pragma_table_info",
    "pragma_show",
    "pragma_version",
    "pragma_platform",
    "pragma_database_size",
    "pragma_show_tables",
    "pragma_show_tables_expanded",
    "pragma_show_databases",
    "pragma_collations",
    "pragma_functions",
    "pragma_metadata_info",
    "pragma_user_agent",
    "show_tables",
    "show_tables_expanded",
    "show_databases",
    "duckdb_tables",
    "duckdb_columns",
    "duckdb_views",
    "duckdb_schemas",
    "duckdb_databases",
    "duckdb_constraints",
    "duckdb_indexes",
    "duckdb_types",
    "duckdb_functions",
    "duckdb_keywords",
    "duckdb_sequences",
    "duckdb_dependencies",
    "test_all_types",
];

/// Functions that change the engine's state, run SQL given as text, or
/// read outside the source, refused wherever they appear and in every mode.
const DENIED_FUNCTIONS: &[(&str, &str)] = &[
    ("enable_logging", ENGINE_STATE),
    ("disable_logging", ENGINE_STATE),
    ("truncate_duckdb_logs", ENGINE_STATE),
    ("enable_profiling", ENGINE_STATE),
    ("disable_profiling", ENGINE_STATE),
    ("checkpoint", ENGINE_STATE),
    ("force_checkpoint", ENGINE_STATE),
    ("write_log", ENGINE_STATE),
    ("enable_peg_parser", ENGINE_STATE),
    ("disable_peg_parser", ENGINE_STATE),
    ("json_execute_serialized_sql", RUNS_TEXT),
    ("query", RUNS_TEXT),
    ("query_table", RUNS_TEXT),
    ("read_duckdb", OUTSIDE),
    ("sqlite_query", OUTSIDE),
    ("sqlite_scan", OUTSIDE),
    ("parquet_bloom_probe", OUTSIDE),
    ("parquet_full_metadata", OUTSIDE),
    ("getenv", "it reads the environment, where secrets live"),
    (
        "pragma_storage_info",
        "it shows stored values outside any query",
    ),
];

/// Functions that change data from inside a query (sequences).
const WRITING_FUNCTIONS: &[&str] = &["nextval", "setval"];

/// Table functions that describe one table given by name: the name is what
/// they read ([`EngineReading::reads`]).
pub const TABLE_NAMING_FUNCTIONS: &[&str] = &["pragma_table_info", "pragma_show", "table_info"];

/// Catalog listings, refused while tables are hidden (SPEC §4.3).
fn lists_catalog(name: &str) -> bool {
    name.starts_with("duckdb_")
        || name.starts_with("pragma_show_tables")
        || name.starts_with("show_")
        || matches!(
            name,
            "pragma_table_list" | "pragma_database_list" | "pragma_metadata_info"
        )
}

/// The verdict on what the engine says a statement calls: the worst of
/// its functions (refused, a write, or nothing to say).
fn calls_class(reading: &EngineReading, dialect: Dialect) -> Option<Class> {
    for name in &reading.calls {
        if let Some((f, why)) = DENIED_FUNCTIONS.iter().find(|(f, _)| f == name) {
            return Some(Class::Forbidden(format!("{f}()"), why));
        }
    }
    if dialect == Dialect::DuckDb {
        if let Some(f) = reading.calls.iter().find(|f| !duckdb_allows(f)) {
            return Some(Class::Forbidden(
                format!("the function {f}()"),
                UNKNOWN_FUNCTION,
            ));
        }
        let unknown = reading
            .table_calls
            .iter()
            .find(|f| !DUCKDB_TABLE_FUNCTIONS.contains(&f.as_str()));
        if let Some(f) = unknown {
            return Some(Class::Forbidden(
                format!("the table function {f}()"),
                UNKNOWN,
            ));
        }
    }
    if dialect == Dialect::Sqlite {
        // SQLite's pragma table functions run the pragma: one that is not
        // a report (`pragma_optimize`) writes.
        let writing = reading.table_calls.iter().find(|f| {
            f.strip_prefix("pragma_")
                .is_some_and(|p| !super::pragma_only_reads(p, true))
        });
        if let Some(f) = writing {
            return Some(Class::Write(format!("{f}()")));
        }
    }
    reading
        .calls
        .iter()
        .find(|f| WRITING_FUNCTIONS.contains(&f.as_str()))
        .map(|f| Class::Write(format!("{f}()")))
}

/// The class of a statement given sqlparser's verdict (`first`) and the
/// engine's reading: the engine has the last word on what is one
/// statement, on writes and on what it calls; sqlparser's refusal of a
/// read-only query the engine accepts does not stand on its own.
pub(super) fn judge(
    first: Result<(Class, String), Refusal>,
    reading: &EngineReading,
    dialect: Dialect,
) -> Result<(Class, String), Refusal> {
    match reading.statements {
        0 => return Err(Refusal::Empty),
        1 => {}
        n => return Err(Refusal::Multiple(n)),
    }
    // The first pass's refusals carry the clearest messages.
    if let Ok((Class::Forbidden(kind, why), k)) = first {
        return Ok((Class::Forbidden(kind, why), k));
    }
    if let Some(class @ Class::Forbidden(..)) = calls_class(reading, dialect) {
        return Ok((class, reading.kind.clone()));
    }
    let engine_reads = reading.query && !reading.writes;
    let (class, kind) = match first {
        Ok((Class::Read, kind)) if reading.writes => {
            (Class::Write(engine_kind(reading, &kind)), kind)
        }
        Ok((Class::Write(_), kind)) if engine_reads => (Class::Read, kind),
        Ok(verdict) => verdict,
        // sqlparser cannot read it (or splits it otherwise): the engine's
        // reading of one read-only query decides.
        Err(Refusal::Unparsable { .. } | Refusal::Multiple(_)) if engine_reads => {
            (Class::Read, reading.kind.clone())
        }
        // The engine runs statements of its own first, which no reading
        // covers: say how to write it so that one statement does it all.
        Err(Refusal::Unparsable { dialect, .. }) if reading.added > 0 => {
            return Err(Refusal::Unparsable {
                dialect,
                message: "DuckDB runs a statement of its own first for a PIVOT without an IN list \
                          inside a query, which aiq cannot check; name the values: \
                          PIVOT t ON column IN ('a', 'b') USING …"
                    .into(),
            })
        }
        Err(refusal) => return Err(refusal),
    };
    match (class, calls_class(reading, dialect)) {
        (Class::Read, Some(write @ Class::Write(_))) => Ok((write, kind)),
        (class, _) => Ok((class, kind)),
    }
}

fn engine_kind(reading: &EngineReading, fallback: &str) -> String {
    if reading.kind.is_empty() || reading.kind == "SELECT" {
        format!("{fallback} (the engine says it changes data)")
    } else {
        reading.kind.clone()
    }
}

/// Refuses a reading that names a hidden table, or lists the catalog
/// while tables are hidden.
pub(super) fn check_hidden(reading: &EngineReading, policy: &Policy) -> Result<(), Refusal> {
    let Some(hidden) = &policy.hidden else {
        return Ok(());
    };
    check_reads(reading, hidden)?;
    if reading.opaque {
        return Err(Refusal::Forbidden {
            kind: "a view or macro whose tables the engine cannot show".into(),
            why: "some tables of this source are hidden from aiq, and it could read them",
        });
    }
    if let Some(f) = reading.table_calls.iter().find(|f| lists_catalog(f)) {
        return Err(Refusal::Forbidden {
            kind: format!("reading the engine's catalog ({f})"),
            why: "some tables of this source are hidden from aiq, and the catalog would list them",
        });
    }
    Ok(())
}

fn check_reads(reading: &EngineReading, hidden: &Hidden) -> Result<(), Refusal> {
    for table in reading.reads.iter().flatten() {
        if super::hidden::is_catalog(table) {
            return Err(Refusal::Forbidden {
                kind: format!("reading the engine's catalog ({table})"),
                why: "some tables of this source are hidden from aiq, and the catalog would list them",
            });
        }
        if let Some(stem) = hidden
            .hidden_by_path(table)
            .filter(|_| !hidden.hides(table))
        {
            return Err(Refusal::Hidden { table: stem });
        }
        if hidden.hides(table) {
            // Reached through a view or macro: its name stays unsaid.
            let bare = table.rsplit('.').next().unwrap_or(table);
            if !reading.statement.to_lowercase().contains(bare) {
                return Err(Refusal::HiddenBehind);
            }
            return Err(Refusal::Hidden {
                table: table.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(calls: &[&str], table_calls: &[&str], reads: &[&str]) -> EngineReading {
        EngineReading {
            statements: 1,
            statement: "…".into(),
            writes: false,
            kind: "SELECT".into(),
            reads: Some(reads.iter().map(|s| s.to_string()).collect()),
            calls: calls.iter().map(|s| s.to_string()).collect(),
            table_calls: table_calls.iter().map(|s| s.to_string()).collect(),
            query: true,
            added: 0,
            opaque: false,
        }
    }

    fn unparsable() -> Result<(Class, String), Refusal> {
        Err(Refusal::Unparsable {
            dialect: Dialect::DuckDb,
            message: "x".into(),
        })
    }

    #[test]
    fn several_statements_as_the_engine_reads_them_are_refused() {
        let reading = EngineReading {
            statements: 2,
            ..query(&[], &[], &[])
        };
        let first = Ok((Class::Read, "SELECT".into()));
        assert_eq!(
            judge(first, &reading, Dialect::DuckDb),
            Err(Refusal::Multiple(2))
        );
    }

    #[test]
    fn engine_state_and_unknown_table_functions_are_refused() {
        for (calls, table_calls) in [
            (&["enable_logging"][..], &["enable_logging"][..]),
            (&["write_log"], &[]),
            (&["checkpoint"], &["checkpoint"]),
            (
                &["json_execute_serialized_sql"],
                &["json_execute_serialized_sql"],
            ),
            (&["some_new_function"], &["some_new_function"]),
        ] {
            let r = judge(
                Ok((Class::Read, "SELECT".into())),
                &query(calls, table_calls, &[]),
                Dialect::DuckDb,
            );
            assert!(
                matches!(r, Ok((Class::Forbidden(..), _))),
                "{calls:?}: {r:?}"
            );
        }
    }

    #[test]
    fn a_read_only_query_the_engine_accepts_is_not_refused_by_sqlparser_alone() {
        let r = judge(
            unparsable(),
            &query(&["list_apply"], &[], &["t"]),
            Dialect::DuckDb,
        );
        assert_eq!(r, Ok((Class::Read, "SELECT".into())));
        let call = EngineReading {
            kind: "CALL".into(),
            ..query(&["pragma_table_info"], &["pragma_table_info"], &["t"])
        };
        let r = judge(
            Ok((Class::Write("CALL".into()), "CALL".into())),
            &call,
            Dialect::DuckDb,
        );
        assert_eq!(r, Ok((Class::Read, "CALL".into())));
    }

    #[test]
    fn what_the_engine_says_writes_is_a_write() {
        let reading = EngineReading {
            writes: true,
            query: false,
            ..query(&[], &[], &[])
        };
        let r = judge(
            Ok((Class::Read, "SELECT".into())),
            &reading,
            Dialect::Sqlite,
        );
        assert!(matches!(r, Ok((Class::Write(_), _))), "{r:?}");
        // Not a query to the engine: sqlparser's refusal stands.
        assert!(judge(unparsable(), &reading, Dialect::Sqlite).is_err());
    }

    #[test]
    fn hidden_reads_and_catalogs_are_refused_while_tables_are_hidden() {
        let policy = Policy {
            allow_write: false,
            hidden: Some(std::sync::Arc::new(Hidden::new(
                ["payroll".to_string()],
                vec![],
            ))),
            functions: None,
            vouched: Vec::new(),
            ..Policy::default()
        };
        let named = EngineReading {
            statement: "SELECT * FROM payroll".into(),
            ..query(&[], &[], &["payroll"])
        };
        let r = check_hidden(&named, &policy);
        assert!(matches!(r, Err(Refusal::Hidden { .. })), "{r:?}");
        // Reached through a view or macro: refused without its name.
        let r = check_hidden(&query(&[], &[], &["payroll"]), &policy);
        assert_eq!(r, Err(Refusal::HiddenBehind));
        assert!(!Refusal::HiddenBehind.to_string().contains("payroll"));
        let r = check_hidden(&query(&[], &["duckdb_tables"], &[]), &policy);
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{r:?}");
        let r = check_hidden(&query(&[], &[], &["information_schema.tables"]), &policy);
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{r:?}");
        assert_eq!(check_hidden(&query(&[], &[], &["orders"]), &policy), Ok(()));
        assert_eq!(
            check_hidden(&query(&[], &["duckdb_tables"], &[]), &Policy::new(false)),
            Ok(())
        );
    }
}
