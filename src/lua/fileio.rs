//! `aiq.read_file` and `aiq.write_file`, the host side: the working
//! directory rule of [`super::files`], the memory limit for what is read,
//! and for writing `--allow-write` plus a confirmation, like a statement
//! that changes data.

use std::time::Instant;

use mlua::{Lua, Value as LuaValue};

use super::api::{fail, text_arg, Host, Refusal};
use super::audit::{ms, Call};
use super::files;
use super::limits::Stop;
use crate::agent::{ConfirmKind, PendingAnswer};

/// What a host function gives the prelude.
type Reply = mlua::Result<(bool, LuaValue)>;

impl Host<'_> {
    /// The files no program touches: the source's own and aiq's home,
    /// resolved once a run (a dataset may have thousands of files).
    fn kept(&self) -> &files::Kept {
        self.kept.get_or_init(|| {
            files::Kept::new(
                self.env.source.own_files(),
                crate::home::locate(&|k| std::env::var(k).ok()),
            )
        })
    }

    /// `aiq.read_file(path)`: a file inside the working directory.
    pub(super) fn read_file(&mut self, lua: &Lua, path: LuaValue) -> Reply {
        let Some(path) = text_arg(&path) else {
            return fail(
                lua,
                "aiq.read_file needs a path: aiq.read_file(\"data.csv\")",
            );
        };
        self.calling("read_file", &path)?;
        let mut call = Call {
            function: "read_file",
            path: Some(path.clone()),
            ..Call::default()
        };
        let read = files::readable(self.env.workdir, &path, self.kept()).and_then(|full| {
            let size = std::fs::metadata(&full).map(|m| m.len()).unwrap_or(0);
            if size > self.memory_bytes() {
                return Ok(None);
            }
            let bytes = std::fs::read(&full).map_err(|e| format!("cannot read {path}: {e}"))?;
            match files::refuses_content(&path, &bytes) {
                Some(why) => Err(why),
                None => Ok(Some(bytes)),
            }
        });
        match read {
            Ok(Some(bytes)) => {
                // What a file holds may be what an earlier program wrote
                // of a redacted column: while any is redacted, a program
                // that read a file sends nothing of what it shows.
                if self.env.policy.redaction.is_some() {
                    self.env.policy.read_redacted.set_unknown();
                }
                call.bytes = Some(bytes.len() as u64);
                let said = format!("{} bytes", bytes.len());
                let s = lua.create_string(&bytes).map_err(|e| self.lua_failed(e))?;
                self.called(call, said)?;
                Ok((true, LuaValue::String(s)))
            }
            Ok(None) => Err(self.stop(Stop::Memory)),
            Err(message) => {
                call.error = Some(message.clone());
                self.called(call, message.clone())?;
                fail(lua, &message)
            }
        }
    }

    /// `aiq.write_file(path, text)`: only with `--allow-write`, confirmed
    /// like a write statement.
    pub(super) fn write_file(&mut self, lua: &Lua, path: LuaValue, text: LuaValue) -> Reply {
        let (Some(path), LuaValue::String(text)) = (text_arg(&path), &text) else {
            return fail(
                lua,
                "aiq.write_file needs a path and a string: aiq.write_file(\"out.csv\", text)",
            );
        };
        self.calling("write_file", &path)?;
        let bytes = text.as_bytes().to_vec();
        let mut call = Call {
            function: "write_file",
            path: Some(path.clone()),
            bytes: Some(bytes.len() as u64),
            ..Call::default()
        };
        let started = Instant::now();
        let outcome = self.write_checked(&path, &bytes);
        call.ms = ms(started.elapsed());
        match outcome? {
            Ok(()) => {
                self.called(call, format!("{} bytes written", bytes.len()))?;
                Ok((true, LuaValue::Nil))
            }
            Err(message) => {
                call.error = Some(message.clone());
                self.called(call, message.clone())?;
                fail(lua, &message)
            }
        }
    }

    fn write_checked(&mut self, path: &str, bytes: &[u8]) -> mlua::Result<Result<(), String>> {
        if !self.env.policy.allow_write {
            let message = "refused: aiq.write_file writes a file and aiq is read-only by default (run with --allow-write to allow it, plus --yes in scripts)".to_string();
            self.refusal = Some(Refusal {
                message: message.clone(),
                fixable: false,
            });
            return Ok(Err(message));
        }
        let full = match files::writable(self.env.workdir, path, self.kept()) {
            Ok(full) => full,
            Err(m) => return Ok(Err(m)),
        };
        // An existing session file is not overwritten either.
        if let Some(why) = std::fs::read(&full)
            .ok()
            .and_then(|old| files::refuses_content(path, &old))
        {
            return Ok(Err(why));
        }
        let detail = Some(format!("{path} ({} bytes)", bytes.len()));
        let token = self.stopper.token().clone();
        let asked = PendingAnswer::ask(
            &mut *self.env.sink,
            &token,
            ConfirmKind::Write,
            "Write this file?",
            detail,
        );
        match asked {
            Err(e) => {
                self.sink_error = Some(e);
                Err(self.stop(Stop::Sink))
            }
            Ok(None) => Err(self.stop(self.stopper.reason().unwrap_or(Stop::Cancelled))),
            Ok(Some(false)) => {
                let message = format!("not run: writing {path} was not confirmed (answer y at the prompt, or add --yes to run it from a script)");
                self.refusal = Some(Refusal {
                    message: message.clone(),
                    fixable: false,
                });
                Ok(Err(message))
            }
            Ok(Some(true)) => {
                Ok(std::fs::write(&full, bytes).map_err(|e| format!("cannot write {path}: {e}")))
            }
        }
    }
}
