//! Paced points on the run page: a run that has both a concurrency matrix
//! and points sent at a request rate (the real SGLang sweep of
//! datacrunch-research, imported) shows the matrix exactly as without them,
//! and the points in their own section, each row true of its point.

use crate::common;

use crate::common::html::{sel, text};
use scraper::Html;
use sitegen::ingest::{ImportOptions, import};

fn rows(page: &Html, table: &str) -> Vec<Vec<String>> {
    page.select(&sel(&format!("{table} tbody tr")))
        .map(|tr| tr.select(&sel("th, td")).map(text).collect())
        .collect()
}

fn page(site: &std::path::Path, id: &str) -> Html {
    Html::parse_document(
        &std::fs::read_to_string(site.join(format!("runs/{id}/index.html"))).unwrap(),
    )
}

#[test]
fn paced_points_have_their_own_section_and_never_enter_the_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    let glm = "glm-5.3-flash-h200x4-vllm";
    let before = tmp.path().join("before");
    sitegen::app::pipeline::build_site(&data, &before).unwrap();

    // The real sweep, imported, its points put beside GLM's cells.
    let imported = tmp.path().join("imported");
    let meta = tmp.path().join("meta.json");
    std::fs::write(
        &meta,
        r#"{"model": "Llama-3.3-70B", "hardware": {"gpu": "H200", "gpu_count": 1}}"#,
    )
    .unwrap();
    let file = common::real("sglang-bench/datacrunch-llama_3_3_70b_online_output.jsonl");
    let opts = ImportOptions {
        id: Some("sweep".into()),
        data: imported.clone(),
        meta: Some(meta),
        ..ImportOptions::default()
    };
    let outcome = import(None, &[file], &opts).unwrap();
    assert!(outcome[0].cells.is_empty(), "a paced file makes no cells");
    let points = outcome[0].paced.clone();
    assert_eq!(points.len(), 7);
    let paced_dir = data.join(glm).join("paced");
    std::fs::create_dir_all(&paced_dir).unwrap();
    for entry in std::fs::read_dir(imported.join("sweep/paced")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), paced_dir.join(entry.file_name())).unwrap();
    }
    let after = tmp.path().join("after");
    sitegen::app::pipeline::build_site(&data, &after).unwrap();

    let (old, new) = (page(&before, glm), page(&after, glm));
    for table in ["#decode table", "#measurements table"] {
        assert_eq!(
            rows(&old, table),
            rows(&new, table),
            "{table} is as it was without paced points"
        );
    }
    assert!(old.select(&sel("#paced")).next().is_none());

    // Every point once, in its own table, its figures its own.
    let header: Vec<String> = new.select(&sel("#paced thead th")).map(text).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let shown = rows(&new, "#paced table");
    assert_eq!(shown.len(), points.len());
    for p in &points {
        let requested = format!(
            "{} req/s",
            sitegen::model::format::rate_per_s(p.load.requested_per_s)
        );
        let context = sitegen::model::format::count(p.context_tokens);
        let row = shown
            .iter()
            .find(|r| r[col("Requested")] == requested && r[col("Prompt tokens")] == context)
            .unwrap_or_else(|| panic!("a row for {context} at {requested}"));
        assert_eq!(
            row[col("Output tok/s")],
            sitegen::model::format::tok_per_s(p.total_tok_per_s.unwrap())
        );
        assert_eq!(row[col("Status")], "Valid");
        assert_eq!(
            row[col("Requests")],
            sitegen::model::format::count(p.completed_requests.unwrap())
        );
    }
    assert!(!header.contains(&"Cap".to_string()), "no point was capped");

    // SGLang's lines state no TPOT: no tier can be judged, and the page
    // says which figure is missing rather than a capacity.
    let capacity: Vec<String> = new.select(&sel("#paced li")).map(text).collect();
    assert_eq!(
        capacity.len(),
        3,
        "one sentence per default tier: {capacity:?}"
    );
    for sentence in &capacity {
        assert!(
            sentence.contains("not judged: every sweep has a point that records no")
                && sentence.contains("TPOT"),
            "{sentence}"
        );
    }
    // Nor a chart without per-user speed, and the page says why.
    let note = new
        .select(&sel("#paced p.note"))
        .map(text)
        .collect::<String>();
    assert!(note.contains("fewer than two Valid points"), "{note}");
    assert!(
        new.select(&sel("nav a[href='#paced']")).next().is_some(),
        "the page's contents link to the section"
    );
    // data.json carries the points.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(after.join(format!("runs/{glm}/data.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(json["paced"].as_array().unwrap().len(), points.len());
    // paced.csv: a row per point; the run without points has no such file.
    let csv = std::fs::read_to_string(after.join(format!("runs/{glm}/paced.csv"))).unwrap();
    assert_eq!(csv.lines().count(), points.len() + 1, "{csv}");
    assert!(!before.join(format!("runs/{glm}/paced.csv")).exists());
    assert!(common::site_check::link_problems(&after).is_empty());
}
