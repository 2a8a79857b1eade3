//! Sends the attacker's corpus (tests/common/attack.rs) through the ways
//! in — single-shot `-e` processes, one `--lua` script per batch (MCP:
//! tests/common/mcp_attack.rs) — and judges every variant:
//! refused or harmless, nothing hidden or outside shown, the source's files
//! unchanged and nothing created, the source still answering afterwards.
//! A batch that leaves the source broken is resumed in a fresh process
//! after the variant that broke it, so every variant is judged.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use super::attack::{Engine, Variant};
use super::findings::{judge, Finding, Kind};
use super::{snapshot, Sandbox};

/// Proves the data is as the fixture left it: 5 customers, 6 orders, none
/// renamed (a glob source has customers only).
pub fn probe(engine: Engine) -> &'static str {
    match engine {
        Engine::Glob => "SELECT (SELECT count(*) FROM customers) AS c, 6 AS o, (SELECT count(*) FROM customers WHERE name = 'Mallory') AS m",
        _ => "SELECT (SELECT count(*) FROM customers) AS c, (SELECT count(*) FROM orders) AS o, (SELECT count(*) FROM customers WHERE name = 'Mallory') AS m",
    }
}
/// Fails unless a payload created its table.
pub const EVIL: &str = "SELECT count(*) AS n FROM evil";
/// Lua batches resumed after a broken source, at most, per run (a fresh
/// process costs a tenth of a second).
const MAX_RESTARTS: usize = 400;

/// Where the corpus is sent.
pub struct Target<'a> {
    pub sb: &'a Sandbox,
    /// The saved source's name (or a URL).
    pub source: &'a str,
    pub engine: Engine,
    pub allow_write: bool,
}

impl Target<'_> {
    pub fn mode(&self) -> &'static str {
        if self.allow_write {
            "allow-write"
        } else {
            "read-only"
        }
    }

    pub fn flags(&self) -> Vec<&'static str> {
        if self.allow_write {
            vec!["--allow-write"]
        } else {
            vec![]
        }
    }
}

/// Every data file of the sandbox (not aiq's home).
pub fn data_files(sb: &Sandbox) -> BTreeMap<PathBuf, Vec<u8>> {
    let home = sb.path().join("home");
    snapshot(sb.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&home))
        .collect()
}

/// The files that differ, by name relative to the sandbox.
pub fn changed(
    sb: &Sandbox,
    a: &BTreeMap<PathBuf, Vec<u8>>,
    b: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<String> {
    let mut out: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| k.strip_prefix(sb.path()).unwrap_or(k).display().to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Puts the files back as `to` had them and removes the ones it did not.
pub fn restore(sb: &Sandbox, to: &BTreeMap<PathBuf, Vec<u8>>) {
    for path in data_files(sb).keys() {
        if !to.contains_key(path) {
            let _ = std::fs::remove_file(path);
        }
    }
    for (path, bytes) in to {
        std::fs::write(path, bytes).expect("restore a data file");
    }
}

/// After a way in: restores changed files (a finding names them) and
/// checks the source still answers a plain count.
pub fn settle(
    t: &Target,
    way: &'static str,
    label: String,
    before: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let now = data_files(t.sb);
    let diff = changed(t.sb, before, &now);
    if !diff.is_empty() {
        out.push(Finding::batch(
            t,
            way,
            label,
            format!("changed {}", diff.join(",")),
        ));
        restore(t.sb, before);
    }
    let probe =
        t.sb.aiq()
            .args([
                t.source,
                "-e",
                "SELECT count(*) AS n FROM customers",
                "-f",
                "csv",
            ])
            .output()
            .expect("run aiq");
    if probe.stdout != b"n\n5\n" {
        out.push(Finding::batch(
            t,
            way,
            "after".into(),
            format!(
                "source does not answer: {}",
                String::from_utf8_lossy(&probe.stderr)
            ),
        ));
    }
    out
}

/// Each variant as its own `aiq SOURCE -e SQL` process.
pub fn run_exec(t: &Target, variants: &[Variant]) -> Vec<Finding> {
    let before = data_files(t.sb);
    let mut out = Vec::new();
    for v in variants {
        let run =
            t.sb.aiq()
                .args([t.source, "-e", &v.sql, "-f", "csv"])
                .args(t.flags())
                .output()
                .expect("run aiq");
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        let (kind, mut what) = match run.status.code() {
            Some(5) => (Kind::Refused, vec![]),
            Some(1) => (Kind::Failed, vec![]),
            Some(0) => (Kind::Ran, vec![]),
            _ => (
                Kind::Failed,
                vec![format!("process {}", ended(&run.status))],
            ),
        };
        what.extend(judge(v, kind, &text));
        let now = data_files(t.sb);
        let diff = changed(t.sb, &before, &now);
        if !diff.is_empty() {
            what.push(format!("changed {}", diff.join(",")));
            restore(t.sb, &before);
        }
        out.extend(what.into_iter().map(|w| Finding::new(t, "exec", v, w)));
    }
    out.extend(settle(t, "exec", "after".into(), &before));
    out
}

/// `s` as a Lua string literal, every byte that is not plain ASCII as an
/// escape (Lua would turn the line ends of a long string into `\n`).
pub fn lua_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03}");
            }
        }
    }
    out.push('"');
    out
}

/// The Lua program that runs `variants` with `pcall(aiq.query, …)`, one
/// line per outcome, and stops when the probe finds the source broken.
fn lua_script(engine: Engine, variants: &[Variant]) -> String {
    let mut s = String::from("local V = {\n");
    for v in variants {
        let _ = writeln!(s, "  {{{}, {}}},", v.id, lua_string(&v.sql));
    }
    let _ = write!(
        s,
        "}}
local PROBE, EVIL = {}, {}
local function refused(e)
  local m = tostring(e)
  return m:sub(1, 8) == 'refused:' or m:sub(1, 8) == 'not run:'
end
local c, o, m, evil = 5, 6, 0, false
for _, v in ipairs(V) do
  local ok, r = pcall(aiq.query, v[2])
  local kind = ok and 'ran' or (refused(r) and 'refused' or 'failed')
  print('@@\\t' .. v[1] .. '\\t' .. kind .. '\\t' .. aiq.json_encode(ok and r or tostring(r)))
  if kind ~= 'refused' then
    local pok, p = pcall(aiq.query, PROBE)
    if not pok then
      print('@P\\t' .. v[1] .. '\\t' .. aiq.json_encode(tostring(p)))
      return
    end
    if p[1].c ~= c or p[1].o ~= o or p[1].m ~= m then
      print('@P\\t' .. v[1] .. '\\t' .. aiq.json_encode(p))
      c, o, m = p[1].c, p[1].o, p[1].m
    end
    local now = pcall(aiq.query, EVIL)
    if now and not evil then print('@E\\t' .. v[1]) end
    evil = now
  end
end
print('@END')
",
        lua_string(probe(engine)),
        lua_string(EVIL)
    );
    s
}

/// The corpus through one `--lua` script per batch.
pub fn run_lua(t: &Target, variants: &[Variant]) -> Vec<Finding> {
    let before = data_files(t.sb);
    let by_id: BTreeMap<usize, &Variant> = variants.iter().map(|v| (v.id, v)).collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut restarts = 0;
    while start < variants.len() {
        let script = t.sb.home().join(format!("attack-{start}.lua"));
        std::fs::create_dir_all(t.sb.home()).expect("home");
        std::fs::write(&script, lua_script(t.engine, &variants[start..]))
            .expect("write the script");
        let run =
            t.sb.aiq()
                .arg(t.source)
                .arg("--lua")
                .arg(&script)
                .args(t.flags())
                .output()
                .expect("run aiq --lua");
        let stdout = String::from_utf8_lossy(&run.stdout);
        let (last, finished, found) = read_lua(t, &by_id, &stdout);
        out.extend(found);
        let stderr = String::from_utf8_lossy(&run.stderr);
        let at = last.and_then(|id| by_id.get(&id).copied());
        if run.status.code() != Some(0) || stderr.contains("panicked") {
            let what = format!("process {}: {}", ended(&run.status), tail(&stderr));
            out.push(match at {
                Some(v) => Finding::new(t, "lua", v, what),
                None => Finding::batch(t, "lua", format!("batch from {start}"), what),
            });
        }
        // What a batch wrote stays out of the next one.
        let diff = changed(t.sb, &before, &data_files(t.sb));
        if !diff.is_empty() {
            let first = &variants[start];
            let what = format!("changed {}", diff.join(","));
            let label = format!("#{}..{}", first.id, last.unwrap_or(first.id));
            out.push(Finding::batch(t, "lua", label, what));
            restore(t.sb, &before);
        }
        if finished {
            break;
        }
        let Some(v) = at else { break };
        start = variants
            .iter()
            .position(|x| x.id == v.id)
            .expect("a variant")
            + 1;
        restarts += 1;
        if restarts > MAX_RESTARTS {
            out.push(Finding::batch(
                t,
                "lua",
                v.label(),
                "too many broken sources; rest not run".into(),
            ));
            break;
        }
    }
    out.extend(settle(t, "lua", "batch".into(), &before));
    out
}

/// Reads a Lua batch's lines: the last variant seen, whether the script
/// reached its end, and what was wrong.
fn read_lua(
    t: &Target,
    by_id: &BTreeMap<usize, &Variant>,
    stdout: &str,
) -> (Option<usize>, bool, Vec<Finding>) {
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    let mut finished = false;
    for line in stdout.lines() {
        let mut parts = line.splitn(4, '\t');
        let tag = parts.next().unwrap_or_default();
        let id = parts.next().and_then(|s| s.parse::<usize>().ok());
        let variant = id.and_then(|id| by_id.get(&id).copied());
        match (tag, variant) {
            ("@@", Some(v)) => {
                last = Some(v.id);
                let kind = match parts.next() {
                    Some("ran") => Kind::Ran,
                    Some("refused") => Kind::Refused,
                    _ => Kind::Failed,
                };
                let text = parts.next().unwrap_or_default();
                for w in judge(v, kind, text) {
                    out.push(Finding::new(t, "lua", v, w));
                }
            }
            ("@P", Some(v)) => out.push(Finding::new(
                t,
                "lua",
                v,
                probe_failed(parts.next().unwrap_or_default()),
            )),
            ("@E", Some(v)) => out.push(Finding::new(t, "lua", v, "created evil".into())),
            ("@END", _) => finished = true,
            _ => {
                let what = format!("stray output: {}", cut(line));
                match last.and_then(|id| by_id.get(&id)) {
                    Some(v) => out.push(Finding::new(t, "lua", v, what)),
                    None => out.push(Finding::batch(t, "lua", "start".into(), what)),
                }
            }
        }
    }
    (last, finished, out)
}

/// The probe's answer (JSON): other rows mean the data changed, an error
/// means the source is broken.
pub fn probe_failed(json: &str) -> String {
    match json.starts_with('"') {
        true => format!("broke the source: {}", cut(json)),
        false => format!("changed the data: {}", cut(json)),
    }
}

/// How a process ended, signals by name.
pub fn ended(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(6)) => "aborted (SIGABRT)".into(),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "ended".into(),
    }
}

pub fn cut(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

pub fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().rev().take(2).collect();
    cut(&lines.into_iter().rev().collect::<Vec<_>>().join(" | "))
}
