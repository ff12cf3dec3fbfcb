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

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::config::{AgentConfig, AgentToolEntry, Provider};

    /// What `tools/list` offers is exactly what `tools/call` accepts (and what the
    /// dispatcher admits): one source, `tools::tool_agents_for`.
    #[test]
    fn the_list_and_the_calls_agree() {
        let mut off = AgentToolEntry::new("off", "Disabled.");
        off.enabled = Some(false);
        let mut mine = AgentConfig::new("main", Provider::Demo);
        mine.tools = vec![AgentToolEntry::new("own", "Only for main.")];
        let config = Config {
            agents: vec![
                mine,
                AgentConfig::new("helper", Provider::Demo),
                AgentConfig::new("claude", Provider::ClaudeCli),
                AgentConfig::new("off", Provider::Demo),
                AgentConfig::new("own", Provider::Demo),
            ],
            agent_tools: vec![
                AgentToolEntry::new("helper", "Helps."),
                AgentToolEntry::new("claude", "Calls, is never called."),
                AgentToolEntry::new("ghost", "Not configured."),
                off,
            ],
            ..Config::default()
        };
        let names = |as_agent| tools(&config, as_agent).iter().map(|tool| tool.name.to_string()).collect::<Vec<_>>();
        assert_eq!(names(None), vec!["agent_helper"]);
        assert_eq!(names(Some("main")), vec!["agent_helper", "agent_own"]);
        assert_eq!(agent_of(&config, None, "agent_helper").as_deref(), Some("helper"));
        for refused in ["agent_claude", "agent_ghost", "agent_off", "agent_own", "agent_main"] {
            assert_eq!(agent_of(&config, None, refused), None, "{refused}");
        }
        let tool = &tools(&config, None)[0];
        assert_eq!(tool.input_schema.get("required"), Some(&serde_json::json!(["request"])));
        assert!(tool.output_schema.is_some());
    }
}
