//! sitegen: measures LLM inference servers and publishes the results as a static site.
//!
//! Data flows one way, each folder a domain (docs/architecture.md):
//!
//! - [`model`]: what a measurement is (pure types), the measurement table,
//!   how every number is written and read back, what valid data is;
//! - [`runner`] measures a server, [`ingest`] imports foreign formats;
//! - [`store`] reads, validates and writes `data/`, all-or-nothing;
//! - [`judge`] judges change along a setup's series of runs;
//! - [`compare`] decides which runs are compared and computes their figures;
//! - [`render`] writes pages and charts, [`export`] the downloads;
//! - [`app`] runs the commands over them (build, serve, check, init), with
//!   the one writer into `site/`;
//! - [`cli`] parses arguments; [`stats`] holds the statistics they share.

pub mod app;
pub mod cli;
pub mod compare;
pub mod export;
pub mod ingest;
pub mod judge;
pub mod model;
pub mod render;
pub mod runner;
pub mod stats;
pub mod store;
pub mod threads;
