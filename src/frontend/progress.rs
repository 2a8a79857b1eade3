//! What a terminal shows while aiq waits: a one-line indicator on stderr —
//! a spinner, what is running, the elapsed time, how to cancel — or, while
//! rows are exported to a file, a live count (`1,234,567 rows · 2.1 s ·
//! 48 MB`). A thread redraws it a few times a second; stopping it erases
//! the line, so nothing is left behind. Only ever used when stderr is a
//! terminal; a write that fails is ignored.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(100);
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Rows and bytes written so far, shared with the line that shows them.
#[derive(Debug, Default)]
pub struct Counter {
    rows: AtomicU64,
    bytes: AtomicU64,
}

impl Counter {
    pub fn add_rows(&self, n: u64) {
        self.rows.fetch_add(n, Ordering::Relaxed);
    }

    pub fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// What the line says.
pub enum Shows {
    /// `⠋ SELECT count(*) FROM … · 2.1 s · Ctrl-C cancels`
    Waiting(String),
    /// `1,234,567 rows · 2.1 s · 48 MB`
    Export(Arc<Counter>),
}

/// A line on stderr, redrawn until stopped.
pub struct Indicator {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Indicator {
    /// Starts drawing after `delay` (nothing at all for what ends sooner).
    pub fn start(shows: Shows, delay: Duration, color: bool) -> Indicator {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let started = Instant::now();
        let handle = std::thread::Builder::new()
            .name("aiq-progress".into())
            .spawn(move || {
                let mut drawn = false;
                let mut i = 0usize;
                while !flag.load(Ordering::Relaxed) {
                    let elapsed = started.elapsed();
                    if elapsed >= delay {
                        let text = match &shows {
                            Shows::Waiting(what) => format!(
                                "{} {what} · {} · Ctrl-C cancels",
                                FRAMES[i % FRAMES.len()],
                                duration(elapsed)
                            ),
                            Shows::Export(counter) => export_line(counter, elapsed),
                        };
                        draw(&text, color);
                        drawn = true;
                        i += 1;
                    }
                    // Woken at once by `stop`: ending costs no tick.
                    std::thread::park_timeout(TICK);
                }
                if drawn {
                    erase();
                }
            })
            .ok();
        Indicator { stop, handle }
    }

    /// Stops and erases the line (returns once it is gone).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for Indicator {
    fn drop(&mut self) {
        self.stop();
    }
}

fn draw(text: &str, color: bool) {
    let mut err = io::stderr().lock();
    let _ = if color {
        write!(err, "\r\x1b[2K\x1b[2m{text}\x1b[0m")
    } else {
        write!(err, "\r\x1b[2K{text}")
    };
    let _ = err.flush();
}

fn erase() {
    let mut err = io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K");
    let _ = err.flush();
}

/// `1,234,567 rows · 2.1 s · 48 MB`
pub fn export_line(counter: &Counter, elapsed: Duration) -> String {
    format!(
        "{} · {} · {}",
        rows(counter.rows()),
        duration(elapsed),
        size(counter.bytes())
    )
}

/// `1 row`, `1,234 rows`.
pub fn rows(n: u64) -> String {
    if n == 1 {
        "1 row".into()
    } else {
        format!("{} rows", thousands(n))
    }
}

use crate::render::thousands;

/// A duration for people, the same in every front end: milliseconds
/// under a second, then seconds with one decimal, then minutes and
/// seconds — `35 ms`, `2.1 s`, `1 min 05 s`.
pub fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 59_950 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        // Rounded, so 59.97 s reads `1 min 00 s`, not `0 min 59 s`.
        let s = (ms + 500) / 1000;
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// `980 B`, `48 MB`, `1.2 GB`.
pub fn size(bytes: u64) -> String {
    const K: f64 = 1024.0;
    let b = bytes as f64;
    if b < K {
        format!("{bytes} B")
    } else if b < K * K {
        format!("{:.0} KB", b / K)
    } else if b < K * K * K {
        format!("{:.0} MB", b / (K * K))
    } else {
        format!("{:.1} GB", b / (K * K * K))
    }
}

/// What an indicator calls a statement: its first words, one line.
pub fn first_words(sql: &str) -> String {
    let flat: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 48 {
        flat
    } else {
        let cut: String = flat.chars().take(47).collect();
        format!("{cut}…")
    }
}

/// An indicator while a source is opened and its schema read (a server, a
/// big schema): `connecting to db.internal…`, `opening shop…`. `None` when
/// stderr is not a terminal or with `--quiet`.
pub fn opening(ctx: &crate::context::Context<'_>, source: Option<&str>) -> Option<Indicator> {
    use std::io::IsTerminal;
    if ctx.global.quiet || !io::stderr().is_terminal() {
        return None;
    }
    let name = source
        .map(str::to_string)
        .or_else(|| ctx.config.sources.default.clone())?;
    let what =
        if name.contains("://") && !name.starts_with("sqlite:") && !name.starts_with("duckdb:") {
            format!("connecting to {}…", crate::redact::redact_url(&name))
        } else {
            format!("opening {name}…")
        };
    Some(Indicator::start(
        Shows::Waiting(what),
        Duration::from_millis(250),
        ctx.color_stderr(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(rows(1), "1 row");
        assert_eq!(rows(2_995), "2,995 rows");
        assert_eq!(duration(Duration::from_millis(35)), "35 ms");
        assert_eq!(duration(Duration::from_millis(2_140)), "2.1 s");
        assert_eq!(duration(Duration::from_secs(65)), "1 min 05 s");
        assert_eq!(duration(Duration::from_millis(59_940)), "59.9 s");
        assert_eq!(duration(Duration::from_millis(59_970)), "1 min 00 s");
        assert_eq!(duration(Duration::from_millis(125_400)), "2 min 05 s");
        assert_eq!(size(48 * 1024 * 1024 + 10), "48 MB");
        assert_eq!(size(512), "512 B");
        assert_eq!(
            first_words("SELECT a,\n   b FROM t WHERE x = 1"),
            "SELECT a, b FROM t WHERE x = 1"
        );
        assert!(first_words(&"SELECT ".repeat(20)).ends_with('…'));
    }
}
