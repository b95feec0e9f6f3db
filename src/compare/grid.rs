//! The grid two or more runs are compared on: their contexts paired (equal,
//! or within 2%), the concurrency levels either measured, and the ratio of
//! every cell of that grid.

use std::collections::BTreeSet;

use super::ratio::{Basis, NoRatio, NoiseVerdict, Unusable, cell_verdict, ratio};
use crate::model::figure::Figure;
use crate::model::{Run, Status};

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
    pub verdict: NoiseVerdict,
}

impl RatioGrid {
    pub(crate) fn between(a: &Run, b: &Run, basis: Basis) -> RatioGrid {
        RatioGrid::of(a, b, Figure::Throughput, basis)
    }

    /// `b`'s `figure` over `a`'s, cell by cell, on `basis` where the figure
    /// can be shared over GPUs.
    pub(crate) fn of(a: &Run, b: &Run, figure: Figure, basis: Basis) -> RatioGrid {
        let rows = pair_contexts(&a.decode_contexts(), &b.decode_contexts());
        let levels: BTreeSet<u32> = a
            .concurrency_levels()
            .into_iter()
            .chain(b.concurrency_levels())
            .collect();
        let levels: Vec<u32> = levels.into_iter().collect();
        let basis = if figure.definition().per_gpu {
            basis
        } else {
            Basis::Total
        };
        let cells = rows
            .iter()
            .map(|p| {
                levels
                    .iter()
                    .map(|&n| {
                        let ca = p.a.and_then(|ctx| a.decode_cell(ctx, n));
                        let cb = p.b.and_then(|ctx| b.decode_cell(ctx, n));
                        ratio(figure, ca, cb).map(|r| Judged {
                            value: basis.ratio(a, b, r),
                            // The per-GPU basis scales both figures by
                            // constants: the verdict on the totals holds.
                            verdict: ca
                                .zip(cb)
                                .map_or(NoiseVerdict::Unknown, |(x, y)| cell_verdict(figure, x, y)),
                        })
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

/// What one run has at a cell of a ratio grid: usable, or why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SideState {
    Usable,
    /// The first run measured 0 tok/s there.
    ZeroTokPerS,
    Unusable(Unusable),
}

fn side_state(cell: &Result<Judged, NoRatio>, side: usize) -> SideState {
    match cell {
        Ok(_) => SideState::Usable,
        Err(NoRatio::ZeroBase) if side == 0 => SideState::ZeroTokPerS,
        Err(NoRatio::ZeroBase) => SideState::Usable,
        Err(NoRatio::Unusable { a, b }) => {
            [a, b][side].map_or(SideState::Usable, SideState::Unusable)
        }
    }
}

/// One run's state over some cells of a grid: each distinct state as
/// `key` tells them apart (a reader tells them by their words), in order of
/// first appearance, with the stretches of consecutive grid positions
/// (first, last) it covers.
pub(crate) type SideStates<K> = Vec<(K, Vec<(usize, usize)>)>;

/// Each run's states over `cells` (grid position, cell), for the note of a
/// row or column without a ratio. A cell neither run measured says nothing
/// about either and is passed over; it also ends a stretch.
pub(crate) fn side_states<'a, K: PartialEq>(
    cells: impl Iterator<Item = (usize, &'a Result<Judged, NoRatio>)>,
    key: impl Fn(SideState) -> K,
) -> [SideStates<K>; 2] {
    let mut sides: [SideStates<K>; 2] = [Vec::new(), Vec::new()];
    let neither = Err(NoRatio::Unusable {
        a: Some(Unusable::NotMeasured),
        b: Some(Unusable::NotMeasured),
    });
    for (at, cell) in cells.filter(|(_, c)| **c != neither) {
        for (side, states) in sides.iter_mut().enumerate() {
            let word = key(side_state(cell, side));
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
