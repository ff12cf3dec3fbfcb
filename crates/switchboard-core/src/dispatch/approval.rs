//! Approvals: a call whose entry says `ask` waits here, after its `call_started` and
//! before its first model step, until the turn's policy, the user or a cancel
//! answers. "Approve always" is remembered in the turn's session.

use tokio::sync::oneshot;

use crate::event::{ApprovalDecision, ApprovalLimits, CallError, CallErrorKind, EventKind};

use super::control::{Answerer, ApprovalPolicy};
use super::spec::CallSpec;
use super::turn::Turn;

/// Pauses a call until it is approved. `Err` says why it may not run (denied, or
/// cancelled while it waited).
pub(super) async fn await_approval(turn: &Turn, spec: &CallSpec, limits: ApprovalLimits) -> Result<(), CallError> {
    let agent = spec.agent.name.as_str();
    let control = &turn.control;
    if control.session.is_approved(agent) {
        return Ok(());
    }
    let requested = EventKind::ApprovalRequested {
        tool_name: spec.tool_name.clone().unwrap_or_default(),
        input: spec.input.clone(),
        limits,
    };
    let (decision, by): (ApprovalDecision, Option<Answerer>) = match control.policy {
        ApprovalPolicy::ApproveAll | ApprovalPolicy::DenyAll => {
            turn.emit(&spec.header, requested);
            let decision = if control.policy == ApprovalPolicy::ApproveAll {
                ApprovalDecision::ApproveOnce
            } else {
                ApprovalDecision::Deny
            };
            (decision, None)
        }
        ApprovalPolicy::Ask => {
            let (sender, receiver) = oneshot::channel();
            // Registered before the request is announced, so an answer sent from the
            // event sink itself finds it.
            control.approvals.lock().unwrap().insert(spec.header.call_id.clone(), sender);
            turn.emit(&spec.header, requested);
            let answer = tokio::select! {
                _ = spec.cancel.cancelled() => None,
                answer = receiver => answer.ok(),
            };
            match answer {
                Some((decision, answerer)) => (decision, Some(answerer)),
                None => {
                    let message = "cancelled by the user while it waited for approval";
                    return Err(CallError::new(CallErrorKind::Cancelled, message));
                }
            }
        }
    };
    let by_word = by.map(Answerer::as_str).unwrap_or("policy");
    turn.emit(&spec.header, EventKind::ApprovalResolved { decision, by: by_word.to_string() });
    match decision {
        ApprovalDecision::ApproveOnce => Ok(()),
        ApprovalDecision::ApproveAlways => {
            control.session.approve(agent);
            Ok(())
        }
        ApprovalDecision::Deny => Err(CallError::new(CallErrorKind::Denied, denial_words(by, agent))),
    }
}

/// Why a call was denied, as honestly as is known: an MCP client's "no" may be
/// its own, with no person asked.
fn denial_words(by: Option<Answerer>, agent: &str) -> String {
    match by {
        None => format!("the policy denied this call to {agent:?}"),
        Some(Answerer::User) => format!("the user denied this call to {agent:?}"),
        Some(Answerer::ClientAnswered) => format!(
            "the MCP client declined the approval of this call to {agent:?}; it may not have asked anyone (a client \
             that cannot show approval requests, such as `claude -p`, declines them by itself)"
        ),
        Some(Answerer::ClientDidNotAsk) => format!(
            "the MCP client did not answer the approval of this call to {agent:?} (it cancelled the request or could \
             not show it): nobody was asked"
        ),
    }
}
