//! Running a suite (SPEC §13): every case through a fresh [`Conversation`]
//! — the one every mode uses — its reference SQL through the same gate and
//! runner, the two results compared by [`super::compare`].

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::compare::{compare, Options};
use super::report::{CaseReport, Verdict};
use super::suite::{past_the_limit, Case};
use crate::agent::runner::run_statement_for;
use crate::agent::{AgentError, Conversation, Event, EventSink, Opened};
use crate::cancel::{CancelHandle, CancelToken};
use crate::llm::LlmErrorKind;
use crate::source::{Column, EnoughRows, RowSink, Value};

/// Rows a result may have for comparing; more is a verdict of its own.
pub const MAX_ROWS: usize = 1_000_000;

/// What running cases needs from the composition root: a source opened
/// and a conversation on it, fresh for each case.
pub trait Opener: Sync {
    /// Opens the source.
    fn open(&self) -> Result<Opened, String>;
    /// A conversation over `opened` with a model connected afresh.
    fn conversation(&self, opened: Opened) -> Result<Conversation, String>;
}

/// How cases run.
pub struct Settings {
    /// Cases at once.
    pub jobs: usize,
    /// Relative tolerance of numbers.
    pub tolerance: f64,
}

/// Why a run stopped before every case was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C.
    Interrupted,
    /// The model cannot be asked at all (the message says why); every
    /// case would end the same way.
    Model(String),
    /// The source cannot be opened.
    Source(String),
}

/// Rows of one result.
#[derive(Debug, Default)]
struct Rows {
    columns: Vec<Column>,
    rows: Vec<Vec<Value>>,
    /// More than [`MAX_ROWS`] rows.
    more: bool,
}

impl Rows {
    fn push(&mut self, row: Vec<Value>) -> io::Result<()> {
        if self.rows.len() >= MAX_ROWS {
            self.more = true;
            return Err(EnoughRows::error());
        }
        self.rows.push(row);
        Ok(())
    }
}

impl RowSink for Rows {
    fn columns(&mut self, columns: &[Column]) -> io::Result<()> {
        self.columns = columns.to_vec();
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> io::Result<()> {
        self.push(row.to_vec())
    }
}

/// Keeps the result of the turn's last statement; declines writes (an
/// evaluation changes nothing).
#[derive(Default)]
struct Capture {
    sql: Option<String>,
    result: Rows,
}

impl EventSink for Capture {
    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::QueryStarted { sql } => {
                self.sql = Some(sql);
                self.result = Rows::default();
            }
            Event::Columns(columns) => self.result.columns = columns,
            Event::Rows(rows) => {
                for row in rows.into_values() {
                    self.result.push(row)?;
                }
            }
            Event::Confirm(question) => question.answer(false),
            _ => {}
        }
        Ok(())
    }
}

/// An event sink that keeps nothing (the reference SQL's events).
struct Quiet;

impl EventSink for Quiet {
    fn event(&mut self, event: Event) -> io::Result<()> {
        if let Event::Confirm(question) = event {
            question.answer(false);
        }
        Ok(())
    }
}

/// Runs `cases`, `settings.jobs` at once; `done` hears of each finished
/// case (for progress). Returns the reports of the cases finished, in
/// suite order, and why the run stopped early, if it did.
pub fn run_cases(
    cases: &[Case],
    opener: &dyn Opener,
    settings: &Settings,
    done: &(dyn Fn(&CaseReport) + Sync),
) -> (Vec<CaseReport>, Option<Stop>) {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseReport>>> = Mutex::new(vec![None; cases.len()]);
    let stop: Mutex<Option<Stop>> = Mutex::new(None);
    let stopping = AtomicBool::new(false);
    let running: Mutex<Vec<(usize, CancelHandle)>> = Mutex::new(Vec::new());
    let jobs = settings.jobs.clamp(1, cases.len().max(1));
    std::thread::scope(|scope| {
        // Ctrl-C reaches every case in flight.
        let watcher = scope.spawn(|| {
            while !stopping.load(Ordering::SeqCst) {
                if crate::interrupt::interrupted() {
                    if let Ok(mut s) = stop.lock() {
                        s.get_or_insert(Stop::Interrupted);
                    }
                    stopping.store(true, Ordering::SeqCst);
                    for (_, handle) in running.lock().map(|r| r.clone()).unwrap_or_default() {
                        handle.cancel();
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| loop {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else {
                        break;
                    };
                    match run_case(i, case, opener, settings, &running, &stopping) {
                        Ok(report) => {
                            done(&report);
                            if let Ok(mut r) = results.lock() {
                                r[i] = Some(report);
                            }
                        }
                        Err(why) => {
                            if let Ok(mut s) = stop.lock() {
                                s.get_or_insert(why);
                            }
                            stopping.store(true, Ordering::SeqCst);
                            break;
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        stopping.store(true, Ordering::SeqCst);
        let _ = watcher.join();
    });
    let reports = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    (reports, stop.into_inner().unwrap_or(None))
}

/// One case: the reference first, then the turns through a fresh
/// conversation, then the comparison.
fn run_case(
    number: usize,
    case: &Case,
    opener: &dyn Opener,
    settings: &Settings,
    running: &Mutex<Vec<(usize, CancelHandle)>>,
    stopping: &AtomicBool,
) -> Result<CaseReport, Stop> {
    let started = Instant::now();
    let opened = opener.open().map_err(Stop::Source)?;
    let mut report = CaseReport {
        id: case.id.clone(),
        question: case.question().to_string(),
        verdict: Verdict::Error,
        sql: None,
        why: String::new(),
        rows: None,
        expected_rows: None,
        ms: 0,
        tags: case.tags.clone(),
    };
    // A reference that fails or is refused is the suite's fault: the
    // model is not asked.
    let expected = match reference(&case.sql, &opened) {
        Ok(rows) => rows,
        Err(why) => {
            report.verdict = Verdict::Broken;
            report.why = format!("the reference SQL failed: {why}");
            report.ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
    };
    report.expected_rows = Some(expected.rows.len() as u64);
    // The rows past a LIMIT, when the reference was cut there: rows that
    // tie with the last one kept are as valid as it.
    let past = match (&case.order_keys, past_the_limit(&case.sql)) {
        (Some(_), Some((n, wider))) if case.ordered && expected.rows.len() == n => {
            reference(&wider, &opened).ok().map(|rows| (n, rows))
        }
        _ => None,
    };
    let mut conversation = opener.conversation(opened).map_err(Stop::Model)?;
    if let Ok(mut r) = running.lock() {
        r.push((number, conversation.canceller()));
    }
    let outcome = ask_turns(case, &mut conversation, stopping);
    if let Ok(mut r) = running.lock() {
        r.retain(|(n, _)| *n != number);
    }
    let (answer, capture) = outcome?;
    report.sql = capture.sql.clone();
    let (verdict, why) = match answer {
        Ok(answer) if answer.code.is_none() => (
            Verdict::Error,
            format!(
                "the model answered in words, not SQL: {}",
                answer.text.trim()
            ),
        ),
        Ok(_) if capture.sql.is_none() => (Verdict::Error, "no statement ran".into()),
        Ok(_) => {
            report.rows = Some(capture.result.rows.len() as u64);
            match (
                judge(case, &capture.result, &expected, settings.tolerance),
                &past,
            ) {
                ((Verdict::Fail, why), Some((n, wider))) => {
                    within_tie(case, &capture.result, *n, wider, settings.tolerance, why)
                }
                (judged, _) => judged,
            }
        }
        Err(AgentError::Refused(why)) => (Verdict::Refused, why),
        Err(AgentError::QueryFailed(why)) if why.contains("ran longer than") => {
            (Verdict::Timeout, why)
        }
        Err(e) => (Verdict::Error, e.to_string()),
    };
    report.verdict = verdict;
    report.why = why;
    report.ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Asks the case's turns in order; the answer to the last one and what
/// its statement returned.
#[allow(clippy::type_complexity)]
fn ask_turns(
    case: &Case,
    conversation: &mut Conversation,
    stopping: &AtomicBool,
) -> Result<(Result<crate::agent::Answer, AgentError>, Capture), Stop> {
    let last = case.turns.len() - 1;
    for (i, turn) in case.turns.iter().enumerate() {
        if stopping.load(Ordering::SeqCst) {
            return Err(Stop::Interrupted);
        }
        let mut capture = Capture::default();
        let answer = conversation.ask(turn, &mut capture);
        match &answer {
            Err(AgentError::Cancelled) => return Err(Stop::Interrupted),
            Err(AgentError::Llm(e))
                if matches!(
                    e.kind,
                    LlmErrorKind::Unreachable | LlmErrorKind::Auth | LlmErrorKind::Usage
                ) =>
            {
                return Err(Stop::Model(e.to_string()))
            }
            _ => {}
        }
        if i == last {
            return Ok((answer, capture));
        }
    }
    Err(Stop::Interrupted)
}

/// The reference SQL's result, through the gate and the runner like any
/// statement (it may be refused, too).
fn reference(sql: &str, opened: &Opened) -> Result<Rows, String> {
    let mut rows = Rows::default();
    let cancel = CancelToken::new();
    let result = run_statement_for(
        opened.source.as_ref(),
        sql,
        opened.guard.policy(false),
        &cancel,
        &mut Quiet,
        &mut rows,
    );
    match result {
        Ok(_) => Ok(rows),
        Err(crate::agent::runner::StatementError::Output(e)) if EnoughRows::is(&e) => Ok(rows),
        Err(e) => Err(AgentError::from(e).to_string()),
    }
}

/// Choices of tied rows tried at most.
const MAX_TIE_CHOICES: usize = 256;

/// The verdict on rows that differ from the reference's cut at `LIMIT n`,
/// given `wider`, its rows past the cut: a pass when they are the rows
/// before the tie with the last row kept plus any choice of the rows that
/// tie with it, else the failure (`why`) as it was.
fn within_tie(
    case: &Case,
    got: &Rows,
    n: usize,
    wider: &Rows,
    tolerance: f64,
    why: String,
) -> (Verdict, String) {
    let fail = (Verdict::Fail, why);
    let (Some(keys), Some(last)) = (&case.order_keys, wider.rows.get(n.wrapping_sub(1))) else {
        return fail;
    };
    let ties = |row: &Vec<Value>| keys.iter().all(|&k| row.get(k) == last.get(k));
    let tied: Vec<usize> = (0..wider.rows.len())
        .filter(|&i| ties(&wider.rows[i]))
        .collect();
    let before: Vec<usize> = (0..n).filter(|i| !tied.contains(i)).collect();
    let room = n - before.len();
    if tied.len() <= room || wider.more {
        return fail;
    }
    let mut choice: Vec<usize> = (0..room).collect();
    for _ in 0..MAX_TIE_CHOICES {
        let mut rows: Vec<Vec<Value>> = before.iter().map(|&i| wider.rows[i].clone()).collect();
        rows.extend(choice.iter().map(|&c| wider.rows[tied[c]].clone()));
        let want = Rows {
            columns: wider.columns.clone(),
            rows,
            more: false,
        };
        if judge(case, got, &want, tolerance).0 == Verdict::Pass {
            return (
                Verdict::Pass,
                format!(
                    "rows differ from the reference only within a tie at its LIMIT ({} rows tie for the last {room} place(s)): an equally valid answer",
                    tied.len()
                ),
            );
        }
        if !next_choice(&mut choice, tied.len()) {
            return fail;
        }
    }
    fail
}

/// The next `k`-of-`n` choice in lexicographic order, false after the last.
fn next_choice(choice: &mut [usize], n: usize) -> bool {
    let k = choice.len();
    for i in (0..k).rev() {
        if choice[i] < n - k + i {
            choice[i] += 1;
            for j in i + 1..k {
                choice[j] = choice[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// The verdict on an answer's rows.
fn judge(case: &Case, got: &Rows, want: &Rows, tolerance: f64) -> (Verdict, String) {
    if got.more || want.more {
        return (
            Verdict::Fail,
            format!("more than {MAX_ROWS} rows: too many to compare"),
        );
    }
    let options = Options {
        ordered: case.ordered,
        order_keys: case.order_keys.clone(),
        tolerance,
    };
    match compare(
        got.columns.len(),
        &got.rows,
        want.columns.len(),
        &want.rows,
        &options,
    ) {
        Ok(()) => (Verdict::Pass, String::new()),
        Err(why) => (Verdict::Fail, why),
    }
}
