//! `switchboard agent probe NAME`: what a remote agent's server offers (an `mcp`
//! agent's tools, with the one the agent calls marked; an `a2a` agent's card), so a user can pick the
//! `tool` and see that the server answers before delegating to it.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use switchboard_core::config::{AgentConfig, Provider};
use switchboard_core::runner::remote::a2a::A2aRunner;
use switchboard_core::runner::remote::mcp::McpRunner;
use switchboard_core::runner::Registry;

use crate::{load, terminal::printable, Failure};

pub(crate) fn probe(path: &Path, name: &str, as_json: bool) -> Result<ExitCode, Failure> {
    let config = load(path)?.config;
    let agent = config
        .agent(name)
        .ok_or_else(|| Failure { code: 1, message: format!("no agent named {name:?} is configured") })?
        .clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    if agent.provider == Provider::A2a {
        return probe_card(&runtime, &agent, as_json);
    }
    if agent.provider != Provider::Mcp {
        let message =
            format!("agent {name:?} is a {} agent; probe reads mcp and a2a agents' servers", agent.provider.as_str());
        return Err(Failure { code: 1, message });
    }
    let registry = Registry::new();
    let runner =
        McpRunner::new(&agent, registry.clone()).map_err(|error| Failure { code: 1, message: error.to_string() })?;
    let tools =
        runtime.block_on(runner.probe()).map_err(|error| switchboard_core::runner::redact::error_of(&agent, error));
    drop(runner); // a stdio server's process group ends here
    registry.shutdown();
    let tools = tools.map_err(|error| Failure { code: 1, message: error.to_string() })?;
    if as_json {
        let rows: Vec<_> = tools
            .iter()
            .map(
                |tool| json!({ "name": tool.name, "description": tool.description, "input_schema": tool.input_schema }),
            )
            .collect();
        println!("{}", json!({ "agent": name, "tools": rows }));
        return Ok(ExitCode::SUCCESS);
    }
    println!("{name}: {} tool(s)", tools.len());
    for tool in &tools {
        let chosen = agent.tool.as_deref() == Some(tool.name.as_ref()) || (agent.tool.is_none() && tools.len() == 1);
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(|required| required.as_array())
            .map(|names| names.iter().filter_map(|name| name.as_str()).collect())
            .unwrap_or_default();
        let description = tool.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
        println!(
            "{} {}({})  {}",
            if chosen { "*" } else { " " },
            printable(&tool.name),
            required.join(", "),
            printable(description)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// An a2a agent's card: who it is, where it answers, whether it streams, and the
/// tool description its name, description and skills make.
fn probe_card(runtime: &tokio::runtime::Runtime, agent: &AgentConfig, as_json: bool) -> Result<ExitCode, Failure> {
    let runner =
        A2aRunner::new(agent, Registry::new()).map_err(|error| Failure { code: 1, message: error.to_string() })?;
    let card = runtime
        .block_on(runner.card())
        .map_err(|error| switchboard_core::runner::redact::error_of(agent, error))
        .map_err(|error| Failure { code: 1, message: error.to_string() })?;
    if as_json {
        let row = json!({
            "agent": agent.name, "name": card.name, "endpoint": card.endpoint, "streaming": card.streaming,
            "skills": card.skills, "description": card.tool_description(),
        });
        println!("{row}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}: {} at {}", agent.name, printable(&card.name), card.endpoint);
    println!("  streaming: {}", if card.streaming { "yes" } else { "no (polled)" });
    println!("  a tool description from its card: {}", printable(&card.tool_description()));
    Ok(ExitCode::SUCCESS)
}
