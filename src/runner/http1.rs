//! Streamed POSTs over plain HTTP/1.1, read by the task that waits for
//! them: one socket read, one clock reading and no allocation per batch of
//! events. Through reqwest (hyper) every body frame went from a connection
//! task to the reading task over a channel, two task wake-ups and several
//! allocations per token, most of the client's cost at 128 streams
//! (docs/development.md, "Benchmarks").
//!
//! Only a streamed completion to an `http://` server without a proxy takes
//! this path; https, proxies and every other request stay with reqwest.
//! Responses are parsed by httparse (hyper's own parser), chunk sizes by
//! its `parse_chunk_size`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::sse::SseReader;

/// Servers drop idle keep-alive connections after ~5 s (uvicorn,
/// llama.cpp's httplib); a connection idle longer than this is not reused.
const POOL_IDLE: Duration = Duration::from_secs(3);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A server reached over plain HTTP/1.1, with its idle connections.
pub struct Http1 {
    /// `host:port`, to connect to.
    address: String,
    /// The `Host` header.
    host: String,
    /// The base URL's path, without a trailing slash, put before each path.
    prefix: String,
    read_timeout: Duration,
    idle: Mutex<Vec<(TcpStream, Instant)>>,
}

/// The environment variables through which reqwest sends plain HTTP to a
/// proxy; with any of them set, requests stay with reqwest.
const PROXY_VARIABLES: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

impl Http1 {
    /// The transport for `base` when it is plain `http://` and no proxy is
    /// set; `None` otherwise.
    pub fn for_base(base: &str, read_timeout: Duration) -> Option<Http1> {
        let url = reqwest::Url::parse(base).ok()?;
        if url.scheme() != "http"
            || PROXY_VARIABLES
                .iter()
                .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
        {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        Some(Http1 {
            address: format!("{host}:{port}"),
            host: match url.port() {
                Some(p) => format!("{host}:{p}"),
                None => host.to_string(),
            },
            prefix: url.path().trim_end_matches('/').to_string(),
            read_timeout,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// Sends `body` as JSON to `path`, on an idle connection if one is
    /// alive, and reads the response's head. A reused connection the server
    /// has just closed fails before the server read anything, so the
    /// request is then sent once more on a new one (as `Client::send`).
    pub async fn post(
        &self,
        path: &str,
        authorization: Option<&str>,
        body: &[u8],
    ) -> anyhow::Result<Response<'_>> {
        let mut request = Vec::with_capacity(body.len() + 256);
        request.extend_from_slice(
            format!(
                "POST {}{path} HTTP/1.1\r\nhost: {}\r\naccept: */*\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                self.prefix,
                self.host,
                body.len()
            )
            .as_bytes(),
        );
        if let Some(key) = authorization {
            request.extend_from_slice(b"authorization: Bearer ");
            request.extend_from_slice(key.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(body);
        if let Some(stream) = self.take_idle() {
            match self.exchange(stream, &request).await {
                Ok(r) => return Ok(r),
                Err(Exchange::Unsent(_)) => {}
                Err(Exchange::Failed(e)) => return Err(e),
            }
        }
        let stream = self.connect().await.context("sending the request")?;
        self.exchange(stream, &request).await.map_err(|e| match e {
            Exchange::Unsent(e) | Exchange::Failed(e) => e,
        })
    }

    async fn connect(&self) -> anyhow::Result<TcpStream> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.address))
            .await
            .map_err(|_| anyhow!("connecting to {}: timed out", self.address))?
            .with_context(|| format!("connecting to {}", self.address))?;
        // Without it, Nagle's algorithm and delayed ACKs can hold a
        // request's body back ~40 ms, which would land in every TTFT.
        stream.set_nodelay(true)?;
        Ok(stream)
    }

    /// The most recently used idle connection still open.
    fn take_idle(&self) -> Option<TcpStream> {
        let mut idle = self.idle.lock().unwrap();
        while let Some((stream, since)) = idle.pop() {
            let mut probe = [0u8; 1];
            // Open and quiet: nothing to read yet. Closed (0) or sending
            // something unasked: not reusable.
            let open = matches!(
                stream.try_read(&mut probe),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
            );
            if open && since.elapsed() < POOL_IDLE {
                return Some(stream);
            }
        }
        None
    }

    fn give_back(&self, stream: TcpStream) {
        self.idle.lock().unwrap().push((stream, Instant::now()));
    }

    async fn exchange(
        &self,
        mut stream: TcpStream,
        request: &[u8],
    ) -> Result<Response<'_>, Exchange> {
        let unsent = |e: anyhow::Error| Exchange::Unsent(e.context("sending the request"));
        stream
            .write_all(request)
            .await
            .map_err(|e| unsent(e.into()))?;
        let mut raw = Vec::with_capacity(16 * 1024);
        loop {
            let n = read_some(&mut stream, &mut raw, self.read_timeout)
                .await
                .map_err(|e| {
                    if raw.is_empty() && !is_timeout(&e) {
                        unsent(e)
                    } else {
                        Exchange::Failed(e.context("reading the response's head"))
                    }
                })?;
            if n == 0 {
                let e = anyhow!("the connection closed before a response");
                return Err(if raw.is_empty() {
                    unsent(e)
                } else {
                    Exchange::Failed(e)
                });
            }
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut head = httparse::Response::new(&mut headers);
            let len = match head.parse(&raw) {
                Ok(httparse::Status::Complete(len)) => len,
                Ok(httparse::Status::Partial) => continue,
                Err(e) => {
                    return Err(Exchange::Failed(anyhow!(
                        "the server's response is not HTTP/1.1 ({e})"
                    )));
                }
            };
            let status = head.code.unwrap_or(0);
            let header = |name: &'static str| {
                head.headers
                    .iter()
                    .filter(move |h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
            };
            let chunked = header("transfer-encoding").any(|v| v.contains("chunked"));
            let length = header("content-length").next();
            let framing = if chunked {
                Framing::Chunked(Chunk::Size)
            } else if let Some(length) = length {
                Framing::Length(length.trim().parse().map_err(|_| {
                    Exchange::Failed(anyhow!("the response's content-length is {length:?}"))
                })?)
            } else if status == 204 || status == 304 || (100..200).contains(&status) {
                Framing::Length(0)
            } else {
                Framing::UntilClose
            };
            let keep_alive = head.version == Some(1)
                && !header("connection").any(|v| v.contains("close"))
                && !matches!(framing, Framing::UntilClose);
            raw.drain(..len);
            return Ok(Response {
                owner: self,
                stream,
                raw,
                read_at: Instant::now(),
                silence: None,
                body: Body::new(framing),
                status,
                keep_alive,
            });
        }
    }
}

enum Exchange {
    /// Failed before the server could have read the request.
    Unsent(anyhow::Error),
    Failed(anyhow::Error),
}

/// A response's body as its framing delimits it.
struct Body {
    framing: Framing,
    ended: bool,
}

impl Body {
    fn new(framing: Framing) -> Body {
        let ended = matches!(framing, Framing::Length(0));
        Body { framing, ended }
    }

    /// Decodes the body's bytes at the start of `raw` into `into`: how many
    /// of `raw` it used, and how many bytes of the body it put there. What
    /// `raw` holds of a chunk's size line or CRLF not yet whole is left for
    /// the next call.
    fn decode(&mut self, raw: &[u8], into: &mut impl BodySink) -> anyhow::Result<(usize, usize)> {
        if self.ended {
            return Ok((0, 0));
        }
        let mut at = 0;
        let mut fed = 0;
        match &mut self.framing {
            Framing::UntilClose => {
                into.put(raw);
                at = raw.len();
                fed = at;
            }
            Framing::Length(left) => {
                let take = (*left).min(raw.len() as u64) as usize;
                into.put(&raw[..take]);
                at = take;
                fed = take;
                *left -= take as u64;
                self.ended = *left == 0;
            }
            Framing::Chunked(state) => loop {
                let rest = &raw[at..];
                match *state {
                    Chunk::Size => match httparse::parse_chunk_size(rest) {
                        Ok(httparse::Status::Complete((n, size))) => {
                            at += n;
                            *state = if size == 0 {
                                Chunk::Trailer
                            } else {
                                Chunk::Data(size)
                            };
                        }
                        Ok(httparse::Status::Partial) => break,
                        Err(_) => bail!(
                            "a malformed chunk size in the response: {:?}",
                            String::from_utf8_lossy(&rest[..rest.len().min(20)])
                        ),
                    },
                    Chunk::Data(left) => {
                        if rest.is_empty() {
                            break;
                        }
                        let take = left.min(rest.len() as u64) as usize;
                        into.put(&rest[..take]);
                        at += take;
                        fed += take;
                        *state = match left - take as u64 {
                            0 => Chunk::DataEnd,
                            left => Chunk::Data(left),
                        };
                    }
                    Chunk::DataEnd => {
                        if rest.len() < 2 {
                            break;
                        }
                        if &rest[..2] != b"\r\n" {
                            bail!("a chunk of the response does not end with CRLF");
                        }
                        at += 2;
                        *state = Chunk::Size;
                    }
                    Chunk::Trailer => {
                        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
                            break;
                        };
                        at += end + 2;
                        if end == 0 {
                            self.ended = true;
                            break;
                        }
                    }
                }
            },
        }
        Ok((at, fed))
    }
}

/// How the response's body ends.
enum Framing {
    Chunked(Chunk),
    Length(u64),
    UntilClose,
}

/// Where a chunked body is: at a chunk's size line, inside its data (bytes
/// left), at the CRLF after it, or in the trailer after the last chunk.
#[derive(Clone, Copy)]
enum Chunk {
    Size,
    Data(u64),
    DataEnd,
    Trailer,
}

/// A response whose body is being read.
pub struct Response<'a> {
    owner: &'a Http1,
    stream: TcpStream,
    /// Bytes read from the socket and not yet decoded.
    raw: Vec<u8>,
    body: Body,
    /// When the socket was last read: all of its bytes arrived by then.
    read_at: Instant,
    /// Fires when the server may have been silent for the read timeout.
    silence: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    pub status: u16,
    keep_alive: bool,
}

impl Response<'_> {
    /// Reads the body's next bytes into `into`: `Some(t)`, `t` the time
    /// they were read, or `None` once the body has ended.
    pub async fn read(&mut self, into: &mut impl BodySink) -> anyhow::Result<Option<Instant>> {
        loop {
            let fed = self.decode(into)?;
            if fed > 0 {
                return Ok(Some(self.read_at));
            }
            if self.body.ended {
                return Ok(None);
            }
            let n = self.read_some().await?;
            self.read_at = Instant::now();
            if n == 0 {
                if !matches!(self.body.framing, Framing::UntilClose) {
                    bail!("the connection closed before the response's end");
                }
                self.body.ended = true;
                self.keep_alive = false;
            }
        }
    }

    /// One read of the body into `raw`, giving up after the read timeout
    /// of silence. The timer is set once per response and moved on only
    /// when it fires: one per read cost as much as the JSON of an event.
    async fn read_some(&mut self) -> anyhow::Result<usize> {
        self.raw.reserve(16 * 1024);
        let timeout = self.owner.read_timeout;
        let silence = self
            .silence
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        loop {
            tokio::select! {
                biased;
                n = self.stream.read_buf(&mut self.raw) => return Ok(n?),
                () = silence.as_mut() => {
                    let due = self.read_at + timeout;
                    if Instant::now() >= due {
                        return Err(anyhow!(TimedOut(timeout)));
                    }
                    silence.as_mut().reset(due.into());
                }
            }
        }
    }

    /// Decodes what `raw` holds of the body into `into`; the number of
    /// the body's bytes it put there.
    fn decode(&mut self, into: &mut impl BodySink) -> anyhow::Result<usize> {
        let (used, fed) = self.body.decode(&self.raw, into)?;
        self.raw.drain(..used);
        if self.body.ended && !self.raw.is_empty() {
            // More than the body: not a connection to reuse.
            self.keep_alive = false;
        }
        Ok(fed)
    }

    /// Reads the rest of the body, for at most `limit`, so that the
    /// connection can be reused (a new connection per request would add
    /// TCP setup to TTFT); what it holds is dropped.
    pub async fn finish(mut self, limit: Duration) {
        let read_all = async {
            loop {
                match self.read(&mut Discard).await {
                    Ok(Some(_)) => {}
                    Ok(None) => return true,
                    Err(_) => return false,
                }
            }
        };
        if tokio::time::timeout(limit, read_all).await == Ok(true) {
            self.reuse();
        }
    }

    /// The whole body as text, for an error's message.
    pub async fn text(mut self) -> String {
        let mut body = Vec::new();
        while let Ok(Some(_)) = self.read(&mut body).await {}
        let text = String::from_utf8_lossy(&body).into_owned();
        self.reuse();
        text
    }

    fn reuse(self) {
        if self.body.ended && self.keep_alive {
            self.owner.give_back(self.stream);
        }
    }
}

/// Where a body's bytes go as they are decoded.
pub trait BodySink {
    fn put(&mut self, bytes: &[u8]);
}

impl BodySink for SseReader {
    fn put(&mut self, bytes: &[u8]) {
        self.feed(bytes);
    }
}

impl BodySink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

struct Discard;

impl BodySink for Discard {
    fn put(&mut self, _: &[u8]) {}
}

/// One read into `raw`'s spare room, giving up after `timeout` of silence
/// (for a response's head).
async fn read_some(
    stream: &mut TcpStream,
    raw: &mut Vec<u8>,
    timeout: Duration,
) -> anyhow::Result<usize> {
    raw.reserve(16 * 1024);
    match tokio::time::timeout(timeout, stream.read_buf(raw)).await {
        Ok(n) => Ok(n?),
        Err(_) => Err(anyhow!(TimedOut(timeout))),
    }
}

#[derive(Debug)]
struct TimedOut(Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server sent nothing for {} (--request-timeout)",
            humantime::format_duration(self.0)
        )
    }
}

impl std::error::Error for TimedOut {}

fn is_timeout(e: &anyhow::Error) -> bool {
    e.downcast_ref::<TimedOut>().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body decoded from `raw` cut at `cuts`, as the socket's reads
    /// would bring it: what it holds, and whether it ended.
    fn decoded(framing: Framing, raw: &[u8], cuts: &[usize]) -> anyhow::Result<(Vec<u8>, bool)> {
        let mut body = Body::new(framing);
        let mut out = Vec::new();
        let mut pending = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&raw.len()]) {
            pending.extend_from_slice(&raw[from..cut]);
            from = cut;
            let (used, _) = body.decode(&pending, &mut out)?;
            pending.drain(..used);
        }
        Ok((out, body.ended))
    }

    #[test]
    fn a_chunked_body_reads_the_same_however_it_is_cut() {
        let raw = b"5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n";
        for a in 0..=raw.len() {
            for b in a..=raw.len() {
                let (out, ended) = decoded(Framing::Chunked(Chunk::Size), raw, &[a, b]).unwrap();
                assert_eq!(out, b"hello world", "cut at {a} and {b}");
                assert!(ended, "cut at {a} and {b}");
            }
        }
        let (out, ended) =
            decoded(Framing::Chunked(Chunk::Size), &raw[..raw.len() - 2], &[]).unwrap();
        assert_eq!((&out[..], ended), (&b"hello world"[..], false));
    }

    #[test]
    fn a_malformed_chunked_body_is_an_error_naming_what_is_wrong() {
        let e = decoded(Framing::Chunked(Chunk::Size), b"zz\r\nhello", &[]).unwrap_err();
        assert!(e.to_string().contains("malformed chunk size"), "{e}");
        let e = decoded(Framing::Chunked(Chunk::Size), b"5\r\nhelloXX0\r\n\r\n", &[]).unwrap_err();
        assert!(e.to_string().contains("does not end with CRLF"), "{e}");
    }

    #[test]
    fn a_body_of_stated_length_ends_there() {
        let (out, ended) = decoded(Framing::Length(5), b"hello, and more", &[2]).unwrap();
        assert_eq!((&out[..], ended), (&b"hello"[..], true));
        let (out, ended) = decoded(Framing::Length(0), b"", &[]).unwrap();
        assert_eq!((&out[..], ended), (&b""[..], true));
        let (out, ended) = decoded(Framing::UntilClose, b"all of it", &[3]).unwrap();
        assert_eq!((&out[..], ended), (&b"all of it"[..], false));
    }
}
