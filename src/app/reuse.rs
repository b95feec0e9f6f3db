//! A build takes from the previous build in the output folder the files of
//! every part of the site made from what it was made from then: the same
//! sitegen binary, the same files of the data folder itself, the same
//! sources (src/app/sources.rs) and the same bytes of every run it shows.
//! Years of nightly runs add a run a night; the build renders that run's
//! page, its series and the lists, and links the other pages in place.
//!
//! A part is named by a digest of all that ([`part_digest`]). The previous
//! build left a manifest ([`MANIFEST`]) of each part's digest and files,
//! each file's inode, size and modification time as written
//! ([`Stamp`]); a file is taken only while its stamp is unchanged, so a
//! page edited by hand is rendered again, not kept. The result is the
//! build's from scratch, byte for byte (tests/site/reuse.rs holds it to
//! that); `sitegen build --fresh` renders everything.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::app::output::SiteWriter;
use crate::app::site::{Inputs, SiteSink, stream_parts};
use crate::app::sources::{Sourced, Sources};
use crate::store::Digest;
use crate::store::kept::KeptRun;

/// The manifest a build leaves in the output folder for the next one: the
/// inodes and times of the files it wrote, different from one build to the
/// next (not a page).
pub const MANIFEST: &str = ".sitegen-reuse.json";

/// The folder of the output where a build keeps a copy of each run it read
/// (src/store/kept.rs), for the next build: not a page.
pub const KEPT_RUNS: &str = ".sitegen-runs";

/// The manifest's form; another is not read (everything is rendered).
const MANIFEST_VERSION: u32 = 1;

/// What a build's data was read from: the data folder's own files and each
/// run's (`store::read_runs`).
#[derive(Debug, Clone)]
pub struct Digests {
    pub data: Digest,
    pub runs: HashMap<String, Digest>,
    /// The build's options in words (the rule series are judged by).
    pub options: String,
    /// What the next build keeps of each run, by id.
    pub(crate) kept: Vec<(String, crate::store::kept::KeptRun)>,
}

/// A file as it was written: while its inode, size and modification time
/// are these, it holds what was written (an editor, `cp` or `touch` changes
/// one of them), and it is known without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    ino: u64,
    len: u64,
    mtime_s: i64,
    mtime_ns: i64,
}

impl Stamp {
    /// The stamp of a regular file; none for anything else, and where there
    /// are no inodes (nothing is reused there).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            meta.file_type().is_file().then(|| Stamp {
                ino: meta.ino(),
                len: meta.len(),
                mtime_s: meta.mtime(),
                mtime_ns: meta.mtime_nsec(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// Each part's files, by the part's digest (hex).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Manifest {
    version: u32,
    parts: HashMap<String, Vec<(String, Stamp)>>,
}

impl Manifest {
    /// The manifest of the files written, each with its part's digest.
    pub(crate) fn of(files: Vec<(Digest, String, Stamp)>) -> Manifest {
        let mut parts: HashMap<String, Vec<(String, Stamp)>> = HashMap::new();
        for (part, rel, stamp) in files {
            parts
                .entry(part.to_hex().to_string())
                .or_default()
                .push((rel, stamp));
        }
        for files in parts.values_mut() {
            files.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Manifest {
            version: MANIFEST_VERSION,
            parts,
        }
    }

    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a manifest serializes")
    }

    /// The manifest of the site in `out`; an empty one when there is none
    /// or it cannot be read (then everything is rendered: a manifest is
    /// never needed, only saves work).
    fn read(out: &Path) -> Manifest {
        std::fs::read(out.join(MANIFEST))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
            .filter(|m| m.version == MANIFEST_VERSION)
            .unwrap_or_default()
    }

    /// The files of the part of digest `part` in `out`, if the previous
    /// build made them and every one is still as it was written.
    fn unchanged(&self, out: &Path, part: &Digest) -> Option<Vec<(String, PathBuf, Stamp)>> {
        let files = self.parts.get(part.to_hex().as_str())?;
        files
            .iter()
            .map(|(rel, stamp)| {
                // Only a path inside the folder, whatever the manifest says.
                let inside = Path::new(rel)
                    .components()
                    .all(|c| matches!(c, Component::Normal(_)));
                let from = out.join(rel);
                let now = std::fs::symlink_metadata(&from).ok()?;
                (inside && Stamp::of(&now) == Some(*stamp)).then(|| (rel.clone(), from, *stamp))
            })
            .collect()
    }
}

/// The digest of this sitegen binary: a new build of sitegen may render any
/// page differently. Once per process; none when it cannot be read (then
/// nothing is reused).
fn binary_digest() -> Option<Digest> {
    static DIGEST: OnceLock<Option<Digest>> = OnceLock::new();
    *DIGEST.get_or_init(|| {
        // Streamed: the binary is tens of MB, not worth holding.
        let mut exe = std::fs::File::open(std::env::current_exe().ok()?).ok()?;
        let mut hasher = blake3::Hasher::new();
        std::io::copy(&mut exe, &mut hasher).ok()?;
        Some(hasher.finalize())
    })
}

/// What every part shares: the binary, the data folder's own files, the
/// build's options.
fn shared_digest(digests: &Digests) -> Option<Digest> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(binary_digest()?.as_bytes());
    hasher.update(digests.data.as_bytes());
    hasher.update(format!("{MANIFEST_VERSION} {}", digests.options).as_bytes());
    Some(hasher.finalize())
}

/// The digest of a part: what every part shares, its key and sources, and
/// the bytes of every run it shows. None for the lists, which name every
/// run and are rendered every time, and for a run not read from disk.
fn part_digest(shared: &Digest, part: &Sourced, runs: &HashMap<String, Digest>) -> Option<Digest> {
    use std::io::Write;
    let mut hasher = blake3::Hasher::new();
    hasher.update(shared.as_bytes());
    // Debug writes every field, floats exactly (shortest round trip).
    match &part.sources {
        Sources::Lists => return None,
        // A series' judgements, labels and shifts are a function of its
        // runs, the noted changes and the rule, all in the digest: its runs
        // in order stand for them (writing out a thousand judgements was a
        // tenth of a build that kept everything).
        Sources::Series(_, ids) => write!(hasher, "{:?}\n{ids:?}\n", part.key),
        sources => write!(hasher, "{:?}\n{sources:?}\n", part.key),
    }
    .expect("a hasher takes every write");
    for id in &part.shows {
        hasher.update(runs.get(id)?.as_bytes());
    }
    Some(hasher.finalize())
}

/// How many files a build wrote, and how many of them it took from the
/// previous build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub files: usize,
    pub reused: usize,
}

/// A part's files: rendered now, or the previous build's.
enum PartFiles {
    /// Rendered now; its digest if the next build may reuse it.
    Rendered(Option<Digest>, Vec<crate::app::site::File>),
    Reused(Digest, Vec<(String, PathBuf, Stamp)>),
}

/// Renders the site into `writer`, taking from the site in its output
/// folder the files of every part unchanged since (nothing without
/// `digests`: a build that was told to render everything).
pub(crate) fn write_site(
    inputs: &Inputs,
    digests: Option<&Digests>,
    writer: &mut SiteWriter,
) -> anyhow::Result<Written> {
    let places = inputs.places();
    let parts = inputs.parts();
    let shared = digests.and_then(|d| shared_digest(d).map(|s| (s, d)));
    let (part_digests, previous): (Vec<Option<Digest>>, Manifest) = match shared {
        Some((shared, digests)) => {
            let sourced = crate::app::sources::of_every_part(inputs, &places);
            let part_digests =
                crate::threads::map_in_order(&sourced, |s| part_digest(&shared, s, &digests.runs));
            (part_digests, Manifest::read(writer.out()))
        }
        None => (vec![None; parts.len()], Manifest::default()),
    };
    let out = writer.out().to_path_buf();
    // Copies of the runs, beside the pages and not counted with them: one
    // after each part, while the writer would wait for the next.
    let mut copies = digests
        .map(|d| d.kept.as_slice())
        .unwrap_or_default()
        .iter();
    let mut write_copy = |writer: &mut SiteWriter| -> anyhow::Result<bool> {
        let Some((id, copy)) = copies.next() else {
            return Ok(false);
        };
        let rel = format!("{KEPT_RUNS}/{id}");
        match copy {
            KeptRun::Written(bytes) => writer.put(rel, bytes.clone())?,
            KeptRun::Unchanged(from) => writer.link(rel, from.clone())?,
        }
        Ok(true)
    };
    let mut written = Written {
        files: 0,
        reused: 0,
    };
    stream_parts(
        &parts,
        |i, part| {
            let digest = part_digests[i];
            if let Some(digest) = digest
                && let Some(files) = previous.unchanged(&out, &digest)
            {
                return Ok(PartFiles::Reused(digest, files));
            }
            let files = inputs.render(part, &places)?;
            Ok(PartFiles::Rendered(digest, files))
        },
        |made| {
            match made {
                PartFiles::Reused(digest, files) => {
                    for (rel, from, stamp) in files {
                        written.files += 1;
                        written.reused += 1;
                        writer.reuse(rel, from, stamp, digest)?;
                    }
                }
                PartFiles::Rendered(digest, files) => {
                    for (rel, bytes) in files {
                        written.files += 1;
                        match digest {
                            Some(digest) => writer.put_of(rel, bytes, digest)?,
                            None => writer.put(rel, bytes)?,
                        }
                    }
                }
            }
            write_copy(writer)?;
            Ok(())
        },
    )?;
    while write_copy(writer)? {}
    Ok(written)
}
