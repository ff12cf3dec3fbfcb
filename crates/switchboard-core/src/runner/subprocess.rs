//! Subprocess agents (`subprocess`, `aider-cli`): one process per call, the request
//! on the command line, stdout streamed back as text. A call owns its process group,
//! so cancelling it (dropping the future) ends the agent and everything it started:
//! SIGTERM to the group at once, SIGKILL after a grace period. Subprocess agents are
//! targets only (spec section 5, v1): they are offered no tools.

use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::{DeltaSink, Message, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError};
use crate::config::{AgentConfig, Provider};

/// Where the request goes in the arguments; appended when no argument holds it.
pub const REQUEST_PLACEHOLDER: &str = "{request}";

/// How long a cancelled agent has to exit after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// Used when an agent sets no `timeout_secs`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

#[derive(Debug)]
pub struct SubprocessRunner {
    agent: String,
    command: String,
    args: Vec<String>,
    timeout_secs: u64,
}

impl SubprocessRunner {
    pub fn new(agent: &AgentConfig) -> Result<SubprocessRunner, RunnerError> {
        let (command, args) = match agent.provider {
            // aider in one-shot mode; the arguments can be replaced in the config.
            Provider::AiderCli => (
                agent.command.clone().unwrap_or_else(|| "aider".into()),
                if agent.args.is_empty() {
                    [
                        "--message",
                        REQUEST_PLACEHOLDER,
                        "--yes-always",
                        "--no-pretty",
                        "--no-check-update",
                        "--analytics-disable",
                    ]
                    .map(String::from)
                    .to_vec()
                } else {
                    agent.args.clone()
                },
            ),
            _ => (
                agent
                    .command
                    .clone()
                    .ok_or_else(|| RunnerError::Config(format!("agent {:?} has no command", agent.name)))?,
                agent.args.clone(),
            ),
        };
        Ok(SubprocessRunner {
            agent: agent.name.clone(),
            command,
            args,
            timeout_secs: agent.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS),
        })
    }

    /// The arguments for `request`: the placeholder replaced, or the request appended.
    pub fn arguments_for(&self, request: &str) -> Vec<String> {
        if self.args.iter().any(|argument| argument.contains(REQUEST_PLACEHOLDER)) {
            self.args.iter().map(|argument| argument.replace(REQUEST_PLACEHOLDER, request)).collect()
        } else {
            let mut arguments = self.args.clone();
            arguments.push(request.to_string());
            arguments
        }
    }

    async fn run(&self, prompt: String, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let mut command = Command::new(&self.command);
        command
            .args(self.arguments_for(&prompt))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().map_err(|error| RunnerError::Unreachable {
            url: self.command.clone(),
            message: format!("cannot start agent {:?}: {error}", self.agent),
        })?;
        let group = ProcessGroup(child.id().map(|id| Pid::from_raw(id as i32)));
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let stderr_task = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text).await;
            text
        });
        let mut output = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut pending_utf8: Vec<u8> = Vec::new();
        loop {
            let read = stdout
                .read(&mut chunk)
                .await
                .map_err(|error| RunnerError::Internal(format!("reading {:?}: {error}", self.agent)))?;
            if read == 0 {
                break;
            }
            output.extend_from_slice(&chunk[..read]);
            pending_utf8.extend_from_slice(&chunk[..read]);
            // Stream whole UTF-8 characters only.
            let valid = match std::str::from_utf8(&pending_utf8) {
                Ok(text) => text.len(),
                Err(error) => error.valid_up_to(),
            };
            if valid > 0 {
                let text: Vec<u8> = pending_utf8.drain(..valid).collect();
                on_delta(ModelDelta::Text(String::from_utf8_lossy(&text).into_owned()));
            }
        }
        let status = child
            .wait()
            .await
            .map_err(|error| RunnerError::Internal(format!("waiting for {:?}: {error}", self.agent)))?;
        group.finished();
        let stderr_text = stderr_task.await.unwrap_or_default();
        let text = String::from_utf8_lossy(&output).trim().to_string();
        if !status.success() {
            let tail: String =
                stderr_text.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
            return Err(RunnerError::Subprocess {
                agent: self.agent.clone(),
                status: status.to_string(),
                stderr: tail,
            });
        }
        Ok(ModelReply { text, tool_calls: Vec::new(), usage: None })
    }
}

/// The prompt a subprocess agent gets: its conversation flattened to text (the
/// request last), since a command line has no roles.
fn prompt_of(request: &ModelRequest) -> String {
    let parts: Vec<&str> = request
        .messages
        .iter()
        .filter(|message| !matches!(message, Message::System { .. }))
        .map(Message::text)
        .filter(|text| !text.is_empty())
        .collect();
    parts.join("\n\n")
}

/// Ends the process group when dropped before `finished` (the call was cancelled
/// or timed out): SIGTERM now, SIGKILL after the grace period.
struct ProcessGroup(Option<Pid>);

impl ProcessGroup {
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let Some(group) = self.0.take() else { return };
        if killpg(group, Signal::SIGTERM).is_err() {
            return;
        }
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            let _ = killpg(group, Signal::SIGKILL);
        });
    }
}

#[async_trait]
impl Runner for SubprocessRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secs = self.timeout_secs;
        tokio::time::timeout(Duration::from_secs(secs), self.run(prompt_of(request), on_delta))
            .await
            .unwrap_or(Err(RunnerError::Timeout { secs }))
    }

    fn accepts_tools(&self) -> bool {
        false
    }
}
