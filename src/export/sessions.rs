//! `runs/<id>/sessions.csv`: a run's sessions windows as raw numbers, one
//! row per turn depth with its window's figures beside it, in the order
//! the run page lists them; written only for a run that has some.

use crate::model::Run;
use crate::model::sessions::{SessionDepth, SessionWindow};

/// The header, then one row per depth.
const HEADER: [&str; 28] = [
    "shared_prefix_tokens",
    "user_tokens_per_turn",
    "answer_tokens",
    "think_time_ms",
    "sessions",
    "window_status",
    "window_total_tok_per_s",
    "window_turns_per_s",
    "window_sessions_per_s",
    "window_turns_started",
    "window_failed_turns",
    "server_cache_looked_up_tokens",
    "server_cache_cached_tokens",
    "server_cache_counter",
    "turn",
    "context_tokens",
    "status",
    "reason",
    "turns",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p99_ms",
    "cold_ttft_ms",
    "cold_prompts",
    "prompt_tokens",
    "cached_tokens",
    "cached_tokens_from",
    "per_session_tok_per_s",
];

fn row(w: &SessionWindow, d: &SessionDepth) -> Vec<String> {
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    let int = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    let ttft = |p: u8| num(d.ttft_ms.as_ref().and_then(|q| q.at(p)));
    let cache = w.server_cache.as_ref();
    vec![
        w.workload.shared_prefix_tokens.to_string(),
        w.workload.user_tokens_per_turn.to_string(),
        w.workload.answer_tokens.to_string(),
        w.workload.think_time_ms.to_string(),
        w.sessions.to_string(),
        w.status.code().to_string(),
        num(w.total_tok_per_s),
        num(w.turns_per_s),
        num(w.sessions_per_s),
        int(w.turns_started),
        int(w.failed_turns),
        int(cache.map(|c| c.looked_up_tokens)),
        int(cache.map(|c| c.cached_tokens)),
        cache.map_or_else(String::new, |c| c.counter.clone()),
        d.turn.to_string(),
        d.context_tokens.to_string(),
        d.status.code().to_string(),
        d.reason.as_ref().map_or_else(String::new, |r| r.words()),
        int(d.turns),
        ttft(50),
        ttft(90),
        ttft(99),
        num(d.cold_ttft_ms),
        d.cold_prompts.map_or_else(String::new, |n| n.to_string()),
        int(d.prompt_tokens),
        int(d.cached_tokens),
        w.cached_tokens_from
            .clone()
            .filter(|_| d.cached_tokens.is_some())
            .unwrap_or_default(),
        num(d.per_session_tok_per_s),
    ]
}

/// `sessions.csv`, or `None` for a run without sessions windows.
pub(crate) fn sessions_csv(run: &Run) -> Option<String> {
    if run.sessions.is_empty() {
        return None;
    }
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(HEADER)
        .expect("writing to memory cannot fail");
    for s in crate::compare::sessions::sweeps(run) {
        for w in s.windows {
            for d in &w.depths {
                out.write_record(row(w, d))
                    .expect("writing to memory cannot fail");
            }
        }
    }
    Some(String::from_utf8(out.into_inner().expect("a Vec")).expect("CSV of UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sessions::tests::{run, window};

    #[test]
    fn one_row_per_depth_with_its_window_beside_it() {
        assert!(sessions_csv(&run(vec![])).is_none());
        let d = [(300.0, 400.0, 1024, 1280), (100.0, 500.0, 1280, 1600)];
        let csv = sessions_csv(&run(vec![
            window(4, &d, 900.0, 700),
            window(1, &d, 500.0, 700),
        ]))
        .unwrap();
        let mut r = ::csv::Reader::from_reader(csv.as_bytes());
        let header = r.headers().unwrap().clone();
        let rows: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(&rows[1][col("turn")], "2");
        assert_eq!(&rows[1][col("ttft_p50_ms")], "100");
        assert_eq!(&rows[1][col("cold_ttft_ms")], "500");
        assert_eq!(&rows[1][col("cold_prompts")], "3");
        assert_eq!(&rows[1][col("cached_tokens")], "1280");
        assert_eq!(
            &rows[1][col("cached_tokens_from")],
            "usage.prompt_tokens_details.cached_tokens"
        );
        assert_eq!(&rows[0][col("status")], "valid");
    }
}
