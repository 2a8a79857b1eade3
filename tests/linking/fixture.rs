//! The schema-linking benchmark's data: the business schema and the
//! questions in fixtures/linking/, and the noise real warehouses carry
//! (staging copies, backups, year copies, load logs, audit trails, scratch
//! tables, ETL bookkeeping), added deterministically. Shared by
//! tests/linking.rs (which keeps recall from regressing) and
//! examples/linking_bench.rs (which prints the report).

#![allow(dead_code)]

use aiq::agent::link::{layout, rank, LinkIndex, Signals};
use aiq::schema::{Catalog, ColumnInfo, ForeignKey, Table, TableKind};

pub const SCHEMA: &str = include_str!("../../fixtures/linking/schema.txt");
pub const QUESTIONS: &str = include_str!("../../fixtures/linking/questions.txt");

/// One question and the tables a correct query needs.
pub struct Question {
    pub text: String,
    pub gold: Vec<String>,
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The business tables, as an engine would report them.
pub fn business_tables() -> Vec<Table> {
    let mut tables = Vec::new();
    for line in lines(SCHEMA) {
        let (head, cols) = line.split_once(" | ").expect("NAME ROWS | columns");
        let (name, rows) = head.split_once(' ').expect("NAME ROWS");
        let mut table = Table {
            name: name.to_string(),
            kind: TableKind::Table,
            row_estimate: Some(rows.parse().expect("rows")),
            ..Table::default()
        };
        for col in cols.split(", ") {
            let (def, samples) = match col.split_once(" [") {
                Some((d, s)) => (
                    d,
                    s.trim_end_matches(']')
                        .split(';')
                        .map(str::to_string)
                        .collect(),
                ),
                None => (col, Vec::new()),
            };
            let (def, reference) = match def.split_once(" -> ") {
                Some((d, r)) => (d, Some(r)),
                None => (def, None),
            };
            let mut parts = def.split_whitespace();
            let name = parts.next().expect("column name").to_string();
            let type_name = parts.next().expect("column type").to_uppercase();
            let primary_key = parts.any(|p| p == "pk");
            if let Some(r) = reference {
                let (t, c) = r.split_once('.').expect("TABLE.COLUMN");
                table.foreign_keys.push(ForeignKey {
                    columns: vec![name.clone()],
                    ref_table: t.to_string(),
                    ref_columns: vec![c.to_string()],
                });
            }
            table.columns.push(ColumnInfo {
                name,
                type_name,
                nullable: !primary_key,
                primary_key,
                samples,
            });
        }
        tables.push(table);
    }
    tables
}

/// A copy of `t` under another name, without keys (as staging and backups are).
fn copy(t: &Table, name: String) -> Table {
    let mut c = t.clone();
    c.name = name;
    c.foreign_keys.clear();
    for col in &mut c.columns {
        col.primary_key = false;
    }
    c
}

fn plain(name: &str, columns: &[&str], rows: u64) -> Table {
    Table {
        name: name.into(),
        kind: TableKind::Table,
        row_estimate: Some(rows),
        columns: columns
            .iter()
            .map(|c| ColumnInfo {
                name: c.to_string(),
                type_name: "TEXT".into(),
                nullable: true,
                primary_key: false,
                samples: Vec::new(),
            })
            .collect(),
        ..Table::default()
    }
}

/// The whole warehouse: business tables plus noise, sorted by name as an
/// engine lists them.
pub fn catalog() -> Catalog {
    let business = business_tables();
    let mut tables = business.clone();
    for (i, t) in business.iter().enumerate() {
        tables.push(copy(t, format!("stg_{}", t.name)));
        if i % 2 == 0 {
            tables.push(copy(t, format!("{}_bak", t.name)));
        }
        if i % 3 == 0 {
            tables.push(copy(t, format!("{}_2022", t.name)));
        }
        if i % 3 == 1 {
            tables.push(plain(
                &format!("etl_{}_load_log", t.name),
                &[
                    "run_id",
                    "loaded_at",
                    "rows_loaded",
                    "status",
                    "error_message",
                ],
                40_000,
            ));
        }
        if i % 4 == 0 {
            let key = t.columns.first().map(|c| c.name.as_str()).unwrap_or("id");
            tables.push(plain(
                &format!("audit_{}_changes", t.name),
                &[
                    "change_id",
                    key,
                    "changed_by",
                    "changed_at",
                    "column_name",
                    "old_value",
                    "new_value",
                ],
                900_000,
            ));
        }
        if i % 5 == 0 {
            tables.push(copy(t, format!("tmp_{}", t.name)));
        }
        if i % 4 == 2 {
            tables.push(copy(t, format!("{}_archive", t.name)));
        }
        if i % 3 == 0 {
            tables.push(copy(t, format!("{}_2023", t.name)));
        }
        if i % 3 == 2 {
            tables.push(copy(t, format!("old_{}", t.name)));
        }
        if i % 6 == 1 {
            tables.push(copy(t, format!("{}_copy", t.name)));
        }
        if i % 4 == 3 {
            tables.push(copy(t, format!("{}_snapshot", t.name)));
        }
    }
    for (name, cols) in [
        ("etl_job", &["job_id", "job_name", "schedule", "owner"][..]),
        (
            "etl_job_run",
            &["run_id", "job_id", "started_at", "finished_at", "status"],
        ),
        ("etl_watermark", &["table_name", "last_loaded_at"]),
        (
            "dq_rule",
            &["rule_id", "table_name", "rule_sql", "severity"],
        ),
        (
            "dq_check_result",
            &["check_id", "rule_id", "checked_at", "passed", "failed_rows"],
        ),
        ("schema_migrations", &["version", "applied_at"]),
        ("sys_config", &["key", "value"]),
        ("raw_event_ingest", &["event_id", "payload", "received_at"]),
        (
            "raw_api_payload",
            &["payload_id", "endpoint", "body", "received_at"],
        ),
        (
            "kafka_offsets",
            &["topic", "partition", "offset", "updated_at"],
        ),
        (
            "user_account",
            &["user_id", "login", "password_hash", "last_login_at"],
        ),
        ("app_setting", &["setting_id", "name", "value"]),
    ] {
        tables.push(plain(name, cols, 1_000));
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    Catalog {
        engine: "PostgreSQL 16".into(),
        tables,
    }
}

pub fn questions() -> Vec<Question> {
    lines(QUESTIONS)
        .map(|l| {
            let (text, gold) = l.split_once(" | ").expect("QUESTION | tables");
            Question {
                text: text.to_string(),
                gold: gold.split(", ").map(str::to_string).collect(),
            }
        })
        .collect()
}

/// Questions whose gold tables were all described within `budget` bytes,
/// and the questions that missed some (with what was missing).
pub fn recall(
    catalog: &Catalog,
    index: &LinkIndex,
    questions: &[Question],
    budget: usize,
) -> (usize, Vec<(String, Vec<String>)>) {
    let mut hits = 0;
    let mut misses = Vec::new();
    for q in questions {
        let signals = Signals {
            question: &q.text,
            recent: &[],
            earlier_sql: &[],
        };
        let laid = layout(catalog, index, &rank(catalog, index, &signals), budget);
        let missing: Vec<String> = q
            .gold
            .iter()
            .filter(|g| !laid.described.contains(g))
            .cloned()
            .collect();
        if missing.is_empty() {
            hits += 1;
        } else {
            misses.push((q.text.clone(), missing));
        }
    }
    (hits, misses)
}
