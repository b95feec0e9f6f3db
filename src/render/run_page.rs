//! The page of one run: cards, launch command, prefill chart, decode matrix
//! and the full measurement table, as the reference pages show them.

use askama::Template;

use super::charts::ChartError;
use super::charts::prefill::{PrefillBar, prefill_chart};
use super::colour::{LogScale, fill_style, viridis};
use super::markdown::render_markdown;
use crate::compare::plan::Comparison;
use crate::model::figure::{Beside, Better, Figure};
use crate::model::format;
use crate::model::labels;
use crate::model::labels::Card;
use crate::model::reason::Reason;
use crate::model::table;
use crate::model::{Cell, DecodeCell, Run, Status, Throttle};

#[derive(Template)]
#[template(path = "run.html")]
pub struct RunPage {
    /// Relative path from this page to the site root ("../../").
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub title: String,
    /// "vllm", "0.29.0", "BF16".
    pub badges: Vec<String>,
    /// "8 contexts (...) × 8 concurrency levels (...)", "prefill at ...".
    pub summary: Vec<String>,
    /// The answer first: (what, figure, where), e.g. ("Peak", "2,270.4
    /// total tok/s", "at 8K × 32"), each from the run's Valid cells.
    pub key_figures: Vec<(String, String, String)>,
    pub cards: Vec<Card>,
    pub launch_command: Option<String>,
    pub notes_html: Option<String>,
    /// How imported figures were defined, one entry per source tool.
    pub definitions: Vec<ToolDefinitions>,
    pub prefill_svg: Option<String>,
    pub prefill_caption: &'static str,
    /// The headline figure's matrix, under "Sustained decode".
    pub matrix: Option<Matrix>,
    /// Every other figure's matrix (energy per output token ...), where a
    /// cell of the run has it.
    pub other_matrices: Vec<Matrix>,
    pub decode_caption: &'static str,
    /// (CSS class of its swatch, sentence): one per status present.
    pub legend: Vec<(&'static str, &'static str)>,
    /// Why each cell without a clean figure has none: "64K × 128: Error (HTTP 500: engine core died)".
    pub reasons: Vec<String>,
    /// Tokens per second across each decode window that recorded them.
    pub stability: Vec<Sparkline>,
    /// Said of TTFT unless a tool measured it otherwise (see `definitions`).
    pub ttft_note: Option<&'static str>,
    pub table_note: &'static str,
    pub columns: Vec<&'static str>,
    pub rows: Vec<TableRow>,
    pub source: Option<String>,
    /// Comparison pages this run is part of: (link, title).
    pub comparisons: Vec<(String, String)>,
    /// The series this run belongs to, if any.
    pub series: Option<SeriesLine>,
    /// GPUs of the run, for the per-GPU toggle of tok/s figures.
    pub gpus: u32,
    /// Index of the Total tok/s column in `columns`.
    pub total_column: usize,
    /// Index of the Reason column, when shown (else past the end).
    pub reason_column: usize,
    /// How the cost column was computed, when data/prices.json prices the GPU.
    pub cost_note: Option<String>,
    /// How the electricity column was computed, when data/prices.json
    /// prices a kWh and the run recorded energy.
    pub electricity_note: Option<String>,
    /// Users within each latency budget (`with_capacity`).
    pub capacity: Option<super::capacity::CapacitySection>,
    /// What the matrix's mark means, when a cell met the chosen tier.
    pub capacity_mark: Option<String>,
    /// Points measured at a paced request rate (`with_paced`).
    pub paced: Option<super::paced::PacedSection>,
    /// Sessions windows (`with_sessions`).
    pub sessions: Option<super::sessions::SessionsSection>,
}

/// A run's place in its series: a link, and how it compares with the
/// previous run (none for the first).
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesLine {
    pub href: String,
    pub title: String,
    pub against_previous: Option<String>,
    /// Whether some cell is slower than in the previous run beyond noise.
    pub regression: bool,
}

/// Figures a benchmark tool defines differently from docs/measurement.md.
pub struct ToolDefinitions {
    pub tool: String,
    /// Cells of the run this tool measured.
    pub cells: usize,
    /// (column name on the page, the tool's definition), in table order.
    pub items: Vec<(&'static str, String)>,
}

/// The definitions every imported cell carries, gathered per tool: a cell's
/// figures are read with its tool's definitions, not sitegen's.
pub(crate) fn tool_definitions(run: &Run) -> Vec<ToolDefinitions> {
    let mut out: Vec<ToolDefinitions> = Vec::new();
    for by in run.cells.iter().filter_map(Cell::measured_by) {
        let i = match out.iter().position(|t| t.tool == by.tool) {
            Some(i) => i,
            None => {
                out.push(ToolDefinitions {
                    tool: by.tool.clone(),
                    cells: 0,
                    items: Vec::new(),
                });
                out.len() - 1
            }
        };
        let entry = &mut out[i];
        entry.cells += 1;
        for (field, text) in &by.definitions {
            // A cell's latency percentiles are not a table column of their own.
            let label = match field.as_str() {
                "latency" => "Latency percentiles",
                _ => table::label_of(field).unwrap_or("Other"),
            };
            if !entry.items.iter().any(|(l, t)| *l == label && t == text) {
                entry.items.push((label, text.clone()));
            }
        }
    }
    let order = |label: &str| {
        table::COLUMNS
            .iter()
            .position(|c| c.header.unwrap_or(c.csv_name) == label)
            .unwrap_or(usize::MAX)
    };
    for t in &mut out {
        t.items.sort_by_key(|(label, _)| order(label));
    }
    out
}

/// One figure's matrix (throughput, energy per output token ...): rows
/// are contexts, columns concurrency levels. Built by `matrix` from the
/// figure's definition, the same for every figure.
pub struct Matrix {
    /// The figure's key: "total", "energy".
    pub key: &'static str,
    pub heading: &'static str,
    /// Its caption, for a figure beyond the headline (the headline's
    /// section has its own).
    pub caption: String,
    pub levels: Vec<u32>,
    pub rows: Vec<MatrixRow>,
    /// The figure at the two ends of the colour scale (worse, better), for
    /// its legend, and the unit after them.
    pub scale_low: String,
    pub scale_high: String,
    pub scale_unit: &'static str,
    /// CSS gradient of the scale, for its legend.
    pub scale_gradient: String,
}

pub struct MatrixRow {
    pub context: String,
    pub cells: Vec<MatrixCell>,
}

pub struct MatrixCell {
    /// CSS class of the status ("valid", "requests-queued", ...), or "missing".
    pub class: &'static str,
    /// Inline colours for cells with the figure.
    pub style: Option<String>,
    /// The figure, or "not recorded" for a cell with figures but not this one.
    pub value: Option<String>,
    /// `value` shared out over the run's GPUs, for the per-GPU toggle
    /// (a figure that can be, on runs of more than one GPU).
    pub per_gpu: Option<String>,
    /// Status words for cells that are not Valid.
    pub flag: Option<&'static str>,
    /// What the figure's definition shows beside it, each with its CSS
    /// class: ("ttft", "512 ms TTFT"), ("flag", "throttled: thermal").
    pub beside: Vec<(&'static str, String)>,
    /// Full description for assistive technology and tooltips.
    pub describe: String,
    /// Why the cell has its status, when the data says: the page also lists
    /// it under the matrix, never only in the tooltip.
    pub reason: Option<String>,
    /// It met the chosen latency tier (`with_capacity`): marked by its
    /// class, so its text stays the reference's, and said in `describe`.
    pub slo: bool,
}

/// One decode window's tokens per second, drawn small.
pub struct Sparkline {
    /// "8K × 4".
    pub cell: String,
    /// An inline SVG polyline, numbers only.
    pub svg: String,
    /// "1,380 to 1,433 tok/s per second, ± 1.4%".
    pub range: String,
    /// The same window's other series where recorded: (what, polyline,
    /// range), e.g. ("GPU power", svg, "180 to 221 W").
    pub also: Vec<(&'static str, String, String)>,
}

/// Readings across a window as a polyline 120 × 24 px, placed by their
/// time, from 0 up to `top`: a window's power or KV-cache usage.
pub(crate) fn series_sparkline(points: &[(f64, f64)], window_s: f64, top: f64) -> Option<String> {
    if points.len() < 2 || window_s <= 0.0 || top <= 0.0 {
        return None;
    }
    let (w, h) = (120.0, 24.0);
    let line: Vec<String> = points
        .iter()
        .map(|&(t, v)| {
            let x = (t / window_s).clamp(0.0, 1.0) * w;
            let y = h - 1.0 - (v / top).clamp(0.0, 1.0) * (h - 2.0);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    Some(format!(
        r#"<svg class="spark" viewBox="0 0 120 24" width="120" height="24" aria-hidden="true"><polyline points="{}" fill="none" stroke="currentColor" stroke-width="1.5"/></svg>"#,
        line.join(" ")
    ))
}

/// "180.0 to 221.5 W", or "180.0 W throughout" where the two read alike.
fn spread_words(lo: String, hi: String, after: &str) -> String {
    if lo == hi {
        format!("{lo}{after} throughout")
    } else {
        format!("{lo} to {hi}{after}")
    }
}

/// A decode window's power and KV-cache series as sparklines with their
/// ranges, where the runner recorded them.
fn window_series(c: &crate::model::DecodeCell) -> Vec<(&'static str, String, String)> {
    let (Some(d), Some(window)) = (c.detail.as_ref(), c.measured_s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let range = |points: &[(f64, f64)]| {
        let lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let power = &d.gpu_power_w;
    let (lo, hi) = range(power);
    if let Some(svg) = series_sparkline(power, window, hi) {
        out.push((
            "GPU power",
            svg,
            spread_words(format::watts(lo), format::watts(hi), ""),
        ));
    }
    let kv: Vec<(f64, f64)> = d
        .server
        .iter()
        .flat_map(|s| &s.samples)
        .filter_map(|m| Some((m.t_s, m.kv_cache_usage?)))
        .filter(|(t, _)| (0.0..=window).contains(t))
        .collect();
    let (lo, hi) = range(&kv);
    if let Some(svg) = series_sparkline(&kv, window, 1.0) {
        out.push((
            "KV cache",
            svg,
            spread_words(format::share(lo), format::share(hi), " full"),
        ));
    }
    out
}

/// The seconds of a window as a polyline 120 × 24 px: its shape, from 0
/// up to the busiest second (the last, partial second left out).
pub(crate) fn sparkline(per_second: &[u64]) -> Option<String> {
    let full = &per_second[..per_second.len().saturating_sub(1)];
    if full.len() < 2 {
        return None;
    }
    let top = *full.iter().max()? as f64;
    let (w, h) = (120.0, 24.0);
    let points: Vec<String> = full
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let x = i as f64 * w / (full.len() - 1) as f64;
            let y = h
                - 1.0
                - if top > 0.0 {
                    k as f64 / top * (h - 2.0)
                } else {
                    0.0
                };
            format!("{x:.1},{y:.1}")
        })
        .collect();
    Some(format!(
        r#"<svg class="spark" viewBox="0 0 120 24" width="120" height="24" aria-hidden="true"><polyline points="{}" fill="none" stroke="currentColor" stroke-width="1.5"/></svg>"#,
        points.join(" ")
    ))
}

/// A row of the full measurement table: (sort key, text) per column.
pub struct TableRow {
    pub class: &'static str,
    pub cells: Vec<(String, String)>,
    /// The total tok/s column's figure per GPU, for the per-GPU toggle.
    pub per_gpu: Option<String>,
}

/// What a reader asks first of a run, from its Valid cells: its peak
/// throughput and where, one request's speed, and its prefill speed.
pub(crate) fn key_figures(run: &Run) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if let Some(p) = crate::compare::findings::best_valid(run, 0.0) {
        out.push((
            "Peak",
            format!("{} total tok/s", format::tok_per_s(p.total_tok_per_s)),
            format!("at {}", p.at()),
        ));
    }
    if let Some((ctx, v)) = crate::compare::findings::single_stream(run) {
        out.push((
            "One request",
            format!("{} tok/s", format::tok_per_s(v)),
            format!("at {}", format::context_label(ctx)),
        ));
    }
    if let Some((ctx, v)) = crate::compare::findings::first_prefill(run) {
        out.push((
            "Prefill",
            format!("{} prompt tok/s", format::tok_per_s(v)),
            format!("at {}", format::context_label(ctx)),
        ));
    }
    if let Some((tok_per_j, ctx, n)) = crate::compare::findings::best_energy(run) {
        out.push((
            "Least energy",
            format!("{} per output token", format::joules(1.0 / tok_per_j)),
            format!("at {}", format::cell_label(ctx, n)),
        ));
    }
    // Every measured cell whose GPUs slowed themselves, where.
    let measured = run.decode_cells().count();
    let throttled: Vec<String> = run
        .decode_cells()
        .filter_map(|c| {
            let t = c.gpu_telemetry()?.throttle?;
            (t != Throttle::Ok).then(|| {
                format!(
                    "{} ({})",
                    format::cell_label(c.context_tokens, c.concurrency),
                    t.label()
                )
            })
        })
        .collect();
    if !throttled.is_empty() {
        out.push((
            "Throttled",
            format!(
                "{} of {}",
                throttled.len(),
                format::counted(measured, "cell")
            ),
            format!("at {}", format::and_list(&throttled)),
        ));
    }
    out
}

impl RunPage {
    /// Whether any window of the Stability list has a power or KV series.
    pub(crate) fn stability_has_series(&self) -> bool {
        self.stability.iter().any(|s| !s.also.is_empty())
    }

    pub fn new(run: &Run, compared_in: &[&Comparison]) -> Result<Self, ChartError> {
        let title = labels::run_title(run);
        let prefill_svg = prefill_bars(run)
            .map(|bars| prefill_chart(&bars, &format!("Prefill: {}", labels::PREFILL_CAPTION)))
            .transpose()?;
        let columns = table::run_page_columns(&run.cells);
        let root = super::to_root(&super::run_path(run));
        Ok(RunPage {
            root,
            page_title: format!("{title} · Speed test matrix"),
            generator: super::GENERATOR,
            badges: labels::engine_badges(&run.meta.engine),
            key_figures: key_figures(run)
                .into_iter()
                .map(|(what, figure, at)| (what.to_string(), figure, at))
                .collect(),
            summary: [labels::matrix_summary(run), labels::prefill_summary(run)]
                .into_iter()
                .flatten()
                .collect(),
            title,
            cards: run_cards(run),
            launch_command: run.meta.launch_command.clone(),
            notes_html: run.notes_markdown.as_deref().map(render_markdown),
            definitions: tool_definitions(run),
            prefill_svg,
            prefill_caption: labels::PREFILL_CAPTION,
            matrix: matrix(run, Figure::Throughput),
            other_matrices: Figure::ALL[1..]
                .iter()
                .filter(|&&f| crate::compare::ratio::has(f, run))
                .filter_map(|&f| matrix(run, f))
                .collect(),
            decode_caption: labels::DECODE_CAPTION,
            legend: labels::legend_entries(run.decode_cells().map(|c| c.status))
                .into_iter()
                .map(|(status, text)| (status.css_class(), text))
                .chain(
                    run.decode_cells()
                        .any(|c| c.long_pause_ms().is_some())
                        .then_some(("pause", labels::PAUSE_LEGEND)),
                )
                .collect(),
            reasons: run
                .decode_cells()
                // The status shows in the cell; its reason, when it has
                // one, would otherwise only be in a tooltip.
                .filter_map(|c| {
                    let at = format!(
                        "{} × {}",
                        format::context_label(c.context_tokens),
                        c.concurrency
                    );
                    let why_telemetry = telemetry_facts(c);
                    if let Some(why) = c.reason.as_ref().map(Reason::words) {
                        let facts = why_telemetry.map_or(String::new(), |f| format!("; {f}"));
                        return Some(format!("{at}: {} ({why}){facts}", c.status.label()));
                    }
                    if let Some(f) = why_telemetry {
                        return Some(format!("{at}: {f}"));
                    }
                    // A Valid cell whose rate moved within its window.
                    let d = c.detail.as_ref()?.drift?;
                    Some(format!(
                        "{at}: the rate drifted within the window (its last third ran at {} of its first): the engine had not settled",
                        format::ratio(d)
                    ))
                })
                .collect(),
            stability: run
                .decode_cells()
                .filter(|c| c.status.has_figures())
                .filter_map(|c| {
                    let seconds = &c.detail.as_ref()?.tokens_per_second;
                    let full = &seconds[..seconds.len().saturating_sub(1)];
                    let (lo, hi) = (full.iter().min()?, full.iter().max()?);
                    let noise = c
                        .total_noise()
                        .map(|h| format!(", {}", format::plus_minus(h)))
                        .unwrap_or_default();
                    Some(Sparkline {
                        also: window_series(c),
                        cell: format!("{} × {}", format::context_label(c.context_tokens), c.concurrency),
                        svg: sparkline(seconds)?,
                        range: format!(
                            "{} to {} tokens a second{noise}",
                            format::count(*lo),
                            format::count(*hi)
                        ),
                    })
                })
                .collect(),
            ttft_note: run
                .decode_cells()
                .filter_map(|c| c.measured_by.as_ref())
                .all(|by| !by.definitions.contains_key("ttft_ms"))
                .then_some(labels::TTFT_NOTE),
            table_note: labels::TABLE_NOTE,
            columns: columns.iter().filter_map(|c| c.header).collect(),
            rows: run
                .cells
                .iter()
                .map(|c| table_row(run, &columns, c))
                .collect(),
            source: run.meta.source.clone(),
            comparisons: compared_in
                .iter()
                .map(|c| {
                    (
                        format!("{}{}index.html", super::to_root(&super::run_path(run)), super::compare_path(c)),
                        c.title.clone(),
                    )
                })
                .collect(),
            series: None,
            cost_note: None,
            electricity_note: None,
            capacity: None,
            capacity_mark: None,
            paced: None,
            sessions: None,
            gpus: run.meta.hardware.gpu_count,
            total_column: columns
                .iter()
                .position(|c| c.csv_name == "total_tok_per_s")
                .unwrap_or(usize::MAX),
            reason_column: columns
                .iter()
                .position(|c| c.csv_name == "reason")
                .unwrap_or(usize::MAX),
        })
    }

    /// Adds the cost per million output tokens of every valid decode cell,
    /// at the price of the run's GPU.
    /// Adds capacity within each tier of `slo`: the section, the chosen
    /// tier's key figure after the peak, and its mark on the matrix cells
    /// that met it.
    pub(crate) fn with_capacity(mut self, run: &Run, slo: &crate::model::slo::SloFile) -> Self {
        use super::capacity;
        let rows = capacity::tier_rows(run, slo);
        self.capacity = capacity::section(&rows);
        let Some((tier, tier_rows)) = capacity::chosen_tier(&rows) else {
            return self;
        };
        if let Some(k) = capacity::key_figure(tier, tier_rows) {
            let at = self
                .key_figures
                .iter()
                .position(|f| f.0 == "Peak")
                .map_or(0, |i| i + 1);
            self.key_figures.insert(at, k);
        }
        let (contexts, levels) = (run.decode_contexts(), run.concurrency_levels());
        let Some(m) = self.matrix.as_mut() else {
            return self;
        };
        let mut marked = false;
        for (row, &ctx) in m.rows.iter_mut().zip(&contexts) {
            for (cell, &n) in row.cells.iter_mut().zip(&levels) {
                let Some(c) = run.decode_cell(ctx, n) else {
                    continue;
                };
                let (judged, _) = crate::compare::capacity::judge_cell(c, tier);
                if judged != crate::compare::capacity::Judged::Meets {
                    continue;
                }
                marked = true;
                cell.slo = true;
                let share = crate::compare::capacity::requests_meeting(c, tier)
                    .map(|(met, of)| {
                        format!(
                            ", {met} of {} met it",
                            format::counted(of as usize, "request")
                        )
                    })
                    .unwrap_or_default();
                cell.describe
                    .push_str(&format!("; met {}{share}", tier.name));
            }
        }
        if marked {
            self.capacity_mark = Some(capacity::mark_legend(tier));
        }
        self
    }

    /// The "Paced load" section, when the run has paced points.
    pub(crate) fn with_paced(
        mut self,
        run: &Run,
        slo: &crate::model::slo::SloFile,
    ) -> Result<Self, ChartError> {
        self.paced = super::paced::section(run, slo)?;
        Ok(self)
    }

    /// The "Sessions" section, when the run has sessions windows.
    pub(crate) fn with_sessions(
        mut self,
        run: &Run,
        slo: &crate::model::slo::SloFile,
    ) -> Result<Self, ChartError> {
        self.sessions = super::sessions::section(run, slo)?;
        Ok(self)
    }

    pub(crate) fn with_cost(mut self, run: &Run, price: &crate::model::GpuPrice) -> Self {
        use crate::compare::cost;
        let gpus = run.meta.hardware.gpu_count;
        self.columns.push(crate::compare::cost::COST_HEADER);
        for (row, cell) in self.rows.iter_mut().zip(&run.cells) {
            let v = match cell {
                Cell::Decode(d) => cost::usd_per_million_output_tokens(d, gpus, price),
                Cell::Prefill(_) => None,
            };
            row.cells.push((
                v.map_or(String::new(), |v| v.to_string()),
                v.map_or(format::DASH.to_string(), format::usd),
            ));
        }
        self.cost_note = Some(crate::compare::cost::cost_note(gpus, price));
        self
    }

    /// Adds the electricity per million output tokens of every valid decode
    /// cell with its energy recorded, when the run recorded any.
    pub(crate) fn with_electricity(
        mut self,
        run: &Run,
        price: &crate::model::ElectricityPrice,
    ) -> Self {
        if !crate::compare::ratio::has(crate::model::figure::Figure::Energy, run) {
            return self;
        }
        self.columns.push(crate::compare::cost::ELECTRICITY_HEADER);
        for (row, cell) in self.rows.iter_mut().zip(&run.cells) {
            let v = match cell {
                Cell::Decode(d) => {
                    crate::compare::cost::electricity_usd_per_million_output_tokens(d, price)
                }
                Cell::Prefill(_) => None,
            };
            row.cells.push((
                v.map_or(String::new(), |v| v.to_string()),
                v.map_or(format::DASH.to_string(), format::usd),
            ));
        }
        self.electricity_note = Some(crate::compare::cost::electricity_note(price));
        self
    }
}

fn prefill_bars(run: &Run) -> Option<Vec<PrefillBar>> {
    let bars: Vec<PrefillBar> = run
        .prefill_cells()
        .filter_map(|c| {
            Some(PrefillBar {
                context_tokens: c.context_tokens,
                tok_per_s: c.prompt_tok_per_s?,
                ttft_ms: c.ttft_ms?,
            })
        })
        .collect();
    (!bars.is_empty()).then_some(bars)
}

/// `figure`'s matrix of the run. The colour scale spans Valid cells only:
/// a queued cell's figure is not a clean measurement, so it is clamped into
/// the scale, never its end. Better is brighter, whichever way the figure
/// is better.
fn matrix(run: &Run, figure: Figure) -> Option<Matrix> {
    let d = figure.definition();
    let levels = run.concurrency_levels();
    let contexts = run.decode_contexts();
    if contexts.is_empty() {
        return None;
    }
    let scale = LogScale::over(
        run.decode_cells()
            .filter(|c| c.status == Status::Valid)
            .filter_map(|c| figure.of(c)),
    );
    let rows = contexts
        .iter()
        .map(|&ctx| MatrixRow {
            context: format::context_label(ctx),
            cells: levels
                .iter()
                .map(|&n| matrix_cell(run, figure, ctx, n, scale.as_ref()))
                .collect(),
        })
        .collect();
    let (scale_low, scale_high) =
        scale.map_or((String::new(), String::new()), |s| match d.better {
            Better::Higher => ((d.show)(s.min), (d.show)(s.max)),
            Better::Lower => ((d.show)(s.max), (d.show)(s.min)),
        });
    let stops: Vec<String> = (0..=10)
        .map(|i| viridis(f64::from(i) / 10.0).hex())
        .collect();
    let sources = crate::render::compare_words::sources(figure, run).unwrap_or_default();
    Some(Matrix {
        key: d.key,
        heading: d.name,
        caption: crate::render::compare_words::fill(
            d.words.matrix_caption,
            &[("sources", &sources)],
        ),
        levels,
        rows,
        scale_low,
        scale_high,
        scale_unit: d.unit_scale,
        scale_gradient: format!("linear-gradient(to right, {})", stops.join(", ")),
    })
}

/// What the server and its GPUs said of a cell that explains it, when it
/// is out of the ordinary: requests waiting, preemptions, a full KV cache,
/// throttled GPUs. Each figure names its source's word.
pub(crate) fn telemetry_facts(c: &crate::model::DecodeCell) -> Option<String> {
    let mut facts = Vec::new();
    if let Some(s) = c.server_counters() {
        if let Some(w) = s.waiting_max.filter(|w| *w > 0.0) {
            facts.push(format!(
                "the server held up to {} requests waiting",
                format::trim_number(w)
            ));
        }
        if let Some(p) = s.preemptions.filter(|p| *p > 0) {
            facts.push(format!(
                "{} preempted",
                format::counted(p as usize, "request")
            ));
        }
        if let Some(k) = s.kv_cache_usage_max.filter(|k| *k >= 0.95) {
            facts.push(format!("KV cache {} full at its peak", format::share(k)));
        }
    }
    if let Some(t) = c
        .gpu_telemetry()
        .and_then(|g| g.throttle)
        .filter(|t| *t != crate::model::Throttle::Ok)
    {
        facts.push(format!("the GPUs throttled ({})", t.label()));
    }
    (!facts.is_empty()).then(|| facts.join(", "))
}

/// One cell of `figure`'s matrix: the figure, what its definition shows
/// beside it, and all of it in words for the tooltip.
fn matrix_cell(
    run: &Run,
    figure: Figure,
    ctx: u64,
    n: u32,
    scale: Option<&LogScale>,
) -> MatrixCell {
    let d = figure.definition();
    let where_ = format!("{} context, {} at once", format::context_label(ctx), n);
    let Some(cell) = run.decode_cell(ctx, n) else {
        return MatrixCell {
            class: "missing",
            style: None,
            value: None,
            per_gpu: None,
            flag: None,
            beside: Vec::new(),
            describe: format!("{where_}: not measured"),
            reason: None,
            slo: false,
        };
    };
    let figures = cell.status.has_figures();
    let v = figure.of(cell).filter(|_| figures);
    let style = match (v, scale) {
        (Some(v), Some(s)) => Some(fill_style(viridis(match d.better {
            Better::Higher => s.position(v),
            Better::Lower => 1.0 - s.position(v),
        }))),
        _ => None,
    };
    let mut describe = format!("{where_}: {}", cell.status.label());
    match (v, d.not_recorded) {
        (Some(v), _) => {
            describe.push_str(&format!(", {} {}", (d.show)(v), d.unit_described));
            let noise = d
                .interval
                .and_then(|interval| interval(cell)?.relative_half_width(v));
            if let Some(h) = noise {
                describe.push_str(&format!(" {}", format::plus_minus(h)));
            }
        }
        (None, Some(missing)) if figures => describe.push_str(&format!(", {missing}")),
        (None, _) => {}
    }
    let mut beside = Vec::new();
    for b in d.beside {
        if let Some((class, shown, said)) = beside_cell(*b, cell) {
            beside.push((class, shown));
            describe.push_str(&said);
        }
    }
    if let Some(reason) = &cell.reason {
        describe.push_str(&format!(" ({reason})"));
    }
    MatrixCell {
        class: cell.status.css_class(),
        style,
        value: match (v, d.not_recorded) {
            (Some(v), _) => Some((d.show)(v)),
            (None, Some(_)) if figures => Some("not recorded".into()),
            (None, _) => None,
        },
        per_gpu: v.filter(|_| d.per_gpu).and_then(|v| per_gpu_text(run, v)),
        flag: (cell.status != Status::Valid).then(|| cell.status.label()),
        beside,
        describe,
        reason: cell.reason.as_ref().map(Reason::words),
        slo: false,
    }
}

/// What a matrix cell shows beside its figure: (CSS class, text in the
/// cell, words the tooltip adds), when the cell has it.
fn beside_cell(b: Beside, cell: &DecodeCell) -> Option<(&'static str, String, String)> {
    match b {
        Beside::Ttft => {
            let t = cell.ttft_median_ms.filter(|_| cell.status.has_figures())?;
            let text = format!("{} TTFT", format::millis(t));
            Some(("ttft", text.clone(), format!(", {text}")))
        }
        Beside::Pause => {
            let p = cell.long_pause_ms()?;
            Some((
                "pause",
                format!("paused {}", format::millis(p)),
                format!(
                    ", a request paused {} ({}× the median time between tokens)",
                    format::millis(p),
                    format::grouped(p / cell.tbt_median_ms.unwrap_or(p), 0)
                ),
            ))
        }
        Beside::Power => {
            let w = cell.gpu_telemetry()?.power_w_mean?;
            Some((
                "ttft",
                format::watts(w),
                format!(", the GPUs drew {}", format::watts(w)),
            ))
        }
        Beside::Throttle => {
            let t = cell
                .gpu_telemetry()?
                .throttle
                .filter(|t| *t != Throttle::Ok)?;
            Some((
                "flag",
                format!("throttled: {}", t.label()),
                format!(", the GPUs throttled ({})", t.label()),
            ))
        }
    }
}

/// A run's tok/s shared out over its GPUs, as the per-GPU toggle shows it;
/// none on one GPU, where the toggle is not offered.
pub(crate) fn per_gpu_text(run: &Run, tok_per_s: f64) -> Option<String> {
    (run.meta.hardware.gpu_count > 1)
        .then(|| format::tok_per_s(crate::compare::ratio::Basis::PerGpu.of(run, tok_per_s)))
}

/// Sort keys make the table sortable by value, not by its display text.
fn table_row(run: &Run, columns: &[&table::Column], cell: &Cell) -> TableRow {
    // The "Total tok/s" column: a decode cell's total, a prefill cell's prompt tok/s.
    let total = match cell {
        Cell::Decode(c) => c.total_tok_per_s,
        Cell::Prefill(p) => p.prompt_tok_per_s,
    };
    TableRow {
        class: cell.status().css_class(),
        per_gpu: total.and_then(|v| per_gpu_text(run, v)),
        cells: columns
            .iter()
            .map(|c| (c.sort_key(cell), c.shown(cell)))
            .collect(),
    }
}

/// The Hardware, Engine and Run cards, the Run card saying how the
/// prefills were proven cold where the cells recorded it.
fn run_cards(run: &Run) -> Vec<crate::model::labels::Card> {
    let mut cards = crate::model::labels::cards(&run.meta);
    if let Some(cold) = labels::cold_prefill_summary(run)
        && let Some(card) = cards.iter_mut().find(|c| c.id == "run")
    {
        card.rows.push(("Cold prefill", cold));
    }
    cards
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CellTelemetry, DecodeCell, GpuTelemetry, ServerCounters, Throttle};

    fn cell(server: Option<ServerCounters>, throttle: Option<Throttle>) -> DecodeCell {
        DecodeCell {
            telemetry: Some(Box::new(CellTelemetry {
                server,
                gpus: throttle.map(|t| GpuTelemetry {
                    throttle: Some(t),
                    ..Default::default()
                }),
            })),
            ..DecodeCell::without_figures(8192, 8, Status::Valid, None)
        }
    }

    /// A window's power and KV sparklines say the range of the readings
    /// inside the window, none outside it; a flat series says so.
    #[test]
    fn window_series_ranges_are_those_of_the_readings_inside_the_window() {
        use crate::model::{DecodeDetail, MetricSample, ServerSamples};
        let kv = |t_s: f64, v: f64| MetricSample {
            t_s,
            running: None,
            waiting: None,
            kv_cache_usage: Some(v),
        };
        let mut c = crate::model::DecodeCell {
            measured_s: Some(10.0),
            ..crate::model::DecodeCell::without_figures(8192, 4, Status::Valid, None)
        };
        c.detail = Some(Box::new(DecodeDetail {
            window_start_unix_s: 0.0,
            prompt_tokens: None,
            ttft_ms: None,
            tbt_ms: None,
            tokens_per_chunk: None,
            pause_ms: None,
            tokens_per_second: Vec::new(),
            drift: None,
            peak_decoding_requests: 4,
            failed_requests: 0,
            requests: Vec::new(),
            server: Some(ServerSamples {
                // 0.99 before the window starts is not the window's.
                samples: vec![kv(-0.5, 0.99), kv(1.0, 0.20), kv(5.0, 0.45), kv(9.0, 0.31)],
                avg_running: None,
                generation_tokens_delta: None,
                ms_per_token: None,
                client_output_tokens: 0,
            }),
            gpu_power_w: vec![(0.5, 180.0), (5.0, 221.5), (9.5, 200.0)],
            loop_evidence: None,
            client: None,
        }));
        let ranges: Vec<(&str, String)> = window_series(&c)
            .into_iter()
            .map(|(what, _, range)| (what, range))
            .collect();
        assert_eq!(
            ranges,
            [
                ("GPU power", "180.0 W to 221.5 W".to_string()),
                ("KV cache", "20% to 45% full".to_string()),
            ]
        );
        if let Some(d) = c.detail.as_mut() {
            d.gpu_power_w = vec![(1.0, 300.0), (2.0, 300.0)];
        }
        assert_eq!(window_series(&c)[0].2, "300.0 W throughout");
    }

    /// The key figures of energy and throttling speak of the cells they
    /// name: the least energy of a Valid cell (a queued cell's lower figure
    /// is not it), and every throttled cell, none that was ok or not
    /// recorded.
    #[test]
    fn key_figures_of_energy_and_throttling_are_true_of_their_cells() {
        use crate::model::Cell;
        let mut run = crate::compare::tests::with_cells(
            "r",
            &[
                (8192, 1, Status::Valid, 100.0),
                (8192, 2, Status::Valid, 180.0),
                (8192, 4, Status::RequestsQueued, 300.0),
                (8192, 8, Status::Valid, 500.0),
            ],
        );
        let setups = [
            (Some(3.0), Some(Throttle::Ok)),
            (Some(2.0), Some(Throttle::Thermal)),
            (Some(0.5), Some(Throttle::PowerCapped)),
            (None, None),
        ];
        for (cell, (joules, throttle)) in run.cells.iter_mut().zip(setups) {
            if let Cell::Decode(d) = cell {
                let g = d.gpu_telemetry_mut();
                g.joules_per_output_token = joules;
                g.throttle = throttle;
            }
        }
        let figures = key_figures(&run);
        let find = |what: &str| figures.iter().find(|f| f.0 == what).cloned();
        assert_eq!(
            find("Least energy"),
            Some((
                "Least energy",
                "2.00 J per output token".to_string(),
                "at 8K × 2".to_string()
            ))
        );
        assert_eq!(
            find("Throttled"),
            Some((
                "Throttled",
                "2 of 4 cells".to_string(),
                "at 8K × 2 (thermal) and 8K × 4 (power capped)".to_string()
            ))
        );
        // A run whose GPUs never slowed says nothing of throttling.
        for cell in run.cells.iter_mut() {
            if let Cell::Decode(d) = cell {
                d.gpu_telemetry_mut().throttle = Some(Throttle::Ok);
            }
        }
        assert!(key_figures(&run).iter().all(|f| f.0 != "Throttled"));
    }

    /// The "Why" line names only what the counters show: nothing for a
    /// server that held no request waiting, preempted none, had room in its
    /// KV cache and did not throttle; each fact where it happened.
    #[test]
    fn why_names_what_the_counters_show_and_nothing_else() {
        let calm = ServerCounters {
            waiting_max: Some(0.0),
            preemptions: Some(0),
            kv_cache_usage_max: Some(0.94),
            ..Default::default()
        };
        assert_eq!(
            telemetry_facts(&cell(Some(calm.clone()), Some(Throttle::Ok))),
            None
        );
        assert_eq!(telemetry_facts(&cell(None, None)), None);
        let none_recorded = ServerCounters::default();
        assert_eq!(telemetry_facts(&cell(Some(none_recorded), None)), None);
        let busy = ServerCounters {
            waiting_max: Some(4.0),
            preemptions: Some(1),
            kv_cache_usage_max: Some(1.0),
            ..calm
        };
        assert_eq!(
            telemetry_facts(&cell(Some(busy), Some(Throttle::Thermal))).as_deref(),
            Some(
                "the server held up to 4 requests waiting, 1 request preempted, KV cache 100% full at its peak, the GPUs throttled (thermal)"
            )
        );
        // A lone fact is said alone.
        let throttled = cell(None, Some(Throttle::PowerCapped));
        assert_eq!(
            telemetry_facts(&throttled).as_deref(),
            Some("the GPUs throttled (power capped)")
        );
    }

    /// An energy cell says "not recorded" only for a measured cell without
    /// the figure, never for one that was not measured or has no figures.
    #[test]
    fn an_energy_cell_without_the_figure_says_not_recorded_only_when_measured() {
        let mut run = crate::model::Run::for_test(
            "r",
            serde_json::json!({
                "schema_version": 1, "model": "M", "served_model": "M",
                "hardware": {"gpu": "H100", "gpu_count": 1},
                "engine": {"name": "vllm"},
                "run": {"decode_test": "fixed_duration"}
            }),
        );
        let mut with = DecodeCell::without_figures(8192, 1, Status::Valid, None);
        with.total_tok_per_s = Some(100.0);
        with.telemetry = Some(Box::new(CellTelemetry {
            server: None,
            gpus: Some(GpuTelemetry {
                joules_per_output_token: Some(2.5),
                power_w_mean: Some(250.0),
                ..Default::default()
            }),
        }));
        let mut without = DecodeCell::without_figures(8192, 2, Status::Valid, None);
        without.total_tok_per_s = Some(150.0);
        let over = DecodeCell::without_figures(
            8192,
            4,
            Status::OverCapacity,
            Some(Reason::Stated("x".into())),
        );
        run.cells = vec![
            crate::model::Cell::Decode(with),
            crate::model::Cell::Decode(without),
            crate::model::Cell::Decode(over),
        ];
        let e = matrix(&run, Figure::Energy).expect("a cell has energy");
        let texts: Vec<Option<&str>> = e.rows[0].cells.iter().map(|c| c.value.as_deref()).collect();
        assert_eq!(texts, [Some("2.50 J"), Some("not recorded"), None]);
        assert_eq!(e.rows[0].cells[0].beside, [("ttft", "250.0 W".to_string())]);
        // Less is better: the cell of the least energy is the bright end.
        assert_eq!(e.scale_high, "2.50 J");
    }
}
