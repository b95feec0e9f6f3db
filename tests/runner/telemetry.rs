//! `sitegen run`'s server counters and GPU telemetry against the emulated
//! engine: its DCGM exporter, its stand-in nvidia-smi and its own counters
//! are the truth each cell's figures are checked against. Every figure
//! checked is printed.

use crate::common::figures::within;
use crate::{SERIAL, emulator, run_cli};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use emulator::{Emulator, EmulatorConfig, GpuConfig, MetricsRead};
use run_cli::{Outcome, data_dir, decode, load};
use sitegen::model::{DecodeCell, Status, Throttle};

/// Runs the sitegen binary against `url`, with `path` as its PATH when given.
async fn sitegen_run(url: &str, data: &Path, extra: &[&str], path: Option<String>) -> Outcome {
    match path {
        Some(p) => run_cli::sitegen_run(url, data, extra, &[("PATH", p.as_str())]).await,
        None => run_cli::sitegen_run(url, data, extra, &[]).await,
    }
}

/// (start, end) of a cell's window, Unix seconds.
fn window(cell: &DecodeCell) -> (f64, f64) {
    let t0 = cell.detail.as_ref().unwrap().window_start_unix_s;
    (t0, t0 + cell.measured_s.unwrap())
}

/// The `/metrics` reads the runner made for a window, from the engine's log:
/// the counters just before it (the last read before its start), the
/// samples inside it, and the counters just after its last request (the
/// first read after its end).
fn reads_of(emu: &Emulator, cell: &DecodeCell) -> (MetricsRead, Vec<MetricsRead>, MetricsRead) {
    let (t0, t1) = window(cell);
    let log = emu.engine.metrics_log.lock().unwrap().clone();
    let before = *log
        .iter()
        .rev()
        .find(|r| r.at < t0)
        .expect("a read before the window");
    let after = *log
        .iter()
        .find(|r| r.at > t1)
        .expect("a read after the window");
    let inside = log
        .iter()
        .filter(|r| r.at >= t0 && r.at <= t1)
        .copied()
        .collect();
    (before, inside, after)
}

/// Waits until `file` exists, then throttles the engine's GPUs from
/// `after` for `lasting`: the window measured next contains the event.
async fn throttle_after_file(
    emu: &Emulator,
    file: PathBuf,
    after: Duration,
    lasting: Duration,
    reasons: u64,
    slow: f64,
) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !file.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    emu.engine.schedule_throttle(after, lasting, reasons, slow);
}

/// Against the engine's DCGM exporter (4 GPUs on the node, the engine on
/// the first 2) with speculative decoding and 2 slots, at 1, 2 and 4
/// streams; a thermal event slows the engine during the 2-stream window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_energy_power_throttle_and_server_counters_match_the_engine() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig {
        tokens_per_step: 3,
        spec_draft_tokens: Some(4),
        max_running: 2,
        kv_capacity: 20_000,
        gpus: Some(GpuConfig {
            total: 4,
            used: 2,
            ..Default::default()
        }),
        ..Default::default()
    })
    .await;
    let (_tmp, data) = data_dir();
    let dcgm = format!("{}/dcgm/metrics", emu.url);
    let plan = [
        "--contexts",
        "1K",
        "--concurrency",
        "1,2,4",
        "--duration",
        "3s",
        "--max-output",
        "2000",
        "--metrics-interval",
        "250ms",
        "--gpu-metrics",
        &dcgm,
        "--gpu-count",
        "2",
    ];
    let x1_file = data.join("r/cells/decode-00001024-x001.json");
    let thermal = 0x40; // HW thermal slowdown
    let (out, ()) = tokio::join!(
        sitegen_run(&emu.url, &data, &plan, None),
        throttle_after_file(
            &emu,
            x1_file,
            Duration::from_secs(1),
            Duration::from_secs(1),
            thermal,
            2.0
        )
    );
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "GPU telemetry: DCGM exporter {dcgm}, GPUs 0,1 every 250 ms (of GPUs 0-3 it lists; energy from its counters)"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("server counters: vLLM's /metrics: running, waiting, KV-cache usage, preemptions, prefix cache, speculative decoding"),
        "{}",
        out.stderr
    );
    let run = load(&data);
    let (th0, th1) = emu.engine.throttle_window().unwrap();
    let (w0, w1) = window(decode(&run, 2));
    assert!(
        w0 < th0 && th1 < w1,
        "the test's premise: the throttle event ({th0:.2} to {th1:.2}) falls inside the 2-stream window ({w0:.2} to {w1:.2})"
    );
    for n in [1, 2, 4] {
        let cell = decode(&run, n);
        let telemetry = cell.telemetry.as_ref().expect("a cell with telemetry");
        let g = telemetry.gpus.as_ref().expect("GPU figures");
        let (t0, t1) = window(cell);
        let truth_j = emu.engine.used_gpus_energy_j(t1) - emu.engine.used_gpus_energy_j(t0);
        let tokens = cell.output_tokens.unwrap() as f64;
        let truth_w = truth_j / (t1 - t0);
        let jpt = g.joules_per_output_token.unwrap();
        let power = g.power_w_mean.unwrap();
        eprintln!(
            "x{n}: {:.4} J/token vs the exporter's counters {:.4} ({:+.3}%); mean power {power:.2} W vs {truth_w:.2} W ({:+.3}%); peak {:.1} W; SM clock {:.0} MHz; {:.0} °C max; throttle {:?}; {} samples; {:.1} tok/s",
            jpt,
            truth_j / tokens,
            (jpt / (truth_j / tokens) - 1.0) * 100.0,
            (power / truth_w - 1.0) * 100.0,
            g.power_w_max.unwrap(),
            g.sm_clock_mhz_mean.unwrap(),
            g.temp_c_max.unwrap(),
            g.throttle.unwrap(),
            g.samples.unwrap(),
            cell.total_tok_per_s.unwrap(),
        );
        assert_eq!(g.gpus, 2);
        assert_eq!(g.energy_from, Some(sitegen::model::EnergySource::Counter));
        assert!(within(jpt, truth_j / tokens, 0.02), "x{n}: J/token");
        assert!(within(power, truth_w, 0.01), "x{n}: mean power");
        assert_eq!(g.power_limit_w, Some(1400.0));
        let expected = if n == 2 {
            Throttle::Thermal
        } else {
            Throttle::Ok
        };
        assert_eq!(g.throttle, Some(expected), "x{n}: throttle");

        let s = telemetry.server.as_ref().expect("server counters");
        let (before, inside, after) = reads_of(&emu, cell);
        let max = |f: fn(&MetricsRead) -> f64| inside.iter().map(f).fold(0.0, f64::max);
        let kv_peak = max(|r| r.kv_usage);
        let waiting_peak = max(|r| r.waiting as f64);
        let accepted = (after.spec_accepted - before.spec_accepted) as f64;
        let draft_tokens = (after.spec_draft_tokens - before.spec_draft_tokens) as f64;
        let drafts = (after.spec_drafts - before.spec_drafts) as f64;
        let preempted = after.preemptions - before.preemptions;
        eprintln!(
            "x{n}: {}; KV peak {:.4} (engine {kv_peak:.4}), waiting peak {} (engine {waiting_peak}), preemptions {} (engine {preempted}), acceptance {:.4} (engine {:.4}), accept length {:.4} (engine {:.4}), prefix hits {:.3}; status {:?}",
            s.source,
            s.kv_cache_usage_max.unwrap(),
            s.waiting_max.unwrap(),
            s.preemptions.unwrap(),
            s.spec_acceptance_rate.unwrap(),
            accepted / draft_tokens,
            s.spec_accept_length.unwrap(),
            1.0 + accepted / drafts,
            s.prefix_cache_hit_rate.unwrap(),
            cell.status,
        );
        // The window's series, kept for the page's sparklines: its power
        // readings peak at the cell's peak, its KV readings at its KV peak.
        let detail = cell.detail.as_ref().unwrap();
        let series_peak = detail.gpu_power_w.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(
            detail.gpu_power_w.len() >= 4,
            "x{n}: {} power readings",
            detail.gpu_power_w.len()
        );
        assert!(
            within(series_peak, g.power_w_max.unwrap(), 1e-9),
            "x{n}: power series peak"
        );
        let kv_series_peak = detail
            .server
            .iter()
            .flat_map(|s| &s.samples)
            .filter_map(|m| m.kv_cache_usage)
            .fold(0.0, f64::max);
        assert!(
            (kv_series_peak - kv_peak).abs() < 1e-12,
            "x{n}: KV series peak"
        );
        assert_eq!(s.source, "vLLM's /metrics every 250 ms");
        assert!((s.kv_cache_usage_max.unwrap() - kv_peak).abs() < 1e-12);
        assert_eq!(s.waiting_max, Some(waiting_peak));
        assert_eq!(s.preemptions, Some(preempted));
        assert!((s.spec_acceptance_rate.unwrap() - accepted / draft_tokens).abs() < 1e-12);
        assert!((s.spec_accept_length.unwrap() - (1.0 + accepted / drafts)).abs() < 1e-12);
        // Two slots: four streams wait, as the server says.
        let status = if n > 2 {
            Status::RequestsQueued
        } else {
            Status::Valid
        };
        assert_eq!(cell.status, status, "x{n}: {:?}", cell.reason);
    }
    // The throttled window was slowed too: a third of it at half speed.
    let (x1, x2) = (
        decode(&run, 1).total_tok_per_s.unwrap(),
        decode(&run, 2).total_tok_per_s.unwrap(),
    );
    eprintln!(
        "throttled window: {x2:.1} tok/s at 2 streams against {x1:.1} at 1 ({:.2} of twice it; 1 s of 3 at half speed: 0.83)",
        x2 / (2.0 * x1)
    );
    assert!(x2 < 2.0 * x1 * 0.92, "the throttle slowed the engine");
    // The run page's Stability list draws each window's power and KV cache.
    let site = data.parent().unwrap().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let page = std::fs::read_to_string(site.join(format!("runs/{}/index.html", run.id))).unwrap();
    assert!(page.contains("with the GPUs' power and the KV cache where recorded"));
    assert_eq!(
        page.matches("<span class=\"spark-what\">GPU power</span>")
            .count(),
        3
    );
    assert_eq!(
        page.matches("<span class=\"spark-what\">KV cache</span>")
            .count(),
        3
    );
}

/// Preemption: vLLM's paged KV cache, too small for two requests to finish.
/// The plan would skip 2 streams as over capacity; --kv-capacity lets the
/// run find what the server does instead: it preempts one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preemptions_are_the_engine_s_and_the_cell_says_so() {
    let _serial = SERIAL.lock().await;
    // Two prompts of 900 fill 1,800 of 2,000 tokens: after about 100 steps
    // each (2 s) the next step does not fit.
    let emu = emulator::start(EmulatorConfig {
        kv_capacity: 2_000,
        preempt_when_full: true,
        ..Default::default()
    })
    .await;
    let (_tmp, data) = data_dir();
    let plan = [
        "--contexts",
        "900",
        "--concurrency",
        "1,2",
        "--duration",
        "4s",
        "--max-output",
        "500",
        "--metrics-interval",
        "250ms",
        "--kv-capacity",
        "100000",
    ];
    let out = sitegen_run(&emu.url, &data, &plan, Some(empty_path())).await;
    assert!(out.success, "{}", out.stderr);
    let run = load(&data);
    let one = decode(&run, 1);
    let s1 = one.telemetry.as_ref().unwrap().server.as_ref().unwrap();
    assert_eq!(s1.preemptions, Some(0));
    assert_eq!(one.status, Status::Valid, "{:?}", one.reason);
    let two = decode(&run, 2);
    let s = two.telemetry.as_ref().unwrap().server.as_ref().unwrap();
    let (before, inside, after) = reads_of(&emu, two);
    let preempted = after.preemptions - before.preemptions;
    let kv_peak = inside.iter().map(|r| r.kv_usage).fold(0.0, f64::max);
    eprintln!(
        "x2: preemptions {:?} (engine {preempted}), KV peak {:.4} (engine {kv_peak:.4}), waiting share {:.2}; {:?}: {}",
        s.preemptions,
        s.kv_cache_usage_max.unwrap(),
        s.waiting_share.unwrap(),
        two.status,
        two.reason.as_ref().map(|r| r.words()).unwrap_or_default()
    );
    assert!(preempted >= 1, "the engine preempted");
    assert_eq!(s.preemptions, Some(preempted));
    assert!((s.kv_cache_usage_max.unwrap() - kv_peak).abs() < 1e-12);
    assert_eq!(two.status, Status::RequestsQueued);
    let reason = two.reason.as_ref().unwrap().words();
    let said = if preempted == 1 {
        "1 request preempted during the window (vllm:num_preemptions_total)".to_string()
    } else {
        format!("{preempted} requests preempted during the window (vllm:num_preemptions_total)")
    };
    assert!(reason.contains(&said), "{reason}");
    // Neither host GPUs nor an exporter: said once, and no GPU figures.
    assert!(
        out.stderr.contains("GPU telemetry: not recorded"),
        "{}",
        out.stderr
    );
    assert!(two.telemetry.as_ref().unwrap().gpus.is_none());
}

/// A PATH with nothing on it: no nvidia-smi.
fn empty_path() -> String {
    let dir = std::env::temp_dir().join("sitegen-telemetry-empty-path");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// The server on this host and nvidia-smi on PATH (the stand-in, of a
/// driver older than R535 that knows only clocks_throttle_reasons): GPU
/// figures from its power samples, within 3% of the engine's energy (its
/// readings are 100 ms apart, and the engine's power steps when the window's
/// requests start and end: the trapezoid between the readings on either
/// side rounds off each step, by up to 1.8% at 4 streams).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_server_s_gpus_are_read_with_nvidia_smi() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig {
        gpus: Some(GpuConfig {
            total: 2,
            used: 2,
            old_driver: true,
            ..Default::default()
        }),
        ..Default::default()
    })
    .await;
    let (tmp, data) = data_dir();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    emulator::write_nvidia_smi_standin(&bin, &emu.url);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let plan = [
        "--contexts",
        "1K",
        "--concurrency",
        "1,4",
        "--duration",
        "3s",
        "--max-output",
        "2000",
        "--metrics-interval",
        "100ms",
    ];
    let out = sitegen_run(&emu.url, &data, &plan, Some(path)).await;
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stderr.contains("GPU telemetry: nvidia-smi, GPUs 0,1 every 100 ms (of GPUs 0,1 on this host; energy from the power samples)"),
        "{}",
        out.stderr
    );
    let run = load(&data);
    assert_eq!(run.meta.hardware.gpu, "H100 80GB HBM3");
    assert_eq!(run.meta.hardware.gpu_count, 2);
    for n in [1, 4] {
        let cell = decode(&run, n);
        let g = cell.telemetry.as_ref().unwrap().gpus.as_ref().unwrap();
        let (t0, t1) = window(cell);
        let truth_j = emu.engine.used_gpus_energy_j(t1) - emu.engine.used_gpus_energy_j(t0);
        let truth_w = truth_j / (t1 - t0);
        let tokens = cell.output_tokens.unwrap() as f64;
        let power = g.power_w_mean.unwrap();
        eprintln!(
            "nvidia-smi x{n}: mean power {power:.2} W vs the engine's {truth_w:.2} W ({:+.2}%); {:.4} J/token vs {:.4}; {} readings; throttle {:?}; memory {:.1}% max",
            (power / truth_w - 1.0) * 100.0,
            g.joules_per_output_token.unwrap(),
            truth_j / tokens,
            g.samples.unwrap(),
            g.throttle,
            g.memory_used_pct_max.unwrap()
        );
        assert!(g.source.starts_with("nvidia-smi, GPUs 0,1"), "{}", g.source);
        assert_eq!(
            g.energy_from,
            Some(sitegen::model::EnergySource::PowerSamples)
        );
        assert!(within(power, truth_w, 0.03), "x{n}: mean power");
        assert!(within(
            g.joules_per_output_token.unwrap(),
            truth_j / tokens,
            0.03
        ));
        assert_eq!(g.throttle, Some(Throttle::Ok));
        assert!(g.samples.unwrap() >= 10, "readings every 100 ms over 3 s");
    }
}

/// No nvidia-smi on a host that runs the server: "not recorded" with the
/// reason, once; the run succeeds and its cells have the server's counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_nvidia_smi_gpus_are_not_recorded_and_the_run_succeeds() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig::default()).await;
    let (_tmp, data) = data_dir();
    let plan = [
        "--contexts",
        "1K",
        "--concurrency",
        "1",
        "--duration",
        "1s",
        "--max-output",
        "2000",
        "--metrics-interval",
        "200ms",
    ];
    let out = sitegen_run(&emu.url, &data, &plan, Some(empty_path())).await;
    assert!(out.success, "{}", out.stderr);
    let said = "GPU telemetry: not recorded (the server is on this host, and there is no nvidia-smi on PATH; for a DCGM exporter pass --gpu-metrics URL)";
    assert_eq!(out.stderr.matches(said).count(), 1, "{}", out.stderr);
    let run = load(&data);
    let t = decode(&run, 1).telemetry.as_ref().unwrap();
    assert!(t.gpus.is_none());
    assert!(t.server.is_some());
    eprintln!("{said}");

    // An exporter that is asked for and does not answer stops the run at once.
    let out = sitegen_run(
        &emu.url,
        &data,
        &[
            &plan[..],
            &["--gpu-metrics", "http://127.0.0.1:9/metrics", "--force"],
        ]
        .concat(),
        Some(empty_path()),
    )
    .await;
    assert!(!out.success);
    assert!(
        out.stderr
            .contains("--gpu-metrics http://127.0.0.1:9/metrics:"),
        "{}",
        out.stderr
    );
    // An exporter that is not one.
    let not_dcgm = format!("{}/metrics", emu.url);
    let out = sitegen_run(
        &emu.url,
        &data,
        &[&plan[..], &["--gpu-metrics", &not_dcgm, "--force"]].concat(),
        Some(empty_path()),
    )
    .await;
    assert!(!out.success);
    assert!(
        out.stderr.contains("expected a DCGM exporter's metrics, with DCGM_FI_DEV_POWER_USAGE per GPU (label gpu); found none"),
        "{}",
        out.stderr
    );
}

/// CPU time of this process's finished children, in seconds (Linux).
fn children_cpu_s() -> Option<f64> {
    // /proc/self/stat fields 16 and 17: cutime and cstime, in clock ticks.
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = fields.get(13)?.parse::<f64>().ok()? + fields.get(14)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// One run of the cost test: sampled or not, its median TTFT (ms) and the
/// runner's CPU time (s).
type CostOfRun = (bool, f64, Option<f64>);

/// What sampling costs the runner at 128 streams, printed (not asserted: a
/// timed assertion on a shared 2-core machine would flake): the median TTFT
/// of the same window with and without sampling /metrics and the DCGM
/// exporter every second, the runner's CPU over each run, and the parse
/// cost of one sample of a large vLLM exposition and an 8-GPU exporter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_sampling_costs_at_128_streams() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig {
        gpus: Some(GpuConfig {
            total: 8,
            used: 8,
            ..Default::default()
        }),
        ..Default::default()
    })
    .await;
    let dcgm = format!("{}/dcgm/metrics", emu.url);
    let without = ["--metrics-interval", "0s"];
    let with = [
        "--metrics-interval",
        "1s",
        "--gpu-metrics",
        &dcgm,
        "--gpu-count",
        "8",
    ];
    // Alternated, twice each: one pair of runs differs by more than sampling
    // costs (a 2-core machine runs the engine and the runner).
    let mut figures: Vec<CostOfRun> = Vec::new();
    for sampled in [false, true, false, true] {
        let (_tmp, data) = data_dir();
        let plan = [
            &[
                "--contexts",
                "256",
                "--concurrency",
                "128",
                "--duration",
                "6s",
                "--max-output",
                "32",
            ][..],
            if sampled { &with[..] } else { &without[..] },
        ]
        .concat();
        let cpu0 = children_cpu_s();
        let started = Instant::now();
        let out = sitegen_run(&emu.url, &data, &plan, Some(empty_path())).await;
        let wall = started.elapsed().as_secs_f64();
        let cpu = children_cpu_s().zip(cpu0).map(|(b, a)| b - a);
        assert!(out.success, "{}", out.stderr);
        let run = load(&data);
        let cell = decode(&run, 128);
        let ttft = cell.ttft_median_ms.unwrap();
        eprintln!(
            "128 streams {}: median TTFT {ttft:.3} ms over {} requests; the runner used {} over {wall:.1} s",
            if sampled {
                "with sampling"
            } else {
                "without sampling"
            },
            cell.completed_requests.unwrap(),
            cpu.map_or("an unknown CPU time".into(), |c| format!(
                "{c:.2} s of CPU ({:.3} core)",
                c / wall
            )),
        );
        figures.push((sampled, ttft, cpu));
    }
    let mean = |sampled: bool, f: fn(&CostOfRun) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = figures
            .iter()
            .filter(|x| x.0 == sampled)
            .filter_map(f)
            .collect();
        (v.len() == 2).then(|| v.iter().sum::<f64>() / 2.0)
    };
    let ttft_cost = mean(true, |x| Some(x.1)).unwrap() - mean(false, |x| Some(x.1)).unwrap();
    eprintln!(
        "sampling: median TTFT {ttft_cost:+.3} ms, mean of two runs each (budget 0.5 ms: {})",
        if ttft_cost <= 0.5 { "within" } else { "over" }
    );
    if let (Some(a), Some(b)) = (mean(false, |x| x.2), mean(true, |x| x.2)) {
        eprintln!(
            "sampling: the runner's CPU {:+.3} s over a 6 s window, {:+.4} core, mean of two runs each (budget 0.01; mostly the runs' own noise: the sampler's work is measured below)",
            b - a,
            (b - a) / 6.0
        );
    }
    // The sampler's own work per second: one /metrics of a large vLLM
    // server (4,000 lines: 3,600 histogram buckets, 400 other series) and
    // one 8-GPU exporter, fetched and parsed as a window parses them.
    let vllm_text: String = (0..4000)
        .map(|i| match i % 10 {
            0 => format!(
                "vllm:some_counter_total{{engine=\"0\",model_name=\"m\",series=\"{i}\"}} {i}.0\n"
            ),
            _ => format!(
                "vllm:request_latency_seconds_bucket{{engine=\"0\",le=\"{i}.0\",model_name=\"m\"}} {i}.0\n"
            ),
        })
        .collect();
    sitegen::runner::client::install_tls_provider();
    let client = reqwest::Client::new();
    let rounds = 200;
    let started = Instant::now();
    for _ in 0..rounds {
        let dcgm_text = client
            .get(&dcgm)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        std::hint::black_box(sitegen::runner::metrics::parse(&dcgm_text));
        std::hint::black_box(sitegen::runner::metrics::parse_without_buckets(&vllm_text));
    }
    let per_sample = started.elapsed().as_secs_f64() / rounds as f64;
    eprintln!(
        "sampling: {:.3} ms of work per sample (an 8-GPU exporter fetched and parsed, a 4,000-line /metrics parsed): {:.4} core at one sample a second (budget 0.01: {})",
        per_sample * 1000.0,
        per_sample,
        if per_sample <= 0.01 { "within" } else { "over" }
    );
}
