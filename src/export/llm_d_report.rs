//! llm-d's Benchmark Report v0.2.1 (llm-d/llm-d-benchmark,
//! `llmdbenchmark/analysis/benchmark_report/`; its JSON Schema is kept in
//! tests/fixtures/real/llm-d-report/schema/): one report per load point, as
//! llm-d's own converters write one per benchmark of a guidellm file and one
//! per vLLM result. A decode cell is a point at a concurrency, a paced point
//! one at a rate (with its concurrency cap, if any).
//!
//! Only what sitegen knows is written. What the format cannot carry
//! truthfully is left out and listed in [`RunReports::left_out`]:
//! - prefill cells: one cold request, whose TTFT is the whole figure; the
//!   format has no place for "one request with an empty prefix cache", and a
//!   report of it would read as a decode point at concurrency 1;
//! - latency figures (TTFT, time between tokens, their percentiles): every
//!   statistic of the format requires a mean, and sitegen keeps medians and
//!   percentiles, no mean;
//! - cells that are not Valid: a report has no status, so its figures would
//!   read as a clean measurement.
//!
//! sitegen's own cards and run settings go in the `native` sections (the
//! place the format keeps a tool's own configuration), under `sitegen`, so a
//! report read back by `sitegen ingest llm-d-report` restores them.

use serde_json::{Value, json};

use crate::model::paced::PacedPoint;
use crate::model::{Cell, DecodeCell, Run, Status};

/// The format's version written in every report.
pub const VERSION: &str = "0.2.1";

/// The key under `native.config` holding sitegen's own description.
pub const NATIVE_KEY: &str = "sitegen";

/// One report: the file it goes to, the point it is, and its content.
#[derive(Debug, Clone)]
pub struct Report {
    /// `decode-00008192-x004.yaml`, `paced-00001024-r000001500.yaml`: the
    /// point's own file name under `data/`, as YAML.
    pub file_name: String,
    /// The point in words: "decode 8K × 4", "paced 1K at 1.5 req/s".
    pub point: String,
    pub value: Value,
}

impl Report {
    /// The report as YAML (llm-d writes its reports as YAML), after a
    /// comment saying what it is.
    pub fn yaml(&self, run_id: &str) -> String {
        let body = yaml_serde::to_string(&self.value).expect("a report is YAML");
        format!(
            "# llm-d Benchmark Report v{VERSION}, written by sitegen {}: run {run_id}, {}\n{body}",
            env!("CARGO_PKG_VERSION"),
            self.point
        )
    }
}

/// A run's reports, and what of it is not in them, one sentence each.
#[derive(Debug, Clone, Default)]
pub struct RunReports {
    pub reports: Vec<Report>,
    pub left_out: Vec<String>,
}

/// Every report of a run: one per Valid decode cell, then one per Valid
/// paced point, in the run's order.
pub fn of_run(run: &Run) -> RunReports {
    let mut out = RunReports::default();
    let mut prefill = 0;
    let mut not_valid: Vec<String> = Vec::new();
    let mut with_latency = false;
    let mut with_per_request = false;
    for cell in &run.cells {
        match cell {
            Cell::Prefill(_) => prefill += 1,
            Cell::Decode(d) if d.status != Status::Valid => not_valid.push(format!(
                "decode {} × {} ({})",
                crate::model::format::context_label(d.context_tokens),
                d.concurrency,
                d.status.label()
            )),
            Cell::Decode(d) => {
                with_latency |=
                    d.ttft_median_ms.is_some() || d.tbt_median_ms.is_some() || d.latency.is_some();
                with_per_request |= d.per_request_tok_per_s.is_some();
                out.reports.push(decode_report(run, d));
            }
        }
    }
    for p in &run.paced {
        if p.status != Status::Valid {
            not_valid.push(format!("{} ({})", paced_words(p), p.status.label()));
            continue;
        }
        with_latency |=
            p.ttft_median_ms.is_some() || p.tbt_median_ms.is_some() || p.latency.is_some();
        with_per_request |= p.per_request_tok_per_s.is_some();
        out.reports.push(paced_report(run, p));
    }
    if prefill > 0 {
        out.left_out.push(format!(
            "{}: a prefill cell is one cold request (empty prefix cache), which the format cannot \
             tell from a decode point at concurrency 1",
            crate::model::format::counted(prefill, "prefill cell")
        ));
    }
    if !not_valid.is_empty() {
        out.left_out.push(format!(
            "cells that are not Valid (a report has no status, so their figures would read as a \
             clean measurement): {}",
            not_valid.join(", ")
        ));
    }
    if with_latency {
        out.left_out.push(
            "TTFT and time between tokens (medians and percentiles): every statistic of the \
             format requires a mean, which sitegen does not keep"
                .into(),
        );
    }
    if with_per_request {
        out.left_out.push(
            "per-request tok/s, requests in flight and output token counts: the format has no \
             field for them"
                .into(),
        );
    }
    out
}

fn paced_words(p: &PacedPoint) -> String {
    let cap = p
        .load
        .max_concurrency
        .map_or(String::new(), |n| format!(", at most {n} in flight"));
    format!(
        "paced {} at {} req/s{cap}",
        crate::model::format::context_label(p.context_tokens),
        crate::model::format::rate_per_s(p.load.requested_per_s)
    )
}

fn yaml_name(json_name: &str) -> String {
    format!("{}.yaml", json_name.trim_end_matches(".json"))
}

fn decode_report(run: &Run, d: &DecodeCell) -> Report {
    let file_name = yaml_name(&Cell::Decode(d.clone()).key().file_name());
    let tool = d.measured_by.as_ref().map(|m| m.tool.as_str());
    let mut load = load_standardized(run, tool, d.context_tokens);
    load["concurrency"] = json!(d.concurrency);
    let mut aggregate = serde_json::Map::new();
    if let Some(total) = d.total_tok_per_s {
        aggregate.insert(
            "throughput".into(),
            json!({"output_token_rate": {"units": "tokens/s", "mean": total}}),
        );
    }
    // Requests sent are known only where `sitegen run` kept every request.
    if let Some(detail) = &d.detail {
        let total = detail.requests.len() as u64;
        let mut requests = json!({"total": total, "failures": detail.failed_requests});
        if let Some(completed) = d.completed_requests
            && let Some(incomplete) = total.checked_sub(completed + detail.failed_requests)
        {
            requests["incomplete"] = json!(incomplete);
        }
        aggregate.insert("requests".into(), requests);
    }
    let start = d.detail.as_ref().map(|x| x.window_start_unix_s);
    Report {
        point: format!(
            "decode {} × {}",
            crate::model::format::context_label(d.context_tokens),
            d.concurrency
        ),
        value: report(
            run,
            &file_name,
            load,
            None,
            aggregate,
            Times {
                start_unix_s: start,
                measured_s: d.measured_s,
            },
        ),
        file_name,
    }
}

fn paced_report(run: &Run, p: &PacedPoint) -> Report {
    let file_name = yaml_name(&p.key().file_name());
    let tool = p.measured_by.as_ref().map(|m| m.tool.as_str());
    let mut load = load_standardized(run, tool, p.context_tokens);
    load["rate_qps"] = json!(p.load.requested_per_s);
    if let Some(cap) = p.load.max_concurrency {
        load["concurrency"] = json!(cap);
    }
    let mut aggregate = serde_json::Map::new();
    let mut throughput = serde_json::Map::new();
    if let Some(total) = p.total_tok_per_s {
        throughput.insert(
            "output_token_rate".into(),
            json!({"units": "tokens/s", "mean": total}),
        );
    }
    if let Some(achieved) = p.achieved_per_s {
        throughput.insert(
            "request_rate".into(),
            json!({"units": "queries/s", "mean": achieved}),
        );
    }
    if !throughput.is_empty() {
        aggregate.insert("throughput".into(), Value::Object(throughput));
    }
    if let Some(sent) = p.sent_requests {
        let mut requests = json!({"total": sent});
        if let Some(failed) = p.failed_requests {
            requests["failures"] = json!(failed);
            if let Some(completed) = p.completed_requests
                && let Some(incomplete) = sent.checked_sub(completed + failed)
            {
                requests["incomplete"] = json!(incomplete);
            }
        }
        aggregate.insert("requests".into(), requests);
    }
    Report {
        point: paced_words(p),
        value: report(
            run,
            &file_name,
            load,
            Some(serde_json::to_value(p.load.arrivals).expect("arrivals are JSON")),
            aggregate,
            Times {
                start_unix_s: None,
                measured_s: p.measured_s,
            },
        ),
        file_name,
    }
}

/// When the point was measured, as far as sitegen knows.
struct Times {
    start_unix_s: Option<f64>,
    measured_s: Option<f64>,
}

/// `scenario.load.standardized` without the load itself: the tool that sent
/// the requests and the prompts' length.
fn load_standardized(run: &Run, cell_tool: Option<&str>, context_tokens: u64) -> Value {
    let run_tool = run.meta.run.benchmark_tool.as_ref();
    // The cell's own tool when it was imported; else the run's.
    let (tool, version) = match (cell_tool, run_tool) {
        (Some(t), Some(r)) if r.name == t => (t.to_string(), r.version.clone()),
        (Some(t), _) => (t.to_string(), None),
        (None, Some(r)) => (r.name.clone(), r.version.clone()),
        (None, None) => ("sitegen".to_string(), None),
    };
    // sitegen's own prompts: generated text of exactly the context's length
    // (docs/measurement.md, "Prompts"); another tool's are not known here.
    let own = tool == "sitegen" && cell_tool.is_none();
    json!({
        "tool": tool,
        // The format requires it; "" is what llm-d's converters write when
        // the version is not known.
        "tool_version": version.unwrap_or_default(),
        "source": if own { "random" } else { "unknown" },
        "input_seq_len": {
            "distribution": if own { "fixed" } else { "other" },
            "value": context_tokens,
        },
    })
}

fn report(
    run: &Run,
    file_name: &str,
    load: Value,
    arrivals: Option<Value>,
    aggregate: serde_json::Map<String, Value>,
    times: Times,
) -> Value {
    let meta = &run.meta;
    let mut run_section = json!({
        "uid": format!("{}/{}", run.id, file_name.trim_end_matches(".yaml")),
        "eid": run.id,
    });
    if let Some(source) = &meta.source {
        run_section["description"] = json!(source);
    }
    let mut time = serde_json::Map::new();
    if let Some(start) = times.start_unix_s.filter(|s| s.is_finite() && *s >= 0.0) {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start);
        time.insert(
            "start".into(),
            json!(humantime::format_rfc3339_millis(at).to_string()),
        );
    }
    if let Some(s) = times.measured_s.filter(|s| s.is_finite() && *s >= 0.0) {
        time.insert("duration".into(), json!(format!("PT{s}S")));
    }
    if !time.is_empty() {
        run_section["time"] = Value::Object(time);
    }
    let mut native_run = json!({"run": meta.run});
    if let Some(a) = arrivals {
        native_run["arrivals"] = a;
    }
    json!({
        "version": VERSION,
        "run": run_section,
        "scenario": {
            "stack": [engine_component(run)],
            "load": {
                "metadata": {},
                "standardized": load,
                "native": {"config": {NATIVE_KEY: native_run}},
            },
        },
        "results": {
            "request_performance": {"aggregate": Value::Object(aggregate)},
        },
    })
}

/// The server as the format's one inference-engine component.
fn engine_component(run: &Run) -> Value {
    let meta = &run.meta;
    let mut native = json!({
        "served_model": meta.served_model,
        "hardware": meta.hardware,
        "engine": meta.engine,
    });
    if let Some(cmd) = &meta.launch_command {
        native["launch_command"] = json!(cmd);
    }
    let native = json!({"config": {NATIVE_KEY: native}});
    let parallelism = meta
        .launch_command
        .as_deref()
        .map(parallelism)
        .unwrap_or_default();
    json!({
        "metadata": {
            "label": run.id,
            "cfg_id": cfg_id(&native),
        },
        "standardized": {
            "kind": "inference_engine",
            "tool": meta.engine.name,
            "tool_version": meta.engine.version.clone().unwrap_or_default(),
            // One server answered every request: the format's plain
            // instance, neither a prefill nor a decode server.
            "role": "replica",
            "replicas": 1,
            "model": {"name": meta.model},
            "accelerator": {
                "model": meta.hardware.gpu,
                "count": meta.hardware.gpu_count,
                "parallelism": Value::Object(parallelism),
            },
        },
        "native": native,
    })
}

/// A hash of the component's configuration, as llm-d's `config_hash`
/// (SHA-256 of its canonical JSON, keys sorted).
fn cfg_id(config: &Value) -> String {
    use sha2::Digest;
    let canonical = serde_json::to_string(config).expect("JSON");
    let digest = sha2::Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The parallelism the launch command states (vLLM's and SGLang's flags);
/// what it does not state is not written, and the format's default (1)
/// applies.
fn parallelism(command: &str) -> serde_json::Map<String, Value> {
    const FLAGS: [(&str, &[&str]); 3] = [
        (
            "tp",
            &["--tensor-parallel-size", "-tp", "--tp-size", "--tp"],
        ),
        (
            "pp",
            &["--pipeline-parallel-size", "-pp", "--pp-size", "--pp"],
        ),
        ("dp", &["--data-parallel-size", "-dp", "--dp-size", "--dp"]),
    ];
    let words = shlex::split(command).unwrap_or_default();
    let mut out = serde_json::Map::new();
    for (i, word) in words.iter().enumerate() {
        let (flag, value) = match word.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (word.as_str(), words.get(i + 1).map(String::as_str)),
        };
        if let Some((key, _)) = FLAGS.iter().find(|(_, names)| names.contains(&flag))
            && let Some(n) = value.and_then(|v| v.parse::<u64>().ok())
        {
            out.insert((*key).into(), json!(n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallelism_is_read_from_vllm_and_sglang_flags() {
        let p = parallelism("vllm serve m --tensor-parallel-size 4 --pipeline-parallel-size=2");
        assert_eq!(Value::Object(p), json!({"tp": 4, "pp": 2}));
        let p = parallelism("python -m sglang.launch_server --tp 8 --dp-size 2");
        assert_eq!(Value::Object(p), json!({"tp": 8, "dp": 2}));
        assert!(parallelism("llama-server -m x.gguf").is_empty());
    }
}
