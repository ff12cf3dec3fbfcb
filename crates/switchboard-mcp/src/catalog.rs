//! The MCP tool list: the effective tool-agents of the agent the server speaks as
//! (or the global entries), each with the description and input schema the
//! dispatcher offers models (`request`, optional `context`) and the output schema
//! of its structured result. Pure: built from a config snapshot.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use switchboard_core::config::Config;
use switchboard_core::tools::{agent_tool_definition, tool_agents_for};

use crate::outcome::output_schema;

/// The tools an MCP client is offered, in the config's order.
pub fn tools(config: &Config, as_agent: Option<&str>) -> Vec<Tool> {
    tool_agents_for(config, as_agent)
        .iter()
        .map(|resolved| {
            let definition = agent_tool_definition(resolved);
            let input = as_object(definition.pointer("/function/parameters").cloned().unwrap_or_default());
            let provider = config.agent(&resolved.agent).map(|agent| agent.provider.as_str()).unwrap_or("unknown");
            Tool::new(resolved.tool_name.clone(), resolved.description.clone(), Arc::new(input))
                .with_title(format!("{} ({provider} agent)", resolved.agent))
                .with_raw_output_schema(Arc::new(as_object(output_schema())))
                .with_annotations(ToolAnnotations::new().read_only(false).open_world(true))
        })
        .collect()
}

/// The agent behind tool `name`, when the client may call it.
pub fn agent_of(config: &Config, as_agent: Option<&str>, name: &str) -> Option<String> {
    tool_agents_for(config, as_agent).into_iter().find(|resolved| resolved.tool_name == name).map(|tool| tool.agent)
}

/// A fingerprint of the list as a client sees it, to tell whether a reload changed it.
pub fn fingerprint(tools: &[Tool]) -> String {
    serde_json::to_string(tools).unwrap_or_default()
}

fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}
