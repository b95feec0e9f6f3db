//! The one writer into the output folder. A site is written into a hidden
//! sibling folder as it is rendered and swapped in by renames, so a failed
//! build leaves the previous site as it was.

use std::fs;
use std::path::Path;

use anyhow::{Context, bail};

use crate::app::site::SiteSink;

/// Marks a folder as sitegen output; only such a folder is ever replaced.
pub(crate) const MARKER: &str = ".sitegen";

/// Writes a site into a hidden staging folder beside `out`, file by file as
/// they are rendered; [`SiteWriter::finish`] swaps it in. Dropped unfinished
/// (a failed build), the staging folder is removed and `out` is untouched.
pub(crate) struct SiteWriter {
    staging: tempfile::TempDir,
    out: std::path::PathBuf,
}

impl SiteWriter {
    /// Checks that `out` may be replaced and makes the staging folder,
    /// before anything is rendered.
    pub(crate) fn new(out: &Path) -> anyhow::Result<SiteWriter> {
        if out.exists() && !out.join(MARKER).exists() {
            let empty = fs::read_dir(out)
                .with_context(|| format!("{}: cannot read the output folder", out.display()))?
                .next()
                .is_none();
            if !empty {
                bail!(
                    "{}: not replacing a non-empty folder that sitegen did not write (no {MARKER} file); choose another --out",
                    out.display()
                );
            }
        }
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create the folder", parent.display()))?;
        let staging = tempfile::Builder::new()
            .prefix(".sitegen-build-")
            .tempdir_in(parent)
            .with_context(|| format!("{}: cannot create a temporary folder", parent.display()))?;
        Ok(SiteWriter {
            staging,
            out: out.to_path_buf(),
        })
    }

    /// Puts the staged site in place of `out`.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        fs::write(
            self.staging.path().join(MARKER),
            "This folder is written by `sitegen build` and replaced by every build.\n",
        )
        .context("writing the output marker")?;
        let staged = self.staging.keep();
        crate::store::atomic::replace_dir(&staged, &self.out).map_err(|e| {
            let _ = fs::remove_dir_all(&staged);
            anyhow::anyhow!(
                "{}: cannot put the new site in place: {e}",
                self.out.display()
            )
        })?;
        Ok(())
    }
}

impl SiteSink for SiteWriter {
    fn put(&mut self, rel: String, bytes: Vec<u8>) -> anyhow::Result<()> {
        let path = self.staging.path().join(&rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        }
        fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))
    }
}
