//! The allowed corpus (SPEC §4.2): read-only SQL that models and people
//! write, each with the rows it must return from the shop fixture
//! (tests/common/shop.rs). The CSV header is not compared; rows are
//! joined with `\n`. Shared by tests/gate_allowed.rs (SQLite, DuckDB, CSV
//! folder) and tests/gate_servers.rs (PostgreSQL, MariaDB).

#![allow(dead_code)]

/// `(sql, rows)`: the same text and rows on every engine.
pub const PORTABLE: &[(&str, &str)] = &[
    ("SELECT count(*) AS n FROM customers", "5"),
    ("SELECT name FROM customers WHERE country = 'DE' ORDER BY name", "Ann\nCleo"),
    ("SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country", "DE,2\nFR,1\nUS,2"),
    ("SELECT c.name, count(o.id) AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name", "Ann,2\nBob,1\nCleo,1\nDan,0\nEve,2"),
    ("WITH big AS (SELECT * FROM orders WHERE total > 10) SELECT count(*) AS n FROM big", "4"),
    ("SELECT id FROM orders WHERE status = 'cancelled'", "4"),
    ("SELECT count(DISTINCT customer_id) AS n FROM orders", "4"),
    ("SELECT max(id) AS m FROM orders", "6"),
    ("SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'shipped')", "Bob"),
    ("SELECT name FROM customers WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = customers.id)", "Dan"),
    ("SELECT name FROM customers ORDER BY id LIMIT 2 OFFSET 1", "Bob\nCleo"),
    ("SELECT upper(name) AS u FROM customers WHERE id = 3", "CLEO"),
    ("SELECT length(name) AS l FROM customers WHERE id = 1", "3"),
    ("SELECT name FROM customers WHERE name LIKE 'D%'", "Dan"),
    ("SELECT CASE WHEN vip THEN 'vip' ELSE 'regular' END AS k, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1", "regular,3\nvip,2"),
    ("SELECT name, row_number() OVER (ORDER BY id DESC) AS rn FROM customers ORDER BY rn LIMIT 2", "Eve,1\nDan,2"),
    ("SELECT customer_id, sum(CAST(round(total * 100) AS INTEGER)) AS cents FROM orders GROUP BY customer_id ORDER BY customer_id", "1,2549\n2,10000\n3,4200\n5,1925"),
    ("SELECT DISTINCT status FROM orders ORDER BY status", "cancelled\ndelivered\nshipped"),
    ("SELECT status, count(*) AS n FROM orders GROUP BY status HAVING count(*) > 1", "delivered,4"),
    ("SELECT 1 AS a UNION SELECT 2 ORDER BY a", "1\n2"),
    ("SELECT name FROM customers WHERE id = 1 UNION ALL SELECT name FROM customers WHERE id = 2 ORDER BY 1", "Ann\nBob"),
    ("SELECT name FROM customers WHERE vip ORDER BY name", "Ann\nEve"),
    ("SELECT coalesce(NULL, 'x') AS c", "x"),
    ("SELECT CASE WHEN nullif(1, 1) IS NULL THEN 'yes' ELSE 'no' END AS z", "yes"),
    ("SELECT abs(-3) AS a", "3"),
    ("SELECT substr(name, 1, 2) AS s FROM customers WHERE id = 5", "Ev"),
    ("SELECT replace(name, 'a', 'o') AS r FROM customers WHERE id = 4", "Don"),
    ("SELECT lower(country) AS c FROM customers WHERE id = 4", "fr"),
    ("SELECT count(*) AS n FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = 'US'", "3"),
    ("SELECT a.name AS a, b.name AS b FROM customers a JOIN customers b ON a.country = b.country AND a.id < b.id ORDER BY 1", "Ann,Cleo\nBob,Eve"),
    ("SELECT (SELECT count(*) FROM orders) - (SELECT count(*) FROM customers) AS d", "1"),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT sum(x) AS s FROM n", "15"),
    ("SELECT name FROM customers ORDER BY signup DESC LIMIT 1", "Eve"),
    ("SELECT count(*) AS n FROM customers WHERE country IN ('DE', 'FR')", "3"),
    ("SELECT count(*) AS n FROM orders WHERE total BETWEEN 5 AND 20", "4"),
    ("SELECT sum(id) AS s FROM customers", "15"),
    ("SELECT count(*) AS n FROM (SELECT customer_id FROM orders GROUP BY customer_id) AS t", "4"),
    ("SELECT name FROM customers c WHERE (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) = 2 ORDER BY name", "Ann\nEve"),
    ("SELECT min(id) AS lo, max(id) AS hi FROM customers WHERE country <> 'US'", "1,4"),
    ("SELECT id FROM orders WHERE status = 'delivered' AND customer_id = 5 ORDER BY id DESC", "6\n5"),
    ("WITH a AS (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id), b AS (SELECT max(n) AS m FROM a) SELECT count(*) AS k FROM a, b WHERE a.n = b.m", "2"),
    ("SELECT name FROM customers WHERE name IS NOT NULL AND id > 4", "Eve"),
    // Deep, within what the gate reads (SPEC §4.2): 48 nested parentheses, 300 additions.
    ("SELECT ((((((((((((((((((((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))))))))))))))))))) AS d", "1"),
    ("SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 AS s", "301"),
];

/// SQLite's own forms, those refused before the engine decided included.
pub const SQLITE: &[(&str, &str)] = &[
    ("PRAGMA data_version", "1"),
    ("PRAGMA cache_size", "-2000"),
    ("SELECT count(*) AS n FROM orders INDEXED BY orders_by_customer WHERE customer_id = 1", "2"),
    ("SELECT name FROM customers NOT INDEXED WHERE id = 2", "Bob"),
    ("SELECT 1 IS 1 AS t", "1"),
    ("SELECT 1 IS NOT 2 AS t", "1"),
    ("WITH x AS MATERIALIZED (SELECT * FROM customers WHERE vip) SELECT count(*) AS n FROM x", "2"),
    ("WITH x AS NOT MATERIALIZED (SELECT * FROM customers WHERE vip) SELECT count(*) AS n FROM x", "2"),
    ("SELECT name FROM customers WHERE name GLOB 'A*'", "Ann"),
    ("SELECT printf('%05d', id) AS p FROM customers WHERE id = 2", "00002"),
    ("SELECT strftime('%Y', signup) AS y, count(*) AS n FROM customers GROUP BY y", "2024,5"),
    ("SELECT iif(vip, 'y', 'n') AS v FROM customers WHERE id = 1", "y"),
    ("SELECT json_extract('{\"a\": 7}', '$.a') AS a", "7"),
    ("SELECT name FROM pragma_table_info('orders') ORDER BY cid", "id\ncustomer_id\ntotal\nordered_at\nstatus"),
    ("SELECT typeof(total) AS t FROM orders WHERE id = 1", "real"),
    ("SELECT group_concat(name, '/') AS g FROM (SELECT name FROM customers ORDER BY id)", "Ann/Bob/Cleo/Dan/Eve"),
    ("SELECT name FROM customers WHERE rowid = 3", "Cleo"),
    ("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'", "2"),
    ("SELECT count(*) FILTER (WHERE vip) AS n FROM customers", "2"),
    ("SELECT name || '!' AS x FROM customers WHERE id = 2", "Bob!"),
    ("VALUES (1, 'a')", "1,a"),
    ("SELECT name FROM customers INTERSECT SELECT name FROM customers WHERE vip ORDER BY 1", "Ann\nEve"),
    ("SELECT name FROM customers EXCEPT SELECT name FROM customers WHERE country <> 'FR'", "Dan"),
];

/// DuckDB's own forms (a database file and a CSV folder alike), those
/// refused before the engine decided included.
pub const DUCKDB: &[(&str, &str)] = &[
    ("FROM customers SELECT name WHERE country = 'US' ORDER BY name", "Bob\nEve"),
    // A PIVOT in a CTE names its values: without an IN list, DuckDB adds a
    // statement of its own (an enum type of the values) and the gate then
    // relies on the first pass, which cannot read PIVOT there.
    ("WITH p AS (PIVOT orders ON status IN ('delivered', 'shipped', 'cancelled') USING count(*) GROUP BY customer_id) SELECT count(*) AS n FROM p", "4"),
    ("SELECT count(*) AS n FROM orders o ASOF JOIN customers c ON o.customer_id >= c.id", "6"),
    ("SELECT list_sum([x * 2 FOR x IN [1, 2, 3]]) AS s", "12"),
    ("WITH RECURSIVE t(k, n) USING KEY (k) AS (SELECT 1, 1 UNION SELECT k, n + 1 FROM t WHERE n < 3) SELECT n FROM t", "3"),
    ("SELECT id FROM orders ORDER BY id LIMIT 50%", "1\n2\n3"),
    ("SELECT 2 ** 3 AS p", "8.0"),
    ("SELECT 'abc' ^@ 'ab' AS s", "true"),
    ("SELECT name FROM customers ORDER BY #1 LIMIT 1", "Ann"),
    ("SELECT count(*) FILTER (vip) AS n FROM customers", "2"),
    ("SELECT count(*) FILTER (WHERE vip) AS n FROM customers", "2"),
    ("SELECT * EXCLUDE (signup, vip, country) FROM customers WHERE id = 2", "2,Bob"),
    ("SELECT name FROM customers QUALIFY row_number() OVER (ORDER BY id DESC) = 1", "Eve"),
    ("SELECT country, count(*) AS n FROM customers GROUP BY ALL ORDER BY ALL", "DE,2\nFR,1\nUS,2"),
    ("SELECT arg_max(name, signup) AS a FROM customers", "Eve"),
    ("SELECT string_agg(name, '/' ORDER BY id) AS g FROM customers", "Ann/Bob/Cleo/Dan/Eve"),
    ("SELECT date_part('month', signup) AS m FROM customers WHERE id = 4", "4"),
    ("FROM orders SELECT count(*) AS n", "6"),
    ("SELECT * FROM (VALUES (1, 'a')) AS v(x, y)", "1,a"),
    ("SELECT unnest([1, 2]) AS u", "1\n2"),
    ("SELECT {'a': 1}.a AS a", "1"),
    ("SELECT sum(range) AS s FROM range(5)", "10"),
    ("SELECT x FROM generate_series(1, 3) t(x)", "1\n2\n3"),
    ("PIVOT orders ON status USING count(*) GROUP BY customer_id ORDER BY customer_id", "1,0,2,0\n2,0,0,1\n3,1,0,0\n5,0,2,0"),
    ("SELECT name FROM customers ANTI JOIN orders ON orders.customer_id = customers.id", "Dan"),
    ("SELECT name FROM customers SEMI JOIN orders ON orders.customer_id = customers.id ORDER BY name", "Ann\nBob\nCleo\nEve"),
    ("SELECT COLUMNS('^n.*') FROM customers WHERE id = 1", "Ann"),
    ("SELECT strftime(signup, '%Y-%m') AS m FROM customers WHERE id = 2", "2024-02"),
    ("SELECT name FROM customers INTERSECT SELECT name FROM customers WHERE vip ORDER BY 1", "Ann\nEve"),
    ("SELECT name FROM customers EXCEPT SELECT name FROM customers WHERE country <> 'FR'", "Dan"),
    ("SHOW TABLES", "customers\norders"),
];

/// The DuckDB database file's own catalog.
pub const DUCKDB_FILE: &[(&str, &str)] = &[(
    "CALL pragma_table_info('customers')",
    "0,id,INTEGER,true,,true\n1,name,VARCHAR,true,,false\n2,country,VARCHAR,true,,false\n3,vip,BOOLEAN,true,,false\n4,signup,DATE,true,,false",
)];

/// A CSV folder's views, their types as DuckDB reads the files.
pub const CSV_FOLDER: &[(&str, &str)] = &[(
    "CALL pragma_table_info('customers')",
    "0,id,BIGINT,false,,false\n1,name,VARCHAR,false,,false\n2,country,VARCHAR,false,,false\n3,vip,BOOLEAN,false,,false\n4,signup,DATE,false,,false",
)];
