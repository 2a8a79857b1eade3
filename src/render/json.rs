//! `json` (one array of objects) and `jsonl` (one object per line). Numbers
//! stay numbers — decimals exactly as the engine printed them — NULL is
//! `null`, and JSON columns are embedded as JSON. Rows stream out as they come.

use std::io::{self, Write};

use super::{Limit, Renderer};
use crate::source::{Column, RowSink, Value};

pub(crate) struct JsonRenderer<'a> {
    out: io::BufWriter<Box<dyn Write + 'a>>,
    /// Each column name, already encoded as a JSON string followed by `:`.
    keys: Vec<String>,
    lines: bool,
    started: bool,
    /// `[` is written (with the first row shown).
    opened: bool,
    text: String,
    limit: Limit,
}

impl<'a> JsonRenderer<'a> {
    pub(crate) fn new(out: Box<dyn Write + 'a>, limit: Limit, lines: bool) -> Self {
        JsonRenderer {
            out: io::BufWriter::with_capacity(64 * 1024, out),
            keys: Vec::new(),
            lines,
            started: false,
            opened: false,
            text: String::new(),
            limit,
        }
    }

    fn write_value(&mut self, v: &Value) -> io::Result<()> {
        match v {
            Value::Null => self.out.write_all(b"null"),
            Value::Bool(b) => self.out.write_all(if *b { b"true" } else { b"false" }),
            Value::Int(i) => write!(self.out, "{i}"),
            Value::BigInt(i) => write!(self.out, "{i}"),
            Value::Float(f) if f.is_finite() => write!(self.out, "{f:?}"),
            Value::Float(_) => self.out.write_all(b"null"),
            Value::Decimal(d) => self.out.write_all(d.as_bytes()),
            Value::Json(j) if serde_json::from_str::<serde::de::IgnoredAny>(j).is_ok() => {
                self.out.write_all(j.trim().as_bytes())
            }
            other => {
                self.text.clear();
                other.write_text(&mut self.text);
                serde_json::to_writer(&mut self.out, &self.text).map_err(io::Error::from)
            }
        }
    }
}

impl RowSink for JsonRenderer<'_> {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.keys = columns
            .iter()
            .map(|c| {
                let mut k = serde_json::to_string(&c.name).unwrap_or_else(|_| "\"?\"".into());
                k.push(':');
                k
            })
            .collect();
        // `[` goes with the first row or at the end: a result that fails
        // before its first row leaves nothing.
        self.started = !self.lines;
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        if !self.limit.admit() {
            return Ok(());
        }
        if !self.lines {
            self.out
                .write_all(if self.opened { b",\n" } else { b"[\n" })?;
            self.opened = true;
        }
        self.out.write_all(b"{")?;
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            let key = std::mem::take(&mut self.keys[i]);
            let r = self.out.write_all(key.as_bytes());
            self.keys[i] = key;
            r?;
            self.write_value(v)?;
        }
        self.out.write_all(if self.lines { b"}\n" } else { b"}" })
    }
}

impl Renderer for JsonRenderer<'_> {
    fn finish(&mut self) -> io::Result<()> {
        if self.started {
            self.out
                .write_all(if self.opened { b"\n]\n" } else { b"[]\n" })?;
        }
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
    fn json_array_of_objects() {
        let (cols, rows) = sample();
        let out = render(Format::Json, None, &cols, &rows);
        assert_eq!(
            out,
            "[\n{\"country\":\"DE\",\"n\":3,\"avg\":12.50},\n{\"country\":\"say \\\"hi\\\", ok\",\"n\":10,\"avg\":null}\n]\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed[0]["n"], 3);
        assert!(parsed[1]["avg"].is_null());
    }

    #[test]
    fn empty_json_is_an_empty_array() {
        let cols = vec![Column::new("a", "")];
        assert_eq!(render(Format::Json, None, &cols, &[]), "[]\n");
        assert_eq!(render(Format::Jsonl, None, &cols, &[]), "");
    }

    #[test]
    fn jsonl_lines_and_special_values() {
        let cols = vec![
            Column::new("j", "JSON"),
            Column::new("f", "DOUBLE"),
            Column::new("b", "BOOLEAN"),
        ];
        let rows = vec![
            vec![
                Value::Json("{\"x\": [1]}".into()),
                Value::Float(f64::NAN),
                Value::Bool(false),
            ],
            vec![
                Value::Json("not json".into()),
                Value::Float(0.25),
                Value::Null,
            ],
        ];
        assert_eq!(
            render(Format::Jsonl, None, &cols, &rows),
            "{\"j\":{\"x\": [1]},\"f\":null,\"b\":false}\n{\"j\":\"not json\",\"f\":0.25,\"b\":null}\n"
        );
    }
}
