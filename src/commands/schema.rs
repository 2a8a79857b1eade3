//! `aiq schema [SOURCE] [--refresh]`: the catalog in the compact text form
//! the model gets. Opens the source read-only, whatever the flags; with
//! `--refresh` the catalog is read afresh (and the cache updated).

use super::{write_stdout, Context};
use crate::error::AiqError;

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>, refresh: bool) -> Result<(), AiqError> {
    let waiting = crate::frontend::progress::opening(ctx, source_arg);
    let opened = if refresh {
        ctx.open_source_fresh(source_arg)?
    } else {
        ctx.open_source(source_arg, false)?
    };
    drop(waiting);
    if opened.catalog.tables.is_empty() {
        crate::error::stderr_line(&format!("aiq: {} has no tables or views", opened.label));
    }
    write_stdout(opened.catalog.render().as_bytes())
}
