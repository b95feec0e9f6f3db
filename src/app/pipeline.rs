//! `sitegen build`: data folder -> validated runs -> rendered site -> output folder.

use std::path::Path;

use crate::store::StoreError;
use crate::{app::output, compare, store};

/// What a build produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSummary {
    pub runs: usize,
    pub files: usize,
    /// Of `files`, those taken unchanged from the previous build (src/app/reuse.rs).
    pub reused: usize,
    /// Of `runs`, those whose files were as the previous build read them,
    /// read from its copy (src/store/kept.rs).
    pub runs_unchanged: usize,
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
    /// The rule each series' runs are judged by.
    pub rule: crate::judge::change::Rule,
    /// Render every file, taking none from the previous build (src/app/reuse.rs).
    pub fresh: bool,
}

/// The data of a build, read and checked, with its series judged.
pub struct Loaded {
    pub runs: Vec<crate::model::Run>,
    /// Every setup measured more than once, each run judged (src/judge/change.rs).
    pub series: Vec<crate::judge::series::Series>,
    pub comparisons: Vec<compare::plan::Comparison>,
    pub(crate) prices: crate::model::PricesFile,
    /// The latency budgets capacity is judged at (`data/slo.json`, or the defaults).
    pub slo: crate::model::slo::SloFile,
    /// Runs left out of the site, each with why.
    pub left_out: Vec<String>,
    /// What the data was read from, for taking unchanged parts from the
    /// previous build; none when the build renders everything.
    pub digests: Option<crate::app::reuse::Digests>,
}

impl Loaded {
    /// What the site is rendered from.
    pub(crate) fn inputs(&self) -> crate::app::site::Inputs<'_> {
        crate::app::site::Inputs {
            runs: &self.runs,
            series: &self.series,
            comparisons: &self.comparisons,
            prices: &self.prices,
            slo: &self.slo,
            rows: None,
        }
    }
}

/// Reads and checks every run under `data_dir`. Every problem of the data is
/// reported together.
pub fn load(data_dir: &Path, opts: BuildOptions) -> anyhow::Result<Loaded> {
    load_over(data_dir, opts, None)
}

/// [`load`] for a build into `out`: where `out` holds a site, each run whose
/// files are as the last build there read them is read from its copy
/// (src/store/kept.rs), one file instead of each of its files, and copies
/// are kept for the next build.
pub fn load_over(
    data_dir: &Path,
    opts: BuildOptions,
    out: Option<&Path>,
) -> anyhow::Result<Loaded> {
    // The data folder's own files hashed before they are read: one edited
    // between the two is then read newer than hashed, and the next build
    // renders again what it touches rather than keep pages made from it.
    // (A run's digest is of the very bytes parsed.)
    // A build that renders everything hashes nothing.
    let digest = !opts.fresh;
    let data_digest = if digest && data_dir.is_dir() {
        Some(store::data_files_digest(data_dir)?)
    } else {
        None
    };
    // Copies of the runs are kept only in a folder that holds a site
    // already, one likely built over again: a build into a new folder (a CI
    // job's clean checkout) neither holds nor writes them.
    let kept_dir = out
        .filter(|out| out.join(output::MARKER).is_file())
        .map(|out| out.join(crate::app::reuse::KEPT_RUNS));
    let runs = store::read_runs(data_dir, digest, kept_dir.as_deref());
    let file = store::load_comparisons(data_dir);
    let prices = store::load_prices(data_dir);
    let slo = store::load_slo(data_dir);
    let (runs, file, prices, slo) = match (runs, file, prices, slo) {
        (Ok(runs), Ok(file), Ok(prices), Ok(slo)) => (runs, file, prices, slo),
        (runs, file, prices, slo) => {
            let errors = [runs.err(), file.err(), prices.err(), slo.err()]
                .into_iter()
                .flatten()
                .collect();
            return Err(StoreError::from_list(errors).expect("one failed").into());
        }
    };
    let mut run_digests = std::collections::HashMap::new();
    let mut kept = Vec::new();
    let runs = runs
        .into_iter()
        .map(|read| {
            if let Some(digest) = read.digest {
                run_digests.insert(read.run.id.clone(), digest);
            }
            if let Some(copy) = read.kept {
                kept.push((read.run.id.clone(), copy));
            }
            read.run
        })
        .collect();
    let mut loaded =
        assemble(data_dir, runs, &file, prices, slo, opts, &[]).map_err(|refused| refused.error)?;
    loaded.digests = data_digest.map(|data| crate::app::reuse::Digests {
        data,
        runs: run_digests,
        options: format!("{opts:?}"),
        kept,
    });
    Ok(loaded)
}

/// Why runs could not be put together, with the runs handed back (what
/// `sitegen serve` holds must not be lost to a broken edit).
pub(crate) struct Refused {
    pub error: anyhow::Error,
    pub runs: Vec<crate::model::Run>,
}

/// The runs read (sorted by id) put together with the comparisons file,
/// prices and latency budgets: runs without anything to show left out,
/// comparisons planned, series judged. `earlier` are the series of a build
/// before this one (`sitegen serve`): a series' judgements are kept up to
/// its first run that changed, as judging them again would give them.
pub(crate) fn assemble(
    data_dir: &Path,
    mut runs: Vec<crate::model::Run>,
    file: &crate::model::ComparisonsFile,
    prices: crate::model::PricesFile,
    slo: crate::model::slo::SloFile,
    opts: BuildOptions,
    earlier: &[crate::judge::series::Earlier],
) -> Result<Loaded, Refused> {
    // A run without a cell, a paced point or a sessions window (a run that
    // failed before measuring) has nothing to show: left out, and said.
    let mut left_out = Vec::new();
    runs.retain(|r| {
        let empty = r.cells.is_empty() && r.paced.is_empty() && r.sessions.is_empty();
        if empty {
            left_out.push(format!(
                "run {}: left out of the site: it has no cell, paced point or sessions window (delete {} or measure it)",
                r.id,
                data_dir.join(&r.id).display()
            ));
        }
        !empty
    });
    if runs.is_empty() && !opts.allow_empty {
        let error = StoreError::NoRuns {
            path: data_dir.to_path_buf(),
        }
        .into();
        return Err(Refused { error, runs });
    }
    let (comparisons, series) = match planned_and_judged(data_dir, &runs, file, opts, earlier) {
        Ok(done) => done,
        Err(error) => return Err(Refused { error, runs }),
    };
    Ok(Loaded {
        runs,
        series,
        comparisons,
        prices,
        slo,
        left_out,
        digests: None,
    })
}

/// The comparisons of `runs` and their series, judged.
fn planned_and_judged(
    data_dir: &Path,
    runs: &[crate::model::Run],
    file: &crate::model::ComparisonsFile,
    opts: BuildOptions,
    earlier: &[crate::judge::series::Earlier],
) -> anyhow::Result<(
    Vec<compare::plan::Comparison>,
    Vec<crate::judge::series::Series>,
)> {
    let comparisons = compare::plan::plan(runs, file).map_err(|e| {
        anyhow::anyhow!("{}: {e}", data_dir.join(store::COMPARISONS_FILE).display())
    })?;
    let changes = store::load_changes(data_dir, runs)?;
    let series = crate::judge::series::series_after(runs, &changes, &opts.rule, earlier);
    // A change noted for a series that is not there would start no baseline: said, not dropped.
    for (i, change) in changes.changes.iter().enumerate() {
        if let Some(slug) = &change.series
            && !series.iter().any(|s| &s.slug == slug)
        {
            let known: Vec<&str> = series.iter().map(|s| s.slug.as_str()).collect();
            anyhow::bail!(
                "{}: changes[{i}].series: no series {slug:?} (a setup measured more than once; series: {})",
                data_dir.join(store::CHANGES_FILE).display(),
                if known.is_empty() {
                    "none yet".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    Ok((comparisons, series))
}

/// What a build made of loaded data, `files` of them written.
fn summary_of(data: &Loaded, files: usize, reused: usize) -> BuildSummary {
    BuildSummary {
        runs: data.runs.len(),
        files,
        reused,
        runs_unchanged: data.digests.as_ref().map_or(0, |d| {
            d.kept
                .iter()
                .filter(|(_, copy)| matches!(copy, crate::store::kept::KeptRun::Unchanged(_)))
                .count()
        }),
        warnings: data
            .left_out
            .iter()
            .cloned()
            .chain(compare::plan::unpaired_warnings(&data.runs))
            .collect(),
    }
}

/// Builds the site from `data_dir` into `out`. Everything is read and checked
/// before the first byte is written; pages are written to a staging folder as
/// they are rendered (memory stays flat as the site grows) and the folder
/// replaces `out` only when the whole site is there.
pub fn build_site(data_dir: &Path, out: &Path) -> anyhow::Result<BuildSummary> {
    build_site_with(data_dir, out, BuildOptions::default())
}

/// [`build_site`] with options.
pub fn build_site_with(
    data_dir: &Path,
    out: &Path,
    opts: BuildOptions,
) -> anyhow::Result<BuildSummary> {
    write_site(&load_over(data_dir, opts, Some(out))?, out)
}

/// Renders data already read into `out` (`build --check` reads once for both).
pub fn write_site(data: &Loaded, out: &Path) -> anyhow::Result<BuildSummary> {
    let mut writer = output::SiteWriter::new(out)?;
    let written =
        crate::app::reuse::write_site(&data.inputs(), data.digests.as_ref(), &mut writer)?;
    writer.finish()?;
    Ok(summary_of(data, written.files, written.reused))
}
