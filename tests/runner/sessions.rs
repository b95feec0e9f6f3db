//! `sitegen run --sessions` against the emulated engine, whose prefix cache
//! and prefill rate are known: each depth's turns, TTFT and cached tokens
//! are the engine's own.

use crate::{SERIAL, emulator, run_cli};

use emulator::EmulatorConfig;
use run_cli::{data_dir, load, sitegen_run};
use sitegen::model::sessions::SessionWindow;
use sitegen::model::{PrefillMode, Status};

/// What the engine logged of one window's turns at about `context` prompt
/// tokens: (prompt tokens, cached tokens, arrival to first token in ms) per
/// turn. About: an answer's first word can merge with the user part before
/// it when the history is read again (a token more or less); depths are
/// hundreds of tokens apart.
fn logged_turns(emu: &emulator::Emulator, w: &SessionWindow, context: u64) -> Vec<(u64, u64, f64)> {
    let t0 = w.window_start_unix_s.expect("sitegen run records when");
    // A turn sent just before the window's end reaches the engine just after.
    let end = t0 + w.window_s + 0.05;
    emu.engine
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.prompt_tokens.abs_diff(context) <= 8 && r.arrived >= t0 && r.arrived < end)
        .filter(|r| !r.emissions.is_empty())
        .map(|r| {
            let ttft = (r.emissions[0].0 - r.arrived) * 1000.0;
            (r.prompt_tokens, r.cached_tokens, ttft)
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

/// A prefill of 20K tok/s (a cold 2,000-token prompt: 100 ms) and vLLM's
/// prefix cache in blocks of 16: a later turn computes only what its
/// session added since its last turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_depth_s_turns_ttft_and_cached_tokens_are_the_engine_s() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig {
        prefill_tok_per_s: 20_000.0,
        max_model_len: 8192,
        prompt_tokens_details: true,
        ..Default::default()
    })
    .await;
    let (_tmp, data) = data_dir();
    let plan = [
        "--sessions",
        "1,4",
        "--session-prefix",
        "1024",
        "--session-user",
        "256",
        "--session-answer",
        "16",
        "--session-turns",
        "6",
        "--duration",
        "3s",
        "--sessions-only",
    ];
    let out = sitegen_run(&emu.url, &data, &plan, &[]).await;
    assert!(out.success, "{}", out.stderr);
    let run = load(&data);
    assert!(run.cells.is_empty(), "--sessions-only measures no matrix");
    assert_eq!(
        run.meta.run.prefill_mode, None,
        "no prefill was measured, so the Run card names no prefill mode"
    );
    assert_eq!(run.sessions.len(), 2);
    for w in &run.sessions {
        let s = w.sessions;
        assert_eq!(w.status, Status::Valid, "x{s}: {:?}", w.reason);
        assert!(w.client.is_some(), "x{s}: the client's own reading");
        assert_eq!(
            w.cached_tokens_from.as_deref(),
            Some("usage.prompt_tokens_details.cached_tokens")
        );
        let measured: Vec<_> = w.depths.iter().filter(|d| d.ttft_ms.is_some()).collect();
        assert!(
            measured.len() >= 3,
            "x{s}: {} depths reached",
            measured.len()
        );
        let mut turns = 0;
        for d in &measured {
            let logged = logged_turns(&emu, w, d.context_tokens);
            // Every turn the runner counted at this depth is one the engine
            // served at this context, and none is missing.
            assert_eq!(
                Some(logged.len() as u64),
                d.turns,
                "x{s} turn {}: {logged:?}",
                d.turn
            );
            turns += logged.len() as u64;
            let cached: u64 = logged.iter().map(|(_, c, _)| c).sum();
            let prompt: u64 = logged.iter().map(|(p, _, _)| p).sum();
            assert_eq!(d.cached_tokens, Some(cached), "x{s} turn {}", d.turn);
            assert_eq!(d.prompt_tokens, Some(prompt), "x{s} turn {}", d.turn);
            let truth = median(&mut logged.iter().map(|(_, _, t)| *t).collect::<Vec<_>>());
            let ours = d.ttft_median_ms().unwrap();
            // The client's TTFT adds the way to the engine and back: at
            // most a few ms on loopback, more on a busy 2-core machine.
            assert!(
                ours >= truth - 0.5 && ours <= truth + 5.0 + 0.1 * truth,
                "x{s} turn {}: TTFT {ours:.1} ms against the engine's {truth:.1} ms",
                d.turn
            );
            let cold = d.cold_ttft_ms.expect("a cold prompt of each depth");
            if d.turn == 1 {
                // The shared prefix is warm: the first turn computes the
                // session's own tokens only, none of which another session
                // (of this window or the one before) sent.
                let n = logged.len() as u64;
                assert!(
                    (1024 * n - 16 * n..=1024 * n).contains(&cached),
                    "x{s} turn 1: {cached} cached in {n} turns"
                );
            } else {
                // Later turns find the session's history in the cache: the
                // engine computed far less than a cold prompt of the context.
                assert!(
                    ours < cold / 2.0,
                    "x{s} turn {}: {ours:.1} ms against cold {cold:.1} ms",
                    d.turn
                );
            }
        }
        assert_eq!(w.turns_started, Some(turns), "x{s}: every turn counted");
        // The server's counters over the window hold exactly these turns.
        let server = w.server_cache.as_ref().expect("vLLM's counters");
        let said: u64 = measured.iter().filter_map(|d| d.cached_tokens).sum();
        let prompts: u64 = measured.iter().filter_map(|d| d.prompt_tokens).sum();
        assert_eq!(
            (server.cached_tokens, server.looked_up_tokens),
            (said, prompts),
            "x{s}"
        );
    }
}

/// A sessions pass over a run whose matrix was measured before keeps what
/// the Run card says of that matrix's prefill; a sessions-only run says
/// nothing of one (the test above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_pass_over_a_measured_matrix_keeps_its_prefill_mode() {
    let _serial = SERIAL.lock().await;
    let emu = emulator::start(EmulatorConfig {
        max_model_len: 8192,
        prompt_tokens_details: true,
        ..Default::default()
    })
    .await;
    let (_tmp, data) = data_dir();
    let matrix = ["--contexts", "1K", "--concurrency", "1", "--duration", "1s"];
    let out = sitegen_run(&emu.url, &data, &matrix, &[]).await;
    assert!(out.success, "{}", out.stderr);
    let warmup = Some(PrefillMode::DecodeWarmup);
    assert_eq!(load(&data).meta.run.prefill_mode, warmup);
    let sessions = [
        "--sessions",
        "1",
        "--session-prefix",
        "512",
        "--session-user",
        "128",
        "--session-answer",
        "16",
        "--session-turns",
        "2",
        "--duration",
        "1s",
        "--sessions-only",
    ];
    let out = sitegen_run(&emu.url, &data, &sessions, &[]).await;
    assert!(out.success, "{}", out.stderr);
    let run = load(&data);
    assert_eq!(run.sessions.len(), 1);
    assert!(!run.cells.is_empty(), "the matrix's cells are kept");
    assert_eq!(run.meta.run.prefill_mode, warmup);
}
