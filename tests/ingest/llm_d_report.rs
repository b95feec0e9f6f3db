//! llm-d's Benchmark Report v0.2.1 both ways: `sitegen export --format
//! llm-d-report` writes reports that validate against the stored schema,
//! and `sitegen ingest llm-d-report` reads them back to the same figures.
//! Real reports (llm-d-benchmark's inference-perf converter, v0.2, in
//! tests/fixtures/real/llm-d-report) are rows of `CORPUS` in tools.rs, each
//! point checked here against its file ([`check_llm_d_report`]); a
//! hand-written report shaped as llm-d's vLLM converter writes one covers
//! latencies in ms, which no real file shows.

use crate::common;

use std::path::{Path, PathBuf};

use common::figures::assert_figure;
use common::llm_d_report::{assert_valid, read, schema_validator, validator};
use serde_json::{Value, json};
use sitegen::export::llm_d_report;
use sitegen::ingest::{Format, import};
use sitegen::model::paced::{Arrivals, PacedLoad, PacedPoint};
use sitegen::model::{Cell, DecodeCell, Run, Status};

/// A number of a report, by a dotted path.
fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// One real report as llm-d-benchmark converted an inference-perf stage:
/// valid against llm-d's own v0.2 schema, and one paced point carrying the
/// report's numbers (seconds read as ms); failed requests make it an Error
/// with its counts and no speed or latency.
pub fn check_llm_d_report(rel: &str, r: &Value, run: &Run) {
    assert_valid(&schema_validator("0_2"), rel, r);
    assert!(run.cells.is_empty(), "{rel}: a rate is never a cell");
    assert_eq!(run.paced.len(), 1, "{rel}: one point per report");
    let p = &run.paced[0];
    let what = |f: &str| format!("{rel}: {f}");
    let load = |k: &str| num(r, &format!("scenario.load.standardized.{k}"));
    let agg = |k: &str| num(r, &format!("results.request_performance.aggregate.{k}"));
    assert_eq!(Some(p.load.requested_per_s), load("rate_qps"));
    assert_eq!(p.load.arrivals, Arrivals::NotStated);
    assert_eq!(p.load.max_concurrency, None, "{}", what("cap"));
    assert_eq!(
        Some(p.context_tokens),
        load("input_seq_len.value").map(|v| v.round() as u64),
        "{}",
        what("context")
    );
    let total = agg("requests.total").unwrap() as u64;
    let failed = agg("requests.failures").unwrap() as u64;
    assert_eq!(p.sent_requests, Some(total), "{}", what("sent"));
    assert_eq!(p.failed_requests, Some(failed), "{}", what("failed"));
    assert_eq!(p.completed_requests, Some(total - failed));
    assert_figure(
        &what("achieved"),
        p.achieved_per_s,
        agg("throughput.request_rate.mean"),
    );
    if failed > 0 {
        assert_eq!(p.status, Status::Error, "{}", what("status"));
        assert_eq!(p.total_tok_per_s, None, "{}", what("no speed"));
        assert_eq!(p.ttft_median_ms, None, "{}", what("no TTFT"));
        assert_eq!(p.latency, None, "{}", what("no latency"));
        let reason = p.reason.as_ref().unwrap().to_string();
        assert!(
            reason.contains(&format!("{failed} of {total} requests failed")),
            "{rel}: {reason}"
        );
    } else {
        assert_eq!(
            p.status,
            Status::Valid,
            "{}: {:?}",
            what("status"),
            p.reason
        );
        assert_figure(
            &what("output tok/s"),
            p.total_tok_per_s,
            agg("throughput.output_token_rate.mean"),
        );
        let ms = |k: &str| agg(&format!("latency.{k}")).map(|s| s * 1000.0);
        assert_figure(
            &what("TTFT p50"),
            p.ttft_median_ms,
            ms("time_to_first_token.p50"),
        );
        let latency = p.latency.as_ref().expect("the report's percentiles");
        let ttft = latency.ttft_ms.as_ref().unwrap();
        assert_figure(&what("TTFT p99"), ttft.p99, ms("time_to_first_token.p99"));
    }
}

fn bundled_runs() -> Vec<Run> {
    let mut runs: Vec<Run> = std::fs::read_dir(common::data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").exists())
        .map(|p| sitegen::store::load_run(&p).unwrap())
        .collect();
    runs.sort_by(|a, b| a.id.cmp(&b.id));
    assert!(runs.len() >= 2, "the bundled runs");
    runs
}

/// Imports `files` as the llm-d-report format into one run `id`.
fn import_reports(tmp: &Path, files: &[PathBuf], id: &str) -> Run {
    let opts = common::ingest::options(tmp, Some(id), None, None, false);
    let outcomes = import(Format::named("llm-d-report"), files, &opts).unwrap();
    assert_eq!(outcomes.len(), 1);
    sitegen::store::load_run(&outcomes[0].dir).unwrap()
}

/// Every figure a report carries of a decode cell, compared.
fn assert_same_decode(what: &str, got: &DecodeCell, want: &DecodeCell) {
    assert_eq!(got.status, Status::Valid, "{what}");
    assert_eq!(
        (got.context_tokens, got.concurrency),
        (want.context_tokens, want.concurrency),
        "{what}"
    );
    assert_figure(
        &format!("{what} total tok/s"),
        got.total_tok_per_s,
        want.total_tok_per_s,
    );
    assert_figure(
        &format!("{what} measured s"),
        got.measured_s,
        want.measured_s,
    );
    // Bit for bit, not only close: the YAML carries the shortest exact form.
    assert_eq!(got.total_tok_per_s, want.total_tok_per_s, "{what}");
    assert_eq!(got.measured_s, want.measured_s, "{what}");
}

#[test]
fn reports_of_the_bundled_runs_validate_against_the_v0_2_1_schema() {
    let validator = validator();
    let tmp = tempfile::tempdir().unwrap();
    for run in bundled_runs() {
        let exported = common::llm_d_report::export(&common::data_dir(), tmp.path(), &run.id);
        let valid = run
            .decode_cells()
            .filter(|c| c.status == Status::Valid)
            .count();
        assert!(valid > 0, "{}", run.id);
        assert_eq!(
            exported.files.len(),
            valid,
            "{}: one report per Valid decode cell",
            run.id
        );
        for (file, point) in &exported.files {
            let report = read(file);
            assert_valid(&validator, &file.display().to_string(), &report);
            assert_eq!(report["version"], "0.2.1");
            // The check is not vacuous: without what the schema requires, it fails.
            let mut broken = report.clone();
            broken["run"].as_object_mut().unwrap().remove("uid");
            // (`concurrency: 0` would pass: the schema's `ge: 1` is no JSON Schema keyword.)
            broken["scenario"]["load"]["standardized"]["rate_qps"] = json!(0);
            assert_eq!(
                validator.iter_errors(&broken).count(),
                2,
                "{}",
                file.display()
            );
            assert!(point.starts_with("decode "), "{point}");
        }
        // The folder holds the reports and nothing else.
        assert_eq!(
            std::fs::read_dir(&exported.dir).unwrap().count(),
            exported.files.len()
        );
        // What is left out is said.
        let said = exported.lines().join("\n");
        if run.prefill_cells().next().is_some() {
            assert!(said.contains("prefill cell"), "{said}");
        }
        assert!(
            said.contains("every statistic of the format requires a mean"),
            "{said}"
        );
    }
}

#[test]
fn reports_of_the_bundled_runs_reimport_to_the_same_figures_and_cards() {
    let tmp = tempfile::tempdir().unwrap();
    for run in bundled_runs() {
        let exported =
            common::llm_d_report::export(&common::data_dir(), &tmp.path().join("out"), &run.id);
        let back = import_reports(tmp.path(), &common::llm_d_report::files(&exported), &run.id);
        let want: Vec<&DecodeCell> = run
            .decode_cells()
            .filter(|c| c.status == Status::Valid)
            .collect();
        assert_eq!(
            back.cells.len(),
            want.len(),
            "{}: no prefill cell, no other cell",
            run.id
        );
        assert!(back.paced.is_empty());
        for w in want {
            let what = format!("{} {} x{}", run.id, w.context_tokens, w.concurrency);
            let got = back
                .decode_cell(w.context_tokens, w.concurrency)
                .unwrap_or_else(|| panic!("{what}: not read back"));
            assert_same_decode(&what, got, w);
            // Written by sitegen: its figures are sitegen's, as they were.
            assert!(got.measured_by.is_none(), "{what}");
        }
        // The cards come back as they were; the source now names the reports.
        let (mut got, mut want) = (back.meta.clone(), run.meta.clone());
        assert!(
            got.source
                .as_deref()
                .unwrap()
                .starts_with("llm-d Benchmark Reports: decode-")
        );
        got.source = None;
        want.source = None;
        assert_eq!(got, want, "{}", run.id);
    }
}

/// The GLM run with paced points (one capped, one with a failed request)
/// and a decode cell whose requests `sitegen run` kept.
fn run_with_paced_points() -> Run {
    let mut run =
        sitegen::store::load_run(&common::data_dir().join("glm-5.3-flash-h200x4-vllm")).unwrap();
    run.id = "glm-paced".into();
    let point = |rate: f64, arrivals, cap, sent: u64, failed: u64| {
        let mut p = PacedPoint::new(
            8192,
            PacedLoad {
                requested_per_s: rate,
                arrivals,
                max_concurrency: cap,
            },
            if failed > 0 {
                Status::Error
            } else {
                Status::Valid
            },
            None,
        );
        p.sent_requests = Some(sent);
        p.failed_requests = Some(failed);
        p.completed_requests = Some(sent - failed);
        p.achieved_per_s = Some(rate * 0.97);
        p.total_tok_per_s = Some(rate * 301.25);
        p.measured_s = Some(sent as f64 / rate + 3.5);
        p.ttft_median_ms = Some(210.0);
        p
    };
    run.paced = vec![
        point(1.5, Arrivals::Poisson, None, 120, 0),
        point(4.0, Arrivals::Gamma { burstiness: 0.5 }, Some(16), 300, 0),
        point(8.0, Arrivals::Constant, None, 500, 2),
    ];
    let detail: sitegen::model::DecodeDetail = serde_json::from_value(json!({
        "window_start_unix_s": 1790000000.25,
        "peak_decoding_requests": 2,
        "failed_requests": 0,
        "requests": [
            {"stream": 0, "start_s": 0.0, "output_tokens": 900, "duration_s": 12.0, "finish_reason": "stop", "chunks": 900},
            {"stream": 1, "start_s": 0.0, "output_tokens": 1500, "duration_s": 30.0, "finish_reason": "cancelled", "chunks": 1500},
            {"stream": 0, "start_s": 12.1, "output_tokens": 1400, "duration_s": 17.9, "finish_reason": "cancelled", "chunks": 1400}
        ]
    }))
    .unwrap();
    for c in &mut run.cells {
        if let Cell::Decode(d) = c
            && (d.context_tokens, d.concurrency) == (8192, 2)
        {
            d.detail = Some(Box::new(detail.clone()));
            d.completed_requests = Some(1);
        }
    }
    run
}

#[test]
fn paced_points_export_as_reports_at_a_rate_and_read_back_the_same() {
    let validator = validator();
    let run = run_with_paced_points();
    let reports = llm_d_report::of_run(&run);
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for r in &reports.reports {
        assert_valid(&validator, &r.file_name, &r.value);
        let path = tmp.path().join(&r.file_name);
        std::fs::write(&path, r.yaml(&run.id)).unwrap();
        // What is written is what was validated.
        assert_eq!(read(&path), r.value, "{}", r.file_name);
        files.push(path);
    }
    // The failed point is not Valid: it is left out, and said.
    let paced: Vec<&llm_d_report::Report> = reports
        .reports
        .iter()
        .filter(|r| r.file_name.starts_with("paced-"))
        .collect();
    assert_eq!(paced.len(), 2);
    assert_eq!(paced[0].file_name, "paced-00008192-r000001500.yaml");
    assert_eq!(paced[1].file_name, "paced-00008192-r000004000-x016.yaml");
    assert_eq!(paced[1].point, "paced 8K at 4 req/s, at most 16 in flight");
    let load = &paced[1].value["scenario"]["load"]["standardized"];
    assert_eq!(
        (load["rate_qps"].as_f64(), load["concurrency"].as_u64()),
        (Some(4.0), Some(16))
    );
    assert!(
        reports
            .left_out
            .iter()
            .any(|l| l.contains("paced 8K at 8 req/s (Error)")),
        "{:?}",
        reports.left_out
    );
    // The decode cell with its requests says how many were sent.
    let requests = &reports
        .reports
        .iter()
        .find(|r| r.file_name == "decode-00008192-x002.yaml")
        .unwrap()
        .value["results"]["request_performance"]["aggregate"]["requests"];
    assert_eq!(
        requests,
        &json!({"total": 3, "failures": 0, "incomplete": 2})
    );

    let back = import_reports(tmp.path(), &files, "glm-paced");
    assert_eq!(back.paced.len(), 2);
    for (got, want) in back
        .paced
        .iter()
        .zip(run.paced.iter().filter(|p| p.status == Status::Valid))
    {
        let what = format!("paced {}", want.load.requested_per_s);
        assert_eq!(got.load, want.load, "{what}: rate, arrivals and cap");
        assert_eq!(got.context_tokens, want.context_tokens, "{what}");
        assert_eq!(got.status, Status::Valid, "{what}");
        assert_eq!(
            (
                got.sent_requests,
                got.completed_requests,
                got.failed_requests
            ),
            (
                want.sent_requests,
                want.completed_requests,
                want.failed_requests
            ),
            "{what}"
        );
        assert_eq!(got.achieved_per_s, want.achieved_per_s, "{what}");
        assert_eq!(got.total_tok_per_s, want.total_tok_per_s, "{what}");
        assert_eq!(got.measured_s, want.measured_s, "{what}");
        // Not in the format (it needs a mean): not read back, not invented.
        assert_eq!(got.ttft_median_ms, None, "{what}");
    }
    let d = back.decode_cell(8192, 2).unwrap();
    assert_eq!(d.completed_requests, Some(1));
    assert_same_decode("decode 8K x2", d, run.decode_cell(8192, 2).unwrap());
}

fn write_report(dir: &Path, name: &str, report: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, yaml_serde::to_string(report).unwrap()).unwrap();
    path
}

fn import_error(files: &[PathBuf]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let opts = common::ingest::options(
        tmp.path(),
        Some("x"),
        Some(common::ingest::META),
        None,
        false,
    );
    match import(None, files, &opts) {
        Ok(_) => panic!("{files:?} imported"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn a_report_whose_load_sitegen_cannot_place_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let hand = common::repo()
        .join("tests/fixtures/hand-written/llm-d-report-vllm-converter.hand-written.yaml");
    let mut report = read(&hand);
    // Neither a concurrency nor a rate.
    let load = report["scenario"]["load"]["standardized"]
        .as_object_mut()
        .unwrap();
    load.remove("concurrency");
    load.insert("rate_qps".into(), Value::Null);
    let file = write_report(tmp.path(), "no-load.yaml", &report);
    let err = import_error(&[file]);
    assert!(
        err.contains("no-load.yaml: scenario.load.standardized"),
        "{err}"
    );
    assert!(
        err.contains("concurrency and rate_qps: the report states neither"),
        "{err}"
    );
    // A concurrency that is not a whole number of requests.
    report["scenario"]["load"]["standardized"]["concurrency"] = json!(2.5);
    let file = write_report(tmp.path(), "half.yaml", &report);
    let err = import_error(&[file]);
    assert!(
        err.contains("concurrency: 2.5: expected a whole number"),
        "{err}"
    );
    // No load at all.
    report["scenario"].as_object_mut().unwrap().remove("load");
    let file = write_report(tmp.path(), "none.yaml", &report);
    let err = import_error(&[file]);
    assert!(
        err.contains("scenario.load.standardized: the report states no load"),
        "{err}"
    );
    // Another version of the format.
    let mut old = read(&hand);
    old["version"] = json!("0.1");
    let file = write_report(tmp.path(), "old.yaml", &old);
    let err = import_error(&[file]);
    assert!(
        err.contains("version: 0.1: sitegen reads Benchmark Reports 0.2 and 0.2.1"),
        "{err}"
    );
}

#[test]
fn a_report_as_llm_d_converts_vllm_bench_reads_with_its_latencies_in_ms() {
    let hand = common::repo()
        .join("tests/fixtures/hand-written/llm-d-report-vllm-converter.hand-written.yaml");
    let report = read(&hand);
    assert_valid(&validator(), "the hand-written report", &report);
    assert_eq!(
        Format::detect(&std::fs::read_to_string(&hand).unwrap()),
        Format::named("llm-d-report")
    );
    let tmp = tempfile::tempdir().unwrap();
    // Every card the run needs is in the report.
    let opts = common::ingest::options(tmp.path(), Some("vllm-via-llmd"), None, None, false);
    let outcome = import(None, &[hand], &opts).unwrap().remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    assert_eq!(run.meta.model, "Qwen/Qwen3-0.6B");
    assert_eq!(run.meta.hardware.gpu, "NVIDIA-H100-80GB-HBM3");
    assert_eq!(run.meta.engine.name, "vllm");
    assert_eq!(
        run.meta.run.benchmark_tool.as_ref().unwrap().name,
        "vllm-benchmark"
    );
    assert_eq!(
        run.meta.run.decode_test,
        sitegen::model::DecodeTest::RequestBurst
    );
    let c = run
        .decode_cell(1000, 8)
        .expect("the cell at its mean prompt length and concurrency");
    let agg = &report["results"]["request_performance"]["aggregate"];
    let f = |p: &str| agg.pointer(p).and_then(Value::as_f64);
    assert_eq!(c.status, Status::Valid);
    assert_eq!(c.completed_requests, Some(100));
    assert_figure(
        "total",
        c.total_tok_per_s,
        f("/throughput/output_token_rate/mean"),
    );
    assert_figure(
        "ttft",
        c.ttft_median_ms,
        f("/latency/time_to_first_token/p50"),
    );
    assert_figure(
        "tbt",
        c.tbt_median_ms,
        f("/latency/inter_token_latency/p50"),
    );
    assert_figure(
        "per request",
        c.per_request_tok_per_s,
        f("/latency/time_per_output_token/p50").map(|t| 1000.0 / t),
    );
    // llm-d's vLLM converter writes when the run ended, not how long it took.
    assert_eq!(c.measured_s, None);
    let lat = c.latency.as_deref().unwrap();
    let e2e = lat.e2e_ms.as_ref().unwrap();
    assert_figure("e2e p99", e2e.p99, f("/latency/request_latency/p99"));
    assert_eq!(e2e.requests, Some(100));
    let by = c.measured_by.as_ref().unwrap();
    assert!(
        by.tool == "vllm-benchmark (llm-d Benchmark Report v0.2)",
        "{}",
        by.tool
    );
    assert!(by.definitions["tbt_ms"].contains("per streamed chunk"));
}

#[test]
fn latencies_in_seconds_are_read_in_ms_and_a_wrong_unit_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let hand = common::repo()
        .join("tests/fixtures/hand-written/llm-d-report-vllm-converter.hand-written.yaml");
    let mut report = read(&hand);
    let ttft = &mut report["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"];
    for k in ["mean", "p50", "p90", "p99"] {
        ttft[k] = json!(ttft[k].as_f64().unwrap() / 1000.0);
    }
    ttft["units"] = json!("s");
    let file = write_report(tmp.path(), "seconds.yaml", &report);
    let opts = common::ingest::options(
        tmp.path(),
        Some("s"),
        Some(common::ingest::META),
        None,
        false,
    );
    let outcome = import(None, &[file], &opts).unwrap().remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    let want = read(&hand)["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["p50"].as_f64();
    assert_figure(
        "ttft from seconds",
        run.decode_cell(1000, 8).unwrap().ttft_median_ms,
        want,
    );
    report["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["units"] =
        json!("tokens/s");
    let file = write_report(tmp.path(), "unit.yaml", &report);
    let err = import_error(&[file]);
    assert!(err.contains("latency.time_to_first_token"), "{err}");
    assert!(
        err.contains("units: expected ms or s, found \"tokens/s\""),
        "{err}"
    );
}
