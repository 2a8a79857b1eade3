//! What the attacker's corpus found: one finding per thing wrong with one
//! variant through one way in, judged the same way for every way in, and
//! the compact report a failing test prints (counts per way in, engine,
//! mode and category, then every finding on one line).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::attack::{leaks, Category, Engine, Variant};
use super::ways::Target;

/// How one statement came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Refused by the policy or not confirmed (exit 5, a tool error).
    Refused,
    /// The engine failed it (exit 1).
    Failed,
    /// It ran and returned rows.
    Ran,
}

/// One thing wrong with one variant through one way in.
#[derive(Debug, Clone)]
pub struct Finding {
    pub way: &'static str,
    pub engine: Engine,
    pub mode: &'static str,
    pub category: Option<Category>,
    pub family: String,
    pub payload: String,
    pub label: String,
    pub what: String,
}

impl Finding {
    pub fn new(t: &Target, way: &'static str, v: &Variant, what: String) -> Finding {
        Finding {
            way,
            engine: t.engine,
            mode: t.mode(),
            category: Some(v.category),
            family: v.family.to_string(),
            payload: v.payload.to_string(),
            label: v.label(),
            what,
        }
    }

    pub fn batch(t: &Target, way: &'static str, label: String, what: String) -> Finding {
        Finding {
            way,
            engine: t.engine,
            mode: t.mode(),
            category: None,
            family: "-".into(),
            payload: "-".into(),
            label,
            what,
        }
    }
}

/// What is wrong with `outcome` for `v`: leaks, and a plain payload that
/// ran (every payload, written plainly, must be refused or fail).
pub fn judge(v: &Variant, kind: Kind, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let leaked = leaks(&v.sql, text);
    if !leaked.is_empty() {
        out.push(format!("leaked {}", leaked.join("+")));
    }
    if v.family == "plain" && kind == Kind::Ran {
        out.push("ran".into());
    }
    if text.contains("panicked") || text.contains("terminate called") {
        out.push("crashed".into());
    }
    out
}

/// Counts per way in, engine, mode and category, then one line per finding.
pub fn report(findings: &[Finding]) -> String {
    let mut counts: BTreeMap<(String, &str, &str, &str), usize> = BTreeMap::new();
    let mut variants: BTreeMap<(String, &str, &str, &str), std::collections::BTreeSet<&str>> =
        BTreeMap::new();
    for f in findings {
        let key = (
            f.way.to_string(),
            f.engine.name(),
            f.mode,
            f.category.map_or("batch", Category::name),
        );
        *counts.entry(key.clone()).or_default() += 1;
        variants.entry(key).or_default().insert(&f.label);
    }
    let mut s = format!("{} findings\n", findings.len());
    for (key, n) in &counts {
        let _ = writeln!(
            s,
            "  {:5} {:8} {:11} {:12} {n} findings, {} variants",
            key.0,
            key.1,
            key.2,
            key.3,
            variants[key].len()
        );
    }
    for f in findings {
        let _ = writeln!(
            s,
            "{} {} {} {} {}: {}",
            f.way,
            f.engine.name(),
            f.mode,
            f.category.map_or("batch", Category::name),
            f.label,
            f.what
        );
    }
    s
}
