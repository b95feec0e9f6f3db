//! The statistics every domain shares, once: the median, the mean and its
//! 95% t-interval, and Student's t test. Pure functions over numbers.
//! (judge/change_points.rs keeps numpy's own summation on purpose: it is
//! held to Apache Otava's results bit for bit.)

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The median of `values` (NaN sorts last), none when empty: one rule for
/// repeated windows, ratios and series charts.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    // Selected, not sorted (the median of each cell over thousands of runs
    // is most of judging a series); the same values a sort puts there.
    let (lower, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some(upper);
    }
    let below = lower
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .expect("an even count has a lower half");
    Some((below + upper) / 2.0)
}

/// The arithmetic mean, none when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample standard deviation (n − 1), from two values on.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    let m = mean(values).filter(|_| values.len() >= 2)?;
    let squares = values.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    Some((squares / (values.len() - 1) as f64).sqrt())
}

/// Student's t at 97.5% with `df` degrees of freedom (at least 1), found
/// once per `df` a thread asks: inverting the CDF is slow, judging a series
/// asks it thousands of times, and its degrees of freedom take few values.
pub fn t_975(df: f64) -> f64 {
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<u64, f64>> =
            Default::default();
    }
    let df = df.max(1.0);
    KNOWN.with_borrow_mut(|known| {
        *known.entry(df.to_bits()).or_insert_with(|| {
            StudentsT::new(0.0, 1.0, df)
                .expect("df > 0")
                .inverse_cdf(0.975)
        })
    })
}

/// The half-width of the 95% interval of a mean of `n` values whose sample
/// standard deviation is `sd`: t(n − 1) × sd / √n.
pub fn mean_half_width(sd: f64, n: usize) -> f64 {
    t_975((n.max(2) - 1) as f64) * sd / (n as f64).sqrt()
}

/// The mean of `values` and the half-width of its 95% t-interval, from two
/// values on.
pub fn mean_interval(values: &[f64]) -> Option<(f64, f64)> {
    let sd = sample_sd(values)?;
    Some((mean(values)?, mean_half_width(sd, values.len())))
}

/// `x` against zero on a t distribution with `df` degrees of freedom and
/// standard error `se`: the two-sided p and the 95% half-width.
pub fn t_test(x: f64, se: f64, df: f64) -> (f64, f64) {
    let t = StudentsT::new(0.0, 1.0, df.max(1.0)).expect("df > 0");
    let half = t_975(df) * se;
    let p = if se > 0.0 {
        (2.0 * t.sf((x / se).abs())).min(1.0)
    } else if x == 0.0 {
        1.0
    } else {
        0.0
    };
    (p, half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_median_is_the_sorted_one() {
        // Ties, both zeros, NaNs and infinities, at every length to 40.
        let pool = [
            1.5,
            -0.0,
            0.0,
            f64::NAN,
            2.0,
            f64::INFINITY,
            -3.25,
            2.0,
            1e-300,
            f64::NEG_INFINITY,
        ];
        let mut state = 7u64;
        for n in 1..40 {
            for _ in 0..20 {
                let v: Vec<f64> = (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        pool[(state >> 33) as usize % pool.len()]
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                let want = if n % 2 == 1 {
                    sorted[n / 2]
                } else {
                    (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
                };
                let got = median(v.clone()).unwrap();
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{v:?}: {got} against {want}"
                );
            }
        }
    }

    #[test]
    fn median_of_odd_even_and_no_values() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn the_mean_interval_is_t_times_the_standard_error() {
        // 10, 12, 14: mean 12, sd 2, t(2) = 4.3027: 12 ± 4.97.
        let (m, half) = mean_interval(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(m, 12.0);
        assert!(
            (half - 4.302_653 * 2.0 / 3f64.sqrt()).abs() < 1e-5,
            "{half}"
        );
        assert_eq!(mean_interval(&[5.0]), None, "one value has no spread");
        assert!((t_975(5.0) - 2.570_582).abs() < 1e-6);
    }

    #[test]
    fn a_t_test_of_nothing_is_no_evidence() {
        assert_eq!(t_test(0.0, 0.0, 4.0).0, 1.0);
        assert_eq!(t_test(0.1, 0.0, 4.0).0, 0.0);
        let (p, half) = t_test(0.0, 1.0, 1000.0);
        assert_eq!(p, 1.0);
        assert!((half - 1.962).abs() < 0.001);
    }
}
