//! Steering an `a2a` call: each message sent into the running call goes out as a
//! `SendMessage` on the call's task (its id and context) that returns at once,
//! while the call goes on reading the task; each is reported when the agent
//! answers: taken when it accepted the message, not taken (with its words) when
//! it refused. A message sent before the task has an id waits for one. One that
//! is out when the call ends, unanswered, goes back to the call's inbox, which
//! reports it as not taken.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};

use super::{A2aRunner, AgentCard};
use crate::contract::{DeltaSink, ModelDelta, SteerInbox, SteerMessage};
use crate::truncate;

/// How long the agent has to answer a message on its task.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

type Answer = (u64, Result<(), String>);

/// The messages of one call on their way to its task.
pub(super) struct Steerer<'a> {
    inbox: Option<SteerInbox>,
    sending: FuturesUnordered<BoxFuture<'a, Answer>>,
    /// Sent and not answered yet, by the order they were sent in.
    out: BTreeMap<u64, SteerMessage>,
    sent: u64,
}

impl<'a> Steerer<'a> {
    pub(super) fn new(inbox: Option<SteerInbox>) -> Steerer<'a> {
        Steerer { inbox, sending: FuturesUnordered::new(), out: BTreeMap::new(), sent: 0 }
    }

    pub(super) fn inbox(&self) -> Option<SteerInbox> {
        self.inbox.clone()
    }

    /// Sends every waiting message on `task`.
    pub(super) fn send_waiting(
        &mut self,
        runner: &'a A2aRunner,
        card: &'a AgentCard,
        task: &str,
        context: Option<&str>,
    ) {
        let Some(inbox) = &self.inbox else { return };
        for steer in inbox.take() {
            let mut message = card.dialect.user_message((runner.nonce)(), &steer.message);
            message["taskId"] = json!(task);
            if let Some(context) = context {
                message["contextId"] = json!(context);
            }
            self.sent += 1;
            let id = self.sent;
            self.out.insert(id, steer);
            let params = json!({ "message": message, "configuration": card.dialect.return_at_once() });
            self.sending.push(Box::pin(async move {
                let answer = tokio::time::timeout(ANSWER_WITHIN, runner.call_result(card, "SendMessage", params)).await;
                let outcome = match answer {
                    Ok(Ok(result)) => accepted(&result),
                    Ok(Err(error)) => Err(format!("the agent refused it: {error}")),
                    Err(_) => Err(format!("the agent did not answer it within {} s", ANSWER_WITHIN.as_secs())),
                };
                (id, outcome)
            }));
        }
    }

    /// The next answer of the agent to a message, reported (never returns while
    /// no message is out).
    pub(super) async fn answered(&mut self, on_delta: DeltaSink<'_>) {
        let Some((id, outcome)) = self.sending.next().await else { return std::future::pending().await };
        let Some(steer) = self.out.remove(&id) else { return };
        let (taken, why) = match outcome {
            Ok(()) => (true, None),
            Err(why) => (false, Some(truncate(&why, 500))),
        };
        on_delta(ModelDelta::Steered { message: steer.message, by: steer.by, taken, why });
    }

    /// Whether a message is out, not answered yet.
    pub(super) fn waiting_for_answers(&self) -> bool {
        !self.out.is_empty()
    }
}

/// An answer that names a task in an end state did not take the message (an
/// agent may answer with the task as it is, already done).
fn accepted(result: &Value) -> Result<(), String> {
    let state = result.pointer("/task/status/state").and_then(Value::as_str).unwrap_or_default();
    match state {
        "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_REJECTED" | "TASK_STATE_CANCELED" => {
            Err(format!("the task had ended ({})", super::progress::short_state(state)))
        }
        _ => Ok(()),
    }
}

impl Drop for Steerer<'_> {
    /// Messages still out go back to the inbox: the call reports them as not taken.
    fn drop(&mut self) {
        if let Some(inbox) = &self.inbox {
            for steer in std::mem::take(&mut self.out).into_values() {
                inbox.push(steer);
            }
        }
    }
}
