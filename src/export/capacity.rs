//! A run's capacity within each latency budget (`compare::capacity`) as
//! downloads: `capacity.csv` and `capacity.json` (schema
//! docs/schema/capacity.schema.json), one row per tier and context, empty
//! where it cannot be judged.

use crate::compare::capacity::{CapacityRow, RowOutcome};
use crate::model::Run;
use crate::model::slo::{CapacityFile, CapacityRecord, SloFile, SloTier};

fn records(run: &Run, slo: &SloFile) -> Vec<CapacityRecord> {
    slo.tiers
        .iter()
        .flat_map(|t| {
            crate::compare::capacity::capacity(run, t)
                .into_iter()
                .map(move |row| record(t, &row))
        })
        .collect()
}

fn record(t: &SloTier, row: &CapacityRow) -> CapacityRecord {
    let mut r = CapacityRecord {
        tier: t.name.clone(),
        percentile: t.percentile,
        context_tokens: row.context_tokens,
        judged: false,
        max_concurrency: None,
        total_tok_per_s: None,
        binding_limit: None,
        breaks_at: None,
        overshoot: None,
        monotone: None,
        few_requests: None,
    };
    if let RowOutcome::Judged(c) = &row.outcome {
        r.judged = true;
        r.max_concurrency = c.max_concurrency;
        r.total_tok_per_s = c.goodput;
        r.binding_limit = c.breaks.as_ref().map(|b| b.breach.code().to_string());
        r.breaks_at = c.breaks.as_ref().map(|b| b.concurrency);
        r.overshoot = c.breaks.as_ref().and_then(|b| b.breach.overshoot());
        r.monotone = Some(c.monotone());
        r.few_requests = Some(!c.few_requests.is_empty());
    }
    r
}

/// `capacity.json`: the tiers and every row.
pub(crate) fn capacity_json(run: &Run, slo: &SloFile) -> String {
    crate::store::to_json(&CapacityFile {
        run: run.id.clone(),
        tiers: slo.tiers.clone(),
        rows: records(run, slo),
    })
}

/// `capacity.csv`: `tier, percentile, context_tokens, max_concurrency,
/// total_tok_per_s, binding_limit, monotone`, then the rest of a record.
pub(crate) fn capacity_csv(run: &Run, slo: &SloFile) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |v: Option<String>| v.unwrap_or_default();
    w.write_record([
        "tier",
        "percentile",
        "context_tokens",
        "max_concurrency",
        "total_tok_per_s",
        "binding_limit",
        "monotone",
        "breaks_at",
        "overshoot",
        "few_requests",
    ])
    .expect("writing to memory cannot fail");
    for r in records(run, slo) {
        w.write_record([
            r.tier,
            r.percentile.to_string(),
            r.context_tokens.to_string(),
            opt(r.max_concurrency.map(|v| v.to_string())),
            opt(r.total_tok_per_s.map(|v| v.to_string())),
            opt(r.binding_limit),
            opt(r.monotone.map(|v| v.to_string())),
            opt(r.breaks_at.map(|v| v.to_string())),
            opt(r.overshoot.map(|v| v.to_string())),
            opt(r.few_requests.map(|v| v.to_string())),
        ])
        .expect("writing to memory cannot fail");
    }
    String::from_utf8(w.into_inner().expect("writing to memory cannot fail")).expect("UTF-8")
}
