//! The docs stay true: README.md, every page of docs/ and ARCHITECTURE.md.
//! Every `aiq` command line in their shell blocks parses as aiq's command
//! line does, and the ones that need no model, terminal or server run on
//! the demo shop; relative links and their anchors resolve; the
//! configuration reference lists exactly the keys the configuration file
//! accepts; every exit code they list is one a test sees; every slash
//! command of `/help` is in the chat's page.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser as _;
use common::{stderr_of, Sandbox};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// README.md, ARCHITECTURE.md and docs/*.md.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("a docs/ folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 10, "the manual has its pages: {docs:?}");
    pages.extend(docs);
    pages
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

fn name(page: &Path) -> String {
    page.strip_prefix(ROOT)
        .unwrap_or(page)
        .display()
        .to_string()
}

/// A fenced block: its language and lines.
struct Block {
    lang: String,
    lines: Vec<String>,
}

/// The fenced code blocks of a page, and its text outside them.
fn split(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        // A fence is three or more backticks and an info string without
        // one (```` ```sql ```` in a sentence is inline code); the closing
        // fence is backticks alone.
        let trimmed = line.trim();
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        let info = &trimmed[ticks..];
        let opens = ticks >= 3 && !info.contains('`');
        let closes = ticks >= 3 && info.trim().is_empty();
        match (&mut open, opens, closes) {
            (None, true, _) => {
                open = Some(Block {
                    lang: info.trim().to_string(),
                    lines: Vec::new(),
                })
            }
            (Some(_), _, true) => blocks.push(open.take().unwrap()),
            (Some(block), _, _) => block.lines.push(line.to_string()),
            (None, false, _) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (blocks, prose)
}

/// The command lines of a page's shell blocks, without their comments.
fn shell_lines(text: &str) -> Vec<String> {
    let (blocks, _) = split(text);
    let mut out = Vec::new();
    for block in blocks {
        if !matches!(block.lang.as_str(), "sh" | "bash" | "shell") {
            continue;
        }
        for line in block.lines {
            let command = strip_comment(&line);
            if !command.is_empty() {
                out.push(command);
            }
        }
    }
    out
}

/// `line` without a `#` comment (one outside quotes, at the start or after
/// a space).
fn strip_comment(line: &str) -> String {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return line[..i].trim().to_string(),
            None => {}
        }
        prev = c;
    }
    line.trim().to_string()
}

/// The `aiq` invocations in one command line: each as its words, up to
/// the first redirection (pipes, `&&`, `;` and `$(…)` separate them).
fn invocations(line: &str) -> Vec<Vec<String>> {
    let Some(words) = shlex::split(line) else {
        panic!("cannot read the shell line: {line}");
    };
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    let mut redirected = false;
    for word in words {
        let word = word.trim_start_matches("$(").to_string();
        let separator = matches!(word.as_str(), "|" | "&&" | "||" | ";" | ")");
        if separator || word.ends_with(';') || word.ends_with(')') {
            if let Some(cmd) = current.take() {
                out.push(cmd);
            }
            redirected = false;
            if separator {
                continue;
            }
        }
        let is_redirect = word.starts_with('>')
            || word.starts_with('<')
            || word.starts_with("2>")
            || word.starts_with("&>");
        match &mut current {
            None if word == "aiq" => current = Some(vec![word]),
            None => {}
            Some(cmd) => {
                if is_redirect {
                    redirected = true;
                }
                if !redirected {
                    cmd.push(word.trim_end_matches([';', ')']).to_string());
                }
            }
        }
    }
    out.extend(current);
    out
}

#[test]
fn every_aiq_command_line_parses() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in pages() {
        for line in shell_lines(&read(&page)) {
            for words in invocations(&line) {
                checked += 1;
                if let Err(e) = aiq::cli::Cli::try_parse_from(&words) {
                    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
                    if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                        broken.push(format!("{}: {line}\n  {}", name(&page), e.kind()));
                    }
                }
            }
        }
    }
    assert!(checked >= 100, "only {checked} command lines found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The sources a line may name here: the demo shop, saved again as
/// `shop`, and its SQLite file as `shop.db` and `demo/shop.db`.
const HERE: &[&str] = &["demo", "shop", "shop.db", "demo/shop.db"];

/// A line that runs here: on the demo shop's files and names, with no
/// model, terminal, server, file or secret of the reader's own.
fn runs_here(line: &str) -> bool {
    let words = invocations(line);
    if words.is_empty() || !line.starts_with("aiq ") {
        return false;
    }
    let needs_more = [
        " -q ",
        "--tui",
        "--eval",
        "://",
        "~/",
        "/data/",
        "session_2026",
        "--allow-write",
        "--reset",
        "--lua -",
        " jq ",
        "echo ",
    ];
    if needs_more.iter().any(|n| line.contains(n)) {
        return false;
    }
    words.iter().all(|w| {
        let args: Vec<&str> = w.iter().skip(1).map(String::as_str).collect();
        let here = |s: &str| HERE.contains(&s);
        match args.as_slice() {
            // `aiq demo` alone prints the guide without a model.
            ["demo"] => true,
            [source, rest @ ..] if here(source) => rest.contains(&"-e") || rest.contains(&"--lua"),
            ["-e", ..] => true,
            ["schema", source, ..] => here(source),
            ["sources", "list"] | ["sources", "default", "shop"] => true,
            ["examples", "list" | "check", source] => here(source),
            ["notes", "show", source] => here(source),
            ["sessions"] | ["sessions", "search", ..] | ["logs", ..] => true,
            ["config", "path" | "show"] => true,
            _ => false,
        }
    })
}

#[test]
fn command_lines_on_the_demo_run() {
    let sb = Sandbox::new();
    let run = |line: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("aiq() {{ \"$AIQ_BIN\" \"$@\"; }}; {line}"))
            .env("AIQ_BIN", assert_cmd::cargo::cargo_bin("aiq"))
            .env("AIQ_HOME", sb.home())
            .env("HOME", sb.path().join("home"))
            .env("OLLAMA_HOST", "127.0.0.1:9")
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("AIQ_API_KEY")
            .env_remove("AIQ_PROVIDER")
            .env_remove("AIQ_BASE_URL")
            .current_dir(sb.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let demo = run("aiq demo");
    assert_eq!(demo.status.code(), Some(0), "{}", stderr_of(&demo));
    // The names the pages use for a shop of the reader's own.
    let db = sb.home().join("demo/shop.db");
    std::fs::create_dir_all(sb.path().join("demo")).unwrap();
    std::fs::copy(&db, sb.path().join("shop.db")).unwrap();
    std::fs::copy(&db, sb.path().join("demo/shop.db")).unwrap();
    let lua = sb.path().join("examples/lua");
    std::fs::create_dir_all(&lua).unwrap();
    for script in std::fs::read_dir(Path::new(ROOT).join("examples/lua"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(script.path(), lua.join(script.file_name())).unwrap();
    }
    let saved = run("aiq sources add shop ./shop.db");
    assert_eq!(saved.status.code(), Some(0), "{}", stderr_of(&saved));
    let mut ran = BTreeSet::new();
    for page in pages() {
        for line in shell_lines(&read(&page)) {
            if !runs_here(&line) || !ran.insert(line.clone()) {
                continue;
            }
            let out = run(&line);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}: {line}\n{}",
                name(&page),
                stderr_of(&out)
            );
        }
    }
    assert!(ran.len() >= 20, "only {} lines ran: {ran:?}", ran.len());
}

/// A heading's anchor as GitHub makes it.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a page (a repeated heading gets `-1`, `-2`, …).
fn anchors(text: &str) -> BTreeSet<String> {
    let (_, prose) = split(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose.lines() {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = anchor(&heading.replace('`', ""));
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a page's Markdown links outside code.
fn links(text: &str) -> Vec<String> {
    let (_, prose) = split(text);
    // Inline code is not a link.
    let prose: String = prose
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn relative_links_and_anchors_resolve() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        for target in links(&text) {
            if target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", name(&page)));
                continue;
            }
            if let Some(fragment) = fragment {
                let is_md = file.extension().is_some_and(|x| x == "md");
                if is_md && !anchors(&read(&file)).contains(fragment) {
                    broken.push(format!("{}: {target} (no such heading)", name(&page)));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} relative links found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The keys of the configuration reference's TOML blocks, as
/// `section.key` (commented-out keys count: they are documented).
fn documented_keys(text: &str) -> BTreeSet<String> {
    let (blocks, _) = split(text);
    let mut keys = BTreeSet::new();
    for block in blocks.iter().filter(|b| b.lang == "toml") {
        let mut section = String::new();
        for line in &block.lines {
            let line = line.trim();
            if let Some(header) = line.strip_prefix('[') {
                let header = header.split(']').next().unwrap_or("");
                section = match header.split_once('.') {
                    Some(("sources", _)) => "sources.NAME".to_string(),
                    _ => header.to_string(),
                };
                continue;
            }
            let line = line.trim_start_matches('#').trim();
            let Some((key, _)) = line.split_once('=') else {
                continue;
            };
            let key = key.trim();
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                continue;
            }
            let section = if section == "sources" && key != "default" {
                "sources.NAME"
            } else {
                section.as_str()
            };
            keys.insert(format!("{section}.{key}"));
        }
    }
    keys
}

#[test]
fn the_configuration_reference_lists_exactly_the_accepted_keys() {
    let page = Path::new(ROOT).join("docs/configuration.md");
    let documented = documented_keys(&read(&page));
    let accepted: BTreeSet<String> = aiq::config::keys().into_iter().collect();
    let missing: Vec<&String> = accepted.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty(),
        "keys the configuration accepts that docs/configuration.md does not list: {missing:?}"
    );
    assert!(
        unknown.is_empty(),
        "keys docs/configuration.md lists that the configuration refuses: {unknown:?}"
    );
}

#[test]
fn the_configuration_reference_loads() {
    // The reference's own file, as written, is a configuration aiq takes.
    let page = read(&Path::new(ROOT).join("docs/configuration.md"));
    let (blocks, _) = split(&page);
    let toml = blocks
        .iter()
        .find(|b| b.lang == "toml" && b.lines.iter().any(|l| l.starts_with("[llm]")))
        .expect("the reference's config.toml");
    let sb = Sandbox::new();
    sb.write_config(&toml.lines.join("\n"));
    let out = sb.aiq().args(["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
}

/// The exit codes a page's table lists (`| 3 | …`).
fn listed_codes(text: &str) -> BTreeSet<i32> {
    text.lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(' ').next()?.parse::<i32>().ok())
        .collect()
}

#[test]
fn every_exit_code_listed_is_seen_by_a_test() {
    let page = read(&Path::new(ROOT).join("docs/scripting.md"));
    let codes = listed_codes(&page);
    assert!(codes.len() >= 6, "{codes:?}");
    let mut tests = String::new();
    for entry in std::fs::read_dir(Path::new(ROOT).join("tests"))
        .unwrap()
        .flatten()
    {
        if entry.path().extension().is_some_and(|x| x == "rs") && entry.file_name() != "docs.rs" {
            tests.push_str(&read(&entry.path()));
        }
    }
    for code in codes {
        let seen = [
            format!("code(), Some({code}))"),
            format!(".code({code})"),
            format!("Some({code}),"),
        ];
        assert!(
            seen.iter().any(|s| tests.contains(s.as_str())),
            "exit code {code} is listed but no test asserts it"
        );
    }
}

#[test]
fn every_slash_command_is_in_the_chat_page() {
    let page = read(&Path::new(ROOT).join("docs/chat.md"));
    for (command, _) in aiq::agent::commands::COMMANDS {
        assert!(
            page.contains(&format!("`{command}")),
            "{command} is in /help but not in docs/chat.md"
        );
    }
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = read(&Path::new(ROOT).join("README.md"));
    let lines = readme.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines (at most 400)");
    for page in pages()
        .iter()
        .filter(|p| p.starts_with(Path::new(ROOT).join("docs")))
    {
        let file = page.file_name().unwrap().to_string_lossy().into_owned();
        if file == "README.md" {
            continue;
        }
        let index = read(&Path::new(ROOT).join("docs/README.md"));
        assert!(
            index.contains(&format!("({file})")),
            "docs/README.md does not link {file}"
        );
    }
}

#[test]
fn the_man_page_and_completions_come_from_the_command_line() {
    use clap::CommandFactory as _;
    let command = aiq::cli::Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .unwrap();
    let page = String::from_utf8(page).unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("aiq"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let completions = String::from_utf8_lossy(&out.stdout).into_owned();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        assert!(page.contains(name), "the man page lacks {name}");
        assert!(completions.contains(name), "the completions lack {name}");
    }
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        if let Some(long) = arg.get_long() {
            // roff writes a hyphen as `\-`.
            let written = format!("\\-\\-{}", long.replace('-', "\\-"));
            assert!(page.contains(&written), "the man page lacks --{long}");
        }
    }
}
