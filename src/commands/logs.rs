//! `aiq logs [--since WHEN] [--json]`: the audit log of Lua runs, MCP
//! tool calls and what model requests cost (`$AIQ_HOME/logs/YYYY-MM-DD.jsonl`),
//! one line per entry — readable, or as stored for `jq`.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde_json::Value;

use super::{write_stdout, Context};
use crate::error::AiqError;
use crate::home;
use crate::render::thousands;

/// Prints the runs logged since `since` (all when `None`).
pub fn run(ctx: &Context<'_>, since: Option<&str>, json: bool) -> Result<(), AiqError> {
    let since = since.map(|s| parse_since(s, Utc::now())).transpose()?;
    let mut out = String::new();
    let mut runs = 0;
    for file in home::log_files(&ctx.config.home) {
        let day = file
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok());
        if let (Some(day), Some(since)) = (day, since) {
            if day < since.date_naive() {
                continue;
            }
        }
        let bytes = std::fs::read(&file)
            .map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", file.display())))?;
        let mut unread = 0;
        for line in bytes.split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A line cut short by a killed process, or edited by hand.
            let Some((line, record)) = std::str::from_utf8(line)
                .ok()
                .and_then(|l| Some((l, serde_json::from_str::<Value>(l).ok()?)))
            else {
                unread += 1;
                continue;
            };
            let time = record["time"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
            if let (Some(since), Some(time)) = (since, time) {
                if time < since {
                    continue;
                }
            }
            runs += 1;
            if json {
                out.push_str(line);
            } else {
                out.push_str(&summary(&record));
            }
            out.push('\n');
        }
        if unread > 0 {
            crate::frontend::stderr_line(&format!(
                "aiq: {}: {unread} line(s) are not log entries (cut short or edited) and were skipped",
                file.display()
            ));
        }
    }
    if runs == 0 {
        crate::frontend::stderr_line(&format!(
            "aiq: no Lua runs or MCP calls logged{} in {}",
            if since.is_some() { " in that time" } else { "" },
            home::logs_dir(&ctx.config.home).display()
        ));
    }
    write_stdout(out.as_bytes())
}

/// One entry in a line: for a model request (`"kind": "model"`) time,
/// source, provider and model, the input tokens with those the provider's
/// cache served and took, the output tokens; for a Lua run time, status, origin, source, what
/// ran, calls, the result or error, duration; for an MCP call (`"kind":
/// "mcp"`) time, status, `mcp`, source, tool and what it ran or was asked,
/// rows or error, duration.
pub fn summary(r: &Value) -> String {
    let text = |k: &str| r[k].as_str().unwrap_or("").to_string();
    if r["kind"].as_str() == Some("model") {
        let n = |k: &str| thousands(r[k].as_u64().unwrap_or(0) as usize);
        return format!(
            "{}  ok        model  {}  {} {}: {} input tokens ({} from the cache, {} written to it), {} output  {} ms",
            text("time"),
            text("source"),
            text("provider"),
            text("model"),
            n("input_tokens"),
            n("cache_read_tokens"),
            n("cache_write_tokens"),
            n("output_tokens"),
            r["ms"].as_u64().unwrap_or(0)
        );
    }
    if r["kind"].as_str() == Some("mcp") {
        let asked = r["sql"].as_str().or(r["question"].as_str()).unwrap_or("");
        let outcome = match (r["error"].as_str(), r["rows"].as_u64()) {
            (Some(e), _) => first_line(e, 80),
            (None, Some(rows)) => format!("{rows} rows"),
            (None, None) => "done".to_string(),
        };
        let status = if r["error"].is_string() {
            "error"
        } else {
            "ok"
        };
        return format!(
            "{}  {:<9} {:<6} {}  {}: {}  {}  {} ms",
            text("time"),
            status,
            "mcp",
            text("source"),
            text("tool"),
            first_line(asked, 40),
            outcome,
            r["ms"].as_u64().unwrap_or(0)
        );
    }
    let what = match r["file"].as_str() {
        Some(f) => f.to_string(),
        None => first_line(&text("program"), 40),
    };
    let calls = r["calls"].as_array().map_or(0, Vec::len)
        + r["calls_omitted"].as_u64().unwrap_or(0) as usize;
    let outcome = match (&r["result"], r["error"].as_str()) {
        (_, Some(e)) => first_line(e, 80),
        (Value::Object(res), None) => format!("{} rows", res["rows"]),
        _ => "no table".to_string(),
    };
    format!(
        "{}  {:<9} {:<6} {}  {}  {} calls  {}  {:.0} ms",
        text("time"),
        text("status"),
        text("origin"),
        text("source"),
        what,
        calls,
        outcome,
        r["duration_ms"].as_f64().unwrap_or(0.0)
    )
}

fn first_line(s: &str, max: usize) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_string()
    }
}

/// `2026-01-26`, an RFC 3339 time, or an age: `90s`, `30m`, `12h`, `7d`, `2w`.
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, AiqError> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let age = n.parse::<i64>().ok().and_then(|n| match unit {
        "s" => Duration::try_seconds(n),
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    });
    match age {
        Some(age) => Ok(now - age),
        None => Err(AiqError::Usage(format!(
            "--since {s}: give a date (2026-01-26), a time (2026-01-26T10:00:00Z) or an age (90m, 12h, 7d)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_times_and_ages() {
        let now = DateTime::parse_from_rfc3339("2026-01-26T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let at = |s: &str| parse_since(s, now).unwrap().to_rfc3339();
        assert_eq!(at("2026-01-20"), "2026-01-20T00:00:00+00:00");
        assert_eq!(at("2026-01-26T10:30:00Z"), "2026-01-26T10:30:00+00:00");
        assert_eq!(at("90m"), "2026-01-26T10:30:00+00:00");
        assert_eq!(at("2d"), "2026-01-24T12:00:00+00:00");
        let e = parse_since("yesterday", now).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_run_in_one_line() {
        let r: Value = serde_json::from_str(
            r#"{"time":"2026-01-26T10:00:05Z","status":"ok","origin":"file","source":"shop","file":"report.lua",
                "program":"x","calls":[{},{}],"result":{"rows":12,"columns":["a"]},"error":null,"duration_ms":15.2}"#,
        )
        .unwrap();
        assert_eq!(
            summary(&r),
            "2026-01-26T10:00:05Z  ok        file   shop  report.lua  2 calls  12 rows  15 ms"
        );
    }

    #[test]
    fn a_model_request_in_one_line() {
        let r: Value = serde_json::from_str(
            r#"{"time":"2026-01-26T10:00:08Z","kind":"model","source":"shop","provider":"anthropic",
                "model":"claude","input_tokens":12410,"cache_read_tokens":11904,"cache_write_tokens":380,
                "output_tokens":61,"ms":900}"#,
        )
        .unwrap();
        assert_eq!(
            summary(&r),
            "2026-01-26T10:00:08Z  ok        model  shop  anthropic claude: 12,410 input tokens (11,904 from the cache, 380 written to it), 61 output  900 ms"
        );
    }

    #[test]
    fn an_mcp_call_in_one_line() {
        let r: Value = serde_json::from_str(
            r#"{"time":"2026-01-26T10:00:06Z","kind":"mcp","tool":"run_query","source":"shop",
                "sql":"SELECT count(*)\nFROM orders","question":null,"rows":1,"ms":4,"error":null}"#,
        )
        .unwrap();
        assert_eq!(
            summary(&r),
            "2026-01-26T10:00:06Z  ok        mcp    shop  run_query: SELECT count(*)  1 rows  4 ms"
        );
        let r: Value = serde_json::from_str(
            r#"{"time":"2026-01-26T10:00:07Z","kind":"mcp","tool":"run_query","source":"shop",
                "sql":"DELETE FROM orders","rows":null,"ms":1,"error":"refused: read-only"}"#,
        )
        .unwrap();
        assert_eq!(
            summary(&r),
            "2026-01-26T10:00:07Z  error     mcp    shop  run_query: DELETE FROM orders  refused: read-only  1 ms"
        );
    }
}
