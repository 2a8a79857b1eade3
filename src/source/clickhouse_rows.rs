//! The lines of a `TabSeparatedWithNamesAndTypes` answer — names, types,
//! then rows — turned into columns and typed rows for a sink. Pure.

use super::clickhouse_text::{unescape, Kind};
use super::{Column, RowSink, Value};

/// Reads the lines of a `TabSeparatedWithNamesAndTypes` answer: names,
/// types, then rows.
#[derive(Default)]
pub(super) struct Rows {
    /// 0: names next; 1: types next; 2: rows.
    pub(super) stage: u8,
    names: Vec<String>,
    kinds: Vec<Kind>,
    row: Vec<Value>,
    /// Rows sent to the sink so far.
    pub(super) rows: u64,
}

impl Rows {
    pub(super) fn line(&mut self, line: &[u8], sink: &mut dyn RowSink) -> std::io::Result<()> {
        let fields = fields(line);
        match self.stage {
            0 => {
                self.names = fields.map(header_text).collect();
                self.stage = 1;
            }
            1 => {
                let types: Vec<String> = fields.map(header_text).collect();
                self.kinds = types.iter().map(|t| Kind::of(t)).collect();
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
                self.row.clear();
                for (i, field) in fields.enumerate() {
                    let kind = self.kinds.get(i).copied().unwrap_or(Kind::Text);
                    self.row.push(kind.decode(field));
                }
                if self.row.len() != self.kinds.len() {
                    return Err(std::io::Error::other(format!(
                        "the server sent a row of {} fields for {} columns",
                        self.row.len(),
                        self.kinds.len()
                    )));
                }
                let row = std::mem::replace(&mut self.row, Vec::with_capacity(self.kinds.len()));
                sink.row_owned(row)?;
                self.rows += 1;
            }
        }
        Ok(())
    }
}

/// The tab-separated fields of one line.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut tabs = memchr::memchr_iter(b'\t', line);
    let mut start = Some(0);
    std::iter::from_fn(move || {
        let from = start?;
        match tabs.next() {
            Some(tab) => {
                start = Some(tab + 1);
                Some(&line[from..tab])
            }
            None => {
                start = None;
                Some(&line[from..])
            }
        }
    })
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
