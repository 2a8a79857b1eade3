//! The Lua sandbox (SPEC §8): programs — written by the model in Lua mode,
//! or kept as script files and run with `--lua FILE` — that call the
//! database as often as they need through the `aiq` table and combine the
//! results. One fresh Lua 5.4 state per run, only the safe libraries, every
//! statement through the one statement runner and its safety gate, limits
//! that no `pcall` can swallow, and one audit log line per run.
//!
//! - [`sandbox`]: the state and a run from start to verdict; [`limits`]:
//!   what stops a run, the instruction hook and the clock.
//! - [`api`]: the host functions behind `aiq.*` ([`fileio`]: the file
//!   ones); [`result`]: rows into Lua and back out as a result table.
//! - [`params`], [`convert`], [`json`], [`pretty`], [`files`]: parameters,
//!   values, JSON, printing and the working-directory rule — pure parts.
//! - [`audit`]: the log line. [`answers`]: the answer kind for the model.

mod answers;
mod api;
pub mod audit;
mod convert;
mod fileio;
mod files;
mod json;
mod limits;
pub mod params;
mod pretty;
mod result;
mod sandbox;
#[cfg(test)]
mod sandbox_tests;

pub use answers::{answer_kinds, failure, find_lua, LuaAnswers, API, RUN_LUA};
pub use audit::{AuditInfo, Origin};
pub use limits::LuaConfig;
pub use sandbox::{run, LuaFailure, Program, RunEnv, RunReport};
