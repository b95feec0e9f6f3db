//! JSON Schemas of the data files, generated from the Rust types so the
//! documented format cannot drift from what `store` reads.

use crate::model::{Cell, RunMeta};
use crate::store::to_json;

/// (file name, schema text) of `run.json` and of a cell file.
pub fn data_schemas() -> [(&'static str, String); 2] {
    [
        ("run.schema.json", to_json(&schemars::schema_for!(RunMeta))),
        ("cell.schema.json", to_json(&schemars::schema_for!(Cell))),
    ]
}
