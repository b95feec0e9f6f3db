//! ray-project llmperf's `token_benchmark_ray.py` summaries
//! (`<model>_<in>_<out>_summary.json`): one test of a fixed number of
//! requests (`--max-num-completed-requests`) sent by
//! `num_concurrent_requests` clients, each sending its next request when
//! the last one finished; the summary flattens llmperf's `results` into
//! `results_<metric>_<stat>` keys (`version` "2023-08-31" in every release
//! and fork seen). One file is one decode cell; several files make one run.
//!
//! Traps, from llmperf's source: times are in seconds (`_s`); the output
//! throughput is the completed requests' output tokens / the whole test's
//! duration; llmperf's "inter-token latency" of a request is its time from
//! sending to its last chunk, TTFT included, / its output tokens, so it is
//! about the end-to-end latency per token; output tokens are counted by
//! llmperf's tokenizer from the streamed text; the input tokens' `_min` /
//! `_max` are strings; a test with fewer requests than clients never had
//! `num_concurrent_requests` requests in flight (and a fork that keeps every
//! client sending counts only the first to finish), so it is refused.
//! `*_individual_responses.json` (per-request records written beside the
//! summary) holds neither the concurrency nor the model and is refused,
//! naming the summary to import.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value;

use super::burst::{ReadCell, cells_of, push_unique, set_model};
use super::json::{At, parse_python_json};
use super::{Imported, file_name};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{DecodeCell, MeasuredBy, Status};

pub(crate) const TOOL: &str = "llmperf";

pub const IMPORTER: super::Importer = super::Importer {
    name: "llmperf",
    detect: |s| s.json().is_some_and(|v| looks_like(v) || is_individual(v)),
    one_run_from_all_files: true,
    read: |inputs, _| parse_files(inputs),
};

/// Whether a JSON value is an llmperf summary: llmperf's flattened
/// `results_*` keys and one of its counts (so that a summary missing one key
/// is still recognised, and refused naming it).
pub(crate) fn looks_like(value: &Value) -> bool {
    let Some(m) = value.as_object() else {
        return false;
    };
    m.keys().filter(|k| k.starts_with("results_")).count() >= 3
        && [
            "num_concurrent_requests",
            "results_num_requests_started",
            "results_num_completed_requests",
            "results_mean_output_throughput_token_per_s",
        ]
        .iter()
        .any(|k| m.contains_key(*k))
}

/// Whether a JSON value is llmperf's per-request records.
fn is_individual(value: &Value) -> bool {
    value.as_array().and_then(|a| a.first()).is_some_and(|r| {
        [
            "error_code",
            "ttft_s",
            "end_to_end_latency_s",
            "number_input_tokens",
        ]
        .iter()
        .all(|k| r.get(k).is_some())
    })
}

/// "llmperf summary 2023-08-31".
pub fn layout(value: &Value) -> String {
    match value.get("version").and_then(Value::as_str) {
        Some(v) => format!("llmperf summary {v}"),
        None => "llmperf summary (no version key)".into(),
    }
}

fn definitions(context_measured: bool) -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            if context_measured {
                "mean prompt tokens of the completed requests \
                 (results_number_input_tokens_mean), as llmperf's tokenizer counted the \
                 prompt text it built (without the chat template the server adds); the \
                 requested mean is mean_input_tokens"
            } else {
                "the requested mean prompt tokens (mean_input_tokens): the summary records \
                 no measured mean"
            },
        ),
        (
            "concurrency",
            "num_concurrent_requests: llmperf's clients, each sending its next request when \
             its last one finished, until the test's number of requests is reached; fewer \
             are in flight as the test ends",
        ),
        (
            "total_tok_per_s",
            "results_mean_output_throughput_token_per_s: the completed requests' output \
             tokens (counted by llmperf's tokenizer from the streamed text) / the test's \
             duration, from its first request to the end of its send loop: ramp-up and drain \
             are included",
        ),
        (
            "per_request_tok_per_s",
            "median over the completed requests of output tokens / the request's end-to-end \
             latency, TTFT included (results_request_output_throughput_token_per_s_quantiles_p50)",
        ),
        (
            "ttft_ms",
            "median over the completed requests (results_ttft_s_quantiles_p50 × 1000), from \
             sending to the first streamed content; the prompt cache is not warmed first",
        ),
        (
            "tbt_ms",
            "median over the completed requests of llmperf's inter-token latency \
             (results_inter_token_latency_s_quantiles_p50 × 1000): the request's time from \
             sending to its last chunk, TTFT included, / its output tokens (its streamed \
             chunks in some forks); above the time between tokens by about TTFT / output \
             tokens",
        ),
        (
            "output_tokens",
            "results_number_output_tokens_mean × the completed requests",
        ),
        (
            "measured_s",
            "the test's duration: completed requests / results_num_completed_requests_per_min \
             × 60; not a fixed window",
        ),
        (
            "avg_active_requests",
            "results_end_to_end_latency_s_mean × completed requests / the test's duration \
             (Little's law), not sampled",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The summary written beside a per-request file.
fn summary_beside(file: &Path) -> String {
    let name = file_name(file);
    match name.rsplit_once("_individual_responses") {
        Some((stem, ext)) => format!("{stem}_summary{ext}"),
        None => "the *_summary.json written beside it".into(),
    }
}

pub fn parse_files(files: &[(PathBuf, String)]) -> anyhow::Result<Imported> {
    let mut cells: Vec<ReadCell> = Vec::new();
    let mut warnings = Vec::new();
    let mut model: Option<(String, PathBuf)> = None;
    let mut layouts: Vec<String> = Vec::new();
    let mut first_time: Option<u64> = None;
    for (file, text) in files {
        let value = parse_python_json(file, text)?;
        if is_individual(&value) {
            bail!(
                "{}: llmperf's per-request records (individual_responses): they hold neither \
                 the concurrency, the model nor the test's duration; import the summary \
                 written beside it: {}",
                file.display(),
                summary_beside(file)
            );
        }
        let root = At::root(file, &value);
        if !value.is_object() {
            return Err(root.error("expected llmperf's summary (a JSON object)"));
        }
        let read = read_summary(&root, &mut warnings)?;
        if let Some(id) = root.opt_str("model")? {
            match &model {
                Some((m, other)) if m != id => {
                    return Err(root.error(format!(
                        "model: expected {m} as in {}, found {id}: one run is one model",
                        other.display()
                    )));
                }
                Some(_) => {}
                None => model = Some((id.to_string(), file.clone())),
            }
        }
        if let Some(t) = root.opt_u64("timestamp")?.filter(|t| *t > 0) {
            first_time = Some(first_time.map_or(t, |f| f.min(t)));
        }
        layouts.push(layout(&value));
        push_unique(
            &mut cells,
            file.display().to_string(),
            read,
            settings_of(&value),
        )?;
    }
    layouts.dedup();
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} summaries: {}", names.join(", ")),
    });
    if let Some((m, _)) = &model {
        set_model(&mut meta, m);
    }
    if let Some(t) = first_time {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t);
        meta["measured_at"] = Value::from(humantime::format_rfc3339_seconds(at).to_string());
    }
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layouts.join("; "));
    imported.warnings = warnings;
    Ok(imported)
}

/// What a summary was measured at: its keys other than the results and
/// the time, for telling a repeat from another setting.
pub(crate) fn settings_of(value: &Value) -> Value {
    match value.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with("results_") && *k != "timestamp" && *k != "name")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// One decode cell from one summary.
pub(crate) fn read_summary(root: &At, warnings: &mut Vec<String>) -> anyhow::Result<DecodeCell> {
    let file = root.file.display();
    let n = root.u64("num_concurrent_requests")?;
    if n == 0 {
        return Err(root.error("num_concurrent_requests: expected at least 1, found 0"));
    }
    let concurrency = u32::try_from(n)
        .map_err(|_| root.error(format!("num_concurrent_requests: {n} is too many")))?;
    let completed = root.u64("results_num_completed_requests")?;
    let failed = match (
        root.opt_u64("results_number_errors")?,
        root.opt_f64("results_error_rate")?,
    ) {
        (Some(e), _) => e,
        (None, Some(rate)) => {
            // rate = errors / started, and started = completed + errors.
            let errors = match root.opt_u64("results_num_requests_started")? {
                Some(started) => (rate * started as f64).round() as u64,
                None if rate < 1.0 => (rate * completed as f64 / (1.0 - rate)).round() as u64,
                None => {
                    return Err(root.error(
                        "results_number_errors: absent, and results_error_rate 1 without \
                         results_num_requests_started: the failed requests cannot be counted",
                    ));
                }
            };
            warnings.push(format!(
                "{file}: results_number_errors: absent: the failed requests ({errors}) are \
                 counted from results_error_rate"
            ));
            errors
        }
        (None, None) => {
            return Err(root.error(
                "results_number_errors and results_error_rate: absent: whether requests failed \
                 is not recorded, so the figures cannot be trusted as a valid cell",
            ));
        }
    };
    let started = match root.opt_u64("results_num_requests_started")? {
        Some(s) => s,
        None => {
            warnings.push(format!(
                "{file}: results_num_requests_started: absent: the requests sent are taken as \
                 completed + failed ({})",
                completed + failed
            ));
            completed + failed
        }
    };
    if started < n {
        return Err(root.error(format!(
            "num_concurrent_requests is {n}, but the test recorded only {started} requests \
             (results_num_requests_started): it never had {n} of them in flight, so its figures \
             are not those of {n} requests at once (and llmperf versions that keep every \
             client sending count only the first {started} to finish); import a test of at \
             least {n} requests (llmperf's --max-num-completed-requests)"
        )));
    }
    let measured_context = root.opt_f64("results_number_input_tokens_mean")?;
    let context = match measured_context {
        Some(c) => c,
        None => {
            let asked = root.child("mean_input_tokens").ok_or_else(|| {
                root.error(
                    "results_number_input_tokens_mean and mean_input_tokens: absent: the \
                     prompt length is not recorded",
                )
            })?;
            let asked = root
                .f64("mean_input_tokens")
                .map_err(|_| asked.error("expected the requested mean prompt tokens, a number"))?;
            warnings.push(format!(
                "{file}: results_number_input_tokens_mean: absent: the context is the \
                 requested mean_input_tokens ({asked})"
            ));
            asked
        }
    };
    if context < 0.0 {
        return Err(root.error("results_number_input_tokens_mean: expected a number >= 0"));
    }
    let context = context.round() as u64;
    let mut cell = DecodeCell::without_figures(context, concurrency, Status::Valid, None);
    cell.completed_requests = Some(completed);
    let per_min = root.opt_f64("results_num_completed_requests_per_min")?;
    let duration = per_min
        .filter(|p| *p > 0.0 && completed > 0)
        .map(|p| completed as f64 / p * 60.0);
    if per_min.is_none() {
        warnings.push(format!(
            "{file}: results_num_completed_requests_per_min: absent: the test's duration \
             (measured s) and the average active requests are left empty"
        ));
    }
    cell.measured_s = duration;
    let out_mean = root.opt_f64("results_number_output_tokens_mean")?;
    match out_mean {
        Some(m) => cell.output_tokens = Some((m * completed as f64).round() as u64),
        None if completed > 0 => warnings.push(format!(
            "{file}: results_number_output_tokens_mean: absent: output tokens are left empty"
        )),
        None => cell.output_tokens = Some(0),
    }
    let mut definitions = definitions(measured_context.is_some());
    if completed == 0 {
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::AllRequestsFailed {
            requests: started,
            no_prompt_length: false,
        }));
    } else if failed > 0 {
        cell.status = Status::Error;
        let codes = root
            .opt_str("results_error_code_frequency")?
            .filter(|c| !c.is_empty() && *c != "{}")
            .map(str::to_string);
        cell.reason = Some(Reason::of(Part::RequestsFailed {
            failed,
            requests: Some(started),
            first: None,
            error_codes: codes,
            kinds: Vec::new(),
        }));
    } else {
        let total = root.f64("results_mean_output_throughput_token_per_s")?;
        if total < 0.0 {
            return Err(
                root.error("results_mean_output_throughput_token_per_s: expected a number >= 0")
            );
        }
        cell.total_tok_per_s = Some(total);
        let optional = |key: &str, what: &str, warnings: &mut Vec<String>| {
            let v = root.opt_f64(key)?;
            if v.is_none() {
                warnings.push(format!("{file}: {key}: absent: {what} is left empty"));
            }
            anyhow::Ok(v)
        };
        cell.ttft_median_ms =
            optional("results_ttft_s_quantiles_p50", "TTFT", warnings)?.map(|s| s * 1000.0);
        cell.tbt_median_ms = optional(
            "results_inter_token_latency_s_quantiles_p50",
            "time between tokens",
            warnings,
        )?
        .map(|s| s * 1000.0);
        cell.per_request_tok_per_s = optional(
            "results_request_output_throughput_token_per_s_quantiles_p50",
            "per-request tok/s",
            warnings,
        )?;
        let e2e = optional(
            "results_end_to_end_latency_s_mean",
            "the average active requests",
            warnings,
        )?;
        cell.avg_active_requests = e2e.zip(duration).map(|(e2e, d)| e2e * completed as f64 / d);
    }
    if started == n {
        definitions.insert(
            "concurrency".into(),
            "num_concurrent_requests, equal to the requests of the test: every request was \
             sent at once, and fewer were in flight as they finished"
                .into(),
        );
    }
    // What the file states, whatever the cell's status.
    cell.latency = latency(root, completed)?.map(Box::new);
    if cell.latency.is_some() {
        definitions.insert("latency".into(), LATENCY_DEFINITION.into());
    }
    let mut raw = root.value.clone();
    crate::model::redact::redact_json(&mut raw);
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.into(),
        definitions,
        raw,
    });
    Ok(cell)
}

/// How llmperf's latencies were put in the cell's `latency`.
const LATENCY_DEFINITION: &str = "llmperf's quantiles over the completed requests \
     (results_num_completed_requests), in seconds × 1000: results_ttft_s_quantiles_* → \
     ttft_ms, the prompt cache not warmed first; results_end_to_end_latency_s_quantiles_* → \
     e2e_ms. Not carried: results_inter_token_latency_s_quantiles_*, a request's time from \
     sending to its last chunk, TTFT included, / its output tokens, which is neither a time per \
     output token after the first nor a gap between tokens; the p25 and p75 quantiles stay in \
     the raw record only";

/// The quantiles the summary states of TTFT and end-to-end latency
/// (`results_<metric>_s_quantiles_p50`, `_p90`, `_p95`, `_p99`, seconds),
/// over the `completed` requests llmperf took them over. A quantile the
/// file lacks stays absent.
fn latency(root: &At, completed: u64) -> anyhow::Result<Option<Latency>> {
    if completed == 0 {
        return Ok(None);
    }
    let of = |metric: &str| -> anyhow::Result<Option<Quantiles>> {
        let get = |p: &str| -> anyhow::Result<Option<f64>> {
            Ok(root
                .opt_f64(&format!("results_{metric}_s_quantiles_{p}"))?
                .map(|s| s * 1000.0))
        };
        Quantiles::read(Some(completed), get)
    };
    Ok(Latency {
        ttft_ms: of("ttft")?,
        tpot_ms: None,
        tbt_ms: None,
        e2e_ms: of("end_to_end_latency")?,
    }
    .known())
}
