//! How `sitegen build` scales with the number of runs, and how heavy its pages
//! get: builds the bundled data, then data sets of 1,000, 3,000 and 10,000
//! runs (copies of the two reference runs on the same hardware, dated one
//! night apart, so each model is one long series, as nightly CI makes them;
//! `common::many_runs`, shared with the tests),
//! and prints per size the build time, the build's peak memory, the index's
//! size, the largest series page and the largest page of any kind.
//!
//! Run: `cargo bench --bench build` (sizes: `SITEGEN_BENCH_RUNS=1000,3000`).
//! Each build runs in a child process, so its peak memory is its own
//! (VmHWM, Linux). Cells are hard links: 10,000 runs take little disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

// The tests' data sets, so the bench measures what tests/site/many_runs.rs checks.
#[path = "../tests/common/mod.rs"]
mod common;

/// What one build measured.
struct Measured {
    seconds: f64,
    peak_mb: Option<f64>,
}

/// Builds in a child process (this bench binary again) and reads back its
/// time and peak memory.
fn build_in_child(data: &Path, out: &Path) -> Measured {
    let output = Command::new(std::env::current_exe().unwrap())
        .env("SITEGEN_BENCH_CHILD", "1")
        .arg(data)
        .arg(out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "build failed: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    Measured {
        seconds: field("seconds").expect("the child prints its time"),
        peak_mb: field("peak_kb").map(|kb| kb / 1024.0),
    }
}

/// The child: one build, then its wall time and peak resident memory.
fn child(data: &Path, out: &Path) {
    let start = Instant::now();
    sitegen::app::pipeline::build_site(data, out).unwrap();
    println!("seconds {}", start.elapsed().as_secs_f64());
    // VmHWM: the peak resident set of this process (Linux only).
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(kb) = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))
    {
        println!("peak_kb {}", kb.trim().trim_end_matches("kB").trim());
    }
}

/// The pages of a built site: (path, bytes) of every .html file.
fn pages(site: &Path) -> Vec<(PathBuf, u64)> {
    walkdir::WalkDir::new(site)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "html"))
        .map(|e| {
            let len = e.metadata().unwrap().len();
            (e.path().strip_prefix(site).unwrap().to_path_buf(), len)
        })
        .collect()
}

/// Run pages linked from the index and the all-runs pages: what a reader
/// reaches without a script (the links are plain `<a href>`).
fn runs_linked(site: &Path) -> usize {
    let anchor = scraper::Selector::parse("a[href]").unwrap();
    let mut lists = vec![(site.join("index.html"), String::new())];
    if let Ok(dir) = std::fs::read_dir(site.join("all-runs")) {
        for page in dir.filter_map(Result::ok).filter(|e| e.path().is_dir()) {
            lists.push((page.path().join("index.html"), "../../".to_string()));
        }
    }
    let mut runs = std::collections::BTreeSet::new();
    for (page, prefix) in lists {
        let text = std::fs::read_to_string(&page).unwrap();
        for a in scraper::Html::parse_document(&text).select(&anchor) {
            let href = a.attr("href").unwrap();
            if let Some(rest) = href
                .strip_prefix(&prefix)
                .and_then(|h| h.strip_prefix("runs/"))
                && site.join("runs").join(rest).is_file()
            {
                runs.insert(rest.to_string());
            }
        }
    }
    runs.len()
}

fn kb(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} KB", bytes as f64 / 1e3)
    }
}

fn report(label: &str, data: &Path) -> f64 {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let m = build_in_child(data, &out);
    let pages = pages(&out);
    let site_bytes: u64 = walkdir::WalkDir::new(&out)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let size_of = |rel: &str| {
        pages
            .iter()
            .find(|(p, _)| p == Path::new(rel))
            .map_or(0, |p| p.1)
    };
    let largest = |keep: &dyn Fn(&Path) -> bool| {
        pages
            .iter()
            .filter(|(p, _)| keep(p))
            .max_by_key(|(_, len)| *len)
            .cloned()
    };
    let series = largest(&|p| p.starts_with("series"));
    let all_runs_js = std::fs::metadata(out.join("all-runs/runs.js")).map_or(0, |m| m.len());
    let any = largest(&|_| true).unwrap();
    let run_pages = pages.iter().filter(|(p, _)| p.starts_with("runs")).count();
    println!(
        "{label:>12}: build {:>6.2} s | peak {:>8} | {:>6} pages, site {:>9} | index {:>9} (every run's rows, on demand: {}) | largest series page {:>9} | largest page {:>9} ({})",
        m.seconds,
        m.peak_mb.map_or("n/a".into(), |mb| format!("{mb:.0} MB")),
        pages.len(),
        kb(site_bytes),
        kb(size_of("index.html")),
        if all_runs_js > 0 {
            kb(all_runs_js)
        } else {
            "none".into()
        },
        series.map_or("none".into(), |(_, len)| kb(len)),
        kb(any.1),
        any.0.display(),
    );
    println!(
        "{:>12}  run pages linked from the index and all-runs pages (no script): {} of {run_pages}",
        "",
        runs_linked(&out)
    );
    m.seconds
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    if std::env::var_os("SITEGEN_BENCH_CHILD").is_some() {
        let data = PathBuf::from(args.next().unwrap());
        let out = PathBuf::from(args.next().unwrap());
        return child(&data, &out);
    }
    let sizes: Vec<usize> = std::env::var("SITEGEN_BENCH_RUNS")
        .unwrap_or_else(|_| "1000,3000,10000".into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .expect("SITEGEN_BENCH_RUNS: runs, comma-separated")
        })
        .collect();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    report("bundled", &repo.join("data"));
    let mut times = Vec::new();
    for count in sizes {
        let tmp = tempfile::tempdir().unwrap();
        common::many_runs(tmp.path(), count);
        times.push((count, report(&format!("{count} runs"), tmp.path())));
    }
    if let (Some(&(n0, t0)), Some(&(n1, t1))) = (times.first(), times.last())
        && n1 > n0
    {
        println!(
            "time per run: {:.2} ms at {n0} runs, {:.2} ms at {n1} runs ({:.1}x the runs took {:.1}x the time)",
            t0 / n0 as f64 * 1e3,
            t1 / n1 as f64 * 1e3,
            n1 as f64 / n0 as f64,
            t1 / t0
        );
    }
}
