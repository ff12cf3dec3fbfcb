//! The dispatcher: runs a user turn as a tree of calls. The root agent's tool loop
//! offers built-in tools and tool-agents; an `agent_<name>` call runs the target's
//! own loop as a child (fresh messages: only the request and its labelled context),
//! an `escalate` call hands the turn over. Every call of the tree reports into one
//! ordered event stream, usage rolls up live, limits are enforced here, and any call
//! can be cancelled with its subtree.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::config::{AgentConfig, Approval, Config};
use crate::event::{ApprovalDecision, ApprovalLimits, CallError, CallEvent, CallRole, CallStatus, EventKind, Usage};
use crate::fence::fence;
use crate::runner::cache::RunnerCache;
use crate::runner::{Message, ModelDelta, ModelRequest, ToolCall};
use crate::tools::{offered_tools, OfferedTool, Standing, ESCALATE};

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
    pub error: Option<CallError>,
}

/// How a turn answers approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Wait for `TurnControl::resolve_approval` (the app, an interactive terminal).
    #[default]
    Ask,
    /// Approve every request (`switchboard ask --approve all`); still reported.
    ApproveAll,
    /// Deny every request (`--approve none`); still reported.
    DenyAll,
}

/// Delegates approved "always" in a session; the turns of one session share it.
#[derive(Debug, Clone, Default)]
pub struct ApprovedAgents(Arc<Mutex<HashSet<String>>>);

impl ApprovedAgents {
    pub fn contains(&self, agent: &str) -> bool {
        self.0.lock().unwrap().contains(agent)
    }

    fn insert(&self, agent: &str) {
        self.0.lock().unwrap().insert(agent.to_string());
    }
}

/// Steers a running turn from another task: cancel the turn or any call in it,
/// answer approval requests.
#[derive(Debug, Clone, Default)]
pub struct TurnControl {
    root: CancellationToken,
    calls: Arc<Mutex<HashMap<String, CancellationToken>>>,
    approvals: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>,
    policy: ApprovalPolicy,
    approved: ApprovedAgents,
}

impl TurnControl {
    /// A control for a turn of the session whose "approve always" answers are `approved`.
    pub fn new(policy: ApprovalPolicy, approved: ApprovedAgents) -> TurnControl {
        TurnControl { policy, approved, ..TurnControl::default() }
    }

    /// A control that approves every request (and reports that it did).
    pub fn approving_all() -> TurnControl {
        TurnControl::new(ApprovalPolicy::ApproveAll, ApprovedAgents::default())
    }

    /// Cancels every call of the turn.
    pub fn cancel_turn(&self) {
        self.root.cancel();
    }

    /// Cancels one call and its subtree; its parent gets a `cancelled` result and
    /// continues. Returns false when no such call is running.
    pub fn cancel_call(&self, call_id: &str) -> bool {
        match self.calls.lock().unwrap().get(call_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Answers the approval request of `call_id`; false when none is waiting.
    pub fn resolve_approval(&self, call_id: &str, decision: ApprovalDecision) -> bool {
        match self.approvals.lock().unwrap().remove(call_id) {
            Some(sender) => sender.send(decision).is_ok(),
            None => false,
        }
    }

    fn register(&self, call_id: &str, token: CancellationToken) {
        self.calls.lock().unwrap().insert(call_id.to_string(), token);
    }

    fn unregister(&self, call_id: &str) {
        self.calls.lock().unwrap().remove(call_id);
        self.approvals.lock().unwrap().remove(call_id);
    }
}

impl Dispatcher {
    pub fn new(config: Config) -> Dispatcher {
        Dispatcher {
            config: RwLock::new(Arc::new(config)),
            runners: RunnerCache::default(),
            clock: Arc::new(|| SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_millis() as u64).unwrap_or(0)),
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
        let turn = Arc::new(Turn {
            config: config.clone(),
            log: Mutex::new(TurnLog { seq: 0, nodes: HashMap::new() }),
            sink,
            clock: self.clock.clone(),
            nonce: self.nonce.clone(),
            next_call: AtomicU64::new(0),
            delegations: AtomicU32::new(0),
            control: control.clone(),
        });
        let agent_name = request.agent.clone().or_else(|| config.primary_agent().map(|agent| agent.name.clone()));
        let call_id = turn.new_call_id();
        let agent = agent_name.as_deref().and_then(|name| config.agent(name)).cloned();
        let Some(agent) = agent else {
            let name = agent_name.unwrap_or_else(|| "(none)".into());
            let error = CallError { kind: "unknown_agent".into(), message: format!("no agent named {name:?} is configured") };
            let header = Header { call_id, parent_id: None, agent: name.clone(), depth: 0 };
            turn.emit(&header, EventKind::CallStarted { role: CallRole::Turn, tool_name: None, input: None, tools: vec![], model: None });
            turn.emit(&header, finished(CallStatus::Error, None, None, None, 0, Some(error.clone()), None));
            return TurnOutcome { status: CallStatus::Error, text: String::new(), answered_by: name, usage_total: None, error: Some(error) };
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
            tool_name: None,
            input: None,
            messages,
            path: Vec::new(),
            cancel: control.root.clone(),
            approval: None,
        };
        let outcome = run_call(self, turn.clone(), spec).await;
        TurnOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by,
            usage_total: outcome.usage_total,
            error: outcome.error,
        }
    }
}

fn random_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_nanos()).unwrap_or(0));
    let first = hasher.finish();
    let mut second_hasher = std::collections::hash_map::RandomState::new().build_hasher();
    second_hasher.write_u64(first);
    format!("{:016x}{:016x}", first, second_hasher.finish())
}

/// The per-turn state shared by every call of the tree.
struct Turn {
    config: Arc<Config>,
    log: Mutex<TurnLog>,
    sink: EventSink,
    clock: Clock,
    nonce: NonceSource,
    next_call: AtomicU64,
    delegations: AtomicU32,
    control: TurnControl,
}

/// Sequence numbers and the usage tree; one lock, so every event's figures agree
/// with the order it is emitted in.
struct TurnLog {
    seq: u64,
    nodes: HashMap<String, UsageNode>,
}

struct UsageNode {
    header: Header,
    own: Option<Usage>,
    total: Option<Usage>,
}

#[derive(Debug, Clone)]
struct Header {
    call_id: String,
    parent_id: Option<String>,
    agent: String,
    depth: u32,
}

impl Turn {
    fn new_call_id(&self) -> String {
        format!("c{}", self.next_call.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn emit(&self, header: &Header, kind: EventKind) {
        let mut log = self.log.lock().unwrap();
        self.emit_locked(&mut log, header, kind);
    }

    fn emit_locked(&self, log: &mut TurnLog, header: &Header, kind: EventKind) {
        log.seq += 1;
        (self.sink)(CallEvent {
            seq: log.seq,
            ts_ms: (self.clock)(),
            call_id: header.call_id.clone(),
            parent_id: header.parent_id.clone(),
            agent: header.agent.clone(),
            depth: header.depth,
            kind,
        });
    }

    fn register_node(&self, header: &Header) {
        let mut log = self.log.lock().unwrap();
        log.nodes.insert(header.call_id.clone(), UsageNode { header: header.clone(), own: None, total: None });
    }

    /// Adds a step's usage to a call and to every ancestor's total, emitting one
    /// `usage_updated` per changed call (the call first, then up the path).
    fn add_usage(&self, header: &Header, usage: Usage) {
        let mut log = self.log.lock().unwrap();
        let mut updates = Vec::new();
        let mut current = Some(header.call_id.clone());
        while let Some(call_id) = current {
            let Some(node) = log.nodes.get_mut(&call_id) else { break };
            if call_id == header.call_id {
                node.own.get_or_insert_with(Usage::default).add(&usage);
            }
            node.total.get_or_insert_with(Usage::default).add(&usage);
            updates.push((node.header.clone(), node.own.unwrap_or_default(), node.total.unwrap_or_default()));
            current = node.header.parent_id.clone();
        }
        for (update_header, own, total) in updates {
            self.emit_locked(&mut log, &update_header, EventKind::UsageUpdated { usage: own, usage_total: total });
        }
    }

    fn usage_of(&self, call_id: &str) -> (Option<Usage>, Option<Usage>) {
        let log = self.log.lock().unwrap();
        log.nodes.get(call_id).map(|node| (node.own, node.total)).unwrap_or((None, None))
    }

    fn tokens_used(&self) -> u64 {
        let log = self.log.lock().unwrap();
        log.nodes.values().filter(|node| node.header.parent_id.is_none()).filter_map(|node| node.total).map(|usage| usage.total_tokens).sum()
    }
}

/// Everything one call needs to run.
struct CallSpec {
    header: Header,
    agent: AgentConfig,
    role: CallRole,
    tool_name: Option<String>,
    input: Option<Value>,
    messages: Vec<Message>,
    /// Agents above this call on the path from the root.
    path: Vec<String>,
    cancel: CancellationToken,
    /// Set when the call must be approved before it runs.
    approval: Option<ApprovalLimits>,
}

struct CallOutcome {
    status: CallStatus,
    text: String,
    answered_by: String,
    usage_total: Option<Usage>,
    error: Option<CallError>,
    /// The tool result the parent model receives (fenced), for tool calls.
    delivered: Option<String>,
}

fn finished(
    status: CallStatus,
    result: Option<String>,
    usage: Option<Usage>,
    usage_total: Option<Usage>,
    turns: u32,
    error: Option<CallError>,
    delivered: Option<String>,
) -> EventKind {
    EventKind::CallFinished { status, result, usage, usage_total, turns, error, delivered }
}

/// Runs one call's tool loop to its final answer. Boxed: calls nest.
fn run_call(dispatcher: &Dispatcher, turn: Arc<Turn>, spec: CallSpec) -> BoxFuture<'_, CallOutcome> {
    async move {
        let standing = match spec.role {
            CallRole::Turn => Standing::Root,
            CallRole::Tool => Standing::Tool { depth: spec.header.depth },
            CallRole::Escalation => Standing::Escalation,
        };
        let mut path = spec.path.clone();
        path.push(spec.agent.name.clone());
        let runner = dispatcher.runners.get_or_build(&spec.agent);
        let accepts_tools = runner.as_ref().map(|runner| runner.accepts_tools()).unwrap_or(false);
        let offered: Vec<OfferedTool> =
            if accepts_tools { offered_tools(&turn.config, &spec.agent.name, standing, &path) } else { Vec::new() };
        turn.register_node(&spec.header);
        turn.control.register(&spec.header.call_id, spec.cancel.clone());
        turn.emit(
            &spec.header,
            EventKind::CallStarted {
                role: spec.role,
                tool_name: spec.tool_name.clone(),
                input: spec.input.clone(),
                tools: offered.iter().map(|tool| tool.name.clone()).collect(),
                model: spec.agent.model.clone(),
            },
        );
        let refusal = match &spec.approval {
            Some(limits) => await_approval(&turn, &spec, limits.clone()).await,
            None => None,
        };
        let outcome = match (refusal, runner) {
            (Some(refusal), _) => refusal,
            (None, Ok(runner)) => tool_loop(dispatcher, &turn, &spec, runner, &offered, &path).await,
            (None, Err(error)) => LoopEnd {
                status: CallStatus::Error,
                text: String::new(),
                turns: 0,
                error: Some(CallError { kind: error.kind().into(), message: error.to_string() }),
                answered_by: None,
            },
        };
        turn.control.unregister(&spec.header.call_id);
        let (usage, usage_total) = turn.usage_of(&spec.header.call_id);
        let delivered = (spec.role == CallRole::Tool).then(|| deliver(&turn, &spec.agent.name, &outcome));
        let result = (!outcome.text.is_empty() || outcome.status == CallStatus::Ok).then(|| outcome.text.clone());
        turn.emit(
            &spec.header,
            finished(outcome.status, result, usage, usage_total, outcome.turns, outcome.error.clone(), delivered.clone()),
        );
        CallOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by.unwrap_or_else(|| spec.agent.name.clone()),
            usage_total,
            error: outcome.error,
            delivered,
        }
    }
    .boxed()
}

/// Pauses a call until it is approved. Returns how it ended when it may not run
/// (denied, or cancelled while it waited); `None` when it may.
async fn await_approval(turn: &Turn, spec: &CallSpec, limits: ApprovalLimits) -> Option<LoopEnd> {
    let agent = spec.agent.name.as_str();
    let control = &turn.control;
    if control.approved.contains(agent) {
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
            let decision = if control.policy == ApprovalPolicy::ApproveAll { ApprovalDecision::ApproveOnce } else { ApprovalDecision::Deny };
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
                    return Some(LoopEnd { status: CallStatus::Cancelled, text: String::new(), turns: 0, error: Some(cancelled_error()), answered_by: None });
                }
            }
        }
    };
    turn.emit(&spec.header, EventKind::ApprovalResolved { decision, by: by.to_string() });
    match decision {
        ApprovalDecision::ApproveOnce => None,
        ApprovalDecision::ApproveAlways => {
            control.approved.insert(agent);
            None
        }
        ApprovalDecision::Deny => Some(LoopEnd {
            status: CallStatus::Denied,
            text: String::new(),
            turns: 0,
            error: Some(CallError { kind: "denied".into(), message: format!("the {by} denied this call to {agent:?}") }),
            answered_by: None,
        }),
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

struct LoopEnd {
    status: CallStatus,
    text: String,
    turns: u32,
    error: Option<CallError>,
    answered_by: Option<String>,
}

async fn tool_loop(
    dispatcher: &Dispatcher,
    turn: &Arc<Turn>,
    spec: &CallSpec,
    runner: Arc<dyn crate::runner::Runner>,
    offered: &[OfferedTool],
    path: &[String],
) -> LoopEnd {
    let mut messages = spec.messages.clone();
    let definitions: Vec<Value> = offered.iter().map(|tool| tool.definition.clone()).collect();
    let max_steps = turn.config.limits.effective_max_steps();
    let mut text = String::new();
    for step in 1..=max_steps {
        let request = ModelRequest { messages: messages.clone(), tools: definitions.clone() };
        let header = spec.header.clone();
        let sink_turn = turn.clone();
        let mut on_delta = move |delta: ModelDelta| {
            let kind = match delta {
                ModelDelta::Text(text) => EventKind::TextDelta { text },
                ModelDelta::Reasoning(text) => EventKind::ReasoningDelta { text },
                ModelDelta::Progress { message, data } => EventKind::ToolProgress { message, data },
            };
            sink_turn.emit(&header, kind);
        };
        let reply = tokio::select! {
            biased;
            _ = spec.cancel.cancelled() => {
                return LoopEnd { status: CallStatus::Cancelled, text, turns: step, error: Some(cancelled_error()), answered_by: None };
            }
            reply = runner.stream(&request, &mut on_delta) => reply,
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => {
                return LoopEnd {
                    status: CallStatus::Error,
                    text,
                    turns: step,
                    error: Some(CallError { kind: error.kind().into(), message: error.to_string() }),
                    answered_by: None,
                }
            }
        };
        if let Some(usage) = reply.usage {
            turn.add_usage(&spec.header, usage);
        }
        text = reply.text.clone();
        if reply.tool_calls.is_empty() {
            return LoopEnd { status: CallStatus::Ok, text, turns: step, error: None, answered_by: None };
        }
        messages.push(Message::Assistant {
            content: (!reply.text.is_empty()).then(|| reply.text.clone()),
            tool_calls: reply.tool_calls.clone(),
        });
        if let Some(call) = reply.tool_calls.iter().find(|call| call.function.name == ESCALATE) {
            if offered.iter().any(|tool| tool.name == ESCALATE) {
                let escalation = escalate(dispatcher, turn, spec, call, step).await;
                return escalation;
            }
        }
        let parallel = turn.config.limits.effective_max_parallel() as usize;
        let mut pending: Vec<BoxFuture<'_, String>> = Vec::with_capacity(reply.tool_calls.len());
        for call in &reply.tool_calls {
            pending.push(dispatch_tool_call(dispatcher, turn, spec, call, offered, path).boxed());
        }
        // Concurrent up to max_parallel; `buffered` yields in the order asked for.
        let results: Vec<String> = futures::stream::iter(pending).buffered(parallel).collect().await;
        for (call, content) in reply.tool_calls.iter().zip(results) {
            messages.push(Message::Tool { tool_call_id: call.id.clone(), content });
        }
        if spec.cancel.is_cancelled() {
            return LoopEnd { status: CallStatus::Cancelled, text, turns: step, error: Some(cancelled_error()), answered_by: None };
        }
    }
    LoopEnd {
        status: CallStatus::Limited,
        text,
        turns: max_steps,
        error: Some(CallError {
            kind: "limited".into(),
            message: format!("stopped after {max_steps} model steps (limits.max_steps) without a final answer"),
        }),
        answered_by: None,
    }
}

fn cancelled_error() -> CallError {
    CallError { kind: "cancelled".into(), message: "cancelled by the user".into() }
}

async fn escalate(dispatcher: &Dispatcher, turn: &Arc<Turn>, spec: &CallSpec, call: &ToolCall, step: u32) -> LoopEnd {
    let target_name = turn.config.escalation.clone().unwrap_or_default();
    let reason = serde_json::from_str::<Value>(&call.function.arguments)
        .ok()
        .and_then(|arguments| arguments.get("reason").and_then(|reason| reason.as_str().map(str::to_owned)));
    turn.emit(&spec.header, EventKind::Escalated { from: spec.agent.name.clone(), to: target_name.clone(), reason: reason.clone() });
    let Some(target) = turn.config.agent(&target_name).cloned() else {
        return LoopEnd {
            status: CallStatus::Error,
            text: String::new(),
            turns: step,
            error: Some(CallError { kind: "unknown_agent".into(), message: format!("escalation agent {target_name:?} is not configured") }),
            answered_by: None,
        };
    };
    // A role switch: the escalation agent gets the conversation (not the primary's
    // tool traffic) and its answer is the turn's answer.
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
        agent: target,
        role: CallRole::Escalation,
        tool_name: Some(ESCALATE.into()),
        input: Some(json!({ "reason": reason })),
        messages,
        path: vec![spec.agent.name.clone()],
        cancel: spec.cancel.child_token(),
        approval: None,
    };
    let outcome = run_call(dispatcher, turn.clone(), child).await;
    LoopEnd { status: outcome.status, text: outcome.text, turns: step, error: outcome.error, answered_by: Some(outcome.answered_by) }
}

/// Runs one tool call of `parent`'s model and returns the tool result string.
/// Every call, refused ones included, becomes a node of the tree with a status.
async fn dispatch_tool_call(
    dispatcher: &Dispatcher,
    turn: &Arc<Turn>,
    parent: &CallSpec,
    call: &ToolCall,
    offered: &[OfferedTool],
    path: &[String],
) -> String {
    let name = call.function.name.as_str();
    let target_name = offered
        .iter()
        .find(|tool| tool.name == name)
        .and_then(|tool| tool.target.as_ref().map(|target| target.agent.clone()))
        .or_else(|| turn.config.agents.iter().find(|agent| crate::config::tool_name(&agent.name) == name).map(|agent| agent.name.clone()));
    let header = Header {
        call_id: turn.new_call_id(),
        parent_id: Some(parent.header.call_id.clone()),
        agent: target_name.clone().unwrap_or_else(|| name.to_string()),
        depth: parent.header.depth + 1,
    };
    let arguments: Result<Value, _> = serde_json::from_str(if call.function.arguments.trim().is_empty() { "{}" } else { &call.function.arguments });
    let refuse = |status: CallStatus, kind: &str, message: String, input: Option<Value>| {
        turn.register_node(&header);
        turn.emit(
            &header,
            EventKind::CallStarted { role: CallRole::Tool, tool_name: Some(name.to_string()), input, tools: vec![], model: None },
        );
        let error = CallError { kind: kind.into(), message };
        let end = LoopEnd { status, text: String::new(), turns: 0, error: Some(error.clone()), answered_by: None };
        let delivered = deliver(turn, &header.agent, &end);
        turn.emit(&header, finished(status, None, None, None, 0, Some(error), Some(delivered.clone())));
        delivered
    };

    let Some(target_name) = target_name else {
        return refuse(CallStatus::Error, "unknown_tool", format!("there is no tool named {name:?}"), arguments.ok());
    };
    let arguments = match arguments {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(other) => {
            return refuse(CallStatus::Error, "bad_arguments", format!("arguments must be a JSON object, got {other}"), Some(other));
        }
        Err(error) => {
            return refuse(CallStatus::Error, "bad_arguments", format!("arguments are not valid JSON: {error}"), None);
        }
    };
    let Some(request) = arguments.get("request").and_then(|request| request.as_str()).map(str::to_owned) else {
        return refuse(CallStatus::Error, "bad_arguments", "the `request` argument (a string) is required".into(), Some(arguments));
    };
    if path.iter().any(|on_path| *on_path == target_name) {
        return refuse(
            CallStatus::Limited,
            "cycle",
            format!("{target_name:?} is already on the call path ({}); a call back to it is refused", path.join(" → ")),
            Some(arguments),
        );
    }
    if !offered.iter().any(|tool| tool.name == name) {
        return refuse(
            CallStatus::Limited,
            "not_offered",
            format!("{name:?} was not offered to {:?} at depth {} (limits.max_depth or the tool entries)", parent.agent.name, parent.header.depth),
            Some(arguments),
        );
    }
    let ceiling = turn.config.limits.effective_max_calls_per_turn();
    if turn.delegations.fetch_add(1, Ordering::SeqCst) >= ceiling {
        return refuse(
            CallStatus::Limited,
            "max_calls_per_turn",
            format!("this turn already made {ceiling} tool-agent calls (limits.max_calls_per_turn)"),
            Some(arguments),
        );
    }
    if let Some(budget) = turn.config.limits.max_tokens_per_turn {
        let used = turn.tokens_used();
        if used >= budget {
            return refuse(
                CallStatus::Limited,
                "token_budget",
                format!("this turn used {used} tokens of its {budget}-token budget (limits.max_tokens_per_turn)"),
                Some(arguments),
            );
        }
    }
    let Some(target) = turn.config.agent(&target_name).cloned() else {
        return refuse(CallStatus::Error, "unknown_agent", format!("agent {target_name:?} is not configured"), Some(arguments));
    };
    let entry_approval = offered.iter().find(|tool| tool.name == name).and_then(|tool| tool.target.as_ref()).map(|tool| tool.approval);
    if entry_approval == Some(Approval::Deny) {
        return refuse(
            CallStatus::Denied,
            "denied",
            format!("calls to {target_name:?} are denied by the config (approval: deny)"),
            Some(arguments),
        );
    }
    let approval = (entry_approval == Some(Approval::Ask)).then(|| {
        let depth = parent.header.depth + 1;
        let max_depth = turn.config.limits.effective_max_depth();
        ApprovalLimits {
            may_delegate: depth < max_depth,
            depth,
            max_depth,
            calls_left: ceiling.saturating_sub(turn.delegations.load(Ordering::SeqCst)),
            timeout_secs: target.timeout_secs.map(|secs| secs.min(u64::from(u32::MAX)) as u32),
        }
    });
    let mut messages = Vec::new();
    if let Some(prompt) = &target.system_prompt {
        messages.push(Message::system(prompt.clone()));
    }
    if let Some(context) = arguments.get("context").filter(|context| !context.is_null()) {
        messages.push(Message::user(format!(
            "Context from the calling agent {:?} (structured data for this request, as JSON):\n{}",
            parent.agent.name,
            serde_json::to_string_pretty(context).unwrap_or_default()
        )));
    }
    messages.push(Message::user(request));
    let child = CallSpec {
        header,
        agent: target,
        role: CallRole::Tool,
        tool_name: Some(name.to_string()),
        input: Some(arguments),
        messages,
        path: path.to_vec(),
        cancel: parent.cancel.child_token(),
        approval,
    };
    let outcome = run_call(dispatcher, turn.clone(), child).await;
    outcome.delivered.unwrap_or_default()
}

