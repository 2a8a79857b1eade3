//! Syntax colours for the code the model writes, by answer kind: SQL
//! through sqlparser's own tokenizer (so what is coloured a keyword is what
//! the safety gate reads as one). Code that does not tokenize yet — a
//! statement still streaming in, an open quote — is shown plain.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::{Keyword, RESERVED_FOR_COLUMN_ALIAS, RESERVED_FOR_TABLE_ALIAS};
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use crate::agent::Mode;

/// Code lines coloured for `mode`.
pub fn code_lines(mode: Mode, code: &str) -> Vec<Line<'static>> {
    match mode {
        Mode::Sql => sql_lines(code),
    }
}

/// What a fence's info string (```` ```sql ````) names, if it is a mode.
pub fn fence_mode(info: &str) -> Option<Mode> {
    info.trim().parse().ok()
}

fn keyword() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

fn string() -> Style {
    Style::new().fg(Color::Green)
}

fn number() -> Style {
    Style::new().fg(Color::Magenta)
}

fn comment() -> Style {
    Style::new()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

/// Keywords coloured besides those that can never be an alias: the ones
/// every query is built from. Words sqlparser merely knows (`name`, `id`,
/// `count`) stay plain, as identifiers and functions.
const STRUCTURE: &[Keyword] = &[
    Keyword::AS,
    Keyword::BY,
    Keyword::ASC,
    Keyword::DESC,
    Keyword::AND,
    Keyword::OR,
    Keyword::NOT,
    Keyword::NULL,
    Keyword::IS,
    Keyword::IN,
    Keyword::CASE,
    Keyword::WHEN,
    Keyword::THEN,
    Keyword::ELSE,
    Keyword::DISTINCT,
    Keyword::BETWEEN,
    Keyword::LIKE,
    Keyword::ILIKE,
    Keyword::ALL,
    Keyword::ANY,
    Keyword::OVER,
    Keyword::CAST,
    Keyword::RECURSIVE,
    Keyword::TRUE,
    Keyword::FALSE,
    Keyword::INSERT,
    Keyword::UPDATE,
    Keyword::DELETE,
    Keyword::CREATE,
    Keyword::DROP,
    Keyword::ALTER,
    Keyword::TABLE,
];

fn is_keyword(k: Keyword) -> bool {
    k != Keyword::NoKeyword
        && (STRUCTURE.contains(&k)
            || RESERVED_FOR_TABLE_ALIAS.contains(&k)
            || RESERVED_FOR_COLUMN_ALIAS.contains(&k))
}

/// The style of one SQL token.
fn sql_style(token: &Token) -> Style {
    match token {
        Token::Word(w) if w.quote_style.is_none() && is_keyword(w.keyword) => keyword(),
        Token::Number(..) => number(),
        Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_) => string(),
        Token::Whitespace(Whitespace::SingleLineComment { .. })
        | Token::Whitespace(Whitespace::MultiLineComment(_)) => comment(),
        _ => Style::new(),
    }
}

/// SQL split into lines, each token in its colour.
fn sql_lines(code: &str) -> Vec<Line<'static>> {
    let plain = || code.split('\n').map(|l| Line::raw(l.to_string())).collect();
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, code).tokenize_with_location() else {
        return plain();
    };
    let chars: Vec<char> = code.chars().collect();
    // Char index where each line starts (locations are 1-based line/column in chars).
    let mut line_starts = vec![0usize];
    line_starts.extend(
        chars
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == '\n')
            .map(|(i, _)| i + 1),
    );
    let start_of = |line: u64, column: u64| -> Option<usize> {
        let base = *line_starts.get(usize::try_from(line).ok()?.checked_sub(1)?)?;
        Some(base + usize::try_from(column).ok()?.checked_sub(1)?)
    };
    let mut spans: Vec<(usize, Style)> = Vec::with_capacity(tokens.len());
    for t in &tokens {
        match start_of(t.span.start.line, t.span.start.column) {
            Some(at) if at <= chars.len() => spans.push((at, sql_style(&t.token))),
            _ => return plain(),
        }
    }
    let mut lines = vec![Line::default()];
    for (i, (start, style)) in spans.iter().enumerate() {
        let end = spans.get(i + 1).map_or(chars.len(), |(s, _)| *s);
        if end < *start {
            return plain();
        }
        let text: String = chars[*start..end].iter().collect();
        for (n, piece) in text.split('\n').enumerate() {
            if n > 0 {
                lines.push(Line::default());
            }
            if !piece.is_empty() {
                if let Some(line) = lines.last_mut() {
                    line.spans.push(Span::styled(piece.to_string(), *style));
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn sql_keeps_its_text_and_colours_keywords_strings_numbers() {
        let code = "SELECT name, count(*), 'a''b' AS s\nFROM t -- note\nWHERE n > 42";
        let lines = code_lines(Mode::Sql, code);
        assert_eq!(
            text(&lines),
            [
                "SELECT name, count(*), 'a''b' AS s",
                "FROM t -- note",
                "WHERE n > 42"
            ]
        );
        let style_of = |line: usize, word: &str| {
            lines[line]
                .spans
                .iter()
                .find(|s| s.content.contains(word))
                .map(|s| s.style)
                .unwrap()
        };
        assert_eq!(style_of(0, "SELECT"), keyword());
        assert_eq!(style_of(0, "'a''b'"), string());
        assert_eq!(style_of(0, "AS"), keyword());
        assert_eq!(
            style_of(0, "name"),
            Style::new(),
            "a known word used as a name"
        );
        assert_eq!(style_of(0, "count"), Style::new());
        assert_eq!(style_of(1, "-- note"), comment());
        assert_eq!(style_of(2, "42"), number());
    }

    #[test]
    fn unfinished_code_is_plain() {
        let lines = code_lines(Mode::Sql, "SELECT 'open\nFROM t");
        assert_eq!(text(&lines), ["SELECT 'open", "FROM t"]);
        assert!(lines[0].spans.iter().all(|s| s.style == Style::new()));
    }

    #[test]
    fn fences_name_modes() {
        assert_eq!(fence_mode("sql"), Some(Mode::Sql));
        assert_eq!(fence_mode(" SQL "), Some(Mode::Sql));
        assert_eq!(fence_mode("python"), None);
    }
}
