//! A comparison page: 2 to 6 runs side by side. Every chart has a title, a
//! caption and a table with its numbers.

use std::collections::BTreeSet;

use askama::Template;

use super::charts::lines::{Axis, MARKERS, Scale, Series, palette, xy_chart};
use super::charts::{CAPACITY_SIZE, ChartError, DECODE_SIZE, INTERACTIVITY_SIZE, PREFILL_SIZE};
use super::colour::ratio_shade;
use super::markdown::render_markdown;
use crate::compare;
use crate::compare::plan::Comparison;
use crate::compare::ratio::Basis;
use crate::model::Run;
use crate::model::format;
use crate::model::labels;
use crate::render::compare_words;

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
    pub energy: Option<EnergySection>,
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

/// One row of the side-by-side cards.
pub struct SetupRow {
    pub card: &'static str,
    pub label: String,
    pub values: Vec<String>,
    pub state: SetupState,
}

/// Whether the runs agree on a setup row. A run that does not state a value
/// is not a difference: unknown is not "differs".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupState {
    Same,
    Differs,
    /// Some run does not state it, and those that do agree.
    NotStated,
}

impl SetupState {
    /// Of one row's values, a dash standing for "not stated".
    pub(crate) fn of(values: &[String]) -> SetupState {
        let stated: Vec<&String> = values.iter().filter(|v| v.as_str() != DASH).collect();
        if stated.iter().any(|v| *v != stated[0]) {
            SetupState::Differs
        } else if stated.len() < values.len() {
            SetupState::NotStated
        } else {
            SetupState::Same
        }
    }
}

/// The key findings of a comparison.
pub(crate) struct Findings {
    /// One group per run after the first, against the first.
    pub pairs: Vec<FindingGroup>,
    /// How far each run reaches, one line per run.
    pub reach: Vec<String>,
}

pub(crate) struct FindingGroup {
    /// "Step against GLM", when more than two runs are compared.
    pub heading: Option<String>,
    /// The answer, first: who is faster where both ran, and whose peak is higher.
    pub answer: Vec<String>,
    pub items: Vec<Finding>,
}

/// "Decode: **0.81×** Step's total tok/s over GLM's, median of …".
pub(crate) struct Finding {
    pub label: String,
    pub figure: Option<String>,
    pub text: String,
}

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

/// Energy per output token, run against run, when any run recorded it.
pub(crate) struct EnergySection {
    pub matrices: Vec<RatioMatrix>,
    /// How each run's energy was found, one line per run.
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
                .filter(|r| compare::ratio::has_energy(r))
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
        Ok(ComparePage {
            root: "../../",
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
                    href: format!("../../{}", super::run_href(r)),
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
            energy: energy_section(&runs),
            interactivity: interactivity_block(&runs, Basis::Total)?,
            per_gpu: PerGpuView::new(&runs)?,
            shared_gpu_count: shared_gpu_count(&runs).filter(|&n| n > 1),
            capacity: capacity_block(&runs)?,
            cost: None,
        })
    }
}

fn setup_rows(runs: &[&Run]) -> Vec<SetupRow> {
    let values: Vec<Vec<compare::setup::SetupValue>> = runs
        .iter()
        .map(|r| compare::setup::setup_values(r))
        .collect();
    // Card by card, every field any run has, in the order they first appear.
    let mut cards: Vec<&str> = Vec::new();
    for v in values.iter().flatten() {
        if !cards.contains(&v.card) {
            cards.push(v.card);
        }
    }
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for card in cards {
        for v in values.iter().flatten().filter(|v| v.card == card) {
            if !keys.contains(&(v.card, v.field)) {
                keys.push((v.card, v.field));
            }
        }
    }
    keys.into_iter()
        .map(|(card, field)| {
            let row: Vec<String> = values
                .iter()
                .map(|vs| {
                    vs.iter()
                        .find(|v| v.card == card && v.field == field)
                        .map_or_else(|| DASH.to_string(), |v| v.value.clone())
                })
                .collect();
            SetupRow {
                card,
                label: field.to_string(),
                state: SetupState::of(&row),
                values: row,
            }
        })
        .collect()
}

/// The tools each run's figures come from: the tool of each imported cell,
/// else the run's benchmark tool, else sitegen itself.
fn tools_of(run: &Run) -> BTreeSet<String> {
    let imported: BTreeSet<String> = run
        .cells
        .iter()
        .filter_map(|c| c.measured_by())
        .map(|by| by.tool.clone())
        .collect();
    if !imported.is_empty() {
        return imported;
    }
    let named = run.meta.run.benchmark_tool.as_ref().map(|t| t.name.clone());
    BTreeSet::from([named.unwrap_or_else(|| "sitegen".into())])
}

fn tools_differ(runs: &[&Run]) -> Option<String> {
    let sets: Vec<BTreeSet<String>> = runs.iter().map(|r| tools_of(r)).collect();
    if sets.iter().all(|s| s == &sets[0]) {
        return None;
    }
    let all: BTreeSet<&String> = sets.iter().flatten().collect();
    let tools: Vec<&str> = all.into_iter().map(String::as_str).collect();
    Some(compare_words::fill(
        compare_words::TOOLS_DIFFER,
        &[("tools", &tools.join(", "))],
    ))
}

/// What a reader came for: each run against the first (decode on the fair
/// basis, by context, prefill, what could not be compared) and each run's
/// reach. Figures from `compare`, words from `compare_words`.
pub(crate) fn findings(runs: &[&Run]) -> Findings {
    use crate::render::compare_words as w;
    let basis = compare::findings::findings_basis(runs);
    let a = runs[0];
    let (an, figure) = (a.meta.model.as_str(), tok_per_s_name(basis));
    let pairs = runs[1..]
        .iter()
        .map(|b| {
            let f = compare::findings::pair_findings(a, b, basis);
            let bn = b.meta.model.as_str();
            let names = [("a", an), ("b", bn)];
            let mut items = best_findings(a, b, &f, basis);
            match f.decode {
                Some(d) => {
                    items.push(Finding {
                        label: w::FINDING_DECODE.into(),
                        figure: Some(format::ratio(d.median)),
                        text: w::fill(
                            w::FINDING_DECODE_TEXT,
                            &[
                                names[0],
                                names[1],
                                ("figure", figure),
                                ("count", &d.count.to_string()),
                                ("min", &format::ratio(d.min)),
                                ("max", &format::ratio(d.max)),
                                ("above", &d.above.to_string()),
                                ("below", &d.below.to_string()),
                            ],
                        ),
                    });
                    items.push(Finding {
                        label: w::FINDING_NOISE.into(),
                        figure: None,
                        text: if f.noise_unknown == d.count {
                            w::FINDING_NOISE_UNKNOWN.into()
                        } else {
                            w::fill(
                                w::FINDING_NOISE_TEXT,
                                &[
                                    ("within", &f.within_noise.to_string()),
                                    ("beyond", &f.beyond_noise.to_string()),
                                    ("unknown", &f.noise_unknown.to_string()),
                                ],
                            )
                        },
                    });
                    items.push(Finding {
                        label: w::FINDING_BY_CONTEXT.into(),
                        figure: None,
                        text: f
                            .decode_by_context
                            .iter()
                            .map(|(context, r)| {
                                w::fill(
                                    w::FINDING_BY_CONTEXT_ITEM,
                                    &[("context", context), ("ratio", &format::ratio(*r))],
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(" · "),
                    });
                }
                None => items.push(Finding {
                    label: w::FINDING_DECODE.into(),
                    figure: None,
                    text: w::fill(w::FINDING_NO_DECODE, &names),
                }),
            }
            items.extend(energy_finding(a, b, &f));
            if let Some(p) = f.prefill {
                let faster = if f.prefill_faster_at.is_empty() {
                    String::new()
                } else {
                    w::fill(
                        w::FINDING_PREFILL_FASTER,
                        &[("b", bn), ("contexts", &f.prefill_faster_at.join(", "))],
                    )
                };
                items.push(Finding {
                    label: w::FINDING_PREFILL.into(),
                    figure: Some(format::ratio(p.median)),
                    text: w::fill(
                        w::FINDING_PREFILL_TEXT,
                        &[
                            names[0],
                            names[1],
                            ("count", &p.count.to_string()),
                            ("min", &format::ratio(p.min)),
                            ("max", &format::ratio(p.max)),
                            ("faster", &faster),
                        ],
                    ),
                });
            }
            let not_compared = f.one_side_only + f.not_valid;
            if not_compared > 0 {
                items.push(Finding {
                    label: w::FINDING_NOT_COMPARED.into(),
                    figure: None,
                    text: w::fill(
                        w::FINDING_NOT_COMPARED_TEXT,
                        &[
                            ("n", &not_compared.to_string()),
                            ("one", &f.one_side_only.to_string()),
                            ("invalid", &f.not_valid.to_string()),
                        ],
                    ),
                });
            }
            FindingGroup {
                heading: (runs.len() > 2).then(|| w::fill(w::FINDINGS_PAIR, &names)),
                answer: answer(a, b, &f, basis),
                items,
            }
        })
        .collect();
    let reach = runs
        .iter()
        .map(|r| {
            let name = r.meta.model.as_str();
            let reach = compare::findings::reach(r);
            match (reach.largest_context, reach.most_requests) {
                (Some(ctx), Some((n, at))) => w::fill(
                    w::FINDING_REACH_RUN,
                    &[
                        ("name", name),
                        ("context", &format::context_label(ctx)),
                        ("requests", &format::counted(n as usize, "request")),
                        ("at", &format::context_label(at)),
                    ],
                ),
                _ => w::fill(w::FINDING_REACH_NONE, &[("name", name)]),
            }
        })
        .collect();
    Findings { pairs, reach }
}

/// The energy line of a pair's findings, when either run recorded energy:
/// b's J per output token over a's where both have it, or who lacks it.
fn energy_finding(a: &Run, b: &Run, f: &compare::findings::PairFindings) -> Option<Finding> {
    use crate::render::compare_words as w;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let text = match (f.energy, f.energy_recorded) {
        (_, [false, false]) => return None,
        (Some(e), _) => {
            return Some(Finding {
                label: w::FINDING_ENERGY.into(),
                figure: Some(format::ratio(e.median)),
                text: w::fill(
                    w::FINDING_ENERGY_TEXT,
                    &[
                        ("a", an),
                        ("b", bn),
                        ("count", &e.count.to_string()),
                        ("min", &format::ratio(e.min)),
                        ("max", &format::ratio(e.max)),
                        ("below", &e.below.to_string()),
                        ("above", &e.above.to_string()),
                    ],
                ),
            });
        }
        (None, [true, true]) => w::FINDING_ENERGY_NONE_SHARED.to_string(),
        (None, [recorded_a, _]) => w::fill(
            w::FINDING_ENERGY_ONE,
            &[("name", if recorded_a { an } else { bn })],
        ),
    };
    Some(Finding {
        label: w::FINDING_ENERGY.into(),
        figure: None,
        text,
    })
}

/// The energy ratio matrices of a comparison, each run against the first,
/// and how each run's energy was found; none when no run recorded any.
fn energy_section(runs: &[&Run]) -> Option<EnergySection> {
    use crate::render::compare_words as w;
    if !runs.iter().any(|r| compare::ratio::has_energy(r)) {
        return None;
    }
    let a = runs[0];
    let matrices = runs[1..]
        .iter()
        .map(|b| {
            ratio_matrix_between(
                a,
                b,
                format!("energy-{}", b.id),
                w::fill(
                    w::ENERGY_HEADING,
                    &[("b", &b.meta.model), ("a", &a.meta.model)],
                ),
                (&a.meta.model, &b.meta.model),
                compare::ratio::Figure::Energy,
            )
        })
        .collect();
    let sources = runs.iter().map(|r| compare_words::energy_note(r)).collect();
    Some(EnergySection { matrices, sources })
}

/// The answer to "which is faster, where, and by how much": who wins the
/// cells both ran validly, and whose peak valid throughput is higher. Each
/// sentence is about the cells it names (tests/compare_findings.rs checks
/// them against the cells of pairs where a summary would mislead).
pub(crate) fn answer(
    a: &Run,
    b: &Run,
    f: &compare::findings::PairFindings,
    basis: Basis,
) -> Vec<String> {
    use crate::render::compare_words as w;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let figure = tok_per_s_name(basis);
    let mut out = Vec::new();
    if let Some(d) = f.decode {
        let cells = format::counted(d.count, "cell");
        let median = format::ratio(d.median);
        let slots = [
            ("a", an),
            ("b", bn),
            ("cells", cells.as_str()),
            ("median", median.as_str()),
            ("figure", figure),
        ];
        out.push(if d.below == d.count {
            w::fill(w::ANSWER_ALL_A, &slots)
        } else if d.above == d.count {
            w::fill(w::ANSWER_ALL_B, &slots)
        } else {
            let (above, below) = (d.above.to_string(), d.below.to_string());
            let ties = d.count - d.above - d.below;
            let even = if ties > 0 {
                w::fill(w::ANSWER_EVEN_IN, &[("n", &ties.to_string())])
            } else {
                String::new()
            };
            let mut slots = slots.to_vec();
            slots.extend([
                ("above", above.as_str()),
                ("below", below.as_str()),
                ("even", even.as_str()),
            ]);
            w::fill(w::ANSWER_MIXED, &slots)
        });
    }
    let shown = |run: &Run, c: &compare::findings::BestCell| {
        format::tok_per_s(basis.of(run, c.total_tok_per_s))
    };
    match (f.peak.a, f.peak.b, f.peak.ratio) {
        (Some(pa), Some(pb), Some(r)) => {
            let even = format::ratio(r) == format::ratio(1.0);
            out.push(if even {
                w::fill(
                    w::ANSWER_PEAK_EVEN,
                    &[
                        ("ratio", &format::ratio(r)),
                        ("a", an),
                        ("b", bn),
                        ("a_total", &shown(a, &pa)),
                        ("b_total", &shown(b, &pb)),
                        ("a_at", &pa.at()),
                        ("b_at", &pb.at()),
                        ("figure", figure),
                    ],
                )
            } else {
                // The higher over the lower, so the figure reads as "2.06×".
                let ((hi, hi_run, hc), (lo, lo_run, lc), ratio) = if r > 1.0 {
                    ((bn, b, pb), (an, a, pa), r)
                } else {
                    ((an, a, pa), (bn, b, pb), 1.0 / r)
                };
                w::fill(
                    w::ANSWER_PEAK,
                    &[
                        ("hi", hi),
                        ("lo", lo),
                        ("ratio", &format::ratio(ratio)),
                        ("hi_total", &shown(hi_run, &hc)),
                        ("lo_total", &shown(lo_run, &lc)),
                        ("hi_at", &hc.at()),
                        ("lo_at", &lc.at()),
                        ("figure", figure),
                    ],
                )
            });
        }
        (Some(p), None, _) | (None, Some(p), _) => {
            let run = if f.peak.a.is_some() { a } else { b };
            out.push(w::fill(
                w::ANSWER_PEAK_ONE,
                &[
                    ("name", run.meta.model.as_str()),
                    ("total", &shown(run, &p)),
                    ("at", &p.at()),
                    ("figure", figure),
                ],
            ));
        }
        _ => {}
    }
    out
}

/// The findings of each run's best cells: its peak, and its most
/// throughput at each per-request speed.
fn best_findings(
    a: &Run,
    b: &Run,
    f: &compare::findings::PairFindings,
    basis: Basis,
) -> Vec<Finding> {
    use crate::render::compare_words as w;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let figure = tok_per_s_name(basis);
    let shown = |run: &Run, c: &compare::findings::BestCell| {
        format::tok_per_s(basis.of(run, c.total_tok_per_s))
    };
    let per_request = |c: &compare::findings::BestCell| {
        c.per_request_tok_per_s
            .map_or_else(|| format::DASH.to_string(), format::tok_per_s)
    };
    let mut items = Vec::new();
    if let (Some(pa), Some(pb), Some(r)) = (f.peak.a, f.peak.b, f.peak.ratio) {
        let per_gpu = |run: &Run, c: &compare::findings::BestCell| {
            format::tok_per_s(Basis::PerGpu.of(run, c.total_tok_per_s))
        };
        items.push(Finding {
            label: w::FINDING_PEAK.into(),
            figure: Some(format::ratio(r)),
            text: w::fill(
                w::FINDING_PEAK_TEXT,
                &[
                    ("a", an),
                    ("b", bn),
                    ("figure", figure),
                    ("a_total", &format::tok_per_s(pa.total_tok_per_s)),
                    ("b_total", &format::tok_per_s(pb.total_tok_per_s)),
                    ("a_per_gpu", &per_gpu(a, &pa)),
                    ("b_per_gpu", &per_gpu(b, &pb)),
                    ("a_at", &pa.at()),
                    ("b_at", &pb.at()),
                ],
            ),
        });
    }
    for (speed, pair) in &f.at_speed {
        let speed_text = format::trim_number(*speed);
        let label = w::fill(w::FINDING_AT_SPEED, &[("speed", &speed_text)]);
        match (pair.a, pair.b, pair.ratio) {
            (Some(ca), Some(cb), Some(r)) => items.push(Finding {
                label,
                figure: Some(format::ratio(r)),
                text: w::fill(
                    w::FINDING_AT_SPEED_TEXT,
                    &[
                        ("a", an),
                        ("b", bn),
                        ("figure", figure),
                        ("speed", &speed_text),
                        ("a_total", &shown(a, &ca)),
                        ("b_total", &shown(b, &cb)),
                        ("a_at", &ca.at()),
                        ("b_at", &cb.at()),
                        ("a_per", &per_request(&ca)),
                        ("b_per", &per_request(&cb)),
                    ],
                ),
            }),
            (Some(c), None, _) | (None, Some(c), _) => {
                let run = if pair.a.is_some() { a } else { b };
                items.push(Finding {
                    label,
                    figure: None,
                    text: w::fill(
                        w::FINDING_AT_SPEED_ONE,
                        &[
                            ("name", run.meta.model.as_str()),
                            ("speed", &speed_text),
                            ("total", &shown(run, &c)),
                            ("figure", figure),
                            ("at", &c.at()),
                            ("per", &per_request(&c)),
                        ],
                    ),
                });
            }
            _ => {}
        }
    }
    items
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
fn run_lines(points: impl Iterator<Item = Vec<(f64, f64)>>) -> Vec<Series> {
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

fn names(runs: &[&Run]) -> Vec<String> {
    runs.iter().map(|r| r.meta.model.clone()).collect()
}

fn context_axis() -> Axis {
    Axis::new(compare_words::PREFILL_X, Scale::Log2, |v| {
        format::context_label(v.round() as u64)
    })
}

fn prefill_block(runs: &[&Run]) -> Result<Option<ChartBlock>, ChartError> {
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
fn tok_per_s_name(basis: Basis) -> &'static str {
    match basis {
        Basis::Total => compare_words::FIGURE_TOTAL,
        Basis::PerGpu => compare_words::FIGURE_PER_GPU,
    }
}

/// What the ids of a per-GPU block add to the total one's.
fn basis_suffix(basis: Basis) -> &'static str {
    match basis {
        Basis::Total => "",
        Basis::PerGpu => "-per-gpu",
    }
}

/// Decode against concurrency, a chart per context at least two runs
/// measured, one line per run (style = position in `runs`), its table's
/// columns headed by `names`.
pub(super) fn decode_blocks(
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

/// Each later run against the first.
fn ratio_matrices(runs: &[&Run], basis: Basis) -> Vec<RatioMatrix> {
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
                compare::ratio::Figure::Throughput(basis),
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
    figure: compare::ratio::Figure,
) -> RatioMatrix {
    use crate::render::compare_words::{
        NEAR_CONTEXTS, NO_RATIO_AT_LEVEL, NO_RATIO_AT_ROW, STATE_AT_CONTEXTS, STATE_AT_LEVELS, fill,
    };
    let grid = compare::grid::RatioGrid::of(a, b, figure);
    let energy = figure == compare::ratio::Figure::Energy;
    // Less energy is better: it takes the colour of faster.
    let shade = |r: f64| ratio_shade(if energy { 1.0 / r } else { r });
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
                    Ok(j) if j.verdict == compare::ratio::Verdict::WithinNoise => RatioCell {
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
            if energy {
                compare_words::ENERGY_NO_RATIO_ANYWHERE
            } else {
                compare_words::NO_RATIO_ANYWHERE
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
        key: if energy {
            compare_words::energy_key()
        } else {
            compare_words::ratio_key()
        },
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

fn interactivity_block(runs: &[&Run], basis: Basis) -> Result<Option<ChartBlock>, ChartError> {
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

fn capacity_block(runs: &[&Run]) -> Result<Option<ChartBlock>, ChartError> {
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

#[cfg(test)]
mod tests {
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
            compare::ratio::Figure::Throughput(Basis::Total),
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
