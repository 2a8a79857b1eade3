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
            if path.exists() {
                let backup = path.with_extension("toml.bak");
                let old = std::fs::read(&path)
                    .map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", path.display())))?;
                config::write_private(&ctx.config.home, &backup, &old)?;
                crate::error::stderr_line(&format!(
                    "aiq: kept the old file as {}",
                    backup.display()
                ));
            }
            config::write_private(&ctx.config.home, &path, TEMPLATE.as_bytes())?;
            crate::error::stderr_line(&format!("aiq: wrote {}", path.display()));
            Ok(())
        }
    }
}
