//! `compare/definitions.js`: everything the comparison built in the browser
//! must not decide for itself, handed over from the one place Rust keeps it:
//! the words ([`crate::render::compare_words`]), the run limit and the run-id
//! alphabet, the series palette and markers, the ratio colour scale (with the
//! text colour on each step), chart sizes and the labels of context ticks.
//! static/compare.js only arranges these.

use serde::Serialize;

use crate::model::figure::Figure;

use super::charts::lines::{MARKERS, PALETTE, palette};
use super::charts::{ChartSize, DECODE_SIZE, FONT_PX, PREFILL_SIZE};
use super::colour::RATIO_STEPS;

#[derive(Serialize)]
struct Definitions {
    min_runs: usize,
    max_runs: usize,
    run_id_pattern: &'static str,
    dash: &'static str,
    palette: Vec<String>,
    markers: [&'static str; 6],
    /// Steps per doubling of the ratio scale (`colour::ratio_shade`).
    ratio_steps: usize,
    /// The key under a ratio matrix: its ends and its middle.
    ratio_key: [String; 3],
    /// Every figure beyond the headline, as compare.js divides, colours and
    /// words its ratios (`model::figure`).
    figures: Vec<BrowserFigure>,
    /// Contexts this close are one row of a ratio matrix (`compare::grid::NEAR_CONTEXT`).
    near_context: f64,
    /// Each chart is drawn wide and narrow, as the pre-rendered pages draw it.
    prefill_size: ChartSize,
    decode_size: ChartSize,
    /// The SVG font-size of chart text (what plotters writes).
    font_size: f64,
    /// Labels of the ticks a context axis can have: each power of two.
    context_ticks: Vec<(u64, String)>,
    words: std::collections::BTreeMap<&'static str, &'static str>,
    /// The pre-rendered comparisons: (their run ids, baseline first; the
    /// path under compare/), so a set chosen here links to its full page.
    built: Vec<(Vec<String>, String)>,
}

/// A figure's definition as the browser reads it: everything compare.js
/// needs to draw its ratio section, so no rule of it is written twice.
#[derive(Serialize)]
struct BrowserFigure {
    key: &'static str,
    heading: &'static str,
    caption: &'static str,
    /// Its ratios take the colour of faster when they are below 1.
    lower_is_better: bool,
    /// Why a Valid cell has no ratio when it lacks the figure.
    not_recorded: &'static str,
    ratio_heading: &'static str,
    no_ratio_anywhere: &'static str,
    key_words: [String; 3],
    sources_line: &'static str,
    no_sources_line: &'static str,
}

impl BrowserFigure {
    fn of(figure: Figure) -> Self {
        let d = figure.definition();
        BrowserFigure {
            key: d.key,
            heading: d.name,
            caption: d.words.ratio_caption,
            lower_is_better: d.better == crate::model::figure::Better::Lower,
            not_recorded: d
                .not_recorded
                .unwrap_or(crate::render::compare_words::NOT_MEASURED),
            ratio_heading: d.words.ratio_heading,
            no_ratio_anywhere: d.words.no_ratio_anywhere,
            key_words: crate::render::compare_words::ratio_key(figure),
            sources_line: d.words.sources_line,
            no_sources_line: d.words.no_sources_line,
        }
    }
}

pub(crate) fn definitions_js(
    runs: &[crate::model::Run],
    comparisons: &[crate::compare::plan::Comparison],
) -> String {
    let defs = Definitions {
        min_runs: crate::compare::plan::MIN_RUNS_PER_COMPARISON,
        max_runs: crate::compare::plan::MAX_RUNS_PER_COMPARISON,
        run_id_pattern: crate::model::validate::RUN_ID_PATTERN,
        dash: crate::model::format::DASH,
        palette: (0..PALETTE.len()).map(palette).collect(),
        markers: MARKERS,
        ratio_steps: RATIO_STEPS,
        ratio_key: crate::render::compare_words::ratio_key(Figure::Throughput),
        figures: Figure::ALL[1..]
            .iter()
            .map(|&f| BrowserFigure::of(f))
            .collect(),
        near_context: crate::compare::grid::NEAR_CONTEXT,
        prefill_size: PREFILL_SIZE,
        decode_size: DECODE_SIZE,
        font_size: FONT_PX,
        context_ticks: (0..=21)
            .map(|k| (1u64 << k, crate::model::format::context_label(1u64 << k)))
            .collect(),
        words: crate::render::compare_words::all().into_iter().collect(),
        built: comparisons
            .iter()
            .map(|c| {
                (
                    c.runs.iter().map(|&i| runs[i].id.clone()).collect(),
                    format!("{}/index.html", c.id),
                )
            })
            .collect(),
    };
    // A global the deferred compare.js reads: this script runs before it.
    format!(
        "window.sitegenDefinitions = {};\n",
        serde_json::to_string(&defs).expect("definitions are JSON")
    )
}
