//! Switchboard's engine: the config model and its merge, the runners that talk to
//! models, the dispatcher that runs a user turn as a tree of agent-as-tool calls,
//! and the one ordered event stream that reports it. Shells (the `switchboard` CLI,
//! the desktop app) call these entry points; this crate never knows about them.
//!
//! Entry points: [`config::store::load_or_create`], [`config::edit::apply`],
//! [`config::watch::spawn`], [`dispatch::Dispatcher::run_turn`].

pub mod config;
pub mod contract;
pub mod dispatch;
pub mod event;
pub mod fence;
pub mod keys;
pub mod live;
pub mod runner;
pub mod sessions;
pub mod setup;
pub mod skill;
pub mod sources;
pub mod tools;

pub use config::{AgentConfig, AgentToolEntry, Approval, Config, Limits, Provider};
pub use dispatch::{
    ApprovalPolicy, Dispatcher, Session, SteerRefusal, ToolCallOutcome, ToolCallRequest, TurnControl, TurnOutcome,
    TurnRequest,
};
pub use event::{
    ApprovalDecision, ApprovalLimits, CallError, CallErrorKind, CallEvent, CallRole, CallStatus, EventKind, EventSink,
    Steering, Usage,
};
