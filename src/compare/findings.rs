//! What a comparison finds, in numbers: the median ratio and its range, each
//! run's best cells (at a per-request speed, per joule) and how far it
//! scales.

use super::frontier::largest_valid_context;
use super::grid::{ContextPair, RatioGrid, pair_contexts};
use super::ratio::{Basis, NoRatio, NoiseVerdict, Unusable, has, valid};
use crate::model::figure::Figure;
use crate::model::{Run, Status};

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
    /// Every figure beyond the headline throughput (energy per output
    /// token ...), where either run has it.
    pub other_figures: Vec<FigureFindings>,
    /// Ratios within the two cells' noise, beyond it, and of unknown noise.
    pub within_noise: usize,
    pub beyond_noise: usize,
    pub noise_unknown: usize,
}

/// b's `figure` over a's at cells both ran validly with the figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FigureFindings {
    pub figure: Figure,
    pub summary: Option<RatioSummary>,
    /// Whether each run has the figure in any decode cell.
    pub recorded: [bool; 2],
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
    let judged = |v: NoiseVerdict| {
        grid.cells
            .iter()
            .flatten()
            .filter(|c| c.as_ref().is_ok_and(|j| j.verdict == v))
            .count()
    };
    let within_noise = judged(NoiseVerdict::WithinNoise);
    let noise_unknown = judged(NoiseVerdict::Unknown);
    let beyond_noise = judged(NoiseVerdict::Faster) + judged(NoiseVerdict::Slower);
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
        other_figures: Figure::ALL[1..]
            .iter()
            .filter(|&&f| has(f, a) || has(f, b))
            .map(|&figure| FigureFindings {
                figure,
                summary: RatioSummary::of(RatioGrid::of(a, b, figure, basis).ratios()),
                recorded: [has(figure, a), has(figure, b)],
            })
            .collect(),
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
            let j = valid(Figure::Energy, Some(c)).ok()?;
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
pub(crate) fn prefill_ratios(a: &Run, b: &Run) -> Vec<(ContextPair, f64)> {
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
