//! How `sitegen build` scales with the number of runs, and how heavy its pages
//! get: builds the bundled data, then data sets of 1,000, 3,000 and 10,000
//! runs (copies of the two reference runs on the same hardware, dated one
//! night apart, so each model is one long series, as nightly CI makes them;
//! `common::many_runs`, shared with the tests), and at 1,000 and 3,000 runs
//! the two extremes of series: every run of one setup (one series of all the
//! runs) and every run a setup of its own (no series).
//!
//! Per data set it prints the build time (the median of three builds from
//! scratch, and their range) and where it went (reading and checking, judging the
//! series, rendering and writing), the floor (reading every input file and
//! copying every output file, on one thread, right after each build: what
//! no build can beat) in its two parts, the build's ratio to it (the
//! median of the three pairs, and their range), the build's peak memory, the index's size,
//! the largest series page and the largest page of any kind; then the
//! nightly build: a new run added to a series and the site built over the
//! last one (src/app/reuse.rs), its time, the files it kept and its ratio
//! to the floor (`nightly`). At the largest size it then times `sitegen serve`'s rebuild after a new run (three nights
//! running: the first rebuild, then two more) and after one
//! edited run (src/app/rebuild.rs).
//!
//! Run: `cargo bench --bench build` (sizes: `SITEGEN_BENCH_RUNS=1000,3000`;
//! where: `SITEGEN_BENCH_DIR=/dev/shm`, in memory, else the disk). To
//! profile: `SITEGEN_BENCH_MAKE=DIR` only makes the data set of the first
//! size in DIR (`SITEGEN_BENCH_SETUPS=one|two|each`: one series, two, or
//! none), `SITEGEN_BENCH_SERVE_ONLY=DIR` only times serve on it.
//! Each build runs in a child process, so its peak memory is its own
//! (VmHWM, Linux). Cells are hard links: 10,000 runs take little disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

// The binary's allocator (src/main.rs): the builds and serve's rebuilds
// run in this process.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The tests' data sets, so the bench measures what tests/site/many_runs.rs checks.
#[path = "../tests/common/mod.rs"]
mod common;

/// What one build measured.
struct Measured {
    seconds: f64,
    /// Reading and checking the data (judging excluded).
    read_s: f64,
    /// Judging every series (src/judge/series.rs).
    judge_s: f64,
    /// Rendering the pages and writing them.
    render_s: f64,
    peak_mb: Option<f64>,
    /// Files taken unchanged from the previous build in the output folder.
    reused: usize,
    files: usize,
}

impl Measured {
    /// "0.70 s (0.67-0.73) = read 0.23 + judge 0.03 + render 0.44": this
    /// build, the `range` of its kind, and its phases, the last called `last`.
    fn phases(&self, range: (f64, f64), last: &str) -> String {
        format!(
            "{:.2} s ({:.2}-{:.2}) = read {:.2} + judge {:.2} + {last} {:.2}",
            self.seconds, range.0, range.1, self.read_s, self.judge_s, self.render_s
        )
    }
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
        read_s: field("read").expect("the child prints its phases"),
        judge_s: field("judge").expect("the child prints its phases"),
        render_s: field("render").expect("the child prints its phases"),
        peak_mb: field("peak_kb").map(|kb| kb / 1024.0),
        reused: field("reused").expect("the child prints what it kept") as usize,
        files: field("files").expect("the child prints what it wrote") as usize,
    }
}

/// The child: one build, then its wall time, its phases and peak resident
/// memory. The series are judged a second time, alone, to time the judging
/// inside loading.
fn child(data: &Path, out: &Path) {
    use sitegen::app::pipeline;
    let start = Instant::now();
    // As `sitegen build --out` does: unchanged runs read from the copies
    // the last build there kept.
    let loaded = pipeline::load_over(data, Default::default(), Some(out)).unwrap();
    let loaded_at = start.elapsed().as_secs_f64();
    let summary = pipeline::write_site(&loaded, out).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    println!("reused {}", summary.reused);
    println!("files {}", summary.files);
    let judging = Instant::now();
    let changes = sitegen::store::load_changes(data, &loaded.runs).unwrap();
    let series = sitegen::judge::series::series(&loaded.runs, &changes, &Default::default());
    assert_eq!(series, loaded.series, "judging again gives the same series");
    let judge = judging.elapsed().as_secs_f64();
    println!("seconds {seconds}");
    println!("read {}", loaded_at - judge);
    println!("judge {judge}");
    println!("render {}", seconds - loaded_at);
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

/// A new folder for the bench's data and sites, under `SITEGEN_BENCH_DIR`
/// when set (`/dev/shm` measures the build without the disk's pace), else
/// in the system's temporary folder.
fn scratch() -> tempfile::TempDir {
    match std::env::var_os("SITEGEN_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

/// The bytes of every file under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

fn kb(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} KB", bytes as f64 / 1e3)
    }
}

/// The floor of a build: reading every file under `data` and copying every
/// file of the built site `site` (but the runs kept for the next build) into a new folder, on one thread, in
/// seconds: (reading, copying). The files are in the page cache, as they
/// are for the build. The copy is kept until the bench ends, as every site
/// it builds: ext4 makes a new file slower while many were deleted in the
/// last minutes.
fn floor(data: &Path, site: &Path, keep: &mut Vec<tempfile::TempDir>) -> (f64, f64) {
    let files = |root: &Path| -> Vec<PathBuf> {
        walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .collect()
    };
    // The site's pages, not the copies of the runs the build keeps for the
    // next one (they would raise the floor by 1,000 files of 20 KB).
    let kept = site.join(sitegen::app::reuse::KEPT_RUNS);
    let (inputs, mut outputs) = (files(data), files(site));
    outputs.retain(|f| !f.starts_with(&kept));
    let tmp = scratch();
    let start = Instant::now();
    let mut read = 0;
    for f in &inputs {
        read += std::fs::read(f).unwrap().len();
    }
    std::hint::black_box(read);
    let read_s = start.elapsed().as_secs_f64();
    for f in &outputs {
        let to = tmp.path().join(f.strip_prefix(site).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(f, to).unwrap();
    }
    let copy_s = start.elapsed().as_secs_f64() - read_s;
    keep.push(tmp);
    (read_s, copy_s)
}

/// Writes `bytes` into a file where the bench works and deletes it, so that
/// the measurement after it fills memory the kernel has just freed. Pages
/// this VM has not been handed lately cost several times more to fill (a
/// floor's copy into /dev/shm: 0.41 s instead of 0.09 s, the same files),
/// and which kind a measurement met changed from one to the next within a
/// minute: a floor measured after the builds met them more often and
/// looked up to twice as slow, the ratio flattered.
fn warm_memory(bytes: u64) {
    use std::io::Write;
    let tmp = scratch();
    let mut f = std::fs::File::create(tmp.path().join("warm")).unwrap();
    let chunk = vec![1u8; 16 << 20];
    for _ in 0..bytes.div_ceil(chunk.len() as u64) {
        f.write_all(&chunk).unwrap();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median of `v`, its least and its greatest.
fn median_and_range(v: &[f64]) -> (f64, f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (median(v.to_vec()), lo, hi)
}

fn report(label: &str, data: &Path, keep: &mut Vec<tempfile::TempDir>) -> f64 {
    // Three builds, each followed at once by its floor (each into a folder
    // of its own, kept, see `floor`), both in warmed memory (enough for the
    // site and the build's heap), and the ratio taken pair by pair.
    let mut site_bytes = 0;
    let mut pairs: Vec<(Measured, PathBuf, (f64, f64))> = (0..3)
        .map(|_| {
            let warm = (1 << 30) + 2 * site_bytes;
            let tmp = scratch();
            let out = tmp.path().join("site");
            warm_memory(warm);
            let m = build_in_child(data, &out);
            keep.push(tmp);
            site_bytes = bytes_under(&out);
            warm_memory(warm);
            let floor = floor(data, &out, keep);
            (m, out, floor)
        })
        .collect();
    let ratios: Vec<f64> = pairs
        .iter()
        .map(|(m, _, (r, c))| m.seconds / (r + c))
        .collect();
    let floor_s = median(pairs.iter().map(|(_, _, (r, c))| r + c).collect());
    let floor_read = median(pairs.iter().map(|(_, _, (r, _))| *r).collect());
    let floor_copy = median(pairs.iter().map(|(_, _, (_, c))| *c).collect());
    let (ratio, lo, hi) = median_and_range(&ratios);
    pairs.sort_by(|a, b| a.0.seconds.total_cmp(&b.0.seconds));
    let range = (pairs[0].0.seconds, pairs[2].0.seconds);
    let (m, out, _) = pairs.swap_remove(1);
    // Every build of the same data makes the same bytes: the last one's size is this one's.
    let pages = pages(&out);
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
        "{label:>22}: build {} | floor {floor_s:.2} s = read {floor_read:.2} + copy {floor_copy:.2} | ratio {ratio:.2}x ({lo:.2}-{hi:.2})",
        m.phases(range, "render"),
    );
    println!(
        "{:>22}  peak {:>8} | {:>6} pages, site {:>9} | index {:>9} (every run's rows, on demand: {}) | largest series page {:>9} | largest page {:>9} ({})",
        "",
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
        "{:>22}  run pages linked from the index and all-runs pages (no script): {} of {run_pages}",
        "",
        runs_linked(&out)
    );
    m.seconds
}

/// The nightly build: a site of `data` built, a new night's run added to
/// the series of its newest run, and the site built again over the last one
/// (src/app/reuse.rs), followed at once by its floor; then the new run
/// removed and the site built again without it (not timed). Three times;
/// prints the median build over the last one, what it kept, and its ratio
/// to the floor. The floor's copies are removed after each trial, not kept
/// as the other cases' are: at 10,000 runs in memory (`/dev/shm`) the kept
/// sites and copies of a whole sitting outgrew this machine's 24 GiB.
fn nightly(label: &str, data: &Path, keep: &mut Vec<tempfile::TempDir>) {
    let newest = std::fs::read_dir(data)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("run-"))
        .max()
        .unwrap();
    let tmp = scratch();
    let out = tmp.path().join("site");
    build_in_child(data, &out);
    // Built over once, as a nightly site is: the copies of its runs kept.
    build_in_child(data, &out);
    let warm = (1 << 30) + 2 * bytes_under(&out);
    let mut trials: Vec<(Measured, (f64, f64))> = (0..3)
        .map(|_| {
            let new = common::copy_run(data, &newest, "run-next", "2099-01-01T02:00:00Z");
            warm_memory(warm);
            let m = build_in_child(data, &out);
            warm_memory(warm);
            let floor = floor(data, &out, &mut Vec::new());
            std::fs::remove_dir_all(new).unwrap();
            build_in_child(data, &out);
            (m, floor)
        })
        .collect();
    keep.push(tmp);
    let ratios: Vec<f64> = trials
        .iter()
        .map(|(m, (r, c))| m.seconds / (r + c))
        .collect();
    let (ratio, lo, hi) = median_and_range(&ratios);
    trials.sort_by(|a, b| a.0.seconds.total_cmp(&b.0.seconds));
    let range = (trials[0].0.seconds, trials[2].0.seconds);
    let (m, (r, c)) = &trials[1];
    println!(
        "{label:>22}: a new night built over the last site: {}, {} of {} files kept | floor {:.2} s = read {r:.2} + copy {c:.2} | ratio {ratio:.2}x ({lo:.2}-{hi:.2})",
        m.phases(range, "render and keep"),
        m.reused,
        m.files,
        r + c,
    );
}

/// `sitegen serve`'s rebuild after one change to a site of `data`: a new run
/// at the end of a series, then an edited cell of a run in the middle of
/// one (its series judged again from there). Prints each rebuild's time.
fn serve_rebuilds(label: &str, data: &Path) {
    use sitegen::app::rebuild::Rebuilder;
    let start = Instant::now();
    let (mut rebuilder, summary) = Rebuilder::new(data, Default::default()).unwrap();
    let first = start.elapsed().as_secs_f64();
    let runs: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(data)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("run-"))
            .collect();
        v.sort();
        v
    };
    // The newest run copied as the next night's, three nights running.
    let newest = &runs[runs.len() - 2];
    let mut added = Vec::new();
    for night in 1..=3 {
        let new = common::copy_run(
            data,
            newest,
            &format!("run-new-{night}"),
            &format!("2099-01-0{night}T02:00:00Z"),
        );
        let at = Instant::now();
        let update = rebuilder.update(&[new.join("run.json")]).unwrap();
        added.push((at.elapsed().as_secs_f64(), update.rendered));
    }
    // A cell of the middle run made slower (saved by a rename: cells are
    // hard links to the bundled data).
    let middle = &runs[runs.len() / 2];
    let cell = data.join(middle).join("cells/decode-00008192-x001.json");
    common::scale_total(&cell, 0.5);
    let at = Instant::now();
    let edited = rebuilder.update(std::slice::from_ref(&cell)).unwrap();
    let edited_s = at.elapsed().as_secs_f64();
    println!(
        "{label:>22}: serve: first build in memory {first:.2} s ({} files); a new run rebuilt in {} ({} files rendered); a cell of the middle run edited, rebuilt in {edited_s:.3} s ({} files rendered)",
        summary.files,
        added
            .iter()
            .map(|(s, _)| format!("{s:.3} s"))
            .collect::<Vec<_>>()
            .join(", then "),
        added[0].1,
        edited.rendered
    );
}

fn main() {
    // As the binary does (src/main.rs): the builds and serve's rebuilds run here.
    sitegen::app::without_huge_pages();
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
    // Only the data set of the first size, made in the folder given, to be
    // profiled or given to SITEGEN_BENCH_SERVE_ONLY.
    if let Some(data) = std::env::var_os("SITEGEN_BENCH_MAKE") {
        let setups = match std::env::var("SITEGEN_BENCH_SETUPS").as_deref() {
            Ok("one") => common::Setups::One,
            Ok("each") => common::Setups::Each,
            Ok("two") | Err(_) => common::Setups::Two,
            Ok(other) => panic!("SITEGEN_BENCH_SETUPS: one, two or each, not {other:?}"),
        };
        return common::many_runs_of(Path::new(&data), sizes[0], setups);
    }
    // Only serve's rebuilds, on a data set made before (profiling).
    if let Some(data) = std::env::var_os("SITEGEN_BENCH_SERVE_ONLY") {
        return serve_rebuilds("given data", Path::new(&data));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Every folder the bench makes, removed when it ends (see `floor`).
    let mut keep = Vec::new();
    report("bundled", &repo.join("data"), &mut keep);
    let mut times = Vec::new();
    for &count in &sizes {
        let tmp = scratch();
        common::many_runs(tmp.path(), count);
        let label = format!("{count} runs, 2 series");
        times.push((count, report(&label, tmp.path(), &mut keep)));
        nightly(&label, tmp.path(), &mut keep);
        keep.push(tmp);
    }
    // The extremes of series, at the sizes up to 3,000 (one series of
    // 10,000 runs is the 2-series case's twice over).
    for &count in sizes.iter().filter(|&&n| n <= 3000) {
        for (shape, name) in [
            (common::Setups::One, "1 series"),
            (common::Setups::Each, "no series"),
        ] {
            let tmp = scratch();
            common::many_runs_of(tmp.path(), count, shape);
            let label = format!("{count} runs, {name}");
            report(&label, tmp.path(), &mut keep);
            nightly(&label, tmp.path(), &mut keep);
            keep.push(tmp);
        }
    }
    // `sitegen serve` at the largest size, after the builds (it changes the data).
    if let Some(&count) = sizes.iter().max() {
        let tmp = scratch();
        common::many_runs(tmp.path(), count);
        serve_rebuilds(&format!("{count} runs, 2 series"), tmp.path());
        keep.push(tmp);
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
