//! The chat's slash commands (SPEC §6): names, help text, parsing, and the
//! nearest command for a typo. Pure.

use crate::chart::ChartSpec;

/// Every command and what it does, in `/help` order.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "list commands"),
    ("/history", "every message: role, timestamp, content"),
    ("/clear", "start a fresh context for the model (asks first)"),
    ("/sessions", "saved sessions, newest first"),
    ("/new", "save this session and start an empty one"),
    ("/save", "save now: /save [FILE]"),
    (
        "/schema",
        "what the model is told about the source: /schema [TABLE]",
    ),
    ("/sql", "run SQL directly: /sql SELECT …"),
    (
        "/format",
        "output format: /format auto|table|expanded|csv|tsv|json|jsonl|markdown",
    ),
    (
        "/maxrows",
        "rows a result shows in the chat: /maxrows N (or all)",
    ),
    ("/mode", "what the model writes: /mode sql|lua"),
    (
        "/source",
        "switch data source (history kept): /source NAME_OR_PATH",
    ),
    (
        "/note",
        "add a line to this source's notes for the model: /note TEXT",
    ),
    (
        "/chart",
        "chart the last result: /chart [KIND] [x=COL] [y=COL,…] [> FILE.svg|png]",
    ),
    (
        "/good",
        "keep the last question and its SQL as a verified example for this source",
    ),
    (
        "/edit",
        "put the last SQL in the input line to change and run it",
    ),
    ("/exit", "save the session and leave (also /quit, Ctrl-D)"),
    ("/quit", "save the session and leave"),
];

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Help,
    History,
    Clear,
    Sessions,
    New,
    Save(Option<String>),
    Schema(Option<String>),
    Sql(String),
    Format(String),
    /// `/maxrows` alone shows the limit.
    MaxRows(Option<String>),
    /// `/mode` alone shows the mode.
    Mode(Option<String>),
    Source(String),
    /// A line for the source's notes.
    Note(String),
    Chart(ChartSpec),
    /// Keep the last question and its SQL as a verified example.
    Good,
    /// Put the last SQL in the input line.
    Edit,
    Exit,
    /// Not a command; the text says why and what was meant.
    Unknown(String),
}

/// Parses a line that starts with `/`.
pub fn parse(line: &str) -> SlashCommand {
    let (name, rest) = match line.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (line, ""),
    };
    let arg = || (!rest.is_empty()).then(|| rest.to_string());
    let needs = |what: &str, make: fn(String) -> SlashCommand| match arg() {
        Some(a) => make(a),
        None => SlashCommand::Unknown(format!("{name} needs {what}")),
    };
    match name.to_ascii_lowercase().as_str() {
        "/help" | "/?" => SlashCommand::Help,
        "/history" => SlashCommand::History,
        "/clear" => SlashCommand::Clear,
        "/sessions" => SlashCommand::Sessions,
        "/new" => SlashCommand::New,
        "/save" => SlashCommand::Save(arg()),
        "/schema" => SlashCommand::Schema(arg()),
        "/sql" => needs("a statement: /sql SELECT …", SlashCommand::Sql),
        "/format" => needs(
            "a format: auto, table, expanded, csv, tsv, json, jsonl or markdown",
            SlashCommand::Format,
        ),
        "/maxrows" => SlashCommand::MaxRows(arg()),
        "/mode" => SlashCommand::Mode(arg()),
        "/source" => needs("a saved source name or a path", SlashCommand::Source),
        "/note" => needs(
            "the text to note: /note revenue excludes cancelled orders",
            SlashCommand::Note,
        ),
        "/chart" => match ChartSpec::parse(rest) {
            Ok(spec) => SlashCommand::Chart(spec),
            Err(why) => SlashCommand::Unknown(why),
        },
        "/good" => SlashCommand::Good,
        "/edit" => SlashCommand::Edit,
        "/exit" | "/quit" => SlashCommand::Exit,
        _ => SlashCommand::Unknown(match nearest(name) {
            Some(near) => {
                format!("unknown command {name}; did you mean {near}? (/help lists them)")
            }
            None => format!("unknown command {name} (/help lists them)"),
        }),
    }
}

/// The command closest to a typo, if any is close.
pub fn nearest(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if let Some((c, _)) = COMMANDS.iter().find(|(c, _)| c.starts_with(&lower)) {
        return Some(c);
    }
    COMMANDS
        .iter()
        .map(|(c, _)| (strsim::levenshtein(&lower, c), *c))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The `/help` text.
pub fn help() -> String {
    let mut out = String::from("Ask a question in plain language, or use a command:\n");
    for (name, what) in COMMANDS {
        out.push_str(&format!("  {name:<10} {what}\n"));
    }
    out.push_str("End a line with \\ to continue it. Ctrl-C cancels, Ctrl-D leaves.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_arguments() {
        assert_eq!(parse("/help"), SlashCommand::Help);
        assert_eq!(parse("/save"), SlashCommand::Save(None));
        assert_eq!(
            parse("/save  my.json "),
            SlashCommand::Save(Some("my.json".into()))
        );
        assert_eq!(parse("/sql SELECT 1"), SlashCommand::Sql("SELECT 1".into()));
        assert_eq!(parse("/QUIT"), SlashCommand::Exit);
        assert_eq!(parse("/mode lua"), SlashCommand::Mode(Some("lua".into())));
        assert_eq!(parse("/mode"), SlashCommand::Mode(None));
        assert_eq!(
            parse("/chart line x=month"),
            SlashCommand::Chart(ChartSpec::parse("line x=month").unwrap())
        );
        assert_eq!(
            parse("/chart pie"),
            SlashCommand::Unknown(format!(
                "unknown /chart argument 'pie' ({})",
                crate::chart::USAGE
            ))
        );
        assert_eq!(
            parse("/note amounts are in cents"),
            SlashCommand::Note("amounts are in cents".into())
        );
        assert_eq!(
            parse("/format"),
            SlashCommand::Unknown(
                "/format needs a format: auto, table, expanded, csv, tsv, json, jsonl or markdown"
                    .into()
            )
        );
    }

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(
            parse("/histroy"),
            SlashCommand::Unknown(
                "unknown command /histroy; did you mean /history? (/help lists them)".into()
            )
        );
        assert_eq!(nearest("/sess"), Some("/sessions"));
        assert_eq!(
            parse("/zzzzzzzzzz"),
            SlashCommand::Unknown("unknown command /zzzzzzzzzz (/help lists them)".into())
        );
    }
}
