//! Series: runs of one setup (model, GPU, GPU count, quantization) measured
//! again over time, each run judged against the runs before it and the
//! whole series searched for change points (src/judge/change.rs: one rule for
//! every page and `sitegen check`). Pure functions over runs.

use crate::compare;
use crate::judge::change::{self, Judgement, Rule, Shift};
use crate::model::{AnnotatedChange, ChangesFile, Run};

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
    /// Deliberate changes noted in data/changes.json: (the position of the
    /// first run after it, what changed). Each starts a new baseline.
    pub changes: Vec<(usize, String)>,
    /// Each run against the runs before it (its baseline window), found
    /// once for every page that tells it.
    pub judgements: Vec<Judgement>,
    /// Where the series shifted, change points of each stretch between
    /// annotated changes.
    pub shifts: Vec<Shift>,
    /// The newest run's verdict: against its window, and against the runs
    /// before the last shift (`sitegen check`'s).
    pub newest: Judgement,
    pub newest_shift: Option<Shift>,
}

impl Series {
    /// The position of the first run of the stretch `at` is in: after the
    /// last annotated change at or before it.
    pub fn stretch_start(&self, at: usize) -> usize {
        self.changes
            .iter()
            .map(|(k, _)| *k)
            .filter(|&k| k <= at)
            .max()
            .unwrap_or(0)
    }

    /// The annotated change the newest run follows, if any.
    pub fn last_change(&self) -> Option<&(usize, String)> {
        let newest = self.runs.len().saturating_sub(1);
        self.changes
            .iter()
            .filter(|(k, _)| *k <= newest)
            .max_by_key(|(k, _)| *k)
    }
}

/// The position of the first run of `runs` (oldest first) a change applies to.
fn change_position(change: &AnnotatedChange, runs: &[&Run]) -> Option<usize> {
    match (&change.run, &change.date) {
        (Some(id), _) => runs.iter().position(|r| &r.id == id),
        (None, Some(date)) => {
            let day = crate::model::format::epoch_days(&format!("{date}T00:00:00Z"))?;
            runs.iter().position(|r| {
                r.meta
                    .measured_at
                    .as_deref()
                    .and_then(crate::model::format::epoch_days)
                    .is_some_and(|d| d >= day)
            })
        }
        (None, None) => None,
    }
}

/// A series of an earlier build of the same data (`sitegen serve`), whose
/// judgements stand for the runs that did not change.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub slug: String,
    /// Its runs' ids, oldest first, each with whether that run is unchanged.
    pub members: Vec<(String, bool)>,
    pub changes: Vec<(usize, String)>,
    pub judgements: Vec<Judgement>,
    /// The rest of what it was judged to be, kept when none of its runs
    /// changed: the same runs again give the same labels and shifts.
    pub settled: Option<Settled>,
}

/// What a series is besides its judgements, kept from an earlier build.
#[derive(Debug, Clone)]
pub struct Settled {
    labels: Vec<String>,
    shifts: Vec<Shift>,
    newest: Judgement,
    newest_shift: Option<Shift>,
}

impl Earlier {
    /// `series` of a build whose runs were `runs`; `unchanged` tells a run
    /// read again the same from one that changed.
    pub fn of(series: &Series, runs: &[Run], unchanged: impl Fn(&Run) -> bool) -> Earlier {
        let members: Vec<(String, bool)> = series
            .runs
            .iter()
            .map(|&i| (runs[i].id.clone(), unchanged(&runs[i])))
            .collect();
        let settled = members.iter().all(|(_, same)| *same).then(|| Settled {
            labels: series.labels.clone(),
            shifts: series.shifts.clone(),
            newest: series.newest.clone(),
            newest_shift: series.newest_shift.clone(),
        });
        Earlier {
            slug: series.slug.clone(),
            members,
            changes: series.changes.clone(),
            judgements: series.judgements.clone(),
            settled,
        }
    }
}

/// Every setup with two or more runs, runs in date order (runs without a
/// date first, by id: they predate dated runs), each judged by `rule` with
/// the deliberate changes of `changes`.
pub fn series(runs: &[Run], changes: &ChangesFile, rule: &Rule) -> Vec<Series> {
    series_after(runs, changes, rule, &[])
}

/// [`series`], keeping of each `earlier` series the judgements of its runs
/// before the first that changed, moved or is new: the same as judging
/// them again, as a run is judged by the runs before it alone.
pub fn series_after(
    runs: &[Run],
    changes: &ChangesFile,
    rule: &Rule,
    earlier: &[Earlier],
) -> Vec<Series> {
    let mut groups: std::collections::BTreeMap<compare::plan::SetupKey, Vec<usize>> =
        Default::default();
    for (i, run) in runs.iter().enumerate() {
        if let Some(key) = compare::plan::setup_key(run) {
            groups.entry(key).or_default().push(i);
        }
    }
    let groups: Vec<(compare::plan::SetupKey, Vec<usize>)> = groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .collect();
    // Each series judged on its own, so on every core, in their order.
    crate::threads::map_in_order(&groups, |(key, members)| {
        one_series(runs, changes, rule, earlier, key, members.clone())
    })
}

/// The series of the runs `members` of one setup `key`.
fn one_series(
    runs: &[Run],
    changes: &ChangesFile,
    rule: &Rule,
    earlier: &[Earlier],
    key: &compare::plan::SetupKey,
    mut members: Vec<usize>,
) -> Series {
    let (model, _, _, quant) = key;
    members.sort_by(|&a, &b| {
        let key = |i: usize| (runs[i].meta.measured_at.clone(), runs[i].id.clone());
        key(a).cmp(&key(b))
    });
    let first = &runs[members[0]];
    let hardware = crate::model::labels::hardware_label(&first.meta.hardware);
    let title = if quant.is_empty() {
        format!("{model} on {hardware}")
    } else {
        format!("{model} on {hardware} ({quant})")
    };
    let slug = slug(&format!(
        "{model}-{}-x{}-{quant}",
        first.meta.hardware.gpu, first.meta.hardware.gpu_count
    ));
    let members_runs: Vec<&Run> = members.iter().map(|&i| &runs[i]).collect();
    let mut noted: Vec<(usize, String)> = changes
        .changes
        .iter()
        .filter(|c| c.series.as_ref().is_none_or(|s| *s == slug))
        .filter_map(|c| Some((change_position(c, &members_runs)?, c.text.clone())))
        .filter(|(k, _)| *k > 0)
        .collect();
    noted.sort();
    let starts: Vec<usize> = noted.iter().map(|(k, _)| *k).collect();
    let stretch = |at: usize| {
        starts
            .iter()
            .copied()
            .filter(|&k| k <= at)
            .max()
            .unwrap_or(0)
    };
    let earlier = earlier
        .iter()
        .find(|e| e.slug == slug && e.changes == noted);
    // The earlier series when it held the same runs in the same places.
    let same_runs = earlier.filter(|e| {
        e.members.len() == members_runs.len()
            && e.members
                .iter()
                .zip(&members_runs)
                .all(|((id, _), run)| *id == run.id)
    });
    // None of them changed either (a new run in another series): judging
    // them again would give what they were given, and their change points
    // are most of a rebuild's judging (70-95 ms for 5,000 runs).
    if let Some(e) = same_runs
        && let Some(settled) = &e.settled
    {
        let settled = settled.clone();
        return Series {
            slug,
            title,
            labels: settled.labels,
            changes: noted,
            judgements: e.judgements.clone(),
            shifts: settled.shifts,
            newest: settled.newest,
            newest_shift: settled.newest_shift,
            runs: members,
        };
    }
    let known: Vec<Judgement> = earlier
        .map(|e| {
            let same = e
                .members
                .iter()
                .zip(&members_runs)
                .take_while(|((id, unchanged), run)| *unchanged && *id == run.id)
                .count();
            e.judgements[..same].to_vec()
        })
        .unwrap_or_default();
    // The same runs in the same places, some changed: the runs after the
    // last changed one are judged until they settle back (change::Before).
    let before = same_runs.and_then(|e| {
        let last_changed = e.members.iter().rposition(|(_, unchanged)| !unchanged)?;
        Some(change::Before {
            judgements: &e.judgements,
            last_changed,
        })
    });
    let mut bounds = vec![0];
    bounds.extend(starts.iter().copied());
    bounds.dedup();
    // The runs judged one after another (each baseline leaves out the runs
    // called changed before it) and, on the other core, the change points
    // within each stretch between deliberate changes, which read no
    // judgement: a series of 1,000 runs is 55 ms of the one, 10-20 of the other.
    let (judgements, (shifts, last_shift)) = crate::threads::both(
        || change::judge_all_after(&members_runs, stretch, rule, known, before),
        || {
            let mut shifts = Vec::new();
            let mut last_shift = None;
            for (k, &from) in bounds.iter().enumerate() {
                let to = bounds.get(k + 1).copied().unwrap_or(members_runs.len());
                let found = change::shifts(&members_runs[..to], from, rule);
                // The last stretch's, which the newest run is judged by.
                last_shift = found.last().cloned();
                shifts.extend(found);
            }
            (shifts, last_shift)
        },
    );
    let from = stretch(members_runs.len() - 1);
    debug_assert_eq!(Some(&from), bounds.last());
    let last = members_runs.len() - 1;
    let (newest, newest_shift) =
        change::newest_after(&members_runs, from, &judgements[..last], rule, last_shift);
    Series {
        slug,
        title,
        labels: labels(&members_runs),
        changes: noted,
        judgements,
        shifts,
        newest,
        newest_shift,
        runs: members,
    }
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

/// How many differing settings a label names before it says "+N more".
const SETTINGS_IN_LABEL: usize = 2;

/// What tells each run of a series from the others: its engine version and
/// when it was measured (or its id), and the launch settings not every run
/// of the series shares ("vllm 0.11.0 · 2026-09-01 · --max-num-seqs 256").
pub fn labels(runs: &[&Run]) -> Vec<String> {
    // Each command parsed once: nightly runs mostly share theirs.
    let mut parsed: std::collections::HashMap<&str, Vec<String>> = Default::default();
    let settings: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            r.meta
                .launch_command
                .as_deref()
                .map(|c| {
                    parsed
                        .entry(c)
                        .or_insert_with(|| crate::model::launch::settings(c))
                        .clone()
                })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, DecodeCell, Status};

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
        let s = series(&runs, &Default::default(), &Rule::default());
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
}
