//! Checks over the built files that need no browser: links, anchors, page weight.

use crate::common;

use common::build_bundled_site;
use common::site_check::{heavy_pages, id_problems, link_problems, repeated_tick_labels};

/// Each run page, charts included, stays under this many bytes uncompressed.
const PAGE_WEIGHT_LIMIT: usize = 150_000;

#[test]
fn every_internal_link_and_anchor_resolves() {
    let (_tmp, site) = build_bundled_site();
    let problems = link_problems(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Ids are made from tokens, never from labels ("0 (no prompt)" has spaces):
/// every id of every page is valid and unique, and every reference to one
/// resolves, on the bundled site and on one with runs of every importer.
#[test]
fn every_id_is_valid_unique_and_referred_to_rightly() {
    let (_tmp, site) = build_bundled_site();
    let problems = id_problems(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let (_tmp, site) = common::build_site_with_imported_runs();
    let problems = id_problems(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check has teeth.
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("index.html"),
        r#"<p id="decode-0 (no prompt)"></p><p id="a"></p><p id="a"></p><table aria-labelledby="gone"></table>"#,
    )
    .unwrap();
    assert_eq!(
        id_problems(bad.path()),
        [
            "index.html: id \"decode-0 (no prompt)\" is not a valid HTML id",
            "index.html: id \"a\" is used twice",
            "index.html: aria-labelledby=\"gone\" names no element",
        ]
    );
}

#[test]
fn a_dead_link_a_missing_anchor_and_a_remote_script_are_caught() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("runs/a")).unwrap();
    std::fs::write(tmp.path().join("index.html"), r##"<a href="runs/a/index.html#there">ok</a> <a href="runs/b/">dead</a> <a href="#nowhere">x</a> <script src="https://cdn.example.com/x.js"></script>"##).unwrap();
    std::fs::write(tmp.path().join("runs/a/index.html"), r#"<p id="there"><a href="../../index.html">home</a> <a href="../../index.html#top">top</a></p>"#).unwrap();
    let problems = link_problems(tmp.path());
    assert_eq!(
        problems,
        [
            "index.html: runs/b/ does not resolve (runs/b/index.html is missing)",
            "index.html: #nowhere: no element with id \"nowhere\" in index.html",
            "index.html: loads https://cdn.example.com/x.js from another host",
            "runs/a/index.html: ../../index.html#top: no element with id \"top\" in index.html",
        ]
    );
}

#[test]
fn run_pages_stay_under_the_weight_limit() {
    let (_tmp, site) = build_bundled_site();
    let heavy = heavy_pages(&site, PAGE_WEIGHT_LIMIT);
    assert!(heavy.is_empty(), "{}", heavy.join("\n"));
    let big = tempfile::tempdir().unwrap();
    std::fs::write(
        big.path().join("index.html"),
        "x".repeat(PAGE_WEIGHT_LIMIT + 1),
    )
    .unwrap();
    assert_eq!(heavy_pages(big.path(), PAGE_WEIGHT_LIMIT).len(), 1);
}

/// No axis of any chart says a tick label twice: on the bundled site, and on
/// one with a series of GLM, whose 1019K chart has a lone level (1 request
/// at once) and once read "1 1 2" along its x axis.
#[test]
fn no_chart_axis_repeats_a_tick_label() {
    let (_tmp, site) = build_bundled_site();
    let problems = repeated_tick_labels(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    common::glm_run(&data, "glm-again", "2026-10-01T02:00:00Z", "0.11.0", 1.0);
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let series =
        std::fs::read_to_string(site.join("series/glm-5.3-flash-h200-sxm-x4-fp8/index.html"))
            .unwrap();
    assert!(
        series.contains("id=\"decode-1043456\""),
        "the 1019K chart is drawn"
    );
    let problems = repeated_tick_labels(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check has teeth: x labels "1 1 2", y labels "5 5".
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("index.html"),
        r#"<svg class="chart wide" aria-label="t"><text x="10" y="280" dy="0.76em" text-anchor="middle">
1
</text><text x="60" y="280" dy="0.76em" text-anchor="middle">
1
</text><text x="110" y="280" dy="0.76em" text-anchor="middle">
2
</text><text x="50" y="10" dy="0.5ex" text-anchor="end">5</text><text x="50" y="60" dy="0.5ex" text-anchor="end">5</text><text x="200" y="300" dy="0.76em" text-anchor="middle">requests</text></svg>"#,
    )
    .unwrap();
    assert_eq!(
        repeated_tick_labels(bad.path()),
        [
            "index.html: t (chart wide): x axis at y=280: 1 1 2",
            "index.html: t (chart wide): y axis at x=50: 5 5",
        ]
    );
}
