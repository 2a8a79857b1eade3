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
//! - [`render`]: result formats (table, csv, tsv, json, jsonl, markdown), each
//!   a `RowSink` over any `io::Write`.
//! - [`config`]: `$AIQ_HOME/config.toml`, loaded once and immutable.
//! - [`llm`]: the [`llm::ChatModel`] trait and its providers (OpenAI-compatible,
//!   Anthropic, Ollama).
//! - [`agent`]: the one core every front end drives — [`agent::Thread`] runs
//!   a turn and reports [`agent::Event`]s to an [`agent::EventSink`].
//! - [`frontend`]: the sinks and loops (single-shot, chat).
//! - [`session`]: session files — validation, atomic saving, listing.
//! - [`app`] and [`commands`]: the command line.

pub mod agent;
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod frontend;
pub mod interrupt;
pub mod llm;
pub mod render;
pub mod safety;
pub mod schema;
pub mod session;
pub mod source;
