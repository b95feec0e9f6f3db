//! Capacity within a latency budget (`compare::capacity`) as pages show it:
//! its words and the run page's section, for the run page, the comparison
//! and the index, so every page says the same of the same row.

use crate::compare::capacity::{Breach, Break, Capacity, CapacityRow, Limit, RowOutcome};
use crate::model::format;
use crate::model::slo::SloTier;

/// "TTFT" or "TPOT" at a percentile: "p99 TTFT", "median TPOT".
pub fn limit_name(limit: Limit, percentile: u8) -> String {
    let what = match limit {
        Limit::Ttft => "TTFT",
        Limit::Tpot => "TPOT",
    };
    format!("{} {what}", percentile_name(percentile))
}

/// "median", "p90", "p95", "p99".
pub fn percentile_name(percentile: u8) -> String {
    if percentile == 50 {
        "median".into()
    } else {
        format!("p{percentile}")
    }
}

/// A tier's limits: "median TTFT ≤ 2,000 ms and median TPOT ≤ 50 ms".
pub fn tier_limits(tier: &SloTier) -> String {
    let parts: Vec<String> = Limit::ALL
        .into_iter()
        .filter_map(|l| {
            let b = l.bound(tier)?;
            Some(format!("{} ≤ {}", limit_name(l, tier.percentile), ms(b)))
        })
        .collect();
    format::and_list(&parts)
}

/// Milliseconds as the pages write latency: whole below 10 s ("2,000 ms"),
/// a tenth below 100 ms ("37.5 ms").
pub fn ms(v: f64) -> String {
    if v < 100.0 {
        format!("{} ms", format::trim_number((v * 10.0).round() / 10.0))
    } else {
        format::millis(v)
    }
}

/// A row's capacity in a few words: "32 requests, 2,270.4 tok/s",
/// "none", or why it cannot be judged.
pub fn capacity_cell(row: &CapacityRow, tier: &SloTier) -> String {
    match &row.outcome {
        RowOutcome::NotRecorded { limits, .. } => {
            let names: Vec<String> = limits
                .iter()
                .map(|l| limit_name(*l, tier.percentile))
                .collect();
            format!("{} not recorded", format::and_list(&names))
        }
        RowOutcome::Judged(c) => match (c.max_concurrency, c.goodput) {
            (Some(n), Some(g)) => format!(
                "{}, {} tok/s",
                format::counted(n as usize, "request"),
                format::tok_per_s(g)
            ),
            (Some(n), None) => format::counted(n as usize, "request"),
            (None, _) => "none".into(),
        },
    }
}

/// What breaks first above capacity: "then at 8: p99 TPOT 120 ms > 50 ms
/// (2.40×, a cliff)", "then at 64: Over capacity", "already at 1: …", or
/// that every level met it.
pub fn break_words(c: &Capacity, tier: &SloTier) -> String {
    match &c.breaks {
        None => "met at every level measured".into(),
        Some(b) => {
            let lead = if c.max_concurrency.is_some() {
                "then"
            } else {
                "already"
            };
            // A figure from too few requests is an estimate, written so.
            let estimate = c.few_requests.iter().any(|f| {
                f.concurrency == b.concurrency
                    && matches!(b.breach, Breach::Over { limit, .. } if limit == f.limit)
            });
            format!(
                "{lead} at {}: {}",
                b.concurrency,
                breach_at(b, tier.percentile, estimate)
            )
        }
    }
}

/// [`limit_words`], then how far past its bound and whether it fell off a
/// cliff: "p99 TTFT 2,352 ms > 2,000 ms (1.18×, gradual)".
fn breach_at(b: &Break, percentile: u8, estimate: bool) -> String {
    let words = limit_words(b.breach, percentile, estimate);
    match b.breach {
        Breach::Status(_) => words,
        Breach::Over { value, bound, .. } => format!(
            "{words} ({}, {})",
            format::ratio(value / bound),
            if b.cliff == Some(true) {
                "a cliff"
            } else {
                "gradual"
            }
        ),
    }
}

/// The status, or the limit with its value ("≈" when from too few
/// requests) and bound: "p99 TTFT 2,352 ms > 2,000 ms".
fn limit_words(breach: Breach, percentile: u8, estimate: bool) -> String {
    match breach {
        Breach::Status(s) => s.label().to_string(),
        Breach::Over {
            limit,
            value,
            bound,
        } => format!(
            "{} {}{} > {}",
            limit_name(limit, percentile),
            if estimate { "≈ " } else { "" },
            ms(value),
            ms(bound)
        ),
    }
}

/// What a reader must know of a row beyond its figure: levels below that
/// did not meet the tier, percentiles from too few requests. Each is a
/// sentence naming the context.
pub fn row_notes(row: &CapacityRow, tier: &SloTier) -> Vec<String> {
    let RowOutcome::Judged(c) = &row.outcome else {
        return Vec::new();
    };
    let ctx = format::context_label(row.context_tokens);
    let mut notes = Vec::new();
    if !c.monotone() {
        let below: Vec<String> = c.failed_below.iter().map(u32::to_string).collect();
        notes.push(format!(
            "{ctx}: not monotone: {} did not meet it though {} did.",
            format::and_list(&below),
            c.max_concurrency.unwrap_or_default()
        ));
    }
    if !c.few_requests.is_empty() {
        let cells: Vec<String> = c
            .few_requests
            .iter()
            .map(|f| {
                format!(
                    "{} at {} from {}",
                    limit_name(f.limit, tier.percentile),
                    f.concurrency,
                    format::counted(f.requests as usize, "request")
                )
            })
            .collect();
        notes.push(format!(
            "{ctx}: an estimate, from too few requests: {}; a {} needs {} (MLPerf's early-stopping count).",
            format::and_list(&cells),
            percentile_name(tier.percentile),
            format::counted(c.few_requests[0].needed as usize, "request")
        ));
    }
    notes
}

/// A run's capacity, per tier and context, as the run page shows it.
pub struct CapacitySection {
    pub caption: String,
    /// Per tier shown in the table: (name, its limits).
    pub tiers: Vec<(String, String)>,
    /// Every tier, shown or not: (name, its source).
    pub sources: Vec<(String, String)>,
    /// Per context: its label, then per tier (capacity, what breaks).
    pub rows: Vec<(String, Vec<(String, String)>)>,
    /// Rows not monotone, percentiles from too few requests, and figures
    /// whose requests are not stated, per tier.
    pub notes: Vec<String>,
}

/// Every tier's rows of `run`, in the file's order.
pub fn tier_rows<'a>(
    run: &crate::model::Run,
    slo: &'a crate::model::slo::SloFile,
) -> Vec<(&'a SloTier, Vec<CapacityRow>)> {
    slo.tiers
        .iter()
        .map(|t| (t, crate::compare::capacity::capacity(run, t)))
        .collect()
}

/// The tier the matrix marks and the key figures give: the first at which
/// some context of the run can be judged.
pub fn chosen_tier<'a>(
    rows: &'a [(&'a SloTier, Vec<CapacityRow>)],
) -> Option<&'a (&'a SloTier, Vec<CapacityRow>)> {
    rows.iter().find(|(_, r)| {
        r.iter()
            .any(|row| matches!(row.outcome, RowOutcome::Judged(_)))
    })
}

pub fn section(all: &[(&SloTier, Vec<CapacityRow>)]) -> Option<CapacitySection> {
    let contexts: Vec<u64> = all.first()?.1.iter().map(|r| r.context_tokens).collect();
    if contexts.is_empty() {
        return None;
    }
    // A tier no context can be judged at is one sentence, not a column of
    // "not recorded".
    let (rows, unjudged): (Vec<_>, Vec<_>) = all.iter().partition(|(_, r)| {
        r.iter()
            .any(|row| matches!(row.outcome, RowOutcome::Judged(_)))
    });
    let mut notes: Vec<String> = unjudged
        .iter()
        .map(|(t, r)| {
            let missing: Vec<String> = Limit::ALL
                .into_iter()
                .filter(|l| {
                    r.iter().any(|row| {
                        matches!(&row.outcome, RowOutcome::NotRecorded { limits, .. } if limits.contains(l))
                    })
                })
                .map(|l| limit_name(l, t.percentile))
                .collect();
            format!(
                "{} ({}): not recorded: this run's cells do not state their {}.",
                t.name,
                tier_limits(t),
                format::or_list(&missing)
            )
        })
        .collect();
    for (tier, tier_rows) in &rows {
        let mut tier_notes: Vec<String> =
            tier_rows.iter().flat_map(|r| row_notes(r, tier)).collect();
        let unstated = tier_rows
            .iter()
            .any(|r| matches!(&r.outcome, RowOutcome::Judged(c) if c.requests_unstated));
        if unstated {
            tier_notes.push(
                "Some figures behind it do not say how many requests they were taken over, so whether they are estimates is not known."
                    .into(),
            );
        }
        notes.extend(
            tier_notes
                .into_iter()
                .map(|n| format!("{}: {n}", tier.name)),
        );
    }
    Some(CapacitySection {
        caption: CAPTION.into(),
        tiers: rows
            .iter()
            .map(|(t, _)| (t.name.clone(), tier_limits(t)))
            .collect(),
        sources: all
            .iter()
            .map(|(t, _)| (t.name.clone(), t.source.clone()))
            .collect(),
        rows: contexts
            .iter()
            .enumerate()
            .map(|(i, &ctx)| {
                (
                    format::context_label(ctx),
                    rows.iter()
                        .map(|(t, r)| {
                            let row = &r[i];
                            let then = match &row.outcome {
                                RowOutcome::Judged(c) => break_words(c, t),
                                RowOutcome::NotRecorded { concurrency, .. } => {
                                    format!("first missing at {concurrency} at once")
                                }
                            };
                            (capacity_cell(row, t), then)
                        })
                        .collect(),
                )
            })
            .collect(),
        notes,
    })
}

/// Under the capacity table: what a row's figure is.
pub const CAPTION: &str = "Most requests at once whose cell met every limit of a tier at its percentile, and their total tok/s there (goodput); then what broke first at the next level. Only Valid cells meet a tier: a queued or over-capacity cell did not serve that many at once. TTFT is as the decode matrix measures it, with a warm prompt cache.";

/// The key figure of the chosen tier: (what, figure, where), from its
/// smallest context judged with a capacity.
pub fn key_figure(tier: &SloTier, rows: &[CapacityRow]) -> Option<(String, String, String)> {
    let (context_tokens, c) = crate::compare::capacity::first_judged(rows)?;
    Some((
        format!("Within {}", tier.name),
        match c.max_concurrency {
            Some(n) => format::counted(n as usize, "request"),
            None => "no level".into(),
        } + " at once",
        format!(
            "at {}{}",
            format::context_label(context_tokens),
            c.goodput
                .map(|g| format!(", {} tok/s", format::tok_per_s(g)))
                .unwrap_or_default()
        ),
    ))
}

/// The key of the matrix's mark (a tick in the cell's corner): "Met 20
/// tok/s per user: median TTFT ≤ 2,000 ms and median TPOT ≤ 50 ms."
pub fn mark_legend(tier: &SloTier) -> String {
    format!("Met {}: {}.", tier.name, tier_limits(tier))
}

/// A capacity drop `sitegen check` found: "At 20 tok/s per user, 8K: 16
/// requests at once, 32 before (median TPOT 1.21× the baseline's at 32,
/// p = 0.001 family-wise): a regression."
pub fn drop_sentence(d: &crate::judge::capacity::CapacityDrop) -> String {
    use crate::judge::capacity::DropBy;
    let why = match d.by {
        DropBy::Limit {
            limit,
            estimate,
            p_family,
        } => format!(
            "{} {} the baseline's at {} (95% interval {} to {}, p = {} family-wise)",
            limit_name(limit, d.percentile),
            format::ratio(estimate.ratio),
            d.baseline,
            format::ratio(estimate.low),
            format::ratio(estimate.high),
            p_value(p_family)
        ),
        DropBy::Status { status } => format!(
            "{} at {}, where every baseline run met it",
            status.label(),
            d.baseline
        ),
    };
    format!(
        "At {}, {}: {} at once, {} before ({why}): {}.",
        d.tier,
        format::context_label(d.context_tokens),
        format::counted(d.newest as usize, "request"),
        d.baseline,
        if d.regression {
            "a regression"
        } else {
            "within noise"
        }
    )
}

/// A p-value as the reports write one: "< 0.001" or three decimals.
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// What broke at a load above capacity, briefly: the status, or the limit
/// with its value and bound ("p99 TTFT 2,352 ms > 2,000 ms").
pub fn breach_words(b: Breach, tier: &SloTier) -> String {
    limit_words(b, tier.percentile, false)
}

/// A sweep of rising load against a tier, in one sentence after `head`
/// (`compare::capacity::along`'s verdict, each load already in words):
/// "up to 4 sessions at once (…); then at 16: p99 TTFT … > …; not monotone:
/// 2 sessions did not meet it." `noun` names a load ("rate"), `few` what a
/// percentile from too few stands on.
#[allow(clippy::too_many_arguments)]
pub fn along_sentence(
    head: &str,
    tier: &SloTier,
    noun: &str,
    within: Option<String>,
    breaks: Option<(String, Breach)>,
    failed_below: &[String],
    estimate: bool,
    few: &str,
) -> String {
    let found = within.is_some();
    let within = within.unwrap_or_else(|| format!("no {noun} measured met it"));
    let then = match breaks {
        None => format!("; every {noun} measured met it"),
        Some((at, breach)) => {
            let lead = if found { "then" } else { "already" };
            format!("; {lead} at {at}: {}", breach_words(breach, tier))
        }
    };
    let below = match failed_below {
        [] => String::new(),
        loads => format!(
            "; not monotone: {} did not meet it",
            format::and_list(loads)
        ),
    };
    let estimate = if estimate {
        format!(
            " An estimate: some {} behind it stands on {few}.",
            percentile_name(tier.percentile)
        )
    } else {
        String::new()
    };
    format!("{head}: {within}{then}{below}.{estimate}")
}
