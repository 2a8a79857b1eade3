#!/usr/bin/env bash
# Data-file sources at scale (docs/performance.md): whole single-shot
# processes, medians of hyperfine runs.
#
#   bash benches/datasets.sh [AIQ_BINARY]     # default: target/release/aiq
#
# Needs hyperfine and ${AIQ_BENCH_PYTHON:-python3} with the duckdb module
# (pip install duckdb==1.5.*) to write the files and to run the same query
# with DuckDB itself. Builds in a temp dir:
#   1. a folder of 10 and a folder of 1,000 small CSVs: `aiq DIR -e` warm
#      (views and catalog kept) and cold (fresh $AIQ_HOME each run);
#      goal: 1,000 warm within 2x of 10 warm;
#   2. a 10,000-file partitioned Parquet dataset (year=/region=): warm,
#      a query on one partition and one on all rows (goal: < 150 ms), beside
#      DuckDB's own read_parquet('…/**/*.parquet', hive_partitioning = true)
#      in one Python process (import and connect included).
set -euo pipefail
aiq="$(realpath "${1:-target/release/aiq}")"
py="${AIQ_BENCH_PYTHON:-python3}"
command -v hyperfine >/dev/null || { echo "missing hyperfine (apt-get install hyperfine)" >&2; exit 2; }
"$py" -c 'import duckdb' 2>/dev/null || { echo "missing the duckdb module for $py (pip install duckdb==1.5.*)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export AIQ_HOME="$work/home" HOME="$work" NO_COLOR=1

"$py" - "$work" <<'PY'
import duckdb, os, sys
work = sys.argv[1]
for n in (10, 1000):
    d = f"{work}/csv{n}"
    os.makedirs(d)
    for i in range(n):
        with open(f"{d}/t{i:04d}.csv", "w") as f:
            f.write("id,name,amount\n" + "".join(f"{j},n{j},{j * 1.5}\n" for j in range(20)))
os.makedirs(f"{work}/lake")
duckdb.connect().execute(
    f"COPY (SELECT i AS id, 2014 + i % 10 AS year, (i // 10) % 1000 AS region, i * 1.5 AS amount "
    f"FROM range(100000) t(i)) TO '{work}/lake/sales' (FORMAT parquet, PARTITION_BY (year, region))")
PY

median() { "$py" -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["median"]*1000, 1))' "$1"; }

for n in 10 1000; do
  q="SELECT count(*) FROM t0001"
  "$aiq" "$work/csv$n" -e "$q" >/dev/null
  hyperfine -N --warmup 2 --runs 20 --export-json "$work/w$n.json" "'$aiq' '$work/csv$n' -e '$q'" >&2
  hyperfine --runs 5 --prepare "rm -rf '$work/cold'" --export-json "$work/c$n.json" \
    "AIQ_HOME='$work/cold' '$aiq' '$work/csv$n' -e '$q'" >&2
done

one="SELECT count(*), sum(amount) FROM sales WHERE year = 2020 AND region = 5"
all="SELECT count(*), sum(amount) FROM sales"
"$aiq" "$work/lake" -e "$one" >/dev/null
hyperfine -N --warmup 2 --runs 10 --export-json "$work/one.json" "'$aiq' '$work/lake' -e '$one'" >&2
hyperfine -N --warmup 1 --runs 5 --export-json "$work/all.json" "'$aiq' '$work/lake' -e '$all'" >&2
cat >"$work/duck.py" <<PY
import duckdb, sys
q = sys.argv[1].replace("FROM sales", "FROM read_parquet('$work/lake/sales/**/*.parquet', hive_partitioning = true)")
print(duckdb.connect().execute(q).fetchall())
PY
hyperfine -N --warmup 2 --runs 10 --export-json "$work/duck_one.json" "'$py' '$work/duck.py' '$one'" >&2
hyperfine -N --warmup 1 --runs 5 --export-json "$work/duck_all.json" "'$py' '$work/duck.py' '$all'" >&2

echo "| what | median |"
echo "|---|---|"
echo "| 10 CSVs, warm | $(median "$work/w10.json") ms |"
echo "| 1,000 CSVs, warm | $(median "$work/w1000.json") ms |"
echo "| 10 CSVs, cold | $(median "$work/c10.json") ms |"
echo "| 1,000 CSVs, cold | $(median "$work/c1000.json") ms |"
echo "| 10,000-file dataset, one partition, warm | $(median "$work/one.json") ms |"
echo "| the same with DuckDB's glob in Python | $(median "$work/duck_one.json") ms |"
echo "| 10,000-file dataset, all rows, warm | $(median "$work/all.json") ms |"
echo "| the same with DuckDB's glob in Python | $(median "$work/duck_all.json") ms |"
