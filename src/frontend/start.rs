//! How a front end that holds a conversation open (the chat, the
//! full-screen view) finds its starting point: the restored session
//! (`-s FILE`), the source to open — SOURCE, else the session's, else the
//! default — and, when none opens, a saved name or path asked for on the
//! terminal until one does. Input and output go through the caller, so each
//! front end asks in its own way.

use std::path::Path;

use rustyline::error::ReadlineError;
use rustyline::history::History;
use rustyline::{Editor, Helper};

use crate::agent::{Keep, Opened};
use crate::context::Context;
use crate::error::AiqError;
use crate::frontend::stderr_line;
use crate::session::Session;

/// What a front end says and asks while it starts.
pub trait StartPrompt {
    /// Shows one line (a bad session file, a source that is gone).
    fn say(&mut self, line: &str);
    /// Asks for a line; `None` gives up.
    fn ask(&mut self, prompt: &str) -> Option<String>;
}

/// Starting questions at a line editor's prompt, notes on stderr.
pub struct EditorPrompt<'a, H: Helper, I: History>(pub &'a mut Editor<H, I>);

impl<H: Helper, I: History> StartPrompt for EditorPrompt<'_, H, I> {
    fn say(&mut self, line: &str) {
        stderr_line(line);
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        loop {
            match self.0.readline(prompt) {
                Ok(line) => return Some(line),
                Err(ReadlineError::Interrupted) => continue,
                Err(_) => return None,
            }
        }
    }
}

/// Opens source `name` with an indicator while it takes.
fn open_showing(ctx: &Context<'_>, name: &str, allow_write: bool) -> Result<Opened, AiqError> {
    let _waiting = super::progress::opening(ctx, Some(name));
    ctx.open_source(Some(name), allow_write)
}

/// The source to talk to and where the conversation is kept: a restored
/// session, or a new one. An explicit SOURCE that cannot be opened is an
/// error; any other source that cannot be opened is reported and another
/// one asked for.
pub fn open_for_chat(
    ctx: &Context<'_>,
    source_arg: Option<&str>,
    session: Option<&Path>,
    allow_write: bool,
    prompt: &mut dyn StartPrompt,
) -> Result<(Opened, Keep), AiqError> {
    let restored = match session {
        Some(path) => match Session::load(&crate::session::locate(&ctx.config.home, path)) {
            Ok(s) => {
                prompt.say(&format!("aiq: {}", crate::session::restored_line(&s)));
                Some(s)
            }
            Err(e) => {
                prompt.say(&format!("aiq: cannot restore {e}; starting a new session"));
                None
            }
        },
        None => None,
    };
    let wanted = source_arg
        .map(str::to_string)
        .or_else(|| restored.as_ref().map(|s| s.data_source.clone()))
        .or_else(|| ctx.config.sources.default.clone());
    let opened = match wanted {
        Some(name) => match open_showing(ctx, &name, allow_write) {
            Ok(o) => o,
            Err(e) if source_arg.is_some() => return Err(e),
            Err(e) => {
                prompt.say(&format!(
                    "aiq: the data source '{name}' cannot be opened: {e}"
                ));
                pick_source(ctx, allow_write, prompt)?
            }
        },
        None => pick_source(ctx, allow_write, prompt)?,
    };
    let keep = restored
        .map(|s| Keep::Session(Box::new(s)))
        .unwrap_or(Keep::NewSession);
    Ok((opened, keep))
}

/// Lists the saved sources and asks for one until something opens.
fn pick_source(
    ctx: &Context<'_>,
    allow_write: bool,
    prompt: &mut dyn StartPrompt,
) -> Result<Opened, AiqError> {
    let names: Vec<&str> = ctx.config.sources.names().collect();
    if names.is_empty() {
        prompt.say("aiq: no sources are saved yet.");
    } else {
        prompt.say(&format!("aiq: saved sources: {}", names.join(", ")));
    }
    loop {
        let Some(line) = prompt.ask("Source (a saved name or a path): ") else {
            return Err(AiqError::Usage("no data source chosen".into()));
        };
        if line.trim().is_empty() {
            continue;
        }
        match ctx.open_source(Some(line.trim()), allow_write) {
            Ok(o) => return Ok(o),
            Err(e) => prompt.say(&format!("aiq: {e}")),
        }
    }
}
