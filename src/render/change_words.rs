//! Every sentence about change, once: series pages, run pages, the index
//! and `sitegen check` say a judgement (src/judge/change.rs) in these words.

use crate::judge::change::{Judgement, MIN_BASELINE, Rule, Shift, Verdict};
use crate::model::format;

/// "Regression", "Within noise", as a sentence starts.
pub fn verdict_title(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "Regression",
        Verdict::Improvement => "Improvement",
        Verdict::WithinNoise => "Within noise",
        Verdict::InsufficientData => "Insufficient data",
    }
}

/// What the rule is, said once where its calls are shown.
pub fn rule_sentence(rule: &Rule) -> String {
    format!(
        "Each run is judged against the median of the {window} runs before it (none before a noted change, none called changed themselves): a cell, or the run as a whole (the median over its cells), is called slower or faster when the difference is significant at {alpha}% for the whole run (Holm's correction over its cells; the noise from the spread of the {history} runs before it, never less than the cell's own interval) and its 95% interval reaches past {threshold}%. A change that lasts stays called until it is noted in data/changes.json.",
        window = rule.window,
        alpha = format::trim_number(rule.alpha * 100.0),
        history = crate::judge::change::HISTORY,
        threshold = format::trim_number(rule.threshold * 100.0),
    )
}

/// A ratio with its interval: "0.91× (0.88× to 0.94×)".
pub fn estimate_text(e: &crate::judge::change::Estimate) -> String {
    format!(
        "{} ({} to {})",
        format::ratio(e.ratio),
        format::ratio(e.low),
        format::ratio(e.high)
    )
}

/// One run's judgement, after its verdict: "against the median of the 5
/// runs before it, the whole run is 0.91× (0.88× to 0.94×); 12 of 30 cells
/// slower, 0 faster."
pub fn judgement_sentence(j: &Judgement) -> String {
    if j.verdict == Verdict::InsufficientData {
        return if j.baseline.len() < MIN_BASELINE {
            format!(
                "{}not judged: {} earlier {} of this setup since the last noted change, {MIN_BASELINE} needed.",
                plain_ratio_text(j).map_or_else(String::new, |r| format!("{r}; ")),
                j.baseline.len(),
                if j.baseline.len() == 1 { "run" } else { "runs" }
            )
        } else {
            "not judged: no decode cell it ran validly was measured validly by enough of the runs before it.".into()
        };
    }
    let whole = j.whole.as_ref().map_or_else(String::new, |e| {
        format!("the whole run is {}; ", estimate_text(e))
    });
    let k = j.baseline.len();
    let runs = run_numbers(&j.baseline);
    let against = match j.basis {
        crate::judge::change::BaselineKind::Window if j.left_out == 0 => {
            format!("against the median of the {k} runs before it")
        }
        crate::judge::change::BaselineKind::Window => {
            format!("against the median of runs {runs}, the {k} before it not called changed")
        }
        crate::judge::change::BaselineKind::BeforeShift { at } => format!(
            "against the median of runs {runs}, before the series shifted at run {}",
            at + 1
        ),
    };
    format!(
        "{against}, {whole}{} of {} slower, {} faster.",
        j.slower(),
        format::counted(j.cells.len(), "cell"),
        j.faster()
    )
}

/// The plain ratio of a run too few runs precede to judge, against those
/// runs: "0.80× the run before", "0.80× the median of the 2 runs before".
pub fn plain_ratio_text(j: &Judgement) -> Option<String> {
    let r = format::ratio(j.plain_ratio?);
    Some(match j.baseline.len() {
        1 => format!("{r} the run before"),
        k => format!("{r} the median of the {k} runs before"),
    })
}

/// The whole run against the runs before it: its estimate when judged, its
/// plain ratio when too few runs precede it, else a dash.
pub fn whole_text(j: &Judgement) -> String {
    j.whole
        .as_ref()
        .map(estimate_text)
        .or_else(|| plain_ratio_text(j))
        .unwrap_or_else(|| format::DASH.to_string())
}

/// A run's verdict in a list of series: "regression", "insufficient data
/// (0.80× the run before)".
pub fn verdict_summary(j: &Judgement) -> String {
    match plain_ratio_text(j) {
        Some(r) => format!("{} ({r})", j.verdict.label()),
        None => j.verdict.label().to_string(),
    }
}

/// Series positions as run numbers: "13–17", "12, 13 and 15–17".
pub fn run_numbers(positions: &[usize]) -> String {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &p in positions {
        match spans.last_mut() {
            Some((_, end)) if *end + 1 == p => *end = p,
            _ => spans.push((p, p)),
        }
    }
    let shown: Vec<String> = spans
        .iter()
        .map(|&(a, b)| match b - a {
            0 => (a + 1).to_string(),
            1 => format!("{}, {}", a + 1, b + 1),
            _ => format!("{}–{}", a + 1, b + 1),
        })
        .collect();
    format::and_list(&shown)
}

/// "Regression: against the median of ..."
pub fn judgement_line(j: &Judgement) -> String {
    format!("{}: {}", verdict_title(j.verdict), judgement_sentence(j))
}

/// Labels in a list: "8K", "8K and 16K", "8K, 16K and 32K", or a range of
/// `all` ("8K–128K") when they are a run of it.
fn listed(shown: &[String], all: &[String]) -> String {
    if shown.len() > 2
        && let Some(first) = all.iter().position(|a| *a == shown[0])
        && all.get(first..first + shown.len()) == Some(shown)
    {
        return format::range_label(&shown[0], &shown[shown.len() - 1]);
    }
    format::and_list(shown)
}

/// What moved in a shift: "(8K–128K, all levels)", "(8K and 16K, at 32 and 64 requests)".
pub fn moved_text(shift: &Shift) -> String {
    let label = |v: &[u64]| {
        v.iter()
            .map(|&c| format::context_label(c))
            .collect::<Vec<_>>()
    };
    let contexts = if shift.contexts == shift.all_contexts {
        "all contexts".to_string()
    } else {
        listed(&label(&shift.contexts), &label(&shift.all_contexts))
    };
    let levels = if shift.levels == shift.all_levels {
        "all levels".to_string()
    } else {
        let l: Vec<String> = shift.levels.iter().map(u32::to_string).collect();
        let all: Vec<String> = shift.all_levels.iter().map(u32::to_string).collect();
        format!("at {} requests", listed(&l, &all))
    };
    match (shift.contexts.is_empty(), shift.levels.is_empty()) {
        (true, true) => "no context or level alone beyond the threshold".into(),
        (true, false) => levels,
        (false, true) => contexts,
        (false, false) => format!("{contexts}, {levels}"),
    }
}

/// "From 2026-10-16 (run 16) decode is 9% slower (8K–128K, all levels)."
pub fn shift_sentence(shift: &Shift, when: &str) -> String {
    let pct = format::trim_number((shift.change.abs() * 1000.0).round() / 10.0);
    format!(
        "From {when} decode is {pct}% {} ({}).",
        if shift.change < 0.0 {
            "slower"
        } else {
            "faster"
        },
        moved_text(shift)
    )
}

/// What a series says of an unchanged setup.
pub fn unchanged_sentence(runs: usize, newest: &Judgement) -> String {
    format!(
        "An unchanged setup: no change point in its {runs} runs, and the newest run is within noise of the {} before it.",
        newest.baseline.len()
    )
}

/// "2026-10-16 (run 16)", or "run 16" for an undated run.
pub fn when(runs: &[&crate::model::Run], at: usize) -> String {
    match runs[at].meta.measured_at.as_deref() {
        Some(d) => format!("{} (run {})", d.get(..10).unwrap_or(d), at + 1),
        None => format!("run {}", at + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shift(contexts: &[u64], levels: &[u32]) -> Shift {
        Shift {
            at: 15,
            change: -0.091,
            p: 1e-6,
            contexts: contexts.to_vec(),
            levels: levels.to_vec(),
            all_contexts: vec![8192, 16_384, 32_768, 65_536, 131_072, 262_144],
            all_levels: vec![1, 2, 4, 8],
        }
    }

    #[test]
    fn run_numbers_are_ranges() {
        assert_eq!(run_numbers(&[12, 13, 14, 15, 16]), "13–17");
        assert_eq!(run_numbers(&[11, 12, 14, 15, 16]), "12, 13 and 15–17");
        assert_eq!(run_numbers(&[3]), "4");
        assert_eq!(run_numbers(&[1, 5, 9]), "2, 6 and 10");
    }

    #[test]
    fn a_shift_names_what_moved() {
        let all = shift(&[8192, 16_384, 32_768, 65_536, 131_072], &[1, 2, 4, 8]);
        assert_eq!(
            shift_sentence(&all, "2026-10-16 (run 16)"),
            "From 2026-10-16 (run 16) decode is 9.1% slower (8K–128K, all levels)."
        );
        let some = shift(&[8192, 65_536], &[2, 4]);
        assert_eq!(moved_text(&some), "8K and 64K, at 2 and 4 requests");
        let every = shift(&[8192, 16_384, 32_768, 65_536, 131_072, 262_144], &[8]);
        assert_eq!(moved_text(&every), "all contexts, at 8 requests");
    }

    /// The judgement of the last of `totals` (one run each, its 8K × 1 and
    /// 8K × 4 totals; NaN: Looped) against the runs before it.
    fn judgement_of(totals: &[[f64; 2]]) -> Judgement {
        use crate::model::Status::{Looped, Valid};
        let runs: Vec<crate::model::Run> = totals
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let cell = |n: u32, t: f64| (8192, n, if t.is_nan() { Looped } else { Valid }, t);
                crate::compare::tests::with_cells(&format!("r{i}"), &[cell(1, t[0]), cell(4, t[1])])
            })
            .collect();
        let refs: Vec<&crate::model::Run> = runs.iter().collect();
        let at = refs.len() - 1;
        crate::judge::change::judge(&refs, at, &(0..at).collect::<Vec<_>>(), &Rule::default())
    }

    /// The sentence of that judgement.
    fn sentence_of(totals: &[[f64; 2]]) -> String {
        judgement_line(&judgement_of(totals))
    }

    #[test]
    fn the_index_summary_says_the_plain_ratio_only_where_there_is_one() {
        assert_eq!(
            verdict_summary(&judgement_of(&[[100.0, 300.0], [80.0, 240.0]])),
            "insufficient data (0.80× the run before)"
        );
        assert_eq!(
            verdict_summary(&judgement_of(&[[80.0, 240.0]])),
            "insufficient data"
        );
        // The run before measured validly only the cell this one did not.
        assert_eq!(
            verdict_summary(&judgement_of(&[[f64::NAN, 300.0], [80.0, f64::NAN]])),
            "insufficient data"
        );
    }

    #[test]
    fn a_run_too_few_runs_precede_says_its_plain_ratio_first() {
        assert_eq!(
            sentence_of(&[[100.0, 300.0], [80.0, 240.0]]),
            "Insufficient data: 0.80× the run before; not judged: 1 earlier run of this setup since the last noted change, 3 needed."
        );
        assert_eq!(
            sentence_of(&[[100.0, 300.0], [100.0, 300.0], [80.0, 240.0]]),
            "Insufficient data: 0.80× the median of the 2 runs before; not judged: 2 earlier runs of this setup since the last noted change, 3 needed."
        );
    }

    #[test]
    fn no_ratio_is_said_without_a_cell_both_sides_measured_validly() {
        // The first run: nothing before it.
        assert_eq!(
            sentence_of(&[[80.0, 240.0]]),
            "Insufficient data: not judged: 0 earlier runs of this setup since the last noted change, 3 needed."
        );
        // The run before measured validly only the cell this one did not.
        assert_eq!(
            sentence_of(&[[f64::NAN, 300.0], [80.0, f64::NAN]]),
            "Insufficient data: not judged: 1 earlier run of this setup since the last noted change, 3 needed."
        );
        // Of the two before, one measured validly neither cell.
        assert_eq!(
            sentence_of(&[[100.0, 300.0], [f64::NAN, f64::NAN], [80.0, 240.0]]),
            "Insufficient data: not judged: 2 earlier runs of this setup since the last noted change, 3 needed."
        );
    }
}
