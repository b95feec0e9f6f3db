//! data/prices.json: the cost per million output tokens of valid decode
//! cells, on run pages, in the CSV and on comparison pages; nothing about
//! cost without the file.

mod common;

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
    sitegen::pipeline::build_site(&data, &site).unwrap();
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

#[test]
fn a_bad_price_is_an_error_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    std::fs::write(
        data.join("prices.json"),
        r#"{"prices": [{"gpu": "H200 SXM", "usd_per_gpu_hour": -1, "source": "s", "date": "d"}]}"#,
    )
    .unwrap();
    let err = sitegen::pipeline::build_site(&data, &tmp.path().join("site"))
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "prices.json: field `prices[0].usd_per_gpu_hour`: expected a price above 0, found -1"
        ),
        "{err}"
    );
}
