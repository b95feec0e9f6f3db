//! NVIDIA GenAI-Perf's `profile_export_genai_perf.json` (AIPerf's
//! predecessor): one file per cell (one load setting, one input length);
//! several files make one run, as with AIPerf.
//!
//! Each metric is `{unit, avg, p50, ...}` at the top of the file, and the
//! settings of the run are under `input_config`, in one of two layouts,
//! read alike:
//! - 0.0.12 and earlier: flat (`concurrency`, `request_rate`, `streaming`,
//!   `synthetic_input_tokens_mean`, `model`, `tokenizer`, ...);
//! - 0.0.13 and later: nested as the config file `genai_perf_config.yaml`
//!   (`perf_analyzer.stimulus.concurrency`, `perf_analyzer.measurement`,
//!   `endpoint.streaming`, `input.synthetic_tokens.mean`, `model_names`,
//!   `tokenizer.name`, ...).
//!
//! No file records GenAI-Perf's version. What GenAI-Perf computes (its
//! `llm_profile_data_parser.py`): a request whose responses held no text is
//! skipped, so `request_count` and every per-request figure cover only the
//! requests that returned text; the benchmark's duration runs from the first
//! of those requests sent to the last response; `output_token_throughput` is
//! their output tokens / that duration, and `request_throughput` is every
//! request sent / that duration. The requests sent are therefore
//! `request_throughput` × `request_count` × `output_sequence_length.avg` /
//! `output_token_throughput`: a cell where fewer returned text than were
//! sent is an Error, its figures kept out. `profile_export_genai_perf.csv`
//! holds neither the concurrency nor the model and is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::burst::{cells_of, push_unique, set_model};
use super::json::{At, parse_python_json};
use super::{Imported, file_name};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{CellSpread, DecodeCell, MeasuredBy, Spread, Status};

pub(crate) const TOOL: &str = "GenAI-Perf";

/// How every version's CSV export begins: the per-request metrics' header,
/// its percentiles from p99 down (AIPerf's CSV runs up from p1, or has `sum`).
pub(crate) const CSV_HEADER: &str = "Metric,avg,min,max,p99,";

pub const IMPORTER: super::Importer = super::Importer {
    name: "genai-perf",
    detect: |s| is_csv(s.text) || s.json().is_some_and(looks_like),
    one_run_from_all_files: true,
    read: parse_files,
};

fn is_csv(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').starts_with(CSV_HEADER)
}

/// Whether a JSON value is GenAI-Perf's profile export: an `input_config`
/// holding GenAI-Perf's own settings, which AIPerf's never has (the nested
/// layout's `perf_analyzer` section, `template_filename` or
/// `endpoint.service_kind`; the flat layout's `service_kind`,
/// `endpoint_type`, `formatted_model_name` or `synthetic_input_tokens_mean`).
pub(crate) fn looks_like(value: &Value) -> bool {
    if value.get("aiperf_version").is_some() {
        return false;
    }
    let Some(config) = value.get("input_config").filter(|c| c.is_object()) else {
        return false;
    };
    let nested = config.get("perf_analyzer").is_some_and(Value::is_object)
        || config.get("template_filename").is_some()
        || config.pointer("/endpoint/service_kind").is_some();
    let flat = [
        "service_kind",
        "endpoint_type",
        "formatted_model_name",
        "synthetic_input_tokens_mean",
    ]
    .iter()
    .any(|k| config.get(k).is_some());
    nested || flat
}

/// The two layouts of `input_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// 0.0.12 and earlier: GenAI-Perf's command-line options, flat.
    Flat,
    /// 0.0.13 and later: the config file's sections.
    Nested,
}

impl Layout {
    fn of(config: &Value) -> Layout {
        if config.get("perf_analyzer").is_some_and(Value::is_object) {
            Layout::Nested
        } else {
            Layout::Flat
        }
    }

    fn name(self) -> &'static str {
        match self {
            Layout::Flat => "GenAI-Perf 0.0.12 or earlier (flat input_config; no version recorded)",
            Layout::Nested => {
                "GenAI-Perf 0.0.13 or later (input_config nested as genai_perf_config.yaml; \
                 no version recorded)"
            }
        }
    }
}

/// `input_config`, read by the paths of its layout.
struct Settings<'a> {
    layout: Layout,
    config: At<'a>,
}

impl<'a> Settings<'a> {
    /// The setting at `flat` (flat layout) or `nested` (nested layout).
    fn get(&self, flat: &str, nested: &str) -> Option<At<'a>> {
        self.config.child(self.path(flat, nested))
    }

    fn path<'p>(&self, flat: &'p str, nested: &'p str) -> &'p str {
        match self.layout {
            Layout::Flat => flat,
            Layout::Nested => nested,
        }
    }

    /// Where a setting is, for messages: `input_config.endpoint.streaming`.
    fn place(&self, flat: &str, nested: &str) -> String {
        format!("{}.{}", self.config.path, self.path(flat, nested))
    }

    /// A setting as text for a definition: "150", or "not set" for GenAI-Perf's "".
    fn shown(&self, flat: &str, nested: &str) -> Option<String> {
        self.shown_at(self.path(flat, nested))
    }

    /// [`Settings::shown`] at a path of this layout.
    fn shown_at(&self, path: &str) -> Option<String> {
        self.config.child(path).map(|v| match v.value {
            Value::String(s) if s.is_empty() => "not set".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// Whether the responses were streamed; `None` when the file does not say.
    fn streaming(&self) -> anyhow::Result<Option<bool>> {
        let (parent, key) = match self.layout {
            Layout::Flat => (Some(self.config.clone()), "streaming"),
            Layout::Nested => (self.config.child("endpoint"), "streaming"),
        };
        match parent {
            Some(p) => p.opt_bool(key),
            None => Ok(None),
        }
    }

    /// The model the requests named, when one (several are refused).
    fn model(&self) -> anyhow::Result<Option<String>> {
        let Some(m) = self.get("model", "model_names") else {
            return Ok(None);
        };
        let names: Vec<&str> = match m.value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or_else(|| m.error(format!("expected model names, found {v}")))
                })
                .collect::<anyhow::Result<_>>()?,
            other => return Err(m.error(format!("expected a list of model names, found {other}"))),
        };
        match names.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.to_string())),
            many => Err(m.error(format!(
                "{} models ({}), chosen per request ({}): the figures mix them, and one run is \
                 one model",
                many.len(),
                many.join(", "),
                self.shown(
                    "model_selection_strategy",
                    "endpoint.model_selection_strategy"
                )
                .unwrap_or_else(|| "round_robin".into())
            ))),
        }
    }

    /// The requests kept in flight, from the load settings.
    fn concurrency(&self) -> anyhow::Result<u32> {
        let positive = |at: &At, n: u64| -> anyhow::Result<u32> {
            if n == 0 {
                return Err(at.error("concurrency: expected 1 or more requests in flight, found 0"));
            }
            u32::try_from(n).map_err(|_| at.error(format!("concurrency: {n} is too many")))
        };
        let paced = |at: &At, rate: &Value| {
            at.error(format!(
                "request_rate {rate}: the requests arrived at a paced rate, so no number of \
                 requests in flight defines this run; profile it with --concurrency N"
            ))
        };
        match self.layout {
            Layout::Nested => {
                let stimulus = self.config.required(
                    "perf_analyzer.stimulus",
                    "the load settings, e.g. {\"concurrency\": 8}",
                )?;
                if let Some(n) = stimulus.opt_u64("concurrency")? {
                    return positive(&stimulus, n);
                }
                if let Some(rate) = stimulus.value.get("request_rate") {
                    return Err(paced(&stimulus, rate));
                }
                Err(stimulus.error(format!(
                    "expected a concurrency stimulus ({{\"concurrency\": N}}), found {}: \
                     sitegen files a run under the number of requests kept in flight, which \
                     only a concurrency stimulus sets",
                    stimulus.keys()
                )))
            }
            Layout::Flat => {
                if let Some(n) = self.config.opt_u64("concurrency")? {
                    return positive(&self.config, n);
                }
                if let Some(rate) = self
                    .config
                    .value
                    .get("request_rate")
                    .filter(|r| !r.is_null())
                {
                    return Err(paced(&self.config, rate));
                }
                Err(self.config.error(
                    "concurrency: expected the number of requests kept in flight, found nothing \
                     (and no request_rate)",
                ))
            }
        }
    }

    /// How perf_analyzer measured, as the file says, for the definitions.
    fn measurement(&self) -> String {
        match self.layout {
            Layout::Nested => {
                let mode = self.config.str_at("perf_analyzer.measurement.mode");
                let num = self.shown_at("perf_analyzer.measurement.num");
                match (mode, num) {
                    (Some("request_count"), Some(n)) if n != "not set" => {
                        format!("measurement mode request_count: a fixed count of {n} requests")
                    }
                    (Some("request_count"), _) => {
                        "measurement mode request_count (the count not recorded)".into()
                    }
                    (Some("interval"), Some(n)) => {
                        format!("measurement mode interval: perf_analyzer's windows of {n} ms")
                    }
                    (Some(other), _) => format!("measurement mode {other}"),
                    (None, _) => "the measurement mode is not recorded".into(),
                }
            }
            Layout::Flat => {
                let count = self.shown_at("request_count");
                let interval = self.shown_at("measurement_interval");
                match (count, interval) {
                    (Some(c), Some(i)) => {
                        format!(
                            "perf_analyzer ran with request_count {c} and measurement_interval {i} ms"
                        )
                    }
                    (Some(c), None) => format!("perf_analyzer ran with request_count {c}"),
                    (None, Some(i)) => {
                        format!("perf_analyzer ran with measurement_interval {i} ms")
                    }
                    (None, None) => "the measurement settings are not recorded".into(),
                }
            }
        }
    }
}

/// Units each figure is read in, with the factor to sitegen's.
const TIME: &[(&str, f64)] = &[
    ("ms", 1.0),
    ("sec", 1000.0),
    ("s", 1000.0),
    ("us", 1e-3),
    ("ns", 1e-6),
];
const TOKENS_PER_S: &[(&str, f64)] = &[("tokens/sec", 1.0)];
const TOKENS_PER_S_PER_USER: &[(&str, f64)] = &[("tokens/sec/user", 1.0)];
const REQUESTS_PER_S: &[(&str, f64)] = &[("requests/sec", 1.0), ("per sec", 1.0)];
const COUNT: &[(&str, f64)] = &[("count", 1.0)];
const TOKENS: &[(&str, f64)] = &[("tokens", 1.0)];

/// A metric object at the top of the file, with the factor from its unit.
struct Metric<'a> {
    at: At<'a>,
    scale: f64,
}

impl Metric<'_> {
    /// A statistic in sitegen's unit, when there.
    fn stat(&self, stat: &str) -> anyhow::Result<Option<f64>> {
        Ok(self.at.opt_f64(stat)?.map(|v| v * self.scale))
    }

    /// The average, which must be there.
    fn avg(&self) -> anyhow::Result<f64> {
        Ok(self.at.f64("avg")? * self.scale)
    }

    fn spread(&self) -> anyhow::Result<Option<Spread>> {
        self.at.spread(self.scale)
    }

    /// The percentiles the metric states (`p50`, `p90`, `p95`, `p99`),
    /// over `requests`; a percentile it lacks stays absent.
    fn quantiles(&self, requests: Option<u64>) -> anyhow::Result<Option<Quantiles>> {
        Quantiles::read(requests, |p| self.stat(p))
    }
}

/// The metric `name` when the file has it; its unit must be one of `units`.
fn metric<'a>(
    root: &At<'a>,
    name: &str,
    units: &[(&str, f64)],
) -> anyhow::Result<Option<Metric<'a>>> {
    let Some(at) = root.child(name) else {
        return Ok(None);
    };
    if !at.value.is_object() {
        return Err(at.error("expected a metric object ({\"unit\": ..., \"avg\": ..., ...})"));
    }
    let unit = at.value.get("unit");
    let Some(scale) = units
        .iter()
        .find(|(u, _)| unit.and_then(Value::as_str) == Some(*u))
        .map(|(_, s)| *s)
    else {
        let known: Vec<String> = units.iter().map(|(u, _)| format!("\"{u}\"")).collect();
        return Err(anyhow::anyhow!(
            "{}: {}.unit: expected {}, found {}",
            at.file.display(),
            at.path,
            known.join(" or "),
            unit.map_or_else(|| "nothing".to_string(), Value::to_string)
        ));
    };
    Ok(Some(Metric { at, scale }))
}

/// What one profile export gives.
struct FileCell {
    cell: DecodeCell,
    model: Option<String>,
    layout: Layout,
    warnings: Vec<String>,
}

pub fn parse_files(files: &[(PathBuf, String)], given: &super::Given) -> anyhow::Result<Imported> {
    let mut cells = Vec::new();
    let mut model: Option<(String, PathBuf)> = None;
    let mut layouts = Vec::new();
    let mut warnings = Vec::new();
    for (file, text) in files {
        let read = parse_file(file, text, given)?;
        match (&model, read.model) {
            (Some((first, first_file)), Some(id)) if *first != id => {
                anyhow::bail!(
                    "{}: input_config: model: expected {first} as in {}, found {id}: one run is \
                     one model",
                    file.display(),
                    first_file.display()
                );
            }
            (None, Some(id)) => model = Some((id, file.clone())),
            _ => {}
        }
        if !layouts.contains(&read.layout.name()) {
            layouts.push(read.layout.name());
        }
        warnings.extend(read.warnings);
        // One setting measured again (the same input_config) is a repeat.
        let settings = read
            .cell
            .measured_by
            .as_ref()
            .and_then(|m| m.raw.get("input_config"))
            .cloned()
            .unwrap_or(Value::Null);
        push_unique(&mut cells, file.display().to_string(), read.cell, settings)?;
    }
    let names: Vec<String> = files.iter().map(|(f, _)| file_name(f)).collect();
    let mut meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": format!("{TOOL} profile exports: {}", names.join(", ")),
    });
    if let Some((m, _)) = &model {
        set_model(&mut meta, m);
    }
    let mut imported = Imported::of_decode_cells(meta, cells_of(cells)?, layouts.join("; "));
    imported.warnings = warnings;
    Ok(imported)
}

fn parse_file(file: &Path, text: &str, given: &super::Given) -> anyhow::Result<FileCell> {
    if is_csv(text) {
        anyhow::bail!(
            "{}: GenAI-Perf's CSV export records neither the concurrency nor the model (nor \
             whether the responses were streamed); import the JSON GenAI-Perf writes beside it \
             (profile_export_genai_perf.json, or <profile export name>_genai_perf.json)",
            file.display()
        );
    }
    let value = parse_python_json(file, text)?;
    let root = At::root(file, &value);
    if !value.is_object() {
        return Err(root.error("expected GenAI-Perf's profile export (a JSON object)"));
    }
    let config = root.required("input_config", "GenAI-Perf's settings (an object)")?;
    let layout = Layout::of(config.value);
    let settings = Settings { layout, config };
    if let Some(sub) = settings.config.opt_str("subcommand")?
        && sub != "profile"
    {
        return Err(settings.config.error(format!(
            "subcommand: expected profile (one run at one load setting), found {sub}: the load \
             settings of this file are not known to be its own run's"
        )));
    }
    let model = settings.model()?;
    let concurrency = settings.concurrency()?;
    let streaming = settings.streaming()?;
    let place = |what: &str| format!("{}: {what}", file.display());
    let mut warnings = Vec::new();

    let missing = |name: &str, what: &str| {
        anyhow::anyhow!(
            "{}: {name}: expected {what} (a metric object at the top of the file), found nothing",
            file.display()
        )
    };
    let context = metric(&root, "input_sequence_length", TOKENS)?
        .ok_or_else(|| missing("input_sequence_length", "the mean input length"))?
        .avg()?;
    let throughput = metric(&root, "output_token_throughput", TOKENS_PER_S)?
        .ok_or_else(|| missing("output_token_throughput", "the output token throughput"))?
        .avg()?;
    let count = match metric(&root, "request_count", COUNT)? {
        Some(m) => Some(m.at.u64("avg")?),
        None => None,
    };
    let osl = match metric(&root, "output_sequence_length", TOKENS)? {
        Some(m) => Some(m.avg()?),
        None => None,
    };
    let request_rate = match metric(&root, "request_throughput", REQUESTS_PER_S)? {
        Some(m) => Some(m.avg()?),
        None => None,
    };
    let latency = metric(&root, "request_latency", TIME)?;
    let ttft = metric(&root, "time_to_first_token", TIME)?;
    let itl = metric(&root, "inter_token_latency", TIME)?;
    let per_user = metric(
        &root,
        "output_token_throughput_per_user",
        TOKENS_PER_S_PER_USER,
    )?;
    let per_request_old = root.child("output_token_throughput_per_request");

    // The counts, and what follows from GenAI-Perf's definitions.
    let output_tokens = count.zip(osl).map(|(n, mean)| n as f64 * mean);
    let duration = output_tokens
        .filter(|_| throughput > 0.0)
        .map(|t| t / throughput);
    let sent = duration.zip(request_rate).map(|(d, r)| d * r);
    let cant_check = "whether every request sent returned text cannot be checked";
    if count.is_none() {
        warnings.push(place(&format!(
            "request_count: absent (GenAI-Perf before 0.0.10 did not write it): the requests \
             counted, the output tokens and the benchmark's duration are left empty, and {cant_check}"
        )));
    } else if osl.is_none() {
        warnings.push(place(&format!(
            "output_sequence_length: absent: the output tokens and the benchmark's duration are \
             left empty, and {cant_check}"
        )));
    } else if request_rate.is_none() {
        warnings.push(place(&format!(
            "request_throughput: absent: the number of requests sent cannot be derived, so \
             {cant_check}"
        )));
    }
    let mut cell =
        DecodeCell::without_figures(context.round() as u64, concurrency, Status::Valid, None);
    cell.completed_requests = count;
    cell.output_tokens = output_tokens.map(|t| t.round() as u64);
    cell.measured_s = duration;
    let mut empty_requests = None;
    if count == Some(0) {
        cell.status = Status::Error;
        cell.reason = Some(Reason::of(Part::NoRequestCounted));
    } else if let (Some(sent), Some(counted)) = (sent, count) {
        let whole = sent.round();
        if (sent - whole).abs() > 1e-3 {
            warnings.push(place(&format!(
                "request_throughput × the benchmark's duration (output tokens / \
                 output_token_throughput) is {sent:.3}, not a whole number of requests: the \
                 figures do not follow GenAI-Perf's definitions, so {cant_check}"
            )));
        } else if whole as u64 > counted {
            let sent = whole as u64;
            cell.status = Status::Error;
            cell.reason = Some(Reason::of(Part::RequestsNotCounted {
                uncounted: sent - counted,
                requests: sent,
            }));
            empty_requests = Some((sent, counted));
        }
    }

    let mut definitions = definitions(&settings, streaming == Some(true));
    if let Some((sent, counted)) = empty_requests {
        definitions.insert(
            "status".into(),
            format!(
                "Error: {sent} requests sent (request_throughput × the benchmark's duration: \
                 GenAI-Perf divides every request sent by the duration) and {counted} returned \
                 text (request_count)"
            ),
        );
    }
    // The percentiles the file states, whatever the cell's status. Without
    // streaming, time_to_first_token is the whole response's latency and
    // there is no inter-token latency: only request_latency is carried.
    let streamed = streaming == Some(true);
    let of = |m: &Option<Metric>| m.as_ref().map(|m| m.quantiles(count)).transpose();
    cell.latency = Latency {
        ttft_ms: if streamed { of(&ttft)?.flatten() } else { None },
        tpot_ms: if streamed { of(&itl)?.flatten() } else { None },
        tbt_ms: None,
        e2e_ms: of(&latency)?.flatten(),
    }
    .known()
    .map(Box::new);
    if cell.latency.is_some() {
        definitions.insert(
            "latency".into(),
            format!(
                "GenAI-Perf's percentiles over the requests that returned text \
                 (request_count): {}request_latency → e2e_ms; GenAI-Perf states no gap between \
                 tokens or chunks, so tbt_ms is absent",
                if streamed {
                    "time_to_first_token → ttft_ms (the prompt cache not warmed first); \
                     inter_token_latency, each request's (last response − first response) / \
                     (output tokens − 1), tokens counted with GenAI-Perf's tokenizer, → tpot_ms; "
                } else {
                    "the responses were not streamed (or the file does not say), so its \
                     time_to_first_token is not a first token's and is not carried, nor is any \
                     time per token; "
                }
            ),
        );
    }
    if cell.status == Status::Valid {
        cell.total_tok_per_s = Some(throughput);
        if let (Some(l), Some(d), Some(n)) = (&latency, duration, count)
            && d > 0.0
        {
            cell.avg_active_requests = l.stat("avg")?.map(|ms| ms / 1000.0 * n as f64 / d);
        } else if latency.is_none() {
            warnings.push(place(
                "request_latency: absent: the average of requests in flight is left empty",
            ));
        }
        match streaming {
            Some(true) => {
                match &ttft {
                    Some(m) => cell.ttft_median_ms = m.stat("p50")?,
                    None => warnings.push(place("time_to_first_token: absent: TTFT left empty")),
                }
                match &itl {
                    Some(m) => cell.tbt_median_ms = m.stat("p50")?,
                    None => warnings.push(place(
                        "inter_token_latency: absent: time between tokens left empty",
                    )),
                }
                match &per_user {
                    Some(m) => cell.per_request_tok_per_s = m.stat("p50")?,
                    None => {
                        cell.per_request_tok_per_s =
                            cell.tbt_median_ms.filter(|t| *t > 0.0).map(|t| 1000.0 / t);
                        let instead = if cell.per_request_tok_per_s.is_some() {
                            "per-request tok/s is 1000 / inter_token_latency.p50 instead"
                        } else {
                            "per-request tok/s left empty"
                        };
                        definitions.insert(
                            "per_request_tok_per_s".into(),
                            "1000 / the median inter-token latency (the file has no \
                             output_token_throughput_per_user)"
                                .into(),
                        );
                        if per_request_old.is_some() {
                            warnings.push(place(&format!(
                                "output_token_throughput_per_request: not imported: GenAI-Perf \
                                 0.0.12 and earlier divide a request's output tokens by its whole \
                                 latency, the wait for the first token included, which sitegen's \
                                 per-request tok/s leaves out; {instead}"
                            )));
                        } else {
                            warnings.push(place(&format!(
                                "output_token_throughput_per_user: absent: {instead}"
                            )));
                        }
                    }
                }
                cell.spread = CellSpread {
                    ttft_ms: ttft.as_ref().map(Metric::spread).transpose()?.flatten(),
                    tbt_ms: itl.as_ref().map(Metric::spread).transpose()?.flatten(),
                    per_request_tok_per_s: per_user
                        .as_ref()
                        .map(Metric::spread)
                        .transpose()?
                        .flatten(),
                }
                .known()
                .map(Box::new);
            }
            Some(false) => warnings.push(place(&format!(
                "{}: false: the responses were not streamed, so GenAI-Perf's \
                 time_to_first_token is the whole response's latency (request_latency's) and \
                 there is no inter-token latency: TTFT, time between tokens and per-request \
                 tok/s are left empty",
                settings.place("streaming", "endpoint.streaming")
            ))),
            None => warnings.push(place(&format!(
                "{}: absent: whether the responses were streamed is not recorded, so TTFT, time \
                 between tokens and per-request tok/s are left empty",
                settings.place("streaming", "endpoint.streaming")
            ))),
        }
    }
    warnings.extend(unmapped(&root, &settings).into_iter().map(|w| place(&w)));
    let mut telemetry_warnings = Vec::new();
    if let Some(listed) = super::gpu_summary::genai_perf(&root, &mut telemetry_warnings)? {
        match super::gpu_summary::choose(&listed, given.gpu_index.as_deref(), given.gpu_count) {
            Ok(chosen) => match cell.measured_s {
                Some(duration) => {
                    if given.gpu_index.is_none() && chosen.gpus.len() < listed.len() {
                        warnings.push(place(&format!(
                            "telemetry_stats: the run's GPUs taken as {}; --gpu-index chooses others",
                            chosen.how
                        )));
                    }
                    let (t, defs) = super::gpu_summary::telemetry(
                        &chosen,
                        "GenAI-Perf's DCGM telemetry",
                        cell.total_tok_per_s,
                        duration,
                    );
                    cell.telemetry = Some(Box::new(crate::model::CellTelemetry {
                        server: None,
                        gpus: Some(t),
                    }));
                    definitions.extend(defs);
                }
                None => warnings.push(place(
                    "telemetry_stats: the GPU telemetry is not imported: the benchmark's \
                     duration is unknown, so its energy is too",
                )),
            },
            Err(why) => warnings.push(place(&format!(
                "telemetry_stats: the GPU telemetry is not imported: {why}"
            ))),
        }
    }
    warnings.extend(telemetry_warnings.iter().map(|w| place(w)));

    let mut raw = value.clone();
    redact_headers(&mut raw);
    crate::model::redact::redact_json(&mut raw);
    cell.measured_by = Some(MeasuredBy {
        tool: TOOL.into(),
        definitions,
        raw,
    });
    Ok(FileCell {
        cell,
        model,
        layout,
        warnings,
    })
}

/// What the file holds that no cell column takes, one warning each.
fn unmapped(root: &At, settings: &Settings) -> Vec<String> {
    let mut out = Vec::new();
    if root.child("request_goodput").is_some() {
        out.push("request_goodput: not imported: sitegen has no goodput column".into());
    }
    if root.child("sessions").is_some() {
        out.push("sessions: the per-session statistics are not imported".into());
    }
    let kind = settings.get("service_kind", "endpoint.service_kind");
    if let (Some(kind), Some(backend)) = (
        kind.as_ref().and_then(|k| k.value.as_str()),
        settings.get("backend", "endpoint.backend"),
    ) && kind != "openai"
    {
        out.push(format!(
            "{}: {}: with service kind {kind}, the request format GenAI-Perf used (tensorrtllm \
             is its default), not taken as the engine: give engine.name with --engine",
            backend.path, backend.value
        ));
    }
    out
}

/// Blanks the HTTP headers GenAI-Perf sent (`header`, `input.header`), which
/// can carry credentials in any form.
fn redact_headers(raw: &mut Value) {
    for pointer in ["/input_config/header", "/input_config/input/header"] {
        if let Some(h) = raw.pointer_mut(pointer)
            && !(h.is_null()
                || h.as_str() == Some("")
                || h.as_array().is_some_and(|a| a.is_empty()))
        {
            *h = Value::from("<redacted>");
        }
    }
}

/// How GenAI-Perf's figures differ from docs/measurement.md, with what the
/// file says of its settings.
fn definitions(s: &Settings, streamed: bool) -> BTreeMap<String, String> {
    let tokenizer = s.shown("tokenizer", "tokenizer.name").map_or_else(
        || "its tokenizer".to_string(),
        |t| format!("the tokenizer {t}"),
    );
    let synthetic = s.shown("prompt_source", "input.prompt_source").as_deref() == Some("synthetic");
    let asked_input = match (
        synthetic,
        s.shown("synthetic_input_tokens_mean", "input.synthetic_tokens.mean"),
    ) {
        (true, Some(mean)) => format!(
            "; the run asked for synthetic prompts of {mean} ± {} tokens",
            s.shown(
                "synthetic_input_tokens_stddev",
                "input.synthetic_tokens.stddev"
            )
            .unwrap_or_else(|| "?".into())
        ),
        _ => String::new(),
    };
    let max_tokens = s
        .shown("extra_inputs.max_tokens", "input.extra.max_tokens")
        .map_or_else(String::new, |m| format!(" (extra inputs: max_tokens {m})"));
    let asked_output = match s.shown("output_tokens_mean", "input.output_tokens.mean") {
        Some(m) if m == "not set" => format!("; no output length was set{max_tokens}"),
        Some(m) => format!(
            "; the requests asked for {m} ± {} output tokens",
            s.shown("output_tokens_stddev", "input.output_tokens.stddev")
                .unwrap_or_else(|| "?".into())
        ),
        None => String::new(),
    };
    let measurement = s.measurement();
    let mut d: BTreeMap<String, String> = [
        (
            "context_tokens",
            format!(
                "mean input length of the requests that returned text (input_sequence_length), \
                 the messages' text as GenAI-Perf counted it with {tokenizer}, the chat template \
                 left out{asked_input}"
            ),
        ),
        (
            "total_tok_per_s",
            format!(
                "GenAI-Perf's output_token_throughput: output tokens of the requests that \
                 returned text, counted with {tokenizer} from the response text (a chat \
                 response's content only, reasoning not counted), / the benchmark's duration, \
                 from the first request sent to the last response: ramp-up and drain are \
                 included; {measurement}{asked_output}"
            ),
        ),
        (
            "completed_requests",
            "GenAI-Perf's request_count: the requests that returned text; a request whose \
             responses held none is not counted"
                .to_string(),
        ),
        (
            "output_tokens",
            "request_count × the mean output length (output_sequence_length.avg)".to_string(),
        ),
        (
            "measured_s",
            format!(
                "the benchmark's duration, not a fixed window: output tokens / \
                 output_token_throughput (GenAI-Perf divides the one by the duration to get the \
                 other); {measurement}"
            ),
        ),
        (
            "avg_active_requests",
            "mean request latency × request_count / the benchmark's duration (Little's law), \
             not sampled"
                .to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if streamed {
        d.insert(
            "ttft_ms".into(),
            "median over the requests that returned text of the time to the first response \
             holding text; the prompt cache is not warmed first"
                .into(),
        );
        d.insert(
            "tbt_ms".into(),
            format!(
                "median over requests of each request's (last response − first response) / \
                 (output tokens − 1), tokens counted with {tokenizer}"
            ),
        );
        d.insert(
            "per_request_tok_per_s".into(),
            "median over requests of GenAI-Perf's output token throughput per user (1 / the \
             request's inter-token latency)"
                .into(),
        );
    }
    d
}
