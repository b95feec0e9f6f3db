//! Capacity within a latency budget: per context, the most simultaneous
//! requests whose cell meets every limit of an SLO tier at the tier's
//! percentile, the throughput there (goodput), whether every lower level met
//! it too, and what breaks first above it. Numbers and enums only; the run
//! page, the comparison and the CSV word them.

use crate::model::paced::PacedPoint;
use crate::model::slo::{Latency, SloTier, min_requests};
use crate::model::{DecodeCell, Run, Status};

/// A limit of a tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Ttft,
    Tpot,
}

impl Limit {
    pub const ALL: [Limit; 2] = [Limit::Ttft, Limit::Tpot];

    /// The tier's bound for this limit, if it sets one.
    pub fn bound(self, tier: &SloTier) -> Option<f64> {
        match self {
            Limit::Ttft => tier.ttft_ms,
            Limit::Tpot => tier.tpot_ms,
        }
    }
}

/// A cell's figure for a limit at a percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub value: f64,
    /// Requests behind it, where the source says.
    pub requests: Option<u64>,
}

/// What a tier is judged on: a decode cell's or a paced point's status,
/// stated percentiles and medians.
pub trait LatencyFigures {
    fn status(&self) -> Status;
    fn latency(&self) -> Option<&Latency>;
    fn ttft_median_ms(&self) -> Option<f64>;
    fn per_request_tok_per_s(&self) -> Option<f64>;
}

impl LatencyFigures for DecodeCell {
    fn status(&self) -> Status {
        self.status
    }
    fn latency(&self) -> Option<&Latency> {
        self.latency.as_deref()
    }
    fn ttft_median_ms(&self) -> Option<f64> {
        self.ttft_median_ms
    }
    fn per_request_tok_per_s(&self) -> Option<f64> {
        self.per_request_tok_per_s
    }
}

impl LatencyFigures for PacedPoint {
    fn status(&self) -> Status {
        self.status
    }
    fn latency(&self) -> Option<&Latency> {
        self.latency.as_deref()
    }
    fn ttft_median_ms(&self) -> Option<f64> {
        self.ttft_median_ms
    }
    fn per_request_tok_per_s(&self) -> Option<f64> {
        self.per_request_tok_per_s
    }
}

/// A cell's figure for `limit` at `percentile`: the percentile its source
/// stated, or at the median the cell's own median (TTFT) or 1000 / its
/// median per-request tok/s (TPOT: a request's rate is 1 / its time per
/// output token, and a median survives that turn). Never another
/// percentile's figure.
pub fn reading<C: LatencyFigures + ?Sized>(
    cell: &C,
    limit: Limit,
    percentile: u8,
) -> Option<Reading> {
    let stated = cell.latency().and_then(|l| match limit {
        Limit::Ttft => l.ttft_ms.as_ref(),
        Limit::Tpot => l.tpot_ms.as_ref(),
    });
    if let Some(q) = stated
        && let Some(value) = q.at(percentile)
    {
        return Some(Reading {
            value,
            requests: q.requests,
        });
    }
    if percentile != 50 {
        return None;
    }
    let value = match limit {
        Limit::Ttft => cell.ttft_median_ms()?,
        Limit::Tpot => 1000.0 / cell.per_request_tok_per_s().filter(|r| *r > 0.0)?,
    };
    Some(Reading {
        value,
        requests: None,
    })
}

/// Why a cell does not meet a tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Breach {
    /// It was not a Valid cell: over capacity, queued, looped or failed.
    Status(Status),
    /// A limit exceeded: its figure and the tier's bound.
    Over {
        limit: Limit,
        value: f64,
        bound: f64,
    },
}

impl Breach {
    /// Its name in downloads: "ttft", "tpot", or the status's code
    /// ("over_capacity").
    pub fn code(self) -> &'static str {
        match self {
            Breach::Over {
                limit: Limit::Ttft, ..
            } => "ttft",
            Breach::Over {
                limit: Limit::Tpot, ..
            } => "tpot",
            Breach::Status(s) => s.code(),
        }
    }

    /// How far past its bound, for a limit: 1.5 is 50% over.
    pub fn overshoot(self) -> Option<f64> {
        match self {
            Breach::Over { value, bound, .. } => Some(value / bound),
            Breach::Status(_) => None,
        }
    }
}

/// A cell against a tier.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    Meets,
    /// Every limit it breaks, the furthest past its bound first.
    Fails(Vec<Breach>),
    /// A Valid cell without the figure of these limits at the tier's
    /// percentile.
    NotRecorded(Vec<Limit>),
}

/// A percentile taken over fewer requests than it needs
/// (`slo::min_requests`): an estimate, never shown as exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FewRequests {
    pub concurrency: u32,
    pub limit: Limit,
    pub requests: u64,
    pub needed: u64,
}

/// The cell against the tier, and the figures behind it.
pub fn judge_cell<C: LatencyFigures + ?Sized>(cell: &C, tier: &SloTier) -> (Judged, Vec<Reading>) {
    if cell.status() != Status::Valid {
        return (
            Judged::Fails(vec![Breach::Status(cell.status())]),
            Vec::new(),
        );
    }
    let missing: Vec<Limit> = Limit::ALL
        .into_iter()
        .filter(|l| l.bound(tier).is_some() && reading(cell, *l, tier.percentile).is_none())
        .collect();
    if !missing.is_empty() {
        return (Judged::NotRecorded(missing), Vec::new());
    }
    let mut breaches = Vec::new();
    let mut readings = Vec::new();
    for limit in Limit::ALL {
        let (Some(bound), Some(r)) = (limit.bound(tier), reading(cell, limit, tier.percentile))
        else {
            continue;
        };
        readings.push(r);
        if r.value > bound {
            breaches.push(Breach::Over {
                limit,
                value: r.value,
                bound,
            });
        }
    }
    if breaches.is_empty() {
        (Judged::Meets, readings)
    } else {
        breaches.sort_by(|a, b| {
            b.overshoot()
                .unwrap_or(0.0)
                .total_cmp(&a.overshoot().unwrap_or(0.0))
        });
        (Judged::Fails(breaches), readings)
    }
}

/// Points of one workload in rising load (rates, numbers of sessions)
/// against a tier: the last that meets it, those below it that do not, the
/// first above it and what breaks there, whether a percentile behind the
/// verdict stands on too few requests; or the first point (by index) that
/// cannot be judged, and the limits it lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum Along {
    NotRecorded {
        index: usize,
        limits: Vec<Limit>,
    },
    Judged {
        best: Option<usize>,
        failed_below: Vec<usize>,
        breaks: Option<(usize, Breach)>,
        estimate: bool,
    },
}

/// `points` (in rising load) against `tier`, each judged by [`judge_cell`].
pub fn along<C: LatencyFigures>(points: &[&C], tier: &SloTier) -> Along {
    let judged: Vec<(Judged, Vec<Reading>)> = points.iter().map(|p| judge_cell(*p, tier)).collect();
    if let Some((index, (Judged::NotRecorded(limits), _))) = judged
        .iter()
        .enumerate()
        .find(|(_, (j, _))| matches!(j, Judged::NotRecorded(_)))
    {
        return Along::NotRecorded {
            index,
            limits: limits.clone(),
        };
    }
    let best = judged.iter().rposition(|(j, _)| *j == Judged::Meets);
    let failed_below = best.map_or_else(Vec::new, |b| {
        (0..b).filter(|&i| judged[i].0 != Judged::Meets).collect()
    });
    let above = best.map_or(0, |b| b + 1);
    let breaks = judged.get(above).map(|(j, _)| match j {
        Judged::Fails(b) => (above, b[0]),
        _ => unreachable!("the first point above the last that meets fails"),
    });
    let estimate = judged[..(above + 1).min(judged.len())]
        .iter()
        .flat_map(|(_, readings)| readings)
        .any(|r| {
            r.requests
                .is_none_or(|k| k < crate::model::slo::min_requests(tier.percentile))
        });
    Along::Judged {
        best,
        failed_below,
        breaks,
        estimate,
    }
}

/// A break this far past its bound, or more, at the first level above
/// capacity is a cliff: the limit was jumped, not crept up to.
pub const CLIFF: f64 = 2.0;

/// What breaks first above capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Break {
    pub concurrency: u32,
    /// The first of `Judged::Fails`: what binds.
    pub breach: Breach,
    /// Past its bound by [`CLIFF`] or more; `None` for a status.
    pub cliff: Option<bool>,
}

/// One context of a run against one tier.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityRow {
    pub context_tokens: u64,
    pub outcome: RowOutcome,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RowOutcome {
    /// A Valid cell of this context has no figure for these limits at the
    /// tier's percentile: the row cannot be judged (`concurrency` is the
    /// first such cell).
    NotRecorded {
        limits: Vec<Limit>,
        concurrency: u32,
    },
    Judged(Capacity),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// The most requests at once whose cell met every limit; `None` when
    /// no level did.
    pub max_concurrency: Option<u32>,
    /// Total tok/s of that cell.
    pub goodput: Option<f64>,
    /// Levels below `max_concurrency` that did not meet it: the row is not
    /// monotone when there is any.
    pub failed_below: Vec<u32>,
    /// The first level above capacity, and what broke there; `None` when
    /// the highest level measured met it.
    pub breaks: Option<Break>,
    /// Percentiles behind the verdict (levels up to the break) taken over
    /// too few requests.
    pub few_requests: Vec<FewRequests>,
    /// Some figure behind the verdict does not state its requests.
    pub requests_unstated: bool,
}

impl Capacity {
    pub fn monotone(&self) -> bool {
        self.failed_below.is_empty()
    }
}

/// The first row that could be judged, with its capacity: the smallest
/// context the pages name a run's capacity at.
pub fn first_judged(rows: &[CapacityRow]) -> Option<(u64, &Capacity)> {
    rows.iter().find_map(|r| match &r.outcome {
        RowOutcome::Judged(c) => Some((r.context_tokens, c)),
        RowOutcome::NotRecorded { .. } => None,
    })
}

/// Every decode context of `run` against `tier`, in context order.
pub fn capacity(run: &Run, tier: &SloTier) -> Vec<CapacityRow> {
    run.decode_contexts()
        .into_iter()
        .map(|ctx| {
            let mut cells: Vec<&DecodeCell> = run
                .decode_cells()
                .filter(|c| c.context_tokens == ctx)
                .collect();
            cells.sort_by_key(|c| c.concurrency);
            CapacityRow {
                context_tokens: ctx,
                outcome: row(&cells, tier),
            }
        })
        .collect()
}

fn row(cells: &[&DecodeCell], tier: &SloTier) -> RowOutcome {
    let judged: Vec<(u32, Judged, Vec<Reading>)> = cells
        .iter()
        .map(|c| {
            let (j, r) = judge_cell(*c, tier);
            (c.concurrency, j, r)
        })
        .collect();
    if let Some((n, Judged::NotRecorded(limits), _)) = judged
        .iter()
        .find(|(_, j, _)| matches!(j, Judged::NotRecorded(_)))
    {
        return RowOutcome::NotRecorded {
            limits: limits.clone(),
            concurrency: *n,
        };
    }
    let best = judged.iter().rposition(|(_, j, _)| *j == Judged::Meets);
    let failed_below = best.map_or_else(Vec::new, |b| {
        judged[..b]
            .iter()
            .filter(|(_, j, _)| *j != Judged::Meets)
            .map(|(n, _, _)| *n)
            .collect()
    });
    let above = best.map_or(0, |b| b + 1);
    let breaks = judged.get(above).map(|(n, j, _)| {
        let Judged::Fails(b) = j else {
            unreachable!("the first level above the last that meets fails")
        };
        Break {
            concurrency: *n,
            breach: b[0],
            cliff: b[0].overshoot().map(|o| o >= CLIFF),
        }
    });
    let behind = &judged[..(above + 1).min(judged.len())];
    let mut few_requests = Vec::new();
    let mut requests_unstated = false;
    for (n, _, readings) in behind {
        for (limit, r) in Limit::ALL
            .into_iter()
            .filter(|l| l.bound(tier).is_some())
            .zip(readings)
        {
            match r.requests {
                None => requests_unstated = true,
                Some(k) if k < min_requests(tier.percentile) => few_requests.push(FewRequests {
                    concurrency: *n,
                    limit,
                    requests: k,
                    needed: min_requests(tier.percentile),
                }),
                Some(_) => {}
            }
        }
    }
    let at = best.map(|b| cells[b]);
    RowOutcome::Judged(Capacity {
        max_concurrency: at.map(|c| c.concurrency),
        goodput: at.and_then(|c| c.total_tok_per_s),
        failed_below,
        breaks,
        few_requests,
        requests_unstated,
    })
}

/// Of a cell's requests measured by `sitegen run`, how many met every
/// limit of the tier, each request on its own TTFT and its own time per
/// output token (requests sent inside the window with a first token);
/// `None` when the cell keeps no requests.
pub fn requests_meeting(cell: &DecodeCell, tier: &SloTier) -> Option<(u64, u64)> {
    let detail = cell.detail.as_deref()?;
    let window_s = cell.measured_s?;
    let mut met = 0;
    let mut of = 0;
    for r in &detail.requests {
        let Some(ttft) = r.ttft_ms.filter(|_| (0.0..=window_s).contains(&r.start_s)) else {
            continue;
        };
        of += 1;
        let ttft_ok = tier.ttft_ms.is_none_or(|b| ttft <= b);
        let tpot_ok = match (tier.tpot_ms, r.tbt_ms) {
            (Some(b), Some(t)) => t <= b,
            _ => true,
        };
        if ttft_ok && tpot_ok {
            met += 1;
        }
    }
    (of > 0).then_some((met, of))
}

/// Two runs at one tier: their capacities at the contexts both could be
/// judged at, or which of them could not be judged anywhere.
#[derive(Debug, Clone, PartialEq)]
pub enum PairAtTier {
    /// (context, a's capacity, b's capacity), `None` where no level met it.
    Both(Vec<(u64, Option<u32>, Option<u32>)>),
    /// Whether each run can be judged at some context; not both, or no
    /// context is judged in both.
    Unjudged { a: bool, b: bool },
}

/// `b` against `a` at `tier`.
pub fn pair(a: &Run, b: &Run, tier: &SloTier) -> PairAtTier {
    let judged = |run: &Run| -> Vec<(u64, Option<u32>)> {
        capacity(run, tier)
            .into_iter()
            .filter_map(|r| match r.outcome {
                RowOutcome::Judged(c) => Some((r.context_tokens, c.max_concurrency)),
                RowOutcome::NotRecorded { .. } => None,
            })
            .collect()
    };
    let (ja, jb) = (judged(a), judged(b));
    let both: Vec<(u64, Option<u32>, Option<u32>)> = ja
        .iter()
        .filter_map(|&(ctx, na)| {
            let &(_, nb) = jb.iter().find(|(c, _)| *c == ctx)?;
            Some((ctx, na, nb))
        })
        .collect();
    if both.is_empty() {
        PairAtTier::Unjudged {
            a: !ja.is_empty(),
            b: !jb.is_empty(),
        }
    } else {
        PairAtTier::Both(both)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cell;
    use crate::model::slo::{Latency, Quantiles};

    fn tier(percentile: u8, ttft: Option<f64>, tpot: Option<f64>) -> SloTier {
        SloTier {
            name: "t".into(),
            percentile,
            ttft_ms: ttft,
            tpot_ms: tpot,
            source: "test".into(),
        }
    }

    fn cell(n: u32, status: Status, ttft_p99: f64, tpot_p99: f64, requests: u64) -> Cell {
        let q = |v: f64| Quantiles {
            p50: Some(v / 2.0),
            p99: Some(v),
            requests: Some(requests),
            ..Default::default()
        };
        Cell::Decode(DecodeCell {
            total_tok_per_s: Some(100.0 * f64::from(n)),
            latency: Some(Box::new(Latency {
                ttft_ms: Some(q(ttft_p99)),
                tpot_ms: Some(q(tpot_p99)),
                ..Default::default()
            })),
            ..DecodeCell::without_figures(8192, n, status, None)
        })
    }

    fn run(cells: Vec<Cell>) -> Run {
        let mut r = crate::compare::tests::with_cells("r", &[]);
        r.cells = cells;
        r
    }

    fn judged(row: &CapacityRow) -> &Capacity {
        match &row.outcome {
            RowOutcome::Judged(c) => c,
            other => panic!("not judged: {other:?}"),
        }
    }

    #[test]
    fn capacity_is_the_last_level_that_meets_and_says_what_breaks() {
        let r = run(vec![
            cell(1, Status::Valid, 100.0, 20.0, 1000),
            cell(2, Status::Valid, 150.0, 30.0, 1000),
            cell(4, Status::Valid, 180.0, 45.0, 1000),
            cell(8, Status::Valid, 200.0, 120.0, 1000),
        ]);
        let rows = capacity(&r, &tier(99, Some(2000.0), Some(50.0)));
        let c = judged(&rows[0]);
        assert_eq!(c.max_concurrency, Some(4));
        assert_eq!(c.goodput, Some(400.0));
        assert!(c.monotone());
        let b = c.breaks.as_ref().unwrap();
        assert_eq!(b.concurrency, 8);
        assert_eq!(
            b.breach,
            Breach::Over {
                limit: Limit::Tpot,
                value: 120.0,
                bound: 50.0
            }
        );
        assert_eq!(b.cliff, Some(true));
        assert!(c.few_requests.is_empty());
    }

    #[test]
    fn a_row_that_passes_fails_then_passes_is_not_monotone() {
        let r = run(vec![
            cell(1, Status::Valid, 100.0, 20.0, 1000),
            cell(2, Status::Valid, 100.0, 60.0, 1000),
            cell(4, Status::Valid, 100.0, 40.0, 1000),
            cell(8, Status::OverCapacity, 0.0, 0.0, 1000),
        ]);
        let c = judged(&capacity(&r, &tier(99, None, Some(50.0)))[0]).clone();
        assert_eq!(c.max_concurrency, Some(4));
        assert_eq!(c.failed_below, vec![2]);
        assert!(!c.monotone());
        assert_eq!(
            c.breaks.unwrap().breach,
            Breach::Status(Status::OverCapacity)
        );
    }

    #[test]
    fn nothing_meets_and_a_gradual_break() {
        let r = run(vec![cell(1, Status::Valid, 2500.0, 20.0, 1000)]);
        let c = judged(&capacity(&r, &tier(99, Some(2000.0), Some(50.0)))[0]).clone();
        assert_eq!(c.max_concurrency, None);
        assert_eq!(c.goodput, None);
        let b = c.breaks.unwrap();
        assert_eq!(b.concurrency, 1);
        assert_eq!(b.cliff, Some(false));
    }

    #[test]
    fn a_percentile_the_cells_lack_is_not_recorded_and_never_derived() {
        let r = run(vec![cell(1, Status::Valid, 100.0, 20.0, 1000)]);
        assert_eq!(
            capacity(&r, &tier(90, Some(2000.0), None))[0].outcome,
            RowOutcome::NotRecorded {
                limits: vec![Limit::Ttft],
                concurrency: 1
            }
        );
        // A median tier reads a cell's medians when no p50 is stated.
        let plain = DecodeCell {
            ttft_median_ms: Some(300.0),
            per_request_tok_per_s: Some(25.0),
            total_tok_per_s: Some(25.0),
            ..DecodeCell::without_figures(8192, 1, Status::Valid, None)
        };
        assert_eq!(reading(&plain, Limit::Tpot, 50).unwrap().value, 40.0);
        assert_eq!(reading(&plain, Limit::Ttft, 50).unwrap().value, 300.0);
        assert_eq!(reading(&plain, Limit::Ttft, 99), None);
        let c = judged(
            &capacity(
                &run(vec![Cell::Decode(plain)]),
                &tier(50, Some(2000.0), Some(50.0)),
            )[0],
        )
        .clone();
        assert_eq!(c.max_concurrency, Some(1));
        assert!(c.requests_unstated);
    }

    /// The share a matrix cell states: each request on its own TTFT and
    /// time per token; one sent before the window (no TTFT of its own) is
    /// not counted.
    #[test]
    fn the_requests_meeting_a_tier_are_counted_one_by_one() {
        use crate::model::{DecodeDetail, RequestSample};
        let request = |start_s: f64, ttft: Option<f64>, tbt: Option<f64>| RequestSample {
            stream: 0,
            start_s,
            ttft_ms: ttft,
            output_tokens: 10,
            duration_s: 1.0,
            finish_reason: "length".into(),
            chunks: 10,
            tbt_ms: tbt,
            server_ms_per_token: None,
            max_pause_ms: None,
            error: None,
        };
        let mut c = DecodeCell {
            measured_s: Some(30.0),
            ..DecodeCell::without_figures(8192, 4, Status::Valid, None)
        };
        assert_eq!(
            requests_meeting(&c, &tier(99, Some(500.0), Some(40.0))),
            None
        );
        c.detail = Some(Box::new(DecodeDetail {
            window_start_unix_s: 0.0,
            prompt_tokens: None,
            ttft_ms: None,
            tbt_ms: None,
            tokens_per_chunk: None,
            pause_ms: None,
            tokens_per_second: Vec::new(),
            drift: None,
            peak_decoding_requests: 4,
            failed_requests: 0,
            requests: vec![
                request(1.0, Some(200.0), Some(30.0)),  // meets both
                request(2.0, Some(900.0), Some(30.0)),  // TTFT over
                request(3.0, Some(200.0), Some(55.0)),  // TPOT over
                request(4.0, Some(200.0), None),        // one token: TTFT alone
                request(-2.0, Some(100.0), Some(20.0)), // sent before the window
            ],
            server: None,
            gpu_power_w: Vec::new(),
            loop_evidence: None,
            client: None,
        }));
        assert_eq!(
            requests_meeting(&c, &tier(99, Some(500.0), Some(40.0))),
            Some((2, 4))
        );
        assert_eq!(
            requests_meeting(&c, &tier(99, None, Some(40.0))),
            Some((3, 4))
        );
    }

    #[test]
    fn too_few_requests_are_named_at_every_level_behind_the_verdict() {
        let r = run(vec![
            cell(1, Status::Valid, 100.0, 20.0, 40),
            cell(2, Status::Valid, 100.0, 20.0, 700),
            cell(4, Status::Valid, 100.0, 90.0, 30),
            cell(8, Status::Valid, 100.0, 90.0, 10),
        ]);
        let c = judged(&capacity(&r, &tier(99, None, Some(50.0)))[0]).clone();
        assert_eq!(c.max_concurrency, Some(2));
        let few: Vec<(u32, u64)> = c
            .few_requests
            .iter()
            .map(|f| (f.concurrency, f.requests))
            .collect();
        // Level 8 is past the break: not behind the verdict.
        assert_eq!(few, vec![(1, 40), (4, 30)]);
        assert!(c.few_requests.iter().all(|f| f.needed == 662));
    }
}
