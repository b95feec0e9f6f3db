//! The Prometheus text exposition format, as served on `/metrics` by vLLM,
//! SGLang and llama.cpp, and the few series the runner reads from it.
//!
//! Written here because the parser crate on crates.io (prometheus-parse 0.2)
//! rejects metric names with colons, which is every vLLM and SGLang metric.

use std::collections::BTreeMap;

use crate::model::ServerCounters;

/// One sample line: `name{label="value",...} 12.5`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Parses the samples of an exposition; lines it cannot read are skipped,
/// since a server may add series this reader does not know.
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter_map(parse_line).collect()
}

/// [`parse`] without histogram buckets, which no figure reads (a
/// histogram's `_sum` and `_count` are kept): a large vLLM server's
/// exposition is mostly buckets, and a window reads it every second.
pub fn parse_without_buckets(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| {
            let name = line.split(['{', ' ']).next().unwrap_or_default();
            !name.ends_with("_bucket")
        })
        .filter_map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        let mut key = String::new();
        let end;
        loop {
            let (i, c) = chars.next()?;
            match c {
                '}' => {
                    end = i + 1;
                    break;
                }
                ',' | ' ' => {}
                '=' => {
                    if chars.next()?.1 != '"' {
                        return None;
                    }
                    let mut value = String::new();
                    loop {
                        match chars.next()?.1 {
                            '"' => break,
                            '\\' => match chars.next()?.1 {
                                'n' => value.push('\n'),
                                other => value.push(other),
                            },
                            other => value.push(other),
                        }
                    }
                    labels.insert(std::mem::take(&mut key), value);
                }
                other => key.push(other),
            }
        }
        rest = &body[end..];
    }
    let value = rest.split_whitespace().next()?.parse::<f64>().ok()?;
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// The sum of a series over all its label sets, if the server has it.
pub fn sum(samples: &[Sample], name: &str) -> Option<f64> {
    let mut found = false;
    let total = samples
        .iter()
        .filter(|s| s.name == name)
        .inspect(|_| found = true)
        .map(|s| s.value)
        .sum();
    found.then_some(total)
}

/// The first series of `names` that the server has, summed.
pub(crate) fn first_sum(samples: &[Sample], names: &[&str]) -> Option<f64> {
    names.iter().find_map(|n| sum(samples, n))
}

/// What sitegen reads from one engine's `/metrics`, by meaning: the one
/// table of metric names. Names in a list are alternatives, newest first;
/// the first one the server has is read. A figure whose series a server
/// lacks is "not recorded", never 0.
#[derive(Debug)]
pub(crate) struct EngineSeries {
    /// The engine, as a cell's `telemetry.server.source` names it.
    pub engine: &'static str,
    /// Gauge of requests running.
    pub running: &'static str,
    /// Gauge of requests waiting in the server's queue.
    pub waiting: &'static str,
    /// Counter of generated tokens.
    pub generated: &'static str,
    /// Gauges of KV-cache usage, 0 to 1.
    pub kv_usage: &'static [&'static str],
    /// Counters of requests preempted (vLLM) or retracted (SGLang): taken
    /// back from the running batch and queued again, their KV recomputed.
    pub preemptions: &'static [&'static str],
    pub prefix_cache: &'static [PrefixCacheSeries],
    pub spec: &'static [SpecSeries],
}

/// Where a server counts its prefix cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PrefixCacheSeries {
    /// Counters of prompt tokens looked up in the cache and of those found.
    QueriesHits {
        queries: &'static str,
        hits: &'static str,
    },
    /// Counters of prompt tokens found in the cache and of those computed
    /// anew (llama.cpp): looked up = both.
    CachedComputed {
        cached: &'static str,
        computed: &'static str,
    },
    /// A gauge of the hit rate, 0 to 1, averaged over the samples.
    RateGauge(&'static str),
}

/// Where a server counts speculative decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SpecSeries {
    /// Counters of drafts (verification steps, when counted), of draft
    /// tokens proposed and of those accepted.
    Counters {
        drafts: Option<&'static str>,
        draft_tokens: &'static str,
        accepted: &'static str,
    },
    /// Gauges of the mean tokens per step and of the acceptance rate, as
    /// the server averages its recent batches (SGLang), averaged over the samples.
    Gauges {
        accept_length: &'static str,
        accept_rate: &'static str,
    },
}

pub(crate) const VLLM: EngineSeries = EngineSeries {
    engine: "vLLM",
    running: "vllm:num_requests_running",
    waiting: "vllm:num_requests_waiting",
    generated: "vllm:generation_tokens_total",
    // A fraction despite the name; vLLM before 0.10 called it gpu_cache_usage_perc.
    kv_usage: &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    preemptions: &["vllm:num_preemptions_total"],
    prefix_cache: &[
        PrefixCacheSeries::QueriesHits {
            queries: "vllm:prefix_cache_queries_total",
            hits: "vllm:prefix_cache_hits_total",
        },
        // vLLM's V0 engine.
        PrefixCacheSeries::RateGauge("vllm:gpu_prefix_cache_hit_rate"),
    ],
    spec: &[SpecSeries::Counters {
        drafts: Some("vllm:spec_decode_num_drafts_total"),
        draft_tokens: "vllm:spec_decode_num_draft_tokens_total",
        accepted: "vllm:spec_decode_num_accepted_tokens_total",
    }],
};

pub(crate) const SGLANG: EngineSeries = EngineSeries {
    engine: "SGLang",
    running: "sglang:num_running_reqs",
    waiting: "sglang:num_queue_reqs",
    generated: "sglang:generation_tokens_total",
    kv_usage: &["sglang:token_usage"],
    // The counter: sglang:num_retracted_reqs is a gauge of the last batch's
    // retractions, whose growth over a window means nothing.
    preemptions: &["sglang:num_retracted_requests_total"],
    prefix_cache: &[PrefixCacheSeries::RateGauge("sglang:cache_hit_rate")],
    spec: &[SpecSeries::Gauges {
        accept_length: "sglang:spec_accept_length",
        accept_rate: "sglang:spec_accept_rate",
    }],
};

pub(crate) const LLAMA_CPP: EngineSeries = EngineSeries {
    engine: "llama.cpp",
    running: "llamacpp:requests_processing",
    waiting: "llamacpp:requests_deferred",
    generated: "llamacpp:tokens_predicted_total",
    // Served by llama.cpp's server until its KV-cache rework of 2025; later
    // builds have no KV-cache usage at all.
    kv_usage: &["llamacpp:kv_cache_usage_ratio"],
    // llama.cpp never takes a running request back.
    preemptions: &[],
    prefix_cache: &[PrefixCacheSeries::CachedComputed {
        cached: "llamacpp:prompt_tokens_cached_total",
        computed: "llamacpp:prompt_tokens_total",
    }],
    spec: &[
        SpecSeries::Counters {
            drafts: Some("llamacpp:spec_decode_num_drafts_total"),
            draft_tokens: "llamacpp:spec_decode_num_draft_tokens_total",
            accepted: "llamacpp:spec_decode_num_accepted_tokens_total",
        },
        SpecSeries::Counters {
            drafts: None,
            draft_tokens: "llamacpp:tokens_drafted_total",
            accepted: "llamacpp:tokens_drafted_accepted_total",
        },
    ],
};

/// Every engine whose `/metrics` sitegen reads.
pub(crate) const ENGINES: [&EngineSeries; 3] = [&VLLM, &SGLANG, &LLAMA_CPP];

/// Requests running on the server (vLLM, SGLang, llama.cpp names).
pub(crate) const RUNNING: [&str; 3] = [VLLM.running, SGLANG.running, LLAMA_CPP.running];
/// Requests waiting in the server's queue.
pub(crate) const WAITING: [&str; 3] = [VLLM.waiting, SGLANG.waiting, LLAMA_CPP.waiting];
/// The server's counter of generated tokens.
pub(crate) const GENERATED: [&str; 3] = [VLLM.generated, SGLANG.generated, LLAMA_CPP.generated];

/// The engine whose series the exposition has: every name of an engine
/// starts with its prefix (`vllm:`, `sglang:`, `llamacpp:`).
pub(crate) fn engine_of(samples: &[Sample]) -> Option<&'static EngineSeries> {
    ENGINES.into_iter().find(|e| {
        let prefix = &e.running[..=e.running.find(':').unwrap_or_default()];
        samples.iter().any(|s| s.name.starts_with(prefix))
    })
}

/// The first of `names` the server has, summed over its label sets, with its name.
fn first_named(samples: &[Sample], names: &[&'static str]) -> Option<(f64, &'static str)> {
    names.iter().find_map(|n| sum(samples, n).map(|v| (v, *n)))
}

/// Pairs of series (seconds, count) whose growth over a window gives the
/// server's own mean time per output token: llama.cpp's counters of decode
/// time and predicted tokens, else the sum and count of vLLM's or SGLang's
/// time-per-output-token histogram (vLLM's inter-token latency is per step,
/// so under speculative decoding it spans several tokens).
pub(crate) const TOKEN_TIME: [(&str, &str); 5] = [
    (
        "llamacpp:tokens_predicted_seconds_total",
        "llamacpp:tokens_predicted_total",
    ),
    (
        "vllm:request_time_per_output_token_seconds_sum",
        "vllm:request_time_per_output_token_seconds_count",
    ),
    (
        "vllm:time_per_output_token_seconds_sum",
        "vllm:time_per_output_token_seconds_count",
    ),
    (
        "vllm:inter_token_latency_seconds_sum",
        "vllm:inter_token_latency_seconds_count",
    ),
    (
        "sglang:time_per_output_token_seconds_sum",
        "sglang:time_per_output_token_seconds_count",
    ),
];

/// Draft tokens proposed and accepted, and the drafts (verification
/// steps) where the server counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct SpecCounts {
    pub drafts: Option<f64>,
    pub draft_tokens: f64,
    pub accepted: f64,
}

/// The server's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct DecodeCounters {
    pub generated_tokens: Option<f64>,
    /// (seconds, count) of the first [`TOKEN_TIME`] pair the server has.
    pub token_time: Option<(f64, f64)>,
    /// The preemption counter, and its name for a cell's reason.
    pub preemptions: Option<(f64, &'static str)>,
    /// Prompt tokens looked up in the prefix cache, and those found there.
    pub prefix_cache: Option<PrefixCacheCounts>,
    pub spec: Option<SpecCounts>,
}

/// The server's prefix-cache counters at one moment: prompt tokens looked
/// up in the cache and those found there, and the counter of those found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PrefixCacheCounts {
    pub looked_up: f64,
    pub found: f64,
    pub found_series: &'static str,
}

impl PrefixCacheCounts {
    /// The first prefix-cache counters of [`ENGINES`] the server has (a
    /// server that publishes only a rate gauge has none).
    pub fn read(samples: &[Sample]) -> Option<PrefixCacheCounts> {
        ENGINES
            .iter()
            .flat_map(|e| e.prefix_cache)
            .find_map(|series| match *series {
                PrefixCacheSeries::QueriesHits { queries, hits } => Some(PrefixCacheCounts {
                    looked_up: sum(samples, queries)?,
                    found: sum(samples, hits)?,
                    found_series: hits,
                }),
                PrefixCacheSeries::CachedComputed { cached, computed } => {
                    let found = sum(samples, cached)?;
                    Some(PrefixCacheCounts {
                        looked_up: found + sum(samples, computed)?,
                        found,
                        found_series: cached,
                    })
                }
                PrefixCacheSeries::RateGauge(_) => None,
            })
    }

    /// Growth since `before` as (looked up, found); `None` after a reset.
    pub fn since(&self, before: &PrefixCacheCounts) -> Option<(u64, u64)> {
        let looked_up = self.looked_up - before.looked_up;
        let found = self.found - before.found;
        (looked_up >= 0.0 && found >= 0.0).then(|| (looked_up.round() as u64, found.round() as u64))
    }
}

impl DecodeCounters {
    pub fn read(samples: &[Sample]) -> DecodeCounters {
        let spec = ENGINES
            .iter()
            .flat_map(|e| e.spec)
            .find_map(|series| match *series {
                SpecSeries::Counters {
                    drafts,
                    draft_tokens,
                    accepted,
                } => Some(SpecCounts {
                    drafts: drafts.and_then(|d| sum(samples, d)),
                    draft_tokens: sum(samples, draft_tokens)?,
                    accepted: sum(samples, accepted)?,
                }),
                SpecSeries::Gauges { .. } => None,
            });
        let preemption_names: Vec<&'static str> = ENGINES
            .iter()
            .flat_map(|e| e.preemptions.iter().copied())
            .collect();
        DecodeCounters {
            generated_tokens: first_sum(samples, &GENERATED),
            token_time: TOKEN_TIME
                .iter()
                .find_map(|(secs, count)| Some((sum(samples, secs)?, sum(samples, count)?))),
            preemptions: first_named(samples, &preemption_names),
            prefix_cache: PrefixCacheCounts::read(samples),
            spec,
        }
    }

    /// Growth of the generated-token counter since `before`.
    pub(crate) fn generated_since(&self, before: &DecodeCounters) -> Option<f64> {
        Some(self.generated_tokens? - before.generated_tokens?)
    }

    /// The server's mean time per output token, in ms, over what it
    /// recorded since `before`; `None` when it recorded nothing.
    pub(crate) fn ms_per_token_since(&self, before: &DecodeCounters) -> Option<f64> {
        let (s1, n1) = self.token_time?;
        let (s0, n0) = before.token_time?;
        (n1 > n0 && s1 >= s0).then(|| (s1 - s0) * 1000.0 / (n1 - n0))
    }
}

/// The gauges of one `/metrics` sample taken during a window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Gauges {
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    /// KV-cache usage (0 to 1), and its series' name for a cell's reason.
    pub kv_usage: Option<(f64, &'static str)>,
    /// Servers that publish a rate instead of counters (SGLang).
    pub prefix_hit_rate: Option<f64>,
    pub spec_accept_length: Option<f64>,
    pub spec_accept_rate: Option<f64>,
}

impl Gauges {
    pub fn read(samples: &[Sample]) -> Gauges {
        let kv_names: Vec<&'static str> = ENGINES
            .iter()
            .flat_map(|e| e.kv_usage.iter().copied())
            .collect();
        let prefix_hit_rate = ENGINES
            .iter()
            .flat_map(|e| e.prefix_cache)
            .find_map(|series| match *series {
                PrefixCacheSeries::RateGauge(name) => sum(samples, name),
                _ => None,
            });
        // A server that is not decoding speculatively may publish its
        // gauges as 0: that is no acceptance, not an acceptance of none.
        let (spec_accept_length, spec_accept_rate) = ENGINES
            .iter()
            .flat_map(|e| e.spec)
            .find_map(|series| match *series {
                SpecSeries::Gauges {
                    accept_length,
                    accept_rate,
                } => Some((
                    sum(samples, accept_length).filter(|v| *v > 0.0),
                    sum(samples, accept_rate).filter(|v| *v > 0.0),
                )),
                SpecSeries::Counters { .. } => None,
            })
            .unwrap_or_default();
        Gauges {
            running: first_sum(samples, &RUNNING),
            waiting: first_sum(samples, &WAITING),
            kv_usage: first_named(samples, &kv_names),
            prefix_hit_rate,
            spec_accept_length,
            spec_accept_rate,
        }
    }
}

/// The server's own word on a window: its counters summarized, and the
/// series a cell's reason names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerWord {
    pub counters: ServerCounters,
    /// The counter the preemptions were read from.
    pub preemption_series: Option<&'static str>,
    /// The gauge the KV-cache usage was read from.
    pub kv_usage_series: Option<&'static str>,
}

fn max(values: &[f64]) -> Option<f64> {
    values.iter().copied().max_by(f64::total_cmp)
}

/// A window's server figures: means and peaks of the gauges sampled during
/// it; preemptions, prefix-cache hits and speculative acceptance from the
/// growth of the counters read just before its first request (`before`)
/// and just after its last one ended (`after`). `None` when the server
/// said nothing at all.
pub(crate) fn summarize_window(
    source: String,
    gauges: &[Gauges],
    before: Option<&DecodeCounters>,
    after: Option<&DecodeCounters>,
) -> Option<ServerWord> {
    let series =
        |f: fn(&Gauges) -> Option<f64>| -> Vec<f64> { gauges.iter().filter_map(f).collect() };
    let running = series(|g| g.running);
    let waiting = series(|g| g.waiting);
    let kv = series(|g| g.kv_usage.map(|(v, _)| v));
    let delta = |f: fn(&DecodeCounters) -> Option<f64>| -> Option<f64> {
        let grown = f(after?)? - f(before?)?;
        // A counter that went down was reset (the server restarted): no figure.
        (grown >= 0.0).then_some(grown)
    };
    let preemptions = delta(|c| c.preemptions.map(|(v, _)| v));
    let prefix_queries = delta(|c| c.prefix_cache.map(|p| p.looked_up));
    let prefix_hits = delta(|c| c.prefix_cache.map(|p| p.found));
    let draft_tokens = delta(|c| c.spec.map(|s| s.draft_tokens));
    let accepted = delta(|c| c.spec.map(|s| s.accepted));
    let drafts = delta(|c| c.spec.and_then(|s| s.drafts));
    let counters = ServerCounters {
        source,
        samples: (!gauges.is_empty()).then_some(gauges.len() as u32),
        running_mean: crate::stats::mean(&running),
        running_max: max(&running),
        waiting_mean: crate::stats::mean(&waiting),
        waiting_max: max(&waiting),
        waiting_share: (!waiting.is_empty())
            .then(|| waiting.iter().filter(|w| **w > 0.0).count() as f64 / waiting.len() as f64),
        kv_cache_usage_mean: crate::stats::mean(&kv),
        kv_cache_usage_max: max(&kv),
        preemptions: preemptions.map(|p| p.round() as u64),
        prefix_cache_hit_rate: match (prefix_queries, prefix_hits) {
            (Some(q), Some(h)) if q > 0.0 => Some(h / q),
            _ => crate::stats::mean(&series(|g| g.prefix_hit_rate)),
        },
        // No drafts in the window: the server did not decode speculatively.
        spec_acceptance_rate: match (draft_tokens, accepted) {
            (Some(d), Some(a)) if d > 0.0 => Some(a / d),
            _ => crate::stats::mean(&series(|g| g.spec_accept_rate)),
        },
        spec_accept_length: match (drafts, accepted) {
            (Some(d), Some(a)) if d > 0.0 => Some(1.0 + a / d),
            _ => crate::stats::mean(&series(|g| g.spec_accept_length)),
        },
    };
    let said_nothing = ServerCounters {
        source: counters.source.clone(),
        ..Default::default()
    };
    if counters == said_nothing {
        return None;
    }
    Some(ServerWord {
        preemption_series: after
            .and_then(|c| c.preemptions)
            .map(|(_, name)| name)
            .filter(|_| counters.preemptions.is_some()),
        kv_usage_series: gauges.iter().find_map(|g| g.kv_usage.map(|(_, n)| n)),
        counters,
    })
}

/// What a server's `/metrics` offers of the figures above, and what not
/// and why, in one line for the run's log: "vLLM's /metrics: ...".
pub(crate) fn coverage(samples: &[Sample]) -> Option<String> {
    let engine = engine_of(samples)?;
    let has = |name: &str| samples.iter().any(|s| s.name == name);
    let any = |names: &[&str]| names.iter().any(|n| has(n));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let mut check = |what: &str, present: bool, why: String| {
        if present {
            found.push(what.to_string());
        } else {
            missing.push(format!("{what} ({why})"));
        }
    };
    let none_of = |names: &[&str]| -> String {
        match names {
            [] => format!("{} counts none", engine.engine),
            [one] => format!("no {one}"),
            many => format!("none of {}", many.join(", ")),
        }
    };
    check("running", has(engine.running), none_of(&[engine.running]));
    check("waiting", has(engine.waiting), none_of(&[engine.waiting]));
    check(
        "KV-cache usage",
        any(engine.kv_usage),
        none_of(engine.kv_usage),
    );
    check(
        "preemptions",
        any(engine.preemptions),
        none_of(engine.preemptions),
    );
    let prefix_names: Vec<&str> = engine
        .prefix_cache
        .iter()
        .map(|p| match *p {
            PrefixCacheSeries::QueriesHits { queries, .. } => queries,
            PrefixCacheSeries::CachedComputed { cached, .. } => cached,
            PrefixCacheSeries::RateGauge(name) => name,
        })
        .collect();
    check("prefix cache", any(&prefix_names), none_of(&prefix_names));
    let spec_names: Vec<&str> = engine
        .spec
        .iter()
        .map(|p| match *p {
            SpecSeries::Counters { draft_tokens, .. } => draft_tokens,
            SpecSeries::Gauges { accept_length, .. } => accept_length,
        })
        .collect();
    check(
        "speculative decoding",
        any(&spec_names),
        format!(
            "{}: served only when the server decodes speculatively",
            none_of(&spec_names)
        ),
    );
    let mut line = format!("{}'s /metrics", engine.engine);
    if !found.is_empty() {
        line.push_str(&format!(": {}", found.join(", ")));
    }
    if !missing.is_empty() {
        line.push_str(&format!("; not recorded: {}", missing.join("; ")));
    }
    Some(line)
}

/// KV cache capacity from vLLM's `cache_config_info`: `num_gpu_blocks` of
/// `block_size` tokens, less the one block vLLM keeps for itself (its null
/// block: a cache of 16 blocks serves 15, seen on real vLLM 0.32), paged in
/// those blocks; else a `kv_cache_size_tokens` label.
pub(crate) fn vllm_kv_capacity(samples: &[Sample]) -> Option<super::plan::KvCache> {
    let info = samples
        .iter()
        .find(|s| s.name == "vllm:cache_config_info")?;
    let label = |name: &str| -> Option<u64> { info.labels.get(name)?.parse().ok() };
    if let (Some(blocks), Some(size)) = (label("num_gpu_blocks"), label("block_size")) {
        return Some(super::plan::KvCache {
            tokens: blocks.saturating_sub(1) * size,
            block: Some(size),
        });
    }
    label("kv_cache_size_tokens").map(super::plan::KvCache::tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
vllm:generation_tokens_total{model_name="m"} 123456.0
vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="150000",prefix="a\"b,c}"} 1.0
"#;

    #[test]
    fn reads_vllm_series_summed_over_labels() {
        let s = parse(VLLM);
        assert_eq!(first_sum(&s, &RUNNING), Some(5.0));
        assert_eq!(first_sum(&s, &WAITING), Some(1.0));
        assert_eq!(first_sum(&s, &GENERATED), Some(123_456.0));
        assert_eq!(
            vllm_kv_capacity(&s),
            Some(crate::runner::plan::KvCache {
                tokens: 149_999 * 16,
                block: Some(16)
            })
        );
        let info = s
            .iter()
            .find(|x| x.name == "vllm:cache_config_info")
            .unwrap();
        assert_eq!(info.labels["prefix"], "a\"b,c}");
    }

    #[test]
    fn buckets_are_skipped_where_no_figure_reads_them() {
        let text = "vllm:e2e_request_latency_seconds_bucket{le=\"0.3\",model_name=\"m\"} 4\n\
                    vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 9\n\
                    vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 2.5\n\
                    vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 9\n\
                    vllm:num_requests_running 3\n";
        assert_eq!(parse(text).len(), 5);
        let kept: Vec<String> = parse_without_buckets(text)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            kept,
            [
                "vllm:e2e_request_latency_seconds_sum",
                "vllm:e2e_request_latency_seconds_count",
                "vllm:num_requests_running"
            ]
        );
    }

    #[test]
    fn reads_llama_cpp_series_and_skips_what_it_cannot_read() {
        let s = parse(
            "llamacpp:requests_processing 2\nllamacpp:requests_deferred 4\nnot a metric line at all\nbroken{x=\"1\" 2\nvalue_less\n",
        );
        assert_eq!(first_sum(&s, &RUNNING), Some(2.0));
        assert_eq!(first_sum(&s, &WAITING), Some(4.0));
        assert_eq!(first_sum(&s, &GENERATED), None);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn the_servers_time_per_token_is_the_growth_of_its_own_counters() {
        let before = DecodeCounters::read(&parse(
            "llamacpp:tokens_predicted_total 1000\nllamacpp:tokens_predicted_seconds_total 2.5\n",
        ));
        let after = DecodeCounters::read(&parse(
            "llamacpp:tokens_predicted_total 1400\nllamacpp:tokens_predicted_seconds_total 3.5\n",
        ));
        assert_eq!(after.generated_since(&before), Some(400.0));
        assert_eq!(after.ms_per_token_since(&before), Some(2.5));
        // Nothing recorded in between: no figure, not a division by zero.
        assert_eq!(before.ms_per_token_since(&before), None);

        let vllm = |sum: f64, count: f64| {
            DecodeCounters::read(&parse(&format!(
                "vllm:inter_token_latency_seconds_sum{{model_name=\"m\"}} {sum}\nvllm:inter_token_latency_seconds_count{{model_name=\"m\"}} {count}\n"
            )))
        };
        assert_eq!(
            vllm(4.0, 300.0).ms_per_token_since(&vllm(1.0, 100.0)),
            Some(15.0)
        );
        assert_eq!(vllm(4.0, 300.0).generated_since(&vllm(1.0, 100.0)), None);
    }

    /// vLLM's counters and gauges at one moment, as its /metrics names them.
    fn vllm(
        preempted: u64,
        queries: u64,
        hits: u64,
        drafts: u64,
        draft: u64,
        accepted: u64,
    ) -> DecodeCounters {
        DecodeCounters::read(&parse(&format!(
            "vllm:num_preemptions_total{{engine=\"0\",model_name=\"m\"}} {preempted}\n\
             vllm:prefix_cache_queries_total{{model_name=\"m\"}} {queries}\n\
             vllm:prefix_cache_hits_total{{model_name=\"m\"}} {hits}\n\
             vllm:spec_decode_num_drafts_total{{model_name=\"m\"}} {drafts}\n\
             vllm:spec_decode_num_draft_tokens_total{{model_name=\"m\"}} {draft}\n\
             vllm:spec_decode_num_accepted_tokens_total{{model_name=\"m\"}} {accepted}\n"
        )))
    }

    fn gauges(running: f64, waiting: f64, kv: f64) -> Gauges {
        Gauges::read(&parse(&format!(
            "vllm:num_requests_running {running}\nvllm:num_requests_waiting {waiting}\nvllm:kv_cache_usage_perc {kv}\n"
        )))
    }

    #[test]
    fn a_window_s_counters_are_the_growth_of_the_server_s_own() {
        let before = vllm(10, 5000, 4000, 100, 400, 200);
        let after = vllm(13, 9000, 7000, 300, 1200, 900);
        let samples = [
            gauges(4.0, 0.0, 0.5),
            gauges(3.0, 1.0, 0.75),
            gauges(4.0, 2.0, 1.0),
        ];
        let word = summarize_window(
            "vLLM's /metrics every 1 s".into(),
            &samples,
            Some(&before),
            Some(&after),
        )
        .unwrap();
        let c = &word.counters;
        assert_eq!(c.samples, Some(3));
        assert_eq!(
            (c.running_mean, c.running_max),
            (Some(11.0 / 3.0), Some(4.0))
        );
        assert_eq!((c.waiting_mean, c.waiting_max), (Some(1.0), Some(2.0)));
        assert_eq!(c.waiting_share, Some(2.0 / 3.0));
        assert_eq!(
            (c.kv_cache_usage_mean, c.kv_cache_usage_max),
            (Some(0.75), Some(1.0))
        );
        assert_eq!(c.preemptions, Some(3));
        assert_eq!(c.prefix_cache_hit_rate, Some(0.75));
        // 700 of 800 draft tokens accepted over 200 drafts: 3.5 tokens a step.
        assert_eq!(c.spec_acceptance_rate, Some(0.875));
        assert_eq!(c.spec_accept_length, Some(4.5));
        assert_eq!(word.preemption_series, Some("vllm:num_preemptions_total"));
        assert_eq!(word.kv_usage_series, Some("vllm:kv_cache_usage_perc"));
    }

    #[test]
    fn what_a_server_does_not_count_is_not_recorded_never_zero() {
        // llama.cpp (2026): running, waiting, prefix cache and speculative
        // counters, no KV-cache usage, no preemptions; no drafts made.
        let read = |cached: u64, computed: u64| {
            DecodeCounters::read(&parse(&format!(
                "llamacpp:prompt_tokens_total {computed}\nllamacpp:prompt_tokens_cached_total {cached}\n\
                 llamacpp:spec_decode_num_drafts_total 0\nllamacpp:spec_decode_num_draft_tokens_total 0\n\
                 llamacpp:spec_decode_num_accepted_tokens_total 0\n"
            )))
        };
        let g = Gauges::read(&parse(
            "llamacpp:requests_processing 2\nllamacpp:requests_deferred 0\n",
        ));
        let word = summarize_window(
            "llama.cpp's /metrics every 1 s".into(),
            &[g],
            Some(&read(100, 500)),
            Some(&read(400, 600)),
        )
        .unwrap();
        let c = &word.counters;
        assert_eq!(c.running_max, Some(2.0));
        assert_eq!(c.waiting_share, Some(0.0));
        assert_eq!((c.kv_cache_usage_mean, c.kv_cache_usage_max), (None, None));
        assert_eq!(c.preemptions, None);
        // 300 of 400 prompt tokens looked up came from the cache.
        assert_eq!(c.prefix_cache_hit_rate, Some(0.75));
        assert_eq!((c.spec_acceptance_rate, c.spec_accept_length), (None, None));
        // A counter that went down (a restart) gives no figure.
        let word = summarize_window(
            "s".into(),
            &[],
            Some(&vllm(5, 10, 5, 0, 0, 0)),
            Some(&vllm(1, 20, 10, 0, 0, 0)),
        )
        .unwrap();
        assert_eq!(word.counters.preemptions, None);
        assert_eq!(word.preemption_series, None);
        assert_eq!(word.counters.samples, None);
        // Nothing at all: no counters.
        assert_eq!(summarize_window("s".into(), &[], None, None), None);
    }

    #[test]
    fn sglang_s_rates_are_gauges_averaged_over_the_samples() {
        let g = |usage: f64, hit: f64, length: f64| {
            Gauges::read(&parse(&format!(
                "sglang:num_running_reqs{{model_name=\"m\"}} 8\nsglang:num_queue_reqs{{model_name=\"m\"}} 0\n\
                 sglang:token_usage{{model_name=\"m\"}} {usage}\nsglang:cache_hit_rate{{model_name=\"m\"}} {hit}\n\
                 sglang:spec_accept_length{{model_name=\"m\"}} {length}\nsglang:spec_accept_rate{{model_name=\"m\"}} 0\n"
            )))
        };
        let word = summarize_window(
            "s".into(),
            &[g(0.5, 0.9, 3.0), g(0.7, 0.7, 2.0)],
            None,
            None,
        )
        .unwrap();
        let c = &word.counters;
        assert_eq!(c.kv_cache_usage_max, Some(0.7));
        assert_eq!(word.kv_usage_series, Some("sglang:token_usage"));
        assert_eq!(c.prefix_cache_hit_rate, Some(0.8));
        assert_eq!(c.spec_accept_length, Some(2.5));
        assert_eq!(
            c.spec_acceptance_rate, None,
            "a rate of 0 is no speculative decoding"
        );
    }

    #[test]
    fn coverage_says_what_the_server_lacks_and_why() {
        let llama = parse(
            "llamacpp:requests_processing 0\nllamacpp:requests_deferred 0\nllamacpp:prompt_tokens_cached_total 0\nllamacpp:spec_decode_num_draft_tokens_total 0\n",
        );
        assert_eq!(
            coverage(&llama).unwrap(),
            "llama.cpp's /metrics: running, waiting, prefix cache, speculative decoding; not recorded: KV-cache usage (no llamacpp:kv_cache_usage_ratio); preemptions (llama.cpp counts none)"
        );
        let vllm = parse(VLLM);
        let line = coverage(&vllm).unwrap();
        assert!(line.starts_with("vLLM's /metrics: running, waiting; not recorded: KV-cache usage (none of vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc)"), "{line}");
        assert!(line.ends_with("speculative decoding (no vllm:spec_decode_num_draft_tokens_total: served only when the server decodes speculatively)"), "{line}");
        assert_eq!(coverage(&parse("other_metric 1\n")), None);
    }

    /// Real vLLM 0.32.0 (CPU build), after a prompt of 2,042 tokens was
    /// sent twice: its cache served 15 blocks of 128 the second time.
    #[test]
    fn real_vllm_0_32_counters_are_read() {
        let text = include_str!("../../tests/fixtures/servers/vllm-0.32.0/metrics_after.txt");
        let samples = parse_without_buckets(text);
        assert_eq!(engine_of(&samples).map(|e| e.engine), Some("vLLM"));
        assert_eq!(
            vllm_kv_capacity(&samples),
            Some(crate::runner::plan::KvCache {
                tokens: 63 * 128,
                block: Some(128)
            })
        );
        let cache = PrefixCacheCounts::read(&samples).unwrap();
        assert_eq!(
            (cache.looked_up, cache.found, cache.found_series),
            (4102.0, 1920.0, "vllm:prefix_cache_hits_total")
        );
        let idle = PrefixCacheCounts::read(&parse(include_str!(
            "../../tests/fixtures/servers/vllm-0.32.0/metrics_idle.txt"
        )))
        .unwrap();
        assert_eq!(cache.since(&idle), Some((4102, 1920)));
        assert_eq!(
            idle.since(&cache),
            None,
            "a counter that went down was reset"
        );
        let line = coverage(&samples).unwrap();
        assert!(
            line.starts_with(
                "vLLM's /metrics: running, waiting, KV-cache usage, preemptions, prefix cache"
            ),
            "{line}"
        );
    }
}
