//! `csv` (RFC 4180 quoting by the csv crate) and `tsv` (tab-separated, with
//! tabs, newlines and backslashes escaped as `\t`, `\n`, `\\`). Both stream:
//! each row is written as it arrives. NULL is an empty field.

use std::borrow::Cow;
use std::io::{self, Write};

use super::{Limit, Renderer};
use crate::source::{Column, RowSink, TextRows, Value};

pub(crate) struct CsvRenderer<'a> {
    out: csv::Writer<Box<dyn Write + 'a>>,
    /// The text of a value that does not hold it as it is.
    field: String,
    limit: Limit,
}

impl<'a> CsvRenderer<'a> {
    pub(crate) fn new(out: Box<dyn Write + 'a>, limit: Limit) -> Self {
        CsvRenderer {
            out: csv::WriterBuilder::new()
                .buffer_capacity(64 * 1024)
                .from_writer(out),
            field: String::new(),
            limit,
        }
    }

    fn write_value(&mut self, value: &Value) -> io::Result<()> {
        let text = match value.held_text() {
            Some(text) => text,
            None => {
                self.field.clear();
                value.write_text(&mut self.field);
                &self.field
            }
        };
        self.out.write_field(text).map_err(csv_error)
    }
}

fn csv_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

impl RowSink for CsvRenderer<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        self.out
            .write_record(columns.iter().map(|c| c.name.as_str()))
            .map_err(csv_error)
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if !self.limit.admit() {
            return Ok(());
        }
        for value in row {
            self.write_value(value)?;
        }
        self.end_row()
    }

    fn text_rows(&mut self, rows: TextRows) -> io::Result<()> {
        write_text_rows(&rows, self)
    }
}

impl Delimited for CsvRenderer<'_> {
    fn admit(&mut self) -> bool {
        self.limit.admit()
    }

    fn field(&mut self, _: usize, text: Result<Cow<'_, str>, Value>) -> io::Result<()> {
        match text {
            Ok(text) => self.out.write_field(text.as_bytes()).map_err(csv_error),
            Err(value) => self.write_value(&value),
        }
    }

    fn end_row(&mut self) -> io::Result<()> {
        // Ends the record (as `write_record` does after its fields).
        self.out.write_record(None::<&[u8]>).map_err(csv_error)
    }
}

/// A renderer that writes rows field by field, and so can take an
/// engine's text rows ([`TextRows`]) with most fields as they came.
trait Delimited {
    /// Registers one row; true if it is written.
    fn admit(&mut self) -> bool;
    /// One field: its plain text, or its value.
    fn field(&mut self, column: usize, text: Result<Cow<'_, str>, Value>) -> io::Result<()>;
    fn end_row(&mut self) -> io::Result<()>;
}

/// Writes text rows, each field's plain text where the engine gives it
/// ([`TextRows::plain`]), else its value's.
fn write_text_rows(rows: &TextRows, out: &mut impl Delimited) -> io::Result<()> {
    for fields in rows.each_line() {
        if !out.admit() {
            continue;
        }
        for (column, field) in fields.enumerate() {
            out.field(column, rows.plain(column, field))?;
        }
        out.end_row()?;
    }
    Ok(())
}

impl Renderer for CsvRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn hidden(&self) -> u64 {
        self.limit.hidden()
    }
}

pub(crate) struct TsvRenderer<'a> {
    out: io::BufWriter<Box<dyn Write + 'a>>,
    field: String,
    limit: Limit,
}

impl<'a> TsvRenderer<'a> {
    pub(crate) fn new(out: Box<dyn Write + 'a>, limit: Limit) -> Self {
        TsvRenderer {
            out: io::BufWriter::with_capacity(64 * 1024, out),
            field: String::new(),
            limit,
        }
    }

    fn write_value(&mut self, value: &Value, first: bool) -> io::Result<()> {
        if let Some(text) = value.held_text() {
            return self.write_field(text, first);
        }
        let mut field = std::mem::take(&mut self.field);
        field.clear();
        value.write_text(&mut field);
        let r = self.write_field(&field, first);
        self.field = field;
        r
    }

    fn write_field(&mut self, text: &str, first: bool) -> io::Result<()> {
        if !first {
            self.out.write_all(b"\t")?;
        }
        if !text.contains(['\t', '\n', '\r', '\\']) {
            return self.out.write_all(text.as_bytes());
        }
        for c in text.chars() {
            match c {
                '\t' => self.out.write_all(b"\\t")?,
                '\n' => self.out.write_all(b"\\n")?,
                '\r' => self.out.write_all(b"\\r")?,
                '\\' => self.out.write_all(b"\\\\")?,
                c => {
                    let mut buf = [0u8; 4];
                    self.out.write_all(c.encode_utf8(&mut buf).as_bytes())?;
                }
            }
        }
        Ok(())
    }
}

impl RowSink for TsvRenderer<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        for (i, c) in columns.iter().enumerate() {
            self.write_field(&c.name, i == 0)?;
        }
        self.out.write_all(b"\n")
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if !self.limit.admit() {
            return Ok(());
        }
        for (i, v) in row.iter().enumerate() {
            self.write_value(v, i == 0)?;
        }
        self.end_row()
    }

    fn text_rows(&mut self, rows: TextRows) -> io::Result<()> {
        write_text_rows(&rows, self)
    }
}

impl Delimited for TsvRenderer<'_> {
    fn admit(&mut self) -> bool {
        self.limit.admit()
    }

    fn field(&mut self, column: usize, text: Result<Cow<'_, str>, Value>) -> io::Result<()> {
        match text {
            Ok(text) => self.write_field(&text, column == 0),
            Err(value) => self.write_value(&value, column == 0),
        }
    }

    fn end_row(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n")
    }
}

impl Renderer for TsvRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
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
