//! Downloads published next to the pages, and the formats `sitegen export`
//! writes: one file per format.

pub mod capacity;
pub mod csv;
pub mod json;
pub mod llmd_report;
pub mod paced;
pub mod sessions;
