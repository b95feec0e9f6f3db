//! sitegen: measures LLM inference servers and publishes the results as a static site.
//!
//! Data flows one way: [`model`] (pure types) <- [`ingest`] (foreign formats)
//! -> [`store`] (reads, validates and atomically writes `data/`) -> [`render`]
//! (pages, charts) -> [`output`] (the one writer into `site/`).

pub mod cli;
pub mod compare;
pub mod export;
pub mod format;
pub mod ingest;
pub mod labels;
pub mod model;
pub mod output;
pub mod pipeline;
pub mod render;
pub mod runner;
pub mod schema;
pub mod serve;
pub mod store;
