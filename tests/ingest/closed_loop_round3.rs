//! Importing genai-bench run files (with their experiment_metadata.json),
//! llmperf-bench's keyed results and AIPerf's per-request records
//! (profile_export.jsonl), each against the real files in tests/fixtures/real/
//! (provenance in SOURCES.md): every figure a cell holds is the file's own
//! number, computed here from the file.

use crate::common;

use std::path::{Path, PathBuf};

use common::figures::assert_figure;
use common::ingest::{COUNT, ENGINE, GPU, meta_for};
use common::real;
use serde_json::Value;
use sitegen::ingest::{Outcome, import};
use sitegen::model::{Cell, DecodeCell, DecodeTest, Run, Status};

struct Imported {
    _tmp: tempfile::TempDir,
    run: Run,
    outcome: Outcome,
}

/// Imports `files` as one run, the cards in `missing` given by --meta.
fn import_run(files: &[PathBuf], missing: &[&str]) -> Imported {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta_for(missing);
    let opts = common::ingest::options(tmp.path(), Some("x"), meta.as_deref(), None, false);
    let mut written = import(None, files, &opts).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(written.len(), 1);
    let outcome = written.remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    Imported {
        _tmp: tmp,
        run,
        outcome,
    }
}

/// The error importing `files` gives, every card given; nothing written.
fn refusal(files: &[PathBuf]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta_for(&[GPU, COUNT, ENGINE]);
    let opts = common::ingest::options(tmp.path(), Some("x"), meta.as_deref(), None, false);
    let err = format!("{:#}", import(None, files, &opts).unwrap_err());
    assert!(!tmp.path().join("data").exists(), "nothing written: {err}");
    err
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// Every file the run wrote, as text.
fn written_text(outcome: &Outcome) -> String {
    walkdir::WalkDir::new(&outcome.dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each figure-bearing key removed in turn from `rel` (a JSON file, copied
/// to a folder with `beside` copied next to it): the import refuses naming
/// the key, or imports with a warning naming it.
fn each_key_is_named(rel: &str, beside: &[&str], keys: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    for b in beside {
        let name = Path::new(b).file_name().unwrap();
        std::fs::copy(real(b), tmp.path().join(name)).unwrap();
    }
    let file = tmp.path().join(Path::new(rel).file_name().unwrap());
    let value = json(&real(rel));
    let mut silent = Vec::new();
    for key in keys {
        let mut v = value.clone();
        let (parent, leaf) = key.rsplit_once('.').unwrap_or(("", key));
        let holder = if parent.is_empty() {
            Some(&mut v)
        } else {
            parent.split('.').try_fold(&mut v, |v, k| v.get_mut(k))
        };
        let removed = holder
            .and_then(Value::as_object_mut)
            .is_some_and(|o| o.remove(leaf).is_some());
        assert!(removed, "{rel}: no key {key}");
        std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let opts = common::ingest::options(
            tmp.path(),
            Some("x"),
            meta_for(&[GPU, COUNT, ENGINE]).as_deref(),
            None,
            true,
        );
        match import(None, std::slice::from_ref(&file), &opts) {
            Err(e) => {
                let e = format!("{e:#}");
                if !e.contains(leaf) {
                    silent.push(format!("{key}: refused without naming it: {e}"));
                }
            }
            Ok(o) => {
                if !o[0].warnings.iter().any(|w| w.contains(leaf)) {
                    silent.push(format!("{key}: imported, no warning names it"));
                }
            }
        }
    }
    assert!(silent.is_empty(), "{rel}:\n{}", silent.join("\n"));
}

// ---------------------------------------------------------------- genai-bench

const BASETEN: [&str; 3] = [
    "genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json",
    "genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_16_time_15s.json",
    "genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json",
];
const SGLGB: &str = "genai-bench/sglgb-parallel-D100_100_text-to-text_zai-org_GLM-4.6_num_concurrency_1_time_300s.json";

/// A genai-bench cell against its run file (latencies in seconds).
fn check_genai_bench(rel: &str, c: &DecodeCell) {
    let v = json(&real(rel));
    let a = &v["aggregated_metrics"];
    let what = |f: &str| format!("{rel}: {f}");
    assert_eq!(
        u64::from(c.concurrency),
        a["num_concurrency"].as_u64().unwrap()
    );
    assert_eq!(
        c.context_tokens,
        num(a, "stats.num_input_tokens.mean").unwrap().round() as u64
    );
    assert_eq!(c.status, Status::Valid, "{}", what("status"));
    assert_eq!(c.completed_requests, a["num_completed_requests"].as_u64());
    assert_eq!(
        c.output_tokens,
        num(a, "stats.num_output_tokens.sum").map(|t| t.round() as u64)
    );
    assert_figure(&what("measured s"), c.measured_s, num(a, "run_duration"));
    assert_figure(
        &what("total tok/s"),
        c.total_tok_per_s,
        num(a, "mean_output_throughput_tokens_per_s"),
    );
    let ms = |p: &str| num(a, p).map(|s| s * 1000.0);
    assert_figure(&what("TTFT"), c.ttft_median_ms, ms("stats.ttft.p50"));
    assert_figure(&what("TPOT"), c.tbt_median_ms, ms("stats.tpot.p50"));
    assert_figure(
        &what("per request"),
        c.per_request_tok_per_s,
        num(a, "stats.output_inference_speed.p50"),
    );
    assert_figure(
        &what("active"),
        c.avg_active_requests,
        Some(num(a, "stats.e2e_latency.sum").unwrap() / num(a, "run_duration").unwrap()),
    );
    let l = c.latency.as_ref().unwrap();
    for (q, metric) in [
        (&l.ttft_ms, "ttft"),
        (&l.tpot_ms, "tpot"),
        (&l.e2e_ms, "e2e_latency"),
    ] {
        let q = q.as_ref().unwrap();
        for p in [50, 90, 95, 99] {
            assert_figure(
                &what(&format!("{metric} p{p}")),
                q.at(p),
                ms(&format!("stats.{metric}.p{p}")),
            );
        }
        assert_eq!(q.requests, a["num_completed_requests"].as_u64());
    }
    assert!(
        l.tbt_ms.is_none(),
        "genai-bench states no gap between chunks"
    );
    let by = c.measured_by.as_ref().unwrap();
    assert_eq!(by.tool, "genai-bench");
    assert_eq!(by.raw["aggregated_metrics"], *a, "{}", what("raw"));
    assert_eq!(
        by.definitions.contains_key("arrival_requests_per_second"),
        a.get("total_arrivals").is_some(),
        "{}",
        what("arrivals defined where stated")
    );
}

#[test]
fn genai_bench_runs_import_with_their_metadata() {
    // The three baseten run files: one experiment, one run, a cell each.
    let files: Vec<PathBuf> = BASETEN.iter().map(|r| real(r)).collect();
    let r = import_run(&files, &[ENGINE]);
    assert_eq!(r.run.cells.len(), 3);
    for rel in BASETEN {
        let v = json(&real(rel));
        let n = v["aggregated_metrics"]["num_concurrency"].as_u64().unwrap() as u32;
        let c = r
            .run
            .decode_cells()
            .find(|c| c.concurrency == n)
            .unwrap_or_else(|| panic!("{rel}: c{n}"));
        check_genai_bench(rel, c);
    }
    // Figures read from the files, by hand: c2 makes 207.74 tok/s, TTFT p50 0.1898 s.
    let c2 = r.run.decode_cells().find(|c| c.concurrency == 2).unwrap();
    assert_figure("c2 total", c2.total_tok_per_s, Some(207.741974349415));
    assert_figure("c2 TTFT", c2.ttft_median_ms, Some(189.8169293999672));
    let m = &r.run.meta;
    assert_eq!(m.model, "Qwen3-30B-A3B-Instruct-2507");
    assert_eq!(m.served_model, "Qwen3-30B-A3B-Instruct-2507-FP8");
    assert_eq!(m.hardware.gpu, "H100");
    assert_eq!(m.hardware.gpu_count, 1);
    assert_eq!(
        m.engine.name, "given-engine",
        "server_engine is null: given"
    );
    assert_eq!(m.run.decode_test, DecodeTest::RequestBurst);
    let tool = m.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(
        (tool.name.as_str(), tool.version.as_deref()),
        ("genai-bench", Some("0.0.2"))
    );
    assert!(
        r.outcome.layout.contains("seconds (no metrics_time_unit)"),
        "{}",
        r.outcome.layout
    );
    // The client's command line (with its private endpoint) is never stored.
    let text = written_text(&r.outcome);
    assert!(
        !text.contains("model-yqvy8neq") && !text.contains("--api-base"),
        "cmd stored"
    );

    // The async engine's run: metrics_time_unit "s", arrivals stated.
    let r = import_run(&[real(SGLGB)], &[GPU, COUNT, ENGINE]);
    let c = r
        .run
        .decode_cell(106, 1)
        .expect("D(100,100) at concurrency 1");
    check_genai_bench(SGLGB, c);
    assert_figure("GLM total", c.total_tok_per_s, Some(86.0852069484527));
    let defs = &c.measured_by.as_ref().unwrap().definitions;
    assert!(defs["arrival_requests_per_second"].contains("not a rate the requests were paced at"));
    assert_eq!(r.run.meta.model, "GLM-4.6");
    assert_eq!(r.run.meta.served_model, "zai-org/GLM-4.6");
    assert!(
        r.outcome.layout.contains("\"s\" (metrics_time_unit)"),
        "{}",
        r.outcome.layout
    );
}

#[test]
fn genai_bench_refuses_a_run_file_without_its_metadata_or_of_two_experiments() {
    let tmp = tempfile::tempdir().unwrap();
    let alone = tmp
        .path()
        .join("N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json");
    std::fs::copy(real(BASETEN[0]), &alone).unwrap();
    let err = refusal(std::slice::from_ref(&alone));
    assert!(
        err.contains(&format!(
            "{}: no experiment_metadata.json beside it",
            alone.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(
            &tmp.path()
                .join("experiment_metadata.json")
                .display()
                .to_string()
        )
    );
    // With genai-bench's own name beside it, it imports.
    std::fs::copy(
        real("genai-bench/baseten-training-experiment_metadata.json"),
        tmp.path().join("experiment_metadata.json"),
    )
    .unwrap();
    let r = import_run(&[alone], &[ENGINE]);
    assert_eq!(r.run.cells.len(), 1);
    // Two experiments' files are two runs.
    let err = refusal(&[real(BASETEN[0]), real(SGLGB)]);
    assert!(err.contains("one run is one experiment"), "{err}");
}

#[test]
fn genai_bench_names_a_missing_figure_never_fills_it_in() {
    each_key_is_named(
        SGLGB,
        &["genai-bench/sglgb-parallel-experiment_metadata.json"],
        &[
            "aggregated_metrics.iteration_type",
            "aggregated_metrics.num_concurrency",
            "aggregated_metrics.num_requests",
            "aggregated_metrics.num_completed_requests",
            "aggregated_metrics.num_error_requests",
            "aggregated_metrics.run_duration",
            "aggregated_metrics.stats.num_input_tokens",
            "aggregated_metrics.stats.num_output_tokens",
            "aggregated_metrics.stats.ttft",
            "aggregated_metrics.stats.tpot",
            "aggregated_metrics.stats.output_inference_speed",
        ],
    );
}

// -------------------------------------------------------------- llmperf-bench

const LLMPERF_BENCH: [&str; 2] = [
    "llmperf-bench/philschmid-meta-llama_Meta-Llama-3-8B-Instruct_tp_1",
    "llmperf-bench/philschmid-mistralai_Mistral-7B-Instruct-v0.2_tp_1",
];

#[test]
fn llmperf_bench_results_import_as_llmperf_summaries_and_the_summary_agrees() {
    for stem in LLMPERF_BENCH {
        let results_path = real(&format!("{stem}_results.json"));
        let summary_path = real(&format!("{stem}_summary.json"));
        let results = json(&results_path);
        let summary = json(&summary_path);
        let r = import_run(std::slice::from_ref(&results_path), &[GPU, COUNT, ENGINE]);
        assert_eq!(r.run.cells.len(), 8, "{stem}: concurrencies 1 ... 128");
        for (key, s) in summary.as_object().unwrap() {
            let v = &results[key];
            let n: u32 = key.parse().unwrap();
            let c = r
                .run
                .decode_cells()
                .find(|c| c.concurrency == n)
                .unwrap_or_else(|| panic!("{stem}: c{n}"));
            let what = |f: &str| format!("{stem} c{n}: {f}");
            assert_eq!(c.status, Status::Valid, "{}", what("status"));
            // The summary's throughput is llmperf's total over the test.
            assert_figure(
                &what("total"),
                c.total_tok_per_s,
                num(s, "throughput_token_per_s"),
            );
            assert_figure(
                &what("total = results"),
                c.total_tok_per_s,
                num(v, "results_mean_output_throughput_token_per_s"),
            );
            // The median TTFT is llmperf's p50, never the summary's mean.
            let p50 = num(v, "results_ttft_s_quantiles_p50").unwrap() * 1000.0;
            assert_figure(&what("TTFT median"), c.ttft_median_ms, Some(p50));
            let mean = num(s, "first-time-to-token_mean_in_ms").unwrap();
            assert_figure(
                &what("summary mean = results mean"),
                Some(mean),
                num(v, "results_ttft_s_mean").map(|m| m * 1000.0),
            );
            assert_ne!(c.ttft_median_ms, Some(mean), "{}", what("not the mean"));
            assert_figure(
                &what("ITL mean"),
                num(s, "latency_ms_per_token"),
                num(v, "results_inter_token_latency_s_mean").map(|m| m * 1000.0),
            );
            assert_eq!(
                c.completed_requests,
                v["results_num_completed_requests"].as_u64()
            );
            let by = c.measured_by.as_ref().unwrap();
            assert_eq!(by.tool, "llmperf-bench");
            assert_eq!(&by.raw, v);
            assert!(by.definitions["source"].contains("never from a mean"));
        }
        assert_eq!(
            r.run.meta.served_model,
            results["1"]["model"].as_str().unwrap()
        );
        // The keyed summary alone is refused, naming the results beside it.
        let err = refusal(std::slice::from_ref(&summary_path));
        let results_name = results_path.file_name().unwrap().to_string_lossy();
        assert!(
            err.contains(&format!("import {results_name} beside it")),
            "{err}"
        );
        assert!(err.contains(&summary_path.display().to_string()), "{err}");
    }
    // Read by hand from the file: Llama 3 8B at 128 requests at once.
    let r = import_run(
        &[real(&format!("{}_results.json", LLMPERF_BENCH[0]))],
        &[GPU, COUNT, ENGINE],
    );
    let c128 = r.run.decode_cells().find(|c| c.concurrency == 128).unwrap();
    assert_figure("c128 total", c128.total_tok_per_s, Some(396.16427670787317));
}

#[test]
fn llmperf_bench_names_a_missing_figure_never_fills_it_in() {
    each_key_is_named(
        &format!("{}_results.json", LLMPERF_BENCH[1]),
        &[],
        &[
            "8.num_concurrent_requests",
            "8.results_num_completed_requests",
            "8.results_mean_output_throughput_token_per_s",
            "8.results_ttft_s_quantiles_p50",
            "8.results_inter_token_latency_s_quantiles_p50",
        ],
    );
}

// ------------------------------------------------------------- AIPerf records

const RECORDS: &str = "aiperf-records/aiperf-repo-example-run1-profile_export.jsonl";
const SUMMARY: &str = "aiperf-records/aiperf-repo-example-run1-profile_export_aiperf.json";

#[test]
fn aiperf_records_aggregate_to_aiperfs_own_summary() {
    let records = import_run(&[real(RECORDS)], &[GPU, COUNT, ENGINE]);
    let summary = import_run(&[real(SUMMARY)], &[GPU, COUNT, ENGINE]);
    let (Cell::Decode(a), Cell::Decode(b)) = (&records.run.cells[0], &summary.run.cells[0]) else {
        panic!("decode cells");
    };
    assert_eq!(records.run.cells.len(), 1);
    assert_eq!(
        (a.context_tokens, a.concurrency),
        (b.context_tokens, b.concurrency)
    );
    assert_eq!((a.context_tokens, a.concurrency), (550, 100));
    assert_eq!(a.status, b.status);
    // 11 of 100 requests were cancelled (499): not Valid, as the summary says.
    assert_eq!(a.status, Status::Error);
    assert_eq!(a.reason, b.reason);
    assert_eq!(a.completed_requests, Some(89));
    assert_eq!(a.completed_requests, b.completed_requests);
    assert_eq!(a.output_tokens, b.output_tokens);
    assert_eq!(a.output_tokens, Some(21624));
    assert_figure("duration", a.measured_s, b.measured_s);
    assert_figure("duration", a.measured_s, Some(9.317788951));
    let (la, lb) = (a.latency.as_ref().unwrap(), b.latency.as_ref().unwrap());
    for (what, qa, qb) in [
        ("ttft", &la.ttft_ms, &lb.ttft_ms),
        ("tpot", &la.tpot_ms, &lb.tpot_ms),
        ("tbt", &la.tbt_ms, &lb.tbt_ms),
        ("e2e", &la.e2e_ms, &lb.e2e_ms),
    ] {
        let (qa, qb) = (qa.as_ref().unwrap(), qb.as_ref().unwrap());
        for p in [50, 90, 95, 99] {
            assert_figure(&format!("{what} p{p}"), qa.at(p), qb.at(p));
        }
        assert_eq!(qa.requests, qb.requests, "{what}");
    }
    // AIPerf's numbers, as its summary prints them.
    let ttft = la.ttft_ms.as_ref().unwrap();
    assert_figure("ttft p50", ttft.p50, Some(2369.317693));
    assert_figure("ttft p99", ttft.p99, Some(3833.3894000399996));
    assert_figure(
        "icl p99",
        la.tbt_ms.as_ref().unwrap().p99,
        Some(140.53429476),
    );
    assert_eq!(records.run.meta.served_model, "openai/gpt-oss-20b");
    let by = a.measured_by.as_ref().unwrap();
    assert!(by.definitions["latency"].contains("np.percentile"));
}

#[test]
fn aiperf_records_that_disagree_with_the_summary_or_lack_it_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let records = tmp.path().join("profile_export.jsonl");
    let text = std::fs::read_to_string(real(RECORDS)).unwrap();
    std::fs::write(&records, &text).unwrap();
    // No summary beside: the concurrency is not in the records.
    let err = refusal(std::slice::from_ref(&records));
    assert!(
        err.contains("state neither the concurrency nor the model"),
        "{err}"
    );
    assert!(err.contains("profile_export_aiperf.json"), "{err}");
    // With it, one record's TTFT changed: refused, naming the figure.
    std::fs::copy(real(SUMMARY), tmp.path().join("profile_export_aiperf.json")).unwrap();
    assert_eq!(
        import_run(std::slice::from_ref(&records), &[GPU, COUNT, ENGINE])
            .run
            .cells
            .len(),
        1
    );
    let edited = text.replacen(
        "\"ttft\":{\"value\":1680.543782",
        "\"ttft\":{\"value\":1690.543782",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&records, edited).unwrap();
    let err = refusal(std::slice::from_ref(&records));
    assert!(err.contains("ttft.avg: the records give"), "{err}");
    assert!(
        err.contains("sitegen does not print a number AIPerf did not"),
        "{err}"
    );
}
