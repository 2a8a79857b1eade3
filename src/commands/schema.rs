//! `aiq schema [SOURCE] [--refresh]`: the catalog in the compact text form
//! the model gets. Opens the source read-only, whatever the flags; with
//! `--refresh` the catalog is read afresh (and the cache updated).

use super::{write_stdout, Context};
use crate::error::AiqError;

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, refresh: bool) -> Result<(), AiqError> {
    let waiting = crate::frontend::progress::opening(ctx, source_arg);
    let schema = ctx.schema_text(source_arg, refresh)?;
    drop(waiting);
    if schema.text.is_empty() {
        crate::error::stderr_line(&format!("aiq: {} has no tables or views", schema.label));
    }
    write_stdout(schema.text.as_bytes())
}
