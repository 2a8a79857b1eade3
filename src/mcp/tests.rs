//! The tool handlers against real SQLite sources, without a protocol:
//! arguments in, replies out.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use super::result::{Caps, Decision, Fixed};
use super::served::{Entry, Served};
use super::tools::{ModelSource, Reply, Tools};
use super::{name_for, unique};
use crate::agent::testkit::{sql, FakeModel, Scripted, SLOW_SQL};
use crate::agent::{Opened, SourceOpener};
use crate::cancel::CancelToken;
use crate::source::{self, EngineKind, OpenOptions, SourceSpec};

const SHOP: &str = "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'DE'), (2, 'Bo', 'US'), (3, 'Cy', 'DE');
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total REAL);
INSERT INTO orders VALUES (10, 1, 12.5), (11, 3, 7.25);";

/// Opens SQLite files the way the server's opener does.
struct FileOpener {
    allow_write: bool,
    /// The source's privacy settings and notes, if any.
    view: Option<(crate::privacy::Privacy, &'static str)>,
}

impl SourceOpener for FileOpener {
    fn open(&self, name: &str, _ask: crate::source::PasswordAsk) -> Result<Opened, String> {
        let options = OpenOptions {
            allow_write: self.allow_write,
            ..OpenOptions::default()
        };
        let source = source::open(&SourceSpec::Sqlite(name.into()), options).map_err(|e| e.0)?;
        let full = source.introspect().map_err(|e| e.0)?;
        let (privacy, notes) = self.view.clone().unwrap_or_default();
        let (guard, catalog) = crate::privacy::Guard::new(privacy, &full);
        Ok(Opened {
            source,
            catalog,
            guard,
            notes: crate::notes::Notes::parse(notes),
            examples: Default::default(),
            session_name: name.into(),
            label: name.into(),
            warnings: Vec::new(),
        })
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(SHOP)
        .unwrap();
    Fixture { _dir: dir, db }
}

fn entry(name: &str, path: &std::path::Path, allow_write: bool) -> Entry {
    Entry::new(
        name.into(),
        path.display().to_string(),
        Ok(EngineKind::Sqlite),
        path.display().to_string(),
        Box::new(FileOpener {
            allow_write,
            view: None,
        }),
    )
}

fn tools(f: &Fixture, allow_write: bool) -> Tools {
    Tools {
        served: Served::new(vec![entry("shop", &f.db, allow_write)], None),
        caps: Caps {
            rows: 100,
            bytes: 1 << 20,
        },
        allow_write,
        model: None,
    }
}

fn call(tools: &Tools, name: &str, args: Json) -> Reply {
    let Json::Object(args) = args else {
        panic!("arguments are an object")
    };
    tools.call(name, args, &CancelToken::new(), &mut Fixed(Decision::Yes))
}

fn customers(f: &Fixture) -> i64 {
    rusqlite::Connection::open(&f.db)
        .unwrap()
        .query_row("SELECT count(*) FROM customers", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn list_sources_names_engines_and_the_default() {
    let f = fixture();
    let broken = Entry::new(
        "gone".into(),
        "/nowhere/x.db".into(),
        Err("cannot open /nowhere/x.db: no such file".into()),
        "/nowhere/x.db".into(),
        Box::new(FileOpener {
            allow_write: false,
            view: None,
        }),
    );
    let t = Tools {
        served: Served::new(
            vec![entry("shop", &f.db, false), broken],
            Some("shop".into()),
        ),
        ..tools(&f, false)
    };
    let r = call(&t, "list_sources", json!({}));
    assert!(!r.is_error, "{}", r.text);
    let s = r.structured.unwrap();
    assert_eq!(s["default"], "shop");
    assert_eq!(s["sources"][0]["name"], "shop");
    assert_eq!(s["sources"][0]["engine"], "sqlite");
    assert_eq!(s["sources"][0]["default"], true);
    assert_eq!(s["sources"][1]["available"], false);
    assert_eq!(
        s["sources"][1]["problem"],
        "cannot open /nowhere/x.db: no such file"
    );
    assert!(r.text.starts_with("shop (default): sqlite, "), "{}", r.text);
    assert!(r
        .text
        .contains("gone: unknown engine, /nowhere/x.db — cannot be used"));
    // Once opened, the table count shows.
    call(&t, "describe_schema", json!({}));
    assert_eq!(
        call(&t, "list_sources", json!({})).structured.unwrap()["sources"][0]["tables"],
        2
    );
}

#[test]
fn describe_schema_is_the_text_the_model_gets() {
    let f = fixture();
    let t = tools(&f, false);
    let r = call(
        &t,
        "describe_schema",
        json!({"question": "orders per country"}),
    );
    assert!(!r.is_error, "{}", r.text);
    let catalog = source::open(&SourceSpec::Sqlite(f.db.clone()), OpenOptions::default())
        .unwrap()
        .introspect()
        .unwrap();
    let body = crate::agent::rank::schema_context(
        &catalog,
        "orders per country",
        &[],
        &[],
        crate::agent::fit::DEFAULT_SCHEMA_BUDGET,
    );
    let (head, rest) = r.text.split_once('\n').unwrap();
    assert!(
        head.starts_with("-- source shop: SQLite ")
            && head.ends_with("; write SQL in the SQLite dialect; read-only"),
        "{head}"
    );
    assert_eq!(rest, body);
    assert_eq!(r.source.as_deref(), Some("shop"));
}

#[test]
fn a_source_must_be_named_when_several_are_served_without_a_default() {
    let f = fixture();
    let t = Tools {
        served: Served::new(
            vec![entry("a", &f.db, false), entry("b", &f.db, false)],
            None,
        ),
        ..tools(&f, false)
    };
    let r = call(&t, "describe_schema", json!({}));
    assert!(r.is_error);
    assert_eq!(
        r.text,
        "more than one source is served and none is the default: give `source`, one of a, b"
    );
    let r = call(&t, "run_query", json!({"source": "c", "sql": "SELECT 1"}));
    assert_eq!(r.text, "no source named 'c' is served (sources: a, b)");
    let r = call(
        &t,
        "run_query",
        json!({"source": "b", "sql": "SELECT 1 AS x"}),
    );
    assert!(!r.is_error, "{}", r.text);
}

#[test]
fn notes_and_privacy_hold_for_mcp_clients() {
    let f = fixture();
    let privacy = crate::privacy::Privacy {
        exclude: vec!["orders".into()],
        redact: vec!["customers.name".into()],
        ..crate::privacy::Privacy::default()
    };
    let notes = "- Customers in DE are billed in euros.\n- Amounts are in cents.\n";
    let t = Tools {
        served: Served::new(
            vec![Entry::new(
                "shop".into(),
                f.db.display().to_string(),
                Ok(EngineKind::Sqlite),
                f.db.display().to_string(),
                Box::new(FileOpener {
                    allow_write: false,
                    view: Some((privacy, notes)),
                }),
            )],
            None,
        ),
        caps: Caps {
            rows: 100,
            bytes: 1 << 20,
        },
        allow_write: false,
        model: None,
    };
    let schema = call(&t, "describe_schema", json!({})).text;
    assert!(schema.contains("- Amounts are in cents."), "{schema}");
    assert!(
        schema.contains("table customers (~3 rows) -- note: Customers in DE are billed in euros."),
        "{schema}"
    );
    assert!(!schema.contains("orders"), "{schema}");
    assert!(!schema.contains("'Ada'"), "{schema}");
    let r = call(&t, "run_query", json!({"sql": "SELECT * FROM orders"}));
    assert!(r.is_error);
    assert!(r.text.contains("orders is hidden from aiq"), "{}", r.text);
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT name, country FROM customers"}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(!r.text.contains("Ada"), "{}", r.text);
    assert!(r
        .text
        .contains("values not sent: they include a redacted column"));
    assert_eq!(r.rows, Some(3));
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT country FROM customers ORDER BY id"}),
    );
    assert!(r.text.contains("| DE |"), "{}", r.text);
}

#[test]
fn run_query_returns_typed_rows_and_a_table() {
    let f = fixture();
    let t = tools(&f, false);
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT c.name, count(o.id) AS n, sum(o.total) AS total FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name"}),
    );
    assert!(!r.is_error, "{}", r.text);
    let s = r.structured.unwrap();
    assert_eq!(
        s["rows"],
        json!([["Ada", 1, 12.5], ["Bo", 0, null], ["Cy", 1, 7.25]])
    );
    assert_eq!(s["row_count"], 3);
    assert_eq!(s["truncated"], false);
    assert_eq!(s["columns"][0]["name"], "name");
    assert!(
        r.text
            .starts_with("| name | n | total |\n| --- | ---: | ---: |\n| Ada | 1 | 12.5 |\n"),
        "{}",
        r.text
    );
    assert!(r.text.ends_with("(3 rows)\n"), "{}", r.text);
    assert_eq!(r.rows, Some(3));
    assert_eq!(r.source.as_deref(), Some("shop"));
}

#[test]
fn max_rows_asks_for_fewer_and_the_server_caps_it() {
    let f = fixture();
    let mut t = tools(&f, false);
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT id FROM customers ORDER BY id", "max_rows": 2}),
    );
    let s = r.structured.unwrap();
    assert_eq!(s["rows"], json!([[1], [2]]));
    assert_eq!(s["truncated"], true);
    t.caps.rows = 1;
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT id FROM customers ORDER BY id", "max_rows": 50}),
    );
    assert_eq!(r.structured.unwrap()["rows"], json!([[1]]));
    t.caps = Caps {
        rows: 100,
        bytes: 8,
    };
    let r = call(
        &t,
        "run_query",
        json!({"sql": "SELECT id FROM customers ORDER BY id"}),
    );
    let s = r.structured.unwrap();
    assert_eq!(
        s["row_count"], 2,
        "each row is `[n]` and a separator: 4 bytes"
    );
    assert_eq!(s["truncated"], true);
}

#[test]
fn refusals_and_failures_are_tool_errors_with_aiq_messages() {
    let f = fixture();
    let t = tools(&f, false);
    let cases = [
        (
            json!({"sql": "DELETE FROM customers"}),
            "refused: DELETE changes data and aiq is read-only by default (this MCP server is read-only; whoever runs it can start it with `aiq mcp --allow-write`, and then each write still needs your confirmation)",
        ),
        (
            json!({"sql": "SELECT 1; DROP TABLE customers"}),
            "refused: 2 statements given; aiq runs exactly one statement at a time (send them one by one)",
        ),
        (
            json!({"sql": "SELECT * FROM nope"}),
            "query failed: no such table: nope",
        ),
        (
            json!({"query": "SELECT 1"}),
            "invalid arguments for run_query: unknown field `query`, expected one of `source`, `sql`, `max_rows`",
        ),
        (
            json!({"sql": 42}),
            "invalid arguments for run_query: invalid type: integer `42`, expected a string",
        ),
    ];
    for (args, message) in cases {
        let r = call(&t, "run_query", args.clone());
        assert!(r.is_error, "{args}");
        assert_eq!(r.text, message, "{args}");
    }
    assert!(call(&t, "run_query", json!({"sql": "SELEC 1"}))
        .text
        .starts_with("refused: the SQL does not parse as SQLite ("));
    assert_eq!(customers(&f), 3);
    let r = call(&t, "ask", json!({"question": "how many?"}));
    assert_eq!(r.text, "there is no tool named 'ask'");
}

#[test]
fn writes_run_only_when_the_client_confirms() {
    let f = fixture();
    let t = tools(&f, true);
    let delete = json!({"sql": "DELETE FROM customers WHERE id = 2"});
    let Json::Object(args) = delete.clone() else {
        unreachable!()
    };
    let r = t.call(
        "run_query",
        args.clone(),
        &CancelToken::new(),
        &mut Fixed(Decision::No(
            "not run: the user declined the statement".into(),
        )),
    );
    assert!(r.is_error);
    assert_eq!(r.text, "not run: the user declined the statement");
    assert_eq!(customers(&f), 3);

    let r = t.call(
        "run_query",
        args.clone(),
        &CancelToken::new(),
        &mut Fixed(Decision::AskNextRound),
    );
    assert!(!r.is_error);
    assert_eq!(
        r.ask_next_round.as_deref(),
        Some("DELETE FROM customers WHERE id = 2")
    );
    assert_eq!(customers(&f), 3);

    let r = t.call(
        "run_query",
        args,
        &CancelToken::new(),
        &mut Fixed(Decision::Yes),
    );
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.text, "1 row changed.");
    assert_eq!(r.structured.unwrap()["rows_changed"], 1);
    assert_eq!(customers(&f), 2);
    // Never allowed, even so.
    let r = call(
        &t,
        "run_query",
        json!({"sql": "ATTACH DATABASE 'x.db' AS x"}),
    );
    assert!(
        r.is_error && r.text.starts_with("refused: ATTACH is never allowed"),
        "{}",
        r.text
    );
}

#[test]
fn a_cancel_stops_the_statement() {
    let f = fixture();
    let t = Arc::new(tools(&f, false));
    let cancel = CancelToken::new();
    let running = {
        let (t, cancel) = (Arc::clone(&t), cancel.clone());
        std::thread::spawn(move || {
            let Json::Object(args) = json!({"sql": SLOW_SQL}) else {
                unreachable!()
            };
            t.call("run_query", args, &cancel, &mut Fixed(Decision::Yes))
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    cancel.cancel();
    let r = running.join().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(r.is_error);
    assert_eq!(r.text, "cancelled");
    // The source is free again.
    assert!(!call(&t, "run_query", json!({"sql": "SELECT 1 AS x"})).is_error);
}

fn with_model(f: &Fixture, replies: Vec<Scripted>) -> Tools {
    let replies = Arc::new(Mutex::new(Some(replies)));
    Tools {
        model: Some(ModelSource {
            label: "fake fake-1".into(),
            connect: Box::new(move || {
                let script = replies.lock().unwrap().take().unwrap_or_default();
                Ok(Box::new(FakeModel::new(script, Arc::default())))
            }),
        }),
        ..tools(f, false)
    }
}

#[test]
fn ask_runs_the_agent_turn_and_returns_its_rows() {
    let f = fixture();
    let t = with_model(
        &f,
        vec![
            sql("SELECT country, count(*) AS n FROM nope"),
            sql("SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country"),
        ],
    );
    assert!(t.list().iter().any(|tool| tool.name == "ask"));
    let r = call(&t, "ask", json!({"question": "customers per country?"}));
    assert!(!r.is_error, "{}", r.text);
    let s = r.structured.unwrap();
    assert_eq!(
        s["sql"],
        "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country"
    );
    assert_eq!(s["result"]["rows"], json!([["DE", 2], ["US", 1]]));
    assert!(r.text.contains("| DE | 2 |"), "{}", r.text);
    assert!(r.text.contains("retry 1: "), "the fix is noted: {}", r.text);
}

#[test]
fn ask_refusals_are_tool_errors() {
    let f = fixture();
    let t = with_model(&f, vec![sql("DELETE FROM customers")]);
    let r = call(&t, "ask", json!({"question": "remove everyone"}));
    assert!(r.is_error);
    assert!(
        r.text.starts_with("refused: DELETE changes data"),
        "{}",
        r.text
    );
    assert_eq!(r.sql.as_deref(), Some("DELETE FROM customers"));
    assert_eq!(customers(&f), 3);
}

#[test]
fn tool_schemas_are_objects_with_the_documented_fields() {
    let f = fixture();
    let t = tools(&f, false);
    let names: Vec<String> = t.list().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["list_sources", "describe_schema", "run_query"]);
    let run = t
        .list()
        .into_iter()
        .find(|t| t.name == "run_query")
        .unwrap();
    let schema = Json::Object((*run.input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["sql"]));
    assert_eq!(schema["properties"]["sql"]["type"], "string");
    assert_eq!(schema["additionalProperties"], false);
    let out = Json::Object((*run.output_schema.unwrap()).clone());
    assert!(out["properties"]["truncated"].is_object(), "{out}");
    assert_eq!(run.annotations.unwrap().read_only_hint, Some(true));
}

#[test]
fn names_come_from_files_folders_and_urls() {
    let spec = |p: &str| SourceSpec::Sqlite(p.into());
    assert_eq!(name_for("data/shop.db", &spec("data/shop.db")), "shop");
    assert_eq!(
        name_for("sqlite:///x/my shop.db", &spec("/x/my shop.db")),
        "my_shop"
    );
    let files = SourceSpec::DataFiles {
        root: "exports".into(),
        files: vec![],
        skipped: vec![],
    };
    assert_eq!(name_for("./exports/", &files), "exports");
    let server = SourceSpec::Server(crate::source::ServerSpec {
        protocol: crate::source::ServerProtocol::Postgres,
        url: "postgres://u:pw@db:5432/warehouse?sslmode=require".into(),
        password_env: None,
    });
    assert_eq!(
        name_for("postgres://u:pw@db:5432/warehouse?sslmode=require", &server),
        "warehouse"
    );
    assert_eq!(name_for("postgres://db:5432", &server), "db_5432");
    assert_eq!(unique("shop", &["shop", "shop_2"]), "shop_3");
    assert_eq!(unique("shop", &["other"]), "shop");
}

/// A source with verified examples (SPEC §14).
struct WithExamples(FileOpener);

impl SourceOpener for WithExamples {
    fn open(&self, name: &str, ask: crate::source::PasswordAsk) -> Result<Opened, String> {
        let mut opened = self.0.open(name, ask)?;
        let example = crate::examples::Example {
            id: "1".into(),
            question: "How many orders per country?".into(),
            sql: "SELECT c.country, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1".into(),
            added: "2026-01-01T00:00:00Z".into(),
            schema: String::new(),
        };
        opened.examples = crate::agent::verified::Verified::new(vec![example], 3);
        Ok(opened)
    }
}

#[test]
fn describe_schema_and_ask_carry_the_verified_examples() {
    let f = fixture();
    let seen: crate::agent::testkit::Seen = Arc::default();
    let script = Arc::new(Mutex::new(Some(vec![sql("SELECT count(*) FROM orders")])));
    let model_seen = Arc::clone(&seen);
    let t = Tools {
        served: Served::new(
            vec![Entry::new(
                "shop".into(),
                f.db.display().to_string(),
                Ok(EngineKind::Sqlite),
                f.db.display().to_string(),
                Box::new(WithExamples(FileOpener {
                    allow_write: false,
                    view: None,
                })),
            )],
            None,
        ),
        model: Some(ModelSource {
            label: "fake fake-1".into(),
            connect: Box::new(move || {
                let replies = script.lock().unwrap().take().unwrap_or_default();
                Ok(Box::new(FakeModel::new(replies, Arc::clone(&model_seen))))
            }),
        }),
        ..tools(&f, false)
    };
    let r = call(
        &t,
        "describe_schema",
        json!({"question": "number of orders in each country"}),
    );
    assert!(
        r.text
            .contains("Q: How many orders per country?\nSQL: SELECT c.country"),
        "{}",
        r.text
    );
    let r = call(
        &t,
        "describe_schema",
        json!({"question": "list the customers' names"}),
    );
    assert!(!r.text.contains("Verified examples"), "{}", r.text);
    let r = call(&t, "ask", json!({"question": "orders for every country?"}));
    assert!(!r.is_error, "{}", r.text);
    // The examples go with the question, in its message.
    let asked = seen.lock().unwrap()[0].last().unwrap().content.clone();
    assert!(asked.contains("Q: How many orders per country?"), "{asked}");
}
