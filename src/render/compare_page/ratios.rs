//! The ratio matrices of a comparison (throughput and every other figure), and the notes on rows and columns without a ratio.

use crate::compare;
use crate::compare::ratio::Basis;
use crate::model::Run;
use crate::model::figure::{Better, Figure};
use crate::model::format;
use crate::render::colour::ratio_shade;
use crate::render::compare_words;

use super::charts::basis_suffix;
use super::*;

pub(crate) struct RatioMatrix {
    pub id: String,
    pub heading: String,
    pub levels: Vec<u32>,
    pub rows: Vec<RatioRow>,
    /// One line per context or level left out for having no ratio.
    pub left_out: Vec<String>,
    /// Which rows pair two different contexts, when some do.
    pub near_note: Option<String>,
    /// The scale's two ends and its middle, in words.
    pub key: [String; 3],
}

/// A figure beyond the headline (energy per output token ...), run against
/// run, when any run has it.
pub(crate) struct FigureSection {
    /// Its key: the section's id.
    pub id: &'static str,
    /// The table of contents' word for it.
    pub nav: &'static str,
    pub heading: &'static str,
    pub caption: &'static str,
    pub matrices: Vec<RatioMatrix>,
    /// Where each run's readings came from, one line per run.
    pub sources: Vec<String>,
}

pub(crate) struct RatioRow {
    pub context: String,
    pub cells: Vec<RatioCell>,
}

pub(crate) struct RatioCell {
    /// "1.23×", or "—" when there is no ratio.
    pub text: String,
    /// Why there is no ratio ("GLM over capacity").
    pub reason: Option<String>,
    /// "faster", "slower", "even" or "none" (no ratio).
    pub class: &'static str,
    /// The shade's strength, `--shade:0.37` (see `colour::ratio_shade`).
    pub style: Option<String>,
    /// "within noise" when the ratio's interval includes 1.
    pub noise: Option<&'static str>,
}

/// The ratio matrices of each figure beyond the headline that any run has,
/// each run against the first, and where each run's readings came from.
pub(super) fn figure_sections(runs: &[&Run]) -> Vec<FigureSection> {
    Figure::ALL[1..]
        .iter()
        .filter(|&&f| runs.iter().any(|r| compare::ratio::has(f, r)))
        .map(|&figure| figure_section(runs, figure))
        .collect()
}

fn figure_section(runs: &[&Run], figure: Figure) -> FigureSection {
    let d = figure.definition();
    let a = runs[0];
    let matrices = runs[1..]
        .iter()
        .map(|b| {
            ratio_matrix_between(
                a,
                b,
                format!("{}-{}", d.key, b.id),
                compare_words::fill(
                    d.words.ratio_heading,
                    &[("b", &b.meta.model), ("a", &a.meta.model)],
                ),
                (&a.meta.model, &b.meta.model),
                (figure, Basis::Total),
            )
        })
        .collect();
    FigureSection {
        id: d.key,
        nav: d.words.finding_label,
        heading: d.name,
        caption: d.words.ratio_caption,
        matrices,
        sources: runs
            .iter()
            .map(|r| compare_words::sources_note(figure, r))
            .collect(),
    }
}

/// Each later run against the first.
pub(super) fn ratio_matrices(runs: &[&Run], basis: Basis) -> Vec<RatioMatrix> {
    let id_suffix = basis_suffix(basis);
    let heading = match basis {
        Basis::Total => compare_words::RATIO_HEADING,
        Basis::PerGpu => compare_words::RATIO_HEADING_PER_GPU,
    };
    let a = runs[0];
    runs[1..]
        .iter()
        .map(|b| {
            ratio_matrix_between(
                a,
                b,
                format!("ratio-{}{id_suffix}", b.id),
                compare_words::fill(heading, &[("b", &b.meta.model), ("a", &a.meta.model)]),
                (&a.meta.model, &b.meta.model),
                (Figure::Throughput, basis),
            )
        })
        .collect()
}

/// `b`'s tok/s over `a`'s on `basis`, cell by cell, shaded on the diverging
/// ratio scale; `names` say whose figure is missing where there is none.
/// Contexts within 2% share a row; rows and columns without a single ratio
/// are not drawn but said in one line each, with why.
pub(crate) fn ratio_matrix_between(
    a: &Run,
    b: &Run,
    id: String,
    heading: String,
    names: (&str, &str),
    (figure, basis): (Figure, Basis),
) -> RatioMatrix {
    use crate::render::compare_words::{
        NEAR_CONTEXTS, NO_RATIO_AT_LEVEL, NO_RATIO_AT_ROW, STATE_AT_CONTEXTS, STATE_AT_LEVELS, fill,
    };
    let grid = compare::grid::RatioGrid::of(a, b, figure, basis);
    // Better takes the colour of faster, whichever way the figure is better.
    let shade = |r: f64| {
        ratio_shade(match figure.definition().better {
            Better::Higher => r,
            Better::Lower => 1.0 / r,
        })
    };
    let keep_level: Vec<bool> = (0..grid.levels.len())
        .map(|l| grid.level_has_ratio(l))
        .collect();
    // Per run, what it has over the cells, cell by cell where that differs:
    // "GLM valid at 1–4 requests, over capacity at 8–128 requests; Step not measured".
    // Each run's rows by its own contexts: GLM's "256K" is Step's "251K".
    let side_label = |p: &compare::grid::ContextPair, own: Option<u64>| {
        own.map_or_else(|| p.label(), format::context_label)
    };
    let row_labels: [Vec<String>; 2] = [
        grid.rows.iter().map(|p| side_label(p, p.a)).collect(),
        grid.rows.iter().map(|p| side_label(p, p.b)).collect(),
    ];
    let levels: Vec<String> = grid.levels.iter().map(u32::to_string).collect();
    let level_labels = [levels.clone(), levels];
    let mut left_out = Vec::new();
    let mut rows = Vec::new();
    for (r, pair) in grid.rows.iter().enumerate() {
        if !grid.row_has_ratio(r) {
            let states = compare::grid::side_states(
                grid.cells[r].iter().enumerate(),
                compare_words::side_state,
            );
            left_out.push(fill(
                NO_RATIO_AT_ROW,
                &[
                    ("context", &pair.label()),
                    (
                        "reasons",
                        &side_notes(&states, names, &level_labels, STATE_AT_LEVELS),
                    ),
                ],
            ));
            continue;
        }
        rows.push(RatioRow {
            context: pair.label(),
            cells: grid.cells[r]
                .iter()
                .zip(&keep_level)
                .filter(|(_, keep)| **keep)
                .map(|(c, _)| match c {
                    // Within the noise of both cells: no colour, and said.
                    Ok(j) if j.verdict == compare::ratio::NoiseVerdict::WithinNoise => RatioCell {
                        text: format::ratio(j.value),
                        reason: None,
                        class: "even",
                        style: None,
                        noise: Some(compare_words::WITHIN_NOISE),
                    },
                    Ok(j) => {
                        let (class, style) = shade(j.value);
                        RatioCell {
                            text: format::ratio(j.value),
                            reason: None,
                            class,
                            style: Some(style),
                            noise: None,
                        }
                    }
                    Err(none) => RatioCell {
                        text: DASH.into(),
                        reason: Some(compare_words::no_ratio(*none, names)),
                        class: "none",
                        style: None,
                        noise: None,
                    },
                })
                .collect(),
        });
    }
    for (l, n) in grid.levels.iter().enumerate() {
        if !keep_level[l] {
            // The rows drawn: a row left out has a note of its own.
            let states = compare::grid::side_states(
                grid.cells
                    .iter()
                    .enumerate()
                    .filter(|(r, _)| grid.row_has_ratio(*r))
                    .map(|(r, row)| (r, &row[l])),
                compare_words::side_state,
            );
            let reasons = match side_notes(&states, names, &row_labels, STATE_AT_CONTEXTS) {
                none if none.is_empty() => compare_words::NEITHER_AT_ROWS_SHOWN.into(),
                some => some,
            };
            left_out.push(fill(
                NO_RATIO_AT_LEVEL,
                &[("n", &n.to_string()), ("reasons", &reasons)],
            ));
        }
    }
    let left_alone = rows.is_empty();
    if left_alone {
        // Nothing to compare anywhere: one line, not one per row and level.
        left_out = vec![fill(
            match figure {
                Figure::Throughput => compare_words::NO_RATIO_ANYWHERE,
                other => other.definition().words.no_ratio_anywhere,
            },
            &[("a", names.0), ("b", names.1)],
        )];
    }
    let near: Vec<String> = grid
        .rows
        .iter()
        .filter(|p| p.near())
        .map(|p| p.label())
        .collect();
    RatioMatrix {
        id,
        heading,
        levels: grid
            .levels
            .iter()
            .zip(&keep_level)
            .filter(|(_, k)| **k)
            .map(|(n, _)| *n)
            .collect(),
        rows,
        left_out,
        near_note: (!near.is_empty() && !left_alone).then(|| {
            fill(
                NEAR_CONTEXTS,
                &[("rows", &near.join(", ")), ("a", names.0), ("b", names.1)],
            )
        }),
        key: compare_words::ratio_key(figure),
    }
}

/// Each run's states over a row or column without a ratio, in words: one
/// state said alone ("Step not measured"), several with the cells each
/// covers ("GLM valid at 1–4 requests, over capacity at 8–128 requests").
/// `labels` name the grid's positions, each run's by its own contexts; `at`
/// is the template of one state.
pub(crate) fn side_notes(
    states: &[compare::grid::SideStates<&'static str>; 2],
    names: (&str, &str),
    labels: &[Vec<String>; 2],
    at: &str,
) -> String {
    use crate::render::compare_words::{REQUEST, REQUESTS, SIDE_STATES, fill};
    [names.0, names.1]
        .iter()
        .zip(states)
        .zip(labels)
        .filter(|((_, s), _)| !s.is_empty())
        .map(|((name, s), labels)| {
            let stretch = |&(first, last): &(usize, usize)| match last - first {
                0 => labels[first].clone(),
                1 => format!("{}, {}", labels[first], labels[last]),
                _ => format::range_label(&labels[first], &labels[last]),
            };
            let words = match s.as_slice() {
                [(word, _)] => word.to_string(),
                many => many
                    .iter()
                    .map(|(word, stretches)| {
                        let cells: Vec<String> = stretches.iter().map(stretch).collect();
                        let cells = cells.join(", ");
                        // Levels take a noun: only "1 request" is singular.
                        let noun = if cells == "1" { REQUEST } else { REQUESTS };
                        fill(
                            at,
                            &[("state", word), ("cells", &cells), ("requests", noun)],
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            fill(SIDE_STATES, &[("name", name), ("states", &words)])
        })
        .collect::<Vec<_>>()
        .join("; ")
}
