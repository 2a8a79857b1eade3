//! Charts from the command line (SPEC §10): `--chart [KIND]` draws the
//! result on stdout instead of the table, with `-e` and with `-q` against
//! the scripted model server; `--chart-out FILE` writes an SVG or PNG
//! (title from the question); a result that cannot be charted exits 1 with
//! one line; flags that cannot work are usage errors.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::llm::{ModelServer, Reply};
use common::{stderr_of, stdout_of, Sandbox};

const PER_COUNTRY: &str =
    "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC, country";
const PER_MONTH: &str = "SELECT strftime('%Y-%m', ordered_at) AS month, round(sum(total), 2) AS revenue FROM orders WHERE status = 'delivered' GROUP BY month ORDER BY month";

fn fenced(sql: &str) -> Reply {
    Reply::Text(format!("Here you go:\n```sql\n{sql}\n```\n"))
}

/// `aiq DB ARGS` in the sandbox, with `env` set.
fn aiq(sb: &Sandbox, db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = sb.aiq();
    cmd.arg(db).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The demo shop, written by `aiq demo` into the sandbox's home.
fn demo_shop(sb: &Sandbox) -> PathBuf {
    let out = sb.aiq().arg("demo").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    sb.home().join("demo").join("shop.db")
}

#[test]
fn dash_e_with_chart_draws_a_bar_chart_instead_of_the_table() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = aiq(
        &sb,
        &db,
        &["-e", PER_COUNTRY, "--chart"],
        &[("LANG", "C.UTF-8")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stderr_of(&out), "");
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "n by country");
    assert_eq!(lines[1], "bar · n by country");
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[2].starts_with("DE │████"), "{text}");
    assert!(lines[2].ends_with(" 2"), "{text}");
    assert!(lines[4].starts_with("FR │████"), "{text}");
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    // No CSV: the chart replaced the table.
    assert!(!text.contains("country,n"));
}

#[test]
fn a_lua_script_charts_the_table_it_shows() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let dir = db.parent().unwrap();
    let script = dir.join("per_country.lua");
    std::fs::write(
        &script,
        format!("aiq.table(aiq.query([[{PER_COUNTRY}]]))\n"),
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let out = aiq(
        &sb,
        &db,
        &["--lua", script, "--chart"],
        &[("LANG", "C.UTF-8")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "bar · n by country", "{text}");
    assert!(lines[2].starts_with("DE │████"), "{text}");
    assert!(!text.contains("country,n"), "{text}");
    // The image too; a script that shows no table has nothing to chart.
    let png = dir.join("per_country.png");
    let out = aiq(
        &sb,
        &db,
        &["--lua", script, "--chart-out", png.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(stdout_of(&out).starts_with("country,n\n"));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let quiet = dir.join("quiet.lua");
    std::fs::write(&quiet, "print('hello')\n").unwrap();
    let out = aiq(
        &sb,
        &db,
        &["--lua", quiet.to_str().unwrap(), "--chart"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert_eq!(
        stderr_of(&out),
        "aiq: the statement returned no result to chart\n"
    );
}

#[test]
fn a_kind_by_name_ascii_when_the_locale_is_not_utf8_and_the_width_is_80() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = aiq(
        &sb,
        &db,
        &["-e", "SELECT total FROM orders", "--chart", "histogram"],
        &[("LC_ALL", "C")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.is_ascii(), "{text}");
    assert!(
        text.starts_with("distribution of total\nhist - rows per total bin\n"),
        "{text}"
    );
    assert!(text.contains("|#"), "{text}");
    assert!(text.contains("note: 6 values in "), "{text}");
    assert_eq!(text.lines().map(str::len).max(), Some(80), "{text}");
}

#[test]
fn a_result_that_cannot_be_charted_exits_1_with_one_line() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = aiq(
        &sb,
        &db,
        &["-e", "SELECT name, country FROM customers", "--chart"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr_of(&out),
        "aiq: cannot chart this result: it has no number column (a chart needs a count, a sum or another number)\n"
    );
    let out = aiq(
        &sb,
        &db,
        &["-e", "SELECT name FROM customers WHERE 0", "--chart", "bar"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "aiq: cannot chart this result: the result has no rows\n"
    );
    let out = aiq(
        &sb,
        &db,
        &[
            "-e",
            "SELECT country, count(*) AS n FROM customers GROUP BY 1",
            "--chart",
            "scatter",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "aiq: cannot chart this result: a scatter chart needs two number columns\n"
    );
}

#[test]
fn chart_out_writes_an_image_and_the_table_still_goes_to_stdout() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let png = sb.path().join("per-country.png");
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", PER_COUNTRY, "--chart-out"])
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // Not a terminal: CSV, as without --chart-out.
    assert_eq!(stdout_of(&out), "country,n\nDE,2\nUS,2\nFR,1\n");
    assert_eq!(
        stderr_of(&out),
        format!("Chart written to {} (PNG 1200×675, bar)\n", png.display())
    );
    let (w, h, colours) = png_facts(&png);
    assert_eq!((w, h), (1200, 675));
    assert!(colours > 10, "{colours}");
    // --chart and --chart-out together: the chart on stdout and the image.
    let svg = sb.path().join("per-country.svg");
    let out = sb
        .aiq()
        .arg(&db)
        .args(["-e", PER_COUNTRY, "--chart", "--chart-out"])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout_of(&out).starts_with("n by country\n"));
    let text = std::fs::read_to_string(&svg).unwrap();
    roxmltree::Document::parse(&text).unwrap();
}

/// Width, height and the number of distinct colours of a PNG file.
fn png_facts(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let colours: std::collections::HashSet<&[u8]> = pixels.chunks(3).collect();
    (info.width, info.height, colours.len())
}

#[test]
fn flags_that_cannot_work_are_usage_errors() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let out = aiq(&sb, &db, &["-e", "SELECT 1", "--chart-out", "x.jpg"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("give a file name ending in .svg or .png"),
        "{}",
        stderr_of(&out)
    );
    let out = sb
        .aiq()
        .args(["--chart", "pie"])
        .arg(&db)
        .args(["-e", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("unknown chart kind 'pie'"));
    // --tui and the chat chart with /chart.
    let out = aiq(&sb, &db, &["--tui", "--chart"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "aiq: --chart and --chart-out draw the result of -q, -e or --lua; in the chat or the view, type /chart\n"
    );
    // A file that cannot be written: the query ran, the chart failed.
    let out = aiq(
        &sb,
        &db,
        &["-e", PER_COUNTRY, "--chart-out", "no/such/dir/c.png"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).starts_with("aiq: cannot write no/such/dir/c.png: "));
}

#[test]
fn revenue_per_month_from_the_demo_shop_is_a_line_chart_and_an_image_titled_by_the_question() {
    let sb = Sandbox::new();
    let shop = demo_shop(&sb);
    let server = ModelServer::start(vec![fenced(PER_MONTH), fenced(PER_MONTH)]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&shop)
        .args(["-q", "revenue per month", "--chart"])
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "revenue per month");
    assert_eq!(lines[1], "line · revenue by month");
    // 16 rows of plot: braille dots, the axis, the first and last month.
    assert_eq!(lines.len(), 18, "{text}");
    assert!(
        text.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
        "{text}"
    );
    assert!(
        lines[17].starts_with("2023-01") && lines[17].ends_with("2025-12"),
        "{text}"
    );
    assert!(lines[16].contains("└──"), "{text}");

    let svg = sb.path().join("revenue.svg");
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&shop)
        .args(["-q", "revenue per month", "--chart-out"])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let doc_text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    assert!(texts.contains(&"revenue per month"), "{texts:?}");
    assert!(texts.contains(&"2024-01"), "{texts:?}");
    // One line with a point per month (36 months), and no legend for one series.
    let lines: Vec<usize> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#1F77B4"))
        .map(|n| n.attribute("points").unwrap().split_whitespace().count())
        .collect();
    assert_eq!(lines, [36]);
}

#[test]
fn words_instead_of_a_result_exit_1_and_print_nothing() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![Reply::Text("There is nothing to count.".into())]);
    let out = sb
        .aiq_with(&server, "openai")
        .arg(&db)
        .args(["-q", "chart the weather", "--chart"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr_of(&out),
        "aiq: the model answered in words, not SQL: There is nothing to count.\n"
    );
}

#[test]
fn a_big_result_is_reduced_and_says_so() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) SELECT i AS step, (i * 7919) % 1000 AS v FROM n";
    let out = aiq(&sb, &db, &["-e", sql, "--chart", "line"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.contains("note: 300,000 points downsampled to 1,000 per line (LTTB keeps the shape)"),
        "{text}"
    );
    let out = aiq(
        &sb,
        &db,
        &["-e", &sql.replace("300000", "600000"), "--chart", "line"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.contains("note: drawn from every 2nd row of 600,000 (too many to keep them all)"),
        "{text}"
    );
}

/// `/chart` in the chat (a pseudo-terminal): before any result, after a
/// question (the chart on the terminal, a kind by name), to a file, and
/// what cannot work.
#[cfg(unix)]
#[test]
fn slash_chart_in_the_chat() {
    use expectrl::Expect;
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let server = ModelServer::start(vec![fenced(PER_COUNTRY)]);
    let mut cmd = sb.std_aiq_with(&server, "openai");
    cmd.arg(&db).env("TERM", "dumb").env("LANG", "C.UTF-8");
    let mut p = expectrl::Session::spawn(cmd).unwrap();
    p.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/chart").unwrap();
    p.expect("aiq: there is no result to chart yet: ask a question or run /sql first")
        .unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("how many customers per country?").unwrap();
    p.expect("│ DE      ┆ 2 │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/chart bar").unwrap();
    p.expect("how many customers per country?\r\nbar · n by country\r\nDE │")
        .unwrap();
    p.expect("FR │").unwrap();
    p.expect("aiq[shop.db]> ").unwrap();
    p.send_line("/chart hist > counts.svg").unwrap();
    p.expect("Chart written to counts.svg (SVG 1200×675, hist)")
        .unwrap();
    p.send_line("/chart pie").unwrap();
    p.expect("aiq: unknown /chart argument 'pie' (/chart [bar|line|scatter|hist] [x=COL] [y=COL,…] [> FILE.svg|png])")
        .unwrap();
    p.send_line("/chart x=month").unwrap();
    p.expect("aiq: cannot chart this result: no column named month (the result has country, n)")
        .unwrap();
    p.send_line("/exit").unwrap();
    p.expect("to continue.").unwrap();
    let svg = std::fs::read_to_string(sb.path().join("counts.svg")).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
}
