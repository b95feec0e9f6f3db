//! The one judgement of change, for series pages, run pages, the index and
//! `sitegen check` (docs/measurement.md, "Judging a run against its
//! history"): a run against the median of a window of earlier runs of its
//! setup, cell by cell and as a whole, and the change points of the whole
//! series. Pure functions over runs.
//!
//! Every cell's figure is compared on a log scale with the median of the
//! same cell in the baseline window. Its noise is the window's run-to-run
//! spread of that cell (shrunk towards the spread of all cells, since five
//! runs say little alone), never less than the run's own interval. The
//! cells of a run are one family: Holm's method holds the chance of any
//! false "slower" cell in an unchanged run at `alpha`. The run as a whole is
//! the median of its cells' log ratios, against how that median moves
//! among the baseline runs themselves (leave one out). A change is called
//! only when it is significant and at least `threshold` large.

use crate::model::{Run, Status};

/// The rule, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Earlier runs in the baseline window.
    pub window: usize,
    /// The smallest change called, as a share (0.03: 3%).
    pub threshold: f64,
    /// The chance of a false call per run, whole run and any cell alike.
    pub alpha: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            window: 5,
            threshold: 0.03,
            alpha: 0.01,
        }
    }
}

/// Fewer earlier runs than this and nothing is judged.
pub const MIN_BASELINE: usize = 3;

/// What a run is, against its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    WithinNoise,
    InsufficientData,
}

impl Verdict {
    /// How much a verdict says, least first: the stronger of two
    /// judgements, and a report's worst series.
    pub fn rank(self) -> u8 {
        match self {
            Verdict::InsufficientData => 0,
            Verdict::WithinNoise => 1,
            Verdict::Improvement => 2,
            Verdict::Regression => 3,
        }
    }

    /// A regression or an improvement.
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Improvement)
    }

    /// The words pages and `check` use.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::WithinNoise => "within noise",
            Verdict::InsufficientData => "insufficient data",
        }
    }
}

/// One cell's call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    Slower,
    Faster,
    Same,
}

/// A ratio with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// Two-sided p-value of "no change".
    pub p: f64,
}

/// A cell of the judged run against the same cell of the baseline.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CellJudgement {
    pub context_tokens: u64,
    pub concurrency: u32,
    pub estimate: Estimate,
    /// `p` after Holm's correction over the run's cells.
    pub p_family: f64,
    pub call: Call,
}

/// What a judgement set the run against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum BaselineKind {
    /// The runs right before it.
    Window,
    /// The runs before the series' last shift, at this position.
    BeforeShift { at: usize },
}

/// A run against its baseline window.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Judgement {
    pub basis: BaselineKind,
    /// Positions in the series of the runs it was judged against.
    pub baseline: Vec<usize>,
    /// Runs within the window's span left out, having been called changed.
    pub left_out: usize,
    /// The median over its cells, against how that median moves among the
    /// baseline runs.
    pub whole: Option<Estimate>,
    pub whole_call: Call,
    pub cells: Vec<CellJudgement>,
    pub verdict: Verdict,
    /// With too few earlier runs to judge (1 to `MIN_BASELINE` - 1): the
    /// run's plain ratio to them, the centre the rule would use without an
    /// interval (there is no noise to estimate). None when judged, with no
    /// earlier run, or with no cell measured validly by it and all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plain_ratio: Option<f64>,
}

impl Judgement {
    pub fn slower(&self) -> usize {
        self.cells.iter().filter(|c| c.call == Call::Slower).count()
    }

    pub fn faster(&self) -> usize {
        self.cells.iter().filter(|c| c.call == Call::Faster).count()
    }
}

/// ln of a cell's total tok/s, when Valid and positive.
fn log_total(run: &Run, ctx: u64, n: u32) -> Option<f64> {
    let c = run.decode_cell(ctx, n)?;
    (c.status == Status::Valid)
        .then_some(c.total_tok_per_s?)
        .filter(|t| *t > 0.0)
        .map(f64::ln)
}

/// The ln totals of some runs of a series ([`log_total`] of each of their
/// judgeable cells), read once into a table of run by cell: a judgement
/// looks the same runs' cells up thousands of times.
struct Logs {
    /// Every cell any of the runs read in can be judged in, sorted.
    cells: Vec<(u64, u32)>,
    /// Per run of the series: its ln total in each of `cells` (NaN where it
    /// has none), or None when it was not read in.
    runs: Vec<Option<Vec<f64>>>,
}

impl Logs {
    fn of(series: &[&Run], runs: impl IntoIterator<Item = usize>) -> Logs {
        let read: Vec<usize> = runs.into_iter().collect();
        // judgeable_cells' cells, with log_total's figure.
        let judgeable = |j: usize| {
            series[j]
                .decode_cells()
                .filter(|c| c.status == Status::Valid)
                .filter_map(|c| {
                    let t = c.total_tok_per_s.filter(|t| *t > 0.0)?;
                    Some(((c.context_tokens, c.concurrency), t.ln()))
                })
        };
        let mut cells: Vec<(u64, u32)> = read
            .iter()
            .flat_map(|&j| judgeable(j).map(|(k, _)| k))
            .collect();
        cells.sort_unstable();
        cells.dedup();
        let mut table = vec![None; series.len()];
        for &j in &read {
            table[j].get_or_insert_with(|| {
                let mut row = vec![f64::NAN; cells.len()];
                for (k, v) in judgeable(j) {
                    let c = cells.binary_search(&k).expect("every cell was listed");
                    row[c] = v;
                }
                row
            });
        }
        Logs { cells, runs: table }
    }

    /// The column of cell (`ctx`, `n`), when a run read in has it.
    fn cell(&self, ctx: u64, n: u32) -> Option<usize> {
        self.cells.binary_search(&(ctx, n)).ok()
    }

    /// `log_total(series[j], ..)` in the cell of column `c`, for a run read in.
    fn at(&self, j: usize, c: usize) -> Option<f64> {
        let row = self.runs[j].as_ref().expect("the run's figures were read");
        Some(row[c]).filter(|v| !v.is_nan())
    }

    /// The row of a run read in: its ln total in each column, NaN where none.
    fn row(&self, j: usize) -> &[f64] {
        self.runs[j].as_ref().expect("the run's figures were read")
    }

    /// `log_total(series[j], ctx, n)`, for a run read in.
    fn get(&self, j: usize, ctx: u64, n: u32) -> Option<f64> {
        self.at(j, self.cell(ctx, n)?)
    }
}

fn median(v: &[f64]) -> f64 {
    crate::stats::median(v.to_vec()).unwrap_or(f64::NAN)
}

/// [`median`] of `sorted` (ascending) without its value at `at`, as
/// `median` of the rest would give it, without copying or sorting them.
fn median_without(sorted: &[f64], at: usize) -> f64 {
    let n = sorted.len() - 1;
    let get = |i: usize| if i < at { sorted[i] } else { sorted[i + 1] };
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => get(n / 2),
        _ => (get(n / 2 - 1) + get(n / 2)) / 2.0,
    }
}

fn estimate(log_ratio: f64, se: f64, df: f64) -> Estimate {
    let (p, half) = crate::stats::t_test(log_ratio, se, df);
    Estimate {
        ratio: log_ratio.exp(),
        low: (log_ratio - half).exp(),
        high: (log_ratio + half).exp(),
        p,
    }
}

/// Holm's step-down adjustment: each p times the hypotheses still standing
/// when it is reached, never below an earlier one's.
pub(crate) fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = p.len();
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Slower or faster when significant at `alpha` and possibly at least the
/// threshold large: its 95% interval reaches past it. A change whose
/// interval lies within ± the threshold is real but too small to call.
fn call(e: &Estimate, p: f64, rule: &Rule) -> Call {
    if p >= rule.alpha {
        Call::Same
    } else if e.ratio < 1.0 && e.low < 1.0 - rule.threshold {
        Call::Slower
    } else if e.ratio > 1.0 && e.high > 1.0 + rule.threshold {
        Call::Faster
    } else {
        Call::Same
    }
}

/// The decode cells of `run` a judgement can weigh, in order: Valid with a
/// positive total, whose logarithm the rule takes (compare::grid's
/// `valid_cells` lists the Valid cells of several runs, for a table).
fn judgeable_cells(run: &Run) -> Vec<(u64, u32)> {
    run.decode_cells()
        .filter(|c| c.status == Status::Valid && c.total_tok_per_s.is_some_and(|t| t > 0.0))
        .map(|c| (c.context_tokens, c.concurrency))
        .collect()
}

/// The relative half-width of a cell's own 95% interval, as a log sd.
fn own_sd(run: &Run, ctx: u64, n: u32) -> f64 {
    run.decode_cell(ctx, n)
        .and_then(|c| c.total_noise())
        .map_or(0.0, |h| (1.0 + h).ln() / 1.96)
}

/// Earlier runs whose spread gives the noise (the center is the window's):
/// five runs say little of a spread, twenty say enough.
pub const HISTORY: usize = 20;

/// What a judgement compares: the run judged, the baseline window whose
/// median is the reference, and the earlier runs whose spread is the noise,
/// less the figures those runs' own judgements called changed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Against {
    pub judged: usize,
    pub baseline: Vec<usize>,
    pub history: Vec<usize>,
    /// (history run, cell) called slower or faster when that run was judged.
    pub changed_cells: Vec<(usize, (u64, u32))>,
    /// History runs called slower or faster as a whole.
    pub changed_wholes: Vec<usize>,
    /// Runs between the window's first and the judged run left out of the
    /// window, having been called changed.
    pub left_out: usize,
}

impl Against {
    /// `series[at]` against the window before it, none before `from`; the
    /// noise from up to HISTORY runs before it, each cell's without the runs
    /// `earlier` (the judgements of the runs before) called changed in that
    /// cell: a slow night says nothing of the noise, and would hide a change
    /// that lasts.
    pub fn window(at: usize, from: usize, earlier: &[Judgement], rule: &Rule) -> Against {
        let history: Vec<usize> = (at.saturating_sub(HISTORY).max(from)..at).collect();
        let judged = |j: usize| earlier.get(j);
        let baseline = baseline_window(at, from, earlier, rule);
        Against {
            judged: at,
            left_out: baseline
                .first()
                .map_or(0, |&first| at - first - baseline.len()),
            baseline,
            changed_cells: history
                .iter()
                .filter_map(|&j| Some((j, judged(j)?)))
                .flat_map(|(j, e)| {
                    e.cells
                        .iter()
                        .filter(|c| c.call != Call::Same)
                        .map(move |c| (j, (c.context_tokens, c.concurrency)))
                })
                .collect(),
            changed_wholes: history
                .iter()
                .copied()
                .filter(|&j| judged(j).is_some_and(|e| e.whole_call != Call::Same))
                .collect(),
            history,
        }
    }
}

/// Every run of a series against the runs before it, oldest first; run
/// `at`'s baseline starts no earlier than `from(at)` (the first run after
/// the last noted change).
pub fn judge_all(series: &[&Run], from: impl Fn(usize) -> usize, rule: &Rule) -> Vec<Judgement> {
    judge_all_after(series, from, rule, Vec::new(), None)
}

/// [`judge_all`] of the runs after the first `known.len()`, whose
/// judgements `known` are (a run is judged by the runs before it alone).
/// With `before`, the judgements of the same series before some of its
/// runs changed, the runs after those are judged only until their
/// judgements settle back to the earlier ones (see [`Before`]).
pub fn judge_all_after(
    series: &[&Run],
    from: impl Fn(usize) -> usize,
    rule: &Rule,
    known: Vec<Judgement>,
    before: Option<Before>,
) -> Vec<Judgement> {
    let mut out = known;
    let start = out.len();
    let logs = Logs::of(series, 0..series.len());
    let before = before.filter(|b| b.judgements.len() == series.len());
    // The first position from which every judgement made equals the earlier one.
    let mut agreeing_from = start;
    for at in start..series.len() {
        if let Some(b) = &before
            && b.settled(at, from(at), agreeing_from, &out, rule)
        {
            out.extend_from_slice(&b.judgements[at..]);
            break;
        }
        let j = judge_with(
            series,
            &logs,
            &Against::window(at, from(at), &out, rule),
            rule,
        );
        if before.as_ref().is_none_or(|b| b.judgements[at] != j) {
            agreeing_from = at + 1;
        }
        out.push(j);
    }
    out
}

/// The judgements of a series before the runs up to position `last_changed`
/// changed (`sitegen serve` after an edit), the same runs at the same
/// positions. A run's judgement reads the runs of its baseline and history
/// and the judgements of the runs it looked through for them, nothing else:
/// once those lie after `last_changed` and their judgements came out as
/// before, every later judgement is as before too, and need not be made.
pub struct Before<'a> {
    pub judgements: &'a [Judgement],
    pub last_changed: usize,
}

impl Before<'_> {
    /// Whether the judgement of `at` and of every run after it is the
    /// earlier one, given the judgements `made` before `at` (equal to the
    /// earlier ones from `agreeing_from` on) and the first run `from` its
    /// baseline may use.
    fn settled(
        &self,
        at: usize,
        from: usize,
        agreeing_from: usize,
        made: &[Judgement],
        rule: &Rule,
    ) -> bool {
        // The runs its history reads, and the judgements that say which
        // of their cells changed.
        let Some(history_from) = at.checked_sub(HISTORY) else {
            return false;
        };
        // The judgements the baseline's search looked through, back to its
        // oldest run, or to `from` when it found too few.
        let baseline = baseline_window(at, from, made, rule);
        let searched_from = match baseline.first() {
            Some(&first) if baseline.len() == rule.window => first,
            _ => from,
        };
        let reads_from = history_from.min(searched_from);
        reads_from > self.last_changed && reads_from >= agreeing_from
    }
}

/// `series[at]` against its baseline window (positions, oldest first).
pub fn judge(series: &[&Run], at: usize, baseline: &[usize], rule: &Rule) -> Judgement {
    let history: Vec<usize> = match baseline.first() {
        Some(&first) => (at.saturating_sub(HISTORY).max(first.min(at))..at).collect(),
        None => Vec::new(),
    };
    judge_against(
        series,
        &Against {
            judged: at,
            baseline: baseline.to_vec(),
            history,
            ..Default::default()
        },
        rule,
    )
}

/// A judged cell's figures: (cell, the judged run's change (log), the
/// baseline's log figures, the history's).
type CellFigures = ((u64, u32), f64, Vec<f64>, Vec<f64>);

/// The judged runs of `a` against its baseline and history.
pub fn judge_against(series: &[&Run], a: &Against, rule: &Rule) -> Judgement {
    let runs = a
        .baseline
        .iter()
        .chain(&a.history)
        .copied()
        .chain([a.judged]);
    judge_with(series, &Logs::of(series, runs), a, rule)
}

/// [`judge_against`] with the runs' figures read.
fn judge_with(series: &[&Run], logs: &Logs, a: &Against, rule: &Rule) -> Judgement {
    let basis = BaselineKind::Window;
    let insufficient = || Judgement {
        basis,
        baseline: a.baseline.clone(),
        left_out: a.left_out,
        whole: None,
        whole_call: Call::Same,
        cells: Vec::new(),
        verdict: Verdict::InsufficientData,
        plain_ratio: None,
    };
    if a.baseline.len() < MIN_BASELINE {
        return Judgement {
            plain_ratio: plain_ratio(series, a.judged, &a.baseline),
            ..insufficient()
        };
    }
    let judged = series[a.judged];
    let values = |runs: &[usize], column: usize| -> Vec<f64> {
        runs.iter().filter_map(|&j| logs.at(j, column)).collect()
    };
    // The cells the judged runs and enough of the baseline ran validly,
    // each with its column in `logs`.
    let (cells, columns): (Vec<CellFigures>, Vec<usize>) = judgeable_cells(judged)
        .into_iter()
        .filter_map(|(ctx, n)| {
            let column = logs.cell(ctx, n)?;
            let base = values(&a.baseline, column);
            if base.len() < MIN_BASELINE {
                return None;
            }
            let y = logs.at(a.judged, column)? - median(&base);
            let noise_runs: Vec<usize> = a
                .history
                .iter()
                .copied()
                .filter(|&j| !a.changed_cells.contains(&(j, (ctx, n))))
                .collect();
            Some((((ctx, n), y, base, values(&noise_runs, column)), column))
        })
        .unzip();
    if cells.is_empty() {
        return insufficient();
    }
    // The spread of all cells, which each cell's own is shrunk towards.
    let sds: Vec<f64> = cells
        .iter()
        .filter_map(|(_, _, _, h)| crate::stats::sample_sd(h))
        .collect();
    let pooled = (sds.iter().map(|s| s * s).sum::<f64>() / sds.len().max(1) as f64).sqrt();
    let mut judged_cells: Vec<CellJudgement> = cells
        .iter()
        .map(|&((ctx, n), y, ref base, ref history)| {
            let k = base.len() as f64;
            let own = crate::stats::sample_sd(history).unwrap_or(pooled);
            let own_interval = own_sd(judged, ctx, n);
            let spread = ((own * own + pooled * pooled) / 2.0)
                .sqrt()
                .max(own_interval);
            // The median of k values has about π/2 times the mean's variance.
            let se = spread * (1.0 + std::f64::consts::FRAC_PI_2 / k).sqrt();
            let df = (history.len().max(base.len()) as f64 - 1.0).max(1.0);
            CellJudgement {
                context_tokens: ctx,
                concurrency: n,
                estimate: estimate(y, se, df),
                p_family: 1.0,
                call: Call::Same,
            }
        })
        .collect();
    let family = holm(
        &judged_cells
            .iter()
            .map(|c| c.estimate.p)
            .collect::<Vec<_>>(),
    );
    for (c, p) in judged_cells.iter_mut().zip(family) {
        c.p_family = p;
        c.call = call(&c.estimate, p, rule);
    }
    // The whole run: the median of its cells' log ratios to the window,
    // against the spread of the same median among the history's runs
    // (each against the history's own per-cell median).
    // `of` a run's figure in a column of `logs`, `centers` by index in `cells`.
    let whole_of = |of: &dyn Fn(usize) -> Option<f64>, centers: &dyn Fn(usize) -> f64| {
        let v: Vec<f64> = (0..cells.len())
            .filter_map(|c| Some(of(columns[c])? - centers(c)))
            .filter(|d| d.is_finite())
            .collect();
        (!v.is_empty()).then(|| median(&v))
    };
    let window_center = |c: usize| median(&cells[c].2);
    // Each history run against the others (its own figure in the median
    // would make many of its cells' differences exactly zero): the
    // history's figures of each cell sorted once, each run's left out by
    // position, not by sorting the others again for every run.
    let history_sorted: Vec<Vec<f64>> = columns
        .iter()
        .map(|&column| {
            let mut v = values(&a.history, column);
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let history_center = |c: usize, without: usize| {
        let sorted = &history_sorted[c];
        match logs.at(without, columns[c]) {
            Some(own) if a.history.contains(&without) => {
                let at = sorted.partition_point(|x| x.total_cmp(&own).is_lt());
                median_without(sorted, at)
            }
            _ => median(sorted),
        }
    };
    let scores: Vec<f64> = a
        .history
        .iter()
        .filter(|j| !a.changed_wholes.contains(j))
        .filter_map(|&j| whole_of(&|column| logs.at(j, column), &|c| history_center(c, j)))
        .collect();
    let whole = whole_of(&|column| logs.at(a.judged, column), &window_center)
        .zip(crate::stats::sample_sd(&scores))
        .map(|(m, sd)| {
            let k = a.baseline.len() as f64;
            let se = sd * (1.0 + std::f64::consts::FRAC_PI_2 / k).sqrt();
            estimate(m, se, scores.len() as f64 - 1.0)
        });
    let whole_call = whole.map_or(Call::Same, |e| call(&e, e.p, rule));
    let slower = judged_cells.iter().any(|c| c.call == Call::Slower);
    let faster = judged_cells.iter().any(|c| c.call == Call::Faster);
    let verdict = if whole_call == Call::Slower || slower {
        Verdict::Regression
    } else if whole_call == Call::Faster || faster {
        Verdict::Improvement
    } else {
        Verdict::WithinNoise
    };
    Judgement {
        basis,
        baseline: a.baseline.clone(),
        left_out: a.left_out,
        whole,
        whole_call,
        cells: judged_cells,
        verdict,
        plain_ratio: None,
    }
}

/// `series[at]` against `baseline` without a judgement: the median over the
/// cells it and every baseline run ran validly of its total over the
/// baseline's median there (as the rule's whole run, on a log scale). Only
/// cells every baseline run measured, so "the median of the 2 runs before"
/// is true of each cell; None when there is no such cell.
fn plain_ratio(series: &[&Run], at: usize, baseline: &[usize]) -> Option<f64> {
    if baseline.is_empty() {
        return None;
    }
    let judged = series[at];
    let v: Vec<f64> = judgeable_cells(judged)
        .into_iter()
        .filter_map(|(ctx, n)| {
            let base: Vec<f64> = baseline
                .iter()
                .map(|&j| log_total(series[j], ctx, n))
                .collect::<Option<_>>()?;
            Some(log_total(judged, ctx, n)? - median(&base))
        })
        .collect();
    (!v.is_empty()).then(|| median(&v).exp())
}

/// The baseline window of `series[at]`: the `rule.window` runs closest
/// before it that `earlier` (their own judgements) did not call changed,
/// none before `from` (the first run after a noted change). A slow night
/// left out, the night after it is judged against normal ones; a change
/// that lasts stays a change against the runs before it until it is noted
/// in data/changes.json.
pub fn baseline_window(at: usize, from: usize, earlier: &[Judgement], rule: &Rule) -> Vec<usize> {
    let mut window: Vec<usize> = (from..at)
        .rev()
        .filter(|&j| earlier.get(j).is_none_or(|e| !e.verdict.is_change()))
        .take(rule.window)
        .collect();
    window.reverse();
    window
}

/// A shift the whole series shows: from run `at` on, decode moved by
/// `change` (-0.09: 9% slower), found by change-point detection.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shift {
    /// Position in the series of the first run after the change.
    pub at: usize,
    pub change: f64,
    pub p: f64,
    /// Contexts and concurrency levels that moved with it (beyond the
    /// threshold, the same way), and those that did not.
    pub contexts: Vec<u64>,
    pub levels: Vec<u32>,
    pub all_contexts: Vec<u64>,
    pub all_levels: Vec<u32>,
}

/// Each run's figure against the series: the median over its Valid cells
/// of its total over the cell's median in `runs` (1.0: as usual).
fn run_scores(series: &[&Run], runs: &[usize]) -> Vec<Option<f64>> {
    // Logs' columns are the cells any of the runs can be judged in: read
    // by column, without looking each cell up (a series of 5,000 runs
    // spent most of its change points' time there).
    let logs = Logs::of(series, runs.iter().copied());
    let rows: Vec<&[f64]> = runs.iter().map(|&j| logs.row(j)).collect();
    let centers: Vec<f64> = (0..logs.cells.len())
        .map(|c| {
            let v: Vec<f64> = rows
                .iter()
                .map(|row| row[c])
                .filter(|v| !v.is_nan())
                .collect();
            crate::stats::median(v).unwrap_or(f64::NAN)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let v: Vec<f64> = row
                .iter()
                .zip(&centers)
                .filter(|(v, _)| !v.is_nan())
                .map(|(v, c)| v - c)
                .collect();
            crate::stats::median(v).map(f64::exp)
        })
        .collect()
}

/// The shifts of `series[from..]`: change points of the runs' scores
/// (Otava's E-divisive means, p ≤ 0.001), each moving them by more than
/// half the threshold (what is called is judged with the interval, below).
pub fn shifts(series: &[&Run], from: usize, rule: &Rule) -> Vec<Shift> {
    let runs: Vec<usize> = (from..series.len()).collect();
    let scored: Vec<(usize, f64)> = runs
        .iter()
        .zip(run_scores(series, &runs))
        .filter_map(|(&j, s)| Some((j, s?)))
        .collect();
    if scored.len() < 2 * MIN_BASELINE {
        return Vec::new();
    }
    let x: Vec<f64> = scored.iter().map(|(_, s)| *s).collect();
    let cps = crate::judge::change_points::change_points(
        &x,
        crate::judge::change_points::DEFAULT_WINDOW,
        crate::judge::change_points::DEFAULT_MAX_P,
        rule.threshold / 2.0,
    );
    let bounds: Vec<usize> = cps.iter().map(|c| c.index).collect();
    cps.iter()
        .enumerate()
        .map(|(k, cp)| {
            let lo = if k > 0 { bounds[k - 1] } else { 0 };
            let hi = bounds.get(k + 1).copied().unwrap_or(x.len());
            let before: Vec<usize> = scored[lo..cp.index].iter().map(|(j, _)| *j).collect();
            let after: Vec<usize> = scored[cp.index..hi].iter().map(|(j, _)| *j).collect();
            let change = cp.split.forward_change();
            let (contexts, levels, all_contexts, all_levels) =
                what_moved(series, &before, &after, change, rule);
            Shift {
                at: scored[cp.index].0,
                change,
                p: cp.split.p,
                contexts,
                levels,
                all_contexts,
                all_levels,
            }
        })
        .collect()
}

/// The contexts and levels whose median ratio (after over before) moved
/// beyond the threshold the way `change` did; and all contexts and levels.
fn what_moved(
    series: &[&Run],
    before: &[usize],
    after: &[usize],
    change: f64,
    rule: &Rule,
) -> (Vec<u64>, Vec<u32>, Vec<u64>, Vec<u32>) {
    let logs = Logs::of(series, before.iter().chain(after).copied());
    let mut cells: Vec<(u64, u32)> = after
        .iter()
        .flat_map(|&j| judgeable_cells(series[j]))
        .collect();
    cells.sort_unstable();
    cells.dedup();
    let ratio = |ctx: u64, n: u32| {
        let side = |runs: &[usize]| {
            let v: Vec<f64> = runs.iter().filter_map(|&j| logs.get(j, ctx, n)).collect();
            (!v.is_empty()).then(|| median(&v))
        };
        Some(side(after)? - side(before)?)
    };
    let moved = |r: f64| {
        if change < 0.0 {
            r.exp() < 1.0 - rule.threshold
        } else {
            r.exp() > 1.0 + rule.threshold
        }
    };
    let ratios: Vec<((u64, u32), f64)> = cells
        .iter()
        .filter_map(|&(ctx, n)| Some(((ctx, n), ratio(ctx, n)?)))
        .collect();
    let mut all_contexts: Vec<u64> = ratios.iter().map(|((c, _), _)| *c).collect();
    all_contexts.dedup();
    let mut all_levels: Vec<u32> = ratios.iter().map(|((_, n), _)| *n).collect();
    all_levels.sort_unstable();
    all_levels.dedup();
    let by = |keep: &dyn Fn(&(u64, u32)) -> bool| {
        let v: Vec<f64> = ratios
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(_, r)| *r)
            .collect();
        median(&v)
    };
    let contexts = all_contexts
        .iter()
        .copied()
        .filter(|&c| moved(by(&|k: &(u64, u32)| k.0 == c)))
        .collect();
    let levels = all_levels
        .iter()
        .copied()
        .filter(|&n| moved(by(&|k: &(u64, u32)| k.1 == n)))
        .collect();
    (contexts, levels, all_contexts, all_levels)
}

/// The newest run's verdict: against its baseline window, and, where the
/// series shifted since it began (after `from`), against the runs before
/// the last shift, so that a slow creep the window keeps up with is still
/// called once the series shows it. The stronger of the two is the verdict.
/// `earlier` are the judgements of the runs before it (`judge_all`).
pub fn newest(
    series: &[&Run],
    from: usize,
    earlier: &[Judgement],
    rule: &Rule,
) -> (Judgement, Option<Shift>) {
    let last = shifts(series, from, rule).into_iter().last();
    newest_after(series, from, earlier, rule, last)
}

/// [`newest`] with the last of `shifts(series, from, rule)` found already
/// (the series' own shifts: finding them is most of the work).
pub fn newest_after(
    series: &[&Run],
    from: usize,
    earlier: &[Judgement],
    rule: &Rule,
    last: Option<Shift>,
) -> (Judgement, Option<Shift>) {
    let at = series.len() - 1;
    // Two tests of one run, each at half the rule's alpha (Bonferroni), so
    // that together they keep to it.
    let rule = &Rule {
        alpha: rule.alpha / 2.0,
        ..*rule
    };
    let window = judge_against(series, &Against::window(at, from, earlier, rule), rule);
    let before_shift = last
        .as_ref()
        .filter(|shift| shift.at > from && at >= shift.at)
        .map(|shift| {
            let mut j = judge_against(
                series,
                &Against {
                    judged: at,
                    ..Against::window(shift.at, from, earlier, rule)
                },
                rule,
            );
            j.basis = BaselineKind::BeforeShift { at: shift.at };
            j
        });
    let best = match before_shift {
        Some(j) if j.verdict.rank() > window.verdict.rank() => j,
        _ => window,
    };
    (best, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_without_one_value_is_the_median_of_the_others() {
        let values = [3.0, -1.0, 2.5, 2.5, 7.0, 0.0, 4.25];
        for len in 1..=values.len() {
            let mut sorted = values[..len].to_vec();
            sorted.sort_by(f64::total_cmp);
            for at in 0..len {
                let mut others = sorted.clone();
                others.remove(at);
                let want = median(&others);
                let got = median_without(&sorted, at);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{sorted:?} without {at}: {got} != {want}"
                );
            }
        }
    }

    #[test]
    fn holm_adjusts_in_order_and_never_decreases() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let adjusted = holm(&p);
        // Sorted 0.005, 0.01, 0.03, 0.04: × 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.06 (kept >= the last).
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adjusted:?}");
        }
        assert_eq!(holm(&[]), Vec::<f64>::new());
    }

    /// A run of cells (8K × 1, 8K × 4, 64K × 1) at these totals, each Valid
    /// unless NaN (then Looped, a status with no valid figure).
    fn run(id: &str, totals: [f64; 3]) -> Run {
        use crate::model::Status::{Looped, Valid};
        let cells: Vec<(u64, u32, Status, f64)> = [(8192, 1), (8192, 4), (65_536, 1)]
            .into_iter()
            .zip(totals)
            .map(|((ctx, n), t)| (ctx, n, if t.is_nan() { Looped } else { Valid }, t))
            .collect();
        crate::compare::tests::with_cells(id, &cells)
    }

    /// Nightly runs at about 1,000 tok/s (a fixed, deterministic noise of
    /// ±2%), those in `slow` at `factor` times that.
    fn nights(n: usize, slow: impl Fn(usize) -> bool, factor: f64) -> Vec<Run> {
        (0..n)
            .map(|i| {
                let noise = |k: usize| 1.0 + 0.02 * (((i * 7 + k * 3) % 11) as f64 / 5.0 - 1.0);
                let f = if slow(i) { factor } else { 1.0 };
                run(
                    &format!("r{i}"),
                    [
                        1000.0 * f * noise(0),
                        400.0 * f * noise(1),
                        90.0 * f * noise(2),
                    ],
                )
            })
            .collect()
    }

    #[test]
    fn an_edited_run_s_series_judged_again_until_it_settles_is_the_series_judged_afresh() {
        let rule = Rule::default();
        let from = |_: usize| 0;
        // A clean series, a one-night dip, and a slowdown that lasts (every
        // run after it a regression, their baselines reaching back before it).
        // Which nights are slow.
        type Slow = fn(usize) -> bool;
        let shapes: [(&str, Slow); 3] = [
            ("clean", |_| false),
            ("a dip", |i| i == 30),
            ("a lasting slowdown", |i| i >= 40),
        ];
        let mut judged_again = 0;
        let mut edits = 0;
        for (shape, slow) in shapes {
            let runs = nights(90, slow, 0.8);
            let refs: Vec<&Run> = runs.iter().collect();
            let old = judge_all(&refs, from, &rule);
            // Each run in turn made 30% slower, then 30% faster.
            for k in 0..runs.len() {
                for factor in [0.7, 1.3] {
                    let mut edited = runs.clone();
                    edited[k] = nights(90, |i| i == k, factor).swap_remove(k);
                    let refs: Vec<&Run> = edited.iter().collect();
                    let afresh = judge_all(&refs, from, &rule);
                    let again = judge_all_after(
                        &refs,
                        from,
                        &rule,
                        old[..k].to_vec(),
                        Some(Before {
                            judgements: &old,
                            last_changed: k,
                        }),
                    );
                    assert!(again == afresh, "{shape}: run {k} x{factor}");
                    edits += 1;
                    judged_again += afresh
                        .iter()
                        .zip(&old)
                        .skip(k)
                        .filter(|(a, b)| a != b)
                        .count();
                }
            }
        }
        // The edits did change later judgements (the cases are not trivial).
        assert!(
            judged_again > edits,
            "{judged_again} judgements changed by {edits} edits"
        );
    }

    #[test]
    fn a_judgement_has_not_settled_while_its_baseline_reaches_back_to_a_changed_run() {
        let rule = Rule::default();
        // A slowdown from night 40 on: every night after it a regression,
        // so night 70's baseline is the nights before 40, its history 50-69.
        let runs = nights(90, |i| i >= 40, 0.8);
        let refs: Vec<&Run> = runs.iter().collect();
        let old = judge_all(&refs, |_| 0, &rule);
        assert!(old[41..].iter().all(|j| j.verdict == Verdict::Regression));
        let baseline = baseline_window(70, 0, &old, &rule);
        assert_eq!(baseline, (40 - rule.window..40).collect::<Vec<_>>());
        let settled = |last_changed: usize| {
            Before {
                judgements: &old,
                last_changed,
            }
            .settled(70, 0, 0, &old[..70], &rule)
        };
        // Night 37 changed: in night 70's baseline though not its history.
        assert!(!settled(37));
        assert!(!settled(55), "in its history");
        assert!(settled(40 - rule.window - 1), "before both");
    }

    fn plain(series: &[Run]) -> Judgement {
        let refs: Vec<&Run> = series.iter().collect();
        let at = refs.len() - 1;
        let j = judge(&refs, at, &(0..at).collect::<Vec<_>>(), &Rule::default());
        assert_eq!(j.verdict, Verdict::InsufficientData);
        j
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn too_few_runs_to_judge_still_give_the_plain_ratio() {
        // One earlier run, this one 20% slower in every cell.
        let j = plain(&[
            run("a", [100.0, 300.0, 50.0]),
            run("b", [80.0, 240.0, 40.0]),
        ]);
        assert!(close(j.plain_ratio, 0.8), "{j:?}");
        // Two: each cell against the median of both (on a log scale, the
        // geometric mean), then the median over the cells.
        // 8K × 1: 160 against 100 and 400 (centre 200) is 0.8×; the cells
        // 0.8×, 0.8× and 0.9× have the median 0.8×.
        let j = plain(&[
            run("a", [100.0, 300.0, 50.0]),
            run("b", [400.0, 300.0, 50.0]),
            run("c", [160.0, 240.0, 45.0]),
        ]);
        assert!(close(j.plain_ratio, 0.8), "{j:?}");
    }

    #[test]
    fn a_plain_ratio_counts_only_cells_every_earlier_run_measured_validly() {
        // 64K × 1 (0.5×) is valid in one of the two earlier runs only: left
        // out, the ratio is the median of 0.8× and 0.9×, not 0.8×.
        let j = plain(&[
            run("a", [100.0, 300.0, f64::NAN]),
            run("b", [100.0, 300.0, 50.0]),
            run("c", [80.0, 270.0, 25.0]),
        ]);
        assert!(close(j.plain_ratio, (0.8f64 * 0.9).sqrt()), "{j:?}");
        // The earlier run measured validly no cell this one did: no ratio.
        let j = plain(&[
            run("a", [f64::NAN, f64::NAN, 50.0]),
            run("b", [80.0, 240.0, f64::NAN]),
        ]);
        assert_eq!(j.plain_ratio, None);
    }

    #[test]
    fn no_plain_ratio_without_an_earlier_run_or_once_judged() {
        assert_eq!(plain(&[run("a", [100.0, 300.0, 50.0])]).plain_ratio, None);
        let series: Vec<Run> = (0..4)
            .map(|i| run(&format!("r{i}"), [100.0, 300.0, 50.0]))
            .collect();
        let refs: Vec<&Run> = series.iter().collect();
        let j = judge(&refs, 3, &[0, 1, 2], &Rule::default());
        assert_ne!(j.verdict, Verdict::InsufficientData);
        assert_eq!(j.plain_ratio, None);
    }
}
