//! "Why does X not see Y", answered: every tool entry that could reach an agent's
//! list, global and own, with the scope the merge gives it and the reason it is not
//! offered when it is not; and the exact function definitions the agent is offered
//! when it answers a turn; and, when narrowing (`limits.narrow_delegation`) is on
//! anywhere, what each agent is offered along each call chain from it, and what
//! narrowing took away. Pure; the settings view, `/agent tool list` and
//! `switchboard tools explain` show it.

use serde::Serialize;
use serde_json::Value;
use specta::Type;

use super::{offered_for_root, tool_agents_for};
use crate::config::{
    merge_entries, tool_name, AgentConfig, AgentNames, Approval, Config, Family, Limits, Provider, ToolScope,
};

/// Why an entry of an agent's list is not offered to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Absence {
    /// The entry names the agent itself (the cycle guard: an agent is never its own tool).
    SelfReference,
    /// No agent of that name is configured.
    UnknownAgent,
    /// The entry (or the override that wins for this agent) is disabled.
    Disabled,
    /// The target is a claude-cli agent, which calls but is never called.
    NotCallable,
    /// The agent's depth limit is 0, so it is offered no delegation tools.
    DepthLimit,
    /// The agent's provider cannot call tools (subprocess, mcp and a2a agents; a
    /// claude-cli agent without `experimental_cli_tool_calls`).
    CallerCannotCall,
}

impl Absence {
    /// The reason in words, as a terminal shows it.
    pub fn words(self) -> &'static str {
        match self {
            Absence::SelfReference => "it is the agent itself",
            Absence::UnknownAgent => "no agent of that name is configured",
            Absence::Disabled => "disabled",
            Absence::NotCallable => "a claude-cli agent calls but is never called",
            Absence::DepthLimit => "the agent's max_depth is 0",
            Absence::CallerCannotCall => "this agent's provider cannot call tools",
        }
    }
}

/// One entry as it bears on an agent's list.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ExplainedEntry {
    pub tool_agent: String,
    pub tool_name: String,
    /// Where the winning entry comes from.
    pub scope: ToolScope,
    pub description: String,
    pub enabled: bool,
    pub approval: Approval,
    /// A global entry this agent's own entry replaces (shown struck through).
    pub overridden: bool,
    /// Why it is not offered; none when it is.
    pub absent: Option<Absence>,
}

/// An agent's tool-agent list explained, with the definitions it is offered.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ToolsExplained {
    pub agent: String,
    pub entries: Vec<ExplainedEntry>,
    /// The function definitions sent to the model when the agent answers a turn
    /// (built-in tools such as `escalate` included), as they go on the wire.
    #[specta(type = Vec<specta_typescript::Unknown>)]
    pub offered: Vec<Value>,
    pub max_depth: u32,
    /// When narrowing is on anywhere: the call chains from this agent, each link
    /// with what its agent is offered there (empty when narrowing is off everywhere).
    pub chains: Vec<ChainLink>,
}

/// One agent on a call chain, and what it is offered there.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ChainLink {
    /// The callers above it, from the root.
    pub callers: Vec<String>,
    pub agent: String,
    pub depth: u32,
    /// Whether the call is narrowed to its caller's reach.
    pub narrowed: bool,
    /// The tool-agents it is offered here.
    pub offered: Vec<String>,
    /// Tool-agents its own entries offer that narrowing takes away here.
    pub narrowed_away: Vec<String>,
}

/// At most this many links are listed (the chains of a large config multiply).
pub const MAX_CHAIN_LINKS: usize = 200;

/// Whether an agent of this configuration can call tool-agents at all.
pub fn calls_tool_agents(agent: &AgentConfig) -> bool {
    match agent.provider.family() {
        Family::HttpModel | Family::Demo => true,
        Family::ClaudeSession => agent.experimental_cli_tool_calls == Some(true),
        Family::Program | Family::Mcp | Family::A2a => false,
    }
}

/// Every entry that could reach `agent`'s list, in the merge's order (globals in
/// file order, then the agent's own additions), each with why it is absent.
/// `None` when no agent of that name is configured.
pub fn explain(config: &Config, agent: &str) -> Option<ToolsExplained> {
    let caller = config.agent(agent)?;
    let max_depth = config.limits_for(caller, None).effective_max_depth();
    let can_call = calls_tool_agents(caller);
    let mut entries: Vec<ExplainedEntry> = Vec::new();
    for global in &config.agent_tools {
        let own = caller.tools.iter().find(|own| own.agent == global.agent);
        if own.is_some() {
            entries.push(row(config, agent, global, ToolScope::Global, true, can_call, max_depth));
        }
        let (entry, scope) = match own {
            Some(own) => (own, ToolScope::Override),
            None => (global, ToolScope::Global),
        };
        entries.push(row(config, agent, entry, scope, false, can_call, max_depth));
    }
    for own in &caller.tools {
        if !config.agent_tools.iter().any(|global| global.agent == own.agent) {
            entries.push(row(config, agent, own, ToolScope::Local, false, can_call, max_depth));
        }
    }
    let offered = if can_call {
        offered_for_root(config, Some(agent)).into_iter().map(|tool| tool.definition).collect()
    } else {
        Vec::new()
    };
    let chains = if narrowing_anywhere(config) { chains(config, agent) } else { Vec::new() };
    Some(ToolsExplained { agent: agent.to_string(), entries, offered, max_depth, chains })
}

/// Whether any limits of the config (global, an agent's, an entry's) turn narrowing on.
pub fn narrowing_anywhere(config: &Config) -> bool {
    let on = |limits: Option<&Limits>| limits.is_some_and(Limits::narrows);
    on(Some(&config.limits))
        || config.agent_tools.iter().any(|entry| on(entry.limits.as_ref()))
        || config
            .agents
            .iter()
            .any(|agent| on(agent.limits.as_ref()) || agent.tools.iter().any(|entry| on(entry.limits.as_ref())))
}

/// The call chains from `root` (depth first, at most `MAX_CHAIN_LINKS` links), as
/// the dispatcher would offer them: a delegate's limits are its own, narrowed to its
/// caller's when narrowing applies, and a narrowed delegate is offered only what
/// its caller was offered.
pub fn chains(config: &Config, root: &str) -> Vec<ChainLink> {
    let mut links = Vec::new();
    if let Some(agent) = config.agent(root) {
        let limits = config.limits_for(agent, None);
        walk(config, root, &[], 0, &limits, None, &mut links);
    }
    links
}

fn walk(
    config: &Config,
    agent: &str,
    callers: &[String],
    depth: u32,
    limits: &Limits,
    reach: Option<&[String]>,
    links: &mut Vec<ChainLink>,
) {
    let Some(agent_config) = config.agent(agent) else { return };
    if links.len() >= MAX_CHAIN_LINKS {
        return;
    }
    let mut path = callers.to_vec();
    path.push(agent.to_string());
    let own: Vec<String> = if calls_tool_agents(agent_config) && depth < limits.effective_max_depth() {
        tool_agents_for(config, Some(agent))
            .into_iter()
            .map(|tool| tool.agent)
            .filter(|name| !path.contains(name))
            .collect()
    } else {
        Vec::new()
    };
    let (offered, narrowed_away): (Vec<String>, Vec<String>) = match reach {
        Some(reach) => own.into_iter().partition(|name| reach.contains(name)),
        None => (own, Vec::new()),
    };
    links.push(ChainLink {
        callers: callers.to_vec(),
        agent: agent.to_string(),
        depth,
        narrowed: reach.is_some(),
        offered: offered.clone(),
        narrowed_away,
    });
    let names = AgentNames::of(config);
    let entries = merge_entries(config, &names, agent);
    for target in &offered {
        let Some(target_config) = config.agent(target) else { continue };
        let entry = entries.iter().find(|merged| &merged.entry.agent == target).map(|merged| merged.entry);
        let mut child = config.limits_for(target_config, entry);
        let narrowed = child.narrows() || reach.is_some();
        if narrowed {
            child = child.within(limits);
        }
        walk(config, target, &path, depth + 1, &child, narrowed.then_some(offered.as_slice()), links);
    }
}

fn row(
    config: &Config,
    caller: &str,
    entry: &crate::config::AgentToolEntry,
    scope: ToolScope,
    overridden: bool,
    can_call: bool,
    max_depth: u32,
) -> ExplainedEntry {
    let target = config.agent(&entry.agent);
    let absent = if entry.agent == caller {
        Some(Absence::SelfReference)
    } else if target.is_none() {
        Some(Absence::UnknownAgent)
    } else if target.is_some_and(|target| target.provider == Provider::ClaudeCli) {
        Some(Absence::NotCallable)
    } else if !entry.is_enabled() {
        Some(Absence::Disabled)
    } else if !can_call {
        Some(Absence::CallerCannotCall)
    } else if max_depth == 0 {
        Some(Absence::DepthLimit)
    } else {
        None
    };
    ExplainedEntry {
        tool_agent: entry.agent.clone(),
        tool_name: tool_name(&entry.agent),
        scope,
        description: entry.description.clone(),
        enabled: entry.is_enabled(),
        approval: config.approval_of(entry),
        overridden,
        absent: if overridden { None } else { absent },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AgentToolEntry, Limits};

    fn config() -> Config {
        let mut config = Config::default();
        for (name, provider) in
            [("lead", Provider::OpenAiCompatible), ("coder", Provider::AiderCli), ("claude", Provider::ClaudeCli)]
        {
            config.agents.push(AgentConfig::new(name, provider));
        }
        config.agent_tools = vec![
            AgentToolEntry::new("coder", "writes code"),
            AgentToolEntry::new("lead", "plans"),
            AgentToolEntry::new("ghost", "gone"),
            AgentToolEntry::new("claude", "claude code"),
        ];
        config
    }

    fn reasons(explained: &ToolsExplained) -> Vec<(String, ToolScope, bool, Option<Absence>)> {
        explained
            .entries
            .iter()
            .map(|entry| (entry.tool_agent.clone(), entry.scope, entry.overridden, entry.absent))
            .collect()
    }

    #[test]
    fn each_absent_entry_says_why_and_overrides_show_both_rows() {
        let mut config = config();
        let mut own = AgentToolEntry::new("coder", "writes code, for lead");
        own.enabled = Some(false);
        config.agents[0].tools = vec![own, AgentToolEntry::new("extra", "local")];
        let explained = explain(&config, "lead").unwrap();
        let global = ToolScope::Global;
        assert_eq!(
            reasons(&explained),
            vec![
                ("coder".into(), global, true, None),
                ("coder".into(), ToolScope::Override, false, Some(Absence::Disabled)),
                ("lead".into(), global, false, Some(Absence::SelfReference)),
                ("ghost".into(), global, false, Some(Absence::UnknownAgent)),
                ("claude".into(), global, false, Some(Absence::NotCallable)),
                ("extra".into(), ToolScope::Local, false, Some(Absence::UnknownAgent)),
            ]
        );
        assert!(explained.offered.is_empty(), "nothing is offered: {:?}", explained.offered);
    }

    #[test]
    fn the_offered_definitions_are_those_of_the_entries_without_a_reason() {
        let explained = explain(&config(), "lead").unwrap();
        let names: Vec<&str> =
            explained.offered.iter().filter_map(|definition| definition["function"]["name"].as_str()).collect();
        assert_eq!(names, ["agent_coder"]);
        let present: Vec<&str> =
            explained.entries.iter().filter(|e| e.absent.is_none()).map(|e| e.tool_name.as_str()).collect();
        assert_eq!(present, names);
    }

    #[test]
    fn a_depth_limit_of_zero_and_a_caller_that_cannot_call_are_reasons() {
        let mut config = config();
        config.agents[0].limits = Some(Limits { max_depth: Some(0), ..Limits::default() });
        let explained = explain(&config, "lead").unwrap();
        assert_eq!(explained.entries[0].absent, Some(Absence::DepthLimit));
        assert!(explained.offered.is_empty());
        let explained = explain(&config, "coder").unwrap();
        assert_eq!(explained.entries[1].absent, Some(Absence::CallerCannotCall));
        assert!(explain(&config, "nobody").is_none());
    }

    /// The confused deputy as `tools explain` shows it: x may not call z, y may;
    /// narrowed, y below x is offered nothing and z is what narrowing took away.
    #[test]
    fn chains_show_what_narrowing_takes_away_and_nothing_without_it() {
        let mut config = Config::default();
        for name in ["x", "y", "z"] {
            config.agents.push(AgentConfig::new(name, Provider::OpenAiCompatible));
        }
        config.agent_tools = vec![AgentToolEntry::new("y", "Y."), AgentToolEntry::new("z", "Z.")];
        let mut off = AgentToolEntry::new("z", "not for x");
        off.enabled = Some(false);
        config.agents[0].tools = vec![off];
        config.limits.max_depth = Some(3);
        assert!(explain(&config, "x").unwrap().chains.is_empty(), "nothing to show while narrowing is off");

        config.limits.narrow_delegation = Some(true);
        type Link = (Vec<String>, String, bool, Vec<String>, Vec<String>);
        let links: Vec<Link> = explain(&config, "x")
            .unwrap()
            .chains
            .into_iter()
            .map(|link| (link.callers, link.agent, link.narrowed, link.offered, link.narrowed_away))
            .collect();
        let names = |names: &[&str]| names.iter().map(|name| name.to_string()).collect::<Vec<_>>();
        assert_eq!(
            links,
            vec![
                (vec![], "x".to_string(), false, names(&["y"]), vec![]),
                (names(&["x"]), "y".to_string(), true, vec![], names(&["z"])),
            ]
        );
        // From y itself (a root, not a deputy), z is offered and z's chain follows.
        let from_y: Vec<String> = chains(&config, "y").into_iter().map(|link| link.agent).collect();
        assert_eq!(from_y, names(&["y", "z"]));
    }
}
