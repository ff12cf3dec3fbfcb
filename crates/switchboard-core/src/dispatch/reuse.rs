//! A resumed turn's calls that need not run again: the tool-agent calls its
//! primary made in the interrupted turn that finished `ok` are kept (in the log) with
//! what they were asked; when the resumed turn's primary asks the same agent the
//! same thing, the kept answer is handed back (fenced anew) without running the
//! agent. The node says so, and counts no usage or cost: it was paid for once.

use serde_json::{json, Value};

use super::admit::{Caller, Delegation};
use super::call::{deliver, finished, CallOutcome};
use super::turn::{Figures, Header, Turn};

use crate::event::{CallRole, CallStatus, EventKind, Steering};

/// One finished call of an interrupted turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ReusedCall {
    pub agent: String,
    /// The tool the primary called (`agent_x`, `ask_agent`…) and its input as the
    /// call's node showed it (`request`, `context`, `model`).
    pub tool_name: String,
    pub input: Value,
    /// The delegate's answer.
    pub text: String,
    /// Where it was answered.
    pub from_turn: String,
    pub from_call: String,
}

/// The input a delegation's node shows (what `ReusedCall::input` is matched on).
pub(super) fn node_input(delegation: &Delegation) -> Option<Value> {
    let request = delegation.request.as_ref().ok()?;
    let mut input = json!({ "request": request.request });
    if let Some(context) = &request.context {
        input["context"] = context.clone();
    }
    if let Some(model) = &request.model {
        input["model"] = json!(model);
    }
    Some(input)
}

/// The kept answer for a call of the turn's primary, if the interrupted turn had
/// one for the same agent, tool and input (taken: each answer is handed back once).
pub(super) fn take(turn: &Turn, caller: &Caller<'_>, delegation: &Delegation) -> Option<ReusedCall> {
    if caller.depth != 0 {
        return None;
    }
    let mut kept = turn.reuse.lock().unwrap();
    if kept.is_empty() {
        return None;
    }
    let input = node_input(delegation)?;
    let index = kept.iter().position(|call| {
        call.agent == delegation.target && call.tool_name == delegation.tool_name && call.input == input
    })?;
    Some(kept.remove(index))
}

/// The node of a call answered from the log: started, a progress line naming
/// where its answer comes from, finished `ok` with no usage.
pub(super) fn answer(turn: &Turn, header: &Header, reused: ReusedCall) -> CallOutcome {
    turn.register_node(header, None);
    turn.emit(
        header,
        EventKind::CallStarted {
            role: CallRole::Tool,
            tool_name: Some(reused.tool_name.clone()),
            input: Some(reused.input.clone()),
            tools: vec![],
            model: None,
            steering: Steering::not("its answer comes from the interrupted turn: it does not run again"),
        },
    );
    let message = format!(
        "answer kept from call {} of turn {} (not run again, not paid again)",
        reused.from_call, reused.from_turn
    );
    let data = json!({ "reused": { "turn": reused.from_turn, "call": reused.from_call } });
    turn.emit(header, EventKind::ToolProgress { message, data: Some(data) });
    let delivered = deliver(turn, &header.agent, CallStatus::Ok, &reused.text, None);
    let end = finished(CallStatus::Ok, Some(reused.text.clone()), Figures::default(), 0, None, Some(delivered.clone()));
    turn.emit(header, end);
    CallOutcome {
        status: CallStatus::Ok,
        text: reused.text,
        answered_by: header.agent.clone(),
        figures: Figures::default(),
        steps: 0,
        error: None,
        delivered: Some(delivered),
    }
}
