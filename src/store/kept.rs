//! What a build keeps of each run it read, for the next build: the name and
//! text of every file, under the stamps of the files they were read from
//! (inode, size, modification and change times). While every stamp and name
//! is the same, the texts are the files': writing a file, `cp`, `touch` and
//! `git checkout` all change its change time, which no program can set back.
//! The next build then reads one file for the run instead of each of its
//! files (a thousand runs are 74,000 files), and parses and hashes the texts
//! exactly as it would the files'. Kept in the output folder by
//! src/app/reuse.rs; a kept run that cannot be read, or of other stamps, is
//! not used, and the run is read from its files.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::store::Digest;

/// The form of a kept run; another is not read.
const VERSION: u32 = 1;

/// What the next build keeps of a run read now.
#[derive(Debug, Clone)]
pub(crate) enum KeptRun {
    /// Read from its files: their texts, encoded ([`encode`]).
    Written(Vec<u8>),
    /// Read from the last build's copy, still the files': kept as it is.
    Unchanged(PathBuf),
}

/// A kept run: this header, then its files (encoded by [`Digester`]).
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
    stamps: [u8; 32],
}

/// A file of a run: its folder in the run (`""`, `cells`, ...), name and text.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct File<'a> {
    pub folder: &'a str,
    pub name: &'a str,
    pub text: &'a str,
}

/// A run's files in the order read, each name and text after its length:
/// what [`Digester`] makes of them one by one.
#[cfg(test)]
pub(crate) fn files_blob(files: &[File]) -> Vec<u8> {
    postcard::to_stdvec(files).expect("strings encode")
}

/// The digest of run `id` read from the files in `blob`: in one pass over
/// bytes side by side, which hashes on every lane of the CPU, where the
/// files one by one, a few hundred bytes each, hashed on one.
pub(crate) fn digest(id: &str, blob: &[u8]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&(id.len() as u64).to_le_bytes());
    hasher.update(id.as_bytes());
    hasher.update(blob);
    hasher.finalize()
}

/// A run's files encoded one by one as they are read, none of them held
/// (the bytes of `postcard` for the sequence of [`File`]s, which [`decode`]
/// reads back): what a copy keeps ([`encode`]) and the run's [`digest`] is
/// of, hashed at once (a file at a time, a few hundred bytes each, hashed
/// on one lane).
pub(crate) struct Digester {
    id: String,
    blob: Vec<u8>,
}

impl Digester {
    /// For run `id` of `count` files.
    pub(crate) fn new(id: &str, count: usize) -> Digester {
        // A sequence's length, as postcard writes it before the items.
        let blob = postcard::to_stdvec(&count).expect("a length encodes");
        Digester {
            id: id.to_string(),
            blob,
        }
    }

    pub(crate) fn add(&mut self, file: &File) {
        postcard::to_io(file, &mut self.blob).expect("a vector takes every write");
    }

    /// The run's digest, and its files' encoding for a copy.
    pub(crate) fn finish(self) -> (Digest, Vec<u8>) {
        (digest(&self.id, &self.blob), self.blob)
    }
}

/// A run's files (encoded by [`Digester`]) kept under the digest of their stamps.
pub(crate) fn encode(stamps: &Digest, blob: &[u8]) -> Vec<u8> {
    let mut bytes = postcard::to_stdvec(&Header {
        version: VERSION,
        stamps: *stamps.as_bytes(),
    })
    .expect("a header encodes");
    bytes.extend_from_slice(blob);
    bytes
}

/// The files kept in `bytes`, with their blob, if they were kept under
/// `stamps`; none when they were not, or the bytes are not a kept run of
/// this form.
pub(crate) fn decode<'a>(bytes: &'a [u8], stamps: &Digest) -> Option<(Vec<File<'a>>, &'a [u8])> {
    let (header, blob): (Header, &[u8]) = postcard::take_from_bytes(bytes).ok()?;
    if header.version != VERSION || header.stamps != *stamps.as_bytes() {
        return None;
    }
    Some((postcard::from_bytes(blob).ok()?, blob))
}

/// Hashes the stamp of a file, from its metadata (of the file itself, a
/// link followed): none where there are no inodes (then nothing is kept).
pub(crate) fn hash_stamp(hasher: &mut blake3::Hasher, meta: &std::fs::Metadata) -> Option<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        for n in [
            meta.ino() as i64,
            meta.len() as i64,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        ] {
            hasher.update(&n.to_le_bytes());
        }
        Some(())
    }
    #[cfg(not(unix))]
    {
        let _ = (hasher, meta);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn files() -> Vec<File<'static>> {
        vec![
            File {
                folder: "",
                name: "run.json",
                text: "{\"id\": \"é\"}",
            },
            File {
                folder: "cells",
                name: "decode-00008192-x001.json",
                text: "",
            },
        ]
    }

    #[test]
    fn a_run_is_read_back_as_it_was_kept() {
        let stamps = blake3::hash(b"stamps");
        let blob = files_blob(&files());
        let bytes = encode(&stamps, &blob);
        assert_eq!(decode(&bytes, &stamps), Some((files(), blob.as_slice())));
    }

    #[test]
    fn a_digest_tells_every_name_text_and_id_apart() {
        let blob = files_blob(&files());
        let mut moved = files();
        // The same bytes in all, split differently between name and text.
        moved[0].name = "run.json{";
        moved[0].text = "\"id\": \"é\"}";
        let other_text = files_blob(&moved);
        assert_ne!(digest("run-1", &blob), digest("run-1", &other_text));
        assert_ne!(digest("run-1", &blob), digest("run-2", &blob));
        assert_eq!(
            digest("run-1", &blob),
            digest("run-1", &files_blob(&files()))
        );
    }

    #[test]
    fn a_run_hashed_file_by_file_has_the_digest_of_its_encoding() {
        // 200 files: a length postcard writes in two bytes.
        let texts: Vec<String> = (0..200).map(|i| "x".repeat(i * 3)).collect();
        let names: Vec<String> = (0..200).map(|i| format!("c{i}.json")).collect();
        for count in [0, 1, 2, 200] {
            let files: Vec<File> = (0..count)
                .map(|i| File {
                    folder: "cells",
                    name: &names[i],
                    text: &texts[i],
                })
                .collect();
            let mut one_by_one = Digester::new("run-1", files.len());
            for file in &files {
                one_by_one.add(file);
            }
            assert_eq!(
                one_by_one.finish(),
                (digest("run-1", &files_blob(&files)), files_blob(&files)),
                "{count} files"
            );
        }
    }

    #[test]
    fn a_run_kept_under_other_stamps_or_broken_is_not_read() {
        let stamps = blake3::hash(b"stamps");
        let bytes = encode(&stamps, &files_blob(&files()));
        assert_eq!(decode(&bytes, &blake3::hash(b"other")), None);
        assert_eq!(decode(&bytes[..bytes.len() - 3], &stamps), None);
        assert_eq!(decode(b"", &stamps), None);
        let mut other_form = bytes.clone();
        other_form[0] = VERSION as u8 + 1;
        assert_eq!(decode(&other_form, &stamps), None);
    }

    #[test]
    fn a_stamp_changes_when_a_file_is_written_back_as_it_was_dated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cell.json");
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        let stamp = |path: &Path| {
            let mut hasher = blake3::Hasher::new();
            hash_stamp(&mut hasher, &std::fs::symlink_metadata(path).unwrap()).unwrap();
            hasher.finalize()
        };
        let before = stamp(&path);
        assert_eq!(stamp(&path), before, "a stamp is read the same twice");
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        // The same size, the modification time set back: only the change
        // time tells, and it must.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut &file, b"{\"a\": 2}").unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified
        );
        assert_ne!(stamp(&path), before);
    }
}
