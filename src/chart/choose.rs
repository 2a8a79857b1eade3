//! The kind chooser: from typed columns (and what was asked), which kind
//! of chart and which columns go where. Pure.
//!
//! Without a kind: a time column and numbers → line; a category (text, or
//! an `…_id`) and numbers → bar; two numbers → line when the first only
//! grows (a year, a step), else scatter; one number → histogram. A kind or
//! columns named by the user win, and a choice that cannot work says why.

use super::columns::{Class, ColumnInfo};
use super::spec::{ChartSpec, Kind};

/// Series drawn at most; more number columns are left out (and said so).
pub const MAX_SERIES: usize = 6;

/// What goes where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub kind: Kind,
    /// The x column (bar: labels; hist: the binned column); `None`: rows in order.
    pub x: Option<usize>,
    /// The value columns, one series each (empty for a histogram).
    pub y: Vec<usize>,
    /// Number columns not drawn (more than [`MAX_SERIES`]).
    pub left_out: Vec<String>,
}

/// Chooses the kind and the columns for `cols` as `spec` asks.
pub fn choose(cols: &[ColumnInfo], spec: &ChartSpec) -> Result<Plan, String> {
    let x = spec.x.as_deref().map(|n| find(cols, n)).transpose()?;
    let mut ys = Vec::new();
    for name in &spec.y {
        let i = find(cols, name)?;
        if cols[i].class != Class::Number {
            return Err(format!(
                "y={} is not a number column ({})",
                cols[i].name,
                what(cols[i].class)
            ));
        }
        ys.push(i);
    }
    if let Some(i) = x {
        if cols[i].class == Class::Empty {
            return Err(format!("x={} has only NULLs", cols[i].name));
        }
    }
    if !cols.iter().any(|c| c.class == Class::Number) {
        return Err(no_number(cols));
    }
    let kind = match spec.kind {
        Some(kind) => kind,
        None => auto(cols, x, &ys),
    };
    let plan = match kind {
        Kind::Hist => hist(cols, x, &ys)?,
        Kind::Bar => {
            let x = x.or_else(|| bar_labels(cols));
            with_values(Kind::Bar, cols, x, ys)?
        }
        Kind::Line => {
            let x = x.or_else(|| line_x(cols));
            with_values(Kind::Line, cols, x, ys)?
        }
        Kind::Scatter => scatter(cols, x, ys)?,
    };
    Ok(plan)
}

/// The kind when none was asked for.
fn auto(cols: &[ColumnInfo], x: Option<usize>, ys: &[usize]) -> Kind {
    if let Some(i) = x {
        let c = &cols[i];
        return match c.class {
            Class::Time(_) => Kind::Line,
            Class::Number if c.id_like => Kind::Bar,
            Class::Number if c.ordered => Kind::Line,
            Class::Number if ys.is_empty() && measures(cols, Some(i)).is_empty() => Kind::Hist,
            Class::Number => Kind::Scatter,
            Class::Category | Class::Empty => Kind::Bar,
        };
    }
    let values = if ys.is_empty() {
        measures(cols, None)
    } else {
        ys.to_vec()
    };
    let others = |i: usize| values.iter().any(|v| *v != i);
    if cols.iter().any(|c| c.is_time() && others(c.index)) {
        Kind::Line
    } else if cols.iter().any(|c| c.is_label() && others(c.index)) {
        Kind::Bar
    } else if values.len() >= 2 {
        if cols[values[0]].ordered {
            Kind::Line
        } else {
            Kind::Scatter
        }
    } else {
        Kind::Hist
    }
}

/// Numbers that measure something (ids are labels), except `x`; ids too
/// when there is nothing else.
fn measures(cols: &[ColumnInfo], x: Option<usize>) -> Vec<usize> {
    let pick = |strict: bool| -> Vec<usize> {
        cols.iter()
            .filter(|c| Some(c.index) != x)
            .filter(|c| {
                if strict {
                    c.is_measure()
                } else {
                    c.class == Class::Number
                }
            })
            .map(|c| c.index)
            .collect()
    };
    let strict = pick(true);
    if strict.is_empty() {
        pick(false)
    } else {
        strict
    }
}

fn hist(cols: &[ColumnInfo], x: Option<usize>, ys: &[usize]) -> Result<Plan, String> {
    let column = ys
        .first()
        .copied()
        .or(x)
        .or_else(|| measures(cols, None).first().copied())
        .ok_or_else(|| no_number(cols))?;
    if cols[column].class != Class::Number {
        return Err(format!(
            "a histogram needs a number column; {} is {}",
            cols[column].name,
            what(cols[column].class)
        ));
    }
    Ok(Plan {
        kind: Kind::Hist,
        x: Some(column),
        y: Vec::new(),
        left_out: Vec::new(),
    })
}

/// Bar labels: a category, else a time, else the first of several numbers.
fn bar_labels(cols: &[ColumnInfo]) -> Option<usize> {
    cols.iter()
        .find(|c| c.is_label())
        .or_else(|| cols.iter().find(|c| c.is_time()))
        .or_else(|| {
            let numbers: Vec<&ColumnInfo> =
                cols.iter().filter(|c| c.class == Class::Number).collect();
            (numbers.len() >= 2).then(|| numbers[0])
        })
        .map(|c| c.index)
}

/// A line's x: a time, else an ordered number, else the first of several
/// numbers, else a category; none: rows in order.
fn line_x(cols: &[ColumnInfo]) -> Option<usize> {
    cols.iter()
        .find(|c| c.is_time())
        .or_else(|| cols.iter().find(|c| c.ordered))
        .or_else(|| {
            let numbers: Vec<&ColumnInfo> =
                cols.iter().filter(|c| c.class == Class::Number).collect();
            (numbers.len() >= 2).then(|| numbers[0])
        })
        .or_else(|| cols.iter().find(|c| c.is_label()))
        .map(|c| c.index)
}

fn scatter(cols: &[ColumnInfo], x: Option<usize>, ys: Vec<usize>) -> Result<Plan, String> {
    let x = match x {
        Some(i) => i,
        None => *cols
            .iter()
            .filter(|c| c.is_measure() || c.is_time())
            .map(|c| &c.index)
            .find(|i| !ys.contains(i))
            .ok_or("a scatter chart needs two number columns")?,
    };
    if !matches!(cols[x].class, Class::Number | Class::Time(_)) {
        return Err(format!(
            "a scatter chart needs numbers on x; {} is {}",
            cols[x].name,
            what(cols[x].class)
        ));
    }
    if ys.is_empty() && measures(cols, Some(x)).is_empty() {
        return Err("a scatter chart needs two number columns".into());
    }
    let plan = with_values(Kind::Scatter, cols, Some(x), ys)?;
    Ok(plan)
}

/// A plan with `x` and the value columns: `ys`, or every measure but `x`.
fn with_values(
    kind: Kind,
    cols: &[ColumnInfo],
    x: Option<usize>,
    ys: Vec<usize>,
) -> Result<Plan, String> {
    let mut y = if ys.is_empty() { measures(cols, x) } else { ys };
    if y.is_empty() {
        return Err(format!(
            "a {kind} chart needs a number column besides {}",
            x.map_or("the x axis", |i| cols[i].name.as_str())
        ));
    }
    if let Some(i) = y.iter().find(|i| cols[**i].class == Class::Empty) {
        return Err(format!("{} has only NULLs", cols[*i].name));
    }
    let left_out = y
        .split_off(y.len().min(MAX_SERIES))
        .into_iter()
        .map(|i| cols[i].name.clone())
        .collect();
    Ok(Plan {
        kind,
        x,
        y,
        left_out,
    })
}

fn find(cols: &[ColumnInfo], name: &str) -> Result<usize, String> {
    cols.iter()
        .find(|c| c.name == name)
        .or_else(|| cols.iter().find(|c| c.name.eq_ignore_ascii_case(name)))
        .map(|c| c.index)
        .ok_or_else(|| {
            let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
            format!(
                "no column named {name} (the result has {})",
                names.join(", ")
            )
        })
}

fn what(class: Class) -> &'static str {
    match class {
        Class::Number => "numbers",
        Class::Time(_) => "dates or times",
        Class::Category => "text",
        Class::Empty => "only NULLs",
    }
}

fn no_number(cols: &[ColumnInfo]) -> String {
    if cols.iter().all(|c| c.class == Class::Empty) {
        "every value is NULL".into()
    } else {
        "it has no number column (a chart needs a count, a sum or another number)".into()
    }
}

#[cfg(test)]
#[path = "choose_tests.rs"]
mod tests;
