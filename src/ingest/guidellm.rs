//! guidellm's `benchmarks.json` or `benchmarks.yaml`: `benchmarks[]`, one per
//! strategy the profile ran (synchronous, concurrent at N streams,
//! throughput), each with `metrics.<name>.<successful|incomplete|...>`
//! distributions. One decode cell per benchmark, at its concurrency;
//! rate-paced benchmarks (constant, poisson) have none and are an error.
//!
//! Two layouts, read alike:
//! - 0.2–0.3: the strategy under `args.strategy`, the counts under
//!   `request_totals` or `run_stats.requests_made`, the model under
//!   `worker.backend_model`; no version recorded.
//! - 0.4 and later: the strategy under `config.strategy`, the counts under
//!   `metrics.request_totals`, the model under `args.model` (0.4–0.6) or
//!   `config.spec.backend.model` (0.7+), the version in
//!   `metadata.guidellm_version`.
//!
//! Output tokens: guidellm's own total counts only the requests that
//! finished, and its benchmarks end at a duration limit, cutting requests off
//! (0.2–0.3 and 0.8) or letting them run past it (0.4–0.7). The tokens the
//! server delivered inside the benchmark's window are counted instead:
//! guidellm's own time-weighted rate over every request
//! (`output_tokens_per_second` of all requests) from 0.4 on; in 0.2–0.3,
//! whose rate counts requests that never started at their requested length,
//! from every request's record when the file keeps all of them.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::Imported;
use super::burst::{cells_of, counted_cell, push_unique, set_model};
use super::file_name;
use super::json::{At, parse_python_json, parse_yaml};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{DecodeCell, MeasuredBy, Status};

pub(crate) const TOOL: &str = "guidellm";

pub const IMPORTER: super::Importer = super::Importer {
    name: "guidellm",
    detect: |s| s.json().is_some_and(looks_like),
    one_run_from_all_files: false,
    read: |inputs, _| parse(&inputs[0].0, &inputs[0].1),
};

pub(crate) fn looks_like(value: &Value) -> bool {
    value
        .get("benchmarks")
        .and_then(Value::as_array)
        .and_then(|b| b.first())
        .is_some_and(|b| b.get("metrics").is_some())
}

/// The file's text as a JSON value: guidellm writes JSON or YAML.
pub(crate) fn parse_value(file: &Path, text: &str) -> anyhow::Result<Value> {
    if text.trim_start().starts_with('{') {
        parse_python_json(file, text)
    } else {
        parse_yaml(file, text)
    }
}

/// "guidellm 0.8.1", or the layout when the file has no version.
pub fn layout(value: &Value) -> String {
    match value
        .get("metadata")
        .and_then(|m| m.get("guidellm_version"))
        .and_then(Value::as_str)
    {
        Some(v) => format!("guidellm {v}"),
        None => "guidellm 0.2–0.3 layout (no version recorded)".into(),
    }
}

fn definitions(tokens: &TokenCount) -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            "mean prompt tokens of the successful requests".to_string(),
        ),
        ("total_tok_per_s", tokens.definition()),
        (
            "per_request_tok_per_s",
            "1000 / the median inter-token latency".to_string(),
        ),
        (
            "ttft_ms",
            "median over the successful requests; the prompt cache is not warmed first".to_string(),
        ),
        (
            "tbt_ms",
            "median over requests of each request's mean time per token after the first \
             ((latency − TTFT) / (output tokens − 1)), not the median of all gaps"
                .to_string(),
        ),
        (
            "avg_active_requests",
            "guidellm's mean request concurrency".to_string(),
        ),
        (
            "measured_s",
            "the benchmark's duration, not a fixed window".to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub fn parse(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let value = parse_value(file, text)?;
    if !value.is_object() {
        anyhow::bail!(
            "{}: expected a guidellm benchmarks report (an object with benchmarks)",
            file.display()
        );
    }
    let root = At::root(file, &value);
    let layout = layout(&value);
    let benchmarks = root
        .child("benchmarks")
        .filter(|b| b.value.is_array())
        .ok_or_else(|| {
            root.error(format!(
                "{layout}: expected a benchmarks list, found {}",
                root.keys()
            ))
        })?
        .elements();
    if benchmarks.is_empty() {
        return Err(root.error("benchmarks: expected at least one benchmark, found none"));
    }
    let mut cells = Vec::new();
    let mut warnings = Vec::new();
    let mut started: Option<f64> = None;
    for at in &benchmarks {
        let cell = benchmark_cell(at, &layout, &mut warnings)?;
        if let Some(t) = at.f64_at("start_time") {
            started = Some(started.map_or(t, |s| s.min(t)));
        }
        // guidellm's benchmarks of one run differ by strategy, not by repeat.
        push_unique(&mut cells, at.path.clone(), cell, Value::Null)?;
    }
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} report: {}", file_name(file)),
    });
    if let Some(v) = root.str_at("metadata.guidellm_version") {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v);
    }
    // Unix seconds: a time with no doubt about its zone.
    if let Some(t) = started.filter(|t| *t > 0.0) {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t as u64);
        meta["measured_at"] = Value::from(humantime::format_rfc3339_seconds(at).to_string());
    }
    let model = root
        .first_child(&[
            "args.model",
            "config.spec.backend.model",
            "config.backend.model",
        ])
        .or_else(|| {
            benchmarks.iter().find_map(|b| {
                b.first_child(&[
                    "worker.backend_model",
                    "config.backend_model",
                    "args.backend_model",
                ])
            })
        })
        .and_then(|m| m.value.as_str().map(str::to_string));
    if let Some(m) = &model {
        set_model(&mut meta, m);
    }
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layout);
    imported.warnings = warnings;
    Ok(imported)
}

fn concurrency(at: &At, layout: &str) -> anyhow::Result<u32> {
    let Some(s) = at.first_child(&["config.strategy", "args.strategy", "strategy"]) else {
        return Err(at.error(format!(
            "{layout}: expected the benchmark's strategy under config.strategy (0.4 and later) \
             or args.strategy (0.2–0.3), found neither; the benchmark holds {}",
            at.keys()
        )));
    };
    let kind = s.str_at("type_").unwrap_or("");
    let n = match kind {
        "synchronous" => Some(1),
        "concurrent" => s.value.get("streams").and_then(Value::as_u64),
        "throughput" => s.value.get("max_concurrency").and_then(Value::as_u64),
        _ => None,
    };
    match n {
        Some(n) if n > 0 => u32::try_from(n).map_err(|_| s.error("too many streams")),
        _ if kind == "throughput" => Err(s.error(
            "a throughput benchmark without max_concurrency sends requests as fast as \
             guidellm's workers allow, so no number of requests in flight defines it; run \
             it as --profile concurrent, or throughput with a max concurrency",
        )),
        _ => Err(s.error(format!(
            "expected a synchronous, concurrent (streams) or throughput (max_concurrency) \
             strategy, found {}: a benchmark paced by request rate has no concurrency to \
             file it under",
            if kind.is_empty() { "none" } else { kind }
        ))),
    }
}

/// `metrics.<name>.<group>` ("successful", "incomplete", "total"), located.
fn distribution<'a>(at: &At<'a>, name: &str, group: &str) -> Option<At<'a>> {
    at.child(&format!("metrics.{name}.{group}"))
}

fn successful<'a>(at: &At<'a>, name: &str) -> anyhow::Result<At<'a>> {
    distribution(at, name, "successful").ok_or_else(|| {
        anyhow::anyhow!(
            "{}: {}.metrics.{name}.successful: expected guidellm's distribution of {name}, found nothing",
            at.file.display(),
            at.path
        )
    })
}

/// How a benchmark's output tokens were counted.
enum TokenCount {
    /// From every request's record: tokens inside the window.
    Records(f64),
    /// guidellm's time-weighted rate over every request.
    Rate(f64),
    /// The successful requests' tokens only: the file has nothing better.
    SuccessfulOnly(f64),
}

impl TokenCount {
    fn definition(&self) -> String {
        match self {
            TokenCount::Records(_) => "output tokens the server delivered inside the \
                 benchmark (start to end), counted from every request's record — finished, cut \
                 off and failed alike, each request's tokens spread evenly from its first token \
                 to its last — / the benchmark's duration (guidellm 0.2–0.3 loses the times of \
                 some requests cut off at the end, whose tokens are then left out); guidellm's \
                 own total counts the finished requests only"
                .into(),
            TokenCount::Rate(_) => "guidellm's time-weighted output tokens per second over \
                 every request of the benchmark, finished or cut off \
                 (metrics.output_tokens_per_second, all requests); guidellm's own total \
                 counts the finished requests only"
                .into(),
            TokenCount::SuccessfulOnly(_) => "output tokens of the successful requests / the \
                 benchmark's duration: the file keeps neither every request nor a rate over \
                 all of them, so tokens of requests cut off at the end are left out"
                .into(),
        }
    }
}

/// Output tokens of one request's record: (tokens, first token, last
/// token), times in Unix seconds; `None` when it never got a token.
fn request_tokens(r: &Value) -> Option<(f64, f64, f64)> {
    let num = |v: Option<&Value>| v.and_then(Value::as_f64);
    let timings = r.get("info").and_then(|i| i.get("timings"));
    let first = num(r.get("first_token_time"))
        .or_else(|| num(timings.and_then(|t| t.get("first_token_iteration"))))?;
    let last = num(r.get("last_token_time"))
        .or_else(|| num(timings.and_then(|t| t.get("last_token_iteration"))))
        .unwrap_or(first);
    let tokens = num(r.get("output_tokens"))
        .or_else(|| num(r.get("output_metrics").and_then(|m| m.get("text_tokens"))))?;
    Some((tokens, first, last))
}

/// Tokens of a request inside [start, end]: its first token at `first`, the
/// rest spread evenly over (first, last].
fn tokens_inside((tokens, first, last): (f64, f64, f64), (start, end): (f64, f64)) -> f64 {
    let first_in = if (start..=end).contains(&first) {
        1.0
    } else {
        0.0
    };
    if tokens <= 1.0 || last <= first {
        return tokens * first_in;
    }
    let overlap = (last.min(end) - first.max(start)).max(0.0);
    first_in + (tokens - 1.0) * overlap / (last - first)
}

/// The tokens delivered in the window from every request's record, when the
/// file keeps a record of every request it counts.
fn from_records(at: &At, counted: u64, window: (f64, f64)) -> Option<f64> {
    let requests = at.value.get("requests")?;
    let groups: Vec<&Value> = ["successful", "incomplete", "errored"]
        .iter()
        .filter_map(|g| requests.get(g).and_then(Value::as_array))
        .flatten()
        .collect();
    if groups.is_empty() || groups.len() as u64 != counted {
        return None;
    }
    Some(
        groups
            .iter()
            .filter_map(|r| request_tokens(r))
            .map(|r| tokens_inside(r, window))
            .sum(),
    )
}

/// The percentiles a distribution states (`percentiles.p50`, or its
/// `median`, `p90`, `p95`, `p99`), times `scale`, over `requests`.
fn quantiles(d: &At, scale: f64, requests: u64) -> anyhow::Result<Option<Quantiles>> {
    let p = d.child("percentiles");
    let get = |key: &str| -> anyhow::Result<Option<f64>> {
        Ok(match &p {
            Some(p) => p.opt_f64(key)?.map(|v| v * scale),
            None => None,
        })
    };
    Quantiles::read(Some(requests), |key| match get(key)? {
        // guidellm 0.2 states the median as `median`, not `percentiles.p50`.
        None if key == "p50" => Ok(d.opt_f64("median")?.map(|v| v * scale)),
        v => Ok(v),
    })
}

/// The latencies guidellm states of the `ok` successful requests, and how
/// they were put in the cell, for its definitions.
fn latency(at: &At, ok: u64) -> anyhow::Result<Option<(Latency, String)>> {
    if ok == 0 {
        return Ok(None);
    }
    let of = |name: &str, scale: f64| -> anyhow::Result<Option<Quantiles>> {
        match distribution(at, name, "successful") {
            Some(d) => quantiles(&d, scale, ok),
            None => Ok(None),
        }
    };
    let Some(latency) = Latency {
        ttft_ms: of("time_to_first_token_ms", 1.0)?,
        tpot_ms: of("inter_token_latency_ms", 1.0)?,
        tbt_ms: None,
        // In seconds.
        e2e_ms: of("request_latency", 1000.0)?,
    }
    .known() else {
        return Ok(None);
    };
    // guidellm 0.2 to 0.8 weight each request's value by its output tokens
    // − 1; from 0.4 on the distribution's count is the sum of the weights.
    let counted = distribution(at, "inter_token_latency_ms", "successful")
        .and_then(|d| d.f64_at("count"))
        .filter(|n| *n > ok as f64)
        .map_or_else(String::new, |n| {
            format!("; this file's distribution counts {n} values for {ok} requests")
        });
    let weighted = format!(
        " (guidellm weights each request's value by its output tokens − 1, so the percentiles \
         are taken over the gaps between tokens, a longer request counting more{counted})"
    );
    let definition = format!(
        "guidellm's percentiles over the successful requests (metrics.<name>.successful, p50 \
         or its median): time_to_first_token_ms → ttft_ms, the prompt cache not warmed first; \
         inter_token_latency_ms, each request's (latency − TTFT) / (output tokens − 1), → \
         tpot_ms{weighted}; request_latency (seconds) → e2e_ms. Not carried: \
         time_per_output_token_ms, a request's latency / its output tokens with TTFT included, \
         which is not a time per output token after the first; guidellm states no gap between \
         tokens or chunks, so tbt_ms is absent"
    );
    Ok(Some((latency, definition)))
}

fn benchmark_cell(at: &At, layout: &str, warnings: &mut Vec<String>) -> anyhow::Result<DecodeCell> {
    let concurrency = concurrency(at, layout)?;
    let totals = at
        .first_child(&[
            "metrics.request_totals",
            "request_totals",
            "run_stats.requests_made",
        ])
        .ok_or_else(|| {
            at.error(format!(
                "{layout}: expected the request counts under metrics.request_totals (0.4 and \
                 later) or request_totals / run_stats.requests_made (0.2–0.3), found none; the \
                 benchmark holds {}",
                at.keys()
            ))
        })?;
    let ok = totals.u64("successful")?;
    let errored = totals.opt_u64("errored")?.unwrap_or(0);
    let incomplete = totals.opt_u64("incomplete")?.unwrap_or(0);
    let (start, end) = (at.f64("start_time")?, at.f64("end_time")?);
    let duration = end - start;
    if duration.is_nan() || duration <= 0.0 {
        return Err(at.error(format!(
            "end_time: expected a time after start_time, found a duration of {duration} s"
        )));
    }
    let prompt = successful(at, "prompt_token_count")?;
    let output = successful(at, "output_token_count")?;
    let ttft = successful(at, "time_to_first_token_ms")?;
    let itl = successful(at, "inter_token_latency_ms")?;
    let in_flight = successful(at, "request_concurrency").ok();
    let successful_tokens = output.f64("total_sum")?;
    // 0.4 and later: guidellm's own rate over every request is right (checked
    // against an engine's token log). 0.2–0.3: that rate counts requests that
    // never started at their requested length, so the records are summed.
    let rate = distribution(at, "output_tokens_per_second", "total")
        .and_then(|d| d.f64_at("mean"))
        .filter(|r| r.is_finite() && *r >= 0.0);
    let records = || from_records(at, ok + errored + incomplete, (start, end));
    let tokens = match (at.child("config.strategy").is_some(), rate) {
        (true, Some(rate)) => TokenCount::Rate(rate),
        (false, _) if let Some(tokens) = records() => TokenCount::Records(tokens),
        (_, Some(rate)) => TokenCount::Rate(rate),
        (_, None) => TokenCount::SuccessfulOnly(successful_tokens),
    };
    let place = format!("{}: {}", at.file.display(), at.path);
    if rate.is_none() && at.child("config.strategy").is_some() {
        warnings.push(format!(
            "{place}: no metrics.output_tokens_per_second (all requests): total tok/s counted {}",
            match tokens {
                TokenCount::Records(_) => "from the requests' records",
                _ => "from the successful requests only",
            }
        ));
    }
    if in_flight.is_none() {
        warnings.push(format!(
            "{place}: no metrics.request_concurrency: requests in flight left empty"
        ));
    }
    let total_tok_per_s = match tokens {
        TokenCount::Records(tokens) | TokenCount::SuccessfulOnly(tokens) => tokens / duration,
        TokenCount::Rate(rate) => rate,
    };
    let mut cell = if ok == 0 {
        let mut cell = DecodeCell::without_figures(
            prompt.opt_f64("mean")?.unwrap_or(0.0).round() as u64,
            concurrency,
            Status::Error,
            Some(Reason::of(Part::NoneSucceeded {
                failed: errored,
                incomplete,
            })),
        );
        cell.completed_requests = Some(0);
        cell.measured_s = Some(duration);
        cell
    } else {
        let context_tokens = prompt.f64("mean")?.round() as u64;
        counted_cell(
            (context_tokens, concurrency),
            ok,
            errored,
            (total_tok_per_s * duration).round() as u64,
            duration,
        )
    };
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(total_tok_per_s);
        let itl_median = itl.opt_f64("median")?;
        cell.tbt_median_ms = itl_median;
        cell.per_request_tok_per_s = itl_median.filter(|t| *t > 0.0).map(|t| 1000.0 / t);
        cell.ttft_median_ms = ttft.opt_f64("median")?;
        // guidellm's own percentiles across requests (its std_dev and the
        // rest stay in the raw record).
        // (Its p50 is the median, which some files keep only as "median".)
        let percentiles = |d: &At| -> anyhow::Result<Option<crate::model::Spread>> {
            let Some(p) = d.child("percentiles") else {
                return Ok(None);
            };
            Ok(
                match (
                    p.opt_f64("p10")?,
                    p.opt_f64("p50")?.or(d.opt_f64("median")?),
                    p.opt_f64("p90")?,
                ) {
                    (Some(p10), Some(p50), Some(p90)) => {
                        Some(crate::model::Spread { p10, p50, p90 })
                    }
                    _ => None,
                },
            )
        };
        let tbt = percentiles(&itl)?;
        cell.spread = crate::model::CellSpread {
            ttft_ms: percentiles(&ttft)?,
            tbt_ms: tbt,
            // A rate is 1000 / the latency: its p10 is the latency's p90.
            per_request_tok_per_s: tbt.filter(|s| s.p10 > 0.0).map(|s| crate::model::Spread {
                p10: 1000.0 / s.p90,
                p50: 1000.0 / s.p50,
                p90: 1000.0 / s.p10,
            }),
        }
        .known()
        .map(Box::new);
        cell.avg_active_requests = match in_flight {
            Some(c) => c.opt_f64("mean")?,
            None => None,
        };
    }
    let mut raw = at.value.clone();
    if let Some(map) = raw.as_object_mut() {
        // Every request's record: megabytes, and not a figure of the cell.
        map.remove("requests");
    }
    crate::model::redact::redact_json(&mut raw);
    let mut definitions = definitions(&tokens);
    // What the file states, whatever the cell's status.
    if let Some((latency, definition)) = latency(at, ok)? {
        cell.latency = Some(Box::new(latency));
        definitions.insert("latency".into(), definition);
    }
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.to_string(),
        definitions,
        raw,
    });
    Ok(cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_counts_the_tokens_it_delivered_inside_the_window() {
        // 101 tokens from t=10 to t=20: the first at 10, 100 spread over (10, 20].
        let r = (101.0, 10.0, 20.0);
        assert_eq!(tokens_inside(r, (0.0, 30.0)), 101.0);
        assert_eq!(tokens_inside(r, (0.0, 15.0)), 51.0);
        assert_eq!(tokens_inside(r, (15.0, 30.0)), 50.0);
        assert_eq!(tokens_inside(r, (21.0, 30.0)), 0.0);
        assert_eq!(tokens_inside((1.0, 5.0, 5.0), (0.0, 8.0)), 1.0);
    }
}
