//! What each part of the site is made from. A part whose sources and runs
//! did not change renders the same files: `sitegen serve` renders only the
//! parts a change touched (src/app/rebuild.rs), and `sitegen build` takes
//! the others from the previous build (src/app/reuse.rs). One definition
//! for both, so that they cannot disagree about what a page depends on.

use std::sync::Arc;

use crate::app::site::{Inputs, Part};
use crate::judge::series::Series;
use crate::render::run_page::SeriesLine;

/// A part of the site named by what it shows, which outlives the positions
/// of runs, comparisons and series in one build.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Static,
    Run(String),
    Comparison(String),
    Series(String),
    SeriesCsv(String),
    Lists,
}

/// What a part is made from besides the runs it shows and what every part
/// shares (the latency budgets, prices, comparisons file, noted changes:
/// a change there renders every part again).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Sources {
    /// Whether there are runs (the capacity schema is published with them).
    Static(bool),
    /// The series line and the comparisons (path, title) on the run's page.
    Run(Option<SeriesLine>, Vec<(String, String)>),
    /// Title, note and runs of a comparison.
    Comparison(String, Option<String>, Vec<String>),
    /// The series (without its runs) and its runs named by id.
    Series(Arc<Series>, Vec<String>),
    /// Rendered every time: the lists name every run.
    Lists,
}

/// A part with what it is made from.
pub(crate) struct Sourced {
    pub key: Key,
    pub part: Part,
    pub sources: Sources,
    /// The ids of the runs it shows.
    pub shows: Vec<String>,
}

/// Every part of the site, in the order a build makes them, with its key,
/// sources and the runs it shows (a series line per run of thousands: on
/// every core).
pub(crate) fn of_every_part(inputs: &Inputs, places: &[Option<(usize, usize)>]) -> Vec<Sourced> {
    let runs = inputs.runs;
    let ids = |members: &[usize]| -> Vec<String> {
        members.iter().map(|&i| runs[i].id.clone()).collect()
    };
    // Each series' shape (its runs left out) once, for its two parts.
    let shapes: Vec<Arc<Series>> = crate::threads::map_in_order(inputs.series, |s| {
        let mut shape = s.clone();
        shape.runs.clear();
        Arc::new(shape)
    });
    crate::threads::map_in_order(&inputs.parts(), |part| {
        let (key, sources, shows) = match part {
            Part::Static => (Key::Static, Sources::Static(!runs.is_empty()), Vec::new()),
            Part::Run(i) => {
                let compared: Vec<(String, String)> = inputs
                    .compared_in(*i)
                    .iter()
                    .map(|c| (c.id.clone(), c.title.clone()))
                    .collect();
                (
                    Key::Run(runs[*i].id.clone()),
                    Sources::Run(inputs.series_line(*i, places[*i]), compared),
                    vec![runs[*i].id.clone()],
                )
            }
            Part::Comparison(k) => {
                let c = &inputs.comparisons[*k];
                (
                    Key::Comparison(c.id.clone()),
                    Sources::Comparison(c.title.clone(), c.note_markdown.clone(), ids(&c.runs)),
                    ids(&c.runs),
                )
            }
            Part::Series(k) | Part::SeriesCsv(k) => {
                let s = &inputs.series[*k];
                let key = if matches!(part, Part::Series(_)) {
                    Key::Series(s.slug.clone())
                } else {
                    Key::SeriesCsv(s.slug.clone())
                };
                (
                    key,
                    Sources::Series(shapes[*k].clone(), ids(&s.runs)),
                    ids(&s.runs),
                )
            }
            Part::Lists => (Key::Lists, Sources::Lists, Vec::new()),
        };
        Sourced {
            key,
            part: part.clone(),
            sources,
            shows,
        }
    })
}
