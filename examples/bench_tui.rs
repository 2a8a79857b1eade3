//! Benchmark: the full-screen view, drawn into ratatui's `TestBackend`.
//!
//! ```text
//! cargo run --release --example bench_tui        # add --no-default-features with the prebuilt DuckDB
//! ```
//!
//! 1. Time to first frame (goal < 50 ms): open a SQLite source of 8 tables
//!    and introspect it, assemble the conversation (a stub model: no
//!    network), start its worker thread, build the view's state and draw
//!    the first frame at 120×40 — median of 30 starts.
//! 2. Frame time while scrolling a 10,000-row × 20-column result (goal
//!    < 5 ms per frame): each frame is one key (Down, PgDn, Right, Left,
//!    End, Home, …) through `App::update` and a full `Terminal::draw`, at
//!    120×40 and at 80×24 — median, 99th percentile and worst of 2,000.
//! 3. Taking in a 1,000,000-row result (the grid keeps the first 10,000
//!    and counts the rest): the time `App::update` spends on the rows'
//!    events (making the rows is not counted).

use std::path::Path;
use std::time::{Duration, Instant};

use aiq::agent::{
    Conversation, ConversationOptions, Event, Keep, Opened, SourceOpener, Thread, ThreadOptions,
};
use aiq::frontend::channel::Worker;
use aiq::frontend::tui::{view, App, Msg};
use aiq::llm::{CancelToken, ChatModel, ChatRequest, LlmError, StreamEvent};
use aiq::render::Format;
use aiq::source::{self, Column, OpenOptions, SourceSpec, Value};
use chrono::NaiveDate;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// A model that is never asked.
struct Stub;

impl ChatModel for Stub {
    fn provider(&self) -> &str {
        "openai"
    }
    fn model(&self) -> &str {
        "bench-model"
    }
    fn check(&self) -> Result<String, LlmError> {
        Ok("stub".into())
    }
    fn chat(
        &self,
        _: ChatRequest<'_>,
        _: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        on_event(StreamEvent::Done);
        Ok(())
    }
}

struct NoOpener;

impl SourceOpener for NoOpener {
    fn open(&self, name: &str, _ask: aiq::source::PasswordAsk) -> Result<Opened, String> {
        Err(format!("cannot open {name}"))
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn build_source(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let c = rusqlite::Connection::open(path)?;
    for t in 0..8 {
        c.execute_batch(&format!(
            "CREATE TABLE t{t} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, status TEXT, amount REAL, created_at TEXT);
             INSERT INTO t{t} (name, status, amount, created_at) VALUES ('a', 'open', 1.5, '2024-01-01'), ('b', 'closed', 2.5, '2024-02-01');"
        ))?;
    }
    Ok(())
}

/// Source opened and introspected, conversation on its worker, state, first frame.
fn first_frame(db: &Path, home: &Path) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let src = source::open(
        &SourceSpec::Sqlite(db.to_path_buf()),
        OpenOptions::default(),
    )?;
    let catalog = src.introspect()?;
    let thread = Thread::new(Box::new(Stub), src, catalog, ThreadOptions::default());
    let options = ConversationOptions {
        home: home.to_path_buf(),
        format: Format::Table,
        stale_after_hours: 12,
        opener: Box::new(NoOpener),
    };
    let conversation = Conversation::new(
        thread,
        "bench.db".into(),
        "bench.db".into(),
        Keep::NewSession,
        options,
    );
    let status = conversation.status();
    let worker = Worker::spawn(conversation)?;
    let app = App::new(status, Vec::new(), &[], Instant::now(), (120, 40));
    let mut terminal = Terminal::new(TestBackend::new(120, 40))?;
    terminal.draw(|f| view(&app, f))?;
    let took = started.elapsed();
    drop(worker.leave());
    Ok(took)
}

fn row(i: usize) -> Vec<Value> {
    let day = NaiveDate::from_ymd_opt(2024, 1, 1)
        .and_then(|d| d.checked_add_days(chrono::Days::new((i % 365) as u64)));
    (0..20)
        .map(|c| match c % 5 {
            0 => Value::Int(i as i64 * 7 + c as i64),
            1 => Value::Text(format!("customer {i} of column {c}")),
            2 => Value::Float(i as f64 / 3.0),
            3 => day.map(Value::Date).unwrap_or(Value::Null),
            _ if i.is_multiple_of(7) => Value::Null,
            _ => Value::Decimal(format!("{}.{:02}", i % 1000, i % 100)),
        })
        .collect()
}

/// A view holding a finished result of `rows` rows × 20 columns.
fn with_result(size: (u16, u16), rows: usize) -> (App, Duration) {
    let mut app = App::new(bench_status(), Vec::new(), &[], Instant::now(), size);
    let columns = (0..20)
        .map(|c| Column::new(format!("column_{c}"), "TEXT"))
        .collect();
    app.update(Msg::Core(Event::QueryStarted {
        sql: "SELECT * FROM wide".into(),
    }));
    app.update(Msg::Core(Event::Columns(columns)));
    // Only the view's work counts, not making the rows.
    let mut took = Duration::ZERO;
    let mut i = 0;
    while i < rows {
        let batch: Vec<Vec<Value>> = (i..(i + 256).min(rows)).map(row).collect();
        i += batch.len();
        let started = Instant::now();
        app.update(Msg::Core(Event::Rows(batch.into())));
        took += started.elapsed();
    }
    app.update(Msg::Core(Event::QueryFinished {
        rows: rows as u64,
        elapsed: Duration::from_millis(120),
        changed: false,
        more: false,
    }));
    (app, took)
}

fn bench_status() -> aiq::agent::Status {
    aiq::agent::Status {
        source: "bench.db".into(),
        engine: "sqlite",
        tables: 8,
        provider: "openai".into(),
        model: "bench-model".into(),
        mode: aiq::agent::Mode::Sql,
        format: Format::Table,
        session: None,
    }
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Frame times while scrolling the grid at `size`.
fn scrolling(size: (u16, u16)) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let (mut app, _) = with_result(size, 10_000);
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    let mut terminal = Terminal::new(TestBackend::new(size.0, size.1))?;
    terminal.draw(|f| view(&app, f))?;
    let keys = [
        KeyCode::Down,
        KeyCode::PageDown,
        KeyCode::PageDown,
        KeyCode::Right,
        KeyCode::Down,
        KeyCode::PageDown,
        KeyCode::Right,
        KeyCode::Left,
        KeyCode::PageUp,
        KeyCode::End,
        KeyCode::Up,
        KeyCode::Home,
    ];
    let mut times = Vec::with_capacity(2000);
    for n in 0..2000 {
        let started = Instant::now();
        app.update(key(keys[n % keys.len()]));
        terminal.draw(|f| view(&app, f))?;
        times.push(started.elapsed());
    }
    Ok(times)
}

/// The binary's allocator (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("bench.db");
    build_source(&db)?;
    let starts = (0..30)
        .map(|_| first_frame(&db, dir.path()))
        .collect::<Result<Vec<_>, _>>()?;
    println!("time to first frame (open + introspect 8 tables, worker, state, draw 120x40), median of 30: {:.2?}", median(starts));

    for size in [(120, 40), (80, 24)] {
        let times = scrolling(size)?;
        let worst = times.iter().max().copied().unwrap_or_default();
        println!(
            "frame while scrolling 10,000 x 20 at {}x{}: median {:.2?}, p99 {:.2?}, worst {:.2?} (2,000 frames)",
            size.0,
            size.1,
            median(times.clone()),
            percentile(times, 0.99),
            worst
        );
    }
    let (app, took) = with_result((120, 40), 1_000_000);
    let mut terminal = Terminal::new(TestBackend::new(120, 40))?;
    terminal.draw(|f| view(&app, f))?;
    println!("taking in 1,000,000 rows x 20 columns (10,000 kept, the rest counted), the view's share: {took:.2?}");
    Ok(())
}
