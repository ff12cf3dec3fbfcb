//! The tool-agent merge of spec section 1 and the tool-name synthesis of section 2:
//! pure functions of a config value, so they are exact and cheap to test.

use serde::Serialize;
use specta::Type;

use super::{AgentToolEntry, Config};

/// Where an entry of a caller's merged list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ToolScope {
    /// From `agent_tools`, not overridden by the caller.
    Global,
    /// A per-agent entry that replaced a global one.
    Override,
    /// A per-agent entry with no global twin.
    Local,
}

impl ToolScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolScope::Global => "global",
            ToolScope::Override => "override",
            ToolScope::Local => "local",
        }
    }
}

/// One entry of a caller's merged tool-agent list.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ResolvedTool {
    pub agent: String,
    pub tool_name: String,
    pub scope: ToolScope,
    pub description: String,
    pub enabled: bool,
}

/// The tool name an agent is offered under: `agent_` and the agent name lowercased,
/// every character outside ASCII `a-z0-9` replaced by `_`.
pub fn tool_name(agent: &str) -> String {
    let mut name = String::with_capacity(agent.len() + 6);
    name.push_str("agent_");
    for character in agent.chars() {
        let lower = character.to_ascii_lowercase();
        name.push(if lower.is_ascii_lowercase() || lower.is_ascii_digit() { lower } else { '_' });
    }
    name
}

/// Steps 1 to 4 of the merge for `caller`: disabled entries are kept, marked
/// `enabled: false`, so a list view can show them.
pub fn merged_tools(config: &Config, caller: &str) -> Vec<ResolvedTool> {
    let mut merged: Vec<(&AgentToolEntry, ToolScope)> =
        config.agent_tools.iter().map(|entry| (entry, ToolScope::Global)).collect();
    if let Some(caller_config) = config.agent(caller) {
        for own in &caller_config.tools {
            match merged.iter_mut().find(|(entry, _)| entry.agent == own.agent) {
                Some(slot) => *slot = (own, ToolScope::Override),
                None => merged.push((own, ToolScope::Local)),
            }
        }
    }
    merged
        .into_iter()
        .filter(|(entry, _)| entry.agent != caller)
        .filter(|(entry, _)| {
            let known = config.agent(&entry.agent).is_some();
            if !known {
                tracing::debug!(caller, agent = %entry.agent, "tool entry names an unknown agent; skipped");
            }
            known
        })
        .map(|(entry, scope)| ResolvedTool {
            agent: entry.agent.clone(),
            tool_name: tool_name(&entry.agent),
            scope,
            description: entry.description.clone(),
            enabled: entry.is_enabled(),
        })
        .collect()
}

/// The effective tool-agent list for `caller` (all five steps).
pub fn effective_tools(config: &Config, caller: &str) -> Vec<ResolvedTool> {
    let mut tools = merged_tools(config, caller);
    tools.retain(|tool| tool.enabled);
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_sanitised() {
        let cases = [
            ("aider", "agent_aider"),
            ("Qwen-2.5 Coder", "agent_qwen_2_5_coder"),
            ("émile", "agent__mile"),
            ("", "agent_"),
        ];
        for (agent, expected) in cases {
            assert_eq!(tool_name(agent), expected, "for {agent:?}");
        }
    }
}
