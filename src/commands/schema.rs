//! `aiq schema [SOURCE] [--refresh] [--as-sent]`: what the model is told
//! of a source — the catalog (hidden tables and columns left out, samples
//! only where allowed) with the source's notes, in the compact text form
//! the model gets; with `--as-sent`, the system message a request carries,
//! exactly, and what else goes with it. Opens the source read-only,
//! whatever the flags; with `--refresh` the catalog is read afresh (and
//! the cache updated).

use super::Context;
use crate::agent::kind::SqlAnswers;
use crate::agent::link::{LinkIndex, Signals};
use crate::agent::{system_for, Opened, SchemaView, PREVIEW_BYTES, PREVIEW_ROWS};
use crate::error::AiqError;

/// What `aiq schema` was asked for.
pub struct Asked<'a> {
    pub refresh: bool,
    pub as_sent: bool,
    pub question: Option<&'a str>,
    pub no_pager: bool,
}

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, asked: Asked<'_>) -> Result<(), AiqError> {
    let Asked {
        refresh,
        as_sent,
        question,
        no_pager,
    } = asked;
    let waiting = crate::frontend::progress::opening(ctx, source_arg);
    // The catalog as read: its text straight from the cache when the
    // source has not changed.
    let plain = if as_sent {
        None
    } else {
        ctx.schema_text(source_arg, refresh)?
    };
    if let Some(schema) = plain {
        drop(waiting);
        if schema.text.is_empty() {
            crate::error::stderr_line(&format!("aiq: {} has no tables or views", schema.label));
        }
        return super::write_paged(ctx, &schema.text, no_pager);
    }
    let opened = if refresh {
        ctx.open_source_fresh(source_arg)?
    } else {
        ctx.open_source(source_arg, false)?
    };
    drop(waiting);
    if opened.catalog.tables.is_empty() {
        crate::error::stderr_line(&format!(
            "aiq: {} has no tables or views aiq may show",
            opened.label
        ));
    }
    let text = if as_sent {
        as_sent_text(&opened, question.unwrap_or(""))
    } else {
        described(&opened)
    };
    super::write_paged(ctx, &text, no_pager)
}

/// Every note once, with the tables it names, then the tables.
fn described(opened: &Opened) -> String {
    opened.notes.describe(&opened.catalog)
}

/// The system message of a first question that names nothing in the
/// schema (a question's words reorder the tables, and a small model
/// window thins them), then what else a request carries.
pub fn as_sent_text(opened: &Opened, question: &str) -> String {
    let mut catalog = opened.catalog.clone();
    opened.notes.attach(&mut catalog);
    let index = LinkIndex::new(&catalog);
    let notes = opened.notes.general(&opened.catalog);
    let dialect = opened.source.dialect();
    let examples = if question.trim().is_empty() {
        Vec::new()
    } else {
        let policy = opened.guard.policy(false);
        let reads =
            |sql: &str| crate::agent::runner::reads_redacted(opened.source.as_ref(), sql, &policy);
        opened
            .examples
            .for_question(question, &opened.guard, dialect, &reads)
    };
    let view = SchemaView {
        catalog: &catalog,
        index: &index,
        notes: &notes,
        examples: &examples,
        dialect,
    };
    let signals = Signals {
        question,
        recent: &[],
        earlier_sql: &[],
    };
    let today = chrono::Utc::now().date_naive();
    let (system, shown, _) = system_for(&view, &signals, today, false, &SqlAnswers, true);
    let privacy = opened.guard.privacy();
    let mut out = String::from("-- system message\n");
    out.push_str(&system);
    if !system.ends_with('\n') {
        out.push('\n');
    }
    if shown.is_empty() {
        out.push_str("-- then the kept history, and the question\n");
    } else {
        out.push_str(
            "-- then the kept history, and the question's message: these verified examples, then the question\n",
        );
        out.push_str(&shown);
    }
    out.push_str(&format!(
        "-- results of earlier questions: {}\n",
        if privacy.send_results {
            format!("columns, row count and the first {PREVIEW_ROWS} rows (at most {PREVIEW_BYTES} bytes)")
        } else {
            "columns and row count only (send_results = false)".into()
        }
    ));
    out.push_str(&format!(
        "-- sample values: {}\n",
        if privacy.samples {
            "sent"
        } else {
            "not sent (samples = false)"
        }
    ));
    if !privacy.redact.is_empty() {
        out.push_str(&format!(
            "-- never sent (redact): {}; a result that reads them goes with its columns only\n",
            privacy.redact.join(", ")
        ));
    }
    let views = opened.guard.views_over_redacted();
    if !views.is_empty() {
        out.push_str(&format!(
            "-- views over them (no samples; a result that reads one goes with its columns only): {}\n",
            views.join(", ")
        ));
    }
    let mut hiding = Vec::new();
    // An `exclude` entry naming a column (`customers.ssn`) leaves the
    // column out; one naming a table, the table. The catalog says which.
    let is_column = |p: &String| {
        p.rsplit_once('.').is_some_and(|(t, _)| {
            opened
                .catalog
                .tables
                .iter()
                .any(|x| crate::safety::table_matches(t, &x.name))
        })
    };
    let (columns, tables): (Vec<String>, Vec<String>) =
        privacy.exclude.iter().cloned().partition(|p| is_column(p));
    for (key, list) in [
        ("include", &privacy.include),
        ("--tables", &privacy.tables),
        ("exclude", &tables),
    ] {
        if !list.is_empty() {
            hiding.push(format!("{key} {}", list.join(", ")));
        }
    }
    if !hiding.is_empty() {
        out.push_str(&format!(
            "-- tables left out ({}): not described, and refused by the gate\n",
            hiding.join("; ")
        ));
    }
    if !columns.is_empty() {
        out.push_str(&format!(
            "-- columns left out (exclude {}): not described; a result that reads one goes with its columns only\n",
            columns.join(", ")
        ));
    }
    let stored = opened.examples.len();
    out.push_str(&match (stored, question.trim().is_empty()) {
        (0, _) => "-- verified examples: none stored (`/good` in the chat, `aiq examples add`)\n".to_string(),
        (n, true) => format!(
            "-- verified examples: {n} stored; the most similar to a question go with it (give one with --question to see them)\n"
        ),
        (n, false) => format!(
            "-- verified examples: {} of {n} stored sent with this question (those reading hidden tables never are)\n",
            examples.len()
        ),
    });
    out.push_str(
        "-- tools offered: run_sql, list_tables, describe_tables, search_history, get_turn\n",
    );
    out
}
