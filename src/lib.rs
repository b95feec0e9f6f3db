//! sitegen: measures LLM inference servers and publishes the results as a static site.
//!
//! Data flows one way: [`model`] (pure types) <- [`ingest`] (foreign formats)
//! -> [`store`] (reads, validates and atomically writes `data/`) -> [`render`]
//! (pages, charts) -> [`output`] (the one writer into `site/`).

pub mod format;
pub mod model;
pub mod store;
pub mod ingest;
pub mod labels;
pub mod cli;
pub mod output;
pub mod pipeline;
pub mod render;
