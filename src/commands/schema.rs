//! `aiq schema [SOURCE]`: the catalog in the compact text form the model
//! gets. Opens the source read-only, whatever the flags.

use super::{write_stdout, Context};
use crate::error::AiqError;

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>) -> Result<(), AiqError> {
    let opened = ctx.open_source(source_arg, false)?;
    if opened.catalog.tables.is_empty() {
        eprintln!("aiq: {} has no tables or views", opened.label);
    }
    write_stdout(opened.catalog.render().as_bytes())
}
