//! Results that read well in a terminal (SPEC §2.3, "Tables in a
//! terminal"): on an 80-column pseudo-terminal a wide result shows the
//! columns that fit beside a `…` column and says how many it shows, one
//! wide row is a record, `-f expanded` and `/format expanded` print
//! records, long values are cut for people but never in CSV or JSON, and a
//! result taller than the screen goes through the pager — never in a pipe,
//! never with `--no-pager` or `[output] pager = false`.

#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::llm::ModelServer;
use common::screen::Screen;
use common::{pty, stdout_of, Sandbox};
use expectrl::Expect;

/// A long note: 130 characters, more than a cell shows.
const NOTE: &str = "prefers email; asked about the spring catalogue, a discount on the next order and whether the shop ships to the Faroe Islands";

/// `people.db`: a table of 16 columns and 8 rows.
fn wide_db(sb: &Sandbox) -> PathBuf {
    let path = sb.path().join("people.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, email TEXT, country TEXT,
           city TEXT, signup_date TEXT, vip INTEGER, orders INTEGER, total_spent REAL,
           average_order_value REAL, last_order_at TEXT, status TEXT, phone TEXT,
           referral_code TEXT, notes TEXT, updated_at TEXT);",
    )
    .unwrap();
    let names = [
        "Ada Lovelace",
        "Grace Hopper",
        "Alan Turing",
        "Edsger Dijkstra",
    ];
    for i in 0..8 {
        let name = names[i % 4];
        conn.execute(
            "INSERT INTO people VALUES (?1, ?2, ?3, 'GB', 'London', '2024-01-15', ?4, 7,
               1234.5, 56.25, '2025-03-01 14:00:00', 'active', '+44 20 7946 0000',
               'REF-01000', ?5, '2025-06-01 09:30:00')",
            rusqlite::params![
                i as i64 + 1,
                name,
                format!("{}@example.com", name.to_lowercase().replace(' ', ".")),
                (i % 2) as i64,
                NOTE
            ],
        )
        .unwrap();
    }
    path
}

const TWO_HUNDRED: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) SELECT i, 'row ' || i AS label FROM n";

/// `aiq ARGS` on an 80×24 pseudo-terminal with `PAGER` recording what it
/// is given into `record` (and `AIQ_PAGER` unset), run until the screen
/// shows `until` and it ends; the screen it showed.
fn on_terminal_with_pager(sb: &Sandbox, record: &Path, args: &[&str], until: &str) -> String {
    let mut cmd = sb.std_aiq();
    cmd.args(args)
        .env("TERM", "dumb")
        .env_remove("AIQ_PAGER")
        .env("PAGER", format!("cat > '{}'", record.display()));
    let p = expectrl::Session::spawn(cmd).expect("spawn aiq in a pty");
    let mut screen = Screen::of(p);
    screen.wait_for(until);
    let status = format!("{:?}", screen.p.get_process().wait().unwrap());
    screen.pump();
    assert!(status.contains(", 0)"), "{status}\n{}", screen.text());
    screen.text()
}

#[test]
fn a_wide_result_shows_the_columns_that_fit_and_says_so() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let args = [
        db.as_os_str(),
        "-e".as_ref(),
        "SELECT * FROM people".as_ref(),
    ];
    let mut p = pty(&sb, &args, None, "dumb");
    // The first and last columns that fit at a readable width, `…` between.
    p.expect("│ id ┆ name         ┆ email        ┆ country ┆ … ┆ notes        ┆ updated_at   │")
        .unwrap();
    // Each row on one line, values cut to their column.
    p.expect("│  1 ┆ Ada Lovelace ┆ ada.lovelac… ┆ GB      ┆ … ┆ prefers ema… ┆ 2025-06-01 … │")
        .unwrap();
    // The footer: rows, columns shown, time; then how to see them all.
    p.expect("8 rows · 16 columns (6 shown) · ").unwrap();
    p.expect("all columns: -f expanded, -f csv, or a wider terminal")
        .unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 0)"), "{status}");
}

#[test]
fn one_wide_row_is_shown_as_a_record() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let args = [
        db.as_os_str(),
        "-e".as_ref(),
        "SELECT * FROM people WHERE id = 2".as_ref(),
    ];
    let mut p = pty(&sb, &args, None, "dumb");
    p.expect("─[ row 1 ]───").unwrap();
    p.expect("name                │ Grace Hopper").unwrap();
    p.expect("average_order_value │ 56.25").unwrap();
    p.expect("updated_at          │ 2025-06-01 09:30:00")
        .unwrap();
    p.expect("1 row · ").unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 0)"), "{status}");
}

#[test]
fn expanded_prints_every_row_as_a_record() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let out = sb
        .aiq()
        .arg(&db)
        .args([
            "-e",
            "SELECT id, name, vip FROM people WHERE id <= 2",
            "-f",
            "expanded",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let expected = "\
─[ row 1 ]──────────
id   │ 1
name │ Ada Lovelace
vip  │ 0
─[ row 2 ]──────────
id   │ 2
name │ Grace Hopper
vip  │ 1
";
    assert_eq!(stdout_of(&out), expected);
}

#[test]
fn long_values_are_cut_for_people_but_never_in_csv_or_json() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let run = |format: &str| {
        let out = sb
            .aiq()
            .arg(&db)
            .args(["-e", "SELECT notes FROM people WHERE id = 1", "-f", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        stdout_of(&out)
    };
    let cut: String = NOTE.chars().take(99).collect();
    let table = run("table");
    assert!(table.contains(&format!("{cut}…")), "{table}");
    assert!(!table.contains(NOTE), "{table}");
    let markdown = run("markdown");
    assert_eq!(markdown, format!("| notes |\n| --- |\n| {cut}… |\n"));
    assert_eq!(run("csv"), format!("notes\n\"{NOTE}\"\n"));
    assert!(run("json").contains(&format!("\"{NOTE}\"")));
    assert_eq!(run("tsv"), format!("notes\n{NOTE}\n"));
}

#[test]
fn a_result_taller_than_the_screen_goes_through_the_pager() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let record = sb.path().join("paged.txt");
    let screen = on_terminal_with_pager(
        &sb,
        &record,
        &[db.to_str().unwrap(), "-e", TWO_HUNDRED],
        "rows shown · ",
    );
    let paged = std::fs::read_to_string(&record).expect("the pager was started");
    assert!(
        paged.starts_with("╭─────┬─────────╮\n│   i ┆ label   │\n"),
        "{paged}"
    );
    assert!(paged.contains("│  57 ┆ row 57  │\n"), "{paged}");
    assert!(
        paged.ends_with("╯\n… 100 more rows (use --max-rows to show more)\n"),
        "{paged}"
    );
    // The terminal showed only what came after: the footer.
    assert!(!screen.contains("row 57"), "{screen}");
    assert!(screen.contains("100 of 200 rows shown · "), "{screen}");
}

#[test]
fn a_short_result_is_not_paged() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let record = sb.path().join("paged.txt");
    let screen = on_terminal_with_pager(
        &sb,
        &record,
        &[
            db.to_str().unwrap(),
            "-e",
            "SELECT id, city FROM people LIMIT 3",
        ],
        "3 rows · ",
    );
    assert!(!record.exists(), "{screen}");
    assert!(screen.contains("│  3 ┆ London │"), "{screen}");
}

#[test]
fn no_pager_flag_and_config_turn_the_pager_off() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let record = sb.path().join("paged.txt");
    let db = db.to_str().unwrap();
    let screen = on_terminal_with_pager(
        &sb,
        &record,
        &[db, "--no-pager", "-e", TWO_HUNDRED],
        "rows shown · ",
    );
    assert!(!record.exists(), "{screen}");
    assert!(screen.contains("… 100 more rows"), "{screen}");
    sb.write_config("[output]\npager = false\n");
    let screen = on_terminal_with_pager(&sb, &record, &[db, "-e", TWO_HUNDRED], "rows shown · ");
    assert!(!record.exists(), "{screen}");
    assert!(screen.contains("… 100 more rows"), "{screen}");
}

#[test]
fn never_a_pager_when_stdout_is_not_a_terminal() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let record = sb.path().join("paged.txt");
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", TWO_HUNDRED, "-f", "table"])
        .env_remove("AIQ_PAGER")
        .env("PAGER", format!("cat > '{}'", record.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!record.exists());
    assert!(stdout_of(&out).contains("│  57 ┆ row 57  │"));
}

#[test]
fn the_chat_shows_records_after_format_expanded_and_says_how_to_see_all_columns() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let server = ModelServer::start(vec![]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap()]);
    s.wait_for("aiq[");
    s.send("/sql SELECT * FROM people\r");
    s.wait_for("8 rows · 16 columns (6 shown)");
    s.wait_for("all columns: /format expanded, /format csv, /schema TABLE, or a wider terminal");
    s.send("/format expanded\r");
    s.wait_for("Output format: expanded");
    s.send("/sql SELECT id, name FROM people WHERE id = 3\r");
    s.wait_for("─[ row 1 ]");
    s.wait_for("name │ Alan Turing");
    s.send("/exit\r");
}

#[test]
fn lua_tables_fit_the_terminal_too() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let script = sb.path().join("wide.lua");
    std::fs::write(
        &script,
        "local rows = aiq.query(\"SELECT * FROM people\")\naiq.table(rows)\n",
    )
    .unwrap();
    let args = [db.as_os_str(), "--lua".as_ref(), script.as_os_str()];
    let mut p = pty(&sb, &args, None, "dumb");
    p.expect("┆ … ┆ notes        ┆ updated_at   │").unwrap();
    let status = format!("{:?}", p.get_process().wait().unwrap());
    assert!(status.contains(", 0)"), "{status}");
}

/// A pager that scrolls sideways (`less -S`) gets the whole table, every
/// column at its full width, as psql gives it: Right arrow shows the rest.
#[test]
fn a_wide_result_goes_to_a_sideways_pager_whole() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let record = sb.path().join("paged.txt");
    let pager = sb.script("less", &format!("cat > '{}'", record.display()));
    let mut cmd = sb.std_aiq();
    cmd.arg(&db)
        .args(["-e", "SELECT * FROM people"])
        .env("TERM", "dumb")
        .env("AIQ_PAGER", format!("{} -S", pager.display()));
    let p = expectrl::Session::spawn(cmd).expect("spawn aiq in a pty");
    let mut screen = Screen::of(p);
    screen.wait_for("8 rows · ");
    let paged = std::fs::read_to_string(&record).expect("the pager was started");
    let header = paged.lines().nth(1).unwrap_or("");
    for column in ["│ id ", "average_order_value", "city", "updated_at"] {
        assert!(header.contains(column), "{column}: {paged}");
    }
    assert!(!header.contains("┆ … ┆"), "{paged}");
    assert!(
        paged.contains("Ada Lovelace") && paged.contains("ada.lovelace@"),
        "{paged}"
    );
    assert!(!screen.text().contains("(6 shown)"), "{}", screen.text());
    // A pager that wraps lines instead gets the table cut to the screen.
    let mut cmd = sb.std_aiq();
    cmd.arg(&db)
        .args(["-e", "SELECT * FROM people"])
        .env("TERM", "dumb")
        .env("AIQ_PAGER", pager.display().to_string());
    let p = expectrl::Session::spawn(cmd).expect("spawn aiq in a pty");
    let mut screen = Screen::of(p);
    screen.wait_for("8 rows · 16 columns (6 shown)");
}

/// The chat's "more rows" line names the chat's way to show more, and
/// `/maxrows` does it.
#[test]
fn the_chat_says_maxrows_and_it_shows_more() {
    let sb = Sandbox::new();
    let db = wide_db(&sb);
    let server = ModelServer::start(vec![]);
    let mut s = Screen::start(&sb, &server, &[db.to_str().unwrap()]);
    s.wait_for("aiq[");
    s.send(&format!("/sql {TWO_HUNDRED}\r"));
    s.wait_for("… 100 more rows (/maxrows N shows more)");
    s.send("/maxrows 150\r");
    s.wait_for("Results show at most 150 rows from now on");
    s.send(&format!("/sql {TWO_HUNDRED}\r"));
    s.wait_for("… 50 more rows (/maxrows N shows more)");
    s.send("/maxrows lots\r");
    s.wait_for("/maxrows takes a number of rows, 1 or more, or all");
    s.send("/exit\r");
}
