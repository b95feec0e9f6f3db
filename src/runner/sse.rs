//! Server-sent events read out of a byte buffer as the WHATWG spec parses
//! them, without a copy or an allocation per event: a streamed completion's
//! hot path reads tens of thousands of events a second, and a general
//! parser (eventsource-stream) allocated several strings for each.
//!
//! Only what a completion stream uses is kept: `data` (lines joined by
//! "\n") and `event`; `id`, `retry` and comments are skipped. An event is
//! dispatched at its blank line; one cut off by the end of the stream is
//! dropped, as the spec says.

/// The stream's bytes not yet read into events.
#[derive(Default)]
pub struct SseReader {
    buf: Vec<u8>,
    /// Where the first event not yet dispatched starts in `buf`.
    start: usize,
    /// The joined data of an event of several `data` lines.
    joined: Vec<u8>,
    /// Whether the stream's first bytes, which may be a byte-order mark,
    /// are read (a mark's first bytes alone hold no line end to parse).
    started: bool,
    /// The stream has ended: a lone CR at the end closes its line.
    ended: bool,
}

/// One event: its type (`event` field, empty when unnamed) and its data,
/// borrowed from the reader until it is next fed.
#[derive(Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    pub event: &'a [u8],
    pub data: &'a [u8],
}

impl SseReader {
    /// Adds the stream's next bytes (any split, even inside a line or a
    /// CRLF).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(bytes);
        if !self.started {
            // A byte-order mark may open the stream, even cut in two.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            if self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
                self.started = true;
            } else {
                self.started = !BOM.starts_with(&self.buf);
            }
        }
    }

    /// The stream has no more bytes.
    pub fn end(&mut self) {
        self.ended = true;
    }

    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// The next complete event, if the bytes fed hold one.
    pub fn next_event(&mut self) -> Option<SseEvent<'_>> {
        loop {
            let (event, data, lines, end) = self.scan()?;
            self.start = end;
            if lines == 0 {
                // A block of comments or fields without data: no event.
                continue;
            }
            let data = if lines == 1 {
                &self.buf[data.0..data.1]
            } else {
                &self.joined[..]
            };
            return Some(SseEvent {
                event: &self.buf[event.0..event.1],
                data,
            });
        }
    }

    /// Reads the lines of the event at `start` up to its blank line: the
    /// ranges of its type and of its one data line (else its data is in
    /// `joined`), its number of data lines, and where the next begins.
    #[allow(clippy::type_complexity)]
    fn scan(&mut self) -> Option<((usize, usize), (usize, usize), usize, usize)> {
        let buf = &self.buf[..];
        let mut at = self.start;
        let mut event = (at, at);
        let mut data = (at, at);
        let mut lines = 0;
        loop {
            let rest = &buf[at..];
            let len = memchr::memchr2(b'\n', b'\r', rest)?;
            let mut next = at + len + 1;
            if rest[len] == b'\r' {
                match rest.get(len + 1) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // A CR may be the first half of a CRLF still to come.
                    None if !self.ended => return None,
                    None => {}
                }
            }
            let line = (at, at + len);
            at = next;
            if line.0 == line.1 {
                return Some((event, data, lines, at));
            }
            let text = &buf[line.0..line.1];
            let (name, value) = match memchr::memchr(b':', text) {
                Some(0) => continue,
                Some(c) => {
                    let value = line.0 + c + 1;
                    let value =
                        value + usize::from(buf.get(value) == Some(&b' ') && value < line.1);
                    (&text[..c], (value, line.1))
                }
                None => (text, (line.1, line.1)),
            };
            match name {
                b"data" => {
                    lines += 1;
                    match lines {
                        1 => data = value,
                        2 => {
                            self.joined.clear();
                            self.joined.extend_from_slice(&buf[data.0..data.1]);
                            self.joined.push(b'\n');
                            self.joined.extend_from_slice(&buf[value.0..value.1]);
                        }
                        _ => {
                            self.joined.push(b'\n');
                            self.joined.extend_from_slice(&buf[value.0..value.1]);
                        }
                    }
                }
                b"event" => event = value,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `stream` fed in pieces cut at `cuts`.
    fn events(stream: &[u8], cuts: &[usize]) -> Vec<(String, String)> {
        let mut reader = SseReader::default();
        let mut out = Vec::new();
        let mut drain = |reader: &mut SseReader| {
            while let Some(e) = reader.next_event() {
                out.push((
                    String::from_utf8(e.event.to_vec()).unwrap(),
                    String::from_utf8(e.data.to_vec()).unwrap(),
                ));
            }
        };
        let mut from = 0;
        for &cut in cuts.iter().chain([&stream.len()]) {
            reader.feed(&stream[from..cut]);
            from = cut;
            drain(&mut reader);
        }
        reader.end();
        drain(&mut reader);
        out
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.to_string(), data.to_string())
    }

    #[test]
    fn the_specs_examples_read_as_the_spec_says() {
        // html.spec.whatwg.org, "Server-sent events", 9.2.6.
        let stream = b"data: This is the first message.\n\ndata: This is the second message, it\ndata: has two lines.\n\ndata: This is the third message.\n\n";
        assert_eq!(
            events(stream, &[]),
            [
                ev("", "This is the first message."),
                ev("", "This is the second message, it\nhas two lines."),
                ev("", "This is the third message."),
            ]
        );
        let stream = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n: a comment\nid: 7\nretry: 10\ndata\n\ndata:\ndata\n\ndata:test\n\ndata: test\n\ndata:  two spaces\n\n";
        assert_eq!(
            events(stream, &[]),
            [
                ev("add", "73857293"),
                ev("remove", "2153"),
                ev("", ""),
                ev("", "\n"),
                ev("", "test"),
                ev("", "test"),
                ev("", " two spaces"),
            ]
        );
    }

    #[test]
    fn any_cut_of_the_stream_gives_the_same_events() {
        let stream = "\u{feff}data: {\"a\":1}\r\n\r\nevent: error\rdata: x\r\rdata: é\ndata: ü\n\n: ping\n\ndata: [DONE]\n\n".as_bytes();
        let whole = events(stream, &[]);
        assert_eq!(
            whole,
            [
                ev("", "{\"a\":1}"),
                ev("error", "x"),
                ev("", "é\nü"),
                ev("", "[DONE]"),
            ]
        );
        for a in 0..=stream.len() {
            for b in a..=stream.len() {
                assert_eq!(events(stream, &[a, b]), whole, "cut at {a} and {b}");
            }
        }
    }

    #[test]
    fn an_event_cut_off_by_the_streams_end_is_dropped() {
        assert_eq!(events(b"data: 1\n\ndata: 2\n", &[]), [ev("", "1")]);
        // A CR at the very end closes its line once the stream has ended.
        assert_eq!(events(b"data: 1\r\r", &[]), [ev("", "1")]);
    }
}
