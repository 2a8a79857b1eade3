//! Session files (SPEC §7): `$AIQ_HOME/session_YYYYMMDDHHMMSS.json`, their
//! validation on restore (UTF-8 JSON, at most 10 MB, required fields, roles,
//! RFC 3339 timestamps), atomic saving (temporary file in the same folder,
//! fsync, rename) and listing. Unknown fields are kept on rewrite.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::llm::Role;

#[cfg(test)]
mod merge_tests;
mod message;

pub use message::{rfc3339, HistoryMessage, Lookup};

/// The largest session file aiq restores.
pub const MAX_BYTES: u64 = 10 * 1024 * 1024;
const VERSION: u64 = 1;

/// A session: where it lives and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub path: PathBuf,
    pub created_at: DateTime<Utc>,
    pub last_updated: DateTime<Utc>,
    /// The saved source name, or the path/URL without a password.
    pub data_source: String,
    /// `sqlite`, `duckdb`, `postgres` or `mysql`.
    pub database_type: String,
    pub messages: Vec<HistoryMessage>,
    /// Messages before this index are not sent to the model (`/clear`, a
    /// stale session continued fresh).
    pub context_start: usize,
    /// Each message's id, in the file as `id` (SPEC §7.3a): how a save
    /// tells the turns it adds from the ones already there.
    ids: Vec<String>,
    /// How many of the conversation's messages the file already holds;
    /// the rest are this process's turns not saved yet.
    synced: usize,
    /// Ids of messages another aiq process added while this one had the
    /// session open (brought in by a save).
    foreign: std::collections::HashSet<String>,
    /// The next save writes this session as it is, without merging (the
    /// file is a new place, `/save FILE`).
    moved: bool,
    /// Fields aiq does not know, kept as they were.
    extra: Map<String, Value>,
    extra_metadata: Map<String, Value>,
    extra_messages: Vec<Map<String, Value>>,
}

/// Why a session file cannot be restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct SessionError {
    pub path: String,
    pub reason: String,
}

#[derive(Serialize, Deserialize)]
struct FileMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    role: String,
    content: String,
    timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sql: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row_count: Option<u64>,
    /// The result had more rows than `row_count` (not counted).
    #[serde(default, skip_serializing_if = "is_false")]
    more_rows: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The result preview the model sees in later turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preview: Option<String>,
    /// Helper tools the model called before answering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    lookups: Vec<Lookup>,
    /// A Lua answer's program (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lua: Option<String>,
    /// What that program printed, bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    /// The statements that program ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    statements: Vec<String>,
    /// Why its values may not reach a model, as decided under the source
    /// it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    withheld: Option<String>,
    /// `withheld` was decided from what the engine read.
    #[serde(default, skip_serializing_if = "is_false")]
    judged: bool,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct FileMetadata {
    created_at: String,
    last_updated: String,
    data_source: String,
    database_type: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    context_start: usize,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize, Deserialize)]
struct File {
    #[serde(default = "version")]
    version: u64,
    metadata: FileMetadata,
    messages: Vec<FileMessage>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// A message id unique across processes: time, process, and a counter.
fn new_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    format!(
        "{nanos:x}-{:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn version() -> u64 {
    VERSION
}

impl Session {
    /// A new, empty session named after its UTC creation time (a second
    /// later if that name is taken, so `/new` never overwrites).
    pub fn new(home: &Path, data_source: &str, database_type: &str) -> Session {
        let mut created_at = Utc::now();
        let name = |t: &DateTime<Utc>| crate::home::session_file(home, t);
        for _ in 0..60 {
            if !name(&created_at).exists() {
                break;
            }
            created_at += chrono::Duration::seconds(1);
        }
        Session {
            path: name(&created_at),
            created_at,
            last_updated: created_at,
            data_source: data_source.to_string(),
            database_type: database_type.to_string(),
            messages: Vec::new(),
            context_start: 0,
            ids: Vec::new(),
            synced: 0,
            foreign: Default::default(),
            moved: false,
            extra: Map::new(),
            extra_metadata: Map::new(),
            extra_messages: Vec::new(),
        }
    }

    /// Reads and validates a session file.
    pub fn load(path: &Path) -> Result<Session, SessionError> {
        let fail = |reason: String| SessionError {
            path: path.display().to_string(),
            reason,
        };
        let meta = fs::metadata(path).map_err(|e| {
            fail(match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "no such file (`aiq sessions` lists the saved ones)".into()
                }
                _ => e.to_string(),
            })
        })?;
        if meta.len() > MAX_BYTES {
            return Err(fail(format!(
                "the file is {:.1} MB; sessions may be at most 10 MB",
                meta.len() as f64 / 1_048_576.0
            )));
        }
        let bytes = fs::read(path).map_err(|e| fail(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            fail(format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Session::parse(&text, path).map_err(fail)
    }

    fn parse(text: &str, path: &Path) -> Result<Session, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        for field in ["metadata", "messages"] {
            if value.get(field).is_none() {
                return Err(format!("the required field `{field}` is missing"));
            }
        }
        let file: File =
            serde_json::from_value(value).map_err(|e| format!("unexpected content: {e}"))?;
        if file.version > VERSION {
            return Err(format!(
                "it was written by a newer aiq (session format version {}; this aiq reads version {VERSION}): update aiq to open it",
                file.version
            ));
        }
        let time = |what: &str, s: &str| {
            DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| format!("{what} '{s}' is not an RFC 3339 timestamp"))
        };
        let created_at = time("metadata.created_at", &file.metadata.created_at)?;
        let last_updated = time("metadata.last_updated", &file.metadata.last_updated)?;
        let mut messages = Vec::with_capacity(file.messages.len());
        let mut extra_messages = Vec::with_capacity(file.messages.len());
        let mut ids = Vec::with_capacity(file.messages.len());
        for (i, m) in file.messages.into_iter().enumerate() {
            // Files of earlier versions have no ids: every process that
            // reads one names its messages alike, by position.
            ids.push(m.id.clone().unwrap_or_else(|| format!("m{i}")));
            let role = match m.role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "system" => Role::System,
                "tool" => Role::Tool,
                other => return Err(format!("message {} has an unknown role '{other}' (expected user, assistant, system or tool)", i + 1)),
            };
            let timestamp = time(&format!("message {} timestamp", i + 1), &m.timestamp)?;
            messages.push(HistoryMessage {
                role,
                content: m.content,
                timestamp,
                sql: m.sql,
                row_count: m.row_count,
                more_rows: m.more_rows,
                error: m.error,
                preview: m.preview,
                lua: m.lua,
                output: m.output,
                lookups: m.lookups,
                statements: m.statements,
                withheld: m.withheld,
                judged: m.judged,
            });
            extra_messages.push(m.extra);
        }
        Ok(Session {
            path: path.to_path_buf(),
            created_at,
            last_updated,
            data_source: file.metadata.data_source,
            database_type: file.metadata.database_type,
            context_start: file.metadata.context_start.min(messages.len()),
            synced: messages.len(),
            messages,
            ids,
            foreign: Default::default(),
            moved: false,
            extra: file.extra,
            extra_metadata: file.metadata.extra,
            extra_messages,
        })
    }

    /// The JSON text of the file (SPEC §7.1 shape).
    pub fn to_json(&self) -> String {
        let file = File {
            version: VERSION,
            metadata: FileMetadata {
                created_at: rfc3339(&self.created_at),
                last_updated: rfc3339(&self.last_updated),
                data_source: self.data_source.clone(),
                database_type: self.database_type.clone(),
                context_start: self.context_start,
                extra: self.extra_metadata.clone(),
            },
            messages: self
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| FileMessage {
                    id: self.ids.get(i).cloned(),
                    role: m.role.as_str().to_string(),
                    content: m.content.clone(),
                    timestamp: m.timestamp_text(),
                    sql: m.sql.clone(),
                    row_count: m.row_count,
                    more_rows: m.more_rows,
                    error: m.error.clone(),
                    preview: m.preview.clone(),
                    lua: m.lua.clone(),
                    output: m.output.clone(),
                    lookups: m.lookups.clone(),
                    statements: m.statements.clone(),
                    withheld: m.withheld.clone(),
                    judged: m.judged,
                    extra: self.extra_messages.get(i).cloned().unwrap_or_default(),
                })
                .collect(),
            extra: self.extra.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// Writes the session atomically, stamping `last_updated`. An empty
    /// session is not written (returns `Ok(false)`).
    pub fn save(&mut self) -> std::io::Result<bool> {
        let history = self.messages.clone();
        let start = self.context_start;
        self.save_history(&history, start)
    }

    /// Saves a conversation whose messages are `history` (this session's
    /// messages, then the turns this process added since) — merged with
    /// what other aiq processes saved meanwhile (SPEC §7.3a): under the
    /// file's lock, the file is read again, this process's new turns are
    /// appended to it, and the result is written atomically. Afterwards
    /// [`Session::messages`] is the merged conversation (with other
    /// processes' turns, see [`Session::is_foreign`]) and
    /// [`Session::context_start`] where this conversation's context starts
    /// in it. An empty session is not written (returns `Ok(false)`).
    pub fn save_history(
        &mut self,
        history: &[HistoryMessage],
        context_start: usize,
    ) -> std::io::Result<bool> {
        if history.is_empty() && self.messages.is_empty() {
            return Ok(false);
        }
        let synced = self.synced.min(history.len());
        let fresh = &history[synced..];
        let fresh_ids: Vec<String> = fresh.iter().map(|_| new_id()).collect();
        let path = self.path.clone();
        crate::home::lock::exclusive(&path, || {
            let disk = match self.moved {
                true => None,
                false => Session::load(&path).ok(),
            };
            let mut next = self.clone();
            match disk {
                Some(d) => {
                    let known: std::collections::HashSet<&String> = self.ids.iter().collect();
                    next.foreign
                        .extend(d.ids.iter().filter(|id| !known.contains(id)).cloned());
                    next.created_at = d.created_at;
                    next.messages = d.messages;
                    next.ids = d.ids;
                    next.extra_messages = d.extra_messages;
                    for (k, v) in d.extra {
                        next.extra.entry(k).or_insert(v);
                    }
                    for (k, v) in d.extra_metadata {
                        next.extra_metadata.entry(k).or_insert(v);
                    }
                }
                None => {
                    next.messages = history[..synced].to_vec();
                    next.ids.resize_with(synced, new_id);
                    next.extra_messages.truncate(synced);
                }
            }
            let base = next.messages.len();
            next.messages.extend_from_slice(fresh);
            next.ids.extend(fresh_ids.iter().cloned());
            next.extra_messages
                .resize_with(next.messages.len(), Map::new);
            // Where this conversation's context starts, in the merged list:
            // its saved part keeps its place, its new turns come after the
            // other processes' turns.
            next.context_start = if context_start <= synced {
                context_start.min(base)
            } else {
                base + (context_start - synced)
            };
            next.synced = next.messages.len();
            next.moved = false;
            next.last_updated = Utc::now();
            let text = next.to_json();
            // Never a file aiq would refuse to open again.
            if text.len() as u64 > MAX_BYTES {
                return Err(std::io::Error::other(format!(
                    "with this turn the session would be {} bytes, over the 10 MB ({} bytes) a session may be; the file is left as it was (start a new session: /new in the chat, or leave out -s)",
                    crate::render::thousands(text.len() as u64),
                    crate::render::thousands(MAX_BYTES)
                )));
            }
            crate::home::write_atomic(&path, |f| f.write_all(text.as_bytes()))?;
            *self = next;
            Ok(true)
        })
    }

    /// Whether message `i` of [`Session::messages`] came from another aiq
    /// process that had the session open at the same time.
    pub fn is_foreign(&self, i: usize) -> bool {
        self.ids.get(i).is_some_and(|id| self.foreign.contains(id))
    }

    /// The next save writes to `path` as it is, not merged with a file
    /// that may already be there (`/save FILE`).
    pub fn move_to(&mut self, path: PathBuf) {
        self.path = path;
        self.moved = true;
    }

    /// Back to `path` after a move that could not be written: saves merge
    /// there again.
    pub fn return_to(&mut self, path: PathBuf) {
        self.path = path;
        self.moved = false;
    }

    /// Question/answer pairs (user messages).
    pub fn turns(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count()
    }
}

/// Every message, readable: role, timestamp, content, and for answers the
/// SQL and its row count or error (`/history`, `aiq sessions show`).
pub fn transcript(messages: &[HistoryMessage]) -> String {
    transcript_marked(messages, |_| false)
}

/// [`transcript`], with the messages `foreign` picks marked as coming from
/// another aiq that had the session open.
pub fn transcript_marked(messages: &[HistoryMessage], foreign: impl Fn(usize) -> bool) -> String {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let mark = if foreign(i) {
            " (from another aiq)"
        } else {
            ""
        };
        let content = match m.is_unanswered() {
            true => format!("(failed, no answer) {}", m.content.trim())
                .trim_end()
                .to_string(),
            false => m.content.trim().to_string(),
        };
        out.push_str(&format!(
            "[{}] {}{mark}: {content}\n",
            m.timestamp_text(),
            m.role.as_str(),
        ));
        for l in &m.lookups {
            out.push_str(&format!("    looked: {} {}\n", l.name, l.arguments));
        }
        if let Some(sql) = m.sql.as_deref().filter(|sql| !m.content.contains(sql)) {
            out.push_str(&format!("    sql: {sql}\n"));
        }
        if let Some(lua) = m.lua.as_deref().filter(|lua| !m.content.contains(lua)) {
            out.push_str("    lua:\n");
            for line in lua.lines() {
                out.push_str(&format!("      {line}\n"));
            }
        }
        if let Some(output) = m.output.as_deref().filter(|o| !o.is_empty()) {
            out.push_str("    output:\n");
            for line in output.lines() {
                out.push_str(&format!("      {line}\n"));
            }
        }
        if let Some(rows) = m.row_count {
            let more = if m.more_rows { " or more" } else { "" };
            out.push_str(&format!("    rows: {rows}{more}\n"));
        }
        if let Some(error) = &m.error {
            out.push_str(&format!("    error: {error}\n"));
        }
    }
    out
}

/// `path` with the home directory shown as `~`.
pub fn display_path(path: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home {
        if let Ok(rest) = path.strip_prefix(home) {
            return format!("~/{}", rest.display());
        }
    }
    path.display().to_string()
}

/// The session files in `home`, newest first (by name, which is the UTC
/// creation time), with what could be read of each.
/// The file `-s GIVEN` means: the path as given when it is there, else a
/// session of aiq's home by the name `aiq sessions` lists
/// (`session_20261127175849.json`, or without `.json`).
pub fn locate(home: &Path, given: &Path) -> PathBuf {
    if given.exists() {
        return given.to_path_buf();
    }
    let bare = given.components().count() == 1;
    if bare {
        let named = home.join(given);
        if named.is_file() {
            return named;
        }
        let mut with_json = named.into_os_string();
        with_json.push(".json");
        let with_json = PathBuf::from(with_json);
        if with_json.is_file() {
            return with_json;
        }
    }
    given.to_path_buf()
}

/// How a restored session is announced: `restored 3 turns (last
/// 2026-11-27 17:58)`.
pub fn restored_line(session: &Session) -> String {
    let turns = session
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .count();
    let noun = if turns == 1 { "turn" } else { "turns" };
    format!(
        "restored {turns} {noun} (last {})",
        session.last_updated.format("%Y-%m-%d %H:%M")
    )
}

pub fn list(home: &Path) -> Vec<Result<Session, SessionError>> {
    let mut files: Vec<PathBuf> = fs::read_dir(home)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .map(crate::home::is_session_file)
                        .unwrap_or(false)
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files.reverse();
    files.iter().map(|p| Session::load(p)).collect()
}

/// The saved sessions, newest first: file, created, last updated, source, turns.
pub fn listing(home: &Path) -> String {
    let sessions = list(home);
    if sessions.is_empty() {
        return "(no saved sessions)\n".into();
    }
    let mut rows: Vec<[String; 5]> = vec![[
        "FILE".into(),
        "CREATED".into(),
        "LAST UPDATED".into(),
        "SOURCE".into(),
        "TURNS".into(),
    ]];
    for s in sessions {
        rows.push(match s {
            Ok(s) => [
                file_name(&s.path),
                s.created_at.format("%Y-%m-%d %H:%M:%SZ").to_string(),
                s.last_updated.format("%Y-%m-%d %H:%M:%SZ").to_string(),
                s.data_source.clone(),
                s.turns().to_string(),
            ],
            Err(e) => [
                file_name(Path::new(&e.path)),
                "(unreadable)".into(),
                e.reason,
                String::new(),
                String::new(),
            ],
        });
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// What aiq prints when a session was saved (SPEC §7.1): where, and how to
/// continue it, with `~` for the home directory.
pub fn saved_lines(path: &Path) -> String {
    let shown = display_path(path, dirs::home_dir().as_deref());
    format!("Current session saved to {shown}\nRun 'aiq -s {shown}' to continue.\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "version": 1,
      "metadata": {"created_at": "2026-01-26T10:00:00Z", "last_updated": "2026-01-26T10:12:31Z",
                   "data_source": "shop", "database_type": "sqlite", "note": "kept"},
      "messages": [
        {"role": "user", "content": "how many customers per country?", "timestamp": "2026-01-26T10:00:05Z"},
        {"role": "assistant", "content": "SELECT country, COUNT(*) FROM customers GROUP BY 1", "timestamp": "2026-01-26T10:00:07Z",
         "sql": "SELECT country, COUNT(*) FROM customers GROUP BY 1", "row_count": 12, "mood": "calm"}
      ],
      "client": "other"
    }"#;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn loads_the_spec_shape_and_keeps_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.json", GOOD.as_bytes());
        let s = Session::load(&p).unwrap();
        assert_eq!(s.data_source, "shop");
        assert_eq!(s.messages.len(), 2);
        assert_eq!(s.messages[1].row_count, Some(12));
        assert_eq!(s.turns(), 1);
        let out: Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(out["version"], 1);
        assert_eq!(out["metadata"]["note"], "kept");
        assert_eq!(out["messages"][1]["mood"], "calm");
        assert_eq!(out["client"], "other");
        assert_eq!(out["messages"][0]["timestamp"], "2026-01-26T10:00:05Z");
        assert!(out["messages"][0].get("sql").is_none());
    }

    #[test]
    fn lua_answers_round_trip_and_old_files_need_no_lua_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "old.json", GOOD.as_bytes());
        let mut s = Session::load(&p).unwrap();
        assert_eq!(
            (
                s.messages[1].lua.as_deref(),
                s.messages[1].output.as_deref()
            ),
            (None, None)
        );
        s.messages.push(HistoryMessage::user("per region?"));
        s.messages.push(
            HistoryMessage::assistant("Here you go.")
                .with_lua("print(1)", Ok((2, "a\n1\n2\n".into(), "1\n".into()))),
        );
        s.save().unwrap();
        let raw: Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(raw["messages"][3]["lua"], "print(1)");
        assert_eq!(raw["messages"][3]["output"], "1\n");
        assert_eq!(raw["messages"][3]["row_count"], 2);
        assert!(raw["messages"][1].get("lua").is_none());
        let back = Session::load(&p).unwrap();
        let (b, m) = (&back.messages[3], &s.messages[3]);
        assert_eq!(
            (&b.lua, &b.output, b.row_count, &b.preview),
            (&m.lua, &m.output, m.row_count, &m.preview)
        );
        assert!(
            transcript(&back.messages).contains("    lua:\n      print(1)\n    output:\n      1\n")
        );
    }

    #[test]
    fn bad_files_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("corrupt.json", b"{ not json".to_vec(), "not valid JSON"),
            (
                "truncated.json",
                GOOD.as_bytes()[..GOOD.len() / 2].to_vec(),
                "not valid JSON",
            ),
            (
                "latin1.json",
                b"{\"metadata\": \"caf\xe9\"}".to_vec(),
                "not UTF-8",
            ),
            (
                "nomessages.json",
                br#"{"metadata": {}}"#.to_vec(),
                "`messages` is missing",
            ),
            (
                "nometa.json",
                br#"{"messages": []}"#.to_vec(),
                "`metadata` is missing",
            ),
            (
                "role.json",
                GOOD.replace("\"user\"", "\"bot\"").into_bytes(),
                "unknown role 'bot'",
            ),
            (
                "newer.json",
                GOOD.replace("\"version\": 1", "\"version\": 99")
                    .into_bytes(),
                "written by a newer aiq (session format version 99",
            ),
            (
                "time.json",
                GOOD.replace("2026-01-26T10:00:05Z", "yesterday")
                    .into_bytes(),
                "'yesterday' is not an RFC 3339 timestamp",
            ),
        ];
        for (name, bytes, why) in cases {
            let p = write(dir.path(), name, &bytes);
            let e = Session::load(&p).unwrap_err();
            assert!(e.reason.contains(why), "{name}: {e}");
        }
        let big = write(
            dir.path(),
            "big.json",
            &vec![b' '; (11 * 1024 * 1024) as usize],
        );
        let e = Session::load(&big).unwrap_err();
        assert!(e.reason.contains("at most 10 MB"), "{e}");
        let e = Session::load(&dir.path().join("missing.json")).unwrap_err();
        assert_eq!(
            e.reason,
            "no such file (`aiq sessions` lists the saved ones)"
        );
    }

    #[test]
    fn new_sessions_are_named_by_utc_creation_and_empty_ones_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::new(dir.path(), "shop", "sqlite");
        let name = s.path.file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(
            name,
            format!("session_{}.json", s.created_at.format("%Y%m%d%H%M%S"))
        );
        assert!(!s.save().unwrap());
        assert!(!s.path.exists());
        s.messages.push(HistoryMessage::user("q"));
        assert!(s.save().unwrap());
        assert_eq!(Session::load(&s.path).unwrap().messages.len(), 1);
    }

    #[test]
    fn paths_under_home_show_a_tilde() {
        assert_eq!(
            display_path(
                Path::new("/home/me/.aiqconfig/session_1.json"),
                Some(Path::new("/home/me"))
            ),
            "~/.aiqconfig/session_1.json"
        );
        assert_eq!(
            display_path(Path::new("/tmp/s.json"), Some(Path::new("/home/me"))),
            "/tmp/s.json"
        );
    }
}
