//! `sitegen check`: the newest run of every series judged against the runs
//! before it (src/judge/change.rs), as Markdown for people (the CI job's summary,
//! a pull request's comment) and JSON for machines, with an exit code for
//! a gate. Reads `data/` as `build` does and writes nothing there.

use std::fmt::Write as _;

use serde::Serialize;

use crate::judge::change::{Call, Judgement, Rule, Shift, Verdict};
use crate::judge::series::Series;
use crate::model::Run;
use crate::model::format;
use crate::render::change_words;

/// When `check` exits with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A series whose newest run is a regression.
    Regression,
    /// A regression or an improvement: any change.
    Change,
    /// Never (the report only).
    Never,
}

/// One series' newest run, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub series: String,
    pub title: String,
    pub run: String,
    pub label: String,
    pub measured_at: Option<String>,
    pub verdict: Verdict,
    /// Runs it was judged against (ids).
    pub baseline: Vec<String>,
    pub whole: Option<crate::judge::change::Estimate>,
    /// Not judged, too few runs before it: its plain ratio to them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plain_ratio: Option<f64>,
    pub cells_judged: usize,
    /// The cells called slower or faster.
    pub moved: Vec<crate::judge::change::CellJudgement>,
    /// Tiers and contexts where it serves fewer requests at once within a
    /// latency budget than its baseline (src/judge/capacity.rs); a drop the
    /// rule calls makes the run a regression.
    pub capacity_drops: Vec<crate::judge::capacity::CapacityDrop>,
    /// The last shift the series shows, when it has one.
    pub shift: Option<ShiftEntry>,
    /// The deliberate change the run follows, from data/changes.json.
    pub since_change: Option<String>,
    /// Pages, relative to the site's root.
    pub series_page: String,
    pub run_page: String,
    #[serde(skip)]
    pub sentence: String,
    /// The whole run against the runs before it, in words, or a dash.
    #[serde(skip)]
    pub whole_text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShiftEntry {
    pub from_run: String,
    pub change: f64,
    pub p: f64,
    pub sentence: String,
}

/// Everything `check` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The worst verdict of any series: regression, improvement, within
    /// noise, or insufficient data when nothing could be judged.
    pub verdict: Verdict,
    pub rule: RuleEntry,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleEntry {
    pub window: usize,
    pub threshold: f64,
    pub alpha: f64,
}

fn entry(
    runs: &[Run],
    s: &Series,
    j: &Judgement,
    shift: Option<&Shift>,
    at: usize,
    capacity: (&crate::model::slo::SloFile, &Rule),
) -> Entry {
    let members: Vec<&Run> = s.runs.iter().map(|&i| &runs[i]).collect();
    let run = members[at];
    // The noise of up to HISTORY runs before it, none before a noted change.
    let from = s
        .last_change()
        .map_or(0, |(k, _)| *k)
        .max(at.saturating_sub(crate::judge::change::HISTORY));
    let history: Vec<usize> = (from..at).collect();
    let capacity_drops = crate::judge::capacity::capacity_drops(
        &members,
        at,
        &j.baseline,
        &history,
        capacity.0,
        capacity.1,
    );
    let verdict = if capacity_drops.iter().any(|d| d.regression) {
        Verdict::Regression
    } else {
        j.verdict
    };
    Entry {
        capacity_drops,
        series: s.slug.clone(),
        title: s.title.clone(),
        run: run.id.clone(),
        label: s.labels[at].clone(),
        measured_at: run.meta.measured_at.clone(),
        verdict,
        baseline: j.baseline.iter().map(|&b| members[b].id.clone()).collect(),
        whole: j.whole,
        plain_ratio: j.plain_ratio,
        cells_judged: j.cells.len(),
        moved: j
            .cells
            .iter()
            .filter(|c| c.call != Call::Same)
            .copied()
            .collect(),
        shift: shift.map(|sh| ShiftEntry {
            from_run: members[sh.at].id.clone(),
            change: sh.change,
            p: sh.p,
            sentence: change_words::shift_sentence(sh, &change_words::when(&members, sh.at)),
        }),
        since_change: s
            .last_change()
            .map(|(k, text)| format!("{} ({text})", members[*k].id)),
        series_page: format!("series/{}/", s.slug),
        run_page: crate::render::run_href(run),
        sentence: change_words::judgement_line(j),
        whole_text: change_words::whole_text(j),
    }
}

/// The newest run of every series.
pub fn check_series(
    runs: &[Run],
    series: &[Series],
    rule: &Rule,
    slo: &crate::model::slo::SloFile,
) -> Report {
    let entries: Vec<Entry> = series
        .iter()
        .map(|s| {
            entry(
                runs,
                s,
                &s.newest,
                s.newest_shift.as_ref(),
                s.runs.len() - 1,
                (slo, rule),
            )
        })
        .collect();
    report(entries, rule)
}

/// One run against runs named as its baseline (`--run`, `--baseline`).
pub fn check_run(
    runs: &[Run],
    series: &[Series],
    run: &str,
    baseline: &[String],
    rule: &Rule,
    slo: &crate::model::slo::SloFile,
) -> anyhow::Result<Report> {
    let index = |id: &str| {
        runs.iter().position(|r| r.id == id).ok_or_else(|| {
            anyhow::anyhow!(
                "no run {id:?} in the data folder (runs: {})",
                runs.iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    let at = index(run)?;
    let bases: Vec<usize> = baseline
        .iter()
        .map(|b| index(b))
        .collect::<anyhow::Result<_>>()?;
    // The runs in order: the baseline (oldest first, as given), then the run.
    let mut order: Vec<usize> = bases.clone();
    order.push(at);
    let members: Vec<&Run> = order.iter().map(|&i| &runs[i]).collect();
    let positions: Vec<usize> = (0..bases.len()).collect();
    let j = crate::judge::change::judge(&members, bases.len(), &positions, rule);
    // Named as if a series of its own, linked to the run's series when it has one.
    let own = series.iter().find(|s| s.runs.contains(&at));
    let labels = crate::judge::series::labels(&members);
    let pseudo = Series {
        slug: own.map_or_else(String::new, |s| s.slug.clone()),
        title: own.map_or_else(|| runs[at].meta.model.clone(), |s| s.title.clone()),
        runs: order.clone(),
        labels,
        changes: Vec::new(),
        judgements: Vec::new(),
        shifts: Vec::new(),
        newest: j.clone(),
        newest_shift: None,
    };
    let mut e = entry(runs, &pseudo, &j, None, bases.len(), (slo, rule));
    if own.is_none() {
        e.series_page = String::new();
    }
    Ok(report(vec![e], rule))
}

fn report(entries: Vec<Entry>, rule: &Rule) -> Report {
    let verdict = entries
        .iter()
        .map(|e| e.verdict)
        .max_by_key(|v| v.rank())
        .unwrap_or(Verdict::InsufficientData);
    Report {
        verdict,
        rule: RuleEntry {
            window: rule.window,
            threshold: rule.threshold,
            alpha: rule.alpha,
        },
        entries,
    }
}

impl Report {
    /// The exit code a gate takes: 1 when `fail_on` is met, else 0.
    pub fn exit_code(&self, fail_on: FailOn) -> u8 {
        let regression = self
            .entries
            .iter()
            .any(|e| e.verdict == Verdict::Regression);
        let change = regression
            || self
                .entries
                .iter()
                .any(|e| e.verdict == Verdict::Improvement);
        match fail_on {
            FailOn::Regression if regression => 1,
            FailOn::Change if change => 1,
            _ => 0,
        }
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report is JSON") + "\n"
    }

    /// Markdown for the job summary and a pull request's comment; links
    /// start with `site_url` (the published site) where it is given.
    pub fn markdown(&self, site_url: Option<&str>, rule: &Rule) -> String {
        let link = |text: &str, path: &str| match site_url {
            Some(base) if !path.is_empty() => {
                format!("[{text}]({}/{path})", base.trim_end_matches('/'))
            }
            _ => text.to_string(),
        };
        let count = |v: Verdict| self.entries.iter().filter(|e| e.verdict == v).count();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## sitegen check: {}\n",
            if self.entries.is_empty() {
                "no series to judge (no setup measured more than once)".to_string()
            } else {
                [
                    Verdict::Regression,
                    Verdict::Improvement,
                    Verdict::WithinNoise,
                    Verdict::InsufficientData,
                ]
                .into_iter()
                .filter(|&v| count(v) > 0)
                .map(|v| format!("{} {}", count(v), v.label()))
                .collect::<Vec<_>>()
                .join(", ")
            }
        );
        if self.entries.is_empty() {
            return out;
        }
        let _ = writeln!(
            out,
            "| Series | Newest run | Verdict | Whole run vs before | Cells slower / faster |"
        );
        let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
        for e in &self.entries {
            let verdict = match e.verdict {
                Verdict::Regression => format!("**{}**", e.verdict.label()),
                v => v.label().to_string(),
            };
            let slower = e.moved.iter().filter(|c| c.call == Call::Slower).count();
            let faster = e.moved.len() - slower;
            let _ = writeln!(
                out,
                "| {} | {} | {verdict} | {} | {} |",
                link(&md(&e.title), &e.series_page),
                link(&md(&e.label), &e.run_page),
                e.whole_text,
                if e.verdict == Verdict::InsufficientData {
                    format::DASH.to_string()
                } else {
                    format!("{slower} / {faster} of {}", e.cells_judged)
                }
            );
        }
        for e in self.entries.iter().filter(|e| {
            matches!(e.verdict, Verdict::Regression | Verdict::Improvement)
                || e.shift.is_some()
                || !e.capacity_drops.is_empty()
        }) {
            let _ = writeln!(out, "\n### {}: {}\n", md(&e.title), e.verdict.label());
            let _ = writeln!(out, "{}: {}", md(&e.label), md(&e.sentence));
            if let Some(sh) = &e.shift {
                let _ = writeln!(out, "\n{}", md(&sh.sentence));
            }
            if let Some(c) = &e.since_change {
                let _ = writeln!(out, "\nSince the noted change {}.", md(c));
            }
            if matches!(e.verdict, Verdict::Regression | Verdict::Improvement) {
                let _ = writeln!(
                    out,
                    "\nA deliberate change (a new engine version, a new flag)? Note it in `data/changes.json` and the runs from it on are judged against each other only."
                );
            }
            for d in &e.capacity_drops {
                let _ = writeln!(out, "\n{}", md(&crate::render::capacity::drop_sentence(d)));
            }
            if !e.moved.is_empty() {
                let _ = writeln!(
                    out,
                    "\n| Context | Requests at once | Ratio | 95% interval | Call |"
                );
                let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
                for c in &e.moved {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} to {} | {} |",
                        format::context_label(c.context_tokens),
                        c.concurrency,
                        format::ratio(c.estimate.ratio),
                        format::ratio(c.estimate.low),
                        format::ratio(c.estimate.high),
                        if c.call == Call::Slower {
                            "slower"
                        } else {
                            "faster"
                        }
                    );
                }
            }
            let _ = writeln!(
                out,
                "\n{}{}",
                if e.series_page.is_empty() {
                    String::new()
                } else {
                    format!("{} · ", link("series page", &e.series_page))
                },
                link("run page", &e.run_page)
            );
        }
        let _ = writeln!(
            out,
            "\n<sub>{}</sub>",
            md(&change_words::rule_sentence(rule))
        );
        out
    }
}

/// Text safe in a Markdown table cell or line: no pipes, no HTML.
fn md(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
