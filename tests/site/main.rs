//! The site built from data/, as one test binary: run, comparison, series
//! and telemetry pages read with an HTML parser, the built files byte for
//! byte (digest), links and page weight (checks), a site of many runs, cost,
//! `sitegen check`, and the judgement of change on simulated series.

#[path = "../common/mod.rs"]
mod common;

mod capacity_pages;
mod change_rule;
mod check;
mod checks;
mod compare_pages;
mod cost;
mod digest;
mod many_runs;
mod paced_pages;
mod reuse;
mod run_pages;
mod series_pages;
mod serve_rebuild;
mod sessions_pages;
mod telemetry_pages;
