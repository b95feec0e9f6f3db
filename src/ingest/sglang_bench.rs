//! The JSONL that `python -m sglang.bench_serving --output-file` appends to
//! (`sglang.benchmark.serving` since 0.5): one line per burst; the lines of
//! one file make one run.
//!
//! Keys read: `backend`, `max_concurrency`, `request_rate`, `completed`,
//! `duration`, `total_input_tokens`, `total_output_tokens`, the medians of
//! TTFT, TPOT and ITL, `mean_e2e_latency_ms`, `p99_ttft_ms` and
//! `median_e2e_latency_ms` (bursts sent all at once), and `server_info`
//! (the server's `/server_info`; behind the PD router its first decode
//! server): `model_path` (or `internal_states[0].model_path`), `version`,
//! `max_running_requests`. The model also from `model_id`. SGLang's lines
//! record no failed requests and no number sent: a burst sent at once is
//! filed at its completed requests. The rest is kept raw.

use std::path::Path;

use super::Imported;
use super::burst::{burst_cell, burst_meta, engine_of_backend, push_unique, server_info};
use super::file_name;
use super::json::{At, parse_python_json_line};
use crate::model::Cell;

pub(crate) const TOOL: &str = "SGLang bench_serving";

/// Whether a JSONL line looks like bench_serving's.
pub(crate) fn looks_like(value: &serde_json::Value) -> bool {
    ["backend", "dataset_name", "output_throughput", "completed"]
        .iter()
        .all(|k| value.get(k).is_some())
        && value.get("mean_e2e_latency_ms").is_some()
}

/// The model a line names: `model_id`, or the path the server loaded.
fn model_of(at: &At) -> Option<String> {
    if let Some(m) = at.str_at("model_id") {
        return Some(m.to_string());
    }
    let info = server_info(at)?;
    info.first_child(&["model_path", "internal_states.0.model_path"])
        .and_then(|m| m.value.as_str().map(str::to_string))
}

pub fn parse_jsonl(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut model = None;
    let mut engine: Option<(String, Option<String>)> = None;
    let mut warnings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = parse_python_json_line(file, line, i + 1)?;
        let at = At {
            file,
            path: format!("line {}", i + 1),
            value: &value,
        };
        if !value.is_object() {
            return Err(at.error("expected a JSON object, one result per line"));
        }
        model = model.or_else(|| model_of(&at));
        if engine.is_none() {
            // `/server_info` is SGLang's own endpoint: the server was SGLang.
            engine = match server_info(&at) {
                Some(info) => Some(("sglang".into(), info.str_at("version").map(str::to_string))),
                None => at
                    .opt_str("backend")?
                    .and_then(engine_of_backend)
                    .map(|e| (e.to_string(), None)),
            };
        }
        let burst = burst_cell(&at, TOOL)?;
        warnings.extend(burst.warnings);
        push_unique(
            &mut cells,
            format!("{}: {}", file.display(), at.path),
            burst.cell,
        )?;
    }
    if cells.is_empty() {
        anyhow::bail!(
            "{}: expected one JSON result per line, found none",
            file.display()
        );
    }
    Ok(Imported {
        meta: burst_meta(
            model.as_deref(),
            engine.as_ref().map(|(n, v)| (n.as_str(), v.as_deref())),
            TOOL,
            &[file_name(file)],
        ),
        cells: cells.into_iter().map(|(_, c)| Cell::Decode(c)).collect(),
        notes_markdown: None,
        warnings,
        layout: "bench_serving JSONL; SGLang's lines record no version of the tool".into(),
    })
}
