//! The MCP front end's [`EventSink`]: it keeps what a tool call returns —
//! the result's columns and the rows that fit the caps (rows, bytes), the
//! code the model proposed, notes — and answers the runner's confirmation
//! of a write through a [`Consent`] (the client's elicitation). Rows beyond
//! a cap stop the statement: the result is marked truncated. A value too
//! big for the byte cap is cut with a marker ([`crate::agent::cut`]); its
//! row stays.

use std::io;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::agent::cut::{cut_row, VALUE_SHARE};
use crate::agent::{ConfirmKind, Event, EventSink, Outcome};
use crate::render::{self, Format, RenderOptions};
use crate::source::{Column, EnoughRows, Value};

/// Whether a statement that changes data may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Yes,
    /// No, and why (shown to the client).
    No(String),
    /// Not yet: the client is asked in another round (protocol 2026-07-28).
    AskNextRound,
}

/// Asks the client whether a write may run.
pub trait Consent {
    /// `sql` changes data: may it run?
    fn decide(&mut self, sql: &str) -> Decision;
}

/// A consent that always gives the same answer (tests; read-only servers).
pub struct Fixed(pub Decision);

impl Consent for Fixed {
    fn decide(&mut self, _sql: &str) -> Decision {
        self.0.clone()
    }
}

/// Rows and bytes one result may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub rows: usize,
    /// Bytes of the rows as JSON.
    pub bytes: usize,
}

/// A finished statement's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Rows read (for a write: rows changed).
    pub rows: u64,
    pub changed: bool,
    pub elapsed: Duration,
}

/// A result as a client gets it (`structuredContent` of `run_query`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct QueryResult {
    /// The result's columns, in order.
    pub columns: Vec<ResultColumn>,
    /// The rows returned, each an array in column order: numbers, strings,
    /// booleans, null, or JSON for JSON columns.
    pub rows: Vec<Vec<Json>>,
    /// How many rows `rows` holds.
    pub row_count: usize,
    /// True when the result had more rows than returned (a row or size
    /// limit): narrow the query, aggregate or add LIMIT to see the rest.
    pub truncated: bool,
    /// For a statement that changed data: the rows it changed.
    pub rows_changed: Option<u64>,
    /// How long the statement ran, in milliseconds.
    pub elapsed_ms: Option<u64>,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ResultColumn {
    pub name: String,
    /// The engine's type name; empty when the engine does not know it.
    #[serde(rename = "type")]
    pub type_name: String,
}

/// What a call collected.
pub struct ResultSink<'c> {
    caps: Caps,
    consent: &'c mut dyn Consent,
    /// The statement that ran last (a fix replaces an earlier one).
    pub sql: Option<String>,
    /// The code the model proposed last (`ask`).
    pub proposed: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
    bytes: usize,
    /// Values cut to fit the byte cap.
    pub values_cut: usize,
    /// Rows were left out (a cap, or the statement had more).
    pub truncated: bool,
    pub finished: Option<Finished>,
    /// Retries, renamed columns and other notes, in order.
    pub notes: Vec<String>,
    /// Why a write did not run, when the client said no.
    pub declined: Option<String>,
    /// A write waits for the client's answer in another round: its SQL.
    pub ask_next_round: Option<String>,
    pub outcome: Option<Outcome>,
}

impl<'c> ResultSink<'c> {
    pub fn new(caps: Caps, consent: &'c mut dyn Consent) -> Self {
        ResultSink {
            caps,
            consent,
            sql: None,
            proposed: None,
            columns: Vec::new(),
            rows: Vec::new(),
            bytes: 0,
            values_cut: 0,
            truncated: false,
            finished: None,
            notes: Vec::new(),
            declined: None,
            ask_next_round: None,
            outcome: None,
        }
    }

    /// Keeps the rows that fit; the first one that does not stops the
    /// statement. A value longer than its share of the byte cap is cut
    /// first, and the first row's values share the whole cap if they must:
    /// a result always shows a row when it has one.
    fn take(&mut self, rows: Vec<Vec<Value>>) -> io::Result<()> {
        for row in rows {
            if self.truncated || self.rows.len() >= self.caps.rows {
                self.truncated = true;
                return Err(EnoughRows::error());
            }
            // The first row is kept whole until it is known to fit, so that
            // its values can share the cap from their real sizes.
            let first = self.rows.is_empty().then(|| row.clone());
            let (mut row, mut cut) = cut_row(row, self.caps.bytes / VALUE_SHARE);
            let mut size = row_size(&row);
            if let Some(whole) = first.filter(|_| size > self.caps.bytes) {
                // JSON quotes and separators take a few bytes a value.
                let share = (self.caps.bytes / (whole.len() + 1)).saturating_sub(4);
                (row, cut) = cut_row(whole, share);
                size = row_size(&row);
            }
            if self.bytes + size > self.caps.bytes {
                self.truncated = true;
                return Err(EnoughRows::error());
            }
            self.bytes += size;
            self.values_cut += cut;
            self.rows.push(row);
        }
        Ok(())
    }

    /// Keeps the columns and the row count but not the values (a source's
    /// `redact` or `send_results = false`, SPEC §4.3): each value becomes
    /// `withheld`, and a note says why.
    pub fn withhold(&mut self, why: &str) {
        for row in &mut self.rows {
            for v in row.iter_mut() {
                *v = Value::Text("withheld".into());
            }
        }
        // Column names may be values too (a `PIVOT`).
        if why == crate::privacy::WITHHELD_NAMES {
            for (i, c) in self.columns.iter_mut().enumerate() {
                c.name = format!("column {}", i + 1);
            }
        }
        self.notes.push(format!("({why})"));
    }

    /// Rows returned (for a write: rows changed); `None` when nothing ran.
    pub fn rows_returned(&self) -> Option<u64> {
        let done = self.finished?;
        Some(if done.changed {
            done.rows
        } else {
            self.rows.len() as u64
        })
    }

    /// The result as a compact table (markdown) and a line of counts.
    pub fn table_text(&self) -> String {
        let Some(done) = self.finished else {
            return String::new();
        };
        if done.changed {
            let noun = if done.rows == 1 { "row" } else { "rows" };
            return format!("{} {noun} changed.", done.rows);
        }
        let mut out = Vec::new();
        let options = RenderOptions {
            max_rows: None,
            color: false,
            width: None,
            count_budget: None,
            full_width: false,
            in_chat: false,
        };
        {
            let mut r = render::renderer(Format::Markdown, Box::new(&mut out), options);
            let drawn = r
                .columns(&self.columns)
                .and_then(|_| self.rows.iter().try_for_each(|row| r.row(row)))
                .and_then(|_| r.finish());
            drop(r);
            if drawn.is_err() {
                out.clear();
            }
        }
        let mut text = String::from_utf8_lossy(&out).into_owned();
        let n = self.rows.len();
        let noun = if n == 1 { "row" } else { "rows" };
        if self.truncated {
            text.push_str(&format!(
                "({n} {noun} shown; the result has more, left out by the row or size limit: narrow the query, aggregate, or add LIMIT)\n"
            ));
        } else {
            text.push_str(&format!("({n} {noun})\n"));
        }
        if self.values_cut > 0 {
            let values = if self.values_cut == 1 {
                "value was"
            } else {
                "values were"
            };
            text.push_str(&format!(
                "({} {values} too long for the size limit and cut: each ends with …(its whole size); select a part of it, e.g. substr(col, 1, 1000), to read more)\n",
                self.values_cut
            ));
        }
        text
    }

    /// The result as structured content: columns with types, typed rows,
    /// the row count and whether rows were left out.
    pub fn structured(&self) -> QueryResult {
        let done = self.finished;
        QueryResult {
            columns: self
                .columns
                .iter()
                .map(|c| ResultColumn {
                    name: c.name.clone(),
                    type_name: c.type_name.clone(),
                })
                .collect(),
            rows: self
                .rows
                .iter()
                .map(|r| r.iter().map(value_json).collect())
                .collect(),
            row_count: self.rows.len(),
            truncated: self.truncated,
            rows_changed: done.filter(|d| d.changed).map(|d| d.rows),
            elapsed_ms: done.map(|d| d.elapsed.as_millis() as u64),
        }
    }
}

impl EventSink for ResultSink<'_> {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::ThinkingStarted
            | Event::TextDelta(_)
            | Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::Usage(_)
            | Event::Listing(_)
            | Event::Edit(_)
            | Event::SessionSaved(_)
            | Event::StatusChanged(_)
            | Event::Output(_)
            | Event::Chart(_) => {}
            // Nobody to ask: declined.
            Event::Secret(s) => s.answer(None),
            Event::Proposed { code, .. } => self.proposed = Some(code),
            Event::Confirm(c) => {
                let yes = match (c.kind, c.detail.as_deref()) {
                    (ConfirmKind::Write, Some(sql)) => match self.consent.decide(sql) {
                        Decision::Yes => true,
                        Decision::No(why) => {
                            self.declined = Some(why);
                            false
                        }
                        Decision::AskNextRound => {
                            self.ask_next_round = Some(sql.to_string());
                            false
                        }
                    },
                    _ => false,
                };
                c.answer(yes);
            }
            Event::QueryStarted { sql } => {
                // A fix starts over: nothing of a failed attempt stays.
                self.sql = Some(sql);
                self.columns.clear();
                self.rows.clear();
                self.bytes = 0;
                self.values_cut = 0;
                self.truncated = false;
                self.finished = None;
            }
            Event::Columns(columns) => self.columns = columns,
            Event::Rows(rows) => self.take(rows.into_values())?,
            Event::QueryFinished {
                rows,
                elapsed,
                changed,
                more,
            } => {
                self.truncated |= more;
                self.finished = Some(Finished {
                    rows,
                    changed,
                    elapsed,
                });
            }
            Event::Retrying { why, attempt } => self.notes.push(format!("retry {attempt}: {why}")),
            Event::Notice(text) | Event::Warning(text) | Event::CommandFailed(text) => {
                self.notes.push(text)
            }
            Event::TurnFinished(outcome) => self.outcome = Some(outcome),
        }
        Ok(())
    }
}

/// The bytes a row takes in the result (as JSON, with a separator).
fn row_size(row: &[Value]) -> usize {
    row_json(row).to_string().len() + 1
}

/// A row as JSON values.
pub fn row_json(row: &[Value]) -> Json {
    Json::Array(row.iter().map(value_json).collect())
}

/// A cell as JSON: numbers stay numbers where JSON holds them exactly (an
/// exact decimal with more digits than a double keeps, or a 128-bit
/// integer, is a string), NULL is null, JSON columns are embedded, the rest
/// is the text aiq prints.
pub fn value_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => json!(i),
        Value::BigInt(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(n), _) => json!(n),
            (_, Ok(n)) => json!(n),
            _ => Json::String(i.to_string()),
        },
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Value::Decimal(d) => decimal_json(d),
        Value::Json(j) => serde_json::from_str(j).unwrap_or_else(|_| Json::String(j.clone())),
        other => Json::String(other.to_text()),
    }
}

/// Digits a double holds exactly.
const EXACT_DIGITS: usize = 15;

fn decimal_json(d: &str) -> Json {
    let digits = d.chars().filter(char::is_ascii_digit).count();
    let significant = d
        .trim_start_matches(['-', '+'])
        .trim_start_matches(['0', '.'])
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    match d.parse::<f64>() {
        Ok(f) if f.is_finite() && significant.min(digits) <= EXACT_DIGITS => {
            serde_json::Number::from_f64(f)
                .map(Json::Number)
                .unwrap_or_else(|| Json::String(d.to_string()))
        }
        _ => Json::String(d.to_string()),
    }
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
