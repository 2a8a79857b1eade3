#!/usr/bin/env bash
# aiq benchmarks (docs/performance.md). Timing goals live here, never in tests.
#
#   bash benches/run.sh [AIQ_BINARY]      # default: target/release/aiq
#
# Needs: sqlite3, hyperfine, GNU time, python3 (Debian: apt-get install sqlite3 hyperfine time).
# Builds its data in a temp dir and prints a Markdown summary:
#   1. export 1,000,000 rows to CSV: aiq vs the sqlite3 shell on the same
#      file, same run (goal: aiq <= 1.5x sqlite3's wall time, peak RSS <= 64 MB);
#   2. `aiq schema` on a 2,000-table SQLite file: cold (`--refresh`, goal:
#      < 300 ms) and warm, from the catalog cache (goal: < 20 ms);
#   3. a single-shot question against a local scripted model server that
#      answers at once (benches/mock_llm.py), whole process (goal: < 50 ms median);
#   3b. `aiq eval` of a 100-case suite against the same model, whole
#      process divided by the cases (goal: < 30 ms a case);
#   4. save and load of a 10 MB session file (examples/bench_session.rs; goal:
#      < 50 ms each), when that example is built next to the binary
#      (cargo build --release --example bench_session);
#   5. 1,000,000 rows from PostgreSQL to CSV: aiq against `psql --csv` on the
#      same table, same run (goal: aiq <= 1.5x psql's wall time), when a
#      PostgreSQL server is installed (Debian: postgresql); the script starts
#      its own on 127.0.0.1 with a temp data dir and stops it afterwards;
#   6. `aiq schema` on a 2,000-table PostgreSQL database, same server: cold
#      (`--refresh`, goal: < 300 ms) and warm (goal: < 20 ms);
#      6b. the same on a 2,000-table MariaDB database, when a MariaDB server
#      is installed (Debian: mariadb-server), started the same way;
#      2b. `aiq schema` on a 2,000-table DuckDB file, cold and warm, when
#      ${AIQ_BENCH_PYTHON:-python3} has the duckdb module (pip install
#      duckdb==1.5.*) to build the file;
#      and, as the floor every warm figure stands on, `aiq --version` and a
#      bare connection (`psql -c 'SELECT 1'`, `mariadb -e 'SELECT 1'`);
#   7. `aiq demo` from an empty $AIQ_HOME to the example tables (goal: < 1 s);
#   8. the Lua sandbox: 100,000 rows into a program (`--lua`) against the
#      same rows to CSV (`-e`), whole processes (goal: < 2×), and, when
#      built next to the binary (cargo build --release --example bench_lua),
#      the in-process figures: sandbox start to first statement (goal:
#      < 5 ms) and the `aiq.query` call itself;
#   9. a 1,000,000-row line chart to PNG and to SVG, whole process
#      (`aiq FILE -e … --chart line --chart-out F.png`; goal: < 1 s, memory
#      bounded), and in process (examples/bench_chart.rs) when that example is
#      built next to the binary (cargo build --release --example bench_chart).
#  10. ClickHouse (benches/clickhouse.sh): 1,000,000 rows to CSV against
#      `clickhouse-client --format CSV`, `aiq schema` of 2,000 tables, and a
#      question over a two-shard Distributed table, when clickhouse-server
#      and clickhouse-client are installed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
aiq="${1:-$root/target/release/aiq}"
[ -x "$aiq" ] || { echo "no aiq binary at $aiq (cargo build --release first)" >&2; exit 2; }
for tool in sqlite3 hyperfine /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install sqlite3 hyperfine time)" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export AIQ_HOME="$work/home"

echo "building data in $work …" >&2
sqlite3 "$work/rows.db" <<'SQL'
CREATE TABLE events (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount REAL NOT NULL,
                     country TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
INSERT INTO events
SELECT i, 'customer-' || (i % 9973), round((i % 100000) / 7.0, 2),
       substr('USDEGBFRNLSEESITCAJP', 1 + 2 * (i % 10), 2),
       datetime(1700000000 + i * 37, 'unixepoch'),
       CASE WHEN i % 5 = 0 THEN NULL ELSE 'note, with "quotes" ' || i END
FROM n;
SQL

python3 - "$work/schema.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
cur = con.cursor()
cur.execute("BEGIN")
for t in range(2000):
    ref = f", parent_id INTEGER REFERENCES t{t-1:04d}(id)" if t else ""
    cur.execute(f"CREATE TABLE t{t:04d} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, status TEXT, "
                f"amount REAL, created_at TEXT{ref})")
    cur.executemany(f"INSERT INTO t{t:04d} (id, name, status, amount, created_at) VALUES (?, ?, ?, ?, ?)",
                    [(i, f"name {i}", ("open", "closed", "void")[i % 3], i * 1.5, "2024-01-01") for i in range(1, 21)])
con.commit()
PY

result() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.0f" % (r["median"] * 1000) for r in d))' "$1"; }
# schema_rows NAME SOURCE BASELINE_NAME BASELINE_COMMAND: `aiq schema` cold
# (--refresh, 5 runs), then warm and the baseline (20 runs each); prints the
# three medians in ms.
schema_rows() {
  hyperfine -N --warmup 1 --runs 5 --export-json "$work/$1-cold.json" \
    -n "aiq schema --refresh ($1)" "'$aiq' schema --refresh '$2'" >&2
  hyperfine -N --warmup 2 --runs 20 --export-json "$work/$1-warm.json" \
    -n "aiq schema ($1, cached)" "'$aiq' schema '$2'" -n "$3" "$4" >&2
  echo "$(result "$work/$1-cold.json") $(result "$work/$1-warm.json")"
}

echo "1. export 1,000,000 rows to CSV" >&2
hyperfine --warmup 1 --runs 5 --export-json "$work/export.json" \
  -n sqlite3 "sqlite3 -csv -header '$work/rows.db' 'SELECT * FROM events' > /dev/null" \
  -n aiq "'$aiq' '$work/rows.db' -e 'SELECT * FROM events' -f csv > /dev/null" >&2
read -r t_sqlite t_aiq <<<"$(result "$work/export.json")"
rss_aiq=$( { /usr/bin/time -f '%M' "$aiq" "$work/rows.db" -e 'SELECT * FROM events' -f csv > /dev/null; } 2>&1 | tail -1)
rss_sqlite=$( { /usr/bin/time -f '%M' sqlite3 -csv -header "$work/rows.db" 'SELECT * FROM events' > /dev/null; } 2>&1 | tail -1)
# Same output, byte for byte, apart from float formatting choices: compare row counts.
rows_aiq=$("$aiq" "$work/rows.db" -e 'SELECT * FROM events' -f csv | wc -l)

echo "2. schema introspection, 2,000 tables" >&2
hyperfine -N --warmup 2 --runs 10 --export-json "$work/schema.json" \
  -n "aiq schema --refresh" "'$aiq' schema --refresh '$work/schema.db'" \
  -n "aiq schema (cached)" "'$aiq' schema '$work/schema.db'" >&2
read -r t_schema t_schema_warm <<<"$(result "$work/schema.json")"
schema_bytes=$("$aiq" schema "$work/schema.db" | wc -c)

hyperfine -N --warmup 2 --runs 20 --export-json "$work/version.json" -n "aiq --version" "'$aiq' --version" >&2
read -r t_version <<<"$(result "$work/version.json")"

duck_line="not run (no duckdb module in ${AIQ_BENCH_PYTHON:-python3}: pip install duckdb==1.5.*)"
if "${AIQ_BENCH_PYTHON:-python3}" -c 'import duckdb' 2>/dev/null; then
  echo "2b. schema introspection, 2,000 DuckDB tables" >&2
  "${AIQ_BENCH_PYTHON:-python3}" - "$work/wide.duckdb" <<'PY'
import duckdb, sys
con = duckdb.connect(sys.argv[1])
for t in range(2000):
    ref = f", parent_id INTEGER REFERENCES t{t-1:04d}(id)" if t else ""
    con.execute(f"CREATE TABLE t{t:04d} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, status TEXT, "
                f"amount DECIMAL(10,2), created_at TIMESTAMP{ref})")
    con.execute(f"INSERT INTO t{t:04d} (id, name, status, amount, created_at) SELECT i, 'name ' || i, "
                f"['open', 'closed', 'void'][1 + i % 3], i * 1.5, TIMESTAMP '2024-01-01' FROM range(1, 21) r(i)")
con.close()
PY
  read -r t_duck_cold t_duck_warm t_duck_open <<<"$(schema_rows DuckDB "$work/wide.duckdb" \
    "aiq -e 'SELECT 1' (DuckDB)" "'$aiq' '$work/wide.duckdb' -e 'SELECT 1'")"
  duck_line="cold ${t_duck_cold} ms, warm ${t_duck_warm} ms (the file unopened); any statement on the file: ${t_duck_open} ms, most of it DuckDB opening it"
fi

echo "3. single-shot question, instant model" >&2
sqlite3 "$work/shop.db" <<'SQL'
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO customers SELECT i, 'customer ' || i, substr('USDEGBFRNLSEESITCAJP', 1 + 2 * (i % 10), 2) FROM n;
SQL
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$root/benches/mock_llm.py" "$port" "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC" &
mock=$!
trap 'kill $mock 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break; sleep 0.1; done
export AIQ_PROVIDER=openai AIQ_BASE_URL="http://127.0.0.1:$port/v1" AIQ_API_KEY=bench AIQ_MODEL=bench
"$aiq" "$work/shop.db" -q "how many customers per country?" -f csv > "$work/answer.csv"
[ "$(wc -l < "$work/answer.csv")" -eq 11 ] || { echo "unexpected answer:" >&2; cat "$work/answer.csv" >&2; exit 1; }
hyperfine -N --warmup 3 --runs 30 --export-json "$work/ask.json" \
  -n "aiq -q" "'$aiq' '$work/shop.db' -q 'how many customers per country?' -f csv" >&2
read -r t_ask <<<"$(result "$work/ask.json")"

echo "3b. aiq eval, 100 cases, instant model" >&2
for i in $(seq 100); do
  printf '[[case]]\nid = "c%d"\nquestion = "customers per country, take %d"\nsql = "SELECT country, count(*) FROM customers GROUP BY 1"\n' "$i" "$i"
done > "$work/suite.toml"
"$aiq" eval "$work/suite.toml" "$work/shop.db" --min 100% > /dev/null
hyperfine -N --warmup 1 --runs 5 --export-json "$work/eval.json" \
  -n "aiq eval (100 cases)" "'$aiq' eval '$work/suite.toml' '$work/shop.db'" >&2
read -r t_eval <<<"$(result "$work/eval.json")"
eval_case=$(python3 -c "print(f'{$t_eval/100:.1f}')")

session_line="not run (cargo build --release --example bench_session)"
bench_session="$(dirname "$aiq")/examples/bench_session"
if [ -x "$bench_session" ]; then
  echo "4. 10 MB session save/load" >&2
  session_line="$("$bench_session")"
fi

pg_line="not run (no PostgreSQL server: apt-get install postgresql)"
pg_schema_line="not run"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ]; then
  echo "5. 1,000,000 rows from PostgreSQL to CSV" >&2
  pgdir="$(mktemp -d)"
  as_pg=()
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$pgdir"; as_pg=(runuser -u postgres --); fi
  pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_pg[@]}" "$pg_bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 --no-locale -N > /dev/null
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null
  trap '"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1; rm -rf "$pgdir"; kill $mock 2>/dev/null; rm -rf "$work"' EXIT
  psql=("$pg_bin/psql" -X -q -h 127.0.0.1 -p "$pgport" -U postgres)
  "${psql[@]}" -d postgres -c "CREATE DATABASE bench" > /dev/null
  "${psql[@]}" -d bench > /dev/null <<'SQL'
CREATE TABLE events (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(12,2) NOT NULL,
                     country text NOT NULL, created_at timestamptz NOT NULL, note text);
INSERT INTO events
SELECT i, 'customer-' || (i % 9973), round((i % 100000) / 7.0, 2),
       substr('USDEGBFRNLSEESITCAJP', 1 + 2 * (i % 10), 2),
       timestamptz '2023-11-14 22:13:20+00' + i * interval '37 seconds',
       CASE WHEN i % 5 = 0 THEN NULL ELSE 'note, with "quotes" ' || i END
FROM generate_series(1, 1000000) AS i;
VACUUM ANALYZE events;
SQL
  pgurl="postgres://postgres@127.0.0.1:$pgport/bench"
  hyperfine --warmup 1 --runs 5 --export-json "$work/pg.json" \
    -n "psql --csv" "${psql[*]} -d bench --csv -c 'SELECT * FROM events' > /dev/null" \
    -n aiq "'$aiq' '$pgurl' -e 'SELECT * FROM events' -f csv > /dev/null" >&2
  read -r t_psql t_aiq_pg <<<"$(result "$work/pg.json")"
  rss_aiq_pg=$( { /usr/bin/time -f '%M' "$aiq" "$pgurl" -e 'SELECT * FROM events' -f csv > /dev/null; } 2>&1 | tail -1)
  rows_pg=$("$aiq" "$pgurl" -e 'SELECT * FROM events' -f csv | wc -l)
  pg_ratio=$(python3 -c "print(f'{$t_aiq_pg/$t_psql:.2f}')")
  pg_line="psql --csv ${t_psql} ms; aiq ${t_aiq_pg} ms (${pg_ratio}× psql), peak RSS $((rss_aiq_pg / 1024)) MB, $((rows_pg - 1)) rows"
  echo "6. schema introspection, 2,000 PostgreSQL tables" >&2
  "${psql[@]}" -d postgres -c "CREATE DATABASE wide" > /dev/null
  "${psql[@]}" -d wide > /dev/null <<'SQL'
DO $$
BEGIN
  FOR t IN 0..1999 LOOP
    EXECUTE format('CREATE TABLE t%s (id int PRIMARY KEY, name text NOT NULL, status text, amount numeric(10,2), created_at timestamptz%s)',
                   lpad(t::text, 4, '0'),
                   CASE WHEN t > 0 THEN format(', parent_id int REFERENCES t%s(id)', lpad((t - 1)::text, 4, '0')) ELSE '' END);
    EXECUTE format('INSERT INTO t%s (id, name, status, amount, created_at) SELECT i, ''name '' || i, (ARRAY[''open'', ''closed'', ''void''])[1 + i %% 3], i * 1.5, now() FROM generate_series(1, 20) i',
                   lpad(t::text, 4, '0'));
  END LOOP;
END $$;
ANALYZE;
SQL
  hyperfine -N --warmup 2 --runs 10 --export-json "$work/pgschema.json" \
    -n "aiq schema --refresh (PostgreSQL)" "'$aiq' schema --refresh 'postgres://postgres@127.0.0.1:$pgport/wide'" \
    -n "aiq schema (PostgreSQL, cached)" "'$aiq' schema 'postgres://postgres@127.0.0.1:$pgport/wide'" >&2
  read -r t_pg_schema t_pg_schema_warm <<<"$(result "$work/pgschema.json")"
  hyperfine -N --warmup 2 --runs 20 --export-json "$work/psql1.json" \
    -n "psql -c 'SELECT 1'" "${psql[*]} -d wide -c 'SELECT 1'" >&2
  read -r t_psql1 <<<"$(result "$work/psql1.json")"
  pg_schema_line="cold ${t_pg_schema} ms, warm ${t_pg_schema_warm} ms ($("$aiq" schema "postgres://postgres@127.0.0.1:$pgport/wide" | grep -c '^table ') tables); psql -c 'SELECT 1' ${t_psql1} ms"
fi

my_schema_line="not run (no MariaDB server: apt-get install mariadb-server)"
if command -v mariadb-install-db >/dev/null && [ -x /usr/sbin/mariadbd ]; then
  echo "6b. schema introspection, 2,000 MariaDB tables" >&2
  mydir="$(mktemp -d)"
  myport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_root=()
  [ "$(id -u)" -eq 0 ] && as_root=(--user=root)
  mariadb-install-db --no-defaults --datadir="$mydir/data" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve "${as_root[@]}" > /dev/null 2>&1
  /usr/sbin/mariadbd --no-defaults --datadir="$mydir/data" --port="$myport" --socket="$mydir/sock" \
    --pid-file="$mydir/pid" --bind-address=127.0.0.1 --skip-log-bin --skip-name-resolve \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 "${as_root[@]}" > "$mydir/log" 2>&1 &
  mysqld_pid=$!
  trap 'kill $mysqld_pid 2>/dev/null; wait $mysqld_pid 2>/dev/null; rm -rf "$mydir"; [ -n "${pgdir:-}" ] && { "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1; rm -rf "$pgdir"; }; kill $mock 2>/dev/null; rm -rf "$work"' EXIT
  my=(mariadb --no-defaults -u root --socket="$mydir/sock")
  for _ in $(seq 100); do "${my[@]}" -e 'SELECT 1' > /dev/null 2>&1 && break; sleep 0.2; done
  "${my[@]}" -e "CREATE DATABASE wide; CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'bench'; GRANT ALL ON wide.* TO 'bench'@'127.0.0.1';"
  python3 - <<'PY' | "${my[@]}" wide
for t in range(2000):
    ref = f", parent_id int, FOREIGN KEY (parent_id) REFERENCES t{t-1:04d}(id)" if t else ""
    print(f"CREATE TABLE t{t:04d} (id int PRIMARY KEY, name text NOT NULL, status text, amount decimal(10,2), created_at datetime{ref});")
    rows = ",".join(f"({i}, 'name {i}', '{('open', 'closed', 'void')[i % 3]}', {i * 1.5}, '2024-01-01')" for i in range(1, 21))
    print(f"INSERT INTO t{t:04d} (id, name, status, amount, created_at) VALUES {rows};")
PY
  myurl="mysql://bench:bench@127.0.0.1:$myport/wide"
  read -r t_my_cold t_my_warm t_my1 <<<"$(schema_rows MariaDB "$myurl" \
    "mariadb -e 'SELECT 1'" "mariadb --no-defaults -u bench -pbench -h 127.0.0.1 -P $myport wide -e 'SELECT 1'")"
  my_text="$("$aiq" schema "$myurl")"
  my_schema_line="cold ${t_my_cold} ms, warm ${t_my_warm} ms ($(grep -c '^table ' <<<"$my_text") tables, $(grep -c ', e\.g\. ' <<<"$my_text") columns with sample values); mariadb -e 'SELECT 1' ${t_my1} ms"
fi

echo "8. Lua: 100,000 rows into a program vs to CSV" >&2
mkdir -p "$AIQ_HOME"
echo 'local rows = aiq.query("SELECT * FROM events LIMIT 100000") assert(#rows == 100000)' > "$work/rows.lua"
hyperfine --warmup 1 --runs 10 --export-json "$work/lua.json" \
  -n "aiq -e, CSV" "'$aiq' '$work/rows.db' -e 'SELECT * FROM events LIMIT 100000' -f csv > /dev/null" \
  -n "aiq --lua" "'$aiq' '$work/rows.db' --lua '$work/rows.lua'" >&2
read -r t_lua_csv t_lua <<<"$(result "$work/lua.json")"
lua_ratio=$(python3 -c "print(f'{$t_lua/$t_lua_csv:.2f}')")
lua_inproc="not run (cargo build --release --example bench_lua)"
bench_lua="$(dirname "$aiq")/examples/bench_lua"
[ -x "$bench_lua" ] && lua_inproc="$("$bench_lua" | tr '\n' ' ')"
echo "7. aiq demo from an empty home" >&2
hyperfine -N --warmup 1 --runs 10 --export-json "$work/demo.json" \
  --prepare "rm -rf '$work/demohome'" \
  -n "aiq demo" "env AIQ_HOME='$work/demohome' OLLAMA_HOST=127.0.0.1:9 AIQ_PROVIDER= AIQ_BASE_URL= AIQ_API_KEY= AIQ_MODEL= '$aiq' demo" >&2
read -r t_demo <<<"$(result "$work/demo.json")"

echo "9. a 1,000,000-row line chart to PNG and SVG" >&2
chart_sql='SELECT created_at, amount FROM events'
hyperfine -N --warmup 1 --runs 5 --export-json "$work/chart.json" \
  -n "aiq --chart-out PNG" "'$aiq' '$work/rows.db' -e '$chart_sql' --chart line --chart-out '$work/chart.png'" \
  -n "aiq --chart-out SVG" "'$aiq' '$work/rows.db' -e '$chart_sql' --chart line --chart-out '$work/chart.svg'" >&2
read -r t_png t_svg <<<"$(result "$work/chart.json")"
rss_chart=$( { /usr/bin/time -f '%M' "$aiq" "$work/rows.db" -e "$chart_sql" --chart line --chart-out "$work/chart.png" > /dev/null; } 2>&1 | tail -1)
chart_line="not run (cargo build --release --example bench_chart)"
bench_chart="$(dirname "$aiq")/examples/bench_chart"
if [ -x "$bench_chart" ]; then
  chart_line="$("$bench_chart" | tr '\n' ' ')"
fi

ch_rows="| ClickHouse | not run (apt-get install clickhouse-server clickhouse-client) | — |"
if command -v clickhouse-client >/dev/null && { command -v clickhouse-server >/dev/null || [ -x /usr/sbin/clickhouse-server ]; }; then
  echo "10. ClickHouse" >&2
  ch_rows="$(bash "$root/benches/clickhouse.sh" "$aiq")"
fi

ratio=$(python3 -c "print(f'{$t_aiq/$t_sqlite:.2f}')")
cat <<EOF

| benchmark | result | goal |
|---|---|---|
| 1M rows to CSV, sqlite3 shell (median) | ${t_sqlite} ms, peak RSS $((rss_sqlite / 1024)) MB | — |
| 1M rows to CSV, aiq (median) | ${t_aiq} ms (${ratio}× sqlite3), peak RSS $((rss_aiq / 1024)) MB, $((rows_aiq - 1)) rows | ≤ 1.5×, ≤ 64 MB |
| \`aiq --version\`, the floor of every whole-process figure (median of 20) | ${t_version} ms | — |
| \`aiq schema\`, 2,000 tables (medians) | cold ${t_schema} ms, warm ${t_schema_warm} ms (${schema_bytes} bytes of schema) | < 300 ms cold, < 20 ms warm |
| \`aiq schema\`, 2,000 DuckDB tables (medians) | ${duck_line} | < 20 ms warm |
| single-shot question, instant local model (median of 30) | ${t_ask} ms | < 50 ms |
| \`aiq eval\`, 100 cases, instant local model (median of 5, per case) | ${eval_case} ms | < 30 ms |
| 10 MB session file | ${session_line} | < 50 ms each |
| 1M rows from PostgreSQL to CSV (medians) | ${pg_line} | ≤ 1.5× psql |
| \`aiq schema\`, 2,000 PostgreSQL tables (medians) | ${pg_schema_line} | < 300 ms cold, < 20 ms warm |
| \`aiq schema\`, 2,000 MariaDB tables (medians) | ${my_schema_line} | < 20 ms warm |
| \`aiq demo\` from an empty home to the example tables (median) | ${t_demo} ms | < 1 s |
| 1M-row line chart, whole process (SQLite reads the rows; median) | PNG ${t_png} ms, SVG ${t_svg} ms, peak RSS $((rss_chart / 1024)) MB | < 1 s, bounded |
| 1M-row line chart in process (examples/bench_chart.rs) | ${chart_line} | < 1 s |
| 100,000 rows × 6 columns into a Lua program (\`--lua\`) vs to CSV (\`-e\`), whole processes (medians) | ${t_lua} ms vs ${t_lua_csv} ms (${lua_ratio}×) | < 2× |
| Lua sandbox, in-process (examples/bench_lua.rs) | ${lua_inproc} | start < 5 ms; < 2× |
${ch_rows}
EOF
