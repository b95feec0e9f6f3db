//! llm-d's Benchmark Report, v0.2 and v0.2.1 (YAML or JSON), as
//! llm-d-benchmark's converters write it from vLLM, guidellm, AIPerf and
//! inference-perf results, and as `sitegen export --format llm-d-report`
//! writes it: one report per load point; all reports given make one run.
//! A v0.1 report, written beside each v0.2 one, is recognised and refused
//! by name.
//!
//! The point is placed by `scenario.load.standardized`: a `rate_qps` makes a
//! paced point (with `concurrency` as its cap, when given), a `concurrency`
//! alone a decode cell; a report with neither is refused, naming the fields.
//! Figures come from `results.request_performance.aggregate`: the output
//! token rate, the request counts, and the latency statistics (`ms` or `s`,
//! per token or not) at the percentiles the report states.
//!
//! A report that sitegen wrote carries sitegen's cards and run settings
//! under `native.config.sitegen`; they are read back as they were.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::burst::{cells_of, paced_of, push_unique};
use super::json::At;
use super::{Imported, file_name};
use crate::export::llm_d_report::NATIVE_KEY;
use crate::model::paced::{Arrivals, PacedLoad, PacedPoint};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{Cell, DecodeCell, MeasuredBy, Status};

pub(crate) const TOOL: &str = "llm-d Benchmark Report";

pub const IMPORTER: super::Importer = super::Importer {
    name: "llm-d-report",
    detect: |s| s.json().is_some_and(|v| looks_like(v) || is_v0_1(v)),
    one_run_from_all_files: true,
    read: |inputs, _| parse_files(inputs),
};

/// Whether a value is a Benchmark Report: `run.uid` and a `results` object
/// (the two sections the schema requires).
pub(crate) fn looks_like(value: &Value) -> bool {
    value.pointer("/run/uid").is_some_and(Value::is_string)
        && value.get("results").is_some_and(Value::is_object)
}

/// Whether a value is a Benchmark Report v0.1 (`metrics` and `scenario`),
/// recognised to be refused by name.
fn is_v0_1(value: &Value) -> bool {
    value.get("version").and_then(Value::as_str) == Some("0.1")
        && value.get("metrics").is_some_and(Value::is_object)
        && value.get("scenario").is_some_and(Value::is_object)
}

/// The report versions read: v0.2.1 adds only multi-modal fields to v0.2.
const VERSIONS: [&str; 2] = ["0.2", "0.2.1"];

/// The workload generators (llm-d's `WorkloadGenerator` names) whose
/// points are request bursts: a number of requests or a duration, timed from
/// the first sent to the last finished.
const BURST_TOOLS: [&str; 5] = [
    "vllm-benchmark",
    "guidellm",
    "inference-perf",
    "aiperf",
    "inferencemax",
];

fn definitions(tool: &str) -> BTreeMap<String, String> {
    [
        (
            "context_tokens",
            "the report's requests.input_length mean where it has one, else its \
             scenario.load.standardized.input_seq_len value (the tool's requested prompt length)",
        ),
        (
            "total_tok_per_s",
            "the report's throughput.output_token_rate mean: the tool's output tokens over its \
             run's duration",
        ),
        (
            "per_request_tok_per_s",
            "1000 / the report's median time_per_output_token",
        ),
        (
            "ttft_ms",
            "the report's time_to_first_token, as the tool measured it (no warm-up of the \
             prompt cache is recorded)",
        ),
        (
            "tbt_ms",
            "the report's inter_token_latency, as the tool times it (per streamed chunk in vLLM's \
             benchmark, so a chunk of several tokens counts once)",
        ),
        (
            "measured_s",
            "the report's run.time.duration: the tool's run, not a fixed window",
        ),
    ]
    .into_iter()
    .map(|(k, v)| {
        (
            k.to_string(),
            format!("{v} ({tool}, via llm-d's converter)"),
        )
    })
    .collect()
}

/// One report read: where, and what it is.
enum Point {
    Decode(DecodeCell),
    Paced(PacedPoint),
}

pub fn parse_files(files: &[(PathBuf, String)]) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut paced = Vec::new();
    let mut meta: Option<(Value, PathBuf)> = None;
    let mut warnings = Vec::new();
    let mut versions = Vec::new();
    for (file, text) in files {
        let value = super::guidellm::parse_value(file, text)?;
        let root = At::root(file, &value);
        // v0.1 (metrics and scenario, no run) is what llm-d-benchmark
        // still writes beside each v0.2 report.
        if is_v0_1(&value) {
            return Err(root.error(
                "version 0.1: sitegen reads Benchmark Reports v0.2 and v0.2.1; import the \
                 benchmark_report_v0.2 file written beside it, or the tool's own result file",
            ));
        }
        if !looks_like(&value) {
            return Err(root.error(format!(
                "expected an llm-d Benchmark Report (run.uid and results), found {}",
                root.keys()
            )));
        }
        let version = root.opt_str("version")?.unwrap_or("0.2.1");
        if !VERSIONS.contains(&version) {
            return Err(root.error(format!(
                "version: {version}: sitegen reads Benchmark Reports {}",
                VERSIONS.join(" and ")
            )));
        }
        versions.push(format!("Benchmark Report v{version}"));
        let this_meta = run_meta(&root, &mut warnings)?;
        match &meta {
            Some((first, first_file)) if first.get("model") != this_meta.get("model") => {
                return Err(root.error(format!(
                    "scenario.stack: model {} here, {} in {}: one run is one model",
                    this_meta.get("model").unwrap_or(&Value::Null),
                    first.get("model").unwrap_or(&Value::Null),
                    first_file.display()
                )));
            }
            Some(_) => {}
            None => meta = Some((this_meta, file.clone())),
        }
        let place = file.display().to_string();
        match point(&root, &mut warnings)? {
            Point::Decode(cell) => push_unique(&mut cells, place, cell, Value::Null)?,
            Point::Paced(p) => paced.push((place, p)),
        }
    }
    versions.dedup();
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    let (mut meta, _) = meta.expect("at least one file");
    meta["source"] = json!(format!("{TOOL}s: {}", names.join(", ")));
    Ok(Imported {
        meta,
        cells: cells_of(cells)?.into_iter().map(Cell::Decode).collect(),
        paced: paced_of(paced)?,
        notes_markdown: None,
        warnings,
        layout: versions.join(", "),
        split: Vec::new(),
    })
}

/// The partial run.json the report states.
fn run_meta(root: &At, warnings: &mut Vec<String>) -> anyhow::Result<Value> {
    let mut meta = json!({});
    let engines: Vec<At> = root
        .child("scenario.stack")
        .map(|s| s.elements())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.str_at("standardized.kind") == Some("inference_engine"))
        .collect();
    match engines.as_slice() {
        [] => {}
        [engine] => {
            if let Some(model) = engine.str_at("standardized.model.name") {
                meta["model"] = json!(model);
            }
            if let Some(own) = engine.child(&format!("native.config.{NATIVE_KEY}")) {
                for key in ["served_model", "hardware", "engine", "launch_command"] {
                    if let Some(v) = own.value.get(key) {
                        meta[key] = v.clone();
                    }
                }
            } else {
                let s = engine.required("standardized", "the component's standardized section")?;
                if let Some(gpu) = s.str_at("accelerator.model").filter(|g| !g.is_empty()) {
                    meta["hardware"]["gpu"] = json!(gpu);
                }
                // llm-d's converters write 0 when the count is not known.
                if let Some(n) = s
                    .child("accelerator")
                    .map(|a| a.opt_u64("count"))
                    .transpose()?
                    .flatten()
                    .filter(|n| *n > 0)
                {
                    meta["hardware"]["gpu_count"] = json!(n);
                }
                if let Some(tool) = s.opt_str("tool")?.filter(|t| !t.is_empty()) {
                    meta["engine"]["name"] = json!(tool);
                }
                if let Some(v) = s.opt_str("tool_version")?.filter(|t| !t.is_empty()) {
                    meta["engine"]["version"] = json!(v);
                }
            }
        }
        several => warnings.push(format!(
            "{}: {} inference engines (a disaggregated or multi-model stack): the model, \
             hardware and engine cards are left for --meta",
            root.file.display(),
            several.len()
        )),
    }
    if let Some(own) = root.child(&format!("scenario.load.native.config.{NATIVE_KEY}.run")) {
        meta["run"] = own.value.clone();
    } else if let Some(load) = root.child("scenario.load.standardized")
        && let Some(tool) = load.opt_str("tool")?.filter(|t| !t.is_empty())
    {
        meta["run"]["benchmark_tool"]["name"] = json!(tool);
        if let Some(v) = load.opt_str("tool_version")?.filter(|t| !t.is_empty()) {
            meta["run"]["benchmark_tool"]["version"] = json!(v);
        }
        if BURST_TOOLS.contains(&tool) {
            meta["run"]["decode_test"] = json!("request_burst");
        }
    }
    Ok(meta)
}

/// The report's load point and its figures.
fn point(root: &At, warnings: &mut Vec<String>) -> anyhow::Result<Point> {
    let load = root.child("scenario.load.standardized").ok_or_else(|| {
        root.error(
            "scenario.load.standardized: the report states no load, so neither the requests \
             kept in flight (concurrency) nor the rate they were sent at (rate_qps) is known, \
             and sitegen cannot place its figures",
        )
    })?;
    let rate = load.opt_f64("rate_qps")?;
    let concurrency = match load.opt_f64("concurrency")? {
        None => None,
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) => Some(n as u32),
        Some(n) => {
            return Err(load.error(format!(
                "concurrency: {n}: expected a whole number of requests in flight, 1 or more"
            )));
        }
    };
    if let Some(r) = rate
        && !(r.is_finite() && r > 0.0)
    {
        return Err(load.error(format!("rate_qps: {r}: expected a rate above 0")));
    }
    if rate.is_none() && concurrency.is_none() {
        return Err(load.error(
            "concurrency and rate_qps: the report states neither, so sitegen cannot place its \
             point: it files a point by the requests kept in flight (concurrency) or by the rate \
             they were sent at (rate_qps)",
        ));
    }
    let aggregate = root.child("results.request_performance.aggregate");
    let own = root
        .child(&format!("scenario.load.native.config.{NATIVE_KEY}"))
        .is_some();
    let tool = load.opt_str("tool")?.unwrap_or("unknown tool").to_string();
    let figures = Figures::read(root, &load, aggregate.as_ref(), warnings)?;
    let measured_by = (!own).then(|| MeasuredBy {
        tool: format!(
            "{tool} ({TOOL} v{})",
            root.opt_str("version").ok().flatten().unwrap_or("0.2.1")
        ),
        definitions: definitions(&tool),
        raw: json!({
            "load": load.value,
            "aggregate": aggregate.as_ref().map_or(Value::Null, |a| a.value.clone()),
        }),
    });
    match rate {
        Some(requested_per_s) => {
            let arrivals = root
                .child(&format!(
                    "scenario.load.native.config.{NATIVE_KEY}.arrivals"
                ))
                .and_then(|a| serde_json::from_value(a.value.clone()).ok())
                .unwrap_or(Arrivals::NotStated);
            let load = PacedLoad {
                requested_per_s,
                arrivals,
                max_concurrency: concurrency,
            };
            let (status, reason) = figures.status();
            let mut p = PacedPoint::new(figures.context_tokens, load, status, reason);
            p.sent_requests = figures.sent;
            p.completed_requests = figures.completed();
            p.failed_requests = figures.failed;
            p.achieved_per_s = figures.request_rate;
            p.measured_s = figures.measured_s;
            // Failed requests make the point an Error, which shows its
            // counts and no speed or latency (as every importer's points).
            if status == Status::Valid {
                p.total_tok_per_s = figures.output_rate;
                p.per_request_tok_per_s = figures.per_request();
                p.ttft_median_ms = figures.latency.ttft_ms.as_ref().and_then(|q| q.p50);
                p.tbt_median_ms = figures.latency.tbt_ms.as_ref().and_then(|q| q.p50);
                p.latency = figures.latency.clone().known().map(Box::new);
            }
            p.measured_by = measured_by;
            Ok(Point::Paced(p))
        }
        None => {
            let n = concurrency.expect("a concurrency or a rate");
            let (status, reason) = figures.status();
            let mut c = DecodeCell::without_figures(figures.context_tokens, n, status, reason);
            c.completed_requests = figures.completed();
            c.measured_s = figures.measured_s;
            if status == Status::Valid {
                c.total_tok_per_s = figures.output_rate;
                c.per_request_tok_per_s = figures.per_request();
                c.ttft_median_ms = figures.latency.ttft_ms.as_ref().and_then(|q| q.p50);
                c.tbt_median_ms = figures.latency.tbt_ms.as_ref().and_then(|q| q.p50);
                c.latency = figures.latency.clone().known().map(Box::new);
            }
            c.measured_by = measured_by;
            Ok(Point::Decode(c))
        }
    }
}

/// The figures of one report.
struct Figures {
    context_tokens: u64,
    sent: Option<u64>,
    failed: Option<u64>,
    incomplete: Option<u64>,
    output_rate: Option<f64>,
    request_rate: Option<f64>,
    latency: Latency,
    measured_s: Option<f64>,
}

impl Figures {
    fn read(
        root: &At,
        load: &At,
        aggregate: Option<&At>,
        warnings: &mut Vec<String>,
    ) -> anyhow::Result<Figures> {
        let requests = aggregate.and_then(|a| a.child("requests"));
        let (sent, failed, incomplete) = match &requests {
            Some(r) => (
                r.opt_u64("total")?,
                r.opt_u64("failures")?,
                r.opt_u64("incomplete")?,
            ),
            None => (None, None, None),
        };
        let input_mean = match requests.as_ref().and_then(|r| r.child("input_length")) {
            Some(s) => {
                expect_units(&s, &["count"])?;
                s.opt_f64("mean")?
            }
            None => None,
        };
        let context = match input_mean {
            Some(m) => m,
            None => load
                .required("input_seq_len", "the prompts' length")?
                .f64("value")?,
        };
        if !(context.is_finite() && context >= 0.0) {
            return Err(load.error(format!(
                "input_seq_len.value: {context}: expected a number of tokens, 0 or more"
            )));
        }
        let rate = |name: &str, units: &'static str| -> anyhow::Result<Option<f64>> {
            match aggregate.and_then(|a| a.child(&format!("throughput.{name}"))) {
                Some(s) => {
                    expect_units(&s, &[units])?;
                    s.opt_f64("mean")
                }
                None => Ok(None),
            }
        };
        let output_rate = rate("output_token_rate", "tokens/s")?;
        let request_rate = rate("request_rate", "queries/s")?;
        let completed = sent.map(|s| {
            s.saturating_sub(failed.unwrap_or(0))
                .saturating_sub(incomplete.unwrap_or(0))
        });
        let latency_of = |name: &str, per_token: bool| -> anyhow::Result<Option<Quantiles>> {
            let Some(s) = aggregate.and_then(|a| a.child(&format!("latency.{name}"))) else {
                return Ok(None);
            };
            let scale = if per_token {
                match expect_units(&s, &["ms/token", "s/token", "ms", "s"])? {
                    "s/token" | "s" => 1000.0,
                    _ => 1.0,
                }
            } else {
                match expect_units(&s, &["ms", "s"])? {
                    "s" => 1000.0,
                    _ => 1.0,
                }
            };
            Quantiles::read(completed, |p| Ok(s.opt_f64(p)?.map(|v| v * scale)))
        };
        let latency = Latency {
            ttft_ms: latency_of("time_to_first_token", false)?,
            tpot_ms: latency_of("time_per_output_token", true)?,
            tbt_ms: latency_of("inter_token_latency", true)?,
            e2e_ms: latency_of("request_latency", false)?,
        };
        let measured_s = match root
            .child("run.time")
            .map(|t| t.opt_str("duration"))
            .transpose()?
            .flatten()
        {
            Some(d) => match iso_seconds(d) {
                Some(s) => Some(s),
                None => {
                    warnings.push(format!(
                        "{}: run.time.duration: {d:?} is not an ISO-8601 duration sitegen reads \
                         (PT…H…M…S): the measured time left empty",
                        root.file.display()
                    ));
                    None
                }
            },
            None => None,
        };
        Ok(Figures {
            context_tokens: context.round() as u64,
            sent,
            failed,
            incomplete,
            output_rate,
            request_rate,
            latency,
            measured_s,
        })
    }

    fn completed(&self) -> Option<u64> {
        self.sent.map(|s| {
            s.saturating_sub(self.failed.unwrap_or(0))
                .saturating_sub(self.incomplete.unwrap_or(0))
        })
    }

    /// 1000 / the median time per output token.
    fn per_request(&self) -> Option<f64> {
        self.latency
            .tpot_ms
            .as_ref()
            .and_then(|q| q.p50)
            .filter(|t| *t > 0.0)
            .map(|t| 1000.0 / t)
    }

    /// Valid, or Error when requests failed (the report counts them).
    fn status(&self) -> (Status, Option<Reason>) {
        match self.failed.filter(|f| *f > 0) {
            None => (Status::Valid, None),
            Some(failed) => (
                Status::Error,
                Some(Reason::of(Part::RequestsFailed {
                    failed,
                    requests: self.sent,
                    first: None,
                    error_codes: None,
                    kinds: Vec::new(),
                })),
            ),
        }
    }
}

/// A statistic's `units`, which must be one of `allowed`.
fn expect_units<'a>(stat: &At<'a>, allowed: &[&'static str]) -> anyhow::Result<&'static str> {
    let units = stat.opt_str("units")?.unwrap_or("");
    allowed
        .iter()
        .copied()
        .find(|u| *u == units)
        .ok_or_else(|| {
            stat.error(format!(
                "units: expected {}, found {units:?}",
                crate::model::format::or_list(
                    &allowed.iter().map(|u| u.to_string()).collect::<Vec<_>>()
                )
            ))
        })
}

/// Seconds of an ISO-8601 duration of hours, minutes and seconds
/// ("PT30S", "PT1M30.5S", "PT2H"); `None` for any other form.
fn iso_seconds(text: &str) -> Option<f64> {
    let mut rest = text.strip_prefix("PT")?;
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    for (unit, factor) in [('H', 3600.0), ('M', 60.0), ('S', 1.0)] {
        if let Some(i) = rest.find(unit) {
            let n: f64 = rest[..i].parse().ok()?;
            if !(n.is_finite() && n >= 0.0) {
                return None;
            }
            total += n * factor;
            rest = &rest[i + 1..];
        }
    }
    rest.is_empty().then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_durations_of_hours_minutes_and_seconds() {
        assert_eq!(iso_seconds("PT30S"), Some(30.0));
        assert_eq!(iso_seconds("PT30.123S"), Some(30.123));
        assert_eq!(iso_seconds("PT1M30S"), Some(90.0));
        assert_eq!(iso_seconds("PT2H"), Some(7200.0));
        assert_eq!(iso_seconds("P1D"), None);
        assert_eq!(iso_seconds("PT"), None);
        assert_eq!(iso_seconds("PT5X"), None);
    }
}
