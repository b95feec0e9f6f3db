//! Energy and the why of a cell on the pages: a real llm_decode_bench file
//! with its hardware monitor on imports with its power and energy per
//! output token per cell, and the run page and CSV show them; a run
//! without telemetry shows none of it.

use crate::common;

use common::{repo, sitegen, stderr};
use serde_json::Value;

const FILE: &str = "tests/fixtures/real/llm-decode-bench/sjug-rtx6kpro-laguna-s21-fp8-k5.json";

#[test]
fn a_real_file_with_a_hardware_monitor_shows_its_energy_per_token() {
    let tmp = tempfile::tempdir().unwrap();
    let file = repo().join(FILE);
    let out = sitegen(
        &[
            "ingest",
            &file.display().to_string(),
            "--id",
            "laguna",
            "--data",
            "d",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sitegen(&["build", "--data", "d", "--out", "site"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(tmp.path().join("site/runs/laguna/index.html")).unwrap();
    let csv =
        std::fs::read_to_string(tmp.path().join("site/runs/laguna/measurements.csv")).unwrap();
    assert!(
        page.contains("Energy per output token"),
        "the energy matrix"
    );
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut shown = 0;
    for r in v["results"].as_array().unwrap() {
        let tps = r["aggregate_tps"].as_f64().unwrap();
        let Some(power) = r["hardware_summary"]["power_total_avg_w"].as_f64() else {
            continue;
        };
        if tps <= 0.0 {
            continue;
        }
        let joules = power / tps;
        let (ctx, n) = (
            r["context_tokens"].as_u64().unwrap(),
            r["concurrency"].as_u64().unwrap(),
        );
        let row = rows
            .iter()
            .find(|row| row[0] == "decode" && row[1] == ctx.to_string() && row[2] == n.to_string())
            .unwrap_or_else(|| panic!("a CSV row for {ctx} × {n}"));
        let csv_joules: f64 = row[col("joules_per_output_token")].parse().unwrap();
        let csv_power: f64 = row[col("gpu_power_w")].parse().unwrap();
        assert!(
            (csv_joules - joules).abs() < 1e-9,
            "{ctx} × {n}: {csv_joules} vs {joules}"
        );
        assert!((csv_power - power).abs() < 1e-9, "{ctx} × {n}: power");
        let text = sitegen::model::format::joules(joules);
        assert!(
            page.contains(&format!("<span class=\"tps\">{text}</span>")),
            "{text} on the page"
        );
        eprintln!(
            "{ctx} × {n}: {power} W / {tps:.1} tok/s = {joules:.3} J per output token ({text})"
        );
        shown += 1;
    }
    assert!(shown >= 10, "{shown} cells with energy");

    // The index's Best tok/J: the file's most tokens per joule, where.
    let index = std::fs::read_to_string(tmp.path().join("site/index.html")).unwrap();
    let best = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let power = r["hardware_summary"]["power_total_avg_w"].as_f64()?;
            let tps = r["aggregate_tps"].as_f64().filter(|t| *t > 0.0)?;
            Some((
                tps / power,
                r["context_tokens"].as_u64().unwrap(),
                r["concurrency"].as_u64().unwrap() as u32,
            ))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0))
        .unwrap();
    let text = format!(
        "{} ({})",
        sitegen::model::format::tok_per_joule(best.0),
        sitegen::model::format::cell_label(best.1, best.2)
    );
    assert!(index.contains("<th scope=\"col\">Best tok/J</th>"));
    assert!(
        index.contains(&format!(">{text}</td>")),
        "{text} on the index"
    );
    eprintln!("best: {:.4} tok/J, shown {text}", best.0);
}

#[test]
fn a_run_without_telemetry_shows_no_energy() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sitegen(
        &[
            "build",
            "--data",
            &repo().join("data").display().to_string(),
            "--out",
            "site",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(
        tmp.path()
            .join("site/runs/glm-5.3-flash-h200x4-vllm/index.html"),
    )
    .unwrap();
    assert!(!page.contains("Energy per output token"));
    assert!(!page.contains("GPU power"));
    let index = std::fs::read_to_string(tmp.path().join("site/index.html")).unwrap();
    assert!(!index.contains("tok/J"), "no energy, no tok/J column");
}
