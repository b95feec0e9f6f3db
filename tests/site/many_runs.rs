//! A site of many runs: the index lists the newest and reaches every run
//! page through plain links (no script), and the site's links all resolve.

use crate::common;

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use common::site_check::link_problems;

/// The pages reached from `start` by following `<a href>` inside the site.
fn reachable(site: &Path, start: &str) -> BTreeSet<String> {
    let anchor = scraper::Selector::parse("a[href]").unwrap();
    let mut seen = BTreeSet::from([start.to_string()]);
    let mut queue = VecDeque::from([start.to_string()]);
    while let Some(page) = queue.pop_front() {
        let Ok(text) = std::fs::read_to_string(site.join(&page)) else {
            continue;
        };
        let dir = Path::new(&page)
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        for a in scraper::Html::parse_document(&text).select(&anchor) {
            let href = a.attr("href").unwrap();
            if href.contains(':') || href.starts_with('#') || !href.ends_with(".html") {
                continue;
            }
            let href = href.split('#').next().unwrap();
            let mut parts: Vec<String> = dir
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            for part in href.split('/') {
                match part {
                    ".." => {
                        parts.pop();
                    }
                    "." | "" => {}
                    p => parts.push(p.to_string()),
                }
            }
            let target = parts.join("/");
            if seen.insert(target.clone()) {
                queue.push_back(target);
            }
        }
    }
    seen
}

#[test]
fn every_run_page_is_reachable_from_a_light_index() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let count = 1_100;
    common::many_runs(&data, count);
    let site = tmp.path().join("site");
    let summary = sitegen::app::pipeline::build_site(&data, &site).unwrap();
    assert_eq!(summary.runs, count);

    // The index lists the newest runs and links pages of every run.
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let html = scraper::Html::parse_document(&index);
    let rows = html
        .select(&scraper::Selector::parse("#runs-table tbody tr").unwrap())
        .count();
    assert_eq!(rows, 100);
    assert!(
        index.contains("The newest 100 of 1,100 runs"),
        "no word of the other runs"
    );
    for range in ["Runs 1–500", "Runs 501–1,000", "Runs 1,001–1,100"] {
        assert!(index.contains(range), "the index does not link {range}");
    }

    // With a script, the first filter or sort loads every run's row from one
    // file (tests/browser.rs checks the rows against the page's own).
    assert!(index.contains("data-all-runs=\"all-runs/runs.js\""));
    let script = std::fs::read_to_string(site.join("all-runs/runs.js")).unwrap();
    let rows = script.matches("[\"run-").count();
    assert_eq!(rows, count, "all-runs/runs.js holds {rows} runs");

    // Without a script, following links from the index reaches every run page.
    let pages = reachable(&site, "index.html");
    let runs: BTreeSet<&String> = pages
        .iter()
        .filter(|p| p.starts_with("runs/") && p.ends_with("/index.html"))
        .collect();
    assert_eq!(runs.len(), count, "run pages reachable from the index");
    let problems = link_problems(&site);
    assert!(
        problems.is_empty(),
        "{}",
        problems[..problems.len().min(10)].join("\n")
    );
    // No page of the site is heavy: the largest is under 1 MB.
    let heavy = common::site_check::heavy_pages(&site, 1_000_000);
    assert!(heavy.is_empty(), "{heavy:?}");
}
