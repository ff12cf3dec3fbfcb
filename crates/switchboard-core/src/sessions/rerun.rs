//! A tool-agent call of a logged turn, run again: what it was asked, by whom, and
//! how it ended are read back from the session's log (`logged_call`), and
//! `ChatSessions::rerun_call` runs it once more (the same request, or an edited
//! one) through `Dispatcher::run_tool_call`, so the same entries, limits and
//! approvals hold, as a turn of the session marked as a re-run (never history).
//! Both calls are summed up the same way, to be shown side by side.

use serde::Serialize;
use serde_json::Value;
use specta::Type;
use specta_typescript::Number;

use super::store::{SessionLog, SessionRecord};
use crate::event::{CallStatus, EventKind};

/// One call as its log tells it, to be set beside another.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct CallSummary {
    pub turn_id: String,
    pub call_id: String,
    pub agent: String,
    pub status: CallStatus,
    /// Its answer (the text it produced, before fencing).
    pub text: String,
    #[specta(type = Number)]
    pub duration_ms: u64,
    /// Tokens and cost with its subtree.
    #[specta(type = Option<Number>)]
    pub tokens: Option<u64>,
    pub cost: Option<f64>,
    pub error: Option<String>,
}

/// The message a re-run's turn is logged with: which call it runs again, and the request.
pub fn rerun_line(call: &CallSummary, request: &str) -> String {
    format!("Run again: {} (call {} of turn {}): {request}", call.agent, call.call_id, call.turn_id)
}

/// A logged call with what a re-run needs: its caller, request and context.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedCall {
    /// The agent that called it (its entries apply again); none for a root.
    pub caller: Option<String>,
    pub request: String,
    pub context: Option<Value>,
    pub summary: CallSummary,
}

/// The tool-agent call `call_id` of `turn_id` (the latest turn with such a call
/// when `turn_id` is none), once it has finished.
pub fn logged_call(log: &SessionLog, turn_id: Option<&str>, call_id: &str) -> Option<LoggedCall> {
    let turn = match turn_id {
        Some(turn) => turn.to_string(),
        None => log.records.iter().rev().find_map(|record| match record {
            SessionRecord::Event { turn_id, event }
                if event.call_id == call_id
                    && event.depth > 0
                    && matches!(event.kind, EventKind::CallFinished { .. }) =>
            {
                Some(turn_id.clone())
            }
            _ => None,
        })?,
    };
    let events = log.records.iter().filter_map(|record| match record {
        SessionRecord::Event { turn_id, event } if *turn_id == turn => Some(event),
        _ => None,
    });
    let (mut started, mut parent_agent, mut finished) = (None, None, None);
    let mut parent_id = None;
    for event in events {
        match &event.kind {
            EventKind::CallStarted { input, .. } if event.call_id == call_id && event.depth > 0 => {
                parent_id = event.parent_id.clone();
                started = Some((event.ts_ms, event.agent.clone(), input.clone()));
            }
            EventKind::CallStarted { .. } if Some(&event.call_id) == parent_id.as_ref() => {
                parent_agent = Some(event.agent.clone());
            }
            EventKind::CallFinished { status, result, usage_total, usage, cost_total, cost, error, .. }
                if event.call_id == call_id =>
            {
                finished = Some((
                    event.ts_ms,
                    *status,
                    result.clone().unwrap_or_default(),
                    usage_total.or(*usage).map(|usage| usage.total_tokens),
                    cost_total.or(*cost),
                    error.as_ref().map(|error| format!("{}: {}", error.kind, error.message)),
                ));
            }
            _ => {}
        }
    }
    let (start_ms, agent, input) = started?;
    let (end_ms, status, text, tokens, cost, error) = finished?;
    let input = input.unwrap_or(Value::Null);
    let request = input.get("request").and_then(Value::as_str)?.to_string();
    let context = input.get("context").filter(|context| !context.is_null()).cloned();
    // The parent's start comes before the child's: found on the same pass unless
    // the call was the root of an outside call (then the caller is unknown).
    let caller = parent_agent.or_else(|| {
        parent_id.as_ref().and_then(|parent| {
            log.records.iter().find_map(|record| match record {
                SessionRecord::Event { turn_id, event } if *turn_id == turn && &event.call_id == parent => {
                    Some(event.agent.clone())
                }
                _ => None,
            })
        })
    });
    Some(LoggedCall {
        caller,
        request,
        context,
        summary: CallSummary {
            turn_id: turn,
            call_id: call_id.to_string(),
            agent,
            status,
            text,
            duration_ms: end_ms.saturating_sub(start_ms),
            tokens,
            cost,
            error,
        },
    })
}
