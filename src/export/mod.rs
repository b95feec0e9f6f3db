//! Downloads published next to the pages, and the formats `sitegen export`
//! writes: one file per format.

pub mod capacity;
pub mod csv;
pub mod json;
pub mod llm_d_report;
pub mod paced;
pub mod sessions;
