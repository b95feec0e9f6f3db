//! Writes that a reader never sees half done: a file through a temporary
//! file and a rename, a folder through a staged folder and two renames.
//! Used by `store` (data/) and `output` (site/).

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `contents` to `path` through a temporary file in the same folder,
/// so a reader sees the old file or the new one, never half of one.
pub(crate) fn write_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    staged(path, contents)?.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `path` with `contents` through a temporary file, failing with
/// `AlreadyExists` when `path` is there: never replaces a file.
pub(crate) fn create_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    staged(path, contents)?
        .persist_noclobber(path)
        .map_err(|e| e.error)?;
    Ok(())
}

/// `contents` on disk in a temporary file beside `path`, ready to be renamed.
fn staged(path: &Path, contents: &[u8]) -> io::Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Moves the folder `new` to `target`, replacing any existing `target` with
/// as short a gap as two renames allow. On failure the old folder is put back.
pub(crate) fn replace_dir(new: &Path, target: &Path) -> io::Result<()> {
    if !target.exists() {
        return fs::rename(new, target);
    }
    let parent = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old = tempfile::Builder::new()
        .prefix(&format!(".old-{name}-"))
        .tempdir_in(parent)?
        .keep();
    // `old` exists as an empty folder; rename needs it gone on some systems.
    fs::remove_dir(&old)?;
    fs::rename(target, &old)?;
    if let Err(e) = fs::rename(new, target) {
        let _ = fs::rename(&old, target);
        return Err(e);
    }
    fs::remove_dir_all(&old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_replaced_whole_and_nothing_is_left_beside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("site");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("old.html"), "old").unwrap();
        let new = tmp.path().join("staged");
        fs::create_dir(&new).unwrap();
        fs::write(new.join("new.html"), "new").unwrap();
        replace_dir(&new, &target).unwrap();
        assert!(target.join("new.html").exists() && !target.join("old.html").exists());
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["site"]);
        write_file(&target.join("a/b.txt"), b"x").unwrap();
        assert_eq!(fs::read(target.join("a/b.txt")).unwrap(), b"x");
    }
}
