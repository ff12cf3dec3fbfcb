//! How a subprocess agent's output becomes its answer and its usage (`output`
//! rules): which part of stdout is the result, and where its token and cost lines
//! are; or a JSON-lines event stream read as text, progress and a result.

use serde::{Deserialize, Serialize};
use specta::Type;

/// How a subprocess agent's stdout becomes its result and its usage. The
/// `aider-cli` and `smolagents` presets set these; a field given here wins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct OutputRules {
    /// How stdout is written: plain text (the default), or the JSON lines of a CLI
    /// that reports events (its text streams, its tools show as progress, its
    /// result message is the answer, usage and cost; the other fields do not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<OutputFormat>,
    /// Which part of stdout is the answer (`all` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultPick>,
    /// For `after_marker`: the answer follows the last line holding this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// For `regex`: the last match's `result` group (or the whole match) is the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A regex whose named groups `input`, `output` (and optionally `cost`) are the
    /// call's token counts (`2.4k` and `2,000` are read as numbers); matching lines
    /// are left out of the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_pattern: Option<String>,
    /// Whether the usage lines add up (`sum`, one per model call) or the last one is
    /// the total (`last`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_combine: Option<UsageCombine>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum OutputFormat {
    #[default]
    Text,
    /// Claude Code's `-p --output-format stream-json` (add `--verbose`).
    ClaudeStreamJson,
    /// Codex's `exec --json`.
    CodexJson,
    /// Gemini CLI's `-o stream-json`.
    GeminiStreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ResultPick {
    All,
    /// The last paragraph (text after the last blank line).
    LastBlock,
    AfterMarker,
    Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum UsageCombine {
    Sum,
    Last,
}
