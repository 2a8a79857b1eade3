//! How `print` and `aiq.print` show a table: as a Lua literal, on one line
//! when it is short, one entry per line otherwise; rows from `aiq.query`
//! keep their column order, other keys are sorted. Bounded in depth,
//! entries and cycles, so printing any value ends.

use std::ffi::c_void;

use mlua::{Table, Value as LuaValue};

use super::convert::{carried_columns, is_null};

/// Entries shown per table before "… N more".
const MAX_ITEMS: usize = 1000;
/// Tables shown inside each other before `{…}`.
const MAX_DEPTH: usize = 12;
/// A table longer than this on one line is split into lines.
const WIDTH: usize = 100;

/// A value as `print` shows it inside a table (strings quoted).
pub fn pretty(v: &LuaValue) -> String {
    let mut open = Vec::new();
    render(v, 0, &mut open, None)
}

fn render(
    v: &LuaValue,
    indent: usize,
    open: &mut Vec<*const c_void>,
    order: Option<&[String]>,
) -> String {
    match v {
        LuaValue::Table(t) => table(t, indent, open, order),
        LuaValue::String(s) => quote(&s.to_string_lossy()),
        other => scalar(other),
    }
}

/// Numbers, booleans and the rest, as Lua's `tostring` writes them
/// (without addresses).
pub fn scalar(v: &LuaValue) -> String {
    match v {
        LuaValue::Nil => "nil".into(),
        v if is_null(v) => "aiq.null".into(),
        LuaValue::Boolean(b) => b.to_string(),
        LuaValue::Integer(i) => i.to_string(),
        LuaValue::Number(f) if f.is_nan() => "nan".into(),
        LuaValue::Number(f) if f.is_infinite() => (if *f > 0.0 { "inf" } else { "-inf" }).into(),
        LuaValue::Number(f) => format!("{f:?}"),
        LuaValue::String(s) => s.to_string_lossy(),
        other => other.type_name().to_string(),
    }
}

fn table(
    t: &Table,
    indent: usize,
    open: &mut Vec<*const c_void>,
    order: Option<&[String]>,
) -> String {
    let id = t.to_pointer();
    if open.contains(&id) {
        return "<cycle>".into();
    }
    if open.len() >= MAX_DEPTH {
        return "{…}".into();
    }
    open.push(id);
    let columns = carried_columns(t);
    let (items, more) = entries(t, order);
    let mut parts = Vec::with_capacity(items.len() + 1);
    for (key, value) in &items {
        let shown = render(value, indent + 1, open, columns.as_deref());
        parts.push(match key {
            Some(k) => format!("{k} = {shown}"),
            None => shown,
        });
    }
    open.pop();
    if more > 0 {
        parts.push(format!("… {more} more"));
    }
    if parts.is_empty() {
        return "{}".into();
    }
    let inline = format!("{{{}}}", parts.join(", "));
    if !inline.contains('\n') && indent * 2 + inline.len() <= WIDTH {
        return inline;
    }
    let pad = "  ".repeat(indent + 1);
    let mut out = String::from("{\n");
    for p in parts {
        out.push_str(&pad);
        out.push_str(&p);
        out.push_str(",\n");
    }
    out.push_str(&"  ".repeat(indent));
    out.push('}');
    out
}

/// The entries to show: the list part in order, then the other keys —
/// `order` first (a row's columns), the rest sorted — and how many more
/// there are than [`MAX_ITEMS`].
fn entries(t: &Table, order: Option<&[String]>) -> (Vec<(Option<String>, LuaValue)>, usize) {
    let n = t.raw_len();
    let mut list = Vec::new();
    // (name to sort by, key as written, value)
    let mut keyed: Vec<(String, String, LuaValue)> = Vec::new();
    let mut total: usize = 0;
    for (k, v) in t.pairs::<LuaValue, LuaValue>().flatten() {
        total += 1;
        match k {
            LuaValue::Integer(i) if i >= 1 && (i as usize) <= n => list.push((i, v)),
            LuaValue::String(s) => {
                let name = s.to_string_lossy();
                keyed.push((name.clone(), bare(&name), v));
            }
            k => keyed.push((scalar(&k), key(&k), v)),
        }
    }
    list.sort_by_key(|(i, _)| *i);
    let rank = |k: &str| {
        order
            .and_then(|o| o.iter().position(|c| c == k))
            .unwrap_or(usize::MAX)
    };
    keyed.sort_by(|a, b| rank(&a.0).cmp(&rank(&b.0)).then_with(|| a.0.cmp(&b.0)));
    let mut shown: Vec<(Option<String>, LuaValue)> =
        list.into_iter().map(|(_, v)| (None, v)).collect();
    shown.extend(keyed.into_iter().map(|(_, k, v)| (Some(k), v)));
    shown.truncate(MAX_ITEMS);
    let more = total.saturating_sub(shown.len());
    (shown, more)
}

/// A key as written in a table constructor.
fn key(k: &LuaValue) -> String {
    match k {
        LuaValue::String(s) => bare(&s.to_string_lossy()),
        LuaValue::Integer(i) => format!("[{i}]"),
        other => format!("[{}]", scalar(other)),
    }
}

/// `name` when it is an identifier, else `["…"]`.
fn bare(name: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ];
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name);
    if ident {
        name.to_string()
    } else {
        format!("[{}]", quote(name))
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\{}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Lua;

    fn show(code: &str) -> String {
        let lua = Lua::new();
        pretty(&lua.load(code).eval::<LuaValue>().unwrap())
    }

    #[test]
    fn short_tables_stay_on_one_line() {
        assert_eq!(show("return {1, 2, 'x'}"), r#"{1, 2, "x"}"#);
        assert_eq!(
            show("return {b = 2.0, a = true, ['x y'] = {}}"),
            r#"{a = true, b = 2.0, ["x y"] = {}}"#
        );
        assert_eq!(show("return {1, n = 2, [10] = 3}"), "{1, [10] = 3, n = 2}");
        assert_eq!(
            show("return {['a b'] = 1, z = 2}"),
            r#"{["a b"] = 1, z = 2}"#
        );
        assert_eq!(show("return {}"), "{}");
    }

    #[test]
    fn long_tables_split_and_rows_keep_column_order() {
        let rows = show(
            "local rows = setmetatable({}, {__index = {columns = {'name', 'id'}}})
             for i = 1, 5 do rows[i] = {id = i, name = 'customer number ' .. i} end
             return rows",
        );
        assert!(
            rows.starts_with("{\n  {name = \"customer number 1\", id = 1},\n"),
            "{rows}"
        );
        assert!(rows.ends_with("id = 5},\n}"), "{rows}");
    }

    #[test]
    fn cycles_depth_and_size_are_bounded() {
        assert_eq!(show("local t = {} t.me = t return t"), "{me = <cycle>}");
        let deep = show("local t = {} for i = 1, 50 do t = {t} end return t");
        assert!(deep.contains("{…}"), "{deep}");
        let big = show("local t = {} for i = 1, 5000 do t[i] = i end return t");
        assert!(
            big.ends_with("  … 4000 more,\n}"),
            "{}",
            &big[big.len() - 40..]
        );
    }
}
