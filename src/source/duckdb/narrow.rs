//! Partition pruning done by aiq (SPEC §4.1, "Data files are datasets"):
//! a query that filters a large partitioned Parquet dataset on its
//! partition columns reads a view of only the files it can need. DuckDB
//! leaves such files unread too, but only after binding a view of every
//! file, which for 10,000 files is most of a query's time.
//!
//! The narrower view is a temporary view of the dataset's name, which
//! DuckDB finds before the kept one, for one statement. Which files a
//! statement can need is read from DuckDB's own parse tree of it: every
//! reference to the dataset must stand in the `FROM` of a `SELECT` (alone,
//! or in plain joins) whose `WHERE` bounds its partition columns with
//! constants — `=`, `<>`, `<`, `<=`, `>`, `>=`, `IN`, `BETWEEN`, and
//! `AND`/`OR` of them. A file is left out only when such a condition is
//! certainly false for it: a value aiq cannot read exactly as DuckDB does
//! (`%`-escapes, the NULL partition, a type other than integers and text)
//! keeps its file. Any other reference — in a `PIVOT`, beside a table
//! function, under a sample, an ASOF, positional or natural join — keeps
//! the whole view, and a narrower view whose columns differ from the whole
//! view's is not used.

use std::path::{Path, PathBuf};
use std::ptr;

use serde_json::{Map, Value as Json};

use super::gate::column_names;
use super::views::Narrowing;
use crate::source::spec::DataFile;

/// A dataset that may be narrowed, with its files' partition values.
pub(crate) struct Narrowable {
    pub view: Narrowing,
    pub files: Vec<PathBuf>,
    /// Each file's partition values, in the order of `view.keys`.
    values: Vec<Vec<Val>>,
}

/// A partition value as DuckDB reads it, where aiq can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Int(i128),
    Text(String),
    /// NULL, an escaped text, a type aiq does not compare: never ruled out.
    Unknown,
}

impl Narrowable {
    /// `view`'s dataset as opened (`file`); `None` when its partition
    /// keys are not the ones the view was built with.
    pub(crate) fn new(view: Narrowing, file: &DataFile) -> Option<Narrowable> {
        let same_keys = file.partitions.len() == view.keys.len()
            && file
                .partitions
                .iter()
                .zip(&view.keys)
                .all(|(p, (key, _))| p.key == *key);
        if !same_keys {
            return None;
        }
        let values = (0..file.parts.len())
            .map(|i| {
                file.partitions
                    .iter()
                    .zip(&view.keys)
                    .map(|(p, (_, ty))| typed(&p.each[i], ty))
                    .collect()
            })
            .collect();
        Some(Narrowable {
            view,
            files: file.parts.clone(),
            values,
        })
    }

    /// The files at `indexes`.
    pub(crate) fn paths(&self, indexes: &[usize]) -> Vec<&Path> {
        indexes.iter().map(|&i| self.files[i].as_path()).collect()
    }
}

/// `value` of a partition folder typed as DuckDB types it (`ty`), where
/// aiq reads it exactly alike.
fn typed(value: &str, ty: &str) -> Val {
    const INTEGERS: [&str; 10] = [
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
    ];
    if INTEGERS.contains(&ty) {
        return value
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-')
            .then(|| value.parse().ok())
            .flatten()
            .map_or(Val::Unknown, Val::Int);
    }
    let unsure = value.contains('%')
        || value == "__HIVE_DEFAULT_PARTITION__"
        || value.eq_ignore_ascii_case("null");
    if ty == "VARCHAR" && !unsure {
        Val::Text(value.to_string())
    } else {
        Val::Unknown
    }
}

/// For each dataset the statement (`tree`, DuckDB's parse tree of it)
/// reads, by index into `datasets`: the files it can need, in path order.
/// A dataset any of whose files may be read is left out.
pub(crate) fn needed(tree: &Json, datasets: &[Narrowable]) -> Vec<(usize, Vec<usize>)> {
    let mut walk = Walk {
        datasets,
        needed: vec![None; datasets.len()],
        whole: vec![false; datasets.len()],
        owned: Vec::new(),
        given_up: false,
    };
    walk.visit(tree);
    if walk.given_up {
        return Vec::new();
    }
    walk.needed
        .into_iter()
        .enumerate()
        .filter(|(d, _)| !walk.whole[*d])
        .filter_map(|(d, mask)| {
            let mask = mask?;
            let files: Vec<usize> = (0..mask.len()).filter(|&i| mask[i]).collect();
            (files.len() < mask.len()).then_some((d, files))
        })
        .collect()
}

struct Walk<'a> {
    datasets: &'a [Narrowable],
    /// Per dataset: the files some reference so far may read (`None`:
    /// not referenced yet).
    needed: Vec<Option<Vec<bool>>>,
    /// Per dataset: a reference that may read any file.
    whole: Vec<bool>,
    /// The references already bounded by their `SELECT`.
    owned: Vec<*const Json>,
    /// The tree holds something the walk does not follow.
    given_up: bool,
}

impl Walk<'_> {
    fn visit(&mut self, node: &Json) {
        match node {
            Json::Array(items) => items.iter().for_each(|item| self.visit(item)),
            Json::Object(map) => {
                if map.contains_key("sample") {
                    // A sample is drawn before `WHERE` filters.
                    self.given_up = true;
                    return;
                }
                match field(map, "type") {
                    "SELECT_NODE" => self.select(map),
                    "BASE_TABLE" => {
                        if let Some(d) = self.dataset_of(map) {
                            if !self.owned.iter().any(|p| ptr::eq(*p, node)) {
                                self.whole[d] = true;
                            }
                        }
                    }
                    // A table function may name a table or run text.
                    "TABLE_FUNCTION" | "SHOW_REF" => self.given_up = true,
                    _ => {}
                }
                map.values().for_each(|value| self.visit(value));
            }
            _ => {}
        }
    }

    fn dataset_of(&self, table: &Map<String, Json>) -> Option<usize> {
        let name = field(table, "table_name").to_lowercase();
        self.datasets
            .iter()
            .position(|n| n.view.table.to_lowercase() == name)
    }

    /// A `SELECT`: what its `WHERE` leaves of each dataset in its `FROM`.
    fn select(&mut self, select: &Map<String, Json>) {
        let Some(from) = select.get("from_table") else {
            return;
        };
        let mut leaves = Vec::new();
        join_leaves(from, &mut leaves);
        // An unqualified column is the dataset's only when it is alone.
        let alone = field_of(from, "type") == "BASE_TABLE";
        let condition = select.get("where_clause");
        let datasets = self.datasets;
        for leaf in leaves {
            let Json::Object(table) = leaf else { continue };
            let Some(d) = self.dataset_of(table) else {
                continue;
            };
            self.owned.push(leaf as *const Json);
            let binding = match field(table, "alias") {
                "" => field(table, "table_name"),
                alias => alias,
            };
            let scope = Scope {
                binding,
                alone,
                keys: &datasets[d].view.keys,
            };
            let bound = condition.map_or(Bound::Any, |c| scope.bound(c));
            let values = &datasets[d].values;
            let mask = self.needed[d].get_or_insert_with(|| vec![false; values.len()]);
            for (i, row) in values.iter().enumerate() {
                if !mask[i] {
                    mask[i] = !bound.rules_out(row);
                }
            }
        }
    }
}

/// The tables of a `FROM` joined plainly (inner, outer, semi, anti or
/// cross joins), where a `WHERE` on a table's columns drops the rows of
/// that table it is false for.
fn join_leaves<'t>(from: &'t Json, out: &mut Vec<&'t Json>) {
    match field_of(from, "type") {
        "BASE_TABLE" => out.push(from),
        "JOIN" => {
            let plain = matches!(field_of(from, "ref_type"), "REGULAR" | "CROSS")
                && matches!(
                    field_of(from, "join_type"),
                    "INNER" | "LEFT" | "RIGHT" | "OUTER" | "SEMI" | "ANTI"
                );
            if plain {
                for side in ["left", "right"] {
                    if let Some(node) = from.get(side) {
                        join_leaves(node, out);
                    }
                }
            }
        }
        _ => {}
    }
}

/// How a `WHERE` names one reference's partition columns.
struct Scope<'a> {
    /// The reference's alias, or its table name.
    binding: &'a str,
    /// Whether it is the only table of its `FROM`.
    alone: bool,
    keys: &'a [(String, String)],
}

impl Scope<'_> {
    /// What `condition` says of the partition columns, read once for all
    /// the files.
    fn bound(&self, condition: &Json) -> Bound {
        match (field_of(condition, "class"), field_of(condition, "type")) {
            ("CONJUNCTION", "CONJUNCTION_AND") => {
                Bound::All(children(condition).iter().map(|c| self.bound(c)).collect())
            }
            ("CONJUNCTION", "CONJUNCTION_OR") => match children(condition) {
                [] => Bound::Any,
                all => Bound::Either(all.iter().map(|c| self.bound(c)).collect()),
            },
            ("COMPARISON", op) => {
                let (Some(left), Some(right)) = (condition.get("left"), condition.get("right"))
                else {
                    return Bound::Any;
                };
                let Some(op) = Op::of(op) else {
                    return Bound::Any;
                };
                let found = match (self.key(left), self.key(right)) {
                    (Some(k), None) => constant(right).map(|c| (k, op, c)),
                    (None, Some(k)) => constant(left).map(|c| (k, op.flipped(), c)),
                    _ => None,
                };
                found.map_or(Bound::Any, |(key, op, c)| Bound::Compare(key, op, c))
            }
            ("OPERATOR", "COMPARE_IN") => {
                let Some((first, list)) = children(condition).split_first() else {
                    return Bound::Any;
                };
                let constants: Option<Vec<Val>> = list.iter().map(constant).collect();
                match (self.key(first), constants) {
                    (Some(key), Some(cs)) if !cs.is_empty() => Bound::In(key, cs),
                    _ => Bound::Any,
                }
            }
            ("BETWEEN", _) => match (
                condition.get("input").and_then(|c| self.key(c)),
                condition.get("lower").and_then(constant),
                condition.get("upper").and_then(constant),
            ) {
                (Some(key), Some(low), Some(high)) => Bound::All(vec![
                    Bound::Compare(key, Op::Ge, low),
                    Bound::Compare(key, Op::Le, high),
                ]),
                _ => Bound::Any,
            },
            _ => Bound::Any,
        }
    }

    /// The partition key a column reference names, by index.
    fn key(&self, expr: &Json) -> Option<usize> {
        if field_of(expr, "class") != "COLUMN_REF" {
            return None;
        }
        let names = column_names(expr)?;
        let column = match names.as_slice() {
            [column] if self.alone => column,
            [table, column] if same_name(table, self.binding) => column,
            _ => return None,
        };
        self.keys.iter().position(|(k, _)| same_name(k, column))
    }
}

/// DuckDB's identifiers match regardless of case.
fn same_name(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// A literal integer or text constant.
fn constant(expr: &Json) -> Option<Val> {
    if field_of(expr, "class") != "CONSTANT" {
        return None;
    }
    let value = expr.get("value")?;
    if value.get("is_null").and_then(Json::as_bool) != Some(false) {
        return None;
    }
    let id = value.get("type")?.get("id")?.as_str()?;
    let v = value.get("value")?;
    match id {
        "TINYINT" | "SMALLINT" | "INTEGER" | "BIGINT" | "UTINYINT" | "USMALLINT" | "UINTEGER"
        | "UBIGINT" => v
            .as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
            .map(Val::Int),
        "VARCHAR" => v.as_str().map(|s| Val::Text(s.to_string())),
        _ => None,
    }
}

/// What a `WHERE` says of one reference's partition columns (keys by
/// index).
enum Bound {
    All(Vec<Bound>),
    Either(Vec<Bound>),
    Compare(usize, Op, Val),
    In(usize, Vec<Val>),
    /// Nothing aiq reads: no file is ruled out by it.
    Any,
}

impl Bound {
    /// Whether it is certainly false for a file of partition values `row`.
    fn rules_out(&self, row: &[Val]) -> bool {
        match self {
            Bound::All(all) => all.iter().any(|b| b.rules_out(row)),
            Bound::Either(all) => all.iter().all(|b| b.rules_out(row)),
            Bound::Compare(key, op, c) => compare(&row[*key], *op, c) == Some(false),
            Bound::In(key, cs) => cs
                .iter()
                .all(|c| compare(&row[*key], Op::Eq, c) == Some(false)),
            Bound::Any => false,
        }
    }
}

/// The comparisons aiq reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Op {
    /// DuckDB's name of it in a parse tree.
    fn of(name: &str) -> Option<Op> {
        Some(match name {
            "COMPARE_EQUAL" => Op::Eq,
            "COMPARE_NOTEQUAL" => Op::Ne,
            "COMPARE_LESSTHAN" => Op::Lt,
            "COMPARE_GREATERTHAN" => Op::Gt,
            "COMPARE_LESSTHANOREQUALTO" => Op::Le,
            "COMPARE_GREATERTHANOREQUALTO" => Op::Ge,
            _ => return None,
        })
    }

    /// The comparison with its sides swapped (`5 < year` is `year > 5`).
    fn flipped(self) -> Op {
        match self {
            Op::Lt => Op::Gt,
            Op::Gt => Op::Lt,
            Op::Le => Op::Ge,
            Op::Ge => Op::Le,
            same => same,
        }
    }
}

/// `a op b` where aiq knows it as DuckDB would; `None` where it does not.
fn compare(a: &Val, op: Op, b: &Val) -> Option<bool> {
    use std::cmp::Ordering::*;
    let order = match (a, b) {
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        // Text only for (in)equality: its order depends on a collation.
        (Val::Text(x), Val::Text(y)) if matches!(op, Op::Eq | Op::Ne) => x.cmp(y),
        _ => return None,
    };
    Some(match op {
        Op::Eq => order == Equal,
        Op::Ne => order != Equal,
        Op::Lt => order == Less,
        Op::Gt => order == Greater,
        Op::Le => order != Greater,
        Op::Ge => order != Less,
    })
}

fn children(node: &Json) -> &[Json] {
    node.get("children")
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

fn field<'a>(map: &'a Map<String, Json>, key: &str) -> &'a str {
    map.get(key).and_then(Json::as_str).unwrap_or("")
}

fn field_of<'a>(node: &'a Json, key: &str) -> &'a str {
    node.get(key).and_then(Json::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::duckdb::dataset::{dataset, Found};
    use crate::source::duckdb::gate::DuckGate;
    use crate::source::spec::DataFileKind;

    /// `sales`: `year` 2020–2023 (and the NULL partition) × `region`
    /// a, b and an escaped `c/d`, one file each, in path order.
    fn sales() -> Narrowable {
        let root = PathBuf::from("/lake/sales");
        let mut parts = Vec::new();
        for year in ["2020", "2021", "2022", "2023", "__HIVE_DEFAULT_PARTITION__"] {
            for region in ["a", "b", "c%2Fd"] {
                parts.push(Found {
                    path: root.join(format!("year={year}/region={region}/data_0.parquet")),
                    kind: DataFileKind::Parquet,
                    stamp: None,
                });
            }
        }
        let file = dataset("sales".into(), root, parts).unwrap();
        let view = Narrowing {
            table: "sales".into(),
            function: "read_parquet".into(),
            options: String::new(),
            columns: Vec::new(),
            keys: vec![
                ("year".into(), "BIGINT".into()),
                ("region".into(), "VARCHAR".into()),
            ],
        };
        Narrowable::new(view, &file).unwrap()
    }

    /// The `year=…/region=…` folders `sql` can need; `None` when it may
    /// read every file.
    fn needs(sql: &str) -> Option<Vec<String>> {
        // A PIVOT without its values is two statements to DuckDB: no tree.
        let tree = DuckGate::open().unwrap().query_tree(sql)?;
        let sales = sales();
        let found = needed(&tree, std::slice::from_ref(&sales));
        let [(0, files)] = found.as_slice() else {
            assert!(found.is_empty(), "{sql}");
            return None;
        };
        Some(
            files
                .iter()
                .map(|&i| {
                    let p = &sales.files[i];
                    let rel = p.strip_prefix("/lake/sales").unwrap().parent().unwrap();
                    rel.display().to_string()
                })
                .collect(),
        )
    }

    /// The folders of `years` (a file of the NULL year is always kept),
    /// all three regions each.
    fn years(years: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for year in years.iter().chain(&["__HIVE_DEFAULT_PARTITION__"]) {
            for region in ["a", "b", "c%2Fd"] {
                out.push(format!("year={year}/region={region}"));
            }
        }
        out
    }

    #[test]
    fn constants_on_partition_columns_leave_files_out() {
        let y2022 = Some(years(&["2022"]));
        assert_eq!(needs("SELECT * FROM sales WHERE year = 2022"), y2022);
        assert_eq!(needs("SELECT * FROM sales WHERE 2022 = year"), y2022);
        assert_eq!(needs("FROM sales WHERE year = 2022"), y2022);
        assert_eq!(
            needs("EXPLAIN SELECT * FROM sales WHERE year = 2022"),
            y2022
        );
        assert_eq!(
            needs("SELECT count(*) FROM Sales AS S WHERE s.YEAR = 2022 AND amount > 3"),
            y2022
        );
        let later = Some(years(&["2022", "2023"]));
        assert_eq!(needs("SELECT * FROM sales WHERE year > 2021"), later);
        assert_eq!(needs("SELECT * FROM sales WHERE 2021 < year"), later);
        assert_eq!(needs("SELECT * FROM sales WHERE year >= 2022"), later);
        assert_eq!(
            needs("SELECT * FROM sales WHERE year BETWEEN 2022 AND 2030"),
            later
        );
        assert_eq!(
            needs("SELECT * FROM sales WHERE year IN (2022, 2023, 1999)"),
            later
        );
        assert_eq!(
            needs("SELECT * FROM sales WHERE year = 2022 OR (year = 2023 AND id > 1)"),
            later
        );
        // DuckDB's parser reads `NOT x = y` as `x <> y`.
        assert_eq!(
            needs("SELECT * FROM sales WHERE NOT year = 2022"),
            Some(years(&["2020", "2021", "2023"]))
        );
        assert_eq!(
            needs("SELECT * FROM sales WHERE year <= 2020 AND year <> 2019"),
            Some(years(&["2020"]))
        );
        // Text by equality; the escaped value and the NULL year stay.
        assert_eq!(
            needs("SELECT * FROM sales WHERE year = 2021 AND region = 'a'"),
            Some(vec![
                "year=2021/region=a".into(),
                "year=2021/region=c%2Fd".into(),
                "year=__HIVE_DEFAULT_PARTITION__/region=a".into(),
                "year=__HIVE_DEFAULT_PARTITION__/region=c%2Fd".into(),
            ])
        );
        // No year matches: only the files aiq cannot rule out.
        assert_eq!(
            needs("SELECT * FROM sales WHERE year = 1999"),
            Some(years(&[]))
        );
    }

    #[test]
    fn every_reference_must_be_bounded() {
        // Each reference's own bounds, together.
        assert_eq!(
            needs(
                "SELECT * FROM sales WHERE year = 2020 UNION ALL \
                 SELECT * FROM sales WHERE year = 2023"
            ),
            Some(years(&["2020", "2023"]))
        );
        assert_eq!(
            needs("WITH x AS (SELECT * FROM sales WHERE year = 2021) SELECT count(*) FROM x"),
            Some(years(&["2021"]))
        );
        assert_eq!(
            needs(
                "PIVOT (SELECT * FROM sales WHERE year = 2021) ON region IN ('a') USING count(*)"
            ),
            Some(years(&["2021"]))
        );
        assert_eq!(
            needs(
                "SELECT * FROM sales a JOIN sales b ON a.id = b.id AND b.year = 2021 \
                 WHERE a.year = 2020"
            ),
            None,
            "b is bounded in its ON clause only"
        );
        assert_eq!(
            needs(
                "SELECT * FROM sales a LEFT JOIN customers c ON c.id = a.id \
                 WHERE a.year = 2020 AND c.name = 'x'"
            ),
            Some(years(&["2020"]))
        );
        for whole in [
            "SELECT * FROM sales",
            "SELECT * FROM sales WHERE year = 2022 OR amount > 1",
            "SELECT * FROM sales WHERE NOT (year = 2022 OR region = 'a')",
            "SELECT * FROM sales WHERE year = '2022'",
            "SELECT * FROM sales WHERE year = 2022.0",
            "SELECT * FROM sales WHERE year = 2022::BIGINT",
            "SELECT * FROM sales WHERE region > 'a'",
            "SELECT * FROM sales WHERE year IS NOT DISTINCT FROM 2022",
            "SELECT * FROM (SELECT * FROM sales) WHERE year = 2022",
            "SELECT * FROM sales s JOIN customers c ON c.id = s.id WHERE year = 2022",
            "SELECT * FROM sales x WHERE sales.year = 2022",
            "SELECT * FROM sales WHERE year = 2022 UNION ALL SELECT * FROM sales",
            "SELECT * FROM sales s WHERE year = 2022 AND id IN (SELECT id FROM sales)",
            "SELECT * FROM customers c ASOF JOIN sales s ON c.id >= s.id WHERE s.year = 2022",
            "SELECT * FROM customers POSITIONAL JOIN sales WHERE year = 2022",
            "SELECT * FROM customers NATURAL JOIN sales WHERE sales.year = 2022",
            "SELECT * FROM sales USING SAMPLE 10 WHERE year = 2022",
            "SELECT * FROM sales TABLESAMPLE 10% WHERE year = 2022",
            "SELECT * FROM sales, range(3) WHERE year = 2022",
            "SELECT * FROM query_table('sales') WHERE year = 2022",
            "PIVOT sales ON region IN ('a', 'b') USING count(*)",
            "PIVOT sales ON region USING count(*)",
            "DESCRIBE sales",
            "SUMMARIZE SELECT * FROM sales WHERE year = 2022",
        ] {
            assert_eq!(needs(whole), None, "{whole}");
        }
    }

    #[test]
    fn values_are_typed_as_duckdb_reads_them() {
        assert_eq!(typed("05", "BIGINT"), Val::Int(5));
        assert_eq!(typed("-3", "INTEGER"), Val::Int(-3));
        for unsure in ["+5", "5.0", " 5", "1_000", "__HIVE_DEFAULT_PARTITION__"] {
            assert_eq!(typed(unsure, "BIGINT"), Val::Unknown, "{unsure}");
        }
        assert_eq!(typed("eu", "VARCHAR"), Val::Text("eu".into()));
        for unsure in ["a%2Fb", "NULL", "__HIVE_DEFAULT_PARTITION__"] {
            assert_eq!(typed(unsure, "VARCHAR"), Val::Unknown, "{unsure}");
        }
        assert_eq!(typed("2024-01-01", "DATE"), Val::Unknown);
    }
}
