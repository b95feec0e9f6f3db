//! HTTP to an OpenAI-compatible server: model list, tokenizer, metrics, and
//! streamed completions read chunk by chunk with their arrival times.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::http1::Http1;
use super::sse::{SseEvent, SseReader};

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
    /// Streamed completions to a plain `http://` server without a proxy go
    /// over this lean transport; the rest through reqwest.
    plain: Option<Arc<Http1>>,
}

/// One event of a streamed completion, with the time it arrived. Its texts
/// borrow from the event where JSON escapes allow (no copy per event).
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk<'a> {
    pub at: Instant,
    /// The answer's text: `text` of a completion, `delta.content` of chat.
    pub text: Cow<'a, str>,
    /// Chat's reasoning text (`delta.reasoning_content` or `delta.reasoning`).
    pub reasoning: Cow<'a, str>,
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
pub enum StreamEvent<'a> {
    Chunk(Chunk<'a>),
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
            plain: Http1::for_base(&base, read_timeout).map(Arc::new),
            base,
            api_key,
        })
    }

    /// The same client streaming every completion through reqwest, as it
    /// does for https or behind a proxy: the tests hold the two transports
    /// to the same events.
    pub fn streaming_through_reqwest(mut self) -> Client {
        self.plain = None;
        self
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
        Err(status_error(what, status.as_u16(), &body))
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
        on_event: impl FnMut(StreamEvent<'_>),
    ) -> anyhow::Result<()> {
        let mut events = EventCount::new(on_event);
        let outcome = match &self.plain {
            Some(plain) => self.stream_plain(plain, path, body, &mut events).await,
            None => self.stream_reqwest(path, body, &mut events).await,
        };
        outcome?;
        if !events.done {
            if events.received == 0 {
                bail!("{EMPTY_STREAM}");
            }
            bail!(
                "broken stream: the connection closed before [DONE], after {} events",
                events.received
            );
        }
        Ok(())
    }

    /// A stream over plain HTTP/1.1 ([`Http1`]).
    async fn stream_plain<F: FnMut(StreamEvent<'_>)>(
        &self,
        plain: &Http1,
        path: &str,
        body: &Value,
        events: &mut EventCount<F>,
    ) -> anyhow::Result<()> {
        let body = serde_json::to_vec(body)?;
        let mut response = plain.post(path, self.api_key.as_deref(), &body).await?;
        if !(200..300).contains(&response.status) {
            let status = response.status;
            return Err(status_error(path, status, &response.text().await));
        }
        let mut sse = SseReader::default();
        loop {
            let read = response
                .read(&mut sse)
                .await
                .map_err(|e| anyhow!("broken stream after {} events: {e:#}", events.received))?;
            let Some(at) = read else {
                return events.read_ended(&mut sse).map(drop);
            };
            if events.read_all(&mut sse, at)? {
                response.finish(DRAIN_AFTER_DONE).await;
                return Ok(());
            }
        }
    }

    /// A stream through reqwest (https, or a proxy).
    async fn stream_reqwest<F: FnMut(StreamEvent<'_>)>(
        &self,
        path: &str,
        body: &Value,
        events: &mut EventCount<F>,
    ) -> anyhow::Result<()> {
        let response = self
            .send(|http| {
                self.request_on(http, reqwest::Method::POST, path)
                    .json(body)
            })
            .await?;
        let response = Self::check(response, path).await?;
        let mut bytes = response.bytes_stream();
        let mut sse = SseReader::default();
        while let Some(piece) = bytes.next().await {
            let piece = piece
                .map_err(|e| anyhow!("broken stream after {} events: {e}", events.received))?;
            sse.feed(&piece);
            if events.read_all(&mut sse, Instant::now())? {
                let _ = tokio::time::timeout(DRAIN_AFTER_DONE, async {
                    while bytes.next().await.is_some() {}
                })
                .await;
                return Ok(());
            }
        }
        events.read_ended(&mut sse).map(drop)
    }
}

/// How long the rest of a body is read after `[DONE]`, so that its
/// connection goes back to the pool: a new connection per request would
/// add TCP setup to TTFT.
const DRAIN_AFTER_DONE: Duration = Duration::from_millis(500);

/// A stream's events read into [`StreamEvent`]s for its caller, counted.
struct EventCount<F> {
    on_event: F,
    received: u64,
    done: bool,
}

impl<F: FnMut(StreamEvent<'_>)> EventCount<F> {
    fn new(on_event: F) -> Self {
        EventCount {
            on_event,
            received: 0,
            done: false,
        }
    }

    /// Reads the events `sse` holds, which arrived `at`; `true` once one
    /// is `[DONE]` (the rest are left unread).
    fn read_all(&mut self, sse: &mut SseReader, at: Instant) -> anyhow::Result<bool> {
        while let Some(event) = sse.next_event() {
            if self.read(&event, at)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// [`EventCount::read_all`] once the stream has no more bytes.
    fn read_ended(&mut self, sse: &mut SseReader) -> anyhow::Result<bool> {
        sse.end();
        self.read_all(sse, Instant::now())
    }

    /// Reads one event that arrived `at`; `true` once it is `[DONE]`.
    fn read(&mut self, event: &SseEvent<'_>, at: Instant) -> anyhow::Result<bool> {
        self.received += 1;
        let data = event.data.trim_ascii();
        if data == b"[DONE]" {
            (self.on_event)(StreamEvent::Done);
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let is_error = event.event == b"error";
        // The event read into the fields used, borrowing its strings: no
        // JSON tree and no copy of its text per event.
        let parsed: Result<WireEvent, _> = serde_json::from_slice(data);
        let wire = match parsed {
            Ok(w) if !is_error && w.error.is_none() => w,
            _ => {
                let shown = || {
                    String::from_utf8_lossy(data)
                        .chars()
                        .take(200)
                        .collect::<String>()
                };
                let v: Value = serde_json::from_slice(data)
                    .map_err(|e| anyhow!("a stream event is not JSON ({e}): {}", shown()))?;
                if is_error || v.get("error").is_some() {
                    bail!(
                        "the server ended the stream with an error: {}",
                        v.get("error").unwrap_or(&v)
                    );
                }
                bail!("a stream event of an unexpected shape: {}", shown());
            }
        };
        let (text, delta, finish_reason) = match wire.choice {
            Some(c) => (c.text, c.delta, c.finish_reason),
            None => (None, None, None),
        };
        let delta = delta.unwrap_or_default();
        let names_role = delta.role.is_some();
        let carries_text = text.is_some()
            || delta.content.is_some()
            || delta.reasoning_content.is_some()
            || delta.reasoning.is_some();
        let text = join(text, delta.content);
        let reasoning = join(delta.reasoning_content, delta.reasoning);
        let finish_reason = finish_reason.map(Cow::into_owned);
        let token_event = carries_text
            && !names_role
            && (finish_reason.is_none() || !text.is_empty() || !reasoning.is_empty());
        let usage = wire.usage;
        (self.on_event)(StreamEvent::Chunk(Chunk {
            at,
            text,
            reasoning,
            token_event,
            completion_tokens: usage.as_ref().and_then(|u| u.completion_tokens),
            prompt_tokens: usage.as_ref().and_then(|u| u.prompt_tokens),
            cached_tokens: usage
                .as_ref()
                .and_then(|u| u.prompt_tokens_details.as_ref()?.cached_tokens)
                .map(|n| (n, CACHED_TOKENS_USAGE))
                .or_else(|| {
                    let n = wire.timings.as_ref()?.cache_n?;
                    Some((n, CACHED_TOKENS_LLAMA_CPP))
                }),
            finish_reason,
            server_ms_per_token: wire.timings.and_then(|t| t.predicted_per_token_ms),
        }));
        Ok(false)
    }
}

/// A response's error status as the run reports it, with the server's
/// words (the first 300 characters).
fn status_error(what: &str, status: u16, body: &str) -> anyhow::Error {
    anyhow!(
        "{what}: HTTP {status}: {}",
        body.chars().take(300).collect::<String>()
    )
}

/// Where servers say per request how much of the prompt their prefix cache
/// held: OpenAI's `usage.prompt_tokens_details.cached_tokens` (vLLM with
/// `--enable-prompt-tokens-details`, SGLang), else llama.cpp's
/// `timings.cache_n` (prompt tokens reused from its slot).
pub const CACHED_TOKENS_USAGE: &str = "usage.prompt_tokens_details.cached_tokens";
pub const CACHED_TOKENS_LLAMA_CPP: &str = "timings.cache_n";

/// Two optional texts of one event as one (most events carry one or none).
fn join<'a>(a: Option<Cow<'a, str>>, b: Option<Cow<'a, str>>) -> Cow<'a, str> {
    match (a, b) {
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => Cow::Borrowed(""),
        (Some(a), Some(b)) => Cow::Owned(a.into_owned() + &b),
    }
}

/// The fields of a streamed event that sitegen reads (OpenAI's completion
/// and chat chunks, with vLLM's, SGLang's and llama.cpp's additions); the
/// rest of an event is skipped unread. Read as `Value::as_str` and
/// `as_u64` read them: a field of another type (or `null`) is absent, and
/// a key is "there" for `role` whatever its value.
#[derive(serde::Deserialize)]
struct WireEvent<'a> {
    /// The first choice (a stream's events carry one); no `Vec` per event.
    #[serde(
        borrow,
        default,
        rename = "choices",
        deserialize_with = "lenient::first"
    )]
    choice: Option<WireChoice<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    timings: Option<WireTimings>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct WireChoice<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    delta: Option<WireDelta<'a>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize, Default)]
struct WireDelta<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::present")]
    role: Option<()>,
}

#[derive(serde::Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "lenient::count")]
    prompt_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<WireDetails>,
}

#[derive(serde::Deserialize)]
struct WireDetails {
    #[serde(default, deserialize_with = "lenient::count")]
    cached_tokens: Option<u64>,
}

#[derive(serde::Deserialize)]
struct WireTimings {
    #[serde(default, deserialize_with = "lenient::count")]
    cache_n: Option<u64>,
    #[serde(default, deserialize_with = "lenient::number")]
    predicted_per_token_ms: Option<f64>,
}

/// Field readers as forgiving as `Value`'s accessors, without building one.
mod lenient {
    use std::borrow::Cow;

    use serde::Deserialize;
    use serde::de::{Deserializer, IgnoredAny};
    use serde_json::Value;

    /// A string, borrowed where it has no escapes; any other value: none.
    pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(Text)
    }

    /// The first element of an array, the rest skipped; `null`: none.
    pub fn first<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        struct First<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for First<T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array or null")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let first = a.next_element()?;
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(first)
            }
        }
        d.deserialize_any(First(std::marker::PhantomData))
    }

    /// Whether the key is there, whatever its value (`null` too).
    pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Some(()))
    }

    /// `Value::as_u64` of the field (numbers only; no heap either way).
    pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(Option::<Value>::deserialize(d)?.and_then(|v| v.as_u64()))
    }

    /// `Value::as_f64` of the field.
    pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Option::<Value>::deserialize(d)?.and_then(|v| v.as_f64()))
    }
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
