//! An evaluation suite (SPEC §13): a TOML file of questions (or follow-up
//! conversations) with the reference SQL whose result a correct answer
//! must match.

use std::path::Path;

use serde::Deserialize;
use sqlparser::ast::{
    Expr, LimitClause, OrderByKind, SelectItem, SetExpr, Statement, Value as SqlValue,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

/// A suite as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    source: Option<String>,
    #[serde(rename = "case", default)]
    cases: Vec<CaseFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    id: Option<String>,
    question: Option<String>,
    turns: Option<Vec<String>>,
    sql: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    ordered: Option<bool>,
}

/// A suite, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// What reports call it: the file's name.
    pub name: String,
    /// The source named in the file, if any (SOURCE on the command line wins).
    pub source: Option<String>,
    pub cases: Vec<Case>,
}

/// One case: the turns asked in order; the answer to the last is compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    /// At least one; earlier turns are the conversation the last follows.
    pub turns: Vec<String>,
    /// The reference SQL.
    pub sql: String,
    pub tags: Vec<String>,
    /// Whether row order matters.
    pub ordered: bool,
    /// The columns of the reference result its ORDER BY sorts by, when
    /// they can be told: rows tied on them may come in any order.
    pub order_keys: Option<Vec<usize>>,
}

impl Case {
    /// The question whose answer is compared.
    pub fn question(&self) -> &str {
        self.turns.last().map(String::as_str).unwrap_or("")
    }

    /// A follow-up: more than one turn.
    pub fn is_follow_up(&self) -> bool {
        self.turns.len() > 1
    }
}

impl Suite {
    /// Reads the suite at `path`; the error says which case is wrong.
    pub fn load(path: &Path) -> Result<Suite, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the suite {}: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Suite::parse(&name, &text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a suite from its text.
    pub fn parse(name: &str, text: &str) -> Result<Suite, String> {
        let file: SuiteFile = toml::from_str(text).map_err(|e| e.to_string())?;
        if file.cases.is_empty() {
            return Err("the suite has no [[case]]".into());
        }
        let mut cases = Vec::with_capacity(file.cases.len());
        for (i, c) in file.cases.into_iter().enumerate() {
            let number = i + 1;
            let id = c.id.unwrap_or_else(|| number.to_string());
            let at = || format!("case {id} (number {number})");
            let turns = match (c.question, c.turns) {
                (Some(q), None) => vec![q],
                (None, Some(t)) => t,
                (Some(_), Some(_)) => {
                    return Err(format!("{}: give `question` or `turns`, not both", at()))
                }
                (None, None) => return Err(format!("{}: no `question` (or `turns`)", at())),
            };
            if turns.is_empty() || turns.iter().any(|t| t.trim().is_empty()) {
                return Err(format!("{}: an empty question", at()));
            }
            let sql = c.sql.unwrap_or_default();
            if sql.trim().is_empty() {
                return Err(format!("{}: no reference `sql`", at()));
            }
            if cases.iter().any(|k: &Case| k.id == id) {
                return Err(format!("{}: the id is used twice", at()));
            }
            let (ends_ordered, order_keys) = order_of(&sql);
            let ordered = c.ordered.unwrap_or(ends_ordered);
            cases.push(Case {
                id,
                turns: turns.into_iter().map(|t| t.trim().to_string()).collect(),
                sql: sql.trim().to_string(),
                tags: c.tags,
                ordered,
                order_keys: if ordered { order_keys } else { None },
            });
        }
        Ok(Suite {
            name: name.to_string(),
            source: file.source,
            cases,
        })
    }

    /// The cases carrying any of `tags` (all when `tags` is empty).
    pub fn select(&mut self, tags: &[String]) {
        if tags.is_empty() {
            return;
        }
        self.cases
            .retain(|c| c.tags.iter().any(|t| tags.iter().any(|w| w == t)));
    }
}

/// Whether `sql` ends in a top-level ORDER BY, and which of its result
/// columns that sorts by (`None` when one of its keys is no result
/// column, or the SQL does not parse here).
/// Rows past a reference's `LIMIT` fetched to find the rows that tie at
/// its cut.
pub const TIE_ROOM: u64 = 100;

/// For a reference that orders its rows and cuts them at `LIMIT n` (no
/// OFFSET): `n`, and the same statement cut [`TIE_ROOM`] rows later, to
/// find which rows tie with the last one kept.
pub fn past_the_limit(sql: &str) -> Option<(usize, String)> {
    let mut statements = Parser::parse_sql(&GenericDialect {}, sql).ok()?;
    let [Statement::Query(query)] = statements.as_mut_slice() else {
        return None;
    };
    query.order_by.as_ref()?;
    let Some(LimitClause::LimitOffset {
        limit: Some(Expr::Value(v)),
        offset: None,
        limit_by,
    }) = &mut query.limit_clause
    else {
        return None;
    };
    if !limit_by.is_empty() {
        return None;
    }
    let SqlValue::Number(n, long) = &v.value else {
        return None;
    };
    let n: u64 = n.parse().ok()?;
    v.value = SqlValue::Number((n + TIE_ROOM).to_string(), *long);
    Some((usize::try_from(n).ok()?, query.to_string()))
}

fn order_of(sql: &str) -> (bool, Option<Vec<usize>>) {
    let Ok(statements) = Parser::parse_sql(&GenericDialect {}, sql) else {
        return (ends_in_order_by(sql), None);
    };
    let [Statement::Query(query)] = statements.as_slice() else {
        return (false, None);
    };
    let Some(order) = &query.order_by else {
        return (false, None);
    };
    let OrderByKind::Expressions(exprs) = &order.kind else {
        return (true, None);
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return (true, None);
    };
    let items = &select.projection;
    let mut keys = Vec::with_capacity(exprs.len());
    for e in exprs {
        match key_column(&e.expr, items) {
            Some(k) => keys.push(k),
            None => return (true, None),
        }
    }
    (true, Some(keys))
}

/// The result column an ORDER BY expression names: by position, by alias
/// or column name, or as the same expression as a select item.
fn key_column(expr: &Expr, items: &[SelectItem]) -> Option<usize> {
    if items.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    }) {
        return None;
    }
    if let Expr::Value(v) = expr {
        if let SqlValue::Number(n, _) = &v.value {
            let n: usize = n.parse().ok()?;
            return (1..=items.len()).contains(&n).then(|| n - 1);
        }
    }
    let name = match expr {
        Expr::Identifier(i) => Some(i.value.to_lowercase()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.to_lowercase()),
        _ => None,
    };
    let text = expr.to_string().to_lowercase();
    items.iter().position(|item| match item {
        SelectItem::ExprWithAlias { alias, expr: e } => {
            name.as_deref() == Some(alias.value.to_lowercase().as_str())
                || e.to_string().to_lowercase() == text
        }
        SelectItem::UnnamedExpr(e) => {
            let own = match e {
                Expr::Identifier(i) => Some(i.value.to_lowercase()),
                Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.to_lowercase()),
                _ => None,
            };
            (name.is_some() && own == name) || e.to_string().to_lowercase() == text
        }
        _ => false,
    })
}

/// For SQL this parser cannot read: a top-level ORDER BY after the last
/// closing parenthesis.
fn ends_in_order_by(sql: &str) -> bool {
    let lower = sql.to_lowercase();
    let tail = lower.rsplit(')').next().unwrap_or(&lower);
    tail.split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w == ["order", "by"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_questions_follow_ups_and_order() {
        let suite = Suite::parse(
            "s.toml",
            r#"
source = "demo"
[[case]]
id = "top"
question = "Top countries?"
sql = "SELECT country, count(*) AS n FROM customers GROUP BY 1 ORDER BY n DESC, 1 LIMIT 5"
tags = ["aggregate", "easy"]
[[case]]
turns = ["Revenue per month", "only delivered"]
sql = "SELECT strftime('%m', ordered_at) m, sum(total) FROM orders GROUP BY m"
[[case]]
question = "Orders by status"
sql = "SELECT status, count(*) FROM orders GROUP BY status ORDER BY count(*) DESC"
ordered = false
[[case]]
question = "Newest"
sql = "SELECT o.id, o.total FROM orders o ORDER BY o.ordered_at DESC LIMIT 3"
"#,
        )
        .unwrap();
        assert_eq!(suite.source.as_deref(), Some("demo"));
        let c = &suite.cases;
        assert_eq!(c[0].id, "top");
        assert!(c[0].ordered);
        assert_eq!(c[0].order_keys, Some(vec![1, 0]));
        assert_eq!(c[1].id, "2");
        assert!(c[1].is_follow_up() && !c[1].ordered);
        assert_eq!(c[1].question(), "only delivered");
        assert!(!c[2].ordered && c[2].order_keys.is_none());
        // Sorted by a column the result does not hold: exact order.
        assert!(c[3].ordered && c[3].order_keys.is_none());
    }

    #[test]
    fn mistakes_are_named() {
        let err = |text: &str| Suite::parse("s", text).unwrap_err();
        assert!(err("").contains("no [[case]]"));
        assert!(err("[[case]]\nsql = \"SELECT 1\"").contains("case 1"));
        assert!(err("[[case]]\nquestion = \"q\"").contains("no reference `sql`"));
        assert!(err("[[case]]\nid=\"a\"\nquestion = \"q\"\nsql=\"SELECT 1\"\n[[case]]\nid=\"a\"\nquestion = \"r\"\nsql=\"SELECT 1\"")
            .contains("used twice"));
        assert!(
            err("[[case]]\nquestion = \"q\"\nturns=[\"a\"]\nsql=\"SELECT 1\"").contains("not both")
        );
        assert!(err("[[case]]\nquestion = \"q\"\nsql=\"SELECT 1\"\nbogus = 1").contains("bogus"));
    }

    #[test]
    fn tags_select() {
        let mut suite = Suite::parse(
            "s",
            "[[case]]\nquestion=\"a\"\nsql=\"SELECT 1\"\ntags=[\"x\"]\n[[case]]\nquestion=\"b\"\nsql=\"SELECT 2\"\ntags=[\"y\"]",
        )
        .unwrap();
        suite.select(&["y".to_string()]);
        assert_eq!(suite.cases.len(), 1);
        assert_eq!(suite.cases[0].question(), "b");
    }
}
