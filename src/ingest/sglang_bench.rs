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
use super::burst::{
    Burst, burst_cell, burst_meta, cells_of, engine_of_backend, paced_of, push_unique, server_info,
    settings_of,
};
use super::file_name;
use super::json::{At, parse_python_json_line};
use crate::model::Cell;

pub(crate) const TOOL: &str = "SGLang bench_serving";

pub const IMPORTER: super::Importer = super::Importer {
    name: "sglang-bench",
    detect: |s| s.first_line.as_ref().is_some_and(looks_like),
    one_run_from_all_files: false,
    read: |inputs, _| parse_jsonl(&inputs[0].0, &inputs[0].1),
};

/// Whether a JSONL line looks like bench_serving's.
pub(crate) fn looks_like(value: &serde_json::Value) -> bool {
    ["backend", "dataset_name", "output_throughput", "completed"]
        .iter()
        .all(|k| value.get(k).is_some())
        && value.get("mean_e2e_latency_ms").is_some()
}

/// The GPUs the server ran on, from its `/server_info` launch settings:
/// `tp_size` × `pp_size` × `dp_size`, where data-parallel replicas each hold
/// their own tensor-parallel group (with `enable_dp_attention` the
/// data-parallel ranks share the `tp_size` GPUs instead). `Err` (a warning)
/// where the settings do not give a count: a prefill/decode disaggregated
/// setup lists only the servers its router reported.
fn gpu_count(info: &At) -> anyhow::Result<Result<u64, String>> {
    if info.child("prefill").is_some() || info.child("decode").is_some() {
        return Ok(Err(format!(
            "{}: a prefill/decode disaggregated setup: server_info lists the servers the router \
             reported, not every GPU, so hardware.gpu_count is not taken from it",
            info.path
        )));
    }
    let Some(tp) = info.opt_u64("tp_size")? else {
        return Ok(Err(format!(
            "{}: no tp_size, so hardware.gpu_count is not taken from it",
            info.path
        )));
    };
    let pp = info.opt_u64("pp_size")?.unwrap_or(1).max(1);
    let dp = info.opt_u64("dp_size")?.unwrap_or(1).max(1);
    let shared = info.opt_bool("enable_dp_attention")?.unwrap_or(false);
    let count = tp * pp * if shared { 1 } else { dp };
    Ok(Ok(count))
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
    let mut paced = Vec::new();
    let mut model = None;
    let mut engine: Option<(String, Option<String>)> = None;
    let mut gpus: Option<u64> = None;
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
        if gpus.is_none()
            && let Some(info) = at.child("server_info")
        {
            match gpu_count(&info)? {
                Ok(count) => gpus = Some(count),
                Err(why) => {
                    warnings.push(why);
                    gpus = Some(0);
                }
            }
        }
        let burst = burst_cell(&at, TOOL)?;
        warnings.extend(burst.warnings);
        let place = format!("{}: {}", file.display(), at.path);
        match burst.cell {
            Burst::Closed(cell) => push_unique(&mut cells, place, cell, settings_of(at.value))?,
            Burst::Paced(point) => paced.push((place, point)),
        }
    }
    if cells.is_empty() && paced.is_empty() {
        anyhow::bail!(
            "{}: expected one JSON result per line, found none",
            file.display()
        );
    }
    let mut meta = burst_meta(
        model.as_deref(),
        engine.as_ref().map(|(n, v)| (n.as_str(), v.as_deref())),
        TOOL,
        &[file_name(file)],
    );
    if let Some(count) = gpus.filter(|n| *n > 0) {
        meta["hardware"] = serde_json::json!({ "gpu_count": count });
    }
    Ok(Imported {
        meta,
        cells: cells_of(cells)?.into_iter().map(Cell::Decode).collect(),
        paced: paced_of(paced)?,
        notes_markdown: None,
        warnings,
        layout: "bench_serving JSONL; SGLang's lines record no version of the tool".into(),
        split: Vec::new(),
    })
}
