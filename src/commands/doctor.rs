//! `aiq doctor`: config, source and model endpoint checked, one line each —
//! `ok` with what was found, or `FAIL` with what to fix. Exits with the code
//! of the first failure (2 config, 3 source, 4 model).

use super::{write_stdout, Context};
use crate::cli::ModelArgs;
use crate::error::AiqError;
use crate::frontend::oneshot::llm_error;
use crate::llm;
use crate::source::{self, OpenOptions};

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
    let source_line = (|| {
        let resolved = ctx.resolve_source(source_arg)?;
        let src =
            source::open(&resolved.spec, OpenOptions::default()).map_err(super::source_error)?;
        let catalog = src.introspect().map_err(super::source_error)?;
        Ok(format!(
            "{} ({}, {} tables and views, opened read-only)",
            resolved.label,
            catalog.engine,
            catalog.tables.len()
        ))
    })();
    check("source", source_line);
    let model_line = llm::settings::resolve(&ctx.config.llm, &model.llm_flags(), ctx.env)
        .and_then(|settings| llm::connect(&settings))
        .and_then(|model| model.check())
        .map_err(llm_error);
    check("model", model_line);
    let mut text = lines.join("\n");
    text.push('\n');
    write_stdout(text.as_bytes())?;
    match first_failure {
        Some(e) => Err(AiqError::Reported(e.exit_code())),
        None => Ok(()),
    }
}
