//! Data files as data tools write them (SPEC §4.1, "Data files are
//! datasets"): a subfolder of part files is one table, `key=value/` folders
//! are partition columns, side files (`_SUCCESS`, `.crc`, names starting
//! with `.` or `_`) are ignored, compressed files count by their inner
//! extension, and a glob names the files of one table.
//!
//! Pure apart from reading folders; only files whose real path lies inside
//! the dataset's folder are ever listed (a link out is skipped and said).

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::source::spec::{DataFile, DataFileKind, Partition};

/// The compression suffixes DuckDB reads on its own (by the file name).
const COMPRESSED: &[&str] = &["gz", "gzip", "zst", "zstd"];

/// The format of a data file by its name, and the table name it gives
/// (`orders.csv.gz` → CSV, `orders`); `None` for other files.
pub fn kind_of(name: &str) -> Option<(DataFileKind, &str)> {
    let (rest, ext) = name.rsplit_once('.')?;
    if let Some(kind) = DataFileKind::from_extension(ext) {
        return Some((kind, rest)).filter(|(_, stem)| !stem.is_empty());
    }
    if !COMPRESSED.contains(&ext.to_ascii_lowercase().as_str()) {
        return None;
    }
    let (stem, inner) = rest.rsplit_once('.')?;
    let kind = DataFileKind::from_extension(inner)?;
    // Parquet compresses inside the file; a compressed one is not read.
    (kind != DataFileKind::Parquet && !stem.is_empty()).then_some((kind, stem))
}

/// A name that data tools write beside the data: `_SUCCESS`,
/// `_committed_*`, `.part-0.crc`, `_temporary/`, dot-files.
pub fn is_side_name(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_') || name.ends_with(".crc")
}

/// A data file a listing found, with its stamp ([`crate::source::file_stamp`])
/// when it was read then.
#[derive(Debug)]
pub struct Found {
    pub path: PathBuf,
    pub kind: DataFileKind,
    pub stamp: Option<String>,
}

/// The files of one dataset: every data file under `dir` (any depth), in
/// path order, skipping side files and folders and links that lead out of
/// `real_root`; each with its size and time, read while its folder is open
/// (no second look-up of the path). `skipped` gets one line per link out.
///
/// The folders of one depth are listed by several threads: a partitioned
/// dataset is mostly folders (10,000 files may sit in as many), and
/// listing them is most of a warm start.
pub fn walk(dir: &Path, real_root: &Path, skipped: &mut Vec<String>) -> Vec<Found> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let mut out = Vec::new();
    let mut links_out = Vec::new();
    let mut level = vec![dir.to_path_buf()];
    while !level.is_empty() {
        // Below this many folders a thread costs more than it saves.
        let listed = if threads == 1 || level.len() < 64 {
            vec![list(&level, real_root)]
        } else {
            let chunk = level.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let workers: Vec<_> = level
                    .chunks(chunk)
                    .map(|folders| scope.spawn(move || list(folders, real_root)))
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        level = Vec::new();
        for one in listed {
            level.extend(one.folders);
            out.extend(one.files);
            links_out.extend(one.links_out);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    links_out.sort();
    skipped.extend(links_out);
    out
}

/// What listing some folders found.
#[derive(Default)]
struct Listed {
    folders: Vec<PathBuf>,
    files: Vec<Found>,
    links_out: Vec<String>,
}

/// Lists `folders` (not below them): their data files, their subfolders,
/// and the links in them that lead out of `real_root`.
fn list(folders: &[PathBuf], real_root: &Path) -> Listed {
    let mut found = Listed::default();
    for folder in folders {
        let Ok(entries) = fs::read_dir(folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            if is_side_name(name) {
                continue;
            }
            let path = entry.path();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let meta = if file_type.is_symlink() {
                match fs::canonicalize(&path) {
                    Ok(real) if real.starts_with(real_root) => {
                        // A link to a folder is not followed (no loops).
                        if real.is_dir() {
                            continue;
                        }
                        fs::metadata(&path)
                    }
                    Ok(_) => {
                        found.links_out.push(link_out(&path));
                        continue;
                    }
                    Err(_) => continue,
                }
            } else if file_type.is_dir() {
                found.folders.push(path);
                continue;
            } else {
                entry.metadata()
            };
            if let Some((kind, _)) = kind_of(name) {
                let stamp = Some(crate::source::stamp(&path, meta.ok().as_ref()));
                found.files.push(Found { path, kind, stamp });
            }
        }
    }
    found
}

/// Why a link that leads out of the folder is skipped (its target is not
/// named: it may be a secret).
pub fn link_out(path: &Path) -> String {
    format!(
        "{}: it links to a file outside the folder (aiq serves only the folder's own files)",
        path.display()
    )
}

/// A dataset table named `table` of the files under `dir` (already listed
/// by [`walk`]): one format, partitions from `key=value` folders. `Err`
/// says why the files cannot make one table.
pub fn dataset(table: String, dir: PathBuf, files: Vec<Found>) -> Result<DataFile, String> {
    let Some(kind) = files.first().map(|f| f.kind) else {
        return Err("it holds no .csv/.tsv/.parquet/.json/.jsonl files".into());
    };
    let mut kinds: Vec<DataFileKind> = files.iter().map(|f| f.kind).collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    if kinds.len() > 1 {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        return Err(format!(
            "it holds files of several formats ({}), which do not read as one table",
            names.join(", ")
        ));
    }
    let stamps: Vec<String> = files.iter().map_while(|f| f.stamp.clone()).collect();
    let stamps = if stamps.len() == files.len() {
        stamps
    } else {
        Vec::new()
    };
    let parts: Vec<PathBuf> = files.into_iter().map(|f| f.path).collect();
    // A partition folder given itself (`sales/year=2024`) keeps its own
    // key as a column, as the dataset it belongs to has it.
    let partitions = partitions(&dataset_root(&dir), &parts)?;
    Ok(DataFile {
        table,
        path: dir,
        kind,
        parts,
        partitions,
        stamps,
        glob: false,
    })
}

/// The `key=value` folders between `root` and each file: the same keys in
/// the same order for every file, or an error naming the first that differs.
fn partitions(root: &Path, parts: &[PathBuf]) -> Result<Vec<Partition>, String> {
    let mut keys: Option<Vec<String>> = None;
    let mut values: Vec<Vec<String>> = Vec::new();
    for part in parts {
        let rel = part.strip_prefix(root).unwrap_or(part);
        let pairs = partition_pairs(root, part);
        let these: Vec<String> = pairs.iter().map(|(k, _)| k.clone()).collect();
        match &keys {
            None => {
                values = vec![Vec::new(); these.len()];
                keys = Some(these);
            }
            Some(k) if *k != these => {
                return Err(format!(
                    "its partition folders differ ({} has {}, others {})",
                    rel.display(),
                    shown_keys(&these),
                    shown_keys(k)
                ))
            }
            Some(_) => {}
        }
        for (i, (_, v)) in pairs.into_iter().enumerate() {
            values[i].push(v);
        }
    }
    Ok(keys
        .unwrap_or_default()
        .into_iter()
        .zip(values)
        .map(|(key, each)| {
            let mut values = each.clone();
            values.sort_by(|a, b| match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(x), Ok(y)) => x.total_cmp(&y),
                _ => a.cmp(b),
            });
            values.dedup();
            Partition { key, values, each }
        })
        .collect())
}

/// The `key=value` folders between `root` and the file `part`, outermost
/// first.
fn partition_pairs(root: &Path, part: &Path) -> Vec<(String, String)> {
    let rel = part.strip_prefix(root).unwrap_or(part);
    rel.parent()
        .into_iter()
        .flat_map(Path::components)
        .filter_map(|c| match c {
            Component::Normal(s) => s
                .to_str()?
                .split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string())),
            _ => None,
        })
        .collect()
}

fn shown_keys(keys: &[String]) -> String {
    if keys.is_empty() {
        "no partition folders".into()
    } else {
        keys.join("/")
    }
}

/// `dir`, or its first ancestor whose name is no `key=value` partition.
pub fn dataset_root(dir: &Path) -> PathBuf {
    let mut root = dir;
    while root
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains('=') && !is_side_name(n))
    {
        match root.parent() {
            Some(parent) => root = parent,
            None => break,
        }
    }
    root.to_path_buf()
}

/// Whether a folder given as the source is itself one dataset, as Spark,
/// DuckDB's `hive_partitioning`, pyarrow and Polars read one: it is a
/// partition (`year=2024`), holds partition folders (`year=2024/`), or
/// holds what a writer leaves beside its part files (`_SUCCESS`,
/// `part-00000-….parquet`).
pub fn is_dataset_folder(dir: &Path) -> bool {
    let partition = |name: &str| name.contains('=') && !is_side_name(name);
    if dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(partition)
    {
        return true;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        (is_dir && partition(&name))
            || (!is_dir
                && (name == "_SUCCESS" || (name.starts_with("part-") && kind_of(&name).is_some())))
    })
}

/// The table of a glob's files: the stem the files of one folder share
/// (`orders_2021.csv.gz`, `orders_2022.csv.gz` → `orders`), else
/// `fallback` (their folder's name) — also when the files lie in several
/// folders or share only a writer's name for a part (`data_0`, `part-…`).
pub fn common_stem(files: &[Found], fallback: &str) -> String {
    let one_folder = files
        .windows(2)
        .all(|w| w[0].path.parent() == w[1].path.parent());
    let stems: Vec<&str> = files
        .iter()
        .filter_map(|f| f.path.file_name()?.to_str())
        .filter_map(|n| kind_of(n).map(|(_, stem)| stem))
        .collect();
    let Some(first) = stems.first().filter(|_| one_folder) else {
        return fallback.to_string();
    };
    let mut shared = first.len();
    for stem in &stems[1..] {
        let same = first
            .char_indices()
            .zip(stem.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, c), _)| i + c.len_utf8());
        shared = shared.min(same);
    }
    let name = first[..shared].trim_end_matches(|c: char| !c.is_alphabetic());
    let generic = ["data", "part", "file", "export", "output", "chunk"];
    if name.is_empty() || generic.contains(&name.to_lowercase().as_str()) {
        fallback.to_string()
    } else {
        name.to_string()
    }
}

/// Whether a SOURCE argument is a glob rather than a path.
pub fn is_glob(arg: &str) -> bool {
    arg.contains(['*', '?', '['])
}

/// The folder a glob starts from: its leading components without glob
/// characters (`sales/**/*.parquet` → `sales`; `*.csv` → `.`).
pub fn glob_root(pattern: &str) -> PathBuf {
    let mut root = PathBuf::new();
    for c in Path::new(pattern).components() {
        match c {
            Component::Normal(s) if s.to_str().is_some_and(is_glob) => break,
            other => root.push(other),
        }
    }
    if root.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        root
    }
}

/// The files a glob matches, inside its root: data files only, no side
/// files or folders below the root, no links out.
pub fn glob_files(
    pattern: &str,
    real_root: &Path,
    skipped: &mut Vec<String>,
) -> Result<Vec<Found>, String> {
    let root = glob_root(pattern);
    let paths = glob::glob(pattern).map_err(|e| format!("not a valid glob: {e}"))?;
    let mut out = Vec::new();
    for path in paths.flatten() {
        let rel = path.strip_prefix(&root).unwrap_or(&path);
        let side = rel
            .components()
            .any(|c| matches!(c, Component::Normal(s) if s.to_str().is_none_or(is_side_name)));
        if side {
            continue;
        }
        let Some(meta) = fs::metadata(&path).ok().filter(|m| m.is_file()) else {
            continue;
        };
        let Some((kind, _)) = path.file_name().and_then(|n| n.to_str()).and_then(kind_of) else {
            continue;
        };
        match fs::canonicalize(&path) {
            Ok(real) if real.starts_with(real_root) => {
                let path = real_root.join(rel);
                let stamp = Some(crate::source::stamp(&path, Some(&meta)));
                out.push(Found { path, kind, stamp });
            }
            Ok(_) => skipped.push(link_out(&path)),
            Err(_) => {}
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// What the model is told of a dataset's partitions: `year (2020–2023),
/// region (eu, us)`, for the table's comment.
pub fn describe_partitions(file: &DataFile) -> Option<String> {
    if file.partitions.is_empty() {
        return None;
    }
    let keys: Vec<String> = file
        .partitions
        .iter()
        .map(|p| format!("{} ({})", p.key, shown_values(&p.values)))
        .collect();
    let n = file.parts.len();
    Some(format!(
        "a dataset of {n} {} partitioned by {}: filter on these columns to read fewer files",
        if n == 1 { "file" } else { "files" },
        keys.join(", ")
    ))
}

fn shown_values(values: &[String]) -> String {
    let numeric = values.iter().all(|v| v.parse::<f64>().is_ok());
    match values {
        [] => String::new(),
        [one] => one.clone(),
        [first, .., last] if numeric && values.len() > 2 => format!("{first}–{last}"),
        _ if values.len() <= 8 => values.join(", "),
        _ => format!("{}, … {} values", values[..6].join(", "), values.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_files_count_by_their_inner_extension() {
        assert_eq!(
            kind_of("orders.csv.gz"),
            Some((DataFileKind::Csv, "orders"))
        );
        assert_eq!(
            kind_of("log.jsonl.gz"),
            Some((DataFileKind::JsonLines, "log"))
        );
        assert_eq!(kind_of("a.tsv.zst"), Some((DataFileKind::Tsv, "a")));
        assert_eq!(kind_of("a.json.gz"), Some((DataFileKind::Json, "a")));
        assert_eq!(
            kind_of("part-0.snappy.parquet"),
            Some((DataFileKind::Parquet, "part-0.snappy"))
        );
        assert_eq!(kind_of("a.parquet.gz"), None);
        assert_eq!(kind_of("notes.txt.gz"), None);
        assert_eq!(kind_of("README"), None);
        assert_eq!(kind_of(".csv"), None);
    }

    #[test]
    fn side_files_are_recognised() {
        for side in [
            "_SUCCESS",
            "_committed_123",
            ".part-0.parquet.crc",
            "part-0.crc",
            "_temporary",
            ".hidden.csv",
        ] {
            assert!(is_side_name(side), "{side}");
        }
        assert!(!is_side_name("year=2020"));
        assert!(!is_side_name("part-00000.parquet"));
    }

    #[test]
    fn glob_roots() {
        assert_eq!(glob_root("sales/**/*.parquet"), PathBuf::from("sales"));
        assert_eq!(
            glob_root("/data/logs/2024-*.csv"),
            PathBuf::from("/data/logs")
        );
        assert_eq!(glob_root("*.csv"), PathBuf::from("."));
        assert!(is_glob("a/*.csv") && !is_glob("a/b.csv"));
    }

    fn found(path: PathBuf, kind: DataFileKind) -> Found {
        Found {
            path,
            kind,
            stamp: None,
        }
    }

    #[test]
    fn partitions_come_from_key_value_folders() {
        let root = PathBuf::from("/d/sales");
        let files = [
            "year=2021/region=eu/a.parquet",
            "year=2020/region=us/b.parquet",
            "year=2022/region=eu/c.parquet",
        ]
        .iter()
        .map(|f| found(root.join(f), DataFileKind::Parquet))
        .collect();
        let ds = dataset("sales".into(), root.clone(), files).unwrap();
        assert_eq!(ds.partitions[0].key, "year");
        assert_eq!(ds.partitions[0].values, ["2020", "2021", "2022"]);
        assert_eq!(ds.partitions[1].values, ["eu", "us"]);
        assert_eq!(
            describe_partitions(&ds).unwrap(),
            "a dataset of 3 files partitioned by year (2020–2022), region (eu, us): filter on these columns to read fewer files"
        );
        let odd = vec![
            found(root.join("year=2020/a.parquet"), DataFileKind::Parquet),
            found(root.join("b.parquet"), DataFileKind::Parquet),
        ];
        let e = dataset("sales".into(), root.clone(), odd).unwrap_err();
        assert!(e.contains("partition folders differ"), "{e}");
        let mixed = vec![
            found(root.join("a.parquet"), DataFileKind::Parquet),
            found(root.join("b.csv"), DataFileKind::Csv),
        ];
        let e = dataset("sales".into(), root, mixed).unwrap_err();
        assert_eq!(
            e,
            "it holds files of several formats (csv, parquet), which do not read as one table"
        );
    }
}
