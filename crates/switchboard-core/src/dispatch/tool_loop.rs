//! One call's tool loop: model steps, streamed into the turn's events and counted
//! against its budget as they stream, until the model answers without tool calls;
//! the tool calls of a step run as delegations (concurrently up to
//! `max_parallel`), and an `escalate` call hands the turn to the escalation agent.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::contract::{
    AnswerSlot, Message, ModelDelta, ModelReply, ModelRequest, Runner, SteerInbox, ToolCall, ToolSpec,
};
use crate::event::{AskedCall, CallError, CallErrorKind, CallRole, CallStatus, EventKind};
use crate::tools::{OfferedTool, Standing, ESCALATE};

use super::admit::Caller;
use super::admit::{delegation_from_tool_call, narrowing_refusal};
use super::call::{run_call, run_delegation};
use super::control::ApprovalPolicy;
use super::messages::escalation_messages;
use super::reuse::Kept;
use super::spec::CallSpec;
use super::turn::{Header, Turn};

/// How a call's tool loop ended.
pub(super) struct LoopEnd {
    pub status: CallStatus,
    pub text: String,
    pub steps: u32,
    pub error: Option<CallError>,
    pub answered_by: Option<String>,
    /// The call's messages at the end, its final answer included.
    pub conversation: Vec<Message>,
}

impl LoopEnd {
    /// A call that ended with `error` before its first model step.
    pub fn stopped(error: CallError) -> LoopEnd {
        LoopEnd {
            status: error.status(),
            text: String::new(),
            steps: 0,
            error: Some(error),
            answered_by: None,
            conversation: Vec::new(),
        }
    }
}

/// Stops a call whose streaming text spends the turn's budget; lives across steps.
#[derive(Default)]
struct BudgetStop {
    stop: CancellationToken,
    reason: Arc<Mutex<Option<String>>>,
}

/// About four characters a token: the estimate used while text streams.
fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4).max(1)
}

fn cancelled_error() -> CallError {
    CallError::new(CallErrorKind::Cancelled, "cancelled by the user")
}

pub(super) async fn tool_loop(
    turn: &Arc<Turn>,
    spec: &CallSpec,
    runner: Arc<dyn Runner>,
    offered: &[OfferedTool],
    path: &[String],
    inbox: Option<&SteerInbox>,
) -> LoopEnd {
    let mut messages = spec.messages.clone();
    let definitions: Vec<ToolSpec> = offered.iter().map(OfferedTool::spec).collect();
    let max_steps = spec.limits.effective_max_steps();
    let budget = BudgetStop::default();
    let mut text = String::new();
    let end = |text: String, steps: u32, error: Option<CallError>, conversation: Vec<Message>| LoopEnd {
        status: error.as_ref().map(CallError::status).unwrap_or(CallStatus::Ok),
        text,
        steps,
        error,
        answered_by: None,
        conversation,
    };
    // A runner that delivers messages itself (an A2A task, a CLI's stdin) is handed the inbox;
    // otherwise they become user messages before each step.
    let (inbox, runner_inbox) =
        if runner.steering().delivered_by_runner() { (None, inbox.cloned()) } else { (inbox, None) };
    // A resumed turn's primary picks up after its last model step (the turn's root only).
    let continued = if spec.header.depth == 0 { turn.continuation.lock().unwrap().take() } else { None };
    let mut first = 1;
    if let Some(continuation) = continued {
        first = pick_up(turn, spec, continuation, &mut messages, offered, path).await;
        if spec.cancel.is_cancelled() {
            return end(text, first - 1, Some(cancelled_error()), messages);
        }
    }
    let mut remote_task = spec.remote_task.as_ref().and_then(|reused| match &reused.kept {
        Kept::RemoteTask(task) => {
            let message = format!(
                "call {} of turn {} had task {} running at {}: followed if that server still has it",
                reused.from_call, reused.from_turn, task.id, task.server
            );
            let data = json!({ "reattached": { "turn": reused.from_turn, "call": reused.from_call, "task": task.id } });
            turn.emit(&spec.header, EventKind::ToolProgress { message, data: Some(data) });
            Some(task.clone())
        }
        Kept::Answer(_) => None,
    });
    for step in first..=max_steps {
        take_steers(turn, spec, inbox, &mut messages);
        let request = ModelRequest {
            messages: messages.clone(),
            tools: definitions.clone(),
            model: spec.model.clone(),
            idle_timeout_secs: spec.limits.idle_timeout_secs,
            context: spec.input.as_ref().and_then(|input| input.get("context")).cloned(),
            steers: runner_inbox.clone(),
            remote_task: remote_task.take(),
        };
        let reply = match model_step(turn, spec, runner.as_ref(), &request, &budget).await {
            Ok(reply) => reply,
            // What the step streamed before it failed is kept: the caller receives
            // it as the partial result beside the error.
            Err(Stopped { error, partial }) if !partial.is_empty() => return end(partial, step, Some(error), messages),
            Err(Stopped { error, .. }) => return end(text, step, Some(error), messages),
        };
        text = reply.text.clone();
        if reply.tool_calls.is_empty() {
            messages.push(Message::assistant(reply.text.clone()));
            // A message sent while the answer streamed gets one more step: the
            // model sees its answer, then the message.
            if step == max_steps || inbox.is_none_or(|inbox| inbox.is_empty()) {
                return end(text, step, None, messages);
            }
            continue;
        }
        messages.push(Message::Assistant {
            content: (!reply.text.is_empty()).then(|| reply.text.clone()),
            tool_calls: reply.tool_calls.clone(),
        });
        let calls = reply.tool_calls.iter().map(|call| AskedCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: call.function.arguments.clone(),
        });
        turn.emit(&spec.header, EventKind::ToolCallsAsked { calls: calls.collect() });
        if let Some(call) = reply.tool_calls.iter().find(|call| call.function.name == ESCALATE) {
            if offered.iter().any(|tool| tool.name == ESCALATE) {
                return escalate(turn, spec, call, step).await;
            }
        }
        let results = run_tool_calls(turn, spec, &messages, &reply.tool_calls, offered, path).await;
        for (call, content) in reply.tool_calls.iter().zip(results) {
            messages.push(Message::Tool { tool_call_id: call.id.clone(), content });
        }
        if spec.cancel.is_cancelled() {
            return end(text, step, Some(cancelled_error()), messages);
        }
    }
    let message = format!("stopped after {max_steps} model steps (limits.max_steps) without a final answer");
    end(text, max_steps, Some(CallError::new(CallErrorKind::Limited, message)), messages)
}

/// Puts a resumed turn's earlier steps into the primary's messages, runs the last
/// step's tool calls (handed back from the log where they had finished) and adds
/// their results: the step the loop goes on from.
async fn pick_up(
    turn: &Arc<Turn>,
    spec: &CallSpec,
    continuation: super::reuse::Continuation,
    messages: &mut Vec<Message>,
    offered: &[OfferedTool],
    path: &[String],
) -> u32 {
    let message = format!(
        "picks up turn {} after its model step {}: the steps before are not asked again",
        continuation.from_turn, continuation.steps
    );
    let data = json!({ "continued": { "turn": continuation.from_turn, "steps": continuation.steps } });
    turn.emit(&spec.header, EventKind::ToolProgress { message, data: Some(data) });
    messages.extend(continuation.messages);
    if let Some((text, calls)) = continuation.pending {
        messages.push(Message::Assistant { content: text, tool_calls: calls.clone() });
        let asked = calls.iter().map(|call| AskedCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: call.function.arguments.clone(),
        });
        turn.emit(&spec.header, EventKind::ToolCallsAsked { calls: asked.collect() });
        let results = run_tool_calls(turn, spec, messages, &calls, offered, path).await;
        for (call, content) in calls.iter().zip(results) {
            messages.push(Message::Tool { tool_call_id: call.id.clone(), content });
        }
    }
    continuation.steps + 1
}

/// Adds the messages sent into the call since its last step, as user messages,
/// and reports each as taken.
fn take_steers(turn: &Turn, spec: &CallSpec, inbox: Option<&SteerInbox>, messages: &mut Vec<Message>) {
    let Some(inbox) = inbox else { return };
    for steer in inbox.take() {
        messages.push(Message::user(steer.message.clone()));
        let kind = EventKind::CallSteered { message: steer.message, by: steer.by, taken: true, why: None };
        turn.emit(&spec.header, kind);
    }
}

/// A remote agent's question: announced, then answered by the user through the
/// turn's control (the answer is reported, then handed to the runner), or declined
/// at once when the turn's policy answers for it. The question is registered
/// before it is announced, so an answer sent from the event sink itself finds it.
fn ask_user(turn: &Arc<Turn>, header: &Header, question: String, answer: AnswerSlot) {
    if turn.control.policy != ApprovalPolicy::Ask {
        turn.emit(header, EventKind::InputRequested { question });
        turn.emit(header, EventKind::InputAnswered { answer: None, by: "policy".into() });
        answer.send(None);
        return;
    }
    let (from_user, answered) = AnswerSlot::new();
    turn.control.questions.lock().unwrap().insert(header.call_id.clone(), from_user);
    let (weak, header_copy) = (Arc::downgrade(turn), header.clone());
    tokio::spawn(async move {
        // Dropped unanswered (the call ended): nothing to report.
        let Ok(reply) = answered.await else { return };
        if let Some(turn) = weak.upgrade() {
            turn.emit(&header_copy, EventKind::InputAnswered { answer: reply.clone(), by: "user".into() });
        }
        answer.send(reply);
    });
    turn.emit(header, EventKind::InputRequested { question });
}

/// Why a model step stopped short, with the text it had streamed by then.
struct Stopped {
    error: CallError,
    partial: String,
}

/// One model step: streams the runner's deltas into the turn's events and counts
/// them against the budget; stops at a cancel (a call's timeout is one: see
/// `call::within_timeout`) or a spent budget.
/// The step's reported usage replaces what its text was counted as.
async fn model_step(
    turn: &Arc<Turn>,
    spec: &CallSpec,
    runner: &dyn Runner,
    request: &ModelRequest,
    budget: &BudgetStop,
) -> Result<ModelReply, Stopped> {
    let header = &spec.header;
    // What this step streamed: counted for the budget while it streams, kept as the
    // partial result if the step stops short. Borrowed by the delta closure, which
    // is gone once the step is, so no lock sits on the per-delta path.
    let mut streamed_tokens = 0u64;
    let mut partial = String::new();
    let outcome = {
        let mut on_delta = |delta: ModelDelta| {
            if let ModelDelta::InputRequired { question, answer } = delta {
                return ask_user(turn, header, question, answer);
            }
            let estimate = match &delta {
                ModelDelta::Text(text) => {
                    partial.push_str(text);
                    Some(estimate_tokens(text))
                }
                ModelDelta::Reasoning(text) => Some(estimate_tokens(text)),
                ModelDelta::Progress { .. } | ModelDelta::InputRequired { .. } | ModelDelta::Steered { .. } => None,
            };
            let kind = match delta {
                ModelDelta::Text(text) => EventKind::TextDelta { text },
                ModelDelta::Reasoning(text) => EventKind::ReasoningDelta { text },
                ModelDelta::Progress { message, data } => bounded_progress(message, data),
                ModelDelta::Steered { message, by, taken, why } => EventKind::CallSteered { message, by, taken, why },
                ModelDelta::InputRequired { .. } => return,
            };
            turn.emit(header, kind);
            if let Some(tokens) = estimate {
                streamed_tokens = streamed_tokens.saturating_add(tokens);
                if let Some(reason) = turn.add_streaming(&header.call_id, tokens) {
                    budget.reason.lock().unwrap().get_or_insert(reason);
                    budget.stop.cancel();
                }
            }
        };
        tokio::select! {
            biased;
            _ = spec.cancel.cancelled() => Err(cancelled_error()),
            _ = budget.stop.cancelled() => {
                let reason = budget.reason.lock().unwrap().clone().unwrap_or_default();
                Err(CallError::new(CallErrorKind::Budget, format!("stopped while streaming: {reason}")))
            }
            reply = runner.stream(request, &mut on_delta) => reply.map_err(|error| error.to_call_error()),
        }
    };
    let reply = outcome.map_err(|error| Stopped { error, partial })?;
    if let Some(usage) = reply.usage {
        // The real figure replaces what was counted while the text streamed; a
        // runner that reports nothing keeps the estimate counted.
        turn.add_usage(&spec.header, usage, reply.cost, streamed_tokens);
    }
    Ok(reply)
}

/// Runs a step's tool calls as delegations, concurrently up to `max_parallel`, and
/// returns their tool results in the order the model asked.
async fn run_tool_calls(
    turn: &Arc<Turn>,
    spec: &CallSpec,
    messages: &[Message],
    calls: &[ToolCall],
    offered: &[OfferedTool],
    path: &[String],
) -> Vec<String> {
    let could_call: Vec<String> = offered.iter().flat_map(OfferedTool::agents).collect();
    let caller = Caller {
        call_id: Some(&spec.header.call_id),
        agent: Some(&spec.agent.name),
        depth: spec.header.depth,
        path,
        cancel: &spec.cancel,
        messages,
        limits: &spec.limits,
        could_call: &could_call,
        reach: spec.reach.as_deref(),
        floor: spec.floor.as_ref(),
    };
    // Collected first: a lazy iterator's closure would make the future's Send-ness
    // depend on a higher-ranked lifetime the compiler cannot prove.
    let pending: Vec<BoxFuture<'_, String>> =
        calls.iter().map(|call| run_tool_call(turn, &caller, call, offered).boxed()).collect();
    // `buffered` yields in the order asked for.
    futures::stream::iter(pending).buffered(spec.limits.effective_max_parallel() as usize).collect().await
}

/// One tool call of a model, as a delegation; returns the tool result.
async fn run_tool_call(turn: &Arc<Turn>, caller: &Caller<'_>, call: &ToolCall, offered: &[OfferedTool]) -> String {
    let mut delegation = delegation_from_tool_call(turn, call, offered);
    narrowing_refusal(turn, caller, &mut delegation);
    run_delegation(turn, caller, delegation).await.delivered.unwrap_or_default()
}

/// Hands the turn to the escalation agent: a role switch, whose answer is the turn's.
async fn escalate(turn: &Arc<Turn>, spec: &CallSpec, call: &ToolCall, step: u32) -> LoopEnd {
    let target_name = turn.config.escalation.clone().unwrap_or_default();
    let reason = serde_json::from_str::<Value>(&call.function.arguments)
        .ok()
        .and_then(|arguments| arguments.get("reason").and_then(|reason| reason.as_str().map(str::to_owned)));
    turn.emit(
        &spec.header,
        EventKind::Escalated { from: spec.agent.name.clone(), to: target_name.clone(), reason: reason.clone() },
    );
    let Some(target) = turn.config.agent(&target_name).cloned() else {
        let message = format!("escalation agent {target_name:?} is not configured");
        return LoopEnd::stopped(CallError::new(CallErrorKind::UnknownAgent, message));
    };
    let child = CallSpec {
        header: Header {
            call_id: turn.new_call_id(),
            parent_id: Some(spec.header.call_id.clone()),
            agent: target.name.clone(),
            depth: spec.header.depth + 1,
        },
        limits: turn.config.limits_for(&target, None),
        messages: escalation_messages(&target, &spec.messages),
        agent: target,
        role: CallRole::Escalation,
        standing: Standing::Escalation,
        tool_name: Some(ESCALATE.into()),
        input: Some(json!({ "reason": reason })),
        path: vec![spec.agent.name.clone()],
        cancel: spec.cancel.child_token(),
        approval: None,
        model: None,
        keep_conversation: None,
        reach: None,
        floor: None,
        remote_task: None,
    };
    let outcome = run_call(turn.clone(), child).await;
    LoopEnd {
        status: outcome.status,
        text: outcome.text,
        steps: step,
        error: outcome.error,
        answered_by: Some(outcome.answered_by),
        conversation: Vec::new(),
    }
}

/// The most of one progress notification's message and data that is kept (shown,
/// logged, sent on): a remote peer can send any number of them, each of any size.
const PROGRESS_MESSAGE_MAX: usize = 4 * 1024;
const PROGRESS_DATA_MAX: usize = 256 * 1024;

/// A progress event cut to the caps: the message at a character boundary, with a
/// note; data over its cap replaced by a note of its size (a nested Switchboard's
/// events are far smaller).
fn bounded_progress(mut message: String, data: Option<Value>) -> EventKind {
    if message.len() > PROGRESS_MESSAGE_MAX {
        let cut = (0..=PROGRESS_MESSAGE_MAX).rev().find(|index| message.is_char_boundary(*index)).unwrap_or(0);
        let dropped = message.len() - cut;
        message.truncate(cut);
        message.push_str(&format!(" [progress message cut at {PROGRESS_MESSAGE_MAX} bytes: {dropped} more dropped]"));
    }
    let data = data.map(|data| {
        let size = serde_json::to_vec(&data).map(|bytes| bytes.len()).unwrap_or(usize::MAX);
        if size > PROGRESS_DATA_MAX {
            serde_json::json!({ "cut": format!("progress data of {size} bytes dropped (over {PROGRESS_DATA_MAX})") })
        } else {
            data
        }
    });
    EventKind::ToolProgress { message, data }
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    #[test]
    fn a_progress_notification_is_kept_within_its_caps() {
        let EventKind::ToolProgress { message, data } =
            bounded_progress("é".repeat(PROGRESS_MESSAGE_MAX), Some(Value::String("x".repeat(PROGRESS_DATA_MAX))))
        else {
            unreachable!()
        };
        assert!(message.len() < PROGRESS_MESSAGE_MAX + 100, "{}", message.len());
        assert!(message.ends_with(&format!("{} more dropped]", PROGRESS_MESSAGE_MAX)), "{message}");
        assert!(data.unwrap()["cut"].as_str().unwrap().contains("dropped (over 262144)"));
        let EventKind::ToolProgress { message, data } =
            bounded_progress("step 2 of 3".into(), Some(serde_json::json!({ "step": 2 })))
        else {
            unreachable!()
        };
        assert_eq!((message.as_str(), data), ("step 2 of 3", Some(serde_json::json!({ "step": 2 }))));
    }
}
