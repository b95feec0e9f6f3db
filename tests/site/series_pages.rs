//! A series: three runs of one setup, the middle one slower in some cells.
//! The series page and the run pages mark the regression, with the numbers.

use crate::common;

use sitegen::model::{Cell, Status};

fn html(text: &str) -> scraper::Html {
    scraper::Html::parse_document(text)
}

fn sel(s: &str) -> scraper::Selector {
    scraper::Selector::parse(s).unwrap()
}

use common::glm_run;

#[test]
fn a_slower_run_is_called_against_the_runs_before_it_on_the_series_and_run_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Four runs alike, a fifth 20% slower at 8K, a sixth as before.
    for (i, id) in ["glm-a", "glm-b", "glm-c", "glm-d"].iter().enumerate() {
        glm_run(
            &data,
            id,
            &format!("2026-09-0{}T10:00:00Z", i + 1),
            &format!("0.11.{i}"),
            1.0,
        );
    }
    let slowed = glm_run(&data, "glm-e", "2026-10-01T10:00:00Z", "0.11.4", 0.8);
    glm_run(&data, "glm-f", "2026-11-01T10:00:00Z", "0.11.5", 1.0);
    // The last run was launched with one more flag: its label says so.
    let f_json = data.join("glm-f/run.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&f_json).unwrap()).unwrap();
    let launch = format!(
        "{} --max-num-seqs 256",
        meta["launch_command"].as_str().unwrap()
    );
    meta["launch_command"] = launch.into();
    std::fs::write(&f_json, meta.to_string()).unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();

    // The numbers, computed here: e's 8K cells are 0.8 of the four runs
    // before it (all alike: no spread), every other cell 1.0, so the whole
    // run (the median over its cells) is 1.00× and the 8K cells are slower.
    let run = sitegen::store::load_run(&data.join("glm-a")).unwrap();
    let valid = run
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::Decode(_)) && c.status() == Status::Valid)
        .count();
    let slower = slowed.len();
    assert!(slower >= 5, "{slower} cells at 8K");
    let expected_e = format!(
        "Regression: against the median of the 4 runs before it, the whole run is 1.00× (1.00× to 1.00×); {slower} of {valid} cells slower, 0 faster."
    );
    // f against a to d: e, called changed, is left out of its window.
    let expected_f = format!(
        "Within noise: against the median of runs 1–4, the 4 before it not called changed, the whole run is 1.00× (1.00× to 1.00×); 0 of {valid} cells slower, 0 faster."
    );

    let page = |rel: &str| std::fs::read_to_string(site.join(rel)).unwrap();
    let series = page("series/glm-5.3-flash-h200-sxm-x4-fp8/index.html");
    assert!(
        series.contains("<h1>GLM-5.3-Flash on H200 SXM 141GB ×4 (FP8)</h1>"),
        "{series}"
    );
    assert!(
        series.contains(&format!(
            "<p class=\"step regression\">vllm 0.11.4 · 2026-10-01: {expected_e}</p>"
        )),
        "{series}"
    );
    assert!(series.contains(&format!(
        "<p class=\"step\">Newest run (vllm 0.11.5 · 2026-11-01 · --max-num-seqs 256): {expected_f}</p>"
    )));
    assert!(
        series.contains(
            "1 of the 3 runs judged against the runs before them was called a regression."
        )
    );
    // The matrix of e against the runs before it: 0.80× at 8K × 1.
    assert!(series.contains(
        "<h3 id=\"change-5-h\">vllm 0.11.4 · 2026-10-01 / the median of the 4 before it</h3>"
    ));
    let labels: Vec<String> = html(&series)
        .select(&sel(".series-runs li a"))
        .map(|a| a.text().collect())
        .collect();
    assert_eq!(
        labels,
        [
            "vllm 0.11.0 · 2026-09-01",
            "vllm 0.11.1 · 2026-09-02",
            "vllm 0.11.2 · 2026-09-03",
            "vllm 0.11.3 · 2026-09-04",
            "vllm 0.11.4 · 2026-10-01",
            "vllm 0.11.5 · 2026-11-01 · --max-num-seqs 256"
        ]
    );
    // Small multiples: a chart per decode context, a line per run; the 8K
    // chart's numbers are each run's total tok/s, e's at 0.8 times.
    let doc = html(&series);
    assert_eq!(doc.select(&sel(".series-runs .swatch")).count(), 6);
    let contexts: Vec<String> = doc
        .select(&sel("#decode h3"))
        .map(|h| h.text().collect())
        .collect();
    assert_eq!(contexts.len(), run.decode_contexts().len(), "{contexts:?}");
    assert_eq!(contexts[0], "8K context");
    let first_row: Vec<String> = doc
        .select(&sel("#decode-8192 details tbody tr"))
        .next()
        .unwrap()
        .select(&sel("td"))
        .map(|td| td.text().collect())
        .collect();
    let glm_8k_1 = run.decode_cell(8192, 1).unwrap().total_tok_per_s.unwrap();
    let usual = sitegen::model::format::tok_per_s(glm_8k_1);
    assert_eq!(
        first_row,
        [
            "1".to_string(),
            usual.clone(),
            usual.clone(),
            usual.clone(),
            usual.clone(),
            sitegen::model::format::tok_per_s(glm_8k_1 * 0.8),
            usual,
        ]
    );
    // One chart, drawn wide and narrow.
    assert_eq!(
        doc.select(&sel("#decode-8192 svg.chart.wide title"))
            .count(),
        1
    );
    assert_eq!(
        doc.select(&sel("#decode-8192 svg.chart.narrow title"))
            .count(),
        1
    );

    let e_page = page("runs/glm-e/index.html");
    assert!(
        e_page.contains("Part of a series of runs of this setup"),
        "the run page links its series"
    );
    assert!(e_page.contains(&expected_e), "{e_page}");
    assert!(e_page.contains("<p class=\"series-line regression\">"));
    assert!(page("runs/glm-f/index.html").contains(&expected_f));
    assert!(
        page("runs/glm-a/index.html")
            .contains("Insufficient data: not judged: 0 earlier runs of this setup since the last noted change, 3 needed."),
        "the first has none before it"
    );
    // The second and third, too few before them to judge, say their plain
    // ratio to those (all alike: 1.00×), on their pages and the series page.
    let plain_b = "Insufficient data: 1.00× the run before; not judged: 1 earlier run of this setup since the last noted change, 3 needed.";
    let plain_c = "Insufficient data: 1.00× the median of the 2 runs before; not judged: 2 earlier runs of this setup since the last noted change, 3 needed.";
    assert!(page("runs/glm-b/index.html").contains(plain_b));
    assert!(page("runs/glm-c/index.html").contains(plain_c));
    assert!(series.contains(&format!(
        "<p class=\"step\">vllm 0.11.1 · 2026-09-02: {plain_b}</p>"
    )));
    assert!(series.contains(&format!(
        "<p class=\"step\">vllm 0.11.2 · 2026-09-03: {plain_c}</p>"
    )));
    // The index lists the series with its newest run's verdict, and sorts
    // runs newest first with their dates.
    let index = page("index.html");
    assert!(
        index.contains("GLM-5.3-Flash on H200 SXM 141GB ×4 (FP8)</a> <span class=\"muted\">6 runs · newest: </span><span class=\"muted\">within noise</span>"),
        "{index}"
    );
    let (f, e, a) = (
        index.find("2026-11-01 10:00 UTC").unwrap(),
        index.find("2026-10-01 10:00 UTC").unwrap(),
        index.find("2026-09-01 10:00 UTC").unwrap(),
    );
    assert!(f < e && e < a, "newest first");
}

/// A long series (a month of nightly runs, one slower night): the series page
/// shows the newest runs in full and the whole series as charts, pages of
/// runs reach every run by plain links, and series.csv holds every figure.
#[test]
fn a_long_series_summarises_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let nights = 31;
    let slow_night = 20;
    for night in 0..nights {
        let factor = if night == slow_night { 0.8 } else { 1.0 };
        glm_run(
            &data,
            &format!("glm-{night:02}"),
            &format!("2026-10-{:02}T02:00:00Z", night + 1),
            "0.11.0",
            factor,
        );
    }
    // One night did not measure 8K at one request.
    let gap_night = 5;
    std::fs::remove_file(data.join(format!(
        "glm-{gap_night:02}/cells/decode-00008192-x001.json"
    )))
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let dir = site.join("series/glm-5.3-flash-h200-sxm-x4-fp8");
    let page = html(&std::fs::read_to_string(dir.join("index.html")).unwrap());
    let text = |s: &str| {
        page.select(&sel(s))
            .map(|e| e.text().collect::<String>())
            .collect::<Vec<_>>()
    };

    // The newest ten runs in full: the list, the table's columns, the changes.
    assert_eq!(text("#runs li").len(), 10);
    assert_eq!(
        page.select(&sel("ol.series-runs"))
            .next()
            .unwrap()
            .attr("start"),
        Some("22")
    );
    assert_eq!(text(".series-values thead th").len(), 2 + 10);
    assert_eq!(text("#changes p.step").len(), 10);
    // The answer first: an unchanged setup (one slow night is no shift),
    // the newest run's verdict, and how many runs were called slower (night
    // 20 against the five before it; night 21's window has the usual median).
    let head = text("header.page-head").join(" ");
    assert!(head.contains("31 runs of one setup"), "{head}");
    assert!(
        head.contains("An unchanged setup: no change point in its 31 runs, and the newest run is within noise of the 5 before it."),
        "{head}"
    );
    assert!(
        head.contains(
            "1 of the 28 runs judged against the runs before them was called a regression."
        ),
        "{head}"
    );
    // The whole series: a chart per context, the slow night marked at 8K.
    let history = text("#history h3");
    assert!(history.contains(&"8K context".to_string()), "{history:?}");
    let rows_8k: Vec<String> = text("#history-8192 details.numbers tbody tr");
    assert_eq!(rows_8k.len(), nights);
    assert!(
        rows_8k[slow_night].contains("(slower)"),
        "{}",
        rows_8k[slow_night]
    );
    assert!(
        !rows_8k[slow_night + 1].contains("(slower)"),
        "{}",
        rows_8k[slow_night + 1]
    );
    // Dated runs over a month are drawn against their dates, and the table
    // says each run's date.
    assert!(
        rows_8k[slow_night].contains("2026-10-21"),
        "{}",
        rows_8k[slow_night]
    );
    // The night without a figure breaks its level's line rather than
    // drawing through it: one more line at 8K than at 16K in each drawing
    // (wide and narrow), and said so.
    assert!(
        rows_8k[gap_night].contains(sitegen::model::format::DASH),
        "{}",
        rows_8k[gap_night]
    );
    let lines_in = |id: &str| {
        page.select(&sel(&format!("#{id} svg.wide polyline")))
            .count()
    };
    assert_eq!(lines_in("history-8192"), lines_in("history-16384") + 1);
    let caption = text("#history-8192 figcaption").join(" ");
    assert!(
        caption.contains("A line breaks where its level has no valid figure"),
        "{caption}"
    );
    assert!(
        !text("#history-16384 figcaption")
            .join(" ")
            .contains("A line breaks"),
    );
    let axis = text("#history-8192 svg text").join(" | ");
    assert!(axis.contains("Date measured (UTC)"), "{axis}");
    assert!(axis.contains("2026-10-"), "{axis}");

    // Every run is reachable from the series page by plain links.
    let mut reached = std::collections::BTreeSet::new();
    for link in page.select(&sel("#runs p a[href^='runs-']")) {
        let runs_page = dir.join(link.attr("href").unwrap());
        let runs_html = html(&std::fs::read_to_string(&runs_page).unwrap());
        for a in runs_html.select(&sel("table.series-history a")) {
            let target = runs_page.parent().unwrap().join(a.attr("href").unwrap());
            assert!(
                target.is_file(),
                "{} links to a missing {}",
                runs_page.display(),
                target.display()
            );
            reached.insert(target.parent().unwrap().file_name().unwrap().to_owned());
        }
        let slower: Vec<String> = runs_html
            .select(&sel("tr.regression td:first-child"))
            .map(|e| e.text().collect())
            .collect();
        assert_eq!(slower, [(slow_night + 1).to_string()]);
    }
    assert_eq!(reached.len(), nights);

    // series.csv: every decode cell of every run.
    let csv = std::fs::read_to_string(dir.join("series.csv")).unwrap();
    let run = sitegen::store::load_run(&data.join("glm-00")).unwrap();
    let decode_cells = run
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::Decode(_)))
        .count();
    // (less the one cell the gap night did not measure).
    assert_eq!(csv.lines().count(), 1 + nights * decode_cells - 1);
    let slow_rows = csv
        .lines()
        .filter(|l| l.starts_with(&format!("glm-{slow_night:02},")) && l.ends_with(",slower"))
        .count();
    assert!(
        slow_rows > 0,
        "no slower cell of the slow night in series.csv"
    );
}

/// The run-number ticks of every history chart on a series page: the x
/// axis' labels, which sit below it (top-aligned, not rotated).
fn run_number_ticks(page: &str) -> Vec<Vec<String>> {
    let doc = html(page);
    doc.select(&sel("#history svg"))
        .map(|svg| {
            svg.select(&sel("text"))
                .filter(|t| t.attr("dy") == Some("0.76em") && t.attr("transform").is_none())
                .map(|t| t.text().collect::<String>().trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn run_number_axes_have_one_tick_per_number_at_any_length() {
    for runs in [4usize, 10, 60] {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        for i in 0..runs {
            // Undated runs: the history is drawn against run numbers.
            let id = format!("glm-{i:02}");
            glm_run(
                &data,
                &id,
                "2026-10-01T00:00:00Z",
                "0.11.0",
                1.0 + i as f64 / 1000.0,
            );
            let path = data.join(&id).join("run.json");
            let mut meta: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            meta.as_object_mut().unwrap().remove("measured_at");
            std::fs::write(&path, meta.to_string()).unwrap();
        }
        let site = tmp.path().join("site");
        sitegen::app::pipeline::build_site(&data, &site).unwrap();
        let page =
            std::fs::read_to_string(site.join("series/glm-5.3-flash-h200-sxm-x4-fp8/index.html"))
                .unwrap();
        let charts = run_number_ticks(&page);
        assert!(!charts.is_empty(), "{runs} runs: no history chart");
        for ticks in charts {
            assert!(ticks.len() >= 2, "{runs} runs: {ticks:?}");
            let numbers: Vec<usize> = ticks
                .iter()
                .map(|t| {
                    t.parse()
                        .unwrap_or_else(|_| panic!("{runs} runs: tick {t:?}"))
                })
                .collect();
            assert!(
                numbers.windows(2).all(|w| w[0] < w[1]),
                "{runs} runs: ticks repeat or go back: {ticks:?}"
            );
            assert!(
                numbers.iter().all(|&n| (1..=runs).contains(&n)),
                "{runs} runs: {ticks:?}"
            );
            assert_eq!(numbers[0], 1, "{runs} runs: {ticks:?}");
        }
    }
}
