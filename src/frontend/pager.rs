//! The pager (SPEC §2.3): on a terminal, a result taller or wider than the
//! screen goes through `$AIQ_PAGER`, else `$PAGER`, else `less -SRFX` when
//! it is installed (`-S` keeps each row on one line, to scroll sideways).
//! [`Paging`] holds a result's text until its renderer flushes (a drawn
//! table is whole then), decides, and writes it to the terminal or to the
//! pager. Only front ends that write to a terminal use it — never a pipe,
//! never the full-screen view (its grid scrolls).

use std::io::{self, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

use unicode_width::UnicodeWidthStr;

/// The pager when neither `$AIQ_PAGER` nor `$PAGER` names one.
pub const DEFAULT_PAGER: &str = "less -SRFX";

/// Held text beyond this size is decided on at once.
const MAX_HELD: usize = 1 << 20;

/// The terminal's size in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    pub width: u16,
    pub height: u16,
}

/// Whether `text` is taller than the screen (a line kept for the footer
/// or the prompt below it) or has a line wider than the screen.
pub fn overflows(text: &str, screen: Screen) -> bool {
    let mut lines = 0usize;
    for line in text.lines() {
        lines += 1;
        if visible_width(line) > usize::from(screen.width) {
            return true;
        }
    }
    lines + 1 > usize::from(screen.height)
}

/// The cells `line` takes on a terminal, colour escapes left out.
fn visible_width(line: &str) -> usize {
    if !line.contains('\x1b') {
        return line.width();
    }
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            plain.push(c);
            continue;
        }
        // CSI: ESC [ parameters… final byte in @..~
        if chars.next() == Some('[') {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    plain.width()
}

/// The pager command: `$AIQ_PAGER`, else `$PAGER` (set but empty, or
/// `cat`: none), else [`DEFAULT_PAGER`] when `less` is on the `PATH` and
/// the terminal can run it (not `TERM=dumb`).
pub fn command(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    for name in ["AIQ_PAGER", "PAGER"] {
        if let Some(value) = env(name) {
            let value = value.trim();
            return (!value.is_empty() && value != "cat").then(|| value.to_string());
        }
    }
    if env("TERM").as_deref() == Some("dumb") {
        return None;
    }
    let path = env("PATH")?;
    let found = std::env::split_paths(&path).any(|dir| dir.join("less").is_file());
    found.then(|| DEFAULT_PAGER.to_string())
}

/// Whether the pager `command` keeps long lines whole to scroll sideways
/// (`less -S`, or `less` with `S` in `$LESS`), so a wide table can go to
/// it at full width.
pub fn scrolls_sideways(command: &str, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or("");
    let flags: Vec<&str> = words.collect();
    let chops = |f: &&str| {
        *f == "--chop-long-lines" || (f.starts_with('-') && !f.starts_with("--") && f.contains('S'))
    };
    if flags.iter().any(chops) {
        return true;
    }
    program.rsplit('/').next() == Some("less")
        && env("LESS").is_some_and(|l| {
            l.split_whitespace()
                .any(|f| chops(&f) || (!f.starts_with('-') && f.contains('S')))
        })
}

/// Starts `command` with its stdin piped and its output on the terminal.
fn spawn(command: &str) -> io::Result<(Child, ChildStdin)> {
    let mut cmd = if cfg!(unix) {
        let mut c = Command::new("sh");
        c.arg("-c").arg(command);
        c
    } else {
        let mut words = command.split_whitespace();
        let mut c = Command::new(words.next().unwrap_or("more"));
        c.args(words);
        c
    };
    let mut child = cmd.stdin(Stdio::piped()).spawn()?;
    match child.stdin.take() {
        Some(stdin) => Ok((child, stdin)),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(io::Error::other("the pager has no input"))
        }
    }
}

enum State {
    /// Nothing decided yet: the text so far.
    Holding(Vec<u8>),
    /// Straight to the terminal.
    Direct,
    /// Into the pager.
    Piped(Child, ChildStdin),
    /// The pager was quit: the rest is dropped.
    Quit(Child),
}

/// A result's output on a terminal: to the terminal when it fits the
/// screen, else through the pager. Dropping it waits for the pager.
pub struct Paging<W: Write> {
    out: W,
    screen: Screen,
    command: Option<String>,
    state: State,
}

impl<W: Write> Paging<W> {
    /// Output to `out` (the terminal) on `screen`, paged with `command`.
    pub fn new(out: W, screen: Screen, command: Option<String>) -> Self {
        Paging {
            out,
            screen,
            command,
            state: State::Holding(Vec::new()),
        }
    }

    /// Writes what is held to the terminal or, when it does not fit the
    /// screen, to the pager.
    fn decide(&mut self) -> io::Result<()> {
        let State::Holding(held) = &mut self.state else {
            return Ok(());
        };
        let held = std::mem::take(held);
        let text = String::from_utf8_lossy(&held);
        let pager = match &self.command {
            Some(command) if overflows(&text, self.screen) => {
                // What came before the result stays above it.
                self.out.flush()?;
                spawn(command).ok()
            }
            _ => None,
        };
        match pager {
            Some((child, mut stdin)) => match stdin.write_all(&held) {
                Ok(()) => self.state = State::Piped(child, stdin),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => self.state = State::Quit(child),
                Err(e) => {
                    self.state = State::Piped(child, stdin);
                    return Err(e);
                }
            },
            None => {
                self.state = State::Direct;
                self.out.write_all(&held)?;
            }
        }
        Ok(())
    }
}

impl<W: Write> Write for Paging<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.state {
            State::Holding(held) => {
                held.extend_from_slice(buf);
                if held.len() > MAX_HELD {
                    self.decide()?;
                }
                Ok(buf.len())
            }
            State::Direct => self.out.write(buf),
            State::Piped(_, stdin) => match stdin.write_all(buf) {
                Ok(()) => Ok(buf.len()),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    self.quit();
                    Ok(buf.len())
                }
                Err(e) => Err(e),
            },
            State::Quit(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.decide()?;
        match &mut self.state {
            State::Direct => self.out.flush(),
            State::Piped(_, stdin) => match stdin.flush() {
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    self.quit();
                    Ok(())
                }
                other => other,
            },
            State::Holding(_) | State::Quit(_) => Ok(()),
        }
    }
}

impl<W: Write> Paging<W> {
    /// The pager was quit before the result ended.
    fn quit(&mut self) {
        let state = std::mem::replace(&mut self.state, State::Direct);
        self.state = match state {
            State::Piped(child, stdin) => {
                drop(stdin);
                State::Quit(child)
            }
            other => other,
        };
    }
}

impl<W: Write> Drop for Paging<W> {
    fn drop(&mut self) {
        let _ = self.decide();
        match std::mem::replace(&mut self.state, State::Direct) {
            State::Piped(mut child, stdin) => {
                // The pager sees the end of its input and stays until quit.
                drop(stdin);
                let _ = child.wait();
            }
            State::Quit(mut child) => {
                let _ = child.wait();
            }
            State::Holding(_) | State::Direct => {
                let _ = self.out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Screen = Screen {
        width: 20,
        height: 5,
    };

    #[test]
    fn what_overflows_the_screen() {
        assert!(!overflows("a\nb\nc\nd\n", SCREEN));
        assert!(overflows("a\nb\nc\nd\ne\n", SCREEN));
        assert!(overflows(&format!("{}\n", "x".repeat(21)), SCREEN));
        assert!(!overflows(&format!("{}\n", "x".repeat(20)), SCREEN));
        // Colour takes no room.
        assert!(!overflows(
            &format!("\x1b[1m{}\x1b[0m\n", "x".repeat(20)),
            SCREEN
        ));
    }

    #[test]
    fn which_pager() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let both = env(&[("AIQ_PAGER", "most"), ("PAGER", "more")]);
        assert_eq!(command(&both).as_deref(), Some("most"));
        let pager = env(&[("PAGER", "more -d")]);
        assert_eq!(command(&pager).as_deref(), Some("more -d"));
        let empty = env(&[("AIQ_PAGER", ""), ("PAGER", "more")]);
        assert_eq!(command(&empty), None);
        let cat = env(&[("PAGER", "cat")]);
        assert_eq!(command(&cat), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_string_lossy().into_owned();
        let no_less = move |k: &str| (k == "PATH").then(|| path.clone());
        assert_eq!(command(&no_less), None);
        std::fs::write(dir.path().join("less"), "").unwrap();
        let path = dir.path().to_string_lossy().into_owned();
        let with_less = move |k: &str| (k == "PATH").then(|| path.clone());
        assert_eq!(command(&with_less).as_deref(), Some(DEFAULT_PAGER));
        let path = dir.path().to_string_lossy().into_owned();
        let dumb = move |k: &str| match k {
            "PATH" => Some(path.clone()),
            "TERM" => Some("dumb".to_string()),
            _ => None,
        };
        assert_eq!(command(&dumb), None);
    }

    #[test]
    fn text_that_fits_goes_straight_out() {
        let mut out = Vec::new();
        {
            let mut p = Paging::new(&mut out, SCREEN, Some("false".into()));
            p.write_all(b"a\nb\n").unwrap();
            p.flush().unwrap();
            p.write_all(b"c\n").unwrap();
        }
        assert_eq!(out, b"a\nb\nc\n");
    }

    #[cfg(unix)]
    #[test]
    fn text_taller_than_the_screen_goes_to_the_pager() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        let command = format!("cat > '{}'", seen.display());
        let mut out = Vec::new();
        {
            let mut p = Paging::new(&mut out, SCREEN, Some(command));
            p.write_all(b"1\n2\n3\n4\n5\n6\n").unwrap();
            p.flush().unwrap();
            p.write_all(b"more\n").unwrap();
        }
        assert_eq!(out, b"");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "1\n2\n3\n4\n5\n6\nmore\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_pager_quit_early_is_no_error() {
        let mut out = Vec::new();
        let mut p = Paging::new(&mut out, SCREEN, Some("true".into()));
        let big = "line\n".repeat(100_000);
        p.write_all(big.as_bytes()).unwrap();
        p.flush().unwrap();
        p.write_all(big.as_bytes()).unwrap();
        p.flush().unwrap();
        drop(p);
        assert_eq!(out, b"");
    }
}
