//! The two measurements: one cold prompt (prefill), and N streams kept busy
//! for a fixed window (sustained decode).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::analysis::{Finish, RequestRecord};
use super::client::{Client, StreamEvent};
use super::metrics;
use crate::model::{ApiEndpoint, MetricSample, ServerSamples};

/// Characters of each request's output kept for loop detection.
const TEXT_TAIL_CHARS: usize = 4096;

/// What every request of a run sends besides its prompt, and where.
#[derive(Debug, Clone)]
pub struct RequestSettings {
    pub model: String,
    pub temperature: f64,
    pub endpoint: ApiEndpoint,
    /// How output tokens are counted: a stream's usage is read only when
    /// the probe found it trustworthy.
    pub token_count: crate::model::TokenCount,
}

/// A streamed request that generates exactly `max_tokens` tokens (ignoring
/// end-of-sequence) and reports usage on every chunk: the prompt as it is
/// for completions, as one user message for chat.
pub(crate) fn completion_body(settings: &RequestSettings, prompt: &str, max_tokens: u32) -> Value {
    let mut body = json!({
        "model": settings.model,
        "max_tokens": max_tokens,
        "min_tokens": max_tokens,
        "ignore_eos": true,
        "temperature": settings.temperature,
        "stream": true,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true},
    });
    match settings.endpoint {
        ApiEndpoint::Completions => body["prompt"] = json!(prompt),
        ApiEndpoint::Chat => body["messages"] = json!([{"role": "user", "content": prompt}]),
    }
    body
}

/// The same request not streamed: sizing reads its `usage`, and a refused
/// stream's reason is asked for with it.
pub(crate) fn unstreamed_body(settings: &RequestSettings, prompt: &str, max_tokens: u32) -> Value {
    let mut body = completion_body(settings, prompt, max_tokens);
    let o = body.as_object_mut().expect("a JSON object");
    o.remove("stream_options");
    o.insert("stream".into(), json!(false));
    body
}

/// `usage.prompt_tokens` of `prompt` sent once, not streamed, for one token.
pub(crate) async fn unstreamed_prompt_tokens(
    client: &Client,
    settings: &RequestSettings,
    prompt: &str,
) -> anyhow::Result<u64> {
    let answer = client
        .complete(
            settings.endpoint.path(),
            &unstreamed_body(settings, prompt, 1),
        )
        .await?;
    answer
        .get("usage")
        .and_then(|u| u.get("prompt_tokens"))
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the server's answer to a request not streamed has no usage.prompt_tokens: {}",
                answer.to_string().chars().take(200).collect::<String>()
            )
        })
}

/// `usage.completion_tokens` of `prompt` sent once, not streamed, for
/// `max_tokens`: whether the server generates them all (or caps the request
/// at its context window), counted by the server itself.
pub(crate) async fn unstreamed_completion_tokens(
    client: &Client,
    settings: &RequestSettings,
    prompt: &str,
    max_tokens: u32,
) -> anyhow::Result<u64> {
    let answer = client
        .complete(
            settings.endpoint.path(),
            &unstreamed_body(settings, prompt, max_tokens),
        )
        .await?;
    answer
        .get("usage")
        .and_then(|u| u.get("completion_tokens"))
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the server's answer to a request not streamed has no usage.completion_tokens"
            )
        })
}

/// Why a stream was refused, in the server's words: the same request not
/// streamed, whose error says what the empty stream did not.
pub(crate) async fn refusal_in_words(
    client: &Client,
    settings: &RequestSettings,
    body: &Value,
) -> String {
    let mut again = body.clone();
    if let Some(o) = again.as_object_mut() {
        o.remove("stream_options");
        o.insert("stream".into(), json!(false));
        o.insert("max_tokens".into(), json!(1));
        o.insert("min_tokens".into(), json!(1));
    }
    match client.complete(settings.endpoint.path(), &again).await {
        Err(e) => format!(
            "{}; the same request not streamed: {e:#}",
            super::client::EMPTY_STREAM
        ),
        Ok(_) => format!(
            "{}; the same request not streamed was answered (the server refuses only the stream)",
            super::client::EMPTY_STREAM
        ),
    }
}

/// Sends one request to `settings.endpoint` and records it, relative to
/// `t0`, until it ends or `deadline`.
pub async fn record_request(
    client: &Client,
    settings: &RequestSettings,
    body: &Value,
    stream: u32,
    t0: Instant,
    deadline: Option<Instant>,
    live_tokens: Option<&AtomicU64>,
) -> RequestRecord {
    record(
        client,
        settings,
        body,
        stream,
        t0,
        deadline,
        live_tokens,
        false,
    )
    .await
}

/// [`record_request`] keeping the whole answer (`RequestRecord::text`), as a
/// session's next turn sends it back; never cancelled.
pub(crate) async fn record_turn(
    client: &Client,
    settings: &RequestSettings,
    body: &Value,
    stream: u32,
    t0: Instant,
    live_tokens: Option<&AtomicU64>,
) -> RequestRecord {
    record(client, settings, body, stream, t0, None, live_tokens, true).await
}

#[allow(clippy::too_many_arguments)]
async fn record(
    client: &Client,
    settings: &RequestSettings,
    body: &Value,
    stream: u32,
    t0: Instant,
    deadline: Option<Instant>,
    live_tokens: Option<&AtomicU64>,
    keep_text: bool,
) -> RequestRecord {
    let start = Instant::now();
    let secs = |at: Instant| {
        at.saturating_duration_since(t0).as_secs_f64()
            - t0.saturating_duration_since(at).as_secs_f64()
    };
    let mut record = RequestRecord {
        stream,
        start: secs(start),
        asked_tokens: body.get("max_tokens").and_then(Value::as_u64),
        ..Default::default()
    };
    let mut counted = 0u64;
    let mut tail = String::new();
    let mut whole = keep_text.then(String::new);
    let mut reasoning_tail = String::new();
    let mut finish_reason = None;
    let mut last_event = start;
    let outcome = {
        let on_event = |event: StreamEvent| {
            let StreamEvent::Chunk(chunk) = event else {
                return;
            };
            last_event = chunk.at;
            let trusted = settings.token_count == crate::model::TokenCount::StreamUsage;
            if let Some(p) = chunk.prompt_tokens.filter(|_| trusted) {
                record.prompt_tokens = Some(p);
            }
            if chunk.cached_tokens.is_some() {
                record.cached_tokens = chunk.cached_tokens;
            }
            if let Some(w) = whole.as_mut() {
                w.push_str(&chunk.text);
            }
            // Usage on the chunk is the truth; without it an event that
            // stands for a token is one (docs/measurement.md, "Token counts").
            record.stream_usage |= chunk.completion_tokens.is_some();
            let usage = chunk
                .completion_tokens
                .filter(|_| settings.token_count == crate::model::TokenCount::StreamUsage);
            let tokens = match usage {
                Some(total) => total.saturating_sub(counted),
                None if chunk.token_event => 1,
                None => 0,
            };
            if tokens > 0 {
                counted += tokens;
                record.chunks.push((secs(chunk.at), tokens));
                if let Some(live) = live_tokens {
                    live.fetch_add(tokens, Ordering::Relaxed);
                }
            }
            push_tail(&mut tail, &chunk.text);
            push_tail(&mut reasoning_tail, &chunk.reasoning);
            if chunk.finish_reason.is_some() {
                finish_reason = chunk.finish_reason;
            }
            if chunk.server_ms_per_token.is_some() {
                record.server_ms_per_token = chunk.server_ms_per_token;
            }
        };
        let request = client.stream_completion(settings.endpoint.path(), body, on_event);
        match deadline {
            Some(d) => tokio::time::timeout_at(d.into(), request).await.ok(),
            None => Some(request.await),
        }
    };
    record.text_tail = last_chars(&tail);
    record.text = whole;
    record.reasoning_tail = last_chars(&reasoning_tail);
    match outcome {
        None => {
            record.finish = Some(Finish::Cancelled);
            record.end = secs(deadline.expect("only a deadline cancels"));
        }
        Some(Ok(())) => {
            record.finish = Some(finish_reason.map_or(Finish::NoReason, Finish::Done));
            record.end = secs(last_event);
        }
        Some(Err(e)) => {
            record.finish = Some(Finish::Error(format!("{e:#}")));
            record.end = secs(Instant::now());
        }
    }
    record
}

/// Appends `text` to a tail kept near [`TEXT_TAIL_CHARS`] characters.
fn push_tail(tail: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    tail.push_str(text);
    if tail.len() > 2 * TEXT_TAIL_CHARS {
        let cut = tail
            .char_indices()
            .rev()
            .nth(TEXT_TAIL_CHARS - 1)
            .map_or(0, |(i, _)| i);
        tail.drain(..cut);
    }
}

fn last_chars(tail: &str) -> String {
    let chars: Vec<char> = tail.chars().collect();
    chars[chars.len().saturating_sub(TEXT_TAIL_CHARS)..]
        .iter()
        .collect()
}

/// What a window recorded: `records`, what its streams returned (the
/// requests of a decode window, the turns of a sessions window), and what
/// was read of the server and its GPUs meanwhile.
pub struct WindowRecording<R = Vec<RequestRecord>> {
    pub window_start_unix_s: f64,
    pub records: R,
    pub server: Option<ServerSamples>,
    /// The gauges of each `/metrics` sample, as `server.samples` holds them.
    pub(crate) gauges: Vec<metrics::Gauges>,
    /// The engine whose `/metrics` was sampled.
    pub(crate) engine: Option<&'static metrics::EngineSeries>,
    /// The server's counters just before the first request and just after
    /// the last one ended.
    pub(crate) counters_before: Option<metrics::DecodeCounters>,
    pub(crate) counters_after: Option<metrics::DecodeCounters>,
    /// The GPUs' readings, when a monitor reads them.
    pub(crate) gpu_samples: Vec<super::gpu::GpuSample>,
    /// The client's own load over the window.
    pub(crate) client: Option<crate::model::ClientLoad>,
}

/// What a window samples besides its streams.
#[derive(Clone, Copy)]
pub(crate) struct Sampling<'a> {
    /// How often the server's `/metrics` is read; `None`: never.
    pub metrics_every: Option<Duration>,
    /// Reads the server's GPUs, when they can be read.
    pub gpus: Option<&'a super::gpu::GpuMonitor>,
}

/// Keeps `prompts.len()` streams busy for `window`: each stream sends its
/// prompt, and when a request ends sends it again at once. Requests still
/// running at the window's end are cancelled.
pub(crate) async fn decode_window(
    client: &Client,
    settings: &RequestSettings,
    prompts: &[String],
    max_output: u32,
    window: Duration,
    sampling: Sampling<'_>,
    live_tokens: Arc<AtomicU64>,
) -> WindowRecording {
    let mut recording = measured_window(client, window, sampling, |t0, deadline| async move {
        let mut tasks = tokio::task::JoinSet::new();
        for (stream, prompt) in prompts.iter().enumerate() {
            let client = client.clone();
            let body = completion_body(settings, prompt, max_output);
            let settings = settings.clone();
            let live = Arc::clone(&live_tokens);
            tasks.spawn(async move {
                let mut records = Vec::new();
                while Instant::now() < deadline {
                    let r = record_request(
                        &client,
                        &settings,
                        &body,
                        stream as u32,
                        t0,
                        Some(deadline),
                        Some(&live),
                    )
                    .await;
                    let failed = matches!(r.finish, Some(Finish::Error(_)));
                    records.push(r);
                    // A failing stream is not retried: the cell reports it as an error.
                    if failed {
                        break;
                    }
                }
                records
            });
        }
        let mut records = Vec::new();
        while let Some(done) = tasks.join_next().await {
            records.extend(done.expect("a stream task panicked"));
        }
        records
    })
    .await;
    recording
        .records
        .sort_by(|a, b| a.stream.cmp(&b.stream).then(a.start.total_cmp(&b.start)));
    recording
}

/// Now, as an `Instant` and as Unix seconds read at one moment. The wall
/// clock is read on both sides of the `Instant` and the pair kept once the
/// two readings are close: a thread preempted between two plain reads (on a
/// busy 2-core CI machine, once by about 17 ms) would place every token of
/// the window that far from where the wall clock puts it.
fn instant_and_unix_now() -> (Instant, f64) {
    let unix = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    tightest_reading(|| {
        let before = SystemTime::now();
        let t0 = Instant::now();
        let after = SystemTime::now();
        (t0, unix(before), unix(after))
    })
}

/// Of up to 100 readings `(instant, wall before, wall after)`, the first
/// whose wall readings lie within 100 µs of each other, else the closest
/// pair; the wall time is their midpoint.
fn tightest_reading(mut read: impl FnMut() -> (Instant, f64, f64)) -> (Instant, f64) {
    let mut best: Option<(f64, Instant, f64)> = None;
    for _ in 0..100 {
        let (at, before, after) = read();
        let spread = (after - before).abs();
        if best.is_none_or(|(b, ..)| spread < b) {
            best = Some((spread, at, (before + after) / 2.0));
        }
        if spread <= 100e-6 {
            break;
        }
    }
    let (_, at, unix) = best.expect("one reading at least");
    (at, unix)
}

/// Runs `streams(t0, deadline)` for a window of `window`, reading the
/// server's counters just before it and just after the streams end, its
/// gauges every interval inside the window, and its GPUs beside.
pub(crate) async fn measured_window<R, F, Fut>(
    client: &Client,
    window: Duration,
    sampling: Sampling<'_>,
    streams: F,
) -> WindowRecording<R>
where
    F: FnOnce(Instant, Instant) -> Fut,
    Fut: std::future::Future<Output = R>,
{
    let Sampling {
        metrics_every: sample_metrics,
        gpus,
    } = sampling;
    // The server's counters are read before the first request and after the
    // last one ends: servers that count a request's tokens when it ends
    // (llama.cpp) then agree with the client's count.
    let counters_before = match sample_metrics {
        Some(_) => decode_counters(client).await,
        None => None,
    };
    // The GPUs' first reading too, so that it does not compete with the
    // streams' first requests.
    let gpu_opening = match gpus {
        Some(monitor) => monitor.read_now().await,
        None => None,
    };
    let (t0, window_start_unix_s) = instant_and_unix_now();
    let deadline = t0 + window;
    let watch = super::self_check::Watch::start(deadline);
    let sampler = sample_metrics.map(|every| {
        let client = client.clone();
        tokio::spawn(async move { sample_server(&client, t0, deadline, every).await })
    });
    // The GPUs are read on this task, beside the streams: every interval
    // and at the deadline.
    let gpu_readings = async {
        match gpus {
            Some(monitor) => monitor.window(t0, deadline, gpu_opening).await,
            None => Vec::new(),
        }
    };
    let (records, gpu_samples) = tokio::join!(streams(t0, deadline), gpu_readings);
    let client_load = watch.finish().await;
    let sampled = match sampler {
        Some(handle) => handle.await.ok().flatten(),
        None => None,
    };
    // Read the counters again only when they were read before the window.
    let counters_after = match counters_before {
        Some(_) => decode_counters(client).await,
        None => None,
    };
    let (mut server, gauges, engine) = match sampled {
        Some(s) => (Some(s.samples), s.gauges, s.engine),
        None => (None, Vec::new(), None),
    };
    if let (Some(s), Some(before), Some(after)) = (&mut server, &counters_before, &counters_after) {
        s.generation_tokens_delta = after.generated_since(before);
        s.ms_per_token = after.ms_per_token_since(before);
    }
    WindowRecording {
        window_start_unix_s,
        records,
        server,
        gauges,
        engine,
        counters_before,
        counters_after,
        gpu_samples,
        client: client_load,
    }
}

/// The server's decode counters, if it serves metrics.
async fn decode_counters(client: &Client) -> Option<metrics::DecodeCounters> {
    let text = client.get_text("/metrics").await.ok()?;
    Some(metrics::DecodeCounters::read(
        &metrics::parse_without_buckets(&text),
    ))
}

/// When, after a window's start, the server is sampled: every `every`
/// strictly inside the window (one interval in, never at the deadline), or
/// once halfway through a window shorter than the interval.
fn sample_offsets(window: Duration, every: Duration) -> Vec<Duration> {
    let mut at: Vec<Duration> = (1..)
        .map(|k| every * k)
        .take_while(|t| *t < window)
        .collect();
    if at.is_empty() {
        at.push(window / 2);
    }
    at
}

/// What the server's `/metrics` said during a window.
struct ServerSampling {
    samples: ServerSamples,
    gauges: Vec<metrics::Gauges>,
    engine: Option<&'static metrics::EngineSeries>,
}

/// Samples the server's gauges (running, waiting, KV-cache usage ...) every
/// `every` until the deadline.
async fn sample_server(
    client: &Client,
    t0: Instant,
    deadline: Instant,
    every: Duration,
) -> Option<ServerSampling> {
    let mut samples = Vec::new();
    let mut gauges = Vec::new();
    let mut engine = None;
    // The first sample comes one interval in: at the window's very start the
    // requests are still on their way and the server would read as idle.
    // A sample counts only if its answer came back before the deadline: at
    // the deadline the runner cancels its requests, and a gauge read after
    // that (a busy machine delays the read) would count them as gone.
    for offset in sample_offsets(deadline.duration_since(t0), every) {
        tokio::time::sleep_until((t0 + offset).into()).await;
        let now = Instant::now();
        if let Ok(text) = client.get_text("/metrics").await {
            if Instant::now() >= deadline {
                break;
            }
            let parsed = metrics::parse_without_buckets(&text);
            let read = metrics::Gauges::read(&parsed);
            engine = engine.or_else(|| metrics::engine_of(&parsed));
            samples.push(MetricSample {
                t_s: now.duration_since(t0).as_secs_f64(),
                running: read.running,
                waiting: read.waiting,
                kv_cache_usage: read.kv_usage.map(|(v, _)| v),
            });
            gauges.push(read);
        }
    }
    if samples.is_empty() {
        return None;
    }
    let running: Vec<f64> = samples.iter().filter_map(|s| s.running).collect();
    Some(ServerSampling {
        samples: ServerSamples {
            avg_running: (!running.is_empty())
                .then(|| running.iter().sum::<f64>() / running.len() as f64),
            samples,
            generation_tokens_delta: None,
            ms_per_token: None,
            client_output_tokens: 0,
        },
        gauges,
        engine,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_split_by_a_pause_is_read_again() {
        let now = Instant::now();
        let mut readings = vec![(now, 10.0, 10.017), (now, 20.0, 20.00001)].into_iter();
        let (_, unix) = tightest_reading(|| readings.next().unwrap());
        assert!((unix - 20.000005).abs() < 1e-9, "{unix}");
        // Never a tight pair: the tightest of the hundred.
        let mut n = 0.0;
        let (_, unix) = tightest_reading(|| {
            n += 1.0;
            (now, n, n + if n == 7.0 { 0.001 } else { 0.01 })
        });
        assert!((unix - 7.0005).abs() < 1e-9, "{unix}");
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn samples_fall_strictly_inside_the_window() {
        // Never at the deadline, when the runner is cancelling its requests.
        assert_eq!(
            sample_offsets(ms(3000), ms(500)),
            [500, 1000, 1500, 2000, 2500].map(ms)
        );
        assert_eq!(sample_offsets(ms(1000), ms(300)), [300, 600, 900].map(ms));
    }

    #[test]
    fn a_window_shorter_than_the_interval_is_sampled_once_halfway() {
        assert_eq!(sample_offsets(ms(800), ms(1000)), [ms(400)]);
        assert_eq!(sample_offsets(ms(1000), ms(1000)), [ms(500)]);
    }
}
