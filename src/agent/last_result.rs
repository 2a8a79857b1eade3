//! The last result, kept for `/chart` (SPEC §10). A [`Tee`] in front of a
//! front end's sink records the result of a turn as it streams past — a
//! bounded [`Recording`], so a big result is thinned, never held whole —
//! whatever produced it: model SQL, `/sql`, `-e`, or a script's table
//! (Columns and Rows events are a result, wherever they come from).
//! [`LastResult::chart`] builds the chart and sends it as an event (each
//! front end draws it its own way) or writes it as an image.

use std::io;

use super::events::{Event, EventSink};
use super::outcome::Outcome;
use crate::chart::{self, ChartSpec, Recording};

/// Why there is nothing to chart.
pub const NO_RESULT: &str = "there is no result to chart yet";

/// The last complete result of a conversation (or of a single run).
#[derive(Debug)]
pub struct LastResult {
    keep: bool,
    last: Option<Recording>,
}

impl Default for LastResult {
    fn default() -> Self {
        LastResult {
            keep: true,
            last: None,
        }
    }
}

impl LastResult {
    /// Whether results are recorded at all (single-shot without a chart
    /// turns it off: an export should not pay for a copy).
    pub fn keep(&mut self, keep: bool) {
        self.keep = keep;
        if !keep {
            self.last = None;
        }
    }

    /// The last result, if one finished.
    pub fn get(&self) -> Option<&Recording> {
        self.last.as_ref()
    }

    /// A sink that records the results passing through to `inner`;
    /// `title` is what they answer (the question).
    pub fn tee<'a>(&'a mut self, inner: &'a mut dyn EventSink, title: Option<&str>) -> Tee<'a> {
        Tee {
            inner,
            last: self,
            building: None,
            title: title.map(str::to_string),
        }
    }

    /// Charts the last result as `spec` asks: an [`Event::Chart`] for the
    /// front end to draw, or with `spec.out` the image written there (and
    /// a notice saying so). The error is a line for the user.
    pub fn chart(&self, spec: &ChartSpec, sink: &mut dyn EventSink) -> Result<(), String> {
        let rec = self.last.as_ref().ok_or(NO_RESULT)?;
        let built =
            chart::build(rec, spec).map_err(|why| format!("cannot chart this result: {why}"))?;
        match &spec.out {
            Some(path) => {
                let format = chart::image::write(&built, path)?;
                let _ = sink.event(Event::Notice(format!(
                    "Chart written to {} ({} {}×{}, {})",
                    path.display(),
                    format.name(),
                    chart::image::WIDTH,
                    chart::image::HEIGHT,
                    built.kind
                )));
            }
            None => {
                let _ = sink.event(Event::Chart(Box::new(built)));
            }
        }
        Ok(())
    }
}

/// Records results on their way to the front end's sink.
pub struct Tee<'a> {
    inner: &'a mut dyn EventSink,
    last: &'a mut LastResult,
    building: Option<Recording>,
    title: Option<String>,
}

impl Tee<'_> {
    fn keep(&mut self, more: bool) {
        if let Some(mut rec) = self.building.take() {
            rec.finish(more);
            self.last.last = Some(rec);
        }
    }
}

impl EventSink for Tee<'_> {
    fn event(&mut self, event: Event) -> io::Result<()> {
        if self.last.keep {
            match &event {
                Event::Columns(columns) => {
                    self.building = Some(Recording::new(columns, self.title.clone()))
                }
                Event::Rows(rows) => {
                    if let Some(rec) = self.building.as_mut() {
                        rows.each_row(|row| rec.push(row));
                    }
                }
                Event::QueryFinished { changed, more, .. } => {
                    if *changed {
                        self.building = None;
                    } else {
                        self.keep(*more);
                    }
                }
                // A result that ends without a statement (a script's table).
                Event::TurnFinished(Outcome::Answered(_)) => self.keep(false),
                _ => {}
            }
        }
        self.inner.event(event)
    }

    fn writes_delimited(&self) -> bool {
        self.inner.writes_delimited()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::testkit::Recorder;
    use crate::agent::Answer;
    use crate::source::{Column, RowBatch, Value};
    use std::time::Duration;

    fn result(sink: &mut dyn EventSink, n: i64, finish: bool) {
        let columns = vec![Column::new("c", "TEXT"), Column::new("n", "INTEGER")];
        sink.event(Event::Columns(columns)).unwrap();
        let rows = (0..n)
            .map(|i| vec![Value::Text(format!("c{i}")), Value::Int(i)])
            .collect();
        sink.event(Event::Rows(RowBatch::Values(rows))).unwrap();
        if finish {
            sink.event(Event::QueryFinished {
                rows: n as u64,
                elapsed: Duration::ZERO,
                changed: false,
                more: false,
            })
            .unwrap();
        }
    }

    #[test]
    fn the_last_finished_result_is_kept_and_passed_on() {
        let mut last = LastResult::default();
        let mut seen = Recorder::default();
        {
            let mut tee = last.tee(&mut seen, Some("per c?"));
            result(&mut tee, 3, true);
            // A second statement that fails half way keeps the first.
            result(&mut tee, 5, false);
            tee.event(Event::Retrying {
                why: "x".into(),
                attempt: 1,
            })
            .unwrap();
        }
        let rec = last.get().unwrap();
        assert_eq!((rec.seen(), rec.title.as_deref()), (3, Some("per c?")));
        assert_eq!(seen.events.len(), 6);
        // A script's table ends with the turn.
        {
            let mut tee = last.tee(&mut seen, None);
            result(&mut tee, 4, false);
            let answer = Answer {
                text: String::new(),
                code: None,
                rows: None,
            };
            tee.event(Event::TurnFinished(Outcome::Answered(answer)))
                .unwrap();
        }
        assert_eq!(last.get().unwrap().seen(), 4);
    }

    #[test]
    fn charts_are_sent_or_written_and_failures_say_why() {
        let mut last = LastResult::default();
        let mut sink = Recorder::default();
        let spec = ChartSpec::default();
        assert_eq!(last.chart(&spec, &mut sink), Err(NO_RESULT.into()));
        result(&mut last.tee(&mut Recorder::default(), None), 3, true);
        last.chart(&spec, &mut sink).unwrap();
        assert!(matches!(&sink.events[..], [Event::Chart(c)] if c.kind == chart::Kind::Bar));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.svg");
        let spec = ChartSpec::parse(&format!("> {}", out.display())).unwrap();
        last.chart(&spec, &mut sink).unwrap();
        assert!(out.exists());
        assert!(matches!(&sink.events[1], Event::Notice(n) if n.starts_with("Chart written to ")));
        let spec = ChartSpec::parse("scatter").unwrap();
        assert_eq!(
            last.chart(&spec, &mut sink),
            Err("cannot chart this result: a scatter chart needs two number columns".into())
        );
        last.keep(false);
        assert!(last.get().is_none());
    }
}
