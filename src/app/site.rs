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

/// What the site is made of: each part's files depend on its own inputs
/// only, so a part is rendered alone (on any thread, and again by
/// `sitegen serve` when its inputs change).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Part {
    /// The CSS, scripts and the capacity schema.
    Static,
    /// A run's page and downloads (index into the runs).
    Run(usize),
    /// A comparison's page and download (index into the comparisons).
    Comparison(usize),
    /// A series' pages (index into the series).
    Series(usize),
    /// A series' download: a row per cell of every run (tens of MB for
    /// years of nights), made beside its pages.
    SeriesCsv(usize),
    /// The index, the all-runs pages and the comparison picker.
    Lists,
}

/// What a build renders from: the loaded data.
pub(crate) struct Inputs<'a> {
    pub runs: &'a [Run],
    pub series: &'a [crate::judge::series::Series],
    pub comparisons: &'a [Comparison],
    pub prices: &'a crate::model::PricesFile,
    pub slo: &'a crate::model::slo::SloFile,
    /// Every run's row of the lists, made beforehand (`sitegen serve` keeps
    /// those of unchanged runs); none: made with the lists.
    pub rows: Option<&'a [render::index_page::Row]>,
}

/// A rendered file: its path ('/'-separated) and bytes.
pub(crate) type File = (String, Vec<u8>);

/// Parts made by the threads of a build and not yet handed over, at most:
/// enough to keep every core busy, few enough that memory stays flat.
pub(crate) const PARTS_AT_ONCE: usize = 16;

impl Inputs<'_> {
    /// Every part of the site, in the order a build makes them.
    /// The parts that grow with the number of runs (the lists, a series of
    /// every run) come first: last, they were a batch of their own at the
    /// end, one core idle while the other made the largest page.
    pub(crate) fn parts(&self) -> Vec<Part> {
        let mut parts = vec![Part::Lists];
        parts.extend((0..self.series.len()).map(Part::Series));
        parts.extend((0..self.series.len()).map(Part::SeriesCsv));
        parts.extend((0..self.comparisons.len()).map(Part::Comparison));
        parts.push(Part::Static);
        parts.extend((0..self.runs.len()).map(Part::Run));
        parts
    }

    /// The series line of each run's page: (series, position), found once.
    pub(crate) fn places(&self) -> Vec<Option<(usize, usize)>> {
        let mut place = vec![None; self.runs.len()];
        for (k, s) in self.series.iter().enumerate() {
            for (at, &i) in s.runs.iter().enumerate() {
                place[i] = Some((k, at));
            }
        }
        place
    }

    /// The files of one part.
    pub(crate) fn render(
        &self,
        part: &Part,
        places: &[Option<(usize, usize)>],
    ) -> anyhow::Result<Vec<File>> {
        match *part {
            Part::Static => Ok(self.static_files()),
            Part::Run(i) => self.run_files(i, places[i]),
            Part::Comparison(k) => self.comparison_files(&self.comparisons[k]),
            Part::Series(k) => self.series_files(&self.series[k]),
            Part::SeriesCsv(k) => Ok(self.series_csv(&self.series[k])),
            Part::Lists => self.list_files(),
        }
    }

    fn static_files(&self) -> Vec<File> {
        let mut files: Vec<File> = render::STATIC_FILES
            .iter()
            .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
            .collect();
        // The capacity download's schema, beside the runs that offer it.
        if !self.runs.is_empty() {
            let capacity_schema = crate::store::schema::data_schemas()
                .into_iter()
                .find(|(name, _)| *name == CAPACITY_SCHEMA)
                .expect("the capacity schema is listed");
            files.push((
                format!("runs/{CAPACITY_SCHEMA}"),
                capacity_schema.1.into_bytes(),
            ));
        }
        files
    }

    /// The series line of run `i`'s page, placed at `place` (series,
    /// position) or in none.
    pub(crate) fn series_line(
        &self,
        i: usize,
        place: Option<(usize, usize)>,
    ) -> Option<render::run_page::SeriesLine> {
        let run = &self.runs[i];
        place.map(|(k, at)| {
            let s = &self.series[k];
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
                against_previous: Some(render::change_words::judgement_line(j)),
                regression: j.verdict == crate::judge::change::Verdict::Regression,
            }
        })
    }

    /// The comparisons run `i` is in.
    pub(crate) fn compared_in(&self, i: usize) -> Vec<&Comparison> {
        self.comparisons
            .iter()
            .filter(|c| c.runs.contains(&i))
            .collect()
    }

    fn run_files(&self, i: usize, place: Option<(usize, usize)>) -> anyhow::Result<Vec<File>> {
        let (run, slo, prices) = (&self.runs[i], self.slo, self.prices);
        let mut page = render::run_page::RunPage::new(run, &self.compared_in(i))?;
        page.series = self.series_line(i, place);
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
        let mut files = vec![
            (format!("{dir}index.html"), html.into_bytes()),
            (
                format!("{dir}data.json"),
                export::json::run_json(run).into_bytes(),
            ),
            (
                format!("{dir}data.js"),
                export::json::run_js(run).into_bytes(),
            ),
            (
                format!("{dir}measurements.csv"),
                export::csv::measurements_csv(run, price, electricity).into_bytes(),
            ),
            (
                format!("{dir}capacity.csv"),
                export::capacity::capacity_csv(run, slo).into_bytes(),
            ),
            (
                format!("{dir}capacity.json"),
                export::capacity::capacity_json(run, slo).into_bytes(),
            ),
        ];
        if let Some(csv) = export::paced::paced_csv(run) {
            files.push((format!("{dir}paced.csv"), csv.into_bytes()));
        }
        if let Some(csv) = export::sessions::sessions_csv(run) {
            files.push((format!("{dir}sessions.csv"), csv.into_bytes()));
        }
        Ok(files)
    }

    fn comparison_files(&self, c: &Comparison) -> anyhow::Result<Vec<File>> {
        let (runs, slo, prices) = (self.runs, self.slo, self.prices);
        let html = render::compare_page::ComparePage::new(runs, c)?
            .with_capacity(runs, c, slo)
            .with_cost(runs, c, prices)
            .render()
            .with_context(|| format!("rendering the comparison {}", c.id))?;
        let dir = render::compare_path(c);
        Ok(vec![
            (format!("{dir}index.html"), html.into_bytes()),
            (
                format!("{dir}comparison.csv"),
                export::csv::comparison_csv(runs, c).into_bytes(),
            ),
        ])
    }

    fn series_files(&self, s: &crate::judge::series::Series) -> anyhow::Result<Vec<File>> {
        let runs = self.runs;
        let html = render::series_page::SeriesPage::new(runs, s)?
            .render()
            .with_context(|| format!("rendering the series {}", s.slug))?;
        let mut files = vec![(
            format!("{}index.html", render::series_page::series_path(s)),
            html.into_bytes(),
        )];
        for (path, page) in render::series_page::history_pages(runs, s) {
            let html = page
                .render()
                .with_context(|| format!("rendering the runs of the series {}", s.slug))?;
            files.push((path, html.into_bytes()));
        }
        Ok(files)
    }

    fn series_csv(&self, s: &crate::judge::series::Series) -> Vec<File> {
        let (bytes, _) = self.series_csv_after(s, &[]);
        vec![(Self::series_csv_path(s), bytes)]
    }

    /// Where a series' CSV is, beside its pages.
    pub(crate) fn series_csv_path(s: &crate::judge::series::Series) -> String {
        format!("{}series.csv", render::series_page::series_path(s))
    }

    /// A series' CSV after the rows of its first runs, which end at
    /// `kept_ends` (export::csv::series_csv_after), and where each run's
    /// rows end (for the next time).
    pub(crate) fn series_csv_after(
        &self,
        s: &crate::judge::series::Series,
        kept_ends: &[usize],
    ) -> (Vec<u8>, Vec<usize>) {
        let members: Vec<&Run> = s.runs.iter().map(|&i| &self.runs[i]).collect();
        export::csv::series_csv_after(&members, s, kept_ends)
    }

    fn list_files(&self) -> anyhow::Result<Vec<File>> {
        let (runs, comparisons) = (self.runs, self.comparisons);
        let mut files = vec![
            (
                "compare/index.html".to_string(),
                render::pick_page()?.into_bytes(),
            ),
            (
                "compare/definitions.js".to_string(),
                render::browser::definitions_js(runs, comparisons).into_bytes(),
            ),
        ];
        let rows = match self.rows {
            Some(rows) => rows.to_vec(),
            None => render::index_page::run_rows(runs, self.slo, |_, _| None),
        };
        let pages =
            render::index_page::IndexPages::new(runs, rows, comparisons, self.series, self.slo)?;
        let index = pages.index.render().context("rendering index.html")?;
        files.push(("index.html".into(), index.into_bytes()));
        if let Some(js) = pages.all_runs {
            files.push((render::index_page::ALL_RUNS_JS.into(), js.into_bytes()));
        }
        for (path, page) in pages.lists {
            let html = page.render().with_context(|| format!("rendering {path}"))?;
            files.push((path, html.into_bytes()));
        }
        Ok(files)
    }
}

/// Makes `parts` on every core with `make` (given each part's position) and
/// hands each to `take` as soon as it is made, in any order. Every part is
/// made even after one fails, so that the error reported is that of the
/// first failing part in `parts`, whatever the timing; nothing is handed
/// over after a failure.
pub(crate) fn stream_parts<R: Send>(
    parts: &[Part],
    make: impl Fn(usize, &Part) -> anyhow::Result<R> + Sync,
    mut take: impl FnMut(R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let numbered: Vec<(usize, &Part)> = parts.iter().enumerate().collect();
    let mut first_error: Option<(usize, anyhow::Error)> = None;
    crate::threads::map_streamed(
        &numbered,
        PARTS_AT_ONCE,
        |&(i, p)| make(i, p),
        |i, made| {
            match made {
                Ok(made) if first_error.is_none() => take(made)?,
                Ok(_) => {}
                Err(e) => {
                    if first_error.as_ref().is_none_or(|(at, _)| i < *at) {
                        first_error = Some((i, e));
                    }
                }
            }
            anyhow::Ok(())
        },
    )?;
    match first_error {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}
