//! The setup table of a comparison: each run's cards side by side, what differs marked.

use std::collections::BTreeSet;

use crate::compare;
use crate::model::Run;
use crate::render::compare_words;

use super::*;

/// One row of the side-by-side cards.
pub struct SetupRow {
    pub card: &'static str,
    pub label: String,
    pub values: Vec<String>,
    pub state: SetupState,
}

/// Whether the runs agree on a setup row. A run that does not state a value
/// is not a difference: unknown is not "differs".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupState {
    Same,
    Differs,
    /// Some run does not state it, and those that do agree.
    NotStated,
}

impl SetupState {
    /// Of one row's values, a dash standing for "not stated".
    pub(crate) fn of(values: &[String]) -> SetupState {
        let stated: Vec<&String> = values.iter().filter(|v| v.as_str() != DASH).collect();
        if stated.iter().any(|v| *v != stated[0]) {
            SetupState::Differs
        } else if stated.len() < values.len() {
            SetupState::NotStated
        } else {
            SetupState::Same
        }
    }
}

pub(super) fn setup_rows(runs: &[&Run]) -> Vec<SetupRow> {
    let values: Vec<Vec<compare::setup::SetupValue>> = runs
        .iter()
        .map(|r| compare::setup::setup_values(r))
        .collect();
    // Card by card, every field any run has, in the order they first appear.
    let mut cards: Vec<&str> = Vec::new();
    for v in values.iter().flatten() {
        if !cards.contains(&v.card) {
            cards.push(v.card);
        }
    }
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for card in cards {
        for v in values.iter().flatten().filter(|v| v.card == card) {
            if !keys.contains(&(v.card, v.field)) {
                keys.push((v.card, v.field));
            }
        }
    }
    keys.into_iter()
        .map(|(card, field)| {
            let row: Vec<String> = values
                .iter()
                .map(|vs| {
                    vs.iter()
                        .find(|v| v.card == card && v.field == field)
                        .map_or_else(|| DASH.to_string(), |v| v.value.clone())
                })
                .collect();
            SetupRow {
                card,
                label: field.to_string(),
                state: SetupState::of(&row),
                values: row,
            }
        })
        .collect()
}

/// The tools each run's figures come from: the tool of each imported cell,
/// else the run's benchmark tool, else sitegen itself.
pub(super) fn tools_of(run: &Run) -> BTreeSet<String> {
    let imported: BTreeSet<String> = run
        .cells
        .iter()
        .filter_map(|c| c.measured_by())
        .map(|by| by.tool.clone())
        .collect();
    if !imported.is_empty() {
        return imported;
    }
    let named = run.meta.run.benchmark_tool.as_ref().map(|t| t.name.clone());
    BTreeSet::from([named.unwrap_or_else(|| "sitegen".into())])
}

pub(super) fn tools_differ(runs: &[&Run]) -> Option<String> {
    let sets: Vec<BTreeSet<String>> = runs.iter().map(|r| tools_of(r)).collect();
    if sets.iter().all(|s| s == &sets[0]) {
        return None;
    }
    let all: BTreeSet<&String> = sets.iter().flatten().collect();
    let tools: Vec<&str> = all.into_iter().map(String::as_str).collect();
    Some(compare_words::fill(
        compare_words::TOOLS_DIFFER,
        &[("tools", &tools.join(", "))],
    ))
}
