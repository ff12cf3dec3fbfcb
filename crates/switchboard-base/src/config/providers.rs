//! The provider table: one row per provider, with everything the rest of the
//! code and the window need to know of it (its names, what kind of agent it is,
//! the fields it reads and needs, whether its key may live in the keyring, its
//! program's autonomy switches, its OpenTelemetry name). Code that treats
//! providers alike matches on the [`Family`], not on the providers; the window
//! gets the table through the generated bindings (`PROVIDERS`) and keeps none of
//! its own. A new provider is a row here and its runner.

use serde::Serialize;
use specta::Type;

use super::provider::{Autonomy, Provider};

/// What kind of agent a provider runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// A model over HTTP, asked step by step; it can call tool-agents.
    HttpModel,
    /// A program run once per call (a preset's, or any command).
    Program,
    /// Claude Code keeping a session, as a calling agent (`claude-cli`).
    ClaudeSession,
    /// One tool of an MCP server.
    Mcp,
    /// An Agent2Agent agent.
    A2a,
    /// The built-in demo agents.
    Demo,
}

/// A field of an agent's config as the form shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AgentField {
    Url,
    Model,
    /// Where an HTTP model's key is: none, the keyring, a variable.
    KeySource,
    /// The keyring entry (`api_key_keyring`).
    ApiKey,
    ApiKeyEnv,
    TimeoutSecs,
    IdleTimeoutSecs,
    Prices,
    SystemPrompt,
    Command,
    Args,
    Cwd,
    Env,
    RequestVia,
    Output,
    Tool,
    RequestArgument,
    ContextArgument,
    /// An MCP server's transport: a program, or an address.
    Transport,
    ExperimentalCliToolCalls,
    /// An MCP agent's calls made as tasks.
    Tasks,
    Autonomy,
    /// Whether calls to it wait for approval.
    Approval,
}

/// A program's switches for each autonomy level (`read_only`, `edit`, `full`).
pub type AutonomySwitches = [&'static [&'static str]; 3];

/// One provider's row.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ProviderInfo {
    pub provider: Provider,
    /// Its name in a config file, and the other names it is read by.
    pub wire: &'static str,
    pub aliases: &'static [&'static str],
    /// What it is, in words, as the form offers it.
    pub label: &'static str,
    pub family: Family,
    /// The fields its runner reads, in the order the form shows them.
    pub fields: &'static [AgentField],
    /// The fields it cannot run without (an MCP agent needs `command` or `url`,
    /// which `validate` says).
    pub required: &'static [AgentField],
    /// Whether its API key may live in the system keyring.
    pub keyring: bool,
    /// Its program's switches per autonomy level, for the presets that honour it.
    pub autonomy: Option<AutonomySwitches>,
    /// `gen_ai.provider.name` on its spans.
    pub otel_name: &'static str,
    /// The program setup looks for on `PATH`, for a preset's provider.
    pub program: Option<ProgramInfo>,
}

/// A preset's program: what setup looks for, offers and says about it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ProgramInfo {
    /// The command on `PATH`.
    pub command: &'static str,
    /// Its name in words.
    pub name: &'static str,
    /// The agent name setup gives it.
    pub agent_name: &'static str,
    /// How to install it.
    pub install: &'static str,
    /// A first description of it as a tool-agent (the wizard's, editable).
    pub tool_description: &'static str,
}

/// A coding agent's CLI as a tool: what its first description says.
macro_rules! coding_agent_description {
    ($name:literal) => {
        concat!(
            $name,
            ", a coding agent working in its own folder. Send it a self-contained task; it reads the code \
             (read-only unless its autonomy allows more) and returns its answer."
        )
    };
}

use AgentField as F;

/// An HTTP model's fields.
const HTTP_MODEL: &[AgentField] = &[
    F::Url,
    F::Model,
    F::KeySource,
    F::ApiKey,
    F::ApiKeyEnv,
    F::TimeoutSecs,
    F::IdleTimeoutSecs,
    F::Prices,
    F::SystemPrompt,
    F::Approval,
];

/// A coding agent's CLI's fields (aider, Codex, Gemini CLI, Qwen Code).
const CODING_AGENT: &[AgentField] = &[
    F::Model,
    F::Url,
    F::ApiKeyEnv,
    F::Autonomy,
    F::Command,
    F::Args,
    F::Cwd,
    F::Env,
    F::Output,
    F::TimeoutSecs,
    F::Prices,
    F::Approval,
];

/// Every provider, in the order the form offers them.
pub static PROVIDERS: [ProviderInfo; 13] = [
    ProviderInfo {
        provider: Provider::OpenAiCompatible,
        wire: "local",
        aliases: &["openai"],
        label: "OpenAI-compatible HTTP server",
        family: Family::HttpModel,
        fields: HTTP_MODEL,
        required: &[F::Url],
        keyring: true,
        autonomy: None,
        otel_name: "openai",
        program: None,
    },
    ProviderInfo {
        provider: Provider::Anthropic,
        wire: "anthropic",
        aliases: &[],
        label: "Anthropic Messages API (HTTP)",
        family: Family::HttpModel,
        fields: HTTP_MODEL,
        required: &[F::Url, F::Model],
        keyring: true,
        autonomy: None,
        otel_name: "anthropic",
        program: None,
    },
    ProviderInfo {
        provider: Provider::AiderCli,
        wire: "aider-cli",
        aliases: &[],
        label: "aider (command line)",
        family: Family::Program,
        fields: CODING_AGENT,
        required: &[],
        keyring: false,
        // `--yes-always` is passed at every level: it says no to shell commands.
        autonomy: Some([
            &[
                "--dry-run",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-detect-urls",
                "--no-suggest-shell-commands",
            ],
            &["--no-detect-urls", "--no-suggest-shell-commands"],
            &[],
        ]),
        otel_name: "aider",
        program: Some(ProgramInfo {
            command: "aider",
            name: "aider",
            agent_name: "aider",
            install: "install aider-chat",
            tool_description: "Specialist code-editing agent. Send it a natural-language edit request; it applies the changes and returns a summary.",
        }),
    },
    ProviderInfo {
        provider: Provider::Smolagents,
        wire: "smolagents",
        aliases: &[],
        label: "smolagents (command line)",
        family: Family::Program,
        fields: &[
            F::Model,
            F::Url,
            F::ApiKeyEnv,
            F::Command,
            F::Args,
            F::Cwd,
            F::Env,
            F::Output,
            F::TimeoutSecs,
            F::Prices,
            F::Approval,
        ],
        required: &[F::Model],
        keyring: false,
        autonomy: None,
        otel_name: "smolagents",
        program: Some(ProgramInfo {
            command: "smolagent",
            name: "smolagents",
            agent_name: "smolagents",
            install: "install smolagents",
            tool_description: "Python tool-using agent. Send it a self-contained task; it writes and runs Python to solve it and returns the answer.",
        }),
    },
    ProviderInfo {
        provider: Provider::ClaudeCode,
        wire: "claude-code",
        aliases: &[],
        label: "Claude Code, run once per call (command line)",
        family: Family::Program,
        fields: &[
            F::Model,
            F::Url,
            F::ApiKeyEnv,
            F::Autonomy,
            F::SystemPrompt,
            F::Command,
            F::Args,
            F::Cwd,
            F::Env,
            F::Output,
            F::TimeoutSecs,
            F::Prices,
            F::Approval,
        ],
        required: &[],
        keyring: false,
        // Nothing that needs a yes is waited for: refused, and reported as denied.
        autonomy: Some([
            &["--permission-mode=dontAsk"],
            &["--permission-mode=acceptEdits"],
            &["--permission-mode=bypassPermissions"],
        ]),
        otel_name: "anthropic",
        program: Some(ProgramInfo {
            command: "claude",
            name: "Claude Code",
            agent_name: "claude-code",
            install: "npm install -g @anthropic-ai/claude-code",
            tool_description: coding_agent_description!("Claude Code"),
        }),
    },
    ProviderInfo {
        provider: Provider::Codex,
        wire: "codex",
        aliases: &[],
        label: "Codex (command line)",
        family: Family::Program,
        fields: CODING_AGENT,
        required: &[],
        keyring: false,
        // `exec` never asks for approval; the sandbox is what bounds it.
        autonomy: Some([&["--sandbox=read-only"], &["--sandbox=workspace-write"], &["--sandbox=danger-full-access"]]),
        otel_name: "openai",
        program: Some(ProgramInfo {
            command: "codex",
            name: "Codex",
            agent_name: "codex",
            install: "npm install -g @openai/codex",
            tool_description: coding_agent_description!("Codex"),
        }),
    },
    ProviderInfo {
        provider: Provider::GeminiCli,
        wire: "gemini-cli",
        aliases: &[],
        label: "Gemini CLI (command line)",
        family: Family::Program,
        fields: CODING_AGENT,
        required: &[],
        keyring: false,
        autonomy: Some([&["--approval-mode=default"], &["--approval-mode=auto_edit"], &["--approval-mode=yolo"]]),
        otel_name: "gcp.gemini",
        program: Some(ProgramInfo {
            command: "gemini",
            name: "Gemini CLI",
            agent_name: "gemini",
            install: "npm install -g @google/gemini-cli",
            tool_description: coding_agent_description!("Gemini CLI"),
        }),
    },
    ProviderInfo {
        provider: Provider::QwenCode,
        wire: "qwen-code",
        aliases: &[],
        label: "Qwen Code (command line)",
        family: Family::Program,
        fields: CODING_AGENT,
        required: &[],
        keyring: false,
        autonomy: Some([&["--approval-mode=default"], &["--approval-mode=auto-edit"], &["--approval-mode=yolo"]]),
        otel_name: "qwen-code",
        program: Some(ProgramInfo {
            command: "qwen",
            name: "Qwen Code",
            agent_name: "qwen",
            install: "npm install -g @qwen-code/qwen-code",
            tool_description: coding_agent_description!("Qwen Code"),
        }),
    },
    ProviderInfo {
        provider: Provider::Subprocess,
        wire: "subprocess",
        aliases: &[],
        label: "Any command-line program",
        family: Family::Program,
        fields: &[
            F::Command,
            F::Args,
            F::RequestVia,
            F::Cwd,
            F::Env,
            F::ApiKeyEnv,
            F::Output,
            F::TimeoutSecs,
            F::Prices,
            F::Approval,
        ],
        required: &[F::Command],
        keyring: false,
        autonomy: None,
        otel_name: "subprocess",
        program: None,
    },
    ProviderInfo {
        provider: Provider::ClaudeCli,
        wire: "claude-cli",
        aliases: &[],
        label: "Claude Code as a calling agent (command line, keeps a session)",
        family: Family::ClaudeSession,
        fields: &[
            F::Command,
            F::Args,
            F::Cwd,
            F::Model,
            F::Url,
            F::ApiKeyEnv,
            F::SystemPrompt,
            F::ExperimentalCliToolCalls,
            F::TimeoutSecs,
        ],
        required: &[],
        keyring: false,
        autonomy: None,
        otel_name: "anthropic",
        program: None,
    },
    ProviderInfo {
        provider: Provider::Demo,
        wire: "demo",
        aliases: &[],
        label: "Built-in demo agent",
        family: Family::Demo,
        fields: &[F::Model, F::SystemPrompt, F::Approval],
        required: &[],
        keyring: false,
        autonomy: None,
        otel_name: "switchboard.demo",
        program: None,
    },
    ProviderInfo {
        provider: Provider::Mcp,
        wire: "mcp",
        aliases: &[],
        label: "One tool of an MCP server",
        family: Family::Mcp,
        fields: &[
            F::Transport,
            F::Command,
            F::Args,
            F::Cwd,
            F::Url,
            F::ApiKeyEnv,
            F::Tool,
            F::RequestArgument,
            F::ContextArgument,
            F::Tasks,
            F::TimeoutSecs,
            F::IdleTimeoutSecs,
            F::Approval,
        ],
        required: &[],
        keyring: false,
        autonomy: None,
        otel_name: "mcp",
        program: None,
    },
    ProviderInfo {
        provider: Provider::A2a,
        wire: "a2a",
        aliases: &[],
        label: "Agent2Agent (A2A) agent",
        family: Family::A2a,
        fields: &[F::Url, F::ApiKeyEnv, F::TimeoutSecs, F::IdleTimeoutSecs, F::Approval],
        required: &[F::Url],
        keyring: false,
        autonomy: None,
        otel_name: "a2a",
        program: None,
    },
];

/// The providers whose preset runs a program setup looks for, with that program.
pub fn preset_programs() -> impl Iterator<Item = (Provider, &'static ProgramInfo)> {
    PROVIDERS.iter().filter_map(|row| Some((row.provider, row.program.as_ref()?)))
}

impl Provider {
    /// Its row of the provider table.
    pub fn info(self) -> &'static ProviderInfo {
        PROVIDERS.iter().find(|row| row.provider == self).expect("every provider has a row")
    }

    pub fn family(self) -> Family {
        self.info().family
    }

    /// Its preset's program, if it has one.
    pub fn program(self) -> Option<&'static ProgramInfo> {
        self.info().program.as_ref()
    }

    /// Its program's switches at `autonomy`; `None` where the provider has none.
    pub fn autonomy_switches(self, autonomy: Autonomy) -> Option<&'static [&'static str]> {
        let switches = self.info().autonomy?;
        Some(match autonomy {
            Autonomy::ReadOnly => switches[0],
            Autonomy::Edit => switches[1],
            Autonomy::Full => switches[2],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_has_one_row_whose_names_read_back_as_it() {
        for row in &PROVIDERS {
            assert_eq!(PROVIDERS.iter().filter(|other| other.provider == row.provider).count(), 1);
            assert_eq!(row.provider.as_str(), row.wire);
            for name in std::iter::once(&row.wire).chain(row.aliases) {
                let read: Provider = serde_json::from_value(serde_json::json!(name)).unwrap();
                assert_eq!(read, row.provider, "{name}");
            }
            assert_eq!(serde_json::to_value(row.provider).unwrap(), row.wire);
            for field in row.required {
                assert!(row.fields.contains(field), "{}: {field:?} is required but not shown", row.wire);
            }
            assert_eq!(row.autonomy.is_some(), row.fields.contains(&AgentField::Autonomy), "{}", row.wire);
            assert_eq!(row.keyring, row.fields.contains(&AgentField::ApiKey), "{}", row.wire);
        }
    }
}
