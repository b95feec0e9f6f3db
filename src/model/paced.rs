//! Paced load: requests sent at a rate (open loop), not N kept in flight.
//!
//! A paced point answers "at R requests a second, how fast and how late?"; a
//! decode cell answers "with N requests in flight, how fast?". The two are not
//! the same question: under a rate the number in flight is whatever the
//! server's speed makes it. So a paced point is its own record
//! (`data/<run>/paced/*.json`), shown in its own table and chart, and never
//! placed in a concurrency matrix.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{MeasuredBy, Status, reason, slo};

/// How the requests of a paced point were sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacedLoad {
    /// Requests a second the tool was asked to send.
    pub requested_per_s: f64,
    /// How arrivals were spaced around that rate.
    pub arrivals: Arrivals,
    /// At most this many requests in flight at once, when the tool also
    /// capped concurrency (`--max-concurrency` beside `--request-rate`): a
    /// request due while the cap is full waits in the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
}

/// The spacing of a paced point's arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process): vLLM's and SGLang's default.
    Poisson,
    /// Gamma-distributed gaps with this shape (vLLM's `--burstiness`):
    /// below 1 burstier than Poisson, above 1 more even.
    Gamma { burstiness: f64 },
    /// Evenly spaced (guidellm's `constant`; inference-perf's `constant` is
    /// not: it draws exponential gaps scaled to fill the stage).
    Constant,
    /// The file states a rate but not how arrivals were spaced.
    NotStated,
}

impl Arrivals {
    /// vLLM's and SGLang's reading of a `burstiness` value: 1 is Poisson.
    pub fn of_burstiness(burstiness: Option<f64>) -> Arrivals {
        match burstiness {
            None => Arrivals::NotStated,
            Some(1.0) => Arrivals::Poisson,
            Some(b) => Arrivals::Gamma { burstiness: b },
        }
    }
}

/// One paced point: the requests sent at one rate, and what they showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacedPoint {
    /// Mean prompt tokens per request.
    pub context_tokens: u64,
    pub load: PacedLoad,
    /// Valid, or Error when requests failed or are not accounted for.
    pub status: Status,
    /// Why the point is not Valid (required for `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<reason::Reason>,
    /// Requests sent (completed, failed, or neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_requests: Option<u64>,
    /// Requests that completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_requests: Option<u64>,
    /// Requests that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_requests: Option<u64>,
    /// Completed requests / the time they took: what the server kept up with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_per_s: Option<f64>,
    /// Time-weighted mean of requests in flight (Little's law where the tool
    /// does not sample it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_in_flight: Option<f64>,
    /// The most requests in flight, as the tool counted them
    /// (`measured_by.definitions` says how).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u32>,
    /// Output tokens / duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s: Option<f64>,
    /// 1000 / median time per output token: one user's decode speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_tok_per_s: Option<f64>,
    /// Median time to first token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_median_ms: Option<f64>,
    /// Median time between tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_median_ms: Option<f64>,
    /// Output tokens of the completed requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// From the first request sent to the last one's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    /// Latency percentiles with the requests behind them: what a latency
    /// budget is judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Box<slo::Latency>>,
    /// The tool that measured the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<MeasuredBy>,
}

/// Identity of a paced point within its run, and its order: by context,
/// then rate, then cap (uncapped first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacedKey {
    pub context_tokens: u64,
    /// The requested rate in thousandths of a request a second.
    pub milli_per_s: u64,
    /// The concurrency cap, 0 for none.
    pub max_concurrency: u32,
}

impl PacedKey {
    /// The canonical file name under `paced/`.
    pub fn file_name(&self) -> String {
        let cap = match self.max_concurrency {
            0 => String::new(),
            n => format!("-x{n:03}"),
        };
        format!(
            "paced-{:08}-r{:09}{cap}.json",
            self.context_tokens, self.milli_per_s
        )
    }
}

impl PacedPoint {
    pub fn key(&self) -> PacedKey {
        PacedKey {
            context_tokens: self.context_tokens,
            milli_per_s: (self.load.requested_per_s * 1000.0).round() as u64,
            max_concurrency: self.load.max_concurrency.unwrap_or(0),
        }
    }

    /// A point with its load and status and no figures yet.
    pub fn new(
        context_tokens: u64,
        load: PacedLoad,
        status: Status,
        reason: Option<reason::Reason>,
    ) -> PacedPoint {
        PacedPoint {
            context_tokens,
            load,
            status,
            reason,
            sent_requests: None,
            completed_requests: None,
            failed_requests: None,
            achieved_per_s: None,
            avg_in_flight: None,
            peak_in_flight: None,
            total_tok_per_s: None,
            per_request_tok_per_s: None,
            ttft_median_ms: None,
            tbt_median_ms: None,
            output_tokens: None,
            measured_s: None,
            latency: None,
            measured_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rate: f64, cap: Option<u32>) -> PacedLoad {
        PacedLoad {
            requested_per_s: rate,
            arrivals: Arrivals::Poisson,
            max_concurrency: cap,
        }
    }

    #[test]
    fn file_names_sort_by_context_then_rate_and_name_a_cap() {
        let a = PacedPoint::new(1024, load(1.5, None), Status::Valid, None);
        let b = PacedPoint::new(1024, load(16.0, Some(25)), Status::Valid, None);
        assert_eq!(a.key().file_name(), "paced-00001024-r000001500.json");
        assert_eq!(b.key().file_name(), "paced-00001024-r000016000-x025.json");
        assert!(a.key() < b.key());
        assert!(a.key().file_name() < b.key().file_name());
    }

    #[test]
    fn burstiness_one_is_poisson_and_others_are_gamma() {
        assert_eq!(Arrivals::of_burstiness(Some(1.0)), Arrivals::Poisson);
        assert_eq!(
            Arrivals::of_burstiness(Some(0.5)),
            Arrivals::Gamma { burstiness: 0.5 }
        );
        assert_eq!(Arrivals::of_burstiness(None), Arrivals::NotStated);
        let json = serde_json::to_string(&Arrivals::Gamma { burstiness: 2.0 }).unwrap();
        assert_eq!(json, r#"{"kind":"gamma","burstiness":2.0}"#);
    }
}
