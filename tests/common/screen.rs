//! A program in a pseudo-terminal, its screen read back through a terminal
//! emulator (vt100): what a person would see, escape sequences applied.

use std::io::ErrorKind;
use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use expectrl::session::OsSession;

use super::llm::ModelServer;
use super::{pty, Sandbox};

/// The program in a pseudo-terminal and what its screen shows.
pub struct Screen {
    pub p: OsSession,
    pub vt: vt100::Parser,
    /// Read but not yet shown: what came after the text a wait stopped at.
    pending: Vec<u8>,
}

impl Screen {
    /// `aiq ARGS` talking to `server`, on an 80×24 xterm.
    pub fn start(sb: &Sandbox, server: &ModelServer, args: &[&str]) -> Screen {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        Screen::of(pty(sb, &args, Some(server), "xterm-256color"))
    }

    /// Any program already running in a pseudo-terminal.
    pub fn of(p: OsSession) -> Screen {
        Screen {
            p,
            vt: vt100::Parser::new(
                NonZeroU16::new(24).unwrap(),
                NonZeroU16::new(80).unwrap(),
                0,
            ),
            pending: Vec::new(),
        }
    }

    /// Takes what the program wrote so far.
    pub fn pump(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.vt.process(&pending);
        let mut buf = [0u8; 16384];
        loop {
            match self.p.try_read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.vt.process(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => return,
            }
        }
    }

    pub fn text(&self) -> String {
        self.vt.screen().contents()
    }

    /// Takes what the program wrote until the screen shows `text` (true)
    /// or nothing more is there to read (false), looking before each
    /// carriage return: a line drawn and erased again within what arrived
    /// at once (a test thread that got no CPU for a while) is still seen.
    fn pump_until(&mut self, text: &str) -> bool {
        let mut buf = [0u8; 4096];
        loop {
            let mut bytes = std::mem::take(&mut self.pending);
            if bytes.is_empty() {
                match self.p.try_read(&mut buf) {
                    Ok(n) if n > 0 => bytes.extend_from_slice(&buf[..n]),
                    _ => return false,
                }
            }
            // Looked at before every carriage return: a status line is
            // redrawn (and at last erased) after one.
            let mut at = 0;
            while at < bytes.len() {
                let end = bytes[at..]
                    .iter()
                    .position(|&b| b == b'\r')
                    .map_or(bytes.len(), |i| at + i);
                self.vt.process(&bytes[at..end]);
                at = end;
                if self.text().contains(text) {
                    self.pending = bytes[at..].to_vec();
                    return true;
                }
                if at < bytes.len() {
                    self.vt.process(b"\r");
                    at += 1;
                }
            }
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.text().contains(text) || self.pump_until(text) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {text:?}; the screen shows:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn send(&mut self, keys: &str) {
        use std::io::Write;
        self.p.write_all(keys.as_bytes()).unwrap();
        self.p.flush().unwrap();
        // Let the view take one key sequence at a time.
        std::thread::sleep(Duration::from_millis(60));
    }

    pub fn exit_code(&self) -> String {
        format!("{:?}", self.p.get_process().wait().unwrap())
    }
}
