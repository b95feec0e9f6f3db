//! The page of a series: one setup measured again over time, each cell's
//! total tok/s across the runs and each run's change against the previous.

use super::charts::ChartError;
use super::charts::lines::{MARKERS, PALETTE, palette};
use super::compare_page::{ChartBlock, RatioMatrix, decode_blocks, ratio_matrix_between};
use crate::compare::Basis;
use crate::format;
use crate::model::{Run, Status};
use crate::series::{self, Series};

#[derive(askama::Template)]
#[template(path = "series.html")]
pub(crate) struct SeriesPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub title: String,
    pub runs: Vec<SeriesRun>,
    /// Run labels, oldest first: the value table's columns.
    pub labels: Vec<String>,
    /// Decode against concurrency per context, a line per run: the latest
    /// runs, as many as the palette has colours.
    pub decode: Vec<ChartBlock>,
    /// How many older runs the charts leave out.
    pub uncharted: usize,
    /// Every decode cell some run measured validly.
    pub values: Vec<ValueRow>,
    pub steps: Vec<StepBlock>,
    pub noise_percent: String,
    /// GPUs of the setup, for the per-GPU toggle.
    pub gpus: u32,
}

/// A cell across the runs.
pub(crate) struct ValueRow {
    pub context: String,
    pub concurrency: u32,
    pub per_run: Vec<RunValue>,
}

/// One run's total tok/s at a cell: raw ("" for none, it sorts by it), as
/// shown, and per GPU for the toggle.
pub(crate) struct RunValue {
    pub raw: String,
    pub text: String,
    pub per_gpu: Option<String>,
}

pub(crate) struct SeriesRun {
    pub label: String,
    pub href: String,
    pub measured: String,
    /// Its line's colour and marker on the charts, when it is charted.
    pub swatch: Option<(String, &'static str)>,
}

/// One run against the previous one: the summary line and the matrix.
pub(crate) struct StepBlock {
    pub summary: String,
    /// Whether some cell is slower by more than the noise threshold.
    pub regression: bool,
    pub matrix: RatioMatrix,
}

/// The URL of a series page, relative to the site root.
pub(crate) fn series_path(s: &Series) -> String {
    format!("series/{}/", s.slug)
}

impl SeriesPage {
    pub fn new(all: &[Run], s: &Series) -> Result<SeriesPage, ChartError> {
        let runs: Vec<&Run> = s.runs.iter().map(|&i| &all[i]).collect();
        let uncharted = runs.len().saturating_sub(PALETTE.len());
        let decode = decode_blocks(&runs[uncharted..], &s.labels[uncharted..], Basis::Total)?;
        let values = crate::compare::valid_cells(&runs)
            .into_iter()
            .map(|(ctx, n)| {
                let per_run = runs
                    .iter()
                    .map(|r| {
                        let words = |text: &str| RunValue {
                            raw: String::new(),
                            text: text.to_string(),
                            per_gpu: None,
                        };
                        match r.decode_cell(ctx, n) {
                            Some(c) if c.status == Status::Valid => {
                                c.total_tok_per_s.map_or(words(format::DASH), |v| RunValue {
                                    raw: v.to_string(),
                                    text: format::tok_per_s(v),
                                    per_gpu: super::run_page::per_gpu_text(r, v),
                                })
                            }
                            Some(c) => words(c.status.label()),
                            None => words(format::DASH),
                        }
                    })
                    .collect();
                ValueRow {
                    context: format::context_label(ctx),
                    concurrency: n,
                    per_run,
                }
            })
            .collect();
        let steps = runs
            .windows(2)
            .enumerate()
            .map(|(i, pair)| {
                let (prev, cur) = (pair[0], pair[1]);
                let step = series::step(prev, cur);
                let (a, b) = (&s.labels[i], &s.labels[i + 1]);
                StepBlock {
                    summary: series::step_sentence(a, &step),
                    regression: step.slower > 0,
                    matrix: ratio_matrix_between(
                        prev,
                        cur,
                        format!("change-{}", i + 1),
                        format!("{b} / {a}"),
                        (a, b),
                        // A series shares its GPUs: per GPU changes no ratio.
                        crate::compare::Basis::Total,
                    ),
                }
            })
            .collect();
        Ok(SeriesPage {
            root: "../../",
            page_title: format!("{} · Series", s.title),
            generator: super::GENERATOR,
            title: s.title.clone(),
            labels: s.labels.clone(),
            runs: runs
                .iter()
                .zip(&s.labels)
                .enumerate()
                .map(|(i, (r, label))| SeriesRun {
                    swatch: i
                        .checked_sub(uncharted)
                        .map(|style| (palette(style), MARKERS[style % MARKERS.len()])),
                    label: label.clone(),
                    href: format!("../../{}", super::run_href(r)),
                    measured: r
                        .meta
                        .measured_at
                        .as_deref()
                        .map_or(format::DASH.into(), format::measured_at),
                })
                .collect(),
            decode,
            uncharted,
            values,
            steps,
            noise_percent: format::trim_number(series::NOISE * 100.0),
            gpus: runs[0].meta.hardware.gpu_count,
        })
    }
}
