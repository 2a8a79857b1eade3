//! Images as files: the SVG parsed as XML with one bar per category, one
//! point per row; the PNG decoded with its size and real content; the
//! file written atomically, a bad name refused.

use super::*;
use crate::chart::testing;

fn svg(chart: &Chart) -> String {
    String::from_utf8(render(chart, ImageFormat::Svg).unwrap()).unwrap()
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Elements named `tag` drawn in series colour `i`.
fn in_color<'a>(
    doc: &'a roxmltree::Document,
    tag: &str,
    attr: &str,
    i: usize,
) -> Vec<roxmltree::Node<'a, 'a>> {
    let color = hex(SERIES_COLORS[i]);
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(attr) == Some(color.as_str()))
        .collect()
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn an_svg_bar_chart_has_one_bar_per_category_and_readable_labels() {
    let text = svg(&testing::bar());
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!(root.attribute("width"), Some("1200"));
    assert_eq!(root.attribute("height"), Some("675"));
    assert_eq!(in_color(&doc, "rect", "fill", 0).len(), 5);
    let texts = texts(&doc);
    for label in [
        "revenue per country",
        "US",
        "São Paulo",
        "48.3k",
        "-2,450",
        "revenue",
    ] {
        assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
    }
}

#[test]
fn an_svg_line_chart_has_every_point_and_a_legend() {
    let text = svg(&testing::line());
    let doc = roxmltree::Document::parse(&text).unwrap();
    for series in 0..2 {
        let lines = in_color(&doc, "polyline", "stroke", series);
        let points: Vec<usize> = lines
            .iter()
            .map(|l| l.attribute("points").unwrap().split_whitespace().count())
            .collect();
        // The line's 24 points, and the legend's short stroke.
        assert_eq!(points, [24, 2], "series {series}");
    }
    let texts = texts(&doc);
    for label in ["revenue", "cost", "month", "2024-01", "2025-01"] {
        assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
    }
}

#[test]
fn series_of_different_scales_get_a_right_axis_in_an_image() {
    let text = svg(&testing::mixed());
    let doc = roxmltree::Document::parse(&text).unwrap();
    let texts = texts(&doc);
    for label in [
        "line · revenue, orders by month · orders on the right axis: the scales differ",
        "orders (right axis)",
        "revenue",
        "orders",
        "340",
        "120k",
    ] {
        assert!(texts.iter().any(|t| t == label), "{label} in {texts:?}");
    }
    // The small series spans the plot's height instead of lying flat.
    let ys: Vec<f64> = in_color(&doc, "polyline", "stroke", 1)[0]
        .attribute("points")
        .unwrap()
        .split_whitespace()
        .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    let spread =
        ys.iter().cloned().fold(f64::MIN, f64::max) - ys.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 300.0, "orders spread over {spread} px");
}

#[test]
fn an_svg_scatter_and_histogram_draw_each_point_and_bin() {
    let doc_text = svg(&testing::scatter());
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    assert_eq!(in_color(&doc, "circle", "fill", 0).len(), 60);
    let hist = testing::hist();
    let Body::Bins { bins } = &hist.body else {
        panic!()
    };
    let doc_text = svg(&hist);
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    assert_eq!(in_color(&doc, "rect", "fill", 0).len(), bins.len());
    assert!(texts(&doc)
        .iter()
        .any(|t| t.starts_with("Note: 500 values in")));
}

#[test]
fn a_png_has_its_size_and_is_drawn() {
    let bytes = render(&testing::line(), ImageFormat::Png).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let rgb: Vec<(u8, u8, u8)> = pixels.chunks(3).map(|p| (p[0], p[1], p[2])).collect();
    let of = |c: RGBColor| rgb.iter().filter(|p| **p == (c.0, c.1, c.2)).count();
    // Both lines are drawn, and the title's text is there (dark pixels top left).
    assert!(of(SERIES_COLORS[0]) > 1_000, "{}", of(SERIES_COLORS[0]));
    assert!(of(SERIES_COLORS[1]) > 1_000);
    let title_ink = (30..60)
        .flat_map(|y| (40..400).map(move |x| (x, y)))
        .filter(|(x, y)| rgb[(*y * WIDTH as usize) + *x].0 < 100)
        .count();
    assert!(title_ink > 500, "{title_ink}");
    assert!(of(WHITE) > rgb.len() / 2);
}

#[test]
fn files_are_written_whole_and_bad_names_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chart.SVG");
    assert_eq!(write(&testing::bar(), &path), Ok(ImageFormat::Svg));
    assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    let bad = dir.path().join("chart.jpg");
    assert_eq!(
        write(&testing::bar(), &bad),
        Err(format!(
            "cannot write a chart to {}: give a file name ending in .svg or .png",
            bad.display()
        ))
    );
    let missing = dir.path().join("no/such/dir/c.png");
    let e = write(&testing::bar(), &missing).unwrap_err();
    assert!(
        e.starts_with(&format!("cannot write {}: ", missing.display())),
        "{e}"
    );
}

#[test]
fn zz_preview() {
    std::fs::create_dir_all("/tmp/charts").unwrap();
    for (name, c) in [
        ("bar", testing::bar()),
        ("line", testing::line()),
        ("scatter", testing::scatter()),
        ("hist", testing::hist()),
    ] {
        write(&c, std::path::Path::new(&format!("/tmp/charts/{name}.png"))).unwrap();
        write(&c, std::path::Path::new(&format!("/tmp/charts/{name}.svg"))).unwrap();
        for unicode in [true, false] {
            let t = crate::chart::term::to_text(
                &c,
                80,
                crate::chart::term::Look {
                    unicode,
                    color: false,
                },
            );
            std::fs::write(format!("/tmp/charts/{name}-{unicode}.txt"), t).unwrap();
        }
    }
}
