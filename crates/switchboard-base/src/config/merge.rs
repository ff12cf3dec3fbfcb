//! The tool-agent merge (global entries, per-agent overrides, local entries) and the
//! `agent_<name>` tool-name synthesis:
//! pure functions of a config value, so they are exact and cheap to test.

use std::collections::HashSet;

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
    pub approval: super::Approval,
    /// How an MCP client is offered it, when the entry says (`served.rs`).
    pub serve: Option<super::ServedTool>,
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

/// The configured agent names, built once when many merges run on one config.
#[derive(Debug)]
pub struct AgentNames<'a>(HashSet<&'a str>);

impl<'a> AgentNames<'a> {
    pub fn of(config: &'a Config) -> AgentNames<'a> {
        AgentNames(config.agents.iter().map(|agent| agent.name.as_str()).collect())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

impl PartialEq for AgentNames<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// One entry of a caller's merged list, borrowed from the config: the merge itself
/// allocates nothing but the list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MergedEntry<'a> {
    pub entry: &'a AgentToolEntry,
    pub scope: ToolScope,
}

impl MergedEntry<'_> {
    /// The owned, serializable form (with the synthesized tool name and the
    /// approval that holds, the called agent's default included).
    pub fn resolve(&self, config: &Config) -> ResolvedTool {
        ResolvedTool {
            agent: self.entry.agent.clone(),
            tool_name: tool_name(&self.entry.agent),
            scope: self.scope,
            description: self.entry.description.clone(),
            enabled: self.entry.is_enabled(),
            approval: config.approval_of(self.entry),
            serve: self.entry.serve.clone(),
        }
    }
}

/// Steps 1 to 4 of the merge for `caller`, borrowed: disabled entries are kept so
/// that a list view can show them.
pub fn merge_entries<'a>(config: &'a Config, names: &AgentNames<'_>, caller: &str) -> Vec<MergedEntry<'a>> {
    let mut merged: Vec<MergedEntry<'a>> =
        config.agent_tools.iter().map(|entry| MergedEntry { entry, scope: ToolScope::Global }).collect();
    if let Some(caller_config) = config.agent(caller) {
        for own in &caller_config.tools {
            // Per-agent lists are short; a linear search beats hashing the globals per caller.
            match merged.iter_mut().find(|merged_entry| merged_entry.entry.agent == own.agent) {
                Some(slot) => *slot = MergedEntry { entry: own, scope: ToolScope::Override },
                None => merged.push(MergedEntry { entry: own, scope: ToolScope::Local }),
            }
        }
    }
    merged.retain(|merged_entry| {
        let agent = merged_entry.entry.agent.as_str();
        if agent == caller {
            return false;
        }
        let known = names.contains(agent);
        if !known {
            tracing::debug!(caller, agent, "tool entry names an unknown agent; skipped");
        }
        known
    });
    merged
}

/// Steps 1 to 4 of the merge for `caller`, owned (for the wire and the CLI):
/// disabled entries are kept, marked `enabled: false`.
pub fn merged_tools(config: &Config, caller: &str) -> Vec<ResolvedTool> {
    merged_tools_with(config, &AgentNames::of(config), caller)
}

/// As `merged_tools`, with the agent names already indexed.
pub fn merged_tools_with(config: &Config, names: &AgentNames<'_>, caller: &str) -> Vec<ResolvedTool> {
    merge_entries(config, names, caller).iter().map(|merged| merged.resolve(config)).collect()
}

/// The global entries as written (scope `global`), for list views.
pub fn global_tools(config: &Config) -> Vec<ResolvedTool> {
    config.agent_tools.iter().map(|entry| MergedEntry { entry, scope: ToolScope::Global }.resolve(config)).collect()
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

    /// `tools list --global` and the settings' global table: every global entry as
    /// written, disabled ones and those naming no agent included.
    #[test]
    fn the_global_list_is_every_global_entry_as_written() {
        let mut config = Config::default();
        config.agents.push(crate::config::AgentConfig::new("a", crate::config::Provider::Demo));
        let mut off = AgentToolEntry::new("a", "off");
        off.enabled = Some(false);
        config.agent_tools = vec![off, AgentToolEntry::new("ghost", "no such agent")];
        let rows: Vec<(String, bool, ToolScope)> =
            global_tools(&config).into_iter().map(|row| (row.tool_name, row.enabled, row.scope)).collect();
        assert_eq!(
            rows,
            [("agent_a".to_string(), false, ToolScope::Global), ("agent_ghost".to_string(), true, ToolScope::Global)]
        );
    }

    /// The CLI's scope column and the wire's `scope` field say the same word.
    #[test]
    fn a_scope_reads_as_it_serializes() {
        for scope in [ToolScope::Global, ToolScope::Override, ToolScope::Local] {
            assert_eq!(serde_json::to_value(scope).unwrap(), serde_json::json!(scope.as_str()));
        }
        assert_eq!(ToolScope::Override.as_str(), "override");
    }

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
