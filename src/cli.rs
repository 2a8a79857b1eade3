//! The command line (SPEC §2.1), as clap derive types. Parsing only: what the
//! flags do lives in [`crate::app`] and [`crate::commands`].

use clap::{Args, Parser, Subcommand};

use crate::agent::Mode;
use crate::chart::{ImageFormat, Kind};
use crate::render::Format;

const EXAMPLES: &str = "\
Examples:
  aiq shop.db                                   # chat (on a terminal)
  aiq shop.db --tui                             # full-screen view
  aiq -s ~/.aiqconfig/session_20260126100000.json   # continue a saved chat
  aiq shop.db -q \"how many customers per country?\"
  echo \"top 5 products by revenue\" | aiq shop.db -f json
  aiq shop.db -q \"orders per month in 2025\" --sql-only
  aiq shop.db -e \"SELECT country, count(*) FROM customers GROUP BY 1\"
  aiq shop.duckdb -e \"SELECT * FROM orders LIMIT 5\" -f json
  aiq ./exports/ -e \"SELECT * FROM sales\" -f csv > sales.csv     # a folder of CSV/Parquet files
  aiq sources add shop ./shop.db && aiq shop -e \"SELECT 1\"
  aiq schema shop                                                  # what aiq sees in a source
  aiq schema shop --as-sent                                        # exactly what a request carries
  aiq notes edit shop                                              # tell the model what the schema cannot
  aiq mcp shop.db                                                  # serve it to MCP clients (assistants, agents)
  aiq shop.db --allow-write --yes -e \"DELETE FROM carts WHERE stale\"
  aiq shop.db --lua report.lua -f csv                              # run a Lua script (no model)
  aiq shop.db --mode lua -q \"compare each country's revenue with last year\"
  aiq logs --since 1d                                              # the Lua runs of the last day

SOURCE is a .db/.sqlite/.sqlite3 (SQLite) or .duckdb/.ddb (DuckDB) file, a
.csv/.tsv/.parquet/.json/.jsonl/.ndjson file or a folder of them, a
sqlite:// or duckdb:// URL, or a saved source name. Without SOURCE the
default saved source is used.

Exit codes: 0 ok, 1 query failed, 2 usage error, 3 data source error,
4 model error, 5 refused by the safety policy, 130 interrupted.";

/// aiq — ask your data questions in plain language: aiq writes the SQL,
/// proves it safe, runs it and shows the answer.
#[derive(Debug, Parser)]
#[command(
    name = "aiq",
    version,
    about = "Ask your data questions in plain language: aiq writes the SQL, proves it safe, runs it and shows the answer",
    after_long_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Data source: a file, a folder of data files, a URL or a saved source name
    #[arg(value_name = "SOURCE")]
    pub source: Option<String>,

    /// Full-screen view: conversation, result grid and log at once
    #[arg(long, conflicts_with_all = ["question", "execute", "lua"])]
    pub tui: bool,

    #[command(flatten)]
    pub run: RunArgs,

    #[command(flatten)]
    pub ask: AskArgs,

    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Flags for running statements against a source.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// Run SQL directly (no model), through the same safety gate
    #[arg(
        short = 'e',
        long = "execute",
        value_name = "SQL",
        allow_hyphen_values = true
    )]
    pub execute: Option<String>,

    /// Output format: auto, table, expanded, csv, tsv, json, jsonl, markdown [default: auto on a terminal, csv otherwise]
    #[arg(short = 'f', long, value_name = "FMT", value_parser = parse_format)]
    pub format: Option<Format>,

    /// Rows shown in table/markdown output (default 100); limits every format when given
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_count)]
    pub max_rows: Option<usize>,

    /// Never send results through a pager (see [output] pager)
    #[arg(long)]
    pub no_pager: bool,

    /// Allow statements that change data (each is confirmed; scripts also need --yes)
    #[arg(long)]
    pub allow_write: bool,

    /// Answer yes to confirmations
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// Draw the result as a chart on stdout instead of the table: bar, line, scatter or hist [default: chosen from the columns]
    #[arg(long, value_name = "KIND", num_args = 0..=1, value_parser = parse_chart_kind)]
    pub chart: Option<Option<Kind>>,

    /// Also write the chart as an image: FILE.svg or FILE.png
    #[arg(long, value_name = "FILE", value_parser = parse_chart_out)]
    pub chart_out: Option<std::path::PathBuf>,

    /// Run a Lua script in the sandbox against SOURCE (no model); `-` reads it from stdin
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "execute",
        allow_hyphen_values = true
    )]
    pub lua: Option<String>,
}

/// Flags for asking questions.
#[derive(Debug, Clone, Default, Args)]
pub struct AskArgs {
    /// Ask one question and exit (the question may also come on stdin)
    #[arg(
        short = 'q',
        long,
        value_name = "TEXT",
        conflicts_with_all = ["execute", "lua"],
        allow_hyphen_values = true
    )]
    pub question: Option<String>,

    /// What the model writes: sql (one statement) or lua (a program run in the sandbox)
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub mode: Option<Mode>,

    /// Restore a saved session (chat), or answer one follow-up inside it (with -q)
    #[arg(short = 's', long, value_name = "FILE")]
    pub session: Option<std::path::PathBuf>,

    /// Print the generated SQL and do not run it
    #[arg(long)]
    pub sql_only: bool,

    /// Also print the generated SQL to stderr
    #[arg(long)]
    pub show_sql: bool,

    /// Question/answer pairs kept in the prompt (default 20)
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_count)]
    pub history_limit: Option<usize>,

    #[command(flatten)]
    pub model: ModelArgs,
}

/// Which model to ask.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelArgs {
    /// LLM provider: openai (any OpenAI-compatible server), anthropic, ollama
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// Model name
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Base URL of the model API, e.g. http://localhost:8080/v1
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Wait for the whole reply instead of streaming
    #[arg(long)]
    pub no_stream: bool,

    /// The model's context window in tokens (default: asked from the server or learned)
    #[arg(long, value_name = "N", value_parser = parse_window)]
    pub context_tokens: Option<usize>,
}

impl ModelArgs {
    /// The model flags, for `llm::settings::resolve`.
    pub fn llm_flags(&self) -> crate::llm::LlmFlags {
        crate::llm::LlmFlags {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            no_stream: self.no_stream,
            context_tokens: self.context_tokens,
        }
    }
}

/// Flags every command takes.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// Plain output without colour (also when NO_COLOR is set or stdout is not a terminal)
    #[arg(long, global = true)]
    pub no_color: bool,

    /// No running indicator, counters or footers on stderr
    #[arg(long, global = true)]
    pub quiet: bool,

    /// Only these tables are described to the model and queryable (patterns with * and ?)
    #[arg(long, global = true, value_name = "PATTERN,…", value_delimiter = ',')]
    pub tables: Vec<String>,

    /// The table name of a glob or single-file source (default: its folder's or file's name)
    #[arg(long = "name", global = true, value_name = "NAME")]
    pub table_name: Option<String>,

    /// More diagnostics on stderr (-vv for debug detail)
    #[arg(short = 'v', long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the schema aiq sees in a source (as the model gets it)
    Schema {
        /// Data source (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
        /// Read the schema from the source again instead of the cache
        #[arg(long)]
        refresh: bool,
        /// Print exactly what a request to the model carries
        #[arg(long)]
        as_sent: bool,
        /// With --as-sent: the request for this question (its tables ranked first, its verified examples)
        #[arg(long, value_name = "TEXT", requires = "as_sent")]
        question: Option<String>,
        /// Print straight to the terminal, never through the pager
        #[arg(long)]
        no_pager: bool,
    },
    /// A source's notes for the model: `edit` (opens $EDITOR), `show`
    #[command(subcommand)]
    Notes(NotesCommand),
    /// List saved sessions; `show FILE`, `rm FILE`, `search TEXT`
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsCommand>,
    },
    /// Manage saved sources
    #[command(subcommand)]
    Sources(SourcesCommand),
    /// Show or create the configuration
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check the config, the source and the model endpoint, one line each
    Doctor {
        /// Data source to check (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Show the audit log of Lua runs and MCP tool calls ($AIQ_HOME/logs)
    Logs {
        /// Only runs since then: a date (2026-01-26), a time (RFC 3339) or an age (90m, 12h, 7d)
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Print the log lines as they are stored (JSON, one per run), e.g. for jq
        #[arg(long)]
        json: bool,
    },
    /// Write the demo shop, save it as the source `demo` and open a chat on
    /// it (or, without a model, show example results and how to connect one)
    Demo {
        /// Write the demo shop again
        #[arg(long)]
        reset: bool,
        /// Open the full-screen view on the shop instead of the chat
        #[arg(long, conflicts_with_all = ["question", "execute", "lua"])]
        tui: bool,
        /// Run the demo shop's built-in evaluation suite (see `aiq eval`; its flags work here too)
        #[arg(long, conflicts_with_all = ["question", "execute", "lua", "tui"])]
        eval: bool,
        #[command(flatten)]
        suite: EvalRun,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        ask: AskArgs,
    },
    /// Serve sources to Model Context Protocol clients (desktop assistants,
    /// coding agents) over stdio, or streamable HTTP with --http
    Mcp(McpArgs),
    /// Measure how often answers are right: ask a suite's questions and
    /// compare each answer's rows with the reference SQL's
    Eval(EvalArgs),
    /// Verified examples: questions whose SQL a person confirmed, sent to
    /// the model with similar questions
    #[command(subcommand)]
    Examples(ExamplesCommand),
    /// Print a shell completion script
    Completions {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
    },
}

/// `aiq mcp [SOURCE…]`.
#[derive(Debug, Clone, Default, Args)]
pub struct McpArgs {
    /// Sources to serve: files, folders, URLs or saved names (default: every saved source)
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<String>,

    /// Serve streamable HTTP on ADDR (PORT or HOST:PORT; the host is 127.0.0.1 unless given) instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// The bearer token HTTP clients must send (`Authorization: Bearer TOKEN`; default: $AIQ_MCP_TOKEN, else a new one printed at start)
    #[arg(long, value_name = "TOKEN", requires = "http")]
    pub token: Option<String>,

    /// Allow statements that change data; each still needs the client's confirmation
    #[arg(long)]
    pub allow_write: bool,

    #[command(flatten)]
    pub model: ModelArgs,
}

/// `aiq eval SUITE [SOURCE]`.
#[derive(Debug, Clone, Default, Args)]
pub struct EvalArgs {
    /// The suite: a TOML file of questions and reference SQL
    #[arg(value_name = "SUITE")]
    pub suite: std::path::PathBuf,
    /// Data source (default: the suite's `source`, else the default saved source)
    #[arg(value_name = "SOURCE")]
    pub source: Option<String>,
    /// Report format: table, json, csv or markdown (default: from -o's extension, else table)
    #[arg(short = 'f', long, value_name = "FORMAT")]
    pub format: Option<EvalFormat>,
    #[command(flatten)]
    pub run: EvalRun,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// How a suite is run and reported: the flags `aiq eval` and
/// `aiq demo --eval` share.
#[derive(Debug, Clone, Args)]
pub struct EvalRun {
    /// Only the cases with one of these tags
    #[arg(long, value_name = "T,…", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Cases asked at once
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_jobs)]
    pub jobs: usize,
    /// Exit 1 when the pass rate is below RATE (0.8 or 80%)
    #[arg(long, value_name = "RATE", value_parser = crate::eval::report::parse_rate)]
    pub min: Option<f64>,
    /// Say which cases changed since an earlier JSON report
    #[arg(long, value_name = "REPORT.json")]
    pub compare: Option<std::path::PathBuf>,
    /// Send no verified examples with the questions
    #[arg(long)]
    pub no_examples: bool,
    /// Relative tolerance when comparing numbers
    #[arg(long, value_name = "X", default_value_t = 1e-6)]
    pub tolerance: f64,
    /// Write the report to FILE (stdout then gets the summary)
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

impl Default for EvalRun {
    fn default() -> Self {
        EvalRun {
            tags: Vec::new(),
            jobs: 1,
            min: None,
            compare: None,
            no_examples: false,
            tolerance: 1e-6,
            output: None,
        }
    }
}

impl EvalRun {
    /// The flags given that differ from their defaults.
    pub fn given(&self) -> Vec<&'static str> {
        let d = EvalRun::default();
        let mut out = Vec::new();
        for (name, given) in [
            ("--tags", !self.tags.is_empty()),
            ("--jobs", self.jobs != d.jobs),
            ("--min", self.min.is_some()),
            ("--compare", self.compare.is_some()),
            ("--no-examples", self.no_examples),
            ("--tolerance", self.tolerance != d.tolerance),
            ("--output", self.output.is_some()),
        ] {
            if given {
                out.push(name);
            }
        }
        out
    }
}

/// The formats of an eval report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalFormat {
    Table,
    Json,
    Csv,
    Markdown,
}

#[derive(Debug, Subcommand)]
pub enum ExamplesCommand {
    /// List a source's verified examples
    List {
        /// Data source (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
    },
    /// Keep a question and its SQL as a verified example (the SQL is checked first)
    Add {
        /// Data source (a saved name, a path or a URL)
        #[arg(value_name = "SOURCE")]
        source: String,
        #[arg(long, value_name = "TEXT")]
        question: String,
        #[arg(long, value_name = "SQL")]
        sql: String,
    },
    /// Forget an example
    Rm {
        /// Data source
        #[arg(value_name = "SOURCE")]
        source: String,
        /// The example's id (see `aiq examples list`)
        id: String,
    },
    /// Add the examples of a suite (TOML) or a CSV file with `question,sql`
    Import {
        /// Data source
        #[arg(value_name = "SOURCE")]
        source: String,
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
    },
    /// Run every example's SQL through the gate against today's schema and name those that no longer work
    Check {
        /// Data source (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List saved sessions, newest first
    List,
    /// Show a session's conversation
    Show {
        /// A session file, or its name in $AIQ_HOME
        file: String,
    },
    /// Delete a saved session
    Rm {
        /// A session file, or its name in $AIQ_HOME
        file: String,
    },
    /// Find earlier questions and answers in the saved sessions
    Search {
        /// Words to look for
        text: String,
        /// Only sessions on this source (a saved name, a path or a URL)
        #[arg(long, value_name = "SOURCE")]
        source: Option<String>,
        /// Turns to show (default 10, at most 20)
        #[arg(long, value_name = "N", value_parser = parse_count)]
        limit: Option<usize>,
    },
}

#[derive(Debug, Subcommand)]
pub enum NotesCommand {
    /// Open the source's notes in $VISUAL or $EDITOR
    Edit {
        /// Data source (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
    },
    /// Print the source's notes
    Show {
        /// Data source (default: the default saved source)
        #[arg(value_name = "SOURCE")]
        source: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// List saved sources (the default is marked with *)
    List,
    /// Save a source under a name
    Add {
        /// Letters, digits, '_' and '-'
        name: String,
        /// A file, a folder of data files or a URL
        #[arg(value_name = "URL_OR_PATH")]
        location: String,
        /// For a server: the environment variable that holds the password
        /// (aiq never writes a password to the config)
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
    },
    /// Forget a saved source (also `rm`, as for sessions)
    #[command(alias = "rm")]
    Remove { name: String },
    /// Make a saved source the default
    Default { name: String },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration, secrets masked
    Show,
    /// Print the config file's path
    Path,
    /// Write a commented config file if there is none
    Init {
        /// Replace an existing file, keeping it as config.toml.bak
        #[arg(long, conflicts_with = "print")]
        force: bool,
        /// Print the commented example instead of writing it
        #[arg(long)]
        print: bool,
    },
}

/// `--jobs`: cases at once, 1 to 64.
fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(n),
        _ => Err(format!("`{s}` is not a number of jobs from 1 to 64")),
    }
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

fn parse_chart_kind(s: &str) -> Result<Kind, String> {
    s.parse::<Kind>()
        .map_err(|e| format!("{e}; put SOURCE before --chart"))
}

fn parse_chart_out(s: &str) -> Result<std::path::PathBuf, String> {
    let path = std::path::PathBuf::from(s);
    ImageFormat::of(&path)?;
    Ok(path)
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

/// A count of rows or pairs: a whole number, 0 or more.
fn parse_window(s: &str) -> Result<usize, String> {
    let min = crate::llm::window::MIN_TOKENS;
    match s.trim().replace('_', "").parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!(
            "'{s}' is not a context window: give the model's window in tokens, {min} or more (e.g. 8192)"
        )),
    }
}

fn parse_count(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| format!("'{s}' is not a count: give a whole number, 0 or more"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn source_and_flags() {
        let cli = Cli::try_parse_from([
            "aiq",
            "shop.db",
            "-e",
            "SELECT 1",
            "-f",
            "json",
            "--max-rows",
            "5",
        ])
        .unwrap();
        assert_eq!(cli.source.as_deref(), Some("shop.db"));
        assert_eq!(cli.run.execute.as_deref(), Some("SELECT 1"));
        assert_eq!(cli.run.format, Some(Format::Json));
        assert_eq!(cli.run.max_rows, Some(5));
        for bad in ["-1", "abc", "2.5"] {
            let e = Cli::try_parse_from(["aiq", "x.db", "--max-rows", bad]).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("is not a count: give a whole number, 0 or more"),
                "{text}"
            );
            assert!(!text.contains("-- -1"), "{text}");
        }
    }

    #[test]
    fn subcommands() {
        let cli = Cli::try_parse_from(["aiq", "sources", "add", "shop", "./shop.db"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Sources(SourcesCommand::Add { .. }))
        ));
        let cli = Cli::try_parse_from(["aiq", "mcp", "a.db", "b.csv", "--http", "8808"]).unwrap();
        match cli.command {
            Some(Command::Mcp(args)) => {
                assert_eq!(args.sources, ["a.db", "b.csv"]);
                assert_eq!(args.http.as_deref(), Some("8808"));
                assert!(!args.allow_write);
            }
            other => panic!("{other:?}"),
        }
        let e = Cli::try_parse_from(["aiq", "x.db", "-f", "xml"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let cli = Cli::try_parse_from(["aiq", "x.db", "--lua", "-", "--mode", "lua"]).unwrap();
        assert_eq!(cli.run.lua.as_deref(), Some("-"));
        assert_eq!(cli.ask.mode, Some(Mode::Lua));
        let e = Cli::try_parse_from(["aiq", "x.db", "--mode", "python"]).unwrap_err();
        assert!(e.to_string().contains("choose sql or lua"), "{e}");
        assert!(Cli::try_parse_from(["aiq", "x.db", "--lua", "a.lua", "-q", "x"]).is_err());
        assert!(Cli::try_parse_from(["aiq", "x.db", "--lua", "a.lua", "-e", "x"]).is_err());
        let e = Cli::try_parse_from(["aiq", "x.db", "--tui", "-q", "why?"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            Cli::try_parse_from(["aiq", "-s", "s.json", "--tui"])
                .unwrap()
                .tui
        );
    }

    #[test]
    fn chart_flags() {
        let cli = Cli::try_parse_from(["aiq", "x.db", "-q", "q", "--chart"]).unwrap();
        assert_eq!(cli.run.chart, Some(None));
        let cli = Cli::try_parse_from(["aiq", "x.db", "--chart", "histogram", "-e", "S"]).unwrap();
        assert_eq!(cli.run.chart, Some(Some(Kind::Hist)));
        let cli = Cli::try_parse_from(["aiq", "x.db", "-e", "S", "--chart-out", "a.PNG"]).unwrap();
        assert_eq!(cli.run.chart, None);
        assert_eq!(cli.run.chart_out, Some("a.PNG".into()));
        let e = Cli::try_parse_from(["aiq", "--chart", "x.db", "-q", "q"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("unknown chart kind 'x.db' (choose bar, line, scatter or hist); put SOURCE before --chart"), "{e}");
        let e = Cli::try_parse_from(["aiq", "x.db", "--chart-out", "a.jpg"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("give a file name ending in .svg or .png"),
            "{e}"
        );
    }
}
