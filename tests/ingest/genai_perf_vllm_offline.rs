//! Importing NVIDIA GenAI-Perf's profile exports and vLLM's offline
//! benchmarks (`benchmark_latency.py`, `benchmark_throughput.py`). The
//! fixtures of record are real files (tests/fixtures/real/genai-perf and
//! vllm-offline, listed with their provenance in SOURCES.md): every one is
//! recognised, and imports with every mapped figure equal to the file's own
//! number (computed here from the file), or is refused with a reason true
//! of it, naming it, writing nothing. Where a case needs a file no real one
//! is, a real file is edited here, and the edit is said.

use crate::common;

use std::path::{Path, PathBuf};

use common::figures::assert_figure;
use common::ingest::{COUNT, ENGINE, Expect, GPU, META, MODEL, every_file_imports_or_is_refused};
use common::real;
use serde_json::Value;
use sitegen::ingest::{Format, Outcome, import};
use sitegen::model::{DecodeCell, DecodeTest, Run, Status};

const FLAT: &str = "genai-perf/wellflat-gpt-oss-20b-c1-flat-config-profile_export_genai_perf.json";
const TELEMETRY: &str =
    "gpu-summary/wellflat-gpt-oss-20b-c1-telemetry-profile_export_genai_perf.json";
const NON_STREAMING: &str = "genai-perf/adaptive-auto-c50-non-streaming-genai_perf.json";
const CSV: &str = "genai-perf/adaptive-auto-c50-non-streaming-genai_perf.csv";
const LATENCY_REFUSAL: &str = "not the batch size, input or output length; sitegen does not \
                               assume vLLM's defaults (batch 8, input 32, output 128)";
const THROUGHPUT_REFUSAL: &str = "every prompt submitted at once to the engine's own scheduler, \
                                  no concurrency level and no window; sitegen has no cell for it";

/// Every real file of the two formats, its format and what it gives.
#[rustfmt::skip]
const CORPUS: &[(&str, &str, Expect)] = {
    use Expect::*;
    &[
        (FLAT, "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        (TELEMETRY, "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        (NON_STREAMING, "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        (CSV, "genai-perf", Refused("GenAI-Perf's CSV export records neither the concurrency nor the model")),
        ("vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1.json", "vllm-offline", Refused(LATENCY_REFUSAL)),
        ("vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1-20250217.json", "vllm-offline", Refused(LATENCY_REFUSAL)),
        ("vllm-offline/vllm-benchmarks-ascend-throughput_llama8B_tp1.json", "vllm-offline", Refused(THROUGHPUT_REFUSAL)),
        ("vllm-offline/vllm-benchmarks-ascend-throughput_llama8B_tp1-20250218.json", "vllm-offline", Refused(THROUGHPUT_REFUSAL)),
    ]
};

/// Imports `files` (format recognised) with `meta`; the run written and what
/// the import said.
fn import_with(files: &[PathBuf], meta: Option<&str>) -> anyhow::Result<(Run, Outcome)> {
    let tmp = tempfile::tempdir().unwrap();
    let mut written = import(
        None,
        files,
        &common::ingest::options(tmp.path(), Some("x"), meta, None, false),
    )?;
    assert_eq!(written.len(), 1);
    let outcome = written.remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    Ok((run, outcome))
}

/// A dry run of one file in `format`: what the import would make.
fn dry_run(file: &Path, format: &str, meta: Option<&str>) -> anyhow::Result<Outcome> {
    let tmp = tempfile::tempdir().unwrap();
    let opts = common::ingest::options(tmp.path(), Some("x"), meta, None, true);
    let mut out = import(Format::named(format), &[file.to_path_buf()], &opts)?;
    assert!(
        !tmp.path().join("data").exists(),
        "a dry run writes nothing"
    );
    Ok(out.remove(0))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    sitegen::ingest::json::parse_python_json(path, &text).unwrap()
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

fn only_cell(cells: &[sitegen::model::Cell]) -> &DecodeCell {
    assert_eq!(cells.len(), 1, "one file, one cell");
    match &cells[0] {
        sitegen::model::Cell::Decode(d) => d,
        other => panic!("expected a decode cell, found {other:?}"),
    }
}

#[test]
fn every_real_file_is_in_the_corpus() {
    let mut on_disk = Vec::new();
    // gpu-summary holds the real files with GPU telemetry, AIPerf's too.
    for dir in ["genai-perf", "vllm-offline", "gpu-summary"] {
        for entry in std::fs::read_dir(real(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if dir != "gpu-summary" || name.contains("genai_perf") {
                on_disk.push(format!("{dir}/{name}"));
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|(f, _, _)| (*f).to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    let sources = std::fs::read_to_string(real("SOURCES.md")).unwrap();
    for file in &on_disk {
        assert!(
            sources.contains(&format!("`{file}`")),
            "SOURCES.md lists {file}"
        );
    }
}

#[test]
fn every_real_file_imports_with_its_figures_or_is_refused_for_a_true_reason() {
    every_file_imports_or_is_refused(
        CORPUS,
        |file, err| {
            assert_eq!(err.lines().count(), 1, "{}: one error: {err}", file.rel);
            refusal_is_true(file.rel, &file.text, err);
        },
        |file, run, outcome| check_genai_perf(file.rel, &read_json(&file.path), run, outcome),
    );
}

/// The refusal's reason holds of the file: what it says the file lacks, the
/// file lacks, and the figures it says the file holds are the file's.
fn refusal_is_true(rel: &str, text: &str, err: &str) {
    if rel.ends_with(".csv") {
        // Neither a concurrency nor a model anywhere in the CSV.
        let lower = text.to_lowercase();
        assert!(!lower.contains("concurrency"), "{rel}");
        assert!(!lower.contains("model"), "{rel}");
        assert!(
            err.contains("_genai_perf.json"),
            "{rel}: names the JSON to import: {err}"
        );
        return;
    }
    let v: Value = serde_json::from_str(text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    for k in keys.iter().map(|k| k.to_lowercase()) {
        for lacking in ["batch", "input", "output", "len", "concurrency", "window"] {
            assert!(
                !k.contains(lacking),
                "{rel}: the file has {k}, said to lack {lacking}"
            );
        }
    }
    if rel.contains("latency") {
        let iterations = v["latencies"].as_array().unwrap().len();
        assert!(err.contains(&format!("{iterations} iterations")), "{err}");
        let mean = num(&v, "avg_latency").unwrap();
        assert!(err.contains(&format!("mean {mean:.3} s")), "{err}");
        let median = v["percentiles"]["50"].as_f64().unwrap();
        assert!(err.contains(&format!("median {median:.3} s")), "{err}");
    } else {
        let n = v["num_requests"].as_u64().unwrap();
        assert!(
            err.contains(&format!("an offline throughput run of {n} prompts")),
            "{err}"
        );
        let tokens = v["total_num_tokens"].as_u64().unwrap();
        assert!(err.contains(&format!("total_num_tokens {tokens}")), "{err}");
        let elapsed = num(&v, "elapsed_time").unwrap();
        assert!(
            err.contains(&format!("elapsed_time {elapsed:.3} s")),
            "{err}"
        );
        let tok_s = num(&v, "tokens_per_second").unwrap();
        assert!(
            err.contains(&format!("tokens_per_second {tok_s:.1}")),
            "{err}"
        );
        let req_s = num(&v, "requests_per_second").unwrap();
        assert!(
            err.contains(&format!("requests_per_second {req_s:.3}")),
            "{err}"
        );
    }
}

/// The settings of a GenAI-Perf file by either layout's path.
fn setting<'a>(v: &'a Value, flat: &str, nested: &str) -> Option<&'a Value> {
    let config = &v["input_config"];
    let path = if config.get("perf_analyzer").is_some() {
        nested
    } else {
        flat
    };
    path.split('.')
        .try_fold(config, |v, k| v.get(k))
        .filter(|v| !v.is_null())
}

/// GenAI-Perf: every figure of the cell against the file's own numbers.
fn check_genai_perf(rel: &str, v: &Value, run: &Run, outcome: &Outcome) {
    let n = setting(v, "concurrency", "perf_analyzer.stimulus.concurrency")
        .and_then(Value::as_u64)
        .unwrap() as u32;
    let ctx = num(v, "input_sequence_length.avg").unwrap().round() as u64;
    let c = run
        .decode_cell(ctx, n)
        .unwrap_or_else(|| panic!("{rel}: no cell {ctx} × {n}"));
    assert_eq!(run.cells.len(), 1, "{rel}: one file, one cell");
    let what = |f: &str| format!("{rel}: {ctx} × {n}: {f}");

    // The cards and the layout.
    let model = setting(v, "model.0", "model_names.0")
        .or_else(|| setting(v, "model", "model_names").and_then(|m| m.get(0)))
        .and_then(Value::as_str)
        .unwrap();
    assert_eq!(run.meta.served_model, model, "{rel}");
    assert_eq!(run.meta.model, model.rsplit('/').next().unwrap(), "{rel}");
    assert_eq!(run.meta.run.decode_test, DecodeTest::RequestBurst, "{rel}");
    let tool = run.meta.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(tool.name, "GenAI-Perf", "{rel}");
    assert_eq!(tool.version, None, "{rel}: the file records no version");
    assert!(
        outcome.layout.starts_with("GenAI-Perf"),
        "{rel}: {}",
        outcome.layout
    );
    assert!(
        !outcome.layout.contains("AIPerf"),
        "{rel}: {}",
        outcome.layout
    );
    let nested = v["input_config"].get("perf_analyzer").is_some();
    assert_eq!(
        outcome.layout.contains("nested"),
        nested,
        "{}",
        outcome.layout
    );
    let by = c.measured_by.as_ref().unwrap();
    assert_eq!(by.tool, "GenAI-Perf");
    assert_eq!(
        by.raw["request_count"], v["request_count"],
        "{rel}: raw kept"
    );

    // The counts, and what follows from GenAI-Perf's definitions.
    let count = num(v, "request_count.avg").unwrap();
    let osl = num(v, "output_sequence_length.avg").unwrap();
    let throughput = num(v, "output_token_throughput.avg").unwrap();
    let duration = count * osl / throughput;
    assert_eq!(
        c.completed_requests,
        Some(count as u64),
        "{}",
        what("completed")
    );
    assert_eq!(
        c.output_tokens,
        Some((count * osl).round() as u64),
        "{}",
        what("output tokens")
    );
    assert_figure(&what("measured s"), c.measured_s, Some(duration));
    let sent = (num(v, "request_throughput.avg").unwrap() * duration).round() as u64;
    let streamed = setting(v, "streaming", "endpoint.streaming")
        .and_then(Value::as_bool)
        .unwrap();
    if sent > count as u64 {
        assert_eq!(c.status, Status::Error, "{}", what("status"));
        let reason = c.reason.as_ref().unwrap().words();
        let empty = sent - count as u64;
        assert!(
            reason.contains(&format!("{empty} of {sent} requests returned no text")),
            "{}: {reason}",
            what("reason")
        );
        for (f, got) in [
            ("total tok/s", c.total_tok_per_s),
            ("TTFT", c.ttft_median_ms),
            ("TBT", c.tbt_median_ms),
            ("per-request", c.per_request_tok_per_s),
            ("active", c.avg_active_requests),
        ] {
            assert_eq!(got, None, "{}: no figures in an Error cell", what(f));
        }
    } else {
        assert_eq!(c.status, Status::Valid, "{}", what("status"));
        check_valid_figures(rel, v, c, streamed, &outcome.warnings);
    }

    // What is read into definitions, and what is named as not imported.
    let tokenizer = setting(v, "tokenizer", "tokenizer.name")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        by.definitions["context_tokens"].contains(tokenizer),
        "{rel}: {:?}",
        by.definitions
    );
    let measured = &by.definitions["measured_s"];
    if nested {
        let mode = setting(v, "", "perf_analyzer.measurement.mode").unwrap();
        let num = setting(v, "", "perf_analyzer.measurement.num").unwrap();
        assert!(measured.contains(&format!("measurement mode {}", mode.as_str().unwrap())));
        assert!(measured.contains(&num.to_string()), "{measured}");
    } else {
        let count = setting(v, "request_count", "").unwrap();
        assert!(
            measured.contains(&format!("request_count {count}")),
            "{measured}"
        );
    }
    if let Some(t) = v.get("telemetry_stats") {
        let gpus = t["gpu_power_usage"].as_object().unwrap().len() - 1; // less "unit"
        let warning = outcome
            .warnings
            .iter()
            .find(|w| w.contains("telemetry_stats"))
            .unwrap_or_else(|| panic!("{rel}: telemetry named: {:?}", outcome.warnings));
        // This corpus gives the run 3 GPUs, which the file's busy ones do
        // not settle (gpu_telemetry.rs beside this file imports it with 1).
        assert!(
            warning.contains(&format!(
                "the GPU telemetry is not imported: it lists {gpus} GPUs"
            )),
            "{warning}"
        );
        assert!(warning.contains("give --gpu-index"), "{warning}");
        assert!(
            c.telemetry.is_none(),
            "{rel}: no telemetry of GPUs not chosen"
        );
    }
    for w in &outcome.warnings {
        assert!(
            w.contains(rel.rsplit('/').next().unwrap()),
            "names the file: {w}"
        );
    }
}

/// A Valid cell's figures: the totals, and the per-request ones where the
/// responses were streamed.
fn check_valid_figures(rel: &str, v: &Value, c: &DecodeCell, streamed: bool, warnings: &[String]) {
    let what = |f: &str| format!("{rel}: {f}");
    let count = num(v, "request_count.avg").unwrap();
    let osl = num(v, "output_sequence_length.avg").unwrap();
    let throughput = num(v, "output_token_throughput.avg").unwrap();
    let duration = count * osl / throughput;
    assert_figure(&what("total tok/s"), c.total_tok_per_s, Some(throughput));
    assert_figure(
        &what("avg active"),
        c.avg_active_requests,
        Some(num(v, "request_latency.avg").unwrap() / 1000.0 * count / duration),
    );
    if !streamed {
        for (f, got) in [
            ("TTFT", c.ttft_median_ms),
            ("TBT", c.tbt_median_ms),
            ("per-request", c.per_request_tok_per_s),
        ] {
            assert_eq!(got, None, "{}: not streamed: left empty", what(f));
        }
        assert!(
            warnings.iter().any(|w| w.contains("streaming: false")
                && w.contains("time_to_first_token")
                && w.contains("left empty")),
            "{rel}: {warnings:?}"
        );
        return;
    }
    assert_figure(
        &what("TTFT"),
        c.ttft_median_ms,
        num(v, "time_to_first_token.p50"),
    );
    assert_figure(
        &what("TBT"),
        c.tbt_median_ms,
        num(v, "inter_token_latency.p50"),
    );
    let per_request =
        num(v, "output_token_throughput_per_user.p50")
            .or(num(v, "inter_token_latency.p50").map(|t| 1000.0 / t));
    assert_figure(&what("per-request"), c.per_request_tok_per_s, per_request);
    let spread = c.spread.as_deref();
    match num(v, "time_to_first_token.p10") {
        Some(p10) => {
            let s = spread.expect("GenAI-Perf reports percentiles");
            assert_figure(&what("TTFT p10"), s.ttft_ms.map(|s| s.p10), Some(p10));
            assert_figure(
                &what("TBT p90"),
                s.tbt_ms.map(|s| s.p90),
                num(v, "inter_token_latency.p90"),
            );
            assert_figure(
                &what("per-request p90"),
                s.per_request_tok_per_s.map(|s| s.p90),
                num(v, "output_token_throughput_per_user.p90"),
            );
        }
        None => assert!(spread.is_none(), "{rel}: no p10 in the file, no spread"),
    }
}

/// The two real streaming files, edited so that every request sent returned
/// text (their `request_throughput` made request_count / the duration): no
/// real file shows a streaming run where all did, and this is how TTFT, time
/// between tokens and per-request tok/s are read.
fn every_request_returned_text(rel: &str) -> Value {
    let mut v = read_json(&real(rel));
    let count = num(&v, "request_count.avg").unwrap();
    let duration = count * num(&v, "output_sequence_length.avg").unwrap()
        / num(&v, "output_token_throughput.avg").unwrap();
    v["request_throughput"]["avg"] = Value::from(count / duration);
    v
}

/// Imports `v` written to a file named `name`, as a dry run in genai-perf.
fn dry_run_of(v: &Value, name: &str) -> anyhow::Result<Outcome> {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(name);
    std::fs::write(&file, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let out = dry_run(&file, "genai-perf", Some(META));
    if let Err(e) = &out {
        let err = format!("{e:#}");
        assert!(
            err.contains(&*file.display().to_string()),
            "names the file: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one error: {err}");
    }
    out
}

#[test]
fn a_streaming_run_where_every_request_returned_text_has_its_per_request_figures() {
    for rel in [TELEMETRY, FLAT] {
        let v = every_request_returned_text(rel);
        let name = rel.rsplit('/').next().unwrap();
        let outcome = dry_run_of(&v, name).unwrap();
        let c = only_cell(&outcome.cells);
        assert_eq!(c.status, Status::Valid, "{rel}: {:?}", c.reason);
        check_valid_figures(rel, &v, c, true, &outcome.warnings);
        let defs = &c.measured_by.as_ref().unwrap().definitions;
        if rel == FLAT {
            // GenAI-Perf 0.0.12 and earlier: per-request throughput over the
            // whole latency, TTFT included, is named, not imported.
            let w = outcome
                .warnings
                .iter()
                .find(|w| w.contains("output_token_throughput_per_request: not imported"))
                .unwrap_or_else(|| panic!("{:?}", outcome.warnings));
            assert!(w.contains("1000 / inter_token_latency.p50 instead"), "{w}");
            assert!(defs["per_request_tok_per_s"].starts_with("1000 / the median inter-token"));
        } else {
            assert!(
                defs["per_request_tok_per_s"].contains("per user"),
                "{defs:?}"
            );
        }
    }
}

/// The figure each key gives, read back from the cell.
type Figure = fn(&DecodeCell) -> Option<f64>;

#[test]
fn a_genai_perf_figure_removed_from_the_file_is_named_never_filled_in() {
    let completed: Figure = |c| c.completed_requests.map(|n| n as f64);
    let tokens: Figure = |c| c.output_tokens.map(|n| n as f64);
    let measured: Figure = |c| c.measured_s;
    let active: Figure = |c| c.avg_active_requests;
    let ttft: Figure = |c| c.ttft_median_ms;
    let tbt: Figure = |c| c.tbt_median_ms;
    // (file, key removed, the figures it leaves empty; none: refused)
    let cases: &[(&str, &str, &[Figure])] = &[
        (NON_STREAMING, "input_sequence_length", &[]),
        (NON_STREAMING, "output_token_throughput", &[]),
        (
            NON_STREAMING,
            "request_count",
            &[completed, tokens, measured, active],
        ),
        (
            NON_STREAMING,
            "output_sequence_length",
            &[tokens, measured, active],
        ),
        (NON_STREAMING, "request_latency", &[active]),
        (TELEMETRY, "time_to_first_token", &[ttft]),
        (TELEMETRY, "inter_token_latency", &[tbt]),
        (
            FLAT,
            "inter_token_latency",
            &[tbt, |c| c.per_request_tok_per_s],
        ),
    ];
    for (rel, key, emptied) in cases {
        let mut v = if *rel == NON_STREAMING {
            read_json(&real(rel))
        } else {
            every_request_returned_text(rel)
        };
        assert!(
            v.as_object_mut().unwrap().remove(*key).is_some(),
            "{rel}: {key}"
        );
        match dry_run_of(&v, "removed.json") {
            Err(e) => {
                assert!(emptied.is_empty(), "{rel} without {key}: refused: {e:#}");
                let err = format!("{e:#}");
                assert!(err.contains(&format!("{key}: expected")), "{err}");
            }
            Ok(outcome) => {
                assert!(!emptied.is_empty(), "{rel} without {key}: imported");
                assert!(
                    outcome
                        .warnings
                        .iter()
                        .any(|w| w.contains(&format!("{key}: absent"))),
                    "{rel} without {key}: named: {:?}",
                    outcome.warnings
                );
                let c = only_cell(&outcome.cells);
                for (i, figure) in emptied.iter().enumerate() {
                    assert_eq!(
                        figure(c),
                        None,
                        "{rel} without {key}: figure {i} left empty"
                    );
                }
            }
        }
    }
    // Without the per-user throughput, the per-request rate is 1000 / the
    // median inter-token latency, and its definition says so.
    let mut v = every_request_returned_text(TELEMETRY);
    v.as_object_mut()
        .unwrap()
        .remove("output_token_throughput_per_user");
    let outcome = dry_run_of(&v, "removed.json").unwrap();
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("output_token_throughput_per_user: absent")),
        "{:?}",
        outcome.warnings
    );
    let c = only_cell(&outcome.cells);
    assert_figure(
        "per-request",
        c.per_request_tok_per_s,
        num(&v, "inter_token_latency.p50").map(|t| 1000.0 / t),
    );
    assert!(
        c.measured_by.as_ref().unwrap().definitions["per_request_tok_per_s"]
            .starts_with("1000 / the median inter-token latency")
    );
    // Without request_throughput, whether every request returned text cannot
    // be checked: the real telemetry file, whose 65 silent requests made it
    // an Error, then imports Valid, and the warning says what was not checked.
    let mut v = read_json(&real(TELEMETRY));
    v.as_object_mut().unwrap().remove("request_throughput");
    let outcome = dry_run_of(&v, "removed.json").unwrap();
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("request_throughput: absent")
                && w.contains("whether every request sent returned text cannot be checked")),
        "{:?}",
        outcome.warnings
    );
    // Without the streaming flag, nothing per token is read.
    for (rel, path) in [
        (TELEMETRY, "/input_config/endpoint"),
        (FLAT, "/input_config"),
    ] {
        let mut v = every_request_returned_text(rel);
        v.pointer_mut(path)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("streaming");
        let outcome = dry_run_of(&v, "removed.json").unwrap();
        let c = only_cell(&outcome.cells);
        assert_eq!(c.ttft_median_ms, None, "{rel}");
        assert_eq!(c.tbt_median_ms, None, "{rel}");
        assert_eq!(c.per_request_tok_per_s, None, "{rel}");
        assert!(
            outcome
                .warnings
                .iter()
                .any(|w| w.contains("streaming: absent")),
            "{rel}: {:?}",
            outcome.warnings
        );
    }
    // Without the load setting, the file is refused; without the model, it
    // is a card the import lists as missing.
    for (rel, path, key) in [
        (FLAT, "/input_config", "concurrency"),
        (
            TELEMETRY,
            "/input_config/perf_analyzer/stimulus",
            "concurrency",
        ),
        (
            NON_STREAMING,
            "/input_config/perf_analyzer/stimulus",
            "concurrency",
        ),
    ] {
        let mut v = read_json(&real(rel));
        let parent = v.pointer_mut(path).unwrap().as_object_mut().unwrap();
        assert!(parent.remove(key).is_some(), "{rel}: {path}/{key}");
        let err = format!("{:#}", dry_run_of(&v, "removed.json").unwrap_err());
        assert!(err.contains("concurrency"), "{rel}: {err}");
    }
    for (rel, key) in [(FLAT, "model"), (NON_STREAMING, "model_names")] {
        let mut v = read_json(&real(rel));
        v["input_config"].as_object_mut().unwrap().remove(key);
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("removed.json");
        std::fs::write(&file, v.to_string()).unwrap();
        let outcome = import(
            Format::named("genai-perf"),
            &[file],
            &common::ingest::options(tmp.path(), Some("x"), None, None, true),
        )
        .unwrap()
        .remove(0);
        assert_eq!(outcome.missing, vec![MODEL, GPU, COUNT, ENGINE], "{rel}");
    }
}

#[test]
fn a_rate_paced_run_and_an_unknown_unit_are_refused_naming_them() {
    // The real files, edited: a request-rate stimulus instead of a concurrency.
    let mut flat = read_json(&real(FLAT));
    flat["input_config"]["concurrency"] = Value::Null;
    flat["input_config"]["request_rate"] = Value::from(4.0);
    let mut nested = read_json(&real(TELEMETRY));
    nested["input_config"]["perf_analyzer"]["stimulus"] = serde_json::json!({"request_rate": 4.0});
    for (v, place) in [
        (&flat, "input_config: request_rate 4.0"),
        (
            &nested,
            "input_config.perf_analyzer.stimulus: request_rate 4.0",
        ),
    ] {
        let err = format!("{:#}", dry_run_of(v, "paced.json").unwrap_err());
        assert!(err.contains(place), "{err}");
        assert!(
            err.contains("the requests arrived at a paced rate"),
            "{err}"
        );
    }
    let mut session = read_json(&real(NON_STREAMING));
    session["input_config"]["perf_analyzer"]["stimulus"] =
        serde_json::json!({"session_concurrency": 4});
    let err = format!("{:#}", dry_run_of(&session, "session.json").unwrap_err());
    assert!(
        err.contains(
            "expected a concurrency stimulus ({\"concurrency\": N}), found session_concurrency"
        ),
        "{err}"
    );
    // A unit GenAI-Perf does not write is named, not guessed.
    let mut v = read_json(&real(NON_STREAMING));
    v["request_latency"]["unit"] = Value::from("minutes");
    let err = format!("{:#}", dry_run_of(&v, "unit.json").unwrap_err());
    assert!(
        err.contains("request_latency.unit: expected \"ms\" or \"sec\" or \"s\" or \"us\" or \"ns\", found \"minutes\""),
        "{err}"
    );
    // Seconds are converted.
    let mut v = every_request_returned_text(TELEMETRY);
    let p50 = num(&v, "time_to_first_token.p50").unwrap();
    for stat in ["avg", "p10", "p50", "p90"] {
        let ms = num(&v, &format!("time_to_first_token.{stat}")).unwrap();
        v["time_to_first_token"][stat] = Value::from(ms / 1000.0);
    }
    v["time_to_first_token"]["unit"] = Value::from("sec");
    let outcome = dry_run_of(&v, "seconds.json").unwrap();
    assert_figure(
        "TTFT from seconds",
        only_cell(&outcome.cells).ttft_median_ms,
        Some(p50),
    );
    // Two models in one run mix their figures.
    let mut v = read_json(&real(NON_STREAMING));
    v["input_config"]["model_names"] = serde_json::json!(["a/one", "b/two"]);
    let err = format!("{:#}", dry_run_of(&v, "models.json").unwrap_err());
    assert!(
        err.contains("input_config.model_names: 2 models (a/one, b/two)"),
        "{err}"
    );
}

#[test]
fn genai_perf_files_make_one_run_of_one_model_and_repeats_one_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = common::ingest::options(tmp.path(), Some("x"), Some(META), None, false);
    // Files naming different models.
    let files = [real(TELEMETRY), real(NON_STREAMING)];
    let err = format!("{:#}", import(None, &files, &opts).unwrap_err());
    assert!(
        err.contains("model: expected openai/gpt-oss-20b as in"),
        "{err}"
    );
    assert!(err.contains("found auto: one run is one model"), "{err}");
    // One setting measured twice (the same input_config) is one cell of two
    // repeats (the real file with every request counted, and a copy with
    // another throughput).
    let base = every_request_returned_text(FLAT);
    let base_file = tmp.path().join("base.json");
    std::fs::write(&base_file, base.to_string()).unwrap();
    let mut again = base.clone();
    let throughput = again["output_token_throughput"]["avg"].as_f64().unwrap();
    again["output_token_throughput"]["avg"] = Value::from(throughput * 1.1);
    again["request_throughput"]["avg"] =
        Value::from(again["request_throughput"]["avg"].as_f64().unwrap() * 1.1);
    let again_file = tmp.path().join("again.json");
    std::fs::write(&again_file, again.to_string()).unwrap();
    let (run, _) = import_with(&[base_file.clone(), again_file.clone()], Some(META)).unwrap();
    let cell = run.decode_cell(153, 1).unwrap();
    assert_eq!(cell.repeats.len(), 2);
    assert_eq!(
        cell.total_tok_per_s_ci95.as_ref().unwrap().method,
        "2 repeats in the file"
    );
    // At another setting it is refused, naming what differs.
    again["input_config"]["output_tokens_mean"] = Value::from(999);
    std::fs::write(&again_file, again.to_string()).unwrap();
    let data = tmp.path().join("data");
    let _ = std::fs::remove_dir_all(&data);
    let err = format!(
        "{:#}",
        import(None, &[base_file, again_file], &opts).unwrap_err()
    );
    assert!(
        err.contains("a second result for 153 tokens of context at 1 requests at once")
            && err.contains("output_tokens_mean"),
        "{err}"
    );
    assert!(!data.exists());
    // Files of one model, of both layouts, make one run (the second is the
    // real nested file edited to another concurrency).
    let mut other = every_request_returned_text(TELEMETRY);
    other["input_config"]["perf_analyzer"]["stimulus"]["concurrency"] = Value::from(4);
    let file = tmp.path().join("c4.json");
    std::fs::write(&file, other.to_string()).unwrap();
    let (run, outcome) = import_with(&[real(FLAT), file], Some(META)).unwrap();
    assert_eq!(run.cells.len(), 2);
    assert!(run.decode_cell(153, 1).is_some() && run.decode_cell(153, 4).is_some());
    assert_eq!(run.meta.served_model, "openai/gpt-oss-20b");
    assert!(
        outcome.layout.contains("flat") && outcome.layout.contains("nested"),
        "{}",
        outcome.layout
    );
    let source = run.meta.source.as_deref().unwrap();
    assert!(
        source.starts_with("GenAI-Perf profile exports: "),
        "{source}"
    );
}

#[test]
fn detection_keeps_every_other_real_file_its_own_format() {
    let root = real("");
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() || entry.file_name() == "SOURCES.md" {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let found = Format::detect(&text).map(Format::name);
        let dir = rel.split('/').next().unwrap();
        match dir {
            "genai-perf" | "vllm-offline" => assert_eq!(found, Some(dir), "{rel}"),
            // The files with GPU telemetry, each of its tool.
            "gpu-summary" => {
                let tool = if rel.contains("genai_perf") {
                    "genai-perf"
                } else {
                    "aiperf"
                };
                assert_eq!(found, Some(tool), "{rel}");
            }
            _ => assert!(
                !matches!(found, Some("genai-perf" | "vllm-offline")),
                "{rel} is not {found:?}"
            ),
        }
        if dir == "aiperf" && !rel.ends_with(".jsonl") {
            assert_eq!(found, Some("aiperf"), "{rel}");
        }
    }
}

#[test]
fn a_vllm_offline_key_removed_is_named_and_the_file_still_refused() {
    for (rel, keys) in [
        (
            "vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1.json",
            &["avg_latency", "latencies", "percentiles"][..],
        ),
        (
            "vllm-offline/vllm-benchmarks-ascend-throughput_llama8B_tp1.json",
            &[
                "elapsed_time",
                "num_requests",
                "total_num_tokens",
                "requests_per_second",
                "tokens_per_second",
            ][..],
        ),
    ] {
        for key in keys {
            let mut v = read_json(&real(rel));
            v.as_object_mut().unwrap().remove(*key);
            let tmp = tempfile::tempdir().unwrap();
            let file = tmp.path().join("removed.json");
            std::fs::write(&file, v.to_string()).unwrap();
            let text = v.to_string();
            assert_eq!(
                Format::detect(&text).map(Format::name),
                None,
                "{rel} without {key}"
            );
            let err = format!(
                "{:#}",
                import(
                    Format::named("vllm-offline"),
                    std::slice::from_ref(&file),
                    &common::ingest::options(tmp.path(), Some("x"), Some(META), None, false)
                )
                .unwrap_err()
            );
            assert!(err.contains(&*file.display().to_string()), "{err}");
            assert!(err.contains(key), "{rel} without {key}: {err}");
            assert!(!tmp.path().join("data").exists());
        }
    }
    // A latency JSON that states a batch size (no vLLM version writes one:
    // the real file with a key added) is refused without saying it lacks it.
    let mut v = read_json(&real(
        "vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1.json",
    ));
    v["batch_size"] = Value::from(8);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("with-batch.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let err = format!(
        "{:#}",
        import(
            Format::named("vllm-offline"),
            &[file],
            &common::ingest::options(tmp.path(), Some("x"), Some(META), None, false)
        )
        .unwrap_err()
    );
    assert!(
        err.contains(
            "a latency JSON with batch_size, which vLLM's benchmark_latency.py does not write"
        ),
        "{err}"
    );
    assert!(!err.contains("not the batch size"), "{err}");
}
