//! What `aiq eval` reports (SPEC §13): a verdict per case with a one-line
//! why, the summary (by tag too), the changes since an earlier report, in
//! the output formats.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The answer's rows match the reference's.
    Pass,
    /// The rows differ.
    Fail,
    /// The SQL failed after self-correction, the model gave no SQL, or
    /// the model could not be asked.
    Error,
    /// The gate refused the answer's SQL.
    Refused,
    /// The statement ran past the timeout.
    Timeout,
    /// The case's reference SQL failed or was refused: the suite needs
    /// fixing (the model was not asked).
    Broken,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::Refused => "refused",
            Verdict::Timeout => "timeout",
            Verdict::Broken => "broken",
        }
    }
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseReport {
    pub id: String,
    /// The question whose answer was compared (a follow-up's last turn).
    pub question: String,
    pub verdict: Verdict,
    /// The SQL (or program) of the answer, if there was one.
    pub sql: Option<String>,
    /// Why it did not pass (empty when it did).
    pub why: String,
    /// Rows of the answer and of the reference.
    pub rows: Option<u64>,
    pub expected_rows: Option<u64>,
    pub ms: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// Counts over the cases run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub pass: usize,
    pub fail: usize,
    pub error: usize,
    pub refused: usize,
    pub timeout: usize,
    /// Cases whose reference SQL failed: not counted in the accuracy.
    #[serde(default)]
    pub broken: usize,
    /// pass / (cases - broken) (0 when there are none).
    pub accuracy: f64,
}

impl Summary {
    pub fn of<'a>(cases: impl IntoIterator<Item = &'a CaseReport>) -> Summary {
        let mut s = Summary::default();
        for c in cases {
            s.cases += 1;
            match c.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail => s.fail += 1,
                Verdict::Error => s.error += 1,
                Verdict::Refused => s.refused += 1,
                Verdict::Timeout => s.timeout += 1,
                Verdict::Broken => s.broken += 1,
            }
        }
        let judged = s.cases - s.broken;
        if judged > 0 {
            s.accuracy = (s.pass as f64 / judged as f64 * 10_000.0).round() / 10_000.0;
        }
        s
    }
}

/// A whole report, as `-f json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub suite: String,
    pub source: String,
    pub model: String,
    pub cases: Vec<CaseReport>,
    pub summary: Summary,
    /// Set when Ctrl-C ended the run before every case was asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Report {
    pub fn new(suite: &str, source: &str, model: &str, cases: Vec<CaseReport>) -> Report {
        let summary = Summary::of(&cases);
        Report {
            suite: suite.to_string(),
            source: source.to_string(),
            model: model.to_string(),
            cases,
            summary,
            interrupted: false,
        }
    }

    /// The summary of each tag's cases, tags in name order.
    pub fn by_tag(&self) -> BTreeMap<&str, Summary> {
        let mut tags: BTreeMap<&str, Vec<&CaseReport>> = BTreeMap::new();
        for c in &self.cases {
            for t in &c.tags {
                tags.entry(t.as_str()).or_default().push(c);
            }
        }
        tags.into_iter()
            .map(|(t, cases)| (t, Summary::of(cases)))
            .collect()
    }

    /// Reads a report written with `-f json`.
    pub fn parse(text: &str) -> Result<Report, String> {
        serde_json::from_str(text).map_err(|e| format!("not an aiq eval JSON report: {e}"))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// One line per case that passed, the summary, then the cases that did
    /// not pass with why: what needs looking at is last on the screen.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let id_width = self.cases.iter().map(|c| c.id.len()).max().unwrap_or(2);
        let line = |out: &mut String, c: &CaseReport| {
            let _ = write!(
                out,
                "{:<7} {:<id_width$}  {}",
                c.verdict.as_str(),
                c.id,
                one_line(&c.question, 60)
            );
            if !c.why.is_empty() {
                let _ = write!(out, "  — {}", one_line(&c.why, 160));
            }
            out.push('\n');
        };
        let (passed, not): (Vec<&CaseReport>, Vec<&CaseReport>) =
            self.cases.iter().partition(|c| c.verdict == Verdict::Pass);
        for c in &passed {
            line(&mut out, c);
        }
        if !passed.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.summary_text());
        if !not.is_empty() {
            let _ = writeln!(out, "\nnot passing ({}):", not.len());
            for c in &not {
                line(&mut out, c);
            }
        }
        out
    }

    /// The summary lines: totals, then each tag.
    pub fn summary_text(&self) -> String {
        let s = &self.summary;
        let broken = match s.broken {
            0 => String::new(),
            n => format!(", {n} broken (the reference SQL failed; not counted)"),
        };
        let mut out = format!(
            "{} of {} cases pass ({}): {} fail, {} error, {} refused, {} timeout{broken}{}\n",
            s.pass,
            s.cases - s.broken,
            percent(s.accuracy),
            s.fail,
            s.error,
            s.refused,
            s.timeout,
            if self.interrupted {
                " (interrupted: the cases not asked are left out)"
            } else {
                ""
            }
        );
        let tags = self.by_tag();
        if !tags.is_empty() {
            let width = tags.keys().map(|t| t.len()).max().unwrap_or(0);
            for (tag, t) in tags {
                let _ = writeln!(
                    out,
                    "  {tag:<width$}  {:>3} of {:<3} {:>6}",
                    t.pass,
                    t.cases - t.broken,
                    percent(t.accuracy)
                );
            }
        }
        out
    }

    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "id",
            "verdict",
            "question",
            "why",
            "rows",
            "expected_rows",
            "ms",
            "tags",
            "sql",
        ]);
        for c in &self.cases {
            let n = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_default();
            let _ = w.write_record([
                c.id.as_str(),
                c.verdict.as_str(),
                &c.question,
                &c.why,
                &n(c.rows),
                &n(c.expected_rows),
                &c.ms.to_string(),
                &c.tags.join(" "),
                c.sql.as_deref().unwrap_or(""),
            ]);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    pub fn to_markdown(&self) -> String {
        let cell = |s: &str| one_line(s, 200).replace('|', "\\|");
        let mut out = String::from("| verdict | id | question | why |\n|---|---|---|---|\n");
        for c in &self.cases {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                c.verdict.as_str(),
                cell(&c.id),
                cell(&c.question),
                cell(&c.why)
            );
        }
        out.push('\n');
        let s = &self.summary;
        let _ = writeln!(
            out,
            "**{} of {} cases pass ({})**: {} fail, {} error, {} refused, {} timeout, {} broken\n",
            s.pass,
            s.cases - s.broken,
            percent(s.accuracy),
            s.fail,
            s.error,
            s.refused,
            s.timeout,
            s.broken
        );
        let tags = self.by_tag();
        if !tags.is_empty() {
            out.push_str("| tag | pass | cases | accuracy |\n|---|---:|---:|---:|\n");
            for (tag, t) in tags {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    cell(tag),
                    t.pass,
                    t.cases - t.broken,
                    percent(t.accuracy)
                );
            }
        }
        out
    }

    /// Which cases changed verdict since `before` (by id), one line each,
    /// and the accuracy then and now.
    pub fn changes_since(&self, before: &Report) -> String {
        let earlier: BTreeMap<&str, &CaseReport> =
            before.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let mut better = Vec::new();
        let mut worse = Vec::new();
        let mut new = 0;
        for c in &self.cases {
            match earlier.get(c.id.as_str()) {
                Some(b) if b.verdict != c.verdict => {
                    let line = format!(
                        "  {:<7} {}  (was {}){}",
                        c.verdict.as_str(),
                        c.id,
                        b.verdict.as_str(),
                        if c.why.is_empty() {
                            String::new()
                        } else {
                            format!(" — {}", one_line(&c.why, 80))
                        }
                    );
                    if c.verdict == Verdict::Pass {
                        better.push(line);
                    } else {
                        worse.push(line);
                    }
                }
                Some(_) => {}
                None => new += 1,
            }
        }
        let mut out = format!(
            "compared with {} ({}): accuracy {} → {}\n",
            before.model,
            before.suite,
            percent(before.summary.accuracy),
            percent(self.summary.accuracy)
        );
        if better.is_empty() && worse.is_empty() {
            out.push_str("  no case changed its verdict\n");
        }
        if !better.is_empty() {
            let _ = writeln!(out, "now pass ({}):", better.len());
            for l in better {
                let _ = writeln!(out, "{l}");
            }
        }
        if !worse.is_empty() {
            let _ = writeln!(out, "no longer pass or changed ({}):", worse.len());
            for l in worse {
                let _ = writeln!(out, "{l}");
            }
        }
        if new > 0 {
            let _ = writeln!(out, "  {new} case(s) not in the earlier report");
        }
        out
    }
}

/// `0.8125` → `81.3%`.
pub fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The text on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A pass rate from the command line: `0.8`, `80%` or `80`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (number, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let v: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a pass rate (write 0.8 or 80%)"))?;
    let rate = if percent || v > 1.0 { v / 100.0 } else { v };
    if !(0.0..=1.0).contains(&rate) {
        return Err(format!("`{s}` is not a pass rate between 0 and 100%"));
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, verdict: Verdict, tags: &[&str]) -> CaseReport {
        CaseReport {
            id: id.into(),
            question: format!("question {id}"),
            verdict,
            sql: Some("SELECT 1".into()),
            why: if verdict == Verdict::Pass {
                String::new()
            } else {
                "2 of 12 rows differ".into()
            },
            rows: Some(12),
            expected_rows: Some(12),
            ms: 5,
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn summary_by_tag_and_formats() {
        let r = Report::new(
            "demo.toml",
            "demo",
            "m",
            vec![
                case("a", Verdict::Pass, &["easy"]),
                case("b", Verdict::Fail, &["easy", "join"]),
                case("c", Verdict::Refused, &["hard"]),
                case("d", Verdict::Pass, &["hard"]),
            ],
        );
        assert_eq!(r.summary.pass, 2);
        assert_eq!(r.summary.accuracy, 0.5);
        let tags = r.by_tag();
        assert_eq!(tags["easy"].cases, 2);
        assert_eq!(tags["join"].pass, 0);
        let table = r.to_table();
        assert!(
            table.contains("fail    b  question b  — 2 of 12 rows differ"),
            "{table}"
        );
        assert!(table.contains("2 of 4 cases pass (50.0%)"), "{table}");
        let back = Report::parse(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for key in ["suite", "source", "model", "cases", "summary"] {
            assert!(v.get(key).is_some(), "{key}");
        }
        for key in [
            "id",
            "question",
            "verdict",
            "sql",
            "why",
            "rows",
            "expected_rows",
            "ms",
        ] {
            assert!(v["cases"][0].get(key).is_some(), "{key}");
        }
        assert!(r.to_csv().starts_with("id,verdict,question"));
        assert!(r.to_markdown().contains("| fail | b | question b |"));
    }

    #[test]
    fn changes_since_an_earlier_report() {
        let before = Report::new(
            "s",
            "demo",
            "old",
            vec![case("a", Verdict::Fail, &[]), case("b", Verdict::Pass, &[])],
        );
        let now = Report::new(
            "s",
            "demo",
            "new",
            vec![
                case("a", Verdict::Pass, &[]),
                case("b", Verdict::Error, &[]),
                case("c", Verdict::Pass, &[]),
            ],
        );
        let text = now.changes_since(&before);
        assert!(text.contains("accuracy 50.0% → 66.7%"), "{text}");
        assert!(text.contains("pass    a  (was fail)"), "{text}");
        assert!(text.contains("error   b  (was pass)"), "{text}");
        assert!(
            text.contains("1 case(s) not in the earlier report"),
            "{text}"
        );
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("0.8").unwrap(), 0.8);
        assert_eq!(parse_rate("80%").unwrap(), 0.8);
        assert_eq!(parse_rate("75").unwrap(), 0.75);
        assert!(parse_rate("x").is_err());
        assert!(parse_rate("120%").is_err());
    }
}
