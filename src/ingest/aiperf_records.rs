//! NVIDIA AIPerf's per-request records, `profile_export.jsonl`: one JSON
//! object per request, `metadata` (its ids, its phase, when it was sent)
//! and `metrics` (`{value, unit}` each) or an `error` (`{code, type,
//! message}`).
//!
//! The records hold neither the concurrency nor the model: those are in
//! the summary AIPerf writes beside them, `profile_export_aiperf.json`
//! (`<stem>_aiperf.json` for `<stem>.jsonl`), which the import reads for
//! them. The cell's figures are aggregated from the profiling-phase
//! records (warm-up records left out) as AIPerf aggregates them
//! (`aiperf/metrics/metric_dicts.py`, `benchmark_duration_metric.py`):
//! - requests: the records without an error; failed: those with one;
//! - percentiles: numpy's `np.percentile` (linear interpolation between
//!   the two nearest ranks) over the requests' values; `inter_chunk_latency`
//!   over every gap of every request;
//! - the duration: the latest `max_response_timestamp` − the earliest
//!   `min_request_timestamp`, in ns;
//! - output tokens: the sum of `output_sequence_length` (AIPerf's `total_osl`).
//!
//! Each figure is checked against the summary beside: where AIPerf states
//! it and the records give another number (beyond the last digits of a
//! float), the file is refused, naming the figure and the summary, rather
//! than print a number AIPerf did not. The 2025-10 layout (`credit_phase`,
//! `timestamp_ns`, per-record `min_request_timestamp`) reproduces AIPerf's
//! summary; the later layout (`benchmark_phase`, `request_start_ns`,
//! `request_end_ns`) carries no per-record timestamps in AIPerf's own terms,
//! so its duration is not reproduced and the file is refused, pointing to
//! the summary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value;

use super::burst::{counted_cell, set_model};
use super::json::{At, parse_python_json, parse_python_json_line};
use super::{Imported, Sniffed, file_name};
use crate::model::reason::{FailedKind, Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{MeasuredBy, Status};

pub(crate) const TOOL: &str = "AIPerf";

pub const IMPORTER: super::Importer = super::Importer {
    name: "aiperf-records",
    detect: |s: &Sniffed| s.first_line.as_ref().is_some_and(is_record),
    one_run_from_all_files: false,
    read: |inputs, _| parse(&inputs[0].0, &inputs[0].1),
};

/// One line of `profile_export.jsonl`: `metadata` with a request id, and
/// `metrics` or `error`.
fn is_record(v: &Value) -> bool {
    v.get("metadata")
        .is_some_and(|m| m.get("x_request_id").is_some() || m.get("conversation_id").is_some())
        && (v.get("metrics").is_some() || v.get("error").is_some())
}

/// The summary AIPerf writes beside `file`: `<stem>_aiperf.json`.
fn summary_beside(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or_else(
        || "profile_export".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    file.with_file_name(format!("{stem}_aiperf.json"))
}

/// numpy's default percentile: linear interpolation between the two
/// nearest ranks of the sorted values (`sorted` is not empty).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] + (sorted[high] - sorted[low]) * (rank - low as f64)
}

/// A metric's values over the requests, in its unit, as AIPerf's summary
/// states its statistics.
#[derive(Default)]
struct Values {
    unit: Option<String>,
    values: Vec<f64>,
}

impl Values {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        v
    }
    fn stat(&self, stat: &str) -> Option<f64> {
        if self.values.is_empty() {
            return None;
        }
        let sorted = self.sorted();
        match stat {
            "avg" => Some(self.values.iter().sum::<f64>() / self.values.len() as f64),
            "min" => sorted.first().copied(),
            "max" => sorted.last().copied(),
            p => p
                .strip_prefix('p')
                .and_then(|n| n.parse::<f64>().ok())
                .map(|n| percentile(&sorted, n)),
        }
    }
    /// The multiplier to milliseconds of its unit, when it is a time.
    fn to_ms(&self) -> Option<f64> {
        match self.unit.as_deref().unwrap_or("ms") {
            "ms" => Some(1.0),
            "sec" | "s" => Some(1000.0),
            "us" => Some(1e-3),
            "ns" => Some(1e-6),
            _ => None,
        }
    }
}

/// The two metric names of each figure: the 2025-10 layout's and the later one's.
const TTFT: &[&str] = &["ttft", "time_to_first_token"];
const ITL: &[&str] = &["inter_token_latency"];
const ICL: &[&str] = &["inter_chunk_latency"];
const E2E: &[&str] = &["request_latency"];
const ISL: &[&str] = &["input_sequence_length"];
const OSL: &[&str] = &["output_sequence_length"];
const PER_USER: &[&str] = &["output_token_throughput_per_user"];

/// Whether two numbers are the same figure as AIPerf prints it: equal to
/// the last digits of a float (summation order), not otherwise.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

pub fn parse(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let mut metrics: BTreeMap<&'static str, Values> = BTreeMap::new();
    let mut completed = 0u64;
    let mut kinds: Vec<FailedKind> = Vec::new();
    let mut failed = 0u64;
    let mut warmup = 0u64;
    let mut first_request: Option<u64> = None;
    let mut last_response: Option<u64> = None;
    let mut layout: Option<&'static str> = None;
    let names: [(&'static str, &[&str]); 7] = [
        ("ttft", TTFT),
        ("itl", ITL),
        ("icl", ICL),
        ("e2e", E2E),
        ("isl", ISL),
        ("osl", OSL),
        ("per_user", PER_USER),
    ];
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let value = parse_python_json_line(file, line, n)?;
        let at = At {
            file,
            path: format!("line {n}"),
            value: &value,
        };
        if !is_record(&value) {
            return Err(at.error(format!(
                "expected an AIPerf record (metadata with x_request_id, and metrics or \
                 error), found {}",
                at.keys()
            )));
        }
        let meta = at.required("metadata", "the record's metadata")?;
        let (phase, this_layout) = match (
            meta.opt_str("credit_phase")?,
            meta.opt_str("benchmark_phase")?,
        ) {
            (Some(p), _) => (p, "2025-10 (credit_phase, timestamp_ns)"),
            (None, Some(p)) => (p, "later (benchmark_phase, request_start_ns)"),
            (None, None) => {
                return Err(meta.error(
                    "credit_phase or benchmark_phase: expected the record's phase (warmup or \
                     profiling), found neither",
                ));
            }
        };
        match layout {
            None => layout = Some(this_layout),
            Some(l) if l != this_layout => {
                return Err(meta.error(format!(
                    "{this_layout} record after {l} ones: one file is one AIPerf run"
                )));
            }
            Some(_) => {}
        }
        match phase {
            "profiling" => {}
            "warmup" => {
                warmup += 1;
                continue;
            }
            other => {
                return Err(meta.error(format!(
                    "phase: expected warmup or profiling, found {other}"
                )));
            }
        }
        if let Some(error) = at.child("error") {
            failed += 1;
            let kind = error
                .first_child(&["type", "message"])
                .and_then(|t| t.value.as_str())
                .unwrap_or("error")
                .to_string();
            match kinds.iter_mut().find(|k| k.kind == kind) {
                Some(k) => k.count += 1,
                None => kinds.push(FailedKind { kind, count: 1 }),
            }
            continue;
        }
        completed += 1;
        let m = at.required("metrics", "the request's metrics")?;
        for (key, tags) in names {
            let Some(metric) = m.first_child(tags) else {
                continue;
            };
            let entry = metrics.entry(key).or_default();
            if let Some(unit) = metric.opt_str("unit")? {
                match &entry.unit {
                    Some(u) if u != unit => {
                        return Err(
                            metric.error(format!("unit: {unit}, where the records before say {u}"))
                        );
                    }
                    Some(_) => {}
                    None => entry.unit = Some(unit.to_string()),
                }
            }
            match metric.value.get("value") {
                Some(Value::Array(items)) => {
                    for (j, v) in items.iter().enumerate() {
                        entry.values.push(v.as_f64().ok_or_else(|| {
                            metric.error(format!("value[{j}]: expected a number, found {v}"))
                        })?);
                    }
                }
                _ => entry.values.push(metric.f64("value")?),
            }
        }
        let stamp = |key: &str| -> anyhow::Result<Option<u64>> {
            match m.child(key) {
                Some(t) => t.opt_u64("value"),
                None => Ok(None),
            }
        };
        if let Some(t) = stamp("min_request_timestamp")? {
            first_request = Some(first_request.map_or(t, |f| f.min(t)));
        }
        if let Some(t) = stamp("max_response_timestamp")? {
            last_response = Some(last_response.map_or(t, |l| l.max(t)));
        }
    }
    let layout = layout.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: expected AIPerf's per-request records (profile_export.jsonl), found no line",
            file.display()
        )
    })?;
    let summary_path = summary_beside(file);
    let summary_name = file_name(&summary_path);
    if completed + failed == 0 {
        bail!(
            "{}: no record of the profiling phase ({warmup} warm-up records): nothing was \
             measured",
            file.display()
        );
    }
    // The duration, in AIPerf's terms, or the file is refused.
    let duration_s = match (first_request, last_response) {
        (Some(f), Some(l)) if l > f => (l - f) as f64 / 1e9,
        _ if completed == 0 => 0.0,
        _ => bail!(
            "{}: the records ({layout} layout) carry no min_request_timestamp and \
             max_response_timestamp metrics, from which AIPerf computes benchmark_duration; \
             sitegen does not reconstruct AIPerf's duration from other timestamps: import \
             {summary_name}, which AIPerf writes beside it",
            file.display()
        ),
    };

    // The summary beside: the concurrency and the model, and every figure
    // checked against it.
    let summary_text = std::fs::read_to_string(&summary_path).map_err(|e| {
        anyhow::anyhow!(
            "{}: AIPerf's per-request records state neither the concurrency nor the model: \
             expected {} beside it (AIPerf writes profile_export_aiperf.json with the \
             records), which could not be read: {e}",
            file.display(),
            summary_path.display()
        )
    })?;
    let summary = parse_python_json(&summary_path, &summary_text)?;
    let root = At::root(&summary_path, &summary);
    if !super::aiperf::looks_like(&summary) {
        return Err(root.error(format!(
            "expected AIPerf's summary of {}, found {}",
            file_name(file),
            root.keys()
        )));
    }
    super::aiperf::refuse_sessions(&root)?;
    let aiperf_layout = super::aiperf::layout(&summary);
    let concurrency = super::aiperf::concurrency(&root, &aiperf_layout)?;
    let mismatch = |what: &str, ours: f64, theirs: f64| {
        anyhow::anyhow!(
            "{}: {what}: the records give {ours}, and AIPerf's summary beside them ({}) states \
             {theirs}: sitegen does not print a number AIPerf did not; import {summary_name}",
            file.display(),
            summary_path.display()
        )
    };
    let single = |names: &[&str]| -> anyhow::Result<Option<f64>> {
        match super::aiperf::metric(&root, names) {
            Some(m) => m.opt_f64("avg"),
            None => Ok(None),
        }
    };
    for (what, names, ours) in [
        ("request_count", &["request_count"][..], completed as f64),
        (
            "error_request_count",
            &["error_request_count"][..],
            failed as f64,
        ),
    ] {
        if let Some(theirs) = single(names)?
            && !same(ours, theirs)
        {
            return Err(mismatch(what, ours, theirs));
        }
    }
    let output_tokens = metrics.get("osl").map_or(0.0, |v| v.values.iter().sum());
    if completed > 0 {
        for (what, names, ours) in [
            (
                "benchmark_duration",
                &["benchmark_duration"][..],
                duration_s,
            ),
            (
                "total_osl",
                &["total_osl", "total_output_sequence_length"][..],
                output_tokens,
            ),
        ] {
            if let Some(theirs) = single(names)?
                && !same(ours, theirs)
            {
                return Err(mismatch(what, ours, theirs));
            }
        }
    }
    // Each per-request metric's statistics.
    for (key, tags) in names {
        let Some(values) = metrics.get(key) else {
            continue;
        };
        let Some(m) = super::aiperf::metric(&root, tags) else {
            continue;
        };
        for stat in [
            "avg", "min", "max", "p1", "p5", "p25", "p50", "p75", "p90", "p95", "p99",
        ] {
            if let (Some(ours), Some(theirs)) = (values.stat(stat), m.opt_f64(stat)?)
                && !same(ours, theirs)
            {
                return Err(mismatch(&format!("{}.{stat}", tags[0]), ours, theirs));
            }
        }
    }

    // The latencies in milliseconds, from the unit their records state.
    let ms_of = |key: &str, stat: &str| -> anyhow::Result<Option<f64>> {
        match metrics.get(key) {
            Some(v) => {
                let to_ms = v.to_ms().ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: {key}: unit: expected ms, sec, us or ns, found {}",
                        file.display(),
                        v.unit.as_deref().unwrap_or("none")
                    )
                })?;
                Ok(v.stat(stat).map(|x| x * to_ms))
            }
            None => Ok(None),
        }
    };
    let context = match metrics.get("isl").and_then(|v| v.stat("avg")) {
        Some(c) => c,
        None if completed == 0 => 0.0,
        None => bail!(
            "{}: input_sequence_length: no record states it, so the cell's context is unknown",
            file.display()
        ),
    };
    let mut cell = counted_cell(
        (context.round() as u64, concurrency),
        completed,
        failed,
        output_tokens.round() as u64,
        duration_s,
    );
    if failed > 0 {
        cell.reason = Some(Reason::of(if completed == 0 {
            Part::AllRequestsFailed {
                requests: failed,
                no_prompt_length: true,
            }
        } else {
            Part::RequestsFailed {
                failed,
                requests: Some(completed + failed),
                first: None,
                error_codes: None,
                kinds,
            }
        }));
    }
    if completed > 0 {
        let q = |key: &str| -> anyhow::Result<Option<Quantiles>> {
            Quantiles::read(Some(completed), |p| ms_of(key, p))
        };
        cell.latency = Latency {
            ttft_ms: q("ttft")?,
            tpot_ms: q("itl")?,
            tbt_ms: q("icl")?,
            e2e_ms: q("e2e")?,
        }
        .known()
        .map(Box::new);
    }
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(output_tokens / duration_s);
        cell.ttft_median_ms = ms_of("ttft", "p50")?;
        cell.tbt_median_ms = ms_of("itl", "p50")?;
        cell.per_request_tok_per_s = metrics.get("per_user").and_then(|v| v.stat("p50"));
    }
    let mut definitions = definitions();
    if cell.latency.is_none() {
        definitions.remove("latency");
    }
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.into(),
        definitions,
        raw: serde_json::json!({
            "records": completed + failed + warmup,
            "profiling": completed + failed,
            "warmup": warmup,
            "summary": summary_name,
        }),
    });
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!(
            "{TOOL} per-request records: {} (concurrency and model from {summary_name})",
            file_name(file)
        ),
    });
    if let Some(v) = root.str_at("aiperf_version") {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v);
    }
    if let Some(id) = root
        .first_child(&[
            "input_config.models.items.0.name",
            "input_config.endpoint.model_names.0",
            "input_config.model_names.0",
        ])
        .and_then(|m| m.value.as_str())
    {
        set_model(&mut meta, id);
    }
    let mut imported = Imported::of_decode_cells(
        meta,
        vec![cell],
        format!("AIPerf per-request records, {layout} layout; {aiperf_layout} summary beside"),
    );
    if warmup > 0 {
        imported.warnings.push(format!(
            "{}: {warmup} warm-up records left out, as AIPerf leaves them out of its figures",
            file.display()
        ));
    }
    Ok(imported)
}

fn definitions() -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            "mean input_sequence_length over the profiling phase's completed records, as \
             AIPerf's tokenizer counted it",
        ),
        (
            "concurrency",
            "the profiling phase's concurrency, from AIPerf's summary beside the records \
             (input_config): the records do not state it",
        ),
        (
            "total_tok_per_s",
            "the sum of the records' output_sequence_length (AIPerf's total_osl) / the \
             benchmark's duration: the latest max_response_timestamp − the earliest \
             min_request_timestamp",
        ),
        (
            "per_request_tok_per_s",
            "median (numpy's linear interpolation) over the completed records of \
             output_token_throughput_per_user",
        ),
        (
            "ttft_ms",
            "median (numpy's linear interpolation) of the records' ttft; the prompt cache is \
             not warmed first",
        ),
        (
            "tbt_ms",
            "median (numpy's linear interpolation) of the records' inter_token_latency, each \
             request's (latency − TTFT) / (output tokens − 1)",
        ),
        (
            "completed_requests",
            "the profiling phase's records without an error; those with one failed",
        ),
        (
            "measured_s",
            "AIPerf's benchmark_duration, computed from the records: the latest \
             max_response_timestamp − the earliest min_request_timestamp; not a fixed window",
        ),
        (
            "latency",
            "percentiles as AIPerf computes them (np.percentile, linear interpolation) over \
             the profiling phase's completed records: ttft → ttft_ms, inter_token_latency → \
             tpot_ms, inter_chunk_latency (every gap between streamed chunks of every request) \
             → tbt_ms, request_latency → e2e_ms; each checked against AIPerf's summary beside",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_numpys_linear_interpolation() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 100.0), 4.0);
        assert!((percentile(&v, 90.0) - 3.7).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
    }

    #[test]
    fn records_are_recognised_and_summaries_are_not() {
        let line = r#"{"metadata":{"x_request_id":"a","credit_phase":"profiling"},"metrics":{}}"#;
        assert!(is_record(&serde_json::from_str(line).unwrap()));
        assert!(!is_record(
            &serde_json::json!({"records": {}, "input_config": {}})
        ));
        assert_eq!(
            summary_beside(Path::new("d/run1-profile_export.jsonl")),
            Path::new("d/run1-profile_export_aiperf.json")
        );
    }

    #[test]
    fn a_layout_without_aiperfs_timestamps_is_refused_naming_the_summary() {
        let line = r#"{"metadata":{"x_request_id":"a","benchmark_phase":"profiling","request_start_ns":1,"request_end_ns":2},"metrics":{"request_latency":{"value":1.0,"unit":"ms"}},"error":null}"#;
        let err = parse(Path::new("d/profile_export.jsonl"), line)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("d/profile_export.jsonl: "), "{err}");
        assert!(err.contains("import profile_export_aiperf.json"), "{err}");
    }

    #[test]
    fn a_bad_line_names_the_line() {
        let err = parse(
            Path::new("f.jsonl"),
            "{\"metadata\": {\"x_request_id\": \"a\"}, \"metrics\": {}}\n[1]",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("f.jsonl"), "{err}");
    }
}
