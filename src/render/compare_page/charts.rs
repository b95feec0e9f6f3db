//! The charts of a comparison (prefill, decode per context, interactivity, capacity), each with its table.

use std::collections::BTreeSet;

use crate::compare;
use crate::compare::ratio::Basis;
use crate::model::Run;
use crate::model::format;
use crate::render::charts::lines::{Axis, MARKERS, Scale, Series, palette, xy_chart};
use crate::render::charts::{
    CAPACITY_SIZE, ChartError, DECODE_SIZE, INTERACTIVITY_SIZE, PREFILL_SIZE,
};
use crate::render::compare_words;

use super::*;

/// A chart with the table of its numbers; its caption, by kind, is in
/// templates/chart_block.html.
pub(crate) struct ChartBlock {
    pub id: String,
    /// The runs' colours and markers, shown with the chart: (name, colour, marker).
    pub key: Vec<(String, String, &'static str)>,
    pub heading: String,
    pub kind: ChartKind,
    /// Throughput divided by each run's GPU count (the caption says so).
    pub per_gpu: bool,
    pub svg: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Which chart a block holds: it chooses the caption.
pub(crate) enum ChartKind {
    Prefill,
    /// Decode at one context (its label, "8K").
    Decode(String),
    Interactivity,
    Capacity,
    /// A series' history at one context: the caption says what is drawn.
    History(String),
}

impl ChartBlock {
    /// What a screen reader calls the folded table of the chart's numbers.
    pub(crate) fn numbers_label(&self) -> String {
        compare_words::fill(compare_words::NUMBERS_LABEL, &[("heading", &self.heading)])
    }

    /// The caption under the chart, from [`crate::render::compare_words`].
    pub fn caption(&self) -> String {
        use crate::render::compare_words as w;
        match &self.kind {
            ChartKind::Prefill => w::PREFILL_CAPTION.into(),
            ChartKind::Decode(context) => w::fill(
                if self.per_gpu {
                    w::DECODE_CHART_CAPTION_PER_GPU
                } else {
                    w::DECODE_CHART_CAPTION_TOTAL
                },
                &[("context", context)],
            ),
            ChartKind::Interactivity => w::fill(
                w::INTERACTIVITY_CAPTION,
                &[(
                    "per_gpu",
                    if self.per_gpu {
                        w::INTERACTIVITY_PER_GPU
                    } else {
                        ""
                    },
                )],
            ),
            ChartKind::Capacity => w::CAPACITY_CAPTION.into(),
            ChartKind::History(caption) => caption.clone(),
        }
    }
}

/// The key of a chart with a line per name, in style order.
pub(crate) fn chart_key(names: &[String]) -> Vec<(String, String, &'static str)> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), palette(i), MARKERS[i % MARKERS.len()]))
        .collect()
}

/// One emphasised line per run, in run order (so run i gets style i).
pub(super) fn run_lines(points: impl Iterator<Item = Vec<(f64, f64)>>) -> Vec<Series> {
    points
        .enumerate()
        .map(|(style, points)| Series {
            style,
            points,
            emphasis: true,
            joined: true,
            solid: false,
            label: None,
        })
        .collect()
}

pub(super) fn names(runs: &[&Run]) -> Vec<String> {
    runs.iter().map(|r| r.meta.model.clone()).collect()
}

pub(super) fn context_axis() -> Axis {
    Axis::new(compare_words::PREFILL_X, Scale::Log2, |v| {
        format::context_label(v.round() as u64)
    })
}

pub(super) fn prefill_block(runs: &[&Run]) -> Result<Option<ChartBlock>, ChartError> {
    let series = run_lines(runs.iter().map(|r| {
        r.prefill_cells()
            .filter_map(|c| Some((c.context_tokens as f64, c.prompt_tok_per_s?)))
            .collect()
    }));
    if series.iter().all(|s| s.points.is_empty()) {
        return Ok(None);
    }
    let contexts: BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.prefill_cells().map(|c| c.context_tokens))
        .collect();
    let shown: Vec<Vec<(u64, Option<String>)>> = runs
        .iter()
        .map(|r| compare_words::prefill_figures(r))
        .collect();
    let rows = contexts
        .iter()
        .map(|&ctx| {
            let mut row = vec![format::context_label(ctx)];
            for figures in &shown {
                let text = figures
                    .iter()
                    .find(|(c, _)| *c == ctx)
                    .and_then(|(_, t)| t.clone());
                row.push(text.unwrap_or_else(|| DASH.into()));
            }
            row
        })
        .collect();
    let title = compare_words::PREFILL_TITLE;
    let y = Axis::new(
        compare_words::PREFILL_Y,
        Scale::Linear,
        format::tok_per_s_short,
    );
    Ok(Some(ChartBlock {
        key: chart_key(&names(runs)),
        id: "prefill".into(),
        heading: compare_words::PREFILL.into(),
        kind: ChartKind::Prefill,
        per_gpu: false,
        svg: xy_chart(title, PREFILL_SIZE, &context_axis(), &y, &series)?,
        columns: std::iter::once(compare_words::CONTEXT.to_string())
            .chain(names(runs))
            .collect(),
        rows,
    }))
}

/// The figure's name on an axis: "total tok/s", "tok/s per GPU".
pub(super) fn tok_per_s_name(basis: Basis) -> &'static str {
    match basis {
        Basis::Total => compare_words::FIGURE_TOTAL,
        Basis::PerGpu => compare_words::FIGURE_PER_GPU,
    }
}

/// What the ids of a per-GPU block add to the total one's.
pub(super) fn basis_suffix(basis: Basis) -> &'static str {
    match basis {
        Basis::Total => "",
        Basis::PerGpu => "-per-gpu",
    }
}

/// Decode against concurrency, a chart per context at least two runs
/// measured, one line per run (style = position in `runs`), its table's
/// columns headed by `names`.
pub(crate) fn decode_blocks(
    runs: &[&Run],
    names: &[String],
    basis: Basis,
) -> Result<Vec<ChartBlock>, ChartError> {
    let id_suffix = basis_suffix(basis);
    let x = Axis::new(compare_words::DECODE_X, Scale::Log2, format::count_tick);
    let groups = compare::grid::shared_context_groups(runs);
    // Each run's Valid (concurrency, figure) in a group, at its own context.
    let points = |g: &compare::grid::ContextGroup| -> Vec<Vec<(f64, f64)>> {
        runs.iter()
            .zip(&g.0)
            .map(|(r, ctx)| {
                ctx.map_or_else(Vec::new, |ctx| {
                    compare::grid::valid_totals_at(r, ctx)
                        .into_iter()
                        .map(|(n, t)| (n, basis.of(r, t)))
                        .collect()
                })
            })
            .collect()
    };
    // One y-axis for every context, so the charts show what context costs.
    let y = Axis::new(
        tok_per_s_name(basis),
        Scale::Linear,
        format::tok_per_s_short,
    )
    .shared_over(
        groups
            .iter()
            .flat_map(|g| points(g).into_iter().flatten().map(|(_, t)| t)),
    );
    groups
        .iter()
        .map(|g| {
            let label = g.label();
            let ctx = g.tokens();
            let series = run_lines(points(g).into_iter());
            let rows = compare::grid::levels_in(runs, g)
                .into_iter()
                .map(|n| {
                    let mut row = vec![n.to_string()];
                    row.extend(runs.iter().zip(&g.0).map(|(r, c)| {
                        compare_words::decode_figure(r, c.and_then(|c| r.decode_cell(c, n)), basis)
                    }));
                    row
                })
                .collect();
            let title = compare_words::fill(
                compare_words::DECODE_TITLE,
                &[("context", &label), ("figure", tok_per_s_name(basis))],
            );
            Ok(ChartBlock {
                key: chart_key(names),
                // From the token count, never the label ("0 (no prompt)").
                id: format!("decode-{ctx}{id_suffix}"),
                heading: compare_words::fill(compare_words::DECODE_HEADING, &[("context", &label)]),
                svg: xy_chart(&title, DECODE_SIZE, &x, &y, &series)?,
                kind: ChartKind::Decode(label),
                per_gpu: basis == Basis::PerGpu,
                columns: std::iter::once(compare_words::REQUESTS_AT_ONCE.to_string())
                    .chain(names.iter().cloned())
                    .collect(),
                rows,
            })
        })
        .collect()
}

pub(super) fn interactivity_block(
    runs: &[&Run],
    basis: Basis,
) -> Result<Option<ChartBlock>, ChartError> {
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let mut points = compare::frontier::interactivity_points(r);
        for p in &mut points {
            p.total_tok_per_s = basis.of(r, p.total_tok_per_s);
        }
        // Thin lines: one per context, through its concurrency levels.
        for ctx in r.decode_contexts() {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.context_tokens == ctx)
                .map(|p| (p.per_request_tok_per_s, p.total_tok_per_s))
                .collect();
            series.push(Series {
                style: i,
                points: line,
                emphasis: false,
                joined: true,
                solid: false,
                // Thin lines name their context at their end.
                label: Some(format::context_label(ctx)),
            });
        }
        let xy: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.per_request_tok_per_s, p.total_tok_per_s))
            .collect();
        let frontier = compare::frontier::pareto_frontier(&xy);
        series.push(Series {
            style: i,
            points: frontier.iter().map(|&k| xy[k]).collect(),
            emphasis: true,
            joined: true,
            solid: false,
            label: None,
        });
        for (k, p) in points.iter().enumerate() {
            rows.push(vec![
                r.meta.model.clone(),
                format::context_label(p.context_tokens),
                p.concurrency.to_string(),
                format::tok_per_s(p.per_request_tok_per_s),
                format::tok_per_s(p.total_tok_per_s),
                if frontier.contains(&k) {
                    "yes".into()
                } else {
                    String::new()
                },
            ]);
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let x = Axis::new(
        "per-request tok/s (interactivity)",
        Scale::Linear,
        format::tok_per_s_short,
    );
    let y = Axis::new(
        format!("{} (throughput)", tok_per_s_name(basis)),
        Scale::Linear,
        format::tok_per_s_short,
    );
    let id_suffix = basis_suffix(basis);
    // "Total tok/s", "Tok/s per GPU": the axis name at the start of a sentence.
    let name = tok_per_s_name(basis);
    let figure = format!("{}{}", name[..1].to_uppercase(), &name[1..]);
    Ok(Some(ChartBlock {
        key: chart_key(&names(runs)),
        id: format!("interactivity{id_suffix}"),
        heading: "Throughput against interactivity".into(),
        kind: ChartKind::Interactivity,
        per_gpu: basis == Basis::PerGpu,
        svg: xy_chart(
            &format!("{figure} against per-request tok/s, with each run's Pareto frontier"),
            INTERACTIVITY_SIZE,
            &x,
            &y,
            &series,
        )?,
        columns: [
            "Run",
            "Context",
            compare_words::REQUESTS_AT_ONCE,
            "Per request tok/s",
            figure.as_str(),
            "On the frontier",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }))
}

pub(super) fn capacity_block(runs: &[&Run]) -> Result<Option<ChartBlock>, ChartError> {
    let frontiers: Vec<_> = runs
        .iter()
        .map(|r| compare::frontier::capacity_frontier(r))
        .collect();
    let contexts: BTreeSet<u64> = frontiers.iter().flat_map(|f| f.keys().copied()).collect();
    if contexts.is_empty() {
        return Ok(None);
    }
    let series = run_lines(frontiers.iter().map(|f| {
        f.iter()
            .filter_map(|(&ctx, n)| Some((ctx as f64, f64::from((*n)?))))
            .collect()
    }));
    let rows = contexts
        .iter()
        .map(|&ctx| {
            let mut row = vec![format::context_label(ctx)];
            for f in &frontiers {
                row.push(match f.get(&ctx) {
                    None => "not measured".into(),
                    Some(None) => "none valid".into(),
                    Some(Some(n)) => n.to_string(),
                });
            }
            row
        })
        .collect();
    let y = Axis::new(
        "most requests that ran valid",
        Scale::Log2,
        format::count_tick,
    );
    Ok(Some(ChartBlock {
        key: chart_key(&names(runs)),
        id: "capacity".into(),
        heading: "Capacity frontier".into(),
        kind: ChartKind::Capacity,
        per_gpu: false,
        svg: xy_chart(
            "Largest valid concurrency by context length",
            CAPACITY_SIZE,
            &context_axis(),
            &y,
            &series,
        )?,
        columns: std::iter::once(compare_words::CONTEXT.to_string())
            .chain(names(runs))
            .collect(),
        rows,
    }))
}
