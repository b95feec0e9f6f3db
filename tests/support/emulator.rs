//! An emulated inference engine for exact tests of `sitegen run`.
//!
//! OpenAI-compatible streaming with vLLM's shapes (`/v1/models` with
//! `max_model_len`, `/tokenize`, `/metrics`, `/v1/completions` with
//! continuous usage), a tokenizer that is not one token per word, a prefill
//! rate, a decode step, multi-token chunks as under speculative decoding, a
//! KV cache with a waiting queue and preemption, a prefix cache, a looping
//! mode and injected faults; and GPUs whose power follows the engine's load,
//! served as a DCGM exporter (`/dcgm/metrics`) and to a stand-in
//! `nvidia-smi`, with a throttle event that also slows the engine. It logs
//! every token it emits and when, and every `/metrics` it serves, so tests
//! compare the runner's figures with the truth. Test support only: not part
//! of sitegen.

#![allow(dead_code)]

use std::collections::HashSet;
use std::convert::Infallible;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use tokio_stream::wrappers::ReceiverStream;

#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    pub model: String,
    pub max_model_len: u64,
    /// Uncached prompt tokens processed per second.
    pub prefill_tok_per_s: f64,
    /// Time of one decode step.
    pub step: Duration,
    /// Added to each decode step per other request running at that moment:
    /// time between tokens that grows by a known step per stream.
    pub step_per_stream: Duration,
    /// Tokens each step emits per request (1, or more like speculative decoding).
    pub tokens_per_step: u64,
    /// KV cache in tokens; a request holds prompt + max_tokens while it runs.
    pub kv_capacity: u64,
    /// Requests that may run at once; the rest wait.
    pub max_running: usize,
    /// After this many output tokens, repeat one phrase forever.
    pub loop_after_tokens: Option<u64>,
    /// Every completion answers with this HTTP status.
    pub fail_status: Option<u16>,
    /// Streams close without `[DONE]` after this many tokens.
    pub break_after_tokens: Option<u64>,
    /// Whether usage on every chunk is offered when a request asks for it
    /// (vLLM's `continuous_usage_stats`); older servers ignore the option.
    pub continuous_usage: bool,
    /// Require `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// `/v1/completions` answers 404, as a chat-only gateway does.
    pub chat_only: bool,
    /// Chat: the first this many output tokens of each request stream as
    /// `delta.reasoning` (vLLM 0.32's name; earlier versions said
    /// `reasoning_content`), the rest as `delta.content`.
    pub reasoning_tokens: u64,
    /// Once per engine: the first request to reach this many output tokens
    /// holds its output for the duration (decoding goes on), then sends
    /// everything held as one chunk, as a preempted or swapped request does.
    pub stall: Option<(u64, Duration)>,
    /// The token at this output index of every request is held back and
    /// sent with the next in one event, as a server does with a multi-byte
    /// character split across two tokens (llama-cpp-python).
    pub hold_back_at: Option<u64>,
    /// Noise on purpose: each decode step lasts `step` times a factor that
    /// is 1 + `sd` × z, z a seeded standard normal drawn once per `segment`
    /// of engine time and shared by all requests (a real engine's whole
    /// batch slows together), times a small per-step factor.
    pub jitter: Option<Jitter>,
    /// Quirks of real servers other than vLLM:
    /// Whether streams may carry usage at all (llama-cpp-python's never do,
    /// whatever `stream_options` asks).
    pub stream_usage: bool,
    /// A new completion ends every running stream at its next step with
    /// `[DONE]` and no finish reason (llama-cpp-python's default
    /// `interrupt_requests`).
    pub interrupt_requests: bool,
    /// Past the context window, llama-cpp-python's ways instead of vLLM's
    /// 400: `max_tokens` is cut to what fits (finish "length"), and a prompt
    /// that does not fit gets a streamed HTTP 200 with an empty body (a
    /// non-streamed request still gets the 400).
    pub cap_at_context: bool,
    /// Whether `/v1/models` says `max_model_len`.
    pub report_max_model_len: bool,
    pub tokenizer: Tokenizer,
    /// `/openapi.json`'s `info.title`, as FastAPI servers name themselves.
    pub openapi_title: Option<String>,
    /// vLLM's `/metrics`, `/version` and `/health` (llama-cpp-python has none).
    pub vllm_routes: bool,
    /// vLLM's paged KV cache: a request holds its prompt and the tokens it
    /// has made, not its whole `max_tokens` from the start; a request whose
    /// next step does not fit is preempted (`vllm:num_preemptions_total`):
    /// it gives its KV back, waits, and recomputes prompt and output.
    pub preempt_when_full: bool,
    /// Speculative decoding, when `tokens_per_step` > 1: draft tokens each
    /// decode step proposes, of which `tokens_per_step` - 1 are accepted
    /// (at least that many; by default exactly, all accepted).
    pub spec_draft_tokens: Option<u64>,
    /// GPUs the engine runs on, read by an emulated DCGM exporter and a
    /// stand-in nvidia-smi.
    pub gpus: Option<GpuConfig>,
    /// Long prompts found in the prefix cache although no request sent them
    /// before, as by a server that caches more than it was sent (a long
    /// system prompt of its own, a response cache): the first `count`
    /// prompts of at least `min_tokens` are served as cached but for their
    /// last token, counted so in vLLM's counters.
    pub pretend_cached: Option<PretendCached>,
    /// vLLM's `--enable-prompt-tokens-details`: the last usage event says
    /// the prompt tokens found in the prefix cache.
    pub prompt_tokens_details: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct PretendCached {
    pub min_tokens: u64,
    pub count: u64,
}

/// The node's GPUs: power follows the engine's load.
#[derive(Debug, Clone, Copy)]
pub struct GpuConfig {
    /// GPUs the node has; the engine runs on the first `used`, the rest idle.
    pub total: u32,
    pub used: u32,
    /// Power of an idle GPU, W.
    pub idle_w: f64,
    /// Power each running request adds, W, spread over the used GPUs.
    pub per_request_w: f64,
    /// Power limit per GPU, W: power is capped there, and a GPU at its cap
    /// reports the SW power cap reason (0x4).
    pub limit_w: f64,
    /// An exporter older than DCGM 3.3: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.
    pub old_dcgm_names: bool,
    /// A driver older than R535: nvidia-smi refuses clocks_event_reasons.
    pub old_driver: bool,
    /// A throttle event, from `from_s` to `to_s` seconds after the engine
    /// started (or scheduled later with [`Engine::schedule_throttle`]).
    pub throttle: Option<ThrottleEvent>,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            total: 2,
            used: 2,
            idle_w: 70.0,
            per_request_w: 40.0,
            limit_w: 700.0,
            old_dcgm_names: false,
            old_driver: false,
            throttle: None,
        }
    }
}

/// While it lasts the used GPUs report `reasons` (NVML's clock-event bits),
/// their SM clock drops by `slow`, and every decode step takes `slow` times as long.
#[derive(Debug, Clone, Copy)]
pub struct ThrottleEvent {
    pub from_s: f64,
    pub to_s: f64,
    pub reasons: u64,
    pub slow: f64,
}

/// SM and memory clocks of an emulated GPU at full speed, MHz.
pub const SM_CLOCK_MHZ: f64 = 1980.0;
pub const MEM_CLOCK_MHZ: f64 = 2619.0;
/// Memory of an emulated GPU, MiB (an 80 GB GPU as nvidia-smi reports it).
pub const GPU_MEMORY_MIB: f64 = 81_559.0;
/// Where each GPU's energy counter stood when the engine started, mJ (a
/// counter since the driver loaded is never 0 at a run's start).
pub const ENERGY_AT_START_MJ: f64 = 4.0e9;

/// One `/metrics` the engine served: when, and its figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct MetricsRead {
    pub at: f64,
    pub running: usize,
    pub waiting: usize,
    pub kv_usage: f64,
    pub preemptions: u64,
    pub prefix_queries: u64,
    pub prefix_hits: u64,
    pub spec_drafts: u64,
    pub spec_draft_tokens: u64,
    pub spec_accepted: u64,
}

/// Where the emulator's tokenizer answers, if anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// vLLM's `POST /tokenize {"prompt"}` -> `{"count", "tokens"}`.
    Vllm,
    /// llama-cpp-python's `POST /extras/tokenize {"input"}` -> `{"tokens"}`.
    Extras,
    /// None: a gateway that forwards no tokenizer.
    None,
}

#[derive(Debug, Clone, Copy)]
pub struct Jitter {
    pub sd: f64,
    pub segment: Duration,
    pub seed: u64,
}

/// splitmix64: a seeded, reproducible stream of 64-bit values.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// An approximately standard normal value from `key` (Irwin–Hall, 12 uniforms).
fn normal(key: u64) -> f64 {
    (0..12u64)
        .map(|i| (mix(key.wrapping_mul(31).wrapping_add(i)) >> 11) as f64 / (1u64 << 53) as f64)
        .sum::<f64>()
        - 6.0
}

impl Jitter {
    /// The step-time factor at `t` seconds of engine time, for one step of one request.
    pub fn factor(&self, t: f64, step_key: u64) -> f64 {
        let segment = (t / self.segment.as_secs_f64()) as u64;
        let slow = 1.0 + self.sd * normal(mix(self.seed ^ segment));
        let fast = 1.0 + 0.05 * normal(mix(self.seed.rotate_left(17) ^ step_key));
        (slow * fast).max(0.2)
    }
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            model: "emulated-model".into(),
            max_model_len: 65_536,
            prefill_tok_per_s: 200_000.0,
            step: Duration::from_millis(20),
            step_per_stream: Duration::ZERO,
            tokens_per_step: 1,
            kv_capacity: 10_000_000,
            max_running: 1024,
            loop_after_tokens: None,
            fail_status: None,
            break_after_tokens: None,
            continuous_usage: true,
            api_key: None,
            chat_only: false,
            reasoning_tokens: 0,
            stall: None,
            hold_back_at: None,
            jitter: None,
            stream_usage: true,
            interrupt_requests: false,
            cap_at_context: false,
            report_max_model_len: true,
            tokenizer: Tokenizer::Vllm,
            openapi_title: None,
            vllm_routes: true,
            preempt_when_full: false,
            spec_draft_tokens: None,
            gpus: None,
            pretend_cached: None,
            prompt_tokens_details: false,
        }
    }
}

/// What vLLM 0.32 puts in `system_fingerprint`.
pub const SYSTEM_FINGERPRINT: &str = "vllm-0.32.0-emulated";

/// The message of servers and gateways for a request past the context
/// window ("maximum context length is N tokens"), as older vLLM and
/// llama-cpp-python word it.
pub fn context_error(max_model_len: u64, prompt: u64, output: u64) -> String {
    format!(
        "This model's maximum context length is {max_model_len} tokens. However, you requested {} tokens ({prompt} in the messages, {output} in the completion). Please reduce the length of the messages or completion.",
        prompt + output
    )
}

/// vLLM 0.32's refusal of a prompt that alone fills the context window: it
/// stops counting at one token past it ("at least N+1").
pub fn prompt_too_long(max_model_len: u64) -> Value {
    let over = max_model_len + 1;
    json!({"error": {"message": format!(
        "This model's maximum context length is {max_model_len} tokens. However, your prompt contains at least {over} input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value={over})"),
        "type": "BadRequestError", "param": "input_tokens", "code": 400}})
}

/// What the engine did with one request. Times are Unix seconds.
#[derive(Debug, Clone, Default)]
pub struct RequestLog {
    pub arrived: f64,
    pub prompt_tokens: u64,
    pub max_tokens: u64,
    /// Prompt tokens found in the prefix cache.
    pub cached_tokens: u64,
    /// (time, tokens) of every emission, in order.
    pub emissions: Vec<(f64, u64)>,
}

#[derive(Default)]
struct Counters {
    kv_used: u64,
    running: usize,
    waiting: usize,
    generated_total: u64,
    /// vLLM's inter-token latency histogram: sum of the gaps between a
    /// request's emissions, and their count.
    itl_sum_s: f64,
    itl_count: u64,
    /// Hashes of the prompt blocks the prefix cache holds (never evicted).
    cache: HashSet<u64>,
    preemptions: u64,
    /// vLLM's prefix-cache counters: prompt tokens looked up, and found.
    prefix_queries: u64,
    prefix_hits: u64,
    /// Prompts served as cached under `pretend_cached` so far.
    pretended: u64,
    spec_drafts: u64,
    spec_draft_tokens: u64,
    spec_accepted: u64,
    /// Every change of the running count: (Unix time, running after it,
    /// energy of one used GPU until then in J), so energy is integrated
    /// exactly from a power that is constant between changes.
    load: Vec<(f64, usize, f64)>,
}

pub struct Engine {
    pub config: EmulatorConfig,
    /// When the engine started, Unix seconds: the clock of its jitter.
    started: f64,
    /// Whether the one stall of `config.stall` has happened.
    stalled: std::sync::atomic::AtomicBool,
    counters: Mutex<Counters>,
    freed: Notify,
    pub log: Mutex<Vec<RequestLog>>,
    /// Completions that have arrived: a running stream started before the
    /// latest one is interrupted when `interrupt_requests` is on.
    arrivals: std::sync::atomic::AtomicU64,
    /// Every `/metrics` served, in order.
    pub metrics_log: Mutex<Vec<MetricsRead>>,
    /// The throttle event, as configured or scheduled.
    throttle: Mutex<Option<ThrottleEvent>>,
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The emulator's tokenizer: a start token, then one token per started three
/// characters of each whitespace-separated word ("benchmark" is 3 tokens).
pub fn count_tokens(text: &str) -> u64 {
    1 + text
        .split_whitespace()
        .map(|w| w.chars().count().div_ceil(3) as u64)
        .sum::<u64>()
}

const WORDS: [&str; 16] = [
    "alpha ", "beta ", "gamma ", "delta ", "river ", "stone ", "cloud ", "maple ", "north ",
    "quiet ", "lamp ", "orbit ", "field ", "copper ", "seven ", "harbor ",
];
const LOOP_PHRASE: [&str; 4] = ["and ", "so ", "it ", "goes, "];

/// vLLM's block size: its prefix cache holds whole blocks of tokens.
pub const BLOCK_TOKENS: usize = 16;

/// The emulator's tokens of `text`, as hashes: a start token, then each
/// word's pieces of up to three characters ([`count_tokens`] counts them).
pub fn token_ids(text: &str) -> Vec<u64> {
    let mut ids = vec![0];
    for word in text.split_whitespace() {
        let chars: Vec<char> = word.chars().collect();
        for (i, piece) in chars.chunks(3).enumerate() {
            let mut h = DefaultHasher::new();
            (i == 0, piece).hash(&mut h);
            ids.push(h.finish());
        }
    }
    ids
}

/// The hash of each whole block of `tokens`, chained from the first so a
/// block's hash names its whole prefix, as vLLM's block hashes do.
pub fn block_hashes(tokens: &[u64]) -> Vec<u64> {
    let mut parent = 0u64;
    tokens
        .chunks_exact(BLOCK_TOKENS)
        .map(|block| {
            let mut h = DefaultHasher::new();
            (parent, block).hash(&mut h);
            parent = h.finish();
            parent
        })
        .collect()
}

impl Engine {
    /// vLLM's automatic prefix caching: the prompt tokens of the longest
    /// run of whole leading blocks already cached, never the whole prompt
    /// (its last token is always computed); counted in vLLM's counters, and
    /// every whole block of the prompt cached for later requests.
    fn look_up_prefix(&self, prompt: &str) -> u64 {
        let tokens = token_ids(prompt);
        let blocks = block_hashes(&tokens);
        let mut c = self.counters.lock().unwrap();
        let hit_blocks = blocks.iter().take_while(|b| c.cache.contains(b)).count();
        let mut cached = (hit_blocks * BLOCK_TOKENS).min(tokens.len() - 1) as u64;
        if let Some(p) = self.config.pretend_cached
            && tokens.len() as u64 >= p.min_tokens
            && c.pretended < p.count
        {
            c.pretended += 1;
            cached = tokens.len() as u64 - 1;
        }
        c.cache.extend(blocks);
        c.prefix_queries += tokens.len() as u64;
        c.prefix_hits += cached;
        cached
    }

    fn text_of_token(&self, i: u64, request: u64) -> &'static str {
        match self.config.loop_after_tokens {
            Some(after) if i >= after => LOOP_PHRASE[(i % 4) as usize],
            // A hash of (request, position): text that never settles into a cycle.
            _ => {
                let mut h = DefaultHasher::new();
                (request, i).hash(&mut h);
                WORDS[(h.finish() % WORDS.len() as u64) as usize]
            }
        }
    }

    fn try_admit(&self, need: u64) -> bool {
        let mut c = self.counters.lock().unwrap();
        if c.running < self.config.max_running && c.kv_used + need <= self.config.kv_capacity {
            c.running += 1;
            c.waiting -= 1;
            c.kv_used += need;
            self.note_load(&mut c);
            true
        } else {
            false
        }
    }

    fn release(&self, need: u64) {
        let mut c = self.counters.lock().unwrap();
        c.running -= 1;
        c.kv_used -= need;
        self.note_load(&mut c);
        drop(c);
        self.freed.notify_waiters();
    }

    /// Grows a running request's KV by `k` tokens, if they fit.
    fn try_grow(&self, k: u64) -> bool {
        let mut c = self.counters.lock().unwrap();
        let fits = c.kv_used + k <= self.config.kv_capacity;
        if fits {
            c.kv_used += k;
        }
        fits
    }

    /// Takes a running request holding `held` tokens back into the queue.
    fn preempt(&self, held: u64) {
        let mut c = self.counters.lock().unwrap();
        c.running -= 1;
        c.kv_used -= held;
        c.waiting += 1;
        c.preemptions += 1;
        self.note_load(&mut c);
        drop(c);
        self.freed.notify_waiters();
    }

    /// Waits until a request needing `need` tokens of KV is admitted.
    async fn admit(&self, need: u64) {
        loop {
            let freed = self.freed.notified();
            if self.try_admit(need) {
                return;
            }
            freed.await;
        }
    }

    /// Power of one used GPU with `running` requests, W.
    fn used_gpu_power(&self, running: usize) -> f64 {
        let g = self.config.gpus.unwrap_or_default();
        (g.idle_w + g.per_request_w * running as f64 / f64::from(g.used.max(1))).min(g.limit_w)
    }

    /// Notes a change of the running count (the lock held), for the energy.
    fn note_load(&self, c: &mut Counters) {
        let t = now();
        let energy = self.used_gpu_energy_at(c, t);
        c.load.push((t, c.running, energy));
    }

    /// Energy of one used GPU from the engine's start to `t`, J.
    fn used_gpu_energy_at(&self, c: &Counters, t: f64) -> f64 {
        let i = c.load.partition_point(|(at, _, _)| *at <= t);
        match i.checked_sub(1).map(|i| c.load[i]) {
            Some((at, running, energy)) => energy + self.used_gpu_power(running) * (t - at),
            None => self.used_gpu_power(0) * (t - self.started).max(0.0),
        }
    }

    /// The energy counters of the GPUs the engine runs on, summed, at Unix
    /// time `t`, in J: the truth a run's GPU energy is checked against.
    pub fn used_gpus_energy_j(&self, t: f64) -> f64 {
        let g = self.config.gpus.unwrap_or_default();
        let c = self.counters.lock().unwrap();
        f64::from(g.used) * self.used_gpu_energy_at(&c, t)
    }

    /// The throttle event in force at Unix time `t`.
    fn throttle_at(&self, t: f64) -> Option<ThrottleEvent> {
        let since = t - self.started;
        (*self.throttle.lock().unwrap()).filter(|e| e.from_s <= since && since < e.to_s)
    }

    /// Schedules a throttle event from `after` from now, lasting `lasting`.
    pub fn schedule_throttle(&self, after: Duration, lasting: Duration, reasons: u64, slow: f64) {
        let from_s = now() - self.started + after.as_secs_f64();
        *self.throttle.lock().unwrap() = Some(ThrottleEvent {
            from_s,
            to_s: from_s + lasting.as_secs_f64(),
            reasons,
            slow,
        });
    }

    /// The throttle event, in Unix seconds: (from, to).
    pub fn throttle_window(&self) -> Option<(f64, f64)> {
        (*self.throttle.lock().unwrap()).map(|e| (self.started + e.from_s, self.started + e.to_s))
    }

    /// Every GPU now, as DCGM and nvidia-smi report it.
    fn gpu_states(&self) -> Vec<GpuState> {
        let Some(g) = self.config.gpus else {
            return Vec::new();
        };
        let t = now();
        let c = self.counters.lock().unwrap();
        let throttle = self.throttle_at(t);
        let kv = c.kv_used as f64 / self.config.kv_capacity as f64;
        (0..g.total)
            .map(|gpu| {
                let used = gpu < g.used;
                let power_w = if used {
                    self.used_gpu_power(c.running)
                } else {
                    g.idle_w
                };
                let energy_j = if used {
                    self.used_gpu_energy_at(&c, t)
                } else {
                    g.idle_w * (t - self.started)
                };
                let mut reasons = if c.running == 0 { 0x1 } else { 0 };
                if used && power_w >= g.limit_w {
                    reasons |= 0x4;
                }
                let mut sm_clock = SM_CLOCK_MHZ;
                let mut temp = 35.0 + 25.0 * power_w / g.limit_w;
                if let Some(e) = throttle.filter(|_| used) {
                    reasons |= e.reasons;
                    sm_clock /= e.slow;
                    if e.reasons & 0x60 != 0 {
                        temp = 91.0;
                    }
                }
                GpuState {
                    gpu,
                    power_w,
                    energy_mj: ENERGY_AT_START_MJ + f64::from(gpu) * 1.0e6 + energy_j * 1000.0,
                    limit_w: g.limit_w,
                    sm_clock_mhz: sm_clock,
                    temp_c: temp,
                    util_pct: if used && c.running > 0 { 100.0 } else { 0.0 },
                    memory_used_mib: GPU_MEMORY_MIB * if used { 0.55 + 0.4 * kv } else { 0.006 },
                    reasons,
                }
            })
            .collect()
    }

    /// Every emission as (Unix time in seconds, tokens), in no set order.
    pub fn emissions(&self) -> Vec<(f64, u64)> {
        let log = self.log.lock().unwrap();
        log.iter()
            .flat_map(|r| r.emissions.iter().copied())
            .collect()
    }

    /// Output tokens emitted in [t0, t1].
    pub fn tokens_between(&self, t0: f64, t1: f64) -> u64 {
        self.log
            .lock()
            .unwrap()
            .iter()
            .flat_map(|r| r.emissions.iter())
            .filter(|(t, _)| *t >= t0 && *t <= t1)
            .map(|(_, k)| k)
            .sum()
    }

    /// Median TTFT (first emission minus arrival) of requests arriving in [t0, t1).
    pub fn median_ttft_ms(&self, t0: f64, t1: f64) -> f64 {
        median(&mut self.first_tokens_ms(t0, t1, |r| r.arrived))
    }

    /// Time from `t0` to the first emission of each request arriving in
    /// [t0, t1), sorted.
    pub fn first_tokens_ms_after(&self, t0: f64, t1: f64) -> Vec<f64> {
        let mut v = self.first_tokens_ms(t0, t1, |_| t0);
        v.sort_by(f64::total_cmp);
        v
    }

    /// Time from `since(request)` to the first emission, of requests
    /// arriving in [t0, t1), in the log's order.
    fn first_tokens_ms(&self, t0: f64, t1: f64, since: impl Fn(&RequestLog) -> f64) -> Vec<f64> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.arrived >= t0 && r.arrived < t1)
            .filter_map(|r| r.emissions.first().map(|(t, _)| (t - since(r)) * 1000.0))
            .collect()
    }

    /// The engine's decode step as it really ran (longer than configured
    /// when the machine is busy): per request, the mean gap between its
    /// emissions in [t0, t1]; the median over requests.
    pub fn median_step_ms(&self, t0: f64, t1: f64) -> f64 {
        let mut steps: Vec<f64> = Vec::new();
        for r in self.log.lock().unwrap().iter() {
            let inside: Vec<f64> = r
                .emissions
                .iter()
                .map(|(t, _)| *t)
                .filter(|t| *t >= t0 && *t <= t1)
                .collect();
            if inside.len() >= 2 {
                let span = inside[inside.len() - 1] - inside[0];
                steps.push(span * 1000.0 / (inside.len() - 1) as f64);
            }
        }
        median(&mut steps)
    }

    /// Median over tokens of each request's (last - first emission) / tokens
    /// after the first, counting emissions in [t0, t1].
    /// Each request's time per output token inside [t0, t1]: (last − first
    /// emission) / tokens after the first, for requests with two emissions there.
    pub fn tpot_ms_by_request(&self, t0: f64, t1: f64) -> Vec<f64> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|r| {
                let inside: Vec<&(f64, u64)> = r
                    .emissions
                    .iter()
                    .filter(|(t, _)| *t >= t0 && *t <= t1)
                    .collect();
                let after_first: u64 = inside.get(1..)?.iter().map(|(_, k)| k).sum();
                (after_first > 0)
                    .then(|| (inside.last().unwrap().0 - inside[0].0) * 1000.0 / after_first as f64)
            })
            .collect()
    }

    pub fn median_tbt_ms(&self, t0: f64, t1: f64) -> f64 {
        let mut weighted: Vec<(f64, u64)> = Vec::new();
        for r in self.log.lock().unwrap().iter() {
            let inside: Vec<&(f64, u64)> = r
                .emissions
                .iter()
                .filter(|(t, _)| *t >= t0 && *t <= t1)
                .collect();
            if inside.len() < 2 {
                continue;
            }
            let after_first: u64 = inside[1..].iter().map(|(_, k)| k).sum();
            let span = inside.last().unwrap().0 - inside[0].0;
            weighted.push((span * 1000.0 / after_first as f64, after_first));
        }
        weighted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: u64 = weighted.iter().map(|w| w.1).sum();
        let mut seen = 0;
        for (v, w) in &weighted {
            seen += w;
            if seen * 2 >= total {
                return *v;
            }
        }
        f64::NAN
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[(v.len() - 1) / 2]
    }
}

/// A running emulator; dropping it stops the server.
pub struct Emulator {
    pub url: String,
    pub engine: Arc<Engine>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl Emulator {
    /// Stops serving: later connections are refused.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Starts on a free port of 127.0.0.1.
pub async fn start(config: EmulatorConfig) -> Emulator {
    start_on(config, "127.0.0.1:0").await
}

pub async fn start_on(config: EmulatorConfig, address: &str) -> Emulator {
    let throttle = config.gpus.and_then(|g| g.throttle);
    let engine = Arc::new(Engine {
        config,
        stalled: std::sync::atomic::AtomicBool::new(false),
        started: now(),
        counters: Mutex::new(Counters::default()),
        freed: Notify::new(),
        log: Mutex::new(Vec::new()),
        arrivals: std::sync::atomic::AtomicU64::new(0),
        metrics_log: Mutex::new(Vec::new()),
        throttle: Mutex::new(throttle),
    });
    let mut app = axum::Router::new().route("/v1/models", get(models));
    app = match engine.config.tokenizer {
        Tokenizer::Vllm => app.route("/tokenize", post(tokenize)),
        Tokenizer::Extras => app.route("/extras/tokenize", post(extras_tokenize)),
        Tokenizer::None => app,
    };
    if engine.config.openapi_title.is_some() {
        app = app.route("/openapi.json", get(openapi));
    }
    if engine.config.vllm_routes {
        app = app
            .route("/metrics", get(metrics))
            // vLLM's liveness probe; guidellm and AIPerf check it before a run.
            .route("/health", get(|| async { StatusCode::OK }))
            .route(
                "/version",
                get(|| async { Json(json!({"version": "emulated-1"})) }),
            );
    }
    if engine.config.gpus.is_some() {
        app = app
            .route("/dcgm/metrics", get(dcgm_metrics))
            .route("/nvidia-smi", get(nvidia_smi));
    }
    let app = app
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .layer(axum::middleware::from_fn(stamp_arrival))
        // Prompts of a million tokens are megabytes: no 2 MB limit, as vLLM has none.
        .layer(axum::extract::DefaultBodyLimit::max(256 << 20))
        .with_state(Arc::clone(&engine));
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // As uvicorn does for vLLM: no Nagle delay between the headers and the first chunk.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await
            .unwrap();
    });
    Emulator {
        url,
        engine,
        stop: Some(tx),
    }
}

/// When a request reached the server, before its body was read.
#[derive(Clone, Copy)]
struct Arrival(f64);

async fn stamp_arrival(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    request.extensions_mut().insert(Arrival(now()));
    next.run(request).await
}

fn authorized(engine: &Engine, headers: &HeaderMap) -> bool {
    match &engine.config.api_key {
        None => true,
        Some(key) => headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v == format!("Bearer {key}")),
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "missing or wrong API key"})),
    )
        .into_response()
}

async fn models(State(e): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    if !authorized(&e, &headers) {
        return unauthorized();
    }
    let mut model = json!({"id": e.config.model, "object": "model"});
    if e.config.vllm_routes {
        // vLLM 0.32's card.
        model = json!({"id": e.config.model, "object": "model", "created": now() as u64, "owned_by": "vllm",
            "root": format!("/models/{}", e.config.model), "parent": null,
            "permission": [{"id": "modelperm-emulated", "object": "model_permission", "created": now() as u64,
                "allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true, "allow_search_indices": false,
                "allow_view": true, "allow_fine_tuning": false, "organization": "*", "group": null, "is_blocking": false}]});
    }
    if e.config.report_max_model_len {
        model["max_model_len"] = json!(e.config.max_model_len);
    }
    Json(json!({"object": "list", "data": [model]})).into_response()
}

/// llama-cpp-python's tokenizer: `{"input": text}`, start token included.
async fn extras_tokenize(Json(body): Json<Value>) -> Response {
    let n = count_tokens(
        body.get("input")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    );
    Json(json!({"tokens": (0..n).collect::<Vec<u64>>()})).into_response()
}

async fn openapi(State(e): State<Arc<Engine>>) -> Response {
    Json(json!({"openapi": "3.1.0", "info": {"title": e.config.openapi_title, "version": "9.9.9"}, "paths": {}}))
        .into_response()
}

async fn tokenize(
    State(e): State<Arc<Engine>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&e, &headers) {
        return unauthorized();
    }
    // vLLM's /tokenize takes a prompt, or messages it applies the chat template to.
    let n = match body.get("messages").and_then(Value::as_array) {
        Some(messages) => count_tokens(&chat_prompt(messages)),
        None => count_tokens(
            body.get("prompt")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
    };
    Json(json!({"count": n, "max_model_len": e.config.max_model_len, "tokens": (0..n).collect::<Vec<u64>>(), "token_strs": null})).into_response()
}

async fn metrics(State(e): State<Arc<Engine>>) -> String {
    let c = e.counters.lock().unwrap();
    let read = MetricsRead {
        at: now(),
        running: c.running,
        waiting: c.waiting,
        // vLLM's "perc" is a fraction.
        kv_usage: c.kv_used as f64 / e.config.kv_capacity as f64,
        preemptions: c.preemptions,
        prefix_queries: c.prefix_queries,
        prefix_hits: c.prefix_hits,
        spec_drafts: c.spec_drafts,
        spec_draft_tokens: c.spec_draft_tokens,
        spec_accepted: c.spec_accepted,
    };
    // vLLM 0.32's names and label sets (tests/fixtures/servers/vllm-0.32.0).
    let mut text = format!(
        "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:prompt_tokens_cached counter\nvllm:prompt_tokens_cached_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:inter_token_latency_seconds histogram\n\
         vllm:inter_token_latency_seconds_count{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         vllm:inter_token_latency_seconds_sum{{engine=\"0\",model_name=\"{m}\"}} {}\n\
         # TYPE vllm:cache_config_info gauge\n\
         vllm:cache_config_info{{block_size=\"{BLOCK_TOKENS}\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",kv_cache_size_tokens=\"{}\",num_gpu_blocks=\"{}\"}} 1.0\n",
        c.running,
        c.waiting,
        read.kv_usage,
        c.prefix_queries,
        c.prefix_hits,
        c.preemptions,
        c.prefix_queries,
        c.prefix_hits,
        c.generated_total,
        c.itl_count,
        c.itl_sum_s,
        // Its cache in blocks, and one more: vLLM keeps a block of its own.
        (e.config.kv_capacity / BLOCK_TOKENS as u64 + 1) * BLOCK_TOKENS as u64,
        e.config.kv_capacity / BLOCK_TOKENS as u64 + 1,
        m = e.config.model
    );
    // vLLM registers its speculative-decoding counters only when it drafts.
    if e.config.tokens_per_step > 1 {
        text.push_str(&format!(
            "vllm:spec_decode_num_drafts_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
             vllm:spec_decode_num_draft_tokens_total{{engine=\"0\",model_name=\"{m}\"}} {}\n\
             vllm:spec_decode_num_accepted_tokens_total{{engine=\"0\",model_name=\"{m}\"}} {}\n",
            c.spec_drafts,
            c.spec_draft_tokens,
            c.spec_accepted,
            m = e.config.model
        ));
    }
    drop(c);
    e.metrics_log.lock().unwrap().push(read);
    text
}

/// One emulated GPU at one moment.
#[derive(Debug, Clone, Copy)]
struct GpuState {
    gpu: u32,
    power_w: f64,
    energy_mj: f64,
    limit_w: f64,
    sm_clock_mhz: f64,
    temp_c: f64,
    util_pct: f64,
    memory_used_mib: f64,
    reasons: u64,
}

/// A series of the exporter: name, type, help, and its value of a GPU.
type DcgmSeries = (
    &'static str,
    &'static str,
    &'static str,
    fn(&GpuState) -> String,
);

/// An emulated dcgm-exporter: its series, labels and units (power in W,
/// energy in mJ since the driver loaded, frame buffer in MiB).
async fn dcgm_metrics(State(e): State<Arc<Engine>>) -> String {
    let old = e.config.gpus.is_some_and(|g| g.old_dcgm_names);
    let reasons = if old {
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
    } else {
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    };
    let states = e.gpu_states();
    let mut text = String::new();
    let series: [DcgmSeries; 10] = [
        (
            "DCGM_FI_DEV_SM_CLOCK",
            "gauge",
            "SM clock frequency (in MHz).",
            |g| format!("{:.0}", g.sm_clock_mhz),
        ),
        (
            "DCGM_FI_DEV_MEM_CLOCK",
            "gauge",
            "Memory clock frequency (in MHz).",
            |_| format!("{MEM_CLOCK_MHZ:.0}"),
        ),
        (
            "DCGM_FI_DEV_GPU_TEMP",
            "gauge",
            "GPU temperature (in C).",
            |g| format!("{:.0}", g.temp_c),
        ),
        (
            "DCGM_FI_DEV_POWER_USAGE",
            "gauge",
            "Power draw (in W).",
            |g| format!("{:.3}", g.power_w),
        ),
        (
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "counter",
            "Total energy consumption since boot (in mJ).",
            |g| format!("{:.0}", g.energy_mj),
        ),
        (
            "DCGM_FI_DEV_POWER_MGMT_LIMIT",
            "gauge",
            "Power management limit (in W).",
            |g| format!("{:.0}", g.limit_w),
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "gauge",
            "GPU utilization (in %).",
            |g| format!("{:.0}", g.util_pct),
        ),
        (
            "DCGM_FI_DEV_FB_FREE",
            "gauge",
            "Framebuffer memory free (in MiB).",
            |g| format!("{:.0}", GPU_MEMORY_MIB - g.memory_used_mib),
        ),
        (
            "DCGM_FI_DEV_FB_USED",
            "gauge",
            "Framebuffer memory used (in MiB).",
            |g| format!("{:.0}", g.memory_used_mib),
        ),
        ("", "gauge", "Current clock event reasons (bitmask).", |g| {
            g.reasons.to_string()
        }),
    ];
    for (name, kind, help, value) in series {
        let name = if name.is_empty() { reasons } else { name };
        text.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        for g in &states {
            text.push_str(&format!(
                "{name}{{gpu=\"{n}\",UUID=\"GPU-emulated-{n}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{n}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"emulated\"}} {}\n",
                0x18 + g.gpu,
                value(g),
                n = g.gpu
            ));
        }
    }
    text
}

/// What the stand-in nvidia-smi prints: `GET /nvidia-smi?query=index,power.draw,...`
/// answers one line per GPU in nvidia-smi's `csv,noheader,nounits` format,
/// or, for a field nvidia-smi does not know, its message with HTTP 400.
async fn nvidia_smi(
    State(e): State<Arc<Engine>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let query = query.unwrap_or_default();
    let fields: Vec<&str> = query
        .strip_prefix("query=")
        .unwrap_or_default()
        .split(',')
        .collect();
    let old_driver = e.config.gpus.is_some_and(|g| g.old_driver);
    let states = e.gpu_states();
    let mut out = String::new();
    for g in &states {
        let mut values = Vec::new();
        for field in &fields {
            let value = match *field {
                "index" => g.gpu.to_string(),
                "name" => "NVIDIA H100 80GB HBM3".into(),
                "power.draw" | "power.draw.instant" => format!("{:.2}", g.power_w),
                "power.limit" => format!("{:.2}", g.limit_w),
                "clocks.sm" => format!("{:.0}", g.sm_clock_mhz),
                "clocks.mem" => format!("{MEM_CLOCK_MHZ:.0}"),
                "temperature.gpu" => format!("{:.0}", g.temp_c),
                "utilization.gpu" => format!("{:.0}", g.util_pct),
                "memory.used" => format!("{:.0}", g.memory_used_mib),
                "memory.total" => format!("{GPU_MEMORY_MIB:.0}"),
                "clocks_event_reasons.active" if !old_driver => format!("0x{:016X}", g.reasons),
                "clocks_throttle_reasons.active" => format!("0x{:016X}", g.reasons),
                other => {
                    return (
                        StatusCode::BAD_REQUEST,
                        format!("Field \"{other}\" is not a valid field to query.\n\n"),
                    )
                        .into_response();
                }
            };
            values.push(value);
        }
        out.push_str(&values.join(", "));
        out.push('\n');
    }
    out.into_response()
}

/// Writes a stand-in `nvidia-smi` into `dir` (put `dir` first on PATH): a
/// bash script that asks the emulator at `url` for its GPUs (bash's
/// /dev/tcp: no curl needed) and prints them as nvidia-smi does, once or,
/// with `-lms N`, every N ms; a field it does not know exits 2 with
/// nvidia-smi's message. Only `--query-gpu`, `--format` and `-lms` are read.
pub fn write_nvidia_smi_standin(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    let address = url.trim_start_matches("http://");
    let (host, port) = address.split_once(':').expect("an emulator URL has a port");
    let script = format!(
        r#"#!/bin/bash
# A stand-in nvidia-smi for sitegen's tests: the emulated engine's GPUs.
query=
loop_ms=
while [ $# -gt 0 ]; do
  case "$1" in
    --query-gpu=*) query="${{1#--query-gpu=}}" ;;
    -lms) loop_ms="$2"; shift ;;
    -lms=*) loop_ms="${{1#-lms=}}" ;;
  esac
  shift
done
once() {{
  exec 3<>/dev/tcp/{host}/{port} || exit 9
  printf 'GET /nvidia-smi?query=%s HTTP/1.0\r\nHost: {host}\r\n\r\n' "$query" >&3
  IFS= read -r status <&3
  while IFS= read -r line <&3; do
    line=${{line%$'\r'}}
    [ -z "$line" ] && break
  done
  body=$(cat <&3)
  exec 3<&-
  printf '%s\n' "$body"
  case "$status" in *" 200 "*) ;; *) exit 2 ;; esac
}}
if [ -z "$loop_ms" ]; then once; exit 0; fi
while true; do
  once
  sleep "$((loop_ms / 1000)).$(printf '%03d' $((loop_ms % 1000)))"
done
"#
    );
    let path = dir.join("nvidia-smi");
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// The API a request came in on, which shapes its chunks.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    Completions,
    Chat,
}

/// The template the emulated chat model wraps a user message in: 8 tokens
/// of the emulator's tokenizer around the message.
pub fn chat_template(content: &str) -> String {
    format!("<|user|> {content} <|assistant|>")
}

/// The prompt a conversation becomes: every message's text, whether its
/// `content` is a string or a list of parts (`{"type": "text", "text": ..}`,
/// as guidellm sends), each under its role, as a real template renders them.
/// A single user message renders exactly as [`chat_template`].
fn chat_prompt(messages: &[Value]) -> String {
    let text = |m: &Value| -> String {
        match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        }
    };
    let mut out = String::new();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        out.push_str(&format!("<|{role}|> {} ", text(m)));
    }
    out.push_str("<|assistant|>");
    out
}

/// Which chunks carry token counts, as a request's `stream_options` ask and
/// vLLM answers: `include_usage` adds a last chunk with no choices,
/// `continuous_usage_stats` a count on every chunk.
#[derive(Debug, Clone, Copy)]
struct Usage {
    every_chunk: bool,
    last_chunk: bool,
}

impl Usage {
    fn asked(config: &EmulatorConfig, body: &Value) -> Usage {
        let option = |k: &str| {
            body.get("stream_options")
                .and_then(|o| o.get(k))
                .and_then(Value::as_bool)
                == Some(true)
        };
        Usage {
            every_chunk: config.stream_usage
                && config.continuous_usage
                && option("continuous_usage_stats"),
            last_chunk: config.stream_usage && option("include_usage"),
        }
    }
}

/// The chunk of output tokens `start..end` of request `index`.
fn chunk(
    e: &Engine,
    api: Api,
    index: usize,
    (start, end): (u64, u64),
    finish: Option<&str>,
    prompt: u64,
    usage: Usage,
) -> Event {
    let text = |range: std::ops::Range<u64>| -> String {
        range.map(|i| e.text_of_token(i, index as u64)).collect()
    };
    // vLLM 0.32's shapes (tests/fixtures/servers/vllm-0.32.0): the last
    // token's event says `stop_reason` too.
    let mut v = match api {
        Api::Completions => json!({
            "id": format!("cmpl-{index:016x}"), "object": "text_completion", "created": now() as u64, "model": e.config.model,
            "choices": [{"index": 0, "text": text(start..end), "logprobs": null, "finish_reason": finish,
                "stop_reason": null, "prompt_token_ids": null, "token_ids": null}],
        }),
        Api::Chat => {
            let r = e.config.reasoning_tokens;
            let mut delta = serde_json::Map::new();
            if start < r {
                delta.insert("reasoning".into(), json!(text(start..end.min(r))));
            }
            if end > r {
                delta.insert("content".into(), json!(text(start.max(r)..end)));
            }
            let mut choice = json!({"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish, "token_ids": null});
            if finish.is_some() {
                choice["stop_reason"] = Value::Null;
            }
            json!({
                "id": format!("chatcmpl-{index:016x}"), "object": "chat.completion.chunk", "created": now() as u64,
                "model": e.config.model, "choices": [choice],
            })
        }
    };
    if usage.every_chunk {
        v["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": end, "total_tokens": prompt + end});
    }
    Event::default().data(v.to_string())
}

async fn completions(
    State(e): State<Arc<Engine>>,
    arrival: axum::Extension<Arrival>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if e.config.chat_only {
        return (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))).into_response();
    }
    let prompt = body
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    serve(e, arrival, headers, &body, Api::Completions, prompt).await
}

/// vLLM's chat API: the one user message in the emulated chat template; a
/// first chunk with only the role, as vLLM sends; reasoning deltas first.
async fn chat_completions(
    State(e): State<Arc<Engine>>,
    arrival: axum::Extension<Arrival>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let prompt = chat_prompt(messages);
    serve(e, arrival, headers, &body, Api::Chat, prompt).await
}

async fn serve(
    e: Arc<Engine>,
    axum::Extension(Arrival(arrived)): axum::Extension<Arrival>,
    headers: HeaderMap,
    body: &Value,
    api: Api,
    prompt: String,
) -> Response {
    if !authorized(&e, &headers) {
        return unauthorized();
    }
    if let Some(status) = e.config.fail_status {
        let code = StatusCode::from_u16(status).unwrap();
        return (
            code,
            Json(json!({"error": {"message": "injected fault", "code": status}})),
        )
            .into_response();
    }
    // Chat clients (guidellm, AIPerf) send OpenAI's newer name; vLLM takes both.
    let max_tokens = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(16);
    let prompt_tokens = count_tokens(&prompt);
    let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
    let max_len = e.config.max_model_len;
    let refused = || {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": context_error(max_len, prompt_tokens, max_tokens), "type": "BadRequestError", "code": 400}})),
        )
            .into_response()
    };
    let max_tokens = if prompt_tokens + max_tokens <= max_len {
        max_tokens
    } else if !e.config.cap_at_context {
        // vLLM 0.32: a prompt that fills the window is refused with a plain
        // 400, even when streamed; else max_tokens is cut to what fits,
        // without a word (HTTP 200, finish "length" early).
        if prompt_tokens >= max_len {
            return (StatusCode::BAD_REQUEST, Json(prompt_too_long(max_len))).into_response();
        }
        let cut = max_len - prompt_tokens;
        // ...and then a min_tokens over the cut max_tokens is refused.
        if let Some(min) = body.get("min_tokens").and_then(Value::as_u64)
            && min > cut
        {
            let message =
                format!("min_tokens must be less than or equal to max_tokens={cut}, got {min}.");
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "BadRequestError", "param": null, "code": 400}})),
            )
                .into_response();
        }
        cut
    } else if prompt_tokens >= max_len {
        // llama-cpp-python: the 400 only when not streamed; a stream is a
        // 200 whose body ends before any event.
        if !streamed {
            return refused();
        }
        let (_tx, rx) = mpsc::channel::<Result<Event, Infallible>>(1);
        return Sse::new(ReceiverStream::new(rx)).into_response();
    } else {
        max_len - prompt_tokens
    };
    let arrived_as = e.arrivals.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    // A request not streamed holds the model to its end: never interrupted.
    let epoch = if streamed { arrived_as } else { u64::MAX };
    let index = {
        let mut log = e.log.lock().unwrap();
        log.push(RequestLog {
            arrived,
            prompt_tokens,
            max_tokens,
            cached_tokens: 0,
            emissions: Vec::new(),
        });
        log.len() - 1
    };
    let usage = Usage::asked(&e.config, body);
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    let engine = Arc::clone(&e);
    tokio::spawn(async move {
        let request = Request {
            api,
            index,
            prompt,
            prompt_tokens,
            max_tokens,
            usage,
            epoch,
        };
        generate(engine, request, tx).await
    });
    if !streamed {
        return answer_whole(&e, api, index, prompt_tokens, rx).await;
    }
    // No SSE keep-alive comments: vLLM sends none while a request waits, and
    // clients that parse every line as JSON (SGLang's bench_serving) fail on them.
    Sse::new(ReceiverStream::new(rx)).into_response()
}

/// A request not streamed: the whole answer once generated, with usage,
/// as every OpenAI-compatible server sends it.
async fn answer_whole(
    e: &Engine,
    api: Api,
    index: usize,
    prompt_tokens: u64,
    mut rx: mpsc::Receiver<Result<Event, Infallible>>,
) -> Response {
    // The events themselves are not read back: the log holds what was emitted.
    while rx.recv().await.is_some() {}
    let emitted: u64 = e.log.lock().unwrap()[index]
        .emissions
        .iter()
        .map(|(_, k)| k)
        .sum();
    let text = || -> String {
        (0..emitted)
            .map(|i| e.text_of_token(i, index as u64))
            .collect()
    };
    let usage = json!({"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + emitted, "completion_tokens": emitted,
        "prompt_tokens_details": null});
    let whole = match api {
        Api::Completions => {
            json!({"id": format!("cmpl-{index:016x}"), "object": "text_completion", "created": now() as u64,
            "model": e.config.model, "choices": [{"index": 0, "text": text(), "logprobs": null, "finish_reason": "length",
            "stop_reason": null, "prompt_logprobs": null, "prompt_token_ids": null, "token_ids": null}],
            "service_tier": null, "system_fingerprint": SYSTEM_FINGERPRINT, "usage": usage, "kv_transfer_params": null})
        }
        Api::Chat => {
            // vLLM 0.32's chat answer (tests/fixtures/servers/vllm-0.32.0/chat_reasoning.json).
            let r = (e.config.reasoning_tokens.min(emitted)) as usize;
            let reasoning: String = (0..r as u64)
                .map(|i| e.text_of_token(i, index as u64))
                .collect();
            let content: String = (r as u64..emitted)
                .map(|i| e.text_of_token(i, index as u64))
                .collect();
            let mut message = json!({"role": "assistant", "content": content, "refusal": null, "annotations": null,
                "audio": null, "function_call": null});
            if r > 0 {
                message["reasoning"] = json!(reasoning);
            }
            let mut usage = usage;
            usage["completion_tokens_details"] = json!({"reasoning_tokens": 0});
            json!({"id": format!("chatcmpl-{index:016x}"), "object": "chat.completion", "created": now() as u64,
                "model": e.config.model, "choices": [{"index": 0, "message": message, "logprobs": null,
                "finish_reason": "length", "stop_reason": null, "token_ids": null, "routed_experts": null}],
                "service_tier": null, "system_fingerprint": SYSTEM_FINGERPRINT, "usage": usage, "prompt_logprobs": null,
                "prompt_token_ids": null, "prompt_text": null, "kv_transfer_params": null, "ec_transfer_params": null,
                "metrics": null})
        }
    };
    Json(whole).into_response()
}

/// One admitted completion request, as `generate` serves it.
struct Request {
    api: Api,
    index: usize,
    prompt: String,
    prompt_tokens: u64,
    max_tokens: u64,
    usage: Usage,
    /// Its place among the completions that arrived (see `interrupt_requests`).
    epoch: u64,
}

/// Waits one decode step: the configured step, or with jitter that step
/// times the jitter's factor now; under a throttle event, `slow` times that.
async fn next_step(e: &Engine, ticker: &mut tokio::time::Interval, request: u64, emitted: u64) {
    match e.config.jitter {
        Some(j) => {
            let f = j.factor(now() - e.started, mix(request << 32 ^ emitted));
            tokio::time::sleep(e.config.step.mul_f64(f)).await;
        }
        None => {
            ticker.tick().await;
        }
    }
    // Every other running request lengthens the step.
    if !e.config.step_per_stream.is_zero() {
        let others = e.counters.lock().unwrap().running.saturating_sub(1);
        tokio::time::sleep(e.config.step_per_stream * others as u32).await;
        ticker.reset();
    }
    // A throttled GPU: the step takes `slow` times as long.
    if let Some(t) = e.throttle_at(now()) {
        tokio::time::sleep(e.config.step.mul_f64(t.slow - 1.0)).await;
        // The next step is a whole step from now, not from the missed tick.
        ticker.reset();
    }
}

/// Waits for room, prefills, then emits tokens step by step until done or
/// the client hangs up.
async fn generate(e: Arc<Engine>, r: Request, tx: mpsc::Sender<Result<Event, Infallible>>) {
    let (api, index, prompt) = (r.api, r.index, r.prompt);
    let (prompt_tokens, max_tokens, usage) = (r.prompt_tokens, r.max_tokens, r.usage);
    // KV the request holds: all it may need, reserved at admission, or
    // under `preempt_when_full` its prompt, growing with each step.
    let mut held_kv = if e.config.preempt_when_full {
        prompt_tokens
    } else {
        prompt_tokens + max_tokens
    };
    e.counters.lock().unwrap().waiting += 1;
    e.admit(held_kv).await;
    let cached = e.look_up_prefix(&prompt);
    {
        let mut log = e.log.lock().unwrap();
        log[index].cached_tokens = cached;
    }
    tokio::time::sleep(Duration::from_secs_f64(
        (prompt_tokens - cached) as f64 / e.config.prefill_tok_per_s,
    ))
    .await;
    let mut emitted = 0u64;
    let mut ticker = tokio::time::interval(e.config.step);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // the first tick is immediate: the prefill's token
    let mut first = true;
    if api == Api::Chat {
        // vLLM's first chat chunk names the role and carries no token.
        let mut role = json!({"id": format!("chatcmpl-{index:016x}"), "object": "chat.completion.chunk", "created": now() as u64,
            "model": e.config.model, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}],
            "prompt_token_ids": null, "prompt_text": null});
        if usage.every_chunk {
            role["usage"] = json!({"prompt_tokens": prompt_tokens, "completion_tokens": 0, "total_tokens": prompt_tokens});
        }
        let _ = tx.send(Ok(Event::default().data(role.to_string()))).await;
    }
    // Output held back by a stall: (its first token, until when).
    let mut held: Option<(u64, tokio::time::Instant)> = None;
    let ok = loop {
        if let Some(limit) = e.config.break_after_tokens
            && emitted >= limit
        {
            // Close the stream without [DONE].
            break true;
        }
        if e.config.interrupt_requests
            && e.arrivals.load(std::sync::atomic::Ordering::SeqCst) > r.epoch
        {
            // A later request took the model: this stream ends here, with
            // [DONE] and no finish reason, as llama-cpp-python ends it.
            let _ = tx.send(Ok(Event::default().data("[DONE]"))).await;
            break true;
        }
        // The prefill yields one token; each decode step yields tokens_per_step.
        let k = if first { 1 } else { e.config.tokens_per_step }.min(max_tokens - emitted);
        if e.config.preempt_when_full {
            if !e.try_grow(k) {
                // No room for this step: preempted, queued again, and its
                // prompt and output recomputed once readmitted.
                e.preempt(held_kv);
                e.admit(held_kv + k).await;
                tokio::time::sleep(Duration::from_secs_f64(
                    held_kv as f64 / e.config.prefill_tok_per_s,
                ))
                .await;
            }
            held_kv += k;
        }
        if !first && e.config.tokens_per_step > 1 {
            // One draft verified: tokens_per_step - 1 of its tokens accepted
            // (fewer at the request's end), plus the target model's own.
            let drafted = e
                .config
                .spec_draft_tokens
                .unwrap_or(0)
                .max(e.config.tokens_per_step - 1);
            let mut c = e.counters.lock().unwrap();
            c.spec_drafts += 1;
            c.spec_draft_tokens += drafted;
            c.spec_accepted += k - 1;
        }
        let mut start = emitted;
        emitted += k;
        if let Some((after, hold)) = e.config.stall
            && emitted > after
            && held.is_none()
            && !e.stalled.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            held = Some((start, tokio::time::Instant::now() + hold));
        }
        if e.config.hold_back_at == Some(emitted) && emitted < max_tokens && held.is_none() {
            // Sent with the next token: the step's sleep outlasts half a step.
            held = Some((start, tokio::time::Instant::now() + e.config.step / 2));
        }
        if let Some((held_start, until)) = held {
            if tokio::time::Instant::now() < until && emitted < max_tokens {
                next_step(&e, &mut ticker, index as u64, emitted).await;
                continue;
            }
            start = held_start;
            held = None;
        }
        let k = emitted - start;
        let finish = (emitted == max_tokens).then_some("length");
        let event = chunk(
            &e,
            api,
            index,
            (start, emitted),
            finish,
            prompt_tokens,
            usage,
        );
        let t = now();
        if tx.send(Ok(event)).await.is_err() {
            break false;
        }
        let previous = {
            let mut log = e.log.lock().unwrap();
            let emissions = &mut log[index].emissions;
            let previous = emissions.last().map(|(t, _)| *t);
            emissions.push((t, k));
            previous
        };
        {
            let mut c = e.counters.lock().unwrap();
            c.generated_total += k;
            if let Some(p) = previous {
                c.itl_sum_s += t - p;
                c.itl_count += 1;
            }
        }
        if emitted == max_tokens {
            if usage.last_chunk {
                let (id, object) = match api {
                    Api::Completions => (format!("cmpl-{index:016x}"), "text_completion"),
                    Api::Chat => (format!("chatcmpl-{index:016x}"), "chat.completion.chunk"),
                };
                let mut last = json!({"id": id, "object": object, "created": now() as u64, "model": e.config.model, "choices": [],
                    "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + emitted, "completion_tokens": emitted},
                    "system_fingerprint": SYSTEM_FINGERPRINT});
                // vLLM's reasoning parser adds the reasoning it counted: only
                // tokens after a generated <think>, none when the template
                // opened it, as here.
                if api == Api::Chat && e.config.reasoning_tokens > 0 {
                    last["usage"]["completion_tokens_details"] = json!({"reasoning_tokens": 0});
                }
                // vLLM 0.32 with --enable-prompt-tokens-details
                // (tests/fixtures/servers/vllm-0.32.0/prompt_details_stream*.sse).
                if e.config.prompt_tokens_details {
                    last["usage"]["prompt_tokens_details"] = json!({"cached_tokens": cached});
                }
                let _ = tx.send(Ok(Event::default().data(last.to_string()))).await;
            }
            let _ = tx.send(Ok(Event::default().data("[DONE]"))).await;
            break true;
        }
        first = false;
        next_step(&e, &mut ticker, index as u64, emitted).await;
    };
    let _ = ok;
    e.release(held_kv);
}
