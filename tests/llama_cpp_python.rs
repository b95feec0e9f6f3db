//! `sitegen run` against llama-cpp-python's server (`python -m
//! llama_cpp.server`), one of the most common local servers, and unlike
//! vLLM in every way that matters to a benchmark client: its streams carry
//! no usage, its tokenizer is at /extras/tokenize, nothing says its context
//! window but its refusals, and by default a new request ends the running
//! stream (`interrupt_requests`). The tiny random-weight model of
//! tests/llama/make_model.py runs on the CPU; nothing is downloaded.
//!
//! Needs llama-cpp-python's venv in ~/.cache/sitegen (tests/servers/install.sh,
//! which .ci/run calls) and target/llama-venv for the model writer. A test
//! target of its own (`harness = false`, tests/common/tier.rs).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sitegen::model::{Run, Status};

const VERSION: &str = "0.3.36";
const N_CTX: u64 = 4096;
/// Output per request: with random weights a stray UTF-8 byte token makes
/// the server hold its later tokens back and re-decode them at every step,
/// at a cost that grows fast with the output's length (a 3,000-token stream
/// spun for minutes); short requests stay clear of it.
const MAX_OUTPUT: &str = "32";

/// The tests time a server on a 2-core machine: one at a time, so one
/// test's server does not slow another's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Tools {
    /// llama-cpp-python's venv.
    server: PathBuf,
    /// A Python with gguf and numpy, which writes the model.
    model_writer: PathBuf,
}

fn main() -> std::process::ExitCode {
    common::tier::run(
        "llama-cpp-python",
        tools,
        vec![
            (
                "its_default_settings_are_measured_and_interrupted_streams_are_cut_short",
                its_default_settings_are_measured_and_interrupted_streams_are_cut_short,
            ),
            (
                "the_window_counts_what_crossed_the_wire",
                the_window_counts_what_crossed_the_wire,
            ),
            (
                "without_interrupts_requests_wait_and_the_cell_says_so",
                without_interrupts_requests_wait_and_the_cell_says_so,
            ),
            (
                "capped_requests_are_not_valid_and_a_refused_prompt_shows_the_server_s_words",
                capped_requests_are_not_valid_and_a_refused_prompt_shows_the_server_s_words,
            ),
            (
                "a_second_run_on_the_same_server_measures_a_cold_prefill",
                a_second_run_on_the_same_server_measures_a_cold_prefill,
            ),
        ],
    )
}

fn tools() -> Result<Tools, String> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or("no HOME to find ~/.cache/sitegen in")?;
    let server = cache.join(format!("sitegen/llama-cpp-python-{VERSION}/bin/python"));
    let imports = |python: &Path, modules: &str| {
        Command::new(python)
            .args(["-c", &format!("import {modules}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !imports(&server, "llama_cpp.server.app") {
        return Err(format!(
            "no llama-cpp-python {VERSION} at {} (tests/servers/install.sh)",
            server.display()
        ));
    }
    let model_writer = common::repo().join("target/llama-venv/bin/python");
    if !imports(&model_writer, "gguf, numpy") {
        return Err(format!(
            "no Python with gguf and numpy at {}",
            model_writer.display()
        ));
    }
    Ok(Tools {
        server,
        model_writer,
    })
}

/// The server on the tiny model, killed when dropped.
struct Server {
    _process: common::Background,
    _model: tempfile::TempDir,
    url: String,
}

/// Starts llama-cpp-python's server on the tiny model with `n_ctx` 4096 and
/// one thread, plus `extra` settings; waits until /v1/models answers.
fn serve(tools: &Tools, extra: &[&str]) -> Server {
    let model = tempfile::tempdir().unwrap();
    let gguf = model.path().join("tiny.gguf");
    let made = Command::new(&tools.model_writer)
        .arg(common::repo().join("tests/llama/make_model.py"))
        .arg(&gguf)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = common::free_port();
    let child = Command::new(&tools.server)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(&gguf)
        .args(["--model_alias", "tiny-llama", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--n_ctx", &N_CTX.to_string()])
        .args([
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
            "--verbose",
            "False",
        ])
        .args(extra)
        // Its settings fall back to environment variables of the same names.
        .env_remove("HOST")
        .env_remove("PORT")
        .env_remove("N_CTX")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !common::http_get(&format!("{url}/v1/models")).is_ok_and(|r| r.status().is_success()) {
        assert!(
            Instant::now() < deadline,
            "llama-cpp-python did not answer /v1/models"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Server {
        _process: common::Background(child),
        _model: model,
        url,
    }
}

/// `sitegen run` against `url` into `data/<id>`: what it printed, and the run.
fn sitegen_run(url: &str, data: &Path, id: &str, args: &[&str]) -> (String, Run) {
    let short = ["--max-output", MAX_OUTPUT, "--temperature", "1.0"];
    common::sitegen_run_on_cpu(url, data, id, &[&short[..], args].concat())
}

/// Each prefill cell is Valid with the prompt length its context asked
/// for, as the server counted the same request not streamed (its stream
/// reports none).
fn assert_prefill_exact(run: &Run) {
    for p in run.prefill_cells() {
        assert_eq!(p.status, Status::Valid, "{:?}", p.reason);
        assert_eq!(
            p.prompt_tokens,
            Some(p.context_tokens),
            "at {}",
            p.context_tokens
        );
        assert_eq!(
            p.prompt_tokens_from,
            Some(sitegen::model::PromptCount::Unstreamed)
        );
    }
}

fn its_default_settings_are_measured_and_interrupted_streams_are_cut_short(tools: &Tools) {
    let _serial = serial();
    let server = serve(tools, &[]);
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut cut_short_cells = 0;
    for endpoint in ["completions", "chat"] {
        let (stderr, run) = sitegen_run(
            &server.url,
            &data,
            endpoint,
            &[
                "--endpoint",
                endpoint,
                "--contexts",
                "256,1K",
                "--concurrency",
                "1,2",
                "--duration",
                "3s",
            ],
        );
        for said in [
            "probe: found /extras/tokenize (Extras style)",
            "tokens: the stream carries no usage: tokens counted one per streamed event",
            "probe: found max_model_len 4096 in the server's refusal",
        ] {
            assert!(
                stderr.contains(said),
                "{endpoint}: {said:?} not in:\n{stderr}"
            );
        }
        assert_eq!(run.meta.engine.name, "llama-cpp-python");
        assert_eq!(run.meta.engine.version.as_deref(), Some(VERSION));
        assert_prefill_exact(&run);
        for c in run.decode_cells() {
            match c.concurrency {
                // One stream at a time: nothing interrupts it.
                1 => assert_eq!(c.status, Status::Valid, "{endpoint}: {:?}", c.reason),
                // Each new request ends the running one: counted, and not
                // Valid. On a busy host the second request may instead wait
                // out the whole window behind the first (the server runs one
                // at a time), which the cell says as queued.
                _ => {
                    let reason = c.reason.as_ref().unwrap().words();
                    eprintln!(
                        "{endpoint} {} × 2: {:?}: {reason}",
                        sitegen::model::format::count(c.context_tokens),
                        c.status
                    );
                    match c.status {
                        Status::Error => {
                            assert!(reason.contains("were cut short"), "{reason}");
                            let detail = c.detail.as_ref().unwrap();
                            let cut = detail
                                .requests
                                .iter()
                                .filter(|r| r.finish_reason == "cut short")
                                .count();
                            assert!(cut > 0);
                            cut_short_cells += 1;
                        }
                        Status::RequestsQueued => assert!(
                            reason.contains("at most 1 of 2 requests streamed at once"),
                            "{endpoint} × 2: {reason}"
                        ),
                        other => panic!("{endpoint} × 2: {other:?}: {reason}"),
                    }
                }
            }
        }
    }
    assert!(
        cut_short_cells > 0,
        "no cell of 2 requests at once saw a stream cut short"
    );
}

/// sitegen's window against tests/servers/observer.py, a proxy between
/// sitegen and the server that notes when each text event went by: the
/// tokens sitegen counted in its window are the events the observer saw in
/// the same span of wall-clock time (give or take one at each edge), its
/// decoding time is the observer's, and the stream was kept busy (a
/// finished request replaced at once). The observer sees the same bytes at
/// the same moments, so the machine's drift between two measurements (5
/// pairs of 3 s windows against a separate client differed by 0.83x to
/// 1.25x here) does not enter.
fn the_window_counts_what_crossed_the_wire(tools: &Tools) {
    let _serial = serial();
    let server = serve(tools, &[]);
    let port = common::free_port();
    let _observer = common::Background(
        Command::new(&tools.server)
            .arg(common::repo().join("tests/servers/observer.py"))
            .args([&server.url, &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let via = format!("http://127.0.0.1:{port}");
    let observed = || -> Option<serde_json::Value> {
        let r = common::http_get(&format!("{via}/observed")).ok()?;
        r.json().ok()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while observed().is_none() {
        assert!(Instant::now() < deadline, "the observer did not answer");
        std::thread::sleep(Duration::from_millis(100));
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut cells = Vec::new();
    for endpoint in ["completions", "chat"] {
        let (_, run) = sitegen_run(
            &via,
            &data,
            endpoint,
            &[
                "--endpoint",
                endpoint,
                "--contexts",
                "256",
                "--concurrency",
                "1",
                "--duration",
                "3s",
                "--max-model-len",
                "4096",
            ],
        );
        let cell = run.decode_cell(256, 1).unwrap().clone();
        assert_eq!(cell.status, Status::Valid, "{endpoint}: {:?}", cell.reason);
        cells.push((endpoint, cell));
    }
    let requests = observed().unwrap()["requests"].as_array().unwrap().clone();
    let times = |r: &serde_json::Value, key: &str| -> Vec<f64> {
        r[key].as_array().map_or_else(
            || vec![r[key].as_f64().unwrap()],
            |a| a.iter().map(|t| t.as_f64().unwrap()).collect(),
        )
    };
    for (endpoint, cell) in cells {
        let start = cell.detail.as_ref().unwrap().window_start_unix_s;
        let window = cell.measured_s.unwrap();
        let end = start + window;
        let overlap = |a: f64, b: f64| (b.min(end) - a.max(start)).max(0.0);
        let (mut tokens, mut decoding, mut in_flight) = (0u64, 0.0, 0.0);
        for r in &requests {
            let events = times(r, "events");
            tokens += events.iter().filter(|&&t| start <= t && t < end).count() as u64;
            if let (Some(first), Some(last)) = (events.first(), events.last()) {
                decoding += overlap(*first, *last);
            }
            in_flight += overlap(times(r, "sent")[0], times(r, "ended")[0]);
        }
        let ours = cell.output_tokens.unwrap();
        let active = cell.avg_active_requests.unwrap();
        // The observer sees events; sitegen counts tokens, and an event that
        // held two (a split multi-byte character, which the server proved by
        // generating every max_tokens) counts both, as its reason says:
        // "K of N requests streamed fewer events than tokens (M fewer on average)".
        let merged = cell
            .reason
            .as_ref()
            .map(|r| r.words())
            .as_deref()
            .and_then(|r| {
                let (head, rest) = r.split_once(" requests streamed fewer events than tokens (")?;
                let k: f64 = head
                    .rsplit("; ")
                    .next()?
                    .split(" of ")
                    .next()?
                    .parse()
                    .ok()?;
                let m: f64 = rest.split(" fewer on average").next()?.parse().ok()?;
                Some((k * m).round() as u64)
            });
        let events = ours - merged.unwrap_or(0);
        // Each request as the observer saw it, matched on when it was sent:
        // the observer passes a request on after sitegen sent it, so the
        // least lag is how far sitegen's window start sits from the wall
        // clock (a hop of a fraction of a millisecond when it is true).
        let detail = cell.detail.as_ref().unwrap();
        let seen: Vec<(&sitegen::model::RequestSample, &serde_json::Value, f64)> = detail
            .requests
            .iter()
            .map(|sample| {
                let sent = start + sample.start_s;
                let lag = |r: &serde_json::Value| times(r, "sent")[0] - sent;
                let r = requests
                    .iter()
                    .min_by(|a, b| lag(a).abs().total_cmp(&lag(b).abs()))
                    .unwrap();
                (sample, r, lag(r))
            })
            .collect();
        let least_lag = seen.iter().map(|s| s.2).fold(f64::INFINITY, f64::min);
        eprintln!(
            "{endpoint}: sitegen counted {ours} tokens in its {window} s window ({} of them in events that held two), the observer {tokens} events; decoding {active:.3} against {:.3}; in flight {:.3} of the window; the observer passed requests on {:.2} ms after sitegen sent them, at least",
            merged.unwrap_or(0),
            decoding / window,
            in_flight / window,
            least_lag * 1000.0
        );
        if events.abs_diff(tokens) > 2 {
            // Request by request, so that a failure says which request and
            // which edge differed.
            for (sample, r, lag) in &seen {
                let observed = times(r, "events");
                let inside = observed.iter().filter(|&&t| start <= t && t < end).count();
                eprintln!(
                    "  sent at {:.4} s: sitegen {} tokens in {} chunks ({}), the observer {inside} events inside, {} in all, the last at {:.4} s; passed on {:.2} ms later",
                    sample.start_s,
                    sample.output_tokens,
                    sample.chunks,
                    sample.finish_reason,
                    observed.len(),
                    observed.last().map_or(f64::NAN, |t| t - start),
                    lag * 1000.0,
                );
            }
            panic!("{endpoint}: {ours} tokens ({events} events) against {tokens} events");
        }
        assert!(
            (active - decoding / window).abs() <= 0.02,
            "{endpoint}: decoding {active:.3} against {:.3}",
            decoding / window
        );
        // Replacing a request costs a connection and the proxy's own hop.
        assert!(
            in_flight / window >= 0.9,
            "{endpoint}: a stream in flight {:.3} of the window",
            in_flight / window
        );
    }
}

fn without_interrupts_requests_wait_and_the_cell_says_so(tools: &Tools) {
    let _serial = serial();
    let server = serve(tools, &["--interrupt_requests", "False"]);
    let tmp = tempfile::tempdir().unwrap();
    let (_, run) = sitegen_run(
        &server.url,
        &tmp.path().join("data"),
        "serial",
        &[
            "--contexts",
            "256",
            "--concurrency",
            "1,2",
            "--duration",
            "3s",
            "--max-model-len",
            "4096",
        ],
    );
    assert_prefill_exact(&run);
    let one = run.decode_cell(256, 1).unwrap();
    assert_eq!(one.status, Status::Valid, "{:?}", one.reason);
    // The server runs one request at a time: the second waits, finished, never cut.
    let two = run.decode_cell(256, 2).unwrap();
    assert_eq!(two.status, Status::RequestsQueued, "{:?}", two.reason);
    let detail = two.detail.as_ref().unwrap();
    assert!(
        detail
            .requests
            .iter()
            .all(|r| r.finish_reason != "cut short")
    );
    assert_eq!(detail.peak_decoding_requests, 1);
}

fn capped_requests_are_not_valid_and_a_refused_prompt_shows_the_server_s_words(tools: &Tools) {
    let _serial = serial();
    let server = serve(tools, &[]);
    let tmp = tempfile::tempdir().unwrap();
    // A wrong --max-model-len: 4,080 + 32 does not fit 4,096, and 4,100 not at all.
    let (_, run) = sitegen_run(
        &server.url,
        &tmp.path().join("data"),
        "edge",
        &[
            "--contexts",
            "4080,4100",
            "--concurrency",
            "1",
            "--duration",
            "3s",
            "--max-model-len",
            "8192",
        ],
    );
    let capped = run.decode_cell(4080, 1).unwrap();
    assert_eq!(capped.status, Status::Error);
    let reason = capped.reason.as_ref().unwrap().words();
    assert!(
        reason.contains("were capped: the server ended them with finish_reason \"length\""),
        "{reason}"
    );
    let refused = run
        .prefill_cells()
        .find(|c| c.context_tokens == 4100)
        .unwrap();
    assert_eq!(refused.status, Status::Error);
    let reason = refused.reason.as_ref().unwrap().words();
    assert!(
        reason.contains("HTTP 400") && reason.contains("maximum context length is 4096 tokens"),
        "{reason}"
    );
}

/// llama-cpp-python evaluates only what a prompt does not share with the
/// tokens the model evaluated last (its longest common prefix), so a run
/// that sent the previous run's last text again would find it computed.
/// Each run's texts are its own: the second run's prefill is as cold as
/// the first's, within noise.
fn a_second_run_on_the_same_server_measures_a_cold_prefill(tools: &Tools) {
    let _serial = serial();
    let server = serve(tools, &["--interrupt_requests", "False"]);
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut ttfts = Vec::new();
    for run_id in ["first", "second"] {
        let (_, run) = sitegen_run(
            &server.url,
            &data,
            run_id,
            &[
                "--contexts",
                "1K",
                "--concurrency",
                "1",
                "--duration",
                "1s",
                "--max-model-len",
                "4096",
            ],
        );
        assert_prefill_exact(&run);
        ttfts.push(run.prefill_cells().next().unwrap().ttft_ms.unwrap());
    }
    let ratio = ttfts[1] / ttfts[0];
    eprintln!(
        "llama-cpp-python prefill of 1,024 tokens: {:.1} ms, then {:.1} ms on the same server ({ratio:.2}x)",
        ttfts[0], ttfts[1]
    );
    assert!(
        (0.5..=2.0).contains(&ratio),
        "the second run's prefill took {ratio:.2}x the first's"
    );
}
