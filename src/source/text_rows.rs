//! Rows still in the text an engine received them in (ClickHouse's
//! tab-separated answer), and a batch of rows as the runner hands them on:
//! typed values, or such text.
//!
//! Turning a million rows of text into [`Value`]s only for CSV output to
//! turn them back into text costs more than reading them. So an engine that
//! reads text may hand whole lines on; a consumer that needs values reads
//! them ([`TextRows::for_each_row`]), while CSV and TSV output write each
//! field's plain text as it is ([`TextRows::plain`]) wherever that is the
//! text its value would print, and only the other fields become values.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::sync::Arc;

use super::Value;

/// How an engine's text becomes values: one line a row, its fields split
/// by one byte.
pub trait TextFormat: Send + Sync {
    /// The byte between two fields.
    fn separator(&self) -> u8;
    /// The byte that starts an escape inside a field, if the format has one.
    fn escape(&self) -> Option<u8>;
    /// Fields in a row.
    fn columns(&self) -> usize;
    /// The value of `column`'s field as the engine sent it.
    fn value(&self, column: usize, field: &[u8]) -> Value;
    /// The field's plain text, exactly what [`Value::write_text`] prints
    /// for [`TextFormat::value`] (NULL as empty), where the engine can give
    /// it without making the value; else the value.
    fn plain<'a>(&self, column: usize, field: Field<'a>) -> Result<Cow<'a, str>, Value>;
}

/// One field of a row as the engine sent it.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub bytes: &'a [u8],
    /// The same bytes as text, when they are UTF-8 (known for a whole
    /// block at once, not checked field by field).
    pub text: Option<&'a str>,
    /// It holds the format's escape byte.
    pub escaped: bool,
}

/// Where a field ends (at its separator or at the end of its line) is
/// kept as an offset with this bit set when the field holds an escape.
const ESCAPED: usize = 1 << (usize::BITS - 1);

/// Whole lines of an engine's text answer, each a row of
/// [`TextFormat::columns`] fields (checked when made).
#[derive(Clone)]
pub struct TextRows {
    /// Lines, each ended by `\n`: as text when the block is UTF-8.
    text: Result<String, Vec<u8>>,
    /// Where each field of each row ends, found in one pass when made
    /// (with [`ESCAPED`]).
    ends: Vec<usize>,
    rows: usize,
    format: Arc<dyn TextFormat>,
}

impl fmt::Debug for TextRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextRows")
            .field("rows", &self.rows)
            .field("bytes", &self.bytes().len())
            .finish()
    }
}

impl TextRows {
    /// The rows of `text`: lines each ended by `\n`, each with exactly the
    /// format's number of fields, else an error.
    pub fn new(format: Arc<dyn TextFormat>, text: Vec<u8>) -> io::Result<TextRows> {
        if !text.is_empty() && text.last() != Some(&b'\n') {
            return Err(io::Error::other("a row of the answer was cut off"));
        }
        let columns = format.columns();
        let separator = format.separator();
        let escape = format.escape().unwrap_or(separator);
        if text.len() >= ESCAPED {
            return Err(io::Error::other("a block of rows too large to read"));
        }
        let mut ends = Vec::with_capacity(text.len() / 4);
        let (mut fields, mut escaped) = (0, 0);
        for at in memchr::memchr3_iter(separator, b'\n', escape, &text) {
            let byte = text[at];
            if byte != separator && byte != b'\n' {
                escaped = ESCAPED;
                continue;
            }
            ends.push(at | escaped);
            escaped = 0;
            fields += 1;
            if byte == b'\n' {
                if fields != columns {
                    return Err(io::Error::other(format!(
                        "the server sent a row of {fields} fields for {columns} columns"
                    )));
                }
                fields = 0;
            }
        }
        let rows = ends.len() / columns.max(1);
        let text = String::from_utf8(text).map_err(|e| e.into_bytes());
        Ok(TextRows {
            text,
            ends,
            rows,
            format,
        })
    }

    fn bytes(&self) -> &[u8] {
        match &self.text {
            Ok(text) => text.as_bytes(),
            Err(bytes) => bytes,
        }
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Each row's fields, as the engine sent them.
    pub fn each_line(&self) -> impl Iterator<Item = impl Iterator<Item = Field<'_>>> {
        let columns = self.format.columns().max(1);
        let bytes = self.bytes();
        let text = self.text.as_ref().ok();
        let ends = &self.ends;
        ends.chunks_exact(columns).enumerate().map(move |(k, row)| {
            let mut start = match k {
                0 => 0,
                k => (ends[k * columns - 1] & !ESCAPED) + 1,
            };
            row.iter().map(move |&end| {
                let (from, to) = (start, end & !ESCAPED);
                start = to + 1;
                Field {
                    bytes: &bytes[from..to],
                    text: text.and_then(|t| t.get(from..to)),
                    escaped: end & ESCAPED != 0,
                }
            })
        })
    }

    /// A field's plain text, or its value where that text is not the
    /// field's own (see [`TextFormat::plain`]).
    pub fn plain<'a>(&self, column: usize, field: Field<'a>) -> Result<Cow<'a, str>, Value> {
        self.format.plain(column, field)
    }

    /// Each row read into values, in order, as it is asked for.
    pub fn values(&self) -> impl Iterator<Item = Vec<Value>> + '_ {
        self.each_line().map(|fields| {
            let mut row = Vec::with_capacity(self.format.columns());
            row.extend(
                fields
                    .enumerate()
                    .map(|(i, f)| self.format.value(i, f.bytes)),
            );
            row
        })
    }

    /// Calls `f` with each row read into values, in order; stops at its
    /// first error.
    pub fn for_each_row(&self, f: impl FnMut(Vec<Value>) -> io::Result<()>) -> io::Result<()> {
        self.values().try_for_each(f)
    }

    /// Every row, read into values.
    pub fn into_values(self) -> Vec<Vec<Value>> {
        self.values().collect()
    }
}

/// The fields of one line, split by one byte.
pub struct Fields<'a> {
    line: &'a [u8],
    separator: u8,
    done: bool,
}

impl<'a> Fields<'a> {
    /// The `separator`-split fields of `line` (one field when it has none).
    pub fn new(line: &'a [u8], separator: u8) -> Self {
        Fields {
            line,
            separator,
            done: false,
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        match memchr::memchr(self.separator, self.line) {
            Some(at) => {
                let field = &self.line[..at];
                self.line = &self.line[at + 1..];
                Some(field)
            }
            None => {
                self.done = true;
                Some(self.line)
            }
        }
    }
}

/// Some rows of a result, as the runner hands them on.
#[derive(Debug, Clone)]
pub enum RowBatch {
    /// Typed values.
    Values(Vec<Vec<Value>>),
    /// An engine's text, read into values only by a consumer that needs them.
    Text(TextRows),
    /// A block of ClickHouse's binary answer, likewise.
    Native(super::NativeRows),
}

impl From<Vec<Vec<Value>>> for RowBatch {
    fn from(rows: Vec<Vec<Value>>) -> Self {
        RowBatch::Values(rows)
    }
}

impl RowBatch {
    pub fn len(&self) -> usize {
        match self {
            RowBatch::Values(rows) => rows.len(),
            RowBatch::Text(text) => text.len(),
            RowBatch::Native(block) => block.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows as values.
    pub fn into_values(self) -> Vec<Vec<Value>> {
        match self {
            RowBatch::Values(rows) => rows,
            RowBatch::Text(text) => text.into_values(),
            RowBatch::Native(block) => block.values().collect(),
        }
    }

    /// Calls `f` with each row, read into values where it is text.
    pub fn each_row(&self, mut f: impl FnMut(&[Value])) {
        match self {
            RowBatch::Values(rows) => rows.iter().for_each(|row| f(row)),
            RowBatch::Text(text) => text.values().for_each(|row| f(&row)),
            RowBatch::Native(block) => block.values().for_each(|row| f(&row)),
        }
    }

    /// Hands the rows to `sink`: values row by row, an engine's own form
    /// as it is (a sink that writes text writes it without values).
    pub fn send_to(self, sink: &mut dyn super::RowSink) -> io::Result<()> {
        match self {
            RowBatch::Values(rows) => rows.iter().try_for_each(|row| sink.row(row)),
            RowBatch::Text(text) => sink.text_rows(text),
            RowBatch::Native(block) => sink.native_rows(block),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields are their own text, or a number where they are digits.
    struct Plain;

    impl TextFormat for Plain {
        fn separator(&self) -> u8 {
            b','
        }
        fn escape(&self) -> Option<u8> {
            Some(b'\\')
        }
        fn columns(&self) -> usize {
            2
        }
        fn value(&self, _: usize, field: &[u8]) -> Value {
            let text = String::from_utf8_lossy(field).into_owned();
            match text.parse() {
                Ok(i) => Value::Int(i),
                Err(_) => Value::Text(text),
            }
        }
        fn plain<'a>(&self, column: usize, field: Field<'a>) -> Result<Cow<'a, str>, Value> {
            match field.text {
                Some(text) if column == 1 && !field.escaped => Ok(Cow::Borrowed(text)),
                _ => Err(self.value(column, field.bytes)),
            }
        }
    }

    #[test]
    fn rows_are_checked_counted_and_read() {
        let rows = TextRows::new(Arc::new(Plain), b"1,a\n2,\n33,b\\c\n".to_vec()).unwrap();
        assert_eq!(rows.len(), 3);
        // Each field as (text, escaped); every one of these is UTF-8.
        let lines: Vec<Vec<(&str, bool)>> = rows
            .each_line()
            .map(|f| f.map(|f| (f.text.unwrap(), f.escaped)).collect())
            .collect();
        assert_eq!(
            lines,
            [
                vec![("1", false), ("a", false)],
                vec![("2", false), ("", false)],
                vec![("33", false), ("b\\c", true)],
            ]
        );
        let bytes = TextRows::new(Arc::new(Plain), b"1,\xff\n".to_vec()).unwrap();
        let field = bytes.each_line().next().unwrap().nth(1).unwrap();
        assert_eq!((field.bytes, field.text), (&b"\xff"[..], None));
        assert_eq!(
            rows.plain(1, rows.each_line().nth(2).unwrap().nth(1).unwrap()),
            Err(Value::Text("b\\c".into()))
        );
        assert_eq!(
            RowBatch::Text(rows).into_values(),
            [
                vec![Value::Int(1), Value::Text("a".into())],
                vec![Value::Int(2), Value::Text(String::new())],
                vec![Value::Int(33), Value::Text("b\\c".into())]
            ]
        );
        let e = TextRows::new(Arc::new(Plain), b"1,a\n2\n".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server sent a row of 1 fields for 2 columns"
        );
        assert!(TextRows::new(Arc::new(Plain), b"1,a\n2,b".to_vec()).is_err());
        assert!(TextRows::new(Arc::new(Plain), Vec::new())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_field_without_separators_is_the_whole_line() {
        assert_eq!(Fields::new(b"", b'\t').collect::<Vec<_>>(), [b""]);
        assert_eq!(
            Fields::new(b"a\t\tb", b'\t').collect::<Vec<_>>(),
            [&b"a"[..], b"", b"b"]
        );
    }
}
