//! The figures decode cells are compared by, each defined once.
//!
//! A `Definition` says where a cell keeps the figure, its noise, which way
//! is better, whether it can be shared over a run's GPUs, its table column,
//! how it is written and what a page says of it. The run page draws one
//! matrix per figure, a comparison one ratio section per figure, the CSV of
//! a comparison one column set per figure, and the in-browser comparison
//! reads the same rows (`compare/definitions.js`): adding a figure is a row
//! here plus the code that measures it.

use crate::model::format;
use crate::model::{DecodeCell, Interval};

/// A figure of a decode cell. Its `Definition` is `definition()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Figure {
    /// Output tokens in the window / the window: the headline figure.
    Throughput,
    /// The GPUs' energy over the window / its output tokens.
    Energy,
}

/// Which way a figure is better: the colour of a ratio says "better" or
/// "worse", never "bigger".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// What a cell shows beside its figure in the figure's run-page matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beside {
    /// The cell's median TTFT.
    Ttft,
    /// A request's long pause, when it had one.
    Pause,
    /// The GPUs' mean power over the window.
    Power,
    /// The GPUs' throttle verdict, when they slowed.
    Throttle,
}

/// One figure, defined once.
pub struct Definition {
    /// Its name in data for the browser, element ids and CSV headers.
    pub key: &'static str,
    /// The measurement table's column that holds it (`table::COLUMNS`).
    pub column: &'static str,
    /// Its table column holds the raw reading (`table::decode_value`); the
    /// figure is what a comparison may divide.
    /// Heading of its matrix and ratio section.
    pub name: &'static str,
    /// After a value in a cell's description: "1,234.5 tok/s total".
    pub unit_described: &'static str,
    /// After the ends of its colour scale: "1,234.5 total tok/s".
    pub unit_scale: &'static str,
    pub better: Better,
    /// Whether it can be shared out over a run's GPUs (throughput can; energy
    /// per token is already all the GPUs' energy over all the tokens).
    pub per_gpu: bool,
    /// The cell's figure; `None` when it has none. Never 0 where 0 cannot be
    /// a measurement (energy).
    pub value: fn(&DecodeCell) -> Option<f64>,
    /// Its noise: a cell's 95% interval, for a figure whose sources state
    /// one; `None` for a figure no source gives an interval of.
    pub interval: Option<fn(&DecodeCell) -> Option<&Interval>>,
    /// How a value is written ("1,234.5", "0.354 J").
    pub show: fn(f64) -> String,
    /// What a Valid cell without the figure lacks ("energy not recorded"),
    /// for a figure a Valid cell may lack; `None` when every Valid cell
    /// has it, so its absence is "not measured".
    pub not_recorded: Option<&'static str>,
    /// What its run-page matrix shows beside each figure.
    pub beside: &'static [Beside],
    /// Where a cell's reading came from ("nvidia-smi, as …"), for a
    /// figure read from the hardware; `None` for one the runner computes.
    pub source: Option<fn(&DecodeCell) -> Option<String>>,
    /// What pages say of it beyond the headline (the headline throughput's
    /// section has its own words, in `render::compare_words`).
    pub words: Words,
}

/// What pages say of a figure that is not the headline: slots are written
/// `{name}` and filled by `render::compare_words::fill`.
pub struct Words {
    /// Its run-page matrix's caption; `{sources}` where readings came from.
    pub matrix_caption: &'static str,
    /// Heading of one pair's ratio matrix: `{b}` over `{a}`.
    pub ratio_heading: &'static str,
    /// Caption of its ratio section.
    pub ratio_caption: &'static str,
    /// The ratio scale's worse and better ends, `{ratio}` the end's ratio.
    pub ratio_key: [&'static str; 2],
    /// When no cell of a pair has a ratio: `{a}` and `{b}` are the runs.
    pub no_ratio_anywhere: &'static str,
    /// Under its ratio matrices, per run: `{name}` and its `{sources}`, or
    /// that it has none.
    pub sources_line: &'static str,
    pub no_sources_line: &'static str,
    /// Its key finding: label; the median ratio of cells both have
    /// (`{count}`, `{min}`, `{max}`, and where each run is better,
    /// `{b_better}` and `{a_better}`); only one run has it (`{name}`); both
    /// have it but in no common valid cell.
    pub finding_label: &'static str,
    pub finding_text: &'static str,
    pub finding_one: &'static str,
    pub finding_none_shared: &'static str,
}

impl Figure {
    /// Every figure, the headline first.
    pub const ALL: [Figure; 2] = [Figure::Throughput, Figure::Energy];

    pub fn definition(self) -> &'static Definition {
        match self {
            Figure::Throughput => &THROUGHPUT,
            Figure::Energy => &ENERGY,
        }
    }

    /// The cell's figure, if it has one.
    pub fn of(self, cell: &DecodeCell) -> Option<f64> {
        (self.definition().value)(cell)
    }

    /// The figure of the key `key`.
    pub fn from_key(key: &str) -> Option<Figure> {
        Figure::ALL.into_iter().find(|f| f.definition().key == key)
    }
}

static THROUGHPUT: Definition = Definition {
    key: "total",
    column: "total_tok_per_s",
    name: "Total tok/s",
    unit_described: "tok/s total",
    unit_scale: "total tok/s",
    better: Better::Higher,
    per_gpu: true,
    value: |c| c.total_tok_per_s,
    interval: Some(|c| c.total_tok_per_s_ci95.as_ref()),
    show: format::tok_per_s,
    not_recorded: None,
    beside: &[Beside::Ttft, Beside::Pause, Beside::Throttle],
    source: None,
    // The headline's sections word it themselves (render::compare_words).
    words: Words {
        matrix_caption: "",
        ratio_heading: "",
        ratio_caption: "",
        ratio_key: ["{ratio} slower", "{ratio} faster"],
        no_ratio_anywhere: "",
        sources_line: "",
        no_sources_line: "",
        finding_label: "",
        finding_text: "",
        finding_one: "",
        finding_none_shared: "",
    },
};

static ENERGY: Definition = Definition {
    key: "energy",
    column: "joules_per_output_token",
    name: "Energy per output token",
    unit_described: "per output token",
    unit_scale: "per output token",
    better: Better::Lower,
    per_gpu: false,
    value: |c| c.joules_per_output_token().filter(|j| *j > 0.0),
    // No source states an interval of its energy.
    interval: None,
    show: format::joules,
    not_recorded: Some("energy not recorded"),
    beside: &[Beside::Power, Beside::Throttle],
    source: Some(|c| {
        let g = c.gpu_telemetry()?;
        c.joules_per_output_token()?;
        Some(match g.energy_from {
            Some(how) => format!("{}, as {}", g.source, how.label()),
            None => g.source.clone(),
        })
    }),
    words: Words {
        matrix_caption: "The GPUs' energy over each window / its output tokens, from {sources}; each cell's power below its figure. Less is better.",
        ratio_heading: "{b} / {a}, J per output token",
        ratio_caption: "Joules per output token of a run divided by the first run's, cell by cell, each from its own window's GPU telemetry. Below 1 (blue) the run uses less energy per token, above 1 (orange) more. No source states an interval of its energy, so a difference of a few percent may be noise. A dash means at least one side has no valid cell with its energy recorded, and the cell says why.",
        ratio_key: ["{ratio} the energy", "{ratio} the energy"],
        no_ratio_anywhere: "No cell ran validly with its energy recorded in both {a} and {b}: no energy ratio anywhere.",
        sources_line: "{name}: energy from {sources}.",
        no_sources_line: "{name}: no energy recorded.",
        finding_label: "Energy",
        finding_text: "{b}'s energy per output token over {a}'s, median of {count} cells both ran validly with their GPUs' energy recorded ({min} to {max}); {b} uses less in {b_better}, {a} in {a_better}.",
        finding_one: "Only {name} recorded its GPUs' energy: no energy ratio to give.",
        finding_none_shared: "Both recorded their GPUs' energy, but no cell ran validly with its energy recorded in both: no energy ratio to give.",
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_names_a_table_column_and_a_distinct_key() {
        let keys: std::collections::BTreeSet<&str> =
            Figure::ALL.iter().map(|f| f.definition().key).collect();
        assert_eq!(keys.len(), Figure::ALL.len());
        for f in Figure::ALL {
            let d = f.definition();
            let mut cell = DecodeCell::without_figures(8192, 1, crate::model::Status::Valid, None);
            cell.total_tok_per_s = Some(3.0);
            cell.gpu_telemetry_mut().joules_per_output_token = Some(3.0);
            assert_eq!(
                crate::model::table::decode_value(d.column, &cell),
                f.of(&cell),
                "{}'s column {} is the table's column of its reading",
                d.key,
                d.column
            );
            assert_eq!(Figure::from_key(d.key), Some(f));
        }
    }

    #[test]
    fn an_energy_of_zero_is_no_figure() {
        let mut c = DecodeCell::without_figures(8192, 1, crate::model::Status::Valid, None);
        c.gpu_telemetry_mut().joules_per_output_token = Some(0.0);
        assert_eq!(Figure::Energy.of(&c), None);
        c.gpu_telemetry_mut().joules_per_output_token = Some(0.5);
        assert_eq!(Figure::Energy.of(&c), Some(0.5));
    }
}
