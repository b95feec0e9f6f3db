//! sitegen's change points (src/judge/change_points.rs) side by side with Apache
//! Otava 0.8.0's, the method they are ported from, on the same seeded
//! series: noise alone, a step and a creep, at 1%, 2% and 5% noise, with
//! Otava's defaults and with sitegen's magnitude (half the 3% threshold).
//! Every series must give the same change points, within a run.
//!
//! Needs Otava in target/otava-venv (`.ci/run` installs tests/otava/requirements.txt).
//! A test target of its own (`harness = false`, tests/common/tier.rs).

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use sitegen::judge::change_points::{DEFAULT_MAX_P, DEFAULT_WINDOW, change_points};

fn main() -> std::process::ExitCode {
    common::tier::run(
        "otava",
        python,
        vec![(
            "sitegen_finds_the_change_points_otava_finds",
            sitegen_finds_the_change_points_otava_finds,
        )],
    )
}

fn python() -> Result<PathBuf, String> {
    let python = common::repo().join("target/otava-venv/bin/python");
    let works = Command::new(&python)
        .args(["-c", "import otava.analysis"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        Ok(python)
    } else {
        Err(format!(
            "no Python with apache-otava at {}",
            python.display()
        ))
    }
}

/// A seeded normal (splitmix64 and Box–Muller).
fn normals(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    let mut uniform = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (uniform().max(1e-300), uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        })
        .collect()
}

/// (name, series): 60 each of noise, a step of 3 × the noise at 20 and a
/// creep of 1% a run from 15, 30 runs, at each noise level.
fn cases() -> Vec<(String, Vec<f64>)> {
    let mut out = Vec::new();
    for (k, sd) in [0.01, 0.02, 0.05].into_iter().enumerate() {
        for s in 0..60u64 {
            let z = |seed: u64| normals(seed, 30);
            let base = |i: usize, seed: u64| 1.0 + sd * z(seed)[i];
            let seed = |kind: u64| k as u64 * 1_000_000 + kind * 10_000 + s;
            let noise: Vec<f64> = (0..30).map(|i| base(i, seed(0))).collect();
            let step: Vec<f64> = (0..30)
                .map(|i| base(i, seed(1)) * if i >= 20 { 1.0 - 3.0 * sd } else { 1.0 })
                .collect();
            let creep: Vec<f64> = (0..30)
                .map(|i| base(i, seed(2)) * 0.99f64.powi(i.saturating_sub(14) as i32))
                .collect();
            out.push((format!("noise {sd}, seed {s}"), noise));
            out.push((format!("step, noise {sd}, seed {s}"), step));
            out.push((format!("creep, noise {sd}, seed {s}"), creep));
        }
    }
    out
}

fn otava(python: &PathBuf, series: &[Vec<f64>], min_magnitude: f64) -> Vec<Vec<usize>> {
    let request = serde_json::json!({
        "series": series, "window": DEFAULT_WINDOW, "max_pvalue": DEFAULT_MAX_P, "min_magnitude": min_magnitude,
    });
    let mut child = Command::new(python)
        .arg(common::repo().join("tests/otava/change_points.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Vec<Vec<serde_json::Value>> = serde_json::from_slice(&out.stdout).unwrap();
    v.into_iter()
        .map(|cps| {
            cps.iter()
                .map(|c| c["index"].as_u64().unwrap() as usize)
                .collect()
        })
        .collect()
}

#[allow(clippy::ptr_arg)] // the tier harness hands every test a &PathBuf
fn sitegen_finds_the_change_points_otava_finds(python: &PathBuf) {
    let cases = cases();
    let series: Vec<Vec<f64>> = cases.iter().map(|(_, s)| s.clone()).collect();
    for min_magnitude in [0.0, 0.015] {
        let theirs = otava(python, &series, min_magnitude);
        let (mut same, mut within_one, mut found) = (0, 0, 0);
        for ((name, x), want) in cases.iter().zip(&theirs) {
            let ours: Vec<usize> = change_points(x, DEFAULT_WINDOW, DEFAULT_MAX_P, min_magnitude)
                .iter()
                .map(|c| c.index)
                .collect();
            found += want.len();
            if &ours == want {
                same += 1;
            }
            let close =
                ours.len() == want.len() && ours.iter().zip(want).all(|(a, b)| a.abs_diff(*b) <= 1);
            within_one += usize::from(close);
            assert!(
                close,
                "{name}, magnitude {min_magnitude}: sitegen {ours:?}, Otava {want:?}"
            );
        }
        eprintln!(
            "magnitude {min_magnitude}: {} series, {found} change points by Otava; sitegen's the same in {same}, within one run in {within_one}",
            cases.len()
        );
    }
}
