//! Downloads published next to the pages: one file per format.

pub mod csv;
pub mod json;
