//! Resuming an interrupted turn without paying twice: a new turn asks what the
//! interrupted one asked (its message, its `@agent`, the history it had), and the
//! tool-agent calls its primary had finished `ok` are handed back from the log
//! when the primary asks for them again (`dispatch/reuse.rs`); the calls that were
//! running, and any the primary asks for anew, run. The new turn's records name the
//! turn they resume (`SessionRecord::Resumed`), and it stands in that turn's place
//! in the history. A turn that ended, was taken back, still runs or was resumed
//! already is not resumed: the refusal says which.

use serde_json::Value;

use super::store::{SessionError, SessionLog, SessionRecord};
use crate::contract::Message;
use crate::dispatch::ReusedCall;
use crate::event::{CallStatus, EventKind};

/// What a turn that resumes an interrupted one is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumable {
    pub message: String,
    pub agent: Option<String>,
    pub handoff: Option<bool>,
    pub history: Vec<Message>,
    pub reuse: Vec<ReusedCall>,
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
        Ok(Resumable {
            message,
            agent,
            handoff,
            history: self.history_before(Some(turn_id)),
            reuse: self.kept_calls(turn_id),
        })
    }

    /// The calls the turn's primary made that finished `ok`, with what they were
    /// asked and answered, in the order they started.
    fn kept_calls(&self, turn_id: &str) -> Vec<ReusedCall> {
        let mut started: Vec<(String, String, String, Value)> = Vec::new();
        let mut kept = Vec::new();
        for record in &self.records {
            let SessionRecord::Event { turn_id: id, event } = record else { continue };
            if id != turn_id || event.depth != 1 {
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
                        text: result.clone().unwrap_or_default(),
                        from_turn: turn_id.to_string(),
                        from_call: call,
                    });
                }
                _ => {}
            }
        }
        kept
    }
}
