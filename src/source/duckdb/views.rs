//! The views that serve a data-file source's files and datasets as tables
//! (SPEC §4.1), built once and kept: each table's reader is decided from
//! the files (one schema or several, partitions, a CSV that is not UTF-8),
//! and the views database is cached by every file's path, size and
//! modification time, so a warm start creates no view and sniffs no file.
//!
//! What the views may read is exactly their files: single files by path,
//! datasets by their folder (`allowed_paths` / `allowed_directories`).

use std::path::{Path, PathBuf};

use duckdb::Connection;
use serde::{Deserialize, Serialize};

use super::dataset::describe_partitions;
use crate::source::spec::DataFile;
use crate::source::{quote_ident, quote_str, DataFileKind, SourceError};

/// Changes whenever the views this module writes change, so a cached views
/// database of an older aiq is never used.
const VIEWS_VERSION: u32 = 6;

/// A partitioned Parquet dataset of at least this many files gets a
/// [`Narrowing`]: below it, binding the whole view costs less than
/// narrowing it.
pub(crate) const NARROW_FROM: usize = 64;

/// What the connection may read: the single files and a glob's files,
/// and datasets' folders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Allowed {
    pub paths: Vec<String>,
    pub dirs: Vec<String>,
}

/// What building the views found, kept beside a cached views database.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Built {
    /// One line per table that could not be served: said on every start.
    pub warnings: Vec<String>,
    /// One line per file read as Latin-1: said once, when the views are
    /// built, not kept.
    #[serde(skip)]
    pub notices: Vec<String>,
    pub allowed: Allowed,
    /// The datasets a query may read through a narrower view
    /// (`duckdb_narrow`).
    #[serde(default)]
    pub narrowing: Vec<Narrowing>,
}

/// How to write a narrower view of a partitioned dataset: its reader with
/// a shorter list of files, and what the whole view's columns are (a
/// narrower view with any other columns is not used).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Narrowing {
    pub table: String,
    /// `read_parquet`.
    pub function: String,
    /// The reader's options after its list of files.
    pub options: String,
    /// The whole view's columns and types, as `DESCRIBE` gives them.
    pub columns: Vec<(String, String)>,
    /// The partition keys, outermost first, and their types.
    pub keys: Vec<(String, String)>,
}

impl Narrowing {
    /// The reader of `files` alone.
    pub(crate) fn reader(&self, files: &[&Path]) -> String {
        call(&self.function, &path_list(files), &self.options)
    }
}

/// The key of a cached views database: every file's path, size and
/// modification time, and the tables they make.
pub(crate) fn fingerprint(files: &[DataFile]) -> String {
    let mut hash = Fnv::default();
    hash.write(format!("views {VIEWS_VERSION};").as_bytes());
    for file in files {
        hash.write(format!("{}={:?}:{};", file.table, file.kind, file.path.display()).as_bytes());
        if file.stamps.len() == file.files().len() {
            for stamp in &file.stamps {
                hash.write(stamp.as_bytes());
            }
        } else {
            for part in file.files() {
                hash.write(crate::source::file_stamp(part).as_bytes());
            }
        }
    }
    format!("{:016x}{:016x}", hash.0, hash.1)
}

/// Two FNV-1a hashes with different offsets: a 128-bit key, stable across
/// runs and builds (std's hasher promises neither).
struct Fnv(u64, u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            self.1 = (self.1 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Creates a view for each table in the database `conn` has open; what
/// cannot be read is left out and said in `Built::warnings`.
pub(crate) fn build(conn: &Connection, files: &[DataFile]) -> Built {
    let mut built = Built::default();
    for file in files {
        match create_view(conn, file) {
            Ok((latin1, narrowing)) => {
                built.narrowing.extend(narrowing);
                for path in latin1 {
                    built.notices.push(format!(
                        "read {} as Latin-1: it is not UTF-8",
                        path.display()
                    ));
                }
                // A glob's own files, not its root: the folder it starts
                // from holds other files too (SPEC §4.2). A dataset folder
                // is the dataset's own.
                if file.is_dataset() && !file.glob {
                    built.allowed.dirs.push(file.path.display().to_string());
                } else {
                    built
                        .allowed
                        .paths
                        .extend(file.files().iter().map(|p| p.display().to_string()));
                }
            }
            Err(why) if file.is_dataset() => built.warnings.push(format!(
                "skipped {}: its files cannot be read as one table: {why}",
                file.path.display()
            )),
            Err(why) => built
                .warnings
                .push(format!("skipped {}: {why}", file.path.display())),
        }
    }
    built
}

/// Creates `file`'s view; the files read as Latin-1 and how to narrow
/// it, or why it failed.
fn create_view(
    conn: &Connection,
    file: &DataFile,
) -> Result<(Vec<PathBuf>, Option<Narrowing>), String> {
    if !file.is_dataset()
        && std::fs::metadata(&file.path)
            .map(|m| m.len() == 0)
            .unwrap_or(false)
    {
        return Err("the file is empty".into());
    }
    if matches!(file.kind, DataFileKind::Json | DataFileKind::JsonLines) {
        for part in file.files() {
            super::json_depth::check(part).map_err(|deep| {
                if file.is_dataset() {
                    format!("{}: {deep}", part.display())
                } else {
                    deep.to_string()
                }
            })?;
        }
    }
    let union = file.is_dataset() && schemas_differ(conn, file);
    let create = |latin1: bool, types: &[(String, String)]| {
        let mut sql = format!(
            "CREATE OR REPLACE VIEW {} AS SELECT * FROM {}",
            quote_ident(&file.table),
            {
                let (function, options) = reader(file, union, latin1, types);
                call(function, &target(file), &options)
            }
        );
        if let Some(comment) = describe_partitions(file) {
            sql.push_str(&format!(
                "; COMMENT ON VIEW {} IS {}",
                quote_ident(&file.table),
                quote_str(&comment)
            ));
        }
        conn.execute_batch(&sql)
    };
    let latin1 = match create(false, &[]) {
        Ok(()) => false,
        Err(e) if is_csv(file.kind) && e.to_string().contains("Invalid unicode") => {
            create(true, &[]).map_err(|e| super::file_error(&e.to_string()))?;
            true
        }
        Err(e) => return Err(super::file_error(&e.to_string())),
    };
    // The partition columns' types as DuckDB found them, written into the
    // view: otherwise every read of the view guesses them again from every
    // file's folder names (a third of a one-partition query over 10,000
    // files). Kept as guessed when they cannot be read back.
    if file.partitions.is_empty() {
        return Ok((latin1_files(file, latin1), None));
    }
    let described = describe(conn, &quote_ident(&file.table));
    let types = partition_types(file, &described);
    if types.is_empty() {
        return Ok((latin1_files(file, latin1), None));
    }
    create(latin1, &types).map_err(|e| super::file_error(&e.to_string()))?;
    // Only Parquet: its files carry their own types, so a view of some of
    // them reads them as the whole view does (a CSV's first file decides
    // how all are read).
    let narrowing = (file.kind == DataFileKind::Parquet
        && file.parts.len() >= NARROW_FROM
        && !described.is_empty())
    .then(|| {
        let (function, options) = reader(file, union, latin1, &types);
        Narrowing {
            table: file.table.clone(),
            function: function.to_string(),
            options,
            columns: described,
            keys: types,
        }
    });
    Ok((latin1_files(file, latin1), narrowing))
}

fn latin1_files(file: &DataFile, latin1: bool) -> Vec<PathBuf> {
    if latin1 {
        file.files().to_vec()
    } else {
        Vec::new()
    }
}

/// A view's columns and their types; empty when it cannot be described.
pub(crate) fn describe(conn: &Connection, view: &str) -> Vec<(String, String)> {
    let Ok(mut stmt) = conn.prepare(&format!(
        "SELECT column_name, column_type FROM (DESCRIBE {view})"
    )) else {
        return Vec::new();
    };
    let Ok(rows) = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
    else {
        return Vec::new();
    };
    rows.flatten().collect()
}

/// The types DuckDB gave a dataset view's partition columns (`described`).
fn partition_types(file: &DataFile, described: &[(String, String)]) -> Vec<(String, String)> {
    let types: Vec<(String, String)> = file
        .partitions
        .iter()
        .filter_map(|p| described.iter().find(|(name, _)| *name == p.key).cloned())
        .collect();
    if types.len() == file.partitions.len() {
        types
    } else {
        Vec::new()
    }
}

/// Levels of nesting a JSON value's type is detected to; deeper ones are
/// `JSON` text.
pub(crate) const JSON_DEPTH: usize = 16;

fn is_csv(kind: DataFileKind) -> bool {
    matches!(kind, DataFileKind::Csv | DataFileKind::Tsv)
}

/// The table function that reads `file` and its options after the file
/// or list of files: columns by name across files when their schemas
/// differ; `key=value` folders as columns (of the `types` given, else of
/// the types DuckDB guesses).
fn reader(
    file: &DataFile,
    union: bool,
    latin1: bool,
    types: &[(String, String)],
) -> (&'static str, String) {
    let mut options = Vec::new();
    match file.kind {
        // A short row reads as NULLs in the missing columns (not as one
        // column holding whole lines).
        DataFileKind::Csv => options.push("null_padding = true".to_string()),
        DataFileKind::Tsv => {
            options.push("delim = '\t'".to_string());
            options.push("null_padding = true".to_string());
        }
        DataFileKind::JsonLines => options.push("format = 'newline_delimited'".to_string()),
        DataFileKind::Parquet | DataFileKind::Json => {}
    }
    // Values nested deeper than this are read as JSON text: a type nested
    // thousands deep would take the whole stack to convert (and a data
    // file must never crash aiq).
    if matches!(file.kind, DataFileKind::Json | DataFileKind::JsonLines) {
        options.push(format!("maximum_depth = {JSON_DEPTH}"));
    }
    if latin1 {
        options.push("encoding = 'latin-1'".to_string());
    }
    if file.is_dataset() {
        options.push(format!("union_by_name = {union}"));
        options.push(format!(
            "hive_partitioning = {}",
            !file.partitions.is_empty()
        ));
        if !types.is_empty() {
            let fields: Vec<String> = types
                .iter()
                .map(|(key, ty)| format!("{}: {}", quote_str(key), quote_str(ty)))
                .collect();
            options.push(format!("hive_types = {{{}}}", fields.join(", ")));
        }
    }
    let function = match file.kind {
        DataFileKind::Csv | DataFileKind::Tsv => "read_csv",
        DataFileKind::Parquet => "read_parquet",
        DataFileKind::Json | DataFileKind::JsonLines => "read_json_auto",
    };
    (function, options.join(", "))
}

/// What a reader reads: the file's path, or a dataset's list of files.
fn target(file: &DataFile) -> String {
    if file.is_dataset() {
        let parts: Vec<&Path> = file.parts.iter().map(PathBuf::as_path).collect();
        path_list(&parts)
    } else {
        quote_str(&file.path.display().to_string())
    }
}

/// `function(target, options)`.
fn call(function: &str, target: &str, options: &str) -> String {
    if options.is_empty() {
        format!("{function}({target})")
    } else {
        format!("{function}({target}, {options})")
    }
}

/// `paths` as a DuckDB list of strings: `['/a.parquet', '/b.parquet']`.
fn path_list(paths: &[&Path]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| quote_str(&p.display().to_string()))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// Whether a dataset's files have different columns (then they are read
/// by name, which costs a look at every file each time the view is read).
/// JSON is always read by name.
fn schemas_differ(conn: &Connection, file: &DataFile) -> bool {
    let distinct = match file.kind {
        DataFileKind::Parquet => conn.query_row(
            &format!(
                "SELECT count(DISTINCT s) FROM (SELECT list_sort(list(name || ':' || coalesce(type, ''))) AS s \
                 FROM parquet_schema({}) GROUP BY file_name)",
                target(file)
            ),
            [],
            |r| r.get::<_, i64>(0),
        ),
        DataFileKind::Csv | DataFileKind::Tsv => {
            let delim = if file.kind == DataFileKind::Tsv {
                ", delim = '\t'"
            } else {
                ""
            };
            let mut seen: Vec<String> = Vec::new();
            for part in &file.parts {
                let columns = conn.query_row(
                    &format!(
                        "SELECT Columns::VARCHAR FROM sniff_csv({}{delim})",
                        quote_str(&part.display().to_string())
                    ),
                    [],
                    |r| r.get::<_, String>(0),
                );
                match columns {
                    Ok(c) if !seen.contains(&c) => seen.push(c),
                    Ok(_) => {}
                    // Not UTF-8, or unreadable: reading by name handles both.
                    Err(_) => return true,
                }
                if seen.len() > 1 {
                    return true;
                }
            }
            Ok(1)
        }
        DataFileKind::Json | DataFileKind::JsonLines => Ok(2),
    };
    !matches!(distinct, Ok(n) if n <= 1)
}

/// Where a cached views database of `files` (with their [`fingerprint`])
/// lives under `cache`, and the prefix every one of the same source shares.
pub(crate) fn cached_path(
    cache: &Path,
    files: &[DataFile],
    fingerprint: &str,
) -> (PathBuf, String) {
    let mut identity = Fnv::default();
    for file in files {
        identity.write(file.path.display().to_string().as_bytes());
        identity.write(b";");
    }
    let prefix = format!("{:016x}-", identity.0);
    let name = format!("{prefix}{fingerprint}.duckdb");
    (cache.join(name), prefix)
}

/// The note beside a cached views database.
pub(crate) fn note_path(db: &Path) -> PathBuf {
    db.with_extension("json")
}

/// Reads the note of a cached views database; `None` when it is missing
/// or unreadable (then the views are built again).
pub(crate) fn read_note(db: &Path) -> Option<Built> {
    if !db.is_file() {
        return None;
    }
    let text = std::fs::read(note_path(db)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Keeps a freshly built views database (`built_db`, closed) and its note
/// under `target`, replacing the source's older ones.
pub(crate) fn keep(
    built_db: &Path,
    built: &Built,
    target: &Path,
    prefix: &str,
) -> Result<(), SourceError> {
    let fail = |e: std::io::Error| SourceError(format!("cannot keep the views: {e}"));
    let dir = target
        .parent()
        .ok_or_else(|| SourceError("cannot keep the views: no folder".into()))?;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Older views of this source, and builds a crash left behind.
            let left = name.starts_with(".building-")
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600);
            if left || (name.starts_with(prefix) && !target.ends_with(&*name)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let note = serde_json::to_vec(built).map_err(|e| SourceError(e.to_string()))?;
    crate::home::write_atomic(&note_path(target), |f| std::io::Write::write_all(f, &note))
        .map_err(fail)?;
    std::fs::rename(built_db, target).map_err(fail)
}
