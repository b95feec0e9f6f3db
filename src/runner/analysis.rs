//! From what a decode window recorded to the figures and status of its cell.
//! Pure functions: every definition of docs/measurement.md lives here.

use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{
    CellSpread, Interval, LoopEvidence, PauseSummary, Percentiles, RequestSample, ServerSamples,
    Spread, Status,
};

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    /// The server ended it and said why (`finish_reason` "length", "stop").
    Done(String),
    /// The stream ended (`[DONE]`) without any finish reason: the server
    /// stopped it, and said nothing of why.
    NoReason,
    /// Still running at the window's end; the runner cancelled it.
    Cancelled,
    Error(String),
}

/// How a request ended, against what it asked for (`max_tokens`, with
/// `ignore_eos` and `min_tokens` equal to it): docs/measurement.md,
/// "Every request accounted for".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// All the tokens it asked for (or the server's reason, when what it
    /// asked is not known).
    Finished,
    /// "stop" before `max_tokens`: the server ended it at end-of-sequence,
    /// honouring neither `ignore_eos` nor `min_tokens`. It finished.
    StoppedEarly,
    /// "length" before `max_tokens`: the server capped it, at the end of
    /// its context window.
    Capped,
    /// Ended without a finish reason before `max_tokens`: cut short.
    CutShort,
    /// Running at the window's end.
    Cancelled,
    Failed,
}

impl RequestRecord {
    /// Output tokens of the whole request, inside the window or not.
    pub(crate) fn tokens(&self) -> u64 {
        self.chunks.iter().map(|(_, k)| k).sum()
    }

    pub(crate) fn outcome(&self) -> Outcome {
        let short = self.asked_tokens.is_some_and(|asked| self.tokens() < asked);
        match &self.finish {
            Some(Finish::Error(_)) => Outcome::Failed,
            Some(Finish::Cancelled) | None => Outcome::Cancelled,
            Some(_) if !short => Outcome::Finished,
            Some(Finish::Done(reason)) if reason == "length" => Outcome::Capped,
            Some(Finish::Done(_)) => Outcome::StoppedEarly,
            Some(Finish::NoReason) => Outcome::CutShort,
        }
    }
}

/// Requests counted one token per streamed event that ended with
/// finish_reason "length" short of `max_tokens`, where the server showed
/// (the same prompt not streamed) that it generates all `max_tokens`: some
/// of their events held two tokens (as a server that holds back a
/// multi-byte character split across tokens sends them). Each is counted
/// as `max_tokens`, the tokens its events lacked added to its last chunk.
/// Returns what the cell says of them, when any.
pub(crate) fn count_merged_events(records: &mut [RequestRecord]) -> Option<Part> {
    let mut lacked = Vec::new();
    for r in records.iter_mut() {
        let (Some(asked), Some(Finish::Done(reason))) = (r.asked_tokens, &r.finish) else {
            continue;
        };
        let had = r.tokens();
        if reason != "length" || had >= asked {
            continue;
        }
        if let Some(last) = r.chunks.last_mut() {
            last.1 += asked - had;
            lacked.push(asked - had);
        }
    }
    (!lacked.is_empty()).then(|| Part::MergedEvents {
        merged: lacked.len() as u64,
        requests: records.len() as u64,
        mean_fewer: lacked.iter().sum::<u64>() as f64 / lacked.len() as f64,
        asked_tokens: records.iter().find_map(|r| r.asked_tokens).unwrap_or(0),
    })
}

/// One request as the client saw it. Times are seconds from the window's start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestRecord {
    pub stream: u32,
    pub start: f64,
    /// Chunks that carried tokens: (arrival time, tokens in the chunk).
    pub chunks: Vec<(f64, u64)>,
    /// When the request ended (last event, error or cancellation).
    pub end: f64,
    pub finish: Option<Finish>,
    pub prompt_tokens: Option<u64>,
    /// The last characters of the output, for loop detection.
    pub text_tail: String,
    /// The same of the reasoning output (chat), checked on its own.
    pub reasoning_tail: String,
    /// The server's own time per output token, if it sent one.
    pub server_ms_per_token: Option<f64>,
    /// `max_tokens` the request asked for, when known.
    pub asked_tokens: Option<u64>,
    /// Whether any event of its stream carried a token count (usage).
    pub stream_usage: bool,
    /// Prompt tokens the server said it found in its prefix cache, and the
    /// field that said it (client.rs).
    pub cached_tokens: Option<(u64, &'static str)>,
    /// The whole answer, where kept (a session's turn).
    pub text: Option<String>,
}

/// The figures of a window and the raw material behind them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowFigures {
    pub status: Status,
    pub reason: Option<Reason>,
    pub total_tok_per_s: f64,
    pub per_request_tok_per_s: Option<f64>,
    pub ttft_median_ms: Option<f64>,
    pub tbt_median_ms: Option<f64>,
    pub avg_active_requests: f64,
    pub completed_requests: u64,
    pub output_tokens: u64,
    pub measured_s: f64,
    pub ttft_ms: Option<Percentiles>,
    pub tbt_ms: Option<Percentiles>,
    pub latency: Option<Latency>,
    pub tokens_per_chunk: Option<f64>,
    pub max_pause_ms: Option<f64>,
    pub pause_ms: Option<PauseSummary>,
    pub peak_decoding_requests: u32,
    pub failed_requests: u64,
    pub prompt_tokens: Option<u64>,
    pub requests: Vec<RequestSample>,
    pub loop_evidence: Option<LoopEvidence>,
    /// The 95% interval of total tok/s from the window's own spread.
    pub total_ci95: Option<Interval>,
    pub tokens_per_second: Vec<u64>,
    pub drift: Option<f64>,
    /// p10/p50/p90 across requests, when any figure has them.
    pub spread: Option<CellSpread>,
}

/// Sub-windows of the batch-means interval. Six keeps each one long (5 s of
/// a 30 s window, far longer than the correlation of an engine's steps) and
/// leaves 5 degrees of freedom.
pub(crate) const BATCHES: usize = 6;

/// The 95% interval of the mean rate from the tokens counted in `BATCHES`
/// equal sub-windows of a `window_s` window (batch means): each sub-window's
/// rate is close to independent of the others when it is much longer than
/// the engine's correlation time, so their spread gives the noise of their
/// mean even though tokens a few steps apart are correlated.
pub(crate) fn batch_means_ci95(batch_tokens: &[u64], window_s: f64) -> Option<Interval> {
    let b = batch_tokens.len();
    if b != BATCHES || window_s <= 0.0 {
        return None;
    }
    let width = window_s / b as f64;
    let rates: Vec<f64> = batch_tokens.iter().map(|&k| k as f64 / width).collect();
    let (mean, half) = crate::stats::mean_interval(&rates)?;
    Some(Interval {
        low: (mean - half).max(0.0),
        high: mean + half,
        method: format!(
            "batch means over {b} sub-windows of {} s",
            crate::model::format::grouped(width, 1)
        ),
    })
}

/// Tokens of `chunks` (time, tokens) in each of `bins` equal parts of [0, window_s].
pub(crate) fn binned(chunks: &[(f64, u64)], window_s: f64, bins: usize) -> Vec<u64> {
    let mut out = vec![0u64; bins];
    for &(t, k) in chunks {
        if (0.0..=window_s).contains(&t) {
            let i = ((t / window_s * bins as f64) as usize).min(bins - 1);
            out[i] += k;
        }
    }
    out
}

/// Most windows `--repeat` takes per cell.
pub(crate) const MAX_REPEAT: u32 = 20;

/// Sub-windows of the drift check: four per third of the window.
pub(crate) const DRIFT_BINS: usize = 12;

/// The last third's rate over the first third's, when the two differ by
/// more than three standard errors: the rate drifted within the window (the
/// engine had not settled, or something slowed it). The noise of a
/// sub-window comes from the differences of neighbouring sub-windows (von
/// Neumann), which a steady trend barely inflates, unlike their spread.
pub(crate) fn drift(bins: &[u64]) -> Option<f64> {
    let m = bins.len() / 3;
    if m < 2 {
        return None;
    }
    let x: Vec<f64> = bins.iter().map(|&k| k as f64).collect();
    let first = x[..m].iter().sum::<f64>() / m as f64;
    let last = x[x.len() - m..].iter().sum::<f64>() / m as f64;
    if first <= 0.0 {
        return None;
    }
    let sigma2 =
        x.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>() / (2.0 * (x.len() - 1) as f64);
    let se = (sigma2 * 2.0 / m as f64).sqrt();
    ((last - first).abs() > 3.0 * se && (last / first - 1.0).abs() > 0.01).then(|| last / first)
}

fn spread(values: &[(f64, f64)]) -> Option<Spread> {
    Some(Spread {
        p10: weighted_percentile(values, 0.10)?,
        p50: weighted_percentile(values, 0.50)?,
        p90: weighted_percentile(values, 0.90)?,
    })
}

/// Nearest-rank percentile of `(value, weight)` pairs; `q` in [0, 1].
pub(crate) fn weighted_percentile(values: &[(f64, f64)], q: f64) -> Option<f64> {
    let mut v: Vec<(f64, f64)> = values
        .iter()
        .copied()
        .filter(|(x, w)| x.is_finite() && *w > 0.0)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = v.iter().map(|(_, w)| w).sum();
    let rank = (q * total).max(f64::MIN_POSITIVE);
    let mut seen = 0.0;
    for (x, w) in &v {
        seen += w;
        if seen >= rank - 1e-9 {
            return Some(*x);
        }
    }
    v.last().map(|(x, _)| *x)
}

fn percentiles(values: &[(f64, f64)]) -> Option<Percentiles> {
    Some(Percentiles {
        p50: weighted_percentile(values, 0.50)?,
        p90: weighted_percentile(values, 0.90)?,
        p99: weighted_percentile(values, 0.99)?,
    })
}

/// The latency percentiles of `values` over `requests` requests.
pub(crate) fn quantiles(values: &[(f64, f64)], requests: usize) -> Option<Quantiles> {
    let at = |q| weighted_percentile(values, q);
    Some(Quantiles {
        p50: Some(at(0.50)?),
        p90: at(0.90),
        p95: at(0.95),
        p99: at(0.99),
        requests: Some(requests as u64),
    })
}

/// Below this many characters of repetition, output is not called a loop.
pub(crate) const LOOP_MIN_CHARS: usize = 400;
/// Longest repeated unit looked for.
pub(crate) const LOOP_MAX_PERIOD: usize = 256;

/// The repeated unit covering the end of `text`, if it covers at least
/// [`LOOP_MIN_CHARS`] and three repetitions: (period, covered characters).
pub(crate) fn find_loop(text: &str) -> Option<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut best: Option<(usize, usize)> = None;
    for p in 1..=LOOP_MAX_PERIOD.min(n / 2) {
        let mut run = 0;
        while run + p < n && chars[n - 1 - run] == chars[n - 1 - run - p] {
            run += 1;
        }
        let covered = run + p;
        if covered >= LOOP_MIN_CHARS.max(3 * p) && best.is_none_or(|(_, c)| covered > c) {
            best = Some((p, covered));
        }
    }
    best
}

/// Turns the records of one window into the cell's figures and status.
///
/// - total tok/s: output tokens whose chunk arrived inside [0, window] / window;
/// - TTFT: first token chunk minus send time, of requests sent inside the window;
/// - time between tokens: per request (last - first chunk) / (tokens after the
///   first chunk), inside the window; the median is over tokens, so a chunk of
///   k tokens counts k times;
/// - per-request tok/s: median of the per-request rates (tokens / seconds);
/// - average active requests: time-weighted count of requests between their
///   first token and their end, over the window;
/// - pause: per request the longest gap between two of its chunks inside the
///   window, not divided by the chunk's tokens, so a stall stays visible.
pub(crate) fn summarize(
    records: &[RequestRecord],
    window_s: f64,
    concurrency: u32,
    server: Option<&ServerSamples>,
) -> WindowFigures {
    let inside = |t: f64| (0.0..=window_s).contains(&t);
    let mut output_tokens = 0u64;
    let mut chunks_inside = 0u64;
    let mut ttfts = Vec::new();
    let mut tbts = Vec::new();
    let mut tpots = Vec::new();
    let mut e2es = Vec::new();
    let mut rates = Vec::new();
    let mut active_time = 0.0;
    let mut intervals = Vec::new();
    let mut completed = 0u64;
    let mut failures: Vec<String> = Vec::new();
    let mut prompt_tokens: Vec<u64> = Vec::new();
    let mut samples = Vec::new();
    let mut loop_evidence = None;
    let mut pauses = Vec::new();
    let mut all_chunks: Vec<(f64, u64)> = Vec::new();
    let mut short = Short::default();

    for r in records {
        let window_chunks: Vec<(f64, u64)> = r
            .chunks
            .iter()
            .copied()
            .filter(|(t, _)| inside(*t))
            .collect();
        let tokens: u64 = window_chunks.iter().map(|(_, k)| k).sum();
        output_tokens += tokens;
        all_chunks.extend(window_chunks.iter().copied());
        chunks_inside += window_chunks.len() as u64;
        let first = r.chunks.first().map(|(t, _)| *t);
        let ttft_ms = first.map(|f| (f - r.start) * 1000.0);
        if let Some(ms) = ttft_ms.filter(|_| inside(r.start) && first.is_some_and(inside)) {
            ttfts.push((ms, 1.0));
        }
        // A request still decoding when the window closed was silent from
        // its last chunk to the window's end: that silence is a pause too.
        let still_decoding = matches!(r.finish, Some(Finish::Cancelled) | None) || r.end > window_s;
        let tail = window_chunks
            .last()
            .filter(|_| still_decoding)
            .map(|(t, _)| (window_s - t) * 1000.0);
        let max_pause_ms = window_chunks
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * 1000.0)
            .chain(tail)
            .max_by(f64::total_cmp);
        if let Some(p) = max_pause_ms {
            pauses.push((p, 1.0));
        }
        let mut tbt_ms = None;
        if let (Some((t0, k0)), Some((t1, _))) = (window_chunks.first(), window_chunks.last()) {
            let after_first = tokens - k0;
            if after_first > 0 && t1 > t0 {
                let per_token_ms = (t1 - t0) * 1000.0 / after_first as f64;
                tbt_ms = Some(per_token_ms);
                tbts.push((per_token_ms, after_first as f64));
                tpots.push((per_token_ms, 1.0));
                rates.push((after_first as f64 / (t1 - t0), 1.0));
            }
        }
        if let Some(f) = first {
            // Decoding lasts from the first to the last token; a request
            // cancelled at the window's end was still decoding then.
            let last_token = r.chunks.last().map_or(r.end, |(t, _)| *t);
            let decode_end = match r.finish {
                Some(Finish::Done(_)) | Some(Finish::NoReason) | Some(Finish::Error(_)) => {
                    last_token
                }
                Some(Finish::Cancelled) | None => r.end,
            };
            let (a, b) = (f.max(0.0), decode_end.min(window_s));
            if b > a {
                active_time += b - a;
                intervals.push((a, b));
            }
        }
        let outcome = r.outcome();
        if matches!(outcome, Outcome::Finished | Outcome::StoppedEarly)
            && inside(r.start)
            && r.end <= window_s
        {
            e2es.push(((r.end - r.start) * 1000.0, 1.0));
        }
        match outcome {
            Outcome::Finished | Outcome::StoppedEarly if r.end <= window_s => completed += 1,
            Outcome::Failed => {
                if let Some(Finish::Error(e)) = &r.finish {
                    failures.push(e.clone());
                }
            }
            _ => {}
        }
        // A request that ended short counts wherever it ended: a request
        // cut short at the window's edge was still cut short.
        match outcome {
            Outcome::CutShort => short.cut.push(r.tokens()),
            Outcome::Capped => short.capped.push(r.tokens()),
            Outcome::StoppedEarly => short.stopped.push(r.tokens()),
            _ => {}
        }
        if let Some(asked) = r.asked_tokens {
            short.asked = asked;
        }
        prompt_tokens.extend(r.prompt_tokens);
        // The answer and the reasoning are checked apart: a loop in one
        // does not need the other to repeat too.
        for (tail, channel) in [(&r.text_tail, None), (&r.reasoning_tail, Some("reasoning"))] {
            if loop_evidence.is_none()
                && let Some((period, covered)) = find_loop(tail)
            {
                let chars: Vec<char> = tail.chars().collect();
                loop_evidence = Some(LoopEvidence {
                    stream: r.stream,
                    period_chars: period as u32,
                    covered_chars: covered as u32,
                    unit: chars[chars.len() - period..].iter().collect(),
                    channel: channel.map(str::to_string),
                });
            }
        }
        samples.push(RequestSample {
            stream: r.stream,
            start_s: r.start,
            ttft_ms,
            output_tokens: tokens,
            duration_s: r.end - r.start,
            finish_reason: match (outcome, &r.finish) {
                (Outcome::CutShort, _) => "cut short".into(),
                (Outcome::Capped, _) => "capped".into(),
                (_, Some(Finish::Done(reason))) => reason.clone(),
                (_, Some(Finish::NoReason)) => "no reason".into(),
                (_, Some(Finish::Cancelled) | None) => "cancelled".into(),
                (_, Some(Finish::Error(_))) => "error".into(),
            },
            chunks: r.chunks.len() as u64,
            tbt_ms,
            server_ms_per_token: r.server_ms_per_token,
            max_pause_ms,
            error: match &r.finish {
                Some(Finish::Error(e)) => Some(e.clone()),
                _ => None,
            },
        });
    }

    let peak = peak_overlap(&intervals);
    prompt_tokens.sort_unstable();
    let server_queued =
        server.is_some_and(|s| s.samples.iter().any(|m| m.waiting.is_some_and(|w| w > 0.0)));
    let (status, mut parts) = if !failures.is_empty() {
        (
            Status::Error,
            vec![Part::RequestsFailed {
                failed: failures.len() as u64,
                requests: Some(records.len() as u64),
                first: Some(failures[0].clone()),
                error_codes: None,
                kinds: Vec::new(),
            }],
        )
    } else if let Some(why) = short.invalidating(records.len()) {
        (Status::Error, why)
    } else if let Some(e) = &loop_evidence {
        (
            Status::Looped,
            vec![Part::Looped {
                stream: e.stream,
                period_chars: e.period_chars,
                covered_chars: e.covered_chars,
                channel: e.channel.clone(),
            }],
        )
    } else if server_queued || peak < concurrency {
        let why = if server_queued {
            Part::ServerWaiting
        } else {
            Part::StreamedAtOnce { peak, concurrency }
        };
        (Status::RequestsQueued, vec![why])
    } else {
        (Status::Valid, Vec::new())
    };
    // Requests that ended at end-of-sequence are said even of a Valid cell.
    parts.extend(short.stopped_early(records.len()));
    let reason = Reason::of_parts(parts);

    let total_tok_per_s = output_tokens as f64 / window_s;
    let batches = binned(&all_chunks, window_s, BATCHES);
    let total_ci95 = batch_means_ci95(&batches, window_s);
    let seconds = (window_s.ceil() as usize).max(1);
    // Whole seconds: the last bin is what is left of the window.
    let mut tokens_per_second = vec![0u64; seconds];
    for &(t, k) in &all_chunks {
        tokens_per_second[(t as usize).min(seconds - 1)] += k;
    }
    WindowFigures {
        drift: drift(&binned(&all_chunks, window_s, DRIFT_BINS)),
        total_ci95,
        tokens_per_second,
        spread: CellSpread {
            per_request_tok_per_s: spread(&rates),
            ttft_ms: spread(&ttfts),
            tbt_ms: spread(&tbts),
        }
        .known(),
        status,
        reason,
        total_tok_per_s,
        per_request_tok_per_s: weighted_percentile(&rates, 0.5),
        ttft_median_ms: weighted_percentile(&ttfts, 0.5),
        tbt_median_ms: weighted_percentile(&tbts, 0.5),
        avg_active_requests: active_time / window_s,
        completed_requests: completed,
        output_tokens,
        measured_s: window_s,
        ttft_ms: percentiles(&ttfts),
        tbt_ms: percentiles(&tbts),
        latency: Latency {
            ttft_ms: quantiles(&ttfts, ttfts.len()),
            tpot_ms: quantiles(&tpots, tpots.len()),
            tbt_ms: quantiles(&tbts, tpots.len()),
            e2e_ms: quantiles(&e2es, e2es.len()),
        }
        .known(),
        tokens_per_chunk: (chunks_inside > 0).then(|| output_tokens as f64 / chunks_inside as f64),
        max_pause_ms: pauses.iter().map(|(p, _)| *p).max_by(f64::total_cmp),
        pause_ms: pauses
            .iter()
            .map(|(p, _)| *p)
            .max_by(f64::total_cmp)
            .and_then(|max| {
                Some(PauseSummary {
                    p50: weighted_percentile(&pauses, 0.5)?,
                    p99: weighted_percentile(&pauses, 0.99)?,
                    max,
                })
            }),
        peak_decoding_requests: peak,
        failed_requests: failures.len() as u64,
        prompt_tokens: prompt_tokens.get(prompt_tokens.len() / 2).copied(),
        requests: samples,
        loop_evidence,
    }
}

/// KV-cache usage at or above this reads as 100%: the cache was full.
pub(crate) const KV_FULL: f64 = 0.995;

/// What the server's own counters add to a window's status and reason
/// (docs/measurement.md, "Statuses"). A request preempted during the
/// window was taken back from the running batch and queued again: the
/// server could not run all requests at once, so a Valid cell is Requests
/// queued, and its reason names the counter. A KV cache that was full is
/// said, whatever the status.
pub(crate) fn heed_server_word(
    status: Status,
    reason: Option<Reason>,
    word: &crate::runner::metrics::ServerWord,
) -> (Status, Option<Reason>) {
    let c = &word.counters;
    let mut said = Vec::new();
    let mut status = status;
    if let (Some(n), Some(series)) = (c.preemptions.filter(|n| *n > 0), word.preemption_series) {
        said.push(Part::Preempted {
            requests: n,
            series: series.to_string(),
        });
        if status == Status::Valid {
            status = Status::RequestsQueued;
        }
    }
    if let (Some(peak), Some(series)) = (
        c.kv_cache_usage_max.filter(|p| *p >= KV_FULL),
        word.kv_usage_series,
    ) {
        said.push(Part::KvCacheFull {
            series: series.to_string(),
            peak_usage: peak,
        });
    }
    (status, Reason::join(reason, Reason::of_parts(said)))
}

/// The requests of a window that ended before `max_tokens`, by how: the
/// tokens each had.
#[derive(Debug, Default)]
struct Short {
    cut: Vec<u64>,
    capped: Vec<u64>,
    stopped: Vec<u64>,
    asked: u64,
}

impl Short {
    fn mean(tokens: &[u64]) -> f64 {
        tokens.iter().sum::<u64>() as f64 / tokens.len().max(1) as f64
    }

    /// Why the cell is not Valid, when requests were cut short or capped.
    fn invalidating(&self, requests: usize) -> Option<Vec<Part>> {
        let mut parts = Vec::new();
        if !self.cut.is_empty() {
            parts.push(Part::CutShort {
                short: self.cut.len() as u64,
                requests: requests as u64,
                mean_tokens: Self::mean(&self.cut),
                asked_tokens: self.asked,
            });
        }
        if !self.capped.is_empty() {
            parts.push(Part::Capped {
                short: self.capped.len() as u64,
                requests: requests as u64,
                mean_tokens: Self::mean(&self.capped),
                asked_tokens: self.asked,
            });
        }
        (!parts.is_empty()).then_some(parts)
    }

    /// What a cell says of requests that stopped at end-of-sequence.
    fn stopped_early(&self, requests: usize) -> Option<Part> {
        (!self.stopped.is_empty()).then(|| Part::StoppedEarly {
            short: self.stopped.len() as u64,
            requests: requests as u64,
            mean_tokens: Self::mean(&self.stopped),
            asked_tokens: self.asked,
        })
    }
}

/// An overlap shorter than this is not counted as running at once: when a
/// server hands a finished request's slot to a waiting one, the two streams'
/// chunks can cross on the wire for a moment.
const MIN_OVERLAP_S: f64 = 0.005;

/// Most intervals open at one moment for at least [`MIN_OVERLAP_S`].
fn peak_overlap(intervals: &[(f64, f64)]) -> u32 {
    let mut events: Vec<(f64, i32)> = intervals
        .iter()
        .flat_map(|&(a, b)| [(a, 1), (b, -1)])
        .collect();
    // At equal times, close before open: back-to-back requests do not overlap.
    events.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut open, mut peak) = (0i32, 0i32);
    for (i, (t, d)) in events.iter().enumerate() {
        open += d;
        let held = events.get(i + 1).map_or(0.0, |next| next.0 - t);
        if held >= MIN_OVERLAP_S {
            peak = peak.max(open);
        }
    }
    peak as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MetricSample;

    /// A request sent at `start`, first token after `ttft`, then `k` tokens every `step` seconds.
    fn stream(stream: u32, start: f64, ttft: f64, step: f64, k: u64, until: f64) -> RequestRecord {
        let mut chunks = vec![(start + ttft, 1)];
        let mut t = start + ttft + step;
        while t <= until {
            chunks.push((t, k));
            t += step;
        }
        RequestRecord {
            stream,
            start,
            end: until,
            finish: Some(Finish::Cancelled),
            chunks,
            ..Default::default()
        }
    }

    #[test]
    fn figures_of_steady_streams() {
        // 4 streams, 10 ms per token, 100 ms TTFT, 10 s window.
        let records: Vec<_> = (0..4).map(|i| stream(i, 0.0, 0.1, 0.01, 1, 10.0)).collect();
        let f = summarize(&records, 10.0, 4, None);
        assert_eq!(f.status, Status::Valid);
        assert_eq!(f.output_tokens, 4 * 991);
        assert!((f.total_tok_per_s - 396.4).abs() < 1e-9);
        assert!((f.tbt_median_ms.unwrap() - 10.0).abs() < 1e-6);
        assert!((f.per_request_tok_per_s.unwrap() - 100.0).abs() < 1e-6);
        assert!((f.ttft_median_ms.unwrap() - 100.0).abs() < 1e-6);
        assert!((f.avg_active_requests - 3.96).abs() < 1e-9);
        assert_eq!(f.peak_decoding_requests, 4);
        assert_eq!(f.completed_requests, 0);
        // Each request keeps the value the median is taken over.
        for r in &f.requests {
            assert!((r.tbt_ms.unwrap() - 10.0).abs() < 1e-6);
        }
    }

    #[test]
    fn multi_token_chunks_count_every_token() {
        // Speculative decoding: 4 tokens per chunk every 20 ms = 5 ms per token.
        let records = [stream(0, 0.0, 0.05, 0.02, 4, 2.0)];
        let f = summarize(&records, 2.0, 1, None);
        assert!(
            (f.tbt_median_ms.unwrap() - 5.0).abs() < 1e-6,
            "{:?}",
            f.tbt_median_ms
        );
        assert!((f.tokens_per_chunk.unwrap() - (1.0 + 4.0 * 97.0) / 98.0).abs() < 1e-9);
        assert_eq!(f.output_tokens, 1 + 4 * 97);
    }

    #[test]
    fn events_that_held_two_tokens_are_counted_once_the_server_showed_it_generates_them_all() {
        // 31 events of a 32-token request that ended "length": capped, until
        // the runner's unstreamed check counts it as the 32 it asked for.
        let mut r = stream(0, 0.0, 0.1, 0.01, 1, 1.0);
        r.chunks.truncate(31);
        r.asked_tokens = Some(32);
        r.finish = Some(Finish::Done("length".into()));
        assert_eq!(r.outcome(), Outcome::Capped);
        let mut full = stream(1, 0.0, 0.1, 0.01, 1, 1.0);
        full.chunks.truncate(32);
        full.asked_tokens = Some(32);
        full.finish = Some(Finish::Done("length".into()));
        let mut records = [r, full];
        let said = count_merged_events(&mut records).unwrap().words();
        assert!(
            said.starts_with(
                "1 of 2 requests streamed fewer events than tokens (1.0 fewer on average)"
            ),
            "{said}"
        );
        assert_eq!(records[0].tokens(), 32);
        assert_eq!(records[0].outcome(), Outcome::Finished);
        assert_eq!(records[1].tokens(), 32, "a full request is left as it is");
        assert_eq!(
            count_merged_events(&mut records),
            None,
            "nothing left to count"
        );
    }

    #[test]
    fn tokens_outside_the_window_do_not_count() {
        let mut r = stream(0, 0.0, 0.1, 0.1, 1, 12.0);
        r.end = 12.0;
        let f = summarize(&[r], 10.0, 1, None);
        assert_eq!(f.output_tokens, 100); // 0.1, 0.2 ... 10.0
    }

    #[test]
    fn queued_when_not_all_streams_ran_at_once_or_the_server_says_so() {
        // Two slots for four requests: the last two start decoding after the first two end.
        let mut records: Vec<_> = (0..2).map(|i| stream(i, 0.0, 0.1, 0.01, 1, 5.0)).collect();
        for r in &mut records {
            r.finish = Some(Finish::Done("length".into()));
        }
        records.extend((2..4).map(|i| stream(i, 0.0, 5.0, 0.01, 1, 10.0)));
        let f = summarize(&records, 10.0, 4, None);
        assert_eq!(f.status, Status::RequestsQueued);
        assert_eq!(f.peak_decoding_requests, 2);
        assert_eq!(f.completed_requests, 2);

        let all: Vec<_> = (0..2).map(|i| stream(i, 0.0, 0.1, 0.01, 1, 10.0)).collect();
        let server = ServerSamples {
            samples: vec![MetricSample {
                t_s: 1.0,
                running: Some(2.0),
                waiting: Some(1.0),
                kv_cache_usage: None,
            }],
            avg_running: Some(2.0),
            generation_tokens_delta: None,
            ms_per_token: None,
            client_output_tokens: 0,
        };
        assert_eq!(
            summarize(&all, 10.0, 2, Some(&server)).status,
            Status::RequestsQueued
        );
        assert_eq!(summarize(&all, 10.0, 2, None).status, Status::Valid);
    }

    #[test]
    fn streams_that_cross_for_a_moment_at_a_slot_handover_do_not_count_as_parallel() {
        // Two slots, three streams: stream 2 starts decoding 1 ms before stream 0's last token.
        let mut first = stream(0, 0.0, 0.1, 0.01, 1, 5.0);
        first.finish = Some(Finish::Done("length".into()));
        let records = [
            first,
            stream(1, 0.0, 0.1, 0.01, 1, 10.0),
            stream(2, 0.0, 4.999, 0.01, 1, 10.0),
        ];
        let f = summarize(&records, 10.0, 3, None);
        assert_eq!(f.peak_decoding_requests, 2);
        assert_eq!(f.status, Status::RequestsQueued);
    }

    #[test]
    fn a_failed_request_makes_the_cell_an_error_with_its_reason() {
        let mut records: Vec<_> = (0..3).map(|i| stream(i, 0.0, 0.1, 0.01, 1, 10.0)).collect();
        records[1].finish = Some(Finish::Error("HTTP 500: boom".into()));
        let f = summarize(&records, 10.0, 3, None);
        assert_eq!(f.status, Status::Error);
        assert_eq!(
            f.reason.as_ref().map(Reason::words).as_deref(),
            Some("1 of 3 requests failed; first: HTTP 500: boom")
        );
        assert_eq!(f.failed_requests, 1);
    }

    #[test]
    fn loops_are_found_at_the_end_of_the_text_only() {
        let unit = "The answer is the answer. ";
        let looped = format!("Some normal opening text here. {}", unit.repeat(40));
        let (period, covered) = find_loop(&looped).unwrap();
        assert_eq!(period, unit.len());
        assert!(covered >= unit.len() * 39);
        let normal = "Prefill speed depends on context length, attention kernels, batch sizes and memory bandwidth; decode depends on weights read per token. ".repeat(2);
        assert_eq!(find_loop(&normal), None, "two copies are not a loop");
        assert_eq!(
            find_loop(&"ab".repeat(100)),
            None,
            "shorter than the minimum"
        );
        assert_eq!(find_loop(&"ab".repeat(300)).map(|l| l.0), Some(2));
        let mut r = stream(2, 0.0, 0.1, 0.01, 1, 10.0);
        r.text_tail = looped;
        let f = summarize(&[r], 10.0, 1, None);
        assert_eq!(f.status, Status::Looped);
        assert_eq!(f.loop_evidence.unwrap().unit, unit);
    }

    #[test]
    fn weighted_percentiles() {
        let v = [(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0)];
        assert_eq!(weighted_percentile(&v, 0.5), Some(2.0));
        assert_eq!(weighted_percentile(&v, 0.99), Some(4.0));
        assert_eq!(
            weighted_percentile(&[(5.0, 10.0), (1.0, 1.0)], 0.5),
            Some(5.0)
        );
        assert_eq!(weighted_percentile(&[], 0.5), None);
    }

    /// A seeded generator (splitmix64) and a standard normal from it.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            (0..12).map(|_| self.next()).sum::<f64>() - 6.0
        }
    }

    /// `n` streams decoding through a `window`-second window of an engine
    /// whose step (`step` s) is slowed by a factor drawn every half second
    /// and shared by all streams (sd 4%), times 5% per step: the emulator's
    /// jitter, simulated.
    fn jittered_window(n: u32, window: f64, step: f64, rng: &mut Rng) -> Vec<RequestRecord> {
        let segments: Vec<f64> = (0..=(window * 2.0) as usize + 1)
            .map(|_| (1.0 + 0.04 * rng.normal()).max(0.2))
            .collect();
        (0..n)
            .map(|i| {
                let mut t = 0.02 + 0.01 * rng.next();
                let mut chunks = vec![(t, 1)];
                while t < window {
                    let slow = segments[(t * 2.0) as usize];
                    t += step * slow * (1.0 + 0.05 * rng.normal()).max(0.2);
                    if t <= window {
                        chunks.push((t, 1));
                    }
                }
                RequestRecord {
                    stream: i,
                    start: 0.0,
                    end: window,
                    finish: Some(Finish::Cancelled),
                    chunks,
                    ..Default::default()
                }
            })
            .collect()
    }

    /// Over many simulated windows with the emulator's jitter: the 95%
    /// interval covers the true rate in at least 90% of windows; two windows
    /// of one setup compare as within noise in at least 90%; a setup 10%
    /// slower is called slower in at least 90%, at 1, 4 and 16 streams.
    #[test]
    fn the_interval_covers_the_true_rate_and_tells_noise_from_a_real_difference() {
        use crate::compare::ratio::{NoiseVerdict, verdict};
        const WINDOWS: usize = 200;
        let window = 30.0;
        let mut rng = Rng(20_261_201);
        for n in [1u32, 4, 16] {
            let run = |step: f64, rng: &mut Rng| -> Vec<(f64, Interval)> {
                (0..WINDOWS)
                    .map(|_| {
                        let f = summarize(&jittered_window(n, window, step, rng), window, n, None);
                        (f.total_tok_per_s, f.total_ci95.expect("an interval"))
                    })
                    .collect()
            };
            let base = run(0.02, &mut rng);
            let slower = run(0.022, &mut rng);
            // The true rate: the mean over all windows of the setup.
            let truth = base.iter().map(|(t, _)| t).sum::<f64>() / WINDOWS as f64;
            let covered = base
                .iter()
                .filter(|(_, ci)| ci.low <= truth && truth <= ci.high)
                .count();
            let same = base
                .chunks(2)
                .filter(|p| {
                    verdict((p[0].0, Some(&p[0].1)), (p[1].0, Some(&p[1].1)))
                        == NoiseVerdict::WithinNoise
                })
                .count();
            let called_slower = base
                .iter()
                .zip(&slower)
                .filter(|(a, b)| {
                    verdict((a.0, Some(&a.1)), (b.0, Some(&b.1))) == NoiseVerdict::Slower
                })
                .count();
            let mean_half = base
                .iter()
                .map(|(t, ci)| ci.relative_half_width(*t).unwrap())
                .sum::<f64>()
                / WINDOWS as f64;
            // Steady windows: the drift check should hardly ever fire.
            let false_drift = (0..WINDOWS / 4)
                .filter(|_| {
                    summarize(&jittered_window(n, window, 0.02, &mut rng), window, n, None)
                        .drift
                        .is_some()
                })
                .count();
            eprintln!(
                "{n} streams: drift said of {false_drift} of {} steady windows",
                WINDOWS / 4
            );
            assert!(
                false_drift * 20 <= WINDOWS / 4,
                "{n} streams: drift {false_drift}"
            );
            eprintln!(
                "{n} streams: interval ±{:.2}% on average; covers the true rate {truth:.1} in {covered} of {WINDOWS} windows; same setup within noise in {same} of {}; 10% slower called slower in {called_slower} of {WINDOWS}",
                mean_half * 100.0,
                WINDOWS / 2
            );
            assert!(
                covered * 10 >= WINDOWS * 9,
                "{n} streams: covered {covered}"
            );
            assert!(
                same * 10 >= WINDOWS / 2 * 9,
                "{n} streams: within noise {same}"
            );
            assert!(
                called_slower * 10 >= WINDOWS * 9,
                "{n} streams: slower {called_slower}"
            );
        }
    }

    #[test]
    fn a_stall_still_running_when_the_window_closes_is_a_pause() {
        // One stream, 10 ms steps until 2 s, then nothing until the window
        // ends at 5 s: the request was still decoding, silent for 3 s.
        let mut r = stream(0, 0.0, 0.05, 0.01, 1, 2.0);
        r.end = 6.0;
        let f = summarize(&[r], 5.0, 1, None);
        let pause = f.max_pause_ms.unwrap();
        assert!((pause - 3000.0).abs() < 20.0, "{pause}");
        // The rate fell in the window's last sub-windows: the interval is wide
        // and the drift is said.
        assert!(f.drift.is_some_and(|d| d < 0.5), "{:?}", f.drift);
    }

    #[test]
    fn batch_means_of_a_steady_window_are_tight_and_of_an_uneven_one_wide() {
        let steady = batch_means_ci95(&[100, 100, 100, 100, 100, 100], 6.0).unwrap();
        assert_eq!((steady.low, steady.high), (100.0, 100.0));
        let uneven = batch_means_ci95(&[90, 110, 95, 105, 100, 100], 6.0).unwrap();
        // sd of the rates 7.07, standard error 2.89, t(5) 2.571: ±7.42.
        assert!((uneven.high - 107.42).abs() < 0.01, "{uneven:?}");
        assert_eq!(uneven.method, "batch means over 6 sub-windows of 1.0 s");
        assert_eq!(batch_means_ci95(&[1, 2, 3], 6.0), None);
    }

    fn word(preemptions: Option<u64>, kv_max: Option<f64>) -> crate::runner::metrics::ServerWord {
        crate::runner::metrics::ServerWord {
            counters: crate::model::ServerCounters {
                source: "vLLM's /metrics every 1 s".into(),
                preemptions,
                kv_cache_usage_max: kv_max,
                ..Default::default()
            },
            preemption_series: preemptions.map(|_| "vllm:num_preemptions_total"),
            kv_usage_series: kv_max.map(|_| "vllm:kv_cache_usage_perc"),
        }
    }

    #[test]
    fn preemptions_make_a_valid_cell_queued_and_say_the_counter() {
        let (status, reason) = heed_server_word(Status::Valid, None, &word(Some(3), Some(0.6)));
        assert_eq!(status, Status::RequestsQueued);
        assert_eq!(
            reason.as_ref().map(Reason::words).as_deref(),
            Some("3 requests preempted during the window (vllm:num_preemptions_total)")
        );
        let (status, reason) = heed_server_word(
            Status::RequestsQueued,
            Some(Reason::of(Part::ServerWaiting)),
            &word(Some(1), Some(0.998)),
        );
        assert_eq!(status, Status::RequestsQueued);
        assert_eq!(
            reason.as_ref().map(Reason::words).as_deref(),
            Some(
                "the server reported waiting requests; 1 request preempted during the window (vllm:num_preemptions_total); the KV cache was full (vllm:kv_cache_usage_perc reached 100%)"
            )
        );
        // An Error stays an Error, with the why added.
        let (status, reason) = heed_server_word(
            Status::Error,
            Some(Reason::of(Part::RequestsFailed {
                failed: 1,
                requests: Some(2),
                first: None,
                error_codes: None,
                kinds: Vec::new(),
            })),
            &word(Some(2), None),
        );
        assert_eq!(status, Status::Error);
        assert!(
            reason
                .unwrap()
                .words()
                .ends_with("2 requests preempted during the window (vllm:num_preemptions_total)")
        );
        // No preemption, a KV cache short of full: nothing changes.
        assert_eq!(
            heed_server_word(Status::Valid, None, &word(Some(0), Some(0.99))),
            (Status::Valid, None)
        );
        assert_eq!(
            heed_server_word(Status::Valid, None, &word(None, None)),
            (Status::Valid, None)
        );
        // A full KV cache alone is said, and the cell stays Valid.
        let (status, reason) = heed_server_word(Status::Valid, None, &word(None, Some(1.0)));
        assert_eq!(status, Status::Valid);
        assert_eq!(
            reason.as_ref().map(Reason::words).as_deref(),
            Some("the KV cache was full (vllm:kv_cache_usage_perc reached 100%)")
        );
    }
}
