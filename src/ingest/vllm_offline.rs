//! vLLM's offline benchmarks, `--output-json` of `benchmark_latency.py`
//! (`vllm bench latency`) and of `benchmark_throughput.py` (`vllm bench
//! throughput`): recognised, and refused with what each file lacks.
//!
//! - The latency JSON (`avg_latency`, `latencies`, `percentiles`; from 2025
//!   also `std_latency`, all in seconds) times `--num-iters` runs of one batch
//!   of `--batch-size` prompts of `--input-len` tokens, each generating
//!   `--output-len` tokens. A batch of B is B requests at once of known
//!   lengths, so it could be a decode cell, but no version of the JSON
//!   records the batch size or either length (vLLM's own source, from
//!   `benchmarks/benchmark_latency.py` to `vllm/benchmarks/latency.py`, writes
//!   only the four keys), and sitegen does not assume vLLM's defaults.
//! - The throughput JSON (`elapsed_time`, `num_requests`, `total_num_tokens`,
//!   `requests_per_second`, `tokens_per_second`) is N prompts handed at once
//!   to the engine's own scheduler: no concurrency and no window, and its
//!   tokens are prompt and output together.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Imported;
use super::json::{At, parse_python_json};

pub const IMPORTER: super::Importer = super::Importer {
    name: "vllm-offline",
    detect: |s| s.json().and_then(|v| kind(v, true)).is_some(),
    one_run_from_all_files: false,
    read: |inputs, _| parse_files(inputs),
};

/// Which of vLLM's offline benchmarks wrote a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Latency,
    Throughput,
}

/// Keys every version of each JSON has.
const LATENCY_KEYS: [&str; 3] = ["avg_latency", "latencies", "percentiles"];
const THROUGHPUT_KEYS: [&str; 5] = [
    "elapsed_time",
    "num_requests",
    "total_num_tokens",
    "requests_per_second",
    "tokens_per_second",
];
/// Keys the latency JSON may have besides (`std_latency` from 2025).
const LATENCY_EXTRA: [&str; 1] = ["std_latency"];

/// The benchmark that wrote `value`: an object with its keys; for detection
/// (`exact`), with no others, so another tool's result that shares a name is
/// not claimed. Named on the command line, a file with more keys is read.
fn kind(value: &Value, exact: bool) -> Option<Kind> {
    let map = value.as_object()?;
    let has = |required: &[&str], optional: &[&str]| {
        required.iter().all(|k| map.contains_key(*k))
            && (!exact
                || map
                    .keys()
                    .all(|k| required.contains(&k.as_str()) || optional.contains(&k.as_str())))
    };
    if has(&LATENCY_KEYS, &LATENCY_EXTRA) && map["latencies"].is_array() {
        Some(Kind::Latency)
    } else if has(&THROUGHPUT_KEYS, &[]) {
        Some(Kind::Throughput)
    } else {
        None
    }
}

pub fn parse_files(files: &[(PathBuf, String)]) -> anyhow::Result<Imported> {
    let (file, text) = files
        .first()
        .ok_or_else(|| anyhow::anyhow!("vllm-offline: no file given"))?;
    let value = parse_python_json(file, text)?;
    let root = At::root(file, &value);
    match kind(&value, false) {
        Some(Kind::Latency) => Err(refuse_latency(file, &root)?),
        Some(Kind::Throughput) => Err(refuse_throughput(file, &root)?),
        None => Err(root.error(format!(
            "expected the --output-json of vLLM's benchmark_latency.py ({}) or \
             benchmark_throughput.py ({}), found {}",
            LATENCY_KEYS.join(", "),
            THROUGHPUT_KEYS.join(", "),
            root.keys()
        ))),
    }
}

/// Why a latency file has no cell, with what it holds. The figures are read
/// (errors name a malformed one) so the refusal states them.
fn refuse_latency(file: &Path, root: &At) -> anyhow::Result<anyhow::Error> {
    // No version of vLLM writes these; a derivative's file might.
    let stated: Vec<&str> = ["batch_size", "input_len", "output_len"]
        .into_iter()
        .filter(|k| root.value.get(*k).is_some())
        .collect();
    if !stated.is_empty() {
        return Ok(root.error(format!(
            "a latency JSON with {}, which vLLM's benchmark_latency.py does not write: sitegen \
             reads no latency run into a cell",
            stated.join(", ")
        )));
    }
    let avg = root.f64("avg_latency")?;
    let iterations = root.array("latencies")?.len();
    let median = root
        .child("percentiles")
        .and_then(|p| p.opt_f64("50").transpose())
        .transpose()?;
    let median = median.map_or_else(String::new, |m| format!(", median {m:.3} s"));
    Ok(anyhow::anyhow!(
        "{}: benchmark_latency's JSON records only the latencies ({iterations} iterations of one \
         batch: mean {avg:.3} s{median}), not the batch size, input or output length; sitegen \
         does not assume vLLM's defaults (batch 8, input 32, output 128), so the file has no \
         cell (a batch of B prompts of stated lengths would be one: B requests at once)",
        file.display()
    ))
}

/// Why a throughput file has no cell, with the figures it holds.
fn refuse_throughput(file: &Path, root: &At) -> anyhow::Result<anyhow::Error> {
    let n = root.u64("num_requests")?;
    let elapsed = root.f64("elapsed_time")?;
    let tokens = root.u64("total_num_tokens")?;
    let tok_s = root.f64("tokens_per_second")?;
    let req_s = root.f64("requests_per_second")?;
    Ok(anyhow::anyhow!(
        "{}: an offline throughput run of {n} prompts: every prompt submitted at once to the \
         engine's own scheduler, no concurrency level and no window; sitegen has no cell for it. \
         Not imported: elapsed_time {elapsed:.3} s, total_num_tokens {tokens} (prompt and output \
         tokens together, not split), tokens_per_second {tok_s:.1}, requests_per_second {req_s:.3}",
        file.display()
    ))
}
