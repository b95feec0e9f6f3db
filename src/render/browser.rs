//! `compare/definitions.js`: everything the comparison built in the browser
//! must not decide for itself, handed over from the one place Rust keeps it:
//! the words ([`crate::comparison_words`]), the run limit and the run-id
//! alphabet, the series palette and markers, the ratio colour scale (with the
//! text colour on each step), chart sizes and the labels of context ticks.
//! static/compare.js only arranges these.

use serde::Serialize;

use super::charts::lines::{MARKERS, PALETTE, palette};
use super::charts::{DECODE_SIZE, FONT_SIZE, PREFILL_SIZE};
use super::colour::{RATIO_STEPS, ratio_scale, text_colour_on};

#[derive(Serialize)]
struct Definitions {
    min_runs: usize,
    max_runs: usize,
    run_id_pattern: &'static str,
    dash: &'static str,
    palette: Vec<String>,
    markers: [&'static str; 6],
    /// Steps per doubling of the ratio scale; `ratio_colours` has
    /// `2 × ratio_steps + 1` entries of [background, text].
    ratio_steps: usize,
    ratio_colours: Vec<[String; 2]>,
    prefill_size: (u32, u32),
    decode_size: (u32, u32),
    font_size: f64,
    /// Labels of the ticks a context axis can have: each power of two.
    context_ticks: Vec<(u64, String)>,
    words: std::collections::BTreeMap<&'static str, &'static str>,
}

pub(crate) fn definitions_js() -> String {
    let defs = Definitions {
        min_runs: crate::compare::MIN_RUNS_PER_COMPARISON,
        max_runs: crate::compare::MAX_RUNS_PER_COMPARISON,
        run_id_pattern: crate::validate::RUN_ID_PATTERN,
        dash: crate::format::DASH,
        palette: (0..PALETTE.len()).map(palette).collect(),
        markers: MARKERS,
        ratio_steps: RATIO_STEPS,
        ratio_colours: (0..=2 * RATIO_STEPS)
            .map(|i| {
                let bg = ratio_scale(i);
                [bg.hex(), text_colour_on(bg).hex()]
            })
            .collect(),
        prefill_size: PREFILL_SIZE,
        decode_size: DECODE_SIZE,
        font_size: FONT_SIZE,
        context_ticks: (0..=21)
            .map(|k| (1u64 << k, crate::format::context_label(1u64 << k)))
            .collect(),
        words: crate::comparison_words::all().into_iter().collect(),
    };
    // A global the deferred compare.js reads: this script runs before it.
    format!(
        "window.sitegenDefinitions = {};\n",
        serde_json::to_string(&defs).expect("definitions are JSON")
    )
}
