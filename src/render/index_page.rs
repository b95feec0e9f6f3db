//! The site's front page: every run with its key figures.

use askama::Template;

use super::SortedText;
use crate::compare::plan::Comparison;
use crate::model::format;
use crate::model::labels;
use crate::model::{Run, Status};

#[derive(Template)]
#[template(path = "index.html")]
pub(crate) struct IndexPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    /// What run links are relative to: the site root.
    pub link_prefix: &'static str,
    /// The newest [`INDEX_RUNS`]: newest measured first; runs without a
    /// date after, in id order.
    pub runs: Vec<Row>,
    /// How many runs the site has, "1,100".
    pub total_runs: String,
    /// The pages of every run, when the index does not show them all.
    pub run_pages: Vec<super::PageLink>,
    /// The script with every run's row ([`ALL_RUNS_JS`]) that site.js loads
    /// into the table on the first filter or sort; empty when the index
    /// lists every run.
    pub all_runs_src: &'static str,
    /// How many runs the script holds (the filter count says so before it loads).
    pub all_runs_count: usize,
    /// Which optional columns the runs table has.
    pub shape: Shape,
    pub comparisons: Vec<ComparisonSummary>,
    /// (link, title, runs, the newest run's verdict, whether a regression) of every series.
    pub series: Vec<(String, String, usize, String, bool)>,
    pub filters: Vec<Filter>,
    pub pick: PickBar,
    /// Tok/s per GPU against per-request tok/s, a line per recent run.
    pub overview: Option<Overview>,
}

/// The index's overview chart and its key.
pub(crate) struct Overview {
    pub svg: String,
    /// (name, colour, marker) per charted run.
    pub key: Vec<(String, String, &'static str)>,
    /// Runs with valid cells left off the chart (older ones).
    pub uncharted: usize,
}

/// The words of the index's pick bar, with the run limit already in them:
/// site.js fills in only the count, a run's model and id.
pub(crate) struct PickBar {
    pub min: usize,
    pub max: usize,
    /// The bar's state in words, limits filled in (`{n}`, `{more}` by site.js).
    pub none: String,
    pub too_few: String,
    pub too_many: String,
}

impl PickBar {
    fn new() -> PickBar {
        use crate::render::compare_words::{PICK_NONE, PICK_TOO_FEW, PICK_TOO_MANY, fill};
        let (min, max) = (
            crate::compare::plan::MIN_RUNS_PER_COMPARISON.to_string(),
            crate::compare::plan::MAX_RUNS_PER_COMPARISON.to_string(),
        );
        let limits = [("min", min.as_str()), ("max", max.as_str())];
        PickBar {
            min: crate::compare::plan::MIN_RUNS_PER_COMPARISON,
            max: crate::compare::plan::MAX_RUNS_PER_COMPARISON,
            none: fill(PICK_NONE, &limits),
            too_few: fill(PICK_TOO_FEW, &limits),
            too_many: fill(PICK_TOO_MANY, &limits),
        }
    }
}

/// A filter of the runs table (applied by site.js; the table is complete without it).
pub(crate) struct Filter {
    /// The row attribute it reads: `data-<key>`.
    pub key: &'static str,
    pub label: &'static str,
    pub options: Vec<String>,
}

/// The newest runs the index lists; the rest are on `all-runs/<n>/` pages,
/// so the front page stays light at thousands of runs.
pub(crate) const INDEX_RUNS: usize = 100;

/// Runs per `all-runs/<n>/` page.
pub(crate) const RUNS_PER_LIST_PAGE: usize = 500;

/// A page of every run, newest first: the index's table, [`RUNS_PER_LIST_PAGE`] rows.
#[derive(Template)]
#[template(path = "all_runs.html")]
pub(crate) struct AllRunsPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub link_prefix: &'static str,
    /// "Runs 501–1,000".
    pub range: String,
    pub total_runs: String,
    pub per_page: usize,
    pub run_pages: Vec<super::PageLink>,
    pub runs: Vec<Row>,
    pub shape: Shape,
    pub filters: Vec<Filter>,
    pub pick: PickBar,
    /// Never loaded here: the page lists its own runs whole.
    pub all_runs_src: &'static str,
    /// How many runs the script holds (the filter count says so before it loads).
    pub all_runs_count: usize,
}

/// Every run's row of the runs table, for site.js, relative to the root.
pub(crate) const ALL_RUNS_JS: &str = "all-runs/runs.js";

/// The script of every run's row, in index order: site.js builds each row
/// from it exactly as templates/runs_table.html writes one (the browser
/// tier compares them). Each run is [id, link, model, gpu, engine name,
/// quantization, name, cells], a cell [text, sort key or "", holds words].
pub(crate) fn all_runs_js(rows: &[Row], shape: &Shape) -> String {
    let runs: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let cells: Vec<serde_json::Value> = r
                .cells(shape)
                .into_iter()
                .map(|(f, words)| serde_json::json!([f.text, f.sort, words]))
                .collect();
            serde_json::json!([
                r.id,
                r.href,
                r.model,
                r.gpu,
                r.engine_name,
                r.quantization,
                r.name,
                cells
            ])
        })
        .collect();
    format!(
        "// Every run of the site, for the index's filters and sorting (static/site.js); written by sitegen.\nwindow.sitegenAllRuns = {};\n",
        serde_json::Value::Array(runs)
    )
}

/// Links to every list page from a page at `from_root` ("" or "../../").
fn list_links(total: usize, from_root: &str, current: Option<usize>) -> Vec<super::PageLink> {
    super::page_links(total, RUNS_PER_LIST_PAGE, current, |page| {
        format!("{from_root}all-runs/{}/index.html", page + 1)
    })
}

/// The filters of a runs table, with the values its rows have.
fn filters_of(rows: &[Row]) -> Vec<Filter> {
    let options = |f: RunField| {
        let set: std::collections::BTreeSet<String> = rows.iter().map(|r| f(r).clone()).collect();
        set.into_iter().collect::<Vec<_>>()
    };
    let columns: [(&'static str, &'static str, RunField); 4] = [
        ("model", "Model", |r| &r.model),
        ("gpu", "GPU", |r| &r.gpu),
        ("engine", "Engine", |r| &r.engine_name),
        ("quantization", "Quantization", |r| &r.quantization),
    ];
    columns
        .into_iter()
        .map(|(key, label, value)| Filter {
            key,
            label,
            options: options(value),
        })
        .collect()
}

/// Reads one filterable value of a run's row.
type RunField = fn(&RunSummary) -> &String;

pub(crate) struct ComparisonSummary {
    pub href: String,
    pub title: String,
    pub runs: String,
    pub hardware: String,
}

/// A run's row, shared: the index, the all-runs pages and `sitegen serve`
/// (which keeps the rows of unchanged runs) hold the same rows.
pub(crate) type Row = std::sync::Arc<RunSummary>;

#[derive(Clone)]
pub(crate) struct RunSummary {
    pub id: String,
    pub href: String,
    /// Filter values: model, GPU, engine, quantization.
    pub gpu: String,
    pub engine_name: String,
    pub quantization: String,
    pub model: String,
    /// The model, told apart from other runs of it ("GLM (vllm 0.29.0)").
    pub name: String,
    pub hardware: String,
    pub engine: String,
    /// When the run was measured, sortable by its RFC 3339 text.
    pub measured: SortedText,
    /// Decode tok/s of one request at the smallest context, "175.8 (8K)".
    pub single_stream: SortedText,
    /// Highest total tok/s of a Valid cell, "2,270.4 (8K × 32)".
    pub peak_total: SortedText,
    /// Longest context with a Valid measurement.
    pub peak_per_gpu: SortedText,
    pub largest_context: SortedText,
    /// Prompt tok/s at 8K.
    pub prefill_8k: SortedText,
    /// Most output tokens per joule of a Valid cell, "0.54 (32K × 4)".
    pub best_tok_per_joule: SortedText,
    /// Requests at once within the first tier at the smallest context
    /// judged, "16 (8K)".
    pub capacity: SortedText,
}

/// The runs table's optional columns: Measured when any run has a date,
/// Best tok/J when any run recorded its GPUs' energy, Users within budget
/// (its caption naming the tier) when some run can be judged at the first
/// tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    pub dated: bool,
    pub energy: bool,
    pub capacity: Option<String>,
}

impl Shape {
    fn of(runs: &[Run], tier: Option<&crate::model::slo::SloTier>) -> Shape {
        Shape {
            dated: runs.iter().any(|r| r.meta.measured_at.is_some()),
            energy: runs
                .iter()
                .any(|r| crate::compare::ratio::has(crate::model::figure::Figure::Energy, r)),
            capacity: tier
                .filter(|t| runs.iter().any(|r| smallest_capacity(r, t).is_some()))
                .map(|t| {
                    format!(
                        "Users within budget: the most requests at once whose cell met {} ({}) at the smallest context judged.",
                        t.name,
                        super::capacity::tier_limits(t)
                    )
                }),
        }
    }
}

/// The capacity of `run` at `tier` at its smallest context that can be
/// judged: (context, the most requests at once, `None` when none met it).
fn smallest_capacity(run: &Run, tier: &crate::model::slo::SloTier) -> Option<(u64, Option<u32>)> {
    let rows = crate::compare::capacity::capacity(run, tier);
    crate::compare::capacity::first_judged(&rows).map(|(ctx, c)| (ctx, c.max_concurrency))
}

/// A column of the runs table after the model's: its heading, whether it
/// holds words (left-aligned) rather than figures, and its cell of a run.
pub(crate) struct RunColumn {
    pub heading: &'static str,
    pub words: bool,
    cell: fn(&RunSummary) -> SortedText,
}

/// The runs table's columns after the model's, in order, once for the
/// pages and site.js's rows: the figures first (on a phone they are what
/// fits beside the model), then what the run ran on and when.
pub(crate) fn run_columns(shape: &Shape) -> Vec<RunColumn> {
    let mut columns = vec![
        RunColumn {
            heading: "Peak total tok/s",
            words: false,
            cell: |r| r.peak_total.clone(),
        },
        RunColumn {
            heading: "Single stream tok/s",
            words: false,
            cell: |r| r.single_stream.clone(),
        },
        RunColumn {
            heading: "Peak tok/s per GPU",
            words: false,
            cell: |r| r.peak_per_gpu.clone(),
        },
        RunColumn {
            heading: "Prefill tok/s at 8K",
            words: false,
            cell: |r| r.prefill_8k.clone(),
        },
        RunColumn {
            heading: "Largest context",
            words: false,
            cell: |r| r.largest_context.clone(),
        },
    ];
    if shape.energy {
        columns.push(RunColumn {
            heading: "Best tok/J",
            words: false,
            cell: |r| r.best_tok_per_joule.clone(),
        });
    }
    if shape.capacity.is_some() {
        columns.push(RunColumn {
            heading: "Users within budget",
            words: false,
            cell: |r| r.capacity.clone(),
        });
    }
    columns.extend([
        RunColumn {
            heading: "Hardware",
            words: true,
            cell: |r| SortedText::words(&r.hardware),
        },
        RunColumn {
            heading: "Engine",
            words: true,
            cell: |r| SortedText::words(&r.engine),
        },
    ]);
    if shape.dated {
        columns.push(RunColumn {
            heading: "Measured",
            words: false,
            cell: |r| r.measured.clone(),
        });
    }
    columns
}

impl RunSummary {
    /// The run's cells after the model's, in [`run_columns`] order.
    pub fn cells(&self, shape: &Shape) -> Vec<(SortedText, bool)> {
        run_columns(shape)
            .into_iter()
            .map(|c| ((c.cell)(self), c.words))
            .collect()
    }
}

/// Every run's row of the lists, in the order of `runs`. `kept(i, name)`
/// is a row made before for run `i` under that name, when the run has not
/// changed since (`sitegen serve` keeps them: a row per run of thousands).
pub(crate) fn run_rows(
    runs: &[Run],
    slo: &crate::model::slo::SloFile,
    kept: impl Fn(usize, &str) -> Option<Row> + Sync,
) -> Vec<Row> {
    let tier = slo.tiers.first();
    // Runs of one model told apart the same way in every list and key.
    let names = labels::distinct_names(&runs.iter().collect::<Vec<_>>());
    let at: Vec<usize> = (0..runs.len()).collect();
    crate::threads::map_in_order(&at, |&i| {
        kept(i, &names[i])
            .unwrap_or_else(|| std::sync::Arc::new(summary(&runs[i], names[i].clone(), tier)))
    })
}

impl IndexPages {
    /// The index of `runs`, and the pages and script of every run when it
    /// does not list them all; `rows` are their rows ([`run_rows`]).
    pub fn new(
        runs: &[Run],
        rows: Vec<Row>,
        comparisons: &[Comparison],
        series: &[crate::judge::series::Series],
        slo: &crate::model::slo::SloFile,
    ) -> Result<IndexPages, super::charts::ChartError> {
        let tier = slo.tiers.first();
        let all_names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
        let mut order: Vec<usize> = (0..runs.len()).collect();
        // Newest first; undated runs keep their (id) order after the dated.
        order.sort_by(
            |&a, &b| match (&runs[a].meta.measured_at, &runs[b].meta.measured_at) {
                (Some(x), Some(y)) => y.cmp(x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            },
        );
        let overview = overview(runs, &order, &all_names)?;
        let shape = Shape::of(runs, tier);
        // Every run's row, once: the index lists the newest; past
        // INDEX_RUNS, the all-runs pages list them all and the script the
        // index loads on demand holds them all. Filters offer every run's values.
        let mut rows: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
        let every: Vec<Row> = order
            .iter()
            .map(|&i| rows[i].take().expect("a row per run"))
            .collect();
        let paged = runs.len() > INDEX_RUNS;
        let filters = filters_of(&every);
        let all_runs = paged.then(|| all_runs_js(&every, &shape));
        let newest: Vec<Row> = every.iter().take(INDEX_RUNS).cloned().collect();
        let mut lists = Vec::new();
        if paged {
            let mut rows = every.into_iter();
            for page in 0.. {
                let rows: Vec<Row> = rows.by_ref().take(RUNS_PER_LIST_PAGE).collect();
                if rows.is_empty() {
                    break;
                }
                let range = super::page_range(page, RUNS_PER_LIST_PAGE, runs.len());
                let dir = format!("all-runs/{}/", page + 1);
                let root = super::to_root(&dir);
                let view = AllRunsPage {
                    root,
                    page_title: format!("{range} · Speed test matrices"),
                    generator: super::GENERATOR,
                    link_prefix: root,
                    range,
                    total_runs: format::count(runs.len() as u64),
                    per_page: RUNS_PER_LIST_PAGE,
                    run_pages: list_links(runs.len(), root, Some(page)),
                    filters: filters_of(&rows),
                    runs: rows,
                    shape: shape.clone(),
                    pick: PickBar::new(),
                    all_runs_src: "",
                    all_runs_count: 0,
                };
                lists.push((format!("{dir}index.html"), view));
            }
        }
        let index = IndexPage {
            all_runs_src: if paged { ALL_RUNS_JS } else { "" },
            all_runs_count: runs.len(),
            root: "",
            link_prefix: "",
            total_runs: format::count(runs.len() as u64),
            run_pages: if paged {
                list_links(runs.len(), "", None)
            } else {
                Vec::new()
            },
            page_title: "Speed test matrices".to_string(),
            generator: super::GENERATOR,
            shape,
            series: series
                .iter()
                .map(|s| {
                    (
                        format!("{}index.html", super::series_page::series_path(s)),
                        s.title.clone(),
                        s.runs.len(),
                        super::change_words::verdict_summary(&s.newest),
                        s.newest.verdict == crate::judge::change::Verdict::Regression,
                    )
                })
                .collect(),
            runs: newest,
            comparisons: comparisons
                .iter()
                .map(|c| ComparisonSummary {
                    href: format!("{}index.html", super::compare_path(c)),
                    title: c.title.clone(),
                    runs: c
                        .runs
                        .iter()
                        .map(|&i| all_names[i].as_str())
                        .collect::<Vec<_>>()
                        .join(" · "),
                    hardware: {
                        let mut hw: Vec<String> = c
                            .runs
                            .iter()
                            .map(|&i| labels::hardware_short(&runs[i].meta.hardware))
                            .collect();
                        hw.dedup();
                        hw.join(" · ")
                    },
                })
                .collect(),
            filters,
            pick: PickBar::new(),
            overview,
        };
        Ok(IndexPages {
            index,
            lists,
            all_runs,
        })
    }
}

/// The index, the pages of every run, and the script of every run's row
/// (these two when the index does not list every run).
pub(crate) struct IndexPages {
    pub index: IndexPage,
    pub lists: Vec<(String, AllRunsPage)>,
    pub all_runs: Option<String>,
}

/// Most runs the overview draws: one palette colour and marker each.
const OVERVIEW_RUNS: usize = super::charts::lines::PALETTE.len();

/// The chart people know from InferenceMAX: for each run, its Pareto
/// frontier of tok/s per GPU against per-request tok/s over its Valid decode
/// cells. The most recent runs (`order` is newest first) up to the palette.
fn overview(
    runs: &[Run],
    order: &[usize],
    names: &[String],
) -> Result<Option<Overview>, super::charts::ChartError> {
    use super::charts::lines::{Axis, MARKERS, Scale, Series, palette, xy_chart};
    let basis = crate::compare::ratio::Basis::PerGpu;
    // (run, its points as (per-request, per GPU)), newest first.
    let with_xy = |i: usize| {
        let r = &runs[i];
        let xy: Vec<(f64, f64)> = crate::compare::frontier::interactivity_points(r)
            .iter()
            .map(|p| (p.per_request_tok_per_s, basis.of(r, p.total_tok_per_s)))
            .collect();
        (!xy.is_empty()).then_some((i, xy))
    };
    // The runs charted; after the last of them, those left out are only counted.
    let mut left = order.iter();
    let charted: Vec<(usize, Vec<(f64, f64)>)> = left
        .by_ref()
        .filter_map(|&i| with_xy(i))
        .take(OVERVIEW_RUNS)
        .collect();
    if charted.is_empty() {
        return Ok(None);
    }
    let series: Vec<Series> = charted
        .iter()
        .enumerate()
        .map(|(style, (_, xy))| Series {
            style,
            points: crate::compare::frontier::pareto_frontier(xy)
                .into_iter()
                .map(|k| xy[k])
                .collect(),
            emphasis: true,
            joined: true,
            solid: false,
            label: None,
        })
        .collect();
    let x = Axis::new(
        "per-request tok/s (interactivity)",
        Scale::Linear,
        format::tok_per_s_short,
    );
    let y = Axis::new("tok/s per GPU", Scale::Linear, format::tok_per_s_short);
    let svg = xy_chart(
        "Tok/s per GPU against per-request tok/s: each run's best trade-offs",
        super::charts::INTERACTIVITY_SIZE,
        &x,
        &y,
        &series,
    )?;
    Ok(Some(Overview {
        svg,
        key: charted
            .iter()
            .enumerate()
            .map(|(style, &(i, _))| {
                (
                    format!(
                        "{} · {}",
                        names[i],
                        labels::hardware_short(&runs[i].meta.hardware)
                    ),
                    palette(style),
                    MARKERS[style % MARKERS.len()],
                )
            })
            .collect(),
        uncharted: left
            .filter(|&&i| crate::compare::frontier::has_interactivity_points(&runs[i]))
            .count(),
    }))
}

fn summary(run: &Run, name: String, tier: Option<&crate::model::slo::SloTier>) -> RunSummary {
    let valid = |s: Status| s == Status::Valid;
    let single_stream =
        crate::compare::findings::single_stream(run).map_or_else(SortedText::none, |(ctx, v)| {
            SortedText {
                sort: v.to_string(),
                text: format!("{} ({})", format::tok_per_s(v), format::context_label(ctx)),
            }
        });
    let peak = crate::compare::findings::best_valid(run, 0.0);
    let peak_total = peak.map_or_else(SortedText::none, |c| SortedText {
        sort: c.total_tok_per_s.to_string(),
        text: format!("{} ({})", format::tok_per_s(c.total_tok_per_s), c.at()),
    });
    let peak_per_gpu = peak.map_or_else(SortedText::none, |c| {
        let v = crate::compare::ratio::Basis::PerGpu.of(run, c.total_tok_per_s);
        SortedText {
            sort: v.to_string(),
            text: format::tok_per_s(v),
        }
    });
    let largest_context = run
        .cells
        .iter()
        .filter(|c| valid(c.status()))
        .map(|c| c.context_tokens())
        .max()
        .map_or_else(SortedText::none, |t| SortedText {
            sort: t.to_string(),
            text: format::context_label(t),
        });
    let prefill_8k = run
        .prefill_cells()
        .find(|c| c.context_tokens == 8 * format::TOKENS_PER_K)
        .and_then(|c| c.prompt_tok_per_s)
        .map_or_else(SortedText::none, |v| SortedText {
            sort: v.to_string(),
            text: format::tok_per_s(v),
        });
    let best_tok_per_joule =
        crate::compare::findings::best_energy(run).map_or_else(SortedText::none, |(v, ctx, n)| {
            SortedText {
                sort: v.to_string(),
                text: format!(
                    "{} ({})",
                    format::tok_per_joule(v),
                    format::cell_label(ctx, n)
                ),
            }
        });
    let capacity =
        tier.and_then(|t| smallest_capacity(run, t))
            .map_or_else(SortedText::none, |(ctx, n)| SortedText {
                sort: n.unwrap_or(0).to_string(),
                text: format!(
                    "{} ({})",
                    n.map_or_else(|| "none".to_string(), |n| n.to_string()),
                    format::context_label(ctx)
                ),
            });
    RunSummary {
        capacity,
        best_tok_per_joule,
        id: run.id.clone(),
        href: super::run_href(run),
        gpu: labels::hardware_short(&run.meta.hardware),
        engine_name: run.meta.engine.name.clone(),
        quantization: run
            .meta
            .engine
            .quantization
            .clone()
            .unwrap_or_else(|| format::DASH.to_string()),
        model: run.meta.model.clone(),
        name,
        hardware: labels::hardware_short(&run.meta.hardware),
        engine: labels::engine_badges(&run.meta.engine).join(" · "),
        measured: run
            .meta
            .measured_at
            .as_deref()
            .map_or_else(SortedText::none, |at| SortedText {
                sort: at.to_string(),
                text: format::measured_at(at),
            }),
        single_stream,
        peak_total,
        peak_per_gpu,
        largest_context,
        prefill_8k,
    }
}
