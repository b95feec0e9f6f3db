//! Sessions windows of a run: grouped into sweeps (one workload, sessions
//! ascending); per depth the TTFT against a cold prompt of its context (the
//! cache's benefit); per window the share of prompt tokens the cache held;
//! per sweep the most sessions within a latency tier. Numbers only; the run
//! page words them.

use crate::compare::capacity::{Along, Breach, LatencyFigures, Limit, along};
use crate::model::sessions::{SessionDepth, SessionWindow, SessionWorkload};
use crate::model::slo::{Latency, SloTier};
use crate::model::{Run, Status};

impl LatencyFigures for SessionWindow {
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
        self.per_session_tok_per_s
    }
}

/// The windows of one workload, sessions ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSweep<'a> {
    pub workload: SessionWorkload,
    pub windows: Vec<&'a SessionWindow>,
}

/// The run's windows by workload (the store keeps them sorted by workload,
/// then sessions).
pub fn sweeps(run: &Run) -> Vec<SessionSweep<'_>> {
    let mut out: Vec<SessionSweep> = Vec::new();
    for w in &run.sessions {
        match out.last_mut() {
            Some(s) if s.windows[0].same_workload(w) => s.windows.push(w),
            _ => out.push(SessionSweep {
                workload: w.workload,
                windows: vec![w],
            }),
        }
    }
    out
}

/// A depth's median TTFT over a cold prompt of its context: below 1 the
/// cache spared work; about 1, none.
pub fn cold_ratio(d: &SessionDepth) -> Option<f64> {
    let (ttft, cold) = (d.ttft_median_ms()?, d.cold_ttft_ms?);
    (cold > 0.0).then(|| ttft / cold)
}

/// How many cold prompts each depth's cold figure is the median of, when
/// every depth with one says, and says the same; `None` otherwise (runs
/// that did not say measured one).
pub fn cold_prompts(windows: &[SessionWindow]) -> Option<u32> {
    let mut said = windows
        .iter()
        .flat_map(|w| &w.depths)
        .filter(|d| d.cold_ttft_ms.is_some())
        .map(|d| d.cold_prompts);
    let first = said.next()??;
    said.all(|n| n == Some(first)).then_some(first)
}

/// Where a window's cached share was read.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheSource {
    /// The server's counters over the window (their name).
    Counters(String),
    /// Each answer's usage (the field).
    Usage(String),
}

/// Prompt tokens the server found in its cache, of those it read.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheShare {
    pub cached: u64,
    pub prompt: u64,
    pub source: CacheSource,
}

impl CacheShare {
    pub fn share(&self) -> f64 {
        if self.prompt == 0 {
            0.0
        } else {
            self.cached as f64 / self.prompt as f64
        }
    }
}

/// A window's cached share: from the server's counters, which count every
/// lookup of the window, else from the answers' usage.
pub fn cache_share(w: &SessionWindow) -> Option<CacheShare> {
    if let Some(c) = w.server_cache.as_ref().filter(|c| c.looked_up_tokens > 0) {
        return Some(CacheShare {
            cached: c.cached_tokens,
            prompt: c.looked_up_tokens,
            source: CacheSource::Counters(c.counter.clone()),
        });
    }
    let field = w.cached_tokens_from.clone()?;
    let (mut cached, mut prompt) = (0, 0);
    for d in &w.depths {
        if let (Some(c), Some(p)) = (d.cached_tokens, d.prompt_tokens) {
            cached += c;
            prompt += p;
        }
    }
    (prompt > 0).then_some(CacheShare {
        cached,
        prompt,
        source: CacheSource::Usage(field),
    })
}

/// What the cache did for a window's later turns: the deepest depth with a
/// TTFT and a cold prompt to set it against, and the range of that ratio
/// over every such depth from turn 2 (turn 1 holds only the shared prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct Benefit<'a> {
    pub deepest: &'a SessionDepth,
    pub ratio: f64,
    /// (lowest, highest) TTFT / cold over the depths from turn 2.
    pub later: Option<(f64, f64)>,
}

pub fn benefit(w: &SessionWindow) -> Option<Benefit<'_>> {
    let judged: Vec<(&SessionDepth, f64)> = w
        .depths
        .iter()
        .filter(|d| d.status.has_figures())
        .filter_map(|d| Some((d, cold_ratio(d)?)))
        .collect();
    let &(deepest, ratio) = judged.last()?;
    let later: Vec<f64> = judged
        .iter()
        .filter(|(d, _)| d.turn >= 2)
        .map(|(_, r)| *r)
        .collect();
    let range = (!later.is_empty()).then(|| {
        later
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| {
                (a.min(r), b.max(r))
            })
    });
    Some(Benefit {
        deepest,
        ratio,
        later: range,
    })
}

/// A sweep against a tier: the most sessions at once whose turns met every
/// limit (judged over all the window's turns).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionCapacity {
    /// A Valid window lacks the figure of these limits (its sessions).
    NotRecorded { limits: Vec<Limit>, sessions: u32 },
    Judged {
        /// The most sessions that met it; `None` when none did.
        max_sessions: Option<u32>,
        /// Turns completed a second there (a window can be shorter than a
        /// session: turns, not sessions, say how much work it did).
        turns_per_s: Option<f64>,
        /// Fewer sessions that did not meet it.
        failed_below: Vec<u32>,
        /// The next number of sessions, and what broke there.
        breaks: Option<(u32, Breach)>,
        estimate: bool,
    },
}

pub fn capacity(sweep: &SessionSweep, tier: &SloTier) -> SessionCapacity {
    let sessions = |i: usize| sweep.windows[i].sessions;
    match along(&sweep.windows, tier) {
        Along::NotRecorded { index, limits } => SessionCapacity::NotRecorded {
            limits,
            sessions: sessions(index),
        },
        Along::Judged {
            best,
            failed_below,
            breaks,
            estimate,
        } => SessionCapacity::Judged {
            max_sessions: best.map(sessions),
            turns_per_s: best.and_then(|b| sweep.windows[b].turns_per_s),
            failed_below: failed_below.into_iter().map(sessions).collect(),
            breaks: breaks.map(|(i, b)| (sessions(i), b)),
            estimate,
        },
    }
}

/// Two runs' sessions of one workload side by side: at the most sessions
/// both measured validly, the deepest turn both reached.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPair<'a> {
    pub workload: SessionWorkload,
    pub sessions: u32,
    pub a: (&'a SessionWindow, &'a SessionDepth),
    pub b: (&'a SessionWindow, &'a SessionDepth),
}

impl SessionPair<'_> {
    /// B's median TTFT over A's at that depth.
    pub fn ttft_ratio(&self) -> Option<f64> {
        let (a, b) = (self.a.1.ttft_median_ms()?, self.b.1.ttft_median_ms()?);
        (a > 0.0).then(|| b / a)
    }
}

/// What two runs' sessions allow: pairs per shared workload, or that both
/// measured sessions of different workloads (nothing to set side by side).
#[derive(Debug, Clone, PartialEq)]
pub enum Paired<'a> {
    None,
    DifferentWorkloads,
    Pairs(Vec<SessionPair<'a>>),
}

pub fn pair<'a>(a: &'a Run, b: &'a Run) -> Paired<'a> {
    if a.sessions.is_empty() || b.sessions.is_empty() {
        return Paired::None;
    }
    let mut pairs = Vec::new();
    for sa in sweeps(a) {
        let Some(sb) = sweeps(b).into_iter().find(|s| s.workload == sa.workload) else {
            continue;
        };
        // Valid windows only: a queued one is not a clean measurement.
        let measured = |w: &SessionWindow| w.status == Status::Valid;
        let at = sa
            .windows
            .iter()
            .rev()
            .filter(|w| measured(w))
            .find_map(|wa| {
                let wb = sb
                    .windows
                    .iter()
                    .find(|w| w.sessions == wa.sessions && measured(w))?;
                let deepest = wa.depths.iter().rev().find_map(|da| {
                    let db = wb
                        .depths
                        .iter()
                        .find(|d| d.turn == da.turn && d.ttft_ms.is_some())?;
                    da.ttft_ms.is_some().then_some((da, db))
                })?;
                Some((*wa, *wb, deepest))
            });
        if let Some((wa, wb, (da, db))) = at {
            pairs.push(SessionPair {
                workload: sa.workload,
                sessions: wa.sessions,
                a: (wa, da),
                b: (wb, db),
            });
        }
    }
    if pairs.is_empty() {
        Paired::DifferentWorkloads
    } else {
        Paired::Pairs(pairs)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::sessions::ServerCacheCount;
    use crate::model::slo::Quantiles;

    pub(crate) fn workload() -> SessionWorkload {
        SessionWorkload {
            shared_prefix_tokens: 1024,
            user_tokens_per_turn: 256,
            answer_tokens: 64,
            turns: 3,
            think_time_ms: 0,
        }
    }

    fn q(p50: f64, p99: f64, n: u64) -> Quantiles {
        Quantiles {
            p50: Some(p50),
            p90: None,
            p95: None,
            p99: Some(p99),
            requests: Some(n),
        }
    }

    /// A Valid window of `s` sessions: depths of (TTFT, cold TTFT, cached,
    /// prompt) and its p99 TTFT over `turns` turns.
    /// Three turns: (TTFT, cold prompt's TTFT, cached and prompt tokens);
    /// the third 0.25× its cold prompt, 80% of the prompts cached.
    pub(crate) const THREE_TURNS: [(f64, f64, u64, u64); 3] = [
        (300.0, 400.0, 1024, 1280),
        (100.0, 500.0, 1280, 1600),
        (150.0, 600.0, 1536, 1920),
    ];

    pub(crate) fn window(
        s: u32,
        depths: &[(f64, f64, u64, u64)],
        p99_ttft: f64,
        turns: u64,
    ) -> SessionWindow {
        let w = workload();
        let mut win = SessionWindow::without_figures(w, s, 30.0, Status::Valid, None);
        win.total_tok_per_s = Some(100.0 * f64::from(s));
        win.turns_per_s = Some(1.0);
        win.sessions_per_s = Some(0.3);
        win.ttft_median_ms = Some(depths[0].0);
        win.per_session_tok_per_s = Some(50.0);
        win.cached_tokens_from = Some("usage.prompt_tokens_details.cached_tokens".into());
        win.latency = Some(Box::new(Latency {
            ttft_ms: Some(q(depths[0].0, p99_ttft, turns)),
            tpot_ms: Some(q(20.0, 25.0, turns)),
            tbt_ms: None,
            e2e_ms: None,
        }));
        win.depths = depths
            .iter()
            .enumerate()
            .map(|(i, &(ttft, cold, cached, prompt))| {
                let turn = i as u32 + 1;
                let mut d = SessionDepth::without_figures(
                    turn,
                    w.planned_context(turn),
                    Status::Valid,
                    None,
                );
                d.turns = Some(10);
                d.ttft_ms = Some(q(ttft, ttft * 2.0, 10));
                d.cold_ttft_ms = Some(cold);
                d.cold_prompts = Some(3);
                d.cached_tokens = Some(cached);
                d.prompt_tokens = Some(prompt);
                d
            })
            .collect();
        win
    }

    pub(crate) fn run(windows: Vec<SessionWindow>) -> Run {
        let mut run = Run::for_test(
            "s",
            serde_json::json!({"schema_version": 1, "model": "m", "served_model": "m",
                "hardware": {"gpu": "H200", "gpu_count": 1}, "engine": {"name": "vllm"},
                "run": {"decode_test": "request_burst"}}),
        );
        run.sessions = windows;
        run
    }

    #[test]
    fn the_cold_prompts_are_named_only_when_every_depth_says_the_same_number() {
        let w = window(1, &THREE_TURNS, 500.0, 30);
        assert_eq!(cold_prompts(std::slice::from_ref(&w)), Some(3));
        let mut one_silent = w.clone();
        one_silent.depths[1].cold_prompts = None;
        assert_eq!(cold_prompts(&[w.clone(), one_silent]), None);
        let mut two = w.clone();
        two.depths[2].cold_prompts = Some(2);
        assert_eq!(cold_prompts(&[two]), None);
        // A depth without a cold figure has nothing to say.
        let mut cold_less = w.clone();
        cold_less.depths[0].cold_ttft_ms = None;
        cold_less.depths[0].cold_prompts = None;
        assert_eq!(cold_prompts(&[cold_less]), Some(3));
        assert_eq!(cold_prompts(&[]), None);
    }

    #[test]
    fn the_benefit_is_the_deepest_depth_against_its_cold_prompt_and_the_range_from_turn_2() {
        let w = window(1, &THREE_TURNS, 500.0, 30);
        let b = benefit(&w).unwrap();
        assert_eq!(b.deepest.turn, 3);
        assert!((b.ratio - 0.25).abs() < 1e-12);
        assert_eq!(b.later, Some((0.2, 0.25)));
        // The counters win over the answers' usage: they count every lookup.
        assert_eq!(cache_share(&w).unwrap().cached, 1024 + 1280 + 1536);
        let mut counted = w.clone();
        counted.server_cache = Some(ServerCacheCount {
            looked_up_tokens: 1000,
            cached_tokens: 0,
            counter: "vllm:prefix_cache_hits_total".into(),
        });
        let share = cache_share(&counted).unwrap();
        assert_eq!(share.share(), 0.0);
        assert_eq!(
            share.source,
            CacheSource::Counters("vllm:prefix_cache_hits_total".into())
        );
        // No cold prompt, no benefit.
        let mut cold_less = w.clone();
        for d in &mut cold_less.depths {
            d.cold_ttft_ms = None;
        }
        assert!(benefit(&cold_less).is_none());
    }

    #[test]
    fn two_runs_pair_at_the_most_sessions_both_measured_and_the_deepest_turn_both_reached() {
        let three = THREE_TURNS;
        let a = run(vec![
            window(1, &three, 500.0, 30),
            window(4, &three, 900.0, 30),
        ]);
        let mut b4 = window(4, &three[..2], 900.0, 30);
        b4.depths[1].ttft_ms = Some(q(50.0, 60.0, 10));
        let mut b16 = window(16, &three, 900.0, 30);
        b16.status = Status::Error;
        b16.reason = Some(crate::model::reason::Reason::of(
            crate::model::reason::Part::NoToken,
        ));
        let b = run(vec![window(1, &three, 500.0, 30), b4, b16]);
        let Paired::Pairs(pairs) = pair(&a, &b) else {
            panic!("a shared workload");
        };
        assert_eq!(pairs.len(), 1);
        // 16 sessions failed in B: 4 is the most both measured; B reached turn 2.
        assert_eq!((pairs[0].sessions, pairs[0].a.1.turn), (4, 2));
        assert_eq!(pairs[0].ttft_ratio(), Some(0.5));
        let mut other = window(1, &three, 500.0, 30);
        other.workload.user_tokens_per_turn = 512;
        assert_eq!(pair(&a, &run(vec![other])), Paired::DifferentWorkloads);
        assert_eq!(pair(&a, &run(vec![])), Paired::None);
    }

    #[test]
    fn the_most_sessions_within_a_tier_and_what_breaks_next() {
        let tier = SloTier {
            name: "t".into(),
            percentile: 99,
            ttft_ms: Some(1000.0),
            tpot_ms: Some(50.0),
            source: "s".into(),
        };
        let d = [(300.0, 400.0, 1024, 1280)];
        let r = run(vec![
            window(1, &d, 500.0, 700),
            window(4, &d, 900.0, 700),
            window(16, &d, 2500.0, 700),
        ]);
        let sweeps = sweeps(&r);
        assert_eq!(sweeps.len(), 1);
        match capacity(&sweeps[0], &tier) {
            SessionCapacity::Judged {
                max_sessions,
                breaks,
                failed_below,
                estimate,
                ..
            } => {
                assert_eq!(max_sessions, Some(4));
                assert!(failed_below.is_empty() && !estimate);
                let (s, b) = breaks.unwrap();
                assert_eq!(s, 16);
                assert!(matches!(
                    b,
                    Breach::Over {
                        limit: Limit::Ttft,
                        ..
                    }
                ));
            }
            other => panic!("{other:?}"),
        }
    }
}
