//! One call of the tree, from its `call_started` to its `call_finished`: the tools it
//! is offered, the wait for approval, its tool loop, and what its caller receives
//! (the answer fenced as untrusted data). A delegation enters here after
//! `admit.rs` has said whether it may run; a refused one still becomes a node.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::json;

use crate::contract::Message;
use crate::event::{CallError, CallErrorKind, CallRole, CallStatus, EventKind, Steering};
use crate::fence::fence;
use crate::tools::{offered_tools, OfferedTool, Standing};

use super::admit::{admit, Caller, Delegation};
use super::approval::await_approval;
use super::messages::{add_to_system_prompt, child_messages, SharedContext};
use super::reuse::{node_input, take, Kept, ReusedCall};
use super::spec::CallSpec;
use super::tool_loop::{tool_loop, LoopEnd};
use super::turn::{Figures, Header, Turn};

pub(super) struct CallOutcome {
    pub status: CallStatus,
    pub text: String,
    pub answered_by: String,
    pub figures: Figures,
    pub steps: u32,
    pub error: Option<CallError>,
    /// The tool result the parent model receives (fenced), for delegate calls.
    pub delivered: Option<String>,
}

pub(super) fn finished(
    status: CallStatus,
    result: Option<String>,
    figures: Figures,
    steps: u32,
    error: Option<CallError>,
    delivered: Option<String>,
) -> EventKind {
    EventKind::CallFinished {
        status,
        result,
        usage: figures.usage,
        usage_total: figures.usage_total,
        cost: figures.cost,
        cost_total: figures.cost_total,
        steps,
        error,
        delivered,
    }
}

/// Runs a call's work under its `limits.timeout_secs`, which covers all of it: the
/// wait for approval, every model step and the delegates it waits for. At the
/// deadline the call is cancelled (its delegates with it, through their child
/// tokens), runs to its end as a cancelled call would (every node finishes, the
/// text so far kept), and ends with a `timeout` error.
async fn within_timeout(
    timeout_secs: Option<u64>,
    cancel: &tokio_util::sync::CancellationToken,
    work: impl std::future::Future<Output = LoopEnd>,
) -> LoopEnd {
    let Some(secs) = timeout_secs else { return work.await };
    tokio::pin!(work);
    tokio::select! {
        outcome = &mut work => outcome,
        () = tokio::time::sleep(std::time::Duration::from_secs(secs)) => {
            cancel.cancel();
            let mut outcome = work.await;
            let message = format!(
                "the call ran longer than {secs} s (limits.timeout_secs, which counts the wait for approval and for its delegates)"
            );
            let error = CallError::new(CallErrorKind::Timeout, message);
            outcome.status = error.status();
            outcome.error = Some(error);
            outcome
        }
    }
}

/// Runs one call to its end. Boxed: calls nest.
pub(super) fn run_call(turn: Arc<Turn>, mut spec: CallSpec) -> BoxFuture<'static, CallOutcome> {
    async move {
        let mut path = spec.path.clone();
        path.push(spec.agent.name.clone());
        let runner = turn.runners.get_or_build(&spec.agent);
        let accepts_tools = runner.as_ref().map(|runner| runner.accepts_tools()).unwrap_or(false);
        let offered: Vec<OfferedTool> = if accepts_tools {
            let max_depth = spec.limits.effective_max_depth();
            offered_tools(&turn.config, &spec.agent.name, spec.standing, &path, max_depth, spec.reach.as_deref())
        } else {
            Vec::new()
        };
        if offered.iter().any(OfferedTool::delegates) {
            if let Some(guidance) = crate::skill::guidance_for(&spec.agent) {
                add_to_system_prompt(&mut spec.messages, &guidance);
            }
        }
        let steering = match &runner {
            Ok(runner) => runner.steering(),
            Err(_) => Steering::not("its agent could not be started"),
        };
        turn.register_node(&spec.header, spec.agent.prices);
        let inbox = turn.control.register(&spec.header.call_id, spec.cancel.clone(), &steering);
        turn.emit(
            &spec.header,
            EventKind::CallStarted {
                role: spec.role,
                tool_name: spec.tool_name.clone(),
                input: spec.input.clone(),
                tools: offered.iter().map(|tool| tool.name.clone()).collect(),
                model: spec.model.clone().or_else(|| spec.agent.model.clone()),
                steering,
            },
        );
        let work = async {
            let approved = match &spec.approval {
                Some(limits) => await_approval(&turn, &spec, limits.clone()).await,
                None => Ok(()),
            };
            match (approved, runner) {
                (Err(refusal), _) => LoopEnd::stopped(refusal),
                (Ok(()), Ok(runner)) => tool_loop(&turn, &spec, runner, &offered, &path, inbox.as_ref()).await,
                (Ok(()), Err(error)) => LoopEnd::stopped(error.to_call_error()),
            }
        };
        let outcome = within_timeout(spec.limits.timeout_secs, &spec.cancel, work).await;
        turn.control.unregister(&spec.header.call_id);
        // Sent, but the call ended before it took them in: reported, not lost.
        for steer in inbox.map(|inbox| inbox.take()).unwrap_or_default() {
            let kind = EventKind::CallSteered { message: steer.message, by: steer.by, taken: false, why: None };
            turn.emit(&spec.header, kind);
        }
        if let Some(caller) = &spec.keep_conversation {
            if outcome.status == CallStatus::Ok {
                let kept: Vec<Message> = outcome
                    .conversation
                    .iter()
                    .filter(|message| !matches!(message, Message::System { .. }))
                    .cloned()
                    .collect();
                turn.control.session.keep_conversation(caller, &spec.agent.name, kept);
            }
        }
        let figures = turn.figures_of(&spec.header.call_id);
        let delivered = matches!(spec.role, CallRole::Tool | CallRole::Advisor)
            .then(|| deliver(&turn, &spec.agent.name, outcome.status, &outcome.text, outcome.error.as_ref()));
        let result = (!outcome.text.is_empty() || outcome.status == CallStatus::Ok).then(|| outcome.text.clone());
        turn.emit(
            &spec.header,
            finished(outcome.status, result, figures, outcome.steps, outcome.error.clone(), delivered.clone()),
        );
        CallOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by.unwrap_or_else(|| spec.agent.name.clone()),
            figures,
            steps: outcome.steps,
            error: outcome.error,
            delivered,
        }
    }
    .boxed()
}

/// Runs a delegation: admitted, it becomes a child call; refused, a node that
/// starts and finishes at once with the refusal. Either way the caller receives a
/// fenced result.
pub(super) async fn run_delegation(turn: &Arc<Turn>, caller: &Caller<'_>, delegation: Delegation) -> CallOutcome {
    let header = Header {
        call_id: turn.new_call_id(),
        parent_id: caller.call_id.map(str::to_owned),
        agent: delegation.target.clone(),
        depth: caller.depth + 1,
    };
    // A resumed turn hands back what its interrupted turn's delegate answered (to
    // its primary's calls: a delegate's own calls ran inside that delegate), or
    // follows the remote task it had running.
    let mut remote_task = None;
    if let (0, Ok(request)) = (caller.depth, &delegation.request) {
        let input = node_input(&request.request, request.context.as_ref(), request.model.as_deref());
        match take(&turn.reuse, &delegation.target, &delegation.tool_name, &input) {
            Some(reused @ ReusedCall { kept: Kept::Answer(_), .. }) => return answer_from_log(turn, &header, reused),
            Some(reused) => remote_task = Some(reused),
            None => {}
        }
    }
    // Admitted and approved as any call (it may be asked again if the task is gone).
    let admitted = match admit(turn, caller, &delegation, header.depth) {
        Ok(admitted) => admitted,
        Err(refusal) => return refuse(turn, &header, &delegation, refusal),
    };
    let request = delegation.request.as_ref().expect("an admitted delegation has a request");
    let caller_name = caller.agent.unwrap_or_default();
    let earlier = if admitted.persistent {
        turn.control.session.conversation(caller_name, &admitted.target.name)
    } else {
        Vec::new()
    };
    let shared = SharedContext { caller: caller_name, messages: caller.messages, count: admitted.shared_messages };
    let messages = child_messages(&admitted.target, earlier, shared, request.context.as_ref(), &request.request);
    let input = node_input(&request.request, request.context.as_ref(), request.model.as_deref());
    let standing =
        if request.role == CallRole::Advisor { Standing::Escalation } else { Standing::Tool { depth: header.depth } };
    let child = CallSpec {
        header,
        agent: admitted.target,
        role: request.role,
        standing,
        tool_name: Some(delegation.tool_name.clone()),
        input: Some(input),
        messages,
        path: caller.path.to_vec(),
        cancel: caller.cancel.child_token(),
        approval: admitted.approval,
        limits: admitted.limits,
        model: request.model.clone(),
        keep_conversation: admitted.persistent.then(|| caller_name.to_string()),
        reach: admitted.reach,
        floor: admitted.floor,
        remote_task,
    };
    run_call(turn.clone(), child).await
}

/// The node of a call answered from the log: started, a progress line naming
/// where its answer comes from, finished `ok` with no usage (it was paid for once).
fn answer_from_log(turn: &Turn, header: &Header, reused: ReusedCall) -> CallOutcome {
    let Kept::Answer(text) = reused.kept else { unreachable!("only an answer is handed back") };
    turn.register_node(header, None);
    let started = EventKind::CallStarted {
        role: CallRole::Tool,
        tool_name: Some(reused.tool_name.clone()),
        input: Some(reused.input.clone()),
        tools: vec![],
        model: None,
        steering: Steering::not("its answer comes from the interrupted turn: it does not run again"),
    };
    turn.emit(header, started);
    let message = format!(
        "answer kept from call {} of turn {} (not run again, not paid again)",
        reused.from_call, reused.from_turn
    );
    let data = json!({ "reused": { "turn": reused.from_turn, "call": reused.from_call } });
    turn.emit(header, EventKind::ToolProgress { message, data: Some(data) });
    let delivered = deliver(turn, &header.agent, CallStatus::Ok, &text, None);
    let end = finished(CallStatus::Ok, Some(text.clone()), Figures::default(), 0, None, Some(delivered.clone()));
    turn.emit(header, end);
    CallOutcome {
        status: CallStatus::Ok,
        text,
        answered_by: header.agent.clone(),
        figures: Figures::default(),
        steps: 0,
        error: None,
        delivered: Some(delivered),
    }
}

/// A refused delegation: one node that starts and finishes with the refusal.
fn refuse(turn: &Turn, header: &Header, delegation: &Delegation, refusal: CallError) -> CallOutcome {
    let status = refusal.status();
    turn.register_node(header, None);
    let started = EventKind::CallStarted {
        role: CallRole::Tool,
        tool_name: Some(delegation.tool_name.clone()),
        input: delegation.arguments.clone(),
        tools: vec![],
        model: None,
        steering: Steering::not("it was refused before it ran"),
    };
    turn.emit(header, started);
    let delivered = deliver(turn, &header.agent, status, "", Some(&refusal));
    let finish = finished(status, None, Figures::default(), 0, Some(refusal.clone()), Some(delivered.clone()));
    turn.emit(header, finish);
    CallOutcome {
        status,
        text: String::new(),
        answered_by: header.agent.clone(),
        figures: Figures::default(),
        steps: 0,
        error: Some(refusal),
        delivered: Some(delivered),
    }
}

/// The tool result string the parent model receives: the child's text or a
/// structured error, fenced as untrusted data.
fn deliver(turn: &Turn, agent: &str, status: CallStatus, text: &str, error: Option<&CallError>) -> String {
    let body = match status {
        CallStatus::Ok => text.to_string(),
        status => json!({
            "status": status,
            "agent": agent,
            "error": error.map(|error| json!({ "kind": error.kind, "message": error.message })),
            "partial_result": (!text.is_empty()).then(|| text.to_string()),
        })
        .to_string(),
    };
    fence(agent, status, &(turn.nonce)(), &body)
}
