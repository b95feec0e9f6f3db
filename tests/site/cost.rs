//! data/prices.json: the cost per million output tokens of valid decode
//! cells, on run pages, in the CSV and on comparison pages, and with a kWh
//! price the electricity of cells with their energy recorded; nothing about
//! cost without the file, nothing about electricity without energy.

use crate::common;

use common::files_under;

const GLM: &str = "glm-5.3-flash-h200x4-vllm";

fn site_with_prices(prices: Option<&str>) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    if let Some(p) = prices {
        std::fs::write(data.join("prices.json"), p).unwrap();
    }
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    (tmp, site)
}

#[test]
fn a_cell_s_cost_is_its_gpu_hours_over_its_tokens() {
    let (_tmp, site) = site_with_prices(Some(
        r#"{"prices": [{"gpu": "H200 SXM", "usd_per_gpu_hour": 3.5, "source": "Example Cloud list price", "date": "2026-11-01"}]}"#,
    ));
    // By hand: GLM at 8K x 16 makes 1,412.4 tok/s on 4 GPUs at $3.50 each:
    // $14.00 per hour / (1,412.4 x 3,600 = 5,084,640 tokens per hour)
    // = $2.7534 per million output tokens.
    let by_hand: f64 = 4.0 * 3.5 / (1412.4 * 3600.0) * 1e6;
    assert!((by_hand - 2.7534).abs() < 1e-4);
    let page = std::fs::read_to_string(site.join(format!("runs/{GLM}/index.html"))).unwrap();
    assert!(page.contains("<th scope=\"col\">Cost / M output tokens</th>"));
    assert!(
        page.contains(&format!("<td data-sort=\"{by_hand}\">$2.75</td>")),
        "the 8K x 16 cell"
    );
    assert!(page.contains("Cost per million output tokens = 4 × $3.50 per GPU-hour (H200 SXM GPU price from Example Cloud list price, 2026-11-01)"));
    let csv = std::fs::read_to_string(site.join(format!("runs/{GLM}/measurements.csv"))).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",usd_per_million_output_tokens")
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("decode,8192,16,valid,") && l.ends_with(&format!(",{by_hand}"))),
        "{csv}"
    );
    // Queued, over-capacity and prefill rows carry no cost.
    assert!(
        csv.lines()
            .filter(|l| l.starts_with("prefill,"))
            .all(|l| l.ends_with(','))
    );
    // The CSV with its cost column still imports (the column is derived).
    let text = sitegen::ingest::csv::parse_csv(std::path::Path::new("m.csv"), &csv).unwrap();
    assert!(!text.cells.is_empty());
    let compare = files_under(&site)
        .into_iter()
        .find(|(rel, _)| rel.starts_with("compare/") && rel.ends_with("index.html"))
        .unwrap();
    let compare = String::from_utf8(compare.1).unwrap();
    assert!(compare.contains("<h2 id=\"cost-h\">Cost per million output tokens</h2>"));
    assert!(compare.contains(&format!("<td data-sort=\"{by_hand}\">$2.75</td>")));
}

#[test]
fn without_a_prices_file_no_cost_appears_anywhere() {
    let (_tmp, site) = site_with_prices(None);
    for (rel, bytes) in files_under(&site) {
        let text = String::from_utf8_lossy(&bytes);
        for word in ["Cost", "usd_per_million", "per GPU-hour"] {
            assert!(!text.contains(word), "{rel} mentions {word:?}");
        }
    }
}

const LAGUNA: &str = "tests/fixtures/real/llm-decode-bench/sjug-rtx6kpro-laguna-s21-fp8-k5.json";
const KWH: &str = r#""electricity": {"usd_per_kwh": 0.15, "source": "Example utility tariff", "date": "2026-11-01"}"#;

#[test]
fn a_cell_s_electricity_is_its_own_energy_of_a_million_tokens_at_the_kwh_price() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // The same real file twice, so that a comparison has both runs' energy.
    for id in ["laguna", "laguna-again"] {
        let out = common::sitegen(
            &[
                "ingest",
                &common::repo().join(LAGUNA).display().to_string(),
                "--id",
                id,
                "--data",
                &data.display().to_string(),
            ],
            tmp.path(),
        );
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    std::fs::write(data.join("prices.json"), format!("{{{KWH}}}")).unwrap();
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "Laguna twice", "runs": ["laguna", "laguna-again"]}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let page = std::fs::read_to_string(site.join("runs/laguna/index.html")).unwrap();
    let csv = std::fs::read_to_string(site.join("runs/laguna/measurements.csv")).unwrap();
    assert!(page.contains("<th scope=\"col\">Electricity / M output tokens</th>"));
    assert!(
        !page.contains("Cost / M output tokens"),
        "no GPU price, no cost"
    );
    assert!(page.contains(
        "× $0.15 per kWh (Example utility tariff, 2026-11-01): the GPUs&#39; own energy only"
    ));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header.last(),
        Some(&"electricity_usd_per_million_output_tokens")
    );
    // By hand from the file's own numbers: mean power / aggregate tok/s is
    // J per token; a million of them in kWh, at $0.15.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::repo().join(LAGUNA)).unwrap())
            .unwrap();
    let mut checked = 0;
    for r in v["results"].as_array().unwrap() {
        let (Some(power), Some(tps)) = (
            r["hardware_summary"]["power_total_avg_w"].as_f64(),
            r["aggregate_tps"].as_f64().filter(|t| *t > 0.0),
        ) else {
            continue;
        };
        let usd = power / tps * 1e6 / 3.6e6 * 0.15;
        let (ctx, n) = (
            r["context_tokens"].as_u64().unwrap(),
            r["concurrency"].as_u64().unwrap(),
        );
        let row = csv
            .lines()
            .find(|l| l.starts_with(&format!("decode,{ctx},{n},valid,")))
            .unwrap_or_else(|| panic!("no valid row {ctx} × {n}"));
        let shown: f64 = row.rsplit(',').next().unwrap().parse().unwrap();
        assert!(
            (shown - usd).abs() < 1e-12,
            "{ctx} × {n}: {shown} against {usd}"
        );
        assert!(
            page.contains(&format!("<td data-sort=\"{shown}\">")),
            "{ctx} × {n}"
        );
        eprintln!(
            "{ctx} × {n}: {power} W / {tps:.1} tok/s → ${usd:.4} of electricity per M output tokens"
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked} cells");
    // The CSV with its derived column still imports.
    assert!(
        !sitegen::ingest::csv::parse_csv(std::path::Path::new("m.csv"), &csv)
            .unwrap()
            .cells
            .is_empty()
    );
    // The comparison's cost table: each run's electricity, and how.
    let compare =
        std::fs::read_to_string(site.join("compare/laguna--laguna-again/index.html")).unwrap();
    // The same model twice: each column named apart, by run id (all else alike).
    for id in ["laguna", "laguna-again"] {
        assert!(
            compare.contains(&format!(
                "<th scope=\"col\">laguna-s-2.1 ({id}), electricity</th>"
            )),
            "{id}"
        );
    }
    assert!(compare.contains("the electricity of its GPUs&#39; energy at the price of a kWh"));
}

#[test]
fn a_kwh_price_adds_nothing_to_runs_without_energy() {
    let (_tmp, site) = site_with_prices(Some(&format!(
        r#"{{"prices": [{{"gpu": "H200 SXM", "usd_per_gpu_hour": 3.5, "source": "s", "date": "d"}}], {KWH}}}"#
    )));
    let (_plain_tmp, plain) = site_with_prices(Some(
        r#"{"prices": [{"gpu": "H200 SXM", "usd_per_gpu_hour": 3.5, "source": "s", "date": "d"}]}"#,
    ));
    assert_eq!(
        files_under(&site),
        files_under(&plain),
        "the bundled runs recorded no energy: a kWh price changes no file"
    );
}

/// The build of the bundled data with `prices` as data/prices.json: its error.
fn build_error_with_prices(prices: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    std::fs::write(data.join("prices.json"), prices).unwrap();
    sitegen::app::pipeline::build_site(&data, &tmp.path().join("site"))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_bad_price_is_an_error_naming_the_field() {
    for (prices, said) in [
        (
            r#"{"prices": [{"gpu": "H200 SXM", "usd_per_gpu_hour": -1, "source": "s", "date": "d"}]}"#,
            "prices.json: field `prices[0].usd_per_gpu_hour`: expected a price above 0, found -1",
        ),
        (
            r#"{"electricity": {"usd_per_kwh": 0, "source": "s", "date": "d"}}"#,
            "prices.json: field `electricity.usd_per_kwh`: expected a price above 0, found 0",
        ),
    ] {
        let err = build_error_with_prices(prices);
        assert!(err.ends_with(said), "{err}");
    }
}
