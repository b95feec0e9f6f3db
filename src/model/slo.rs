//! Latency budgets: a decode cell's latency percentiles with the requests
//! behind them, and the tiers (`data/slo.json`) a run's capacity is judged
//! at: the most simultaneous requests served within a tier's limits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cell's latencies across requests, each at the percentiles its source
/// states. A percentile a source did not state is absent, never derived
/// from another one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// Time to first token (in a decode window, with a warm prompt cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Quantiles>,
    /// Time per output token, per request: (end − first token) / (output
    /// tokens − 1), or the same over the part of a request inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Quantiles>,
    /// Time between tokens, per token (a chunk of k tokens counts k times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_ms: Option<Quantiles>,
    /// End-to-end latency of the requests that completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Quantiles>,
}

impl Latency {
    /// `None` when no latency is known at all.
    pub fn known(self) -> Option<Latency> {
        (self != Latency::default()).then_some(self)
    }
}

/// Percentiles of one latency across requests, and how many requests stand
/// behind them where the source says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quantiles {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// Requests the percentiles were taken over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
}

impl Quantiles {
    /// The value at `percentile` (50, 90, 95 or 99), if stated.
    pub fn at(&self, percentile: u8) -> Option<f64> {
        match percentile {
            50 => self.p50,
            90 => self.p90,
            95 => self.p95,
            99 => self.p99,
            _ => None,
        }
    }

    /// `None` when the source states no percentile at all (a request count
    /// alone is no latency).
    pub fn stated(self) -> Option<Quantiles> {
        [self.p50, self.p90, self.p95, self.p99]
            .iter()
            .any(Option::is_some)
            .then_some(self)
    }

    /// The percentiles a source states, each read by `at` from the
    /// percentile's name ("p50", "p90", "p95", "p99"), over `requests`;
    /// `None` when it states none. The one way importers read them.
    pub fn read<E>(
        requests: Option<u64>,
        mut at: impl FnMut(&str) -> Result<Option<f64>, E>,
    ) -> Result<Option<Quantiles>, E> {
        Ok(Quantiles {
            p50: at("p50")?,
            p90: at("p90")?,
            p95: at("p95")?,
            p99: at("p99")?,
            requests,
        }
        .stated())
    }

    /// Nearest-rank percentiles of `values` (empty gives `None`).
    pub fn of(values: &[f64]) -> Option<Quantiles> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Quantiles {
            p50: Some(rank(0.50)),
            p90: Some(rank(0.90)),
            p95: Some(rank(0.95)),
            p99: Some(rank(0.99)),
            requests: Some(values.len() as u64),
        })
    }
}

/// The percentiles a tier may be judged at.
pub const PERCENTILES: [u8; 4] = [50, 90, 95, 99];

/// The fewest requests behind a percentile for it to be shown as measured.
///
/// MLPerf Inference's early-stopping rule: the smallest n for which a run
/// with at most one request beyond the true p-th percentile happens with a
/// chance of 1% or less (binomial, n trials, chance 1 − p each). It gives
/// 662 for the 99th percentile, the count MLPerf asks for; fewer requests
/// make a percentile an estimate, and pages say so.
pub fn min_requests(percentile: u8) -> u64 {
    let beyond = 1.0 - f64::from(percentile) / 100.0;
    (1..100_000u64)
        .find(|&n| {
            let n_f = n as f64;
            let none = (1.0 - beyond).powf(n_f);
            let one = n_f * beyond * (1.0 - beyond).powf(n_f - 1.0);
            none + one <= 0.01
        })
        .expect("a percentile below 100 has a count")
}

/// `data/slo.json` (optional): the latency budgets capacity is judged at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SloFile {
    pub tiers: Vec<SloTier>,
}

/// One latency budget: a cell meets it when its latencies at `percentile`
/// are within every limit given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SloTier {
    /// Shown on the pages, e.g. "MLPerf Server".
    pub name: String,
    /// 50, 90, 95 or 99.
    pub percentile: u8,
    /// Time to first token at that percentile, at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Time per output token at that percentile, at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// Where the limits come from (shown on the pages).
    pub source: String,
}

impl SloFile {
    /// The tiers used without `data/slo.json`: a median per-user-speed tier
    /// every run can be judged at, then MLPerf Inference's Llama 2 70B
    /// Server and Interactive limits (a large model's class).
    pub fn defaults() -> SloFile {
        let tier = |name: &str, percentile, ttft_ms, tpot_ms, source: &str| SloTier {
            name: name.into(),
            percentile,
            ttft_ms: Some(ttft_ms),
            tpot_ms: Some(tpot_ms),
            source: source.into(),
        };
        SloFile {
            tiers: vec![
                tier(
                    "20 tok/s per user",
                    50,
                    2000.0,
                    50.0,
                    "sitegen's default: a reader's 20 tok/s per request, the pages' own bar, with MLPerf Server's 2 s to the first token, both at the median",
                ),
                tier(
                    "MLPerf Server",
                    99,
                    2000.0,
                    200.0,
                    "MLPerf Inference Llama 2 70B, Server scenario: p99 TTFT 2,000 ms, p99 TPOT 200 ms",
                ),
                tier(
                    "MLPerf Interactive",
                    99,
                    450.0,
                    40.0,
                    "MLPerf Inference Llama 2 70B, Interactive scenario: p99 TTFT 450 ms, p99 TPOT 40 ms",
                ),
            ],
        }
    }
}

/// `capacity.json`, a run's download: its capacity within each tier
/// (`compare::capacity`), one row per tier and context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityFile {
    pub run: String,
    pub tiers: Vec<SloTier>,
    pub rows: Vec<CapacityRecord>,
}

/// One tier at one context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityRecord {
    pub tier: String,
    pub percentile: u8,
    pub context_tokens: u64,
    /// Whether a figure it needs is recorded in every Valid cell: when not,
    /// every field below is empty.
    pub judged: bool,
    /// The most requests at once whose cell met every limit; empty when
    /// none did or the row cannot be judged.
    pub max_concurrency: Option<u32>,
    /// Total tok/s at `max_concurrency` (goodput).
    pub total_tok_per_s: Option<f64>,
    /// What broke first above it: "ttft", "tpot", or the cell's status
    /// ("over_capacity", "requests_queued", ...); empty when every level met it.
    pub binding_limit: Option<String>,
    /// The level it broke at.
    pub breaks_at: Option<u32>,
    /// The binding limit's figure over its bound there.
    pub overshoot: Option<f64>,
    /// Whether every lower level met the tier too.
    pub monotone: Option<bool>,
    /// Whether some percentile behind the verdict is from too few requests.
    pub few_requests: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fewest_requests_follow_mlperf_early_stopping() {
        // MLPerf asks 662 queries for a p99 estimate.
        assert_eq!(min_requests(99), 662);
        assert_eq!(min_requests(50), 11);
        assert!(min_requests(90) < min_requests(95));
        assert!(min_requests(95) < min_requests(99));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let q = Quantiles::of(&v).unwrap();
        assert_eq!((q.p50, q.p90, q.p99), (Some(50.0), Some(90.0), Some(99.0)));
        assert_eq!(q.requests, Some(100));
        let one = Quantiles::of(&[7.0]).unwrap();
        assert_eq!((one.p50, one.p99), (Some(7.0), Some(7.0)));
        assert!(Quantiles::of(&[]).is_none());
        assert_eq!(q.at(95), Some(95.0));
        assert_eq!(q.at(75), None);
    }
}
