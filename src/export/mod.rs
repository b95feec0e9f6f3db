//! Downloads published next to the pages: one file per format.

pub mod capacity;
pub mod csv;
pub mod json;
