//! The config model: agents, tool-agent entries, roles and limits, exactly as the
//! JSON file spells them. Unknown fields are kept in `extra` maps so that a rewrite
//! by this version never destroys what another version wrote.

pub mod edit;
pub mod merge;
pub mod store;
pub mod validate;
pub mod watch;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use specta::Type;
use specta_typescript::Number;

pub use merge::{
    effective_tools, global_tools, merge_entries, merged_tools, merged_tools_with, tool_name, AgentNames, MergedEntry, ResolvedTool, ToolScope,
};
pub use validate::{validate, Problem, Severity};

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, Default)]
pub struct Config {
    /// The agent that answers a user turn unless the user names another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// The agent the primary hands a turn to with the built-in `escalate` tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    #[serde(default)]
    pub agents: Vec<AgentConfig>,
    /// Tool-agent entries offered to every agent (spec section 1, "global").
    #[serde(default)]
    pub agent_tools: Vec<AgentToolEntry>,
    #[serde(default, skip_serializing_if = "Limits::is_unset")]
    pub limits: Limits,
    /// Fields this version does not know; written back unchanged.
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

/// How an agent is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// OpenAI-compatible chat completions over HTTP.
    #[serde(alias = "openai")]
    Local,
    AiderCli,
    Subprocess,
    ClaudeCli,
    /// The built-in deterministic agents that need no model server.
    Demo,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Local => "local",
            Provider::AiderCli => "aider-cli",
            Provider::Subprocess => "subprocess",
            Provider::ClaudeCli => "claude-cli",
            Provider::Demo => "demo",
        }
    }
}

/// One configured agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AgentConfig {
    pub name: String,
    pub provider: Provider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The name of the environment variable that holds the API key, never the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub timeout_secs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Demo provider only: pause between streamed tokens, so the stream is visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub delay_ms: Option<u64>,
    /// Per-agent tool-agent entries: overrides and additions to `agent_tools`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<AgentToolEntry>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

impl AgentConfig {
    /// A bare agent of the given provider; the other fields empty.
    pub fn new(name: impl Into<String>, provider: Provider) -> Self {
        AgentConfig {
            name: name.into(),
            provider,
            url: None,
            model: None,
            api_key_env: None,
            command: None,
            args: Vec::new(),
            timeout_secs: None,
            system_prompt: None,
            delay_ms: None,
            tools: Vec::new(),
            extra: Map::new(),
        }
    }
}

/// One tool-agent entry (spec section 1, "AgentToolEntry").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AgentToolEntry {
    pub agent: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether a call needs the user's yes: `ask` when absent (confirm by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

/// How a delegate's calls are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, Default)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Pause each call until the user approves or denies it.
    #[default]
    Ask,
    /// Run without asking.
    Auto,
    /// Never run; the caller gets a `denied` result.
    Deny,
}

impl AgentToolEntry {
    pub fn new(agent: impl Into<String>, description: impl Into<String>) -> Self {
        AgentToolEntry { agent: agent.into(), description: description.into(), enabled: None, approval: None, extra: Map::new() }
    }

    /// `ask` when absent.
    pub fn approval(&self) -> Approval {
        self.approval.unwrap_or_default()
    }

    /// True when absent, as the spec says.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// Delegation limits; every field optional so that a rewrite writes back only what
/// the user set. The `effective_*` accessors apply the documented defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls_per_turn: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub max_tokens_per_turn: Option<u64>,
    /// How many model round trips one call may take before it is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

impl Limits {
    pub const DEFAULT_MAX_DEPTH: u32 = 1;
    pub const DEFAULT_MAX_CALLS_PER_TURN: u32 = 8;
    pub const DEFAULT_MAX_PARALLEL: u32 = 4;
    pub const DEFAULT_MAX_STEPS: u32 = 8;

    fn is_unset(&self) -> bool {
        *self == Limits::default()
    }
    pub fn effective_max_depth(&self) -> u32 {
        self.max_depth.unwrap_or(Self::DEFAULT_MAX_DEPTH)
    }
    pub fn effective_max_calls_per_turn(&self) -> u32 {
        self.max_calls_per_turn.unwrap_or(Self::DEFAULT_MAX_CALLS_PER_TURN)
    }
    pub fn effective_max_parallel(&self) -> u32 {
        self.max_parallel.unwrap_or(Self::DEFAULT_MAX_PARALLEL).max(1)
    }
    pub fn effective_max_steps(&self) -> u32 {
        self.max_steps.unwrap_or(Self::DEFAULT_MAX_STEPS).max(1)
    }
}

impl Config {
    pub fn agent(&self, name: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|agent| agent.name == name)
    }

    pub fn agent_mut(&mut self, name: &str) -> Option<&mut AgentConfig> {
        self.agents.iter_mut().find(|agent| agent.name == name)
    }

    /// The agent that answers when the user names none: `primary`, else the first agent.
    pub fn primary_agent(&self) -> Option<&AgentConfig> {
        match &self.primary {
            Some(name) => self.agent(name),
            None => self.agents.first(),
        }
    }

    /// The configuration written on first start: three demo agents that delegate to
    /// each other, so a new user sees a nested call with no model server anywhere.
    pub fn demo_default() -> Config {
        let mut assistant = AgentConfig::new("assistant", Provider::Demo);
        assistant.model = Some("demo-planner".into());
        assistant.delay_ms = Some(30);
        let mut researcher = AgentConfig::new("researcher", Provider::Demo);
        researcher.model = Some("demo-researcher".into());
        researcher.delay_ms = Some(40);
        let mut summariser = AgentConfig::new("summariser", Provider::Demo);
        summariser.model = Some("demo-summariser".into());
        summariser.delay_ms = Some(40);
        let mut expert = AgentConfig::new("expert", Provider::Demo);
        expert.model = Some("demo-expert".into());
        expert.delay_ms = Some(30);
        Config {
            primary: Some("assistant".into()),
            escalation: Some("expert".into()),
            agents: vec![assistant, researcher, summariser, expert],
            agent_tools: vec![
                AgentToolEntry::new(
                    "researcher",
                    "Research agent. Send it a question; it returns findings as a short list.",
                ),
                AgentToolEntry::new(
                    "summariser",
                    "Fast summarisation agent. Pass a block of text; returns a concise summary.",
                ),
            ],
            limits: Limits::default(),
            extra: Map::new(),
        }
    }
}
