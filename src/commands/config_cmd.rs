//! `aiq config show|path|init`.

use super::{write_stdout, Context};
use crate::cli::ConfigCommand;
use crate::config::{self, TEMPLATE};
use crate::error::AiqError;

pub fn run(ctx: &Context<'_>, command: ConfigCommand) -> Result<(), AiqError> {
    let path = ctx.config.file();
    match command {
        ConfigCommand::Show => write_stdout(ctx.config.to_masked_toml().as_bytes()),
        ConfigCommand::Path => write_stdout(format!("{}\n", path.display()).as_bytes()),
        ConfigCommand::Init { print: true, .. } => write_stdout(TEMPLATE.as_bytes()),
        ConfigCommand::Init { force, .. } => {
            if path.exists() && !force {
                crate::error::stderr_line(&format!(
                    "aiq: {} already exists; left unchanged (`aiq config init --print` shows the commented example; `aiq config init --force` replaces the file, keeping it as config.toml.bak)",
                    path.display()
                ));
                return Ok(());
            }
            let mut text = TEMPLATE.to_string();
            if path.exists() {
                let backup = path.with_extension("toml.bak");
                let old = std::fs::read(&path)
                    .map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", path.display())))?;
                config::write_private(&ctx.config.home, &backup, &old)?;
                let (with_sources, said) = carry_sources(&String::from_utf8_lossy(&old));
                if let Some(t) = with_sources {
                    text = t;
                }
                crate::error::stderr_line(&format!(
                    "aiq: kept the old file as {}; {said}",
                    backup.display()
                ));
            }
            config::write_private(&ctx.config.home, &path, text.as_bytes())?;
            crate::error::stderr_line(&format!("aiq: wrote {}", path.display()));
            Ok(())
        }
    }
}

/// The example with the saved sources of `old` (a config file being
/// replaced) in its `[sources]`, and what was carried over, in words.
fn carry_sources(old: &str) -> (Option<String>, String) {
    let rest = "its other settings were not carried over (copy what you need from it)";
    let Ok(old) = old.parse::<toml_edit::DocumentMut>() else {
        return (
            None,
            format!("it is not TOML, so nothing was carried over ({rest})"),
        );
    };
    let Some(sources) = old.get("sources").and_then(|s| s.as_table()) else {
        return (None, format!("it had no saved sources; {rest}"));
    };
    let Ok(mut doc) = TEMPLATE.parse::<toml_edit::DocumentMut>() else {
        return (None, rest.to_string());
    };
    let names: Vec<String> = sources
        .iter()
        .filter(|(k, v)| *k != "default" && v.is_table())
        .map(|(k, _)| k.to_string())
        .collect();
    doc["sources"] = toml_edit::Item::Table(sources.clone());
    let said = match names.as_slice() {
        [] => format!("it had no saved sources; {rest}"),
        names => format!(
            "its saved sources were carried over ({}); {rest}",
            names.join(", ")
        ),
    };
    (Some(doc.to_string()), said)
}
