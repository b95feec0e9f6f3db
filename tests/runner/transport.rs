//! The streamed completion's transports: plain HTTP/1.1 (runner/http1.rs)
//! against a server scripted byte by byte (connection reuse, a closed idle
//! connection, an error status, silence), and the same events through it
//! and through reqwest from the emulated engine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use sitegen::runner::client::{Client, StreamEvent};

use crate::emulator;

/// A server on a free port that answers every request on a connection with
/// `answer(connection, request)`, and closes the connection after it when
/// `close_after` says so. Returns its URL and its count of connections.
fn scripted(
    answer: impl Fn(usize, usize) -> Vec<u8> + Send + Sync + 'static,
    close_after: bool,
    pause_after: Option<Duration>,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let connection = counted.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            std::thread::spawn(move || {
                serve(stream, connection, &*answer, close_after, pause_after)
            });
        }
    });
    (url, connections)
}

fn serve(
    stream: TcpStream,
    connection: usize,
    answer: &dyn Fn(usize, usize) -> Vec<u8>,
    close_after: bool,
    pause_after: Option<Duration>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    for request in 0.. {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        writer.write_all(&answer(connection, request)).unwrap();
        if let Some(pause) = pause_after {
            std::thread::sleep(pause);
        }
        if close_after {
            return;
        }
    }
}

/// A streamed answer of one text event and `[DONE]`, chunked.
fn chunked_answer(text: &str) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for event in [
        format!("data: {{\"choices\":[{{\"index\":0,\"text\":\"{text}\"}}]}}\n\n"),
        "data: [DONE]\n\n".to_string(),
    ] {
        out.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// The texts of a stream's events, and whether it ended with `[DONE]`.
async fn texts(client: &Client) -> anyhow::Result<(Vec<String>, bool)> {
    let mut texts = Vec::new();
    let mut done = false;
    client
        .stream_completion(
            "/v1/completions",
            &json!({"model": "m", "prompt": "p", "stream": true}),
            |event| match event {
                StreamEvent::Chunk(c) => texts.push(c.text.into_owned()),
                StreamEvent::Done => done = true,
            },
        )
        .await?;
    Ok((texts, done))
}

#[tokio::test]
async fn a_connection_is_reused_once_its_answer_is_read() {
    let (url, connections) = scripted(|_, r| chunked_answer(&format!("answer {r}")), false, None);
    let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
    for r in 0..3 {
        assert_eq!(
            texts(&client).await.unwrap(),
            (vec![format!("answer {r}")], true)
        );
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_request_on_a_connection_the_server_closed_is_sent_again_on_a_new_one() {
    // The server closes each connection after its answer without saying so
    // (as llama.cpp's does): the next request meets a closed connection.
    let (url, connections) = scripted(
        |c, _| chunked_answer(&format!("connection {c}")),
        true,
        None,
    );
    let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
    for c in 0..3 {
        assert_eq!(
            texts(&client).await.unwrap(),
            (vec![format!("connection {c}")], true)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(connections.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_error_status_is_an_error_with_the_servers_words() {
    let (url, _) = scripted(
        |_, _| {
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 27\r\n\r\n{\"error\":\"prompt too long\"}"
                .to_vec()
        },
        false,
        None,
    );
    let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
    let e = texts(&client).await.unwrap_err().to_string();
    assert_eq!(
        e,
        "/v1/completions: HTTP 400: {\"error\":\"prompt too long\"}"
    );
}

#[tokio::test]
async fn a_server_silent_for_the_request_timeout_fails_the_request_saying_so() {
    let (url, _) = scripted(
        |_, _| {
            // The head and a first event, then nothing.
            let event = "data: {\"choices\":[{\"index\":0,\"text\":\"first\"}]}\n\n";
            format!(
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                event.len()
            )
            .into_bytes()
        },
        false,
        Some(Duration::from_secs(3)),
    );
    let client = Client::new(&url, None, Duration::from_millis(400)).unwrap();
    let started = std::time::Instant::now();
    let e = format!("{:#}", texts(&client).await.unwrap_err());
    assert!(
        e.contains("the server sent nothing for 400ms (--request-timeout)"),
        "{e}"
    );
    assert!(e.contains("broken stream after 1 events"), "{e}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_transports_read_the_engines_streams_into_the_same_events() {
    let _serial = crate::SERIAL.lock().await;
    let emu = emulator::start(emulator::EmulatorConfig {
        step: Duration::from_millis(1),
        ..Default::default()
    })
    .await;
    let plain = Client::new(&emu.url, None, Duration::from_secs(10)).unwrap();
    let reqwest = plain.clone().streaming_through_reqwest();
    let body = |path: &str| match path {
        "/v1/completions" => {
            json!({"model": "emulated-model", "prompt": "the same prompt", "max_tokens": 40,
            "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}})
        }
        _ => {
            json!({"model": "emulated-model", "messages": [{"role": "user", "content": "the same prompt"}],
            "max_tokens": 40, "stream": true, "stream_options": {"include_usage": true}})
        }
    };
    for path in ["/v1/completions", "/v1/chat/completions"] {
        let mut seen = Vec::new();
        for client in [&plain, &reqwest] {
            let mut events = Vec::new();
            client
                .stream_completion(path, &body(path), |event| {
                    events.push(match event {
                        // The engine's words are drawn anew for each request.
                        StreamEvent::Chunk(c) => format!(
                            "text {} reasoning {} {} {:?} {:?} {:?}",
                            c.text.is_empty(),
                            c.reasoning.is_empty(),
                            c.token_event,
                            c.completion_tokens,
                            c.prompt_tokens,
                            c.finish_reason
                        ),
                        StreamEvent::Done => "[DONE]".into(),
                    })
                })
                .await
                .unwrap();
            seen.push(events);
        }
        assert!(seen[0].len() > 40, "{path}: {:?}", seen[0]);
        assert_eq!(seen[0], seen[1], "{path}");
    }
}
