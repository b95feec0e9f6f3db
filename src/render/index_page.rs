//! The site's front page: every run with its key figures.

use askama::Template;

use crate::compare::Comparison;
use crate::format;
use crate::labels;
use crate::model::{Run, Status};

#[derive(Template)]
#[template(path = "index.html")]
pub(crate) struct IndexPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    /// Newest measured first; runs without a date after, in id order.
    pub runs: Vec<RunSummary>,
    /// Whether any run has a date (the Measured column is shown then).
    pub dated: bool,
    pub comparisons: Vec<ComparisonSummary>,
    /// (link, title, runs) of every series.
    pub series: Vec<(String, String, usize)>,
    pub filters: Vec<Filter>,
    pub pick: PickBar,
}

/// The words of the index's pick bar, with the run limit already in them:
/// site.js fills in only the count, a run's model and id.
pub(crate) struct PickBar {
    pub min: usize,
    pub max: usize,
    pub select: String,
    pub select_more: String,
}

impl PickBar {
    fn new() -> PickBar {
        use crate::comparison_words::{PICK_SELECT, PICK_SELECT_MORE, fill};
        let (min, max) = (
            crate::compare::MIN_RUNS_PER_COMPARISON.to_string(),
            crate::compare::MAX_RUNS_PER_COMPARISON.to_string(),
        );
        let limits = [("min", min.as_str()), ("max", max.as_str())];
        PickBar {
            min: crate::compare::MIN_RUNS_PER_COMPARISON,
            max: crate::compare::MAX_RUNS_PER_COMPARISON,
            select: fill(PICK_SELECT, &limits),
            select_more: fill(PICK_SELECT_MORE, &limits),
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

/// Reads one filterable value of a run's row.
type RunField = fn(&RunSummary) -> &String;

pub(crate) struct ComparisonSummary {
    pub href: String,
    pub title: String,
    pub runs: String,
    pub hardware: String,
}

/// A figure with the value it sorts by (empty when absent).
pub(crate) struct Figure {
    pub sort: String,
    pub text: String,
}

impl Figure {
    fn none() -> Self {
        Figure {
            sort: String::new(),
            text: format::DASH.to_string(),
        }
    }
}

pub(crate) struct RunSummary {
    pub id: String,
    pub href: String,
    /// Filter values: model, GPU, engine, quantization.
    pub gpu: String,
    pub engine_name: String,
    pub quantization: String,
    pub model: String,
    pub hardware: String,
    pub engine: String,
    /// When the run was measured, sortable by its RFC 3339 text.
    pub measured: Figure,
    /// Decode tok/s of one request at the smallest context, "175.8 (8K)".
    pub single_stream: Figure,
    /// Highest total tok/s of a Valid cell, "2,270.4 (8K × 32)".
    pub peak_total: Figure,
    /// Longest context with a Valid measurement.
    pub largest_context: Figure,
    /// Prompt tok/s at 8K.
    pub prefill_8k: Figure,
}

impl RunSummary {
    /// The figure columns, in table order.
    pub fn figures(&self) -> [&Figure; 4] {
        [
            &self.single_stream,
            &self.peak_total,
            &self.largest_context,
            &self.prefill_8k,
        ]
    }
}

impl IndexPage {
    pub fn new(runs: &[Run], comparisons: &[Comparison], series: &[crate::series::Series]) -> Self {
        let mut order: Vec<&Run> = runs.iter().collect();
        // Newest first; undated runs keep their (id) order after the dated.
        order.sort_by(|a, b| match (&a.meta.measured_at, &b.meta.measured_at) {
            (Some(x), Some(y)) => y.cmp(x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let summaries: Vec<RunSummary> = order.into_iter().map(summary).collect();
        let options = |f: fn(&RunSummary) -> &String| {
            let set: std::collections::BTreeSet<String> =
                summaries.iter().map(|r| f(r).clone()).collect();
            set.into_iter().collect::<Vec<_>>()
        };
        let columns: [(&'static str, &'static str, RunField); 4] = [
            ("model", "Model", |r| &r.model),
            ("gpu", "GPU", |r| &r.gpu),
            ("engine", "Engine", |r| &r.engine_name),
            ("quantization", "Quantization", |r| &r.quantization),
        ];
        let filters = columns
            .into_iter()
            .map(|(key, label, value)| Filter {
                key,
                label,
                options: options(value),
            })
            .collect();
        IndexPage {
            root: "",
            page_title: "Speed test matrices".to_string(),
            generator: super::GENERATOR,
            dated: runs.iter().any(|r| r.meta.measured_at.is_some()),
            series: series
                .iter()
                .map(|s| {
                    (
                        format!("{}index.html", super::series_page::series_path(s)),
                        s.title.clone(),
                        s.runs.len(),
                    )
                })
                .collect(),
            runs: summaries,
            comparisons: comparisons
                .iter()
                .map(|c| ComparisonSummary {
                    href: format!("{}index.html", super::compare_path(c)),
                    title: c.title.clone(),
                    runs: c
                        .runs
                        .iter()
                        .map(|&i| runs[i].meta.model.as_str())
                        .collect::<Vec<_>>()
                        .join(" · "),
                    hardware: {
                        let mut hw: Vec<String> = c
                            .runs
                            .iter()
                            .map(|&i| labels::hardware_label(&runs[i].meta.hardware))
                            .collect();
                        hw.dedup();
                        hw.join(" · ")
                    },
                })
                .collect(),
            filters,
            pick: PickBar::new(),
        }
    }
}

fn summary(run: &Run) -> RunSummary {
    let valid = |s: Status| s == Status::Valid;
    let single_stream = run
        .decode_cells()
        .filter(|c| c.concurrency == 1 && valid(c.status))
        .find_map(|c| Some((c.context_tokens, c.total_tok_per_s?)))
        .map_or_else(Figure::none, |(ctx, v)| Figure {
            sort: v.to_string(),
            text: format!("{} ({})", format::tok_per_s(v), format::context_label(ctx)),
        });
    let peak_total = run
        .decode_cells()
        .filter(|c| valid(c.status))
        .filter_map(|c| Some((c, c.total_tok_per_s?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or_else(Figure::none, |(c, v)| Figure {
            sort: v.to_string(),
            text: format!(
                "{} ({} × {})",
                format::tok_per_s(v),
                format::context_label(c.context_tokens),
                c.concurrency
            ),
        });
    let largest_context = run
        .cells
        .iter()
        .filter(|c| valid(c.status()))
        .map(|c| c.context_tokens())
        .max()
        .map_or_else(Figure::none, |t| Figure {
            sort: t.to_string(),
            text: format::context_label(t),
        });
    let prefill_8k = run
        .prefill_cells()
        .find(|c| c.context_tokens == 8 * format::TOKENS_PER_K)
        .and_then(|c| c.prompt_tok_per_s)
        .map_or_else(Figure::none, |v| Figure {
            sort: v.to_string(),
            text: format::tok_per_s(v),
        });
    RunSummary {
        id: run.id.clone(),
        href: super::run_href(run),
        gpu: format!("{} ×{}", run.meta.hardware.gpu, run.meta.hardware.gpu_count),
        engine_name: run.meta.engine.name.clone(),
        quantization: run
            .meta
            .engine
            .quantization
            .clone()
            .unwrap_or_else(|| format::DASH.to_string()),
        model: run.meta.model.clone(),
        hardware: labels::hardware_label(&run.meta.hardware),
        engine: labels::engine_badges(&run.meta.engine).join(" · "),
        measured: run
            .meta
            .measured_at
            .as_deref()
            .map_or_else(Figure::none, |at| Figure {
                sort: at.to_string(),
                text: format::measured_at(at),
            }),
        single_stream,
        peak_total,
        largest_context,
        prefill_8k,
    }
}
