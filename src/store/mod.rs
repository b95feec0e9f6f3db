//! Reads, validates and writes the `data/` directory.
//!
//! Layout: `data/<run-id>/run.json`, `data/<run-id>/cells/*.json` (one file per
//! cell), `paced/*.json` and `sessions/*.json` (one file per paced point and
//! per sessions window, [`Record`]), optional `data/<run-id>/notes.md`. Every error names the file, the
//! field and what was expected. Every write goes to a temporary file or folder
//! first and is renamed into place, so nothing already written is half-overwritten.

pub mod atomic;
pub(crate) mod kept;
pub mod schema;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::model::paced::PacedPoint;
use crate::model::sessions::SessionWindow;
use crate::model::slo::{self, SloFile};
use crate::model::validate::{self, Invalid};
use crate::model::{Cell, DecodeCell, PrefillCell, Run, RunMeta};

pub(crate) const RUN_FILE: &str = "run.json";
pub(crate) const CELLS_DIR: &str = "cells";
/// Paced points (requests sent at a rate), one file each.
pub(crate) const PACED_DIR: &str = "paced";
/// Sessions windows (turns on a growing context), one file each.
pub(crate) const SESSIONS_DIR: &str = "sessions";
pub(crate) const NOTES_FILE: &str = "notes.md";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // The I/O error is part of the message, not a `source`: an error chain
    // would print it a second time.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: field `{field}`: {message}", path.display())]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    /// JSON that does not parse: where, what, and the line as it reads.
    #[error("{}:{line}:{column}: not valid JSON: {message}; the line reads: {text}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        text: String,
    },
    #[error("{}: no such folder; pass --data with the folder that holds your runs, or run `sitegen init` to set up a results folder (its data/ has an example run)", path.display())]
    NoDataFolder { path: PathBuf },
    #[error("{}: cell {key} is also in {}", first.display(), second.display())]
    DuplicateCell {
        first: PathBuf,
        second: PathBuf,
        key: String,
    },
    #[error("{}: run already exists (pass --force to replace it)", path.display())]
    RunExists { path: PathBuf },
    #[error("{}: expected a run directory holding {RUN_FILE}", path.display())]
    NotARun { path: PathBuf },
    #[error(
        "run id {id:?}: expected lowercase letters, digits, '.', '_' or '-', not starting with '.'"
    )]
    BadRunId { id: String },
    #[error("{}: no run in this folder (a run is a folder holding {RUN_FILE}); to build an empty site on purpose pass --allow-empty", path.display())]
    NoRuns { path: PathBuf },
    /// Every problem found, not only the first: one line each.
    #[error("{} problems:\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Many(Vec<StoreError>),
}

impl StoreError {
    /// One error as it is, several as [`StoreError::Many`].
    pub(crate) fn from_list(mut errors: Vec<StoreError>) -> Option<StoreError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(StoreError::Many(
                errors
                    .into_iter()
                    .flat_map(|e| match e {
                        StoreError::Many(inner) => inner,
                        e => vec![e],
                    })
                    .collect(),
            )),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn field_err(path: &Path, field: &str, message: impl Into<String>) -> StoreError {
    StoreError::Field {
        path: path.to_path_buf(),
        field: field.to_string(),
        message: message.into(),
    }
}

/// A run id is a directory name and a URL segment: keep it to a safe alphabet.
pub(crate) fn check_run_id(id: &str) -> Result<(), StoreError> {
    if validate::run_id(id) {
        Ok(())
    } else {
        Err(StoreError::BadRunId { id: id.to_string() })
    }
}

// ------------------------------------------------------------------ reading

/// Reads every run under `data_dir`, sorted by id. Directories whose name
/// starts with '.' are skipped (temporary folders of an interrupted write).
pub(crate) fn load_runs(data_dir: &Path) -> Result<Vec<Run>, StoreError> {
    Ok(read_runs(data_dir, false, None)?
        .into_iter()
        .map(|read| read.run)
        .collect())
}

/// A run read for a build that may keep pages of the last one.
#[derive(Debug)]
pub(crate) struct ReadRun {
    pub run: Run,
    /// Of every file's name and bytes (none unless asked for).
    pub digest: Option<Digest>,
    /// What the next build keeps of it (only in a build over the last one,
    /// and where files have stamps).
    pub kept: Option<kept::KeptRun>,
}

/// [`load_runs`], each run with the digest of what it was read from when
/// `digest` (only a build that may keep pages of the last one needs it);
/// with a `kept_dir`, each read from the last build's copy of it there
/// (src/store/kept.rs) where its files are still as they were then, and
/// with what the next build keeps of it.
pub(crate) fn read_runs(
    data_dir: &Path,
    digest: bool,
    kept_dir: Option<&Path>,
) -> Result<Vec<ReadRun>, StoreError> {
    if !data_dir.exists() {
        return Err(StoreError::NoDataFolder {
            path: data_dir.to_path_buf(),
        });
    }
    let mut dirs = Vec::new();
    for entry in fs::read_dir(data_dir).map_err(io_err(data_dir))? {
        let entry = entry.map_err(io_err(data_dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        dirs.push(entry.path());
    }
    dirs.sort_unstable_by(|a, b| a.file_name().cmp(&b.file_name()));
    // Every run is read, so that every broken file is reported at once; on
    // every core, in order.
    let results = crate::threads::map_in_order(&dirs, |d| read_run(d, digest, kept_dir));
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(run) => runs.push(run),
            Err(e) => errors.push(e),
        }
    }
    match StoreError::from_list(errors) {
        Some(e) => Err(e),
        None => Ok(runs),
    }
}

/// The digest of every file directly in the data folder (comparisons,
/// prices, latency budgets, noted changes, and any other): what a build
/// reads besides the runs, in one hash.
pub(crate) fn data_files_digest(data_dir: &Path) -> Result<Digest, StoreError> {
    let mut files = Vec::new();
    for entry in fs::read_dir(data_dir).map_err(io_err(data_dir))? {
        let entry = entry.map_err(io_err(data_dir))?;
        if entry.file_type().map_err(io_err(&entry.path()))?.is_file() {
            files.push(entry.path());
        }
    }
    files.sort_unstable_by(|a, b| a.file_name().cmp(&b.file_name()));
    let mut hasher = blake3::Hasher::new();
    for path in files {
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        let name = path.file_name().unwrap_or_default().as_encoded_bytes();
        hash_named(&mut hasher, &[name, &bytes]);
    }
    Ok(hasher.finalize())
}

/// Hashes `pieces`, each after its length, so that no two different
/// sequences of pieces (a file's name and bytes, ...) hash alike.
fn hash_named(hasher: &mut blake3::Hasher, pieces: &[&[u8]]) {
    for piece in pieces {
        hasher.update(&(piece.len() as u64).to_le_bytes());
        hasher.update(piece);
    }
}

/// Reads and validates one run directory.
pub fn load_run(dir: &Path) -> Result<Run, StoreError> {
    read_run(dir, false, None).map(|r| r.run)
}

/// What a run was read from, in one hash: its id and every file's folder,
/// name and bytes (`kept::digest`). Two reads with the same digest read the
/// same run; a build reuses the files of the previous build made from a run of
/// the same digest (src/app/reuse.rs).
pub type Digest = blake3::Hash;

/// A run's files, each folder's sorted by name: what a run is read from.
struct RunFiles {
    meta: PathBuf,
    cells: Vec<PathBuf>,
    paced: Vec<PathBuf>,
    sessions: Vec<PathBuf>,
    notes: Option<PathBuf>,
    /// The digest of every file's name and stamp, in order (src/store/kept.rs),
    /// when asked for; none where a file has no stamp.
    stamps: Option<Digest>,
}

impl RunFiles {
    fn of(dir: &Path, id: &str, stamped: bool) -> Result<RunFiles, StoreError> {
        let notes = Some(dir.join(NOTES_FILE)).filter(|notes| notes.is_file());
        let meta = dir.join(RUN_FILE);
        let [cells, paced, sessions] = [CELLS_DIR, PACED_DIR, SESSIONS_DIR]
            .map(|folder| json_files(&dir.join(folder), stamped));
        let (cells, paced, sessions) = (cells?, paced?, sessions?);
        // Of the file a link points to: editing it changes nothing of the link.
        let stamp = |path: &Path| fs::metadata(path).ok();
        let stamps = stamped.then(|| {
            let mut hasher = blake3::Hasher::new();
            hash_named(&mut hasher, &[id.as_bytes()]);
            let mut stamp_file = |folder: &str, path: &Path, meta: Option<&fs::Metadata>| {
                hash_named(&mut hasher, &[folder.as_bytes(), file_name(path)]);
                kept::hash_stamp(&mut hasher, meta?)
            };
            stamp_file("", &meta, stamp(&meta).as_ref())?;
            for (folder, files) in [
                (CELLS_DIR, &cells),
                (PACED_DIR, &paced),
                (SESSIONS_DIR, &sessions),
            ] {
                for (path, meta) in files {
                    stamp_file(folder, path, meta.as_ref())?;
                }
            }
            if let Some(notes) = &notes {
                stamp_file("", notes, stamp(notes).as_ref())?;
            }
            Some(hasher.finalize())
        });
        let paths = |files: Vec<(PathBuf, Option<fs::Metadata>)>| {
            files.into_iter().map(|(p, _)| p).collect()
        };
        Ok(RunFiles {
            meta,
            cells: paths(cells),
            paced: paths(paced),
            sessions: paths(sessions),
            notes,
            stamps: stamps.flatten(),
        })
    }

    /// Each file with its folder in the run, in the order they are read.
    fn in_order(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        std::iter::once(("", self.meta.as_path()))
            .chain(self.cells.iter().map(|p| (CELLS_DIR, p.as_path())))
            .chain(self.paced.iter().map(|p| (PACED_DIR, p.as_path())))
            .chain(self.sessions.iter().map(|p| (SESSIONS_DIR, p.as_path())))
            .chain(self.notes.iter().map(|p| ("", p.as_path())))
    }

    /// Whether `files` are these files, in order, by folder and name.
    fn named_as(&self, files: &[kept::File]) -> bool {
        files.len() == self.in_order().count()
            && self.in_order().zip(files).all(|((folder, path), f)| {
                folder == f.folder && file_name(path) == f.name.as_bytes()
            })
    }
}

fn file_name(path: &Path) -> &[u8] {
    path.file_name().unwrap_or_default().as_encoded_bytes()
}

/// Reads the texts of a run's files: from the files, or from the last
/// build's copy of them where they are still as they were then; encodes
/// those it read from the files when asked to (for the run's digest and a
/// copy).
struct Texts<'a> {
    /// The last build's copy, each file's text in the order they are read.
    kept: Option<std::vec::IntoIter<kept::File<'a>>>,
    digester: Option<kept::Digester>,
    /// The text last read from a file.
    last: String,
}

impl Texts<'_> {
    fn read(&mut self, folder: &'static str, path: &Path) -> std::io::Result<&str> {
        // The same name in the same place: checked before reading.
        if let Some(file) = self.kept.as_mut().and_then(Iterator::next) {
            return Ok(file.text);
        }
        self.last = read_small_file(path)?;
        if let Some(digester) = &mut self.digester {
            digester.add(&kept::File {
                folder,
                name: &path.file_name().unwrap_or_default().to_string_lossy(),
                text: &self.last,
            });
        }
        Ok(&self.last)
    }
}

/// [`load_run`], with the digest of what it read when `digest`; with a
/// `kept_dir` (a build over the last one), read from its copy there where
/// that is of the files as they stand, and with what the next build keeps.
fn read_run(dir: &Path, digest: bool, kept_dir: Option<&Path>) -> Result<ReadRun, StoreError> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    check_run_id(&id).map_err(|_| field_err(dir, "run id", format!("directory name {id:?} is not a valid run id (lowercase letters, digits, '.', '_', '-')")))?;
    if !dir.join(RUN_FILE).is_file() {
        return Err(StoreError::NotARun {
            path: dir.to_path_buf(),
        });
    }
    let copies = digest && kept_dir.is_some();
    let files = RunFiles::of(dir, &id, copies)?;
    // Stamped before anything is read: a file written meanwhile is read
    // newer than stamped, and the next build reads it again.
    let stamps = files.stamps;
    let kept_path = kept_dir.map(|d| d.join(&id));
    // The copy is read only where the files have stamps to hold it to.
    let kept_bytes = stamps
        .and(kept_path.as_ref())
        .and_then(|path| fs::read(path).ok());
    let (kept_files, kept_blob) = kept_bytes
        .as_deref()
        .zip(stamps.as_ref())
        .and_then(|(bytes, stamps)| kept::decode(bytes, stamps))
        .filter(|(kept, _)| files.named_as(kept))
        .unzip();
    let mut texts = Texts {
        kept: kept_files.map(Vec::into_iter),
        digester: (digest && kept_blob.is_none())
            .then(|| kept::Digester::new(&id, files.in_order().count())),
        last: String::new(),
    };
    let mut errors = Vec::new();
    let meta_path = &files.meta;
    let meta: Option<RunMeta> = texts
        .read("", meta_path)
        .map_err(io_err(meta_path))
        .and_then(|text| parse_json(meta_path, text))
        .and_then(|m: RunMeta| validate_meta(meta_path, &m).map(|()| m))
        .map_err(|e| errors.push(e))
        .ok();

    let mut cells: Vec<(PathBuf, Cell)> = Vec::new();
    for path in &files.cells {
        let read = texts
            .read(CELLS_DIR, path)
            .map_err(io_err(path))
            .and_then(|text| parse_cell(path, text));
        match read {
            Ok(cell) => cells.push((path.clone(), cell)),
            Err(e) => errors.push(e),
        }
    }
    sort_unique(&mut cells, Cell::key, describe_key, &mut errors);

    let paced: Vec<PacedPoint> = read_records(&mut texts, &files.paced, &mut errors);
    let sessions: Vec<SessionWindow> = read_records(&mut texts, &files.sessions, &mut errors);

    let notes_markdown = files.notes.as_ref().and_then(|notes_path| {
        texts
            .read("", notes_path)
            .map(str::to_owned)
            .map_err(|e| errors.push(io_err(notes_path)(e)))
            .ok()
    });
    if let Some(e) = StoreError::from_list(errors) {
        return Err(e);
    }
    let run = Run {
        id,
        meta: meta.expect("run.json was read when nothing failed"),
        cells: cells.into_iter().map(|(_, c)| c).collect(),
        paced,
        sessions,
        notes_markdown,
    };
    let (digest, kept) = match (kept_blob, texts.digester) {
        (Some(blob), _) => (
            Some(kept::digest(&run.id, blob)),
            kept_path.map(kept::KeptRun::Unchanged),
        ),
        (None, Some(digester)) => {
            let (digest, blob) = digester.finish();
            // Stamps only where copies are kept.
            let copy = stamps.map(|stamps| kept::KeptRun::Written(kept::encode(&stamps, &blob)));
            (Some(digest), copy)
        }
        (None, None) => (None, None),
    };
    Ok(ReadRun { run, digest, kept })
}

/// The `.json` files directly in `folder`, sorted by name, each with its
/// metadata when `stamped`; none when the folder is absent.
fn json_files(
    folder: &Path,
    stamped: bool,
) -> Result<Vec<(PathBuf, Option<fs::Metadata>)>, StoreError> {
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(folder).map_err(io_err(folder))? {
        let entry = entry.map_err(io_err(folder))?;
        let name = entry.file_name();
        if Path::new(&name).extension().is_some_and(|x| x == "json") {
            // Asked of the open folder by name: a stat of the whole path
            // spent half its time walking the path again. A link is
            // followed: editing the file it points to changes nothing of it.
            let meta = match entry.file_type() {
                _ if !stamped => None,
                Ok(kind) if !kind.is_symlink() => entry.metadata().ok(),
                _ => fs::metadata(entry.path()).ok(),
            };
            files.push((name, entry.path(), meta));
        }
    }
    // By name, without taking each path apart again to compare.
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(files
        .into_iter()
        .map(|(_, path, meta)| (path, meta))
        .collect())
}

/// A record kept one per file in a folder of its own beside `cells/`:
/// never a cell of the matrix, read, validated, ordered and written alike.
pub(crate) trait Record: Serialize + DeserializeOwned {
    /// Its folder in a run directory.
    const DIR: &'static str;
    type Key: Ord + std::hash::Hash + Copy;
    fn record_key(&self) -> Self::Key;
    fn file_name(&self) -> String;
    /// The record in words, for an error that names two files of one key.
    fn describe(&self) -> String;
    fn validate(&self) -> Result<(), Invalid>;
}

impl Record for PacedPoint {
    const DIR: &'static str = PACED_DIR;
    type Key = crate::model::paced::PacedKey;
    fn record_key(&self) -> Self::Key {
        self.key()
    }
    fn file_name(&self) -> String {
        self.key().file_name()
    }
    fn describe(&self) -> String {
        let cap = self
            .load
            .max_concurrency
            .map_or(String::new(), |n| format!(" capped at {n}"));
        format!(
            "paced point at {} tokens, {} requests/s{cap}",
            self.context_tokens, self.load.requested_per_s
        )
    }
    fn validate(&self) -> Result<(), Invalid> {
        validate::paced(self)
    }
}

impl Record for SessionWindow {
    const DIR: &'static str = SESSIONS_DIR;
    type Key = crate::model::sessions::SessionKey;
    fn record_key(&self) -> Self::Key {
        self.key()
    }
    fn file_name(&self) -> String {
        self.key().file_name()
    }
    fn describe(&self) -> String {
        let w = &self.workload;
        format!(
            "{} sessions on a {}-token prefix, {} user and {} answer tokens a turn",
            self.sessions, w.shared_prefix_tokens, w.user_tokens_per_turn, w.answer_tokens
        )
    }
    fn validate(&self) -> Result<(), Invalid> {
        validate::sessions(self)
    }
}

/// Sorts the files read (path, what it holds) by `key`; two of one key
/// are an error naming both, with `describe`'s words for the key.
fn sort_unique<T, K: Ord>(
    files: &mut [(PathBuf, T)],
    key: impl Fn(&T) -> K,
    describe: impl Fn(&T) -> String,
    errors: &mut Vec<StoreError>,
) {
    files.sort_by_key(|(_, t)| key(t));
    for pair in files.windows(2) {
        if key(&pair[0].1) == key(&pair[1].1) {
            errors.push(StoreError::DuplicateCell {
                first: pair[0].0.clone(),
                second: pair[1].0.clone(),
                key: describe(&pair[0].1),
            });
        }
    }
}

/// The records of kind `R` in `paths` (its folder's files), sorted by key;
/// errors (unreadable files, two files of one key) go to `errors`.
fn read_records<R: Record>(
    texts: &mut Texts,
    paths: &[PathBuf],
    errors: &mut Vec<StoreError>,
) -> Vec<R> {
    let mut records: Vec<(PathBuf, R)> = Vec::new();
    for path in paths {
        let read = texts
            .read(R::DIR, path)
            .map_err(io_err(path))
            .and_then(|text| parse_record(path, text));
        match read {
            Ok(r) => records.push((path.clone(), r)),
            Err(e) => errors.push(e),
        }
    }
    sort_unique(&mut records, R::record_key, R::describe, errors);
    records.into_iter().map(|(_, r)| r).collect()
}

/// Reads one record file (`paced/*.json`, `sessions/*.json`), validated.
pub(crate) fn read_record<R: Record>(path: &Path) -> Result<R, StoreError> {
    let text = fs::read_to_string(path).map_err(io_err(path))?;
    parse_record(path, &text)
}

/// [`read_record`] of a file's text.
fn parse_record<R: Record>(path: &Path, text: &str) -> Result<R, StoreError> {
    let value: serde_json::Value = parse_json(path, text)?;
    let serde_json::Value::Object(object) = value else {
        return Err(field_err(path, "(document)", "expected a JSON object"));
    };
    let record: R = from_value(path, object)?;
    checked(path, record.validate())?;
    Ok(record)
}

/// Checks records as [`write_records`] would, writing nothing.
fn check_records<R: Record>(run_dir: &Path, records: &[R]) -> Result<(), StoreError> {
    for r in records {
        checked(&run_dir.join(R::DIR).join(r.file_name()), r.validate())?;
    }
    Ok(())
}

/// Writes records into `run_dir/<R::DIR>/`, refusing two of one key.
fn write_records<R: Record>(run_dir: &Path, records: &[R]) -> Result<(), StoreError> {
    let mut seen = HashSet::new();
    for r in records {
        let path = run_dir.join(R::DIR).join(r.file_name());
        if !seen.insert(r.record_key()) {
            return Err(StoreError::DuplicateCell {
                first: path.clone(),
                second: path,
                key: r.describe(),
            });
        }
        write_record(run_dir, r)?;
    }
    Ok(())
}

/// Writes one record into `run_dir/<R::DIR>/`, validated, atomically.
pub(crate) fn write_record<R: Record>(run_dir: &Path, record: &R) -> Result<PathBuf, StoreError> {
    let path = run_dir.join(R::DIR).join(record.file_name());
    checked(&path, record.validate())?;
    write_atomically(&path, to_json(record).as_bytes())?;
    Ok(path)
}

fn describe_key(cell: &Cell) -> String {
    match cell {
        Cell::Prefill(p) => format!("prefill at {} tokens", p.context_tokens),
        Cell::Decode(d) => format!(
            "decode at {} tokens x {} requests",
            d.context_tokens, d.concurrency
        ),
    }
}

pub(crate) const COMPARISONS_FILE: &str = "comparisons.json";

/// Reads `data/comparisons.json`; no file means no named comparisons.
pub(crate) fn load_comparisons(
    data_dir: &Path,
) -> Result<crate::model::ComparisonsFile, StoreError> {
    let path = data_dir.join(COMPARISONS_FILE);
    if path.is_file() {
        read_json(&path)
    } else {
        Ok(Default::default())
    }
}

pub(crate) const CHANGES_FILE: &str = "changes.json";

/// Reads `data/changes.json`; no file means no annotated change. Each
/// change names a date or a run, not both, and the run must exist.
pub fn load_changes(
    data_dir: &Path,
    runs: &[Run],
) -> Result<crate::model::ChangesFile, StoreError> {
    let path = data_dir.join(CHANGES_FILE);
    if !path.is_file() {
        return Ok(Default::default());
    }
    let file: crate::model::ChangesFile = read_json(&path)?;
    for (i, c) in file.changes.iter().enumerate() {
        let field = |f: &str| format!("changes[{i}].{f}");
        match (&c.date, &c.run) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(field_err(
                    &path,
                    &format!("changes[{i}]"),
                    "expected a date (\"2026-10-16\") or a run id, one of them",
                ));
            }
            (Some(d), None)
                if crate::model::format::epoch_days(&format!("{d}T00:00:00Z")).is_none() =>
            {
                return Err(field_err(
                    &path,
                    &field("date"),
                    format!("expected a date like \"2026-10-16\", found {d:?}"),
                ));
            }
            (None, Some(id)) if !runs.iter().any(|r| &r.id == id) => {
                return Err(field_err(
                    &path,
                    &field("run"),
                    format!("no run {id:?} in the data folder"),
                ));
            }
            _ => {}
        }
    }
    Ok(file)
}

pub(crate) const PRICES_FILE: &str = "prices.json";

/// Reads `data/prices.json`; no file means no prices, and no cost anywhere.
pub(crate) fn load_prices(data_dir: &Path) -> Result<crate::model::PricesFile, StoreError> {
    let path = data_dir.join(PRICES_FILE);
    if !path.is_file() {
        return Ok(Default::default());
    }
    let file: crate::model::PricesFile = read_json(&path)?;
    for (i, p) in file.prices.iter().enumerate() {
        if !(p.usd_per_gpu_hour.is_finite() && p.usd_per_gpu_hour > 0.0) {
            return Err(field_err(
                &path,
                &format!("prices[{i}].usd_per_gpu_hour"),
                format!("expected a price above 0, found {}", p.usd_per_gpu_hour),
            ));
        }
        if let Some(j) = file.prices[..i].iter().position(|q| q.gpu == p.gpu) {
            return Err(field_err(
                &path,
                &format!("prices[{i}].gpu"),
                format!("{:?} is also prices[{j}]: one price per GPU", p.gpu),
            ));
        }
    }
    if let Some(e) = &file.electricity
        && !(e.usd_per_kwh.is_finite() && e.usd_per_kwh > 0.0)
    {
        return Err(field_err(
            &path,
            "electricity.usd_per_kwh",
            format!("expected a price above 0, found {}", e.usd_per_kwh),
        ));
    }
    Ok(file)
}

pub(crate) const SLO_FILE: &str = "slo.json";

/// Reads `data/slo.json`; no file means the default tiers
/// (`SloFile::defaults`).
pub(crate) fn load_slo(data_dir: &Path) -> Result<SloFile, StoreError> {
    let path = data_dir.join(SLO_FILE);
    if !path.is_file() {
        return Ok(SloFile::defaults());
    }
    let file: SloFile = read_json(&path)?;
    validate_slo(&path, &file)?;
    Ok(file)
}

fn validate_slo(path: &Path, file: &SloFile) -> Result<(), StoreError> {
    if file.tiers.is_empty() {
        return Err(field_err(
            path,
            "tiers",
            "expected at least one tier; remove the file to use the default tiers",
        ));
    }
    for (i, t) in file.tiers.iter().enumerate() {
        let field = |name: &str| format!("tiers[{i}].{name}");
        if t.name.trim().is_empty() {
            return Err(field_err(path, &field("name"), "expected a name"));
        }
        if let Some(j) = file.tiers[..i].iter().position(|u| u.name == t.name) {
            return Err(field_err(
                path,
                &field("name"),
                format!("{:?} is also tiers[{j}]: one tier per name", t.name),
            ));
        }
        if !slo::PERCENTILES.contains(&t.percentile) {
            return Err(field_err(
                path,
                &field("percentile"),
                format!("expected 50, 90, 95 or 99, found {}", t.percentile),
            ));
        }
        if t.ttft_ms.is_none() && t.tpot_ms.is_none() {
            return Err(field_err(
                path,
                &format!("tiers[{i}]"),
                "expected a limit: ttft_ms, tpot_ms or both",
            ));
        }
        for (name, limit) in [("ttft_ms", t.ttft_ms), ("tpot_ms", t.tpot_ms)] {
            if let Some(v) = limit
                && !(v.is_finite() && v > 0.0)
            {
                return Err(field_err(
                    path,
                    &field(name),
                    format!("expected milliseconds above 0, found {v}"),
                ));
            }
        }
        if t.source.trim().is_empty() {
            return Err(field_err(
                path,
                &field("source"),
                "expected where the limits come from",
            ));
        }
    }
    Ok(())
}

/// A `run.json`'s text, read and checked as [`load_run`] reads it.
pub fn parse_run_meta(path: &Path, text: &str) -> Result<RunMeta, StoreError> {
    let meta: RunMeta = parse_json(path, text)?;
    validate_meta(path, &meta)?;
    Ok(meta)
}

/// A `comparisons.json`'s text.
pub fn parse_comparisons(
    path: &Path,
    text: &str,
) -> Result<crate::model::ComparisonsFile, StoreError> {
    parse_json(path, text)
}

/// Parses a JSON file into `T`, naming the failing field by its path.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = fs::read_to_string(path).map_err(io_err(path))?;
    parse_json(path, &text)
}

fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, StoreError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if matches!(
            inner.classify(),
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
        ) {
            return syntax_err(path, text, &inner);
        }
        field_err(
            path,
            // "." is the whole document, "?" a place serde could not name
            // (a syntax error): the message's line and column say where.
            if field == "." || field == "?" {
                "(document)"
            } else {
                &field
            },
            inner.to_string(),
        )
    })
}

/// A JSON syntax error as `file:line:column`, with the line it is on.
fn syntax_err(path: &Path, text: &str, e: &serde_json::Error) -> StoreError {
    let message = e.to_string();
    // serde_json ends its message with " at line L column C": said apart.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m)
        .to_string();
    let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    let mut shown: String = line.trim().chars().take(80).collect();
    if shown.len() < line.trim().len() {
        shown.push('…');
    }
    StoreError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
        text: if shown.is_empty() {
            "(an empty line)".into()
        } else {
            format!("`{shown}`")
        },
    }
}

/// Reads one cell file. The `phase` tag is read first, so that errors inside
/// the cell name their field (serde loses the path inside tagged enums).
pub fn read_cell(path: &Path) -> Result<Cell, StoreError> {
    let text = read_small_file(path).map_err(io_err(path))?;
    parse_cell(path, &text)
}

/// A file of a few hundred bytes, read without asking its size first.
/// `fs::read_to_string` sizes its buffer with a statx and an lseek: for the
/// tens of thousands of cell files of a large site, a sixth of the time
/// spent reading them. A larger file only takes more reads.
fn read_small_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(4096);
    // `Take` reads with std's default loop, which never asks for a size.
    fs::File::open(path)?
        .take(u64::MAX)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// [`read_cell`] of a file's text.
pub fn parse_cell(path: &Path, text: &str) -> Result<Cell, StoreError> {
    // The usual file in one pass, straight into its type. Anything it
    // refuses is read again below, by the path that names the field; a file
    // it takes is taken the same by that path (a unit test holds the two
    // together on mutated cells).
    if let Ok(cell) = serde_json::from_str::<Cell>(text) {
        validate_cell(path, &cell)?;
        return Ok(cell);
    }
    parse_cell_naming_fields(path, text)
}

/// A cell read through a `Value`, so that an error names its field: serde
/// loses the path inside a tagged enum.
fn parse_cell_naming_fields(path: &Path, text: &str) -> Result<Cell, StoreError> {
    let value: serde_json::Value = parse_json(path, text)?;
    let mut object = match value {
        serde_json::Value::Object(o) => o,
        _ => return Err(field_err(path, "(document)", "expected a JSON object")),
    };
    let phase = object.remove("phase");
    let cell = match phase.as_ref().and_then(|p| p.as_str()) {
        Some("prefill") => Cell::Prefill(from_value::<PrefillCell>(path, object)?),
        Some("decode") => Cell::Decode(from_value::<DecodeCell>(path, object)?),
        _ => {
            return Err(field_err(
                path,
                "phase",
                format!(
                    "expected \"prefill\" or \"decode\", found {}",
                    phase.map_or("nothing".to_string(), |p| p.to_string())
                ),
            ));
        }
    };
    validate_cell(path, &cell)?;
    Ok(cell)
}

fn from_value<T: DeserializeOwned>(
    path: &Path,
    object: serde_json::Map<String, serde_json::Value>,
) -> Result<T, StoreError> {
    serde_path_to_error::deserialize(serde_json::Value::Object(object)).map_err(|e| {
        let field = e.path().to_string();
        field_err(path, &field, e.into_inner().to_string())
    })
}

/// A data file's record checked for what serde cannot check
/// ([`crate::model::validate`]), the file named in the error.
fn checked(path: &Path, result: Result<(), Invalid>) -> Result<(), StoreError> {
    result.map_err(|e| field_err(path, &e.field, e.message))
}

fn validate_meta(path: &Path, meta: &RunMeta) -> Result<(), StoreError> {
    checked(path, validate::meta(meta))
}

/// Checks what serde cannot: figures that a status requires or forbids.
pub(crate) fn validate_cell(path: &Path, cell: &Cell) -> Result<(), StoreError> {
    checked(path, validate::cell(cell))
}

// ------------------------------------------------------------------ writing

/// Pretty JSON with a trailing newline: the one form every data file has.
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("data types serialize");
    text.push('\n');
    text
}

/// Writes a data file atomically (see `atomic::write_file`).
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), StoreError> {
    crate::store::atomic::write_file(path, contents).map_err(io_err(path))
}

/// Writes one cell into `run_dir/cells/` under its canonical name.
pub(crate) fn write_cell(run_dir: &Path, cell: &Cell) -> Result<PathBuf, StoreError> {
    let path = run_dir.join(CELLS_DIR).join(cell.key().file_name());
    validate_cell(&path, cell)?;
    write_atomically(&path, to_json(cell).as_bytes())?;
    Ok(path)
}

/// Writes `run.json` of a run directory.
pub(crate) fn write_meta(run_dir: &Path, meta: &RunMeta) -> Result<(), StoreError> {
    let path = run_dir.join(RUN_FILE);
    validate_meta(&path, meta)?;
    write_atomically(&path, to_json(meta).as_bytes())
}

/// Checks everything [`write_run`] would refuse, writing nothing: so that
/// several runs are written only when every one of them can be.
pub(crate) fn check_run(data_dir: &Path, run: &Run, force: bool) -> Result<(), StoreError> {
    check_run_id(&run.id)?;
    let target = data_dir.join(&run.id);
    if target.exists() && !force {
        return Err(StoreError::RunExists { path: target });
    }
    validate_meta(&target.join(RUN_FILE), &run.meta)?;
    for cell in &run.cells {
        validate_cell(&target.join(CELLS_DIR).join(cell.key().file_name()), cell)?;
    }
    check_records(&target, &run.paced)?;
    check_records(&target, &run.sessions)?;
    Ok(())
}

/// Writes a whole run as `data_dir/<id>/`. The run is assembled in a hidden
/// folder and renamed into place; an existing run is replaced only with `force`.
pub(crate) fn write_run(data_dir: &Path, run: &Run, force: bool) -> Result<PathBuf, StoreError> {
    check_run(data_dir, run, force)?;
    let target = data_dir.join(&run.id);
    fs::create_dir_all(data_dir).map_err(io_err(data_dir))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-", run.id))
        .tempdir_in(data_dir)
        .map_err(io_err(data_dir))?;
    write_meta(staging.path(), &run.meta)?;
    let mut seen = HashSet::new();
    for cell in &run.cells {
        if !seen.insert(cell.key()) {
            let path = target.join(CELLS_DIR).join(cell.key().file_name());
            return Err(StoreError::DuplicateCell {
                first: path.clone(),
                second: path,
                key: describe_key(cell),
            });
        }
        write_cell(staging.path(), cell)?;
    }
    write_records(staging.path(), &run.paced)?;
    write_records(staging.path(), &run.sessions)?;
    if let Some(notes) = &run.notes_markdown {
        write_atomically(&staging.path().join(NOTES_FILE), notes.as_bytes())?;
    }
    let staged = staging.keep();
    crate::store::atomic::replace_dir(&staged, &target).map_err(|e| {
        let _ = fs::remove_dir_all(&staged);
        io_err(&target)(e)
    })?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    const META: &str = r#"{"schema_version":1,"model":"M","served_model":"m",
        "hardware":{"gpu":"H200 SXM","gpu_count":4},
        "engine":{"name":"vllm"},
        "run":{"decode_test":"fixed_duration","prefill_mode":"decode_warmup",
               "seconds_per_measurement":30,"max_output_tokens":4096}}"#;

    /// A temporary run folder with a valid run.json.
    fn run_folder() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("r1");
        write(&run, RUN_FILE, META);
        (tmp, run)
    }

    #[test]
    fn a_bad_field_is_named_with_its_file_and_expectation() {
        let (_tmp, run) = run_folder();
        let cell = write(
            &run,
            "cells/decode-1.json",
            r#"{"phase":"decode","context_tokens":8192,"concurrency":"four","status":"valid"}"#,
        );
        let err = load_run(&run).unwrap_err().to_string();
        assert!(err.starts_with(&cell.display().to_string()), "{err}");
        assert!(err.contains("`concurrency`"), "{err}");
        assert!(err.contains("expected u32"), "{err}");
    }

    #[test]
    fn a_valid_decode_cell_without_throughput_is_rejected() {
        let (_tmp, run) = run_folder();
        write(
            &run,
            "cells/d.json",
            r#"{"phase":"decode","context_tokens":8192,"concurrency":4,"status":"valid"}"#,
        );
        let err = load_run(&run).unwrap_err().to_string();
        assert!(err.contains("`total_tok_per_s`: expected a value"), "{err}");
    }

    #[test]
    fn an_error_cell_needs_a_reason_and_over_capacity_no_figures() {
        let (_tmp, run) = run_folder();
        let p = write(
            &run,
            "cells/d.json",
            r#"{"phase":"decode","context_tokens":8192,"concurrency":4,"status":"error"}"#,
        );
        assert!(load_run(&run).unwrap_err().to_string().contains("`reason`"));
        fs::write(
            &p,
            r#"{"phase":"decode","context_tokens":8192,"concurrency":4,"status":"over_capacity","total_tok_per_s":5}"#,
        )
        .unwrap();
        assert!(
            load_run(&run)
                .unwrap_err()
                .to_string()
                .contains("expected no value")
        );
    }

    #[test]
    fn unknown_phase_unknown_field_and_wrong_schema_version_are_errors() {
        let (_tmp, run) = run_folder();
        let p = write(
            &run,
            "cells/x.json",
            r#"{"phase":"warmup","context_tokens":1}"#,
        );
        let e = load_run(&run).unwrap_err().to_string();
        assert!(
            e.contains("`phase`: expected \"prefill\" or \"decode\", found \"warmup\""),
            "{e}"
        );
        fs::write(&p, r#"{"phase":"prefill","context_tokens":1,"status":"valid","prompt_tok_per_s":1,"ttft_ms":1,"ttft":3}"#).unwrap();
        let e = load_run(&run).unwrap_err().to_string();
        assert!(e.contains("unknown field `ttft`"), "{e}");
        fs::remove_file(&p).unwrap();
        write(
            &run,
            RUN_FILE,
            &META.replace("\"schema_version\":1", "\"schema_version\":9"),
        );
        let e = load_run(&run).unwrap_err().to_string();
        assert!(
            e.contains("run.json: field `schema_version`: expected 1, found 9"),
            "{e}"
        );
    }

    #[test]
    fn broken_json_names_the_document_line_and_column() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("r1");
        let p = write(&run, RUN_FILE, "{ not json");
        let e = load_run(&run).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}:1:3: not valid JSON: key must be a string; the line reads: `{{ not json`",
                p.display()
            )
        );
        // A missing comma two lines down: that line, said as it reads.
        let p = write(
            &run,
            RUN_FILE,
            "{\n  \"schema_version\": 1\n  \"model\": \"x\"\n}\n",
        );
        let e = load_run(&run).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}:3:3: not valid JSON: expected `,` or `}}`; the line reads: `\"model\": \"x\"`",
                p.display()
            )
        );
    }

    #[test]
    fn a_missing_data_folder_names_the_flag_and_init() {
        let tmp = tempfile::tempdir().unwrap();
        let e = load_runs(&tmp.path().join("data")).unwrap_err().to_string();
        assert!(e.ends_with("data: no such folder; pass --data with the folder that holds your runs, or run `sitegen init` to set up a results folder (its data/ has an example run)"), "{e}");
    }

    #[test]
    fn two_files_for_one_cell_are_an_error_naming_both() {
        let (_tmp, run) = run_folder();
        let body = r#"{"phase":"prefill","context_tokens":8192,"status":"valid","prompt_tok_per_s":1,"ttft_ms":1}"#;
        write(&run, "cells/a.json", body);
        write(&run, "cells/b.json", body);
        let e = load_run(&run).unwrap_err().to_string();
        assert!(e.contains("a.json") && e.contains("b.json"), "{e}");
    }

    #[test]
    fn write_run_refuses_to_overwrite_without_force_and_replaces_with_it() {
        let tmp = tempfile::tempdir().unwrap();
        let meta: RunMeta = serde_json::from_str(META).unwrap();
        let mut run = Run {
            id: "r1".into(),
            meta,
            cells: vec![],
            paced: vec![],
            sessions: vec![],
            notes_markdown: Some("hello".into()),
        };
        write_run(tmp.path(), &run, false).unwrap();
        assert!(matches!(
            write_run(tmp.path(), &run, false),
            Err(StoreError::RunExists { .. })
        ));
        run.notes_markdown = None;
        write_run(tmp.path(), &run, true).unwrap();
        let back = load_run(&tmp.path().join("r1")).unwrap();
        assert_eq!(back, run);
        // No temporary folders are left behind.
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("r1")]);
    }

    #[test]
    fn run_ids_are_url_safe() {
        assert!(check_run_id("glm-5.3-flash-h200x4-vllm").is_ok());
        for bad in ["", ".hidden", "A", "a/b", "a b", "..", "é"] {
            assert!(check_run_id(bad).is_err(), "{bad:?}");
        }
    }

    /// The one-pass read of a cell takes what the field-naming read takes,
    /// as the same cell, and refuses the rest with that read's error: over
    /// the bundled cells with every key dropped, doubled, or given a value of
    /// each JSON type and each status.
    #[test]
    fn a_cell_is_read_alike_in_one_pass_and_naming_its_fields() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let values = [
            "null",
            "true",
            "0",
            "1",
            "-1",
            "1.5",
            "1e400",
            "18446744073709551616",
            "\"x\"",
            "[]",
            "{}",
            "\"valid\"",
            "\"requests_queued\"",
            "\"over_capacity\"",
            "\"looped\"",
            "\"error\"",
            "\"prefill\"",
            "\"decode\"",
        ];
        let (mut cells, mut taken) = (0, 0);
        for run in fs::read_dir(&data).unwrap() {
            let cells_dir = run.unwrap().path().join(CELLS_DIR);
            for (path, _) in json_files(&cells_dir, false).unwrap() {
                let text = fs::read_to_string(&path).unwrap();
                let serde_json::Value::Object(object) = serde_json::from_str(&text).unwrap() else {
                    panic!("{}: not an object", path.display())
                };
                let keys: Vec<String> = object.keys().cloned().collect();
                let mut variants = vec![text.clone()];
                for key in &keys {
                    let mut dropped = object.clone();
                    dropped.remove(key);
                    variants.push(serde_json::Value::Object(dropped).to_string());
                    for value in values {
                        let inner = text.trim_end().trim_end_matches('}');
                        // Doubled: serde_json's map keeps the last.
                        variants.push(format!("{inner}, \"{key}\": {value}}}"));
                        let mut changed = object.clone();
                        changed
                            .insert(key.clone(), serde_json::from_str(value).unwrap_or_default());
                        variants.push(serde_json::Value::Object(changed).to_string());
                    }
                }
                for variant in &variants {
                    cells += 1;
                    let shown = |r: Result<Cell, StoreError>| match r {
                        Ok(cell) => format!("{cell:?}"),
                        Err(e) => format!("error: {e}"),
                    };
                    let one_pass = shown(parse_cell(&path, variant));
                    taken += usize::from(!one_pass.starts_with("error"));
                    assert_eq!(
                        one_pass,
                        shown(parse_cell_naming_fields(&path, variant)),
                        "{variant}"
                    );
                }
            }
        }
        // Both kinds of outcome were met, or the test proves nothing.
        assert!(
            taken > 100 && cells - taken > 1000,
            "{taken} of {cells} taken"
        );
    }
}
