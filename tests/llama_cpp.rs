//! `sitegen run` against a real inference server: llama.cpp's own HTTP server
//! (the xllamacpp wheel) on the CPU, with a tiny random-weight model written
//! locally (tests/llama/make_model.py). Nothing is downloaded from a model hub.
//!
//! Needs a Python with xllamacpp, gguf and numpy: `.ci/run` makes one in
//! target/llama-venv. Without it the test says why it skipped; with `CI` set
//! it fails instead.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::repo;
use sitegen::model::{Run, Status};

fn python() -> Option<PathBuf> {
    let python = std::env::var_os("SITEGEN_LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/llama-venv/bin/python"));
    let works = Command::new(&python)
        .args(["-c", "import xllamacpp, gguf, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    let why = format!(
        "no Python with xllamacpp, gguf and numpy at {}",
        python.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("llama.cpp test cannot run in CI: {why}");
    }
    eprintln!("llama.cpp test skipped: {why}. .ci/run sets it up.");
    None
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
                "2".into(),
            ]),
        // llama.cpp logs every request: keep the test output readable.
        std::process::Stdio::null(),
    );
    assert_eq!(line, "ready", "serve.py did not start");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !reqwest::blocking::get(format!("{url}/v1/models")).is_ok_and(|r| r.status().is_success())
    {
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

/// llama.cpp's own time per generated token for one request of `prompt_words` words.
fn server_ms_per_token(url: &str) -> f64 {
    let body = serde_json::json!({
        "model": "tiny-llama", "prompt": "Measured once more by the server itself ".repeat(20),
        "max_tokens": 64, "ignore_eos": true, "temperature": 1.0, "stream": false,
    });
    let v: serde_json::Value = reqwest::blocking::Client::new()
        .post(format!("{url}/v1/completions"))
        .json(&body)
        .send()
        .unwrap()
        .json()
        .unwrap();
    v["timings"]["predicted_per_token_ms"].as_f64().unwrap()
}

#[test]
fn a_real_llama_cpp_server_is_measured_and_its_page_builds() {
    let Some(python) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("tiny.gguf");
    let made = Command::new(&python)
        .arg(repo().join("tests/llama/make_model.py"))
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = start_server(&python, &model);

    let data = tmp.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_sitegen"))
        .args([
            "run",
            "--url",
            &server.url,
            "--run-id",
            "tiny-llama-cpu",
            "--data",
        ])
        .arg(&data)
        .args([
            "--contexts",
            "256,512",
            "--concurrency",
            "1,2,4",
            "--duration",
            "3s",
            "--max-output",
            "64",
            "--temperature",
            "1.0",
            "--metrics-interval",
            "250ms",
            "--model-name",
            "Tiny llama (random weights)",
            "--hardware-type",
            "CPU",
            "--gpu",
            "CPU",
            "--gpu-count",
            "1",
            "--launch-command",
            "python tests/llama/serve.py tiny.gguf PORT 4096 2 2",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("probe: found llama.cpp's /props (slots: 2, n_ctx per slot: 2048)"),
        "{stderr}"
    );

    let run: Run = sitegen::store::load_run(&data.join("tiny-llama-cpu")).unwrap();
    assert_eq!(run.meta.engine.name, "llama.cpp");
    assert_eq!(run.cells.len(), 2 + 6);
    for p in run.prefill_cells() {
        assert_eq!(p.status, Status::Valid, "{:?}", p.reason);
        // /tokenize with add_special counts the BOS token, as usage.prompt_tokens does.
        assert_eq!(
            p.prompt_tokens,
            Some(p.context_tokens),
            "prompt length at {}",
            p.context_tokens
        );
        assert!(p.ttft_ms.unwrap() > 0.0 && p.prompt_tok_per_s.unwrap() > 0.0);
    }
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

    // The runner's time between tokens is llama.cpp's own time per token.
    let single = run.decode_cells().find(|c| c.concurrency == 1).unwrap();
    let runner_ms = single.tbt_median_ms.unwrap();
    let server_ms = server_ms_per_token(&server.url);
    assert!(
        (runner_ms - server_ms).abs() <= 0.5 * server_ms,
        "time between tokens: runner {runner_ms:.3} ms, llama.cpp timings {server_ms:.3} ms"
    );
    eprintln!(
        "llama.cpp: runner {runner_ms:.3} ms between tokens, server timings {server_ms:.3} ms per token"
    );

    // The measured run becomes a page.
    let site = tmp.path().join("site");
    sitegen::pipeline::build_site(&data, &site).unwrap();
    let page = std::fs::read_to_string(site.join("runs/tiny-llama-cpu/index.html")).unwrap();
    assert!(page.contains("<h1>Tiny llama (random weights) on CPU ×1</h1>"));
    assert!(page.contains("Requests queued"));
}
