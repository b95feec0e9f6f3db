//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod figures;
pub mod html;
pub mod ingest;
pub mod llm_d_report;
pub mod site_check;
pub mod tier;

use std::path::{Path, PathBuf};

/// `sitegen ARGS` run in `cwd`, as a user runs it, to completion.
pub fn sitegen(args: &[&str], cwd: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sitegen"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// What a finished command said on stderr.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// GET `url` with reqwest's blocking client. reqwest is built without a TLS
/// provider (Cargo.toml): sitegen's is installed first, as the runner does.
pub fn http_get(url: &str) -> reqwest::Result<reqwest::blocking::Response> {
    sitegen::runner::client::install_tls_provider();
    reqwest::blocking::get(url)
}

/// A port free on 127.0.0.1 just now, for a server a test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `sitegen run` against a real server on this host's CPU (`--gpu CPU
/// --gpu-count 1`) into `data/<id>`, with `args`: what it printed, and the
/// run it wrote. The run must succeed.
pub fn sitegen_run_on_cpu(
    url: &str,
    data: &Path,
    id: &str,
    args: &[&str],
) -> (String, sitegen::model::Run) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sitegen"))
        .args(["run", "--url", url, "--run-id", id, "--data"])
        .arg(data)
        .args(["--gpu", "CPU", "--gpu-count", "1"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (stderr, sitegen::store::load_run(&data.join(id)).unwrap())
}

/// A child process that is killed when dropped.
pub struct Background(pub std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` and returns it with the first line it prints on stdout
/// (servers print their address or "ready" there); `stderr` says where its
/// log goes (inherited to show it, null for a chatty server).
pub fn spawn_with_first_line(
    command: &mut std::process::Command,
    stderr: std::process::Stdio,
) -> (Background, String) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Background(child), line.trim().to_string())
}

/// `sitegen serve` in the background, killed when dropped. Its stderr is
/// kept, so a test can wait for what the server says instead of sleeping.
pub struct SitegenServe {
    _process: Background,
    pub base_url: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl SitegenServe {
    pub fn start(data: &Path, base_path: &str) -> SitegenServe {
        use std::io::BufRead;
        let (mut process, line) = spawn_with_first_line(
            std::process::Command::new(env!("CARGO_BIN_EXE_sitegen"))
                .args(["serve", "--port", "0", "--base-path", base_path, "--data"])
                .arg(data),
            std::process::Stdio::piped(),
        );
        let stderr = process.0.stderr.take().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                eprintln!("sitegen serve: {line}");
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let base_url = line
            .trim()
            .strip_prefix("serving ")
            .unwrap_or_else(|| panic!("unexpected first line from sitegen serve: {line:?}"))
            .to_string();
        SitegenServe {
            _process: process,
            base_url,
            log,
        }
    }

    /// How many lines of its stderr so far contain `text`.
    pub fn said(&self, text: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .lines()
            .filter(|l| l.contains(text))
            .count()
    }
}

/// Polls `done` until it holds. The deadline is generous on purpose: it only
/// bounds a test that would otherwise hang, on a machine that may be busy.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A real result file of another tool: `tests/fixtures/real/<rel>` (each
/// listed with its provenance in its SOURCES.md).
pub fn real(rel: &str) -> PathBuf {
    repo().join("tests/fixtures/real").join(rel)
}

pub fn data_dir() -> PathBuf {
    repo().join("data")
}

pub fn fixture_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/fixtures/pages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    pages
}

/// Builds the bundled data into a fresh temporary folder.
pub fn build_bundled_site() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data_dir(), &out).unwrap();
    (tmp, out)
}

/// A copy of the bundled data/ in `to`, for a test to change.
pub fn copy_bundled_data(to: &Path) {
    for (rel, bytes) in files_under(&data_dir()) {
        let path = to.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// The id of the sessions run `sitegen run --sessions` measured on real vLLM
/// 0.32 (tests/fixtures/servers/vllm-0.32.0/SOURCES.md).
pub const REAL_SESSIONS_RUN: &str = "tiny-llama-vllm-sessions";

/// A copy of that real sessions run in `data/<id>`.
pub fn copy_real_sessions_run(data: &Path, id: &str) {
    let from = repo()
        .join("tests/fixtures/servers/vllm-0.32.0/sessions-run")
        .join(REAL_SESSIONS_RUN);
    for entry in walkdir::WalkDir::new(&from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&from).unwrap();
        let target = data.join(id).join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The bundled data plus one run imported from each other tool's files
/// (tests/fixtures/real/ and hand-written/), two dated reruns of GLM (a series) and a
/// comparison of runs on 4 and 2 GPUs, built into a fresh temporary folder:
/// pages with imported figures, their definitions and a context of 0.
pub fn build_site_with_imported_runs() -> (tempfile::TempDir, PathBuf) {
    use sitegen::ingest::{ImportOptions, import};
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    copy_bundled_data(&data);
    let meta = tmp.path().join("meta.json");
    std::fs::write(
        &meta,
        r#"{"hardware": {"gpu": "H100 SXM", "gpu_count": 1}, "engine": {"name": "vllm"}}"#,
    )
    .unwrap();
    // SGLang's lines against a vLLM server name no model.
    let model_meta = tmp.path().join("model-meta.json");
    std::fs::write(
        &model_meta,
        r#"{"model": "emulated-model", "hardware": {"gpu": "H100 SXM", "gpu_count": 1}}"#,
    )
    .unwrap();
    // A CSV says no cards at all.
    let csv_meta = tmp.path().join("csv-meta.json");
    std::fs::write(
        &csv_meta,
        r#"{"model": "Paused-Model", "hardware": {"gpu": "L40S", "gpu_count": 2},
            "engine": {"name": "sglang"}, "run": {"decode_test": "fixed_duration",
            "seconds_per_measurement": 30, "endpoint": "chat"}}"#,
    )
    .unwrap();
    let fixtures = repo().join("tests/fixtures");
    // Real result files of each tool (tests/fixtures/real/SOURCES.md); the
    // llm_decode_bench.py file states its own cards, the others get --meta.
    let runs: [(&str, &[&str]); 9] = [
        // A cell with a stall, as `sitegen run` records one: the pause mark.
        ("paused", &["hand-written/paused.hand-written.csv"]),
        (
            "llm-decode-bench",
            &["real/llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json"],
        ),
        (
            "llm-decode-bench-statuses",
            &["hand-written/llm-decode-bench-0.6.2-statuses.hand-written.json"],
        ),
        // Context 0 like the one above, on the same hardware (--meta): their
        // comparison has decode at "0 (no prompt)" on both sides.
        (
            "llm-decode-bench-no-prompt",
            &["real/llm-decode-bench/rtx6kpro-results_awq.json"],
        ),
        (
            "vllm-bench",
            &[
                "real/vllm-bench/emulated-vllm-0.33.0-c1.json",
                "real/vllm-bench/emulated-vllm-0.33.0-c4.json",
                "real/vllm-bench/emulated-vllm-0.33.0-unlimited-16.json",
            ],
        ),
        (
            "vllm-bench-failed",
            &["hand-written/vllm-bench-partial-failure.hand-written.json"],
        ),
        (
            "sglang-bench",
            &["real/sglang-bench/emulated-sglang-0.5.23.jsonl"],
        ),
        (
            "guidellm",
            &["real/guidellm/emulated-guidellm-0.8.1-benchmarks.yaml"],
        ),
        (
            "aiperf",
            &[
                "real/aiperf/emulated-aiperf-0.13.0-c1-profile_export_aiperf.json",
                "real/aiperf/emulated-aiperf-0.13.0-c4-profile_export_aiperf.json",
            ],
        ),
    ];
    for (id, files) in runs {
        let files: Vec<PathBuf> = files.iter().map(|f| fixtures.join(f)).collect();
        let opts = ImportOptions {
            id: Some(format!("imported-{id}")),
            data: data.clone(),
            force: false,
            meta: match id {
                "paused" => Some(csv_meta.clone()),
                "llm-decode-bench" => None,
                "sglang-bench" => Some(model_meta.clone()),
                _ => Some(meta.clone()),
            },
            cards: serde_json::Value::Null,
            context_tokens: None,
            gpu_index: None,
            dry_run: false,
        };
        import(None, &files, &opts).unwrap();
    }
    // Two dated reruns of the GLM run, the second slower at 8K: a series.
    let glm = data.join("glm-5.3-flash-h200x4-vllm");
    for (id, at, factor) in [
        ("imported-rerun-a", "2026-10-01T10:00:00Z", 1.0),
        ("imported-rerun-b", "2026-11-01T10:00:00Z", 0.8),
    ] {
        let to = data.join(id);
        std::fs::create_dir_all(to.join("cells")).unwrap();
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(glm.join("run.json")).unwrap()).unwrap();
        meta["measured_at"] = at.into();
        std::fs::write(to.join("run.json"), meta.to_string()).unwrap();
        for (rel, bytes) in files_under(&glm.join("cells")) {
            let mut cell: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            if cell["context_tokens"] == 8192
                && let Some(t) = cell["total_tok_per_s"].as_f64()
            {
                cell["total_tok_per_s"] = (t * factor).into();
            }
            std::fs::write(to.join("cells").join(rel), cell.to_string()).unwrap();
        }
    }
    // GLM on 4 GPUs against the CSV run on 2: a comparison with a per-GPU view.
    let mut sets: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("comparisons.json")).unwrap()).unwrap();
    sets["comparisons"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "title": "GLM-5.3-Flash on H200 ×4 vs Paused-Model on L40S ×2",
            "runs": ["glm-5.3-flash-h200x4-vllm", "imported-paused"]
        }));
    // Both measured decode with no prompt: ids of "0 (no prompt)" contexts.
    sets["comparisons"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "title": "Two runs with no prompt",
            "runs": ["imported-llm-decode-bench-statuses", "imported-llm-decode-bench-no-prompt"]
        }));
    std::fs::write(data.join("comparisons.json"), sets.to_string()).unwrap();
    let out = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &out).unwrap();
    (tmp, out)
}

/// Every file under `dir` as (relative path, bytes), sorted; the reuse
/// manifest and the runs a build keeps for the next left out.
pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.file_name() != sitegen::app::reuse::MANIFEST)
        // The runs a build read, kept for the next one: not pages.
        .filter(|e| {
            !e.path()
                .strip_prefix(dir)
                .unwrap()
                .starts_with(sitegen::app::reuse::KEPT_RUNS)
        })
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// A reference page read naively, independently of sitegen's own parser:
/// the lines of its markdown tables and its "- Label" / "- value" card pairs.
pub struct ReferencePage {
    pub lines: Vec<String>,
}

impl ReferencePage {
    pub fn load(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap();
        ReferencePage {
            lines: text.lines().map(str::to_string).collect(),
        }
    }

    fn cells(line: &str) -> Vec<String> {
        line.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    }

    /// Rows of the "All measurements" table.
    pub fn measurement_rows(&self) -> Vec<Vec<String>> {
        self.lines
            .iter()
            .filter(|l| l.starts_with("| Prefill |") || l.starts_with("| Sustained decode |"))
            .map(|l| Self::cells(l))
            .collect()
    }

    /// Rows of the decode matrix (context label first).
    pub fn matrix_rows(&self) -> Vec<Vec<String>> {
        let start = self
            .lines
            .iter()
            .position(|l| l == "Sustained decode")
            .unwrap();
        self.lines[start + 3..]
            .iter()
            .take_while(|l| l.starts_with('|'))
            .map(|l| Self::cells(l))
            .collect()
    }

    /// (label, value) pairs of the Hardware, Engine and Run cards.
    pub fn card_fields(&self) -> Vec<(String, String)> {
        let start = self.lines.iter().position(|l| l == "Hardware").unwrap();
        let end = self
            .lines
            .iter()
            .position(|l| l == "Launch command")
            .unwrap();
        let body: Vec<&String> = self.lines[start..end]
            .iter()
            .filter(|l| !["Hardware", "Engine", "Run"].contains(&l.as_str()))
            .collect();
        body.chunks(2)
            .map(|pair| {
                let strip = |s: &str| s.strip_prefix("- ").unwrap_or(s).to_string();
                (strip(pair[0]), strip(pair[1]))
            })
            .collect()
    }

    pub fn launch_command(&self) -> String {
        let i = self
            .lines
            .iter()
            .position(|l| l == "Launch command")
            .unwrap();
        let line = &self.lines[i + 1];
        line.strip_suffix("Prefill").unwrap_or(line).to_string()
    }

    /// (context label, chart value, "N ms TTFT") of each prefill bar.
    pub fn prefill_labels(&self) -> Vec<String> {
        let start = self
            .lines
            .iter()
            .position(|l| l.starts_with("prompt tok/s by context length"))
            .unwrap();
        let end = self
            .lines
            .iter()
            .position(|l| l == "Sustained decode")
            .unwrap();
        self.lines[start..end]
            .iter()
            .map(|l| {
                l.trim_start_matches("prompt tok/s by context length")
                    .to_string()
            })
            .collect()
    }
}

/// How the runs of a made-up data set are spread over setups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setups {
    /// GLM and Step alternately: two long series.
    Two,
    /// Every run a copy of GLM's: one series as long as the data set.
    One,
    /// Every run a model of its own: no series at all.
    Each,
}

/// `count` copies of the bundled runs, dated a night apart per model, their
/// cells hard links (the data takes no room).
pub fn many_runs(data: &Path, count: usize) {
    many_runs_of(data, count, Setups::Two)
}

/// [`many_runs`] with the runs spread over setups as `setups` says.
pub fn many_runs_of(data: &Path, count: usize, setups: Setups) {
    let sources = [
        "glm-5.3-flash-h200x4-vllm",
        "step-3.5-flash-h200x4-vllm-0.29.0",
    ];
    for i in 0..count {
        let source = match setups {
            Setups::Two | Setups::Each => sources[i % 2],
            Setups::One => sources[0],
        };
        let from = data_dir().join(source);
        let to = data.join(format!("run-{i:05}"));
        std::fs::create_dir_all(to.join("cells")).unwrap();
        let mut meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(from.join("run.json")).unwrap()).unwrap();
        let night = match setups {
            Setups::Two => i / 2,
            Setups::One | Setups::Each => i,
        };
        meta["measured_at"] = format!(
            "20{:02}-{:02}-{:02}T02:00:00Z",
            26 + night / 336,
            night / 28 % 12 + 1,
            night % 28 + 1
        )
        .into();
        if setups == Setups::Each {
            let model = meta["model"].as_str().unwrap().to_string();
            meta["model"] = format!("{model} #{i}").into();
        }
        std::fs::write(to.join("run.json"), meta.to_string()).unwrap();
        for cell in std::fs::read_dir(from.join("cells")).unwrap() {
            let cell = cell.unwrap().path();
            let link = to.join("cells").join(cell.file_name().unwrap());
            // A copy where a link cannot cross file systems (a data set in memory).
            std::fs::hard_link(&cell, &link)
                .or_else(|_| std::fs::copy(&cell, &link).map(drop))
                .unwrap();
        }
    }
}

/// Makes every file under `dir` a file of its own, not a hard link to
/// data/ as `many_runs` makes them: a file's change time moves whenever a
/// link to it is made or removed, by any test running meanwhile.
pub fn own_files(dir: &Path) {
    for (rel, bytes) in files_under(dir) {
        save(&dir.join(rel), &bytes);
    }
}

/// Writes `bytes` to `path` by a rename, as an editor saves: a cell of
/// `many_runs` is a hard link to data/, which must not change.
pub fn save(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("saving");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Multiplies the total tok/s of the cell at `path` by `factor`.
pub fn scale_total(path: &Path, factor: f64) {
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["total_tok_per_s"] = (value["total_tok_per_s"].as_f64().unwrap() * factor).into();
    save(
        path,
        serde_json::to_string_pretty(&value).unwrap().as_bytes(),
    );
}

/// Copies run `from` to a new run `to`, measured at `at`; returns its folder.
pub fn copy_run(data: &Path, from: &str, to: &str, at: &str) -> PathBuf {
    let dir = data.join(to);
    std::fs::create_dir_all(dir.join("cells")).unwrap();
    for (rel, bytes) in files_under(&data.join(from)) {
        let path = dir.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    edit_run_meta(&dir, |meta| meta["measured_at"] = at.into());
    dir
}

/// [`copy_run`], the copy a run of `model`: a setup of its own.
pub fn copy_run_as_model(data: &Path, from: &str, to: &str, at: &str, model: &str) -> PathBuf {
    let dir = copy_run(data, from, to, at);
    edit_run_meta(&dir, |meta| meta["model"] = model.into());
    dir
}

/// Edits the `run.json` of the run folder `dir`, saved by a rename.
pub fn edit_run_meta(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let meta_path = dir.join("run.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    edit(&mut meta);
    save(&meta_path, meta.to_string().as_bytes());
}

/// Copies the bundled GLM run as `id`, measured at `at` with engine
/// `version`; decode cells at 8K get their total tok/s times `factor`.
pub fn glm_run(data: &Path, id: &str, at: &str, version: &str, factor: f64) -> Vec<(u32, f64)> {
    let from = data_dir().join("glm-5.3-flash-h200x4-vllm");
    let to = data.join(id);
    std::fs::create_dir_all(to.join("cells")).unwrap();
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(from.join("run.json")).unwrap()).unwrap();
    meta["measured_at"] = at.into();
    meta["engine"]["version"] = version.into();
    std::fs::write(to.join("run.json"), meta.to_string()).unwrap();
    let mut changed = Vec::new();
    for (rel, bytes) in files_under(&from.join("cells")) {
        let mut cell: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        if cell["phase"] == "decode" && cell["context_tokens"] == 8192 && cell["status"] == "valid"
        {
            let total = cell["total_tok_per_s"].as_f64().unwrap() * factor;
            cell["total_tok_per_s"] = total.into();
            changed.push((cell["concurrency"].as_u64().unwrap() as u32, total));
        }
        std::fs::write(to.join("cells").join(rel), cell.to_string()).unwrap();
    }
    changed
}
