//! Tool synthesis (spec section 2): the OpenAI function definitions an agent is
//! offered, built-in tools first, then one per effective tool-agent. Pure.

use serde_json::{json, Value};

use crate::config::{effective_tools, Config, ResolvedTool};

/// The built-in tool that hands the turn to the escalation agent.
pub const ESCALATE: &str = "escalate";

/// Where an agent stands when its tool list is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Answering the user's turn (depth 0).
    Root,
    /// Running as a tool-agent at `depth` (1 for a direct child).
    Tool { depth: u32 },
    /// Acting as the escalation target: no tool-agents (role-level cycle guard).
    Escalation,
}

/// One tool as offered to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    pub name: String,
    /// The function definition sent on the wire.
    pub definition: Value,
    /// The tool-agent behind it; `None` for a built-in tool.
    pub target: Option<ResolvedTool>,
}

/// The tools offered to `agent` standing at `standing`, with `path` the agents
/// already on the call path (never offered again: the dispatch-level cycle guard).
pub fn offered_tools(config: &Config, agent: &str, standing: Standing, path: &[String]) -> Vec<OfferedTool> {
    let mut tools = Vec::new();
    let is_primary = config.primary_agent().is_some_and(|primary| primary.name == agent);
    if standing == Standing::Root && is_primary {
        if let Some(escalation) = config.escalation.as_deref().filter(|name| *name != agent && config.agent(name).is_some()) {
            tools.push(OfferedTool { name: ESCALATE.into(), definition: escalate_definition(escalation), target: None });
        }
    }
    let depth = match standing {
        Standing::Root => 0,
        Standing::Tool { depth } => depth,
        Standing::Escalation => return tools,
    };
    if depth >= config.limits.effective_max_depth() {
        return tools;
    }
    for resolved in effective_tools(config, agent) {
        if path.iter().any(|on_path| *on_path == resolved.agent) {
            continue;
        }
        tools.push(OfferedTool { name: resolved.tool_name.clone(), definition: agent_tool_definition(&resolved), target: Some(resolved) });
    }
    tools
}

/// The function definition of one tool-agent, as spec section 2 gives it, with the
/// optional structured `context` of streaming-and-structured-io.md.
pub fn agent_tool_definition(tool: &ResolvedTool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.tool_name,
            "description": tool.description,
            "parameters": {
                "type": "object",
                "properties": {
                    "request": { "type": "string", "description": "The request to send to the agent." },
                    "context": { "type": "object", "description": "Optional structured data the agent needs (JSON); passed to it as labelled context." }
                },
                "required": ["request"]
            }
        }
    })
}

fn escalate_definition(escalation: &str) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": ESCALATE,
            "description": format!("Hand this turn to the escalation agent ({escalation}) when the request is beyond you. It answers the user directly."),
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": { "type": "string", "description": "Why the turn needs the escalation agent." }
                },
                "required": ["reason"]
            }
        }
    })
}
