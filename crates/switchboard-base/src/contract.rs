//! The contract between the dispatcher and every runner: the conversation
//! (`Message`, `ToolCall`: roles, text, tool calls and their results; serialized in
//! the OpenAI shape, which the OpenAI-compatible runner sends as it is and every
//! other runner translates), the tools offered (`ToolSpec`: a name, words and a
//! JSON Schema, each runner writing its own wire shape), what one call to an
//! agent's backend takes and gives
//! (`ModelRequest`, `ModelReply`, the streamed `ModelDelta`s), how it fails
//! (`RunnerError`), and the `Runner` trait itself. The dispatcher, the sessions and
//! every runner family import this floor; it imports only the config and the
//! event types.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{CallError, CallErrorKind, Steering, Usage};

/// One chat message (serialized in the OpenAI wire shape).
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

/// A function call the model asked for (serialized in the OpenAI wire shape).
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

/// A message sent into a running call, waiting for it to take it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SteerMessage {
    pub message: String,
    pub by: String,
}

/// Messages sent into one running call, in the order sent, and a wake-up for a
/// runner that delivers them itself while its step runs (`Steering::OnTask`, an
/// A2A task; `Steering::Stdin`, Claude Code's stdin).
#[derive(Debug, Default)]
pub struct SteerQueue {
    messages: Mutex<Vec<SteerMessage>>,
    arrived: tokio::sync::Notify,
}

impl SteerQueue {
    pub fn push(&self, message: SteerMessage) {
        self.messages.lock().unwrap().push(message);
        // A permit is kept when no one waits: a message is never missed.
        self.arrived.notify_one();
    }

    /// Every message waiting, oldest first; the queue is empty after.
    pub fn take(&self) -> Vec<SteerMessage> {
        std::mem::take(&mut *self.messages.lock().unwrap())
    }

    pub fn is_empty(&self) -> bool {
        self.messages.lock().unwrap().is_empty()
    }

    /// Returns once a message was sent since the last wait (at once if one was).
    pub async fn arrived(&self) {
        self.arrived.notified().await;
    }
}

/// Returns when a message was sent into a call's inbox (never, for a call that
/// has none). Cancel-safe: a message that comes meanwhile is not missed.
pub async fn steer_arrived(inbox: Option<&SteerInbox>) {
    match inbox {
        Some(inbox) => inbox.arrived().await,
        None => std::future::pending().await,
    }
}

/// A running call's queue, shared by the turn's control and the call.
pub type SteerInbox = Arc<SteerQueue>;

/// A tool offered to a model, as every runner gets it: each writes its own wire
/// shape (an OpenAI-compatible server's `function`, Anthropic's `input_schema`, a
/// Claude session's list in its instructions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub parameters: Value,
}

/// The input of one call to an agent's backend.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// A model for this request instead of the agent's own (an `ask_agent` hint).
    pub model: Option<String>,
    /// `limits.idle_timeout_secs` of the call, over the agent's own setting.
    pub idle_timeout_secs: Option<u64>,
    /// A delegate's structured `context` as its caller gave it (it is also in
    /// `messages`, labelled), for a runner that can pass it on as data.
    pub context: Option<Value>,
    /// Messages sent into the running call, for a runner that delivers them itself
    /// while its step runs (`Steering::OnTask` or `Steering::Stdin`); reported with
    /// `ModelDelta::Steered`.
    pub steers: Option<SteerInbox>,
    /// A task the agent's server kept running for this call when the process that
    /// started it died (a resumed turn's call, read from the log): a runner that
    /// can (an `mcp` agent over HTTP, an A2A agent) follows it to its end instead of
    /// asking again, if it was started on the server the agent names now and that
    /// server still has it; otherwise it asks again. The other runners ignore it.
    pub remote_task: Option<RemoteTask>,
}

/// A remote task as its runner logged it when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTask {
    pub id: String,
    /// Where it was started: the endpoint its runner called (an MCP server's URL,
    /// an A2A agent's endpoint). The id goes to no other.
    pub server: String,
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

/// The output of one call to an agent's backend.
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
    /// A message from `ModelRequest::steers` was delivered (`taken`), or refused
    /// by the remote agent, and why.
    Steered {
        message: String,
        by: String,
        taken: bool,
        why: Option<String>,
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
    /// The agent's program did not start (not found, not executable, no such
    /// working folder): said in words that name the program and what to do.
    #[error("cannot start agent {agent:?}: {message}")]
    NotStarted { agent: String, message: String },
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
            RunnerError::Subprocess { .. } | RunnerError::NotStarted { .. } => CallErrorKind::Subprocess,
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

/// Receives deltas as they stream.
pub type DeltaSink<'a> = &'a mut (dyn FnMut(ModelDelta) + Send);

/// One agent's backend: an OpenAI-compatible model, a CLI agent, a remote MCP
/// tool or A2A agent, or the demo.
#[async_trait]
pub trait Runner: Send + Sync {
    /// One call to the agent's backend, streaming deltas into `on_delta` as they
    /// arrive: for an HTTP model one model step (the dispatcher owns its tool
    /// loop); for a CLI agent, an MCP tool or an A2A agent a whole run of that
    /// agent, which owns its own loop.
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError>;

    /// Whether this runner's model can be offered tools: only OpenAI-compatible
    /// models call tools here; CLI and remote agents are delegates only.
    fn accepts_tools(&self) -> bool {
        true
    }

    /// Whether a running call of this runner can be sent a message: a model whose
    /// loop the dispatcher runs takes it before its next step; an agent that runs
    /// its own loop says why it cannot.
    fn steering(&self) -> Steering {
        Steering::NextStep
    }
}
