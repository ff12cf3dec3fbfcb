//! The one event stream of a turn: every call of the tree, root and tool-agents at
//! any depth, reports through these past-tense facts, numbered by `seq` in the
//! order they happened. The CLI prints them, the desktop app draws them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;
// u64 counts and free-form JSON cross to TypeScript as `number` and `unknown`:
// token counts and epoch milliseconds stay far below 2^53.
use specta_typescript::{Number, Unknown};

/// Milliseconds since the Unix epoch, as events and session records carry them.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

/// Token counts; `None` on the wire (null) where a provider did not report them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Usage {
    #[specta(type = Number)]
    pub input_tokens: u64,
    #[specta(type = Number)]
    pub output_tokens: u64,
    #[specta(type = Number)]
    pub total_tokens: u64,
}

impl Usage {
    pub fn new(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage { input_tokens, output_tokens, total_tokens: input_tokens.saturating_add(output_tokens) }
    }

    /// Sums saturate: the counts come from peers, and a peer's 2^64 - 1 must not
    /// panic a turn (it reads as "at least this much", which any budget stops).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Error,
    Cancelled,
    Denied,
    Limited,
}

impl CallStatus {
    /// The name on the wire (`ok`, `error`, `cancelled`, `denied`, `limited`).
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Denied => "denied",
            CallStatus::Limited => "limited",
        }
    }
}

/// Why a call is running: the user's turn, a tool-agent call, or an escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CallRole {
    Turn,
    Tool,
    Escalation,
    /// An `ask_model` call: one answer, no tools.
    Advisor,
}

/// A structured error, as the app and the calling model see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CallError {
    pub kind: CallErrorKind,
    pub message: String,
}

impl CallError {
    pub fn new(kind: CallErrorKind, message: impl Into<String>) -> CallError {
        CallError { kind, message: message.into() }
    }

    /// The status a call that ended with this error has.
    pub fn status(&self) -> CallStatus {
        self.kind.status()
    }
}

/// Why a call failed or was refused: a closed set, so the UI and the tests switch on
/// it. ARCHITECTURE.md lists what causes each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CallErrorKind {
    // A runner failed while the call ran (status `error`).
    /// The model server could not be reached.
    Unreachable,
    /// A runner's model step, or the call as a whole (`limits.timeout_secs`), took too long.
    Timeout,
    /// The model server answered with an HTTP error.
    Http,
    /// The model server's stream broke, ended early or was not valid.
    MalformedStream,
    /// A subprocess agent exited with a failure or could not be started.
    Subprocess,
    /// A remote agent (an MCP tool, an A2A agent) answered with a failure.
    Remote,
    /// The agent's config cannot build a runner.
    Config,
    /// A bug of ours.
    Internal,
    // The dispatcher refused the call before it ran.
    /// The agent named is not configured (status `error`).
    UnknownAgent,
    /// The model called a tool that does not exist (status `error`).
    UnknownTool,
    /// The model's arguments are not a JSON object with the required fields (status `error`).
    BadArguments,
    /// The tool exists but was not offered to this caller here (status `limited`).
    NotOffered,
    /// The target is already on the call path (status `limited`).
    Cycle,
    /// The turn made `limits.max_calls_per_turn` delegations already (status `limited`).
    MaxCallsPerTurn,
    /// The turn's token or cost budget is spent (status `limited`).
    Budget,
    /// Narrowing (`limits.narrow_delegation`) keeps a delegate to what its caller
    /// could call, and the target is not among them (status `limited`).
    Narrowed,
    /// The config (`approval: deny`), the user or the approval policy said no (status `denied`).
    Denied,
    // The call stopped while it ran.
    /// The user cancelled the call or its turn (status `cancelled`).
    Cancelled,
    /// The call reached `limits.max_steps` model steps without a final answer (status `limited`).
    Limited,
}

impl CallErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [CallErrorKind; 19] = [
        CallErrorKind::Unreachable,
        CallErrorKind::Timeout,
        CallErrorKind::Http,
        CallErrorKind::MalformedStream,
        CallErrorKind::Subprocess,
        CallErrorKind::Remote,
        CallErrorKind::Config,
        CallErrorKind::Internal,
        CallErrorKind::UnknownAgent,
        CallErrorKind::UnknownTool,
        CallErrorKind::BadArguments,
        CallErrorKind::NotOffered,
        CallErrorKind::Cycle,
        CallErrorKind::MaxCallsPerTurn,
        CallErrorKind::Budget,
        CallErrorKind::Narrowed,
        CallErrorKind::Denied,
        CallErrorKind::Cancelled,
        CallErrorKind::Limited,
    ];

    /// The name on the wire (`unreachable`, `max_calls_per_turn`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CallErrorKind::Unreachable => "unreachable",
            CallErrorKind::Timeout => "timeout",
            CallErrorKind::Http => "http",
            CallErrorKind::MalformedStream => "malformed_stream",
            CallErrorKind::Subprocess => "subprocess",
            CallErrorKind::Remote => "remote",
            CallErrorKind::Config => "config",
            CallErrorKind::Internal => "internal",
            CallErrorKind::UnknownAgent => "unknown_agent",
            CallErrorKind::UnknownTool => "unknown_tool",
            CallErrorKind::BadArguments => "bad_arguments",
            CallErrorKind::NotOffered => "not_offered",
            CallErrorKind::Cycle => "cycle",
            CallErrorKind::MaxCallsPerTurn => "max_calls_per_turn",
            CallErrorKind::Budget => "budget",
            CallErrorKind::Narrowed => "narrowed",
            CallErrorKind::Denied => "denied",
            CallErrorKind::Cancelled => "cancelled",
            CallErrorKind::Limited => "limited",
        }
    }

    /// The status of a call that ends with this kind of error: a limit is `limited`,
    /// a no is `denied`, a cancel is `cancelled`, anything else an `error`.
    pub fn status(self) -> CallStatus {
        match self {
            CallErrorKind::NotOffered
            | CallErrorKind::Cycle
            | CallErrorKind::MaxCallsPerTurn
            | CallErrorKind::Budget
            | CallErrorKind::Narrowed
            | CallErrorKind::Limited => CallStatus::Limited,
            CallErrorKind::Denied => CallStatus::Denied,
            CallErrorKind::Cancelled => CallStatus::Cancelled,
            CallErrorKind::Unreachable
            | CallErrorKind::Timeout
            | CallErrorKind::Http
            | CallErrorKind::MalformedStream
            | CallErrorKind::Subprocess
            | CallErrorKind::Remote
            | CallErrorKind::Config
            | CallErrorKind::Internal
            | CallErrorKind::UnknownAgent
            | CallErrorKind::UnknownTool
            | CallErrorKind::BadArguments => CallStatus::Error,
        }
    }
}

impl std::fmt::Display for CallErrorKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Receives every event of a turn, in order. Called under the turn's event lock,
/// so it must be quick (push to a channel, write a line).
pub type EventSink = std::sync::Arc<dyn Fn(CallEvent) + Send + Sync>;

/// One event of a turn's call tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct CallEvent {
    /// Strictly increasing within a turn.
    #[specta(type = Number)]
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    #[specta(type = Number)]
    pub ts_ms: u64,
    pub call_id: String,
    /// `None` for the root call of the turn.
    pub parent_id: Option<String>,
    pub agent: String,
    /// 0 for the root.
    pub depth: u32,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    CallStarted {
        role: CallRole,
        /// The tool the parent called (`agent_x`, `escalate`); `None` for the root.
        tool_name: Option<String>,
        /// What the child was asked: `{request, context}` for a tool call.
        #[specta(type = Option<Unknown>)]
        input: Option<Value>,
        /// The tool names this call is offered, in the order sent to the model.
        tools: Vec<String>,
        model: Option<String>,
        /// Whether a message can be sent into the call while it runs, and how.
        #[serde(default)]
        steering: Steering,
    },
    /// The call's model ended a step asking for these tool calls, in its order (each
    /// becomes a child call, in the same order). Kept so an interrupted turn can
    /// be resumed from its primary's last step.
    ToolCallsAsked {
        calls: Vec<AskedCall>,
    },
    /// A message was sent into the running call (`steer_call`). `taken`: the call
    /// took it in (an HTTP agent, as a user message before its next model step; an
    /// A2A agent accepted it on its task); false when the call ended first and
    /// never saw it, or the remote agent refused it (`why`).
    CallSteered {
        message: String,
        /// `user` (the app, a terminal).
        by: String,
        taken: bool,
        /// Why a message was not taken, when more is known than that the call ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    ToolProgress {
        message: String,
        #[specta(type = Option<Unknown>)]
        data: Option<Value>,
    },
    /// The call's own usage and its subtree total changed (live, while it runs).
    UsageUpdated {
        usage: Usage,
        usage_total: Usage,
        /// Cost of `usage` at the agent's prices; null when it has none.
        cost: Option<f64>,
        /// Cost of the subtree, over the calls whose agents have prices.
        cost_total: Option<f64>,
    },
    /// The call waits for the user's yes before it runs.
    ApprovalRequested {
        tool_name: String,
        /// What the delegate would be sent: `{request, context}`.
        #[specta(type = Option<Unknown>)]
        input: Option<Value>,
        /// The limits the call would run under.
        limits: ApprovalLimits,
    },
    ApprovalResolved {
        decision: ApprovalDecision,
        /// `user`, or `policy` when the turn answers every request itself (`--approve`).
        by: String,
    },
    /// A remote agent asks the user a question before it can go on (an A2A task in
    /// `input-required`); the call waits for `answer_input` (its timeout still runs).
    InputRequested {
        question: String,
    },
    /// The question was answered (`answer`), or declined: no answer, and the call
    /// ends with a `remote` error. `by`: `user`, or `policy` when no one can answer
    /// (`--approve all|none`, no terminal).
    InputAnswered {
        answer: Option<String>,
        by: String,
    },
    Escalated {
        from: String,
        to: String,
        reason: Option<String>,
    },
    CallFinished {
        status: CallStatus,
        /// The final text (for a tool call: as the child produced it, before fencing).
        result: Option<String>,
        usage: Option<Usage>,
        usage_total: Option<Usage>,
        cost: Option<f64>,
        cost_total: Option<f64>,
        /// Model steps the call took (`turns` in logs written before 2026-12-05).
        #[serde(alias = "turns")]
        steps: u32,
        error: Option<CallError>,
        /// What the parent model received as the tool result (fenced), if any.
        delivered: Option<String>,
    },
}

/// Whether a running call can be steered: sent a message it takes in before it
/// ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "way", rename_all = "snake_case")]
pub enum Steering {
    /// The dispatcher runs this call's model loop: a message is added as a user
    /// message before its next model step (after the step streaming now, and the
    /// delegates it waits for).
    NextStep,
    /// A remote agent's task (A2A): a message is sent at once as a message on the
    /// task, which the agent reads when it chooses (Google's A2A server passes it to
    /// its model at once; an `a2a-sdk` agent runs messages on a task one after
    /// another, so one that finishes first never reads it).
    OnTask,
    /// A CLI agent that holds a conversation on its stdin (Claude Code, read as
    /// `--input-format stream-json`): a message is written there at once as the
    /// next user message, which the agent reads when the turn it is on ends; the
    /// call ends once every message was answered, with the last answer.
    Stdin,
    /// Not steerable, and why (the agent runs its own loop on a request given once).
    Not { why: String },
}

impl Default for Steering {
    /// What a call logged before steering existed reads as.
    fn default() -> Steering {
        Steering::Not { why: "this call was logged before calls could be steered".into() }
    }
}

impl Steering {
    pub fn not(why: impl Into<String>) -> Steering {
        Steering::Not { why: why.into() }
    }

    /// Whether the runner delivers the messages itself while its step runs (they
    /// ride in `ModelRequest::steers`), rather than the tool loop before a step.
    pub fn delivered_by_runner(&self) -> bool {
        matches!(self, Steering::OnTask | Steering::Stdin)
    }
}

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    ApproveOnce,
    /// Approve this call and every later call to the same delegate in this session.
    ApproveAlways,
    Deny,
}

impl ApprovalDecision {
    /// The name on the wire (`approve_once`, `approve_always`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::ApproveOnce => "approve_once",
            ApprovalDecision::ApproveAlways => "approve_always",
            ApprovalDecision::Deny => "deny",
        }
    }
}

/// One tool call as a model asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct AskedCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
}

/// The limits shown with an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ApprovalLimits {
    /// Whether the delegate may delegate further (its depth is below `max_depth`).
    pub may_delegate: bool,
    pub depth: u32,
    pub max_depth: u32,
    /// Tool-agent calls left in this turn after this one.
    pub calls_left: u32,
    pub timeout_secs: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_match_serde() {
        let statuses =
            [CallStatus::Ok, CallStatus::Error, CallStatus::Cancelled, CallStatus::Denied, CallStatus::Limited];
        for status in statuses {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        for decision in [ApprovalDecision::ApproveOnce, ApprovalDecision::ApproveAlways, ApprovalDecision::Deny] {
            assert_eq!(serde_json::to_value(decision).unwrap(), decision.as_str());
        }
        for kind in CallErrorKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert_eq!(serde_json::from_value::<CallErrorKind>(kind.as_str().into()).unwrap(), kind);
        }
    }

    #[test]
    fn a_log_written_before_steps_were_named_so_still_reads() {
        let old = r#"{"type":"call_finished","status":"ok","result":"x","usage":null,"usage_total":null,"cost":null,"cost_total":null,"turns":3,"error":null,"delivered":null}"#;
        let EventKind::CallFinished { steps, .. } = serde_json::from_str(old).unwrap() else { panic!("a finish") };
        assert_eq!(steps, 3);
        let new = serde_json::to_value(EventKind::CallFinished {
            status: CallStatus::Ok,
            result: None,
            usage: None,
            usage_total: None,
            cost: None,
            cost_total: None,
            steps: 2,
            error: None,
            delivered: None,
        })
        .unwrap();
        assert_eq!((new.get("steps"), new.get("turns")), (Some(&serde_json::json!(2)), None));
    }
}
