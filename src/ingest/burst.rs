//! What `vllm bench serve` and SGLang's `bench_serving` share: each result
//! is one request burst (a number of prompts, at most `max_concurrency` in
//! flight or all at once, timed from the first sent to the last finished),
//! with the same figure names (SGLang's script descends from vLLM's).

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::At;
use crate::model::paced::{Arrivals, PacedLoad, PacedPoint};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{DecodeCell, MeasuredBy, Status};

/// How the two tools' figures differ from docs/measurement.md, keyed by the
/// measurement table's column names.
pub fn definitions() -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            "mean prompt tokens of the completed requests (total input tokens / completed)",
        ),
        (
            "total_tok_per_s",
            "output tokens of all completed requests / the burst's duration, from the first \
             request sent to the last one finished: ramp-up and drain are included",
        ),
        (
            "per_request_tok_per_s",
            "1000 / the median TPOT, a request's TPOT being (latency − TTFT) / (output tokens − 1)",
        ),
        (
            "ttft_ms",
            "median over the burst's requests; the prompt cache is not warmed first, so the \
             first requests of a context are cold",
        ),
        (
            "tbt_ms",
            "median ITL: time between streamed chunks; a chunk of several tokens (speculative \
             decoding) counts once, not once per token",
        ),
        (
            "avg_active_requests",
            "sum of the requests' end-to-end latencies / duration (Little's law), not sampled",
        ),
        ("measured_s", "the burst's duration, not a fixed window"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// How many requests a burst kept in flight, as its file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InFlight {
    /// At most N at once (`max_concurrency`).
    Bounded(u32),
    /// N conversations at once, each sending its turns one after another.
    Conversations(u32),
    /// Every request sent at once (an infinite rate and no limit: the
    /// "offline" mode of both tools); N is the number sent.
    AllAtOnce(u32),
}

impl InFlight {
    pub fn n(self) -> u32 {
        match self {
            InFlight::Bounded(n) | InFlight::Conversations(n) | InFlight::AllAtOnce(n) => n,
        }
    }
}

/// Whether a `request_rate` as these tools write it is infinite: "inf"
/// (vLLM), Python's bare `Infinity` (SGLang; read as the string), or absent
/// (files older than the key sent everything at once).
fn infinite_rate(rate: Option<&Value>) -> bool {
    match rate {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => matches!(s.to_ascii_lowercase().as_str(), "inf" | "infinity"),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|r| r.is_infinite() || r >= 1e300),
        Some(_) => false,
    }
}

fn to_u32(at: &At, key: &str, n: u64) -> anyhow::Result<u32> {
    u32::try_from(n).map_err(|_| at.error(format!("{key}: {n} requests at once is too many")))
}

/// The burst's concurrency; `sent` is the number of requests it sent.
pub(crate) fn in_flight(at: &At, sent: u64) -> anyhow::Result<InFlight> {
    if at.opt_str("mode")? == Some("multi_turn")
        && let Some(n) = at.opt_u64("multi_turn_concurrency")?.filter(|n| *n > 0)
    {
        return Ok(InFlight::Conversations(to_u32(
            at,
            "multi_turn_concurrency",
            n,
        )?));
    }
    if let Some(n) = at.opt_u64("max_concurrency")?.filter(|n| *n > 0) {
        return Ok(InFlight::Bounded(to_u32(at, "max_concurrency", n)?));
    }
    let rate = at.value.get("request_rate");
    if infinite_rate(rate) {
        return Ok(InFlight::AllAtOnce(to_u32(at, "completed", sent)?));
    }
    Err(at.error(format!(
        "max_concurrency: none, and request_rate {}: the requests arrived at a paced rate, so \
         no number of requests in flight defines this burst; run the benchmark with \
         --max-concurrency N, or with an infinite rate to send them all at once",
        rate.map_or("absent".into(), Value::to_string)
    )))
}

/// How a result paced its requests, when it did: a finite `request_rate`
/// (outside multi-turn mode), with vLLM's `burstiness` and the concurrency
/// cap beside it where the tool also had one. `None` for a closed-loop burst.
fn paced_load(at: &At) -> anyhow::Result<Option<PacedLoad>> {
    if at.opt_str("mode")? == Some("multi_turn") {
        return Ok(None);
    }
    let rate = at.value.get("request_rate");
    if infinite_rate(rate) {
        return Ok(None);
    }
    let requested_per_s = at.f64("request_rate")?;
    if !(requested_per_s.is_finite() && requested_per_s > 0.0) {
        return Err(at.error(format!(
            "request_rate: expected a rate above 0 or \"inf\", found {requested_per_s}"
        )));
    }
    let max_concurrency = match at.opt_u64("max_concurrency")?.filter(|n| *n > 0) {
        Some(n) => Some(to_u32(at, "max_concurrency", n)?),
        None => None,
    };
    Ok(Some(PacedLoad {
        requested_per_s,
        arrivals: Arrivals::of_burstiness(at.opt_f64("burstiness")?),
        max_concurrency,
    }))
}

/// A figure of the burst in milliseconds, whatever unit its key says:
/// `{stat}_{name}_ms`, or seconds in `{stat}_{name}_s` and in the bare
/// `{stat}_{name}` that `benchmark_serving.py` derivatives write. Returns the
/// value and the key it came from.
pub(crate) fn figure_ms(
    at: &At,
    stat: &str,
    names: &[&str],
) -> anyhow::Result<Option<(f64, String)>> {
    for name in names {
        for (suffix, to_ms) in [("_ms", 1.0), ("_s", 1000.0), ("", 1000.0)] {
            let key = format!("{stat}_{name}{suffix}");
            if let Some(v) = at.opt_f64(&key)? {
                return Ok(Some((v * to_ms, key)));
            }
        }
    }
    Ok(None)
}

/// Keys of the record that name `family` (e.g. "ttft"), for a warning when
/// none of them could be read into the cell.
fn keys_of_family(at: &At, family: &str) -> Vec<String> {
    at.value.as_object().map_or_else(Vec::new, |m| {
        m.keys()
            .filter(|k| k.split('_').any(|w| w == family))
            .cloned()
            .collect()
    })
}

/// What one burst result is: a decode cell (N kept in flight, or all sent
/// at once) or a paced point (requests sent at a rate).
#[derive(Debug)]
pub(crate) enum Burst {
    Closed(DecodeCell),
    Paced(PacedPoint),
}

/// One burst result read, with the warnings of what it could not read.
pub(crate) struct BurstCell {
    pub cell: Burst,
    pub warnings: Vec<String>,
}

/// One burst result: a decode cell, or a paced point when its requests
/// arrived at a finite rate.
pub(crate) fn burst_cell(at: &At, tool: &str) -> anyhow::Result<BurstCell> {
    let Some(load) = paced_load(at)? else {
        let read = closed_cell(at, tool)?;
        return Ok(BurstCell {
            cell: Burst::Closed(read.cell),
            warnings: read.warnings,
        });
    };
    if at.value.get("completed").is_none() && at.value.get("duration").is_none() {
        return Err(at.error(format!(
            "request_rate {}: a paced run whose file records no duration and no completed \
             count, only latencies: neither its throughput nor its achieved rate can be known, \
             and no request can be accounted for",
            load.requested_per_s
        )));
    }
    let read = measured_cell(at, tool, None, load.max_concurrency)?;
    Ok(BurstCell {
        cell: Burst::Paced(paced_point(at, read.cell, load)?),
        warnings: read.warnings,
    })
}

/// A paced point from the figures a burst result gave (read as a decode
/// cell would be, concurrency aside).
fn paced_point(at: &At, cell: DecodeCell, load: PacedLoad) -> anyhow::Result<PacedPoint> {
    let completed = cell.completed_requests;
    let failed = at.opt_u64("failed")?;
    let mut definitions = cell
        .measured_by
        .as_ref()
        .map(|m| m.definitions.clone())
        .unwrap_or_default();
    for column in ["concurrency", "status", "avg_active_requests"] {
        definitions.remove(column);
    }
    definitions.insert(
        "achieved_per_s".into(),
        "completed requests / the run's duration (from the first request sent to the last \
         finished), as the tool's request_throughput"
            .into(),
    );
    definitions.insert(
        "avg_in_flight".into(),
        "sum of the requests' end-to-end latencies / duration (Little's law), not sampled".into(),
    );
    let peak = at.opt_u64("max_concurrent_requests")?;
    if peak.is_some() {
        definitions.insert(
            "peak_in_flight".into(),
            "the tool's max_concurrent_requests: the most requests active at some point of one \
             whole second (counted in one-second buckets), which can exceed the most at one \
             instant when requests are shorter than a second"
                .into(),
        );
    }
    let mut point = PacedPoint::new(cell.context_tokens, load, cell.status, cell.reason);
    point.sent_requests = at.opt_u64("num_prompts")?;
    point.completed_requests = completed;
    point.failed_requests = failed;
    point.output_tokens = cell.output_tokens;
    point.measured_s = cell.measured_s;
    point.peak_in_flight = peak.and_then(|n| u32::try_from(n).ok());
    point.achieved_per_s = match (completed, cell.measured_s) {
        (Some(c), Some(d)) if d > 0.0 => Some(c as f64 / d),
        _ => None,
    };
    point.total_tok_per_s = cell.total_tok_per_s;
    point.per_request_tok_per_s = cell.per_request_tok_per_s;
    point.ttft_median_ms = cell.ttft_median_ms;
    point.tbt_median_ms = cell.tbt_median_ms;
    point.avg_in_flight = cell.avg_active_requests;
    point.latency = cell.latency;
    point.measured_by = cell.measured_by.map(|m| MeasuredBy { definitions, ..m });
    Ok(point)
}

/// A decode cell from a closed-loop burst result.
fn closed_cell(at: &At, tool: &str) -> anyhow::Result<ClosedCell> {
    let completed = at.u64("completed")?;
    let failed = at.opt_u64("failed")?.unwrap_or(0);
    let sent = at
        .opt_u64("num_prompts")?
        .filter(|_| at.opt_str("mode").ok().flatten() != Some("multi_turn"))
        .unwrap_or(0)
        .max(completed + failed);
    let in_flight = in_flight(at, sent)?;
    let cap = match in_flight {
        InFlight::Bounded(n) | InFlight::Conversations(n) => Some(n),
        InFlight::AllAtOnce(_) => None,
    };
    measured_cell(at, tool, Some(in_flight), cap)
}

/// A decode cell with the warnings of what it could not read.
struct ClosedCell {
    cell: DecodeCell,
    warnings: Vec<String>,
}

/// The figures of a burst result as a decode cell of `in_flight` (`None`:
/// paced, the cell a carrier of its figures); `cap` is the most requests
/// the tool let be in flight, if it had a limit.
fn measured_cell(
    at: &At,
    tool: &str,
    in_flight: Option<InFlight>,
    cap: Option<u32>,
) -> anyhow::Result<ClosedCell> {
    let completed = at.u64("completed")?;
    let failed = at.opt_u64("failed")?.unwrap_or(0);
    let sent = at
        .opt_u64("num_prompts")?
        .filter(|_| at.opt_str("mode").ok().flatten() != Some("multi_turn"))
        .unwrap_or(0)
        .max(completed + failed);
    let concurrency = in_flight.map_or(1, InFlight::n);
    let duration = at.f64("duration")?;
    let mut definitions = definitions();
    let mut warnings = Vec::new();

    if completed == 0 {
        // Nothing came back: the counts are the cell.
        let context = at.opt_u64("random_input_len")?;
        let mut cell = DecodeCell::without_figures(
            context.unwrap_or(0),
            concurrency.max(1),
            Status::Error,
            Some(Reason::of(Part::AllRequestsFailed {
                requests: sent,
                no_prompt_length: context.is_none(),
            })),
        );
        cell.completed_requests = Some(0);
        cell.output_tokens = Some(0);
        cell.measured_s = Some(duration).filter(|d| *d > 0.0);
        cell.measured_by = Some(measured_by(at, tool, definitions));
        return Ok(ClosedCell { cell, warnings });
    }
    if duration.is_nan() || duration <= 0.0 {
        return Err(at.error(format!(
            "duration: expected a number above 0 for a burst that completed {completed} \
             requests, found {duration}"
        )));
    }
    let input_tokens = at.u64("total_input_tokens")?;
    let output_tokens = at.u64("total_output_tokens")?;
    let context_tokens = (input_tokens as f64 / completed as f64).round() as u64;
    let mut cell = counted_cell(
        (context_tokens, concurrency),
        completed,
        failed,
        output_tokens,
        duration,
    );
    // Requests sent that the file counts neither completed nor failed were
    // lost somewhere: the burst's figures leave them out, so not Valid.
    mark_unaccounted(&mut cell, sent, completed, failed);
    const E2E: &[&str] = &["e2el", "e2e_latency", "latency"];
    let ttft = figure_ms(at, "median", &["ttft"])?;
    let tpot = figure_ms(at, "median", &["tpot"])?;
    let itl = figure_ms(at, "median", &["itl"])?;
    let e2e_mean = figure_ms(at, "mean", E2E)?;
    for (stat, names, found, column) in [
        ("median", &["ttft"][..], &ttft, "TTFT"),
        ("median", &["tpot"], &tpot, "per-request tok/s"),
        ("median", &["itl"], &itl, "time between tokens"),
        ("mean", E2E, &e2e_mean, "requests in flight"),
    ] {
        if found.is_none() {
            let family = names[0];
            let keys = keys_of_family(at, family);
            let place = format!("{}: {}", at.file.display(), at.path_or_top());
            let wanted: Vec<String> = names
                .iter()
                .flat_map(|n| [format!("{stat}_{n}_ms"), format!("{stat}_{n}_s")])
                .collect();
            let others = match keys.as_slice() {
                [] => String::new(),
                k => format!(" (found {}: another statistic or unit)", k.join(", ")),
            };
            warnings.push(format!(
                "{place}: no {}: {column} left empty{others}",
                crate::model::format::or_list(&wanted)
            ));
        }
    }
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(output_tokens as f64 / duration);
        cell.per_request_tok_per_s = tpot
            .as_ref()
            .map(|(t, _)| *t)
            .filter(|t| *t > 0.0)
            .map(|t| 1000.0 / t);
        cell.ttft_median_ms = ttft.as_ref().map(|(t, _)| *t);
        cell.tbt_median_ms = itl.as_ref().map(|(t, _)| *t);
        cell.latency = latency(at, completed)?.map(Box::new);
        cell.avg_active_requests = e2e_mean
            .as_ref()
            .map(|(e2e_ms, _)| e2e_ms / 1000.0 * completed as f64 / duration);
        for (column, found) in [("ttft_ms", &ttft), ("per_request_tok_per_s", &tpot)] {
            if let Some((_, key)) = found
                && !key.ends_with("_ms")
            {
                definitions
                    .entry(column.to_string())
                    .and_modify(|d| d.push_str(&format!("; read from `{key}`, in seconds")));
            }
        }
        if let (Some(cap), Some(mean)) = (
            cap,
            cell.avg_active_requests
                .or_else(|| per_request_latency_sum_s(at.value).map(|sum| sum / duration)),
        ) {
            refuse_beyond_cap(at, cap, mean)?;
        }
        if let Some(in_flight) = in_flight
            && let Some(why) = queued(at, in_flight)?
        {
            cell.status = Status::RequestsQueued;
            cell.reason = Some(Reason::of(why));
        } else if let Some(InFlight::AllAtOnce(_)) = in_flight {
            definitions.insert(
                "status".into(),
                "a burst sent all at once whose file records neither per-request times nor the \
                 server's limit: whether the server ran every request at once is not known, so \
                 it is not marked Requests queued"
                    .into(),
            );
        }
    }
    let in_flight_definition = match in_flight {
        None | Some(InFlight::Bounded(_)) => None,
        Some(InFlight::Conversations(_)) => Some(
            "conversations at once, each sending its turns one after another (multi-turn \
             mode); later turns resend the history, so their prompts are mostly cached",
        ),
        Some(InFlight::AllAtOnce(_)) => {
            Some("a burst sent all at once (infinite rate, no limit) is filed at all its requests")
        }
    };
    if let Some(d) = in_flight_definition {
        definitions.insert("concurrency".into(), d.into());
    }
    cell.measured_by = Some(measured_by(at, tool, definitions));
    Ok(ClosedCell { cell, warnings })
}

/// Refuses a result whose requests were, on average, more in flight than
/// its cap allows. The sum of the completed requests' latencies over the
/// duration is the mean number in flight (Little's law), which a cap of N
/// bounds by N at every instant; a file above it is not one client's
/// measurement (typically several clients' results merged: throughputs
/// summed, latencies averaged). 2% is left for the rounding of the figures.
fn refuse_beyond_cap(at: &At, cap: u32, mean_in_flight: f64) -> anyhow::Result<()> {
    if mean_in_flight <= f64::from(cap) * 1.02 {
        return Ok(());
    }
    let merged = at
        .opt_u64("max_concurrent_requests")?
        .filter(|peak| *peak > u64::from(cap))
        .map_or(String::new(), |peak| {
            format!(" (it also says max_concurrent_requests {peak})")
        });
    Err(at.error(format!(
        "max_concurrency {cap}, but its requests were {mean_in_flight:.1} in flight on average \
         (mean end-to-end latency × completed / duration, Little's law){merged}: more than one \
         client capped at {cap} can keep in flight. Such a file is usually several clients' \
         results merged into one (throughputs summed, latencies averaged); import each \
         client's own result file"
    )))
}

/// The percentiles the file states of TTFT, TPOT, ITL and end-to-end
/// latency (`median_*`/`p50_*`, `p90_*`, `p95_*`, `p99_*`, whichever
/// `--metric-percentiles` asked for), over its completed requests. A
/// percentile the file lacks stays absent.
fn latency(at: &At, completed: u64) -> anyhow::Result<Option<Latency>> {
    let of = |names: &[&str]| -> anyhow::Result<Option<Quantiles>> {
        let get = |stat: &str| -> anyhow::Result<Option<f64>> {
            Ok(figure_ms(at, stat, names)?.map(|(v, _)| v))
        };
        // The median is `median_*` whatever the percentiles asked.
        Quantiles::read(Some(completed), |p| match p {
            "p50" => match get("median")? {
                Some(v) => Ok(Some(v)),
                None => get("p50"),
            },
            p => get(p),
        })
    };
    Ok(Latency {
        ttft_ms: of(&["ttft"])?,
        tpot_ms: of(&["tpot"])?,
        tbt_ms: of(&["itl"])?,
        e2e_ms: of(&["e2el", "e2e_latency", "latency"])?,
    }
    .known())
}

fn measured_by(at: &At, tool: &str, definitions: BTreeMap<String, String>) -> MeasuredBy {
    MeasuredBy {
        tool: tool.to_string(),
        definitions,
        raw: raw_without_per_request_lists(at.value),
    }
}

/// Why a burst's requests did not all run at once, when its file shows it:
/// the server's own limit below N, or (requests sent all at once) one that
/// got its first token only after another had finished.
fn queued(at: &At, in_flight: InFlight) -> anyhow::Result<Option<Part>> {
    let n = in_flight.n();
    if let Some((limit, key)) = server_limit(at)
        && u64::from(n) > limit
    {
        return Ok(Some(Part::ServerLimit {
            limit,
            key,
            in_flight: n,
        }));
    }
    let InFlight::AllAtOnce(n) = in_flight else {
        return Ok(None);
    };
    if let Some((late, first_token_s, shortest_s)) = per_request_evidence(at.value) {
        return Ok(Some(Part::FirstTokenLate {
            late: late as u64,
            requests: n,
            first_token_s,
            shortest_s,
        }));
    }
    let p99_ttft = figure_ms(at, "p99", &["ttft"])?;
    let median_e2e = figure_ms(at, "median", &["e2el", "e2e_latency", "latency"])?;
    if let (Some((ttft, _)), Some((e2e, _))) = (p99_ttft, median_e2e)
        && ttft > e2e
    {
        return Ok(Some(Part::TtftOverLatency {
            p99_ttft_ms: ttft,
            median_latency_ms: e2e,
            requests: n,
        }));
    }
    Ok(None)
}

/// The server's limit of running requests where the file recorded it
/// (SGLang's `server_info`).
fn server_limit(at: &At) -> Option<(u64, String)> {
    let limit = server_info(at)?.first_child(&[
        "max_running_requests",
        "internal_states.0.max_running_requests",
    ])?;
    Some((limit.value.as_u64()?, limit.path))
}

/// SGLang's `server_info`; behind the PD router it is the first decode
/// server's.
pub fn server_info<'a>(at: &At<'a>) -> Option<At<'a>> {
    let info = at.child("server_info")?;
    match info.child("decode").and_then(|d| d.element(0)) {
        Some(decode) => Some(decode),
        None => Some(info),
    }
}

/// From the per-request lists of a detailed result (`ttfts`, and
/// `latencies` or `itls`, in seconds): how many requests got their first
/// token after the shortest request had already finished, the earliest such
/// first token, and that shortest latency.
fn per_request_evidence(record: &Value) -> Option<(usize, f64, f64)> {
    let ttfts: Vec<f64> = record
        .get("ttfts")?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect::<Option<_>>()?;
    let latencies: Vec<f64> = match record.get("latencies").and_then(Value::as_array) {
        Some(l) => l.iter().map(Value::as_f64).collect::<Option<_>>()?,
        None => record
            .get("itls")?
            .as_array()?
            .iter()
            .zip(&ttfts)
            .map(|(itls, ttft)| {
                let gaps: Option<Vec<f64>> = itls.as_array()?.iter().map(Value::as_f64).collect();
                Some(ttft + gaps?.iter().sum::<f64>())
            })
            .collect::<Option<_>>()?,
    };
    // Failed requests are listed with zeros.
    let done: Vec<(f64, f64)> = ttfts
        .into_iter()
        .zip(latencies)
        .filter(|(t, l)| *t > 0.0 && *l > 0.0)
        .collect();
    let shortest = done.iter().map(|(_, l)| *l).fold(f64::INFINITY, f64::min);
    let late: Vec<f64> = done
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| *t > shortest)
        .collect();
    let first = late.iter().copied().fold(f64::INFINITY, f64::min);
    (!late.is_empty()).then_some((late.len(), first, shortest))
}

/// The sum of the completed requests' latencies in seconds, from the
/// per-request lists of a detailed result (`latencies`, or `ttfts` plus
/// each request's `itls`); failed requests, listed with zeros, add nothing.
fn per_request_latency_sum_s(record: &Value) -> Option<f64> {
    let numbers =
        |v: &Value| -> Option<Vec<f64>> { v.as_array()?.iter().map(Value::as_f64).collect() };
    if let Some(latencies) = record.get("latencies").and_then(numbers) {
        return Some(latencies.iter().sum());
    }
    let ttfts = numbers(record.get("ttfts")?)?;
    let itls = record.get("itls")?.as_array()?;
    (ttfts.len() == itls.len()).then_some(())?;
    ttfts
        .iter()
        .zip(itls)
        .map(|(t, gaps)| Some(t + numbers(gaps)?.iter().sum::<f64>()))
        .sum()
}

/// A burst's decode cell at (context, concurrency) with its counts: Error,
/// without figures, when any request failed; else Valid, for the caller to
/// fill its figures in.
pub(crate) fn counted_cell(
    (context_tokens, concurrency): (u64, u32),
    completed: u64,
    failed: u64,
    output_tokens: u64,
    duration_s: f64,
) -> DecodeCell {
    let mut cell = DecodeCell::without_figures(context_tokens, concurrency, Status::Valid, None);
    cell.completed_requests = Some(completed);
    cell.output_tokens = Some(output_tokens);
    cell.measured_s = Some(duration_s);
    if failed > 0 {
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::RequestsFailed {
            failed,
            requests: Some(completed + failed),
            first: None,
            error_codes: None,
            kinds: Vec::new(),
        }));
    }
    cell
}

/// Requests sent that a file counts neither completed nor failed were lost
/// somewhere: the figures leave them out, so the cell is not Valid, and its
/// reason names them (after any other part of it).
pub(crate) fn mark_unaccounted(cell: &mut DecodeCell, sent: u64, completed: u64, failed: u64) {
    if sent <= completed + failed {
        return;
    }
    cell.status = Status::Error;
    let part = Part::RequestsUnaccounted {
        unaccounted: sent - completed - failed,
        requests: sent,
        completed,
        failed,
    };
    cell.reason = Some(match cell.reason.take() {
        Some(Reason::Coded(mut parts)) => {
            parts.push(part);
            Reason::Coded(parts)
        }
        _ => Reason::of(part),
    });
}

/// The result as the file had it, less the per-request lists a detailed run
/// saves (`ttfts`, `itls`, `generated_texts`, ...), which can be megabytes:
/// the summary figures are what the cell keeps.
fn raw_without_per_request_lists(value: &Value) -> Value {
    let mut raw = value.clone();
    if let Some(map) = raw.as_object_mut() {
        map.retain(|_, v| !matches!(v, Value::Array(a) if a.len() > 16));
    }
    crate::model::redact::redact_json(&mut raw);
    raw
}

/// The engine a result's `backend` names, when it names one (not a client
/// protocol such as "openai").
pub(crate) fn engine_of_backend(backend: &str) -> Option<&'static str> {
    match backend {
        "vllm" | "vllm-chat" => Some("vllm"),
        "sglang" | "sglang-native" | "sglang-oai" | "sglang-oai-chat" => Some("sglang"),
        "tgi" => Some("tgi"),
        "lmdeploy" | "lmdeploy-chat" => Some("lmdeploy"),
        "llama.cpp" | "llamacpp" => Some("llama.cpp"),
        _ => None,
    }
}

/// "Qwen3-8B" for "Qwen/Qwen3-8B": the display name of a served model. A
/// Hugging Face cache path (".../models--openai--gpt-oss-120b/snapshots/
/// b5c9.../") names its model in the `models--ORG--NAME` folder, not in its
/// last part (a snapshot's hash).
pub(crate) fn model_display_name(model_id: &str) -> &str {
    if let Some(name) = model_id
        .split('/')
        .filter_map(|part| part.strip_prefix("models--"))
        .filter_map(|rest| rest.split_once("--").map(|(_, name)| name))
        .find(|name| !name.is_empty())
    {
        return name;
    }
    model_id
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(model_id)
}

/// Sets the served model a file names and its display name.
pub(crate) fn set_model(meta: &mut Value, model_id: &str) {
    meta["model"] = Value::from(model_display_name(model_id));
    meta["served_model"] = Value::from(model_id);
}

/// The partial run.json a burst tool's results say: the model, the engine
/// where the backend or the server names it, the tool, and the test.
pub(crate) fn burst_meta(
    model_id: Option<&str>,
    engine: Option<(&str, Option<&str>)>,
    tool: &str,
    files: &[String],
) -> Value {
    let mut meta = serde_json::json!({
        "run": {
            "decode_test": "request_burst",
            "benchmark_tool": {"name": tool},
        },
        "source": format!("{tool} results: {}", files.join(", ")),
    });
    if let Some(id) = model_id {
        set_model(&mut meta, id);
    }
    if let Some((name, version)) = engine {
        meta["engine"] = serde_json::json!({ "name": name });
        if let Some(v) = version {
            meta["engine"]["version"] = Value::from(v);
        }
    }
    meta
}

/// A cell read at `place` ("results.jsonl: line 5"), with the settings
/// it was measured at (for repeats: see [`cells_of`]).
pub(crate) struct ReadCell {
    pub place: String,
    pub cell: DecodeCell,
    /// What the tool says of how the cell was measured, figures left out;
    /// null when the file does not let repeats be told from other settings.
    pub settings: Value,
}

pub(crate) fn push_unique(
    cells: &mut Vec<ReadCell>,
    place: String,
    cell: DecodeCell,
    settings: Value,
) -> anyhow::Result<()> {
    cells.push(ReadCell {
        place,
        cell,
        settings,
    });
    Ok(())
}

/// A result's settings: its fields other than figures, per-request arrays
/// and repeat numbers.
pub(crate) fn settings_of(record: &Value) -> Value {
    match record.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| {
                    !REPEAT_MARKERS.contains(&k.as_str()) && !is_figure_key(k) && !v.is_array()
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// Keys that number or time the repeats of a setting, not the setting.
const REPEAT_MARKERS: &[&str] = &[
    "date",
    "timestamp",
    "run_number",
    "iteration",
    "start_time",
    "end_time",
    "label",
];

/// Whether a key of a tool's result holds something measured (which
/// repeats may differ in) rather than a setting: a statistic or a figure.
fn is_figure_key(key: &str) -> bool {
    const STATISTICS: &[&str] = &["mean_", "median_", "std_", "min_", "max_", "total_"];
    const FIGURES: &[&str] = &[
        "throughput",
        "duration",
        "completed",
        "failed",
        "goodput",
        "rtfx",
        "latency",
        "accept_length",
        "concurrency",
    ];
    if key == "max_concurrency" {
        return false;
    }
    STATISTICS.iter().any(|p| key.starts_with(p))
        || key
            .strip_prefix('p')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        || FIGURES.iter().any(|w| key.contains(w))
}

/// The settings two cells differ in ("max_num_seqs: 4 and 8"): none means
/// they are repeats of one setting.
fn setting_differences(a: &Value, b: &Value) -> Vec<String> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let shown = |v: Option<&Value>| v.map_or_else(|| "absent".to_string(), Value::to_string);
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: {} and {}", shown(a.get(k)), shown(b.get(k))))
        .collect()
}

/// The cells of a file (or files): each setting once, one measured again
/// at the same settings combined with its repeats (the median with a
/// t-interval over them, every repeat kept, as `sitegen run --repeat`
/// does). Two results for one cell at different settings are refused,
/// naming both places and what differs.
pub(crate) fn cells_of(cells: Vec<ReadCell>) -> anyhow::Result<Vec<DecodeCell>> {
    let mut groups: Vec<Vec<ReadCell>> = Vec::new();
    for read in cells {
        let same = |g: &&mut Vec<ReadCell>| {
            g[0].cell.context_tokens == read.cell.context_tokens
                && g[0].cell.concurrency == read.cell.concurrency
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.push(read),
            None => groups.push(vec![read]),
        }
    }
    let mut out = Vec::new();
    for mut group in groups {
        if group.len() == 1 {
            out.push(group.remove(0).cell);
            continue;
        }
        let first = &group[0];
        for other in &group[1..] {
            if first.settings.is_null() || other.settings.is_null() {
                anyhow::bail!(
                    "{}: a second result for {} tokens of context at {} requests at once (the first is {}); the file does not say what each was measured at, so sitegen cannot tell a repeat from another setting: import them as runs of their own",
                    other.place,
                    other.cell.context_tokens,
                    other.cell.concurrency,
                    first.place
                );
            }
            let differ = setting_differences(&first.settings, &other.settings);
            if !differ.is_empty() {
                anyhow::bail!(
                    "{}: a second result for {} tokens of context at {} requests at once (the first is {}), not a repeat of it ({}): import each setting as a run of its own",
                    other.place,
                    other.cell.context_tokens,
                    other.cell.concurrency,
                    first.place,
                    differ.join("; ")
                );
            }
        }
        let places: Vec<String> = group.iter().map(|r| r.place.clone()).collect();
        let mut combined = DecodeCell::from_repeats(
            group.into_iter().map(|r| r.cell).collect(),
            "repeats in the file",
        );
        for (r, place) in combined.repeats.iter_mut().zip(places) {
            r.source = Some(place);
        }
        out.push(combined);
    }
    Ok(out)
}

/// The paced points of a file (or files), each read at `place`: two at the
/// same context, rate and cap are refused, naming both places (a repeat of
/// a rate is a run of its own).
pub(crate) fn paced_of(points: Vec<(String, PacedPoint)>) -> anyhow::Result<Vec<PacedPoint>> {
    let mut out: Vec<(String, PacedPoint)> = Vec::new();
    for (place, point) in points {
        if let Some((first, _)) = out.iter().find(|(_, p)| p.key() == point.key()) {
            let cap = point
                .load
                .max_concurrency
                .map_or(String::new(), |n| format!(" capped at {n} in flight"));
            anyhow::bail!(
                "{place}: a second result at {} requests/s{cap} and {} tokens of context (the \
                 first is {first}): sitegen keeps one point per rate; import each as a run of \
                 its own",
                point.load.requested_per_s,
                point.context_tokens
            );
        }
        out.push((place, point));
    }
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn real(rel: &str) -> (std::path::PathBuf, Value) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real")
            .join(rel);
        let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        (path, v)
    }

    fn read(path: &Path, v: &Value) -> anyhow::Result<Burst> {
        burst_cell(&At::root(path, v), "vllm bench serve").map(|b| b.cell)
    }

    fn closed(path: &Path, v: &Value) -> DecodeCell {
        match read(path, v).unwrap() {
            Burst::Closed(c) => c,
            Burst::Paced(p) => panic!("a paced point: {p:?}"),
        }
    }

    /// A real closed-loop vllm bench file with a finite rate put beside its
    /// cap (no real file of both is stored yet): a paced point capped at 2,
    /// not a cell, with the file's figures and Poisson arrivals.
    #[test]
    fn a_finite_rate_makes_a_paced_point_and_says_its_cap() {
        let (path, mut v) = real("vllm-bench/er0080-bench_serve_v0.25.1.json");
        v["request_rate"] = 1.5.into();
        let Burst::Paced(p) = read(&path, &v).unwrap() else {
            panic!("a paced point");
        };
        assert_eq!(p.load.requested_per_s, 1.5);
        assert_eq!(p.load.max_concurrency, Some(2));
        assert_eq!(p.load.arrivals, Arrivals::Poisson);
        let completed = v["completed"].as_f64().unwrap();
        let duration = v["duration"].as_f64().unwrap();
        assert_eq!(p.achieved_per_s, Some(completed / duration));
        assert_eq!(p.sent_requests, v["num_prompts"].as_u64());
        assert_eq!(
            p.peak_in_flight,
            Some(6),
            "max_concurrent_requests, as the tool counts"
        );
        assert_eq!(p.ttft_median_ms, v["median_ttft_ms"].as_f64());
        assert_eq!(p.status, Status::Valid);
        v["burstiness"] = 0.5.into();
        let Burst::Paced(p) = read(&path, &v).unwrap() else {
            panic!()
        };
        assert_eq!(p.load.arrivals, Arrivals::Gamma { burstiness: 0.5 });
        v["request_rate"] = 0.into();
        let err = format!("{:#}", read(&path, &v).unwrap_err());
        assert!(
            err.contains("request_rate: expected a rate above 0"),
            "{err}"
        );
    }

    /// Two clients' results merged into one (completed, tokens and
    /// throughputs summed over the same duration, latencies kept): more in
    /// flight on average than the cap allows, refused. Hand-made from a real
    /// file; the merged file the issue saw is not stored.
    #[test]
    fn more_in_flight_on_average_than_the_cap_is_refused_as_merged_clients() {
        // vLLM's file states the mean latency; SGLang's line, its mean taken
        // out, lists each request's TTFT and gaps.
        let (sweep, v) = real("vllm-bench/er0080-sweep-max_num_seqs=4-run=0.json");
        let lists = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/sglang-bench/benchmaq-qwen35-27b-h100-tp4-dp2-c100.jsonl");
        let text = std::fs::read_to_string(&lists).unwrap();
        let mut line =
            super::super::json::parse_python_json_line(&lists, text.lines().next().unwrap(), 1)
                .unwrap();
        line.as_object_mut().unwrap().remove("mean_e2e_latency_ms");
        for (path, mut v) in [(sweep, v), (lists, line)] {
            let cap = v["max_concurrency"].as_u64().unwrap();
            let duration = v["duration"].as_f64().unwrap();
            let mean = match v["mean_e2el_ms"].as_f64() {
                Some(ms) => ms / 1000.0 * v["completed"].as_f64().unwrap() / duration,
                None => per_request_latency_sum_s(&v).unwrap() / duration,
            };
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(mean <= cap as f64, "{name} is within its cap: {mean}");
            assert_eq!(closed(&path, &v).status, Status::Valid, "{name}");
            for key in [
                "completed",
                "num_prompts",
                "total_input_tokens",
                "total_output_tokens",
            ] {
                if let Some(n) = v[key].as_u64() {
                    v[key] = (n * 2).into();
                }
            }
            // Merged lists: every request twice.
            for key in ["ttfts", "itls", "latencies"] {
                if let Some(list) = v[key].as_array().cloned() {
                    v[key] = list.iter().chain(&list).cloned().collect();
                }
            }
            let err = format!("{:#}", read(&path, &v).unwrap_err());
            assert!(
                err.contains(&format!(
                    "max_concurrency {cap}, but its requests were {:.1} in flight on average",
                    mean * 2.0
                )),
                "{name}: {err}"
            );
            assert!(err.contains("several clients' results merged"), "{err}");
            assert!(err.contains(&name), "{err}");
        }
    }

    /// A real vllm bench file edited to send 3 requests more than it
    /// counts completed, with no `failed` key (no real file shows this yet):
    /// the 3 are named and the cell is not Valid.
    #[test]
    fn requests_neither_completed_nor_failed_are_named_and_not_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/vllm-bench/er0080-bench_serve_v0.25.1.json");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let completed = v["completed"].as_u64().unwrap();
        assert_eq!(closed(&path, &v).status, Status::Valid);
        v["num_prompts"] = (completed + 3).into();
        v.as_object_mut().unwrap().remove("failed");
        let cell = closed(&path, &v);
        assert_eq!(cell.status, Status::Error);
        assert_eq!(
            cell.total_tok_per_s, None,
            "its figures leave 3 requests out"
        );
        assert_eq!(
            cell.reason.unwrap().words(),
            format!(
                "3 of {} requests neither completed nor failed (the file counts {completed} completed and 0 failed)",
                completed + 3
            )
        );
    }

    #[test]
    fn a_model_is_named_from_its_hub_cache_folder_not_its_snapshot_hash() {
        assert_eq!(
            model_display_name(
                "/root/.cache/huggingface/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a/"
            ),
            "gpt-oss-120b"
        );
        assert_eq!(model_display_name("Qwen/Qwen3-8B"), "Qwen3-8B");
        assert_eq!(model_display_name("/models/llama-3-70b/"), "llama-3-70b");
        assert_eq!(model_display_name("gpt-oss-20b"), "gpt-oss-20b");
    }

    #[test]
    fn rates_read_as_infinite_as_each_tool_writes_them() {
        for v in [
            serde_json::json!("inf"),
            serde_json::json!("Infinity"),
            Value::Null,
        ] {
            assert!(infinite_rate(Some(&v)), "{v}");
        }
        assert!(infinite_rate(None));
        assert!(!infinite_rate(Some(&serde_json::json!(4.0))));
    }

    #[test]
    fn figures_are_read_in_ms_whatever_unit_the_key_says() {
        let v =
            serde_json::json!({"median_ttft_ms": 12.5, "median_tpot": 0.02, "median_itl_s": 0.019});
        let at = At::root(Path::new("r.json"), &v);
        assert_eq!(
            figure_ms(&at, "median", &["ttft"]).unwrap().unwrap().0,
            12.5
        );
        assert_eq!(
            figure_ms(&at, "median", &["tpot"]).unwrap().unwrap().0,
            20.0
        );
        assert_eq!(figure_ms(&at, "median", &["itl"]).unwrap().unwrap().0, 19.0);
        assert!(figure_ms(&at, "median", &["e2el"]).unwrap().is_none());
    }

    #[test]
    fn a_request_that_starts_after_another_finished_was_queued() {
        let v = serde_json::json!({"ttfts": [0.01, 0.01, 5.2], "latencies": [5.1, 5.1, 10.3]});
        assert_eq!(per_request_evidence(&v), Some((1, 5.2, 5.1)));
        let all_ran = serde_json::json!({"ttfts": [0.3, 0.4], "latencies": [5.1, 5.2]});
        assert_eq!(per_request_evidence(&all_ran), None);
        // Older files have per-request gaps instead of latencies.
        let itls = serde_json::json!({"ttfts": [0.1, 1.5], "itls": [[0.5, 0.5], [0.5]]});
        assert_eq!(per_request_evidence(&itls), Some((1, 1.5, 1.1)));
    }
}
