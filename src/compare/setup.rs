//! What a comparison's tables show of each run: its setup, and its figures
//! in one number format.

use super::frontier::largest_valid_context;
use crate::model::Run;

/// One row of the setup table a comparison shows of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct SetupValue {
    pub card: &'static str,
    pub field: &'static str,
    pub value: String,
}

/// What a comparison's setup table shows of a run: its Hardware, Engine and
/// Run cards, then what is derived from its cells and launch command (the
/// largest context it measured validly, speculative decoding). The
/// pre-rendered pages and the browser's comparison both show these.
pub(crate) fn setup_values(run: &Run) -> Vec<SetupValue> {
    let dash = crate::model::format::DASH;
    let mut values: Vec<SetupValue> = crate::model::labels::cards(&run.meta)
        .into_iter()
        .flat_map(|card| {
            card.rows.into_iter().map(move |(field, value)| SetupValue {
                card: card.name,
                field,
                value,
            })
        })
        .collect();
    let speculative =
        crate::model::launch::speculative_decoding(run.meta.launch_command.as_deref())
            .unwrap_or_else(|| {
                if run.meta.launch_command.is_some() {
                    "none".into()
                } else {
                    dash.into()
                }
            });
    values.extend([
        SetupValue {
            card: "Derived",
            field: "Largest context measured",
            value: largest_valid_context(run)
                .map_or_else(|| dash.into(), crate::model::format::context_label),
        },
        SetupValue {
            card: "Derived",
            field: "Speculative decoding",
            value: speculative,
        },
    ]);
    values
}
