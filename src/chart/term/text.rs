//! A chart as lines of text for a terminal (the chat and single-shot): the
//! title, what it shows, the body and the notes drawn into a buffer as wide
//! as the terminal, then written out — with colour as ANSI escapes, or
//! plain; in the ASCII look every drawing character becomes ASCII.

use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthStr;

use super::{body_rows, draw, fit, quiet, subtitle, Look, MIN_WIDTH};
use crate::chart::model::Chart;

/// The widest a chart gets in text, however wide the terminal.
pub const MAX_WIDTH: u16 = 160;

/// `chart` as text `width` columns wide, ending in a newline.
pub fn to_text(chart: &Chart, width: u16, look: Look) -> String {
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    let notes = super::note_lines(chart, width as usize).len() as u16;
    let height = 2 + body_rows(chart) + notes;
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    let bold = if look.color {
        Style::new().add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    };
    buf.set_string(0, 0, fit(&chart.title, width as usize), bold);
    buf.set_string(0, 1, fit(&subtitle(chart), width as usize), quiet(look));
    draw(chart, Rect::new(0, 2, width, height - 2), &mut buf, look);
    lines(&buf, look)
}

/// The buffer's rows as text, trailing spaces trimmed.
fn lines(buf: &Buffer, look: Look) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut current = Style::new();
        let mut skip = 0;
        let mut trimmed = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let cell = &buf[(x, y)];
            let symbol = if look.unicode {
                cell.symbol().to_string()
            } else {
                ascii(cell.symbol())
            };
            skip = symbol.width().saturating_sub(1);
            let mut style = Style::new().add_modifier(cell.modifier);
            if cell.fg != Color::Reset {
                style = style.fg(cell.fg);
            }
            if look.color && style != current {
                line.push_str(&sgr(style));
                current = style;
            }
            line.push_str(&symbol);
            if !symbol.trim().is_empty() {
                trimmed = line.len();
            }
        }
        line.truncate(trimmed);
        if look.color && current != Style::new() {
            line.push_str("\x1b[0m");
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The escape sequence that starts `style` (after a reset).
fn sgr(style: Style) -> String {
    let mut codes = vec!["0".to_string()];
    if style.add_modifier.contains(Modifier::BOLD) {
        codes.push("1".into());
    }
    if style.add_modifier.contains(Modifier::DIM) {
        codes.push("2".into());
    }
    let color = match style.fg {
        Some(Color::Red) => Some(31),
        Some(Color::Green) => Some(32),
        Some(Color::Yellow) => Some(33),
        Some(Color::Blue) => Some(34),
        Some(Color::Magenta) => Some(35),
        Some(Color::Cyan) => Some(36),
        Some(Color::Gray) => Some(37),
        Some(Color::DarkGray) => Some(90),
        _ => None,
    };
    if let Some(c) = color {
        codes.push(c.to_string());
    }
    format!("\x1b[{}m", codes.join(";"))
}

/// A drawing character in ASCII; anything else (a label's own letters)
/// as it is.
fn ascii(symbol: &str) -> String {
    let mapped = match symbol {
        "│" | "┃" | "║" | "┊" => "|",
        "─" | "━" | "═" | "–" | "—" => "-",
        "└" | "┌" | "┐" | "┘" | "├" | "┤" | "┬" | "┴" | "┼" | "╭" | "╮" | "╰" | "╯" => {
            "+"
        }
        "•" => "*",
        "·" => "-",
        "…" => ".",
        "█" | "▉" | "▊" | "▋" | "▌" | "▍" | "▎" | "▏" | "▓" | "▒" | "░" => {
            "#"
        }
        other => return other.to_string(),
    };
    mapped.to_string()
}
