//! How a running call asks the client's user (an approval, a remote agent's
//! question), by the revision and extensions the client speaks: a server-initiated
//! elicitation on its session (2025 revisions); an `input_required` status of the
//! call's task, answered by `tasks/update` (the tasks extension); or an
//! `input_required` result of its `tools/call`, answered when the client retries it
//! with `inputResponses` and the `requestState` handle (2026-07-28 multi round-trip).
//!
//! A round's state stays here, server-side: `requestState` is only an opaque,
//! random handle, used once. A handle that is unknown (tampered, expired, used)
//! is refused; a round nobody answers within `ROUND_WAIT` cancels its call.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    InputRequest, InputRequests, InputRequiredResult,
};
use rmcp::service::Peer;
use rmcp::task_manager::TaskContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use switchboard_core::dispatch::TurnControl;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest a server-initiated elicitation, or a round, waits for the user.
pub(crate) const ROUND_WAIT: Duration = Duration::from_secs(600);

/// One question for the client, waiting for its answer.
pub(crate) struct Question {
    pub key: String,
    pub request: InputRequest,
    pub answer: oneshot::Sender<Value>,
}

/// Who a running call's questions go to.
#[derive(Clone)]
pub(crate) enum Asker {
    /// A server-initiated `elicitation/create` on the client's session.
    Session(Peer<RoleServer>),
    /// An `input_required` status of the call's task.
    Task(TaskContext),
    /// An `input_required` result of the call's `tools/call`.
    Rounds(mpsc::UnboundedSender<Question>),
}

/// The client's answer: what its user did and the form's content (`None`:
/// nobody answered: the request failed, timed out or the call moved on).
pub(crate) type Answer = Option<(ElicitationAction, Option<Value>)>;

impl Asker {
    /// Puts a form to the client's user under `key` (unique within the call).
    pub async fn elicit(&self, key: String, params: ElicitRequestParams) -> Answer {
        match self {
            Asker::Session(peer) => match peer.create_elicitation_with_timeout(params, Some(ROUND_WAIT)).await {
                Ok(result) => Some((result.action, result.content)),
                Err(error) => {
                    tracing::warn!("elicitation failed: {error}");
                    None
                }
            },
            Asker::Task(task) => {
                let request = InputRequest::Elicitation(ElicitRequest::new(params));
                read_answer(task.request_input(key, request).await.ok()?)
            }
            Asker::Rounds(questions) => {
                let (answer, answered) = oneshot::channel();
                let request = InputRequest::Elicitation(ElicitRequest::new(params));
                questions.send(Question { key, request, answer }).ok()?;
                read_answer(tokio::time::timeout(ROUND_WAIT, answered).await.ok()?.ok()?)
            }
        }
    }
}

fn read_answer(value: Value) -> Answer {
    let result: ElicitResult = serde_json::from_value(value).ok()?;
    Some((result.action, result.content))
}

/// A call between rounds: running, with the questions it asked and has no answer to.
struct Round {
    run: JoinHandle<CallToolResult>,
    questions: mpsc::UnboundedReceiver<Question>,
    waiting: BTreeMap<String, (InputRequest, oneshot::Sender<Value>)>,
    control: TurnControl,
}

/// The calls of stateless clients that wait for a retry, by their handle.
#[derive(Clone, Default)]
pub(crate) struct Rounds {
    pending: Arc<Mutex<HashMap<String, Round>>>,
}

impl Rounds {
    /// A call started for a client that answers by retrying: its first result.
    pub async fn start(
        &self,
        run: JoinHandle<CallToolResult>,
        questions: mpsc::UnboundedReceiver<Question>,
        control: TurnControl,
        gone: CancellationToken,
    ) -> CallToolResponse {
        self.next(Round { run, questions, waiting: BTreeMap::new(), control }, gone).await
    }

    /// A retry: `responses` answer the round `handle` named. The round is used up;
    /// a malformed answer refuses the retry and keeps the round for a good one.
    pub async fn resume(
        &self,
        handle: &str,
        responses: BTreeMap<String, Value>,
        gone: CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let mut round = self.pending.lock().unwrap().remove(handle).ok_or_else(|| {
            McpError::invalid_params(
                "requestState names no waiting call here (it was used, has expired, or was altered)",
                None,
            )
        })?;
        if let Some((key, _)) = responses.iter().find(|(key, value)| {
            round.waiting.contains_key(*key) && serde_json::from_value::<ElicitResult>((*value).clone()).is_err()
        }) {
            let message = format!("inputResponses[{key:?}] is not an elicitation result (an object with `action`)");
            self.keep(handle.to_string(), round);
            return Err(McpError::invalid_params(message, None));
        }
        for (key, value) in responses {
            // Keys this call did not ask are ignored, as the protocol says.
            if let Some((_, answer)) = round.waiting.remove(&key) {
                let _ = answer.send(value);
            }
        }
        Ok(self.next(round, gone).await)
    }

    /// Waits for the call to end, or to ask something: its result, or the
    /// questions it waits on under a new handle. The client going away cancels it.
    async fn next(&self, mut round: Round, gone: CancellationToken) -> CallToolResponse {
        if round.waiting.is_empty() {
            tokio::select! {
                ended = &mut round.run => return CallToolResponse::Complete(ended_result(ended)),
                Some(question) = round.questions.recv() => {
                    round.waiting.insert(question.key, (question.request, question.answer));
                }
                () = gone.cancelled() => {
                    round.control.cancel_turn();
                    return CallToolResponse::Complete(ended_result(round.run.await));
                }
            }
        }
        // Every question asked meanwhile goes out in the same round.
        while let Ok(question) = round.questions.try_recv() {
            round.waiting.insert(question.key, (question.request, question.answer));
        }
        let requests: InputRequests =
            round.waiting.iter().map(|(key, (request, _))| (key.clone(), request.clone())).collect();
        let handle = switchboard_core::sources::random_nonce();
        self.keep(handle.clone(), round);
        CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(handle)))
    }

    /// Keeps a round for its retry; after `ROUND_WAIT` without one, its call is cancelled.
    fn keep(&self, handle: String, round: Round) {
        self.pending.lock().unwrap().insert(handle.clone(), round);
        let pending = self.pending.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ROUND_WAIT).await;
            let expired = pending.lock().unwrap().remove(&handle);
            if let Some(round) = expired {
                tracing::warn!("a client did not come back to answer its call's questions: the call is cancelled");
                round.control.cancel_turn();
            }
        });
    }
}

fn ended_result(ended: Result<CallToolResult, tokio::task::JoinError>) -> CallToolResult {
    ended.unwrap_or_else(|error| {
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!("the call stopped: {error}"))])
    })
}
