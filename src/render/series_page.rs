//! The page of a series: one setup measured again over time, the answer
//! first (where the series shifted, the newest run's verdict), each cell's
//! total tok/s across the runs, and each run against the runs before it.

use super::charts::ChartError;
use super::charts::lines::{MARKERS, PALETTE, palette};
use super::compare_page::{ChartBlock, RatioCell, RatioMatrix, RatioRow, decode_blocks};
use crate::compare::ratio::Basis;
use crate::judge::change::{Call, Judgement, Verdict};
use crate::judge::series::Series;
use crate::model::format;
use crate::model::{Run, Status};
use crate::render::change_words;

#[derive(askama::Template)]
#[template(path = "series.html")]
pub(crate) struct SeriesPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub title: String,
    /// Runs in the series.
    pub total_runs: usize,
    /// The answer first: the shifts found, or that the setup is unchanged,
    /// and the newest run's verdict; (sentence, whether it is slower).
    pub answer: Vec<(String, bool)>,
    /// Deliberate changes noted in data/changes.json: "2026-10-10 (run 12): vLLM 0.12".
    pub noted: Vec<String>,
    /// The rule, said once.
    pub rule: String,
    /// Runs judged (enough runs before them), and how many were slower.
    pub judged: usize,
    pub slower_runs: usize,
    /// The newest runs, shown in full (at most [`LATEST_RUNS`]), oldest first.
    pub runs: Vec<SeriesRun>,
    /// Pages listing every run of the series with its change, oldest first.
    pub history_pages: Vec<super::PageLink>,
    /// The whole series as one chart per context.
    pub history: Vec<ChartBlock>,
    /// Labels of the newest runs, oldest first: the value table's columns.
    pub labels: Vec<String>,
    /// Decode against concurrency per context, a line per run: the latest
    /// runs, as many as the palette has colours.
    pub decode: Vec<ChartBlock>,
    /// How many older runs the charts leave out.
    pub uncharted: usize,
    /// Every decode cell some run measured validly.
    pub values: Vec<ValueRow>,
    /// The newest runs, each against its baseline window.
    pub steps: Vec<StepBlock>,
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

/// The newest runs a series page shows in full (value table, charts, each
/// change's matrix); older runs are on the history pages and in the charts
/// of the whole series. A page of a year of nightly runs stays light.
pub(crate) const LATEST_RUNS: usize = 10;

/// Runs per history page.
pub(crate) const RUNS_PER_HISTORY_PAGE: usize = 250;

/// At most this many points per line on a history chart: longer series are
/// drawn as the median of consecutive runs.
const HISTORY_POINTS: usize = 120;

/// At most this many concurrency levels get a line on a history chart (the
/// palette's colours); the table and the CSV hold them all.
const HISTORY_LINES: usize = 6;

/// The URL of a series' history page `page` (from 0), relative to the site root.
pub(crate) fn history_path(s: &Series, page: usize) -> String {
    format!("{}runs-{}/", series_path(s), page + 1)
}

/// One run against its baseline window: the verdict line and the matrix.
pub(crate) struct StepBlock {
    pub summary: String,
    /// Whether the summary gives a plain ratio (too few runs to judge).
    pub plain: bool,
    /// Whether the run is called a regression.
    pub regression: bool,
    pub matrix: RatioMatrix,
}

/// A run's judgement as a ratio matrix: each judged cell against the
/// median of the same cell in its baseline, shaded where it is called
/// slower or faster, "within noise" where not.
pub(crate) fn judgement_matrix(j: &Judgement, id: String, heading: String) -> RatioMatrix {
    let mut contexts: Vec<u64> = j.cells.iter().map(|c| c.context_tokens).collect();
    contexts.sort_unstable();
    contexts.dedup();
    let mut levels: Vec<u32> = j.cells.iter().map(|c| c.concurrency).collect();
    levels.sort_unstable();
    levels.dedup();
    let rows = contexts
        .iter()
        .map(|&ctx| RatioRow {
            context: format::context_label(ctx),
            cells: levels
                .iter()
                .map(|&n| {
                    match j
                        .cells
                        .iter()
                        .find(|c| c.context_tokens == ctx && c.concurrency == n)
                    {
                        Some(c) if c.call == Call::Same => RatioCell {
                            text: format::ratio(c.estimate.ratio),
                            reason: None,
                            class: "even",
                            style: None,
                            noise: Some(crate::render::compare_words::WITHIN_NOISE),
                        },
                        Some(c) => {
                            let (class, style) = super::colour::ratio_shade(c.estimate.ratio);
                            RatioCell {
                                text: format::ratio(c.estimate.ratio),
                                reason: None,
                                class,
                                style: Some(style),
                                noise: None,
                            }
                        }
                        None => RatioCell {
                            text: format::DASH.into(),
                            reason: Some("not judged".into()),
                            class: "none",
                            style: None,
                            noise: None,
                        },
                    }
                })
                .collect(),
        })
        .collect();
    RatioMatrix {
        id,
        heading,
        levels,
        rows,
        left_out: Vec::new(),
        near_note: None,
        key: crate::render::compare_words::ratio_key(crate::model::figure::Figure::Throughput),
    }
}

/// When a run was measured, or a dash.
fn measured(run: &Run) -> String {
    run.meta
        .measured_at
        .as_deref()
        .map_or(format::DASH.into(), format::measured_at)
}

/// The URL of a series page, relative to the site root.
pub(crate) fn series_path(s: &Series) -> String {
    format!("series/{}/", s.slug)
}

impl SeriesPage {
    pub fn new(all: &[Run], s: &Series) -> Result<SeriesPage, ChartError> {
        let every: Vec<&Run> = s.runs.iter().map(|&i| &all[i]).collect();
        let history = history_blocks(&every, s)?;
        // Each run's judgement; the newest run's is the series' verdict.
        let verdict_of = |at: usize| {
            if at + 1 == every.len() {
                &s.newest
            } else {
                &s.judgements[at]
            }
        };
        let judged = (0..every.len())
            .filter(|&at| verdict_of(at).verdict != Verdict::InsufficientData)
            .count();
        let slower_runs = (0..every.len())
            .filter(|&at| verdict_of(at).verdict == Verdict::Regression)
            .count();
        // The newest runs in full; the previous run of the first of them
        // too, for its change.
        let first = every.len().saturating_sub(LATEST_RUNS);
        let runs = &every[first..];
        let labels = &s.labels[first..];
        let uncharted = runs.len().saturating_sub(PALETTE.len());
        let decode = decode_blocks(&runs[uncharted..], &labels[uncharted..], Basis::Total)?;
        let values = crate::compare::grid::valid_cells(runs)
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
        // Each of the newest runs against its baseline window.
        let steps = (first..every.len())
            .map(|at| {
                let j = verdict_of(at);
                StepBlock {
                    summary: format!("{}: {}", s.labels[at], change_words::judgement_line(j)),
                    plain: j.plain_ratio.is_some(),
                    regression: j.verdict == Verdict::Regression,
                    matrix: judgement_matrix(
                        j,
                        format!("change-{}", at + 1),
                        format!(
                            "{} / the median of the {} before it",
                            s.labels[at],
                            j.baseline.len()
                        ),
                    ),
                }
            })
            // A run too few runs precede to judge says its plain ratio, without a matrix.
            .filter(|b| b.plain || !b.matrix.rows.is_empty())
            .collect();
        // The answer: where the series shifted (or that it did not), then
        // the newest run's verdict.
        let mut answer: Vec<(String, bool)> = s
            .shifts
            .iter()
            .map(|sh| {
                (
                    change_words::shift_sentence(sh, &change_words::when(&every, sh.at)),
                    sh.change < 0.0,
                )
            })
            .collect();
        if answer.is_empty() && s.newest.verdict == Verdict::WithinNoise {
            answer.push((
                change_words::unchanged_sentence(every.len(), &s.newest),
                false,
            ));
        }
        let newest_label = s.labels.last().cloned().unwrap_or_default();
        answer.push((
            format!(
                "Newest run ({newest_label}): {}",
                change_words::judgement_line(&s.newest)
            ),
            s.newest.verdict == Verdict::Regression,
        ));
        let noted = s
            .changes
            .iter()
            .map(|(at, text)| {
                format!(
                    "{}: {text} (a new baseline from here)",
                    change_words::when(&every, *at)
                )
            })
            .collect();
        let root = super::to_root(&series_path(s));
        Ok(SeriesPage {
            root,
            page_title: format!("{} · Series", s.title),
            generator: super::GENERATOR,
            title: s.title.clone(),
            total_runs: every.len(),
            answer,
            noted,
            rule: change_words::rule_sentence(&crate::judge::change::Rule::default()),
            judged,
            slower_runs,
            history_pages: if every.len() > LATEST_RUNS {
                super::page_links(every.len(), RUNS_PER_HISTORY_PAGE, None, |page| {
                    format!("runs-{}/index.html", page + 1)
                })
            } else {
                Vec::new()
            },
            history,
            labels: labels.to_vec(),
            runs: runs
                .iter()
                .zip(labels)
                .enumerate()
                .map(|(i, (r, label))| SeriesRun {
                    swatch: i
                        .checked_sub(uncharted)
                        .map(|style| (palette(style), MARKERS[style % MARKERS.len()])),
                    label: label.clone(),
                    href: format!("{root}{}", super::run_href(r)),
                    measured: measured(r),
                })
                .collect(),
            decode,
            uncharted,
            values,
            steps,
            gpus: runs[0].meta.hardware.gpu_count,
        })
    }
}

/// Concurrency levels to draw, at most [`HISTORY_LINES`]: all of them, or the
/// lowest, the highest and levels spread evenly between.
fn drawn_levels(levels: &[u32]) -> Vec<u32> {
    if levels.len() <= HISTORY_LINES {
        return levels.to_vec();
    }
    let last = levels.len() - 1;
    let mut picked: Vec<u32> = (0..HISTORY_LINES)
        .map(|i| levels[(i * last + (HISTORY_LINES - 1) / 2) / (HISTORY_LINES - 1)])
        .collect();
    picked.dedup();
    picked
}

/// A history is drawn against dates when it covers at least this many days
/// (shorter ones would label one day several times).
const DATE_AXIS_MIN_DAYS: f64 = 7.0;

/// Each run's date as a day number, oldest first, when every run has one and
/// they cover [`DATE_AXIS_MIN_DAYS`]: then gaps between runs are drawn to
/// scale. Otherwise the runs are drawn evenly by number.
fn run_dates(runs: &[&Run]) -> Option<Vec<f64>> {
    let days: Vec<f64> = runs
        .iter()
        .map(|r| r.meta.measured_at.as_deref().and_then(format::epoch_days))
        .collect::<Option<_>>()?;
    let covered = days.last()? - days.first()?;
    (covered >= DATE_AXIS_MIN_DAYS).then_some(days)
}

/// A gap between dated points this many times the usual one (the median),
/// and over [`GAP_MIN_DAYS`], breaks a history's lines: weeks without a
/// run are not drawn as if measured.
const GAP_FACTOR: f64 = 4.0;
const GAP_MIN_DAYS: f64 = 2.0;

/// Which stretch of line each point of a history belongs to (0, 1, ...),
/// `None` where the point has no figure. A new stretch starts after a
/// point without a figure and, dated, after a long gap; unless it or the
/// one before would hold a lone point (a line of one point draws nothing,
/// and a marker would read as "slower"). Points by run number break only
/// at missing figures.
fn line_pieces(xs: &[f64], present: &[bool], dated: bool) -> Vec<Option<usize>> {
    let steps: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    let usual = crate::stats::median(steps.clone()).unwrap_or(0.0);
    let limit = (usual * GAP_FACTOR).max(GAP_MIN_DAYS);
    let shown: Vec<usize> = (0..xs.len()).filter(|&i| present[i]).collect();
    // A break before shown[k].
    let breaks: Vec<usize> = (1..shown.len())
        .filter(|&k| {
            let (before, at) = (shown[k - 1], shown[k]);
            at > before + 1 || (dated && steps[before] > limit)
        })
        .collect();
    // Keep a break only where at least two points lie on each side of it
    // before the neighbouring kept breaks.
    let mut kept: Vec<usize> = Vec::new();
    for (k, &at) in breaks.iter().enumerate() {
        let since = at - kept.last().copied().unwrap_or(0);
        let until = breaks.get(k + 1).copied().unwrap_or(shown.len()) - at;
        if since >= 2 && until >= 2 {
            kept.push(at);
        }
    }
    let mut pieces = vec![None; xs.len()];
    for (k, &i) in shown.iter().enumerate() {
        pieces[i] = Some(kept.iter().filter(|&&at| at <= k).count());
    }
    pieces
}

/// Runs grouped into at most [`HISTORY_POINTS`] consecutive spans, as
/// (first, end) indexes into the series.
fn history_spans(runs: usize) -> Vec<(usize, usize)> {
    let per = runs.div_ceil(HISTORY_POINTS).max(1);
    (0..runs)
        .step_by(per)
        .map(|start| (start, (start + per).min(runs)))
        .collect()
}

/// The whole series at each context: total tok/s against run number, a line
/// per concurrency level, a marker where a run's cell was called slower
/// against the runs before it, a vertical line where the series shifted or
/// a change was noted. Long series are drawn as medians of consecutive runs.
fn history_blocks(runs: &[&Run], s: &Series) -> Result<Vec<ChartBlock>, ChartError> {
    use super::charts::lines::{Axis, Mark, Scale, Series as Line, xy_chart_marked};
    let cells = crate::compare::grid::valid_cells(runs);
    let contexts: std::collections::BTreeSet<u64> = cells.iter().map(|&(c, _)| c).collect();
    let level_name = |n: u32| format::counted(n as usize, "request") + " at once";
    let spans = history_spans(runs.len());
    let grouped = spans.iter().any(|(a, b)| b - a > 1);
    let dates = run_dates(runs);
    let x = match dates {
        Some(_) => Axis {
            ticks: Some(format::date_ticks),
            ..Axis::new(
                "Date measured (UTC)",
                Scale::Linear,
                format::epoch_day_label,
            )
        },
        None => Axis {
            ticks: Some(format::whole_number_ticks),
            ..Axis::new("Run (1 = oldest)", Scale::Linear, format::count_tick)
        },
    };
    let y = Axis::new(
        crate::render::compare_words::FIGURE_TOTAL,
        Scale::Linear,
        format::tok_per_s_short,
    )
    .shared_over(runs.iter().flat_map(|r| {
        r.decode_cells()
            .filter(|c| c.status == Status::Valid)
            .filter_map(|c| c.total_tok_per_s)
    }));
    // Each cell's valid total and slower call, run by run, read once (a
    // series of years has thousands of runs, each with tens of cells).
    type RunByRun = (Vec<Option<f64>>, Vec<bool>);
    let mut by_cell: std::collections::HashMap<(u64, u32), RunByRun> = cells
        .iter()
        .map(|&key| (key, (vec![None; runs.len()], vec![false; runs.len()])))
        .collect();
    for (k, run) in runs.iter().enumerate() {
        for c in run.decode_cells().filter(|c| c.status == Status::Valid) {
            if let Some(entry) = by_cell.get_mut(&(c.context_tokens, c.concurrency))
                && entry.0[k].is_none()
            {
                entry.0[k] = c.total_tok_per_s;
            }
        }
        for c in s.judgements[k]
            .cells
            .iter()
            .filter(|c| c.call == Call::Slower)
        {
            if let Some(entry) = by_cell.get_mut(&(c.context_tokens, c.concurrency)) {
                entry.1[k] = true;
            }
        }
    }
    // What each span shows at (ctx, n): its median total and whether a run
    // in it was slower there than the run before it.
    let at = |ctx: u64, n: u32, (a, b): (usize, usize)| {
        let (totals, slower) = &by_cell[&(ctx, n)];
        let totals: Vec<f64> = totals[a..b].iter().flatten().copied().collect();
        (
            crate::stats::median(totals),
            slower[a..b].iter().any(|&x| x),
        )
    };
    contexts
        .into_iter()
        .map(|ctx| {
            let label = format::context_label(ctx);
            // The levels measured validly at this context, in order.
            let here: Vec<u32> = cells
                .iter()
                .filter(|&&(c, _)| c == ctx)
                .map(|&(_, n)| n)
                .collect();
            let drawn = drawn_levels(&here);
            let figures: Vec<Vec<(Option<f64>, bool)>> = here
                .iter()
                .map(|&n| spans.iter().map(|&span| at(ctx, n, span)).collect())
                .collect();
            // A span sits at its runs' median date, or its middle run number.
            let centre = |(a, b): (usize, usize)| match &dates {
                Some(days) => crate::stats::median(days[a..b].to_vec()).unwrap_or(days[a]),
                None => (a + b + 1) as f64 / 2.0,
            };
            let xs: Vec<f64> = spans.iter().map(|&span| centre(span)).collect();
            let dated = dates.is_some();
            // Which breaks the caption explains: long gaps in time (the
            // same for every level), and figures missing at a drawn level.
            let broke_in_time = line_pieces(&xs, &vec![true; xs.len()], dated)
                .last()
                .is_some_and(|&p| p > Some(0));
            let mut broke_at_missing = false;
            let mut lines = Vec::new();
            for (style, &n) in drawn.iter().enumerate() {
                let row = &figures[here.iter().position(|&m| m == n).unwrap()];
                let present: Vec<bool> = row.iter().map(|(v, _)| v.is_some()).collect();
                let pieces = line_pieces(&xs, &present, dated);
                // Two figures with missing ones between them, on different stretches.
                let shown: Vec<usize> = (0..row.len()).filter(|&i| present[i]).collect();
                broke_at_missing |= shown
                    .windows(2)
                    .any(|w| w[1] > w[0] + 1 && pieces[w[0]] != pieces[w[1]]);
                let point = |i: usize| (xs[i], row[i].0.unwrap());
                // One line per stretch; a marker on each slower point.
                let stretches = pieces.iter().flatten().max().map_or(0, |&last| last + 1);
                for piece in 0..stretches {
                    lines.push(Line {
                        style,
                        points: (0..row.len())
                            .filter(|&i| pieces[i] == Some(piece))
                            .map(point)
                            .collect(),
                        emphasis: false,
                        joined: true,
                        solid: true,
                        label: None,
                    });
                }
                lines.push(Line {
                    style,
                    points: (0..row.len())
                        .filter(|&i| present[i] && row[i].1)
                        .map(point)
                        .collect(),
                    emphasis: false,
                    joined: false,
                    solid: false,
                    label: None,
                });
            }
            let title = format!("{label} context: total tok/s over the series");
            // A mark sits where its run is drawn.
            let x_of = |at: usize| match &dates {
                Some(days) => days[at],
                None => (at + 1) as f64,
            };
            let marks: Vec<Mark> = s
                .shifts
                .iter()
                .map(|sh| Mark {
                    x: x_of(sh.at),
                    shift: true,
                })
                .chain(s.changes.iter().map(|(at, _)| Mark {
                    x: x_of(*at),
                    shift: false,
                }))
                .collect();
            let svg = xy_chart_marked(&title, super::charts::DECODE_SIZE, &x, &y, &lines, &marks)?;
            let rows = spans
                .iter()
                .enumerate()
                .map(|(i, &(a, b))| {
                    let mut row = vec![if b - a > 1 {
                        format!("{}–{}", a + 1, b)
                    } else {
                        (a + 1).to_string()
                    }];
                    if let Some(days) = &dates {
                        let (first, last) = (
                            format::epoch_day_label(days[a]),
                            format::epoch_day_label(days[b - 1]),
                        );
                        row.push(if first == last {
                            first
                        } else {
                            format!("{first} – {last}")
                        });
                    }
                    row.extend(figures.iter().map(|f| match f[i] {
                        (Some(v), true) => format!("{} (slower)", format::tok_per_s(v)),
                        (Some(v), false) => format::tok_per_s(v),
                        (None, _) => format::DASH.to_string(),
                    }));
                    row
                })
                .collect();
            let shown = if drawn.len() < here.len() {
                format!(
                    "lines for {} of the {} levels (the table has them all)",
                    drawn.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                    here.len()
                )
            } else {
                "a line per number of simultaneous requests".to_string()
            };
            let mut gaps = String::new();
            if broke_in_time {
                gaps += &format!(
                    " A line breaks where no run was measured for over {GAP_FACTOR} times the usual interval between runs."
                );
            }
            if broke_at_missing {
                gaps += " A line breaks where its level has no valid figure (a dash in the table).";
            }
            let marked = match (s.shifts.is_empty(), s.changes.is_empty()) {
                (true, true) => "",
                (false, true) => " An orange line marks where the series shifted.",
                (true, false) => " A grey line marks a change noted in data/changes.json.",
                (false, false) => " An orange line marks where the series shifted, a grey one a change noted in data/changes.json.",
            };
            let caption = format!(
                "Total tok/s of every run at {label} context, oldest first: {shown}. A marker shows where a run's cell was called slower than the runs before it (the rule under the newest runs).{marked}{}{gaps}",
                if grouped {
                    " Each point is the median of consecutive runs; the runs' own figures are on their pages and in the series CSV."
                } else {
                    ""
                }
            );
            Ok(ChartBlock {
                id: format!("history-{ctx}"),
                key: drawn
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (level_name(n), palette(i), MARKERS[i % MARKERS.len()]))
                    .collect(),
                heading: format!("{label} context"),
                kind: super::compare_page::ChartKind::History(caption),
                per_gpu: false,
                svg,
                columns: std::iter::once(if grouped { "Runs" } else { "Run" }.to_string())
                    .chain(dates.is_some().then(|| "Measured".to_string()))
                    .chain(here.iter().map(|&n| level_name(n)))
                    .collect(),
                rows,
            })
        })
        .collect()
}

/// A page of a series' runs: each with its change against the run before.
#[derive(askama::Template)]
#[template(path = "series_runs.html")]
pub(crate) struct SeriesRunsPage {
    pub root: &'static str,
    pub page_title: String,
    pub generator: &'static str,
    pub title: String,
    /// "Runs 251–500".
    pub range: String,
    pub total_runs: usize,
    /// Every page of runs; the current one with an empty href.
    pub run_pages: Vec<super::PageLink>,
    pub rows: Vec<HistoryRow>,
    /// The rule, said once.
    pub rule: String,
}

pub(crate) struct HistoryRow {
    pub number: usize,
    pub label: String,
    pub href: String,
    pub measured: String,
    /// Against its baseline window: the verdict, the whole run's ratio, the
    /// cells judged, and how many of those are slower and faster (dashes
    /// where the run was not judged).
    pub verdict: super::SortedText,
    pub median: super::SortedText,
    pub shared: super::SortedText,
    pub slower: super::SortedText,
    pub faster: super::SortedText,
    pub regression: bool,
}

impl HistoryRow {
    /// The figure columns, in table order.
    pub fn figures(&self) -> [&super::SortedText; 5] {
        [
            &self.verdict,
            &self.median,
            &self.shared,
            &self.slower,
            &self.faster,
        ]
    }
}

/// The pages of every run of a series, [`RUNS_PER_HISTORY_PAGE`] to a page,
/// as (path relative to the site root, page); none for a series the series
/// page shows whole.
pub(crate) fn history_pages(all: &[Run], s: &Series) -> Vec<(String, SeriesRunsPage)> {
    let runs: Vec<&Run> = s.runs.iter().map(|&i| &all[i]).collect();
    if runs.len() <= LATEST_RUNS {
        return Vec::new();
    }
    let count = runs.len().div_ceil(RUNS_PER_HISTORY_PAGE);
    (0..count)
        .map(|page| {
            let start = page * RUNS_PER_HISTORY_PAGE;
            let end = (start + RUNS_PER_HISTORY_PAGE).min(runs.len());
            let root = super::to_root(&history_path(s, page));
            let rows = (start..end)
                .map(|k| {
                    let r = runs[k];
                    // Only a judged run has figures to show.
                    let j =
                        Some(&s.judgements[k]).filter(|j| j.verdict != Verdict::InsufficientData);
                    let count = |n: fn(&Judgement) -> usize| {
                        j.map_or_else(super::SortedText::none, |j| super::SortedText {
                            sort: n(j).to_string(),
                            text: format::count(n(j) as u64),
                        })
                    };
                    HistoryRow {
                        number: k + 1,
                        label: s.labels[k].clone(),
                        href: format!("{root}{}", super::run_href(r)),
                        measured: measured(r),
                        verdict: super::SortedText::words(s.judgements[k].verdict.label()),
                        median: match (j.and_then(|j| j.whole), s.judgements[k].plain_ratio) {
                            (Some(e), _) => super::SortedText {
                                sort: e.ratio.to_string(),
                                text: format::ratio(e.ratio),
                            },
                            // Not judged, but measured against a run or two before it.
                            (None, Some(r)) => super::SortedText {
                                sort: r.to_string(),
                                text: change_words::plain_ratio_text(&s.judgements[k])
                                    .unwrap_or_default(),
                            },
                            (None, None) => super::SortedText::none(),
                        },
                        shared: count(|j| j.cells.len()),
                        slower: count(Judgement::slower),
                        faster: count(Judgement::faster),
                        regression: j.is_some_and(|j| j.verdict == Verdict::Regression),
                    }
                })
                .collect();
            let range = super::page_range(page, RUNS_PER_HISTORY_PAGE, runs.len());
            let page_view = SeriesRunsPage {
                root,
                page_title: format!("{} · {range}", s.title),
                generator: super::GENERATOR,
                title: s.title.clone(),
                range,
                total_runs: runs.len(),
                run_pages: super::page_links(
                    runs.len(),
                    RUNS_PER_HISTORY_PAGE,
                    Some(page),
                    |other| format!("../runs-{}/index.html", other + 1),
                ),
                rows,
                rule: change_words::rule_sentence(&crate::judge::change::Rule::default()),
            };
            (format!("{}index.html", history_path(s, page)), page_view)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(at: Option<&str>) -> Run {
        Run::for_test(
            "r",
            serde_json::json!({
                "schema_version": 1, "model": "M", "served_model": "m",
                "hardware": {"gpu": "H200", "gpu_count": 1}, "engine": {"name": "vllm"},
                "run": {"decode_test": "fixed_duration"}, "measured_at": at
            }),
        )
    }

    #[test]
    fn a_history_is_drawn_against_dates_only_when_every_run_has_one_and_they_span_a_week() {
        let (a, b, c) = (
            run(Some("2026-10-01T00:00:00Z")),
            run(Some("2026-10-02T12:00:00Z")),
            run(Some("2026-10-15T00:00:00Z")),
        );
        let days = run_dates(&[&a, &b, &c]).unwrap();
        assert_eq!(days[1] - days[0], 1.5);
        assert_eq!(days[2] - days[0], 14.0);
        // Too short to label dates; a run without one.
        assert_eq!(run_dates(&[&a, &b]), None);
        let undated = run(None);
        assert_eq!(run_dates(&[&a, &undated, &c]), None);
        // The date a run's row says, from its day number.
        assert_eq!(format::epoch_day_label(days[2]), "2026-10-15");
    }

    /// Every point present: the stretches long gaps alone make.
    fn gap_pieces(xs: &[f64], dated: bool) -> Vec<usize> {
        line_pieces(xs, &vec![true; xs.len()], dated)
            .into_iter()
            .map(Option::unwrap)
            .collect()
    }

    /// `present("xx.x")`: a figure at each `x`, none at each `.`.
    fn present(marks: &str) -> Vec<bool> {
        marks.chars().map(|c| c == 'x').collect()
    }

    /// `pieces("00.1")`: the stretch of each point, `.` where it has none.
    fn pieces(marks: &str) -> Vec<Option<usize>> {
        marks
            .chars()
            .map(|c| c.to_digit(10).map(|d| d as usize))
            .collect()
    }

    #[test]
    fn a_missing_figure_breaks_the_line_unless_a_point_would_be_left_alone() {
        let by_run: Vec<f64> = (1..=8).map(f64::from).collect();
        // Run 4 not valid at this level: two stretches, run 4 in neither.
        assert_eq!(
            line_pieces(&by_run, &present("xxx.xxxx"), false),
            pieces("000.1111")
        );
        // A lone valid run between failures stays joined to the runs before.
        assert_eq!(
            line_pieces(&by_run, &present("xxx.x.xx"), false),
            pieces("000.0.11")
        );
        // Missing at the ends breaks nothing.
        assert_eq!(
            line_pieces(&by_run, &present("..xxxx.."), false),
            pieces("..0000..")
        );
        // Dated: night 5, alone between a missing night and a long gap,
        // stays joined to the nights before; the gap breaks the line.
        let nights = [0.0, 1.0, 2.0, 3.0, 4.0, 20.0, 21.0, 22.0];
        assert_eq!(
            line_pieces(&nights, &present("xxx.xxxx"), true),
            pieces("000.0111")
        );
    }

    #[test]
    fn a_long_gap_between_dated_runs_breaks_the_line() {
        // Nightly, then twelve days without a run, then nightly again.
        let nightly = [0.0, 1.0, 2.0, 3.0, 15.0, 16.0, 17.0];
        assert_eq!(gap_pieces(&nightly, true), [0, 0, 0, 0, 1, 1, 1]);
        // By run number, or with gaps of two days at most, never.
        assert_eq!(gap_pieces(&nightly, false), [0; 7]);
        assert_eq!(gap_pieces(&[0.0, 0.2, 0.4, 2.4], true), [0; 4]);
        // Weekly runs with one week missed: twice the usual gap is no break.
        assert_eq!(gap_pieces(&[0.0, 7.0, 14.0, 28.0, 35.0], true), [0; 5]);
        assert_eq!(gap_pieces(&[], true), Vec::<usize>::new());
        assert_eq!(gap_pieces(&[5.0], true), [0]);
        // A lone run between long gaps stays joined to the runs before it.
        let lone = [0.0, 1.0, 2.0, 20.0, 40.0, 41.0];
        assert_eq!(gap_pieces(&lone, true), [0, 0, 0, 0, 1, 1]);
        assert_eq!(gap_pieces(&[0.0, 30.0, 31.0, 32.0], true), [0; 4]);
    }
}
