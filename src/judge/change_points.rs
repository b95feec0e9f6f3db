//! Change points of a series of measurements: the E-divisive means method
//! with Student's t test as Apache Otava 0.8.0 runs it (`compute_change_points`,
//! used for nightly performance CI), ported loop for loop so that the same
//! series gives the same change points. Pure functions; tested here and, in
//! the tier with Python, side by side with Otava itself.
//!
//! Otava cuts the series into windows of `window` points, each window's
//! next start the later of its last change point and half a window on.
//! Inside a window the split maximising the E-divisive statistic q̂
//! (Matteson and James, 2014) is kept while Student's t test of the two
//! sides gives p ≤ 10 × `max_p`; then change points are merged away, the
//! least significant first, while any has p ≥ `max_p`, then the smallest
//! while any moves by `min_magnitude` or less. One quirk is kept on purpose
//! so the results stay Otava's: after a merge, the left neighbour of the
//! removed point keeps its old figures.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Otava's defaults: windows of 50 points, p ≤ 0.001, any magnitude.
pub const DEFAULT_WINDOW: usize = 50;
pub const DEFAULT_MAX_P: f64 = 0.001;

/// One side against the other of a change point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub mean_before: f64,
    pub mean_after: f64,
    pub p: f64,
}

impl Split {
    /// The mean after over the mean before, less one (-0.09: 9% lower).
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        }
    }

    fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

/// A change point: the index of the first point after the change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub split: Split,
}

/// numpy's pairwise summation, so that sums (and p-values decided by
/// rounding, in near-constant series) are numpy's.
fn np_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        return a.iter().fold(0.0, |s, v| s + v);
    }
    if n <= 128 {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let mut i = 8;
        while i < n - n % 8 {
            for (j, slot) in r.iter_mut().enumerate() {
                *slot += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        return res;
    }
    let mut half = n / 2;
    half -= half % 8;
    np_sum(&a[..half]) + np_sum(&a[half..])
}

fn mean(v: &[f64]) -> f64 {
    np_sum(v) / v.len() as f64
}

/// numpy's `std` (population, ddof 0), as Otava feeds the t test.
fn population_sd(v: &[f64]) -> f64 {
    let m = mean(v);
    let squares: Vec<f64> = v.iter().map(|x| (x - m) * (x - m)).collect();
    (np_sum(&squares) / v.len() as f64).sqrt()
}

/// Student's two-sample t test with pooled variance (scipy's
/// `ttest_ind_from_stats`, equal variances, two-sided), fed the population
/// standard deviations as Otava does.
fn t_test(left: &[f64], right: &[f64]) -> Split {
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let (m1, m2) = (mean(left), mean(right));
    let s1 = if left.len() >= 2 {
        population_sd(left)
    } else {
        0.0
    };
    let s2 = if right.len() >= 2 {
        population_sd(right)
    } else {
        0.0
    };
    let p = if n1 + n2 > 2.0 {
        let df = n1 + n2 - 2.0;
        let pooled = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let denom = (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        let d = m1 - m2;
        let t = if denom == 0.0 {
            if d == 0.0 {
                f64::NAN
            } else {
                f64::INFINITY.copysign(d)
            }
        } else {
            d / denom
        };
        if t.is_nan() {
            f64::NAN
        } else {
            let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
            2.0 * dist.sf(t.abs())
        }
    } else {
        1.0
    };
    Split {
        mean_before: m1,
        mean_after: m2,
        p,
    }
}

/// The split of `x[s..e]` maximising q̂ over s < τ < κ ≤ e, X = x[s..τ],
/// Y = x[τ..κ]; ties go to the first (τ, then κ, ascending).
fn best_candidate(x: &[f64], s: usize, e: usize) -> (usize, f64) {
    let (mut best_q, mut best_tau) = (f64::NEG_INFINITY, s + 1);
    for tau in s + 1..e {
        let n = (tau - s) as f64;
        let mut within_x = 0.0;
        for i in s..tau {
            for k in i + 1..tau {
                within_x += (x[i] - x[k]).abs();
            }
        }
        let (mut between, mut within_y) = (0.0, 0.0);
        for kappa in tau + 1..=e {
            let j = kappa - 1;
            for xi in &x[s..tau] {
                between += (xi - x[j]).abs();
            }
            for xl in &x[tau..j] {
                within_y += (xl - x[j]).abs();
            }
            let m = (kappa - tau) as f64;
            let mut q = 2.0 / (m + n) * between;
            if n > 1.0 {
                q -= 2.0 * m / ((m + n) * (n - 1.0)) * within_x;
            }
            if m > 1.0 {
                q -= 2.0 * n / ((m + n) * (m - 1.0)) * within_y;
            }
            if q > best_q {
                best_q = q;
                best_tau = tau;
            }
        }
    }
    (best_tau, best_q)
}

/// The stretches between change points `cps` (sorted) over `0..n`.
fn intervals(cps: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cps);
    bounds.push(n);
    bounds
        .windows(2)
        .filter(|w| w[0] != w[1])
        .map(|w| (w[0], w[1]))
        .collect()
}

/// Hierarchical E-divisive inside one window: local indices.
fn detect_window(w: &[f64], max_p: f64) -> Vec<usize> {
    let mut cps: Vec<usize> = Vec::new();
    loop {
        let mut best: Option<(f64, usize, usize, usize)> = None;
        for (s, e) in intervals(&cps, w.len()) {
            if e - s > 1 {
                let (tau, q) = best_candidate(w, s, e);
                if best.is_none_or(|b| q > b.0) {
                    best = Some((q, tau, s, e));
                }
            }
        }
        let Some((_, tau, s, e)) = best else { break };
        // NaN is not significant.
        if t_test(&w[s..tau], &w[tau..e]).p <= max_p {
            cps.push(tau);
            cps.sort_unstable();
        } else {
            break;
        }
    }
    cps
}

fn with_neighbours(x: &[f64], cps: &[usize], k: usize) -> Split {
    let lo = if k > 0 { cps[k - 1] } else { 0 };
    let hi = cps.get(k + 1).copied().unwrap_or(x.len());
    t_test(&x[lo..cps[k]], &x[cps[k]..hi])
}

fn split_pass(x: &[f64], window: usize, max_p: f64) -> Vec<ChangePoint> {
    let window = window.max(2);
    let (mut start, step) = (0usize, window / 2);
    let mut found: Vec<usize> = Vec::new();
    while start < x.len() {
        let end = (start + window).min(x.len());
        let new: Vec<usize> = detect_window(&x[start..end], max_p)
            .into_iter()
            .map(|c| c + start)
            .collect();
        let last = new.last().copied().unwrap_or(0);
        start = last.max(start + step);
        for c in new {
            if !found.contains(&c) {
                found.push(c);
            }
        }
    }
    found.sort_unstable();
    (0..found.len())
        .map(|k| ChangePoint {
            index: found[k],
            split: with_neighbours(x, &found, k),
        })
        .collect()
}

fn merge(mut cps: Vec<ChangePoint>, x: &[f64], max_p: f64, min_magnitude: f64) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        // The first largest p-value (NaN never replaces).
        let mut k = 0;
        for i in 1..cps.len() {
            if cps[i].split.p > cps[k].split.p {
                k = i;
            }
        }
        if cps[k].split.p < max_p {
            k = 0;
            for i in 1..cps.len() {
                if cps[i].split.magnitude() < cps[k].split.magnitude() {
                    k = i;
                }
            }
            if cps[k].split.magnitude() > min_magnitude {
                return cps;
            }
        }
        cps.remove(k);
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        // Otava re-scores the right neighbour and the one after it; the
        // left neighbour keeps its figures (kept: the results stay Otava's).
        for r in [k, k + 1] {
            if r < cps.len() {
                cps[r].split = with_neighbours(x, &idx, r);
            }
        }
    }
    cps
}

/// The change points of `x`, Otava's way: `window` points per window
/// (50 by default), significant at `max_p` (0.001), moving the mean by more
/// than `min_magnitude` (a share: 0.03 is 3%).
pub fn change_points(x: &[f64], window: usize, max_p: f64, min_magnitude: f64) -> Vec<ChangePoint> {
    let first_pass = if max_p < 0.05 {
        max_p * 10.0
    } else if max_p < 0.5 {
        max_p * 2.0
    } else {
        max_p
    };
    let weak = split_pass(x, window, first_pass);
    merge(weak, x, max_p, min_magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of a seeded normal around `mean` with standard deviation `sd`.
    fn noise(seed: u64, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        let mut state = seed;
        let mut uniform = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| mean + sd * ((0..12).map(|_| uniform()).sum::<f64>() - 6.0))
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is_and_noise_has_none() {
        let mut x = noise(1, 15, 100.0, 1.5);
        x.extend(noise(2, 15, 95.5, 1.5));
        let cps = change_points(&x, 30, DEFAULT_MAX_P, 0.0);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 15);
        assert!(
            (cps[0].split.forward_change() + 0.045).abs() < 0.015,
            "{cps:?}"
        );
        assert!(cps[0].split.p < 1e-6);
        assert!(change_points(&noise(3, 30, 100.0, 1.5), 30, DEFAULT_MAX_P, 0.0).is_empty());
    }

    #[test]
    fn the_t_test_is_scipy_s() {
        // scipy.stats.ttest_ind_from_stats with numpy's population std of
        // [1, 2, 3] and [4, 5, 6, 7]: t = -4.544858, p = 0.0061413224614648805.
        let s = t_test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0, 7.0]);
        assert_eq!((s.mean_before, s.mean_after), (2.0, 5.5));
        assert!((s.p - 0.006_141_322_461_464_88).abs() < 1e-12, "{}", s.p);
        assert_eq!(t_test(&[1.0], &[2.0]).p, 1.0);
        assert!(t_test(&[2.0, 2.0], &[2.0, 2.0]).p.is_nan());
    }

    #[test]
    fn sums_are_numpy_s_pairwise_ones() {
        let v: Vec<f64> = (0..300).map(|i| 0.1 * i as f64).collect();
        let plain: f64 = v.iter().sum();
        assert!((np_sum(&v) - plain).abs() < 1e-9);
        assert_eq!(np_sum(&[]), 0.0);
        assert_eq!(np_sum(&[1.0, 2.0, 3.0]), 6.0);
    }
}
