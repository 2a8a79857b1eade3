//! aiq — ask your data questions in plain language.
//!
//! The library holds everything; `main.rs` only calls [`app::main`]. The
//! layers, from the bottom up:
//!
//! - [`source`]: the [`source::DataSource`] trait and its engines (SQLite,
//!   DuckDB), typed [`source::Value`]s streamed to a [`source::RowSink`].
//! - [`safety`]: the parser gate; the only code that can make a
//!   [`safety::CheckedSql`], which is what `DataSource::execute` requires.
//! - [`schema`]: the catalog an engine reports, and its compact text form.
//! - [`privacy`]: what leaves the machine — hidden tables and columns,
//!   samples, result previews, redacted columns.
//! - [`chart`]: charts of a result — the model (kind chooser, reductions),
//!   terminal text, SVG and PNG.
//! - [`render`]: result formats (auto, table, expanded, csv, tsv, json, jsonl, markdown), each
//!   a `RowSink` over any `io::Write`.
//! - [`config`]: `$AIQ_HOME/config.toml`, loaded once and immutable.
//! - [`llm`]: the [`llm::ChatModel`] trait and its providers (OpenAI-compatible,
//!   Anthropic, Ollama).
//! - [`cancel`]: per-turn cancel tokens and the handle that reaches the
//!   turn in flight.
//! - [`agent`]: the one core every front end drives — a
//!   [`agent::Conversation`] (thread, session file, slash commands) over a
//!   [`agent::Thread`] that runs a turn through the one statement runner and
//!   reports [`agent::Event`]s to an [`agent::EventSink`].
//! - [`lua`]: the Lua sandbox — programs over the same statement runner,
//!   as the model's answers (Lua mode) or script files (`--lua FILE`).
//! - [`session`] and [`home`]: session files; the `$AIQ_HOME` layout and
//!   its one atomic writer.
//! - [`context`]: the composition root — opening sources, connecting the
//!   model, choosing the output, assembling a conversation.
//! - [`frontend`]: the sinks and loops (single-shot, `-e`, chat, the
//!   channel sink for a view on another thread).
//! - [`mcp`]: the Model Context Protocol server (`aiq mcp`) over the same
//!   sources, gate and statement runner.
//! - [`app`] and [`commands`]: the command line and the subcommands.

pub mod agent;
pub mod app;
pub mod cancel;
pub mod chart;
pub mod cleanup;
pub mod cli;
pub mod clip;
pub mod commands;
pub mod config;
pub mod context;
pub mod demo;
pub mod error;
pub mod eval;
pub mod examples;
pub mod flags;
pub mod frontend;
pub mod home;
pub mod interrupt;
pub mod llm;
pub mod lua;
pub mod mcp;
pub mod nesting;
pub mod notes;
pub mod privacy;
pub mod redact;
pub mod render;
mod runtime;
pub mod safety;
pub mod schema;
pub mod session;
pub mod source;
