//! Health up front: whether each configured agent could answer now, checked
//! without a model call (nothing is billed), so the agent list and the chat's
//! agent picker flag an agent whose program is missing, whose server does not
//! answer, or whose key is not there, before a call fails. An HTTP model's server
//! lists its models (with its key; the configured model must be among them), an
//! A2A agent's card is read, a command-line agent's program (and an MCP stdio
//! server's) is looked for on PATH; a remote MCP server is not opened (that starts
//! a session on it): its health is unknown until its first call. Every check is
//! bounded by `CHECK_TIMEOUT`; all of them run at once.

use std::ffi::OsString;
use std::time::Duration;

use serde::Serialize;
use specta::Type;

use crate::config::{AgentConfig, Family};
use crate::keys::Keys;
use crate::runner;

/// The longest one agent's check may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(4);

/// How an agent's check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum HealthState {
    /// It could answer: its server answers, its program is there.
    Ok,
    /// It would fail now: `detail` says why.
    Problem,
    /// Not checked without a call (a remote MCP server), or the server has no model list.
    Unknown,
}

/// One agent's health, in the words the window shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AgentHealth {
    pub agent: String,
    pub state: HealthState,
    pub detail: String,
}

fn health(agent: &AgentConfig, state: HealthState, detail: impl Into<String>) -> AgentHealth {
    AgentHealth { agent: agent.name.clone(), state, detail: detail.into() }
}

/// The health of each of `agents`, checked at once; `path` is the PATH programs
/// are looked for on, `keys` where keyring keys are read.
pub async fn check_all(agents: &[AgentConfig], path: Option<OsString>, keys: &Keys) -> Vec<AgentHealth> {
    let checks = agents.iter().map(|agent| {
        let path = path.clone();
        async move {
            tokio::time::timeout(CHECK_TIMEOUT, check(agent, path, keys)).await.unwrap_or_else(|_| {
                health(agent, HealthState::Problem, format!("no answer within {} s", CHECK_TIMEOUT.as_secs()))
            })
        }
    });
    futures::future::join_all(checks).await
}

/// One agent's health.
pub async fn check(agent: &AgentConfig, path: Option<OsString>, keys: &Keys) -> AgentHealth {
    match agent.provider.family() {
        Family::Demo => health(agent, HealthState::Ok, "built in: needs no server"),
        Family::HttpModel => check_http(agent, keys).await,
        Family::A2a => check_a2a(agent).await,
        Family::Mcp if agent.url.is_some() => {
            health(agent, HealthState::Unknown, "a remote MCP server: its first call says whether it answers")
        }
        Family::Mcp => check_program(agent, agent.command.clone(), path),
        Family::Program | Family::ClaudeSession => check_program(agent, super::connection::program_of(agent), path),
    }
}

fn check_program(agent: &AgentConfig, program: Option<String>, path: Option<OsString>) -> AgentHealth {
    let Some(program) = program else { return health(agent, HealthState::Problem, "no command to run") };
    match runner::cli::presets::find_program(&program, &path.unwrap_or_default()) {
        Some(found) => health(agent, HealthState::Ok, format!("{program} is {}", found.display())),
        None => health(agent, HealthState::Problem, format!("{program} is not on PATH (nor a file at that path)")),
    }
}

async fn check_http(agent: &AgentConfig, keys: &Keys) -> AgentHealth {
    let Some(url) = agent.url.as_deref() else { return health(agent, HealthState::Problem, "no url") };
    let key = crate::keys::api_key(keys, &agent.name, agent.api_key_env.as_deref(), agent.api_key_keyring.as_deref());
    let key = match key.await {
        Ok(key) => key,
        // The error names where the key was looked for, never a key.
        Err(error) => return health(agent, HealthState::Problem, error.to_string()),
    };
    let Ok(client) = runner::http::Origins::of(agent).client(reqwest::Client::builder().timeout(CHECK_TIMEOUT)) else {
        return health(agent, HealthState::Problem, "no HTTP client for its url");
    };
    let base = super::openai_base(url);
    match super::list_models(&client, url, key.as_deref(), agent.provider).await {
        Ok(models) => match &agent.model {
            Some(model) if !models.is_empty() && !models.contains(model) => {
                health(agent, HealthState::Problem, format!("{base} does not list the model {model:?}"))
            }
            _ => health(agent, HealthState::Ok, format!("answers at {base} ({} models)", models.len())),
        },
        Err(super::ModelsError::Unreachable) => {
            health(agent, HealthState::Problem, format!("nothing answers at {base}"))
        }
        Err(super::ModelsError::Status(401 | 403)) => {
            health(agent, HealthState::Problem, format!("{base} refuses the key (HTTP 401/403)"))
        }
        Err(super::ModelsError::Status(status)) => {
            health(agent, HealthState::Unknown, format!("{base} answers, but not with a model list (HTTP {status})"))
        }
        Err(super::ModelsError::NotAList) => {
            health(agent, HealthState::Unknown, format!("{base} answers, but not with a model list"))
        }
    }
}

async fn check_a2a(agent: &AgentConfig) -> AgentHealth {
    let card = match runner::remote::a2a::A2aRunner::new(agent, runner::Registry::new()) {
        Ok(runner) => runner.card().await.map_err(|error| runner::redact::error_of(agent, error)),
        Err(error) => Err(error),
    };
    match card {
        Ok(card) => health(agent, HealthState::Ok, format!("{} at {}", card.name, card.endpoint)),
        Err(error) => health(agent, HealthState::Problem, error.to_string()),
    }
}
