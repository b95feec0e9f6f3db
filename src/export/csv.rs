//! CSV downloads: a run's full measurement table, and a comparison's cells,
//! with raw numbers (no thousands separators, no units in the cells).

use crate::compare::{self, Comparison};
use crate::model::{Cell, Run};

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

fn int(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

fn status(s: crate::model::Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn finish(w: csv::Writer<Vec<u8>>) -> String {
    String::from_utf8(w.into_inner().expect("writing to memory cannot fail"))
        .expect("CSV of UTF-8 fields")
}

/// One row per cell, in the order of the page's table.
pub fn measurements_csv(run: &Run) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "phase",
        "context_tokens",
        "concurrency",
        "status",
        "reason",
        "total_tok_per_s",
        "per_request_tok_per_s",
        "ttft_ms",
        "tbt_ms",
        "avg_active_requests",
        "completed_requests",
        "output_tokens",
        "measured_s",
        "prompt_tokens",
    ])
    .expect("writing to memory cannot fail");
    for cell in &run.cells {
        let row = match cell {
            Cell::Prefill(c) => [
                "prefill".into(),
                c.context_tokens.to_string(),
                "1".into(),
                status(c.status),
                c.reason.clone().unwrap_or_default(),
                num(c.prompt_tok_per_s),
                String::new(),
                num(c.ttft_ms),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                int(c.prompt_tokens),
            ],
            Cell::Decode(c) => [
                "decode".into(),
                c.context_tokens.to_string(),
                c.concurrency.to_string(),
                status(c.status),
                c.reason.clone().unwrap_or_default(),
                num(c.total_tok_per_s),
                num(c.per_request_tok_per_s),
                num(c.ttft_median_ms),
                num(c.tbt_median_ms),
                num(c.avg_active_requests),
                int(c.completed_requests),
                int(c.output_tokens),
                num(c.measured_s),
                int(c.detail.as_ref().and_then(|d| d.prompt_tokens)),
            ],
        };
        w.write_record(&row).expect("writing to memory cannot fail");
    }
    finish(w)
}

/// One row per (context, concurrency) any run measured: each run's status and
/// total tok/s, and each run's ratio to the first with the reason when none.
pub fn comparison_csv(runs: &[Run], comparison: &Comparison) -> String {
    let members: Vec<&Run> = comparison.runs.iter().map(|&i| &runs[i]).collect();
    let base = members[0];
    let mut header = vec!["context_tokens".to_string(), "concurrency".to_string()];
    for r in &members {
        header.push(format!("{} status", r.id));
        header.push(format!("{} total_tok_per_s", r.id));
    }
    for r in &members[1..] {
        header.push(format!("{} / {}", r.id, base.id));
        header.push(format!("{} / {} reason", r.id, base.id));
    }
    let mut keys: Vec<(u64, u32)> = members
        .iter()
        .flat_map(|r| r.decode_cells().map(|c| (c.context_tokens, c.concurrency)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header)
        .expect("writing to memory cannot fail");
    for (ctx, n) in keys {
        let mut row = vec![ctx.to_string(), n.to_string()];
        for r in &members {
            let c = r.decode_cell(ctx, n);
            row.push(
                c.map(|c| status(c.status))
                    .unwrap_or_else(|| "not_measured".into()),
            );
            row.push(num(c.and_then(|c| c.total_tok_per_s)));
        }
        for r in &members[1..] {
            match compare::ratio(
                base.decode_cell(ctx, n),
                r.decode_cell(ctx, n),
                (&base.meta.model, &r.meta.model),
            ) {
                Ok(x) => {
                    row.push(x.to_string());
                    row.push(String::new());
                }
                Err(why) => {
                    row.push(String::new());
                    row.push(why);
                }
            }
        }
        w.write_record(&row).expect("writing to memory cannot fail");
    }
    finish(w)
}
