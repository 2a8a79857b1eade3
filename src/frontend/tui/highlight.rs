//! Syntax colours for the code the model writes, by answer kind: SQL
//! through sqlparser's own tokenizer (so what is coloured a keyword is what
//! the safety gate reads as one), Lua line by line (keywords, strings,
//! numbers, comments). Code that does not tokenize yet — a statement still
//! streaming in, an open quote — is shown plain.

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
        Mode::Lua => code.split('\n').map(lua_line).collect(),
    }
}

const LUA_KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// One line of Lua, coloured: `--` comments, quoted strings, numbers and
/// keywords (long strings and comments across lines stay plain).
fn lua_line(line: &str) -> Line<'static> {
    let chars: Vec<char> = line.chars().collect();
    let mut spans = Vec::new();
    let (mut i, mut plain) = (0, String::new());
    let push = |spans: &mut Vec<Span<'static>>, plain: &mut String, text: String, style| {
        if !plain.is_empty() {
            spans.push(Span::raw(std::mem::take(plain)));
        }
        spans.push(Span::styled(text, style));
    };
    while i < chars.len() {
        let c = chars[i];
        let word_end = |from: usize, ok: fn(char) -> bool| {
            (from..chars.len())
                .find(|&j| !ok(chars[j]))
                .unwrap_or(chars.len())
        };
        if c == '-' && chars.get(i + 1) == Some(&'-') {
            let rest: String = chars[i..].iter().collect();
            push(&mut spans, &mut plain, rest, comment());
            break;
        } else if c == '"' || c == '\'' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            push(
                &mut spans,
                &mut plain,
                chars[i..end].iter().collect(),
                string(),
            );
            i = end;
        } else if c.is_ascii_digit() {
            let end = word_end(i, |c| c.is_ascii_alphanumeric() || c == '.');
            push(
                &mut spans,
                &mut plain,
                chars[i..end].iter().collect(),
                number(),
            );
            i = end;
        } else if c.is_alphabetic() || c == '_' {
            let end = word_end(i, |c| c.is_alphanumeric() || c == '_');
            let word: String = chars[i..end].iter().collect();
            let after_dot = i > 0 && chars[i - 1] == '.';
            if !after_dot && LUA_KEYWORDS.contains(&word.as_str()) {
                push(&mut spans, &mut plain, word, keyword());
            } else {
                plain.push_str(&word);
            }
            i = end;
        } else {
            plain.push(c);
            i += 1;
        }
    }
    if !plain.is_empty() {
        spans.push(Span::raw(plain));
    }
    Line::from(spans)
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
    fn lua_keeps_its_text_and_colours_keywords_strings_numbers() {
        let code = "local rows = aiq.query('SELECT 1') -- one\nfor i = 1, #rows do print(\"x\", t.end_) end";
        let lines = code_lines(Mode::Lua, code);
        assert_eq!(text(&lines), code.split('\n').collect::<Vec<_>>());
        let style_of = |line: usize, word: &str| {
            lines[line]
                .spans
                .iter()
                .find(|s| s.content == word)
                .map(|s| s.style)
                .unwrap()
        };
        assert_eq!(style_of(0, "local"), keyword());
        assert_eq!(style_of(0, "'SELECT 1'"), string());
        assert_eq!(style_of(0, "-- one"), comment());
        assert_eq!(style_of(1, "for"), keyword());
        assert_eq!(style_of(1, "1"), number());
        assert_eq!(style_of(1, "\"x\""), string());
        assert_eq!(style_of(1, "end"), keyword());
    }

    #[test]
    fn fences_name_modes() {
        assert_eq!(fence_mode("lua"), Some(Mode::Lua));
        assert_eq!(fence_mode("sql"), Some(Mode::Sql));
        assert_eq!(fence_mode(" SQL "), Some(Mode::Sql));
        assert_eq!(fence_mode("python"), None);
    }
}
