//! The site checked by real tools: headless Chromium (console, requests, axe,
//! phone width, sorting, copying) and the Nu HTML checker, over HTTP from a
//! sub-path served by `sitegen serve` and from `file://`.
//!
//! A test target of its own (`harness = false`, see tests/common/tier.rs):
//! locally, without the tools, its tests are reported as ignored with the
//! reason; with `CI` set a missing tool fails them. `.ci/run` installs the tools.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use common::{SitegenServe, build_bundled_site, data_dir, files_under, repo};

fn main() -> ExitCode {
    common::tier::run(
        "browser",
        find_tools,
        vec![
            (
                "site_served_from_a_sub_path_passes_every_browser_check",
                site_served_from_a_sub_path_passes_every_browser_check,
            ),
            (
                "site_opened_from_file_urls_loads_without_errors",
                site_opened_from_file_urls_loads_without_errors,
            ),
            (
                "every_page_is_valid_html_for_the_nu_checker",
                every_page_is_valid_html_for_the_nu_checker,
            ),
            (
                "pages_of_imported_runs_pass_the_browser_and_nu_checks",
                pages_of_imported_runs_pass_the_browser_and_nu_checks,
            ),
            (
                "a_long_series_and_a_paged_index_pass_the_browser_and_nu_checks",
                a_long_series_and_a_paged_index_pass_the_browser_and_nu_checks,
            ),
            (
                "a_sessions_run_and_its_comparison_pass_the_browser_and_nu_checks",
                a_sessions_run_and_its_comparison_pass_the_browser_and_nu_checks,
            ),
            (
                "selected_runs_compare_in_the_browser_as_on_their_prerendered_page",
                selected_runs_compare_in_the_browser_as_on_their_prerendered_page,
            ),
            (
                "each_check_catches_a_deliberately_broken_page",
                each_check_catches_a_deliberately_broken_page,
            ),
        ],
    )
}

struct Tools {
    chromium: PathBuf,
    vnu_jar: PathBuf,
}

fn find_tools() -> Result<Tools, String> {
    let chromium = std::env::var_os("SITEGEN_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.is_file() {
        return Err(format!(
            "no Chromium at {} (apt-get install chromium, or set SITEGEN_CHROMIUM)",
            chromium.display()
        ));
    }
    let runs = |cmd: &str, arg: &str| {
        Command::new(cmd)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !runs("node", "--version") {
        return Err("no node on PATH".into());
    }
    let modules = repo().join("tests/browser/node_modules");
    if !modules.join("playwright-core").is_dir() || !modules.join("axe-core").is_dir() {
        return Err("tests/browser/node_modules is missing (npm ci --prefix tests/browser)".into());
    }
    if !runs("java", "-version") {
        return Err("no java on PATH (apt-get install default-jre-headless)".into());
    }
    let vnu_jar = modules.join("vnu-jar/build/dist/vnu.jar");
    if !vnu_jar.is_file() {
        return Err(format!("no Nu HTML checker at {}", vnu_jar.display()));
    }
    Ok(Tools { chromium, vnu_jar })
}

#[derive(Debug, serde::Deserialize)]
struct PageReport {
    url: String,
    problems: Vec<String>,
    checked: Vec<String>,
}

/// A page to check: its URL and the name its screenshots get.
struct PageUrl {
    url: String,
    name: String,
}

fn run_browser_checks(
    tools: &Tools,
    pages: &[PageUrl],
    checks: &[&str],
    screenshots: Option<&Path>,
) -> Vec<PageReport> {
    let mut value = serde_json::json!({
        "chromium": tools.chromium,
        "pages": pages.iter().map(|p| serde_json::json!({"url": p.url, "name": p.name})).collect::<Vec<_>>(),
        "checks": checks,
    });
    if let Some(dir) = screenshots {
        value["screenshots"] = serde_json::json!(dir);
    }
    #[derive(serde::Deserialize)]
    struct Report {
        pages: Vec<PageReport>,
    }
    run_check_mjs::<Report>(&value).pages
}

/// Runs tests/browser/check.mjs with `config` and reads its JSON report.
fn run_check_mjs<R: serde::de::DeserializeOwned>(config: &serde_json::Value) -> R {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = Command::new("node")
        .arg(repo().join("tests/browser/check.mjs"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The HTML pages of a built site, relative to its root.
fn html_pages(site: &Path) -> Vec<String> {
    files_under(site)
        .into_iter()
        .map(|(rel, _)| rel)
        .filter(|rel| rel.ends_with(".html"))
        .collect()
}

/// "runs/<id>/index.html" -> "<id>", "index.html" -> "index".
fn page_name(rel: &str) -> String {
    rel.trim_end_matches("index.html")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("index")
        .to_string()
}

fn screenshot_dir() -> PathBuf {
    repo().join("test-artifacts/screenshots")
}

fn site_served_from_a_sub_path_passes_every_browser_check(tools: &Tools) {
    let (_tmp, site) = build_bundled_site();
    let server = SitegenServe::start(&data_dir(), "/some/prefix/");
    assert!(
        server.base_url.ends_with("/some/prefix/"),
        "{}",
        server.base_url
    );
    let mut pages: Vec<PageUrl> = html_pages(&site)
        .iter()
        // Folder URLs, as a static host serves them: runs/<id>/ for runs/<id>/index.html.
        .map(|rel| PageUrl {
            url: format!("{}{}", server.base_url, rel.trim_end_matches("index.html")),
            name: page_name(rel),
        })
        .collect();
    // The comparison built in the browser, with its runs loaded.
    pages.push(PageUrl {
        url: format!(
            "{}compare/index.html?runs=glm-5.3-flash-h200x4-vllm,step-3.5-flash-h200x4-vllm-0.29.0",
            server.base_url
        ),
        name: "compare-in-browser".into(),
    });
    assert!(
        pages.len() >= 4,
        "index, two runs and the GLM vs Step comparison"
    );
    let reports = run_browser_checks(
        tools,
        &pages,
        &[
            "load", "axe", "phone", "sort", "filter", "toggle", "copy", "reading",
        ],
        Some(&screenshot_dir()),
    );
    for r in &reports {
        assert_eq!(
            r.checked,
            [
                "load", "axe", "sort", "filter", "toggle", "reading", "phone", "copy"
            ],
            "{}",
            r.url
        );
        assert!(
            r.problems.is_empty(),
            "{}:\n{}",
            r.url,
            r.problems.join("\n")
        );
    }
}

fn site_opened_from_file_urls_loads_without_errors(tools: &Tools) {
    let (_tmp, site) = build_bundled_site();
    let pages: Vec<PageUrl> = html_pages(&site)
        .iter()
        .map(|rel| PageUrl {
            url: format!("file://{}", site.join(rel).display()),
            name: format!("file-{}", page_name(rel)),
        })
        .collect();
    let reports = run_browser_checks(tools, &pages, &["load", "sort"], None);
    assert_no_problems(&reports);
}

fn nu_check(tools: &Tools, files: &[PathBuf]) -> Vec<String> {
    let out = Command::new("java")
        .arg("-jar")
        .arg(&tools.vnu_jar)
        .args(["--errors-only", "--format", "json"])
        .args(files)
        .output()
        .unwrap();
    // vnu prints its JSON report on stderr and exits 1 when it finds errors.
    let report: serde_json::Value = serde_json::from_slice(&out.stderr)
        .unwrap_or_else(|_| panic!("vnu output: {}", String::from_utf8_lossy(&out.stderr)));
    report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}: {}", m["url"], m["lastLine"], m["message"]))
        .collect()
}

fn every_page_is_valid_html_for_the_nu_checker(tools: &Tools) {
    let (_tmp, site) = build_bundled_site();
    let files: Vec<PathBuf> = html_pages(&site).iter().map(|rel| site.join(rel)).collect();
    let errors = nu_check(tools, &files);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Runs imported from other tools' files (definitions section, request
/// bursts, context 0, Error and Over capacity cells, a pause mark), dated
/// reruns and their series page, and a comparison of runs on 4 and 2 GPUs
/// (its per-GPU view) render as cleanly as the bundled ones.
fn pages_of_imported_runs_pass_the_browser_and_nu_checks(tools: &Tools) {
    let (tmp, site) = common::build_site_with_imported_runs();
    let imported: Vec<String> = html_pages(&site)
        .into_iter()
        .filter(|rel| {
            rel.starts_with("runs/imported-")
                || rel.starts_with("series/")
                || rel.starts_with("compare/glm-5.3-flash-h200x4-vllm--imported-paused/")
                || rel == "index.html"
        })
        .collect();
    assert_eq!(imported.len(), 15, "{imported:?}");
    let comparison = std::fs::read_to_string(
        site.join("compare/glm-5.3-flash-h200x4-vllm--imported-paused/index.html"),
    )
    .unwrap();
    assert!(
        comparison.contains("<div data-gpu-view=\"per-gpu\" hidden>"),
        "4 and 2 GPUs, and no per-GPU view to toggle"
    );
    let files: Vec<PathBuf> = imported.iter().map(|rel| site.join(rel)).collect();
    let errors = nu_check(tools, &files);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Served over HTTP: axe reads the style sheet, which file:// forbids.
    let server = SitegenServe::start(&tmp.path().join("data"), "/");
    let mut pages: Vec<PageUrl> = imported
        .iter()
        .map(|rel| PageUrl {
            url: format!("{}{}", server.base_url, rel.trim_end_matches("index.html")),
            name: format!("imported-{}", page_name(rel)),
        })
        .collect();
    // The same two runs compared in the browser: its per-GPU view too.
    pages.push(PageUrl {
        url: format!(
            "{}compare/index.html?runs=glm-5.3-flash-h200x4-vllm,imported-paused",
            server.base_url
        ),
        name: "imported-compare-in-browser".into(),
    });
    let reports = run_browser_checks(
        tools,
        &pages,
        &["load", "axe", "phone", "sort", "toggle", "reading"],
        Some(&screenshot_dir()),
    );
    assert_no_problems(&reports);
}

/// 130 dated runs: the index lists the newest 100 and links pages of every
/// run; each model is a series of 65 runs, whose page summarises and links
/// pages of all its runs. Those pages pass the Nu checker and every browser
/// check (axe light and dark, the phone, sorting, reading).
fn a_long_series_and_a_paged_index_pass_the_browser_and_nu_checks(tools: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::many_runs(&data, 130);
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let series = "series/glm-5.3-flash-h200-sxm-x4-fp8/";
    let pages = [
        ("index.html".to_string(), "many-index"),
        ("all-runs/1/index.html".to_string(), "many-all-runs-1"),
        (format!("{series}index.html"), "many-series"),
        (format!("{series}runs-1/index.html"), "many-series-runs-1"),
    ];
    for (rel, _) in &pages {
        assert!(site.join(rel).is_file(), "{rel} was not built");
    }
    let (_server, urls) = served_pages_pass(
        tools,
        &data,
        &site,
        &pages,
        &["load", "axe", "phone", "sort", "reading"],
    );
    // The index's first filter or sort brings every run into its table,
    // each row as the page writes it; filters then act on all 130.
    let reports = run_browser_checks(tools, &urls[..1], &["load", "all-runs", "filter"], None);
    assert_no_problems(&reports);
}

/// The Sessions section of a real run (vLLM 0.32 on the CPU) and a
/// comparison of two such runs pass the Nu checker and the browser checks;
/// their screenshots (1440 and 390 px, light and dark) are the ones to look at.
fn a_sessions_run_and_its_comparison_pass_the_browser_and_nu_checks(tools: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_real_sessions_run(&data, "sessions-first");
    common::copy_real_sessions_run(&data, "sessions-second");
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "Sessions: first vs second", "runs": ["sessions-first", "sessions-second"]}]}"#,
    )
    .unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &site).unwrap();
    let pages = [
        ("runs/sessions-first/index.html", "sessions-run"),
        (
            "compare/sessions-first--sessions-second/index.html",
            "sessions-compare",
        ),
    ];
    let html = std::fs::read_to_string(site.join(pages[0].0)).unwrap();
    assert!(html.contains("id=\"sessions\""), "no Sessions section");
    served_pages_pass(
        tools,
        &data,
        &site,
        &pages,
        &["load", "axe", "phone", "sort", "toggle", "reading"],
    );
}

/// `pages` of the site built from `data` ((path under `site`, screenshot
/// name)) pass the Nu checker, then `checks` in the browser with
/// screenshots, served by `sitegen serve`; the server (kept alive for more
/// checks) and the pages' URLs.
fn served_pages_pass(
    tools: &Tools,
    data: &Path,
    site: &Path,
    pages: &[(impl AsRef<str>, &str)],
    checks: &[&str],
) -> (SitegenServe, Vec<PageUrl>) {
    let files: Vec<PathBuf> = pages
        .iter()
        .map(|(rel, _)| site.join(rel.as_ref()))
        .collect();
    let errors = nu_check(tools, &files);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let server = SitegenServe::start(data, "/");
    let urls: Vec<PageUrl> = pages
        .iter()
        .map(|(rel, name)| PageUrl {
            url: format!(
                "{}{}",
                server.base_url,
                rel.as_ref().trim_end_matches("index.html")
            ),
            name: name.to_string(),
        })
        .collect();
    let reports = run_browser_checks(tools, &urls, checks, Some(&screenshot_dir()));
    assert_no_problems(&reports);
    (server, urls)
}

fn assert_no_problems(reports: &[PageReport]) {
    for r in reports {
        assert!(
            r.problems.is_empty(),
            "{}:\n{}",
            r.url,
            r.problems.join("\n")
        );
    }
}

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Matrix {
    heading: String,
    cells: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct Selection {
    url: String,
    problems: Vec<String>,
    matrices: Vec<Matrix>,
    charts: Vec<String>,
    numbers: Vec<String>,
}

/// Ticks `runs` on the index at `index`, follows the comparison link and
/// reads the ratio matrices the browser built.
fn select_and_compare(tools: &Tools, index: &str, runs: &[&str]) -> Selection {
    let config = serde_json::json!({
        "chromium": tools.chromium,
        "pages": [],
        "checks": [],
        "select": {"index": index, "runs": runs},
    });
    #[derive(serde::Deserialize)]
    struct Report {
        selection: Selection,
    }
    run_check_mjs::<Report>(&config).selection
}

/// The titles of a pre-rendered comparison page's prefill and decode charts.
fn prerendered_charts(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let sel =
        scraper::Selector::parse("#prefill svg.chart.wide title, #decode svg.chart.wide title")
            .unwrap();
    doc.select(&sel).map(|t| t.text().collect()).collect()
}

/// The rows of the numbers under a pre-rendered comparison page's prefill
/// and decode charts, cells joined by "|".
fn prerendered_numbers(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    doc.select(&sel(
        "#prefill details.numbers tbody tr, #decode details.numbers tbody tr",
    ))
    .map(|tr| {
        tr.select(&sel("td"))
            .map(|td| td.text().collect::<String>())
            .collect::<Vec<_>>()
            .join("|")
    })
    .collect()
}

/// The ratio matrices of a pre-rendered comparison page (both views where
/// it has a per-GPU one), read as the browser test reads the built one.
fn prerendered_matrices(html: &str) -> Vec<Matrix> {
    let doc = scraper::Html::parse_document(html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    doc.select(&sel("#ratios section"))
        .map(|s| Matrix {
            heading: s.select(&sel("h3")).next().unwrap().text().collect(),
            cells: s
                .select(&sel("td.r"))
                .map(|td| {
                    let text = |q: &str| {
                        td.select(&sel(q))
                            .next()
                            .map_or(String::new(), |e| e.text().collect())
                    };
                    format!("{}|{}", text(".ratio-value"), text(".why"))
                })
                .collect(),
        })
        .collect()
}

/// Select GLM then Step on the index, served from a sub-path and opened
/// from file://: the comparison built in the browser has the pre-rendered
/// GLM vs Step page's ratios, cell by cell, the same prefill and decode
/// charts with the same numbers, and the selection in its URL. Then GLM on 4 GPUs against a run on
/// 2: the per-GPU ratios too.
fn selected_runs_compare_in_the_browser_as_on_their_prerendered_page(tools: &Tools) {
    const GLM: &str = "glm-5.3-flash-h200x4-vllm";
    const STEP: &str = "step-3.5-flash-h200x4-vllm-0.29.0";
    let (_tmp, site) = build_bundled_site();
    let html =
        std::fs::read_to_string(site.join(format!("compare/{GLM}--{STEP}/index.html"))).unwrap();
    let expected = prerendered_matrices(&html);
    assert_eq!(expected.len(), 1);
    assert!(expected[0].cells.len() >= 30, "{}", expected[0].cells.len());
    let charts = prerendered_charts(&html);
    assert_eq!(
        charts.len(),
        1 + 6,
        "prefill and six decode contexts (256K with 251K): {charts:?}"
    );
    let numbers = prerendered_numbers(&html);
    assert!(
        numbers.contains(&"8K|18.9K (433 ms)|34.2K (239 ms)".to_string()),
        "{numbers:?}"
    );
    let server = SitegenServe::start(&data_dir(), "/some/prefix/");
    for index in [
        format!("{}index.html", server.base_url),
        format!("file://{}", site.join("index.html").display()),
    ] {
        let got = select_and_compare(tools, &index, &[GLM, STEP]);
        assert!(got.problems.is_empty(), "{index}: {:?}", got.problems);
        assert!(
            got.url
                .ends_with(&format!("compare/index.html?runs={GLM},{STEP}")),
            "the selection is in the URL: {}",
            got.url
        );
        assert_eq!(got.matrices, expected, "{index}");
        assert_eq!(got.charts, charts, "{index}");
        assert_eq!(got.numbers, numbers, "{index}");
    }

    const PAUSED: &str = "imported-paused";
    let (tmp, site) = common::build_site_with_imported_runs();
    let html =
        std::fs::read_to_string(site.join(format!("compare/{GLM}--{PAUSED}/index.html"))).unwrap();
    let expected = prerendered_matrices(&html);
    let headings: Vec<&str> = expected.iter().map(|m| m.heading.as_str()).collect();
    assert_eq!(
        headings,
        [
            "Paused-Model / GLM-5.3-Flash",
            "Paused-Model / GLM-5.3-Flash, per GPU"
        ]
    );
    let server = SitegenServe::start(&tmp.path().join("data"), "/");
    let got = select_and_compare(
        tools,
        &format!("{}index.html", server.base_url),
        &[GLM, PAUSED],
    );
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    assert_eq!(got.matrices, expected);
    assert_eq!(got.charts, prerendered_charts(&html));
    assert_eq!(got.numbers, prerendered_numbers(&html));
}

const GOOD_HEAD: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>t</title></head>";

fn each_check_catches_a_deliberately_broken_page(tools: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = tmp.path().join(name);
        std::fs::write(
            &path,
            format!("{GOOD_HEAD}<body><main>{body}</main></body></html>"),
        )
        .unwrap();
        path
    };
    let unclosed = write("unclosed.html", "<p>text <span>never closed</p></div>");
    let external = write(
        "external.html",
        "<p>x</p><script src=\"https://cdn.example.com/lib.js\"></script>",
    );
    let contrast = write(
        "contrast.html",
        "<p style=\"color:#777;background:#888\">hard to read</p>",
    );
    let wide = write(
        "wide.html",
        "<div style=\"width:1200px\">too wide for a phone</div>",
    );
    let unsorted = write(
        "unsorted.html",
        "<table class=\"sortable\"><thead><tr><th>A</th></tr></thead><tbody><tr><td data-sort=\"2\">2</td></tr></tbody></table>",
    );
    let broken_js = write("broken-js.html", "<script>undefinedFunction();</script>");
    let unfiltered = write(
        "unfiltered.html",
        "<form data-filters=\"t\" hidden><select data-filter=\"gpu\"><option value=\"\">All</option><option>A</option></select></form><table id=\"t\"><tbody><tr data-gpu=\"A\"><td>a</td></tr></tbody></table>",
    );

    // A toggle that shows the per-GPU view without hiding the totals, and a
    // per-GPU view that only axe run on the shown view can find unreadable.
    let half_toggle = write(
        "half-toggle.html",
        "<button type=\"button\" data-per-gpu-toggle=\"\">per GPU</button><div data-gpu-view=\"total\">1,000.0</div><div data-gpu-view=\"per-gpu\" hidden><p style=\"color:#777;background:#888\">250.0</p></div><script>document.querySelector(\"button\").onclick = () => { document.querySelector(\"[data-gpu-view=per-gpu]\").hidden = false; };</script>",
    );

    // A comparison whose answer is below the first screen, a wide chart
    // shrunk onto a phone, a ratio row without a ratio, a queued
    // cell brighter than the Valid one, and a reason only in a tooltip.
    let unreadable = write(
        "unreadable.html",
        "<section id=\"findings\" style=\"margin-top:1200px\"><strong class=\"finding-figure\">0.81×</strong></section><svg class=\"chart\" viewBox=\"0 0 900 300\" style=\"width:100%\"><text x=\"10\" y=\"20\" font-size=\"12\">8K</text></svg><table class=\"matrix ratio\"><tbody><tr><th>8K</th><td class=\"r none\">—</td></tr></tbody></table><table class=\"matrix\"><tbody><tr><td class=\"m valid\" style=\"background:#440154;color:#fff\">1.0</td><td class=\"m requests-queued\" style=\"background:#fde725\">9.0</td><td class=\"m error\" title=\"8K context, 2 at once: Error (HTTP 500: engine core died)\" data-reason=\"HTTP 500: engine core died\">Error</td></tr></tbody></table>",
    );

    // A run page whose key figures sit below the first screen of a phone.
    let buried = write(
        "buried-figure.html",
        "<div style=\"height:1200px\">cards</div><dl class=\"key-figures\"><div><dt>Peak</dt><dd><strong>2,270.4 total tok/s</strong> at 8K × 32</dd></div></dl>",
    );

    let nu = nu_check(tools, std::slice::from_ref(&unclosed));
    assert!(!nu.is_empty(), "the Nu checker missed an unclosed tag");

    let url = |p: &PathBuf| PageUrl {
        url: format!("file://{}", p.display()),
        name: "bad".into(),
    };
    let pages = [
        &external,
        &contrast,
        &wide,
        &unsorted,
        &broken_js,
        &unfiltered,
        &half_toggle,
        &unreadable,
        &buried,
    ]
    .map(url);
    let reports = run_browser_checks(
        tools,
        &pages,
        &[
            "load", "axe", "phone", "sort", "filter", "toggle", "reading",
        ],
        None,
    );
    let problems = |i: usize| reports[i].problems.join("\n");
    assert!(
        problems(8).contains(
            "phone: the first tok/s figure (2,270.4 total tok/s) is off the first screen"
        ),
        "{}",
        problems(8)
    );
    assert!(
        problems(0)
            .contains("load: request leaves the page's origin: https://cdn.example.com/lib.js"),
        "{}",
        problems(0)
    );
    assert!(
        problems(1).contains("axe: light: serious color-contrast"),
        "{}",
        problems(1)
    );
    assert!(
        problems(1).contains("axe: dark: serious color-contrast"),
        "{}",
        problems(1)
    );
    assert!(
        problems(2).contains("phone: the page scrolls sideways"),
        "{}",
        problems(2)
    );
    assert!(
        problems(3).contains("sort: table 0 has 1 headers but 0 sort buttons"),
        "{}",
        problems(3)
    );
    assert!(
        problems(4).contains("load: uncaught exception"),
        "{}",
        problems(4)
    );
    assert!(
        problems(5).contains("filter: the filter form is hidden"),
        "{}",
        problems(5)
    );
    for expected in [
        "toggle: views before total:shown per-gpu:hidden, after total:shown per-gpu:shown",
        "per GPU: axe: light: serious color-contrast",
        "toggle: the total views did not come back",
    ] {
        assert!(problems(6).contains(expected), "{}", problems(6));
    }
    for expected in [
        "reading: 1 chart labels under 11 px at 390 px",
        "reading: no ratio figure on the first 1440×900 screen",
        "reading: ratio-matrix row 8K has no ratio",
        "reading: a Requests-queued cell",
        "reading: the reason \"HTTP 500: engine core died\" is only in a tooltip",
    ] {
        assert!(problems(7).contains(expected), "{}", problems(7));
    }
    // Hidden, the unreadable view is not the page's problem; shown, it is.
    assert!(
        !reports[6].problems.iter().any(|p| p.starts_with("axe:")),
        "{}",
        problems(6)
    );
    // The checks only report what is wrong: the wide page has nothing else.
    assert!(!problems(2).contains("load:"), "{}", problems(2));
}
