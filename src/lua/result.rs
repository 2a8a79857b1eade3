//! Rows between the runner and Lua. [`LuaRows`] receives a statement's rows
//! as Lua tables keyed by column name (within the row limit); the list
//! carries its column order as `rows.columns`. [`show`] turns a program's
//! rows back into a result — columns, row batches, the end — in the
//! current format, with the preview the history keeps.

use std::io;
use std::time::Duration;

use mlua::{Lua, LuaString, Table, Value as LuaValue};

use super::api::ShownTable;
use super::convert::{carried_columns, cell, from_lua, type_name};
use super::limits::Stop;
use crate::agent::runner::{unique_names, Preview};
use crate::agent::Event;
use crate::schema::{Table as SchemaTable, TableKind};
use crate::source::{Column, RowSink, Value};

/// Rows per `Event::Rows` batch of a shown table.
const BATCH: usize = 256;

/// Why rows stopped coming into Lua.
pub enum RowsFailure {
    /// The per-query or per-run row limit.
    Limit(Stop),
    /// Lua failed (out of memory).
    Lua(mlua::Error),
}

/// While rows come in, the state's memory limit is lifted and checked after
/// each row instead: with a limit set, every table and string operation
/// runs in its own protected call, which would make rows into Lua several
/// times slower than rows to CSV. The limit is back when this is dropped.
struct Lifted<'l> {
    lua: &'l Lua,
    limit: usize,
}

impl<'l> Lifted<'l> {
    fn new(lua: &'l Lua) -> mlua::Result<Self> {
        let limit = lua.set_memory_limit(0)?;
        lua.gc_stop();
        Ok(Lifted { lua, limit })
    }

    /// True when the state holds more than the limit allows.
    fn over(&self) -> bool {
        self.limit > 0 && self.lua.used_memory() > self.limit
    }
}

impl Drop for Lifted<'_> {
    fn drop(&mut self) {
        self.lua.gc_restart();
        let _ = self.lua.set_memory_limit(self.limit);
    }
}

/// A [`RowSink`] that builds the list `aiq.query` returns.
pub struct LuaRows<'l> {
    lua: &'l Lua,
    lifted: Option<Lifted<'l>>,
    columns: Vec<String>,
    /// The column names as Lua strings, made once.
    names: Vec<LuaString>,
    rows: Option<Table>,
    count: u64,
    max: u64,
    limit: Stop,
    failure: Option<RowsFailure>,
}

impl<'l> LuaRows<'l> {
    /// At most `max` rows; one more ends the statement with `limit`.
    pub fn new(lua: &'l Lua, max: u64, limit: Stop) -> Self {
        LuaRows {
            lua,
            lifted: Lifted::new(lua).ok(),
            names: Vec::new(),
            columns: Vec::new(),
            rows: None,
            count: 0,
            max,
            limit,
            failure: None,
        }
    }

    /// Why the rows stopped, if they did.
    pub fn failure(mut self) -> Option<RowsFailure> {
        self.failure.take()
    }

    fn list(&mut self) -> mlua::Result<&Table> {
        if self.rows.is_none() {
            self.rows = Some(self.lua.create_table()?);
        }
        self.rows
            .as_ref()
            .ok_or_else(|| mlua::Error::runtime("no row list"))
    }

    fn push(&mut self, row: &[Value]) -> mlua::Result<()> {
        // An exact size hint makes the table with room for every column; a
        // NULL (`None`) is a `nil` value, which Lua does not store.
        let cells = self.names.iter().zip(row).map(|(name, v)| (name, cell(v)));
        let t = self.lua.create_table_from(cells)?;
        let n = self.count as usize + 1;
        self.list()?.raw_seti(n, t)
    }

    fn failed(&mut self, failure: RowsFailure) -> io::Result<()> {
        self.failure = Some(failure);
        Err(io::Error::other(
            "the rows could not be handed to the program",
        ))
    }

    /// The list, with `rows.columns` (through its metatable, so `#rows`,
    /// `ipairs` and `aiq.json_encode` see only the rows).
    pub fn finish(mut self) -> mlua::Result<Table> {
        let list = self.list()?.clone();
        if self.lifted.take().is_some_and(|l| l.over()) {
            return Err(mlua::Error::MemoryError("not enough memory".into()));
        }
        let columns = self
            .lua
            .create_sequence_from(self.columns.iter().map(String::as_str))?;
        let index = self.lua.create_table()?;
        index.raw_set("columns", columns)?;
        let meta = self.lua.create_table()?;
        meta.raw_set("__index", index)?;
        meta.raw_set("__name", "aiq.rows")?;
        list.set_metatable(Some(meta))?;
        Ok(list)
    }
}

impl RowSink for LuaRows<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        let (columns, _) = unique_names(columns);
        self.columns = columns.into_iter().map(|c| c.name).collect();
        let names: mlua::Result<Vec<LuaString>> = self
            .columns
            .iter()
            .map(|n| self.lua.create_string(n))
            .collect();
        match names {
            Ok(names) => {
                self.names = names;
                Ok(())
            }
            Err(e) => self.failed(RowsFailure::Lua(e)),
        }
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if self.count >= self.max {
            return self.failed(RowsFailure::Limit(self.limit));
        }
        match self.push(row) {
            Ok(()) if self.lifted.as_ref().is_some_and(Lifted::over) => {
                self.failed(RowsFailure::Limit(Stop::Memory))
            }
            Ok(()) => {
                self.count += 1;
                Ok(())
            }
            Err(e) => self.failed(RowsFailure::Lua(e)),
        }
    }
}

/// `aiq.schema(name)`: `{name, kind, row_estimate, comment, columns =
/// {{name, type, nullable, primary_key}, …}, foreign_keys = {{columns,
/// ref_table, ref_columns}, …}}`.
pub fn describe(lua: &Lua, table: &SchemaTable) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("name", table.name.as_str())?;
    t.raw_set(
        "kind",
        match table.kind {
            TableKind::Table => "table",
            TableKind::View => "view",
        },
    )?;
    if let Some(n) = table.row_estimate {
        t.raw_set("row_estimate", n)?;
    }
    if let Some(c) = &table.comment {
        t.raw_set("comment", c.as_str())?;
    }
    let columns = lua.create_table_with_capacity(table.columns.len(), 0)?;
    for (i, c) in table.columns.iter().enumerate() {
        let col = lua.create_table()?;
        col.raw_set("name", c.name.as_str())?;
        col.raw_set("type", c.type_name.as_str())?;
        col.raw_set("nullable", c.nullable)?;
        col.raw_set("primary_key", c.primary_key)?;
        columns.raw_set(i + 1, col)?;
    }
    t.raw_set("columns", columns)?;
    let keys = lua.create_table()?;
    for (i, fk) in table.foreign_keys.iter().enumerate() {
        let k = lua.create_table()?;
        k.raw_set(
            "columns",
            lua.create_sequence_from(fk.columns.iter().map(String::as_str))?,
        )?;
        k.raw_set("ref_table", fk.ref_table.as_str())?;
        k.raw_set(
            "ref_columns",
            lua.create_sequence_from(fk.ref_columns.iter().map(String::as_str))?,
        )?;
        keys.raw_set(i + 1, k)?;
    }
    t.raw_set("foreign_keys", keys)?;
    Ok(t)
}

/// Why a table could not be shown.
pub enum ShowError {
    /// The output went away.
    Sink(io::Error),
    /// Lua failed while reading the rows.
    Lua(mlua::Error),
}

impl From<mlua::Error> for ShowError {
    fn from(e: mlua::Error) -> Self {
        ShowError::Lua(e)
    }
}

/// Shows `rows` as a result through `emit`. Columns: `columns`, else the
/// list's own (`rows.columns` from `aiq.query`), else every key of the
/// rows, sorted (`1`, `2`, … for rows that are lists). `Ok(Err(_))` is a
/// mistake in the program's rows. `elapsed` is the run's time so far.
///
/// The rows are read by index as they are needed, not gathered first: a
/// handle per row of 100,000 would grow mlua's reference stack by as much,
/// and the column names are made Lua strings once, not once per cell.
pub fn show(
    lua: &Lua,
    rows: &Table,
    columns: Option<Vec<String>>,
    elapsed: Duration,
    emit: &mut dyn FnMut(Event) -> io::Result<()>,
) -> Result<Result<ShownTable, String>, ShowError> {
    let n = rows.raw_len();
    for i in 1..=n {
        let row: LuaValue = rows.raw_get(i)?;
        if !matches!(row, LuaValue::Table(_)) {
            return Ok(Err(format!(
                "row {i} is not a table of values (got {})",
                row.type_name()
            )));
        }
    }
    let names = match columns.or_else(|| carried_columns(rows)) {
        Some(c) => c,
        None => keys(rows, n)?,
    };
    let keys = names
        .iter()
        .map(|name| lua.create_string(name))
        .collect::<mlua::Result<Vec<LuaString>>>()?;
    let header = header(rows, n, &keys)?;
    let mut preview = Preview::default();
    preview.columns(&header);
    emit(Event::Columns(header)).map_err(ShowError::Sink)?;
    for first in (1..=n).step_by(BATCH) {
        let last = (first + BATCH - 1).min(n);
        let mut batch = Vec::with_capacity(last + 1 - first);
        for i in first..=last {
            let values = cells(&rows.raw_get(i)?, &keys)?;
            preview.row(&values);
            batch.push(values);
        }
        emit(Event::Rows(batch.into())).map_err(ShowError::Sink)?;
    }
    emit(Event::QueryFinished {
        rows: n as u64,
        elapsed,
        changed: false,
        more: false,
    })
    .map_err(ShowError::Sink)?;
    Ok(Ok(ShownTable {
        rows: n as u64,
        preview: preview.finish(),
        columns: names,
    }))
}

/// A row's cells in column order: by name, or by position for a list.
fn cells(row: &Table, keys: &[LuaString]) -> mlua::Result<Vec<Value>> {
    let positional = row.raw_len() > 0;
    keys.iter()
        .enumerate()
        .map(|(j, key)| {
            let v: LuaValue = if positional {
                row.raw_get(j + 1)?
            } else {
                row.raw_get(key)?
            };
            Ok(from_lua(&v))
        })
        .collect()
}

/// The columns, each typed by its first value that is not NULL.
fn header(rows: &Table, n: usize, keys: &[LuaString]) -> mlua::Result<Vec<Column>> {
    let mut types: Vec<Option<&'static str>> = vec![None; keys.len()];
    for i in 1..=n {
        if types.iter().all(Option::is_some) {
            break;
        }
        for (j, v) in cells(&rows.raw_get(i)?, keys)?.iter().enumerate() {
            if types[j].is_none() && !matches!(v, Value::Null) {
                types[j] = Some(type_name(v));
            }
        }
    }
    Ok(keys
        .iter()
        .zip(&types)
        .map(|(name, t)| Column::new(name.to_string_lossy(), t.unwrap_or("")))
        .collect())
}

/// Every key of the rows, sorted; `1`, `2`, … for rows that are lists.
fn keys(rows: &Table, n: usize) -> mlua::Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    let mut width = 0;
    for i in 1..=n {
        let row: Table = rows.raw_get(i)?;
        width = width.max(row.raw_len());
        for pair in row.pairs::<LuaValue, LuaValue>() {
            if let (LuaValue::String(k), _) = pair? {
                let k = k.to_string_lossy();
                if !names.contains(&k) {
                    names.push(k);
                }
            }
        }
    }
    if width > 0 {
        return Ok((1..=width).map(|i| i.to_string()).collect());
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(code: &str, columns: Option<Vec<String>>) -> (Vec<Event>, Result<ShownTable, String>) {
        let lua = Lua::new();
        let rows: Table = lua.load(code).eval().unwrap();
        let mut events = Vec::new();
        let r = show(&lua, &rows, columns, Duration::ZERO, &mut |e| {
            events.push(e);
            Ok(())
        });
        let Ok(r) = r else { panic!("show failed") };
        (events, r)
    }

    #[test]
    fn rows_become_a_result_with_typed_columns() {
        let (events, r) = shown("return {{b = 'x', a = 1}, {a = 2.5}}", None);
        let Event::Columns(cols) = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(
            cols,
            &[Column::new("a", "INTEGER"), Column::new("b", "TEXT")]
        );
        let Event::Rows(crate::source::RowBatch::Values(rows)) = &events[1] else {
            panic!()
        };
        assert_eq!(rows[1], vec![Value::Float(2.5), Value::Null]);
        assert!(matches!(events[2], Event::QueryFinished { rows: 2, .. }));
        let r = r.unwrap();
        assert_eq!(r.preview, "a,b\n1,x\n2.5,NULL\n");
        assert_eq!(r.columns, ["a", "b"]);
    }

    /// The build gives Lua `LUAI_MAXSHORTLEN=16` (.cargo/config.toml): a
    /// second copy of a 16-byte string is the interned first one, a second
    /// copy of a 17-byte string is memory of its own. Without the setting
    /// (a Lua built before it, or with the stock 40), rows of distinct
    /// values go through Lua's string table one by one, twice as slow.
    #[test]
    fn strings_past_sixteen_bytes_are_not_interned() {
        let lua = Lua::new();
        let second_copy = |n: usize| -> f64 {
            lua.load(format!(
                r#"collectgarbage("stop")
                local first = string.rep("x", {n})
                local before = collectgarbage("count")
                local second = string.rep("x", {n})
                return (collectgarbage("count") - before) * 1024"#
            ))
            .eval()
            .unwrap()
        };
        assert_eq!(second_copy(16), 0.0, "a 16-byte string is interned");
        assert!(
            second_copy(17) > 0.0,
            "Lua interns strings past 16 bytes: it was built without the \
             LUAI_MAXSHORTLEN of .cargo/config.toml (`cargo clean -p mlua-sys`, \
             then build again)"
        );
    }

    #[test]
    fn lists_given_columns_and_mistakes() {
        let (events, _) = shown(
            "return {{'EU', 3}, {'US', 4}}",
            Some(vec!["region".into(), "n".into()]),
        );
        let Event::Rows(crate::source::RowBatch::Values(rows)) = &events[1] else {
            panic!()
        };
        assert_eq!(rows[0], vec![Value::Text("EU".into()), Value::Int(3)]);
        let (_, r) = shown("return {{1}, 5}", None);
        assert_eq!(
            r.err().unwrap(),
            "row 2 is not a table of values (got integer)"
        );
        let (events, r) = shown("return {}", None);
        assert_eq!(r.unwrap().rows, 0);
        assert!(matches!(&events[0], Event::Columns(c) if c.is_empty()));
    }
}
