//! The process family: agents run as a program, one process (group) per call.
//! `subprocess` runs any command and the presets (`presets`: aider, smolagents,
//! Claude Code, Codex, Gemini CLI, Qwen Code) and reads their answer (`output`:
//! plain text, a marker, a pattern; `events`: JSON-lines event streams); `claude`
//! runs Claude Code as a primary that calls tools written as tags (`tool_tags`).

pub mod claude;
pub mod events;
pub mod output;
pub mod presets;
pub mod subprocess;
pub mod tool_tags;
