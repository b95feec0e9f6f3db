//! HTTP to an OpenAI-compatible server: model list, tokenizer, metrics, and
//! streamed completions read chunk by chunk with their arrival times.

use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// How the server's `/tokenize` endpoint is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizeStyle {
    /// vLLM and SGLang: `{"model", "prompt"}` -> `{"count"}` or `{"tokens"}`.
    Prompt,
    /// llama.cpp: `{"content", "add_special": true}` -> `{"tokens"}`.
    Content,
    /// llama-cpp-python: `/extras/tokenize` with `{"input"}` -> `{"tokens"}`.
    Extras,
}

impl TokenizeStyle {
    /// The route, as probes and messages name it.
    pub fn path(self) -> &'static str {
        match self {
            TokenizeStyle::Prompt | TokenizeStyle::Content => "/tokenize",
            TokenizeStyle::Extras => "/extras/tokenize",
        }
    }
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// The same without connection reuse, for a retry that must not meet a
    /// connection the server has closed.
    fresh: reqwest::Client,
    /// Server root without a trailing slash or `/v1`.
    base: String,
    api_key: Option<String>,
}

/// One event of a streamed completion, with the time it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub at: Instant,
    /// The answer's text: `text` of a completion, `delta.content` of chat.
    pub text: String,
    /// Chat's reasoning text (`delta.reasoning_content` or `delta.reasoning`).
    pub reasoning: String,
    /// Cumulative completion tokens, when the server reports usage per chunk.
    pub completion_tokens: Option<u64>,
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the server found in its prefix cache, where it says so
    /// per request, and the field that said it.
    pub cached_tokens: Option<(u64, &'static str)>,
    pub finish_reason: Option<String>,
    /// The server's own time per output token for the whole request, sent
    /// with the last chunk (llama.cpp's `timings.predicted_per_token_ms`).
    pub server_ms_per_token: Option<f64>,
    /// Whether the event stands for one generated token when the stream
    /// carries no usage: a choice with text (or content) and no finish
    /// reason, its text empty or not (llama-cpp-python streams a byte token
    /// as ""), or a finishing one with text. A chat delta naming the role
    /// is none (vLLM's first chat event is `{"role", "content": ""}`).
    pub token_event: bool,
}

/// What a streamed completion's events are read into.
pub enum StreamEvent {
    Chunk(Chunk),
    /// `data: [DONE]`.
    Done,
}

/// Makes ring the process's TLS provider (reqwest is built without one, see
/// Cargo.toml); a provider installed before, ring or another, is kept.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Client {
    pub fn new(
        url: &str,
        api_key: Option<String>,
        read_timeout: Duration,
    ) -> anyhow::Result<Client> {
        let trimmed = url.trim_end_matches('/');
        let base = trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_string();
        reqwest::Url::parse(&base).with_context(|| format!("--url {url:?} is not a URL"))?;
        install_tls_provider();
        let builder = || {
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                // Without it, Nagle's algorithm and delayed ACKs can hold a
                // request's body back ~40 ms, which would land in every TTFT.
                .tcp_nodelay(true)
                .read_timeout(read_timeout)
        };
        let http = builder()
            .pool_max_idle_per_host(1024)
            // Servers drop idle keep-alive connections after ~5 s (uvicorn,
            // llama.cpp's httplib); forget them before that happens.
            .pool_idle_timeout(Duration::from_secs(3))
            .build()?;
        let fresh = builder().pool_max_idle_per_host(0).build()?;
        Ok(Client {
            http,
            fresh,
            base,
            api_key,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn request_on(
        &self,
        http: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        let mut r = http.request(method, format!("{}{}", self.base, path));
        if let Some(key) = &self.api_key {
            r = r.bearer_auth(key);
        }
        r
    }

    async fn check(response: reqwest::Response, what: &str) -> anyhow::Result<reqwest::Response> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        bail!(
            "{what}: HTTP {}: {}",
            status.as_u16(),
            body.chars().take(300).collect::<String>()
        )
    }

    /// Sends a request, once more if the first attempt failed before a
    /// response: a pooled keep-alive connection the server has just closed
    /// fails before the request reaches it (llama.cpp closes them), and a
    /// retry on a fresh connection is safe since nothing was processed.
    async fn send(
        &self,
        make: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> anyhow::Result<reqwest::Response> {
        match make(&self.http).send().await {
            Ok(r) => Ok(r),
            Err(e) if !e.is_timeout() => make(&self.fresh).send().await.map_err(|e2| {
                anyhow!(
                    "sending the request: {} (and once more: {})",
                    error_chain(&e),
                    error_chain(&e2)
                )
            }),
            Err(e) => bail!("sending the request: {}", error_chain(&e)),
        }
    }

    pub async fn get_json(&self, path: &str) -> anyhow::Result<Value> {
        let response = self
            .send(|http| self.request_on(http, reqwest::Method::GET, path))
            .await?;
        Ok(Self::check(response, path).await?.json().await?)
    }

    pub async fn get_text(&self, path: &str) -> anyhow::Result<String> {
        let response = self
            .send(|http| self.request_on(http, reqwest::Method::GET, path))
            .await?;
        Ok(Self::check(response, path).await?.text().await?)
    }

    async fn post_json(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let response = self
            .send(|http| {
                self.request_on(http, reqwest::Method::POST, path)
                    .json(body)
            })
            .await?;
        Ok(Self::check(response, path).await?.json().await?)
    }

    /// The HTTP status a non-streamed POST gets (the body is read and dropped).
    pub async fn post_status(&self, path: &str, body: &Value) -> anyhow::Result<u16> {
        let response = self
            .send(|http| {
                self.request_on(http, reqwest::Method::POST, path)
                    .json(body)
            })
            .await?;
        let status = response.status().as_u16();
        let _ = response.bytes().await;
        Ok(status)
    }

    /// Token count of `text` as the server's tokenizer sees a prompt.
    pub async fn count_tokens(
        &self,
        style: TokenizeStyle,
        model: &str,
        text: &str,
    ) -> anyhow::Result<u64> {
        let body = match style {
            TokenizeStyle::Prompt => json!({"model": model, "prompt": text}),
            TokenizeStyle::Content => json!({"content": text, "add_special": true}),
            TokenizeStyle::Extras => json!({"input": text}),
        };
        let v = self.post_json(style.path(), &body).await?;
        v.get("count")
            .and_then(Value::as_u64)
            .or_else(|| {
                v.get("tokens")
                    .and_then(Value::as_array)
                    .map(|t| t.len() as u64)
            })
            .ok_or_else(|| anyhow!("/tokenize answered without a token count: {v}"))
    }

    /// A request not streamed: its whole answer, or an error with the
    /// server's status and words.
    pub async fn complete(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.post_json(path, body).await
    }

    /// Sends a streamed completion (or chat completion) to `path` and calls
    /// `on_event` for every event as it arrives. Returns when the stream
    /// ends; an error is a failed request.
    pub async fn stream_completion(
        &self,
        path: &str,
        body: &Value,
        mut on_event: impl FnMut(StreamEvent),
    ) -> anyhow::Result<()> {
        let response = self
            .send(|http| {
                self.request_on(http, reqwest::Method::POST, path)
                    .json(body)
            })
            .await?;
        let response = Self::check(response, path).await?;
        let mut events = response.bytes_stream().eventsource();
        let mut done = false;
        let mut received = 0u64;
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| anyhow!("broken stream after {received} events: {e}"))?;
            received += 1;
            let at = Instant::now();
            if event.data.trim() == "[DONE]" {
                on_event(StreamEvent::Done);
                done = true;
                // Read the body to its end so the connection goes back to the
                // pool: a new connection per request would add TCP setup to TTFT.
                let _ = tokio::time::timeout(Duration::from_millis(500), async {
                    while events.next().await.is_some() {}
                })
                .await;
                break;
            }
            if event.data.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&event.data).map_err(|e| {
                anyhow!(
                    "a stream event is not JSON ({e}): {}",
                    event.data.chars().take(200).collect::<String>()
                )
            })?;
            if event.event == "error" || v.get("error").is_some() {
                bail!(
                    "the server ended the stream with an error: {}",
                    v.get("error").unwrap_or(&v)
                );
            }
            let choice = v.get("choices").and_then(|c| c.get(0));
            let delta = choice.and_then(|c| c.get("delta"));
            let text_of = |v: Option<&Value>, key: &str| {
                v.and_then(|v| v.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let usage = v.get("usage").filter(|u| !u.is_null());
            let finish_reason = choice
                .and_then(|c| c.get("finish_reason"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let has_text = |v: Option<&Value>, keys: &[&str]| {
                v.is_some_and(|v| keys.iter().any(|k| v.get(*k).is_some_and(Value::is_string)))
            };
            let text = text_of(choice, "text") + &text_of(delta, "content");
            let reasoning = text_of(delta, "reasoning_content") + &text_of(delta, "reasoning");
            let carries_text = has_text(choice, &["text"])
                || has_text(delta, &["content", "reasoning_content", "reasoning"]);
            let names_role = delta.is_some_and(|d| d.get("role").is_some());
            let token_event = carries_text
                && !names_role
                && (finish_reason.is_none() || !text.is_empty() || !reasoning.is_empty());
            on_event(StreamEvent::Chunk(Chunk {
                at,
                text,
                reasoning,
                token_event,
                completion_tokens: usage
                    .and_then(|u| u.get("completion_tokens"))
                    .and_then(Value::as_u64),
                prompt_tokens: usage
                    .and_then(|u| u.get("prompt_tokens"))
                    .and_then(Value::as_u64),
                cached_tokens: cached_tokens(&v, usage),
                finish_reason,
                server_ms_per_token: v
                    .get("timings")
                    .and_then(|t| t.get("predicted_per_token_ms"))
                    .and_then(Value::as_f64),
            }));
        }
        if !done {
            if received == 0 {
                bail!("{EMPTY_STREAM}");
            }
            bail!("broken stream: the connection closed before [DONE], after {received} events");
        }
        Ok(())
    }
}

/// Where servers say per request how much of the prompt their prefix cache
/// held: OpenAI's `usage.prompt_tokens_details.cached_tokens` (vLLM with
/// `--enable-prompt-tokens-details`, SGLang), else llama.cpp's
/// `timings.cache_n` (prompt tokens reused from its slot).
pub const CACHED_TOKENS_USAGE: &str = "usage.prompt_tokens_details.cached_tokens";
pub const CACHED_TOKENS_LLAMA_CPP: &str = "timings.cache_n";

fn cached_tokens(event: &Value, usage: Option<&Value>) -> Option<(u64, &'static str)> {
    let from_usage = usage
        .and_then(|u| u.get("prompt_tokens_details"))
        .and_then(|d| d.get("cached_tokens"))
        .and_then(Value::as_u64)
        .map(|n| (n, CACHED_TOKENS_USAGE));
    from_usage.or_else(|| {
        event
            .get("timings")
            .and_then(|t| t.get("cache_n"))
            .and_then(Value::as_u64)
            .map(|n| (n, CACHED_TOKENS_LLAMA_CPP))
    })
}

/// What a stream that ends before its first event is called (a refused
/// request, for llama-cpp-python); the runner then asks again unstreamed
/// for the server's own words.
pub const EMPTY_STREAM: &str =
    "the server answered HTTP 200 and ended the stream without sending any event";

/// An error with its causes, for a message that says what really happened.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
