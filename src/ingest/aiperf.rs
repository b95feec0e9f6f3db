//! NVIDIA AIPerf's `profile_export_aiperf.json`: one file per cell (one
//! concurrency, one input length); several files make one run, as with
//! vllm bench serve.
//!
//! Two layouts, read alike:
//! - before 0.4: the metrics under `records.<tag>` (`ttft`,
//!   `inter_token_latency`, ...), the model and concurrency under
//!   `input_config.endpoint.model_names` and `input_config.loadgen`;
//! - later: the metrics at the top (`time_to_first_token`, ...),
//!   `aiperf_version`, the model under `input_config.models.items`, the
//!   concurrency under the profiling phase of `input_config.phases` (or
//!   `input_config.loadgen`).
//!
//! Each metric is `{unit, avg, p50, ...}`. Token counts prefer the server's
//! own (`usage_*`, where AIPerf recorded them) to AIPerf's tokenizer's.
//! `profile_export_aiperf.csv` holds the same figures but neither the
//! concurrency nor the model, and is refused with that reason.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::burst::{cells_of, counted_cell, push_unique, set_model};
use super::json::{At, parse_python_json};
use super::{Imported, file_name};
use crate::model::reason::{FailedKind, Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{MeasuredBy, Status};

pub(crate) const TOOL: &str = "AIPerf";

/// The CSV's first line.
pub(crate) const CSV_HEADER: &str = "Metric,avg,min,max";

pub const IMPORTER: super::Importer = super::Importer {
    name: "aiperf",
    detect: |s| {
        s.text.starts_with(CSV_HEADER)
            || s.json().is_some_and(looks_like)
            || s.first_line.as_ref().is_some_and(is_telemetry_sample)
    },
    one_run_from_all_files: true,
    read: parse_files,
};

pub(crate) fn looks_like(value: &Value) -> bool {
    // GenAI-Perf, AIPerf's predecessor, shares its shape: never called AIPerf.
    if super::genai_perf::looks_like(value) {
        return false;
    }
    value.get("aiperf_version").is_some()
        || (value.get("input_config").is_some()
            && (value.get("records").is_some() || value.get("time_to_first_token").is_some()))
}

/// A line of AIPerf's GPU telemetry export (`gpu_telemetry_export.jsonl`):
/// DCGM samples, no measurement of a cell.
fn is_telemetry_sample(value: &Value) -> bool {
    ["dcgm_url", "gpu_uuid", "telemetry_data"]
        .iter()
        .all(|k| value.get(k).is_some())
}

/// "AIPerf 0.13.0", or the layout of files without a version.
pub fn layout(value: &Value) -> String {
    match value.get("aiperf_version").and_then(Value::as_str) {
        Some(v) => format!("AIPerf {v}"),
        None if value.get("records").is_some() => {
            "AIPerf before 0.4 (metrics under records, no version recorded)".into()
        }
        None => "AIPerf (no version recorded)".into(),
    }
}

/// A metric object by any of its names: at the top (0.4 and later) or
/// under `records` (earlier).
pub(crate) fn metric<'a>(root: &At<'a>, names: &[&str]) -> Option<At<'a>> {
    names
        .iter()
        .find_map(|n| root.first_child(&[n, &format!("records.{n}")]))
}

/// A statistic of a metric in milliseconds, converted from its unit.
pub(crate) fn ms(m: &At, stat: &str) -> anyhow::Result<Option<f64>> {
    let Some(v) = m.opt_f64(stat)? else {
        return Ok(None);
    };
    let to_ms = match m.str_at("unit").unwrap_or("ms") {
        "ms" => 1.0,
        "sec" | "s" => 1000.0,
        "us" => 1e-3,
        "ns" => 1e-6,
        other => return Err(m.error(format!("unit: expected ms, sec, us or ns, found {other}"))),
    };
    Ok(Some(v * to_ms))
}

/// A metric's single value (`avg`), e.g. a count or a duration.
fn single(root: &At, names: &[&str]) -> anyhow::Result<Option<f64>> {
    match metric(root, names) {
        Some(m) => m.opt_f64("avg"),
        None => Ok(None),
    }
}

/// The percentiles AIPerf states of each latency (`p50`, `p90`, `p95`,
/// `p99`, converted from the metric's unit), over the `completed` requests
/// its per-request metrics cover. A percentile the file lacks stays absent.
fn latency(root: &At, completed: u64) -> anyhow::Result<Option<Latency>> {
    let of = |names: &[&str]| -> anyhow::Result<Option<Quantiles>> {
        let Some(m) = metric(root, names) else {
            return Ok(None);
        };
        Quantiles::read(Some(completed), |p| ms(&m, p))
    };
    Ok(Latency {
        ttft_ms: of(&["time_to_first_token", "ttft"])?,
        // A request's (latency − TTFT) / (output tokens − 1): its TPOT.
        tpot_ms: of(&["inter_token_latency"])?,
        // Every gap between streamed chunks, of all requests.
        tbt_ms: of(&["inter_chunk_latency"])?,
        e2e_ms: of(&["request_latency"])?,
    }
    .known())
}

/// How AIPerf's latencies were put in the cell's `latency`.
const LATENCY_DEFINITION: &str = "AIPerf's percentiles over the requests that completed \
     (request_count): time_to_first_token (ttft) → ttft_ms, with the prompt cache not warmed \
     first; inter_token_latency, each request's (latency − TTFT) / (output tokens − 1), → \
     tpot_ms; inter_chunk_latency, every gap between two streamed chunks of any request, → \
     tbt_ms, where a chunk of several tokens counts once, not once per token; request_latency \
     → e2e_ms; output tokens as AIPerf's tokenizer counted them";

/// Refuses a replay of multi-turn sessions or of a trace: AIPerf's
/// `multi_turn` and `mooncake_trace` datasets (`input_config.input.
/// custom_dataset_type` in 0.8, `input_config.datasets[].format` later) and
/// synthetic conversations of more than one turn. Their prompts grow turn
/// by turn and are found in the prefix cache, so the summary is not a
/// decode cell at one context, and it gives no figure per turn for a
/// sessions window (docs/data-format.md, "Sessions").
pub(crate) fn refuse_sessions(root: &At) -> anyhow::Result<()> {
    let mut kinds: Vec<(String, &str)> = Vec::new();
    if let Some(kind) = root.str_at("input_config.input.custom_dataset_type") {
        kinds.push(("input_config.input.custom_dataset_type".into(), kind));
    }
    for (i, d) in root
        .child("input_config.datasets")
        .map(|d| d.elements())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if let Some(kind) = d.str_at("format") {
            kinds.push((format!("input_config.datasets.{i}.format"), kind));
        }
    }
    for (field, kind) in kinds {
        if matches!(kind, "multi_turn" | "mooncake_trace") {
            return Err(root.error(format!(
                "{field} is {kind:?}: a replay of multi-turn sessions (each turn resends a growing history, \
                 found in the prefix cache), not a decode cell at one context; AIPerf's summary gives no \
                 figure per turn, so it is not imported (sitegen run --sessions measures sessions)"
            )));
        }
    }
    for path in [
        "input_config.input.conversation.turn.mean",
        "input_config.conversation.turn.mean",
    ] {
        if let Some((parent, key)) = path.rsplit_once('.')
            && let Some(at) = root.child(parent)
            && let Some(turns) = at.opt_f64(key)?
            && turns > 1.0
        {
            return Err(root.error(format!(
                "{path} is {turns}: synthetic conversations of several turns (each resends a growing \
                 history), not a decode cell at one context; AIPerf's summary gives no figure per turn, \
                 so it is not imported (sitegen run --sessions measures sessions)"
            )));
        }
    }
    Ok(())
}

/// The requests kept in flight, from the profiling phase's load settings.
pub(crate) fn concurrency(root: &At, layout: &str) -> anyhow::Result<u32> {
    let phases = root
        .child("input_config.phases")
        .map(|p| p.elements())
        .unwrap_or_default();
    let load = phases
        .into_iter()
        .find(|p| p.str_at("kind") == Some("profiling") || p.str_at("name") == Some("profiling"))
        .or_else(|| root.child("input_config.loadgen"));
    let Some(load) = load else {
        return Err(root.error(format!(
            "{layout}: expected the load settings under input_config.phases (the profiling \
             phase) or input_config.loadgen, found neither"
        )));
    };
    match load.opt_u64("concurrency")? {
        Some(n) if n > 0 => u32::try_from(n).map_err(|_| load.error("concurrency: too many")),
        _ => Err(load.error(format!(
            "expected a concurrency, found none ({}): a run paced by request rate has no \
             number of requests in flight to file it under; profile it with --concurrency N",
            load.keys()
        ))),
    }
}

pub fn parse_files(files: &[(PathBuf, String)], given: &super::Given) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut model: Option<(String, PathBuf)> = None;
    let mut version = None;
    let mut layouts = Vec::new();
    let mut warnings = Vec::new();
    let (telemetry, files): (Vec<_>, Vec<_>) = files.iter().partition(|(_, text)| {
        text.lines()
            .next()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(|v| is_telemetry_sample(&v))
    });
    for (file, _) in &telemetry {
        let said = format!(
            "{}: AIPerf's GPU telemetry export (DCGM samples of power, use and memory per GPU), not a measured cell",
            file.display()
        );
        if files.is_empty() {
            anyhow::bail!("{said}; import the profile_export_aiperf.json AIPerf writes beside it");
        }
        warnings.push(format!("{said}: not imported"));
    }
    for &(file, text) in &files {
        if text.starts_with(CSV_HEADER) {
            anyhow::bail!(
                "{}: AIPerf's CSV export records neither the concurrency nor the model; \
                 import profile_export_aiperf.json, which AIPerf writes beside it",
                file.display()
            );
        }
        let value = parse_python_json(file, text)?;
        let root = At::root(file, &value);
        if !value.is_object() {
            return Err(root.error("expected AIPerf's profile export (a JSON object)"));
        }
        refuse_sessions(&root)?;
        if super::genai_perf::looks_like(&value) {
            anyhow::bail!(
                "{}: a GenAI-Perf export (AIPerf's predecessor), not AIPerf's: import it as genai-perf",
                file.display()
            );
        }
        let layout = layout(&value);
        version = version.or(root.str_at("aiperf_version").map(str::to_string));
        let id = root
            .first_child(&[
                "input_config.models.items.0.name",
                "input_config.endpoint.model_names.0",
                "input_config.model_names.0",
            ])
            .and_then(|m| m.value.as_str().map(str::to_string));
        match (&model, id) {
            (Some((first, first_file)), Some(id)) if *first != id => {
                return Err(root.error(format!(
                    "model: expected {first} as in {}, found {id}: one run is one model",
                    first_file.display()
                )));
            }
            (None, Some(id)) => model = Some((id, file.clone())),
            _ => {}
        }
        let concurrency = concurrency(&root, &layout)?;
        let missing = |what: &str, names: &str| {
            root.error(format!(
                "{layout}: expected {what} ({names}, at the top or under records), found nothing"
            ))
        };
        let duration_s = single(&root, &["benchmark_duration"])?
            .ok_or_else(|| missing("the benchmark's duration", "benchmark_duration"))?;
        let completed = single(&root, &["request_count"])?
            .ok_or_else(|| missing("the request count", "request_count"))?
            .round() as u64;
        let errors: Vec<(String, u64)> = root
            .child("error_summary")
            .map(|e| e.elements())
            .unwrap_or_default()
            .iter()
            .map(|e| {
                let kind = e
                    .first_child(&["error_details.type", "error_details.message"])
                    .and_then(|t| t.value.as_str().map(str::to_string))
                    .unwrap_or_else(|| "error".into());
                (kind, e.f64_at("count").unwrap_or(0.0) as u64)
            })
            .collect();
        let failed = single(&root, &["error_request_count"])?
            .map(|f| f.round() as u64)
            .unwrap_or_else(|| errors.iter().map(|(_, n)| n).sum());
        // The server's own counts where AIPerf kept them, else its tokenizer's.
        let server_counts = single(&root, &["total_usage_completion_tokens"])?;
        let output_tokens = server_counts
            .or(single(
                &root,
                &["total_osl", "total_output_sequence_length"],
            )?)
            .ok_or_else(|| {
                missing(
                    "the output tokens",
                    "total_usage_completion_tokens or total_osl",
                )
            })?;
        let mut context_given = false;
        let stated =
            single(&root, &["usage_prompt_tokens"])?.or(single(&root, &["input_sequence_length"])?);
        let context = match (stated, given.context_tokens) {
            (Some(c), _) => c,
            (None, Some(c)) => {
                context_given = true;
                c as f64
            }
            (None, None) => {
                return Err(root.error(format!(
                    "{layout}: the file states no input length (no usage_prompt_tokens or \
                     input_sequence_length metric{}), so the cell's context is unknown: give \
                     it with --context (e.g. --context 8K)",
                    prompts_from(&root)
                )));
            }
        };
        let mut cell = counted_cell(
            (context.round() as u64, concurrency),
            completed,
            failed,
            output_tokens.round() as u64,
            duration_s,
        );
        if cell.status == Status::Error && !errors.is_empty() {
            cell.reason = Some(Reason::of(Part::RequestsFailed {
                failed,
                requests: Some(completed + failed),
                first: None,
                error_codes: None,
                kinds: errors
                    .iter()
                    .map(|(kind, count)| FailedKind {
                        kind: kind.clone(),
                        count: *count,
                    })
                    .collect(),
            }));
        }
        let mut definitions = definitions(server_counts.is_some());
        // What the file states, whatever the cell's status.
        cell.latency = latency(&root, completed)?.map(Box::new);
        if cell.latency.is_some() {
            definitions.insert("latency".into(), LATENCY_DEFINITION.into());
        }
        if context_given {
            definitions.insert(
                "context_tokens".into(),
                "given with --context: the file states no input length".into(),
            );
        }
        if cell.status == Status::Valid {
            if duration_s <= 0.0 {
                return Err(root.error("benchmark_duration: expected a duration above 0"));
            }
            cell.total_tok_per_s = Some(output_tokens / duration_s);
            let mut absent = |names: &[&str], column: &str| {
                warnings.push(format!(
                    "{}: no {} metric: {column} left empty",
                    file.display(),
                    crate::model::format::or_list(names)
                ));
            };
            match metric(&root, &["time_to_first_token", "ttft"]) {
                Some(m) => cell.ttft_median_ms = ms(&m, "p50")?,
                None => absent(&["time_to_first_token", "ttft"], "TTFT"),
            }
            match metric(&root, &["inter_token_latency"]) {
                Some(m) => cell.tbt_median_ms = ms(&m, "p50")?,
                None => absent(&["inter_token_latency"], "time between tokens"),
            }
            match metric(&root, &["output_token_throughput_per_user"]) {
                Some(m) => cell.per_request_tok_per_s = m.opt_f64("p50")?,
                None => absent(&["output_token_throughput_per_user"], "per-request tok/s"),
            }
            // AIPerf's own percentiles across requests (its std stays in the raw record).
            let in_ms = |m: &At| -> anyhow::Result<Option<crate::model::Spread>> {
                let scale = ms(m, "p50")?
                    .zip(m.opt_f64("p50")?)
                    .map_or(1.0, |(a, b)| if b != 0.0 { a / b } else { 1.0 });
                m.spread(scale)
            };
            cell.spread = crate::model::CellSpread {
                ttft_ms: metric(&root, &["time_to_first_token", "ttft"])
                    .map(|m| in_ms(&m))
                    .transpose()?
                    .flatten(),
                tbt_ms: metric(&root, &["inter_token_latency"])
                    .map(|m| in_ms(&m))
                    .transpose()?
                    .flatten(),
                per_request_tok_per_s: metric(&root, &["output_token_throughput_per_user"])
                    .map(|m| m.spread(1.0))
                    .transpose()?
                    .flatten(),
            }
            .known()
            .map(Box::new);
            cell.avg_active_requests = single(&root, &["effective_concurrency"])?;
            if single(&root, &["usage_discrepancy_count"])?.is_some_and(|n| n > 0.0) {
                let note = "; AIPerf counted the tokens with its own tokenizer, which disagreed \
                     with the server's counts (usage_discrepancy_count above 0)";
                for column in ["tbt_ms", "per_request_tok_per_s"] {
                    definitions
                        .entry(column.into())
                        .and_modify(|d| d.push_str(note));
                }
            }
        }
        let mut telemetry_warnings = Vec::new();
        if let Some(listed) = super::gpu_summary::aiperf(&root, &mut telemetry_warnings)? {
            match super::gpu_summary::choose(&listed, given.gpu_index.as_deref(), given.gpu_count) {
                Ok(chosen) => {
                    if given.gpu_index.is_none() && chosen.gpus.len() < listed.len() {
                        warnings.push(format!(
                            "{}: telemetry_data: the run's GPUs taken as {}; --gpu-index chooses others",
                            file.display(),
                            chosen.how
                        ));
                    }
                    let exporters: Vec<&str> = chosen
                        .gpus
                        .iter()
                        .filter_map(|g| g.endpoint.as_deref())
                        .collect();
                    let mut exporters = exporters;
                    exporters.dedup();
                    let (t, defs) = super::gpu_summary::telemetry(
                        &chosen,
                        &format!("AIPerf's DCGM telemetry ({})", exporters.join(", ")),
                        cell.total_tok_per_s,
                        duration_s,
                    );
                    cell.telemetry = Some(Box::new(crate::model::CellTelemetry {
                        server: None,
                        gpus: Some(t),
                    }));
                    definitions.extend(defs);
                }
                Err(why) => warnings.push(format!(
                    "{}: telemetry_data: the GPU telemetry is not imported: {why}",
                    file.display()
                )),
            }
        }
        warnings.extend(
            telemetry_warnings
                .into_iter()
                .map(|w| format!("{}: {w}", file.display())),
        );
        let mut raw = value.clone();
        crate::model::redact::redact_json(&mut raw);
        cell.measured_by = Some(MeasuredBy {
            tool: TOOL.into(),
            definitions,
            raw,
        });
        layouts.push(layout);
        let settings = value.get("input_config").cloned().unwrap_or(Value::Null);
        push_unique(&mut cells, file.display().to_string(), cell, settings)?;
    }
    if cells.is_empty() {
        anyhow::bail!("no AIPerf profile export among the files");
    }
    layouts.dedup();
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} profile exports: {}", names.join(", ")),
    });
    if let Some(v) = version {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v);
    }
    if let Some((m, _)) = &model {
        set_model(&mut meta, m);
    }
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layouts.join("; "));
    imported.warnings = warnings;
    Ok(imported)
}

/// Where the prompts came from, when the file says: ", its prompts came
/// from a dataset file".
fn prompts_from(root: &At) -> String {
    let kinds: Vec<&str> = root
        .child("input_config.datasets")
        .map(|d| d.elements())
        .unwrap_or_default()
        .iter()
        .filter_map(|d| d.str_at("type"))
        .collect();
    match kinds.as_slice() {
        [] => String::new(),
        k => format!("; its prompts came from a dataset of type {}", k.join(", ")),
    }
}

fn definitions(server_counts: bool) -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            if server_counts {
                "mean prompt tokens as the server counted them (usage_prompt_tokens)"
            } else {
                "mean input sequence length, as AIPerf's tokenizer counted it"
            },
        ),
        (
            "total_tok_per_s",
            if server_counts {
                "output tokens as the server counted them (total_usage_completion_tokens) / \
                 the benchmark's duration, from the first request to the last response: the \
                 requests still running at the duration limit are waited for and counted"
            } else {
                "output tokens as AIPerf's tokenizer counted them (total_osl) / the \
                 benchmark's duration, from the first request to the last response"
            },
        ),
        (
            "per_request_tok_per_s",
            "median over requests of AIPerf's output token throughput per user (1 / the \
             request's inter-token latency)",
        ),
        (
            "ttft_ms",
            "median over the requests; the prompt cache is not warmed first",
        ),
        (
            "tbt_ms",
            "median over requests of each request's inter-token latency ((latency − TTFT) / \
             (output tokens − 1))",
        ),
        (
            "avg_active_requests",
            "AIPerf's effective concurrency: requests in flight, time-weighted",
        ),
        ("measured_s", "the benchmark's duration, not a fixed window"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}
