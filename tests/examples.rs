//! `aiq examples` (SPEC §14): verified examples added, listed, imported,
//! removed and checked from the shell; what `--as-sent` shows of them; and
//! several processes adding at once keep every one.

mod common;

use common::{stderr_of, stdout_of, Sandbox};

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.aiq().args(args).output().unwrap()
}

/// `aiq examples add SOURCE --question QUESTION --sql SQL`.
fn add(sb: &Sandbox, source: &str, question: &str, sql: &str) -> std::process::Output {
    run(
        sb,
        &[
            "examples",
            "add",
            source,
            "--question",
            question,
            "--sql",
            sql,
        ],
    )
}

#[test]
fn add_list_rm_import_and_check() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db = db.to_str().unwrap();
    let out = run(
        &sb,
        &[
            "examples",
            "add",
            db,
            "--question",
            "Customers per country",
            "--sql",
            "SELECT country, count(*) FROM customers GROUP BY country",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).starts_with("kept as example 1 in "),
        "{}",
        stdout_of(&out)
    );
    // SQL that does not run here, or writes, is not kept.
    for (sql, code, says) in [
        ("SELECT nope FROM customers", 1, "nope"),
        ("DELETE FROM customers", 1, "DELETE"),
    ] {
        let out = run(
            &sb,
            &["examples", "add", db, "--question", "q", "--sql", sql],
        );
        assert_eq!(out.status.code(), Some(code), "{sql}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(says), "{sql}: {}", stderr_of(&out));
    }
    // The same question again replaces its SQL.
    let out = run(
        &sb,
        &[
            "examples",
            "add",
            db,
            "--question",
            "customers per country?",
            "--sql",
            "SELECT country, count(*) AS n FROM customers GROUP BY 1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let list = stdout_of(&run(&sb, &["examples", "list", db]));
    assert_eq!(list.matches("ountry").count(), 2, "{list}");
    assert!(list.contains("AS n FROM customers GROUP BY 1"), "{list}");

    // Import: a CSV, and a suite whose follow-ups are left out.
    let csv = sb.path().join("pairs.csv");
    std::fs::write(
        &csv,
        "question,sql\nOrders per status,\"SELECT status, count(*) FROM orders GROUP BY status\"\nBroken one,SELECT x FROM nowhere\n",
    )
    .unwrap();
    let out = run(&sb, &["examples", "import", db, csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.contains("skipped: Broken one"), "{text}");
    assert!(text.contains("imported 1 example(s)"), "{text}");
    let suite = sb.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[case]]\nquestion = \"Total of all orders\"\nsql = \"SELECT sum(total) FROM orders\"\n\
         [[case]]\nturns = [\"Orders\", \"only big ones\"]\nsql = \"SELECT id FROM orders WHERE total > 50\"\n",
    )
    .unwrap();
    let out = run(&sb, &["examples", "import", db, suite.to_str().unwrap()]);
    let text = stdout_of(&out);
    assert!(
        text.contains("imported 1 example(s)") && text.contains("1 follow-up(s) left out"),
        "{text}"
    );
    let list = stdout_of(&run(&sb, &["examples", "list", db]));
    assert!(
        list.contains("   3  ") && list.contains("Total of all orders"),
        "{list}"
    );

    // rm, and rm of what is not there.
    let out = run(&sb, &["examples", "rm", db, "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let out = run(&sb, &["examples", "rm", db, "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("no example 2"),
        "{}",
        stderr_of(&out)
    );

    // check: all work; then the schema changes and one breaks.
    let out = run(&sb, &["examples", "check", db]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("2 of 2 example(s) work"),
        "{}",
        stdout_of(&out)
    );
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch("ALTER TABLE orders RENAME COLUMN total TO amount")
        .unwrap();
    let out = run(&sb, &["examples", "check", db]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    assert!(
        text.contains("no longer works: 3: Total of all orders"),
        "{text}"
    );
    assert!(text.contains("1 of 2 example(s) work"), "{text}");
}

#[test]
fn as_sent_shows_the_examples_of_a_question_and_never_a_hidden_tables() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db = db.to_str().unwrap();
    for (q, sql) in [
        ("Revenue per country", "SELECT c.country, sum(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1"),
        ("Number of VIP customers", "SELECT count(*) FROM customers WHERE vip"),
    ] {
        let out = run(&sb, &["examples", "add", db, "--question", q, "--sql", sql]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    }
    let out = run(
        &sb,
        &[
            "schema",
            db,
            "--as-sent",
            "--question",
            "revenue by country please",
        ],
    );
    let text = stdout_of(&out);
    assert!(
        text.contains("Q: Revenue per country\nSQL: SELECT c.country, sum(o.total)"),
        "{text}"
    );
    assert!(!text.contains("VIP customers"), "{text}");
    assert!(
        text.contains("-- verified examples: 1 of 2 stored sent with this question"),
        "{text}"
    );
    let out = run(&sb, &["schema", db, "--as-sent"]);
    assert!(
        stdout_of(&out).contains("-- verified examples: 2 stored"),
        "{}",
        stdout_of(&out)
    );
    // With orders hidden, the example that reads it is never sent.
    let out = sb
        .aiq()
        .args([
            "--tables",
            "customers",
            "schema",
            db,
            "--as-sent",
            "--question",
            "revenue by country please",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        !text.contains("sum(o.total)") && !text.contains("orders o"),
        "{text}"
    );
}

#[test]
fn processes_adding_at_once_keep_every_example() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let children: Vec<_> = (0..8)
        .map(|i| {
            sb.std_aiq()
                .args(["examples", "add"])
                .arg(&db)
                .args([
                    "--question",
                    &format!("question number {i}"),
                    "--sql",
                    &format!("SELECT {i} AS n"),
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    }
    let list = stdout_of(&run(&sb, &["examples", "list", db.to_str().unwrap()]));
    for i in 0..8 {
        assert!(list.contains(&format!("question number {i}")), "{list}");
    }
    let ids: std::collections::HashSet<&str> = list
        .lines()
        .filter(|l| l.contains("question number"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ids.len(), 8, "{list}");
}

/// A line of the examples file someone edited by hand and aiq cannot read
/// is never deleted: adding and removing examples writes it back where it
/// was.
#[test]
fn a_hand_edited_line_is_kept_through_adds_and_removes() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db = db.to_str().unwrap();
    let add = |q: &str, sql: &str| {
        let out = run(&sb, &["examples", "add", db, "--question", q, "--sql", sql]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        stdout_of(&out)
    };
    let said = add(
        "Customers per country",
        "SELECT country, count(*) FROM customers GROUP BY country",
    );
    let file = std::path::PathBuf::from(said.trim().rsplit(" in ").next().unwrap());
    let mut text = std::fs::read_to_string(&file).unwrap();
    let hand = "{\"question\": \"VIP customers\", \"sql\": \"SELECT * FROM customers WHERE vip\"  # my note, not JSON";
    text.push_str(hand);
    text.push('\n');
    std::fs::write(&file, &text).unwrap();
    add("How many orders", "SELECT count(*) FROM orders");
    let out = run(&sb, &["examples", "rm", db, "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.contains(hand), "{after}");
    assert!(
        after.contains("How many orders") && !after.contains("Customers per country"),
        "{after}"
    );
}

/// An examples file with a line that is not UTF-8 and blank lines stays
/// usable: `list` shows the examples and says a line is not one, `add`
/// and `rm` write every other line back byte for byte where it was, and
/// `rm` of an id two examples share is refused, the file untouched.
#[test]
fn a_line_that_is_not_utf8_and_blank_lines_are_kept_byte_for_byte() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let db = db.to_str().unwrap();
    let out = add(&sb, db, "Customers", "SELECT count(*) FROM customers");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let file = std::path::PathBuf::from(stdout_of(&out).trim().rsplit(" in ").next().unwrap());
    let mut bytes = std::fs::read(&file).unwrap();
    let hand: &[u8] = b"\n   \n# caf\xe9 (Latin-1, not UTF-8)\r\n\n";
    bytes.extend_from_slice(hand);
    std::fs::write(&file, &bytes).unwrap();
    let out = run(&sb, &["examples", "list", db]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("Customers"));
    assert!(
        stderr_of(&out).contains("1 line(s) are not examples"),
        "{}",
        stderr_of(&out)
    );
    let out = add(&sb, db, "Orders", "SELECT count(*) FROM orders");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let after = std::fs::read(&file).unwrap();
    assert!(
        after.starts_with(&bytes),
        "{}",
        String::from_utf8_lossy(&after)
    );
    // The first example removed: the hand-written lines (the first of
    // them blank) are where they were, now at the file's start.
    let out = run(&sb, &["examples", "rm", db, "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let after = std::fs::read(&file).unwrap();
    assert!(
        after.starts_with(hand),
        "{}",
        String::from_utf8_lossy(&after)
    );
    // Two examples with one id: not guessed between.
    let mut twice = after.clone();
    twice.extend_from_slice(br#"{"id":"2","question":"Orders again","sql":"SELECT 2"}"#);
    twice.push(b'\n');
    std::fs::write(&file, &twice).unwrap();
    let out = run(&sb, &["examples", "rm", db, "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("2 examples have id 2"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), twice);
}
