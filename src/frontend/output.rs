//! How a front end writes results: the format, the render options the
//! terminal decides (width, colour, paging), and the screen results are
//! paged against.

use std::io::{self, IsTerminal};

use crate::cli::RunArgs;
use crate::context::Context;
use crate::render::{Format, RenderOptions};

/// The output format and how to render it: `-f` or the terminal default,
/// `--max-rows` or the config's `chat.max_rows` for table/markdown, the
/// terminal width.
pub fn output_setup(ctx: &Context<'_>, args: &RunArgs) -> (Format, RenderOptions) {
    let format = crate::context::output_format(args);
    (format, render_options(ctx, args, format))
}

/// How `format` is rendered: `--max-rows` (or `chat.max_rows` for formats
/// for people), colour, the terminal width.
pub fn render_options(ctx: &Context<'_>, args: &RunArgs, format: Format) -> RenderOptions {
    let tty = io::stdout().is_terminal();
    let max_rows = match args.max_rows {
        Some(n) => Some(n),
        None if format.is_for_people() => Some(ctx.config.chat.max_rows),
        None => None,
    };
    let width = if tty {
        crossterm::terminal::size().ok().map(|(w, _)| w)
    } else {
        None
    };
    RenderOptions {
        max_rows,
        color: ctx.color(),
        width,
        count_budget: Some(crate::render::COUNT_BUDGET),
        full_width: tty
            && pager_screen(ctx, args).is_some()
            && super::pager::command(ctx.env)
                .is_some_and(|c| super::pager::scrolls_sideways(&c, ctx.env)),
        in_chat: false,
    }
}

/// The screen results are paged against: stdout is a terminal, and
/// neither `--no-pager` nor `[output] pager = false` turned paging off.
pub fn pager_screen(ctx: &Context<'_>, args: &RunArgs) -> Option<super::pager::Screen> {
    if args.no_pager || !ctx.config.output.pager || !io::stdout().is_terminal() {
        return None;
    }
    let (width, height) = crossterm::terminal::size().ok()?;
    Some(super::pager::Screen { width, height })
}
