//! Importing other benchmark tools' result files. The fixtures of record are
//! real files (tests/fixtures/real/, each listed with its provenance in
//! SOURCES.md): every one imports, or is refused with a reason true of it,
//! and every figure it maps equals the file's own number, computed here from
//! the file. Hand-written fixtures (tests/fixtures/hand-written/) cover the
//! cases no real file shows.

use crate::common;

use std::path::{Path, PathBuf};

use common::figures::assert_figure;
use common::ingest::{
    COUNT, ENGINE, Expect, GPU, META, MODEL, RealFile, every_file_imports_or_is_refused, meta_for,
};
use common::real;
use serde_json::Value;
use sitegen::ingest::{Format, ImportOptions, Outcome, import};
use sitegen::model::{DecodeCell, DecodeTest, PrefillMode, Run, Status};

fn hand(name: &str) -> PathBuf {
    common::repo()
        .join("tests/fixtures/hand-written")
        .join(name)
}

struct Imported {
    _tmp: tempfile::TempDir,
    run: Run,
    outcome: Outcome,
}

fn import_with(files: &[PathBuf], id: &str, meta: Option<&str>) -> anyhow::Result<Imported> {
    let tmp = tempfile::tempdir().unwrap();
    let opts = common::ingest::options(tmp.path(), Some(id), meta, None, false);
    let mut written = import(None, files, &opts)?;
    assert_eq!(written.len(), 1);
    let outcome = written.remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    Ok(Imported {
        _tmp: tmp,
        run,
        outcome,
    })
}

/// Imports one file with --meta giving exactly the cards it lacks.
fn import_one(file: PathBuf, missing: &[&str]) -> Imported {
    import_with(&[file], "x", meta_for(missing).as_deref()).unwrap()
}

fn decode(run: &Run, ctx: u64, n: u32) -> &DecodeCell {
    run.decode_cell(ctx, n)
        .unwrap_or_else(|| panic!("{}: no decode cell {ctx} x{n}", run.id))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "yaml") {
        yaml_serde::from_str(&text).unwrap()
    } else {
        sitegen::ingest::json::parse_python_json(path, &text).unwrap()
    }
}

/// Why inference-perf's summary report is refused.
const IP_SUMMARY: &str = "inference-perf's summary_lifecycle_metrics.json, not one stage: it pools every stage of its run";
/// Why a LoadGen Server summary is refused without --context (it imports
/// with it: inference_perf_mlperf.rs).
const MLPERF_NO_CONTEXT: &str = "the summary states no prompt length (MLPerf's LLM datasets have prompts of many lengths, and mlperf_log_summary.txt records neither their mean nor the tokens sent), so the point's context is unknown: give it with --context";
/// Why a LoadGen Offline summary is refused.
const MLPERF_OFFLINE: &str = "Scenario : Offline: LoadGen sent every sample at once";

/// Every file of tests/fixtures/real/, its format and what it gives.
#[rustfmt::skip]
const CORPUS: &[(&str, &str, Expect)] = {
    use Expect::*;
    &[
        ("llm-decode-bench/rtx6kpro-results_awq.json", "llm-decode-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("llm-decode-bench/rtx6kpro-vllm_awq_mtp.json", "llm-decode-bench", Imports(&[GPU, COUNT])),
        ("llm-decode-bench/blackwell-llm-docker-benchmark_results.json", "llm-decode-bench", Imports(&[GPU, COUNT])),
        ("llm-decode-bench/emulated-llm-decode-bench-0.3.0.json", "llm-decode-bench", Imports(&[GPU, COUNT])),
        ("llm-decode-bench/emulated-llm-decode-bench-0.4.18.json", "llm-decode-bench", Imports(&[GPU, COUNT])),
        ("llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/blackwell-llm-docker-r34-mtp0-decode.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/blackwell-llm-docker-r34-mtp0-prefill-only.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/blackwell-llm-docker-r17-glm-exl3-tp4-cc1.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/sjug-rtx6kpro-laguna-s21-fp8-k5.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/rtx6kpro-karmic-qwen-final-registry-eos-c8-1.json", "llm-decode-bench", Imports(&[])),
        ("llm-decode-bench/rtx6kpro-glm51-vllm-pciebarrier-mtp-completion-stats.json", "llm-decode-bench", Refused("llm_decode_bench.py 0.4.10 in mode completion_stats")),
        ("guidellm/guidellm-repo-benchmarks_stripped.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/guidellm-repo-benchmarks_stripped.yaml", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/emulated-guidellm-0.3.1-benchmarks.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/danielkorat-qwen3-4b-tp4-benchmarks.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/emulated-guidellm-0.5.4-benchmarks.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/emulated-guidellm-0.7.3-benchmarks.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/emulated-guidellm-0.8.1-benchmarks.json", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("guidellm/emulated-guidellm-0.8.1-benchmarks.yaml", "guidellm", Imports(&[GPU, COUNT, ENGINE])),
        ("vllm-bench/er0080-bench_serve_v0.25.1.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/er0080-bench_serve_all_requests_failed_v0.25.1.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/er0080-sweep-max_num_seqs=4-run=0.json", "vllm-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("vllm-bench/er0080-sweep-max_num_seqs=4-run=1.json", "vllm-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("vllm-bench/er0080-sweep-max_num_seqs=4-summary.json", "vllm-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("vllm-bench/vllm-benchmark-muma-append-result-repeats.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/vllm-benchmarks-ascend-serving_llama8B_tp1_qps_1.json", "vllm-bench", Refused("request_rate 1: a paced run whose file records no duration and no completed count, only latencies")),
        ("vllm-bench/vllm-benchmarks-ascend-serving_llama8B_tp1_sharegpt_qps_1-20250217.json", "vllm-bench", Refused("request_rate 1: a paced run whose file records no duration and no completed count, only latencies")),
        ("vllm-bench/emulated-vllm-0.33.0-c1.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/emulated-vllm-0.33.0-c4.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/emulated-vllm-0.33.0-unlimited-16.json", "vllm-bench", Imports(&[GPU, COUNT])),
        ("vllm-bench/emulated-vllm-bench-rs-multi-turn-c4.json", "vllm-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("sglang-bench/datacrunch-llama_3_3_70b_online_output.jsonl", "sglang-bench", Imports(&[MODEL, GPU, COUNT])),
        ("sglang-bench/datacrunch-llama_405b_online_output.jsonl", "sglang-bench", Imports(&[MODEL, GPU, COUNT])),
        ("sglang-bench/datacrunch-llama_3_3_70b_offline_output.jsonl", "sglang-bench", Imports(&[MODEL, GPU, COUNT])),
        ("sglang-bench/benchmaq-qwen35-27b-h100-tp4-dp2-c100.jsonl", "sglang-bench", Imports(&[GPU])),
        ("sglang-bench/tonyli-agg_n100_in512_out128_c32.jsonl", "sglang-bench", Imports(&[GPU])),
        ("sglang-bench/tonyli-pd_1p2d_n100_in2048_out512_c128.jsonl", "sglang-bench", Imports(&[GPU, COUNT])),
        ("sglang-bench/datacrunch-deepseek_dp_mla_output.jsonl", "sglang-bench", Imports(&[MODEL, GPU, COUNT])),
        ("sglang-bench/emulated-sglang-0.5.23.jsonl", "sglang-bench", Imports(&[MODEL, GPU, COUNT])),
        ("aiperf/aiperf-repo-example-run1-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/aiperf-repo-example-run1-profile_export_aiperf.csv", "aiperf", Refused("AIPerf's CSV export records neither the concurrency nor the model")),
        ("aiperf-records/aiperf-repo-example-run1-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf-records/aiperf-repo-example-run1-profile_export.jsonl", "aiperf-records", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf-records/nvda-ci-aiperf-plot-fixture-qwen-c1-profile_export.jsonl", "aiperf-records", Refused("carry no min_request_timestamp and max_response_timestamp metrics, from which AIPerf computes benchmark_duration")),
        ("genai-bench/baseten-training-experiment_metadata.json", "genai-bench", Refused("genai-bench's experiment_metadata.json (the experiment's model, GPUs, traffic scenarios and latency unit), not a run file")),
        ("genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json", "genai-bench", Imports(&[ENGINE])),
        ("genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_16_time_15s.json", "genai-bench", Imports(&[ENGINE])),
        ("genai-bench/baseten-training-N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json", "genai-bench", Imports(&[ENGINE])),
        ("genai-bench/sglgb-parallel-experiment_metadata.json", "genai-bench", Refused("genai-bench's experiment_metadata.json (the experiment's model, GPUs, traffic scenarios and latency unit), not a run file")),
        ("genai-bench/sglgb-parallel-D100_100_text-to-text_zai-org_GLM-4.6_num_concurrency_1_time_300s.json", "genai-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf-bench/philschmid-meta-llama_Meta-Llama-3-8B-Instruct_tp_1_summary.json", "llmperf-bench", Refused("llmperf-bench's keyed summary: at each concurrency it holds means only")),
        ("llmperf-bench/philschmid-meta-llama_Meta-Llama-3-8B-Instruct_tp_1_results.json", "llmperf-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf-bench/philschmid-mistralai_Mistral-7B-Instruct-v0.2_tp_1_summary.json", "llmperf-bench", Refused("llmperf-bench's keyed summary: at each concurrency it holds means only")),
        ("llmperf-bench/philschmid-mistralai_Mistral-7B-Instruct-v0.2_tp_1_results.json", "llmperf-bench", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/emulated-aiperf-0.13.0-c1-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/emulated-aiperf-0.13.0-c16-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.csv", "aiperf", Refused("AIPerf's CSV export records neither the concurrency nor the model")),
        // Multi-turn replays were once read as a decode cell at their mean prompt.
        ("aiperf/qwen36-aiperf-0.10.0-agent-multiturn-file-c2-profile_export_aiperf.json", "aiperf", Refused("input_config.datasets.0.format is \"multi_turn\": a replay of multi-turn sessions")),
        ("aiperf/anyscale-aiperf-0.8.0-agentic-mooncake-trace-c64-profile_export_aiperf.json", "aiperf", Refused("input_config.input.custom_dataset_type is \"mooncake_trace\": a replay of multi-turn sessions")),
        ("aiperf/qwen36-aiperf-0.10.0-agent-multiturn-file-c2-profile_export_aiperf.csv", "aiperf", Refused("AIPerf's CSV export records neither the concurrency nor the model")),
        ("gpu-summary/wellflat-gpt-oss-20b-c1-gpu-telemetry-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("gpu-summary/aiperf-fork-plot-fixture-qwen-c1-profile_export_aiperf.json", "aiperf", Imports(&[GPU, COUNT, ENGINE])),
        ("aiperf/aiperf-fork-plot-fixture-qwen-c1-gpu_telemetry_export.jsonl", "aiperf", Refused("AIPerf's GPU telemetry export (DCGM samples")),
        ("llama-bench/llm-performance-snowpiercer-15b-q3kl.json", "llama-bench", Imports(&[COUNT])),
        ("llama-bench/javelit-rocm72-step35-flash-depth-sweep.json", "llama-bench", Imports(&[COUNT])),
        ("llama-bench/javelit-rocm72-step35-flash-stderr-prefixed.json", "llama-bench", Imports(&[COUNT])),
        ("llama-bench/strix-halo-testing-llama32-1b-hip-depth.jsonl", "llama-bench", Imports(&[COUNT])),
        ("llama-bench/strix-halo-toolboxes-qwen36-35b-rocm724-tg-depth-curve.jsonl", "llama-bench", Imports(&[COUNT])),
        ("llama-bench/strix-halo-toolboxes-deepseek-v4-rocm714-pp2048-ubatch-sweep.jsonl", "llama-bench", Refused("the tests ran at different settings (n_ubatch: 256, 512, 1024, 2048)")),
        ("llama-bench/strix-halo-testing-shisa-8b-tg1-to-tg8192-raw-runs.jsonl", "llama-bench", Refused("the tests ran at different settings (backends: \"ROCm\", \"Vulkan\"")),
        ("llmperf/leaderboard-groq_70b-summary.json", "llmperf", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/leaderboard-bedrock_70b-summary.json", "llmperf", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/leaderboard-anyscale_13b-summary.json", "llmperf", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/llmperf-test-gpt-4-1-nano_5500_350-c1_summary.json", "llmperf", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/llmperf-test-gpt-4-1-nano_550_150-c50_summary.json", "llmperf", Refused("num_concurrent_requests is 50, but the test recorded only 10 requests")),
        ("llmperf/llmperf-test-gpt-4-1-nano_550_150-c50_individual_responses.json", "llmperf", Refused("import the summary written beside it: llmperf-test-gpt-4-1-nano_550_150-c50_summary.json")),
        ("genai-perf/wellflat-gpt-oss-20b-c1-flat-config-profile_export_genai_perf.json", "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        ("gpu-summary/wellflat-gpt-oss-20b-c1-telemetry-profile_export_genai_perf.json", "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        ("genai-perf/adaptive-auto-c50-non-streaming-genai_perf.json", "genai-perf", Imports(&[GPU, COUNT, ENGINE])),
        ("genai-perf/adaptive-auto-c50-non-streaming-genai_perf.csv", "genai-perf", Refused("GenAI-Perf's CSV export records neither the concurrency nor the model")),
        ("vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1.json", "vllm-offline", Refused("not the batch size, input or output length; sitegen does not assume vLLM's defaults (batch 8, input 32, output 128)")),
        ("vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1-20250217.json", "vllm-offline", Refused("not the batch size, input or output length; sitegen does not assume vLLM's defaults (batch 8, input 32, output 128)")),
        ("vllm-offline/vllm-benchmarks-ascend-throughput_llama8B_tp1.json", "vllm-offline", Refused("an offline throughput run of 200 prompts: every prompt submitted at once to the engine's own scheduler, no concurrency level and no window; sitegen has no cell for it")),
        ("vllm-offline/vllm-benchmarks-ascend-throughput_llama8B_tp1-20250218.json", "vllm-offline", Refused("an offline throughput run of 200 prompts: every prompt submitted at once to the engine's own scheduler, no concurrency level and no window; sitegen has no cell for it")),
        ("inference-perf/kubecon25-vllm-stage_0_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_1_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_2_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_3_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_4_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_5_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-stage_6_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/kubecon25-vllm-summary_lifecycle_metrics.json", "inference-perf", Refused(IP_SUMMARY)),
        ("inference-perf/wva-staircase-20260803-stage_0_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/wva-staircase-20260803-stage_1_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/wva-staircase-20260803-stage_2_lifecycle_metrics.json", "inference-perf", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("inference-perf/wva-staircase-20260803-summary_lifecycle_metrics.json", "inference-perf", Refused(IP_SUMMARY)),
        ("mlperf/ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-server-mlperf_log_summary.txt", "mlperf", Refused(MLPERF_NO_CONTEXT)),
        ("mlperf/ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-interactive-mlperf_log_summary.txt", "mlperf", Refused(MLPERF_NO_CONTEXT)),
        ("mlperf/ntuhpc-v5.1-lenovo-b200x8-llama2-70b-99.9-server-ranging-invalid-mlperf_log_summary.txt", "mlperf", Refused(MLPERF_NO_CONTEXT)),
        ("mlperf/ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-offline-mlperf_log_summary.txt", "mlperf", Refused(MLPERF_OFFLINE)),
        ("mlperf/mlctest-v5.0-reference-cpu-mixtral-8x7b-offline-mlperf_log_summary.txt", "mlperf", Refused(MLPERF_OFFLINE)),
        ("llm-d-report/nxtgen-nvidia-granite-llmd-stage_0.yaml", "llm-d-report", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("llm-d-report/nxtgen-nvidia-granite-llmd-stage_6.yaml", "llm-d-report", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("llm-d-report/nxtgen-gaudi-granite-llmd-stage_3.yaml", "llm-d-report", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("llm-d-report/nxtgen-amd-sarvam-4p4d-pd-stage_8.yaml", "llm-d-report", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("llm-d-report/nxtgen-sarvam-pd-balanced-81ea3a5-stage_7.yaml", "llm-d-report", Imports(&[MODEL, GPU, COUNT, ENGINE])),
        ("llm-d-report/nxtgen-nvidia-granite-llmd-stage_6-v0.1.yaml", "llm-d-report", Refused("version 0.1: sitegen reads Benchmark Reports v0.2 and v0.2.1; import the benchmark_report_v0.2 file written beside it")),
    ]
};

/// Folders of real files that no importer reads: llm-d's report schemas,
/// which the reports are validated against.
const AWAITING_IMPORTER: [&str; 1] = ["llm-d-report/schema"];

#[test]
fn every_real_file_is_in_the_corpus_and_in_sources() {
    let root = common::repo().join("tests/fixtures/real");
    let sources = std::fs::read_to_string(root.join("SOURCES.md")).unwrap();
    let mut on_disk = Vec::new();
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() && entry.file_name() != "SOURCES.md" {
            let rel = entry.path().strip_prefix(&root).unwrap();
            on_disk.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    on_disk.sort();
    // Real files found for importers not yet written (issue 38): listed in
    // SOURCES.md's own section, not in CORPUS until an importer reads them.
    let (awaiting, on_disk): (Vec<String>, Vec<String>) = on_disk.into_iter().partition(|f| {
        AWAITING_IMPORTER
            .iter()
            .any(|d| f.starts_with(&format!("{d}/")))
    });
    let section = sources
        .split("## Found for issue 38 (no importer yet)")
        .nth(1)
        .expect("SOURCES.md has the section of files awaiting an importer");
    for file in &awaiting {
        assert!(
            section.contains(&format!("`{file}`")),
            "SOURCES.md's awaiting section lists {file}"
        );
    }
    assert!(!awaiting.is_empty());
    let mut listed: Vec<String> = CORPUS.iter().map(|(f, _, _)| (*f).to_string()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "every real file has a row in CORPUS, and no other"
    );
    for file in &on_disk {
        assert!(
            sources.contains(&format!("`{file}`")),
            "SOURCES.md lists {file}"
        );
    }
    // At least three real files per format, from at least two repositories.
    for format in Format::names() {
        let files: Vec<&str> = CORPUS
            .iter()
            .filter(|(_, f, _)| *f == format)
            .map(|(n, _, _)| *n)
            .collect();
        if ["page", "csv"].contains(&format) {
            continue; // sitegen's own
        }
        // Every benchmark_latency / benchmark_throughput file found is from
        // one lineage (vllm-ascend's CI in nv-action/vllm-benchmarks and its
        // fork): three real files, one origin.
        // llmperf-bench's keyed files are in one public repository only
        // (philschmid/llmperf-bench); of AIPerf's per-request records, two
        // runs were taken: one with the summary that proves it, one of the
        // later layout.
        // Benchmark Reports were found committed in one public repository
        // only (praveingk/llmd-benchmarking-nxtgen: 642 of them, v0.1 and
        // v0.2, from inference-perf; SOURCES.md).
        let (least, repositories) = match format {
            "vllm-offline" | "llmperf-bench" | "llm-d-report" => (3, 1),
            "aiperf-records" => (2, 2),
            _ => (3, 2),
        };
        assert!(files.len() >= least, "{format}: {files:?}");
        let origins: std::collections::BTreeSet<&str> = files
            .iter()
            .map(|f| f.split('/').nth(1).unwrap().split('-').next().unwrap())
            .collect();
        assert!(origins.len() >= repositories, "{format}: {origins:?}");
    }
}

#[test]
fn every_real_file_imports_with_its_figures_or_is_refused_for_a_true_reason() {
    let imported = |file: &RealFile, run: &Run, _: &Outcome| {
        let (rel, text) = (file.rel, &file.text);
        let value = || read_json(&file.path);
        match file.format {
            "llm-decode-bench" => check_llm_decode_bench(rel, &value(), run),
            "guidellm" => check_guidellm(rel, &value(), run),
            "vllm-bench" => {
                // One JSON value, or JSON lines (`--append-result`).
                let records = match serde_json::from_str::<Value>(text) {
                    Ok(v) => bursts_of(&v),
                    Err(_) => text
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| serde_json::from_str(l).unwrap())
                        .collect(),
                };
                check_bursts(rel, &records, run)
            }
            "sglang-bench" => {
                let lines: Vec<Value> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| sitegen::ingest::json::parse_python_json(&file.path, l).unwrap())
                    .collect();
                check_bursts(rel, &lines, run)
            }
            "aiperf" => check_aiperf(rel, &value(), run),
            "inference-perf" => {
                super::inference_perf_mlperf::check_inference_perf_stage(rel, &value(), run)
            }
            "llm-d-report" => super::llm_d_report::check_llm_d_report(
                rel,
                &common::llm_d_report::read(&file.path),
                run,
            ),
            // Figure by figure in genai_perf_vllm_offline.rs and
            // llama_bench_llmperf.rs beside this file.
            "genai-perf" | "llama-bench" | "llmperf" => {}
            // Figure by figure in closed_loop_round3.rs.
            "genai-bench" | "llmperf-bench" | "aiperf-records" => {}
            other => panic!("{rel}: no figure check for {other}"),
        }
    };
    every_file_imports_or_is_refused(CORPUS, |_, _| {}, imported);
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| match k.parse::<usize>() {
            Ok(i) if v.is_array() => v.get(i),
            _ => v.get(k),
        })
        .and_then(Value::as_f64)
}

/// Power and energy per output token from the tool's hardware monitor, and
/// the server's counters, as the result states them.
fn check_llm_decode_bench_telemetry(what: &str, r: &Value, c: &DecodeCell) {
    let telemetry = c.telemetry.as_deref();
    let hw = r["hardware_summary"].as_object().filter(|h| !h.is_empty());
    match hw {
        None => assert!(
            telemetry.and_then(|t| t.gpus.as_ref()).is_none(),
            "{what} no GPUs"
        ),
        Some(_) => {
            let gpus = telemetry
                .and_then(|t| t.gpus.as_ref())
                .expect("GPU telemetry");
            let power = num(r, "hardware_summary.power_total_avg_w");
            assert_figure(&format!("{what} power"), gpus.power_w_mean, power);
            assert_figure(
                &format!("{what} J/token"),
                gpus.joules_per_output_token,
                power.map(|w| w / num(r, "aggregate_tps").unwrap()),
            );
            assert_figure(
                &format!("{what} power limit"),
                gpus.power_limit_w,
                num(r, "hardware_summary.power_limit_total_w"),
            );
            assert_eq!(
                Some(u64::from(gpus.gpus)),
                num(r, "hardware_summary.gpu_count").map(|n| n as u64)
            );
        }
    }
    if r.get("avg_running_reqs").is_some() {
        let server = telemetry
            .and_then(|t| t.server.as_ref())
            .expect("server counters");
        assert_figure(
            &format!("{what} running"),
            server.running_mean,
            num(r, "avg_running_reqs"),
        );
        assert_figure(
            &format!("{what} waiting peak"),
            server.waiting_max,
            num(r, "max_queue_reqs"),
        );
        // Speculative figures only where the server drafted: never a 0 that means "none".
        let drafts = num(r, "server_spec_drafts");
        let rate = num(r, "server_spec_accept_rate");
        let want = match drafts {
            Some(d) if d > 0.0 => rate,
            Some(_) => None,
            None => rate.filter(|r| *r > 0.0),
        };
        assert_figure(
            &format!("{what} acceptance"),
            server.spec_acceptance_rate,
            want,
        );
    }
}

/// llm_decode_bench.py: each result's figures, prefill by context, cards.
fn check_llm_decode_bench(rel: &str, v: &Value, run: &Run) {
    for r in v["results"].as_array().unwrap() {
        let tps = num(r, "aggregate_tps").unwrap();
        if tps < 0.0 {
            continue; // a sentinel: the hand-written fixture covers those
        }
        let c = decode(
            run,
            num(r, "context_tokens").unwrap() as u64,
            num(r, "concurrency").unwrap() as u32,
        );
        let failed = num(r, "num_errors").unwrap_or(0.0);
        if failed > 0.0 || (tps == 0.0 && num(r, "total_tokens").unwrap_or(0.0) > 0.0) {
            assert_eq!(
                c.status,
                Status::Error,
                "{rel}: {} × {}",
                c.context_tokens,
                c.concurrency
            );
            continue;
        }
        let what = |f: &str| format!("{rel}: {} × {}: {f}", c.context_tokens, c.concurrency);
        assert_figure(&what("total tok/s"), c.total_tok_per_s, Some(tps));
        check_llm_decode_bench_telemetry(&what(""), r, c);
        assert_figure(
            &what("TTFT"),
            c.ttft_median_ms,
            num(r, "ttft_p50").map(|s| s * 1000.0),
        );
        assert_figure(
            &what("TBT"),
            c.tbt_median_ms,
            num(r, "inter_token_latency_p50").map(|s| s * 1000.0),
        );
        assert_eq!(
            c.output_tokens,
            num(r, "client_output_tokens").map(|t| t as u64),
            "{}",
            what("output tokens")
        );
        assert_eq!(
            c.completed_requests,
            num(r, "completed_request_count").map(|t| t as u64),
            "{}",
            what("completed")
        );
    }
    if let Some(prefill) = v["prefill"].as_object() {
        for (ctx, p) in prefill {
            let cell = run
                .prefill_cells()
                .find(|c| c.context_tokens.to_string() == *ctx)
                .unwrap_or_else(|| panic!("{rel}: prefill {ctx}"));
            assert_figure(
                &format!("{rel}: prefill {ctx}"),
                cell.prompt_tok_per_s,
                num(p, "tok_per_sec"),
            );
            assert_figure(
                &format!("{rel}: prefill {ctx} TTFT"),
                cell.ttft_ms,
                num(p, "ttft_seconds").map(|s| s * 1000.0),
            );
        }
    }
    // Cards: the GPU from nvidia-smi's CSV query, the engine from the event log.
    let m = &run.meta;
    if let Some(out) = v
        .pointer("/startup_diagnostics/nvidia_smi_query/stdout")
        .and_then(Value::as_str)
    {
        let gpus: Vec<&str> = out.lines().filter_map(|l| l.split(", ").nth(1)).collect();
        if let Some(first) = gpus.first() {
            assert_eq!(m.hardware.gpu, first.trim_start_matches("NVIDIA "), "{rel}");
            let count =
                num(v, "hardware_run_summary.gpu_count").map_or(gpus.len() as u32, |c| c as u32);
            assert_eq!(m.hardware.gpu_count, count, "{rel}");
        }
    }
    let logged = v["event_log"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|e| e.split("startup engine ").nth(1));
    if let Some(line) = logged {
        let version = line
            .split_whitespace()
            .nth(1)
            .filter(|w| !w.starts_with("models="));
        assert_eq!(m.engine.version.as_deref(), version, "{rel}");
    }
    assert_eq!(
        m.model,
        v["metadata"]["model"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
    );
}

/// The strategy's concurrency of a guidellm benchmark.
fn guidellm_streams(b: &Value) -> u32 {
    let s = ["config", "args"]
        .iter()
        .find_map(|k| b[k].get("strategy"))
        .unwrap();
    match s["type_"].as_str().unwrap() {
        "synchronous" => 1,
        "concurrent" => s["streams"].as_u64().unwrap() as u32,
        other => panic!("{other}"),
    }
}

/// guidellm: each benchmark at its concurrency; total tok/s is the tokens
/// delivered in the window, from every request's record when the file keeps
/// all of them, else guidellm's rate over all requests.
fn check_guidellm(rel: &str, v: &Value, run: &Run) {
    for b in v["benchmarks"].as_array().unwrap() {
        let m = &b["metrics"];
        let ctx = num(m, "prompt_token_count.successful.mean")
            .unwrap()
            .round() as u64;
        let c = decode(run, ctx, guidellm_streams(b));
        let what = |f: &str| format!("{rel}: {} × {}: {f}", c.context_tokens, c.concurrency);
        assert_figure(
            &what("TTFT"),
            c.ttft_median_ms,
            num(m, "time_to_first_token_ms.successful.median"),
        );
        assert_figure(
            &what("TBT"),
            c.tbt_median_ms,
            num(m, "inter_token_latency_ms.successful.median"),
        );
        // The tool's own p10/p50/p90 across requests are kept as the cell's spread.
        let p90 = num(m, "time_to_first_token_ms.successful.percentiles.p90");
        if c.status == Status::Valid && p90.is_none() {
            // A version without percentiles: the spread is unknown, not made up.
            assert_eq!(
                c.spread.as_deref().and_then(|s| s.ttft_ms),
                None,
                "{}",
                what("spread")
            );
        } else if c.status == Status::Valid {
            let spread = c
                .spread
                .as_deref()
                .unwrap_or_else(|| panic!("{}: guidellm reports percentiles", what("spread")));
            let ttft = spread.ttft_ms.unwrap();
            assert_figure(
                &what("TTFT p90"),
                Some(ttft.p90),
                num(m, "time_to_first_token_ms.successful.percentiles.p90"),
            );
            let rate = spread.per_request_tok_per_s.unwrap();
            assert!(
                rate.p10 <= rate.p50 && rate.p50 <= rate.p90,
                "{}",
                what("rate spread")
            );
        }
        let (start, end) = (num(b, "start_time").unwrap(), num(b, "end_time").unwrap());
        let totals = m
            .get("request_totals")
            .or(b.get("request_totals"))
            .or(b.pointer("/run_stats/requests_made"))
            .unwrap();
        let counted = ["successful", "errored", "incomplete"]
            .iter()
            .map(|k| num(totals, k).unwrap_or(0.0))
            .sum::<f64>();
        let records: Vec<&Value> = ["successful", "incomplete", "errored"]
            .iter()
            .filter_map(|g| {
                b.get("requests")
                    .and_then(|r| r.get(g))
                    .and_then(Value::as_array)
            })
            .flatten()
            .collect();
        let new_layout = b.pointer("/config/strategy").is_some();
        let want = if !new_layout && !records.is_empty() && records.len() as f64 == counted {
            let mut tokens = 0.0;
            for r in records {
                let first =
                    num(r, "first_token_time").or(num(r, "info.timings.first_token_iteration"));
                let Some(first) = first else { continue };
                let last = num(r, "last_token_time")
                    .or(num(r, "info.timings.last_token_iteration"))
                    .unwrap_or(first);
                let k = num(r, "output_tokens").unwrap();
                let first_in = if first >= start && first <= end {
                    1.0
                } else {
                    0.0
                };
                tokens += if k <= 1.0 || last <= first {
                    k * first_in
                } else {
                    first_in
                        + (k - 1.0) * (last.min(end) - first.max(start)).max(0.0) / (last - first)
                };
            }
            tokens / (end - start)
        } else {
            num(m, "output_tokens_per_second.total.mean").unwrap()
        };
        assert_figure(&what("total tok/s"), c.total_tok_per_s, Some(want));
    }
}

/// The burst records of a vllm bench file: one object, or a sweep's list.
fn bursts_of(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        v => vec![v.clone()],
    }
}

/// vllm bench serve and SGLang's bench_serving: one cell per setting; a
/// setting measured again is one cell with a repeat per record, its total
/// the median of theirs, its other figures the median record's.
/// Whether a burst tool's result paced its requests: a finite
/// `request_rate` outside multi-turn mode.
fn is_paced(r: &Value) -> bool {
    r["mode"] != "multi_turn" && r["request_rate"].as_f64().is_some_and(f64::is_finite)
}

/// A paced result is a paced point with the file's figures, never a cell.
fn check_paced(rel: &str, r: &Value, run: &Run) {
    let completed = num(r, "completed").unwrap();
    let duration = num(r, "duration").unwrap();
    let ctx = (num(r, "total_input_tokens").unwrap() / completed).round() as u64;
    let rate = num(r, "request_rate").unwrap();
    let cap = num(r, "max_concurrency").map(|n| n as u32);
    let p = run
        .paced
        .iter()
        .find(|p| {
            p.context_tokens == ctx
                && p.load.requested_per_s == rate
                && p.load.max_concurrency == cap
        })
        .unwrap_or_else(|| panic!("{rel}: a paced point at {ctx} tokens, {rate}/s, cap {cap:?}"));
    let what = |f: &str| format!("{rel}: {ctx} tokens at {rate}/s: {f}");
    assert_eq!(
        p.completed_requests,
        Some(completed as u64),
        "{}",
        what("completed")
    );
    assert_figure(
        &what("total tok/s"),
        p.total_tok_per_s,
        Some(num(r, "total_output_tokens").unwrap() / duration),
    );
    assert_figure(
        &what("achieved rate"),
        p.achieved_per_s,
        Some(completed / duration),
    );
    assert_figure(&what("TTFT"), p.ttft_median_ms, num(r, "median_ttft_ms"));
    assert_figure(&what("ITL"), p.tbt_median_ms, num(r, "median_itl_ms"));
    assert_figure(
        &what("per-request tok/s"),
        p.per_request_tok_per_s,
        num(r, "median_tpot_ms").map(|t| 1000.0 / t),
    );
}

fn check_bursts(rel: &str, records: &[Value], run: &Run) {
    let records: Vec<&Value> = records.iter().filter(|r| r["type"] != "warmup").collect();
    let key = |r: &Value| {
        let completed = num(r, "completed").unwrap();
        let failed = num(r, "failed").unwrap_or(0.0);
        let n = if r["mode"] == "multi_turn" {
            num(r, "multi_turn_concurrency").unwrap()
        } else {
            match num(r, "max_concurrency") {
                Some(n) if n > 0.0 => n,
                _ => num(r, "num_prompts").unwrap_or(0.0).max(completed + failed),
            }
        } as u32;
        let ctx = (completed > 0.0)
            .then(|| (num(r, "total_input_tokens").unwrap() / completed).round() as u64);
        (ctx, n)
    };
    let total = |r: &Value| num(r, "total_output_tokens").unwrap() / num(r, "duration").unwrap();
    let (paced, records): (Vec<&Value>, Vec<&Value>) =
        records.into_iter().partition(|r| is_paced(r));
    assert_eq!(
        run.paced.len(),
        paced.len(),
        "{rel}: one point per paced result"
    );
    for r in &paced {
        check_paced(rel, r, run);
    }
    for r in &records {
        let (ctx, n) = key(r);
        let completed = num(r, "completed").unwrap();
        let failed = num(r, "failed").unwrap_or(0.0);
        let Some(ctx) = ctx else {
            let c = run.decode_cells().find(|c| c.concurrency == n).unwrap();
            assert_eq!(c.status, Status::Error, "{rel}");
            assert!(
                c.reason
                    .as_ref()
                    .unwrap()
                    .words()
                    .contains(&format!("all {} requests failed", failed as u64)),
                "{rel}: {:?}",
                c.reason
            );
            continue;
        };
        let c = decode(run, ctx, n);
        let what = |f: &str| format!("{rel}: {ctx} × {n}: {f}");
        let mut group: Vec<&Value> = records
            .iter()
            .copied()
            .filter(|o| key(o) == (Some(ctx), n))
            .collect();
        // The cell's figures are the median record's.
        group.sort_by(|a, b| total(a).total_cmp(&total(b)));
        let median_record = group[(group.len() - 1) / 2];
        if group.len() > 1 {
            assert_eq!(c.repeats.len(), group.len(), "{}", what("repeats"));
            assert!(
                c.repeats.iter().any(|w| w.total_tok_per_s == Some(total(r))
                    && w.output_tokens == num(r, "total_output_tokens").map(|t| t as u64)),
                "{}",
                what("a repeat per record")
            );
            let totals: Vec<f64> = group.iter().map(|g| total(g)).collect();
            assert_figure(
                &what("total tok/s: the median of the repeats"),
                c.total_tok_per_s,
                sitegen::stats::median(totals),
            );
            let ci = c.total_tok_per_s_ci95.as_ref().unwrap();
            assert_eq!(ci.method, format!("{} repeats in the file", group.len()));
            if !std::ptr::eq(*r, median_record) {
                continue;
            }
        } else {
            assert!(c.repeats.is_empty(), "{}", what("no repeats"));
        }
        assert_eq!(
            c.output_tokens,
            num(r, "total_output_tokens").map(|t| t as u64),
            "{}",
            what("output tokens")
        );
        assert_eq!(
            c.completed_requests,
            Some(completed as u64),
            "{}",
            what("completed")
        );
        if failed > 0.0 {
            assert_eq!(c.status, Status::Error, "{}", what("status"));
            continue;
        }
        if group.len() == 1 {
            assert_figure(&what("total tok/s"), c.total_tok_per_s, Some(total(r)));
        }
        assert_figure(&what("TTFT"), c.ttft_median_ms, num(r, "median_ttft_ms"));
        assert_figure(&what("TBT"), c.tbt_median_ms, num(r, "median_itl_ms"));
        assert_figure(
            &what("per-request tok/s"),
            c.per_request_tok_per_s,
            // A TPOT of 0 (one output token) gives no rate.
            num(r, "median_tpot_ms")
                .filter(|t| *t > 0.0)
                .map(|t| 1000.0 / t),
        );
    }
}

/// AIPerf: the metrics at the top (0.4 and later) or under records.
fn check_aiperf(rel: &str, v: &Value, run: &Run) {
    let metric = |names: &[&str], stat: &str| {
        names
            .iter()
            .find_map(|n| num(v, &format!("{n}.{stat}")).or(num(v, &format!("records.{n}.{stat}"))))
    };
    let duration = metric(&["benchmark_duration"], "avg").unwrap();
    let output = metric(&["total_usage_completion_tokens"], "avg")
        .or(metric(&["total_osl"], "avg"))
        .unwrap();
    let ctx = metric(&["usage_prompt_tokens"], "avg")
        .or(metric(&["input_sequence_length"], "avg"))
        .unwrap()
        .round() as u64;
    let n = num(v, "input_config.loadgen.concurrency")
        .or_else(|| {
            v.pointer("/input_config/phases")
                .and_then(Value::as_array)
                .and_then(|p| {
                    p.iter()
                        .find(|p| p["kind"] == "profiling" || p["name"] == "profiling")
                })
                .and_then(|p| num(p, "concurrency"))
        })
        .unwrap() as u32;
    let c = decode(run, ctx, n);
    let what = |f: &str| format!("{rel}: {ctx} × {n}: {f}");
    assert_eq!(
        c.output_tokens,
        Some(output.round() as u64),
        "{}",
        what("output tokens")
    );
    if metric(&["error_request_count"], "avg").is_some_and(|e| e > 0.0) {
        assert_eq!(c.status, Status::Error, "{}", what("status"));
        return;
    }
    assert_figure(
        &what("total tok/s"),
        c.total_tok_per_s,
        Some(output / duration),
    );
    assert_figure(
        &what("TTFT"),
        c.ttft_median_ms,
        metric(&["time_to_first_token", "ttft"], "p50"),
    );
    assert_figure(
        &what("TBT"),
        c.tbt_median_ms,
        metric(&["inter_token_latency"], "p50"),
    );
    assert_figure(
        &what("per-request tok/s"),
        c.per_request_tok_per_s,
        metric(&["output_token_throughput_per_user"], "p50"),
    );
    // The tool's p10/p90 across requests are kept as the cell's spread.
    let spread = c.spread.as_deref().expect("AIPerf reports percentiles");
    assert_figure(
        &what("TTFT p10"),
        spread.ttft_ms.map(|s| s.p10),
        metric(&["time_to_first_token", "ttft"], "p10"),
    );
    assert_figure(
        &what("per-request tok/s p90"),
        spread.per_request_tok_per_s.map(|s| s.p90),
        metric(&["output_token_throughput_per_user"], "p90"),
    );
}

#[test]
fn llm_decode_bench_cards_come_from_the_file_itself() {
    let r = import_with(
        &[real(
            "llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json",
        )],
        "x",
        None,
    )
    .unwrap();
    let m = &r.run.meta;
    assert_eq!(
        (m.hardware.gpu.as_str(), m.hardware.gpu_count),
        ("RTX PRO 6000 Blackwell Server Edition", 8)
    );
    assert_eq!(
        (m.engine.name.as_str(), m.engine.version.as_deref()),
        ("vllm", Some("0.20.2rc1.dev249+glmkimirebase20260514"))
    );
    let tool = m.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(tool.version.as_deref(), Some("0.4.17"));
    assert_eq!(m.run.seconds_per_measurement, Some(30.0));
    // Planned cells the tool skipped for the KV budget are Over capacity.
    assert_eq!(decode(&r.run, 0, 64).status, Status::OverCapacity);
    // --meta still overrides a card the file states.
    let over = import_with(
        &[real(
            "llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json",
        )],
        "y",
        Some(r#"{"hardware": {"gpu_count": 4}}"#),
    )
    .unwrap();
    assert_eq!(over.run.meta.hardware.gpu_count, 4);
    assert_eq!(over.outcome.from_meta, ["hardware.gpu_count"]);
}

#[test]
fn a_prefill_only_run_has_no_decode_test() {
    let r = import_with(
        &[real(
            "llm-decode-bench/blackwell-llm-docker-r34-mtp0-prefill-only.json",
        )],
        "x",
        None,
    )
    .unwrap();
    assert_eq!(r.run.meta.run.decode_test, DecodeTest::None);
    assert_eq!(r.run.meta.run.prefill_mode, Some(PrefillMode::Standalone));
    assert_eq!(r.run.meta.run.seconds_per_measurement, None);
    assert_eq!(
        r.run.decode_cells().count(),
        0,
        "no decode was planned, so none is over capacity"
    );
    assert!(r.run.prefill_cells().count() >= 2);
    let page = sitegen::render::run_page::RunPage::new(&r.run, &[]).unwrap();
    let html = askama::Template::render(&page).unwrap();
    assert!(
        html.contains("<dt>Decode test</dt><dd>None (prefill only)</dd>"),
        "the card does not claim a 30 s decode"
    );
}

#[test]
fn llm_decode_bench_statuses_map_as_the_tool_writes_them() {
    // Hand-written: every status in one file (no real file shows a loop or a failure).
    let r = import_with(
        &[hand("llm-decode-bench-0.6.2-statuses.hand-written.json")],
        "x",
        None,
    )
    .unwrap();
    let run = &r.run;
    let m = &run.meta;
    assert_eq!(
        (m.hardware.gpu.as_str(), m.hardware.gpu_count),
        ("H200", 4),
        "nvidia-smi's table"
    );
    assert_eq!(
        m.engine.version.as_deref(),
        Some("0.11.2"),
        "'version' in the event log"
    );
    // A NaN per-request rate is left empty and named, not made total / N.
    let c = decode(run, 0, 16);
    assert_eq!(c.per_request_tok_per_s, None);
    assert!(
        r.outcome
            .warnings
            .iter()
            .any(|w| w
                .contains("no per_request_avg_tps (absent or NaN): per-request tok/s left empty")),
        "{:?}",
        r.outcome.warnings
    );
    let c = decode(run, 8192, 4);
    assert_eq!(c.status, Status::Looped);
    assert_eq!(c.total_tok_per_s, None);
    let c = decode(run, 8192, 16);
    assert_eq!(c.status, Status::RequestsQueued);
    assert_figure(
        "per-request tok/s, divided by the 12 that ran",
        c.per_request_tok_per_s,
        Some(125.0),
    );
    let c = decode(run, 32768, 1);
    assert_eq!(
        (c.status, c.reason.as_ref().map(|r| r.words()).as_deref()),
        (Status::Error, Some("HTTP 500: engine core died"))
    );
    let c = decode(run, 32768, 4);
    assert_figure(
        "total tok/s, skipped, then measured",
        c.total_tok_per_s,
        Some(480.0),
    );
    assert_eq!(decode(run, 32768, 16).status, Status::OverCapacity);
    assert_eq!(run.decode_cells().count(), 9);
}

#[test]
fn guidellm_counts_the_tokens_of_requests_cut_off_at_the_end() {
    // guidellm 0.8.1 against the emulated engine: 8 s benchmarks of 256-token
    // requests at 20 ms a token, so every benchmark ends with requests cut off.
    let file = real("guidellm/emulated-guidellm-0.8.1-benchmarks.json");
    let v = read_json(&file);
    let r = import_with(&[file], "x", meta_for(&[GPU, COUNT, ENGINE]).as_deref()).unwrap();
    for b in v["benchmarks"].as_array().unwrap() {
        let n = guidellm_streams(b);
        let c = run_cell_at(&r.run, n);
        let successful_only = num(&b["metrics"], "output_token_count.successful.total_sum")
            .unwrap()
            / num(b, "duration").unwrap();
        assert!(
            c.total_tok_per_s.unwrap() > 1.2 * successful_only,
            "{n}: {:?} vs {successful_only}",
            c.total_tok_per_s
        );
        let d = &c.measured_by.as_ref().unwrap().definitions["total_tok_per_s"];
        assert!(
            d.contains("guidellm's own total counts the finished requests only"),
            "{d}"
        );
    }
    assert_eq!(tool_version(&r.run), Some("0.8.1"));
    assert_eq!(r.run.meta.served_model, "emulated-model");
    // The YAML of the same run gives the same cells.
    let yaml = import_one(
        real("guidellm/emulated-guidellm-0.8.1-benchmarks.yaml"),
        &[GPU, COUNT, ENGINE],
    );
    assert_eq!(yaml.run.cells, r.run.cells);
}

fn run_cell_at(run: &Run, n: u32) -> &DecodeCell {
    run.decode_cells().find(|c| c.concurrency == n).unwrap()
}

#[test]
fn guidellm_layouts_name_their_version_and_what_they_lack() {
    let v = read_json(&real("guidellm/emulated-guidellm-0.8.1-benchmarks.json"));
    let mut broken = v.clone();
    broken["benchmarks"][0]["metrics"]
        .as_object_mut()
        .unwrap()
        .remove("request_totals");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("benchmarks.json");
    std::fs::write(&file, broken.to_string()).unwrap();
    let opts = common::ingest::options(tmp.path(), Some("x"), Some(META), None, false);
    let err = format!("{:#}", import(None, &[file], &opts).unwrap_err());
    assert!(err.contains("benchmarks[0]: guidellm 0.8.1: expected the request counts under metrics.request_totals (0.4 and later) or request_totals / run_stats.requests_made (0.2–0.3), found none; the benchmark holds config, cooldown_duration"), "{err}");
    // A benchmark paced by rate has no concurrency.
    let mut paced = v;
    paced["benchmarks"][0]["config"]["strategy"] =
        serde_json::json!({"type_": "constant", "rate": 5.0});
    std::fs::write(tmp.path().join("benchmarks.json"), paced.to_string()).unwrap();
    let err = format!(
        "{:#}",
        import(None, &[tmp.path().join("benchmarks.json")], &opts).unwrap_err()
    );
    assert!(err.contains("benchmarks[0].config.strategy: expected a synchronous, concurrent (streams) or throughput (max_concurrency) strategy, found constant"), "{err}");
}

#[test]
fn a_burst_sent_all_at_once_is_filed_at_every_request_and_judged() {
    // vllm bench serve 0.33, 16 requests at once against an engine that runs 8.
    let r = import_one(
        real("vllm-bench/emulated-vllm-0.33.0-unlimited-16.json"),
        &[GPU, COUNT],
    );
    let c = run_cell_at(&r.run, 16);
    assert_eq!(c.status, Status::RequestsQueued);
    let why = c.reason.as_ref().unwrap().words();
    assert!(
        why.contains(
            " of 16 requests sent at once got their first token only after another had finished"
        ),
        "{why}"
    );
    assert!(
        c.measured_by.as_ref().unwrap().definitions["concurrency"].contains(
            "a burst sent all at once (infinite rate, no limit) is filed at all its requests"
        )
    );
    // Summary only, 10,000 at once: not marked, and the page says why.
    let r = import_one(
        real("sglang-bench/datacrunch-deepseek_dp_mla_output.jsonl"),
        &[MODEL, GPU, COUNT],
    );
    let c = run_cell_at(&r.run, 10_000);
    assert_eq!(c.status, Status::Valid);
    assert!(
        c.measured_by.as_ref().unwrap().definitions["status"]
            .contains("whether the server ran every request at once is not known")
    );
    // Behind SGLang's PD router (hand-written): the model and the server's
    // limit come from internal_states, and 128 in flight exceed its 64.
    let r = import_one(
        hand("sglang-bench-pd-router.hand-written.jsonl"),
        &[GPU, COUNT],
    );
    assert_eq!(r.run.meta.served_model, "deepseek-ai/DeepSeek-V3.2");
    assert_eq!(
        (
            r.run.meta.engine.name.as_str(),
            r.run.meta.engine.version.as_deref()
        ),
        ("sglang", Some("0.5.6"))
    );
    let c = run_cell_at(&r.run, 128);
    assert_eq!(c.status, Status::RequestsQueued);
    assert!(
        c.reason.as_ref().unwrap().words().contains(
            "server_info.internal_states[0].max_running_requests); the burst kept 128 in flight"
        ),
        "{:?}",
        c.reason
    );
}

#[test]
fn an_all_failed_burst_is_an_error_cell_with_the_counts() {
    let r = import_one(
        real("vllm-bench/er0080-bench_serve_all_requests_failed_v0.25.1.json"),
        &[GPU, COUNT],
    );
    let c = run_cell_at(&r.run, 8);
    assert_eq!(c.status, Status::Error);
    assert_eq!(c.completed_requests, Some(0));
    assert_eq!(c.total_tok_per_s, None);
    assert!(
        c.reason
            .as_ref()
            .unwrap()
            .words()
            .starts_with("all 8 requests failed")
    );
    // Some failed: Error, with the count.
    let r = import_one(
        hand("vllm-bench-partial-failure.hand-written.json"),
        &[GPU, COUNT],
    );
    let c = run_cell_at(&r.run, 16);
    assert_eq!(
        (c.status, c.reason.as_ref().map(|r| r.words()).as_deref()),
        (Status::Error, Some("2 of 160 requests failed"))
    );
}

#[test]
fn multi_turn_results_are_filed_at_their_conversations() {
    let file = real("vllm-bench/emulated-vllm-bench-rs-multi-turn-c4.json");
    let v = read_json(&file);
    let r = import_with(&[file], "x", meta_for(&[GPU, COUNT, ENGINE]).as_deref()).unwrap();
    let c = run_cell_at(&r.run, 4);
    assert_eq!(c.status, Status::Valid);
    assert_eq!(c.completed_requests, num(&v, "completed").map(|n| n as u64));
    assert!(
        c.measured_by.as_ref().unwrap().definitions["concurrency"]
            .contains("conversations at once, each sending its turns one after another")
    );
    assert!(
        r.outcome.layout.starts_with("multi-turn result"),
        "{}",
        r.outcome.layout
    );
}

#[test]
fn figures_in_seconds_are_read_and_unreadable_ones_are_named() {
    let r = import_one(
        hand("vllm-bench-derivative-seconds.hand-written.json"),
        &[GPU, COUNT, ENGINE],
    );
    let c = run_cell_at(&r.run, 8);
    assert_figure("median TTFT", c.ttft_median_ms, Some(184.0));
    assert_figure(
        "per-request tok/s",
        c.per_request_tok_per_s,
        Some(1000.0 / 15.1),
    );
    assert_eq!(c.tbt_median_ms, None);
    let d = &c.measured_by.as_ref().unwrap().definitions;
    assert!(
        d["ttft_ms"].contains("read from `median_ttft`, in seconds"),
        "{d:?}"
    );
    assert!(
        r.outcome.warnings.iter().any(|w| w.contains(
            "no median_itl_ms or median_itl_s: time between tokens left empty (found median_itl_us: another statistic or unit)"
        )),
        "{:?}",
        r.outcome.warnings
    );
}

#[test]
fn sglang_server_info_names_the_engine_and_secrets_stay_out() {
    let r = import_one(
        hand("sglang-bench-server-info.hand-written.jsonl"),
        &[GPU, COUNT],
    );
    assert_eq!(
        (
            r.run.meta.engine.name.as_str(),
            r.run.meta.engine.version.as_deref()
        ),
        ("sglang", Some("0.5.4"))
    );
    assert_eq!(r.run.meta.served_model, "zai-org/GLM-4.6-FP8");
    let stored = serde_json::to_string(&r.run.cells).unwrap();
    assert!(
        !stored.contains("sk-should-never-be-stored"),
        "the api key is redacted"
    );
}

#[test]
fn aiperf_prefers_the_servers_token_counts_and_names_errors() {
    let file = real("aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.json");
    let v = read_json(&file);
    let r = import_with(&[file], "x", meta_for(&[GPU, COUNT, ENGINE]).as_deref()).unwrap();
    let c = run_cell_at(&r.run, 4);
    let server = num(&v, "total_usage_completion_tokens.avg").unwrap();
    let tokenizer = num(&v, "total_osl.avg").unwrap();
    assert!(
        server != tokenizer,
        "this run's client tokenizer disagreed with the server"
    );
    assert_eq!(c.output_tokens, Some(server as u64));
    let d = &c.measured_by.as_ref().unwrap().definitions;
    assert!(
        d["tbt_ms"]
            .contains("disagreed with the server's counts (usage_discrepancy_count above 0)"),
        "{d:?}"
    );
    assert_eq!(tool_version(&r.run), Some("0.13.0"));
    // The older layout: a cancellation error is named.
    let r = import_one(
        real("aiperf/aiperf-repo-example-run1-profile_export_aiperf.json"),
        &[GPU, COUNT, ENGINE],
    );
    let c = run_cell_at(&r.run, 100);
    assert_eq!(c.status, Status::Error);
    assert_eq!(
        c.reason.as_ref().map(|r| r.words()).as_deref(),
        Some("11 of 100 requests failed (RequestCancellationError ×11)")
    );
    // Three files at three concurrencies make one run.
    let files: Vec<PathBuf> = [1, 4, 16]
        .map(|n| {
            real(&format!(
                "aiperf/emulated-aiperf-0.13.0-c{n}-profile_export_aiperf.json"
            ))
        })
        .to_vec();
    let r = import_with(&files, "z", meta_for(&[GPU, COUNT, ENGINE]).as_deref()).unwrap();
    assert_eq!(concurrencies(&r.run), [1, 4, 16]);
}

#[test]
fn vllm_bench_files_make_one_run_and_say_their_layout() {
    let files: Vec<PathBuf> = ["c1", "c4", "unlimited-16"]
        .map(|n| real(&format!("vllm-bench/emulated-vllm-0.33.0-{n}.json")))
        .to_vec();
    let r = import_with(&files, "q", meta_for(&[GPU, COUNT]).as_deref()).unwrap();
    assert_eq!(concurrencies(&r.run), [1, 4, 16]);
    assert_eq!(r.run.meta.engine.name, "vllm", "named by the backend");
    assert!(
        r.outcome
            .layout
            .contains("vLLM's result files record no version")
    );
    let page = sitegen::render::run_page::RunPage::new(&r.run, &[]).unwrap();
    let html = askama::Template::render(&page).unwrap();
    assert!(html.contains("3 cells were measured by vllm bench serve, which defines these figures differently from this site:"));
    assert!(html.contains("<dt>Decode test</dt><dd>Request burst</dd>"));
    assert!(
        !html.contains(sitegen::model::labels::TTFT_NOTE),
        "no warm-cache TTFT note for a burst"
    );
    // Two files of one model only.
    let err = format!(
        "{:#}",
        import_with(
            &[
                real("vllm-bench/er0080-bench_serve_v0.25.1.json"),
                files[0].clone()
            ],
            "m",
            Some(META)
        )
        .err()
        .unwrap()
    );
    assert!(
        err.contains("model_id: expected facebook/opt-125m as in"),
        "{err}"
    );
}

#[test]
fn malformed_files_name_the_file_the_place_and_what_was_expected() {
    type Edit<'a> = &'a dyn Fn(&str) -> String;
    let cases: [(&str, PathBuf, Edit, &str); 5] = [
        // (file name, source, edit, what the error says)
        (
            "llm-decode-bench.json",
            hand("llm-decode-bench-0.6.2-statuses.hand-written.json"),
            &|t: &str| t[..t.len() / 2].to_string(),
            "the file ends early",
        ),
        (
            "llm-decode-bench.json",
            hand("llm-decode-bench-0.6.2-statuses.hand-written.json"),
            &|t: &str| t.replacen("\"aggregate_tps\": 620.0", "\"aggregate_tps\": \"fast\"", 1),
            "llm-decode-bench.json: results[1].aggregate_tps: expected a finite number, found \"fast\"",
        ),
        (
            "vllm.json",
            real("vllm-bench/emulated-vllm-0.33.0-c4.json"),
            &|t: &str| t.replacen("\"completed\": 16", "\"completed\": \"many\"", 1),
            "vllm.json: completed: expected a whole number >= 0, found \"many\"",
        ),
        (
            "sglang.jsonl",
            real("sglang-bench/emulated-sglang-0.5.23.jsonl"),
            &|t: &str| t.replacen("\"completed\": 16", "\"completed\": -1", 1),
            "sglang.jsonl: line 1.completed: expected a whole number >= 0, found -1",
        ),
        (
            "benchmarks.yaml",
            real("guidellm/guidellm-repo-benchmarks_stripped.yaml"),
            &|t: &str| t.replacen("benchmarks:", "benchmarks: [", 1),
            "benchmarks.yaml: line ",
        ),
    ];
    for (name, source, edit, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join(name);
        std::fs::write(&file, edit(&std::fs::read_to_string(&source).unwrap())).unwrap();
        let opts = common::ingest::options(tmp.path(), Some("x"), Some(META), None, false);
        let format = match name.rsplit('.').next() {
            _ if name.starts_with("llm") => "llm-decode-bench",
            _ if name.starts_with("vllm") => "vllm-bench",
            _ if name.starts_with("sglang") => "sglang-bench",
            _ => "guidellm",
        };
        let format = Format::named(format).unwrap();
        let err = format!("{:#}", import(Some(format), &[file], &opts).unwrap_err());
        assert!(err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1, "one error: {err}");
        assert!(!tmp.path().join("data").exists());
    }
}

/// Hostile text from every source a page shows: comparisons.json titles and
/// notes, cell reasons, and each importer's free-text fields. None of it may
/// reach a page as markup.
#[test]
fn hostile_text_from_any_source_stays_text() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("in");
    std::fs::create_dir(&dir).unwrap();
    let hostile = |source: PathBuf, name: &str, edit: &dyn Fn(&str) -> String| {
        let path = dir.join(name);
        std::fs::write(&path, edit(&std::fs::read_to_string(source).unwrap())).unwrap();
        path
    };
    let meta = dir.join("meta.json");
    std::fs::write(
        &meta,
        r#"{"hardware": {"gpu": "<b>GPU</b>", "gpu_count": 1}, "engine": {"name": "vllm"}}"#,
    )
    .unwrap();
    let inputs: Vec<(&str, Vec<PathBuf>)> = vec![
        (
            "evil-decode-bench",
            vec![hostile(
                hand("llm-decode-bench-0.6.2-statuses.hand-written.json"),
                "ldb.json",
                &|t| t.replace("HTTP 500: engine core died", "<script>alert(1)</script>"),
            )],
        ),
        (
            "evil-vllm",
            vec![hostile(
                real("vllm-bench/emulated-vllm-0.33.0-c4.json"),
                "vllm.json",
                &|t| t.replace("emulated-model", "org/<svg onload=alert(3)>"),
            )],
        ),
        (
            "evil-guidellm",
            vec![hostile(
                real("guidellm/guidellm-repo-benchmarks_stripped.json"),
                "guidellm.json",
                &|t| t.replace("example_model", "<script>alert(4)</script>"),
            )],
        ),
        (
            "evil-sglang",
            vec![hostile(
                hand("sglang-bench-server-info.hand-written.jsonl"),
                "sglang.jsonl",
                &|t| t.replace("zai-org/GLM-4.6-FP8", "x/<iframe src=javascript:alert(5)>"),
            )],
        ),
        (
            "evil-aiperf",
            vec![hostile(
                real("aiperf/emulated-aiperf-0.13.0-c1-profile_export_aiperf.json"),
                "aiperf.json",
                &|t| t.replace("\"emulated-model\"", "\"<img src=x onerror=alert(8)>\""),
            )],
        ),
    ];
    for (id, files) in &inputs {
        let opts = ImportOptions {
            id: Some((*id).into()),
            data: data.clone(),
            force: false,
            meta: Some(meta.clone()),
            cards: serde_json::Value::Null,
            context_tokens: None,
            gpu_index: None,
            dry_run: false,
        };
        import(None, files, &opts).unwrap();
    }
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "<script>alert(6)</script>", "runs": ["evil-vllm", "evil-sglang"],
            "note": "<img src=x onerror=alert(7)> **fine**"}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let mut pages = 0;
    for (rel, bytes) in common::files_under(&site) {
        if !rel.ends_with(".html") {
            continue;
        }
        pages += 1;
        let html = String::from_utf8(bytes).unwrap();
        for markup in [
            "<script>alert",
            "<img src=x",
            "<svg onload",
            "<iframe",
            "<b>GPU",
        ] {
            assert!(!html.contains(markup), "{rel} holds {markup:?}");
        }
    }
    assert!(pages >= 6, "{pages} pages");
    let shown = |rel: &str| {
        std::fs::read_to_string(site.join(rel))
            .unwrap()
            .replace("&#60;", "&lt;")
            .replace("&#62;", "&gt;")
    };
    assert!(
        shown("runs/evil-decode-bench/index.html")
            .contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    let compare = shown("compare/evil-vllm--evil-sglang/index.html");
    assert!(compare.contains("&lt;script&gt;alert(6)&lt;/script&gt;"));
    assert!(
        compare.contains("<strong>fine</strong>"),
        "the note's Markdown still renders"
    );
}

fn concurrencies(run: &Run) -> Vec<u32> {
    let mut n: Vec<u32> = run.decode_cells().map(|c| c.concurrency).collect();
    n.sort();
    n
}

/// The version of the tool that measured a run, as its Run card says.
fn tool_version(run: &Run) -> Option<&str> {
    run.meta.run.benchmark_tool.as_ref()?.version.as_deref()
}

#[test]
fn sglang_gpu_count_is_its_parallel_sizes_and_a_disaggregated_setup_is_not_counted() {
    let rel = "sglang-bench/benchmaq-qwen35-27b-h100-tp4-dp2-c100.jsonl";
    let text = std::fs::read_to_string(real(rel)).unwrap();
    let line: Value =
        sitegen::ingest::json::parse_python_json(&real(rel), text.lines().next().unwrap()).unwrap();
    let info = &line["server_info"];
    let dp = if info["enable_dp_attention"] == true {
        1
    } else {
        info["dp_size"].as_u64().unwrap()
    };
    let want = info["tp_size"].as_u64().unwrap() * info["pp_size"].as_u64().unwrap() * dp;
    let r = import_with(&[real(rel)], "x", Some(r#"{"hardware": {"gpu": "H100"}}"#)).unwrap();
    assert_eq!(u64::from(r.run.meta.hardware.gpu_count), want);
    assert_eq!(want, 8, "tp 4 × dp 2, as the file's name says");
    let pd = real("sglang-bench/tonyli-pd_1p2d_n100_in2048_out512_c128.jsonl");
    let r = import_with(
        &[pd],
        "y",
        Some(r#"{"hardware": {"gpu": "H100", "gpu_count": 3}}"#),
    )
    .unwrap();
    assert!(
        r.outcome
            .warnings
            .iter()
            .any(|w| w.contains("a prefill/decode disaggregated setup")),
        "{:?}",
        r.outcome.warnings
    );
    assert_eq!(
        r.run.meta.hardware.gpu_count, 3,
        "from --meta, not from server_info"
    );
}

/// A `vllm bench serve` result of the default `--metric-percentiles 99`
/// (median and p99 keys, no p90): its percentiles are carried with the
/// requests behind them, judged at p50 and p99, and a p90 tier is not
/// recorded rather than read from another percentile.
#[test]
fn vllm_bench_percentiles_are_carried_and_judged_only_where_stated() {
    use sitegen::compare::capacity::{Limit, RowOutcome, capacity};
    use sitegen::model::slo::SloTier;
    let file = real("vllm-bench/er0080-bench_serve_v0.25.1.json");
    let raw = read_json(&file);
    let imported = import_one(file, &[GPU, COUNT]);
    let cell = imported.run.decode_cells().next().unwrap();
    let latency = cell.latency.as_ref().expect("the file states percentiles");
    let completed = raw["completed"].as_u64().unwrap();
    for (q, family) in [
        (&latency.ttft_ms, "ttft"),
        (&latency.tpot_ms, "tpot"),
        (&latency.tbt_ms, "itl"),
    ] {
        let q = q.as_ref().unwrap();
        assert_eq!(
            q.p50,
            raw[format!("median_{family}_ms")].as_f64(),
            "{family}"
        );
        assert_eq!(q.p99, raw[format!("p99_{family}_ms")].as_f64(), "{family}");
        assert_eq!((q.p90, q.p95), (None, None), "{family}: not in the file");
        assert_eq!(q.requests, Some(completed));
    }
    // No end-to-end percentile in this file: none recorded.
    assert_eq!(latency.e2e_ms, None);
    let tier = |percentile| SloTier {
        name: format!("p{percentile}"),
        percentile,
        ttft_ms: Some(1e9),
        tpot_ms: Some(1e9),
        source: "test".into(),
    };
    for p in [50, 99] {
        let rows = capacity(&imported.run, &tier(p));
        let RowOutcome::Judged(c) = &rows[0].outcome else {
            panic!("p{p}: {:?}", rows[0].outcome)
        };
        assert_eq!(c.max_concurrency, Some(cell.concurrency), "p{p}");
        // Fewer requests than the rule asks (662 for a p99, MLPerf's): said.
        let needed = sitegen::model::slo::min_requests(p);
        assert_eq!(!c.few_requests.is_empty(), completed < needed, "p{p}");
    }
    assert_eq!(
        capacity(&imported.run, &tier(90))[0].outcome,
        RowOutcome::NotRecorded {
            limits: vec![Limit::Ttft, Limit::Tpot],
            concurrency: cell.concurrency
        }
    );
}

/// Each percentile of `got` is the file's own (`want`, in ms; `None` where
/// the file states none), over `requests`.
fn assert_quantiles(
    what: &str,
    got: Option<&sitegen::model::slo::Quantiles>,
    want: impl Fn(u8) -> Option<f64>,
    requests: Option<u64>,
) {
    let q = got.unwrap_or_else(|| panic!("{what}: no percentiles carried"));
    for p in sitegen::model::slo::PERCENTILES {
        assert_figure(&format!("{what} p{p}"), q.at(p), want(p));
    }
    assert_eq!(q.requests, requests, "{what}: requests");
}

fn latency_of(c: &DecodeCell) -> &sitegen::model::slo::Latency {
    c.latency
        .as_deref()
        .unwrap_or_else(|| panic!("{} x{}: no latency", c.context_tokens, c.concurrency))
}

fn latency_definition(c: &DecodeCell) -> &str {
    &c.measured_by.as_ref().unwrap().definitions["latency"]
}

/// AIPerf: p50, p90, p95 and p99 of TTFT, of each request's inter-token
/// latency (its TPOT), of every gap between chunks and of the request
/// latency, in ms as the file's unit says, over its request_count; in both
/// layouts, and on a cell that is an Error. A percentile taken out of the
/// file is absent, not made up from the others.
#[test]
fn aiperf_percentiles_are_carried_as_the_file_states_them() {
    let file = real("aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.json");
    let v = read_json(&file);
    let r = import_one(file.clone(), &[GPU, COUNT, ENGINE]);
    let c = run_cell_at(&r.run, 4);
    let l = latency_of(c);
    let completed = num(&v, "request_count.avg").map(|n| n as u64);
    for (got, metric) in [
        (&l.ttft_ms, "time_to_first_token"),
        (&l.tpot_ms, "inter_token_latency"),
        (&l.tbt_ms, "inter_chunk_latency"),
        (&l.e2e_ms, "request_latency"),
    ] {
        assert_eq!(v[metric]["unit"], "ms", "{metric}");
        assert_quantiles(
            metric,
            got.as_ref(),
            |p| num(&v, &format!("{metric}.p{p}")),
            completed,
        );
    }
    assert!(latency_definition(c).contains("inter_chunk_latency"));

    // The records layout (before 0.4), a cell with failed requests.
    let file = real("aiperf/aiperf-repo-example-run1-profile_export_aiperf.json");
    let old = read_json(&file);
    let r = import_one(file, &[GPU, COUNT, ENGINE]);
    let c = run_cell_at(&r.run, 100);
    assert_eq!(c.status, Status::Error);
    let l = latency_of(c);
    let completed = num(&old, "records.request_count.avg").map(|n| n as u64);
    assert_eq!(completed, Some(89));
    for (got, metric) in [
        (&l.ttft_ms, "ttft"),
        (&l.tpot_ms, "inter_token_latency"),
        (&l.tbt_ms, "inter_chunk_latency"),
        (&l.e2e_ms, "request_latency"),
    ] {
        assert_quantiles(
            metric,
            got.as_ref(),
            |p| num(&old, &format!("records.{metric}.p{p}")),
            completed,
        );
    }

    // A percentile the file lacks stays absent.
    let mut edited = v.clone();
    edited["time_to_first_token"]
        .as_object_mut()
        .unwrap()
        .remove("p95");
    edited
        .as_object_mut()
        .unwrap()
        .remove("inter_chunk_latency");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("profile_export_aiperf.json");
    std::fs::write(&path, edited.to_string()).unwrap();
    let r = import_one(path, &[GPU, COUNT, ENGINE]);
    let l = latency_of(run_cell_at(&r.run, 4));
    let ttft = l.ttft_ms.as_ref().unwrap();
    assert_eq!(ttft.p95, None);
    assert_eq!(ttft.p99, num(&v, "time_to_first_token.p99"));
    assert_eq!(l.tbt_ms, None);
}

/// GenAI-Perf, in its three layouts: streamed, TTFT and each request's
/// inter-token latency (its TPOT) with the request latency; not streamed,
/// the request latency only (its "time to first token" is the whole
/// response's). Over request_count; p95 where the file has it.
#[test]
fn genai_perf_percentiles_are_carried_as_the_file_states_them() {
    for rel in [
        "gpu-summary/wellflat-gpt-oss-20b-c1-telemetry-profile_export_genai_perf.json",
        "genai-perf/wellflat-gpt-oss-20b-c1-flat-config-profile_export_genai_perf.json",
    ] {
        let file = real(rel);
        let v = read_json(&file);
        let r = import_one(file, &[GPU, COUNT, ENGINE]);
        let c = run_cell_at(&r.run, 1);
        let l = latency_of(c);
        let count = num(&v, "request_count.avg").map(|n| n as u64);
        for (got, metric) in [
            (&l.ttft_ms, "time_to_first_token"),
            (&l.tpot_ms, "inter_token_latency"),
            (&l.e2e_ms, "request_latency"),
        ] {
            assert_eq!(v[metric]["unit"], "ms", "{rel}: {metric}");
            assert_quantiles(
                &format!("{rel}: {metric}"),
                got.as_ref(),
                |p| num(&v, &format!("{metric}.p{p}")),
                count,
            );
        }
        assert_eq!(
            l.tbt_ms, None,
            "{rel}: GenAI-Perf states no gap between tokens"
        );
    }
    let file = real("genai-perf/adaptive-auto-c50-non-streaming-genai_perf.json");
    let v = read_json(&file);
    let r = import_one(file, &[GPU, COUNT, ENGINE]);
    let c = run_cell_at(&r.run, 50);
    let l = latency_of(c);
    assert_eq!((&l.ttft_ms, &l.tpot_ms), (&None, &None), "not streamed");
    assert_quantiles(
        "request_latency",
        l.e2e_ms.as_ref(),
        |p| num(&v, &format!("request_latency.p{p}")),
        num(&v, "request_count.avg").map(|n| n as u64),
    );
    assert!(latency_definition(c).contains("not streamed"));
}

/// guidellm: the successful requests' TTFT, inter-token latency (each
/// request's TPOT) and request latency (seconds) at p50 (or the median, where
/// a file's percentiles lack p50), p90, p95 and p99, over the successful
/// requests; time_per_output_token_ms (TTFT included) is not taken as TPOT.
#[test]
fn guidellm_percentiles_are_carried_as_the_file_states_them() {
    for rel in [
        "guidellm/danielkorat-qwen3-4b-tp4-benchmarks.json",
        "guidellm/guidellm-repo-benchmarks_stripped.json",
    ] {
        let file = real(rel);
        let v = read_json(&file);
        let r = import_one(file, &[GPU, COUNT, ENGINE]);
        for b in v["benchmarks"].as_array().unwrap() {
            let n = guidellm_streams(b);
            let m = &b["metrics"];
            let ok = num(m, "request_totals.successful")
                .or(num(b, "request_totals.successful"))
                .or(num(b, "run_stats.requests_made.successful"))
                .map(|n| n as u64);
            let c = run_cell_at(&r.run, n);
            let l = latency_of(c);
            let stated = |metric: &str, scale: f64, p: u8| {
                let d = &m[metric]["successful"];
                num(d, &format!("percentiles.p{p}"))
                    .or_else(|| (p == 50).then(|| num(d, "median")).flatten())
                    .map(|x| x * scale)
            };
            for (got, metric, scale) in [
                (&l.ttft_ms, "time_to_first_token_ms", 1.0),
                (&l.tpot_ms, "inter_token_latency_ms", 1.0),
                (&l.e2e_ms, "request_latency", 1000.0),
            ] {
                assert_quantiles(
                    &format!("{rel}: x{n}: {metric}"),
                    got.as_ref(),
                    |p| stated(metric, scale, p),
                    ok,
                );
            }
            assert_eq!(l.tbt_ms, None);
            assert_ne!(
                l.tpot_ms.as_ref().unwrap().p50,
                num(m, "time_per_output_token_ms.successful.median"),
                "{rel}: TPOT is not guidellm's time_per_output_token_ms"
            );
        }
    }
    // The stripped file's percentiles lack p50: its median is the p50.
    let v = read_json(&real("guidellm/guidellm-repo-benchmarks_stripped.json"));
    assert!(
        v.pointer("/benchmarks/0/metrics/time_to_first_token_ms/successful/percentiles/p50")
            .is_none()
    );
    // guidellm 0.5 counts a value per gap between tokens: said.
    let r = import_one(
        real("guidellm/danielkorat-qwen3-4b-tp4-benchmarks.json"),
        &[GPU, COUNT, ENGINE],
    );
    let c = r.run.decode_cells().next().unwrap();
    assert!(
        latency_definition(c).contains("counts 4092 values for 4 requests"),
        "{}",
        latency_definition(c)
    );
}

/// llmperf: TTFT and end-to-end latency quantiles (seconds) at p50, p90,
/// p95 and p99 over the completed requests, also on a cell whose failed
/// requests make it an Error; its inter-token latency (TTFT included, per
/// output token) is neither TPOT nor the time between tokens.
#[test]
fn llmperf_percentiles_are_carried_as_the_file_states_them() {
    for (rel, status) in [
        ("llmperf/leaderboard-groq_70b-summary.json", Status::Valid),
        (
            "llmperf/leaderboard-bedrock_70b-summary.json",
            Status::Error,
        ),
    ] {
        let file = real(rel);
        let v = read_json(&file);
        let r = import_one(file, &[GPU, COUNT, ENGINE]);
        let c = r.run.decode_cells().next().unwrap();
        assert_eq!(c.status, status, "{rel}");
        let l = latency_of(c);
        let completed = num(&v, "results_num_completed_requests").map(|n| n as u64);
        for (got, metric) in [(&l.ttft_ms, "ttft"), (&l.e2e_ms, "end_to_end_latency")] {
            assert_quantiles(
                &format!("{rel}: {metric}"),
                got.as_ref(),
                |p| num(&v, &format!("results_{metric}_s_quantiles_p{p}")).map(|s| s * 1000.0),
                completed,
            );
        }
        assert_eq!((&l.tpot_ms, &l.tbt_ms), (&None, &None), "{rel}");
    }
}

/// llm_decode_bench: p50, p90 and p99 (no p95) of TTFT, of each request's
/// inter-token latency (its TPOT) over the cell's request samples, and of
/// the request latency over those that finished; files before 0.4 state
/// TTFT's p50 and p99 only, and not over how many requests.
#[test]
fn llm_decode_bench_percentiles_are_carried_as_the_file_states_them() {
    let file = real("llm-decode-bench/emulated-llm-decode-bench-0.4.18.json");
    let v = read_json(&file);
    let r = import_one(file, &[GPU, COUNT]);
    let mut checked = 0;
    for res in v["results"].as_array().unwrap() {
        let (ctx, n) = (
            res["context_tokens"].as_u64().unwrap(),
            res["concurrency"].as_u64().unwrap() as u32,
        );
        let c = decode(&r.run, ctx, n);
        let l = latency_of(c);
        let count = |k: &str| res[k].as_u64();
        for (got, key, requests) in [
            (&l.ttft_ms, "ttft", count("request_count")),
            (&l.tpot_ms, "inter_token_latency", count("request_count")),
            (
                &l.e2e_ms,
                "request_latency",
                count("completed_request_count"),
            ),
        ] {
            assert_quantiles(
                &format!("{ctx} x{n}: {key}"),
                got.as_ref(),
                |p| num(res, &format!("{key}_p{p}")).map(|s| s * 1000.0),
                requests,
            );
            assert_eq!(got.as_ref().unwrap().p95, None);
        }
        assert_eq!(l.tbt_ms, None, "chunk_inter_token_latency is per request");
        checked += 1;
    }
    assert!(checked >= 4);
    let file = real("llm-decode-bench/rtx6kpro-results_awq.json");
    let v = read_json(&file);
    let r = import_one(file, &[GPU, COUNT, ENGINE]);
    let res = &v["results"][0];
    let c = decode(
        &r.run,
        res["context_tokens"].as_u64().unwrap(),
        res["concurrency"].as_u64().unwrap() as u32,
    );
    let l = latency_of(c);
    assert_quantiles(
        "ttft",
        l.ttft_ms.as_ref(),
        |p| num(res, &format!("ttft_p{p}")).map(|s| s * 1000.0),
        None,
    );
    assert_eq!((&l.tpot_ms, &l.e2e_ms), (&None, &None));
}
