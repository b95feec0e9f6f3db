//! The one writer into the output folder. A site is written into a hidden
//! sibling folder as it is rendered and swapped in by renames, so a failed
//! build leaves the previous site as it was.

use std::fs;
use std::path::Path;

use anyhow::{Context, bail};

use crate::app::reuse::{Manifest, Stamp};
use crate::app::site::SiteSink;
use crate::store::Digest;

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
    files: Option<std::sync::mpsc::SyncSender<Item>>,
    writer: Option<std::thread::JoinHandle<anyhow::Result<Stamped>>>,
    /// What the writer stamped, once it finished.
    stamped: Stamped,
}

/// A file for the writer thread.
enum Item {
    /// Bytes to write, of a part named by `part` if it may be reused.
    Bytes {
        rel: String,
        bytes: Vec<u8>,
        part: Option<Digest>,
    },
    /// A file of the previous build, the same as it was written (`stamp`),
    /// put in place again: linked, not copied.
    Reused {
        rel: String,
        from: std::path::PathBuf,
        stamp: Stamp,
        part: Digest,
    },
    /// A file of the previous build put in place again, not for the manifest.
    Linked {
        rel: String,
        from: std::path::PathBuf,
    },
}

/// What the writer thread stamped: each file of a part that may be reused,
/// with its part's digest and stamp, for the next build's manifest.
#[derive(Default)]
struct Stamped {
    files: Vec<(Digest, String, Stamp)>,
}

/// Files rendered but not yet written, at most: enough to keep the writer
/// busy, few enough that memory stays flat.
const QUEUED_FILES: usize = 64;

/// The writer thread: each file under `root`, its folders made once.
fn write_files(
    root: std::path::PathBuf,
    files: std::sync::mpsc::Receiver<Item>,
) -> anyhow::Result<Stamped> {
    let mut made = std::collections::HashSet::new();
    let mut stamped = Stamped::default();
    for item in files {
        let rel = match &item {
            Item::Bytes { rel, .. } | Item::Reused { rel, .. } | Item::Linked { rel, .. } => rel,
        };
        let path = root.join(rel);
        if let Some(dir) = path.parent()
            && !made.contains(dir)
        {
            fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
            made.insert(dir.to_path_buf());
        }
        let cannot_write = || format!("{}: cannot write", path.display());
        match item {
            Item::Bytes {
                bytes, part: None, ..
            } => fs::write(&path, bytes).with_context(cannot_write)?,
            Item::Bytes {
                rel,
                bytes,
                part: Some(part),
            } => {
                let mut file = fs::File::create(&path).with_context(cannot_write)?;
                std::io::Write::write_all(&mut file, &bytes).with_context(cannot_write)?;
                // The stamp as the file stands written (fstat, no second lookup).
                if let Some(stamp) = Stamp::of(&file.metadata().with_context(cannot_write)?) {
                    stamped.files.push((part, rel, stamp));
                }
            }
            Item::Linked { from, .. } => {
                link_or_copy(&from, &path).with_context(cannot_write)?;
            }
            Item::Reused {
                rel,
                from,
                stamp,
                part,
            } => {
                // A link is the same file: the same stamp. A copy has a
                // stamp of its own.
                let stamp = if link_or_copy(&from, &path).with_context(cannot_write)? {
                    Some(stamp)
                } else {
                    Stamp::of(&fs::symlink_metadata(&path).with_context(cannot_write)?)
                };
                if let Some(stamp) = stamp {
                    stamped.files.push((part, rel, stamp));
                }
            }
        }
    }
    Ok(stamped)
}

/// Puts the file `from` at `to` as a hard link, or where a link cannot be
/// made, a copy; whether it was linked.
fn link_or_copy(from: &Path, to: &Path) -> std::io::Result<bool> {
    if fs::hard_link(from, to).is_ok() {
        return Ok(true);
    }
    fs::copy(from, to).map(|_| false)
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
            stamped: Stamped::default(),
        })
    }

    /// The folder the site is written into, replaced by [`SiteWriter::finish`].
    pub(crate) fn out(&self) -> &Path {
        &self.out
    }

    /// Hands a file to the writer thread.
    fn send(&mut self, item: Item) -> anyhow::Result<()> {
        let sent = match &self.files {
            Some(files) => files.send(item).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The writer stopped: at an error, which is the build's.
        self.drain()?;
        bail!("the thread writing the site stopped early")
    }

    /// Writes a file of the part of digest `part`, whose files the next
    /// build may take if the part is unchanged.
    pub(crate) fn put_of(
        &mut self,
        rel: String,
        bytes: Vec<u8>,
        part: Digest,
    ) -> anyhow::Result<()> {
        self.send(Item::Bytes {
            rel,
            bytes,
            part: Some(part),
        })
    }

    /// Puts a file of the previous build in place again (see [`Item::Reused`]).
    pub(crate) fn reuse(
        &mut self,
        rel: String,
        from: std::path::PathBuf,
        stamp: Stamp,
        part: Digest,
    ) -> anyhow::Result<()> {
        self.send(Item::Reused {
            rel,
            from,
            stamp,
            part,
        })
    }

    /// Puts a file of the previous build in place again, as it is.
    pub(crate) fn link(&mut self, rel: String, from: std::path::PathBuf) -> anyhow::Result<()> {
        self.send(Item::Linked { rel, from })
    }

    /// Waits for the writer thread to write what it was given, and returns
    /// its error if it met one.
    fn drain(&mut self) -> anyhow::Result<()> {
        drop(self.files.take());
        match self.writer.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => {
                self.stamped = result?;
                Ok(())
            }
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
        // What the next build may take from this one.
        let manifest = Manifest::of(std::mem::take(&mut self.stamped.files));
        fs::write(
            staging.path().join(crate::app::reuse::MANIFEST),
            manifest.to_json(),
        )
        .context("writing the list of files the next build may reuse")?;
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
        self.send(Item::Bytes {
            rel,
            bytes,
            part: None,
        })
    }
}

impl Drop for SiteWriter {
    /// An unfinished build's writer is stopped before its staging folder
    /// is removed (by `staging`'s own drop, after this).
    fn drop(&mut self) {
        let _ = self.drain();
    }
}
