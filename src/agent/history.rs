//! Memory past the prompt: the model's `search_history(query, limit)` and
//! `get_turn(n)` helper tools, and `aiq sessions search TEXT` from the
//! shell. They reach every message of this conversation — those `/clear`
//! or `history_limit` keep from the prompt too — and the earlier sessions
//! on the same source. What they return is what the prompt could carry
//! anyway: answers as [`HistoryMessage::for_model`] writes them, through
//! the source's [`Guard`] (no result values with `send_results = false`,
//! none of a redacted column), and matching looks at that text only.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::tools::{HelperTool, ToolContext};
use super::HistoryMessage;
use crate::llm::{Role, ToolDef};
use crate::privacy::Guard;
use crate::schema::words::words;
use crate::session::{self, Session};

/// Turns one search returns unless asked for fewer (or more, up to
/// [`MAX_LIMIT`]).
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;
/// Characters of SQL a search hit shows.
const SQL_CHARS: usize = 300;

/// Where earlier sessions are found: `$AIQ_HOME`, the source as session
/// files name it, and this conversation's file (left out of "earlier").
#[derive(Debug, Clone, Default)]
pub struct Archive {
    pub home: PathBuf,
    pub source: String,
    pub session: Option<PathBuf>,
}

impl Archive {
    /// The other sessions on this source, newest first.
    pub fn earlier(&self) -> Vec<Session> {
        session::list(&self.home)
            .into_iter()
            .flatten()
            .filter(|s| s.data_source == self.source)
            .filter(|s| self.session.as_deref() != Some(s.path.as_path()))
            .collect()
    }
}

impl Archive {
    /// Appends a helper call to the audit log (`logs/YYYY-MM-DD.jsonl`);
    /// a log that cannot be written does not stop the turn.
    pub fn log_call(&self, name: &str, arguments: &str, result: &str, started: std::time::Instant) {
        let now = chrono::Utc::now();
        let record = json!({
            "time": super::rfc3339(&now),
            "session": self.session.as_ref().map(|p| p.display().to_string()),
            "source": self.source,
            "mode": "tool",
            "origin": "model",
            "program": format!("{name} {arguments}"),
            "calls": [],
            "status": "ok",
            "result_bytes": result.len(),
            "result": null,
            "error": null,
            "duration_ms": crate::home::logs::ms(started.elapsed()),
        });
        let path = crate::home::log_file(&self.home, now.date_naive());
        if let Err(e) = crate::home::logs::append(&path, &record.to_string()) {
            tracing::warn!("cannot write the audit log {}: {e}", path.display());
        }
    }
}

impl Archive {
    /// Appends what a model request cost to the audit log (`"kind":
    /// "model"`): its input tokens, those the provider's cache served or
    /// took, its output tokens. A log that cannot be written does not stop
    /// the turn.
    pub fn log_usage(
        &self,
        provider: &str,
        model: &str,
        usage: &crate::llm::Usage,
        started: std::time::Instant,
    ) {
        let now = chrono::Utc::now();
        let record = json!({
            "time": super::rfc3339(&now),
            "kind": "model",
            "session": self.session.as_ref().map(|p| p.display().to_string()),
            "source": self.source,
            "provider": provider,
            "model": model,
            "input_tokens": usage.input_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "output_tokens": usage.output_tokens,
            "ms": started.elapsed().as_millis() as u64,
        });
        let path = crate::home::log_file(&self.home, now.date_naive());
        if let Err(e) = crate::home::logs::append(&path, &record.to_string()) {
            tracing::warn!("cannot write the audit log {}: {e}", path.display());
        }
    }
}

/// One question and its answer.
pub struct Turn<'a> {
    /// From 1, in the order of its session.
    pub n: usize,
    /// The session file's name; `None` for this conversation.
    pub session: Option<String>,
    pub question: &'a HistoryMessage,
    pub answer: Option<&'a HistoryMessage>,
}

impl Turn<'_> {
    fn place(&self) -> String {
        match &self.session {
            Some(s) => format!("turn {} of {s}", self.n),
            None => format!("turn {}", self.n),
        }
    }

    /// The answer as the model may read it.
    fn answer_text(&self, guard: &Guard) -> String {
        self.answer
            .map(|a| a.for_model(guard))
            .unwrap_or_else(|| "(no answer)".into())
    }
}

/// The turns of one session's messages.
pub fn turns(messages: &[HistoryMessage], session: Option<String>) -> Vec<Turn<'_>> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role != Role::User {
            continue;
        }
        let answer = messages.get(i + 1).filter(|a| a.role == Role::Assistant);
        out.push(Turn {
            n: out.len() + 1,
            session: session.clone(),
            question: m,
            answer,
        });
    }
    out
}

/// The best `limit` turns for `query` (all words count; the more of them
/// a turn has, the better; newer first among equals), written for the
/// model. `turns` come newest session first, each oldest turn first.
pub fn search(all: &[Turn<'_>], query: &str, limit: usize, guard: &Guard) -> String {
    let wanted = distinct(words(query));
    let phrase = query.trim().to_lowercase();
    let mut scored: Vec<(usize, usize, &Turn<'_>)> = all
        .iter()
        .enumerate()
        .filter_map(|(order, t)| {
            let text = format!("{}\n{}", t.question.content, t.answer_text(guard));
            let said = distinct(words(&text));
            let mut score = wanted.iter().filter(|w| said.contains(w)).count() * 2;
            if !phrase.is_empty() && text.to_lowercase().contains(&phrase) {
                score += 1;
            }
            (score > 0 || wanted.is_empty()).then_some((score, order, t))
        })
        .collect();
    // Best first; among equals, this conversation's latest turns first,
    // then earlier sessions' (they come newest session first).
    let rank = |order: usize, t: &Turn<'_>| match t.session {
        None => (0, usize::MAX - order),
        Some(_) => (1, order),
    };
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(rank(a.1, a.2).cmp(&rank(b.1, b.2))));
    let limit = limit.clamp(1, MAX_LIMIT);
    if scored.is_empty() {
        return format!("no earlier turn mentions '{}'", query.trim());
    }
    let mut out = String::new();
    for (_, _, t) in scored.iter().take(limit) {
        out.push_str(&hit(t, guard));
    }
    if scored.len() > limit {
        out.push_str(&format!("… {} more turns match\n", scored.len() - limit));
    }
    out
}

/// One search hit: where, when, the question, the SQL, the outcome.
fn hit(t: &Turn<'_>, guard: &Guard) -> String {
    let mut out = format!(
        "[{}, {}] Q: {}\n",
        t.place(),
        t.question.timestamp.format("%Y-%m-%d %H:%M"),
        one_line(&t.question.content, SQL_CHARS)
    );
    if let Some(a) = t.answer {
        if let Some(code) = a.sql.as_deref().or(a.lua.as_deref()) {
            out.push_str(&format!("  code: {}\n", one_line(code, SQL_CHARS)));
        } else {
            out.push_str(&format!("  answer: {}\n", one_line(&a.content, SQL_CHARS)));
        }
        match (&a.row_count, &a.error) {
            (Some(n), _) => {
                let noun = if *n == 1 { "row" } else { "rows" };
                out.push_str(&format!("  result: {n} {noun}\n"));
            }
            (None, Some(_)) => {
                let error = a.error_for_model(guard).unwrap_or_default();
                out.push_str(&format!("  failed: {}\n", one_line(&error, 160)))
            }
            _ => {}
        }
    }
    out
}

/// One turn, whole, for the model.
pub fn describe_turn(t: &Turn<'_>, guard: &Guard) -> String {
    format!(
        "{} ({}):\nQuestion: {}\nAnswer: {}\n",
        t.place(),
        t.question.timestamp.format("%Y-%m-%d %H:%M UTC"),
        t.question.content.trim(),
        t.answer_text(guard)
    )
}

fn distinct(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

/// This conversation's turns, then the earlier sessions' (newest first).
fn with_earlier<'a>(history: &'a [HistoryMessage], earlier: &'a [Session]) -> Vec<Turn<'a>> {
    let mut all = turns(history, None);
    for s in earlier {
        let name = s.path.file_name().map(|f| f.to_string_lossy().into_owned());
        all.extend(turns(&s.messages, name));
    }
    all
}

/// Earlier sessions' answers judged by the current rules as well as their
/// own (SPEC §4.3): what each one's statements read is asked of the engine
/// now, on the same source (nothing runs).
fn judged(mut earlier: Vec<Session>, ctx: &ToolContext<'_>) -> Vec<Session> {
    if ctx.guard.redacts_any() {
        let answers = earlier
            .iter_mut()
            .flat_map(|s| s.messages.iter_mut())
            .filter(|m| m.role == Role::Assistant && m.withheld.is_none());
        for m in answers {
            let read = m.statements_run().iter().any(|sql| (ctx.reads)(sql));
            m.judge(ctx.guard, read);
        }
    }
    earlier
}

/// `search_history(query, limit)`.
pub struct SearchHistory;

impl HelperTool for SearchHistory {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "search_history".into(),
            description: "Search every earlier question and answer of this conversation (also those no longer in the prompt) and of earlier sessions on this database. Returns matching turns with their SQL and row counts, newest first among equals.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words to look for, e.g. 'Germany revenue'"},
                    "limit": {"type": "integer", "description": "turns to return (default 5, at most 20)"},
                },
                "required": ["query"],
            }),
        }
    }

    fn call(&self, arguments: &Value, ctx: &ToolContext<'_>) -> String {
        let query = arguments["query"].as_str().unwrap_or("");
        let limit = arguments["limit"]
            .as_u64()
            .map_or(DEFAULT_LIMIT, |n| n as usize);
        let earlier = judged(ctx.archive.map(Archive::earlier).unwrap_or_default(), ctx);
        let all = with_earlier(ctx.history, &earlier);
        let mut found = search(&all, query, limit, ctx.guard);
        if !found.starts_with("no earlier turn") {
            found.push_str("get_turn gives a turn's whole answer and result.\n");
        }
        found
    }
}

/// `get_turn(n, session?)`.
pub struct GetTurn;

impl HelperTool for GetTurn {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "get_turn".into(),
            description: "One earlier turn in full: the question, the answer with its SQL, and the result's row count and first rows. n is the turn number search_history gave; for a turn of an earlier session, also give that session's file name.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "description": "the turn number"},
                    "session": {"type": "string", "description": "the session file, for a turn of an earlier session"},
                },
                "required": ["n"],
            }),
        }
    }

    fn call(&self, arguments: &Value, ctx: &ToolContext<'_>) -> String {
        let Some(n) = arguments["n"]
            .as_u64()
            .or_else(|| arguments["n"].as_str().and_then(|s| s.trim().parse().ok()))
        else {
            return "give the turn number: get_turn(n)".into();
        };
        let wanted = arguments["session"].as_str().filter(|s| !s.is_empty());
        let earlier = match wanted {
            Some(_) => judged(ctx.archive.map(Archive::earlier).unwrap_or_default(), ctx),
            None => Vec::new(),
        };
        let all = with_earlier(ctx.history, &earlier);
        let found = all
            .iter()
            .find(|t| t.n as u64 == n && t.session.as_deref() == wanted);
        match found {
            Some(t) => describe_turn(t, ctx.guard),
            None => match wanted {
                Some(s) => format!("no turn {n} in {s} (search_history lists the turns)"),
                None => format!(
                    "no turn {n} in this conversation; it has {} (search_history lists the turns)",
                    turns(ctx.history, None).len()
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<HistoryMessage> {
        vec![
            HistoryMessage::user("revenue per country"),
            HistoryMessage::assistant(
                "```sql\nSELECT country, sum(total) FROM orders GROUP BY 1\n```",
            )
            .with_sql(
                "SELECT country, sum(total) FROM orders GROUP BY 1",
                Ok((2, "country,sum\nGermany,350\nFrance,250\n".into())),
            ),
            HistoryMessage::user("how many customers?"),
            HistoryMessage::assistant("x").with_sql(
                "SELECT count(*) FROM customers",
                Ok((1, "count\n2\n".into())),
            ),
            HistoryMessage::user("customer emails"),
            HistoryMessage::assistant("x").with_sql(
                "SELECT email FROM customers",
                Ok((2, "email\nann@secret.example\nbob@secret.example\n".into())),
            ),
        ]
    }

    #[test]
    fn search_finds_turns_by_words_in_questions_sql_and_results() {
        let h = history();
        let all = turns(&h, None);
        let found = search(&all, "Germany", 5, &Guard::default());
        assert!(found.starts_with("[turn 1, "), "{found}");
        assert!(found.contains("Q: revenue per country"), "{found}");
        assert!(found.contains("result: 2 rows"), "{found}");
        assert!(!found.contains("turn 2"), "{found}");
        assert_eq!(
            search(&all, "zebra", 5, &Guard::default()),
            "no earlier turn mentions 'zebra'"
        );
    }

    #[test]
    fn privacy_holds_in_search_and_turns() {
        let privacy = crate::privacy::Privacy {
            redact: vec!["customers.email".into()],
            ..crate::privacy::Privacy::default()
        };
        let (guard, _) = Guard::new(privacy, &crate::schema::Catalog::default());
        // A message of an earlier version, which no engine reading judged:
        // nothing of its result goes while a column is redacted.
        let unjudged = history();
        let first = describe_turn(&turns(&unjudged, None)[0], &guard);
        assert!(!first.contains("Germany,350"), "{first}");
        // Judged as the engine read them: only the third read `email`.
        let mut h = history();
        for (i, m) in h.iter_mut().enumerate() {
            m.judge(&guard, i == 5);
        }
        let all = turns(&h, None);
        // A redacted value is not found, so not even its existence leaks.
        assert!(search(&all, "ann@secret.example", 5, &guard).starts_with("no earlier turn"));
        let third = describe_turn(&all[2], &guard);
        assert!(!third.contains("secret.example"), "{third}");
        assert!(third.contains("values not sent"), "{third}");
        let first = describe_turn(&all[0], &guard);
        assert!(first.contains("Germany,350"), "{first}");
    }

    /// A failed turn's stored error goes through the guard in search hits
    /// as in whole turns: a value the engine quoted from a redacted column,
    /// a Lua program's message made of one, and an engine's suggestion of
    /// a hidden name never reach the model raw.
    #[test]
    fn search_hits_show_errors_as_the_guard_allows() {
        let h = vec![
            HistoryMessage::user("emails as json"),
            HistoryMessage::assistant("x").with_sql(
                "SELECT json_extract(email, '$.a') FROM customers",
                Err("bad JSON path: 'zz-mail-001@x.test'".into()),
            ),
            HistoryMessage::user("first email"),
            HistoryMessage {
                statements: vec!["SELECT email FROM customers".into()],
                ..HistoryMessage::assistant("x").with_lua(
                    "local r = aiq.query('SELECT email FROM customers')\nerror(r[1].email)",
                    Err("[string \"program\"]:2: zz-mail-002@x.test".into()),
                )
            },
            HistoryMessage::user("salaries"),
            HistoryMessage::assistant("x").with_sql(
                "SELECT salary FROM payrol",
                Err("Catalog Error: Table with name payrol does not exist! Did you mean \"payroll\"?".into()),
            ),
        ];
        let table = |name: &str, columns: &[&str]| crate::schema::Table {
            name: name.into(),
            columns: columns
                .iter()
                .map(|c| crate::schema::ColumnInfo {
                    name: c.to_string(),
                    type_name: "TEXT".into(),
                    ..crate::schema::ColumnInfo::default()
                })
                .collect(),
            ..crate::schema::Table::default()
        };
        let catalog = crate::schema::Catalog {
            engine: "x".into(),
            tables: vec![
                table("customers", &["id", "email"]),
                table("payroll", &["id", "salary"]),
            ],
        };
        let privacy = crate::privacy::Privacy {
            redact: vec!["customers.email".into()],
            exclude: vec!["payroll".into()],
            ..crate::privacy::Privacy::default()
        };
        let (guard, _) = Guard::new(privacy, &catalog);
        // As the engine read them: the first two read `email`; the third
        // did not bind, so it read nothing.
        let mut h = h;
        for (i, m) in h.iter_mut().enumerate() {
            m.judge(&guard, i < 4);
        }
        let all = turns(&h, None);
        let found = search(&all, "", 10, &guard);
        for leak in ["zz-mail-001", "zz-mail-002", "\"payroll\""] {
            assert!(!found.contains(leak), "{leak}: {found}");
        }
        assert!(
            found.contains("failed: (its message may hold values the statement read; not sent)"),
            "{found}"
        );
        assert!(
            found.contains("Did you mean \"(hidden table)\"?"),
            "{found}"
        );
        for t in &all {
            let whole = describe_turn(t, &guard);
            assert!(!whole.contains("zz-mail-00"), "{whole}");
            assert!(!whole.contains("\"payroll\""), "{whole}");
        }
    }
}
