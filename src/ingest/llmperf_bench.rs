//! philschmid/llmperf-bench: a wrapper that runs ray-project llmperf's
//! `token_benchmark_ray.py` at concurrencies 1 ... 128 and writes two files
//! per model, both keyed by the concurrency ("1", "2", ..., "128"):
//!
//! - `<model>_tp_<N>_results.json`: at each concurrency, llmperf's own
//!   summary (`version` "2023-08-31", `results_*` keys, seconds). Imported:
//!   one run, a decode cell per concurrency, each value read by the llmperf
//!   importer ([`super::llmperf`]), which takes the medians it states
//!   (`results_ttft_s_quantiles_p50`, ...) and never a mean for a median.
//! - `<model>_tp_<N>_summary.json`: at each concurrency, `concurrency`,
//!   the *requested* `input_token_length` / `output_token_length` (not the
//!   lengths sent), `first-time-to-token_mean_in_ms` (the mean TTFT),
//!   `latency_ms_per_token` (the mean of llmperf's inter-token latency, TTFT
//!   included) and `throughput_token_per_s` (llmperf's
//!   `results_mean_output_throughput_token_per_s`: output tokens / the
//!   test's duration). Means only, with no request, failure or duration
//!   count: refused, naming the `_results.json` beside it, which holds the
//!   same tests with their counts and medians.
//!
//! Only one public repository was found to hold these files
//! (philschmid/llmperf-bench).

use std::path::Path;

use anyhow::bail;
use serde_json::Value;

use super::burst::{ReadCell, cells_of, push_unique, set_model};
use super::json::{At, parse_python_json};
use super::{Imported, Sniffed, file_name};

pub(crate) const TOOL: &str = "llmperf-bench";

pub const IMPORTER: super::Importer = super::Importer {
    name: "llmperf-bench",
    detect,
    one_run_from_all_files: false,
    read: |inputs, _| parse(&inputs[0].0, &inputs[0].1),
};

/// The summary keys that make a value of the keyed summary.
const SUMMARY_KEYS: [&str; 3] = [
    "concurrency",
    "first-time-to-token_mean_in_ms",
    "throughput_token_per_s",
];

/// An object keyed by concurrencies ("1", "2", ...), every value of one
/// kind: `results` (llmperf summaries) or not (the keyed summary).
fn keyed(v: &Value) -> Option<Kind> {
    let m = v.as_object().filter(|m| !m.is_empty())?;
    if !m.keys().all(|k| k.parse::<u64>().is_ok()) {
        return None;
    }
    if m.values().all(super::llmperf::looks_like) {
        Some(Kind::Results)
    } else if m
        .values()
        .all(|v| SUMMARY_KEYS.iter().filter(|k| v.get(**k).is_some()).count() >= 2)
    {
        Some(Kind::Summary)
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Results,
    Summary,
}

fn detect(s: &Sniffed) -> bool {
    s.json().and_then(keyed).is_some()
}

/// The `_results.json` written beside a `_summary.json`.
fn results_beside(file: &Path) -> String {
    let name = file_name(file);
    match name.rsplit_once("_summary") {
        Some((stem, ext)) => format!("{stem}_results{ext}"),
        None => "the *_results.json written beside it".into(),
    }
}

pub fn parse(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let value = parse_python_json(file, text)?;
    let root = At::root(file, &value);
    match keyed(&value) {
        Some(Kind::Results) => {}
        Some(Kind::Summary) => bail!(
            "{}: llmperf-bench's keyed summary: at each concurrency it holds means only \
             (first-time-to-token_mean_in_ms, the mean TTFT; latency_ms_per_token, the mean of \
             llmperf's inter-token latency, TTFT included), throughput_token_per_s (output \
             tokens / the test's duration), the requested input and output lengths (not those \
             sent), and no count of requests, failures or the test's duration, so no cell can \
             be told valid and no median filled in; import {} beside it, which holds llmperf's \
             own summary of the same tests at each concurrency",
            file.display(),
            results_beside(file)
        ),
        None => {
            return Err(root.error(format!(
                "expected llmperf-bench's results keyed by concurrency (\"1\", \"2\", ..., each \
                 an llmperf summary with results_* keys), found {}",
                root.keys()
            )));
        }
    }
    let mut entries: Vec<(u64, At)> = value
        .as_object()
        .expect("keyed results are an object")
        .keys()
        .filter_map(|k| Some((k.parse::<u64>().ok()?, root.child(k)?)))
        .collect();
    entries.sort_by_key(|(k, _)| *k);
    let mut warnings = Vec::new();
    let mut cells: Vec<ReadCell> = Vec::new();
    let mut model: Option<String> = None;
    let mut versions: Vec<String> = Vec::new();
    let mut first_time: Option<u64> = None;
    for (key, at) in &entries {
        let cell = super::llmperf::read_summary(at, &mut warnings)?;
        if u64::from(cell.concurrency) != *key {
            return Err(at.error(format!(
                "num_concurrent_requests: {}, but the test is filed under concurrency \
                 \"{key}\": which is the concurrency is unclear",
                cell.concurrency
            )));
        }
        if let Some(id) = at.opt_str("model")? {
            match &model {
                Some(m) if m != id => {
                    return Err(at.error(format!(
                        "model: expected {m} as at the other concurrencies, found {id}: one run \
                         is one model"
                    )));
                }
                Some(_) => {}
                None => model = Some(id.to_string()),
            }
        }
        if let Some(t) = at.opt_u64("timestamp")?.filter(|t| *t > 0) {
            first_time = Some(first_time.map_or(t, |f| f.min(t)));
        }
        versions.push(super::llmperf::layout(at.value));
        let mut cell = cell;
        if let Some(by) = cell.measured_by.as_mut() {
            by.tool = TOOL.into();
            by.definitions.insert(
                "source".into(),
                "llmperf's own summary of the test, under its concurrency in llmperf-bench's \
                 keyed results (*_results.json); every figure read as the llmperf importer \
                 reads it: medians from llmperf's quantiles, never from a mean"
                    .into(),
            );
        }
        push_unique(
            &mut cells,
            format!("{}: \"{key}\"", file.display()),
            cell,
            super::llmperf::settings_of(at.value),
        )?;
    }
    versions.dedup();
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} results: {}", file_name(file)),
    });
    if let Some(m) = &model {
        set_model(&mut meta, m);
    }
    if let Some(t) = first_time {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t);
        meta["measured_at"] = Value::from(humantime::format_rfc3339_seconds(at).to_string());
    }
    let layout = format!(
        "llmperf-bench results keyed by concurrency ({} tests; {})",
        entries.len(),
        versions.join("; ")
    );
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layout);
    imported.warnings = warnings;
    Ok(imported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_files_are_told_apart_from_other_objects() {
        let summary = serde_json::json!({"1": {"concurrency": 1, "first-time-to-token_mean_in_ms": 1.0,
            "throughput_token_per_s": 2.0}});
        assert_eq!(keyed(&summary), Some(Kind::Summary));
        assert_eq!(keyed(&serde_json::json!({"a": {}})), None);
        assert_eq!(keyed(&serde_json::json!({})), None);
        assert_eq!(keyed(&serde_json::json!({"1": {"x": 1}})), None);
    }

    #[test]
    fn the_summary_is_refused_naming_the_results_beside_it() {
        let text = r#"{"1": {"concurrency": 1, "input_token_length": 750, "output_token_length": 150,
            "first-time-to-token_mean_in_ms": 158.1, "throughput_token_per_s": 30.4,
            "latency_ms_per_token": 30.3}}"#;
        let err = parse(Path::new("d/m_tp_1_summary.json"), text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("d/m_tp_1_summary.json: llmperf-bench's keyed summary"),
            "{err}"
        );
        assert!(
            err.contains("import m_tp_1_results.json beside it"),
            "{err}"
        );
        assert!(err.contains("means only"), "{err}");
    }
}
