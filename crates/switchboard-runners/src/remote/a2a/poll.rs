//! The A2A calls that poll: a `SendMessage` that returns at once (an agent
//! whose card does not say `streaming`), then its task read with `GetTask` until
//! it ends; and a resumed call's task, found by its id (from the interrupted
//! turn's log) and polled the same way, whatever the card says.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::progress::Progress;
use super::steer::Steerer;
use super::{rpc_error, A2aRunner, AgentCard, CancelOnDrop, POLL_EVERY};
use crate::contract::{steer_arrived, DeltaSink, ModelDelta, RemoteTask, RunnerError};
use crate::{server_mark, truncate};

impl A2aRunner {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn polled<'a>(
        &'a self,
        card: &'a AgentCard,
        message: Value,
        guard: &mut CancelOnDrop,
        progress: &mut Progress,
        steerer: &mut Steerer<'a>,
        on_delta: DeltaSink<'_>,
        idle: Duration,
    ) -> Result<(), RunnerError> {
        let params = json!({ "message": message, "configuration": card.dialect.return_at_once() });
        let result = self.call_result(card, "SendMessage", params).await?;
        if progress.take(&result, guard, on_delta, &card.endpoint)? {
            return Ok(());
        }
        let task_id = guard.task.clone().ok_or_else(|| RunnerError::MalformedStream {
            url: card.endpoint.clone(),
            message: "SendMessage answered with neither a task nor a message".into(),
        })?;
        self.poll_task(card, &task_id, guard, progress, steerer, on_delta, idle).await
    }

    /// A resumed call's task as the agent has it now (`GetTask`), when it was
    /// started at this agent's endpoint and the agent still has it, not cancelled;
    /// None when not (the call is asked again), said as progress. An agent that
    /// cannot be asked fails the call: asking again might run the work twice.
    pub(super) async fn find_task(
        &self,
        card: &AgentCard,
        task: &RemoteTask,
        on_delta: DeltaSink<'_>,
    ) -> Result<Option<Value>, RunnerError> {
        let mut gone = |why: &str| {
            let message =
                format!("the agent no longer has task {} ({why}): the call is asked again", truncate(&task.id, 80));
            on_delta(ModelDelta::Progress { message, data: None });
            Ok(None)
        };
        if task.server != server_mark(&card.endpoint) {
            return gone("it was started at another endpoint than this agent's");
        }
        let found = match self.call_answer(card, "GetTask", json!({ "id": task.id })).await? {
            Ok(found) => task_in(found),
            // TaskNotFoundError, in A2A 1.0 and 0.3.
            Err(error) if error.get("code").and_then(Value::as_i64) == Some(-32001) => {
                let words = error.get("message").and_then(Value::as_str).unwrap_or("task not found");
                return gone(&truncate(words, 300));
            }
            Err(error) => return Err(rpc_error(&card.endpoint, &error)),
        };
        if found.get("id").and_then(Value::as_str) != Some(task.id.as_str()) {
            return gone("it answered for another task");
        }
        if found.pointer("/status/state").and_then(Value::as_str) == Some("TASK_STATE_CANCELED") {
            return gone("it was cancelled");
        }
        Ok(Some(found))
    }

    /// A resumed call's task (`find_task`), followed to its end by polling, as if
    /// this call had started it (its id logged again, for a later resume).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn attached<'a>(
        &'a self,
        card: &'a AgentCard,
        task: Value,
        guard: &mut CancelOnDrop,
        progress: &mut Progress,
        steerer: &mut Steerer<'a>,
        on_delta: DeltaSink<'_>,
        idle: Duration,
    ) -> Result<(), RunnerError> {
        let task_id = task.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        on_delta(ModelDelta::Progress {
            message: format!("following task {} again", truncate(&task_id, 80)),
            data: Some(json!({ "a2a_task": task_id, "server": server_mark(&card.endpoint) })),
        });
        guard.task = Some(task_id.clone());
        if progress.take(&json!({ "task": task }), guard, on_delta, &card.endpoint)? {
            return Ok(());
        }
        self.poll_task(card, &task_id, guard, progress, steerer, on_delta, idle).await
    }

    /// Polls the call's task with `GetTask` until it ends; the messages the call
    /// is steered with go to it meanwhile.
    #[allow(clippy::too_many_arguments)]
    async fn poll_task<'a>(
        &'a self,
        card: &'a AgentCard,
        task_id: &str,
        guard: &mut CancelOnDrop,
        progress: &mut Progress,
        steerer: &mut Steerer<'a>,
        on_delta: DeltaSink<'_>,
        idle: Duration,
    ) -> Result<(), RunnerError> {
        // A task that says nothing new (no text, state or status words) for `idle` is silent.
        let mut last_news = Instant::now();
        let inbox = steerer.inbox();
        loop {
            let poll = tokio::time::sleep(POLL_EVERY);
            tokio::pin!(poll);
            loop {
                tokio::select! {
                    biased;
                    () = steerer.answered(on_delta) => {}
                    () = steer_arrived(inbox.as_ref()) => {
                        steerer.send_waiting(self, card, task_id, progress.context.as_deref());
                    }
                    () = &mut poll => break,
                }
            }
            let before = progress.news;
            let task = task_in(self.call_result(card, "GetTask", json!({ "id": task_id })).await?);
            // New artifact parts since the last poll stream as text.
            progress.task_artifacts(&task, on_delta);
            let status = json!({ "statusUpdate": { "taskId": task_id, "status": task.get("status").cloned().unwrap_or_default() } });
            if progress.take(&status, guard, on_delta, &card.endpoint)? {
                return Ok(());
            }
            if progress.news != before {
                last_news = Instant::now();
            } else if last_news.elapsed() >= idle {
                return Err(RunnerError::Idle { url: card.endpoint.clone(), secs: idle.as_secs() });
            }
        }
    }
}

/// The task a `GetTask` answer holds: the task itself, or under `task`.
fn task_in(answer: Value) -> Value {
    match answer.get("task") {
        Some(task) => task.clone(),
        None => answer,
    }
}
