//! Benchmark of the Lua sandbox (docs/performance.md), in-process:
//!
//! 1. sandbox start to first statement: from calling `lua::run` (fresh
//!    state, libraries, prelude, host functions, limits) to the statement
//!    runner's `QueryStarted` of the program's first `aiq.query` (goal:
//!    < 5 ms), median and 95th percentile of 200 runs;
//! 2. `aiq.query` returning 100,000 rows × 6 columns into Lua — the call,
//!    from the host call to its result (gate, statement, every row a Lua
//!    table), and the whole run (state created and closed too) — against
//!    the same statement through the same runner into the CSV renderer
//!    (what `-e … -f csv` does), medians of 9 (goal: < 2× the CSV export).
//!
//! ```text
//! cargo run --release --example bench_lua
//! ```
//!
//! `benches/run.sh` also compares the two as whole processes.

use std::io;
use std::time::{Duration, Instant};

use aiq::agent::runner::run_statement;
use aiq::agent::{Event, EventSink};
use aiq::cancel::CancelToken;
use aiq::config::LuaConfig;
use aiq::lua::{self, Program, RunEnv};
use aiq::render::{self, Format, RenderOptions, Renderer};
use aiq::safety::Policy;
use aiq::source::{self, OpenOptions, SourceSpec};

/// Notes when the first statement starts; renders results as CSV into
/// nothing.
struct Clock {
    first_statement: Option<Instant>,
    /// From the program's host call to its result.
    call: (Option<Instant>, Option<Instant>),
    csv: Option<Box<dyn Renderer>>,
}

impl EventSink for Clock {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::QueryStarted { .. } if self.first_statement.is_none() => {
                self.first_statement = Some(Instant::now());
            }
            Event::ToolCall { .. } => self.call.0 = Some(Instant::now()),
            Event::ToolResult { .. } => self.call.1 = Some(Instant::now()),
            Event::Columns(c) => {
                let mut r = render::renderer(
                    Format::Csv,
                    Box::new(io::sink()),
                    RenderOptions {
                        max_rows: None,
                        color: false,
                        width: None,
                        count_budget: None,
                        full_width: false,
                        in_chat: false,
                    },
                );
                r.columns(&c)?;
                self.csv = Some(r);
            }
            Event::Rows(rows) => {
                if let Some(r) = self.csv.as_mut() {
                    rows.send_to(r.as_mut())?;
                }
            }
            Event::QueryFinished { .. } => {
                if let Some(mut r) = self.csv.take() {
                    r.finish()?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn clock() -> Clock {
    Clock {
        first_statement: None,
        call: (None, None),
        csv: None,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("rows.db");
    let conn = rusqlite::Connection::open(&db)?;
    conn.execute_batch(
        "CREATE TABLE events (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount REAL NOT NULL,
                              country TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
         INSERT INTO events
         SELECT i, 'customer-' || (i % 9973), round((i % 100000) / 7.0, 2),
                substr('USDEGBFRNLSEESITCAJP', 1 + 2 * (i % 10), 2),
                datetime(1700000000 + i * 37, 'unixepoch'),
                CASE WHEN i % 5 = 0 THEN NULL ELSE 'note, with \"quotes\" ' || i END
         FROM n;",
    )?;
    drop(conn);
    let src = source::open(&SourceSpec::Sqlite(db), OpenOptions::default())?;
    let catalog = src.introspect()?;
    let limits = LuaConfig {
        memory_mb: 256,
        ..LuaConfig::default()
    };
    let run = |code: &str, sink: &mut Clock| {
        lua::run(
            &Program {
                code,
                name: "bench",
            },
            RunEnv {
                source: src.as_ref(),
                catalog: &catalog,
                policy: Policy::default(),
                cancel: &CancelToken::new(),
                sink,
                limits: &limits,
                workdir: dir.path(),
                audit: None,
                last_in_process: false,
            },
        )
    };

    let mut starts = Vec::new();
    for _ in 0..200 {
        let mut sink = clock();
        let began = Instant::now();
        run("aiq.query('SELECT 1 AS x')", &mut sink).map_err(|e| e.to_string())?;
        starts.push(sink.first_statement.ok_or("no statement ran")? - began);
    }
    starts.sort();
    println!(
        "sandbox start to first statement: median {:.2} ms, p95 {:.2} ms (200 runs; goal < 5 ms)",
        ms(starts[starts.len() / 2]),
        ms(starts[starts.len() * 95 / 100])
    );

    let sql = "SELECT * FROM events";
    let program = format!("local rows = aiq.query('{sql}') assert(#rows == 100000)");
    let (mut calls, mut into_lua, mut to_csv) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        let mut sink = clock();
        let t = Instant::now();
        run(&program, &mut sink).map_err(|e| e.to_string())?;
        into_lua.push(t.elapsed());
        if let (Some(a), Some(b)) = sink.call {
            calls.push(b - a);
        }
        let t = Instant::now();
        let ran = run_statement(
            src.as_ref(),
            sql,
            Policy::default(),
            &CancelToken::new(),
            &mut clock(),
        )
        .map_err(|e| format!("{e:?}"))?;
        to_csv.push(t.elapsed());
        assert_eq!(ran.stats.rows, 100_000);
    }
    calls.sort();
    into_lua.sort();
    to_csv.sort();
    let (q, l, c) = (calls[calls.len() / 2], into_lua[4], to_csv[4]);
    println!(
        "100,000 rows × 6 columns: aiq.query {:.0} ms ({:.2}× CSV; goal < 2×), whole run {:.0} ms ({:.2}×), to CSV {:.0} ms (medians of 9)",
        ms(q),
        q.as_secs_f64() / c.as_secs_f64(),
        ms(l),
        l.as_secs_f64() / c.as_secs_f64(),
        ms(c),
    );
    Ok(())
}
