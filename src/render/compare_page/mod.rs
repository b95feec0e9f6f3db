//! A comparison page: 2 to 6 runs side by side. Every chart has a title, a
//! caption and a table with its numbers.

pub(super) mod charts;
pub(super) mod findings;
pub(super) mod ratios;
pub(super) mod setup;

use askama::Template;

use super::charts::ChartError;
use super::charts::lines::{MARKERS, palette};
use super::markdown::render_markdown;
use crate::compare;
use crate::compare::plan::Comparison;
use crate::compare::ratio::Basis;
use crate::model::Run;
use crate::model::format;
use crate::model::labels;
use crate::render::compare_words;
pub(crate) use charts::{ChartBlock, ChartKind, decode_blocks};
use charts::{capacity_block, interactivity_block, names, prefill_block};
use findings::Findings;
pub(crate) use findings::findings;
use ratios::{FigureSection, figure_sections, ratio_matrices};
pub(crate) use ratios::{RatioCell, RatioMatrix, RatioRow};
use setup::{SetupRow, SetupState, setup_rows, tools_differ};

#[derive(Template)]
#[template(path = "compare.html")]
pub(crate) struct ComparePage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub title: String,
    pub runs: Vec<RunRef>,
    pub note_html: Option<String>,
    /// The answer first: each run against the first, and how far each reaches.
    pub findings: Findings,
    /// Said when the runs' figures come from different tools.
    pub tools_differ: Option<String>,
    pub setup: Vec<SetupRow>,
    pub prefill: Option<ChartBlock>,
    pub decode: Vec<ChartBlock>,
    pub ratios: Vec<RatioMatrix>,
    /// One section per figure beyond the headline that a run has.
    pub figures: Vec<FigureSection>,
    pub interactivity: Option<ChartBlock>,
    /// The decode charts, ratios and interactivity again in tok/s per GPU,
    /// shown by the page's toggle, when the runs have different GPU counts.
    pub per_gpu: Option<PerGpuView>,
    /// The GPU count every run shares, when it is more than one: per GPU
    /// then changes no ratio, and the page says so instead of a toggle.
    pub shared_gpu_count: Option<u32>,
    pub capacity: Option<ChartBlock>,
    /// Cost per million output tokens per run, when data/prices.json prices
    /// a GPU of the comparison.
    pub cost: Option<CostTable>,
}

/// What a comparison page shows in tok/s per GPU instead of in total.
pub(crate) struct PerGpuView {
    pub decode: Vec<ChartBlock>,
    pub ratios: Vec<RatioMatrix>,
    pub interactivity: Option<ChartBlock>,
}

impl PerGpuView {
    fn new(runs: &[&Run]) -> Result<Option<PerGpuView>, ChartError> {
        if shared_gpu_count(runs).is_some() {
            return Ok(None);
        }
        Ok(Some(PerGpuView {
            decode: decode_blocks(runs, &names(runs), Basis::PerGpu)?,
            ratios: ratio_matrices(runs, Basis::PerGpu),
            interactivity: interactivity_block(runs, Basis::PerGpu)?,
        }))
    }
}

/// The GPU count of every run, when they all have the same.
fn shared_gpu_count(runs: &[&Run]) -> Option<u32> {
    let first = runs.first()?.meta.hardware.gpu_count;
    runs.iter()
        .all(|r| r.meta.hardware.gpu_count == first)
        .then_some(first)
}

/// One cell: its context, requests at once, and per run (sort key, text).
pub(crate) struct CostRow {
    pub context: String,
    pub concurrency: u32,
    pub per_run: Vec<(String, String)>,
}

/// Each cell's cost per million output tokens, per run.
pub(crate) struct CostTable {
    pub columns: Vec<String>,
    pub rows: Vec<CostRow>,
    /// How each priced run's cost was computed.
    pub notes: Vec<String>,
    /// What the table holds.
    pub caption: &'static str,
}

/// A run of the comparison, as its legend entry.
pub(crate) struct RunRef {
    pub name: String,
    pub detail: String,
    pub href: String,
    pub colour: String,
    pub marker: &'static str,
}

const DASH: &str = format::DASH;

impl ComparePage {
    /// The setup rows that differ, or (`false`) the rest.
    pub(crate) fn setup_rows(&self, differing: bool) -> Vec<&SetupRow> {
        self.setup
            .iter()
            .filter(|r| (r.state == SetupState::Differs) == differing)
            .collect()
    }

    /// Adds the cost table when a run of the comparison has a priced GPU,
    /// or a kWh price and a run that recorded energy: per run its GPU-hour
    /// cost, then the electricity of each run with energy.
    /// Puts each tier's capacities first among every pair's findings.
    pub(crate) fn with_capacity(
        mut self,
        all: &[Run],
        c: &Comparison,
        slo: &crate::model::slo::SloFile,
    ) -> Self {
        let members: Vec<&Run> = c.runs.iter().map(|&i| &all[i]).collect();
        let named = compare_words::named_runs(&members);
        for (group, b) in self.findings.pairs.iter_mut().zip(&named[1..]) {
            let mut lines = findings::capacity_findings(&named[0], b, slo);
            lines.extend(findings::sessions_findings(&named[0], b));
            group.items.splice(0..0, lines);
        }
        self
    }

    pub(crate) fn with_cost(
        mut self,
        all: &[Run],
        c: &Comparison,
        prices: &crate::model::PricesFile,
    ) -> Self {
        use crate::compare::cost;
        let members: Vec<&Run> = c.runs.iter().map(|&i| &all[i]).collect();
        let named = compare_words::named_runs(&members);
        let runs: Vec<&Run> = named.iter().collect();
        let priced: Vec<Option<&crate::model::GpuPrice>> =
            runs.iter().map(|r| cost::price_for(prices, r)).collect();
        let gpu_hours = priced.iter().any(Option::is_some);
        let electricity = prices.electricity.as_ref();
        let with_energy: Vec<&Run> = match electricity {
            Some(_) => runs
                .iter()
                .copied()
                .filter(|r| compare::ratio::has(crate::model::figure::Figure::Energy, r))
                .collect(),
            None => Vec::new(),
        };
        if !gpu_hours && with_energy.is_empty() {
            return self;
        }
        let shown = |v: Option<f64>| {
            (
                v.map_or(String::new(), |v| v.to_string()),
                v.map_or(DASH.to_string(), crate::model::format::usd),
            )
        };
        let rows =
            compare::grid::valid_cells(&runs)
                .into_iter()
                .map(|(ctx, n)| {
                    let mut per_run: Vec<(String, String)> = Vec::new();
                    if gpu_hours {
                        per_run.extend(runs.iter().zip(&priced).map(|(r, p)| {
                            shown(p.zip(r.decode_cell(ctx, n)).and_then(|(p, d)| {
                                cost::usd_per_million_output_tokens(d, r.meta.hardware.gpu_count, p)
                            }))
                        }));
                    }
                    if let Some(e) = electricity {
                        per_run.extend(with_energy.iter().map(|r| {
                            shown(r.decode_cell(ctx, n).and_then(|d| {
                                cost::electricity_usd_per_million_output_tokens(d, e)
                            }))
                        }));
                    }
                    CostRow {
                        context: format::context_label(ctx),
                        concurrency: n,
                        per_run,
                    }
                })
                .collect();
        let mut columns: Vec<String> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        if gpu_hours {
            columns.extend(runs.iter().map(|r| r.meta.model.clone()));
            notes.extend(runs.iter().zip(&priced).map(|(r, p)| match p {
                Some(p) => format!(
                    "{}: {}",
                    r.meta.model,
                    cost::cost_note(r.meta.hardware.gpu_count, p)
                ),
                None => format!(
                    "{}: no price is known for {}.",
                    r.meta.model, r.meta.hardware.gpu
                ),
            }));
        }
        if let Some(e) = electricity.filter(|_| !with_energy.is_empty()) {
            columns.extend(
                with_energy
                    .iter()
                    .map(|r| format!("{}, {}", r.meta.model, cost::ELECTRICITY_WORD)),
            );
            notes.push(cost::electricity_note(e));
        }
        self.cost = Some(CostTable {
            caption: match (gpu_hours, with_energy.is_empty()) {
                (true, true) => {
                    "Every decode cell some run measured validly, at its GPUs' price per hour."
                }
                (true, false) => {
                    "Every decode cell some run measured validly, at its GPUs' price per hour, and the electricity of its GPUs' energy at the price of a kWh."
                }
                (false, _) => {
                    "Every decode cell some run measured validly: the electricity of its GPUs' energy at the price of a kWh."
                }
            },
            columns,
            rows,
            notes,
        });
        self
    }

    pub fn new(all: &[Run], c: &Comparison) -> Result<ComparePage, ChartError> {
        let members: Vec<&Run> = c.runs.iter().map(|&i| &all[i]).collect();
        // Named apart everywhere but the setup, which shows each model as stated.
        let named = compare_words::named_runs(&members);
        let runs: Vec<&Run> = named.iter().collect();
        let root = super::to_root(&super::compare_path(c));
        Ok(ComparePage {
            root,
            page_title: format!("{} · Comparison", c.title),
            generator: super::GENERATOR,
            title: c.title.clone(),
            runs: runs
                .iter()
                .enumerate()
                .map(|(i, r)| RunRef {
                    name: r.meta.model.clone(),
                    detail: format!(
                        "{} · {}",
                        labels::hardware_label(&r.meta.hardware),
                        labels::engine_badges(&r.meta.engine).join(" · ")
                    ),
                    href: format!("{root}{}", super::run_href(r)),
                    colour: palette(i),
                    marker: MARKERS[i % MARKERS.len()],
                })
                .collect(),
            note_html: c.note_markdown.as_deref().map(render_markdown),
            findings: findings(&runs),
            tools_differ: tools_differ(&runs),
            setup: setup_rows(&members),
            prefill: prefill_block(&runs)?,
            decode: decode_blocks(&runs, &names(&runs), Basis::Total)?,
            ratios: ratio_matrices(&runs, Basis::Total),
            figures: figure_sections(&runs),
            interactivity: interactivity_block(&runs, Basis::Total)?,
            per_gpu: PerGpuView::new(&runs)?,
            shared_gpu_count: shared_gpu_count(&runs).filter(|&n| n > 1),
            capacity: capacity_block(&runs)?,
            cost: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ratios::*;
    use super::*;
    use crate::compare::tests::with_cells;
    use crate::model::Status;

    #[test]
    fn a_verdict_stays_with_its_cell_when_a_column_is_left_out() {
        use Status::*;
        // Level 2 has no ratio and is left out; level 4 is 2% apart at ±5%
        // each: within noise, and said in that cell, not its neighbour.
        let mut a = with_cells(
            "a",
            &[
                (8192, 1, Valid, 100.0),
                (8192, 2, OverCapacity, 0.0),
                (8192, 4, Valid, 300.0),
            ],
        );
        let mut b = with_cells(
            "b",
            &[
                (8192, 1, Valid, 150.0),
                (8192, 2, OverCapacity, 0.0),
                (8192, 4, Valid, 306.0),
            ],
        );
        a.set_noise(0.05);
        b.set_noise(0.05);
        b.meta.model = "B".into();
        let m = ratio_matrix_between(
            &a,
            &b,
            "r".into(),
            "h".into(),
            ("A", "B"),
            (crate::model::figure::Figure::Throughput, Basis::Total),
        );
        assert_eq!(m.levels, [1, 4]);
        let cells = &m.rows[0].cells;
        assert_eq!((cells[0].class, cells[0].noise), ("faster", None));
        assert_eq!(
            (cells[1].class, cells[1].noise),
            ("even", Some(compare_words::WITHIN_NOISE))
        );
    }
}
