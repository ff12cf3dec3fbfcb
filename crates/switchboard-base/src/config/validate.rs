//! Semantic validation: every problem of a parsed config at once, each with the JSON
//! path it concerns, so `switchboard check` and the app can show them all.

use std::collections::HashMap;

use serde::Serialize;
use specta::Type;

use super::{tool_name, AgentField, AgentNames, AgentToolEntry, Config, Family, Provider};

/// Tool names longer than this are refused by OpenAI-compatible servers.
pub const MAX_TOOL_NAME_LEN: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One thing wrong with a config, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct Problem {
    pub severity: Severity,
    /// A JSON path such as `agents[2].tools[0].agent`.
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn error(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem { severity: Severity::Error, path: path.into(), message: message.into() }
    }
    fn warning(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem { severity: Severity::Warning, path: path.into(), message: message.into() }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(formatter, "{label}: {}: {}", self.path, self.message)
    }
}

/// All problems of `config`, errors and warnings, in file order.
pub fn validate(config: &Config) -> Vec<Problem> {
    let mut problems = Vec::new();
    let known = AgentNames::of(config);
    let mut agent_by_name: HashMap<&str, usize> = HashMap::new();
    let mut agent_by_tool_name: HashMap<String, usize> = HashMap::new();

    for (index, agent) in config.agents.iter().enumerate() {
        let path = format!("agents[{index}]");
        if agent.name.trim().is_empty() {
            problems.push(Problem::error(format!("{path}.name"), "an agent needs a non-empty name"));
            continue;
        }
        if let Some(first) = agent_by_name.insert(&agent.name, index) {
            problems.push(Problem::error(
                format!("{path}.name"),
                format!("agent name {:?} is already used by agents[{first}]", agent.name),
            ));
        }
        let synthesized = tool_name(&agent.name);
        if synthesized.len() > MAX_TOOL_NAME_LEN {
            problems.push(Problem::error(
                format!("{path}.name"),
                format!(
                    "tool name {synthesized:?} is {} characters; the limit is {MAX_TOOL_NAME_LEN}: use a shorter agent name",
                    synthesized.len()
                ),
            ));
        }
        match agent_by_tool_name.get(&synthesized) {
            Some(&first) if config.agents[first].name != agent.name => problems.push(Problem::error(
                format!("{path}.name"),
                format!(
                    "agent {:?} gets tool name {synthesized:?}, which agent {:?} (agents[{first}]) already has: rename one of them",
                    agent.name, config.agents[first].name
                ),
            )),
            Some(_) => {}
            None => {
                agent_by_tool_name.insert(synthesized, index);
            }
        }
        check_provider_fields(agent, &path, &mut problems);
        check_autonomy(agent, &path, &mut problems);
        check_entries(&agent.tools, &format!("{path}.tools"), &known, &mut problems);
    }
    check_entries(&config.agent_tools, "agent_tools", &known, &mut problems);
    served_names_across_lists(config, &mut problems);

    for (role, value) in [("primary", &config.primary), ("escalation", &config.escalation)] {
        if let Some(name) = value {
            if config.agent(name).is_none() {
                problems.push(Problem::error(role, format!("{role} names agent {name:?}, which is not configured")));
            }
        }
    }
    unknown_fields(config, &mut problems);
    cli_callers_are_not_targets(config, &mut problems);
    if config.primary.is_some() && config.primary == config.escalation {
        problems.push(Problem::error("escalation", "the escalation agent must differ from the primary"));
    }
    for (field, value) in [
        ("max_calls_per_turn", config.limits.max_calls_per_turn.map(u64::from)),
        ("max_parallel", config.limits.max_parallel.map(u64::from)),
        ("max_steps", config.limits.max_steps.map(u64::from)),
        ("max_tokens_per_turn", config.limits.max_tokens_per_turn),
        ("idle_timeout_secs", config.limits.idle_timeout_secs),
    ] {
        if value == Some(0) {
            problems.push(Problem::error(format!("limits.{field}"), "must be at least 1"));
        }
    }
    if let Some(telemetry) = &config.telemetry {
        validate_telemetry(telemetry, &mut problems);
    }
    problems
}

/// Claude Code (`claude-cli`) can only ever call, never be called: a tool entry
/// that points at one is said to be useless.
fn cli_callers_are_not_targets(config: &Config, problems: &mut Vec<Problem>) {
    let is_caller_only = |name: &str| config.agent(name).is_some_and(|agent| agent.provider == Provider::ClaudeCli);
    let mut entries: Vec<(String, &AgentToolEntry)> =
        config.agent_tools.iter().enumerate().map(|(index, entry)| (format!("agent_tools[{index}]"), entry)).collect();
    entries.extend(config.advisor.iter().map(|entry| ("advisor".to_string(), entry)));
    for (agent_index, agent) in config.agents.iter().enumerate() {
        for (index, entry) in agent.tools.iter().enumerate() {
            entries.push((format!("agents[{agent_index}].tools[{index}]"), entry));
        }
    }
    for (path, entry) in entries {
        if is_caller_only(&entry.agent) {
            problems.push(Problem::warning(
                format!("{path}.agent"),
                format!(
                    "{:?} is a claude-cli agent, which can call tool-agents but is never called as one: this entry is never offered",
                    entry.agent
                ),
            ));
        }
    }
}

/// A warning for every field this version does not know (a typo such as `envv` or
/// `timeout_sec` would otherwise do nothing, silently). They stay in the file.
fn unknown_fields(config: &Config, problems: &mut Vec<Problem>) {
    let mut warn = |path: &str, extra: &serde_json::Map<String, serde_json::Value>| {
        for key in extra.keys() {
            let field_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            problems.push(Problem::warning(
                field_path,
                format!("unknown field `{key}`: it does nothing (it is kept in the file); check its spelling"),
            ));
        }
    };
    let entry_fields = |warn: &mut dyn FnMut(&str, &serde_json::Map<String, serde_json::Value>),
                        path: &str,
                        entry: &AgentToolEntry| {
        warn(path, &entry.extra);
        if let Some(limits) = &entry.limits {
            warn(&format!("{path}.limits"), &limits.extra);
        }
    };
    warn("", &config.extra);
    warn("limits", &config.limits.extra);
    for (index, entry) in config.agent_tools.iter().enumerate() {
        entry_fields(&mut warn, &format!("agent_tools[{index}]"), entry);
    }
    if let Some(advisor) = &config.advisor {
        entry_fields(&mut warn, "advisor", advisor);
    }
    if let Some(telemetry) = &config.telemetry {
        warn("telemetry", &telemetry.extra);
    }
    for (index, agent) in config.agents.iter().enumerate() {
        let path = format!("agents[{index}]");
        warn(&path, &agent.extra);
        if let Some(limits) = &agent.limits {
            warn(&format!("{path}.limits"), &limits.extra);
        }
        for (entry_index, entry) in agent.tools.iter().enumerate() {
            entry_fields(&mut warn, &format!("{path}.tools[{entry_index}]"), entry);
        }
    }
}

/// `autonomy` is honoured by the presets that map it to their program's own
/// switches; anywhere else a warning says it is not (it never grants anything).
fn check_autonomy(agent: &super::AgentConfig, path: &str, problems: &mut Vec<Problem>) {
    let Some(autonomy) = agent.autonomy else { return };
    let why = match agent.provider {
        provider if provider.info().autonomy.is_some() => return,
        Provider::Smolagents if autonomy == super::Autonomy::ReadOnly => return,
        Provider::Smolagents => {
            format!("smolagents {}", super::provider::SMOLAGENTS_AUTONOMY)
        }
        provider => format!(
            "provider {:?} has no autonomy levels: what it may do is its program's or server's own, so `autonomy` is ignored",
            provider.as_str()
        ),
    };
    problems.push(Problem::warning(format!("{path}.autonomy"), why));
}

fn check_provider_fields(agent: &super::AgentConfig, path: &str, problems: &mut Vec<Problem>) {
    let needs = |field: &str, value: &Option<String>, problems: &mut Vec<Problem>| {
        if value.as_deref().is_none_or(|text| text.trim().is_empty()) {
            problems.push(Problem::error(
                format!("{path}.{field}"),
                format!("provider {:?} needs `{field}`", agent.provider.as_str()),
            ));
        }
    };
    // What the provider's row says it cannot run without.
    for field in agent.provider.info().required {
        match field {
            AgentField::Url => needs("url", &agent.url, problems),
            AgentField::Command => needs("command", &agent.command, problems),
            AgentField::Model => needs("model", &agent.model, problems),
            other => unreachable!("no provider requires {other:?}"),
        }
    }
    if agent.provider.family() == Family::HttpModel {
        if let Some(url) = &agent.url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                problems.push(Problem::error(format!("{path}.url"), "must start with http:// or https://"));
            }
        }
    }
    if agent.provider.family() == Family::Mcp && agent.command.is_some() == agent.url.is_some() {
        problems.push(Problem::error(
            format!("{path}.provider"),
            "an mcp agent needs either `command` (a stdio server) or `url` (streamable HTTP), not both",
        ));
    }
    if let Some(variable) = &agent.api_key_env {
        let looks_like_a_name = !variable.is_empty()
            && variable
                .chars()
                .all(|character| character.is_ascii_uppercase() || character.is_ascii_digit() || character == '_')
            && !variable.starts_with(|character: char| character.is_ascii_digit());
        if !looks_like_a_name {
            // Never echo the value: it may be the key itself, pasted by mistake.
            problems.push(Problem::error(
                format!("{path}.api_key_env"),
                "must name an environment variable (such as OPENAI_API_KEY), not hold the key itself",
            ));
        }
    }
    if let Some(entry) = &agent.api_key_keyring {
        let field = format!("{path}.api_key_keyring");
        if !agent.provider.info().keyring {
            problems.push(Problem::error(
                field,
                "a key in the system keyring is for `local` (HTTP model) agents; give other agents their key with `api_key_env`",
            ));
        } else if agent.api_key_env.is_some() {
            problems
                .push(Problem::error(field, "give the key either by `api_key_env` or by `api_key_keyring`, not both"));
        } else if !crate::keys::entry_is_valid(entry) {
            // Never echo the value: it may be the key itself, pasted by mistake.
            problems.push(Problem::error(
                field,
                "must name a keyring entry (1 to 100 letters, digits, '-', '_' or '.', such as the agent's name), not hold the key itself",
            ));
        }
    }
    let variable_name = |name: &str| {
        !name.is_empty()
            && name.chars().all(|character| character.is_ascii_alphanumeric() || character == '_')
            && !name.starts_with(|character: char| character.is_ascii_digit())
    };
    for (name, value) in &agent.env {
        if !variable_name(name) {
            problems.push(Problem::error(format!("{path}.env.{name}"), "not a name an environment variable can have"));
        }
        if let Some(reference) = crate::config::env_reference(value) {
            if !variable_name(reference) {
                problems.push(Problem::error(
                    format!("{path}.env.{name}"),
                    "`${…}` must name one environment variable of the app",
                ));
            }
        }
    }
    for (field, value) in [("timeout_secs", agent.timeout_secs), ("idle_timeout_secs", agent.idle_timeout_secs)] {
        if value == Some(0) {
            problems.push(Problem::error(format!("{path}.{field}"), "must be at least 1"));
        }
    }
}

fn check_entries(entries: &[AgentToolEntry], path: &str, known: &AgentNames<'_>, problems: &mut Vec<Problem>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut served: HashMap<String, usize> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let entry_path = format!("{path}[{index}]");
        let name = entry.serve.as_ref().and_then(|serve| serve.name.clone()).unwrap_or_else(|| tool_name(&entry.agent));
        if let Some(first) = seen.insert(&entry.agent, index) {
            problems.push(Problem::error(
                format!("{entry_path}.agent"),
                format!("a second entry for agent {:?} in this list (the first is {path}[{first}])", entry.agent),
            ));
        } else if let Some(first) = served.insert(name.clone(), index) {
            problems.push(Problem::error(
                format!("{entry_path}.serve.name"),
                format!("MCP clients would see two tools named {name:?} (the first is {path}[{first}])"),
            ));
        }
        if entry.description.trim().is_empty() {
            problems.push(Problem::error(
                format!("{entry_path}.description"),
                "a tool entry needs a description: the calling model reads it to decide when to call",
            ));
        }
        for (field, message) in entry.serve.as_ref().map(|serve| serve.problems()).unwrap_or_default() {
            problems.push(Problem::error(format!("{entry_path}.serve.{field}"), message));
        }
        if !known.contains(&entry.agent) {
            problems.push(Problem::warning(
                format!("{entry_path}.agent"),
                format!("agent {:?} is not configured; this entry is ignored", entry.agent),
            ));
        }
    }
}

/// The name an MCP client sees an entry under (`serve.name`, else `agent_<name>`).
fn served_name(entry: &AgentToolEntry) -> String {
    entry.serve.as_ref().and_then(|serve| serve.name.clone()).unwrap_or_else(|| tool_name(&entry.agent))
}

/// An agent's merged list (the global entries, its own in place of theirs; the
/// entries it would really offer: enabled, known, not itself, not a claude-cli
/// agent) shows MCP clients one tool a name: a global entry and one of its own
/// under one name would leave one of them unreachable (`switchboard mcp --as`
/// that agent). A clash within one list is `check_entries`'.
fn served_names_across_lists(config: &Config, problems: &mut Vec<Problem>) {
    let names = AgentNames::of(config);
    let offered = |entry: &AgentToolEntry| {
        entry.is_enabled() && config.agent(&entry.agent).is_some_and(|agent| agent.provider != Provider::ClaudeCli)
    };
    for (agent_index, agent) in config.agents.iter().enumerate() {
        if agent.tools.is_empty() {
            continue;
        }
        let merged: Vec<_> = super::merge::merge_entries(config, &names, &agent.name)
            .into_iter()
            .filter(|merged| offered(merged.entry))
            .collect();
        let global: HashMap<String, usize> = merged
            .iter()
            .filter(|merged| merged.scope == super::ToolScope::Global)
            .filter_map(|merged| {
                let index = config.agent_tools.iter().position(|entry| std::ptr::eq(entry, merged.entry))?;
                Some((served_name(merged.entry), index))
            })
            .collect();
        for merged in merged.iter().filter(|merged| merged.scope != super::ToolScope::Global) {
            let (name, Some(index)) =
                (served_name(merged.entry), agent.tools.iter().position(|entry| std::ptr::eq(entry, merged.entry)))
            else {
                continue;
            };
            if let Some(first) = global.get(&name) {
                problems.push(Problem::error(
                    format!("agents[{agent_index}].tools[{index}].serve.name"),
                    format!(
                        "{:?}'s tools would show MCP clients two tools named {name:?} (the other is agent_tools[{first}])",
                        agent.name
                    ),
                ));
            }
        }
    }
}

/// True when any problem is an error (warnings do not block).
pub fn has_errors(problems: &[Problem]) -> bool {
    problems.iter().any(|problem| problem.severity == Severity::Error)
}

/// The problems of a `telemetry` section.
fn validate_telemetry(telemetry: &super::telemetry::TelemetryConfig, problems: &mut Vec<Problem>) {
    if let Some(endpoint) = &telemetry.endpoint {
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            problems.push(Problem::error("telemetry.endpoint", "must start with http:// or https:// (OTLP over HTTP)"));
        }
    }
    for (header, variable) in &telemetry.headers {
        if !super::telemetry::is_variable_name(variable) {
            // Never echo the value: it may be the secret itself, pasted by mistake.
            problems.push(Problem::error(
                format!("telemetry.headers.{header}"),
                "must name an environment variable that holds the header's value, not hold the value itself",
            ));
        }
    }
}
