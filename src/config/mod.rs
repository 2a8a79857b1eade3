//! Configuration (SPEC §3): `$AIQ_HOME/config.toml`, layered as defaults <
//! file < environment < flags, loaded once and immutable afterwards. What
//! changes during a run (source, format) lives with the front end, not here.
//!
//! Writing the file (`aiq config init`, `aiq sources add …`) goes through
//! `toml_edit`, so a person's comments and layout survive, and always leaves
//! the directory 0700 and the file 0600.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::AiqError;

mod located;

pub use crate::llm::LlmConfig;
pub use crate::lua::LuaConfig;

/// The effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `$AIQ_HOME` (default `~/.aiqconfig`).
    pub home: PathBuf,
    pub llm: LlmConfig,
    pub chat: ChatConfig,
    pub query: QueryConfig,
    pub lua: LuaConfig,
    pub mcp: McpConfig,
    /// `[examples]`: verified examples sent with questions (SPEC §14).
    pub examples: ExamplesConfig,
    /// `[output]`: how results reach a terminal (SPEC §2.3).
    pub output: OutputConfig,
    /// `[audit]`: how big the audit log may grow.
    pub audit: AuditConfig,
    pub sources: SavedSources,
    /// `[privacy]`: what leaves the machine, for every source (SPEC §4.3).
    pub privacy: crate::privacy::PrivacyConfig,
    /// Things worth telling the user (for example loose file permissions).
    pub warnings: Vec<String>,
}

/// `[output]`: how results reach a terminal (SPEC §2.3).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Send results taller or wider than the screen through a pager.
    pub pager: bool,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig { pager: true }
    }
}

/// `[examples]`: how many verified examples go with a question (SPEC §14).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExamplesConfig {
    /// The most similar examples sent with each question (0: none).
    pub max: usize,
}

impl Default for ExamplesConfig {
    fn default() -> Self {
        ExamplesConfig {
            max: crate::examples::DEFAULT_MAX,
        }
    }
}

/// `[chat]`: conversation and display settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChatConfig {
    pub history_limit: usize,
    pub max_rows: usize,
    pub stale_after_hours: u64,
}

impl Default for ChatConfig {
    fn default() -> Self {
        ChatConfig {
            history_limit: 20,
            max_rows: 100,
            stale_after_hours: 12,
        }
    }
}

/// `[query]`: limits on running statements.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueryConfig {
    /// Statement timeout in seconds (SPEC §4.2 layer 3).
    pub timeout_secs: u64,
    /// The engine's memory ceiling (DuckDB's `memory_limit`: `"2GB"`,
    /// `"25%"`); unset, DuckDB's own (80% of the machine) for the CLI and
    /// [`MCP_MEMORY_LIMIT`] for `aiq mcp`.
    pub memory_limit: Option<String>,
}

/// The engine's memory ceiling under `aiq mcp` when `[query] memory_limit`
/// is unset: a server shares the machine with the assistants it serves.
pub const MCP_MEMORY_LIMIT: &str = "25%";

impl Default for QueryConfig {
    fn default() -> Self {
        QueryConfig {
            timeout_secs: 30,
            memory_limit: None,
        }
    }
}

/// `[audit]`: the audit log in `$AIQ_HOME/logs` (one file a day).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    /// A day's file reaching this many MB is rotated (`DAY.001.jsonl`, …).
    pub max_size_mb: u64,
    /// Rotated parts of a day kept; older ones are removed.
    pub keep: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        let d = crate::home::logs::Limits::default();
        AuditConfig {
            max_size_mb: d.max_bytes / (1024 * 1024),
            keep: d.keep,
        }
    }
}

impl AuditConfig {
    /// The limits the log writer keeps to.
    pub fn limits(&self) -> crate::home::logs::Limits {
        crate::home::logs::Limits {
            max_bytes: self.max_size_mb.max(1) * 1024 * 1024,
            keep: self.keep,
        }
    }
}

/// `[mcp]`: limits of the MCP server (`aiq mcp`, SPEC §12).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// A tool call running longer is stopped, its statement too.
    pub timeout_secs: u64,
    /// Rows one result returns at most (a call's `max_rows` may ask for fewer).
    pub max_rows: usize,
    /// Bytes of result rows (as JSON) one result returns at most.
    pub max_bytes: usize,
    /// Tool calls running at once; more wait their turn.
    pub max_concurrent: usize,
    /// Tool calls waiting at once; more are refused as busy.
    pub max_queued: usize,
    /// How long a call may wait for its turn; unset, the statement timeout
    /// (`[query] timeout_secs`).
    pub queue_timeout_secs: Option<u64>,
    /// `--http`: a session without a request this long is closed.
    pub session_idle_secs: u64,
    /// `--http`: sessions open at once; a client starting one more is
    /// answered 503.
    pub max_sessions: usize,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            timeout_secs: 120,
            max_rows: 500,
            max_bytes: 256 * 1024,
            max_concurrent: 4,
            max_queued: 64,
            queue_timeout_secs: None,
            session_idle_secs: 1800,
            max_sessions: 256,
        }
    }
}

pub use crate::source::{SavedSource, SavedSources};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    llm: LlmConfig,
    #[serde(default)]
    chat: ChatConfig,
    #[serde(default)]
    query: QueryConfig,
    #[serde(default)]
    lua: LuaConfig,
    #[serde(default)]
    mcp: McpConfig,
    #[serde(default)]
    examples: ExamplesConfig,
    #[serde(default)]
    output: OutputConfig,
    #[serde(default)]
    audit: AuditConfig,
    #[serde(default)]
    sources: toml::Table,
    #[serde(default)]
    privacy: crate::privacy::PrivacyConfig,
}

/// Where the configuration lives: `$AIQ_HOME`, else `~/.aiqconfig`.
pub fn home_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, AiqError> {
    crate::home::locate(env).ok_or_else(|| {
        AiqError::Usage(
            "cannot find your home directory; set AIQ_HOME to a folder for aiq's config".into(),
        )
    })
}

impl Config {
    /// The config file's path.
    pub fn file(&self) -> PathBuf {
        crate::home::config_file(&self.home)
    }

    /// Loads defaults < `$AIQ_HOME/config.toml` < environment.
    pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Result<Config, AiqError> {
        let home = home_dir(env)?;
        let path = crate::home::config_file(&home);
        let mut warnings = Vec::new();
        let text = match fs::read(&path).map(String::from_utf8) {
            Ok(Ok(text)) => {
                warnings.extend(permission_warning(&path));
                text
            }
            Ok(Err(e)) => {
                let at = e.utf8_error().valid_up_to();
                let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                return Err(AiqError::Usage(format!(
                    "invalid config {}:{line}: the file is not UTF-8 (byte {at}); save it as UTF-8",
                    path.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(AiqError::Usage(format!(
                    "cannot read {}: {e} (fix its permissions or set AIQ_HOME elsewhere)",
                    path.display()
                )))
            }
        };
        let file = parse_file(&text, &path)?;
        let sources = parse_sources(&file.sources, &text, &path)?;
        Ok(Config::from_file(home, file, sources, warnings, env))
    }

    /// As [`Config::load`], but a config file aiq cannot use gives the
    /// defaults (with the environment) and the error beside them, for
    /// `aiq doctor`, which reports it as one of its checks.
    pub fn load_or_defaults(
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(Config, Option<AiqError>), AiqError> {
        match Config::load(env) {
            Ok(c) => Ok((c, None)),
            Err(e) => {
                let home = home_dir(env)?;
                let defaults = Config::from_file(
                    home,
                    FileConfig::default(),
                    SavedSources::default(),
                    Vec::new(),
                    env,
                );
                Ok((defaults, Some(e)))
            }
        }
    }

    fn from_file(
        home: PathBuf,
        file: FileConfig,
        sources: SavedSources,
        warnings: Vec<String>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Config {
        let mut llm = file.llm;
        apply_env(&mut llm, env);
        Config {
            home,
            llm,
            chat: file.chat,
            query: file.query,
            lua: file.lua,
            mcp: file.mcp,
            examples: file.examples,
            output: file.output,
            audit: file.audit,
            sources,
            privacy: file.privacy,
            warnings,
        }
    }

    /// The effective configuration as TOML, secrets masked (`aiq config show`).
    pub fn to_masked_toml(&self) -> String {
        let mut doc = toml_edit::DocumentMut::new();
        let mut llm = toml_edit::Table::new();
        let opt = |t: &mut toml_edit::Table, k: &str, v: &Option<String>| {
            if let Some(v) = v {
                t[k] = toml_edit::value(v.as_str());
            }
        };
        opt(&mut llm, "provider", &self.llm.provider);
        opt(&mut llm, "model", &self.llm.model);
        let base_url = self.llm.base_url.as_deref().map(crate::redact::redact_url);
        opt(&mut llm, "base_url", &base_url);
        if self.llm.api_key.is_some() {
            llm["api_key"] = toml_edit::value("********");
        }
        llm["timeout_secs"] = toml_edit::value(self.llm.timeout_secs as i64);
        llm["max_retries"] = toml_edit::value(i64::from(self.llm.max_retries));
        if let Some(n) = self.llm.context_tokens {
            llm["context_tokens"] = toml_edit::value(n as i64);
        }
        doc["llm"] = toml_edit::Item::Table(llm);
        let mut chat = toml_edit::Table::new();
        chat["history_limit"] = toml_edit::value(self.chat.history_limit as i64);
        chat["max_rows"] = toml_edit::value(self.chat.max_rows as i64);
        chat["stale_after_hours"] = toml_edit::value(self.chat.stale_after_hours as i64);
        doc["chat"] = toml_edit::Item::Table(chat);
        let mut query = toml_edit::Table::new();
        query["timeout_secs"] = toml_edit::value(self.query.timeout_secs as i64);
        opt(&mut query, "memory_limit", &self.query.memory_limit);
        doc["query"] = toml_edit::Item::Table(query);
        let mut lua = toml_edit::Table::new();
        for (key, value) in [
            ("timeout_secs", self.lua.timeout_secs),
            ("memory_mb", self.lua.memory_mb),
            ("max_output_kb", self.lua.max_output_kb),
            ("max_rows", self.lua.max_rows),
            ("max_total_rows", self.lua.max_total_rows),
            ("max_instructions", self.lua.max_instructions),
        ] {
            lua[key] = toml_edit::value(i64::try_from(value).unwrap_or(i64::MAX));
        }
        doc["lua"] = toml_edit::Item::Table(lua);

        let mut mcp = toml_edit::Table::new();
        mcp["timeout_secs"] = toml_edit::value(self.mcp.timeout_secs as i64);
        mcp["max_rows"] = toml_edit::value(self.mcp.max_rows as i64);
        mcp["max_bytes"] = toml_edit::value(self.mcp.max_bytes as i64);
        mcp["max_concurrent"] = toml_edit::value(self.mcp.max_concurrent as i64);
        mcp["max_queued"] = toml_edit::value(self.mcp.max_queued as i64);
        if let Some(secs) = self.mcp.queue_timeout_secs {
            mcp["queue_timeout_secs"] = toml_edit::value(secs as i64);
        }
        mcp["session_idle_secs"] = toml_edit::value(self.mcp.session_idle_secs as i64);
        mcp["max_sessions"] = toml_edit::value(self.mcp.max_sessions as i64);
        doc["mcp"] = toml_edit::Item::Table(mcp);
        let mut examples = toml_edit::Table::new();
        examples["max"] = toml_edit::value(self.examples.max as i64);
        doc["examples"] = toml_edit::Item::Table(examples);
        let mut output = toml_edit::Table::new();
        output["pager"] = toml_edit::value(self.output.pager);
        doc["output"] = toml_edit::Item::Table(output);
        let mut audit = toml_edit::Table::new();
        audit["max_size_mb"] = toml_edit::value(self.audit.max_size_mb as i64);
        audit["keep"] = toml_edit::value(self.audit.keep as i64);
        doc["audit"] = toml_edit::Item::Table(audit);
        let mut sources = toml_edit::Table::new();
        if let Some(d) = &self.sources.default {
            sources["default"] = toml_edit::value(d.as_str());
        }
        for (name, s) in self.sources.iter() {
            let mut t = toml_edit::Table::new();
            t["url"] = toml_edit::value(crate::source::redact_url(&s.url));
            if let Some(p) = &s.password_env {
                t["password_env"] = toml_edit::value(p.as_str());
            }
            if let Some(n) = &s.name {
                t["name"] = toml_edit::value(n.as_str());
            }
            privacy_keys(&mut t, &s.privacy());
            sources[name] = toml_edit::Item::Table(t);
        }
        doc["sources"] = toml_edit::Item::Table(sources);
        let mut privacy = toml_edit::Table::new();
        privacy_keys(&mut privacy, &self.privacy);
        if !privacy.is_empty() {
            doc["privacy"] = toml_edit::Item::Table(privacy);
        }
        doc.to_string()
    }
}

/// Writes the privacy keys that are set into `t`.
fn privacy_keys(t: &mut toml_edit::Table, p: &crate::privacy::PrivacyConfig) {
    let list = |v: &Vec<String>| {
        let mut a = toml_edit::Array::new();
        for x in v {
            a.push(x.as_str());
        }
        toml_edit::value(a)
    };
    for (key, value) in [
        ("include", &p.include),
        ("exclude", &p.exclude),
        ("redact", &p.redact),
        ("allow_functions", &p.allow_functions),
    ] {
        if let Some(v) = value {
            t[key] = list(v);
        }
    }
    for (key, value) in [("samples", p.samples), ("send_results", p.send_results)] {
        if let Some(v) = value {
            t[key] = toml_edit::value(v);
        }
    }
}

fn parse_file(text: &str, path: &Path) -> Result<FileConfig, AiqError> {
    let file: FileConfig =
        toml::from_str(text).map_err(|e| AiqError::Usage(located::parse_error(text, path, &e)))?;
    let min = crate::llm::window::MIN_TOKENS;
    if let Some(n) = file.llm.context_tokens.filter(|&n| n < min) {
        return Err(AiqError::Usage(located::checked(
            text,
            path,
            "llm",
            "context_tokens",
            &format!("is {n}; give the model's window in tokens, {min} or more (or remove the key to have it found out)"),
        )));
    }
    Ok(file)
}

/// `[sources]` mixes one string key (`default`) with one table per source,
/// which serde cannot express with unknown keys denied, so it is read by hand.
fn parse_sources(table: &toml::Table, text: &str, path: &Path) -> Result<SavedSources, AiqError> {
    let bad = |table: &str, key: &str, msg: String| {
        AiqError::Usage(located::checked(text, path, table, key, &msg))
    };
    let mut out = SavedSources::default();
    for (key, value) in table {
        if key == "default" {
            match value.as_str() {
                Some(name) => out.default = Some(name.to_string()),
                None => {
                    return Err(bad(
                        "sources",
                        "default",
                        "must be a string, the name of a saved source".into(),
                    ))
                }
            }
            continue;
        }
        let Some(entry) = value.as_table() else {
            return Err(bad(
                "sources",
                key,
                format!(
                    "unknown key `sources.{key}` (saved sources are tables: [sources.{key}] url = \"…\")"
                ),
            ));
        };
        let here = format!("sources.{key}");
        let source: SavedSource =
            toml::Value::Table(entry.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    let field = e
                        .message()
                        .strip_prefix("unknown field `")
                        .and_then(|r| r.split('`').next())
                        .unwrap_or("");
                    bad(&here, field, located::plain(e.message(), field))
                })?;
        validate_name(key).map_err(|e| bad(&here, "", e.to_string()))?;
        out.insert(key.clone(), source);
    }
    if let Some(d) = &out.default {
        if out.get(d).is_none() {
            return Err(bad(
                "sources",
                "default",
                format!("names '{d}', which is not a saved source (add it with `aiq sources add {d} PATH_OR_URL`)"),
            ));
        }
    }
    Ok(out)
}

fn apply_env(llm: &mut LlmConfig, env: &dyn Fn(&str) -> Option<String>) {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(v) = get("AIQ_PROVIDER") {
        llm.provider = Some(v);
    }
    if let Some(v) = get("AIQ_MODEL") {
        llm.model = Some(v);
    }
    if let Some(v) = get("AIQ_BASE_URL") {
        llm.base_url = Some(v);
    }
    // OPENAI_API_KEY / ANTHROPIC_API_KEY are fallbacks that depend on the
    // provider finally chosen (flags included): see `llm::settings`.
    if let Some(v) = get("AIQ_API_KEY") {
        llm.api_key = Some(v);
    }
}

#[cfg(unix)]
fn permission_warning(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} can be read by other users (mode {:o}); run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )
    })
}

#[cfg(not(unix))]
fn permission_warning(_: &Path) -> Option<String> {
    None
}

/// Source names: letters, digits, `_` and `-`, so they never look like paths.
pub fn validate_name(name: &str) -> Result<(), AiqError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(AiqError::Usage(format!(
            "invalid source name '{name}': use letters, digits, '_' and '-' (at most 64)"
        )))
    }
}

/// The commented file `aiq config init` writes.
pub const TEMPLATE: &str = r#"# aiq configuration. Every key is optional; the values shown are the defaults.
# Unknown keys are an error. Secrets are better kept in environment variables.

[llm]
# provider = "openai"            # "openai" (any OpenAI-compatible server), "anthropic", "ollama"
# model = "gpt-4o-mini"
# base_url = "https://api.openai.com/v1"
# api_key = "…"                  # prefer AIQ_API_KEY / OPENAI_API_KEY / ANTHROPIC_API_KEY
# timeout_secs = 120
# max_retries = 3
# context_tokens = 8192          # the model's window; asked from the server or learned when unset

[chat]
# history_limit = 20             # message pairs kept in the prompt
# max_rows = 100                 # rows shown in table/markdown output
# stale_after_hours = 12

[query]
# timeout_secs = 30              # statements running longer are stopped
# memory_limit = "4GB"           # DuckDB's memory ceiling ("4GB", "25%"); beyond it, it spills to
#                                # aiq's private temporary folder, then the query fails. Unset:
#                                # DuckDB's own (80% of the machine); 25% under `aiq mcp`

# What leaves the machine, for every source (each [sources.NAME] table may
# set the same keys for itself):
# [privacy]
# exclude = ["hr_*", "payroll"]  # tables (or "table.column") the model never hears of
# include = ["orders", "cust*"]  # only these tables (the other way round)
# samples = true                 # sample values in the prompt
# send_results = true            # result previews in later prompts
# redact = ["customers.email", "*.phone"]   # values that never leave the machine
# allow_functions = ["fiscal_quarter"]      # the database's functions you vouch for

[lua]                            # the Lua sandbox (--lua FILE, --mode lua, /mode lua)
# timeout_secs = 10              # wall clock of one run, statements included
# memory_mb = 64                 # memory the Lua state may hold
# max_output_kb = 1024           # what print/aiq.print may write in one run
# max_rows = 100000              # rows one aiq.query may return to the program
# max_total_rows = 1000000       # rows all aiq.query calls of one run may return
# max_instructions = 1000000000  # Lua VM instructions one run may execute
[mcp]                            # `aiq mcp`, the MCP server
# timeout_secs = 120             # a tool call running longer is stopped, its statement too
# max_rows = 500                 # rows one result returns at most
# max_bytes = 262144             # bytes of result rows (as JSON) one result returns at most
# max_concurrent = 4             # tool calls running at once (1 or more); more wait their turn, first come first served
# max_queued = 64                # calls waiting at once; more are refused as busy
# queue_timeout_secs = 30        # a call waiting longer is refused as busy (default: [query] timeout_secs)
# session_idle_secs = 1800       # --http: a session without a request this long is closed
# max_sessions = 256             # --http: sessions open at once; one more is answered 503

[examples]                       # verified examples (`/good`, `aiq examples`)
# max = 3                        # the most similar sent with a question; 0 sends none

[output]                         # results on a terminal
# pager = true                   # taller or wider than the screen: $AIQ_PAGER, $PAGER or less -SRFX

[audit]                          # the audit log, $AIQ_HOME/logs/DAY.jsonl
# max_size_mb = 64               # a day's file this big is rotated (DAY.001.jsonl, …)
# keep = 5                       # rotated parts of a day kept; older ones are removed

# Saved sources: `aiq sources add NAME PATH_OR_URL` writes them below, e.g.
#   [sources.shop]
#   url = "sqlite:///home/me/data/shop.db"
# and `default = "shop"` under [sources] picks the one used without SOURCE.
[sources]
"#;

/// Edits `config.toml` in place (comments kept) and writes it back
/// atomically with mode 0600 in a 0700 directory.
pub fn edit_file(
    home: &Path,
    edit: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<(), AiqError>,
) -> Result<PathBuf, AiqError> {
    let path = crate::home::config_file(home);
    crate::home::create_private_dir(home)
        .map_err(|e| AiqError::Usage(format!("cannot create {}: {e}", home.display())))?;
    // Under the file's lock: two `aiq sources add` at once both land.
    let lock = |e: std::io::Error| AiqError::Usage(format!("cannot lock {}: {e}", path.display()));
    let mut outcome = Ok(());
    crate::home::lock::exclusive(&path, || {
        outcome = edit_locked(home, &path, edit);
        Ok(())
    })
    .map_err(lock)?;
    outcome.map(|()| path)
}

fn edit_locked(
    home: &Path,
    path: &Path,
    edit: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<(), AiqError>,
) -> Result<(), AiqError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => TEMPLATE.to_string(),
        Err(e) => {
            return Err(AiqError::Usage(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| AiqError::Usage(format!("invalid config {}: {e}", path.display())))?;
    edit(&mut doc)?;
    write_private(home, path, doc.to_string().as_bytes())
}

/// Creates `home` (0700) if needed and writes `bytes` to `path` (0600),
/// atomically (see [`crate::home::write_atomic`]).
pub fn write_private(home: &Path, path: &Path, bytes: &[u8]) -> Result<(), AiqError> {
    crate::home::write_private(home, path, bytes)
        .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", path.display())))
}

/// Every key the configuration file accepts, as `section.key`
/// (`sources.NAME.url` for a saved source's): what the configuration
/// reference must list, read from the types that parse the file so the
/// two cannot drift apart.
pub fn keys() -> Vec<String> {
    let mut out = Vec::new();
    for &section in fields::<FileConfig>() {
        let inner = match section {
            "llm" => fields::<LlmConfig>(),
            "chat" => fields::<ChatConfig>(),
            "query" => fields::<QueryConfig>(),
            "lua" => fields::<LuaConfig>(),
            "mcp" => fields::<McpConfig>(),
            "examples" => fields::<ExamplesConfig>(),
            "output" => fields::<OutputConfig>(),
            "audit" => fields::<AuditConfig>(),
            "privacy" => fields::<crate::privacy::PrivacyConfig>(),
            "sources" => {
                out.push("sources.default".to_string());
                out.extend(
                    fields::<SavedSource>()
                        .iter()
                        .map(|key| format!("sources.NAME.{key}")),
                );
                continue;
            }
            other => panic!("the section [{other}] has no entry in config::keys"),
        };
        out.extend(inner.iter().map(|key| format!("{section}.{key}")));
    }
    out
}

/// The field names a struct's `Deserialize` asks for.
fn fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};

    struct Names(&'static [&'static str]);
    #[derive(Debug)]
    struct Caught;
    impl std::fmt::Display for Caught {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("caught")
        }
    }
    impl std::error::Error for Caught {}
    impl de::Error for Caught {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Caught
        }
    }
    struct Catcher<'a>(&'a mut Names);
    impl<'de> de::Deserializer<'de> for Catcher<'_> {
        type Error = Caught;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Caught> {
            Err(Caught)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Caught> {
            self.0 .0 = fields;
            Err(Caught)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let mut names = Names(&[]);
    let _ = T::deserialize(Catcher(&mut names));
    names.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_read_from_the_types_that_parse_the_file() {
        let keys = super::keys();
        for key in [
            "llm.model",
            "mcp.max_queued",
            "output.pager",
            "privacy.redact",
            "sources.default",
            "sources.NAME.password_env",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key}: {keys:?}");
        }
    }

    use std::collections::BTreeMap;

    use super::*;

    fn env_with(home: &Path, extra: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let mut map: BTreeMap<String, String> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.insert("AIQ_HOME".into(), home.display().to_string());
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_without_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert_eq!(c.chat.history_limit, 20);
        assert_eq!(c.chat.max_rows, 100);
        assert_eq!(c.query.timeout_secs, 30);
        assert_eq!(c.llm.timeout_secs, 120);
        assert_eq!(c.lua, LuaConfig::default());
        assert_eq!(c.lua.timeout_secs, 10);
        assert_eq!(c.lua.memory_mb, 64);
        assert_eq!(c.lua.max_output_kb, 1024);
        assert_eq!(c.lua.max_rows, 100_000);
        assert_eq!(c.mcp, McpConfig::default());
        assert!(c.sources.is_empty());
    }

    #[test]
    fn file_then_env() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("config.toml"),
            "[llm]\nprovider = \"anthropic\"\nmodel = \"m1\"\n[chat]\nmax_rows = 7\n[lua]\ntimeout_secs = 3\nmax_rows = 50\n[sources]\ndefault = \"shop\"\n[sources.shop]\nurl = \"sqlite:///x.db\"\n",
        )
        .unwrap();
        let c = Config::load(&env_with(
            dir.path(),
            &[("AIQ_MODEL", "m2"), ("AIQ_API_KEY", "k")],
        ))
        .unwrap();
        assert_eq!(c.llm.provider.as_deref(), Some("anthropic"));
        assert_eq!(c.llm.model.as_deref(), Some("m2"));
        assert_eq!(c.llm.api_key.as_deref(), Some("k"));
        assert_eq!(c.chat.max_rows, 7);
        assert_eq!((c.lua.timeout_secs, c.lua.max_rows), (3, 50));
        assert_eq!(c.lua.memory_mb, 64, "unset keys keep their defaults");
        assert!(c.to_masked_toml().contains("[lua]\ntimeout_secs = 3\n"));
        assert_eq!(c.sources.default.as_deref(), Some("shop"));
        assert_eq!(c.sources.get("shop").unwrap().url, "sqlite:///x.db");
        assert!(!c.to_masked_toml().contains("= \"k\""));
    }

    #[test]
    fn the_context_window_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        fs::write(&file, "[llm]\ncontext_tokens = 8192\n").unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert_eq!(c.llm.context_tokens, Some(8192));
        assert!(c.to_masked_toml().contains("context_tokens = 8192"));
        fs::write(&file, "[llm]\ncontext_tokens = 100\n").unwrap();
        let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
        assert!(
            e.to_string().contains("[llm] context_tokens: is 100"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        for (text, key) in [
            ("[chat]\nhistory_limt = 3\n", "history_limt"),
            ("colour = true\n", "colour"),
            (
                "[sources.shop]\nurl = \"x.db\"\npasword_env = \"P\"\n",
                "pasword_env",
            ),
            ("[sources]\nshop = \"x.db\"\n", "sources.shop"),
            ("[lua]\nmemory = 3\n", "memory"),
        ] {
            fs::write(dir.path().join("config.toml"), text).unwrap();
            let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
            assert!(e.to_string().contains(key), "{text}: {e}");
            assert_eq!(e.exit_code(), 2);
        }
    }

    #[test]
    fn privacy_keys_per_source_and_for_all() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("config.toml"),
            "[privacy]\nsamples = false\n[sources.crm]\nurl = \"x.db\"\nexclude = [\"payroll\"]\nredact = [\"customers.email\"]\nsend_results = false\n",
        )
        .unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert_eq!(c.privacy.samples, Some(false));
        let crm = c.sources.get("crm").unwrap().privacy();
        assert_eq!(crm.exclude, Some(vec!["payroll".to_string()]));
        assert_eq!(crm.send_results, Some(false));
        let shown = c.to_masked_toml();
        assert!(shown.contains("redact = [\"customers.email\"]"), "{shown}");
        assert!(shown.contains("[privacy]\nsamples = false"), "{shown}");
        fs::write(
            dir.path().join("config.toml"),
            "[privacy]\nredcat = [\"a.b\"]\n",
        )
        .unwrap();
        let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
        assert!(e.to_string().contains("redcat"), "{e}");
    }

    #[test]
    fn mcp_limits_come_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("config.toml"),
            "[mcp]\ntimeout_secs = 5\nmax_rows = 10\nmax_bytes = 2048\nmax_concurrent = 2\n",
        )
        .unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert_eq!(
            c.mcp,
            McpConfig {
                timeout_secs: 5,
                max_rows: 10,
                max_bytes: 2048,
                max_concurrent: 2,
                max_queued: 64,
                queue_timeout_secs: None,
                session_idle_secs: 1800,
                max_sessions: 256,
            }
        );
        assert!(c
            .to_masked_toml()
            .contains("[mcp]\ntimeout_secs = 5\nmax_rows = 10\n"));
        fs::write(dir.path().join("config.toml"), "[mcp]\nmax_row = 1\n").unwrap();
        let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
        assert!(e.to_string().contains("max_row"), "{e}");
        let template: toml::Table = toml::from_str(TEMPLATE).unwrap();
        assert!(template.contains_key("mcp"));
    }

    #[test]
    fn the_pager_can_be_turned_off_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert!(c.output.pager);
        fs::write(
            dir.path().join("config.toml"),
            "[output]
pager = false
",
        )
        .unwrap();
        let c = Config::load(&env_with(dir.path(), &[])).unwrap();
        assert_eq!(c.output, OutputConfig { pager: false });
        assert!(c.to_masked_toml().contains(
            "[output]
pager = false
"
        ));
        fs::write(
            dir.path().join("config.toml"),
            "[output]
page = false
",
        )
        .unwrap();
        let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
        assert!(e.to_string().contains("page"), "{e}");
        let template: toml::Table = toml::from_str(TEMPLATE).unwrap();
        assert!(template.contains_key("output"));
    }

    #[test]
    fn default_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("config.toml"),
            "[sources]\ndefault = \"nope\"\n",
        )
        .unwrap();
        let e = Config::load(&env_with(dir.path(), &[])).unwrap_err();
        assert!(e.to_string().contains("'nope'"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn edits_keep_comments_and_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let path = edit_file(&home, |doc| {
            doc["sources"]["shop"]["url"] = toml_edit::value("x.db");
            Ok(())
        })
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("# aiq configuration"));
        assert!(text.contains("url = \"x.db\""));
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&home).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let c = Config::load(&env_with(&home, &[])).unwrap();
        assert_eq!(c.sources.get("shop").unwrap().url, "x.db");
    }

    #[test]
    fn names() {
        assert!(validate_name("shop_2-a").is_ok());
        assert!(validate_name("a.db").is_err());
        assert!(validate_name("").is_err());
    }
}
