//! Which functions a statement may call (SPEC §4.2, "Behind a name"): the
//! engine's built-ins on its allow-list (`*_functions.txt`, each made from
//! the engine's own catalog, less those that read by a name given as a
//! string, change lasting state or show the server's files); the
//! database's own functions as its catalog describes them; and the names
//! the user vouches for with `allow_functions`. Anything else is refused.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::classify::Class;
use super::Dialect;

type List = OnceLock<HashSet<&'static str>>;

fn listed(list: &'static List, text: &'static str, name: &str) -> bool {
    list.get_or_init(|| super::allow_list(text)).contains(name)
}

/// DuckDB's built-in scalar, aggregate and macro functions.
pub(super) fn duckdb(name: &str) -> bool {
    static LIST: List = OnceLock::new();
    listed(&LIST, include_str!("duckdb_functions.txt"), name)
}

fn postgres(name: &str) -> bool {
    static LIST: List = OnceLock::new();
    listed(&LIST, include_str!("postgres_functions.txt"), name)
}

fn mysql(name: &str) -> bool {
    static LIST: List = OnceLock::new();
    listed(&LIST, include_str!("mysql_functions.txt"), name)
}

/// Whether SQLite may run its function `name` (any case): SQLite's own
/// authorizer asks this for every call while a statement is prepared.
pub fn sqlite_allows(name: &str) -> bool {
    static LIST: List = OnceLock::new();
    listed(
        &LIST,
        include_str!("sqlite_functions.txt"),
        &name.to_ascii_lowercase(),
    )
}

/// ClickHouse's aggregate combinators: `sumIf`, `uniqArrayIf`,
/// `avgState`… are the listed aggregate with these suffixes.
const CLICKHOUSE_COMBINATORS: &[&str] = &[
    "mergestate",
    "simplestate",
    "ordefault",
    "resample",
    "distinct",
    "foreach",
    "argmin",
    "argmax",
    "ornull",
    "tuple",
    "state",
    "null",
    "merge",
    "array",
    "map",
    "if",
];

fn clickhouse(name: &str) -> bool {
    static LIST: List = OnceLock::new();
    static AGGREGATES: List = OnceLock::new();
    let text = include_str!("clickhouse_functions.txt");
    if listed(&LIST, text, name) {
        return true;
    }
    // The aggregates are the names after the `# aggregates:` line.
    let aggregates = AGGREGATES.get_or_init(|| {
        text.split_once("# aggregates:")
            .map(|(_, rest)| super::allow_list(rest))
            .unwrap_or_default()
    });
    let mut base = name;
    while let Some(shorter) = CLICKHOUSE_COMBINATORS
        .iter()
        .find_map(|c| base.strip_suffix(c).filter(|b| !b.is_empty()))
    {
        if aggregates.contains(shorter) {
            return true;
        }
        base = shorter;
    }
    false
}

/// Whether `name` (lowercase) is a built-in of `dialect` on its allow-list.
pub(super) fn builtin(dialect: Dialect, name: &str) -> bool {
    match dialect {
        Dialect::DuckDb => duckdb(name),
        Dialect::Postgres => postgres(name),
        Dialect::MySql => mysql(name),
        Dialect::ClickHouse => clickhouse(name),
        Dialect::Sqlite => sqlite_allows(name),
    }
}

/// What the policy being checked says of functions, for the walk on
/// this thread: the database's own functions, the names the user vouches
/// for, and whether tables are hidden. Set by the gate for one
/// statement's first pass.
pub(super) struct Functions;

#[derive(Default)]
struct Context {
    user: Option<std::sync::Arc<super::UserFunctions>>,
    vouched: Vec<String>,
    hiding: bool,
}

thread_local! {
    static CONTEXT: std::cell::RefCell<Context> = std::cell::RefCell::new(Context::default());
}

impl Functions {
    /// Holds `policy`'s functions for the walks on this thread until dropped.
    pub(super) fn set(policy: &super::Policy) -> Functions {
        CONTEXT.with(|c| {
            *c.borrow_mut() = Context {
                user: policy.functions.clone(),
                vouched: policy.vouched.clone(),
                hiding: policy.hidden.is_some(),
            }
        });
        Functions
    }
}

impl Drop for Functions {
    fn drop(&mut self) {
        CONTEXT.with(|c| *c.borrow_mut() = Context::default());
    }
}

/// The verdict on calling `dialect`'s function `name` (lowercase, not
/// refused or a write by name): the database's own function as its
/// catalog describes it, else a built-in on the allow-list, else one the
/// user vouches for.
pub(super) fn verdict(dialect: Dialect, name: &str) -> Class {
    CONTEXT.with(|c| verdict_in(&c.borrow(), dialect, name))
}

fn verdict_in(context: &Context, dialect: Dialect, name: &str) -> Class {
    let user = context.user.as_deref();
    let vouched = context.vouched.iter().any(|v| v == name);
    if let Some(volatile) = user.and_then(|u| u.functions.get(name)) {
        return if context.hiding && !vouched {
            Class::Forbidden(
                format!("the function {name}()"),
                "it is defined in the database, and some tables of this source are hidden from aiq: what its body reads is not checked; to vouch for it, name it in allow_functions, in [privacy] or the source's table of config.toml",
            )
        } else if *volatile {
            Class::Write(format!("{name}() (the database marks it as changing data)"))
        } else {
            Class::Read
        };
    }
    if builtin(dialect, name) || vouched {
        Class::Read
    } else {
        unknown(name)
    }
}

/// A function that is on no allow-list.
pub(super) fn unknown(name: &str) -> Class {
    Class::Forbidden(
        format!("the function {name}()"),
        super::engine::UNKNOWN_FUNCTION,
    )
}
