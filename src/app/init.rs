//! `sitegen init DIR`: sets up a results repository: `data/` with an example
//! run, a GitHub Pages workflow that builds with a released sitegen through
//! this repository's action, a `.gitignore` for `site/` and a README.
//!
//! Every file is planned in memory first, so a refusal (a non-empty folder
//! without `--force`) writes nothing; each file is then created with
//! "create new" semantics, so a file that is already there is never replaced,
//! `--force` or not.

use std::path::{Path, PathBuf};

use anyhow::Context;
use askama::Template;

/// Where sitegen is published: Cargo.toml's `repository`, the one place that
/// names it (the action, the installer and the docs links derive from it).
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The version `init` writes into the workflow: this binary's own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The example run: the published Step-3.5-Flash reference page, imported
/// through the page importer as `sitegen ingest page` would.
const EXAMPLE_PAGE: &str =
    include_str!("../../tests/fixtures/pages/step-3.5-flash-h200x4-vllm-0.29.0.txt");
const EXAMPLE_SOURCE: &str = "step-3.5-flash-h200x4-vllm-0.29.0.txt";
pub const EXAMPLE_RUN_ID: &str = "example-step-3.5-flash-h200x4-vllm";

pub struct InitOptions {
    pub dir: PathBuf,
    /// Leave `data/` empty instead of adding the example run.
    pub allow_empty: bool,
    /// Write into a folder that already holds files, adding only the files
    /// that are missing.
    pub force: bool,
}

/// What `init` did, file by file, relative to the folder.
#[derive(Debug, Default)]
pub struct InitReport {
    pub written: Vec<PathBuf>,
    /// Files `init` would have written that were already there, left as they were.
    pub kept: Vec<PathBuf>,
    /// The commands to run next.
    pub next: String,
    /// Things the user should know: e.g. a kept `.gitignore` that does not ignore `site/`.
    pub warnings: Vec<String>,
}

impl InitReport {
    /// One line per file written or kept, a run folder's files on one line.
    pub fn lines(&self, dir: &Path) -> Vec<String> {
        let mut lines = Vec::new();
        for (verb, paths) in [
            ("wrote", &self.written),
            ("kept (already there)", &self.kept),
        ] {
            let mut runs: Vec<(PathBuf, usize)> = Vec::new();
            for path in paths {
                // data/<run-id>/... is told as its run folder.
                let run = path.starts_with("data") && path.components().count() > 2;
                if run {
                    let folder: PathBuf = path.components().take(2).collect();
                    match runs.last_mut() {
                        Some((last, n)) if *last == folder => *n += 1,
                        _ => runs.push((folder, 1)),
                    }
                } else {
                    lines.push(format!("{verb} {}", dir.join(path).display()));
                }
            }
            for (folder, n) in runs {
                lines.push(format!(
                    "{verb} {}/ ({})",
                    dir.join(folder).display(),
                    crate::model::format::counted(n, "file")
                ));
            }
        }
        lines
    }
}

/// `owner/name` of the action, from [`REPOSITORY`] (`https://github.com/owner/name`).
pub fn action_name() -> &'static str {
    REPOSITORY
        .strip_prefix("https://github.com/")
        .unwrap_or(REPOSITORY)
        .trim_end_matches('/')
}

#[derive(Template)]
#[template(path = "init/pages.yml")]
struct PagesWorkflow<'a> {
    action: &'a str,
    version: &'a str,
    allow_empty: bool,
}

#[derive(Template)]
#[template(path = "init/README.md")]
struct Readme<'a> {
    repository: &'a str,
    version: &'a str,
    example: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "init/gitignore", escape = "none")]
struct GitIgnore;

/// One file `init` writes: its path inside the folder and its contents.
struct Planned {
    path: PathBuf,
    contents: Vec<u8>,
}

pub fn init(opts: &InitOptions) -> anyhow::Result<InitReport> {
    let dir = &opts.dir;
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("{}: exists and is not a folder", dir.display());
    }
    let present = entries(dir)?;
    if !present.is_empty() && !opts.force {
        anyhow::bail!(
            "{}: the folder is not empty (it holds {}); sitegen init sets up a new or \
             empty folder. --force adds the files that are missing and leaves every file \
             that is there as it is",
            dir.display(),
            present.join(", ")
        );
    }
    let data_has_runs = !entries(&dir.join("data"))?.is_empty();
    let example = (!opts.allow_empty && !data_has_runs).then_some(EXAMPLE_RUN_ID);
    // An empty data/ builds only with allow-empty, in the workflow too.
    let empty_data = example.is_none() && !data_has_runs;
    let plan = plan(example, empty_data)?;

    let mut report = InitReport::default();
    if data_has_runs && !opts.allow_empty {
        report
            .warnings
            .push("data/ already holds runs: no example run added".into());
    }
    for file in plan {
        let path = dir.join(&file.path);
        match crate::store::atomic::create_file(&path, &file.contents) {
            Ok(()) => report.written.push(file.path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => report.kept.push(file.path),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("{}: cannot write the file", path.display()));
            }
        }
    }
    // Both refuse an empty data folder unless told.
    let flag = if empty_data { " --allow-empty" } else { "" };
    report.next = format!(
        "next: cd {} && sitegen build{flag} && sitegen serve{flag}; then push to GitHub \
         (README.md says how to add runs and publish)",
        dir.display()
    );
    let gitignore = dir.join(".gitignore");
    if report.kept.iter().any(|p| p == Path::new(".gitignore")) {
        let text = std::fs::read_to_string(&gitignore).unwrap_or_default();
        if !text.lines().any(|l| l.trim().trim_matches('/') == "site") {
            report.warnings.push(format!(
                "{}: kept as it was; add /site/ to it so that the built site is not committed",
                gitignore.display()
            ));
        }
    }
    Ok(report)
}

/// Names of what `dir` holds, sorted; none when it does not exist.
fn entries(dir: &Path) -> anyhow::Result<Vec<String>> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(e).with_context(|| format!("{}: cannot list the folder", dir.display()));
        }
    };
    let mut names = read
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}: cannot list the folder", dir.display()))?;
    names.sort();
    Ok(names)
}

/// Every file of a new results repository, in memory.
fn plan(example: Option<&str>, empty_data: bool) -> anyhow::Result<Vec<Planned>> {
    let action = action_name();
    // askama drops a template's last newline; a text file ends with one.
    let text = |path: &str, mut contents: String| {
        if !contents.is_empty() && !contents.ends_with('\n') {
            contents.push('\n');
        }
        Planned {
            path: PathBuf::from(path),
            contents: contents.into_bytes(),
        }
    };
    let mut files = vec![
        text(
            ".github/workflows/pages.yml",
            PagesWorkflow {
                action,
                version: VERSION,
                allow_empty: empty_data,
            }
            .render()?,
        ),
        text(".gitignore", GitIgnore.render()?),
        text(
            "README.md",
            Readme {
                repository: REPOSITORY,
                version: VERSION,
                example,
            }
            .render()?,
        ),
    ];
    if let Some(id) = example {
        files.extend(example_run(id)?);
    }
    if empty_data {
        // git keeps no empty folder.
        files.push(text("data/.gitkeep", String::new()));
    }
    Ok(files)
}

/// The example run's files, as the page importer writes them.
fn example_run(id: &str) -> anyhow::Result<Vec<Planned>> {
    let scratch = tempfile::tempdir().context("cannot make a temporary folder")?;
    let page = scratch.path().join(EXAMPLE_SOURCE);
    std::fs::write(&page, EXAMPLE_PAGE).context("cannot write the example page")?;
    let data = scratch.path().join("data");
    crate::ingest::import_pages(&[page], Some(id), &data, false)?;
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&data).sort_by_file_name() {
        let entry = entry?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(scratch.path())?.to_path_buf();
            files.push(Planned {
                path: rel,
                contents: std::fs::read(entry.path())?,
            });
        }
    }
    Ok(files)
}
