//! What a decode cell costs: GPU-hours per million output tokens at the
//! cell's total tok/s, and the electricity of its GPUs' energy per million
//! output tokens, from the optional `data/prices.json`. Pure.

use crate::model::{DecodeCell, ElectricityPrice, GpuPrice, PricesFile, Run, Status};

/// Joules in a kWh.
const JOULES_PER_KWH: f64 = 3.6e6;

/// The price of a run's GPU, if the prices file lists it (exact name).
pub(crate) fn price_for<'a>(prices: &'a PricesFile, run: &Run) -> Option<&'a GpuPrice> {
    prices
        .prices
        .iter()
        .find(|p| p.gpu == run.meta.hardware.gpu)
}

/// US dollars per million output tokens of a Valid decode cell: the run's
/// GPUs for an hour at the listed price, over the tokens the cell's total
/// tok/s makes in that hour.
pub fn usd_per_million_output_tokens(
    cell: &DecodeCell,
    gpu_count: u32,
    price: &GpuPrice,
) -> Option<f64> {
    let tok_per_s = cell.total_tok_per_s.filter(|t| *t > 0.0)?;
    (cell.status == Status::Valid).then(|| {
        let usd_per_hour = f64::from(gpu_count) * price.usd_per_gpu_hour;
        usd_per_hour / (tok_per_s * 3600.0) * 1e6
    })
}

/// US dollars of electricity per million output tokens of a Valid decode
/// cell with its energy recorded: its GPUs' joules of a million tokens, in
/// kWh, at the listed price.
pub fn electricity_usd_per_million_output_tokens(
    cell: &DecodeCell,
    price: &ElectricityPrice,
) -> Option<f64> {
    let joules =
        crate::compare::ratio::valid(crate::model::figure::Figure::Energy, Some(cell)).ok()?;
    Some(joules * 1e6 / JOULES_PER_KWH * price.usd_per_kwh)
}

/// The heading of a comparison's cost table.
pub(crate) const COST_HEADING: &str = "Cost per million output tokens";

/// The cost column's header, on run pages, comparison pages and in CSV.
pub(crate) const COST_HEADER: &str = "Cost / M output tokens";

/// The electricity column's header on run pages.
pub(crate) const ELECTRICITY_HEADER: &str = "Electricity / M output tokens";

/// A run's electricity column in a comparison's cost table: "GLM, electricity".
pub(crate) const ELECTRICITY_WORD: &str = "electricity";

/// How electricity was computed, with the price's source and date, and
/// what it leaves out.
pub(crate) fn electricity_note(price: &ElectricityPrice) -> String {
    format!(
        "Electricity per million output tokens = the cell's joules per output token × 10⁶ / 3.6 × 10⁶ J per kWh × {} per kWh ({}, {}): the GPUs' own energy only, not the host, cooling or power-supply losses; valid cells with their energy recorded.",
        crate::model::format::usd(price.usd_per_kwh),
        price.source,
        price.date
    )
}

/// How a cost was computed, with the price's source and date.
pub(crate) fn cost_note(gpus: u32, price: &GpuPrice) -> String {
    format!(
        "Cost per million output tokens = {gpus} × {} per GPU-hour ({} GPU price from {}, {}) / the output tokens of an hour at the cell's total tok/s; valid cells only.",
        crate::model::format::usd(price.usd_per_gpu_hour),
        price.gpu,
        price.source,
        price.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_costs_its_gpu_hours_over_its_tokens() {
        // 4 GPUs at $3.50/h = $14/h; 1,412.4 tok/s = 5,084,640 tok/h:
        // $14 / 5.08464 M tokens = $2.7534 per M.
        let price = GpuPrice {
            gpu: "H200 SXM".into(),
            usd_per_gpu_hour: 3.5,
            source: "s".into(),
            date: "2026-11-01".into(),
        };
        let cell = DecodeCell {
            total_tok_per_s: Some(1412.4),
            ..DecodeCell::without_figures(8192, 16, Status::Valid, None)
        };
        let cost = usd_per_million_output_tokens(&cell, 4, &price).unwrap();
        assert!((cost - 2.753_34).abs() < 1e-4, "{cost}");
        assert_eq!(crate::model::format::usd(cost), "$2.75");
        let queued = DecodeCell {
            status: Status::RequestsQueued,
            ..cell
        };
        assert_eq!(
            usd_per_million_output_tokens(&queued, 4, &price),
            None,
            "valid cells only"
        );
    }

    #[test]
    fn a_cell_s_electricity_is_its_energy_of_a_million_tokens_at_the_kwh_price() {
        // 1.8 J per token: 1.8 MJ per million = 0.5 kWh; at $0.12 = $0.06.
        let price = ElectricityPrice {
            usd_per_kwh: 0.12,
            source: "s".into(),
            date: "2026-11-01".into(),
        };
        let mut cell = DecodeCell {
            total_tok_per_s: Some(1412.4),
            ..DecodeCell::without_figures(8192, 16, Status::Valid, None)
        };
        assert_eq!(
            electricity_usd_per_million_output_tokens(&cell, &price),
            None,
            "no energy recorded: no figure, never 0"
        );
        cell.gpu_telemetry_mut().joules_per_output_token = Some(1.8);
        let usd = electricity_usd_per_million_output_tokens(&cell, &price).unwrap();
        assert!((usd - 0.06).abs() < 1e-12, "{usd}");
        cell.status = Status::RequestsQueued;
        assert_eq!(
            electricity_usd_per_million_output_tokens(&cell, &price),
            None,
            "valid cells only"
        );
    }
}
