//! What a decode cell costs: GPU-hours per million output tokens at the
//! cell's total tok/s, from the optional `data/prices.json`. Pure.

use crate::model::{DecodeCell, GpuPrice, PricesFile, Run, Status};

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

/// The cost column's header, on run pages, comparison pages and in CSV.
pub(crate) const COST_HEADER: &str = "Cost / M output tokens";

/// How a cost was computed, with the price's source and date.
pub(crate) fn cost_note(gpus: u32, price: &GpuPrice) -> String {
    format!(
        "Cost per million output tokens = {gpus} × {} per GPU-hour ({} GPU price from {}, {}) / the output tokens of an hour at the cell's total tok/s; valid cells only.",
        crate::format::usd(price.usd_per_gpu_hour),
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
        assert_eq!(crate::format::usd(cost), "$2.75");
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
}
