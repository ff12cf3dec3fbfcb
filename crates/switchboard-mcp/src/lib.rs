//! Switchboard's tool-agents as a Model Context Protocol server, built on the
//! official Rust SDK (`rmcp`): any MCP client (Claude Code, Codex, editors, another
//! Switchboard) lists the effective tool-agents of one agent (or the global
//! entries) and calls them through the same dispatcher, limits, approvals and
//! fence as a model does, with progress, cancellation and list changes.
//!
//! The rooms: `catalog.rs` (the tool list, pure), `outcome.rs` (results, pure),
//! `progress.rs` (events as progress lines, pure), `relay.rs` (one call's events to
//! the client, approvals), `asking.rs` (how the client's user is asked: on its
//! session, on its task, or in rounds of its request), `observed.rs` (a call
//! followed through a shell's turn pipeline), `server.rs` (the handler,
//! calls made as tasks of the tasks extension), `http.rs` (the loopback
//! streamable HTTP endpoint and its guards) and `stdio.rs`.

mod asking;
pub mod catalog;
pub mod connect;
pub mod http;
mod observed;
pub mod outcome;
pub mod progress;
mod relay;
mod server;
pub mod sessions;
pub mod stdio;

pub use observed::PipelineCall;
pub use server::{CallObserver, IncomingCall, McpServer, ObservedCall, ServerOptions, DEFAULT_TASK_TTL};
