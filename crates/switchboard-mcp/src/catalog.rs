//! The MCP tool list: the effective tool-agents of the agent the server speaks as
//! (or the global entries), each with the description and input schema the
//! dispatcher offers models (`request`, optional `context`), or the name and
//! argument schema its entry's `serve` gives, and the output schema of its
//! structured result. Pure: built from a config snapshot.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use switchboard_core::config::{Config, ResolvedTool};
use switchboard_core::tools::{agent_tool_definition, tool_agents_for};

use crate::outcome::output_schema;

/// The tools an MCP client is offered, in the config's order.
pub fn tools(config: &Config, as_agent: Option<&str>) -> Vec<Tool> {
    served(config, as_agent)
        .iter()
        .map(|resolved| {
            let arguments = resolved.serve.as_ref().and_then(|serve| serve.arguments.clone());
            let definition = agent_tool_definition(resolved);
            let input = as_object(
                arguments.or_else(|| definition.pointer("/function/parameters").cloned()).unwrap_or_default(),
            );
            let provider = config.agent(&resolved.agent).map(|agent| agent.provider.as_str()).unwrap_or("unknown");
            Tool::new(resolved.tool_name.clone(), resolved.description.clone(), Arc::new(input))
                .with_title(format!("{} ({provider} agent)", resolved.agent))
                .with_raw_output_schema(Arc::new(as_object(output_schema())))
                .with_annotations(ToolAnnotations::new().read_only(false).open_world(true))
        })
        .collect()
}

/// The entry behind tool `name` (its agent, how it is served), when the client may call it.
pub fn agent_of(config: &Config, as_agent: Option<&str>, name: &str) -> Option<ResolvedTool> {
    served(config, as_agent).into_iter().find(|resolved| resolved.tool_name == name)
}

/// The tool-agents a client may call, each under the name it is served by (an
/// entry's `serve.name`, else `agent_<name>`); of two under one name, the first.
fn served(config: &Config, as_agent: Option<&str>) -> Vec<ResolvedTool> {
    let mut tools = tool_agents_for(config, as_agent);
    for tool in &mut tools {
        if let Some(name) = tool.serve.as_ref().and_then(|serve| serve.name.clone()) {
            tool.tool_name = name;
        }
    }
    let mut names = std::collections::HashSet::new();
    tools.retain(|tool| {
        let first = names.insert(tool.tool_name.clone());
        if !first {
            // `switchboard check` calls it an error (and such a config does not load).
            tracing::debug!("two tools named {:?}: agent {:?}'s is left out", tool.tool_name, tool.agent);
        }
        first
    });
    tools
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
        assert_eq!(agent_of(&config, None, "agent_helper").map(|tool| tool.agent).as_deref(), Some("helper"));
        for refused in ["agent_claude", "agent_ghost", "agent_off", "agent_own", "agent_main"] {
            assert_eq!(agent_of(&config, None, refused), None, "{refused}");
        }
        let tool = &tools(&config, None)[0];
        assert_eq!(tool.input_schema.get("required"), Some(&serde_json::json!(["request"])));
        assert!(tool.output_schema.is_some());
    }

    /// An entry's `serve` names the tool and its arguments for MCP clients only;
    /// the call finds its agent by that name, and `agent_<name>` no longer does.
    #[test]
    fn an_entry_served_under_its_own_name_and_arguments() {
        let arguments = serde_json::json!({ "type": "object", "properties": { "name": { "type": "string" } } });
        let mut greet = AgentToolEntry::new("greeter", "Greets.");
        greet.serve = Some(switchboard_core::config::ServedTool {
            name: Some("greet".into()),
            arguments: Some(arguments.clone()),
            task: None,
        });
        // A second entry served under a name already taken is left out.
        let mut twin = AgentToolEntry::new("twin", "Greets too.");
        twin.serve = Some(switchboard_core::config::ServedTool { name: Some("greet".into()), ..Default::default() });
        let config = Config {
            agents: vec![AgentConfig::new("greeter", Provider::Demo), AgentConfig::new("twin", Provider::Demo)],
            agent_tools: vec![greet, twin],
            ..Config::default()
        };
        let listed = tools(&config, None);
        assert_eq!(listed.iter().map(|tool| tool.name.to_string()).collect::<Vec<_>>(), vec!["greet"]);
        assert_eq!(serde_json::Value::Object((*listed[0].input_schema).clone()), arguments);
        assert_eq!(agent_of(&config, None, "greet").map(|tool| tool.agent).as_deref(), Some("greeter"));
        assert_eq!(agent_of(&config, None, "agent_greeter"), None);
        // Models are offered the entry as before.
        let offered = switchboard_core::tools::tool_agents_for(&config, None);
        assert_eq!(offered[0].tool_name, "agent_greeter");
    }
}
