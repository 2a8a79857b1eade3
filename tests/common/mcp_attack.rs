//! The attacker's corpus through MCP's `run_query` (tests/common/ways.rs
//! for the other ways in): one session of the official SDK client per
//! batch (tests/mcp/driver.py's `attack` scenario) with no elicitation, so
//! no write is ever confirmed; the driver probes the source after each
//! call that ran and names the files each call changed.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::attack::Variant;
use super::findings::{judge, Finding, Kind};
use super::mcp;
use super::ways::{cut, data_files, probe_failed, restore, settle, tail, Target, EVIL};

/// MCP sessions restarted after a broken source, at most, per run (a fresh
/// client and server cost about a second).
const MAX_MCP_RESTARTS: usize = 120;

/// The corpus through one MCP session per batch (tests/mcp/driver.py's
/// `attack` scenario): no elicitation, so no write is ever confirmed.
pub fn run_mcp(t: &Target, python: &Path, variants: &[Variant]) -> Vec<Finding> {
    let before = data_files(t.sb);
    let by_id: BTreeMap<usize, &Variant> = variants.iter().map(|v| (v.id, v)).collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut restarts = 0;
    while start < variants.len() {
        let plan = t.sb.home().join(format!("attack-{start}.json"));
        let calls: Vec<Value> = variants[start..]
            .iter()
            .map(|v| json!({"id": v.id, "sql": v.sql}))
            .collect();
        let body = json!({
            "calls": calls, "probe": super::ways::probe(t.engine), "evil": EVIL,
            "watch": t.sb.path(), "skip": t.sb.path().join("home"),
        });
        std::fs::write(&plan, body.to_string()).expect("write the plan");
        let mut aiq_args = vec!["mcp", t.source];
        aiq_args.extend(t.flags());
        let run = mcp::driver(
            t.sb,
            python,
            "attack",
            mcp::Era::Legacy,
            &["--plan", &plan.to_string_lossy()],
            mcp::Target::Stdio(&aiq_args),
        )
        .output()
        .expect("run the MCP driver");
        let stdout = String::from_utf8_lossy(&run.stdout);
        let (last, found) = read_mcp(t, &by_id, &stdout);
        out.extend(found);
        let stderr = String::from_utf8_lossy(&run.stderr);
        if stderr.contains("panicked") || stderr.contains("terminate called") {
            let what = format!("server crashed: {}", tail(&stderr));
            match last.and_then(|id| by_id.get(&id)) {
                Some(v) => out.push(Finding::new(t, "mcp", v, what)),
                None => out.push(Finding::batch(
                    t,
                    "mcp",
                    format!("batch from {start}"),
                    what,
                )),
            }
        }
        // The driver named the calls that changed files; the next session
        // starts from the fixture again.
        restore(t.sb, &before);
        let next = last
            .and_then(|id| variants.iter().position(|x| x.id == id))
            .map(|i| i + 1);
        match next {
            Some(n) if n < variants.len() => start = n,
            Some(_) => break,
            None => {
                out.push(Finding::batch(
                    t,
                    "mcp",
                    format!("batch from {start}"),
                    format!("no result: {}", tail(&stderr)),
                ));
                break;
            }
        }
        restarts += 1;
        if restarts > MAX_MCP_RESTARTS {
            out.push(Finding::batch(
                t,
                "mcp",
                format!("from {start}"),
                "too many broken sources; rest not run".into(),
            ));
            break;
        }
    }
    out.extend(settle(t, "mcp", "session".into(), &before));
    out
}

/// Reads the driver's lines: the last call answered and what was wrong.
fn read_mcp(
    t: &Target,
    by_id: &BTreeMap<usize, &Variant>,
    stdout: &str,
) -> (Option<usize>, Vec<Finding>) {
    let mut out = Vec::new();
    let mut last = None;
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(variant) = v["id"]
            .as_u64()
            .and_then(|id| by_id.get(&(id as usize)).copied())
        else {
            continue;
        };
        last = Some(variant.id);
        let mut what = Vec::new();
        if let Some(died) = v["died"].as_str() {
            what.push(format!("server died: {}", cut(died)));
        }
        let r = &v["result"];
        if r.is_object() {
            let text = format!(
                "{} {}",
                r["text"].as_str().unwrap_or_default(),
                r["structured"]
            );
            let refused = r["is_error"] == true
                && (text.starts_with("refused") || text.starts_with("not run"));
            let kind = match (r["is_error"] == true, refused) {
                (true, true) => Kind::Refused,
                (true, false) => Kind::Failed,
                _ => Kind::Ran,
            };
            what.extend(judge(variant, kind, &text));
        }
        let probe = &v["probe"];
        if probe["is_error"] == true {
            let text = probe["text"].as_str().unwrap_or_default();
            what.push(probe_failed(&Value::from(text).to_string()));
        } else if v["changed_data"] == true {
            what.push(probe_failed(&probe["structured"]["rows"].to_string()));
        }
        if v["created_evil"] == true {
            what.push("created evil".into());
        }
        if let Some(files) = v["changed"].as_array() {
            let names: Vec<String> = files
                .iter()
                .filter_map(|f| f.as_str())
                .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
                .collect();
            what.push(format!("changed {}", names.join(",")));
        }
        out.extend(what.into_iter().map(|w| Finding::new(t, "mcp", variant, w)));
    }
    (last, out)
}
