//! The lines of a `TabSeparatedWithNamesAndTypes` answer — names, types,
//! then rows — turned into columns and typed rows for a sink, or handed on
//! as text ([`TextRows`]) in blocks of whole lines. Pure.

use std::borrow::Cow;
use std::sync::Arc;

use super::text::{is_exception_line, unescape, Kind};
use crate::source::{Column, Field, Fields, RowSink, TextFormat, TextRows, Value};

/// The format of every answer but a binary export's.
pub(super) const TEXT: &str = "TabSeparatedWithNamesAndTypes";

/// How the pieces of an answer, as they arrive, become rows for a sink.
pub(super) trait Answer {
    /// The format the statement is asked to answer in.
    fn format(&self) -> &'static str;
    /// One piece of the answer.
    fn take(&mut self, piece: &[u8], sink: &mut dyn RowSink) -> Result<(), Stop>;
    /// The answer ended: the rows it sent.
    fn end(self, sink: &mut dyn RowSink) -> Result<u64, Stop>;
}

/// Why an answer stopped being read.
#[derive(Debug)]
pub(super) enum Stop {
    /// The sink's error, or rows not as the header said.
    Io(std::io::Error),
    /// The text of an exception the server sent after some rows.
    Exception(String),
    /// The answer is not in the form asked for.
    Unreadable(String),
}

/// A `TabSeparatedWithNamesAndTypes` answer: the header's two lines, one
/// at a time (a line may span pieces), then the whole lines of each piece
/// handed on together as text; a line cut by a piece's end waits for the
/// next one.
#[derive(Default)]
pub(super) struct TextAnswer {
    reader: Rows,
    /// The start of a line whose end has not come yet.
    pending: Vec<u8>,
}

impl Answer for TextAnswer {
    fn format(&self) -> &'static str {
        TEXT
    }

    fn take(&mut self, piece: &[u8], sink: &mut dyn RowSink) -> Result<(), Stop> {
        let mut data = piece;
        while self.reader.stage < 2 {
            let Some(end) = memchr::memchr(b'\n', data) else {
                break;
            };
            self.pending.extend_from_slice(&data[..end]);
            data = &data[end + 1..];
            let line = std::mem::take(&mut self.pending);
            if is_exception_line(&line) {
                let mut text = String::from_utf8_lossy(&line).into_owned();
                text.push('\n');
                text.push_str(&String::from_utf8_lossy(data));
                return Err(Stop::Exception(text));
            }
            self.reader.line(&line, sink).map_err(Stop::Io)?;
        }
        let whole = match memchr::memrchr(b'\n', data) {
            Some(last) if self.reader.stage == 2 => last + 1,
            _ => 0,
        };
        if whole == 0 {
            self.pending.extend_from_slice(data);
            return Ok(());
        }
        let mut block = std::mem::take(&mut self.pending);
        block.extend_from_slice(&data[..whole]);
        self.pending.extend_from_slice(&data[whole..]);
        self.reader.block(block, &self.pending, sink)
    }

    fn end(mut self, sink: &mut dyn RowSink) -> Result<u64, Stop> {
        if !self.pending.is_empty() {
            if is_exception_line(&self.pending) {
                return Err(Stop::Exception(
                    String::from_utf8_lossy(&self.pending).into_owned(),
                ));
            }
            self.reader.line(&self.pending, sink).map_err(Stop::Io)?;
        }
        if self.reader.stage < 2 {
            // A statement with no result (DDL, INSERT): no columns.
            sink.columns(&[]).map_err(Stop::Io)?;
        }
        Ok(self.reader.rows)
    }
}

/// The rows' text: tab-separated fields, each typed by its column's kind.
struct Tsv {
    kinds: Vec<Kind>,
}

impl TextFormat for Tsv {
    fn separator(&self) -> u8 {
        b'\t'
    }

    fn escape(&self) -> Option<u8> {
        Some(b'\\')
    }

    fn columns(&self) -> usize {
        self.kinds.len()
    }

    fn value(&self, column: usize, field: &[u8]) -> Value {
        self.kinds[column].decode(field)
    }

    fn plain<'a>(&self, column: usize, field: Field<'a>) -> Result<Cow<'a, str>, Value> {
        self.kinds[column].plain(field)
    }
}

/// Reads the lines of a `TabSeparatedWithNamesAndTypes` answer: names,
/// types, then rows.
#[derive(Default)]
pub(super) struct Rows {
    /// 0: names next; 1: types next; 2: rows.
    pub(super) stage: u8,
    names: Vec<String>,
    /// The columns' kinds, once the types' line is read.
    format: Option<Arc<Tsv>>,
    /// Rows sent to the sink so far.
    pub(super) rows: u64,
}

impl Rows {
    /// One line of the answer (without its `\n`): a header line, or a row,
    /// read as a block of one line ([`Rows::block`]).
    pub(super) fn line(&mut self, line: &[u8], sink: &mut dyn RowSink) -> std::io::Result<()> {
        let fields = Fields::new(line, b'\t');
        match self.stage {
            0 => {
                self.names = fields.map(header_text).collect();
                self.stage = 1;
            }
            1 => {
                let types: Vec<String> = fields.map(header_text).collect();
                self.format = Some(Arc::new(Tsv {
                    kinds: types.iter().map(|t| Kind::of(t)).collect(),
                }));
                let columns: Vec<Column> = self
                    .names
                    .iter()
                    .zip(&types)
                    .map(|(n, t)| Column::new(n.clone(), t.clone()))
                    .collect();
                self.stage = 2;
                sink.columns(&columns)?;
            }
            _ => {
                let mut block = Vec::with_capacity(line.len() + 1);
                block.extend_from_slice(line);
                block.push(b'\n');
                return self.block(block, &[], sink).map_err(|e| match e {
                    Stop::Io(e) => e,
                    Stop::Exception(text) | Stop::Unreadable(text) => std::io::Error::other(text),
                });
            }
        }
        Ok(())
    }

    /// Whole row lines (each ended by `\n`), handed on as text. The rows
    /// before a server's exception go on; the exception is the error,
    /// with `more` (what came after the block) in its text.
    pub(super) fn block(
        &mut self,
        block: Vec<u8>,
        more: &[u8],
        sink: &mut dyn RowSink,
    ) -> Result<(), Stop> {
        let format = match &self.format {
            Some(format) => Arc::clone(format) as Arc<dyn TextFormat>,
            None => {
                return Err(Stop::Io(std::io::Error::other(
                    "rows came before their types",
                )))
            }
        };
        let (block, exception) = match exception_at(&block) {
            Some(at) => {
                let mut text = String::from_utf8_lossy(&block[at..]).into_owned();
                text.push_str(&String::from_utf8_lossy(more));
                let mut rows = block;
                rows.truncate(at);
                (rows, Some(text))
            }
            None => (block, None),
        };
        let rows = TextRows::new(format, block).map_err(Stop::Io)?;
        self.rows += rows.len() as u64;
        if !rows.is_empty() {
            sink.text_rows(rows).map_err(Stop::Io)?;
        }
        match exception {
            Some(text) => Err(Stop::Exception(text)),
            None => Ok(()),
        }
    }
}

/// Where the line of a server's exception starts in `block`, if one does.
/// Most blocks hold none, so the lines are looked at only where one may be:
/// where "xception" is (`DB::Exception`, `__exception__`).
fn exception_at(block: &[u8]) -> Option<usize> {
    memchr::memmem::find(block, b"xception")?;
    let mut start = 0;
    while start < block.len() {
        let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |e| start + e);
        if is_exception_line(&block[start..end]) {
            return Some(start);
        }
        start = end + 1;
    }
    None
}

/// A name or type of the header lines, unescaped.
fn header_text(field: &[u8]) -> String {
    String::from_utf8_lossy(&unescape(field)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::server::Collect;

    #[test]
    fn header_and_rows_are_read_in_order() {
        let mut out = Collect::default();
        let mut rows = Rows::default();
        for line in [
            &b"id\tname\tts"[..],
            b"UInt64\tNullable(String)\tDateTime(\\'UTC\\')",
            b"18446744073709551615\t\\N\t2024-02-29 13:05:09",
        ] {
            rows.line(line, &mut out).unwrap();
        }
        assert_eq!(out.columns[2].type_name, "DateTime('UTC')");
        assert_eq!(out.rows[0][0], Value::BigInt(u64::MAX as i128));
        assert_eq!(out.rows[0][1], Value::Null);
        assert!(rows.line(b"1\t2", &mut out).is_err());
    }
}
