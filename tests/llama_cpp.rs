//! `sitegen run` against a real inference server: llama.cpp's own HTTP server
//! (the xllamacpp wheel) on the CPU, with a tiny random-weight model written
//! locally (tests/llama/make_model.py). Nothing is downloaded from a model hub.
//!
//! Needs a Python with xllamacpp, gguf and numpy: `.ci/run` makes one in
//! target/llama-venv. A test target of its own (`harness = false`, see
//! tests/common/tier.rs): without the venv its test is reported as ignored
//! with the reason; with `CI` set it fails instead.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use common::repo;
use sitegen::model::{Run, Status};

fn main() -> ExitCode {
    common::tier::run(
        "llama.cpp",
        python,
        vec![
            (
                "a_real_llama_cpp_server_is_measured_and_its_page_builds",
                a_real_llama_cpp_server_is_measured_and_its_page_builds,
            ),
            (
                "chat_prompts_are_exact_after_llama_cpp_s_template",
                chat_prompts_are_exact_after_llama_cpp_s_template,
            ),
            (
                "a_second_run_on_the_same_server_measures_a_cold_prefill",
                a_second_run_on_the_same_server_measures_a_cold_prefill,
            ),
            (
                "sessions_find_their_history_in_llama_cpp_s_slot_cache",
                sessions_find_their_history_in_llama_cpp_s_slot_cache,
            ),
        ],
    )
}

fn python() -> Result<PathBuf, String> {
    let python = std::env::var_os("SITEGEN_LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/llama-venv/bin/python"));
    let works = Command::new(&python)
        .args(["-c", "import xllamacpp, gguf, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Ok(python);
    }
    Err(format!(
        "no Python with xllamacpp, gguf and numpy at {}",
        python.display()
    ))
}

/// llama.cpp's server in a child process, killed when dropped.
struct LlamaServer {
    _process: common::Background,
    url: String,
}

const SLOTS: u32 = 2;
const MAX_OUTPUT: u32 = 64;
const N_CTX: u32 = 4096; // split into 2 slots of 2,048 tokens

fn start_server(python: &Path, model: &Path) -> LlamaServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (process, line) = common::spawn_with_first_line(
        Command::new(python)
            .arg(repo().join("tests/llama/serve.py"))
            .arg(model)
            .args([
                port.to_string(),
                N_CTX.to_string(),
                SLOTS.to_string(),
                // One thread: two threads that wait on each other stall for
                // whole scheduler slices when another process holds the cores.
                "1".into(),
            ]),
        // llama.cpp logs every request: keep the test output readable.
        std::process::Stdio::null(),
    );
    assert_eq!(line, "ready", "serve.py did not start");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !common::http_get(&format!("{url}/v1/models")).is_ok_and(|r| r.status().is_success()) {
        assert!(
            Instant::now() < deadline,
            "llama.cpp did not answer /v1/models"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    LlamaServer {
        _process: process,
        url,
    }
}

/// How far the runner's time between tokens may be from llama.cpp's own time
/// per token, as the median over a cell's finished requests of their ratio.
/// Both time the same tokens on one machine, so load slows them alike. What
/// is left is systematic (llama.cpp divides by all tokens, the client by the
/// gaps after the first: 1/64) or one request's first or last chunk reaching
/// a busy client late, which at 0.5 ms per token moves that one request by up
/// to 10% and the median by little. A wrong runner is wrong for every request.
const TBT_TOLERANCE: f64 = 0.05;

/// Whether two figures agree within [`TBT_TOLERANCE`].
fn tbt_agrees(runner_ms: f64, server_ms: f64) -> bool {
    (runner_ms - server_ms).abs() <= TBT_TOLERANCE * server_ms
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The tiny random-weight model, written into a fresh folder, served.
fn serve_tiny_model(python: &Path) -> (tempfile::TempDir, LlamaServer) {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("tiny.gguf");
    let made = Command::new(python)
        .arg(repo().join("tests/llama/make_model.py"))
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = start_server(python, &model);
    (tmp, server)
}

/// Serves the tiny model and runs `sitegen run` against it: two small
/// contexts, 3 s windows of at most 64 tokens, sampled at temperature 1.0,
/// metrics every 250 ms, on "1 × CPU"; `extra` adds the test's own flags.
/// Every prefill prompt must be exactly its context's length (llama.cpp's
/// /tokenize with add_special counts the BOS token, as its usage does).
/// Gives the folder (data/ inside), the run and what sitegen printed.
fn measure_tiny_model(
    python: &Path,
    run_id: &str,
    extra: &[&str],
) -> (tempfile::TempDir, Run, String) {
    let (tmp, server) = serve_tiny_model(python);
    let data = tmp.path().join("data");
    let max_output = MAX_OUTPUT.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_sitegen"))
        .args(["run", "--url", &server.url, "--run-id", run_id, "--data"])
        .arg(&data)
        .args([
            "--contexts",
            "256,512",
            "--duration",
            "3s",
            "--max-output",
            &max_output,
        ])
        .args(["--temperature", "1.0", "--metrics-interval", "250ms"])
        .args(["--gpu", "CPU", "--gpu-count", "1"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let run: Run = sitegen::store::load_run(&data.join(run_id)).unwrap();
    for p in run.prefill_cells() {
        assert_eq!(p.status, Status::Valid, "{:?}", p.reason);
        assert_eq!(
            p.prompt_tokens,
            Some(p.context_tokens),
            "prompt length at {}",
            p.context_tokens
        );
        assert!(p.ttft_ms.unwrap() > 0.0 && p.prompt_tok_per_s.unwrap() > 0.0);
    }
    (tmp, run, stderr)
}

/// Chat through llama.cpp's own template: every prompt is the context's
/// tokens as llama.cpp counts the message list, and the runner's time
/// between tokens is llama.cpp's, request by request, as with completions.
#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn chat_prompts_are_exact_after_llama_cpp_s_template(python: &PathBuf) {
    let (_tmp, run, stderr) = measure_tiny_model(
        python,
        "chat",
        &["--endpoint", "chat", "--concurrency", "1,2"],
    );
    assert!(stderr.contains("the chat template adds"), "{stderr}");
    assert_eq!(
        run.meta.run.endpoint,
        Some(sitegen::model::ApiEndpoint::Chat)
    );
    for c in run.decode_cells() {
        assert_eq!(
            c.status,
            Status::Valid,
            "{} x {}: {:?}",
            c.context_tokens,
            c.concurrency,
            c.reason
        );
        let prompts = c.detail.as_ref().unwrap().prompt_tokens;
        assert_eq!(prompts, Some(c.context_tokens));
    }
    assert_tbt_is_llama_cpp_s(&run, "chat");
}

#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn a_real_llama_cpp_server_is_measured_and_its_page_builds(python: &PathBuf) {
    let (tmp, run, stderr) = measure_tiny_model(
        python,
        "tiny-llama-cpu",
        &[
            "--concurrency",
            "1,2,4",
            "--model-name",
            "Tiny llama (random weights)",
            "--hardware-type",
            "CPU",
            "--launch-command",
            "python tests/llama/serve.py tiny.gguf PORT 4096 2 1",
        ],
    );
    assert!(
        stderr.contains("probe: found llama.cpp's /props (slots: 2, n_ctx per slot: 2048)"),
        "{stderr}"
    );
    assert_eq!(run.meta.engine.name, "llama.cpp");
    assert_eq!(run.cells.len(), 2 + 6);
    for c in run.decode_cells() {
        // Two slots: four requests cannot all run, and llama.cpp says it defers them.
        let expected = if c.concurrency > SLOTS {
            Status::RequestsQueued
        } else {
            Status::Valid
        };
        assert_eq!(
            c.status, expected,
            "{} x {}: {:?}",
            c.context_tokens, c.concurrency, c.reason
        );
        let detail = c.detail.as_ref().unwrap();
        assert_eq!(detail.failed_requests, 0);
        if c.concurrency > SLOTS {
            assert!(detail.peak_decoding_requests < c.concurrency);
        }
        let server_side = detail.server.as_ref().unwrap();
        let generated = server_side.generation_tokens_delta.unwrap();
        let received = server_side.client_output_tokens as f64;
        // The counts differ only by the requests cancelled at the window's end
        // (at most one per stream): tokens the client received and the server
        // may not count, or tokens the server made before it saw the cancel.
        let cancelled_at_most = f64::from(c.concurrency * MAX_OUTPUT);
        assert!(
            (received - generated).abs() <= cancelled_at_most,
            "{} x {}: llamacpp:tokens_predicted_total grew {generated}, the client counted {received}",
            c.context_tokens,
            c.concurrency
        );
        if c.concurrency > SLOTS {
            assert!(
                server_side
                    .samples
                    .iter()
                    .any(|s| s.waiting.is_some_and(|w| w > 0.0)),
                "no deferred request seen"
            );
        }
    }

    assert_tbt_is_llama_cpp_s(&run, "completions");
    assert_llama_cpp_s_counters_are_recorded(&run, &stderr);

    // The measured run becomes a page.
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&tmp.path().join("data"), &site).unwrap();
    let page = std::fs::read_to_string(site.join("runs/tiny-llama-cpu/index.html")).unwrap();
    assert!(page.contains("<h1>Tiny llama (random weights) on CPU ×1</h1>"));
    assert!(page.contains("Requests queued"));
}

/// llama.cpp's own counters in every decode cell (its server serves
/// /metrics only with `--metrics`: serve.py sets `endpoint_metrics`, the
/// same switch): running and waiting requests and the prefix cache
/// (`llamacpp:prompt_tokens_cached_total` over it and
/// `llamacpp:prompt_tokens_total`). What this llama.cpp lacks, the run said
/// once and why: builds since its KV-cache rework of 2025 serve no
/// `llamacpp:kv_cache_usage_ratio`, and llama.cpp never preempts. Without a
/// draft model no drafts are made, so there is no acceptance to record.
fn assert_llama_cpp_s_counters_are_recorded(run: &Run, stderr: &str) {
    let coverage = stderr
        .lines()
        .find(|l| l.starts_with("server counters: llama.cpp's /metrics"))
        .unwrap_or_else(|| panic!("the run says what llama.cpp's /metrics has: {stderr}"));
    eprintln!("llama.cpp: {coverage}");
    assert!(
        coverage.contains("preemptions (llama.cpp counts none)"),
        "{coverage}"
    );
    for c in run.decode_cells() {
        let cell = format!("{} x {}", c.context_tokens, c.concurrency);
        let s = c
            .telemetry
            .as_ref()
            .and_then(|t| t.server.as_ref())
            .unwrap_or_else(|| panic!("{cell}: no llama.cpp counters"));
        assert_eq!(s.source, "llama.cpp's /metrics every 250 ms");
        let (running, waiting) = (s.running_max.unwrap(), s.waiting_max.unwrap());
        assert!(running <= f64::from(SLOTS), "{cell}: {running} running");
        assert_eq!(
            waiting > 0.0,
            c.concurrency > SLOTS,
            "{cell}: waiting peak {waiting}"
        );
        match s.kv_cache_usage_max {
            Some(kv) => assert!((0.0..=1.0).contains(&kv), "{cell}: KV {kv}"),
            None => assert!(
                coverage.contains("KV-cache usage (no llamacpp:kv_cache_usage_ratio)"),
                "{cell}: no KV-cache usage, and the run did not say why: {coverage}"
            ),
        }
        assert_eq!(s.preemptions, None, "{cell}");
        let hits = s
            .prefix_cache_hit_rate
            .unwrap_or_else(|| panic!("{cell}: no prefix-cache figure"));
        assert!((0.0..=1.0).contains(&hits), "{cell}: hit rate {hits}");
        assert_eq!(s.spec_acceptance_rate, None, "{cell}: no draft model");
        eprintln!(
            "llama.cpp {cell}: {} samples; running {:.2} mean, {running} peak; waiting {waiting} peak, {:.0}% of samples; KV-cache usage {}; prefix cache hits {:.1}%",
            s.samples.unwrap_or(0),
            s.running_mean.unwrap(),
            s.waiting_share.unwrap() * 100.0,
            s.kv_cache_usage_max
                .map_or("not recorded".to_string(), |kv| format!(
                    "{:.1}% peak",
                    kv * 100.0
                )),
            hits * 100.0
        );
    }
}

/// The runner's time between tokens is llama.cpp's own time per token,
/// compared request by request over the requests that finished inside the
/// window (llama.cpp reports `timings` with a request's last chunk).
fn assert_tbt_is_llama_cpp_s(run: &Run, api: &str) {
    for c in run.decode_cells() {
        let cell = format!("{} x {}", c.context_tokens, c.concurrency);
        let detail = c.detail.as_ref().unwrap();
        let finished: Vec<_> = detail
            .requests
            .iter()
            .filter(|r| r.finish_reason == "length")
            .collect();
        assert!(
            !finished.is_empty(),
            "{cell}: no request finished in the window"
        );
        let ratios: Vec<f64> = finished
            .iter()
            .map(|r| r.tbt_ms.unwrap() / r.server_ms_per_token.unwrap())
            .collect();
        let ratio = median(ratios.clone());
        assert!(
            tbt_agrees(ratio, 1.0),
            "{cell}: time between tokens: the runner's is {ratio:.3} times llama.cpp's time per token for the same requests (median over {}; all: {ratios:.3?})",
            finished.len()
        );
        // llama.cpp's counters over the window count these requests (it counts
        // a request when it finishes), and at most one more per stream: one
        // that finished on the server while the client cancelled it.
        let counters_ms = detail.server.as_ref().unwrap().ms_per_token.unwrap();
        let server_ms_sum: f64 = finished
            .iter()
            .map(|r| r.server_ms_per_token.unwrap() * r.output_tokens as f64)
            .sum();
        let tokens: f64 = finished.iter().map(|r| r.output_tokens as f64).sum();
        let mean_ms = server_ms_sum / tokens;
        // Within 10% when the finished requests are what the counters
        // counted; the share of the counters' tokens from requests the
        // client cancelled (on a busy host, few finish in the window) may
        // differ by any amount, and widens the bound by as much.
        let counted = detail
            .server
            .as_ref()
            .unwrap()
            .generation_tokens_delta
            .unwrap();
        let others = (1.0 - tokens / counted).max(0.0);
        let bound = 0.1 + others;
        assert!(
            (counters_ms - mean_ms).abs() <= bound * mean_ms,
            "{cell}: llama.cpp's counters say {counters_ms:.3} ms per token, its finished requests {mean_ms:.3} ms ({:.0}% of the counters' tokens from other requests)",
            others * 100.0
        );
        // The check has teeth: the same requests' figures made 15% wrong, in
        // either direction, fail it.
        for wrong in [1.15, 1.0 / 1.15] {
            let wrong_ratios: Vec<f64> = ratios.iter().map(|r| r * wrong).collect();
            assert!(
                !tbt_agrees(median(wrong_ratios), 1.0),
                "{cell}: a runner {wrong:.2} times off would pass the check"
            );
        }
        let worst = ratios.iter().map(|r| (r - 1.0).abs()).fold(0.0, f64::max);
        eprintln!(
            "llama.cpp {api} {cell}: median time between tokens {:.3} ms; {} finished requests: runner / llama.cpp median {ratio:.3}, farthest request {:.1}% apart; counters {counters_ms:.3} ms per token ({:.0}% of their tokens from requests cancelled at the window's end)",
            c.tbt_median_ms.unwrap(),
            finished.len(),
            worst * 100.0,
            others * 100.0
        );
    }
}

/// llama.cpp keeps each slot's last prompt and reuses its longest common
/// prefix with the next one (`cache_prompt`, on by default), choosing the
/// slot whose prompt is most alike. A second run that sent the first run's
/// texts would find them there; each run's texts are its own, so the
/// second run's prefill is as cold as the first's: its counters show at
/// most the start token reused, and the TTFTs are within noise (a prompt
/// served from the slot's cache computes one token instead of 1,024).
#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn a_second_run_on_the_same_server_measures_a_cold_prefill(python: &PathBuf) {
    let (tmp, server) = serve_tiny_model(python);
    let data = tmp.path().join("data");
    let mut ttfts = Vec::new();
    for run_id in ["first", "second"] {
        let out = Command::new(env!("CARGO_BIN_EXE_sitegen"))
            .args(["run", "--url", &server.url, "--run-id", run_id, "--data"])
            .arg(&data)
            .args(["--contexts", "1K", "--concurrency", "1", "--duration", "1s"])
            .args(["--max-output", "16", "--temperature", "1.0"])
            .args(["--gpu", "CPU", "--gpu-count", "1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let run: Run = sitegen::store::load_run(&data.join(run_id)).unwrap();
        let p = run.prefill_cells().next().unwrap();
        assert_eq!(p.status, Status::Valid, "{run_id}: {:?}", p.reason);
        assert_eq!(p.prompt_tokens, Some(1024));
        // llama.cpp counts the prompt tokens a slot reused: of a fresh text,
        // at most the start token its last prompt shared.
        let check = p.prompt_cache.as_ref().expect("llama.cpp's counters");
        assert_eq!(check.counter, "llamacpp:prompt_tokens_cached_total");
        assert_eq!(check.looked_up_tokens, 1024, "{run_id}");
        assert!(check.cached_tokens <= 1, "{run_id}: {check:?}");
        ttfts.push(p.ttft_ms.unwrap());
    }
    let ratio = ttfts[1] / ttfts[0];
    eprintln!(
        "llama.cpp prefill of 1,024 tokens: {:.1} ms, then {:.1} ms on the same server ({ratio:.2}x)",
        ttfts[0], ttfts[1]
    );
    assert!(
        (0.5..=2.0).contains(&ratio),
        "the second run's prefill took {ratio:.2}x the first's"
    );
}

/// Sessions on llama.cpp: its slots keep each conversation's prompt, so a
/// later turn computes what the session added; each answer's usage says
/// the tokens it reused, and they add up to llama.cpp's own counter.
#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn sessions_find_their_history_in_llama_cpp_s_slot_cache(python: &PathBuf) {
    let (_tmp, run, stderr) = measure_tiny_model(
        python,
        "sessions",
        &[
            "--sessions",
            "1,2",
            "--session-prefix",
            "1K",
            "--session-user",
            "256",
            "--session-answer",
            "32",
            "--sessions-only",
        ],
    );
    assert!(run.cells.is_empty(), "{stderr}");
    assert_eq!(run.sessions.len(), 2, "{stderr}");
    for w in &run.sessions {
        let s = w.sessions;
        assert_eq!(w.status, Status::Valid, "x{s}: {:?}", w.reason);
        let counter = w.server_cache.as_ref().expect("llama.cpp's /metrics");
        assert_eq!(counter.counter, "llamacpp:prompt_tokens_cached_total");
        let said: u64 = w.depths.iter().filter_map(|d| d.cached_tokens).sum();
        let prompts: u64 = w.depths.iter().filter_map(|d| d.prompt_tokens).sum();
        assert_eq!(
            (said, prompts),
            (counter.cached_tokens, counter.looked_up_tokens),
            "x{s}: the answers' usage against the counter"
        );
        assert!(counter.share().unwrap() > 0.5, "x{s}: {counter:?}");
        for d in w
            .depths
            .iter()
            .filter(|d| d.turn >= 2 && d.ttft_ms.is_some())
        {
            let (ttft, cold) = (d.ttft_median_ms().unwrap(), d.cold_ttft_ms.unwrap());
            assert!(
                ttft < cold,
                "x{s} turn {}: {ttft} ms against cold {cold} ms",
                d.turn
            );
        }
    }
}
