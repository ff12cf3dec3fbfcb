//! Subprocess agents (`subprocess` and the presets: aider, smolagents, Claude Code,
//! Codex, Gemini CLI, Qwen Code): one process per call, stdout streamed back as
//! text (or as events, for JSON-lines CLIs; as progress, for aider, whose answer is
//! read from its LLM history file). What a model writes is hostile, so the request can never
//! become an option (it goes inside a template argument, after `--`, or on stdin),
//! and the agent sees only a minimal environment plus what its config gives it
//! (`env`, `${VAR}` references, its `api_key_env`), never the app's API keys. A call
//! owns its process group, and the group is ended after every call, whatever its
//! end (ok, error, timeout, cancel): SIGTERM, then SIGKILL after a grace period,
//! kept in the runner cache's registry so a shell can finish the job before it
//! exits. Subprocess agents are delegates only: they are offered no tools.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::events::EventLines;
use super::output::{aider_replies, smolagents_gave_up, OutputReader};
use super::presets::{invocation, AnswerSource};
use crate::config::{AgentConfig, OutputFormat, RequestVia};
use crate::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError};
use crate::event::Steering;
use crate::runner::registry::{ProcessGroup, Registry};
use crate::runner::DEFAULT_MAX_OUTPUT_BYTES;

pub use crate::runner::registry::GRACE;

/// Where the request goes in the arguments; appended after `--` when no argument holds it.
pub const REQUEST_PLACEHOLDER: &str = "{request}";

/// Used when an agent sets no `timeout_secs`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// How long output is still read after the agent exits: a grandchild that keeps
/// the pipes open must not hold the call.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

#[derive(Debug)]
pub struct SubprocessRunner {
    agent: String,
    command: String,
    args: Vec<String>,
    cwd: Option<String>,
    env: BTreeMap<String, String>,
    api_key_env: Option<String>,
    request_via: RequestVia,
    timeout_secs: u64,
    max_output_bytes: u64,
    reader: OutputReader,
    format: OutputFormat,
    answer: AnswerSource,
    registry: Arc<Registry>,
}

impl SubprocessRunner {
    pub fn new(agent: &AgentConfig, registry: Arc<Registry>) -> Result<SubprocessRunner, RunnerError> {
        let invocation = invocation(agent);
        let command =
            invocation.command.ok_or_else(|| RunnerError::Config(format!("agent {:?} has no command", agent.name)))?;
        let reader = OutputReader::new(&invocation.output)
            .map_err(|error| RunnerError::Config(format!("agent {:?}: {error}", agent.name)))?;
        Ok(SubprocessRunner {
            agent: agent.name.clone(),
            command,
            args: invocation.args,
            cwd: agent.cwd.clone(),
            env: invocation.env,
            api_key_env: agent.api_key_env.clone(),
            request_via: agent.request_via.unwrap_or_default(),
            timeout_secs: agent.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS),
            max_output_bytes: agent.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES),
            format: invocation.output.format.unwrap_or_default(),
            answer: invocation.answer,
            reader,
            registry,
        })
    }

    /// The arguments for `request`. Inside a template argument (`--message={request}`)
    /// it cannot be an option; as a whole argument it is refused when it starts with
    /// `-`; with no placeholder it is appended after `--`; on stdin it is not in
    /// the arguments at all.
    pub fn arguments_for(&self, request: &str) -> Result<Vec<String>, RunnerError> {
        if self.request_via == RequestVia::Stdin {
            return Ok(self.args.clone());
        }
        if !self.args.iter().any(|argument| argument.contains(REQUEST_PLACEHOLDER)) {
            let mut arguments = self.args.clone();
            arguments.push("--".into());
            arguments.push(request.to_string());
            return Ok(arguments);
        }
        if request.starts_with('-') && self.args.iter().any(|argument| argument == REQUEST_PLACEHOLDER) {
            return Err(RunnerError::Config(format!(
                "the request starts with '-' and agent {:?} takes it as a whole argument, where the program would read \
                 it as an option; put {REQUEST_PLACEHOLDER} inside an argument (--message={REQUEST_PLACEHOLDER}) or set \
                 \"request_via\": \"stdin\"",
                self.agent
            )));
        }
        Ok(self.args.iter().map(|argument| argument.replace(REQUEST_PLACEHOLDER, request)).collect())
    }

    /// Why the program did not start, in words that say what to do.
    fn start_failure(&self, error: &std::io::Error) -> String {
        let program = &self.command;
        match (&self.cwd, error.kind()) {
            (Some(cwd), _) if !std::path::Path::new(cwd).is_dir() => {
                format!("its working folder {cwd} does not exist (the agent's `cwd`)")
            }
            (_, std::io::ErrorKind::NotFound) if program.contains('/') => {
                format!("the program {program:?} does not exist; install it or correct the agent's `command`")
            }
            (_, std::io::ErrorKind::NotFound) => {
                format!(
                    "the program {program:?} is not on PATH; install it or give its full path as the agent's `command`"
                )
            }
            (_, std::io::ErrorKind::PermissionDenied) => {
                format!("the program {program:?} is not executable (chmod +x, or name the interpreter)")
            }
            _ => format!("{program}: {error}"),
        }
    }

    /// The agent's environment: the base variables the app has, its `api_key_env`
    /// variable, then its own `env` (`${NAME}` taken from the app's environment).
    pub fn environment(&self) -> Result<BTreeMap<String, String>, RunnerError> {
        crate::runner::environment::of(&self.agent, self.api_key_env.as_deref(), &self.env)
    }

    /// Runs the program once with `prompt`, within the agent's timeout.
    pub async fn run_once(&self, prompt: String, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secs = self.timeout_secs;
        crate::runner::within(secs, self.run(prompt, on_delta)).await
    }

    async fn run(&self, prompt: String, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let mut arguments = self.arguments_for(&prompt)?;
        // A file of this call alone for a program that keeps its answer apart.
        let answer_folder = match self.answer {
            AnswerSource::AiderLlmHistory => Some(tempfile::tempdir().map_err(|error| {
                RunnerError::Internal(format!("a temporary folder for {:?}'s history: {error}", self.agent))
            })?),
            AnswerSource::Stdout | AnswerSource::SmolagentsLog => None,
        };
        let answer_file = answer_folder.as_ref().map(|folder| folder.path().join("llm-history.txt"));
        if let Some(file) = &answer_file {
            arguments.insert(0, format!("--llm-history-file={}", file.display()));
        }
        let mut command = Command::new(&self.command);
        command
            .args(arguments)
            .env_clear()
            .envs(self.environment()?)
            .stdin(if self.request_via == RequestVia::Stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|error| RunnerError::NotStarted {
            agent: self.agent.clone(),
            message: self.start_failure(&error),
        })?;
        // From here on, however the call ends, the group is ended with it.
        let _group = ProcessGroup::of(&child, &self.registry);
        if let Some(mut stdin) = child.stdin.take() {
            // Written aside, so a program that does not read its input cannot hold
            // the call; the pipe closes when the writing ends.
            let request = prompt.clone().into_bytes();
            tokio::spawn(async move {
                let _ = stdin.write_all(&request).await;
            });
        }
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stderr_task = tokio::spawn(read_to_end(stderr));
        let mut output = CappedOutput::new(self.max_output_bytes);
        // A CLI that writes JSON lines streams its events, not its raw lines.
        let mut events = (self.format != OutputFormat::Text).then(|| EventLines::new(self.format));
        // When the answer is kept elsewhere, stdout is the program's log: progress.
        let mut log_lines = answer_file.is_some().then(LogLines::default);
        let mut chunk = [0u8; 4096];
        let mut exited: Option<(std::process::ExitStatus, tokio::time::Instant)> = None;
        loop {
            let read = match exited {
                // After the exit, read what is left, but only briefly.
                Some((_, at)) => match tokio::time::timeout_at(at + DRAIN_AFTER_EXIT, stdout.read(&mut chunk)).await {
                    Ok(read) => read,
                    Err(_) => break,
                },
                None => tokio::select! {
                    read = stdout.read(&mut chunk) => read,
                    status = child.wait() => {
                        let status = status.map_err(|error| RunnerError::Internal(format!("waiting for {:?}: {error}", self.agent)))?;
                        exited = Some((status, tokio::time::Instant::now()));
                        continue;
                    }
                },
            };
            let read = read.map_err(|error| RunnerError::Internal(format!("reading {:?}: {error}", self.agent)))?;
            if read == 0 {
                break;
            }
            if let Some(text) = output.push(&chunk[..read]) {
                match (&mut events, &mut log_lines) {
                    (Some(events), _) => events.push(&text).into_iter().for_each(&mut *on_delta),
                    (None, Some(log_lines)) => log_lines.push(&text).into_iter().for_each(&mut *on_delta),
                    (None, None) => on_delta(ModelDelta::Text(text)),
                }
            }
        }
        let status = match exited {
            Some((status, _)) => status,
            None => child
                .wait()
                .await
                .map_err(|error| RunnerError::Internal(format!("waiting for {:?}: {error}", self.agent)))?,
        };
        // The agent has exited: what its stderr said by now is all that is waited for.
        let stderr_text =
            tokio::time::timeout(DRAIN_AFTER_EXIT, stderr_task).await.ok().and_then(Result::ok).unwrap_or_default();
        let text = output.finish().trim().to_string();
        if !status.success() {
            // The program's own word first (its result line, `errors`, `turn.failed`):
            // stderr of these CLIs holds banners, not the reason.
            let own_word = events.and_then(EventLines::failure_reason);
            return Err(RunnerError::Subprocess {
                agent: self.agent.clone(),
                status: status.to_string(),
                stderr: own_word.unwrap_or_else(|| failure_words(&stderr_text, &text)),
            });
        }
        if self.answer == AnswerSource::SmolagentsLog {
            if let Some(why) = smolagents_gave_up(&text) {
                return Err(RunnerError::Subprocess {
                    agent: self.agent.clone(),
                    status: "no answer".into(),
                    stderr: why,
                });
            }
        }
        let read = match events {
            Some(events) => events.finish(),
            None => self.reader.read(&text),
        };
        let mut read = read.map_err(|error| match self.format {
            // A JSON-lines program that exited 0 but reported a failure: its words.
            OutputFormat::Text => RunnerError::Subprocess {
                agent: self.agent.clone(),
                status: "an answer that could not be read".into(),
                stderr: format!("{error}; its output ended with: {}", tail_of(&text, 300)),
            },
            _ => RunnerError::Subprocess { agent: self.agent.clone(), status: status.to_string(), stderr: error },
        })?;
        if let Some(file) = &answer_file {
            let history = read_capped(file, self.max_output_bytes);
            let replies = aider_replies(&history);
            if replies.is_empty() {
                // aider exits 0 when its model failed; what it printed says why.
                return Err(RunnerError::Subprocess {
                    agent: self.agent.clone(),
                    status: "no reply from its model".into(),
                    stderr: failure_words("", &text),
                });
            }
            read.answer = replies.join("\n\n");
        }
        Ok(ModelReply { text: read.answer, tool_calls: Vec::new(), usage: read.usage, cost: read.cost })
    }
}

/// At most `cap` bytes of a file the program wrote, as text (nothing when it wrote none).
fn read_capped(path: &std::path::Path, cap: u64) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(cap).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A program's log, line by line, as progress.
#[derive(Default)]
struct LogLines {
    partial: String,
}

impl LogLines {
    fn push(&mut self, text: &str) -> Vec<ModelDelta> {
        self.partial.push_str(text);
        let mut deltas = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let line = line.trim();
            if !line.is_empty() {
                deltas.push(ModelDelta::Progress { message: crate::runner::truncate(line, 300), data: None });
            }
        }
        deltas
    }
}

/// What a program that failed said about it: the last lines of its stderr, else
/// of its stdout (a program that reports errors on stdout), never nothing.
fn failure_words(stderr: &str, stdout: &str) -> String {
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
fn tail_of(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(limit)).collect()
}

/// An agent's stdout as text: decoded chunk by chunk (an invalid byte becomes
/// U+FFFD and the stream goes on), kept up to a cap; what is over the cap is
/// counted and dropped, and the result says so.
struct CappedOutput {
    text: String,
    pending: Vec<u8>,
    cap: usize,
    dropped: u64,
}

impl CappedOutput {
    fn new(cap: u64) -> CappedOutput {
        CappedOutput {
            text: String::new(),
            pending: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            dropped: 0,
        }
    }

    /// Takes a chunk; returns the text it completes, to stream (none past the cap).
    fn push(&mut self, bytes: &[u8]) -> Option<String> {
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

    fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            let rest = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.text.push_str(&rest);
        }
        if self.dropped > 0 {
            self.text.push_str(&crate::runner::cut_note(self.cap, Some(self.dropped)));
        }
        self.text
    }
}

async fn read_to_end(mut pipe: impl AsyncRead + Unpin) -> String {
    let mut bytes = Vec::new();
    let _ = pipe.read_to_end(&mut bytes).await;
    String::from_utf8_lossy(&bytes).into_owned()
}

#[async_trait]
impl Runner for SubprocessRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        self.run_once(request.prompt_text(), on_delta).await
    }

    fn accepts_tools(&self) -> bool {
        false
    }

    fn steering(&self) -> Steering {
        let taken = match self.request_via {
            RequestVia::Stdin => {
                "on stdin, which is closed after it (the end of input is how the program knows the request is whole)"
            }
            _ => "in its arguments",
        };
        Steering::not(format!(
            "{:?} runs its own loop on the request it was started with: it takes it {taken}, and reads nothing more",
            self.agent
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::CappedOutput;

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
