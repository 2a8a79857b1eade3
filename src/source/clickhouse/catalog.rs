//! ClickHouse's schema for the catalog, from `system.tables` and
//! `system.columns` in a fixed number of queries whatever the number of
//! tables: which catalog columns this release has, tables, columns, row
//! counts, clusters, and one query of samples within the sample budget.
//!
//! A `Distributed` table is described as the table to query — its rows are
//! every shard's — and the local tables under it as one shard's part of it,
//! so the model asks the distributed one. Newer releases give more
//! (`system.tables.comment`, `total_rows`); what a release lacks is left
//! out, never guessed.

use std::collections::{HashMap, HashSet};

use sqlparser::dialect::ClickHouseDialect;

use super::ClickHouseSource;
use crate::schema::{Catalog, ColumnInfo, Table, TableKind, SAMPLE_ROWS};
use crate::source::server::{sample_columns_up_to, text, SAMPLE_BUDGET};
use crate::source::{ExecError, Value};

/// Columns sampled at most: ClickHouse opens each sampled table's parts,
/// about 0.3 ms a table, so 2,000 would take the sample query 0.65 s.
const SAMPLED_COLUMNS: usize = 600;

/// One table as `system.tables` describes it.
struct Described {
    table: Table,
    engine: String,
    engine_full: String,
    sorting_key: String,
}

/// Engines whose table stands for a query of other tables.
const QUERY_ENGINES: &[&str] = &["View", "LiveView", "MaterializedView", "WindowView"];

/// What views, materialized views and Distributed tables reach (SPEC §4.2,
/// "Behind a name"): the tables their query, or their engine's arguments,
/// name, read from what the server keeps (`create_table_query`,
/// `engine_full`).
fn reaches(source: &ClickHouseSource, tables: &mut [Described]) -> Result<(), ExecError> {
    let names: HashSet<String> = tables.iter().map(|d| d.table.name.to_lowercase()).collect();
    let none = HashSet::new();
    let words = |text: &str, own: &str| {
        crate::source::reaches_by_words(own, text, &ClickHouseDialect {}, &names, &none)
    };
    for d in tables.iter_mut().filter(|d| d.engine == "Distributed") {
        let own = d.table.name.to_lowercase();
        d.table.reaches = words(&d.engine_full, &own);
    }
    if !tables
        .iter()
        .any(|d| QUERY_ENGINES.contains(&d.engine.as_str()))
    {
        return Ok(());
    }
    let queries = source.internal(
        "SELECT name, create_table_query FROM system.tables \
         WHERE database = currentDatabase() \
           AND engine IN ('View', 'LiveView', 'MaterializedView', 'WindowView')",
        None,
    )?;
    for r in &queries.rows {
        let name = r.first().and_then(text).unwrap_or_default();
        if let Some(d) = tables.iter_mut().find(|d| d.table.name == name) {
            let query = r.get(1).and_then(text).unwrap_or_default();
            d.table.reaches = words(&query, &name.to_lowercase());
        }
    }
    Ok(())
}

/// Tables and views of the source's database, with columns, row counts,
/// what each engine is and samples.
pub(super) fn introspect(source: &ClickHouseSource, version: &str) -> Result<Catalog, ExecError> {
    let has = source.internal(
        "SELECT name FROM system.columns WHERE database = 'system' AND table = 'tables' \
         AND name IN ('comment', 'total_rows')",
        None,
    )?;
    let has = |column: &str| {
        has.rows
            .iter()
            .any(|r| r.first().and_then(text).as_deref() == Some(column))
    };
    let described = source.internal(
        &format!(
            "SELECT name, engine, sorting_key, {}, {} FROM system.tables \
             WHERE database = currentDatabase() AND NOT is_temporary ORDER BY name",
            if has("total_rows") {
                "total_rows"
            } else {
                "CAST(NULL AS Nullable(UInt64))"
            },
            if has("comment") { "comment" } else { "''" },
        ),
        None,
    )?;
    let mut tables: Vec<Described> = described
        .rows
        .iter()
        .map(|r| {
            let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
            let engine = cell(1);
            let view = engine == "View" || engine == "LiveView";
            Described {
                table: Table {
                    name: cell(0),
                    // Only the connected database's tables are listed, so
                    // a dot is the name's own (`report.2024`).
                    one_name: cell(0).contains('.'),
                    kind: if view {
                        TableKind::View
                    } else {
                        TableKind::Table
                    },
                    row_estimate: cell(3).parse().ok(),
                    comment: Some(cell(4)).filter(|c| !c.is_empty()),
                    ..Table::default()
                },
                engine,
                engine_full: String::new(),
                sorting_key: cell(2),
            }
        })
        .collect();
    // `engine_full` costs the server a table's whole definition (25 µs a
    // table): asked only when there are Distributed tables to describe.
    if tables.iter().any(|d| d.engine == "Distributed") {
        let full = source.internal(
            "SELECT name, engine_full FROM system.tables \
             WHERE database = currentDatabase() AND engine = 'Distributed'",
            None,
        )?;
        for r in &full.rows {
            let name = r.first().and_then(text).unwrap_or_default();
            if let Some(d) = tables.iter_mut().find(|d| d.table.name == name) {
                d.engine_full = r.get(1).and_then(text).unwrap_or_default();
            }
        }
    }
    reaches(source, &mut tables)?;
    let columns = source.internal(
        "SELECT table, name, type, comment FROM system.columns \
         WHERE database = currentDatabase()",
        None,
    )?;
    let index: HashMap<String, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, d)| (d.table.name.clone(), i))
        .collect();
    for r in &columns.rows {
        let cell = |i: usize| r.get(i).and_then(text).unwrap_or_default();
        // A table created between the two queries is left for the next read.
        let Some(&i) = index.get(&cell(0)) else {
            continue;
        };
        let type_name = cell(2);
        tables[i].table.columns.push(ColumnInfo {
            name: cell(1),
            nullable: type_name.starts_with("Nullable(")
                || type_name.starts_with("LowCardinality(Nullable("),
            type_name,
            primary_key: false,
            samples: Vec::new(),
        });
    }
    row_counts(source, &mut tables)?;
    describe_engines(source, &mut tables)?;
    let locals: Vec<String> = tables
        .iter()
        .filter_map(|d| distributed_over(&d.engine_full).map(|(_, _, t)| t))
        .collect();
    let mut tables: Vec<Table> = tables.into_iter().map(|d| d.table).collect();
    sample_columns_up_to(
        SAMPLED_COLUMNS,
        &mut tables,
        // One shard's rows say less than the distributed table's.
        |name| locals.iter().any(|l| l == name),
        |k, table, column| {
            let (t, c) = (quote(&table.name), quote(column));
            format!(
                "(SELECT toUInt32({k}) AS k, CAST(toString({c}) AS Nullable(String)) AS v \
                 FROM {t} LIMIT {SAMPLE_ROWS})"
            )
        },
        "k, v",
        |sql| source.internal(sql, Some(SAMPLE_BUDGET)),
    );
    Ok(Catalog {
        engine: version.to_string(),
        tables,
    })
}

/// Row counts where the release has no `total_rows`: active parts' rows
/// for MergeTree tables, and for each `Distributed` table the count its
/// shards answer (from their parts' metadata), all in one query each.
fn row_counts(source: &ClickHouseSource, tables: &mut [Described]) -> Result<(), ExecError> {
    if tables.iter().all(|d| d.table.row_estimate.is_some()) {
        return Ok(());
    }
    let parts = source.internal(
        "SELECT table, sum(rows) FROM system.parts \
         WHERE active AND database = currentDatabase() GROUP BY table",
        None,
    )?;
    let counts: HashMap<String, u64> = parts
        .rows
        .iter()
        .filter_map(|r| Some((r.first().and_then(text)?, r.get(1).and_then(count)?)))
        .collect();
    for d in tables.iter_mut() {
        if d.table.row_estimate.is_none() && d.engine.ends_with("MergeTree") {
            d.table.row_estimate = Some(counts.get(&d.table.name).copied().unwrap_or(0));
        }
    }
    let distributed: Vec<usize> = (0..tables.len())
        .filter(|i| tables[*i].engine == "Distributed" && tables[*i].table.row_estimate.is_none())
        .collect();
    if distributed.is_empty() {
        return Ok(());
    }
    let sql = distributed
        .iter()
        .enumerate()
        .map(|(k, i)| {
            format!(
                "SELECT toUInt32({k}) AS k, count() AS n FROM {}",
                quote(&tables[*i].table.name)
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    // A shard that does not answer leaves the counts out, not the schema.
    if let Ok(found) = source.internal(&sql, Some(SAMPLE_BUDGET)) {
        for r in &found.rows {
            if let (Some(Value::Int(k)), Some(n)) = (r.first(), r.get(1).and_then(count)) {
                if let Some(i) = distributed.get(*k as usize) {
                    tables[*i].table.row_estimate = Some(n);
                }
            }
        }
    }
    Ok(())
}

fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::BigInt(i) => u64::try_from(*i).ok(),
        other => other.to_text().parse().ok(),
    }
}

/// Says in each table's comment what its engine is and how it is sorted;
/// for a `Distributed` table, over which cluster (and how many shards) and
/// which local table; for that local table, that it holds one shard's rows.
fn describe_engines(source: &ClickHouseSource, tables: &mut [Described]) -> Result<(), ExecError> {
    let shards: HashMap<String, u64> = if tables.iter().any(|d| d.engine == "Distributed") {
        source
            .internal(
                "SELECT cluster, uniqExact(shard_num) FROM system.clusters GROUP BY cluster",
                None,
            )?
            .rows
            .iter()
            .filter_map(|r| Some((r.first().and_then(text)?, r.get(1).and_then(count)?)))
            .collect()
    } else {
        HashMap::new()
    };
    let current = source.database();
    let mut local_of: HashMap<String, String> = HashMap::new();
    for d in tables.iter() {
        if let Some((cluster, database, local)) = distributed_over(&d.engine_full) {
            if database.is_empty() || database == current || database == "currentDatabase()" {
                local_of.insert(local.clone(), d.table.name.clone());
            }
            let _ = cluster;
        }
    }
    for d in tables.iter_mut() {
        let mut said = match distributed_over(&d.engine_full) {
            Some((cluster, database, local)) => {
                let n = shards
                    .get(&cluster)
                    .map(|n| format!(" ({n} shard{})", if *n == 1 { "" } else { "s" }))
                    .unwrap_or_default();
                let local = if database.is_empty() || database == current {
                    local
                } else {
                    format!("{database}.{local}")
                };
                format!(
                    "Distributed over cluster {cluster}{n}: the rows of every shard's {local}; query this table"
                )
            }
            None => {
                let mut s = format!("engine {}", d.engine);
                if !d.sorting_key.is_empty() {
                    s.push_str(&format!(", sorted by ({})", d.sorting_key));
                }
                s
            }
        };
        if let Some(parent) = local_of.get(&d.table.name) {
            said = format!(
                "local table of one shard only, under the Distributed table {parent}: query {parent} for all rows; {said}"
            );
        }
        d.table.comment = Some(match d.table.comment.take() {
            Some(own) => format!("{own} ({said})"),
            None => said,
        });
    }
    Ok(())
}

/// `Distributed(cluster, database, table[, sharding key])` → its cluster,
/// database and table, unquoted.
fn distributed_over(engine_full: &str) -> Option<(String, String, String)> {
    let args = engine_full.strip_prefix("Distributed(")?;
    let args = &args[..args.rfind(')')?];
    let mut parts = split_args(args).into_iter();
    let unquote = |s: String| {
        let s = s.trim();
        s.trim_matches(|c| c == '\'' || c == '`' || c == '"')
            .to_string()
    };
    let cluster = unquote(parts.next()?);
    let database = unquote(parts.next()?);
    let table = unquote(parts.next()?);
    Some((cluster, database, table))
}

/// Top-level comma-separated arguments (a sharding key may hold commas).
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut current) = (0i32, None::<char>, String::new());
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '`' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

/// A ClickHouse identifier in backticks.
pub(super) fn quote(name: &str) -> String {
    format!("`{}`", name.replace('\\', "\\\\").replace('`', "\\`"))
}

/// The catalog cache's key, in one query on metadata only: the tables'
/// names, engines and metadata modification times (any `CREATE`, `ALTER`,
/// `DROP`, `RENAME` moves them), and the active parts' count, rows and
/// latest modification (inserts and merges, which move row counts and
/// samples). Data written on other shards is not seen here: a
/// `Distributed` table's count is as fresh as this server's parts.
pub(super) fn fingerprint(source: &ClickHouseSource) -> Option<String> {
    first_row_text(
        source,
        "SELECT \
               (SELECT concat(toString(count()), ':', toString(groupBitXor(cityHash64(name, engine, \
                  toString(metadata_modification_time))))) \
                FROM system.tables WHERE database = currentDatabase()), \
               (SELECT concat(toString(count()), ':', toString(sum(rows)), ':', \
                  toString(max(modification_time))) \
                FROM system.parts WHERE active AND database = currentDatabase())",
        ";",
    )
}

/// The first row of one of aiq's own queries, its values joined by `sep`;
/// `None` (logged) when the query fails or answers nothing.
fn first_row_text(source: &ClickHouseSource, sql: &str, sep: &str) -> Option<String> {
    let out = source
        .internal(sql, None)
        .map_err(|e| tracing::info!("no catalog fingerprint: {e}"))
        .ok()?;
    let row = out.rows.first()?;
    Some(row.iter().map(Value::to_text).collect::<Vec<_>>().join(sep))
}

/// Whether the server wrote anything at all since it started, in one tiny
/// query on `system.events` that opens no table (the full fingerprint
/// reads `system.tables` and `system.parts`, tens of milliseconds for a few
/// thousand tables): its start time, then counters that only grow while it
/// runs — statements other than `SELECT` (every `CREATE`, `ALTER`,
/// `DROP`, `RENAME`, `TRUNCATE`, `INSERT`, mutation, `OPTIMIZE`), rows
/// inserted, rows written into parts by any path (materialized views,
/// Kafka, `Buffer` flushes), rows merged (merges, TTL), parts fetched from
/// a replica, rows mutated. An event a release lacks counts as 0.
const QUICK: &str = "\
    SELECT toUInt32(now()) - uptime(), \
      sumIf(value, event = 'Query') - sumIf(value, event = 'SelectQuery'), \
      sumIf(value, event = 'InsertedRows'), \
      sumIf(value, event = 'MergeTreeDataWriterRows'), \
      sumIf(value, event = 'MergedRows'), \
      sumIf(value, event = 'ReplicatedPartFetches'), \
      sumIf(value, event = 'MutatedRows') \
    FROM system.events";

/// The quick half of the fingerprint ([`QUICK`]), as `start counters…`.
pub(super) fn quick_fingerprint(source: &ClickHouseSource) -> Option<String> {
    first_row_text(source, QUICK, " ")
}

/// Whether two quick fingerprints say that nothing was written: the same
/// counters, on a server started at the same time. The start time is now
/// minus the uptime, both in whole seconds, so one server's reads differ by
/// up to a second; a restart is seen as a later start (two starts within
/// two seconds of each other, with the catalog kept in between, would be
/// taken for one).
pub(super) fn same_quick(now: &str, cached: &str) -> bool {
    let split = |s: &str| {
        let (start, counters) = s.split_once(' ')?;
        Some((start.parse::<i64>().ok()?, counters.to_string()))
    };
    match (split(now), split(cached)) {
        (Some((a, x)), Some((b, y))) => x == y && (a - b).abs() <= 1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributed_engines_name_their_local_table() {
        assert_eq!(
            distributed_over("Distributed(two_shards, shop, events_local, cityHash64(id, kind))"),
            Some(("two_shards".into(), "shop".into(), "events_local".into()))
        );
        assert_eq!(
            distributed_over("Distributed('c', '', 'e')"),
            Some(("c".into(), "".into(), "e".into()))
        );
        assert_eq!(distributed_over("MergeTree ORDER BY id"), None);
        assert_eq!(quote("a`b"), "`a\\`b`");
    }

    #[test]
    fn quick_fingerprints_allow_a_second_of_start_time_and_no_other_change() {
        assert!(same_quick("1000 5 7 7 0 0 0", "1000 5 7 7 0 0 0"));
        assert!(same_quick("1001 5 7 7 0 0 0", "1000 5 7 7 0 0 0"));
        assert!(same_quick("999 5 7 7 0 0 0", "1000 5 7 7 0 0 0"));
        // A restart: a later start, though the counters are back where
        // they were.
        assert!(!same_quick("1002 5 7 7 0 0 0", "1000 5 7 7 0 0 0"));
        // Anything written.
        assert!(!same_quick("1000 6 7 7 0 0 0", "1000 5 7 7 0 0 0"));
        assert!(!same_quick("1000 5 7 8 0 0 0", "1000 5 7 7 0 0 0"));
        // What cannot be read is never the same.
        assert!(!same_quick("", "1000 5 7 7 0 0 0"));
        assert!(!same_quick("x 5", "x 5"));
    }
}
