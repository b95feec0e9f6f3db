//! Reading outside files, as one test binary: every importer against real
//! result files (tools, GenAI-Perf and vLLM offline, llama-bench and
//! llmperf, GPU telemetry), no invented figure when a key is missing, every
//! parser fed arbitrary input, and data/ against the generated JSON Schema.

#[path = "../common/mod.rs"]
mod common;

mod closed_loop_round3;
mod genai_perf_vllm_offline;
mod gpu_telemetry;
mod inference_perf_mlperf;
mod llama_bench_llmperf;
mod llm_d_report;
mod missing_keys;
mod parsers_never_panic;
mod schema;
mod tools;
