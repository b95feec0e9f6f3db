//! One cell of one run against the same cell of another: the ratio of a
//! figure, whether it is beyond the two cells' noise, or why there is none.

use crate::model::figure::Figure;
use crate::model::{DecodeCell, Interval, Run, Status};

/// Why one run's cell cannot be compared: not measured, or its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    NotMeasured,
    Status(Status),
    /// Valid, but without the figure, which a Valid cell may lack
    /// (`Definition::not_recorded`: its window's energy).
    NotRecorded(Figure),
}

/// Why a cell of a comparison has no ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRatio {
    /// The first run measured 0.
    ZeroBase,
    /// One run's cell, or both, cannot be compared.
    Unusable {
        a: Option<Unusable>,
        b: Option<Unusable>,
    },
}

/// A cell's `figure` if it can be compared: measured, Valid and holding it.
pub(crate) fn valid(figure: Figure, cell: Option<&DecodeCell>) -> Result<f64, Unusable> {
    let c = cell.ok_or(Unusable::NotMeasured)?;
    match c.status {
        Status::Valid => figure.of(c).ok_or(match figure.definition().not_recorded {
            Some(_) => Unusable::NotRecorded(figure),
            None => Unusable::NotMeasured,
        }),
        other => Err(Unusable::Status(other)),
    }
}

/// Whether a run has `figure` in any decode cell.
pub(crate) fn has(figure: Figure, run: &Run) -> bool {
    run.decode_cells().any(|c| figure.of(c).is_some())
}

/// `b`'s `figure` over `a`'s at one cell, or why there is none.
pub fn ratio(
    figure: Figure,
    a: Option<&DecodeCell>,
    b: Option<&DecodeCell>,
) -> Result<f64, NoRatio> {
    match (valid(figure, a), valid(figure, b)) {
        (Ok(x), Ok(y)) if x > 0.0 => Ok(y / x),
        (Ok(_), Ok(_)) => Err(NoRatio::ZeroBase),
        (a, b) => Err(NoRatio::Unusable {
            a: a.err(),
            b: b.err(),
        }),
    }
}

/// Whether a ratio is beyond the noise of the two figures it divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseVerdict {
    /// Its 95% interval lies above 1.
    Faster,
    /// Its 95% interval lies below 1.
    Slower,
    /// Its 95% interval includes 1.
    WithinNoise,
    /// A figure's interval is not known.
    Unknown,
}

/// `b / a` with its 95% interval, from each figure's own 95% interval: on a
/// log scale the two relative errors add in quadrature (independent
/// windows). `None` when either interval is unknown.
pub fn ratio_interval(
    a: (f64, Option<&Interval>),
    b: (f64, Option<&Interval>),
) -> Option<(f64, f64)> {
    let (ta, ia) = a;
    let (tb, ib) = b;
    let log_half = |t: f64, i: &Interval| i.relative_half_width(t).map(|h| (1.0 + h).ln());
    let (ha, hb) = (log_half(ta, ia?)?, log_half(tb, ib?)?);
    if ta <= 0.0 || tb <= 0.0 {
        return None;
    }
    let r = tb / ta;
    let h = (ha * ha + hb * hb).sqrt();
    Some((r * (-h).exp(), r * h.exp()))
}

/// The verdict on `b / a` from the two cells' intervals.
pub fn verdict(a: (f64, Option<&Interval>), b: (f64, Option<&Interval>)) -> NoiseVerdict {
    match ratio_interval(a, b) {
        None => NoiseVerdict::Unknown,
        Some((low, _)) if low > 1.0 => NoiseVerdict::Faster,
        Some((_, high)) if high < 1.0 => NoiseVerdict::Slower,
        Some(_) => NoiseVerdict::WithinNoise,
    }
}

/// The verdict on the ratio of two cells' `figure`, from the intervals its
/// sources state (none: `Unknown`).
pub(crate) fn cell_verdict(figure: Figure, a: &DecodeCell, b: &DecodeCell) -> NoiseVerdict {
    let d = figure.definition();
    match ((d.value)(a), (d.value)(b), d.interval) {
        (Some(x), Some(y), Some(interval)) => verdict((x, interval(a)), (y, interval(b))),
        _ => NoiseVerdict::Unknown,
    }
}

/// Throughput as the server gave it, or shared out over the run's GPUs: the
/// fair figure between runs on different numbers of GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Basis {
    Total,
    PerGpu,
}

impl Basis {
    /// `tok_per_s` of `run` on this basis.
    pub fn of(self, run: &Run, tok_per_s: f64) -> f64 {
        match self {
            Basis::Total => tok_per_s,
            Basis::PerGpu => tok_per_s / f64::from(run.meta.hardware.gpu_count.max(1)),
        }
    }

    /// `b`'s figure over `a`'s on this basis, from the ratio of their totals.
    pub fn ratio(self, a: &Run, b: &Run, total_ratio: f64) -> f64 {
        self.of(b, total_ratio) / self.of(a, 1.0)
    }
}
