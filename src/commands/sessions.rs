//! `aiq sessions [list|show FILE|rm FILE|search TEXT]`: the saved
//! conversations in `$AIQ_HOME`.

use super::{write_stdout, Context};
use crate::agent::history;
use crate::cli::SessionsCommand;
use crate::error::AiqError;
use crate::privacy::Guard;
use crate::session::{self, Session};

pub fn run(ctx: &Context<'_>, action: Option<SessionsCommand>) -> Result<(), AiqError> {
    let home = &ctx.config.home;
    match action.unwrap_or(SessionsCommand::List) {
        SessionsCommand::List => write_stdout(session::listing(home).as_bytes()),
        SessionsCommand::Show { file } => {
            let s = Session::load(&session::locate(home, std::path::Path::new(&file)))
                .map_err(|e| AiqError::Usage(format!("cannot show the session {e}")))?;
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
        SessionsCommand::Search {
            text,
            source,
            limit,
        } => {
            let sessions: Vec<Session> = session::list(home).into_iter().flatten().collect();
            let wanted = match source.as_deref() {
                Some(s) => Some(ctx.session_name(s)?),
                None => None,
            };
            let mut all = Vec::new();
            for s in sessions
                .iter()
                .filter(|s| wanted.as_deref().is_none_or(|w| s.data_source == w))
            {
                let name = s
                    .path
                    .file_name()
                    .map(|f| format!("{} ({})", f.to_string_lossy(), s.data_source));
                all.extend(history::turns(&s.messages, name));
            }
            let found = history::search(&all, &text, limit.unwrap_or(10), &Guard::default());
            if found.starts_with("no earlier turn") {
                crate::error::stderr_line(&format!("aiq: {found}"));
                return Ok(());
            }
            write_stdout(found.as_bytes())
        }
        SessionsCommand::Rm { file } => {
            let path = session::locate(home, std::path::Path::new(&file));
            // Only session files: never delete something else by mistake. A
            // file named like a session may go even when it is damaged.
            let named_like_one = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(crate::home::is_session_file);
            if !path.is_file() {
                return Err(AiqError::Usage(format!(
                    "cannot remove {}: no such session file (see `aiq sessions`)",
                    path.display()
                )));
            }
            if !named_like_one {
                Session::load(&path).map_err(|e| {
                    AiqError::Usage(format!(
                        "cannot remove {e}; it does not look like a session file, so it was left alone"
                    ))
                })?;
            }
            std::fs::remove_file(&path)
                .map_err(|e| AiqError::Usage(format!("cannot remove {}: {e}", path.display())))?;
            crate::error::stderr_line(&format!("aiq: removed {}", path.display()));
            Ok(())
        }
    }
}
