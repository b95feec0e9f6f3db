//! What the runner learns about a server before measuring it.

use std::time::Instant;

use anyhow::Context;
use serde_json::Value;

use super::analysis::Finish;
use super::client::{Client, TokenizeStyle};
use super::metrics;
use super::window::{RequestSettings, completion_body, record_request, unstreamed_prompt_tokens};
use crate::model::{ApiEndpoint, TokenCount};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerInfo {
    pub served_model: String,
    /// Longest prompt + output one request may have.
    pub max_model_len: Option<u64>,
    pub tokenize: Option<TokenizeStyle>,
    /// "vllm", "sglang" or "llama.cpp", when recognised.
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    /// KV cache capacity in tokens, with where the figure came from.
    pub kv_capacity: Option<(super::plan::KvCache, String)>,
    pub has_metrics: bool,
    /// llama.cpp's parallel slots.
    pub slots: Option<u32>,
    /// A gateway in front of the engine (LiteLLM), named by its API: the
    /// engine behind it is not known from here.
    pub gateway: Option<String>,
    /// One line per thing looked for: what was found, what was not.
    pub report: Vec<String>,
}

fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_u64()
}

fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))?
        .as_str()
        .map(str::to_string)
}

/// Asks the server what it can tell: `/v1/models`, `/metrics`, `/version`,
/// SGLang's `/get_server_info`, llama.cpp's `/props`, and `/tokenize`.
pub async fn probe(client: &Client, model: Option<&str>) -> anyhow::Result<ServerInfo> {
    let mut info = ServerInfo::default();
    let models = client
        .get_json("/v1/models")
        .await
        .map_err(|e| anyhow::anyhow!("cannot list models at {}/v1/models: {e:#}", client.base()))?;
    let list = models
        .get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let chosen = match model {
        Some(m) => list
            .iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(m))
            .cloned()
            .ok_or_else(|| {
                let ids: Vec<&str> = list
                    .iter()
                    .filter_map(|e| e.get("id").and_then(Value::as_str))
                    .collect();
                anyhow::anyhow!("the server does not serve --model {m:?}; it serves {ids:?}")
            })?,
        None => list
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("/v1/models lists no model"))?,
    };
    info.served_model = str_at(&chosen, &["id"]).unwrap_or_default();
    info.report
        .push(format!("found model {:?} in /v1/models", info.served_model));
    if let Some(len) = u64_at(&chosen, &["max_model_len"]) {
        info.max_model_len = Some(len);
        info.report
            .push(format!("found max_model_len {len} in /v1/models"));
    }

    match client.get_text("/metrics").await {
        Ok(text) => {
            let samples = metrics::parse(&text);
            info.has_metrics = true;
            let has = |prefix: &str| samples.iter().any(|s| s.name.starts_with(prefix));
            info.engine = if has("vllm:") {
                Some("vllm".into())
            } else if has("sglang:") {
                Some("sglang".into())
            } else if has("llamacpp:") {
                Some("llama.cpp".into())
            } else {
                None
            };
            if let Some(kv) = metrics::vllm_kv_capacity(&samples) {
                info.kv_capacity = Some((kv, "vllm:cache_config_info".into()));
            }
            info.report
                .push(format!("found /metrics ({} samples)", samples.len()));
        }
        Err(e) => info.report.push(format!("no /metrics: {e:#}")),
    }

    if let Ok(v) = client.get_json("/get_server_info").await {
        info.engine.get_or_insert_with(|| "sglang".into());
        if let Some(kv) = u64_at(&v, &["max_total_num_tokens"]) {
            info.kv_capacity = Some((
                super::plan::KvCache::tokens(kv),
                "max_total_num_tokens of /get_server_info".into(),
            ));
        }
        if info.max_model_len.is_none() {
            info.max_model_len = u64_at(&v, &["context_length"]);
        }
        info.engine_version = str_at(&v, &["version"]);
        info.report.push("found SGLang's /get_server_info".into());
    }

    if let Ok(v) = client.get_json("/props").await {
        info.engine.get_or_insert_with(|| "llama.cpp".into());
        let slot_ctx = u64_at(&v, &["default_generation_settings", "n_ctx"]);
        let slots = u64_at(&v, &["total_slots"]).map(|s| s as u32);
        info.slots = slots;
        if let Some(ctx) = slot_ctx {
            // Each slot holds its own share of the context: one request can use one slot.
            info.max_model_len = Some(ctx);
            if info.kv_capacity.is_none() {
                let total = ctx * u64::from(slots.unwrap_or(1));
                info.kv_capacity = Some((
                    super::plan::KvCache::tokens(total),
                    format!(
                        "llama.cpp /props: {} slots × n_ctx {}",
                        slots.unwrap_or(1),
                        ctx
                    ),
                ));
            }
        }
        info.engine_version = info
            .engine_version
            .take()
            .or_else(|| str_at(&v, &["build_info"]));
        info.report.push(format!(
            "found llama.cpp's /props (slots: {}, n_ctx per slot: {})",
            slots.map_or("?".into(), |s| s.to_string()),
            slot_ctx.map_or("?".into(), |c| c.to_string())
        ));
    }

    if info.engine_version.is_none()
        && let Ok(v) = client.get_json("/version").await
    {
        info.engine_version = str_at(&v, &["version"]);
    }
    // FastAPI servers name themselves in their OpenAPI document.
    if let Ok(v) = client.get_json("/openapi.json").await
        && let Some(title) = str_at(&v, &["info", "title"])
    {
        let version = str_at(&v, &["info", "version"]);
        match server_from_title(&title) {
            Some(ServerKind::Engine(name)) => {
                // The server's own name wins over a guess from metric names.
                info.engine = Some(name.to_string());
                if info.engine_version.is_none() {
                    info.engine_version = version;
                }
                info.report
                    .push(format!("found /openapi.json: {title:?}, an engine: {name}"));
            }
            Some(ServerKind::Gateway(name)) => {
                let named = match &version {
                    Some(v) => format!("{name} {v}"),
                    None => name.to_string(),
                };
                info.report.push(format!(
                    "found /openapi.json: {title:?}, a gateway ({named}): the engine behind it is not known from here (pass --engine)"
                ));
                info.gateway = Some(named);
            }
            None => {}
        }
    }
    if let Some(v) = &info.engine_version {
        info.report.push(format!("found engine version {v}"));
    }

    // llama.cpp answers the vLLM form with an empty token list, so a style
    // counts only if it finds the tokens of a text that surely has some.
    let styles = if info.engine.as_deref() == Some("llama.cpp") {
        [
            TokenizeStyle::Content,
            TokenizeStyle::Prompt,
            TokenizeStyle::Extras,
        ]
    } else {
        [
            TokenizeStyle::Prompt,
            TokenizeStyle::Content,
            TokenizeStyle::Extras,
        ]
    };
    for style in styles {
        let count = client
            .count_tokens(style, &info.served_model, "Hello world, once more")
            .await;
        if count.is_ok_and(|n| n >= 3) {
            info.tokenize = Some(style);
            info.report
                .push(format!("found {} ({style:?} style)", style.path()));
            break;
        }
    }
    if info.tokenize.is_none() {
        info.report.push(
            "no tokenizer (/tokenize, /extras/tokenize): prompt lengths are calibrated from the usage.prompt_tokens of requests not streamed".into(),
        );
    }
    match &info.kv_capacity {
        Some((kv, from)) => info.report.push(match kv.block {
            Some(block) => format!(
                "KV cache: {} tokens in blocks of {} ({from})",
                kv.tokens, block
            ),
            None => format!("KV cache: {} tokens ({from})", kv.tokens),
        }),
        None => info.report.push(
            "KV cache size not found: no cell is skipped as Over capacity (use --kv-capacity)"
                .into(),
        ),
    }
    Ok(info)
}

/// What an OpenAPI title says a server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerKind {
    Engine(&'static str),
    Gateway(&'static str),
}

/// Servers that name themselves in `/openapi.json` (vLLM and SGLang keep
/// FastAPI's default title, which says nothing).
pub(crate) fn server_from_title(title: &str) -> Option<ServerKind> {
    let t = title.to_lowercase();
    if t.contains("llama.cpp python") {
        Some(ServerKind::Engine("llama-cpp-python"))
    } else if t.contains("litellm") {
        Some(ServerKind::Gateway("LiteLLM"))
    } else {
        None
    }
}

/// The context window a server's refusal names: "maximum context length
/// is 4096 tokens" (vLLM, OpenAI, llama-cpp-python, LiteLLM passing either
/// on), "exceed context window of 4096" (llama-cpp-python's own words),
/// "context length (4096 tokens)" (SGLang), `"n_ctx": 4096` (llama.cpp).
pub(crate) fn context_window_in(message: &str) -> Option<u64> {
    static PATTERNS: std::sync::LazyLock<Vec<regex_lite::Regex>> = std::sync::LazyLock::new(|| {
        [
            r"maximum context length is (\d+)",
            r"exceeds? (?:the )?context window of (\d+)",
            r"context length \((\d+) tokens\)",
            r#""n_ctx"\s*:\s*(\d+)"#,
        ]
        .iter()
        .map(|p| regex_lite::Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    PATTERNS
        .iter()
        .find_map(|re| re.captures(message)?.get(1)?.as_str().parse().ok())
}

/// The API to use and why: the one asked for; else `/v1/completions` when
/// the server offers it (one token is asked for), else chat.
pub async fn choose_endpoint(
    client: &Client,
    model: &str,
    asked: Option<ApiEndpoint>,
) -> anyhow::Result<(ApiEndpoint, String)> {
    if let Some(e) = asked {
        return Ok((e, format!("{} (--endpoint)", e.path())));
    }
    let body = serde_json::json!({"model": model, "prompt": "Hello", "max_tokens": 1});
    let status = client.post_status("/v1/completions", &body).await?;
    // Only "no such route" means chat; any other answer (a failure
    // included) shows the route is there, and failures become Error cells.
    Ok(match status {
        404 | 405 | 501 => (
            ApiEndpoint::Chat,
            format!("/v1/chat/completions (the server has no /v1/completions: HTTP {status})"),
        ),
        _ => (
            ApiEndpoint::Completions,
            format!(
                "/v1/completions (the server answers it: HTTP {status}; --endpoint chat to measure chat)"
            ),
        ),
    })
}

/// Prompt tokens a chat template adds to one user message: the server's
/// count of a chat request (not streamed: every server sends its usage)
/// less its tokenizer's count of the text alone (without a tokenizer: the
/// count of a one-character message less one).
pub async fn chat_template_tokens(
    client: &Client,
    settings: &RequestSettings,
    tokenize: Option<TokenizeStyle>,
) -> anyhow::Result<u64> {
    let counted = |text: String| async move {
        unstreamed_prompt_tokens(client, settings, &text)
            .await
            .context("a chat request to size prompts")
    };
    Ok(match tokenize {
        Some(style) => {
            let sample = super::prompt::words(probe_text(0), 2000).join(" ");
            let alone = client.count_tokens(style, &settings.model, &sample).await?;
            counted(sample).await?.saturating_sub(alone)
        }
        None => counted("a".to_string()).await?.saturating_sub(1),
    })
}

/// Tokens the counting check asks for.
const CHECK_TOKENS: u32 = 16;

/// How the run counts output tokens, and what showed it: the stream's
/// usage when it gives the tokens a request asked for (with `min_tokens`
/// equal to `max_tokens`), else one token per streamed event when the
/// events match them. A stream whose usage disagrees with its request (a
/// gateway's estimate) is not trusted. Fails when neither counts.
pub async fn token_counting(
    client: &Client,
    settings: &RequestSettings,
) -> anyhow::Result<(TokenCount, String)> {
    let prompt = super::prompt::words(probe_text(0), 120).join(" ");
    let by_usage = RequestSettings {
        token_count: TokenCount::StreamUsage,
        ..settings.clone()
    };
    let by_events = RequestSettings {
        token_count: TokenCount::OnePerEvent,
        ..settings.clone()
    };
    let body = completion_body(settings, &prompt, CHECK_TOKENS);
    let send = |s: RequestSettings| {
        let body = body.clone();
        async move {
            let r = record_request(client, &s, &body, 0, Instant::now(), None, None).await;
            match &r.finish {
                Some(Finish::Error(e)) => Err(e.clone()),
                _ => Ok(r),
            }
        }
    };
    let asked = u64::from(CHECK_TOKENS);
    // A server that fails the check fails the cells too, which say why;
    // the run goes on, reading usage where the stream has it.
    let unchecked = |e: String| {
        Ok((
            TokenCount::StreamUsage,
            format!(
                "a request of {asked} tokens to check how tokens are counted failed ({e}); usage in the stream is read where it is sent"
            ),
        ))
    };
    let usage = match send(by_usage).await {
        Ok(r) => r,
        Err(e) => return unchecked(e),
    };
    if usage.stream_usage && usage.tokens() == asked {
        return Ok((
            TokenCount::StreamUsage,
            format!(
                "tokens counted from the stream's usage (a {asked}-token request reported {asked})"
            ),
        ));
    }
    let said = if usage.stream_usage {
        format!(
            "the stream's usage said {} tokens for {asked} asked, so it is not trusted",
            usage.tokens()
        )
    } else {
        "the stream carries no usage".to_string()
    };
    // llama-cpp-python sometimes generates past max_tokens (it holds a
    // token that may start a multi-byte character and checks the limit only
    // after it: 8 of 150 requests of 16 tokens made 17 to 19, by its own
    // usage), so one try that streams more events than asked is no proof
    // that events are not tokens; a server whose events hold several tokens
    // never streams exactly the number asked.
    let mut streamed = Vec::new();
    for _ in 0..EVENT_CHECK_TRIES {
        let events = match send(by_events.clone()).await {
            Ok(r) => r,
            Err(e) => return unchecked(e),
        };
        let stopped = matches!(&events.finish, Some(Finish::Done(r)) if r == "stop");
        streamed.push(events.tokens());
        if events.tokens() == asked || (stopped && events.tokens() < asked) {
            let tries = match streamed.len() {
                1 => String::new(),
                n => format!(
                    "; on try {n}, the tries before streamed {}",
                    crate::model::format::and_list(&streamed[..n - 1])
                ),
            };
            return Ok((
                TokenCount::OnePerEvent,
                format!(
                    "{said}: tokens counted one per streamed event (a {asked}-token request streamed {} events{}{tries})",
                    events.tokens(),
                    if stopped {
                        ", stopping at end-of-sequence"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    anyhow::bail!(
        "{said}, and {EVENT_CHECK_TRIES} requests of {asked} tokens streamed {} token events: sitegen cannot count this server's output tokens",
        crate::model::format::and_list(&streamed)
    )
}

/// Requests of `CHECK_TOKENS` tried before events are judged not tokens.
const EVENT_CHECK_TRIES: usize = 4;

/// Prompt lengths tried, doubling, to find a context window no route says.
const CONTEXT_PROBES: [u64; 7] = [2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072];

/// The context window from the server's own refusal: prompts of about 2K,
/// 4K ... 128K tokens, not streamed, until one is refused with words that
/// name the window. One line per prompt tried goes into `report`.
pub async fn context_window_from_refusal(
    client: &Client,
    settings: &RequestSettings,
    tokenize: Option<TokenizeStyle>,
    report: &mut Vec<String>,
) -> anyhow::Result<Option<u64>> {
    let sample = super::prompt::words(probe_text(1), 4000).join(" ");
    let sample_tokens = match tokenize {
        Some(style) => client.count_tokens(style, &settings.model, &sample).await?,
        None => unstreamed_prompt_tokens(client, settings, &sample).await?,
    };
    let chars_per_token = sample.len() as f64 / sample_tokens.max(1) as f64;
    for tokens in CONTEXT_PROBES {
        let chars = (tokens as f64 * chars_per_token * 1.05) as usize;
        let text = super::prompt::words(probe_text(tokens), chars).join(" ");
        match unstreamed_prompt_tokens(client, settings, &text).await {
            Ok(n) => report.push(format!("a prompt of {n} tokens fits the context window")),
            Err(e) => {
                let words = format!("{e:#}");
                return Ok(match context_window_in(&words) {
                    Some(window) => {
                        report.push(format!(
                            "found max_model_len {window} in the server's refusal of a prompt of about {tokens} tokens"
                        ));
                        Some(window)
                    }
                    None => {
                        report.push(format!(
                            "a prompt of about {tokens} tokens was refused without naming the context window: {words}"
                        ));
                        None
                    }
                });
            }
        }
    }
    Ok(None)
}

/// The probe's texts: the same in every run (salt 0), and never a run's
/// own, whose salts are fresh.
fn probe_text(context: u64) -> super::prompt::TextId {
    super::prompt::TextId {
        salt: 0,
        stream: 0,
        context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_window_is_read_from_each_server_s_refusal() {
        let cases = [
            // vLLM, and LiteLLM passing it on.
            (
                "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens",
                Some(65_536),
            ),
            (
                "litellm.ContextWindowExceededError: litellm.BadRequestError: OpenAIException - Error code: 400 - This model's maximum context length is 4096 tokens, however you requested 4164 tokens",
                Some(4096),
            ),
            // llama-cpp-python's own words, and SGLang's.
            (
                "ValueError: Requested tokens (4100) exceed context window of 4096",
                Some(4096),
            ),
            (
                "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
                Some(4096),
            ),
            // llama.cpp's JSON error.
            (
                r#"{"error":{"code":400,"message":"the request exceeds the available context size","n_prompt_tokens":5000,"n_ctx":2048}}"#,
                Some(2048),
            ),
            ("HTTP 500: engine core died", None),
        ];
        for (words, window) in cases {
            assert_eq!(context_window_in(words), window, "{words}");
        }
    }

    #[test]
    fn servers_named_in_their_openapi_title() {
        assert_eq!(
            server_from_title("🦙 llama.cpp Python API"),
            Some(ServerKind::Engine("llama-cpp-python"))
        );
        assert_eq!(
            server_from_title("LiteLLM API"),
            Some(ServerKind::Gateway("LiteLLM"))
        );
        assert_eq!(server_from_title("FastAPI"), None);
    }
}
