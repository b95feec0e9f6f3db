//! Frontiers of one run: throughput against interactivity (Pareto), and the
//! most requests each context ran validly (capacity).

use std::collections::BTreeMap;

use crate::model::{Run, Status};

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
    points_of(run).collect()
}

/// Whether the run has any of [`interactivity_points`].
pub(crate) fn has_interactivity_points(run: &Run) -> bool {
    points_of(run).next().is_some()
}

fn points_of(run: &Run) -> impl Iterator<Item = InteractivityPoint> + '_ {
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
