//! `sitegen build`: data folder -> validated runs -> rendered site -> output folder.

use std::path::Path;

use anyhow::Context;

use crate::render::Site;
use crate::{compare, output, render, store};

/// What a build produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildSummary {
    pub runs: usize,
    pub files: usize,
}

/// Reads and checks every run under `data_dir` and renders the site in memory.
pub fn render_data(data_dir: &Path) -> anyhow::Result<(Site, BuildSummary)> {
    let runs = store::load_runs(data_dir)
        .with_context(|| format!("reading runs from {}", data_dir.display()))?;
    let file = store::load_comparisons(data_dir)?;
    let comparisons = compare::plan(&runs, &file)
        .with_context(|| format!("{}", data_dir.join(store::COMPARISONS_FILE).display()))?;
    let site = render::render_site(&runs, &comparisons)?;
    let summary = BuildSummary {
        runs: runs.len(),
        files: site.files.len(),
    };
    Ok((site, summary))
}

/// Builds the site from `data_dir` into `out`. Everything is read, checked and
/// rendered before the first byte is written.
pub fn build_site(data_dir: &Path, out: &Path) -> anyhow::Result<BuildSummary> {
    let (site, summary) = render_data(data_dir)?;
    output::write_site(&site, out)?;
    Ok(summary)
}
