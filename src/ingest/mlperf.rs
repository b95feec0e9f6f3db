//! MLPerf Inference LoadGen's `mlperf_log_summary.txt`: "key : value" lines
//! in three sections (Results Summary, Additional Stats, Test Parameters
//! Used), as `loadgen/results.cc` (`PerformanceSummary::LogSummary`) writes
//! them.
//!
//! A Server run is one paced point: LoadGen sends one-sample queries with
//! Poisson arrivals at `target_qps` and no cap on those outstanding. Read:
//! `target_qps`, "Completed samples per second", "Completed tokens per
//! second", the first-token, time-to-output-token and whole-sample latency
//! percentiles (ns), the `ttft_latency`/`tpot_latency` targets, and the
//! verdict ("Result is : VALID" or INVALID with the lines that say why).
//! The summary states no prompt length: `--context` gives it, else the file
//! is refused. MLPerf's Interactive scenario is LoadGen's Server scenario
//! with tighter targets, and its file says "Scenario : Server".
//!
//! Refused: Offline (every sample in one query: no rate, no concurrency),
//! SingleStream and MultiStream (one query at a time), accuracy runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Given, Imported, file_name};
use crate::model::paced::{Arrivals, PacedLoad, PacedPoint};
use crate::model::reason::{Part, Reason};
use crate::model::slo::{Latency, Quantiles};
use crate::model::{MeasuredBy, Status};

pub(crate) const TOOL: &str = "MLPerf Inference LoadGen";

/// The title line of the summary.
const TITLE: &str = "MLPerf Results Summary";

pub const IMPORTER: super::Importer = super::Importer {
    name: "mlperf",
    detect: |s| looks_like(s.text),
    one_run_from_all_files: false,
    read: parse_files,
};

/// Whether a text is LoadGen's summary: its title among the first lines.
pub(crate) fn looks_like(text: &str) -> bool {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .any(|l| l.trim() == TITLE)
}

/// A summary read: its "key : value" lines and its bullet blocks.
struct Summary<'a> {
    file: &'a Path,
    /// Key (spaces collapsed), value, 1-based line.
    fields: Vec<(String, String, usize)>,
    /// A header line ending in ':' ("Recommendations:", "TTFT Early
    /// Stopping Result:") with its bullets, continuation lines joined.
    blocks: Vec<(String, Vec<String>)>,
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl<'a> Summary<'a> {
    fn parse(file: &'a Path, text: &str) -> Summary<'a> {
        let mut fields = Vec::new();
        let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
        let mut in_block = false;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with("====") {
                in_block = false;
                continue;
            }
            if in_block && let Some(bullet) = trimmed.strip_prefix("* ") {
                if let Some((_, items)) = blocks.last_mut() {
                    items.push(collapse(bullet));
                }
                continue;
            }
            if in_block
                && line.starts_with(' ')
                && !line.trim_start().starts_with(char::is_uppercase)
            {
                // A bullet continued on the next line (" with the run being ...").
                if let Some(last) = blocks.last_mut().and_then(|(_, items)| items.last_mut()) {
                    last.push(' ');
                    last.push_str(&collapse(trimmed));
                }
                continue;
            }
            in_block = false;
            if let Some(head) = trimmed.strip_suffix(':') {
                blocks.push((collapse(head), Vec::new()));
                in_block = true;
                continue;
            }
            if let Some((k, v)) = trimmed.split_once(':') {
                fields.push((collapse(k), v.trim().to_string(), i + 1));
            }
        }
        Summary {
            file,
            fields,
            blocks,
        }
    }

    /// The first line whose key is `key` (case-insensitive).
    fn get(&self, key: &str) -> Option<(&str, usize)> {
        self.fields
            .iter()
            .find(|(k, _, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v, l)| (v.as_str(), *l))
    }

    fn error(&self, line: Option<usize>, message: impl std::fmt::Display) -> anyhow::Error {
        match line {
            Some(l) => anyhow::anyhow!("{}: line {l}: {message}", self.file.display()),
            None => anyhow::anyhow!("{}: {message}", self.file.display()),
        }
    }

    fn text(&self, key: &str) -> anyhow::Result<&str> {
        self.get(key).map(|(v, _)| v).ok_or_else(|| {
            self.error(
                None,
                format!("no \"{key} :\" line: expected one, found none"),
            )
        })
    }

    fn opt_number(&self, key: &str) -> anyhow::Result<Option<f64>> {
        let Some((v, line)) = self.get(key) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(Some(n)),
            _ => Err(self.error(Some(line), format!("{key}: expected a number, found {v:?}"))),
        }
    }

    fn number(&self, key: &str) -> anyhow::Result<f64> {
        self.opt_number(key)?.ok_or_else(|| {
            self.error(
                None,
                format!("no \"{key} :\" line: expected a number, found none"),
            )
        })
    }

    /// The percentiles stated of one latency, ns → ms: "50.00 percentile
    /// {name} (ns)" and so on.
    fn quantiles(&self, names: &[&str]) -> anyhow::Result<Option<Quantiles>> {
        Quantiles::read(None, |p| {
            let at = match p {
                "p50" => "50.00",
                "p90" => "90.00",
                "p95" => "95.00",
                _ => "99.00",
            };
            for name in names {
                if let Some(ns) = self.opt_number(&format!("{at} percentile {name} (ns)"))? {
                    return Ok(Some(ns / 1e6));
                }
            }
            Ok(None)
        })
    }

    /// Every field and block, for the point's raw record.
    fn raw(&self) -> Value {
        let mut map = serde_json::Map::new();
        for (k, v, _) in &self.fields {
            map.entry(k.clone()).or_insert(Value::from(v.clone()));
        }
        for (head, items) in &self.blocks {
            map.entry(head.clone())
                .or_insert(Value::from(items.clone()));
        }
        Value::Object(map)
    }
}

pub fn parse_files(files: &[(PathBuf, String)], given: &Given) -> anyhow::Result<Imported> {
    let (file, text) = files
        .first()
        .ok_or_else(|| anyhow::anyhow!("mlperf: no file given"))?;
    if !looks_like(text) {
        anyhow::bail!(
            "{}: expected MLPerf LoadGen's mlperf_log_summary.txt (a \"{TITLE}\" title), found \
             none",
            file.display()
        );
    }
    let summary = Summary::parse(file, text);
    let scenario = summary.text("Scenario")?;
    let mode = summary.text("Mode")?;
    if mode != "PerformanceOnly" {
        return Err(summary.error(
            None,
            format!("Mode : {mode}: expected PerformanceOnly; an accuracy run has no performance figures"),
        ));
    }
    match scenario {
        "Server" => {}
        "Offline" => return Err(refuse_offline(&summary)?),
        "SingleStream" | "MultiStream" => {
            return Err(summary.error(
                None,
                format!(
                    "Scenario : {scenario}: LoadGen sent the next query only when the last one \
                     had finished, a latency test of one query at a time, not a rate or a \
                     concurrency level; sitegen reads MLPerf's Server scenario only"
                ),
            ));
        }
        other => {
            return Err(summary.error(
                None,
                format!(
                    "Scenario : {other}: expected Server, Offline, SingleStream or MultiStream"
                ),
            ));
        }
    }
    let point = server_point(&summary, given)?;
    let sut = summary.get("SUT name").map(|(v, _)| v.to_string());
    let mut source = format!("{TOOL} summary: {}", file_name(file));
    if let Some(s) = &sut {
        source.push_str(&format!(" (SUT name {s})"));
    }
    let meta = serde_json::json!({
        "run": {"decode_test": "request_burst", "benchmark_tool": {"name": TOOL}},
        "source": source,
    });
    Ok(Imported {
        meta,
        cells: Vec::new(),
        paced: vec![point],
        notes_markdown: None,
        warnings: Vec::new(),
        layout: "MLPerf LoadGen mlperf_log_summary.txt, Server scenario; the summary records no \
                 LoadGen version"
            .into(),
        split: Vec::new(),
    })
}

/// Why an Offline run has no point or cell, with the figures it holds.
fn refuse_offline(summary: &Summary) -> anyhow::Result<anyhow::Error> {
    let samples = summary.number("Samples per second")?;
    let tokens = summary
        .opt_number("Tokens per second")?
        .map_or_else(String::new, |t| format!(", Tokens per second {t}"));
    let per_query = summary
        .opt_number("samples_per_query")?
        .map_or_else(String::new, |n| format!(" ({n} samples in one query)"));
    let result = summary.get("Result is").map_or("", |(v, _)| v);
    Ok(summary.error(
        None,
        format!(
            "Scenario : Offline: LoadGen sent every sample at once{per_query} for the system's \
             own scheduler, no request rate and no concurrency level and no window; sitegen has \
             no cell for it. Not imported: Samples per second {samples}{tokens} (Result is \
             {result})"
        ),
    ))
}

/// The LoadGen verdict's reasons when it is INVALID.
fn invalid_part(summary: &Summary) -> Part {
    let unmet: Vec<String> = summary
        .fields
        .iter()
        .filter(|(k, v, _)| k.ends_with("satisfied") && v.eq_ignore_ascii_case("NO"))
        .map(|(k, v, _)| {
            if k == "Early stopping satisfied" {
                format!("{k}: {v}")
            } else {
                format!("{k} : {v}")
            }
        })
        .collect();
    let recommendations = summary
        .blocks
        .iter()
        .filter(|(h, _)| h == "Recommendations")
        .flat_map(|(_, items)| items.clone())
        .collect();
    let early_stopping = summary
        .blocks
        .iter()
        .filter(|(h, items)| {
            h.ends_with("Early Stopping Result")
                && items.iter().any(|i| i.starts_with("Run unsuccessful"))
        })
        .map(|(h, items)| format!("{h}: {}", items.join(" ")))
        .collect();
    Part::LoadgenInvalid {
        unmet,
        recommendations,
        early_stopping,
    }
}

fn server_point(summary: &Summary, given: &Given) -> anyhow::Result<PacedPoint> {
    let requested_per_s = summary.number("target_qps")?;
    if requested_per_s <= 0.0 {
        return Err(summary.error(
            summary.get("target_qps").map(|(_, l)| l),
            format!("target_qps: expected a rate above 0, found {requested_per_s}"),
        ));
    }
    let result = summary.text("Result is")?;
    let (status, reason) = match result {
        "VALID" => (Status::Valid, None),
        "INVALID" => (Status::Error, Some(Reason::of(invalid_part(summary)))),
        other => {
            return Err(summary.error(
                summary.get("Result is").map(|(_, l)| l),
                format!("Result is : {other}: expected VALID or INVALID"),
            ));
        }
    };
    let achieved = summary.number("Completed samples per second")?;
    let tokens_per_s = summary.opt_number("Completed tokens per second")?;
    let ttft = summary.quantiles(&["first token latency"])?;
    let tpot = summary.quantiles(&["time to output token", "time per output token"])?;
    let e2e = summary.quantiles(&["latency"])?;
    let ttft_target = summary.opt_number("ttft_latency (ns)")?;
    let tpot_target = summary.opt_number("tpot_latency (ns)")?;
    let scheduled = summary.opt_number("Scheduled samples per second")?;
    let Some(tokens_per_s) = tokens_per_s else {
        return Err(summary.error(
            None,
            "no \"Completed tokens per second :\" line: a Server run without token figures (a \
             model that is not an LLM, or run without use_token_latencies); sitegen's points \
             are tokens per second",
        ));
    };
    let Some(context_tokens) = given.context_tokens else {
        return Err(summary.error(
            None,
            "the summary states no prompt length (MLPerf's LLM datasets have prompts of many \
             lengths, and mlperf_log_summary.txt records neither their mean nor the tokens \
             sent), so the point's context is unknown: give it with --context (e.g. --context \
             1K)",
        ));
    };
    let mut definitions = definitions();
    definitions.insert(
        "context_tokens".into(),
        "given with --context: mlperf_log_summary.txt states no prompt length".into(),
    );
    if let Some(s) = scheduled {
        definitions.entry("requested_per_s".into()).and_modify(|d| {
            d.push_str(&format!(
                ". \"Scheduled samples per second\" ({s} here) is the rate of the schedule \
                 LoadGen drew from it: (samples − 1) / the last query's scheduled time"
            ))
        });
    }
    let ms = |ns: Option<f64>| {
        ns.map_or_else(|| "not stated".to_string(), |n| format!("{} ms", n / 1e6))
    };
    definitions.insert(
        "targets".into(),
        format!(
            "LoadGen's latency targets for this run (Test Parameters Used): ttft_latency {}, \
             tpot_latency {}; it judges them at a percentile the summary does not print (99% \
             for MLPerf's LLM benchmarks). The Interactive scenario is the Server scenario with \
             tighter targets: its file says Scenario : Server too",
            ms(ttft_target),
            ms(tpot_target)
        ),
    );
    let load = PacedLoad {
        requested_per_s,
        arrivals: Arrivals::Poisson,
        max_concurrency: None,
    };
    let mut point = PacedPoint::new(context_tokens, load, status, reason);
    point.achieved_per_s = Some(achieved);
    if status == Status::Valid {
        point.total_tok_per_s = Some(tokens_per_s);
        point.ttft_median_ms = ttft.as_ref().and_then(|q| q.p50);
        point.per_request_tok_per_s = tpot
            .as_ref()
            .and_then(|q| q.p50)
            .filter(|t| *t > 0.0)
            .map(|t| 1000.0 / t);
    }
    point.latency = Latency {
        ttft_ms: ttft,
        tpot_ms: tpot,
        tbt_ms: None,
        e2e_ms: e2e,
    }
    .known()
    .map(Box::new);
    point.measured_by = Some(MeasuredBy {
        tool: TOOL.into(),
        definitions,
        raw: summary.raw(),
    });
    Ok(point)
}

/// How LoadGen's figures are read into a paced point.
fn definitions() -> BTreeMap<String, String> {
    [
        (
            "requested_per_s",
            "target_qps (Test Parameters Used): the mean rate of the Server scenario's Poisson \
             arrivals as LoadGen was given it",
        ),
        (
            "arrivals",
            "Poisson, stated by the scenario: LoadGen's Server scenario sends one-sample queries \
             with exponentially distributed gaps at target_qps (loadgen/test_settings.h, \
             \"Queries have a random poisson (non-uniform) arrival rate\"; loadgen.cc, \
             ScheduleDistribution<Server>), with no limit on those outstanding",
        ),
        (
            "achieved_per_s",
            "Completed samples per second: (samples − 1) / the time until every sample was done",
        ),
        (
            "total_tok_per_s",
            "Completed tokens per second: output tokens / the time until every sample was done",
        ),
        (
            "ttft_ms",
            "LoadGen's 50.00 percentile first token latency, ns → ms",
        ),
        (
            "per_request_tok_per_s",
            "1000 / LoadGen's 50.00 percentile time to output token, a sample's (latency − first \
             token latency) / (output tokens − 1)",
        ),
        (
            "latency",
            "LoadGen's percentiles over the samples, ns → ms: first token latency → ttft_ms, time \
             to output token → tpot_ms, latency (the whole sample) → e2e_ms; the summary does not \
             state how many samples are behind them",
        ),
        (
            "status",
            "LoadGen's own verdict, \"Result is : VALID\" or INVALID: the latency targets at \
             their percentile, the minimum duration and query count, early stopping",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(name: &str) -> Vec<(PathBuf, String)> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/mlperf")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        vec![(path, text)]
    }

    fn context() -> Given {
        Given {
            context_tokens: Some(1024),
            ..Given::default()
        }
    }

    #[test]
    fn an_invalid_server_run_is_an_error_naming_what_loadgen_said() {
        let files = real(
            "ntuhpc-v5.1-lenovo-b200x8-llama2-70b-99.9-server-ranging-invalid-mlperf_log_summary.txt",
        );
        let p = &parse_files(&files, &context()).unwrap().paced[0];
        assert_eq!(p.status, Status::Error);
        assert_eq!(p.total_tok_per_s, None);
        assert_eq!(p.load.requested_per_s, 364.0);
        assert_eq!(p.achieved_per_s, Some(361.63));
        assert_eq!(
            p.reason.as_ref().unwrap().words(),
            "MLPerf LoadGen: Result is INVALID (Performance constraints satisfied : NO; Early \
             stopping satisfied: NO); recommendations: TTFT constrain not met: Reduce target QPS \
             to improve latency.; TTFT Early Stopping Result: Run unsuccessful. Processed 884736 \
             queries. Would need to run at least 350367 more queries, with the run being \
             successful if every additional query were under latency."
        );
        crate::model::validate::paced(p).unwrap();
    }

    #[test]
    fn a_server_run_without_context_is_refused_asking_for_it() {
        let files = real("ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-server-mlperf_log_summary.txt");
        let err = parse_files(&files, &Given::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("states no prompt length"), "{err}");
        assert!(err.contains("--context"), "{err}");
        assert!(err.contains("server-mlperf_log_summary.txt"), "{err}");
    }

    #[test]
    fn a_malformed_number_names_the_line_and_key() {
        let mut files =
            real("ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-server-mlperf_log_summary.txt");
        files[0].1 = files[0].1.replace("target_qps : 83.5", "target_qps : lots");
        let err = parse_files(&files, &context()).unwrap_err().to_string();
        assert!(
            err.contains("line 58: target_qps: expected a number, found \"lots\""),
            "{err}"
        );
    }

    #[test]
    fn single_stream_is_refused() {
        let mut files =
            real("ntuhpc-v5.1-amd-8xmi300x-llama2-70b-99-server-mlperf_log_summary.txt");
        files[0].1 = files[0]
            .1
            .replace("Scenario : Server", "Scenario : SingleStream");
        let err = parse_files(&files, &context()).unwrap_err().to_string();
        assert!(
            err.contains("Scenario : SingleStream: LoadGen sent the next query only"),
            "{err}"
        );
    }
}
