//! Users within a latency budget on the pages, against cells built so that
//! a summary would lie: a row that passes, fails, then passes; a limit
//! that binds at one context and another at the next; percentiles from too
//! few requests. Each sentence is checked against the cells' own numbers.

use crate::common;

use std::path::Path;

use crate::common::html::{sel, text};
use scraper::Html;

/// One tier: p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 50 ms.
const SLO: &str = r#"{"tiers": [{"name": "Tight", "percentile": 99, "ttft_ms": 2000, "tpot_ms": 50, "source": "a test's own"}]}"#;

/// (context, requests at once, p99 TTFT, p99 TPOT, requests behind them).
const CELLS: [(u64, u32, f64, f64, u64); 10] = [
    // 8K: 2 fails on TPOT between 1 and 4, which pass; 16 breaks on TPOT.
    (8192, 1, 100.0, 20.0, 1000),
    (8192, 2, 100.0, 60.0, 1000),
    (8192, 4, 100.0, 30.0, 1000),
    (8192, 8, 100.0, 45.0, 1000),
    // The break rests on 300 requests: its p99 is an estimate, written so.
    (8192, 16, 100.0, 80.0, 300),
    // 64K: TTFT binds at 4; the single stream's figures rest on 40 requests.
    (65536, 1, 500.0, 20.0, 40),
    (65536, 2, 900.0, 25.0, 1000),
    (65536, 4, 2500.0, 30.0, 1000),
    (65536, 8, 5100.0, 35.0, 1000),
    (65536, 16, 9000.0, 40.0, 1000),
];

fn write_run(data: &Path) {
    let from = common::data_dir().join("glm-5.3-flash-h200x4-vllm");
    let to = data.join("tiers");
    std::fs::create_dir_all(to.join("cells")).unwrap();
    std::fs::copy(from.join("run.json"), to.join("run.json")).unwrap();
    for (ctx, n, ttft, tpot, requests) in CELLS {
        let cell = serde_json::json!({
            "phase": "decode", "context_tokens": ctx, "concurrency": n, "status": "valid",
            "total_tok_per_s": 100.0 * f64::from(n), "per_request_tok_per_s": 1000.0 / tpot,
            "ttft_median_ms": ttft / 2.0, "tbt_median_ms": tpot / 2.0, "measured_s": 30.0,
            "latency": {
                "ttft_ms": {"p50": ttft / 2.0, "p99": ttft, "requests": requests},
                "tpot_ms": {"p50": tpot / 2.0, "p99": tpot, "requests": requests}
            }
        });
        std::fs::write(
            to.join("cells")
                .join(format!("decode-{ctx:08}-x{n:03}.json")),
            cell.to_string(),
        )
        .unwrap();
    }
    std::fs::write(data.join("slo.json"), SLO).unwrap();
}

#[test]
fn the_capacity_table_says_what_the_cells_say() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    write_run(&data);
    let out = common::sitegen(
        &["build", "--data", data.to_str().unwrap(), "--out", "site"],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let site = tmp.path().join("site");
    let page =
        Html::parse_document(&std::fs::read_to_string(site.join("runs/tiers/index.html")).unwrap());
    let rows: Vec<Vec<String>> = page
        .select(&sel("#capacity tbody tr"))
        .map(|tr| tr.select(&sel("th, td")).map(text).collect())
        .collect();
    // The truth, from CELLS: the last level meeting both limits, what the
    // next level breaks and by how much.
    assert_eq!(
        rows,
        [
            [
                "8K",
                "8 requests, 800.0 tok/s then at 16: p99 TPOT ≈ 80 ms > 50 ms (1.60×, gradual)"
            ],
            [
                "64K",
                "2 requests, 200.0 tok/s then at 4: p99 TTFT 2,500 ms > 2,000 ms (1.25×, gradual)"
            ],
        ]
    );
    let notes: Vec<String> = page.select(&sel("#capacity li")).map(text).collect();
    assert_eq!(
        notes,
        [
            "Tight: 8K: not monotone: 2 did not meet it though 8 did.",
            "Tight: 8K: an estimate, from too few requests: p99 TTFT at 16 from 300 requests and p99 TPOT at 16 from 300 requests; a p99 needs 662 requests (MLPerf's early-stopping count).",
            "Tight: 64K: an estimate, from too few requests: p99 TTFT at 1 from 40 requests and p99 TPOT at 1 from 40 requests; a p99 needs 662 requests (MLPerf's early-stopping count).",
        ]
    );
    // The matrix marks exactly the cells meeting the tier.
    let levels = [1, 2, 4, 8, 16];
    let marked: Vec<(String, u32)> = page
        .select(&sel("#decode table.matrix tbody tr"))
        .flat_map(|tr| {
            let ctx = text(tr.select(&sel("th")).next().unwrap());
            tr.select(&sel("td"))
                .zip(levels)
                .filter(|(td, _)| td.value().classes().any(|c| c == "slo"))
                .map(move |(_, n)| (ctx.clone(), n))
                .collect::<Vec<_>>()
        })
        .collect();
    let truth: Vec<(String, u32)> = CELLS
        .iter()
        .filter(|(_, _, ttft, tpot, _)| *ttft <= 2000.0 && *tpot <= 50.0)
        .map(|(ctx, n, ..)| (format!("{}K", ctx / 1024), *n))
        .collect();
    assert_eq!(marked, truth);
    // The key figure: the first tier at the smallest context.
    let key: Vec<(String, String)> = page
        .select(&sel(".key-figures div"))
        .map(|d| {
            (
                text(d.select(&sel("dt")).next().unwrap()),
                text(d.select(&sel("dd")).next().unwrap()),
            )
        })
        .collect();
    assert!(
        key.contains(&(
            "Within Tight".to_string(),
            "8 requests at once at 8K, 800.0 tok/s".to_string()
        )),
        "{key:?}"
    );
    // The download says the same, raw.
    let csv = std::fs::read_to_string(site.join("runs/tiers/capacity.csv")).unwrap();
    assert_eq!(
        csv,
        "tier,percentile,context_tokens,max_concurrency,total_tok_per_s,binding_limit,monotone,breaks_at,overshoot,few_requests\n\
         Tight,99,8192,8,800,tpot,false,16,1.6,true\n\
         Tight,99,65536,2,200,ttft,true,4,1.25,true\n"
    );
}
