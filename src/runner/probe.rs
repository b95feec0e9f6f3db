//! What the runner learns about a server before measuring it.

use std::time::Instant;

use anyhow::Context;
use serde_json::Value;

use super::analysis::Finish;
use super::client::{Client, TokenizeStyle};
use super::metrics;
use super::window::{RequestSettings, completion_body, record_request};
use crate::model::ApiEndpoint;

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
    pub kv_capacity: Option<(u64, String)>,
    pub has_metrics: bool,
    /// llama.cpp's parallel slots.
    pub slots: Option<u32>,
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
            info.kv_capacity = Some((kv, "max_total_num_tokens of /get_server_info".into()));
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
                    total,
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
    if let Some(v) = &info.engine_version {
        info.report.push(format!("found engine version {v}"));
    }

    // llama.cpp answers the vLLM form with an empty token list, so a style
    // counts only if it finds the tokens of a text that surely has some.
    let styles = if info.engine.as_deref() == Some("llama.cpp") {
        [TokenizeStyle::Content, TokenizeStyle::Prompt]
    } else {
        [TokenizeStyle::Prompt, TokenizeStyle::Content]
    };
    for style in styles {
        let count = client
            .count_tokens(style, &info.served_model, "Hello world, once more")
            .await;
        if count.is_ok_and(|n| n >= 3) {
            info.tokenize = Some(style);
            info.report
                .push(format!("found /tokenize ({style:?} style)"));
            break;
        }
    }
    if info.tokenize.is_none() {
        info.report
            .push("no /tokenize: prompt lengths are calibrated from usage.prompt_tokens".into());
    }
    match &info.kv_capacity {
        Some((kv, from)) => info.report.push(format!("KV cache: {kv} tokens ({from})")),
        None => info.report.push(
            "KV cache size not found: no cell is skipped as Over capacity (use --kv-capacity)"
                .into(),
        ),
    }
    Ok(info)
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
/// count of a chat request less its tokenizer's count of the text alone
/// (without `/tokenize`: the count of a one-character message less one).
pub async fn chat_template_tokens(
    client: &Client,
    settings: &RequestSettings,
    tokenize: Option<TokenizeStyle>,
) -> anyhow::Result<u64> {
    let counted = |text: String| {
        let body = completion_body(settings, &text, 1);
        async move {
            let r = record_request(client, settings, &body, 0, Instant::now(), None, None).await;
            if let Some(Finish::Error(e)) = &r.finish {
                anyhow::bail!("a chat request to size prompts failed: {e}");
            }
            r.prompt_tokens.context(
                "the server reported no usage.prompt_tokens for a chat request: cannot size chat prompts",
            )
        }
    };
    Ok(match tokenize {
        Some(style) => {
            let sample = super::prompt::words(0, 0, 2000).join(" ");
            let alone = client.count_tokens(style, &settings.model, &sample).await?;
            counted(sample).await?.saturating_sub(alone)
        }
        None => counted("a".to_string()).await?.saturating_sub(1),
    })
}
