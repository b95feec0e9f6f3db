//! The measuring client's own load during a window (`sitegen run` records
//! it; see runner/self_check.rs), and the rule that says when a cell's
//! figures may be the client's limit rather than the server's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The client is the limit when a stream ready to be read waited for it, at
/// the median, at least this share of the cell's median time between
/// tokens. A client keeping up makes a ready stream wait a small part of a
/// token's interval (0.01-0.1 ms against 5 ms on 2 cores at 1-1,024
/// streams); one that cannot falls behind by many intervals (84-330 ms
/// against 1-5 ms, starved by another process); see docs/measurement.md.
pub const OVERLOAD_SHARE: f64 = 0.25;

/// What the client did during a decode window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientLoad {
    /// How long a task that became ready waited for the client's runtime to
    /// run it, ms, over the probe's readings: the delay a chunk's timestamp
    /// took on top of its arrival.
    pub ready_wait_ms: WaitPercentiles,
    /// Readings behind `ready_wait_ms` (one every 5 ms of the window).
    pub samples: u32,
    /// CPU seconds (user + kernel) the whole client process spent during
    /// the window, where the system tells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// Seconds the readings span (the window, and the cancelling of what was
    /// running at its end).
    pub span_s: f64,
    /// Worker threads the client's streams ran on.
    pub threads: u32,
}

/// The 50th, 99th percentile and largest of the probe's waits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitPercentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl ClientLoad {
    /// Whether the client was the limit of a cell whose median time between
    /// tokens (as the client timed it) is `tbt_median_ms`.
    pub fn overloaded(&self, tbt_median_ms: f64) -> bool {
        self.ready_wait_ms.p50 >= OVERLOAD_SHARE * tbt_median_ms
    }

    /// The share of the client's threads its CPU time filled (1.0: every
    /// thread busy all the time).
    pub fn busy(&self) -> Option<f64> {
        let cpu = self.cpu_s?;
        (self.span_s > 0.0 && self.threads > 0)
            .then(|| cpu / (self.span_s * f64::from(self.threads)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A load whose median wait is `p50` ms.
    fn load(p50: f64, cpu_s: Option<f64>, span_s: f64, threads: u32) -> ClientLoad {
        ClientLoad {
            ready_wait_ms: WaitPercentiles {
                p50,
                p99: p50,
                max: p50,
            },
            samples: 1,
            cpu_s,
            span_s,
            threads,
        }
    }

    #[test]
    fn overloaded_from_a_quarter_of_the_median_interval_on() {
        let at = |p50: f64| load(p50, None, 1.0, 2);
        // Keeping up on 2 cores: 0.1 ms against 5 ms between tokens.
        assert!(!at(0.1).overloaded(5.0));
        assert!(!at(1.249).overloaded(5.0));
        assert!(at(1.25).overloaded(5.0));
        // Starved: 84 ms behind tokens 5 ms apart.
        assert!(at(83.7).overloaded(5.0));
        // A backlog read at once times its tokens 0 ms apart.
        assert!(at(0.01).overloaded(0.0));
    }

    #[test]
    fn busy_is_cpu_over_the_threads_time() {
        assert_eq!(load(0.1, Some(1.5), 3.0, 2).busy(), Some(0.25));
        assert_eq!(load(0.1, None, 3.0, 2).busy(), None);
        assert_eq!(load(0.1, Some(1.0), 0.0, 2).busy(), None);
    }
}
