//! Turns whose process died before they ended. Each user message is logged with
//! the process that runs the turn (its pid and its start time, so a pid used again
//! by another program is not taken for it); a turn with no end whose process is
//! gone was interrupted (the app or `switchboard ask` killed, the machine
//! restarted). What it had finished and what was running is read from its events.

use serde::{Deserialize, Serialize};
use specta::Type;
use specta_typescript::Number;

use super::store::{SessionLog, SessionRecord};
use crate::event::EventKind;

/// The process that runs a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct TurnProcess {
    pub pid: u32,
    /// When it started, in clock ticks since boot (`/proc/PID/stat`, field 22).
    #[specta(type = Number)]
    pub started: u64,
}

impl TurnProcess {
    /// This process.
    pub fn current() -> Option<TurnProcess> {
        let pid = std::process::id();
        Some(TurnProcess { pid, started: start_time(pid)? })
    }

    /// Whether the process still runs (the same one: same pid, same start).
    pub fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.started)
    }
}

/// A process's start time from `/proc/PID/stat` (the fields after the command's
/// closing parenthesis; the start time is the 22nd field of the line).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_command = &stat[stat.rfind(')')? + 1..];
    after_command.split_whitespace().nth(19)?.parse().ok()
}

/// A turn that did not end because its process did not live to end it.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct InterruptedTurn {
    pub turn_id: String,
    /// The delegates whose calls had finished (their results are in the log).
    pub finished: Vec<String>,
    /// The calls that were running when it stopped, the turn's own agent included.
    pub running: Vec<String>,
    /// The approvals that were waiting for the user then (asked again on resume).
    pub waiting: Vec<WaitingApproval>,
}

/// An approval request nobody had answered when the turn's process died.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct WaitingApproval {
    pub call_id: String,
    /// The agent that would run, who asked for it (the caller's agent), at which depth.
    pub agent: String,
    pub asked_by: Option<String>,
    pub depth: u32,
    /// What it would be asked.
    pub request: String,
}

impl SessionLog {
    /// The turns that were interrupted: no end, not taken back, not resumed, and
    /// their process gone (a log written before processes were kept: any turn with no end).
    pub fn interrupted(&self) -> Vec<InterruptedTurn> {
        self.interrupted_with(TurnProcess::alive)
    }

    pub(crate) fn interrupted_with(&self, alive: impl Fn(&TurnProcess) -> bool) -> Vec<InterruptedTurn> {
        let taken_back = self.taken_back();
        // Ended, or resumed by another turn (which carries on for it).
        let ended: std::collections::HashSet<&str> = self
            .records
            .iter()
            .filter_map(|record| match record {
                SessionRecord::TurnEnded { turn_id, .. } => Some(turn_id.as_str()),
                SessionRecord::Resumed { of_turn, .. } => Some(of_turn.as_str()),
                _ => None,
            })
            .collect();
        let mut open: Vec<&str> = Vec::new();
        for record in &self.records {
            if let SessionRecord::UserMessage { turn_id, process, .. } = record {
                let unended = !ended.contains(turn_id.as_str()) && !taken_back.contains(turn_id.as_str());
                if unended && !process.as_ref().is_some_and(&alive) {
                    open.push(turn_id);
                }
            }
        }
        // One pass over the events: each interrupted turn's calls in the order they
        // started, running until their end is seen, and its approvals still open.
        let mut calls: std::collections::HashMap<&str, Vec<(&str, &str, bool)>> =
            open.iter().map(|turn_id| (*turn_id, Vec::new())).collect();
        let mut asking: std::collections::HashMap<&str, Vec<WaitingApproval>> = std::collections::HashMap::new();
        for record in &self.records {
            let SessionRecord::Event { turn_id, event } = record else { continue };
            let Some(started) = calls.get_mut(turn_id.as_str()) else { continue };
            let waiting = asking.entry(turn_id.as_str()).or_default();
            match &event.kind {
                EventKind::CallStarted { .. } => started.push((&event.call_id, &event.agent, false)),
                EventKind::CallFinished { .. } => {
                    if let Some(call) = started.iter_mut().find(|(id, ..)| *id == event.call_id) {
                        call.2 = true;
                    }
                    waiting.retain(|approval| approval.call_id != event.call_id);
                }
                EventKind::ApprovalRequested { input, .. } => {
                    let asked_by = event.parent_id.as_deref().and_then(|parent| {
                        started.iter().find(|(id, ..)| *id == parent).map(|(_, agent, _)| agent.to_string())
                    });
                    let request =
                        input.as_ref().and_then(|input| input.get("request")).and_then(|request| request.as_str());
                    waiting.push(WaitingApproval {
                        call_id: event.call_id.clone(),
                        agent: event.agent.clone(),
                        asked_by,
                        depth: event.depth,
                        request: request.unwrap_or_default().to_string(),
                    });
                }
                EventKind::ApprovalResolved { .. } => waiting.retain(|approval| approval.call_id != event.call_id),
                _ => {}
            }
        }
        open.into_iter()
            .map(|turn_id| {
                let waiting = asking.remove(turn_id).unwrap_or_default();
                let mut turn =
                    InterruptedTurn { turn_id: turn_id.to_string(), finished: vec![], running: vec![], waiting };
                for (_, agent, done) in calls.remove(turn_id).unwrap_or_default() {
                    if done { &mut turn.finished } else { &mut turn.running }.push(agent.to_string());
                }
                turn
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_records::{event, finished, started};
    use super::*;
    use crate::event::CallStatus;

    fn message(turn_id: &str, process: Option<TurnProcess>) -> SessionRecord {
        SessionRecord::UserMessage {
            turn_id: turn_id.into(),
            text: "go".into(),
            agent: None,
            handoff: None,
            process,
            ts_ms: 1,
        }
    }

    fn asked(request: &str) -> EventKind {
        EventKind::ApprovalRequested {
            tool_name: "agent_x".into(),
            input: Some(serde_json::json!({ "request": request })),
            limits: crate::event::ApprovalLimits {
                may_delegate: false,
                depth: 1,
                max_depth: 2,
                calls_left: 5,
                timeout_secs: None,
            },
        }
    }

    #[test]
    fn a_turn_with_no_end_whose_process_is_gone_is_interrupted_with_what_finished_and_what_ran() {
        let gone = TurnProcess { pid: u32::MAX, started: 1 };
        let records = vec![
            message("t1", Some(gone)),
            event("c1", None, "boss", 0, 10, started()),
            event("c2", Some("c1"), "fast", 1, 11, started()),
            event("c3", Some("c1"), "slow", 1, 12, started()),
            event("c2", Some("c1"), "fast", 1, 13, finished(CallStatus::Ok, 5)),
            // slow asked for approval and nobody had answered; fast's was answered.
            event("c2", Some("c1"), "fast", 1, 11, asked("quick")),
            event(
                "c2",
                Some("c1"),
                "fast",
                1,
                12,
                EventKind::ApprovalResolved {
                    decision: crate::event::ApprovalDecision::ApproveOnce,
                    by: "user".into(),
                },
            ),
            event("c3", Some("c1"), "slow", 1, 14, asked("take your time")),
        ];
        let log = SessionLog { id: "s".into(), records, skipped_lines: 0, damaged_lines: vec![], newer_records: 0 };
        let interrupted = log.interrupted_with(|_| false);
        assert_eq!(
            interrupted,
            [InterruptedTurn {
                turn_id: "t1".into(),
                finished: vec!["fast".into()],
                running: vec!["boss".into(), "slow".into()],
                waiting: vec![WaitingApproval {
                    call_id: "c3".into(),
                    agent: "slow".into(),
                    asked_by: Some("boss".into()),
                    depth: 1,
                    request: "take your time".into(),
                }],
            }]
        );
        assert!(log.interrupted_with(|_| true).is_empty(), "its process still runs it");
        let me = TurnProcess::current().unwrap();
        assert!(me.alive() && !gone.alive());
        assert!(!TurnProcess { started: me.started + 1, ..me }.alive(), "the same pid, another start: not it");
    }
}
