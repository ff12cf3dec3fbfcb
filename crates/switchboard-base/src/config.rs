//! The config model: agents, tool-agent entries, roles and limits, exactly as the
//! JSON file spells them. Unknown fields are kept in `extra` maps so that a rewrite
//! by this version never destroys what another version wrote.

pub mod approval;
pub mod edit;
pub mod merge;
pub mod output;
pub mod provider;
pub mod providers;
pub mod served;
pub mod store;
pub mod telemetry;
pub mod validate;
pub mod watch;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use specta::Type;
use specta_typescript::Number;

pub use approval::{AgentApproval, ApprovalFrom, EffectiveApprovals, EntryApproval};
pub use merge::{
    effective_tools, global_tools, merge_entries, merged_tools, merged_tools_with, tool_name, AgentNames, MergedEntry,
    ResolvedTool, ToolScope,
};
pub use output::{OutputFormat, OutputRules, ResultPick, UsageCombine};
pub use provider::{Autonomy, Provider, RequestVia, SMOLAGENTS_AUTONOMY};
pub use providers::{preset_programs, AgentField, Family, ProgramInfo, ProviderInfo, PROVIDERS};
pub use served::{ServedTool, TaskSupport};
pub use telemetry::TelemetryConfig;
pub use validate::{validate, Problem, Severity};

/// The app's variable an agent's `env` value takes: `NAME` for `${NAME}`.
pub fn env_reference(value: &str) -> Option<&str> {
    value.strip_prefix("${").and_then(|rest| rest.strip_suffix('}'))
}

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
    /// Tool-agent entries offered to every agent (the global entries of the merge).
    #[serde(default)]
    pub agent_tools: Vec<AgentToolEntry>,
    #[serde(default, skip_serializing_if = "Limits::is_unset")]
    pub limits: Limits,
    /// `per_agent` (one function per delegate, the default) or `ask_agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation_tool: Option<DelegationTool>,
    /// The agent behind the `ask_model` advisor tool (one answer, no tools); off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisor: Option<AgentToolEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetryConfig>,
    /// Fields this version does not know; written back unchanged.
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
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
    /// `local` agents: the system keyring entry that holds the API key (service
    /// `switchboard`, this name as its user), never the key. For an app started
    /// from the applications menu, which does not see a shell profile's variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_keyring: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Subprocess agents: the working directory (the app's when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Subprocess agents: environment variables given to the agent, on top of a
    /// minimal base (PATH, HOME, LANG…); a value `${NAME}` takes the app's
    /// variable NAME. Nothing else of the app's environment is passed on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// How much of an agent's output is kept (10 MB when absent): a subprocess's
    /// stdout and an MCP result are cut there (the result says how much was
    /// dropped); one stream event (models, A2A), an A2A answer and an MCP message
    /// (with 64 KiB for its envelope) over it end the call as too large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub max_output_bytes: Option<u64>,
    /// Subprocess agents: which part of stdout is the answer, and where its usage is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputRules>,
    /// `claude-cli` agents: let the agent call tool-agents through the nonce-tag protocol.
    /// Experimental: it relies on the model stopping after a tag when told to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental_cli_tool_calls: Option<bool>,
    /// `mcp` agents: the server's tool this agent is (its only tool when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `mcp` agents: ask the server to run each call as a task (the MCP tasks
    /// extension), polled to its end, so a long call does not hang on one request;
    /// a server that does not make one answers on the request as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<bool>,
    /// `mcp` agents: the tool argument the request goes into (the tool's first
    /// required string argument when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_argument: Option<String>,
    /// `mcp` agents: a tool argument that gets the delegate's structured `context`
    /// as data (JSON text when the argument is a string). The request text carries
    /// it labelled either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_argument: Option<String>,
    /// Subprocess agents: how the request reaches the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_via: Option<RequestVia>,
    /// Agent CLIs with a preset (Claude Code, Codex, Gemini CLI, Qwen Code): what
    /// the program may do unattended, turned into its own permission, sandbox or
    /// approval flags (`read_only` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autonomy: Option<Autonomy>,
    /// Whether calls to this agent need the user's yes when the tool entry that
    /// calls it does not say (`ask` when neither does): an agent trusted to run
    /// unasked is `auto` once, not in every entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub timeout_secs: Option<u64>,
    /// HTTP agents: how long a stream may stay silent before the step is ended (the
    /// text so far is kept as a partial result). 60 s when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub idle_timeout_secs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Demo provider only: pause between streamed tokens, so the stream is visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub delay_ms: Option<u64>,
    /// Per-agent tool-agent entries: overrides and additions to `agent_tools`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<AgentToolEntry>,
    /// Limits for this agent's own calls, over the global `limits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<Prices>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<SkillSetting>,
    /// Models a caller may pick for this agent with `ask_agent`'s `model` hint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_models: Vec<String>,
    /// HTTP agents (models, MCP, A2A): origins besides `url`'s that requests may go
    /// to (an A2A card's endpoint elsewhere, a redirect). None when empty: a
    /// request steered to another origin is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<String>,
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
            api_key_keyring: None,
            command: None,
            args: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            request_via: None,
            autonomy: None,
            tool: None,
            tasks: None,
            request_argument: None,
            context_argument: None,
            approval: None,
            max_output_bytes: None,
            output: None,
            experimental_cli_tool_calls: None,
            timeout_secs: None,
            idle_timeout_secs: None,
            system_prompt: None,
            delay_ms: None,
            tools: Vec::new(),
            limits: None,
            prices: None,
            skill: None,
            allowed_models: Vec::new(),
            allowed_origins: Vec::new(),
            extra: Map::new(),
        }
    }
}

/// One tool-agent entry: global, or an agent's own override or local entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AgentToolEntry {
    pub agent: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether a call needs the user's yes: when absent, the called agent's
    /// `approval`, else `ask` (confirm by default); see `Config::approval_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Limits for calls through this entry, over the caller's and the global ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// How many of the caller's last messages go along as labelled context (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_context: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionMode>,
    /// How an MCP client is offered it (`served.rs`): its name, arguments, tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<ServedTool>,
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
        AgentToolEntry {
            agent: agent.into(),
            description: description.into(),
            enabled: None,
            approval: None,
            limits: None,
            share_context: None,
            session: None,
            serve: None,
            extra: Map::new(),
        }
    }

    /// True when absent: an entry is enabled unless it says otherwise.
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
    /// A cost ceiling for the whole tree of a turn, in the currency of the prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_per_turn: Option<f64>,
    /// A wall-clock limit for one call, in seconds: all of it, the wait for approval,
    /// every model step and the delegates it waits for (they are cancelled with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub timeout_secs: Option<u64>,
    /// How long an HTTP agent's stream may stay silent, over the agent's own
    /// `idle_timeout_secs` (60 s when neither is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Number>)]
    pub idle_timeout_secs: Option<u64>,
    /// Narrowing along the chain: a delegate called under these limits is offered
    /// only the tool-agents its caller could also call, and runs under limits no
    /// larger than its caller's (depth, steps, parallel calls, timeout). Off unless
    /// set; set globally, on an agent, or on the entry that calls it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrow_delegation: Option<bool>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

/// What an agent's model costs, per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Type)]
pub struct Prices {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Prices {
    pub fn cost(&self, usage: &crate::event::Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_million + usage.output_tokens as f64 * self.output_per_million)
            / 1e6
    }
}

/// Whether a caller sees the previous messages of its own conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, Default)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    /// Every call starts from nothing but its request (the default).
    #[default]
    Fresh,
    /// The delegate keeps its conversation across calls within the parent's session.
    Persistent,
}

/// How tool-agents are offered: one function per delegate, or a single `ask_agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelegationTool {
    #[default]
    PerAgent,
    AskAgent,
}

/// The delegation guidance added to the system prompt of an agent with tool-agents:
/// `true` (the bundled skill, the default), `false` (none), or a path to a SKILL.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(untagged)]
pub enum SkillSetting {
    Enabled(bool),
    Path(String),
}

impl Limits {
    pub const DEFAULT_MAX_DEPTH: u32 = 1;
    pub const DEFAULT_MAX_CALLS_PER_TURN: u32 = 8;
    pub const DEFAULT_MAX_PARALLEL: u32 = 4;
    pub const DEFAULT_MAX_STEPS: u32 = 8;

    fn is_unset(&self) -> bool {
        *self == Limits::default()
    }

    /// These limits with every field that `over` sets taken from `over`.
    pub fn overlay(&self, over: &Limits) -> Limits {
        Limits {
            max_depth: over.max_depth.or(self.max_depth),
            max_calls_per_turn: over.max_calls_per_turn.or(self.max_calls_per_turn),
            max_parallel: over.max_parallel.or(self.max_parallel),
            max_tokens_per_turn: over.max_tokens_per_turn.or(self.max_tokens_per_turn),
            max_steps: over.max_steps.or(self.max_steps),
            max_cost_per_turn: over.max_cost_per_turn.or(self.max_cost_per_turn),
            timeout_secs: over.timeout_secs.or(self.timeout_secs),
            idle_timeout_secs: over.idle_timeout_secs.or(self.idle_timeout_secs),
            narrow_delegation: over.narrow_delegation.or(self.narrow_delegation),
            extra: self.extra.clone(),
        }
    }

    /// Whether a call under these limits is narrowed to its caller's reach.
    pub fn narrows(&self) -> bool {
        self.narrow_delegation == Some(true)
    }

    /// These limits, none larger than `caller`'s: what a narrowed delegate runs under.
    pub fn within(&self, caller: &Limits) -> Limits {
        let smaller = |own: Option<u64>, theirs: Option<u64>| match (own, theirs) {
            (Some(own), Some(theirs)) => Some(own.min(theirs)),
            (own, theirs) => own.or(theirs),
        };
        Limits {
            max_depth: Some(self.effective_max_depth().min(caller.effective_max_depth())),
            max_steps: Some(self.effective_max_steps().min(caller.effective_max_steps())),
            max_parallel: Some(self.effective_max_parallel().min(caller.effective_max_parallel())),
            timeout_secs: smaller(self.timeout_secs, caller.timeout_secs),
            ..self.clone()
        }
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

    /// The limits for a call of `agent` (through `entry`, for a delegate): the global
    /// limits, under the agent's own, under the entry's.
    pub fn limits_for(&self, agent: &AgentConfig, entry: Option<&AgentToolEntry>) -> Limits {
        let mut limits = self.limits.clone();
        if let Some(own) = &agent.limits {
            limits = limits.overlay(own);
        }
        if let Some(entry_limits) = entry.and_then(|entry| entry.limits.as_ref()) {
            limits = limits.overlay(entry_limits);
        }
        limits
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
        // Made-up prices, so the usage panel shows what delegation would cost.
        let mut assistant = AgentConfig::new("assistant", Provider::Demo);
        assistant.model = Some("demo-planner".into());
        assistant.delay_ms = Some(30);
        assistant.prices = Some(Prices { input_per_million: 0.5, output_per_million: 1.5 });
        let mut researcher = AgentConfig::new("researcher", Provider::Demo);
        researcher.model = Some("demo-researcher".into());
        researcher.delay_ms = Some(40);
        researcher.prices = Some(Prices { input_per_million: 3.0, output_per_million: 15.0 });
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
            ..Config::default()
        }
    }
}
