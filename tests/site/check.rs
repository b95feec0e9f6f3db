//! `sitegen check` as CI runs it: the newest run of every series judged,
//! Markdown on stdout and in the job summary, JSON for machines, exit 1 on a
//! regression (or on any change, or never), 2 on data that cannot be read;
//! a change noted in data/changes.json starts a new baseline.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::glm_run;

/// Seven runs of one setup, a day apart; those at and after `slow_from`
/// have their 8K cells times `factor`.
fn series(data: &Path, slow_from: usize, factor: f64) {
    for night in 0..7 {
        glm_run(
            data,
            &format!("glm-{night}"),
            &format!("2026-10-0{}T02:00:00Z", night + 1),
            "0.11.0",
            if night >= slow_from { factor } else { 1.0 },
        );
    }
}

fn check(data: &Path, args: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sitegen"));
    cmd.arg("check").arg("--data").arg(data).args(args);
    cmd.env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn an_unchanged_series_passes_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    series(&data, 99, 1.0);
    let out = check(&data, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let md = stdout(&out);
    assert!(md.starts_with("## sitegen check: 1 within noise\n"), "{md}");
    assert!(md.contains("| GLM-5.3-Flash on H200 SXM 141GB ×4 (FP8) | vllm 0.11.0 · 2026-10-07 | within noise | 1.00× (1.00× to 1.00×) | 0 / 0 of 37 |"), "{md}");
}

#[test]
fn a_regression_fails_with_its_cells_its_summary_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // The newest run 20% slower at 8K.
    series(&data, 6, 0.8);
    let summary = tmp.path().join("summary.md");
    std::fs::write(&summary, "earlier step's summary\n").unwrap();
    let step_summary = tmp.path().join("step-summary.md");
    let json = tmp.path().join("check.json");
    let out = check(
        &data,
        &[
            "--summary",
            summary.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--site-url",
            "https://example.org/speed/",
        ],
        &[("GITHUB_STEP_SUMMARY", &step_summary)],
    );
    assert_eq!(out.status.code(), Some(1), "a regression fails the gate");
    let md = stdout(&out);
    assert!(md.starts_with("## sitegen check: 1 regression\n"), "{md}");
    assert!(md.contains("| **regression** |"), "{md}");
    assert!(
        md.contains(
            "[series page](https://example.org/speed/series/glm-5.3-flash-h200-sxm-x4-fp8/)"
        ),
        "{md}"
    );
    assert!(
        md.contains("[run page](https://example.org/speed/runs/glm-6/index.html)"),
        "{md}"
    );
    // Each cell that moved, with its ratio and interval: the 8K ones at 0.80×.
    let moved: Vec<&str> = md.lines().filter(|l| l.starts_with("| 8K |")).collect();
    assert!(
        !moved.is_empty()
            && moved
                .iter()
                .all(|l| l.contains("| 0.80× |") && l.ends_with("| slower |")),
        "{md}"
    );
    // Appended to the summary file (kept), and to $GITHUB_STEP_SUMMARY.
    let kept = std::fs::read_to_string(&summary).unwrap();
    assert!(
        kept.starts_with("earlier step's summary\n## sitegen check: 1 regression"),
        "{kept}"
    );
    assert_eq!(std::fs::read_to_string(&step_summary).unwrap(), md);
    // The same for machines.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["verdict"], "regression");
    let e = &v["entries"][0];
    assert_eq!(e["run"], "glm-6");
    assert_eq!(
        e["baseline"],
        serde_json::json!(["glm-1", "glm-2", "glm-3", "glm-4", "glm-5"])
    );
    assert!(
        e["moved"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["context_tokens"] == 8192 && c["call"] == "slower")
    );
    assert_eq!(v["rule"]["window"], 5);
    // A judged run has no plain ratio: the field is left out.
    assert!(e.get("plain_ratio").is_none(), "{e}");
    // --fail-on never reports and passes; --fail-on change fails on an improvement too.
    assert_eq!(
        check(&data, &["--fail-on", "never"], &[]).status.code(),
        Some(0)
    );
}

#[test]
fn an_improvement_fails_only_with_fail_on_change() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    series(&data, 6, 1.25);
    let out = check(&data, &[], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("## sitegen check: 1 improvement\n"));
    assert_eq!(
        check(&data, &["--fail-on", "change"], &[]).status.code(),
        Some(1)
    );
}

#[test]
fn a_noted_change_starts_a_new_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // The last two nights 20% slower at 8K: on purpose (a new engine flag).
    series(&data, 5, 0.8);
    // Without a note the newest is slower than the runs before: a regression.
    let unnoted = check(&data, &[], &[]);
    assert_eq!(unnoted.status.code(), Some(1), "{}", stdout(&unnoted));
    std::fs::write(
        data.join("changes.json"),
        r#"{"changes": [{"date": "2026-10-06", "text": "--enable-chunked-prefill off"}]}"#,
    )
    .unwrap();
    // Now only against the runs since the change (one): too few to judge.
    let json = tmp.path().join("check.json");
    let out = check(&data, &["--json", json.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0));
    let md = stdout(&out);
    // Its plain ratio to the one run since the change, both 20% slower: 1.00×.
    assert!(
        md.contains("| insufficient data | 1.00× the run before | — |"),
        "{md}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let plain = v["entries"][0]["plain_ratio"].as_f64().unwrap();
    assert!((plain - 1.0).abs() < 1e-9, "{v}");
    // The page shows the change and starts the baseline there.
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let page =
        std::fs::read_to_string(site.join("series/glm-5.3-flash-h200-sxm-x4-fp8/index.html"))
            .unwrap();
    assert!(page.contains("Noted change: 2026-10-06 (run 6): --enable-chunked-prefill off (a new baseline from here)"), "{page}");
    // A change naming no run there is an error naming the file and field.
    std::fs::write(
        data.join("changes.json"),
        r#"{"changes": [{"run": "no-such-run", "text": "x"}]}"#,
    )
    .unwrap();
    let out = check(&data, &[], &[]);
    assert_eq!(out.status.code(), Some(2), "unreadable data");
    let err = common::stderr(&out);
    assert!(
        err.contains("changes.json: field `changes[0].run`: no run \"no-such-run\""),
        "{err}"
    );
    // So is a series that is not there (a typo would start no baseline).
    std::fs::write(
        data.join("changes.json"),
        r#"{"changes": [{"date": "2026-10-06", "text": "x", "series": "glm-typo"}]}"#,
    )
    .unwrap();
    let out = check(&data, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = common::stderr(&out);
    assert!(
        err.contains("changes.json: changes[0].series: no series \"glm-typo\" (a setup measured more than once; series: glm-5.3-flash-h200-sxm-x4-fp8)"),
        "{err}"
    );
}

#[test]
fn a_run_is_judged_against_the_runs_named_as_its_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    series(&data, 6, 0.8);
    let out = check(
        &data,
        &["--run", "glm-6", "--baseline", "glm-0,glm-1,glm-2"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let md = stdout(&out);
    assert!(
        md.contains("against the median of the 3 runs before it"),
        "{md}"
    );
    let out = check(&data, &["--run", "glm-6", "--baseline", "nope"], &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(common::stderr(&out).contains("no run \"nope\" in the data folder"));
}

#[test]
fn unreadable_data_exits_with_2_and_build_check_fails_after_writing_the_site() {
    let tmp = tempfile::tempdir().unwrap();
    let out = check(&tmp.path().join("missing"), &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("no such folder"));
    let data = tmp.path().join("data");
    series(&data, 6, 0.8);
    let json = tmp.path().join("check.json");
    let built = common::sitegen(
        &["build", "--check", "--json", json.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(built.status.code(), Some(1), "the gate fails");
    assert!(
        tmp.path().join("site/index.html").is_file(),
        "the site is written first"
    );
    assert!(common::stderr(&built).contains("## sitegen check: 1 regression"));
    assert!(
        std::fs::read_to_string(&json)
            .unwrap()
            .contains("\"verdict\": \"regression\"")
    );
    // --fail-on never: the report, exit 0; report flags without --check are refused.
    let built = common::sitegen(&["build", "--check", "--fail-on", "never"], tmp.path());
    assert_eq!(built.status.code(), Some(0), "{}", common::stderr(&built));
    let refused = common::sitegen(&["build", "--json", "x.json"], tmp.path());
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        common::stderr(&refused).contains("--json applies only with --check"),
        "{}",
        common::stderr(&refused)
    );
    // build --check on data it cannot read: 2, as check.
    let broken = common::sitegen(&["build", "--check", "--data", "missing"], tmp.path());
    assert_eq!(broken.status.code(), Some(2));
}

/// The newest run serves fewer users within the median tier at 8K: its 8K
/// × 16 cell waits 3 s for a first token where every run before waited
/// 514 ms. The throughput rule sees nothing (no total moved); the capacity
/// rule calls it, and the gate fails.
#[test]
fn a_capacity_drop_at_a_tier_is_a_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    series(&data, 99, 1.0);
    let cell = data.join("glm-6/cells/decode-00008192-x016.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cell).unwrap()).unwrap();
    assert_eq!(v["ttft_median_ms"], 514.0);
    v["ttft_median_ms"] = 3000.0.into();
    std::fs::write(&cell, v.to_string()).unwrap();
    let json = tmp.path().join("check.json");
    let out = check(&data, &["--json", json.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    let md = stdout(&out);
    assert!(md.starts_with("## sitegen check: 1 regression\n"), "{md}");
    assert!(
        md.contains("At 20 tok/s per user, 8K: 4 requests at once, 16 before (median TTFT 5.84× the baseline's at 16"),
        "{md}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let drops = v["entries"][0]["capacity_drops"].as_array().unwrap();
    assert_eq!(drops.len(), 1, "{drops:?}");
    assert_eq!(drops[0]["context_tokens"], 8192);
    assert_eq!(drops[0]["regression"], true);
    // The cells' own rule saw no throughput move.
    assert_eq!(v["entries"][0]["moved"], serde_json::json!([]));
}
