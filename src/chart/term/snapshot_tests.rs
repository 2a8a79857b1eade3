//! Terminal charts as people see them: each kind at 80 columns, Unicode
//! and ASCII, kept as insta snapshots (`src/chart/term/snapshots/`); colour
//! only when asked; small areas never panic.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::chart::testing;

const UNICODE: Look = Look {
    unicode: true,
    color: false,
};
const ASCII: Look = Look {
    unicode: false,
    color: false,
};

fn charts() -> [(&'static str, Chart); 4] {
    [
        ("bar", testing::bar()),
        ("line", testing::line()),
        ("scatter", testing::scatter()),
        ("hist", testing::hist()),
    ]
}

#[test]
fn each_kind_at_80_columns_in_unicode() {
    for (name, chart) in charts() {
        insta::assert_snapshot!(format!("{name}_unicode_80"), to_text(&chart, 80, UNICODE));
    }
}

#[test]
fn each_kind_at_80_columns_in_ascii() {
    for (name, chart) in charts() {
        let text = to_text(&chart, 80, ASCII);
        // Data labels keep their letters; the drawing is ASCII.
        let drawing: String = text.replace("São Paulo", "Sao Paulo");
        assert!(drawing.is_ascii(), "{name}:\n{text}");
        insta::assert_snapshot!(format!("{name}_ascii_80"), text);
    }
}

#[test]
fn colour_only_when_asked() {
    for (name, chart) in charts() {
        assert!(!to_text(&chart, 80, UNICODE).contains('\x1b'), "{name}");
        let colored = to_text(
            &chart,
            80,
            Look {
                unicode: true,
                color: true,
            },
        );
        assert!(colored.contains("\x1b[0;36m"), "{name}: {colored}");
        assert!(colored.contains("\x1b[0;1m"), "{name}: the title is bold");
    }
}

#[test]
fn width_follows_the_terminal() {
    let chart = testing::bar();
    for width in [40u16, 80, 132] {
        let text = to_text(&chart, width, UNICODE);
        let widest = text.lines().map(|l| l.width()).max().unwrap();
        assert_eq!(widest, width as usize, "{width}:\n{text}");
    }
    // Never narrower than a chart can be, never wider than reads well.
    let text = to_text(&chart, 10, UNICODE);
    assert_eq!(
        text.lines().map(|l| l.width()).max(),
        Some(MIN_WIDTH as usize)
    );
    let text = to_text(&chart, 400, UNICODE);
    assert_eq!(
        text.lines().map(|l| l.width()).max(),
        Some(text::MAX_WIDTH as usize)
    );
}

#[test]
fn small_areas_never_panic_and_say_so() {
    for (name, chart) in charts() {
        for (w, h) in [(0, 0), (1, 1), (10, 3), (30, 3), (30, 4), (24, 6), (200, 3)] {
            let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
            draw(&chart, Rect::new(0, 0, w, h), &mut buf, UNICODE);
            if w > 0 && h > 0 && (w < MIN_WIDTH || h < MIN_HEIGHT) {
                let first: String = (0..w).map(|x| buf[(x, 0)].symbol().to_string()).collect();
                let said: String = "(too small for a chart".chars().take(w as usize).collect();
                assert!(first.starts_with(&said), "{name} {w}x{h}: {first}");
            }
        }
    }
}

#[test]
fn too_many_bars_for_the_area_say_how_many_are_left() {
    let chart = testing::bar();
    let area = Rect::new(0, 0, 60, 3);
    let mut buf = Buffer::empty(area);
    draw(&chart, area, &mut buf, UNICODE);
    let last: String = (0..60).map(|x| buf[(x, 2)].symbol().to_string()).collect();
    assert!(
        last.starts_with("… 3 more (make the window taller)"),
        "{last}"
    );
}

#[test]
fn long_notes_wrap_and_other_is_cut_off_with_its_value() {
    use crate::source::Value;
    let rows = (0..30)
        .map(|i| vec![Value::Text(format!("product {i}")), Value::Int(100 + i)])
        .collect();
    let rec = testing::recording(&[("name", "TEXT"), ("units", "INTEGER")], rows);
    let chart = crate::chart::build(&rec, &crate::chart::ChartSpec::default()).unwrap();
    let text = to_text(&chart, 40, UNICODE);
    assert!(text.lines().all(|l| l.width() <= 40), "{text}");
    let notes: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("note:"))
        .collect();
    assert_eq!(
        notes,
        [
            "note: 30 bars: the 19 largest by units,",
            "      the other 11 added up as \"other\""
        ]
    );
    // "other" (1,155) is longer than the scale of the rest: cut, with its value.
    let other = text.lines().find(|l| l.starts_with("other")).unwrap();
    assert!(other.contains("█»"), "{other}");
    assert!(other.ends_with("1,155"), "{other}");
    let top = text.lines().find(|l| l.starts_with("product 29")).unwrap();
    assert!(!top.contains('»'), "{top}");
}

#[test]
fn series_of_different_scales_get_a_panel_each() {
    let chart = testing::mixed();
    assert_eq!(chart.small_series(), Some(vec![1]));
    let text = to_text(&chart, 80, UNICODE);
    assert!(
        text.contains("one panel per series: their scales differ"),
        "{text}"
    );
    insta::assert_snapshot!("mixed_unicode_80", text);
    insta::assert_snapshot!("mixed_ascii_80", to_text(&chart, 80, ASCII));
    // Series of one scale share one plot, as before.
    assert_eq!(testing::line().small_series(), None);
}
