//! Privacy decided by what the engine reads (SPEC §4.3): a generated corpus
//! of statement shapes — stars, from-first, the row as a value, `COLUMNS`,
//! positions, alias lists, views, comments the engines read differently,
//! nested selects — on SQLite, DuckDB (a database file and a CSV folder),
//! PostgreSQL and MariaDB, with unique markers in a redacted and an
//! excluded column, through every way in: a chat, single-shot follow-ups of
//! one session, Lua programs, and MCP's `run_query`. Every request body the
//! scripted model received, and every MCP answer, holds no marker; the
//! user still sees the values.

#![cfg(unix)]

mod common;

use common::llm::{ModelServer, Reply};
use common::servers::{self, Server};
use common::{pty, stderr_of, stdout_of, Sandbox};
use expectrl::Expect;
use serde_json::json;

/// In the redacted `email` column and the excluded `ssn` column.
const EMAIL_MARK: &str = "zzm-mark";
const SSN_MARK: &str = "zzs-mark";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    Sqlite,
    DuckDb,
    Csv,
    Postgres,
    MariaDb,
}

impl Engine {
    fn database_type(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::DuckDb | Engine::Csv => "duckdb",
            Engine::Postgres => "postgres",
            Engine::MariaDb => "mysql",
        }
    }
}

/// The people of the fixture: id, name, email, ssn, tier.
fn people() -> Vec<(i64, String, String, String, &'static str)> {
    (1..=4)
        .map(|i| {
            (
                i,
                ["Ann", "Bob", "Cy", "Di"][i as usize - 1].to_string(),
                format!("{EMAIL_MARK}-{i}@x.test"),
                format!("{SSN_MARK}-{i}"),
                ["gold", "silver", "gold", "bronze"][i as usize - 1],
            )
        })
        .collect()
}

fn inserts() -> String {
    people()
        .iter()
        .map(|(id, name, email, ssn, tier)| {
            format!("INSERT INTO people VALUES ({id}, '{name}', '{email}', '{ssn}', '{tier}');")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const TABLES: &str = "CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR(20), email VARCHAR(40), ssn VARCHAR(20), tier VARCHAR(10));
CREATE TABLE visits (id INTEGER PRIMARY KEY, person_id INTEGER, pages INTEGER);
INSERT INTO visits VALUES (1, 1, 3), (2, 2, 5), (3, 1, 7);
CREATE VIEW contacts AS SELECT name, email AS reach FROM people;";

/// The source's config: emails redacted, ssn taken out.
fn config(url: &str) -> String {
    format!(
        "[sources]\ndefault = \"crm\"\n[sources.crm]\nurl = \"{url}\"\nredact = [\"people.email\", \"handles.email\"]\nexclude = [\"people.ssn\"]\n"
    )
}

/// Makes the engine's fixture; the source's URL.
fn fixture(sb: &Sandbox, engine: Engine, server: Option<&Server>) -> String {
    let all = format!("{TABLES}\n{}", inserts());
    match engine {
        Engine::Sqlite => {
            let path = sb.path().join("crm.db");
            rusqlite::Connection::open(&path)
                .unwrap()
                .execute_batch(&all)
                .unwrap();
            path.display().to_string()
        }
        Engine::DuckDb => {
            let path = sb.path().join("crm.duckdb");
            // A generated column made of the redacted one: its samples
            // would carry the markers.
            let generated = format!(
                "CREATE TABLE handles (id INTEGER, email VARCHAR DEFAULT '{EMAIL_MARK}-default', handle VARCHAR GENERATED ALWAYS AS (split_part(email, '@', 1)));
                 INSERT INTO handles (id, email) VALUES (1, '{EMAIL_MARK}-h1@x.test'), (2, '{EMAIL_MARK}-h2@x.test');"
            );
            duckdb::Connection::open(&path)
                .unwrap()
                .execute_batch(&format!("{all}\n{generated}"))
                .unwrap();
            path.display().to_string()
        }
        Engine::Csv => {
            let dir = sb.path().join("crm");
            std::fs::create_dir_all(&dir).unwrap();
            let mut csv = String::from("id,name,email,ssn,tier\n");
            for (id, name, email, ssn, tier) in people() {
                csv.push_str(&format!("{id},{name},{email},{ssn},{tier}\n"));
            }
            std::fs::write(dir.join("people.csv"), csv).unwrap();
            std::fs::write(dir.join("visits.csv"), "id,person_id,pages\n1,1,3\n2,2,5\n").unwrap();
            dir.display().to_string()
        }
        Engine::Postgres | Engine::MariaDb => {
            let server = server.expect("a server");
            let drop = "DROP VIEW IF EXISTS contacts; DROP TABLE IF EXISTS people; DROP TABLE IF EXISTS visits;";
            server
                .as_login(
                    servers::USER,
                    servers::PASSWORD,
                    "shop",
                    &format!("{drop}\n{all}"),
                )
                .unwrap();
            server.url()
        }
    }
}

/// The shapes a statement can take to read the redacted and excluded
/// columns without spelling them, and the plain ones, on `engine`.
fn shapes(engine: Engine) -> Vec<String> {
    let mut base: Vec<&str> = vec![
        "SELECT * FROM people",
        "SELECT ALL * FROM people",
        "SELECT DISTINCT * FROM people",
        "SELECT p.* FROM people p",
        "SELECT * FROM (SELECT * FROM people) AS s",
        "WITH x AS (SELECT * FROM people) SELECT * FROM x",
        "SELECT email FROM people",
        "SELECT lower(email) AS e FROM people",
        "SELECT upper(ssn) AS s FROM people",
        "SELECT (SELECT max(email) FROM people) AS m",
        "SELECT name FROM people WHERE id IN (SELECT id FROM people WHERE email IS NOT NULL)",
        "SELECT name, email AS contact FROM people ORDER BY 1",
        "SELECT name FROM visits v JOIN people p ON p.id = v.person_id UNION SELECT email FROM people",
        "SELECT max(email) AS m, min(ssn) AS s FROM people",
        "SELECT tier, count(*) AS n FROM people GROUP BY tier HAVING max(email) > ''",
    ];
    let views = ["SELECT * FROM contacts", "SELECT reach FROM contacts"];
    let duck = [
        "FROM people",
        "SELECT p FROM people p",
        "SELECT people FROM people",
        "SELECT to_json(p) AS j FROM people p",
        "SELECT COLUMNS(*) FROM people",
        "SELECT COLUMNS('^e') FROM people",
        "SELECT #3 FROM people",
        "SELECT p['email'] AS e FROM people p",
        "SELECT e FROM people AS t(i, n, e)",
        "WITH x AS (FROM people) SELECT ALL * FROM x",
        "SUMMARIZE people",
        "SELECT id --\r, email\nFROM people",
        "SELECT string_agg(email, ';') AS all_mail FROM people",
        "DESCRIBE people",
        "SHOW people",
        "DESCRIBE handles",
        "SELECT * FROM (DESCRIBE SELECT * FROM handles)",
        "SELECT handle FROM handles",
        "PIVOT people ON email USING count(*)",
        "PIVOT people ON ssn USING count(*) GROUP BY tier",
        "SELECT * FROM pragma_table_info('people')",
    ];
    let pg = [
        "TABLE people",
        "SELECT p FROM people p",
        "SELECT row_to_json(p) AS j FROM people p",
        "SELECT to_jsonb(p) AS j FROM people p",
        "SELECT e FROM people AS t(i, n, e)",
        "SELECT id --\r, email\nFROM people",
        "SELECT string_agg(email, ';') AS all_mail FROM people",
        "SELECT (p).* FROM (SELECT p FROM people p) AS q",
    ];
    let lite = [
        "SELECT id /* /* */, email -- */\nFROM people",
        "SELECT group_concat(email) AS all_mail FROM people",
        "SELECT json_object('e', email) AS j FROM people",
    ];
    let maria = [
        "SELECT id /* /* */, email -- */\nFROM people",
        "SELECT group_concat(email) AS all_mail FROM people",
        "SELECT JSON_OBJECT('e', email) AS j FROM people",
        "SELECT `email` FROM people",
        "SELECT id /*!, email */ FROM people",
    ];
    match engine {
        Engine::Sqlite => base.extend(views.iter().chain(&lite)),
        Engine::DuckDb => base.extend(views.iter().chain(&duck)),
        Engine::Csv => base.extend(&duck),
        Engine::Postgres => base.extend(views.iter().chain(&pg)),
        Engine::MariaDb => base.extend(views.iter().chain(&maria)),
    }
    let quote = |name: &str| match engine {
        Engine::MariaDb => format!("`{name}`"),
        _ => format!("\"{name}\""),
    };
    // Variants: the column quoted, the statement on CRLF lines behind a
    // comment, in lower case (MariaDB's table names keep their case).
    let mut out = Vec::new();
    for sql in base {
        out.push(sql.to_string());
        if sql.contains("email") && !sql.contains("'email'") {
            out.push(sql.replacen("email", &quote("email"), 1));
        }
        out.push(format!("/* q */\r\n{}", sql.replace(" FROM ", "\r\nFROM ")));
        if engine != Engine::MariaDb && !sql.contains('\'') {
            out.push(sql.to_lowercase());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Answers "shape N" with the shape's SQL (or a program running it), and
/// anything else (a request to fix a failed statement) in words.
fn model(corpus: &[String], lua: bool) -> ModelServer {
    let server = ModelServer::start(Vec::new());
    let corpus = corpus.to_vec();
    server.answer_by_question(move |q| {
        let Some(n) = q.trim().strip_prefix("shape ") else {
            return Some(Reply::Text("I cannot answer that with this data.".into()));
        };
        let sql = corpus.get(n.trim().parse::<usize>().ok()?)?;
        Some(Reply::Text(if lua {
            format!(
                "```lua\nlocal rows = aiq.query([==[{sql}]==])\nfor _, r in ipairs(rows) do\n  local parts = {{}}\n  for k, v in pairs(r) do parts[#parts + 1] = tostring(k) .. '=' .. tostring(v) end\n  print(table.concat(parts, ' '))\nend\naiq.table(rows)\n```"
            )
        } else {
            format!("```sql\n{sql}\n```")
        }))
    });
    server
}

/// Every request body `server` received holds no marker.
fn assert_no_marker(server: &ModelServer, way: &str, engine: Engine) -> usize {
    let requests = server.chats();
    for (i, r) in requests.iter().enumerate() {
        for mark in [EMAIL_MARK, SSN_MARK] {
            assert!(
                !r.raw.contains(mark),
                "{engine:?} {way}: request {i} carries {mark}: {}",
                r.raw
            );
        }
    }
    requests.len()
}

fn chat(sb: &Sandbox, engine: Engine, corpus: &[String]) {
    let server = model(corpus, false);
    let mut p = pty(
        sb,
        &["crm".as_ref(), "--history-limit".as_ref(), "50".as_ref()],
        Some(&server),
        "dumb",
    );
    p.expect("aiq[crm]> ").unwrap();
    for i in 0..corpus.len() {
        p.send_line(format!("shape {i}")).unwrap();
        p.expect("aiq[crm]> ").unwrap();
    }
    // One more question: the request carries every earlier answer.
    p.send_line("and now?").unwrap();
    p.expect("aiq[crm]> ").unwrap();
    p.send_line("/exit").unwrap();
    p.expect(expectrl::Eof).unwrap();
    let n = assert_no_marker(&server, "chat", engine);
    assert!(n > corpus.len(), "{engine:?} chat: {n} requests");
}

/// An empty session file on the source, for follow-ups to go on.
fn new_session(sb: &Sandbox, engine: Engine, name: &str) -> String {
    let path = sb.path().join(format!("{name}.json"));
    let now = "2026-11-28T00:00:00Z";
    let empty = json!({
        "version": 1,
        "metadata": {"created_at": now, "last_updated": now, "data_source": "crm",
                     "database_type": engine.database_type()},
        "messages": [],
    });
    std::fs::write(&path, empty.to_string()).unwrap();
    path.display().to_string()
}

/// One session, one process per question: each request carries the
/// answers before it, as the session file kept them. The user sees the
/// values.
fn follow_ups(sb: &Sandbox, engine: Engine, corpus: &[String], lua: bool) {
    let server = model(corpus, lua);
    let session = new_session(sb, engine, if lua { "lua-corpus" } else { "sql-corpus" });
    let session = session.as_str();
    let mut shown = 0;
    let mut last = String::new();
    for i in 0..=corpus.len() {
        let question = match i {
            i if i == corpus.len() => "and now?".to_string(),
            i => format!("shape {i}"),
        };
        let mut cmd = sb.aiq_with(&server, "openai");
        cmd.args(["crm", "-s", session, "--history-limit", "50", "-f", "csv"]);
        if lua {
            cmd.args(["--mode", "lua"]);
        }
        let out = cmd.args(["-q", &question]).output().unwrap();
        let text = stdout_of(&out);
        assert!(
            !stderr_of(&out).contains("panicked"),
            "{engine:?}: {}",
            stderr_of(&out)
        );
        if text.contains(EMAIL_MARK) {
            shown += 1;
        }
        last = format!("{text}\n{}", stderr_of(&out));
    }
    let way = if lua { "lua" } else { "single-shot" };
    assert_no_marker(&server, way, engine);
    assert!(shown > 0, "{engine:?} {way}: the user saw no value: {last}");
}

/// Each shape through MCP's `run_query`: an MCP client is a model.
fn mcp(sb: &Sandbox, engine: Engine, corpus: &[String]) {
    let Some(python) = common::mcp::python() else {
        return;
    };
    let plan = sb.home().join("privacy-plan.json");
    let calls: Vec<_> = corpus
        .iter()
        .enumerate()
        .map(|(i, sql)| json!({"id": i, "sql": sql}))
        .collect();
    let body = json!({
        "calls": calls, "probe": "SELECT 1 AS one", "evil": "SELECT 1 AS one",
        "watch": sb.path(), "skip": sb.path().join("home"),
    });
    std::fs::write(&plan, body.to_string()).unwrap();
    let out = common::mcp::driver(
        sb,
        python,
        "attack",
        common::mcp::Era::Legacy,
        &["--plan", &plan.to_string_lossy()],
        common::mcp::Target::Stdio(&["mcp", "crm"]),
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let answered = text
        .lines()
        .filter(|l| l.starts_with("{\"id\"") && l.contains("\"result\""))
        .count();
    assert_eq!(answered, corpus.len(), "{engine:?} mcp: {text}");
    for mark in [EMAIL_MARK, SSN_MARK] {
        assert!(
            !text.contains(mark),
            "{engine:?} mcp: an answer carries {mark}: {text}"
        );
    }
    assert!(text.contains("values not sent"), "{engine:?} mcp: {text}");
}

/// The plain statements still send their values.
fn plain_results_still_go(sb: &Sandbox, engine: Engine) {
    let server = ModelServer::start(vec![
        Reply::Text("```sql\nSELECT name, tier FROM people ORDER BY id\n```".into()),
        Reply::Text("```sql\nSELECT count(*) AS n FROM visits\n```".into()),
    ]);
    let session = new_session(sb, engine, "plain");
    for q in ["names and tiers", "who is gold?"] {
        let out = sb
            .aiq_with(&server, "openai")
            .args(["crm", "-s", &session, "-q", q, "-f", "csv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{engine:?}: {}", stderr_of(&out));
    }
    let last = &server.chats()[1].raw;
    assert!(last.contains("Ann,gold"), "{engine:?}: {last}");
}

/// Verified examples whose SQL reads a redacted column with a value in
/// it — a string, an escape string, a comment, a view's column — are not
/// sent; a plain one is (SPEC §14).
fn examples(sb: &Sandbox, engine: Engine) {
    let mut stored = vec![
        format!("SELECT id FROM people WHERE email = '{EMAIL_MARK}-1@x.test'"),
        format!("SELECT id FROM people -- {EMAIL_MARK}-2@x.test\nWHERE email IS NOT NULL"),
        format!("SELECT id FROM people WHERE upper(email) LIKE '{EMAIL_MARK}-3%'"),
        "SELECT name FROM people WHERE tier = 'gold'".to_string(),
    ];
    match engine {
        Engine::Postgres => {
            stored.push(format!(
                "SELECT id FROM people WHERE email = E'{EMAIL_MARK}-4@x.test'"
            ));
            stored.push(format!(
                "SELECT name FROM contacts WHERE reach = '{EMAIL_MARK}-4@x.test'"
            ));
        }
        Engine::DuckDb => {
            stored.push(format!(
                "SELECT id FROM people p WHERE p['email'] = '{EMAIL_MARK}-4@x.test'"
            ));
            stored.push(format!(
                "SELECT name FROM contacts WHERE reach = '{EMAIL_MARK}-4@x.test'"
            ));
        }
        Engine::Csv => {}
        _ => stored.push(format!(
            "SELECT name FROM contacts WHERE reach = '{EMAIL_MARK}-4@x.test'"
        )),
    }
    for (i, sql) in stored.iter().enumerate() {
        let question = format!("person mail tier gold number {i}");
        let out = sb
            .aiq()
            .args([
                "examples",
                "add",
                "crm",
                "--question",
                &question,
                "--sql",
                sql,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{engine:?} {sql}: {}",
            stderr_of(&out)
        );
    }
    let out = sb
        .aiq()
        .args([
            "schema",
            "crm",
            "--as-sent",
            "--question",
            "person mail tier gold",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        !text.contains(EMAIL_MARK),
        "{engine:?}: an example carries a value: {text}"
    );
    assert!(text.contains("tier = 'gold'"), "{engine:?}: {text}");
    if engine != Engine::Csv {
        assert!(
            text.contains("view contacts -- reads a redacted column: its values are not sent"),
            "{engine:?}: {text}"
        );
        assert!(text.contains("-- views over them"), "{engine:?}: {text}");
    }
}

/// A program writes a redacted value to a file; a later one reads the
/// file back and prints it: what a file holds counts as read from a
/// redacted column while one is redacted.
fn laundering(sb: &Sandbox, engine: Engine) {
    let server = ModelServer::start(vec![
        Reply::Text(
            "```lua\nlocal r = aiq.query('SELECT email FROM people ORDER BY id')\naiq.write_file('stash.txt', r[1].email)\nprint('kept')\n```".into(),
        ),
        Reply::Text("```lua\nprint(aiq.read_file('stash.txt'))\n```".into()),
        Reply::Text("```lua\nprint('done')\n```".into()),
    ]);
    let session = new_session(sb, engine, "stash");
    for q in ["keep the first email", "show what you kept", "and now?"] {
        let out = sb
            .aiq_with(&server, "openai")
            .current_dir(sb.path())
            .args([
                "crm",
                "-s",
                &session,
                "--mode",
                "lua",
                "--allow-write",
                "--yes",
                "-q",
                q,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{engine:?}: {}", stderr_of(&out));
    }
    assert!(std::fs::read_to_string(sb.path().join("stash.txt"))
        .unwrap()
        .contains(EMAIL_MARK));
    assert_no_marker(&server, "a file between programs", engine);
}

fn walk(engine: Engine, server: Option<&Server>) {
    let sb = Sandbox::new();
    let url = fixture(&sb, engine, server);
    sb.write_config(&config(&url));
    let corpus = shapes(engine);
    chat(&sb, engine, &corpus);
    follow_ups(&sb, engine, &corpus, false);
    follow_ups(&sb, engine, &corpus, true);
    mcp(&sb, engine, &corpus);
    plain_results_still_go(&sb, engine);
    examples(&sb, engine);
    if engine == Engine::Sqlite {
        laundering(&sb, engine);
    }
}

#[test]
fn sqlite_corpus_sends_no_marker() {
    walk(Engine::Sqlite, None);
}

#[test]
fn duckdb_corpus_sends_no_marker() {
    walk(Engine::DuckDb, None);
}

#[test]
fn csv_folder_corpus_sends_no_marker() {
    walk(Engine::Csv, None);
}

#[test]
fn postgres_corpus_sends_no_marker() {
    if let Some(server) = servers::postgres() {
        walk(Engine::Postgres, Some(server));
    }
}

#[test]
fn mariadb_corpus_sends_no_marker() {
    if let Some(server) = servers::mariadb() {
        walk(Engine::MariaDb, Some(server));
    }
}
