//! The direction of dependency, read from the code: which top-level
//! modules each module's `crate::…` paths name (comments, strings and test
//! code left out), held against the layer list in ARCHITECTURE.md. A path
//! to a module on a higher layer, a cycle between top-level modules, or a
//! top-level module the list does not place fails with the file and the
//! path that did it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, highest first: each line of the `layers` block of
/// ARCHITECTURE.md, its modules separated by spaces.
fn layers() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let block = text
        .split("```layers\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("ARCHITECTURE.md has a ```layers block");
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .filter(|l| !l.is_empty())
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The top-level module a file under `src/` belongs to.
fn module_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.strip_suffix(".rs").unwrap_or(&name).to_string()
}

/// The Rust files under `dir`, test-only ones left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.ends_with("_tests.rs") && name != "testkit.rs" {
                out.push(path);
            }
        }
    }
}

/// `text` without comments, and with every string and character literal
/// emptied: what is left is code.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut hashes = 0;
                let mut j = i + 1;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + close.len();
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                i += 1;
            }
            // A character literal ('x', '\n', '\''), not a lifetime.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                out.push_str("' '");
                i += 1;
            }
            b'\'' if i + 2 < b.len() && b[i + 2] == b'\'' => {
                out.push_str("' '");
                i += 3;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]`.
fn without_tests(code: &str) -> String {
    let mut code = code.to_string();
    while let Some(at) = code.find("#[cfg(test)]") {
        let after = at + "#[cfg(test)]".len();
        let rest = &code[after..];
        let end = match rest.find(['{', ';']) {
            Some(i) if rest.as_bytes()[i] == b';' => after + i + 1,
            Some(i) => {
                let mut depth = 0;
                let mut end = code.len();
                for (j, c) in rest[i..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = after + i + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            None => code.len(),
        };
        code.replace_range(at..end, "");
    }
    code
}

/// The top-level modules `code` names through `crate::`, each with the
/// first path that names it.
fn named(code: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::B, c, d::{e, f}}`: the names at depth one.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            found
                                .entry(name.clone())
                                .or_insert(format!("crate::{{{name}…}}"));
                        }
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                let shown: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(60)
                    .collect();
                found.entry(name).or_insert(format!("crate::{shown}"));
            }
        }
    }
    found
}

#[test]
fn no_module_names_one_above_it_and_none_go_round() {
    let layers = layers();
    let count = layers.len();
    let level: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, line)| line.iter().map(move |m| (m.as_str(), count - i)))
        .collect();
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut faults = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut modules = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let from = module_of(relative);
        if from == "main" || from == "lib" {
            continue;
        }
        modules.insert(from.clone());
        let code = without_tests(&code_of(&std::fs::read_to_string(file).unwrap()));
        for (to, path) in named(&code) {
            if to == from || to == "self" {
                continue;
            }
            let (Some(&a), Some(&b)) = (level.get(from.as_str()), level.get(to.as_str())) else {
                continue;
            };
            if b > a {
                faults.push(format!(
                    "src/{}: `{path}` names `{to}`, a layer above `{from}`",
                    relative.display()
                ));
            }
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    for m in &modules {
        if !level.contains_key(m.as_str()) {
            faults.push(format!(
                "src/{m}: a top-level module the layers in ARCHITECTURE.md do not place"
            ));
        }
    }
    // Modules on one layer may use each other, but never in a circle.
    for start in &modules {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, trail)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if next == start {
                    faults.push(format!("a cycle: {} → {start}", trail.join(" → ")));
                    stack.clear();
                    break;
                }
                if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    faults.sort();
    faults.dedup();
    assert!(
        faults.is_empty(),
        "the direction of dependency (ARCHITECTURE.md, Layers):\n{}",
        faults.join("\n")
    );
}

/// The reader itself: comments, strings and test code are not paths; a
/// group names each of its modules.
#[test]
fn paths_are_read_from_code_only() {
    let text = r##"
        // crate::commented
        /* crate::blocked /* nested crate::deeper */ */
        let s = "crate::quoted"; let r = r#"crate::raw"#; let c = '"';
        use crate::{alpha::One, beta, gamma::{Two, Three}};
        fn f() { crate::delta::call(); }
        #[cfg(test)]
        mod tests { use crate::tested; }
        #[cfg(test)]
        use crate::only_tests;
    "##;
    let code = without_tests(&code_of(text));
    let names: Vec<String> = named(&code).into_keys().collect();
    assert_eq!(names, ["alpha", "beta", "delta", "gamma"]);
}
