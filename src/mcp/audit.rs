//! The audit log of MCP calls: one JSON line per tool call or resource read
//! in `$AIQ_HOME/logs/YYYY-MM-DD.jsonl` (the day in UTC) — when, which tool,
//! which source, the SQL, rows, milliseconds (and those spent waiting in
//! the queue) and the error. Source names
//! only, never URLs, so no password can reach it. A log that cannot be
//! written is reported once on stderr and the server goes on.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::tools::Reply;

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// RFC 3339, UTC.
    pub time: String,
    /// Always `mcp`: what wrote the line (Lua runs share the log).
    pub kind: &'static str,
    /// The tool, or `resources/read`.
    pub tool: String,
    pub source: Option<String>,
    pub sql: Option<String>,
    /// `describe_schema` and `ask`: the question asked.
    pub question: Option<String>,
    /// Rows returned (for a write: rows changed).
    pub rows: Option<u64>,
    /// The whole call, waiting included.
    pub ms: u64,
    /// Of `ms`, the time the call waited in the queue for its turn.
    pub waited_ms: u64,
    pub error: Option<String>,
}

impl Record {
    /// The record of a finished call.
    pub fn of(
        at: DateTime<Utc>,
        tool: &str,
        question: Option<String>,
        reply: &Reply,
        took: Duration,
    ) -> Record {
        Record {
            time: crate::agent::rfc3339(&at),
            kind: "mcp",
            tool: tool.to_string(),
            source: reply.source.clone(),
            sql: reply.sql.clone(),
            question,
            rows: if reply.is_error { None } else { reply.rows },
            ms: took.as_millis() as u64,
            waited_ms: 0,
            error: match (&reply.ask_next_round, reply.is_error) {
                (Some(_), _) => Some("not run yet: the user was asked to confirm it".into()),
                (None, true) => Some(reply.text.clone()),
                (None, false) => None,
            },
        }
    }

    /// The same record, noting how long the call waited in the queue.
    pub fn waited(self, waited: Duration) -> Record {
        Record {
            waited_ms: waited.as_millis() as u64,
            ..self
        }
    }
}

/// Appends records to the day's file under `$AIQ_HOME`.
pub struct AuditLog {
    home: PathBuf,
    warned: AtomicBool,
}

impl AuditLog {
    pub fn new(home: &Path) -> Self {
        AuditLog {
            home: home.to_path_buf(),
            warned: AtomicBool::new(false),
        }
    }

    /// Writes one record (to the file of the day it happened).
    pub fn write(&self, record: &Record, at: DateTime<Utc>) {
        let file = crate::home::log_file(&self.home, at.date_naive());
        let written = serde_json::to_string(record)
            .map_err(std::io::Error::from)
            .and_then(|line| crate::home::logs::append(&file, &line));
        if let Err(e) = written {
            if !self.warned.swap(true, Ordering::SeqCst) {
                crate::error::stderr_line(&format!(
                    "aiq: warning: cannot write the audit log {}: {e}; calls go on unlogged",
                    file.display()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_call_in_the_day_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let log = AuditLog::new(&home);
        let at = DateTime::parse_from_rfc3339("2026-01-26T10:00:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let reply = Reply {
            text: "| n |".into(),
            source: Some("shop".into()),
            sql: Some("SELECT 1 AS n".into()),
            rows: Some(1),
            ..Reply::default()
        };
        log.write(
            &Record::of(at, "run_query", None, &reply, Duration::from_millis(12))
                .waited(Duration::from_millis(5)),
            at,
        );
        let failed = Reply {
            source: Some("shop".into()),
            sql: Some("DELETE FROM t".into()),
            rows: Some(3),
            ..Reply::error("refused: DELETE changes data")
        };
        log.write(
            &Record::of(at, "run_query", None, &failed, Duration::from_millis(1)),
            at,
        );
        let file = home.join("logs").join("2026-01-26.jsonl");
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            serde_json::json!({"time": "2026-01-26T10:00:05Z", "kind": "mcp", "tool": "run_query",
                "source": "shop", "sql": "SELECT 1 AS n", "question": null, "rows": 1, "ms": 12, "waited_ms": 5, "error": null})
        );
        assert_eq!(lines[1]["error"], "refused: DELETE changes data");
        assert_eq!(lines[1]["rows"], serde_json::Value::Null);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
