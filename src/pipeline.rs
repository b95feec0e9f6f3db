//! `sitegen build`: data folder -> validated runs -> rendered site -> output folder.

use std::path::Path;

use crate::render::Site;
use crate::store::StoreError;
use crate::{compare, output, render, store};

/// What a build produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSummary {
    pub runs: usize,
    pub files: usize,
    /// Things that do not stop the build but leave something out (a run
    /// with unknown hardware is not paired automatically), one line each.
    pub warnings: Vec<String>,
}

/// How to build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Build an empty site from a data folder without runs, instead of
    /// refusing: by default an empty folder is a mistake (a wrong path, a
    /// checkout without data) that would publish an empty site.
    pub allow_empty: bool,
}

/// Reads and checks every run under `data_dir` and renders the site in
/// memory. Every problem of the data is reported together.
pub(crate) fn render_data(
    data_dir: &Path,
    opts: BuildOptions,
) -> anyhow::Result<(Site, BuildSummary)> {
    let runs = store::load_runs(data_dir);
    let file = store::load_comparisons(data_dir);
    let prices = store::load_prices(data_dir);
    let (runs, file, prices) = match (runs, file, prices) {
        (Ok(runs), Ok(file), Ok(prices)) => (runs, file, prices),
        (runs, file, prices) => {
            let errors = [runs.err(), file.err(), prices.err()]
                .into_iter()
                .flatten()
                .collect();
            return Err(StoreError::from_list(errors).expect("one failed").into());
        }
    };
    if runs.is_empty() && !opts.allow_empty {
        return Err(StoreError::NoRuns {
            path: data_dir.to_path_buf(),
        }
        .into());
    }
    let comparisons = compare::plan(&runs, &file).map_err(|e| {
        anyhow::anyhow!("{}: {e}", data_dir.join(store::COMPARISONS_FILE).display())
    })?;
    let site = render::render_site(&runs, &comparisons, &prices)?;
    let summary = BuildSummary {
        runs: runs.len(),
        files: site.files.len(),
        warnings: compare::unpaired_warnings(&runs),
    };
    Ok((site, summary))
}

/// Builds the site from `data_dir` into `out`. Everything is read, checked and
/// rendered before the first byte is written.
pub fn build_site(data_dir: &Path, out: &Path) -> anyhow::Result<BuildSummary> {
    build_site_with(data_dir, out, BuildOptions::default())
}

/// [`build_site`] with options.
pub fn build_site_with(
    data_dir: &Path,
    out: &Path,
    opts: BuildOptions,
) -> anyhow::Result<BuildSummary> {
    let (site, summary) = render_data(data_dir, opts)?;
    output::write_site(&site, out)?;
    Ok(summary)
}
