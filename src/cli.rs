//! Command-line interface: the arguments, and how they become the library's
//! options (each flag's value checked and named in the error). No other logic.

// Doc comments here are the --help text, where `<run-id>` is a placeholder, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::ingest::Format;
use crate::runner::{RunOptions, plan};

use crate::model::cards::MetaFlags;

#[derive(Debug, Parser)]
#[command(
    name = "sitegen",
    // "0.1.0 (commit 2eb4c89a1b2c)": which build made a site, when a page looks wrong.
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SITEGEN_COMMIT"), ")"),
    about = "Measure LLM inference servers and publish the results as a static site"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
// The arguments are parsed once per process: boxing the large ones would
// save nothing worth the noise.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Render every run under the data folder into a static site.
    Build(BuildArgs),
    /// Import measurements made elsewhere into the data folder.
    #[command(about = ingest_about())]
    Ingest(IngestArgs),
    /// Measure an OpenAI-compatible server into data/<run-id>/, one file per cell.
    Run(Box<RunArgs>),
    /// Build the site in memory and serve it on 127.0.0.1, rebuilding when the data changes.
    Serve(ServeArgs),
    /// Set up a results repository: data/ with an example run, a GitHub Pages
    /// workflow that builds with a released sitegen, .gitignore and README.
    Init(InitArgs),
    /// Write the JSON Schemas of the data files (run.json, cells, paced points, sessions windows, comparisons.json, changes.json, prices.json, slo.json) and of the capacity download.
    Schema(SchemaArgs),
    /// Judge the newest run of every series against the runs before it:
    /// Markdown for people, JSON for machines, and an exit code for CI
    /// (1 on a regression, 2 on data that cannot be read).
    Check(CheckArgs),
    /// Write runs of the data folder in another tool's format: llm-d's
    /// Benchmark Report v0.2.1, one YAML report per load point, into
    /// <out>/<run-id>/.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The format to write: llm-d-report (llm-d's Benchmark Report v0.2.1).
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Folder holding the runs, as for sitegen build.
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Folder the reports go into, one folder per run (replaced as a whole).
    #[arg(long, default_value = "export")]
    pub out: PathBuf,
    /// The runs to export, by id; every run when none is named.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
}

/// `--format` of `sitegen export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// llm-d's Benchmark Report v0.2.1.
    #[value(name = "llm-d-report")]
    LlmdReport,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Folder holding the runs, as for sitegen build.
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Judge this run (instead of every series' newest) against --baseline.
    #[arg(long, requires = "baseline")]
    pub run: Option<String>,
    /// The run ids to judge --run against, comma-separated, oldest first
    /// (three or more; fewer give "insufficient data").
    #[arg(long, requires = "run", value_delimiter = ',')]
    pub baseline: Vec<String>,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The rule of change: the same flags for the pages `build` writes and for `check`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Earlier runs in the baseline window.
    #[arg(long, default_value_t = crate::judge::change::Rule::default().window)]
    pub window: usize,
    /// The smallest change called, in percent.
    #[arg(long, default_value_t = crate::judge::change::Rule::default().threshold * 100.0)]
    pub threshold: f64,
}

impl JudgeArgs {
    /// The rule of change from the flags, each checked.
    pub fn rule(&self) -> anyhow::Result<crate::judge::change::Rule> {
        if self.window < crate::judge::change::MIN_BASELINE {
            anyhow::bail!(
                "--window: expected {} or more runs, found {}",
                crate::judge::change::MIN_BASELINE,
                self.window
            );
        }
        if !(self.threshold.is_finite() && (0.0..100.0).contains(&self.threshold)) {
            anyhow::bail!(
                "--threshold: expected a percentage from 0 to 100, found {}",
                self.threshold
            );
        }
        Ok(crate::judge::change::Rule {
            window: self.window,
            threshold: self.threshold / 100.0,
            ..Default::default()
        })
    }
}

/// Where a check's report goes and when it fails the job.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// When to exit with 1: regression, change (a regression or an improvement), or never.
    #[arg(long, value_enum, default_value_t = crate::app::check::FailOn::Regression)]
    pub fail_on: crate::app::check::FailOn,
    /// Also append the Markdown report to this file (GitHub's $GITHUB_STEP_SUMMARY is
    /// appended to whenever it is set).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the Markdown report to this file, replacing it (the body of a
    /// pull request's comment).
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// The published site's address, so the report links to its pages.
    #[arg(long)]
    pub site_url: Option<String>,
}

impl ReportArgs {
    /// The flags given, by name: `build` takes them only with --check.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.fail_on != crate::app::check::FailOn::Regression {
            given.push("--fail-on");
        }
        for (name, set) in [
            ("--summary", self.summary.is_some()),
            ("--json", self.json.is_some()),
            ("--markdown", self.markdown.is_some()),
            ("--site-url", self.site_url.is_some()),
        ] {
            if set {
                given.push(name);
            }
        }
        given
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Folder holding the runs, as for sitegen build.
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Port on 127.0.0.1; 0 picks a free one. Without it: 8000, or a free
    /// port when 8000 is taken.
    #[arg(long)]
    pub port: Option<u16>,
    /// Serve the site under this path, as a static host serving it from a sub-path would.
    #[arg(long, default_value = "/")]
    pub base_path: String,
    /// Serve an empty site when the data folder has no run (by default an error).
    #[arg(long)]
    pub allow_empty: bool,
}

/// The formats `sitegen ingest` reads, from the one list of them.
fn format_names() -> String {
    Format::names().join(", ")
}

fn ingest_about() -> String {
    format!(
        "Import measurements made elsewhere into the data folder: sitegen ingest [FORMAT] \
         FILE... (FORMAT: {}; recognised from each file when left out)",
        format_names()
    )
}

fn format_help() -> String {
    format!(
        "An optional format ({}, auto), then the files; without it each file's format is \
         recognised from its content",
        format_names()
    )
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to set up: new or empty.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Leave data/ empty (no example run); the workflow then builds with --allow-empty.
    #[arg(long)]
    pub allow_empty: bool,
    /// Set up a folder that already holds files: only missing files are
    /// added, every file there is kept as it is.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Folder to write the data files' .schema.json into.
    #[arg(long, default_value = "docs/schema")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Folder holding the runs (`<run-id>/run.json`, `<run-id>/cells/*.json`).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Folder the site is written to; replaced as a whole when the build succeeds.
    #[arg(long, default_value = "site")]
    pub out: PathBuf,
    /// Build an empty site when the data folder has no run (by default an
    /// error: a wrong path would otherwise publish an empty site).
    #[arg(long)]
    pub allow_empty: bool,
    /// Render every file anew, taking none from the site already in the
    /// output folder (by default the pages of runs, series and comparisons
    /// unchanged since the last build are kept, not rendered again).
    #[arg(long)]
    pub fresh: bool,
    /// Also judge every series' newest run, as sitegen check does (the
    /// report on stderr and in $GITHUB_STEP_SUMMARY; exit 1 on a regression,
    /// after the site is written).
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[arg(required = true, value_name = "[FORMAT] FILE", help = format_help())]
    pub inputs: Vec<PathBuf>,
    /// Data folder to write the runs into.
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Run id (with a single file); default: the file name without extension.
    #[arg(long)]
    pub id: Option<String>,
    /// Replace a run that already exists.
    #[arg(long)]
    pub force: bool,
    /// JSON merged over what each file says of the run's cards (same fields
    /// as run.json), and over the card flags.
    #[arg(long)]
    pub meta: Option<PathBuf>,
    /// The format, as the first word names it (that word is then a format,
    /// never a file: write ./csv for a file named csv).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Context in tokens (8K = 8,192) for files that do not state it
    /// (AIPerf with prompts from a dataset); a file's own figure wins.
    #[arg(long, value_parser = parse_context_arg)]
    pub context: Option<u64>,
    /// Model name for the run's card (the same as --model-name).
    #[arg(long, conflicts_with = "model_name")]
    pub model: Option<String>,
    /// The GPUs the server ran on, by index, e.g. 0,1: which of the GPUs a
    /// file's GPU telemetry lists are the run's (AIPerf, GenAI-Perf).
    #[arg(long, value_name = "INDEXES")]
    pub gpu_index: Option<String>,
    /// Card fields: --gpu, --gpu-count, --engine, --engine-version ... as `sitegen run` takes them.
    #[command(flatten)]
    pub cards: MetaFlags,
    /// Print, per file, the format and version recognised, the cards found
    /// (and which came from --meta) and the cells it would write; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `--gpu-index 0,1`: GPU indexes separated by commas.
pub fn parse_gpu_index(list: &str) -> anyhow::Result<Vec<u32>> {
    list.split(',')
        .map(|i| i.trim().parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .map_err(|_| {
            anyhow::anyhow!(
                "--gpu-index {list}: expected GPU indexes separated by commas, e.g. 0,1"
            )
        })
}

fn parse_context_arg(text: &str) -> Result<u64, String> {
    crate::model::format::parse_context_label(text).map_err(|e| e.to_string())
}

impl IngestArgs {
    /// The card flags as a partial run.json.
    pub fn cards_patch(&self) -> serde_json::Value {
        let mut cards = self.cards.clone();
        if let Some(m) = &self.model {
            cards.model_name = Some(m.clone());
        }
        cards.patch()
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted).
    #[arg(long)]
    pub url: String,
    /// Model to request; default: the first one /v1/models lists.
    #[arg(long)]
    pub model: Option<String>,
    /// Run id: the folder under --data and the page URL runs/<run-id>/.
    #[arg(long)]
    pub run_id: String,
    /// Data folder the run is written into (data/<run-id>/).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Context lengths, e.g. 2K,8K,32K (8K = 8,192 tokens); default 8K, 16K ... up to what fits.
    #[arg(long)]
    pub contexts: Option<String>,
    /// Simultaneous requests.
    #[arg(long, default_value_t = plan::DEFAULT_CONCURRENCY.map(|n| n.to_string()).join(","))]
    pub concurrency: String,
    /// Length of each sustained-decode window, e.g. 30s, 2m.
    #[arg(long, default_value = "30s")]
    pub duration: humantime::Duration,
    /// Measure each decode cell this many times, in separate windows: the
    /// cell's figure is their median and its 95% interval comes from the
    /// windows (the run-to-run noise a comparison needs).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// max_tokens of each decode request.
    #[arg(long, default_value_t = 4096)]
    pub max_output: u32,
    /// KV cache capacity in tokens, overriding what the server reports.
    #[arg(long)]
    pub kv_capacity: Option<u64>,
    /// Longest prompt + output per request, overriding what the server reports.
    #[arg(long)]
    pub max_model_len: Option<u64>,
    /// Sampling temperature of every request (0 = greedy).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Print the plan (cells, skipped cells, estimated time) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Measure again cells that are already in the run folder.
    #[arg(long)]
    pub force: bool,
    /// The API to measure: completions, chat, or auto (completions when the
    /// server offers it, else chat).
    #[arg(long, value_enum, default_value_t = EndpointArg::Auto)]
    pub endpoint: EndpointArg,
    /// On resume, keep cells whose status is Error instead of measuring them again.
    #[arg(long, conflicts_with = "force")]
    pub keep_errors: bool,
    /// Environment variable holding the API key (the key itself is never stored).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,
    /// Give up on a request that sends nothing for this long.
    #[arg(long, default_value = "10m")]
    pub request_timeout: humantime::Duration,
    /// Sample the server's /metrics and its GPUs this often during a window; 0s turns it off.
    #[arg(long, default_value = "1s")]
    pub metrics_interval: humantime::Duration,
    /// A DCGM exporter's Prometheus endpoint, e.g. http://gpu-host:9400/metrics:
    /// the power, energy, clocks and throttle reasons of the server's GPUs
    /// during each window. Without it, a server on this host has its GPUs
    /// read with nvidia-smi.
    #[arg(long, value_name = "URL")]
    pub gpu_metrics: Option<String>,
    /// The GPUs the server runs on, by index, e.g. 0,1 (for GPU telemetry);
    /// default: the first --gpu-count.
    #[arg(long, value_name = "INDEXES")]
    pub gpu_index: Option<String>,
    /// Sessions at once, e.g. 1,4,16: adds the sessions workload (a shared
    /// prefix, then turns on a growing context), one window per number.
    #[arg(long, value_name = "N,...")]
    pub sessions: Option<String>,
    /// Tokens every session shares at its start (system prompt and tools).
    #[arg(long, default_value = "2K", requires = "sessions")]
    pub session_prefix: String,
    /// New user tokens each turn appends.
    #[arg(long, default_value_t = 512, requires = "sessions")]
    pub session_user: u64,
    /// Output tokens of each answer.
    #[arg(long, default_value_t = 256, requires = "sessions")]
    pub session_answer: u32,
    /// Turns of a session; default: as many as the context window holds, at most 16.
    #[arg(long, requires = "sessions")]
    pub session_turns: Option<u32>,
    /// Wait between an answer and the next turn, e.g. 2s.
    #[arg(long, default_value = "0s", requires = "sessions")]
    pub think_time: humantime::Duration,
    /// Measure the sessions workload alone, not the matrix.
    #[arg(long, requires = "sessions")]
    pub sessions_only: bool,
    /// JSON merged over run.json's cards (same field names as run.json).
    #[arg(long)]
    pub meta: Option<PathBuf>,
    /// Card fields: --model-name, --gpu, --gpu-count, --engine ...
    #[command(flatten)]
    pub cards: MetaFlags,
}

/// `--endpoint` of `sitegen run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EndpointArg {
    Auto,
    Completions,
    Chat,
}

/// Splits `[FORMAT] FILE...`: a first word that names a format is the
/// format, even where a file or folder of that name exists ("auto"
/// recognises each file's format, as leaving it out does); `--format` names
/// it instead.
pub fn ingest_inputs(
    format_flag: Option<&str>,
    mut inputs: Vec<PathBuf>,
) -> anyhow::Result<(Option<Format>, Vec<PathBuf>)> {
    let by_name = |word: &str| -> Option<Option<Format>> {
        match word {
            "auto" => Some(None),
            w => Format::named(w).map(Some),
        }
    };
    let unknown = |word: &str| anyhow::anyhow!("{word}: not a format ({}, auto)", format_names());
    let first = inputs.first().map(|f| f.to_string_lossy().into_owned());
    let word_format = first.as_deref().and_then(by_name);
    let format = match (format_flag, word_format) {
        (Some(flag), Some(_)) => anyhow::bail!(
            "--format {flag} and the format word {} both name a format: give one",
            first.unwrap_or_default()
        ),
        (Some(flag), None) => by_name(flag).ok_or_else(|| unknown(flag))?,
        (None, Some(format)) => {
            inputs.remove(0);
            format
        }
        (None, None) => {
            if let Some(word) = first.filter(|w| !Path::new(w).exists()) {
                anyhow::bail!(
                    "{word}: no such file, and not a format ({}, auto)",
                    format_names()
                );
            }
            None
        }
    };
    if inputs.is_empty() {
        anyhow::bail!("expected at least one file to import after the format");
    }
    Ok((format, inputs))
}

impl RunArgs {
    /// The runner's options from the flags, each flag's value checked.
    pub fn into_options(self) -> anyhow::Result<RunOptions> {
        let contexts = self
            .contexts
            .as_deref()
            .map(plan::parse_contexts)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--contexts: {e}"))?;
        let concurrency = plan::parse_concurrency(&self.concurrency)
            .map_err(|e| anyhow::anyhow!("--concurrency: {e}"))?;
        let window: std::time::Duration = self.duration.into();
        if window.is_zero() {
            anyhow::bail!("--duration: expected a positive duration like 30s");
        }
        if !(1..=crate::runner::analysis::MAX_REPEAT).contains(&self.repeat) {
            anyhow::bail!(
                "--repeat: expected 1 to {} windows per cell, found {}",
                crate::runner::analysis::MAX_REPEAT,
                self.repeat
            );
        }
        let metrics_every: std::time::Duration = self.metrics_interval.into();
        let gpu_index = self.gpu_index.as_deref().map(parse_gpu_index).transpose()?;
        let sessions = match &self.sessions {
            None => None,
            Some(list) => {
                let prefix = match self.session_prefix.trim() {
                    "0" => vec![0],
                    text => plan::parse_contexts(text)
                        .map_err(|e| anyhow::anyhow!("--session-prefix: {e}"))?,
                };
                let [prefix_tokens] = prefix[..] else {
                    anyhow::bail!(
                        "--session-prefix: expected one number of tokens like 2K, found {}",
                        self.session_prefix
                    );
                };
                if self.session_answer == 0 {
                    anyhow::bail!("--session-answer: expected at least 1 token");
                }
                if self.session_turns == Some(0) {
                    anyhow::bail!("--session-turns: expected at least 1 turn");
                }
                Some(crate::runner::sessions::SessionOptions {
                    sessions: plan::parse_concurrency(list)
                        .map_err(|e| anyhow::anyhow!("--sessions: {e}"))?,
                    prefix_tokens,
                    user_tokens: self.session_user,
                    answer_tokens: self.session_answer,
                    max_turns: self.session_turns,
                    think_time: self.think_time.into(),
                    only: self.sessions_only,
                })
            }
        };
        Ok(RunOptions {
            sessions,
            repeat: self.repeat,
            api_key: std::env::var(&self.api_key_env)
                .ok()
                .filter(|k| !k.is_empty()),
            url: self.url,
            model: self.model,
            run_id: self.run_id,
            data: self.data,
            contexts,
            concurrency,
            window,
            max_output: self.max_output,
            kv_capacity: self.kv_capacity,
            max_model_len: self.max_model_len,
            temperature: self.temperature,
            dry_run: self.dry_run,
            force: self.force,
            keep_errors: self.keep_errors,
            endpoint: match self.endpoint {
                EndpointArg::Auto => None,
                EndpointArg::Completions => Some(crate::model::ApiEndpoint::Completions),
                EndpointArg::Chat => Some(crate::model::ApiEndpoint::Chat),
            },
            request_timeout: self.request_timeout.into(),
            metrics_every: (!metrics_every.is_zero()).then_some(metrics_every),
            gpu_metrics: self.gpu_metrics,
            gpu_index,
            meta_file: self.meta,
            meta: self.cards,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every option of every command says what it is in --help.
    #[test]
    fn every_option_has_help_text() {
        let cli = super::Cli::command();
        let mut missing = Vec::new();
        for command in cli.get_subcommands() {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("sitegen {} --{id}", command.get_name()));
                }
            }
        }
        assert!(missing.is_empty(), "options without help: {missing:?}");
    }
}
