//! The composition root: what every mode and subcommand gets (the loaded,
//! immutable configuration, the global flags, the environment) and the one
//! place that turns settings into working parts — a source opened and
//! introspected, the model connected, the output format chosen, a
//! [`Conversation`] assembled. Front ends sit above this; the core below it
//! knows nothing of flags or the terminal.

use std::io::{self, IsTerminal};
use std::path::Path;
use std::time::Duration;

use crate::agent::{
    Conversation, ConversationOptions, Keep, Opened, SourceOpener, Thread, ThreadOptions,
};
use crate::cli::{AskArgs, GlobalArgs, ModelArgs, RunArgs};
use crate::config::Config;
use crate::error::AiqError;
use crate::llm::{self, ChatModel};
use crate::notes::Notes;
use crate::privacy::{Guard, Privacy};
use crate::render::Format;
use crate::safety::Policy;
use crate::source::{self, strip_password, OpenOptions, PasswordAsk, Resolved, SourceError};

/// What every command gets.
pub struct Context<'a> {
    pub config: &'a Config,
    pub global: &'a GlobalArgs,
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// How the front end asks for a password a server wants (a terminal
    /// prompt without echo); `None`: never asked.
    pub ask_password: Option<PasswordAsk>,
}

impl Context<'_> {
    /// Resolves SOURCE, or the default saved source when none is given.
    pub fn resolve_source(&self, arg: Option<&str>) -> Result<Resolved, AiqError> {
        resolve(self.config, arg, self.global.table_name.as_deref())
    }

    /// Colour only on a terminal, without `--no-color` and without `NO_COLOR`.
    pub fn color(&self) -> bool {
        self.color_allowed() && io::stdout().is_terminal()
    }

    /// The same for what goes to stderr (spinner, streamed answer).
    pub fn color_stderr(&self) -> bool {
        self.color_allowed() && io::stderr().is_terminal()
    }

    /// Charts in ASCII: the locale says the terminal is not UTF-8 (LC_ALL,
    /// LC_CTYPE or LANG, the first that is set, without UTF-8), or it is the
    /// Linux console (no braille glyphs).
    pub fn ascii_charts(&self) -> bool {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| (self.env)(k).filter(|v| !v.is_empty()));
        let not_utf8 = locale.is_some_and(|l| {
            let l = l.to_ascii_lowercase();
            !(l.contains("utf-8") || l.contains("utf8"))
        });
        not_utf8 || (self.env)("TERM").as_deref() == Some("linux")
    }

    fn color_allowed(&self) -> bool {
        !self.global.no_color && (self.env)("NO_COLOR").map(|v| v.is_empty()).unwrap_or(true)
    }

    /// How this run opens a source: the config's timeout, cache and memory
    /// ceiling, and the front end's way of asking for a password.
    pub fn open_options(&self, allow_write: bool) -> OpenOptions {
        open_options(self.config, allow_write, self.ask_password.clone())
    }

    /// The statement timeout from the config.
    pub fn query_timeout(&self) -> Duration {
        query_timeout(self.config)
    }

    /// Resolves (SOURCE or the default), opens a source and reads its
    /// catalog (from the cache when the source has not changed). What the
    /// user should know about it goes to stderr, once in this process.
    pub fn open_source(&self, arg: Option<&str>, allow_write: bool) -> Result<Opened, AiqError> {
        self.said(self.open(arg, allow_write, false))
    }

    fn open(
        &self,
        arg: Option<&str>,
        allow_write: bool,
        refresh: bool,
    ) -> Result<Opened, AiqError> {
        let names = (
            self.global.tables.as_slice(),
            self.global.table_name.as_deref(),
        );
        let how = How {
            allow_write,
            refresh,
            ask: self.ask_password.clone(),
        };
        open_named(self.config, arg, how, names)
    }

    /// `opened` with its warnings said on stderr, each once in this process.
    fn said(&self, opened: Result<Opened, AiqError>) -> Result<Opened, AiqError> {
        if let Ok(o) = &opened {
            for warning in &o.warnings {
                warn_once(warning);
            }
        }
        opened
    }

    /// [`Context::open_source`], reading the catalog afresh (`aiq schema
    /// --refresh`); the cache keeps the new one.
    pub fn open_source_fresh(&self, arg: Option<&str>) -> Result<Opened, AiqError> {
        self.said(self.open(arg, false, true))
    }

    /// The privacy settings of a resolved source: its keys in the config,
    /// `[privacy]`, and `--tables`.
    pub fn privacy_of(&self, resolved: &Resolved) -> Privacy {
        privacy_of(self.config, &resolved.label, &self.global.tables)
    }

    /// The gate's policy for an opened source: with tables hidden, their
    /// names come from its catalog (cached when it has not changed).
    pub fn policy_for(
        &self,
        resolved: &Resolved,
        source: &dyn crate::source::DataSource,
        allow_write: bool,
    ) -> Result<Policy, AiqError> {
        let privacy = self.privacy_of(resolved);
        if !privacy.hides_tables() {
            return Ok(Policy {
                vouched: privacy.allow_functions.clone(),
                ..Policy::new(allow_write)
            });
        }
        let catalog = catalog_of(&self.config.home, resolved, source, false)?;
        Ok(Guard::new(privacy, &catalog).0.policy(allow_write))
    }

    /// A source as session files name it (without opening it).
    pub fn session_name(&self, arg: &str) -> Result<String, AiqError> {
        let resolved = self.resolve_source(Some(arg))?;
        Ok(names_of(self.config, &resolved.label).0)
    }

    /// The file name of a source's notes (see [`crate::notes::key`]).
    pub fn notes_key(&self, arg: Option<&str>) -> Result<String, AiqError> {
        let resolved = self.resolve_source(arg)?;
        let (session_name, _) = names_of(self.config, &resolved.label);
        Ok(crate::notes::key(&session_name))
    }

    /// What `aiq schema` prints when it shows the source's catalog as read,
    /// whole — nothing hidden, every sample allowed, no notes to weave in —
    /// with the source's label; `None` when the settings change what is
    /// shown (then the catalog is opened as the model sees it). Opens the
    /// source read-only; the text comes from the cache when the source has
    /// not changed (without decoding the catalog), else, or with `refresh`,
    /// from reading the catalog afresh (the cache keeps it).
    pub fn schema_text(
        &self,
        arg: Option<&str>,
        refresh: bool,
    ) -> Result<Option<SchemaText>, AiqError> {
        let resolved = self.resolve_source(arg)?;
        let privacy = self.privacy_of(&resolved);
        if privacy.hides_tables() || !privacy.samples || !privacy.redact.is_empty() {
            return Ok(None);
        }
        let (session_name, label) = names_of(self.config, &resolved.label);
        if !Notes::load(&self.config.home, &crate::notes::key(&session_name)).is_empty() {
            return Ok(None);
        }
        let home = &self.config.home;
        if let (Some(identity), Some(fingerprint), false) = (
            resolved.spec.identity(),
            resolved.spec.unopened_fingerprint(),
            refresh,
        ) {
            if let Some(text) = crate::schema::cache::load_text(home, &identity, &fingerprint) {
                tracing::info!("schema text of {identity} from the cache, the file unopened");
                return Ok(Some(SchemaText { text, label }));
            }
        }
        let source = open_spec(&resolved, self.open_options(false))?;
        let key = cache_key(home, &resolved, source.as_ref());
        if let (Some(key), false) = (&key, refresh) {
            if let Some(text) = crate::schema::cache::load_text(home, &key.identity, &key.since.key)
            {
                tracing::info!("schema text of {} from the cache", key.identity);
                key.restamp(home);
                return Ok(Some(SchemaText { text, label }));
            }
        }
        let catalog = introspect(home, key, source.as_ref())?;
        Ok(Some(SchemaText {
            text: catalog.render(),
            label,
        }))
    }

    /// Opens sources for `/source`, with the same settings.
    pub fn opener(&self, allow_write: bool) -> Box<dyn SourceOpener> {
        Box::new(ConfigOpener {
            config: self.config.clone(),
            allow_write,
            tables: self.global.tables.clone(),
        })
    }

    /// The model the flags, environment and config name.
    pub fn connect_model(&self, flags: &ModelArgs) -> Result<Box<dyn ChatModel>, AiqError> {
        let mut settings = llm::settings::resolve(&self.config.llm, &flags.llm_flags(), self.env)?;
        settings.home = Some(self.config.home.clone());
        tracing::info!(?settings, "model");
        Ok(llm::connect(&settings)?)
    }

    /// A conversation over an opened source with a connected model.
    pub fn conversation(
        &self,
        model: Box<dyn ChatModel>,
        opened: Opened,
        keep: Keep,
        run: &RunArgs,
        ask: &AskArgs,
    ) -> Conversation {
        let mut thread = Thread::new(
            model,
            opened.source,
            opened.catalog,
            ThreadOptions {
                history_limit: ask.history_limit.unwrap_or(self.config.chat.history_limit),
                allow_write: run.allow_write,
                execute: !ask.sql_only,
                today: None,
            },
        );
        thread.set_view(opened.guard, opened.notes);
        thread.set_examples(opened.examples);
        let format = output_format(run);
        let mut conversation = Conversation::new(
            thread,
            opened.label,
            opened.session_name,
            keep,
            ConversationOptions {
                home: self.config.home.clone(),
                format,
                stale_after_hours: self.config.chat.stale_after_hours,
                opener: self.opener(run.allow_write),
            },
        );
        conversation.set_kinds(crate::lua::answer_kinds(self.config.lua.clone()));
        if let Some(mode) = ask.mode {
            conversation.set_mode(mode);
        }
        conversation
    }
}

/// Resolves SOURCE (or the default); `name` is `--name`, the table name of
/// a glob or single-file source.
fn resolve(
    config: &Config,
    arg: Option<&str>,
    name_flag: Option<&str>,
) -> Result<Resolved, AiqError> {
    let name = match arg {
        Some(a) => a.to_string(),
        None => match &config.sources.default {
            Some(d) => d.clone(),
            None => {
                return Err(AiqError::Usage(
                    "no data source given and no default saved: pass SOURCE (a file, folder or URL), or save one with `aiq sources add NAME PATH` and `aiq sources default NAME`".into(),
                ))
            }
        },
    };
    let mut resolved = source::resolve(&name, &config.sources).map_err(source_error)?;
    if let Some(table) = name_flag {
        source::rename_table(&mut resolved.spec, table)
            .map_err(|e| AiqError::Usage(format!("--name: {}", e.0)))?;
    }
    Ok(resolved)
}

/// How `config` opens a source: its timeout, views cache and memory
/// ceiling, with `ask` for a server's password.
fn open_options(config: &Config, allow_write: bool, ask: Option<PasswordAsk>) -> OpenOptions {
    OpenOptions {
        allow_write,
        timeout: query_timeout(config),
        cache: Some(crate::home::views_cache(&config.home)),
        memory_limit: config.query.memory_limit.clone(),
        password: ask,
    }
}

fn query_timeout(config: &Config) -> Duration {
    Duration::from_secs(config.query.timeout_secs.max(1))
}

/// Resolves, opens and introspects a source, and names it for people and
/// for session files.
/// How a source is opened: for writes, reading its catalog afresh, and how
/// a password is asked for.
struct How {
    allow_write: bool,
    refresh: bool,
    ask: Option<PasswordAsk>,
}

fn open_named(
    config: &Config,
    arg: Option<&str>,
    how: How,
    (tables, name_flag): (&[String], Option<&str>),
) -> Result<Opened, AiqError> {
    let resolved = resolve(config, arg, name_flag)?;
    let options = open_options(config, how.allow_write, how.ask);
    let source = source::open(&resolved.spec, options).map_err(source_error)?;
    let mut warnings = source.warnings();
    let full = catalog_of(&config.home, &resolved, source.as_ref(), how.refresh)?;
    let privacy = privacy_of(config, &resolved.label, tables);
    let (guard, catalog) = Guard::new(privacy, &full);
    let catalog = crate::agent::runner::withhold_derived_samples(source.as_ref(), &guard, catalog);
    let (session_name, label) = names_of(config, &resolved.label);
    let key = crate::notes::key(&session_name);
    let (notes, bad) = Notes::load_checked(&config.home, &key);
    warnings.extend(bad);
    let examples = crate::agent::verified::Verified::load(&config.home, &key, config.examples.max);
    Ok(Opened {
        source,
        catalog,
        guard,
        notes,
        examples,
        session_name,
        label,
        warnings,
    })
}

/// A warning on stderr, once in this process (an MCP server opens its
/// sources again and again).
fn warn_once(warning: &str) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if let Ok(mut said) = SAID.lock() {
        if said.iter().any(|w| w == warning) {
            return;
        }
        said.push(warning.to_string());
    }
    crate::error::stderr_line(&format!("aiq: warning: {warning}"));
}

/// The privacy settings of the source named `name` (saved or not).
fn privacy_of(config: &Config, name: &str, tables: &[String]) -> Privacy {
    let own = config.sources.get(name).map(|s| s.privacy());
    Privacy::resolve(&config.privacy, own.as_ref(), tables)
}

/// A resolved source's names: for session files (and notes), and for people.
fn names_of(config: &Config, name: &str) -> (String, String) {
    let name = name.to_string();
    if name.contains("://") {
        let shown = strip_password(&name);
        (shown.clone(), shown)
    } else if config.sources.get(&name).is_some() {
        (name.clone(), name)
    } else {
        let path = Path::new(&name);
        let absolute = std::fs::canonicalize(path)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| name.clone());
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        (absolute, file)
    }
}

/// [`Context::schema_text`]'s result.
pub struct SchemaText {
    /// The catalog's compact text form (empty when there are no tables).
    pub text: String,
    /// The source as people see it.
    pub label: String,
}

/// The source's catalog: from the cache when its fingerprint is the one
/// taken now, else read from the source (and kept for next time).
fn catalog_of(
    home: &Path,
    resolved: &Resolved,
    source: &dyn crate::source::DataSource,
    refresh: bool,
) -> Result<crate::schema::Catalog, AiqError> {
    use crate::schema::cache;
    let key = cache_key(home, resolved, source);
    if let (Some(key), false) = (&key, refresh) {
        if let Some(catalog) = cache::load(home, &key.identity, &key.since.key) {
            tracing::info!("catalog of {} from the cache", key.identity);
            key.restamp(home);
            return Ok(catalog);
        }
    }
    introspect(home, key, source)
}

/// Where a source's catalog is cached (its identity: a path, a URL without
/// password) and under what fingerprint.
struct CacheKey {
    identity: String,
    since: crate::source::Since,
}

impl CacheKey {
    /// Keeps the entry just used under the fingerprint of now, when the
    /// source asked for it.
    fn restamp(&self, home: &Path) {
        if let Some(now) = &self.since.restamp {
            crate::schema::cache::restamp(home, &self.identity, now);
        }
    }
}

/// The source's identity and its fingerprint now (taken knowing the one
/// its cached catalog was kept with, so a source can answer cheaply that
/// nothing changed).
fn cache_key(
    home: &Path,
    resolved: &Resolved,
    source: &dyn crate::source::DataSource,
) -> Option<CacheKey> {
    let identity = resolved.spec.identity()?;
    let cached = crate::schema::cache::stored_fingerprint(home, &identity);
    let since = source.fingerprint_since(cached.as_deref())?;
    Some(CacheKey { identity, since })
}

/// Reads the catalog from the source and keeps it in the cache under `key`
/// (the source's identity and fingerprint of now), when there is one.
fn introspect(
    home: &Path,
    key: Option<CacheKey>,
    source: &dyn crate::source::DataSource,
) -> Result<crate::schema::Catalog, AiqError> {
    let catalog = source.introspect().map_err(source_error)?;
    if let Some(key) = &key {
        crate::schema::cache::store(home, &key.identity, key.since.now(), &catalog);
    }
    Ok(catalog)
}

/// Opens a resolved source; what the user should know about it (a skipped
/// data file) goes to stderr.
pub fn open_spec(
    resolved: &Resolved,
    options: OpenOptions,
) -> Result<Box<dyn crate::source::DataSource>, AiqError> {
    let source = source::open(&resolved.spec, options).map_err(source_error)?;
    for warning in source.warnings() {
        crate::error::stderr_line(&format!("aiq: warning: {warning}"));
    }
    Ok(source)
}

/// `/source` for a conversation: the config it was started with.
struct ConfigOpener {
    config: Config,
    allow_write: bool,
    tables: Vec<String>,
}

impl SourceOpener for ConfigOpener {
    fn open(&self, name: &str, ask: PasswordAsk) -> Result<Opened, String> {
        let how = How {
            allow_write: self.allow_write,
            refresh: false,
            ask: Some(ask),
        };
        open_named(&self.config, Some(name), how, (&self.tables, None)).map_err(|e| e.to_string())
    }
}

/// The output format: `-f`, else a table on a terminal and CSV elsewhere.
pub fn output_format(args: &RunArgs) -> Format {
    args.format.unwrap_or(if io::stdout().is_terminal() {
        Format::Auto
    } else {
        Format::Csv
    })
}

pub(crate) fn source_error(e: SourceError) -> AiqError {
    AiqError::Source(e.0)
}
