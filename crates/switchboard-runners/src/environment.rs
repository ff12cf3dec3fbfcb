//! The environment an agent's process gets, in either family (a CLI agent, an MCP
//! server over stdio): a minimal base of the app's variables, the agent's
//! `api_key_env` variable, then its own `env` (`${NAME}` taken from the app's
//! environment); nothing else of the app's, so no agent sees a key it was not given.

use std::collections::BTreeMap;

use crate::contract::RunnerError;

/// The variables of the app's environment every agent gets (a program needs them
/// to run at all); nothing else is inherited.
pub const BASE_ENVIRONMENT: [&str; 11] =
    ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"];

/// The environment of agent `agent`'s process: the base variables the app has,
/// its `api_key_env` variable, then `env` (`${NAME}` taken from the app's
/// environment; one that is not set is an error naming it).
pub fn of(
    agent: &str,
    api_key_env: Option<&str>,
    env: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, RunnerError> {
    let mut environment = BTreeMap::new();
    for name in BASE_ENVIRONMENT.iter().copied().chain(api_key_env) {
        if let Ok(value) = std::env::var(name) {
            environment.insert(name.to_string(), value);
        }
    }
    for (name, value) in env {
        let value = match crate::config::env_reference(value) {
            Some(variable) => std::env::var(variable).map_err(|_| {
                RunnerError::Config(format!(
                    "agent {agent:?}: env.{name} takes ${{{variable}}}, which is not set in the app's environment"
                ))
            })?,
            None => value.clone(),
        };
        environment.insert(name.clone(), value);
    }
    Ok(environment)
}
