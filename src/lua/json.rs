//! `aiq.json_encode` and `aiq.json_decode`. Tables with keys 1..n are
//! arrays, other tables objects (keys sorted, so output is stable), an
//! empty table `[]`; `aiq.null` is `null`, and `null` decodes to
//! `aiq.null` so lists keep their length. Nesting is bounded and cycles are
//! refused, so no Lua value can make the host recurse without end.

use std::ffi::c_void;

use mlua::{Lua, Table, Value as LuaValue};

use super::convert::{is_null, null};

/// Deepest nesting encoded (decoding is bounded by serde_json at 128).
const MAX_DEPTH: usize = 100;
/// Largest text `aiq.table` encodes for one cell.
pub const MAX_BYTES: usize = 1 << 20;

/// A Lua value as JSON text of at most `max_bytes`.
pub fn encode(v: &LuaValue, max_bytes: usize) -> Result<String, String> {
    let mut e = Encoder {
        out: String::new(),
        max_bytes,
        open: Vec::new(),
    };
    e.value(v)?;
    Ok(e.out)
}

struct Encoder {
    out: String,
    max_bytes: usize,
    /// Tables being encoded (for cycles).
    open: Vec<*const c_void>,
}

impl Encoder {
    fn value(&mut self, v: &LuaValue) -> Result<(), String> {
        if self.out.len() > self.max_bytes {
            return Err(format!(
                "the JSON text would be larger than {} bytes",
                self.max_bytes
            ));
        }
        match v {
            LuaValue::Nil => self.out.push_str("null"),
            v if is_null(v) => self.out.push_str("null"),
            LuaValue::Boolean(b) => self.out.push_str(if *b { "true" } else { "false" }),
            LuaValue::Integer(i) => self.out.push_str(&i.to_string()),
            LuaValue::Number(f) if f.is_finite() => self.out.push_str(
                &serde_json::Number::from_f64(*f)
                    .map_or_else(|| "null".to_string(), |n| n.to_string()),
            ),
            LuaValue::Number(f) => return Err(format!("{f} cannot be written as JSON")),
            LuaValue::String(s) => {
                let text = s
                    .to_str()
                    .map_err(|_| "a string that is not UTF-8 cannot be written as JSON")?;
                self.string(&text);
            }
            LuaValue::Table(t) => self.table(t)?,
            other => return Err(format!("a {} cannot be written as JSON", other.type_name())),
        }
        Ok(())
    }

    fn string(&mut self, s: &str) {
        // serde_json's escaping of a plain string cannot fail.
        self.out
            .push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
    }

    fn table(&mut self, t: &Table) -> Result<(), String> {
        let id = t.to_pointer();
        if self.open.contains(&id) {
            return Err("the table contains itself (a cycle)".into());
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(format!("tables are nested deeper than {MAX_DEPTH} levels"));
        }
        self.open.push(id);
        let mut entries: Vec<(LuaValue, LuaValue)> = Vec::new();
        for pair in t.pairs::<LuaValue, LuaValue>() {
            entries.push(pair.map_err(|e| e.to_string())?);
        }
        let n = t.raw_len();
        let array = entries.len() == n
            && entries
                .iter()
                .all(|(k, _)| matches!(k, LuaValue::Integer(i) if *i >= 1 && *i as usize <= n));
        if array {
            self.out.push('[');
            for i in 1..=n {
                if i > 1 {
                    self.out.push(',');
                }
                let item: LuaValue = t.raw_get(i).map_err(|e| e.to_string())?;
                self.value(&item)?;
            }
            self.out.push(']');
        } else {
            let mut keyed = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let key = match k {
                    LuaValue::String(s) => s.to_string_lossy(),
                    LuaValue::Integer(i) => i.to_string(),
                    other => {
                        return Err(format!(
                            "a {} cannot be a JSON object key",
                            other.type_name()
                        ))
                    }
                };
                keyed.push((key, v));
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            self.out.push('{');
            for (i, (k, v)) in keyed.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.string(k);
                self.out.push(':');
                self.value(v)?;
            }
            self.out.push('}');
        }
        self.open.pop();
        Ok(())
    }
}

/// JSON text as a Lua value. `Err(Ok(message))` for text that is not JSON,
/// `Err(Err(e))` when Lua itself failed (out of memory).
pub fn decode(lua: &Lua, text: &str) -> Result<LuaValue, Result<String, mlua::Error>> {
    let parsed: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Ok(format!("not valid JSON: {e}")))?;
    to_lua(lua, &parsed).map_err(Err)
}

fn to_lua(lua: &Lua, v: &serde_json::Value) -> mlua::Result<LuaValue> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => null(),
        J::Bool(b) => LuaValue::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => LuaValue::Integer(i),
            None => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => LuaValue::String(lua.create_string(s)?),
        J::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            LuaValue::Table(t)
        }
        J::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, item) in map {
                t.raw_set(k.as_str(), to_lua(lua, item)?)?;
            }
            LuaValue::Table(t)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(lua: &Lua, code: &str) -> Result<String, String> {
        lua.globals().set("null", null()).unwrap();
        encode(&lua.load(code).eval::<LuaValue>().unwrap(), MAX_BYTES)
    }

    #[test]
    fn arrays_objects_and_scalars() {
        let lua = Lua::new();
        assert_eq!(
            enc(&lua, "return {1, 2.5, 'a\"b', true, null}").unwrap(),
            r#"[1,2.5,"a\"b",true,null]"#
        );
        assert_eq!(
            enc(&lua, "return {b = 1, a = {x = {}}}").unwrap(),
            r#"{"a":{"x":[]},"b":1}"#
        );
        assert_eq!(
            enc(&lua, "return {[1] = 'a', [3] = 'c'}").unwrap(),
            r#"{"1":"a","3":"c"}"#
        );
        assert_eq!(enc(&lua, "return 'é'").unwrap(), "\"é\"");
        let holes = enc(&lua, "return {1, nil, 3, x = 1}").unwrap();
        assert_eq!(holes, r#"{"1":1,"3":3,"x":1}"#);
    }

    #[test]
    fn cycles_depth_and_odd_values_are_refused() {
        let lua = Lua::new();
        assert!(enc(&lua, "local t = {} t.t = t return t")
            .unwrap_err()
            .contains("cycle"));
        let deep = enc(&lua, "local t = {} for i = 1, 1000 do t = {t} end return t").unwrap_err();
        assert!(deep.contains("deeper than 100"), "{deep}");
        assert!(enc(&lua, "return {print}")
            .unwrap_err()
            .contains("function"));
        assert!(enc(&lua, "return 0/0").is_err());
        assert!(enc(&lua, "return {[true] = 1}")
            .unwrap_err()
            .contains("boolean"));
        let shared = enc(&lua, "local s = {1} return {s, s}").unwrap();
        assert_eq!(shared, "[[1],[1]]", "a table used twice is not a cycle");
    }

    #[test]
    fn decoding_keeps_nulls_and_refuses_garbage() {
        let lua = Lua::new();
        let v = decode(&lua, r#"{"a": [1, null, 3], "b": 1.5, "c": "x"}"#).unwrap();
        let LuaValue::Table(t) = v else { panic!() };
        let a: Table = t.get("a").unwrap();
        assert_eq!(a.raw_len(), 3);
        assert!(is_null(&a.get::<LuaValue>(2).unwrap()));
        assert_eq!(t.get::<f64>("b").unwrap(), 1.5);
        assert!(matches!(decode(&lua, "{nope"), Err(Ok(m)) if m.starts_with("not valid JSON")));
        let deep = "[".repeat(10_000);
        assert!(
            decode(&lua, &deep).is_err(),
            "serde_json bounds the recursion"
        );
    }
}
