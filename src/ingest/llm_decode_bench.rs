//! The results JSON of llm_decode_bench.py (llm-inference-bench), the tool
//! that made the reference pages: `metadata`, `prefill` (by context),
//! `results` (decode cells), `event_log`, `startup_diagnostics`, ...
//!
//! Layouts read: files before 0.2 (no `metadata.version`, results with
//! `total_tokens` / `wall_time`), 0.2–0.3, 0.4.x (`startup_diagnostics` with
//! nvidia-smi's CSV query, `client_output_tokens`), and 0.6.x
//! (`hardware_run_summary.gpu_count`). Cards from what the file states: the
//! GPU name and count from nvidia-smi's CSV query or table, the engine and its
//! version from the event log ("startup engine vLLM 0.20.2 models=[...]").
//!
//! Traps, from the tool's source: times are in seconds; a cell skipped for
//! KV capacity is absent from `results` (its Over capacity follows from the
//! planned contexts x concurrency, `max_tokens` and `max_total_tokens`);
//! looped and failed cells carry sentinel throughputs (-3, -4) with
//! `loop_detected` / `failure_reason`; a queued cell keeps its throughput and
//! is marked by `capacity_limited` / `effective_concurrency`;
//! `per_request_avg_tps` divides by the requested concurrency; the engine
//! version is only in `event_log` and the GPU only in nvidia-smi's text.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::Imported;
use super::file_name;
use super::json::{At, element_path, expect_object, parse_python_json};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{
    Cell, CellKey, CellTelemetry, DecodeCell, EnergySource, GpuTelemetry, MeasuredBy, PrefillCell,
    ServerCounters, Status,
};

pub(crate) const TOOL: &str = "llm-inference-bench";

/// `aggregate_tps` of a cell the tool skipped, found looping, or failed.
const SKIPPED_TPS: f64 = -2.0;
const LOOP_TPS: f64 = -3.0;
const FAILED_TPS: f64 = -4.0;

pub const IMPORTER: super::Importer = super::Importer {
    name: "llm-decode-bench",
    detect: |s| s.json().is_some_and(looks_like),
    one_run_from_all_files: false,
    read: |inputs, _| parse(&inputs[0].0, &inputs[0].1),
};

pub(crate) fn looks_like(value: &Value) -> bool {
    let meta = value.get("metadata");
    let matrix = meta.and_then(|m| m.get("concurrency_levels")).is_some()
        && meta.and_then(|m| m.get("context_lengths")).is_some()
        && value.get("results").is_some();
    // Its other modes write a versioned file of another shape, which
    // `parse` refuses by name.
    let other_mode = meta.and_then(|m| m.get("mode")).is_some()
        && meta.and_then(|m| m.get("version")).is_some()
        && (value.get("runs").is_some() || value.get("level_summaries").is_some());
    matrix || other_mode
}

/// A file of one of the tool's other modes (`completion_stats`, ...),
/// refused with its version, its mode and the keys it has.
fn refuse_other_mode(file: &Path, value: &Value) -> anyhow::Result<()> {
    let meta = value.get("metadata");
    let Some(mode) = meta.and_then(|m| m.get("mode")).and_then(Value::as_str) else {
        return Ok(());
    };
    if value.get("results").is_some() {
        return Ok(());
    }
    let keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    anyhow::bail!(
        "{}: {} in mode {mode}: its keys are {}, not the decode matrix sitegen reads \
         (`results`, one entry per context and concurrency, written without --mode); \
         the file holds no cell of sustained decode or cold prefill",
        file.display(),
        layout(value),
        keys.join(", ")
    )
}

/// "llm_decode_bench.py 0.4.17", or the layout of files that predate the
/// version key.
pub fn layout(value: &Value) -> String {
    match value
        .get("metadata")
        .and_then(|m| m.get("version"))
        .and_then(Value::as_str)
    {
        Some(v) => format!("llm_decode_bench.py {v}"),
        None => "llm_decode_bench.py before 0.2 (no metadata.version)".into(),
    }
}

fn decode_definitions(queued: bool) -> BTreeMap<String, String> {
    let mut d = BTreeMap::new();
    d.insert(
        "avg_active_requests".to_string(),
        "the server's running requests, from its metrics (avg_running_reqs)".to_string(),
    );
    if queued {
        d.insert(
            "per_request_tok_per_s".to_string(),
            "total tok/s / the requests the server ran at once (effective_concurrency); the \
             tool's own per_request_avg_tps divides by the requested N"
                .to_string(),
        );
    }
    d
}

fn prefill_definitions(method: &str) -> BTreeMap<String, String> {
    let mut d = BTreeMap::new();
    if method == "prometheus" {
        d.insert(
            "total_tok_per_s".to_string(),
            "prefill: prompt tokens / the server's prefill time from its Prometheus counters, \
             not the client's TTFT"
                .to_string(),
        );
    }
    d.insert(
        "ttft_ms".to_string(),
        "prefill: rounded by the tool to the millisecond (and prompt tok/s to the token)"
            .to_string(),
    );
    d
}

pub fn parse(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let value = parse_python_json(file, text)?;
    expect_object(file, &value, "an llm_decode_bench.py results file")?;
    refuse_other_mode(file, &value)?;
    let root = At::root(file, &value);
    let metadata = root.required("metadata", "the run's metadata (an object)")?;
    let max_tokens = metadata.u64("max_tokens")?;
    let max_total = metadata.opt_u64("max_total_tokens")?.unwrap_or(0);

    let mut cells: BTreeMap<CellKey, Placed> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (i, r) in root.array("results")?.iter().enumerate() {
        let path = element_path("", "results", i);
        let at = At {
            file,
            path: path.clone(),
            value: r,
        };
        let skipped = at.opt_f64("aggregate_tps")? == Some(SKIPPED_TPS);
        let cell = Cell::Decode(decode_cell(&at, max_tokens, max_total, &mut warnings)?);
        insert(
            file,
            &mut cells,
            Placed {
                place: path,
                cell,
                skipped,
            },
        )?;
    }
    if let Some(prefill) = value.get("prefill").filter(|p| !p.is_null()) {
        let Value::Object(by_context) = prefill else {
            return Err(root.error("prefill: expected an object keyed by context length"));
        };
        for (ctx, p) in by_context {
            let path = format!("prefill.{ctx}");
            let at = At {
                file,
                path: path.clone(),
                value: p,
            };
            let context_tokens: u64 = ctx
                .parse()
                .map_err(|_| at.error("expected a context length in tokens as the key"))?;
            let cell = Cell::Prefill(prefill_cell(&at, context_tokens)?);
            insert(
                file,
                &mut cells,
                Placed {
                    place: path.clone(),
                    cell,
                    skipped: false,
                },
            )?;
        }
    }
    // Planned cells the tool skipped because N x (context + max_tokens)
    // exceeded the token budget: absent from `results`.
    let levels = number_list(&metadata, "concurrency_levels")?;
    let contexts = number_list(&metadata, "context_lengths")?;
    // A prefill-only run planned no decode: no cell is missing for capacity.
    let prefill_only = metadata.opt_bool("prefill_only")? == Some(true)
        || (root.array("results")?.is_empty()
            && value.get("prefill").is_some_and(|p| !p.is_null()));
    if max_total > 0 && !prefill_only {
        for &ctx in &contexts {
            for &n in &levels {
                let need = n * (ctx + max_tokens);
                let n32 = u32::try_from(n).map_err(|_| metadata.error("concurrency too large"))?;
                let cell = DecodeCell::without_figures(
                    ctx,
                    n32,
                    Status::OverCapacity,
                    Some(Reason::of(Part::OverBudget {
                        requests: n,
                        context_tokens: ctx,
                        output_tokens: max_tokens,
                        budget_tokens: max_total,
                    })),
                );
                let key = Cell::Decode(cell.clone()).key();
                if need > max_total && !cells.contains_key(&key) {
                    let place = "metadata".to_string();
                    cells.insert(
                        key,
                        Placed {
                            place,
                            cell: Cell::Decode(cell),
                            skipped: true,
                        },
                    );
                }
            }
        }
    }

    let version = metadata.opt_str("version")?;
    let decode_test = if prefill_only {
        "none"
    } else if metadata.opt_str("decode_mode")? == Some("request-count") {
        "request_burst"
    } else {
        "fixed_duration"
    };
    let mut meta = serde_json::json!({
        "run": {
            "benchmark_tool": {"name": TOOL},
            "decode_test": decode_test,
            "max_output_tokens": max_tokens,
        },
        "source": format!("llm_decode_bench.py results: {}", file_name(file)),
    });
    if let Some(v) = version {
        meta["run"]["benchmark_tool"]["version"] = Value::from(v);
    }
    if let Some(secs) = metadata.opt_f64("duration_per_test")?
        && decode_test == "fixed_duration"
    {
        meta["run"]["seconds_per_measurement"] = Value::from(secs);
    }
    match metadata.opt_str("prefill_mode")? {
        Some("integrated_decode_scout") | None
            if value
                .get("prefill")
                .is_some_and(|p| !p.is_null() && p != &serde_json::json!({})) =>
        {
            meta["run"]["prefill_mode"] = Value::from("decode_warmup");
        }
        Some("standalone_cold") => meta["run"]["prefill_mode"] = Value::from("standalone"),
        _ => {}
    }
    if let Some(model) = metadata.opt_str("model")? {
        super::burst::set_model(&mut meta, model);
    }
    let logged = engine_of_event_log(value.get("event_log"));
    let engine = metadata
        .opt_str("engine")?
        .filter(|e| !e.is_empty())
        .map(str::to_lowercase)
        .or_else(|| logged.as_ref().map(|(name, _)| name.clone()));
    if let Some(engine) = engine {
        meta["engine"] = serde_json::json!({"name": engine});
        if let Some(v) = logged
            .and_then(|(_, v)| v)
            .or_else(|| engine_version(value.get("event_log")))
        {
            meta["engine"]["version"] = Value::from(v);
        }
    }
    let gpus = nvidia_smi_query_gpus(&root).or_else(|| nvidia_smi_gpus(&value));
    let summary_count = root
        .child("hardware_run_summary.gpu_count")
        .and_then(|c| c.value.as_u64())
        .and_then(|c| u32::try_from(c).ok())
        .filter(|c| *c > 0);
    if let Some((gpu, listed)) = gpus {
        meta["hardware"] =
            serde_json::json!({"gpu": gpu, "gpu_count": summary_count.unwrap_or(listed)});
    }
    Ok(Imported {
        meta,
        cells: cells.into_values().map(|p| p.cell).collect(),
        paced: Vec::new(),
        notes_markdown: None,
        warnings,
        layout: layout(&value),
        split: Vec::new(),
    })
}

/// A cell with where in the file it came from, and whether the tool
/// skipped it (a sentinel, or absent for capacity) rather than measured it.
struct Placed {
    place: String,
    cell: Cell,
    skipped: bool,
}

/// Adds a cell; a second one with the same key is an error, except that a
/// measured cell replaces a skipped one (a resumed run lists both).
fn insert(file: &Path, cells: &mut BTreeMap<CellKey, Placed>, new: Placed) -> anyhow::Result<()> {
    let key = new.cell.key();
    match cells.get(&key) {
        None => {}
        Some(old) if old.skipped => {}
        Some(_) if new.skipped => return Ok(()),
        Some(old) => anyhow::bail!(
            "{}: {}: a second measurement of the cell {} holds ({} tokens, {} at once)",
            file.display(),
            new.place,
            old.place,
            key.context_tokens,
            key.concurrency
        ),
    }
    cells.insert(key, new);
    Ok(())
}

fn number_list(at: &At, key: &str) -> anyhow::Result<Vec<u64>> {
    at.array(key)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_u64().ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: {}: expected a whole number >= 0, found {v}",
                    at.file.display(),
                    element_path(&at.path, key, i)
                )
            })
        })
        .collect()
}

fn decode_cell(
    at: &At,
    max_tokens: u64,
    max_total: u64,
    warnings: &mut Vec<String>,
) -> anyhow::Result<DecodeCell> {
    let mut absent = |key: &str, column: &str| {
        warnings.push(format!(
            "{}: {}: no {key} (absent or NaN): {column} left empty",
            at.file.display(),
            at.path
        ));
    };
    let n = at.u64("concurrency")?;
    let concurrency = u32::try_from(n)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| at.error(format!("concurrency: expected 1 or more, found {n}")))?;
    let ctx = at.u64("context_tokens")?;
    let tps = at.opt_f64("aggregate_tps")?;
    let looped = at.opt_bool("loop_detected")? == Some(true) || tps == Some(LOOP_TPS);
    let failure = at.opt_str("failure_reason")?.filter(|r| !r.is_empty());
    let mut cell = DecodeCell::without_figures(ctx, concurrency, Status::Valid, None);
    cell.measured_s = at.opt_f64("measurement_seconds")?.filter(|s| *s > 0.0);
    if at.value.get("measurement_seconds").is_none() && tps.is_some_and(|t| t >= 0.0) {
        absent("measurement_seconds", "the window's length");
    }
    cell.completed_requests = at.opt_u64("completed_request_count")?;
    // The tokens the client received inside the window (0.4 and later).
    cell.output_tokens = at.opt_u64("client_output_tokens")?;
    let errors = at.opt_u64("num_errors")?.unwrap_or(0);
    let mut queued = false;
    if looped {
        cell.status = Status::Looped;
        cell.reason = Some(Reason::of(Part::ToolLooped {
            message: at
                .opt_str("ready_reason")?
                .filter(|r| !r.is_empty())
                .map(str::to_string),
        }));
    } else if tps == Some(FAILED_TPS) || failure.is_some() {
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::ToolFailure {
            message: failure.map(str::to_string),
        }));
    } else if tps == Some(SKIPPED_TPS) {
        let need = u64::from(concurrency) * (ctx + max_tokens);
        if max_total > 0 && need > max_total {
            cell.status = Status::OverCapacity;
            cell.reason = Some(Reason::of(Part::OverBudget {
                requests: u64::from(concurrency),
                context_tokens: ctx,
                output_tokens: max_tokens,
                budget_tokens: max_total,
            }));
        } else {
            cell.status = Status::Error;
            cell.reason = Some(Reason::of(Part::SkippedByTool));
        }
        cell.measured_s = None;
    } else if errors > 0 {
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::RequestsFailed {
            failed: errors,
            requests: None,
            first: None,
            error_codes: None,
            kinds: Vec::new(),
        }));
    } else if let (Some(0.0), Some(tokens @ 1..)) = (tps, at.opt_u64("total_tokens")?) {
        // Files before 0.2 took the rate from the server's metrics; a 0
        // beside tokens that arrived is a rate the tool failed to read.
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::ZeroRate { tokens }));
    } else {
        let total = match tps {
            Some(t) if t >= 0.0 => t,
            _ => {
                return Err(at.error(format!(
                    "aggregate_tps: expected a throughput >= 0 or a sentinel (-2 skipped, -3 \
                     looped, -4 failed), found {}",
                    at.value.get("aggregate_tps").unwrap_or(&Value::Null)
                )));
            }
        };
        let effective = at.opt_f64("effective_concurrency")?;
        queued = at.opt_bool("capacity_limited")? == Some(true)
            || effective.is_some_and(|e| e > 0.0 && e < f64::from(concurrency));
        cell.status = if queued {
            Status::RequestsQueued
        } else {
            Status::Valid
        };
        cell.reason = queued.then(|| {
            Reason::of(Part::RanAtOnce {
                effective,
                concurrency,
            })
        });
        cell.total_tok_per_s = Some(total);
        cell.per_request_tok_per_s = match effective {
            Some(e) if queued && e > 0.0 => Some(total / e),
            _ => at.opt_f64("per_request_avg_tps")?,
        };
        if cell.per_request_tok_per_s.is_none() {
            absent("per_request_avg_tps", "per-request tok/s");
        }
        cell.ttft_median_ms = at.opt_f64("ttft_p50")?.map(|s| s * 1000.0);
        if cell.ttft_median_ms.is_none() {
            absent("ttft_p50", "TTFT");
        }
        cell.tbt_median_ms = at.opt_f64("inter_token_latency_p50")?.map(|s| s * 1000.0);
        if cell.tbt_median_ms.is_none() {
            absent("inter_token_latency_p50", "time between tokens");
        }
        cell.avg_active_requests = at.opt_f64("avg_running_reqs")?;
    }
    let mut definitions = decode_definitions(queued);
    // What the file states, whatever the cell's status.
    cell.latency = latency(at)?.map(Box::new);
    if cell.latency.is_some() {
        definitions.insert("latency".into(), LATENCY_DEFINITION.into());
    }
    let telemetry = CellTelemetry {
        server: server_counters(at)?,
        gpus: gpu_telemetry(at, cell.total_tok_per_s, &mut definitions)?,
    };
    if telemetry.server.is_some() || telemetry.gpus.is_some() {
        cell.telemetry = Some(Box::new(telemetry));
    }
    let mut raw = at.value.clone();
    crate::model::redact::redact_json(&mut raw);
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.to_string(),
        definitions,
        raw,
    });
    Ok(cell)
}

/// How the tool's latencies were put in the cell's `latency`.
const LATENCY_DEFINITION: &str = "the tool's percentiles (seconds × 1000; p50, p90 and p99, \
     no p95; files before 0.4 state only ttft_p50 and ttft_p99, and not over how many \
     requests) over its request samples of the cell (request_count), request_latency over those \
     that finished (completed_request_count): ttft_p* → ttft_ms, the prompt cache warmed by a \
     scout request first, a request's wait in the server's queue included; \
     inter_token_latency_p*, each request's (last token − first token) / (output tokens − 1), \
     → tpot_ms; request_latency_p* → e2e_ms. Not carried: chunk_inter_token_latency_p*, \
     percentiles of each request's mean gap between chunks rather than of the gaps, so tbt_ms \
     is absent. A 0 is what the tool writes when it had no sample, and is left out";

/// The percentiles the tool states of TTFT, TPOT and request latency
/// (`<name>_p50`, `_p90`, `_p99`, seconds), with the request samples they
/// were taken over where the file counts them. A percentile the file lacks,
/// or the 0 the tool writes without samples, stays absent.
fn latency(at: &At) -> anyhow::Result<Option<Latency>> {
    let samples = at.opt_u64("request_count")?;
    let completed = at.opt_u64("completed_request_count")?;
    let of = |name: &str, requests: Option<u64>| -> anyhow::Result<Option<Quantiles>> {
        if requests == Some(0) {
            return Ok(None);
        }
        let get = |p: &str| -> anyhow::Result<Option<f64>> {
            Ok(at
                .opt_f64(&format!("{name}_{p}"))?
                .filter(|s| *s > 0.0)
                .map(|s| s * 1000.0))
        };
        Quantiles::read(requests, get)
    };
    Ok(Latency {
        ttft_ms: of("ttft", samples)?,
        tpot_ms: of("inter_token_latency", samples)?,
        tbt_ms: None,
        e2e_ms: of("request_latency", completed)?,
    }
    .known())
}

/// The server's counters the tool kept per cell (0.4.29 and later). Its
/// speculative figures are 0 where the server drafts nothing: they are
/// read only beside draft counts above 0, or as a value above 0 where the
/// file has no counts.
fn server_counters(at: &At) -> anyhow::Result<Option<ServerCounters>> {
    let running_mean = at.opt_f64("avg_running_reqs")?;
    let waiting_mean = at.opt_f64("avg_queue_reqs")?;
    if running_mean.is_none() && waiting_mean.is_none() {
        return Ok(None);
    }
    let drafts = at.opt_f64("server_spec_drafts")?;
    let spec = |key: &str| -> anyhow::Result<Option<f64>> {
        let v = at.opt_f64(key)?;
        Ok(match drafts {
            Some(d) if d > 0.0 => v,
            Some(_) => None,
            None => v.filter(|v| *v > 0.0),
        })
    };
    Ok(Some(ServerCounters {
        source: "llm_decode_bench's samples of the server's metrics".into(),
        samples: None,
        running_mean,
        running_max: at.opt_f64("max_running_reqs")?,
        waiting_mean,
        waiting_max: at.opt_f64("max_queue_reqs")?,
        waiting_share: at.opt_f64("queue_fraction")?,
        kv_cache_usage_mean: None,
        kv_cache_usage_max: None,
        preemptions: None,
        prefix_cache_hit_rate: None,
        spec_acceptance_rate: spec("server_spec_accept_rate")?,
        spec_accept_length: spec("server_spec_accept_length")?,
    }))
}

/// The tool's hardware monitor over the cell (`hardware_summary`, 0.4.29
/// and later; empty when the monitor was off). Energy per output token is
/// its mean total power over the cell's throughput.
fn gpu_telemetry(
    at: &At,
    total_tok_per_s: Option<f64>,
    definitions: &mut BTreeMap<String, String>,
) -> anyhow::Result<Option<GpuTelemetry>> {
    let Some(hw) = at
        .child("hardware_summary")
        .filter(|h| h.value.as_object().is_some_and(|o| !o.is_empty()))
    else {
        return Ok(None);
    };
    let power = hw.opt_f64("power_total_avg_w")?;
    let samples = hw.opt_u64("samples")?;
    let seconds = hw.opt_f64("duration_seconds")?;
    let joules_per_token = power
        .zip(total_tok_per_s)
        .filter(|(_, t)| *t > 0.0)
        .map(|(w, t)| w / t);
    if joules_per_token.is_some() {
        definitions.insert(
            "joules_per_output_token".into(),
            format!(
                "the tool's mean total GPU power (hardware_summary.power_total_avg_w, {} over \
                 {} s of the window, every GPU of the host) / the cell's total tok/s",
                samples.map_or("samples".to_string(), |n| crate::model::format::counted(
                    n as usize, "sample"
                )),
                seconds.map_or("?".to_string(), |s| crate::model::format::grouped(s, 1))
            ),
        );
    }
    Ok(Some(GpuTelemetry {
        source: "llm_decode_bench's hardware monitor (nvidia-smi)".into(),
        gpus: hw
            .opt_u64("gpu_count")?
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        samples: samples.and_then(|n| u32::try_from(n).ok()),
        power_w_mean: power,
        power_w_max: hw.opt_f64("power_total_max_w")?,
        power_limit_w: hw.opt_f64("power_limit_total_w")?,
        energy_j: None,
        energy_from: joules_per_token.map(|_| EnergySource::MeanPower),
        joules_per_output_token: joules_per_token,
        sm_clock_mhz_mean: None,
        mem_clock_mhz_mean: None,
        temp_c_max: hw.opt_f64("temp_max_c")?,
        util_pct_mean: hw.opt_f64("gpu_util_avg_pct")?,
        memory_used_pct_max: hw.opt_f64("vram_used_max_pct")?,
        throttle: None,
    }))
}

fn prefill_cell(at: &At, context_tokens: u64) -> anyhow::Result<PrefillCell> {
    let ttft_s = at.positive("ttft_seconds")?;
    let method = at.opt_str("method")?.unwrap_or("client");
    let mut raw = at.value.clone();
    crate::model::redact::redact_json(&mut raw);
    Ok(PrefillCell {
        context_tokens,
        status: Status::Valid,
        reason: None,
        prompt_tokens: at.opt_u64("prompt_tokens")?,
        prompt_tokens_from: None,
        prompt_tok_per_s: Some(at.f64("tok_per_sec")?),
        ttft_ms: Some(ttft_s * 1000.0),
        prompt_cache: None,
        measured_by: Some(MeasuredBy {
            tool: TOOL.to_string(),
            definitions: prefill_definitions(method),
            raw,
        }),
    })
}

/// The engine and its version as the event log's startup line names them
/// (0.4 and later): "03:34:59 startup engine vLLM 0.20.2rc1.dev249+g... models=[...]".
fn engine_of_event_log(event_log: Option<&Value>) -> Option<(String, Option<String>)> {
    let mut texts = Vec::new();
    strings(event_log?, &mut texts);
    texts.iter().find_map(|t| {
        let rest = &t[t.find("startup engine ")? + "startup engine ".len()..];
        let mut words = rest.split_whitespace();
        let name = words.next()?.to_lowercase();
        let version = words
            .next()
            .filter(|w| !w.starts_with("models="))
            .map(str::to_string);
        Some((name, version))
    })
}

/// GPUs from nvidia-smi's CSV query the tool keeps (0.4 and later): one
/// line per GPU, "index, name, driver_version, ...". The name loses its
/// "NVIDIA " prefix, as on the reference pages.
fn nvidia_smi_query_gpus(root: &At) -> Option<(String, u32)> {
    let out = root.str_at("startup_diagnostics.nvidia_smi_query.stdout")?;
    let names: Vec<&str> = out
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(',').map(str::trim);
            fields.next()?.parse::<u32>().ok()?;
            fields.next().filter(|n| !n.is_empty())
        })
        .collect();
    let first = names.first()?;
    Some((
        first.trim_start_matches("NVIDIA ").to_string(),
        names.len() as u32,
    ))
}

/// The engine's version from the tool's event log: the first "version"
/// followed by a number like 0.11.2 in any of its texts.
fn engine_version(event_log: Option<&Value>) -> Option<String> {
    let mut texts = Vec::new();
    strings(event_log?, &mut texts);
    texts.iter().find_map(|t| {
        let lower = t.to_lowercase();
        let at = lower.find("version")?;
        t[at + "version".len()..]
            .split(|c: char| c.is_whitespace() || c == '=' || c == ':' || c == ',' || c == '"')
            .map(|w| w.trim_start_matches('v'))
            .find(|w| w.split('.').count() >= 2 && w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
    })
}

/// The GPU model and count from nvidia-smi's table wherever the file kept
/// it: rows like "|   0  NVIDIA H200   On  |".
fn nvidia_smi_gpus(value: &Value) -> Option<(String, u32)> {
    let mut texts = Vec::new();
    strings(value, &mut texts);
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    for line in texts.iter().flat_map(|t| t.lines()) {
        let row = line.trim().trim_start_matches('|').trim();
        let mut words = row.split_whitespace();
        let (Some(index), Some("NVIDIA")) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(index) = index.parse::<u32>() else {
            continue;
        };
        let name: Vec<&str> = words
            .take_while(|w| !matches!(*w, "On" | "Off" | "|"))
            .collect();
        if !name.is_empty() {
            names.entry(index).or_insert_with(|| name.join(" "));
        }
    }
    let first = names.values().next()?.clone();
    Some((first, names.len() as u32))
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(m) => m.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
