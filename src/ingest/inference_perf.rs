//! kubernetes-sigs/inference-perf's lifecycle reports: one
//! `stage_N_lifecycle_metrics.json` per load stage, each a paced point (the
//! stage's requests sent at `load_summary.requested_rate`); several stage
//! files make one run.
//!
//! Keys read (`inference_perf/reportgen/base.py`, `summarize_requests`):
//! `load_summary.{count, requested_rate, achieved_rate, send_duration}`,
//! `successes.count`, `failures.count`, `successes.throughput.*`,
//! `successes.prompt_len.mean`, and the latencies in seconds under
//! `successes.latency.{time_to_first_token, time_per_output_token,
//! request_latency}` (`median`, `p90`, `p95`, `p99`; there is no `p50` key).
//! v0.5.0 added `benchmark_time_seconds` and `successes.token_count_mismatches`.
//!
//! Refused: `summary_lifecycle_metrics.json` (every stage pooled, no rate),
//! a stage of the `concurrent` load type (`load_summary.concurrency`: N in
//! flight, not a rate), and the Prometheus reports (the server's metrics).
//! The files name neither the model nor the server: the cards come from
//! `--meta` and the flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::burst::paced_of;
use super::json::{At, parse_python_json};
use super::{Given, Imported, file_name};
use crate::model::paced::{Arrivals, PacedLoad, PacedPoint};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{MeasuredBy, Status};

pub(crate) const TOOL: &str = "inference-perf";

pub const IMPORTER: super::Importer = super::Importer {
    name: "inference-perf",
    detect: |s| s.json().is_some_and(looks_like),
    one_run_from_all_files: true,
    read: parse_files,
};

/// Whether a JSON value is one of inference-perf's reports: a lifecycle
/// report (stage or summary) or a Prometheus report, all three of
/// `load_summary`, `successes` and `failures` objects.
pub(crate) fn looks_like(value: &Value) -> bool {
    ["load_summary", "successes", "failures"]
        .iter()
        .all(|k| value.get(k).is_some_and(Value::is_object))
}

/// The layout a stage file has; the files record no version of the tool.
fn layout(value: &Value) -> &'static str {
    if value.get("benchmark_time_seconds").is_some() {
        "inference-perf lifecycle report, v0.5.0 or later (benchmark_time_seconds); the file \
         records no version"
    } else {
        "inference-perf lifecycle report, before v0.5.0 (no benchmark_time_seconds); the file \
         records no version"
    }
}

/// One stage file read: its point, or the count of a summary that pools stages.
enum Read {
    Stage(Box<PacedPoint>, Vec<String>),
    Summary { count: u64 },
}

pub fn parse_files(files: &[(PathBuf, String)], given: &Given) -> anyhow::Result<Imported> {
    let mut points = Vec::new();
    let mut summaries = Vec::new();
    let mut warnings = Vec::new();
    let mut layouts = Vec::new();
    for (file, text) in files {
        let value = parse_python_json(file, text)?;
        let root = At::root(file, &value);
        if !looks_like(&value) {
            return Err(root.error(format!(
                "expected an inference-perf lifecycle report (load_summary, successes and \
                 failures objects), found {}",
                root.keys()
            )));
        }
        match stage(&root, given)? {
            Read::Stage(point, w) => {
                warnings.extend(w);
                layouts.push(layout(&value).to_string());
                points.push((file.display().to_string(), *point));
            }
            Read::Summary { count } => summaries.push((file.clone(), count)),
        }
    }
    if let Some((file, count)) = summaries.first() {
        return Err(refuse_summary(file, *count, &points));
    }
    layouts.dedup();
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    let meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} lifecycle reports: {}", names.join(", ")),
    });
    Ok(Imported {
        meta,
        cells: Vec::new(),
        paced: paced_of(points)?,
        notes_markdown: None,
        warnings,
        layout: layouts.join("; "),
        split: Vec::new(),
    })
}

/// Why the summary report is not a point: it pools every stage.
fn refuse_summary(file: &Path, count: u64, stages: &[(String, PacedPoint)]) -> anyhow::Error {
    let sent: u64 = stages.iter().filter_map(|(_, p)| p.sent_requests).sum();
    let pooled = if !stages.is_empty() && sent == count {
        format!(
            "it pools the {} stages given beside it (its load_summary.count {count} is the sum \
             of theirs)",
            stages.len()
        )
    } else {
        format!(
            "it pools every stage of its run (its counts, load_summary.count {count} among them, \
             are the sums of the stages')"
        )
    };
    anyhow::anyhow!(
        "{}: load_summary: no requested_rate: inference-perf's summary_lifecycle_metrics.json, \
         not one stage: {pooled}, so its figures mix every rate of the run and are no point of \
         any; import the stage_N_lifecycle_metrics.json files instead (inference-perf v0.1 wrote \
         no requested_rate in its stage files either: those have no rate to file a point at)",
        file.display()
    )
}

/// A latency's stated percentiles in ms (inference-perf writes seconds, the
/// median as `median`).
fn quantiles(latency: &At, name: &str, requests: Option<u64>) -> anyhow::Result<Option<Quantiles>> {
    let Some(m) = latency.child(name) else {
        return Ok(None);
    };
    Quantiles::read(requests, |p| {
        let key = if p == "p50" { "median" } else { p };
        Ok(m.opt_f64(key)?.map(|s| s * 1000.0))
    })
}

fn stage(root: &At, given: &Given) -> anyhow::Result<Read> {
    let load = root.required("load_summary", "an object")?;
    let successes = root.required("successes", "an object")?;
    if load.value.as_object().is_some_and(|m| m.is_empty()) && successes.value.get("rate").is_some()
    {
        return Err(root.error(
            "an inference-perf Prometheus report (the model server's own metrics, no \
             load_summary): import the stage_N_lifecycle_metrics.json files written beside it",
        ));
    }
    let sent = load.u64("count")?;
    if load.value.get("requested_rate").is_none() {
        return Ok(Read::Summary { count: sent });
    }
    if let Some(n) = load.opt_u64("concurrency")? {
        return Err(load.error(format!(
            "concurrency {n}: a stage of inference-perf's concurrent load type, {n} requests \
             kept in flight rather than sent at a rate; sitegen reads inference-perf's rate \
             stages only"
        )));
    }
    let requested_per_s = load.f64("requested_rate")?;
    if !(requested_per_s.is_finite() && requested_per_s > 0.0) {
        return Err(load.error(format!(
            "requested_rate: expected a rate above 0, found {requested_per_s}"
        )));
    }
    let completed = successes.u64("count")?;
    let failures = root.required("failures", "an object")?;
    let failed = failures.u64("count")?;
    let mut definitions = definitions();
    let mut warnings = Vec::new();

    // The prompt length: the successes' mean, else --context.
    let stated = successes
        .child("prompt_len")
        .map(|p| p.opt_f64("mean"))
        .transpose()?
        .flatten()
        .filter(|_| completed > 0);
    let context_tokens = match (stated, given.context_tokens) {
        (Some(mean), _) => mean.round() as u64,
        (None, Some(c)) => {
            definitions.insert(
                "context_tokens".into(),
                "given with --context: the file states no prompt length (successes.prompt_len \
                 is null: no request succeeded)"
                    .into(),
            );
            c
        }
        (None, None) => {
            return Err(successes.error(format!(
                "prompt_len: no prompt length ({completed} requests succeeded, {failed} failed), \
                 so the point's context is unknown: give it with --context (e.g. --context 2K)"
            )));
        }
    };

    let load_spec = PacedLoad {
        requested_per_s,
        arrivals: Arrivals::NotStated,
        max_concurrency: None,
    };
    let mut parts = Vec::new();
    if failed > 0 {
        parts.push(Part::RequestsFailed {
            failed,
            requests: Some(sent),
            first: None,
            error_codes: None,
            kinds: Vec::new(),
        });
    }
    if sent > completed + failed {
        parts.push(Part::RequestsUnaccounted {
            unaccounted: sent - completed - failed,
            requests: sent,
            completed,
            failed,
        });
    }
    let reason = Reason::of_parts(parts);
    let status = if reason.is_some() {
        Status::Error
    } else {
        Status::Valid
    };
    let mut point = PacedPoint::new(context_tokens, load_spec, status, reason);
    point.sent_requests = Some(sent);
    point.completed_requests = Some(completed);
    point.failed_requests = Some(failed);

    let throughput = successes.child("throughput");
    let per_s = |key: &str| -> anyhow::Result<Option<f64>> {
        match &throughput {
            Some(t) => t.opt_f64(key),
            None => Ok(None),
        }
    };
    let requests_per_sec = per_s("requests_per_sec")?;
    // The stage's total time: first request sent to last finished.
    point.measured_s = match root.opt_f64("benchmark_time_seconds")? {
        Some(t) => Some(t),
        None => match requests_per_sec {
            Some(r) if r > 0.0 && completed > 0 => {
                definitions.insert(
                    "measured_s".into(),
                    "successes.count / successes.throughput.requests_per_sec: the stage's total \
                     time as inference-perf divides by it (first request sent to last finished, \
                     failed requests included); files before v0.5.0 do not state it otherwise"
                        .into(),
                );
                Some(completed as f64 / r)
            }
            _ => None,
        },
    }
    .filter(|t| *t > 0.0);
    point.achieved_per_s = requests_per_sec.filter(|_| completed > 0);

    let latency = successes.child("latency");
    if let Some(lat) = &latency {
        // TPOT per token only from v0.5.0's token-derived times (its
        // token_count_mismatches key marks them).
        let per_token = successes.value.get("token_count_mismatches").is_some();
        let tpot = if per_token {
            quantiles(lat, "time_per_output_token", None)?
        } else {
            None
        };
        let e2e = quantiles(lat, "request_latency", Some(completed))?;
        let mean_e2e_s = lat
            .child("request_latency")
            .map(|r| r.opt_f64("mean"))
            .transpose()?
            .flatten();
        let mean_failed_s = failures
            .child("request_latency")
            .map(|r| r.opt_f64("mean"))
            .transpose()?
            .flatten();
        if let (Some(mean), Some(t)) = (mean_e2e_s, point.measured_s) {
            let busy = mean * completed as f64 + mean_failed_s.unwrap_or(0.0) * failed as f64;
            point.avg_in_flight = Some(busy / t);
        }
        let ttft = quantiles(lat, "time_to_first_token", None)?;
        if point.status == Status::Valid {
            point.ttft_median_ms = ttft.as_ref().and_then(|q| q.p50);
            point.per_request_tok_per_s = tpot
                .as_ref()
                .and_then(|q| q.p50)
                .filter(|t| *t > 0.0)
                .map(|t| 1000.0 / t);
        }
        if !per_token {
            definitions.insert(
                "per_request_tok_per_s".into(),
                "not read: before v0.5.0 inference-perf's time_per_output_token divides by the \
                 stream's timestamps, not its tokens (before v0.3.0 one per line of the stream, \
                 the blank line between two events included, so about half the time per \
                 token; then one per event); v0.5.0 derives it from tokens (its files have \
                 successes.token_count_mismatches)"
                    .into(),
            );
        }
        point.latency = Latency {
            ttft_ms: ttft,
            tpot_ms: tpot,
            tbt_ms: None,
            e2e_ms: e2e,
        }
        .known()
        .map(Box::new);
    }
    if point.status == Status::Valid {
        point.total_tok_per_s = per_s("output_tokens_per_sec")?;
        if point.total_tok_per_s.is_none() {
            return Err(successes.error(
                "throughput.output_tokens_per_sec: expected a number for a stage whose requests \
                 all succeeded, found nothing",
            ));
        }
    }
    if let Some(n) = successes
        .opt_u64("token_count_mismatches")?
        .filter(|n| *n > 0)
    {
        let note = format!(
            "; for {n} of {completed} successful requests inference-perf's tokenizer count of \
             the streamed text differed from the server's completion_tokens \
             (successes.token_count_mismatches): these are the tokenizer's counts"
        );
        for column in ["total_tok_per_s", "per_request_tok_per_s"] {
            definitions
                .entry(column.into())
                .and_modify(|d| d.push_str(&note));
        }
        warnings.push(format!(
            "{}: successes.token_count_mismatches {n} of {completed}: output tokens are \
             inference-perf's tokenizer's count, which differed from the server's for those \
             requests",
            root.file.display()
        ));
    }
    if let (Some(rate), Some(send)) = (
        load.opt_f64("achieved_rate")?,
        load.opt_f64("send_duration")?,
    ) {
        definitions.entry("achieved_per_s".into()).and_modify(|d| {
            d.push_str(&format!(
                ". Not inference-perf's load_summary.achieved_rate ({rate:.3}/s here): that is \
                 requests sent / send_duration ({send:.1} s, from the first request sent to the \
                 last one sent), the rate the client sent at"
            ))
        });
    }
    let mut raw = root.value.clone();
    crate::model::redact::redact_json(&mut raw);
    point.measured_by = Some(MeasuredBy {
        tool: TOOL.into(),
        definitions,
        raw,
    });
    Ok(Read::Stage(Box::new(point), warnings))
}

/// How inference-perf's figures are read into a paced point.
fn definitions() -> BTreeMap<String, String> {
    [
        (
            "requested_per_s",
            "load_summary.requested_rate: the stage's rate as configured",
        ),
        (
            "arrivals",
            "not stated: the lifecycle report does not record the load type. inference-perf's \
             constant load draws exponential gaps scaled so that rate × duration requests fill \
             the stage exactly; its poisson load draws a Poisson number of requests each second",
        ),
        (
            "sent_requests",
            "load_summary.count: every request of the stage, succeeded or failed",
        ),
        (
            "achieved_per_s",
            "successes.throughput.requests_per_sec: successful requests / the stage's total \
             time, from the first request sent to the last one finished",
        ),
        (
            "context_tokens",
            "mean of successes.prompt_len: the successful requests' prompt tokens as \
             inference-perf's tokenizer counted them",
        ),
        (
            "total_tok_per_s",
            "successes.throughput.output_tokens_per_sec: the successful requests' output tokens \
             (inference-perf's tokenizer's count) / the stage's total time, from the first \
             request sent to the last one finished",
        ),
        (
            "per_request_tok_per_s",
            "1000 / the median time_per_output_token, a request's (last token − first token) / \
             (output tokens − 1), every token of a streamed chunk timed at the chunk's arrival",
        ),
        (
            "ttft_ms",
            "median time_to_first_token over the successful requests that streamed: the first \
             streamed event's arrival (before v0.5.0 an event without text counted too)",
        ),
        (
            "tbt_ms",
            "not read: inference-perf's inter_token_latency counts every gap between two \
             timestamps of the stream, and gives the tokens of one chunk (before v0.3.0, the \
             lines of one event) the same time, so most gaps are 0 and its median is near 0; \
             kept in the raw record",
        ),
        (
            "avg_in_flight",
            "(mean request_latency × successes + mean failed request_latency × failures) / the \
             stage's total time (Little's law), not sampled",
        ),
        (
            "measured_s",
            "benchmark_time_seconds: the stage's total time, from the first request sent to the \
             last one finished",
        ),
        (
            "latency",
            "inference-perf's percentiles (seconds, median for p50) over the successful \
             requests: time_to_first_token → ttft_ms, time_per_output_token → tpot_ms (v0.5.0 \
             and later only), request_latency → e2e_ms; numpy's linear interpolation",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(name: &str) -> (PathBuf, String) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/inference-perf")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        (path, text)
    }

    fn given() -> Given {
        Given::default()
    }

    #[test]
    fn a_stage_is_a_paced_point_at_its_requested_rate() {
        let files = [real("kubecon25-vllm-stage_4_lifecycle_metrics.json")];
        let imported = parse_files(&files, &given()).unwrap();
        assert!(imported.cells.is_empty());
        let [p] = imported.paced.as_slice() else {
            panic!("{:?}", imported.paced)
        };
        assert_eq!(p.load.requested_per_s, 122.59);
        assert_eq!(p.load.arrivals, Arrivals::NotStated);
        assert_eq!(p.load.max_concurrency, None);
        assert_eq!(p.status, Status::Valid);
        assert_eq!(p.context_tokens, 204);
        assert_eq!(p.sent_requests, Some(7355));
        // Before v0.5.0 the TPOT is per line of the stream, not per token.
        assert_eq!(p.per_request_tok_per_s, None);
        assert!(p.latency.as_ref().unwrap().tpot_ms.is_none());
        assert!(p.latency.as_ref().unwrap().ttft_ms.is_some());
        crate::model::validate::paced(p).unwrap();
    }

    #[test]
    fn a_failed_request_makes_the_point_an_error_with_no_throughput() {
        let files = [real(
            "wva-staircase-20260803-stage_2_lifecycle_metrics.json",
        )];
        let imported = parse_files(&files, &given()).unwrap();
        let p = &imported.paced[0];
        assert_eq!(p.status, Status::Error);
        assert_eq!(p.total_tok_per_s, None);
        assert_eq!(
            p.reason.as_ref().unwrap().words(),
            "1 of 1800 requests failed"
        );
        crate::model::validate::paced(p).unwrap();
        assert!(
            imported.warnings[0].contains("token_count_mismatches 1799 of 1799"),
            "{:?}",
            imported.warnings
        );
    }

    #[test]
    fn requests_neither_succeeded_nor_failed_are_named() {
        let (path, text) = real("kubecon25-vllm-stage_0_lifecycle_metrics.json");
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["load_summary"]["count"] = 63.into();
        let imported = parse_files(&[(path, v.to_string())], &given()).unwrap();
        let p = &imported.paced[0];
        assert_eq!(p.status, Status::Error);
        assert_eq!(
            p.reason.as_ref().unwrap().words(),
            "3 of 63 requests neither completed nor failed (the file counts 60 completed and 0 failed)"
        );
    }

    #[test]
    fn the_summary_is_refused_saying_it_pools_the_stages() {
        let mut files: Vec<(PathBuf, String)> = (0..7)
            .map(|i| real(&format!("kubecon25-vllm-stage_{i}_lifecycle_metrics.json")))
            .collect();
        files.push(real("kubecon25-vllm-summary_lifecycle_metrics.json"));
        let err = parse_files(&files, &given()).unwrap_err().to_string();
        assert!(
            err.contains("it pools the 7 stages given beside it (its load_summary.count 38717 is the sum of theirs)"),
            "{err}"
        );
        assert!(err.contains("summary_lifecycle_metrics.json: load_summary: no requested_rate"));
        let alone = parse_files(&files[7..], &given()).unwrap_err().to_string();
        assert!(alone.contains("it pools every stage of its run"), "{alone}");
    }

    #[test]
    fn no_prompt_length_takes_context_or_is_refused() {
        let (path, text) = real("kubecon25-vllm-stage_0_lifecycle_metrics.json");
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["successes"]["prompt_len"] = Value::Null;
        let files = [(path, v.to_string())];
        let err = parse_files(&files, &given()).unwrap_err().to_string();
        assert!(
            err.contains("successes: prompt_len: no prompt length"),
            "{err}"
        );
        assert!(err.contains("--context"), "{err}");
        let with = Given {
            context_tokens: Some(2048),
            ..Given::default()
        };
        let p = &parse_files(&files, &with).unwrap().paced[0];
        assert_eq!(p.context_tokens, 2048);
        let defs = &p.measured_by.as_ref().unwrap().definitions;
        assert!(defs["context_tokens"].starts_with("given with --context"));
    }

    #[test]
    fn a_concurrency_stage_is_refused() {
        let (path, text) = real("wva-staircase-20260803-stage_0_lifecycle_metrics.json");
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["load_summary"]["concurrency"] = 8.into();
        let err = parse_files(&[(path, v.to_string())], &given())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "load_summary: concurrency 8: a stage of inference-perf's concurrent load type"
            ),
            "{err}"
        );
    }
}
