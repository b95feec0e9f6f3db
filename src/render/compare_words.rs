//! Every word of a comparison, once: the pre-rendered comparison pages
//! (templates/compare.html, src/render/compare_page/) and the comparison
//! built in the browser (static/compare.js, handed these by
//! `compare/definitions.js`) take them from here. Slots are written `{name}`
//! and filled by `fill`, in Rust and in the browser alike. The numbers they
//! word come from crate::compare.

use crate::compare::grid::SideState;
use crate::compare::ratio::{Basis, NoRatio, Unusable};
use crate::model::figure::Figure;
use crate::model::{DecodeCell, Run, Status};

pub(crate) const SETUP: &str = "Setup";
pub(crate) const CARD: &str = "Card";
pub(crate) const FIELD: &str = "Field";
pub(crate) const DIFFERS: &str = "differs";

pub(crate) const PREFILL: &str = "Prefill";
pub(crate) const PREFILL_TITLE: &str = "Prefill: prompt tok/s by context length";
pub(crate) const PREFILL_X: &str = "context length (tokens)";
pub(crate) const PREFILL_Y: &str = "prompt tok/s";
pub(crate) const PREFILL_CAPTION: &str = "Prompt tok/s of one cold prompt at each context length; contexts are placed by token count, and two of a run's contexts closer than a marker's width share one marker. The table gives each, with its TTFT.";
/// A prefill figure in a table: "16,000.0 (512 ms)".
pub(crate) const PREFILL_FIGURE: &str = "{tok_per_s} ({ttft})";

pub(crate) const CONTEXT: &str = "Context";
pub(crate) const REQUESTS_AT_ONCE: &str = "Requests at once";
pub(crate) const NUMBERS: &str = "Numbers";
pub(crate) const NUMBERS_LABEL: &str = "{heading}: numbers";

pub(crate) const DECODE: &str = "Sustained decode";
pub(crate) const DECODE_CAPTION_TOTAL: &str =
    "Total tok/s against simultaneous requests, for each context at least two runs measured.";
pub(crate) const DECODE_CAPTION_PER_GPU: &str = "Tok/s per GPU (each run's total divided by its GPU count) against simultaneous requests, for each context at least two runs measured.";
pub(crate) const DECODE_TITLE: &str =
    "Sustained decode at {context}: {figure} by simultaneous requests";
pub(crate) const DECODE_X: &str = "simultaneous requests";
pub(crate) const DECODE_HEADING: &str = "{context} context";
pub(crate) const DECODE_CHART_CAPTION_TOTAL: &str = "Total tok/s against simultaneous requests at {context} context, valid cells only; the table also lists the other statuses.";
pub(crate) const DECODE_CHART_CAPTION_PER_GPU: &str = "Tok/s per GPU against simultaneous requests at {context} context, valid cells only; the table also lists the other statuses.";
pub(crate) const INTERACTIVITY_CAPTION: &str = "Each point is a valid cell: how fast one request streams (x) against the server's total output (y){per_gpu}. Thin lines join one context's concurrency levels and end with its label; the thick line with markers is each run's Pareto frontier, the cells no other cell of the run beats on both.";
pub(crate) const INTERACTIVITY_PER_GPU: &str = ", divided by the run's GPU count";
pub(crate) const CAPACITY_CAPTION: &str = "For each context, the most simultaneous requests that ran valid: above it cells were over capacity, queued, looped or failed.";
/// A decode figure that is not Valid, in a table: "1,234.5 (Requests queued)".
pub(crate) const FIGURE_WITH_STATUS: &str = "{figure} ({status})";

/// The figure on a basis, as axes and titles name it.
pub(crate) const FIGURE_TOTAL: &str = "total tok/s";
pub(crate) const FIGURE_PER_GPU: &str = "tok/s per GPU";

pub const RATIOS: &str = "Ratios";
pub(crate) const RATIOS_CAPTION_TOTAL: &str = "Total tok/s of a run divided by the first run's, cell by cell. Above 1 (blue) the run is faster, below 1 (orange) slower. A dash means at least one side has no valid figure, and the cell says why.";
pub(crate) const RATIOS_CAPTION_PER_GPU: &str = "Tok/s per GPU of a run divided by the first run's, cell by cell: the total ratio times the first run's GPU count over the run's. Above 1 (blue) the run makes more per GPU, below 1 (orange) less. A dash means at least one side has no valid figure, and the cell says why.";
pub(crate) const SHARED_GPUS: &str = "Every run here uses {n} GPUs, so per GPU each figure is its total ÷ {n} and every ratio stays as it is.";
pub(crate) const RATIO_HEADING: &str = "{b} / {a}";
pub(crate) const RATIO_HEADING_PER_GPU: &str = "{b} / {a}, per GPU";

/// Why a ratio has no value, with the runs' names and their cells' words.
pub(crate) const NO_RATIO_ZERO_BASE: &str = "{a} measured 0 tok/s";
pub(crate) const NO_RATIO_BOTH: &str = "both {x}";
pub(crate) const NO_RATIO_EACH: &str = "{a} {x}, {b} {y}";
pub(crate) const NO_RATIO_ONE: &str = "{name} {x}";
pub(crate) const NOT_MEASURED: &str = "not measured";
/// A run's side of a cell without a ratio when it is the other run's that fails.
pub(crate) const VALID: &str = "valid";
/// One state of a run over part of a row or column: "over capacity at 8–128".
pub(crate) const STATE_AT_LEVELS: &str = "{state} at {cells} {requests}";
/// The noun after levels: "1 request", "2 requests", "1–4 requests".
pub(crate) const REQUEST: &str = "request";
pub(crate) const REQUESTS: &str = "requests";
pub(crate) const STATE_AT_CONTEXTS: &str = "{state} at {cells}";
/// A run's states over a row or column: "GLM valid at 1–4 requests, over capacity at 8–128 requests".
pub(crate) const SIDE_STATES: &str = "{name} {states}";
pub(crate) const ZERO_TOK_PER_S: &str = "measured 0 tok/s";
/// A context or a level of a ratio matrix with no ratio at all, said once.
pub(crate) const NO_RATIO_AT_ROW: &str = "No ratio at {context}: {reasons}.";
pub(crate) const NO_RATIO_ANYWHERE: &str =
    "No cell ran validly in both {a} and {b}: no ratio anywhere.";
pub(crate) const NO_RATIO_AT_LEVEL: &str = "No ratio at {n} requests at once: {reasons}.";
/// A level measured only at contexts whose rows are left out (their notes say more).
pub(crate) const NEITHER_AT_ROWS_SHOWN: &str = "neither run measured it at the contexts shown";
pub(crate) const NEAR_CONTEXTS: &str = "Rows {rows} pair a context of {a} with one of {b} within 2% of it (the same prompt, less room kept for output).";
/// Key findings, at the top of a comparison.
pub(crate) const FINDINGS: &str = "Key findings";
pub(crate) const FINDINGS_PAIR: &str = "{b} against {a}";
pub(crate) const FINDING_DECODE: &str = "Decode";
pub(crate) const FINDING_DECODE_TEXT: &str = "{b}'s {figure} over {a}'s, median of {count} cells both ran validly ({min} to {max}); {b} is faster in {above}, {a} in {below}.";
pub(crate) const FINDING_NO_DECODE: &str =
    "No decode cell ran validly in both {a} and {b}: no ratio to give.";
/// The answer first: the two sentences that open a pair's findings.
pub(crate) const ANSWER_ALL_A: &str = "{a} is faster in every cell both ran validly ({cells}; {b} makes {median} its {figure}, median).";
pub(crate) const ANSWER_ALL_B: &str =
    "{b} is faster in every cell both ran validly ({cells}; {median} {a}'s {figure}, median).";
pub(crate) const ANSWER_MIXED: &str = "In the {cells} both ran validly, {b} makes {median} {a}'s {figure} (median): {b} is faster in {above}, {a} in {below}{even}.";
pub(crate) const ANSWER_EVEN_IN: &str = ", even in {n}";
pub(crate) const ANSWER_PEAK: &str = "{hi}'s peak valid throughput is {ratio} {lo}'s: {hi_total} {figure} at {hi_at} against {lo_total} at {lo_at}.";
pub(crate) const ANSWER_PEAK_EVEN: &str = "Their peak valid throughputs are even ({ratio}): {b_total} {figure} at {b_at} for {b}, {a_total} at {a_at} for {a}.";
pub(crate) const ANSWER_PEAK_ONE: &str =
    "Only {name} has a valid decode cell: its peak is {total} {figure} at {at}.";
pub(crate) const FINDING_PEAK: &str = "Peak";
pub(crate) const FINDING_PEAK_TEXT: &str = "{b}'s highest valid {figure} over {a}'s: {b} {b_total} total tok/s ({b_per_gpu} per GPU) at {b_at}, {a} {a_total} ({a_per_gpu} per GPU) at {a_at}.";
/// The most throughput among cells whose per-request rate reaches a speed.
pub(crate) const FINDING_AT_SPEED: &str = "At ≥ {speed} tok/s per request";
pub(crate) const FINDING_AT_SPEED_TEXT: &str = "{b}'s most valid {figure} in a cell whose per-request rate is {speed} tok/s or more, over {a}'s: {b} {b_total} at {b_at} ({b_per} per request), {a} {a_total} at {a_at} ({a_per} per request).";
pub(crate) const FINDING_AT_SPEED_ONE: &str = "Only {name} has a valid cell whose per-request rate is {speed} tok/s or more: {total} {figure} at {at} ({per} per request).";
pub(crate) const FINDING_NOISE: &str = "Noise";
pub(crate) const FINDING_NOISE_UNKNOWN: &str = "Unknown: these figures carry no interval (one window each, or a tool that reports no spread), so a difference of a few percent may be noise.";
pub(crate) const FINDING_NOISE_TEXT: &str = "{within} of these ratios are within the noise of their two cells (95% intervals), {beyond} beyond it; {unknown} of unknown noise.";
pub(crate) const WITHIN_NOISE: &str = "within noise";
pub(crate) const FINDING_BY_CONTEXT: &str = "By context";
pub(crate) const FINDING_BY_CONTEXT_ITEM: &str = "{context} {ratio}";
pub(crate) const FINDING_PREFILL: &str = "Prefill";
pub(crate) const FINDING_PREFILL_TEXT: &str = "{b}'s prompt tok/s over {a}'s, median of {count} contexts both measured ({min} to {max}){faster}.";
pub(crate) const FINDING_PREFILL_FASTER: &str = "; {b} is faster at {contexts}";
pub(crate) const FINDING_NOT_COMPARED: &str = "Not compared";
pub(crate) const FINDING_NOT_COMPARED_TEXT: &str = "{n} decode cells: {one} measured by one run only, {invalid} not valid on one side or both (the ratio matrices say which and why).";
pub(crate) const FINDING_REACH: &str = "Reach";
pub(crate) const FINDING_REACH_RUN: &str =
    "{name}: valid up to {context} of context and {requests} at once (at {at})";
pub(crate) const FINDING_REACH_NONE: &str = "{name}: no valid cell";
pub(crate) const TOOLS_DIFFER: &str = "These runs were measured with different tools ({tools}), which define some figures differently: read each run's “How the imported figures are defined” before trusting small differences.";
pub(crate) const SETUP_DIFFERS_CAPTION: &str = "What differs between the runs. Rows every run states alike, and rows some run does not state, are folded below.";
pub(crate) const SETUP_SAME: &str = "Rows alike, or not stated by every run ({n})";
pub(crate) const NOT_STATED: &str = "not stated by all";
pub(crate) const CHART_KEY: &str = "Key to the chart";

/// The key under a figure's ratio matrix: its worse end, its better end
/// and its middle.
pub(crate) fn ratio_key(figure: Figure) -> [String; 3] {
    use crate::model::figure::Better;
    use crate::model::format::ratio;
    let d = figure.definition();
    let (worse, better) = match d.better {
        Better::Higher => (0.5, 2.0),
        Better::Lower => (2.0, 0.5),
    };
    [
        fill(d.words.ratio_key[0], &[("ratio", &ratio(worse))]),
        fill(d.words.ratio_key[1], &[("ratio", &ratio(better))]),
        format!("({} in the middle: the page's own background)", ratio(1.0)),
    ]
}

/// The per-GPU toggle of comparison, run and series pages: its words before
/// it is pressed and after, when every run has `n` GPUs or each its own.
pub(crate) const PER_GPU_BUTTON: &str = "Show tok/s per GPU";
pub(crate) const PER_GPU_SHOWING: &str = "Showing tok/s per GPU (÷ {n}); show totals";
pub(crate) const PER_GPU_SHOWING_EACH: &str =
    "Showing tok/s per GPU (each run's total ÷ its GPUs); show totals";
pub(crate) const RUNS_COMPARED: &str = "Runs compared";
pub(crate) const TITLE_JOIN: &str = " vs ";
pub(crate) const PAGE_TITLE: &str = "{title} · Comparison";
/// The index's bar for picking runs to compare: its link, its count before,
/// during and after a valid choice, and each run's checkbox.
pub(crate) const PICK_COMPARE: &str = "Compare selected runs";
/// Its state in words, beside it and read with it: before any choice, with
/// too few, with a valid choice, with too many.
pub(crate) const PICK_NONE: &str = "No run selected: tick {min} to {max} runs in the table.";
pub(crate) const PICK_TOO_FEW: &str = "{n} run selected: tick at least {more} more.";
pub(crate) const PICK_SELECTED: &str = "{n} runs selected.";
pub(crate) const PICK_TOO_MANY: &str = "{n} runs selected: at most {max} can be compared.";
pub(crate) const PICK_CHECKBOX: &str = "Select {model} ({id}) for comparison";
pub(crate) const PICK_CHOOSE: &str = "Choose {min} to {max} runs on the index and open them here.";
pub(crate) const PICK_BACK: &str = "Back to the index";
pub(crate) const PICK_NOT_RUN_ID: &str = "Not a run id: {ids}.";
pub(crate) const PICK_NO_RUN: &str = "No run {ids} on this site.";
pub(crate) const PICK_FROM_INDEX: &str = "Pick runs from the index";
pub(crate) const PICK_BUILT: &str = "These runs also have a comparison page built with the site, whose key findings and charts are pre-rendered:";

/// The pressed per-GPU toggle's words on a page of runs with `gpus` GPUs.
pub(crate) fn per_gpu_showing(gpus: u32) -> String {
    fill(PER_GPU_SHOWING, &[("n", &gpus.to_string())])
}

/// `template` with each `{slot}` replaced by its value, in order.
pub(crate) fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    slots
        .iter()
        .fold(template.to_string(), |text, (slot, value)| {
            text.replace(&format!("{{{slot}}}"), value)
        })
}

/// Every word static/compare.js uses, by the name it looks it up under
/// (`compare/definitions.js`); tests/browser_conformance.rs checks each name
/// the script reads is here.
pub fn all() -> Vec<(&'static str, &'static str)> {
    vec![
        ("no_ratio_at_row", NO_RATIO_AT_ROW),
        ("no_ratio_at_level", NO_RATIO_AT_LEVEL),
        ("neither_at_rows_shown", NEITHER_AT_ROWS_SHOWN),
        ("no_ratio_anywhere", NO_RATIO_ANYWHERE),
        ("chart_key", CHART_KEY),
        ("within_noise", WITHIN_NOISE),
        ("setup_differs_caption", SETUP_DIFFERS_CAPTION),
        ("setup_same", SETUP_SAME),
        ("near_contexts", NEAR_CONTEXTS),
        ("zero_tok_per_s", ZERO_TOK_PER_S),
        ("not_stated", NOT_STATED),
        ("setup", SETUP),
        ("card", CARD),
        ("field", FIELD),
        ("differs", DIFFERS),
        ("prefill", PREFILL),
        ("prefill_title", PREFILL_TITLE),
        ("prefill_x", PREFILL_X),
        ("prefill_y", PREFILL_Y),
        ("prefill_caption", PREFILL_CAPTION),
        ("context", CONTEXT),
        ("requests_at_once", REQUESTS_AT_ONCE),
        ("numbers", NUMBERS),
        ("numbers_label", NUMBERS_LABEL),
        ("decode", DECODE),
        ("decode_caption_total", DECODE_CAPTION_TOTAL),
        ("decode_caption_per_gpu", DECODE_CAPTION_PER_GPU),
        ("decode_title", DECODE_TITLE),
        ("decode_x", DECODE_X),
        ("decode_heading", DECODE_HEADING),
        ("decode_chart_caption_total", DECODE_CHART_CAPTION_TOTAL),
        ("decode_chart_caption_per_gpu", DECODE_CHART_CAPTION_PER_GPU),
        ("figure_total", FIGURE_TOTAL),
        ("figure_per_gpu", FIGURE_PER_GPU),
        ("ratios", RATIOS),
        ("ratios_caption_total", RATIOS_CAPTION_TOTAL),
        ("ratios_caption_per_gpu", RATIOS_CAPTION_PER_GPU),
        ("shared_gpus", SHARED_GPUS),
        ("ratio_heading", RATIO_HEADING),
        ("ratio_heading_per_gpu", RATIO_HEADING_PER_GPU),
        ("no_ratio_zero_base", NO_RATIO_ZERO_BASE),
        ("no_ratio_both", NO_RATIO_BOTH),
        ("no_ratio_each", NO_RATIO_EACH),
        ("no_ratio_one", NO_RATIO_ONE),
        ("not_measured", NOT_MEASURED),
        ("valid", VALID),
        ("state_at_levels", STATE_AT_LEVELS),
        ("request", REQUEST),
        ("requests", REQUESTS),
        ("state_at_contexts", STATE_AT_CONTEXTS),
        ("side_states", SIDE_STATES),
        ("per_gpu_button", PER_GPU_BUTTON),
        ("per_gpu_showing_each", PER_GPU_SHOWING_EACH),
        ("runs_compared", RUNS_COMPARED),
        ("title_join", TITLE_JOIN),
        ("page_title", PAGE_TITLE),
        ("pick_choose", PICK_CHOOSE),
        ("pick_back", PICK_BACK),
        ("pick_not_run_id", PICK_NOT_RUN_ID),
        ("pick_no_run", PICK_NO_RUN),
        ("pick_from_index", PICK_FROM_INDEX),
        ("pick_built", PICK_BUILT),
    ]
}

/// "not measured", "queued", "over capacity", ...
pub(crate) fn unusable(u: Unusable) -> &'static str {
    match u {
        Unusable::NotMeasured => NOT_MEASURED,
        Unusable::Status(s) => s.not_compared_because().unwrap_or(NOT_MEASURED),
        Unusable::NotRecorded(f) => f.definition().not_recorded.unwrap_or(NOT_MEASURED),
    }
}

/// What one run has at a cell of a ratio grid, in a note's words: "valid"
/// when its side is usable, else why not ("queued", "not measured").
pub(crate) fn side_state(s: SideState) -> &'static str {
    match s {
        SideState::Usable => VALID,
        SideState::ZeroTokPerS => ZERO_TOK_PER_S,
        SideState::Unusable(u) => unusable(u),
    }
}

/// Why a cell has no ratio, as pages and CSV files say it, with the runs'
/// names: "GLM over capacity", "both queued", "GLM queued, Step looped".
pub(crate) fn no_ratio(why: NoRatio, names: (&str, &str)) -> String {
    match why {
        NoRatio::ZeroBase => fill(NO_RATIO_ZERO_BASE, &[("a", names.0)]),
        NoRatio::Unusable {
            a: Some(a),
            b: Some(b),
        } if unusable(a) == unusable(b) => fill(NO_RATIO_BOTH, &[("x", unusable(a))]),
        NoRatio::Unusable {
            a: Some(a),
            b: Some(b),
        } => fill(
            NO_RATIO_EACH,
            &[
                ("a", names.0),
                ("x", unusable(a)),
                ("b", names.1),
                ("y", unusable(b)),
            ],
        ),
        NoRatio::Unusable {
            a: Some(a),
            b: None,
        } => fill(NO_RATIO_ONE, &[("name", names.0), ("x", unusable(a))]),
        NoRatio::Unusable {
            a: None,
            b: Some(b),
        } => fill(NO_RATIO_ONE, &[("name", names.1), ("x", unusable(b))]),
        NoRatio::Unusable { a: None, b: None } => NOT_MEASURED.into(),
    }
}

/// The runs of a comparison, each named so that a reader tells them apart
/// ([`crate::model::labels::distinct_names`]): two runs of one model become
/// "GLM-5.3-Flash (vllm 0.29.0)" and "GLM-5.3-Flash (vllm 0.30.0)" in every
/// sentence, heading and column that names them.
pub(crate) fn named_runs(runs: &[&Run]) -> Vec<Run> {
    crate::model::labels::distinct_names(runs)
        .into_iter()
        .zip(runs)
        .map(|(name, run)| {
            let mut named = (*run).clone();
            named.meta.model = name;
            named
        })
        .collect()
}

/// Where a run's readings of `figure` came from, for a figure read from the
/// hardware: "nvidia-smi, as the counter's growth".
pub(crate) fn sources(figure: Figure, run: &Run) -> Option<String> {
    let source = figure.definition().source?;
    let mut sources: Vec<String> = run.decode_cells().filter_map(source).collect();
    sources.sort_unstable();
    sources.dedup();
    (!sources.is_empty()).then(|| crate::model::format::and_list(&sources))
}

/// The line under a figure's ratio matrices of one run: "GLM: energy from
/// …", or that it has none.
pub(crate) fn sources_note(figure: Figure, run: &Run) -> String {
    let w = &figure.definition().words;
    match sources(figure, run) {
        Some(sources) => fill(
            w.sources_line,
            &[("name", &run.meta.model), ("sources", &sources)],
        ),
        None => fill(w.no_sources_line, &[("name", &run.meta.model)]),
    }
}

/// A run's prefill cells in a comparison's table, each "16,000.0 (512 ms)"
/// when it has both figures (an Error cell may: it is charted and listed as
/// measured), the run's figures in one number format.
pub(crate) fn prefill_figures(run: &Run) -> Vec<(u64, Option<String>)> {
    use crate::model::format::{millis, tok_per_s_column};
    let cells: Vec<&crate::model::PrefillCell> = run.prefill_cells().collect();
    let rates: Vec<f64> = cells.iter().filter_map(|c| c.prompt_tok_per_s).collect();
    let mut shown = tok_per_s_column(&rates).into_iter();
    cells
        .into_iter()
        .map(|c| {
            let rate = c.prompt_tok_per_s.map(|_| shown.next().unwrap_or_default());
            let text = rate
                .zip(c.ttft_ms)
                .map(|(t, ms)| fill(PREFILL_FIGURE, &[("tok_per_s", &t), ("ttft", &millis(ms))]));
            (c.context_tokens, text)
        })
        .collect()
}

/// A decode cell of `run` in a comparison's table: its tok/s on `basis`,
/// with the status when it is not Valid ("1,234.5 (Requests queued)"), or
/// the status alone when it has no figure.
pub(crate) fn decode_figure(run: &Run, cell: Option<&DecodeCell>, basis: Basis) -> String {
    let figure = |t: f64| crate::model::format::tok_per_s(basis.of(run, t));
    match cell {
        None => crate::model::format::DASH.into(),
        Some(c) if c.status == Status::Valid => c
            .total_tok_per_s
            .map_or_else(|| crate::model::format::DASH.into(), figure),
        Some(c) => match c.total_tok_per_s.filter(|_| c.status.has_figures()) {
            Some(t) => fill(
                FIGURE_WITH_STATUS,
                &[("figure", &figure(t)), ("status", c.status.label())],
            ),
            None => c.status.label().to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_filled_and_other_text_kept() {
        assert_eq!(
            fill(SHARED_GPUS, &[("n", "4")]),
            "Every run here uses 4 GPUs, so per GPU each figure is its total ÷ 4 and every ratio stays as it is."
        );
        assert_eq!(
            fill(
                NO_RATIO_EACH,
                &[("a", "A"), ("x", "looped"), ("b", "B"), ("y", "failed")]
            ),
            "A looped, B failed"
        );
    }
}
