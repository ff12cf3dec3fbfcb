//! One running call's events on their way to the client: each batch that queued up
//! is coalesced and sent as progress notifications (when the client sent a progress
//! token) or, for a task, kept as its status message; and each approval request is
//! answered: by asking the client's user (`asking.rs`: on its session, on its task,
//! or in a round of its request), by leaving it to the observer's user, or (no one
//! to ask) by a denial the result explains.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, JsonObject, NotificationMetaObject,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::Peer;
use rmcp::task_manager::TaskContext;
use rmcp::RoleServer;
use serde_json::{json, Value};
use switchboard_core::dispatch::{Answerer, TurnControl};
use switchboard_core::event::{ApprovalDecision, CallEvent, EventKind};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::asking::Asker;
use crate::progress::{coalesce, describe, EVENT_META_KEY};

/// Where a call's progress goes: the request that waits for it (a retry of a
/// stateless call brings its own), or nowhere once that request is gone.
pub(crate) type ProgressTarget = Arc<Mutex<Option<(Peer<RoleServer>, ProgressToken)>>>;

pub(crate) struct Relay {
    pub progress: ProgressTarget,
    /// A task's status message follows the call's progress.
    pub task: Option<TaskContext>,
    pub control: TurnControl,
    /// How the client's user is asked, when the server asks the client.
    pub asker: Option<Asker>,
    /// The observer's user answers what the client cannot.
    pub observer_answers: bool,
    /// Cancelled when the call has ended (pending elicitations are dropped).
    pub done: CancellationToken,
    /// How long the call may be silent before a keep-alive progress notification
    /// goes out (so a client that resets its timeout on progress keeps waiting).
    pub keepalive: Duration,
}

/// What the relay saw that the result should mention.
#[derive(Debug, Default)]
pub(crate) struct RelayReport {
    /// An approval was denied because no one could be asked.
    pub unanswered: bool,
}

/// Runs until `None` arrives (the call has ended and every event was sent).
pub(crate) async fn relay(mut receiver: UnboundedReceiver<Option<CallEvent>>, relay: Relay) -> RelayReport {
    let mut report = RelayReport::default();
    let mut progress = 0.0;
    let mut finished = false;
    let mut silent_since = tokio::time::Instant::now();
    while !finished {
        let next = tokio::select! {
            next = receiver.recv() => next,
            () = tokio::time::sleep_until(silent_since + relay.keepalive) => {
                let target = relay.progress.lock().unwrap().clone();
                if let Some((peer, token)) = target {
                    progress += 1.0;
                    let waited = silent_since.elapsed().as_secs();
                    let mut param = ProgressNotificationParam::new(token, progress);
                    param.message = Some(format!("still working (no news for {waited} s)"));
                    let _ = peer.notify_progress(param).await;
                }
                silent_since = tokio::time::Instant::now();
                continue;
            }
        };
        silent_since = tokio::time::Instant::now();
        let Some(first) = next else { break };
        let mut batch = Vec::new();
        let mut push = |item: Option<CallEvent>, batch: &mut Vec<CallEvent>| match item {
            Some(event) => batch.push(event),
            None => finished = true,
        };
        push(first, &mut batch);
        while let Ok(item) = receiver.try_recv() {
            push(item, &mut batch);
        }
        for event in &batch {
            match &event.kind {
                EventKind::ApprovalRequested { .. } => answer_approval(&relay, event, &mut report),
                EventKind::InputRequested { question } => answer_question(&relay, event, question, &mut report),
                _ => {}
            }
        }
        if let Some(task) = &relay.task {
            if let Some(line) = batch.iter().rev().find_map(describe) {
                task.set_status_message(line);
            }
        }
        let target = relay.progress.lock().unwrap().clone();
        let Some((peer, token)) = target else { continue };
        for event in coalesce(batch) {
            // A step's tool-call list is for resuming the turn's own log: its calls
            // follow as their own starts.
            if matches!(event.kind, EventKind::ToolCallsAsked { .. }) {
                continue;
            }
            progress += 1.0;
            let mut param = ProgressNotificationParam::new(token.clone(), progress);
            param.message = describe(&event);
            let mut meta = JsonObject::new();
            meta.insert(EVENT_META_KEY.into(), serde_json::to_value(&event).unwrap_or(Value::Null));
            param.meta = Some(NotificationMetaObject(meta.into()));
            if peer.notify_progress(param).await.is_err() {
                // That request is gone (its call is cancelled through its token, or
                // a retry brings a new one): no more progress to it.
                relay.progress.lock().unwrap().take();
                break;
            }
        }
    }
    report
}

fn answer_approval(relay: &Relay, event: &CallEvent, report: &mut RelayReport) {
    if let Some(asker) = relay.asker.clone() {
        let (control, done) = (relay.control.clone(), relay.done.clone());
        let (call_id, message) = (event.call_id.clone(), approval_message(event));
        // With an observer whose user answers too (the app's window), a client that
        // did not ask anyone (`claude -p` cancels every elicitation) leaves the
        // question to that user; the first answer, from either, decides.
        let leave_to_observer = relay.observer_answers;
        tokio::spawn(async move {
            let (decision, answerer) = tokio::select! {
                answered = elicit(&asker, format!("approve-{call_id}"), message) => answered,
                () = done.cancelled() => return,
            };
            if answerer == Answerer::ClientDidNotAsk && leave_to_observer {
                return;
            }
            control.resolve_approval_by(&call_id, decision, answerer);
        });
    } else if !relay.observer_answers {
        // Under `--approve all|none` the dispatcher answers before this event is sent.
        if relay.control.resolve_approval(&event.call_id, ApprovalDecision::Deny) {
            report.unanswered = true;
        }
    }
}

/// A remote agent's question: asked of the client's user by elicitation (a text
/// field), answered by the observer's user, or declined when no one can answer.
fn answer_question(relay: &Relay, event: &CallEvent, question: &str, report: &mut RelayReport) {
    if let Some(asker) = relay.asker.clone() {
        let (control, done) = (relay.control.clone(), relay.done.clone());
        let call_id = event.call_id.clone();
        let message = format!("Switchboard: {} asks:\n\n{question}", event.agent);
        // A remote agent may ask more than once in a call: each question its own key.
        let key = format!("answer-{call_id}-{}", event.seq);
        tokio::spawn(async move {
            let answer = tokio::select! {
                answer = elicit_text(&asker, key, message) => answer,
                () = done.cancelled() => return,
            };
            control.answer_input(&call_id, answer);
        });
    } else if !relay.observer_answers && relay.control.answer_input(&event.call_id, None) {
        report.unanswered = true;
    }
}

async fn elicit_text(asker: &Asker, key: String, message: String) -> Option<String> {
    let schema = json!({
        "type": "object",
        "properties": { "answer": { "type": "string", "title": "Your answer" } },
        "required": ["answer"]
    });
    let requested_schema = ElicitationSchema::from_json_schema(schema.as_object().cloned().unwrap_or_default()).ok()?;
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
    match asker.elicit(key, params).await {
        Some((ElicitationAction::Accept, content)) => {
            content.as_ref().and_then(|content| content.get("answer")).and_then(Value::as_str).map(str::to_string)
        }
        Some(_) => None,
        None => {
            tracing::warn!("nobody answered the question: it is declined");
            None
        }
    }
}

fn approval_message(event: &CallEvent) -> String {
    let EventKind::ApprovalRequested { tool_name, input, limits } = &event.kind else { return String::new() };
    let request = input.as_ref().and_then(|input| input.get("request")).and_then(Value::as_str).unwrap_or("");
    let excerpt: String = request.chars().take(400).collect();
    let more = if excerpt.len() < request.len() { "…" } else { "" };
    let timeout = limits.timeout_secs.map(|secs| format!(", at most {secs} s")).unwrap_or_default();
    let delegate = if limits.may_delegate { "may call further agents" } else { "may not call further agents" };
    format!(
        "Switchboard: allow {} ({tool_name}) to run?\n\nRequest: {excerpt}{more}\n\nIt {delegate} (depth {} of {}), \
         {} more calls allowed in this call{timeout}.",
        event.agent, limits.depth, limits.max_depth, limits.calls_left
    )
}

/// The client's answer to an approval, and whether it answered at all (a decline
/// may be the client's own; a cancel or a failure means nobody was asked).
async fn elicit(asker: &Asker, key: String, message: String) -> (ApprovalDecision, Answerer) {
    let schema = json!({
        "type": "object",
        "properties": {
            "always": {
                "type": "boolean",
                "title": "Also allow later calls to this agent from this client",
                "default": false
            }
        }
    });
    let Ok(requested_schema) = ElicitationSchema::from_json_schema(schema.as_object().cloned().unwrap_or_default())
    else {
        return (ApprovalDecision::Deny, Answerer::ClientDidNotAsk);
    };
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
    match asker.elicit(key, params).await {
        Some((ElicitationAction::Accept, content)) => {
            let always = content.as_ref().and_then(|content| content.get("always")).and_then(Value::as_bool);
            let decision =
                if always == Some(true) { ApprovalDecision::ApproveAlways } else { ApprovalDecision::ApproveOnce };
            (decision, Answerer::ClientAnswered)
        }
        Some((ElicitationAction::Decline, _)) => (ApprovalDecision::Deny, Answerer::ClientAnswered),
        Some(_) => (ApprovalDecision::Deny, Answerer::ClientDidNotAsk),
        None => {
            tracing::warn!("nobody answered the approval: the call is denied");
            (ApprovalDecision::Deny, Answerer::ClientDidNotAsk)
        }
    }
}
