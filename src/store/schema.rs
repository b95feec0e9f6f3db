//! JSON Schemas of the data files, generated from the Rust types so the
//! documented format cannot drift from what `store` reads.

use crate::model::slo::SloFile;
use crate::model::{Cell, ChangesFile, ComparisonsFile, PricesFile, RunMeta};
use crate::store::to_json;

/// (file name, schema text) of `comparisons.json`, `changes.json`,
/// `prices.json`, `slo.json`, `run.json`, a cell file, a paced point's
/// file, a sessions window's file, and the capacity download a run page
/// offers.
pub fn data_schemas() -> [(&'static str, String); 9] {
    [
        (
            "comparisons.schema.json",
            to_json(&schemars::schema_for!(ComparisonsFile)),
        ),
        (
            "changes.schema.json",
            to_json(&schemars::schema_for!(ChangesFile)),
        ),
        (
            "prices.schema.json",
            to_json(&schemars::schema_for!(PricesFile)),
        ),
        ("slo.schema.json", to_json(&schemars::schema_for!(SloFile))),
        ("run.schema.json", to_json(&schemars::schema_for!(RunMeta))),
        ("cell.schema.json", to_json(&schemars::schema_for!(Cell))),
        (
            "paced.schema.json",
            to_json(&schemars::schema_for!(crate::model::paced::PacedPoint)),
        ),
        (
            "sessions.schema.json",
            to_json(&schemars::schema_for!(
                crate::model::sessions::SessionWindow
            )),
        ),
        (
            "capacity.schema.json",
            to_json(&schemars::schema_for!(crate::model::slo::CapacityFile)),
        ),
    ]
}
