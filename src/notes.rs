//! Source notes (SPEC §4.3): what the schema cannot say — "revenue is
//! quantity × unit price without cancelled orders", "amounts are in
//! cents" — kept in `$AIQ_HOME/notes/NAME.md`, one Markdown file per saved
//! source (or per file path / URL for sources given directly).
//!
//! A file is read as notes: each paragraph, and each list item, is one
//! note; headings and `<!-- comments -->` are left out. A note that names
//! a table (by its name, or its name's words: `order items` for
//! `order_item`) travels with that table — it joins the table's
//! description, so schema ranking matches its words and the layout keeps
//! or drops it with the table. The others are general notes, sent ahead of
//! the schema.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::schema::words::{ident_parts, words};
use crate::schema::Catalog;

/// Bytes of general notes a request carries at most.
pub const GENERAL_BUDGET: usize = 6_000;

/// The file name (without `.md`) of a source's notes: the saved name as
/// it is; a path or URL with every character outside letters, digits,
/// `.`, `-` and `_` turned into `_`.
pub fn key(session_name: &str) -> String {
    let mut out: String = session_name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while out.starts_with(['_', '.']) {
        out.remove(0);
    }
    if out.is_empty() {
        out.push_str("source");
    }
    out
}

/// A source's notes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes {
    notes: Vec<String>,
}

impl Notes {
    /// Reads `text` (Markdown) as notes.
    pub fn parse(text: &str) -> Notes {
        let text = strip_comments(text);
        let mut notes = Vec::new();
        let mut current = String::new();
        let mut flush = |current: &mut String| {
            let note = current.trim().to_string();
            if !note.is_empty() {
                notes.push(note);
            }
            current.clear();
        };
        for line in text.lines() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                flush(&mut current);
                continue;
            }
            let item = ["- ", "* ", "+ "]
                .iter()
                .find_map(|b| t.strip_prefix(b))
                .or_else(|| numbered(t));
            match item {
                Some(rest) => {
                    flush(&mut current);
                    current.push_str(rest.trim());
                }
                None => {
                    if !current.is_empty() {
                        current.push(' ');
                    }
                    current.push_str(t);
                }
            }
        }
        flush(&mut current);
        Notes { notes }
    }

    /// The notes of `key` in `home` (none when there is no file). A file
    /// that is not all UTF-8 is read with its bad bytes replaced: see
    /// [`Notes::load_checked`] for the warning.
    pub fn load(home: &Path, key: &str) -> Notes {
        Notes::load_checked(home, key).0
    }

    /// [`Notes::load`], and what to tell the person when the file is not
    /// all UTF-8: its path and the offset of the first bad byte (the notes
    /// are read with the bad bytes replaced, not dropped).
    pub fn load_checked(home: &Path, key: &str) -> (Notes, Option<String>) {
        let path = crate::home::notes_file(home, key);
        let Ok(bytes) = fs::read(&path) else {
            return (Notes::default(), None);
        };
        match String::from_utf8(bytes) {
            Ok(text) => (Notes::parse(&text), None),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let warning = format!(
                    "{}: byte {at} is not UTF-8; the notes are read with it replaced (save the file as UTF-8)",
                    path.display()
                );
                (Notes::parse(&text), Some(warning))
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    /// Which notes name which tables of `catalog`: for each note, the
    /// indexes of the tables it names.
    fn links(&self, catalog: &Catalog) -> Vec<Vec<usize>> {
        let parts: Vec<Vec<String>> = catalog
            .tables
            .iter()
            .map(|t| ident_parts(t.name.rsplit('.').next().unwrap_or(&t.name)))
            .collect();
        self.notes
            .iter()
            .map(|note| {
                let said = words(note);
                let idents: Vec<String> = note
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                    .map(str::to_lowercase)
                    .collect();
                (0..catalog.tables.len())
                    .filter(|&i| {
                        let name = catalog.tables[i].name.to_lowercase();
                        let bare = name.rsplit('.').next().unwrap_or(&name).to_string();
                        idents.iter().any(|w| *w == name || *w == bare)
                            || (!parts[i].is_empty()
                                && said.windows(parts[i].len()).any(|w| w == parts[i]))
                    })
                    .collect()
            })
            .collect()
    }

    /// Adds each note that names tables to those tables' descriptions (a
    /// comment), so it is ranked and laid out with them.
    pub fn attach(&self, catalog: &mut Catalog) {
        let links = self.links(catalog);
        for (note, tables) in self.notes.iter().zip(links) {
            for i in tables {
                let t = &mut catalog.tables[i];
                let comment = match t.comment.take().filter(|c| !c.is_empty()) {
                    Some(c) => format!("{c}; note: {note}"),
                    None => format!("note: {note}"),
                };
                t.comment = Some(comment);
            }
        }
    }

    /// Every note once, for a person to read (`aiq schema`): `- note`, and
    /// the tables it names after it (`[tables: orders, products]`).
    pub fn listing(&self, catalog: &Catalog) -> String {
        let links = self.links(catalog);
        let mut out = String::new();
        for (note, tables) in self.notes.iter().zip(links) {
            out.push_str(&format!("- {note}"));
            if !tables.is_empty() {
                let names: Vec<&str> = tables
                    .iter()
                    .map(|&i| catalog.tables[i].name.as_str())
                    .collect();
                out.push_str(&format!("  [tables: {}]", names.join(", ")));
            }
            out.push('\n');
        }
        out
    }

    /// `catalog` for a person to read: every note once, with the tables
    /// it names (the model gets each on every table it names), then the
    /// tables (`aiq schema`, `/schema`).
    pub fn describe(&self, catalog: &Catalog) -> String {
        let notes = self.listing(catalog);
        let mut out = String::new();
        if !notes.is_empty() {
            out.push_str("-- notes (the model gets each with the tables it names)\n");
            out.push_str(&notes);
            out.push('\n');
        }
        out.push_str(&catalog.render());
        out
    }

    /// The notes that name no table of `catalog`, as lines for the prompt
    /// (`- note`), within [`GENERAL_BUDGET`].
    pub fn general(&self, catalog: &Catalog) -> String {
        let links = self.links(catalog);
        let mut out = String::new();
        for (note, tables) in self.notes.iter().zip(links) {
            if !tables.is_empty() {
                continue;
            }
            let line = format!("- {note}\n");
            if out.len() + line.len() > GENERAL_BUDGET {
                break;
            }
            out.push_str(&line);
        }
        out
    }
}

/// `1. text` / `1) text` → `text`.
fn numbered(line: &str) -> Option<&str> {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &line[digits..];
    rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// What a new notes file holds before the user writes any.
pub const TEMPLATE: &str =
    "<!-- Notes about this source for aiq's model: what the schema cannot say.
Each paragraph or list item is one note; a note that names a table travels
with it. For example:
- Revenue means quantity × unit price of order_items, without cancelled orders.
- Amounts are in cents.
-->
";

/// Appends `line` as a list item to the notes of `key`; returns the file.
/// Under the file's lock, so notes two processes add at once are both kept.
/// The notes file's text ("" when there is none). A file that is not
/// UTF-8 is an error naming the byte: rewriting it from a lossy reading
/// would lose what a person wrote.
pub fn read_existing(path: &Path) -> io::Result<String> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: byte {} is not UTF-8; aiq leaves the file as it is (save it as UTF-8 with another editor first)",
                    path.display(),
                    e.utf8_error().valid_up_to()
                ),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

pub fn append(home: &Path, key: &str, line: &str) -> io::Result<PathBuf> {
    let path = crate::home::notes_file(home, key);
    make_dirs(home, &path)?;
    crate::home::lock::exclusive(&path, || {
        let mut text = read_existing(&path)?;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("- {}\n", line.trim()));
        write(home, &path, &text)
    })?;
    Ok(path)
}

/// Replaces the notes at `path` with `edited`, the result of editing
/// `original`: lines another process added to the file meanwhile (a `/note`
/// in a chat while an editor was open) are kept, after the edited text.
/// Returns how many such lines were kept.
pub fn replace_edited(home: &Path, path: &Path, original: &str, edited: &str) -> io::Result<usize> {
    make_dirs(home, path)?;
    crate::home::lock::exclusive(path, || {
        let current = read_existing(path)?;
        let added = lines_added(original, &current);
        let mut text = edited.to_string();
        if !added.is_empty() && !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for line in &added {
            text.push_str(line);
            text.push('\n');
        }
        write(home, path, &text)?;
        Ok(added.len())
    })
}

/// The lines of `now` that `before` did not have (as many times as they
/// were added), in their order.
fn lines_added<'a>(before: &str, now: &'a str) -> Vec<&'a str> {
    let mut had: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in before.lines() {
        *had.entry(line).or_default() += 1;
    }
    now.lines()
        .filter(|line| match had.get_mut(line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => !line.trim().is_empty(),
        })
        .collect()
}

fn make_dirs(home: &Path, path: &Path) -> io::Result<()> {
    crate::home::create_private_dir(home)?;
    match path.parent() {
        Some(dir) => crate::home::create_private_dir(dir),
        None => Ok(()),
    }
}

/// Writes a notes file (and the folder, private) atomically.
pub fn write(home: &Path, path: &Path, text: &str) -> io::Result<()> {
    make_dirs(home, path)?;
    crate::home::write_atomic(path, |f| io::Write::write_all(f, text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnInfo, Table};

    fn catalog() -> Catalog {
        let t = |name: &str| Table {
            name: name.into(),
            columns: vec![ColumnInfo {
                name: "id".into(),
                type_name: "INTEGER".into(),
                ..ColumnInfo::default()
            }],
            ..Table::default()
        };
        Catalog {
            engine: "x".into(),
            tables: vec![t("order_items"), t("orders"), t("customers"), t("payment")],
        }
    }

    const TEXT: &str = "# Shop\n<!-- a comment\nthat spans -->\nRevenue means quantity × unit price of order items,\nwithout cancelled orders.\n\n- Amounts are in cents.\n- The fiscal year starts in April.\n1. payment.method 'cc' is a credit card\n";

    #[test]
    fn paragraphs_and_items_are_notes() {
        let n = Notes::parse(TEXT);
        assert_eq!(
            n.notes,
            [
                "Revenue means quantity × unit price of order items, without cancelled orders.",
                "Amounts are in cents.",
                "The fiscal year starts in April.",
                "payment.method 'cc' is a credit card",
            ]
        );
    }

    #[test]
    fn a_note_that_names_a_table_travels_with_it() {
        let n = Notes::parse(TEXT);
        let mut c = catalog();
        n.attach(&mut c);
        let comment = |name: &str| c.table(name).unwrap().comment.clone();
        let revenue =
            "note: Revenue means quantity × unit price of order items, without cancelled orders.";
        assert_eq!(comment("order_items").as_deref(), Some(revenue));
        assert_eq!(comment("orders").as_deref(), Some(revenue));
        assert_eq!(
            comment("payment").as_deref(),
            Some("note: payment.method 'cc' is a credit card")
        );
        assert_eq!(comment("customers"), None);
        assert_eq!(
            n.general(&catalog()),
            "- Amounts are in cents.\n- The fiscal year starts in April.\n"
        );
    }

    /// Ranked with the schema: a note's words pull the table it names up
    /// for a question, and the note is in the request with the table.
    #[test]
    fn notes_rank_and_fit_with_their_tables() {
        use crate::agent::link::{layout, rank, LinkIndex, Signals};
        let mut c = catalog();
        // Many unrelated tables, so only a few fit.
        for i in 0..40 {
            let mut t = c.tables[2].clone();
            t.name = format!("audit_{i:02}");
            c.tables.push(t);
        }
        let question = "what was the turnover per month?";
        let place = |c: &Catalog| {
            let index = LinkIndex::new(c);
            let signals = Signals {
                question,
                recent: &[],
                earlier_sql: &[],
            };
            let ranked = rank(c, &index, &signals);
            let laid = layout(c, &index, &ranked, 200);
            let at = ranked
                .order
                .iter()
                .position(|&i| c.tables[i].name == "order_items")
                .unwrap();
            (at < ranked.relevant, laid.text)
        };
        let (relevant, text) = place(&c);
        assert!(!relevant, "nothing links 'turnover' to order_items yet");
        assert!(!text.contains("table order_items"), "{text}");
        Notes::parse("- Turnover is the sum of order_items quantity times price.").attach(&mut c);
        let (relevant, text) = place(&c);
        assert!(relevant, "the note's words rank the table");
        assert!(
            text.contains(
                "table order_items -- note: Turnover is the sum of order_items quantity times price."
            ),
            "{text}"
        );
    }

    #[test]
    fn notes_added_at_once_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let home = home.clone();
                std::thread::spawn(move || {
                    for j in 0..10 {
                        append(&home, "shop", &format!("note {i}-{j}")).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = fs::read_to_string(crate::home::notes_file(&home, "shop")).unwrap();
        assert_eq!(text.lines().count(), 80, "{text}");
        for i in 0..8 {
            assert!(text.contains(&format!("- note {i}-9\n")));
        }
    }

    #[test]
    fn an_edit_keeps_the_notes_added_while_the_editor_was_open() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let path = append(home, "shop", "first").unwrap();
        let original = fs::read_to_string(&path).unwrap();
        // A chat adds a note while the editor is open.
        append(home, "shop", "from the chat").unwrap();
        let edited = "- first, reworded\n- a new one\n";
        assert_eq!(replace_edited(home, &path, &original, edited).unwrap(), 1);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "- first, reworded\n- a new one\n- from the chat\n"
        );
    }

    #[test]
    fn keys_are_file_names() {
        assert_eq!(key("shop"), "shop");
        assert_eq!(key("/home/me/data/shop.db"), "home_me_data_shop.db");
        assert_eq!(key("postgres://u@h/db"), "postgres___u_h_db");
    }

    #[test]
    fn lines_are_appended_as_items() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("h");
        append(&home, "shop", "Amounts are in cents.").unwrap();
        let p = append(&home, "shop", " Orders with status 'test' are not real ").unwrap();
        assert_eq!(
            fs::read_to_string(p).unwrap(),
            "- Amounts are in cents.\n- Orders with status 'test' are not real\n"
        );
        assert_eq!(Notes::load(&home, "shop").notes.len(), 2);
    }
}
