//! The demo shop: a small, deterministic e-commerce data set for trying aiq
//! (`aiq demo`, and the `demo_shop` example for the other engines).

pub mod data;

/// The demo shop's notes: business rules its schema cannot show, written
/// to the shop's notes file the first time (`aiq demo`).
pub const NOTES: &str = include_str!("notes.md");

/// The demo shop's evaluation suite (`aiq demo --eval`), also in
/// `fixtures/eval/demo.toml`.
pub const SUITE: &str = include_str!("../../fixtures/eval/demo.toml");
