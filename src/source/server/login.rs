//! What a server source's login may do on its own, beyond what aiq asks
//! of it (SPEC §4.2: the login's privileges are the strongest layer):
//! whether it is all-powerful on the server, whether it can read every
//! change made to its tables, and which of the tables the source hides
//! it could read. `aiq doctor` reports it.
//!
//! Each engine answers with catalog queries of aiq's own (run as its
//! `internal` reads): the SQL and the reading of the answers are here, one
//! pair per engine. They return privilege facts only — never a row of a
//! hidden table: where the server has no function that answers (ClickHouse),
//! the question is a `SELECT 1 … LIMIT 0`, which the server refuses or
//! answers with no row.

use super::{text, Collect};
use crate::schema::Table;
use crate::source::{table_ref, ExecError, Value};

/// What a server source's login may do (see [`crate::source::DataSource::login_privileges`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoginPrivileges {
    /// The login as the server names it (`reader`, `reader@%`).
    pub login: String,
    /// What lets the login do anything on the server, as a phrase about
    /// it (`is a superuser`, `has SUPER ON *.*`); `None`: nothing.
    pub superuser: Option<String>,
    /// What lets it read every change made to every table
    /// (`has REPLICATION`); `None`: nothing.
    pub replication: Option<String>,
    /// The hidden tables it may read, as the catalog names them, in the
    /// order they were asked about.
    pub reads_hidden: Vec<String>,
}

/// Runs one of aiq's own catalog queries.
type Run<'a> = &'a dyn Fn(&str) -> Result<Collect, ExecError>;

fn cell(row: &[Value], i: usize) -> Option<String> {
    row.get(i).and_then(text)
}

fn is_true(row: &[Value], i: usize) -> bool {
    match row.get(i) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Int(n)) => *n != 0,
        _ => false,
    }
}

/// PostgreSQL: `rolsuper` and `rolreplication` of the current user, the
/// superuser roles it may `SET ROLE` to, and the hidden tables it has
/// `SELECT` on (on the table or any of its columns, in a schema it may use).
pub(crate) fn postgres(run: Run<'_>, hidden: &[Table]) -> Result<LoginPrivileges, ExecError> {
    let facts = run("SELECT current_user::text, r.rolsuper, r.rolreplication, \
           (SELECT string_agg(quote_ident(s.rolname), ', ' ORDER BY s.rolname) FROM pg_roles s \
            WHERE s.rolsuper AND s.oid <> r.oid AND NOT r.rolsuper \
              AND pg_has_role(r.oid, s.oid, 'MEMBER')) \
         FROM pg_roles r WHERE r.rolname = current_user")?;
    let row = facts.rows.first().cloned().unwrap_or_default();
    let superuser = if is_true(&row, 1) {
        Some("is a superuser".to_string())
    } else {
        cell(&row, 3).map(|roles| format!("may SET ROLE to the superuser {roles}"))
    };
    let mut out = LoginPrivileges {
        login: cell(&row, 0).unwrap_or_default(),
        superuser,
        replication: is_true(&row, 2).then(|| "has REPLICATION".to_string()),
        reads_hidden: Vec::new(),
    };
    if hidden.is_empty() {
        return Ok(out);
    }
    let names: Vec<String> = hidden
        .iter()
        .map(|t| super::postgres::quote_literal(&table_ref(t)))
        .collect();
    // `to_regclass` is NULL for a table dropped since the catalog was read.
    let readable = run(&format!(
        "SELECT t.n::int8 FROM unnest(ARRAY[{}]::text[]) WITH ORDINALITY AS t(name, n) \
         JOIN pg_class c ON c.oid = to_regclass(t.name) \
         WHERE has_any_column_privilege(c.oid, 'SELECT') \
           AND has_schema_privilege(c.relnamespace, 'USAGE') \
         ORDER BY t.n",
        names.join(", ")
    ))?;
    out.reads_hidden = by_position(&readable, hidden);
    Ok(out)
}

/// The tables of `hidden` at the 1-based positions in the first column.
fn by_position(found: &Collect, hidden: &[Table]) -> Vec<String> {
    found
        .rows
        .iter()
        .filter_map(|r| match r.first() {
            Some(Value::Int(n)) if *n >= 1 => hidden.get(*n as usize - 1),
            _ => None,
        })
        .map(|t| t.name.clone())
        .collect()
}

/// Global privileges that let a MySQL or MariaDB login do anything.
const MYSQL_SUPER: &[&str] = &["ALL", "ALL PRIVILEGES", "SUPER"];
/// Global privileges that let it read the binary log, every change to
/// every table: as a replica, or with `SHOW BINLOG EVENTS` (MariaDB's
/// `BINLOG MONITOR`).
const MYSQL_REPLICATION: &[&str] = &["REPLICATION SLAVE", "REPLICATION REPLICA", "BINLOG MONITOR"];

/// MySQL and MariaDB: the global privileges `SHOW GRANTS` lists for the
/// session (the login's own, its enabled roles' and `PUBLIC`'s on
/// MariaDB), and the hidden tables whose columns the server marks
/// `select` for the session in `information_schema.COLUMNS` — grants on
/// the server, database, table or a column, through a role or `PUBLIC`.
/// A table the login has no privilege on at all is not in the catalog it
/// reads, so it is never asked about.
pub(crate) fn mysql(run: Run<'_>, hidden: &[Table]) -> Result<LoginPrivileges, ExecError> {
    let user = run("SELECT CURRENT_USER()")?;
    let grants = run("SHOW GRANTS")?;
    let global = global_privileges(grants.rows.iter().filter_map(|r| cell(r, 0)));
    let first = |list: &[&str]| {
        global
            .iter()
            .find(|p| list.contains(&p.as_str()))
            .map(|p| format!("has {p} ON *.*"))
    };
    let mut out = LoginPrivileges {
        login: user
            .rows
            .first()
            .and_then(|r| cell(r, 0))
            .unwrap_or_default(),
        superuser: first(MYSQL_SUPER),
        replication: first(MYSQL_REPLICATION),
        reads_hidden: Vec::new(),
    };
    if hidden.is_empty() {
        return Ok(out);
    }
    let names: Vec<String> = hidden
        .iter()
        .map(|t| super::mysql::quote_string(&t.name))
        .collect();
    let readable = run(&format!(
        "SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({}) \
           AND FIND_IN_SET('select', PRIVILEGES) > 0",
        names.join(", ")
    ))?;
    // The comparison above ignores case; the names must match exactly.
    let found: Vec<String> = readable.rows.iter().filter_map(|r| cell(r, 0)).collect();
    out.reads_hidden = hidden
        .iter()
        .filter(|t| found.contains(&t.name))
        .map(|t| t.name.clone())
        .collect();
    Ok(out)
}

/// The privileges `SHOW GRANTS` lines give `ON *.*`, upper case:
/// `GRANT SELECT, SUPER ON *.* TO …` gives `SELECT` and `SUPER`; MySQL's
/// dynamic privileges come comma-separated without spaces.
fn global_privileges(lines: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        let Some(rest) = line.strip_prefix("GRANT ") else {
            continue;
        };
        let Some((privileges, _)) = rest.split_once(" ON *.* TO ") else {
            continue;
        };
        for p in privileges.split(',') {
            let p = p.trim().to_ascii_uppercase();
            if !p.is_empty() && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Hidden ClickHouse tables asked about in one query, which stays well
/// inside the server's `max_query_size`.
const PROBED_AT_ONCE: usize = 100;

/// ClickHouse: `profile_readonly` is the login's own `readonly` setting,
/// read before aiq set any (`0`: its profile lets it write and change
/// every setting — on a server without SQL users and grants, such as
/// 18.16, anything a client can do). A hidden table is readable when the
/// server answers `SELECT 1 FROM db.t LIMIT 0`: a hundred at once first
/// (a release without table grants answers every one), then one at a
/// time where that is refused. ClickHouse has no replication privilege a
/// client could use to read data.
pub(crate) fn clickhouse(
    run: Run<'_>,
    login: &str,
    profile_readonly: &str,
    database: &str,
    hidden: &[Table],
) -> LoginPrivileges {
    let probe = |t: &Table| {
        format!(
            "SELECT 1 FROM {}.{} LIMIT 0",
            crate::source::quote_ident(database),
            crate::source::quote_ident(&t.name)
        )
    };
    let mut reads_hidden = Vec::new();
    for some in hidden.chunks(PROBED_AT_ONCE) {
        let all: Vec<String> = some.iter().map(probe).collect();
        let readable: Vec<&Table> = if run(&all.join(" UNION ALL ")).is_ok() {
            some.iter().collect()
        } else {
            some.iter().filter(|t| run(&probe(t)).is_ok()).collect()
        };
        reads_hidden.extend(readable.into_iter().map(|t| t.name.clone()));
    }
    LoginPrivileges {
        login: login.to_string(),
        superuser: (profile_readonly == "0")
            .then(|| "is not read-only on the server (readonly = 0 in its settings)".to_string()),
        replication: None,
        reads_hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_privileges_come_from_grants_on_everything() {
        let lines = [
            "GRANT SELECT, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `r`@`%` IDENTIFIED BY PASSWORD '*X'",
            "GRANT `payrole` TO `r`@`%`",
            "GRANT SELECT ON `shop`.`payroll` TO `r`@`%`",
            "GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION",
            "GRANT SUPER ON *.* TO `superrole`",
            "GRANT APPLICATION_PASSWORD_ADMIN,AUDIT_ADMIN ON *.* TO `u`@`%`",
        ];
        let got = global_privileges(lines.iter().map(|l| l.to_string()));
        assert_eq!(
            got,
            [
                "SELECT",
                "REPLICATION SLAVE",
                "BINLOG MONITOR",
                "SUPER",
                "APPLICATION_PASSWORD_ADMIN",
                "AUDIT_ADMIN"
            ]
        );
        let all = global_privileges(
            ["GRANT ALL PRIVILEGES ON *.* TO `boss`@`%` WITH GRANT OPTION".to_string()].into_iter(),
        );
        assert_eq!(all, ["ALL PRIVILEGES"]);
    }

    fn table(name: &str) -> Table {
        Table {
            name: name.into(),
            ..Table::default()
        }
    }

    #[test]
    fn clickhouse_asks_one_table_at_a_time_only_when_refused() {
        let asked = std::cell::RefCell::new(Vec::new());
        let hidden = [table("payroll"), table("staff view")];
        let refuse_payroll = |sql: &str| {
            asked.borrow_mut().push(sql.to_string());
            match sql.contains("\"payroll\"") {
                true => Err(ExecError::Engine("Access denied".into())),
                false => Ok(Collect::default()),
            }
        };
        let got = clickhouse(&refuse_payroll, "reader", "1", "shop", &hidden);
        assert_eq!(got.reads_hidden, ["staff view"]);
        assert_eq!(got.superuser, None);
        assert_eq!(
            asked.borrow().as_slice(),
            [
                "SELECT 1 FROM \"shop\".\"payroll\" LIMIT 0 UNION ALL SELECT 1 FROM \"shop\".\"staff view\" LIMIT 0",
                "SELECT 1 FROM \"shop\".\"payroll\" LIMIT 0",
                "SELECT 1 FROM \"shop\".\"staff view\" LIMIT 0",
            ]
        );
        let everything = |_: &str| Ok(Collect::default());
        let got = clickhouse(&everything, "analyst", "0", "shop", &hidden);
        assert_eq!(got.reads_hidden, ["payroll", "staff view"]);
        assert!(got.superuser.unwrap().contains("readonly = 0"));
    }
}
