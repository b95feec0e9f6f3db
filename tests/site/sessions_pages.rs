//! Sessions on the run page and in comparisons, from a real run: `sitegen
//! run --sessions` against real vLLM 0.32 on this machine's CPU
//! (tests/fixtures/servers/vllm-0.32.0/SOURCES.md). Every sentence is held
//! to the window it summarises.

use crate::common;

use crate::common::html::{sel, text};
use scraper::Html;
use sitegen::model::Status;

const RUN: &str = common::REAL_SESSIONS_RUN;

#[test]
fn a_sessions_run_has_its_section_each_sentence_true_of_its_window() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_real_sessions_run(&data, RUN);
    let run = sitegen::store::load_run(&data.join(RUN)).unwrap();
    assert!(run.cells.is_empty() && run.sessions.len() == 4);
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let html = std::fs::read_to_string(site.join(format!("runs/{RUN}/index.html"))).unwrap();
    let page = Html::parse_document(&html);
    assert_eq!(page.select(&sel("nav.toc a[href='#sessions']")).count(), 1);
    let findings: Vec<String> = page
        .select(&sel("#sessions ul.findings li"))
        .map(text)
        .collect();
    assert_eq!(findings.len(), run.sessions.len());
    for (said, w) in findings.iter().zip(&run.sessions) {
        let s = w.sessions;
        assert!(said.starts_with(&format!("{s} session")), "{said}");
        // The deepest turn with a cold prompt, its ratio, and the counter's share.
        let b = sitegen::compare::sessions::benefit(w).unwrap();
        assert!(
            said.contains(&format!("turn {} (", b.deepest.turn)),
            "{said}"
        );
        assert!(
            said.contains(&sitegen::model::format::ratio(b.ratio)),
            "x{s}: {} in {said}",
            b.ratio
        );
        let share = sitegen::compare::sessions::cache_share(w).unwrap();
        assert!(
            said.contains(&sitegen::model::format::share(share.share())),
            "{said}"
        );
        assert!(said.contains("vllm:prefix_cache_hits_total"), "{said}");
        // Every window here found most of its prompts in the cache.
        assert!(!said.contains("no cache benefit"), "{said}");
        assert_eq!(
            said.contains("(Requests queued)"),
            w.status == Status::RequestsQueued
        );
    }
    // A row per window, a row per depth, and the chart.
    assert_eq!(page.select(&sel("#sessions table.sessions")).count(), 2);
    let depth_rows = page
        .select(&sel("#sessions table.sessions"))
        .nth(1)
        .unwrap()
        .select(&sel("tbody tr"))
        .count();
    assert_eq!(
        depth_rows,
        run.sessions.iter().map(|w| w.depths.len()).sum::<usize>()
    );
    assert_eq!(
        page.select(&sel("#sessions figure svg")).count(),
        2,
        "wide and narrow"
    );
    // The downloads: sessions.csv a row per depth, data.json the windows.
    let csv = std::fs::read_to_string(site.join(format!("runs/{RUN}/sessions.csv"))).unwrap();
    assert_eq!(csv.lines().count(), 1 + depth_rows);
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(site.join(format!("runs/{RUN}/data.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(json["sessions"].as_array().unwrap().len(), 4);
    assert!(html.contains("href=\"sessions.csv\""));
    // No cell: no empty measurement table, and no link to its empty CSVs.
    assert_eq!(page.select(&sel("table.measurements")).count(), 0);
    let measurements = text(page.select(&sel("#measurements")).next().unwrap());
    assert!(
        measurements.contains("No prefill or decode cell"),
        "{measurements}"
    );
    assert!(!html.contains("href=\"measurements.csv\""));
    assert!(!html.contains("href=\"capacity.csv\""));
}

/// Two runs of one workload compared: the finding sets one's TTFT over the
/// other's at the deepest turn both reached with the most sessions both ran.
#[test]
fn a_comparison_of_two_sessions_runs_says_whose_turns_come_sooner() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_real_sessions_run(&data, "first");
    common::copy_real_sessions_run(&data, "second");
    // The second run, with its 4-session window's turn 8 twice as slow.
    let file = data.join("second/sessions/sessions-p00001024-u000256-a00064-s0004.json");
    let mut w: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let depth = &mut w["depths"][7];
    assert_eq!(depth["turn"], 8);
    let p50 = depth["ttft_ms"]["p50"].as_f64().unwrap();
    depth["ttft_ms"]["p50"] = (2.0 * p50).into();
    std::fs::write(&file, serde_json::to_string_pretty(&w).unwrap()).unwrap();
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "First vs second", "runs": ["first", "second"]}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let compare = site.join("compare/first--second/index.html");
    let page = Html::parse_document(&std::fs::read_to_string(compare).unwrap());
    let said: Vec<String> = page
        .select(&sel("#findings dl.findings-list > div"))
        .map(text)
        .filter(|t| t.starts_with("Sessions"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    // No matrix cell in either run: no latency tier judged on cells, and no
    // sentence about what their (absent) cells state.
    let all: Vec<String> = page
        .select(&sel("#findings dl.findings-list > div"))
        .map(text)
        .collect();
    assert!(
        all.iter()
            .all(|t| !t.starts_with("Within") && !t.contains("cells state")),
        "{all:?}"
    );
    // 8 sessions were Requests queued in both: 4 is the most both measured validly.
    assert!(said[0].contains("2.00×"), "{}", said[0]);
    assert!(said[0].contains("with 4 sessions"), "{}", said[0]);
    assert!(said[0].contains("at turn 8"), "{}", said[0]);
}

/// A sessions-only run against a run with matrix cells: the latency tiers
/// say which run has no decode cell, not that its cells state nothing.
#[test]
fn a_run_without_cells_compared_with_the_matrix_is_said_to_have_none() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    common::copy_real_sessions_run(&data, "sessions");
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "GLM vs sessions", "runs": ["glm-5.3-flash-h200x4-vllm", "sessions"]}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let html = std::fs::read_to_string(
        site.join("compare/glm-5.3-flash-h200x4-vllm--sessions/index.html"),
    )
    .unwrap();
    let page = Html::parse_document(&html);
    let tiers: Vec<String> = page
        .select(&sel("#findings dl.findings-list > div"))
        .map(text)
        .filter(|t| t.starts_with("Within"))
        .collect();
    assert!(!tiers.is_empty());
    for t in &tiers {
        assert!(
            t.contains("tiny-llama") && t.contains("has no decode cell"),
            "{t}"
        );
        assert!(!t.contains("tiny-llama: its cells state"), "{t}");
    }
}
