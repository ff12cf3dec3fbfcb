//! A resumed turn's calls that need not run again: the tool-agent calls its
//! primary made in the interrupted turn that finished `ok` are kept (in the log) with
//! what they were asked; when the resumed turn's primary asks the same agent the
//! same thing, the kept answer is handed back (fenced anew, by `call.rs`) without
//! running the agent; a call that was running as a remote task is followed to
//! that task's end rather than asked again; and where the primary picks up (`Continuation`): after its
//! last model step, not from the start. Pure: what a call's node shows as its
//! input, and the lookup.

use std::sync::Mutex;

use serde_json::{json, Value};

use crate::contract::{Message, RemoteTask, ToolCall};

/// Where a resumed turn's primary picks up: the model steps of the interrupted
/// turn that ended (each its assistant message and every tool result), and the last
/// one, if its tool calls had not all answered (they run again, or are handed back
/// from the log when they had finished).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Continuation {
    pub from_turn: String,
    /// The messages after the user's, of the steps whose tool calls all answered.
    pub messages: Vec<Message>,
    /// The last step's text and tool calls, when some had not answered.
    pub pending: Option<(Option<String>, Vec<ToolCall>)>,
    /// The model steps the interrupted turn's primary had taken.
    pub steps: u32,
}

/// One call of an interrupted turn that need not be paid for again: one that
/// finished, or one whose agent's server kept its task running.
#[derive(Debug, Clone, PartialEq)]
pub struct ReusedCall {
    pub agent: String,
    /// The tool the primary called (`agent_x`, `ask_agent`…) and its input as the
    /// call's node showed it (`request`, `context`, `model`).
    pub tool_name: String,
    pub input: Value,
    pub kept: Kept,
    /// Where it was answered.
    pub from_turn: String,
    pub from_call: String,
}

/// What is kept of a call of an interrupted turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Kept {
    /// It finished `ok`: the delegate's answer, handed back without running it.
    Answer(String),
    /// It was running as a task of its agent's server (an `mcp` agent's task, an A2A
    /// task), whose id the log holds: the call runs again following that task
    /// (`ModelRequest::remote_task`), not asking again where the server still has it.
    RemoteTask(RemoteTask),
}

/// The input a delegation's node shows (what `ReusedCall::input` is matched on).
pub(super) fn node_input(request: &str, context: Option<&Value>, model: Option<&str>) -> Value {
    let mut input = json!({ "request": request });
    if let Some(context) = context {
        input["context"] = context.clone();
    }
    if let Some(model) = model {
        input["model"] = json!(model);
    }
    input
}

/// The kept answer for a call of `agent` through `tool_name` with `input`, if the
/// interrupted turn had one (taken: each answer is handed back once).
pub(super) fn take(kept: &Mutex<Vec<ReusedCall>>, agent: &str, tool_name: &str, input: &Value) -> Option<ReusedCall> {
    let mut kept = kept.lock().unwrap();
    let index =
        kept.iter().position(|call| call.agent == agent && call.tool_name == tool_name && call.input == *input)?;
    Some(kept.remove(index))
}

/// The remote task a call's progress line names, as its runner logged it (an
/// `mcp` agent's `{"task": {"id", "server"}}`, an A2A agent's `{"a2a_task",
/// "server"}`), if it is one a request could carry back: an id of at most 256
/// visible ASCII characters (it came from the server: the log is not trusted to
/// have checked it) and the server it was started on.
pub fn remote_task_of(data: &Value) -> Option<RemoteTask> {
    let (id, server) = match data.get("task") {
        Some(task) => (task.get("id")?, task.get("server")?),
        None => (data.get("a2a_task")?, data.get("server")?),
    };
    let (id, server) = (id.as_str()?, server.as_str()?);
    let fits = !id.is_empty() && id.len() <= 256 && id.bytes().all(|byte| byte.is_ascii_graphic());
    (fits && !server.is_empty() && server.len() <= 2048)
        .then(|| RemoteTask { id: id.to_string(), server: server.to_string() })
}
