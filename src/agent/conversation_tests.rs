//! Unit tests of [`super::Conversation`] without a terminal: slash
//! commands as events, one final event per line, the session saved after
//! every answer, `/clear` and the stale-session question as confirmations,
//! `/new`, `/save`, `/source`.

use std::path::{Path, PathBuf};

use super::testkit::{source_in, sql, thread_with, Recorder, Scripted, Seen};
use super::{
    Conversation, ConversationOptions, Event, Flow, Keep, Mode, Opened, Outcome, SourceOpener,
    Status, ThreadOptions,
};
use crate::render::Format;
use crate::session::Session;

struct DirOpener(PathBuf);

impl SourceOpener for DirOpener {
    fn open(&self, name: &str, _ask: crate::source::PasswordAsk) -> Result<Opened, String> {
        if name == "missing" {
            return Err("cannot open missing: no such file".into());
        }
        let source = source_in(&self.0, name, false);
        let catalog = source.introspect().map_err(|e| e.to_string())?;
        Ok(Opened {
            source,
            catalog,
            guard: crate::privacy::Guard::default(),
            notes: crate::notes::Notes::default(),
            examples: Default::default(),
            session_name: name.into(),
            label: name.into(),
            warnings: Vec::new(),
        })
    }
}

fn conversation(dir: &Path, replies: Vec<Scripted>, keep: Keep) -> (Conversation, Seen) {
    let (thread, seen) = thread_with(dir, replies, ThreadOptions::default());
    let options = ConversationOptions {
        home: dir.join("home"),
        format: Format::Table,
        stale_after_hours: 12,
        opener: Box::new(DirOpener(dir.to_path_buf())),
    };
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let mut conversation = Conversation::new(thread, "t.db".into(), "t.db".into(), keep, options);
    conversation.set_kinds(crate::lua::answer_kinds(crate::lua::LuaConfig::default()));
    (conversation, seen)
}

/// Submits a line; checks it ended with exactly one final event, last.
fn submit(c: &mut Conversation, line: &str, answer: bool) -> (Flow, Recorder) {
    let mut sink = Recorder {
        answer,
        ..Recorder::default()
    };
    let flow = c.submit(line, &mut sink);
    let finals = sink.outcomes().len();
    assert_eq!(finals, 1, "{line}: {:?}", sink.events);
    (flow, sink)
}

fn texts(sink: &Recorder) -> Vec<String> {
    sink.events
        .iter()
        .filter_map(|e| match e {
            Event::Listing(t) => Some(format!("listing: {t}")),
            Event::Notice(t) => Some(format!("notice: {t}")),
            Event::Warning(t) => Some(format!("warning: {t}")),
            Event::CommandFailed(t) => Some(format!("failed: {t}")),
            Event::SessionSaved(p) => Some(format!("saved: {}", p.display())),
            _ => None,
        })
        .collect()
}

#[test]
fn slash_commands_answer_with_events() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(dir.path(), vec![], Keep::NewSession);
    let (_, s) = submit(&mut c, "/help", false);
    assert!(texts(&s)[0].contains("/history"), "{:?}", texts(&s));
    assert_eq!(s.outcomes()[0], &Outcome::Done);
    let (_, s) = submit(&mut c, "/history", false);
    assert_eq!(texts(&s), ["listing: (no messages yet)\n"]);
    let (_, s) = submit(&mut c, "/format csv", false);
    assert_eq!(texts(&s), ["notice: Output format: csv"]);
    assert_eq!(c.format(), Format::Csv);
    let (_, s) = submit(&mut c, "/format xml", false);
    assert_eq!(
        texts(&s),
        ["failed: unknown format 'xml' (choose one of: auto, table, expanded, csv, tsv, json, jsonl, markdown)"]
    );
    let (_, s) = submit(&mut c, "/schema t", false);
    assert!(
        texts(&s)[0].starts_with("listing: table t"),
        "{:?}",
        texts(&s)
    );
    let (_, s) = submit(&mut c, "/schema tt", false);
    assert_eq!(texts(&s), ["failed: no table named tt; did you mean t?"]);
    let (_, s) = submit(&mut c, "/histroy", false);
    assert_eq!(
        texts(&s),
        ["failed: unknown command /histroy; did you mean /history? (/help lists them)"]
    );
    let (_, s) = submit(&mut c, "/sql DELETE FROM t", false);
    assert!(
        matches!(s.outcomes()[0], Outcome::Failed(super::AgentError::Refused(m)) if m.contains("DELETE")),
        "{:?}",
        s.outcomes()
    );
    let (flow, _) = submit(&mut c, "/exit", false);
    assert_eq!(flow, Flow::Exit);
}

#[test]
fn answers_are_saved_and_clear_asks_first() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, seen) = conversation(
        dir.path(),
        vec![
            sql("SELECT 1 AS a"),
            sql("SELECT 2 AS b"),
            sql("SELECT 3 AS c"),
        ],
        Keep::NewSession,
    );
    let (_, s) = submit(&mut c, "first", false);
    assert!(matches!(s.outcomes()[0], Outcome::Answered(a) if a.rows == Some(1)));
    let path = c.session_path().unwrap().to_path_buf();
    assert_eq!(
        Session::load(&path).unwrap().messages.len(),
        2,
        "saved after the answer"
    );

    let (_, s) = submit(&mut c, "/clear", false);
    let asked = s
        .events
        .iter()
        .any(|e| matches!(e, Event::Confirm(q) if q.question == "Clear conversation history?"));
    assert!(asked);
    assert_eq!(texts(&s), ["notice: History kept."]);
    submit(&mut c, "second", false);
    assert_eq!(
        seen.lock().unwrap()[1].len(),
        4,
        "system + first pair + question"
    );

    let (_, s) = submit(&mut c, "/clear", true);
    assert_eq!(
        texts(&s),
        ["notice: History cleared: the next question starts a fresh conversation."]
    );
    submit(&mut c, "third", false);
    assert_eq!(seen.lock().unwrap()[2].len(), 2, "system + question");
    let saved = Session::load(&path).unwrap();
    assert_eq!(saved.messages.len(), 6, "the file keeps every message");
    assert_eq!(saved.context_start, 4);
}

#[test]
fn new_save_and_leave_announce_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(
        dir.path(),
        vec![sql("SELECT 1 AS a"), sql("SELECT 2 AS b")],
        Keep::NewSession,
    );
    let (_, s) = submit(&mut c, "/save", false);
    assert_eq!(texts(&s), ["notice: Nothing to save yet."]);
    submit(&mut c, "first", false);
    let first = c.session_path().unwrap().to_path_buf();
    let (_, s) = submit(&mut c, "/save /no/such/dir/s.json", false);
    assert!(texts(&s)[0].starts_with("warning: cannot save the session to /no/such/dir/s.json"));
    assert_eq!(c.session_path(), Some(first.as_path()), "kept where it was");
    let elsewhere = dir.path().join("mine.json");
    let (_, s) = submit(&mut c, &format!("/save {}", elsewhere.display()), false);
    assert_eq!(texts(&s), [format!("saved: {}", elsewhere.display())]);
    let (_, s) = submit(&mut c, "/new", false);
    assert_eq!(
        texts(&s),
        [
            format!("saved: {}", elsewhere.display()),
            "notice: Started a new session.".to_string()
        ]
    );
    assert!(c.thread().history().is_empty());
    assert_ne!(c.session_path(), Some(elsewhere.as_path()));
    let mut sink = Recorder::default();
    c.leave(&mut sink);
    assert!(texts(&sink).is_empty(), "an empty session is not written");
    submit(&mut c, "second", false);
    let mut sink = Recorder::default();
    c.leave(&mut sink);
    assert_eq!(
        texts(&sink),
        [format!("saved: {}", c.session_path().unwrap().display())]
    );
}

#[test]
fn source_switches_keep_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(dir.path(), vec![], Keep::NewSession);
    let (_, s) = submit(&mut c, "/source missing", false);
    assert_eq!(texts(&s), ["failed: cannot open missing: no such file"]);
    assert_eq!(c.label(), "t.db");
    let (_, s) = submit(&mut c, "/source other.db", false);
    assert_eq!(
        texts(&s),
        ["notice: Now using other.db (1 tables); the conversation is kept."]
    );
    assert_eq!(c.label(), "other.db");
}

#[test]
fn commands_that_change_the_status_report_it_before_the_final_event() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(dir.path(), vec![], Keep::NewSession);
    let before = c.status();
    assert_eq!(
        before,
        Status {
            source: "t.db".into(),
            engine: "sqlite",
            tables: 1,
            provider: "fake".into(),
            model: "fake-1".into(),
            mode: Mode::Sql,
            format: Format::Table,
            session: c.session_path().map(Path::to_path_buf),
        }
    );
    let changes = |s: &Recorder| -> Vec<Status> {
        s.events
            .iter()
            .filter_map(|e| match e {
                Event::StatusChanged(st) => Some(st.clone()),
                _ => None,
            })
            .collect()
    };
    let (_, s) = submit(&mut c, "/help", false);
    assert!(changes(&s).is_empty());
    let (_, s) = submit(&mut c, "/format csv", false);
    let csv = Status {
        format: Format::Csv,
        ..before.clone()
    };
    assert_eq!(changes(&s), [csv]);
    assert!(matches!(s.events.last(), Some(Event::TurnFinished(_))));
    let (_, s) = submit(&mut c, "/source other.db", false);
    assert_eq!(changes(&s)[0].source, "other.db");
}

#[test]
fn a_stale_session_asks_before_continuing() {
    for (answer, context_start) in [(false, 2), (true, 0)] {
        let dir = tempfile::tempdir().unwrap();
        let (mut old, _) = conversation(dir.path(), vec![sql("SELECT 1 AS a")], Keep::NewSession);
        submit(&mut old, "first", false);
        let path = old.session_path().unwrap().to_path_buf();
        let mut session = Session::load(&path).unwrap();
        session.last_updated = chrono::Utc::now() - chrono::Duration::hours(30);
        let (mut c, _) = conversation(dir.path(), vec![], Keep::Session(Box::new(session)));
        let mut sink = Recorder {
            answer,
            ..Recorder::default()
        };
        c.offer_fresh_context(&mut sink);
        let question = sink.events.iter().find_map(|e| match e {
            Event::Confirm(q) => Some(q.question.clone()),
            _ => None,
        });
        assert_eq!(
            question.as_deref(),
            Some("This session was last used 30 hours ago. Continue the previous conversation?")
        );
        assert_eq!(c.thread().context_start(), context_start);
        assert_eq!(
            c.thread().history().len(),
            2,
            "the messages stay for /history"
        );
    }
}

#[test]
fn a_fresh_session_is_not_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(
        dir.path(),
        vec![Scripted::Text("hi".into())],
        Keep::NewSession,
    );
    let mut sink = Recorder::default();
    c.offer_fresh_context(&mut sink);
    assert!(sink.events.is_empty());
}

#[test]
fn mode_switches_what_the_model_writes_and_lua_answers_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let program =
        "```lua\nlocal r = aiq.query('SELECT n FROM t ORDER BY n')\nprint(#r)\naiq.table(r)\n```";
    let (mut c, seen) = conversation(
        dir.path(),
        vec![Scripted::Text(program.into()), sql("SELECT 1 AS one")],
        Keep::NewSession,
    );
    let (_, s) = submit(&mut c, "/mode", false);
    assert_eq!(
        texts(&s),
        ["notice: Mode: sql — the model answers with one SQL statement."]
    );
    let (_, s) = submit(&mut c, "/mode python", false);
    assert_eq!(
        texts(&s),
        ["failed: unknown mode 'python' (choose sql or lua)"]
    );
    let (_, s) = submit(&mut c, "/mode LUA", false);
    assert!(
        texts(&s)[0].starts_with("notice: Mode: lua"),
        "{:?}",
        texts(&s)
    );
    assert_eq!(c.mode(), super::Mode::Lua);
    assert_eq!(c.thread().mode(), super::Mode::Lua);

    let (_, s) = submit(&mut c, "how many?", false);
    assert!(matches!(s.outcomes()[0], Outcome::Answered(a) if a.rows == Some(2)));
    assert!(s
        .events
        .iter()
        .any(|e| matches!(e, Event::ToolCall { name, .. } if name == "aiq.query")));
    assert!(s
        .events
        .iter()
        .any(|e| matches!(e, Event::Output(t) if t == "2\n")));
    let system = seen.lock().unwrap()[0][0].content.clone();
    assert!(system.contains("aiq.query(sql [, params])"), "{system}");
    let answer = &c.thread().history()[1];
    assert_eq!(
        answer.lua.as_deref(),
        Some("local r = aiq.query('SELECT n FROM t ORDER BY n')\nprint(#r)\naiq.table(r)")
    );
    assert_eq!(answer.output.as_deref(), Some("2\n"));
    assert_eq!(answer.preview.as_deref(), Some("n\n1\n5\n"));

    // Back to SQL: the next request says so, and carries the Lua answer.
    submit(&mut c, "/mode sql", false);
    submit(&mut c, "and one?", false);
    let second = seen.lock().unwrap()[1].clone();
    assert!(second[0].content.contains("exactly one SQL statement"));
    assert!(
        second[2].content.contains("The program printed:\n2"),
        "{}",
        second[2].content
    );
    // The run is in the audit log, with this conversation's session file.
    let logs = crate::home::log_files(&dir.path().join("home"));
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&logs[0]).unwrap().trim()).unwrap();
    assert_eq!(line["origin"], "model");
    assert_eq!(line["source"], "t.db");
    assert_eq!(
        line["session"].as_str(),
        c.session_path().map(|p| p.display().to_string()).as_deref()
    );
}

#[test]
fn a_note_joins_the_schema_and_the_notes_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(dir.path(), vec![], Keep::NewSession);
    let (_, s) = submit(&mut c, "/note Counts in t are per day.", false);
    let file = dir.path().join("home").join("notes").join("t.db.md");
    assert_eq!(
        texts(&s),
        [format!(
            "notice: Noted in {}; the model reads it from the next question on.",
            file.display()
        )]
    );
    submit(&mut c, "/note Months are calendar months.", false);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "- Counts in t are per day.\n- Months are calendar months.\n"
    );
    // Each note once, the one naming t with it; the tables after.
    let (_, s) = submit(&mut c, "/schema", false);
    let listing = &texts(&s)[0];
    assert!(
        listing.starts_with("listing: -- notes (the model gets each with the tables it names)\n- Counts in t are per day.  [tables: t]\n- Months are calendar months.\n\ntable t"),
        "{listing}"
    );
    assert_eq!(
        listing.matches("Counts in t are per day").count(),
        1,
        "{listing}"
    );
}

/// `/good` keeps the last question and its SQL as a verified example of
/// the source (SPEC §14): refused before any answer and after a failed
/// one, stored once per question, and sent with the next similar
/// question — never with the same question again.
#[test]
fn good_keeps_the_last_answer_as_an_example_for_similar_questions() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, seen) = conversation(
        dir.path(),
        vec![
            sql("SELECT nope FROM nowhere"),
            sql("SELECT nope FROM nowhere"),
            sql("SELECT nope FROM nowhere"),
            sql("SELECT month, n FROM t ORDER BY month"),
            sql("SELECT month, n FROM t"),
        ],
        Keep::Nothing,
    );
    let (_, s) = submit(&mut c, "/good", false);
    assert!(
        texts(&s)[0].starts_with("failed: no question yet"),
        "{:?}",
        texts(&s)
    );
    submit(&mut c, "monthly counts please", false);
    let (_, s) = submit(&mut c, "/good", false);
    assert!(texts(&s)[0].contains("failed"), "{:?}", texts(&s));
    submit(&mut c, "How many per month?", false);
    let (_, s) = submit(&mut c, "/good", false);
    assert!(
        texts(&s)[0].starts_with(
            "notice: Kept: SELECT month, n FROM t ORDER BY month\nas verified example 1"
        ),
        "{:?}",
        texts(&s)
    );
    // Twice for one question keeps one example.
    submit(&mut c, "/good", false);
    let file = dir.path().join("home/examples/t.db.jsonl");
    let stored = crate::examples::Store::load(&file).unwrap();
    assert_eq!(stored.examples.len(), 1);
    assert_eq!(stored.examples[0].question, "How many per month?");
    assert_eq!(
        stored.examples[0].sql,
        "SELECT month, n FROM t ORDER BY month"
    );
    // A similar question carries it, in its own message (after the
    // conversation's stable part); the request says so.
    submit(&mut c, "how many for each month", false);
    let requests = seen.lock().unwrap();
    let asked = &requests.last().unwrap().last().unwrap().content;
    assert!(
        asked.contains("Verified examples")
            && asked.contains("Q: How many per month?\nSQL: SELECT month, n FROM t ORDER BY month")
            && asked.ends_with("\n\nhow many for each month"),
        "{asked}"
    );
    assert!(!requests.last().unwrap()[0]
        .content
        .contains("Verified examples"));
}

/// The correction loop: `/good` keeps the SQL the person last ran and
/// saw — an `/edit`ed statement run with `/sql` after the model's, a
/// working one after a failed answer — and says which; what `/sql` ran
/// joins the conversation the model sees.
#[test]
fn good_keeps_what_the_person_last_ran() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, seen) = conversation(
        dir.path(),
        vec![
            sql("SELECT month, n FROM t LIMIT 5"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT month FROM t WHERE n > 1"),
        ],
        Keep::Nothing,
    );
    submit(&mut c, "counts per month", false);
    // `/edit` puts `/sql …` in the input line; the person changes it.
    submit(&mut c, "/sql SELECT month, n FROM t LIMIT 3", false);
    let (_, s) = submit(&mut c, "/good", false);
    assert!(
        texts(&s)[0].starts_with("notice: Kept: SELECT month, n FROM t LIMIT 3\n"),
        "{:?}",
        texts(&s)
    );
    // A failed answer, fixed by hand.
    submit(&mut c, "the broken question", false);
    let (_, s) = submit(&mut c, "/good", false);
    assert!(
        texts(&s)[0].starts_with("failed: the last SQL run failed"),
        "{:?}",
        texts(&s)
    );
    submit(&mut c, "/sql SELECT n FROM t", false);
    let (_, s) = submit(&mut c, "/good", false);
    assert!(
        texts(&s)[0].starts_with("notice: Kept: SELECT n FROM t\n"),
        "{:?}",
        texts(&s)
    );
    let file = dir.path().join("home/examples/t.db.jsonl");
    let stored = crate::examples::Store::load(&file).unwrap();
    let kept: Vec<(&str, &str)> = stored
        .examples
        .iter()
        .map(|e| (e.question.as_str(), e.sql.as_str()))
        .collect();
    assert_eq!(
        kept,
        [
            ("counts per month", "SELECT month, n FROM t LIMIT 3"),
            ("the broken question", "SELECT n FROM t")
        ]
    );
    // A follow-up after `/sql` has that SQL and its result as context.
    submit(&mut c, "/sql SELECT month, n FROM t ORDER BY n DESC", false);
    submit(&mut c, "now only the busy months", false);
    let requests = seen.lock().unwrap();
    let last: String = requests
        .last()
        .unwrap()
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        last.contains("SELECT month, n FROM t ORDER BY n DESC"),
        "{last}"
    );
    assert!(last.contains("(I ran this SQL myself.)"), "{last}");
    assert!(last.contains("Result: 2 rows"), "{last}");
}

/// `/edit` hands the front end the last SQL (the model's, failed or not,
/// or one typed with `/sql`) to put in the input line.
#[test]
fn edit_offers_the_last_sql() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = conversation(
        dir.path(),
        vec![
            sql("SELECT month FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
            sql("SELECT nope FROM t"),
        ],
        Keep::Nothing,
    );
    let edit = |s: &Recorder| {
        s.events.iter().find_map(|e| match e {
            Event::Edit(sql) => Some(sql.clone()),
            _ => None,
        })
    };
    let (_, s) = submit(&mut c, "/edit", false);
    assert!(edit(&s).is_none());
    assert!(
        texts(&s)[0].starts_with("failed: no SQL yet"),
        "{:?}",
        texts(&s)
    );
    submit(&mut c, "months?", false);
    let (_, s) = submit(&mut c, "/edit", false);
    assert_eq!(edit(&s).as_deref(), Some("SELECT month FROM t"));
    submit(&mut c, "a broken one", false);
    let (_, s) = submit(&mut c, "/edit", false);
    assert_eq!(edit(&s).as_deref(), Some("SELECT nope FROM t"));
    submit(&mut c, "/sql SELECT n FROM t", false);
    let (_, s) = submit(&mut c, "/edit", false);
    assert_eq!(edit(&s).as_deref(), Some("SELECT n FROM t"));
    assert_eq!(c.last_sql(), Some("SELECT n FROM t"));
}
