//! How an agent is run: its provider (which runner, which preset), how a
//! command-line agent is given its request, and what an agent CLI may do
//! unattended. Wire types of the config.

use serde::{Deserialize, Serialize};
use specta::Type;

/// How a subprocess agent is given its request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RequestVia {
    /// In the arguments: where `{request}` stands (inside a template such as
    /// `--message={request}`, or as a whole argument), else appended after `--`,
    /// so it can never be read as an option.
    #[default]
    Argument,
    /// Written to the program's standard input, which is then closed.
    Stdin,
}

/// What an agent CLI may do on its own while it runs as a tool-agent: nobody is
/// there to answer its permission questions, so the program is told up front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    /// Read files and answer; every edit and command is refused.
    #[default]
    ReadOnly,
    /// Also edit files in its working folder; commands stay refused (or sandboxed).
    Edit,
    /// Edit and run commands without asking (Claude Code refuses this as root).
    Full,
}

/// What smolagents may do, whatever `autonomy` says (for `check` and the form).
pub const SMOLAGENTS_AUTONOMY: &str = "runs its model's Python in its own restricted executor, \
    which imports nothing unsafe and opens no file, with no tool but `final_answer` (`--tools` \
    with none: its default would search the web); `args` may name tools (`--tools`) and \
    imports (`--imports`). `autonomy` changes nothing for it";

/// How an agent is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// An OpenAI-compatible chat-completions server over HTTP, local or hosted
    /// (`local` in a config file, for its history; `openai` is read too).
    #[serde(rename = "local", alias = "openai")]
    OpenAiCompatible,
    /// Anthropic's Messages API over HTTP (`/v1/messages`), natively.
    Anthropic,
    /// aider, with the preset flags and environment (`model`, `url`, `api_key_env`).
    AiderCli,
    /// Hugging Face smolagents' `smolagent` CLI, with its preset.
    Smolagents,
    /// Claude Code run once (`claude -p`, stream-json) as a tool-agent: stateless,
    /// unlike `claude-cli`, the primary that keeps a session.
    ClaudeCode,
    /// OpenAI's Codex CLI run once (`codex exec --json`).
    Codex,
    /// Google's Gemini CLI run once (`gemini --prompt`, stream-json).
    GeminiCli,
    /// Qwen Code run once (`qwen --prompt`, stream-json).
    QwenCode,
    Subprocess,
    ClaudeCli,
    /// The built-in deterministic agents that need no model server.
    Demo,
    /// One tool of an MCP server (stdio `command`, or streamable HTTP `url`).
    Mcp,
    /// An Agent2Agent (A2A 1.0) agent at `url`.
    A2a,
}

impl Provider {
    /// Whether the agent is a program run once per call (a subprocess of the
    /// `subprocess` runner, with or without a preset).
    pub fn is_cli_agent(self) -> bool {
        self.family() == super::Family::Program
    }

    /// Its name in a config file.
    pub fn as_str(self) -> &'static str {
        self.info().wire
    }
}
