//! The pages of the static site and every word on them: one module per page
//! family, its words beside it, charts and colours. Each page is a value
//! rendered to a string; crate::app::site puts them, with export's
//! downloads, into the site. Rendering itself writes nothing.

pub mod browser;
pub mod capacity;
pub mod change_words;
pub mod charts;
pub mod colour;
pub(crate) mod compare_page;
#[cfg(test)]
mod compare_truth;
pub mod compare_words;
pub(crate) mod index_page;
pub mod markdown;
pub mod paced;
pub mod run_page;
pub(crate) mod series_page;
pub mod sessions;
pub mod status_table;

use anyhow::Context;
use askama::Template;

use crate::compare::plan::Comparison;
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

/// The stable URL of a run page, relative to the site root.
pub(crate) fn run_path(run: &Run) -> String {
    format!("runs/{}/", run.id)
}

/// A link to a run page that also works from `file://`, where a folder link
/// would open a directory listing instead of the page.
pub(crate) fn run_href(run: &Run) -> String {
    format!("{}index.html", run_path(run))
}

/// The way back to the site root from a page in the site folder `dir`
/// ('/'-separated, as [`run_path`] gives it): "runs/glm/" gives "../../".
pub(crate) fn to_root(dir: &str) -> &'static str {
    const UP: &str = "../../../../../../";
    let depth = dir.split('/').filter(|s| !s.is_empty()).count();
    &UP[..3 * depth.min(UP.len() / 3)]
}

/// The stable URL of a comparison page, relative to the site root.
pub(crate) fn compare_path(c: &Comparison) -> String {
    format!("compare/{}/", c.id)
}

/// A table cell's text with the value it sorts by (empty when absent).
#[derive(Clone)]
pub(crate) struct SortedText {
    pub sort: String,
    pub text: String,
}

impl SortedText {
    /// Words, sorted by themselves.
    pub(crate) fn words(text: &str) -> Self {
        SortedText {
            sort: String::new(),
            text: text.to_string(),
        }
    }

    /// No figure: a dash, sorted last.
    pub(crate) fn none() -> Self {
        SortedText {
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

/// The page that builds a comparison in the browser: `compare/index.html`.
pub(crate) fn pick_page() -> anyhow::Result<String> {
    PickPage {
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
    .context("rendering compare/index.html")
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

#[cfg(test)]
mod root_tests {
    #[test]
    fn a_page_finds_the_root_one_step_per_folder() {
        assert_eq!(super::to_root(""), "");
        assert_eq!(super::to_root("runs/glm/"), "../../");
        assert_eq!(super::to_root("series/glm-h200/runs-2/"), "../../../");
    }
}
