//! Values crossing between the database and Lua. Into Lua (rows of
//! `aiq.query`): integers, floats, strings, booleans, `nil` for NULL, dates
//! and times as ISO text, exact decimals as numbers. Out of Lua (cells of
//! `aiq.table`, parameters of `aiq.query`): the same types back, `aiq.null`
//! for an explicit NULL, nested tables as JSON.

use mlua::{BString, Either, Integer, LightUserData, Table, Value as LuaValue};

use super::json;
use super::params::{Param, Params};
use crate::source::Value;

/// `aiq.null`: a NULL where Lua's `nil` cannot stand (inside lists and
/// parameter tables, from `aiq.json_decode`).
pub fn null() -> LuaValue {
    LuaValue::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// True for `aiq.null`.
pub fn is_null(v: &LuaValue) -> bool {
    matches!(v, LuaValue::LightUserData(p) if p.0.is_null())
}

/// A result cell ready to go onto the Lua stack as it is: integer, float,
/// boolean, borrowed text, or bytes made for the occasion.
pub type Cell<'a> = Either<Either<Integer, f64>, Either<bool, Either<&'a str, BString>>>;

/// A result cell as Lua sees it; `None` for NULL (the key stays unset, so
/// it reads as `nil`). Scalars and text go onto the Lua stack directly,
/// without an intermediate Lua value, which keeps 100,000 rows into Lua
/// fast.
pub fn cell(v: &Value) -> Option<Cell<'_>> {
    fn int<'a>(i: Integer) -> Cell<'a> {
        Either::Left(Either::Left(i))
    }
    fn float<'a>(f: f64) -> Cell<'a> {
        Either::Left(Either::Right(f))
    }
    fn text(s: &str) -> Cell<'_> {
        Either::Right(Either::Right(Either::Left(s)))
    }
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => Either::Right(Either::Left(*b)),
        Value::Int(i) => int(*i),
        Value::BigInt(i) => match Integer::try_from(*i) {
            Ok(i) => int(i),
            Err(_) => float(*i as f64),
        },
        Value::Float(f) => float(*f),
        Value::Decimal(s) => match decimal(s) {
            Some(Ok(i)) => int(i),
            Some(Err(f)) => float(f),
            None => text(s),
        },
        Value::Text(s) | Value::Json(s) | Value::Other(s) => text(s),
        // Lua strings hold any bytes.
        Value::Blob(b) => Either::Right(Either::Right(Either::Right(BString::from(b.clone())))),
        other => Either::Right(Either::Right(Either::Right(BString::from(other.to_text())))),
    })
}

/// An exact decimal as a number: an integer when it has no fraction and
/// fits, else a float; `None` when it is not a number at all.
fn decimal(s: &str) -> Option<Result<i64, f64>> {
    if !s.contains(['.', 'e', 'E']) {
        if let Ok(i) = s.parse::<i64>() {
            return Some(Ok(i));
        }
    }
    s.parse::<f64>().ok().map(Err)
}

/// A Lua value as a result cell (`aiq.table`).
pub fn from_lua(v: &LuaValue) -> Value {
    match v {
        LuaValue::Nil => Value::Null,
        v if is_null(v) => Value::Null,
        LuaValue::Boolean(b) => Value::Bool(*b),
        LuaValue::Integer(i) => Value::Int(*i),
        LuaValue::Number(f) => Value::Float(*f),
        LuaValue::String(s) => match s.to_str() {
            Ok(text) => Value::Text(text.to_string()),
            Err(_) => Value::Blob(s.as_bytes().to_vec()),
        },
        LuaValue::Table(_) => match json::encode(v, json::MAX_BYTES) {
            Ok(text) => Value::Json(text),
            Err(e) => Value::Other(format!("<table: {e}>")),
        },
        other => Value::Other(format!("<{}>", other.type_name())),
    }
}

/// The column type a renderer (and later a chart) sees for a Lua value.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "BOOLEAN",
        Value::Int(_) => "INTEGER",
        Value::Float(_) => "DOUBLE",
        Value::Json(_) => "JSON",
        Value::Blob(_) => "BLOB",
        _ => "TEXT",
    }
}

/// The parameters of `aiq.query(sql, params)`: a list (`{1, "x"}`) or
/// names (`{country = "DE"}`); `nil` for none.
pub fn params(v: &LuaValue) -> Result<Option<Params>, String> {
    let table = match v {
        LuaValue::Nil => return Ok(None),
        LuaValue::Table(t) => t,
        other => {
            return Err(format!(
                "parameters must be a table ({{value, …}} or {{name = value}}), not a {}",
                other.type_name()
            ))
        }
    };
    let mut positional: Vec<(i64, Param)> = Vec::new();
    let mut named: Vec<(String, Param)> = Vec::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|e| e.to_string())?;
        let param = param(&value)?;
        match key {
            LuaValue::Integer(i) if i >= 1 => positional.push((i, param)),
            LuaValue::String(s) => named.push((s.to_string_lossy(), param)),
            other => {
                return Err(format!(
                    "a parameter key must be 1, 2, … or a name, not a {}",
                    other.type_name()
                ))
            }
        }
    }
    match (positional.is_empty(), named.is_empty()) {
        (_, true) => {
            positional.sort_by_key(|(i, _)| *i);
            if positional
                .iter()
                .enumerate()
                .any(|(n, (i, _))| *i != n as i64 + 1)
            {
                return Err(
                    "the parameter list has a hole (a nil): write aiq.null for a NULL".into(),
                );
            }
            Ok(Some(Params::Positional(
                positional.into_iter().map(|(_, p)| p).collect(),
            )))
        }
        (true, false) => Ok(Some(Params::Named(named))),
        (false, false) => Err("parameters are either a list or names, not both".into()),
    }
}

fn param(v: &LuaValue) -> Result<Param, String> {
    Ok(match v {
        v if is_null(v) => Param::Null,
        LuaValue::Boolean(b) => Param::Bool(*b),
        LuaValue::Integer(i) => Param::Int(*i),
        LuaValue::Number(f) => Param::Float(*f),
        LuaValue::String(s) => Param::Text(
            s.to_str()
                .map_err(|_| "a text parameter is not UTF-8".to_string())?
                .to_string(),
        ),
        other => {
            return Err(format!(
                "a {} cannot be a query parameter (use a number, string, boolean or aiq.null)",
                other.type_name()
            ))
        }
    })
}

/// The column order a result array carries (`rows.columns`, set by
/// `aiq.query`), read without metamethods.
pub fn carried_columns(rows: &Table) -> Option<Vec<String>> {
    let index: Table = rows.metatable()?.raw_get("__index").ok()?;
    let columns: Table = index.raw_get("columns").ok()?;
    strings(&columns).ok()
}

/// A Lua list of strings.
pub fn strings(list: &Table) -> Result<Vec<String>, String> {
    (1..=list.raw_len())
        .map(|i| match list.raw_get::<LuaValue>(i) {
            Ok(LuaValue::String(s)) => Ok(s.to_string_lossy()),
            Ok(LuaValue::Integer(n)) => Ok(n.to_string()),
            _ => Err(format!("column {i} of the column list is not a name")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Lua;

    #[test]
    fn database_values_become_lua_types() {
        let lua = Lua::new();
        let date = chrono::NaiveDate::from_ymd_opt(2026, 1, 26).unwrap();
        let cases = [
            (Value::Null, "nil"),
            (Value::Int(5), "integer 5"),
            (Value::BigInt(i128::from(i64::MAX) + 1), "float"),
            (Value::Decimal("12".into()), "integer 12"),
            (Value::Decimal("-12.50".into()), "float -12.5"),
            (Value::Date(date), "string 2026-01-26"),
            (Value::Bool(true), "boolean true"),
            (Value::Blob(vec![0, 255]), "bytes [0, 255]"),
        ];
        for (v, want) in cases {
            let row = lua.create_table_from([("c", cell(&v))]).unwrap();
            let got = match row.raw_get::<LuaValue>("c").unwrap() {
                LuaValue::Nil => "nil".to_string(),
                LuaValue::Integer(i) => format!("integer {i}"),
                LuaValue::Number(f) if f > 1e18 => "float".to_string(),
                LuaValue::Number(f) => format!("float {f}"),
                LuaValue::String(s) if s.to_str().is_err() => format!("bytes {:?}", s.as_bytes()),
                LuaValue::String(s) => format!("string {}", s.to_string_lossy()),
                LuaValue::Boolean(b) => format!("boolean {b}"),
                other => format!("{other:?}"),
            };
            assert_eq!(got, want, "{v:?}");
        }
    }

    #[test]
    fn parameters_are_a_list_or_names() {
        let lua = Lua::new();
        let eval = |code: &str| lua.load(code).eval::<LuaValue>().unwrap();
        assert_eq!(params(&LuaValue::Nil), Ok(None));
        assert_eq!(
            params(&eval("return {1, 'x', true, 2.5}")),
            Ok(Some(Params::Positional(vec![
                Param::Int(1),
                Param::Text("x".into()),
                Param::Bool(true),
                Param::Float(2.5)
            ])))
        );
        assert_eq!(
            params(&eval("return {c = 'DE'}")),
            Ok(Some(Params::Named(vec![(
                "c".into(),
                Param::Text("DE".into())
            )])))
        );
        lua.globals().set("null", null()).unwrap();
        assert_eq!(
            params(&eval("return {null, 2}")),
            Ok(Some(Params::Positional(vec![Param::Null, Param::Int(2)])))
        );
        assert!(params(&eval("return {[1] = 1, [3] = 3}"))
            .unwrap_err()
            .contains("hole"));
        assert!(params(&eval("return {1, c = 2}"))
            .unwrap_err()
            .contains("not both"));
        assert!(params(&eval("return {{}}"))
            .unwrap_err()
            .contains("table cannot be"));
        assert!(params(&eval("return 'x'")).is_err());
    }
}
