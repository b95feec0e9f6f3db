//! Series: runs of one setup (model, GPU, GPU count, quantization) measured
//! again over time, and how each run differs from the one before it. Pure
//! functions over runs; docs/measurement.md defines the threshold.

use crate::compare;
use crate::format;
use crate::model::{DecodeCell, Run, Status};

/// A change of total tok/s smaller than this (5%) is noise: run-to-run
/// variation of the same setup, not a regression or an improvement.
pub(crate) const NOISE: f64 = 0.05;

/// Runs of one setup, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// URL slug: `series/<slug>/`.
    pub slug: String,
    /// "GLM-5.3-Flash on H200 SXM 141GB ×4 (FP8)".
    pub title: String,
    /// Indexes into the build's runs, in date order.
    pub runs: Vec<usize>,
    /// What tells each run from the others, in the same order.
    pub labels: Vec<String>,
    /// `steps[i]`: run `i + 1` against run `i`, found once for every page
    /// that tells them (run pages, the series page, its runs pages).
    pub steps: Vec<Step>,
}

/// How a run compares with the previous run of its series, over the decode
/// cells both measured as Valid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub shared: usize,
    /// Median of (this run's total tok/s / the previous run's).
    pub median_ratio: Option<f64>,
    /// Cells slower / faster: beyond the noise of both runs where both
    /// cells carry an interval, else by more than `NOISE`.
    pub slower: usize,
    pub faster: usize,
    /// Cells judged by their intervals, and by the fixed `NOISE` threshold
    /// (an interval unknown).
    pub by_interval: usize,
    pub by_threshold: usize,
}

/// Every setup with two or more runs, runs in date order (runs without a
/// date first, by id: they predate dated runs).
pub fn series(runs: &[Run]) -> Vec<Series> {
    let mut groups: std::collections::BTreeMap<(String, String, u32, String), Vec<usize>> =
        Default::default();
    for (i, run) in runs.iter().enumerate() {
        if let Some(key) = compare::setup_key(run) {
            groups.entry(key).or_default().push(i);
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|((model, _, _, quant), mut members)| {
            members.sort_by(|&a, &b| {
                let key = |i: usize| (runs[i].meta.measured_at.clone(), runs[i].id.clone());
                key(a).cmp(&key(b))
            });
            let first = &runs[members[0]];
            let hardware = crate::labels::hardware_label(&first.meta.hardware);
            let title = if quant.is_empty() {
                format!("{model} on {hardware}")
            } else {
                format!("{model} on {hardware} ({quant})")
            };
            let members_runs: Vec<&Run> = members.iter().map(|&i| &runs[i]).collect();
            Series {
                slug: slug(&format!(
                    "{model}-{}-x{}-{quant}",
                    first.meta.hardware.gpu, first.meta.hardware.gpu_count
                )),
                title,
                labels: labels(&members_runs),
                steps: members_runs.windows(2).map(|p| step(p[0], p[1])).collect(),
                runs: members,
            }
        })
        .collect()
}

/// Lowercase letters and digits, other characters as single dashes.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// How one cell changed from a run to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellChange {
    /// The later cell's total tok/s over the earlier's.
    pub ratio: f64,
    pub slower: bool,
    pub faster: bool,
    /// Judged by the cells' intervals (else by the fixed `NOISE`).
    pub by_interval: bool,
}

/// `b` against `a`, both Valid with a total: slower or faster beyond the
/// noise of both where both carry an interval, else by more than `NOISE`.
pub fn cell_change(a: &DecodeCell, b: &DecodeCell) -> Option<CellChange> {
    use compare::Verdict;
    if a.status != Status::Valid || b.status != Status::Valid {
        return None;
    }
    let ratio = compare::ratio(Some(a), Some(b)).ok()?;
    let verdict = compare::cell_verdict(a, b);
    let (slower, faster) = match verdict {
        Verdict::Unknown => (ratio < 1.0 - NOISE, ratio > 1.0 + NOISE),
        Verdict::Slower => (true, false),
        Verdict::Faster => (false, true),
        Verdict::WithinNoise => (false, false),
    };
    Some(CellChange {
        ratio,
        slower,
        faster,
        by_interval: verdict != Verdict::Unknown,
    })
}

/// `cur` against `prev`, cell by cell.
pub fn step(prev: &Run, cur: &Run) -> Step {
    let judged: Vec<CellChange> = prev
        .decode_cells()
        .filter_map(|a| cell_change(a, cur.decode_cell(a.context_tokens, a.concurrency)?))
        .collect();
    let median_ratio = compare::RatioSummary::of(judged.iter().map(|c| c.ratio)).map(|s| s.median);
    let by_interval = judged.iter().filter(|c| c.by_interval).count();
    Step {
        shared: judged.len(),
        median_ratio,
        slower: judged.iter().filter(|c| c.slower).count(),
        faster: judged.iter().filter(|c| c.faster).count(),
        by_interval,
        by_threshold: judged.len() - by_interval,
    }
}

/// How many differing settings a label names before it says "+N more".
const SETTINGS_IN_LABEL: usize = 2;

/// What tells each run of a series from the others: its engine version and
/// when it was measured (or its id), and the launch settings not every run
/// of the series shares ("vllm 0.11.0 · 2026-09-01 · --max-num-seqs 256").
pub fn labels(runs: &[&Run]) -> Vec<String> {
    let settings: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            r.meta
                .launch_command
                .as_deref()
                .map(crate::launch::settings)
                .unwrap_or_default()
        })
        .collect();
    // The settings every run shares, found once: a year of nightly runs
    // must not compare every run's settings with every other's.
    let shared: std::collections::BTreeSet<&String> = match settings.split_first() {
        Some((first, rest)) => first
            .iter()
            .filter(|s| rest.iter().all(|other| other.contains(s)))
            .collect(),
        None => Default::default(),
    };
    runs.iter()
        .zip(&settings)
        .map(|(run, own)| {
            let differing: Vec<&str> = own
                .iter()
                .filter(|s| !shared.contains(s))
                .map(String::as_str)
                .collect();
            let mut label = run_label(run);
            if !differing.is_empty() {
                label.push_str(" · ");
                label.push_str(&differing[..differing.len().min(SETTINGS_IN_LABEL)].join(" "));
                if differing.len() > SETTINGS_IN_LABEL {
                    label.push_str(&format!(" +{} more", differing.len() - SETTINGS_IN_LABEL));
                }
            }
            label
        })
        .collect()
}

/// A run's engine version and when it was measured, or its id.
fn run_label(run: &Run) -> String {
    let version = run.meta.engine.version.as_deref();
    let date = run
        .meta
        .measured_at
        .as_deref()
        .map(|d| d.get(..10).unwrap_or(d));
    match (version, date) {
        (Some(v), Some(d)) => format!("{} {v} · {d}", run.meta.engine.name),
        (Some(v), None) => format!("{} {v} · {}", run.meta.engine.name, run.id),
        (None, Some(d)) => format!("{d} · {}", run.id),
        (None, None) => run.id.clone(),
    }
}

/// One line on a run page: how it compares with the previous run, labelled
/// `prev_label`.
pub(crate) fn step_sentence(prev_label: &str, step: &Step) -> String {
    match step.median_ratio {
        None => format!(
            "No decode cell was measured validly by both this run and the previous one ({prev_label})."
        ),
        Some(r) => format!(
            "Against the previous run ({prev_label}): median {} over {} shared valid cells; {} {} slower and {} faster {}.",
            format::ratio(r),
            step.shared,
            step.slower,
            if step.slower == 1 { "cell" } else { "cells" },
            step.faster,
            rule(step)
        ),
    }
}

/// Which rule the slower and faster marks used: the runs' intervals, the
/// fixed threshold where a run's noise is unknown, or both.
fn rule(step: &Step) -> String {
    let threshold = format!("by more than {}%", format::trim_number(NOISE * 100.0));
    match (step.by_interval, step.by_threshold) {
        (_, 0) => "beyond the noise of both runs (95% intervals)".into(),
        (0, _) => threshold,
        (i, t) => format!(
            "(beyond the noise of both runs in the {i} cells with intervals, {threshold} in the {t} without)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, DecodeCell};

    fn run(id: &str, at: &str, totals: &[(u64, u32, f64)]) -> Run {
        let mut run = Run::for_test(
            id,
            serde_json::json!({
                "schema_version": 1, "model": "M", "served_model": "m",
                "hardware": {"gpu": "H200 SXM", "gpu_count": 4}, "engine": {"name": "vllm", "version": id},
                "run": {"decode_test": "fixed_duration"}, "measured_at": at
            }),
        );
        run.cells = totals
            .iter()
            .map(|&(ctx, n, t)| {
                Cell::Decode(DecodeCell {
                    total_tok_per_s: Some(t),
                    ..DecodeCell::without_figures(ctx, n, Status::Valid, None)
                })
            })
            .collect();
        run
    }

    #[test]
    fn runs_of_one_setup_form_a_series_in_date_order() {
        let runs = [
            run("0.3", "2026-03-01T00:00:00Z", &[]),
            run("0.1", "2026-01-01T00:00:00Z", &[]),
            run("0.2", "2026-02-01T00:00:00Z", &[]),
        ];
        let s = series(&runs);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].runs, [1, 2, 0]);
        assert_eq!(s[0].slug, "m-h200-sxm-x4");
        assert_eq!(s[0].title, "M on H200 SXM ×4");
    }

    #[test]
    fn runs_are_labelled_by_version_date_and_the_settings_they_do_not_share() {
        let mut a = run("0.11.0", "2026-09-01T00:00:00Z", &[]);
        let mut b = run("0.11.0", "2026-10-01T00:00:00Z", &[]);
        let mut c = run("0.12.0", "2026-11-01T00:00:00Z", &[]);
        a.meta.launch_command = Some("vllm serve m -tp 4".into());
        b.meta.launch_command =
            Some("vllm serve m -tp 4 --max-num-seqs 256 --enforce-eager --async-scheduling".into());
        c.meta.launch_command = Some("vllm serve m -tp 4 --max-num-seqs 256".into());
        assert_eq!(
            labels(&[&a, &b, &c]),
            [
                "vllm 0.11.0 · 2026-09-01",
                "vllm 0.11.0 · 2026-10-01 · --max-num-seqs 256 --enforce-eager +1 more",
                "vllm 0.12.0 · 2026-11-01 · --max-num-seqs 256",
            ]
        );
    }

    #[test]
    fn a_step_counts_cells_beyond_the_noise_threshold() {
        let prev = run(
            "a",
            "2026-01-01T00:00:00Z",
            &[(8192, 1, 100.0), (8192, 4, 400.0), (8192, 8, 800.0)],
        );
        let cur = run(
            "b",
            "2026-02-01T00:00:00Z",
            &[(8192, 1, 96.0), (8192, 4, 300.0), (8192, 8, 900.0)],
        );
        let s = step(&prev, &cur);
        assert_eq!(s.shared, 3);
        assert_eq!(s.median_ratio, Some(0.96));
        assert_eq!(
            (s.slower, s.faster),
            (1, 1),
            "4% slower is noise; 25% slower is not"
        );
        assert_eq!(
            step_sentence(&labels(&[&prev, &cur])[0], &s),
            "Against the previous run (vllm a · 2026-01-01): median 0.96× over 3 shared valid cells; 1 cell slower and 1 faster by more than 5%."
        );
    }

    #[test]
    fn with_intervals_a_step_judges_by_the_noise_of_both_runs() {
        let cells = [(8192, 1, 100.0), (8192, 4, 300.0)];
        let prev = run("a", "2026-01-01T00:00:00Z", &cells);
        let mut cur = run(
            "b",
            "2026-02-01T00:00:00Z",
            &[(8192, 1, 97.0), (8192, 4, 290.0)],
        );
        let mut prev = prev;
        // ±0.5% on every cell: 3% slower is beyond the noise, though under 5%.
        prev.set_noise(0.005);
        cur.set_noise(0.005);
        let s = step(&prev, &cur);
        assert_eq!(
            (s.slower, s.faster, s.by_interval, s.by_threshold),
            (2, 0, 2, 0)
        );
        assert!(step_sentence("a", &s).ends_with(
            "2 cells slower and 0 faster beyond the noise of both runs (95% intervals)."
        ));
        // ±10%: the same 3% is within noise.
        cur.set_noise(0.1);
        assert_eq!(step(&prev, &cur).slower, 0);
    }
}
