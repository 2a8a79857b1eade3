//! A [`Chart`] as an image: SVG or PNG, drawn by plotters — the same chart
//! as in the terminal, with the title (the question), axis names, round
//! ticks, dates as dates, a legend for several series and the notes. The
//! text uses DejaVu Sans, embedded in the binary (no system fonts), so a
//! PNG looks the same on every machine. Files are written atomically.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontDesc, FontFamily, FontStyle, RGBColor, TextStyle};

use super::axis::{amount, compact, time_ticks, widen, Ticks};
use super::model::{Bin, Body, Chart, PointSeries, Scale, Series};
use super::spec::{ImageFormat, Kind};
use super::term::base_subtitle;

/// Image size in pixels (16:9).
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 675;
/// The font family: the embedded DejaVu Sans; in an SVG, the viewer's
/// own sans-serif when it has no DejaVu.
const FONT: &str = "DejaVu Sans, sans-serif";
/// The colours of series 1, 2, … (the Tableau 10 palette).
pub const SERIES_COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
const INK: RGBColor = RGBColor(34, 34, 34);
const GREY: RGBColor = RGBColor(110, 110, 110);
const GRID: RGBColor = RGBColor(228, 228, 228);
/// Value labels are written next to bars up to this many bars.
const LABELLED_BARS: usize = 30;

type Coords = Cartesian2d<Keyed, Keyed>;
type Result<T> = std::result::Result<T, String>;

/// Writes `chart` to `path` as the image its extension names, atomically
/// (an existing file stays as it was if anything fails).
pub fn write(chart: &Chart, path: &Path) -> Result<ImageFormat> {
    let format = ImageFormat::of(path)?;
    let bytes = render(chart, format)?;
    crate::home::write_atomic_shared(path, |f| std::io::Write::write_all(f, &bytes))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format)
}

/// The image's bytes.
pub fn render(chart: &Chart, format: ImageFormat) -> Result<Vec<u8>> {
    fonts()?;
    match format {
        ImageFormat::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (WIDTH, HEIGHT)).into_drawing_area();
                draw(&root, chart)?;
                root.present().map_err(fail)?;
            }
            Ok(text.into_bytes())
        }
        ImageFormat::Png => {
            let mut pixels = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
            {
                let root =
                    BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
                draw(&root, chart)?;
                root.present().map_err(fail)?;
            }
            encode_png(&pixels)
        }
    }
}

/// RGB pixels as PNG bytes.
fn encode_png(pixels: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(pixels).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(out)
}

/// Registers the embedded font once (plotters looks fonts up by name).
fn fonts() -> Result<()> {
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let regular = dejavu::sans::regular();
        let bold = dejavu::sans::bold();
        for name in [FONT, "sans-serif"] {
            plotters::style::register_font(name, FontStyle::Normal, regular)
                .and_then(|_| plotters::style::register_font(name, FontStyle::Bold, bold))
                .map_err(|_| "the embedded font could not be loaded".to_string())?;
        }
        Ok(())
    })
    .clone()
}

fn fail(e: impl std::fmt::Display) -> String {
    format!("cannot draw the chart: {e}")
}

fn font(size: f64, bold: bool) -> TextStyle<'static> {
    let style = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    TextStyle::from(FontDesc::new(FontFamily::Name(FONT), size, style))
}

/// The whole image: title and subtitle, the chart, the notes.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<()> {
    root.fill(&WHITE).map_err(fail)?;
    let title = super::term::fit(&chart.title, 80);
    root.draw_text(&title, &font(28.0, true).color(&INK), (40, 22))
        .map_err(fail)?;
    root.draw_text(
        &image_subtitle(chart),
        &font(17.0, false).color(&GREY),
        (40, 62),
    )
    .map_err(fail)?;
    let notes_height = 12 + 24 * chart.notes.len() as u32;
    let (_, rest) = root.split_vertically(95);
    let (body, foot) = rest.split_vertically(HEIGHT - 95 - notes_height);
    for (i, note) in chart.notes.iter().enumerate() {
        let y = 6 + 24 * i as i32;
        foot.draw_text(
            &format!("Note: {note}"),
            &font(16.0, false).color(&GREY),
            (40, y),
        )
        .map_err(fail)?;
    }
    match &chart.body {
        Body::Points { series } => match chart.small_series() {
            Some(small) => two_axes(&body, chart, series, &small),
            None => points(&body, chart, series),
        },
        Body::Bars { labels, series, .. } => bars(&body, chart, labels, series),
        Body::Bins { bins } => histogram(&body, chart, bins),
    }
}

/// What kind of chart, of what — and which series are on the right axis
/// when the scales differ.
fn image_subtitle(chart: &Chart) -> String {
    let base = base_subtitle(chart);
    let (Some(small), Body::Points { series }) = (chart.small_series(), &chart.body) else {
        return base;
    };
    let names: Vec<&str> = small.iter().map(|&i| series[i].name.as_str()).collect();
    format!(
        "{base} · {} on the right axis: the scales differ",
        names.join(", ")
    )
}

/// Points of series whose scales differ: the large ones on the left axis,
/// `small` ones on a right axis of their own, each axis named.
fn two_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    series: &[PointSeries],
    small: &[usize],
) -> Result<()> {
    let (x_lo, x_hi) = chart.x_range().unwrap_or((0.0, 1.0));
    let (x_lo, x_hi, x_keys) = x_keys(&chart.x.scale, x_lo, x_hi);
    let side = |right: bool| -> Vec<&PointSeries> {
        series
            .iter()
            .enumerate()
            .filter(|(i, _)| small.contains(i) == right)
            .map(|(_, s)| s)
            .collect()
    };
    let (left, right) = (side(false), side(true));
    let ticks_of = |group: &[&PointSeries]| {
        let (lo, hi) = super::model::range(group.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
            .unwrap_or((0.0, 1.0));
        Ticks::new(lo, hi, 6)
    };
    let (lt, rt) = (ticks_of(&left), ticks_of(&right));
    let names = |group: &[&PointSeries]| {
        group
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let scale = chart.x.scale.clone();
    let span = x_hi - x_lo;
    let x_label = move |v: &f64| scale.tick(*v, span);
    let mut cc = ChartBuilder::on(area)
        .margin_left(20)
        .margin_right(20)
        .margin_top(10)
        .margin_bottom(10)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .right_y_label_area_size(90)
        .build_cartesian_2d(
            Keyed::new((x_lo, x_hi, x_keys.clone())),
            Keyed::new((lt.lo, lt.hi, lt.values())),
        )
        .map_err(fail)?
        .set_secondary_coord(
            Keyed::new((x_lo, x_hi, x_keys)),
            Keyed::new((rt.lo, rt.hi, rt.values())),
        );
    cc.configure_mesh()
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| compact(*v))
        .x_desc(&chart.x.name)
        .y_desc(names(&left))
        .label_style(font(16.0, false).color(&INK))
        .axis_desc_style(font(17.0, false).color(&GREY))
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .axis_style(GREY)
        .draw()
        .map_err(fail)?;
    cc.configure_secondary_axes()
        .y_label_formatter(&|v| compact(*v))
        .y_desc(names(&right))
        .label_style(font(16.0, false).color(&INK))
        .axis_desc_style(font(17.0, false).color(&GREY))
        .axis_style(GREY)
        .draw()
        .map_err(fail)?;
    for (i, s) in series.iter().enumerate() {
        let color = SERIES_COLORS[i % SERIES_COLORS.len()];
        let name = match small.contains(&i) {
            true => format!("{} (right axis)", s.name),
            false => s.name.clone(),
        };
        let line = LineSeries::new(s.points.iter().copied(), color.stroke_width(2));
        let drawn = match (small.contains(&i), chart.kind == Kind::Line) {
            (true, true) => cc.draw_secondary_series(line),
            (false, true) => cc.draw_series(line),
            (true, false) => cc.draw_secondary_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 3, color.mix(0.7).filled())),
            ),
            (false, false) => cc.draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 3, color.mix(0.7).filled())),
            ),
        };
        drawn.map_err(fail)?.label(name).legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(4))
        });
    }
    cc.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .label_font(font(16.0, false).color(&INK))
        .draw()
        .map_err(fail)
}

/// Draws the axes and grid with `x`/`y` key points and their labels.
#[allow(clippy::too_many_arguments)]
fn frame<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x: (f64, f64, Vec<f64>),
    y: (f64, f64, Vec<f64>),
    x_label: &dyn Fn(&f64) -> String,
    y_label: &dyn Fn(&f64) -> String,
    names: (&str, &str),
    y_label_width: u32,
) -> Result<ChartContext<'a, DB, Coords>> {
    let mut cc = ChartBuilder::on(area)
        .margin_left(20)
        .margin_right(40)
        .margin_top(10)
        .margin_bottom(10)
        .x_label_area_size(60)
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(Keyed::new(x), Keyed::new(y))
        .map_err(fail)?;
    cc.configure_mesh()
        .x_label_formatter(x_label)
        .y_label_formatter(y_label)
        .x_desc(names.0)
        .y_desc(names.1)
        .label_style(font(16.0, false).color(&INK))
        .axis_desc_style(font(17.0, false).color(&GREY))
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .axis_style(GREY)
        .draw()
        .map_err(fail)?;
    Ok(cc)
}

fn points<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    series: &[PointSeries],
) -> Result<()> {
    let (x_lo, x_hi) = chart.x_range().unwrap_or((0.0, 1.0));
    let (x_lo, x_hi, x_keys) = x_keys(&chart.x.scale, x_lo, x_hi);
    let (y_lo, y_hi) = chart.y_range().unwrap_or((0.0, 1.0));
    let ticks = Ticks::new(y_lo, y_hi, 6);
    let scale = chart.x.scale.clone();
    let span = x_hi - x_lo;
    let x_label = move |v: &f64| scale.tick(*v, span);
    let y_name = if series.len() > 1 {
        ""
    } else {
        chart.y_name.as_str()
    };
    let mut cc = frame(
        area,
        (x_lo, x_hi, x_keys),
        (ticks.lo, ticks.hi, ticks.values()),
        &x_label,
        &|v| compact(*v),
        (&chart.x.name, y_name),
        80,
    )?;
    for (i, s) in series.iter().enumerate() {
        let color = SERIES_COLORS[i % SERIES_COLORS.len()];
        let legend = move |(x, y): (i32, i32)| {
            PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(4))
        };
        if chart.kind == Kind::Line {
            cc.draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(fail)?
            .label(&s.name)
            .legend(legend);
            // A line of one point is a dot.
            if s.points.len() == 1 {
                cc.draw_series(s.points.iter().map(|p| Circle::new(*p, 4, color.filled())))
                    .map_err(fail)?;
            }
        } else {
            cc.draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 3, color.mix(0.7).filled())),
            )
            .map_err(fail)?
            .label(&s.name)
            .legend(legend);
        }
    }
    if series.len() > 1 {
        legend(&mut cc, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

/// The series' names and colours, in a box at `position`.
fn legend<'a, DB: DrawingBackend + 'a>(
    cc: &mut ChartContext<'a, DB, Coords>,
    position: SeriesLabelPosition,
) -> Result<()> {
    cc.configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .label_font(font(16.0, false).color(&INK))
        .draw()
        .map_err(fail)
}

/// Bounds and round key points for an x axis of `scale`.
fn x_keys(scale: &Scale, lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    match scale {
        Scale::Time(_) => {
            let (lo, hi) = if hi > lo {
                (lo, hi)
            } else {
                (lo - 86_400.0, hi + 86_400.0)
            };
            (lo, hi, time_ticks(lo, hi, 8))
        }
        Scale::Labels(labels) => {
            let n = labels.len().max(1);
            let every = n.div_ceil(12);
            let keys = (0..n).step_by(every).map(|i| i as f64).collect();
            (-0.5, n as f64 - 0.5, keys)
        }
        Scale::Number => {
            let (lo, hi) = widen(lo, hi);
            let t = Ticks::new(lo, hi, 8);
            (t.lo, t.hi, t.values())
        }
    }
}

fn bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    labels: &[String],
    series: &[Series],
) -> Result<()> {
    let n = labels.len();
    let (lo, hi) = chart.y_range().unwrap_or((0.0, 1.0));
    // Room for the value written past the end of the longest bar.
    let room = (hi - lo) * 0.08;
    let ticks = Ticks::new(
        if lo < 0.0 { lo - room } else { lo },
        if hi > 0.0 { hi + room } else { hi },
        6,
    );
    // The first bar on top: bar i sits at n - 1 - i.
    let shown: Vec<String> = labels.iter().map(|l| super::term::fit(l, 28)).collect();
    let widest = shown.iter().map(|l| l.chars().count()).max().unwrap_or(1) as u32;
    let label_of = |v: &f64| {
        let i = n as f64 - 1.0 - v.round();
        if (v - v.round()).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            shown[i as usize].clone()
        } else {
            String::new()
        }
    };
    let keys: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let value_name = if series.len() > 1 {
        ""
    } else {
        chart.y_name.as_str()
    };
    let mut cc = frame(
        area,
        (ticks.lo, ticks.hi, ticks.values()),
        (-0.5, n as f64 - 0.5, keys),
        &|v| compact(*v),
        &label_of,
        (value_name, ""),
        (widest * 10 + 20).clamp(60, 320),
    )?;
    let band = 0.8 / series.len().max(1) as f64;
    // "other" does not set the scale: longer, it is cut at the axis' end.
    let clip = |v: f64| v.clamp(ticks.lo, ticks.hi);
    for (s, one) in series.iter().enumerate() {
        let color = SERIES_COLORS[s % SERIES_COLORS.len()];
        let rects = one.values.iter().enumerate().map(|(i, v)| {
            let top = (n - 1 - i) as f64 + 0.4 - band * s as f64;
            let v = clip(*v);
            Rectangle::new(
                [(v.min(0.0), top), (v.max(0.0), top - band)],
                color.filled(),
            )
        });
        cc.draw_series(rects)
            .map_err(fail)?
            .label(&one.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        if n * series.len() <= LABELLED_BARS {
            let texts = one.values.iter().enumerate().map(|(i, v)| {
                let middle = (n - 1 - i) as f64 + 0.4 - band * (s as f64 + 0.5);
                bar_value(*v, clip(*v), middle)
            });
            cc.draw_series(texts).map_err(fail)?;
        }
    }
    if series.len() > 1 {
        legend(&mut cc, SeriesLabelPosition::LowerRight)?;
    }
    Ok(())
}

/// The value written at the end of a bar (inside it, white, when the
/// bar is cut off at `shown`).
fn bar_value(v: f64, shown: f64, middle: f64) -> Text<'static, (f64, f64), String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let cut = shown != v;
    let outward = if v < 0.0 { HPos::Right } else { HPos::Left };
    let inward = if v < 0.0 { HPos::Left } else { HPos::Right };
    let (text, h, ink) = if cut {
        let arrow = if v < 0.0 { "«" } else { "»" };
        (format!(" {arrow} {} ", amount(v)), inward, &WHITE)
    } else {
        (format!(" {} ", amount(v)), outward, &INK)
    };
    let style = font(14.0, false).color(ink).pos(Pos::new(h, VPos::Center));
    Text::new(text, (shown, middle), style)
}

fn histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    bins: &[Bin],
) -> Result<()> {
    let lo = bins.first().map_or(0.0, |b| b.lo);
    let hi = bins.last().map_or(1.0, |b| b.hi);
    let (_, top) = chart.y_range().unwrap_or((0.0, 1.0));
    let ticks = Ticks::new(0.0, top, 6);
    let every = bins.len().div_ceil(12).max(1);
    let mut keys: Vec<f64> = bins.iter().step_by(every).map(|b| b.lo).collect();
    keys.push(hi);
    let mut cc = frame(
        area,
        (lo, hi, keys),
        (0.0, ticks.hi, ticks.values()),
        &|v| compact(*v),
        &|v| compact(*v),
        (&chart.x.name, "rows"),
        80,
    )?;
    let color = SERIES_COLORS[0];
    cc.draw_series(bins.iter().map(|b| {
        let mut r = Rectangle::new([(b.lo, b.count as f64), (b.hi, 0.0)], color.filled());
        r.set_margin(0, 0, 1, 1);
        r
    }))
    .map_err(fail)?;
    Ok(())
}

/// A linear axis whose ticks are the ones given (round times, round
/// numbers, one per bar), not plotters' own.
struct Keyed {
    inner: RangedCoordf64,
    keys: Vec<f64>,
}

impl Keyed {
    fn new((lo, hi, keys): (f64, f64, Vec<f64>)) -> Keyed {
        Keyed {
            inner: (lo..hi).into(),
            keys,
        }
    }
}

impl Ranged for Keyed {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Grid lines and labels only at the given ticks.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
