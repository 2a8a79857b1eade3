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
        ConfigCommand::Init => {
            if path.exists() {
                crate::error::stderr_line(&format!(
                    "aiq: {} already exists; left unchanged",
                    path.display()
                ));
                return Ok(());
            }
            config::write_private(&ctx.config.home, &path, TEMPLATE.as_bytes())?;
            crate::error::stderr_line(&format!("aiq: wrote {}", path.display()));
            Ok(())
        }
    }
}
