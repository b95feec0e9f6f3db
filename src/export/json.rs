//! `runs/<id>/data.json`: a run with all its cells, as one document.

use serde::Serialize;

use crate::model::{Cell, Run, RunMeta};

#[derive(Serialize)]
struct RunDocument<'a> {
    id: &'a str,
    #[serde(flatten)]
    meta: &'a RunMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes_markdown: Option<&'a str>,
    cells: &'a [Cell],
}

pub fn run_json(run: &Run) -> String {
    crate::store::to_json(&RunDocument {
        id: &run.id,
        meta: &run.meta,
        notes_markdown: run.notes_markdown.as_deref(),
        cells: &run.cells,
    })
}

/// (context tokens, context label, concurrency, status code, the words the
/// comparison uses for a status it cannot compare, total tok/s where the
/// status lets it be shown, the status as tables name it).
type DecodeEntry = (
    u64,
    String,
    u32,
    &'static str,
    Option<&'static str>,
    Option<f64>,
    &'static str,
);

/// What the in-browser comparison reads of a run, labels already made:
/// `runs/<id>/data.js` calls `sitegenRun({...})`, which a page loads with a
/// script tag (so it works from file://, where fetch is refused).
#[derive(Serialize)]
struct BrowserRun<'a> {
    id: &'a str,
    model: &'a str,
    hardware: String,
    gpu_count: u32,
    /// (card, field, value) of the Hardware, Engine and Run cards.
    cards: Vec<(&'static str, &'static str, String)>,
    /// (context label, context tokens, prompt tok/s, TTFT ms) of valid prefill.
    prefill: Vec<(String, u64, f64, f64)>,
    decode: Vec<DecodeEntry>,
}

pub fn run_js(run: &Run) -> String {
    use crate::format::context_label;
    use crate::model::Status;
    let doc = BrowserRun {
        id: &run.id,
        model: &run.meta.model,
        hardware: crate::labels::hardware_label(&run.meta.hardware),
        gpu_count: run.meta.hardware.gpu_count,
        cards: crate::labels::cards(&run.meta)
            .into_iter()
            .flat_map(|card| {
                let name = card.name;
                card.rows
                    .into_iter()
                    .map(move |(label, value)| (name, label, value))
            })
            .collect(),
        prefill: run
            .prefill_cells()
            .filter(|c| c.status == Status::Valid)
            .filter_map(|c| {
                Some((
                    context_label(c.context_tokens),
                    c.context_tokens,
                    c.prompt_tok_per_s?,
                    c.ttft_ms?,
                ))
            })
            .collect(),
        decode: run
            .decode_cells()
            .map(|c| {
                (
                    c.context_tokens,
                    context_label(c.context_tokens),
                    c.concurrency,
                    c.status.code(),
                    c.status.not_compared_because(),
                    c.total_tok_per_s.filter(|_| c.status.has_figures()),
                    c.status.label(),
                )
            })
            .collect(),
    };
    format!(
        "sitegenRun({});\n",
        serde_json::to_string(&doc).expect("a run is JSON")
    )
}
