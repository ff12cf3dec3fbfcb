//! The presets of the coding agents' CLIs, each run once per call: Claude Code,
//! Codex, Gemini CLI and Qwen Code. Each turns `model`, `url`, `api_key_env` and
//! `autonomy` into the program's own flags, environment and config overrides, and
//! reads its JSON-lines events.

use std::collections::BTreeMap;

use super::{openai_environment, AnswerSource, Invocation};
use crate::config::{AgentConfig, Autonomy, OutputFormat, OutputRules, Provider};

/// The switch that tells `provider`'s program what it may do unattended at
/// `autonomy` (Claude Code's permission mode, Codex's sandbox, Gemini's and Qwen's
/// approval mode), from the provider table; `None` for providers without one.
pub fn autonomy_flag(provider: Provider, autonomy: Autonomy) -> Option<String> {
    let switches = provider.autonomy_switches(autonomy)?;
    (!switches.is_empty()).then(|| switches.join(" "))
}

/// The agent's own autonomy flag (read-only when it sets none).
fn own_autonomy_flag(agent: &AgentConfig) -> Option<String> {
    autonomy_flag(agent.provider, agent.autonomy.unwrap_or_default())
}

/// `url` and `api_key_env` as Claude Code reads them: `ANTHROPIC_BASE_URL` (an
/// Anthropic Messages base, no `/v1`) and `ANTHROPIC_API_KEY`; with no key
/// variable it uses its own login. For the `claude-code` preset and the
/// `claude-cli` caller alike.
pub(crate) fn anthropic_environment(agent: &AgentConfig) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(url) = &agent.url {
        let base = url.trim_end_matches('/');
        env.insert("ANTHROPIC_BASE_URL".into(), base.strip_suffix("/v1").unwrap_or(base).to_string());
    }
    if let Some(key) = key_reference(agent) {
        env.insert("ANTHROPIC_API_KEY".into(), key);
    }
    env
}

/// The request as the value of a flag (`--prompt=<request>`): these programs read
/// no request after `--`, and inside one argument it can never be an option.
fn request_flag(agent: &AgentConfig, flag: &str) -> Option<String> {
    (!agent.args.iter().any(|argument| argument.contains("{request}"))).then(|| format!("{flag}={{request}}"))
}

/// The program's own output, read as JSON-line events.
fn events(format: OutputFormat) -> OutputRules {
    OutputRules { format: Some(format), ..OutputRules::default() }
}

/// `${NAME}` of the agent's key variable, for a program that reads it under another name.
fn key_reference(agent: &AgentConfig) -> Option<String> {
    agent.api_key_env.as_ref().map(|variable| format!("${{{variable}}}"))
}

/// Claude Code, once: `claude -p --input-format stream-json --output-format
/// stream-json --verbose`, the request the first user message on its stdin (which
/// stays open for the messages the call is steered with; see `SubprocessRunner`).
/// `url` is an Anthropic Messages base (`ANTHROPIC_BASE_URL`, no `/v1`);
/// with no `api_key_env` it uses its own login. Its update checks and nonessential
/// traffic stay off during a call.
pub(super) fn claude_code(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .to_vec();
    if let Some(model) = &agent.model {
        args.push(format!("--model={model}"));
    }
    args.extend(own_autonomy_flag(agent));
    if let Some(prompt) = &agent.system_prompt {
        args.push(format!("--append-system-prompt={prompt}"));
    }
    let mut env = anthropic_environment(agent);
    for variable in ["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER"] {
        env.insert(variable.into(), "1".into());
    }
    Invocation {
        command: Some("claude".into()),
        args,
        env,
        output: events(OutputFormat::ClaudeStreamJson),
        answer: AnswerSource::Stdout,
    }
}

/// Codex, once: `codex exec --json`. `url` becomes a model provider of its own
/// (`-c model_providers.switchboard…`, Responses API: Codex speaks no other), so
/// the user's `config.toml` is read as it is and only this run is pointed
/// elsewhere. Autonomy is Codex's sandbox (`autonomy_flag`).
pub(super) fn codex(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check"].map(String::from).to_vec();
    if let Some(model) = &agent.model {
        args.push(format!("--model={model}"));
    }
    args.extend(own_autonomy_flag(agent));
    // A one-shot run checks for no update of itself.
    args.extend(["-c".into(), "check_for_update_on_startup=false".into()]);
    if let Some(url) = &agent.url {
        let mut set = |key: &str, value: &str| {
            args.push("-c".into());
            args.push(format!("{key}={}", toml_string(value)));
        };
        set("model_provider", "switchboard");
        set("model_providers.switchboard.name", "switchboard");
        set("model_providers.switchboard.base_url", url.trim_end_matches('/'));
        set("model_providers.switchboard.wire_api", "responses");
        if let Some(variable) = &agent.api_key_env {
            set("model_providers.switchboard.env_key", variable);
        }
    }
    Invocation {
        command: Some("codex".into()),
        args,
        env: BTreeMap::new(),
        output: events(OutputFormat::CodexJson),
        answer: AnswerSource::Stdout,
    }
}

/// A TOML basic string (what `codex -c` parses a value as).
fn toml_string(value: &str) -> String {
    serde_json::Value::String(value.to_string()).to_string()
}

/// Gemini CLI, once: `gemini -o stream-json --prompt=<request>`. `url` is a Gemini
/// API base (`GOOGLE_GEMINI_BASE_URL`), the key goes in as `GEMINI_API_KEY`. The
/// working folder is the one the user gave this agent, so it is trusted for the
/// run (else Gemini stops to ask, which nobody can answer here).
pub(super) fn gemini_cli(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = ["--output-format", "stream-json"].map(String::from).to_vec();
    if let Some(model) = &agent.model {
        args.push(format!("--model={model}"));
    }
    args.extend(own_autonomy_flag(agent));
    args.extend(request_flag(agent, "--prompt"));
    let mut env = BTreeMap::new();
    if let Some(url) = &agent.url {
        env.insert("GOOGLE_GEMINI_BASE_URL".into(), url.trim_end_matches('/').to_string());
    }
    if let Some(key) = key_reference(agent) {
        env.insert("GEMINI_API_KEY".into(), key);
    }
    env.insert("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into());
    env.insert("GEMINI_CLI_NO_RELAUNCH".into(), "true".into());
    Invocation {
        command: Some("gemini".into()),
        args,
        env,
        output: events(OutputFormat::GeminiStreamJson),
        answer: AnswerSource::Stdout,
    }
}

/// Qwen Code, once: `qwen --output-format stream-json --prompt=<request>` (Claude
/// Code's stream-json shape). `url` is an OpenAI-compatible base, as Qwen reads it.
pub(super) fn qwen_code(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = ["--output-format", "stream-json"].map(String::from).to_vec();
    if let Some(model) = &agent.model {
        args.push(format!("--model={model}"));
    }
    args.extend(own_autonomy_flag(agent));
    args.extend(request_flag(agent, "--prompt"));
    let mut env = BTreeMap::new();
    if agent.url.is_some() || agent.api_key_env.is_some() {
        env = openai_environment(agent, "OPENAI_BASE_URL");
    }
    if let Some(model) = &agent.model {
        env.insert("OPENAI_MODEL".into(), model.clone());
    }
    Invocation {
        command: Some("qwen".into()),
        args,
        env,
        output: events(OutputFormat::ClaudeStreamJson),
        answer: AnswerSource::Stdout,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{autonomy_note, invocation};
    use crate::config::{AgentConfig, Autonomy, Provider};

    #[test]
    fn the_agent_cli_presets_become_their_programs_flags_and_environment() {
        // (provider, url given, the flags expected among the arguments, the environment expected)
        type Case = (Provider, &'static str, &'static [&'static str], &'static [(&'static str, &'static str)]);
        let cases: [Case; 4] = [
            (
                Provider::ClaudeCode,
                "http://127.0.0.1:9/v1/",
                &[
                    "-p",
                    "--input-format",
                    "stream-json",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--model=m",
                    "--permission-mode=dontAsk",
                ],
                &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"), ("ANTHROPIC_API_KEY", "${THE_KEY}")],
            ),
            (
                Provider::Codex,
                "http://127.0.0.1:9/v1/",
                &[
                    "exec",
                    "--json",
                    "--model=m",
                    "--sandbox=read-only",
                    "model_providers.switchboard.base_url=\"http://127.0.0.1:9/v1\"",
                    "model_providers.switchboard.wire_api=\"responses\"",
                    "model_providers.switchboard.env_key=\"THE_KEY\"",
                ],
                &[],
            ),
            (
                Provider::GeminiCli,
                "http://127.0.0.1:9",
                &["--output-format", "stream-json", "--model=m", "--approval-mode=default", "--prompt={request}"],
                &[("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"), ("GEMINI_API_KEY", "${THE_KEY}")],
            ),
            (
                Provider::QwenCode,
                "http://127.0.0.1:9/v1",
                &["--output-format", "stream-json", "--model=m", "--approval-mode=default", "--prompt={request}"],
                &[
                    ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
                    ("OPENAI_API_KEY", "${THE_KEY}"),
                    ("OPENAI_MODEL", "m"),
                ],
            ),
        ];
        for (provider, url, flags, environment) in cases {
            let mut agent = AgentConfig::new("a", provider);
            agent.model = Some("m".into());
            agent.url = Some(url.into());
            agent.api_key_env = Some("THE_KEY".into());
            let invocation = invocation(&agent);
            for flag in flags {
                assert!(
                    invocation.args.iter().any(|argument| argument == flag),
                    "{provider:?}: {flag} in {:?}",
                    invocation.args
                );
            }
            for (name, value) in environment {
                assert_eq!(invocation.env.get(*name).map(String::as_str), Some(*value), "{provider:?}: {name}");
            }
            assert!(autonomy_note(&agent).unwrap().contains("read_only"), "{provider:?}: the safe default");
        }
        let mut full = AgentConfig::new("a", Provider::Codex);
        full.autonomy = Some(Autonomy::Full);
        assert!(invocation(&full).args.contains(&"--sandbox=danger-full-access".to_string()));
        assert!(
            !invocation(&full).args.iter().any(|argument| argument.contains("model_provider")),
            "no url, no provider"
        );
        let mut own = AgentConfig::new("a", Provider::GeminiCli);
        own.args = vec!["--prompt-interactive={request}".into()];
        assert!(
            !invocation(&own).args.iter().any(|argument| argument == "--prompt={request}"),
            "the user's placement wins"
        );
    }
}
