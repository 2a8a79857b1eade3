//! `aiq schema [SOURCE]`: the catalog in the compact text form the model
//! gets. Opens the source read-only, whatever the flags.

use super::{source_error, write_stdout, Context};
use crate::error::AiqError;
use crate::source::{self, OpenOptions};

pub fn run(ctx: &Context<'_>, source_arg: Option<&str>) -> Result<(), AiqError> {
    let resolved = ctx.resolve_source(source_arg)?;
    let src = source::open(&resolved.spec, OpenOptions::default()).map_err(source_error)?;
    let catalog = src.introspect().map_err(source_error)?;
    if catalog.tables.is_empty() {
        eprintln!("aiq: {} has no tables or views", resolved.label);
    }
    write_stdout(catalog.render().as_bytes())
}
