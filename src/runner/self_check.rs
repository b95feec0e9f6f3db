//! The client watching itself during a window. A chunk is timestamped when
//! the task reading its stream runs, so a client too busy to run that task
//! at once adds its own delay to every figure, and caps the rate it can
//! count. Two readings say whether it did: how long a task that became ready
//! waited to run (a probe woken every few milliseconds, which yields and
//! measures how long the runtime took to come back to it, behind every
//! stream ready before it), and the CPU the process spent.

use std::time::{Duration, Instant};

use super::analysis::weighted_percentile;
use crate::model::client::WaitPercentiles;
use crate::model::reason::{Part, Reason};
use crate::model::{ClientLoad, Status};

/// How often the probe asks: 200 readings a second cost nothing beside
/// thousands of chunks, and a 30 s window gets 6,000.
const PROBE_EVERY: Duration = Duration::from_millis(5);

/// A window's watch: started just before its first request, read after
/// its deadline.
pub(crate) struct Watch {
    cpu_at_start: Option<Duration>,
    started: Instant,
    probe: tokio::task::JoinHandle<Vec<f64>>,
}

impl Watch {
    /// Starts the probe, which stops by itself at `deadline`.
    pub(crate) fn start(deadline: Instant) -> Watch {
        let probe = tokio::spawn(async move {
            let mut waits_ms = Vec::new();
            let mut tick = tokio::time::interval(PROBE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if Instant::now() >= deadline {
                    return waits_ms;
                }
                // Ready now; how long until the runtime runs it again, after
                // the tasks already queued and one look at the sockets.
                let ready = Instant::now();
                tokio::task::yield_now().await;
                waits_ms.push(ready.elapsed().as_secs_f64() * 1e3);
            }
        });
        Watch {
            cpu_at_start: process_cpu(),
            started: Instant::now(),
            probe,
        }
    }

    /// What the client did from the start to now; `None` when the probe
    /// took no reading (a window shorter than its interval).
    pub(crate) async fn finish(self) -> Option<ClientLoad> {
        let cpu = match (self.cpu_at_start, process_cpu()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        };
        let seconds = self.started.elapsed().as_secs_f64();
        let waits = self.probe.await.ok()?;
        load_of(&waits, cpu, seconds, runtime_threads())
    }
}

/// The load of a window from the probe's waits (ms, in any order): each
/// percentile a reading that happened (nearest rank); none without one.
fn load_of(waits_ms: &[f64], cpu_s: Option<f64>, span_s: f64, threads: u32) -> Option<ClientLoad> {
    let weighted: Vec<(f64, f64)> = waits_ms.iter().map(|&w| (w, 1.0)).collect();
    let at = |q| weighted_percentile(&weighted, q);
    Some(ClientLoad {
        ready_wait_ms: WaitPercentiles {
            p50: at(0.50)?,
            p99: at(0.99)?,
            max: at(1.0)?,
        },
        samples: u32::try_from(waits_ms.len()).unwrap_or(u32::MAX),
        cpu_s,
        span_s,
        threads,
    })
}

/// The CPU time (user + kernel) of the whole process so far.
fn process_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Some(Duration::new(
            u64::try_from(t.tv_sec).ok()?,
            u32::try_from(t.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The worker threads of the runtime the streams run on.
fn runtime_threads() -> u32 {
    tokio::runtime::Handle::try_current()
        .map_or(1, |h| h.metrics().num_workers())
        .try_into()
        .unwrap_or(u32::MAX)
}

/// A window the client could not keep up with (see
/// [`ClientLoad::overloaded`]) is an Error whose reason says by how much:
/// it timed its own backlog, so no figure of it is the server's.
pub(crate) fn heed(
    load: Option<&ClientLoad>,
    tbt_median_ms: Option<f64>,
    status: &mut Status,
    reason: &mut Option<Reason>,
) {
    let (Some(load), Some(tbt)) = (load, tbt_median_ms) else {
        return;
    };
    if load.overloaded(tbt) {
        *status = Status::Error;
        *reason = Reason::join(
            reason.take(),
            Some(Reason::of(Part::ClientOverloaded {
                ready_wait_ms: load.ready_wait_ms.p50,
                tbt_median_ms: tbt,
                threads: load.threads,
            })),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_readings_that_happened() {
        let waits: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        let load = load_of(&waits, Some(1.0), 2.0, 2).unwrap();
        assert_eq!(load.ready_wait_ms.p50, 100.0);
        assert_eq!(load.ready_wait_ms.p99, 198.0);
        assert_eq!(load.ready_wait_ms.max, 200.0);
        assert_eq!(load.samples, 200);
        let one = load_of(&[0.3], None, 1.0, 1).unwrap();
        assert_eq!(
            (
                one.ready_wait_ms.p50,
                one.ready_wait_ms.p99,
                one.ready_wait_ms.max
            ),
            (0.3, 0.3, 0.3)
        );
        assert!(load_of(&[], Some(1.0), 1.0, 1).is_none());
    }
}
