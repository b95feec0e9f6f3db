//! The run page's "Paced load" section: the points measured with requests
//! sent at a rate, in a table of their own and a chart of throughput
//! against per-user speed, and each sweep's capacity in requests a second
//! within every latency tier. Never mixed into the concurrency matrix.

use crate::compare::capacity::Limit;
use crate::compare::paced::{PacedCapacity, Sweep, capacity, sweeps};
use crate::model::format;
use crate::model::paced::{Arrivals, PacedPoint};
use crate::model::slo::{Quantiles, SloFile, SloTier};
use crate::model::{Run, Status};

use super::capacity::{along_sentence, limit_name, ms, tier_limits};
use super::charts::ChartError;
use super::status_table::{Column, StatusTable};

/// What the section shows.
pub struct PacedSection {
    /// What these points are, and how their arrivals were spaced.
    pub lead: String,
    /// Per tier and sweep, the most requests a second within it.
    pub capacity: Vec<String>,
    /// A row per point.
    pub table: StatusTable,
    /// Output tok/s against per-user tok/s, a line per sweep.
    pub chart_svg: Option<String>,
    /// Why there is no chart, when there is none.
    pub chart_note: Option<String>,
    /// What the chart's points are.
    pub chart_caption: &'static str,
}

/// "1,024 tokens", "509–515 tokens" or "1,024 tokens, at most 25 in flight".
fn sweep_label(s: &Sweep) -> String {
    let cap = s
        .max_concurrency
        .map_or_else(String::new, |n| format!(", at most {n} in flight"));
    // Mean prompts are measured, not planned contexts: written in full,
    // so a range never mixes "2K" with "2,049".
    let (low, high) = s.context_tokens;
    let context = if low == high {
        format::count(low)
    } else {
        format!("{}–{}", format::count(low), format::count(high))
    };
    format!("{context} tokens{cap}")
}

/// "4 req/s".
pub fn rate(v: f64) -> String {
    format!("{} req/s", format::rate_per_s(v))
}

/// How the run's points spaced their arrivals, in one phrase.
fn arrivals_words(points: &[PacedPoint]) -> String {
    let mut kinds: Vec<String> = points
        .iter()
        .map(|p| match p.load.arrivals {
            Arrivals::Poisson => "Poisson arrivals".to_string(),
            Arrivals::Gamma { burstiness } => format!(
                "gamma-spaced arrivals (burstiness {})",
                format::trim_number(burstiness)
            ),
            Arrivals::Constant => "evenly spaced arrivals".to_string(),
            Arrivals::NotStated => "arrivals whose spacing the file does not state".to_string(),
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    format::and_list(&kinds)
}

/// The capacity of a sweep within a tier (as `compare::paced::capacity`
/// found it), in one sentence.
fn capacity_sentence(sweep: &Sweep, tier: &SloTier, found: PacedCapacity) -> String {
    let head = format!(
        "{} ({}), {}",
        tier.name,
        tier_limits(tier),
        sweep_label(sweep)
    );
    match found {
        PacedCapacity::NotRecorded { limits, rate: r } => {
            let names: Vec<String> = limits
                .iter()
                .map(|l| limit_name(*l, tier.percentile))
                .collect();
            format!(
                "{head}: not judged: the point at {} records no {}.",
                rate(r),
                format::or_list(&names)
            )
        }
        PacedCapacity::Judged(c) => {
            let within = c.max_rate.map(|r| {
                let mut figures = Vec::new();
                if let Some(a) = c.achieved {
                    figures.push(format!("{} completed", rate(a)));
                }
                if let Some(g) = c.goodput {
                    figures.push(format!("{} tok/s", format::tok_per_s(g)));
                }
                let figures = match figures.as_slice() {
                    [] => String::new(),
                    f => format!(" ({})", f.join(", ")),
                };
                format!("up to {}{figures}", rate(r))
            });
            let below: Vec<String> = c.failed_below.iter().map(|r| rate(*r)).collect();
            along_sentence(
                &head,
                tier,
                "rate",
                within,
                c.breaks.map(|(r, b)| (rate(r), b)),
                &below,
                c.estimate,
                "fewer requests than it needs, or on a number the file does not state",
            )
        }
    }
}

fn tier_sentences(sweeps: &[Sweep], tier: &SloTier) -> Vec<String> {
    let found: Vec<PacedCapacity> = sweeps.iter().map(|s| capacity(s, tier)).collect();
    if found.iter().any(|c| matches!(c, PacedCapacity::Judged(_))) {
        return sweeps
            .iter()
            .zip(found)
            .map(|(s, c)| capacity_sentence(s, tier, c))
            .collect();
    }
    let missing: Vec<Limit> = Limit::ALL
        .into_iter()
        .filter(|l| {
            found.iter().any(
                |c| matches!(c, PacedCapacity::NotRecorded { limits, .. } if limits.contains(l)),
            )
        })
        .collect();
    let names: Vec<String> = missing
        .iter()
        .map(|l| limit_name(*l, tier.percentile))
        .collect();
    vec![format!(
        "{} ({}): not judged: every sweep has a point that records no {}.",
        tier.name,
        tier_limits(tier),
        format::or_list(&names)
    )]
}

fn at(q: Option<&Quantiles>, p: u8) -> Option<f64> {
    q.and_then(|q| q.at(p))
}

/// One column of the table: its header and each point's text.
const COLUMNS: &[Column<PacedPoint>] = &[
    ("Prompt tokens", |p| Some(format::count(p.context_tokens))),
    ("Requested", |p| Some(rate(p.load.requested_per_s))),
    ("Completed", |p| p.achieved_per_s.map(rate)),
    ("Cap", |p| p.load.max_concurrency.map(|n| n.to_string())),
    ("Mean in flight", |p| {
        p.avg_in_flight
            .map(|v| format::trim_number((v * 10.0).round() / 10.0))
    }),
    ("Peak in flight", |p| {
        p.peak_in_flight.map(|n| n.to_string())
    }),
    ("Status", |p| Some(p.status.label().to_string())),
    ("Output tok/s", |p| p.total_tok_per_s.map(format::tok_per_s)),
    ("Per-user tok/s", |p| {
        p.per_request_tok_per_s.map(format::tok_per_s)
    }),
    ("TTFT median", |p| {
        p.ttft_median_ms
            .or_else(|| at(p.latency.as_ref()?.ttft_ms.as_ref(), 50))
            .map(ms)
    }),
    ("TTFT p99", |p| {
        at(p.latency.as_ref()?.ttft_ms.as_ref(), 99).map(ms)
    }),
    ("TPOT median", |p| {
        at(p.latency.as_ref()?.tpot_ms.as_ref(), 50)
            .or_else(|| {
                p.per_request_tok_per_s
                    .filter(|r| *r > 0.0)
                    .map(|r| 1000.0 / r)
            })
            .map(ms)
    }),
    ("TPOT p99", |p| {
        at(p.latency.as_ref()?.tpot_ms.as_ref(), 99).map(ms)
    }),
    ("Requests", |p| {
        let done = p.completed_requests?;
        Some(match p.failed_requests.filter(|f| *f > 0) {
            Some(f) => format!("{} ({} failed)", format::count(done), format::count(f)),
            None => format::count(done),
        })
    }),
    ("Reason", |p| p.reason.as_ref().map(|r| r.words())),
];

/// The section of a run with paced points; `None` without any.
pub fn section(run: &Run, slo: &SloFile) -> Result<Option<PacedSection>, ChartError> {
    if run.paced.is_empty() {
        return Ok(None);
    }
    let sweeps = sweeps(run);
    // A column no point has a value in is left out.
    let points: Vec<&PacedPoint> = sweeps
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let table = StatusTable::of("paced-caption", "paced", &points, COLUMNS, |p| p.status);
    let capacity = slo
        .tiers
        .iter()
        .flat_map(|t| tier_sentences(&sweeps, t))
        .collect();
    let (chart_svg, chart_note) = chart(&sweeps)?;
    Ok(Some(PacedSection {
        lead: format!(
            "{} measured with requests sent at a rate ({}) rather than a number kept in flight: how many were in flight is whatever the server's speed made it, so these are not cells of the concurrency matrix.",
            format::counted(run.paced.len(), "point"),
            arrivals_words(&run.paced)
        ),
        capacity,
        table,
        chart_svg,
        chart_note,
        chart_caption: "Output tok/s against per-user tok/s: each point is one rate of the table below, each line one sweep joining its Valid points in rate order.",
    }))
}

/// Output tok/s against per-user tok/s, one line per sweep through its
/// Valid points in rate order; `None` and why when fewer than two points
/// have both figures.
fn chart(sweeps: &[Sweep]) -> Result<(Option<String>, Option<String>), ChartError> {
    use super::charts::lines::{Axis, Scale, Series, xy_chart};
    let series: Vec<Series> = sweeps
        .iter()
        .enumerate()
        .map(|(style, s)| Series {
            style,
            points: s
                .points
                .iter()
                .filter(|p| p.status == Status::Valid)
                .filter_map(|p| Some((p.per_request_tok_per_s?, p.total_tok_per_s?)))
                .collect(),
            emphasis: true,
            joined: true,
            solid: false,
            label: Some(sweep_label(s)),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.iter().map(|s| s.points.len()).sum::<usize>() < 2 {
        return Ok((
            None,
            Some("No chart: fewer than two Valid points record both output tok/s and per-user tok/s (a median time per output token).".into()),
        ));
    }
    let x = Axis::new("per-user tok/s", Scale::Linear, format::tok_per_s_short);
    let y = Axis::new("output tok/s", Scale::Linear, format::tok_per_s_short);
    let svg = xy_chart(
        "Output tok/s against per-user tok/s, each line one sweep of request rates",
        super::charts::INTERACTIVITY_SIZE,
        &x,
        &y,
        &series,
    )?;
    Ok((Some(svg), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::paced::tests::run;

    fn point(rate: f64, p99_ttft: f64, per_user: Option<f64>) -> PacedPoint {
        let mut p = crate::compare::paced::tests::point(rate, p99_ttft, 30.0, 1000);
        p.achieved_per_s = Some(rate * 0.9);
        p.per_request_tok_per_s = per_user;
        p.completed_requests = Some(1000);
        p
    }

    fn interactive() -> SloFile {
        serde_json::from_value(serde_json::json!({"tiers": [{
            "name": "Interactive", "percentile": 99, "ttft_ms": 450.0, "tpot_ms": 40.0,
            "source": "test"}]}))
        .unwrap()
    }

    #[test]
    fn the_capacity_sentence_is_true_of_each_point_it_summarises() {
        let r = run(vec![
            point(1.0, 100.0, Some(50.0)),
            point(2.0, 300.0, Some(45.0)),
            point(4.0, 600.0, Some(30.0)),
        ]);
        let s = section(&r, &interactive()).unwrap().unwrap();
        assert_eq!(
            s.capacity,
            vec![
                "Interactive (p99 TTFT ≤ 450 ms and p99 TPOT ≤ 40 ms), 1,024 tokens: up to 2 req/s (1.8 req/s completed, 200.0 tok/s); then at 4 req/s: p99 TTFT 600 ms > 450 ms."
            ]
        );
        for (row, p) in s.table.rows.iter().zip(&r.paced) {
            let ttft = p
                .latency
                .as_ref()
                .unwrap()
                .ttft_ms
                .as_ref()
                .unwrap()
                .p99
                .unwrap();
            let col = s
                .table
                .columns
                .iter()
                .position(|c| *c == "TTFT p99")
                .unwrap();
            assert_eq!(row.cells[col], ms(ttft));
        }
        assert!(s.chart_svg.is_some());
        assert!(!s.table.columns.contains(&"Cap"), "no point was capped");
        assert!(s.lead.contains("3 points") && s.lead.contains("Poisson arrivals"));
    }

    #[test]
    fn without_per_user_speed_there_is_no_chart_and_it_says_why() {
        let r = run(vec![point(1.0, 100.0, None), point(2.0, 200.0, None)]);
        let s = section(&r, &interactive()).unwrap().unwrap();
        assert!(s.chart_svg.is_none());
        assert!(
            s.chart_note
                .unwrap()
                .contains("fewer than two Valid points")
        );
        assert!(!s.table.columns.contains(&"Per-user tok/s"));
        assert!(section(&run(vec![]), &interactive()).unwrap().is_none());
    }

    #[test]
    fn a_capacity_is_called_an_estimate_only_when_its_percentiles_rest_on_too_few_requests() {
        let sentences = |requests: u64| {
            let mut p = point(1.0, 100.0, Some(50.0));
            let latency = p.latency.as_mut().unwrap();
            latency.ttft_ms.as_mut().unwrap().requests = Some(requests);
            latency.tpot_ms.as_mut().unwrap().requests = Some(requests);
            section(&run(vec![p]), &interactive())
                .unwrap()
                .unwrap()
                .capacity
        };
        // MLPerf's early stopping asks 662 requests of a p99.
        assert!(
            sentences(661)[0].contains("An estimate: some p99 behind it stands on fewer requests")
        );
        assert!(
            !sentences(662)[0].contains("estimate"),
            "{:?}",
            sentences(662)
        );
    }

    #[test]
    fn no_rate_within_the_tier_is_said_with_what_broke_first() {
        let r = run(vec![point(1.0, 500.0, Some(50.0))]);
        let s = section(&r, &interactive()).unwrap().unwrap();
        assert!(
            s.capacity[0].ends_with(
                "no rate measured met it; already at 1 req/s: p99 TTFT 500 ms > 450 ms."
            ),
            "{}",
            s.capacity[0]
        );
    }
}
