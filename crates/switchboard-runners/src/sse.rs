//! Server-sent events read from a byte stream in linear time, with a cap on one
//! event: what model servers and A2A agents stream is hostile input. Each chunk
//! is scanned once (never the whole buffer again), so a line that never ends
//! costs its length, not its square, and the reader yields at every chunk, so
//! the call's timers and the signal handlers run whatever a peer sends; an event
//! over the cap ends the stream with an error instead of growing without bound.
//! (`eventsource-stream` re-scanned its buffer per chunk: a 4 MB line held a call
//! 55 s past its timeouts.)

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// One event: its `event` field (empty when none) and its data lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Why a stream of events broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("the connection broke: {0}")]
    Transport(String),
    #[error("an event is over {limit} bytes (max_output_bytes), with no end in sight")]
    TooLarge { limit: usize },
}

/// Reads events out of `bytes` (a response's `bytes_stream()`), one event at most
/// `limit` bytes.
pub struct SseReader<S> {
    bytes: S,
    parser: SseParser,
    finished: bool,
}

impl<S, E> SseReader<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    pub fn new(bytes: S, limit: usize) -> SseReader<S> {
        SseReader { bytes, parser: SseParser::new(limit), finished: false }
    }

    /// The next event; `None` once the stream has ended (a last event without its
    /// blank line still counts).
    pub async fn next(&mut self) -> Option<Result<SseEvent, SseError>> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event);
            }
            if self.finished {
                return self.parser.finish().map(Ok);
            }
            match self.bytes.next().await {
                Some(Ok(chunk)) => self.parser.push(&chunk),
                Some(Err(error)) => {
                    self.finished = true;
                    return Some(Err(SseError::Transport(error.to_string())));
                }
                None => self.finished = true,
            }
        }
    }
}

/// The pure part: bytes in, events out.
#[derive(Debug)]
pub struct SseParser {
    limit: usize,
    /// Bytes not yet read as whole lines.
    pending: Vec<u8>,
    /// How far `pending` has been searched for a line end.
    scanned: usize,
    event: String,
    data: String,
    has_data: bool,
    /// Bytes of the event being read (its lines so far and the partial one).
    size: usize,
    failed: bool,
}

impl SseParser {
    pub fn new(limit: usize) -> SseParser {
        SseParser {
            limit,
            pending: Vec::new(),
            scanned: 0,
            event: String::new(),
            data: String::new(),
            has_data: false,
            size: 0,
            failed: false,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        if !self.failed {
            self.pending.extend_from_slice(chunk);
        }
    }

    /// The next complete event in what was pushed, or an error once the event
    /// being read is over the limit.
    pub fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        if self.failed {
            return None;
        }
        loop {
            let Some(offset) = self.pending[self.scanned..].iter().position(|byte| *byte == b'\n') else {
                self.scanned = self.pending.len();
                if self.size + self.pending.len() > self.limit {
                    self.failed = true;
                    self.pending = Vec::new();
                    return Some(Err(SseError::TooLarge { limit: self.limit }));
                }
                return None;
            };
            let end = self.scanned + offset;
            let mut line: Vec<u8> = self.pending.drain(..=end).collect();
            self.scanned = 0;
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.size += line.len() + 1;
            if self.size > self.limit {
                self.failed = true;
                self.pending = Vec::new();
                return Some(Err(SseError::TooLarge { limit: self.limit }));
            }
            if line.is_empty() {
                if let Some(event) = self.dispatch() {
                    return Some(Ok(event));
                }
                continue;
            }
            self.field(&String::from_utf8_lossy(&line));
        }
    }

    /// What is left when the stream ends: an event whose blank line never came.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if self.failed {
            return None;
        }
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&rest).trim_end_matches('\r').to_string();
            self.field(&line);
        }
        self.dispatch()
    }

    fn field(&mut self, line: &str) {
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {} // id, retry and unknown fields: not used here
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        self.size = 0;
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent { event, data: std::mem::take(&mut self.data) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[&[u8]], limit: usize) -> Vec<Result<SseEvent, SseError>> {
        let mut parser = SseParser::new(limit);
        let mut out = Vec::new();
        for chunk in input {
            parser.push(chunk);
            while let Some(event) = parser.next_event() {
                out.push(event);
            }
        }
        out.extend(parser.finish().map(Ok));
        out
    }

    fn data(text: &str) -> Result<SseEvent, SseError> {
        Ok(SseEvent { event: String::new(), data: text.into() })
    }

    #[test]
    fn events_are_read_across_chunks_as_the_format_says() {
        type Case<'a> = (&'a [&'a [u8]], Vec<Result<SseEvent, SseError>>);
        let cases: [Case; 5] = [
            (&[b"data: one\n\ndata: two\n\n"], vec![data("one"), data("two")]),
            (&[b"da", b"ta: sp", b"lit\r\n", b"\r\n"], vec![data("split")]),
            (&[b": keep-alive\n\ndata:a\ndata: b\n\n"], vec![data("a\nb")]),
            (
                &[b"event: message\nid: 7\ndata: {\"x\":1}\n\n"],
                vec![Ok(SseEvent { event: "message".into(), data: "{\"x\":1}".into() })],
            ),
            (&[b"data: no blank line at the end"], vec![data("no blank line at the end")]),
        ];
        for (input, expected) in cases {
            assert_eq!(events(input, 1_000), expected, "{input:?}");
        }
    }

    #[test]
    fn an_event_over_the_limit_is_an_error_not_a_growing_buffer() {
        let line = vec![b'x'; 600];
        let mut parser = SseParser::new(1_000);
        parser.push(b"data: ");
        parser.push(&line);
        assert!(parser.next_event().is_none(), "600 bytes fit");
        parser.push(&line);
        assert_eq!(parser.next_event(), Some(Err(SseError::TooLarge { limit: 1_000 })));
        parser.push(&line);
        assert_eq!(parser.next_event(), None, "nothing more is read");
        assert!(parser.pending.is_empty(), "and nothing kept");
        // Many small lines of one event count together.
        let many: Vec<u8> = b"data: 0123456789\n".repeat(100);
        assert!(matches!(events(&[&many], 1_000).last(), Some(Err(SseError::TooLarge { .. }))));
    }

    #[test]
    fn a_long_line_is_read_whole_in_one_pass() {
        // 4 MB in 4 KB chunks: each byte is scanned once (a re-scan per chunk
        // would be about 2 billion byte visits and take seconds here).
        let mut parser = SseParser::new(8 * 1024 * 1024);
        parser.push(b"data: ");
        let chunk = vec![b'y'; 4096];
        for _ in 0..1024 {
            parser.push(&chunk);
            assert!(parser.next_event().is_none());
        }
        parser.push(b"\n\n");
        let event = parser.next_event().unwrap().unwrap();
        assert_eq!(event.data.len(), 4 * 1024 * 1024);
    }
}
