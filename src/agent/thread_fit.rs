//! Fitting each request of a turn to the model's window (see
//! [`super::super::fit`] for the sizing rules): the rules, the question
//! and the turn so far as they are, then the history within its share
//! (oldest pairs out first), then the ranked schema in what is left —
//! laid out in the order that lets each request of a conversation start
//! with the previous one ([`super::super::prefix`]); what a
//! context-length error teaches; and the one line that tells the user
//! what had to give.

use chrono::Utc;

use std::collections::BTreeSet;

use super::super::fit::{self, DEFAULT_SCHEMA_BUDGET};
use super::super::kept_history;
use super::super::link::{layout, rank, Layout, Ranked, Signals};
use super::super::prefix::{question_message, step, Prefix};
use super::super::prompt::{history_messages, system_prompt, PromptFacts};
use super::super::tools;
use super::{Request, Thread};
use crate::llm::{LlmError, Message, Role, Window};
use crate::render::thousands;

/// Bytes of the line that introduces a question's added tables.
const ADDED_HEAD: usize = 80;

/// What one question brings to fitting, worked out once for both ways
/// of laying a request out.
struct Asking<'a> {
    question: &'a str,
    /// The turn after the question (the model's lookups and fixes).
    turn: &'a [Message],
    window: Window,
    examples: Vec<super::super::verified::Shown>,
    notes: String,
    ranked: Ranked,
    today: chrono::NaiveDate,
    look: &'static str,
    /// Bytes of everything but the schema, the history and the examples.
    fixed: usize,
    /// What the window leaves after them.
    room: usize,
}

impl Thread {
    /// The request for `question` with the turn so far (`turn`: what came
    /// after the question), fitted to the model's window. It starts with
    /// what the conversation's previous request started with — rules,
    /// notes, the schema chosen for the conversation, the history as it
    /// was sent — and ends with what this question adds: the tables
    /// linking finds for it that the schema lacks, the verified examples,
    /// the question. The schema is laid out again (the tables that matter
    /// to this question first) only when it must: the first question, the
    /// window would overflow, or the source, notes, rules or window
    /// changed.
    pub(super) fn fit(&self, question: &str, turn: &[Message]) -> Request {
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
        let earlier_sql: Vec<&str> = kept
            .iter()
            .filter_map(|m| m.sql.as_deref().or(m.lua.as_deref()))
            .collect();
        let asking = self.asking(question, turn, &recent, &earlier_sql);
        match &self.prefix {
            Some(prefix) => match self.follow_up(prefix, &asking) {
                Ok(request) => return request,
                Err(why) => tracing::info!("the schema is laid out again for this question: {why}"),
            },
            None => {
                if let Some(why) = self.rebase_why {
                    tracing::info!("the schema is laid out again for this question: {why}");
                } else if let Some(first) = kept.iter().find(|m| m.role == Role::User) {
                    // A conversation restored from its session: its first
                    // request was laid out for its first question. Laid out
                    // the same way again, the requests start as they did,
                    // and a provider's cache can still serve them — when
                    // the history fits as it is.
                    let anchor = self.asking(&first.content, &[], &[], &[]);
                    let mut prefix = self.rebase(&anchor, 0).prefix;
                    prefix.history_start = self.history.len() - kept.len();
                    if let Ok(request) = self.follow_up(&prefix, &asking) {
                        if request.history.len() == kept.len() {
                            return request;
                        }
                    }
                }
            }
        }
        self.rebase(&asking, kept.len())
    }

    /// What `question` brings to fitting, with the turn after it and the
    /// conversation's recent texts and earlier code.
    fn asking<'a>(
        &self,
        question: &'a str,
        turn: &'a [Message],
        recent: &[&str],
        earlier: &[&str],
    ) -> Asking<'a> {
        let window = self.model.window();
        let examples = self.examples_for(question);
        // Tables an example's SQL reads rank up (SPEC §14).
        let earlier_sql: Vec<&str> = earlier
            .iter()
            .copied()
            .chain(examples.iter().map(|e| e.sql.as_str()))
            .collect();
        let signals = Signals {
            question,
            recent,
            earlier_sql: &earlier_sql,
        };
        let ranked = rank(&self.catalog, &self.index, &signals);
        let look = tools::how_to_look(self.model.supports_tools());
        let notes = self.general_notes();
        let today = self
            .options
            .today
            .unwrap_or_else(|| Utc::now().date_naive());
        let mut asking = Asking {
            question,
            turn,
            window,
            examples,
            notes,
            ranked,
            today,
            look,
            fixed: 0,
            room: 0,
        };
        let rules = system_prompt(&self.facts(&asking, "", Some(look)), self.kind.as_ref()).len()
            + fit::MESSAGE_OVERHEAD;
        asking.fixed = rules
            + question.len()
            + fit::MESSAGE_OVERHEAD
            + fit::message_bytes(turn)
            + self.tools_bytes();
        asking.room = fit::usable_bytes(asking.window.tokens).saturating_sub(asking.fixed);
        asking
    }

    fn facts<'a>(
        &'a self,
        asking: &'a Asking<'_>,
        schema: &'a str,
        look: Option<&'a str>,
    ) -> PromptFacts<'a> {
        PromptFacts {
            dialect: self.source.dialect(),
            engine: &self.catalog.engine,
            today: asking.today,
            allow_write: self.options.allow_write,
            notes: &asking.notes,
            examples: "",
            schema,
            look,
        }
    }

    /// The history from message `start` on, as the model was sent it:
    /// each question in the bytes of its first request.
    fn sent_history(&self, start: usize) -> Vec<Message> {
        let mut out = history_messages(&self.history[start..], &self.guard);
        for (i, m) in out.iter_mut().enumerate() {
            if m.role == Role::User {
                if let Some(content) = self.sent.content(start + i) {
                    m.content = content.to_string();
                }
            }
        }
        out
    }

    /// A request laid out afresh: the schema ranked for this question in
    /// what the rules, the question and the history's share leave. Room
    /// is kept for the history (and later questions' tables) to grow into
    /// when the tables that matter lose nothing by it (only less relevant
    /// ones give way), so that the next questions can keep this request as
    /// their prefix.
    fn rebase(&self, a: &Asking<'_>, kept: usize) -> Request {
        let window = &a.window;
        let start = self.history.len() - kept;
        let mut history = self.sent_history(start);
        let dropped = fit::trim_history(&mut history, fit::history_share(a.room));
        let history_start = self.history.len() - history.len();
        let history_bytes = fit::message_bytes(&history);
        // The examples give way after the question and the rules, before
        // the tables that matter less: they take at most their share of
        // what the history leaves.
        let (examples_text, examples_out) = super::super::verified::block(
            &a.examples,
            fit::examples_share(a.room.saturating_sub(history_bytes)),
        );
        // The general notes and the examples are counted against the
        // schema's usual budget too.
        let cap = DEFAULT_SCHEMA_BUDGET.saturating_sub(a.notes.len() + examples_text.len());
        let taken = a.fixed + examples_text.len() + history_bytes;
        let budget = fit::schema_budget(window.tokens, taken).min(cap);
        let growth = fit::history_share(a.room).saturating_sub(history_bytes) + a.room / 8;
        let roomy = fit::schema_budget(window.tokens, taken + growth).min(cap);
        let mut laid = layout(&self.catalog, &self.index, &a.ranked, roomy);
        if roomy < budget {
            // The room is kept only if the tables that matter (those that
            // match, or the first one when none does) keep their detail.
            let full = layout(&self.catalog, &self.index, &a.ranked, budget);
            let top = a.ranked.relevant.max(1).min(a.ranked.order.len());
            let lost = a.ranked.order[..top].iter().any(|&i| {
                let name = &self.catalog.tables[i].name;
                full.described.contains(name) && !laid.described.contains(name)
            });
            if lost || (full.thinned, full.unseen) != (laid.thinned, laid.unseen) {
                laid = full;
            }
        }
        let partial = laid.named + laid.dropped > 0;
        let look = partial.then_some(a.look);
        let system = system_prompt(&self.facts(a, &laid.text, look), self.kind.as_ref());
        let question = question_message("", &examples_text, a.question);
        let mut notice = fit_notice(window, budget, dropped, &laid);
        if examples_out > 0 {
            notice = with_examples_out(notice, examples_out, a.examples.len());
        }
        let stable = 2 + history.len();
        let prefix = Prefix {
            system: system.clone(),
            laid,
            look: partial,
            window: window.tokens,
            budget,
            history_start,
        };
        self.request_of(a, prefix, history, question, Vec::new(), notice, stable)
    }

    /// The request for a follow-up that keeps the conversation's prefix:
    /// the same system message, the history as sent (the oldest pairs
    /// giving way in a step when it outgrows its share), then the tables
    /// this question needs that the prefix lacks, the examples and the
    /// question. Why it cannot, when it cannot.
    fn follow_up(&self, p: &Prefix, a: &Asking<'_>) -> Result<Request, &'static str> {
        let window = &a.window;
        if p.window != window.tokens {
            return Err("the model's window changed");
        }
        let look = p.look.then_some(a.look);
        if system_prompt(&self.facts(a, &p.laid.text, look), self.kind.as_ref()) != p.system {
            return Err("the rules or the notes changed");
        }
        let start = p.history_start.max(self.context_start);
        let mut history = self.sent_history(start);
        let system_bytes = p.system.len() + fit::MESSAGE_OVERHEAD;
        // What the history, the added tables and the examples may take.
        let avail = fit::usable_bytes(window.tokens).saturating_sub(
            system_bytes
                + a.question.len()
                + fit::MESSAGE_OVERHEAD
                + fit::message_bytes(a.turn)
                + self.tools_bytes(),
        );
        let (gone, dropped) = step(
            &history,
            self.options.history_limit,
            fit::history_share(a.room).min(avail),
        );
        history.drain(..gone);
        let history_start = start + gone;
        let history_bytes = fit::message_bytes(&history);
        let left = avail.saturating_sub(history_bytes);
        let (examples_text, examples_out) = super::super::verified::block(
            &a.examples,
            fit::examples_share(a.room.saturating_sub(history_bytes)).min(left),
        );
        // The tables a request laid out afresh would describe for this
        // question and that the prefix (its schema, or an earlier
        // question's additions still in the history) lacks.
        let cap = DEFAULT_SCHEMA_BUDGET.saturating_sub(a.notes.len() + examples_text.len());
        let budget =
            fit::schema_budget(window.tokens, a.fixed + examples_text.len() + history_bytes)
                .min(cap);
        let fresh = layout(&self.catalog, &self.index, &a.ranked, budget);
        let mut present: BTreeSet<&str> = self.sent.tables_from(history_start);
        present.extend(p.laid.described.iter().map(String::as_str));
        let wanted: BTreeSet<&str> = fresh.described.iter().map(String::as_str).collect();
        let missing: Vec<usize> = a.ranked.order[..a.ranked.relevant.min(a.ranked.order.len())]
            .iter()
            .copied()
            .filter(|&i| {
                let name = self.catalog.tables[i].name.as_str();
                wanted.contains(name) && !present.contains(name)
            })
            .collect();
        let (tables, added) = if missing.is_empty() {
            (String::new(), Vec::new())
        } else {
            let ranked = Ranked {
                relevant: missing.len(),
                order: missing,
            };
            let room = left
                .saturating_sub(examples_text.len() + ADDED_HEAD)
                .min(DEFAULT_SCHEMA_BUDGET / 2);
            let more = layout(&self.catalog, &self.index, &ranked, room);
            if more.named + more.dropped > 0 {
                return Err("the window would overflow");
            }
            (more.text, more.described)
        };
        let question = question_message(&tables, &examples_text, a.question);
        if question.len() - a.question.len() > left {
            return Err("the window would overflow");
        }
        let mut notice = fit_notice(window, p.budget, dropped, &p.laid);
        if examples_out > 0 {
            notice = with_examples_out(notice, examples_out, a.examples.len());
        }
        let stable = 2 + history.len();
        let prefix = Prefix {
            history_start,
            ..p.clone()
        };
        Ok(self.request_of(a, prefix, history, question, added, notice, stable))
    }

    #[allow(clippy::too_many_arguments)]
    fn request_of(
        &self,
        a: &Asking<'_>,
        prefix: Prefix,
        history: Vec<Message>,
        question: String,
        added: Vec<String>,
        notice: Option<String>,
        stable: usize,
    ) -> Request {
        let bytes = prefix.system.len()
            + fit::message_bytes(&history)
            + question.len()
            + 2 * fit::MESSAGE_OVERHEAD
            + fit::message_bytes(a.turn)
            + self.tools_bytes();
        Request {
            notice,
            system: prefix.system.clone(),
            history,
            question: Message::user(question),
            added,
            stable,
            lookup_room: fit::lookup_share(a.room, tools::DESCRIBE_BUDGET),
            window: a.window.tokens,
            tokens: fit::tokens_for(bytes),
            prefix,
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

/// `notice` with the verified examples that were left out.
fn with_examples_out(notice: Option<String>, out: usize, of: usize) -> Option<String> {
    let line = format!("{out} of {of} verified examples left out to fit the model's window");
    Some(match notice {
        Some(n) => format!("{n}; {line}"),
        None => line,
    })
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
