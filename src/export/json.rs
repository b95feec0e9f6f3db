//! `runs/<id>/data.json`: a run with all its cells, paced points and sessions
//! windows, as one document.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::figure::Figure;

use crate::model::{Cell, Run, RunMeta};

#[derive(Serialize)]
struct RunDocument<'a> {
    id: &'a str,
    #[serde(flatten)]
    meta: &'a RunMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes_markdown: Option<&'a str>,
    cells: &'a [Cell],
    /// Points measured at a paced request rate (absent when none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    paced: &'a [crate::model::paced::PacedPoint],
    /// Sessions windows (absent when none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    sessions: &'a [crate::model::sessions::SessionWindow],
}

pub fn run_json(run: &Run) -> String {
    crate::store::to_json(&RunDocument {
        id: &run.id,
        meta: &run.meta,
        notes_markdown: run.notes_markdown.as_deref(),
        cells: &run.cells,
        paced: &run.paced,
        sessions: &run.sessions,
    })
}

/// A prefill cell as the browser's comparison charts and lists it.
#[derive(Serialize)]
struct BrowserPrefill {
    tokens: u64,
    context: String,
    tok_per_s: f64,
    /// Its table text, as the pre-rendered comparison shows it.
    shown: String,
}

/// A decode cell as the browser's comparison charts, lists and compares it.
#[derive(Serialize)]
struct BrowserDecode {
    tokens: u64,
    context: String,
    concurrency: u32,
    /// Its tok/s in total and per GPU when it can be compared (measured and
    /// Valid): the figures charted and divided into ratios.
    comparable: Option<Basis2>,
    /// Why it cannot be compared, in the words ratios use ("over capacity").
    why_not: Option<&'static str>,
    /// ln(1 + the relative half width of its 95% interval), when it has one:
    /// a ratio of two cells is within noise when |ln ratio| is at most the
    /// root of the sum of their squares (`compare::ratio::ratio_interval`).
    #[serde(skip_serializing_if = "Option::is_none")]
    noise: Option<f64>,
    /// Its table text in total and per GPU ("1,234.5 (Requests queued)").
    shown: Basis2<String>,
    /// Each figure beyond the headline (by its key: "energy") the cell has
    /// in a form that can be compared (`compare::ratio::valid`): the figures
    /// their ratios divide. A figure it lacks is absent: the definitions say
    /// why (`not_recorded`) when the cell is otherwise comparable.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    values: BTreeMap<&'static str, f64>,
}

/// A figure in total and per GPU of the run.
#[derive(Serialize)]
struct Basis2<T = f64> {
    total: T,
    per_gpu: T,
}

/// What the in-browser comparison reads of a run, every figure and word made
/// here: `runs/<id>/data.js` calls `sitegenRun({...})`, which a page loads
/// with a script tag (so it works from file://, where fetch is refused).
#[derive(Serialize)]
struct BrowserRun<'a> {
    id: &'a str,
    model: &'a str,
    hardware: String,
    gpu_count: u32,
    setup: Vec<crate::compare::setup::SetupValue>,
    prefill: Vec<BrowserPrefill>,
    decode: Vec<BrowserDecode>,
    /// What tells it apart from a run of the same model, in order
    /// (`labels::name_traits`): engine, quantization, hardware, date, id.
    traits: [String; 5],
    /// Where its readings of each figure read from the hardware came from,
    /// by the figure's key (`render::compare_words::sources`): the page
    /// names the run before it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    sources: BTreeMap<&'static str, String>,
    /// The figures beyond the headline it has in any decode cell, by key:
    /// a comparison draws a figure's section when any run has it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    has: Vec<&'static str>,
}

pub(crate) fn run_js(run: &Run) -> String {
    use crate::compare::ratio::{Basis, valid};
    use crate::model::format::context_label;
    use crate::render::compare_words::{decode_figure, prefill_figures};
    let doc = BrowserRun {
        id: &run.id,
        model: &run.meta.model,
        hardware: crate::model::labels::hardware_label(&run.meta.hardware),
        gpu_count: run.meta.hardware.gpu_count,
        setup: crate::compare::setup::setup_values(run),
        prefill: run
            .prefill_cells()
            .zip(prefill_figures(run))
            .filter_map(|(c, (_, shown))| {
                Some(BrowserPrefill {
                    tokens: c.context_tokens,
                    context: context_label(c.context_tokens),
                    tok_per_s: c.prompt_tok_per_s?,
                    shown: shown?,
                })
            })
            .collect(),
        decode: run
            .decode_cells()
            .map(|c| {
                let total = valid(Figure::Throughput, Some(c));
                BrowserDecode {
                    tokens: c.context_tokens,
                    context: context_label(c.context_tokens),
                    concurrency: c.concurrency,
                    comparable: total.ok().map(|t| Basis2 {
                        total: t,
                        per_gpu: Basis::PerGpu.of(run, t),
                    }),
                    why_not: total.err().map(crate::render::compare_words::unusable),
                    noise: c.total_noise().map(f64::ln_1p),
                    shown: Basis2 {
                        total: decode_figure(run, Some(c), Basis::Total),
                        per_gpu: decode_figure(run, Some(c), Basis::PerGpu),
                    },
                    values: Figure::ALL[1..]
                        .iter()
                        .filter_map(|&f| Some((f.definition().key, valid(f, Some(c)).ok()?)))
                        .collect(),
                }
            })
            .collect(),
        sources: Figure::ALL
            .iter()
            .filter_map(|&f| {
                Some((
                    f.definition().key,
                    crate::render::compare_words::sources(f, run)?,
                ))
            })
            .collect(),
        has: Figure::ALL[1..]
            .iter()
            .filter(|&&f| crate::compare::ratio::has(f, run))
            .map(|f| f.definition().key)
            .collect(),
        traits: crate::model::labels::name_traits(run),
    };
    format!(
        "sitegenRun({});\n",
        serde_json::to_string(&doc).expect("a run is JSON")
    )
}
