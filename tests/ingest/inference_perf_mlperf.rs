//! Importing the paced tools: kubernetes-sigs/inference-perf's lifecycle
//! reports and MLPerf LoadGen's `mlperf_log_summary.txt`. Their real files
//! (tests/fixtures/real/inference-perf and mlperf, with their provenance in
//! SOURCES.md) are rows of `CORPUS` in tools.rs; here each point's figures
//! are read from the file and compared with the point, and the cases of one
//! run made of several stage files and of a summary given with --context.

use crate::common;

use std::path::PathBuf;

use common::figures::assert_figure;
use common::ingest::{COUNT, ENGINE, GPU, MODEL, meta_for, options};
use common::real;
use serde_json::Value;
use sitegen::ingest::import;
use sitegen::model::paced::{Arrivals, PacedPoint};
use sitegen::model::{Run, Status};

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// One inference-perf stage file: its paced point carries the file's own
/// numbers, the rate as requested, arrivals not stated.
pub fn check_inference_perf_stage(rel: &str, r: &Value, run: &Run) {
    assert!(run.cells.is_empty(), "{rel}: a stage is never a cell");
    assert_eq!(run.paced.len(), 1, "{rel}: one point per stage file");
    let p = &run.paced[0];
    let what = |f: &str| format!("{rel}: {f}");
    assert_eq!(
        Some(p.load.requested_per_s),
        num(r, "load_summary.requested_rate"),
        "{}",
        what("requested rate")
    );
    assert_eq!(p.load.arrivals, Arrivals::NotStated, "{}", what("arrivals"));
    assert_eq!(p.load.max_concurrency, None);
    assert_eq!(
        p.context_tokens,
        num(r, "successes.prompt_len.mean").unwrap().round() as u64,
        "{}",
        what("context")
    );
    let completed = num(r, "successes.count").unwrap();
    let failed = num(r, "failures.count").unwrap();
    assert_eq!(
        p.sent_requests,
        num(r, "load_summary.count").map(|n| n as u64)
    );
    assert_eq!(p.completed_requests, Some(completed as u64));
    assert_eq!(p.failed_requests, Some(failed as u64));
    let rps = num(r, "successes.throughput.requests_per_sec");
    assert_figure(&what("achieved"), p.achieved_per_s, rps);
    assert_figure(
        &what("measured_s"),
        p.measured_s,
        num(r, "benchmark_time_seconds").or(rps.map(|x| completed / x)),
    );
    let lat = |name: &str, stat: &str| num(r, &format!("successes.latency.{name}.{stat}"));
    let ms = |v: Option<f64>| v.map(|s| s * 1000.0);
    let per_token = r["successes"].get("token_count_mismatches").is_some();
    if failed > 0.0 {
        assert_eq!(p.status, Status::Error, "{}", what("status"));
        assert_eq!(p.total_tok_per_s, None);
        assert_eq!(p.ttft_median_ms, None);
    } else {
        assert_eq!(p.status, Status::Valid, "{}", what("status"));
        assert_figure(
            &what("total tok/s"),
            p.total_tok_per_s,
            num(r, "successes.throughput.output_tokens_per_sec"),
        );
        assert_figure(
            &what("TTFT"),
            p.ttft_median_ms,
            ms(lat("time_to_first_token", "median")),
        );
        assert_figure(
            &what("per-request tok/s"),
            p.per_request_tok_per_s,
            lat("time_per_output_token", "median")
                .filter(|_| per_token)
                .map(|s| 1.0 / s),
        );
    }
    assert_eq!(p.tbt_median_ms, None, "{}", what("ITL is not read"));
    let l = p.latency.as_deref().expect("latency");
    for (q, stat) in [
        ("p50", "median"),
        ("p90", "p90"),
        ("p95", "p95"),
        ("p99", "p99"),
    ] {
        let at = |qs: &Option<sitegen::model::slo::Quantiles>| {
            qs.as_ref().and_then(|q2| match q {
                "p50" => q2.p50,
                "p90" => q2.p90,
                "p95" => q2.p95,
                _ => q2.p99,
            })
        };
        assert_figure(
            &what(&format!("TTFT {q}")),
            at(&l.ttft_ms),
            ms(lat("time_to_first_token", stat)),
        );
        assert_figure(
            &what(&format!("e2e {q}")),
            at(&l.e2e_ms),
            ms(lat("request_latency", stat)),
        );
        assert_figure(
            &what(&format!("TPOT {q}")),
            at(&l.tpot_ms),
            ms(lat("time_per_output_token", stat)).filter(|_| per_token),
        );
    }
    sitegen::model::validate::paced(p).unwrap();
}

fn stage_files(prefix: &str, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            real(&format!(
                "inference-perf/{prefix}-stage_{i}_lifecycle_metrics.json"
            ))
        })
        .collect()
}

const CARDS: &[&str] = &[MODEL, GPU, COUNT, ENGINE];

#[test]
fn inference_perf_stage_files_of_one_run_are_one_run_of_paced_points() {
    let tmp = tempfile::tempdir().unwrap();
    let files = stage_files("kubecon25-vllm", 7);
    let opts = options(
        tmp.path(),
        Some("kubecon"),
        meta_for(CARDS).as_deref(),
        None,
        false,
    );
    let outcomes = import(None, &files, &opts).unwrap();
    assert_eq!(outcomes.len(), 1, "one run of the 7 stage files");
    let run = sitegen::store::load_run(&outcomes[0].dir).unwrap();
    let rates: Vec<f64> = run.paced.iter().map(|p| p.load.requested_per_s).collect();
    assert_eq!(rates, [1.0, 31.4, 61.79, 92.19, 122.59, 152.98, 183.38]);
    assert!(run.cells.is_empty());
    // From 122.59/s up the server completes about 101/s, whatever is asked.
    let done: Vec<f64> = run.paced.iter().filter_map(|p| p.achieved_per_s).collect();
    assert!(
        done[4..].iter().all(|d| (100.0..104.0).contains(d)),
        "{done:?}"
    );
    assert!(
        outcomes[0].layout.contains("before v0.5.0"),
        "{}",
        outcomes[0].layout
    );
}

#[test]
fn inference_perf_two_stages_at_one_rate_are_refused_as_one_run() {
    // The staircase goes 5/s, 12/s, 5/s: its first and last stages share a rate.
    let tmp = tempfile::tempdir().unwrap();
    let files = stage_files("wva-staircase-20260803", 3);
    let opts = options(
        tmp.path(),
        Some("wva"),
        meta_for(CARDS).as_deref(),
        None,
        false,
    );
    let err = format!("{:#}", import(None, &files, &opts).unwrap_err());
    assert!(
        err.contains("stage_2_lifecycle_metrics.json: a second result at 5 requests/s and 2049 tokens of context"),
        "{err}"
    );
    assert!(err.contains("stage_0_lifecycle_metrics.json"), "{err}");
    assert!(!tmp.path().join("data").exists());
}

/// The summary's counts are the sums of its stages', as SOURCES.md says,
/// and it is refused saying so when given with them.
#[test]
fn inference_perf_summary_pools_its_stages_and_is_refused() {
    for (prefix, n) in [("kubecon25-vllm", 7), ("wva-staircase-20260803", 3)] {
        let read = |p: &PathBuf| -> Value {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        let stages = stage_files(prefix, n);
        let summary = real(&format!(
            "inference-perf/{prefix}-summary_lifecycle_metrics.json"
        ));
        let s = read(&summary);
        for key in ["load_summary.count", "successes.count", "failures.count"] {
            let sum: f64 = stages.iter().map(|p| num(&read(p), key).unwrap()).sum();
            assert_eq!(num(&s, key), Some(sum), "{prefix}: {key}");
        }
        assert!(s["load_summary"].get("requested_rate").is_none());
        let tmp = tempfile::tempdir().unwrap();
        let mut files = stages.clone();
        files.push(summary);
        let opts = options(
            tmp.path(),
            Some("x"),
            meta_for(CARDS).as_deref(),
            None,
            false,
        );
        let err = format!("{:#}", import(None, &files, &opts).unwrap_err());
        assert!(
            err.contains(&format!("it pools the {n} stages given beside it")),
            "{err}"
        );
        assert!(err.contains("import the stage_N_lifecycle_metrics.json files instead"));
    }
}

/// A number of LoadGen's summary by its key, as the file writes it.
fn loadgen(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.split_whitespace().collect::<Vec<_>>().join(" ") == key)
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

const SERVER: &str = "mlperf/ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-server-mlperf_log_summary.txt";
const INTERACTIVE: &str =
    "mlperf/ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-interactive-mlperf_log_summary.txt";
const INVALID: &str = "mlperf/ntuhpc-v5.1-lenovo-b200x8-llama2-70b-99.9-server-ranging-invalid-mlperf_log_summary.txt";

fn import_mlperf(rel: &str, context: u64) -> (tempfile::TempDir, Run, String) {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(
        tmp.path(),
        Some("x"),
        meta_for(CARDS).as_deref(),
        Some(context),
        false,
    );
    let mut out = import(None, &[real(rel)], &opts).unwrap_or_else(|e| panic!("{rel}: {e:#}"));
    let o = out.remove(0);
    let run = sitegen::store::load_run(&o.dir).unwrap();
    (tmp, run, o.layout)
}

/// A Server summary with --context: one paced point with LoadGen's own numbers.
fn check_mlperf_server(rel: &str, p: &PacedPoint, text: &str) {
    let what = |f: &str| format!("{rel}: {f}");
    let get = |k: &str| loadgen(text, k);
    let ms = |k: &str| get(k).map(|ns| ns / 1e6);
    assert_eq!(
        Some(p.load.requested_per_s),
        get("target_qps"),
        "{}",
        what("rate")
    );
    assert_eq!(p.load.arrivals, Arrivals::Poisson);
    assert_eq!(p.load.max_concurrency, None);
    assert_figure(
        &what("achieved"),
        p.achieved_per_s,
        get("Completed samples per second"),
    );
    let valid = text.contains("Result is : VALID");
    assert_eq!(p.status == Status::Valid, valid, "{}", what("status"));
    let l = p.latency.as_deref().unwrap();
    for (q, at) in [
        ("p50", "50.00"),
        ("p90", "90.00"),
        ("p95", "95.00"),
        ("p99", "99.00"),
    ] {
        let pick = |qs: &Option<sitegen::model::slo::Quantiles>| {
            qs.as_ref().and_then(|x| match q {
                "p50" => x.p50,
                "p90" => x.p90,
                "p95" => x.p95,
                _ => x.p99,
            })
        };
        assert_figure(
            &what(&format!("TTFT {q}")),
            pick(&l.ttft_ms),
            ms(&format!("{at} percentile first token latency (ns)")),
        );
        assert_figure(
            &what(&format!("TPOT {q}")),
            pick(&l.tpot_ms),
            ms(&format!("{at} percentile time to output token (ns)")),
        );
        assert_figure(
            &what(&format!("e2e {q}")),
            pick(&l.e2e_ms),
            ms(&format!("{at} percentile latency (ns)")),
        );
    }
    if valid {
        assert_figure(
            &what("tok/s"),
            p.total_tok_per_s,
            get("Completed tokens per second"),
        );
        assert_figure(
            &what("TTFT median"),
            p.ttft_median_ms,
            ms("50.00 percentile first token latency (ns)"),
        );
        assert_figure(
            &what("per-request tok/s"),
            p.per_request_tok_per_s,
            ms("50.00 percentile time to output token (ns)").map(|t| 1000.0 / t),
        );
    } else {
        assert_eq!(p.total_tok_per_s, None);
    }
    let defs = &p.measured_by.as_ref().unwrap().definitions;
    let targets = &defs["targets"];
    assert!(
        targets.contains(&format!(
            "ttft_latency {} ms",
            get("ttft_latency (ns)").unwrap() / 1e6
        )),
        "{targets}"
    );
    sitegen::model::validate::paced(p).unwrap();
}

#[test]
fn mlperf_server_summaries_import_with_context_and_carry_loadgens_numbers() {
    for rel in [SERVER, INTERACTIVE, INVALID] {
        let text = std::fs::read_to_string(real(rel)).unwrap();
        let (_tmp, run, layout) = import_mlperf(rel, 1024);
        assert!(run.cells.is_empty());
        assert_eq!(run.paced.len(), 1, "{rel}");
        let p = &run.paced[0];
        assert_eq!(p.context_tokens, 1024);
        check_mlperf_server(rel, p, &text);
        assert!(layout.contains("Server scenario"), "{layout}");
        // The SUT name is no model's: the card comes from --meta.
        assert_eq!(run.meta.model, "Given-Model");
        assert!(
            run.meta
                .source
                .as_deref()
                .unwrap_or("")
                .contains("SUT name PySUT")
        );
    }
    let (_tmp, run, _) = import_mlperf(INVALID, 1024);
    let words = run.paced[0].reason.as_ref().unwrap().words();
    assert!(words.starts_with("MLPerf LoadGen: Result is INVALID (Performance constraints satisfied : NO; Early stopping satisfied: NO)"), "{words}");
    assert!(words.contains("TTFT constrain not met"), "{words}");
}
