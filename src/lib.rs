//! sitegen: measures LLM inference servers and publishes the results as a static site.
//!
//! Data flows one way: [`model`] (pure types) <- [`runner`] (measures a
//! server) and [`ingest`] (foreign formats) -> [`store`] (reads, validates and
//! writes `data/`) -> [`compare`] (which comparisons, their figures) ->
//! [`render`] (pages, charts) and [`export`] (downloads) -> [`output`] (the
//! one writer into `site/`). [`mod@format`] and [`labels`] turn numbers and runs
//! into the strings pages show, [`table`] defines the measurement table once
//! for pages, CSV and importers; [`validate`] says what valid data is and
//! [`launch`] reads launch commands; [`atomic`] makes every write all-or-nothing;
//! [`comparison_words`] holds every word of a comparison for the pages and
//! the browser alike; [`pipeline`] runs a build, [`serve`] a preview; [`init`]
//! sets up a new results repository; [`cli`] parses arguments.

pub mod atomic;
pub mod cards;
pub mod change;
pub mod change_points;
pub mod change_words;
pub mod check;
pub mod cli;
pub mod compare;
pub mod comparison_words;
pub mod cost;
pub mod export;
pub mod format;
pub mod ingest;
pub mod init;
pub mod labels;
pub mod launch;
pub mod model;
pub mod output;
pub mod pipeline;
pub(crate) mod redact;
pub mod render;
pub mod runner;
pub mod schema;
pub mod series;
pub mod serve;
pub mod store;
pub mod table;
pub mod validate;
