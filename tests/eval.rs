//! `aiq eval` (SPEC §13) against the scripted model server: verdicts with
//! their reasons, follow-ups, the report formats, `--min`, `--compare`,
//! `--tags`, `--jobs`, Ctrl-C, verified examples in and out, and the demo
//! shop's built-in suite, whose every reference SQL must run and return rows.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::llm::{ModelServer, Reply};
use common::{stderr_of, stdout_of, Sandbox};
use serde_json::Value;

fn sql(sql: &str) -> Reply {
    Reply::Text(format!("Here is the query:\n```sql\n{sql}\n```\n"))
}

/// A model that answers each question from `answers` (by the question's
/// start), and a failing statement's fix request with `fixes`.
fn model(answers: &[(&str, Reply)]) -> ModelServer {
    let server = ModelServer::start(Vec::new());
    let answers: Vec<(String, Reply)> = answers
        .iter()
        .map(|(q, r)| (q.to_string(), r.clone()))
        .collect();
    server.answer_by_question(move |last| {
        answers
            .iter()
            .find(|(q, _)| last.starts_with(q.as_str()))
            .map(|(_, r)| r.clone())
            // A fix request: the same failing statement again.
            .or_else(|| Some(sql("SELECT nope FROM nowhere")))
    });
    server
}

const SUITE: &str = r#"
[[case]]
id = "per-country"
question = "How many customers per country?"
sql = "SELECT country, count(*) AS customers FROM customers GROUP BY country ORDER BY customers DESC, country"
tags = ["easy", "aggregate"]

[[case]]
id = "all-customers"
question = "How many customers are there?"
sql = "SELECT count(*) FROM customers"
tags = ["easy"]

[[case]]
id = "delete"
question = "Remove the cancelled orders"
sql = "SELECT count(*) FROM orders WHERE status = 'cancelled'"
tags = ["hard"]

[[case]]
id = "words"
question = "What is this database about?"
sql = "SELECT count(*) FROM orders"
tags = ["hard"]

[[case]]
id = "broken"
question = "Orders per weekday"
sql = "SELECT strftime('%w', ordered_at) AS d, count(*) FROM orders GROUP BY d"
tags = ["hard"]

[[case]]
id = "follow"
turns = ["Orders of Ann", "only the delivered ones"]
sql = "SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name = 'Ann' AND o.status = 'delivered'"
tags = ["medium", "follow-up"]
"#;

fn answers() -> Vec<(&'static str, Reply)> {
    vec![
        // Columns swapped and named otherwise, same values: a pass.
        (
            "How many customers per country?",
            sql("SELECT count(*) AS n, country AS c FROM customers GROUP BY country ORDER BY n DESC, c"),
        ),
        // A different count: a fail.
        ("How many customers are there?", sql("SELECT count(*) FROM customers WHERE vip")),
        ("Remove the cancelled orders", sql("DELETE FROM orders WHERE status = 'cancelled'")),
        ("What is this database about?", Reply::Text("A small shop.".into())),
        ("Orders per weekday", sql("SELECT nope FROM nowhere")),
        ("Orders of Ann", sql("SELECT o.id, o.total, o.status FROM orders o WHERE customer_id = 1")),
        (
            "only the delivered ones",
            sql("SELECT o.total, o.id FROM orders o WHERE customer_id = 1 AND status = 'delivered'"),
        ),
    ]
}

fn verdicts(report: &Value) -> HashMap<String, (String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                (
                    c["verdict"].as_str().unwrap().to_string(),
                    c["why"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn verdicts_reasons_follow_ups_and_the_json_report() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let suite = sb.path().join("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let server = model(&answers());
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .args(["-f", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let report: Value = serde_json::from_str(&stdout_of(&out)).unwrap();
    let v = verdicts(&report);
    assert_eq!(v["per-country"].0, "pass", "{:?}", v["per-country"]);
    assert_eq!(v["all-customers"].0, "fail");
    assert!(
        v["all-customers"].1.contains("differ"),
        "{:?}",
        v["all-customers"]
    );
    assert_eq!(v["delete"].0, "refused", "{:?}", v["delete"]);
    assert_eq!(v["words"].0, "error");
    assert!(v["words"].1.contains("in words"), "{:?}", v["words"]);
    assert_eq!(v["broken"].0, "error");
    assert!(v["broken"].1.contains("nowhere"), "{:?}", v["broken"]);
    assert_eq!(v["follow"].0, "pass", "{:?}", v["follow"]);
    let s = &report["summary"];
    assert_eq!(s["cases"], 6);
    assert_eq!(s["pass"], 2);
    assert_eq!(s["fail"], 1);
    assert_eq!(s["refused"], 1);
    assert_eq!(s["error"], 2);
    assert!((s["accuracy"].as_f64().unwrap() - 0.3333).abs() < 1e-3);
    assert!(report["model"].as_str().unwrap().contains("test-model"));
    let follow = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "follow")
        .unwrap();
    assert_eq!(follow["question"], "only the delivered ones");
    assert_eq!(follow["rows"], 2);
    assert_eq!(follow["expected_rows"], 2);

    // Each case is a fresh conversation: the follow-up's second request
    // carries its first turn, and no request carries another case's.
    let chats = server.chats();
    let second = chats
        .iter()
        .find(|r| {
            r.messages()
                .last()
                .is_some_and(|(_, c)| c.starts_with("only the delivered"))
        })
        .unwrap();
    let texts: Vec<String> = second.messages().into_iter().map(|(_, c)| c).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("Orders of Ann")),
        "{texts:?}"
    );
    for chat in &chats {
        let users: Vec<String> = chat
            .messages()
            .into_iter()
            .filter(|(r, _)| r == "user")
            .map(|(_, c)| c)
            .collect();
        let asked: Vec<&String> = users
            .iter()
            .filter(|u| answers().iter().any(|(q, _)| u.starts_with(q)))
            .collect();
        assert!(
            asked.len() == 1 || (asked.len() == 2 && asked[0].starts_with("Orders of Ann")),
            "one case's questions only: {asked:?}"
        );
    }
    // The reference SQL went through the gate, nothing was written.
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", "SELECT count(*) FROM orders", "-f", "csv"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&out), "count(*)\n6\n");
}

#[test]
fn table_summary_by_tag_min_tags_and_output_file() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let suite = sb.path().join("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let server = model(&answers());
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .args(["--min", "50%"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("accuracy 33.3% is below --min 50.0%"),
        "{}",
        stderr_of(&out)
    );
    assert!(text.contains("pass    per-country"), "{text}");
    assert!(text.contains("fail    all-customers"), "{text}");
    assert!(text.contains("2 of 6 cases pass (33.3%)"), "{text}");
    assert!(text.contains("  follow-up"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("easy") && l.contains("1 of 2")),
        "{text}"
    );

    // --tags, -o with the format from the extension, stdout the summary.
    let report = sb.path().join("easy.md");
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .args(["--tags", "easy,medium", "-o"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("2 of 3 cases pass"),
        "{}",
        stdout_of(&out)
    );
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("| pass | per-country |"), "{md}");
    assert!(!md.contains("delete"), "{md}");

    // Usage errors name what is wrong.
    for (args, says) in [
        (vec!["--min", "x"], "pass rate"),
        (vec!["--jobs", "0"], "jobs"),
        (vec!["--tags", "nothing-has-it"], "no case"),
    ] {
        let out = sb
            .std_aiq_with(&server, "openai")
            .arg("eval")
            .arg(&suite)
            .arg(&db)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr_of(&out).contains(says),
            "{args:?}: {}",
            stderr_of(&out)
        );
    }
    let bad = sb.path().join("bad.toml");
    std::fs::write(&bad, "[[case]]\nquestion = \"q\"\n").unwrap();
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&bad)
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("case 1") && stderr_of(&out).contains("sql"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn compare_with_an_earlier_report_and_parallel_jobs() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let suite = sb.path().join("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let before = sb.path().join("before.json");
    let server = model(&answers());
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .arg("-o")
        .arg(&before)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // A better model: the count is right now; four cases at once.
    let mut better = answers();
    better[1].1 = sql("SELECT count(*) FROM customers");
    let server = model(&better);
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .args(["--jobs", "4", "--compare"])
        .arg(&before)
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(text.contains("accuracy 33.3% → 50.0%"), "{text}");
    assert!(text.contains("pass    all-customers  (was fail)"), "{text}");
    // Suite order in the report, whatever order the cases finished in:
    // the passing cases first, then, after the summary, the others.
    let ids: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("pass ")
                || l.starts_with("fail ")
                || l.starts_with("error ")
                || l.starts_with("refused ")
        })
        .take(6)
        .map(|l| l.split_whitespace().nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        ids,
        [
            "per-country",
            "all-customers",
            "follow",
            "delete",
            "words",
            "broken"
        ]
    );
}

#[test]
fn ctrl_c_ends_with_the_summary_of_the_cases_done() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let suite = sb.path().join("suite.toml");
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!(
            "[[case]]\nid = \"c{i}\"\nquestion = \"Question {i}\"\nsql = \"SELECT {i}\"\n"
        ));
    }
    std::fs::write(&suite, text).unwrap();
    let server = ModelServer::start(Vec::new());
    server.answer_by_question(|q| {
        let i: u32 = q.trim_start_matches("Question ").parse().ok()?;
        let reply = sql(&format!("SELECT {i}"));
        Some(if i < 2 {
            reply
        } else {
            Reply::Slow(Duration::from_secs(30), Box::new(reply))
        })
    });
    let child = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // Wait until the third question is being asked.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while server.chats().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: sends SIGINT to the child started above.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "did not stop soon"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.contains("2 of 2 cases pass"), "{text}");
    assert!(text.contains("interrupted"), "{text}");
}

#[test]
fn verified_examples_go_with_similar_questions_but_never_their_own() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let add = sb
        .aiq()
        .args(["examples", "add"])
        .arg(&db)
        .args([
            "--question",
            "How many customers per country?",
            "--sql",
            "SELECT country, count(*) FROM customers GROUP BY country",
        ])
        .output()
        .unwrap();
    assert_eq!(add.status.code(), Some(0), "{}", stderr_of(&add));
    let suite = sb.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[case]]\nid = \"same\"\nquestion = \"How many customers per country?\"\nsql = \"SELECT country, count(*) FROM customers GROUP BY country\"\n\
         [[case]]\nid = \"like\"\nquestion = \"Number of customers in each country\"\nsql = \"SELECT country, count(*) FROM customers GROUP BY country\"\n",
    )
    .unwrap();
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let server = ModelServer::start(Vec::new());
    server.answer_by_question(|_| {
        Some(sql(
            "SELECT country, count(*) FROM customers GROUP BY country",
        ))
    });
    for no_examples in [false, true] {
        let mut cmd = sb.std_aiq_with(&server, "openai");
        cmd.arg("eval").arg(&suite).arg(&db).args(["-f", "json"]);
        if no_examples {
            cmd.arg("--no-examples");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        let done = seen.lock().unwrap().len();
        // The examples travel with the question they were picked for, in
        // its message, after the conversation's stable part.
        for chat in server.chats().iter().skip(done) {
            let msgs = chat.messages();
            let system = msgs[0].1.clone();
            let asked = msgs.last().unwrap().1.clone();
            assert!(!system.contains("Verified examples"), "{system}");
            seen.lock().unwrap().push((asked, system));
        }
        let seen = seen.lock().unwrap();
        let run: Vec<&(String, String)> = seen.iter().rev().take(2).collect();
        for (asked, _) in run {
            let has = asked.contains("Verified examples");
            let question = common::llm::question_of(asked);
            let expected = !no_examples && question.starts_with("Number of");
            assert_eq!(has, expected, "{asked} (no_examples {no_examples})");
            if has {
                assert!(asked.contains("Q: How many customers per country?\nSQL: SELECT country"));
                assert!(
                    asked.ends_with("\n\nNumber of customers in each country"),
                    "{asked}"
                );
            }
        }
    }
}

#[test]
fn the_demo_suite_runs_every_reference_and_each_returns_rows() {
    let sb = Sandbox::new();
    let suite: toml::Table =
        toml::from_str(&std::fs::read_to_string("fixtures/eval/demo.toml").unwrap()).unwrap();
    let cases = suite["case"].as_array().unwrap();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let tagged = |t: &str| {
        cases
            .iter()
            .filter(|c| {
                c.get("tags")
                    .and_then(|v| v.as_array())
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(t)))
            })
            .count()
    };
    let follow_ups = cases.iter().filter(|c| c.get("turns").is_some()).count();
    assert!(follow_ups >= 10, "{follow_ups} follow-ups");
    assert!(
        tagged("notes") >= 10,
        "{} cases need the notes",
        tagged("notes")
    );
    for c in cases {
        let tags = c["tags"].as_array().unwrap();
        assert!(
            tags.iter()
                .any(|t| matches!(t.as_str(), Some("easy" | "medium" | "hard"))),
            "{c:?} has no difficulty"
        );
    }
    // A model that answers every last turn with the case's own reference
    // SQL (earlier turns with anything): every case must pass, so every
    // reference ran through the gate on the demo shop.
    let mut by_question: HashMap<String, String> = HashMap::new();
    for c in cases {
        let last = match c.get("turns") {
            Some(t) => t
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .to_string(),
            None => c["question"].as_str().unwrap().to_string(),
        };
        by_question.insert(last, c["sql"].as_str().unwrap().to_string());
    }
    let server = ModelServer::start(Vec::new());
    server.answer_by_question(move |q| {
        Some(sql(by_question
            .get(q)
            .map(String::as_str)
            .unwrap_or("SELECT 1")))
    });
    let out = sb
        .std_aiq_with(&server, "openai")
        .args(["demo", "--eval"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr_of(&out));
    assert!(
        text.contains(&format!("{n} of {n} cases pass (100.0%)", n = cases.len())),
        "{text}"
    );
    // Every reference returned rows.
    let report = sb.home().join("demo").join("eval.toml");
    assert!(report.is_file());
    // `aiq demo --eval` takes `aiq eval`'s flags: -o writes JSON by its
    // extension, --jobs, and -f.
    let written = sb.path().join("demo-report.json");
    let out = sb
        .std_aiq_with(&server, "openai")
        .args(["demo", "--eval", "--jobs", "2", "-o"])
        .arg(&written)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("report written to"),
        "{}",
        stdout_of(&out)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    let out = sb
        .std_aiq_with(&server, "openai")
        .args(["demo", "--eval", "-f", "csv", "--tags", "easy"])
        .output()
        .unwrap();
    assert!(
        stdout_of(&out).starts_with("id,verdict,"),
        "{}",
        stdout_of(&out)
    );
    let out = sb.aiq().args(["demo", "--jobs", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("--jobs"), "{}", stderr_of(&out));
    // A reference that rounds an average has a question that asks for it:
    // an unrounded answer is not wrong otherwise.
    for c in cases {
        let sql = c["sql"].as_str().unwrap().to_lowercase();
        let asked = c.get("turns").map_or_else(
            || c["question"].as_str().unwrap().to_lowercase(),
            |t| t.to_string().to_lowercase(),
        );
        if sql.contains("round(avg") || (sql.contains("round(sum") && sql.contains("/ count(*)")) {
            assert!(
                ["round", "decimal", "cents"]
                    .iter()
                    .any(|w| asked.contains(w)),
                "{asked}: {sql}"
            );
        }
    }
    for c in json["cases"].as_array().unwrap() {
        assert!(c["expected_rows"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(c["verdict"], "pass", "{c}");
    }
    // The demo's notes were written for the model, once.
    let notes = sb.home().join("notes").join("demo.md");
    assert!(std::fs::read_to_string(notes).unwrap().contains("revenue"));
}

/// A tie at the reference's LIMIT: the model's rows are an equally valid
/// answer and pass, saying why; rows that really differ name the row, not
/// a column that matches. A case whose reference SQL fails is a broken
/// case (the model is not asked) and the run exits non-zero. The table
/// lists what did not pass last, after the summary.
#[test]
fn ties_at_the_limit_truthful_reasons_and_broken_cases() {
    let sb = Sandbox::new();
    let db = sb.path().join("prices.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE products (name TEXT, price REAL);
         INSERT INTO products VALUES ('anvil', 90), ('bell', 80), ('cart', 70), ('drum', 70), ('easel', 70), ('fan', 10);",
    )
    .unwrap();
    drop(conn);
    let suite = sb.path().join("suite.toml");
    std::fs::write(
        &suite,
        r#"
[[case]]
id = "tie"
question = "The three priciest products"
sql = "SELECT name, price FROM products ORDER BY price DESC LIMIT 3"

[[case]]
id = "wrong"
question = "The two priciest products"
sql = "SELECT name, price FROM products ORDER BY price DESC LIMIT 2"

[[case]]
id = "bad-reference"
question = "Products per colour"
sql = "SELECT colour, count(*) FROM products GROUP BY colour"
"#,
    )
    .unwrap();
    let server = model(&[
        // 'easel' ties with 'cart' at the cut: as valid an answer.
        (
            "The three priciest products",
            sql("SELECT name, price FROM products ORDER BY price DESC, name DESC LIMIT 3"),
        ),
        // 'cart' is not among the two priciest.
        (
            "The two priciest products",
            sql("SELECT name, price FROM products WHERE name IN ('anvil', 'cart')"),
        ),
    ]);
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .args(["-f", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("1 case(s) of")
            && stderr_of(&out).contains("are broken, their reference SQL failed: bad-reference"),
        "{}",
        stderr_of(&out)
    );
    let report: Value = serde_json::from_str(&stdout_of(&out)).unwrap();
    let v = verdicts(&report);
    assert_eq!(v["tie"].0, "pass", "{:?}", v["tie"]);
    assert!(
        v["tie"].1.contains("only within a tie at its LIMIT"),
        "{:?}",
        v["tie"]
    );
    assert_eq!(v["wrong"].0, "fail");
    assert!(
        v["wrong"]
            .1
            .contains("1 of 2 rows differ, e.g. expected (bell, 80")
            && v["wrong"].1.contains("(cart, 70")
            && !v["wrong"].1.contains("no column matches"),
        "{:?}",
        v["wrong"]
    );
    assert_eq!(v["bad-reference"].0, "broken", "{:?}", v["bad-reference"]);
    assert!(
        v["bad-reference"].1.contains("colour"),
        "{:?}",
        v["bad-reference"]
    );
    assert_eq!(report["summary"]["broken"], 1);
    assert_eq!(report["summary"]["accuracy"], 0.5);
    // The model was never asked the broken case's question.
    assert!(server
        .chats()
        .iter()
        .all(|c| !c.raw.contains("Products per colour")));
    // The table: passes, the summary, then what did not pass.
    let out = sb
        .std_aiq_with(&server, "openai")
        .arg("eval")
        .arg(&suite)
        .arg(&db)
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let summary = text
        .find("1 of 2 cases pass")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        text.contains("1 broken (the reference SQL failed; not counted)"),
        "{text}"
    );
    assert!(text.find("pass    tie").unwrap() < summary, "{text}");
    let listed = text
        .find("not passing (2):")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        summary < listed && listed < text.find("fail    wrong").unwrap(),
        "{text}"
    );
    assert!(
        listed < text.find("broken  bad-reference").unwrap(),
        "{text}"
    );
}
