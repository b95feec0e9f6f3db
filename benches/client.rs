//! The client's cost per output token: `sitegen run` keeping 1, 16, 128 and
//! 1,024 streams busy against the emulated engine (tests/support), and the
//! CPU time (user + system) its whole process spent, fixed costs included
//! (probe, prompt sizing, cold prefill, warm-up, writing), over the output
//! tokens its window counted, and its two parts: the process's own code
//! (user) and the kernel's work for it (system: socket reads, the ACK each
//! read sends, waiting for events; over loopback the kernel also takes in
//! that ACK for the engine's socket on the client's time). Each row also
//! prints the cell's status and the client's own reading of its load
//! (model/client.rs): what a run records so that a client that could not
//! keep up is never taken for the server.
//!
//! Run: `cargo bench --bench client` (levels: `SITEGEN_BENCH_STREAMS=1,128`,
//! window: `SITEGEN_BENCH_WINDOW=10s`, the engine's steps:
//! `SITEGEN_BENCH_STEP_US=5000,250`; another build of sitegen, to compare
//! two in one sitting: `SITEGEN_BENCH_BIN=path`). The engine runs in this process, so
//! its own CPU is not counted; on 2 cores the two compete, which the
//! printed engine rate shows.

use std::process::Command;
use std::time::Duration;

// Both files allow their unused helpers themselves.
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/support/emulator.rs"]
mod emulator;

fn main() {
    let levels: Vec<u32> = std::env::var("SITEGEN_BENCH_STREAMS")
        .unwrap_or_else(|_| "1,16,128,1024".into())
        .split(',')
        .map(|s| s.trim().parse().expect("stream counts like 1,16,128"))
        .collect();
    let binary = std::env::var("SITEGEN_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_sitegen").to_string());
    let window = std::env::var("SITEGEN_BENCH_WINDOW").unwrap_or_else(|_| "10s".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // 5 ms: 200 tokens a second a stream (25.6K tok/s at 128 streams), a
    // GPU server's pace; 250 µs: as many tokens as the engine beside the
    // client on 2 cores can make, the client's cost when it has most to do.
    let steps: Vec<u64> = std::env::var("SITEGEN_BENCH_STEP_US")
        .unwrap_or_else(|_| "5000,250".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("SITEGEN_BENCH_STEP_US: microseconds, like 5000,250")
        })
        .collect();
    for step_us in steps {
        let emu = runtime.block_on(emulator::start(emulator::EmulatorConfig {
            step: Duration::from_micros(step_us),
            max_running: 4096,
            kv_capacity: 1 << 40,
            max_model_len: 4096,
            ..Default::default()
        }));
        println!(
            "client CPU per output token, sitegen run against the emulated engine ({step_us} µs steps), {window} windows"
        );
        println!(
            "{:>8} {:>10} {:>8} {:>8} {:>10} {:>12} {:>12}  status; the client's own reading: busy, ready wait p50/p99/max ms, TBT p50 ms",
            "streams", "tokens", "tok/s", "CPU s", "µs/token", "user µs/tok", "kernel µs/tok",
        );
        for &n in &levels {
            measure(&binary, &emu.url, &window, n);
        }
    }
}

/// One window of `n` streams, measured and printed as a row.
fn measure(binary: &str, url: &str, window: &str, n: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "cpu %U %S"])
        .arg(binary)
        .args(["run", "--url", url, "--run-id", "b", "--data"])
        .arg(&data)
        .args(["--contexts", "64", "--concurrency", &n.to_string()])
        .args(["--duration", window, "--max-output", "512"])
        .args([
            "--metrics-interval",
            "0s",
            "--gpu",
            "CPU",
            "--gpu-count",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (user, kernel) = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("cpu "))
        .and_then(|l| l.split_once(' '))
        .map(|(u, s)| (u.parse::<f64>().unwrap(), s.parse::<f64>().unwrap()))
        .expect("/usr/bin/time's line");
    let cpu = user + kernel;
    let run = sitegen::store::load_run(&data.join("b")).unwrap();
    let cell = run.decode_cells().next().expect("the decode cell");
    let tokens = cell.output_tokens.unwrap();
    let per_token = |s: f64| s * 1e6 / tokens as f64;
    let own =
        cell.detail
            .as_ref()
            .and_then(|d| d.client.as_ref())
            .map_or("none".to_string(), |c| {
                let w = c.ready_wait_ms;
                format!(
                    "{}; {:.0}% of {} threads, {:.3}/{:.3}/{:.1}, {:.2}",
                    cell.status.label(),
                    c.busy().unwrap_or(f64::NAN) * 100.0,
                    c.threads,
                    w.p50,
                    w.p99,
                    w.max,
                    cell.detail
                        .as_ref()
                        .and_then(|d| d.tbt_ms)
                        .map_or(f64::NAN, |t| t.p50)
                )
            });
    println!(
        "{n:>8} {tokens:>10} {:>8.0} {cpu:>8.2} {:>10.1} {:>12.1} {:>12.1}  {own}",
        cell.total_tok_per_s.unwrap_or(0.0),
        per_token(cpu),
        per_token(user),
        per_token(kernel)
    );
}
