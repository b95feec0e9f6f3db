//! `sitegen run`: measures an OpenAI-compatible server into `data/<run-id>/`,
//! one cell file written as each cell finishes.
//!
//! Order of work, per context (ascending): build one exact prompt per
//! stream; send stream 0's prompt cold with `max_tokens = 1` (the prefill
//! cell); send the other prompts once to warm the prompt cache; then run each
//! concurrency level's decode window. docs/measurement.md defines the figures.

pub(crate) mod analysis;
pub mod client;
pub(crate) mod cold;
pub mod gpu;
mod http1;
pub mod meta;
pub mod metrics;
pub mod plan;
pub mod probe;
pub mod prompt;
mod self_check;
pub mod sessions;
mod sse;
pub mod window;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

use crate::model::format;
use crate::model::reason::{Part, Reason};
use crate::model::{
    ApiEndpoint, Cell, CellKey, CellTelemetry, DecodeCell, DecodeDetail, PrefillCell, Status,
};
use crate::store;
use client::{Client, TokenizeStyle};
use plan::{ContextWork, Plan};
use window::RequestSettings;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub url: String,
    pub model: Option<String>,
    pub run_id: String,
    pub data: PathBuf,
    pub contexts: Option<Vec<u64>>,
    pub concurrency: Vec<u32>,
    pub window: Duration,
    /// Windows per decode cell (`--repeat`).
    pub repeat: u32,
    pub max_output: u32,
    pub kv_capacity: Option<u64>,
    pub max_model_len: Option<u64>,
    pub temperature: f64,
    pub dry_run: bool,
    pub force: bool,
    /// Keep Error cells on resume (by default they are measured again).
    pub keep_errors: bool,
    /// The API to use; `None` chooses: completions when the server offers it.
    pub endpoint: Option<ApiEndpoint>,
    pub api_key: Option<String>,
    pub request_timeout: Duration,
    /// How often `/metrics` (and the GPUs) are sampled during a window;
    /// `None` turns it off.
    pub metrics_every: Option<Duration>,
    /// A DCGM exporter's Prometheus endpoint for the server's GPUs (`--gpu-metrics`).
    pub gpu_metrics: Option<String>,
    /// The server's GPUs by index (`--gpu-index`); else the first of the run's GPU count.
    pub gpu_index: Option<Vec<u32>>,
    pub meta: meta::MetaFlags,
    pub meta_file: Option<PathBuf>,
    /// The sessions workload (`--sessions`), beside or instead of the matrix.
    pub sessions: Option<sessions::SessionOptions>,
}

/// Whether the server runs on this host (so its GPUs are this host's).
fn is_local(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]" || h == "::1")
}

pub async fn run(opts: RunOptions) -> anyhow::Result<()> {
    store::check_run_id(&opts.run_id)?;
    let client = Client::new(&opts.url, opts.api_key.clone(), opts.request_timeout)?;
    let mut info = probe::probe(&client, opts.model.as_deref()).await?;
    for line in &info.report {
        eprintln!("probe: {line}");
    }
    let (endpoint, why) =
        probe::choose_endpoint(&client, &info.served_model, opts.endpoint).await?;
    eprintln!("endpoint: {why}");
    let mut settings = RequestSettings {
        model: info.served_model.clone(),
        temperature: opts.temperature,
        endpoint,
        token_count: crate::model::TokenCount::StreamUsage,
    };
    let (token_count, how_counted) = probe::token_counting(&client, &settings).await?;
    settings.token_count = token_count;
    eprintln!("tokens: {how_counted}");
    let max_model_len = match opts.max_model_len.or(info.max_model_len) {
        Some(len) => len,
        None => {
            let mut report = Vec::new();
            let found =
                probe::context_window_from_refusal(&client, &settings, info.tokenize, &mut report)
                    .await;
            for line in &report {
                eprintln!("probe: {line}");
            }
            found?.context(
                "the server does not say its context window (no max_model_len in /v1/models, no /props, and no refusal of prompts up to 128K tokens named it): pass --max-model-len",
            )?
        }
    };
    info.max_model_len = Some(max_model_len);
    // --kv-capacity replaces the size, not the server's blocks.
    let found = info.kv_capacity.as_ref().map(|(kv, _)| *kv);
    let kv_capacity = match opts.kv_capacity {
        Some(tokens) => Some(plan::KvCache {
            tokens,
            block: found.and_then(|kv| kv.block),
        }),
        None => found,
    };
    let sessions_only = opts.sessions.as_ref().is_some_and(|s| s.only);
    let (decode_contexts, prefill) = match &opts.contexts {
        _ if sessions_only => (Vec::new(), Vec::new()),
        Some(c) => (c.clone(), c.clone()),
        None => {
            let d = plan::default_contexts(max_model_len, opts.max_output);
            let p = plan::prefill_contexts(&d, max_model_len);
            (d, p)
        }
    };
    if decode_contexts.is_empty() && !sessions_only {
        bail!(
            "no default context (8K and up) fits max_model_len {max_model_len} with {} output tokens: pass --contexts, e.g. --contexts 1K,2K",
            opts.max_output
        );
    }
    if let Some(too_long) = decode_contexts
        .iter()
        .find(|&&c| c + u64::from(opts.max_output) > max_model_len)
    {
        bail!(
            "context {} plus {} output tokens exceeds max_model_len {max_model_len}",
            format::context_label(*too_long),
            opts.max_output
        );
    }
    let plan = Plan::new(
        &decode_contexts,
        prefill,
        &opts.concurrency,
        opts.window.as_secs_f64(),
        opts.max_output,
        kv_capacity,
    )
    .repeated(opts.repeat);
    let run_dir = opts.data.join(&opts.run_id);
    let done = cells_done(&plan, &run_dir, opts.force, opts.keep_errors)?;
    if !sessions_only {
        print_plan(&plan, &done);
    }

    let meta = meta::build_meta(
        &opts.meta,
        &info,
        is_local(&opts.url),
        &meta::HowMeasured {
            window_s: opts.window.as_secs_f64(),
            max_output: opts.max_output,
            endpoint,
            token_count,
            prefill_mode: (!plan.prefill.is_empty())
                .then_some(crate::model::PrefillMode::DecodeWarmup),
        },
        opts.meta_file.as_deref(),
    )?;
    let mut meta = meta;
    if let Ok(before) = store::read_json::<crate::model::RunMeta>(&run_dir.join(store::RUN_FILE)) {
        // A resumed run keeps the time it was first measured, and a sessions
        // pass over a run whose matrix was measured keeps its prefill mode.
        meta.measured_at = before.measured_at.or(meta.measured_at);
        meta.run.prefill_mode = meta.run.prefill_mode.or(before.run.prefill_mode);
    }
    if meta.hardware.gpu == crate::model::UNKNOWN {
        eprintln!(
            "warning: the GPU of the server at {} is unknown ({}): the run will say \"unknown\" and will not be compared automatically with runs on the same hardware; pass --gpu and --gpu-count (or hardware.gpu in --meta)",
            opts.url,
            if is_local(&opts.url) {
                "nvidia-smi found none"
            } else {
                "it is not on this host, and --gpu was not given"
            }
        );
    }
    let metrics_every = opts.metrics_every.filter(|_| info.has_metrics);
    if metrics_every.is_some()
        && let Ok(text) = client.get_text("/metrics").await
        && let Some(line) = metrics::coverage(&metrics::parse(&text))
    {
        eprintln!("server counters: {line}");
    }
    let (gpus, gpu_line) = gpu::GpuMonitor::start(&gpu::GpuOptions {
        dcgm_url: opts.gpu_metrics.as_deref(),
        gpu_index: opts.gpu_index.as_deref(),
        gpu_count: meta.hardware.gpu_count,
        server_is_local: is_local(&opts.url),
        every: opts.metrics_every,
    })
    .await?;
    eprintln!("{gpu_line}");
    let template_tokens = match endpoint {
        ApiEndpoint::Completions => 0,
        ApiEndpoint::Chat => {
            let n = probe::chat_template_tokens(&client, &settings, info.tokenize).await?;
            eprintln!("prompts: the chat template adds {n} tokens to each prompt");
            n
        }
    };
    let measure = Measure {
        client,
        settings,
        tokenize: info.tokenize,
        salt: prompt::fresh_salt(),
        reads_counters: info.has_metrics,
        max_model_len,
        template_tokens,
        plan,
        run_dir,
        force: opts.force,
        keep_errors: opts.keep_errors,
        metrics_every,
        gpus,
        meta,
        meta_written: std::sync::atomic::AtomicBool::new(false),
    };
    if opts.dry_run {
        // The whole probe ran; sizing one prompt per context shows the run
        // could build its prompts. Nothing is measured or written.
        if !sessions_only {
            measure.size_prompts().await?;
        }
        eprintln!(
            "dry run: the probe, the token count and the prompt sizing passed; nothing was measured or written"
        );
        return Ok(());
    }
    let sessions = opts.sessions.clone();
    let work = async {
        if !sessions.as_ref().is_some_and(|s| s.only) {
            measure.all().await?;
        }
        if let Some(s) = &sessions {
            measure.sessions(s).await?;
        }
        anyhow::Ok(())
    };
    tokio::select! {
        result = work => result,
        _ = tokio::signal::ctrl_c() => {
            bail!("interrupted: the cell in flight was discarded; finished cells are kept, run the same command to resume")
        }
    }
}

/// Streams whose texts calibrate prompt lengths are numbered past every
/// stream a run has, so no sample shares a prompt's start.
const CALIBRATION_STREAMS: u32 = 1 << 20;

/// Prompt tok/s the estimates assume for sending prompts.
const ESTIMATE_PREFILL_TOK_PER_S: f64 = 10_000.0;

fn print_plan(plan: &Plan, done: &BTreeSet<CellKey>) {
    let contexts: Vec<String> = plan
        .prefill
        .iter()
        .map(|&c| format::context_label(c))
        .collect();
    eprintln!("plan: prefill at {}", contexts.join(", "));
    let mut rows: Vec<u64> = plan.decode.iter().map(|d| d.context).collect();
    rows.dedup();
    for ctx in rows {
        let cells: Vec<String> = plan
            .decode
            .iter()
            .filter(|d| d.context == ctx)
            .map(|d| match d.over_capacity {
                Some(_) => format!("{} (over capacity)", d.concurrency),
                None => d.concurrency.to_string(),
            })
            .collect();
        eprintln!(
            "plan: decode at {}: {}",
            format::context_label(ctx),
            cells.join(", ")
        );
    }
    let runnable = plan
        .decode
        .iter()
        .filter(|d| d.over_capacity.is_none())
        .count();
    let secs = plan.estimated_seconds(ESTIMATE_PREFILL_TOK_PER_S);
    eprintln!(
        "plan: {}, {} of {}, {} skipped as over capacity; about {} in all (prefill at ~10K tok/s)",
        format::counted(plan.prefill.len(), "prefill cell"),
        format::counted(runnable * plan.repeat.max(1) as usize, "decode window"),
        format::seconds_setting(plan.window_s),
        plan.decode.len() - runnable,
        seconds_text(secs)
    );
    if !done.is_empty() {
        let left = plan.seconds_of(&plan.remaining(done), ESTIMATE_PREFILL_TOK_PER_S);
        eprintln!(
            "plan: {} of {} already measured {} kept; about {} left",
            done.len(),
            format::counted(plan.cell_count(), "cell"),
            if done.len() == 1 { "is" } else { "are" },
            seconds_text(left)
        );
    }
}

/// "1m 20s": a whole number of seconds, as the plan and the bar say it.
fn seconds_text(secs: f64) -> String {
    humantime::format_duration(Duration::from_secs(secs.max(0.0).round() as u64)).to_string()
}

/// The time the run has left, as the progress bar shows it: set from the
/// plan's remaining work whenever a cell starts, counting down between.
#[derive(Clone)]
struct Eta(Arc<std::sync::Mutex<(Instant, f64)>>);

impl Eta {
    fn new(secs: f64) -> Eta {
        Eta(Arc::new(std::sync::Mutex::new((Instant::now(), secs))))
    }

    fn set(&self, secs: f64) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = (Instant::now(), secs);
    }

    fn left(&self) -> f64 {
        let (at, secs) = *self.0.lock().unwrap_or_else(|e| e.into_inner());
        (secs - at.elapsed().as_secs_f64()).max(0.0)
    }
}

/// The cells of the plan already in `run_dir` (none with `force`): a rerun
/// resumes after them. An Error is not a result, so Error cells are
/// measured again unless `keep_errors`. A cell file that is there but
/// cannot be read stops the run: it is never silently replaced.
fn cells_done(
    plan: &Plan,
    run_dir: &std::path::Path,
    force: bool,
    keep_errors: bool,
) -> anyhow::Result<BTreeSet<CellKey>> {
    let mut done = BTreeSet::new();
    if force {
        return Ok(done);
    }
    let cells = run_dir.join(store::CELLS_DIR);
    for key in plan.keys() {
        let path = cells.join(key.file_name());
        if !path.exists() {
            continue;
        }
        let cell = store::read_cell(&path).with_context(|| {
            format!(
                "a cell file of this run cannot be read, and is left as it is: fix or delete {}, or measure every cell again with --force",
                path.display()
            )
        })?;
        if cell.status() != Status::Error || keep_errors {
            done.insert(key);
        }
    }
    Ok(done)
}

struct Measure {
    client: Client,
    settings: RequestSettings,
    tokenize: Option<TokenizeStyle>,
    /// This run's texts: no earlier run sent them (prompt.rs).
    salt: u64,
    /// Whether the server has `/metrics`, whose prefix-cache counters
    /// prove a prefill cold.
    reads_counters: bool,
    max_model_len: u64,
    /// Prompt tokens the chat template adds to a message (0 for completions).
    template_tokens: u64,
    plan: Plan,
    run_dir: PathBuf,
    force: bool,
    keep_errors: bool,
    metrics_every: Option<Duration>,
    /// Reads the server's GPUs during each window, when they can be read.
    gpus: Option<gpu::GpuMonitor>,
    /// run.json, written with the run's first cell: a run that fails
    /// before measuring anything leaves no folder.
    meta: crate::model::RunMeta,
    meta_written: std::sync::atomic::AtomicBool,
}

impl Measure {
    /// A prompt at the plan's smallest and largest contexts, built as the
    /// run builds them: sizing fails, if it does, at one end or the other.
    async fn size_prompts(&self) -> anyhow::Result<()> {
        let contexts = self.plan.contexts();
        let mut ends = vec![contexts[0], contexts[contexts.len() - 1]];
        ends.dedup();
        for ctx in ends {
            let target = plan::prompt_target(ctx, self.max_model_len, self.plan.max_output);
            let built = self.prompts(ctx, 1, target).await?;
            eprintln!(
                "dry run: a prompt of {} tokens for {} ({})",
                format::count(built[0].tokens),
                format::context_label(ctx),
                if built[0].exact {
                    "counted by the server's tokenizer"
                } else {
                    "estimated from a request's prompt tokens"
                }
            );
        }
        Ok(())
    }

    /// Measures what the plan still lacks, context by context.
    async fn all(&self) -> anyhow::Result<()> {
        let work = self.plan.remaining(&cells_done(
            &self.plan,
            &self.run_dir,
            self.force,
            self.keep_errors,
        )?);
        let total = self.plan.cell_count();
        let left: usize = work.iter().map(ContextWork::cells).sum();
        let eta = Eta::new(self.plan.seconds_of(&work, ESTIMATE_PREFILL_TOK_PER_S));
        let shown = eta.clone();
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} cells, about {left} left {msg}")
                .expect("valid template")
                .with_key(
                    "left",
                    move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&seconds_text(shown.left()));
                    },
                ),
        );
        bar.enable_steady_tick(Duration::from_secs(1));
        bar.inc((total - left) as u64);
        for (i, w) in work.iter().enumerate() {
            let later = self
                .plan
                .seconds_of(&work[i + 1..], ESTIMATE_PREFILL_TOK_PER_S);
            eta.set(
                later
                    + self
                        .plan
                        .seconds_of(std::slice::from_ref(w), ESTIMATE_PREFILL_TOK_PER_S),
            );
            self.context(w, &bar, &eta, later).await?;
        }
        bar.finish_and_clear();
        eprintln!(
            "done: {} measured, {} already measured {} kept, in {}",
            format::counted(left, "cell"),
            total - left,
            if total - left == 1 { "was" } else { "were" },
            self.run_dir.display()
        );
        Ok(())
    }

    /// One context: build its prompts, measure its prefill (which also warms
    /// stream 0's prompt), warm the other prompts, then each decode cell.
    /// `eta` is set at each decode cell from what is left of this context
    /// and `later`, the seconds of the contexts after it.
    async fn context(
        &self,
        w: &ContextWork<'_>,
        bar: &ProgressBar,
        eta: &Eta,
        later: f64,
    ) -> anyhow::Result<()> {
        let ctx = w.context;
        let streams = self.plan.streams_at(ctx).max(1);
        // Prompts only for a prefill leave room for its one output token.
        let output = if w.decode.is_empty() {
            1
        } else {
            self.plan.max_output
        };
        let target = plan::prompt_target(ctx, self.max_model_len, output);
        bar.set_message(format!(
            "building {streams} prompts of {} tokens",
            format::count(target)
        ));
        let mut built = self.prompts(ctx, streams, target).await?;

        bar.set_message(format!("prefill at {}", format::context_label(ctx)));
        let (cell, sent) = self.cold_prefill(ctx, target, built.remove(0)).await?;
        // Stream 0's prompt is the one the prefill sent last: it is warm.
        built.insert(0, sent);
        let prompts: Vec<String> = built.iter().map(|p| p.text.clone()).collect();
        if cell.status() == Status::Error {
            self.check_alive("prefill", ctx, 1, bar).await?;
        }
        if w.prefill {
            self.record(&cell, bar)?;
        }
        if w.decode.is_empty() {
            return Ok(());
        }
        bar.set_message(format!(
            "warming {} prompts at {}",
            streams - 1,
            format::context_label(ctx)
        ));
        self.warm(&prompts[1..]).await;
        for (k, d) in w.decode.iter().enumerate() {
            let windows = w.decode[k..]
                .iter()
                .filter(|d| d.over_capacity.is_none())
                .count();
            eta.set(later + self.plan.decode_seconds(windows));
            let cell = match &d.over_capacity {
                Some(reason) => Cell::Decode(DecodeCell::without_figures(
                    ctx,
                    d.concurrency,
                    Status::OverCapacity,
                    Some(Reason::of(reason.clone())),
                )),
                None => self.decode(ctx, d.concurrency, &prompts, bar).await,
            };
            // A cell that failed because the server went away is not a
            // result: it is discarded, so a rerun measures it.
            if cell.status() == Status::Error {
                self.check_alive("decode", ctx, d.concurrency, bar).await?;
            }
            self.record(&cell, bar)?;
        }
        Ok(())
    }

    /// Writes run.json before the run's first result.
    fn write_meta_once(&self) -> anyhow::Result<()> {
        if !self.meta_written.swap(true, Ordering::SeqCst) {
            store::write_meta(&self.run_dir, &self.meta)?;
        }
        Ok(())
    }

    /// Writes a finished cell (and, before the first, run.json) and says so.
    fn record(&self, cell: &Cell, bar: &ProgressBar) -> anyhow::Result<()> {
        self.write_meta_once()?;
        store::write_cell(&self.run_dir, cell)?;
        say(bar, describe(cell));
        bar.inc(1);
        Ok(())
    }

    /// After a failed cell, before it is written: stops the run, discarding
    /// the cell, if the server no longer answers.
    async fn check_alive(
        &self,
        phase: &str,
        ctx: u64,
        n: u32,
        bar: &ProgressBar,
    ) -> anyhow::Result<()> {
        if self.client.get_json("/v1/models").await.is_ok() {
            return Ok(());
        }
        bar.abandon();
        bail!(
            "the server at {} stopped answering during {phase} at {} × {}; that cell was discarded and finished cells are kept in {}: run the same command to resume",
            self.client.base(),
            format::context_label(ctx),
            n,
            self.run_dir.display()
        );
    }

    /// One exact prompt per stream: `target` tokens as the server counts
    /// the request, so with chat the text is shorter by the template's tokens.
    async fn prompts(
        &self,
        ctx: u64,
        streams: u32,
        target: u64,
    ) -> anyhow::Result<Vec<prompt::Prompt>> {
        let mut prompts = Vec::with_capacity(streams as usize);
        for stream in 0..streams {
            let id = prompt::TextId {
                salt: self.salt,
                stream,
                context: ctx,
            };
            prompts.push(self.prompt(id, target).await?);
        }
        Ok(prompts)
    }

    /// Text `id` at `target` tokens as the server counts the request.
    async fn prompt(&self, id: prompt::TextId, target: u64) -> anyhow::Result<prompt::Prompt> {
        self.text(id, target.saturating_sub(self.template_tokens).max(1))
            .await
    }

    /// Text `id` of `target` tokens, as the server's tokenizer counts it
    /// (else as its usage suggests).
    async fn text(&self, id: prompt::TextId, target: u64) -> anyhow::Result<prompt::Prompt> {
        match self.tokenize {
            Some(style) => {
                let client = &self.client;
                let model = &self.settings.model;
                prompt::exact_prompt(id, target, |text| async move {
                    client.count_tokens(style, model, &text).await
                })
                .await
            }
            None => self.calibrated_prompt(id, target).await,
        }
    }

    /// The server's prefix-cache counters now, where it has them.
    async fn prefix_cache_counts(&self) -> Option<metrics::PrefixCacheCounts> {
        if !self.reads_counters {
            return None;
        }
        let text = self.client.get_text("/metrics").await.ok()?;
        metrics::PrefixCacheCounts::read(&metrics::parse_without_buckets(&text))
    }

    /// The prefill cell, cold: measured with `first`, and where the server's
    /// counters show its prompt was served from the prefix cache, measured
    /// again with a fresh text, up to [`cold::TRIES`] prompts; still cached
    /// then, the cell is an Error naming the cache. Returns the cell and the
    /// prompt it sent last.
    async fn cold_prefill(
        &self,
        ctx: u64,
        target: u64,
        first: prompt::Prompt,
    ) -> anyhow::Result<(Cell, prompt::Prompt)> {
        let mut sent = first;
        for attempt in 1..=cold::TRIES {
            self.settle().await;
            let mut cell = self.prefill(ctx, target, &sent).await;
            let Some(check) = cell.prompt_cache.as_mut() else {
                return Ok((Cell::Prefill(cell), sent));
            };
            check.attempts = attempt;
            let prompt_tokens = cell.prompt_tokens.unwrap_or(check.looked_up_tokens);
            // The cache's hits over the request bound the prompt's own, so
            // few hits prove it cold even when other lookups were counted.
            if cell.status != Status::Valid
                || cold::is_cold(check.cached_tokens, prompt_tokens, self.template_tokens)
            {
                return Ok((Cell::Prefill(cell), sent));
            }
            let held = cold::Held {
                cached: check.cached_tokens,
                looked_up: check.looked_up_tokens,
                prompt: prompt_tokens,
            };
            if attempt == cold::TRIES {
                cell.status = Status::Error;
                cell.reason = Some(Reason::of(Part::NotCold {
                    cached_tokens: held.cached,
                    looked_up_tokens: held.looked_up,
                    prompt_tokens: held.prompt,
                    counter: check.counter.clone(),
                    tries: cold::TRIES,
                }));
                cell.ttft_ms = None;
                cell.prompt_tok_per_s = None;
                return Ok((Cell::Prefill(cell), sent));
            }
            eprintln!(
                "prefill {}: {}; measuring again with a fresh prompt",
                format::context_label(ctx),
                held.words(&check.counter)
            );
            let id = prompt::TextId {
                salt: self.salt,
                stream: 0,
                context: ctx,
            };
            sent = self.prompt(id.salted(prompt::fresh_salt()), target).await?;
        }
        unreachable!("the last try returns")
    }

    /// Without a tokenizer: the characters per token of a sample, from the
    /// `usage.prompt_tokens` of a one-token request not streamed (every
    /// server reports usage there). The sample is a text of its own, so the
    /// prompt's start is not in the server's prefix cache when its prefill
    /// is measured.
    async fn calibrated_prompt(
        &self,
        id: prompt::TextId,
        target: u64,
    ) -> anyhow::Result<prompt::Prompt> {
        let sample_id = prompt::TextId {
            stream: id.stream + CALIBRATION_STREAMS,
            ..id
        };
        let sample = prompt::words(sample_id, 4000).join(" ");
        let tokens = window::unstreamed_prompt_tokens(&self.client, &self.settings, &sample)
            .await
            .context("no tokenizer answers (/tokenize, /extras/tokenize), so prompts are sized from the prompt tokens of a request not streamed, and that failed")?;
        let text_tokens = tokens.saturating_sub(self.template_tokens);
        let chars_per_token = sample.len() as f64 / text_tokens.max(1) as f64;
        let text: String = prompt::words(id, (target as f64 * chars_per_token * 1.1) as usize)
            .join(" ")
            .chars()
            .take((target as f64 * chars_per_token) as usize)
            .collect();
        Ok(prompt::Prompt {
            text,
            tokens: target,
            exact: false,
        })
    }

    /// The prefill cell: `prompt` sent cold for one token. Its prompt
    /// tokens are the stream's usage, else the count the prompt was built
    /// to (and the cell says which). Where the server counts its prefix
    /// cache, the cell records what the cache held of the prompt.
    async fn prefill(&self, ctx: u64, target: u64, prompt: &prompt::Prompt) -> PrefillCell {
        let body = window::completion_body(&self.settings, &prompt.text, 1);
        let before = self.prefix_cache_counts().await;
        let t0 = Instant::now();
        let r =
            window::record_request(&self.client, &self.settings, &body, 0, t0, None, None).await;
        let prompt_cache = match before {
            Some(before) => self.prefix_cache_growth(&before, r.prompt_tokens).await,
            None => None,
        };
        // Without usage in the stream, the same request not streamed says
        // how many prompt tokens the server counted (after the measurement:
        // the cache it warms no longer matters), else the prompt's own count.
        let unstreamed = match r.prompt_tokens {
            Some(_) => None,
            None => window::unstreamed_prompt_tokens(&self.client, &self.settings, &prompt.text)
                .await
                .ok(),
        };
        let (prompt_tokens, from) = match (r.prompt_tokens, unstreamed) {
            (Some(p), _) => (Some(p), None),
            (None, Some(p)) => (Some(p), Some(crate::model::PromptCount::Unstreamed)),
            (None, None) if prompt.exact => (
                Some(prompt.tokens + self.template_tokens),
                Some(crate::model::PromptCount::Tokenizer),
            ),
            (None, None) => (Some(target), Some(crate::model::PromptCount::Estimated)),
        };
        let mut cell = PrefillCell {
            context_tokens: ctx,
            status: Status::Valid,
            reason: None,
            prompt_tokens,
            prompt_tokens_from: from,
            prompt_tok_per_s: None,
            ttft_ms: None,
            prompt_cache,
            measured_by: None,
        };
        let error = match (&r.finish, r.chunks.first(), prompt_tokens) {
            (Some(analysis::Finish::Error(e)), _, _) if e.contains(client::EMPTY_STREAM) => {
                Some(Part::RequestFailed {
                    message: window::refusal_in_words(&self.client, &self.settings, &body).await,
                })
            }
            (Some(analysis::Finish::Error(e)), _, _) => {
                Some(Part::RequestFailed { message: e.clone() })
            }
            (_, None, _) => Some(Part::NoToken),
            (_, _, None) => Some(Part::NoPromptTokens),
            // An exact prompt must be what the server counted; an estimated
            // one says what the server counted.
            (_, Some(_), Some(p)) if prompt.exact && !prompt::close_enough(p, target) => {
                Some(Part::PromptTokensMismatch {
                    counted: p,
                    planned: target,
                })
            }
            (_, Some((first, _)), Some(p)) => {
                let ttft = first - r.start;
                cell.ttft_ms = Some(ttft * 1000.0);
                cell.prompt_tok_per_s = Some(p as f64 / ttft);
                None
            }
        };
        if let Some(e) = error {
            cell.status = Status::Error;
            cell.reason = Some(Reason::of(e));
            cell.ttft_ms = None;
            cell.prompt_tok_per_s = None;
        }
        cell
    }

    /// What the prefix cache held of the request just sent: the growth of
    /// its counters since `before`. A server may count a request a moment
    /// after its first token, so the counters are read again, for up to a
    /// second, until the prompt's lookup shows (`prompt_tokens`, where known).
    async fn prefix_cache_growth(
        &self,
        before: &metrics::PrefixCacheCounts,
        prompt_tokens: Option<u64>,
    ) -> Option<crate::model::PromptCacheCheck> {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let after = self.prefix_cache_counts().await?;
            let (looked_up, cached) = after.since(before)?;
            let counted = looked_up > 0 && prompt_tokens.is_none_or(|p| looked_up >= p);
            if counted || Instant::now() >= deadline {
                return (looked_up > 0).then(|| crate::model::PromptCacheCheck {
                    cached_tokens: cached,
                    looked_up_tokens: looked_up,
                    counter: after.found_series.to_string(),
                    attempts: 1,
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends the prompts of streams 1..N once with `max_tokens = 1`, all at
    /// once, so decode windows start with a warm prompt cache (stream 0's was
    /// sent by the prefill) and with one open connection per stream: a
    /// window's TTFT then holds no TCP connection setup.
    async fn warm(&self, prompts: &[String]) {
        let mut set = tokio::task::JoinSet::new();
        for (i, p) in prompts.iter().enumerate() {
            let client = self.client.clone();
            let settings = self.settings.clone();
            let body = window::completion_body(&settings, p, 1);
            set.spawn(async move {
                window::record_request(
                    &client,
                    &settings,
                    &body,
                    i as u32 + 1,
                    Instant::now(),
                    None,
                    None,
                )
                .await
            });
        }
        while set.join_next().await.is_some() {}
    }

    /// Waits until the server has nothing running or waiting, so requests
    /// cancelled at the end of the last window (a server notices a closed
    /// stream only at its next token) do not occupy this one's slots.
    async fn settle(&self) {
        if self.metrics_every.is_none() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            return;
        }
        // Idle means nothing running or waiting and, where the server counts
        // its prefix cache, counters that stopped moving: vLLM publishes a
        // request's lookups a moment after it ends, and a prefill measured
        // then would be charged with them.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last_counts = None;
        while Instant::now() < deadline {
            let Ok(text) = self.client.get_text("/metrics").await else {
                return;
            };
            let samples = metrics::parse_without_buckets(&text);
            let busy = |names: &[&str]| metrics::first_sum(&samples, names).unwrap_or(0.0) > 0.0;
            let counts = metrics::PrefixCacheCounts::read(&samples);
            let still = counts.is_none() || counts == last_counts;
            if !busy(&metrics::RUNNING) && !busy(&metrics::WAITING) && still {
                return;
            }
            last_counts = counts;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Counted one token per event, a request that ended with "length" short
    /// of max_tokens was capped at the context window, or some of its events
    /// held two tokens. The server says which: the same prompt not streamed,
    /// whose usage counts every token it generates. When that reaches
    /// max_tokens, such requests are counted as max_tokens (and the cell
    /// says so); else they stay capped.
    async fn merged_events(
        &self,
        records: &mut [analysis::RequestRecord],
        prompts: &[String],
    ) -> Option<Part> {
        if self.settings.token_count != crate::model::TokenCount::OnePerEvent {
            return None;
        }
        let short = records.iter().find(|r| {
            matches!(&r.finish, Some(analysis::Finish::Done(why)) if why == "length")
                && r.asked_tokens.is_some_and(|asked| r.tokens() < asked)
        })?;
        let prompt = prompts.get(short.stream as usize)?;
        let generated = window::unstreamed_completion_tokens(
            &self.client,
            &self.settings,
            prompt,
            self.plan.max_output,
        )
        .await
        .ok()?;
        (generated >= u64::from(self.plan.max_output))
            .then(|| analysis::count_merged_events(records))
            .flatten()
    }

    /// A decode cell: one window, or `plan.repeat` windows combined.
    async fn decode(&self, ctx: u64, n: u32, prompts: &[String], bar: &ProgressBar) -> Cell {
        if self.plan.repeat <= 1 {
            return Cell::Decode(self.decode_window(ctx, n, prompts, bar).await);
        }
        let mut windows = Vec::new();
        for _ in 0..self.plan.repeat {
            windows.push(self.decode_window(ctx, n, prompts, bar).await);
        }
        Cell::Decode(crate::model::DecodeCell::from_repeats(
            windows,
            "repeated windows",
        ))
    }

    async fn decode_window(
        &self,
        ctx: u64,
        n: u32,
        prompts: &[String],
        bar: &ProgressBar,
    ) -> DecodeCell {
        self.settle().await;
        let live = Arc::new(AtomicU64::new(0));
        let label = format!("{} × {}", format::context_label(ctx), n);
        let ticker = {
            let live = Arc::clone(&live);
            let bar = bar.clone();
            let label = label.clone();
            tokio::spawn(async move {
                let start = Instant::now();
                loop {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    let secs = start.elapsed().as_secs_f64();
                    let rate = live.load(Ordering::Relaxed) as f64 / secs;
                    bar.set_message(format!("decode {label}: {} tok/s", format::tok_per_s(rate)));
                }
            })
        };
        let window_len = Duration::from_secs_f64(self.plan.window_s);
        let rec = window::decode_window(
            &self.client,
            &self.settings,
            &prompts[..n as usize],
            self.plan.max_output,
            window_len,
            window::Sampling {
                metrics_every: self.metrics_every,
                gpus: self.gpus.as_ref(),
            },
            live,
        )
        .await;
        ticker.abort();
        let mut server = rec.server;
        let mut records = rec.records;
        let merged = self.merged_events(&mut records, prompts).await;
        let mut f = analysis::summarize(&records, self.plan.window_s, n, server.as_ref());
        self_check::heed(
            rec.client.as_ref(),
            f.tbt_median_ms,
            &mut f.status,
            &mut f.reason,
        );
        if let Some(note) = merged {
            f.reason = Some(match f.reason.take() {
                Some(r) => r.and(note),
                None => Reason::of(note),
            });
        }
        let word = match (rec.engine, self.metrics_every) {
            (Some(engine), Some(every)) => metrics::summarize_window(
                format!(
                    "{}'s /metrics every {}",
                    engine.engine,
                    gpu::interval_words(every)
                ),
                &rec.gauges,
                rec.counters_before.as_ref(),
                rec.counters_after.as_ref(),
            ),
            _ => None,
        };
        // A stream refused without a word: ask once, not streamed, for the
        // server's, and put them in the failure's message.
        if let Some(reason) = f.reason.as_mut()
            && reason
                .messages_mut()
                .any(|m| m.contains(client::EMPTY_STREAM))
        {
            let body = window::completion_body(&self.settings, &prompts[0], self.plan.max_output);
            let words = window::refusal_in_words(&self.client, &self.settings, &body).await;
            for m in reason.messages_mut() {
                *m = m.replace(client::EMPTY_STREAM, &words);
            }
        }
        if let Some(word) = &word {
            (f.status, f.reason) = analysis::heed_server_word(f.status, f.reason.take(), word);
        }
        if let Some(s) = &mut server {
            s.client_output_tokens = f.output_tokens;
        }
        let figures = f.status.has_figures();
        let gpus = self.gpus.as_ref().and_then(|monitor| {
            let g = gpu::summarize(
                &rec.gpu_samples,
                self.plan.window_s,
                figures.then_some(f.output_tokens),
                monitor.description.clone(),
                monitor.gpus.len() as u32,
            )?;
            monitor.note_energy_source(&g);
            Some(g)
        });
        let telemetry = CellTelemetry {
            server: word.map(|w| w.counters),
            gpus,
        };
        let keep = |v: Option<f64>| v.filter(|_| figures);
        DecodeCell {
            context_tokens: ctx,
            concurrency: n,
            status: f.status,
            reason: f.reason,
            total_tok_per_s: figures.then_some(f.total_tok_per_s),
            per_request_tok_per_s: keep(f.per_request_tok_per_s),
            ttft_median_ms: keep(f.ttft_median_ms),
            tbt_median_ms: keep(f.tbt_median_ms),
            avg_active_requests: keep(Some(f.avg_active_requests)),
            completed_requests: Some(f.completed_requests),
            output_tokens: Some(f.output_tokens),
            measured_s: Some(f.measured_s),
            max_pause_ms: keep(f.max_pause_ms),
            total_tok_per_s_ci95: f.total_ci95.filter(|_| figures),
            spread: f.spread.filter(|_| figures).map(Box::new),
            latency: f.latency.filter(|_| figures).map(Box::new),
            telemetry: (telemetry != CellTelemetry::default()).then(|| Box::new(telemetry)),
            repeats: Vec::new(),
            detail: Some(Box::new(DecodeDetail {
                tokens_per_second: f.tokens_per_second,
                drift: f.drift,
                window_start_unix_s: rec.window_start_unix_s,
                prompt_tokens: f.prompt_tokens,
                ttft_ms: f.ttft_ms,
                tbt_ms: f.tbt_ms,
                tokens_per_chunk: f.tokens_per_chunk,
                pause_ms: f.pause_ms,
                peak_decoding_requests: f.peak_decoding_requests,
                failed_requests: f.failed_requests,
                requests: f.requests,
                server,
                gpu_power_w: if self.gpus.is_some() {
                    gpu::power_series(&rec.gpu_samples, self.plan.window_s)
                } else {
                    Vec::new()
                },
                loop_evidence: f.loop_evidence,
                client: rec.client,
            })),
            measured_by: None,
        }
    }
}

/// Prints a line above the progress bar, or plainly when there is no bar
/// (not a terminal: CI logs still get one line per cell).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// A log line for a finished cell.
fn describe(cell: &Cell) -> String {
    let status = cell.status().label();
    match cell {
        Cell::Prefill(c) => format!(
            "prefill {}: {status}{}",
            format::context_label(c.context_tokens),
            match (c.prompt_tok_per_s, c.ttft_ms, &c.reason) {
                (Some(t), Some(ms), _) => format!(
                    ", {} tok/s, TTFT {}",
                    format::tok_per_s(t),
                    format::millis(ms)
                ),
                (_, _, Some(r)) => format!(" ({r})"),
                _ => String::new(),
            }
        ),
        Cell::Decode(c) => format!(
            "decode {} × {}: {status}{}{}",
            format::context_label(c.context_tokens),
            c.concurrency,
            match (c.total_tok_per_s, &c.reason) {
                (Some(t), _) => format!(", {} tok/s total", format::tok_per_s(t)),
                (None, Some(r)) => format!(" ({r})"),
                _ => String::new(),
            },
            energy_words(c)
        ),
    }
}

/// ", 412.3 W, 0.354 J per output token, throttled: thermal" of a cell
/// whose GPUs were read; nothing of one whose GPUs were not.
fn energy_words(c: &DecodeCell) -> String {
    let Some(g) = c.telemetry.as_ref().and_then(|t| t.gpus.as_ref()) else {
        return String::new();
    };
    let mut words = String::new();
    if let Some(w) = g.power_w_mean {
        words.push_str(&format!(", {}", format::watts(w)));
    }
    if let Some(j) = g.joules_per_output_token {
        words.push_str(&format!(", {} per output token", format::joules(j)));
    }
    if let Some(t) = g.throttle.filter(|t| *t != crate::model::Throttle::Ok) {
        words.push_str(&format!(", throttled: {}", t.label()));
    }
    words
}

#[cfg(test)]
mod eta_tests {
    use super::Eta;

    #[test]
    fn the_time_left_counts_down_and_is_set_from_the_plan() {
        let eta = Eta::new(30.0);
        let first = eta.left();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let later = eta.left();
        assert!(later < first && first <= 30.0, "{first} then {later}");
        eta.set(5.0);
        assert!(eta.left() <= 5.0);
        eta.set(0.0);
        assert_eq!(eta.left(), 0.0, "never below nothing left");
    }
}
