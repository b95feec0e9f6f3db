//! `vllm bench serve --save-result` JSON (and `benchmark_serving.py` before
//! it): one file per burst (one concurrency at one input length); several
//! files make one run. Also read: the run files of `vllm bench sweep`
//! (`run=N.json`, the same record with the sweep's settings added), its
//! `summary.json` (a list of such records), and multi-turn results
//! (`mode: multi_turn`, `multi_turn_concurrency` conversations at once).
//!
//! Keys read: `model_id`, `backend`, `max_concurrency` /
//! `multi_turn_concurrency`, `request_rate`, `num_prompts`, `completed`,
//! `failed`, `duration`, `total_input_tokens`, `total_output_tokens`, the
//! medians of TTFT, TPOT and ITL (in ms, or in seconds where the key has no
//! `_ms`), the mean end-to-end latency, and for bursts sent all at once the
//! per-request `ttfts` and `latencies` / `itls` or the p99 TTFT. vLLM's files
//! record no version of the tool. The rest is kept raw.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::burst::{
    Burst, burst_cell, burst_meta, cells_of, engine_of_backend, paced_of, push_unique, settings_of,
};
use super::json::{At, parse_python_json};
use super::{Imported, file_name};
use crate::model::Cell;

pub(crate) const TOOL: &str = "vllm bench serve";

pub const IMPORTER: super::Importer = super::Importer {
    name: "vllm-bench",
    // `--append-result` writes one JSON line per burst into one file.
    detect: |s| s.json().or(s.first_line.as_ref()).is_some_and(looks_like),
    one_run_from_all_files: true,
    read: |inputs, _| parse_files(inputs),
};

/// Whether a JSON result looks like vllm bench serve's (or a list of them,
/// as a sweep's summary.json is).
pub(crate) fn looks_like(value: &Value) -> bool {
    // vllm-ascend's nightly files have no throughput (and no counts), but
    // their TTFT medians and request settings say what they are.
    let one = |v: &Value| {
        v.get("model_id").is_some()
            && (v.get("output_throughput").is_some() || v.get("median_ttft_ms").is_some())
            && (v.get("num_prompts").is_some() || v.get("num_conversations").is_some())
    };
    match value {
        Value::Array(a) => a.first().is_some_and(one),
        v => one(v),
    }
}

/// The layout a result has, for the dry run and errors.
pub fn layout(value: &Value) -> String {
    let one = match value {
        Value::Array(a) => a.first().unwrap_or(value),
        v => v,
    };
    let kind = if one.get("mode").and_then(Value::as_str) == Some("multi_turn") {
        "multi-turn result"
    } else if one.get("run_number").is_some() {
        "vllm bench sweep run file"
    } else if value.is_array() {
        "vllm bench sweep summary (a list of results)"
    } else if one.get("max_concurrency").is_none() {
        "benchmark_serving.py result (before max_concurrency)"
    } else {
        "vllm bench serve result"
    };
    format!("{kind}; vLLM's result files record no version")
}

/// The file's results: one JSON value (a result, or a sweep's list), or
/// one result per line as `--append-result` writes them (then a list, and
/// the line number of each).
fn read_results(file: &Path, text: &str) -> anyhow::Result<(Value, Option<Vec<usize>>)> {
    let whole = match parse_python_json(file, text) {
        Ok(v) => return Ok((v, None)),
        Err(e) => e,
    };
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    if lines.len() < 2 || !lines[0].1.trim_start().starts_with('{') {
        return Err(whole);
    }
    let mut out = Vec::new();
    let mut numbers = Vec::new();
    for (i, line) in lines {
        out.push(super::json::parse_python_json_line(file, line, i + 1)?);
        numbers.push(i + 1);
    }
    Ok((Value::Array(out), Some(numbers)))
}

pub fn parse_files(files: &[(PathBuf, String)]) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut paced = Vec::new();
    let mut model: Option<(String, PathBuf)> = None;
    let mut backend = None;
    let mut warnings = Vec::new();
    let mut layouts = Vec::new();
    for (file, text) in files {
        let (value, lines) = read_results(file, text)?;
        let root = At::root(file, &value);
        let records = match &value {
            Value::Array(_) => root.elements(),
            Value::Object(_) => vec![root.clone()],
            _ => {
                return Err(root.error(
                    "expected a vllm bench serve result (a JSON object) or a sweep's list of them",
                ));
            }
        };
        if records.is_empty() {
            return Err(root.error("expected at least one result, found an empty list"));
        }
        layouts.push(match &lines {
            Some(_) => format!(
                "{} results appended as JSON lines (--append-result); vLLM's result files record no version",
                records.len()
            ),
            None => layout(&value),
        });
        for (i, at) in records.into_iter().enumerate() {
            let place = match &lines {
                Some(numbers) => format!("{}: line {}", file.display(), numbers[i]),
                None => format!("{}: {}", file.display(), at.path_or_top()),
            };
            // A warmup burst (as `--metadata type=warmup` marks one) is not a measurement.
            if at.value.get("type").and_then(Value::as_str) == Some("warmup") {
                warnings.push(format!(
                    "{place}: a warmup burst (type \"warmup\"), left out"
                ));
                continue;
            }
            if !at.value.is_object() {
                return Err(at.error("expected a vllm bench serve result (a JSON object)"));
            }
            let id = at.opt_str("model_id")?.map(str::to_string);
            match (&model, id) {
                (Some((first, first_file)), Some(id)) if *first != id => {
                    return Err(at.error(format!(
                        "model_id: expected {first} as in {}, found {id}: one run is one model",
                        first_file.display()
                    )));
                }
                (None, Some(id)) => model = Some((id, file.clone())),
                _ => {}
            }
            backend = backend.or(at.opt_str("backend")?.map(str::to_string));
            let burst = burst_cell(&at, TOOL)?;
            warnings.extend(burst.warnings);
            match burst.cell {
                Burst::Closed(cell) => {
                    push_unique(&mut cells, place, cell, settings_of(at.value))?;
                }
                Burst::Paced(point) => paced.push((place, point)),
            }
        }
    }
    layouts.dedup();
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    Ok(Imported {
        meta: burst_meta(
            model.as_ref().map(|(m, _)| m.as_str()),
            backend
                .as_deref()
                .and_then(engine_of_backend)
                .map(|e| (e, None)),
            TOOL,
            &names,
        ),
        cells: cells_of(cells)?.into_iter().map(Cell::Decode).collect(),
        paced: paced_of(paced)?,
        notes_markdown: None,
        warnings,
        layout: layouts.join("; "),
        split: Vec::new(),
    })
}
