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
    /// Taken by [`SiteWriter::finish`].
    staging: Option<tempfile::TempDir>,
    out: std::path::PathBuf,
    /// Files go to a thread of their own: creating a file costs the kernel
    /// about as much as rendering it costs us, so the two overlap.
    files: Option<std::sync::mpsc::SyncSender<(String, Vec<u8>)>>,
    writer: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

/// Files rendered but not yet written, at most: enough to keep the writer
/// busy, few enough that memory stays flat.
const QUEUED_FILES: usize = 64;

/// The writer thread: each file under `root`, its folders made once.
fn write_files(
    root: std::path::PathBuf,
    files: std::sync::mpsc::Receiver<(String, Vec<u8>)>,
) -> anyhow::Result<()> {
    let mut made = std::collections::HashSet::new();
    for (rel, bytes) in files {
        let path = root.join(&rel);
        if let Some(dir) = path.parent()
            && !made.contains(dir)
        {
            fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
            made.insert(dir.to_path_buf());
        }
        fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
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
        let (files, queue) = std::sync::mpsc::sync_channel(QUEUED_FILES);
        let root = staging.path().to_path_buf();
        let staging = Some(staging);
        let writer = std::thread::Builder::new()
            .name("site writer".into())
            .spawn(move || write_files(root, queue))
            .context("starting the thread that writes the site")?;
        Ok(SiteWriter {
            staging,
            out: out.to_path_buf(),
            files: Some(files),
            writer: Some(writer),
        })
    }

    /// Waits for the writer thread to write what it was given, and returns
    /// its error if it met one.
    fn drain(&mut self) -> anyhow::Result<()> {
        drop(self.files.take());
        match self.writer.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => bail!("the thread writing the site panicked"),
            None => Ok(()),
        }
    }

    /// Puts the staged site in place of `out`.
    pub(crate) fn finish(mut self) -> anyhow::Result<()> {
        self.drain()?;
        let staging = self.staging.take().expect("finished once");
        fs::write(
            staging.path().join(MARKER),
            "This folder is written by `sitegen build` and replaced by every build.\n",
        )
        .context("writing the output marker")?;
        let staged = staging.keep();
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
        let sent = match &self.files {
            Some(files) => files.send((rel, bytes)).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The writer stopped: at an error, which is the build's.
        self.drain()?;
        bail!("the thread writing the site stopped early")
    }
}

impl Drop for SiteWriter {
    /// An unfinished build's writer is stopped before its staging folder
    /// is removed (by `staging`'s own drop, after this).
    fn drop(&mut self) {
        let _ = self.drain();
    }
}
