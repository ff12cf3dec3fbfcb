//! Switchboard's engine: the dispatcher that runs a user turn as a tree of
//! agent-as-tool calls, the chat sessions that log, trace and show it, setup and
//! the tool catalog, over the floor (`switchboard-base`: the config model, the
//! contract, the one ordered event stream) and the runners that talk to models
//! (`switchboard-runners`), both re-exported here. Shells (the `switchboard` CLI,
//! the desktop app) call these entry points; this crate never knows about them.
//!
//! Entry points: [`config::store::load_or_create`], [`config::edit::apply`],
//! [`config::watch::spawn`], [`dispatch::Dispatcher::run_turn`].

// The floor and the runners are crates of their own (`switchboard-base`,
// `switchboard-runners`), kept under the module names the shells have always used.
pub use switchboard_base::{config, contract, event, fence, keys, sources};
pub use switchboard_runners as runner;

pub mod dispatch;
pub mod live;
pub mod sessions;
pub mod setup;
pub mod skill;
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
