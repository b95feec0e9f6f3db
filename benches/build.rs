//! How `sitegen build` scales with the number of runs: builds the bundled
//! data, then synthetic data sets of 100 and 1,000 runs (copies of the
//! reference runs spread over hardware kinds), and prints the time per build,
//! the pages written and the bytes. Run: `cargo bench --bench build`.

use std::path::Path;
use std::time::Instant;

fn copy_runs(from: &Path, to: &Path, count: usize) {
    let sources = [
        "glm-5.3-flash-h200x4-vllm",
        "step-3.5-flash-h200x4-vllm-0.29.0",
    ];
    for i in 0..count {
        let src = from.join(sources[i % 2]);
        let dst = to.join(format!("run-{i:05}"));
        std::fs::create_dir_all(dst.join("cells")).unwrap();
        let meta = std::fs::read_to_string(src.join("run.json")).unwrap();
        // Four runs per hardware kind: each kind gets its six pair pages.
        let meta = meta.replace("\"H200 SXM\"", &format!("\"GPU kind {}\"", i / 4));
        std::fs::write(dst.join("run.json"), meta).unwrap();
        for cell in std::fs::read_dir(src.join("cells")).unwrap() {
            let cell = cell.unwrap().path();
            std::fs::copy(&cell, dst.join("cells").join(cell.file_name().unwrap())).unwrap();
        }
    }
}

fn measure(label: &str, data: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let mut times = Vec::new();
    let mut summary = None;
    for _ in 0..3 {
        let start = Instant::now();
        summary = Some(sitegen::pipeline::build_site(data, &out).unwrap());
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let bytes: u64 = walkdir::WalkDir::new(&out)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let s = summary.unwrap();
    println!(
        "{label:>24}: {:>5} runs, {:>6} files, {:>8.1} MB, build {:>7.3} s (median of 3, min {:.3} s)",
        s.runs,
        s.files,
        bytes as f64 / 1e6,
        times[1],
        times[0]
    );
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    measure("bundled data", &repo.join("data"));
    for count in [100, 1000] {
        let tmp = tempfile::tempdir().unwrap();
        copy_runs(&repo.join("data"), tmp.path(), count);
        measure(&format!("{count} synthetic runs"), tmp.path());
    }
}
