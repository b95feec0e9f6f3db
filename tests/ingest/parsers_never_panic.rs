//! Property tests of every parser that reads text from outside: arbitrary
//! bytes and random mutations of real fixtures never panic, never hang, and
//! either parse or return an error that names the file. The case count is
//! bounded so the suite stays fast; failures proptest finds are kept in
//! proptest-regressions/ and replayed first on every run.

use crate::common;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use sitegen::ingest::{Format, Given, IMPORTERS};
use sitegen::store;

/// The name every error must carry.
const FILE: &str = "input-under-test.txt";

/// Runs `parse` on `text` in a thread: a panic fails the case, so does
/// taking longer than a few seconds, and an error must name the file.
fn holds(text: String, parse: Parser) -> Result<(), TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(parse.as_ref()(Path::new(FILE), &text));
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(message)) => {
            prop_assert!(
                message.contains(FILE),
                "the error does not name the file: {message}"
            );
            Ok(())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail("the parser hung")),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail("the parser panicked"))
        }
    }
}

fn err<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<(), String> {
    r.map(|_| ()).map_err(|e| format!("{e:#}"))
}

fn cell(p: &Path, t: &str) -> Result<(), String> {
    err(store::parse_cell(p, t))
}
fn run_meta(p: &Path, t: &str) -> Result<(), String> {
    err(store::parse_run_meta(p, t))
}
fn comparisons(p: &Path, t: &str) -> Result<(), String> {
    err(store::parse_comparisons(p, t))
}
fn notes(_: &Path, t: &str) -> Result<(), String> {
    // Markdown never fails; it must only not panic, and raw HTML stays text.
    let html = sitegen::render::markdown::render_markdown(t);
    if html.contains("<script") {
        return Err(format!("{FILE}: raw HTML came through: {html}"));
    }
    Ok(())
}
fn detect(_: &Path, t: &str) -> Result<(), String> {
    let _ = Format::detect(t);
    Ok(())
}

/// A parser under test: its text in, an error message (or nothing) out.
type Parser = std::sync::Arc<dyn Fn(&Path, &str) -> Result<(), String> + Send + Sync>;

/// An input of each importer, real where one imports (a hand-written one
/// where no real file shows every status), and whether it imports as it
/// is: a new format adds its row here.
const IMPORTER_INPUTS: &[(&str, &str, bool)] = &[
    (
        "page",
        "tests/fixtures/pages/glm-5.3-flash-h200x4-vllm.txt",
        true,
    ),
    (
        "csv",
        "tests/fixtures/hand-written/paused.hand-written.csv",
        true,
    ),
    (
        "llm-decode-bench",
        "tests/fixtures/hand-written/llm-decode-bench-0.6.2-statuses.hand-written.json",
        true,
    ),
    (
        "vllm-bench",
        "tests/fixtures/real/vllm-bench/emulated-vllm-0.33.0-c4.json",
        true,
    ),
    (
        "guidellm",
        "tests/fixtures/real/guidellm/guidellm-repo-benchmarks_stripped.json",
        true,
    ),
    (
        "guidellm",
        "tests/fixtures/real/guidellm/guidellm-repo-benchmarks_stripped.yaml",
        true,
    ),
    (
        "aiperf",
        "tests/fixtures/real/aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.json",
        true,
    ),
    (
        "sglang-bench",
        "tests/fixtures/real/sglang-bench/emulated-sglang-0.5.23.jsonl",
        true,
    ),
    (
        "genai-perf",
        "tests/fixtures/real/genai-perf/adaptive-auto-c50-non-streaming-genai_perf.json",
        true,
    ),
    // Every real vLLM offline file is refused (it records no batch or lengths).
    (
        "vllm-offline",
        "tests/fixtures/real/vllm-offline/vllm-benchmarks-ascend-latency_llama8B_tp1.json",
        false,
    ),
    (
        "llama-bench",
        "tests/fixtures/real/llama-bench/javelit-rocm72-step35-flash-depth-sweep.json",
        true,
    ),
    (
        "llmperf",
        "tests/fixtures/real/llmperf/leaderboard-groq_70b-summary.json",
        true,
    ),
    // Read alone, a run file has no experiment_metadata.json beside it:
    // refused after its own figures are read.
    (
        "genai-bench",
        "tests/fixtures/real/genai-bench/sglgb-parallel-D100_100_text-to-text_zai-org_GLM-4.6_num_concurrency_1_time_300s.json",
        false,
    ),
    (
        "llmperf-bench",
        "tests/fixtures/real/llmperf-bench/philschmid-mistralai_Mistral-7B-Instruct-v0.2_tp_1_results.json",
        true,
    ),
    // Read alone, the records have no AIPerf summary beside them: refused
    // after every record is read.
    (
        "aiperf-records",
        "tests/fixtures/real/aiperf-records/aiperf-repo-example-run1-profile_export.jsonl",
        false,
    ),
    (
        "inference-perf",
        "tests/fixtures/real/inference-perf/wva-staircase-20260803-stage_2_lifecycle_metrics.json",
        true,
    ),
    // A Server summary is read whole before it asks for --context, which
    // this run does not give.
    (
        "mlperf",
        "tests/fixtures/real/mlperf/ntuhpc-v5.1-lenovo-b200x8-llama2-70b-99.9-server-ranging-invalid-mlperf_log_summary.txt",
        false,
    ),
    // No real Benchmark Report was found (SOURCES.md, "Found for issue 38").
    (
        "llm-d-report",
        "tests/fixtures/hand-written/llm-d-report-vllm-converter.hand-written.yaml",
        true,
    ),
];

/// The importer of that name, as `sitegen ingest` calls it on one file.
fn importer(name: &'static str) -> Parser {
    let imp = IMPORTERS
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no importer {name}"));
    std::sync::Arc::new(move |p: &Path, t: &str| {
        let given = Given {
            id: "run".into(),
            context_tokens: None,
            gpu_index: None,
            gpu_count: None,
        };
        err((imp.read)(&[(p.to_path_buf(), t.to_string())], &given))
    })
}

/// Every parser with an input it reads, and whether that input parses as
/// it is.
fn parsers() -> Vec<(&'static str, Parser, String, bool)> {
    let repo = common::repo();
    let read = |rel: &str| std::fs::read_to_string(repo.join(rel)).unwrap();
    let run_dir = "data/glm-5.3-flash-h200x4-vllm";
    let own = |f: fn(&Path, &str) -> Result<(), String>| -> Parser { std::sync::Arc::new(f) };
    let mut all: Vec<(&'static str, Parser, String, bool)> = vec![
        (
            "cell",
            own(cell),
            read(&format!("{run_dir}/cells/decode-00008192-x064.json")),
            true,
        ),
        (
            "run.json",
            own(run_meta),
            read(&format!("{run_dir}/run.json")),
            true,
        ),
        (
            "comparisons.json",
            own(comparisons),
            read("data/comparisons.json"),
            true,
        ),
        (
            "notes",
            own(notes),
            "# Notes\n\n**bold** <script>x</script> [link](https://example.com)\n".into(),
            true,
        ),
        (
            "detect",
            own(detect),
            read("tests/fixtures/hand-written/llm-decode-bench-0.6.2-statuses.hand-written.json"),
            true,
        ),
    ];
    for (name, input, imports) in IMPORTER_INPUTS {
        all.push((name, importer(name), read(input), *imports));
    }
    all
}

#[test]
fn every_importer_has_an_input_here() {
    for name in Format::names() {
        assert!(
            IMPORTER_INPUTS.iter().any(|(n, _, _)| *n == name),
            "{name}: add an input to IMPORTER_INPUTS"
        );
    }
}

/// One edit of a text: cut it short, drop, repeat or replace a stretch.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let place = any::<usize>();
    prop_oneof![
        place.prop_map(Mutation::Truncate),
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 1usize..200).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        (
            any::<usize>(),
            prop_oneof![
                Just("NaN".to_string()),
                Just("-1".to_string()),
                Just("null".to_string()),
                Just("\"".to_string()),
                Just("{".to_string()),
                Just("]".to_string()),
                Just("\n|".to_string()),
                Just("1e999".to_string()),
                Just("18446744073709551616".to_string()),
                Just("\u{0}".to_string()),
                "\\PC{0,12}",
            ]
        )
            .prop_map(|(a, s)| Mutation::Insert(a, s)),
    ]
}

/// The char boundary at or before `at % (len + 1)`.
fn boundary(text: &str, at: usize) -> usize {
    let mut i = at % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, edits: &[Mutation]) -> String {
    let mut t = text.to_string();
    for edit in edits {
        match edit {
            Mutation::Truncate(at) => t.truncate(boundary(&t, *at)),
            Mutation::Delete(at, n) => {
                let a = boundary(&t, *at);
                let b = boundary(&t, a + n);
                if b >= a {
                    t.replace_range(a..b, "");
                }
            }
            Mutation::Duplicate(at, n) => {
                let a = boundary(&t, *at);
                let b = boundary(&t, a + n).max(a);
                let piece = t[a..b].to_string();
                t.insert_str(b, &piece);
            }
            Mutation::Insert(at, s) => {
                let a = boundary(&t, *at);
                t.insert_str(a, s);
            }
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for (_, parse, _, _) in parsers() {
            holds(text.clone(), parse)?;
        }
    }

    #[test]
    fn mutated_fixtures_parse_or_name_the_file(edits in proptest::collection::vec(mutation(), 1..4)) {
        for (_, parse, fixture, _) in parsers() {
            holds(apply(&fixture, &edits), parse)?;
        }
    }
}

#[test]
fn every_fixture_parses_unmutated() {
    for (name, parse, fixture, imports) in parsers() {
        match (parse.as_ref()(Path::new(FILE), &fixture), imports) {
            (Ok(()), true) => {}
            (Err(e), false) => assert!(e.contains(FILE), "{name}: {e}"),
            (Ok(()), false) => panic!("{name}: imported a file it should refuse"),
            (Err(e), true) => panic!("{name}: {e}"),
        }
    }
}
