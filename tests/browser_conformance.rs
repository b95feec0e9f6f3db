//! The comparison built in the browser (static/compare.js) against the one
//! Rust pre-renders, in node alone: no Chromium.
//!
//! Three synthetic runs on 1, 2 and 4 GPUs cover every status, rounding ties
//! (450/400 = 1.125, 250/400 = 0.625), a zero baseline, an Error prefill with
//! figures, context 0 on every side and contexts or levels only some runs
//! measured. The site is built with them compared; tests/browser/conformance.mjs
//! loads compare.js's functions with the runs' data.js and the site's
//! compare/definitions.js, and every row, figure, ratio, colour and reason it
//! produces must be what the pre-rendered comparison page shows. Its number
//! formats are held to src/model/format.rs on ties too.
//!
//! A test target of its own (`harness = false`, see tests/common/tier.rs):
//! without node it is reported as ignored locally and fails with `CI` set.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use common::repo;
use scraper::{ElementRef, Html, Selector};
use serde_json::json;

fn main() -> ExitCode {
    common::tier::run(
        "node",
        find_node,
        vec![(
            "the_browser_comparison_shows_what_the_prerendered_page_shows",
            the_browser_comparison_shows_what_the_prerendered_page_shows,
        )],
    )
}

struct Node;

fn find_node() -> Result<Node, String> {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(Node)
    } else {
        Err("no node on PATH".into())
    }
}

const RUNS: [(&str, &str, u32); 3] = [
    ("alpha-1gpu", "Alpha", 1),
    ("beta-2gpu", "Beta", 2),
    // The same model as Alpha on another engine version: both are named
    // apart on the page and in the browser ("Alpha (vllm 0.30.0)").
    ("gamma-4gpu", "Alpha", 4),
];

const K8: u64 = 8192;
const K32: u64 = 32_768;
const K128: u64 = 131_072;

/// A decode cell: (context, level, status, total tok/s, reason).
type Decode = (u64, u32, &'static str, Option<f64>, Option<&'static str>);
/// A prefill cell: (context, status, tok/s and TTFT, reason).
type Prefill = (u64, &'static str, Option<(f64, f64)>, Option<&'static str>);

fn decode_cells(run: usize) -> Vec<Decode> {
    let err = Some("the server closed the stream");
    match run {
        // Alpha, 1 GPU: the baseline every ratio divides by.
        0 => vec![
            (0, 1, "valid", Some(100.0), None),
            (K8, 1, "valid", Some(400.0), None),
            (K8, 2, "valid", Some(0.0), None),
            (K8, 4, "requests_queued", Some(500.0), None),
            (K32, 1, "error", None, err),
            (K32, 2, "over_capacity", None, None),
            (K32, 4, "looped", None, None),
            (K128, 1, "valid", Some(90.0), None),
        ],
        // Beta, 2 GPUs: 450/400 is a tie at two decimals; per GPU 0.5625.
        1 => vec![
            (0, 1, "valid", Some(180.0), None),
            (K8, 1, "valid", Some(450.0), None),
            (K8, 2, "valid", Some(300.0), None),
            (K8, 4, "looped", None, None),
            (K8, 8, "valid", Some(1000.0), None),
            (K32, 1, "error", None, err),
            (K32, 2, "over_capacity", None, None),
            (K32, 4, "requests_queued", Some(640.0), None),
            // 126K, within 2% of Alpha's 128K: one row of their matrix.
            (129_024, 1, "valid", Some(95.0), None),
        ],
        // Gamma, 4 GPUs: 250/400 = 0.625, per GPU 0.15625.
        _ => vec![
            (0, 1, "valid", Some(401.0), None),
            (K8, 1, "valid", Some(250.0), None),
            (K8, 2, "valid", Some(12_250.0), None),
            (K8, 4, "over_capacity", None, None),
            (K32, 1, "valid", Some(333.3), None),
            (K32, 2, "looped", None, None),
        ],
    }
}

/// Energy per output token of the cells that recorded it: Alpha's queued
/// 8K × 4 has some and must not be compared; Alpha's 8K × 2 and Beta's
/// 8K × 8 are Valid without it; 1.125 / 1.0 is the rounding tie again;
/// Gamma recorded none ("no energy ratio anywhere").
fn joules(run: usize, ctx: u64, n: u32) -> Option<f64> {
    match (run, ctx, n) {
        (0, 0, 1) => Some(2.0),
        (0, K8, 1) => Some(1.0),
        (0, K8, 4) => Some(0.5),
        (0, K128, 1) => Some(4.0),
        (1, 0, 1) => Some(1.5),
        (1, K8, 1) => Some(1.125),
        (1, K8, 2) => Some(0.8),
        (1, 129_024, 1) => Some(4.2),
        _ => None,
    }
}

/// Cells with a 95% interval (± this many percent); the others' noise is
/// unknown. Alpha's 128K against Beta's 126K (95 / 90 = 1.056, ±5% each) is
/// within noise; Alpha's 8K × 1 against Beta's (450 / 400 = 1.125, ±1% each)
/// is beyond it; Gamma has none.
fn interval_pct(run: usize, ctx: u64, n: u32) -> Option<f64> {
    match (run, ctx, n) {
        (0, K128, 1) | (1, 129_024, 1) => Some(5.0),
        (0, K8, 1) | (1, K8, 1) => Some(1.0),
        _ => None,
    }
}

fn prefill_cells(run: usize) -> Vec<Prefill> {
    match run {
        0 => vec![
            (K8, "valid", Some((16_000.0, 512.0)), None),
            // Failed, yet with figures: charted and listed as measured.
            (
                K32,
                "error",
                Some((9_000.5, 3_640.5)),
                Some("the answer was cut short"),
            ),
        ],
        1 => vec![
            (K8, "valid", Some((20_000.25, 409.6)), None),
            (K32, "error", None, Some("timed out")),
        ],
        _ => vec![(65_536, "valid", Some((30_000.0, 2_184.5)), None)],
    }
}

fn write_data(data: &Path) {
    for (i, (id, model, gpus)) in RUNS.iter().enumerate() {
        let dir = data.join(id);
        std::fs::create_dir_all(dir.join("cells")).unwrap();
        let launch = match i {
            0 => Some("vllm serve alpha --speculative-config '{\"method\":\"eagle\"}'"),
            1 => Some("vllm serve beta"),
            _ => None,
        };
        let meta = json!({
            "schema_version": 1,
            "model": model,
            "served_model": model.to_lowercase(),
            "hardware": {"gpu": "H100 SXM", "gpu_count": gpus},
            // Gamma does not state its quantization: "not stated", no difference.
            "engine": {"name": "vllm", "version": if i == 2 { "0.30.0" } else { "0.29.0" },
                       "quantization": if i == 2 { None } else { Some("FP8") }},
            "run": {"decode_test": "fixed_duration", "seconds_per_measurement": 30.0},
            "launch_command": launch,
        });
        std::fs::write(dir.join("run.json"), meta.to_string()).unwrap();
        for (ctx, n, status, total, reason) in decode_cells(i) {
            let mut cell = json!({
                "phase": "decode", "context_tokens": ctx, "concurrency": n,
                "status": status, "total_tok_per_s": total, "reason": reason,
            });
            if let Some(j) = joules(i, ctx, n) {
                cell["telemetry"] = json!({"gpus": {
                    "source": format!("{model}'s test exporter"), "gpus": gpus,
                    "joules_per_output_token": j, "energy_from": "counter",
                }});
            }
            if let (Some(pct), Some(t)) = (interval_pct(i, ctx, n), total) {
                cell["total_tok_per_s_ci95"] = json!({
                    "low": t * (1.0 - pct / 100.0), "high": t * (1.0 + pct / 100.0), "method": "test",
                });
            }
            std::fs::write(
                dir.join(format!("cells/decode-{ctx:08}-x{n:03}.json")),
                cell.to_string(),
            )
            .unwrap();
        }
        for (ctx, status, figures, reason) in prefill_cells(i) {
            let cell = json!({
                "phase": "prefill", "context_tokens": ctx, "status": status,
                "prompt_tok_per_s": figures.map(|f| f.0), "ttft_ms": figures.map(|f| f.1),
                "reason": reason,
            });
            std::fs::write(
                dir.join(format!("cells/prefill-{ctx:08}.json")),
                cell.to_string(),
            )
            .unwrap();
        }
    }
    let ids: Vec<&str> = RUNS.iter().map(|r| r.0).collect();
    std::fs::write(
        data.join("comparisons.json"),
        json!({"comparisons": [{"title": "Alpha vs Beta vs Gamma", "runs": ids}]}).to_string(),
    )
    .unwrap();
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(el: ElementRef) -> String {
    el.text().collect::<String>().trim().to_string()
}

fn cells_of_rows(table: ElementRef) -> Vec<Vec<String>> {
    table
        .select(&sel("tbody tr"))
        .map(|tr| tr.select(&sel("td")).map(text).collect())
        .collect()
}

/// Numbers to format both ways: ties, the edges of "K", a product that is
/// just below a tie, values that are not ties.
/// Requests-at-once ticks: a lone level's log2 axis reaches 0.5 request.
const COUNTS: [f64; 6] = [0.25, 0.5, 1.0, 1.5, 2.0, 128.0];

const TICKS: [f64; 14] = [
    0.0,
    0.5,
    2.5,
    3.5,
    999.5,
    1_000.0,
    4_764.0,
    9_999.4,
    9_999.5,
    12_250.0,
    12_350.0,
    18_900.0,
    99_950.0,
    1_234_567.0,
];
const RATIOS: [f64; 12] = [
    1.125, 0.625, 0.5625, 0.15625, 1.005, 0.995, 1.0, 2.675, 1_234.565, 0.004, 0.005, 10.0,
];

#[derive(serde::Deserialize)]
struct NodeOut {
    numbers: Numbers,
    setup: Vec<SetupRow>,
    prefill: Vec<Vec<String>>,
    total: View,
    per_gpu: View,
    /// Every figure beyond the headline, by key.
    figures: std::collections::BTreeMap<String, FigureSection>,
    names: Vec<String>,
}

#[derive(serde::Deserialize)]
struct FigureSection {
    matrices: Vec<Matrix>,
    notes: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Numbers {
    ticks: Vec<String>,
    counts: Vec<String>,
    ratios: Vec<String>,
    steps: Vec<usize>,
    ids: Vec<bool>,
}

#[derive(serde::Deserialize, Debug, PartialEq, PartialOrd)]
struct SetupRow {
    card: String,
    field: String,
    values: Vec<String>,
    /// "same", "differs" or "not_stated".
    state: String,
}

#[derive(serde::Deserialize)]
struct View {
    decode: BTreeMap<String, Vec<Vec<String>>>,
    ratios: Vec<Matrix>,
}

#[derive(serde::Deserialize)]
struct Matrix {
    b: String,
    levels: Vec<u32>,
    rows: Vec<MatrixRow>,
    left_out: Vec<String>,
    near_note: Option<String>,
}

#[derive(serde::Deserialize)]
struct MatrixRow {
    context: String,
    cells: Vec<MatrixCell>,
}

#[derive(serde::Deserialize)]
struct MatrixCell {
    text: Option<String>,
    class: Option<String>,
    style: Option<String>,
    why: Option<String>,
    noise: Option<String>,
}

impl MatrixCell {
    /// As the pre-rendered page writes a cell: its text, class and shade,
    /// or a dash and why.
    fn as_page_shows(&self) -> (String, String, Option<String>, Option<String>) {
        match (&self.text, &self.why) {
            (Some(t), None) => (
                t.clone(),
                format!("r {}", self.class.as_deref().unwrap_or("?")),
                self.style.clone(),
                self.noise.clone(),
            ),
            _ => (
                sitegen::model::format::DASH.to_string(),
                "r none".into(),
                None,
                self.why.clone(),
            ),
        }
    }
}

fn run_node(site: &Path, ids: &[&str]) -> NodeOut {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("input.json");
    let run_ids = [
        "glm-5.3-flash-h200x4-vllm",
        "a",
        "_x",
        "run.v2",
        ".hidden",
        "Upper",
        "has space",
        "a/b",
        "",
        "dé",
    ];
    std::fs::write(
        &input,
        json!({
            "site": site,
            "compare_js": repo().join("static/compare.js"),
            "runs": ids,
            "numbers": {"ticks": TICKS, "counts": COUNTS, "ratios": RATIOS, "steps": RATIOS, "ids": run_ids},
        })
        .to_string(),
    )
    .unwrap();
    let out = Command::new("node")
        .arg(repo().join("tests/browser/conformance.mjs"))
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "conformance.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: NodeOut = serde_json::from_slice(&out.stdout).unwrap();
    // The ids are the ones above, in order: pin them against Rust here.
    for (id, &ok) in run_ids.iter().zip(&parsed.numbers.ids) {
        assert_eq!(
            ok,
            sitegen::model::validate::run_id(id),
            "the browser and validate::run_id disagree on {id:?}"
        );
    }
    parsed
}

/// Each matrix the browser made against the pre-rendered one of the same id:
/// levels, every cell with its colour or reason, and the notes under it.
fn check_matrices(
    page: &Html,
    matrices: &[Matrix],
    id_of: impl Fn(&str) -> String,
    check: &mut dyn FnMut(String, &dyn std::fmt::Debug, &dyn std::fmt::Debug),
) {
    for m in matrices {
        let id = id_of(&m.b);
        let Some(table) = page.select(&sel(&format!("#{id} table.ratio"))).next() else {
            // A matrix without a ratio anywhere is its one line.
            check(format!("{id}: rows"), &0usize, &m.rows.len());
            let notes: Vec<String> = page
                .select(&sel(&format!("#{id} p.note")))
                .map(text)
                .collect();
            check(format!("{id}: notes"), &notes, &m.left_out);
            continue;
        };
        let levels: Vec<u32> = table
            .select(&sel("thead th"))
            .skip(1)
            .map(|th| text(th).parse().unwrap())
            .collect();
        check(format!("{id}: levels"), &levels, &m.levels);
        for (tr, row) in table.select(&sel("tbody tr")).zip(&m.rows) {
            let context = text(tr.select(&sel("th")).next().unwrap());
            check(format!("{id}: context"), &context, &row.context);
            for (td, cell) in tr.select(&sel("td")).zip(&row.cells) {
                let shown = (
                    text(td.select(&sel(".ratio-value")).next().unwrap()),
                    td.value().attr("class").unwrap_or_default().to_string(),
                    td.value().attr("style").map(str::to_string),
                    td.select(&sel(".why, .noise-note")).next().map(text),
                );
                check(format!("{id} at {context}"), &shown, &cell.as_page_shows());
            }
        }
        let rows = table.select(&sel("tbody tr")).count();
        check(format!("{id}: rows"), &rows, &m.rows.len());
        let notes: Vec<String> = page
            .select(&sel(&format!("#{id} p.note")))
            .map(text)
            .collect();
        let js_notes: Vec<String> = m.near_note.iter().chain(&m.left_out).cloned().collect();
        check(format!("{id}: notes"), &notes, &js_notes);
    }
}

fn the_browser_comparison_shows_what_the_prerendered_page_shows(_: &Node) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    write_data(&data);
    let site: PathBuf = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let ids: Vec<&str> = RUNS.iter().map(|r| r.0).collect();
    let page = Html::parse_document(
        &std::fs::read_to_string(site.join(format!("compare/{}/index.html", ids.join("--"))))
            .unwrap(),
    );
    let js = run_node(&site, &ids);
    let mut failures = Vec::new();
    let mut check = |what: String, rust: &dyn std::fmt::Debug, browser: &dyn std::fmt::Debug| {
        let (r, b) = (format!("{rust:?}"), format!("{browser:?}"));
        if r != b {
            failures.push(format!("{what}:\n  page/Rust: {r}\n  browser:   {b}"));
        }
    };

    // Number formats, ties included.
    for (v, shown) in TICKS.iter().zip(&js.numbers.ticks) {
        check(
            format!("tick label of {v}"),
            &sitegen::model::format::tok_per_s_short(*v),
            shown,
        );
    }
    for (v, shown) in COUNTS.iter().zip(&js.numbers.counts) {
        check(
            format!("requests tick of {v}"),
            &sitegen::model::format::count_tick(*v),
            shown,
        );
    }
    for (r, shown) in RATIOS.iter().zip(&js.numbers.ratios) {
        check(
            format!("ratio {r}"),
            &sitegen::model::format::ratio(*r),
            shown,
        );
    }
    for (r, step) in RATIOS.iter().zip(&js.numbers.steps) {
        check(
            format!("colour step of {r}"),
            &sitegen::render::colour::ratio_step(*r),
            step,
        );
    }

    // The setup table, derived rows included.
    // (The page shows the rows that differ first, the rest folded.)
    let mut setup: Vec<SetupRow> = page
        .select(&sel("table.setup tbody tr"))
        .map(|tr| {
            let tds: Vec<String> = tr.select(&sel("td")).map(text).collect();
            let th = tr.select(&sel("th")).next().unwrap();
            let mark: String = th
                .select(&sel(".differs-mark, .not-stated"))
                .map(text)
                .collect();
            let state = if tr.value().classes().any(|c| c == "differs") {
                "differs"
            } else if th.select(&sel(".not-stated")).next().is_some() {
                "not_stated"
            } else {
                "same"
            };
            SetupRow {
                card: tds[0].clone(),
                field: text(th).trim_end_matches(&mark).trim().to_string(),
                values: tds[1..].to_vec(),
                state: state.into(),
            }
        })
        .collect();
    let mut js_setup = js.setup;
    let by_state = |r: &SetupRow| (r.state != "differs", r.card.clone(), r.field.clone());
    setup.sort_by_key(by_state);
    js_setup.sort_by_key(by_state);
    check("setup rows".into(), &setup, &js_setup);
    for state in ["differs", "not_stated", "same"] {
        assert!(
            setup.iter().any(|r| r.state == state),
            "no setup row is {state}: the test data must show every state"
        );
    }

    // Prefill: every context any run measured, Error cells with figures too.
    let prefill = page
        .select(&sel("#prefill details.numbers table"))
        .next()
        .expect("a prefill table");
    check("prefill rows".into(), &cells_of_rows(prefill), &js.prefill);

    for (view, basis) in [("total", &js.total), ("per-gpu", &js.per_gpu)] {
        let suffix = if view == "total" { "" } else { "-per-gpu" };
        // Decode: one chart per context at least two runs measured.
        let mut decode = BTreeMap::new();
        for section in page.select(&sel(&format!(
            "#decode [data-gpu-view={view}] section.small-multiple"
        ))) {
            let id = section.value().id().unwrap();
            let tokens = id
                .strip_prefix("decode-")
                .unwrap()
                .trim_end_matches("-per-gpu")
                .to_string();
            let table = section
                .select(&sel("details.numbers table"))
                .next()
                .unwrap();
            decode.insert(tokens, cells_of_rows(table));
        }
        check(format!("{view}: decode rows"), &decode, &basis.decode);

        // Ratios: each run against the first, every cell with its colour or reason.
        let matrices: Vec<String> = page
            .select(&sel(&format!("#ratios [data-gpu-view={view}] section")))
            .map(|s| s.value().id().unwrap().to_string())
            .collect();
        let expected: Vec<String> = basis
            .ratios
            .iter()
            .map(|m| format!("ratio-{}{suffix}", m.b))
            .collect();
        check(format!("{view}: ratio matrices"), &matrices, &expected);
        check_matrices(
            &page,
            &basis.ratios,
            |b| format!("ratio-{b}{suffix}"),
            &mut check,
        );
    }

    // Every other figure (energy per output token): the same matrices, and
    // each run's source.
    assert!(
        js.figures.contains_key("energy"),
        "the script drew no energy section: {:?}",
        js.figures.keys()
    );
    for (key, figure) in &js.figures {
        let matrices: Vec<String> = page
            .select(&sel(&format!("#{key} section")))
            .map(|s| s.value().id().unwrap().to_string())
            .collect();
        let expected: Vec<String> = figure
            .matrices
            .iter()
            .map(|m| format!("{key}-{}", m.b))
            .collect();
        check(format!("{key} matrices"), &matrices, &expected);
        check_matrices(
            &page,
            &figure.matrices,
            |b| format!("{key}-{b}"),
            &mut check,
        );
        let notes: Vec<String> = page
            .select(&sel(&format!("#{key} > p.note")))
            .map(text)
            .collect();
        check(format!("{key} sources"), &notes, &figure.notes);
    }
    // Every run named as the page names it, two runs of one model apart.
    let legend: Vec<String> = page.select(&sel("ul.legend-list li a")).map(text).collect();
    check("run names".into(), &legend, &js.names);
    assert!(
        failures.is_empty(),
        "the browser comparison differs from the pre-rendered page in {} place(s):\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Every word the script looks up is handed over.
    let script = std::fs::read_to_string(repo().join("static/compare.js")).unwrap();
    let words: Vec<&str> = sitegen::render::compare_words::all()
        .iter()
        .map(|w| w.0)
        .collect();
    let read: Vec<&str> = script
        .match_indices("w.")
        .chain(script.match_indices("words."))
        .filter(|(i, _)| !script[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(i, found)| {
            let rest = &script[i + found.len()..];
            &rest[..rest
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(rest.len())]
        })
        .filter(|name| !name.is_empty())
        .collect();
    assert!(read.len() > 30, "found only {read:?}");
    for name in read {
        assert!(
            words.contains(&name),
            "compare.js reads w.{name}, which definitions.js lacks"
        );
    }

    // The cases this test exists for are really on the page.
    let html = page.html();
    for needle in [
        "1.13×", // 450/400
        "0.63×", // 250/400
        "0.16×", // 0.15625 per GPU
        "0 (no prompt)",
        "measured 0 tok/s",
        "128K / 126K",     // contexts within 2% paired
        "No ratio at 32K", // a row without a ratio, said in a line
        "No ratio at 8 requests at once",
        "within noise", // 128K / 126K, ±5% each
        // The Error prefill with figures, 3,640.5 rounded up; in thousands
        // like 16,000 in the same column.
        "9K (3,641 ms)",
        // Energy: a side without it, a queued side with it, none at all.
        "Alpha (vllm 0.29.0 FP8) energy not recorded",
        "No cell ran validly with its energy recorded in both Alpha (vllm 0.29.0 FP8) and Alpha (vllm 0.30.0)",
        "Alpha (vllm 0.30.0): no energy recorded.",
        // Two runs of one model, named apart in the findings.
        "Alpha (vllm 0.30.0) against Alpha (vllm 0.29.0 FP8)",
    ] {
        assert!(html.contains(needle), "the page lacks {needle:?}");
    }
    for status in sitegen::model::Status::ALL {
        assert!(
            (0..3).any(|i| decode_cells(i).iter().any(|c| c.2 == status.code())),
            "no decode cell is {status:?}"
        );
    }
}
