//! `sitegen run` through a real gateway: LiteLLM's proxy (from PyPI) in
//! front of the emulated engine, as many teams measure a server behind one.
//! The gateway forwards no tokenizer, no metrics and no context length, drops
//! the stream's per-event usage and adds its own latency; the figures must
//! still be those of the same run made directly.
//!
//! Needs LiteLLM's venv in ~/.cache/sitegen (tests/servers/install.sh, which
//! .ci/run calls). A test target of its own (`harness = false`,
//! tests/common/tier.rs).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sitegen::model::{Run, Status};

const VERSION: &str = "1.108.7";

fn main() -> std::process::ExitCode {
    common::tier::run(
        "gateway",
        litellm,
        vec![(
            "a_run_through_litellm_gives_the_figures_of_the_same_run_direct",
            a_run_through_litellm_gives_the_figures_of_the_same_run_direct,
        )],
    )
}

fn litellm() -> Result<PathBuf, String> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or("no HOME to find ~/.cache/sitegen in")?;
    let bin = cache.join(format!("sitegen/litellm-{VERSION}/bin/litellm"));
    if bin.exists() {
        Ok(bin)
    } else {
        Err(format!(
            "no LiteLLM {VERSION} at {} (tests/servers/install.sh)",
            bin.display()
        ))
    }
}

/// The emulated engine of the examples (cargo test builds it), on its own port.
fn engine() -> (common::Background, String) {
    let sitegen = PathBuf::from(env!("CARGO_BIN_EXE_sitegen"));
    let example = sitegen.parent().unwrap().join("examples/emulated_engine");
    assert!(example.exists(), "{} is missing", example.display());
    let port = common::free_port();
    let (process, line) = common::spawn_with_first_line(
        Command::new(example).args(["--port", &port.to_string(), "--max-model-len", "65536"]),
        std::process::Stdio::null(),
    );
    assert!(line.starts_with("emulated engine at"), "{line}");
    (process, format!("http://127.0.0.1:{port}"))
}

/// LiteLLM's proxy on 127.0.0.1 in front of `backend`, no database, no key,
/// no price list fetched; waits for its liveliness route (its start is
/// Python imports: tens of seconds).
fn gateway(litellm: &Path, backend: &str, dir: &Path) -> (common::Background, String) {
    let config = dir.join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: emulated-model\n    litellm_params:\n      model: openai/emulated-model\n      api_base: {backend}/v1\n      api_key: dummy\ngeneral_settings:\n  dangerously_permit_weak_or_unset_master_key: true\n"
        ),
    )
    .unwrap();
    let port = common::free_port();
    let child = Command::new(litellm)
        .args(["--config"])
        .arg(&config)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .env_remove("HOST")
        .env_remove("PORT")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let process = common::Background(child);
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    // Not /health: that sends a real request to the backend.
    while !common::http_get(&format!("{url}/health/liveliness"))
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "LiteLLM did not start in 4 minutes"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "LiteLLM ready after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    (process, url)
}

fn sitegen_run(url: &str, data: &Path, id: &str) -> (String, Run) {
    let out = Command::new(env!("CARGO_BIN_EXE_sitegen"))
        .args(["run", "--url", url, "--run-id", id, "--data"])
        .arg(data)
        .args([
            "--contexts",
            "1K",
            "--concurrency",
            "1,4",
            "--duration",
            "5s",
        ])
        // Requests longer than the window: the gateway's own latency, which
        // every new request pays (30 to 90 ms), is paid once per stream, so
        // what is compared is how the tokens are counted.
        .args(["--max-output", "2000", "--gpu", "CPU", "--gpu-count", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (stderr, sitegen::store::load_run(&data.join(id)).unwrap())
}

/// Stream-seconds of the window spent after a request's first token: the
/// window times N, less each request's wait for its first token inside it.
fn streaming_s(cell: &sitegen::model::DecodeCell) -> f64 {
    let window = cell.measured_s.unwrap();
    let detail = cell
        .detail
        .as_ref()
        .expect("the runner writes each request");
    let waiting: f64 = detail
        .requests
        .iter()
        .map(|r| {
            let first = r.start_s + r.ttft_ms.unwrap_or(f64::INFINITY) / 1000.0;
            (first.min(window) - r.start_s.max(0.0)).max(0.0)
        })
        .sum();
    window * f64::from(cell.concurrency) - waiting
}

/// Whether one round's cell at `n` requests is the same through the gateway
/// as direct, within 2%: its total once scaled by the stream-time each run
/// spent decoding (the gateway's one effect on the window should be its own
/// latency before each stream's first token, 30 ms to seconds on a busy
/// machine and not the same for every stream), and its per-request rate.
fn round_agrees(round: usize, n: u32, direct: &Run, through: &Run) -> bool {
    let (a, b) = (
        direct.decode_cell(1024, n).unwrap(),
        through.decode_cell(1024, n).unwrap(),
    );
    assert_eq!(a.status, Status::Valid, "direct × {n}: {:?}", a.reason);
    assert_eq!(b.status, Status::Valid, "gateway × {n}: {:?}", b.reason);
    let (x, y) = (a.total_tok_per_s.unwrap(), b.total_tok_per_s.unwrap());
    let (ttft_a, ttft_b) = (a.ttft_median_ms.unwrap(), b.ttft_median_ms.unwrap());
    let (streaming_a, streaming_b) = (streaming_s(a), streaming_s(b));
    let expected = x * streaming_b / streaming_a;
    let (per_a, per_b) = (
        a.per_request_tok_per_s.unwrap(),
        b.per_request_tok_per_s.unwrap(),
    );
    let agrees = (y / expected - 1.0).abs() <= 0.02 && (per_b / per_a - 1.0).abs() <= 0.02;
    eprintln!(
        "round {round}, 1K × {n}: total direct {x:.1} tok/s, through LiteLLM {y:.1} ({:.4}×; {:.4}× the direct figure scaled by the stream-seconds spent decoding, {streaming_a:.2} against {streaming_b:.2}); per request {per_a:.2} against {per_b:.2} tok/s ({:.4}×); TTFT {ttft_a:.1} ms against {ttft_b:.1} ms: {}",
        y / x,
        y / expected,
        per_b / per_a,
        if agrees {
            "agrees"
        } else {
            "the gateway lagged: measured again"
        },
    );
    agrees
}

#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn a_run_through_litellm_gives_the_figures_of_the_same_run_direct(litellm: &PathBuf) {
    let (_engine, direct_url) = engine();
    let tmp = tempfile::tempdir().unwrap();
    let (_gateway, gateway_url) = gateway(litellm, &direct_url, tmp.path());
    let data = tmp.path().join("data");
    // Alternately, round by round: the machine's speed drifts. On a host
    // too busy for LiteLLM's Python to keep pace, its streams lag for a
    // while, which no count can undo; such a round is measured again, up
    // to ROUNDS in all. A wrong count is off in every round and still fails.
    const ROUNDS: usize = 5;
    let mut pairs = Vec::new();
    let mut agreed = [false; 2];
    for round in 0..ROUNDS {
        let (_, direct) = sitegen_run(&direct_url, &data, &format!("direct-{round}"));
        let (said, through) = sitegen_run(&gateway_url, &data, &format!("gateway-{round}"));
        for line in [
            "a gateway (LiteLLM 1.108.7)",
            "found max_model_len 65536 in the server's refusal",
            "tokens counted from the stream's usage",
        ] {
            assert!(said.contains(line), "{line:?} not in:\n{said}");
        }
        for (k, n) in [1, 4].into_iter().enumerate() {
            agreed[k] |= round_agrees(round, n, &direct, &through);
        }
        pairs.push((direct, through));
        if agreed.iter().all(|a| *a) {
            break;
        }
    }
    assert!(
        agreed.iter().all(|a| *a),
        "in {ROUNDS} rounds, 1K × 1 agreed: {}, 1K × 4 agreed: {} (figures above)",
        agreed[0],
        agreed[1]
    );
    // Its prompts were as long as the direct run's, without a tokenizer.
    let (direct, through) = &pairs[0];
    let prompt = |r: &Run| r.prefill_cells().next().unwrap().prompt_tokens.unwrap();
    assert!(
        prompt(through).abs_diff(prompt(direct)) * 50 <= prompt(direct),
        "{} against {}",
        prompt(through),
        prompt(direct)
    );
}
