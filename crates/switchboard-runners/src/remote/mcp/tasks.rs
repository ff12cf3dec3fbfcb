//! An MCP call the server made a task of (the tasks extension, asked for by an
//! agent with `tasks: true`): polled with `tasks/get` at the server's suggested
//! interval (kept between 0.1 and 5 s) until it ends; each new status message is a
//! progress line; the completed task's result is the call's, a failed or cancelled
//! one a `remote` error in the server's words. Dropping the call (cancel, timeout)
//! sends `tasks/cancel`, so the server ends the work too. A resumed call's task
//! (its id from the interrupted turn's log) is followed the same way, if the
//! server still has it.

use std::time::Duration;

use rmcp::model::{CallToolResult, CancelTaskParams, ErrorCode, GetTaskParams, Task, TaskPayload};
use rmcp::service::Peer;
use rmcp::RoleClient;
use serde_json::Value;

use super::CancelOnDrop;
use crate::contract::{DeltaSink, ModelDelta, RunnerError};
use crate::{server_mark, truncate};

/// A resumed call's `task`, followed to its end where the server still has it
/// (`tasks/get` knows it, and it was not cancelled); None when it does not, said
/// as progress (the call is asked again). A server that cannot be asked fails the
/// call: asking again might run the work twice.
pub(super) async fn reattach(
    peer: &Peer<RoleClient>,
    task: &str,
    guarded: impl FnOnce(futures::future::BoxFuture<'static, ()>) -> CancelOnDrop,
    endpoint: &str,
    on_delta: DeltaSink<'_>,
) -> Option<Result<CallToolResult, RunnerError>> {
    let mut gone = |why: String| {
        let message = format!("the server no longer has task {} ({why}): the call is asked again", truncate(task, 80));
        on_delta(ModelDelta::Progress { message, data: None });
    };
    let found = match peer.get_task(GetTaskParams::new(task.to_string())).await {
        Ok(found) if found.task.task.task_id == task => found.task,
        Ok(_) => {
            gone("it answered for another task".into());
            return None;
        }
        // The server says it has no such task (rmcp: invalid params), or no tasks.
        Err(rmcp::ServiceError::McpError(error))
            if [ErrorCode::INVALID_PARAMS, ErrorCode::METHOD_NOT_FOUND].contains(&error.code) =>
        {
            gone(truncate(&error.message, 300));
            return None;
        }
        Err(error) => {
            let message = format!("tasks/get for task {}: {error}", truncate(task, 80));
            return Some(Err(RunnerError::Unreachable { url: endpoint.to_string(), message }));
        }
    };
    if matches!(found.payload, TaskPayload::Cancelled) {
        gone("it was cancelled".into());
        return None;
    }
    if let TaskPayload::Completed { result } = found.payload {
        // Done while nobody followed it: its result at once, no poll to wait for.
        return Some(serde_json::from_value::<CallToolResult>(Value::Object(result)).map_err(|error| {
            RunnerError::Remote {
                url: endpoint.to_string(),
                message: format!("the task's result is not a tool result: {error}"),
            }
        }));
    }
    Some(follow(peer, found.task, guarded, endpoint, true, on_delta).await)
}

/// Polls `task` on `peer` to its end: the tool result, or why there is none.
/// `guarded` arms the call's cancel notice (sent if the call is dropped first).
/// A task of a server over HTTP is logged with the server's mark, so a resumed
/// call can follow it; a stdio server's tasks end with the process that runs it.
pub(super) async fn follow(
    peer: &Peer<RoleClient>,
    task: Task,
    guarded: impl FnOnce(futures::future::BoxFuture<'static, ()>) -> CancelOnDrop,
    endpoint: &str,
    over_http: bool,
    on_delta: DeltaSink<'_>,
) -> Result<CallToolResult, RunnerError> {
    let remote = |message: String| RunnerError::Remote { url: endpoint.to_string(), message };
    let interval = Duration::from_millis(task.poll_interval_ms.unwrap_or(1000).clamp(100, 5000));
    let (cancelling, task_id) = (peer.clone(), task.task_id.clone());
    let mut guard = guarded(Box::pin(async move {
        let _ = cancelling.cancel_task(CancelTaskParams::new(task_id)).await;
    }));
    let ttl = task.ttl_ms.map(|ms| format!(", kept {} s", ms / 1000)).unwrap_or_default();
    // Logged with where it runs: a resumed call follows it there, and only there.
    let mut task_data = serde_json::json!({ "id": task.task_id, "ttl_ms": task.ttl_ms });
    if over_http {
        task_data["server"] = Value::String(server_mark(endpoint));
    }
    on_delta(ModelDelta::Progress {
        message: format!("the server runs the call as task {}{ttl}", truncate(&task.task_id, 80)),
        data: Some(serde_json::json!({ "task": task_data })),
    });
    let mut said = task.status_message.clone();
    loop {
        tokio::time::sleep(interval).await;
        let polled = peer.get_task(GetTaskParams::new(task.task_id.clone())).await.map_err(|error| {
            RunnerError::Unreachable { url: endpoint.to_string(), message: format!("tasks/get: {error}") }
        })?;
        let detailed = polled.task;
        if detailed.task.status_message.is_some() && detailed.task.status_message != said {
            said = detailed.task.status_message.clone();
            let message = truncate(said.as_deref().unwrap_or_default(), 400);
            on_delta(ModelDelta::Progress { message, data: None });
        }
        match detailed.payload {
            TaskPayload::Working => continue,
            TaskPayload::Completed { result } => {
                guard.disarm();
                return serde_json::from_value::<CallToolResult>(Value::Object(result))
                    .map_err(|error| remote(format!("the task's result is not a tool result: {error}")));
            }
            TaskPayload::Failed { error } => {
                guard.disarm();
                let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
                return Err(remote(format!("the server's task failed: {}", truncate(message, 1000))));
            }
            TaskPayload::Cancelled => {
                guard.disarm();
                return Err(remote("the server cancelled the task".into()));
            }
            TaskPayload::InputRequired { .. } => {
                // Sent `tasks/cancel` by the guard: nobody here can answer the server.
                return Err(remote(
                    "the server's task asks for input (an approval or a question) that a delegated call cannot give: \
                     it was cancelled"
                        .into(),
                ));
            }
            _ => continue,
        }
    }
}
