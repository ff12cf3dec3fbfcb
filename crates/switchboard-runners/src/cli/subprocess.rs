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
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::events::EventLines;
use super::output::{aider_replies, smolagents_gave_up, OutputReader};
use super::presets::{invocation, AnswerSource};
use crate::config::{AgentConfig, OutputFormat, Provider, RequestVia};
use crate::contract::{
    steer_arrived, DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, SteerInbox,
};
use crate::event::Steering;
use crate::registry::{ProcessGroup, Registry};
use crate::DEFAULT_MAX_OUTPUT_BYTES;

mod reading;

use reading::{failure_words, read_capped, read_tail, tail_of, CappedOutput, LogLines, STDERR_TAIL};

pub use crate::registry::GRACE;

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
    /// The preset's provider: a request that starts like one of its program's own
    /// commands is made text first (`presets::as_text_for`).
    provider: Provider,
    /// The request goes on stdin as the first user message of a conversation in
    /// JSON lines (Claude Code's `--input-format stream-json`), and stdin stays
    /// open while the call runs, for the messages it is steered with.
    conversation: bool,
}

impl SubprocessRunner {
    pub fn new(agent: &AgentConfig, registry: Arc<Registry>) -> Result<SubprocessRunner, RunnerError> {
        let invocation = invocation(agent);
        let command =
            invocation.command.ok_or_else(|| RunnerError::Config(format!("agent {:?} has no command", agent.name)))?;
        let reader = OutputReader::new(&invocation.output)
            .map_err(|error| RunnerError::Config(format!("agent {:?}: {error}", agent.name)))?;
        let runner = SubprocessRunner {
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
            provider: agent.provider,
            conversation: false,
        };
        // The `claude-code` preset: Claude Code reads its stdin as stream-json.
        Ok(if agent.provider == Provider::ClaudeCode { runner.with_conversation_on_stdin() } else { runner })
    }

    /// The same runner, holding a conversation on stdin (see `conversation`).
    pub fn with_conversation_on_stdin(mut self) -> SubprocessRunner {
        self.conversation = true;
        self.request_via = RequestVia::Stdin;
        self
    }

    /// The arguments for `request`. Inside a template argument (`--message={request}`)
    /// it cannot be an option; as a whole argument it is refused when it starts with
    /// `-`; with no placeholder it is appended after `--`; on stdin it is not in
    /// the arguments at all.
    pub fn arguments_for(&self, request: &str) -> Result<Vec<String>, RunnerError> {
        let request = &*super::presets::as_text_for(self.provider, request);
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
        crate::environment::of(&self.agent, self.api_key_env.as_deref(), &self.env)
    }

    /// Runs the program once with `prompt`, within the agent's timeout.
    pub async fn run_once(&self, prompt: String, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        self.run_steered(prompt, None, on_delta).await
    }

    /// Runs the program once with `prompt`; a runner holding a conversation on
    /// stdin writes each message sent into `steers` there as the next user message
    /// (reported with `ModelDelta::Steered`), and closes stdin once the program
    /// has answered every message (its `result` lines): then it exits.
    pub async fn run_steered(
        &self,
        prompt: String,
        steers: Option<SteerInbox>,
        on_delta: DeltaSink<'_>,
    ) -> Result<ModelReply, RunnerError> {
        let secs = self.timeout_secs;
        crate::within(secs, self.run(prompt, steers.filter(|_| self.conversation), on_delta)).await
    }

    async fn run(
        &self,
        prompt: String,
        steers: Option<SteerInbox>,
        on_delta: DeltaSink<'_>,
    ) -> Result<ModelReply, RunnerError> {
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
        // A conversation's stdin stays here, open until every message is answered.
        let mut conversation = None;
        let mut messages_written = 0usize;
        if self.conversation {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            write_user_message(&mut stdin, &prompt).await;
            messages_written = 1;
            conversation = Some(stdin);
        } else if let Some(mut stdin) = child.stdin.take() {
            // Written aside, so a program that does not read its input cannot hold
            // the call; the pipe closes when the writing ends.
            let request = prompt.clone().into_bytes();
            tokio::spawn(async move {
                let _ = stdin.write_all(&request).await;
            });
        }
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stderr_task = tokio::spawn(read_tail(stderr, STDERR_TAIL));
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
                    () = steer_arrived(steers.as_ref()), if conversation.is_some() => {
                        let Some(stdin) = conversation.as_mut() else { continue };
                        for steer in steers.as_ref().map(|inbox| inbox.take()).unwrap_or_default() {
                            let written = write_user_message(stdin, &steer.message).await;
                            messages_written += usize::from(written);
                            let why = (!written).then(|| "the program's stdin was closed".to_string());
                            on_delta(ModelDelta::Steered { message: steer.message, by: steer.by, taken: written, why });
                        }
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
            // Every message answered and none waiting: stdin closes, and the program ends.
            if conversation.is_some()
                && events.as_ref().map_or(0, EventLines::results) >= messages_written
                && steers.as_ref().is_none_or(|inbox| inbox.is_empty())
            {
                conversation = None;
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

/// Writes `text` as one user message of a JSON-lines conversation; false when
/// the program's stdin is closed.
async fn write_user_message(stdin: &mut tokio::process::ChildStdin, text: &str) -> bool {
    let message = serde_json::json!({ "type": "user", "message": { "role": "user", "content": text } });
    let mut line = message.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await.is_ok() && stdin.flush().await.is_ok()
}

#[async_trait]
impl Runner for SubprocessRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        self.run_steered(request.prompt_text(), request.steers.clone(), on_delta).await
    }

    fn accepts_tools(&self) -> bool {
        false
    }

    fn steering(&self) -> Steering {
        if self.conversation {
            return Steering::Stdin;
        }
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
