//! sgl-project's genai-bench: one run file per (traffic scenario,
//! concurrency), named `<scenario>_<task>[_<model>]_num_concurrency_<N>_time_<T>s.json`,
//! with `aggregated_metrics` (counts, the run's duration, throughputs and
//! `stats.<metric>` with min/max/mean/stddev/sum and p25 ... p99 over the
//! completed requests) and `individual_request_metrics`; and one
//! `experiment_metadata.json` per experiment folder, which alone names the
//! model, the server's GPUs and engine, and the unit of the latencies
//! (`metrics_time_unit`: "s" or "ms"; absent in files older than the key,
//! which wrote seconds).
//!
//! Every run file of one experiment folder makes one run, a cell each. A
//! run file is read with the metadata beside it: in the same folder,
//! `experiment_metadata.json` (as genai-bench writes it) or
//! `<prefix>experiment_metadata.json` where the run file's name starts with
//! that prefix (several experiments' files kept in one folder, as sitegen's
//! corpus keeps them). Without it the file is refused: its latencies' unit
//! and its model are only there.
//!
//! genai-bench's default execution keeps `num_concurrency` users sending
//! one request after another (closed loop) until `max_requests_per_run`
//! requests or `max_time_per_run` seconds; its async engine does the same in
//! closed-loop mode and records `total_arrivals` (the requests sent) and
//! `arrival_requests_per_second` (those over the run's duration): an
//! outcome, not a pace. A run by request rate (`iteration_type` other than
//! `num_concurrency`) has no number of requests in flight and is refused.
//!
//! The experiment's `cmd` (the client's command line, which may hold an API
//! key or a private endpoint) is neither stored nor shown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::Value;

use super::burst::{cells_of, counted_cell, mark_unaccounted, model_display_name, push_unique};
use super::json::{At, parse_python_json};
use super::{Imported, Sniffed, file_name};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{MeasuredBy, Status};

pub(crate) const TOOL: &str = "genai-bench";

/// The metadata file's name (after any prefix).
const METADATA: &str = "experiment_metadata.json";

pub const IMPORTER: super::Importer = super::Importer {
    name: "genai-bench",
    detect,
    one_run_from_all_files: true,
    read: parse_files,
};

/// A run file: `aggregated_metrics` with genai-bench's `stats` and its
/// iteration and count keys.
fn is_run_file(v: &Value) -> bool {
    // Any two of its keys, so that a file missing one is still recognised
    // (and refused naming it).
    v.get("aggregated_metrics").is_some_and(|a| {
        a.get("stats").is_some()
            && [
                "iteration_type",
                "num_concurrency",
                "scenario",
                "run_duration",
                "num_completed_requests",
            ]
            .iter()
            .filter(|k| a.get(**k).is_some())
            .count()
                >= 2
    })
}

/// An `experiment_metadata.json`.
fn is_metadata(v: &Value) -> bool {
    ["benchmark_version", "api_backend", "traffic_scenario"]
        .iter()
        .all(|k| v.get(k).is_some())
}

fn detect(s: &Sniffed) -> bool {
    s.json().is_some_and(|v| is_run_file(v) || is_metadata(v))
}

/// What an experiment's metadata says, read once.
struct Metadata {
    path: PathBuf,
    /// Multiplier from the run files' latencies to milliseconds.
    to_ms: f64,
    /// "s" or "ms", and whether the file stated it.
    unit: (&'static str, bool),
    version: Option<String>,
    task: Option<String>,
    meta: Value,
}

/// The metadata beside `run`: among the files given, else on disk.
fn metadata_for(run: &Path, given: &[(PathBuf, String)]) -> anyhow::Result<(PathBuf, String)> {
    let folder = run.parent().unwrap_or(Path::new(""));
    let name = file_name(run);
    // A prefix the run file's name starts with; the longest wins.
    let fits = |candidate: &Path| -> Option<usize> {
        if candidate.parent().unwrap_or(Path::new("")) != folder {
            return None;
        }
        let prefix = file_name(candidate).strip_suffix(METADATA)?.to_string();
        name.starts_with(&prefix).then_some(prefix.len())
    };
    if let Some((path, text)) = given
        .iter()
        .filter_map(|(p, t)| fits(p).map(|n| (n, p, t)))
        .max_by_key(|(n, _, _)| *n)
        .map(|(_, p, t)| (p, t))
    {
        return Ok((path.clone(), text.clone()));
    }
    let on_disk: Vec<PathBuf> = std::fs::read_dir(if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    })
    .map(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| folder.join(e.file_name()))
            .collect()
    })
    .unwrap_or_default();
    if let Some(path) = on_disk
        .iter()
        .filter_map(|p| fits(p).map(|n| (n, p)))
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
    {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot read the file: {e}", path.display()))?;
        return Ok((path.clone(), text));
    }
    bail!(
        "{}: no {METADATA} beside it: expected {} (genai-bench writes it in the experiment \
         folder, with the run files) or <prefix>{METADATA} where the run file's name starts \
         with <prefix>; it alone says the latencies' unit (metrics_time_unit), the model and \
         the server's GPUs, so sitegen does not read the run without it",
        run.display(),
        folder.join(METADATA).display()
    )
}

fn read_metadata(path: &Path, text: &str) -> anyhow::Result<Metadata> {
    let value = parse_python_json(path, text)?;
    let root = At::root(path, &value);
    if !is_metadata(&value) {
        return Err(root.error(format!(
            "expected genai-bench's {METADATA} (benchmark_version, api_backend, \
             traffic_scenario, ...), found {}",
            root.keys()
        )));
    }
    let unit = match root.opt_str("metrics_time_unit")? {
        None => ("s", false),
        Some("s") => ("s", true),
        Some("ms") => ("ms", true),
        Some(other) => {
            return Err(root.error(format!(
                "metrics_time_unit: expected \"s\" or \"ms\", found {other:?}"
            )));
        }
    };
    let to_ms = if unit.0 == "s" { 1000.0 } else { 1.0 };
    let version = root.opt_str("benchmark_version")?.map(str::to_string);
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
    });
    if let Some(v) = &version {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v.as_str());
    }
    let model = root.opt_str("model")?.filter(|m| !m.trim().is_empty());
    let served = root
        .opt_str("api_model_name")?
        .filter(|m| !m.trim().is_empty());
    if let Some(m) = model.or(served) {
        meta["model"] = Value::from(model_display_name(m));
        meta["served_model"] = Value::from(served.unwrap_or(m));
    }
    if let Some(gpu) = root
        .opt_str("server_gpu_type")?
        .filter(|g| !g.trim().is_empty())
    {
        meta["hardware"]["gpu"] = Value::from(gpu);
    }
    // A string in genai-bench ("1"); a number read as it is.
    let count = match value.get("server_gpu_count") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    root.error(format!(
                        "server_gpu_count: expected a number of GPUs, found {s:?}"
                    ))
                })?,
        ),
        Some(_) => Some(
            root.opt_u64("server_gpu_count")?
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| root.error("server_gpu_count: expected a number of GPUs above 0"))?,
        ),
    };
    if let Some(n) = count {
        meta["hardware"]["gpu_count"] = Value::from(n);
    }
    if let Some(engine) = root
        .opt_str("server_engine")?
        .filter(|e| !e.trim().is_empty())
    {
        meta["engine"] = serde_json::json!({"name": engine.to_ascii_lowercase()});
        if let Some(v) = root
            .opt_str("server_version")?
            .filter(|v| !v.trim().is_empty())
        {
            meta["engine"]["version"] = Value::from(v);
        }
    }
    let task = root.opt_str("task")?.map(str::to_string);
    if let Some(t) = &task
        && !t.ends_with("-to-text")
    {
        return Err(root.error(format!(
            "task: {t}: genai-bench measured no generated text (embeddings or reranking), so \
             no output tokens: sitegen's cells are text generation"
        )));
    }
    match root.opt_str("iteration_type")? {
        None | Some("num_concurrency") => {}
        Some(other) => {
            return Err(root.error(format!(
                "iteration_type: {other}: expected num_concurrency; a run iterated by \
                 {other} has no number of requests in flight to file its cells under"
            )));
        }
    }
    Ok(Metadata {
        path: path.to_path_buf(),
        to_ms,
        unit,
        version,
        task,
        meta,
    })
}

/// A statistic of `stats.<metric>`, when there.
fn stat(stats: &At, metric: &str, key: &str) -> anyhow::Result<Option<f64>> {
    match stats.child(metric) {
        Some(m) => m.opt_f64(key),
        None => Ok(None),
    }
}

/// A statistic that must be there.
fn needed(stats: &At, metric: &str, key: &str) -> anyhow::Result<f64> {
    stat(stats, metric, key)?.ok_or_else(|| {
        stats.error(format!(
            "{metric}.{key}: expected a number (genai-bench's statistics of {metric} over the \
             completed requests), found nothing"
        ))
    })
}

/// How genai-bench's figures differ from docs/measurement.md.
fn definitions(scenario: &str, unit: (&str, bool)) -> BTreeMap<String, String> {
    let unit_said = if unit.1 {
        format!(
            "metrics_time_unit \"{}\" of experiment_metadata.json",
            unit.0
        )
    } else {
        "seconds: experiment_metadata.json has no metrics_time_unit (files older than the key \
         wrote seconds)"
            .to_string()
    };
    [
        (
            "context_tokens".to_string(),
            format!(
                "stats.num_input_tokens.mean: the mean prompt tokens of the completed requests \
                 (traffic scenario {scenario}), as genai-bench's tokenizer counted them"
            ),
        ),
        (
            "concurrency".to_string(),
            "aggregated_metrics.num_concurrency: users each sending its next request when the \
             last one finished (a closed loop), until max_requests_per_run requests or \
             max_time_per_run seconds"
                .to_string(),
        ),
        (
            "total_tok_per_s".to_string(),
            "mean_output_throughput_tokens_per_s: the output tokens of all completed requests \
             (stats.num_output_tokens.sum) / run_duration, from the run's start to its last \
             response; genai-bench calls it a mean, but it is one total over the run"
                .to_string(),
        ),
        (
            "per_request_tok_per_s".to_string(),
            "stats.output_inference_speed.p50: the median over requests of 1 / TPOT".to_string(),
        ),
        (
            "ttft_ms".to_string(),
            format!("stats.ttft.p50, the median TTFT over the completed requests, in {unit_said}"),
        ),
        (
            "tbt_ms".to_string(),
            "stats.tpot.p50: the median over requests of each request's TPOT, (e2e_latency − \
             TTFT) / (output tokens − 1); not a time between streamed chunks"
                .to_string(),
        ),
        (
            "avg_active_requests".to_string(),
            "stats.e2e_latency.sum / run_duration (Little's law), not sampled".to_string(),
        ),
        (
            "completed_requests".to_string(),
            "num_completed_requests; num_error_requests failed".to_string(),
        ),
        (
            "measured_s".to_string(),
            "run_duration (always seconds): the run's duration, not a fixed window".to_string(),
        ),
        (
            "latency".to_string(),
            format!(
                "genai-bench's percentiles (numpy's linear interpolation) over the completed \
                 requests, warm-up and cool-down requests left out if they were asked for: \
                 stats.ttft → ttft_ms, stats.tpot (a request's (e2e − TTFT) / (output tokens \
                 − 1)) → tpot_ms, stats.e2e_latency → e2e_ms; converted from {unit_said}"
            ),
        ),
    ]
    .into_iter()
    .collect()
}

/// What the async engine's arrival keys mean, where a run file has them.
const ARRIVALS: &str = "total_arrivals and arrival_requests_per_second (genai-bench's async \
     engine): in a run by num_concurrency the engine's closed loop keeps that many requests in \
     flight, so total_arrivals is the requests it sent and arrival_requests_per_second is \
     total_arrivals / the run's actual duration: what the load achieved, not a rate the requests \
     were paced at";

pub fn parse_files(files: &[(PathBuf, String)], _given: &super::Given) -> anyhow::Result<Imported> {
    let mut runs = Vec::new();
    let mut metadata_files = Vec::new();
    for (path, text) in files {
        let value = parse_python_json(path, text)?;
        if is_metadata(&value) && !is_run_file(&value) {
            metadata_files.push(path.clone());
        } else {
            runs.push((path, text, value));
        }
    }
    if runs.is_empty() {
        bail!(
            "{}: genai-bench's {METADATA} (the experiment's model, GPUs, traffic scenarios \
             and latency unit), not a run file: import the run files beside it \
             (<scenario>_<task>_..._num_concurrency_<N>_time_<T>s.json), which sitegen reads \
             with it",
            metadata_files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut experiment: Option<Metadata> = None;
    let mut cells = Vec::new();
    let mut warnings = Vec::new();
    let mut names = Vec::new();
    for (path, _text, value) in &runs {
        let root = At::root(path, value);
        if !is_run_file(value) {
            return Err(root.error(format!(
                "expected a genai-bench run file (aggregated_metrics with stats and \
                 iteration_type) or its {METADATA}, found {}",
                root.keys()
            )));
        }
        let agg = root.required("aggregated_metrics", "genai-bench's aggregated metrics")?;
        // The run file's own figures first, then its experiment's metadata.
        let iteration = agg.opt_str("iteration_type")?.unwrap_or("absent");
        if iteration != "num_concurrency" {
            return Err(agg.error(format!(
                "iteration_type: expected num_concurrency, found {iteration}: a run by \
                 {iteration} has no number of requests in flight to file its cell under"
            )));
        }
        let concurrency = match agg.opt_u64("num_concurrency")? {
            Some(n) if n > 0 => u32::try_from(n)
                .map_err(|_| agg.error("num_concurrency: too many requests at once"))?,
            _ => {
                return Err(agg.error(
                    "num_concurrency: expected the number of concurrent users (above 0), \
                     found nothing",
                ));
            }
        };
        let sent = agg.u64("num_requests")?;
        let completed = agg.u64("num_completed_requests")?;
        let failed = agg.u64("num_error_requests")?;
        let duration = agg.positive("run_duration")?;
        let scenario = agg.opt_str("scenario")?.unwrap_or("not stated").to_string();
        let stats = agg.required("stats", "genai-bench's per-metric statistics")?;
        let file_unit = root.opt_str("_time_unit")?;

        let (meta_path, meta_text) = metadata_for(path, files)?;
        let m = match &experiment {
            Some(m) if m.path == meta_path => m,
            Some(m) => bail!(
                "{}: its {METADATA} is {}, but {} belongs to {}: one run is one experiment; \
                 import each experiment folder as a run of its own",
                path.display(),
                meta_path.display(),
                names.first().map_or("the first file", String::as_str),
                m.path.display()
            ),
            None => experiment.insert(read_metadata(&meta_path, &meta_text)?),
        };
        if let Some(u) = file_unit
            && u != m.unit.0
        {
            return Err(root.error(format!(
                "_time_unit: {u}, but {} says metrics_time_unit {}: which unit the latencies \
                 are in is unclear",
                m.path.display(),
                m.unit.0
            )));
        }
        let to_ms = m.to_ms;

        let output_tokens = needed(&stats, "num_output_tokens", "sum")?;
        let context = needed(&stats, "num_input_tokens", "mean")?;
        let mut cell = counted_cell(
            (context.round() as u64, concurrency),
            completed,
            failed,
            output_tokens.round() as u64,
            duration,
        );
        if failed > 0 {
            let codes = agg
                .child("error_codes_frequency")
                .filter(|c| c.value.as_object().is_some_and(|m| !m.is_empty()))
                .map(|c| c.value.to_string());
            cell.reason = Some(Reason::of(Part::RequestsFailed {
                failed,
                requests: Some(completed + failed),
                first: None,
                error_codes: codes,
                kinds: Vec::new(),
            }));
        }
        mark_unaccounted(&mut cell, sent, completed, failed);
        // The requests behind the statistics: the completed ones, less any
        // warm-up or cool-down genai-bench left out (sum / mean says how many).
        let behind = match (stat(&stats, "ttft", "sum")?, stat(&stats, "ttft", "mean")?) {
            (Some(s), Some(m)) if m > 0.0 => Some((s / m).round() as u64),
            _ => Some(completed),
        };
        let q = |metric: &str| -> anyhow::Result<Option<Quantiles>> {
            Quantiles::read(behind, |p| Ok(stat(&stats, metric, p)?.map(|v| v * to_ms)))
        };
        cell.latency = Latency {
            ttft_ms: q("ttft")?,
            tpot_ms: q("tpot")?,
            tbt_ms: None,
            e2e_ms: q("e2e_latency")?,
        }
        .known()
        .map(Box::new);
        if cell.status == Status::Valid {
            cell.total_tok_per_s =
                Some(match agg.opt_f64("mean_output_throughput_tokens_per_s")? {
                    Some(t) => t,
                    None => output_tokens / duration,
                });
            cell.ttft_median_ms = stat(&stats, "ttft", "p50")?.map(|v| v * to_ms);
            cell.tbt_median_ms = stat(&stats, "tpot", "p50")?.map(|v| v * to_ms);
            cell.per_request_tok_per_s = stat(&stats, "output_inference_speed", "p50")?;
            cell.avg_active_requests =
                stat(&stats, "e2e_latency", "sum")?.map(|s| s * to_ms / 1000.0 / duration);
            for (metric, column) in [
                ("ttft", "TTFT"),
                ("tpot", "time between tokens"),
                ("output_inference_speed", "per-request tok/s"),
            ] {
                if stat(&stats, metric, "p50")?.is_none() {
                    warnings.push(format!(
                        "{}: aggregated_metrics.stats.{metric}.p50: absent: {column} left empty",
                        path.display()
                    ));
                }
            }
        }
        let mut definitions = definitions(&scenario, m.unit);
        if agg.value.get("total_arrivals").is_some()
            || agg.value.get("arrival_requests_per_second").is_some()
        {
            definitions.insert("arrival_requests_per_second".into(), ARRIVALS.into());
        }
        if cell.latency.is_none() {
            definitions.remove("latency");
        }
        let mut raw = serde_json::json!({ "aggregated_metrics": agg.value.clone() });
        if let Some(u) = file_unit {
            raw["_time_unit"] = Value::from(u);
        }
        crate::model::redact::redact_json(&mut raw);
        cell.measured_by = Some(MeasuredBy {
            tool: TOOL.into(),
            definitions,
            raw,
        });
        let settings = serde_json::json!({
            "scenario": scenario,
            "num_concurrency": concurrency,
            "batch_size": agg.value.get("batch_size"),
        });
        push_unique(&mut cells, path.display().to_string(), cell, settings)?;
        names.push(file_name(path));
    }
    let m = experiment.expect("every run file has its metadata");
    let mut meta = m.meta;
    meta["source"] = Value::from(format!(
        "{TOOL} run files: {} (with {})",
        names.join(", "),
        file_name(&m.path)
    ));
    let layout = format!(
        "genai-bench {}{}, latencies in {}",
        m.version.as_deref().unwrap_or("(no benchmark_version)"),
        m.task.map_or_else(String::new, |t| format!(", task {t}")),
        if m.unit.1 {
            format!("\"{}\" (metrics_time_unit)", m.unit.0)
        } else {
            "seconds (no metrics_time_unit)".into()
        }
    );
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layout);
    imported.warnings = warnings;
    Ok(imported)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"aggregated_metrics": {"scenario": "D(100,100)", "num_concurrency": 4,
        "batch_size": 1, "iteration_type": "num_concurrency", "run_duration": 10.0,
        "mean_output_throughput_tokens_per_s": 80.0, "num_error_requests": 0,
        "num_completed_requests": 8, "num_requests": 8, "error_codes_frequency": {},
        "stats": {"ttft": {"mean": 0.2, "sum": 1.6, "p50": 0.2, "p90": 0.3, "p95": 0.35, "p99": 0.4},
                  "tpot": {"mean": 0.01, "sum": 0.08, "p50": 0.01},
                  "e2e_latency": {"mean": 1.2, "sum": 9.6, "p50": 1.2},
                  "output_inference_speed": {"p50": 100.0},
                  "num_input_tokens": {"mean": 100.0, "sum": 800},
                  "num_output_tokens": {"mean": 100.0, "sum": 800}}}}"#;

    const META: &str = r#"{"cmd": "genai-bench --api-key sk-secret", "benchmark_version": "0.0.2",
        "api_backend": "openai", "traffic_scenario": ["D(100,100)"], "model": "org/M",
        "api_model_name": "org/M-FP8", "task": "text-to-text", "server_gpu_type": "H100",
        "server_gpu_count": "2", "server_engine": "SGLang", "server_version": "0.5.0",
        "iteration_type": "num_concurrency"}"#;

    fn inputs(run: &str, meta: Option<&str>) -> Vec<(PathBuf, String)> {
        let mut v = vec![(
            PathBuf::from("x/D100_100_text-to-text_num_concurrency_4_time_10s.json"),
            run.to_string(),
        )];
        if let Some(m) = meta {
            v.push((PathBuf::from("x/experiment_metadata.json"), m.to_string()));
        }
        v
    }

    fn given() -> super::super::Given {
        super::super::Given::default()
    }

    #[test]
    fn a_run_file_reads_with_its_metadata_in_seconds_when_unstated() {
        let imported = parse_files(&inputs(RUN, Some(META)), &given()).unwrap();
        let crate::model::Cell::Decode(c) = &imported.cells[0] else {
            panic!("a decode cell")
        };
        assert_eq!((c.context_tokens, c.concurrency), (100, 4));
        assert_eq!(c.status, Status::Valid);
        assert_eq!(c.total_tok_per_s, Some(80.0));
        assert_eq!(c.ttft_median_ms, Some(200.0));
        assert_eq!(c.tbt_median_ms, Some(10.0));
        let l = c.latency.as_ref().unwrap();
        assert_eq!(l.ttft_ms.as_ref().unwrap().p99, Some(400.0));
        assert_eq!(l.ttft_ms.as_ref().unwrap().requests, Some(8));
        assert_eq!(imported.meta["hardware"]["gpu_count"], 2);
        assert_eq!(imported.meta["engine"]["name"], "sglang");
        assert_eq!(imported.meta["model"], "M");
        assert_eq!(imported.meta["served_model"], "org/M-FP8");
        let text = serde_json::to_string(&imported.cells).unwrap() + &imported.meta.to_string();
        assert!(
            !text.contains("sk-secret") && !text.contains("cmd"),
            "{text}"
        );
    }

    #[test]
    fn milliseconds_are_read_as_milliseconds_and_a_unit_mismatch_is_refused() {
        let ms = META.replace(
            "\"iteration_type\"",
            "\"metrics_time_unit\": \"ms\", \"iteration_type\"",
        );
        let imported = parse_files(&inputs(RUN, Some(&ms)), &given()).unwrap();
        let crate::model::Cell::Decode(c) = &imported.cells[0] else {
            panic!()
        };
        assert_eq!(c.ttft_median_ms, Some(0.2));
        let run = RUN.replacen('{', "{\"_time_unit\": \"s\", ", 1);
        let err = parse_files(&inputs(&run, Some(&ms)), &given())
            .unwrap_err()
            .to_string();
        assert!(err.contains("_time_unit: s"), "{err}");
    }

    #[test]
    fn requests_neither_completed_nor_failed_make_the_cell_not_valid() {
        let run = RUN.replace("\"num_requests\": 8", "\"num_requests\": 10");
        let imported = parse_files(&inputs(&run, Some(META)), &given()).unwrap();
        let crate::model::Cell::Decode(c) = &imported.cells[0] else {
            panic!()
        };
        assert_eq!(c.status, Status::Error);
        assert_eq!(c.total_tok_per_s, None);
        let reason = c.reason.as_ref().unwrap().to_string();
        assert!(
            reason.contains("2 of 10 requests neither completed nor failed"),
            "{reason}"
        );
    }

    #[test]
    fn refusals_name_the_file_and_what_was_expected() {
        let err = parse_files(&inputs(RUN, None), &given())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no experiment_metadata.json beside it"),
            "{err}"
        );
        let err = parse_files(
            &[(PathBuf::from("x/experiment_metadata.json"), META.into())],
            &given(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not a run file"), "{err}");
        let paced = RUN.replace(
            "\"iteration_type\": \"num_concurrency\"",
            "\"iteration_type\": \"batch_size\"",
        );
        let err = parse_files(&inputs(&paced, Some(META)), &given())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("iteration_type: expected num_concurrency"),
            "{err}"
        );
        let count = META.replace("\"2\"", "\"two\"");
        let err = parse_files(&inputs(RUN, Some(&count)), &given())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("experiment_metadata.json: top level: server_gpu_count"),
            "{err}"
        );
    }

    #[test]
    fn a_prefixed_metadata_file_is_found_for_the_run_files_it_prefixes() {
        let files = vec![
            (
                PathBuf::from("x/a-run_num_concurrency_1_time_1s.json"),
                RUN.to_string(),
            ),
            (
                PathBuf::from("x/b-experiment_metadata.json"),
                META.to_string(),
            ),
        ];
        assert!(
            parse_files(&files, &given()).is_err(),
            "b- is not a-'s prefix"
        );
        let files = vec![
            (
                PathBuf::from("x/a-run_num_concurrency_1_time_1s.json"),
                RUN.to_string(),
            ),
            (
                PathBuf::from("x/a-experiment_metadata.json"),
                META.to_string(),
            ),
        ];
        assert!(parse_files(&files, &given()).is_ok());
    }
}
