//! `csv` (RFC 4180 quoting: the csv crate's rule for which fields need
//! quotes, and its quoting) and `tsv` (tab-separated, with tabs, newlines
//! and backslashes escaped as `\t`, `\n`, `\\`). Both stream: rows are
//! gathered into chunks of whole rows and written as each fills. NULL is
//! an empty field.
//!
//! An engine's own form of rows is written without making values where it
//! can be: text rows field by field ([`TextRows::plain`]), and ClickHouse's
//! binary blocks straight from their bytes ([`NativeRows::write_rows`]).

use std::io::{self, Write};

use super::{Limit, Renderer};
use crate::source::{Column, FieldWriter, NativeRows, RowSink, TextRows, Value};

/// How much of the output is gathered before it is written.
const CHUNK: usize = 64 * 1024;

/// CSV output.
pub(crate) type CsvRenderer<'a> = DelimitedRenderer<'a, Csv>;
/// TSV output.
pub(crate) type TsvRenderer<'a> = DelimitedRenderer<'a, Tsv>;

impl<'a> CsvRenderer<'a> {
    pub(crate) fn new(out: Box<dyn Write + 'a>, limit: Limit) -> Self {
        DelimitedRenderer::with(out, limit, Csv(csv_core::WriterBuilder::new().build()))
    }
}

impl<'a> TsvRenderer<'a> {
    pub(crate) fn new(out: Box<dyn Write + 'a>, limit: Limit) -> Self {
        DelimitedRenderer::with(out, limit, Tsv)
    }
}

/// How a text field is written, and what separates fields.
pub(crate) trait Style {
    const SEPARATOR: u8;
    /// What a row with nothing in it is written as.
    const EMPTY_ROW: &'static [u8];
    fn text(&self, text: &str, out: &mut Vec<u8>);
}

/// CSV: a field in quotes where the csv crate would quote it, by its own
/// rule and quoting (`csv_core`, with the csv crate's defaults).
pub(crate) struct Csv(csv_core::Writer);

impl Style for Csv {
    const SEPARATOR: u8 = b',';
    // A row of one empty field, as the csv crate writes it.
    const EMPTY_ROW: &'static [u8] = b"\"\"";

    fn text(&self, text: &str, out: &mut Vec<u8>) {
        let text = text.as_bytes();
        if !self.0.should_quote(text) {
            out.extend_from_slice(text);
            return;
        }
        out.push(b'"');
        let start = out.len();
        // Every byte doubled at most.
        out.resize(start + 2 * text.len(), 0);
        let (_, _, written) = csv_core::quote(text, &mut out[start..], b'"', b'\\', true);
        out.truncate(start + written);
        out.push(b'"');
    }
}

/// TSV: tabs, newlines, carriage returns and backslashes escaped as `\t`,
/// `\n`, `\r`, `\\`.
pub(crate) struct Tsv;

impl Style for Tsv {
    const SEPARATOR: u8 = b'\t';
    const EMPTY_ROW: &'static [u8] = b"";

    fn text(&self, text: &str, out: &mut Vec<u8>) {
        if !text.contains(['\t', '\n', '\r', '\\']) {
            out.extend_from_slice(text.as_bytes());
            return;
        }
        for c in text.chars() {
            match c {
                '\t' => out.extend_from_slice(b"\\t"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\\' => out.extend_from_slice(b"\\\\"),
                c => out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
            }
        }
    }
}

/// Rows of fields on their way to `out`, a chunk of whole rows at a time.
struct Lines<'a, S> {
    out: Box<dyn Write + 'a>,
    chunk: Vec<u8>,
    /// Where the current row starts in `chunk`.
    record: usize,
    style: S,
    /// A row has come after the header: a result that ends early with
    /// only its header (a failure before the first row) leaves nothing.
    rows: bool,
}

impl<S> Lines<'_, S> {
    fn write_chunk(&mut self) -> io::Result<()> {
        let written = self.out.write_all(&self.chunk);
        self.chunk.clear();
        self.record = 0;
        written
    }
}

/// Rows gathered before the result ended early (an error mid-stream) are
/// still written, as the rows before them were.
impl<S> Drop for Lines<'_, S> {
    fn drop(&mut self) {
        if !self.chunk.is_empty() && self.rows {
            let _ = self.write_chunk();
            let _ = self.out.flush();
        }
    }
}

impl<S: Style> FieldWriter for Lines<'_, S> {
    fn plain(&mut self, text: &[u8]) {
        self.chunk.extend_from_slice(text);
    }

    fn text(&mut self, text: &str) {
        self.style.text(text, &mut self.chunk);
    }

    fn separator(&mut self) {
        self.chunk.push(S::SEPARATOR);
    }

    fn end_row(&mut self) -> io::Result<()> {
        if self.chunk.len() == self.record {
            self.chunk.extend_from_slice(S::EMPTY_ROW);
        }
        self.chunk.push(b'\n');
        self.record = self.chunk.len();
        if self.chunk.len() >= CHUNK {
            self.write_chunk()?;
        }
        Ok(())
    }
}

/// CSV or TSV output.
pub(crate) struct DelimitedRenderer<'a, S> {
    lines: Lines<'a, S>,
    /// The text of a value that does not hold it as it is.
    field: String,
    limit: Limit,
}

impl<'a, S: Style> DelimitedRenderer<'a, S> {
    fn with(out: Box<dyn Write + 'a>, limit: Limit, style: S) -> Self {
        DelimitedRenderer {
            lines: Lines {
                out,
                chunk: Vec::with_capacity(CHUNK + 1024),
                record: 0,
                style,
                rows: false,
            },
            field: String::new(),
            limit,
        }
    }

    fn value(&mut self, value: &Value) {
        match value.held_text() {
            Some(text) => self.lines.text(text),
            None => {
                self.field.clear();
                value.write_text(&mut self.field);
                self.lines.text(&self.field);
            }
        }
    }
}

impl<S: Style> RowSink for DelimitedRenderer<'_, S> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                self.lines.separator();
            }
            self.lines.text(&c.name);
        }
        self.lines.end_row()
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        self.lines.rows = true;
        if !self.limit.admit() {
            return Ok(());
        }
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                self.lines.separator();
            }
            self.value(value);
        }
        self.lines.end_row()
    }

    /// Each field's plain text where the engine gives it
    /// ([`TextRows::plain`]), else its value's.
    fn text_rows(&mut self, rows: TextRows) -> io::Result<()> {
        self.lines.rows = true;
        for fields in rows.each_line() {
            if !self.limit.admit() {
                continue;
            }
            for (column, field) in fields.enumerate() {
                if column > 0 {
                    self.lines.separator();
                }
                match rows.plain(column, field) {
                    Ok(text) => self.lines.text(&text),
                    Err(value) => self.value(&value),
                }
            }
            self.lines.end_row()?;
        }
        Ok(())
    }

    fn native_rows(&mut self, rows: NativeRows) -> io::Result<()> {
        self.lines.rows = true;
        let shown = self.limit.admit_rows(rows.len());
        rows.write_rows(0..shown, &mut self.lines)
    }

    fn writes_delimited(&self) -> bool {
        true
    }
}

impl<S: Style> Renderer for DelimitedRenderer<'_, S> {
    fn finish(&mut self) -> io::Result<()> {
        // A result without rows still has its header.
        self.lines.rows = true;
        self.lines.write_chunk()?;
        self.lines.out.flush()
    }

    fn hidden(&self) -> u64 {
        self.limit.hidden()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{render, sample};
    use super::super::Format;
    use crate::source::{Column, Value};

    #[test]
    fn csv_quotes_what_needs_it() {
        let (cols, rows) = sample();
        assert_eq!(
            render(Format::Csv, None, &cols, &rows),
            "country,n,avg\nDE,3,12.50\n\"say \"\"hi\"\", ok\",10,\n"
        );
    }

    /// Fields of commas, quotes, line ends, tabs, spaces, `#` and
    /// non-ASCII text, from 0 to 5 characters, in rows of 1 to 4 fields
    /// (a row of one empty field among them): written as the csv crate
    /// writes the same records, byte for byte, through each way a
    /// renderer takes rows.
    #[test]
    fn csv_is_byte_for_byte_the_csv_crates() {
        let alphabet = ["a", ",", "\"", "\r", "\n", " ", "é", "\t", "#", "0"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for width in 1..=4 {
            let columns: Vec<Column> = (0..width)
                .map(|i| Column::new(format!("c{i}"), ""))
                .collect();
            let rows: Vec<Vec<Value>> = (0..500)
                .map(|_| {
                    (0..width)
                        .map(|_| {
                            let len = next(6);
                            Value::Text((0..len).map(|_| alphabet[next(alphabet.len())]).collect())
                        })
                        .collect()
                })
                .chain(std::iter::once(vec![Value::Text(String::new()); width]))
                .collect();
            let mut expected = csv::WriterBuilder::new().from_writer(Vec::new());
            expected
                .write_record(columns.iter().map(|c| c.name.as_str()))
                .unwrap();
            for row in &rows {
                expected
                    .write_record(row.iter().map(|v| v.to_text()))
                    .unwrap();
            }
            let expected = String::from_utf8(expected.into_inner().unwrap()).unwrap();
            assert_eq!(
                render(Format::Csv, None, &columns, &rows),
                expected,
                "{width} columns"
            );
        }
    }

    #[test]
    fn tsv_escapes_separators() {
        let cols = vec![Column::new("a", ""), Column::new("b", "")];
        let rows = vec![vec![Value::Text("x\ty\nz\\".into()), Value::Null]];
        assert_eq!(
            render(Format::Tsv, None, &cols, &rows),
            "a\tb\nx\\ty\\nz\\\\\t\n"
        );
    }
}
