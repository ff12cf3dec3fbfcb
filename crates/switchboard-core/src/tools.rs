//! Tool synthesis: the OpenAI function definitions an agent is offered, built-in
//! tools first (`escalate`), then the delegation tools: one function per effective
//! tool-agent, or the single `ask_agent` form, and the `ask_model` advisor when one
//! is configured. Pure.

pub mod explain;

use serde_json::{json, Value};

use crate::config::{effective_tools, Config, DelegationTool, MergedEntry, Provider, ResolvedTool, ToolScope};

/// The built-in tool that hands the turn to the escalation agent.
pub const ESCALATE: &str = "escalate";
/// The single delegation tool of `delegation_tool: "ask_agent"`.
pub const ASK_AGENT: &str = "ask_agent";
/// The advisor tool: one answer, no tools, from the configured advisor.
pub const ASK_MODEL: &str = "ask_model";

/// Where an agent stands when its tool list is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Answering the user's turn (depth 0).
    Root,
    /// Running as a tool-agent at `depth` (1 for a direct child).
    Tool { depth: u32 },
    /// Acting as the escalation target or the advisor: no delegation tools.
    Escalation,
}

/// What calling an offered tool does.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolKind {
    Escalate,
    /// `agent_<name>`: call that delegate.
    Agent(ResolvedTool),
    /// `ask_agent`: call the delegate named in the arguments, one of these.
    AskAgent(Vec<ResolvedTool>),
    /// `ask_model`: one answer from the advisor.
    AskModel(ResolvedTool),
}

/// One tool as offered to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    pub name: String,
    /// The function definition (the OpenAI shape `tools list --json` shows).
    pub definition: Value,
    pub kind: ToolKind,
}

impl OfferedTool {
    /// The tool as the runner contract has it (each runner writes its own wire shape).
    pub fn spec(&self) -> crate::contract::ToolSpec {
        let function = &self.definition["function"];
        crate::contract::ToolSpec {
            name: self.name.clone(),
            description: function["description"].as_str().unwrap_or_default().to_string(),
            parameters: function.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({ "type": "object" })),
        }
    }
}

impl OfferedTool {
    /// Whether this tool delegates (and so warrants the delegation guidance).
    pub fn delegates(&self) -> bool {
        !matches!(self.kind, ToolKind::Escalate)
    }

    /// The tool-agents calling this tool can reach (none for `escalate` and the advisor).
    pub fn agents(&self) -> Vec<String> {
        match &self.kind {
            ToolKind::Agent(target) => vec![target.agent.clone()],
            ToolKind::AskAgent(targets) => targets.iter().map(|target| target.agent.clone()).collect(),
            ToolKind::Escalate | ToolKind::AskModel(_) => Vec::new(),
        }
    }
}

/// The tools offered to `agent` standing at `standing`, with `path` the agents
/// already on the call path (never offered again: the dispatch-level cycle guard),
/// `max_depth` the depth limit in force for this call, and `reach`, for a narrowed
/// call, the tool-agents its caller could call (no others are offered).
pub fn offered_tools(
    config: &Config,
    agent: &str,
    standing: Standing,
    path: &[String],
    max_depth: u32,
    reach: Option<&[String]>,
) -> Vec<OfferedTool> {
    let mut tools = Vec::new();
    let is_primary = config.primary_agent().is_some_and(|primary| primary.name == agent);
    if standing == Standing::Root && is_primary {
        if let Some(escalation) =
            config.escalation.as_deref().filter(|name| *name != agent && config.agent(name).is_some())
        {
            tools.push(OfferedTool {
                name: ESCALATE.into(),
                definition: escalate_definition(escalation),
                kind: ToolKind::Escalate,
            });
        }
    }
    let depth = match standing {
        Standing::Root => 0,
        Standing::Tool { depth } => depth,
        Standing::Escalation => return tools,
    };
    if depth >= max_depth {
        return tools;
    }
    let within_reach = |name: &String| reach.is_none_or(|reach| reach.contains(name));
    let delegates: Vec<ResolvedTool> = tool_agents_for(config, Some(agent))
        .into_iter()
        .filter(|resolved| !path.contains(&resolved.agent) && within_reach(&resolved.agent))
        .collect();
    match config.delegation_tool.unwrap_or_default() {
        DelegationTool::PerAgent => {
            for resolved in delegates {
                tools.push(OfferedTool {
                    name: resolved.tool_name.clone(),
                    definition: agent_tool_definition(&resolved),
                    kind: ToolKind::Agent(resolved),
                });
            }
        }
        DelegationTool::AskAgent if !delegates.is_empty() => {
            tools.push(OfferedTool {
                name: ASK_AGENT.into(),
                definition: ask_agent_definition(config, &delegates),
                kind: ToolKind::AskAgent(delegates),
            });
        }
        DelegationTool::AskAgent => {}
    }
    if let Some(advisor) = &config.advisor {
        let eligible = advisor.is_enabled()
            && advisor.agent != agent
            && config.agent(&advisor.agent).is_some()
            && !path.contains(&advisor.agent);
        if eligible {
            let resolved = MergedEntry { entry: advisor, scope: ToolScope::Global }.resolve(config);
            tools.push(OfferedTool {
                name: ASK_MODEL.into(),
                definition: ask_model_definition(&resolved),
                kind: ToolKind::AskModel(resolved),
            });
        }
    }
    tools
}

/// The tools `agent` is offered when it answers the user's turn (as the CLI's
/// `tools schema` and a settings preview show them); with no agent, the tools a
/// caller outside the config (an MCP client) is offered: the global entries.
pub fn offered_for_root(config: &Config, agent: Option<&str>) -> Vec<OfferedTool> {
    let max_depth = match agent.and_then(|name| config.agent(name)) {
        Some(agent_config) => config.limits_for(agent_config, None).effective_max_depth(),
        None => config.limits.effective_max_depth(),
    };
    offered_tools(config, agent.unwrap_or(""), Standing::Root, &[], max_depth, None)
}

/// The tool-agents `caller` may call (the global entries when `None`): its
/// effective entries whose agents may be called. A claude-cli agent calls but is
/// never called. What a model is offered before the path and depth are applied,
/// and what a caller outside a turn (an MCP client) may call.
pub fn tool_agents_for(config: &Config, caller: Option<&str>) -> Vec<ResolvedTool> {
    let callable = |name: &str| config.agent(name).is_some_and(|target| target.provider != Provider::ClaudeCli);
    let mut tools = effective_tools(config, caller.unwrap_or_default());
    tools.retain(|resolved| callable(&resolved.agent));
    tools
}

/// The OpenAI function definition of one tool-agent (`agent_<name>`), with the
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

fn ask_agent_definition(config: &Config, delegates: &[ResolvedTool]) -> Value {
    let names: Vec<&str> = delegates.iter().map(|tool| tool.agent.as_str()).collect();
    let catalogue: Vec<String> =
        delegates.iter().map(|tool| format!("- {}: {}", tool.agent, tool.description)).collect();
    let mut properties = json!({
        "agent": { "type": "string", "enum": names, "description": "The agent to ask." },
        "request": { "type": "string", "description": "The request to send to the agent." },
        "context": { "type": "object", "description": "Optional structured data the agent needs (JSON); passed to it as labelled context." }
    });
    let models: Vec<&str> = delegates
        .iter()
        .filter_map(|tool| config.agent(&tool.agent))
        .flat_map(|agent| agent.allowed_models.iter().map(String::as_str))
        .collect();
    if !models.is_empty() {
        properties["model"] = json!({ "type": "string", "enum": models, "description": "Optional: a model for the agent, among those it allows." });
    }
    json!({
        "type": "function",
        "function": {
            "name": ASK_AGENT,
            "description": format!("Ask another agent to do a task and return its answer. Agents:\n{}", catalogue.join("\n")),
            "parameters": { "type": "object", "properties": properties, "required": ["agent", "request"] }
        }
    })
}

fn ask_model_definition(advisor: &ResolvedTool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": ASK_MODEL,
            "description": format!("Ask the advisor ({}) for one answer; it has no tools. {}", advisor.agent, advisor.description),
            "parameters": {
                "type": "object",
                "properties": { "question": { "type": "string", "description": "The question for the advisor." } },
                "required": ["question"]
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
