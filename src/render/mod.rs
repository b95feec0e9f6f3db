//! Turns runs into the files of the static site, handing each file to a
//! [`SiteSink`] as soon as it is made: [`crate::app::output`] writes it to disk
//! (so a build never holds the whole site), [`Site`] keeps it in memory (for
//! `sitegen serve` and tests). Rendering itself writes nothing.

pub mod browser;
pub mod change_words;
pub mod charts;
pub mod colour;
pub(crate) mod compare_page;
#[cfg(test)]
mod compare_truth;
pub mod compare_words;
pub(crate) mod index_page;
pub mod markdown;
pub mod run_page;
pub(crate) mod series_page;

use std::collections::BTreeMap;

use anyhow::Context;
use askama::Template;

use crate::compare::plan::Comparison;
use crate::export;
use crate::model::Run;

/// Named in each page's footer; a version, never a time, so builds repeat byte for byte.
pub(crate) const GENERATOR: &str = concat!("sitegen ", env!("CARGO_PKG_VERSION"));

/// Assets embedded in the binary, so `sitegen build` works from any folder.
pub(crate) const STATIC_FILES: [(&str, &str); 4] = [
    ("static/compare.js", include_str!("../../static/compare.js")),
    (
        "static/favicon.svg",
        include_str!("../../static/favicon.svg"),
    ),
    ("static/style.css", include_str!("../../static/style.css")),
    ("static/site.js", include_str!("../../static/site.js")),
];

/// The site as relative paths ('/'-separated) and their bytes, in sorted order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Site {
    pub files: BTreeMap<String, Vec<u8>>,
}

/// The stable URL of a run page, relative to the site root.
pub(crate) fn run_path(run: &Run) -> String {
    format!("runs/{}/", run.id)
}

/// A link to a run page that also works from `file://`, where a folder link
/// would open a directory listing instead of the page.
pub(crate) fn run_href(run: &Run) -> String {
    format!("{}index.html", run_path(run))
}

/// The stable URL of a comparison page, relative to the site root.
pub(crate) fn compare_path(c: &Comparison) -> String {
    format!("compare/{}/", c.id)
}

/// A figure of a table cell with the value it sorts by (empty when absent).
#[derive(Clone)]
pub(crate) struct Figure {
    pub sort: String,
    pub text: String,
}

impl Figure {
    /// Words, sorted by themselves.
    pub(crate) fn words(text: &str) -> Self {
        Figure {
            sort: String::new(),
            text: text.to_string(),
        }
    }

    /// No figure: a dash, sorted last.
    pub(crate) fn none() -> Self {
        Figure {
            sort: String::new(),
            text: crate::model::format::DASH.to_string(),
        }
    }
}

/// A link to one page of a list split into pages ("Runs 1–250"); the
/// current page has an empty href.
pub(crate) struct PageLink {
    pub href: String,
    pub text: String,
}

/// "Runs 1–250": the runs on page `page` (from 0) of a list of `total`
/// runs, `per_page` to a page.
pub(crate) fn page_range(page: usize, per_page: usize, total: usize) -> String {
    let first = page * per_page + 1;
    let last = ((page + 1) * per_page).min(total);
    format!(
        "Runs {}–{}",
        crate::model::format::count(first as u64),
        crate::model::format::count(last as u64)
    )
}

/// A link to every page of such a list, `href(page)` each; the `current`
/// page, if any, unlinked.
pub(crate) fn page_links(
    total: usize,
    per_page: usize,
    current: Option<usize>,
    href: impl Fn(usize) -> String,
) -> Vec<PageLink> {
    (0..total.div_ceil(per_page))
        .map(|page| PageLink {
            href: if current == Some(page) {
                String::new()
            } else {
                href(page)
            },
            text: page_range(page, per_page, total),
        })
        .collect()
}

/// Where rendered files go, one at a time.
pub(crate) trait SiteSink {
    /// Takes the file at `path` (relative, '/'-separated).
    fn put(&mut self, path: String, bytes: Vec<u8>) -> anyhow::Result<()>;
}

impl SiteSink for Site {
    fn put(&mut self, path: String, bytes: Vec<u8>) -> anyhow::Result<()> {
        self.files.insert(path, bytes);
        Ok(())
    }
}

/// Renders every page of the site and the downloads beside them into `sink`,
/// each file as soon as it is made; returns how many files it made.
pub(crate) fn render_site(
    runs: &[Run],
    all_series: &[crate::judge::series::Series],
    comparisons: &[Comparison],
    prices: &crate::model::PricesFile,
    sink: &mut dyn SiteSink,
) -> anyhow::Result<usize> {
    let mut files = 0;
    let mut add = |path: String, bytes: Vec<u8>| -> anyhow::Result<()> {
        files += 1;
        sink.put(path, bytes)
    };
    for (path, text) in STATIC_FILES {
        add(path.to_string(), text.as_bytes().to_vec())?;
    }
    // Each run's series and its place there, found once: (series, position).
    let mut place: Vec<Option<(&crate::judge::series::Series, usize)>> = vec![None; runs.len()];
    for s in all_series {
        for (at, &i) in s.runs.iter().enumerate() {
            place[i] = Some((s, at));
        }
    }
    for (i, run) in runs.iter().enumerate() {
        let compared_in: Vec<&Comparison> =
            comparisons.iter().filter(|c| c.runs.contains(&i)).collect();
        let mut page = run_page::RunPage::new(run, &compared_in)?;
        page.series = place[i].map(|(s, at)| {
            // The newest run's verdict is the series' (also against the runs
            // before a shift); any other run's, its own against its window.
            let j = if at + 1 == s.runs.len() {
                &s.newest
            } else {
                &s.judgements[at]
            };
            run_page::SeriesLine {
                href: format!("../../{}index.html", series_page::series_path(s)),
                title: s.title.clone(),
                runs: s.runs.len(),
                against_previous: Some(crate::render::change_words::judgement_line(j)),
                regression: j.verdict == crate::judge::change::Verdict::Regression,
            }
        });
        let price = crate::compare::cost::price_for(prices, run);
        if let Some(p) = price {
            page = page.with_cost(run, p);
        }
        // Only a run that recorded energy gets an electricity column.
        let electricity = prices
            .electricity
            .as_ref()
            .filter(|_| crate::compare::ratio::has_energy(run));
        if let Some(e) = electricity {
            page = page.with_electricity(run, e);
        }
        let html = page
            .render()
            .with_context(|| format!("rendering the page of run {}", run.id))?;
        let dir = run_path(run);
        add(format!("{dir}index.html"), html.into_bytes())?;
        add(
            format!("{dir}data.json"),
            export::json::run_json(run).into_bytes(),
        )?;
        add(
            format!("{dir}data.js"),
            export::json::run_js(run).into_bytes(),
        )?;
        add(
            format!("{dir}measurements.csv"),
            export::csv::measurements_csv(run, price, electricity).into_bytes(),
        )?;
    }
    for c in comparisons {
        let html = compare_page::ComparePage::new(runs, c)?
            .with_cost(runs, c, prices)
            .render()
            .with_context(|| format!("rendering the comparison {}", c.id))?;
        let dir = compare_path(c);
        add(format!("{dir}index.html"), html.into_bytes())?;
        add(
            format!("{dir}comparison.csv"),
            export::csv::comparison_csv(runs, c).into_bytes(),
        )?;
    }
    for s in all_series {
        let html = series_page::SeriesPage::new(runs, s)?
            .render()
            .with_context(|| format!("rendering the series {}", s.slug))?;
        add(
            format!("{}index.html", series_page::series_path(s)),
            html.into_bytes(),
        )?;
        for (path, page) in series_page::history_pages(runs, s) {
            let html = page
                .render()
                .with_context(|| format!("rendering the runs of the series {}", s.slug))?;
            add(path, html.into_bytes())?;
        }
        let members: Vec<&Run> = s.runs.iter().map(|&i| &runs[i]).collect();
        add(
            format!("{}series.csv", series_page::series_path(s)),
            export::csv::series_csv(&members, s).into_bytes(),
        )?;
    }
    let pick = PickPage {
        root: "../",
        page_title: "Compare runs".into(),
        generator: GENERATOR,
        choose: crate::render::compare_words::fill(
            crate::render::compare_words::PICK_CHOOSE,
            &[
                (
                    "min",
                    &crate::compare::plan::MIN_RUNS_PER_COMPARISON.to_string(),
                ),
                (
                    "max",
                    &crate::compare::plan::MAX_RUNS_PER_COMPARISON.to_string(),
                ),
            ],
        ),
    }
    .render()
    .context("rendering compare/index.html")?;
    add("compare/index.html".into(), pick.into_bytes())?;
    add(
        "compare/definitions.js".into(),
        browser::definitions_js(runs, comparisons).into_bytes(),
    )?;
    let pages = index_page::IndexPages::new(runs, comparisons, all_series)?;
    let index = pages.index.render().context("rendering index.html")?;
    add("index.html".into(), index.into_bytes())?;
    if let Some(js) = pages.all_runs {
        add(index_page::ALL_RUNS_JS.into(), js.into_bytes())?;
    }
    for (path, page) in pages.lists {
        let html = page.render().with_context(|| format!("rendering {path}"))?;
        add(path, html.into_bytes())?;
    }
    Ok(files)
}

/// `compare/index.html`: a comparison of the runs named in its URL
/// (`?runs=a,b`), built in the browser from their `data.js` by
/// static/compare.js. Pre-rendered comparison pages work without it.
#[derive(Template)]
#[template(path = "pick.html")]
struct PickPage {
    root: &'static str,
    page_title: String,
    generator: &'static str,
    choose: String,
}
