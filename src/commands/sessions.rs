//! `aiq sessions [list|show FILE|rm FILE]`: the saved conversations in
//! `$AIQ_HOME`.

use std::path::Path;

use super::{write_stdout, Context};
use crate::cli::SessionsCommand;
use crate::error::AiqError;
use crate::session::{self, Session};

pub fn run(ctx: &Context<'_>, action: Option<SessionsCommand>) -> Result<(), AiqError> {
    let home = &ctx.config.home;
    match action.unwrap_or(SessionsCommand::List) {
        SessionsCommand::List => write_stdout(listing(home).as_bytes()),
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

/// The saved sessions, newest first: file, created, last updated, source, turns.
pub fn listing(home: &Path) -> String {
    let sessions = session::list(home);
    if sessions.is_empty() {
        return "(no saved sessions)\n".into();
    }
    let mut rows: Vec<[String; 5]> = vec![[
        "FILE".into(),
        "CREATED".into(),
        "LAST UPDATED".into(),
        "SOURCE".into(),
        "TURNS".into(),
    ]];
    for s in sessions {
        rows.push(match s {
            Ok(s) => [
                file_name(&s.path),
                s.created_at.format("%Y-%m-%d %H:%M:%SZ").to_string(),
                s.last_updated.format("%Y-%m-%d %H:%M:%SZ").to_string(),
                s.data_source.clone(),
                s.turns().to_string(),
            ],
            Err(e) => [
                file_name(Path::new(&e.path)),
                "(unreadable)".into(),
                e.reason,
                String::new(),
                String::new(),
            ],
        });
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
