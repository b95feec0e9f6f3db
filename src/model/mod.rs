//! The data of a benchmark run: pure types with serde and JSON Schema, no
//! I/O; with them the measurement table ([`table`]), how each number is
//! written and read back ([`format`], [`labels`], [`cards`]), why a cell is
//! not Valid in words ([`reason`]), and what valid data is ([`validate`]).
//!
//! A run is `data/<run-id>/run.json` ([`RunMeta`]) plus one file per measured
//! cell under `cells/` ([`Cell`]). Numbers are stored as numbers, with the
//! unit in the field name (`_ms`, `_s`, `_tokens`, `_tok_per_s`); display
//! strings are made by `format` at render time only.

pub mod cards;
pub mod client;
pub mod figure;
pub mod format;
pub mod labels;
pub mod launch;
pub mod paced;
pub mod reason;
pub(crate) mod redact;
pub mod sessions;
pub mod slo;
pub mod table;
pub mod validate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use client::ClientLoad;

/// The value a run's GPU, engine or other card field has when nobody said it
/// (`sitegen run` against a remote server without `--gpu`).
pub(crate) const UNKNOWN: &str = "unknown";

/// Version of the on-disk format. Bumped on any incompatible change.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// `run.json`: everything about a run except its measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunMeta {
    /// Format version; must equal the version this sitegen reads (1).
    pub schema_version: u32,
    /// Display name of the model, e.g. "GLM-5.3-Flash".
    pub model: String,
    /// Name the server was asked for in API requests (`model` field).
    pub served_model: String,
    pub hardware: Hardware,
    pub engine: Engine,
    pub run: RunSettings,
    /// The command that started the server, with secrets redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_command: Option<String>,
    /// Where the figures come from when they were not measured by `sitegen run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the run was measured: UTC, RFC 3339 ("2026-11-30T12:00:00Z").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_at: Option<String>,
}

/// The Hardware card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// Kind of accelerator, e.g. "Discrete GPU".
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// GPU model, e.g. "H200 SXM".
    pub gpu: String,
    pub gpu_count: u32,
    /// Memory of one GPU in GB (10^9 bytes), as the vendor names it (141 for H200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vram_per_gpu_gb: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
}

/// The Engine card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Engine {
    /// Inference engine, e.g. "vllm", "sglang", "llama.cpp".
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Weight format, e.g. "FP8", "BF16", "Q4_K_M".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    /// Compute backend, e.g. "cuda", "rocm", "cpu".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Source repository of the engine, without scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Build flavour, e.g. "cuda-13.2".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Source commit of the engine build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The Run card: how the measurements were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    /// Model revision (branch, tag or commit of the weights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark_tool: Option<BenchmarkTool>,
    pub decode_test: DecodeTest,
    /// How prefill was measured; absent when the run has no prefill cells
    /// (a burst tool measures none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_mode: Option<PrefillMode>,
    /// Length of one sustained-decode window in seconds; absent for request
    /// bursts, whose length each cell records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_measurement: Option<f64>,
    /// `max_tokens` of each decode request, where the source says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The API the requests were sent to, where the source says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<ApiEndpoint>,
    /// How `sitegen run` counted output tokens, where the server's stream
    /// did not say (absent: from the stream's usage, or not measured here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_count: Option<TokenCount>,
}

/// How a run's output tokens were counted (docs/measurement.md, "Token counts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenCount {
    /// From the `usage` the server sent in the stream.
    StreamUsage,
    /// One token per streamed event: the stream carries no usage, and a
    /// request of a known number of tokens streamed that many events.
    OnePerEvent,
}

impl TokenCount {
    /// The Run card's words.
    pub fn label(self) -> &'static str {
        match self {
            TokenCount::StreamUsage => "usage in the stream",
            TokenCount::OnePerEvent => "one per streamed event (checked; the stream has no usage)",
        }
    }
}

/// Where a prefill cell's prompt tokens come from, when not from the
/// stream's `usage.prompt_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptCount {
    /// The `usage.prompt_tokens` of the same request sent again, not
    /// streamed, after the measurement (the stream reported none).
    Unstreamed,
    /// The server's tokenizer counted the prompt exactly when it was built
    /// (neither the stream nor a request not streamed reported usage).
    Tokenizer,
    /// Estimated when the prompt was built, from the prompt tokens of a
    /// request not streamed (no tokenizer, no usage in the stream).
    Estimated,
}

/// The OpenAI-compatible API a run's requests use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApiEndpoint {
    /// `/v1/completions`: the prompt is sent as it is.
    Completions,
    /// `/v1/chat/completions`: the prompt is one user message, which the
    /// server's chat template wraps.
    Chat,
}

impl ApiEndpoint {
    pub fn path(self) -> &'static str {
        match self {
            ApiEndpoint::Completions => "/v1/completions",
            ApiEndpoint::Chat => "/v1/chat/completions",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// How a sustained-decode cell is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecodeTest {
    /// N streams kept busy for a fixed window; finished requests are replaced at once.
    FixedDuration,
    /// A fixed number of requests with at most N in flight, timed from the
    /// first sent to the last finished: ramp-up and drain are inside the
    /// figures (`vllm bench serve`, SGLang's bench_serving, guidellm).
    RequestBurst,
    /// One sequence generating a fixed number of tokens, timed as a whole
    /// and repeated, in-process with no server between (llama-bench's tg
    /// test): no concurrency, no ramp-up or drain.
    FixedTokens,
    /// No decode was measured: a prefill-only run.
    None,
}

/// How prefill was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrefillMode {
    /// The first (cold) request of each context, sent while warming the prompt cache.
    DecodeWarmup,
    /// Cold requests of their own, sent before any decode cell.
    Standalone,
}

/// What a cell's figures may be read as.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured as planned.
    Valid,
    /// Measured, but the server could not run all requests at once.
    RequestsQueued,
    /// Not run: this many requests at this context exceed the server's KV cache.
    OverCapacity,
    /// The model kept repeating itself; the figures were discarded.
    Looped,
    /// The measurement failed; `reason` says why.
    Error,
}

impl Status {
    /// All statuses, in the order legends list them.
    pub const ALL: [Status; 5] = [
        Status::Valid,
        Status::RequestsQueued,
        Status::Looped,
        Status::OverCapacity,
        Status::Error,
    ];

    /// Whether the cell carries throughput figures that may be shown.
    pub(crate) fn has_figures(self) -> bool {
        matches!(self, Status::Valid | Status::RequestsQueued)
    }

    /// The name in data files and CSV downloads (serde's name).
    pub fn code(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::RequestsQueued => "requests_queued",
            Status::OverCapacity => "over_capacity",
            Status::Looped => "looped",
            Status::Error => "error",
        }
    }

    /// The words a page shows.
    pub fn label(self) -> &'static str {
        match self {
            Status::Valid => "Valid",
            Status::RequestsQueued => "Requests queued",
            Status::OverCapacity => "Over capacity",
            Status::Looped => "Looped",
            Status::Error => "Error",
        }
    }

    /// The status a page's words name.
    pub(crate) fn from_label(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.label() == text)
    }

    /// The CSS class of matrix cells and table rows with this status.
    pub(crate) fn css_class(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::RequestsQueued => "requests-queued",
            Status::OverCapacity => "over-capacity",
            Status::Looped => "looped",
            Status::Error => "error",
        }
    }

    /// The legend sentence for a status that is not Valid.
    pub fn legend(self) -> Option<&'static str> {
        match self {
            Status::Valid => None,
            Status::RequestsQueued => Some(
                "Requests queued: the server could not run all requests at once, so some waited in a queue.",
            ),
            Status::OverCapacity => Some(
                "Over capacity: not run because this many requests at this context would exceed the server's KV cache.",
            ),
            Status::Looped => Some(
                "Looped: the model kept repeating the same text, so the benchmark discarded this measurement.",
            ),
            Status::Error => Some(
                "Error: the measurement failed; the full measurement table and the cell's data give the reason.",
            ),
        }
    }

    /// Why a cell with this status is not compared with another run's
    /// ("queued"); `None` for Valid, which is.
    pub(crate) fn not_compared_because(self) -> Option<&'static str> {
        match self {
            Status::Valid => None,
            Status::RequestsQueued => Some("queued"),
            Status::OverCapacity => Some("over capacity"),
            Status::Looped => Some("looped"),
            Status::Error => Some("error"),
        }
    }
}

/// One measured cell: one file under `cells/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Cell {
    Prefill(PrefillCell),
    Decode(DecodeCell),
}

impl Cell {
    pub fn context_tokens(&self) -> u64 {
        match self {
            Cell::Prefill(c) => c.context_tokens,
            Cell::Decode(c) => c.context_tokens,
        }
    }

    pub fn status(&self) -> Status {
        match self {
            Cell::Prefill(c) => c.status,
            Cell::Decode(c) => c.status,
        }
    }

    /// The tool that measured the cell, when it was imported.
    pub fn measured_by(&self) -> Option<&MeasuredBy> {
        match self {
            Cell::Prefill(c) => c.measured_by.as_ref(),
            Cell::Decode(c) => c.measured_by.as_ref(),
        }
    }

    /// Identity of the cell within its run: (phase, context, concurrency).
    pub fn key(&self) -> CellKey {
        match self {
            Cell::Prefill(c) => CellKey {
                phase: Phase::Prefill,
                context_tokens: c.context_tokens,
                concurrency: 1,
            },
            Cell::Decode(c) => CellKey {
                phase: Phase::Decode,
                context_tokens: c.context_tokens,
                concurrency: c.concurrency,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    Prefill,
    Decode,
}

/// Sort key and identity of a cell. Orders prefill before decode, then by
/// context, then by concurrency: the order of the full measurement table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    pub phase: Phase,
    pub context_tokens: u64,
    pub concurrency: u32,
}

impl CellKey {
    /// The canonical file name of the cell under `cells/`.
    pub fn file_name(&self) -> String {
        match self.phase {
            Phase::Prefill => format!("prefill-{:08}.json", self.context_tokens),
            Phase::Decode => format!(
                "decode-{:08}-x{:03}.json",
                self.context_tokens, self.concurrency
            ),
        }
    }
}

/// Prefill of one cold prompt of `context_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrefillCell {
    /// Planned prompt length in tokens (8K = 8192).
    pub context_tokens: u64,
    pub status: Status,
    /// Why the cell is not Valid (required for `error`): codes with their
    /// parameters, or an older file's words ([`reason::Reason`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<reason::Reason>,
    /// Prompt tokens the server reported (`usage.prompt_tokens`), or as
    /// `prompt_tokens_from` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Where `prompt_tokens` come from when the stream reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_from: Option<PromptCount>,
    /// Prompt tokens / TTFT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tok_per_s: Option<f64>,
    /// Time to first token of the cold prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// How much of the prompt the server's prefix cache held, by the
    /// server's own counters, where it has them: the proof that the
    /// prefill was cold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCacheCheck>,
    /// The tool that measured the cell when it was not `sitegen run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<MeasuredBy>,
}

/// A prefill's prompt as the server's prefix cache saw it, from the growth
/// of the server's counters over the request (nothing else ran meanwhile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptCacheCheck {
    /// Prompt tokens the server found in its cache instead of computing them.
    pub cached_tokens: u64,
    /// Prompt tokens it looked up there.
    pub looked_up_tokens: u64,
    /// The counter read (e.g. `vllm:prefix_cache_hits_total`).
    pub counter: String,
    /// Prompts sent for the cell, each a fresh text, before one was cold
    /// (more than 1 only when an earlier one was found cached).
    pub attempts: u32,
}

/// Sustained decode: `concurrency` streams kept busy for a fixed window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecodeCell {
    pub context_tokens: u64,
    /// Requests kept in flight at once.
    pub concurrency: u32,
    pub status: Status,
    /// Why the cell is not Valid (required for `error`): codes with their
    /// parameters, or an older file's words ([`reason::Reason`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<reason::Reason>,
    /// Output tokens that arrived inside the window / window length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s: Option<f64>,
    /// Decode rate of one stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_tok_per_s: Option<f64>,
    /// Median time to first token, measured with a warm prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_median_ms: Option<f64>,
    /// Median time between tokens, per token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_median_ms: Option<f64>,
    /// Time-weighted mean of requests in flight during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_active_requests: Option<f64>,
    /// Requests that finished inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_requests: Option<u64>,
    /// Output tokens that arrived inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Length of the window actually measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    /// Longest pause of any request inside the window: the longest gap
    /// between two of its chunks, or from its last chunk to the window's end
    /// while it was still decoding, not divided by tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pause_ms: Option<f64>,
    /// The 95% interval of `total_tok_per_s`, when its noise is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s_ci95: Option<Interval>,
    /// How the per-request figures spread across requests, as measured by
    /// `sitegen run` or as the importing tool reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Box<CellSpread>>,
    /// Latency percentiles with the requests behind them (TTFT, time per
    /// output token, time between tokens, end to end), as measured or as the
    /// importing tool stated them: what a latency budget is judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Box<slo::Latency>>,
    /// What the server and its GPUs did during the window, where it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Box<CellTelemetry>>,
    /// Every measurement of a cell measured several times (`sitegen run
    /// --repeat`, or one setting repeated in an imported file), in order;
    /// the cell's figures are the median one's, its interval theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatWindow>,
    /// Raw material behind the figures, kept by `sitegen run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Box<DecodeDetail>>,
    /// The tool that measured the cell when it was not `sitegen run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<MeasuredBy>,
}

/// A 95% confidence interval of a figure, and how it was obtained (see
/// docs/measurement.md, "Noise").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// "batch means over 6 sub-windows of 5.0 s", "the tool's std_dev", ...
    pub method: String,
}

impl Interval {
    /// `value` ± `relative` of it (0.018 for ± 1.8%).
    pub fn around(value: f64, relative: f64, method: impl Into<String>) -> Interval {
        Interval {
            low: value * (1.0 - relative),
            high: value * (1.0 + relative),
            method: method.into(),
        }
    }

    /// Half the interval's width relative to `value`: 0.018 for ± 1.8%.
    pub fn relative_half_width(&self, value: f64) -> Option<f64> {
        (value > 0.0).then(|| (self.high - self.low) / 2.0 / value)
    }
}

/// A cell imported from another benchmark tool's result file: which tool,
/// how that tool defines the figures where it differs from
/// docs/measurement.md, and the tool's own record of the cell, untouched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasuredBy {
    /// The tool as the Run card names it, e.g. "vllm bench serve".
    pub tool: String,
    /// Field name (`total_tok_per_s`, ...) to how the tool defines it, for
    /// each figure whose definition differs from sitegen's.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub definitions: std::collections::BTreeMap<String, String>,
    /// The tool's record of this cell as the file had it (secrets redacted).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub raw: serde_json::Value,
}

/// A pause is marked when it is this many times the cell's median time
/// between tokens...
pub(crate) const LONG_PAUSE_FACTOR: f64 = 10.0;
/// ...and at least this long: shorter waits are ordinary scheduling.
pub(crate) const LONG_PAUSE_MIN_MS: f64 = 250.0;

impl Run {
    /// A run without cells whose run.json is `meta` (tests).
    #[cfg(test)]
    pub(crate) fn for_test(id: &str, meta: serde_json::Value) -> Run {
        Run {
            id: id.into(),
            meta: serde_json::from_value(meta).expect("a valid run.json"),
            cells: Vec::new(),
            paced: Vec::new(),
            sessions: Vec::new(),
            notes_markdown: None,
        }
    }

    /// Gives every decode cell with a total a ± `relative` interval (tests).
    #[cfg(test)]
    pub(crate) fn set_noise(&mut self, relative: f64) {
        for c in &mut self.cells {
            if let Cell::Decode(d) = c
                && let Some(t) = d.total_tok_per_s
            {
                d.total_tok_per_s_ci95 = Some(Interval::around(t, relative, "test"));
            }
        }
    }
}

impl DecodeCell {
    /// The relative half width of total tok/s's 95% interval (0.018 for
    /// ± 1.8%), when the cell has one.
    pub fn total_noise(&self) -> Option<f64> {
        self.total_tok_per_s_ci95
            .as_ref()?
            .relative_half_width(self.total_tok_per_s?)
    }

    /// The cell's longest pause when it is long enough to mark: some
    /// request received nothing for that long, which per-token figures
    /// average away.
    pub fn long_pause_ms(&self) -> Option<f64> {
        let pause = self.max_pause_ms.filter(|_| self.status.has_figures())?;
        let tbt = self.tbt_median_ms?;
        (pause >= LONG_PAUSE_MIN_MS && pause >= LONG_PAUSE_FACTOR * tbt).then_some(pause)
    }

    /// A cell with a status and no figures (Over capacity, or a test's cell).
    pub(crate) fn without_figures(
        context_tokens: u64,
        concurrency: u32,
        status: Status,
        reason: Option<reason::Reason>,
    ) -> Self {
        DecodeCell {
            context_tokens,
            concurrency,
            status,
            reason,
            total_tok_per_s: None,
            per_request_tok_per_s: None,
            ttft_median_ms: None,
            tbt_median_ms: None,
            avg_active_requests: None,
            completed_requests: None,
            output_tokens: None,
            measured_s: None,
            max_pause_ms: None,
            total_tok_per_s_ci95: None,
            spread: None,
            latency: None,
            telemetry: None,
            repeats: Vec::new(),
            detail: None,
            measured_by: None,
        }
    }
}

/// What `sitegen run` saw during a decode window, so a figure can be checked
/// or recomputed later. Times are seconds from the window's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecodeDetail {
    /// Wall-clock start of the window, Unix seconds.
    pub window_start_unix_s: f64,
    /// Prompt tokens the server reported, median over requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Percentiles>,
    /// Time between tokens per token (a chunk of k tokens counts k times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_ms: Option<Percentiles>,
    /// Mean tokens per streamed chunk (above 1 under speculative decoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_chunk: Option<f64>,
    /// Each request's longest pause (gap between two chunks), over the
    /// requests: median, 99th percentile and largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_ms: Option<PauseSummary>,
    /// Output tokens that arrived in each second of the window (the last
    /// entry covers what is left of it): the window's own spread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens_per_second: Vec<u64>,
    /// The rate of the window's last third over its first third, when it
    /// differs beyond the interval: the engine had not settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<f64>,
    /// Most requests streaming tokens at the same moment.
    pub peak_decoding_requests: u32,
    /// Requests that failed (HTTP error, broken stream, timeout).
    pub failed_requests: u64,
    pub requests: Vec<RequestSample>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSamples>,
    /// The GPUs' summed power draw at each reading inside the window:
    /// (seconds from its start, W).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_power_w: Vec<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_evidence: Option<LoopEvidence>,
    /// The client's own load during the window: whether the figures may be
    /// its limit rather than the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientLoad>,
}

/// What the server and its GPUs did during a cell's window: why its
/// figures are what they are, and what they cost in energy. A figure the
/// source did not record is absent ("not recorded"), never 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellTelemetry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCounters>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<GpuTelemetry>,
}

/// The server's own counters over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerCounters {
    /// Where they come from: "vLLM /metrics every 1 s", "llm_decode_bench's server counters".
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
    /// Share of the samples with a request waiting (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_share: Option<f64>,
    /// KV-cache usage, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_max: Option<f64>,
    /// Requests preempted (vLLM) or retracted (SGLang) during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate: Option<f64>,
    /// Accepted draft tokens / draft tokens, over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_acceptance_rate: Option<f64>,
    /// Mean tokens a decode step produced under speculative decoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_accept_length: Option<f64>,
}

/// The GPUs the server runs on, over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuTelemetry {
    /// Where it comes from: "DCGM exporter http://...", "nvidia-smi every 500 ms".
    pub source: String,
    /// GPUs summed.
    pub gpus: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// Mean of the GPUs' summed power draw, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    /// Energy over the window, J, and how it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_from: Option<EnergySource>,
    /// Energy / output tokens of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_output_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_mhz_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_c_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_pct_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_pct_max: Option<f64>,
    /// From the clock-event reasons seen during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Throttle>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EnergySource {
    /// The delta of the GPUs' energy counter over the window.
    Counter,
    /// The trapezoid of the power samples over the window.
    PowerSamples,
    /// Mean power × the window's length, as the importing tool reported it.
    MeanPower,
}

impl EnergySource {
    /// How the energy was found, as pages say it.
    pub fn label(self) -> &'static str {
        match self {
            EnergySource::Counter => "the growth of the GPUs' energy counter over the window",
            EnergySource::PowerSamples => "the power samples integrated over the window",
            EnergySource::MeanPower => "the tool's mean power × the window",
        }
    }
}

/// The worst clock-event reason seen during the window.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Throttle {
    /// No reason that slows the clocks.
    Ok,
    /// The GPUs held their clocks down to stay under their power limit.
    PowerCapped,
    /// Slowed for heat (software or hardware thermal slowdown).
    Thermal,
    /// The hardware slowed itself (power brake, hardware slowdown).
    HardwareSlowdown,
}

impl Throttle {
    pub const ALL: [Throttle; 4] = [
        Throttle::Ok,
        Throttle::PowerCapped,
        Throttle::Thermal,
        Throttle::HardwareSlowdown,
    ];

    /// The word on pages: "ok", "power capped", ...
    pub fn label(self) -> &'static str {
        match self {
            Throttle::Ok => "ok",
            Throttle::PowerCapped => "power capped",
            Throttle::Thermal => "thermal",
            Throttle::HardwareSlowdown => "hardware slowdown",
        }
    }

    /// The value in files and the CSV: "ok", "power_capped", ...
    pub fn code(self) -> &'static str {
        match self {
            Throttle::Ok => "ok",
            Throttle::PowerCapped => "power_capped",
            Throttle::Thermal => "thermal",
            Throttle::HardwareSlowdown => "hardware_slowdown",
        }
    }
}

impl DecodeCell {
    /// The GPUs' telemetry over the window, where it was recorded.
    pub fn gpu_telemetry(&self) -> Option<&GpuTelemetry> {
        self.telemetry.as_ref()?.gpus.as_ref()
    }

    /// The server's counters over the window, where they were recorded.
    pub fn server_counters(&self) -> Option<&ServerCounters> {
        self.telemetry.as_ref()?.server.as_ref()
    }

    /// Energy per output token, J, where it was recorded.
    pub fn joules_per_output_token(&self) -> Option<f64> {
        self.gpu_telemetry()?.joules_per_output_token
    }

    /// The GPUs' telemetry, made where a measurement table gives a figure of it.
    pub(crate) fn gpu_telemetry_mut(&mut self) -> &mut GpuTelemetry {
        self.telemetry
            .get_or_insert_with(Default::default)
            .gpus
            .get_or_insert_with(|| GpuTelemetry {
                source: "as read from a measurement table".into(),
                ..Default::default()
            })
    }

    /// The server's counters, made where a measurement table gives one.
    pub(crate) fn server_counters_mut(&mut self) -> &mut ServerCounters {
        self.telemetry
            .get_or_insert_with(Default::default)
            .server
            .get_or_insert_with(|| ServerCounters {
                source: "as read from a measurement table".into(),
                ..Default::default()
            })
    }
}

/// One measurement of a cell measured several times: a window of `sitegen
/// run --repeat`, or a repeat of one setting in an imported file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatWindow {
    /// Wall-clock start of the window, Unix seconds, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_unix_s: Option<f64>,
    /// Where an imported repeat came from ("results.jsonl line 5").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s: Option<f64>,
    /// The window's own interval (batch means).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s_ci95: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens_per_second: Vec<u64>,
    /// An imported repeat's record as the file had it (secrets redacted).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub raw: serde_json::Value,
}

impl RepeatWindow {
    fn of(cell: &DecodeCell) -> RepeatWindow {
        RepeatWindow {
            window_start_unix_s: cell.detail.as_ref().map(|d| d.window_start_unix_s),
            source: None,
            status: cell.status,
            total_tok_per_s: cell.total_tok_per_s,
            total_tok_per_s_ci95: cell.total_tok_per_s_ci95.clone(),
            output_tokens: cell.output_tokens,
            tokens_per_second: cell
                .detail
                .as_ref()
                .map(|d| d.tokens_per_second.clone())
                .unwrap_or_default(),
            raw: cell
                .measured_by
                .as_ref()
                .map_or(serde_json::Value::Null, |m| m.raw.clone()),
        }
    }
}

impl DecodeCell {
    /// One cell from several measurements of it (`what` names them in the
    /// interval's method: "repeated windows", "repeats in the file"). All
    /// Valid: the figures of the median one, its total the median of all,
    /// and the 95% interval of their mean (t with n − 1 degrees of freedom):
    /// the noise from one measurement to the next. One that is not Valid
    /// gives the cell its status: the first such one is the cell. Every
    /// measurement is kept in `repeats`, in order.
    pub fn from_repeats(measured: Vec<DecodeCell>, what: &str) -> DecodeCell {
        let repeats: Vec<RepeatWindow> = measured.iter().map(RepeatWindow::of).collect();
        let n = measured.len();
        let with_repeats = |mut cell: DecodeCell| {
            cell.repeats = repeats.clone();
            cell
        };
        if let Some(bad) = measured.iter().position(|w| w.status != Status::Valid) {
            return with_repeats(measured[bad].clone());
        }
        let totals: Vec<f64> = measured.iter().filter_map(|w| w.total_tok_per_s).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            let t = |k: usize| measured[k].total_tok_per_s.unwrap_or(0.0);
            t(i).total_cmp(&t(j))
        });
        let middle = order[(n - 1) / 2];
        let mut cell = measured[middle].clone();
        if totals.len() == n && n >= 2 {
            let median = crate::stats::median(totals.clone()).expect("n >= 2");
            let (_, half) = crate::stats::mean_interval(&totals).expect("n >= 2");
            cell.total_tok_per_s = Some(median);
            cell.total_tok_per_s_ci95 = Some(Interval {
                low: (median - half).max(0.0),
                high: median + half,
                method: format!("{n} {what}"),
            });
        }
        with_repeats(cell)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// 10th, 50th and 90th percentiles across requests, per figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct CellSpread {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_tok_per_s: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_ms: Option<Spread>,
}

impl CellSpread {
    /// `None` when no figure has a spread.
    pub fn known(self) -> Option<CellSpread> {
        (self.per_request_tok_per_s.is_some() || self.ttft_ms.is_some() || self.tbt_ms.is_some())
            .then_some(self)
    }
}

/// 10th, 50th and 90th percentiles of a figure across requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseSummary {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// One request of a decode window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSample {
    /// Which of the N streams sent it.
    pub stream: u32,
    /// Seconds from the window's start to sending the request.
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Output tokens that arrived inside the window.
    pub output_tokens: u64,
    /// Seconds from sending to the last chunk (or to cancellation).
    pub duration_s: f64,
    /// The server's "length" or "stop"; "capped" ("length" before
    /// max_tokens), "cut short" (no finish reason before max_tokens), "no
    /// reason", "cancelled" at the window's end, or "error".
    pub finish_reason: String,
    pub chunks: u64,
    /// This request's time between tokens inside the window, in ms: the
    /// values the cell's median is taken over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbt_ms: Option<f64>,
    /// The server's own time per output token for this request, in ms, where
    /// the server reports it (llama.cpp's `timings.predicted_per_token_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ms_per_token: Option<f64>,
    /// This request's longest gap between two chunks inside the window, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pause_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The server's own view of the window, from its Prometheus metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSamples {
    pub samples: Vec<MetricSample>,
    /// Mean of the server's running-request count over the samples: the
    /// server's side of the average active requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_running: Option<f64>,
    /// Growth of the server's generated-token counter from just before the
    /// window's first request to just after its last one ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_tokens_delta: Option<f64>,
    /// The server's own mean time per output token over the same span, in
    /// ms, from its counters (docs/measurement.md names them): a reference
    /// for the client's time between tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_token: Option<f64>,
    /// The client's count over the same window, for comparison.
    pub client_output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSample {
    pub t_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// KV-cache usage, 0 to 1, where the server publishes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage: Option<f64>,
}

/// Why a cell was judged Looped: the repeated unit at the end of a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopEvidence {
    pub stream: u32,
    /// Length of the repeated unit in characters.
    pub period_chars: u32,
    /// How many characters at the end the repetition covers.
    pub covered_chars: u32,
    /// The repeated unit itself.
    pub unit: String,
    /// "reasoning" when the loop is in a chat model's reasoning output, not
    /// its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

/// A run as read from `data/<run-id>/`: its metadata, cells and notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The directory name; also the URL slug `runs/<id>/`.
    pub id: String,
    pub meta: RunMeta,
    /// Sorted by [`Cell::key`], no two with the same key.
    pub cells: Vec<Cell>,
    /// Points measured at a paced request rate (`paced/`), sorted by
    /// [`paced::PacedPoint::key`]: never cells of a concurrency matrix.
    pub paced: Vec<paced::PacedPoint>,
    /// Sessions windows (`sessions/`), sorted by
    /// [`sessions::SessionWindow::key`]: never cells of a matrix either.
    pub sessions: Vec<sessions::SessionWindow>,
    /// `notes.md` beside `run.json`, if any.
    pub notes_markdown: Option<String>,
}

impl Run {
    pub fn prefill_cells(&self) -> impl Iterator<Item = &PrefillCell> {
        self.cells.iter().filter_map(|c| match c {
            Cell::Prefill(p) => Some(p),
            Cell::Decode(_) => None,
        })
    }

    pub fn decode_cells(&self) -> impl Iterator<Item = &DecodeCell> {
        self.cells.iter().filter_map(|c| match c {
            Cell::Decode(d) => Some(d),
            Cell::Prefill(_) => None,
        })
    }

    /// Distinct decode contexts, ascending.
    pub fn decode_contexts(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.decode_cells().map(|c| c.context_tokens).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Distinct concurrency levels, ascending.
    pub(crate) fn concurrency_levels(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.decode_cells().map(|c| c.concurrency).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn decode_cell(&self, context_tokens: u64, concurrency: u32) -> Option<&DecodeCell> {
        self.decode_cells()
            .find(|c| c.context_tokens == context_tokens && c.concurrency == concurrency)
    }
}

/// `data/prices.json` (optional): what a GPU costs per hour, for the cost
/// per million output tokens of every valid decode cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PricesFile {
    #[serde(default)]
    pub prices: Vec<GpuPrice>,
    /// What a kWh costs where the GPUs run: the electricity per million
    /// output tokens of every valid cell with its energy recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub electricity: Option<ElectricityPrice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElectricityPrice {
    /// US dollars per kWh.
    pub usd_per_kwh: f64,
    /// Where the price comes from (shown on the pages).
    pub source: String,
    /// When the price was read, e.g. "2026-11-01".
    pub date: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuPrice {
    /// Exactly as runs name it in `hardware.gpu`, e.g. "H200 SXM".
    pub gpu: String,
    /// US dollars per GPU per hour.
    pub usd_per_gpu_hour: f64,
    /// Where the price comes from (shown on the pages).
    pub source: String,
    /// When the price was read, e.g. "2026-11-01".
    pub date: String,
}

/// `data/changes.json` (optional): deliberate changes to a setup (a new
/// engine version, a new flag), noted by the site's editors. Each starts a
/// new baseline: runs after it are never judged against runs before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesFile {
    #[serde(default)]
    pub changes: Vec<AnnotatedChange>,
}

/// One deliberate change: from a date on, or from a run on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnnotatedChange {
    /// The first day it applies to, UTC ("2026-10-16"): runs measured on
    /// or after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Or the first run it applies to, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// What changed, shown on the series page and by `sitegen check`.
    pub text: String,
    /// The series it is about (its slug, `series/<slug>/`); every series
    /// when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
}

/// `data/comparisons.json`: the comparison pages asked for by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparisonsFile {
    #[serde(default)]
    pub comparisons: Vec<ComparisonSpec>,
    /// Pair pages are made automatically for runs on the same hardware while
    /// it has at most this many runs (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_pair_limit: Option<usize>,
}

/// One comparison: 2 to 6 run ids; the first is the baseline of ratios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparisonSpec {
    pub title: String,
    pub runs: Vec<String>,
    /// Markdown shown on the page (raw HTML is shown as text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_windows_give_the_median_and_the_interval_of_their_mean() {
        let window = |total: f64, status: Status| DecodeCell {
            total_tok_per_s: Some(total),
            ..DecodeCell::without_figures(8192, 4, status, None)
        };
        let cell = DecodeCell::from_repeats(
            vec![
                window(110.0, Status::Valid),
                window(90.0, Status::Valid),
                window(100.0, Status::Valid),
            ],
            "repeated windows",
        );
        assert_eq!(cell.total_tok_per_s, Some(100.0));
        let ci = cell.total_tok_per_s_ci95.unwrap();
        // sd 10, t(2) 4.303, √3: ±24.84.
        assert!((ci.high - 124.84).abs() < 0.01, "{ci:?}");
        assert_eq!(ci.method, "3 repeated windows");
        let looped = DecodeCell::from_repeats(
            vec![window(100.0, Status::Valid), window(0.0, Status::Looped)],
            "repeated windows",
        );
        assert_eq!(looped.status, Status::Looped);
        assert_eq!(cell.repeats.len(), 3);
        assert_eq!(looped.repeats.len(), 2);
    }
}
