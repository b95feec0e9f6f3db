//! Comparisons between runs: which sets get a page, and the pure figures a
//! comparison page shows (ratios with their reasons, Pareto frontiers,
//! capacity frontiers). No I/O.

pub mod cost;
pub mod words;

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ComparisonsFile, DecodeCell, Interval, Run, Status};

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

/// Why one run's cell cannot be compared: not measured, or its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    NotMeasured,
    Status(Status),
    /// Valid, but its window's energy was not recorded (an energy ratio).
    EnergyNotRecorded,
}

impl Unusable {
    /// "not measured", "queued", "over capacity", ...
    pub fn words(self) -> &'static str {
        match self {
            Unusable::NotMeasured => crate::compare::words::NOT_MEASURED,
            Unusable::Status(s) => s
                .not_compared_because()
                .unwrap_or(crate::compare::words::NOT_MEASURED),
            Unusable::EnergyNotRecorded => crate::compare::words::ENERGY_NOT_RECORDED,
        }
    }
}

/// Why a cell of a comparison has no ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRatio {
    /// The first run measured 0 tok/s.
    ZeroBase,
    /// One run's cell, or both, cannot be compared.
    Unusable {
        a: Option<Unusable>,
        b: Option<Unusable>,
    },
}

impl NoRatio {
    /// The reason as pages and CSV files say it, with the runs' names:
    /// "GLM over capacity", "both queued", "GLM queued, Step looped".
    pub fn reason(self, names: (&str, &str)) -> String {
        use crate::compare::words::{
            NO_RATIO_BOTH, NO_RATIO_EACH, NO_RATIO_ONE, NO_RATIO_ZERO_BASE, NOT_MEASURED, fill,
        };
        match self {
            NoRatio::ZeroBase => fill(NO_RATIO_ZERO_BASE, &[("a", names.0)]),
            NoRatio::Unusable {
                a: Some(a),
                b: Some(b),
            } if a.words() == b.words() => fill(NO_RATIO_BOTH, &[("x", a.words())]),
            NoRatio::Unusable {
                a: Some(a),
                b: Some(b),
            } => fill(
                NO_RATIO_EACH,
                &[
                    ("a", names.0),
                    ("x", a.words()),
                    ("b", names.1),
                    ("y", b.words()),
                ],
            ),
            NoRatio::Unusable {
                a: Some(a),
                b: None,
            } => fill(NO_RATIO_ONE, &[("name", names.0), ("x", a.words())]),
            NoRatio::Unusable {
                a: None,
                b: Some(b),
            } => fill(NO_RATIO_ONE, &[("name", names.1), ("x", b.words())]),
            NoRatio::Unusable { a: None, b: None } => NOT_MEASURED.into(),
        }
    }
}

/// A cell's throughput if it can be compared: measured and Valid.
pub(crate) fn valid_total(cell: Option<&DecodeCell>) -> Result<f64, Unusable> {
    let c = cell.ok_or(Unusable::NotMeasured)?;
    match c.status {
        Status::Valid => c.total_tok_per_s.ok_or(Unusable::NotMeasured),
        other => Err(Unusable::Status(other)),
    }
}

/// A cell's energy per output token if it can be compared: measured,
/// Valid and with its window's energy recorded.
pub(crate) fn valid_energy(cell: Option<&DecodeCell>) -> Result<f64, Unusable> {
    let c = cell.ok_or(Unusable::NotMeasured)?;
    match c.status {
        Status::Valid => c
            .joules_per_output_token()
            .filter(|j| *j > 0.0)
            .ok_or(Unusable::EnergyNotRecorded),
        other => Err(Unusable::Status(other)),
    }
}

/// `b`'s energy per output token over `a`'s at one cell, or why there is none.
pub(crate) fn energy_ratio(a: Option<&DecodeCell>, b: Option<&DecodeCell>) -> Result<f64, NoRatio> {
    match (valid_energy(a), valid_energy(b)) {
        (Ok(x), Ok(y)) => Ok(y / x),
        (a, b) => Err(NoRatio::Unusable {
            a: a.err(),
            b: b.err(),
        }),
    }
}

/// Whether a run recorded the energy of any decode window.
pub(crate) fn has_energy(run: &Run) -> bool {
    run.decode_cells()
        .any(|c| c.joules_per_output_token().is_some())
}

/// The runs of a comparison, each named so that a reader tells them apart
/// ([`crate::model::labels::distinct_names`]): two runs of one model become
/// "GLM-5.3-Flash (vllm 0.29.0)" and "GLM-5.3-Flash (vllm 0.30.0)" in every
/// sentence, heading and column that names them.
pub(crate) fn named_runs(runs: &[&Run]) -> Vec<Run> {
    crate::model::labels::distinct_names(runs)
        .into_iter()
        .zip(runs)
        .map(|(name, run)| {
            let mut named = (*run).clone();
            named.meta.model = name;
            named
        })
        .collect()
}

/// Where a run's energy came from and how it was found, for the line
/// under the energy matrices: "DCGM exporter http://…, as the growth of the
/// GPUs' energy counter over the window". `None` when it recorded none.
pub(crate) fn energy_sources(run: &Run) -> Option<String> {
    let mut sources: Vec<String> = run
        .decode_cells()
        .filter(|c| c.joules_per_output_token().is_some())
        .filter_map(|c| c.gpu_telemetry())
        .map(|g| match g.energy_from {
            Some(how) => format!("{}, as {}", g.source, how.label()),
            None => g.source.clone(),
        })
        .collect();
    sources.sort_unstable();
    sources.dedup();
    (!sources.is_empty()).then(|| crate::model::format::and_list(&sources))
}

/// The line under the energy matrices of one run: "GLM: energy from …", or
/// that it recorded none.
pub(crate) fn energy_note(run: &Run) -> String {
    use crate::compare::words as w;
    match energy_sources(run) {
        Some(sources) => w::fill(
            w::ENERGY_SOURCES,
            &[("name", &run.meta.model), ("sources", &sources)],
        ),
        None => w::fill(w::ENERGY_NONE, &[("name", &run.meta.model)]),
    }
}

/// The ratio of `b` to `a` at one cell, or why there is none.
pub fn ratio(a: Option<&DecodeCell>, b: Option<&DecodeCell>) -> Result<f64, NoRatio> {
    match (valid_total(a), valid_total(b)) {
        (Ok(x), Ok(y)) if x > 0.0 => Ok(y / x),
        (Ok(_), Ok(_)) => Err(NoRatio::ZeroBase),
        (a, b) => Err(NoRatio::Unusable {
            a: a.err(),
            b: b.err(),
        }),
    }
}

/// Whether a ratio is beyond the noise of the two figures it divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its 95% interval lies above 1.
    Faster,
    /// Its 95% interval lies below 1.
    Slower,
    /// Its 95% interval includes 1.
    WithinNoise,
    /// A figure's interval is not known.
    Unknown,
}

/// `b / a` with its 95% interval, from each figure's own 95% interval: on a
/// log scale the two relative errors add in quadrature (independent
/// windows). `None` when either interval is unknown.
pub fn ratio_interval(
    a: (f64, Option<&Interval>),
    b: (f64, Option<&Interval>),
) -> Option<(f64, f64)> {
    let (ta, ia) = a;
    let (tb, ib) = b;
    let log_half = |t: f64, i: &Interval| i.relative_half_width(t).map(|h| (1.0 + h).ln());
    let (ha, hb) = (log_half(ta, ia?)?, log_half(tb, ib?)?);
    if ta <= 0.0 || tb <= 0.0 {
        return None;
    }
    let r = tb / ta;
    let h = (ha * ha + hb * hb).sqrt();
    Some((r * (-h).exp(), r * h.exp()))
}

/// The verdict on `b / a` from the two cells' intervals.
pub fn verdict(a: (f64, Option<&Interval>), b: (f64, Option<&Interval>)) -> Verdict {
    match ratio_interval(a, b) {
        None => Verdict::Unknown,
        Some((low, _)) if low > 1.0 => Verdict::Faster,
        Some((_, high)) if high < 1.0 => Verdict::Slower,
        Some(_) => Verdict::WithinNoise,
    }
}

/// The verdict on the ratio of two cells, both Valid with figures.
pub(crate) fn cell_verdict(a: &DecodeCell, b: &DecodeCell) -> Verdict {
    match (a.total_tok_per_s, b.total_tok_per_s) {
        (Some(x), Some(y)) => verdict(
            (x, a.total_tok_per_s_ci95.as_ref()),
            (y, b.total_tok_per_s_ci95.as_ref()),
        ),
        _ => Verdict::Unknown,
    }
}

/// Throughput as the server gave it, or shared out over the run's GPUs: the
/// fair figure between runs on different numbers of GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Basis {
    Total,
    PerGpu,
}

impl Basis {
    /// `tok_per_s` of `run` on this basis.
    pub fn of(self, run: &Run, tok_per_s: f64) -> f64 {
        match self {
            Basis::Total => tok_per_s,
            Basis::PerGpu => tok_per_s / f64::from(run.meta.hardware.gpu_count.max(1)),
        }
    }

    /// `b`'s figure over `a`'s on this basis, from the ratio of their totals.
    pub fn ratio(self, a: &Run, b: &Run, total_ratio: f64) -> f64 {
        self.of(b, total_ratio) / self.of(a, 1.0)
    }
}

/// What a ratio grid divides: throughput on a basis, or energy per output
/// token (the same on any basis: all the GPUs' energy over all the tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Figure {
    Throughput(Basis),
    Energy,
}

/// Indexes of the points on the Pareto frontier when both coordinates are
/// better higher: no other point is at least as good in both and better in one.
pub(crate) fn pareto_frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut frontier: Vec<usize> = (0..points.len())
        .filter(|&i| {
            let (x, y) = points[i];
            !points
                .iter()
                .any(|&(px, py)| px >= x && py >= y && (px > x || py > y))
        })
        .collect();
    frontier.sort_by(|&i, &j| points[i].0.total_cmp(&points[j].0));
    frontier
}

/// A decode context the runs share: each run's context there, equal or
/// within [`NEAR_CONTEXT`] of the others' (251K against 256K), `None` where
/// the run has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContextGroup(pub Vec<Option<u64>>);

impl ContextGroup {
    /// The smallest context of the group: its order and id.
    pub(crate) fn tokens(&self) -> u64 {
        self.0.iter().flatten().copied().min().unwrap_or(0)
    }

    /// "8K", or "256K / 251K" where the runs' contexts differ (in run order).
    pub(crate) fn label(&self) -> String {
        let mut distinct: Vec<u64> = Vec::new();
        for &c in self.0.iter().flatten() {
            if !distinct.contains(&c) {
                distinct.push(c);
            }
        }
        distinct
            .into_iter()
            .map(crate::model::format::context_label)
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

/// Decode contexts at least two of the runs measured, near ones grouped
/// as [`pair_contexts`] pairs them: run by run, each context joins a group
/// of the same context first, else the nearest group within
/// [`NEAR_CONTEXT`] that has none of that run's yet. In order of context.
pub(crate) fn shared_context_groups(runs: &[&Run]) -> Vec<ContextGroup> {
    // (anchor context, each run's context in the group)
    let mut groups: Vec<(u64, Vec<Option<u64>>)> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let mut left = Vec::new();
        for ctx in run.decode_contexts() {
            match groups
                .iter_mut()
                .find(|(anchor, m)| *anchor == ctx && m[i].is_none())
            {
                Some((_, m)) => m[i] = Some(ctx),
                None => left.push(ctx),
            }
        }
        for ctx in left {
            let gap = |anchor: u64| anchor.abs_diff(ctx) as f64 / anchor.max(ctx) as f64;
            let near = groups
                .iter_mut()
                .filter(|(anchor, m)| m[i].is_none() && gap(*anchor) <= NEAR_CONTEXT)
                .min_by(|p, q| gap(p.0).total_cmp(&gap(q.0)));
            match near {
                Some((_, m)) => m[i] = Some(ctx),
                None => {
                    let mut m = vec![None; runs.len()];
                    m[i] = Some(ctx);
                    groups.push((ctx, m));
                }
            }
        }
    }
    let mut shared: Vec<ContextGroup> = groups
        .into_iter()
        .map(|(_, m)| ContextGroup(m))
        .filter(|g| g.0.iter().flatten().count() >= 2)
        .collect();
    shared.sort_by_key(ContextGroup::tokens);
    shared
}

/// Concurrency levels any of the runs measured in the group.
pub(crate) fn levels_in(runs: &[&Run], group: &ContextGroup) -> Vec<u32> {
    let levels: BTreeSet<u32> = runs
        .iter()
        .zip(&group.0)
        .filter_map(|(r, ctx)| ctx.map(|ctx| (r, ctx)))
        .flat_map(|(r, ctx)| {
            r.decode_cells()
                .filter(move |c| c.context_tokens == ctx)
                .map(|c| c.concurrency)
        })
        .collect();
    levels.into_iter().collect()
}

/// Every (context, concurrency) cell some of the runs measured as Valid,
/// in order: the rows of a table of runs side by side.
pub(crate) fn valid_cells(runs: &[&Run]) -> Vec<(u64, u32)> {
    let cells: BTreeSet<(u64, u32)> = runs
        .iter()
        .flat_map(|r| r.decode_cells())
        .filter(|c| c.status == Status::Valid)
        .map(|c| (c.context_tokens, c.concurrency))
        .collect();
    cells.into_iter().collect()
}

/// (concurrency, total tok/s) of the run's Valid cells at `ctx`.
pub(crate) fn valid_totals_at(run: &Run, ctx: u64) -> Vec<(f64, f64)> {
    run.decode_cells()
        .filter(|c| c.context_tokens == ctx && c.status == Status::Valid)
        .filter_map(|c| Some((f64::from(c.concurrency), c.total_tok_per_s?)))
        .collect()
}

/// The grid of a ratio matrix: every context and every concurrency level
/// either run measured.
pub fn union_grid(a: &Run, b: &Run) -> (Vec<u64>, Vec<u32>) {
    let contexts: BTreeSet<u64> = a
        .decode_contexts()
        .into_iter()
        .chain(b.decode_contexts())
        .collect();
    let levels: BTreeSet<u32> = a
        .concurrency_levels()
        .into_iter()
        .chain(b.concurrency_levels())
        .collect();
    (contexts.into_iter().collect(), levels.into_iter().collect())
}

/// Contexts of two runs within this fraction of each other measure the same
/// thing (251K against 256K: one run left room for its output in the window).
pub(crate) const NEAR_CONTEXT: f64 = 0.02;

/// A row of a comparison of two runs: a context of `a` and one of `b` that
/// are equal or near ([`NEAR_CONTEXT`]), or a context only one run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContextPair {
    pub a: Option<u64>,
    pub b: Option<u64>,
}

impl ContextPair {
    /// "8K", or "256K / 251K" when the runs' contexts differ (a's first).
    pub(crate) fn label(self) -> String {
        use crate::model::format::context_label;
        match (self.a, self.b) {
            (Some(x), Some(y)) if x != y => format!("{} / {}", context_label(x), context_label(y)),
            (Some(x), _) | (None, Some(x)) => context_label(x),
            (None, None) => crate::model::format::DASH.into(),
        }
    }

    /// The pair's smaller context, for order and for ids.
    pub(crate) fn tokens(self) -> u64 {
        match (self.a, self.b) {
            (Some(x), Some(y)) => x.min(y),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => 0,
        }
    }

    pub(crate) fn near(self) -> bool {
        matches!((self.a, self.b), (Some(x), Some(y)) if x != y)
    }
}

/// Pairs the contexts of two runs: equal ones first, then each left over of
/// `a` with the nearest left over of `b` within [`NEAR_CONTEXT`]; the rest
/// stand alone. In order of context.
pub(crate) fn pair_contexts(a: &[u64], b: &[u64]) -> Vec<ContextPair> {
    let mut pairs: Vec<ContextPair> = Vec::new();
    let mut left_b: Vec<u64> = b.iter().copied().filter(|y| !a.contains(y)).collect();
    for &x in a {
        if b.contains(&x) {
            pairs.push(ContextPair {
                a: Some(x),
                b: Some(x),
            });
            continue;
        }
        let gap = |y: u64| x.abs_diff(y) as f64 / x.max(y) as f64;
        let near = left_b
            .iter()
            .copied()
            .filter(|&y| gap(y) <= NEAR_CONTEXT)
            .min_by(|&p, &q| gap(p).total_cmp(&gap(q)));
        if let Some(y) = near {
            left_b.retain(|&z| z != y);
        }
        pairs.push(ContextPair {
            a: Some(x),
            b: near,
        });
    }
    pairs.extend(left_b.into_iter().map(|y| ContextPair {
        a: None,
        b: Some(y),
    }));
    pairs.sort_by_key(|p| p.tokens());
    pairs
}

/// `b`'s decode throughput over `a`'s on one basis, for every paired context
/// (rows) and concurrency level (columns) either run measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RatioGrid {
    pub rows: Vec<ContextPair>,
    pub levels: Vec<u32>,
    /// `cells[row][level]`.
    pub cells: Vec<Vec<Result<Judged, NoRatio>>>,
}

/// A ratio of two cells and whether it is beyond their noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judged {
    pub value: f64,
    pub verdict: Verdict,
}

impl RatioGrid {
    pub(crate) fn between(a: &Run, b: &Run, basis: Basis) -> RatioGrid {
        RatioGrid::of(a, b, Figure::Throughput(basis))
    }

    /// `b`'s `figure` over `a`'s, cell by cell.
    pub(crate) fn of(a: &Run, b: &Run, figure: Figure) -> RatioGrid {
        let rows = pair_contexts(&a.decode_contexts(), &b.decode_contexts());
        let levels: BTreeSet<u32> = a
            .concurrency_levels()
            .into_iter()
            .chain(b.concurrency_levels())
            .collect();
        let levels: Vec<u32> = levels.into_iter().collect();
        let cells = rows
            .iter()
            .map(|p| {
                levels
                    .iter()
                    .map(|&n| {
                        let ca = p.a.and_then(|ctx| a.decode_cell(ctx, n));
                        let cb = p.b.and_then(|ctx| b.decode_cell(ctx, n));
                        match figure {
                            Figure::Throughput(basis) => ratio(ca, cb).map(|r| Judged {
                                value: basis.ratio(a, b, r),
                                // The per-GPU basis scales both figures by
                                // constants: the verdict on the totals holds.
                                verdict: ca
                                    .zip(cb)
                                    .map_or(Verdict::Unknown, |(x, y)| cell_verdict(x, y)),
                            }),
                            // No source states an interval of its energy.
                            Figure::Energy => energy_ratio(ca, cb).map(|value| Judged {
                                value,
                                verdict: Verdict::Unknown,
                            }),
                        }
                    })
                    .collect()
            })
            .collect();
        RatioGrid {
            rows,
            levels,
            cells,
        }
    }

    /// Every ratio of the grid, row by row.
    pub(crate) fn ratios(&self) -> impl Iterator<Item = f64> + '_ {
        self.cells
            .iter()
            .flatten()
            .filter_map(|c| c.as_ref().ok().map(|j| j.value))
    }

    /// Rows with at least one ratio.
    pub(crate) fn row_has_ratio(&self, row: usize) -> bool {
        self.cells[row].iter().any(Result::is_ok)
    }

    /// Columns with at least one ratio.
    pub(crate) fn level_has_ratio(&self, level: usize) -> bool {
        self.cells.iter().any(|row| row[level].is_ok())
    }
}

/// What one run has at a cell of a ratio grid, in a note's words: "valid"
/// when its side is usable, else why not ("queued", "not measured").
fn side_word(cell: &Result<Judged, NoRatio>, side: usize) -> &'static str {
    use crate::compare::words::{VALID, ZERO_TOK_PER_S};
    match cell {
        Ok(_) => VALID,
        Err(NoRatio::ZeroBase) if side == 0 => ZERO_TOK_PER_S,
        Err(NoRatio::ZeroBase) => VALID,
        Err(NoRatio::Unusable { a, b }) => [a, b][side].map_or(VALID, Unusable::words),
    }
}

/// One run's state over some cells of a grid: each distinct word, in order
/// of first appearance, with the stretches of consecutive grid positions
/// (first, last) it covers.
pub(crate) type SideStates = Vec<(&'static str, Vec<(usize, usize)>)>;

/// Each run's states over `cells` (grid position, cell), for the note of a
/// row or column without a ratio. A cell neither run measured says nothing
/// about either and is passed over; it also ends a stretch.
pub(crate) fn side_states<'a>(
    cells: impl Iterator<Item = (usize, &'a Result<Judged, NoRatio>)>,
) -> [SideStates; 2] {
    let mut sides: [SideStates; 2] = [Vec::new(), Vec::new()];
    let neither = Err(NoRatio::Unusable {
        a: Some(Unusable::NotMeasured),
        b: Some(Unusable::NotMeasured),
    });
    for (at, cell) in cells.filter(|(_, c)| **c != neither) {
        for (side, states) in sides.iter_mut().enumerate() {
            let word = side_word(cell, side);
            match states.iter_mut().find(|(w, _)| *w == word) {
                Some((_, stretches)) => match stretches.last_mut() {
                    Some(last) if last.1 + 1 == at => last.1 = at,
                    _ => stretches.push((at, at)),
                },
                None => states.push((word, vec![(at, at)])),
            }
        }
    }
    sides
}

/// The middle of some ratios, with their range and count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RatioSummary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
    /// How many are above / below 1 (ties, which round to 1.00×, in neither).
    pub above: usize,
    pub below: usize,
}

impl RatioSummary {
    pub(crate) fn of(ratios: impl IntoIterator<Item = f64>) -> Option<RatioSummary> {
        let mut v: Vec<f64> = ratios.into_iter().filter(|r| r.is_finite()).collect();
        let median = crate::stats::median(v.clone())?;
        v.sort_by(f64::total_cmp);
        let n = v.len();
        // What the page shows decides a tie: 0.999 is "1.00×", a tie.
        let shown = |r: f64| crate::model::format::ratio(r);
        let parity = shown(1.0);
        Some(RatioSummary {
            median,
            min: v[0],
            max: v[n - 1],
            count: n,
            above: v.iter().filter(|&&r| r > 1.0 && shown(r) != parity).count(),
            below: v.iter().filter(|&&r| r < 1.0 && shown(r) != parity).count(),
        })
    }
}

/// How far a run scales: the largest context it measured validly, and the
/// most simultaneous requests a decode cell ran validly (at the largest
/// context it did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reach {
    pub largest_context: Option<u64>,
    pub most_requests: Option<(u32, u64)>,
}

pub(crate) fn reach(run: &Run) -> Reach {
    let most_requests = run
        .decode_cells()
        .filter(|c| c.status == Status::Valid)
        .map(|c| (c.concurrency, c.context_tokens))
        .max();
    Reach {
        largest_context: largest_valid_context(run),
        most_requests,
    }
}

/// What a comparison finds between the baseline `a` and another run `b`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairFindings {
    pub decode: Option<RatioSummary>,
    /// Each run's highest Valid throughput, where it is, and their ratio.
    pub peak: BestPair,
    /// The same among cells whose per-request rate reaches each of
    /// [`PER_REQUEST_SPEEDS`].
    pub at_speed: Vec<(f64, BestPair)>,
    /// The median ratio per paired context with any ratio: (label, median).
    pub decode_by_context: Vec<(String, f64)>,
    /// b's prompt tok/s over a's at paired contexts both measured validly.
    pub prefill: Option<RatioSummary>,
    /// Paired contexts where b's prefill is faster / slower.
    pub prefill_faster_at: Vec<String>,
    /// Grid cells without a ratio: one run only measured them / a side is not Valid.
    pub one_side_only: usize,
    pub not_valid: usize,
    /// b's energy per output token over a's at cells both ran validly with
    /// their energy recorded.
    pub energy: Option<RatioSummary>,
    /// Whether each run recorded the energy of any decode window.
    pub energy_recorded: [bool; 2],
    /// Ratios within the two cells' noise, beyond it, and of unknown noise.
    pub within_noise: usize,
    pub beyond_noise: usize,
    pub noise_unknown: usize,
}

/// The basis a comparison's findings use: total, unless the runs have
/// different GPU counts, where per GPU is the fair figure.
pub(crate) fn findings_basis(runs: &[&Run]) -> Basis {
    let first = runs.first().map(|r| r.meta.hardware.gpu_count);
    if runs
        .iter()
        .all(|r| Some(r.meta.hardware.gpu_count) == first)
    {
        Basis::Total
    } else {
        Basis::PerGpu
    }
}

pub(crate) fn pair_findings(a: &Run, b: &Run, basis: Basis) -> PairFindings {
    let grid = RatioGrid::between(a, b, basis);
    let decode_by_context = grid
        .rows
        .iter()
        .zip(&grid.cells)
        .filter_map(|(p, cells)| {
            RatioSummary::of(
                cells
                    .iter()
                    .filter_map(|c| c.as_ref().ok().map(|j| j.value)),
            )
            .map(|s| (p.label(), s.median))
        })
        .collect();
    let (mut one_side_only, mut not_valid) = (0, 0);
    for c in grid.cells.iter().flatten() {
        match c {
            Err(NoRatio::Unusable { a, b })
                if [a, b].iter().any(|u| **u == Some(Unusable::NotMeasured)) =>
            {
                one_side_only += 1
            }
            Err(_) => not_valid += 1,
            Ok(_) => {}
        }
    }
    let prefill_ratios = prefill_ratios(a, b);
    let parity = crate::model::format::ratio(1.0);
    let judged = |v: Verdict| {
        grid.cells
            .iter()
            .flatten()
            .filter(|c| c.as_ref().is_ok_and(|j| j.verdict == v))
            .count()
    };
    let within_noise = judged(Verdict::WithinNoise);
    let noise_unknown = judged(Verdict::Unknown);
    let beyond_noise = judged(Verdict::Faster) + judged(Verdict::Slower);
    PairFindings {
        peak: BestPair::of(a, b, 0.0, basis),
        at_speed: PER_REQUEST_SPEEDS
            .iter()
            .map(|&speed| (speed, BestPair::of(a, b, speed, basis)))
            .collect(),
        within_noise,
        beyond_noise,
        noise_unknown,
        decode: RatioSummary::of(grid.ratios()),
        energy: RatioSummary::of(RatioGrid::of(a, b, Figure::Energy).ratios()),
        energy_recorded: [has_energy(a), has_energy(b)],
        decode_by_context,
        prefill: RatioSummary::of(prefill_ratios.iter().map(|(_, r)| *r)),
        prefill_faster_at: prefill_ratios
            .iter()
            .filter(|(_, r)| *r > 1.0 && crate::model::format::ratio(*r) != parity)
            .map(|(p, _)| p.label())
            .collect(),
        one_side_only,
        not_valid,
    }
}

/// Per-request decode rates (tok/s) a reader may need each request to keep:
/// the key findings give each run's most throughput at each of them.
pub(crate) const PER_REQUEST_SPEEDS: [f64; 2] = [20.0, 50.0];

/// A run's Valid decode cell of the most total tok/s, perhaps among those
/// whose per-request rate reaches some speed: where the run delivers most.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BestCell {
    pub total_tok_per_s: f64,
    pub per_request_tok_per_s: Option<f64>,
    pub context_tokens: u64,
    pub concurrency: u32,
}

impl BestCell {
    /// "8K × 128": where the cell is.
    pub(crate) fn at(&self) -> String {
        crate::model::format::cell_label(self.context_tokens, self.concurrency)
    }
}

/// The run's Valid decode cell with the most total tok/s among those whose
/// per-request rate is at least `min_per_request` (with 0, every Valid cell,
/// also those without a per-request figure). Ties go to fewer requests, then
/// the smaller context.
pub(crate) fn best_valid(run: &Run, min_per_request: f64) -> Option<BestCell> {
    run.decode_cells()
        .filter(|c| c.status == Status::Valid)
        .filter_map(|c| {
            let per_request = c.per_request_tok_per_s;
            let fast_enough =
                min_per_request <= 0.0 || per_request.is_some_and(|p| p >= min_per_request);
            fast_enough.then_some(BestCell {
                total_tok_per_s: c.total_tok_per_s?,
                per_request_tok_per_s: per_request,
                context_tokens: c.context_tokens,
                concurrency: c.concurrency,
            })
        })
        .max_by(|x, y| {
            x.total_tok_per_s
                .total_cmp(&y.total_tok_per_s)
                .then(y.concurrency.cmp(&x.concurrency))
                .then(y.context_tokens.cmp(&x.context_tokens))
        })
}

/// A run's most output tokens per joule of its GPUs' energy in a Valid
/// cell: (tok/J, context, requests at once), fewest requests on a tie.
pub(crate) fn best_energy(run: &Run) -> Option<(f64, u64, u32)> {
    run.decode_cells()
        .filter_map(|c| {
            let j = valid_energy(Some(c)).ok()?;
            Some((1.0 / j, c.context_tokens, c.concurrency))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0).then(y.2.cmp(&x.2)).then(y.1.cmp(&x.1)))
}

/// The decode rate of one request at the smallest context it ran validly:
/// (context, tok/s), the index's "Single stream" and a run page's key figure.
pub(crate) fn single_stream(run: &Run) -> Option<(u64, f64)> {
    run.decode_cells()
        .filter(|c| c.concurrency == 1 && c.status == Status::Valid)
        .find_map(|c| Some((c.context_tokens, c.total_tok_per_s?)))
}

/// Prompt tok/s of the smallest context prefilled validly: (context, tok/s).
pub(crate) fn first_prefill(run: &Run) -> Option<(u64, f64)> {
    run.prefill_cells()
        .filter(|c| c.status == Status::Valid)
        .find_map(|c| Some((c.context_tokens, c.prompt_tok_per_s?)))
}

/// Two runs' best cells of one kind, and `b`'s over `a`'s on the basis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BestPair {
    pub a: Option<BestCell>,
    pub b: Option<BestCell>,
    pub ratio: Option<f64>,
}

impl BestPair {
    fn of(a: &Run, b: &Run, min_per_request: f64, basis: Basis) -> BestPair {
        let (x, y) = (
            best_valid(a, min_per_request),
            best_valid(b, min_per_request),
        );
        let ratio = x
            .zip(y)
            .filter(|(x, _)| x.total_tok_per_s > 0.0)
            .map(|(x, y)| basis.ratio(a, b, y.total_tok_per_s / x.total_tok_per_s));
        BestPair { a: x, b: y, ratio }
    }
}

/// `b`'s prompt tok/s over `a`'s at each paired context both measured validly.
fn prefill_ratios(a: &Run, b: &Run) -> Vec<(ContextPair, f64)> {
    let valid_prefill = |run: &Run, ctx: u64| {
        run.prefill_cells()
            .find(|c| c.context_tokens == ctx && c.status == Status::Valid)
            .and_then(|c| c.prompt_tok_per_s)
            .filter(|t| *t > 0.0)
    };
    let contexts =
        |run: &Run| -> Vec<u64> { run.prefill_cells().map(|c| c.context_tokens).collect() };
    pair_contexts(&contexts(a), &contexts(b))
        .into_iter()
        .filter_map(|p| {
            let (x, y) = (valid_prefill(a, p.a?)?, valid_prefill(b, p.b?)?);
            Some((p, y / x))
        })
        .collect()
}

/// A Valid decode cell as a point of throughput against interactivity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InteractivityPoint {
    pub per_request_tok_per_s: f64,
    pub total_tok_per_s: f64,
    pub context_tokens: u64,
    pub concurrency: u32,
}

/// The run's Valid decode cells with both throughputs, in cell order.
pub(crate) fn interactivity_points(run: &Run) -> Vec<InteractivityPoint> {
    run.decode_cells()
        .filter(|c| c.status == Status::Valid)
        .filter_map(|c| {
            Some(InteractivityPoint {
                per_request_tok_per_s: c.per_request_tok_per_s?,
                total_tok_per_s: c.total_tok_per_s?,
                context_tokens: c.context_tokens,
                concurrency: c.concurrency,
            })
        })
        .collect()
}

/// The largest context any cell of the run measured Valid.
pub(crate) fn largest_valid_context(run: &Run) -> Option<u64> {
    run.cells
        .iter()
        .filter(|c| c.status() == Status::Valid)
        .map(|c| c.context_tokens())
        .max()
}

/// For each decode context of the run, the largest concurrency that ran Valid.
pub(crate) fn capacity_frontier(run: &Run) -> BTreeMap<u64, Option<u32>> {
    run.decode_contexts()
        .into_iter()
        .map(|ctx| {
            let best = run
                .decode_cells()
                .filter(|c| c.context_tokens == ctx && c.status == Status::Valid)
                .map(|c| c.concurrency)
                .max();
            (ctx, best)
        })
        .collect()
}

/// A run's prefill cells in a comparison's table, each "16,000.0 (512 ms)"
/// when it has both figures (an Error cell may: it is charted and listed as
/// measured), the run's figures in one number format.
pub(crate) fn prefill_figures(run: &Run) -> Vec<(u64, Option<String>)> {
    use crate::model::format::{millis, tok_per_s_column};
    let cells: Vec<&crate::model::PrefillCell> = run.prefill_cells().collect();
    let rates: Vec<f64> = cells.iter().filter_map(|c| c.prompt_tok_per_s).collect();
    let mut shown = tok_per_s_column(&rates).into_iter();
    cells
        .into_iter()
        .map(|c| {
            let rate = c.prompt_tok_per_s.map(|_| shown.next().unwrap_or_default());
            let text = rate.zip(c.ttft_ms).map(|(t, ms)| {
                crate::compare::words::fill(
                    crate::compare::words::PREFILL_FIGURE,
                    &[("tok_per_s", &t), ("ttft", &millis(ms))],
                )
            });
            (c.context_tokens, text)
        })
        .collect()
}

/// A decode cell of `run` in a comparison's table: its tok/s on `basis`,
/// with the status when it is not Valid ("1,234.5 (Requests queued)"), or
/// the status alone when it has no figure.
pub(crate) fn decode_figure(run: &Run, cell: Option<&DecodeCell>, basis: Basis) -> String {
    use crate::compare::words::{FIGURE_WITH_STATUS, fill};
    let figure = |t: f64| crate::model::format::tok_per_s(basis.of(run, t));
    match cell {
        None => crate::model::format::DASH.into(),
        Some(c) if c.status == Status::Valid => c
            .total_tok_per_s
            .map_or_else(|| crate::model::format::DASH.into(), figure),
        Some(c) => match c.total_tok_per_s.filter(|_| c.status.has_figures()) {
            Some(t) => fill(
                FIGURE_WITH_STATUS,
                &[("figure", &figure(t)), ("status", c.status.label())],
            ),
            None => c.status.label().to_string(),
        },
    }
}

/// One row of the setup table a comparison shows of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct SetupValue {
    pub card: &'static str,
    pub field: &'static str,
    pub value: String,
}

/// What a comparison's setup table shows of a run: its Hardware, Engine and
/// Run cards, then what is derived from its cells and launch command (the
/// largest context it measured validly, speculative decoding). The
/// pre-rendered pages and the browser's comparison both show these.
pub(crate) fn setup_values(run: &Run) -> Vec<SetupValue> {
    let dash = crate::model::format::DASH;
    let mut values: Vec<SetupValue> = crate::model::labels::cards(&run.meta)
        .into_iter()
        .flat_map(|card| {
            card.rows.into_iter().map(move |(field, value)| SetupValue {
                card: card.name,
                field,
                value,
            })
        })
        .collect();
    let speculative =
        crate::model::launch::speculative_decoding(run.meta.launch_command.as_deref())
            .unwrap_or_else(|| {
                if run.meta.launch_command.is_some() {
                    "none".into()
                } else {
                    dash.into()
                }
            });
    values.extend([
        SetupValue {
            card: "Derived",
            field: "Largest context measured",
            value: largest_valid_context(run)
                .map_or_else(|| dash.into(), crate::model::format::context_label),
        },
        SetupValue {
            card: "Derived",
            field: "Speculative decoding",
            value: speculative,
        },
    ]);
    values
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn cell(status: Status, total: Option<f64>) -> DecodeCell {
        DecodeCell {
            total_tok_per_s: total,
            ..DecodeCell::without_figures(8192, 1, status, None)
        }
    }

    #[test]
    fn ratios_and_the_reasons_when_there_is_none() {
        let names = ("GLM", "Step");
        let why =
            |a: Option<&DecodeCell>, b: Option<&DecodeCell>| ratio(a, b).unwrap_err().reason(names);
        let a = cell(Status::Valid, Some(200.0));
        let b = cell(Status::Valid, Some(150.0));
        assert_eq!(ratio(Some(&a), Some(&b)), Ok(0.75));
        let over = cell(Status::OverCapacity, None);
        let queued = cell(Status::RequestsQueued, Some(99.0));
        assert_eq!(why(Some(&over), Some(&b)), "GLM over capacity");
        assert_eq!(why(Some(&a), Some(&queued)), "Step queued");
        assert_eq!(why(Some(&over), Some(&over)), "both over capacity");
        assert_eq!(why(None, Some(&b)), "GLM not measured");
        assert_eq!(
            why(Some(&queued), Some(&cell(Status::Looped, None))),
            "GLM queued, Step looped"
        );
        assert_eq!(
            ratio(Some(&cell(Status::Valid, Some(0.0))), Some(&b)),
            Err(NoRatio::ZeroBase)
        );
        assert_eq!(
            why(Some(&cell(Status::Valid, Some(0.0))), Some(&b)),
            "GLM measured 0 tok/s"
        );
    }

    fn run(id: &str, gpu: &str) -> Run {
        Run::for_test(
            id,
            serde_json::json!({
                "schema_version": 1, "model": id.to_uppercase(), "served_model": id,
                "hardware": {"gpu": gpu, "gpu_count": 4}, "engine": {"name": "vllm"},
                "run": {"decode_test": "fixed_duration", "prefill_mode": "decode_warmup",
                        "seconds_per_measurement": 30, "max_output_tokens": 4096}
            }),
        )
    }

    pub(crate) fn with_cells(id: &str, cells: &[(u64, u32, Status, f64)]) -> Run {
        let mut r = run(id, "H200");
        r.cells = cells
            .iter()
            .map(|&(ctx, n, status, total)| {
                crate::model::Cell::Decode(DecodeCell {
                    total_tok_per_s: Some(total),
                    per_request_tok_per_s: Some(total / f64::from(n)),
                    ..DecodeCell::without_figures(ctx, n, status, None)
                })
            })
            .collect();
        r
    }

    #[test]
    fn cells_and_points_a_comparison_draws() {
        use Status::*;
        let a = with_cells(
            "a",
            &[
                (8192, 1, Valid, 100.0),
                (8192, 4, Valid, 300.0),
                (65536, 1, Looped, 90.0),
            ],
        );
        let b = with_cells(
            "b",
            &[
                (8192, 1, Valid, 80.0),
                (8192, 2, RequestsQueued, 150.0),
                (32768, 1, Valid, 70.0),
            ],
        );
        // Only 8K was measured by both runs.
        let shared = shared_context_groups(&[&a, &b]);
        assert_eq!(shared, [ContextGroup(vec![Some(8192), Some(8192)])]);
        assert_eq!(levels_in(&[&a, &b], &shared[0]), [1, 2, 4]);
        // Queued and looped cells are not drawn as valid throughput.
        assert_eq!(valid_totals_at(&a, 8192), [(1.0, 100.0), (4.0, 300.0)]);
        assert_eq!(valid_totals_at(&b, 8192), [(1.0, 80.0)]);
        assert_eq!(
            union_grid(&a, &b),
            (vec![8192, 32768, 65536], vec![1, 2, 4])
        );
        let points = interactivity_points(&a);
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].per_request_tok_per_s, 75.0);
        assert_eq!(points[1].concurrency, 4);
        assert_eq!(largest_valid_context(&a), Some(8192));
        assert_eq!(largest_valid_context(&b), Some(32768));
    }

    fn spec(title: &str, runs: &[&str]) -> crate::model::ComparisonSpec {
        crate::model::ComparisonSpec {
            title: title.into(),
            runs: runs.iter().map(|r| r.to_string()).collect(),
            note: None,
        }
    }

    /// A run on `gpu` with one Valid decode cell (8K × 1), so it compares.
    fn measured(id: &str, gpu: &str) -> Run {
        let mut r = with_cells(id, &[(8192, 1, Status::Valid, 100.0)]);
        r.meta.hardware.gpu = gpu.into();
        r
    }

    #[test]
    fn pairs_on_the_same_hardware_are_added_without_repeating_named_sets() {
        let runs = [
            measured("a", "H200"),
            measured("b", "H200"),
            measured("c", "H200"),
            measured("d", "B200"),
        ];
        let file = ComparisonsFile {
            comparisons: vec![spec("A and B", &["b", "a"])],
            auto_pair_limit: None,
        };
        let plan = plan(&runs, &file).unwrap();
        let ids: Vec<&str> = plan.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a--c", "b--a", "b--c"]);
        assert_eq!(plan[1].title, "A and B");
        assert_eq!(plan[1].runs, [1, 0], "the named order sets the baseline");
        assert_eq!(plan[0].title, "A vs C");
    }

    #[test]
    fn hardware_with_more_runs_than_the_limit_gets_no_automatic_pairs() {
        let runs: Vec<Run> = (0..7).map(|i| measured(&format!("r{i}"), "H200")).collect();
        let file = ComparisonsFile::default();
        assert!(plan(&runs, &file).unwrap().is_empty());
        let six = &runs[..6];
        assert_eq!(plan(six, &file).unwrap().len(), 15);
        let limited = ComparisonsFile {
            comparisons: vec![],
            auto_pair_limit: Some(2),
        };
        assert!(plan(six, &limited).unwrap().is_empty());
    }

    #[test]
    fn automatic_pairs_need_a_shared_valid_cell_and_two_setups() {
        use Status::*;
        // Decode at different contexts, no prefill: nothing to set side by side.
        let x16 = with_cells("x16", &[(2048, 16, Valid, 900.0)]);
        let x1 = with_cells("x1", &[(512, 1, Valid, 80.0)]);
        // One setup measured twice: its series compares them.
        let night1 = with_cells("night1", &[(8192, 1, Valid, 100.0)]);
        let mut night2 = with_cells("night2", &[(8192, 1, Valid, 101.0)]);
        night2.meta.model = night1.meta.model.clone();
        // Only prefill in common still compares.
        let mut prefill_a = with_cells("pa", &[]);
        let mut prefill_b = with_cells("pb", &[(8192, 4, OverCapacity, 0.0)]);
        for r in [&mut prefill_a, &mut prefill_b] {
            r.cells
                .push(crate::model::Cell::Prefill(crate::model::PrefillCell {
                    context_tokens: 8192,
                    status: Valid,
                    reason: None,
                    prompt_tokens: Some(8192),
                    prompt_tokens_from: None,
                    prompt_tok_per_s: Some(10_000.0),
                    ttft_ms: Some(819.2),
                    prompt_cache: None,
                    measured_by: None,
                }));
        }
        let ids = |runs: &[Run]| -> Vec<String> {
            plan(runs, &ComparisonsFile::default())
                .unwrap()
                .into_iter()
                .map(|c| c.id)
                .collect()
        };
        assert!(ids(&[x16.clone(), x1.clone()]).is_empty());
        assert!(ids(&[night1.clone(), night2.clone()]).is_empty());
        assert_eq!(ids(&[prefill_a, prefill_b]), ["pa--pb"]);
        // Named, they are always built.
        let named = ComparisonsFile {
            comparisons: vec![spec("asked for", &["x16", "x1"])],
            auto_pair_limit: None,
        };
        assert_eq!(plan(&[x16, x1], &named).unwrap().len(), 1);
    }

    #[test]
    fn named_sets_must_name_existing_distinct_runs() {
        let runs = [run("a", "H200"), run("b", "H200")];
        let bad = ComparisonsFile {
            comparisons: vec![spec("x", &["a", "a"])],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "comparison 1 (\"x\"): expected 2 to 6 different runs, found 1"
        );
        let bad = ComparisonsFile {
            comparisons: vec![spec("x", &["a", "zz"])],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "comparison 1 (\"x\"): run \"zz\" is not in the data folder (runs: a, b)"
        );
    }

    #[test]
    fn two_sets_of_the_same_runs_are_an_error_naming_both_and_all_errors_are_listed() {
        let runs = [run("a", "H200"), run("b", "H200"), run("c", "H200")];
        let bad = ComparisonsFile {
            comparisons: vec![
                spec("A vs B", &["a", "b"]),
                spec("no such", &["a", "nope"]),
                spec("B vs A", &["b", "a"]),
            ],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "2 problems:\n  - comparison 2 (\"no such\"): run \"nope\" is not in the data folder (runs: a, b, c)\n  - comparisons 1 (\"A vs B\") and 3 (\"B vs A\") list the same runs (b, a): keep one"
        );
    }

    #[test]
    fn runs_of_unknown_hardware_are_not_paired_and_are_warned_about() {
        let mut remote = run("remote", "unknown");
        remote.meta.hardware.gpu_count = 1;
        let mut other = run("other", "unknown");
        other.meta.hardware.gpu_count = 1;
        let mut no_engine = run("no-engine", "H200");
        no_engine.meta.engine.name = "unknown".into();
        let runs = [remote, other, no_engine, run("known", "H200")];
        assert!(plan(&runs, &ComparisonsFile::default()).unwrap().is_empty());
        assert_eq!(
            unpaired_warnings(&runs),
            [
                "run remote: not compared automatically: its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)",
                "run other: not compared automatically: its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)",
                "run no-engine: not compared automatically: its engine is unknown: pass --engine to sitegen run, or set engine.name in run.json (or with --meta)",
            ]
        );
    }

    #[test]
    fn per_gpu_figures_and_ratios_divide_by_each_run_s_gpu_count() {
        let mut four = run("four", "H200 SXM");
        four.meta.hardware.gpu_count = 4;
        let mut one = run("one", "RTX PRO 6000");
        one.meta.hardware.gpu_count = 1;
        assert_eq!(Basis::Total.of(&four, 1000.0), 1000.0);
        assert_eq!(Basis::PerGpu.of(&four, 1000.0), 250.0);
        assert_eq!(Basis::PerGpu.of(&one, 400.0), 400.0);
        // one makes 400 tok/s, four 1000: 0.4x in total, 1.6x per GPU.
        assert_eq!(Basis::Total.ratio(&four, &one, 0.4), 0.4);
        assert!((Basis::PerGpu.ratio(&four, &one, 0.4) - 1.6).abs() < 1e-12);
        assert!((Basis::PerGpu.ratio(&one, &four, 2.5) - 0.625).abs() < 1e-12);
    }

    #[test]
    fn contexts_within_two_percent_pair_and_the_rest_stand_alone() {
        let (k256, k251, k1024, k1019) = (262_144, 257_024, 1_048_576, 1_043_456);
        let pairs = pair_contexts(&[8192, k256, 524_288, k1019], &[8192, k251, k1024]);
        let shown: Vec<String> = pairs.iter().map(|p| p.label()).collect();
        assert_eq!(shown, ["8K", "256K / 251K", "512K", "1019K / 1024K"]);
        assert!(pairs[1].near() && !pairs[0].near());
        // 4% apart: not the same context.
        let apart = pair_contexts(&[100_000], &[96_000]);
        assert_eq!(apart.len(), 2);
        // Equal contexts win over near ones.
        let equal = pair_contexts(&[k256], &[k251, k256]);
        assert_eq!(
            equal[1],
            ContextPair {
                a: Some(k256),
                b: Some(k256)
            }
        );
    }

    #[test]
    fn ratio_summaries_count_what_the_page_would_call_a_tie_as_neither() {
        let s = RatioSummary::of([0.8, 1.2, 0.999, 0.9]).unwrap();
        assert_eq!((s.min, s.max, s.count), (0.8, 1.2, 4));
        assert!((s.median - 0.9495).abs() < 1e-12);
        assert_eq!((s.above, s.below), (1, 2), "0.999 shows as 1.00×");
        assert_eq!(RatioSummary::of([]), None);
    }

    #[test]
    fn findings_pair_near_contexts_and_count_what_is_not_compared() {
        use Status::*;
        let a = with_cells(
            "a",
            &[
                (8192, 1, Valid, 100.0),
                (262_144, 1, Valid, 50.0),
                (8192, 2, OverCapacity, 0.0),
            ],
        );
        let b = with_cells(
            "b",
            &[
                (8192, 1, Valid, 80.0),
                (257_024, 1, Valid, 60.0),
                (8192, 4, Valid, 10.0),
            ],
        );
        let f = pair_findings(&a, &b, Basis::Total);
        let d = f.decode.unwrap();
        assert_eq!((d.count, d.above, d.below), (2, 1, 1));
        assert_eq!(
            f.decode_by_context,
            [("8K".to_string(), 0.8), ("256K / 251K".to_string(), 1.2)]
        );
        // 8K×2: a over capacity, b not measured; 8K×4 and 256K×2, ×4: one side only.
        assert_eq!((f.one_side_only, f.not_valid), (4, 0));
        assert_eq!(reach(&a).most_requests, Some((1, 262_144)));
    }

    #[test]
    fn pareto_frontier_keeps_only_undominated_points() {
        let points = [
            (10.0, 100.0),
            (5.0, 300.0),
            (8.0, 90.0),
            (2.0, 300.0),
            (1.0, 400.0),
        ];
        assert_eq!(pareto_frontier(&points), vec![4, 1, 0]);
        assert_eq!(pareto_frontier(&[]), Vec::<usize>::new());
    }
}
