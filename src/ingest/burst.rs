//! What `vllm bench serve` and SGLang's `bench_serving` share: each result
//! is one request burst (a number of prompts, at most `max_concurrency` in
//! flight, timed from the first sent to the last finished), with the same
//! figure names (SGLang's script descends from vLLM's).

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::At;
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

/// One decode cell from one burst result. `e2e_mean_key` is the tool's name
/// of the mean end-to-end latency in ms.
pub fn burst_cell(at: At, tool: &str, e2e_mean_key: &str) -> anyhow::Result<DecodeCell> {
    let concurrency = match at.opt_u64("max_concurrency")? {
        Some(n) if n > 0 => {
            u32::try_from(n).map_err(|_| at.error("max_concurrency is too large"))?
        }
        Some(_) | None => {
            let rate = at
                .value
                .get("request_rate")
                .map_or("absent".into(), Value::to_string);
            return Err(at.error(format!(
                "max_concurrency: expected the number of requests kept in flight, found none \
                 (request_rate {rate}): a burst paced by request rate alone has no concurrency \
                 to file it under; run the benchmark with --max-concurrency N"
            )));
        }
    };
    let completed = at.u64("completed")?;
    let failed = at.opt_u64("failed")?.unwrap_or(0);
    let duration = at.positive("duration")?;
    let input_tokens = at.u64("total_input_tokens")?;
    let output_tokens = at.u64("total_output_tokens")?;
    if completed == 0 {
        return Err(at.error("completed: expected at least one completed request, found 0"));
    }
    let context_tokens = (input_tokens as f64 / completed as f64).round() as u64;
    let mut cell = counted_cell(
        (context_tokens, concurrency),
        completed,
        failed,
        output_tokens,
        duration,
    );
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(
            at.opt_f64("output_throughput")?
                .unwrap_or(output_tokens as f64 / duration),
        );
        cell.per_request_tok_per_s = at
            .opt_f64("median_tpot_ms")?
            .filter(|t| *t > 0.0)
            .map(|t| 1000.0 / t);
        cell.ttft_median_ms = at.opt_f64("median_ttft_ms")?;
        cell.tbt_median_ms = at.opt_f64("median_itl_ms")?;
        cell.avg_active_requests = at
            .opt_f64(e2e_mean_key)?
            .map(|e2e_ms| e2e_ms / 1000.0 * completed as f64 / duration);
    }
    cell.measured_by = Some(MeasuredBy {
        tool: tool.to_string(),
        definitions: definitions(),
        raw: raw_without_per_request_lists(at.value),
    });
    Ok(cell)
}

/// A burst's decode cell at (context, concurrency) with its counts: Error,
/// without figures, when any request failed; else Valid, for the caller to
/// fill its figures in.
pub fn counted_cell(
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
        cell.reason = Some(format!(
            "{failed} of {} requests failed",
            completed + failed
        ));
    }
    cell
}

/// The result as the file had it, less the per-request lists a detailed run
/// saves (`ttfts`, `itls`, `generated_texts`, ...), which can be megabytes:
/// the summary figures are what the cell keeps.
fn raw_without_per_request_lists(value: &Value) -> Value {
    let mut raw = value.clone();
    if let Some(map) = raw.as_object_mut() {
        map.retain(|_, v| !matches!(v, Value::Array(a) if a.len() > 16));
    }
    crate::redact::redact_json(&mut raw);
    raw
}

/// The engine a result's `backend` names, when it names one (not a client
/// protocol such as "openai").
pub fn engine_of_backend(backend: &str) -> Option<&'static str> {
    match backend {
        "vllm" => Some("vllm"),
        "sglang" | "sglang-native" | "sglang-oai" => Some("sglang"),
        "tgi" => Some("tgi"),
        "lmdeploy" => Some("lmdeploy"),
        "llama.cpp" | "llamacpp" => Some("llama.cpp"),
        _ => None,
    }
}

/// "Qwen3-8B" for "Qwen/Qwen3-8B": the display name of a served model.
pub fn model_display_name(model_id: &str) -> &str {
    model_id.rsplit('/').next().unwrap_or(model_id)
}

/// The partial run.json a burst tool's results say: the model, the engine
/// where the backend names it, the tool, and the test.
pub fn burst_meta(
    model_id: Option<&str>,
    backend: Option<&str>,
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
        meta["model"] = Value::from(model_display_name(id));
        meta["served_model"] = Value::from(id);
    }
    if let Some(engine) = backend.and_then(engine_of_backend) {
        meta["engine"] = serde_json::json!({ "name": engine });
    }
    meta
}

/// Adds `cell` to `cells` unless a cell with its key is there already, in
/// which case both places are named.
pub fn push_unique(
    cells: &mut Vec<(String, DecodeCell)>,
    place: String,
    cell: DecodeCell,
) -> anyhow::Result<()> {
    if let Some((other, _)) = cells
        .iter()
        .find(|(_, c)| c.context_tokens == cell.context_tokens && c.concurrency == cell.concurrency)
    {
        return Err(anyhow::anyhow!(
            "{place}: a second result for {} tokens of context at {} requests at once (the first is {other}); import them as separate runs",
            cell.context_tokens,
            cell.concurrency
        ));
    }
    cells.push((place, cell));
    Ok(())
}
