//! `aiq SOURCE --lua FILE` as a process: results on stdout in the format
//! asked for, everything else on stderr, the exit codes of SPEC §8 (0, 1
//! for a Lua error or a limit, 2 for a script that cannot be read, 5 for an
//! uncaught refusal), stdin scripts, writes only with `--allow-write` and
//! `--yes`, the `[lua]` limits from config.toml, the audit log and `aiq logs`.

mod common;

use std::fs;

use common::{stderr_of, stdout_of, Sandbox};
use serde_json::Value;

fn script(sb: &Sandbox, name: &str, code: &str) -> std::path::PathBuf {
    let p = sb.path().join(name);
    fs::write(&p, code).unwrap();
    p
}

const REPORT: &str = "local rows = aiq.query('SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY country')
aiq.table(rows)";

#[test]
fn a_script_prints_its_result_in_the_format_asked_for() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let s = script(&sb, "report.lua", REPORT);
    sb.aiq()
        .arg(&db)
        .arg("--lua")
        .arg(&s)
        .args(["-f", "csv"])
        .assert()
        .success()
        .stdout("country,n\nDE,2\nFR,1\nUS,2\n")
        .stderr("");
    sb.aiq()
        .arg(&db)
        .arg("--lua")
        .arg(&s)
        .args(["-f", "jsonl"])
        .assert()
        .success()
        .stdout("{\"country\":\"DE\",\"n\":2}\n{\"country\":\"FR\",\"n\":1}\n{\"country\":\"US\",\"n\":2}\n");
    // From stdin, with print output (part of the result, on stdout).
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-", "-f", "csv"])
        .write_stdin("print('hello', 1 + 1)\nprint({a = 1, list = {1, 2}})")
        .assert()
        .success()
        .stdout("hello\t2\n{a = 1, list = {1, 2}}\n");
}

#[test]
fn exit_codes_follow_the_spec() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let run = |code: &str| {
        let s = script(&sb, "s.lua", code);
        sb.aiq().arg(&db).arg("--lua").arg(&s).output().unwrap()
    };
    let out = run("local x = nil\nprint(x.y)");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "aiq: the Lua program failed: s.lua:2: attempt to index a nil value (local 'x')\n"
    );
    assert_eq!(stdout_of(&out), "");
    let out = run("local x = ");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("syntax error: s.lua:1:"),
        "{}",
        stderr_of(&out)
    );
    let out = run("aiq.query('DELETE FROM orders')");
    assert_eq!(out.status.code(), Some(5));
    assert!(stderr_of(&out).starts_with("aiq: refused: DELETE changes data"));
    let out = run("local ok, e = pcall(aiq.query, 'DELETE FROM orders')\nprint(ok)");
    assert_eq!(
        out.status.code(),
        Some(0),
        "a caught refusal is the script's business"
    );
    assert_eq!(stdout_of(&out), "false\n");
    let out = run("local ok, e = pcall(aiq.query, 'DELETE FROM orders')\nerror('gave up: ' .. e)");
    assert_eq!(
        out.status.code(),
        Some(5),
        "rethrown, it is still a refusal"
    );
    let out = run("aiq.query('SELECT nope FROM orders')");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("s.lua:1: query failed: no such column: nope"));

    let missing = sb
        .aiq()
        .arg(&db)
        .args(["--lua", "nope.lua"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr_of(&missing).contains("cannot read the Lua script nope.lua: no such file"));
    let dir = sb
        .aiq()
        .arg(&db)
        .arg("--lua")
        .arg(sb.path())
        .output()
        .unwrap();
    assert_eq!(dir.status.code(), Some(2), "{}", stderr_of(&dir));
    let binary = sb.path().join("b.lua");
    fs::write(&binary, b"print('\xff\xfe')").unwrap();
    let out = sb
        .aiq()
        .arg(&db)
        .arg("--lua")
        .arg(&binary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("not UTF-8"));
    fs::write(&binary, b"\x1bLuaT\x00\x19\x93\r\n").unwrap();
    let out = sb
        .aiq()
        .arg(&db)
        .arg("--lua")
        .arg(&binary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("precompiled bytecode"));
    let nosource = sb
        .aiq()
        .args(["nope.db", "--lua", "-"])
        .write_stdin("print(1)")
        .output()
        .unwrap();
    assert_eq!(nosource.status.code(), Some(3));
}

#[test]
fn limits_come_from_the_config_and_end_with_exit_1() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.write_config("[lua]\ntimeout_secs = 1\nmax_rows = 2\nmemory_mb = 8\n");
    let run = |code: &str| {
        sb.aiq()
            .arg(&db)
            .args(["--lua", "-"])
            .write_stdin(code.to_string())
            .output()
            .unwrap()
    };
    let out = run("while true do end");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "aiq: the Lua program hit the time limit of 1 s at line 1 and was stopped (raise [lua] timeout_secs in config.toml if it needs more)\n"
    );
    let out = run("aiq.query('SELECT * FROM customers')");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("row limit of 2 rows per query"));
    let out = run("local s = string.rep('x', 100 * 1024 * 1024)");
    assert!(
        stderr_of(&out).contains("memory limit of 8 MB"),
        "{}",
        stderr_of(&out)
    );
    sb.write_config("[lua]\ntimeout_sec = 1\n");
    let out = run("print(1)");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("timeout_sec"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn writes_need_allow_write_and_yes() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let code = "aiq.query('DELETE FROM orders WHERE id = 6')\naiq.write_file('out.txt', 'done\\n')";
    let before = fs::read(&db).unwrap();
    let out = sb
        .aiq()
        .arg(&db)
        .args(["--lua", "-", "--allow-write"])
        .write_stdin(code)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("was not confirmed"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(fs::read(&db).unwrap(), before);
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-", "--allow-write", "--yes"])
        .write_stdin(code)
        .assert()
        .success()
        .stderr("1 row changed\n");
    assert_eq!(
        fs::read_to_string(sb.path().join("out.txt")).unwrap(),
        "done\n"
    );
    sb.aiq()
        .arg(&db)
        .args(["-e", "SELECT count(*) AS n FROM orders", "-f", "csv"])
        .assert()
        .stdout("n\n5\n");
}

#[test]
fn read_file_reads_inside_the_working_directory() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    fs::write(sb.path().join("ids.txt"), "2\n5\n").unwrap();
    let code = "local n = 0
for id in aiq.read_file('ids.txt'):gmatch('%d+') do
  n = n + #aiq.query('SELECT id FROM orders WHERE customer_id = ?', {tonumber(id)})
end
print(n)";
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-"])
        .write_stdin(code)
        .assert()
        .success()
        .stdout("3\n");
}

/// `aiq.read_file` never reads the source's own files (a database file,
/// its journal, a folder's or a glob's data files), aiq's home, or a file
/// that holds a secret by its name — whichever the source, wherever they
/// lie inside the working directory (SPEC §4.3).
#[test]
fn read_file_never_reads_the_source_its_home_or_secrets() {
    let sb = Sandbox::new();
    let sqlite = sb.shop_sqlite();
    let duckdb = sb.shop_duckdb();
    let csv = sb.shop_csv();
    sb.write_config("[llm]\napi_key = \"sk-not-a-real-key-0042\"\n");
    fs::write(sb.path().join("shop.db.bak"), "a copy").unwrap();
    fs::write(sb.path().join(".env"), "TOKEN=sk-not-a-real-key-0042").unwrap();
    fs::write(sb.path().join("ids.txt"), "2").unwrap();
    let glob = format!("{}/cust*.csv", csv.display());
    let sources = [
        sqlite.display().to_string(),
        duckdb.display().to_string(),
        csv.display().to_string(),
        glob,
    ];
    for source in &sources {
        let own: &[&str] = match source.as_str() {
            s if s.ends_with("shop.db") => &["shop.db", "./shop.db", "shop.db.bak"],
            s if s.ends_with(".duckdb") => &["shop.duckdb"],
            s if s.ends_with("*.csv") => &["shop_csv/customers.csv"],
            _ => &["shop_csv/customers.csv", "shop_csv/orders.csv"],
        };
        let mut refused: Vec<(&str, &str)> =
            own.iter().map(|p| (*p, "this source's own data")).collect();
        refused.push(("home/.aiqconfig/config.toml", "refused: "));
        refused.push((".env", "may hold a secret"));
        for (path, why) in refused {
            let code = format!("local ok, e = pcall(aiq.read_file, '{path}')\nprint(ok, e)");
            let out = sb
                .aiq()
                .arg(source)
                .args(["--lua", "-"])
                .write_stdin(code)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                text.starts_with("false\trefused: ") && text.contains(why),
                "{source} {path}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("sk-not-a-real-key"), "{text}");
            assert!(!text.contains("Ann"), "{text}");
        }
        // Other files of the working directory still read.
        let out = sb
            .aiq()
            .arg(source)
            .args(["--lua", "-"])
            .write_stdin("print(aiq.read_file('ids.txt'))")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n", "{source}");
    }
}

#[test]
fn every_run_is_logged_and_aiq_logs_reads_them() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let s = script(&sb, "report.lua", REPORT);
    sb.aiq().arg(&db).arg("--lua").arg(&s).assert().success();
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-"])
        .write_stdin("aiq.log('info', 'checking')\nerror('boom')")
        .assert()
        .code(1);
    let files: Vec<_> = fs::read_dir(sb.home().join("logs")).unwrap().collect();
    assert_eq!(files.len(), 1);
    let path = files[0].as_ref().unwrap().path();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        name,
        format!("{}.jsonl", chrono::Utc::now().format("%Y-%m-%d"))
    );
    let lines: Vec<Value> = fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    assert_eq!(first["mode"], "lua");
    assert_eq!(first["origin"], "file");
    assert_eq!(first["file"], s.display().to_string());
    assert_eq!(first["engine"], "sqlite");
    assert_eq!(first["status"], "ok");
    assert_eq!(first["calls"][0]["function"], "query");
    assert!(first["calls"][0]["ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(first["result"]["rows"], 3);
    assert!(first["duration_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(lines[1]["origin"], "stdin");
    assert_eq!(lines[1]["status"], "error");
    assert_eq!(lines[1]["calls"][0]["function"], "log");
    assert_eq!(lines[1]["calls"][0]["message"], "checking");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    let out = sb.aiq().arg("logs").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout_of(&out);
    let shown: Vec<&str> = text.lines().collect();
    assert_eq!(shown.len(), 2, "{text}");
    assert!(shown[0].contains("  ok        file   "), "{text}");
    assert!(shown[0].contains("report.lua  1 calls  3 rows"), "{text}");
    assert!(
        shown[1].contains("error") && shown[1].contains("boom"),
        "{text}"
    );
    let json = sb
        .aiq()
        .args(["logs", "--json", "--since", "1h"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&json).lines().count(), 2);
    let later = sb
        .aiq()
        .args(["logs", "--since", "2999-01-01"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&later), "");
    assert!(stderr_of(&later).contains("no Lua runs or MCP calls logged"));
    let bad = sb
        .aiq()
        .args(["logs", "--since", "yesterday"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// A log a killed process left with a half-written last line, and a line
/// that is not UTF-8: the next entry starts on a line of its own, and
/// `aiq logs` shows every whole entry and says how many lines it skipped.
#[test]
fn a_cut_or_mangled_log_line_does_not_hide_the_others() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-"])
        .write_stdin("print(1)")
        .assert()
        .success();
    let path = sb
        .home()
        .join("logs")
        .join(format!("{}.jsonl", chrono::Utc::now().format("%Y-%m-%d")));
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(
        b"{\"note\": \"caf\xe9\"}\n{\"time\": \"2026-01-01T00:00:00Z\", \"mode\": \"lu",
    );
    fs::write(&path, &bytes).unwrap();
    sb.aiq()
        .arg(&db)
        .args(["--lua", "-"])
        .write_stdin("print(2)")
        .assert()
        .success();
    let after = fs::read(&path).unwrap();
    let last = after[bytes.len()..].to_vec();
    assert!(
        last.starts_with(b"\n{") && last.ends_with(b"}\n"),
        "{}",
        String::from_utf8_lossy(&last)
    );
    let out = sb.aiq().arg("logs").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out).lines().count(), 2, "{}", stdout_of(&out));
    assert!(
        stderr_of(&out).contains("2 line(s) are not log entries"),
        "{}",
        stderr_of(&out)
    );
}
