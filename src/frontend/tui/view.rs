//! Drawing: [`view`] is a pure function of the [`App`] — the layout (SPEC
//! §9: conversation, result, log, input, status line), the panes, and the
//! help or a question on top. Wide terminals get the conversation on the
//! left and result over log on the right; narrow ones stack the three.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Widget, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use super::app::{App, Focus, Overlay, Typed};
use super::chart::ChartView;
use super::highlight::code_lines;
use super::scroll::{draw_rows, row_count, visible_rows, wrap};
use super::text::{count, duration};
use crate::agent::{ConfirmKind, Confirmation, Mode};

/// From this many columns on, panes sit side by side.
const WIDE: u16 = 110;
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Where each part of the screen is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub conversation: Rect,
    pub result: Rect,
    pub log: Rect,
    pub input: Rect,
    pub status: Rect,
}

/// The layout of a screen `area` whose input box shows `input_rows` rows.
pub fn layout(area: Rect, input_rows: u16) -> Areas {
    let [body, input, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(input_rows + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    let (conversation, result, log) = if area.width >= WIDE {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(body);
        let [result, log] =
            Layout::vertical([Constraint::Percentage(70), Constraint::Percentage(30)]).areas(right);
        (left, result, log)
    } else {
        let [c, r, l] = Layout::vertical([
            Constraint::Percentage(40),
            Constraint::Percentage(40),
            Constraint::Min(3),
        ])
        .areas(body);
        (c, r, l)
    };
    Areas {
        conversation,
        result,
        log,
        input,
        status,
    }
}

/// A bordered pane's inside.
pub fn inner(area: Rect) -> Rect {
    Block::bordered().inner(area)
}

fn pane(title: impl Into<Line<'static>>, focused: bool) -> Block<'static> {
    let border = if focused {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new().fg(Color::DarkGray)
    };
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(title)
}

/// Draws the whole screen.
pub fn view(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let a = layout(area, app.input_rows());
    let buf = frame.buffer_mut();
    conversation(app, a.conversation, buf);
    result(app, a.result, buf);
    log(app, a.log, buf);
    input(app, a.input, buf);
    status(app, a.status, buf);
    match &app.overlay {
        Some(Overlay::Help) => help(area, buf),
        Some(Overlay::Confirm(c)) => confirm(c, area, buf),
        Some(Overlay::Secret(s, typed)) => secret(&s.prompt, typed, area, buf),
        None => {}
    }
}

fn scrolled(title: &str, back: usize) -> String {
    if back > 0 {
        format!(" {title} · ↑ {back} ")
    } else {
        format!(" {title} ")
    }
}

/// Draws a pane's frame; returns its inside.
fn framed(block: Block<'static>, area: Rect, buf: &mut Buffer) -> Rect {
    let inside = block.inner(area);
    block.render(area, buf);
    inside
}

fn conversation(app: &App, area: Rect, buf: &mut Buffer) {
    let title = scrolled("Conversation", app.transcript.scroll.back);
    let inside = framed(pane(title, app.focus == Focus::Conversation), area, buf);
    if app.transcript.entries().is_empty() {
        let s = &app.status;
        let text = format!(
            "Ask a question about {} in plain language, e.g. \"how many rows per month?\". \
             /sql runs SQL yourself, /help lists commands, F1 shows the keys.",
            s.source
        );
        Paragraph::new(text)
            .style(Style::new().fg(Color::DarkGray))
            .wrap(Wrap { trim: true })
            .render(inside, buf);
        return;
    }
    let (rows, _) = visible_rows(
        app.transcript.lines_newest_first(app.status.mode),
        inside.width,
        inside.height,
        app.transcript.scroll.back,
    );
    draw_rows(&rows, inside, buf);
}

fn result(app: &App, area: Rect, buf: &mut Buffer) {
    if let Some(chart) = app.chart.shown() {
        let width = area.width as usize;
        let block = pane(ChartView::title(chart, width), app.focus == Focus::Result)
            .title_bottom(Line::from(ChartView::footer(chart, width)).right_aligned());
        ChartView::draw(chart, framed(block, area, buf), buf);
        return;
    }
    let g = &app.grid;
    let inside = inner(area);
    let mut block = pane(g.title(area.width as usize), app.focus == Focus::Result);
    let footer = g.footer(
        inside.height.saturating_sub(2) as usize,
        inside.width as usize,
    );
    if !footer.is_empty() {
        block = block.title_bottom(Line::from(footer).right_aligned());
    }
    g.draw(framed(block, area, buf), buf);
}

fn log(app: &App, area: Rect, buf: &mut Buffer) {
    let title = scrolled("Log", app.log.scroll.back);
    let inside = framed(pane(title, app.focus == Focus::Log), area, buf);
    let (rows, _) = visible_rows(
        app.log.lines_newest_first(),
        inside.width,
        inside.height,
        app.log.scroll.back,
    );
    draw_rows(&rows, inside, buf);
}

fn input(app: &App, area: Rect, buf: &mut Buffer) {
    let hint = Line::from(" Enter sends · Alt-Enter new line · F1 keys ").right_aligned();
    let block = pane(" Ask ", app.focus == Focus::Input).title_bottom(hint);
    let inside = framed(block, area, buf);
    (&app.input).render(inside, buf);
}

/// The status line: what runs, then source, model, mode, tokens, session.
fn status(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let s = &app.status;
    let bar = Style::new().bg(Color::DarkGray).fg(Color::White);
    buf.set_style(area, bar);
    let mut left: Vec<Span<'static>> = Vec::new();
    if let Some(t) = app.turn {
        let took = app.now.duration_since(t.started);
        let frame = SPINNER[(took.as_millis() / 80) as usize % SPINNER.len()];
        let what = if t.cancelling {
            "cancelling"
        } else {
            t.phase.label()
        };
        left.push(Span::styled(
            format!(" {frame} {what} {} ", duration(took)),
            bar.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    } else if let Some(Overlay::Confirm(_) | Overlay::Secret(..)) = &app.overlay {
        left.push(Span::styled(
            " waiting for your answer ",
            bar.fg(Color::Yellow),
        ));
    } else if let Some((hint, _)) = &app.hint {
        left.push(Span::styled(format!(" {hint} "), bar.fg(Color::Yellow)));
    } else {
        left.push(Span::styled(" ready ", bar.fg(Color::Green)));
    }
    let mode = if s.format.is_grid() {
        s.mode.to_string()
    } else {
        format!("{} · {}", s.mode, s.format)
    };
    let mut facts = vec![
        format!("{} · {}", s.source, s.engine),
        format!("{}/{}", s.provider, s.model),
        mode,
        format!("{} tokens", count(app.tokens)),
    ];
    if let Some(path) = &s.session {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        facts.push(name);
    }
    let right = " F1 help ";
    let room = (area.width as usize).saturating_sub(right.width());
    let mut used: usize = left.iter().map(|s| s.content.width()).sum();
    for fact in facts {
        let piece = format!("│ {fact} ");
        if used + piece.width() > room {
            break;
        }
        used += piece.width();
        left.push(Span::styled(piece, bar));
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    if area.width as usize > used + right.width() {
        let x = area.right() - right.width() as u16;
        buf.set_string(x, area.y, right, bar.add_modifier(Modifier::BOLD));
    }
}

/// A box of `width` × `height` in the middle of `area`, cleared.
fn dialog(area: Rect, width: u16, height: u16, buf: &mut Buffer) -> Rect {
    let w = width.min(area.width.saturating_sub(2)).max(1);
    let h = height.min(area.height.saturating_sub(2)).max(1);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(r, buf);
    r
}

/// The keys (F1, `?`).
const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the question or /command"),
    ("Alt-Enter", "new line (also Shift-Enter, Ctrl-J)"),
    ("Up / Down", "input history (at the first / last line)"),
    ("Tab", "focus: input → conversation → result → log"),
    (
        "arrows, PgUp/PgDn",
        "scroll the focused pane; Left/Right: columns",
    ),
    ("Home / End", "top / bottom of the focused pane"),
    ("mouse wheel", "scroll the pane under the pointer"),
    ("c", "on the result pane: chart ↔ table (also /chart)"),
    ("Ctrl-L", "clear the log"),
    ("Ctrl-C", "cancel the turn; when idle, twice to quit"),
    ("Ctrl-Q, Esc", "save the session and quit (also Ctrl-D)"),
    ("F1, ?", "this help (Esc closes it)"),
    ("F2", "edit the last SQL and run it again (/edit)"),
    ("F3", "keep the last answer as an example (/good)"),
    ("/help", "the slash commands"),
];

fn help(area: Rect, buf: &mut Buffer) {
    let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!(" {k:<18}"), key),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::styled(
        " Shift-drag selects text while the mouse is captured.",
        Style::new().fg(Color::DarkGray),
    ));
    let r = dialog(area, 68, lines.len() as u16 + 2, buf);
    Paragraph::new(lines)
        .block(pane(" Keys ", true))
        .render(r, buf);
}

/// A password question: the prompt, a dot for each character typed, and
/// the keys.
fn secret(prompt: &str, typed: &Typed, area: Rect, buf: &mut Buffer) {
    let dots = "•".repeat(typed.0.chars().count());
    let lines = [
        Line::from(vec![
            Span::styled(
                prompt.trim_end().to_string(),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(" {dots}")),
            Span::styled("▏", Style::new().fg(Color::Yellow)),
        ]),
        Line::default(),
        Line::from(vec![
            Span::styled(
                "Enter",
                Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            ),
            Span::raw(" log in    "),
            Span::styled(
                "Esc",
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ),
            Span::raw(" cancel    (nothing typed is shown)"),
        ]),
    ];
    question_box(" Password ", &lines, area, buf);
}

fn confirm(c: &Confirmation, area: Rect, buf: &mut Buffer) {
    let title = match c.kind {
        ConfirmKind::Write => " Change data? ",
        ConfirmKind::ClearHistory => " Clear history? ",
        ConfirmKind::ContinueSession => " Continue the session? ",
    };
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(detail) = &c.detail {
        match c.kind {
            ConfirmKind::Write => lines.extend(code_lines(Mode::Sql, detail)),
            ConfirmKind::ClearHistory | ConfirmKind::ContinueSession => {
                lines.extend(detail.lines().map(|l| Line::raw(l.to_string())))
            }
        }
        lines.push(Line::default());
    }
    lines.push(Line::styled(
        c.question.clone(),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled(
            "y",
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" yes    "),
        Span::styled(
            "n",
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" no (Enter, Esc)"),
    ]));
    question_box(title, &lines, area, buf);
}

/// A question's box over the panes: `lines` wrapped in a pane titled
/// `title`, at most 64 columns wide, centred.
fn question_box(title: &'static str, lines: &[Line<'static>], area: Rect, buf: &mut Buffer) {
    let width = 64.min(area.width.saturating_sub(2));
    let rows = row_count(lines.iter().cloned(), width.saturating_sub(4));
    let r = dialog(area, width, rows as u16 + 2, buf);
    let block = pane(title, true).padding(Padding::horizontal(1));
    let inside = block.inner(r);
    block.render(r, buf);
    let wrapped: Vec<Line<'static>> = lines
        .iter()
        .flat_map(|l| wrap(l, inside.width as usize))
        .collect();
    draw_rows(&wrapped, inside, buf);
}
