//! What the subprocess runner reads of a program: its output, capped; its log
//! as progress lines; the words of a failure; a file it wrote. Pure but for the
//! reads themselves.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::contract::ModelDelta;

/// At most `cap` bytes of a file the program wrote, as text (nothing when it wrote none).
pub(super) fn read_capped(path: &std::path::Path, cap: u64) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(cap).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A program's log, line by line, as progress.
#[derive(Default)]
pub(super) struct LogLines {
    partial: String,
}

impl LogLines {
    pub(super) fn push(&mut self, text: &str) -> Vec<ModelDelta> {
        self.partial.push_str(text);
        let mut deltas = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let line = line.trim();
            if !line.is_empty() {
                deltas.push(ModelDelta::Progress { message: crate::truncate(line, 300), data: None });
            }
        }
        deltas
    }
}

/// What a program that failed said about it: the last lines of its stderr, else
/// of its stdout (a program that reports errors on stdout), never nothing.
pub(super) fn failure_words(stderr: &str, stdout: &str) -> String {
    let last_lines = |text: &str| {
        let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    };
    let words = last_lines(stderr);
    let words = if words.is_empty() { last_lines(stdout) } else { words };
    if words.is_empty() {
        "it printed nothing".to_string()
    } else {
        tail_of(&words, 2_000)
    }
}

/// The last `limit` characters of `text`, for an error message.
pub(super) fn tail_of(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(limit)).collect()
}

/// An agent's stdout as text: decoded chunk by chunk (an invalid byte becomes
/// U+FFFD and the stream goes on), kept up to a cap; what is over the cap is
/// counted and dropped, and the result says so.
pub(super) struct CappedOutput {
    text: String,
    pending: Vec<u8>,
    cap: usize,
    dropped: u64,
}

impl CappedOutput {
    pub(super) fn new(cap: u64) -> CappedOutput {
        CappedOutput {
            text: String::new(),
            pending: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            dropped: 0,
        }
    }

    /// Takes a chunk; returns the text it completes, to stream (none past the cap).
    pub(super) fn push(&mut self, bytes: &[u8]) -> Option<String> {
        if self.text.len() >= self.cap {
            self.dropped += bytes.len() as u64;
            return None;
        }
        self.pending.extend_from_slice(bytes);
        let mut decoded = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    decoded.push_str(text);
                    self.pending.clear();
                    break;
                }
                Err(error) => {
                    let valid = error.valid_up_to();
                    decoded.push_str(std::str::from_utf8(&self.pending[..valid]).expect("checked valid"));
                    match error.error_len() {
                        // An invalid sequence: marked, skipped, and decoding goes on.
                        Some(invalid) => {
                            decoded.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + invalid);
                        }
                        // A character cut by the chunk's end: kept for the next chunk.
                        None => {
                            self.pending.drain(..valid);
                            break;
                        }
                    }
                }
            }
        }
        let room = self.cap - self.text.len();
        if decoded.len() > room {
            let mut end = room;
            while !decoded.is_char_boundary(end) {
                end -= 1;
            }
            self.dropped += (decoded.len() - end) as u64;
            decoded.truncate(end);
        }
        self.text.push_str(&decoded);
        (!decoded.is_empty()).then_some(decoded)
    }

    pub(super) fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            let rest = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.text.push_str(&rest);
        }
        if self.dropped > 0 {
            self.text.push_str(&crate::cut_note(self.cap, Some(self.dropped)));
        }
        self.text
    }
}

/// The most of a program's stderr that is kept: its last bytes.
pub(super) const STDERR_TAIL: usize = 64 * 1024;

/// The last `cap` bytes a pipe gives, read to its end: a program's stderr can be
/// endless, and only its last lines say why it failed. What was dropped before the
/// tail is said on its first line.
pub(super) async fn read_tail(mut pipe: impl AsyncRead + Unpin, cap: usize) -> String {
    let mut tail = std::collections::VecDeque::with_capacity(cap.min(64 * 1024));
    let mut dropped = 0u64;
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(read @ 1..) = pipe.read(&mut chunk).await {
        tail.extend(&chunk[..read]);
        if tail.len() > cap {
            let over = tail.len() - cap;
            tail.drain(..over);
            dropped += over as u64;
        }
    }
    let text = String::from_utf8_lossy(tail.make_contiguous()).into_owned();
    if dropped > 0 {
        format!("[{dropped} earlier bytes dropped]\n{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::CappedOutput;

    #[tokio::test]
    async fn stderr_keeps_its_last_bytes_only() {
        let flood = format!("{}\nthe reason\n", "x".repeat(1_000_000));
        let tail = super::read_tail(flood.as_bytes(), 100).await;
        assert!(tail.starts_with("[999912 earlier bytes dropped]\n"), "{}", &tail[..40]);
        assert!(tail.ends_with("x\nthe reason\n") && tail.len() < 200, "{tail}");
        assert_eq!(super::read_tail(&b"short"[..], 100).await, "short");
    }

    #[test]
    fn output_is_decoded_lossily_chunk_by_chunk_and_capped() {
        let mut output = CappedOutput::new(1_000);
        assert_eq!(
            output.push(b"ok \xff then"),
            Some("ok \u{fffd} then".into()),
            "an invalid byte does not stop the stream"
        );
        let snowman = "☃".as_bytes();
        assert_eq!(output.push(&[b' ', snowman[0]]), Some(" ".into()), "half a character waits");
        assert_eq!(output.push(&snowman[1..]), Some("☃".into()));
        assert_eq!(output.finish(), "ok \u{fffd} then ☃");

        let mut capped = CappedOutput::new(10);
        assert_eq!(capped.push("12345678é9".as_bytes()), Some("12345678é".into()), "cut at a character boundary");
        assert_eq!(capped.push(b"more"), None, "nothing streams past the cap");
        let text = capped.finish();
        assert!(text.starts_with("12345678é\n[output cut at 10 bytes"), "{text}");
        assert!(text.contains("5 more bytes were dropped"), "{text}");
    }
}
