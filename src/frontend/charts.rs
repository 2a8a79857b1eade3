//! `--chart [KIND]` and `--chart-out FILE` (SPEC §10) for a single run —
//! `-q`, `-e`, and the Lua mode's `--lua FILE` — after its turn: the chart
//! of the run's result drawn on stdout (instead of the table, which the
//! collector left out) and/or written as an image. The result comes from a
//! [`LastResult`] that recorded the turn's events, wherever they came from.

use crate::agent::{EventSink, LastResult, NO_RESULT};
use crate::chart::{ChartSpec, ImageFormat, Kind};
use crate::cli::RunArgs;
use crate::error::AiqError;

/// A chart is asked for (so the result must be kept).
pub fn wanted(run: &RunArgs) -> bool {
    run.chart.is_some() || run.chart_out.is_some()
}

/// `--chart`: the chart replaces the table on stdout.
pub fn replaces_table(run: &RunArgs) -> bool {
    run.chart.is_some()
}

/// Checks before anything runs: an image name aiq can write, and a mode
/// that has a single result (the chat and the view chart with `/chart`).
pub fn check(run: &RunArgs, single: bool) -> Result<(), AiqError> {
    if !wanted(run) {
        return Ok(());
    }
    if !single {
        return Err(AiqError::Usage(
            "--chart and --chart-out draw the result of -q, -e or --lua; in the chat or the view, type /chart".into(),
        ));
    }
    if let Some(out) = &run.chart_out {
        ImageFormat::of(out).map_err(AiqError::Usage)?;
    }
    Ok(())
}

/// Draws what `run` asks for from `last`, through `sink` (the chart on
/// stdout, a notice about the image on stderr). A result that cannot be
/// charted is an error that says why (exit 1).
pub fn draw(last: &LastResult, run: &RunArgs, sink: &mut dyn EventSink) -> Result<(), AiqError> {
    let kind: Option<Kind> = run.chart.flatten();
    let fail = |why: String| {
        AiqError::Query(if why == NO_RESULT {
            "the statement returned no result to chart".into()
        } else {
            why
        })
    };
    if run.chart.is_some() {
        last.chart(&ChartSpec::of_kind(kind), sink).map_err(fail)?;
    }
    if let Some(out) = &run.chart_out {
        let spec = ChartSpec {
            out: Some(out.clone()),
            ..ChartSpec::of_kind(kind)
        };
        last.chart(&spec, sink).map_err(fail)?;
    }
    Ok(())
}
