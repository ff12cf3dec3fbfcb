//! Resuming an interrupted turn without paying twice: a new turn asks what the
//! interrupted one asked (its message, its `@agent`, the history it had); its
//! primary picks up after its last model step (`Continuation`: the steps it had
//! taken, read back from their `tool_calls_asked` events and their calls' results,
//! are not asked again), and the tool-agent calls it had finished `ok` are handed
//! back from the log (`dispatch/reuse.rs`); the calls that were running run again,
//! following the remote task their server kept running where their progress
//! named one (an `mcp` agent's task, an A2A task).
//! A log without those events (written before they were) has the primary start
//! from the user's message, its finished calls still handed back. The new turn's records name the
//! turn they resume (`SessionRecord::Resumed`), and it stands in that turn's place
//! in the history. A turn that ended, was taken back, still runs or was resumed
//! already is not resumed: the refusal says which.

use serde_json::Value;

use std::collections::HashMap;

use super::store::{SessionError, SessionLog, SessionRecord};
use crate::contract::{Message, RemoteTask, ToolCall};
use crate::dispatch::{remote_task_of, Continuation, Kept, ReusedCall};
use crate::event::{CallStatus, EventKind};

/// What a turn that resumes an interrupted one is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumable {
    pub message: String,
    pub agent: Option<String>,
    pub handoff: Option<bool>,
    pub history: Vec<Message>,
    pub reuse: Vec<ReusedCall>,
    pub continuation: Option<Continuation>,
}

impl SessionLog {
    /// The interrupted turn `turn_id` as a new turn would resume it, or why it
    /// cannot be.
    pub fn resumable(&self, turn_id: &str) -> Result<Resumable, SessionError> {
        let refuse = |why: String| SessionError::NotResumable { session: self.id.clone(), turn: turn_id.into(), why };
        let (message, agent, handoff) = self
            .records
            .iter()
            .find_map(|record| match record {
                SessionRecord::UserMessage { turn_id: id, text, agent, handoff, .. } if id == turn_id => {
                    Some((text.clone(), agent.clone(), *handoff))
                }
                _ => None,
            })
            .ok_or_else(|| SessionError::NoTurn { session: self.id.clone(), turn: turn_id.into() })?;
        for record in &self.records {
            match record {
                SessionRecord::TurnEnded { turn_id: id, status, .. } if id == turn_id => {
                    return Err(refuse(format!("it ended ({}): there is nothing to resume", status.as_str())));
                }
                SessionRecord::Resumed { turn_id: by, of_turn } if of_turn == turn_id => {
                    return Err(refuse(format!("it was resumed already, as turn {by:?}")));
                }
                SessionRecord::Retracted { turn_id: id } if id == turn_id => {
                    return Err(refuse("it was taken back".into()));
                }
                _ => {}
            }
        }
        if !self.interrupted().iter().any(|turn| turn.turn_id == turn_id) {
            return Err(refuse("its process still runs it".into()));
        }
        let continuation = self.continuation(turn_id);
        // Picking up after its last step, the primary asks again only what that step
        // had pending: the answers of its steps are in its messages already.
        let reuse = match &continuation {
            None => self.kept_calls(turn_id, false),
            Some(Continuation { pending: Some(_), .. }) => self.kept_calls(turn_id, true),
            Some(_) => Vec::new(),
        };
        Ok(Resumable { message, agent, handoff, history: self.history_before(Some(turn_id)), reuse, continuation })
    }

    /// The calls the turn's primary made that finished `ok`, with what they were
    /// asked and answered, in the order they finished; then those still running
    /// as a remote task their progress named, in the order they started. With
    /// `last_step_only` (the primary picks up after its last model step), only that
    /// step's calls: the earlier steps' answers are in its messages already, and
    /// one must not stand for a later call asked the same thing.
    fn kept_calls(&self, turn_id: &str, last_step_only: bool) -> Vec<ReusedCall> {
        let mut started: Vec<(String, String, String, Value)> = Vec::new();
        let mut tasks: HashMap<String, RemoteTask> = HashMap::new();
        let mut kept = Vec::new();
        for record in &self.records {
            let SessionRecord::Event { turn_id: id, event } = record else { continue };
            if id != turn_id {
                continue;
            }
            if event.depth == 0 && last_step_only && matches!(event.kind, EventKind::ToolCallsAsked { .. }) {
                (started, tasks, kept) = (Vec::new(), HashMap::new(), Vec::new());
            }
            if event.depth != 1 {
                continue;
            }
            match &event.kind {
                EventKind::CallStarted { tool_name: Some(tool), input: Some(input), .. } => {
                    started.push((event.call_id.clone(), event.agent.clone(), tool.clone(), input.clone()));
                }
                EventKind::CallFinished { status: CallStatus::Ok, result, .. } => {
                    let Some(index) = started.iter().position(|(call, ..)| *call == event.call_id) else { continue };
                    let (call, agent, tool_name, input) = started.remove(index);
                    kept.push(ReusedCall {
                        agent,
                        tool_name,
                        input,
                        kept: Kept::Answer(result.clone().unwrap_or_default()),
                        from_turn: turn_id.to_string(),
                        from_call: call,
                    });
                }
                EventKind::CallFinished { .. } => {
                    started.retain(|(call, ..)| *call != event.call_id);
                }
                EventKind::ToolProgress { data: Some(data), .. } => {
                    if let Some(task) = remote_task_of(data) {
                        tasks.insert(event.call_id.clone(), task);
                    }
                }
                _ => {}
            }
        }
        for (call, agent, tool_name, input) in started {
            if let Some(task) = tasks.remove(&call) {
                let from_turn = turn_id.to_string();
                kept.push(ReusedCall {
                    agent,
                    tool_name,
                    input,
                    kept: Kept::RemoteTask(task),
                    from_turn,
                    from_call: call,
                });
            }
        }
        kept
    }

    /// Where the turn's primary was: each model step it took (its text, the tool
    /// calls it asked, and the results of those that answered), the last one
    /// pending when some had not. None when it took no step with tool calls, or
    /// handed the turn on (`escalate`), or the log has no steps to read.
    fn continuation(&self, turn_id: &str) -> Option<Continuation> {
        struct Step {
            text: String,
            calls: Vec<ToolCall>,
            /// The children started for the step, in its calls' order.
            started: Vec<String>,
            results: HashMap<String, String>,
        }
        let mut root: Option<String> = None;
        let mut text = String::new();
        let mut steps: Vec<Step> = Vec::new();
        for record in &self.records {
            let SessionRecord::Event { turn_id: id, event } = record else { continue };
            if id != turn_id {
                continue;
            }
            let of_root = root.as_deref() == Some(event.call_id.as_str());
            let child_of_root = event.parent_id.is_some() && event.parent_id == root;
            match &event.kind {
                EventKind::CallStarted { .. } if event.parent_id.is_none() => root = Some(event.call_id.clone()),
                EventKind::TextDelta { text: more } if of_root => text.push_str(more),
                EventKind::Escalated { .. } if of_root => return None,
                EventKind::ToolCallsAsked { calls } if of_root => steps.push(Step {
                    text: std::mem::take(&mut text),
                    calls: calls.iter().map(|call| ToolCall::new(&call.id, &call.name, &call.arguments)).collect(),
                    started: Vec::new(),
                    results: HashMap::new(),
                }),
                EventKind::CallStarted { .. } if child_of_root => {
                    if let Some(step) = steps.last_mut() {
                        step.started.push(event.call_id.clone());
                    }
                }
                EventKind::CallFinished { delivered: Some(delivered), .. } if child_of_root => {
                    let Some(step) = steps.last_mut() else { continue };
                    let Some(index) = step.started.iter().position(|call| *call == event.call_id) else { continue };
                    if let Some(call) = step.calls.get(index) {
                        step.results.insert(call.id.clone(), delivered.clone());
                    }
                }
                _ => {}
            }
        }
        let taken = steps.len() as u32;
        let last = steps.pop()?;
        let mut messages = Vec::new();
        for mut step in steps {
            let content = (!step.text.is_empty()).then_some(step.text);
            messages.push(Message::Assistant { content, tool_calls: step.calls.clone() });
            for call in step.calls {
                let content = step.results.remove(&call.id).unwrap_or_default();
                messages.push(Message::Tool { tool_call_id: call.id, content });
            }
        }
        let mut last = last;
        let content = (!last.text.is_empty()).then_some(std::mem::take(&mut last.text));
        let pending = if last.calls.iter().all(|call| last.results.contains_key(&call.id)) {
            messages.push(Message::Assistant { content, tool_calls: last.calls.clone() });
            for call in last.calls {
                let content = last.results.remove(&call.id).unwrap_or_default();
                messages.push(Message::Tool { tool_call_id: call.id, content });
            }
            None
        } else {
            Some((content, last.calls))
        };
        Some(Continuation { from_turn: turn_id.to_string(), messages, pending, steps: taken })
    }
}
