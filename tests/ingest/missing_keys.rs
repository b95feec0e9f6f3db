//! No invented figure: from a real file of each format, each key that
//! bears a figure is removed in turn; the import must then refuse naming
//! the key, or import with a warning naming it. Never a silent default.

use crate::common;
use common::real;

use std::path::Path;

use serde_json::Value;
use sitegen::ingest::{Format, ImportOptions, Outcome, import};

const META: &str =
    r#"{"model": "M", "hardware": {"gpu": "H100", "gpu_count": 1}, "engine": {"name": "vllm"}}"#;

/// Removes the value at a dotted path ("results.0.aggregate_tps").
fn remove(value: &mut Value, path: &str) -> bool {
    let (parent, last) = match path.rsplit_once('.') {
        Some((p, l)) => (Some(p), l),
        None => (None, path),
    };
    let parent = match parent {
        None => Some(value),
        Some(p) => p
            .split('.')
            .try_fold(value, |v, k| match k.parse::<usize>() {
                Ok(i) if v.is_array() => v.get_mut(i),
                _ => v.get_mut(k),
            }),
    };
    parent
        .and_then(Value::as_object_mut)
        .is_some_and(|o| o.remove(last).is_some())
}

fn import_text(dir: &Path, name: &str, text: &str, format: Format) -> anyhow::Result<Outcome> {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let meta = dir.join("meta.json");
    std::fs::write(&meta, META).unwrap();
    let opts = ImportOptions {
        id: Some("x".into()),
        data: dir.join("data"),
        force: true,
        meta: Some(meta),
        cards: Value::Null,
        context_tokens: None,
        gpu_index: None,
        dry_run: true,
    };
    Ok(import(Some(format), &[file], &opts)?.remove(0))
}

/// For each key: the import refuses naming it, or warns naming it.
fn each_key_is_named(rel: &str, format: &str, json_lines: bool, keys: &[&str]) {
    let format = Format::named(format).unwrap();
    let text = std::fs::read_to_string(real(rel)).unwrap();
    let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The file as it is imports.
    import_text(tmp.path(), name, &text, format).unwrap_or_else(|e| panic!("{rel}: {e:#}"));
    let mut silent = Vec::new();
    for key in keys {
        let edited = if json_lines {
            let mut out = String::new();
            let mut removed = false;
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                // Python's json writes Infinity, which serde_json does not read.
                let mut v = sitegen::ingest::json::parse_python_json(Path::new(rel), line).unwrap();
                removed |= remove(&mut v, key);
                out.push_str(&v.to_string());
                out.push('\n');
            }
            assert!(removed, "{rel}: no key {key}");
            out
        } else {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            assert!(remove(&mut v, key), "{rel}: no key {key}");
            serde_json::to_string_pretty(&v).unwrap()
        };
        let leaf = key.rsplit('.').next().unwrap();
        match import_text(tmp.path(), name, &edited, format) {
            Err(e) => {
                let e = format!("{e:#}");
                if !e.contains(leaf) {
                    silent.push(format!("{key}: refused without naming it: {e}"));
                }
            }
            Ok(o) => {
                if !o.warnings.iter().any(|w| w.contains(leaf)) {
                    silent.push(format!("{key}: imported, no warning names it"));
                }
            }
        }
    }
    assert!(silent.is_empty(), "{rel}:\n{}", silent.join("\n"));
}

#[test]
fn vllm_bench_names_every_missing_figure() {
    each_key_is_named(
        "vllm-bench/er0080-bench_serve_v0.25.1.json",
        "vllm-bench",
        false,
        &[
            "completed",
            "duration",
            "total_input_tokens",
            "total_output_tokens",
            // Without max_concurrency an infinite rate sent the burst all at
            // once, which the file says (a_burst_sent_all_at_once_...).
            "median_ttft_ms",
            "median_tpot_ms",
            "median_itl_ms",
        ],
    );
}

#[test]
fn sglang_bench_names_every_missing_figure() {
    each_key_is_named(
        "sglang-bench/tonyli-agg_n100_in512_out128_c32.jsonl",
        "sglang-bench",
        true,
        &[
            "completed",
            "duration",
            "total_input_tokens",
            "total_output_tokens",
            // Without max_concurrency an infinite rate sent the burst all at
            // once, which the file says (a_burst_sent_all_at_once_...).
            "median_ttft_ms",
            "median_tpot_ms",
            "median_itl_ms",
            "mean_e2e_latency_ms",
        ],
    );
}

#[test]
fn aiperf_names_every_missing_figure() {
    each_key_is_named(
        "gpu-summary/aiperf-fork-plot-fixture-qwen-c1-profile_export_aiperf.json",
        "aiperf",
        false,
        &[
            "benchmark_duration",
            "request_count",
            "total_osl",
            "input_sequence_length",
            "time_to_first_token",
            "inter_token_latency",
            "output_token_throughput_per_user",
            "input_config.loadgen.concurrency",
        ],
    );
}

#[test]
fn llm_decode_bench_names_every_missing_figure() {
    each_key_is_named(
        "llm-decode-bench/rtx6kpro-karmic-qwen-final-registry-eos-c8-1.json",
        "llm-decode-bench",
        false,
        &[
            "results.0.aggregate_tps",
            "results.0.context_tokens",
            "results.0.concurrency",
            "results.0.ttft_p50",
            "results.0.inter_token_latency_p50",
            "results.0.per_request_avg_tps",
            "results.0.measurement_seconds",
        ],
    );
}

#[test]
fn an_aiperf_file_without_an_input_length_takes_it_from_context_or_is_refused() {
    let rel = "gpu-summary/aiperf-fork-plot-fixture-qwen-c1-profile_export_aiperf.json";
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(real(rel)).unwrap()).unwrap();
    assert!(remove(&mut v, "input_sequence_length"));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("profile_export_aiperf.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let meta = tmp.path().join("meta.json");
    std::fs::write(&meta, META).unwrap();
    let opts = |context_tokens| ImportOptions {
        id: Some("x".into()),
        data: tmp.path().join("data"),
        force: true,
        meta: Some(meta.clone()),
        cards: Value::Null,
        context_tokens,
        gpu_index: None,
        dry_run: true,
    };
    let err = format!(
        "{:#}",
        import(None, std::slice::from_ref(&file), &opts(None)).unwrap_err()
    );
    assert!(
        err.contains("the file states no input length") && err.contains("--context"),
        "{err}"
    );
    let o = import(None, &[file], &opts(Some(8192))).unwrap().remove(0);
    let sitegen::model::Cell::Decode(c) = &o.cells[0] else {
        panic!("a decode cell")
    };
    assert_eq!(c.context_tokens, 8192);
    assert_eq!(
        c.measured_by.as_ref().unwrap().definitions["context_tokens"],
        "given with --context: the file states no input length"
    );
}

#[test]
fn guidellm_names_every_missing_figure() {
    each_key_is_named(
        "guidellm/danielkorat-qwen3-4b-tp4-benchmarks.json",
        "guidellm",
        false,
        &[
            "benchmarks.0.metrics.prompt_token_count",
            "benchmarks.0.metrics.output_tokens_per_second",
            "benchmarks.0.metrics.time_to_first_token_ms",
            "benchmarks.0.metrics.inter_token_latency_ms",
            "benchmarks.0.metrics.request_concurrency",
            "benchmarks.0.metrics.request_totals",
            "benchmarks.0.config",
            "benchmarks.0.start_time",
        ],
    );
}
