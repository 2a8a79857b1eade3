//! `aiq notes edit|show [SOURCE]`: a source's notes for the model
//! (`$AIQ_HOME/notes/NAME.md`, see [`crate::notes`]). `edit` opens the
//! file in `$VISUAL`/`$EDITOR` (a commented example when it is new);
//! `show` prints it.

use std::process::Command;

use super::{write_stdout, Context};
use crate::cli::NotesCommand;
use crate::error::AiqError;
use crate::notes;

pub fn run(ctx: &Context<'_>, action: NotesCommand) -> Result<(), AiqError> {
    let home = &ctx.config.home;
    match action {
        NotesCommand::Show { source } => {
            let key = ctx.notes_key(source.as_deref())?;
            let path = crate::home::notes_file(home, &key);
            match std::fs::read_to_string(&path) {
                Ok(text) => write_stdout(text.as_bytes()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    crate::error::stderr_line(&format!(
                        "aiq: no notes yet ({}); write some with `aiq notes edit{}` or /note in the chat",
                        path.display(),
                        source.map(|s| format!(" {s}")).unwrap_or_default()
                    ));
                    Ok(())
                }
                Err(e) => Err(AiqError::Usage(format!(
                    "cannot read {}: {e}",
                    path.display()
                ))),
            }
        }
        NotesCommand::Edit { source } => {
            let key = ctx.notes_key(source.as_deref())?;
            let path = crate::home::notes_file(home, &key);
            if !path.exists() {
                notes::write(home, &path, notes::TEMPLATE).map_err(|e| {
                    AiqError::Usage(format!("cannot write {}: {e}", path.display()))
                })?;
            }
            // The editor works on a copy, so notes a chat adds meanwhile
            // (`/note`) are merged in, not overwritten, when it is saved.
            let original = crate::notes::read_existing(&path)
                .map_err(|e| AiqError::Usage(format!("cannot edit the notes: {e}")))?;
            let copy = edit_copy(&path);
            notes::write(home, &copy, &original)
                .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", copy.display())))?;
            let _remove = RemoveOnDrop(copy.clone());
            let editor = (ctx.env)("VISUAL")
                .or_else(|| (ctx.env)("EDITOR"))
                .filter(|e| !e.trim().is_empty())
                .unwrap_or_else(|| "vi".into());
            // `EDITOR="code --wait"`: the command and its arguments.
            let mut parts = editor.split_whitespace();
            let program = parts.next().unwrap_or("vi");
            let status = Command::new(program)
                .args(parts)
                .arg(&copy)
                .status()
                .map_err(|e| {
                    AiqError::Usage(format!(
                        "cannot start the editor '{editor}': {e} (set EDITOR, or edit {} directly)",
                        path.display()
                    ))
                })?;
            if !status.success() {
                return Err(AiqError::Usage(format!(
                    "the editor '{editor}' failed ({status}); the notes are in {}",
                    path.display()
                )));
            }
            let edited = std::fs::read_to_string(&copy)
                .map_err(|e| AiqError::Usage(format!("cannot read {}: {e}", copy.display())))?;
            let kept = notes::replace_edited(home, &path, &original, &edited)
                .map_err(|e| AiqError::Usage(format!("cannot write {}: {e}", path.display())))?;
            if kept > 0 {
                crate::error::stderr_line(&format!(
                    "aiq: kept {kept} line(s) another aiq added while the editor was open"
                ));
            }
            crate::error::stderr_line(&format!("aiq: notes saved in {}", path.display()));
            Ok(())
        }
    }
}

/// The copy the editor works on, beside the notes file (same extension,
/// so the editor highlights it as Markdown).
fn edit_copy(path: &std::path::Path) -> std::path::PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{stem}.edit-{}.md", std::process::id()))
}

/// Removes the editor's copy however the edit ends.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
