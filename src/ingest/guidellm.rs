//! guidellm's `benchmarks.json`: `benchmarks[]`, one per strategy the
//! profile ran (synchronous, concurrent at N streams, throughput), each
//! with `metrics.<name>.successful` distributions. One decode cell per
//! benchmark, at its concurrency; rate-paced benchmarks (constant, poisson)
//! have none and are an error.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::Imported;
use super::burst::{counted_cell, model_display_name, push_unique};
use super::file_name;
use super::json::{At, element_path, expect_object, parse_python_json};
use crate::model::{Cell, DecodeCell, MeasuredBy, Status};

pub const TOOL: &str = "guidellm";

pub fn looks_like(value: &Value) -> bool {
    value
        .get("benchmarks")
        .and_then(Value::as_array)
        .and_then(|b| b.first())
        .is_some_and(|b| b.get("metrics").is_some())
}

fn definitions() -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            "mean prompt tokens of the successful requests",
        ),
        (
            "total_tok_per_s",
            "output tokens of the successful requests / the benchmark's duration, from its \
             start to its end: ramp-up and drain are included",
        ),
        (
            "per_request_tok_per_s",
            "1000 / the median inter-token latency",
        ),
        (
            "ttft_ms",
            "median over the successful requests; the prompt cache is not warmed first",
        ),
        (
            "tbt_ms",
            "median over requests of each request's mean time per token after the first \
             ((latency − TTFT) / (output tokens − 1)), not the median of all gaps",
        ),
        ("avg_active_requests", "guidellm's mean request concurrency"),
        ("measured_s", "the benchmark's duration, not a fixed window"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

pub fn parse(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let value = parse_python_json(file, text)?;
    expect_object(file, &value, "a guidellm benchmarks report")?;
    let root = At::root(file, &value);
    let benchmarks = root.array("benchmarks")?;
    if benchmarks.is_empty() {
        return Err(root.error("benchmarks: expected at least one benchmark, found none"));
    }
    let mut cells = Vec::new();
    let mut model = None;
    let mut started: Option<f64> = None;
    for (i, b) in benchmarks.iter().enumerate() {
        let path = element_path("", "benchmarks", i);
        let at = At {
            file,
            path: &path,
            value: b,
        };
        model = model.or_else(|| {
            ["worker", "config", "args"]
                .iter()
                .find_map(|k| b.get(k)?.get("backend_model")?.as_str())
                .map(str::to_string)
        });
        let cell = benchmark_cell(at)?;
        if let Some(t) = b.get("start_time").and_then(Value::as_f64) {
            started = Some(started.map_or(t, |s| s.min(t)));
        }
        push_unique(&mut cells, path.clone(), cell)?;
    }
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} report: {}", file_name(file)),
    });
    if let Some(v) = value
        .get("metadata")
        .and_then(|m| m.get("guidellm_version"))
        .and_then(Value::as_str)
    {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v);
    }
    // Unix seconds: the one format here whose time is unambiguous UTC.
    if let Some(t) = started.filter(|t| *t > 0.0) {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t as u64);
        meta["measured_at"] = Value::from(humantime::format_rfc3339_seconds(at).to_string());
    }
    if let Some(m) = &model {
        meta["model"] = Value::from(model_display_name(m));
        meta["served_model"] = Value::from(m.as_str());
    }
    Ok(Imported {
        meta,
        cells: cells.into_iter().map(|(_, c)| Cell::Decode(c)).collect(),
        notes_markdown: None,
    })
}

/// The strategy of a benchmark: under `args`, `config` or the benchmark
/// itself, depending on guidellm's version.
fn strategy(b: &Value) -> Option<&Value> {
    ["args", "config"]
        .iter()
        .find_map(|k| b.get(k)?.get("strategy"))
        .or_else(|| b.get("strategy"))
}

fn concurrency(at: At) -> anyhow::Result<u32> {
    let Some(s) = strategy(at.value) else {
        return Err(at.error("args.strategy: expected the benchmark's strategy, found nothing"));
    };
    let kind = s.get("type_").and_then(Value::as_str).unwrap_or("");
    let n = match kind {
        "synchronous" => Some(1),
        "concurrent" => s.get("streams").and_then(Value::as_u64),
        "throughput" => s.get("max_concurrency").and_then(Value::as_u64),
        _ => None,
    };
    match n {
        Some(n) if n > 0 => u32::try_from(n).map_err(|_| at.error("strategy: too many streams")),
        _ => Err(at.error(format!(
            "args.strategy: expected a synchronous, concurrent (streams) or throughput \
             (max_concurrency) strategy, found {}: a benchmark paced by request rate has \
             no concurrency to file it under",
            if kind.is_empty() { "none" } else { kind }
        ))),
    }
}

/// `metrics.<name>.successful`, as a located value.
fn successful<'a>(at: At<'a>, name: &str, path: &'a mut String) -> anyhow::Result<At<'a>> {
    *path = format!("{}.metrics.{name}.successful", at.path);
    let value = at
        .value
        .get("metrics")
        .and_then(|m| m.get(name))
        .and_then(|m| m.get("successful"))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: {path}: expected guidellm's distribution of {name}, found nothing",
                at.file.display()
            )
        })?;
    Ok(At {
        file: at.file,
        path,
        value,
    })
}

fn benchmark_cell(at: At) -> anyhow::Result<DecodeCell> {
    let concurrency = concurrency(at)?;
    let totals = at
        .value
        .get("request_totals")
        .or_else(|| {
            at.value
                .get("run_stats")
                .and_then(|r| r.get("requests_made"))
        })
        .ok_or_else(|| at.error("request_totals: expected the request counts, found nothing"))?;
    let totals_path = format!("{}.request_totals", at.path);
    let totals = At {
        file: at.file,
        path: &totals_path,
        value: totals,
    };
    let ok = totals.u64("successful")?;
    let errored = totals.opt_u64("errored")?.unwrap_or(0);
    let (start, end) = (at.f64("start_time")?, at.f64("end_time")?);
    let duration = end - start;
    if duration.is_nan() || duration <= 0.0 {
        return Err(at.error(format!(
            "end_time: expected a time after start_time, found a duration of {duration} s"
        )));
    }
    let (mut p1, mut p2, mut p3, mut p4, mut p5): (String, String, String, String, String) =
        Default::default();
    let prompt = successful(at, "prompt_token_count", &mut p1)?;
    let output = successful(at, "output_token_count", &mut p2)?;
    let ttft = successful(at, "time_to_first_token_ms", &mut p3)?;
    let itl = successful(at, "inter_token_latency_ms", &mut p4)?;
    let in_flight = successful(at, "request_concurrency", &mut p5).ok();
    if ok == 0 {
        return Err(totals.error("successful: expected at least one successful request, found 0"));
    }
    let context_tokens = prompt.f64("mean")?.round() as u64;
    let output_tokens = output.f64("total_sum")?.round() as u64;
    let mut cell = counted_cell(
        (context_tokens, concurrency),
        ok,
        errored,
        output_tokens,
        duration,
    );
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(output_tokens as f64 / duration);
        let itl_median = itl.opt_f64("median")?;
        cell.tbt_median_ms = itl_median;
        cell.per_request_tok_per_s = itl_median.filter(|t| *t > 0.0).map(|t| 1000.0 / t);
        cell.ttft_median_ms = ttft.opt_f64("median")?;
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
    crate::redact::redact_json(&mut raw);
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.to_string(),
        definitions: definitions(),
        raw,
    });
    Ok(cell)
}
