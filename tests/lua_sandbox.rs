//! The hostile Lua corpus (`tests/lua/hostile/*.lua`): every program runs in
//! the sandbox of this very process against the shop database and must end
//! with the error its `-- expect:` line names — with the database byte for
//! byte as it was, nothing written in the working directory, and the next
//! (healthy) run in the same process working. A `-- limits: key=value` line
//! changes a limit for one program.

mod common;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use aiq::agent::{Event, EventSink};
use aiq::cancel::CancelToken;
use aiq::config::LuaConfig;
use aiq::lua::{self, AuditInfo, LuaFailure, Origin, Program, RunEnv};
use aiq::safety::Policy;
use aiq::source::{self, DataSource, OpenOptions, SourceSpec};
use common::Sandbox;

/// Records what a run showed; says no to confirmations.
#[derive(Default)]
struct Seen {
    output: String,
    events: usize,
}

impl EventSink for Seen {
    fn event(&mut self, event: Event) -> io::Result<()> {
        self.events += 1;
        match event {
            Event::Output(text) => self.output.push_str(&text),
            Event::Confirm(c) => c.answer(false),
            _ => {}
        }
        Ok(())
    }
}

/// The corpus limits: short and small, so the whole corpus runs fast.
fn corpus_limits() -> LuaConfig {
    LuaConfig {
        timeout_secs: 1,
        memory_mb: 16,
        max_output_kb: 64,
        max_rows: 1000,
        max_total_rows: 1500,
        max_instructions: u64::MAX,
    }
}

struct World {
    sb: Sandbox,
    db: PathBuf,
    work: PathBuf,
    source: Box<dyn DataSource>,
}

/// The shop, a working directory with a file, a secret next to it and
/// links that lead out.
fn world() -> World {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let work = sb.path().join("work");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("data.txt"), "inside\n").unwrap();
    fs::write(sb.path().join("secret.txt"), "secret\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(sb.path().join("secret.txt"), work.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(sb.path(), work.join("up")).unwrap();
    }
    let source = source::open(&SourceSpec::Sqlite(db.clone()), OpenOptions::default()).unwrap();
    World {
        sb,
        db,
        work,
        source,
    }
}

fn run(
    w: &World,
    name: &str,
    code: &str,
    limits: &LuaConfig,
) -> (Result<lua::RunReport, LuaFailure>, Seen) {
    let catalog = w.source.introspect().unwrap();
    let mut seen = Seen::default();
    let info = AuditInfo {
        home: w.sb.home(),
        session: None,
        source: "shop.db".into(),
        origin: Origin::File,
        file: Some(name.into()),
    };
    let result = lua::run(
        &Program { code, name },
        RunEnv {
            source: w.source.as_ref(),
            catalog: &catalog,
            policy: Policy::new(false),
            cancel: &CancelToken::new(),
            sink: &mut seen,
            limits,
            workdir: &w.work,
            audit: Some(&info),
            last_in_process: false,
        },
    );
    (result, seen)
}

/// `-- expect: …` and `-- limits: key=value` lines.
fn header(code: &str) -> (String, LuaConfig) {
    let mut expect = None;
    let mut limits = corpus_limits();
    for line in code.lines().take_while(|l| l.starts_with("--")) {
        if let Some(e) = line.strip_prefix("-- expect: ") {
            expect = Some(e.trim().to_string());
        }
        if let Some(l) = line.strip_prefix("-- limits: ") {
            for pair in l.split(',') {
                let (k, v) = pair.split_once('=').unwrap();
                let v: u64 = v.trim().parse().unwrap();
                match k.trim() {
                    "max_instructions" => limits.max_instructions = v,
                    "timeout_secs" => limits.timeout_secs = v,
                    other => panic!("unknown limit {other}"),
                }
            }
        }
    }
    (expect.expect("an -- expect: line"), limits)
}

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lua/hostile");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// Every entry under `dir` (links as links, never followed) with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.push((
                    path.clone(),
                    fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

const HEALTHY: &str = "local r = aiq.query('SELECT count(*) AS n FROM orders') print(r[1].n)";

#[test]
fn every_hostile_program_ends_with_its_error_and_changes_nothing() {
    let w = world();
    let programs = corpus();
    assert!(
        programs.len() >= 30,
        "the corpus has {} programs",
        programs.len()
    );
    let db_before = fs::read(&w.db).unwrap();
    let work_before = snapshot(&w.work);
    let mut failures = Vec::new();
    for (name, code) in &programs {
        let (expect, limits) = header(code);
        let started = std::time::Instant::now();
        let (result, seen) = run(&w, name, code, &limits);
        let took = started.elapsed();
        eprintln!(
            "{name}: {took:?} {:?}",
            result.as_ref().err().map(|e| e.to_string())
        );
        match &result {
            Ok(_) => failures.push(format!("{name}: succeeded (output {:?})", seen.output)),
            Err(e) if !e.to_string().contains(&expect) => {
                failures.push(format!("{name}: expected `{expect}`, got `{e}`"))
            }
            Err(_) => {}
        }
        assert!(took.as_secs() < 10, "{name} took {took:?}");
        assert_eq!(
            fs::read(&w.db).unwrap(),
            db_before,
            "{name} changed the database"
        );
        assert_eq!(
            snapshot(&w.work),
            work_before,
            "{name} wrote in the working directory"
        );
        let (next, seen) = run(&w, "healthy.lua", HEALTHY, &corpus_limits());
        assert!(next.is_ok(), "the run after {name} failed: {next:?}");
        assert_eq!(seen.output, "6\n", "the run after {name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(!w.sb.path().join("work/pwned").exists());
    // Every run (hostile and healthy) is in the audit log.
    let logged: usize = fs::read_dir(w.sb.home().join("logs"))
        .unwrap()
        .map(|e| {
            fs::read_to_string(e.unwrap().path())
                .unwrap()
                .lines()
                .count()
        })
        .sum();
    assert_eq!(logged, programs.len() * 2);
}

#[test]
fn limit_errors_name_the_limit_and_the_key_that_raises_it() {
    let w = world();
    let (result, _) = run(
        &w,
        "loop.lua",
        "local x = 0\nwhile true do x = x + 1 end",
        &corpus_limits(),
    );
    let e = result.unwrap_err().to_string();
    assert!(
        e.starts_with("the Lua program hit the time limit of 1 s at line 2 and was stopped (raise [lua] timeout_secs in config.toml"),
        "{e}"
    );
    let (result, _) = run(&w, "rows.lua", "aiq.query(\"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) SELECT x FROM c\")", &corpus_limits());
    assert!(matches!(result, Err(LuaFailure::Limit(m)) if m.contains("max_rows")));
}

#[test]
fn a_write_statement_asked_and_declined_is_a_refusal() {
    let sb = Sandbox::new();
    let db = sb.shop_sqlite();
    let source = source::open(
        &SourceSpec::Sqlite(db.clone()),
        OpenOptions {
            allow_write: true,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let catalog = source.introspect().unwrap();
    let before = fs::read(&db).unwrap();
    let mut seen = Seen::default();
    let result = lua::run(
        &Program {
            code: "aiq.query('DELETE FROM orders')",
            name: "w.lua",
        },
        RunEnv {
            source: source.as_ref(),
            catalog: &catalog,
            policy: Policy::new(true),
            cancel: &CancelToken::new(),
            sink: &mut seen,
            limits: &corpus_limits(),
            workdir: sb.path(),
            audit: None,
            last_in_process: false,
        },
    );
    match result {
        Err(LuaFailure::Refused { message, fixable }) => {
            assert!(
                message.contains("not run: DELETE changes data and was not confirmed"),
                "{message}"
            );
            assert!(!fixable);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fs::read(&db).unwrap(), before);
}
