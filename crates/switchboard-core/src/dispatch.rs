//! The dispatcher: runs a user turn as a tree of calls. The root agent's tool loop
//! offers built-in tools and delegation tools; a delegation call runs the target's
//! own loop as a child (fresh messages: only the request, its labelled context and
//! what the entry shares), an `escalate` call hands the turn over. Every call of the
//! tree reports into one ordered event stream; usage and cost roll up live; limits,
//! budgets and approvals are enforced here, at any depth; any call can be cancelled
//! with its subtree.
//!
//! The rooms: this file holds the two entry points (a user turn, and one tool-agent
//! call from outside, as the MCP server makes); `call.rs` runs one call from its
//! `call_started` to its `call_finished` (`spec.rs` holds what it needs); `tool_loop.rs` is one call's model steps;
//! `admit.rs` decides whether a delegation may run; `messages.rs` builds what a child
//! is sent; `approval.rs` waits for a yes; `turn.rs` is what the calls of a turn
//! share; `control.rs` controls a turn from outside (cancel, approve, answer, send a
//! message into a call) and keeps a session's answers.

mod admit;
mod approval;
mod call;
mod control;
mod messages;
mod reuse;
mod spec;
mod tool_loop;
mod turn;

use std::sync::{Arc, RwLock};

use serde_json::Value;

pub use crate::sources::{random_nonce, Clock, NonceSource};
pub use control::{Answerer, ApprovalPolicy, Session, SteerRefusal, TurnControl};
pub use reuse::{remote_task_of, Continuation, Kept, ReusedCall};

use crate::config::{Config, Limits};
use crate::contract::Message;
use crate::event::{CallError, CallErrorKind, CallRole, CallStatus, EventKind, EventSink, Usage};
use crate::runner::cache::RunnerCache;
use crate::tools::Standing;
use admit::Caller;
use call::{run_call, run_delegation};
use spec::CallSpec;
use turn::{Figures, Header, Turn};

/// The engine that runs turns against a config.
pub struct Dispatcher {
    config: RwLock<Arc<Config>>,
    runners: Arc<RunnerCache>,
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
    /// Tool-agent calls of an interrupted turn this one resumes, whose answers are
    /// handed back instead of running them again (`reuse.rs`).
    pub reuse: Vec<ReusedCall>,
    /// Where the primary picks up, when it resumes an interrupted turn after its
    /// last model step (none: it starts from the user's message).
    pub continuation: Option<Continuation>,
}

/// How a turn ended (what the desktop's `send_message` returns; the details came
/// through the events).
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub struct TurnOutcome {
    pub status: CallStatus,
    pub text: String,
    /// The agent whose text is the answer (the escalation agent after `escalate`).
    pub answered_by: String,
    pub usage_total: Option<Usage>,
    pub cost_total: Option<f64>,
    pub error: Option<CallError>,
}

/// One tool-agent call made from outside a turn (an MCP client, a remote caller):
/// the same admission, limits, approvals and fence as a model's call.
#[derive(Debug, Clone, Default)]
pub struct ToolCallRequest {
    /// The agent whose tool list the call is made from (its entries, approvals and
    /// limits apply); the global entries when `None`.
    pub caller: Option<String>,
    /// The tool-agent to call.
    pub agent: String,
    pub request: String,
    /// Structured data for the request, passed to the agent as labelled context.
    pub context: Option<Value>,
    /// Limits laid over the config's for this call (and its subtree).
    pub limits: Option<Limits>,
}

/// How a tool-agent call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutcome {
    pub status: CallStatus,
    /// The agent's answer as it produced it (untrusted).
    pub text: String,
    /// The answer fenced as untrusted data, as a calling model receives it.
    pub delivered: String,
    pub usage: Option<Usage>,
    pub usage_total: Option<Usage>,
    pub cost: Option<f64>,
    pub cost_total: Option<f64>,
    /// Model steps the call took.
    pub steps: u32,
    pub error: Option<CallError>,
}

impl Dispatcher {
    pub fn new(config: Config) -> Dispatcher {
        Dispatcher {
            config: RwLock::new(Arc::new(config)),
            runners: Arc::new(RunnerCache::default()),
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

    fn start_turn(&self, config: Arc<Config>, limits: Limits, sink: EventSink, control: &TurnControl) -> Arc<Turn> {
        let sources = (self.clock.clone(), self.nonce.clone());
        Arc::new(Turn::new(config, limits, self.runners.clone(), sink, sources, control.clone()))
    }

    /// Runs one user turn, reporting every event of its call tree to `sink`.
    pub async fn run_turn(&self, request: TurnRequest, sink: EventSink, control: TurnControl) -> TurnOutcome {
        let config = self.config();
        let agent_name = request.agent.clone().or_else(|| config.primary_agent().map(|agent| agent.name.clone()));
        let agent = agent_name.as_deref().and_then(|name| config.agent(name)).cloned();
        let turn_limits =
            agent.as_ref().map(|agent| config.limits_for(agent, None)).unwrap_or_else(|| config.limits.clone());
        let turn = self.start_turn(config.clone(), turn_limits.clone(), sink, &control);
        *turn.reuse.lock().unwrap() = request.reuse.clone();
        *turn.continuation.lock().unwrap() = request.continuation.clone();
        let call_id = turn.new_call_id();
        let Some(agent) = agent else {
            let name = agent_name.unwrap_or_else(|| "(none)".into());
            let error = CallError::new(CallErrorKind::UnknownAgent, format!("no agent named {name:?} is configured"));
            let header = Header { call_id, parent_id: None, agent: name.clone(), depth: 0 };
            turn.register_node(&header, None);
            let started = EventKind::CallStarted {
                role: CallRole::Turn,
                tool_name: None,
                input: None,
                tools: vec![],
                model: None,
                steering: crate::event::Steering::not("its agent is not configured"),
            };
            turn.emit(&header, started);
            turn.emit(
                &header,
                call::finished(CallStatus::Error, None, Figures::default(), 0, Some(error.clone()), None),
            );
            return TurnOutcome {
                status: CallStatus::Error,
                text: String::new(),
                answered_by: name,
                usage_total: None,
                cost_total: None,
                error: Some(error),
            };
        };
        let spec = CallSpec {
            header: Header { call_id, parent_id: None, agent: agent.name.clone(), depth: 0 },
            messages: messages::turn_messages(&agent, &request.history, &request.message),
            agent,
            role: CallRole::Turn,
            standing: Standing::Root,
            tool_name: None,
            input: None,
            path: Vec::new(),
            cancel: control.root.clone(),
            approval: None,
            limits: turn_limits,
            model: None,
            keep_conversation: None,
            reach: None,
            floor: None,
            remote_task: None,
        };
        let outcome = run_call(turn.clone(), spec).await;
        TurnOutcome {
            status: outcome.status,
            text: outcome.text,
            answered_by: outcome.answered_by,
            usage_total: outcome.figures.usage_total,
            cost_total: outcome.figures.cost_total,
            error: outcome.error,
        }
    }

    /// Runs one tool-agent call as the root of its own tree (at depth 1, as if the
    /// caller's model had made it), reporting every event to `sink`. Refusals
    /// (unknown agent, not offered, denied, over the ceiling) are outcomes, not errors.
    pub async fn run_tool_call(
        &self,
        request: ToolCallRequest,
        sink: EventSink,
        control: TurnControl,
    ) -> ToolCallOutcome {
        let config = self.config();
        let caller = request.caller.as_deref().and_then(|name| config.agent(name));
        let mut limits = caller.map(|agent| config.limits_for(agent, None)).unwrap_or_else(|| config.limits.clone());
        if let Some(over) = &request.limits {
            limits = limits.overlay(over);
        }
        let turn = self.start_turn(config.clone(), limits.clone(), sink, &control);
        let path: Vec<String> = request.caller.iter().cloned().collect();
        let could_call: Vec<String> = crate::tools::tool_agents_for(&config, request.caller.as_deref())
            .into_iter()
            .map(|tool| tool.agent)
            .collect();
        let caller = Caller {
            call_id: None,
            agent: request.caller.as_deref(),
            depth: 0,
            path: &path,
            cancel: &control.root,
            messages: &[],
            limits: &limits,
            could_call: &could_call,
            reach: None,
            floor: None,
        };
        let delegation = admit::delegation_from_outside(
            &turn,
            request.caller.as_deref(),
            &request.agent,
            &request.request,
            request.context.as_ref(),
        );
        let outcome = run_delegation(&turn, &caller, delegation).await;
        ToolCallOutcome {
            status: outcome.status,
            text: outcome.text,
            delivered: outcome.delivered.unwrap_or_default(),
            usage: outcome.figures.usage,
            usage_total: outcome.figures.usage_total,
            cost: outcome.figures.cost,
            cost_total: outcome.figures.cost_total,
            steps: outcome.steps,
            error: outcome.error,
        }
    }
}
