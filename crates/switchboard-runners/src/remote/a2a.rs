//! The `a2a` provider: an agent reached over the Agent2Agent protocol (A2A 1.0,
//! JSON-RPC binding, as the Python `a2a-sdk` 1.x serves it; 0.3 agents too). Its card is read from
//! `/.well-known/agent-card.json` under `url` (or `url` names the card); the call
//! is a `SendStreamingMessage` when the card says `streaming`, else a
//! `SendMessage` that returns at once and is polled with `GetTask`. Status updates
//! are progress, artifact chunks the call's text as it streams, the artifacts'
//! text the answer; a failed, rejected or cancelled task is a `remote` error with
//! its words. A task in `input-required` asks the user (`ModelDelta::InputRequired`)
//! and the answer continues the same task; declined, or with no one to answer, the
//! call is a `remote` error and the task is cancelled. Dropping the call
//! (cancel, timeout) sends `CancelTask`: closing the stream does not stop a task.
//! A message the call is steered with goes to the task as a message on it while
//! the call reads the task (`a2a/steer.rs`; `Steering::OnTask`).
//! The card is read in `a2a/card.rs`, each result in `a2a/progress.rs`. Written
//! on reqwest and the SSE parser the `local` runner uses; the official Rust client
//! (`a2a-client-lf`) builds gRPC and a vendored `protoc` we do not need.

mod card;
mod poll;
mod progress;
mod steer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};

use progress::{short_state, Progress};
use steer::Steerer;

use crate::config::AgentConfig;
use crate::contract::{
    steer_arrived, AnswerSlot, DeltaSink, Message, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError,
};
use crate::event::Steering;
use crate::http::{body_prefix, body_within, error_chain, Origins, ERROR_BODY_BYTES};
use crate::registry::Registry;
use crate::sources::{random_nonce, NonceSource};
use crate::sse::SseReader;
use crate::{max_output_bytes, redact, remote_connected, remote_latency, truncate, within};

pub use card::{parse_card, AgentCard, Dialect};

const CARD_PATH: &str = "/.well-known/agent-card.json";
const DEFAULT_TIMEOUT_SECS: u64 = 600;
const POLL_EVERY: Duration = Duration::from_millis(250);
/// How long a call whose task stopped waits for the agent's answers to the
/// messages it was steered with.
const LAST_ANSWERS_WITHIN: Duration = Duration::from_secs(5);
/// The largest agent card read (a card is a few kilobytes).
const MAX_CARD_BYTES: usize = 1024 * 1024;

pub struct A2aRunner {
    agent: AgentConfig,
    /// Where cancels on their way are kept, so a shell's `shutdown` lets them go out.
    registry: Arc<Registry>,
    /// Message ids (the OS's random source unless a test gives its own).
    nonce: NonceSource,
    client: reqwest::Client,
    /// Where its requests may go: `url`'s origin and `allowed_origins`.
    origins: Origins,
    card: tokio::sync::Mutex<Option<AgentCard>>,
    /// Tasks whose turn ended waiting for the next one (Google's server ends every
    /// turn `input-required`), by the conversation they answered: a persistent
    /// entry's next call, whose earlier messages are that conversation, continues
    /// the task instead of starting over.
    open_tasks: std::sync::Mutex<std::collections::HashMap<String, OpenTask>>,
}

/// A remote task left open after a finished turn.
impl std::fmt::Debug for A2aRunner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("A2aRunner").field("agent", &self.agent.name).finish_non_exhaustive()
    }
}

#[derive(Debug, Clone)]
struct OpenTask {
    task: String,
    context: Option<String>,
}

/// The most open tasks remembered (past it, all are forgotten: they start over).
const OPEN_TASKS: usize = 256;

/// A conversation's fingerprint: its messages but the system prompt, in order.
fn conversation_key(messages: &[Message]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for message in messages.iter().filter(|message| !matches!(message, Message::System { .. })) {
        hasher.update(serde_json::to_vec(message).unwrap_or_default());
        hasher.update([0]);
    }
    format!("{:x}", hasher.finalize())
}

impl A2aRunner {
    pub fn new(agent: &AgentConfig, registry: Arc<Registry>) -> Result<A2aRunner, RunnerError> {
        if agent.url.is_none() {
            return Err(RunnerError::Config(format!("agent {:?}: an a2a agent needs `url`", agent.name)));
        }
        let origins = Origins::of(agent);
        Ok(A2aRunner {
            agent: agent.clone(),
            registry,
            nonce: Arc::new(random_nonce),
            client: origins.client(reqwest::Client::builder())?,
            origins,
            card: tokio::sync::Mutex::new(None),
            open_tasks: std::sync::Mutex::new(std::collections::HashMap::new()),
        })
    }

    fn card_url(&self) -> String {
        let url = self.agent.url.clone().unwrap_or_default();
        if url.ends_with(".json") {
            url
        } else {
            format!("{}{CARD_PATH}", url.trim_end_matches('/'))
        }
    }

    fn token(&self) -> Result<Option<String>, RunnerError> {
        match &self.agent.api_key_env {
            Some(variable) => std::env::var(variable)
                .map(Some)
                .map_err(|_| RunnerError::Config(format!("agent {:?}: {variable} is not set", self.agent.name))),
            None => Ok(None),
        }
    }

    /// The agent's card (read once, kept while the runner is cached).
    pub async fn card(&self) -> Result<AgentCard, RunnerError> {
        let mut slot = self.card.lock().await;
        if let Some(card) = slot.as_ref() {
            return Ok(card.clone());
        }
        let url = self.card_url();
        let response = self
            .client
            .get(&url)
            .send()
            .await
            .map_err(|error| RunnerError::Unreachable { url: url.clone(), message: error_chain(&error) })?;
        let status = response.status();
        if !status.is_success() {
            let body = body_prefix(response, ERROR_BODY_BYTES).await;
            let body = truncate(&redact(&body, self.token()?.as_deref()), 300);
            return Err(RunnerError::Http { status: status.as_u16(), url, body });
        }
        let body = body_within(response, MAX_CARD_BYTES).await.map_err(|error| RunnerError::MalformedStream {
            url: url.clone(),
            message: format!("the agent card: {error}").replace("(max_output_bytes)", "(1 MiB)"),
        })?;
        let value: Value = serde_json::from_str(&body).map_err(|error| RunnerError::MalformedStream {
            url: url.clone(),
            message: format!("the agent card is not JSON: {error}"),
        })?;
        let card = parse_card(&value).map_err(|message| RunnerError::Config(format!("{url}: {message}")))?;
        // A card names where calls go: never an origin the config did not name
        // (the user's token would follow the calls there).
        self.origins.check(&card.endpoint, &format!("the agent card at {url}: its endpoint"))?;
        *slot = Some(card.clone());
        Ok(card)
    }

    async fn rpc(
        &self,
        card: &AgentCard,
        method: &'static str,
        params: Value,
        stream: bool,
    ) -> Result<reqwest::Response, RunnerError> {
        let endpoint = card.endpoint.as_str();
        let method = card.dialect.method(method);
        let mut request = self
            .client
            .post(endpoint)
            .header("Accept", if stream { "text/event-stream" } else { "application/json" })
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        if let Some(version) = card.dialect.header() {
            request = request.header("A2A-Version", version);
        }
        let token = self.token()?;
        if let Some(token) = &token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|error| RunnerError::Unreachable { url: endpoint.to_string(), message: error_chain(&error) })?;
        if !response.status().is_success() {
            let status = response.status().as_u16();
            let body = body_prefix(response, ERROR_BODY_BYTES).await;
            let body = truncate(&redact(&body, token.as_deref()), 500);
            return Err(RunnerError::Http { status, url: endpoint.to_string(), body });
        }
        Ok(response)
    }

    async fn call(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let started = Instant::now();
        let card = self.card().await?;
        let connected = started.elapsed();
        on_delta(remote_connected(&card.endpoint, connected));
        // A persistent entry's next call: its earlier messages are a conversation
        // whose task is still open there, so only the new request goes, on that task.
        let (last, earlier) =
            request.messages.split_last().map_or((None, &[][..]), |(last, earlier)| (Some(last), earlier));
        let open = match last {
            Some(Message::User { content }) if !earlier.is_empty() => {
                self.open_tasks.lock().unwrap().remove(&conversation_key(earlier)).map(|open| (open, content.clone()))
            }
            _ => None,
        };
        let text = match &open {
            Some((_, content)) => content.clone(),
            None => request.prompt_text(),
        };
        let mut message = card.dialect.user_message((self.nonce)(), &text);
        if let Some((open, _)) = &open {
            message["taskId"] = json!(open.task);
            if let Some(context) = &open.context {
                message["contextId"] = json!(context);
            }
            on_delta(ModelDelta::Progress {
                message: format!("continuing task {}", truncate(&open.task, 40)),
                data: None,
            });
        }
        let mut guard = CancelOnDrop {
            endpoint: card.endpoint.clone(),
            dialect: card.dialect,
            token: self.token()?,
            task: None,
            registry: self.registry.clone(),
        };
        let mut progress = Progress {
            started,
            limit: max_output_bytes(&self.agent),
            known_task: open.as_ref().map(|(open, _)| open.task.clone()),
            ..Progress::default()
        };
        let idle = Duration::from_secs(request.idle_timeout_secs.or(self.agent.idle_timeout_secs).unwrap_or(600));
        let mut steerer = Steerer::new(request.steers.clone());
        let mut attached = match &request.remote_task {
            Some(task) => self.find_task(&card, task, on_delta).await?,
            None => None,
        };
        loop {
            let outcome = if let Some(task) = attached.take() {
                self.attached(&card, task, &mut guard, &mut progress, &mut steerer, on_delta, idle).await
            } else if card.streaming {
                self.streamed(&card, message, &mut guard, &mut progress, &mut steerer, on_delta, idle).await
            } else {
                self.polled(&card, message, &mut guard, &mut progress, &mut steerer, on_delta, idle).await
            };
            // Messages still out when the task stopped: the agent's answers are
            // waited for a little, so each is reported as it said; one it does not
            // answer by then is reported as not taken.
            let _ = tokio::time::timeout(LAST_ANSWERS_WITHIN, async {
                while steerer.waiting_for_answers() {
                    steerer.answered(on_delta).await;
                }
            })
            .await;
            let Some(question) = progress.question.take() else {
                // Done, failed or rejected there: nothing to cancel. A call that gave
                // up on the task (silent, a broken stream, an error) cancels it.
                let open_task = guard.task.clone();
                if outcome.is_ok() || progress.ended_there() {
                    guard.task = None;
                }
                outcome?;
                // A turn that ended waiting for the next: the task stays open for
                // the conversation this answer extends.
                if let (Some(task), Some("TASK_STATE_INPUT_REQUIRED")) = (open_task, progress.state.as_deref()) {
                    let mut answered = request.messages.clone();
                    answered.push(Message::assistant(progress.answer.clone()));
                    let mut open_tasks = self.open_tasks.lock().unwrap();
                    if open_tasks.len() >= OPEN_TASKS {
                        open_tasks.clear();
                    }
                    open_tasks
                        .insert(conversation_key(&answered), OpenTask { task, context: progress.context.clone() });
                }
                break;
            };
            // The task waits for input: the user is asked, and the answer continues
            // the same task. Declined, the call ends and the task is cancelled.
            let (slot, answer) = AnswerSlot::new();
            on_delta(ModelDelta::InputRequired { question: question.clone(), answer: slot });
            let Ok(Some(answer)) = answer.await else {
                return Err(RunnerError::Remote {
                    url: card.endpoint.clone(),
                    message: format!("the task needs input that was not given: {}", truncate(&question, 500)),
                });
            };
            message = card.dialect.user_message((self.nonce)(), &answer);
            message["taskId"] = json!(guard.task.clone().unwrap_or_default());
            if let Some(context) = &progress.context {
                message["contextId"] = json!(context);
            }
            progress.state = None;
        }
        let total = started.elapsed();
        on_delta(remote_latency(&card.endpoint, connected, progress.first_event.unwrap_or(total), total));
        Ok(ModelReply { text: progress.answer, tool_calls: vec![], usage: None, cost: None })
    }

    #[allow(clippy::too_many_arguments)]
    async fn streamed<'a>(
        &'a self,
        card: &'a AgentCard,
        message: Value,
        guard: &mut CancelOnDrop,
        progress: &mut Progress,
        steerer: &mut Steerer<'a>,
        on_delta: DeltaSink<'_>,
        idle: Duration,
    ) -> Result<(), RunnerError> {
        let response = self.rpc(card, "SendStreamingMessage", json!({ "message": message }), true).await?;
        let mut events = SseReader::new(response.bytes_stream(), max_output_bytes(&self.agent));
        let inbox = steerer.inbox();
        loop {
            // Messages sent into the call go out on the task (once it has an id)
            // while its events are read; the agent's answers are reported as they come.
            let next = tokio::select! {
                biased;
                () = steerer.answered(on_delta) => continue,
                () = steer_arrived(inbox.as_ref()), if guard.task.is_some() => {
                    let task = guard.task.clone().unwrap_or_default();
                    steerer.send_waiting(self, card, &task, progress.context.as_deref());
                    continue;
                }
                next = tokio::time::timeout(idle, events.next()) => next,
            };
            let next = next.map_err(|_| RunnerError::Idle { url: card.endpoint.clone(), secs: idle.as_secs() })?;
            let Some(event) = next else { break };
            let event = event.map_err(|error| RunnerError::MalformedStream {
                url: card.endpoint.clone(),
                message: error.to_string(),
            })?;
            let value: Value = serde_json::from_str(&event.data).map_err(|error| RunnerError::MalformedStream {
                url: card.endpoint.clone(),
                message: format!("an event is not JSON: {error}"),
            })?;
            if let Some(error) = value.get("error") {
                return Err(rpc_error(&card.endpoint, error));
            }
            let Some(result) = value.get("result") else { continue };
            if progress.take(&card.dialect.normalize(result), guard, on_delta, &card.endpoint)? {
                return Ok(());
            }
        }
        match progress.state.as_deref() {
            None | Some("TASK_STATE_COMPLETED") | Some("TASK_STATE_INPUT_REQUIRED") => Ok(()),
            Some(state) => Err(RunnerError::MalformedStream {
                url: card.endpoint.clone(),
                message: format!("the stream ended while the task was {}", short_state(state)),
            }),
        }
    }

    /// One JSON-RPC call's result, in the 1.0 shape; its JSON-RPC error as a `remote` error.
    async fn call_result(&self, card: &AgentCard, method: &'static str, params: Value) -> Result<Value, RunnerError> {
        self.call_answer(card, method, params).await?.map_err(|error| rpc_error(&card.endpoint, &error))
    }

    /// One JSON-RPC call's result, in the 1.0 shape, or the JSON-RPC error the
    /// agent answered with.
    async fn call_answer(
        &self,
        card: &AgentCard,
        method: &'static str,
        params: Value,
    ) -> Result<Result<Value, Value>, RunnerError> {
        let response = self.rpc(card, method, params, false).await?;
        let malformed = |message: String| RunnerError::MalformedStream { url: card.endpoint.clone(), message };
        let body =
            body_within(response, max_output_bytes(&self.agent)).await.map_err(|error| malformed(error.to_string()))?;
        let answer: Value =
            serde_json::from_str(&body).map_err(|error| malformed(format!("the answer is not JSON: {error}")))?;
        if let Some(error) = answer.get("error") {
            return Ok(Err(error.clone()));
        }
        Ok(Ok(card.dialect.normalize(&answer.get("result").cloned().unwrap_or_default())))
    }
}

pub(super) fn rpc_error(endpoint: &str, error: &Value) -> RunnerError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("an error without a message");
    RunnerError::Remote { url: endpoint.to_string(), message: format!("{} (JSON-RPC {code})", truncate(message, 500)) }
}

/// Cancels the remote task of a call dropped before it ended. The request goes
/// out from a thread of its own (the call's runtime may be shutting down with
/// it), kept in the registry, which a shell's `shutdown` waits on before it exits.
pub(super) struct CancelOnDrop {
    pub(super) endpoint: String,
    pub(super) dialect: Dialect,
    pub(super) token: Option<String>,
    /// The remote task, while it may still run.
    pub(super) task: Option<String>,
    pub(super) registry: Arc<Registry>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task) = self.task.take() else { return };
        let (endpoint, token, dialect) = (self.endpoint.clone(), self.token.clone(), self.dialect);
        let method = dialect.method("CancelTask");
        let body = json!({ "jsonrpc": "2.0", "id": 2, "method": method, "params": { "id": task } });
        let sender = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            runtime.block_on(async move {
                // The endpoint was checked against the config's origins; no redirect is followed.
                let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build();
                let Ok(client) = client else { return };
                let mut request = client.post(&endpoint).json(&body);
                if let Some(version) = dialect.header() {
                    request = request.header("A2A-Version", version);
                }
                if let Some(token) = &token {
                    request = request.bearer_auth(token);
                }
                let _ = tokio::time::timeout(Duration::from_secs(5), request.send()).await;
            });
        });
        self.registry.cancel_sent_by_thread(sender);
    }
}

#[async_trait]
impl Runner for A2aRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secs = self.agent.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        within(secs, self.call(request, on_delta)).await
    }

    fn accepts_tools(&self) -> bool {
        false
    }

    fn steering(&self) -> Steering {
        Steering::OnTask
    }
}
