//! Forms PostgreSQL and ClickHouse read that sqlparser does not, rewritten
//! into ones it reads, for the check only (the statement runs as written).

use sqlparser::tokenizer::Token;

use super::forms::{is_word, next_significant, text_of};
use super::Dialect;

/// The index of the last token before `before` that is not whitespace.
fn previous_significant(tokens: &[Token], before: usize) -> Option<usize> {
    (0..before)
        .rev()
        .find(|&k| !matches!(tokens[k], Token::Whitespace(_)))
}

const SPACE: Token = Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);

/// `tokens` rewritten for the check, or `None` when there is nothing to
/// rewrite. Every rewrite keeps each name and call of the original where sqlparser
/// sees it; it only drops words that read nothing or moves an expression
/// into a subquery:
///
/// - ClickHouse `GLOBAL IN`/`GLOBAL JOIN`: `GLOBAL` dropped (where the
///   subquery runs, not what it reads);
/// - ClickHouse tuple element access `(1, 2).1`, `t.2`: the `.1` dropped;
/// - ClickHouse `JOIN … USING id`: checked as `USING (id)`;
/// - ClickHouse `WITH expr AS name, … SELECT`: checked as `WITH name AS
///   (SELECT expr), … SELECT`;
/// - PostgreSQL `BETWEEN SYMMETRIC`: `SYMMETRIC` dropped;
/// - PostgreSQL `ROWS FROM (f(…), g(…))`: checked as `(SELECT f(…), g(…))`;
/// - PostgreSQL `xmlelement(NAME tag, …)`, `xmlpi(NAME tag, …)`: the tag
///   (a name of the XML, not of the database) dropped.
pub(super) fn rewrite(tokens: &[Token], dialect: Dialect) -> Option<String> {
    let mut out = tokens.to_vec();
    let changed = match dialect {
        Dialect::ClickHouse => {
            let a = drop_global(&mut out);
            let b = drop_tuple_access(&mut out);
            let c = using_in_parentheses(&mut out);
            let d = with_expressions(&mut out);
            a | b | c | d
        }
        Dialect::Postgres => {
            let a = drop_symmetric(&mut out);
            let b = rows_from(&mut out);
            let c = drop_xml_names(&mut out);
            a | b | c
        }
        _ => false,
    };
    changed.then(|| text_of(&out))
}

/// The words that may follow ClickHouse's `GLOBAL`.
const AFTER_GLOBAL: &[&str] = &[
    "in", "not", "join", "any", "all", "left", "right", "inner", "full", "cross", "asof", "semi",
    "anti", "outer",
];

fn drop_global(tokens: &mut [Token]) -> bool {
    let mut changed = false;
    for i in 0..tokens.len() {
        let follows = next_significant(tokens, i + 1)
            .is_some_and(|k| AFTER_GLOBAL.iter().any(|w| is_word(&tokens[k], w)));
        if is_word(&tokens[i], "global") && follows {
            tokens[i] = SPACE;
            changed = true;
        }
    }
    changed
}

fn drop_tuple_access(tokens: &mut [Token]) -> bool {
    let mut changed = false;
    for i in 1..tokens.len() {
        let element = matches!(&tokens[i], Token::Number(n, _)
            if n.len() > 1 && n.starts_with('.') && n[1..].bytes().all(|b| b.is_ascii_digit()));
        let after_value = matches!(
            tokens[i - 1],
            Token::RParen | Token::RBracket | Token::Word(_)
        );
        if element && after_value {
            tokens[i] = SPACE;
            changed = true;
        }
    }
    changed
}

fn using_in_parentheses(tokens: &mut Vec<Token>) -> bool {
    let mut i = 0;
    let mut changed = false;
    while i < tokens.len() {
        if is_word(&tokens[i], "using") {
            let name = next_significant(tokens, i + 1)
                .filter(|&k| matches!(tokens[k], Token::Word(_)) && !is_word(&tokens[k], "sample"));
            let alone = name.is_some_and(|k| {
                !matches!(
                    next_significant(tokens, k + 1).map(|n| &tokens[n]),
                    Some(Token::Comma | Token::Period | Token::LParen)
                )
            });
            if let (Some(k), true) = (name, alone) {
                tokens.insert(k + 1, Token::RParen);
                tokens.insert(k, Token::LParen);
                changed = true;
                i = k + 3;
                continue;
            }
        }
        i += 1;
    }
    changed
}

/// ClickHouse's `WITH expr AS name, … SELECT` (the first such `WITH`).
fn with_expressions(tokens: &mut Vec<Token>) -> bool {
    for w in 0..tokens.len() {
        if !is_word(&tokens[w], "with") {
            continue;
        }
        // The items up to the `SELECT` at this level, split at commas.
        let mut items = Vec::new();
        let mut start = w + 1;
        let mut depth = 0usize;
        let mut end = None;
        for (k, t) in tokens.iter().enumerate().skip(w + 1) {
            match t {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket if depth == 0 => break,
                Token::RParen | Token::RBracket => depth -= 1,
                Token::SemiColon => break,
                Token::Comma if depth == 0 => {
                    items.push(start..k);
                    start = k + 1;
                }
                _ if depth == 0 && is_word(t, "select") => {
                    items.push(start..k);
                    end = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        let mut rewritten: Vec<Token> = Vec::new();
        let mut any = false;
        for (n, item) in items.iter().enumerate() {
            let Some((expr, name)) = expression_item(&tokens[item.clone()]) else {
                // A CTE (`name AS (query)`) stays as it is; anything else
                // is left to the parser to refuse.
                if !is_cte(&tokens[item.clone()]) {
                    return false;
                }
                rewritten.extend_from_slice(&tokens[item.clone()]);
                if n + 1 < items.len() {
                    rewritten.push(Token::Comma);
                }
                continue;
            };
            any = true;
            rewritten.push(SPACE);
            rewritten.push(name);
            rewritten.extend([
                SPACE,
                Token::make_keyword("AS"),
                SPACE,
                Token::LParen,
                Token::make_keyword("SELECT"),
                SPACE,
            ]);
            rewritten.extend_from_slice(expr);
            rewritten.push(Token::RParen);
            rewritten.push(if n + 1 < items.len() {
                Token::Comma
            } else {
                SPACE
            });
        }
        if !any {
            continue;
        }
        tokens.splice(w + 1..end, rewritten);
        return true;
    }
    false
}

/// `expr AS name`, split at its last `AS` outside brackets, when `name` is
/// one word: (`expr`, `name`).
fn expression_item(item: &[Token]) -> Option<(&[Token], Token)> {
    let mut depth = 0usize;
    let mut last_as = None;
    for (k, t) in item.iter().enumerate() {
        match t {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            _ if depth == 0 && is_word(t, "as") => last_as = Some(k),
            _ => {}
        }
    }
    let a = last_as?;
    let after: Vec<&Token> = item[a + 1..]
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let before = item[..a].iter().any(|t| !matches!(t, Token::Whitespace(_)));
    match after.as_slice() {
        [name @ Token::Word(_)] if before => Some((&item[..a], (*name).clone())),
        _ => None,
    }
}

/// `name AS (query)` or `name (columns) AS (query)`: a CTE sqlparser reads.
fn is_cte(item: &[Token]) -> bool {
    let sig: Vec<&Token> = item
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    matches!(sig.first(), Some(Token::Word(_)))
        && sig.iter().any(|t| is_word(t, "as"))
        && matches!(sig.last(), Some(Token::RParen))
}

fn drop_symmetric(tokens: &mut [Token]) -> bool {
    let mut changed = false;
    for i in 0..tokens.len() {
        let after_between =
            previous_significant(tokens, i).is_some_and(|k| is_word(&tokens[k], "between"));
        if after_between && (is_word(&tokens[i], "symmetric") || is_word(&tokens[i], "asymmetric"))
        {
            tokens[i] = SPACE;
            changed = true;
        }
    }
    changed
}

fn rows_from(tokens: &mut Vec<Token>) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < tokens.len() {
        let from = next_significant(tokens, i + 1).filter(|&k| is_word(&tokens[k], "from"));
        let paren = from
            .and_then(|k| next_significant(tokens, k + 1))
            .filter(|&k| tokens[k] == Token::LParen);
        if let (true, Some(f), Some(p)) = (is_word(&tokens[i], "rows"), from, paren) {
            tokens[i] = SPACE;
            tokens[f] = SPACE;
            tokens.insert(p + 1, Token::make_keyword("SELECT"));
            tokens.insert(p + 2, SPACE);
            changed = true;
        }
        i += 1;
    }
    changed
}

fn drop_xml_names(tokens: &mut [Token]) -> bool {
    let mut changed = false;
    for i in 0..tokens.len() {
        if !(is_word(&tokens[i], "xmlelement") || is_word(&tokens[i], "xmlpi")) {
            continue;
        }
        let Some(p) = next_significant(tokens, i + 1).filter(|&k| tokens[k] == Token::LParen)
        else {
            continue;
        };
        let Some(n) = next_significant(tokens, p + 1).filter(|&k| is_word(&tokens[k], "name"))
        else {
            continue;
        };
        let Some(tag) =
            next_significant(tokens, n + 1).filter(|&k| matches!(tokens[k], Token::Word(_)))
        else {
            continue;
        };
        tokens[n] = SPACE;
        tokens[tag] = SPACE;
        if let Some(c) = next_significant(tokens, tag + 1).filter(|&k| tokens[k] == Token::Comma) {
            tokens[c] = SPACE;
        }
        changed = true;
    }
    changed
}
