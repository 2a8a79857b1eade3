//! The catalog cache: introspecting a big schema takes time on every run
//! (hundreds of milliseconds on a 2,000-table server), so the catalog is
//! kept in `$AIQ_HOME/cache/catalog-KEY.bin` (postcard, compact and fast
//! to read) with the source's change
//! fingerprint (SQLite's schema version and the file's size and time, a
//! server's catalog checksum, …). A cached catalog is used only when the
//! fingerprint taken now is the one it was stored with: a stale cache is
//! never used. `aiq schema --refresh` rebuilds it.
//!
//! The entry also keeps the catalog's text form, ahead of the catalog: a
//! warm `aiq schema` reads only that (no 2,000 tables rebuilt and freed to
//! print text that was already made once).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Catalog;

/// Bumped when the file's shape, the catalog's meaning or its text
/// changes (3: names that need quotes have them; 4: a ClickHouse table
/// name with a dot of its own is one name; 5: what a view or shadow table
/// reaches).
const FORMAT: u32 = 5;

/// A cache file: its [`Head`], then the catalog (postcard writes a
/// struct's fields one after the other, so this reads what [`EntryRef`]
/// wrote).
#[derive(Deserialize)]
struct Entry {
    head: Head,
    catalog: Catalog,
}

/// An entry to write, borrowing what it holds.
#[derive(Serialize)]
struct EntryRef<'a> {
    format: u32,
    source: &'a str,
    fingerprint: &'a str,
    text: &'a str,
    catalog: &'a Catalog,
}

/// The start of an entry: postcard reads fields in order and leaves the
/// rest of the bytes alone, so reading only this never decodes the catalog.
#[derive(Deserialize)]
struct Head {
    format: u32,
    /// What the source is (a path, a URL without password): two sources
    /// whose keys collide never share an entry.
    source: String,
    fingerprint: String,
    /// `catalog.render()`, what `aiq schema` prints.
    text: String,
}

impl Head {
    /// Whether the entry was written by this aiq for `source` as of `fingerprint`.
    fn fresh(&self, source: &str, fingerprint: &str) -> bool {
        self.format == FORMAT && self.source == source && self.fingerprint == fingerprint
    }
}

/// The cached catalog of `source`, if it was stored with `fingerprint`.
pub fn load(home: &Path, source: &str, fingerprint: &str) -> Option<Catalog> {
    let bytes = std::fs::read(path(home, source)).ok()?;
    let entry: Entry = postcard::from_bytes(&bytes).ok()?;
    entry
        .head
        .fresh(source, fingerprint)
        .then_some(entry.catalog)
}

/// The first three fields of an entry: who wrote it, for which source, under
/// which fingerprint.
#[derive(Deserialize)]
struct Stamp {
    format: u32,
    source: String,
    fingerprint: String,
}

/// An entry's stamp, when this aiq wrote it for `source`, and the bytes
/// after it.
fn stamp<'b>(bytes: &'b [u8], source: &str) -> Option<(Stamp, &'b [u8])> {
    let (stamp, rest) = postcard::take_from_bytes::<Stamp>(bytes).ok()?;
    (stamp.format == FORMAT && stamp.source == source).then_some((stamp, rest))
}

/// The fingerprint the catalog of `source` was kept with, if there is one
/// (for [`crate::source::DataSource::fingerprint_since`]).
pub fn stored_fingerprint(home: &Path, source: &str) -> Option<String> {
    let bytes = std::fs::read(path(home, source)).ok()?;
    stamp(&bytes, source).map(|(stamp, _)| stamp.fingerprint)
}

/// The cached catalog's text form ([`Catalog::render`]), on the same terms
/// as [`load`].
pub fn load_text(home: &Path, source: &str, fingerprint: &str) -> Option<String> {
    let bytes = std::fs::read(path(home, source)).ok()?;
    let head: Head = postcard::from_bytes(&bytes).ok()?;
    head.fresh(source, fingerprint).then_some(head.text)
}

/// Keeps `catalog` for `source` as of `fingerprint` (atomically, 0600; it
/// holds sample values). A failure only means the next run introspects.
pub fn store(home: &Path, source: &str, fingerprint: &str, catalog: &Catalog) {
    let text = catalog.render();
    let entry = EntryRef {
        format: FORMAT,
        source,
        fingerprint,
        text: &text,
        catalog,
    };
    let Ok(bytes) = postcard::to_stdvec(&entry) else {
        return;
    };
    let dir = crate::home::cache_dir(home);
    let file = path(home, source);
    let written = crate::home::create_private_dir(home)
        .and_then(|_| crate::home::create_private_dir(&dir))
        .and_then(|_| {
            crate::home::lock::exclusive(&file, || crate::home::write_private(&dir, &file, &bytes))
        });
    if let Err(e) = written {
        tracing::info!("cannot keep the catalog in {}: {e}", dir.display());
    }
}

/// Keeps the entry of `source` under `fingerprint` from now on, as it is
/// otherwise ([`crate::source::Since::restamp`]). Only the head is decoded;
/// the rest of the bytes are copied. A failure only means the next run
/// takes the full fingerprint again.
pub fn restamp(home: &Path, source: &str, fingerprint: &str) {
    let file = path(home, source);
    // Under the entry's lock: a full entry another process stores
    // meanwhile is not replaced by this one's older rest.
    if file.exists() {
        let _ = crate::home::lock::exclusive(&file, || {
            restamp_locked(home, &file, source, fingerprint);
            Ok(())
        });
    }
}

fn restamp_locked(home: &Path, file: &Path, source: &str, fingerprint: &str) {
    let Ok(bytes) = std::fs::read(file) else {
        return;
    };
    let Some((_, rest)) = stamp(&bytes, source) else {
        return;
    };
    let Ok(mut out) = postcard::to_stdvec(&(FORMAT, source, fingerprint)) else {
        return;
    };
    out.extend_from_slice(rest);
    let dir = crate::home::cache_dir(home);
    if let Err(e) = crate::home::write_private(&dir, file, &out) {
        tracing::info!("cannot restamp the catalog in {}: {e}", dir.display());
    }
}

fn path(home: &Path, source: &str) -> PathBuf {
    crate::home::cache_dir(home).join(format!("catalog-{:016x}.bin", fnv1a(source)))
}

/// FNV-1a, 64 bits: a stable file name for a source (the entry names the
/// source in full, so a collision only costs a rebuild).
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Table;

    #[test]
    fn a_catalog_comes_back_only_with_its_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog {
            engine: "SQLite 3".into(),
            tables: vec![Table {
                name: "t".into(),
                ..Table::default()
            }],
        };
        store(dir.path(), "sqlite:/data/a.db", "v1", &catalog);
        assert_eq!(
            load_text(dir.path(), "sqlite:/data/a.db", "v1"),
            Some(catalog.render())
        );
        assert_eq!(load(dir.path(), "sqlite:/data/a.db", "v1"), Some(catalog));
        assert_eq!(load(dir.path(), "sqlite:/data/a.db", "v2"), None, "stale");
        assert_eq!(load_text(dir.path(), "sqlite:/data/a.db", "v2"), None);
        assert_eq!(
            load(dir.path(), "sqlite:/data/b.db", "v1"),
            None,
            "another source"
        );
        assert_eq!(load_text(dir.path(), "sqlite:/data/b.db", "v1"), None);
        assert_eq!(
            stored_fingerprint(dir.path(), "sqlite:/data/a.db").as_deref(),
            Some("v1")
        );
        assert_eq!(stored_fingerprint(dir.path(), "sqlite:/data/b.db"), None);
    }

    #[test]
    fn writers_at_once_leave_a_whole_entry() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let home = home.clone();
                std::thread::spawn(move || {
                    for j in 0..20 {
                        let catalog = Catalog {
                            engine: format!("SQLite {i}.{j}"),
                            tables: vec![Table {
                                name: format!("t{i}"),
                                ..Table::default()
                            }],
                        };
                        store(&home, "sqlite:/data/a.db", &format!("v{i}.{j}"), &catalog);
                        restamp(&home, "sqlite:/data/a.db", &format!("r{i}.{j}"));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Whoever wrote last, the entry is whole: its stamp and its catalog
        // decode together.
        let stamp = stored_fingerprint(&home, "sqlite:/data/a.db").unwrap();
        let catalog = load(&home, "sqlite:/data/a.db", &stamp).expect("a whole entry");
        assert_eq!(catalog.tables.len(), 1);
    }

    #[test]
    fn a_restamped_entry_answers_to_its_new_fingerprint_only() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog {
            engine: "PostgreSQL 15".into(),
            tables: vec![Table {
                name: "orders".into(),
                comment: Some("one row per order".into()),
                ..Table::default()
            }],
        };
        store(dir.path(), "postgres://h/db", "q1|f1", &catalog);
        restamp(dir.path(), "postgres://h/db", "q2|f1");
        assert_eq!(
            stored_fingerprint(dir.path(), "postgres://h/db").as_deref(),
            Some("q2|f1")
        );
        assert_eq!(
            load(dir.path(), "postgres://h/db", "q2|f1"),
            Some(catalog.clone())
        );
        assert_eq!(
            load_text(dir.path(), "postgres://h/db", "q2|f1"),
            Some(catalog.render())
        );
        assert_eq!(load(dir.path(), "postgres://h/db", "q1|f1"), None);
        // Another source's entry, or none, is left alone.
        restamp(dir.path(), "postgres://h/other", "x");
        assert_eq!(stored_fingerprint(dir.path(), "postgres://h/other"), None);
    }

    #[test]
    fn an_entry_of_another_format_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::default();
        store(dir.path(), "s", "v1", &catalog);
        let file = path(dir.path(), "s");
        let mut bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes[0], FORMAT as u8, "the format leads the entry");
        bytes[0] = 1;
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(load(dir.path(), "s", "v1"), None);
        assert_eq!(load_text(dir.path(), "s", "v1"), None);
    }
}
