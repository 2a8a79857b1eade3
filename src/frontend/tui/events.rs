//! How the conversation's events change the view: streamed text into the
//! conversation pane, statements into the grid, a chart into the result
//! pane, requests, tokens, retries
//! and tool calls into the log, questions into a dialog, and the end of a
//! turn. Part of [`App::update`].

use std::time::Duration;

use super::app::{App, Focus, Overlay, Phase, Typed};
use super::grid::Finished;
use super::log::Kind;
use super::text::duration;
use super::transcript::{Entry, Transcript};
use crate::agent::{AgentError, Event, Outcome};
use crate::llm::Usage;

impl App {
    /// One event from the conversation.
    pub(super) fn core(&mut self, event: Event) {
        match event {
            Event::ThinkingStarted => self.thinking(),
            Event::TextDelta(text) => {
                self.phase(Phase::Answering);
                self.streamed = true;
                self.change_transcript(|t| t.stream(&text));
            }
            // A tool-call answer streams no text: show its code.
            Event::Proposed { mode, code } if !self.streamed => self.show(Entry::Code(mode, code)),
            Event::Proposed { .. } => {}
            Event::Confirm(c) => {
                self.phase(Phase::Waiting);
                self.overlay = Some(Overlay::Confirm(c));
                self.style_input();
            }
            Event::Secret(s) => {
                self.phase(Phase::Waiting);
                self.overlay = Some(Overlay::Secret(s, Typed::default()));
                self.style_input();
            }
            Event::QueryStarted { sql } => {
                self.phase(Phase::Running);
                self.note(Kind::Statement, &sql);
                self.grid.start(&sql);
                self.chart.clear();
            }
            Event::Columns(columns) => self.grid.columns(columns),
            Event::Rows(rows) => self.grid.push(rows.into_values()),
            Event::QueryFinished {
                rows,
                elapsed,
                changed,
                more,
            } => self.finished(Finished {
                rows,
                elapsed,
                changed,
                more,
            }),
            Event::Retrying { why, attempt } => {
                self.grid.stop("failed");
                self.note(Kind::Retry, &format!("retry {attempt}: {why}"));
                self.show(Entry::Fix(format!("{why} (try {attempt})")));
            }
            Event::ToolCall { name, arguments } => {
                self.note(Kind::Request, &format!("{name} {arguments}"));
                self.show(Entry::Lookup(format!("{name} {arguments}")));
            }
            Event::ToolResult { name, result } => {
                self.note(Kind::Reply, &format!("{name}: {result}"))
            }
            Event::Output(text) => self.show(Entry::Output(text)),
            Event::Usage(u) => self.usage(u),
            Event::Listing(text) => self.show(Entry::Listing(text)),
            Event::Chart(chart) => {
                self.hint = None;
                self.chart.set(chart);
            }
            Event::Notice(text) => self.show(Entry::Notice(text)),
            Event::Warning(text) => self.warning(text),
            Event::CommandFailed(text) => self.show(Entry::Error(text)),
            Event::Edit(sql) => {
                self.set_input(&format!("/sql {sql}"));
                // The start of a long statement in sight.
                self.input.move_cursor(ratatui_textarea::CursorMove::Top);
                self.input.move_cursor(ratatui_textarea::CursorMove::Head);
                self.set_focus(Focus::Input);
            }
            Event::SessionSaved(path) => {
                self.note(Kind::Info, &format!("session saved to {}", path.display()));
                if self.turn.is_none() {
                    self.after_turn.saved = Some(path);
                }
            }
            Event::StatusChanged(status) => {
                if status.format != self.status.format {
                    self.grid.set_format(status.format);
                }
                self.status = status;
            }
            Event::TurnFinished(outcome) => self.turn_finished(outcome),
        }
    }

    fn phase(&mut self, phase: Phase) {
        if let Some(t) = self.turn.as_mut() {
            t.phase = phase;
        }
    }

    /// A model request starts: a new answer follows.
    fn thinking(&mut self) {
        if let Some(t) = self.turn.as_mut() {
            t.phase = Phase::Thinking;
            t.request = self.now;
        }
        self.streamed = false;
        self.transcript.close_answer();
        let asking = format!("asking {} {}", self.status.provider, self.status.model);
        self.note(Kind::Request, &asking);
    }

    fn usage(&mut self, u: Usage) {
        self.tokens += u.input_tokens + u.output_tokens;
        let took = self
            .turn
            .map(|t| self.now.duration_since(t.request))
            .unwrap_or_default();
        let line = format!(
            "model: {} in, {} out tokens · {}",
            u.input_tokens,
            u.output_tokens,
            duration(took)
        );
        self.note(Kind::Reply, &line);
    }

    fn warning(&mut self, text: String) {
        self.note(Kind::Warning, &text);
        self.show(Entry::Warning(text.clone()));
        if self.turn.is_none() {
            self.after_turn.warnings.push(text);
        }
    }

    fn finished(&mut self, f: Finished) {
        let took = duration(f.elapsed);
        let line = if f.changed {
            format!("{} changed in {took}", f.rows_text())
        } else {
            format!("{} in {took}", f.rows_text())
        };
        self.note(Kind::Done, &line);
        self.show(Entry::Result(line));
        self.grid.finish(f, self.status.format);
    }

    fn turn_finished(&mut self, outcome: Outcome) {
        let took = self.turn.take().map(|t| self.now.duration_since(t.started));
        self.after_turn = Default::default();
        self.hint = None;
        if let Some(Overlay::Confirm(_) | Overlay::Secret(..)) = self.overlay {
            self.overlay = None;
            self.style_input();
        }
        match outcome {
            Outcome::Failed(AgentError::Cancelled) => {
                self.grid.stop("was cancelled");
                self.show(Entry::Notice("Cancelled; the conversation is kept.".into()));
                self.note(Kind::Info, "cancelled");
            }
            Outcome::Failed(AgentError::Output { closed: true, .. }) => {}
            Outcome::Failed(e) => {
                self.grid.stop("failed");
                let text = e.to_string();
                self.note(Kind::Error, &text);
                self.show(Entry::Error(text));
            }
            Outcome::Answered(_) | Outcome::Done => {
                if let Some(took) = took.filter(|t| *t >= Duration::from_secs(1)) {
                    self.note(Kind::Info, &format!("turn took {}", duration(took)));
                }
            }
        }
    }

    /// Adds to the conversation pane.
    fn show(&mut self, entry: Entry) {
        self.change_transcript(|t| t.push(entry));
    }

    /// Adds a line to the log pane, keeping a reader's place.
    pub(super) fn note(&mut self, kind: Kind, text: &str) {
        let back = self.log.scroll.back;
        if back == 0 {
            return self.log.add(kind, text);
        }
        let width = self.inside(Focus::Log).width;
        let before = self.log.rows(width);
        self.log.add(kind, text);
        self.log.scroll.back = back + self.log.rows(width).saturating_sub(before);
    }

    /// Changes the conversation pane; a reader who scrolled back keeps
    /// their place while text arrives below.
    fn change_transcript(&mut self, change: impl FnOnce(&mut Transcript)) {
        let back = self.transcript.scroll.back;
        if back == 0 {
            return change(&mut self.transcript);
        }
        let (mode, width) = (self.status.mode, self.inside(Focus::Conversation).width);
        let before = self.transcript.rows(mode, width);
        change(&mut self.transcript);
        let after = self.transcript.rows(mode, width);
        self.transcript.scroll.back = back + after.saturating_sub(before);
    }
}
