//! The emulated engine of the tests as a server you can point `sitegen run` at,
//! to try the runner without a GPU:
//!
//!     cargo run --example emulated_engine -- --port 8001 --tokens-per-step 4 --max-running 8
//!     cargo run -- run --url http://127.0.0.1:8001 --run-id emulated --contexts 2K,8K --concurrency 1,4,16 --duration 5s
//!
//! With `--gpus 2` it also serves a DCGM exporter of two emulated GPUs at
//! /dcgm/metrics (`sitegen run --gpu-metrics http://127.0.0.1:8001/dcgm/metrics --gpu-count 2`).
//!
//! Test support, not part of sitegen.

#[path = "../tests/support/emulator.rs"]
mod emulator;

use std::time::Duration;

use clap::Parser;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 8001)]
    port: u16,
    #[arg(long, default_value_t = 131_072)]
    max_model_len: u64,
    /// Uncached prompt tokens per second.
    #[arg(long, default_value_t = 200_000.0)]
    prefill_tok_per_s: f64,
    /// Milliseconds per decode step.
    #[arg(long, default_value_t = 20)]
    step_ms: u64,
    /// Tokens per step and request (above 1 emulates speculative decoding).
    #[arg(long, default_value_t = 1)]
    tokens_per_step: u64,
    #[arg(long, default_value_t = 10_000_000)]
    kv_capacity: u64,
    #[arg(long, default_value_t = 1024)]
    max_running: usize,
    /// Repeat one phrase after this many output tokens.
    #[arg(long)]
    loop_after: Option<u64>,
    /// On Ctrl-C, write every emission here as CSV (unix_s,tokens): the truth
    /// another benchmark client's figures can be checked against.
    #[arg(long)]
    token_log: Option<std::path::PathBuf>,
    /// Step-time noise on purpose: the relative standard deviation of a
    /// factor drawn every half second and shared by all requests (0.04 = 4%).
    #[arg(long)]
    jitter: Option<f64>,
    /// Seed of the jitter, so a noisy run can be made again.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Quirks of servers other than vLLM, to try the runner on them:
    /// streams never carry usage (llama-cpp-python).
    #[arg(long)]
    no_stream_usage: bool,
    /// A new request ends the running streams with [DONE] and no finish
    /// reason (llama-cpp-python's default interrupt_requests).
    #[arg(long)]
    interrupt_requests: bool,
    /// Past the context window, cut max_tokens to what fits, and answer a
    /// prompt that does not fit with an empty streamed 200 (llama-cpp-python).
    #[arg(long)]
    cap_at_context: bool,
    /// /v1/models without max_model_len.
    #[arg(long)]
    no_max_model_len: bool,
    /// No /metrics, /version or /health (llama-cpp-python has none).
    #[arg(long)]
    no_vllm_routes: bool,
    /// Where the tokenizer answers: vllm (/tokenize), extras
    /// (/extras/tokenize, llama-cpp-python) or none.
    #[arg(long, default_value = "vllm")]
    tokenizer: String,
    /// KV grows with each request's tokens, and a request whose next step
    /// does not fit is preempted (vllm:num_preemptions_total).
    #[arg(long)]
    preempt_when_full: bool,
    /// Draft tokens per speculative step (with --tokens-per-step above 1),
    /// of which tokens-per-step - 1 are accepted.
    #[arg(long)]
    spec_draft_tokens: Option<u64>,
    /// Emulated GPUs the engine runs on: a DCGM exporter at /dcgm/metrics,
    /// and /nvidia-smi for a stand-in nvidia-smi.
    #[arg(long)]
    gpus: Option<u32>,
    /// A throttle event: FROM_S,TO_S,REASONS,SLOW (seconds after start,
    /// NVML clock-event bits such as 0x20, the engine's slowdown factor).
    #[arg(long)]
    throttle: Option<String>,
}

/// `--throttle FROM_S,TO_S,REASONS,SLOW`.
fn throttle_event(text: &str) -> emulator::ThrottleEvent {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let number = |i: usize| -> f64 {
        parts.get(i).and_then(|p| p.parse().ok()).unwrap_or_else(|| {
            eprintln!("--throttle: expected FROM_S,TO_S,REASONS,SLOW, e.g. 10,20,0x20,1.5; found {text:?}");
            std::process::exit(2);
        })
    };
    let reasons = parts
        .get(2)
        .and_then(|r| match r.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => r.parse().ok(),
        })
        .unwrap_or_else(|| {
            eprintln!(
                "--throttle: the reasons {:?} are not a number",
                parts.get(2)
            );
            std::process::exit(2);
        });
    emulator::ThrottleEvent {
        from_s: number(0),
        to_s: number(1),
        reasons,
        slow: number(3),
    }
}

#[tokio::main]
async fn main() {
    let a = Args::parse();
    let config = emulator::EmulatorConfig {
        max_model_len: a.max_model_len,
        prefill_tok_per_s: a.prefill_tok_per_s,
        step: Duration::from_millis(a.step_ms),
        tokens_per_step: a.tokens_per_step,
        kv_capacity: a.kv_capacity,
        max_running: a.max_running,
        loop_after_tokens: a.loop_after,
        jitter: a.jitter.map(|sd| emulator::Jitter {
            sd,
            segment: Duration::from_millis(500),
            seed: a.seed,
        }),
        stream_usage: !a.no_stream_usage,
        interrupt_requests: a.interrupt_requests,
        cap_at_context: a.cap_at_context,
        report_max_model_len: !a.no_max_model_len,
        vllm_routes: !a.no_vllm_routes,
        preempt_when_full: a.preempt_when_full,
        spec_draft_tokens: a.spec_draft_tokens,
        gpus: a.gpus.map(|n| emulator::GpuConfig {
            total: n,
            used: n,
            throttle: a.throttle.as_deref().map(throttle_event),
            ..Default::default()
        }),
        tokenizer: match a.tokenizer.as_str() {
            "vllm" => emulator::Tokenizer::Vllm,
            "extras" => emulator::Tokenizer::Extras,
            "none" => emulator::Tokenizer::None,
            other => {
                eprintln!("--tokenizer: expected vllm, extras or none, found {other:?}");
                std::process::exit(2);
            }
        },
        ..Default::default()
    };
    let emu = emulator::start_on(config, &format!("127.0.0.1:{}", a.port)).await;
    println!("emulated engine at {} (Ctrl-C stops)", emu.url);
    let _ = tokio::signal::ctrl_c().await;
    if let Some(path) = a.token_log {
        let mut csv = String::from("unix_s,tokens\n");
        for (t, k) in emu.engine.emissions() {
            csv.push_str(&format!("{t:.6},{k}\n"));
        }
        std::fs::write(&path, csv).expect("token log written");
        println!("token log: {}", path.display());
    }
}
