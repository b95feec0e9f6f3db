//! The GPU telemetry AIPerf and GenAI-Perf write beside a cell's figures
//! (DCGM summaries per GPU over the profile) imports as the cell's power,
//! energy per output token, clocks and throttle verdict, over the GPUs the
//! server ran on, each figure equal to the file's own numbers computed here;
//! which GPUs were taken is said, and where the file cannot tell, the
//! telemetry is left out with the flag that settles it.

use crate::common;

use std::path::Path;

use common::figures::assert_close;
use common::{repo, sitegen, stderr};
use serde_json::Value;

const WELLFLAT_AIPERF: &str = "tests/fixtures/real/gpu-summary/wellflat-gpt-oss-20b-c1-gpu-telemetry-profile_export_aiperf.json";
const FORK_AIPERF: &str =
    "tests/fixtures/real/gpu-summary/aiperf-fork-plot-fixture-qwen-c1-profile_export_aiperf.json";
const WELLFLAT_GENAI_PERF: &str = "tests/fixtures/real/gpu-summary/wellflat-gpt-oss-20b-c1-telemetry-profile_export_genai_perf.json";

/// Imports `file` with the card flags and `extra`; the one decode cell
/// written and what the import printed.
fn import(file: &str, extra: &[&str]) -> (Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = repo().join(file).display().to_string();
    let mut args = vec![
        "ingest", &path, "--id", "r", "--data", "d", "--gpu", "A100", "--engine", "vllm",
    ];
    args.extend(extra);
    let out = sitegen(&args, tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let cells = tmp.path().join("d/r/cells");
    let mut decode = std::fs::read_dir(&cells)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("decode-")
        });
    let cell = decode.next().expect("a decode cell");
    assert!(decode.next().is_none(), "one cell");
    (
        serde_json::from_str(&std::fs::read_to_string(cell).unwrap()).unwrap(),
        stderr(&out),
    )
}

#[test]
fn every_real_file_with_gpu_telemetry_is_read_here() {
    let dir = repo().join("tests/fixtures/real/gpu-summary");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            format!(
                "tests/fixtures/real/gpu-summary/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    on_disk.sort();
    let mut read = vec![
        WELLFLAT_AIPERF.to_string(),
        FORK_AIPERF.to_string(),
        WELLFLAT_GENAI_PERF.to_string(),
    ];
    read.sort();
    assert_eq!(on_disk, read);
}

fn file(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join(path)).unwrap()).unwrap()
}

/// AIPerf's summary of one metric of one GPU.
fn aiperf_metric<'a>(v: &'a Value, endpoint: &str, gpu: &str, metric: &str) -> &'a Value {
    &v["telemetry_data"]["endpoints"][endpoint]["gpus"][gpu]["metrics"][metric]
}

#[test]
fn aiperf_s_telemetry_of_the_busy_gpu_is_the_cell_s_power_and_energy() {
    let v = file(WELLFLAT_AIPERF);
    let (cell, said) = import(WELLFLAT_AIPERF, &["--gpu-count", "1"]);
    let g = &cell["telemetry"]["gpus"];
    let ep = "dcgm-exporter.prometheus.svc.cluster.local:9400";
    let power = aiperf_metric(&v, ep, "gpu_0", "gpu_power_usage")["avg"]
        .as_f64()
        .unwrap();
    let tok_per_s =
        v["total_osl"]["avg"].as_f64().unwrap() / v["benchmark_duration"]["avg"].as_f64().unwrap();
    assert_close("power", g["power_w_mean"].as_f64().unwrap(), power);
    assert_close(
        "J per output token",
        g["joules_per_output_token"].as_f64().unwrap(),
        power / tok_per_s,
    );
    assert_close(
        "SM clock",
        g["sm_clock_mhz_mean"].as_f64().unwrap(),
        aiperf_metric(&v, ep, "gpu_0", "sm_clock_frequency")["avg"]
            .as_f64()
            .unwrap(),
    );
    assert_eq!(g["gpus"], 1);
    assert_eq!(g["energy_from"], "mean_power");
    // No clock-event counters in this file: no throttle verdict, not "ok".
    assert!(g.get("throttle").is_none());
    assert!(
        g["source"]
            .as_str()
            .unwrap()
            .ends_with("GPU 0, the 1 of 8 listed that was busy (gpu_utilization above 0)"),
        "{}",
        g["source"]
    );
    assert!(said.contains("--gpu-index chooses others"), "{said}");
    eprintln!(
        "AIPerf, A100 GPU 0 of 8: {power:.2} W / {tok_per_s:.3} tok/s = {:.4} J per output token",
        power / tok_per_s
    );

    // --gpu-index takes another GPU: an idle one's power, as the file has it.
    let (cell, _) = import(WELLFLAT_AIPERF, &["--gpu-count", "1", "--gpu-index", "3"]);
    assert_close(
        "GPU 3's power",
        cell["telemetry"]["gpus"]["power_w_mean"].as_f64().unwrap(),
        aiperf_metric(&v, ep, "gpu_3", "gpu_power_usage")["avg"]
            .as_f64()
            .unwrap(),
    );

    // Two GPUs asked for, one busy: the file cannot say which; none is taken.
    let (cell, said) = import(WELLFLAT_AIPERF, &["--gpu-count", "2"]);
    assert!(cell.get("telemetry").is_none(), "{cell}");
    assert!(
        said.contains("the GPU telemetry is not imported: it lists 8 GPUs, 1 of them busy, and does not say which 2 served the run: give --gpu-index"),
        "{said}"
    );
}

#[test]
fn one_gpu_through_two_exporters_counts_once_and_its_power_cap_is_seen() {
    let v = file(FORK_AIPERF);
    let (cell, said) = import(FORK_AIPERF, &["--gpu-count", "1"]);
    let g = &cell["telemetry"]["gpus"];
    let power = aiperf_metric(&v, "localhost:9400", "gpu_0", "gpu_power_usage")["avg"]
        .as_f64()
        .unwrap();
    assert_close("power, once", g["power_w_mean"].as_f64().unwrap(), power);
    assert_eq!(g["power_limit_w"], 300.0);
    // DCGM's power-violation counter grew during the profile.
    let pv = aiperf_metric(&v, "localhost:9400", "gpu_0", "power_violation");
    let slowed_s = (pv["max"].as_f64().unwrap() - pv["min"].as_f64().unwrap()) / 1e6;
    assert!(slowed_s > 0.0);
    assert_eq!(g["throttle"], "power_capped");
    assert!(
        said.contains("1 GPU reported twice, by two exporters, counted once"),
        "{said}"
    );
    eprintln!(
        "AIPerf fork fixture: {power:.1} W of a 300 W limit, power capped for {slowed_s:.1} s of {:.1} s",
        v["benchmark_duration"]["avg"].as_f64().unwrap()
    );
}

#[test]
fn genai_perf_s_telemetry_stats_import_for_the_busy_gpu() {
    let v = file(WELLFLAT_GENAI_PERF);
    let (cell, said) = import(WELLFLAT_GENAI_PERF, &["--gpu-count", "1"]);
    let g = &cell["telemetry"]["gpus"];
    let stats = &v["telemetry_stats"];
    assert_close(
        "GPU 3's power",
        g["power_w_mean"].as_f64().unwrap(),
        stats["gpu_power_usage"]["3"]["avg"].as_f64().unwrap(),
    );
    assert_close(
        "temperature",
        g["temp_c_max"].as_f64().unwrap(),
        stats["gpu_temperature"]["3"]["max"].as_f64().unwrap(),
    );
    // The cell is Error (GenAI-Perf counted no text for most requests): no
    // throughput, so no energy per token, never a made-up one.
    assert_eq!(cell["status"], "error");
    assert!(g.get("joules_per_output_token").is_none());
    assert!(
        said.contains("telemetry_stats: the run's GPUs taken as GPU 3"),
        "{said}"
    );
}

#[test]
fn a_run_page_shows_imported_power_and_energy() {
    let tmp = tempfile::tempdir().unwrap();
    let path = repo().join(WELLFLAT_AIPERF);
    let out = sitegen(
        &[
            "ingest",
            &path.display().to_string(),
            "--id",
            "r",
            "--data",
            "d",
            "--gpu",
            "A100",
            "--gpu-count",
            "1",
            "--engine",
            "vllm",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sitegen(&["build", "--data", "d", "--out", "site"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let page =
        std::fs::read_to_string(Path::new(tmp.path()).join("site/runs/r/index.html")).unwrap();
    assert!(page.contains("Energy per output token"));
    assert!(page.contains("1.73 J"), "94.6 W / 54.56 tok/s");
}
