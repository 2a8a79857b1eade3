//! Fitting each request of a turn to the model's window (see
//! [`super::super::fit`] for the sizing rules): the rules, the question
//! and the turn so far as they are, then the history within its share
//! (oldest pairs out first), then the ranked schema in what is left; what
//! a context-length error teaches; and the one line that tells the user
//! what had to give.

use chrono::Utc;

use super::super::fit::{self, DEFAULT_SCHEMA_BUDGET};
use super::super::kept_history;
use super::super::link::{layout, rank, Layout, Signals};
use super::super::prompt::{history_messages, system_prompt, PromptFacts};
use super::super::tools;
use super::{Request, Thread};
use crate::llm::window::thousands;
use crate::llm::{LlmError, Message, Window};

impl Thread {
    /// The request for `question` with the turn so far, fitted to the
    /// model's window: the rules, the question and the turn as they are;
    /// the oldest history pairs beyond the history's share give way, then
    /// the schema (the ranked tables that matter first) fills what is left.
    pub(super) fn fit(&self, question: &str, turn: &[Message]) -> Request {
        let window = self.model.window();
        let kept = kept_history(
            &self.history[self.context_start..],
            self.options.history_limit,
        );
        let recent: Vec<&str> = kept
            .iter()
            .rev()
            .take(4)
            .map(|m| m.content.as_str())
            .collect();
        let examples = self.examples_for(question);
        // Tables an example's SQL reads rank up (SPEC §14).
        let earlier_sql: Vec<&str> = kept
            .iter()
            .filter_map(|m| m.sql.as_deref().or(m.lua.as_deref()))
            .chain(examples.iter().map(|e| e.sql.as_str()))
            .collect();
        let signals = Signals {
            question,
            recent: &recent,
            earlier_sql: &earlier_sql,
        };
        let ranked = rank(&self.catalog, &self.index, &signals);
        let look = tools::how_to_look(self.model.supports_tools());
        let notes = self.general_notes();
        let mut facts = PromptFacts {
            dialect: self.source.dialect(),
            engine: &self.catalog.engine,
            today: self
                .options
                .today
                .unwrap_or_else(|| Utc::now().date_naive()),
            allow_write: self.options.allow_write,
            notes: &notes,
            examples: "",
            schema: "",
            look: Some(look),
        };
        let rules = system_prompt(&facts, self.kind.as_ref()).len() + fit::MESSAGE_OVERHEAD;
        let fixed = rules + fit::message_bytes(turn) + self.tools_bytes();
        let room = fit::usable_bytes(window.tokens).saturating_sub(fixed);
        let mut history = history_messages(kept, &self.guard);
        let dropped = fit::trim_history(&mut history, fit::history_share(room));
        let history_bytes = fit::message_bytes(&history);
        // The examples give way after the question and the rules, before
        // the tables that matter less: they take at most their share of
        // what the history leaves.
        let (examples_text, examples_out) = super::super::verified::block(
            &examples,
            fit::examples_share(room.saturating_sub(history_bytes)),
        );
        // The general notes and the examples are counted against the
        // schema's usual budget too (and, being in the rules, against the
        // window).
        let budget = fit::schema_budget(window.tokens, fixed + examples_text.len() + history_bytes)
            .min(DEFAULT_SCHEMA_BUDGET.saturating_sub(notes.len() + examples_text.len()));
        let laid = layout(&self.catalog, &self.index, &ranked, budget);
        let partial = laid.named + laid.dropped > 0;
        facts.schema = &laid.text;
        facts.examples = &examples_text;
        facts.look = partial.then_some(look);
        let system = system_prompt(&facts, self.kind.as_ref());
        let bytes = system.len() + fit::MESSAGE_OVERHEAD + history_bytes + fixed - rules;
        let mut notice = fit_notice(&window, budget, dropped, &laid);
        if examples_out > 0 {
            let line = format!(
                "{examples_out} of {} verified examples left out to fit the model's window",
                examples.len()
            );
            notice = Some(match notice {
                Some(n) => format!("{n}; {line}"),
                None => line,
            });
        }
        Request {
            notice,
            system,
            history,
            lookup_room: fit::lookup_share(room, tools::DESCRIBE_BUDGET),
            window: window.tokens,
            tokens: fit::tokens_for(bytes),
        }
    }

    /// The bytes the tool definitions add to each request.
    fn tools_bytes(&self) -> usize {
        if !self.model.supports_tools() {
            return 0;
        }
        self.tool_defs()
            .iter()
            .map(|t| {
                t.name.len()
                    + t.description.len()
                    + t.parameters.to_string().len()
                    + fit::MESSAGE_OVERHEAD
            })
            .sum()
    }

    /// What a context-length error teaches: the window it names (made
    /// smaller when the server counted more tokens than aiq estimated), or
    /// a smaller guess; the model keeps it. Returns the new window.
    pub(super) fn learn(&self, e: &LlmError, sent: &Request) -> usize {
        let guess = sent.window.min(sent.tokens) * 3 / 4;
        let mut window = match (e.limit, e.requested) {
            (Some(limit), Some(counted)) if counted > sent.tokens && counted > 0 => {
                limit.saturating_mul(sent.tokens) / counted
            }
            (Some(limit), _) => limit,
            (None, _) => guess,
        };
        if window >= sent.window {
            // Told the same window again: aiq's estimate was short.
            window = guess.min(sent.window * 3 / 4);
        }
        self.model.learn_window(window);
        self.model.window().tokens
    }
}

/// The one line telling the user what had to give, if anything did: the
/// questions left out, the matching tables thinned, and — when the window
/// (not the usual budget) held the schema back — the other tables not
/// described.
fn fit_notice(window: &Window, budget: usize, dropped: usize, laid: &Layout) -> Option<String> {
    let tight = budget < DEFAULT_SCHEMA_BUDGET;
    let mut parts = Vec::new();
    match dropped {
        0 => {}
        1 => parts.push("the oldest earlier question left out".to_string()),
        n => parts.push(format!("the {n} oldest earlier questions left out")),
    }
    parts.extend(laid.notice());
    let others = (laid.named + laid.dropped).saturating_sub(laid.unseen);
    if tight && others > 0 {
        parts.push(format!(
            "{} other tables not described (the model can ask for them)",
            thousands(others)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let what = if tight {
        format!("the model's {}-token window", thousands(window.tokens))
    } else {
        "the request".to_string()
    };
    Some(format!("aiq: to fit {what}: {}", parts.join(", ")))
}
