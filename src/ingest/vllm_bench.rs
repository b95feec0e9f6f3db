//! `vllm bench serve --save-result` JSON: one file per burst (one
//! concurrency at one input length); several files make one run.
//!
//! Keys read: `model_id`, `backend`, `max_concurrency`, `request_rate`,
//! `completed`, `failed`, `duration`, `total_input_tokens`,
//! `total_output_tokens`, `output_throughput`, `median_ttft_ms`,
//! `median_tpot_ms`, `median_itl_ms`, `mean_e2el_ms`. The rest is kept raw.

use std::path::PathBuf;

use super::burst::{burst_cell, burst_meta, push_unique};
use super::json::{At, expect_object, parse_python_json};
use super::{Imported, file_name};
use crate::model::Cell;

pub const TOOL: &str = "vllm bench serve";

/// Whether a JSON result looks like vllm bench serve's.
pub fn looks_like(value: &serde_json::Value) -> bool {
    [
        "model_id",
        "tokenizer_id",
        "num_prompts",
        "output_throughput",
    ]
    .iter()
    .all(|k| value.get(k).is_some())
}

pub fn parse_files(files: &[(PathBuf, String)]) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut model: Option<(String, &PathBuf)> = None;
    let mut backend = None;
    for (file, text) in files {
        let value = parse_python_json(file, text)?;
        expect_object(file, &value, "a vllm bench serve result")?;
        let at = At::root(file, &value);
        let id = at.opt_str("model_id")?.map(str::to_string);
        match (&model, id) {
            (Some((first, first_file)), Some(id)) if *first != id => {
                return Err(at.error(format!(
                    "model_id: expected {first} as in {}, found {id}: one run is one model",
                    first_file.display()
                )));
            }
            (None, Some(id)) => model = Some((id, file)),
            _ => {}
        }
        backend = backend.or(at.opt_str("backend")?.map(str::to_string));
        let cell = burst_cell(at, TOOL, "mean_e2el_ms")?;
        push_unique(&mut cells, file.display().to_string(), cell)?;
    }
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    Ok(Imported {
        meta: burst_meta(
            model.as_ref().map(|(m, _)| m.as_str()),
            backend.as_deref(),
            TOOL,
            &names,
        ),
        cells: cells.into_iter().map(|(_, c)| Cell::Decode(c)).collect(),
        notes_markdown: None,
    })
}
