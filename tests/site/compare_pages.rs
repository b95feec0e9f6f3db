//! Comparison pages: the GLM vs Step page read with an HTML parser against
//! the data, downloads, bad comparison sets, and charts with 6 runs or one context.

use crate::common;

use std::path::Path;

use common::{build_bundled_site, data_dir, fixture_pages};
use scraper::{ElementRef, Html, Selector};
use sitegen::model::Status;

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(el: ElementRef) -> String {
    el.text().collect::<String>().trim().to_string()
}

const GLM: &str = "glm-5.3-flash-h200x4-vllm";
const STEP: &str = "step-3.5-flash-h200x4-vllm-0.29.0";

fn page(site: &Path, rel: &str) -> Html {
    Html::parse_document(&std::fs::read_to_string(site.join(rel)).unwrap())
}

#[test]
fn every_ratio_shown_is_the_ratio_of_the_two_runs_and_every_gap_says_why() {
    let (_tmp, site) = build_bundled_site();
    let html = page(&site, &format!("compare/{GLM}--{STEP}/index.html"));
    let glm = sitegen::store::load_run(&data_dir().join(GLM)).unwrap();
    let step = sitegen::store::load_run(&data_dir().join(STEP)).unwrap();
    let matrix = html
        .select(&sel("#ratios table.ratio"))
        .next()
        .expect("a ratio matrix");
    let levels: Vec<u32> = matrix
        .select(&sel("thead th"))
        .skip(1)
        .map(|th| text(th).parse().unwrap())
        .collect();
    // 64 and 128 have no ratio anywhere: left out, and said in a line.
    assert_eq!(levels, [1, 2, 4, 8, 16, 32]);
    let (mut ratios, mut gaps) = (0, 0);
    for tr in matrix.select(&sel("tbody tr")) {
        // "256K / 251K": GLM's context, then Step's within 2% of it.
        let label = text(tr.select(&sel("th")).next().unwrap());
        let (ca, cb) = match label.split_once(" / ") {
            Some((a, b)) => (a.to_string(), b.to_string()),
            None => (label.clone(), label.clone()),
        };
        let ctx_a = sitegen::model::format::parse_context_label(&ca).unwrap();
        let ctx_b = sitegen::model::format::parse_context_label(&cb).unwrap();
        let mut row_has_ratio = false;
        for (td, &n) in tr.select(&sel("td")).zip(&levels) {
            let shown = text(td.select(&sel(".ratio-value")).next().unwrap());
            let (a, b) = (glm.decode_cell(ctx_a, n), step.decode_cell(ctx_b, n));
            let valid = |c: Option<&sitegen::model::DecodeCell>| {
                c.filter(|c| c.status == Status::Valid)
                    .and_then(|c| c.total_tok_per_s)
            };
            match (valid(a), valid(b)) {
                (Some(x), Some(y)) => {
                    assert_eq!(shown, sitegen::model::format::ratio(y / x), "{label} x {n}");
                    ratios += 1;
                    row_has_ratio = true;
                }
                _ => {
                    assert_eq!(shown, "—", "{label} x {n}");
                    let why = td.select(&sel(".why")).next().map(text).unwrap_or_default();
                    let expected_words = ["over capacity", "queued", "looped", "not measured"];
                    assert!(
                        expected_words.iter().any(|w| why.contains(w)),
                        "{label} x {n}: {why:?}"
                    );
                    gaps += 1;
                }
            }
        }
        assert!(row_has_ratio, "row {label} has no ratio");
    }
    // Rows 8K to 128K and 256K (GLM) with 251K (Step), at 6 levels. Both
    // valid: 6 each at 8K, 16K and 32K, 4 at 64K (Step looped at 4; GLM over
    // capacity from 64), 4 at 128K and 3 at 256K / 251K.
    assert_eq!(ratios + gaps, 6 * 6);
    assert_eq!(ratios, 6 + 6 + 6 + 4 + 4 + 3);
    let notes: Vec<String> = html.select(&sel("#ratios p.note")).map(text).collect();
    for said in [
        "Rows 256K / 251K pair a context of GLM-5.3-Flash with one of Step-3.5-Flash within 2% of it",
        // Each run's state, cell by cell where it differs (GLM runs 512K
        // validly up to 4 requests; Step runs 8K and 16K at 64 validly).
        "No ratio at 512K: GLM-5.3-Flash valid at 1–4 requests, over capacity at 8–128 requests; Step-3.5-Flash not measured.",
        "No ratio at 1019K: GLM-5.3-Flash valid at 1 request, queued at 2 requests, over capacity at 4–128 requests; Step-3.5-Flash not measured.",
        "No ratio at 64 requests at once: GLM-5.3-Flash queued at 8K–32K, over capacity at 64K–256K; Step-3.5-Flash valid at 8K, 16K, over capacity at 32K–251K.",
        "No ratio at 128 requests at once: GLM-5.3-Flash queued at 8K, over capacity at 16K–256K; Step-3.5-Flash valid at 8K, over capacity at 16K–251K.",
    ] {
        assert!(
            notes.iter().any(|n| n.starts_with(said)),
            "{said:?} not in {notes:?}"
        );
    }
    // The answer first: GLM wins every shared cell, Step's peak is twice GLM's.
    let answer: Vec<String> = html.select(&sel("#findings p.answer")).map(text).collect();
    assert_eq!(
        answer,
        [
            "GLM-5.3-Flash is faster in every cell both ran validly (29 cells; Step-3.5-Flash makes 0.81× its total tok/s, median).",
            "Step-3.5-Flash's peak valid throughput is 2.06× GLM-5.3-Flash's: 4,673.1 total tok/s at 8K × 128 against 2,270.4 at 8K × 32.",
        ]
    );
    // The key findings say the same: 29 cells, their median first.
    let findings = text(html.select(&sel("#findings")).next().unwrap());
    assert!(
        findings.contains("median of 29 cells both ran validly (0.70× to 0.92×)"),
        "{findings}"
    );
    // The GLM 8K x 1 cell: 156.7 / 175.8.
    let first = text(
        matrix
            .select(&sel("tbody tr td .ratio-value"))
            .next()
            .unwrap(),
    );
    assert_eq!(first, "0.89×");
}

#[test]
fn the_comparison_highlights_what_differs_and_has_every_chart_with_a_table() {
    let (_tmp, site) = build_bundled_site();
    let html = page(&site, &format!("compare/{GLM}--{STEP}/index.html"));
    let differs: Vec<String> = html
        .select(&sel("table.setup tr.differs th"))
        .map(|th| text(th).trim_end_matches("differs").trim().to_string())
        .collect();
    assert_eq!(
        differs,
        [
            "Quantization",
            "Served model",
            "Largest context measured",
            "Speculative decoding"
        ]
    );
    // One run states a version and a commit, the other does not: not a
    // difference, and folded with the rows that are alike.
    let not_stated: Vec<String> = html
        .select(&sel("details.setup-rest th .not-stated"))
        .map(|m| text(ElementRef::wrap(m.parent().unwrap()).unwrap()))
        .collect();
    for field in ["Version", "Commit"] {
        assert!(
            not_stated.iter().any(|d| d.starts_with(field)),
            "{field} is not 'not stated by all' in {not_stated:?}"
        );
    }
    assert!(
        !differs.iter().any(|d| d == "GPU"),
        "the same GPU is not a difference"
    );
    let spec: Vec<String> = html
        .select(&sel("table.setup tr"))
        .filter(|tr| text(*tr).contains("Speculative decoding"))
        .flat_map(|tr| tr.select(&sel("td")).skip(1).map(text).collect::<Vec<_>>())
        .collect();
    assert_eq!(spec, ["dflash", "none"]);
    for figure in html.select(&sel("figure.chart-box")) {
        assert!(
            figure.select(&sel("svg title")).next().is_some(),
            "a chart without a title"
        );
        assert!(
            figure.select(&sel("figcaption")).next().is_some(),
            "a chart without a caption"
        );
        let table = figure
            .next_siblings()
            .filter_map(ElementRef::wrap)
            .find(|e| e.value().name() == "details");
        assert!(
            table.is_some_and(|d| d.select(&sel("table tbody tr")).next().is_some()),
            "a chart without its numbers"
        );
    }
    let decode_charts: Vec<String> = html.select(&sel("#decode h3")).map(text).collect();
    assert_eq!(
        decode_charts,
        [
            "8K context",
            "16K context",
            "32K context",
            "64K context",
            "128K context",
            // GLM's 256K and Step's 251K: the pair the ratio matrix has too.
            "256K / 251K context"
        ]
    );
    let legend: Vec<String> = html.select(&sel(".legend-list a")).map(text).collect();
    assert_eq!(legend, ["GLM-5.3-Flash", "Step-3.5-Flash"]);
}

/// Step on 2 GPUs against GLM on 4: the page holds a per-GPU view of the
/// decode charts, ratios and interactivity, hidden until its toggle shows it,
/// with each run's figure divided by its own GPU count.
#[test]
fn runs_on_different_gpu_counts_get_a_per_gpu_view_with_the_ratios_rescaled() {
    let (_tmp, site) = build_bundled_site();
    let same = page(&site, &format!("compare/{GLM}--{STEP}/index.html"));
    assert!(same.select(&sel("[data-per-gpu-toggle]")).next().is_none());
    assert!(
        same.select(&sel("[data-gpu-view=per-gpu]"))
            .next()
            .is_none()
    );
    let note: Vec<String> = same.select(&sel("#ratios p.note")).map(text).collect();
    assert_eq!(
        note[0],
        "Every run here uses 4 GPUs, so per GPU each figure is its total ÷ 4 and every ratio stays as it is."
    );

    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    let run_json = data.join(STEP).join("run.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
    meta["hardware"]["gpu_count"] = 2.into();
    std::fs::write(&run_json, meta.to_string()).unwrap();
    let out = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &out).unwrap();
    let html = page(&out, &format!("compare/{GLM}--{STEP}/index.html"));

    assert_eq!(html.select(&sel("button[data-per-gpu-toggle]")).count(), 1);
    let views: Vec<(String, bool)> = html
        .select(&sel("[data-gpu-view]"))
        .map(|v| {
            let e = v.value();
            (
                e.attr("data-gpu-view").unwrap().to_string(),
                e.attr("hidden").is_some(),
            )
        })
        .collect();
    // Decode, ratios and interactivity: the totals shown, per GPU hidden.
    let expected: Vec<(String, bool)> = (0..3)
        .flat_map(|_| [("total".to_string(), false), ("per-gpu".to_string(), true)])
        .collect();
    assert_eq!(views, expected);

    // 8K x 2: GLM 345.6 tok/s on 4 GPUs, Step 262.2 on 2.
    let row: Vec<String> = html
        .select(&sel("#decode-8192-per-gpu details tbody tr"))
        .map(|tr| tr.select(&sel("td")).map(text).collect::<Vec<_>>())
        .find(|cells| cells[0] == "2")
        .unwrap();
    assert_eq!(row, ["2", "86.4", "131.1"]);
    let title = text(
        html.select(&sel("#decode-8192-per-gpu svg title"))
            .next()
            .unwrap(),
    );
    assert_eq!(
        title,
        "Sustained decode at 8K: tok/s per GPU by simultaneous requests"
    );
    assert!(
        html.select(&sel("#interactivity-per-gpu-caption"))
            .next()
            .is_some()
    );

    // Every per-GPU ratio is the total ratio times 4 / 2; 8K x 1 is
    // (156.7 / 2) / (175.8 / 4) = 1.78 where the total ratio is 0.89.
    let cells = |id: &str| -> Vec<String> {
        html.select(&sel(&format!("[id=\"{id}\"] td .ratio-value")))
            .map(text)
            .collect()
    };
    let total = cells(&format!("ratio-{STEP}"));
    let per_gpu = cells(&format!("ratio-{STEP}-per-gpu"));
    assert_eq!(total.len(), per_gpu.len());
    assert_eq!((total[0].as_str(), per_gpu[0].as_str()), ("0.89×", "1.78×"));
    assert_eq!((total[1].as_str(), per_gpu[1].as_str()), ("0.76×", "1.52×"));
    let glm = sitegen::store::load_run(&data.join(GLM)).unwrap();
    let step = sitegen::store::load_run(&data.join(STEP)).unwrap();
    let matrix = html
        .select(&sel(&format!("[id=\"ratio-{STEP}-per-gpu\"] table")))
        .next()
        .unwrap();
    let levels: Vec<u32> = matrix
        .select(&sel("thead th"))
        .skip(1)
        .map(|th| text(th).parse().unwrap())
        .collect();
    let mut compared = 0;
    for tr in matrix.select(&sel("tbody tr")) {
        let label = text(tr.select(&sel("th")).next().unwrap());
        let (ca, cb) = label.split_once(" / ").unwrap_or((&label, &label));
        let ctx_a = sitegen::model::format::parse_context_label(ca).unwrap();
        let ctx_b = sitegen::model::format::parse_context_label(cb).unwrap();
        for (td, &n) in tr.select(&sel("td")).zip(&levels) {
            let shown = text(td.select(&sel(".ratio-value")).next().unwrap());
            match sitegen::compare::ratio::ratio(
                sitegen::model::figure::Figure::Throughput,
                glm.decode_cell(ctx_a, n),
                step.decode_cell(ctx_b, n),
            ) {
                Ok(r) => {
                    assert_eq!(
                        shown,
                        sitegen::model::format::ratio(r * 4.0 / 2.0),
                        "{label} x {n}"
                    );
                    compared += 1;
                }
                Err(_) => assert_eq!(shown, "—", "{label} x {n}"),
            }
        }
    }
    // 26 cells of equal contexts, 3 of 256K / 251K.
    assert_eq!(compared, 29);
}

#[test]
fn downloads_carry_raw_numbers() {
    let (_tmp, site) = build_bundled_site();
    let csv = std::fs::read_to_string(site.join(format!("runs/{GLM}/measurements.csv"))).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let output_tokens = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "output_tokens")
        .unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 73);
    assert_eq!(&rows[0][0], "prefill");
    assert_eq!(&rows[0][5], "18900");
    let queued = rows
        .iter()
        .find(|r| &r[1] == "8192" && &r[2] == "64")
        .unwrap();
    assert_eq!(
        (&queued[3], &queued[5], &queued[output_tokens]),
        ("requests_queued", "2793.5", "83773")
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(site.join(format!("runs/{STEP}/data.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(json["cells"].as_array().unwrap().len(), 55);
    assert_eq!(json["model"], "Step-3.5-Flash");
    let cmp = std::fs::read_to_string(site.join(format!("compare/{GLM}--{STEP}/comparison.csv")))
        .unwrap();
    let mut reader = csv::Reader::from_reader(cmp.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert_eq!(&header[10], &format!("{STEP} / {GLM}"));
    assert_eq!(&header[13], &format!("{STEP} / {GLM} noise"));
    let first = reader.records().next().unwrap().unwrap();
    assert_eq!(
        (&first[0], &first[1], &first[3], &first[7]),
        ("8192", "1", "175.8", "156.7")
    );
    // The reference pages carry no interval: the noise is unknown, said so.
    assert_eq!((&first[4], &first[11], &first[13]), ("", "", "unknown"));
}

fn import(data: &Path, page: usize, id: &str) {
    sitegen::ingest::import_pages(&[fixture_pages()[page].clone()], Some(id), data, false).unwrap();
}

#[test]
fn a_comparison_naming_a_missing_run_fails_the_build_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    import(&data, 0, "glm");
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "GLM vs nothing", "runs": ["glm", "nope"]}]}"#,
    )
    .unwrap();
    let err = format!(
        "{:#}",
        sitegen::app::pipeline::build_site(&data, &tmp.path().join("site")).unwrap_err()
    );
    assert!(err.contains("comparisons.json"), "{err}");
    assert!(
        err.contains(
            "comparison 1 (\"GLM vs nothing\"): run \"nope\" is not in the data folder (runs: glm)"
        ),
        "{err}"
    );
    assert!(!tmp.path().join("site").exists());
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "alone", "runs": ["glm"]}]}"#,
    )
    .unwrap();
    let err = format!(
        "{:#}",
        sitegen::app::pipeline::build_site(&data, &tmp.path().join("site")).unwrap_err()
    );
    assert!(
        err.contains("expected 2 to 6 different runs, found 1"),
        "{err}"
    );
}

#[test]
fn six_runs_and_a_single_context_run_still_make_readable_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let ids: Vec<String> = (1..=6).map(|i| format!("run-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        import(&data, i % 2, id);
        let meta = data.join(id).join("run.json");
        let text = std::fs::read_to_string(&meta).unwrap();
        let text = text
            .replace("\"GLM-5.3-Flash\"", &format!("\"Model {i}\""))
            .replace("\"Step-3.5-Flash\"", &format!("\"Model {i}\""));
        std::fs::write(&meta, text).unwrap();
    }
    // run-6 keeps a single context (8K) only.
    for entry in std::fs::read_dir(data.join("run-6/cells")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("-00008192") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let all: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
    std::fs::write(
        data.join("comparisons.json"),
        format!(
            r#"{{"comparisons": [{{"title": "Six", "runs": [{}]}}], "auto_pair_limit": 3}}"#,
            all.join(", ")
        ),
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    // Six runs on one hardware are more than the auto-pair limit of 3: only the named page.
    // (compare/index.html beside them is the comparison built in the browser.)
    let compare_dirs: Vec<_> = std::fs::read_dir(site.join("compare"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .collect();
    assert_eq!(compare_dirs.len(), 1);
    let html = page(&site, &format!("compare/{}/index.html", ids.join("--")));
    assert_eq!(html.select(&sel("header .legend-list li")).count(), 6);
    let prefill_svg = html.select(&sel("#prefill svg")).next().unwrap().html();
    for colour in ["0072B2", "D55E00", "009E73", "CC79A7", "E69F00", "56B4E9"] {
        assert!(
            prefill_svg.to_uppercase().contains(colour),
            "series colour {colour} missing"
        );
    }
    assert_eq!(html.select(&sel("#ratios table.ratio")).count(), 5);
    // The single-context run (Step's 8K cells, valid up to 128) has one point
    // in the capacity chart, and a row.
    let capacity_rows: Vec<Vec<String>> = html
        .select(&sel("#capacity details tbody tr"))
        .map(|tr| tr.select(&sel("td")).map(text).collect())
        .collect();
    assert_eq!(capacity_rows[0][6], "128");
    assert!(capacity_rows[1..].iter().all(|r| r[6] == "not measured"));
}

/// GLM vs Step: the median tier's capacities come first among the findings,
/// each the one the reference pages' own rows give (read here with nothing
/// of sitegen: Valid, ≥ 20 tok/s per request, median TTFT ≤ 2,000 ms), and
/// the p99 tiers say "not recorded" for both.
#[test]
fn capacities_within_each_tier_lead_the_findings_and_are_the_references() {
    let (_tmp, site) = build_bundled_site();
    let capacity = |path: &Path| -> Vec<(String, Option<u32>)> {
        let mut rows: Vec<(String, Option<u32>)> = Vec::new();
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let c: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            if c.len() < 7 || c[0] != "Sustained decode" {
                continue;
            }
            let num = |s: &str| {
                s.trim_end_matches(" ms")
                    .replace(',', "")
                    .parse::<f64>()
                    .unwrap()
            };
            let ok = c[3] == "Valid" && num(c[5]) >= 20.0 && num(c[6]) <= 2000.0;
            let n: u32 = c[2].parse().unwrap();
            match rows.iter_mut().find(|(ctx, _)| ctx == c[1]) {
                Some((_, best)) => {
                    if ok {
                        *best = Some(n);
                    }
                }
                None => rows.push((c[1].to_string(), ok.then_some(n))),
            }
        }
        rows
    };
    let pages = fixture_pages();
    let (glm, step) = (capacity(&pages[0]), capacity(&pages[1]));
    let shared: Vec<String> = glm
        .iter()
        .filter_map(|(ctx, a)| {
            let (_, b) = step.iter().find(|(c, _)| c == ctx)?;
            let count = |n: &Option<u32>| n.map_or("none".to_string(), |n| n.to_string());
            let ratio = match (a, b) {
                (Some(x), Some(y)) => format!(" ({:.2}×)", f64::from(*y) / f64::from(*x)),
                _ => String::new(),
            };
            Some(format!(
                "{ctx}: Step-3.5-Flash {}, GLM-5.3-Flash {}{ratio}",
                count(b),
                count(a)
            ))
        })
        .collect();
    assert_eq!(shared.len(), 5, "8K to 128K are measured by both");
    let html =
        std::fs::read_to_string(site.join(
            "compare/glm-5.3-flash-h200x4-vllm--step-3.5-flash-h200x4-vllm-0.29.0/index.html",
        ))
        .unwrap();
    let doc = Html::parse_document(&html);
    let items: Vec<(String, String)> = doc
        .select(&sel("#findings dl.findings-list > div"))
        .map(|d| {
            (
                text(d.select(&sel("dt")).next().unwrap()),
                text(d.select(&sel("dd")).next().unwrap()),
            )
        })
        .collect();
    assert_eq!(
        items[0],
        (
            "Within 20 tok/s per user".to_string(),
            format!(
                "Requests at once each serves within median TTFT ≤ 2,000 ms and median TPOT ≤ 50 ms: {}.",
                shared.join(" · ")
            )
        )
    );
    for (i, tier, limits) in [
        (
            1,
            "MLPerf Server",
            "p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 200 ms",
        ),
        (
            2,
            "MLPerf Interactive",
            "p99 TTFT ≤ 450 ms and p99 TPOT ≤ 40 ms",
        ),
    ] {
        assert_eq!(
            items[i],
            (
                format!("Within {tier}"),
                format!(
                    "Not recorded for GLM-5.3-Flash and Step-3.5-Flash: their cells state no p99 latencies (the tier asks {limits})."
                )
            )
        );
    }
}
