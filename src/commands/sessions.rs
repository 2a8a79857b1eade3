//! `aiq sessions [list|show FILE|rm FILE]`: the saved conversations in
//! `$AIQ_HOME`.

use super::{write_stdout, Context};
use crate::cli::SessionsCommand;
use crate::error::AiqError;
use crate::session::{self, Session};

pub fn run(ctx: &Context<'_>, action: Option<SessionsCommand>) -> Result<(), AiqError> {
    let home = &ctx.config.home;
    match action.unwrap_or(SessionsCommand::List) {
        SessionsCommand::List => write_stdout(session::listing(home).as_bytes()),
        SessionsCommand::Show { file } => {
            let s = Session::load(&session::locate(home, &file))
                .map_err(|e| AiqError::Usage(e.to_string()))?;
            let mut text = format!(
                "{} — {} ({}), created {}, last updated {}, {} turns\n\n",
                s.path.display(),
                s.data_source,
                s.database_type,
                s.created_at.format("%Y-%m-%d %H:%M:%SZ"),
                s.last_updated.format("%Y-%m-%d %H:%M:%SZ"),
                s.turns()
            );
            text.push_str(&session::transcript(&s.messages));
            write_stdout(text.as_bytes())
        }
        SessionsCommand::Rm { file } => {
            let path = session::locate(home, &file);
            // Only session files: never delete something else by mistake.
            Session::load(&path).map_err(|e| AiqError::Usage(format!("{e} (not removed)")))?;
            std::fs::remove_file(&path)
                .map_err(|e| AiqError::Usage(format!("cannot remove {}: {e}", path.display())))?;
            eprintln!("aiq: removed {}", path.display());
            Ok(())
        }
    }
}
