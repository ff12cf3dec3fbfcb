//! Editing operations behind the chat's `/agent tool …` commands:
//! each is a pure change to a config value; `apply` runs one against the file with
//! validation, the stale-copy check and an atomic write, and reports which agents'
//! runners must be evicted.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use specta::Type;

use super::store::{self, ConfigError, Loaded, Version};
use super::{merge_entries, AgentConfig, AgentNames, AgentToolEntry, Config, TelemetryConfig};

/// Which list a tool operation addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", content = "agent", rename_all = "snake_case")]
pub enum ToolTarget {
    /// `agent_tools`.
    Global,
    /// The named agent's own `tools`.
    Agent(String),
}

/// One edit; the desktop forms and the CLI both send these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Edit {
    EnableTool {
        target: ToolTarget,
        tool_agent: String,
    },
    DisableTool {
        target: ToolTarget,
        tool_agent: String,
    },
    AddTool {
        target: ToolTarget,
        tool_agent: String,
        description: String,
    },
    RemoveTool {
        target: ToolTarget,
        tool_agent: String,
    },
    /// Writes one entry with all its fields (the entry form): replaces the entry
    /// for `entry.agent` in the target list, or adds it there. `previous` names the
    /// tool-agent the entry was for when the form changed it.
    SetTool {
        target: ToolTarget,
        entry: AgentToolEntry,
        #[serde(default)]
        previous: Option<String>,
    },
    AddAgent {
        agent: AgentConfig,
    },
    /// Replaces the agent named `name` (which may rename it).
    EditAgent {
        name: String,
        agent: AgentConfig,
    },
    RemoveAgent {
        name: String,
        /// What happens to the tool entries that name the agent (in `agent_tools`
        /// and in every agent's own list).
        #[serde(default)]
        tool_entries: EntryFate,
    },
    SetPrimary {
        agent: Option<String>,
    },
    SetEscalation {
        agent: Option<String>,
    },
    /// Replaces the `telemetry` section (the traces form); `None` removes it. Fields
    /// this version does not know, in the section as written, are kept.
    SetTelemetry {
        telemetry: Option<TelemetryConfig>,
    },
    /// The setup wizard's answers, written at once: agents added (or, with
    /// `replace_agents`, the agents and tool entries replaced), the roles and the
    /// global tool-agent entries of its "agents as tools for all agents" step.
    Setup {
        agents: Vec<AgentConfig>,
        replace_agents: bool,
        primary: Option<String>,
        escalation: Option<String>,
        agent_tools: Vec<AgentToolEntry>,
    },
}

/// What removing an agent does to the tool entries that name it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum EntryFate {
    /// Leave them (they are skipped, with a warning, until an agent of that name exists again).
    #[default]
    Keep,
    /// Remove them too.
    Remove,
}

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What an applied edit produced.
#[derive(Debug, Clone)]
pub struct Applied {
    pub loaded: Loaded,
    /// Agents whose runners must be evicted from the runner cache.
    pub evict: Vec<String>,
}

/// Loads the file, checks it is still `expected`, applies `edit`, validates and
/// writes it atomically.
pub fn apply(path: &Path, expected: &Version, edit: &Edit) -> Result<Applied, EditError> {
    let current = store::load(path)?;
    if &current.version != expected {
        return Err(ConfigError::Conflict { path: path.to_path_buf() }.into());
    }
    let mut config = current.config.clone();
    apply_to(&mut config, edit)?;
    let version = store::save(path, &config, expected)?;
    let evict = eviction_set(&current.config, &config);
    let warnings = super::validate(&config);
    Ok(Applied { loaded: Loaded { config, version, warnings }, evict })
}

/// Applies `edit` to a config value.
pub fn apply_to(config: &mut Config, edit: &Edit) -> Result<(), EditError> {
    match edit {
        Edit::EnableTool { target, tool_agent } => set_enabled(config, target, tool_agent, true),
        Edit::DisableTool { target, tool_agent } => set_enabled(config, target, tool_agent, false),
        Edit::AddTool { target, tool_agent, description } => {
            let entries = entries_mut(config, target)?;
            if entries.iter().any(|entry| &entry.agent == tool_agent) {
                return Err(EditError::AlreadyExists(format!(
                    "{} already has an entry for {tool_agent:?}; enable, disable or remove it instead",
                    describe(target)
                )));
            }
            entries.push(AgentToolEntry::new(tool_agent.clone(), description.clone()));
            Ok(())
        }
        Edit::RemoveTool { target, tool_agent } => {
            let entries = entries_mut(config, target)?;
            let before = entries.len();
            entries.retain(|entry| &entry.agent != tool_agent);
            if entries.len() == before {
                return Err(EditError::NotFound(format!("{} has no entry for {tool_agent:?}", describe(target))));
            }
            Ok(())
        }
        Edit::SetTool { target, entry, previous } => {
            let entries = entries_mut(config, target)?;
            let replaced = previous.as_deref().unwrap_or(&entry.agent);
            if replaced != entry.agent && entries.iter().any(|existing| existing.agent == entry.agent) {
                return Err(EditError::AlreadyExists(format!(
                    "{} already has an entry for {:?}",
                    describe(target),
                    entry.agent
                )));
            }
            match entries.iter_mut().find(|existing| existing.agent == replaced) {
                Some(slot) => {
                    let mut replacement = entry.clone();
                    if replacement.extra.is_empty() {
                        replacement.extra = slot.extra.clone();
                    }
                    *slot = replacement;
                }
                None if previous.is_some() => {
                    return Err(EditError::NotFound(format!("{} has no entry for {replaced:?}", describe(target))))
                }
                None => entries.push(entry.clone()),
            }
            Ok(())
        }
        Edit::AddAgent { agent } => {
            if config.agent(&agent.name).is_some() {
                return Err(EditError::AlreadyExists(format!("an agent named {:?} already exists", agent.name)));
            }
            config.agents.push(agent.clone());
            Ok(())
        }
        Edit::EditAgent { name, agent } => {
            if agent.name != *name && config.agent(&agent.name).is_some() {
                return Err(EditError::AlreadyExists(format!("an agent named {:?} already exists", agent.name)));
            }
            let slot = config.agent_mut(name).ok_or_else(|| unknown_agent(name))?;
            // Keep the fields this version does not know, unless the edit carries its own.
            let mut replacement = agent.clone();
            if replacement.extra.is_empty() {
                replacement.extra = slot.extra.clone();
            }
            *slot = replacement;
            for role in [&mut config.primary, &mut config.escalation] {
                if role.as_deref() == Some(name.as_str()) {
                    *role = Some(agent.name.clone());
                }
            }
            // A rename carries the tool entries that name the agent along (in
            // `agent_tools`, every agent's own list and the advisor).
            if agent.name != *name {
                let lists = std::iter::once(&mut config.agent_tools)
                    .chain(config.agents.iter_mut().map(|each| &mut each.tools));
                for entry in lists.flatten().chain(config.advisor.as_mut()) {
                    if entry.agent == *name {
                        entry.agent = agent.name.clone();
                    }
                }
            }
            Ok(())
        }
        Edit::RemoveAgent { name, tool_entries } => {
            config.agent(name).ok_or_else(|| unknown_agent(name))?;
            for (role, value) in [("primary", &config.primary), ("escalation", &config.escalation)] {
                if value.as_deref() == Some(name.as_str()) {
                    return Err(EditError::Refused(format!(
                        "{name:?} is the {role} agent; choose another {role} first"
                    )));
                }
            }
            config.agents.retain(|agent| &agent.name != name);
            if *tool_entries == EntryFate::Remove {
                config.agent_tools.retain(|entry| &entry.agent != name);
                for agent in &mut config.agents {
                    agent.tools.retain(|entry| &entry.agent != name);
                }
            }
            Ok(())
        }
        Edit::SetPrimary { agent } => {
            check_known(config, agent)?;
            config.primary = agent.clone();
            Ok(())
        }
        Edit::SetEscalation { agent } => {
            check_known(config, agent)?;
            config.escalation = agent.clone();
            Ok(())
        }
        Edit::SetTelemetry { telemetry } => {
            let kept = config.telemetry.as_ref().map(|section| section.extra.clone()).unwrap_or_default();
            config.telemetry = telemetry.clone().map(|mut section| {
                for (key, value) in kept {
                    section.extra.entry(key).or_insert(value);
                }
                section
            });
            Ok(())
        }
        Edit::Setup { agents, replace_agents, primary, escalation, agent_tools } => {
            // All or nothing: the answers are applied to a copy.
            let mut next = config.clone();
            if *replace_agents {
                next.agents.clear();
                next.agent_tools.clear();
            }
            for agent in agents {
                apply_to(&mut next, &Edit::AddAgent { agent: agent.clone() })?;
            }
            for entry in agent_tools {
                apply_to(
                    &mut next,
                    &Edit::SetTool { target: ToolTarget::Global, entry: entry.clone(), previous: None },
                )?;
            }
            apply_to(&mut next, &Edit::SetPrimary { agent: primary.clone() })?;
            apply_to(&mut next, &Edit::SetEscalation { agent: escalation.clone() })?;
            *config = next;
            Ok(())
        }
    }
}

/// The agents whose runners must go when `old` becomes `new`: every agent added,
/// removed or changed, and every agent whose merged tool-agent list changed.
pub fn eviction_set(old: &Config, new: &Config) -> Vec<String> {
    let (old_names, new_names) = (AgentNames::of(old), AgentNames::of(new));
    let old_agents: HashMap<&str, &AgentConfig> = old.agents.iter().map(|agent| (agent.name.as_str(), agent)).collect();
    let new_agents: HashMap<&str, &AgentConfig> = new.agents.iter().map(|agent| (agent.name.as_str(), agent)).collect();
    let lists_may_differ = old.agent_tools != new.agent_tools || old_names != new_names;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut names: Vec<String> = Vec::new();
    for agent in old.agents.iter().chain(new.agents.iter()) {
        let name = agent.name.as_str();
        if !seen.insert(name) {
            continue;
        }
        let (before, after) = (old_agents.get(name), new_agents.get(name));
        // The merged list depends on the globals, the agent's own entries and which
        // agents exist; compare it only when one of those could have changed it.
        let changed = before != after
            || (lists_may_differ && merge_entries(old, &old_names, name) != merge_entries(new, &new_names, name));
        if changed {
            names.push(name.to_string());
        }
    }
    names
}

fn set_enabled(config: &mut Config, target: &ToolTarget, tool_agent: &str, enabled: bool) -> Result<(), EditError> {
    let inherited =
        config.agent_tools.iter().find(|entry| entry.agent == tool_agent).map(|entry| entry.description.clone());
    let entries = entries_mut(config, target)?;
    if let Some(entry) = entries.iter_mut().find(|entry| entry.agent == tool_agent) {
        entry.enabled = Some(enabled);
        return Ok(());
    }
    match (target, inherited) {
        (ToolTarget::Agent(_), Some(description)) => {
            let mut entry = AgentToolEntry::new(tool_agent, description);
            entry.enabled = Some(enabled);
            entries.push(entry);
            Ok(())
        }
        (ToolTarget::Agent(agent), None) => Err(EditError::NotFound(format!(
            "{tool_agent:?} has no global entry to inherit a description from; add it for {agent:?} with a description"
        ))),
        (ToolTarget::Global, _) => {
            Err(EditError::NotFound(format!("agent_tools has no entry for {tool_agent:?}; add it with a description")))
        }
    }
}

fn entries_mut<'a>(config: &'a mut Config, target: &ToolTarget) -> Result<&'a mut Vec<AgentToolEntry>, EditError> {
    match target {
        ToolTarget::Global => Ok(&mut config.agent_tools),
        ToolTarget::Agent(name) => Ok(&mut config.agent_mut(name).ok_or_else(|| unknown_agent(name))?.tools),
    }
}

fn describe(target: &ToolTarget) -> String {
    match target {
        ToolTarget::Global => "agent_tools".into(),
        ToolTarget::Agent(name) => format!("agent {name:?}"),
    }
}

fn unknown_agent(name: &str) -> EditError {
    EditError::NotFound(format!("no agent named {name:?} is configured"))
}

fn check_known(config: &Config, agent: &Option<String>) -> Result<(), EditError> {
    match agent {
        Some(name) if config.agent(name).is_none() => Err(unknown_agent(name)),
        _ => Ok(()),
    }
}
