//! Which comparisons get a page: every set data/comparisons.json names,
//! then pairs of runs on the same hardware that share a valid cell; and the
//! setup a run measures (the key of its series).

use std::collections::BTreeMap;

use super::findings::prefill_ratios;
use super::grid::RatioGrid;
use super::ratio::Basis;
use crate::model::{ComparisonsFile, Run};

/// Runs of one hardware (GPU model and count) get a page per pair while the
/// hardware has at most this many runs, so pages grow linearly with data.
pub(crate) const DEFAULT_AUTO_PAIR_LIMIT: usize = 6;

pub(crate) const MIN_RUNS_PER_COMPARISON: usize = 2;

pub(crate) const MAX_RUNS_PER_COMPARISON: usize = 6;

/// A comparison page to render.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// URL slug: the run ids joined by "--" (`compare/<a>--<b>/`).
    pub id: String,
    pub title: String,
    /// Indexes into the build's runs; the first is the baseline of ratios.
    pub runs: Vec<usize>,
    pub note_markdown: Option<String>,
}

/// Why a comparisons file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComparisonError {
    #[error(
        "comparison {index} ({title:?}): run {run:?} is not in the data folder (runs: {known})"
    )]
    UnknownRun {
        index: usize,
        title: String,
        run: String,
        known: String,
    },
    #[error(
        "comparison {index} ({title:?}): expected {MIN_RUNS_PER_COMPARISON} to {MAX_RUNS_PER_COMPARISON} different runs, found {found}"
    )]
    WrongSize {
        index: usize,
        title: String,
        found: usize,
    },
    #[error(
        "comparisons {first} ({first_title:?}) and {second} ({second_title:?}) list the same runs ({runs}): keep one"
    )]
    Duplicate {
        first: usize,
        first_title: String,
        second: usize,
        second_title: String,
        runs: String,
    },
}

/// Every problem of a comparisons file, one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonErrors(pub Vec<ComparisonError>);

impl std::fmt::Display for ComparisonErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} problems:", many.len())?;
                many.iter().try_for_each(|e| write!(f, "\n  - {e}"))
            }
        }
    }
}

impl std::error::Error for ComparisonErrors {}

/// Why a run's hardware is not known well enough to pair it with another
/// run "on the same hardware": `None` when GPU and engine are known.
pub(crate) fn unknown_hardware(run: &Run) -> Option<&'static str> {
    let unknown = |v: &str| v.trim().is_empty() || v.eq_ignore_ascii_case(crate::model::UNKNOWN);
    if unknown(&run.meta.hardware.gpu) {
        Some(
            "its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)",
        )
    } else if unknown(&run.meta.engine.name) {
        Some(
            "its engine is unknown: pass --engine to sitegen run, or set engine.name in run.json (or with --meta)",
        )
    } else {
        None
    }
}

/// The setup a run measures (model, GPU, GPU count, quantization): runs of
/// one setup form a series, which compares them over time. Runs of unknown
/// hardware belong to none.
pub(crate) type SetupKey = (String, String, u32, String);

pub(crate) fn setup_key(run: &Run) -> Option<SetupKey> {
    unknown_hardware(run).is_none().then(|| {
        (
            run.meta.model.clone(),
            run.meta.hardware.gpu.clone(),
            run.meta.hardware.gpu_count,
            run.meta.engine.quantization.clone().unwrap_or_default(),
        )
    })
}

/// Whether two runs have anything a comparison can set side by side: a
/// decode cell both ran validly (contexts within 2% paired), or a prefill
/// context both measured validly.
pub(crate) fn comparable(a: &Run, b: &Run) -> bool {
    RatioGrid::between(a, b, Basis::Total)
        .ratios()
        .next()
        .is_some()
        || !prefill_ratios(a, b).is_empty()
}

/// One warning per run left out of automatic pairing for unknown hardware.
pub(crate) fn unpaired_warnings(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| {
            unknown_hardware(r)
                .map(|why| format!("run {}: not compared automatically: {why}", r.id))
        })
        .collect()
}

/// The comparisons to render: every set of the file, then every pair of runs
/// on the same hardware while that hardware has at most the limit of runs,
/// where the two share a valid cell and are not runs of one setup (those
/// compare on their series page).
pub fn plan(runs: &[Run], file: &ComparisonsFile) -> Result<Vec<Comparison>, ComparisonErrors> {
    let index_of = |id: &str| runs.iter().position(|r| r.id == id);
    let mut out: Vec<Comparison> = Vec::new();
    let mut errors = Vec::new();
    // (entry number, title, its runs as a sorted set), for duplicates.
    let mut seen: Vec<(usize, &str, Vec<usize>)> = Vec::new();
    for (i, set) in file.comparisons.iter().enumerate() {
        let mut idx = Vec::new();
        let mut unknown = false;
        for id in &set.runs {
            match index_of(id) {
                Some(found) if !idx.contains(&found) => idx.push(found),
                Some(_) => {}
                None => {
                    unknown = true;
                    errors.push(ComparisonError::UnknownRun {
                        index: i + 1,
                        title: set.title.clone(),
                        run: id.clone(),
                        known: runs
                            .iter()
                            .map(|r| r.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            }
        }
        if unknown {
            continue;
        }
        if idx.len() < MIN_RUNS_PER_COMPARISON
            || idx.len() > MAX_RUNS_PER_COMPARISON
            || idx.len() != set.runs.len()
        {
            errors.push(ComparisonError::WrongSize {
                index: i + 1,
                title: set.title.clone(),
                found: idx.len(),
            });
            continue;
        }
        let mut members = idx.clone();
        members.sort_unstable();
        if let Some((first, first_title, _)) = seen.iter().find(|(_, _, m)| *m == members) {
            errors.push(ComparisonError::Duplicate {
                first: *first,
                first_title: first_title.to_string(),
                second: i + 1,
                second_title: set.title.clone(),
                runs: set.runs.join(", "),
            });
            continue;
        }
        seen.push((i + 1, &set.title, members));
        out.push(Comparison {
            id: slug(runs, &idx),
            title: set.title.clone(),
            runs: idx,
            note_markdown: set.note.clone(),
        });
    }
    let limit = file.auto_pair_limit.unwrap_or(DEFAULT_AUTO_PAIR_LIMIT);
    if !errors.is_empty() {
        return Err(ComparisonErrors(errors));
    }
    let mut by_hardware: BTreeMap<(String, u32), Vec<usize>> = BTreeMap::new();
    // Only runs whose hardware is known are "on the same hardware".
    for (i, r) in runs
        .iter()
        .enumerate()
        .filter(|(_, r)| unknown_hardware(r).is_none())
    {
        by_hardware
            .entry((r.meta.hardware.gpu.clone(), r.meta.hardware.gpu_count))
            .or_default()
            .push(i);
    }
    // Runs of one model told apart in titles ("GLM (vllm 0.28) vs GLM (vllm 0.29)").
    let names = crate::model::labels::distinct_names(&runs.iter().collect::<Vec<_>>());
    for members in by_hardware
        .values()
        .filter(|m| m.len() >= 2 && m.len() <= limit)
    {
        for (n, &a) in members.iter().enumerate() {
            for &b in &members[n + 1..] {
                let covered = out
                    .iter()
                    .any(|c| c.runs.len() == 2 && c.runs.contains(&a) && c.runs.contains(&b));
                let one_setup = setup_key(&runs[a]) == setup_key(&runs[b]);
                if !covered && !one_setup && comparable(&runs[a], &runs[b]) {
                    out.push(Comparison {
                        id: slug(runs, &[a, b]),
                        title: format!("{} vs {}", names[a], names[b]),
                        runs: vec![a, b],
                        note_markdown: None,
                    });
                }
            }
        }
    }
    out.sort_by(|x, y| x.id.cmp(&y.id));
    out.dedup_by(|x, y| x.id == y.id);
    Ok(out)
}

fn slug(runs: &[Run], idx: &[usize]) -> String {
    idx.iter()
        .map(|&i| runs[i].id.as_str())
        .collect::<Vec<_>>()
        .join("--")
}
