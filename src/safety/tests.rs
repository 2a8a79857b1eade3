//! Unit tests of the gate: reads, writes, forbidden things, PRAGMAs,
//! refusal messages.

use super::*;

fn verdict(sql: &str, dialect: Dialect) -> Result<Access, Refusal> {
    check(sql, dialect, &Policy::default()).map(|c| c.access())
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
        ("PRAGMA user_version = 7", "PRAGMA user_version = …"),
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
fn engine_configuration_is_refused_even_with_allow_write() {
    for sql in [
        "PRAGMA journal_mode = WAL",
        "PRAGMA query_only = 0",
        "pragma writable_schema = 1",
        "PRAGMA trusted_schema=1",
        "PRAGMA temp_store_directory = '/tmp'",
        "PRAGMA mmap_size = 1000000",
        "PRAGMA hard_heap_limit = 1",
        "PRAGMA cell_size_check(1)",
    ] {
        let r = check(sql, Dialect::Sqlite, &Policy::new(true));
        assert!(matches!(&r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
    }
    assert!(check(
        "PRAGMA enable_profiling",
        Dialect::DuckDb,
        &Policy::new(true)
    )
    .is_err());
    // What changes data, not the guard, is a write.
    for sql in [
        "PRAGMA optimize",
        "PRAGMA user_version = 3",
        "PRAGMA incremental_vacuum",
    ] {
        let r = check(sql, Dialect::Sqlite, &Policy::new(true)).map(|c| c.access());
        assert_eq!(r, Ok(Access::Write), "{sql}");
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
        // A Spider head's functions reach the shards past its read-only
        // transaction; postgres_fdw's close the links to other servers.
        (
            "SELECT spider_direct_sql('DELETE FROM t', '', 'srv \"s0\"')",
            Dialect::MySql,
        ),
        (
            "SELECT 1 FROM t WHERE `Spider_BG_Direct_SQL`('x', '', '') = 1",
            Dialect::MySql,
        ),
        ("SELECT spider_copy_tables('t', '0', '1')", Dialect::MySql),
        ("SELECT postgres_fdw_disconnect_all()", Dialect::Postgres),
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
    let p = Policy::new(true);
    let c = check("DELETE FROM t;", Dialect::Sqlite, &p).unwrap();
    assert_eq!(c.access(), Access::Write);
    assert_eq!(c.sql(), "DELETE FROM t");
    assert_eq!(c.kind(), "DELETE");
    assert!(check("ATTACH 'x.db' AS x", Dialect::Sqlite, &p).is_err());
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

#[test]
fn forbidden_things_inside_writes_stay_forbidden_with_allow_write() {
    let allow = Policy::new(true);
    for (sql, dialect) in [
        (
            "CREATE TABLE t AS SELECT * FROM read_csv('/etc/passwd')",
            Dialect::DuckDb,
        ),
        (
            "INSERT INTO t SELECT * FROM query('DROP TABLE u')",
            Dialect::DuckDb,
        ),
        (
            "INSERT INTO t SELECT * FROM glob('/etc/*')",
            Dialect::DuckDb,
        ),
        ("UPDATE t SET a = getenv('HOME')", Dialect::DuckDb),
        (
            "INSERT INTO t VALUES (load_extension('evil.so'))",
            Dialect::Sqlite,
        ),
        ("UPDATE t SET a = readfile('/etc/passwd')", Dialect::Sqlite),
        (
            "DELETE FROM t WHERE a IN (SELECT a FROM '/etc/passwd')",
            Dialect::DuckDb,
        ),
        (
            "CREATE VIEW v AS SELECT * FROM read_parquet('x.parquet')",
            Dialect::DuckDb,
        ),
        (
            "INSERT INTO t SELECT pg_read_file('/etc/passwd')",
            Dialect::Postgres,
        ),
        (
            "CREATE TABLE t AS SELECT load_file('/etc/passwd')",
            Dialect::MySql,
        ),
    ] {
        let r = check(sql, dialect, &allow);
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
    }
    // The same writes without the forbidden part pass with --allow-write.
    let r = check("CREATE TABLE t AS SELECT 1 AS a", Dialect::DuckDb, &allow);
    assert_eq!(r.map(|c| c.access()), Ok(Access::Write));
}

#[test]
fn sqlite_checking_pragmas_only_read() {
    for sql in [
        "PRAGMA integrity_check",
        "PRAGMA integrity_check(10)",
        "PRAGMA quick_check",
        "PRAGMA foreign_key_check",
        "PRAGMA foreign_key_check(orders)",
        "PRAGMA index_list(orders)",
        "PRAGMA table_xinfo(orders)",
    ] {
        assert_eq!(verdict(sql, Dialect::Sqlite), Ok(Access::Read), "{sql}");
    }
}

#[test]
fn clickhouse_reads_people_write_pass() {
    for sql in [
        "SELECT toStartOfMonth(ordered_at) AS m, count() FROM orders GROUP BY m ORDER BY m",
        "SELECT kind, countIf(amount > 2) AS n FROM events GROUP BY kind",
        "SELECT arrayMap(x -> x * 2, [1, 2, 3]) AS a",
        "SELECT name FROM customers WHERE name ILIKE 'a%' LIMIT 1 BY country",
        "SELECT * FROM events FINAL",
        "SELECT * FROM events PREWHERE id > 2 WHERE kind = 'buy'",
        "SELECT uniqExact(customer_id), argMax(id, total) FROM orders",
        "SELECT number FROM numbers(3)",
        "SHOW TABLES",
        "DESCRIBE TABLE orders",
    ] {
        assert_eq!(verdict(sql, Dialect::ClickHouse), Ok(Access::Read), "{sql}");
    }
}

#[test]
fn clickhouse_writes_and_outside_reaches_are_refused() {
    let writes = [
        "INSERT INTO orders VALUES (1, 1, 1, now(), 'x')",
        "ALTER TABLE orders DELETE WHERE 1",
        "ALTER TABLE customers UPDATE name = 'x' WHERE 1",
        "DROP TABLE orders",
        "TRUNCATE TABLE orders",
        "OPTIMIZE TABLE orders FINAL",
        "RENAME TABLE orders TO evil",
        "CREATE TABLE evil (x UInt8) ENGINE = Memory",
        "CREATE DATABASE evil",
    ];
    for sql in writes {
        let r = verdict(sql, Dialect::ClickHouse);
        assert!(r.is_err(), "{sql}: {r:?}");
    }
    let never = [
        "SELECT * FROM file('/etc/passwd', 'TSV', 'a String')",
        "SELECT file('/etc/passwd')",
        "SELECT * FROM url('http://127.0.0.1/', 'CSV', 'a String')",
        "SELECT * FROM s3('http://h/b/k.csv', 'CSV', 'a String')",
        "SELECT * FROM hdfs('hdfs://h/x', 'TSV', 'a String')",
        "SELECT * FROM remote('127.0.0.1', system.one)",
        "SELECT * FROM remoteSecure('127.0.0.1', system.one)",
        "SELECT * FROM mysql('h:3306', 'db', 't', 'u', 'p')",
        "SELECT * FROM postgresql('h:5432', 'db', 't', 'u', 'p')",
        "SELECT * FROM jdbc('jdbc:x', 't')",
        "SELECT * FROM odbc('DSN=x', 't')",
        "SELECT * FROM executable('cat /etc/passwd', 'TSV', 'a String')",
        "SELECT * FROM input('a String')",
        "SELECT * FROM cluster('c', shop, payroll)",
        "SELECT * FROM merge(currentDatabase(), '^pay')",
        "SELECT * FROM someNewTableFunction(1)",
        "SELECT * FROM orders SETTINGS readonly = 0",
        "SELECT * FROM orders SETTINGS max_execution_time = 0",
        "SELECT * FROM (SELECT * FROM orders SETTINGS max_result_rows = 0)",
        "SELECT * FROM orders FORMAT JSON",
        "SELECT * FROM orders INTO OUTFILE '/tmp/x.tsv'",
        "select * from orders into   OUTFILE '/tmp/x.tsv' format CSV",
        "SET readonly = 0",
        "KILL QUERY WHERE 1",
        "SELECT 1 /* /* */ UNION ALL SELECT * FROM payroll WHERE '*/' = '*/'",
        "SELECT $$ x $$",
    ];
    for sql in never {
        let r = check(sql, Dialect::ClickHouse, &Policy::new(true));
        assert!(
            matches!(
                r,
                Err(Refusal::Forbidden { .. } | Refusal::Unparsable { .. })
            ),
            "{sql}: {r:?}"
        );
    }
    // The same names mean nothing special elsewhere.
    assert_eq!(
        verdict("SELECT url FROM links", Dialect::Postgres),
        Ok(Access::Read)
    );
}

#[test]
fn clickhouse_catalog_is_refused_while_tables_are_hidden() {
    let policy = Policy {
        allow_write: false,
        hidden: Some(std::sync::Arc::new(Hidden::new(
            vec!["payroll".to_string()],
            vec![],
        ))),
        functions: None,
        vouched: Vec::new(),
        ..Policy::default()
    };
    for sql in [
        "SELECT name FROM system.tables",
        "SELECT * FROM `system`.columns",
        "SELECT * FROM payroll",
    ] {
        assert!(check(sql, Dialect::ClickHouse, &policy).is_err(), "{sql}");
    }
    assert!(check("SELECT * FROM orders", Dialect::ClickHouse, &policy).is_ok());
}

const ALL_DIALECTS: [Dialect; 5] = [
    Dialect::Sqlite,
    Dialect::DuckDb,
    Dialect::Postgres,
    Dialect::MySql,
    Dialect::ClickHouse,
];

/// Spellings of one statement an attacker tries: case, comments, line
/// ends, extra whitespace.
fn spellings(sql: &str) -> Vec<String> {
    vec![
        sql.to_string(),
        sql.to_lowercase(),
        sql.to_uppercase(),
        format!("/* x */ {sql}"),
        format!("-- x\n{sql}"),
        sql.replace(' ', "\r\n  "),
        sql.replace(' ', "\t/**/ "),
        format!("{sql};"),
    ]
}

#[test]
fn code_roles_and_privileges_are_never_defined_even_with_allow_write() {
    let statements = [
        "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql",
        "CREATE OR REPLACE FUNCTION evil() RETURNS void AS $$ COPY t TO PROGRAM 'id' $$ LANGUAGE sql",
        "CREATE TEMP FUNCTION f(x) AS x + 1",
        "CREATE MACRO m(x) AS x + 1",
        "CREATE OR REPLACE TEMP MACRO m() AS TABLE SELECT 1",
        "CREATE PROCEDURE p() BEGIN SELECT 1; END",
        "CREATE DEFINER = root PROCEDURE p() SELECT 1",
        "CREATE TRIGGER t AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION f()",
        "CREATE CONSTRAINT TRIGGER t AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION f()",
        "CREATE EVENT TRIGGER t ON ddl_command_start EXECUTE FUNCTION f()",
        "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM orders",
        "CREATE EXTENSION dblink",
        "ALTER EXTENSION dblink UPDATE",
        "CREATE TRUSTED PROCEDURAL LANGUAGE plx",
        "CREATE ROLE mallory SUPERUSER",
        "ALTER ROLE app WITH SUPERUSER",
        "CREATE USER mallory IDENTIFIED BY 'x'",
        "DROP USER app",
        "CREATE USER MAPPING FOR public SERVER s OPTIONS (user 'x')",
        "CREATE SERVER s FOREIGN DATA WRAPPER postgres_fdw",
        "CREATE FOREIGN TABLE f (a int) SERVER s",
        "IMPORT FOREIGN SCHEMA public FROM SERVER s INTO x",
        "GRANT SELECT ON payroll TO app",
        "GRANT ALL PRIVILEGES ON *.* TO 'app'@'%'",
        "REVOKE SELECT ON orders FROM app",
        "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO app",
        "ALTER SYSTEM SET log_statement = 'none'",
        "CREATE SCHEMA s GRANT SELECT ON payroll TO app",
        "CREATE RULE r AS ON SELECT TO orders DO INSTEAD SELECT * FROM payroll",
        "CREATE POLICY p ON payroll USING (true)",
        "CREATE ROW POLICY p ON payroll USING 1 TO ALL",
        "CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')",
        "CREATE DICTIONARY d (a UInt64) PRIMARY KEY a SOURCE(FILE(path '/etc/passwd' format 'TSV')) LAYOUT(FLAT()) LIFETIME(0)",
        "CREATE CAST (int AS text) WITH FUNCTION f(int)",
        "CREATE AGGREGATE a (int) (sfunc = f, stype = int)",
        "CREATE OPERATOR === (leftarg = int, rightarg = int, function = f)",
        "DO $$ BEGIN PERFORM 1; END $$",
        "INSTALL PLUGIN spider SONAME 'ha_spider.so'",
        "SECURITY LABEL ON TABLE orders IS 'x'",
    ];
    for statement in statements {
        for sql in spellings(statement) {
            for dialect in ALL_DIALECTS {
                let r = check(&sql, dialect, &Policy::new(true));
                assert!(
                    matches!(r, Err(Refusal::Forbidden { .. })),
                    "{sql:?} in {dialect:?}: {r:?}"
                );
                let message = r.unwrap_err().to_string();
                assert!(message.contains("never allowed"), "{message}");
            }
        }
    }
    // Tables, views and columns named like those words stay writes.
    for sql in [
        "CREATE TABLE functions (id int)",
        "DROP TABLE IF EXISTS roles",
        "ALTER TABLE orders DROP COLUMN status",
        "UPDATE orders SET status = 'grant' WHERE id = 1",
    ] {
        let r = check(sql, Dialect::Postgres, &Policy::new(true));
        assert_eq!(r.map(|c| c.access()), Ok(Access::Write), "{sql}");
    }
}

/// The gate's verdict on `sql`, asked from a thread with a small stack, as
/// a runtime's worker thread has.
fn on_a_small_stack(sql: &str, dialect: Dialect) -> Result<CheckedSql, Refusal> {
    let sql = sql.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || check(&sql, dialect, &Policy::default()))
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_statement_nested_past_the_bound_is_refused_not_crashed() {
    let chain = format!("SELECT 1{}", " + 1".repeat(200_000));
    let parentheses = format!("SELECT {}1{}", "(".repeat(5_000), ")".repeat(5_000));
    let ors = format!(
        "SELECT * FROM t WHERE {}",
        vec!["a = 1"; 6_000].join(" OR ")
    );
    for sql in [&chain, &parentheses, &ors] {
        for dialect in ALL_DIALECTS {
            let r = on_a_small_stack(sql, dialect);
            assert!(matches!(r, Err(Refusal::TooDeep { .. })), "{dialect:?}");
            assert!(r.unwrap_err().to_string().contains("too deeply nested"));
        }
    }
    // Within the bounds, on the same small stack: 48 and 150 nested
    // parentheses, a chain of 4,000 additions, 2,000 columns of sums.
    let within = [
        format!("SELECT {}1{}", "(".repeat(48), ")".repeat(48)),
        format!("SELECT {}1{}", "(".repeat(150), ")".repeat(150)),
        format!("SELECT 1{}", " + 1".repeat(4_000)),
        format!("SELECT {}", vec!["a + b + c"; 2_000].join(", ")),
    ];
    for sql in within {
        for dialect in ALL_DIALECTS {
            let r = on_a_small_stack(&sql, dialect);
            assert_eq!(r.map(|c| c.access()), Ok(Access::Read), "{dialect:?}");
        }
    }
}

#[test]
fn duckdb_functions_inside_a_write_are_held_to_the_allow_list() {
    for sql in [
        "CREATE TABLE x AS SELECT json_serialize_plan('SELECT * FROM payroll') AS p",
        "INSERT INTO t SELECT current_setting('allowed_paths')",
        "UPDATE t SET a = getvariable('x')",
        "CREATE TABLE x AS SELECT some_macro() AS p",
    ] {
        let r = check(sql, Dialect::DuckDb, &Policy::new(true));
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
    }
    let r = check(
        "CREATE TABLE x AS SELECT upper(name), count(*) FROM t GROUP BY 1",
        Dialect::DuckDb,
        &Policy::new(true),
    );
    assert_eq!(r.map(|c| c.access()), Ok(Access::Write));
}

#[test]
fn postgres_functions_come_from_the_allow_list_or_the_catalog() {
    let read =
        |sql: &str, policy: &Policy| check(sql, Dialect::Postgres, policy).map(|c| c.access());
    let plain = Policy::default();
    // Built-ins that compute values pass.
    for sql in [
        "SELECT upper(name), length(name), coalesce(a, 0), now(), date_trunc('month', d) FROM t",
        "SELECT count(*), string_agg(name, ','), row_number() OVER () FROM t GROUP BY 1",
        "SELECT * FROM generate_series(1, 3)",
        "SELECT pg_typeof(1), json_build_object('a', 1), random()",
    ] {
        assert_eq!(read(sql, &plain), Ok(Access::Read), "{sql}");
    }
    // Those with lasting effects, that read by a name in a string, or that
    // show the server's settings or catalog never run, in any mode.
    for f in [
        "pg_create_physical_replication_slot('evil')",
        "pg_drop_replication_slot('keep')",
        "pg_stat_reset()",
        "pg_stat_reset_shared('bgwriter')",
        "pg_try_advisory_lock(1)",
        "pg_advisory_lock_shared(1)",
        "pg_advisory_lock(1)",
        "pg_backup_start('x')",
        "table_to_xml('payroll', true, false, '')",
        "schema_to_xml('public', true, false, '')",
        "database_to_xml(true, false, '')",
        "query_to_xml('select 1', true, false, '')",
        "dblink_connect_u('host=127.0.0.1')",
        "dblink_fetch('c', 10)",
        "pg_get_viewdef('v'::regclass)",
        "has_table_privilege('payroll', 'SELECT')",
        "to_regclass('payroll')",
        "some_extension_function()",
    ] {
        for sql in [
            format!("SELECT {f}"),
            format!("SELECT * FROM t WHERE a = {f}"),
        ] {
            for policy in [Policy::new(false), Policy::new(true)] {
                let r = read(&sql, &policy);
                assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
            }
        }
    }
    // The database's own functions: as its catalog marks them.
    let functions = std::sync::Arc::new(UserFunctions {
        functions: [
            ("pay_total".to_string(), false),
            ("add_row".to_string(), true),
            ("upper".to_string(), false),
        ]
        .into_iter()
        .collect(),
    });
    let with = |allow_write: bool, hiding: bool| Policy {
        allow_write,
        hidden: hiding.then(|| std::sync::Arc::new(Hidden::new(["payroll".to_string()], vec![]))),
        functions: Some(functions.clone()),
        vouched: Vec::new(),
        ..Policy::default()
    };
    assert_eq!(
        read("SELECT pay_total()", &with(false, false)),
        Ok(Access::Read)
    );
    assert!(matches!(
        read("SELECT add_row()", &with(false, false)),
        Err(Refusal::Write { .. })
    ));
    assert_eq!(
        read("SELECT add_row()", &with(true, false)),
        Ok(Access::Write)
    );
    for sql in [
        "SELECT pay_total()",
        "SELECT public.upper('a')",
        "SELECT upper(name) FROM t",
    ] {
        let r = read(sql, &with(false, true));
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{sql}: {r:?}");
    }
}

#[test]
fn mysql_clickhouse_and_sqlite_functions_come_from_their_allow_lists() {
    let read = |sql: &str, dialect: Dialect, policy: &Policy| {
        check(sql, dialect, policy).map(|c| c.access())
    };
    let plain = Policy::default();
    let everyday = [
        (
            Dialect::MySql,
            "SELECT DATE_FORMAT(NOW(), '%Y'), IFNULL(a, 0), COUNT(*), GROUP_CONCAT(x), LEFT(s, 2), \
             CONCAT_WS(',', a, b), DATEDIFF(a, b), TIMESTAMPDIFF(DAY, a, b), JSON_EXTRACT(j, '$.a'), \
             ROUND(x, 2), COALESCE(a, b), IF(a > 1, 'y', 'n'), YEAR(d), DATE_ADD(d, INTERVAL 1 DAY), \
             ROW_NUMBER() OVER (ORDER BY a), SUBSTRING_INDEX(s, '.', 1), CURRENT_DATE, sleep(0) FROM t",
        ),
        (
            Dialect::ClickHouse,
            "SELECT toStartOfMonth(d), countIf(x > 1), uniqExact(u), sumIf(a, b), quantile(0.5)(x), \
             arrayMap(x -> x + 1, arr), toDate('2020-01-01'), formatDateTime(now(), '%Y'), \
             avgOrNull(x), groupArray(x), topK(3)(x), if(a, b, c), multiIf(a, 1, 2), \
             uniqArrayIf(arr, a > 1), sumMergeState(s), toStartOfInterval(d, INTERVAL 1 hour), \
             dateDiff('day', a, b), JSONExtractString(j, 'a') FROM t",
        ),
        (
            Dialect::Sqlite,
            "SELECT strftime('%Y', d), date('now'), substr(s, 1, 2), round(x, 2), abs(x), \
             coalesce(a, b), ifnull(a, b), printf('%d', 1), total(x), group_concat(x, ','), \
             json_extract(j, '$.a'), lower(s), length(s), instr(s, 'a'), count(DISTINCT a), \
             iif(a, 1, 2), max(a), sqrt(x), pow(x, 2), ln(x), median(x), \
             percentile_cont(x, 0.9) FROM t",
        ),
    ];
    for (dialect, sql) in everyday {
        assert_eq!(read(sql, dialect, &plain), Ok(Access::Read), "{dialect:?}");
    }
    // Reading by a name in a string, server files, lasting state, code.
    let refused = [
        (Dialect::MySql, "load_file('/etc/passwd')"),
        (Dialect::MySql, "get_lock('x', 1)"),
        (Dialect::MySql, "release_lock('x')"),
        (Dialect::MySql, "is_used_lock('x')"),
        (Dialect::MySql, "master_pos_wait('log', 1)"),
        (Dialect::MySql, "statement_digest_text('select 1')"),
        (Dialect::MySql, "sys_exec('id')"),
        (Dialect::MySql, "some_udf(1)"),
        (
            Dialect::ClickHouse,
            "hasColumnInTable('db', 'payroll', 'salary')",
        ),
        (
            Dialect::ClickHouse,
            "dictGetString('pay', 'salary', toUInt64(1))",
        ),
        (Dialect::ClickHouse, "dictGetOrNull('pay', 'salary', 1)"),
        (Dialect::ClickHouse, "joinGet('payroll_join', 'salary', 1)"),
        (
            Dialect::ClickHouse,
            "joinGetOrNull('payroll_join', 'salary', 1)",
        ),
        (Dialect::ClickHouse, "getMacro('shard')"),
        (Dialect::ClickHouse, "filesystemAvailable()"),
        (Dialect::ClickHouse, "file('x.csv')"),
        (Dialect::ClickHouse, "getClientHTTPHeader('Authorization')"),
        (Dialect::ClickHouse, "formatQuery('select 1')"),
        (Dialect::ClickHouse, "regionToName(1)"),
        (Dialect::ClickHouse, "my_udf(1)"),
        (Dialect::Sqlite, "load_extension('x')"),
        (Dialect::Sqlite, "fts3_tokenizer('x')"),
        (Dialect::Sqlite, "rtreecheck('payroll_rtree')"),
        (Dialect::Sqlite, "readfile('/etc/passwd')"),
        (Dialect::Sqlite, "sqlite_log(1, 'x')"),
    ];
    for (dialect, f) in refused {
        for sql in [
            format!("SELECT {f}"),
            format!("SELECT * FROM t WHERE a = {f}"),
            format!("SELECT (SELECT {f})"),
        ] {
            for policy in [Policy::new(false), Policy::new(true)] {
                let r = read(&sql, dialect, &policy);
                assert!(
                    matches!(r, Err(Refusal::Forbidden { .. })),
                    "{dialect:?} {sql}: {r:?}"
                );
            }
        }
    }
    // A stored function declared MODIFIES SQL DATA is a write; one that
    // takes a built-in's name is known by the catalog first.
    let functions = std::sync::Arc::new(UserFunctions {
        functions: [
            ("add_row".to_string(), true),
            ("regexp_like".to_string(), false),
        ]
        .into_iter()
        .collect(),
    });
    let with = |hiding: bool, vouched: &[&str]| Policy {
        allow_write: false,
        hidden: hiding.then(|| std::sync::Arc::new(Hidden::new(["payroll".to_string()], vec![]))),
        functions: Some(functions.clone()),
        vouched: vouched.iter().map(|v| v.to_string()).collect(),
        ..Policy::default()
    };
    assert!(matches!(
        read("SELECT add_row()", Dialect::MySql, &with(false, &[])),
        Err(Refusal::Write { .. })
    ));
    let r = read(
        "SELECT regexp_like(a, 'x') FROM t",
        Dialect::MySql,
        &with(true, &[]),
    );
    assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{r:?}");
    // allow_functions: the user vouches for one of the database's own
    // while tables are hidden (a write stays a write), or for a name not
    // on the list; never for one refused by name.
    assert_eq!(
        read(
            "SELECT regexp_like(a, 'x') FROM t",
            Dialect::MySql,
            &with(true, &["regexp_like"])
        ),
        Ok(Access::Read)
    );
    assert!(matches!(
        read(
            "SELECT add_row()",
            Dialect::MySql,
            &with(true, &["add_row"])
        ),
        Err(Refusal::Write { .. })
    ));
    assert_eq!(
        read(
            "SELECT my_udf(1)",
            Dialect::ClickHouse,
            &with(false, &["my_udf"])
        ),
        Ok(Access::Read)
    );
    for (dialect, f) in [
        (Dialect::MySql, "load_file"),
        (Dialect::ClickHouse, "file"),
        (Dialect::Postgres, "pg_read_file"),
    ] {
        let r = read(&format!("SELECT {f}('x')"), dialect, &with(false, &[f]));
        assert!(matches!(r, Err(Refusal::Forbidden { .. })), "{f}: {r:?}");
    }
}

#[test]
fn server_forms_sqlparser_cannot_read_are_checked_through_a_rewrite() {
    // Read as the server reads them, once refused as unparsable.
    for (d, sql) in [
        (Dialect::ClickHouse, "WITH 1 AS x SELECT x"),
        (Dialect::ClickHouse, "WITH 2 AS x, x * 3 AS y SELECT x, y"),
        (
            Dialect::ClickHouse,
            "WITH (SELECT max(id) FROM t) AS m SELECT m",
        ),
        (
            Dialect::ClickHouse,
            "WITH c AS (SELECT 1 AS a), 2 AS b SELECT a, b FROM c",
        ),
        (Dialect::ClickHouse, "SELECT * FROM (WITH 1 AS x SELECT x)"),
        (Dialect::ClickHouse, "SELECT a FROM t ARRAY JOIN arr AS a"),
        (
            Dialect::ClickHouse,
            "SELECT * FROM t WHERE id GLOBAL IN (SELECT id FROM u)",
        ),
        (
            Dialect::ClickHouse,
            "SELECT * FROM t WHERE id GLOBAL NOT IN (SELECT id FROM u)",
        ),
        (
            Dialect::ClickHouse,
            "SELECT * FROM t GLOBAL JOIN u USING (id)",
        ),
        (Dialect::ClickHouse, "SELECT (1, 2).1, tup.2 FROM t"),
        (Dialect::ClickHouse, "SELECT * FROM t JOIN u USING id"),
        (
            Dialect::ClickHouse,
            "SELECT a FROM t GROUP BY a WITH TOTALS",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM ROWS FROM (generate_series(1, 3), generate_series(1, 2)) AS t(a, b)",
        ),
        (
            Dialect::Postgres,
            "SELECT xmlelement(name foo, 'bar'), xmlpi(name php)",
        ),
        (
            Dialect::Postgres,
            "SELECT 2 BETWEEN SYMMETRIC 3 AND 1, 2 NOT BETWEEN ASYMMETRIC 1 AND 3",
        ),
    ] {
        assert_eq!(verdict(sql, d), Ok(Access::Read), "{d:?} {sql}");
    }
    // What such a form wraps is checked as ever.
    for (d, sql) in [
        (
            Dialect::ClickHouse,
            "WITH (SELECT * FROM file('/etc/passwd')) AS x SELECT x",
        ),
        (
            Dialect::ClickHouse,
            "WITH hasColumnInTable('s', 'payroll', 'c') AS x SELECT x",
        ),
        (
            Dialect::ClickHouse,
            "WITH 1 AS x SELECT x FROM url('http://x', CSV)",
        ),
        (
            Dialect::ClickHouse,
            "SELECT 1 WHERE 1 GLOBAL IN (SELECT * FROM remote('h', db.t))",
        ),
        (Dialect::ClickHouse, "SELECT (SELECT file('x')).1"),
        (
            Dialect::ClickHouse,
            "SELECT * FROM t JOIN s3('http://x') USING id",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM ROWS FROM (pg_read_file('/etc/passwd')) AS t(a)",
        ),
        (
            Dialect::Postgres,
            "SELECT xmlelement(name foo, pg_read_file('/etc/passwd'))",
        ),
        (
            Dialect::Postgres,
            "SELECT 1 BETWEEN SYMMETRIC pg_ls_dir('.') AND 2",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM ROWS FROM (table_to_xml('payroll', true, false, ''))",
        ),
    ] {
        let r = verdict(sql, d);
        assert!(
            matches!(r, Err(Refusal::Forbidden { .. })),
            "{d:?} {sql}: {r:?}"
        );
    }
    // A write inside stays a write.
    let r = verdict("WITH 1 AS x INSERT INTO t SELECT x", Dialect::ClickHouse);
    assert!(
        matches!(
            r,
            Err(Refusal::Write { .. }) | Err(Refusal::Unparsable { .. })
        ),
        "{r:?}"
    );
    let hidden = Policy {
        hidden: Some(std::sync::Arc::new(Hidden::new(
            ["payroll".to_string()],
            vec![],
        ))),
        ..Policy::default()
    };
    for sql in [
        "WITH (SELECT max(salary) FROM payroll) AS m SELECT m",
        "SELECT * FROM t WHERE id GLOBAL IN (SELECT id FROM payroll)",
        "SELECT * FROM t JOIN payroll USING id",
    ] {
        let r = check(sql, Dialect::ClickHouse, &hidden);
        assert!(matches!(r, Err(Refusal::Hidden { .. })), "{sql}: {r:?}");
    }
}
