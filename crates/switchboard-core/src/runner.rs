//! What a runner is: one model step (messages and tools in, streamed deltas and a
//! reply out). The dispatcher owns the tool loop; a runner only talks to its model,
//! so every provider (HTTP, subprocess, demo) plugs into the same loop.

pub mod a2a;
pub mod a2a_card;
mod a2a_progress;
pub mod cache;
pub mod claude;
pub mod cli_events;
pub mod cli_output;
pub mod cli_presets;
pub mod demo;
pub(crate) mod http;
pub mod local;
pub mod mcp;
mod mcp_arguments;
mod mcp_progress;
mod mcp_transport;
pub mod redact;
pub mod sse;
pub mod subprocess;
pub mod tool_tags;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use redact::{redact, Secrets};

use crate::config::{AgentConfig, Provider};
use crate::event::{CallError, CallErrorKind, Usage};

/// One chat message, in the OpenAI wire shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default)]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn user(content: impl Into<String>) -> Message {
        Message::User { content: content.into() }
    }
    pub fn system(content: impl Into<String>) -> Message {
        Message::System { content: content.into() }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::Assistant { content: Some(content.into()), tool_calls: Vec::new() }
    }
    /// The text of the message, whatever its role.
    pub fn text(&self) -> &str {
        match self {
            Message::System { content } | Message::User { content } | Message::Tool { content, .. } => content,
            Message::Assistant { content, .. } => content.as_deref().unwrap_or(""),
        }
    }
}

/// A function call the model asked for, in the OpenAI wire shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, as the model wrote it (it may be invalid).
    pub arguments: String,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> ToolCall {
        ToolCall {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall { name: name.into(), arguments: arguments.into() },
        }
    }
}

/// One model step's input.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    /// OpenAI function definitions, exactly as sent on the wire.
    pub tools: Vec<Value>,
    /// A model for this request instead of the agent's own (an `ask_agent` hint).
    pub model: Option<String>,
    /// `limits.idle_timeout_secs` of the call, over the agent's own setting.
    pub idle_timeout_secs: Option<u64>,
    /// A delegate's structured `context` as its caller gave it (it is also in
    /// `messages`, labelled), for a runner that can pass it on as data.
    pub context: Option<Value>,
}

impl ModelRequest {
    /// The conversation flattened to text, the request last: what an agent without
    /// roles gets (a command line, an MCP tool, an A2A agent), so the earlier
    /// conversation of a persistent entry, the caller's shared messages and the
    /// labelled `context` reach it as they reach an HTTP model. No system prompt.
    pub fn prompt_text(&self) -> String {
        let parts: Vec<&str> = self
            .messages
            .iter()
            .filter(|message| !matches!(message, Message::System { .. }))
            .map(Message::text)
            .filter(|text| !text.is_empty())
            .collect();
        parts.join("\n\n")
    }
}

/// One model step's output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    /// What the step cost, when the agent reported it (a CLI's own price list);
    /// the agent's `prices` win when it has them.
    pub cost: Option<f64>,
}

/// What a runner streams while it works.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelDelta {
    Text(String),
    Reasoning(String),
    Progress {
        message: String,
        data: Option<Value>,
    },
    /// The remote agent asks the user `question`; the answer (or `None`: declined,
    /// or no one can answer) arrives through `answer`.
    InputRequired {
        question: String,
        answer: AnswerSlot,
    },
}

/// Where the user's answer to a runner's question goes: sent once, by whoever
/// answers (the turn's control, or its policy).
#[derive(Clone)]
pub struct AnswerSlot(std::sync::Arc<std::sync::Mutex<Option<tokio::sync::oneshot::Sender<Option<String>>>>>);

impl AnswerSlot {
    /// A slot and the receiver its answer reaches.
    pub fn new() -> (AnswerSlot, tokio::sync::oneshot::Receiver<Option<String>>) {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        (AnswerSlot(std::sync::Arc::new(std::sync::Mutex::new(Some(sender)))), receiver)
    }

    /// Answers; false when it was answered already or no one waits any more.
    pub fn send(&self, answer: Option<String>) -> bool {
        match self.0.lock().unwrap().take() {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }
}

impl std::fmt::Debug for AnswerSlot {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("AnswerSlot")
    }
}

impl PartialEq for AnswerSlot {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("no answer within {secs} s")]
    Timeout { secs: u64 },
    #[error("the stream from {url} was silent for {secs} s (idle_timeout_secs)")]
    Idle { url: String, secs: u64 },
    #[error("HTTP {status} from {url}: {body}")]
    Http { status: u16, url: String, body: String },
    #[error("malformed stream from {url}: {message}")]
    MalformedStream { url: String, message: String },
    #[error("agent {agent:?} exited with {status}: {stderr}")]
    Subprocess { agent: String, status: String, stderr: String },
    #[error("{url} reported a failure: {message}")]
    Remote { url: String, message: String },
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Internal(String),
}

impl RunnerError {
    /// The classification a call that fails with this error reports.
    pub fn kind(&self) -> CallErrorKind {
        match self {
            RunnerError::Unreachable { .. } => CallErrorKind::Unreachable,
            RunnerError::Timeout { .. } | RunnerError::Idle { .. } => CallErrorKind::Timeout,
            RunnerError::Http { .. } => CallErrorKind::Http,
            RunnerError::MalformedStream { .. } => CallErrorKind::MalformedStream,
            RunnerError::Subprocess { .. } => CallErrorKind::Subprocess,
            RunnerError::Remote { .. } => CallErrorKind::Remote,
            RunnerError::Config(_) => CallErrorKind::Config,
            RunnerError::Internal(_) => CallErrorKind::Internal,
        }
    }

    /// This error as a call reports it.
    pub fn to_call_error(&self) -> CallError {
        CallError::new(self.kind(), self.to_string())
    }
}

/// `text` cut to `limit` characters, with an ellipsis when cut: for excerpts of
/// what a server or a program wrote, in errors and progress lines.
pub(crate) fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(limit).collect::<String>())
    }
}

/// The note an answer cut at `max_output_bytes` ends with (`dropped`: how much
/// was left out, when it is known).
pub(crate) fn cut_note(limit: impl std::fmt::Display, dropped: Option<u64>) -> String {
    match dropped {
        Some(dropped) => {
            format!("\n[output cut at {limit} bytes (max_output_bytes): {dropped} more bytes were dropped]")
        }
        None => format!("\n[output cut at {limit} bytes (max_output_bytes): the rest was dropped]"),
    }
}

/// A model step bounded by `secs`: a `timeout` error when it takes longer (the
/// step's future, and what it holds, is dropped).
pub(crate) async fn within(
    secs: u64,
    step: impl std::future::Future<Output = Result<ModelReply, RunnerError>>,
) -> Result<ModelReply, RunnerError> {
    tokio::time::timeout(std::time::Duration::from_secs(secs), step).await.unwrap_or(Err(RunnerError::Timeout { secs }))
}

/// The first progress line of a remote call: where it goes, and how long getting
/// there took (the tree marks the call remote from its `data.remote`).
pub(crate) fn remote_connected(endpoint: &str, connected: std::time::Duration) -> ModelDelta {
    let connect_ms = connected.as_millis() as u64;
    ModelDelta::Progress {
        message: format!("remote {endpoint}: connected in {connect_ms} ms"),
        data: Some(serde_json::json!({ "remote": { "endpoint": endpoint, "connect_ms": connect_ms } })),
    }
}

/// The last progress line of a remote call: its latency split.
pub(crate) fn remote_latency(
    endpoint: &str,
    connected: std::time::Duration,
    first_event: std::time::Duration,
    total: std::time::Duration,
) -> ModelDelta {
    let ms = |duration: std::time::Duration| duration.as_millis() as u64;
    let (connect_ms, first_event_ms, total_ms) = (ms(connected), ms(first_event), ms(total));
    ModelDelta::Progress {
        message: format!(
            "remote {endpoint}: connect {connect_ms} ms, first event {first_event_ms} ms, total {total_ms} ms"
        ),
        data: Some(serde_json::json!({ "remote": {
            "endpoint": endpoint, "connect_ms": connect_ms, "first_event_ms": first_event_ms, "total_ms": total_ms,
        }})),
    }
}

/// The most one stream event (or one CLI's output) of `agent` may hold:
/// `max_output_bytes`, 10 MB when absent.
pub(crate) fn max_output_bytes(agent: &AgentConfig) -> usize {
    usize::try_from(agent.max_output_bytes.unwrap_or(subprocess::DEFAULT_MAX_OUTPUT_BYTES)).unwrap_or(usize::MAX)
}

/// Receives deltas as they stream.
pub type DeltaSink<'a> = &'a mut (dyn FnMut(ModelDelta) + Send);

/// One agent's connection to its model.
#[async_trait]
pub trait Runner: Send + Sync {
    /// Runs one model step, streaming deltas into `on_delta` as they arrive.
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError>;

    /// Whether this runner's model can be offered tools (spec section 5: v1
    /// callers are OpenAI-compatible runners; subprocess agents are targets only).
    fn accepts_tools(&self) -> bool {
        true
    }
}

/// Builds the runner for an agent (the standard runner-building path of spec
/// section 3), wrapped so that nothing it hands on holds the agent's secrets.
pub fn build(agent: &AgentConfig) -> Result<std::sync::Arc<dyn Runner>, RunnerError> {
    let inner = build_bare(agent)?;
    Ok(std::sync::Arc::new(redact::Redacting { inner, agent: agent.clone() }))
}

fn build_bare(agent: &AgentConfig) -> Result<std::sync::Arc<dyn Runner>, RunnerError> {
    match agent.provider {
        Provider::Demo => Ok(std::sync::Arc::new(demo::DemoRunner::new(agent))),
        Provider::Local => Ok(std::sync::Arc::new(local::LocalRunner::new(agent)?)),
        Provider::ClaudeCli => Ok(std::sync::Arc::new(claude::ClaudeRunner::new(agent))),
        Provider::Subprocess
        | Provider::AiderCli
        | Provider::Smolagents
        | Provider::ClaudeCode
        | Provider::Codex
        | Provider::GeminiCli
        | Provider::QwenCode => Ok(std::sync::Arc::new(subprocess::SubprocessRunner::new(agent)?)),
        Provider::Mcp => Ok(std::sync::Arc::new(mcp::McpRunner::new(agent)?)),
        Provider::A2a => Ok(std::sync::Arc::new(a2a::A2aRunner::new(agent)?)),
    }
}
