//! The JSONL that `python -m sglang.bench_serving --output-file` appends to:
//! one line per burst; the lines of one file make one run.
//!
//! Keys read: `backend`, `max_concurrency`, `request_rate`, `completed`,
//! `duration`, `total_input_tokens`, `total_output_tokens`,
//! `output_throughput`, `median_ttft_ms`, `median_tpot_ms`,
//! `median_itl_ms`, `mean_e2e_latency_ms`; the model from `model_id` or
//! `server_info.model_path` where the line has one. The rest is kept raw.

use std::path::Path;

use super::Imported;
use super::burst::{burst_cell, burst_meta, push_unique};
use super::file_name;
use super::json::{At, parse_python_json_line};
use crate::model::Cell;

pub const TOOL: &str = "SGLang bench_serving";

/// Whether a JSONL line looks like bench_serving's.
pub fn looks_like(value: &serde_json::Value) -> bool {
    [
        "backend",
        "dataset_name",
        "max_concurrency",
        "output_throughput",
    ]
    .iter()
    .all(|k| value.get(k).is_some())
        && value.get("mean_e2e_latency_ms").is_some()
}

pub fn parse_jsonl(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut model = None;
    let mut backend = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let path = format!("line {}", i + 1);
        let value = parse_python_json_line(file, line, i + 1)?;
        if !value.is_object() {
            anyhow::bail!(
                "{}: {path}: expected a JSON object, one result per line",
                file.display()
            );
        }
        let at = At {
            file,
            path: &path,
            value: &value,
        };
        let line_model = match at.opt_str("model_id")? {
            Some(m) => Some(m.to_string()),
            None => value
                .get("server_info")
                .and_then(|s| s.get("model_path"))
                .and_then(|m| m.as_str())
                .map(str::to_string),
        };
        model = model.or(line_model);
        backend = backend.or(at.opt_str("backend")?.map(str::to_string));
        let cell = burst_cell(at, TOOL, "mean_e2e_latency_ms")?;
        push_unique(&mut cells, format!("{}: {path}", file.display()), cell)?;
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
            backend.as_deref(),
            TOOL,
            &[file_name(file)],
        ),
        cells: cells.into_iter().map(|(_, c)| Cell::Decode(c)).collect(),
        notes_markdown: None,
    })
}
