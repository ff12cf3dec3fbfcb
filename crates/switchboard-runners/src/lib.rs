//! The runners: how each agent's backend is called. The contract every runner
//! keeps is in `switchboard-base` (`contract`); here are the HTTP model runners
//! and the demo beside them, the two families (`cli`: agents run as a process;
//! `remote`: MCP tools and A2A agents), the runner cache, the registry of what must
//! not outlive a call, the redaction every runner is wrapped in, and the helpers
//! the families share. This crate cannot name the dispatcher that runs it (Cargo
//! keeps that wall: `switchboard-core` depends on it, never the other way); a
//! family imports the contract, these helpers and its own siblings, never the
//! other family (tested in `switchboard-core`'s `tests/it/architecture_cases.rs`).

// The floor every runner stands on, under the names the runner files use.
pub(crate) use switchboard_base::{config, contract, event, fence, keys, sources};

pub mod anthropic;
pub mod cache;
pub mod cli;
pub mod demo;
pub mod environment;
pub mod http;
pub mod local;
pub mod redact;
pub mod registry;
pub mod remote;
pub mod sse;

use std::sync::Arc;

pub use redact::{redact, Secrets};
pub use registry::{ending_signal, Registry};

use crate::config::{AgentConfig, Family, Provider};
use crate::contract::{ModelDelta, ModelReply, Runner, RunnerError};

/// Used when an agent sets no `max_output_bytes`: 10 MB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 10 * 1024 * 1024;

/// `text` cut to `limit` characters, with an ellipsis when cut: for excerpts of
/// what a server or a program wrote, in errors and progress lines.
pub(crate) fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(limit).collect::<String>())
    }
}

/// The mark of the server a remote task runs on, as its id is logged with it (the
/// log is redacted, and an endpoint may hold a secret, so not the endpoint itself):
/// the SHA-256 of the endpoint, without a trailing `/`, in hex. A resumed call
/// follows a task only where the mark is its agent's endpoint's.
pub(crate) fn server_mark(endpoint: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(endpoint.trim_end_matches('/').as_bytes()))
}

/// The note an answer cut at `max_output_bytes` ends with (`dropped`: how much
/// was left out, when it is known).
pub(crate) fn cut_note(limit: impl std::fmt::Display, dropped: Option<u64>) -> String {
    match dropped {
        Some(dropped) => {
            format!("\n[output cut at {limit} bytes (max_output_bytes): {dropped} more bytes were dropped]")
        }
        None => format!("\n[output cut at {limit} bytes (max_output_bytes): the rest was dropped]"),
    }
}

/// A model step bounded by `secs`: a `timeout` error when it takes longer (the
/// step's future, and what it holds, is dropped).
pub(crate) async fn within(
    secs: u64,
    step: impl std::future::Future<Output = Result<ModelReply, RunnerError>>,
) -> Result<ModelReply, RunnerError> {
    tokio::time::timeout(std::time::Duration::from_secs(secs), step).await.unwrap_or(Err(RunnerError::Timeout { secs }))
}

/// The first progress line of a remote call: where it goes, and how long getting
/// there took (the tree marks the call remote from its `data.remote`).
pub(crate) fn remote_connected(endpoint: &str, connected: std::time::Duration) -> ModelDelta {
    let connect_ms = connected.as_millis() as u64;
    ModelDelta::Progress {
        message: format!("remote {endpoint}: connected in {connect_ms} ms"),
        data: Some(serde_json::json!({ "remote": { "endpoint": endpoint, "connect_ms": connect_ms } })),
    }
}

/// The last progress line of a remote call: its latency split.
pub(crate) fn remote_latency(
    endpoint: &str,
    connected: std::time::Duration,
    first_event: std::time::Duration,
    total: std::time::Duration,
) -> ModelDelta {
    let ms = |duration: std::time::Duration| duration.as_millis() as u64;
    let (connect_ms, first_event_ms, total_ms) = (ms(connected), ms(first_event), ms(total));
    ModelDelta::Progress {
        message: format!(
            "remote {endpoint}: connect {connect_ms} ms, first event {first_event_ms} ms, total {total_ms} ms"
        ),
        data: Some(serde_json::json!({ "remote": {
            "endpoint": endpoint, "connect_ms": connect_ms, "first_event_ms": first_event_ms, "total_ms": total_ms,
        }})),
    }
}

/// The most one stream event (or one CLI's output) of `agent` may hold:
/// `max_output_bytes`, 10 MB when absent.
pub(crate) fn max_output_bytes(agent: &AgentConfig) -> usize {
    usize::try_from(agent.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)).unwrap_or(usize::MAX)
}

/// Builds the runner for an agent, its process groups and remote cancels kept in
/// `registry`, wrapped so that nothing it hands on holds the agent's secrets.
pub fn build(agent: &AgentConfig, registry: &Arc<Registry>) -> Result<Arc<dyn Runner>, RunnerError> {
    let inner = build_bare(agent, registry)?;
    Ok(Arc::new(redact::Redacting { inner, agent: agent.clone(), keys: registry.keys().clone() }))
}

fn build_bare(agent: &AgentConfig, registry: &Arc<Registry>) -> Result<Arc<dyn Runner>, RunnerError> {
    let registry = registry.clone();
    match agent.provider.family() {
        Family::Demo => Ok(Arc::new(demo::DemoRunner::new(agent))),
        Family::HttpModel if agent.provider == Provider::Anthropic => {
            Ok(Arc::new(anthropic::AnthropicRunner::with_keys(agent, registry.keys().clone())?))
        }
        Family::HttpModel => Ok(Arc::new(local::LocalRunner::with_keys(agent, registry.keys().clone())?)),
        Family::ClaudeSession => Ok(Arc::new(cli::claude::ClaudeRunner::new(agent, registry))),
        Family::Program => Ok(Arc::new(cli::subprocess::SubprocessRunner::new(agent, registry)?)),
        Family::Mcp => Ok(Arc::new(remote::mcp::McpRunner::new(agent, registry)?)),
        Family::A2a => Ok(Arc::new(remote::a2a::A2aRunner::new(agent, registry)?)),
    }
}
