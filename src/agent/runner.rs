//! The one statement runner. Model SQL, `/sql`, `-e` and Lua's `aiq.query`
//! all run here, so the gate, the confirmation of writes, the events, row
//! streaming, previews and error wording cannot drift apart:
//!
//! gate (`safety::check_with_engine`, with the engine's own reading) → confirmation if it writes → `QueryStarted` →
//! `DataSource::execute` under the turn's cancel token, rows to the sink in
//! batches (or, for a program, into the program) → `QueryFinished`.

use std::io;

use super::events::{ConfirmKind, Event, EventSink, PendingAnswer};
use super::outcome::{AgentError, Answer, Outcome};
use super::{PREVIEW_BYTES, PREVIEW_ROWS};
use crate::cancel::{CancelToken, TurnSlot};
use crate::safety::{self, Access, CheckedSql, Policy, Refusal};
use crate::source::{
    Column, DataSource, EnoughRows, ExecError, NativeRows, QueryStats, RowBatch, RowSink, TextRows,
    Value,
};
use std::time::Instant;

/// Rows per `Event::Rows` batch.
const BATCH: usize = 256;
/// A batch that is not full goes out after this long anyway.
const FLUSH_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// A statement that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub stats: QueryStats,
    /// The first rows as CSV (at most [`PREVIEW_ROWS`] rows, [`PREVIEW_BYTES`]).
    pub preview: String,
    /// The front end stopped reading (it had the rows it shows): the result
    /// has more rows than `stats.rows`, not counted.
    pub more: bool,
    /// What a program printed, bounded ([`PREVIEW_BYTES`]); `None` for SQL.
    pub output: Option<String>,
}

/// Why a statement did not run to the end.
#[derive(Debug)]
pub enum StatementError {
    /// The SQL does not parse (the parser's message). The model may fix it;
    /// otherwise it is refused like any statement the gate cannot prove safe.
    Unparsable(String),
    /// The safety policy refused it.
    Refused(String),
    /// It changes data and was not confirmed.
    Declined(String),
    /// The engine failed it (the engine's message). The model may fix it.
    Engine(String),
    /// It ran past the statement timeout.
    Timeout(String),
    Cancelled,
    /// The sink failed (a closed pipe).
    Output(io::Error),
}

impl StatementError {
    /// What the model is told when it may try again.
    pub fn fixable(&self) -> Option<&str> {
        match self {
            StatementError::Unparsable(why) | StatementError::Engine(why) => Some(why),
            _ => None,
        }
    }
}

impl From<StatementError> for AgentError {
    fn from(e: StatementError) -> Self {
        match e {
            StatementError::Unparsable(m)
            | StatementError::Refused(m)
            | StatementError::Declined(m) => AgentError::Refused(m),
            StatementError::Engine(m) => AgentError::QueryFailed(format!("query failed: {m}")),
            StatementError::Timeout(m) => AgentError::QueryFailed(m),
            StatementError::Cancelled => AgentError::Cancelled,
            StatementError::Output(e) => e.into(),
        }
    }
}

impl From<io::Error> for StatementError {
    fn from(e: io::Error) -> Self {
        StatementError::Output(e)
    }
}

/// Runs one statement: gate, confirmation, execution, events.
pub fn run_statement(
    source: &dyn DataSource,
    sql: &str,
    policy: Policy,
    cancel: &CancelToken,
    sink: &mut dyn EventSink,
) -> Result<Ran, StatementError> {
    let hidden = policy.hidden.clone();
    let watch = (policy.redaction.clone(), policy.read_redacted.clone());
    let checked = admit(source, sql, policy, cancel, sink)?;
    note_reads(source, &checked, watch);
    let started = Instant::now();
    let mut forward = Forward::new(sink);
    let result = source.execute(&checked, &mut forward, cancel);
    let flushed = forward.flush();
    let preview = std::mem::take(&mut forward.preview).finish();
    let mut more = false;
    let stats = match result {
        Err(ExecError::Output(e)) if EnoughRows::is(&e) => {
            more = true;
            QueryStats {
                rows: forward.rows,
                elapsed: started.elapsed(),
                changed: false,
            }
        }
        other => executed(other).map_err(|e| with_hint(e, source, sql, hidden.as_deref()))?,
    };
    match flushed {
        Err(e) if !EnoughRows::is(&e) => return Err(e.into()),
        _ => {}
    }
    finished(sink, &stats, more)?;
    Ok(Ran {
        stats,
        preview,
        more,
        output: None,
    })
}

/// Runs one statement for a program (Lua's `aiq.query`): the same gate,
/// confirmation, `QueryStarted`/`QueryFinished` events and errors, but the
/// rows go to `rows` — the program — and not to the sink as a result.
pub fn run_statement_for(
    source: &dyn DataSource,
    sql: &str,
    policy: Policy,
    cancel: &CancelToken,
    sink: &mut dyn EventSink,
    rows: &mut dyn RowSink,
) -> Result<QueryStats, StatementError> {
    let hidden = policy.hidden.clone();
    let watch = (policy.redaction.clone(), policy.read_redacted.clone());
    let checked = admit(source, sql, policy, cancel, sink)?;
    note_reads(source, &checked, watch);
    let stats = executed(source.execute(&checked, rows, cancel))
        .map_err(|e| with_hint(e, source, sql, hidden.as_deref()))?;
    finished(sink, &stats, false)?;
    Ok(stats)
}

/// The gate alone, for SQL that is shown and not run (`--sql-only`): a
/// statement it would refuse is refused here too, and a write is refused
/// where the source cannot take one.
pub fn gate_only(source: &dyn DataSource, sql: &str, policy: Policy) -> Result<(), StatementError> {
    gate(source, sql, policy).map(drop)
}

/// The gate (sqlparser's verdict and the engine's own reading, with the
/// functions the database defines), and a write refused where the source
/// cannot take one.
fn gate(source: &dyn DataSource, sql: &str, policy: Policy) -> Result<CheckedSql, StatementError> {
    let policy = Policy {
        functions: source.user_functions(),
        ..policy
    };
    let checked = match safety::check_with_engine(sql, source.dialect(), &policy, |text| {
        source.read_statement(text)
    }) {
        Ok(checked) => checked,
        Err(r @ Refusal::Unparsable { .. }) => {
            return Err(StatementError::Unparsable(r.to_string()))
        }
        Err(r) => return Err(StatementError::Refused(r.to_string())),
    };
    match (checked.access(), source.refuses_writes()) {
        (Access::Write, Some(why)) => Err(StatementError::Refused(format!(
            "refused: {} cannot change this source: {why}",
            checked.kind()
        ))),
        _ => Ok(checked),
    }
}

/// What a checked statement reads of the columns `redaction` keeps on the
/// machine, as the engine says before it runs (nothing of it runs).
fn read_of(
    source: &dyn DataSource,
    checked: &CheckedSql,
    redaction: &safety::Redaction,
) -> safety::Read {
    match source.columns_read(checked) {
        None => safety::Read::Unknown,
        Some(read) if redaction.reads(Some(&read)) => safety::Read::Redacted,
        Some(_) => safety::Read::Clear,
    }
}

/// Asks the engine what an admitted statement reads, before it runs (its
/// error may quote what it read), and sets the policy's flag when that
/// includes a column whose values stay on the machine (SPEC §4.3).
fn note_reads(
    source: &dyn DataSource,
    checked: &CheckedSql,
    (redaction, flag): (Option<std::sync::Arc<safety::Redaction>>, safety::ReadFlag),
) {
    if let Some(redaction) = redaction {
        match read_of(source, checked, &redaction) {
            safety::Read::Unknown => flag.set_unknown(),
            safety::Read::Redacted => flag.set(),
            safety::Read::Clear => {}
        }
    }
}

/// Whether `sql`, stored from an earlier turn, reads a column whose values
/// stay on the machine under `policy`, as the engine reads it now (the
/// gate first: a statement it refuses counts as reading one). Nothing runs.
pub fn reads_redacted(source: &dyn DataSource, sql: &str, policy: &Policy) -> bool {
    let Some(redaction) = &policy.redaction else {
        return false;
    };
    match gate(source, sql, policy.clone()) {
        Ok(checked) => read_of(source, &checked, redaction) != safety::Read::Clear,
        Err(_) => true,
    }
}

/// `catalog` (as `guard` lets the model see it) without the sample values
/// of columns whose values come from a redacted one (a generated column,
/// `GENERATED ALWAYS AS (split_part(email, '@', 2))`): for each sampled
/// column of a table with a redacted column, the engine says what reading
/// it reads (nothing runs).
pub fn withhold_derived_samples(
    source: &dyn DataSource,
    guard: &crate::privacy::Guard,
    mut catalog: crate::schema::Catalog,
) -> crate::schema::Catalog {
    if !guard.redacts_any() {
        return catalog;
    }
    let policy = guard.policy(false);
    let quote = catalog.quote();
    for table in &mut catalog.tables {
        let whole = [(table.name.to_lowercase(), "*".to_string())];
        if !guard.reads(Some(&whole)) {
            continue;
        }
        let name = table.sql_name(quote).into_owned();
        for column in table.columns.iter_mut().filter(|c| !c.samples.is_empty()) {
            let sql = format!("SELECT {} FROM {name}", quote.ident(&column.name));
            if reads_redacted(source, &sql, &policy) {
                column.samples.clear();
                column.type_name = crate::privacy::without_labels(&column.type_name);
            }
        }
    }
    catalog
}

/// The gate, then the confirmation of a write, then `QueryStarted`.
fn admit(
    source: &dyn DataSource,
    sql: &str,
    policy: Policy,
    cancel: &CancelToken,
    sink: &mut dyn EventSink,
) -> Result<CheckedSql, StatementError> {
    let checked = gate(source, sql, policy)?;
    if checked.access() == Access::Write {
        let detail = Some(checked.sql().to_string());
        match PendingAnswer::ask(sink, cancel, ConfirmKind::Write, "Run this statement?", detail)? {
            Some(true) => {}
            Some(false) => {
                return Err(StatementError::Declined(format!(
                    "not run: {} changes data and was not confirmed (answer y at the prompt, or add --yes to run it from a script)",
                    checked.kind()
                )))
            }
            None => return Err(StatementError::Cancelled),
        }
    }
    sink.event(Event::QueryStarted {
        sql: checked.sql().to_string(),
    })?;
    Ok(checked)
}

/// The engine's answer in the runner's words.
fn executed(result: Result<QueryStats, ExecError>) -> Result<QueryStats, StatementError> {
    match result {
        Ok(stats) => Ok(stats),
        Err(ExecError::Engine(msg)) => Err(StatementError::Engine(msg)),
        Err(ExecError::Cancelled) => Err(StatementError::Cancelled),
        Err(ExecError::Output(e)) => Err(StatementError::Output(e)),
        Err(e @ ExecError::Timeout(_)) => Err(StatementError::Timeout(format!(
            "{e} (raise [query] timeout_secs in config.toml, or narrow the query)"
        ))),
    }
}

/// An engine's unknown-table or unknown-column error with the closest
/// visible names (SPEC §2.3): `no such column: nme; did you mean
/// customers.name?`, for the user and for the model's fix alike. The
/// catalog is read only then, on every engine the same way.
fn with_hint(
    error: StatementError,
    source: &dyn DataSource,
    sql: &str,
    hidden: Option<&crate::safety::Hidden>,
) -> StatementError {
    let StatementError::Engine(message) = error else {
        return error;
    };
    if crate::schema::suggest::unknown_name(&message).is_none() {
        return StatementError::Engine(message);
    }
    let Ok(catalog) = source.introspect() else {
        return StatementError::Engine(message);
    };
    let hides = |name: &str| {
        hidden
            .is_some_and(|h| h.hides(name) || name.split_once('.').is_some_and(|(t, _)| h.hides(t)))
    };
    // The engine's own "did you mean" of a name the source does not have
    // (DuckDB's internal catalog) gives way to aiq's.
    let message = crate::schema::suggest::without_foreign(&message, &catalog);
    match crate::schema::suggest::hint(&message, sql, &catalog, &hides) {
        Some(hint) => StatementError::Engine(format!("{}{hint}", message.trim_end())),
        None => StatementError::Engine(message),
    }
}

fn finished(sink: &mut dyn EventSink, stats: &QueryStats, more: bool) -> io::Result<()> {
    sink.event(Event::QueryFinished {
        rows: stats.rows,
        elapsed: stats.elapsed,
        changed: stats.changed,
        more,
    })
}

/// A statement typed by the user (`/sql`, `-e`) as a whole turn: a fresh
/// cancel token in `slot`, the runner, and the one final event.
pub fn statement_turn(
    source: &dyn DataSource,
    sql: &str,
    policy: Policy,
    slot: &TurnSlot,
    sink: &mut dyn EventSink,
) -> Result<Answer, AgentError> {
    let (cancel, _turn) = slot.begin();
    let result = run_statement(source, sql, policy, &cancel, sink)
        .map(|ran| Answer {
            text: String::new(),
            code: Some(sql.to_string()),
            rows: Some(ran.stats.rows),
        })
        .map_err(AgentError::from);
    finish_turn(sink, result)
}

/// Sends the one final event of a turn and hands the result back. A sink
/// that fails here (a closed pipe) changes nothing: the turn is over.
pub fn finish_turn(
    sink: &mut dyn EventSink,
    result: Result<Answer, AgentError>,
) -> Result<Answer, AgentError> {
    let _ = sink.event(Event::TurnFinished(Outcome::from(&result)));
    result
}

/// A [`RowSink`] that forwards rows to the event sink in batches — full
/// ones, or whatever came within [`FLUSH_AFTER`], so slow rows are never
/// held back — and keeps the preview.
struct Forward<'a> {
    sink: &'a mut dyn EventSink,
    batch: Vec<Vec<Value>>,
    preview: Preview,
    /// Rows received.
    rows: u64,
    last_flush: Instant,
}

impl<'a> Forward<'a> {
    fn new(sink: &'a mut dyn EventSink) -> Self {
        Forward {
            sink,
            batch: Vec::new(),
            preview: Preview::default(),
            rows: 0,
            last_flush: Instant::now(),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.last_flush = Instant::now();
        if self.batch.is_empty() {
            return Ok(());
        }
        self.sink
            .event(Event::Rows(std::mem::take(&mut self.batch).into()))
    }
}

impl RowSink for Forward<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.preview.columns(columns);
        let (columns, renamed) = unique_names(columns);
        if !renamed.is_empty() {
            self.sink.event(Event::Notice(format!(
                "aiq: the result repeats column names; shown as {}",
                renamed.join(", ")
            )))?;
        }
        self.sink.event(Event::Columns(columns))
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        self.row_owned(row.to_vec())
    }

    fn row_owned(&mut self, row: Vec<Value>) -> io::Result<()> {
        self.preview.row(&row);
        self.batch.push(row);
        self.rows += 1;
        let due = self.rows.is_multiple_of(64) && self.last_flush.elapsed() >= FLUSH_AFTER;
        if self.batch.len() >= BATCH || due {
            self.flush()?;
        }
        Ok(())
    }

    /// Text rows go on as they are, after the rows before them; only the
    /// ones the preview still wants are read into values here.
    fn text_rows(&mut self, rows: TextRows) -> io::Result<()> {
        self.flush()?;
        // Once the preview is full, no row of a block is read at all.
        if !self.preview.is_full() {
            for row in rows.values() {
                self.preview.row(&row);
                if self.preview.is_full() {
                    break;
                }
            }
        }
        self.rows += rows.len() as u64;
        self.sink.event(Event::Rows(RowBatch::Text(rows)))
    }

    /// A binary block likewise.
    fn native_rows(&mut self, rows: NativeRows) -> io::Result<()> {
        self.flush()?;
        for row in 0..rows.len() {
            if self.preview.is_full() {
                break;
            }
            self.preview.row(&rows.row(row));
        }
        self.rows += rows.len() as u64;
        self.sink.event(Event::Rows(RowBatch::Native(rows)))
    }

    fn writes_delimited(&self) -> bool {
        self.sink.writes_delimited()
    }
}

/// Column names made unique (`a`, `a` → `a`, `a_2`), so every format can
/// name every column; also what was renamed (`a_2`).
pub(crate) fn unique_names(columns: &[Column]) -> (Vec<Column>, Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    let mut renamed = Vec::new();
    let mut out = Vec::with_capacity(columns.len());
    let taken: std::collections::HashSet<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    for c in columns {
        let mut column = c.clone();
        if !seen.insert(c.name.clone()) {
            let mut n = 2;
            while taken.contains(format!("{}_{n}", c.name).as_str())
                || seen.contains(&format!("{}_{n}", c.name))
            {
                n += 1;
            }
            column.name = format!("{}_{n}", c.name);
            seen.insert(column.name.clone());
            renamed.push(column.name.clone());
        }
        out.push(column);
    }
    (out, renamed)
}

/// The first rows as CSV, at most [`PREVIEW_ROWS`] rows and [`PREVIEW_BYTES`];
/// a value longer than its share of those bytes is cut ([`super::cut`]).
#[derive(Default)]
pub(crate) struct Preview {
    text: String,
    rows: usize,
    full: bool,
}

impl Preview {
    /// True once it takes no more rows.
    fn is_full(&self) -> bool {
        self.full || self.rows >= PREVIEW_ROWS
    }

    fn line(&mut self, cells: impl Iterator<Item = String>) {
        if self.full {
            return;
        }
        let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
        let cells: Vec<String> = cells.collect();
        let line = match w
            .write_record(&cells)
            .and_then(|_| w.flush().map_err(csv::Error::from))
        {
            Ok(()) => String::from_utf8_lossy(w.get_ref()).into_owned(),
            Err(_) => return,
        };
        if self.text.len() + line.len() > PREVIEW_BYTES {
            self.full = true;
            return;
        }
        self.text.push_str(&line);
    }

    pub(crate) fn columns(&mut self, columns: &[Column]) {
        self.line(columns.iter().map(|c| c.name.clone()));
    }

    pub(crate) fn row(&mut self, row: &[Value]) {
        if self.rows >= PREVIEW_ROWS {
            self.full = true;
            return;
        }
        self.rows += 1;
        // A value too long for the preview is cut, not its row.
        let share = PREVIEW_BYTES / super::cut::VALUE_SHARE;
        self.line(row.iter().map(|v| match v {
            Value::Null => "NULL".to_string(),
            v => match super::cut::cut_value(v, share) {
                Some(cut) => cut.to_text(),
                None => v.to_text(),
            },
        }));
    }

    pub(crate) fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_in_the_preview_is_cut_and_its_row_kept() {
        let mut preview = Preview::default();
        preview.columns(&[Column::new("big", "TEXT"), Column::new("id", "INTEGER")]);
        for id in 1..=3 {
            preview.row(&[Value::Text("x".repeat(1_000_000)), Value::Int(id)]);
        }
        let text = preview.finish();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "big,id");
        let share = PREVIEW_BYTES / crate::agent::cut::VALUE_SHARE;
        let cut = format!("{}…(1.0 MB)", "x".repeat(share - "…(1.0 MB)".len()));
        assert_eq!(lines[1], format!("{cut},1"));
        assert_eq!(lines[3], format!("{cut},3"));
    }
}
