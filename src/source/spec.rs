//! Turning a SOURCE argument (path, URL or saved name) into a [`SourceSpec`].
//! Pure apart from looking at the file system; errors name the argument and
//! say what a valid one looks like.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::duckdb::dataset;
use super::saved::SavedSources;
use super::SourceError;
pub use crate::redact::{redact_url, strip_password};

/// What a SOURCE argument resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A DuckDB database file.
    DuckDb(PathBuf),
    /// An empty in-memory DuckDB database (`duckdb://:memory:`).
    DuckDbMemory,
    /// One data file, or a folder of them, each served as a table by DuckDB.
    /// `skipped`: files of the folder not served, with why (a link that
    /// leads outside it).
    DataFiles {
        root: PathBuf,
        files: Vec<DataFile>,
        skipped: Vec<String>,
    },
    /// A PostgreSQL, MySQL/MariaDB or ClickHouse server.
    Server(ServerSpec),
}

/// A database server to connect to.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub protocol: ServerProtocol,
    /// The URL as given or saved; may hold a password, so it is never shown
    /// as is (see [`redact_url`] and [`strip_password`]).
    pub url: String,
    /// The environment variable that holds the password (a saved source's
    /// `password_env`).
    pub password_env: Option<String>,
}

impl std::fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSpec")
            .field("protocol", &self.protocol)
            .field("url", &redact_url(&self.url))
            .field("password_env", &self.password_env)
            .finish()
    }
}

/// The wire protocol a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProtocol {
    Postgres,
    /// MySQL and MariaDB.
    MySql,
    /// ClickHouse's HTTP interface; `tls`: HTTPS (`clickhouses://`).
    ClickHouse {
        tls: bool,
    },
}

/// One CSV/TSV/Parquet/JSON file, or a dataset of such files, and the
/// table name it is served under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub table: String,
    /// The file; for a dataset, its folder (a glob's root).
    pub path: PathBuf,
    pub kind: DataFileKind,
    /// A dataset's files, in path order; empty for a single file.
    pub parts: Vec<PathBuf>,
    /// A dataset's `key=value/` partition folders, outermost first.
    pub partitions: Vec<Partition>,
    /// Each part's stamp (size and time, `file_stamp`) as read when the
    /// files were listed; empty when they were not read then.
    pub stamps: Vec<String>,
    /// The files a glob matched: only they may be read, not the folder
    /// around them (a dataset folder's own side files may).
    pub glob: bool,
}

impl DataFile {
    /// One file served as a table.
    pub fn single(table: String, path: PathBuf, kind: DataFileKind) -> DataFile {
        DataFile {
            table,
            path,
            kind,
            parts: Vec::new(),
            partitions: Vec::new(),
            stamps: Vec::new(),
            glob: false,
        }
    }

    /// Whether this is a dataset (a folder or glob of files).
    pub fn is_dataset(&self) -> bool {
        !self.parts.is_empty()
    }

    /// Every file it reads.
    pub fn files(&self) -> &[PathBuf] {
        if self.parts.is_empty() {
            std::slice::from_ref(&self.path)
        } else {
            &self.parts
        }
    }
}

/// A partition key of a dataset and the values its folders hold, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub key: String,
    pub values: Vec<String>,
    /// Each part's value, in the order of the dataset's parts, as written
    /// (DuckDB decodes `%2F` and reads `__HIVE_DEFAULT_PARTITION__` as
    /// NULL).
    pub each: Vec<String>,
}

/// The formats DuckDB reads as tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFileKind {
    Csv,
    Tsv,
    Parquet,
    Json,
    JsonLines,
}

impl DataFileKind {
    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            DataFileKind::Csv => "csv",
            DataFileKind::Tsv => "tsv",
            DataFileKind::Parquet => "parquet",
            DataFileKind::Json => "json",
            DataFileKind::JsonLines => "jsonl",
        }
    }

    pub(crate) fn from_extension(ext: &str) -> Option<Self> {
        match ext.to_ascii_lowercase().as_str() {
            "csv" => Some(DataFileKind::Csv),
            "tsv" => Some(DataFileKind::Tsv),
            "parquet" => Some(DataFileKind::Parquet),
            "json" => Some(DataFileKind::Json),
            "jsonl" | "ndjson" => Some(DataFileKind::JsonLines),
            _ => None,
        }
    }
}

/// A resolved source: what to open and how to name it to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub spec: SourceSpec,
    /// The saved name, or the path/URL as given (never with a password).
    pub label: String,
}

const HINT: &str = "give a path to a .db/.sqlite/.duckdb/.csv/.tsv/.parquet/.json file or a folder of them, a sqlite://, duckdb://, postgres://, mysql:// or clickhouse:// URL, or a saved source name; see `aiq sources list`";

/// Resolves a SOURCE argument against the saved sources.
///
/// Order: a URL by its scheme; then a saved name (names never contain `/` or
/// `.`, so `./data` always means the folder); then a path on disk.
pub fn resolve(arg: &str, saved: &SavedSources) -> Result<Resolved, SourceError> {
    if let Some((scheme, rest)) = arg.split_once("://") {
        let spec = from_url(scheme, rest, arg)?;
        return Ok(Resolved {
            spec,
            label: arg.to_string(),
        });
    }
    if let Some(entry) = saved.get(arg) {
        let mut inner = resolve_location(&entry.url).map_err(|e| {
            SourceError(format!(
                "saved source '{arg}' ({}): {}",
                redact_url(&entry.url),
                e.0
            ))
        })?;
        if let SourceSpec::Server(server) = &mut inner {
            server.password_env = entry.password_env.clone();
        }
        if let Some(name) = &entry.name {
            rename_table(&mut inner, name)
                .map_err(|e| SourceError(format!("saved source '{arg}': {}", e.0)))?;
        }
        return Ok(Resolved {
            spec: inner,
            label: arg.to_string(),
        });
    }
    let path = Path::new(arg);
    if !path.exists() && dataset::is_glob(arg) {
        return Ok(Resolved {
            spec: from_glob(arg)?,
            label: arg.to_string(),
        });
    }
    if !path.exists() && !arg.contains(['/', '.', '\\']) {
        let names: Vec<&str> = saved.names().collect();
        let known = if names.is_empty() {
            "no sources are saved yet".to_string()
        } else {
            format!("saved sources: {}", names.join(", "))
        };
        return Err(SourceError(format!(
            "unknown source '{arg}': no saved source or file has that name ({known}); {HINT}"
        )));
    }
    Ok(Resolved {
        spec: from_path(path)?,
        label: arg.to_string(),
    })
}

/// Resolves a stored location (URL or path), as found in a saved source.
pub fn resolve_location(location: &str) -> Result<SourceSpec, SourceError> {
    match location.split_once("://") {
        Some((scheme, rest)) => from_url(scheme, rest, location),
        None => from_path(Path::new(location)),
    }
}

fn from_url(scheme: &str, rest: &str, whole: &str) -> Result<SourceSpec, SourceError> {
    match scheme.to_ascii_lowercase().as_str() {
        "sqlite" => {
            let path = Path::new(rest);
            existing_file(path)?;
            Ok(SourceSpec::Sqlite(path.to_path_buf()))
        }
        "duckdb" if rest.is_empty() || rest == ":memory:" => Ok(SourceSpec::DuckDbMemory),
        "duckdb" => {
            let path = Path::new(rest);
            existing_file(path)?;
            Ok(SourceSpec::DuckDb(path.to_path_buf()))
        }
        "postgres" | "postgresql" | "mysql" | "mariadb" => {
            let protocol = if scheme.to_ascii_lowercase().starts_with("postgres") {
                ServerProtocol::Postgres
            } else {
                ServerProtocol::MySql
            };
            if rest.is_empty() {
                return Err(SourceError(format!(
                    "cannot open {}: the URL names no server; write {scheme}://USER@HOST[:PORT]/DATABASE",
                    redact_url(whole)
                )));
            }
            // The drivers only know `mysql://`; MariaDB speaks the same protocol.
            let url = if scheme.eq_ignore_ascii_case("mariadb") {
                format!("mysql://{rest}")
            } else {
                whole.to_string()
            };
            Ok(SourceSpec::Server(ServerSpec {
                protocol,
                url,
                password_env: None,
            }))
        }
        "clickhouse" | "clickhouses" => {
            if rest.is_empty() {
                return Err(SourceError(format!(
                    "cannot open {}: the URL names no server; write {scheme}://USER@HOST[:PORT]/DATABASE",
                    redact_url(whole)
                )));
            }
            Ok(SourceSpec::Server(ServerSpec {
                protocol: ServerProtocol::ClickHouse {
                    tls: scheme.eq_ignore_ascii_case("clickhouses"),
                },
                url: whole.to_string(),
                password_env: None,
            }))
        }
        _ => Err(SourceError(format!(
            "cannot open {}: unknown URL scheme '{scheme}://' ({HINT})",
            redact_url(whole)
        ))),
    }
}

fn existing_file(path: &Path) -> Result<(), SourceError> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(SourceError(format!(
            "cannot open {}: it is a folder, not a database file ({HINT})",
            path.display()
        ))),
        Err(e) => Err(SourceError(format!(
            "cannot open {}: {} ({HINT})",
            path.display(),
            io_reason(&e)
        ))),
    }
}

fn from_path(path: &Path) -> Result<SourceSpec, SourceError> {
    if !path.exists() && dataset::is_glob(&path.to_string_lossy()) {
        return from_glob(&path.to_string_lossy());
    }
    let meta = fs::metadata(path).map_err(|e| {
        SourceError(format!(
            "cannot open {}: {} ({HINT})",
            path.display(),
            io_reason(&e)
        ))
    })?;
    if meta.is_dir() {
        if dataset::is_dataset_folder(path) {
            return dataset_folder(path);
        }
        return data_folder(path);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "db" | "sqlite" | "sqlite3" => Ok(SourceSpec::Sqlite(path.to_path_buf())),
        "duckdb" | "ddb" => Ok(SourceSpec::DuckDb(path.to_path_buf())),
        _ => {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some((kind, _)) = dataset::kind_of(name) {
                let file = data_file(path, kind)?;
                let root = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                return Ok(SourceSpec::DataFiles {
                    root,
                    files: vec![file],
                    skipped: Vec::new(),
                });
            }
            sniff(path)
        }
    }
}

/// Files without a known extension: recognise the engines by their headers.
fn sniff(path: &Path) -> Result<SourceSpec, SourceError> {
    let mut header = [0u8; 16];
    let n = fs::File::open(path)
        .and_then(|mut f| f.read(&mut header))
        .map_err(|e| SourceError(format!("cannot open {}: {}", path.display(), io_reason(&e))))?;
    if n >= 16 && &header[..16] == b"SQLite format 3\0" {
        return Ok(SourceSpec::Sqlite(path.to_path_buf()));
    }
    if n >= 12 && &header[8..12] == b"DUCK" {
        return Ok(SourceSpec::DuckDb(path.to_path_buf()));
    }
    Err(SourceError(format!(
        "cannot open {}: not a file type aiq reads ({HINT})",
        path.display()
    )))
}

fn data_file(path: &Path, kind: DataFileKind) -> Result<DataFile, SourceError> {
    let abs = fs::canonicalize(path)
        .map_err(|e| SourceError(format!("cannot open {}: {}", path.display(), io_reason(&e))))?;
    let table = abs
        .file_name()
        .and_then(|s| s.to_str())
        .and_then(dataset::kind_of)
        .map(|(_, stem)| stem.to_string())
        .ok_or_else(|| {
            SourceError(format!(
                "cannot open {}: the file name is not valid UTF-8",
                path.display()
            ))
        })?;
    Ok(DataFile::single(table, abs, kind))
}

/// A glob is one table of the files it matches, named after its last
/// fixed folder (SPEC §4.1).
fn from_glob(pattern: &str) -> Result<SourceSpec, SourceError> {
    let cannot = |why: String| SourceError(format!("cannot open {pattern}: {why}"));
    let root = dataset::glob_root(pattern);
    let real_root = fs::canonicalize(&root).map_err(|e| cannot(io_reason(&e)))?;
    let mut skipped = Vec::new();
    let files = dataset::glob_files(pattern, &real_root, &mut skipped).map_err(cannot)?;
    if files.is_empty() {
        return Err(cannot(
            "no .csv/.tsv/.parquet/.json/.jsonl files match it".into(),
        ));
    }
    let folder = dataset::dataset_root(&real_root);
    let folder = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("data");
    let table = dataset::common_stem(&files, folder);
    let mut file = dataset::dataset(table, real_root.clone(), files).map_err(cannot)?;
    file.glob = true;
    Ok(SourceSpec::DataFiles {
        root: real_root,
        files: vec![file],
        skipped,
    })
}

/// Serves the one table of a glob (or single file) under `name`
/// (`--name`, a saved source's `name =`).
pub fn rename_table(spec: &mut SourceSpec, name: &str) -> Result<(), SourceError> {
    match spec {
        SourceSpec::DataFiles { files, .. } if files.len() == 1 => {
            files[0].table = name.to_string();
            Ok(())
        }
        _ => Err(SourceError(format!(
            "cannot name the table '{name}': a name is for a source of one table (a glob or a data file), not a folder or database"
        ))),
    }
}

/// A folder that is itself one dataset ([`dataset::is_dataset_folder`]):
/// one table named after it (or, for a partition folder, after the
/// dataset it belongs to: `sales/year=2024` is `sales`).
fn dataset_folder(dir: &Path) -> Result<SourceSpec, SourceError> {
    let cannot = |why: String| SourceError(format!("cannot open {}: {why}", dir.display()));
    let real = fs::canonicalize(dir).map_err(|e| cannot(io_reason(&e)))?;
    let mut skipped = Vec::new();
    let files = dataset::walk(&real, &real, &mut skipped);
    let root = dataset::dataset_root(&real);
    let table = root
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("data")
        .to_string();
    let file = dataset::dataset(table, real.clone(), files).map_err(|why| {
        cannot(format!(
            "it is one dataset (partition folders or part files), but {why}"
        ))
    })?;
    Ok(SourceSpec::DataFiles {
        root: real,
        files: vec![file],
        skipped,
    })
}

/// Every data file directly inside `dir` becomes a table named after its
/// stem — only files whose real path lies inside the folder (SPEC §4.2): a
/// link that leads out of it is skipped, and said so.
fn data_folder(dir: &Path) -> Result<SourceSpec, SourceError> {
    let entries = fs::read_dir(dir)
        .map_err(|e| SourceError(format!("cannot open {}: {}", dir.display(), io_reason(&e))))?;
    let real_dir = fs::canonicalize(dir)
        .map_err(|e| SourceError(format!("cannot open {}: {}", dir.display(), io_reason(&e))))?;
    let mut files: Vec<DataFile> = Vec::new();
    let mut skipped = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir()) || (is_link && path.is_dir());
        if is_dir {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if dataset::is_side_name(&name) || is_link {
                continue;
            }
            let real = real_dir.join(&name);
            let parts = dataset::walk(&real, &real_dir, &mut skipped);
            if parts.is_empty() {
                continue;
            }
            match dataset::dataset(name, real, parts) {
                Ok(file) => push_table(&mut files, file, dir)?,
                Err(why) => skipped.push(format!("{}: {why}", path.display())),
            }
            continue;
        }
        // A link is served only when its real path lies inside the folder;
        // a plain file's real path is the folder's own.
        let real = if is_link {
            match fs::canonicalize(&path) {
                Ok(real) if real.starts_with(&real_dir) && real.is_file() => real,
                Ok(real) if real.is_file() => {
                    skipped.push(dataset::link_out(&path));
                    continue;
                }
                _ => continue,
            }
        } else if entry.file_type().is_ok_and(|t| t.is_file()) {
            real_dir.join(entry.file_name())
        } else {
            continue;
        };
        let Some((kind, _)) = path
            .file_name()
            .and_then(|e| e.to_str())
            .filter(|n| !dataset::is_side_name(n))
            .and_then(dataset::kind_of)
        else {
            continue;
        };
        let Some((_, stem)) = real
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(dataset::kind_of)
        else {
            continue;
        };
        let table = stem.to_string();
        push_table(&mut files, DataFile::single(table, real, kind), dir)?;
    }
    if files.is_empty() {
        return Err(SourceError(format!(
            "cannot open {}: the folder holds no .csv/.tsv/.parquet/.json/.jsonl/.ndjson files (compressed .gz/.zst too), directly or in subfolders",
            dir.display()
        )));
    }
    files.sort_by(|a, b| a.table.cmp(&b.table));
    Ok(SourceSpec::DataFiles {
        root: dir.to_path_buf(),
        files,
        skipped,
    })
}

/// Adds a table of a folder, unless another file or dataset has its name.
fn push_table(files: &mut Vec<DataFile>, file: DataFile, dir: &Path) -> Result<(), SourceError> {
    if let Some(other) = files.iter().find(|f| f.table == file.table) {
        return Err(SourceError(format!(
            "cannot open {}: {} and {} would both be table '{}' (rename one of them)",
            dir.display(),
            other.path.display(),
            file.path.display(),
            file.table
        )));
    }
    files.push(file);
    Ok(())
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> SavedSources {
        SavedSources::default()
    }

    #[test]
    fn extensions_pick_engines() {
        let dir = tempfile::tempdir().unwrap();
        for (name, want) in [
            ("a.db", "sqlite"),
            ("b.sqlite3", "sqlite"),
            ("c.duckdb", "duckdb"),
        ] {
            let p = dir.path().join(name);
            fs::write(&p, b"").unwrap();
            let r = resolve(p.to_str().unwrap(), &none()).unwrap();
            let got = match r.spec {
                SourceSpec::Sqlite(_) => "sqlite",
                SourceSpec::DuckDb(_) => "duckdb",
                _ => "other",
            };
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn folder_becomes_tables_by_stem() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("orders.csv"), "a\n1\n").unwrap();
        fs::write(dir.path().join("items.parquet"), "").unwrap();
        fs::write(dir.path().join("notes.txt"), "").unwrap();
        let r = resolve(dir.path().to_str().unwrap(), &none()).unwrap();
        let SourceSpec::DataFiles { files, .. } = r.spec else {
            panic!("not data files")
        };
        let names: Vec<_> = files.iter().map(|f| f.table.as_str()).collect();
        assert_eq!(names, ["items", "orders"]);
        assert_eq!(files[0].kind, DataFileKind::Parquet);
    }

    #[test]
    fn duplicate_stems_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("t.csv"), "a\n").unwrap();
        fs::write(dir.path().join("t.json"), "[]").unwrap();
        let e = resolve(dir.path().to_str().unwrap(), &none()).unwrap_err();
        assert!(e.0.contains("would both be table 't'"), "{e}");
    }

    #[test]
    fn unknown_name_lists_saved_sources() {
        let e = resolve("nosuch", &none()).unwrap_err();
        assert!(e.0.starts_with("unknown source 'nosuch'"), "{e}");
        assert!(e.0.contains("no sources are saved yet"), "{e}");
    }

    #[test]
    fn missing_path_says_so() {
        let e = resolve("./missing.db", &none()).unwrap_err();
        assert!(
            e.0.contains("cannot open ./missing.db: no such file or folder"),
            "{e}"
        );
    }

    #[test]
    fn urls() {
        assert_eq!(
            resolve("duckdb://:memory:", &none()).unwrap().spec,
            SourceSpec::DuckDbMemory
        );
        let r = resolve("postgres://u:secret@h/db", &none()).unwrap();
        let SourceSpec::Server(server) = &r.spec else {
            panic!("not a server: {:?}", r.spec)
        };
        assert_eq!(server.protocol, ServerProtocol::Postgres);
        assert!(!format!("{:?}", r.spec).contains("secret"));
        let r = resolve("mariadb://u@h/db", &none()).unwrap();
        let SourceSpec::Server(server) = &r.spec else {
            panic!("not a server")
        };
        assert_eq!(
            (server.protocol, server.url.as_str()),
            (ServerProtocol::MySql, "mysql://u@h/db")
        );
        let e = resolve("postgres://", &none()).unwrap_err();
        assert!(e.0.contains("names no server"), "{e}");
        let e = resolve("ftp://x", &none()).unwrap_err();
        assert!(e.0.contains("unknown URL scheme 'ftp://'"), "{e}");
    }

    #[test]
    fn redaction() {
        assert_eq!(redact_url("mysql://a:b@h:3306/x"), "mysql://a:***@h:3306/x");
        assert_eq!(redact_url("postgres://a@h/x"), "postgres://a@h/x");
        assert_eq!(redact_url("sqlite:///tmp/a.db"), "sqlite:///tmp/a.db");
        assert_eq!(strip_password("mysql://a:b@h:3306/x"), "mysql://a@h:3306/x");
        assert_eq!(
            strip_password("postgres://h/x?sslmode=require&password=pw"),
            "postgres://h/x?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://h/x?password=pw&sslmode=require"),
            "postgres://h/x?password=***&sslmode=require"
        );
        assert_eq!(
            strip_password("postgres://a:p%40ss@h?x=1"),
            "postgres://a@h?x=1"
        );
    }
}
