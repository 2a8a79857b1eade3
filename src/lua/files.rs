//! Which files a program may touch: `aiq.read_file` and `aiq.write_file`
//! take a relative path inside the working directory. Absolute paths and
//! `..` are refused as written; what is left is resolved (symbolic links
//! included) and must still lie inside the directory, so no link leads out.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// The file `path` names, if a program may read it.
pub fn readable(workdir: &Path, path: &str) -> Result<PathBuf, String> {
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
    Ok(full)
}

/// Where `path` would be written, if a program may write it: its folder
/// exists inside the working directory, and it is not a link or a folder.
pub fn writable(workdir: &Path, path: &str) -> Result<PathBuf, String> {
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
        assert!(readable(&work, "sub/a.txt").unwrap().ends_with("sub/a.txt"));
        assert!(readable(&work, "./sub/a.txt").is_ok());
        let e = readable(&work, "../secret.txt").unwrap_err();
        assert!(e.contains("uses `..`"), "{e}");
        let e = readable(&work, "sub/../../secret.txt").unwrap_err();
        assert!(e.contains("uses `..`"), "{e}");
        let abs = dir.path().join("secret.txt");
        let e = readable(&work, abs.to_str().unwrap()).unwrap_err();
        assert!(e.contains("absolute path"), "{e}");
        assert!(readable(&work, "nope.txt")
            .unwrap_err()
            .contains("no such file"));
        assert!(readable(&work, "sub").unwrap_err().contains("not a file"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), work.join("link")).unwrap();
            std::os::unix::fs::symlink(dir.path(), work.join("up")).unwrap();
            let e = readable(&work, "link").unwrap_err();
            assert!(e.contains("outside the working directory"), "{e}");
            let e = readable(&work, "up/secret.txt").unwrap_err();
            assert!(e.contains("outside the working directory"), "{e}");
        }
    }

    #[test]
    fn writes_need_a_plain_target_inside() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        fs::create_dir_all(&work).unwrap();
        assert_eq!(
            writable(&work, "out.csv").unwrap(),
            work.canonicalize().unwrap().join("out.csv")
        );
        assert!(writable(&work, "../out.csv").is_err());
        assert!(writable(&work, "/tmp/out.csv").is_err());
        assert!(writable(&work, "no/dir/out.csv")
            .unwrap_err()
            .contains("does not exist"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("victim"), work.join("link")).unwrap();
            assert!(writable(&work, "link")
                .unwrap_err()
                .contains("symbolic link"));
            std::os::unix::fs::symlink(dir.path(), work.join("up")).unwrap();
            assert!(writable(&work, "up/x").unwrap_err().contains("outside"));
        }
    }
}
