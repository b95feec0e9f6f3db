//! llama.cpp's `llama-bench`: `-o json` (a JSON array of test objects) and
//! `-o jsonl` (one object per line). Each object is one test, repeated `-r`
//! times in-process (no server): `samples_ns` holds each repetition's time,
//! `samples_ts` its rate, `avg_ts` / `stddev_ts` their mean and standard
//! deviation.
//!
//! A test is prompt processing (`n_prompt` > 0, `n_gen` 0: the prompt
//! processed in batches, timed as a whole), generation (`n_prompt` 0,
//! `n_gen` > 0: one sequence generating `n_gen` tokens one decode call at a
//! time, timed as a whole) or both (`-pg`). `n_depth` tokens are put in the
//! KV cache before the timer starts (builds from about 5200 on; earlier
//! builds have no `n_depth` and ran every test on an empty cache).
//!
//! Mapping, from llama-bench's source (`tools/llama-bench/llama-bench.cpp`):
//! - tg at depth d: a decode cell at context d, one sequence; total and
//!   per-request tok/s are `avg_ts`; its 95% interval a t-interval over the
//!   repetitions (`stddev_ts`, n − 1 degrees of freedom).
//! - pp at depth 0: a prefill cell of `n_prompt` tokens; prompt tok/s is
//!   `avg_ts`, TTFT `avg_ns` (the prompt's processing time: llama-bench
//!   samples no first token).
//! - pp at depth > 0 times `n_prompt` tokens added to a filled cache: not a
//!   cold prompt, and no time to first token of the whole context is in the
//!   file, so it is not imported (a warning names each); nor is `-pg`.
//!
//! One file is one configuration: rows that differ in any setting (the
//! keys other than the figures and `n_prompt` / `n_gen` / `n_depth`) are
//! refused, saying which differ and how to split the file. Rows of one test
//! at the same settings are repeats: generation repeats are combined (the
//! median, with an interval over them), prompt repeats refused (a prefill
//! cell holds one measurement). Generation tests of different lengths
//! (`-n 128,8192`: tg128 and tg8192) are different settings, never repeats:
//! a file with several lengths makes one run per length, its id suffixed
//! `-tg<length>` and its `max_output_tokens` that length, and its prompt
//! tests, if any, one run of their own suffixed `-pp`. A file with one
//! length is one run, its `max_output_tokens` that length.
//!
//! The output is often captured with `2>&1`: lines of ggml's log before
//! the JSON are skipped and named in a warning.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;
use serde_json::Value;

use super::burst::{ReadCell, cells_of, push_unique};
use super::json::{At, parse_python_json, parse_python_json_line};
use super::{Given, Imported, Sniffed, file_name};
use crate::model::{Cell, DecodeCell, Interval, MeasuredBy, PrefillCell, Status};

pub(crate) const TOOL: &str = "llama-bench";

pub const IMPORTER: super::Importer = super::Importer {
    name: "llama-bench",
    detect,
    one_run_from_all_files: false,
    read: |inputs, given| parse(&inputs[0].0, &inputs[0].1, given),
};

/// A test's measured values: what repeats of one setting may differ in.
const FIGURE_KEYS: &[&str] = &[
    "test_time",
    "avg_ns",
    "stddev_ns",
    "avg_ts",
    "stddev_ts",
    "samples_ns",
    "samples_ts",
];

/// Which test a row is: the rest of its keys are the settings.
const TEST_KEYS: &[&str] = &["n_prompt", "n_gen", "n_depth"];

/// Whether one test object looks like llama-bench's: its build, one of its
/// figures and one of its test keys (so that a file missing one of them is
/// still recognised, and refused naming the key).
pub(crate) fn looks_like(value: &Value) -> bool {
    let any = |keys: &[&str]| keys.iter().any(|k| value.get(k).is_some());
    value.get("build_commit").is_some()
        && any(&["avg_ts", "avg_ns", "samples_ts", "samples_ns"])
        && any(&["n_prompt", "n_gen", "model_type"])
}

fn detect(s: &Sniffed) -> bool {
    match s.json() {
        Some(Value::Array(a)) => return a.first().is_some_and(looks_like),
        Some(v) => return looks_like(v),
        None => {}
    }
    if s.first_line.as_ref().is_some_and(looks_like) {
        return true;
    }
    // Other output before the JSON (stderr captured with 2>&1).
    let Some(start) = json_start(s.text) else {
        return false;
    };
    let rest = &s.text[start.offset..];
    let probe = Path::new("");
    if rest.starts_with('[') {
        parse_python_json(probe, rest)
            .ok()
            .is_some_and(|v| v.as_array().and_then(|a| a.first()).is_some_and(looks_like))
    } else {
        rest.lines()
            .next()
            .and_then(|l| parse_python_json(probe, l).ok())
            .is_some_and(|v| looks_like(&v))
    }
}

/// Where the JSON of a file starts: the first line that begins with `[` or
/// `{`, after `skipped` lines (the non-empty ones are in `other`).
struct JsonStart<'a> {
    offset: usize,
    skipped: usize,
    other: Vec<&'a str>,
}

fn json_start(text: &str) -> Option<JsonStart<'_>> {
    let mut offset = 0;
    let mut other = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_start();
        if content.starts_with(['[', '{']) {
            return Some(JsonStart {
                offset: offset + (line.len() - content.len()),
                skipped: i,
                other,
            });
        }
        if !content.trim().is_empty() {
            other.push(line.trim_end());
        }
        offset += line.len();
    }
    None
}

/// The kind of test a row is, as llama-bench names it ("pp512", "tg128").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Prompt(u64),
    Generation(u64),
    Both(u64, u64),
}

impl Test {
    fn name(self) -> String {
        match self {
            Test::Prompt(p) => format!("pp{p}"),
            Test::Generation(g) => format!("tg{g}"),
            Test::Both(p, g) => format!("pp{p}+tg{g}"),
        }
    }
}

/// A row's KV-cache depth: stated, or given with `--context` for a build
/// that predates `n_depth`.
#[derive(Debug, Clone, Copy)]
enum Depth {
    Stated(u64),
    Given(u64),
}

impl Depth {
    fn tokens(self) -> u64 {
        match self {
            Depth::Stated(d) | Depth::Given(d) => d,
        }
    }
}

/// The row with the figures and the test's shape left out: what it was
/// measured at.
fn settings_of(row: &Value) -> Value {
    match row.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    !FIGURE_KEYS.contains(&k.as_str()) && !TEST_KEYS.contains(&k.as_str())
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// The settings the rows differ in, each with its values in file order.
fn differing_settings(rows: &[(String, Value)]) -> Vec<(String, Vec<Value>)> {
    let settings: Vec<Value> = rows.iter().map(|(_, v)| settings_of(v)).collect();
    let mut keys: Vec<&String> = settings
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys())
        .collect();
    keys.sort();
    keys.dedup();
    // A key a row lacks reads as null, as jq's `select(.key == null)` does.
    let absent = Value::Null;
    keys.into_iter()
        .filter_map(|k| {
            let mut values: Vec<Value> = Vec::new();
            for s in &settings {
                let v = s.get(k).unwrap_or(&absent);
                if !values.contains(v) {
                    values.push(v.clone());
                }
            }
            (values.len() > 1).then(|| (k.clone(), values))
        })
        .collect()
}

/// Definitions of a generation test's figures (llama-bench's tg).
fn decode_definitions(depth: Depth) -> BTreeMap<String, String> {
    let context = match depth {
        Depth::Stated(_) => {
            "n_depth: tokens put in the KV cache (processed before the timer starts) before \
             the sequence generates"
        }
        Depth::Given(_) => {
            "given with --context: this build of llama-bench records no n_depth (builds \
             before it existed ran every test on an empty KV cache)"
        }
    };
    [
        ("context_tokens", context),
        (
            "concurrency",
            "one sequence: llama-bench generates in-process for a single sequence, with no \
             server between",
        ),
        (
            "total_tok_per_s",
            "avg_ts: the mean over the repetitions of n_gen / the time to generate them, one \
             token per decode call (random tokens, not sampled), timed as a whole; not N \
             streams over a fixed window",
        ),
        (
            "per_request_tok_per_s",
            "avg_ts, as total tok/s: the test is one sequence",
        ),
        (
            "completed_requests",
            "the repetitions (samples_ns), each one sequence of n_gen tokens",
        ),
        ("output_tokens", "n_gen × the repetitions"),
        (
            "measured_s",
            "the repetitions' timed parts added up (samples_ns), not one window",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Definitions of a prompt-processing test's figures (llama-bench's pp at
/// depth 0).
fn prefill_definitions(depth: Depth) -> BTreeMap<String, String> {
    let mut d: BTreeMap<String, String> = [
        (
            "prompt_tokens",
            "n_prompt: the token ids llama-bench feeds (random, no text and no tokenizer); no \
             server reports them",
        ),
        (
            "prompt_tok_per_s",
            "avg_ts: the mean over the repetitions of n_prompt / the time to process the \
             prompt, in batches of n_batch (micro-batches of n_ubatch), on an emptied KV \
             cache, in-process; a mean of rates, so not exactly prompt tokens / ttft_ms",
        ),
        (
            "ttft_ms",
            "avg_ns / 10^6: the mean time to process the n_prompt tokens; llama-bench samples \
             no first token, so this is the prompt's processing alone, without an HTTP \
             server, tokenization or the first token's generation",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Depth::Given(_) = depth {
        d.insert(
            "context_tokens".into(),
            "n_prompt, on an empty KV cache as given with --context 0: this build of \
             llama-bench records no n_depth"
                .into(),
        );
    }
    d
}

/// A list of numbers under `key` (`samples_ns`, `samples_ts`), when there.
fn numbers(at: &At, key: &str) -> anyhow::Result<Option<Vec<f64>>> {
    let Some(list) = at.child(key) else {
        return Ok(None);
    };
    let Some(items) = list.value.as_array() else {
        return Err(list.error("expected a list of numbers"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64()
                .ok_or_else(|| list.error(format!("[{i}]: expected a number, found {v}")))
        })
        .collect::<anyhow::Result<Vec<f64>>>()
        .map(Some)
}

/// The raw record a cell keeps: the row as the file had it.
fn raw(value: &Value) -> Value {
    let mut raw = value.clone();
    crate::model::redact::redact_json(&mut raw);
    raw
}

/// Rows named per key where an optional figure was absent.
#[derive(Default)]
struct Absent(BTreeMap<&'static str, Vec<String>>);

impl Absent {
    fn note(&mut self, key: &'static str, place: &str) {
        self.0.entry(key).or_default().push(place.to_string());
    }
}

/// "Step-3.5-Flash-REAP-128B-A11B-Q4_K_M" for
/// "models/x/Step-3.5-Flash-REAP-128B-A11B-Q4_K_M.gguf-00001-of-00004.gguf":
/// the file name without its folders, `.gguf` and the shard suffix.
fn model_name(path: &str) -> String {
    let mut name = path.rsplit(['/', '\\']).next().unwrap_or(path).to_string();
    loop {
        let before = name.clone();
        if let Some(s) = name.strip_suffix(".gguf") {
            name = s.to_string();
        }
        // "-00001-of-00004": one shard of a split model (ASCII, so the
        // cut is at a character boundary).
        let bytes = name.as_bytes();
        if bytes.len() > 15 {
            let tail = &bytes[bytes.len() - 15..];
            let is_shard = tail[0] == b'-'
                && tail[1..6].iter().all(u8::is_ascii_digit)
                && &tail[6..10] == b"-of-"
                && tail[10..].iter().all(u8::is_ascii_digit);
            if is_shard {
                name.truncate(name.len() - 15);
            }
        }
        if name == before {
            return name;
        }
    }
}

pub fn parse(file: &Path, text: &str, given: &Given) -> anyhow::Result<Imported> {
    let mut warnings = Vec::new();
    let start = json_start(text).ok_or_else(|| {
        anyhow::anyhow!(
            "{}: expected llama-bench's output (-o json: a JSON array; -o jsonl: one JSON \
             object per line), found no line starting with [ or {{",
            file.display()
        )
    })?;
    if !start.other.is_empty() {
        let mut first = start.other[0].to_string();
        if first.chars().count() > 60 {
            first = first.chars().take(60).collect::<String>() + "…";
        }
        let lines = match start.skipped {
            1 => "line 1 is".to_string(),
            n => format!("lines 1–{n} are"),
        };
        warnings.push(format!(
            "{}: {lines} not llama-bench's JSON (another program's output captured with it, \
             e.g. by 2>&1: {first:?}); read from line {}",
            file.display(),
            start.skipped + 1
        ));
    }
    let rest = &text[start.offset..];
    let first_line = start.skipped + 1;
    let mut rows: Vec<(String, Value)> = Vec::new();
    let output = if rest.starts_with('[') {
        let value = parse_python_json_line(file, rest, first_line)?;
        let Value::Array(items) = value else {
            bail!("{}: expected a JSON array of tests", file.display());
        };
        for (i, v) in items.into_iter().enumerate() {
            rows.push((format!("[{i}]"), v));
        }
        "-o json"
    } else {
        for (i, line) in rest.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let n = first_line + i;
            rows.push((format!("line {n}"), parse_python_json_line(file, line, n)?));
        }
        "-o jsonl"
    };
    if rows.is_empty() {
        bail!(
            "{}: expected llama-bench's tests, found none",
            file.display()
        );
    }
    for (path, value) in &rows {
        if !value.is_object() {
            bail!(
                "{}: {path}: expected a llama-bench test (a JSON object)",
                file.display()
            );
        }
    }

    let differ = differing_settings(&rows);
    if !differ.is_empty() {
        let listed: Vec<String> = differ
            .iter()
            .map(|(k, vs)| {
                let vs: Vec<String> = vs
                    .iter()
                    .map(|v| match v {
                        Value::Null => "absent".to_string(),
                        v => v.to_string(),
                    })
                    .collect();
                format!("{k}: {}", vs.join(", "))
            })
            .collect();
        let (key, values) = &differ[0];
        let example = if output == "-o json" {
            format!("jq '[.[] | select(.{key} == {})]' FILE", values[0])
        } else {
            format!("jq -c 'select(.{key} == {})' FILE", values[0])
        };
        let mut tests: Vec<String> = Vec::new();
        for (_, v) in &rows {
            let name = format!(
                "{} at n_depth {}",
                Test::of(v).map_or_else(|| "?".into(), Test::name),
                v.get("n_depth").map_or("absent".into(), Value::to_string)
            );
            tests.push(name);
        }
        let mut repeated: Vec<String> = Vec::new();
        for t in &tests {
            let n = tests.iter().filter(|o| *o == t).count();
            let shown = format!("{t} ×{n}");
            if n > 1 && !repeated.contains(&shown) {
                repeated.push(shown);
            }
        }
        let same_test = if repeated.is_empty() {
            String::new()
        } else {
            format!(
                "; the same test at each setting ({}) is several results for one cell, not \
                 repeats",
                repeated.join(", ")
            )
        };
        bail!(
            "{}: the tests ran at different settings ({}){same_test}: a run is one \
             configuration, so import each setting as a run of its own, e.g. the rows of \
             {key} {} with {example}",
            file.display(),
            listed.join("; "),
            values[0]
        );
    }

    // Generation tests by their length: each length is a setting of its
    // own (tg128 and tg8192 at one depth are not repeats of each other).
    let mut decode: BTreeMap<u64, Vec<ReadCell>> = BTreeMap::new();
    let mut prefill: Vec<(String, PrefillCell)> = Vec::new();
    let mut at_depth: Vec<String> = Vec::new();
    let mut combined: Vec<String> = Vec::new();
    let mut once: Vec<String> = Vec::new();
    let mut absent = Absent::default();
    let common_settings = settings_of(&rows[0].1);
    for (path, value) in &rows {
        let at = At {
            file,
            path: path.clone(),
            value,
        };
        let place = format!("{}: {path}", file.display());
        let n_prompt = at.u64("n_prompt")?;
        let n_gen = at.u64("n_gen")?;
        let test = match (n_prompt, n_gen) {
            (0, 0) => {
                return Err(at.error(
                    "n_prompt and n_gen: expected a prompt or a generation test, found both 0",
                ));
            }
            (p, 0) => Test::Prompt(p),
            (0, g) => Test::Generation(g),
            (p, g) => Test::Both(p, g),
        };
        let depth = match (at.opt_u64("n_depth")?, given.context_tokens) {
            (Some(d), _) => Depth::Stated(d),
            (None, Some(c)) => Depth::Given(c),
            (None, None) => {
                let build = at
                    .opt_u64("build_number")
                    .ok()
                    .flatten()
                    .map_or_else(String::new, |b| format!(" (build {b})"));
                return Err(at.error(format!(
                    "n_depth: absent: this llama-bench{build} predates n_depth and does not \
                     record how many tokens were in the KV cache; builds before it ran every \
                     test on an empty one, so give --context 0 to import the file at that \
                     context"
                )));
            }
        };
        match test {
            Test::Both(..) => {
                combined.push(format!("{} ({path})", test.name()));
                continue;
            }
            Test::Prompt(_) if depth.tokens() > 0 => {
                at_depth.push(format!("{} @ d{} ({path})", test.name(), depth.tokens()));
                continue;
            }
            _ => {}
        }
        let avg_ts = at.positive("avg_ts")?;
        let samples_ts = numbers(&at, "samples_ts")?;
        let samples_ns = numbers(&at, "samples_ns")?;
        let stddev_ts = at.opt_f64("stddev_ts")?;
        match test {
            Test::Prompt(p) => {
                let avg_ns = at.positive("avg_ns")?;
                let cell = PrefillCell {
                    context_tokens: p,
                    status: Status::Valid,
                    reason: None,
                    prompt_tokens: Some(p),
                    prompt_tokens_from: None,
                    prompt_tok_per_s: Some(avg_ts),
                    ttft_ms: Some(avg_ns / 1e6),
                    prompt_cache: None,
                    measured_by: Some(MeasuredBy {
                        tool: TOOL.into(),
                        definitions: prefill_definitions(depth),
                        raw: raw(value),
                    }),
                };
                if let Some((first, _)) = prefill.iter().find(|(_, c)| c.context_tokens == p) {
                    bail!(
                        "{place}: a second {} at n_depth 0 at the same settings (the first is \
                         {first}): a repeat, and a prefill cell holds one measurement, so \
                         sitegen cannot keep both: import each as a run of its own (split the \
                         file)",
                        test.name()
                    );
                }
                prefill.push((place, cell));
            }
            Test::Generation(g) => {
                // What qualifies the total: named when absent (a prefill
                // cell has no interval, so only here).
                for (key, there) in [
                    ("samples_ts", samples_ts.is_some()),
                    ("stddev_ts", stddev_ts.is_some()),
                    ("samples_ns", samples_ns.is_some()),
                ] {
                    if !there {
                        absent.note(key, path);
                    }
                }
                let mut cell = DecodeCell::without_figures(depth.tokens(), 1, Status::Valid, None);
                cell.total_tok_per_s = Some(avg_ts);
                cell.per_request_tok_per_s = Some(avg_ts);
                if let Some(ns) = &samples_ns {
                    cell.completed_requests = Some(ns.len() as u64);
                    cell.output_tokens = Some(g * ns.len() as u64);
                    cell.measured_s = Some(ns.iter().sum::<f64>() / 1e9).filter(|s| *s > 0.0);
                }
                match (&samples_ts, stddev_ts) {
                    (Some(s), Some(sd)) if s.len() >= 2 => {
                        let n = s.len();
                        let half = crate::stats::mean_half_width(sd, n);
                        cell.total_tok_per_s_ci95 = Some(Interval {
                            low: (avg_ts - half).max(0.0),
                            high: avg_ts + half,
                            method: format!(
                                "t-interval over llama-bench's {n} repetitions (avg_ts ± \
                                 t({}) × stddev_ts / √{n})",
                                n - 1
                            ),
                        });
                    }
                    (Some(s), _) if s.len() < 2 => once.push(format!("{} ({path})", test.name())),
                    _ => {}
                }
                cell.measured_by = Some(MeasuredBy {
                    tool: TOOL.into(),
                    definitions: decode_definitions(depth),
                    raw: raw(value),
                });
                push_unique(
                    decode.entry(g).or_default(),
                    place,
                    cell,
                    common_settings.clone(),
                )?;
            }
            Test::Both(..) => {} // skipped above
        }
    }

    if !at_depth.is_empty() {
        warnings.push(format!(
            "{}: {} prompt-processing tests at n_depth > 0 are not imported ({}): each times \
             n_prompt tokens added to n_depth tokens already in the KV cache, and a prefill \
             cell is one cold prompt with its time to first token, which such a test does not \
             measure",
            file.display(),
            at_depth.len(),
            at_depth.join(", ")
        ));
    }
    if !combined.is_empty() {
        warnings.push(format!(
            "{}: {} combined prompt + generation tests (-pg) are not imported ({}): each \
             times a prompt and its generation together (avg_ts counts both), which is \
             neither a prefill nor a decode cell",
            file.display(),
            combined.len(),
            combined.join(", ")
        ));
    }
    if !once.is_empty() {
        warnings.push(format!(
            "{}: {} generation tests ran once (one sample: -r 1): their total tok/s has no \
             95% interval ({})",
            file.display(),
            once.len(),
            once.join(", ")
        ));
    }
    for (key, places) in &absent.0 {
        let what = match *key {
            "samples_ns" => {
                "the repetitions' count, tokens and time (completed requests, output tokens, \
                 measured s) are left empty"
            }
            _ => "total tok/s has no 95% interval",
        };
        warnings.push(format!(
            "{}: {key}: absent ({}): {what}",
            file.display(),
            places.join(", ")
        ));
    }
    if let Some(c) = given.context_tokens
        && rows.iter().all(|(_, v)| v.get("n_depth").is_some())
    {
        warnings.push(format!(
            "{}: --context {c} is not used: every test states its n_depth",
            file.display()
        ));
    }
    if decode.is_empty() && prefill.is_empty() {
        bail!(
            "{}: no test maps to a cell: sitegen imports generation tests (tg) and prompt \
             tests at n_depth 0 (pp); see the warnings: {}",
            file.display(),
            warnings.join(" ")
        );
    }

    // Cards: every row has the same settings, so the first row's.
    let first = At::root(file, &rows[0].1);
    let mut meta = serde_json::json!({
        "run": {
            "benchmark_tool": {"name": TOOL},
            "decode_test": if decode.is_empty() { "none" } else { "fixed_tokens" },
        },
        "source": format!("llama-bench results: {}", file_name(file)),
    });
    if !prefill.is_empty() {
        meta["run"]["prefill_mode"] = Value::from("standalone");
    }
    let build = first.opt_u64("build_number")?;
    let commit = first.opt_str("build_commit")?.filter(|c| !c.is_empty());
    let version = match (build, commit) {
        (Some(b), Some(c)) => Some(format!("b{b}-{c}")),
        (Some(b), None) => Some(format!("b{b}")),
        (None, Some(c)) => Some(c.to_string()),
        (None, None) => None,
    };
    meta["engine"] = serde_json::json!({"name": "llama.cpp"});
    if let Some(v) = &version {
        meta["engine"]["version"] = Value::from(v.as_str());
        meta["run"]["benchmark_tool"]["version"] = Value::from(v.as_str());
    }
    if let Some(c) = commit {
        meta["engine"]["commit"] = Value::from(c);
    }
    if let Some(b) = first.opt_str("backends")?.filter(|b| !b.is_empty()) {
        meta["engine"]["backend"] = Value::from(b);
    }
    match first
        .opt_str("model_filename")?
        .filter(|m| !m.trim().is_empty())
    {
        Some(path) => {
            let served = path.rsplit(['/', '\\']).next().unwrap_or(path);
            meta["model"] = Value::from(model_name(path));
            meta["served_model"] = Value::from(served);
        }
        None => warnings.push(format!(
            "{}: model_filename: absent: the model is not named (model_type {:?} describes \
             its architecture, not which model it is); give it with --model",
            file.display(),
            first.opt_str("model_type")?.unwrap_or("absent")
        )),
    }
    if let Some(gpus) = first.opt_str("gpu_info")?.filter(|g| !g.trim().is_empty()) {
        let names: Vec<&str> = gpus.split(", ").map(str::trim).collect();
        if names.iter().all(|n| *n == names[0]) {
            meta["hardware"] = serde_json::json!({"gpu": names[0]});
            if names.len() > 1 {
                warnings.push(format!(
                    "{}: gpu_info lists {} devices ({gpus}): llama-bench does not record how \
                     many of them a test used; give hardware.gpu_count",
                    file.display(),
                    names.len()
                ));
            }
        } else {
            warnings.push(format!(
                "{}: gpu_info lists different devices ({gpus}): hardware.gpu is left for \
                 you to give",
                file.display()
            ));
        }
    }
    let mut times: Vec<&str> = rows
        .iter()
        .filter_map(|(_, v)| v.get("test_time").and_then(Value::as_str))
        .filter(|t| t.ends_with('Z') && humantime::parse_rfc3339(t).is_ok())
        .collect();
    times.sort_unstable();
    if let Some(t) = times.first() {
        meta["measured_at"] = Value::from(*t);
    }

    let mut layout = match build {
        Some(b) => format!("llama-bench build {b} ({output})"),
        None => format!("llama-bench, no build_number ({output})"),
    };
    if !start.other.is_empty() {
        layout.push_str(&format!(
            ", after {} of other output",
            crate::model::format::counted(start.skipped, "line")
        ));
    }
    let prefill: Vec<Cell> = prefill.into_iter().map(|(_, c)| Cell::Prefill(c)).collect();
    if decode.len() <= 1 {
        let mut cells = prefill;
        if let Some((g, reads)) = decode.into_iter().next() {
            meta["run"]["max_output_tokens"] = Value::from(g);
            cells.extend(cells_of(reads)?.into_iter().map(Cell::Decode));
        }
        return Ok(Imported {
            meta,
            cells,
            paced: Vec::new(),
            notes_markdown: None,
            warnings,
            layout,
            split: Vec::new(),
        });
    }
    // Several generation lengths: one run per length ("-tg128"), its
    // max_output_tokens that length, and the prompt tests, if any, a run of
    // their own ("-pp"), so that each measurement is stored once.
    let lengths: Vec<String> = decode.keys().map(|g| format!("tg{g}")).collect();
    warnings.push(format!(
        "{}: the generation tests ran at {} lengths ({}): each length is a run of its own \
         (the run id followed by -tg<length>){}",
        file.display(),
        decode.len(),
        lengths.join(", "),
        if prefill.is_empty() {
            String::new()
        } else {
            ", and the prompt tests a run of their own (-pp)".into()
        }
    ));
    let part = |meta: Value, cells: Vec<Cell>| Imported {
        meta,
        cells,
        paced: Vec::new(),
        notes_markdown: None,
        warnings: Vec::new(),
        layout: layout.clone(),
        split: Vec::new(),
    };
    let mut split = Vec::new();
    if !prefill.is_empty() {
        let mut m = meta.clone();
        m["run"]["decode_test"] = Value::from("none");
        split.push(("-pp".to_string(), part(m, prefill)));
    }
    for (g, reads) in decode {
        let mut m = meta.clone();
        m["run"]["max_output_tokens"] = Value::from(g);
        if let Some(run) = m["run"].as_object_mut() {
            run.remove("prefill_mode");
        }
        let cells = cells_of(reads)?.into_iter().map(Cell::Decode).collect();
        split.push((format!("-tg{g}"), part(m, cells)));
    }
    Ok(Imported {
        meta,
        cells: Vec::new(),
        paced: Vec::new(),
        notes_markdown: None,
        warnings,
        layout,
        split,
    })
}

impl Test {
    /// The test a row is, when its `n_prompt` and `n_gen` are whole numbers.
    fn of(row: &Value) -> Option<Test> {
        let p = row.get("n_prompt")?.as_u64()?;
        let g = row.get("n_gen")?.as_u64()?;
        match (p, g) {
            (0, 0) => None,
            (p, 0) => Some(Test::Prompt(p)),
            (0, g) => Some(Test::Generation(g)),
            (p, g) => Some(Test::Both(p, g)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_the_file_name_without_folders_extension_or_shard() {
        assert_eq!(
            model_name("models/step/Step-3.5-Flash-REAP-128B-A11B-Q4_K_M.gguf-00001-of-00004.gguf"),
            "Step-3.5-Flash-REAP-128B-A11B-Q4_K_M"
        );
        assert_eq!(
            model_name("/m/DeepSeek-V4-Flash-0731-UD-IQ2_XXS-00001-of-00003.gguf"),
            "DeepSeek-V4-Flash-0731-UD-IQ2_XXS"
        );
        assert_eq!(
            model_name("C:\\models\\Snowpiercer-15B-v1.Q3_K_L.gguf"),
            "Snowpiercer-15B-v1.Q3_K_L"
        );
    }

    #[test]
    fn the_json_starts_after_other_output() {
        let text = "ggml_cuda_init: found 1 ROCm devices:\n  Device 0: x\n[\n  {}\n]\n";
        let start = json_start(text).unwrap();
        assert_eq!(start.skipped, 2);
        assert_eq!(&text[start.offset..start.offset + 1], "[");
        assert_eq!(start.other.len(), 2);
    }
}
