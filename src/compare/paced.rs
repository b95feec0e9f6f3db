//! Paced points of a run: grouped into sweeps (one context and cap, rates
//! ascending), and each sweep's capacity within a latency tier: the highest
//! requested rate whose point meets every limit. Numbers only; the run page
//! words them.

use crate::compare::capacity::{Along, Breach, Limit, along};
use crate::model::Run;
use crate::model::paced::PacedPoint;
use crate::model::slo::SloTier;

/// The points of one workload and cap, rates ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep<'a> {
    /// The smallest and largest mean prompt of its points: one number when
    /// the prompts were fixed, a narrow range when each rate drew its own
    /// random lengths.
    pub context_tokens: (u64, u64),
    pub max_concurrency: Option<u32>,
    pub points: Vec<&'a PacedPoint>,
}

/// Mean prompts within this share of a sweep's smallest are one workload:
/// a tool drawing random lengths per rate gives each rate its own mean
/// (SGLang's 1,024-token random prompts: 509 to 515), which is still one
/// sweep of rates, while a different dataset or length is not.
pub const SAME_WORKLOAD: f64 = 0.05;

/// The run's paced points as sweeps, by context then cap (uncapped first).
pub fn sweeps(run: &Run) -> Vec<Sweep<'_>> {
    let mut points: Vec<&PacedPoint> = run.paced.iter().collect();
    points.sort_by_key(|p| (p.load.max_concurrency.unwrap_or(0), p.context_tokens));
    let mut out: Vec<Sweep> = Vec::new();
    for p in points {
        match out.last_mut() {
            Some(s)
                if s.max_concurrency == p.load.max_concurrency
                    && (p.context_tokens as f64)
                        <= s.context_tokens.0 as f64 * (1.0 + SAME_WORKLOAD) =>
            {
                s.context_tokens.1 = p.context_tokens;
                s.points.push(p);
            }
            _ => out.push(Sweep {
                context_tokens: (p.context_tokens, p.context_tokens),
                max_concurrency: p.load.max_concurrency,
                points: vec![p],
            }),
        }
    }
    for s in &mut out {
        s.points
            .sort_by(|a, b| a.load.requested_per_s.total_cmp(&b.load.requested_per_s));
    }
    out.sort_by_key(|s| (s.context_tokens.0, s.max_concurrency.unwrap_or(0)));
    out
}

/// A sweep against a tier.
#[derive(Debug, Clone, PartialEq)]
pub enum PacedCapacity {
    /// A Valid point has no figure for these limits at the tier's
    /// percentile (the first such point's rate): not judged.
    NotRecorded {
        limits: Vec<Limit>,
        rate: f64,
    },
    Judged(RateCapacity),
}

/// The most requests a second a sweep served within a tier.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCapacity {
    /// The highest requested rate whose point met every limit; `None` when
    /// none did.
    pub max_rate: Option<f64>,
    /// What the server completed a second at that rate.
    pub achieved: Option<f64>,
    /// Output tok/s at that rate.
    pub goodput: Option<f64>,
    /// Rates below `max_rate` that did not meet it.
    pub failed_below: Vec<f64>,
    /// The first rate above, and what broke there; `None` when the highest
    /// rate measured met it.
    pub breaks: Option<(f64, Breach)>,
    /// Some percentile behind the verdict was taken over fewer requests
    /// than it needs, or does not say over how many.
    pub estimate: bool,
}

/// A sweep against a tier: the highest rate within it, as
/// [`crate::compare::capacity`] judges a concurrency row.
pub fn capacity(sweep: &Sweep, tier: &SloTier) -> PacedCapacity {
    let rate = |i: usize| sweep.points[i].load.requested_per_s;
    match along(&sweep.points, tier) {
        Along::NotRecorded { index, limits } => PacedCapacity::NotRecorded {
            limits,
            rate: rate(index),
        },
        Along::Judged {
            best,
            failed_below,
            breaks,
            estimate,
        } => {
            let at = best.map(|b| sweep.points[b]);
            PacedCapacity::Judged(RateCapacity {
                max_rate: at.map(|p| p.load.requested_per_s),
                achieved: at.and_then(|p| p.achieved_per_s),
                goodput: at.and_then(|p| p.total_tok_per_s),
                failed_below: failed_below.into_iter().map(rate).collect(),
                breaks: breaks.map(|(i, b)| (rate(i), b)),
                estimate,
            })
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::Status;
    use crate::model::paced::{Arrivals, PacedLoad};
    use crate::model::slo::{Latency, Quantiles};

    /// A Valid point at `rate` req/s on 1,024-token prompts, with p99
    /// TTFT and TPOT over `requests` (for the run page's tests too).
    pub(crate) fn point(rate: f64, p99_ttft: f64, p99_tpot: f64, requests: u64) -> PacedPoint {
        let mut p = PacedPoint::new(
            1024,
            PacedLoad {
                requested_per_s: rate,
                arrivals: Arrivals::Poisson,
                max_concurrency: None,
            },
            Status::Valid,
            None,
        );
        p.total_tok_per_s = Some(rate * 100.0);
        p.achieved_per_s = Some(rate * 0.98);
        let q = |v| Quantiles {
            p99: Some(v),
            requests: Some(requests),
            ..Quantiles::default()
        };
        p.latency = Some(Box::new(Latency {
            ttft_ms: Some(q(p99_ttft)),
            tpot_ms: Some(q(p99_tpot)),
            ..Latency::default()
        }));
        p
    }

    fn tier() -> SloTier {
        serde_json::from_value(serde_json::json!({
            "name": "Interactive", "percentile": 99, "ttft_ms": 450.0, "tpot_ms": 40.0,
            "source": "test"
        }))
        .unwrap()
    }

    /// A run of these paced points and no cell.
    pub(crate) fn run(points: Vec<PacedPoint>) -> Run {
        let mut run = Run::for_test(
            "r",
            serde_json::json!({"schema_version": 1, "model": "m", "served_model": "m",
                "hardware": {"gpu": "H200", "gpu_count": 1}, "engine": {"name": "vllm"},
                "run": {"decode_test": "request_burst"}}),
        );
        run.paced = points;
        run
    }

    #[test]
    fn the_highest_rate_within_the_tier_and_what_breaks_above_it() {
        // Given out of order: sweeps sort by rate.
        let r = run(vec![
            point(8.0, 900.0, 35.0, 2400),
            point(1.0, 120.0, 20.0, 700),
            point(4.0, 300.0, 38.0, 1200),
        ]);
        let sweeps = sweeps(&r);
        assert_eq!(sweeps.len(), 1);
        let PacedCapacity::Judged(c) = capacity(&sweeps[0], &tier()) else {
            panic!("judged")
        };
        assert_eq!(c.max_rate, Some(4.0));
        assert_eq!(c.goodput, Some(400.0));
        assert_eq!(c.achieved, Some(4.0 * 0.98));
        assert!(c.failed_below.is_empty());
        let (rate, breach) = c.breaks.unwrap();
        assert_eq!(rate, 8.0);
        assert_eq!(breach.code(), "ttft");
        assert!(!c.estimate, "every percentile over at least 662 requests");
    }

    #[test]
    fn random_prompt_means_a_few_percent_apart_are_one_sweep_and_others_not() {
        let at = |ctx: u64, rate: f64| {
            let mut p = point(rate, 100.0, 20.0, 1000);
            p.context_tokens = ctx;
            p
        };
        let r = run(vec![
            at(513, 4.0),
            at(224, 4.0),
            at(509, 1.0),
            at(225, 8.0),
            at(515, 2.0),
        ]);
        let s = sweeps(&r);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].context_tokens, (224, 225));
        assert_eq!(s[1].context_tokens, (509, 515));
        let rates: Vec<f64> = s[1].points.iter().map(|p| p.load.requested_per_s).collect();
        assert_eq!(rates, vec![1.0, 2.0, 4.0]);
        assert_eq!(sweeps(&run(vec![at(1000, 1.0), at(1060, 2.0)])).len(), 2);
    }

    #[test]
    fn a_lower_rate_that_failed_is_named_and_few_requests_make_an_estimate() {
        let r = run(vec![
            point(1.0, 500.0, 20.0, 100),
            point(2.0, 300.0, 30.0, 1000),
        ]);
        let PacedCapacity::Judged(c) = capacity(&sweeps(&r)[0], &tier()) else {
            panic!()
        };
        assert_eq!(c.max_rate, Some(2.0));
        assert_eq!(c.failed_below, vec![1.0]);
        assert_eq!(c.breaks, None, "the highest rate measured met it");
        assert!(c.estimate, "100 requests are too few for a p99");
    }

    #[test]
    fn a_point_without_the_tier_s_percentile_is_not_judged_and_errors_fail() {
        let mut no_p99 = point(1.0, 100.0, 20.0, 1000);
        no_p99.latency = None;
        no_p99.ttft_median_ms = Some(80.0);
        let r = run(vec![no_p99]);
        assert_eq!(
            capacity(&sweeps(&r)[0], &tier()),
            PacedCapacity::NotRecorded {
                limits: vec![Limit::Ttft, Limit::Tpot],
                rate: 1.0
            }
        );
        let mut failed = point(2.0, 100.0, 20.0, 1000);
        failed.status = Status::Error;
        let r = run(vec![point(1.0, 100.0, 20.0, 1000), failed]);
        let PacedCapacity::Judged(c) = capacity(&sweeps(&r)[0], &tier()) else {
            panic!()
        };
        assert_eq!(c.max_rate, Some(1.0));
        assert_eq!(c.breaks.unwrap().1, Breach::Status(Status::Error));
    }
}
