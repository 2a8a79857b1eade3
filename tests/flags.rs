//! No flag is accepted and then ignored (SPEC §2.3): every subcommand is
//! walked with the flags it cannot use, each must be a usage error naming
//! the flag (exit 2); the flags it does use keep working.

mod common;

use common::{stderr_of, stdout_of, Sandbox};

/// Each subcommand as a user would type it, with arguments that would
/// otherwise succeed or fail for their own reasons.
const SUBCOMMANDS: &[&[&str]] = &[
    &["sessions"],
    &["sources", "list"],
    &["schema", "demo"],
    &["config", "path"],
    &["completions", "bash"],
    &["doctor", "demo"],
    &["notes", "show", "demo"],
    &["logs"],
    &["mcp", "demo"],
    &["demo"],
];

/// Flags of the main command, given before a subcommand.
const MAIN_FLAGS: &[(&[&str], &str)] = &[
    (&["-q", "how many?"], "--question"),
    (&["-e", "SELECT 1"], "--execute"),
    (&["--lua", "x.lua"], "--lua"),
    (&["-f", "csv"], "--format"),
    (&["--max-rows", "3"], "--max-rows"),
    (&["--allow-write"], "--allow-write"),
    (&["--yes"], "--yes"),
    (&["--chart", "bar"], "--chart"),
    (&["--mode", "lua"], "--mode"),
    (&["--sql-only"], "--sql-only"),
    (&["--show-sql"], "--show-sql"),
    (&["--history-limit", "3"], "--history-limit"),
    (&["--model", "m"], "--model"),
    (&["--tui"], "--tui"),
];

#[test]
fn main_flags_before_a_subcommand_are_refused_by_name() {
    let sb = Sandbox::new();
    for sub in SUBCOMMANDS {
        for (flag, name) in MAIN_FLAGS {
            let out = sb.aiq().args(*flag).args(*sub).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{flag:?} {sub:?}: {}",
                stderr_of(&out)
            );
            assert!(
                stderr_of(&out).contains(name),
                "{flag:?} {sub:?}: {}",
                stderr_of(&out)
            );
        }
    }
}

#[test]
fn tables_is_refused_where_nothing_reads_it() {
    let sb = Sandbox::new();
    for sub in [
        &["sessions"][..],
        &["sources", "list"],
        &["config", "path"],
        &["completions", "bash"],
        &["notes", "show", "x"],
        &["logs"],
    ] {
        for flag in [["--tables", "orders"], ["--name", "orders"]] {
            let out = sb.aiq().args(sub).args(flag).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{sub:?}: {}", stderr_of(&out));
            assert!(
                stderr_of(&out).contains(flag[0]),
                "{sub:?}: {}",
                stderr_of(&out)
            );
        }
    }
    // Where it is read, it works.
    sb.aiq().arg("demo").assert().success();
    let out = sb
        .aiq()
        .args(["schema", "demo", "--tables", "orders"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("table orders"));
    assert!(!stdout_of(&out).contains("table customers"));
}

#[test]
fn the_demo_runs_what_every_source_runs_and_refuses_what_its_guide_drops() {
    let sb = Sandbox::new();
    let script = sb.path().join("count.lua");
    std::fs::write(
        &script,
        "aiq.table(aiq.query('SELECT count(*) AS n FROM customers WHERE 0'))",
    )
    .unwrap();
    // --lua runs the script on the demo shop.
    sb.aiq()
        .args(["demo", "--lua", script.to_str().unwrap(), "-f", "csv"])
        .assert()
        .success()
        .stdout("n\n0\n");
    // -e with -f as on any source.
    sb.aiq()
        .args(["demo", "-e", "SELECT 1 AS one", "-f", "json"])
        .assert()
        .success()
        .stdout("[\n{\"one\":1}\n]\n");
    // Without anything to run, the guide: -f and the like would be dropped.
    for flag in [
        &["-f", "csv"][..],
        &["--max-rows", "2"],
        &["--mode", "lua"],
        &["--sql-only"],
    ] {
        let out = sb.aiq().arg("demo").args(flag).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {}", stderr_of(&out));
        assert!(stdout_of(&out).is_empty());
    }
    sb.aiq().arg("demo").assert().success();
}
