//! `switchboard agent probe NAME`: what a remote agent's server offers (an `mcp`
//! agent's tools, with the one the agent calls marked), so a user can pick the
//! `tool` and see that the server answers before delegating to it.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use switchboard_core::config::Provider;
use switchboard_core::runner::mcp::McpRunner;

use crate::{load, terminal::printable, Failure};

pub(crate) fn probe(path: &Path, name: &str, as_json: bool) -> Result<ExitCode, Failure> {
    let config = load(path)?.config;
    let agent = config
        .agent(name)
        .ok_or_else(|| Failure { code: 1, message: format!("no agent named {name:?} is configured") })?
        .clone();
    if agent.provider != Provider::Mcp {
        let message =
            format!("agent {name:?} is a {} agent; probe lists the tools of mcp agents", agent.provider.as_str());
        return Err(Failure { code: 1, message });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    let runner = McpRunner::new(&agent).map_err(|error| Failure { code: 1, message: error.to_string() })?;
    let tools = runtime.block_on(runner.probe());
    drop(runner); // a stdio server's process group ends here
    switchboard_core::runner::subprocess::end_pending_groups();
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
