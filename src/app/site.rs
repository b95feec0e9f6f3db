//! The site: every page render/ makes and the downloads export/ makes
//! beside them, handed one file at a time to a [`SiteSink`] as soon as it is
//! made: [`crate::app::output`] writes it to disk (so a build never holds
//! the whole site), [`Site`] keeps it in memory (for `sitegen serve` and
//! tests).

use std::collections::BTreeMap;

use anyhow::Context;
use askama::Template;

use crate::compare::plan::Comparison;
use crate::model::Run;
use crate::{export, render};

/// The site as relative paths ('/'-separated) and their bytes, in sorted order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Site {
    pub files: BTreeMap<String, Vec<u8>>,
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

/// The schema of every run's `capacity.json`, published at `runs/`.
pub(crate) const CAPACITY_SCHEMA: &str = "capacity.schema.json";

/// Renders every page of the site and the downloads beside them into `sink`,
/// each file as soon as it is made; returns how many files it made.
pub(crate) fn render_site(
    runs: &[Run],
    all_series: &[crate::judge::series::Series],
    comparisons: &[Comparison],
    prices: &crate::model::PricesFile,
    slo: &crate::model::slo::SloFile,
    sink: &mut dyn SiteSink,
) -> anyhow::Result<usize> {
    let mut files = 0;
    let mut add = |path: String, bytes: Vec<u8>| -> anyhow::Result<()> {
        files += 1;
        sink.put(path, bytes)
    };
    for (path, text) in render::STATIC_FILES {
        add(path.to_string(), text.as_bytes().to_vec())?;
    }
    // The capacity download's schema, beside the runs that offer it.
    let capacity_schema = crate::store::schema::data_schemas()
        .into_iter()
        .find(|(name, _)| *name == CAPACITY_SCHEMA)
        .expect("the capacity schema is listed");
    if !runs.is_empty() {
        add(
            format!("runs/{CAPACITY_SCHEMA}"),
            capacity_schema.1.into_bytes(),
        )?;
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
        let mut page = render::run_page::RunPage::new(run, &compared_in)?;
        page.series = place[i].map(|(s, at)| {
            // The newest run's verdict is the series' (also against the runs
            // before a shift); any other run's, its own against its window.
            let j = if at + 1 == s.runs.len() {
                &s.newest
            } else {
                &s.judgements[at]
            };
            render::run_page::SeriesLine {
                href: format!(
                    "{}{}index.html",
                    render::to_root(&render::run_path(run)),
                    render::series_page::series_path(s)
                ),
                title: s.title.clone(),
                runs: s.runs.len(),
                against_previous: Some(render::change_words::judgement_line(j)),
                regression: j.verdict == crate::judge::change::Verdict::Regression,
            }
        });
        page = page
            .with_capacity(run, slo)
            .with_paced(run, slo)?
            .with_sessions(run, slo)?;
        let price = crate::compare::cost::price_for(prices, run);
        if let Some(p) = price {
            page = page.with_cost(run, p);
        }
        // Only a run that recorded energy gets an electricity column.
        let electricity = prices
            .electricity
            .as_ref()
            .filter(|_| crate::compare::ratio::has(crate::model::figure::Figure::Energy, run));
        if let Some(e) = electricity {
            page = page.with_electricity(run, e);
        }
        let html = page
            .render()
            .with_context(|| format!("rendering the page of run {}", run.id))?;
        let dir = render::run_path(run);
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
        add(
            format!("{dir}capacity.csv"),
            export::capacity::capacity_csv(run, slo).into_bytes(),
        )?;
        add(
            format!("{dir}capacity.json"),
            export::capacity::capacity_json(run, slo).into_bytes(),
        )?;
        if let Some(csv) = export::paced::paced_csv(run) {
            add(format!("{dir}paced.csv"), csv.into_bytes())?;
        }
        if let Some(csv) = export::sessions::sessions_csv(run) {
            add(format!("{dir}sessions.csv"), csv.into_bytes())?;
        }
    }
    for c in comparisons {
        let html = render::compare_page::ComparePage::new(runs, c)?
            .with_capacity(runs, c, slo)
            .with_cost(runs, c, prices)
            .render()
            .with_context(|| format!("rendering the comparison {}", c.id))?;
        let dir = render::compare_path(c);
        add(format!("{dir}index.html"), html.into_bytes())?;
        add(
            format!("{dir}comparison.csv"),
            export::csv::comparison_csv(runs, c).into_bytes(),
        )?;
    }
    for s in all_series {
        let html = render::series_page::SeriesPage::new(runs, s)?
            .render()
            .with_context(|| format!("rendering the series {}", s.slug))?;
        add(
            format!("{}index.html", render::series_page::series_path(s)),
            html.into_bytes(),
        )?;
        for (path, page) in render::series_page::history_pages(runs, s) {
            let html = page
                .render()
                .with_context(|| format!("rendering the runs of the series {}", s.slug))?;
            add(path, html.into_bytes())?;
        }
        let members: Vec<&Run> = s.runs.iter().map(|&i| &runs[i]).collect();
        add(
            format!("{}series.csv", render::series_page::series_path(s)),
            export::csv::series_csv(&members, s).into_bytes(),
        )?;
    }
    add(
        "compare/index.html".into(),
        render::pick_page()?.into_bytes(),
    )?;
    add(
        "compare/definitions.js".into(),
        render::browser::definitions_js(runs, comparisons).into_bytes(),
    )?;
    let pages = render::index_page::IndexPages::new(runs, comparisons, all_series, slo)?;
    let index = pages.index.render().context("rendering index.html")?;
    add("index.html".into(), index.into_bytes())?;
    if let Some(js) = pages.all_runs {
        add(render::index_page::ALL_RUNS_JS.into(), js.into_bytes())?;
    }
    for (path, page) in pages.lists {
        let html = page.render().with_context(|| format!("rendering {path}"))?;
        add(path, html.into_bytes())?;
    }
    Ok(files)
}
