//! Which files a program may touch: `aiq.read_file` and `aiq.write_file`
//! take a relative path inside the working directory. Absolute paths and
//! `..` are refused as written; what is left is resolved (symbolic links
//! included) and must still lie inside the directory, so no link leads out.
//! Some files are never a program's, wherever they lie ([`Kept`]): the
//! source's own (read through `aiq.query`, where the privacy rules hold),
//! aiq's home, and files that hold secrets by their names (SPEC §4.3).

use std::fs;
use std::path::{Component, Path, PathBuf};

/// Files a program may never read or write.
#[derive(Debug, Default)]
pub struct Kept {
    /// The source's own files, resolved: each, and any file whose name
    /// starts with its name beside it (`crm.db-wal`, `shop.duckdb.wal`).
    files: Vec<PathBuf>,
    /// aiq's home, resolved.
    home: Option<PathBuf>,
}

/// Names of files that hold keys.
const KEY_NAMES: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials"];
const KEY_SUFFIXES: &[&str] = &[".pem", ".key", ".p12", ".pfx", ".kdbx", ".keystore"];

impl Kept {
    /// The source's files and aiq's home, as far as they resolve.
    pub fn new(files: Vec<PathBuf>, home: Option<PathBuf>) -> Kept {
        let resolve = |p: PathBuf| fs::canonicalize(&p).unwrap_or(p);
        Kept {
            files: files.into_iter().map(resolve).collect(),
            home: home.map(resolve),
        }
    }

    /// Why `full` (resolved; `path` as the program gave it) is not a
    /// program's, if it is not.
    fn refuses(&self, path: &str, full: &Path) -> Option<String> {
        let own = self.files.iter().any(|f| {
            full.starts_with(f)
                || (full.parent() == f.parent()
                    && full.file_name().zip(f.file_name()).is_some_and(|(a, b)| {
                        a.as_encoded_bytes().starts_with(b.as_encoded_bytes())
                    }))
        });
        if own {
            return Some(format!(
                "refused: {path} is this source's own data, or a file beside it named like it; a program reads the source with aiq.query, where its privacy rules hold"
            ));
        }
        if self.home.as_ref().is_some_and(|h| full.starts_with(h)) {
            return Some(format!(
                "refused: {path} is in aiq's home (its config, sessions and logs), which a program may not touch"
            ));
        }
        let hidden = Path::new(path)
            .components()
            .chain(full.file_name().map(Component::Normal))
            .any(|c| matches!(c, Component::Normal(n) if n.as_encoded_bytes().starts_with(b".")));
        let name = full
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let key = KEY_NAMES.iter().any(|k| name.starts_with(k))
            || KEY_SUFFIXES.iter().any(|s| name.ends_with(s));
        (hidden || key).then(|| {
            format!(
                "refused: {path} may hold a secret (a hidden file or a key); a program may touch only plain data files"
            )
        })
    }
}

/// Why a file's `bytes` are not a program's, if they are not: an aiq
/// session file, wherever it lies (`/save FILE`, `-s FILE`), keeps results
/// and errors the privacy rules may withhold from a model (SPEC §4.3).
pub fn refuses_content(path: &str, bytes: &[u8]) -> Option<String> {
    let head = bytes.iter().position(|b| !b.is_ascii_whitespace());
    if head.is_none_or(|i| bytes[i] != b'{') {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let session = value.get("version").is_some()
        && value
            .get("metadata")
            .is_some_and(serde_json::Value::is_object)
        && value
            .get("messages")
            .is_some_and(serde_json::Value::is_array);
    session.then(|| {
        format!(
            "refused: {path} is an aiq session file, which keeps results the privacy rules may withhold from a model; a program may not touch it"
        )
    })
}

/// The file `path` names, if a program may read it.
pub fn readable(workdir: &Path, path: &str, kept: &Kept) -> Result<PathBuf, String> {
    let root = root(workdir)?;
    lexically_inside(path)?;
    let full = fs::canonicalize(root.join(path)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("no such file: {path}"),
        _ => format!("cannot open {path}: {e}"),
    })?;
    if !full.starts_with(&root) {
        return Err(format!(
            "refused: {path} leads outside the working directory (through a symbolic link)"
        ));
    }
    if !full.is_file() {
        return Err(format!("{path} is not a file"));
    }
    match kept.refuses(path, &full) {
        Some(why) => Err(why),
        None => Ok(full),
    }
}

/// Where `path` would be written, if a program may write it: its folder
/// exists inside the working directory, and it is not a link or a folder.
pub fn writable(workdir: &Path, path: &str, kept: &Kept) -> Result<PathBuf, String> {
    let root = root(workdir)?;
    lexically_inside(path)?;
    let target = root.join(path);
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(format!("{path} names no file"));
    };
    let parent = fs::canonicalize(parent)
        .map_err(|_| format!("the folder of {path} does not exist (create it first)"))?;
    if !parent.starts_with(&root) {
        return Err(format!(
            "refused: {path} leads outside the working directory (through a symbolic link)"
        ));
    }
    let full = parent.join(name);
    if let Some(why) = kept.refuses(path, &full) {
        return Err(why);
    }
    match fs::symlink_metadata(&full) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "refused: {path} is a symbolic link; aiq writes only plain files"
        )),
        Ok(m) if m.is_dir() => Err(format!("{path} is a folder")),
        _ => Ok(full),
    }
}

fn root(workdir: &Path) -> Result<PathBuf, String> {
    fs::canonicalize(workdir).map_err(|e| {
        format!(
            "cannot use the working directory {}: {e}",
            workdir.display()
        )
    })
}

/// Refuses absolute paths and `..` before anything touches the disk.
fn lexically_inside(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    for c in Path::new(path).components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "refused: {path} uses `..`; only files inside the working directory can be used"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "refused: {path} is an absolute path; give a path relative to the working directory"
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_inside_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        fs::create_dir_all(work.join("sub")).unwrap();
        fs::write(work.join("sub/a.txt"), "a").unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        assert!(readable(&work, "sub/a.txt", &Kept::default())
            .unwrap()
            .ends_with("sub/a.txt"));
        assert!(readable(&work, "./sub/a.txt", &Kept::default()).is_ok());
        let e = readable(&work, "../secret.txt", &Kept::default()).unwrap_err();
        assert!(e.contains("uses `..`"), "{e}");
        let e = readable(&work, "sub/../../secret.txt", &Kept::default()).unwrap_err();
        assert!(e.contains("uses `..`"), "{e}");
        let abs = dir.path().join("secret.txt");
        let e = readable(&work, abs.to_str().unwrap(), &Kept::default()).unwrap_err();
        assert!(e.contains("absolute path"), "{e}");
        assert!(readable(&work, "nope.txt", &Kept::default())
            .unwrap_err()
            .contains("no such file"));
        assert!(readable(&work, "sub", &Kept::default())
            .unwrap_err()
            .contains("not a file"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), work.join("link")).unwrap();
            std::os::unix::fs::symlink(dir.path(), work.join("up")).unwrap();
            let e = readable(&work, "link", &Kept::default()).unwrap_err();
            assert!(e.contains("outside the working directory"), "{e}");
            let e = readable(&work, "up/secret.txt", &Kept::default()).unwrap_err();
            assert!(e.contains("outside the working directory"), "{e}");
        }
    }

    #[test]
    fn writes_need_a_plain_target_inside() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        fs::create_dir_all(&work).unwrap();
        assert_eq!(
            writable(&work, "out.csv", &Kept::default()).unwrap(),
            work.canonicalize().unwrap().join("out.csv")
        );
        assert!(writable(&work, "../out.csv", &Kept::default()).is_err());
        assert!(writable(&work, "/tmp/out.csv", &Kept::default()).is_err());
        assert!(writable(&work, "no/dir/out.csv", &Kept::default())
            .unwrap_err()
            .contains("does not exist"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("victim"), work.join("link")).unwrap();
            assert!(writable(&work, "link", &Kept::default())
                .unwrap_err()
                .contains("symbolic link"));
            std::os::unix::fs::symlink(dir.path(), work.join("up")).unwrap();
            assert!(writable(&work, "up/x", &Kept::default())
                .unwrap_err()
                .contains("outside"));
        }
    }

    #[test]
    fn a_session_file_is_never_a_programs() {
        let session = br#"{"version": 1, "metadata": {"data_source": "crm"}, "messages": []}"#;
        assert!(refuses_content("s.json", session).is_some());
        assert!(refuses_content("s.json", b"  \n{\"a\": 1}").is_none());
        assert!(refuses_content("d.csv", b"a,b\n1,2\n").is_none());
        assert!(refuses_content("x.json", b"[1, 2]").is_none());
    }

    #[test]
    fn the_source_its_journals_the_home_and_secrets_are_never_a_programs() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let home = work.join("home");
        fs::create_dir_all(home.join("sessions")).unwrap();
        fs::create_dir_all(work.join(".ssh")).unwrap();
        for f in [
            "crm.db",
            "crm.db-wal",
            "crm.db-journal",
            "crm.dbx",
            "home/config.toml",
            "home/sessions/a.json",
            ".env",
            ".ssh/id_rsa",
            "server.pem",
            "id_ed25519.pub",
            "data.csv",
            "crm.csv",
        ] {
            fs::write(work.join(f), "x").unwrap();
        }
        let kept = Kept::new(vec![work.join("crm.db")], Some(home.clone()));
        for (path, why) in [
            ("crm.db", "source's own data"),
            ("./crm.db", "source's own data"),
            ("crm.db-wal", "source's own data"),
            ("crm.db-journal", "source's own data"),
            ("home/config.toml", "aiq's home"),
            ("home/sessions/a.json", "aiq's home"),
            (".env", "may hold a secret"),
            (".ssh/id_rsa", "may hold a secret"),
            ("server.pem", "may hold a secret"),
            ("id_ed25519.pub", "may hold a secret"),
        ] {
            let e = readable(&work, path, &kept).unwrap_err();
            assert!(e.starts_with("refused: ") && e.contains(why), "{path}: {e}");
            let e = writable(&work, path, &kept).unwrap_err();
            assert!(e.contains(why), "{path}: {e}");
        }
        // Other files, a name that only begins like the database's
        // included when in another folder, stay readable.
        for path in ["data.csv", "crm.csv"] {
            assert!(readable(&work, path, &kept).is_ok(), "{path}");
        }
        #[cfg(unix)]
        {
            // A link to the source inside the folder leads to it all the same.
            std::os::unix::fs::symlink(work.join("crm.db"), work.join("copy.bin")).unwrap();
            let e = readable(&work, "copy.bin", &kept).unwrap_err();
            assert!(e.contains("source's own data"), "{e}");
        }
    }
}
