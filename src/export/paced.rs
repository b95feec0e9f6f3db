//! `runs/<id>/paced.csv`: a run's paced points (requests sent at a rate)
//! as raw numbers, one row each, in the order the run page lists them;
//! written only for a run that has some.

use crate::model::Run;
use crate::model::paced::{Arrivals, PacedPoint};
use crate::model::slo::Quantiles;

/// The header, then one row per point.
const HEADER: [&str; 25] = [
    "context_tokens",
    "requested_per_s",
    "arrivals",
    "burstiness",
    "max_concurrency",
    "status",
    "reason",
    "sent_requests",
    "completed_requests",
    "failed_requests",
    "achieved_per_s",
    "avg_in_flight",
    "peak_in_flight",
    "total_tok_per_s",
    "per_request_tok_per_s",
    "ttft_median_ms",
    "tbt_median_ms",
    "ttft_p90_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "tpot_p90_ms",
    "tpot_p99_ms",
    "output_tokens",
    "measured_s",
    "tool",
];

fn row(p: &PacedPoint) -> Vec<String> {
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    let int = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    let latency = p.latency.as_deref();
    let q = |pick: fn(&crate::model::slo::Latency) -> Option<&Quantiles>, at: u8| {
        num(latency.and_then(pick).and_then(|q| q.at(at)))
    };
    let (arrivals, burstiness) = match p.load.arrivals {
        Arrivals::Poisson => ("poisson", None),
        Arrivals::Gamma { burstiness } => ("gamma", Some(burstiness)),
        Arrivals::Constant => ("constant", None),
        Arrivals::NotStated => ("not_stated", None),
    };
    vec![
        p.context_tokens.to_string(),
        p.load.requested_per_s.to_string(),
        arrivals.to_string(),
        num(burstiness),
        int(p.load.max_concurrency.map(u64::from)),
        p.status.code().to_string(),
        p.reason.as_ref().map_or_else(String::new, |r| r.words()),
        int(p.sent_requests),
        int(p.completed_requests),
        int(p.failed_requests),
        num(p.achieved_per_s),
        num(p.avg_in_flight),
        int(p.peak_in_flight.map(u64::from)),
        num(p.total_tok_per_s),
        num(p.per_request_tok_per_s),
        num(p.ttft_median_ms),
        num(p.tbt_median_ms),
        q(|l| l.ttft_ms.as_ref(), 90),
        q(|l| l.ttft_ms.as_ref(), 99),
        q(|l| l.tpot_ms.as_ref(), 50),
        q(|l| l.tpot_ms.as_ref(), 90),
        q(|l| l.tpot_ms.as_ref(), 99),
        int(p.output_tokens),
        num(p.measured_s),
        p.measured_by
            .as_ref()
            .map_or_else(String::new, |m| m.tool.clone()),
    ]
}

/// `paced.csv`, or `None` for a run without paced points.
pub(crate) fn paced_csv(run: &Run) -> Option<String> {
    if run.paced.is_empty() {
        return None;
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)
        .expect("writing to memory cannot fail");
    for s in crate::compare::paced::sweeps(run) {
        for p in s.points {
            w.write_record(row(p))
                .expect("writing to memory cannot fail");
        }
    }
    Some(String::from_utf8(w.into_inner().expect("a Vec")).expect("CSV of UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::paced::tests::{point, run};

    #[test]
    fn one_row_per_point_with_its_own_figures_and_none_without_points() {
        assert!(paced_csv(&run(vec![])).is_none());
        let csv = paced_csv(&run(vec![
            point(4.0, 300.0, 38.0, 1200),
            point(1.0, 120.0, 20.0, 700),
        ]))
        .unwrap();
        let mut r = ::csv::Reader::from_reader(csv.as_bytes());
        let header = r.headers().unwrap().clone();
        let rows: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        // The run page's order: rates ascending.
        assert_eq!(&rows[0][col("requested_per_s")], "1");
        assert_eq!(&rows[1][col("ttft_p99_ms")], "300");
        assert_eq!(&rows[1][col("tpot_p99_ms")], "38");
        assert_eq!(&rows[1][col("arrivals")], "poisson");
        assert_eq!(&rows[1][col("max_concurrency")], "");
        assert_eq!(&rows[1][col("status")], "valid");
    }
}
