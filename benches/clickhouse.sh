#!/usr/bin/env bash
# ClickHouse benchmarks (README "Performance"; benches/run.sh runs this too).
#
#   bash benches/clickhouse.sh [AIQ_BINARY]   # default: target/release/aiq
#
# Needs: clickhouse-server, clickhouse-client, hyperfine, GNU time, curl,
# python3 (Debian: apt-get install clickhouse-server clickhouse-client
# hyperfine time curl). Starts two ClickHouse servers on 127.0.0.1 (free
# ports, temp data dirs) as the cluster `two_shards`, stops them afterwards,
# and prints Markdown table rows:
#   1. 1,000,000 rows of a MergeTree table to CSV: aiq against
#      `clickhouse-client --format CSV` on the same server, same run
#      (goal: aiq <= 1.2x, peak RSS <= 64 MB);
#   2. `aiq schema` on a 2,000-table database: cold (`--refresh`, goal:
#      < 500 ms) and warm (goal: < 20 ms over a bare `SELECT 1`: curl's,
#      and aiq's own `-e 'SELECT 1'`);
#   3. a question over the Distributed table (500,000 rows on each shard),
#      end to end with an instant scripted model (benches/mock_llm.py),
#      against `-e` of the same SQL (goal: < 100 ms over the query's own time).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
aiq="${1:-$root/target/release/aiq}"
[ -x "$aiq" ] || { echo "no aiq binary at $aiq (cargo build --release first)" >&2; exit 2; }
server=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
for tool in "$server" clickhouse-client hyperfine /usr/bin/time curl python3; do
  command -v "$tool" >/dev/null || [ -x "$tool" ] || { echo "missing $tool" >&2; exit 2; }
done

work="$(mktemp -d)"
export AIQ_HOME="$work/home"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
result() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.0f" % (r["median"] * 1000) for r in d))' "$1"; }

http=("$(free_port)" "$(free_port)")
tcp=("$(free_port)" "$(free_port)")
shards=""
for i in 0 1; do shards+="<shard><replica><host>127.0.0.1</host><port>${tcp[$i]}</port></replica></shard>"; done
for i in 0 1; do
  d="$work/ch$i"
  mkdir -p "$d"
  cat > "$d/config.xml" <<EOF
<yandex>
  <logger><level>warning</level><log>$d/log.txt</log><errorlog>$d/err.txt</errorlog></logger>
  <http_port>${http[$i]}</http_port><tcp_port>${tcp[$i]}</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path><tmp_path>$d/tmp/</tmp_path><user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config><default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <remote_servers><two_shards>$shards</two_shards></remote_servers>
</yandex>
EOF
  cat > "$d/users.xml" <<'EOF'
<yandex><profiles><default></default></profiles><users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default></default></quotas></yandex>
EOF
  (cd "$d" && exec "$server" --config-file="$d/config.xml" > "$d/out.txt" 2>&1) &
  pids+=($!)
done
for i in 0 1; do
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:${http[$i]}/ping" > /dev/null && break; sleep 0.2; done
done
ch() { clickhouse-client --host 127.0.0.1 --port "${tcp[$1]}" --multiquery; }
version=$(curl -fs "http://127.0.0.1:${http[0]}/?query=SELECT+version()")

echo "ClickHouse 1. 1,000,000 rows to CSV" >&2
ch 0 <<'SQL'
CREATE DATABASE bench;
CREATE TABLE bench.events (id UInt64, customer String, amount Decimal(12, 2), country String,
  created_at DateTime, note Nullable(String)) ENGINE = MergeTree ORDER BY id;
INSERT INTO bench.events SELECT number, concat('customer-', toString(number % 9973)),
  toDecimal64((number % 100000) / 7, 2), substring('USDEGBFRNLSEESITCAJP', 1 + 2 * (number % 10), 2),
  toDateTime(1700000000 + number * 37), if(number % 5 = 0, NULL, concat('note, with "quotes" ', toString(number)))
  FROM system.numbers LIMIT 1000000;
SQL
url="clickhouse://default@127.0.0.1:${http[0]}/bench"
hyperfine --warmup 1 --runs 5 --export-json "$work/ch-export.json" \
  -n "clickhouse-client --format CSV" "clickhouse-client --host 127.0.0.1 --port ${tcp[0]} --query 'SELECT * FROM bench.events' --format CSV > /dev/null" \
  -n aiq "'$aiq' '$url' -e 'SELECT * FROM events' -f csv > /dev/null" >&2
read -r t_client t_aiq <<<"$(result "$work/ch-export.json")"
rss_aiq=$( { /usr/bin/time -f '%M' "$aiq" "$url" -e 'SELECT * FROM events' -f csv > /dev/null; } 2>&1 | tail -1)
rss_client=$( { /usr/bin/time -f '%M' clickhouse-client --host 127.0.0.1 --port "${tcp[0]}" --query 'SELECT * FROM bench.events' --format CSV > /dev/null; } 2>&1 | tail -1)
rows=$("$aiq" "$url" -e 'SELECT * FROM events' -f csv | wc -l)
ratio=$(python3 -c "print(f'{$t_aiq/$t_client:.2f}')")

echo "ClickHouse 2. schema introspection, 2,000 tables" >&2
python3 - <<'PY' | ch 0
print("CREATE DATABASE wide;")
for t in range(2000):
    print(f"CREATE TABLE wide.t{t:04d} (id UInt32, name String, status String, amount Decimal(10, 2), created_at DateTime) ENGINE = MergeTree ORDER BY id;")
    rows = ",".join(f"({i}, 'name {i}', '{('open', 'closed', 'void')[i % 3]}', {i * 1.5}, '2024-01-01 00:00:00')" for i in range(1, 21))
    print(f"INSERT INTO wide.t{t:04d} VALUES {rows};")
PY
wide="clickhouse://default@127.0.0.1:${http[0]}/wide"
hyperfine -N --warmup 1 --runs 5 --export-json "$work/ch-cold.json" \
  -n "aiq schema --refresh (ClickHouse)" "'$aiq' schema --refresh '$wide'" >&2
hyperfine -N --warmup 2 --runs 20 --export-json "$work/ch-warm.json" \
  -n "aiq schema (ClickHouse, cached)" "'$aiq' schema '$wide'" \
  -n "curl SELECT 1" "curl -fs 'http://127.0.0.1:${http[0]}/?query=SELECT+1'" \
  -n "aiq -e 'SELECT 1'" "'$aiq' '$wide' -e 'SELECT 1' -f csv" >&2
read -r t_cold <<<"$(result "$work/ch-cold.json")"
read -r t_warm t_curl1 t_aiq1 <<<"$(result "$work/ch-warm.json")"
wide_text="$("$aiq" schema "$wide")"

echo "ClickHouse 3. a question over the Distributed table" >&2
for i in 0 1; do
  ch "$i" <<SQL
CREATE DATABASE IF NOT EXISTS bench;
CREATE TABLE bench.sales_local (id UInt64, day Date, country String, amount Decimal(12, 2))
  ENGINE = MergeTree ORDER BY (day, id);
INSERT INTO bench.sales_local SELECT number * 2 + $i, toDate('2024-01-01') + number % 365,
  substring('USDEGBFRNLSEESITCAJP', 1 + 2 * (number % 10), 2), toDecimal64((number % 1000) / 7, 2)
  FROM system.numbers LIMIT 500000;
CREATE TABLE bench.sales AS bench.sales_local ENGINE = Distributed(two_shards, bench, sales_local, id);
SQL
done
sql="SELECT country, count() AS n, sum(amount) AS total FROM sales GROUP BY country ORDER BY n DESC, country"
port=$(free_port)
python3 "$root/benches/mock_llm.py" "$port" "$sql" &
pids+=($!)
for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/" > /dev/null 2>&1 && break; sleep 0.1; done
export AIQ_PROVIDER=openai AIQ_BASE_URL="http://127.0.0.1:$port/v1" AIQ_API_KEY=bench AIQ_MODEL=bench
"$aiq" "$url" -q "sales by country?" -f csv > /dev/null
hyperfine -N --warmup 3 --runs 20 --export-json "$work/ch-ask.json" \
  -n "aiq -q (Distributed)" "'$aiq' '$url' -q 'sales by country?' -f csv" \
  -n "aiq -e (same SQL)" "'$aiq' '$url' -e '$sql' -f csv" >&2
read -r t_q t_e <<<"$(result "$work/ch-ask.json")"
answer_rows=$("$aiq" "$url" -q "sales by country?" -f csv | wc -l)

cat <<EOF
| 1M rows from ClickHouse to CSV (medians; ClickHouse $version) | clickhouse-client --format CSV ${t_client} ms, peak RSS $((rss_client / 1024)) MB; aiq ${t_aiq} ms (${ratio}× clickhouse-client), peak RSS $((rss_aiq / 1024)) MB, $((rows - 1)) rows | ≤ 1.2×, ≤ 64 MB |
| \`aiq schema\`, 2,000 ClickHouse tables (medians) | cold ${t_cold} ms, warm ${t_warm} ms ($(grep -c '^table ' <<<"$wide_text") tables, $(grep -c ', e\.g\. ' <<<"$wide_text") columns with sample values); curl \`SELECT 1\` ${t_curl1} ms, \`aiq -e 'SELECT 1'\` ${t_aiq1} ms | < 500 ms cold, warm < 20 ms over \`SELECT 1\` |
| question over a Distributed table (2 shards × 500,000 rows), instant scripted model (medians) | \`-q\` ${t_q} ms vs \`-e\` of the same SQL ${t_e} ms: $((t_q - t_e)) ms for the question ($((answer_rows - 1)) rows) | < 100 ms over the query |
EOF
