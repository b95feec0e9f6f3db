//! What a comparison's tables show of each run: its setup, and its figures
//! in one number format.

use super::frontier::largest_valid_context;
use super::ratio::Basis;
use crate::model::{DecodeCell, Run, Status};

/// A run's prefill cells in a comparison's table, each "16,000.0 (512 ms)"
/// when it has both figures (an Error cell may: it is charted and listed as
/// measured), the run's figures in one number format.
pub(crate) fn prefill_figures(run: &Run) -> Vec<(u64, Option<String>)> {
    use crate::model::format::{millis, tok_per_s_column};
    let cells: Vec<&crate::model::PrefillCell> = run.prefill_cells().collect();
    let rates: Vec<f64> = cells.iter().filter_map(|c| c.prompt_tok_per_s).collect();
    let mut shown = tok_per_s_column(&rates).into_iter();
    cells
        .into_iter()
        .map(|c| {
            let rate = c.prompt_tok_per_s.map(|_| shown.next().unwrap_or_default());
            let text = rate.zip(c.ttft_ms).map(|(t, ms)| {
                crate::compare::words::fill(
                    crate::compare::words::PREFILL_FIGURE,
                    &[("tok_per_s", &t), ("ttft", &millis(ms))],
                )
            });
            (c.context_tokens, text)
        })
        .collect()
}

/// A decode cell of `run` in a comparison's table: its tok/s on `basis`,
/// with the status when it is not Valid ("1,234.5 (Requests queued)"), or
/// the status alone when it has no figure.
pub(crate) fn decode_figure(run: &Run, cell: Option<&DecodeCell>, basis: Basis) -> String {
    use crate::compare::words::{FIGURE_WITH_STATUS, fill};
    let figure = |t: f64| crate::model::format::tok_per_s(basis.of(run, t));
    match cell {
        None => crate::model::format::DASH.into(),
        Some(c) if c.status == Status::Valid => c
            .total_tok_per_s
            .map_or_else(|| crate::model::format::DASH.into(), figure),
        Some(c) => match c.total_tok_per_s.filter(|_| c.status.has_figures()) {
            Some(t) => fill(
                FIGURE_WITH_STATUS,
                &[("figure", &figure(t)), ("status", c.status.label())],
            ),
            None => c.status.label().to_string(),
        },
    }
}

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
