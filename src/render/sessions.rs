//! The run page's "Sessions" section: per number of sessions, what a turn
//! at a reached context waited for its first token against a cold prompt of
//! that context, how much of the prompt the server's cache held, how fast
//! the answers came; the most sessions within each latency tier; a chart of
//! TTFT by context reached beside the cold prompts; every window and depth
//! in tables.

use crate::compare::sessions::{
    CacheSource, SessionCapacity, SessionSweep, benefit, cache_share, capacity, cold_prompts,
    cold_ratio, sweeps,
};
use crate::model::format;
use crate::model::sessions::{SessionDepth, SessionWindow, SessionWorkload};
use crate::model::slo::{SloFile, SloTier};
use crate::model::{Run, Status};

use super::capacity::{along_sentence, limit_name, ms, tier_limits};
use super::charts::ChartError;
use super::status_table::{Column, StatusTable};

/// Below this share of prompt tokens found in the cache, the page says the
/// cache held (almost) nothing.
const NO_HITS: f64 = 0.01;

pub struct SessionsSection {
    /// What the sessions were.
    pub lead: String,
    /// Per sweep and number of sessions, the answer: TTFT against cold,
    /// the cache's share, the answers' speed.
    pub findings: Vec<String>,
    /// Per tier and sweep, the most sessions within it.
    pub capacity: Vec<String>,
    pub chart_svg: Option<String>,
    pub chart_note: Option<String>,
    pub chart_caption: &'static str,
    /// A row per window, and a row per turn depth of each window.
    pub windows: StatusTable,
    pub depths: StatusTable,
}

/// "1,024-token shared prefix, 256 user and 64 answer tokens a turn, up
/// to 9 turns".
pub fn workload_words(w: &SessionWorkload) -> String {
    let think = match w.think_time_ms {
        0 => String::new(),
        t => format!(", {} of thinking between turns", ms(t as f64)),
    };
    format!(
        "a {}-token shared prefix, {} user and {} answer tokens a turn, up to {}{think}",
        format::count(w.shared_prefix_tokens),
        format::count(w.user_tokens_per_turn),
        format::count(w.answer_tokens),
        format::counted(w.turns as usize, "turn")
    )
}

fn sessions_words(n: u32) -> String {
    format::counted(n as usize, "session")
}

fn source_words(s: &CacheSource) -> String {
    match s {
        CacheSource::Counters(c) => format!("the server's {c}"),
        CacheSource::Usage(f) => format!("each answer's {f}"),
    }
}

/// One window in one sentence: the deepest turn against a cold prompt, the
/// range over later turns, the cache's share, the answers' speed.
fn window_finding(w: &SessionWindow) -> String {
    let head = sessions_words(w.sessions);
    if !w.status.has_figures() {
        let why = w
            .reason
            .as_ref()
            .map_or(String::new(), |r| format!(": {}", r.words()));
        return format!("{head}: {}{why}.", w.status.label());
    }
    let share = cache_share(w);
    let cache = share.as_ref().map_or_else(
        || "; the server said nothing of its cache".to_string(),
        |s| {
            format!(
                "; the server found {} of the prompt tokens in its cache ({} of {}, {})",
                format::share(s.share()),
                format::count(s.cached),
                format::count(s.prompt),
                source_words(&s.source)
            )
        },
    );
    let speed = w.per_session_tok_per_s.map_or(String::new(), |r| {
        format!("; answers came at {} tok/s a session", format::tok_per_s(r))
    });
    let queued = if w.status == Status::RequestsQueued {
        " (Requests queued)"
    } else {
        ""
    };
    let Some(b) = benefit(w) else {
        return format!(
            "{head}{queued}: no turn has both a TTFT and a cold prompt of its context to set it against{cache}{speed}."
        );
    };
    let d = b.deepest;
    let later = match b.later {
        Some((lo, hi)) if d.turn >= 2 && (lo - hi).abs() > 1e-9 => format!(
            " (every turn from the 2nd: {}–{})",
            format::ratio(lo),
            format::ratio(hi)
        ),
        _ => String::new(),
    };
    let none = share.as_ref().is_some_and(|s| s.share() < NO_HITS);
    let lead = if none { "no cache benefit: " } else { "" };
    format!(
        "{head}{queued}: {lead}turn {} ({} tokens of context) waited {} for its first token, {} a cold prompt of that context ({}){later}{cache}{speed}.",
        d.turn,
        format::count(d.context_tokens),
        ms(d.ttft_median_ms().unwrap_or_default()),
        format::ratio(b.ratio),
        ms(d.cold_ttft_ms.unwrap_or_default()),
    )
}

fn capacity_sentence(sweep: &SessionSweep, tier: &SloTier, several: bool) -> String {
    let of = if several {
        format!(", {}", workload_words(&sweep.workload))
    } else {
        String::new()
    };
    let head = format!("{} ({}){of}", tier.name, tier_limits(tier));
    match capacity(sweep, tier) {
        SessionCapacity::NotRecorded { limits, sessions } => {
            let names: Vec<String> = limits
                .iter()
                .map(|l| limit_name(*l, tier.percentile))
                .collect();
            format!(
                "{head}: not judged: the window of {} records no {}.",
                sessions_words(sessions),
                format::or_list(&names)
            )
        }
        SessionCapacity::Judged {
            max_sessions,
            turns_per_s,
            failed_below,
            breaks,
            estimate,
        } => {
            let within = max_sessions.map(|n| {
                let rate = turns_per_s.map_or(String::new(), |r| {
                    format!(" ({} turns completed a second)", format::rate_per_s(r))
                });
                format!("up to {} at once{rate}", sessions_words(n))
            });
            let below: Vec<String> = failed_below.iter().map(|s| sessions_words(*s)).collect();
            along_sentence(
                &head,
                tier,
                "number of sessions",
                within,
                breaks.map(|(n, b)| (n.to_string(), b)),
                &below,
                estimate,
                "fewer turns than it needs",
            )
        }
    }
}

const WINDOW_COLUMNS: &[Column<SessionWindow>] = &[
    ("Sessions", |w| Some(w.sessions.to_string())),
    ("Status", |w| Some(w.status.label().to_string())),
    ("Output tok/s", |w| w.total_tok_per_s.map(format::tok_per_s)),
    ("Per-session tok/s", |w| {
        w.per_session_tok_per_s.map(format::tok_per_s)
    }),
    ("Turns/s", |w| w.turns_per_s.map(format::rate_per_s)),
    ("Sessions/s", |w| w.sessions_per_s.map(format::rate_per_s)),
    ("TTFT median", |w| w.ttft_median_ms.map(ms)),
    ("TTFT p99", |w| {
        w.latency.as_ref()?.ttft_ms.as_ref()?.at(99).map(ms)
    }),
    ("Cached", |w| {
        cache_share(w).map(|s| format::share(s.share()))
    }),
    ("Turns", |w| {
        let started = w.turns_started?;
        Some(match w.failed_turns.filter(|f| *f > 0) {
            Some(f) => format!("{} ({} failed)", format::count(started), format::count(f)),
            None => format::count(started),
        })
    }),
    ("Preempted", |w| w.preemptions.map(format::count)),
    ("Reason", |w| w.reason.as_ref().map(|r| r.words())),
];

/// A turn depth beside the window it is of.
type Depth<'a> = (&'a SessionWindow, &'a SessionDepth);

/// The columns of the turns' table (a function: its rows borrow the run).
fn depth_columns<'a>() -> Vec<Column<Depth<'a>>> {
    vec![
        ("Sessions", |(w, _)| Some(w.sessions.to_string())),
        ("Turn", |(_, d)| Some(d.turn.to_string())),
        ("Context tokens", |(_, d)| {
            Some(format::count(d.context_tokens))
        }),
        ("Status", |(_, d)| Some(d.status.label().to_string())),
        ("Turns", |(_, d)| d.turns.map(format::count)),
        ("TTFT median", |(_, d)| d.ttft_median_ms().map(ms)),
        ("TTFT p90", |(_, d)| d.ttft_ms.as_ref()?.at(90).map(ms)),
        ("Cold prompt TTFT", |(_, d)| d.cold_ttft_ms.map(ms)),
        ("TTFT / cold", |(_, d)| cold_ratio(d).map(format::ratio)),
        ("Cached", |(_, d)| d.cached_share().map(format::share)),
        ("Per-session tok/s", |(_, d)| {
            d.per_session_tok_per_s.map(format::tok_per_s)
        }),
        ("Reason", |(_, d)| d.reason.as_ref().map(|r| r.words())),
    ]
}

pub fn section(run: &Run, slo: &SloFile) -> Result<Option<SessionsSection>, ChartError> {
    if run.sessions.is_empty() {
        return Ok(None);
    }
    let sweeps = sweeps(run);
    let several = sweeps.len() > 1;
    let workloads: Vec<String> = sweeps.iter().map(|s| workload_words(&s.workload)).collect();
    let lead = format!(
        "Sessions as agents and chats send them: each turn resends the whole history ({}), so a server with a prefix cache computes only what the session added since its last turn. A window of {} keeps that many sessions running, a finished session replaced at once; every turn begun inside it is counted. Each depth's TTFT is set against {}.",
        format::or_list(&workloads),
        format::seconds_setting(run.sessions[0].window_s),
        match cold_prompts(&run.sessions) {
            Some(n) if n > 1 => format!(
                "the median of {n} cold prompts of the same context, each measured as a prefill is"
            ),
            _ => "a cold prompt of the same context, measured as a prefill is".into(),
        }
    );
    let findings = sweeps
        .iter()
        .flat_map(|s| {
            s.windows.iter().map(move |w| match several {
                true => format!("{}: {}", workload_words(&s.workload), window_finding(w)),
                false => window_finding(w),
            })
        })
        .collect();
    let capacity = slo
        .tiers
        .iter()
        .flat_map(|t| sweeps.iter().map(move |s| capacity_sentence(s, t, several)))
        .collect();
    let windows: Vec<&SessionWindow> = sweeps
        .iter()
        .flat_map(|s| s.windows.iter().copied())
        .collect();
    let pairs: Vec<Depth> = windows
        .iter()
        .flat_map(|w| w.depths.iter().map(move |d| (*w, d)))
        .collect();
    let windows = StatusTable::of(
        "sessions-windows-h",
        "sessions",
        &windows,
        WINDOW_COLUMNS,
        |w| w.status,
    );
    let depths = StatusTable::of(
        "sessions-depths-h",
        "sessions",
        &pairs.iter().collect::<Vec<_>>(),
        &depth_columns(),
        |(_, d)| d.status,
    );
    let (chart_svg, chart_note) = chart(&sweeps)?;
    Ok(Some(SessionsSection {
        lead,
        findings,
        capacity,
        chart_svg,
        chart_note,
        chart_caption: "Median TTFT by the context a turn had reached: a line per number of sessions (its Valid depths), and a thin line for the cold prompts of each context. The gap between them is what the cache spared.",
        windows,
        depths,
    }))
}

fn chart(sweeps: &[SessionSweep]) -> Result<(Option<String>, Option<String>), ChartError> {
    use super::charts::lines::{Axis, Scale, Series, xy_chart};
    let several = sweeps.len() > 1;
    let mut series = Vec::new();
    for (k, s) in sweeps.iter().enumerate() {
        let of = if several {
            format!(" (workload {})", k + 1)
        } else {
            String::new()
        };
        for w in &s.windows {
            let points: Vec<(f64, f64)> = w
                .depths
                .iter()
                .filter(|d| d.status.has_figures())
                .filter_map(|d| Some((d.context_tokens as f64, d.ttft_median_ms()?)))
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    style: series.len() + 1,
                    points,
                    emphasis: true,
                    joined: true,
                    solid: false,
                    label: Some(format!("{}{of}", sessions_words(w.sessions))),
                });
            }
        }
        // One cold prompt per depth, the same for every number of sessions.
        let mut cold: Vec<(f64, f64)> = Vec::new();
        for w in &s.windows {
            for d in &w.depths {
                if let Some(c) = d.cold_ttft_ms
                    && !cold
                        .iter()
                        .any(|(x, _)| *x == w.workload.planned_context(d.turn) as f64)
                {
                    cold.push((w.workload.planned_context(d.turn) as f64, c));
                }
            }
        }
        cold.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !cold.is_empty() {
            series.push(Series {
                style: 0,
                points: cold,
                emphasis: false,
                joined: true,
                solid: false,
                label: Some(format!("cold prompt{of}")),
            });
        }
    }
    let measured = series
        .iter()
        .filter(|s| s.style != 0)
        .map(|s| s.points.len())
        .sum::<usize>();
    if measured < 2 {
        return Ok((
            None,
            Some("No chart: fewer than two depths of a Valid window record a TTFT.".into()),
        ));
    }
    let x = Axis::new(
        "context reached (tokens)",
        Scale::Linear,
        format::count_tick,
    );
    let y = Axis::new("TTFT (ms)", Scale::Linear, |v| {
        format::trim_number(v.round())
    });
    let svg = xy_chart(
        "Median TTFT by context reached, a line per number of sessions, beside a cold prompt",
        super::charts::INTERACTIVITY_SIZE,
        &x,
        &y,
        &series,
    )?;
    Ok((Some(svg), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sessions::tests::{THREE_TURNS, run, window};
    use crate::model::sessions::ServerCacheCount;

    #[test]
    fn a_finding_says_the_deepest_turn_against_cold_and_the_cache_s_share() {
        let w = window(1, &THREE_TURNS, 500.0, 30);
        assert_eq!(
            window_finding(&w),
            "1 session: turn 3 (1,920 tokens of context) waited 150 ms for its first token, 0.25× a cold prompt of that context (600 ms) (every turn from the 2nd: 0.20×–0.25×); the server found 80% of the prompt tokens in its cache (3,840 of 4,800, each answer's usage.prompt_tokens_details.cached_tokens); answers came at 50.0 tok/s a session."
        );
    }

    /// The case where a summary would lie: a server without a prefix cache.
    /// Its later turns cost a cold prompt, and the sentence says no benefit.
    #[test]
    fn without_cache_hits_the_finding_says_there_was_no_benefit() {
        let mut w = window(
            2,
            &[(400.0, 400.0, 0, 1280), (520.0, 500.0, 0, 1600)],
            600.0,
            30,
        );
        w.server_cache = Some(ServerCacheCount {
            looked_up_tokens: 0,
            cached_tokens: 0,
            counter: "vllm:prefix_cache_hits_total".into(),
        });
        let said = window_finding(&w);
        assert!(
            said.starts_with("2 sessions: no cache benefit: turn 2"),
            "{said}"
        );
        assert!(said.contains("1.04× a cold prompt"), "{said}");
        assert!(said.contains("found 0% of the prompt tokens"), "{said}");
        // With hits it never says so.
        let hit = window(2, &[(100.0, 400.0, 1000, 1280)], 600.0, 30);
        assert!(!window_finding(&hit).contains("no cache benefit"));
    }

    #[test]
    fn the_section_has_a_chart_tables_and_a_capacity_per_tier() {
        let d = [(300.0, 400.0, 1024, 1280), (100.0, 500.0, 1280, 1600)];
        let r = run(vec![window(1, &d, 500.0, 700), window(4, &d, 900.0, 700)]);
        let s = section(&r, &SloFile::defaults()).unwrap().unwrap();
        assert!(s.chart_svg.is_some(), "{:?}", s.chart_note);
        assert_eq!(s.windows.rows.len(), 2);
        assert_eq!(s.depths.rows.len(), 4);
        assert_eq!(s.findings.len(), 2);
        assert_eq!(s.capacity.len(), SloFile::defaults().tiers.len());
        assert!(
            s.capacity[0].contains("up to 4 sessions at once"),
            "{}",
            s.capacity[0]
        );
        assert!(
            section(&run(vec![]), &SloFile::defaults())
                .unwrap()
                .is_none()
        );
    }

    /// The lead names the median of several cold prompts only where every
    /// depth says it measured that many; a run that did not say had one.
    #[test]
    fn the_lead_says_how_many_cold_prompts_each_figure_is_the_median_of() {
        let d = [(300.0, 400.0, 1024, 1280), (100.0, 500.0, 1280, 1600)];
        let lead = |windows| {
            section(&run(windows), &SloFile::defaults())
                .unwrap()
                .unwrap()
                .lead
        };
        let said = lead(vec![window(1, &d, 500.0, 700)]);
        assert!(
            said.contains("against the median of 3 cold prompts of the same context"),
            "{said}"
        );
        let mut silent = window(1, &d, 500.0, 700);
        for d in &mut silent.depths {
            d.cold_prompts = None;
        }
        let said = lead(vec![silent]);
        assert!(
            said.contains("against a cold prompt of the same context"),
            "{said}"
        );
        assert!(!said.contains("median"), "{said}");
    }
}
