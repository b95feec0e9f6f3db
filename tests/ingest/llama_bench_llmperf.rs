//! Importing llama.cpp's llama-bench (`-o json` / `-o jsonl`) and
//! ray-project llmperf's summaries. The fixtures of record are the real files
//! in tests/fixtures/real/llama-bench/ and tests/fixtures/real/llmperf/ (each
//! listed with its provenance in SOURCES.md): each is recognised, imports with
//! every mapped figure equal to the file's own number (computed here from the
//! file), or is refused with a reason true of it, writing nothing. Cases no
//! real file shows are made here from a real file, edited, and say so.

use crate::common;

use std::path::{Path, PathBuf};

use common::figures::assert_figure;
use common::ingest::{COUNT, ENGINE, Expect, GPU, MODEL, meta_for};
use common::real;
use serde_json::Value;
use sitegen::ingest::{Format, Outcome, import};
use sitegen::model::{Cell, DecodeTest, PrefillMode, Run, Status};

#[rustfmt::skip]
const LLAMA_BENCH: &[(&str, Expect)] = {
    use Expect::*;
    &[
        ("llama-bench/llm-performance-snowpiercer-15b-q3kl.json", Imports(&[COUNT])),
        ("llama-bench/javelit-rocm72-step35-flash-depth-sweep.json", Imports(&[COUNT])),
        ("llama-bench/javelit-rocm72-step35-flash-stderr-prefixed.json", Imports(&[COUNT])),
        ("llama-bench/strix-halo-testing-llama32-1b-hip-depth.jsonl", Imports(&[COUNT])),
        ("llama-bench/strix-halo-toolboxes-qwen36-35b-rocm724-tg-depth-curve.jsonl", Imports(&[COUNT])),
        ("llama-bench/strix-halo-toolboxes-deepseek-v4-rocm714-pp2048-ubatch-sweep.jsonl",
         Refused("the tests ran at different settings (n_ubatch: 256, 512, 1024, 2048); the same test at each setting (pp2048 at n_depth 0 ×4) is several results for one cell, not repeats: a run is one configuration, so import each setting as a run of its own")),
        ("llama-bench/strix-halo-testing-shisa-8b-tg1-to-tg8192-raw-runs.jsonl",
         Refused("the tests ran at different settings (backends: \"ROCm\", \"Vulkan\"; flash_attn: false, true; gpu_info: \"AMD Radeon Graphics\", \"Radeon 8060S Graphics\")")),
    ]
};

#[rustfmt::skip]
const LLMPERF: &[(&str, Expect)] = {
    use Expect::*;
    &[
        ("llmperf/leaderboard-groq_70b-summary.json", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/leaderboard-bedrock_70b-summary.json", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/leaderboard-anyscale_13b-summary.json", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/llmperf-test-gpt-4-1-nano_5500_350-c1_summary.json", Imports(&[GPU, COUNT, ENGINE])),
        ("llmperf/llmperf-test-gpt-4-1-nano_550_150-c50_summary.json",
         Refused("num_concurrent_requests is 50, but the test recorded only 10 requests (results_num_requests_started): it never had 50 of them in flight")),
        ("llmperf/llmperf-test-gpt-4-1-nano_550_150-c50_individual_responses.json",
         Refused("llmperf's per-request records (individual_responses): they hold neither the concurrency, the model nor the test's duration; import the summary written beside it: llmperf-test-gpt-4-1-nano_550_150-c50_summary.json")),
    ]
};

struct Imported {
    _tmp: tempfile::TempDir,
    run: Run,
    outcome: Outcome,
}

/// Imports `file`: a dry run first (which must list exactly `missing` and
/// write nothing), then for real with those cards given.
fn import_checked(file: &Path, missing: &[&str], context: Option<u64>) -> Imported {
    let tmp = tempfile::tempdir().unwrap();
    let dry = import(
        None,
        &[file.to_path_buf()],
        &common::ingest::options(tmp.path(), Some("x"), None, context, true),
    )
    .unwrap_or_else(|e| panic!("{}: {e:#}", file.display()));
    assert!(
        !tmp.path().join("data").exists(),
        "a dry run writes nothing"
    );
    assert_eq!(dry[0].missing, missing, "{}: missing cards", file.display());
    let meta = meta_for(missing);
    let mut written = import(
        None,
        &[file.to_path_buf()],
        &common::ingest::options(tmp.path(), Some("x"), meta.as_deref(), context, false),
    )
    .unwrap_or_else(|e| panic!("{}: {e:#}", file.display()));
    let outcome = written.remove(0);
    let run = sitegen::store::load_run(&outcome.dir).unwrap();
    Imported {
        _tmp: tmp,
        run,
        outcome,
    }
}

/// The error importing `file` gives (with every card given), checking that
/// it names the file and that nothing was written.
fn refusal(file: &Path, context: Option<u64>) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta_for(&[GPU, COUNT, ENGINE]);
    let err = import(
        None,
        &[file.to_path_buf()],
        &common::ingest::options(tmp.path(), Some("x"), meta.as_deref(), context, false),
    )
    .err()
    .unwrap_or_else(|| panic!("{}: expected a refusal", file.display()));
    let err = format!("{err:#}");
    assert!(
        err.contains(&*file.display().to_string()),
        "names the file: {err}"
    );
    assert!(!tmp.path().join("data").exists(), "nothing written: {err}");
    err
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn numbers(v: &Value, key: &str) -> Option<Vec<f64>> {
    v.get(key)?.as_array()?.iter().map(Value::as_f64).collect()
}

// ---------------------------------------------------------------- llama-bench

/// The tests of a llama-bench file, read here on their own: past any lines
/// before the JSON, a JSON array or one object per line.
fn llama_rows(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let start = text
        .lines()
        .position(|l| l.trim_start().starts_with(['[', '{']))
        .unwrap();
    let rest: Vec<&str> = text.lines().skip(start).collect();
    if rest[0].trim_start().starts_with('[') {
        serde_json::from_str::<Value>(&rest.join("\n"))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    } else {
        rest.iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Student's t at 97.5% for the repetition counts in the corpus.
fn t_975(df: usize) -> f64 {
    match df {
        1 => 12.706204736174705,
        2 => 4.302652729911275,
        3 => 3.182446305284263,
        4 => 2.7764451051977987,
        _ => panic!("no t for {df} degrees of freedom here"),
    }
}

/// Every figure of every test row, and the cards, against the file.
fn check_llama_bench(rel: &str, rows: &[Value], imported: &Imported) {
    let run = &imported.run;
    let mut expected_cells = 0;
    let mut any_decode = false;
    let mut any_prefill = false;
    for r in rows {
        let (p, g) = (num(r, "n_prompt").unwrap(), num(r, "n_gen").unwrap());
        let depth = num(r, "n_depth").unwrap() as u64;
        let avg_ts = num(r, "avg_ts").unwrap();
        if g == 0.0 && depth > 0 {
            // pp at depth: not imported, and named in a warning.
            let name = format!("pp{p} @ d{depth}");
            assert!(
                imported.outcome.warnings.iter().any(|w| w.contains(&name)),
                "{rel}: a warning names {name}: {:?}",
                imported.outcome.warnings
            );
            assert!(
                run.prefill_cells()
                    .all(|c| c.context_tokens != p as u64 + depth),
                "{rel}: {name} is no prefill cell"
            );
            continue;
        }
        expected_cells += 1;
        if g == 0.0 {
            any_prefill = true;
            let c = run
                .prefill_cells()
                .find(|c| c.context_tokens == p as u64)
                .unwrap_or_else(|| panic!("{rel}: prefill {p}"));
            let what = |f: &str| format!("{rel}: pp{p}: {f}");
            assert_eq!(c.status, Status::Valid, "{}", what("status"));
            assert_figure(&what("prompt tok/s"), c.prompt_tok_per_s, Some(avg_ts));
            assert_figure(
                &what("TTFT"),
                c.ttft_ms,
                num(r, "avg_ns").map(|ns| ns / 1e6),
            );
            assert_eq!(c.prompt_tokens, Some(p as u64), "{}", what("prompt tokens"));
            let by = c.measured_by.as_ref().unwrap();
            assert_eq!(by.tool, "llama-bench");
            assert_eq!(&by.raw, r, "{}", what("raw"));
            for field in ["prompt_tok_per_s", "ttft_ms"] {
                assert!(by.definitions.contains_key(field), "{}", what(field));
            }
        } else {
            any_decode = true;
            assert_eq!(p, 0.0, "{rel}: no -pg test in the corpus");
            let c = run
                .decode_cell(depth, 1)
                .unwrap_or_else(|| panic!("{rel}: tg at depth {depth}"));
            let what = |f: &str| format!("{rel}: tg{g} @ d{depth}: {f}");
            assert_eq!(c.status, Status::Valid, "{}", what("status"));
            assert_figure(&what("total tok/s"), c.total_tok_per_s, Some(avg_ts));
            assert_figure(&what("per-request"), c.per_request_tok_per_s, Some(avg_ts));
            let ns = numbers(r, "samples_ns").unwrap();
            assert_eq!(
                c.completed_requests,
                Some(ns.len() as u64),
                "{}",
                what("repetitions")
            );
            assert_eq!(
                c.output_tokens,
                Some(g as u64 * ns.len() as u64),
                "{}",
                what("output tokens")
            );
            assert_figure(
                &what("measured s"),
                c.measured_s,
                Some(ns.iter().sum::<f64>() / 1e9),
            );
            let ts = numbers(r, "samples_ts").unwrap();
            match &c.total_tok_per_s_ci95 {
                Some(ci) => {
                    let n = ts.len();
                    let half = t_975(n - 1) * num(r, "stddev_ts").unwrap() / (n as f64).sqrt();
                    assert_figure(&what("ci high"), Some(ci.high), Some(avg_ts + half));
                    assert_figure(
                        &what("ci low"),
                        Some(ci.low),
                        Some((avg_ts - half).max(0.0)),
                    );
                    assert!(
                        ci.method.contains(&format!("{n} repetitions")),
                        "{}",
                        ci.method
                    );
                }
                None => assert!(ts.len() < 2, "{}: interval with {} samples", rel, ts.len()),
            }
            assert_eq!(c.ttft_median_ms, None, "{}", what("no TTFT in a tg test"));
            assert_eq!(c.tbt_median_ms, None, "{}", what("no median TBT"));
            assert!(c.repeats.is_empty(), "{}", what("no repeats"));
            let by = c.measured_by.as_ref().unwrap();
            assert_eq!(&by.raw, r, "{}", what("raw"));
            assert!(by.definitions.contains_key("total_tok_per_s"));
        }
    }
    assert_eq!(run.cells.len(), expected_cells, "{rel}: cells");
    // Cards from the first row (every row has the same settings).
    let r0 = &rows[0];
    let m = &run.meta;
    let file_name = r0["model_filename"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    // The file name without ".gguf" and a shard's "-00001-of-00004".
    let mut model = file_name.replace(".gguf", "");
    if model.len() > 15 && &model[model.len() - 9..model.len() - 5] == "-of-" {
        model.truncate(model.len() - 15);
    }
    assert_eq!(m.model, model, "{rel}: model");
    assert_eq!(m.served_model, file_name, "{rel}: served model");
    assert_eq!(m.hardware.gpu, r0["gpu_info"].as_str().unwrap(), "{rel}");
    assert_eq!(m.engine.name, "llama.cpp");
    let commit = r0["build_commit"].as_str().unwrap();
    let version = format!("b{}-{commit}", r0["build_number"]);
    assert_eq!(m.engine.version.as_deref(), Some(version.as_str()), "{rel}");
    assert_eq!(m.engine.commit.as_deref(), Some(commit), "{rel}");
    assert_eq!(
        m.engine.backend.as_deref(),
        r0["backends"].as_str(),
        "{rel}"
    );
    let tool = m.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(tool.name, "llama-bench");
    let first_time = rows
        .iter()
        .filter_map(|r| r["test_time"].as_str())
        .min()
        .unwrap();
    assert_eq!(m.measured_at.as_deref(), Some(first_time), "{rel}");
    // The generation length the file states (one per file here).
    let lengths: std::collections::BTreeSet<u64> = rows
        .iter()
        .filter(|r| r["n_gen"] != 0 && r["n_prompt"] == 0)
        .map(|r| r["n_gen"].as_u64().unwrap())
        .collect();
    assert!(lengths.len() <= 1, "{rel}: one generation length");
    assert_eq!(
        m.run.max_output_tokens.map(u64::from),
        lengths.first().copied(),
        "{rel}: max output tokens"
    );
    let want_test = if any_decode {
        DecodeTest::FixedTokens
    } else {
        DecodeTest::None
    };
    assert_eq!(m.run.decode_test, want_test, "{rel}");
    assert_eq!(
        m.run.prefill_mode,
        any_prefill.then_some(PrefillMode::Standalone),
        "{rel}"
    );
    assert!(
        imported
            .outcome
            .layout
            .starts_with(&format!("llama-bench build {}", r0["build_number"]))
    );
}

#[test]
fn every_llama_bench_file_imports_with_its_figures_or_is_refused_for_a_true_reason() {
    for (rel, expect) in LLAMA_BENCH {
        let file = real(rel);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            Format::detect(&text).map(Format::name),
            Some("llama-bench"),
            "{rel} is recognised"
        );
        let rows = llama_rows(&file);
        match expect {
            Expect::Refused(why) => {
                let err = refusal(&file, None);
                assert!(err.contains(why), "{rel}: {err}");
                if rel.contains("ubatch-sweep") {
                    // True of the file: the rows differ in n_ubatch alone.
                    let ubatch: Vec<f64> =
                        rows.iter().map(|r| num(r, "n_ubatch").unwrap()).collect();
                    assert_eq!(ubatch, [256.0, 512.0, 1024.0, 2048.0]);
                    assert!(err.contains("jq -c 'select(.n_ubatch == 256)'"), "{err}");
                } else {
                    // True of the file: two backends, each with and without
                    // flash attention.
                    let kinds: std::collections::BTreeSet<String> = rows
                        .iter()
                        .map(|r| format!("{} {}", r["backends"], r["flash_attn"]))
                        .collect();
                    assert_eq!(kinds.len(), 4, "{kinds:?}");
                    assert!(
                        err.contains("jq -c 'select(.backends == \"ROCm\")'"),
                        "{err}"
                    );
                }
            }
            Expect::Imports(missing) => {
                let imported = import_checked(&file, missing, None);
                check_llama_bench(rel, &rows, &imported);
                let prefixed = text
                    .lines()
                    .next()
                    .is_some_and(|l| !l.starts_with(['[', '{']));
                let says = imported
                    .outcome
                    .warnings
                    .iter()
                    .any(|w| w.contains("lines 1–2 are not llama-bench's JSON"));
                assert_eq!(prefixed, says, "{rel}: {:?}", imported.outcome.warnings);
                let single = rows
                    .iter()
                    .any(|r| numbers(r, "samples_ts").unwrap().len() == 1);
                let says = imported
                    .outcome
                    .warnings
                    .iter()
                    .any(|w| w.contains("ran once"));
                assert_eq!(single, says, "{rel}: {:?}", imported.outcome.warnings);
            }
        }
    }
}

/// A copy of a real file's rows, edited, written as `-o json` to `dir`.
fn write_rows(dir: &Path, name: &str, rows: &[Value]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(rows).unwrap()).unwrap();
    path
}

fn without(rows: &[Value], key: &str) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove(key);
            r
        })
        .collect()
}

#[test]
fn a_llama_bench_file_without_a_figure_key_names_the_key() {
    let rows = llama_rows(&real(
        "llama-bench/javelit-rocm72-step35-flash-depth-sweep.json",
    ));
    let tmp = tempfile::tempdir().unwrap();
    // Figures no cell can do without: refused, naming the key.
    for key in ["n_prompt", "n_gen", "avg_ts", "avg_ns"] {
        let file = write_rows(tmp.path(), "refused.json", &without(&rows, key));
        let err = refusal(&file, None);
        assert!(err.contains(&format!("{key}: expected")), "{key}: {err}");
    }
    // n_depth: the context is not stated (as in builds before ~5200; no real
    // file of them was found, so the oldest real file, with n_depth removed):
    // refused unless --context gives it.
    let old = llama_rows(&real(
        "llama-bench/llm-performance-snowpiercer-15b-q3kl.json",
    ));
    let file = write_rows(tmp.path(), "no-n_depth.json", &without(&old, "n_depth"));
    let err = refusal(&file, None);
    assert!(
        err.contains("[0]: n_depth: absent: this llama-bench (build 5606)")
            && err.contains("--context 0"),
        "{err}"
    );
    let given = import_checked(&file, &[COUNT], Some(0));
    assert_eq!(given.run.cells.len(), 2);
    let c = given.run.decode_cell(0, 1).unwrap();
    assert!(
        c.measured_by.as_ref().unwrap().definitions["context_tokens"].contains("--context"),
        "the cell says where its context came from"
    );
    let p = given.run.prefill_cells().next().unwrap();
    assert_eq!(p.context_tokens, 8192);
    assert!(p.measured_by.as_ref().unwrap().definitions["context_tokens"].contains("--context"));
    // Figures that only qualify others: the import says what is left empty.
    for (key, left_empty) in [
        ("stddev_ts", "no 95% interval"),
        ("samples_ts", "no 95% interval"),
        ("samples_ns", "left empty"),
    ] {
        let file = write_rows(tmp.path(), "edited.json", &without(&rows, key));
        let r = import_checked(&file, &[COUNT], None);
        assert!(
            r.outcome
                .warnings
                .iter()
                .any(|w| w.contains(&format!("{key}: absent")) && w.contains(left_empty)),
            "{key}: {:?}",
            r.outcome.warnings
        );
        let c = r.run.decode_cell(8192, 1).unwrap();
        if key == "samples_ns" {
            assert_eq!(c.measured_s, None);
            assert_eq!(c.completed_requests, None);
            assert!(c.total_tok_per_s_ci95.is_some());
        } else {
            assert_eq!(c.total_tok_per_s_ci95, None, "{key}");
            assert_eq!(c.completed_requests, Some(5));
        }
    }
    // Cards: a missing one is listed, never filled in.
    for (key, card) in [("model_filename", MODEL), ("gpu_info", GPU)] {
        let file = write_rows(tmp.path(), "edited.json", &without(&rows, key));
        let r = import_checked(&file, &[card, COUNT], None);
        if key == "model_filename" {
            assert!(
                r.outcome
                    .warnings
                    .iter()
                    .any(|w| w.contains("model_filename: absent")),
                "{:?}",
                r.outcome.warnings
            );
        }
    }
}

#[test]
fn llama_bench_repeats_combine_for_generation_and_are_refused_for_prompts() {
    // No real file repeats a test at the same settings: the snowpiercer
    // file's rows are appended again (as `>>` of a second run would).
    let rows = llama_rows(&real(
        "llama-bench/llm-performance-snowpiercer-15b-q3kl.json",
    ));
    let tmp = tempfile::tempdir().unwrap();
    let tg: Vec<Value> = rows.iter().filter(|r| r["n_gen"] != 0).cloned().collect();
    let mut again = tg[0].clone();
    again["avg_ts"] = Value::from(80.0);
    again["test_time"] = Value::from("2025-06-08T23:00:00Z");
    let file = write_rows(tmp.path(), "tg-twice.json", &[tg[0].clone(), again]);
    let r = import_checked(&file, &[COUNT], None);
    let c = r.run.decode_cell(0, 1).unwrap();
    assert_eq!(c.repeats.len(), 2);
    let want = (num(&tg[0], "avg_ts").unwrap() + 80.0) / 2.0;
    assert_figure("median of the repeats", c.total_tok_per_s, Some(want));
    assert!(
        c.total_tok_per_s_ci95
            .as_ref()
            .unwrap()
            .method
            .contains("2 repeats in the file")
    );
    assert_eq!(r.run.meta.run.prefill_mode, None, "no prompt test");

    let pp: Vec<Value> = rows.iter().filter(|r| r["n_gen"] == 0).cloned().collect();
    let file = write_rows(tmp.path(), "pp-twice.json", &[pp[0].clone(), pp[0].clone()]);
    let err = refusal(&file, None);
    assert!(
        err.contains("[1]: a second pp8192 at n_depth 0 at the same settings"),
        "{err}"
    );
}

/// The lines of a real llama-bench JSONL file that `keep` selects, as they
/// are (the split its refusal suggests, done with jq -c 'select(...)').
fn write_lines(dir: &Path, name: &str, file: &Path, keep: impl Fn(&Value) -> bool) -> PathBuf {
    let text = std::fs::read_to_string(file).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && keep(&serde_json::from_str(l).unwrap()))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    path
}

/// Imports a file that makes several runs, with every card given.
fn import_runs(file: &Path) -> (tempfile::TempDir, Vec<Outcome>, Vec<Run>) {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta_for(&[COUNT]);
    let written = import(
        None,
        &[file.to_path_buf()],
        &common::ingest::options(tmp.path(), Some("x"), meta.as_deref(), None, false),
    )
    .unwrap_or_else(|e| panic!("{}: {e:#}", file.display()));
    let runs = written
        .iter()
        .map(|o| sitegen::store::load_run(&o.dir).unwrap())
        .collect();
    (tmp, written, runs)
}

#[test]
fn llama_bench_generation_lengths_are_runs_of_their_own_not_repeats() {
    // lhl's shisa-v2 8B file: tg1 ... tg8192 and pp1 ... pp8192 at depth 0,
    // on ROCm (each test 4 times) and Vulkan (once), with and without flash
    // attention. Refused whole (different settings); split as the refusal
    // says, each generation length is a run of its own.
    let real_file = real("llama-bench/strix-halo-testing-shisa-8b-tg1-to-tg8192-raw-runs.jsonl");
    let rows = llama_rows(&real_file);
    let tmp = tempfile::tempdir().unwrap();
    let vulkan = |r: &Value| r["backends"] == "Vulkan" && r["flash_attn"] == false;
    let file = write_lines(tmp.path(), "vulkan.jsonl", &real_file, vulkan);
    let (_data, outcomes, runs) = import_runs(&file);
    let ids: Vec<&str> = outcomes.iter().map(|o| o.id.as_str()).collect();
    let lengths = [
        1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
    ];
    let mut want: Vec<String> = vec!["x-pp".into()];
    want.extend(lengths.iter().map(|g| format!("x-tg{g}")));
    assert_eq!(ids, want);
    for (run, o) in runs.iter().zip(&outcomes) {
        assert!(
            o.warnings
                .iter()
                .any(|w| w.contains("at 14 lengths (tg1, tg2,")),
            "{:?}",
            o.warnings
        );
        if o.id == "x-pp" {
            assert_eq!(run.meta.run.decode_test, DecodeTest::None);
            assert_eq!(run.meta.run.max_output_tokens, None);
            assert_eq!(run.prefill_cells().count(), 14);
            assert_eq!(run.decode_cells().count(), 0);
            continue;
        }
        let g: u64 = o.id.strip_prefix("x-tg").unwrap().parse().unwrap();
        let row = rows
            .iter()
            .find(|r| vulkan(r) && r["n_gen"] == g && r["n_prompt"] == 0)
            .unwrap();
        assert_eq!(run.meta.run.max_output_tokens, Some(g as u32), "{}", o.id);
        assert_eq!(run.meta.run.decode_test, DecodeTest::FixedTokens);
        assert_eq!(run.meta.run.prefill_mode, None, "{}", o.id);
        assert_eq!(run.cells.len(), 1, "{}", o.id);
        let c = run.decode_cell(0, 1).unwrap();
        // Its own figure, not a blend of the lengths.
        assert_figure(&o.id, c.total_tok_per_s, num(row, "avg_ts"));
        assert!(c.repeats.is_empty());
        assert_eq!(c.output_tokens, Some(g * 5), "{}", o.id);
    }
    let tg128 = runs[want.iter().position(|i| i == "x-tg128").unwrap()]
        .decode_cell(0, 1)
        .unwrap();
    assert_figure("tg128", tg128.total_tok_per_s, Some(43.415714));
    let tg8192 = runs.last().unwrap().decode_cell(0, 1).unwrap();
    assert_figure("tg8192", tg8192.total_tok_per_s, Some(28.120159));

    // ROCm without flash attention ran each test 4 times: the 4 rows of one
    // length are repeats of one setting (combined), never of another length.
    let rocm = |r: &Value| r["backends"] == "ROCm" && r["flash_attn"] == false && r["n_gen"] != 0;
    let file = write_lines(tmp.path(), "rocm-tg.jsonl", &real_file, rocm);
    let (_data, outcomes, runs) = import_runs(&file);
    assert_eq!(outcomes.len(), 14, "no prompt tests: no -pp run");
    for (run, o) in runs.iter().zip(&outcomes) {
        let g: u64 = o.id.strip_prefix("x-tg").unwrap().parse().unwrap();
        let mut ts: Vec<f64> = rows
            .iter()
            .filter(|r| rocm(r) && r["n_gen"] == g)
            .map(|r| num(r, "avg_ts").unwrap())
            .collect();
        assert_eq!(ts.len(), 4, "{}", o.id);
        ts.sort_by(f64::total_cmp);
        let c = run.decode_cell(0, 1).unwrap();
        assert_eq!(c.repeats.len(), 4, "{}", o.id);
        assert_figure(&o.id, c.total_tok_per_s, Some((ts[1] + ts[2]) / 2.0));
    }
    let tg128 = runs[7].decode_cell(0, 1).unwrap();
    assert_eq!(outcomes[7].id, "x-tg128");
    // 37.205605, 37.236084: the middle two of tg128's four repeats.
    assert_figure("ROCm tg128", tg128.total_tok_per_s, Some(37.2208445));
}

#[test]
fn llama_bench_edge_cases_no_real_file_shows() {
    let rows = llama_rows(&real(
        "llama-bench/strix-halo-testing-llama32-1b-hip-depth.jsonl",
    ));
    let tmp = tempfile::tempdir().unwrap();
    // A -pg test (prompt and generation timed together): named, not imported.
    let mut pg = rows[0].clone();
    pg["n_gen"] = Value::from(128);
    let file = write_rows(tmp.path(), "pg.json", &[rows[0].clone(), pg]);
    let r = import_checked(&file, &[COUNT], None);
    assert_eq!(r.run.cells.len(), 1);
    assert!(
        r.outcome
            .warnings
            .iter()
            .any(|w| w.contains("pp512+tg128 ([1])")),
        "{:?}",
        r.outcome.warnings
    );
    assert_eq!(r.run.meta.run.decode_test, DecodeTest::None);
    // Only prompt tests at depth: nothing maps to a cell.
    let file = write_rows(tmp.path(), "pp-at-depth.json", &[rows[2].clone()]);
    let err = refusal(&file, None);
    assert!(err.contains("no test maps to a cell"), "{err}");
    // Two identical GPUs: the GPU is named, its count left to the person.
    let two: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["gpu_info"] = Value::from("NVIDIA RTX 6000, NVIDIA RTX 6000");
            r
        })
        .collect();
    let file = write_rows(tmp.path(), "two-gpus.json", &two);
    let r = import_checked(&file, &[COUNT], None);
    assert_eq!(r.run.meta.hardware.gpu, "NVIDIA RTX 6000");
    assert!(
        r.outcome
            .warnings
            .iter()
            .any(|w| w.contains("gpu_info lists 2 devices")),
        "{:?}",
        r.outcome.warnings
    );
    // JSONL after other output; a setting that differs in a JSON array.
    let mut text = String::from("load_backend: loaded ROCm backend\n");
    for r in &rows {
        text.push_str(&format!("{r}\n"));
    }
    let file = tmp.path().join("prefixed.jsonl");
    std::fs::write(&file, &text).unwrap();
    assert_eq!(Format::detect(&text).map(Format::name), Some("llama-bench"));
    let r = import_checked(&file, &[COUNT], None);
    assert!(
        r.outcome
            .layout
            .contains("(-o jsonl), after 1 line of other output"),
        "{}",
        r.outcome.layout
    );
    assert!(
        r.outcome
            .warnings
            .iter()
            .any(|w| w.contains("line 1 is not llama-bench's JSON")),
        "{:?}",
        r.outcome.warnings
    );
    assert_eq!(r.run.cells.len(), 6);
    let mut mixed = rows.clone();
    mixed[1]["flash_attn"] = Value::from(false);
    let file = write_rows(tmp.path(), "mixed.json", &mixed);
    let err = refusal(&file, None);
    assert!(
        err.contains("(flash_attn: true, false)")
            && err.contains("jq '[.[] | select(.flash_attn == true)]' FILE"),
        "{err}"
    );
}

// ---------------------------------------------------------------- llmperf

/// Every mapped figure of a summary against the file.
fn check_llmperf(rel: &str, v: &Value, imported: &Imported) {
    let run = &imported.run;
    assert_eq!(run.cells.len(), 1, "{rel}");
    let Cell::Decode(c) = &run.cells[0] else {
        panic!("{rel}: a decode cell")
    };
    let what = |f: &str| format!("{rel}: {f}");
    assert_eq!(
        c.context_tokens,
        num(v, "results_number_input_tokens_mean").unwrap().round() as u64,
        "{}",
        what("context")
    );
    assert_eq!(
        c.concurrency as f64,
        num(v, "num_concurrent_requests").unwrap(),
        "{}",
        what("concurrency")
    );
    let completed = num(v, "results_num_completed_requests").unwrap();
    assert_eq!(c.completed_requests, Some(completed as u64), "{rel}");
    let duration = completed / num(v, "results_num_completed_requests_per_min").unwrap() * 60.0;
    assert_figure(&what("measured s"), c.measured_s, Some(duration));
    assert_eq!(
        c.output_tokens,
        Some((num(v, "results_number_output_tokens_mean").unwrap() * completed).round() as u64),
        "{}",
        what("output tokens")
    );
    let errors = num(v, "results_number_errors").unwrap();
    if errors > 0.0 {
        assert_eq!(c.status, Status::Error, "{rel}");
        let started = num(v, "results_num_requests_started").unwrap();
        let reason = c.reason.as_ref().unwrap().words();
        assert!(
            reason.starts_with(&format!("{errors} of {started} requests failed")),
            "{reason}"
        );
        assert!(reason.contains(v["results_error_code_frequency"].as_str().unwrap()));
        assert_eq!(c.total_tok_per_s, None, "{rel}: an Error cell has no total");
        assert_eq!(c.per_request_tok_per_s, None);
    } else {
        assert_eq!(c.status, Status::Valid, "{rel}");
        assert_figure(
            &what("total tok/s"),
            c.total_tok_per_s,
            num(v, "results_mean_output_throughput_token_per_s"),
        );
        // llmperf's own total is its tokens / its duration.
        assert!(
            (c.output_tokens.unwrap() as f64 / duration / c.total_tok_per_s.unwrap() - 1.0).abs()
                < 0.01,
            "{rel}: the total is output tokens / the duration"
        );
        assert_figure(
            &what("TTFT"),
            c.ttft_median_ms,
            num(v, "results_ttft_s_quantiles_p50").map(|s| s * 1000.0),
        );
        assert_figure(
            &what("TBT"),
            c.tbt_median_ms,
            num(v, "results_inter_token_latency_s_quantiles_p50").map(|s| s * 1000.0),
        );
        assert_figure(
            &what("per-request"),
            c.per_request_tok_per_s,
            num(
                v,
                "results_request_output_throughput_token_per_s_quantiles_p50",
            ),
        );
        assert_figure(
            &what("active"),
            c.avg_active_requests,
            Some(num(v, "results_end_to_end_latency_s_mean").unwrap() * completed / duration),
        );
    }
    let by = c.measured_by.as_ref().unwrap();
    assert_eq!(by.tool, "llmperf");
    assert_eq!(&by.raw, v, "{rel}: raw");
    for field in ["total_tok_per_s", "tbt_ms", "context_tokens", "concurrency"] {
        assert!(by.definitions.contains_key(field), "{}", what(field));
    }
    let m = &run.meta;
    let model = v["model"].as_str().unwrap();
    assert_eq!(m.served_model, model);
    assert_eq!(m.model, model.rsplit('/').next().unwrap());
    assert_eq!(m.run.decode_test, DecodeTest::RequestBurst);
    let at =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(v["timestamp"].as_u64().unwrap());
    assert_eq!(
        m.measured_at.as_deref(),
        Some(humantime::format_rfc3339_seconds(at).to_string().as_str())
    );
    assert_eq!(
        imported.outcome.layout,
        format!("llmperf summary {}", v["version"].as_str().unwrap())
    );
}

#[test]
fn every_llmperf_file_imports_with_its_figures_or_is_refused_for_a_true_reason() {
    for (rel, expect) in LLMPERF {
        let file = real(rel);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            Format::detect(&text).map(Format::name),
            Some("llmperf"),
            "{rel} is recognised"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        match expect {
            Expect::Refused(why) => {
                let err = refusal(&file, None);
                assert!(err.contains(why), "{rel}: {err}");
                // True of the file.
                if let Some(records) = v.as_array() {
                    assert!(records[0].get("num_concurrent_requests").is_none());
                    assert!(records[0].get("model").is_none());
                    let beside = file
                        .to_string_lossy()
                        .replace("_individual_responses", "_summary");
                    assert!(Path::new(&beside).exists(), "{beside}");
                } else {
                    assert!(
                        num(&v, "num_concurrent_requests").unwrap()
                            > num(&v, "results_num_requests_started").unwrap()
                    );
                }
            }
            Expect::Imports(missing) => {
                let imported = import_checked(&file, missing, None);
                check_llmperf(rel, &v, &imported);
            }
        }
    }
}

#[test]
fn an_llmperf_summary_without_a_figure_key_names_the_key() {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(real("llmperf/leaderboard-groq_70b-summary.json")).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &Value| {
        let p = tmp.path().join(name);
        std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
        p
    };
    let drop = |keys: &[&str]| {
        let mut v = v.clone();
        for k in keys {
            v.as_object_mut().unwrap().remove(*k);
        }
        v
    };
    // Without these no cell can be made: refused, naming the key.
    for keys in [
        &["num_concurrent_requests"][..],
        &["results_num_completed_requests"],
        &["results_mean_output_throughput_token_per_s"],
        &["results_number_errors", "results_error_rate"],
        &["results_number_input_tokens_mean", "mean_input_tokens"],
    ] {
        let file = write(&format!("refused-{}.json", keys.len()), &drop(keys));
        let err = refusal(&file, None);
        assert!(
            err.contains(keys[0]) && !err.contains("not a format"),
            "{keys:?}: {err}"
        );
    }
    // These leave a figure empty (or read it from another key), and say so.
    let figure = |c: &sitegen::model::DecodeCell, key: &str| match key {
        "results_ttft_s_quantiles_p50" => c.ttft_median_ms,
        "results_inter_token_latency_s_quantiles_p50" => c.tbt_median_ms,
        "results_request_output_throughput_token_per_s_quantiles_p50" => c.per_request_tok_per_s,
        "results_number_output_tokens_mean" => c.output_tokens.map(|t| t as f64),
        "results_num_completed_requests_per_min" => c.measured_s,
        "results_end_to_end_latency_s_mean" => c.avg_active_requests,
        _ => Some(c.context_tokens as f64),
    };
    for key in [
        "results_ttft_s_quantiles_p50",
        "results_inter_token_latency_s_quantiles_p50",
        "results_request_output_throughput_token_per_s_quantiles_p50",
        "results_number_output_tokens_mean",
        "results_num_completed_requests_per_min",
        "results_end_to_end_latency_s_mean",
        "results_number_input_tokens_mean",
        "results_number_errors",
        "results_num_requests_started",
    ] {
        let file = write("left-empty.json", &drop(&[key]));
        let r = import_checked(&file, &[GPU, COUNT, ENGINE], None);
        assert!(
            r.outcome
                .warnings
                .iter()
                .any(|w| w.contains(&format!("{key}: absent"))),
            "{key}: {:?}",
            r.outcome.warnings
        );
        let Cell::Decode(c) = &r.run.cells[0] else {
            panic!()
        };
        match key {
            "results_number_input_tokens_mean" => {
                assert_eq!(c.context_tokens, v["mean_input_tokens"].as_u64().unwrap());
                assert!(
                    c.measured_by.as_ref().unwrap().definitions["context_tokens"]
                        .contains("requested")
                );
            }
            "results_number_errors" | "results_num_requests_started" => {
                assert_eq!(c.status, Status::Valid, "{key}: no errors in the file");
            }
            _ => assert_eq!(figure(c, key), None, "{key}: left empty, not filled in"),
        }
    }
    // The model: a missing card, listed.
    let file = write("no-model.json", &drop(&["model"]));
    import_checked(&file, &[MODEL, GPU, COUNT, ENGINE], None);
}

#[test]
fn llmperf_cases_no_real_file_shows() {
    let text = std::fs::read_to_string(real(
        "llmperf/llmperf-test-gpt-4-1-nano_5500_350-c1_summary.json",
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &Value| {
        let p = tmp.path().join(name);
        std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
        p
    };
    // Every request failed: an Error cell with the counts.
    let mut failed = v.clone();
    failed["results_num_completed_requests"] = Value::from(0);
    failed["results_number_errors"] = Value::from(10);
    failed["results_num_completed_requests_per_min"] = Value::from(0.0);
    let file = write("all-failed.json", &failed);
    let r = import_checked(&file, &[GPU, COUNT, ENGINE], None);
    let Cell::Decode(c) = &r.run.cells[0] else {
        panic!()
    };
    assert_eq!(c.status, Status::Error);
    assert_eq!(
        c.reason.as_ref().map(|r| r.words()).as_deref(),
        Some("all 10 requests failed")
    );
    assert_eq!(c.total_tok_per_s, None);
    // Two summaries of one model at two concurrencies make one run.
    let mut c2 = v.clone();
    c2["num_concurrent_requests"] = Value::from(2);
    let files = [write("c1.json", &v), write("c2.json", &c2)];
    let tmp2 = tempfile::tempdir().unwrap();
    let meta = meta_for(&[GPU, COUNT, ENGINE]);
    let out = import(
        None,
        &files,
        &common::ingest::options(tmp2.path(), Some("x"), meta.as_deref(), None, false),
    )
    .unwrap();
    assert_eq!(out.len(), 1);
    let run = sitegen::store::load_run(&out[0].dir).unwrap();
    let levels: Vec<u32> = run.decode_cells().map(|c| c.concurrency).collect();
    assert_eq!(levels, [1, 2]);
    // Two models are two runs.
    let groq = real("llmperf/leaderboard-groq_70b-summary.json");
    let err = format!(
        "{:#}",
        import(
            None,
            &[files[0].clone(), groq],
            &common::ingest::options(tmp2.path(), Some("x"), meta.as_deref(), None, true)
        )
        .unwrap_err()
    );
    assert!(err.contains("one run is one model"), "{err}");
}
