//! Comparing figures: the same number up to rounding, or within a stated
//! relative tolerance.

/// `got` is `want` up to float rounding: within 1e-9 of `want`, relative,
/// or absolute for a `want` under 1 in size.
pub fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

/// `got` is within `tolerance` of `want`, relative to `want` (0.01: 1%).
pub fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want.abs()
}

/// `got` is `want` up to rounding (`close`); `what` names the figure.
#[track_caller]
pub fn assert_close(what: &str, got: f64, want: f64) {
    assert!(close(got, want), "{what}: {got} against {want}");
}

/// An imported figure is the file's own: `close` to it where the file has
/// one, absent where it has none.
#[track_caller]
pub fn assert_figure(what: &str, got: Option<f64>, want: Option<f64>) {
    match want {
        Some(w) => assert!(
            got.is_some_and(|g| close(g, w)),
            "{what}: imported {got:?}, the file says {w}"
        ),
        None => assert_eq!(got, None, "{what}"),
    }
}
