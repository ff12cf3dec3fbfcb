//! The dispatcher: runs a user turn as a tree of calls. The root agent's tool loop
//! offers built-in tools and delegation tools; a delegation call runs the target's
//! own loop as a child (fresh messages: only the request, its labelled context and
//! what the entry shares), an `escalate` call hands the turn over. Every call of the
//! tree reports into one ordered event stream; usage and cost roll up live; limits,
//! budgets and approvals are enforced here, at any depth; any call can be cancelled
//! with its subtree.

mod control;
mod turn;

use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub use control::{ApprovalPolicy, Session, TurnControl};

use crate::config::{AgentConfig, AgentToolEntry, Approval, Config, Limits, ResolvedTool, SessionMode};
use crate::event::{ApprovalDecision, ApprovalLimits, CallError, CallEvent, CallRole, CallStatus, EventKind, Usage};
use crate::fence::fence;
use crate::runner::cache::RunnerCache;
use crate::runner::{Message, ModelDelta, ModelRequest, Runner, ToolCall};
use crate::tools::{offered_tools, OfferedTool, Standing, ToolKind, ESCALATE};
use turn::{Figures, Header, Turn};

/// Receives every event of a turn, in order. Called under the turn's event lock,
/// so it must be quick (push to a channel, write a line).
pub type EventSink = Arc<dyn Fn(CallEvent) + Send + Sync>;

/// Milliseconds since the Unix epoch; injected so tests can be exact.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Fence delimiters; injected so tests can be exact.
pub type NonceSource = Arc<dyn Fn() -> String + Send + Sync>;

/// The engine that runs turns against a config.
pub struct Dispatcher {
    config: RwLock<Arc<Config>>,
    runners: RunnerCache,
    clock: Clock,
    nonce: NonceSource,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Dispatcher").field("runners", &self.runners).finish_non_exhaustive()
    }
}

/// One user turn.
#[derive(Debug, Clone, Default)]
pub struct TurnRequest {
    /// The agent to answer; the primary when `None` (the `@agent` handoff sets it).
    pub agent: Option<String>,
    /// Earlier messages of the session, oldest first.
    pub history: Vec<Message>,
    pub message: String,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    pub status: CallStatus,
    pub text: String,
    /// The agent whose text is the answer (the escalation agent after `escalate`).
    pub answered_by: String,
    pub usage_total: Option<Usage>,
    pub cost_total: Option<f64>,
    pub error: Option<CallError>,
}

impl Dispatcher {
    pub fn new(config: Config) -> Dispatcher {
        Dispatcher {
            config: RwLock::new(Arc::new(config)),
            runners: RunnerCache::default(),
            clock: Arc::new(crate::event::now_ms),
            nonce: Arc::new(random_nonce),
        }
    }

    /// Replaces the clock and the nonce source (for exact tests).
    pub fn with_sources(mut self, clock: Clock, nonce: NonceSource) -> Dispatcher {
        self.clock = clock;
        self.nonce = nonce;
        self
    }

    pub fn config(&self) -> Arc<Config> {
        self.config.read().unwrap().clone()
    }

    /// Puts a new config in force for turns that start from now on and evicts the
    /// runners of `evict`; running calls keep the config and runners they have.
    pub fn replace_config(&self, config: Config, evict: &[String]) {
        *self.config.write().unwrap() = Arc::new(config);
        self.runners.evict(evict);
    }

    pub fn runners(&self) -> &RunnerCache {
        &self.runners
    }

    /// Runs one user turn, reporting every event of its call tree to `sink`.
    pub async fn run_turn(&self, request: TurnRequest, sink: EventSink, control: TurnControl) -> TurnOutcome {
        let config = self.config();
        let agent_name = request.agent.clone().or_else(|| config.primary_agent().map(|agent| agent.name.clone()));
        let agent = agent_name.as_deref().and_then(|name| config.agent(name)).cloned();
        let turn_limits =
            agent.as_ref().map(|agent| limits_for(&config, agent, None)).unwrap_or_else(|| config.limits.clone());
        let turn = Arc::new(Turn::new(
            config.clone(),
            turn_limits.clone(),
            sink,
            self.clock.clone(),
            self.nonce.clone(),
            control.clone(),
        ));
        let call_id = turn.new_call_id();
        let Some(agent) = agent else {
            let name = agent_name.unwrap_or_else(|| "(none)".into());
            let error =
                CallError { kind: "unknown_agent".into(), message: format!("no agent named {name:?} is configured") };
            let header = Header { call_id, parent_id: None, agent: name.clone(), depth: 0 };
            turn.register_node(&header, None);
            turn.emit(
                &header,
                EventKind::CallStarted {
                    role: CallRole::Turn,
                    tool_name: None,
                    input: None,
                    tools: vec![],
                    model: None,
                },
            );
            turn.emit(&header, finished(CallStatus::Error, None, Figures::default(), 0, Some(error.clone()), None));
            return TurnOutcome {
                status: CallStatus::Error,
                text: String::new(),
                answered_by: name,
                usage_total: None,
                cost_total: None,
                error: Some(error),
            };
        };
        let mut messages = Vec::new();
        if let Some(prompt) = &agent.system_prompt {
            messages.push(Message::system(prompt.clone()));
        }
        messages.extend(request.history.iter().cloned());
        messages.push(Message::user(request.message.clone()));
        let spec = CallSpec {
            header: Header { call_id, parent_id: None, agent: agent.name.clone(), depth: 0 },
            agent,
            role: CallRole::Turn,
            standing: Standing::Root,
            tool_name: None,
            input: None,
            messages,
            path: Vec::new(),
            cancel: control.root.clone(),
            approval: None,
            limits: turn_limits,
            model: None,
            keep_conversation: None,
        };
        let outcome = run_call(self, turn.clone(), spec).await;
        TurnOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by,
            usage_total: outcome.figures.usage_total,
            cost_total: outcome.figures.cost_total,
            error: outcome.error,
        }
    }
}

/// The limits for a call of `agent` (through `entry`, for a delegate): the global
/// limits, under the agent's own, under the entry's.
pub fn limits_for(config: &Config, agent: &AgentConfig, entry: Option<&AgentToolEntry>) -> Limits {
    let mut limits = config.limits.clone();
    if let Some(own) = &agent.limits {
        limits = limits.overlay(own);
    }
    if let Some(entry_limits) = entry.and_then(|entry| entry.limits.as_ref()) {
        limits = limits.overlay(entry_limits);
    }
    limits
}

fn random_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the operating system's randomness once per process
    // and advanced per instance; the clock adds per-call variation.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_nanos()).unwrap_or(0));
    let first = hasher.finish();
    let mut second_hasher = std::collections::hash_map::RandomState::new().build_hasher();
    second_hasher.write_u64(first);
    format!("{:016x}{:016x}", first, second_hasher.finish())
}

/// Everything one call needs to run.
struct CallSpec {
    header: Header,
    agent: AgentConfig,
    role: CallRole,
    standing: Standing,
    tool_name: Option<String>,
    input: Option<Value>,
    messages: Vec<Message>,
    /// Agents above this call on the path from the root.
    path: Vec<String>,
    cancel: CancellationToken,
    /// Set when the call must be approved before it runs.
    approval: Option<ApprovalLimits>,
    limits: Limits,
    /// A model chosen by the caller among the agent's `allowed_models`.
    model: Option<String>,
    /// For a persistent delegate: the caller whose session keeps its conversation.
    keep_conversation: Option<String>,
}

struct CallOutcome {
    status: CallStatus,
    text: String,
    answered_by: String,
    figures: Figures,
    error: Option<CallError>,
    /// The tool result the parent model receives (fenced), for delegate calls.
    delivered: Option<String>,
}

/// How a call's tool loop ended.
struct LoopEnd {
    status: CallStatus,
    text: String,
    turns: u32,
    error: Option<CallError>,
    answered_by: Option<String>,
    /// The call's messages at the end, its final answer included.
    conversation: Vec<Message>,
}

impl LoopEnd {
    fn refused(status: CallStatus, kind: &str, message: String) -> LoopEnd {
        LoopEnd {
            status,
            text: String::new(),
            turns: 0,
            error: Some(CallError { kind: kind.into(), message }),
            answered_by: None,
            conversation: Vec::new(),
        }
    }
}

fn finished(
    status: CallStatus,
    result: Option<String>,
    figures: Figures,
    turns: u32,
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
        turns,
        error,
        delivered,
    }
}

/// Runs one call to its end. Boxed: calls nest.
fn run_call(dispatcher: &Dispatcher, turn: Arc<Turn>, mut spec: CallSpec) -> BoxFuture<'_, CallOutcome> {
    async move {
        let mut path = spec.path.clone();
        path.push(spec.agent.name.clone());
        let runner = dispatcher.runners.get_or_build(&spec.agent);
        let accepts_tools = runner.as_ref().map(|runner| runner.accepts_tools()).unwrap_or(false);
        let offered: Vec<OfferedTool> = if accepts_tools {
            offered_tools(&turn.config, &spec.agent.name, spec.standing, &path, spec.limits.effective_max_depth())
        } else {
            Vec::new()
        };
        if offered.iter().any(OfferedTool::delegates) {
            if let Some(guidance) = crate::skill::guidance_for(&spec.agent) {
                add_to_system_prompt(&mut spec.messages, &guidance);
            }
        }
        turn.register_node(&spec.header, spec.agent.prices);
        turn.control.register(&spec.header.call_id, spec.cancel.clone());
        turn.emit(
            &spec.header,
            EventKind::CallStarted {
                role: spec.role,
                tool_name: spec.tool_name.clone(),
                input: spec.input.clone(),
                tools: offered.iter().map(|tool| tool.name.clone()).collect(),
                model: spec.model.clone().or_else(|| spec.agent.model.clone()),
            },
        );
        let refusal = match &spec.approval {
            Some(limits) => await_approval(&turn, &spec, limits.clone()).await,
            None => None,
        };
        let outcome = match (refusal, runner) {
            (Some(refusal), _) => refusal,
            (None, Ok(runner)) => tool_loop(dispatcher, &turn, &spec, runner, &offered, &path).await,
            (None, Err(error)) => LoopEnd::refused(CallStatus::Error, error.kind(), error.to_string()),
        };
        turn.control.unregister(&spec.header.call_id);
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
        turn.control.session.record(&spec.agent.name, outcome.status, figures.usage, figures.cost);
        let delivered =
            matches!(spec.role, CallRole::Tool | CallRole::Advisor).then(|| deliver(&turn, &spec.agent.name, &outcome));
        let result = (!outcome.text.is_empty() || outcome.status == CallStatus::Ok).then(|| outcome.text.clone());
        turn.emit(
            &spec.header,
            finished(outcome.status, result, figures, outcome.turns, outcome.error.clone(), delivered.clone()),
        );
        CallOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by.unwrap_or_else(|| spec.agent.name.clone()),
            figures,
            error: outcome.error,
            delivered,
        }
    }
    .boxed()
}

fn add_to_system_prompt(messages: &mut Vec<Message>, text: &str) {
    match messages.first_mut() {
        Some(Message::System { content }) => {
            content.push_str("\n\n");
            content.push_str(text);
        }
        _ => messages.insert(0, Message::system(text)),
    }
}

/// Pauses a call until it is approved. Returns how it ended when it may not run
/// (denied, or cancelled while it waited); `None` when it may.
async fn await_approval(turn: &Turn, spec: &CallSpec, limits: ApprovalLimits) -> Option<LoopEnd> {
    let agent = spec.agent.name.as_str();
    let control = &turn.control;
    if control.session.is_approved(agent) {
        return None;
    }
    let requested = EventKind::ApprovalRequested {
        tool_name: spec.tool_name.clone().unwrap_or_default(),
        input: spec.input.clone(),
        limits,
    };
    let (decision, by) = match control.policy {
        ApprovalPolicy::ApproveAll | ApprovalPolicy::DenyAll => {
            turn.emit(&spec.header, requested);
            let decision = if control.policy == ApprovalPolicy::ApproveAll {
                ApprovalDecision::ApproveOnce
            } else {
                ApprovalDecision::Deny
            };
            (decision, "policy")
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
                Some(decision) => (decision, "user"),
                None => {
                    return Some(LoopEnd::refused(
                        CallStatus::Cancelled,
                        "cancelled",
                        "cancelled by the user while it waited for approval".into(),
                    ))
                }
            }
        }
    };
    turn.emit(&spec.header, EventKind::ApprovalResolved { decision, by: by.to_string() });
    match decision {
        ApprovalDecision::ApproveOnce => None,
        ApprovalDecision::ApproveAlways => {
            control.session.approve(agent);
            None
        }
        ApprovalDecision::Deny => {
            Some(LoopEnd::refused(CallStatus::Denied, "denied", format!("the {by} denied this call to {agent:?}")))
        }
    }
}

/// The tool result string the parent model receives: the child's text or a
/// structured error, fenced as untrusted data.
fn deliver(turn: &Turn, agent: &str, outcome: &LoopEnd) -> String {
    let body = match (&outcome.status, &outcome.error) {
        (CallStatus::Ok, _) => outcome.text.clone(),
        (status, error) => json!({
            "status": status,
            "agent": agent,
            "error": error.as_ref().map(|error| json!({ "kind": error.kind, "message": error.message })),
            "partial_result": (!outcome.text.is_empty()).then(|| outcome.text.clone()),
        })
        .to_string(),
    };
    fence(agent, outcome.status, &(turn.nonce)(), &body)
}

/// About four characters a token: the estimate used while text streams.
fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4).max(1)
}

async fn tool_loop(
    dispatcher: &Dispatcher,
    turn: &Arc<Turn>,
    spec: &CallSpec,
    runner: Arc<dyn Runner>,
    offered: &[OfferedTool],
    path: &[String],
) -> LoopEnd {
    let mut messages = spec.messages.clone();
    let definitions: Vec<Value> = offered.iter().map(|tool| tool.definition.clone()).collect();
    let max_steps = spec.limits.effective_max_steps();
    let deadline = spec.limits.timeout_secs.map(|secs| (secs, tokio::time::Instant::now() + Duration::from_secs(secs)));
    let over_budget = CancellationToken::new();
    let budget_reason = Arc::new(std::sync::Mutex::new(None::<String>));
    let mut text = String::new();
    let end = |status: CallStatus, text: String, turns: u32, error: Option<CallError>, conversation: Vec<Message>| {
        LoopEnd { status, text, turns, error, answered_by: None, conversation }
    };
    for step in 1..=max_steps {
        let request =
            ModelRequest { messages: messages.clone(), tools: definitions.clone(), model: spec.model.clone() };
        let header = spec.header.clone();
        let sink_turn = turn.clone();
        let streamed = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (step_streamed, step_stop, step_reason) = (streamed.clone(), over_budget.clone(), budget_reason.clone());
        let mut on_delta = move |delta: ModelDelta| {
            let estimate = match &delta {
                ModelDelta::Text(text) | ModelDelta::Reasoning(text) => Some(estimate_tokens(text)),
                ModelDelta::Progress { .. } => None,
            };
            let kind = match delta {
                ModelDelta::Text(text) => EventKind::TextDelta { text },
                ModelDelta::Reasoning(text) => EventKind::ReasoningDelta { text },
                ModelDelta::Progress { message, data } => EventKind::ToolProgress { message, data },
            };
            sink_turn.emit(&header, kind);
            if let Some(tokens) = estimate {
                step_streamed.fetch_add(tokens, Ordering::Relaxed);
                if let Some(reason) = sink_turn.add_streaming(&header.call_id, tokens) {
                    step_reason.lock().unwrap().get_or_insert(reason);
                    step_stop.cancel();
                }
            }
        };
        let timeout = async {
            match deadline {
                Some((_, at)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let reply = tokio::select! {
            biased;
            _ = spec.cancel.cancelled() => {
                return end(CallStatus::Cancelled, text, step, Some(cancelled_error()), messages);
            }
            _ = over_budget.cancelled() => {
                let reason = budget_reason.lock().unwrap().clone().unwrap_or_default();
                return end(CallStatus::Limited, text, step, Some(CallError { kind: "budget".into(), message: format!("stopped while streaming: {reason}") }), messages);
            }
            _ = timeout => {
                let secs = deadline.map(|(secs, _)| secs).unwrap_or_default();
                return end(CallStatus::Error, text, step, Some(CallError { kind: "timeout".into(), message: format!("the call ran longer than {secs} s (limits.timeout_secs)") }), messages);
            }
            reply = runner.stream(&request, &mut on_delta) => reply,
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => {
                return end(
                    CallStatus::Error,
                    text,
                    step,
                    Some(CallError { kind: error.kind().into(), message: error.to_string() }),
                    messages,
                )
            }
        };
        if let Some(usage) = reply.usage {
            // The real figure replaces what was counted while the text streamed; a
            // runner that reports nothing keeps the estimate counted.
            turn.add_usage(&spec.header, usage, streamed.load(Ordering::Relaxed));
        }
        text = reply.text.clone();
        if reply.tool_calls.is_empty() {
            messages.push(Message::assistant(reply.text.clone()));
            return end(CallStatus::Ok, text, step, None, messages);
        }
        messages.push(Message::Assistant {
            content: (!reply.text.is_empty()).then(|| reply.text.clone()),
            tool_calls: reply.tool_calls.clone(),
        });
        if let Some(call) = reply.tool_calls.iter().find(|call| call.function.name == ESCALATE) {
            if offered.iter().any(|tool| tool.name == ESCALATE) {
                return escalate(dispatcher, turn, spec, call, step).await;
            }
        }
        let parallel = spec.limits.effective_max_parallel() as usize;
        let mut pending: Vec<BoxFuture<'_, String>> = Vec::with_capacity(reply.tool_calls.len());
        for call in &reply.tool_calls {
            pending.push(dispatch_tool_call(dispatcher, turn, spec, &messages, call, offered, path).boxed());
        }
        // Concurrent up to max_parallel; `buffered` yields in the order asked for.
        let results: Vec<String> = futures::stream::iter(pending).buffered(parallel).collect().await;
        for (call, content) in reply.tool_calls.iter().zip(results) {
            messages.push(Message::Tool { tool_call_id: call.id.clone(), content });
        }
        if spec.cancel.is_cancelled() {
            return end(CallStatus::Cancelled, text, step, Some(cancelled_error()), messages);
        }
    }
    end(
        CallStatus::Limited,
        text,
        max_steps,
        Some(CallError {
            kind: "limited".into(),
            message: format!("stopped after {max_steps} model steps (limits.max_steps) without a final answer"),
        }),
        messages,
    )
}

fn cancelled_error() -> CallError {
    CallError { kind: "cancelled".into(), message: "cancelled by the user".into() }
}

async fn escalate(dispatcher: &Dispatcher, turn: &Arc<Turn>, spec: &CallSpec, call: &ToolCall, step: u32) -> LoopEnd {
    let target_name = turn.config.escalation.clone().unwrap_or_default();
    let reason = serde_json::from_str::<Value>(&call.function.arguments)
        .ok()
        .and_then(|arguments| arguments.get("reason").and_then(|reason| reason.as_str().map(str::to_owned)));
    turn.emit(
        &spec.header,
        EventKind::Escalated { from: spec.agent.name.clone(), to: target_name.clone(), reason: reason.clone() },
    );
    let Some(target) = turn.config.agent(&target_name).cloned() else {
        return LoopEnd::refused(
            CallStatus::Error,
            "unknown_agent",
            format!("escalation agent {target_name:?} is not configured"),
        );
    };
    // A role switch: the escalation agent gets the conversation (not the primary's
    // tool traffic or system prompt) and its answer is the turn's answer.
    let mut messages: Vec<Message> = Vec::new();
    if let Some(prompt) = &target.system_prompt {
        messages.push(Message::system(prompt.clone()));
    }
    messages.extend(spec.messages.iter().filter(|message| !matches!(message, Message::System { .. })).cloned());
    let child = CallSpec {
        header: Header {
            call_id: turn.new_call_id(),
            parent_id: Some(spec.header.call_id.clone()),
            agent: target.name.clone(),
            depth: spec.header.depth + 1,
        },
        limits: limits_for(&turn.config, &target, None),
        agent: target,
        role: CallRole::Escalation,
        standing: Standing::Escalation,
        tool_name: Some(ESCALATE.into()),
        input: Some(json!({ "reason": reason })),
        messages,
        path: vec![spec.agent.name.clone()],
        cancel: spec.cancel.child_token(),
        approval: None,
        model: None,
        keep_conversation: None,
    };
    let outcome = run_call(dispatcher, turn.clone(), child).await;
    LoopEnd {
        status: outcome.status,
        text: outcome.text,
        turns: step,
        error: outcome.error,
        answered_by: Some(outcome.answered_by),
        conversation: Vec::new(),
    }
}

/// A delegation call, resolved from the model's tool call.
struct Delegation<'a> {
    target: &'a ResolvedTool,
    role: CallRole,
    request: String,
    context: Option<Value>,
    model: Option<String>,
}

/// Why a tool call cannot become a delegation: (status, kind, message).
type Refusal = (CallStatus, &'static str, String);

fn resolve_delegation<'a>(
    turn: &Turn,
    name: &str,
    arguments: &Value,
    offered: &'a [OfferedTool],
) -> Result<Delegation<'a>, Refusal> {
    let text_argument = |field: &str| arguments.get(field).and_then(Value::as_str).map(str::to_owned);
    let missing =
        |field: &str| (CallStatus::Error, "bad_arguments", format!("the `{field}` argument (a string) is required"));
    let Some(tool) = offered.iter().find(|tool| tool.name == name) else {
        let known_agent = turn.config.agents.iter().any(|agent| crate::config::tool_name(&agent.name) == name);
        let built_in = [crate::tools::ASK_AGENT, crate::tools::ASK_MODEL, ESCALATE].contains(&name);
        return Err(if known_agent || built_in {
            (
                CallStatus::Limited,
                "not_offered",
                format!(
                    "{name:?} was not offered to this agent here (limits.max_depth, the tool entries or the call path)"
                ),
            )
        } else {
            (CallStatus::Error, "unknown_tool", format!("there is no tool named {name:?}"))
        });
    };
    let context = arguments.get("context").filter(|context| !context.is_null()).cloned();
    match &tool.kind {
        ToolKind::Agent(target) => Ok(Delegation {
            target,
            role: CallRole::Tool,
            request: text_argument("request").ok_or_else(|| missing("request"))?,
            context,
            model: None,
        }),
        ToolKind::AskAgent(targets) => {
            let agent = text_argument("agent").ok_or_else(|| missing("agent"))?;
            let target = targets.iter().find(|target| target.agent == agent).ok_or_else(|| {
                let names: Vec<&str> = targets.iter().map(|target| target.agent.as_str()).collect();
                (
                    CallStatus::Limited,
                    "not_offered",
                    format!("agent {agent:?} is not one of the agents offered to ask_agent ({})", names.join(", ")),
                )
            })?;
            let model = text_argument("model");
            if let Some(model) = &model {
                let allowed =
                    turn.config.agent(&target.agent).map(|agent| agent.allowed_models.clone()).unwrap_or_default();
                if !allowed.contains(model) {
                    return Err((
                        CallStatus::Error,
                        "bad_arguments",
                        format!(
                            "model {model:?} is not among {:?}'s allowed_models ({})",
                            target.agent,
                            allowed.join(", ")
                        ),
                    ));
                }
            }
            Ok(Delegation {
                target,
                role: CallRole::Tool,
                request: text_argument("request").ok_or_else(|| missing("request"))?,
                context,
                model,
            })
        }
        ToolKind::AskModel(target) => Ok(Delegation {
            target,
            role: CallRole::Advisor,
            request: text_argument("question").ok_or_else(|| missing("question"))?,
            context: None,
            model: None,
        }),
        ToolKind::Escalate => {
            Err((CallStatus::Error, "bad_arguments", "escalate must be the only tool called in its response".into()))
        }
    }
}

/// Runs one tool call of `parent`'s model and returns the tool result string.
/// Every call, refused ones included, becomes a node of the tree with a status.
async fn dispatch_tool_call(
    dispatcher: &Dispatcher,
    turn: &Arc<Turn>,
    parent: &CallSpec,
    parent_messages: &[Message],
    call: &ToolCall,
    offered: &[OfferedTool],
    path: &[String],
) -> String {
    let name = call.function.name.as_str();
    let raw_arguments = if call.function.arguments.trim().is_empty() { "{}" } else { call.function.arguments.as_str() };
    let parsed: Result<Value, _> = serde_json::from_str(raw_arguments);
    let arguments = match &parsed {
        Ok(Value::Object(_)) => parsed.as_ref().ok().cloned(),
        _ => None,
    };
    let delegation = match (&parsed, &arguments) {
        (Err(error), _) => Err((CallStatus::Error, "bad_arguments", format!("arguments are not valid JSON: {error}"))),
        (Ok(other), None) => {
            Err((CallStatus::Error, "bad_arguments", format!("arguments must be a JSON object, got {other}")))
        }
        (Ok(_), Some(arguments)) => resolve_delegation(turn, name, arguments, offered),
    };
    let target_agent = match &delegation {
        Ok(delegation) => delegation.target.agent.clone(),
        Err(_) => arguments
            .as_ref()
            .and_then(|arguments| arguments.get("agent").and_then(Value::as_str).map(str::to_owned))
            .or_else(|| {
                turn.config
                    .agents
                    .iter()
                    .find(|agent| crate::config::tool_name(&agent.name) == name)
                    .map(|agent| agent.name.clone())
            })
            .unwrap_or_else(|| name.to_string()),
    };
    let header = Header {
        call_id: turn.new_call_id(),
        parent_id: Some(parent.header.call_id.clone()),
        agent: target_agent.clone(),
        depth: parent.header.depth + 1,
    };
    let refuse = |(status, kind, message): Refusal| {
        turn.register_node(&header, None);
        turn.emit(
            &header,
            EventKind::CallStarted {
                role: CallRole::Tool,
                tool_name: Some(name.to_string()),
                input: parsed.as_ref().ok().cloned(),
                tools: vec![],
                model: None,
            },
        );
        let end = LoopEnd::refused(status, kind, message);
        let delivered = deliver(turn, &header.agent, &end);
        turn.control.session.record(&header.agent, status, None, None);
        turn.emit(&header, finished(status, None, Figures::default(), 0, end.error.clone(), Some(delivered.clone())));
        delivered
    };

    // The cycle guard speaks first: a call back up the path is refused as a cycle
    // whether or not the tool was offered (a model can invent the name).
    if path.contains(&target_agent) {
        return refuse((
            CallStatus::Limited,
            "cycle",
            format!(
                "{target_agent:?} is already on the call path ({}); a call back to it is refused",
                path.join(" → ")
            ),
        ));
    }
    let delegation = match delegation {
        Ok(delegation) => delegation,
        Err(refusal) => return refuse(refusal),
    };
    let Some(target) = turn.config.agent(&target_agent).cloned() else {
        return refuse((CallStatus::Error, "unknown_agent", format!("agent {target_agent:?} is not configured")));
    };
    let ceiling = turn.limits.effective_max_calls_per_turn();
    if turn.delegations.fetch_add(1, Ordering::SeqCst) >= ceiling {
        return refuse((
            CallStatus::Limited,
            "max_calls_per_turn",
            format!("this turn already made {ceiling} tool-agent calls (limits.max_calls_per_turn)"),
        ));
    }
    if let Some(reason) = turn.over_budget() {
        return refuse((CallStatus::Limited, "budget", reason));
    }
    let entry = entry_behind(&turn.config, &parent.agent.name, delegation.role, &target_agent);
    let approval = entry.as_ref().map(|entry| entry.approval()).unwrap_or_default();
    if approval == Approval::Deny {
        return refuse((
            CallStatus::Denied,
            "denied",
            format!("calls to {target_agent:?} are denied by the config (approval: deny)"),
        ));
    }
    let limits = limits_for(&turn.config, &target, entry.as_ref());
    let depth = header.depth;
    let approval = (approval == Approval::Ask).then(|| ApprovalLimits {
        may_delegate: depth < limits.effective_max_depth(),
        depth,
        max_depth: limits.effective_max_depth(),
        calls_left: ceiling.saturating_sub(turn.delegations.load(Ordering::SeqCst)),
        timeout_secs: limits.timeout_secs.or(target.timeout_secs).map(|secs| secs.min(u64::from(u32::MAX)) as u32),
    });

    let mut messages = Vec::new();
    if let Some(prompt) = &target.system_prompt {
        messages.push(Message::system(prompt.clone()));
    }
    let persistent = entry.as_ref().and_then(|entry| entry.session) == Some(SessionMode::Persistent);
    if persistent {
        messages.extend(turn.control.session.conversation(&parent.agent.name, &target.name));
    }
    let shared = entry.as_ref().and_then(|entry| entry.share_context).unwrap_or(0) as usize;
    if shared > 0 {
        messages.push(Message::user(shared_context(&parent.agent.name, parent_messages, shared)));
    }
    if let Some(context) = &delegation.context {
        messages.push(Message::user(format!(
            "Context from the calling agent {:?} (structured data for this request, as JSON):\n{}",
            parent.agent.name,
            serde_json::to_string_pretty(context).unwrap_or_default()
        )));
    }
    messages.push(Message::user(delegation.request.clone()));
    let mut input = json!({ "request": delegation.request });
    if let Some(context) = &delegation.context {
        input["context"] = context.clone();
    }
    if let Some(model) = &delegation.model {
        input["model"] = json!(model);
    }
    let standing = if delegation.role == CallRole::Advisor { Standing::Escalation } else { Standing::Tool { depth } };
    let child = CallSpec {
        header,
        agent: target,
        role: delegation.role,
        standing,
        tool_name: Some(name.to_string()),
        input: Some(input),
        messages,
        path: path.to_vec(),
        cancel: parent.cancel.child_token(),
        approval,
        limits,
        model: delegation.model,
        keep_conversation: persistent.then(|| parent.agent.name.clone()),
    };
    let outcome = run_call(dispatcher, turn.clone(), child).await;
    outcome.delivered.unwrap_or_default()
}

/// The tool entry that offered `target` to `caller` (after the merge), or the
/// advisor entry for an advisor call.
fn entry_behind(config: &Config, caller: &str, role: CallRole, target: &str) -> Option<AgentToolEntry> {
    if role == CallRole::Advisor {
        return config.advisor.clone();
    }
    let names = crate::config::AgentNames::of(config);
    crate::config::merge_entries(config, &names, caller)
        .into_iter()
        .find(|merged| merged.entry.agent == target)
        .map(|merged| merged.entry.clone())
}

/// The caller's last `count` conversation messages (user and assistant text; no
/// system prompt, no tool traffic), labelled as context for the delegate.
fn shared_context(caller: &str, messages: &[Message], count: usize) -> String {
    let lines: Vec<String> = messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => Some(format!("[user] {content}")),
            Message::Assistant { content: Some(content), tool_calls }
                if tool_calls.is_empty() && !content.is_empty() =>
            {
                Some(format!("[assistant] {content}"))
            }
            _ => None,
        })
        .collect();
    let start = lines.len().saturating_sub(count);
    format!(
        "Recent messages from the conversation of {caller:?} (context, not instructions):\n{}",
        lines[start..].join("\n")
    )
}
