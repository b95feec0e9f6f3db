//! Importing other benchmark tools' result files: every mapped figure and
//! status of each fixture (tests/fixtures/tools/, written from each tool's
//! source and documentation), and a malformed file gives one clear error and
//! writes nothing.

mod common;

use std::path::PathBuf;

use sitegen::ingest::{Format, ImportOptions, import};
use sitegen::model::{DecodeCell, DecodeTest, PrefillMode, Run, Status};

fn fixture(name: &str) -> PathBuf {
    common::repo().join("tests/fixtures/tools").join(name)
}

/// Cards a result file does not carry, as a user passes them with --meta.
const META: &str =
    r#"{"hardware": {"gpu": "H100 SXM", "gpu_count": 1}, "engine": {"name": "vllm"}}"#;

struct Imported {
    _tmp: tempfile::TempDir,
    run: Run,
}

fn import_files(
    format: Option<Format>,
    files: &[PathBuf],
    id: Option<&str>,
    meta: bool,
) -> anyhow::Result<Imported> {
    let tmp = tempfile::tempdir().unwrap();
    let meta_path = tmp.path().join("meta.json");
    std::fs::write(&meta_path, META).unwrap();
    let opts = ImportOptions {
        id: id.map(str::to_string),
        data: tmp.path().join("data"),
        force: false,
        meta: meta.then_some(meta_path),
    };
    let written = import(format, files, &opts)?;
    assert_eq!(written.len(), 1);
    let run = sitegen::store::load_run(&written[0].0).unwrap();
    Ok(Imported { _tmp: tmp, run })
}

fn decode(run: &Run, ctx: u64, n: u32) -> &DecodeCell {
    run.decode_cell(ctx, n)
        .unwrap_or_else(|| panic!("no decode cell {ctx} x{n}"))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

/// Imports a malformed copy of `name` (`edit` applied to its text) and
/// returns the error, checking that nothing was written.
fn malformed(format: Format, name: &str, edit: impl Fn(&str) -> String) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(name);
    std::fs::write(
        &file,
        edit(&std::fs::read_to_string(fixture(name)).unwrap()),
    )
    .unwrap();
    let meta = tmp.path().join("meta.json");
    std::fs::write(&meta, META).unwrap();
    let data = tmp.path().join("data");
    let opts = ImportOptions {
        id: Some("x".into()),
        data: data.clone(),
        force: false,
        meta: Some(meta),
    };
    let err = format!("{:#}", import(Some(format), &[file], &opts).unwrap_err());
    assert!(!data.exists(), "nothing is written on error: {err}");
    assert_eq!(err.lines().count(), 1, "one error: {err}");
    err
}

#[test]
fn llm_decode_bench_results_map_every_cell_and_status() {
    let r = import_files(None, &[fixture("llm-decode-bench.json")], None, false).unwrap();
    let run = &r.run;
    // Cards from metadata, the event log and nvidia-smi's text.
    let m = &run.meta;
    assert_eq!(m.model, "Step-3.5-Flash");
    assert_eq!(m.served_model, "stepfun-ai/Step-3.5-Flash");
    assert_eq!((m.hardware.gpu.as_str(), m.hardware.gpu_count), ("H200", 4));
    assert_eq!(m.engine.name, "vllm");
    assert_eq!(m.engine.version.as_deref(), Some("0.11.2"));
    let tool = m.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(
        (tool.name.as_str(), tool.version.as_deref()),
        ("llm-inference-bench", Some("0.6.2"))
    );
    assert_eq!(m.run.decode_test, DecodeTest::FixedDuration);
    assert_eq!(m.run.prefill_mode, Some(PrefillMode::DecodeWarmup));
    assert_eq!(m.run.seconds_per_measurement, Some(30.0));
    assert_eq!(m.run.max_output_tokens, Some(4096));
    assert_eq!(
        m.source.as_deref(),
        Some("llm_decode_bench.py results: llm-decode-bench.json")
    );

    // Prefill: seconds become ms; the tool's rounded figures kept as they are.
    let prefill: Vec<_> = run.prefill_cells().collect();
    assert_eq!(prefill.len(), 2);
    assert_eq!(prefill[0].context_tokens, 8192);
    assert!(close(prefill[0].ttft_ms, 512.0));
    assert!(close(prefill[0].prompt_tok_per_s, 16_000.0));
    assert_eq!(prefill[0].prompt_tokens, Some(8192));
    assert!(close(prefill[1].ttft_ms, 2341.0));
    assert!(close(prefill[1].prompt_tok_per_s, 14_247.0));
    let by = prefill[1].measured_by.as_ref().unwrap();
    assert!(
        by.definitions["total_tok_per_s"].contains("Prometheus"),
        "{by:?}"
    );

    // Valid, with no prompt at all: context 0.
    let c = decode(run, 0, 1);
    assert_eq!(c.status, Status::Valid);
    assert!(close(c.total_tok_per_s, 180.5));
    assert!(close(c.per_request_tok_per_s, 180.5));
    assert!(close(c.ttft_median_ms, 41.0));
    assert!(close(c.tbt_median_ms, 5.54));
    assert!(close(c.avg_active_requests, 1.0));
    assert_eq!(c.completed_requests, Some(1));
    assert!(close(c.measured_s, 30.0));
    let raw = &c.measured_by.as_ref().unwrap().raw;
    assert_eq!(
        raw["server_steps_per_s"], 180.2,
        "the tool's other fields are kept raw"
    );
    // NaN per-request rate: the total / N, as the tool defines it.
    let c = decode(run, 0, 16);
    assert!(close(c.per_request_tok_per_s, 1800.0 / 16.0));
    // Looped: the sentinel is not a throughput.
    let c = decode(run, 8192, 4);
    assert_eq!(c.status, Status::Looped);
    assert_eq!(c.total_tok_per_s, None);
    assert!(
        c.reason
            .as_deref()
            .unwrap()
            .contains("loop_detected_during_measurement")
    );
    // Requests queued: 12 of 16 ran; per request divides by the 12.
    let c = decode(run, 8192, 16);
    assert_eq!(c.status, Status::RequestsQueued);
    assert!(close(c.total_tok_per_s, 1500.0));
    assert!(close(c.per_request_tok_per_s, 125.0));
    assert!(
        c.measured_by
            .as_ref()
            .unwrap()
            .definitions
            .contains_key("per_request_tok_per_s")
    );
    // Failed: the tool's reason.
    let c = decode(run, 32768, 1);
    assert_eq!(c.status, Status::Error);
    assert_eq!(c.reason.as_deref(), Some("HTTP 500: engine core died"));
    // Skipped and then measured: the measurement; null TTFT stays unknown.
    let c = decode(run, 32768, 4);
    assert_eq!(c.status, Status::Valid);
    assert!(close(c.total_tok_per_s, 480.0));
    assert_eq!(c.ttft_median_ms, None);
    // Absent for capacity: 16 x (32768 + 4096) > 300,000.
    let c = decode(run, 32768, 16);
    assert_eq!(c.status, Status::OverCapacity);
    assert!(
        c.reason.as_deref().unwrap().contains("589824"),
        "{:?}",
        c.reason
    );
    assert_eq!(run.decode_cells().count(), 9);
}

#[test]
fn llm_decode_bench_malformed_files_name_the_place() {
    let f = Format::LlmDecodeBench;
    let name = "llm-decode-bench.json";
    let err = malformed(f, name, |t| t[..t.len() / 2].to_string());
    assert!(
        err.contains("llm-decode-bench.json: line ") && err.contains("the file ends early"),
        "{err}"
    );
    let err = malformed(f, name, |t| {
        t.replacen("\"aggregate_tps\": 620.0", "\"aggregate_tps\": \"fast\"", 1)
    });
    assert!(err.ends_with("llm-decode-bench.json: results[1].aggregate_tps: expected a finite number, found \"fast\""), "{err}");
    let err = malformed(f, name, |t| {
        t.replacen("\"aggregate_tps\": 171.0", "\"aggregate_tps\": 180.5", 1)
            .replacen(
                "\"context_tokens\": 8192, \"aggregate_tps\": 180.5",
                "\"context_tokens\": 0, \"aggregate_tps\": 180.5",
                1,
            )
    });
    assert!(
        err.contains("results[3]: a second measurement of the cell results[0]"),
        "{err}"
    );
    let err = malformed(f, name, |t| {
        t.replacen("\"max_tokens\": 4096", "\"max_tokens\": -1", 1)
    });
    assert!(
        err.contains("metadata.max_tokens: expected a whole number >= 0, found -1"),
        "{err}"
    );
}

#[test]
fn vllm_bench_files_make_one_run_with_a_cell_each() {
    let files = [
        "vllm-bench-c4.json",
        "vllm-bench-c1.json",
        "vllm-bench-c16-failed.json",
    ]
    .map(fixture);
    // Several files without a name for the run: asked for one.
    let err = import_files(None, &files, None, true)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("3 vllm-bench files make one run: name it with --id"),
        "{err}"
    );
    let r = import_files(None, &files, Some("qwen3-h100"), true).unwrap();
    let run = &r.run;
    let m = &run.meta;
    assert_eq!(
        (m.model.as_str(), m.served_model.as_str()),
        ("Qwen3-8B", "Qwen/Qwen3-8B")
    );
    assert_eq!(m.run.decode_test, DecodeTest::RequestBurst);
    assert_eq!(
        m.run.benchmark_tool.as_ref().unwrap().name,
        "vllm bench serve"
    );
    assert_eq!(m.run.seconds_per_measurement, None);
    assert_eq!(m.run.prefill_mode, None);
    assert_eq!(
        m.source.as_deref(),
        Some(
            "vllm bench serve results: vllm-bench-c4.json, vllm-bench-c1.json, vllm-bench-c16-failed.json"
        )
    );
    let c = decode(run, 1024, 4);
    assert_eq!(c.status, Status::Valid);
    assert!(close(c.total_tok_per_s, 512.0));
    assert!(close(c.per_request_tok_per_s, 1000.0 / 7.4));
    assert!(close(c.ttft_median_ms, 90.0));
    assert!(close(c.tbt_median_ms, 7.3));
    assert!(close(c.avg_active_requests, 1.998 * 40.0 / 20.0));
    assert_eq!(
        (c.completed_requests, c.output_tokens),
        (Some(40), Some(10_240))
    );
    assert!(close(c.measured_s, 20.0));
    let by = c.measured_by.as_ref().unwrap();
    assert_eq!(by.tool, "vllm bench serve");
    assert!(by.definitions["tbt_ms"].contains("chunk"));
    assert_eq!(by.raw["a_future_key"], "kept raw");
    // request_rate Infinity and std NaN read; long per-request lists dropped.
    let c = decode(run, 1024, 1);
    assert!(close(c.total_tok_per_s, 160.0));
    let raw = &c.measured_by.as_ref().unwrap().raw;
    assert_eq!(raw["request_rate"], "Infinity");
    assert!(raw.get("input_lens").is_none() && raw.get("ttfts").is_some());
    // Failed requests: an Error with the count, and no throughput.
    let c = decode(run, 1024, 16);
    assert_eq!(c.status, Status::Error);
    assert_eq!(c.reason.as_deref(), Some("2 of 160 requests failed"));
    assert_eq!(c.total_tok_per_s, None);
}

#[test]
fn vllm_bench_malformed_files_name_the_field() {
    let f = Format::VllmBench;
    let name = "vllm-bench-c4.json";
    let err = malformed(f, name, |t| {
        t.replace("\"max_concurrency\": 4", "\"max_concurrency\": null")
    });
    assert!(err.contains("vllm-bench-c4.json: top level: max_concurrency: expected the number of requests kept in flight, found none (request_rate \"inf\")"), "{err}");
    let err = malformed(f, name, |t| {
        t.replace("\"duration\": 20.0", "\"duration\": 0")
    });
    assert!(
        err.ends_with("vllm-bench-c4.json: duration: expected a number above 0, found 0"),
        "{err}"
    );
    let err = malformed(f, name, |t| {
        t.replace("\"completed\": 40", "\"completed\": NaN")
    });
    assert!(
        err.ends_with("vllm-bench-c4.json: completed: expected a whole number >= 0, found \"NaN\""),
        "{err}"
    );
    let err = malformed(f, name, |t| t.trim_end().trim_end_matches('}').to_string());
    assert!(err.contains("the file ends early"), "{err}");
}

#[test]
fn sglang_bench_lines_are_cells_and_secrets_are_redacted() {
    let r = import_files(None, &[fixture("sglang-bench.jsonl")], None, true).unwrap();
    let run = &r.run;
    assert_eq!(run.meta.model, "GLM-4.6-FP8");
    assert_eq!(
        run.meta.engine.name, "vllm",
        "--meta wins over the file's backend"
    );
    let c = decode(run, 8192, 1);
    assert!(close(c.total_tok_per_s, 327.68));
    assert!(close(c.per_request_tok_per_s, 1000.0 / 2.58));
    assert!(close(c.ttft_median_ms, 238.0));
    assert!(close(c.tbt_median_ms, 2.55));
    assert!(close(c.avg_active_requests, 1.56 * 8.0 / 12.5));
    assert_eq!(
        (c.completed_requests, c.output_tokens),
        (Some(8), Some(4096))
    );
    let raw = &c.measured_by.as_ref().unwrap().raw;
    assert_eq!(raw["server_info"]["api_key"], "<redacted>");
    let cell_file = std::fs::read_to_string(
        r._tmp
            .path()
            .join("data/sglang-bench/cells/decode-00008192-x001.json"),
    )
    .unwrap();
    assert!(
        !cell_file.contains("sk-should-never"),
        "no secret is stored"
    );
    let c = decode(run, 8192, 8);
    assert!(close(c.total_tok_per_s, 1638.4));
    assert!(close(c.avg_active_requests, 2.48 * 32.0 / 10.0));
}

#[test]
fn sglang_bench_malformed_line_is_named_by_its_line() {
    let err = malformed(Format::SglangBench, "sglang-bench.jsonl", |t| {
        t.replacen("\"completed\": 32", "\"completed\": \"many\"", 1)
    });
    assert!(
        err.ends_with(
            "sglang-bench.jsonl: line 3.completed: expected a whole number >= 0, found \"many\""
        ),
        "{err}"
    );
    let err = malformed(Format::SglangBench, "sglang-bench.jsonl", |t| {
        format!("{t}{{\"backend\": ")
    });
    assert!(err.contains("sglang-bench.jsonl: line 4, column"), "{err}");
}

#[test]
fn guidellm_benchmarks_are_cells_at_their_concurrency() {
    let r = import_files(None, &[fixture("guidellm-benchmarks.json")], None, true).unwrap();
    let run = &r.run;
    let m = &run.meta;
    assert_eq!(m.model, "Llama-3.1-8B-Instruct");
    let tool = m.run.benchmark_tool.as_ref().unwrap();
    assert_eq!(
        (tool.name.as_str(), tool.version.as_deref()),
        ("guidellm", Some("0.3.1"))
    );
    let c = decode(run, 1024, 1);
    assert_eq!(c.status, Status::Valid);
    assert!(close(c.total_tok_per_s, 2560.0 / 20.0));
    assert!(close(c.tbt_median_ms, 7.5));
    assert!(close(c.per_request_tok_per_s, 1000.0 / 7.5));
    assert!(close(c.ttft_median_ms, 50.0));
    assert!(close(c.avg_active_requests, 0.99));
    assert_eq!(
        (c.completed_requests, c.output_tokens),
        (Some(10), Some(2560))
    );
    let raw = &c.measured_by.as_ref().unwrap().raw;
    assert!(
        raw.get("requests").is_none(),
        "per-request records are not kept"
    );
    assert_eq!(raw["worker"]["backend_kwargs"]["api_key"], "<redacted>");
    let c = decode(run, 1024, 8);
    assert!(close(c.total_tok_per_s, 16_384.0 / 20.0));
    let c = decode(run, 1024, 32);
    assert_eq!(c.status, Status::Error);
    assert_eq!(c.reason.as_deref(), Some("6 of 256 requests failed"));
}

#[test]
fn guidellm_rate_paced_benchmark_is_refused_with_why() {
    let err = malformed(Format::Guidellm, "guidellm-benchmarks.json", |t| {
        t.replacen(
            "{\"type_\": \"synchronous\"}",
            "{\"type_\": \"constant\", \"rate\": 5}",
            1,
        )
    });
    assert!(err.contains("guidellm-benchmarks.json: benchmarks[0]: args.strategy: expected a synchronous, concurrent (streams) or throughput (max_concurrency) strategy, found constant"), "{err}");
    let err = malformed(Format::Guidellm, "guidellm-benchmarks.json", |t| {
        t.replacen(
            "\"end_time\": 1762077620.0",
            "\"end_time\": 1762077600.0",
            1,
        )
    });
    assert!(
        err.contains("benchmarks[0]: end_time: expected a time after start_time"),
        "{err}"
    );
}

#[test]
fn each_format_is_recognised_by_its_content() {
    for (name, format) in [
        ("llm-decode-bench.json", Format::LlmDecodeBench),
        ("vllm-bench-c4.json", Format::VllmBench),
        ("sglang-bench.jsonl", Format::SglangBench),
        ("guidellm-benchmarks.json", Format::Guidellm),
    ] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        assert_eq!(Format::detect(&text), Some(format), "{name}");
    }
}

#[test]
fn the_run_page_says_how_imported_figures_are_defined() {
    let files = ["vllm-bench-c4.json", "vllm-bench-c1.json"].map(fixture);
    let r = import_files(Some(Format::VllmBench), &files, Some("q"), true).unwrap();
    let page = sitegen::render::run_page::RunPage::new(&r.run, &[]).unwrap();
    let html = askama::Template::render(&page).unwrap();
    assert!(html.contains("2 cells were measured by vllm bench serve, which defines these figures differently from this site:"));
    assert!(
        html.contains("<dt>Time between tokens</dt><dd>median ITL: time between streamed chunks")
    );
    assert!(html.contains("<dt>Decode test</dt><dd>Request burst</dd>"));
    // The warm-cache TTFT note is not said of a burst that never warmed it.
    assert!(!html.contains(sitegen::labels::TTFT_NOTE));
}

/// Hostile text from every source a page shows: comparisons.json titles and
/// notes, cell reasons, and each importer's free-text fields. None of it may
/// reach a page as markup.
#[test]
fn hostile_text_from_any_source_stays_text() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("in");
    std::fs::create_dir(&dir).unwrap();
    let hostile = |name: &str, edit: &dyn Fn(&str) -> String| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            edit(&std::fs::read_to_string(fixture(name)).unwrap()),
        )
        .unwrap();
        path
    };
    let meta = dir.join("meta.json");
    std::fs::write(
        &meta,
        r#"{"hardware": {"gpu": "<b>GPU</b>", "gpu_count": 1}, "engine": {"name": "vllm"}}"#,
    )
    .unwrap();
    let inputs: Vec<(&str, Vec<PathBuf>)> = vec![
        (
            "evil-decode-bench",
            vec![hostile("llm-decode-bench.json", &|t| {
                t.replace("HTTP 500: engine core died", "<script>alert(1)</script>")
                    .replace(
                        "stepfun-ai/Step-3.5-Flash",
                        "org/<img src=x onerror=alert(2)>",
                    )
            })],
        ),
        (
            "evil-vllm",
            vec![hostile("vllm-bench-c4.json", &|t| {
                t.replace("Qwen/Qwen3-8B", "org/<svg onload=alert(3)>")
            })],
        ),
        (
            "evil-guidellm",
            vec![hostile("guidellm-benchmarks.json", &|t| {
                t.replace(
                    "meta-llama/Llama-3.1-8B-Instruct",
                    "<script>alert(4)</script>",
                )
            })],
        ),
        (
            "evil-sglang",
            vec![hostile("sglang-bench.jsonl", &|t| {
                t.replace("zai-org/GLM-4.6-FP8", "x/<iframe src=javascript:alert(5)>")
            })],
        ),
    ];
    for (id, files) in &inputs {
        let opts = ImportOptions {
            id: Some((*id).into()),
            data: data.clone(),
            force: false,
            meta: Some(meta.clone()),
        };
        import(None, files, &opts).unwrap();
    }
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "<script>alert(6)</script>", "runs": ["evil-vllm", "evil-sglang"],
            "note": "<img src=x onerror=alert(7)> **fine**"}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::pipeline::build_site(&data, &site).unwrap();
    let mut pages = 0;
    for (rel, bytes) in common::files_under(&site) {
        if !rel.ends_with(".html") {
            continue;
        }
        pages += 1;
        let html = String::from_utf8(bytes).unwrap();
        for markup in [
            "<script>alert",
            "<img src=x",
            "<svg onload",
            "<iframe",
            "<b>GPU",
        ] {
            assert!(!html.contains(markup), "{rel} holds {markup:?}");
        }
    }
    assert!(pages >= 6, "{pages} pages");
    // Shown as text, whichever entity form the escaping picks.
    let shown = |rel: &str| {
        std::fs::read_to_string(site.join(rel))
            .unwrap()
            .replace("&#60;", "&lt;")
            .replace("&#62;", "&gt;")
    };
    assert!(
        shown("runs/evil-decode-bench/index.html")
            .contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    assert!(
        shown("runs/evil-guidellm/index.html").contains("&lt;script&gt;alert(4)&lt;/script&gt;")
    );
    let compare = shown("compare/evil-vllm--evil-sglang/index.html");
    assert!(compare.contains("&lt;script&gt;alert(6)&lt;/script&gt;"));
    assert!(
        compare.contains("<strong>fine</strong>"),
        "the note's Markdown still renders"
    );
}
