//! `aiq doctor`: config, source and model endpoint (with the model's
//! context window and how aiq knows it) checked, one line each —
//! `ok` with what was found, or `FAIL` with what to fix. Exits with the code
//! of the first failure (2 config, 3 source, 4 model).

use super::{write_stdout, Context};
use crate::cli::ModelArgs;
use crate::error::AiqError;

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, model: &ModelArgs) -> Result<(), AiqError> {
    let mut lines = Vec::new();
    let mut first_failure: Option<AiqError> = None;
    let mut check = |name: &str, result: Result<String, AiqError>| match result {
        Ok(what) => lines.push(format!("ok    {name:<7} {what}")),
        Err(e) => {
            lines.push(format!("FAIL  {name:<7} {e}"));
            first_failure.get_or_insert(e);
        }
    };
    let file = ctx.config.file();
    check(
        "config",
        Ok(if file.exists() {
            format!("{} (loaded)", file.display())
        } else {
            format!(
                "{} (not created yet; defaults in use — `aiq config init` writes one)",
                file.display()
            )
        }),
    );
    let source_line = ctx
        .open_source(source_arg, false)
        .map(|o| match o.source.server_status() {
            Some(status) => format!(
                "{} ({}, {})",
                o.label,
                super::sources::describe_server(&status),
                tables(o.catalog.tables.len())
            ),
            None => format!(
                "{} ({}, {}, opened read-only)",
                o.label,
                o.catalog.engine,
                tables(o.catalog.tables.len())
            ),
        });
    check("source", source_line);
    let model_line = ctx.connect_model(model).and_then(|m| {
        let line = m.check().map_err(AiqError::from)?;
        Ok(format!("{line}; context window {}", m.window()))
    });
    check("model", model_line);
    let mut text = lines.join("\n");
    text.push('\n');
    write_stdout(text.as_bytes())?;
    match first_failure {
        Some(e) => Err(AiqError::Reported(e.exit_code())),
        None => Ok(()),
    }
}

/// `1 table or view`, `2 tables and views`.
fn tables(n: usize) -> String {
    match n {
        1 => "1 table or view".into(),
        n => format!("{n} tables and views"),
    }
}
